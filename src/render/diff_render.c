/* Renderers of a gp_diff: text tables, JSON, a self-contained HTML page and JUnit XML. They format
 * the struct; every number shown was computed by gp_diff_compute. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/diff_render.h"
#include "render/render_internal.h"
#include "core/json_writer.h"
#include "core/util.h"
#include "gpuprof/diff.h"
#include "gpuprof/report.h"
#include "gpuprof/summary.h"

void gp_diff_render_opts_init(gp_diff_render_opts *o)
{
    memset(o, 0, sizeof *o);
    o->top_n = 10;
    o->name_width = 48;
}

const gp_diff_render_opts *gp__diff_opts_or_default(const gp_diff_render_opts *o,
                                                    gp_diff_render_opts *def)
{
    if (o)
        return o;
    gp_diff_render_opts_init(def);
    return def;
}

const char *gp__diff_correction_name(gp_diff_correction c)
{
    return c == GP_DIFF_HOLM ? "holm" : c == GP_DIFF_BH ? "benjamini-hochberg" : "none";
}

/* ---- text --------------------------------------------------------------------------------- */

void gp__diff_fmt_value(char *buf, size_t cap, double v, const char *unit)
{
    if (isnan(v)) {
        snprintf(buf, cap, "n/a");
    } else if (strcmp(unit, "bytes") == 0) {
        snprintf(buf, cap, "%.1f MiB", v / GP_MIB);
    } else {
        snprintf(buf, cap, "%.3f ms", v / 1e6);
    }
}

void gp__diff_fmt_pct(char *buf, size_t cap, double pct)
{
    if (isnan(pct) || isinf(pct)) /* inf: nothing on the base side to compare with */
        snprintf(buf, cap, "n/a");
    else
        snprintf(buf, cap, "%+.1f%%", pct);
}

static void fmt_ci(char *buf, size_t cap, const gp_diff_test *t)
{
    if (isnan(t->ci_lo))
        snprintf(buf, cap, "n/a");
    else
        snprintf(buf, cap, "[%+.1f%%, %+.1f%%]", 100.0 * (t->ci_lo - 1.0),
                 100.0 * (t->ci_hi - 1.0));
}

static void fmt_p(char *buf, size_t cap, double p)
{
    if (isnan(p))
        snprintf(buf, cap, "n/a");
    else if (p < 1e-4)
        snprintf(buf, cap, "<1e-4");
    else
        snprintf(buf, cap, "%.4f", p);
}

/* "untested (n=1)", "untested (n=3/3)" or "p(adj) 0.0022, n=6/6": how a verdict was reached. */
void gp__diff_fmt_basis(char *buf, size_t cap, const gp_diff_test *t)
{
    unsigned long long nb = t->n_base, nc = t->n_cur;
    if (t->method == GP_DIFF_TEST_NONE) {
        if (nb == nc)
            snprintf(buf, cap, "untested (n=%llu)", nb);
        else
            snprintf(buf, cap, "untested (n=%llu/%llu)", nb, nc);
        return;
    }
    char p[24];
    fmt_p(p, sizeof p, t->p_adjusted);
    snprintf(buf, cap, "p(adj) %s, n=%llu/%llu", p, nb, nc);
}

/* The per-call signal: "slower p<1e-4", "same p=0.3288", "untested n=2/2". */
void gp__diff_fmt_shift(char *buf, size_t cap, const gp_diff_row *r)
{
    if (r->type == GP_DIFF_NEW || r->type == GP_DIFF_REMOVED) {
        snprintf(buf, cap, "-");
        return;
    }
    if (r->per_call.method == GP_DIFF_TEST_NONE) {
        snprintf(buf, cap, "untested n=%llu/%llu", (unsigned long long)r->per_call.n_base,
                 (unsigned long long)r->per_call.n_cur);
        return;
    }
    char p[24];
    fmt_p(p, sizeof p, r->per_call.p_adjusted);
    snprintf(buf, cap, "%s p%s%s", gp_diff_dir_name(r->per_call_dir, false), p[0] == '<' ? "" : "=",
             p);
}

double gp__diff_ratio_pct(double ratio)
{
    return isnan(ratio) ? NAN : 100.0 * (ratio - 1.0);
}

