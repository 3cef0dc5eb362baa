/* The page of `gpuprof memory -o memory.html`: per allocator its curve as an inline SVG (allocated
 * as a step line, reserved dashed, the peak marked), its figures and what was live at the peak.
 * Self-contained (the report's stylesheet, no script). Formatting only: coordinates are the
 * curve's points scaled to the drawing. */
#include <stdio.h>

#include "core/units.h"
#include "core/util.h"
#include "render/memory_render.h"
#include "render/render_internal.h"

#define W 1000.0
#define H 240.0
#define PAD_L 70.0
#define PAD_B 22.0

static const char page_css[] =
    ".gp-mempage svg{width:100%;height:auto;background:#fff;border:1px solid #ddd}"
    ".gp-mempage .alloc{fill:none;stroke:#1f77b4;stroke-width:1.5}"
    ".gp-mempage .resv{fill:none;stroke:#ff7f0e;stroke-width:1;stroke-dasharray:4 3}"
    ".gp-mempage .peak{fill:#d62728}.gp-mempage .ax{stroke:#999;stroke-width:1}"
    ".gp-mempage text{font:12px sans-serif;fill:#333}"
    ".gp-mempage table{border-collapse:collapse;margin:.5em 0}"
    ".gp-mempage td,.gp-mempage th{padding:2px 8px;border-bottom:1px solid #eee;text-align:left}"
    ".gp-mempage td.n{text-align:right;font-variant-numeric:tabular-nums}";

static double xy_x(const gp__mem_device *d, gp_ns ts)
{
    gp_ns span = d->last_ts - d->first_ts;
    return PAD_L + (span > 0 ? (W - PAD_L - 10) * (double)(ts - d->first_ts) / (double)span : 0);
}

/* The drawing spans [lo, top]: the lowest level of the curve to the highest, so that a level
 * that moves little above a large base (a model's weights) still shows its shape. */
typedef struct range {
    double lo, top;
} range;

static double xy_y(double v, const range *r)
{
    double span = r->top - r->lo;
    return (H - PAD_B) - (span > 0 ? (H - PAD_B - 10) * (v - r->lo) / span : 0);
}

static range range_of(const gp__mem_device *d)
{
    range r = {.top = (double)GP_MAX(d->peak_allocated, d->peak_reserved)};
    r.lo = GP_MIN(r.top, (double)d->start_allocated);
    for (size_t i = 0; i < d->n_curve; i++) {
        r.lo = GP_MIN(r.lo, (double)d->curve[i].allocated);
        if (d->curve[i].reserved >= 0)
            r.lo = GP_MIN(r.lo, (double)d->curve[i].reserved);
    }
    if (r.lo < 0 || r.lo < r.top * 0.2) /* close to 0: from 0 */
        r.lo = 0;
    return r;
}

/* A step line of the allocated (or reserved) level. */
static void step_line(FILE *fp, const gp__mem_device *d, bool reserved, const range *top)
{
    fprintf(fp, "<polyline class=\"%s\" points=\"", reserved ? "resv" : "alloc");
    double prev_y = xy_y((double)(reserved ? -1 : d->start_allocated), top);
    bool first = true;
    for (size_t i = 0; i < d->n_curve; i++) {
        double v = (double)(reserved ? d->curve[i].reserved : d->curve[i].allocated);
        if (reserved && v < 0)
            continue;
        double x = xy_x(d, d->curve[i].ts), y = xy_y(v, top);
        if (!first || !reserved)
            fprintf(fp, "%.1f,%.1f ", x, prev_y);
        fprintf(fp, "%.1f,%.1f ", x, y);
        prev_y = y;
        first = false;
    }
    fputs("\"/>\n", fp);
}

static void chart(FILE *fp, const gp__mem_device *d, size_t idx)
{
    range rg = range_of(d), *top = &rg;
    char b[32], t[32], lo[32];
    fprintf(fp,
            "<svg id=\"gp-mem-chart-%zu\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
            "data-peak=\"%lld\">\n",
            idx, W, H, (long long)d->peak_allocated);
    fprintf(fp, "<line class=\"ax\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/>", PAD_L,
            H - PAD_B, W - 10, H - PAD_B);
    fprintf(fp, "<line class=\"ax\" x1=\"%.0f\" y1=\"10\" x2=\"%.0f\" y2=\"%.0f\"/>\n", PAD_L,
            PAD_L, H - PAD_B);
    gp__fmt_bytes(b, sizeof b, rg.top);
    gp__fmt_bytes(lo, sizeof lo, rg.lo);
    fprintf(fp, "<text x=\"4\" y=\"16\">%s</text><text x=\"4\" y=\"%.0f\">%s</text>\n", b,
            H - PAD_B, lo);
    gp__fmt_dur(t, sizeof t, d->last_ts - d->first_ts);
    fprintf(fp,
            "<text x=\"%.0f\" y=\"%.0f\">0</text><text x=\"%.0f\" y=\"%.0f\" "
            "text-anchor=\"end\">%s</text>\n",
            PAD_L, H - 6, W - 10, H - 6, t);
    if (d->peak_reserved >= 0)
        step_line(fp, d, true, top);
    step_line(fp, d, false, top);
    double px = xy_x(d, d->peak_ts), py = xy_y((double)d->peak_allocated, top);
    gp__fmt_bytes(b, sizeof b, (double)d->peak_allocated);
    fprintf(fp,
            "<circle class=\"peak\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\"><title>peak %s</title>"
            "</circle><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">peak %s</text>\n",
            px, py, b, px + (px > W / 2 ? -8 : 8), py + 14, px > W / 2 ? "end" : "start", b);
    fputs("</svg>\n", fp);
}

