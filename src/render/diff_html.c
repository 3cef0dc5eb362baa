/* The HTML comparison page of gpuprof diff: the look of the other pages (the timeline and
 * dashboard styles), cards, the overall table, a sortable and filterable per-name table (the
 * dashboard's table script), analyze's breakdowns and findings, the differential flame graph, and
 * the JSON document embedded. Formats a gp_diff; computes nothing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/diff_render.h"
#include "render/render_internal.h"
#include "core/util.h"
#include "gpuprof/report.h"
#include "gpuprof/summary.h"

static void card_html(FILE *fp, const char *id, const char *label, const char *value)
{
    fprintf(fp, "<div class=\"gp-card\" id=\"%s\"><div class=\"gp-card-v\">", id);
    gp__html_str(fp, value);
    fprintf(fp, "</div><div class=\"gp-card-l\">%s</div></div>\n", label);
}

/* ---- HTML --------------------------------------------------------------------------------- */

static const char *type_class(gp_diff_type t)
{
    static const char *const c[] = {"same", "better", "worse", "new", "gone"};
    return (unsigned)t < GP_ARRAY_LEN(c) ? c[t] : "same";
}

/* The diff page's own rules, on top of the timeline and dashboard styles every page shares. */
static const char diff_css[] =
    ".gp-diff .gp-table td.gp-name{max-width:460px;overflow:hidden;text-overflow:ellipsis;"
    "white-space:nowrap;word-break:normal}\n"
    ".gp-diff .gp-full{display:none}\n.gp-diff .gp-was{display:block;font-size:11px;color:#666;"
    "overflow:hidden;text-overflow:ellipsis}\n"
    ".gp-diff .gp-table{table-layout:auto}.gp-diff .gp-table td{white-space:nowrap}\n"
    ".gp-diff td.gp-barcell{width:130px}.gp-diff .gp-bar{height:6px;margin:1px 0}"
    ".gp-diff .gp-bar-b{background:#9e9e9e}.gp-diff .gp-bar-c{background:#3b6fb6}\n"
    ".gp-v-worse{color:#c62828;font-weight:bold}.gp-v-better{color:#2e7d32;font-weight:bold}"
    ".gp-v-new{color:#6a3fb0}.gp-v-gone{color:#8a6d00}.gp-v-same{color:#555}\n"
    ".gp-diff iframe{width:100%;height:460px;border:1px solid #ddd}\n";

static void num_td(FILE *fp, double sort, const char *text)
{
    fprintf(fp, "<td data-v=\"%.9g\">%s</td>", isnan(sort) ? -1e300 : sort, text);
}

static void share_table_html(FILE *fp, const char *title, const char *sub, const gp_diff_share *v,
                             size_t n)
{
    fprintf(fp,
            "<h3>%s</h3>\n<p class=\"gp-sub\">%s</p>\n<table class=\"gp-table\"><thead><tr><th>"
            "</th><th>Base ms/run</th><th>Base %%</th><th>Current ms/run</th><th>Current %%</th>"
            "<th>Change (percentage points)</th></tr></thead><tbody>\n",
            title, sub);
    for (size_t i = 0; i < n; i++) {
        fputs("<tr><td>", fp);
        gp__html_str(fp, v[i].label);
        fprintf(fp,
                "</td><td data-v>%.3f</td><td data-v>%.1f</td><td data-v>%.3f</td><td data-v>%.1f"
                "</td><td data-v>%+.1f pp</td></tr>\n",
                v[i].base_ns / 1e6, v[i].base_pct, v[i].cur_ns / 1e6, v[i].cur_pct,
                v[i].cur_pct - v[i].base_pct);
    }
    fputs("</tbody></table>\n", fp);
}

