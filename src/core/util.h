/* Internal helpers shared by every module: growable arrays, checked arithmetic, min/max.
 * Internal (gp__ prefix); not installed. */
#ifndef GP_CORE_UTIL_H
#define GP_CORE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprof/core.h"

#define GP_MIN(a, b) ((a) < (b) ? (a) : (b))
#define GP_MAX(a, b) ((a) > (b) ? (a) : (b))
#define GP_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
/* Frees the pointer lvalue p and sets it to NULL (no dangling pointer left in the struct). */
#define GP_FREE_CLEAR(p) (free(p), (p) = NULL)
/* Three-way comparison of two scalars: -1, 0 or 1. */
#define GP_CMP(a, b) (((a) > (b)) - ((a) < (b)))
/* In a comparator: returns the order of a and b when they differ (a key of a lexicographic
 * comparison; the next key decides on a tie). */
#define GP_CMP_KEY(a, b)                                                                           \
    do {                                                                                           \
        if ((a) != (b))                                                                            \
            return (a) < (b) ? -1 : 1;                                                             \
    } while (0)
/* The name of enum value i in a table indexed by the enum (designated initializers), or fallback
 * when i is out of range or has no entry: the one way an enum becomes text. */
#define GP_NAME_OF(table, i, fallback)                                                             \
    ((size_t)(i) < GP_ARRAY_LEN(table) && (table)[(size_t)(i)] ? (table)[(size_t)(i)] : (fallback))

/* One row of a name -> value table: the counterpart of GP_NAME_OF, the one way text becomes an
 * enum value or a flag (aliases are more rows with the same value). */
typedef struct gp__named {
    const char *name;
    int value;
} gp__named;

/* The value of the first row of t[0, n) whose name equals name (ignoring ASCII case when nocase),
 * or fallback when name is NULL or no row has it. */
int gp__value_of(const gp__named *t, size_t n, const char *name, bool nocase, int fallback);
#define GP_VALUE_OF(table, name, fallback)                                                         \
    gp__value_of(table, GP_ARRAY_LEN(table), name, false, fallback)
#define GP_VALUE_OF_NOCASE(table, name, fallback)                                                  \
    gp__value_of(table, GP_ARRAY_LEN(table), name, true, fallback)

/* The index of name in names[0, n) (entries may be NULL; ignoring ASCII case when nocase), or -1
 * when name is NULL or not there: parses an enum whose names GP_NAME_OF reads. */
int gp__index_of(const char *const *names, size_t n, const char *name, bool nocase);

/* Grows *data (elements of elem bytes, capacity *cap) so it holds at least need elements, doubling.
 * On failure *data and *cap are unchanged and GP_ENOMEM is returned. Large blocks are realloc'd,
 * which glibc does with mremap: growing does not copy nor double the resident size. */
gp_status gp__grow(void **data, size_t *cap, size_t elem, size_t need) GP_WARN_UNUSED;

/* gp__grow to exactly need elements (when *cap is smaller), for an array whose size is known or
 * bounded in advance: a heap block is resident wherever it was ever written, and the room doubling
 * leaves past the last element is written by whatever reuses the block once it is freed (the view's
 * GPU events, 96 bytes each, had up to twice their room; the critical path, run after the view is
 * freed, then wrote it: 9 MB of `analyze`'s peak on large_v100_nccl x7). Growing past it again
 * doubles, as gp__grow does. GP_ENOMEM, *data and *cap unchanged. */
gp_status gp__reserve(void **data, size_t *cap, size_t elem, size_t need) GP_WARN_UNUSED;

/* Appends one zeroed element to a (data, n, cap) triple and returns a pointer to it, or NULL when
 * out of memory. Usage: `gp_event *e = GP_PUSH(t->events, t->n, t->cap);` */
#define GP_PUSH(data, n, cap)                                                                      \
    (((n) < (cap) || gp__grow((void **)&(data), &(cap), sizeof(*(data)), (n) + 1) == GP_OK)        \
         ? memset(&(data)[(n)++], 0, sizeof(*(data)))                                              \
         : NULL)

/* A growable byte buffer with a size cap (0 = no cap). */
typedef struct gp__buf {
    char *data;
    size_t len;
    size_t cap;
    size_t max; /* appends beyond max fail with GP_ELIMIT */
} gp__buf;

gp_status gp__buf_append(gp__buf *b, const void *p, size_t n) GP_WARN_UNUSED;
gp_status gp__buf_printf(gp__buf *b, const char *fmt, ...) GP_PRINTF(2, 3) GP_WARN_UNUSED;
/* Ensures data is NUL-terminated (not counted in len). */
gp_status gp__buf_terminate(gp__buf *b) GP_WARN_UNUSED;
void gp__buf_free(gp__buf *b);

/* memset(p, 0, n), always through the C library. For hot paths that clear a struct of a few
 * hundred bytes: compilers expand a constant-size memset of that size inline as `rep stos`, which
 * costs 33-38 ns for 576 bytes on the reference machine against 7-8 ns for glibc's vector memset
 * (bench/core/bench_core; docs/performance.md, "Core helpers"). Small structs are faster inline:
 * use this only where measured. Being out of line keeps the call. */
void gp__zero(void *p, size_t n);

/* a + b, saturating at INT64_MIN / INT64_MAX instead of overflowing. */
static inline int64_t gp__sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return a > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

/* a * b, saturating at INT64_MIN / INT64_MAX instead of overflowing. */
static inline int64_t gp__sat_mul(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r))
        return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
    return r;
}

/* a / b rounded up, for a >= 0 and b > 0, without the overflow of (a + b - 1) / b near INT64_MAX.
 */
static inline int64_t gp__ceil_div(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

/* (int64_t)d (ns), truncating toward zero as a cast does, but saturating at INT64_MIN / INT64_MAX
 * where the cast would be undefined (|d| >= 2^63: a saturated INT64_MAX sum is 2^63 as a double);
 * NaN is 0. */
static inline int64_t gp__ns_of_double(double d)
{
    if (d >= 0x1p63)
        return INT64_MAX;
    if (d >= -0x1p63)
        return (int64_t)d;
    return d < 0 ? INT64_MIN : 0; /* d < -2^63, else NaN */
}

/* The status of a failed open or stat of an input: GP_ENOENT when nothing is at the path (ENOENT,
 * ENOTDIR), GP_ENOMEM for ENOMEM, else GP_EIO. Writing a file keeps GP_EIO (an output error). */
gp_status gp__status_of_errno(int e);

/* 64-bit hash of bytes (wyhash-style mixing); stable across runs. */
uint64_t gp__hash_bytes(const void *p, size_t n);
/* The same hash of every byte of p[0..n) from a seed (gp__hash_bytes is seed 0). A table keyed by
 * untrusted text uses a secret seed, so nobody can prepare inputs that share a hash. */
uint64_t gp__hash_bytes_seeded(const void *p, size_t n, uint64_t seed);
static inline uint64_t gp__hash_u64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

#endif
