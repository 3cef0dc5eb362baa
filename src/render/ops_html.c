/* The HTML section of `gpuprof ops` (render/ops_html.h): a roofline chart in SVG and the sortable,
 * filterable op table. Formatting only: positions are the rows' figures on log scales. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/util.h"
#include "render/ops_html.h"
#include "render/render_internal.h"

#define W 640
#define H 360
#define ML 56 /* margins: left, bottom, top, right */
#define MB 40
#define MT 16
#define MR 16

/* The axes' ranges, log10: x intensity (FLOP/byte), y achieved TFLOP/s. */
typedef struct axes {
    double x_lo, x_hi, y_lo, y_hi;
} axes;

/* The dtype whose roof is drawn: the one with the most modeled GPU time. */
static gp_op_dtype roof_dtype(const gp_ops *ops)
{
    double t[GP_DT_COUNT] = {0};
    for (size_t i = 0; i < ops->n_rows; i++)
        if (ops->rows[i].modeled && ops->rows[i].dtype < GP_DT_COUNT)
            t[ops->rows[i].dtype] += (double)ops->rows[i].model_time;
    gp_op_dtype best = GP_DT_BF16;
    for (int d = GP_DT_FP64; d < GP_DT_OTHER; d++)
        if (t[d] > t[best])
            best = (gp_op_dtype)d;
    return best;
}

/* Whether row r is a point of the roofline: modeled, with GPU time, FLOPs and bytes, and a leaf
 * of the op tree (gp_ops_row.leaves: a parent whose child has the model is the child's time). */
static bool plotted(const gp_ops_row *r)
{
    return r->modeled && r->leaves > 0 && r->model_time > 0 && r->bytes > 0 && r->flops > 0 &&
           r->tflops_per_s > 0;
}

/* Ranges that hold every point (none is clamped onto an axis) and the roof: at least 1e-2 ..
 * 1e4 FLOP/byte and six decades below the roof. */
static axes axes_of(const gp_ops *ops, size_t n, double pf)
{
    axes a = {-2, 4, 0, ceil(log10(pf > 0 ? pf * 2 : 2000))};
    a.y_lo = a.y_hi - 6;
    for (size_t i = 0; i < n; i++) {
        const gp_ops_row *r = &ops->rows[i];
        if (!plotted(r))
            continue;
        double x = log10(r->intensity), y = log10(r->tflops_per_s);
        a.x_lo = fmin(a.x_lo, floor(x));
        a.x_hi = fmax(a.x_hi, ceil(x));
        a.y_lo = fmin(a.y_lo, floor(y));
        a.y_hi = fmax(a.y_hi, ceil(y));
    }
    return a;
}

static double px(const axes *a, double intensity)
{
    return ML + (log10(intensity) - a->x_lo) / (a->x_hi - a->x_lo) * (W - ML - MR);
}

static double py(const axes *a, double tflops)
{
    return H - MB - (log10(tflops) - a->y_lo) / (a->y_hi - a->y_lo) * (H - MB - MT);
}

/* The roofline of the first n rows: the roof of the dtype with the most modeled GPU time and one
 * point per plotted row (data-key: its key), sized by its GPU time. */