static void render_analysis_html(const gp_diff *d, FILE *fp)
{
    fputs("<section><h2>Breakdowns and findings of gpuprof analyze, per side</h2>\n", fp);
    if (!d->analyzed) {
        fputs("<p class=\"gp-na\">", fp);
        gp__html_str(fp, d->analyze_note.msg);
        fputs("</p>\n</section>\n", fp);
        return;
    }
    share_table_html(fp, "Temporal breakdown",
                     "Time per run and share of the GPU span (first to last GPU work).",
                     d->temporal, 3);
    share_table_html(fp, "Kernel-type breakdown",
                     "Time per run and share of GPU busy time, by kernel type and overlap.",
                     d->types, d->n_types);
    fputs("<h3>Findings</h3>\n<p class=\"gp-sub\">NEW: fires on the current runs only; RESOLVED: "
          "base only; PERSISTS: both. Gain: estimated recoverable time per run (ms).</p>\n"
          "<table class=\"gp-table\"><thead><tr><th>Change</th><th>Rule</th><th>Finding "
          "(hover: suggestion)</th><th>Gain base ms</th><th>Gain current ms</th></tr></thead>"
          "<tbody>\n",
          fp);
    for (size_t i = 0; i < d->n_findings; i++) {
        const gp_diff_finding *f = &d->findings[i];
        fprintf(fp, "<tr><td class=\"gp-v-%s\">%s</td><td>",
                f->change == GP_DIFF_FINDING_NEW        ? "worse"
                : f->change == GP_DIFF_FINDING_RESOLVED ? "better"
                                                        : "same",
                gp_diff_finding_change_name(f->change));
        gp__html_str(fp, f->rule);
        fputs("</td><td title=\"", fp);
        char title[512];
        gp__finding_title(&f->finding, title, sizeof title);
        gp__html_str(fp, gp__finding_advice(&f->finding));
        fputs("\">", fp);
        gp__html_str(fp, title);
        fprintf(fp, "</td><td data-v>%.3f</td><td data-v>%.3f</td></tr>\n", f->base_gain_ns / 1e6,
                f->cur_gain_ns / 1e6);
    }
    if (!d->n_findings)
        fputs("<tr><td colspan=\"5\" class=\"gp-na\">No rule fired on either side.</td></tr>\n",
              fp);
    fputs("</tbody></table>\n</section>\n", fp);
}

/* The differential flame graph: report's self-contained HTML flame page, embedded as the srcdoc
 * of an iframe (escaped for a double-quoted attribute) so its script and styles stay isolated. */
