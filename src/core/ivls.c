/* Interval lists: see ivls.h. */
#include "core/ivls.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/radix.h"
#include "core/util.h"

gp_status gp__ivls_push(gp__ivls *l, int64_t s, int64_t e)
{
    gp__ivl *p = GP_PUSH(l->v, l->n, l->cap);
    if (!p)
        return GP_ENOMEM;
    p->s = s;
    p->e = e;
    return GP_OK;
}

void gp__ivls_free(gp__ivls *l)
{
    free(l->v);
    memset(l, 0, sizeof(*l));
}

gp_status gp__ivls_sort(gp__ivls *l)
{
    if (l->n < 2)
        return GP_OK;
    int64_t min = l->v[0].s;
    bool sorted = true;
    for (size_t i = 1; i < l->n; i++) {
        min = GP_MIN(min, l->v[i].s);
        sorted &= l->v[i].s >= l->v[i - 1].s;
    }
    if (sorted)
        return GP_OK;
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
