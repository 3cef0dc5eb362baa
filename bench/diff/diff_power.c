/* Measured false-positive rate and detection power of gpuprof diff's verdict (docs/diff.md,
 * "Measured false-positive rate and power"): seeded trials of one name, R runs per side (1, 3, 10),
 * each run CALLS calls of log-normal per-call noise (log-sd 0.10) times a per-run factor
 * (run-to-run log-sd 0.02 or 0.05, e.g. clocks or co-tenants), the current side's durations scaled
 * by 1 + the change (0, +5, +10, +30 % in total time). Each trial is compared with gp_diff_compute,
 * default options (threshold 5 %, alpha 0.05, Holm), and counted when its verdict is REGRESSION
 * (and, for the false-positive rate, either verdict). Deterministic: the same seeds give the same
 * table. usage: diff_power [--trials N]   (default 1000) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/diff_stats.h"
#include "gpuprof/diff.h"

enum { CALLS = 20 };

static gp_trace *run_trace(gp__rng *rng, double factor, double change)
{
    gp_trace *t;
    uint32_t track;
    gp_strid name;
    if (gp_trace_create("trial", &t) != GP_OK ||
        gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &track) != GP_OK ||
        gp_trace_intern(t, "k", 1, &name) != GP_OK)
        exit(1);
    gp_ns clock = 0;
    for (int i = 0; i < CALLS; i++) {
        gp_event ev = {0};
        ev.kind = GP_EV_KERNEL;
        ev.name = name;
        ev.track = track;
        ev.ts = clock;
        ev.dur = (gp_ns)llround(100000.0 * factor * (1 + change) * exp(0.1 * gp__rng_normal(rng)));
        clock += ev.dur + 1000;
        if (gp_trace_add_event(t, &ev) != GP_OK)
            exit(1);
    }
    if (gp_trace_finish(t) != GP_OK)
        exit(1);
    return t;
}

/* One trial: the verdict of "k". */
static gp_diff_type trial(uint64_t seed, int runs, double run_sd, double change)
{
    gp__rng rng;
    gp__rng_seed(&rng, seed);
    gp_trace *b[10], *c[10];
    for (int r = 0; r < runs; r++) {
        b[r] = run_trace(&rng, exp(run_sd * gp__rng_normal(&rng)), 0);
        c[r] = run_trace(&rng, exp(run_sd * gp__rng_normal(&rng)), change);
    }
    gp_diff_opts o;
    gp_diff_opts_init(&o);
    o.analyze = false;
    o.bootstrap = 0; /* the verdict does not use the CI */
    gp_diff *d = NULL;
    if (gp_diff_compute(gp_traces_const(b), (size_t)runs, gp_traces_const(c), (size_t)runs, &o, &d,
                        NULL) != GP_OK)
        exit(1);
    gp_diff_type type = GP_DIFF_NO_CHANGE;
    for (size_t i = 0; i < d->n_rows; i++)
        if (strcmp(d->rows[i].name, "k") == 0)
            type = d->rows[i].type;
    gp_diff_free(d);
    for (int r = 0; r < runs; r++) {
        gp_trace_free(b[r]);
        gp_trace_free(c[r]);
    }
    return type;
}

int main(int argc, char **argv)
{
    int trials = 1000;
    if (argc == 3 && strcmp(argv[1], "--trials") == 0)
        trials = atoi(argv[2]);
    if (trials <= 0) {
        fprintf(stderr, "usage: diff_power [--trials N]\n");
        return 2;
    }
    static const int runs[] = {1, 3, 10};
    static const double noise[] = {0.02, 0.05};
    static const double change[] = {0.05, 0.10, 0.30};
    printf("| runs per side | verdict | run-to-run log-sd | false positives: REGRESSION | "
           "either verdict | power +5 %% | +10 %% | +30 %% |\n|---|---|---|---|---|---|---|---|\n");
    for (size_t ri = 0; ri < 3; ri++) {
        for (size_t ni = 0; ni < 2; ni++) {
            int fp_reg = 0, fp_any = 0, power[3] = {0, 0, 0};
            uint64_t base = 1000000 * (ri + 1) + 100000 * ni;
            for (int i = 0; i < trials; i++) {
                gp_diff_type t = trial(base + (uint64_t)i, runs[ri], noise[ni], 0);
                fp_reg += t == GP_DIFF_REGRESSION;
                fp_any += t == GP_DIFF_REGRESSION || t == GP_DIFF_IMPROVEMENT;
                for (int k = 0; k < 3; k++)
                    power[k] += trial(base + 50000 * (uint64_t)(k + 1) + (uint64_t)i, runs[ri],
                                      noise[ni], change[k]) == GP_DIFF_REGRESSION;
            }
            printf("| %d | %s | %.2f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", runs[ri],
                   runs[ri] >= 4 ? "tested" : "untested", noise[ni], (double)fp_reg / trials,
                   (double)fp_any / trials, (double)power[0] / trials, (double)power[1] / trials,
                   (double)power[2] / trials);
        }
    }
    printf("\n%d trials per cell; %d calls per run, per-call log-sd 0.10; threshold 5 %%, alpha "
           "0.05\n",
           trials, CALLS);
    return 0;
}
