/* gpuprof analyze under mpirun: the one module that speaks MPI (docs/jobs.md, "MPI";
 * docs/internals/jobs.md). Built with MPI when CMake finds it (GP_HAVE_MPI); whether this process
 * runs under mpirun is read from the environment at run time, so one binary serves both. Each
 * process reads and analyses its share of the rank files (dealt by size, process 0 charged for
 * the merge) one trace at a time, merges its partial
 * results, and sends the bytes to process 0 (MPI_Igatherv, waited for without spinning), which
 * merges and writes the output: process 0 never holds another process's traces. */
#include <stdlib.h>
#include <string.h>

#include "app/cli/cli.h"
#include "gpuprof/partial.h"

#ifdef GP_HAVE_MPI
#include <mpi.h>
#include <time.h>
#endif

#ifdef GP_HAVE_MPI
/* Whether MPI_Init works in a task that srun started with PMI-1/2 only (--mpi=pmi2): MPICH's
 * does; Open MPI's only when built with Slurm's PMI library (4.x's s1/s2 components, gone in
 * 5.x). Debian 12's is not: under real Slurm its MPI_Init aborted ("OMPI was not built with
 * SLURM's PMI support", exit 1), so such a step meets through srun_job.c's files instead.
 * GP_MPI_SLURM_PMI: CMake found the s2 component in ompi_info. */
#if defined(OPEN_MPI) && !defined(GP_MPI_SLURM_PMI)
enum { PMI2_OK = 0 };
#else
enum { PMI2_OK = 1 };
#endif
#endif

int gp__mpi_world(void)
{
#ifdef GP_HAVE_MPI
    if (getenv("GPUPROF_NO_MPI")) /* run by a program that itself runs under mpirun */
        return 0;
    /* Open MPI's mpirun first: inside a Slurm allocation its processes also carry the variables
     * of the srun step that started its daemons */
    const char *v = getenv("OMPI_COMM_WORLD_SIZE");
    if (v && atoi(v) > 0)
        return atoi(v);
    /* an srun step: MPI with PMIx (--mpi=pmix), or with PMI-2 (--mpi=pmi2) where this MPI
     * speaks it; otherwise gp__srun_analyze's files. The size is the step's (srun_job.c). */
    int me, tasks = gp__srun_tasks(&me);
    if (tasks > 0) {
        if (getenv("PMIX_RANK"))
            return tasks;
        return PMI2_OK && (getenv("PMI_RANK") || getenv("PMI_FD")) ? tasks : 0;
    }
    static const char *const vars[] = {"PMI_SIZE", "PMIX_SIZE"}; /* other launchers (MPICH's) */
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        v = getenv(vars[i]);
        if (v && atoi(v) > 0)
            return atoi(v);
    }
#endif
    return 0;
}

#ifndef GP_HAVE_MPI
int gp__mpi_analyze(const char *path, const gp_read_opts *rd, const gp_analyze_opts *opts,
                    unsigned tables, const char *csv_dir, const gp__cli_common *o)
{
    (void)path, (void)rd, (void)opts, (void)tables, (void)csv_dir, (void)o;
    gp__cli_error("analyze", "this gpuprof was built without MPI");
    return 2;
}
#else

/* Waits for r without taking a core: MPI_Wait polls (Open MPI spins, or yields and spins when
 * idle), so a process that finished its share would burn a core until the slowest one is done:
 * on a node shared with the processes still analysing, that core is theirs. A millisecond's
 * sleep between tests costs at most a millisecond per wait. */
static void wait_idle(MPI_Request *r)
{
    int done = 0;
    MPI_Test(r, &done, MPI_STATUS_IGNORE);
    while (!done) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
        MPI_Test(r, &done, MPI_STATUS_IGNORE);
    }
}

static bool gather(const unsigned char *msg, int len, int me, int k, unsigned char **all,
                   int **lens, int **offs)
{
    *all = NULL;
    *lens = *offs = NULL;
    if (me == 0 && (!(*lens = calloc((size_t)k, sizeof **lens)) ||
                    !(*offs = calloc((size_t)k, sizeof **offs))))
        return false;
    MPI_Request r;
    MPI_Igather(&len, 1, MPI_INT, *lens, 1, MPI_INT, 0, MPI_COMM_WORLD, &r);
    wait_idle(&r);
    size_t total = 0;
    for (int i = 0; me == 0 && i < k; i++) {
        (*offs)[i] = (int)total;
        total += (size_t)(*lens)[i];
    }
    if (me == 0 && !(*all = malloc(total ? total : 1)))
        return false;
    MPI_Igatherv(msg, len, MPI_BYTE, *all, *lens, *offs, MPI_BYTE, 0, MPI_COMM_WORLD, &r);
    wait_idle(&r);
    return true;
}

int gp__mpi_analyze(const char *path, const gp_read_opts *rd, const gp_analyze_opts *opts,
                    unsigned tables, const char *csv_dir, const gp__cli_common *o)
{
    int me = 0, k = 1;
    /* Open MPI: a process waiting in MPI_Gatherv yields its core (to the processes still
     * analysing) instead of spinning; the user's setting wins */
    setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
    /* Open MPI: the ob1 messaging layer only: opening the cm layer probes libfabric (mtl ofi),
     * 0.2 s of MPI_Init here (0.24 s against 0.035 s), for messages of kilobytes
     * (docs/decisions/mpi-startup.md); the user's OMPI_MCA_pml wins */
    setenv("OMPI_MCA_pml", "ob1", 0);
    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &k);
    char **files = NULL;
    size_t n = 0;
    gp_error err = {0};
    gp_partial *p = NULL;
    gp_status st = gp__job_files(path, &files, &n, &err);
    if (st == GP_OK)
        st = gp__job_share(files, n, me, k, rd, opts, &p, &err);
    size_t mlen = 0;
    unsigned char *msg = gp__job_message(st, p, &err, &mlen);
    gp_partial_free(p);
    static unsigned char oom[] = "\1out of memory";
    if (!msg)
        mlen = sizeof oom - 1;
    unsigned char *all = NULL;
    int *lens = NULL, *offs = NULL, rc = 2;
    if (gather(msg ? msg : oom, (int)mlen, me, k, &all, &lens, &offs) && me == 0)
        rc = gp__job_root_output(all, lens, offs, k, "process", tables, csv_dir, o);
    MPI_Request r;
    MPI_Ibcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD, &r);
    wait_idle(&r);
    free(msg);
    free(all);
    free(lens);
    free(offs);
    gp__job_files_free(files, n);
    MPI_Finalize();
    return rc;
}
#endif
