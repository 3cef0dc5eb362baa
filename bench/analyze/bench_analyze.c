/* bench_analyze: reads a trace (ingest, the trace module's) and runs every analysis on it
 * (gp_analyze_job, this module's), N times; prints the median of each phase, the peak RSS, and the
 * ratio of the analysis time to a baseline measured in the same run: one linear pass that touches
 * every event of the model (the floor any analysis pays). Each run is a fresh child process, as a
 * `gpuprof analyze` invocation is: the peak RSS printed is the largest of the runs' own peaks (in
 * one long-lived process the allocator's growth over several runs would be counted instead).
 *
 * usage: bench_analyze TRACE [runs] [--hta] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.h"
#include "gpuprof/analyze.h"
#include "gpuprof/trace.h"

#include "../bench_common.h"

/* CPU time of the whole process (every thread of a parallel read or analysis), ns. */
static int64_t process_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_analyze TRACE [runs] [--hta]\n");
        return 2;
    }
    int runs = argc > 2 && argv[2][0] != '-' ? atoi(argv[2]) : 3;
    bool hta = argc > 2 && strcmp(argv[argc - 1], "--hta") == 0;
    if (runs < 1 || runs > 50)
        runs = 3;
    int64_t ingest[50], analysis[50], baseline[50], analysis_cpu[50], ingest_cpu[50];
    size_t events = 0;
    volatile int64_t sink = 0;
    long peak_kb = 0;
    int threads_used = 0, pieces = 0; /* of the last run */
    for (int i = 0; i < runs; i++) {
        int pfd[2];
        if (pipe(pfd) != 0)
            return 1;
        pid_t child = fork();
        if (child < 0)
            return 1;
        if (child > 0) { /* parent: collect this run's figures and its peak RSS */
            close(pfd[1]);
            int64_t rec[8];
            ssize_t got = read(pfd[0], rec, sizeof rec);
            close(pfd[0]);
            int status;
            struct rusage cru;
            wait4(child, &status, 0, &cru);
            if (got != (ssize_t)sizeof rec || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return 2;
            ingest[i] = rec[0];
            ingest_cpu[i] = rec[1];
            baseline[i] = rec[2];
            analysis[i] = rec[3];
            analysis_cpu[i] = rec[4];
            events = (size_t)rec[5];
            threads_used = (int)rec[6];
            pieces = (int)rec[7];
            if (cru.ru_maxrss > peak_kb)
                peak_kb = cru.ru_maxrss;
            continue;
        }
        close(pfd[0]);
        gp_read_opts rd;
        gp_read_opts_init(&rd);
        rd.quiet = true;
        gp_trace *t = NULL;
        gp_error err = {0};
        int64_t c0 = process_cpu_ns();
        int64_t t0 = gp__clock_ns();
        if (gp_trace_read(argv[1], &rd, &t, &err) != GP_OK) {
            fprintf(stderr, "bench_analyze: %s\n", err.msg);
            return 2;
        }
        int64_t t1 = gp__clock_ns();
        int64_t c1 = process_cpu_ns();
        int64_t acc = 0;
        for (size_t k = 0; k < t->n_tracks; k++)
            for (size_t e = 0; e < t->tracks[k].n_events; e++)
                acc += t->tracks[k].events[e].dur ^ t->tracks[k].events[e].correlation;
        sink += acc;
        int64_t t2 = gp__clock_ns();
        int64_t c2 = process_cpu_ns();
        gp_analyze_opts o;
        gp_analyze_opts_init(&o);
        if (hta) {
            o.hta = true;
            o.steps = GP_STEPS_HTA;
        }
        gp_analysis *a = NULL;
        if (gp_analyze_trace(t, &o, &a, &err) != GP_OK) {
            fprintf(stderr, "bench_analyze: analysis failed: %s\n", err.msg);
            return 1;
        }
        int64_t t3 = gp__clock_ns();
        analysis_cpu[i] = process_cpu_ns() - c2;
        ingest_cpu[i] = c1 - c0;
        ingest[i] = t1 - t0;
        baseline[i] = t2 - t1;
        analysis[i] = t3 - t2;
        events = gp_trace_event_count(t);
        gp_analysis_free(a);
        gp_trace_free(t);
        int64_t rec[8] = {ingest[i],       ingest_cpu[i],   baseline[i],           analysis[i],
                          analysis_cpu[i], (int64_t)events, t->stats.threads_used, t->stats.pieces};
        ssize_t put = write(pfd[1], rec, sizeof rec);
        _exit(put == (ssize_t)sizeof rec && sink != 42 ? 0 : 1);
    }
    double mi = (gp_bench_median_i64(ingest, runs) / 1e6),
           ma = (gp_bench_median_i64(analysis, runs) / 1e6),
           mb = (gp_bench_median_i64(baseline, runs) / 1e6);
    printf("trace: %s (%zu events), %d runs, %s definitions\n", argv[1], events, runs,
           hta ? "HTA" : "gpuprof");
    printf("ingest   (gp_trace_read)   median %9.1f ms wall, %9.1f ms CPU (all threads; last run: "
           "%d threads, %d pieces)\n",
           mi, (gp_bench_median_i64(ingest_cpu, runs) / 1e6), threads_used, pieces);
    printf("analysis (gp_analyze_job)  median %9.1f ms wall, %9.1f ms CPU (all threads)\n", ma,
           (gp_bench_median_i64(analysis_cpu, runs) / 1e6));
    printf("total                      median %9.1f ms   (target <= 600 ms)\n", mi + ma);
    printf("baseline (one pass over every event) median %.1f ms; analysis / baseline = %.1fx\n", mb,
           mb > 0 ? ma / mb : 0.0);
    printf("peak RSS %.1f MB, the largest of the runs   (target <= 200 MB)\n",
           (double)peak_kb / 1024.0);
    printf("vs HTA's 31.4 s / 1.89 GB on a 367 MB trace (issue 3): %.0fx faster\n",
           31400.0 / (mi + ma));
    return 0;
}
