/* gpuprof diff JOB_A JOB_B (issue 33, part 3): two jobs are compared rank by rank, rank i of one
 * with rank i of the other, never as repeated runs (docs/diff.md, "Two jobs"). Each pair is one
 * gp_diff, with its sides' device, world size, rank and versions and its warnings; the text
 * shows the pairs one after the other, the JSON holds them in one document. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli/cli.h"
#include "core/atomic_file.h"
#include "gpuprof/diff.h"

/* The rank a trace names (distributedInfo.rank). */
static int32_t rank_of(const gp_trace *t)
{
    return t->dist.present ? t->dist.rank : -1;
}

bool gp__diff_is_job(const gp_trace *const *runs, size_t n, size_t n_paths)
{
    if (n_paths != 1 || n < 2)
        return false;
    for (size_t i = 0; i < n; i++) {
        const gp_trace *t = runs[i];
        if (rank_of(t) < 0 || t->rank_from_file_order || t->dist.world_size < 2)
            return false;
        for (size_t j = 0; j < i; j++)
            if (rank_of(runs[j]) == rank_of(t))
                return false;
    }
    return true;
}

static const gp_trace *find_rank(const gp_trace *const *runs, size_t n, int32_t rank)
{
    for (size_t i = 0; i < n; i++)
        if (rank_of(runs[i]) == rank)
            return runs[i];
    return NULL;
}

/* Says the ranks of one side that the other lacks (in the text, and on stderr). */
static void unpaired(FILE *fp, const gp_trace *const *runs, size_t n, const gp_trace *const *other,
                     size_t n_other, const char *side, bool json, bool *first)
{
    for (size_t i = 0; i < n; i++) {
        if (find_rank(other, n_other, rank_of(runs[i])))
            continue;
        if (json)
            fprintf(fp, "%s%d", *first ? "" : ",", (int)rank_of(runs[i]));
        else
            fprintf(fp, "NOTE: rank %d is only in the %s job: not compared.\n",
                    (int)rank_of(runs[i]), side);
        fprintf(stderr, "gpuprof diff: rank %d is only in the %s job: not compared\n",
                (int)rank_of(runs[i]), side);
        *first = false;
    }
}

/* Every pair, in base rank order, to fp. *failing: regressions that fail (--fail-on-regression).
 * GP_OK, or the first error (err says it). */
static gp_status pairs(FILE *fp, const gp_trace *const *base, size_t nb, const gp_trace *const *cur,
                       size_t nc, const gp_diff_opts *dopts, const gp_diff_render_opts *ro,
                       bool json, size_t *failing, gp_error *err)
{
    gp_status st = GP_OK;
    size_t n_pairs = 0;
    if (json)
        fprintf(fp, "{\"schema\":\"gpuprof.diff-jobs/1\",\"pairing\":\"rank\",\"pairs\":[");
    for (size_t i = 0; i < nb && st == GP_OK; i++) {
        const gp_trace *b = base[i], *c = find_rank(cur, nc, rank_of(b));
        if (!c)
            continue;
        gp_diff *d = NULL;
        st = gp_diff_compute(&b, 1, &c, 1, dopts, &d, err);
        if (st != GP_OK)
            break;
        gp_diff_render_opts r = *ro;
        r.base_label = gp_trace_str(b, b->source);
        r.cur_label = gp_trace_str(c, c->source);
        if (json)
            fprintf(fp, "%s{\"rank\":%d,\"diff\":", n_pairs ? "," : "", (int)rank_of(b));
        else
            fprintf(fp, "%s== RANK %d: base rank %d with current rank %d ==\n", n_pairs ? "\n" : "",
                    (int)rank_of(b), (int)rank_of(b), (int)rank_of(c));
        st = json ? gp_diff_render_json(d, &r, fp) : gp_diff_render_text(d, &r, fp);
        if (json)
            fputc('}', fp);
        *failing += d->n_failing_regressions;
        gp_diff_free(d);
        n_pairs++;
    }
    if (st == GP_OK && n_pairs == 0)
        st = gp_error_set(err, GP_EINVAL, "the two jobs have no rank in common");
    bool first = true;
    if (json)
        fprintf(fp, "],\"only_in_base\":[");
    unpaired(fp, base, nb, cur, nc, "base", json, &first);
    first = true;
    if (json)
        fprintf(fp, "],\"only_in_current\":[");
    unpaired(fp, cur, nc, base, nb, "current", json, &first);
    if (json)
        fprintf(fp, "]}\n");
    return st;
}

int gp__diff_jobs(const gp_trace *const *base, size_t nb, const gp_trace *const *cur, size_t nc,
                  const gp_diff_opts *dopts, const gp_diff_render_opts *ro, const gp__cli_common *o,
                  bool fail_on_regression)
{
    gp_error err = {0};
    gp__afile f;
    FILE *fp = stdout;
    if (o->output) {
        if (gp__afile_open(&f, o->output, &err) != GP_OK) {
            fprintf(stderr, "gpuprof diff: %s\n", err.msg);
            return 2;
        }
        fp = f.fp;
    }
    size_t failing = 0;
    gp_status st = pairs(fp, base, nb, cur, nc, dopts, ro, o->json, &failing, &err);
    if (o->output && st == GP_OK)
        st = gp__afile_commit(&f, &err);
    else if (o->output)
        gp__afile_abort(&f);
    else if (fflush(stdout) != 0 && st == GP_OK)
        st = gp_error_set(&err, GP_EIO, "writing to stdout failed");
    if (st != GP_OK) {
        fprintf(stderr, "gpuprof diff: %s\n", err.msg[0] ? err.msg : gp_strerror(st));
        return 2;
    }
    if (fail_on_regression && failing) {
        fprintf(stderr,
                "gpuprof diff: %zu regression%s over the rank pairs (--fail-on-regression)\n",
                failing, failing == 1 ? "" : "s");
        return 1;
    }
    return 0;
}
