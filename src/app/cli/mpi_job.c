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

int gp__mpi_world(void)
{
#ifdef GP_HAVE_MPI
    if (getenv("GPUPROF_NO_MPI")) /* run by a program that itself runs under mpirun */
        return 0;
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i]);
        if (v && atoi(v) > 0)
            return atoi(v);
    }
    /* srun with an MPI plugin (--mpi=pmix, pmi2): PMIx's or PMI's variables beside srun's; the
     * size is the step's (srun_job.c). srun without one: gp__srun_analyze's files. */
    int me, tasks = gp__srun_tasks(&me);
    if (tasks > 0 && (getenv("PMIX_RANK") || getenv("PMI_RANK") || getenv("PMI_FD")))
        return tasks;
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
