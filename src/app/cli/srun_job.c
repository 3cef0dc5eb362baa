/* gpuprof analyze under srun without MPI (docs/jobs.md, "srun"; docs/decisions/srun.md): K tasks
 * split the rank files as under mpirun (job_split.c) and hand their partial results to task 0
 * through files in a directory that every task sees: each task writes its message atomically
 * (a rename: task 0 never sees half a file), task 0 waits for all of them with a timeout, merges
 * and writes the output, then removes them. srun with an MPI plugin (PMIx, PMI-2) is MPI's
 * (mpi_job.c: gp__mpi_world reads PMI's variables beside Slurm's). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "app/cli/cli.h"
#include "core/atomic_file.h"
#include "gpuprof/partial.h"

/* A whole decimal number >= 0 in s, or -1. */
static long whole(const char *s)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    return *end || errno || v < 0 || v > 1 << 20 ? -1 : v;
}

int gp__srun_tasks(int *me)
{
    *me = 0;
    if (getenv("GPUPROF_NO_MPI"))
        return 0;
    /* SLURM_STEP_NUM_TASKS and SLURM_STEP_ID are srun's: a batch script has SLURM_PROCID=0 and
     * SLURM_NTASKS of its allocation too, and a gpuprof run there directly is one process */
    long k = whole(getenv("SLURM_STEP_NUM_TASKS")), id = whole(getenv("SLURM_PROCID"));
    if (k < 1 || id < 0 || id >= k || !getenv("SLURM_STEP_ID"))
        return 0;
    *me = (int)id;
    return (int)k;
}

/* The directory the tasks meet in: GPUPROF_SRUN_DIR, or the job directory's (path's, or the
 * directory holding path when it is a file) .gpuprof-srun-JOBID.STEPID. False when too long. */
static bool meeting_dir(const char *path, char *dir, size_t cap)
{
    const char *env = getenv("GPUPROF_SRUN_DIR");
    if (env && *env)
        return (size_t)snprintf(dir, cap, "%s", env) < cap;
    const char *job = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
    struct stat st;
    int n;
    if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode)) {
        const char *slash = strrchr(path, '/');
        int plen = slash ? (int)(slash - path) : 1;
        n = snprintf(dir, cap, "%.*s/.gpuprof-srun-%s.%s", plen, slash ? path : ".",
                     job ? job : "0", step);
    } else {
        n = snprintf(dir, cap, "%s/.gpuprof-srun-%s.%s", path, job ? job : "0", step);
    }
    return n > 0 && (size_t)n < cap;
}

static void task_file(const char *dir, int i, char *out, size_t cap)
{
    snprintf(out, cap, "%s/task%d", dir, i);
}

/* The bytes of the file at path into *buf (*len); false when it cannot be read. */
static bool read_all(const char *path, unsigned char **buf, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    *buf = NULL;
    *len = 0;
    if (!fp)
        return false;
    bool ok = fseek(fp, 0, SEEK_END) == 0;
    long size = ok ? ftell(fp) : -1;
    ok = size >= 0 && size <= INT32_MAX && fseek(fp, 0, SEEK_SET) == 0 &&
         (*buf = malloc(size ? (size_t)size : 1)) != NULL &&
         fread(*buf, 1, (size_t)size, fp) == (size_t)size;
    fclose(fp);
    *len = ok ? (size_t)size : 0;
    return ok;
}

/* Task 0: waits until every other task's file is there (at most timeout seconds), then merges
 * its own message with theirs and writes the output. The exit code. */
