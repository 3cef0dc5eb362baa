/* gpuprof diff JOB_A JOB_B (issue 33, part 3): two jobs are compared rank by rank, rank i of one
 * with rank i of the other, never as repeated runs (docs/diff.md, "Two jobs"). Each pair is one
 * gp_diff, with its sides' device, world size, rank and versions and its warnings; the text
 * shows the pairs one after the other, the JSON holds them in one document; --html writes one
 * page with a rank selector over the pairs' pages, --junit one test suite per pair, --flame one
 * differential flame graph per pair (FILE.rankN.EXT). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli/cli.h"
#include "core/atomic_file.h"
#include "core/util.h"
#include "gpuprof/diff.h"
#include "gpuprof/report.h"
#include "render/diff_render.h"
#include "render/render_internal.h"

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

/* What --html, --junit and --flame collect over the pairs. */
typedef struct extras {
    const gp__diff_job_outputs *want;
    gp__diff_job_page *pages;
    size_t n_pages, cap_pages;
    char *junit; /* the pairs' test suites */
    size_t junit_len, cases, failures;
    FILE *junit_fp;
    char **notes;
    size_t n_notes, cap_notes;
} extras;

/* Says the ranks of one side that the other lacks (in the text, and on stderr). */
static void unpaired(FILE *fp, const gp_trace *const *runs, size_t n, const gp_trace *const *other,
                     size_t n_other, const char *side, bool json, bool *first, extras *x)
{
    for (size_t i = 0; i < n; i++) {
        if (find_rank(other, n_other, rank_of(runs[i])))
            continue;
        char note[96], **slot = x->want->html ? GP_PUSH(x->notes, x->n_notes, x->cap_notes) : NULL;
        snprintf(note, sizeof note, "rank %d is only in the %s job: not compared.",
                 (int)rank_of(runs[i]), side);
        if (slot && !(*slot = strdup(note)))
            x->n_notes--;
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

/* FILE.rankN.EXT from path FILE.EXT (or path.rankN without an extension in its last part). */
static void rank_path(const char *path, int32_t rank, char *out, size_t cap)
{
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash) || dot == (slash ? slash + 1 : path))
        snprintf(out, cap, "%s.rank%d", path, (int)rank);
    else
        snprintf(out, cap, "%.*s.rank%d%s", (int)(dot - path), path, (int)rank, dot);
}

/* The pair (b, c) of rank's diff d into x: its page (with its flame graph), its test suite, its
 * flame graph file. GP_OK or the error in err. */
static gp_status pair_extras(extras *x, const gp_trace *b, const gp_trace *c, int32_t rank,
                             const gp_diff *d, const gp_diff_render_opts *r, gp_error *err)
{
    const gp__diff_job_outputs *w = x->want;
    gp_status st = GP_OK;
    if (w->junit) {
        char name[64];
        snprintf(name, sizeof name, "gpuprof.diff.rank%d", (int)rank);
        gp__diff_junit_suite(d, name, x->junit_fp);
        x->cases += gp__diff_junit_cases(d);
        x->failures += d->n_failing_regressions;
    }
    if (!w->html && !w->flame)
        return GP_OK;
    gp_flame_tree *tree = NULL;
    gp_error ferr = {0};
    gp_diff_render_opts pr = *r;
    if (gp_diff_flame(&b, 1, &c, 1, &tree, &ferr) != GP_OK) {
        tree = NULL;
        pr.flame_note = ferr.msg;
        if (w->flame) {
            gp_error_set(err, GP_EINVAL, "rank %d: %s", (int)rank, ferr.msg);
            return GP_EINVAL;
        }
    }
    pr.flame = tree;
    if (w->flame) {
        char path[4200];
        rank_path(w->flame, rank, path, sizeof path);
        gp_flame_render_opts fo;
        gp_flame_render_opts_init(&fo);
        fo.title = "gpuprof diff: differential flame graph";
        st = gp_flame_write(tree, (gp_flame_format)w->flame_fmt, &fo, path, err);
    }
    if (st == GP_OK && w->html) {
        char *page = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&page, &len);
        gp__diff_job_page *slot = GP_PUSH(x->pages, x->n_pages, x->cap_pages);
        if (!mem || !slot) {
            st = GP_ENOMEM;
        } else {
            st = gp_diff_render_html(d, &pr, mem);
            slot->rank = rank;
            slot->html = NULL;
            slot->speedup = d->speedup;
            slot->regressions = d->n_significant_regressions + d->n_untested_regressions;
            slot->improvements = d->n_by_type[GP_DIFF_IMPROVEMENT];
        }
        if (mem && fclose(mem) != 0 && st == GP_OK)
            st = GP_ENOMEM;
        if (slot)
            slot->html = page;
        else
            free(page);
        if (st != GP_OK && !err->msg[0])
            gp_error_set(err, st, "rank %d: the diff page could not be made", (int)rank);
    }
    gp_flame_tree_free(tree);
    return st;
}