/* Why a row with a visible change has no verdict. */
static const char *why_no_verdict(const gp_diff *d, const gp_diff_row *r)
{
    if (r->test.method == GP_DIFF_TEST_NONE)
        return "total change below threshold (untested)";
    if (!r->test.significant)
        return "not significant";
    if (!isnan(r->test.ratio) && fabs(r->test.ratio - 1.0) < d->opts.threshold)
        return "median total change below threshold";
    return "median and rank test disagree";
}

static void row_header(FILE *fp, int w)
{
    fprintf(fp, "%-*s %-15s %11s %9s %11s %11s %12s %9s  %-26s %9s  %s\n", w, "Name", "Kind",
            "Calls b/c", "Calls%", "Base ms", "Cur ms", "Delta ms", "Delta%", "Verdict basis",
            "Per call%", "Per-call shift");
}

static void row_line(FILE *fp, const gp_diff_row *r, const char *name, int w)
{
    char calls[48], cp[24], basis[64], shift[64], pc[24], dp[24];
    snprintf(calls, sizeof calls, "%.0f/%.0f", r->base.calls, r->cur.calls);
    gp__diff_fmt_pct(cp, sizeof cp, r->calls_pct);
    if (r->type == GP_DIFF_NEW || r->type == GP_DIFF_REMOVED)
        snprintf(basis, sizeof basis, "-");
    else
        gp__diff_fmt_basis(basis, sizeof basis, &r->test);
    gp__diff_fmt_pct(pc, sizeof pc, gp__diff_ratio_pct(r->per_call.ratio));
    gp__diff_fmt_shift(shift, sizeof shift, r);
    gp__diff_fmt_pct(dp, sizeof dp, r->delta_pct);
    fprintf(fp, "%-*s %-15s %11s %9s %11.3f %11.3f %+12.3f %9s  %-26s %9s  %s\n", w, name,
            gp_event_kind_name(r->kind), calls, cp, r->base.total / 1e6, r->cur.total / 1e6,
            r->delta_ns / 1e6, dp, basis, pc, shift);
}

/* Indices of rows of a type, in table order (regressions: largest delta first; improvements:
 * most negative first). */
static size_t pick_rows(const gp_diff *d, gp_diff_type type, bool reverse, size_t *idx)
{
    size_t k = 0;
    for (size_t i = 0; i < d->n_rows; i++) {
        size_t j = reverse ? d->n_rows - 1 - i : i;
        if (d->rows[j].type == type)
            idx[k++] = j;
    }
    return k;
}

static void share_table(FILE *fp, const char *title, const gp_diff_share *v, size_t n)
{
    fprintf(fp, "\n%s\n", title);
    fprintf(fp, "%-48s %11s %7s %11s %7s %9s\n", "", "Base ms", "Base%", "Cur ms", "Cur%",
            "Change");
    for (size_t i = 0; i < n; i++) {
        char ch[24];
        if (isnan(v[i].base_pct) || isnan(v[i].cur_pct))
            snprintf(ch, sizeof ch, "n/a");
        else
            snprintf(ch, sizeof ch, "%+.1f pp", v[i].cur_pct - v[i].base_pct);
        fprintf(fp, "%-48s %11.3f %6.1f%% %11.3f %6.1f%% %9s\n", v[i].label, v[i].base_ns / 1e6,
                v[i].base_pct, v[i].cur_ns / 1e6, v[i].cur_pct, ch);
    }
}

static void render_analysis_text(const gp_diff *d, FILE *fp)
{
    if (!d->analyzed) {
        fprintf(fp, "\nBREAKDOWNS AND FINDINGS: %s\n", d->analyze_note.msg);
        return;
    }
    share_table(fp, "TEMPORAL BREAKDOWN (gpuprof analyze; per run, share of the GPU span)",
                d->temporal, 3);
    share_table(fp, "KERNEL-TYPE BREAKDOWN (gpuprof analyze; per run, share of GPU busy time)",
                d->types, d->n_types);
    fprintf(fp, "\nFINDINGS (gpuprof analyze rules: NEW, RESOLVED or PERSISTS; gain = estimated "
                "recoverable time per run)\n");
    size_t shown = 0;
    for (size_t i = 0; i < d->n_findings; i++) {
        const gp_diff_finding *f = &d->findings[i];
        char title[512];
        gp__finding_title(&f->finding, title, sizeof title);
        const char *advice = gp__finding_advice(&f->finding);
        fprintf(fp, "%-9s %-22s gain %9.3f -> %9.3f ms  %s\n",
                gp_diff_finding_change_name(f->change), f->rule, f->base_gain_ns / 1e6,
                f->cur_gain_ns / 1e6, title);
        if (f->change == GP_DIFF_FINDING_NEW && *advice)
            fprintf(fp, "          suggestion: %s\n", advice);
        shown++;
    }
    if (!shown)
        fprintf(fp, "none on either side\n");
}

