/* The dashboard's partition charts (gp_dash_chart: one bar per thread, stream or step whose
 * segments add up to its total) and the HTA breakdown tables of the analysis (temporal per rank,
 * idle per stream, kernel types with overlap, communication/computation overlap, queue length).
 * Formats what dashboard.c and the analysis computed. */
#include <math.h>
#include <string.h>

#include "core/util.h"
#include "render/render_internal.h"

static void dur(FILE *fp, gp_ns ns)
{
    char b[32];
    gp__fmt_dur_html(b, sizeof b, ns);
    fputs(b, fp);
}

static double share(double a, double b)
{
    return b > 0 ? 100.0 * a / b : 0.0;
}

/* One bar: an SVG whose rects carry their value (data-v, ns) and whose data-wall is the total
 * they add up to (checked by the browser tests). */
static void part_svg(FILE *fp, const char *id, const gp_ns *seg, const char *const *names,
                     const char *const *fills, size_t n, gp_ns total)
{
    fprintf(fp,
            "<svg class=\"gp-part\" id=\"%s\" data-wall=\"%lld\" viewBox=\"0 0 1000 18\" "
            "preserveAspectRatio=\"none\" role=\"img\">",
            id, (long long)total);
    double x = 0;
    for (size_t k = 0; k < n; k++) {
        if (!names[k] || seg[k] <= 0)
            continue;
        double w = total > 0 ? 1000.0 * (double)seg[k] / (double)total : 0;
        fprintf(
            fp,
            "<rect x=\"%.2f\" y=\"0\" width=\"%.2f\" height=\"18\" fill=\"%s\" data-v=\"%lld\">", x,
            w, fills[k], (long long)seg[k]);
        fprintf(fp, "<title>%s: ", names[k]);
        dur(fp, seg[k]);
        fprintf(fp, " (%.1f%%)</title></rect>", share((double)seg[k], (double)total));
        x += w;
    }
    fputs("</svg>", fp);
}

static void legend(FILE *fp, const char *const *names, const char *const *fills, size_t n,
                   const gp_ns *sums, gp_ns total)
{
    fputs("<ul class=\"gp-legend\">\n", fp);
    for (size_t k = 0; k < n; k++) {
        if (!names[k] || (sums && sums[k] <= 0))
            continue;
        fprintf(fp, "<li><span class=\"gp-swatch\" style=\"background:%s\"></span>%s", fills[k],
                names[k]);
        if (sums) {
            fputs(" <b>", fp);
            dur(fp, sums[k]);
            fprintf(fp, "</b> (%.1f%%)", share((double)sums[k], (double)total));
        }
        fputs("</li>\n", fp);
    }
    fputs("</ul>\n", fp);
}

void gp__dash_chart_html(FILE *fp, const char *id, const gp_dash_chart *c, const char *const *fills,
                         const char *total_head)
{
    gp_ns sums[GP_DASH_SEGS] = {0}, all = 0;
    for (size_t i = 0; i < c->n_parts; i++) {
        for (int k = 0; k < GP_DASH_SEGS; k++)
            sums[k] = gp__sat_add(sums[k], c->parts[i].seg[k]);
        all = gp__sat_add(all, c->parts[i].total);
    }
    legend(fp, c->seg_names, fills, GP_DASH_SEGS, sums, all);
    fprintf(fp,
            "<table class=\"gp-parts\" id=\"%s\">\n<thead><tr><th></th><th></th><th>%s</th>"
            "</tr></thead>\n<tbody>\n",
            id, total_head);
    for (size_t i = 0; i < c->n_parts; i++) {
        const gp_dash_part *p = &c->parts[i];
        char bid[64];
        snprintf(bid, sizeof bid, "%s-%zu", id, i);
        fputs("<tr><td class=\"gp-plabel\" title=\"", fp);
        gp__html_str(fp, p->label);
        fputs("\">", fp);
        gp__html_str(fp, p->label);
        fputs("</td><td class=\"gp-pbar\">", fp);
        part_svg(fp, bid, p->seg, c->seg_names, fills, GP_DASH_SEGS, p->total);
        fputs("</td><td class=\"gp-ptotal\">", fp);
        dur(fp, p->total);
        fputs("</td></tr>\n", fp);
    }
    fputs("</tbody></table>\n", fp);
    if (c->n_more)
        fprintf(fp, "<p class=\"gp-note\">%zu more not shown (the busiest are).</p>\n", c->n_more);
}

