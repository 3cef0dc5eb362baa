/* gpuprof diff's torch.compile section (gp_diff_compile): compiled regions against the eager ops
 * they replace, or against the same compile id, in text, JSON and HTML. Formats only. */
#include <math.h>
#include <stdio.h>

#include "core/units.h"
#include "render/diff_render.h"
#include "render/render_internal.h"

static void fmt_x(char *buf, size_t cap, double v)
{
    if (isnan(v))
        snprintf(buf, cap, "n/a");
    else
        snprintf(buf, cap, "%.2fx", v);
}

static void fmt_ns(char *buf, size_t cap, double v)
{
    gp__fmt_dur(buf, cap, (int64_t)llround(v));
}

/* What the sides are, in words. */
static const char *mode_words(gp_diff_compile_mode m)
{
    switch (m) {
    case GP_DIFF_COMPILE_BASE_EAGER:
        return "base eager, current compiled: each region against the eager ops it replaces";
    case GP_DIFF_COMPILE_CUR_EAGER:
        return "base compiled, current eager: each region against the eager ops that replace it";
    default:
        return "both compiled: regions paired by compile id";
    }
}

void gp__diff_compile_text(const gp_diff *d, FILE *fp)
{
    const gp_diff_compile *c = d->compile;
    if (!c || c->mode == GP_DIFF_COMPILE_NONE)
        return;
    char a[32], b[32], x[32], e[32], f[32];
    fprintf(fp, "\nTORCH.COMPILE (%s; per run, speedup base / current)\n", mode_words(c->mode));
    fmt_ns(a, sizeof a, c->paired_gpu[0]);
    fmt_ns(b, sizeof b, c->paired_gpu[1]);
    fmt_x(x, sizeof x, c->speedup);
    fmt_ns(e, sizeof e, c->other_gpu[0]);
    fmt_ns(f, sizeof f, c->other_gpu[1]);
    fprintf(fp, "  paired GPU work %s -> %s (%s); not paired %s -> %s\n", a, b, x, e, f);
    if (c->mode != GP_DIFF_COMPILE_BOTH)
        fprintf(fp, "  (calls on the eager side: calls of the paired eager ops, split as their "
                    "time is)\n");
    fprintf(fp, "  %-10s %9s %9s %12s %12s %8s %12s %12s %8s  %s\n", "region", "calls b", "calls c",
            "GPU base", "GPU cur", "GPU x", "CPU base", "CPU cur", "CPU x", "eager ops paired");
    for (size_t i = 0; i < c->n_regions; i++) {
        const gp_diff_region *r = &c->regions[i];
        char g0[32], g1[32], gx[32], c0[32], c1[32], cx[32];
        fmt_ns(g0, sizeof g0, r->gpu[0]);
        fmt_ns(g1, sizeof g1, r->gpu[1]);
        fmt_x(gx, sizeof gx, r->gpu_speedup);
        fmt_ns(c0, sizeof c0, r->cpu[0]);
        fmt_ns(c1, sizeof c1, r->cpu[1]);
        fmt_x(cx, sizeof cx, r->cpu_speedup);
        fprintf(fp, "  %-10s %9.1f %9.1f %12s %12s %8s %12s %12s %8s  %s\n", r->name, r->calls[0],
                r->calls[1], g0, g1, gx, c0, c1, cx, r->ops[0] ? r->ops : "-");
    }
}

static void jw_num(gp__jw *w, const char *k, double v)
{
    gp__jw_key(w, k);
    if (isnan(v) || isinf(v)) {
        gp__jw_null(w);
        return;
    }
    char buf[64];
    int n = snprintf(buf, sizeof buf, "%.12g", v);
    gp__jw_raw(w, buf, (size_t)n);
}

