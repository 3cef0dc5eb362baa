/* The compiled regions of a trace as HTML: the regions table and the graph breaks at run time,
 * shared by `gpuprof compile --html` (compile_html.c) and report.html's torch.compile section
 * (dashboard_html.c). Kept apart from compile_html.c, which reads payloads back from the log
 * (jansson, nettle): the report pulls in only this file. Formats only. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gpuprof/compile.h"
#include "core/units.h"
#include "core/util.h"
#include "render/compile_render.h"
#include "render/render_internal.h"

const char *gp__compile_base(const char *path)
{
    if (!path)
        return "";
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

void gp__compile_td(FILE *fp, const char *cls, const char *s)
{
    fprintf(fp, "<td%s%s%s>", cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "");
    gp__html_str(fp, s);
    fputs("</td>", fp);
}

void gp__compile_td_num(FILE *fp, int64_t v)
{
    char b[32];
    gp__compile_count(b, sizeof b, v);
    fprintf(fp, "<td data-v=\"%" PRId64 "\">%s</td>", v, b);
}

void gp__compile_td_dur(FILE *fp, gp_ns ns)
{
    char b[32] = "-";
    if (ns >= 0)
        gp__fmt_dur_html(b, sizeof b, ns);
    fprintf(fp, "<td data-v=\"%" PRId64 "\">%s</td>", ns, b);
}

/* The gaps between compiled regions: what each graph break costs at run time. */
static void gaps_table(const gp_compile_trace *t, const gp_compile_analysis *a, FILE *fp)
{
    if (!t->n_gaps)
        return;
    fprintf(fp,
            "<h3>Graph breaks at run time</h3>\n<p class=\"gp-sub\">Time between compiled "
            "regions on a thread, from the end of a call of one region to the start of the next "
            "region call: at a graph break, the eager fallback, the resume function's guard "
            "checks and its launches. %s</p>\n",
            t->linked ? "Graph breaks as the compile log names them."
                      : "Without a compile log: a gap into a frame compiled later is a probable "
                        "break (two compiled functions called in a row look the same).");
    fputs("<table class=\"gp-table gp-cc\"><thead><tr><th>from &rarr; to</th><th>kind</th>"
          "<th>count</th><th>per call</th><th>between</th><th>eager ops</th><th>guards</th>"
          "<th>GPU</th><th>kernels</th><th>eager ops with the most time</th>",
          fp);
    fputs(t->linked ? "<th>graph break</th></tr></thead><tbody>\n" : "</tr></thead><tbody>\n", fp);
    for (size_t i = 0; i < t->n_gaps; i++) {
        const gp_compile_gap *g = &t->gaps[i];
        fprintf(fp, "<tr%s><td class=\"gp-id\">",
                g->kind != GP_CGAP_BETWEEN ? " class=\"gp-brk\"" : "");
        gp__html_str(fp, g->from);
        fputs(" &rarr; ", fp);
        gp__html_str(fp, g->to);
        fputs("</td>", fp);
        gp__compile_td(fp, NULL, gp_compile_gap_kind_name(g->kind));
        gp__compile_td_num(fp, (int64_t)g->count);
        gp__compile_td_dur(fp, g->count ? g->wall / (gp_ns)g->count : 0);
        gp__compile_td_dur(fp, g->wall);
        gp__compile_td_dur(fp, g->cpu_ops);
        gp__compile_td_dur(fp, g->guard);
        gp__compile_td_dur(fp, g->gpu);
        gp__compile_td_num(fp, (int64_t)g->kernels);
        fputs("<td class=\"gp-name\">", fp);
        for (size_t k = 0; k < GP_COMPILE_GAP_OPS && g->ops[k]; k++) {
            char d[32];
            gp__fmt_dur_html(d, sizeof d, g->op_time[k]);
            fputs(k ? "<br>" : "", fp);
            gp__html_str(fp, g->ops[k]);
            fprintf(fp, " %s", d);
        }
        fputs(t->linked ? "</td><td class=\"gp-reason\">" : "", fp);
        if (g->kind == GP_CGAP_BREAK && a && g->brk < a->n_breaks) {
            const gp_compile_break *b = &a->breaks[g->brk];
            char loc[1200];
            snprintf(loc, sizeof loc, "%s at %s:%d (%s): ", b->function, gp__compile_base(b->file),
                     b->line, gp_compile_cause_name(b->cause));
            gp__html_str(fp, loc);
            gp__html_str(fp, b->reason[0] ? b->reason : "(no reason in the log)");
        }
        fputs("</td></tr>\n", fp);
    }
    fputs("</tbody></table>\n", fp);
}

