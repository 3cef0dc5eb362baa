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
#include <dirent.h>
#include <mpi.h>
#include <sys/stat.h>
#include <time.h>

#include "core/msort.h"
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

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The rank files of path (a directory, by name; or path itself), as gp_job_read takes them. */
static gp_status list_files(const char *path, char ***out, size_t *n, gp_error *err)
{
    struct stat st;
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    if (stat(path, &st) != 0)
        return gp_error_set(err, GP_ENOENT, "%s: no such file or directory", path);
    if (!S_ISDIR(st.st_mode)) {
        char **slot = GP_PUSH(*out, *n, cap);
        return slot && (*slot = strdup(path)) ? GP_OK : GP_ENOMEM;
    }
    DIR *d = opendir(path);
    if (!d)
        return gp_error_set(err, GP_EIO, "%s: cannot open the directory", path);
    struct dirent *de;
    gp_status s = GP_OK;
    while ((de = readdir(d)) != NULL && s == GP_OK) {
        if (!gp_trace_file_name(de->d_name))
            continue;
        size_t len = strlen(path) + strlen(de->d_name) + 2;
        char **slot = GP_PUSH(*out, *n, cap);
        if (!slot || !(*slot = malloc(len)))
            s = GP_ENOMEM;
        else
            snprintf(*slot, len, "%s/%s", path, de->d_name);
    }
    closedir(d);
    if (s == GP_OK && *n == 0)
        s = gp_error_set(err, GP_ENOENT, "%s: no *.json or *.json.gz traces in this directory",
                         path);
    if (s == GP_OK)
        gp__msort(*out, *n, sizeof **out, cmp_str);
    return s;
}

/* What process 0's merge costs, charged to it before the files are dealt: per rank of the job, as
 * many bytes of trace as take as long to analyse. Measured on the 1,024-rank job
 * (docs/performance.md, "Jobs"): merging and rendering take about 0.35 ms per rank (1 ms before
 * the short-name pass became n log n), analysing 1 MB of JSON about 5.5 ms, so 0.35 ms is about
 * 64 KiB of JSON. */
#define ROOT_BYTES_PER_RANK (64 * 1024)

typedef struct sized {
    size_t i;
    off_t bytes;
} sized;

