/* gpuprof diff: compare base and current runs (profiles or traces) per name and overall, with
 * statistically tested verdicts; text / JSON / HTML / JUnit output; CI gating by exit code. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli/cli.h"
#include "core/atomic_file.h"
#include "core/util.h"
#include "gpuprof/diff.h"
#include "gpuprof/report.h"
#include "gpuprof/trace.h"

static void usage(FILE *fp)
{
    fprintf(
        fp,
        "usage: gpuprof diff [options] BASE CURRENT\n"
        "       gpuprof diff [options] BASE... -- CURRENT...\n"
        "       gpuprof diff [options] --base A [--base B ...] --current C [--current D ...]\n"
        "\n"
        "Compares a base and a current set of runs per operation / kernel name (calls, total,\n"
        "mean, p50, p95, memory) and overall (total time, GPU work sum, GPU idle time, peak\n"
        "memory, speedup). Each input is a PyTorch-profiler/Kineto or Chrome trace, or a\n"
        "gpuprof profile (.json or .json.gz): one file is one run; a DIR holds several runs\n"
        "(every *.json[.gz]). Two job directories (the distinct ranks of one job each, by\n"
        "distributedInfo) are compared rank by rank: rank i with rank i, one diff per pair\n"
        "(text one after the other, JSON schema gpuprof.diff-jobs/1, --html one page with a\n"
        "rank selector, --junit a test suite per pair, --flame FILE.rankN.EXT; docs/diff.md).\n"
        "The verdict is on each name's total time per run (calls x time per call): with enough\n"
        "runs to test (4 per side at alpha 0.05) a two-sided Mann-Whitney U test of the per-run\n"
        "totals, adjusted over all tested names, plus the threshold; with fewer the threshold\n"
        "alone decides and the verdict says 'untested (n=1)'. The call-count change and the\n"
        "per-call shift (a U test of the per-call durations) are shown as their own signals.\n"
        "Names found on one side only are matched by their normalised form (template arguments,\n"
        "trailing instance numbers) unless --exact. Decision rule: docs/diff.md.\n"
        "With the `--` form, options go before `--`.\n"
        "\n"
        "options:\n"
        "      --base PATH          a base run or directory of runs (repeatable)\n"
        "      --current PATH       a current run or directory of runs (repeatable)\n"
        "      --rank N             compare rank N of each side only (distributedInfo.rank):\n"
        "                           a job directory's ranks are not repeated runs\n"
        "  -t, --threshold PCT      practical threshold in percent (default 5)\n"
        "      --alpha A            significance level (default 0.05)\n"
        "      --correction M       holm (default), bh (Benjamini-Hochberg) or none\n"
        "      --normalize LIST     merge names by normalised form: none (default), templates,\n"
        "                           numbers, all (templates: f<float,4> -> f<...>; numbers:\n"
        "                           trailing _12 or #12 -> _N / #N, e.g. triton_poi_fused_add_0)\n"
        "      --exact              match names exactly: no matching of one-sided names by\n"
        "                           their normalised form (a renamed kernel is NEW + REMOVED)\n"
        "  -k, --kind KIND          kinds to compare (repeatable or comma-separated; 'all');\n"
        "                           default: kernel, memcpy, memset, cpu_op, annotation, range\n"
        "  -n, --top N              rows per text table (default 10; 0 = all)\n"
        "  -w, --name-width N       width of the name column (default 48)\n"
        "      --json               JSON instead of text (schema gpuprof.diff/2, docs/diff.md)\n"
        "  -o, --output FILE        write the text / JSON there (atomically) instead of stdout\n"
        "      --html FILE          also write a self-contained HTML comparison page (summary,\n"
        "                           breakdowns, per-name bars, differential flame graph)\n"
        "      --flame FILE         also write the differential flame graph alone (.html, .svg\n"
        "                           or .folded, by suffix)\n"
        "      --no-analyze         skip the kernel-type / temporal breakdowns and findings\n"
        "      --junit FILE         also write JUnit XML (each failing regression is a failure)\n"
        "      --fail-on-regression exit 1 on any regression: tested and significant, or\n"
        "                           untested (too few runs) past the threshold\n"
        "      --require-significance  with --fail-on-regression / --junit: only tested,\n"
        "                           significant regressions fail\n"
        "      --seed N             bootstrap seed (default 1)\n"
        "      --bootstrap N        bootstrap resamples for the CIs (default 2000; 0 = none)\n"
        "  -q, --quiet              no warnings about suspect input on stderr\n"
        "      --progress           show read progress on stderr even when not a terminal\n"
        "  -h, --help               this help\n"
        "\n"
        "exit status: 0 success (no failing regression, or no --fail-on-regression),\n"
        "             1 a regression with --fail-on-regression (see --require-significance),\n"
        "             2 usage, input or output error\n");
}

typedef struct side {
    const char **paths;
    size_t n_paths, cap_paths;
    gp_job **jobs;
    size_t n_jobs;
    const gp_trace **runs; /* borrowed from jobs */
    size_t n_runs;
} side;