/* Every pair, in base rank order, to fp. *failing: regressions that fail (--fail-on-regression).
 * GP_OK, or the first error (err says it). */
static gp_status pairs(FILE *fp, const gp_trace *const *base, size_t nb, const gp_trace *const *cur,
                       size_t nc, const gp_diff_opts *dopts, const gp_diff_render_opts *ro,
                       bool json, extras *x, size_t *failing, gp_error *err)
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
        if (st == GP_OK)
            st = pair_extras(x, b, c, rank_of(b), d, &r, err);
        *failing += d->n_failing_regressions;
        gp_diff_free(d);
        n_pairs++;
    }
    if (st == GP_OK && n_pairs == 0)
        st = gp_error_set(err, GP_EINVAL, "the two jobs have no rank in common");
    bool first = true;
    if (json)
        fprintf(fp, "],\"only_in_base\":[");
    unpaired(fp, base, nb, cur, nc, "base", json, &first, x);
    first = true;
    if (json)
        fprintf(fp, "],\"only_in_current\":[");
    unpaired(fp, cur, nc, base, nb, "current", json, &first, x);
    if (json)
        fprintf(fp, "]}\n");
    return st;
}

static gp_status render_pages(const void *ctx, FILE *fp)
{
    const extras *x = ctx;
    return gp__diff_jobs_html(x->pages, x->n_pages, (const char *const *)x->notes, x->n_notes, fp);
}

static gp_status render_junit(const void *ctx, FILE *fp)
{
    const extras *x = ctx;
    fprintf(fp,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<testsuites name=\"gpuprof diff\" tests=\"%zu\" failures=\"%zu\">\n",
            x->cases, x->failures);
    fwrite(x->junit, 1, x->junit_len, fp);
    fputs("</testsuites>\n", fp);
    return ferror(fp) ? GP_EIO : GP_OK;
}

/* --html and --junit of the pairs collected in x. */
static gp_status write_extras(extras *x, gp_error *err)
{
    gp_status st = GP_OK;
    if (x->junit_fp) {
        if (fclose(x->junit_fp) != 0)
            st = gp_error_set(err, GP_ENOMEM, "out of memory");
        x->junit_fp = NULL;
    }
    if (st == GP_OK && x->want->html)
        st = gp__render_to_file(x->want->html, render_pages, x, err);
    if (st == GP_OK && x->want->junit)
        st = gp__render_to_file(x->want->junit, render_junit, x, err);
    return st;
}

static void extras_free(extras *x)
{
    if (x->junit_fp)
        fclose(x->junit_fp);
    free(x->junit);
    for (size_t i = 0; i < x->n_pages; i++)
        free((char *)x->pages[i].html);
    free(x->pages);
    for (size_t i = 0; i < x->n_notes; i++)
        free(x->notes[i]);
    free(x->notes);
}

int gp__diff_jobs(const gp_trace *const *base, size_t nb, const gp_trace *const *cur, size_t nc,
                  const gp_diff_opts *dopts, const gp_diff_render_opts *ro, const gp__cli_common *o,
                  const gp__diff_job_outputs *outs, bool fail_on_regression)
{
    gp_error err = {0};
    gp__afile f;
    FILE *fp = stdout;
    extras x = {.want = outs};
    if (outs->junit && !(x.junit_fp = open_memstream(&x.junit, &x.junit_len))) {
        fprintf(stderr, "gpuprof diff: out of memory\n");
        return 2;
    }
    if (o->output) {
        if (gp__afile_open(&f, o->output, &err) != GP_OK) {
            fprintf(stderr, "gpuprof diff: %s\n", err.msg);
            extras_free(&x);
            return 2;
        }
        fp = f.fp;
    }
    size_t failing = 0;
    gp_status st = pairs(fp, base, nb, cur, nc, dopts, ro, o->json, &x, &failing, &err);
    if (o->output && st == GP_OK)
        st = gp__afile_commit(&f, &err);
    else if (o->output)
        gp__afile_abort(&f);
    else if (fflush(stdout) != 0 && st == GP_OK)
        st = gp_error_set(&err, GP_EIO, "writing to stdout failed");
    if (st == GP_OK)
        st = write_extras(&x, &err);
    extras_free(&x);
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
