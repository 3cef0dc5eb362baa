/* An adaptive, stable merge sort for arrays of any element type, generated per type by a macro
 * (so the comparison inlines: a qsort-style callback costs 2-3x on 50-100 byte elements).
 *
 * Traces arrive as a handful of long ascending runs (a Kineto track has a few out-of-order blocks;
 * a replicated or concatenated trace one run per copy; a set of GPU streams one run per stream),
 * so this is a natural merge sort: the input is cut into its maximal non-descending runs (short
 * ones extended to GP__MSORT_MIN_RUN by insertion sort, which bounds the run count for random
 * input), and runs are merged pairwise, bottom-up. Each merge skips the part of the left run that
 * is already below the right run and the part of the right run already above the left run (binary
 * searches), then buffers only the smaller of the two remaining sides. Sorted input costs one
 * comparison pass, a few overlapping runs little more; any input is O(n log n) comparisons.
 * Measured by bench/core/bench_core (docs/performance.md, "Core helpers"). */
#ifndef GP_CORE_MSORT_H
#define GP_CORE_MSORT_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define GP__MSORT_MIN_RUN 32

/* A qsort-style comparison: negative, zero or positive. */
typedef int (*gp__cmp_fn)(const void *, const void *);

/* Sorts base[0, n) (elements of size bytes) stably by cmp: equal elements keep their order, so
 * the result never depends on the C library (glibc's qsort promises no order for ties, and
 * changed algorithms in 2.37). The drop-in for qsort where the comparison need not inline (small
 * arrays, rows of a table); hot paths use GP__DEFINE_MERGE_SORT. Never fails: without memory for
 * its buffer it merges in place, in O(n log^2 n). */
void gp__msort(void *base, size_t n, size_t size, gp__cmp_fn cmp);
/* gp__msort without a buffer (no allocation; O(n log^2 n)): for out-of-memory paths and tests. */
void gp__msort_in_place(void *base, size_t n, size_t size, gp__cmp_fn cmp);

/* Defines `static inline size_t name(const T *v, size_t n, K key)`: the index of the first element
 * of v[0, n) for which before(const T *, K) is false (n when none), by binary search; v must be
 * partitioned by it (every element before key stands ahead of every other). With before `x < key`
 * that is C++'s lower_bound, with `x <= key` its upper_bound. */
#define GP__DEFINE_LOWER_BOUND(name, T, K, before)                                                 \
    static inline size_t name(const T *v, size_t n, K key)                                         \
    {                                                                                              \
        size_t lo = 0, hi = n;                                                                     \
        while (lo < hi) {                                                                          \
            size_t mid = lo + (hi - lo) / 2;                                                       \
            if (before(&v[mid], key))                                                              \
                lo = mid + 1;                                                                      \
            else                                                                                   \
                hi = mid;                                                                          \
        }                                                                                          \
        return lo;                                                                                 \
    }

/* Defines `static bool name(T *a, size_t n)`: sorts a[0, n) stably by cmp(const T *, const T *)
 * (negative, zero or positive). Returns false only when out of memory; a is then a permutation of
 * its input, not necessarily sorted. */
