/* Statistics behind gpuprof diff: a seeded PRNG, the Mann-Whitney U test, a bootstrap CI of the
 * ratio of medians, and multiple-comparison adjustments. Internal (gp__ prefix). */
#ifndef GP_DIFF_STATS_H
#define GP_DIFF_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpuprof/core.h"

/* xoshiro256** seeded through splitmix64: deterministic for a given seed on every platform. */
typedef struct gp__rng {
    uint64_t s[4];
} gp__rng;

void gp__rng_seed(gp__rng *r, uint64_t seed);
uint64_t gp__rng_next(gp__rng *r);
/* Uniform in (0, 1): never exactly 0 or 1. */
double gp__rng_uniform(gp__rng *r);
/* Standard normal (Box-Muller, one value per call). */
double gp__rng_normal(gp__rng *r);
/* Gamma(shape a > 0, scale 1) (Marsaglia-Tsang; a < 1 through the a+1 boost). */
double gp__rng_gamma(gp__rng *r, double a);
/* Beta(a, b) as G1 / (G1 + G2). */
double gp__rng_beta(gp__rng *r, double a, double b);

/* Result of a two-sided Mann-Whitney U test of y against x. */
typedef struct gp__mwu {
    double u;   /* U of y: number of (x, y) pairs with y > x, ties counting 1/2 */
    double p;   /* two-sided p-value */
    bool exact; /* exact null distribution (no ties, n_x * n_y <= GP__MWU_EXACT_MAX) */
} gp__mwu;

/* Exact p-values are used when there are no ties and n_x * n_y is at most this. */
#define GP__MWU_EXACT_MAX 400

/* Tests y against x; both arrays must be sorted ascending (doubles). nx, ny >= 1.
 * GP_ENOMEM when the exact distribution's scratch space cannot be allocated. */
gp_status gp__mwu_test(const double *x, size_t nx, const double *y, size_t ny,
                       gp__mwu *out) GP_WARN_UNUSED;

/* P(U <= u) under the null for sizes (m, n) without ties, exactly. GP_ENOMEM. */
gp_status gp__mwu_exact_cdf(size_t m, size_t n, double u, double *out) GP_WARN_UNUSED;

/* Median of a sorted array (average of the two middle values for even n). 0 for n == 0. */
double gp__median_sorted(const double *v, size_t n);

/* One bootstrap draw of the median of a size-n resample of sorted v, in O(1): the k-th order
 * statistic of n uniform draws is Beta(k, n+1-k), mapped through the empirical quantile function
 * (for even n the next order statistic is drawn conditionally). Same distribution as resampling. */
double gp__boot_median(gp__rng *r, const double *v, size_t n);

/* Percentile bootstrap CI at level 1 - alpha of median(y) / median(x) with b resamples.
 * Writes NaN to both ends when fewer than half of the resamples had a non-zero base median.
 * GP_ENOMEM. */
gp_status gp__boot_ratio_ci(const double *x, size_t nx, const double *y, size_t ny, uint32_t b,
                            double alpha, uint64_t seed, double *lo, double *hi) GP_WARN_UNUSED;

/* Adjusts p[0..n) in place: Holm step-down (method 0), Benjamini-Hochberg step-up (1), none (2).
 * NaN entries are left alone and do not count in the family. GP_ENOMEM. */
gp_status gp__p_adjust(double *p, size_t n, int method) GP_WARN_UNUSED;

#endif