static bool side_add(side *s, const char *path)
{
    const char **p = GP_PUSH(s->paths, s->n_paths, s->cap_paths);
    if (!p)
        return false;
    *p = path;
    return true;
}

static void side_free(side *s)
{
    for (size_t i = 0; i < s->n_jobs; i++)
        gp_job_free(s->jobs[i]);
    free(s->jobs);
    free(s->runs);
    free(s->paths);
}

/* Reads every path of a side; a directory contributes each of its traces as a run. */
static bool side_read(side *s, const char *what, gp_read_opts *rd, bool progress)
{
    if (!(s->jobs = calloc(s->n_paths, sizeof *s->jobs)))
        return false;
    size_t total = 0;
    for (size_t i = 0; i < s->n_paths; i++) {
        gp_error err = {0};
        rd->progress = progress ? gp__cli_progress : NULL;
        rd->progress_ctx = (void *)s->paths[i];
        if (gp_job_read(s->paths[i], rd, &s->jobs[s->n_jobs], &err) != GP_OK) {
            fprintf(stderr, "gpuprof diff: %s input: %s\n", what, err.msg);
            return false;
        }
        gp__cli_warn_read(s->jobs[s->n_jobs], false, rd->quiet); /* runs, not ranks: no rank note */
        total += s->jobs[s->n_jobs++]->n_ranks;
    }
    if (total == 0) {
        gp__cli_error("diff", "no %s runs found in the given inputs", what);
        return false;
    }
    if (!(s->runs = calloc(total, sizeof *s->runs)))
        return false;
    for (size_t j = 0; j < s->n_jobs; j++)
        for (size_t r = 0; r < s->jobs[j]->n_ranks; r++)
            s->runs[s->n_runs++] = s->jobs[j]->ranks[r];
    return true;
}

/* --rank N: keeps only the side's runs of rank N (distributedInfo.rank, else the job's number).
 * false with the error printed when the side has none. */
static bool side_keep_rank(side *s, const char *what, long rank)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n_runs; i++) {
        const gp_trace *t = s->runs[i];
        if ((t->dist.present && t->dist.rank >= 0 ? t->dist.rank : t->rank) == rank)
            s->runs[k++] = s->runs[i];
    }
    if (k == 0) {
        gp__cli_error("diff", "--rank %ld: no %s trace has that rank", rank, what);
        return false;
    }
    s->n_runs = k;
    return true;
}

/* "a.json" or "a.json, b.json" (cut with "..." past ~200 bytes). */
static void side_label(const side *s, char *out, size_t cap)
{
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < s->n_paths && o + 1 < cap; i++) {
        int n = snprintf(out + o, cap - o, "%s%s", i ? ", " : "", s->paths[i]);
        if (n < 0 || (size_t)n >= cap - o) {
            if (cap > 4)
                memcpy(out + cap - 4, "...", 4);
            return;
        }
        o += (size_t)n;
    }
}

static bool parse_list(const char *opt, const char *arg, gp_diff_opts *o)
{
    char *list = strdup(arg);
    if (!list)
        return false;
    bool ok = true;
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); ok && tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (strcmp(opt, "--normalize") == 0) {
            if (strcmp(tok, "none") == 0)
                o->normalize = 0;
            else if (strcmp(tok, "templates") == 0)
                o->normalize |= GP_DIFF_NORM_TEMPLATES;
            else if (strcmp(tok, "numbers") == 0)
                o->normalize |= GP_DIFF_NORM_NUMBERS;
            else if (strcmp(tok, "all") == 0)
                o->normalize = GP_DIFF_NORM_TEMPLATES | GP_DIFF_NORM_NUMBERS;
            else {
                gp__cli_error("diff",
                              "--normalize: unknown rule '%s' (none, templates, numbers, "
                              "all)",
                              tok);
                ok = false;
            }
        } else {
            if (strcmp(tok, "all") == 0) {
                o->kinds = (1u << GP_EV_KIND_COUNT) - 1;
                continue;
            }
            gp_event_kind k;
            if (gp_event_kind_parse(tok, &k) != GP_OK) {
                gp__cli_error("diff", "unknown kind '%s' (see --help)", tok);
                ok = false;
            } else {
                o->kinds |= 1u << k;
            }
        }
    }
    free(list);
    return ok;
}