/* The method lines under the title: what the verdicts test, and on how many runs. */
static void method_lines(const gp_diff *d, FILE *fp)
{
    const char *corr = gp__diff_correction_name(d->opts.correction);
    bool runs_tested = false;
    for (size_t i = 0; i < d->n_rows && !runs_tested; i++)
        runs_tested = d->rows[i].test.method != GP_DIFF_TEST_NONE;
    fprintf(fp, "Verdicts: total time per name per run (calls x time per call), threshold %.1f%%",
            100.0 * d->opts.threshold);
    if (runs_tested || (d->n_base_runs >= d->runs_needed && d->n_cur_runs >= d->runs_needed))
        fprintf(fp,
                "; Mann-Whitney U (two-sided) on the per-run totals, %s-adjusted over %zu tested "
                "names, alpha %.3g\n",
                corr, d->n_tested, d->opts.alpha);
    else
        fprintf(fp,
                "; %zu vs %zu runs cannot be tested (a test needs %zu vs %zu at alpha %.3g): the "
                "threshold alone decides, marked untested\n",
                d->n_base_runs, d->n_cur_runs, d->runs_needed, d->runs_needed, d->opts.alpha);
    fprintf(fp,
            "Per-call shift: Mann-Whitney U on the per-call durations (runs pooled), %s-adjusted "
            "over %zu tested names; CIs: %u bootstrap resamples (seed %llu), shown with >= %d "
            "values per side\n\n",
            corr, d->n_tested_per_call, d->opts.bootstrap, (unsigned long long)d->opts.seed,
            GP_DIFF_MIN_CI_N);
}

static void summary_text(const gp_diff *d, FILE *fp)
{
    fprintf(fp, "SUMMARY (median over each side's runs)\n");
    fprintf(fp, "%-12s %14s %14s %14s %9s  %s\n", "Metric", "Base", "Current", "Change", "Change%",
            "Verdict");
    for (int m = 0; m < GP_DIFF_METRIC_COUNT; m++) {
        const gp_diff_metric *mt = &d->metrics[m];
        if (!mt->present) {
            fprintf(fp, "%-12s %14s %14s %14s %9s  %s\n", mt->name, "n/a", "n/a", "n/a", "n/a",
                    "not present in both");
            continue;
        }
        char b[32], c[32], dl[32], pc[24], basis[64];
        gp__diff_fmt_value(b, sizeof b, mt->base, mt->unit);
        gp__diff_fmt_value(c, sizeof c, mt->cur, mt->unit);
        gp__diff_fmt_value(dl, sizeof dl, mt->delta, mt->unit);
        gp__diff_fmt_pct(pc, sizeof pc, mt->delta_pct);
        gp__diff_fmt_basis(basis, sizeof basis, &mt->test);
        fprintf(fp, "%-12s %14s %14s %14s %9s  %s, %s\n", mt->name, b, c, dl, pc,
                gp_diff_type_name(mt->type), basis);
    }
    fputs("gpu_work_sum: kernel + memcpy + memset durations added up over every stream "
          "(overlapping work counts in full, so it can exceed total_time)\nidle_time: per "
          "device, the GPU span minus GPU busy, summed over devices\n",
          fp);
    if (isnan(d->speedup))
        fprintf(fp, "Speedup: n/a\n");
    else
        fprintf(fp, "Speedup: %.3fx (base total / current total)\n", d->speedup);
    fprintf(fp,
            "Names: %zu compared (%zu matched by normalised name), %zu tested; REGRESSION %zu, "
            "IMPROVEMENT %zu, NO_CHANGE %zu, NEW %zu, REMOVED %zu\n",
            d->n_rows, d->n_matched, d->n_tested, d->n_by_type[GP_DIFF_REGRESSION],
            d->n_by_type[GP_DIFF_IMPROVEMENT], d->n_by_type[GP_DIFF_NO_CHANGE],
            d->n_by_type[GP_DIFF_NEW], d->n_by_type[GP_DIFF_REMOVED]);
    fprintf(fp,
            "Regressions (names and metrics): %zu tested and significant, %zu untested; "
            "--fail-on-regression fails on %zu%s\n",
            d->n_significant_regressions, d->n_untested_regressions, d->n_failing_regressions,
            d->opts.require_significance ? " (--require-significance)" : "");
}

