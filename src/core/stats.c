#include "core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/msort.h"

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

void gp__sort_i64(int64_t *v, size_t n)
{
    if (n < 2)
        return;
    if (n < 32) {
        for (size_t i = 1; i < n; i++) {
            int64_t x = v[i];
            size_t j = i;
            while (j > 0 && v[j - 1] > x) {
                v[j] = v[j - 1];
                j--;
            }
            v[j] = x;
        }
        return;
    }
    if (n < 4096) {
        gp__msort(v, n, sizeof *v, cmp_i64);
        return;
    }
    /* LSD radix sort on the sign-flipped value, 16 bits at a time, skipping constant digits. */
    uint64_t *a = (uint64_t *)v, *tmp = malloc(n * sizeof *tmp);
    if (!tmp) {
        gp__msort(v, n, sizeof *v, cmp_i64);
        return;
    }
    for (size_t i = 0; i < n; i++)
        a[i] ^= 0x8000000000000000ULL;
    uint64_t *src = a, *dst = tmp;
    size_t *count = malloc(65536 * sizeof *count);
    if (!count) {
        free(tmp);
        for (size_t i = 0; i < n; i++)
            a[i] ^= 0x8000000000000000ULL;
        gp__msort(v, n, sizeof *v, cmp_i64);
        return;
    }
    for (int shift = 0; shift < 64; shift += 16) {
        memset(count, 0, 65536 * sizeof *count);
        for (size_t i = 0; i < n; i++)
            count[(src[i] >> shift) & 0xffff]++;
        if (count[(src[0] >> shift) & 0xffff] == n)
            continue;
        size_t sum = 0;
        for (size_t d = 0; d < 65536; d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[count[(src[i] >> shift) & 0xffff]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
    for (size_t i = 0; i < n; i++)
        a[i] ^= 0x8000000000000000ULL;
    free(count);
    free(tmp);
}

/* Where quantile q (linear interpolation) falls in n sorted values: *frac of the way from value
 * *lo to value *lo + 1; false when there is nothing to interpolate (no values: the quantile is 0;
 * else it is the last value). */
static bool quantile_at(size_t n, double q, size_t *lo, double *frac)
{
    if (n == 0)
        return false;
    double pos = q * (double)(n - 1);
    *lo = (size_t)pos;
    *frac = pos - (double)*lo;
    return *lo < n - 1;
}

double gp__quantile_sorted(const int64_t *v, size_t n, double q)
{
    size_t lo;
    double frac;
    if (!quantile_at(n, q, &lo, &frac))
        return n ? (double)v[n - 1] : 0;
    int64_t step; /* the int64 difference where it fits (exact); else the doubles' difference */
    double d = __builtin_sub_overflow(v[lo + 1], v[lo], &step) ? (double)v[lo + 1] - (double)v[lo]
                                                               : (double)step;
    return (double)v[lo] + frac * d;
}

int gp__cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double gp__median_d(double *v, size_t n)
{
    if (n == 0)
        return 0;
    gp__msort(v, n, sizeof *v, gp__cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double gp__quantile_sorted_d(const double *v, size_t n, double q)
{
    size_t lo;
    double frac;
    if (!quantile_at(n, q, &lo, &frac))
        return n ? v[n - 1] : 0;
    return v[lo] + frac * (v[lo + 1] - v[lo]);
}

void gp__stats_compute(int64_t *v, size_t n, gp__stats *st)
{
    memset(st, 0, sizeof *st);
    st->n = n;
    if (n == 0)
        return;
    gp__sort_i64(v, n);
    long double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    st->total = gp__sum_sat(sum);
    st->min = v[0];
    st->max = v[n - 1];
    st->mean = (double)(sum / n);
    long double ss = 0;
    for (size_t i = 0; i < n; i++) {
        long double d = v[i] - (long double)st->mean;
        ss += d * d;
    }
    st->stddev = sqrt((double)(ss / n));
    st->p50 = gp__quantile_sorted(v, n, 0.50);
    st->p95 = gp__quantile_sorted(v, n, 0.95);
    st->p99 = gp__quantile_sorted(v, n, 0.99);
}