void gp__diff_compile_json(gp__jw *w, const gp_diff *d)
{
    const gp_diff_compile *c = d->compile;
    if (!c || c->mode == GP_DIFF_COMPILE_NONE)
        return;
    gp__jw_key(w, "compile");
    gp__jw_obj_begin(w);
    gp__jw_kv_str(w, "mode", gp_diff_compile_mode_name(c->mode));
    jw_num(w, "base_paired_gpu_ns", c->paired_gpu[0]);
    jw_num(w, "current_paired_gpu_ns", c->paired_gpu[1]);
    jw_num(w, "base_other_gpu_ns", c->other_gpu[0]);
    jw_num(w, "current_other_gpu_ns", c->other_gpu[1]);
    jw_num(w, "speedup", c->speedup);
    gp__jw_key(w, "regions");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < c->n_regions; i++) {
        const gp_diff_region *r = &c->regions[i];
        gp__jw_obj_begin(w);
        gp__jw_kv_str(w, "name", r->name);
        jw_num(w, "base_calls", r->calls[0]);
        jw_num(w, "current_calls", r->calls[1]);
        jw_num(w, "base_gpu_ns", r->gpu[0]);
        jw_num(w, "current_gpu_ns", r->gpu[1]);
        jw_num(w, "base_cpu_ns", r->cpu[0]);
        jw_num(w, "current_cpu_ns", r->cpu[1]);
        jw_num(w, "gpu_speedup", r->gpu_speedup);
        jw_num(w, "cpu_speedup", r->cpu_speedup);
        gp__jw_kv_str(w, "eager_ops", r->ops);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
    gp__jw_obj_end(w);
}

void gp__diff_compile_html(const gp_diff *d, FILE *fp)
{
    const gp_diff_compile *c = d->compile;
    if (!c || c->mode == GP_DIFF_COMPILE_NONE)
        return;
    char a[32], b[32], x[32], e[32], f[32];
    fmt_ns(a, sizeof a, c->paired_gpu[0]);
    fmt_ns(b, sizeof b, c->paired_gpu[1]);
    fmt_x(x, sizeof x, c->speedup);
    fmt_ns(e, sizeof e, c->other_gpu[0]);
    fmt_ns(f, sizeof f, c->other_gpu[1]);
    fprintf(fp,
            "<section id=\"gp-diff-compile\"><h2>torch.compile: compiled regions</h2>\n<p "
            "class=\"gp-sub\">%s. Per run; speedup = base / current (&gt; 1: current faster). "
            "Paired GPU work %s &rarr; %s (<b>%s</b>); not paired %s &rarr; %s. Eager ops are "
            "paired with a region by name: the ops it calls itself and the aten ops its fused "
            "kernels name (docs/diff.md).</p>\n<table class=\"gp-table\"><thead><tr><th>region"
            "</th><th>calls base</th><th>calls current</th><th>GPU base</th><th>GPU current</th>"
            "<th>GPU speedup</th><th>CPU base</th><th>CPU current</th><th>CPU speedup</th>"
            "<th>eager ops paired</th></tr></thead><tbody>\n",
            mode_words(c->mode), a, b, x, e, f);
    for (size_t i = 0; i < c->n_regions; i++) {
        const gp_diff_region *r = &c->regions[i];
        char v[6][32];
        fmt_ns(v[0], sizeof v[0], r->gpu[0]);
        fmt_ns(v[1], sizeof v[1], r->gpu[1]);
        fmt_x(v[2], sizeof v[2], r->gpu_speedup);
        fmt_ns(v[3], sizeof v[3], r->cpu[0]);
        fmt_ns(v[4], sizeof v[4], r->cpu[1]);
        fmt_x(v[5], sizeof v[5], r->cpu_speedup);
        fputs("<tr><td class=\"gp-name\">", fp);
        gp__html_str(fp, r->name);
        fprintf(fp,
                "</td><td data-v=\"%.1f\">%.1f</td><td data-v=\"%.1f\">%.1f</td>"
                "<td data-v=\"%.0f\">%s</td><td data-v=\"%.0f\">%s</td><td data-v>%s</td>"
                "<td data-v=\"%.0f\">%s</td><td data-v=\"%.0f\">%s</td><td data-v>%s</td>"
                "<td class=\"gp-name\" title=\"",
                r->calls[0], r->calls[0], r->calls[1], r->calls[1], r->gpu[0], v[0], r->gpu[1],
                v[1], v[2], r->cpu[0], v[3], r->cpu[1], v[4], v[5]);
        gp__html_str(fp, r->ops);
        fputs("\">", fp);
        gp__html_str(fp, r->ops[0] ? r->ops : "-");
        fputs("</td></tr>\n", fp);
    }
    fputs("</tbody></table>\n</section>\n", fp);
}
