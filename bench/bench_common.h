/* Helpers shared by the benchmarks under bench/: a clock reading in seconds and medians. The
 * statistics themselves are core/stats.h's (the ones gpuprof reports with). */
#ifndef GP_BENCH_COMMON_H
#define GP_BENCH_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "core/stats.h"

/* Seconds on clock c (CLOCK_MONOTONIC for wall time, CLOCK_PROCESS_CPUTIME_ID for CPU time). */
static inline double gp_bench_seconds(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Wall-clock seconds. */
static inline double gp_bench_now(void)
{
    return gp_bench_seconds(CLOCK_MONOTONIC);
}

/* Median of v (sorted in place): the mean of the two middle values for even n. */
static inline double gp_bench_median(double *v, int n)
{
    return gp__median_d(v, (size_t)n);
}

/* The same for int64 samples (v sorted in place). */
static inline double gp_bench_median_i64(int64_t *v, int n)
{
    gp__sort_i64(v, (size_t)n);
    return gp__quantile_sorted(v, (size_t)n, 0.5);
}

#endif
