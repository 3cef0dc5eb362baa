/* gp__msort: the stable sort behind qsort-style call sites (see msort.h). */
#include "core/msort.h"

#include <stdint.h>

#define INSERTION_MAX 16 /* ranges this short are sorted by insertion */

static void swap_bytes(char *a, char *b, size_t n)
{
    while (n--) {
        char t = *a;
        *a++ = *b;
        *b++ = t;
    }
}

/* Stable insertion sort of elements [lo, hi). */
static void insertion(char *b, size_t lo, size_t hi, size_t size, gp__cmp_fn cmp)
{
    for (size_t i = lo + 1; i < hi; i++)
        for (size_t j = i; j > lo && cmp(b + (j - 1) * size, b + j * size) > 0; j--)
            swap_bytes(b + (j - 1) * size, b + j * size, size);
}

static void reverse(char *b, size_t lo, size_t hi, size_t size)
{
    while (hi > lo + 1)
        swap_bytes(b + lo++ * size, b + --hi * size, size);
}

/* [lo, mid) [mid, hi) -> [mid, hi) [lo, mid). */
static void rotate(char *b, size_t lo, size_t mid, size_t hi, size_t size)
{
    reverse(b, lo, mid, size);
    reverse(b, mid, hi, size);
    reverse(b, lo, hi, size);
}

/* The first element of [lo, hi) not before x (upper: the first after x). */
static size_t bound(const char *b, size_t lo, size_t hi, size_t size, const char *x, bool upper,
                    gp__cmp_fn cmp)
{
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        int c = cmp(b + m * size, x);
        if (upper ? c <= 0 : c < 0)
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}

/* Stable merge of the sorted [lo, mid) and [mid, hi) without a buffer, by rotations (libstdc++'s
 * __merge_without_buffer): O(n log n) moves per merge, for when no buffer could be had. */
static void merge_in_place(char *b, size_t lo, size_t mid, size_t hi, size_t size, gp__cmp_fn cmp)
{
    if (lo >= mid || mid >= hi)
        return;
    if (hi - lo == 2) {
        if (cmp(b + mid * size, b + lo * size) < 0)
            swap_bytes(b + lo * size, b + mid * size, size);
        return;
    }
    size_t cut1, cut2;
    if (mid - lo > hi - mid) {
        cut1 = lo + (mid - lo) / 2;
        cut2 = bound(b, mid, hi, size, b + cut1 * size, false, cmp);
    } else {
        cut2 = mid + (hi - mid) / 2;
        cut1 = bound(b, lo, mid, size, b + cut2 * size, true, cmp);
    }
    rotate(b, cut1, mid, cut2, size);
    size_t new_mid = cut1 + (cut2 - mid);
    merge_in_place(b, lo, cut1, new_mid, size, cmp);
    merge_in_place(b, new_mid, cut2, hi, size, cmp);
}

/* Stable merge through tmp (room for hi - lo elements). */
static void merge_buffered(char *b, size_t lo, size_t mid, size_t hi, size_t size, char *tmp,
                           gp__cmp_fn cmp)
{
    size_t i = lo, j = mid, k = 0;
    while (i < mid && j < hi) {
        if (cmp(b + j * size, b + i * size) < 0)
            memcpy(tmp + k++ * size, b + j++ * size, size);
        else
            memcpy(tmp + k++ * size, b + i++ * size, size);
    }
    memcpy(tmp + k * size, b + i * size, (mid - i) * size);
    k += mid - i;
    memcpy(b + lo * size, tmp, k * size); /* what is left of [mid, hi) is in place */
}

static void sort_range(char *b, size_t lo, size_t hi, size_t size, char *tmp, gp__cmp_fn cmp)
{
    if (hi - lo <= INSERTION_MAX) {
        insertion(b, lo, hi, size, cmp);
        return;
    }
    size_t mid = lo + (hi - lo) / 2;
    sort_range(b, lo, mid, size, tmp, cmp);
    sort_range(b, mid, hi, size, tmp, cmp);
    if (cmp(b + (mid - 1) * size, b + mid * size) <= 0)
        return;
    if (tmp)
        merge_buffered(b, lo, mid, hi, size, tmp, cmp);
    else
        merge_in_place(b, lo, mid, hi, size, cmp);
}

void gp__msort(void *base, size_t n, size_t size, gp__cmp_fn cmp)
{
    if (n < 2 || size == 0)
        return;
    char *tmp = n > INSERTION_MAX && n <= SIZE_MAX / size ? malloc(n * size) : NULL;
    sort_range(base, 0, n, size, tmp, cmp); /* no buffer: merged in place, still stable */
    free(tmp);
}

void gp__msort_in_place(void *base, size_t n, size_t size, gp__cmp_fn cmp)
{
    if (n >= 2 && size > 0)
        sort_range(base, 0, n, size, NULL, cmp);
}
