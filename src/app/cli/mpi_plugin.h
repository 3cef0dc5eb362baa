/* The MPI plugin's interface (mpi_plugin.c, built as gpuprof-mpi.so; docs/internals/jobs.md,
 * docs/decisions/mpi-plugin.md): the five things gpuprof analyze does with MPI, behind a table
 * that mpi_job.c loads with dlopen only when the process runs under mpirun. Linking libmpi into
 * the program made every command start Open MPI's libraries (hwloc, libevent, udev): 3 ms of
 * start-up for `gpuprof --version`. This header names no MPI type: the plugin is the one file
 * that includes <mpi.h>. */
#ifndef GP_APP_CLI_MPI_PLUGIN_H
#define GP_APP_CLI_MPI_PLUGIN_H

/* The file name: beside the program (the build tree, the Python package's _bin), else in
 * LIBDIR/gpuprof relative to the program's directory's parent (an install). */
#define GP_MPI_PLUGIN_FILE "gpuprof-mpi.so"
/* The one exported symbol: a function returning the table. Bumped with the table's layout. */
#define GP_MPI_PLUGIN_SYMBOL "gp_mpi_plugin_v1"

typedef struct gp_mpi_plugin {
    /* 1 when this MPI can start in an srun step launched with PMI-2 only (--mpi=pmi2): MPICH's,
     * or Open MPI built with Slurm's PMI library; 0 for Debian's Open MPI. */
    int pmi2_ok;
    /* MPI_Init (with Open MPI's idle-yield and ob1 defaults set unless the user set them);
     * *me and *k the rank and size of MPI_COMM_WORLD. */
    void (*init)(int *me, int *k);
    /* Process 0 gathers every process's len bytes at msg: *all (malloc'd: the bytes, process
     * after process), *lens and *offs (malloc'd, k each). Other processes get NULLs. Waits without
     * spinning. Returns 0 when process 0 ran out of memory. */
    int (*gather)(const unsigned char *msg, int len, int me, int k, unsigned char **all, int **lens,
                  int **offs);
    /* Process 0's *v to every process (waits without spinning). */
    void (*bcast_int)(int *v);
    /* MPI_Finalize. */
    void (*finalize)(void);
} gp_mpi_plugin;

typedef const gp_mpi_plugin *(*gp_mpi_plugin_fn)(void);

#endif