typedef gp_status (*render_fn)(const gp_diff *, const gp_diff_render_opts *, FILE *);

/* Renders to path atomically. */
static bool write_output(const char *path, render_fn fn, const gp_diff *d,
                         const gp_diff_render_opts *ro)
{
    gp__afile f;
    gp_error err = {0};
    if (gp__afile_open(&f, path, &err) != GP_OK) {
        fprintf(stderr, "gpuprof diff: %s\n", err.msg);
        return false;
    }
    if (fn(d, ro, f.fp) != GP_OK) {
        gp__afile_abort(&f);
        gp__cli_error("diff", "writing %s failed", path);
        return false;
    }
    if (gp__afile_commit(&f, &err) != GP_OK) {
        fprintf(stderr, "gpuprof diff: %s\n", err.msg);
        return false;
    }
    return true;
}

enum {
    OPT_BASE = GP__CLI_ID_OWN,
    OPT_CURRENT,
    OPT_ALPHA,
    OPT_CORRECTION,
    OPT_NORMALIZE,
    OPT_HTML,
    OPT_JUNIT,
    OPT_FAIL,
    OPT_SEED,
    OPT_BOOTSTRAP,
    OPT_FLAME,
    OPT_NO_ANALYZE,
    OPT_EXACT,
    OPT_REQUIRE_SIG,
    OPT_RANK
};

static const gp__cli_opt diff_opts[] = {GP__CLI_ARG("base", OPT_BASE),
                                        GP__CLI_ARG("current", OPT_CURRENT),
                                        GP__CLI_ARG_S("threshold", 't'),
                                        GP__CLI_ARG("alpha", OPT_ALPHA),
                                        GP__CLI_ARG("correction", OPT_CORRECTION),
                                        GP__CLI_ARG("normalize", OPT_NORMALIZE),
                                        GP__CLI_FLAG("exact", OPT_EXACT),
                                        GP__CLI_ARG_S("kind", 'k'),
                                        GP__CLI_ARG_S("top", 'n'),
                                        GP__CLI_ARG_S("name-width", 'w'),
                                        GP__CLI_OPT_JSON,
                                        GP__CLI_OPT_OUTPUT,
                                        GP__CLI_ARG("html", OPT_HTML),
                                        GP__CLI_ARG("flame", OPT_FLAME),
                                        GP__CLI_FLAG("no-analyze", OPT_NO_ANALYZE),
                                        GP__CLI_ARG("junit", OPT_JUNIT),
                                        GP__CLI_FLAG("fail-on-regression", OPT_FAIL),
                                        GP__CLI_FLAG("require-significance", OPT_REQUIRE_SIG),
                                        GP__CLI_ARG("seed", OPT_SEED),
                                        GP__CLI_ARG("bootstrap", OPT_BOOTSTRAP),
                                        GP__CLI_ARG("rank", OPT_RANK),
                                        GP__CLI_OPT_QUIET,
                                        GP__CLI_OPT_PROGRESS,
                                        GP__CLI_OPT_HELP,
                                        GP__CLI_END};

typedef struct diff_args {
    gp_diff_opts dopts;
    gp_diff_render_opts ro;
    bool fail_on_regression;
    const char *html, *junit, *flame;
    gp_flame_format flame_fmt;
    side sides[2];
    gp_error flame_err; /* why there is no flame graph; ro.flame_note points into it */
    long rank;          /* --rank: compare only this rank of each side (-1: every run) */
} diff_args;

/* The options that take a number (-t, --alpha, -n, -w, --seed, --bootstrap). */
static int take_number(diff_args *a, int id, const char *arg)
{
    unsigned long long u;
    double pct;
    switch (id) {
    case 't':
        if (!gp__cli_parse_real("diff", "--threshold", arg, 0, 999, &pct))
            return 2;
        a->dopts.threshold = pct / 100.0;
        return 0;
    case OPT_ALPHA:
        return gp__cli_parse_real("diff", "--alpha", arg, 1e-12, 0.5, &a->dopts.alpha) ? 0 : 2;
    case 'n':
        if (!gp__cli_parse_ulong("diff", "--top", arg, 1000000, &u))
            return 2;
        a->ro.top_n = (size_t)u;
        return 0;
    case 'w':
        if (!gp__cli_parse_ulong("diff", "--name-width", arg, 400, &u) || u < 10) {
            gp__cli_error("diff", "--name-width needs a number in 10..400");
            return 2;
        }
        a->ro.name_width = (int)u;
        return 0;
    case OPT_SEED:
        if (!gp__cli_parse_ulong("diff", "--seed", arg, UINT64_MAX, &u))
            return 2;
        a->dopts.seed = u;
        return 0;
    default: /* OPT_BOOTSTRAP */
        if (!gp__cli_parse_ulong("diff", "--bootstrap", arg, 1000000, &u))
            return 2;
        a->dopts.bootstrap = (uint32_t)u;
        return 0;
    }
}

