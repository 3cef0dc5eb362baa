/* A job: several rank traces from a directory (or one file). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/imap.h"
#include "core/msort.h"
#include "core/util.h"
#include "gpuprof/trace.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_rank(const void *a, const void *b)
{
    const gp_trace *x = *(gp_trace *const *)a, *y = *(gp_trace *const *)b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* Ranks: distributedInfo.rank where present and unique; the others get the lowest numbers no
 * file claimed, in file order, so that no two traces share a rank. The claimed ranks are a hash
 * set (a scan of the files per file was quadratic: 20,000 files took 2.55 s, issue 38). GP_OK or
 * GP_ENOMEM (the ranks then half assigned: the caller drops the job). */
static gp_status assign_ranks(gp_job *job)
{
    gp__imap claimed;
    if (gp__imap_init(&claimed, job->n_ranks) != GP_OK)
        return GP_ENOMEM;
    gp_status s = GP_OK;
    uint64_t unused;
    for (size_t i = 0; i < job->n_ranks && s == GP_OK; i++) {
        gp_trace *t = job->ranks[i];
        if (t->rank >= 0 && gp__imap_get(&claimed, t->rank, &unused))
            t->rank = -1; /* a duplicate: the first file keeps the rank */
        if (t->rank < 0)
            t->rank_from_file_order = true;
        else if (!t->rank_from_file_order)
            s = gp__imap_put(&claimed, t->rank, 1);
    }
    int32_t next = 0;
    for (size_t i = 0; i < job->n_ranks && s == GP_OK; i++) {
        gp_trace *t = job->ranks[i];
        if (!t->rank_from_file_order)
            continue;
        while (gp__imap_get(&claimed, next, &unused))
            next++;
        t->rank = next++;
        job->ranks_from_file_order = true;
    }
    gp__imap_free(&claimed);
    return s;
}

gp_status gp_job_read(const char *path, const gp_read_opts *opts, gp_job **out, gp_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return gp_error_set(err, gp__status_of_errno(errno), "%s: %s", path, strerror(errno));
    gp_job *job = calloc(1, sizeof *job);
    if (!job)
        return gp_error_set(err, GP_ENOMEM, "out of memory");
    char **names = NULL;
    size_t n_names = 0, cap_names = 0;
    gp_status s = GP_OK;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (!d) {
            s = gp_error_set(err, gp__status_of_errno(errno), "%s: %s", path, strerror(errno));
            goto done;
        }
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            if (!gp_trace_file_name(de->d_name))
                continue;
            char **slot = GP_PUSH(names, n_names, cap_names);
            size_t len = strlen(path) + strlen(de->d_name) + 2;
            if (!slot || !(*slot = malloc(len))) {
                closedir(d);
                s = gp_error_set(err, GP_ENOMEM, "out of memory");
                goto done;
            }
            snprintf(*slot, len, "%s/%s", path, de->d_name);
        }
        closedir(d);
        if (n_names == 0) {
            s = gp_error_set(err, GP_ENOENT, "%s: no *.json or *.json.gz traces in this directory",
                             path);
            goto done;
        }
        gp__msort(names, n_names, sizeof *names, cmp_str);
    } else {
        char **slot = GP_PUSH(names, n_names, cap_names);
        if (!slot || !(*slot = strdup(path))) {
            s = gp_error_set(err, GP_ENOMEM, "out of memory");
            goto done;
        }
    }
    if (!(job->ranks = calloc(n_names, sizeof *job->ranks))) {
        s = gp_error_set(err, GP_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n_names; i++) {
        s = gp_trace_read(names[i], opts, &job->ranks[i], err);
        if (s != GP_OK)
            goto done;
        job->n_ranks++;
    }
    if ((s = assign_ranks(job)) != GP_OK) {
        gp_error_set(err, s, "out of memory");
        goto done;
    }
    gp__msort(job->ranks, job->n_ranks, sizeof *job->ranks, cmp_rank);
done:
    for (size_t i = 0; i < n_names; i++)
        free(names[i]);
    free(names);
    if (s != GP_OK) {
        gp_job_free(job);
        return s;
    }
    *out = job;
    return GP_OK;
}
