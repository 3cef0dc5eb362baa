/* Statistics behind gpuprof diff (see diff_stats.h and docs/internals/diff.md). */
#include "analyze/diff_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/msort.h"
#include "core/stats.h"

/* ---- PRNG --------------------------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void gp__rng_seed(gp__rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t gp__rng_next(gp__rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double gp__rng_uniform(gp__rng *r)
{
    /* 53 random bits, shifted by half a step so the result is in (0, 1). */
    return ((double)(gp__rng_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

double gp__rng_normal(gp__rng *r)
{
    double u1 = gp__rng_uniform(r), u2 = gp__rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

double gp__rng_gamma(gp__rng *r, double a)
{
    if (a < 1.0) {
        double u = gp__rng_uniform(r);
        return gp__rng_gamma(r, a + 1.0) * pow(u, 1.0 / a);
    }
    double d = a - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x = gp__rng_normal(r), v = 1.0 + c * x;
        if (v <= 0)
            continue;
        v = v * v * v;
        double u = gp__rng_uniform(r);
        if (log(u) < 0.5 * x * x + d - d * v + d * log(v))
            return d * v;
    }
}

double gp__rng_beta(gp__rng *r, double a, double b)
{
    double x = gp__rng_gamma(r, a), y = gp__rng_gamma(r, b);
    return x / (x + y);
}

/* ---- Mann-Whitney U ------------------------------------------------------------------------ */

/* The exact null distribution (pmf) of U for sizes (m, n) without ties, in a new array of
 * m*n+1 doubles (caller frees); NULL when out of memory. */
static double *mwu_exact_pmf(size_t m, size_t n)
{
    /* The distribution is symmetric in (m, n): iterate i over the larger size, keep arrays for
     * every j up to the smaller. p(i,j,u) = j/(i+j) p(i,j-1,u-i) + i/(i+j) p(i-1,j,u): the largest
     * of the i+j values is a y (adding i pairs) or an x. Cost about (m n)^2 / 4. */
    size_t a = m > n ? m : n, b = m > n ? n : m;
    size_t stride = a * b + 1;
    double *prev = calloc((b + 1) * stride, sizeof *prev);
    double *curr = calloc((b + 1) * stride, sizeof *curr);
    double *pmf = malloc(stride * sizeof *pmf);
    if (!prev || !curr || !pmf) {
        free(prev);
        free(curr);
        free(pmf);
        return NULL;
    }
    /* Row i = 0: U = 0 with probability 1 for every j. */
    for (size_t j = 0; j <= b; j++)
        prev[j * stride] = 1.0;
    for (size_t i = 1; i <= a; i++) {
        curr[0] = 1.0; /* j = 0 */
        for (size_t j = 1; j <= b; j++) {
            double py = (double)j / (double)(i + j), px = (double)i / (double)(i + j);
            double *c = curr + j * stride;
            const double *left = curr + (j - 1) * stride, *up = prev + j * stride;
            size_t umax = i * j;
            for (size_t k = 0; k <= umax; k++) {
                /* up[] is defined up to (i-1)*j, left[] up to i*(j-1); beyond, zero. */
                double v = k <= (i - 1) * j ? px * up[k] : 0.0;
                if (k >= i && k - i <= i * (j - 1))
                    v += py * left[k - i];
                c[k] = v;
            }
        }
        double *t = prev;
        prev = curr;
        curr = t;
    }
    memcpy(pmf, prev + b * stride, stride * sizeof *pmf);
    free(prev);
    free(curr);
    return pmf;
}

gp_status gp__mwu_exact_cdf(size_t m, size_t n, double u, double *out)
{
    if (m == 0 || n == 0) {
        *out = u >= 0 ? 1.0 : 0.0;
        return GP_OK;
    }
    double *pmf = mwu_exact_pmf(m, n);
    if (!pmf)
        return GP_ENOMEM;
    double cdf = 0;
    for (size_t k = 0; k <= m * n && (double)k <= u + 1e-9; k++)
        cdf += pmf[k];
    free(pmf);
    *out = cdf > 1.0 ? 1.0 : cdf;
    return GP_OK;
}

gp_status gp__mwu_test(const double *x, size_t nx, const double *y, size_t ny, gp__mwu *out)
{
    memset(out, 0, sizeof *out);
    /* Merge the two sorted samples; each tie group gets its average rank. */
    size_t i = 0, j = 0, rank = 0;
    double ry = 0, tie_term = 0;
    bool ties = false;
    while (i < nx || j < ny) {
        double v = (j >= ny || (i < nx && x[i] <= y[j])) ? x[i] : y[j];
        size_t cx = 0, cy = 0;
        while (i < nx && x[i] == v) {
            i++;
            cx++;
        }
        while (j < ny && y[j] == v) {
            j++;
            cy++;
        }
        size_t t = cx + cy;
        double avg = (double)rank + ((double)t + 1.0) / 2.0;
        ry += avg * (double)cy;
        if (t > 1) {
            ties = true;
            tie_term += (double)t * (double)t * (double)t - (double)t;
        }
        rank += t;
    }
    double u = ry - (double)ny * ((double)ny + 1.0) / 2.0;
    out->u = u;
    double mn = (double)nx * (double)ny;
    if (!ties && mn <= GP__MWU_EXACT_MAX) {
        double *pmf = mwu_exact_pmf(nx, ny);
        if (!pmf)
            return GP_ENOMEM;
        double lo = 0, hi = 0; /* P(U <= u), P(U >= u) */
        for (size_t k = 0; k <= nx * ny; k++) {
            if ((double)k <= u + 1e-9)
                lo += pmf[k];
            if ((double)k >= u - 1e-9)
                hi += pmf[k];
        }
        free(pmf);
        double p = 2.0 * (lo < hi ? lo : hi);
        out->p = p > 1.0 ? 1.0 : p;
        out->exact = true;
        return GP_OK;
    }
    double n = (double)(nx + ny);
    double var = mn / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    if (!(var > 0)) {
        out->p = 1.0;
        return GP_OK;
    }
    double dev = fabs(u - mn / 2.0) - 0.5; /* continuity correction */
    if (dev < 0)
        dev = 0;
    out->p = erfc(dev / sqrt(var) / sqrt(2.0));
    if (out->p > 1.0)
        out->p = 1.0;
    return GP_OK;
}

/* ---- bootstrap ----------------------------------------------------------------------------- */

double gp__median_sorted(const double *v, size_t n)
{
    if (n == 0)
        return 0;
    if (n % 2)
        return v[n / 2];
    return 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static inline double quantile_draw(const double *v, size_t n, double u)
{
    size_t idx = (size_t)(u * (double)n);
    return v[idx < n ? idx : n - 1];
}

/* A draw of the k-th of n uniform order statistics, Beta(k, n+1-k). With both parameters at least
 * 100 the Beta is nearly normal (skewness and excess kurtosis below 0.02 around the median), so a
 * normal draw with its mean and variance replaces the two gamma draws; tests compare both paths
 * with real resampling. */
static double order_stat(gp__rng *r, size_t k, size_t n)
{
    double a = (double)k, b = (double)(n + 1 - k);
    if (a >= 100 && b >= 100) {
        double s = a + b, mean = a / s, sd = sqrt(a * b / (s * s * (s + 1.0)));
        double u = mean + sd * gp__rng_normal(r);
        return u <= 0 ? 0 : (u >= 1 ? 0x1.fffffffffffffp-1 : u);
    }
    return gp__rng_beta(r, a, b);
}

double gp__boot_median(gp__rng *r, const double *v, size_t n)
{
    if (n == 1)
        return v[0];
    if (n % 2)
        return quantile_draw(v, n, order_stat(r, (n + 1) / 2, n));
    size_t k = n / 2;
    double uk = order_stat(r, k, n);
    /* Given U_(k) = uk, the other n-k draws are uniform on (uk, 1); their minimum is U_(k+1):
     * uk + (1 - uk) * Beta(1, n-k), and Beta(1, m) = 1 - U^(1/m). */
    double w = 1.0 - pow(gp__rng_uniform(r), 1.0 / (double)(n - k));
    double uk1 = uk + (1.0 - uk) * w;
    return 0.5 * (quantile_draw(v, n, uk) + quantile_draw(v, n, uk1));
}

gp_status gp__boot_ratio_ci(const double *x, size_t nx, const double *y, size_t ny, uint32_t b,
                            double alpha, uint64_t seed, double *lo, double *hi)
{
    *lo = *hi = NAN;
    if (b == 0 || nx == 0 || ny == 0)
        return GP_OK;
    double *r = malloc((size_t)b * sizeof *r);
    if (!r)
        return GP_ENOMEM;
    gp__rng rng;
    gp__rng_seed(&rng, seed);
    size_t k = 0;
    for (uint32_t i = 0; i < b; i++) {
        double mx = gp__boot_median(&rng, x, nx), my = gp__boot_median(&rng, y, ny);
        if (mx > 0)
            r[k++] = my / mx;
    }
    if (k * 2 >= b) {
        gp__msort(r, k, sizeof *r, gp__cmp_double);
        *lo = gp__quantile_sorted_d(r, k, alpha / 2.0);
        *hi = gp__quantile_sorted_d(r, k, 1.0 - alpha / 2.0);
    }
    free(r);
    return GP_OK;
}

/* ---- multiple comparisons ------------------------------------------------------------------ */

/* Stable sort of indices by p: insertion sort for small runs, merge sort otherwise. */
static void sort_idx(size_t *idx, size_t *tmp, size_t n, const double *p)
{
    if (n < 2)
        return;
    if (n < 16) {
        for (size_t i = 1; i < n; i++) {
            size_t v = idx[i], j = i;
            while (j > 0 && p[idx[j - 1]] > p[v]) {
                idx[j] = idx[j - 1];
                j--;
            }
            idx[j] = v;
        }
        return;
    }
    size_t h = n / 2;
    sort_idx(idx, tmp, h, p);
    sort_idx(idx + h, tmp, n - h, p);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = p[idx[j]] < p[idx[i]] ? idx[j++] : idx[i++];
    while (i < h)
        tmp[k++] = idx[i++];
    while (j < n)
        tmp[k++] = idx[j++];
    memcpy(idx, tmp, n * sizeof *idx);
}

gp_status gp__p_adjust(double *p, size_t n, int method)
{
    if (method == 2 || n == 0)
        return GP_OK;
    size_t *idx = malloc(n * sizeof *idx), *tmp = malloc(n * sizeof *tmp);
    if (!idx || !tmp) {
        free(idx);
        free(tmp);
        return GP_ENOMEM;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(p[i]))
            idx[m++] = i;
    sort_idx(idx, tmp, m, p);
    if (method == 0) {
        /* Holm: adj_(i) = max_{j <= i} min(1, (m - j + 1) p_(j)), 1-based. */
        double run = 0;
        for (size_t i = 0; i < m; i++) {
            double v = (double)(m - i) * p[idx[i]];
            if (v > 1)
                v = 1;
            if (v > run)
                run = v;
            p[idx[i]] = run;
        }
    } else {
        /* Benjamini-Hochberg: adj_(i) = min_{j >= i} min(1, m p_(j) / j), 1-based. */
        double run = 1.0;
        for (size_t i = m; i-- > 0;) {
            double v = (double)m * p[idx[i]] / (double)(i + 1);
            if (v < run)
                run = v;
            p[idx[i]] = run;
        }
    }
    free(idx);
    free(tmp);
    return GP_OK;
}
