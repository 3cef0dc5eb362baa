/* Stable LSD radix sort of (key, value) pairs (see radix.h). 11-bit digits; only as many passes as
 * the largest key needs, so keys rebased to the trace start (< 2^44 ns) take 4 passes. Up to
 * SMALL_N pairs are sorted by insertion instead: each radix pass walks 2,048 digit counts, which
 * for a handful of pairs with 64-bit keys (correlation ids) is 12 K steps and three allocations
 * to sort what insertion sorts in a few dozen comparisons. Pairs that arrive as at most MERGE_RUNS
 * ascending runs are merged instead (merge_runs): the analyses collect correlation ids a track at
 * a time, each track in time order, so their keys are one run per track (sorted: no pass at all).
 * Measured in docs/performance.md (issue 37, sixth pass). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/radix.h"

#define RADIX_BITS 11
#define RADIX (1u << RADIX_BITS)
#define SMALL_N 64
#define MERGE_RUNS 16 /* 4 merge passes at most, against the radix sort's 3 to 6 of two each */

/* Stable: a pair moves left only past strictly greater keys. */
static void insertion_sort_kv(uint64_t *keys, uint64_t *vals, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint64_t k = keys[i], v = vals[i];
        size_t j = i;
        for (; j > 0 && keys[j - 1] > k; j--) {
            keys[j] = keys[j - 1];
            vals[j] = vals[j - 1];
        }
        keys[j] = k;
        vals[j] = v;
    }
}

/* The pairs and a buffer of as many, passed back and forth: each pass reads s* and writes d*. */
typedef struct pingpong {
    uint64_t *keys, *vals; /* the caller's arrays */
    uint64_t *bk, *bv;     /* the buffer */
    uint64_t *sk, *sv, *dk, *dv;
} pingpong;

static gp_status pingpong_init(pingpong *b, uint64_t *keys, uint64_t *vals, size_t n)
{
    b->keys = b->sk = keys;
    b->vals = b->sv = vals;
    b->bk = b->dk = malloc(n * sizeof(*b->bk));
    b->bv = b->dv = malloc(n * sizeof(*b->bv));
    if (b->bk && b->bv)
        return GP_OK;
    free(b->bk);
    free(b->bv);
    return GP_ENOMEM;
}

/* After a pass: what it wrote is the next pass's input. */
static void pingpong_swap(pingpong *b)
{
    uint64_t *k = b->sk, *v = b->sv;
    b->sk = b->dk;
    b->sv = b->dv;
    b->dk = k;
    b->dv = v;
}

/* After the last pass: the result in the caller's arrays, the buffer freed. */
static void pingpong_done(pingpong *b, size_t n)
{
    if (b->sk != b->keys) {
        memcpy(b->keys, b->sk, n * sizeof(*b->keys));
        memcpy(b->vals, b->sv, n * sizeof(*b->vals));
    }
    free(b->bk);
    free(b->bv);
}

/* Stable merge of the ascending runs [at[0], at[1]), ..., [at[r - 1], at[r]) of the pairs into
 * one, pairwise, bottom-up, between the pairs and a buffer of n (ties: the earlier run first). */
static gp_status merge_runs(uint64_t *keys, uint64_t *vals, size_t n, size_t *at, size_t r)
{
    pingpong b;
    if (pingpong_init(&b, keys, vals, n) != GP_OK)
        return GP_ENOMEM;
    for (; r > 1; r = (r + 1) / 2) {
        const uint64_t *sk = b.sk, *sv = b.sv;
        uint64_t *dk = b.dk, *dv = b.dv;
        for (size_t x = 0; x < r; x += 2) {
            size_t i = at[x], mid = at[x + 1 < r ? x + 1 : r], end = at[x + 2 < r ? x + 2 : r];
            size_t j = mid, o = i;
            while (i < mid && j < end) {
                bool right = sk[j] < sk[i];
                dk[o] = right ? sk[j] : sk[i];
                dv[o++] = right ? sv[j++] : sv[i++];
            }
            memcpy(&dk[o], &sk[i], (mid - i) * sizeof(*dk));
            memcpy(&dv[o], &sv[i], (mid - i) * sizeof(*dv));
            o += mid - i;
            memcpy(&dk[o], &sk[j], (end - j) * sizeof(*dk));
            memcpy(&dv[o], &sv[j], (end - j) * sizeof(*dv));
            at[x / 2] = at[x];
        }
        at[(r + 1) / 2] = at[r];
        pingpong_swap(&b);
    }
    pingpong_done(&b, n);
    return GP_OK;
}

gp_status gp__radix_sort_kv(uint64_t *keys, uint64_t *vals, size_t n)
{
    if (n < 2)
        return GP_OK;
    if (n <= SMALL_N) {
        insertion_sort_kv(keys, vals, n);
        return GP_OK;
    }
    uint64_t max = keys[0];
    size_t at[MERGE_RUNS + 1], runs = 1;
    at[0] = 0;
    for (size_t i = 1; i < n; i++) {
        max |= keys[i];
        if (keys[i] < keys[i - 1]) {
            if (runs < MERGE_RUNS)
                at[runs] = i;
            runs++;
        }
    }
    if (runs == 1)
        return GP_OK;
    if (runs <= MERGE_RUNS) {
        at[runs] = n;
        return merge_runs(keys, vals, n, at, runs);
    }
    int passes = 0;
    while (passes * RADIX_BITS < 64 && (max >> (passes * RADIX_BITS)) != 0)
        passes++;
    if (passes == 0)
        return GP_OK;
    size_t *count = malloc(RADIX * sizeof(*count));
    pingpong b;
    if (!count || pingpong_init(&b, keys, vals, n) != GP_OK) {
        free(count);
        return GP_ENOMEM;
    }
    for (int p = 0; p < passes; p++) {
        const uint64_t *sk = b.sk, *sv = b.sv;
        uint64_t *dk = b.dk, *dv = b.dv;
        int shift = p * RADIX_BITS;
        memset(count, 0, RADIX * sizeof(*count));
        for (size_t i = 0; i < n; i++)
            count[(sk[i] >> shift) & (RADIX - 1)]++;
        size_t sum = 0;
        for (size_t d = 0; d < RADIX; d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            size_t pos = count[(sk[i] >> shift) & (RADIX - 1)]++;
            dk[pos] = sk[i];
            dv[pos] = sv[i];
        }
        pingpong_swap(&b);
    }
    pingpong_done(&b, n);
    free(count);
    return GP_OK;
}
