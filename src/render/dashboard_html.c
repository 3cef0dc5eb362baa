/* Dashboard renderer: formats a gp_dashboard (figures picked and charts laid out by dashboard.c)
 * as one self-contained, print-friendly HTML page. */
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "render/ops_html.h"
#include "render/compile_render.h"
#include "render/render_internal.h"

/* Fill colors of the event kinds (index: gp_event_kind) and of the four stacked segments. */
static const char *const kind_fill[GP_EV_KIND_COUNT + 1] = {
    "#e8833a", "#d9a13b", "#9bd17a", "#e3c84f", "#a0a0a0", "#bdbdbd",
    "#4caf50", "#4a90d9", "#7fb3e6", "#e06666", "#9467bd", "#c27ba0",
    "#17becf", "#8c564b", "#cccccc", "#999999", "#666666"};
/* Partition charts: CPU threads (by kind, then idle), GPU streams (computation, communication,
 * memory, -, idle), steps (TensorBoard's overview categories). */
static const char *const cpu_fill[GP_DASH_SEGS] = {
    "#e8833a", "#d9a13b", "#9bd17a", "#e3c84f", "#a0a0a0", "#bdbdbd",
    "#4caf50", "#4a90d9", "#7fb3e6", "#e06666", "#9467bd", "#c27ba0",
    "#17becf", "#8c564b", "#cccccc", "#999999", "#eeeeee"};
static const char *const gpu_fill[GP_DASH_SEGS] = {"#4caf50", "#e8833a", "#4a90d9", "#999999",
                                                   "#eeeeee"};
static const char *const step_fill[GP_DASH_SEGS] = {"#4caf50", "#4a90d9", "#7fb3e6", "#e8833a",
                                                    "#a0a0a0", "#9467bd", "#e3c84f", "#e4e4e4"};

static void dur(FILE *fp, gp_ns ns)
{
    char b[32];
    gp__fmt_dur_html(b, sizeof b, ns);
    fputs(b, fp);
}

