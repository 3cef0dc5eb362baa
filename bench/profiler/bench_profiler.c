/* Benchmark of the profiler's hot path. Every figure is the median over rounds of the mean ns
 * per pair within a round, all measured in this run:
 *   rdtsc pair          two raw TSC reads (the clock floor of an enabled range)
 *   clock_gettime pair  two CLOCK_MONOTONIC reads (the floor when the TSC is not usable)
 *   nvtx push/pop       nvtxRangePushA + nvtxRangePop with no tool attached
 *   range enabled       gp_range_begin + gp_range_end, recording
 *   range disabled      the same with the profiler disabled
 * Then the same with two threads running at once (per-thread figures). Prints the ratios the
 * targets are stated in: enabled <= 1.2 x the clock pair, disabled <= 2 ns.
 * Usage: bench_profiler [rounds] [pairs-per-round] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/stats.h"
#include "gpuprof/profiler.h"
#include "produce/profiler/tsc.h"

#ifdef GP_BENCH_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

static int g_rounds = 31;
static long g_pairs = 50000;
static gp_profiler *g_on, *g_off;
static volatile uint64_t g_sink;

typedef enum { M_RDTSC, M_CLOCK, M_NVTX, M_ON, M_OFF, M_COUNT } mode;
static const char *const mode_name[M_COUNT] = {"rdtsc pair", "clock_gettime pair",
                                               "nvtx push/pop (no tool)", "range enabled",
                                               "range disabled"};

/* One round: mean ns per pair. */
static double round_ns(mode m)
{
    uint64_t acc = 0;
    int64_t a = gp__clock_ns();
    switch (m) {
    case M_RDTSC:
        for (long i = 0; i < g_pairs; i++) {
            uint64_t x = gp__ticks_now(true);
            uint64_t y = gp__ticks_now(true);
            acc += y - x;
        }
        break;
    case M_CLOCK:
        for (long i = 0; i < g_pairs; i++) {
            int64_t x = gp__clock_ns();
            int64_t y = gp__clock_ns();
            acc += (uint64_t)(y - x);
        }
        break;
    case M_NVTX:
#ifdef GP_BENCH_NVTX
        for (long i = 0; i < g_pairs; i++) {
            nvtxRangePushA("bench");
            nvtxRangePop();
        }
#endif
        break;
    case M_ON:
        for (long i = 0; i < g_pairs; i++) {
            gp_range_begin(g_on, "bench", NULL);
            gp_range_end(g_on);
        }
        break;
    case M_OFF:
        for (long i = 0; i < g_pairs; i++) {
            gp_range_begin(g_off, "bench", NULL);
            gp_range_end(g_off);
        }
        break;
    default:
        break;
    }
    int64_t b = gp__clock_ns();
    g_sink += acc;
    return (double)(b - a) / (double)g_pairs;
}

/* Median over rounds of every mode, interleaved so that drifts hit all modes alike. The enabled
 * profiler is flushed between rounds (outside the timing) so its ring never fills. */
static void measure(double med[M_COUNT])
{
    int64_t *v[M_COUNT];
    for (int m = 0; m < M_COUNT; m++)
        v[m] = malloc(sizeof(int64_t) * (size_t)g_rounds);
    for (int r = 0; r < g_rounds; r++) {
        for (int m = 0; m < M_COUNT; m++) {
            v[m][r] = (int64_t)(round_ns((mode)m) * 1000.0); /* ps */
            if (m == M_ON)
                gp_profiler_reset(g_on);
        }
    }
    for (int m = 0; m < M_COUNT; m++) {
        gp__sort_i64(v[m], (size_t)g_rounds);
        med[m] = (double)v[m][g_rounds / 2] / 1000.0;
        free(v[m]);
    }
}

static pthread_barrier_t g_bar;
static double g_thr_med[2][M_COUNT];

static void *thread_main(void *arg)
{
    int id = (int)(intptr_t)arg;
    for (long done = 0; done < (2L << 17); done += g_pairs) { /* this thread's ring */
        round_ns(M_ON);
        gp_profiler_flush(g_on);
    }
    pthread_barrier_wait(&g_bar);
    measure(g_thr_med[id]);
    return NULL;
}

static void print_row(const char *label, const double med[M_COUNT], bool tsc)
{
    double base = tsc ? med[M_RDTSC] : med[M_CLOCK];
    printf("%-10s", label);
    for (int m = 0; m < M_COUNT; m++)
        printf("  %s %.2f", mode_name[m], med[m]);
    printf("\n");
    printf("%-10s  enabled / %s = %.3f (target <= 1.2)   disabled = %.2f ns (target <= 2)"
           "   nvtx / %s = %.3f\n",
           "", tsc ? "rdtsc pair" : "clock pair", med[M_ON] / base, med[M_OFF],
           tsc ? "rdtsc pair" : "clock pair", med[M_NVTX] / base);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        g_rounds = atoi(argv[1]) | 1;
    if (argc > 2)
        g_pairs = atol(argv[2]);
    if (g_rounds < 3 || g_pairs < 1000 || g_pairs > (1L << 17)) {
        fprintf(stderr, "usage: bench_profiler [rounds>=3] [1000<=pairs-per-round<=131072]\n");
        return 2;
    }
    unsetenv("NVTX_INJECTION64_PATH"); /* "no tool attached" */
    gp_profiler_opts o;
    gp_profiler_opts_init(&o);
    o.ring_records = (size_t)1 << 17; /* > pairs per round: nothing is dropped */
    o.memory_budget = (size_t)1 << 30;
    if (gp_profiler_create(&o, &g_on) != GP_OK)
        return 1;
    o.enabled = false;
    if (gp_profiler_create(&o, &g_off) != GP_OK)
        return 1;
    gp_profiler_stats st;
    gp_profiler_get_stats(g_on, &st);
    bool tsc = strcmp(st.clock, "tsc") == 0;
    printf("gpuprof bench_profiler: %d rounds x %ld pairs, clock %s (%.3f GHz, invariant TSC: "
           "%s), ns per pair (median of rounds)\n",
           g_rounds, g_pairs, st.clock, st.tsc_ghz, st.tsc_invariant ? "yes" : "no");
#ifndef GP_BENCH_NVTX
    printf("(no NVTX headers in this build: the nvtx column is an empty loop)\n");
#endif
    /* Warm up: thread registration and the first touch of every page of the ring (a real
     * program pays these once; they are not the cost of a range). */
    for (long done = 0; done < (2L << 17); done += g_pairs) {
        round_ns(M_ON);
        gp_profiler_reset(g_on);
    }

    double med[M_COUNT];
    measure(med);
    print_row("1 thread", med, tsc);

    pthread_t th[2];
    pthread_barrier_init(&g_bar, NULL, 2);
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, thread_main, (void *)(intptr_t)i);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    print_row("2 threads", g_thr_med[0], tsc);
    print_row("", g_thr_med[1], tsc);
    gp_profiler_get_stats(g_on, &st);
    printf("dropped during the run: %llu\n", (unsigned long long)st.dropped);
    gp_profiler_destroy(g_on);
    gp_profiler_destroy(g_off);
    return 0;
}
