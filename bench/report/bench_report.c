/* bench_report: timeline.html of a large trace.
 *   bench_report TRACE [RUNS] [--browser]
 * Prints the median time to build + write timeline.html, the baseline (the Chrome JSON writer on
 * the same trace, same run) and their ratio, the page size in bytes per drawn event and per model
 * event, and with --browser the median time to first paint in headless Chromium (the page records
 * performance.now() after its first full draw in data-first-paint-ms). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpuprof/report.h"
#include "gpuprof/trace.h"

#include "../bench_common.h"

static long file_size(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

/* Runs headless Chromium on the page and returns data-first-paint-ms, or -1; *parse_ms and
 * *draw_ms receive the page's JSON.parse time and its decode + first draw time. */
static double first_paint_ms(const char *page, double *parse_ms, double *draw_ms)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "d=$(mktemp -d) && timeout 120 chromium --headless=new --no-sandbox --disable-gpu "
             "--disable-background-networking --disable-component-update --no-first-run "
             "--user-data-dir=$d --virtual-time-budget=10000 --dump-dom 'file://%s' 2>/dev/null "
             "| head -c 2000 | grep -o 'data-[a-z-]*-ms=\"[0-9]*\"' | grep -o '[0-9]*' "
             "| tr '\\n' ' '; "
             "rm -rf $d",
             page);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    /* attribute order in the page: parse, build-draw, first-paint */
    double ms = -1;
    if (fscanf(p, "%lf %lf %lf", parse_ms, draw_ms, &ms) != 3)
        ms = -1;
    pclose(p);
    return ms;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_report TRACE [RUNS] [--browser]\n");
        return 2;
    }
    const char *path = argv[1];
    int runs = argc > 2 && argv[2][0] != '-' ? atoi(argv[2]) : 3;
    bool browser = false;
    for (int i = 2; i < argc; i++)
        browser |= strcmp(argv[i], "--browser") == 0;
    if (runs < 1 || runs > 20)
        runs = 3;
    gp_read_opts ro;
    gp_read_opts_init(&ro);
    ro.quiet = true;
    gp_job *job;
    gp_error err;
    double t0 = gp_bench_now();
    if (gp_job_read(path, &ro, &job, &err) != GP_OK) {
        fprintf(stderr, "bench_report: %s\n", err.msg);
        return 2;
    }
    double t_read = gp_bench_now() - t0;
    size_t model_events = 0;
    for (size_t i = 0; i < job->n_ranks; i++)
        model_events += gp_trace_event_count(job->ranks[i]);
    char page[4096], chrome[4096];
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(page, sizeof page, "%s/bench_report_timeline.html", tmp);
    snprintf(chrome, sizeof chrome, "%s/bench_report_chrome.json", tmp);
    double gen[20], base[20];
    uint64_t drawn = 0;
    for (int r = 0; r < runs; r++) {
        t0 = gp_bench_now();
        gp_timeline *tl;
        if (gp_timeline_build(gp_job_traces(job), job->n_ranks, NULL, &tl, NULL) != GP_OK ||
            gp_timeline_write_html(tl, "bench", page, &err) != GP_OK) {
            fprintf(stderr, "bench_report: timeline failed\n");
            return 1;
        }
        drawn = tl->n_events;
        gp_timeline_free(tl);
        gen[r] = gp_bench_now() - t0;
        t0 = gp_bench_now();
        if (gp_trace_write_chrome(job->ranks[0], chrome, &err) != GP_OK) {
            fprintf(stderr, "bench_report: %s\n", err.msg);
            return 1;
        }
        base[r] = gp_bench_now() - t0;
    }
    long size = file_size(page), csize = file_size(chrome);
    double mg = gp_bench_median(gen, runs), mb = gp_bench_median(base, runs);
    printf("trace: %s (%zu model events, read in %.2f s)\n", path, model_events, t_read);
    printf("timeline.html build+write: median %.3f s over %d runs\n", mg, runs);
    printf("baseline Chrome JSON writer: median %.3f s; ratio timeline/baseline %.2f\n", mb,
           mg / mb);
    printf("timeline.html: %ld bytes, %llu drawn events: %.1f bytes/drawn event, "
           "%.1f bytes/model event (Chrome JSON: %.1f bytes/model event)\n",
           size, (unsigned long long)drawn, (double)size / (double)(drawn ? drawn : 1),
           (double)size / (double)(model_events ? model_events : 1),
           (double)csize / (double)(model_events ? model_events : 1));
    if (browser) {
        double fp[20], pa[20], dr[20];
        int n = 0;
        for (int r = 0; r < runs; r++) {
            double ms = first_paint_ms(page, &pa[n], &dr[n]);
            if (ms >= 0)
                fp[n++] = ms;
        }
        if (n)
            printf("first paint in headless Chromium: median %.0f ms over %d runs (of which "
                   "JSON.parse %.0f ms, decode + first draw %.0f ms; the rest is loading the "
                   "page)\n",
                   gp_bench_median(fp, n), n, gp_bench_median(pa, n), gp_bench_median(dr, n));
        else
            printf("first paint: chromium not available or page not ready\n");
    }
    unlink(chrome);
    gp_job_free(job);
    return 0;
}