#define GP__DEFINE_MERGE_SORT(name, T, cmp)                                                        \
    static size_t name##_bound(const T *a, size_t lo, size_t hi, const T *x, bool greater)         \
    {                                                                                              \
        while (lo < hi) {                                                                          \
            size_t m = lo + (hi - lo) / 2;                                                         \
            int c = cmp(&a[m], x);                                                                 \
            if (greater ? c <= 0 : c < 0)                                                          \
                lo = m + 1;                                                                        \
            else                                                                                   \
                hi = m;                                                                            \
        }                                                                                          \
        return lo;                                                                                 \
    }                                                                                              \
    static void name##_merge(T *a, size_t lo, size_t mid, size_t hi, T *tmp)                       \
    {                                                                                              \
        if (cmp(&a[mid - 1], &a[mid]) <= 0)                                                        \
            return;                                                                                \
        /* Left elements <= a[mid] and right elements >= a[mid - 1] are already in place. */       \
        size_t i = name##_bound(a, lo, mid, &a[mid], true);                                        \
        size_t j = name##_bound(a, mid, hi, &a[mid - 1], false);                                   \
        size_t nl = mid - i, nr = j - mid;                                                         \
        if (nl <= nr) { /* buffer the left side, merge forwards */                                 \
            memcpy(tmp, a + i, nl * sizeof *a);                                                    \
            size_t l = 0, r = mid, k = i;                                                          \
            while (l < nl && r < j)                                                                \
                a[k++] = cmp(&a[r], &tmp[l]) < 0 ? a[r++] : tmp[l++];                              \
            memcpy(a + k, tmp + l, (nl - l) * sizeof *a);                                          \
        } else { /* buffer the right side, merge backwards */                                      \
            memcpy(tmp, a + mid, nr * sizeof *a);                                                  \
            size_t l = mid, r = nr, k = j;                                                         \
            while (l > i && r > 0)                                                                 \
                a[--k] = cmp(&a[l - 1], &tmp[r - 1]) > 0 ? a[--l] : tmp[--r];                      \
            memcpy(a + i, tmp, r * sizeof *a);                                                     \
        }                                                                                          \
    }                                                                                              \
    static bool name(T *a, size_t n)                                                               \
    {                                                                                              \
        if (n < 2)                                                                                 \
            return true;                                                                           \
        /* Run boundaries: runs[0] = 0 < runs[1] < ... < runs[n_runs] = n. */                      \
        size_t n_runs = 0;                                                                         \
        size_t *runs = malloc((n / GP__MSORT_MIN_RUN + 2) * sizeof *runs);                         \
        if (!runs)                                                                                 \
            return false;                                                                          \
        runs[0] = 0;                                                                               \
        for (size_t lo = 0; lo < n;) {                                                             \
            size_t hi = lo + 1;                                                                    \
            while (hi < n && cmp(&a[hi - 1], &a[hi]) <= 0)                                         \
                hi++;                                                                              \
            if (hi - lo < GP__MSORT_MIN_RUN && hi < n) { /* extend by insertion sort */            \
                size_t end = n < lo + GP__MSORT_MIN_RUN ? n : lo + GP__MSORT_MIN_RUN;              \
                for (; hi < end; hi++) {                                                           \
                    T x = a[hi];                                                                   \
                    size_t j = hi;                                                                 \
                    while (j > lo && cmp(&a[j - 1], &x) > 0) {                                     \
                        a[j] = a[j - 1];                                                           \
                        j--;                                                                       \
                    }                                                                              \
                    a[j] = x;                                                                      \
                }                                                                                  \
            }                                                                                      \
            runs[++n_runs] = hi;                                                                   \
            lo = hi;                                                                               \
        }                                                                                          \
        T *tmp = n_runs > 1 ? malloc((n / 2 + 1) * sizeof *tmp) : NULL;                            \
        if (n_runs > 1 && !tmp) {                                                                  \
            free(runs);                                                                            \
            return false;                                                                          \
        }                                                                                          \
        while (n_runs > 1) { /* one bottom-up pass: merge runs 2k and 2k+1 */                      \
            size_t out = 0;                                                                        \
            for (size_t k = 0; k + 1 < n_runs; k += 2) {                                           \
                name##_merge(a, runs[k], runs[k + 1], runs[k + 2], tmp);                           \
                runs[++out] = runs[k + 2];                                                         \
            }                                                                                      \
            if (n_runs % 2)                                                                        \
                runs[++out] = runs[n_runs];                                                        \
            n_runs = out;                                                                          \
        }                                                                                          \
        free(tmp);                                                                                 \
        free(runs);                                                                                \
        return true;                                                                               \
    }

#endif
