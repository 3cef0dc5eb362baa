/* Renderers of a gp_diff: text tables, JSON, a self-contained HTML page and JUnit XML. They format
 * the struct; every number shown was computed by gp_diff_compute. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

static const gp_diff_render_opts *opts_or_default(const gp_diff_render_opts *o,
                                                  gp_diff_render_opts *def)
{
    if (o)
        return o;
    gp_diff_render_opts_init(def);
    return def;
}

static const char *correction_name(gp_diff_correction c)
{
    return c == GP_DIFF_HOLM ? "holm" : c == GP_DIFF_BH ? "benjamini-hochberg" : "none";
}

/* ---- text --------------------------------------------------------------------------------- */

static void fmt_value(char *buf, size_t cap, double v, const char *unit)
{
    if (isnan(v)) {
        snprintf(buf, cap, "n/a");
    } else if (strcmp(unit, "bytes") == 0) {
        snprintf(buf, cap, "%.1f MiB", v / GP_MIB);
    } else {
        snprintf(buf, cap, "%.3f ms", v / 1e6);
    }
}

static void fmt_pct(char *buf, size_t cap, double pct)
{
    if (isnan(pct))
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

/* Why a row with a visible change has no verdict. */
static const char *why_no_verdict(const gp_diff *d, const gp_diff_row *r)
{
    if (r->test.method == GP_DIFF_TEST_NONE)
        return "too few samples to test";
    if (!r->test.significant)
        return "not significant";
    double thr = d->opts.threshold;
    if (!isnan(r->test.ratio) && fabs(r->test.ratio - 1.0) < thr)
        return "median change below threshold";
    return "median and rank test disagree";
}

static void row_header(FILE *fp, int w)
{
    fprintf(fp, "%-*s %-15s %11s %11s %11s %12s %8s %9s %20s %8s %11s\n", w, "Name", "Kind",
            "Calls b/c", "Base ms", "Cur ms", "Delta ms", "Delta%", "Median%", "CI of median%",
            "p(adj)", "n b/c");
}

static void row_line(FILE *fp, const gp_diff_row *r, int w)
{
    char name[512], calls[32], ci[48], p[24], n[32], med[24], dp[24];
    gp_shorten_name(r->name, (size_t)w, name, sizeof name);
    snprintf(calls, sizeof calls, "%.0f/%.0f", r->base.calls, r->cur.calls);
    fmt_ci(ci, sizeof ci, &r->test);
    fmt_p(p, sizeof p, r->test.p_adjusted);
    snprintf(n, sizeof n, "%llu/%llu", (unsigned long long)r->test.n_base,
             (unsigned long long)r->test.n_cur);
    fmt_pct(med, sizeof med, isnan(r->test.ratio) ? NAN : 100.0 * (r->test.ratio - 1.0));
    fmt_pct(dp, sizeof dp, r->delta_pct);
    fprintf(fp, "%-*s %-15s %11s %11.3f %11.3f %+12.3f %8s %9s %20s %8s %11s\n", w, name,
            gp_event_kind_name(r->kind), calls, r->base.total / 1e6, r->cur.total / 1e6,
            r->delta_ns / 1e6, dp, med, ci, p, n);
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
    share_table(fp, "TEMPORAL BREAKDOWN (gpuprof analyze; per run, share of GPU kernel time)",
                d->temporal, 3);
    share_table(fp, "KERNEL-TYPE BREAKDOWN (gpuprof analyze; per run, share of GPU busy time)",
                d->types, d->n_types);
    fprintf(fp, "\nFINDINGS (gpuprof analyze rules: NEW, RESOLVED or PERSISTS; gain = estimated "
                "recoverable time per run)\n");
    size_t shown = 0;
    for (size_t i = 0; i < d->n_findings; i++) {
        const gp_diff_finding *f = &d->findings[i];
        fprintf(fp, "%-9s %-22s gain %9.3f -> %9.3f ms  %s\n",
                gp_diff_finding_change_name(f->change), f->rule, f->base_gain_ns / 1e6,
                f->cur_gain_ns / 1e6, f->title);
        if (f->change == GP_DIFF_FINDING_NEW && f->suggestion)
            fprintf(fp, "          suggestion: %s\n", f->suggestion);
        shown++;
    }
    if (!shown)
        fprintf(fp, "none on either side\n");
}

gp_status gp_diff_render_text(const gp_diff *d, const gp_diff_render_opts *o_in, FILE *fp)
{
    gp_diff_render_opts def;
    const gp_diff_render_opts *o = opts_or_default(o_in, &def);
    int w = o->name_width > 8 ? o->name_width : 48;
    size_t top = o->top_n ? o->top_n : (size_t)-1;
    size_t *idx = d->n_rows ? malloc(d->n_rows * sizeof *idx) : NULL;
    if (d->n_rows && !idx)
        return GP_ENOMEM;
    bool per_run = d->n_base_runs >= 2 && d->n_cur_runs >= 2;
    fprintf(fp, "GPUPROF DIFF: %s (%zu run%s) -> %s (%zu run%s)\n",
            o->base_label ? o->base_label : "base", d->n_base_runs, d->n_base_runs == 1 ? "" : "s",
            o->cur_label ? o->cur_label : "current", d->n_cur_runs, d->n_cur_runs == 1 ? "" : "s");
    fprintf(fp,
            "Verdicts: %s samples, Mann-Whitney U (two-sided), %s-adjusted over %zu tested names, "
            "alpha %.3g, threshold %.1f%%, %u bootstrap resamples (seed %llu)\n\n",
            per_run ? "per-run total" : "per-call duration", correction_name(d->opts.correction),
            d->n_tested, d->opts.alpha, 100.0 * d->opts.threshold, d->opts.bootstrap,
            (unsigned long long)d->opts.seed);

    fprintf(fp, "SUMMARY\n");
    fprintf(fp, "%-12s %14s %14s %14s %9s  %s\n", "Metric", "Base", "Current", "Change", "Change%",
            "Verdict");
    for (int m = 0; m < GP_DIFF_METRIC_COUNT; m++) {
        const gp_diff_metric *mt = &d->metrics[m];
        if (!mt->present) {
            fprintf(fp, "%-12s %14s %14s %14s %9s  %s\n", mt->name, "n/a", "n/a", "n/a", "n/a",
                    "not present in both");
            continue;
        }
        char b[32], c[32], dl[32], pc[24], verdict[128];
        fmt_value(b, sizeof b, mt->base, mt->unit);
        fmt_value(c, sizeof c, mt->cur, mt->unit);
        fmt_value(dl, sizeof dl, mt->delta, mt->unit);
        fmt_pct(pc, sizeof pc, mt->delta_pct);
        if (mt->test.method == GP_DIFF_TEST_NONE && !per_run)
            snprintf(verdict, sizeof verdict, "%s (untested: one run on a side)",
                     gp_diff_type_name(mt->type));
        else if (mt->test.method == GP_DIFF_TEST_NONE)
            snprintf(verdict, sizeof verdict, "%s (too few runs to test)",
                     gp_diff_type_name(mt->type));
        else {
            char p[24];
            fmt_p(p, sizeof p, mt->test.p_adjusted);
            snprintf(verdict, sizeof verdict, "%s (p(adj) %s, n %llu/%llu)",
                     gp_diff_type_name(mt->type), p, (unsigned long long)mt->test.n_base,
                     (unsigned long long)mt->test.n_cur);
        }
        fprintf(fp, "%-12s %14s %14s %14s %9s  %s\n", mt->name, b, c, dl, pc, verdict);
    }
    if (isnan(d->speedup))
        fprintf(fp, "Speedup: n/a\n");
    else
        fprintf(fp, "Speedup: %.3fx (base total / current total)\n", d->speedup);
    fprintf(fp,
            "Names: %zu compared, %zu tested; REGRESSION %zu, IMPROVEMENT %zu, NO_CHANGE %zu, "
            "NEW %zu, REMOVED %zu\n",
            d->n_rows, d->n_tested, d->n_by_type[GP_DIFF_REGRESSION],
            d->n_by_type[GP_DIFF_IMPROVEMENT], d->n_by_type[GP_DIFF_NO_CHANGE],
            d->n_by_type[GP_DIFF_NEW], d->n_by_type[GP_DIFF_REMOVED]);
    fprintf(fp, "Significant regressions: %zu\n", d->n_significant_regressions);

    static const struct {
        gp_diff_type type;
        bool reverse;
        const char *title;
    } sections[] = {
        {GP_DIFF_REGRESSION, false, "TOP REGRESSIONS"},
        {GP_DIFF_IMPROVEMENT, true, "TOP IMPROVEMENTS"},
        {GP_DIFF_NEW, false, "NEW (only in current)"},
        {GP_DIFF_REMOVED, true, "REMOVED (only in base)"},
    };
    for (size_t s = 0; s < GP_ARRAY_LEN(sections); s++) {
        size_t k = pick_rows(d, sections[s].type, sections[s].reverse, idx);
        fprintf(fp, "\n%s (%zu)\n", sections[s].title, k);
        if (!k)
            continue;
        row_header(fp, w);
        for (size_t i = 0; i < k && i < top; i++)
            row_line(fp, &d->rows[idx[i]], w);
        if (k > top)
            fprintf(fp, "... %zu more\n", k - top);
    }
    /* The largest moves that did not earn a verdict, so nobody mistakes silence for absence. */
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
    if (shown) {
        fprintf(fp, "%-*s %-15s %12s %8s %9s %8s  %s\n", w, "Name", "Kind", "Delta ms", "Delta%",
                "Median%", "p(adj)", "Why");
        for (size_t i = 0; i < shown; i++) {
            const gp_diff_row *r = &d->rows[idx[i]];
            char name[512], dp[24], med[24], p[24];
            gp_shorten_name(r->name, (size_t)w, name, sizeof name);
            fmt_pct(dp, sizeof dp, r->delta_pct);
            fmt_pct(med, sizeof med, isnan(r->test.ratio) ? NAN : 100.0 * (r->test.ratio - 1.0));
            fmt_p(p, sizeof p, r->test.p_adjusted);
            fprintf(fp, "%-*s %-15s %+12.3f %8s %9s %8s  %s\n", w, name,
                    gp_event_kind_name(r->kind), r->delta_ns / 1e6, dp, med, p,
                    why_no_verdict(d, r));
        }
    }
    render_analysis_text(d, fp);
    fprintf(fp, "\nNotes: totals are per run; Median%% is the change of the per-call median "
                "(per-run: of the median run total) that the verdict uses; CI is its bootstrap "
                "interval.\n");
    free(idx);
    return ferror(fp) ? GP_EIO : GP_OK;
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

static void jw_test(gp__jw *w, const gp_diff_test *t)
{
    gp__jw_key(w, "test");
    gp__jw_obj_begin(w);
    gp__jw_kv_str(w, "method", gp_diff_method_name(t->method));
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

static void write_json(gp__jw *w, const gp_diff *d, const gp_diff_render_opts *o)
{
    gp__jw_obj_begin(w);
    gp__jw_kv_str(w, "schema", "gpuprof.diff/1");
    gp__jw_kv_str(w, "base", o->base_label ? o->base_label : "base");
    gp__jw_kv_str(w, "current", o->cur_label ? o->cur_label : "current");
    gp__jw_kv_int(w, "base_runs", (int64_t)d->n_base_runs);
    gp__jw_kv_int(w, "current_runs", (int64_t)d->n_cur_runs);
    gp__jw_key(w, "options");
    gp__jw_obj_begin(w);
    jw_kv_sig(w, "threshold", d->opts.threshold, 6);
    jw_kv_sig(w, "alpha", d->opts.alpha, 6);
    gp__jw_kv_str(w, "correction", correction_name(d->opts.correction));
    gp__jw_kv_bool(w, "normalize_templates", (d->opts.normalize & GP_DIFF_NORM_TEMPLATES) != 0);
    gp__jw_kv_bool(w, "normalize_numbers", (d->opts.normalize & GP_DIFF_NORM_NUMBERS) != 0);
    gp__jw_kv_int(w, "bootstrap", d->opts.bootstrap);
    gp__jw_key(w, "seed");
    gp__jw_uint(w, d->opts.seed);
    gp__jw_obj_end(w);
    gp__jw_key(w, "summary");
    gp__jw_obj_begin(w);
    jw_kv_sig(w, "speedup", d->speedup, 6);
    gp__jw_kv_int(w, "names", (int64_t)d->n_rows);
    gp__jw_kv_int(w, "tested", (int64_t)d->n_tested);
    for (int t = 0; t < GP_DIFF_TYPE_COUNT; t++) {
        char key[32];
        snprintf(key, sizeof key, "%s", gp_diff_type_name((gp_diff_type)t));
        for (char *c = key; *c; c++)
            if (*c >= 'A' && *c <= 'Z')
                *c = (char)(*c - 'A' + 'a');
        gp__jw_kv_int(w, key, (int64_t)d->n_by_type[t]);
    }
    gp__jw_kv_int(w, "significant_regressions", (int64_t)d->n_significant_regressions);
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
        jw_test(w, &mt->test);
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
            gp__jw_obj_begin(w);
            gp__jw_kv_str(w, "rule", f->rule);
            gp__jw_kv_str(w, "change", gp_diff_finding_change_name(f->change));
            gp__jw_kv_str(w, "title", f->title);
            jw_kv_sig(w, "base_gain_ns", f->base_gain_ns, 12);
            jw_kv_sig(w, "current_gain_ns", f->cur_gain_ns, 12);
            gp__jw_kv_str(w, "suggestion", f->suggestion ? f->suggestion : "");
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
        gp__jw_kv_str(w, "kind", gp_event_kind_name(r->kind));
        gp__jw_kv_str(w, "type", gp_diff_type_name(r->type));
        jw_kv_sig(w, "delta_ns", r->delta_ns, 12);
        jw_kv_sig(w, "delta_pct", r->delta_pct, 6);
        jw_side(w, "base", &r->base);
        jw_side(w, "current", &r->cur);
        jw_test(w, &r->test);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
    gp__jw_obj_end(w);
}

gp_status gp_diff_render_json(const gp_diff *d, const gp_diff_render_opts *o_in, FILE *fp)
{
    gp_diff_render_opts def;
    const gp_diff_render_opts *o = opts_or_default(o_in, &def);
    gp__jw w;
    gp__jw_init(&w, fp);
    w.pretty = true;
    write_json(&w, d, o);
    gp_status st = gp__jw_finish(&w);
    if (st == GP_OK && fputc('\n', fp) == EOF)
        st = GP_EIO;
    return st;
}

/* ---- HTML --------------------------------------------------------------------------------- */

static const char *type_class(gp_diff_type t)
{
    static const char *const c[] = {"same", "better", "worse", "new", "gone"};
    return (unsigned)t < GP_ARRAY_LEN(c) ? c[t] : "same";
}

static void share_table_html(FILE *fp, const char *title, const gp_diff_share *v, size_t n)
{
    fprintf(fp,
            "<h3>%s</h3>\n<table><tr><th class=\"n\"></th><th>Base ms</th><th>Base %%</th>"
            "<th>Current ms</th><th>Current %%</th><th>Change</th></tr>\n",
            title);
    for (size_t i = 0; i < n; i++) {
        fputs("<tr><td class=\"n\">", fp);
        gp__html_str(fp, v[i].label);
        fprintf(fp,
                "</td><td>%.3f</td><td>%.1f</td><td>%.3f</td><td>%.1f</td><td>%+.1f pp</td></tr>\n",
                v[i].base_ns / 1e6, v[i].base_pct, v[i].cur_ns / 1e6, v[i].cur_pct,
                v[i].cur_pct - v[i].base_pct);
    }
    fputs("</table>\n", fp);
}

static void render_analysis_html(const gp_diff *d, FILE *fp)
{
    fputs("<h2>Breakdowns and findings (gpuprof analyze)</h2>\n", fp);
    if (!d->analyzed) {
        fputs("<p>", fp);
        gp__html_str(fp, d->analyze_note.msg);
        fputs("</p>\n", fp);
        return;
    }
    share_table_html(fp, "Temporal breakdown (share of GPU kernel time)", d->temporal, 3);
    share_table_html(fp, "Kernel-type breakdown (share of GPU busy time)", d->types, d->n_types);
    fputs("<h3>Findings (NEW, RESOLVED or PERSISTS)</h3>\n<table><tr><th>Change</th><th "
          "class=\"n\">Rule</th>"
          "<th class=\"n\">Finding</th><th>Gain base ms</th><th>Gain current ms</th></tr>\n",
          fp);
    for (size_t i = 0; i < d->n_findings; i++) {
        const gp_diff_finding *f = &d->findings[i];
        fprintf(fp, "<tr><td class=\"%s\">%s</td><td class=\"n\">",
                f->change == GP_DIFF_FINDING_NEW        ? "worse"
                : f->change == GP_DIFF_FINDING_RESOLVED ? "better"
                                                        : "same",
                gp_diff_finding_change_name(f->change));
        gp__html_str(fp, f->rule);
        fputs("</td><td class=\"n\" title=\"", fp);
        gp__html_str(fp, f->suggestion ? f->suggestion : "");
        fputs("\">", fp);
        gp__html_str(fp, f->title);
        fprintf(fp, "</td><td>%.3f</td><td>%.3f</td></tr>\n", f->base_gain_ns / 1e6,
                f->cur_gain_ns / 1e6);
    }
    fputs("</table>\n", fp);
}

/* The differential flame graph: report's self-contained HTML flame page, embedded as the srcdoc
 * of an iframe (escaped for a double-quoted attribute) so its script and styles stay isolated. */
static gp_status render_flame_html(const gp_diff_render_opts *o, FILE *fp)
{
    if (!o->flame) {
        if (o->flame_note) {
            fputs("<h2>Differential flame graph</h2>\n<p>Not drawn: ", fp);
            gp__html_str(fp, o->flame_note);
            fputs("</p>\n", fp);
        }
        return GP_OK;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem)
        return GP_ENOMEM;
    gp_flame_render_opts fo;
    gp_flame_render_opts_init(&fo);
    fo.title = "gpuprof diff: differential flame graph (red: grew, blue: shrank)";
    gp_status st = gp_flame_render(o->flame, GP_FLAME_HTML, &fo, mem);
    if (fclose(mem) != 0 && st == GP_OK)
        st = GP_EIO;
    if (st == GP_OK) {
        fputs("<h2>Differential flame graph</h2>\n<p>Current run's stacks; red where a stack "
              "grew against the base, blue where it shrank.</p>\n<iframe title=\"differential "
              "flame graph\" style=\"width:100%;height:440px;border:1px solid #ddd\" "
              "sandbox=\"allow-scripts\" srcdoc=\"",
              fp);
        gp__html_str(fp, buf);
        fputs("\"></iframe>\n", fp);
    }
    free(buf);
    return st;
}

gp_status gp_diff_render_html(const gp_diff *d, const gp_diff_render_opts *o_in, FILE *fp)
{
    gp_diff_render_opts def;
    const gp_diff_render_opts *o = opts_or_default(o_in, &def);
    const char *bl = o->base_label ? o->base_label : "base";
    const char *cl = o->cur_label ? o->cur_label : "current";
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<title>gpuprof diff</title>\n<style>\n"
          "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}\n"
          "table{border-collapse:collapse;margin:12px 0}td,th{padding:3px 8px;border-bottom:1px "
          "solid #ddd;text-align:right;white-space:nowrap}\n"
          "td.n,th.n{text-align:left;max-width:520px;overflow:hidden;text-overflow:ellipsis;"
          "white-space:nowrap}\n"
          ".bars{width:260px;text-align:left}.bar{height:7px;margin:1px 0}"
          ".b{background:#8a8f98}.c{background:#3b7dd8}\n"
          ".worse{color:#b3261e;font-weight:600}.better{color:#1b7f3b;font-weight:600}"
          ".new{color:#7a4cc2}.gone{color:#8a6d00}.same{color:#555}\n"
          "</style></head><body>\n<h1>gpuprof diff</h1>\n<p>Base: <b>",
          fp);
    gp__html_str(fp, bl);
    fprintf(fp, "</b> (%zu run%s) &rarr; current: <b>", d->n_base_runs,
            d->n_base_runs == 1 ? "" : "s");
    gp__html_str(fp, cl);
    fprintf(fp,
            "</b> (%zu run%s). Verdicts: Mann-Whitney U on %s, %s-adjusted, alpha %.3g, threshold "
            "%.1f%%.</p>\n",
            d->n_cur_runs, d->n_cur_runs == 1 ? "" : "s",
            (d->n_base_runs >= 2 && d->n_cur_runs >= 2) ? "per-run totals" : "per-call durations",
            correction_name(d->opts.correction), d->opts.alpha, 100.0 * d->opts.threshold);
    fprintf(fp, "<p>Significant regressions: <b class=\"%s\">%zu</b>. Speedup: ",
            d->n_significant_regressions ? "worse" : "better", d->n_significant_regressions);
    if (isnan(d->speedup))
        fputs("n/a", fp);
    else
        fprintf(fp, "%.3fx", d->speedup);
    fputs(".</p>\n<h2>Summary</h2>\n<table><tr><th class=\"n\">Metric</th><th>Base</th>"
          "<th>Current</th><th>Change</th><th>Change %</th><th>Verdict</th></tr>\n",
          fp);
    for (int m = 0; m < GP_DIFF_METRIC_COUNT; m++) {
        const gp_diff_metric *mt = &d->metrics[m];
        char b[32] = "n/a", c[32] = "n/a", dl[32] = "n/a", pc[24] = "n/a";
        if (mt->present) {
            fmt_value(b, sizeof b, mt->base, mt->unit);
            fmt_value(c, sizeof c, mt->cur, mt->unit);
            fmt_value(dl, sizeof dl, mt->delta, mt->unit);
            fmt_pct(pc, sizeof pc, mt->delta_pct);
        }
        fprintf(fp,
                "<tr><td class=\"n\">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>"
                "<td class=\"%s\">%s%s</td></tr>\n",
                mt->name, b, c, dl, pc,
                mt->test.method == GP_DIFF_TEST_NONE ? "same" : type_class(mt->type),
                mt->present ? gp_diff_type_name(mt->type) : "n/a",
                mt->present && mt->test.method == GP_DIFF_TEST_NONE ? " (untested)" : "");
    }
    fputs("</table>\n", fp);
    render_analysis_html(d, fp);
    gp_status fst = render_flame_html(o, fp);
    if (fst != GP_OK)
        return fst;
    fprintf(fp,
            "<h2>Per name</h2>\n<p>Bars: per-run total time, base (grey) above current "
            "(blue), on one scale.</p>\n<table><tr><th class=\"n\">Name</th>"
            "<th>Kind</th><th class=\"bars\">Base / current</th><th>Base ms</th><th>Current ms</th>"
            "<th>Delta %%</th><th>Median %%</th><th>CI of median %%</th><th>p(adj)</th>"
            "<th>n</th><th>Verdict</th></tr>\n");
    double maxv = 0;
    for (size_t i = 0; i < d->n_rows; i++) {
        maxv = GP_MAX(maxv, d->rows[i].base.total);
        maxv = GP_MAX(maxv, d->rows[i].cur.total);
    }
    for (size_t i = 0; i < d->n_rows; i++) {
        const gp_diff_row *r = &d->rows[i];
        char dp[24], med[24], ci[48], p[24];
        fmt_pct(dp, sizeof dp, r->delta_pct);
        fmt_pct(med, sizeof med, isnan(r->test.ratio) ? NAN : 100.0 * (r->test.ratio - 1.0));
        fmt_ci(ci, sizeof ci, &r->test);
        fmt_p(p, sizeof p, r->test.p_adjusted);
        fputs("<tr><td class=\"n\" title=\"", fp);
        gp__html_str(fp, r->name);
        fputs("\">", fp);
        gp__html_str(fp, r->name);
        fprintf(fp,
                "</td><td>%s</td><td class=\"bars\"><div class=\"bar b\" style=\"width:%.1f%%\">"
                "</div><div class=\"bar c\" style=\"width:%.1f%%\"></div></td><td>%.3f</td>"
                "<td>%.3f</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%llu/%llu</td>"
                "<td class=\"%s\">%s</td></tr>\n",
                gp_event_kind_name(r->kind), maxv > 0 ? 100.0 * r->base.total / maxv : 0.0,
                maxv > 0 ? 100.0 * r->cur.total / maxv : 0.0, r->base.total / 1e6,
                r->cur.total / 1e6, dp, med, ci, p, (unsigned long long)r->test.n_base,
                (unsigned long long)r->test.n_cur, type_class(r->type), gp_diff_type_name(r->type));
    }
    fputs("</table>\n<script type=\"application/json\" id=\"gpuprof-diff-data\">", fp);
    gp__jw w;
    gp__jw_init(&w, fp);
    w.html_safe = true;
    write_json(&w, d, o);
    gp_status st = gp__jw_finish(&w);
    fputs("</script>\n</body></html>\n", fp);
    if (st == GP_OK && ferror(fp))
        st = GP_EIO;
    return st;
}

/* ---- JUnit XML ---------------------------------------------------------------------------- */

static void junit_case(FILE *fp, const char *cls, const char *name, gp_diff_type type,
                       const gp_diff_test *t, double delta_pct, double base, double cur,
                       const char *unit)
{
    fputs("    <testcase classname=\"", fp);
    gp__html_str(fp, cls);
    fputs("\" name=\"", fp);
    gp__html_str(fp, name);
    fputs("\"", fp);
    bool failed = type == GP_DIFF_REGRESSION && t->method != GP_DIFF_TEST_NONE;
    if (!failed) {
        fputs("/>\n", fp);
        return;
    }
    char msg[256], ci[48], p[24], dp[24];
    fmt_ci(ci, sizeof ci, t);
    fmt_p(p, sizeof p, t->p_adjusted);
    fmt_pct(dp, sizeof dp, delta_pct);
    snprintf(msg, sizeof msg, "REGRESSION: median %+.1f%%, CI %s, p(adj) %s, n %llu/%llu",
             100.0 * (t->ratio - 1.0), ci, p, (unsigned long long)t->n_base,
             (unsigned long long)t->n_cur);
    fputs(">\n      <failure type=\"REGRESSION\" message=\"", fp);
    gp__html_str(fp, msg);
    fputs("\">", fp);
    char body[256];
    if (strcmp(unit, "bytes") == 0)
        snprintf(body, sizeof body, "base %.0f bytes, current %.0f bytes (%s); test %s", base, cur,
                 dp, gp_diff_method_name(t->method));
    else
        snprintf(body, sizeof body, "base %.3f ms, current %.3f ms per run (%s); test %s",
                 base / 1e6, cur / 1e6, dp, gp_diff_method_name(t->method));
    gp__html_str(fp, body);
    fputs("</failure>\n    </testcase>\n", fp);
}

gp_status gp_diff_render_junit(const gp_diff *d, const gp_diff_render_opts *o, FILE *fp)
{
    (void)o;
    size_t cases = 0;
    for (size_t i = 0; i < d->n_rows; i++)
        cases += d->rows[i].test.method != GP_DIFF_TEST_NONE;
    for (int m = 0; m < GP_DIFF_METRIC_COUNT; m++)
        cases += d->metrics[m].test.method != GP_DIFF_TEST_NONE;
    fprintf(fp,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<testsuites name=\"gpuprof diff\" tests=\"%zu\" failures=\"%zu\">\n"
            "  <testsuite name=\"gpuprof.diff\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
            "skipped=\"0\">\n",
            cases, d->n_significant_regressions, cases, d->n_significant_regressions);
    for (int m = 0; m < GP_DIFF_METRIC_COUNT; m++) {
        const gp_diff_metric *mt = &d->metrics[m];
        if (mt->test.method != GP_DIFF_TEST_NONE)
            junit_case(fp, "gpuprof.diff.overall", mt->name, mt->type, &mt->test, mt->delta_pct,
                       mt->base, mt->cur, mt->unit);
    }
    for (size_t i = 0; i < d->n_rows; i++) {
        const gp_diff_row *r = &d->rows[i];
        if (r->test.method == GP_DIFF_TEST_NONE)
            continue;
        char cls[64];
        snprintf(cls, sizeof cls, "gpuprof.diff.%s", gp_event_kind_name(r->kind));
        junit_case(fp, cls, r->name, r->type, &r->test, r->delta_pct, r->base.total, r->cur.total,
                   "ns");
    }
    fputs("  </testsuite>\n</testsuites>\n", fp);
    return ferror(fp) ? GP_EIO : GP_OK;
}