/* The first cell of a per-stream row: "rank R GPU D stream S" (the rank in a job only). */
static void stream_cell(FILE *fp, const gp_analysis *a, int32_t rank, int32_t device,
                        int64_t stream)
{
    fputs("<tr><td>", fp);
    if (a->n_ranks > 1)
        fprintf(fp, "rank %d ", (int)rank);
    if (device >= 0)
        fprintf(fp, "GPU %d ", (int)device);
    fprintf(fp, "stream %lld</td>", (long long)stream);
}

/* ---- HTA breakdowns ------------------------------------------------------------------------ */

static const char *const temporal_names[3] = {"compute", "non-compute", "idle"};
static const char *const temporal_fills[3] = {"#4caf50", "#4a90d9", "#e4e4e4"};
static const char *const idle_names[GP_IDLE_COUNT] = {"host wait", "kernel wait", "other"};
static const char *const idle_fills[GP_IDLE_COUNT] = {"#e8833a", "#9467bd", "#bdbdbd"};

static void temporal_table(FILE *fp, const gp_analysis *a)
{
    fputs("<h3>Temporal breakdown per rank: % of the GPU span</h3>\n<p class=\"gp-note\">GPU "
          "span: first to last GPU work of the rank (HTA's <i>kernel_time</i>); idle: the span "
          "minus GPU busy.</p>\n",
          fp);
    legend(fp, temporal_names, temporal_fills, 3, NULL, 0);
    fputs("<table class=\"gp-parts gp-hta\" id=\"gp-temporal\">\n<thead><tr><th>rank</th>"
          "<th></th><th>GPU span</th><th>compute</th><th>non-compute</th><th>idle</th></tr>"
          "</thead>\n<tbody>\n",
          fp);
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_temporal *t = &a->ranks[i].temporal;
        if (!t->valid)
            continue;
        gp_ns seg[3] = {t->compute, t->non_compute, t->idle};
        char id[48];
        snprintf(id, sizeof id, "gp-temporal-%zu", i);
        fprintf(fp, "<tr><td>%d</td><td class=\"gp-pbar\">", (int)a->ranks[i].rank);
        part_svg(fp, id, seg, temporal_names, temporal_fills, 3, t->kernel_time);
        fputs("</td><td>", fp);
        dur(fp, t->kernel_time);
        for (int k = 0; k < 3; k++) {
            fputs("</td><td>", fp);
            dur(fp, seg[k]);
            fprintf(fp, " (%.1f%%)", share((double)seg[k], (double)t->kernel_time));
        }
        fputs("</td></tr>\n", fp);
    }
    fputs("</tbody></table>\n", fp);
}

static void idle_table(FILE *fp, const gp_analysis *a)
{
    fputs("<h3>Idle time per stream: % of the stream's idle time</h3>\n<p class=\"gp-note\">Each "
          "gap between GPU work on a "
          "stream: <b>host wait</b> when the next work was launched after the gap began (the "
          "GPU waited for the CPU), <b>kernel wait</b> for a short gap between queued work "
          "(below the analysis' threshold), <b>other</b> the rest. Bars are shares of the "
          "stream's idle time.</p>\n",
          fp);
    legend(fp, idle_names, idle_fills, GP_IDLE_COUNT, NULL, 0);
    fputs("<table class=\"gp-parts gp-hta\" id=\"gp-idle\">\n<thead><tr><th>stream</th><th></th>"
          "<th>idle</th><th>host wait</th><th>kernel wait</th><th>other</th></tr></thead>\n"
          "<tbody>\n",
          fp);
    size_t row = 0;
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        for (size_t j = 0; j < r->n_idle && row < 64; j++, row++) {
            const gp_idle_stream *s = &r->idle[j];
            char id[48];
            snprintf(id, sizeof id, "gp-idle-%zu", row);
            stream_cell(fp, a, r->rank, s->device, s->stream);
            fputs("<td class=\"gp-pbar\">", fp);
            part_svg(fp, id, s->idle, idle_names, idle_fills, GP_IDLE_COUNT, s->total);
            fputs("</td><td>", fp);
            dur(fp, s->total);
            for (int k = 0; k < GP_IDLE_COUNT; k++) {
                fputs("</td><td>", fp);
                dur(fp, s->idle[k]);
                fprintf(fp, " (%.1f%%)", share((double)s->idle[k], (double)s->total));
            }
            fputs("</td></tr>\n", fp);
        }
    }
    fputs("</tbody></table>\n", fp);
}

