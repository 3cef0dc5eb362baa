/* The dashboard's first section, above the fold: what holds the step. The top finding's sentence
 * (its title and suggestion, composed by finding_format.c) and the critical path of each step as
 * one stacked bar of its classes (gp_critical_path.by_class), with a legend of the classes summed
 * over the steps (gp_dashboard.cp_*: dashboard.c sums them). Formats the dashboard's structs; an
 * empty state says what is missing. */
#include <string.h>

#include "core/util.h"
#include "render/render_internal.h"

static const char *const cp_fill[GP_CP_COUNT] = {"#8e6bbf", "#e0a030", "#3b78c2", "#d0533f",
                                                 "#7fb3d5", "#f2c14e", "#c8c8c8"};

static const char *const cp_words[GP_CP_COUNT] = {
    "CPU / Python", "data loading",           "GPU compute", "communication",
    "kernel gaps",  "kernel launch overhead", "dependency"};

static void dur(FILE *fp, gp_ns ns)
{
    char b[32];
    gp__fmt_dur_html(b, sizeof b, ns);
    fputs(b, fp);
}

/* Bar i of d's paths: an SVG whose rects carry their class (data-class) and time (data-v, ns);
 * data-length (and data-wall, as every partition bar of the page) is their sum (cp_total). */
static void path_bar(FILE *fp, const gp_dashboard *d, size_t i, bool ranks)
{
    const gp_critical_path *p = d->cp_bar[i];
    gp_ns total = d->cp_total[i];
    fputs("<tr><td class=\"gp-plabel\">", fp);
    if (ranks)
        fprintf(fp, "rank %d ", (int)d->cp_rank[i]);
    gp__html_str(fp, p->region && *p->region ? p->region : "whole trace");
    fprintf(fp,
            "</td><td><svg class=\"gp-part gp-cp-bar\" data-length=\"%lld\" data-wall=\"%lld\" "
            "viewBox=\"0 0 1000 18\" preserveAspectRatio=\"none\" role=\"img\">",
            (long long)total, (long long)total);
    double x = 0;
    for (int k = 0; k < GP_CP_COUNT; k++) {
        if (p->by_class[k] <= 0 || total <= 0)
            continue;
        double w = 1000.0 * (double)p->by_class[k] / (double)total;
        fprintf(fp,
                "<rect x=\"%.2f\" y=\"0\" width=\"%.2f\" height=\"18\" fill=\"%s\" "
                "data-class=\"%s\" data-v=\"%lld\"><title>%s: ",
                x, w, cp_fill[k], gp_cp_class_name((gp_cp_class)k), (long long)p->by_class[k],
                cp_words[k]);
        dur(fp, p->by_class[k]);
        fprintf(fp, " (%.1f%%)</title></rect>", 100.0 * (double)p->by_class[k] / (double)total);
        x += w;
    }
    fputs("</svg></td><td>", fp);
    dur(fp, total);
    fputs("</td></tr>\n", fp);
}

/* The critical path of every step (summed by the dashboard builder), or what is missing. */
static void paths(FILE *fp, const gp_dashboard *d)
{
    if (!d->n_cp_paths) {
        fputs("<p class=\"gp-na\" id=\"gp-critpath-na\">Critical path: not computed for this "
              "trace (no GPU work or launches to follow, or the analysis ran without it).</p>\n",
              fp);
        return;
    }
    fputs("<h3>Critical path of each step, by what bounds it</h3>\n<ul class=\"gp-legend\" "
          "id=\"gp-critpath-legend\">\n",
          fp);
    for (int k = 0; k < GP_CP_COUNT; k++) {
        if (d->cp_sums[k] <= 0)
            continue;
        fprintf(fp, "<li><span class=\"gp-swatch\" style=\"background:%s\"></span>%s <b>",
                cp_fill[k], cp_words[k]);
        dur(fp, d->cp_sums[k]);
        fputs("</b></li>\n", fp);
    }
    fputs("</ul>\n<table class=\"gp-parts\" id=\"gp-critpath\"><tbody>\n", fp);
    for (size_t i = 0; i < d->n_cp_bars; i++)
        path_bar(fp, d, i, d->analysis && d->analysis->n_ranks > 1);
    fputs("</tbody></table>\n", fp);
    if (d->n_cp_bars < d->n_cp_paths)
        fprintf(fp, "<p class=\"gp-note\">The first %zu of %zu paths.</p>\n", d->n_cp_bars,
                d->n_cp_paths);
}

void gp__dash_cause_html(FILE *fp, const gp_dashboard *d)
{
    const gp_analysis *a = d->analysis;
    if (!a)
        return;
    /* "what holds the step" only when the top finding is a cause of the critical path */
    fprintf(fp, "<section id=\"gp-cause\"><h2>%s</h2>\n",
            a->n_findings && a->findings[0].cause ? "What holds the step" : "Top finding");
    if (a->n_findings == 0) {
        fputs("<p class=\"gp-na\" id=\"gp-cause-none\">No bottleneck rule fired on this "
              "trace.</p>\n",
              fp);
    } else {
        const gp_finding *f = &a->findings[0];
        char title[512];
        gp__finding_title(f, title, sizeof title);
        fprintf(fp,
                "<p class=\"gp-cause gp-prio-%s\" id=\"gp-cause-top\" data-rule=\"%s\">"
                "<span class=\"gp-prio\">%s</span> <b>",
                gp_priority_name(f->priority), f->rule, gp_priority_name(f->priority));
        gp__html_str(fp, title);
        fputs("</b>", fp);
        if (a->n_ranks > 1) /* which ranks, and whose evidence the sentence quotes */
            gp__finding_ranks_html(fp, f, "gp-cause-ranks");
        fputs("<br>", fp);
        gp__html_str(fp, gp__finding_advice(f));
        fputs("</p>\n", fp);
    }
    if (!d->is_profile) /* a profile of ranges has no launches to follow: no path to miss */
        paths(fp, d);
    fputs("</section>\n", fp);
}