static int take_option(void *ctx, int id, char *arg)
{
    static const char *const corrections[] = {"holm", "bh", "none"};
    static const gp_diff_correction correction_of[] = {GP_DIFF_HOLM, GP_DIFF_BH, GP_DIFF_NONE};
    diff_args *a = ctx;
    size_t k = 0;
    switch (id) {
    case OPT_BASE:
    case OPT_CURRENT:
        return side_add(&a->sides[id == OPT_CURRENT], arg) ? 0 : 2;
    case OPT_CORRECTION:
        while (k < GP_ARRAY_LEN(corrections) && strcmp(arg, corrections[k]) != 0)
            k++;
        if (k == GP_ARRAY_LEN(corrections)) {
            gp__cli_error("diff", "--correction: holm, bh or none, not '%s'", arg);
            return 2;
        }
        a->dopts.correction = correction_of[k];
        return 0;
    case OPT_NORMALIZE:
    case 'k':
        return parse_list(id == 'k' ? "--kind" : "--normalize", arg, &a->dopts) ? 0 : 2;
    case OPT_HTML:
        a->html = arg;
        return 0;
    case OPT_JUNIT:
        a->junit = arg;
        return 0;
    case OPT_FLAME:
        a->flame = arg;
        if (gp_flame_format_from_path(arg, &a->flame_fmt) != GP_OK ||
            a->flame_fmt == GP_FLAME_SPEEDSCOPE) {
            gp__cli_error("diff", "--flame: name the file .html, .svg or .folded, not '%s'", arg);
            return 2;
        }
        return 0;
    case OPT_NO_ANALYZE:
        a->dopts.analyze = false;
        return 0;
    case OPT_FAIL:
        a->fail_on_regression = true;
        return 0;
    case OPT_EXACT:
        a->dopts.exact = true;
        return 0;
    case OPT_REQUIRE_SIG:
        a->dopts.require_significance = true;
        return 0;
    case OPT_RANK:
        return gp__cli_parse_long("diff", "--rank", arg, 0, INT32_MAX, &a->rank) ? 0 : 2;
    default:
        return take_number(a, id, arg);
    }
}

/* The inputs after the options: BASE CURRENT, or BASE... -- CURRENT... (dd: the index of "--",
 * or -1). false with the error printed. */
static bool add_operands(diff_args *a, int argc, char **argv, int first, int dd)
{
    side *base = &a->sides[0], *cur = &a->sides[1];
    if (dd >= 0) {
        for (int i = first; i < dd; i++)
            if (!side_add(base, argv[i]))
                return false;
        for (int i = dd + 1; i < argc; i++)
            if (!side_add(cur, argv[i]))
                return false;
    } else if (first < argc) {
        if (base->n_paths || cur->n_paths || argc - first != 2) {
            gp__cli_error("diff", "give BASE CURRENT, or BASE... -- CURRENT..., or --base / "
                                  "--current (see --help)");
            return false;
        }
        if (!side_add(base, argv[first]) || !side_add(cur, argv[first + 1]))
            return false;
    }
    if (!base->n_paths || !cur->n_paths) {
        gp__cli_error("diff", "need at least one base and one current input (see --help)");
        return false;
    }
    return true;
}

/* Options and inputs into *a and *o; -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, diff_args *a, gp__cli_common *o)
{
    gp_diff_opts_init(&a->dopts);
    gp_diff_render_opts_init(&a->ro);
    a->flame_fmt = GP_FLAME_HTML;
    /* A literal "--" splits base from current; getopt sees only what comes before it. */
    int dd = -1;
    for (int i = 1; i < argc && dd < 0; i++)
        if (strcmp(argv[i], "--") == 0)
            dd = i;
    static const gp__cli_spec spec = {
        .cmd = "diff", .usage = usage, .opts = diff_opts, .handle = take_option};
    int first;
    int rc = gp__cli_parse_options(&spec, a, dd >= 0 ? dd : argc, argv, o, &first);
    if (rc >= 0)
        return rc;
    return add_operands(a, argc, argv, first, dd) ? -1 : 2;
}

/* --html and --flame: the differential flame graph (a note on the page when it cannot be
 * built), written alone for --flame. false with the error printed. */
