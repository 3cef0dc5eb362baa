/* gpuprof analyze under mpirun: the job side (docs/jobs.md, "MPI"; docs/internals/jobs.md).
 * MPI itself is in a plugin, gpuprof-mpi.so (mpi_plugin.c), loaded with dlopen only when this
 * process runs under mpirun (docs/decisions/mpi-plugin.md): whether it does is read from the
 * environment at run time, so one binary serves both, and the program does not start Open MPI's
 * libraries for every command. Each process reads and analyses its share of the rank files
 * (dealt by size, process 0 charged for the merge) one trace at a time, merges its partial
 * results, and sends the bytes to process 0 (a gather, waited for without spinning), which
 * merges and writes the output: process 0 never holds another process's traces. */
#include <stdlib.h>
#include <string.h>

#include "app/cli/cli.h"
#include "gpuprof/partial.h"

#ifdef GP_HAVE_MPI
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "app/cli/mpi_plugin.h"

/* The plugin, loaded once: GPUPROF_MPI_PLUGIN when set, else beside the program, else in
 * ../GP_INSTALL_LIBDIR/gpuprof from the program's directory (an install). NULL with why in
 * why[] (the paths tried and dlopen's words). RTLD_GLOBAL: Open MPI's own components, which it
 * opens with dlopen, look libmpi's symbols up in the global scope. */
static const gp_mpi_plugin *load_plugin(char *why, size_t why_len)
{
    static const gp_mpi_plugin *loaded;
    if (loaded)
        return loaded;
    char exe[PATH_MAX], tries[2][PATH_MAX + 64];
    int n = 0;
    const char *env = getenv("GPUPROF_MPI_PLUGIN");
    if (env && *env) {
        snprintf(tries[n++], sizeof tries[0], "%s", env);
    } else {
        ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (l > 0) {
            exe[l] = '\0';
            char *slash = strrchr(exe, '/');
            if (slash)
                *slash = '\0';
            snprintf(tries[n++], sizeof tries[0], "%s/%s", exe, GP_MPI_PLUGIN_FILE);
            snprintf(tries[n++], sizeof tries[0], "%s/../%s/gpuprof/%s", exe, GP_INSTALL_LIBDIR,
                     GP_MPI_PLUGIN_FILE);
        }
    }
    size_t w = 0;
    why[0] = '\0';
    for (int i = 0; i < n; i++) {
        void *h = dlopen(tries[i], RTLD_NOW | RTLD_GLOBAL);
        const char *e = NULL; /* dlopen's words name the file */
        int m;
        if (h) {
            gp_mpi_plugin_fn fn;
            *(void **)&fn = dlsym(h, GP_MPI_PLUGIN_SYMBOL);
            if (fn && (loaded = fn()) != NULL)
                return loaded;
            dlclose(h);
            m = snprintf(why + w, why_len - w,
                         "%s%s: no " GP_MPI_PLUGIN_SYMBOL " (a plugin of another gpuprof version?)",
                         w ? "; " : "", tries[i]);
        } else {
            e = dlerror();
            m = snprintf(why + w, why_len - w, "%s%s", w ? "; " : "", e ? e : tries[i]);
        }
        if (m > 0)
            w = w + (size_t)m < why_len ? w + (size_t)m : why_len - 1;
    }
    if (!n)
        snprintf(why, why_len, "cannot find this program's directory (/proc/self/exe)");
    return NULL;
}
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
        if (!getenv("PMI_RANK") && !getenv("PMI_FD"))
            return 0;
        /* PMI-2 only: whether this MPI can start so is the plugin's to say; no plugin, no MPI
         * (srun's files) */
        char why[16];
        const gp_mpi_plugin *mp = load_plugin(why, sizeof why);
        return mp && mp->pmi2_ok ? tasks : 0;
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

int gp__mpi_analyze(const char *path, const gp_read_opts *rd, const gp_analyze_opts *opts,
                    unsigned tables, const char *csv_dir, const gp__cli_common *o)
{
    int me = 0, k = 1;
    char why[2048];
    const gp_mpi_plugin *mp = load_plugin(why, sizeof why);
    if (!mp) {
        gp__cli_error("analyze", "running under mpirun, but cannot load MPI (%s): %s",
                      GP_MPI_PLUGIN_FILE, why);
        return 2;
    }
    mp->init(&me, &k);
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
    if (mp->gather(msg ? msg : oom, (int)mlen, me, k, &all, &lens, &offs) && me == 0)
        rc = gp__job_root_output(all, lens, offs, k, "process", tables, csv_dir, o);
    mp->bcast_int(&rc);
    free(msg);
    free(all);
    free(lens);
    free(offs);
    gp__job_files_free(files, n);
    mp->finalize();
    return rc;
}
#endif