/* Rows matched by normalised name: both names, so a renamed kernel reads as one. */
static void matched_text(const gp_diff *d, FILE *fp, size_t top)
{
    if (!d->n_matched)
        return;
    fprintf(fp, "\nMATCHED BY NORMALISED NAME (%zu; --exact keeps them apart)\n", d->n_matched);
    size_t shown = 0;
    for (size_t i = 0; i < d->n_rows && shown < top; i++) {
        const gp_diff_row *r = &d->rows[i];
        if (r->base_name) {
            fprintf(fp, "%-11s %-15s base:    %s\n", gp_diff_type_name(r->type),
                    gp_event_kind_name(r->kind), r->base_name);
            fprintf(fp, "%-11s %-15s current: %s\n", "", "", r->name);
        } else if (r->n_base_names > 1 || r->n_cur_names > 1) {
            fprintf(fp, "%-11s %-15s %u base names -> %u current names: %s\n",
                    gp_diff_type_name(r->type), gp_event_kind_name(r->kind), r->n_base_names,
                    r->n_cur_names, r->name);
        } else {
            continue;
        }
        shown++;
    }
    if (shown < d->n_matched)
        fprintf(fp, "... %zu more\n", d->n_matched - shown);
}

/* The largest moves that did not earn a verdict, so nobody mistakes silence for absence. */
static void no_verdict_text(const gp_diff *d, FILE *fp, size_t *idx, const char *shortn, int w,
                            size_t top)
{
    size_t k = 0;
    for (size_t i = 0; i < d->n_rows; i++)
        if (d->rows[i].type == GP_DIFF_NO_CHANGE && d->rows[i].delta_ns != 0)
            idx[k++] = i;
    /* Order by |delta| descending (stable on table order). */
    for (size_t i = 1; i < k; i++) {
        size_t v = idx[i], j = i;
        while (j > 0 && fabs(d->rows[idx[j - 1]].delta_ns) < fabs(d->rows[v].delta_ns)) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = v;
    }
    size_t shown = k < top ? k : top;
    fprintf(fp, "\nLARGEST CHANGES WITHOUT A VERDICT (%zu of %zu)\n", shown, k);
    if (!shown)
        return;
    fprintf(fp, "%-*s %-15s %12s %9s %9s  %-26s %s\n", w, "Name", "Kind", "Delta ms", "Delta%",
            "Median%", "Verdict basis", "Why");
    for (size_t i = 0; i < shown; i++) {
        const gp_diff_row *r = &d->rows[idx[i]];
        char dp[24], med[24], basis[64];
        gp__diff_fmt_pct(dp, sizeof dp, r->delta_pct);
        gp__diff_fmt_pct(med, sizeof med, gp__diff_ratio_pct(r->test.ratio));
        gp__diff_fmt_basis(basis, sizeof basis, &r->test);
        fprintf(fp, "%-*s %-15s %+12.3f %9s %9s  %-26s %s\n", w,
                shortn + idx[i] * GP__DIFF_SHORT_CAP, gp_event_kind_name(r->kind),
                r->delta_ns / 1e6, dp, med, basis, why_no_verdict(d, r));
    }
}

