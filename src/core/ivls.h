/* Interval lists and their unions, by HTA's grouping rule. The analyses' temporal, overlap and
 * activity figures and diff's idle time are all computed with these, so "busy" and "idle" have
 * one definition. */
#ifndef GP_CORE_IVLS_H
#define GP_CORE_IVLS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/util.h"
#include "gpuprof/core.h"

typedef struct gp__ivl {
    int64_t s, e;
} gp__ivl;

typedef struct gp__ivls {
    gp__ivl *v;
    size_t n, cap;
} gp__ivls;

/* Length of the intersection of two sorted disjoint lists. */
int64_t gp__ivls_intersect(const gp__ivls *a, const gp__ivls *b);
/* Merges intervals sorted by start, in place, into their union (the HTA grouping rule: a new group
 * starts when s > every previous end). Returns the summed group lengths. */
int64_t gp__ivls_union_sorted(gp__ivls *l);
void gp__ivls_free(gp__ivls *l);
/* Appends [s, e). Inline: the step breakdown pushes one per merged run of events. */
GP_WARN_UNUSED static inline gp_status gp__ivls_push(gp__ivls *l, int64_t s, int64_t e)
{
    gp__ivl *p = GP_PUSH(l->v, l->n, l->cap);
    if (!p)
        return GP_ENOMEM;
    p->s = s;
    p->e = e;
    return GP_OK;
}
/* Sorts by start (stable radix sort; a no-op when already sorted). */
gp_status gp__ivls_sort(gp__ivls *l) GP_WARN_UNUSED;

#endif