static void row(FILE *fp, const char *what, const char *value)
{
    fputs("<tr><th>", fp);
    gp__html_str(fp, what);
    fputs("</th><td>", fp);
    gp__html_str(fp, value);
    fputs("</td></tr>\n", fp);
}

static void figures(FILE *fp, const gp__mem_device *d)
{
    char b[64], t[32], v[160];
    fputs("<table class=\"gp-mem-figures\">\n", fp);
    gp__fmt_bytes(b, sizeof b, (double)d->peak_allocated);
    gp__fmt_dur(t, sizeof t, d->peak_ts - d->first_ts);
    snprintf(v, sizeof v, "%s, %s after the first event", b, t);
    row(fp, "peak allocated", v);
    row(fp, "running at the peak", d->peak_op[0] ? d->peak_op : "-");
    if (d->peak_py[0])
        row(fp, "Python line at the peak", d->peak_py);
    if (d->peak_reserved >= 0) {
        gp__fmt_bytes(b, sizeof b, (double)d->peak_reserved);
        row(fp, "peak reserved", b);
    }
    gp__fmt_bytes(b, sizeof b, (double)d->bytes_allocated);
    snprintf(v, sizeof v, "%llu (%s), %.1f/s, %.3f GB/s", (unsigned long long)d->allocs, b,
             d->allocs_per_s, d->alloc_bytes_per_s / GP_GB_PER_S);
    row(fp, "allocations", v);
    gp__fmt_bytes(b, sizeof b, (double)d->bytes_freed);
    snprintf(v, sizeof v, "%llu (%s), %.1f/s, %.3f GB/s", (unsigned long long)d->frees, b,
             d->frees_per_s, d->free_bytes_per_s / GP_GB_PER_S);
    row(fp, "frees", v);
    gp__fmt_bytes(b, sizeof b, (double)d->live_untraced);
    if (d->has_addresses)
        row(fp, "live at the peak, allocated before the trace", b);
    fputs("</table>\n", fp);
}

static void live_table(FILE *fp, const gp__mem_device *d)
{
    char b[32];
    fputs("<table class=\"gp-mem-live\"><thead><tr><th>bytes</th><th>blocks</th><th>largest</th>"
          "<th>allocated in op</th><th>Python line</th></tr></thead><tbody>\n",
          fp);
    for (size_t i = 0; i < d->n_live; i++) {
        const gp__mem_live *g = &d->live[i];
        gp__fmt_bytes(b, sizeof b, (double)g->bytes);
        fprintf(fp, "<tr data-bytes=\"%lld\"><td class=\"n\">%s</td><td class=\"n\">%llu</td>",
                (long long)g->bytes, b, (unsigned long long)g->blocks);
        gp__fmt_bytes(b, sizeof b, (double)g->largest);
        fprintf(fp, "<td class=\"n\">%s</td><td>", b);
        gp__html_str(fp, g->op[0] ? g->op : "-");
        fputs("</td><td>", fp);
        gp__html_str(fp, g->py[0] ? g->py : "-");
        fputs("</td></tr>\n", fp);
    }
    fputs("</tbody></table>\n", fp);
}

gp_status gp__mem_render_html(const gp__mem_timeline *m, const char *title, FILE *fp)
{
    if (!title)
        title = "gpuprof memory";
    gp__html_page_open(fp, title, page_css);
    fprintf(fp,
            "</h1>\n<p class=\"gp-sub\">memory timeline, %zu allocator%s &middot; "
            "gpuprof " GP_VERSION_STRING "</p>\n</header>\n<main class=\"gp-mempage\">\n",
            m->n_devices, m->n_devices == 1 ? "" : "s");
    if (!m->n_devices)
        fputs("<p class=\"gp-na\">No \"[memory]\" events in the input: record with "
              "profile_memory=True (gpuprof profile --memory).</p>\n",
              fp);
    for (size_t i = 0; i < m->n_devices; i++) {
        const gp__mem_device *d = &m->devices[i];
        char lab[48];
        fprintf(fp, "<section class=\"gp-section\" id=\"gp-mem-%zu\">\n<h2>rank %d, %s</h2>\n", i,
                (int)d->rank, gp__mem_device_label(d, lab, sizeof lab));
        fputs("<p>Allocated (solid) and reserved (dashed) over time; the levels are ", fp);
        fputs(d->from_totals ? "the trace's Total Allocated." : "a running sum of Bytes.", fp);
        fputs("</p>\n", fp);
        chart(fp, d, i);
        figures(fp, d);
        if (d->has_addresses) {
            fputs("<h3>Live at the peak, by the op that allocated it</h3>\n", fp);
            live_table(fp, d);
        } else {
            fputs("<p class=\"gp-na\">What was live at the peak is unknown: the events carry no "
                  "addresses to match frees with.</p>\n",
                  fp);
        }
        fputs("</section>\n", fp);
    }
    fputs("</main>\n</body>\n</html>\n", fp);
    return ferror(fp) ? GP_EIO : GP_OK;
}