static void roofline_svg(FILE *fp, const gp_ops *ops, size_t n)
{
    gp_op_dtype dt = roof_dtype(ops);
    double pf = ops->peak.tflops[dt], bw = ops->peak.tbps;
    axes ax = axes_of(ops, n, pf);
    fprintf(fp,
            "<svg class=\"gp-roofline\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
            "role=\"img\" aria-label=\"roofline\" data-x=\"%g %g\" data-y=\"%g %g\">\n",
            W, H, W, H, ax.x_lo, ax.x_hi, ax.y_lo, ax.y_hi);
    int xstep = ax.x_hi - ax.x_lo > 8 ? 2 : 1, ystep = ax.y_hi - ax.y_lo > 8 ? 2 : 1;
    for (int e = (int)ax.x_lo; e <= (int)ax.x_hi; e += xstep) { /* grid and axis labels */
        double x = px(&ax, pow(10, e));
        fprintf(fp,
                "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"g\"/>"
                "<text x=\"%.1f\" y=\"%d\" class=\"t\" text-anchor=\"middle\">1e%d</text>\n",
                x, MT, x, H - MB, x, H - MB + 14, e);
    }
    for (int e = (int)ax.y_lo; e <= (int)ax.y_hi; e += ystep) {
        double y = py(&ax, pow(10, e));
        fprintf(fp,
                "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" class=\"g\"/>"
                "<text x=\"%d\" y=\"%.1f\" class=\"t\" text-anchor=\"end\">1e%d</text>\n",
                ML, y, W - MR, y, ML - 4, y + 4, e);
    }
    fprintf(fp,
            "<text x=\"%d\" y=\"%d\" class=\"t\">arithmetic intensity (FLOP/byte)</text>\n"
            "<text x=\"12\" y=\"%d\" class=\"t\" transform=\"rotate(-90 12 %d)\">achieved "
            "TFLOP/s</text>\n",
            W / 2 - 90, H - 6, H / 2 + 40, H / 2 + 40);
    if (pf > 0 && bw > 0) { /* the roof: bandwidth slope up to the ridge, then flat */
        double ridge = pf / bw, x0 = pow(10, ax.x_lo), y0 = x0 * bw;
        if (y0 < pow(10, ax.y_lo)) /* the slope enters through the bottom edge */
            x0 = pow(10, ax.y_lo) / bw, y0 = pow(10, ax.y_lo);
        fprintf(fp, "<polyline class=\"roof\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>\n",
                px(&ax, x0), py(&ax, y0), px(&ax, ridge), py(&ax, pf), px(&ax, pow(10, ax.x_hi)),
                py(&ax, pf));
        fprintf(fp,
                "<text x=\"%d\" y=\"%.1f\" class=\"t\" text-anchor=\"end\">%s %s roof: %.1f "
                "TFLOP/s, %.2f TB/s</text>\n",
                W - MR - 4, py(&ax, pf) - 6, ops->peak.entry ? ops->peak.entry : "",
                gp_op_dtype_name(dt), pf, bw);
    } else {
        fprintf(fp,
                "<text x=\"%d\" y=\"%d\" class=\"t\">device not in the peak table: no "
                "roof</text>\n",
                ML + 8, MT + 14);
    }
    double tmax = 0;
    for (size_t i = 0; i < n; i++)
        if (plotted(&ops->rows[i]) && (double)ops->rows[i].model_time > tmax)
            tmax = (double)ops->rows[i].model_time;
    for (size_t i = 0; i < n; i++) {
        const gp_ops_row *r = &ops->rows[i];
        if (!plotted(r))
            continue;
        double rad = 3 + 12 * sqrt((double)r->model_time / (tmax > 0 ? tmax : 1));
        fprintf(fp, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" class=\"p %s\" data-key=\"",
                px(&ax, r->intensity), py(&ax, r->tflops_per_s), rad, gp_op_bound_name(r->bound));
        gp__html_str(fp, r->key);
        fputs("\"><title>", fp);
        gp__html_str(fp, r->key);
        if (r->shapes) {
            fputc(' ', fp);
            gp__html_str(fp, r->shapes);
        }
        fprintf(fp, " %s: %.2f TFLOP/s, %.3f TB/s, %.1f FLOP/B, %.3f ms",
                gp_op_dtype_name(r->dtype), r->tflops_per_s, r->tb_per_s, r->intensity,
                (double)r->model_time / 1e6);
        if (r->roof_pct >= 0)
            fprintf(fp, ", %.1f %% of roofline", r->roof_pct);
        fputs("</title></circle>\n", fp);
    }
    fputs("</svg>\n", fp);
}

