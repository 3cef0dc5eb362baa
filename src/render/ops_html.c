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
#define X_LO -2.0 /* log10 FLOP/byte */
#define X_HI 4.0

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

static double px(double intensity)
{
    double l = log10(intensity > 0 ? intensity : 1e-9);
    l = l < X_LO ? X_LO : l > X_HI ? X_HI : l;
    return ML + (l - X_LO) / (X_HI - X_LO) * (W - ML - MR);
}

static double py(double tflops, double y_lo, double y_hi)
{
    double l = log10(tflops > 0 ? tflops : 1e-12);
    l = l < y_lo ? y_lo : l > y_hi ? y_hi : l;
    return H - MB - (l - y_lo) / (y_hi - y_lo) * (H - MB - MT);
}

static void roofline_svg(FILE *fp, const gp_ops *ops)
{
    gp_op_dtype dt = roof_dtype(ops);
    double pf = ops->peak.tflops[dt], bw = ops->peak.tbps;
    double y_hi = ceil(log10(pf > 0 ? pf * 2 : 2000)), y_lo = y_hi - 6;
    fprintf(fp,
            "<svg class=\"gp-roofline\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
            "role=\"img\" aria-label=\"roofline\">\n",
            W, H, W, H);
    for (int e = (int)X_LO; e <= (int)X_HI; e++) { /* grid and axis labels */
        double x = px(pow(10, e));
        fprintf(fp,
                "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"g\"/>"
                "<text x=\"%.1f\" y=\"%d\" class=\"t\">1e%d</text>\n",
                x, MT, x, H - MB, x, H - MB + 14, e);
    }
    for (int e = (int)y_lo; e <= (int)y_hi; e++) {
        double y = py(pow(10, e), y_lo, y_hi);
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
        double ridge = pf / bw;
        fprintf(fp, "<polyline class=\"roof\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>\n",
                px(pow(10, X_LO)), py(pow(10, X_LO) * bw, y_lo, y_hi), px(ridge),
                py(pf, y_lo, y_hi), px(pow(10, X_HI)), py(pf, y_lo, y_hi));
        fprintf(fp,
                "<text x=\"%d\" y=\"%.1f\" class=\"t\" text-anchor=\"end\">%s %s roof: %.1f "
                "TFLOP/s, %.2f TB/s</text>\n",
                W - MR - 4, py(pf, y_lo, y_hi) - 6, ops->peak.entry ? ops->peak.entry : "",
                gp_op_dtype_name(dt), pf, bw);
    } else {
        fprintf(fp,
                "<text x=\"%d\" y=\"%d\" class=\"t\">device not in the peak table: no "
                "roof</text>\n",
                ML + 8, MT + 14);
    }
    double tmax = 0;
    for (size_t i = 0; i < ops->n_rows; i++)
        if (ops->rows[i].modeled && (double)ops->rows[i].model_time > tmax)
            tmax = (double)ops->rows[i].model_time;
    for (size_t i = 0; i < ops->n_rows; i++) {
        const gp_ops_row *r = &ops->rows[i];
        if (!r->modeled || r->model_time <= 0 || r->bytes <= 0)
            continue;
        double rad = 3 + 12 * sqrt((double)r->model_time / (tmax > 0 ? tmax : 1));
        fprintf(fp, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" class=\"p %s\"><title>",
                px(r->intensity), py(r->tflops_per_s, y_lo, y_hi), rad, gp_op_bound_name(r->bound));
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
    "font:12px sans-serif}.gp-ops th{cursor:pointer;background:#eee;position:sticky;top:0}"
    ".gp-ops td,.gp-ops th{padding:2px 6px;border-bottom:1px solid #eee;text-align:right}"
    ".gp-ops td.k,.gp-ops td.s{text-align:left;font-family:monospace}.gp-ops "
    "th:nth-child(-n+2){text-align:left}</style>\n";

/* Sorts by the clicked column (numbers by data-v), filters by the text box. */
static const char script[] =
    "<script>(function(){var s=document.currentScript.parentNode,t=s.querySelector('table'),"
    "b=t.tBodies[0],f=s.querySelector('input');s.querySelectorAll('th').forEach(function(h,i)"
    "{var d=-1;h.onclick=function(){d=-d;var r=[].slice.call(b.rows);r.sort(function(x,y){"
    "var a=x.cells[i].getAttribute('data-v'),c=y.cells[i].getAttribute('data-v');if(a!==null)"
    "return d*(parseFloat(a)-parseFloat(c));return d*x.cells[i].textContent.localeCompare("
    "y.cells[i].textContent)});r.forEach(function(x){b.appendChild(x)})}});f.oninput=function()"
    "{var q=f.value.toLowerCase();[].forEach.call(b.rows,function(x){x.style.display=x."
    "textContent.toLowerCase().indexOf(q)<0?'none':''})}})();</script>\n";

static void num(FILE *fp, double v, const char *fmt_val)
{
    fprintf(fp, "<td data-v=\"%.17g\">", v);
    fprintf(fp, fmt_val, v);
    fputs("</td>", fp);
}

static void table(FILE *fp, const gp_ops *ops, size_t n)
{
    fputs("<table><thead><tr><th>Name</th><th>Input Dims</th><th>dtype</th><th>Calls</th>"
          "<th>Self CPU (ms)</th><th>CPU total (ms)</th><th>Self GPU (ms)</th>"
          "<th>GPU total (ms)</th><th>Kernels</th><th>TFLOP/s</th><th>TB/s</th><th>FLOP/B</th>"
          "<th>% of roofline</th><th>Bound</th></tr></thead><tbody>\n",
          fp);
    for (size_t i = 0; i < n; i++) {
        const gp_ops_row *r = &ops->rows[i];
        fputs("<tr><td class=\"k\">", fp);
        gp__html_str(fp, r->key);
        fputs("</td><td class=\"s\">", fp);
        gp__html_str(fp, r->shapes ? r->shapes : "");
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
    fputs("</tbody></table>\n", fp);
}

gp_status gp__render_ops_html(const gp_ops *ops, size_t top_n, const char *id, FILE *fp)
{
    size_t n = top_n && top_n < ops->n_rows ? top_n : ops->n_rows;
    fputs("<section class=\"gp-ops\" id=\"", fp);
    gp__html_str(fp, id ? id : "ops");
    fputs("\">\n<h2>Operators: GPU work sum and roofline</h2>\n", fp);
    fputs(style, fp);
    roofline_svg(fp, ops);
    fputs("<p><input type=\"search\" placeholder=\"filter by name or shape\"> ", fp);
    fprintf(fp, "%zu of %zu rows; self GPU is a partition of the GPU work sum, %.3f ms.</p>\n", n,
            ops->n_rows, (double)ops->gpu_time / 1e6);
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

typedef struct page_ctx {
    const gp_ops *ops;
    size_t top;
} page_ctx;

static gp_status write_page(const void *ctx, FILE *fp)
{
    const page_ctx *p = ctx;
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>gpuprof ops</title>"
          "</head>\n<body>\n",
          fp);
    gp_status st = gp__render_ops_html(p->ops, p->top, "ops", fp);
    fputs("</body></html>\n", fp);
    return st == GP_OK && ferror(fp) ? GP_EIO : st;
}

gp_status gp__render_ops_page(const gp_ops *ops, size_t top_n, const char *path, gp_error *err)
{
    page_ctx c = {ops, top_n};
    return gp__render_to_file(path, write_page, &c, err);
}
