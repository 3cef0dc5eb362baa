/* A job split among K processes (mpi_job.c under mpirun, srun_job.c under srun without MPI):
 * the rank files listed and dealt the same way by every process, each process's share analysed
 * into one partial result, the message that carries it, and process 0's merge and output
 * (docs/jobs.md, "MPI" and "srun"; docs/internals/jobs.md). Nothing here speaks MPI. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/cli/cli.h"
#include "core/msort.h"
#include "core/util.h"
#include "gpuprof/partial.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The rank files of path (a directory, by name; or path itself), as gp_job_read takes them. */
gp_status gp__job_files(const char *path, char ***out, size_t *n, gp_error *err)
{
    struct stat st;
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    if (stat(path, &st) != 0)
        return gp_error_set(err, gp__status_of_errno(errno), "%s: %s", path, strerror(errno));
    if (!S_ISDIR(st.st_mode)) {
        char **slot = GP_PUSH(*out, *n, cap);
        return slot && (*slot = strdup(path)) ? GP_OK : GP_ENOMEM;
    }
    DIR *d = opendir(path);
    if (!d)
        return gp_error_set(err, gp__status_of_errno(errno), "%s: cannot open the directory", path);
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
gp_status gp__job_share(char **files, size_t n, int me, int k, const gp_read_opts *rd,
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

unsigned char *gp__job_message(gp_status st, const gp_partial *p, gp_error *err, size_t *mlen)
{
    unsigned char *bytes = NULL, *msg = NULL;
    size_t len = 0;
    if (st == GP_OK && p)
        st = gp_partial_serialize(p, &bytes, &len, err);
    /* the message: 0 + the partial, 1 + the error, 2: no rank file here */
    const char *text = err->msg[0] ? err->msg : gp_strerror(st);
    *mlen = st != GP_OK ? 1 + strlen(text) : 1 + len;
    if (*mlen > (size_t)INT32_MAX)
        st = gp_error_set(err, GP_ELIMIT, "the partial result exceeds 2 GiB"), *mlen = 1;
    if ((msg = malloc(*mlen ? *mlen : 1))) {
        msg[0] = st != GP_OK ? 1 : bytes ? 0 : 2;
        if (st != GP_OK)
            memcpy(msg + 1, text, *mlen - 1);
        else if (bytes)
            memcpy(msg + 1, bytes, len);
    }
    free(bytes);
    return msg;
}

void gp__job_files_free(char **files, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(files[i]);
    free(files);
}

int gp__job_root_output(const unsigned char *all, const int *lens, const int *offs, int k,
                        const char *unit, unsigned tables, const char *csv_dir,
                        const gp__cli_common *o)
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
        snprintf(name, sizeof name, "the partial of %s %d", unit, i);
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
