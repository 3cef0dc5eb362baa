/* The report's collectives section (a job of 2+ ranks): who waits for whom as a bar per rank, the
 * summary by (collective, size, dtype) with bus bandwidth against the link's peak, and the
 * collectives where the most time was waited (docs/reports.md, "Collectives"). Formats the
 * analysis' gp_collectives; computes nothing but bar widths. */
#include <math.h>
#include <stdbool.h>

#include "gpuprof/collectives.h"
#include "render/render_internal.h"

/* A duration as the other sections write it ("35.552 ms", "58.333 \u00b5s"), unbroken. */
static void us(FILE *fp, double ns)
{
    char b[48];
    gp__fmt_dur_html(b, sizeof b, (int64_t)llround(ns));
    for (const char *p = b; *p; p++)
        if (*p == ' ')
            fputs("&nbsp;", fp);
        else
            fputc(*p, fp);
}

/* One bar row per rank: the time it made the others wait, and the time it waited. */
static void wait_chart(FILE *fp, const gp_collectives *c)
{
    double top = 0;
    for (size_t i = 0; i < c->n_ranks; i++)
        top = fmax(top, fmax((double)c->ranks[i].caused_total, (double)c->ranks[i].wait_total));
    fputs("<h3>Who waits for whom (per rank)</h3>\n<table class=\"gp-bars\" id=\"gp-coll-wait\">\n"
          "<thead><tr><th>rank</th><th>the others waited for it</th><th>it waited</th>"
          "<th>arrived last</th></tr></thead>\n<tbody>\n",
          fp);
    for (size_t i = 0; i < c->n_ranks; i++) {
        const gp_coll_rank *r = &c->ranks[i];
        bool hot = r->rank == c->straggler;
        fprintf(fp,
                "<tr><td>%s%d%s</td><td><div class=\"gp-track\"><div class=\"gp-bar\" "
                "style=\"width:%.1f%%;background:#c0504d\"></div></div><span>",
                hot ? "<b>" : "", (int)r->rank, hot ? "</b>" : "",
                top > 0 ? 100 * (double)r->caused_total / top : 0);
        us(fp, (double)r->caused_total);
        fprintf(fp,
                "</span></td><td><div class=\"gp-track\"><div class=\"gp-bar gp-bar2\" "
                "style=\"width:%.1f%%\"></div></div><span>",
                top > 0 ? 100 * (double)r->wait_total / top : 0);
        us(fp, (double)r->wait_total);
        fprintf(fp, "</span></td><td>%llu of %llu</td></tr>\n", (unsigned long long)r->arrived_last,
                (unsigned long long)c->implicit_sync);
    }
    fputs("</tbody></table>\n", fp);
}

static void summary_table(FILE *fp, const gp_collectives *c)
{
    double peak = NAN;
    for (size_t i = 0; i < c->n_colls && isnan(peak); i++)
        peak = c->colls[i].peak_gbps;
    fputs("<h3>By collective, size and dtype</h3>\n<table class=\"gp-table gp-small\" "
          "id=\"gp-coll-summary\">\n<thead><tr><th>collective</th><th>dtype</th><th>bytes</th>"
          "<th>count</th><th>latency (total)</th><th>latency (mean)</th><th>start skew (mean)"
          "</th><th>wait (mean)</th><th>bus bandwidth</th><th>of link peak</th></tr></thead>\n"
          "<tbody>\n",
          fp);
    for (size_t i = 0; i < c->n_summary; i++) {
        const gp_coll_summary *s = &c->summary[i];
        fputs("<tr><td>", fp);
        gp__html_str(fp, s->name);
        fputs("</td><td>", fp);
        gp__html_str(fp, s->dtype[0] ? s->dtype : "-");
        if (s->bytes >= 0)
            fprintf(fp, "</td><td>%lld", (long long)s->bytes);
        else
            fputs("</td><td>-", fp);
        fprintf(fp, "</td><td>%llu</td><td>", (unsigned long long)s->count);
        us(fp, (double)s->latency_total);
        fputs("</td><td>", fp);
        us(fp, s->latency_mean);
        fputs("</td><td>", fp);
        us(fp, s->start_skew_mean);
        fputs("</td><td>", fp);
        us(fp, s->avg_wait_mean);
        if (isnan(s->bus_gbps_mean))
            fputs("</td><td>n/a (no size)</td><td>-</td></tr>\n", fp);
        else if (isnan(peak))
            fprintf(fp, "</td><td>%.2f GB/s</td><td>-</td></tr>\n", s->bus_gbps_mean);
        else
            fprintf(fp, "</td><td>%.2f GB/s</td><td>%.0f%% of %.0f GB/s</td></tr>\n",
                    s->bus_gbps_mean, 100 * s->bus_gbps_mean / peak, peak);
    }
    fputs("</tbody></table>\n", fp);
}

void gp__dash_collectives_html(FILE *fp, const gp_analysis *a)
{
    const gp_collectives *c = a ? a->collectives : NULL;
    if (!c || c->n_colls == 0)
        return;
    fputs("<section id=\"gp-collectives\"><h2>Collectives across ranks</h2>\n<p class=\"gp-sub\">",
          fp);
    fprintf(fp, "%zu collectives matched on %zu ranks %s. ", c->n_colls, c->n_ranks,
            c->by_order ? "by kernel order (no process-group metadata)"
                        : "by process group and position");
    if (c->straggler >= 0)
        fprintf(fp, "Rank <b>%d</b> is the one the others wait for most.", (int)c->straggler);
    fputs("</p>\n", fp);
    if (c->note.msg[0]) {
        fputs("<p class=\"gp-note\" id=\"gp-coll-note\">", fp);
        gp__html_str(fp, c->note.msg);
        fputs("</p>\n", fp);
    }
    /* one above the other: the summary's ten columns do not fit half the page */
    wait_chart(fp, c);
    summary_table(fp, c);
    fputs("<p class=\"gp-note\">Latency: the shortest member's duration (the rest is "
          "waiting); wait: the latest start minus the rank's start; bus bandwidth: nccl-tests' "
          "definition in 10<sup>9</sup>&nbsp;B/s, against the intra-node link's per-direction "
          "peak where the device is known (docs/analyses.md, \"Collectives across ranks\").</p>\n"
          "</section>\n",
          fp);
}
