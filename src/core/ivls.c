/* Interval lists: see ivls.h. */
#include "core/ivls.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/radix.h"
#include "core/util.h"

void gp__ivls_free(gp__ivls *l)
{
    free(l->v);
    memset(l, 0, sizeof(*l));
}

/* The most ascending runs sorted by merging them (MERGE_RUNS) rather than by radix: lists pushed
 * a track at a time are one run per track. */
#define MERGE_RUNS 64

/* Stable merge of the ascending runs v[at[0], at[1]), ..., v[at[n - 1], at[n]) into one, through
 * a buffer of the list's length (the radix sort's keys, indices and output took 48 bytes an
 * interval besides the list: the step breakdown's peak, 8 MB on large_v100_nccl x7). */
static gp_status merge_runs(gp__ivls *l, size_t *at, size_t n)
{
    gp__ivl *src = l->v, *dst = malloc(l->n * sizeof(*dst));
    if (!dst)
        return GP_ENOMEM;
    for (; n > 1; n = (n + 1) / 2) {
        for (size_t r = 0; r < n; r += 2) {
            size_t i = at[r], mid = at[GP_MIN(r + 1, n)], end = at[GP_MIN(r + 2, n)], o = i;
            size_t j = mid;
            while (i < mid && j < end)
                dst[o++] = src[j].s < src[i].s ? src[j++] : src[i++]; /* ties: the earlier run */
            memcpy(&dst[o], &src[i], (mid - i) * sizeof(*dst));
            o += mid - i;
            memcpy(&dst[o], &src[j], (end - j) * sizeof(*dst));
            at[r / 2] = at[r];
        }
        at[(n + 1) / 2] = at[n];
        gp__ivl *tmp = src;
        src = dst;
        dst = tmp;
    }
    free(dst);
    l->v = src;
    l->cap = l->n;
    return GP_OK;
}

gp_status gp__ivls_sort(gp__ivls *l)
{
    if (l->n < 2)
        return GP_OK;
    int64_t min = l->v[0].s;
    size_t at[MERGE_RUNS + 1], runs = 1;
    at[0] = 0;
    for (size_t i = 1; i < l->n; i++) {
        min = GP_MIN(min, l->v[i].s);
        if (l->v[i].s < l->v[i - 1].s) {
            if (runs < MERGE_RUNS)
                at[runs] = i;
            runs++;
        }
    }
    if (runs == 1)
        return GP_OK;
    if (runs <= MERGE_RUNS) {
        at[runs] = l->n;
        return merge_runs(l, at, runs);
    }
    uint64_t *k = malloc(l->n * sizeof(*k)), *x = malloc(l->n * sizeof(*x));
    gp__ivl *out = malloc(l->n * sizeof(*out));
    gp_status st = k && x && out ? GP_OK : GP_ENOMEM;
    if (st == GP_OK) {
        for (size_t i = 0; i < l->n; i++) {
            k[i] = (uint64_t)(l->v[i].s - min);
            x[i] = i;
        }
        st = gp__radix_sort_kv(k, x, l->n);
    }
    if (st == GP_OK) {
        for (size_t i = 0; i < l->n; i++)
            out[i] = l->v[x[i]];
        free(l->v);
        l->v = out;
        l->cap = l->n;
        out = NULL;
    }
    free(k);
    free(x);
    free(out);
    return st;
}

int64_t gp__ivls_union_sorted(gp__ivls *l)
{
    size_t out = 0;
    int64_t total = 0, cummax = INT64_MIN;
    for (size_t i = 0; i < l->n; i++) {
        gp__ivl iv = l->v[i];
        if (out == 0 || iv.s > cummax) {
            if (out > 0)
                total += l->v[out - 1].e - l->v[out - 1].s;
            l->v[out++] = iv;
        } else if (iv.e > l->v[out - 1].e) {
            l->v[out - 1].e = iv.e;
        }
        cummax = GP_MAX(cummax, iv.e);
    }
    if (out > 0)
        total += l->v[out - 1].e - l->v[out - 1].s;
    l->n = out;
    return total;
}

int64_t gp__ivls_intersect(const gp__ivls *a, const gp__ivls *b)
{
    size_t i = 0, j = 0;
    int64_t total = 0;
    while (i < a->n && j < b->n) {
        int64_t s = GP_MAX(a->v[i].s, b->v[j].s);
        int64_t e = GP_MIN(a->v[i].e, b->v[j].e);
        if (e > s)
            total += e - s;
        if (a->v[i].e < b->v[j].e)
            i++;
        else
            j++;
    }
    return total;
}
