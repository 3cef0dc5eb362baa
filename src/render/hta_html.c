/* The page of `gpuprof hta -o hta_report.html`: HTA's analyses of a trace or job (the figures of
 * `gpuprof analyze --hta`): the temporal, idle-time and kernel-type breakdowns, communication /
 * computation overlap and queue length (the dashboard's HTA section), and the top kernels per
 * type and rank. Self-contained (the report's stylesheet, no script). Formatting only. */
#include <stdio.h>

#include "core/units.h"
#include "render/hta_render.h"
#include "render/render_internal.h"

static void kernels_table(FILE *fp, const gp_analysis *a)
{
    fputs("<section class=\"gp-section\" id=\"gp-hta-kernels\">\n<h2>Top kernels</h2>\n"
          "<p class=\"gp-note\">Per rank and kernel type, the kernels that make up the type's time "
          "(HTA's "
          "get_gpu_kernel_breakdown: num_kernels 5, duration_ratio 0.8); the rest as "
          "&ldquo;others&rdquo;, whose mean and max are over the folded names&rsquo; sums. As in "
          "HTA, the named rows of a folded table are re-aggregated over their own sum (mean = "
          "max = sum; docs/analyses.md, &ldquo;Top kernels&rdquo;).</p>\n<table "
          "class=\"gp-table\"><thead><tr><th>rank</th>"
          "<th>type</th><th>kernel</th><th>count</th><th>sum</th><th>mean</th><th>max</th>"
          "</tr></thead><tbody>\n",
          fp);
    char s[32], m[32], x[32];
    for (size_t r = 0; r < a->n_ranks; r++)
        for (size_t i = 0; i < a->ranks[r].n_kernels; i++) {
            const gp_kernel_row *k = &a->ranks[r].kernels[i];
            gp__fmt_dur(s, sizeof s, k->sum);
            gp__fmt_dur(m, sizeof m, (gp_ns)k->mean);
            gp__fmt_dur(x, sizeof x, k->max);
            fprintf(fp, "<tr data-sum=\"%lld\"><td>%d</td><td>%s</td><td>", (long long)k->sum,
                    (int)k->rank, gp_kernel_type_name(k->type));
            gp__html_str(fp, k->name);
            fprintf(fp, "</td><td>%llu</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
                    (unsigned long long)k->count, s, m, x);
        }
    fputs("</tbody></table>\n</section>\n", fp);
}

gp_status gp__hta_render_html(const gp_analysis *a, const char *title, FILE *fp)
{
    if (!title)
        title = "gpuprof hta";
    gp__html_page_open(fp, title, "");
    fprintf(fp,
            "</h1>\n<p class=\"gp-sub\">Holistic Trace Analysis&rsquo;s breakdowns, %zu "
            "rank%s, HTA&rsquo;s definitions and step filter &middot; gpuprof " GP_VERSION_STRING
            "</p>\n</header>\n<main>\n<section class=\"gp-section\" id=\"gp-hta\">\n"
            "<h2>Breakdowns</h2>\n",
            a->n_ranks, a->n_ranks == 1 ? "" : "s");
    gp__dash_hta_html(fp, a);
    fputs("</section>\n", fp);
    kernels_table(fp, a);
    fputs("</main>\n</body>\n</html>\n", fp);
    return ferror(fp) ? GP_EIO : GP_OK;
}