static const char style[] =
    "<style>.gp-ops .g{stroke:#ddd}.gp-ops .t{font:11px sans-serif;fill:#555}"
    ".gp-ops .roof{fill:none;stroke:#c33;stroke-width:2}.gp-ops .p{fill-opacity:.55;stroke:#333}"
    ".gp-ops .memory{fill:#37c}.gp-ops .compute{fill:#e83}.gp-ops table{border-collapse:collapse;"
    "font-size:12px}.gp-ops th{cursor:pointer;background:#f0f0f0;position:sticky;top:0;"
    "user-select:none}.gp-ops td,.gp-ops th{padding:2px 6px;border-bottom:1px solid #eee;"
    "text-align:right;white-space:nowrap}.gp-ops td.k,.gp-ops td.s{text-align:left;font-family:"
    "\"DejaVu Sans Mono\",monospace}.gp-ops th:nth-child(-n+2){text-align:left}"
    ".gp-ops th.gp-asc::after{content:\" \\25B2\"}.gp-ops th.gp-desc::after{content:\" \\25BC\"}"
    ".gp-ops-wrap{max-width:100%;overflow-x:auto}.gp-ops td.s{white-space:normal;"
    "overflow-wrap:anywhere;max-width:40ch}.gp-ops .gp-shapes td.s{min-width:22ch}"
    ".gp-ops td.k{white-space:normal;overflow-wrap:anywhere;min-width:24ch}"
    ".gp-ops th{white-space:normal}.gp-ops input{padding:3px 6px;width:320px}"
    ".gp-ops-count{margin-left:8px;color:#555}</style>\n";

/* Sorts by the clicked column (numbers by data-v; a second click reverses; an arrow marks it),
 * rows without a figure (data-v -1: not modelled) last in either direction; filters by the text
 * box and counts the rows shown. */
static const char script[] =
    "<script>(function(){var s=document.currentScript.parentNode,t=s.querySelector('table'),"
    "b=t.tBodies[0],f=s.querySelector('input'),n=s.querySelector('.gp-ops-count'),"
    "hs=t.tHead.rows[0].cells,rows=[].slice.call(b.rows),col=-1,dir=-1;"
    "[].forEach.call(hs,function(h,i){if(h.className)col=i,dir=h.className==='gp-asc'?1:-1;"
    "h.onclick=function(){var str=h.hasAttribute('data-s');dir=col===i?-dir:str?1:-1;col=i;"
    "rows.sort(function(x,y){var a=x.cells[i].getAttribute('data-v'),c=y.cells[i]."
    "getAttribute('data-v');if(a===null){a=x.cells[i].textContent;c=y.cells[i].textContent;"
    "return dir*a.localeCompare(c)}a=+a;c=+c;if((a<0)!==(c<0))return a<0?1:-1;"
    "return dir*(a-c)});rows.forEach(function(x){b.appendChild(x)});"
    "[].forEach.call(hs,function(g,j){g.className=j===i?(dir>0?'gp-asc':'gp-desc'):'';"
    "g.setAttribute('aria-sort',j===i?(dir>0?'ascending':'descending'):'none')});"
    "t.setAttribute('data-sort',i+(dir>0?':asc':':desc'))}});"
    "f.oninput=function(){var q=f.value.toLowerCase(),k=0;rows.forEach(function(x){"
    "var ok=x.textContent.toLowerCase().indexOf(q)>=0;x.style.display=ok?'':'none';if(ok)k++});"
    "n.textContent=k+' of '+rows.length+' rows';n.setAttribute('data-shown',k)}})();"
    "</script>\n";

/* s as HTML text with a line-break opportunity (<wbr>) after each occurrence of a separator in
 * seps (NULL-terminated), so that a narrow column wraps there rather than at any character: a
 * shapes cell between two inputs' shapes ("],"), a name after "::", "_", "<", ",", "." or "/". */
static void breakable(FILE *fp, const char *s, const char *const *seps)
{
    for (const char *p = s;;) {
        const char *cut = NULL;
        size_t len = 0;
        for (const char *const *q = seps; *q; q++) {
            const char *c = strstr(p, *q);
            if (c && (!cut || c < cut))
                cut = c, len = strlen(*q);
        }
        if (!cut) {
            gp__html_str(fp, p);
            return;
        }
        gp__html_text(fp, p, (size_t)(cut + len - p));
        if (cut[len])
            fputs("<wbr>", fp);
        p = cut + len;
    }
}