static void types_table(FILE *fp, const gp_analysis *a)
{
    if (a->n_types == 0)
        return;
    /* the value in a cell of its own: beside the bar it overflowed into the next column */
    fputs("<h3>Kernel types, with their overlap: % of their GPU busy time</h3>\n<table "
          "class=\"gp-parts gp-hta\" id=\"gp-types\">\n"
          "<thead><tr><th>state (all ranks)</th><th></th><th>time</th></tr></thead>\n<tbody>\n",
          fp);
    double top = 0;
    for (size_t i = 0; i < a->n_types; i++)
        top = fmax(top, a->types[i].pct);
    for (size_t i = 0; i < a->n_types; i++) {
        const gp_type_state *t = &a->types[i];
        fputs("<tr><td class=\"gp-plabel\">", fp);
        gp__html_str(fp, t->label);
        fprintf(fp,
                "</td><td class=\"gp-pbar\"><div class=\"gp-bar gp-bar2\" "
                "style=\"width:%.1f%%\"></div></td><td>",
                top > 0 ? 100 * t->pct / top : 0);
        dur(fp, t->time);
        fprintf(fp, " (%.1f%%)</td></tr>\n", t->pct);
    }
    fputs("</tbody></table>\n", fp);
}

static void overlap_queue_tables(FILE *fp, const gp_analysis *a)
{
    fputs("<h3>Communication / computation overlap</h3>\n<table class=\"gp-table gp-small\" "
          "id=\"gp-overlap\">\n<thead><tr><th>rank</th><th>communication</th><th>computation"
          "</th><th>overlap</th><th>share of communication hidden</th></tr></thead>\n<tbody>\n",
          fp);
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_overlap *o = &a->ranks[i].overlap;
        fprintf(fp, "<tr><td>%d</td><td>", (int)a->ranks[i].rank);
        dur(fp, o->comm);
        fputs("</td><td>", fp);
        dur(fp, o->comp);
        fputs("</td><td>", fp);
        dur(fp, o->overlap);
        if (isnan(o->pct))
            fputs("</td><td>n/a (no communication)</td></tr>\n", fp);
        else
            fprintf(fp, "</td><td>%.1f%%</td></tr>\n", o->pct);
    }
    fputs("</tbody></table>\n<h3>Queue length per stream</h3>\n<p class=\"gp-note\">Work "
          "launched and not yet started on the GPU: +1 at each launch, &minus;1 when its work "
          "starts. A queue that stays near 0 means the GPU waits for the CPU.</p>\n"
          "<table class=\"gp-table gp-small\" id=\"gp-queue\">\n<thead><tr><th>stream</th>"
          "<th>launches</th><th>mean length</th><th>max length</th><th>over time (max per "
          "bucket)</th></tr></thead>\n<tbody>\n",
          fp);
    size_t rows = 0;
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        for (size_t j = 0; j < r->n_queues && rows < 64; j++, rows++) {
            const gp_queue_stream *q = &r->queues[j];
            stream_cell(fp, a, r->rank, q->device, q->stream);
            fprintf(fp,
                    "<td>%llu</td><td>%.2f</td><td>%lld</td><td><svg class=\"gp-spark\" "
                    "viewBox=\"0 0 200 20\" preserveAspectRatio=\"none\"><polyline fill=\"none\" "
                    "stroke=\"#4a90d9\" vector-effect=\"non-scaling-stroke\" points=\"",
                    (unsigned long long)q->launches, q->mean_len, (long long)q->max_len);
            for (size_t k = 0; k < q->n_series; k++)
                fprintf(fp, "%s%.1f,%.1f", k ? " " : "",
                        q->n_series > 1 ? 200.0 * (double)k / (double)(q->n_series - 1) : 0.0,
                        q->max_len > 0 ? 19.0 - 18.0 * q->series[k].v / (double)q->max_len : 19.0);
            fputs("\"/></svg></td></tr>\n", fp);
        }
    }
    fputs("</tbody></table>\n", fp);
}

void gp__dash_hta_html(FILE *fp, const gp_analysis *a)
{
    if (!a) {
        fputs("<p class=\"gp-na\">The breakdowns need the analysis, which could not run.</p>\n",
              fp);
        return;
    }
    bool any = false;
    for (size_t i = 0; i < a->n_ranks; i++)
        any = any || a->ranks[i].temporal.valid;
    if (!any) {
        fputs("<p class=\"gp-na\" id=\"gp-hta-na\">No GPU work: no GPU breakdown.</p>\n", fp);
        return;
    }
    fputs("<div class=\"gp-cols\"><div>\n", fp);
    temporal_table(fp, a);
    types_table(fp, a);
    fputs("</div><div>\n", fp);
    idle_table(fp, a);
    fputs("</div></div>\n", fp);
    overlap_queue_tables(fp, a);
}