void gp__compile_trace_html(FILE *fp, const gp_compile_trace *t, const gp_compile_analysis *a,
                            const char *label)
{
    char x[32], y[32], z[32], w[32];
    fputs("<h3>Compiled regions: ", fp);
    gp__html_str(fp, label);
    gp__fmt_dur_html(x, sizeof x, t->cpu_compiled);
    gp__fmt_dur_html(y, sizeof y, t->cpu_eager);
    gp__fmt_dur_html(z, sizeof z, t->gpu_compiled);
    gp__fmt_dur_html(w, sizeof w, t->gpu_eager);
    fprintf(fp,
            "</h3>\n<p class=\"gp-sub\">CPU ops in compiled regions %s, eager %s; GPU work "
            "sum from compiled regions %s (%" PRIu64 " kernels), eager %s (%" PRIu64 " kernels)",
            x, y, z, t->kernels_compiled, w, t->kernels_eager);
    gp__fmt_dur_html(x, sizeof x, t->cpu_guard);
    gp__fmt_dur_html(y, sizeof y, t->launch_compiled);
    fprintf(fp, "; guard checks %s; launch calls from regions %" PRIu64 " (%s)</p>\n", x,
            t->launches_compiled, y);
    fputs("<table class=\"gp-table gp-cc\"><thead><tr><th>region</th><th>calls</th><th>CPU</th>"
          "<th>GPU sum</th><th>kernels</th><th>triton</th><th>launches</th><th>launch time</th>"
          "<th>graph</th></tr></thead><tbody>\n",
          fp);
    for (size_t i = 0; i < t->n_regions; i++) {
        const gp_compile_region *g = &t->regions[i];
        fputs("<tr>", fp);
        gp__compile_td(fp, "gp-id", g->name);
        gp__compile_td_num(fp, (int64_t)g->calls);
        gp__compile_td_dur(fp, g->cpu_time);
        gp__compile_td_dur(fp, g->gpu_time);
        gp__compile_td_num(fp, (int64_t)g->kernels);
        gp__compile_td_num(fp, (int64_t)g->triton_kernels);
        gp__compile_td_num(fp, (int64_t)g->launches);
        gp__compile_td_dur(fp, g->launch_time);
        gp__compile_td(fp, "gp-name", g->graph);
        fputs("</tr>\n", fp);
    }
    fputs("</tbody></table>\n", fp);
    gaps_table(t, a, fp);
}

gp_status gp__render_compile_section(FILE *fp, const gp_compile_trace *const *t, size_t n)
{
    size_t shown = 0;
    for (size_t i = 0; i < n; i++)
        shown += t[i] && t[i]->n_regions > 0;
    if (!shown)
        return GP_OK;
    fprintf(fp,
            "<section id=\"gp-compile\"><style>\n%s</style><h2>torch.compile</h2>\n<p "
            "class=\"gp-sub\">The trace holds compiled regions (\"Torch-Compiled Region: "
            "F/C\", F/C the compile id). For the compile itself (graph breaks with their reason, "
            "recompilations, compile time, fusion), run <code>gpuprof compile TORCH_TRACE_DIR "
            "--trace TRACE</code>; docs/compile.md.</p>\n",
            gp__asset_compile_css);
    for (size_t i = 0; i < n; i++) {
        if (!t[i] || !t[i]->n_regions)
            continue;
        char label[64];
        snprintf(label, sizeof label, "rank %d", t[i]->rank);
        gp__compile_trace_html(fp, t[i], NULL, n > 1 ? label : t[i]->source);
    }
    fputs("</section>\n", fp);
    return ferror(fp) ? GP_EIO : GP_OK;
}