static gp_status render_flame_html(const gp_diff_render_opts *o, FILE *fp)
{
    if (!o->flame) {
        if (o->flame_note) {
            fputs("<section><h2>Differential flame graph</h2>\n<p class=\"gp-na\">Not drawn: ", fp);
            gp__html_str(fp, o->flame_note);
            fputs("</p>\n</section>\n", fp);
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
    gp_status st = gp_flame_render(o->flame, GP_FLAME_HTML, &fo, mem, NULL);
    if (fclose(mem) != 0 && st == GP_OK)
        st = GP_EIO;
    if (st == GP_OK) {
        fputs("<section><h2>Differential flame graph: current run's stacks against the base</h2>"
              "\n<p class=\"gp-sub\">Width: the current time of a stack. Red: the stack grew "
              "against the base; blue: it shrank; grey: unchanged; the stronger the colour, the "
              "larger the change.</p>\n<iframe title=\"differential flame graph\" "
              "sandbox=\"allow-scripts\" srcdoc=\"",
              fp);
        gp__html_str(fp, buf);
        fputs("\"></iframe>\n</section>\n", fp);
    }
    free(buf);
    return st;
}

static void cards_html(const gp_diff *d, FILE *fp)
{
    char v[64];
    fputs("<section class=\"gp-cards\">\n", fp);
    if (isnan(d->speedup))
        snprintf(v, sizeof v, "n/a");
    else
        snprintf(v, sizeof v, "%.3fx", d->speedup);
    card_html(fp, "gp-speedup", "speedup (base / current total time)", v);
    snprintf(v, sizeof v, "%zu", d->n_failing_regressions);
    card_html(fp, "gp-failing", "regressions that fail --fail-on-regression", v);
    snprintf(v, sizeof v, "%zu + %zu", d->n_significant_regressions, d->n_untested_regressions);
    card_html(fp, "gp-regressions", "regressions: tested + untested", v);
    snprintf(v, sizeof v, "%zu", d->n_by_type[GP_DIFF_IMPROVEMENT]);
    card_html(fp, "gp-improvements", "improvements", v);
    snprintf(v, sizeof v, "%zu / %zu", d->n_by_type[GP_DIFF_NEW], d->n_by_type[GP_DIFF_REMOVED]);
    card_html(fp, "gp-new-removed", "new / removed names", v);
    fputs("</section>\n", fp);
}

static void summary_html(const gp_diff *d, FILE *fp)
{
    fputs("<section><h2>Overall: median over each side's runs</h2>\n<table class=\"gp-table\">"
          "<thead><tr><th>Metric</th><th>Base</th><th>Current</th><th>Change</th><th>Change %"
          "</th><th>Verdict</th><th>Basis</th></tr></thead><tbody>\n",
          fp);
    for (int m = 0; m < GP_DIFF_METRIC_COUNT; m++) {
        const gp_diff_metric *mt = &d->metrics[m];
        char b[32] = "n/a", c[32] = "n/a", dl[32] = "n/a", pc[24] = "n/a", basis[64] = "";
        if (mt->present) {
            gp__diff_fmt_value(b, sizeof b, mt->base, mt->unit);
            gp__diff_fmt_value(c, sizeof c, mt->cur, mt->unit);
            gp__diff_fmt_value(dl, sizeof dl, mt->delta, mt->unit);
            gp__diff_fmt_pct(pc, sizeof pc, mt->delta_pct);
            gp__diff_fmt_basis(basis, sizeof basis, &mt->test);
        }
        fprintf(fp,
                "<tr><td>%s</td><td data-v>%s</td><td data-v>%s</td><td data-v>%s</td>"
                "<td data-v>%s</td><td class=\"gp-v-%s\">%s</td><td>%s</td></tr>\n",
                mt->name, b, c, dl, pc, mt->present ? type_class(mt->type) : "same",
                mt->present ? gp_diff_type_name(mt->type) : "not present in both", basis);
    }
    fprintf(fp,
            "</tbody></table>\n<p class=\"gp-sub\"><b>gpu_work_sum</b>: kernel + memcpy + "
            "memset durations added up over every stream (overlapping work counts in full, so it "
            "can exceed total_time); <b>idle_time</b>: per device, the GPU span minus GPU "
            "busy, summed over devices. Verdicts are on the total time per run "
            "(calls x time per call), threshold %.1f%%. With fewer than %zu runs per side "
            "(alpha %.3g) nothing can be tested: the threshold alone decides and the verdict "
            "reads <i>untested</i>. Otherwise a Mann-Whitney U test of the per-run totals, "
            "%s-adjusted over the names. Rule: docs/diff.md.</p>\n</section>\n",
            100.0 * d->opts.threshold, d->runs_needed, d->opts.alpha,
            gp__diff_correction_name(d->opts.correction));
}

/* One row of the per-name table (report.js sorts and filters it: column 0 verdict, 1 name). */
static void name_row_html(FILE *fp, const gp_diff_row *r, const char *shortname, double maxv)
{
    char t[64];
    fprintf(fp, "<tr><td class=\"gp-v-%s\">%s</td><td class=\"gp-name\" title=\"",
            type_class(r->type), gp_diff_type_name(r->type));
    gp__html_str(fp, r->base_name ? r->base_name : r->name);
    if (r->base_name) {
        fputs(" -> ", fp);
        gp__html_str(fp, r->name);
    }
    fputs("\">", fp);
    gp__html_str(fp, shortname);
    if (r->base_name) {
        fputs("<span class=\"gp-was\">was: ", fp);
        gp__html_str(fp, r->base_name);
        fputs("</span>", fp);
    } else if (r->n_base_names > 1 || r->n_cur_names > 1) {
        fprintf(fp, "<span class=\"gp-was\">%u base names, %u current names</span>",
                r->n_base_names, r->n_cur_names);
    }
    fputs("<span class=\"gp-full\"> ", fp);
    gp__html_str(fp, r->name);
    fprintf(fp, "</span></td><td>%s</td>", gp_event_kind_name(r->kind));
    fprintf(fp,
            "<td class=\"gp-barcell\" data-v=\"%.6g\"><div class=\"gp-bar gp-bar-b\" "
            "style=\"width:%.1f%%\"></div><div class=\"gp-bar gp-bar-c\" style=\"width:%.1f%%\">"
            "</div></td>",
            r->cur.total, maxv > 0 ? 100.0 * r->base.total / maxv : 0.0,
            maxv > 0 ? 100.0 * r->cur.total / maxv : 0.0);
    snprintf(t, sizeof t, "%.3f", r->base.total / 1e6);
    num_td(fp, r->base.total, t);
    snprintf(t, sizeof t, "%.3f", r->cur.total / 1e6);
    num_td(fp, r->cur.total, t);
    snprintf(t, sizeof t, "%+.3f", r->delta_ns / 1e6);
    num_td(fp, r->delta_ns, t);
    gp__diff_fmt_pct(t, sizeof t, r->delta_pct);
    num_td(fp, r->delta_pct, t);
    gp__diff_fmt_basis(t, sizeof t, &r->test);
    fprintf(fp, "<td>%s</td>", t);
    snprintf(t, sizeof t, "%.0f / %.0f", r->base.calls, r->cur.calls);
    num_td(fp, r->cur.calls, t);
    gp__diff_fmt_pct(t, sizeof t, r->calls_pct);
    num_td(fp, r->calls_pct, t);
    gp__diff_fmt_pct(t, sizeof t, gp__diff_ratio_pct(r->per_call.ratio));
    num_td(fp, gp__diff_ratio_pct(r->per_call.ratio), t);
    gp__diff_fmt_shift(t, sizeof t, r);
    fprintf(fp, "<td>%s</td></tr>\n", t);
}

static gp_status names_html(const gp_diff *d, FILE *fp)
{
    size_t n = d->n_rows;
    const char **names = n ? malloc(n * sizeof *names) : NULL;
    char *shortn = n ? malloc(n * GP__DIFF_SHORT_CAP) : NULL;
    gp_status st = (!n || (names && shortn)) ? GP_OK : GP_ENOMEM;
    for (size_t i = 0; st == GP_OK && i < n; i++)
        names[i] = d->rows[i].name;
    if (st == GP_OK)
        st = gp_shorten_names_unique(names, n, 90, shortn, GP__DIFF_SHORT_CAP);
    if (st == GP_OK) {
        fprintf(fp,
                "<section><h2>Per name: total time per run, base against current</h2>\n"
                "<p class=\"gp-sub\">Times in ms per run (averaged over a side's runs); bars: "
                "base (grey) above current (blue) on one scale. Calls: calls per run. Per call: "
                "change of the per-call median, with its own test. Click a heading to sort; the "
                "filter takes a regular expression over verdict and full name.</p>\n"
                "<div class=\"gp-controls\"><input id=\"gp-filter\" type=\"search\" "
                "placeholder=\"filter (regex): REGRESSION, a kernel name...\"><span "
                "id=\"gp-count\"></span></div>\n<table class=\"gp-table\" id=\"gp-ops\">\n"
                "<thead><tr><th data-t=\"s\">Verdict</th><th data-t=\"s\">Name</th>"
                "<th data-t=\"s\">Kind</th><th>Base / current</th><th>Base ms</th>"
                "<th>Current ms</th><th>Change ms</th><th>Change %%</th><th data-t=\"s\">"
                "Verdict basis</th><th>Calls b / c</th><th>Calls %%</th><th>Per call %%</th>"
                "<th data-t=\"s\">Per-call shift</th></tr></thead><tbody>\n");
        double maxv = 0;
        for (size_t i = 0; i < n; i++)
            maxv = GP_MAX(maxv, GP_MAX(d->rows[i].base.total, d->rows[i].cur.total));
        for (size_t i = 0; i < n; i++)
            name_row_html(fp, &d->rows[i], shortn + i * GP__DIFF_SHORT_CAP, maxv);
        fputs("</tbody></table>\n</section>\n", fp);
    }
    free(names);
    free(shortn);
    return st;
}

gp_status gp_diff_render_html(const gp_diff *d, const gp_diff_render_opts *o_in, FILE *fp)
{
    gp_diff_render_opts def;
    const gp_diff_render_opts *o = gp__diff_opts_or_default(o_in, &def);
    const char *bl = o->base_label ? o->base_label : "base";
    const char *cl = o->cur_label ? o->cur_label : "current";
    fprintf(
        fp,
        "<!DOCTYPE html>\n<html lang=\"en\" data-ready=\"0\">\n<head>\n<meta charset=\"utf-8\">"
        "\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<title>gpuprof diff</title>\n<style>\n%s%s%s</style>\n</head>\n<body class=\"gp-diff\">%s"
        "\n<header>\n<h1>gpuprof diff</h1>\n<p class=\"gp-sub\">Base: <b>",
        gp__asset_timeline_css, gp__asset_report_css, diff_css, o->nav_html ? o->nav_html : "");
    gp__html_str(fp, bl);
    fprintf(fp, "</b> (%zu run%s) &rarr; current: <b>", d->n_base_runs,
            d->n_base_runs == 1 ? "" : "s");
    gp__html_str(fp, cl);
    fprintf(fp, "</b> (%zu run%s) &middot; gpuprof " GP_VERSION_STRING "</p>\n</header>\n<main>\n",
            d->n_cur_runs, d->n_cur_runs == 1 ? "" : "s");
    gp__diff_context_html(d, fp);
    cards_html(d, fp);
    summary_html(d, fp);
    gp_status st = names_html(d, fp);
    if (st != GP_OK)
        return st;
    render_analysis_html(d, fp);
    gp__diff_compile_html(d, fp);
    if ((st = render_flame_html(o, fp)) != GP_OK)
        return st;
    fputs("</main>\n<script type=\"application/json\" id=\"gpuprof-diff-data\">", fp);
    gp__jw w;
    gp__jw_init(&w, fp);
    w.html_safe = true;
    gp__diff_write_json(&w, d, o);
    st = gp__jw_finish(&w);
    fprintf(fp, "</script>\n<script>\n%s</script>\n</body></html>\n", gp__asset_report_js);
    if (st == GP_OK && ferror(fp))
        st = GP_EIO;
    return st;
}