/* n with thousands separators ("19,789"). */
static void count_text(char *buf, size_t cap, unsigned long long n)
{
    char digits[32];
    int len = snprintf(digits, sizeof digits, "%llu", n);
    size_t o = 0;
    for (int i = 0; i < len && o + 2 < cap; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
}

static void card(FILE *fp, const char *id, const char *label, const char *value)
{
    fprintf(fp, "<div class=\"gp-card\" id=\"%s\"><div class=\"gp-card-v\">", id);
    gp__html_str(fp, value);
    fprintf(fp, "</div><div class=\"gp-card-l\">%s</div></div>\n", label);
}

static void op_bars(FILE *fp, const gp_dashboard *d)
{
    if (d->n_ops == 0) {
        fputs("<p class=\"gp-na\">No operations.</p>\n", fp);
        return;
    }
    fputs("<table class=\"gp-bars\" id=\"gp-op-bars\">\n<thead><tr><th>operation</th><th>mean "
          "time</th><th>calls</th></tr></thead>\n<tbody>\n",
          fp);
    for (size_t i = 0; i < d->n_ops; i++) {
        const gp_dash_bar *b = &d->ops[i];
        /* the full name, wrapped: a shortened one ("Kernel2<...>") hides what tells kernels apart
         */
        fputs("<tr><td class=\"gp-name gp-full\" title=\"", fp);
        gp__html_str(fp, b->label);
        fputs("\">", fp);
        gp__html_str(fp, b->label);
        fprintf(fp,
                "</td><td><div class=\"gp-track\"><div class=\"gp-bar\" "
                "style=\"width:%.1f%%;background:%s\"></div></div><span>",
                100 * b->frac, kind_fill[b->kind]);
        dur(fp, (gp_ns)b->value);
        fprintf(fp,
                "</span></td><td><div class=\"gp-track\"><div class=\"gp-bar gp-bar2\" "
                "style=\"width:%.1f%%\"></div></div><span>%.0f</span></td></tr>\n",
                100 * b->frac2, b->value2);
    }
    fputs("</tbody></table>\n", fp);
}

/* The memory chart: allocated bytes over time with a y axis in bytes, an x axis in time from the
 * start and a marker at the peak (its note names the op running then). */
static void memory_chart(FILE *fp, const gp_dashboard *d)
{
    if (d->n_mem == 0) {
        fputs("<p class=\"gp-na\" id=\"gp-mem-na\">No memory samples in this trace (record with "
              "profile_memory=True, or run the monitor).</p>\n",
              fp);
        return;
    }
    char peak[32], b[32];
    gp__fmt_bytes(peak, sizeof peak, d->peak_memory);
    fputs("<p class=\"gp-sub\">", fp);
    gp__html_str(fp, d->mem_label);
    fprintf(fp, ", peak <b>%s</b>", peak);
    if (d->peak_note[0]) {
        fputs(" (", fp);
        gp__html_str(fp, d->peak_note);
        fputs(")", fp);
    }
    fputs("</p>\n<div class=\"gp-memchart\"><div class=\"gp-yaxis\">", fp);
    for (int i = 4; i >= 0; i--) {
        gp__fmt_bytes(b, sizeof b, d->mem_ytick[i]);
        fprintf(fp, "<span>%s</span>", b);
    }
    fputs("</div><div class=\"gp-memplot\">\n<svg class=\"gp-mem\" id=\"gp-mem\" viewBox=\"0 0 "
          "1000 200\" preserveAspectRatio=\"none\" role=\"img\">\n",
          fp);
    for (int i = 1; i < 4; i++)
        fprintf(fp,
                "<line x1=\"0\" x2=\"1000\" y1=\"%d\" y2=\"%d\" stroke=\"#e4e4e4\" "
                "vector-effect=\"non-scaling-stroke\"/>\n",
                200 - 49 * i, 200 - 49 * i);
    fputs("<path d=\"M0 200", fp);
    double prev_y = 200;
    for (size_t i = 0; i < d->n_mem; i++) {
        double x = d->mem_x[i] * 1000, y = 200 - d->mem_y[i] * 196;
        fprintf(fp, " L%.1f %.1f L%.1f %.1f", x, prev_y, x, y);
        prev_y = y;
    }
    fprintf(fp,
            " L1000 %.1f L1000 200 Z\" fill=\"rgba(148,103,189,0.45)\" stroke=\"#9467bd\" "
            "stroke-width=\"1\" vector-effect=\"non-scaling-stroke\"/>\n"
            "<line id=\"gp-mem-peak\" x1=\"%.1f\" x2=\"%.1f\" y1=\"0\" y2=\"200\" "
            "stroke=\"#c62828\" stroke-dasharray=\"4 3\" vector-effect=\"non-scaling-stroke\">"
            "<title>peak %s</title></line>\n</svg>\n<div class=\"gp-xaxis\">",
            prev_y, d->mem_peak_x * 1000, d->mem_peak_x * 1000, peak);
    for (int i = 0; i < 5; i++) {
        gp__fmt_dur_html(b, sizeof b, d->mem_xtick[i]);
        fprintf(fp, "<span>%s</span>", i ? b : "0");
    }
    fprintf(fp,
            "</div></div></div>\n<p class=\"gp-note\">%s (y) over the time since the "
            "trace's start (x); the dashed line marks the peak.</p>\n",
            d->mem_from_ranges ? "The peak memory of each range (its mem_peak_bytes, at its start)"
                               : "Allocated bytes");
}

/* Evidence keys of the analysis' rules (advise.c) as words around the value ("%s": the value
 * with its unit). */
/* One metric of a finding in the dashboard's words: its phrase (finding_format.c) with the
 * value in bold, or the key's words and the value. */
static void evidence(FILE *fp, const gp_evidence *e)
{
    char v[48];
    gp__metric_value(e, v, sizeof v);
    const char *ph = gp__metric_phrase(e->name), *at = ph ? strstr(ph, "%s") : NULL;
    if (!at) { /* a key without a phrase: its words */
        char w[64];
        snprintf(w, sizeof w, "%s", e->name);
        for (char *p = w; *p; p++)
            if (*p == '_')
                *p = ' ';
        gp__html_str(fp, w);
        fprintf(fp, " <b>%s</b>", v);
        return;
    }
    gp__html_text(fp, ph, (size_t)(at - ph));
    fputs("<b>", fp);
    gp__html_str(fp, v);
    fputs("</b>", fp);
    gp__html_str(fp, at + 2);
}

/* Findings of the analysis: title, evidence, estimated gain and the suggestion. */
static void findings(FILE *fp, const gp_analysis *a)
{
    if (!a) {
        fputs("<p class=\"gp-na\" id=\"gp-suggestions-na\">Suggestions: unavailable (no "
              "analysis was given to the dashboard).</p>\n",
              fp);
        return;
    }
    if (a->n_findings == 0) {
        fputs("<p class=\"gp-na\" id=\"gp-findings-none\">No bottleneck rule fired on this "
              "trace.</p>\n",
              fp);
        return;
    }
    fputs("<ol class=\"gp-findings\" id=\"gp-findings\">\n", fp);
    for (size_t i = 0; i < a->n_findings; i++) {
        const gp_finding *f = &a->findings[i];
        fprintf(fp, "<li class=\"gp-prio-%s\"><span class=\"gp-prio\">%s</span> <b>",
                gp_priority_name(f->priority), gp_priority_name(f->priority));
        char title[512];
        gp__finding_title(f, title, sizeof title);
        gp__html_str(fp, title);
        fputs("</b>", fp);
        gp__finding_ranks_html(fp, f, NULL);
        if (f->gain_ns > 0) {
            fputs(" <span class=\"gp-gain\">up to ", fp);
            dur(fp, f->gain_ns);
            fputs(" to gain</span>", fp);
        }
        fputs("<div class=\"gp-evidence\">", fp);
        for (size_t k = 0; k < f->n_evidence; k++) {
            fputs(k ? "; " : "", fp);
            evidence(fp, &f->evidence[k]);
        }
        for (size_t k = 0; k < f->n_objects; k++) {
            char o[600];
            gp__finding_object_text(&f->objects[k], o, sizeof o);
            fputs(k ? "; " : "<br>", fp);
            gp__html_str(fp, o);
        }
        fprintf(fp, "</div><div class=\"gp-suggestion\"><span class=\"gp-kind\">%s</span> ",
                gp_suggestion_type_name(f->type));
        gp__html_str(fp, gp__finding_advice(f));
        fputs("</div></li>\n", fp);
    }
    fputs("</ol>\n", fp);
}

static void bottlenecks(FILE *fp, const gp_dashboard *d)
{
    const gp_summary *s = d->summary;
    if (s->n_top == 0) {
        fputs("<p class=\"gp-na\">No operations.</p>\n", fp);
        return;
    }
    fputs("<ol class=\"gp-top\" id=\"gp-top\">\n", fp);
    for (size_t i = 0; i < s->n_top; i++) {
        const gp_name_stats *r = &s->top[i];
        fputs("<li><span class=\"gp-name gp-full\" title=\"", fp);
        gp__html_str(fp, r->name);
        fputs("\">", fp);
        gp__html_str(fp, r->name);
        fprintf(fp, "</span> <span class=\"gp-kind\">%s</span> <b>", gp_event_kind_name(r->kind));
        dur(fp, r->total);
        char calls[32];
        count_text(calls, sizeof calls, (unsigned long long)r->calls);
        fprintf(fp, "</b> in %s calls, %.1f%% of %s</li>\n", calls, 100 * r->share,
                gp_event_kind_is_gpu(r->kind) ? "the GPU work sum" : "its kind");
    }
    fputs("</ol>\n", fp);
}

/* A wall-time partition chart, or what is missing (id ID-na). */
static void chart_or(FILE *fp, const char *id, const gp_dash_chart *c, const char *const *fills,
                     const char *none)
{
    if (c->n_parts)
        gp__dash_chart_html(fp, id, c, fills, "wall time");
    else
        fprintf(fp, "<p class=\"gp-na\" id=\"%s-na\">%s</p>\n", id, none);
}

/* Whether the HTA breakdowns have something to show: GPU work on some rank. */
static bool has_gpu_breakdown(const gp_analysis *a)
{
    for (size_t i = 0; a && i < a->n_ranks; i++)
        if (a->ranks[i].temporal.valid)
            return true;
    return false;
}

/* The two GPU figures, each under its name (docs/analyses.md, "Terms"): GPU busy (the union per
 * device) when the analysis has it, and the GPU work sum (the durations added up). ranks: ", N
 * ranks summed" or "". */
static void gpu_cards(FILE *fp, const gp_dashboard *d, const char *ranks)
{
    char v[64], label[96];
    if (d->gpu_busy) {
        gp__fmt_dur_html(v, sizeof v, d->gpu_time);
        snprintf(label, sizeof label, "GPU busy (union per device%s)", ranks);
        card(fp, "gp-gpu-busy", label, v);
    }
    if (d->summary->has_gpu)
        gp__fmt_dur_html(v, sizeof v, d->summary->gpu_time);
    else
        snprintf(v, sizeof v, "n/a (no GPU work)");
    snprintf(label, sizeof label, "GPU work sum (durations added up%s)", ranks);
    card(fp, "gp-gpu-work-sum", label, v);
}

gp_status gp_dashboard_render_html(const gp_dashboard *d, const char *title, FILE *fp)
{
    return gp__dashboard_render_page(d, title, NULL, fp);
}

gp_status gp__dashboard_render_page(const gp_dashboard *d, const char *title, const char *nav_html,
                                    FILE *fp)
{
    if (!title)
        title = "gpuprof report";
    fputs("<!DOCTYPE html>\n<html lang=\"en\" data-ready=\"0\" data-wait=\"1\">\n<head>\n"
          "<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
          fp);
    gp__html_str(fp, title);
    fprintf(fp, "</title>\n<style>\n%s%s</style>\n</head>\n<body>%s\n<header>\n<h1>",
            gp__asset_timeline_css, gp__asset_report_css, nav_html ? nav_html : "");
    gp__html_str(fp, title);
    fprintf(fp,
            "</h1>\n<p class=\"gp-sub\">%zu trace%s &middot; gpuprof " GP_VERSION_STRING
            "</p>\n</header>\n<main>\n<section class=\"gp-cards\">\n",
            d->n_traces, d->n_traces == 1 ? "" : "s (ranks)");
    char v[64], ranks[48] = "";
    if (d->n_traces > 1)
        snprintf(ranks, sizeof ranks, ", %zu ranks summed", d->n_traces);
    gp__fmt_dur_html(v, sizeof v, d->span);
    card(fp, "gp-total-time", d->n_traces > 1 ? "total time (job span)" : "total time", v);
    count_text(v, sizeof v, (unsigned long long)d->operations);
    card(fp, "gp-operations", "operations", v);
    count_text(v, sizeof v, (unsigned long long)d->unique_operations);
    card(fp, "gp-unique", "unique operations", v);
    gpu_cards(fp, d, ranks);
    if (d->peak_memory >= 0)
        gp__fmt_bytes(v, sizeof v, d->peak_memory);
    else
        snprintf(v, sizeof v, "n/a");
    card(fp, "gp-peak-mem", "peak memory", v);
    char wall[32];
    gp__fmt_dur_html(wall, sizeof wall, d->span);
    fputs("</section>\n", fp);
    gp__dash_cause_html(fp, d); /* the cause and the path, above the fold */
    gp__dash_profile_html(fp, d);
    fprintf(fp,
            "<section id=\"gp-where\" data-wall=\"%lld\"><h2>Where the wall time "
            "goes</h2>\n"
            "<p class=\"gp-sub\">Each bar is one thread or stream over the %s wall time "
            "<b>%s</b>: its segments add up to it.</p>\n<div class=\"gp-cols\"><div>\n"
            "<h3>CPU threads: self time by kind, and idle (shares of the wall time)</h3>\n",
            (long long)d->span, d->n_traces > 1 ? "job's" : "trace's", wall);
    chart_or(fp, "gp-cpu-parts", &d->cpu_parts, cpu_fill, "No CPU threads in this trace.");
    fputs("<p class=\"gp-note\">Self time: the time an event is the innermost one on its thread "
          "(its duration minus the events nested in it), so annotations, Python frames and ops "
          "are counted once; idle: no event open.</p>\n</div>",
          fp);
    /* A profile shows only the sections that apply to it: no empty GPU column, steps or GPU
     * breakdown when it has none (a trace shows them with a line that says why they are empty). */
    bool prof = d->is_profile;
    if (!prof || d->gpu_parts.n_parts) {
        fputs("<div>\n<h3>GPU streams: busy by kernel type, and idle (shares of the wall "
              "time)</h3>\n",
              fp);
        chart_or(fp, "gp-gpu-parts", &d->gpu_parts, gpu_fill, "No GPU streams in this trace.");
        fputs("<p class=\"gp-note\">Busy: the union of the stream's kernels, memcpys and "
              "memsets, each instant counted once; computation and communication kernels as the "
              "analysis classifies them, memcpy and memset as memory.</p>\n</div>",
              fp);
    }
    fputs("</div>\n</section>\n", fp);
    if (!prof || d->steps.n_parts)
        fputs("<section id=\"gp-steps-section\"><h2>Steps</h2>\n", fp);
    if (d->steps.n_parts) {
        fputs("<p class=\"gp-sub\">Each ProfilerStep split as TensorBoard's overview does: every "
              "instant of the step counted once, under the first of kernel, memcpy, memset, "
              "communication, runtime, dataloader, CPU exec that is running then; other: none "
              "of them.</p>\n",
              fp);
        gp__dash_chart_html(fp, "gp-steps", &d->steps, step_fill, "step time");
    } else if (!prof) {
        fputs("<p class=\"gp-na\" id=\"gp-steps-na\">No ProfilerStep annotations in this "
              "trace (record with torch.profiler's schedule and prof.step()).</p>\n",
              fp);
    }
    if (!prof || d->steps.n_parts)
        fputs("</section>\n", fp);
    if (!prof || has_gpu_breakdown(d->analysis)) {
        fputs("<section id=\"gp-hta\"><h2>GPU breakdown (Holistic Trace Analysis' "
              "definitions)</h2>\n",
              fp);
        gp__dash_hta_html(fp, d->analysis);
        fputs("</section>\n", fp);
    }
    gp__dash_collectives_html(fp, d->analysis); /* a job's collectives (dashboard_collectives.c) */
    if (gp__render_compile_section(fp, d->compile, d->n_compile) != GP_OK) /* torch.compile */
        return GP_EIO;
    /* gpuprof ops --by shape: the op table and the roofline (a section of its own) */
    if (d->op_table && d->op_table->n_rows > 0 && !d->is_profile &&
        gp__render_ops_html(d->op_table, 50, "gp-opperf", fp) != GP_OK)
        return GP_EIO;
    fputs("<section class=\"gp-half\"><h2>Top operations: mean time and "
          "calls</h2>\n",
          fp);
    op_bars(fp, d);
    fputs("</section>\n<section class=\"gp-half\"><h2>Memory over time</h2>\n", fp);
    memory_chart(fp, d);
    fputs("</section>\n<section><h2>Bottlenecks and suggestions</h2>\n", fp);
    findings(fp, d->analysis);
    fputs("<h3>Top operations by total time</h3>\n", fp);
    bottlenecks(fp, d);
    fputs("</section>\n<section class=\"gp-tl-section\"><h2>Timeline</h2>\n", fp);
    if (d->timeline) {
        char ca[32], ga[32], ov[32];
        gp__fmt_dur_html(ca, sizeof ca, d->timeline->cpu_active);
        gp__fmt_dur_html(ga, sizeof ga, d->timeline->gpu_active);
        gp__fmt_dur_html(ov, sizeof ov, d->timeline->overlap);
        fputs("<p class=\"gp-figs\">", fp);
        /* the activity figures count CPU ops and GPU work, which a profile of ranges may lack */
        if (!prof || d->timeline->cpu_active || d->timeline->gpu_active)
            fprintf(fp,
                    "<span>CPU active <b>%s</b></span> <span>GPU busy <b>%s</b></span> "
                    "<span>overlap <b>%s</b>%s</span> ",
                    ca, ga, ov, ranks);
        fputs("<span class=\"gp-help\">top two nesting levels; drag: pan, wheel: zoom, click: "
              "details</span></p>\n"
              "<div id=\"gp-tl\" class=\"gp-tl gp-tl-compact\" data-src=\"gp-tl-data\"></div>\n"
              "<div id=\"gp-tl-details\" class=\"gp-tl-details\"></div>\n",
              fp);
        gp_status s = gp__timeline_data_script(d->timeline, "gp-tl-data", fp);
        if (s != GP_OK)
            return s;
    } else {
        fputs("<p class=\"gp-na\">Timeline unavailable.</p>\n", fp);
    }
    fputs("</section>\n<section><h2>All operations</h2>\n", fp);
    size_t n = 0;
    gp_status ost = gp__dash_ops_html(fp, d->summary, &n); /* dashboard_ops.c */
    if (ost != GP_OK)
        return ost; /* GP_ENOMEM of its JSON writer, or GP_EIO */
    fprintf(fp,
            "</section>\n</main>\n<footer class=\"gp-sub\">%zu operations in the table</footer>\n"
            "<script>\n%s</script>\n<script>\n%s</script>\n",
            n, gp__asset_timeline_js, gp__asset_report_js);
    if (d->timeline) {
        gp_status s = gp__timeline_args_script(d->timeline, "gp-tl-data", fp);
        if (s != GP_OK)
            return s;
    }
    fputs("</body>\n</html>\n", fp);
    return ferror(fp) ? GP_EIO : GP_OK;
}

typedef struct dash_ctx {
    const gp_dashboard *d;
    const char *title;
} dash_ctx;

static gp_status dash_cb(const void *ctx, FILE *fp)
{
    const dash_ctx *c = ctx;
    return gp_dashboard_render_html(c->d, c->title, fp);
}

gp_status gp_dashboard_write_html(const gp_dashboard *d, const char *title, const char *path,
                                  gp_error *err)
{
    dash_ctx c = {d, title};
    return gp__render_to_file(path, dash_cb, &c, err);
}