/* Larger first; equal sizes in file order. */
static int cmp_sized(const void *pa, const void *pb)
{
    const sized *a = pa, *b = pb;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

/* owner[i]: the process that analyses files[i]. Every process computes the same: the files,
 * largest first, each to the process with the fewest bytes so far, process 0 starting with its
 * merge's cost. false when out of memory. */
static bool deal(char **files, size_t n, int k, int *owner)
{
    sized *f = calloc(n ? n : 1, sizeof *f);
    double *load = calloc((size_t)k, sizeof *load);
    if (!f || !load) {
        free(f);
        free(load);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        f[i] = (sized){i, stat(files[i], &st) == 0 ? st.st_size : 0};
    }
    gp__msort(f, n, sizeof *f, cmp_sized);
    load[0] = (double)n * ROOT_BYTES_PER_RANK;
    for (size_t i = 0; i < n; i++) {
        int best = 0;
        for (int p = 1; p < k; p++)
            if (load[p] < load[best])
                best = p;
        owner[f[i].i] = best;
        load[best] += (double)f[i].bytes;
    }
    free(f);
    free(load);
    return true;
}

/* This process's share (deal), one trace at a time (each freed before the next is read), merged
 * once into *out (NULL: no file for this process). */
static gp_status my_partial(char **files, size_t n, int me, int k, const gp_read_opts *rd,
                            const gp_analyze_opts *opts, gp_partial **out, gp_error *err)
{
    int *owner = calloc(n ? n : 1, sizeof *owner);
    gp_partial **parts = calloc(n ? n : 1, sizeof *parts);
    size_t got = 0;
    gp_status st = owner && parts && deal(files, n, k, owner) ? GP_OK : GP_ENOMEM;
    for (size_t i = 0; i < n && st == GP_OK; i++) {
        if (owner[i] != me)
            continue;
        gp_trace *t = NULL;
        st = gp_trace_read(files[i], rd, &t, err);
        if (st == GP_OK) {
            gp_job job = {.ranks = &t, .n_ranks = 1, .ranks_from_file_order = false};
            st = gp_partial_of_job(&job, opts, 0, &parts[got], err);
            got += st == GP_OK;
        }
        gp_trace_free(t);
    }
    *out = NULL;
    if (st == GP_OK && got)
        st = gp_partial_merge((const gp_partial *const *)parts, got, out, err);
    for (size_t i = 0; i < got; i++)
        gp_partial_free(parts[i]);
    free(parts);
    free(owner);
    return st;
}

/* Gathers every process's message (a status byte, then the partial's bytes or an error text) at
 * process 0: *all (size *total) and the offsets/lengths of each. */
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

/* Process 0: parses the K messages, merges, analyses and writes. The exit code. */
static int root_output(const unsigned char *all, const int *lens, const int *offs, int k,
                       unsigned tables, const char *csv_dir, const gp__cli_common *o)
{
    gp_partial **parts = calloc((size_t)k, sizeof *parts);
    size_t n = 0;
    int rc = 2;
    gp_error err = {0};
    gp_partial *merged = NULL;
    gp_analysis *an = NULL;
    for (int i = 0; parts && i < k; i++) {
        const unsigned char *m = all + offs[i];
        char name[64];
        snprintf(name, sizeof name, "the partial of process %d", i);
        if (lens[i] < 1 || m[0] == 2) /* no rank file for this process */
            continue;
        if (m[0] == 1) {
            gp__cli_error("analyze", "%.*s", lens[i] - 1, (const char *)m + 1);
            goto done;
        }
        if (gp_partial_parse(m + 1, (size_t)lens[i] - 1, name, &parts[n], &err) != GP_OK)
            goto fail;
        n++;
    }
    if (!parts || gp_partial_merge((const gp_partial *const *)parts, n, &merged, &err) != GP_OK ||
        gp_partial_analysis(merged, &an, &err) != GP_OK)
        goto fail;
    rc = gp__cli_analysis_out(an, tables, csv_dir, o);
    goto done;
fail:
    gp__cli_error("analyze", "%s", err.msg[0] ? err.msg : "out of memory");
done:
    gp_analysis_free(an);
    gp_partial_free(merged);
    for (size_t i = 0; i < n; i++)
        gp_partial_free(parts[i]);
    free(parts);
    return rc;
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
    unsigned char *bytes = NULL, *msg = NULL;
    size_t len = 0;
    gp_status st = list_files(path, &files, &n, &err);
    if (st == GP_OK)
        st = my_partial(files, n, me, k, rd, opts, &p, &err);
    if (st == GP_OK && p)
        st = gp_partial_serialize(p, &bytes, &len, &err);
    gp_partial_free(p);
    /* the message: 0 + the partial, 1 + the error, 2: no rank file here */
    const char *text = err.msg[0] ? err.msg : gp_strerror(st);
    size_t mlen = st != GP_OK ? 1 + strlen(text) : 1 + len;
    if (mlen > (size_t)INT32_MAX)
        st = gp_error_set(&err, GP_ELIMIT, "the partial result exceeds 2 GiB"), mlen = 1;
    if ((msg = malloc(mlen ? mlen : 1))) {
        msg[0] = st != GP_OK ? 1 : bytes ? 0 : 2;
        if (st != GP_OK)
            memcpy(msg + 1, text, mlen - 1);
        else if (bytes)
            memcpy(msg + 1, bytes, len);
    }
    free(bytes);
    static unsigned char oom[] = "\1out of memory";
    if (!msg)
        mlen = sizeof oom - 1;
    unsigned char *all = NULL;
    int *lens = NULL, *offs = NULL, rc = 2;
    if (gather(msg ? msg : oom, (int)mlen, me, k, &all, &lens, &offs) && me == 0)
        rc = root_output(all, lens, offs, k, tables, csv_dir, o);
    MPI_Request r;
    MPI_Ibcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD, &r);
    wait_idle(&r);
    free(msg);
    free(all);
    free(lens);
    free(offs);
    for (size_t i = 0; i < n; i++)
        free(files[i]);
    free(files);
    MPI_Finalize();
    return rc;
}
#endif