static const char *const shape_seps[] = {"],", NULL};
static const char *const name_seps[] = {"::", "_", "<", ",", ".", "/", NULL};

static void num(FILE *fp, double v, const char *fmt_val)
{
    fprintf(fp, "<td data-v=\"%.17g\">", v);
    fprintf(fp, fmt_val, v);
    fputs("</td>", fp);
}

/* The column of the table that the rows' order (gp_ops_sort) sorts, and its direction. */
static int sorted_column(gp_ops_sort s, bool *asc)
{
    static const int col[GP_OPS_SORT_COUNT] = {6, 7, 4, 5, 3, 9, 12};
    *asc = s == GP_OPS_SORT_EFFICIENCY;
    return s < GP_OPS_SORT_COUNT ? col[s] : -1;
}

static void table(FILE *fp, const gp_ops *ops, size_t n)
{
    static const char *const heads[] = {
        "Name",           "Input Dims",    "dtype",          "Calls",   "Self CPU (ms)",
        "CPU total (ms)", "Self GPU (ms)", "GPU total (ms)", "Kernels", "TFLOP/s",
        "TB/s",           "FLOP/B",        "% of roofline",  "Bound"};
    bool asc;
    int sc = sorted_column(ops->sort, &asc);
    bool shapes = false; /* the Input Dims column gets its width only when it has text */
    for (size_t i = 0; i < n && !shapes; i++)
        shapes = ops->rows[i].shapes && ops->rows[i].shapes[0];
    fprintf(fp,
            "<div class=\"gp-ops-wrap\"><table class=\"gp-table%s\" data-rows=\"%zu\" "
            "data-sort=\"%d:%s\"><thead><tr>",
            shapes ? " gp-shapes" : "", n, sc, asc ? "asc" : "desc");
    for (int i = 0; i < (int)(sizeof heads / sizeof *heads); i++)
        fprintf(fp, "<th%s%s>%s</th>", i < 3 || i == 13 ? " data-s" : "",
                i == sc ? (asc ? " class=\"gp-asc\"" : " class=\"gp-desc\"") : "", heads[i]);
    fputs("</tr></thead><tbody>\n", fp);
    for (size_t i = 0; i < n; i++) {
        const gp_ops_row *r = &ops->rows[i];
        fputs("<tr><td class=\"k\">", fp);
        breakable(fp, r->key, name_seps);
        fputs("</td><td class=\"s\">", fp);
        breakable(fp, r->shapes ? r->shapes : "", shape_seps);
        fprintf(fp, "</td><td>%s</td>", r->modeled ? gp_op_dtype_name(r->dtype) : "");
        num(fp, (double)r->calls, "%.0f");
        num(fp, (double)r->self_cpu / 1e6, "%.3f");
        num(fp, (double)r->cpu / 1e6, "%.3f");
        num(fp, (double)r->self_gpu / 1e6, "%.3f");
        num(fp, (double)r->gpu / 1e6, "%.3f");
        num(fp, (double)r->kernels, "%.0f");
        if (r->modeled) {
            num(fp, r->tflops_per_s, "%.2f");
            num(fp, r->tb_per_s, "%.3f");
            num(fp, r->intensity, "%.1f");
        } else {
            fputs("<td data-v=\"-1\"></td><td data-v=\"-1\"></td><td data-v=\"-1\"></td>", fp);
        }
        if (r->roof_pct >= 0)
            num(fp, r->roof_pct, "%.1f");
        else
            fputs("<td data-v=\"-1\"></td>", fp);
        fprintf(fp, "<td>%s</td></tr>\n", gp_op_bound_name(r->bound));
    }
    fputs("</tbody></table></div>\n", fp);
}

