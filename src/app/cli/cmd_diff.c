/* gpuprof diff: compare base and current runs (profiles or traces) per name and overall, with
 * statistically tested verdicts; text / JSON / HTML / JUnit output; CI gating by exit code. */
#include <getopt.h>
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
        "mean, p50, p95, memory) and overall (total time, GPU time, idle time, peak memory,\n"
        "speedup). Each input is a PyTorch-profiler/Kineto or Chrome trace, or a gpuprof profile\n"
        "(.json or .json.gz): one file is one run; a DIR holds several runs (every *.json[.gz]).\n"
        "With one run on a side the per-call durations are compared; with several runs on both\n"
        "sides the per-run totals are. The test is a two-sided Mann-Whitney U with the p-values\n"
        "adjusted over all tested names; a change is a REGRESSION or IMPROVEMENT only when it is\n"
        "significant AND the median moved by at least the threshold (see docs/diff.md).\n"
        "With the `--` form, options go before `--`.\n"
        "\n"
        "options:\n"
        "      --base PATH          a base run or directory of runs (repeatable)\n"
        "      --current PATH       a current run or directory of runs (repeatable)\n"
        "  -t, --threshold PCT      practical threshold in percent (default 5)\n"
        "      --alpha A            significance level (default 0.05)\n"
        "      --correction M       holm (default), bh (Benjamini-Hochberg) or none\n"
        "      --normalize LIST     name normalisation: none (default), templates, numbers, all\n"
        "                           (templates: f<float,4> -> f<...>; numbers: trailing _12 or\n"
        "                           #12 -> _N / #N, e.g. triton_poi_fused_add_0)\n"
        "  -k, --kind KIND          kinds to compare (repeatable or comma-separated; 'all');\n"
        "                           default: kernel, memcpy, memset, cpu_op, annotation, range\n"
        "  -n, --top N              rows per text table (default 10; 0 = all)\n"
        "  -w, --name-width N       width of the name column (default 48)\n"
        "      --json               JSON instead of text (schema gpuprof.diff/1, docs/diff.md)\n"
        "  -o, --output FILE        write the text / JSON there (atomically) instead of stdout\n"
        "      --html FILE          also write a self-contained HTML comparison page (summary,\n"
        "                           breakdowns, per-name bars, differential flame graph)\n"
        "      --flame FILE         also write the differential flame graph alone (.html, .svg\n"
        "                           or .folded, by suffix)\n"
        "      --no-analyze         skip the kernel-type / temporal breakdowns and findings\n"
        "      --junit FILE         also write JUnit XML (each significant regression fails)\n"
        "      --fail-on-regression exit 1 when any significant regression remains\n"
        "      --seed N             bootstrap seed (default 1)\n"
        "      --bootstrap N        bootstrap resamples for the CIs (default 2000; 0 = none)\n"
        "  -q, --quiet              no warnings about suspect input on stderr\n"
        "      --progress           show read progress on stderr even when not a terminal\n"
        "  -h, --help               this help\n"
        "\n"
        "exit status: 0 success (no significant regression, or no --fail-on-regression),\n"
        "             1 significant regression with --fail-on-regression,\n"
        "             2 usage, input or output error\n");
}

