/* The dashboard section of an in-process profile (gp_dashboard.is_profile): the time distribution
 * per operation, mean time and calls, the GPU / transfer / overhead / CPU split, the top 5
 * bottlenecks and the per-operation statistics. Formats what dashboard_profile.c computed. */
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "render/render_internal.h"

/* Fills of the distribution segments (one per operation, then "other") and of the split. */
static const char *const op_fill[GP_DASH_SEGS] = {
    "#4a90d9", "#e8833a", "#4caf50", "#e06666", "#9467bd", "#d9a13b",
    "#17becf", "#c27ba0", "#8c564b", "#9bd17a", "#7fb3e6", "#e3c84f",
    "#a0a0a0", "#666666", "#bdbdbd", "#cccccc", "#eeeeee"};
static const char *const split_fill[GP_DASH_SEGS] = {"#4caf50", "#4a90d9", "#e06666", "#e8833a",
                                                     "#e4e4e4"};

static void dur_cell(FILE *fp, gp_ns ns)
{
    char b[32];
    if (ns < 0) {
        fputs("<td data-v=\"-1\">n/a</td>", fp);
        return;
    }
    gp__fmt_dur_html(b, sizeof b, ns);
    fprintf(fp, "<td data-v=\"%lld\">%s</td>", (long long)ns, b);
}

/* Mean time and calls per operation (the top 16 by total time), bars scaled to the largest. */
static void mean_calls(FILE *fp, const gp_dashboard *d)
{
    double max_mean = 0, max_calls = 0;
    size_t n = GP_MIN(d->n_prof_ops, (size_t)16);
    for (size_t i = 0; i < n; i++) {
        max_mean = GP_MAX(max_mean, d->prof_ops[i].mean);
        max_calls = GP_MAX(max_calls, (double)d->prof_ops[i].calls);
    }
    fputs("<table class=\"gp-bars\" id=\"gp-prof-mean\">\n<thead><tr><th>operation</th><th>mean "
          "time</th><th>calls</th></tr></thead>\n<tbody>\n",
          fp);
    for (size_t i = 0; i < n; i++) {
        const gp_dash_prof_op *o = &d->prof_ops[i];
        char b[32];
        gp__fmt_dur_html(b, sizeof b, (gp_ns)(o->mean + 0.5));
        fputs("<tr><td class=\"gp-name\" title=\"", fp);
        gp__html_str(fp, o->name);
        fputs("\">", fp);
        gp__html_str(fp, o->short_name);
        fprintf(fp,
                "</td><td><div class=\"gp-track\"><div class=\"gp-bar\" "
                "style=\"width:%.1f%%;background:%s\"></div></div><span>%s</span></td><td><div "
                "class=\"gp-track\"><div class=\"gp-bar gp-bar2\" style=\"width:%.1f%%\"></div>"
                "</div><span>%llu</span></td></tr>\n",
                max_mean > 0 ? 100 * o->mean / max_mean : 0, op_fill[GP_MIN(i, (size_t)15)], b,
                max_calls > 0 ? 100 * (double)o->calls / max_calls : 0,
                (unsigned long long)o->calls);
    }
    fputs("</tbody></table>\n", fp);
}

/* The top 5 operations by total time, with their measured figures. */
static void top5(FILE *fp, const gp_dashboard *d)
{
    gp_ns all = d->prof_dist.n_parts ? d->prof_dist.parts[0].total : 0;
    fputs("<ol class=\"gp-top\" id=\"gp-prof-top\">\n", fp);
    for (size_t i = 0; i < d->n_prof_ops && i < 5; i++) {
        const gp_dash_prof_op *o = &d->prof_ops[i];
        char t[32], m[32];
        gp__fmt_dur_html(t, sizeof t, o->total);
        gp__fmt_dur_html(m, sizeof m, (gp_ns)(o->mean + 0.5));
        fputs("<li><span class=\"gp-name\" title=\"", fp);
        gp__html_str(fp, o->name);
        fputs("\">", fp);
        gp__html_str(fp, o->short_name);
        fprintf(fp, "</span> <b>%s</b> in %llu calls (mean %s), %.1f%% of the ranges' self time", t,
                (unsigned long long)o->calls, m,
                all > 0 ? 100.0 * (double)o->self / (double)all : 0.0);
        if (o->gpu >= 0) {
            gp__fmt_dur_html(t, sizeof t, o->gpu);
            fprintf(fp, "; GPU %s", t);
        }
        if (o->gpu_util >= 0)
            fprintf(fp, " (%.0f%% of its wall time)", 100 * o->gpu_util);
        if (o->mem_avg >= 0) {
            gp__fmt_bytes(m, sizeof m, o->mem_avg);
            fprintf(fp, "; peak memory %s on average", m);
        }
        fputs("</li>\n", fp);
    }
    fputs("</ol>\n", fp);
}

