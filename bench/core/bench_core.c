/* bench_core: the measurements behind three core helpers, each against its baseline in the same
 * run (medians of 7 repetitions).
 *   gp__zero       clearing a per-event struct: the compiler's inline expansion of a constant-size
 *                  memset (`rep stos` on x86-64 for a few hundred bytes) vs the out-of-line call
 *   msort          sorting 1 M events (48 B) shaped like traces: the adaptive merge sort of
 *                  core/msort.h vs glibc qsort, and one comparison pass (the floor)
 *   gp__par_for    the fixed cost of one fork-join (thread start and join)
 * usage: bench_core */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/msort.h"
#include "core/par.h"
#include "core/util.h"
#include "gpuprof/trace.h"

#include "../bench_common.h"

#define REPS 7

/* ---- gp__zero ---- */

typedef struct s48 {
    char b[48];
} s48;
typedef struct s160 {
    char b[160];
} s160;
typedef struct s576 {
    char b[576];
} s576;

static volatile uint8_t sink;

#define ZERO_CASE(T)                                                                               \
    do {                                                                                           \
        enum { N = 2000000 };                                                                      \
        T x;                                                                                       \
        double in[REPS], out[REPS];                                                                \
        for (int r = 0; r < REPS; r++) {                                                           \
            double t0 = gp_bench_now();                                                            \
            for (int i = 0; i < N; i++) {                                                          \
                memset(&x, 0, sizeof x);                                                           \
                x.b[i % sizeof x.b] = 1;                                                           \
                __asm__ volatile("" : : "r"(&x) : "memory");                                       \
            }                                                                                      \
            double t1 = gp_bench_now();                                                            \
            for (int i = 0; i < N; i++) {                                                          \
                gp__zero(&x, sizeof x);                                                            \
                x.b[i % sizeof x.b] = 1;                                                           \
                __asm__ volatile("" : : "r"(&x) : "memory");                                       \
            }                                                                                      \
            double t2 = gp_bench_now();                                                            \
            in[r] = (t1 - t0) / N * 1e9;                                                           \
            out[r] = (t2 - t1) / N * 1e9;                                                          \
            sink = (uint8_t)(sink + x.b[0]);                                                       \
        }                                                                                          \
        double mi = gp_bench_median(in, REPS), mo = gp_bench_median(out, REPS);                    \
        printf("clear %3zu B    inline memset %6.1f ns   gp__zero %6.1f ns   ratio %.2fx\n",       \
               sizeof(T), mi, mo, mi / mo);                                                        \
    } while (0)

/* ---- sorting ---- */

static int cmp_event(const gp_event *x, const gp_event *y)
{
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->dur != y->dur)
        return x->dur > y->dur ? -1 : 1;
    return 0;
}

static int cmp_event_q(const void *a, const void *b)
{
    return cmp_event(a, b);
}

GP__DEFINE_MERGE_SORT(msort_events, gp_event, cmp_event)

static uint64_t rng = 88172645463325252ULL;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* shape 0: sorted; 1: 7 sorted copies one after another in time, each with 3 blocks of 2000
 * events moved 1 ms early (a Kineto track's out-of-order blocks, replicated); 2: random. */
static void fill(gp_event *e, size_t n, int shape)
{
    size_t per = n / 7 + 1;
    for (size_t i = 0; i < n; i++) {
        e[i] = (gp_event){0};
        e[i].dur = (gp_ns)(next_rand() % 5000);
        if (shape == 0)
            e[i].ts = (gp_ns)i * 1000;
        else if (shape == 1) {
            size_t k = i / per, j = i % per;
            e[i].ts = (gp_ns)(k * per + j) * 1000;
            if (j % (per / 3) < 2000 && j > 2000)
                e[i].ts -= 1000000;
        } else
            e[i].ts = (gp_ns)(next_rand() % (n * 1000));
    }
}

static void bench_sort(void)
{
    enum { N = 1000000 };
    static const char *names[] = {"sorted", "7 copies, 3 blocks each out of order", "random"};
    gp_event *src = malloc(N * sizeof *src), *a = malloc(N * sizeof *a);
    if (!src || !a)
        exit(1);
    for (int shape = 0; shape < 3; shape++) {
        fill(src, N, shape);
        double q[REPS], m[REPS], f[REPS];
        for (int r = 0; r < REPS; r++) {
            memcpy(a, src, N * sizeof *a);
            double t0 = gp_bench_now();
            size_t desc = 0;
            for (size_t i = 1; i < N; i++)
                desc += cmp_event(&a[i - 1], &a[i]) > 0;
            double t1 = gp_bench_now();
            qsort(a, N, sizeof *a, cmp_event_q);
            double t2 = gp_bench_now();
            memcpy(a, src, N * sizeof *a);
            double t3 = gp_bench_now();
            if (!msort_events(a, N))
                exit(1);
            double t4 = gp_bench_now();
            for (size_t i = 1; i < N; i++)
                if (cmp_event(&a[i - 1], &a[i]) > 0)
                    exit(3);
            f[r] = (t1 - t0) * 1e3;
            q[r] = (t2 - t1) * 1e3;
            m[r] = (t4 - t3) * 1e3;
            sink = (uint8_t)(sink + desc);
        }
        double mf = gp_bench_median(f, REPS), mq = gp_bench_median(q, REPS),
               mm = gp_bench_median(m, REPS);
        printf("sort 1M events, %-38s floor %6.1f ms  qsort %7.1f ms  msort %6.1f ms  "
               "qsort/msort %.1fx  msort/floor %.1fx\n",
               names[shape], mf, mq, mm, mq / mm, mm / mf);
    }
    free(src);
    free(a);
}

/* ---- fork-join ---- */

static void nothing(void *ctx, size_t i)
{
    (void)ctx;
    (void)i;
}

int main(void)
{
    ZERO_CASE(s48);
    ZERO_CASE(s160);
    ZERO_CASE(s576);
    bench_sort();
    double v[REPS];
    for (int r = 0; r < REPS; r++) {
        enum { N = 2000 };
        double t0 = gp_bench_now();
        for (int i = 0; i < N; i++)
            gp__par_for(2, 2, nothing, NULL);
        v[r] = (gp_bench_now() - t0) / N * 1e6;
    }
    printf("gp__par_for, 2 empty tasks on 2 threads: %.1f us per call\n", gp_bench_median(v, REPS));
    return 0;
}