typedef struct side {
    const char **paths;
    size_t n_paths, cap_paths;
    gp_job **jobs;
    size_t n_jobs;
    gp_trace **runs;
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

static bool parse_double(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (*s == '\0' || *end || !(v >= lo && v <= hi)) {
        gp__cli_error("diff", "%s needs a number in [%g, %g], not '%s'", opt, lo, hi, s);
        return false;
    }
    *out = v;
    return true;
}

static bool parse_ulong(const char *opt, const char *s, unsigned long long max,
                        unsigned long long *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*s == '\0' || *s == '-' || *end || v > max) {
        gp__cli_error("diff", "%s needs a whole number <= %llu, not '%s'", opt, max, s);
        return false;
    }
    *out = v;
    return true;
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
            gp_event_kind k = gp_event_kind_parse(tok);
            if (k == GP_EV_KIND_COUNT) {
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

int gp__cmd_diff(int argc, char **argv)
{
    enum {
        OPT_BASE = 256,
        OPT_CURRENT,
        OPT_ALPHA,
        OPT_CORRECTION,
        OPT_NORMALIZE,
        OPT_JSON,
        OPT_HTML,
        OPT_JUNIT,
        OPT_FAIL,
        OPT_SEED,
        OPT_BOOTSTRAP,
        OPT_PROGRESS,
        OPT_FLAME,
        OPT_NO_ANALYZE
    };
    static const struct option longopts[] = {
        {"base", required_argument, NULL, OPT_BASE},
        {"current", required_argument, NULL, OPT_CURRENT},
        {"threshold", required_argument, NULL, 't'},
        {"alpha", required_argument, NULL, OPT_ALPHA},
        {"correction", required_argument, NULL, OPT_CORRECTION},
        {"normalize", required_argument, NULL, OPT_NORMALIZE},
        {"kind", required_argument, NULL, 'k'},
        {"top", required_argument, NULL, 'n'},
        {"name-width", required_argument, NULL, 'w'},
        {"json", no_argument, NULL, OPT_JSON},
        {"output", required_argument, NULL, 'o'},
        {"html", required_argument, NULL, OPT_HTML},
        {"flame", required_argument, NULL, OPT_FLAME},
        {"no-analyze", no_argument, NULL, OPT_NO_ANALYZE},
        {"junit", required_argument, NULL, OPT_JUNIT},
        {"fail-on-regression", no_argument, NULL, OPT_FAIL},
        {"seed", required_argument, NULL, OPT_SEED},
        {"bootstrap", required_argument, NULL, OPT_BOOTSTRAP},
        {"quiet", no_argument, NULL, 'q'},
        {"progress", no_argument, NULL, OPT_PROGRESS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};

    gp_diff_opts dopts;
    gp_diff_opts_init(&dopts);
    gp_diff_render_opts ro;
    gp_diff_render_opts_init(&ro);
    gp_read_opts rd;
    gp_read_opts_init(&rd);
    bool json = false, fail_on_regression = false, progress = gp__cli_stderr_is_tty();
    const char *output = NULL, *html = NULL, *junit = NULL, *flame = NULL;
    gp_flame_tree *flame_tree = NULL;
    gp_flame_format flame_fmt = GP_FLAME_HTML;
    side sides[2] = {{0}};
    gp_diff *d = NULL;
    int rc = 2;

    /* A literal "--" splits base from current; getopt sees only what comes before it. */
    int dd = -1;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--") == 0) {
            dd = i;
            break;
        }
    int opt_argc = dd >= 0 ? dd : argc;
    int c;
    optind = 1;
    while ((c = getopt_long(opt_argc, argv, "t:k:n:w:o:qh", longopts, NULL)) != -1) {
        unsigned long long u;
        switch (c) {
        case OPT_BASE:
        case OPT_CURRENT:
            if (!side_add(&sides[c == OPT_CURRENT], optarg))
                goto done;
            break;
        case 't': {
            double pct;
            if (!parse_double("--threshold", optarg, 0, 999, &pct))
                goto done;
            dopts.threshold = pct / 100.0;
            break;
        }
        case OPT_ALPHA:
            if (!parse_double("--alpha", optarg, 1e-12, 0.5, &dopts.alpha))
                goto done;
            break;
        case OPT_CORRECTION:
            if (strcmp(optarg, "holm") == 0)
                dopts.correction = GP_DIFF_HOLM;
            else if (strcmp(optarg, "bh") == 0)
                dopts.correction = GP_DIFF_BH;
            else if (strcmp(optarg, "none") == 0)
                dopts.correction = GP_DIFF_NONE;
            else {
                gp__cli_error("diff", "--correction: holm, bh or none, not '%s'", optarg);
                goto done;
            }
            break;
        case OPT_NORMALIZE:
            if (!parse_list("--normalize", optarg, &dopts))
                goto done;
            break;
        case 'k':
            if (!parse_list("--kind", optarg, &dopts))
                goto done;
            break;
        case 'n':
            if (!parse_ulong("--top", optarg, 1000000, &u))
                goto done;
            ro.top_n = (size_t)u;
            break;
        case 'w':
            if (!parse_ulong("--name-width", optarg, 400, &u) || u < 10) {
                gp__cli_error("diff", "--name-width needs a number in 10..400");
                goto done;
            }
            ro.name_width = (int)u;
            break;
        case OPT_JSON:
            json = true;
            break;
        case 'o':
            output = optarg;
            break;
        case OPT_HTML:
            html = optarg;
            break;
        case OPT_JUNIT:
            junit = optarg;
            break;
        case OPT_FLAME:
            flame = optarg;
            if (!gp_flame_format_from_path(flame, &flame_fmt) || flame_fmt == GP_FLAME_SPEEDSCOPE) {
                gp__cli_error("diff", "--flame: name the file .html, .svg or .folded, not '%s'",
                              flame);
                goto done;
            }
            break;
        case OPT_NO_ANALYZE:
            dopts.analyze = false;
            break;
        case OPT_FAIL:
            fail_on_regression = true;
            break;
        case OPT_SEED:
            if (!parse_ulong("--seed", optarg, UINT64_MAX, &u))
                goto done;
            dopts.seed = u;
            break;
        case OPT_BOOTSTRAP:
            if (!parse_ulong("--bootstrap", optarg, 1000000, &u))
                goto done;
            dopts.bootstrap = (uint32_t)u;
            break;
        case 'q':
            rd.quiet = true;
            break;
        case OPT_PROGRESS:
            progress = true;
            break;
        case 'h':
            usage(stdout);
            rc = 0;
            goto done;
        default:
            usage(stderr);
            goto done;
        }
    }
    /* Positional inputs. */
    if (dd >= 0) {
        for (int i = optind; i < dd; i++)
            if (!side_add(&sides[0], argv[i]))
                goto done;
        for (int i = dd + 1; i < argc; i++)
            if (!side_add(&sides[1], argv[i]))
                goto done;
    } else if (optind < argc) {
        if (sides[0].n_paths || sides[1].n_paths || argc - optind != 2) {
            gp__cli_error("diff", "give BASE CURRENT, or BASE... -- CURRENT..., or --base / "
                                  "--current (see --help)");
            goto done;
        }
        if (!side_add(&sides[0], argv[optind]) || !side_add(&sides[1], argv[optind + 1]))
            goto done;
    }
    if (!sides[0].n_paths || !sides[1].n_paths) {
        gp__cli_error("diff", "need at least one base and one current input (see --help)");
        goto done;
    }
    if (!side_read(&sides[0], "base", &rd, progress) ||
        !side_read(&sides[1], "current", &rd, progress))
        goto done;

    gp_error err = {0};
    if (gp_diff_compute(sides[0].runs, sides[0].n_runs, sides[1].runs, sides[1].n_runs, &dopts, &d,
                        &err) != GP_OK) {
        fprintf(stderr, "gpuprof diff: %s\n", err.msg);
        goto done;
    }
    char bl[256], cl[256];
    side_label(&sides[0], bl, sizeof bl);
    side_label(&sides[1], cl, sizeof cl);
    ro.base_label = bl;
    ro.cur_label = cl;
    render_fn main_fn = json ? gp_diff_render_json : gp_diff_render_text;
    if (output) {
        if (!write_output(output, main_fn, d, &ro))
            goto done;
    } else if (main_fn(d, &ro, stdout) != GP_OK || fflush(stdout) != 0) {
        gp__cli_error("diff", "writing to stdout failed");
        goto done;
    }
    if (html || flame) {
        gp_error ferr = {0};
        if (gp_diff_flame(sides[0].runs, sides[0].n_runs, sides[1].runs, sides[1].n_runs,
                          &flame_tree, &ferr) != GP_OK) {
            flame_tree = NULL;
            ro.flame_note = ferr.msg;
            if (flame) {
                fprintf(stderr, "gpuprof diff: %s\n", ferr.msg);
                goto done;
            }
        }
        ro.flame = flame_tree;
        if (flame) {
            gp_error werr = {0};
            gp_flame_render_opts fo;
            gp_flame_render_opts_init(&fo);
            fo.title = "gpuprof diff: differential flame graph";
            if (gp_flame_write(flame_tree, flame_fmt, &fo, flame, &werr) != GP_OK) {
                fprintf(stderr, "gpuprof diff: %s\n", werr.msg);
                goto done;
            }
        }
    }
    if (html && !write_output(html, gp_diff_render_html, d, &ro))
        goto done;
    if (junit && !write_output(junit, gp_diff_render_junit, d, &ro))
        goto done;
    rc = (fail_on_regression && d->n_significant_regressions > 0) ? 1 : 0;
    if (rc == 1)
        fprintf(stderr, "gpuprof diff: %zu significant regression%s (--fail-on-regression)\n",
                d->n_significant_regressions, d->n_significant_regressions == 1 ? "" : "s");
done:
    gp_flame_tree_free(flame_tree);
    gp_diff_free(d);
    side_free(&sides[0]);
    side_free(&sides[1]);
    return rc;
}