/* Every operation: calls, times, the measured split, mean peak memory and GPU utilisation. */
static void stats_table(FILE *fp, const gp_dashboard *d)
{
    fputs("<table class=\"gp-table\" id=\"gp-prof-stats\">\n<thead><tr><th data-t=\"s\">"
          "operation</th><th>calls</th><th>total</th><th>mean</th><th>min</th><th>max</th>"
          "<th>GPU</th><th>CPU</th><th>transfer</th><th>overhead</th><th>avg peak memory</th>"
          "<th>GPU util.</th></tr></thead>\n<tbody>\n",
          fp);
    for (size_t i = 0; i < d->n_prof_ops; i++) {
        const gp_dash_prof_op *o = &d->prof_ops[i];
        fputs("<tr><td class=\"gp-name gp-clip\" title=\"", fp);
        gp__html_str(fp, o->name);
        fputs("\">", fp);
        gp__html_str(fp, o->name);
        fprintf(fp, "</td><td data-v=\"%llu\">%llu</td>", (unsigned long long)o->calls,
                (unsigned long long)o->calls);
        dur_cell(fp, o->total);
        dur_cell(fp, (gp_ns)(o->mean + 0.5));
        dur_cell(fp, o->min);
        dur_cell(fp, o->max);
        dur_cell(fp, o->gpu);
        dur_cell(fp, o->cpu);
        dur_cell(fp, o->transfer);
        dur_cell(fp, o->overhead);
        char b[32] = "n/a";
        if (o->mem_avg >= 0)
            gp__fmt_bytes(b, sizeof b, o->mem_avg);
        fprintf(fp, "<td data-v=\"%.0f\">%s</td>", o->mem_avg, b);
        if (o->gpu_util >= 0)
            fprintf(fp, "<td data-v=\"%.4f\">%.1f%%</td></tr>\n", o->gpu_util, 100 * o->gpu_util);
        else
            fputs("<td data-v=\"-1\">n/a</td></tr>\n", fp);
    }
    fputs("</tbody></table>\n", fp);
}

void gp__dash_profile_html(FILE *fp, const gp_dashboard *d)
{
    if (!d->is_profile)
        return;
    fputs("<section id=\"gp-profile\"><h2>Operations of the profile</h2>\n<p class=\"gp-sub\">An "
          "in-process profile: the operations are the range names, with the times the profiler "
          "measured in each range.</p>\n<div class=\"gp-cols\"><div>\n<h3>Time distribution per "
          "operation</h3>\n",
          fp);
    gp__dash_chart_html(fp, "gp-prof-dist", &d->prof_dist, op_fill, "self time");
    fputs("<p class=\"gp-note\">Self time: a range's duration minus the ranges nested in it, so "
          "the segments add up to the time spent in ranges.</p>\n</div><div>\n<h3>Mean time and "
          "calls per operation</h3>\n",
          fp);
    mean_calls(fp, d);
    fputs("</div></div>\n<h3>GPU / transfer / overhead / CPU per operation</h3>\n", fp);
    gp__dash_chart_html(fp, "gp-prof-split", &d->prof_split, split_fill, "wall time");
    fputs("<p class=\"gp-note\">Each bar is an operation's wall time (all its calls): GPU: the "
          "CUDA-event time of its GPU ranges, declared transfer time, the profiler's own cost in "
          "nested "
          "ranges, thread CPU time (the rest of the wall time when nothing was measured), each "
          "taking at most what is left; the remainder was not measured (waiting, or GPU work "
          "without events).</p>\n<h3>Top 5 bottlenecks</h3>\n",
          fp);
    top5(fp, d);
    fputs("<h3>Statistics per operation</h3>\n", fp);
    stats_table(fp, d);
    fputs("</section>\n", fp);
}