gp_status gp_diff_render_text(const gp_diff *d, const gp_diff_render_opts *o_in, FILE *fp)
{
    gp_diff_render_opts def;
    const gp_diff_render_opts *o = gp__diff_opts_or_default(o_in, &def);
    int w = o->name_width > 8 ? o->name_width : 48;
    if (w >= GP__DIFF_SHORT_CAP)
        w = GP__DIFF_SHORT_CAP - 1;
    size_t top = o->top_n ? o->top_n : (size_t)-1;
    size_t n = d->n_rows;
    size_t *idx = n ? malloc(n * sizeof *idx) : NULL;
    const char **names = n ? malloc(n * sizeof *names) : NULL;
    char *shortn = n ? malloc(n * GP__DIFF_SHORT_CAP) : NULL;
    gp_status st = (!n || (idx && names && shortn)) ? GP_OK : GP_ENOMEM;
    for (size_t i = 0; st == GP_OK && i < n; i++)
        names[i] = d->rows[i].name;
    /* Two rows never show the same text for different names (a CI log must say which). */
    if (st == GP_OK)
        st = gp_shorten_names_unique(names, n, (size_t)w, shortn, GP__DIFF_SHORT_CAP);
    if (st != GP_OK)
        goto done;
    fprintf(fp, "GPUPROF DIFF: %s (%zu run%s) -> %s (%zu run%s)\n",
            o->base_label ? o->base_label : "base", d->n_base_runs, d->n_base_runs == 1 ? "" : "s",
            o->cur_label ? o->cur_label : "current", d->n_cur_runs, d->n_cur_runs == 1 ? "" : "s");
    gp__diff_context_text(d, fp);
    method_lines(d, fp);
    summary_text(d, fp);
    static const struct {
        gp_diff_type type;
        bool reverse;
        const char *title;
    } sections[] = {
        {GP_DIFF_REGRESSION, false, "TOP REGRESSIONS (total time per run; largest first)"},
        {GP_DIFF_IMPROVEMENT, true, "TOP IMPROVEMENTS (total time per run; largest first)"},
        {GP_DIFF_NEW, false, "NEW (only in current)"},
        {GP_DIFF_REMOVED, true, "REMOVED (only in base)"},
    };
    for (size_t s = 0; s < GP_ARRAY_LEN(sections); s++) {
        size_t k = pick_rows(d, sections[s].type, sections[s].reverse, idx);
        fprintf(fp, "\n%s: %zu\n", sections[s].title, k);
        if (!k)
            continue;
        row_header(fp, w);
        for (size_t i = 0; i < k && i < top; i++)
            row_line(fp, &d->rows[idx[i]], shortn + idx[i] * GP__DIFF_SHORT_CAP, w);
        if (k > top)
            fprintf(fp, "... %zu more\n", k - top);
    }
    matched_text(d, fp, top);
    no_verdict_text(d, fp, idx, shortn, w, top);
    render_analysis_text(d, fp);
    gp__diff_compile_text(d, fp);
    fprintf(fp, "\nNotes: times are per run (averaged over a side's runs). Calls%% is the change "
                "of calls per run; Per call%% the change of the per-call median, with its own "
                "test (Per-call shift); Median%% the change of the median run total, which the "
                "verdict uses (one run: the total). A name called more often but faster each "
                "time can cost more in total: the verdict follows the total.\n");
    st = ferror(fp) ? GP_EIO : GP_OK;
done:
    free(idx);
    free(names);
    free(shortn);
    return st;
}

/* ---- JSON --------------------------------------------------------------------------------- */

/* A number with `sig` significant digits (NaN -> null), so files are stable and readable. */
static void jw_sig(gp__jw *w, double v, int sig)
{
    if (isnan(v) || isinf(v)) {
        gp__jw_null(w);
        return;
    }
    char buf[64];
    int n = snprintf(buf, sizeof buf, "%.*g", sig, v);
    gp__jw_raw(w, buf, (size_t)n);
}

static void jw_kv_sig(gp__jw *w, const char *k, double v, int sig)
{
    gp__jw_key(w, k);
    jw_sig(w, v, sig);
}

static void jw_test(gp__jw *w, const char *key, const gp_diff_test *t)
{
    gp__jw_key(w, key);
    gp__jw_obj_begin(w);
    gp__jw_kv_str(w, "method", gp_diff_method_name(t->method));
    gp__jw_kv_bool(w, "tested", t->method != GP_DIFF_TEST_NONE);
    gp__jw_kv_int(w, "n_base", (int64_t)t->n_base);
    gp__jw_kv_int(w, "n_current", (int64_t)t->n_cur);
    gp__jw_kv_bool(w, "exact", t->exact);
    jw_kv_sig(w, "u", t->method == GP_DIFF_TEST_NONE ? NAN : t->u, 10);
    jw_kv_sig(w, "p_value", t->p_value, 6);
    jw_kv_sig(w, "p_adjusted", t->p_adjusted, 6);
    jw_kv_sig(w, "median_ratio", t->ratio, 6);
    jw_kv_sig(w, "ci_low", t->ci_lo, 6);
    jw_kv_sig(w, "ci_high", t->ci_hi, 6);
    gp__jw_kv_bool(w, "significant", t->significant);
    gp__jw_obj_end(w);
}