static bool write_flame(diff_args *a, gp_flame_tree **tree)
{
    if (gp_diff_flame(a->sides[0].runs, a->sides[0].n_runs, a->sides[1].runs, a->sides[1].n_runs,
                      tree, &a->flame_err) != GP_OK) {
        *tree = NULL;
        a->ro.flame_note = a->flame_err.msg;
        if (a->flame) {
            fprintf(stderr, "gpuprof diff: %s\n", a->flame_err.msg);
            return false;
        }
    }
    a->ro.flame = *tree;
    if (!a->flame)
        return true;
    gp_error werr = {0};
    gp_flame_render_opts fo;
    gp_flame_render_opts_init(&fo);
    fo.title = "gpuprof diff: differential flame graph";
    if (gp_flame_write(*tree, a->flame_fmt, &fo, a->flame, &werr) != GP_OK) {
        fprintf(stderr, "gpuprof diff: %s\n", werr.msg);
        return false;
    }
    return true;
}

/* Every output of a computed diff; false with the error printed. */
static bool write_outputs(diff_args *a, const gp__cli_common *o, const gp_diff *d,
                          gp_flame_tree **tree)
{
    render_fn main_fn = o->json ? gp_diff_render_json : gp_diff_render_text;
    if (o->output) {
        if (!write_output(o->output, main_fn, d, &a->ro))
            return false;
    } else if (main_fn(d, &a->ro, stdout) != GP_OK || fflush(stdout) != 0) {
        gp__cli_error("diff", "writing to stdout failed");
        return false;
    }
    if ((a->html || a->flame) && !write_flame(a, tree))
        return false;
    if (a->html && !write_output(a->html, gp_diff_render_html, d, &a->ro))
        return false;
    return !a->junit || write_output(a->junit, gp_diff_render_junit, d, &a->ro);
}

int gp__cmd_diff(int argc, char **argv)
{
    diff_args a = {.fail_on_regression = false, .rank = -1};
    gp__cli_common o;
    gp_flame_tree *flame_tree = NULL;
    gp_diff *d = NULL;
    int rc = parse_args(argc, argv, &a, &o);
    if (rc >= 0)
        goto done;
    rc = 2;
    gp_read_opts rd;
    gp__cli_read_opts(&o, &rd);
    if (!side_read(&a.sides[0], "base", &rd, o.progress) ||
        !side_read(&a.sides[1], "current", &rd, o.progress))
        goto done;
    if (a.rank >= 0 && (!side_keep_rank(&a.sides[0], "base", a.rank) ||
                        !side_keep_rank(&a.sides[1], "current", a.rank)))
        goto done;
    side *sb = &a.sides[0], *sc = &a.sides[1];
    if (a.rank < 0 && gp__diff_is_job(sb->runs, sb->n_runs, sb->n_paths) &&
        gp__diff_is_job(sc->runs, sc->n_runs, sc->n_paths)) { /* diff_jobs.c */
        gp__diff_job_outputs outs = {a.html, a.junit, a.flame, (int)a.flame_fmt};
        rc = gp__diff_jobs(sb->runs, sb->n_runs, sc->runs, sc->n_runs, &a.dopts, &a.ro, &o, &outs,
                           a.fail_on_regression);
        goto done;
    }
    gp_error err = {0};
    if (gp_diff_compute(a.sides[0].runs, a.sides[0].n_runs, a.sides[1].runs, a.sides[1].n_runs,
                        &a.dopts, &d, &err) != GP_OK) {
        fprintf(stderr, "gpuprof diff: %s\n", err.msg);
        goto done;
    }
    char bl[256], cl[256];
    side_label(&a.sides[0], bl, sizeof bl);
    side_label(&a.sides[1], cl, sizeof cl);
    a.ro.base_label = bl;
    a.ro.cur_label = cl;
    if (!write_outputs(&a, &o, d, &flame_tree))
        goto done;
    rc = (a.fail_on_regression && d->n_failing_regressions > 0) ? 1 : 0;
    if (rc == 1)
        fprintf(stderr,
                "gpuprof diff: %zu regression%s (%zu tested and significant, %zu untested: too "
                "few runs to test%s) (--fail-on-regression)\n",
                d->n_failing_regressions, d->n_failing_regressions == 1 ? "" : "s",
                d->n_significant_regressions,
                a.dopts.require_significance ? 0 : d->n_untested_regressions,
                a.dopts.require_significance ? "" : "; --require-significance ignores them");
done:
    gp_flame_tree_free(flame_tree);
    gp_diff_free(d);
    side_free(&a.sides[0]);
    side_free(&a.sides[1]);
    return rc;
}
