/* Benchmark of gp_diff_compute: two synthetic traces (N kernel events over K names each, seeded
 * log-normal durations, one name 10 % slower), and optionally two real traces given on the command
 * line. Baseline measured in the same run: gp_summary_compute over the same two traces (the
 * per-name grouping and percentiles every comparison needs anyway). Prints the median of R
 * repetitions of each and the ratio diff / baseline, for three settings: everything (2000
 * bootstrap resamples + the analyze breakdowns), no analyze, and the bare tests (no CI).
 * usage: bench_diff [--events N] [--names K] [--reps R] [BASE.json CURRENT.json] */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "analyze/diff_stats.h"
#include "gpuprof/diff.h"
#include "gpuprof/summary.h"

#include "../bench_common.h"

static gp_trace *synth(uint64_t seed, size_t n_events, size_t n_names, double slow)
{
    gp__rng rng;
    gp__rng_seed(&rng, seed);
    gp_trace *t;
    uint32_t track;
    if (gp_trace_create("bench", &t) != GP_OK ||
        gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &track) != GP_OK)
        exit(1);
    gp_strid *ids = malloc(n_names * sizeof *ids);
    for (size_t k = 0; k < n_names; k++) {
        char name[64];
        int len = snprintf(name, sizeof name, "void kernel_%zu<float, 128>(float*, int)", k);
        if (gp_trace_intern(t, name, (size_t)len, &ids[k]) != GP_OK)
            exit(1);
    }
    gp_ns clock = 0;
    for (size_t i = 0; i < n_events; i++) {
        /* Zipf-like name popularity: a few names hold most calls, as in real traces. */
        size_t k = (size_t)((double)n_names * pow(gp__rng_uniform(&rng), 3.0));
        if (k >= n_names)
            k = n_names - 1;
        double med = 20000.0 * (1.0 + (double)(k % 17));
        if (k == 0)
            med *= slow;
        gp_event ev = {0};
        ev.kind = GP_EV_KERNEL;
        ev.name = ids[k];
        ev.track = track;
        ev.ts = clock;
        ev.dur = (gp_ns)llround(med * exp(0.2 * gp__rng_normal(&rng)));
        clock += ev.dur + 500;
        if (gp_trace_add_event(t, &ev) != GP_OK)
            exit(1);
    }
    free(ids);
    if (gp_trace_finish(t) != GP_OK)
        exit(1);
    return t;
}

static void run(const char *label, gp_trace *a, gp_trace *b, int reps, uint32_t bootstrap,
                bool analyze)
{
    gp_diff_opts o;
    gp_diff_opts_init(&o);
    o.bootstrap = bootstrap;
    o.analyze = analyze;
    double *td = malloc((size_t)reps * sizeof *td), *ts = malloc((size_t)reps * sizeof *ts);
    size_t rows = 0, tested = 0;
    for (int r = 0; r < reps; r++) {
        int64_t t0 = gp__clock_ns();
        gp_trace *both[2] = {a, b};
        gp_summary *s = NULL;
        if (gp_summary_compute(gp_traces_const(both), 2, NULL, &s, NULL) != GP_OK)
            exit(1);
        int64_t t1 = gp__clock_ns();
        gp_diff *d = NULL;
        if (gp_diff_compute(gp_traces_const(&a), 1, gp_traces_const(&b), 1, &o, &d, NULL) != GP_OK)
            exit(1);
        int64_t t2 = gp__clock_ns();
        rows = d->n_rows;
        tested = d->n_tested;
        gp_summary_free(s);
        gp_diff_free(d);
        ts[r] = (double)(t1 - t0) / 1e6;
        td[r] = (double)(t2 - t1) / 1e6;
    }
    size_t events = gp_trace_event_count(a) + gp_trace_event_count(b);
    double md = gp_bench_median(td, reps), ms = gp_bench_median(ts, reps);
    printf("%-12s B=%-4u analyze=%-3s events %9zu names %6zu tested %5zu | diff median %8.2f ms | "
           "baseline "
           "(summary of both) %8.2f ms | ratio %.2f\n",
           label, bootstrap, analyze ? "on" : "off", events, rows, tested, md, ms, md / ms);
    free(td);
    free(ts);
}

int main(int argc, char **argv)
{
    size_t n_events = 500000, n_names = 300;
    int reps = 5, argi = 1;
    for (; argi + 1 < argc && argv[argi][0] == '-'; argi += 2) {
        if (strcmp(argv[argi], "--events") == 0)
            n_events = strtoull(argv[argi + 1], NULL, 10);
        else if (strcmp(argv[argi], "--names") == 0)
            n_names = strtoull(argv[argi + 1], NULL, 10);
        else if (strcmp(argv[argi], "--reps") == 0)
            reps = atoi(argv[argi + 1]);
        else
            break;
    }
    if (reps < 1 || n_names < 1) {
        fprintf(stderr, "usage: bench_diff [--events N] [--names K] [--reps R] [BASE CURRENT]\n");
        return 2;
    }
    gp_trace *a = synth(1, n_events, n_names, 1.0), *b = synth(2, n_events, n_names, 1.10);
    run("synthetic", a, b, reps, 2000, true);
    run("synthetic", a, b, reps, 2000, false);
    run("synthetic", a, b, reps, 0, false);
    gp_trace_free(a);
    gp_trace_free(b);
    if (argi + 2 == argc) {
        gp_error err = {0};
        if (gp_trace_read(argv[argi], NULL, &a, &err) != GP_OK ||
            gp_trace_read(argv[argi + 1], NULL, &b, &err) != GP_OK) {
            fprintf(stderr, "bench_diff: %s\n", err.msg);
            return 2;
        }
        run("real traces", a, b, reps, 2000, true);
        run("real traces", a, b, reps, 2000, false);
        run("real traces", a, b, reps, 0, false);
        gp_trace_free(a);
        gp_trace_free(b);
    }
    return 0;
}