static void jw_side(gp__jw *w, const char *key, const gp_diff_side *s)
{
    gp__jw_key(w, key);
    gp__jw_obj_begin(w);
    jw_kv_sig(w, "calls_per_run", s->calls, 10);
    jw_kv_sig(w, "total_ns_per_run", s->total, 12);
    jw_kv_sig(w, "mean_ns", s->mean, 10);
    jw_kv_sig(w, "p50_ns", s->p50, 10);
    jw_kv_sig(w, "p95_ns", s->p95, 10);
    gp__jw_key(w, "mem_peak_bytes");
    if (s->mem_peak >= 0)
        gp__jw_int(w, s->mem_peak);
    else
        gp__jw_null(w);
    gp__jw_obj_end(w);
}

static void jw_shares(gp__jw *w, const char *key, const gp_diff_share *v, size_t n)
{
    gp__jw_key(w, key);
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < n; i++) {
        gp__jw_obj_begin(w);
        gp__jw_kv_str(w, "label", v[i].label);
        jw_kv_sig(w, "base_ns_per_run", v[i].base_ns, 12);
        jw_kv_sig(w, "current_ns_per_run", v[i].cur_ns, 12);
        jw_kv_sig(w, "base_pct", v[i].base_pct, 6);
        jw_kv_sig(w, "current_pct", v[i].cur_pct, 6);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
}

