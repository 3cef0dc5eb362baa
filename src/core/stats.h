/* Descriptive statistics over int64 samples (durations in ns). */
#ifndef GP_CORE_STATS_H
#define GP_CORE_STATS_H

#include <stddef.h>
#include <stdint.h>

typedef struct gp__stats {
    size_t n;
    int64_t total, min, max;
    double mean, stddev; /* population standard deviation */
    double p50, p95, p99;
} gp__stats;

/* Copies the figures of the gp__stats st (total, min, max, mean, stddev, p50, p95, p99) into the
 * fields of the same names of *dst: the public rows that report them (a summary row, a profiled
 * function's result). The count is left to the caller (its field names differ). */
#define GP__STATS_COPY(dst, st)                                                                    \
    do {                                                                                           \
        (dst)->total = (st).total;                                                                 \
        (dst)->min = (st).min;                                                                     \
        (dst)->max = (st).max;                                                                     \
        (dst)->mean = (st).mean;                                                                   \
        (dst)->stddev = (st).stddev;                                                               \
        (dst)->p50 = (st).p50;                                                                     \
        (dst)->p95 = (st).p95;                                                                     \
        (dst)->p99 = (st).p99;                                                                     \
    } while (0)

/* Sorts v in place (ascending) and fills *st. n may be 0 (all fields 0). */
void gp__stats_compute(int64_t *v, size_t n, gp__stats *st);

/* The sum of int64 values held in a long double, as an int64: saturated, not overflowed (a sum
 * beyond int64, 292 years of ns, is not a real total). */
static inline int64_t gp__sum_sat(long double sum)
{
    return sum >= 9.2233720368547758e18L    ? INT64_MAX
           : sum <= -9.2233720368547758e18L ? INT64_MIN
                                            : (int64_t)sum;
}
/* Sorts v ascending (radix sort for large n, insertion sort for tiny). */
void gp__sort_i64(int64_t *v, size_t n);
/* Quantile q in [0,1] of an ascending array, linear interpolation between closest ranks (numpy's
 * default "linear" method). 0 for n == 0. */
double gp__quantile_sorted(const int64_t *v, size_t n, double q);
/* qsort comparator for doubles (ascending; NaN is not expected). */
int gp__cmp_double(const void *a, const void *b);
/* Median of v (sorted in place); 0 for n == 0. The mean of the two middle values for even n. */
double gp__median_d(double *v, size_t n);
/* Same for doubles. */
double gp__quantile_sorted_d(const double *v, size_t n, double q);

#endif