static int root(const char *dir, int k, const unsigned char *mine, size_t mlen, double timeout,
                unsigned tables, const char *csv_dir, const gp__cli_common *o)
{
    char f[4200];
    struct timespec t0, now, nap = {0, 20 * 1000000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int missing = 0;
    for (;;) {
        missing = 0;
        for (int i = 1; i < k; i++) {
            task_file(dir, i, f, sizeof f);
            missing += access(f, F_OK) != 0;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        double waited = (double)(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) * 1e-9;
        if (!missing || waited >= timeout)
            break;
        nanosleep(&nap, NULL);
    }
    int rc = 2;
    if (missing) {
        char list[512] = "";
        size_t used = 0;
        for (int i = 1; i < k && used + 16 < sizeof list; i++) {
            task_file(dir, i, f, sizeof f);
            if (access(f, F_OK) != 0)
                used +=
                    (size_t)snprintf(list + used, sizeof list - used, "%s%d", used ? ", " : "", i);
        }
        gp__cli_error("analyze",
                      "srun task(s) %s of %d wrote no partial result to %s within %.0f s "
                      "(GPUPROF_SRUN_TIMEOUT; GPUPROF_SRUN_DIR must be a directory every task "
                      "sees)",
                      list, k, dir, timeout);
        return rc;
    }
    unsigned char **msgs = calloc((size_t)k, sizeof *msgs), *all = NULL;
    int *lens = calloc((size_t)k, sizeof *lens), *offs = calloc((size_t)k, sizeof *offs);
    size_t total = mlen;
    bool ok = msgs && lens && offs;
    for (int i = 1; ok && i < k; i++) {
        size_t len;
        task_file(dir, i, f, sizeof f);
        if (!read_all(f, &msgs[i], &len)) {
            gp__cli_error("analyze", "cannot read %s: %s", f, strerror(errno));
            goto done;
        }
        lens[i] = (int)len;
        total += len;
    }
    if (ok && total <= INT32_MAX && (all = malloc(total ? total : 1))) {
        memcpy(all, mine, mlen);
        lens[0] = (int)mlen;
        for (int i = 1; i < k; i++) {
            offs[i] = offs[i - 1] + lens[i - 1];
            memcpy(all + offs[i], msgs[i], (size_t)lens[i]);
        }
        rc = gp__job_root_output(all, lens, offs, k, "srun task", tables, csv_dir, o);
    } else {
        gp__cli_error("analyze", "out of memory (or the partial results exceed 2 GiB)");
    }
done:
    for (int i = 0; msgs && i < k; i++)
        free(msgs[i]);
    free(msgs);
    free(all);
    free(lens);
    free(offs);
    return rc;
}

int gp__srun_analyze(const char *path, int me, int k, const gp_read_opts *rd,
                     const gp_analyze_opts *opts, unsigned tables, const char *csv_dir,
                     const gp__cli_common *o)
{
    char dir[4096], f[4200];
    if (!meeting_dir(path, dir, sizeof dir)) {
        gp__cli_error("analyze", "srun: the directory for partial results is too long");
        return 2;
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        gp__cli_error("analyze", "srun: cannot create %s (set GPUPROF_SRUN_DIR): %s", dir,
                      strerror(errno));
        return 2;
    }
    const char *tv = getenv("GPUPROF_SRUN_TIMEOUT");
    double timeout = tv && *tv ? atof(tv) : 600;
    char **files = NULL;
    size_t n = 0, mlen = 0;
    gp_error err = {0};
    gp_partial *p = NULL;
    gp_status st = gp__job_files(path, &files, &n, &err);
    if (st == GP_OK)
        st = gp__job_share(files, n, me, k, rd, opts, &p, &err);
    gp__job_files_free(files, n);
    unsigned char *msg = gp__job_message(st, p, &err, &mlen);
    gp_partial_free(p);
    int rc = 2;
    if (!msg) {
        gp__cli_error("analyze", "out of memory");
    } else if (me != 0) { /* task 0 prints this task's error, if any */
        task_file(dir, me, f, sizeof f);
        gp_error werr = {0};
        if (gp__write_file_atomic(f, msg, mlen, &werr) != GP_OK)
            gp__cli_error("analyze", "srun task %d: %s", me, werr.msg);
        else
            rc = st == GP_OK ? 0 : 2;
    } else {
        rc = root(dir, k, msg, mlen, timeout, tables, csv_dir, o);
        for (int i = 1; i < k; i++) {
            task_file(dir, i, f, sizeof f);
            unlink(f);
        }
        rmdir(dir); /* when GPUPROF_SRUN_DIR holds other files, it stays */
    }
    free(msg);
    return rc;
}