void gp__diff_write_json(gp__jw *w, const gp_diff *d, const gp_diff_render_opts *o)
{
    gp__jw_obj_begin(w);
    gp__jw_kv_str(w, "schema", "gpuprof.diff/2");
    gp__jw_kv_str(w, "base", o->base_label ? o->base_label : "base");
    gp__jw_kv_str(w, "current", o->cur_label ? o->cur_label : "current");
    gp__jw_kv_int(w, "base_runs", (int64_t)d->n_base_runs);
    gp__jw_kv_int(w, "current_runs", (int64_t)d->n_cur_runs);
    gp__diff_context_json(w, d);
    gp__jw_key(w, "options");
    gp__jw_obj_begin(w);
    jw_kv_sig(w, "threshold", d->opts.threshold, 6);
    jw_kv_sig(w, "alpha", d->opts.alpha, 6);
    gp__jw_kv_str(w, "correction", gp__diff_correction_name(d->opts.correction));
    gp__jw_kv_bool(w, "normalize_templates", (d->opts.normalize & GP_DIFF_NORM_TEMPLATES) != 0);
    gp__jw_kv_bool(w, "normalize_numbers", (d->opts.normalize & GP_DIFF_NORM_NUMBERS) != 0);
    gp__jw_kv_bool(w, "exact", d->opts.exact);
    gp__jw_kv_bool(w, "require_significance", d->opts.require_significance);
    gp__jw_kv_int(w, "bootstrap", d->opts.bootstrap);
    gp__jw_kv_uint(w, "seed", d->opts.seed);
    gp__jw_obj_end(w);
    gp__jw_key(w, "summary");
    gp__jw_obj_begin(w);
    jw_kv_sig(w, "speedup", d->speedup, 6);
    gp__jw_kv_int(w, "names", (int64_t)d->n_rows);
    gp__jw_kv_int(w, "tested", (int64_t)d->n_tested);
    gp__jw_kv_int(w, "tested_per_call", (int64_t)d->n_tested_per_call);
    gp__jw_kv_int(w, "matched_by_normalised_name", (int64_t)d->n_matched);
    gp__jw_kv_int(w, "runs_needed_to_test", (int64_t)d->runs_needed);
    for (int t = 0; t < GP_DIFF_TYPE_COUNT; t++) {
        char key[32];
        snprintf(key, sizeof key, "%s", gp_diff_type_name((gp_diff_type)t));
        for (char *c = key; *c; c++)
            if (*c >= 'A' && *c <= 'Z')
                *c = (char)(*c - 'A' + 'a');
        gp__jw_kv_int(w, key, (int64_t)d->n_by_type[t]);
    }
    gp__jw_kv_int(w, "significant_regressions", (int64_t)d->n_significant_regressions);
    gp__jw_kv_int(w, "untested_regressions", (int64_t)d->n_untested_regressions);
    gp__jw_kv_int(w, "failing_regressions", (int64_t)d->n_failing_regressions);
    gp__jw_obj_end(w);
    gp__jw_key(w, "metrics");
    gp__jw_arr_begin(w);
    for (int m = 0; m < GP_DIFF_METRIC_COUNT; m++) {
        const gp_diff_metric *mt = &d->metrics[m];
        gp__jw_obj_begin(w);
        gp__jw_kv_str(w, "name", mt->name);
        gp__jw_kv_str(w, "unit", mt->unit);
        gp__jw_kv_bool(w, "present", mt->present);
        jw_kv_sig(w, "base", mt->present ? mt->base : NAN, 12);
        jw_kv_sig(w, "current", mt->present ? mt->cur : NAN, 12);
        jw_kv_sig(w, "delta", mt->present ? mt->delta : NAN, 12);
        jw_kv_sig(w, "delta_pct", mt->delta_pct, 6);
        gp__jw_kv_str(w, "type", gp_diff_type_name(mt->type));
        jw_test(w, "test", &mt->test);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
    gp__jw_key(w, "analysis");
    gp__jw_obj_begin(w);
    gp__jw_kv_bool(w, "analyzed", d->analyzed);
    gp__jw_kv_str(w, "note", d->analyze_note.msg);
    if (d->analyzed) {
        jw_shares(w, "temporal", d->temporal, 3);
        jw_shares(w, "kernel_types", d->types, d->n_types);
        gp__jw_key(w, "findings");
        gp__jw_arr_begin(w);
        for (size_t i = 0; i < d->n_findings; i++) {
            const gp_diff_finding *f = &d->findings[i];
            char title[512];
            gp__finding_title(&f->finding, title, sizeof title);
            gp__jw_obj_begin(w);
            gp__jw_kv_str(w, "rule", f->rule);
            gp__jw_kv_str(w, "change", gp_diff_finding_change_name(f->change));
            gp__jw_kv_str(w, "title", title);
            jw_kv_sig(w, "base_gain_ns", f->base_gain_ns, 12);
            jw_kv_sig(w, "current_gain_ns", f->cur_gain_ns, 12);
            gp__jw_kv_str(w, "suggestion", gp__finding_advice(&f->finding));
            gp__jw_obj_end(w);
        }
        gp__jw_arr_end(w);
    }
    gp__jw_obj_end(w);
    gp__jw_key(w, "rows");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < d->n_rows; i++) {
        const gp_diff_row *r = &d->rows[i];
        gp__jw_obj_begin(w);
        gp__jw_kv_str(w, "name", r->name);
        gp__jw_key(w, "base_name");
        if (r->base_name)
            gp__jw_str(w, r->base_name);
        else
            gp__jw_null(w);
        gp__jw_kv_int(w, "base_names", r->n_base_names);
        gp__jw_kv_int(w, "current_names", r->n_cur_names);
        gp__jw_kv_str(w, "kind", gp_event_kind_name(r->kind));
        gp__jw_kv_str(w, "type", gp_diff_type_name(r->type));
        jw_kv_sig(w, "delta_ns", r->delta_ns, 12);
        jw_kv_sig(w, "delta_pct", r->delta_pct, 6);
        jw_kv_sig(w, "calls_pct", r->calls_pct, 6);
        gp__jw_kv_str(w, "calls_direction", gp_diff_dir_name(r->calls_dir, true));
        gp__jw_kv_str(w, "per_call_direction", gp_diff_dir_name(r->per_call_dir, false));
        jw_side(w, "base", &r->base);
        jw_side(w, "current", &r->cur);
        jw_test(w, "test", &r->test);
        jw_test(w, "per_call", &r->per_call);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
    gp__diff_compile_json(w, d);
    gp__jw_obj_end(w);
}

gp_status gp_diff_render_json(const gp_diff *d, const gp_diff_render_opts *o_in, FILE *fp)
{
    gp_diff_render_opts def;
    const gp_diff_render_opts *o = gp__diff_opts_or_default(o_in, &def);
    gp__jw w;
    gp__jw_init(&w, fp);
    w.pretty = true;
    gp__diff_write_json(&w, d, o);
    gp_status st = gp__jw_finish(&w);
    if (st == GP_OK && fputc('\n', fp) == EOF)
        st = GP_EIO;
    return st;
}

/* ---- JUnit XML ---------------------------------------------------------------------------- */

/* A regression that fails --fail-on-regression (and so the JUnit case). */
static bool failing(const gp_diff *d, gp_diff_type type, const gp_diff_test *t)
{
    return type == GP_DIFF_REGRESSION &&
           (t->method != GP_DIFF_TEST_NONE || !d->opts.require_significance);
}

static void junit_case(FILE *fp, const gp_diff *d, const char *cls, const char *name,
                       gp_diff_type type, const gp_diff_test *t, double delta_pct, double base,
                       double cur, const char *unit, const char *extra)
{
    fputs("    <testcase classname=\"", fp);
    gp__html_str(fp, cls);
    fputs("\" name=\"", fp);
    gp__html_str(fp, name);
    fputs("\"", fp);
    if (!failing(d, type, t)) {
        fputs("/>\n", fp);
        return;
    }
    char msg[256], basis[64], ci[48], dp[24];
    gp__diff_fmt_basis(basis, sizeof basis, t);
    fmt_ci(ci, sizeof ci, t);
    gp__diff_fmt_pct(dp, sizeof dp, delta_pct);
    snprintf(msg, sizeof msg, "REGRESSION: %s%s, threshold %.1f%%, %s%s%s", dp,
             strcmp(unit, "bytes") == 0 ? "" : " total per run", 100.0 * d->opts.threshold, basis,
             isnan(t->ci_lo) ? "" : ", CI of the median change ", isnan(t->ci_lo) ? "" : ci);
    fputs(">\n      <failure type=\"REGRESSION\" message=\"", fp);
    gp__html_str(fp, msg);
    fputs("\">", fp);
    char body[512];
    if (strcmp(unit, "bytes") == 0)
        snprintf(body, sizeof body, "base %.0f bytes, current %.0f bytes (%s)", base, cur, dp);
    else
        snprintf(body, sizeof body, "base %.3f ms, current %.3f ms per run (%s)%s", base / 1e6,
                 cur / 1e6, dp, extra ? extra : "");
    gp__html_str(fp, body);
    fputs("</failure>\n    </testcase>\n", fp);
}

size_t gp__diff_junit_cases(const gp_diff *d)
{
    size_t cases = 0;
    for (size_t i = 0; i < d->n_rows; i++)
        cases += d->rows[i].type != GP_DIFF_NEW && d->rows[i].type != GP_DIFF_REMOVED;
    for (int m = 0; m < GP_DIFF_METRIC_COUNT; m++)
        cases += d->metrics[m].present;
    return cases;
}

void gp__diff_junit_suite(const gp_diff *d, const char *name, FILE *fp)
{
    size_t cases = gp__diff_junit_cases(d);
    fputs("  <testsuite name=\"", fp);
    gp__html_str(fp, name);
    fprintf(fp, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\">\n", cases,
            d->n_failing_regressions);
    for (int m = 0; m < GP_DIFF_METRIC_COUNT; m++) {
        const gp_diff_metric *mt = &d->metrics[m];
        if (mt->present)
            junit_case(fp, d, "gpuprof.diff.overall", mt->name, mt->type, &mt->test, mt->delta_pct,
                       mt->base, mt->cur, mt->unit, NULL);
    }
    for (size_t i = 0; i < d->n_rows; i++) {
        const gp_diff_row *r = &d->rows[i];
        if (r->type == GP_DIFF_NEW || r->type == GP_DIFF_REMOVED)
            continue;
        char cls[64], extra[160], cp[24], pc[24], shift[64];
        snprintf(cls, sizeof cls, "gpuprof.diff.%s", gp_event_kind_name(r->kind));
        gp__diff_fmt_pct(cp, sizeof cp, r->calls_pct);
        gp__diff_fmt_pct(pc, sizeof pc, gp__diff_ratio_pct(r->per_call.ratio));
        gp__diff_fmt_shift(shift, sizeof shift, r);
        snprintf(extra, sizeof extra, "; calls %.0f -> %.0f per run (%s); per call %s (%s)",
                 r->base.calls, r->cur.calls, cp, pc, shift);
        junit_case(fp, d, cls, r->name, r->type, &r->test, r->delta_pct, r->base.total,
                   r->cur.total, "ns", extra);
    }
    fputs("  </testsuite>\n", fp);
}

gp_status gp_diff_render_junit(const gp_diff *d, const gp_diff_render_opts *o, FILE *fp)
{
    (void)o;
    size_t cases = gp__diff_junit_cases(d);
    fprintf(fp,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<testsuites name=\"gpuprof diff\" tests=\"%zu\" failures=\"%zu\">\n",
            cases, d->n_failing_regressions);
    gp__diff_junit_suite(d, "gpuprof.diff", fp);
    fputs("</testsuites>\n", fp);
    return ferror(fp) ? GP_EIO : GP_OK;
}