gp_status gp__render_ops_html(const gp_ops *ops, size_t top_n, const char *id, FILE *fp)
{
    size_t n = top_n && top_n < ops->n_rows ? top_n : ops->n_rows;
    fputs("<section class=\"gp-ops\" id=\"", fp);
    gp__html_str(fp, id ? id : "ops");
    fputs("\">\n<h2>Operators: GPU work sum and roofline</h2>\n", fp);
    fputs(style, fp);
    roofline_svg(fp, ops, n);
    fputs("<p class=\"gp-note\">One point per op of the table that does its own work (a leaf of "
          "the op tree with a model: aten::linear is drawn as the aten::addmm inside it); blue: "
          "memory-bound, orange: compute-bound.</p>\n",
          fp);
    fprintf(fp,
            "<p class=\"gp-controls\"><input type=\"search\" placeholder=\"filter by name or "
            "shape\" aria-label=\"filter\"><span class=\"gp-ops-count\" data-shown=\"%zu\">%zu "
            "of %zu rows</span>",
            n, n, n);
    if (n < ops->n_rows)
        fprintf(fp, " (the first %zu of %zu)", n, ops->n_rows);
    fprintf(fp,
            "; self GPU is a partition of the GPU work sum, %.3f ms; rows without a model sort "
            "last.</p>\n",
            (double)ops->gpu_time / 1e6);
    table(fp, ops, n);
    if (ops->note.msg[0]) {
        fputs("<p class=\"note\">", fp);
        gp__html_str(fp, ops->note.msg);
        fputs("</p>\n", fp);
    }
    fputs(script, fp);
    fputs("</section>\n", fp);
    return fflush(fp) != 0 || ferror(fp) ? GP_EIO : GP_OK;
}

/* The device of the page's heading: the trace's name for it, or the peak table's entry. */
static const char *device_of(const gp_ops *ops)
{
    return ops->peak.device ? ops->peak.device : ops->peak.entry ? ops->peak.entry : NULL;
}

gp_status gp__render_ops_page_to(const gp_ops *ops, size_t top_n, const char *trace,
                                 const char *nav_html, FILE *fp)
{
    const char *dev = device_of(ops);
    fputs("<!DOCTYPE html>\n<html lang=\"en\" data-ready=\"1\"><head><meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
          fp);
    gp__html_str(fp, trace ? trace : "trace");
    fputs(": ops and roofline", fp);
    if (dev) {
        fputs(" on ", fp);
        gp__html_str(fp, dev);
    }
    fprintf(fp, "</title>\n<style>\n%s%s</style>\n</head>\n<body>%s\n<header>\n<h1>",
            gp__asset_timeline_css, gp__asset_report_css, nav_html ? nav_html : "");
    gp__html_str(fp, trace ? trace : "trace");
    fputs("</h1>\n<p class=\"gp-sub\" id=\"gp-ops-device\">ops and roofline &middot; device: ", fp);
    gp__html_str(fp, dev ? dev : "unknown");
    if (ops->peak.entry && dev != ops->peak.entry) {
        fputs(" (peaks of ", fp);
        gp__html_str(fp, ops->peak.entry);
        fputs(")", fp);
    }
    fprintf(fp,
            " &middot; grouped by %s &middot; gpuprof " GP_VERSION_STRING "</p>\n</header>\n"
            "<main>\n",
            gp_ops_by_name(ops->by));
    gp_status st = gp__render_ops_html(ops, top_n, "ops", fp);
    fputs("</main>\n</body></html>\n", fp);
    return st == GP_OK && ferror(fp) ? GP_EIO : st;
}

typedef struct page_ctx {
    const gp_ops *ops;
    size_t top;
    const char *trace;
} page_ctx;

static gp_status write_page(const void *ctx, FILE *fp)
{
    const page_ctx *p = ctx;
    return gp__render_ops_page_to(p->ops, p->top, p->trace, NULL, fp);
}

gp_status gp__render_ops_page(const gp_ops *ops, size_t top_n, const char *trace, const char *path,
                              gp_error *err)
{
    page_ctx c = {ops, top_n, trace};
    return gp__render_to_file(path, write_page, &c, err);
}
