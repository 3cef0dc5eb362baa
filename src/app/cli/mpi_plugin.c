/* gpuprof-mpi.so: the one file that includes <mpi.h> (mpi_plugin.h says why it is a plugin).
 * Loaded by mpi_job.c with dlopen when gpuprof analyze runs under mpirun; depends on nothing of
 * gpuprof's, only on libmpi. */
#include <mpi.h>
#include <stdlib.h>
#include <time.h>

#include "app/cli/mpi_plugin.h"

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

static void init(int *me, int *k)
{
    /* Open MPI: a process waiting in MPI_Gatherv yields its core (to the processes still
     * analysing) instead of spinning; the user's setting wins */
    setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
    /* Open MPI: the ob1 messaging layer only: opening the cm layer probes libfabric (mtl ofi),
     * 0.2 s of MPI_Init here (0.24 s against 0.035 s), for messages of kilobytes
     * (docs/decisions/mpi-startup.md); the user's OMPI_MCA_pml wins */
    setenv("OMPI_MCA_pml", "ob1", 0);
    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, me);
    MPI_Comm_size(MPI_COMM_WORLD, k);
}

static int gather(const unsigned char *msg, int len, int me, int k, unsigned char **all, int **lens,
                  int **offs)
{
    *all = NULL;
    *lens = *offs = NULL;
    if (me == 0 && (!(*lens = calloc((size_t)k, sizeof **lens)) ||
                    !(*offs = calloc((size_t)k, sizeof **offs))))
        return 0;
    MPI_Request r;
    MPI_Igather(&len, 1, MPI_INT, *lens, 1, MPI_INT, 0, MPI_COMM_WORLD, &r);
    wait_idle(&r);
    size_t total = 0;
    for (int i = 0; me == 0 && i < k; i++) {
        (*offs)[i] = (int)total;
        total += (size_t)(*lens)[i];
    }
    if (me == 0 && !(*all = malloc(total ? total : 1)))
        return 0;
    MPI_Igatherv(msg, len, MPI_BYTE, *all, *lens, *offs, MPI_BYTE, 0, MPI_COMM_WORLD, &r);
    wait_idle(&r);
    return 1;
}

static void bcast_int(int *v)
{
    MPI_Request r;
    MPI_Ibcast(v, 1, MPI_INT, 0, MPI_COMM_WORLD, &r);
    wait_idle(&r);
}

static void finalize(void)
{
    MPI_Finalize();
}

static const gp_mpi_plugin plugin = {PMI2_OK, init, gather, bcast_int, finalize};

__attribute__((visibility("default"))) const gp_mpi_plugin *gp_mpi_plugin_v1(void);
const gp_mpi_plugin *gp_mpi_plugin_v1(void)
{
    return &plugin;
}
