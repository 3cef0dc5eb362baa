/* Temporal breakdown, idle-time breakdown, kernel-type breakdown with overlap states, top-kernels
 * table and communication/computation overlap. One pass (or one merge) over the view's sorted GPU
 * events each; see docs/analyses.md for the definitions. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze_internal.h"

/* Union of the view's GPU events whose type bit is in mask (events are already sorted). */
static gp_status union_of(const gp__view *v, uint32_t mask, gp__ivls *out, int64_t *total)
{
    out->n = 0;
    for (size_t i = 0; i < v->n_g; i++) {
        if (!(mask & (1u << v->g[i].type)))
            continue;
        gp_status st = gp__ivls_push(out, v->g[i].s, v->g[i].e);
        if (st != GP_OK)
            return st;
    }
    *total = gp__ivls_union_sorted(out);
    return GP_OK;
}

/* ---- temporal -------------------------------------------------------------------------------- */

static gp_status temporal(const gp__view *v, gp_rank_analysis *r, gp__ivls *all, gp__ivls *comp,
                          gp__ivls *comm)
{
    uint32_t all_mask = (1u << GP_KT_COUNT) - 1;
    int64_t busy, comp_t, comm_t;
    gp_status st = union_of(v, all_mask, all, &busy);
    if (st == GP_OK)
        st = union_of(v, 1u << GP_KT_COMPUTATION, comp, &comp_t);
    if (st == GP_OK)
        st = union_of(v, 1u << GP_KT_COMMUNICATION, comm, &comm_t);
    if (st != GP_OK)
        return st;
    gp_temporal *tb = &r->temporal;
    if (all->n == 0) {
        tb->valid = false;
        tb->idle_pct = tb->compute_pct = tb->non_compute_pct = NAN;
    } else {
        int64_t kt = all->v[all->n - 1].e - all->v[0].s;
        tb->valid = kt > 0;
        tb->kernel_time = kt * v->unit;
        tb->idle = (kt - busy) * v->unit;
        tb->compute = comp_t * v->unit;
        tb->non_compute = tb->kernel_time - tb->compute - tb->idle;
        double d = (double)tb->kernel_time;
        tb->idle_pct = kt > 0 ? 100.0 * (double)tb->idle / d : NAN;
        tb->compute_pct = kt > 0 ? 100.0 * (double)tb->compute / d : NAN;
        tb->non_compute_pct = kt > 0 ? 100.0 * (double)tb->non_compute / d : NAN;
    }
    gp_overlap *ov = &r->overlap;
    ov->comm = comm_t * v->unit;
    ov->comp = comp_t * v->unit;
    ov->overlap = gp__ivls_intersect(comm, comp) * v->unit;
    ov->pct = ov->comm > 0 ? 100.0 * (double)ov->overlap / (double)ov->comm : NAN;
    return GP_OK;
}

/* ---- idle time per stream -------------------------------------------------------------------- */

typedef struct idle_state {
    int64_t prev_end; /* HTA: previous event's end; default: running max end */
    bool started;
} idle_state;

const char *gp_idle_category_name(gp_idle_category c)
{
    static const char *names[] = {"host_wait", "kernel_wait", "other"};
    return c < GP_IDLE_COUNT ? names[c] : "unknown";
}

static gp_status idle_breakdown(const gp__view *v, gp_rank_analysis *r)
{
    bool hta = v->o->hta;
    int64_t threshold = v->o->kernel_wait_ns / v->unit;
    idle_state *states = NULL;
    size_t cap_states = 0, n_states = 0, cap_idle = 0, last = 0;
    gp_status st = GP_OK;
    gp__group_table lanes; /* (device, stream) -> its row in r->idle */
    gp__lanes_init(&lanes);
    for (size_t i = 0; i < v->n_g; i++) {
        const gp__gev *g = &v->g[i];
        if (g->kind == GP_EV_CPU_OP) /* HTA's idle time reads GPU-side categories only */
            continue;
        size_t k = last;
        if (!(k < r->n_idle && r->idle[k].stream == g->stream && r->idle[k].device == g->device)) {
            int64_t lane = gp__lane_of(&lanes, g->device, g->stream);
            if (lane < 0) {
                st = GP_ENOMEM;
                break;
            }
            k = (size_t)lane;
            if (k == r->n_idle) {
                gp_idle_stream *row = GP_PUSH(r->idle, r->n_idle, cap_idle);
                idle_state *s = row ? GP_PUSH(states, n_states, cap_states) : NULL;
                if (!row || !s) {
                    st = GP_ENOMEM;
                    break;
                }
                row->stream = g->stream;
                row->device = g->device;
            }
            last = k;
        }
        gp_idle_stream *row = &r->idle[k];
        idle_state *s = &states[k];
        if (!s->started) {
            s->started = true;
            s->prev_end = g->e;
            row->present[GP_IDLE_OTHER] = true; /* HTA: the first event's (empty) gap */
            continue;
        }
        int64_t gap = g->s - s->prev_end;
        gp_idle_category cat;
        if (g->launch_s != GP__NO_TIME && g->launch_s > s->prev_end)
            cat = GP_IDLE_HOST_WAIT;
        else if (gap < threshold)
            cat = GP_IDLE_KERNEL_WAIT;
        else
            cat = GP_IDLE_OTHER;
        if (hta) {
            /* An event overlapping the previous one (a sync under a kernel) has no gap before
             * it: no negative idle time. */
            row->idle[cat] += GP_MAX(gap, 0) * v->unit;
            row->gaps[cat]++;
            row->present[cat] = true;
            s->prev_end = g->e;
        } else {
            if (gap > 0) {
                row->idle[cat] += gap;
                row->gaps[cat]++;
            }
            s->prev_end = GP_MAX(s->prev_end, g->e);
        }
    }
    free(states);
    gp__group_table_free(&lanes);
    if (st != GP_OK)
        return st;
    for (size_t k = 0; k < r->n_idle; k++) {
        gp_idle_stream *row = &r->idle[k];
        row->total = 0;
        for (int c = 0; c < GP_IDLE_COUNT; c++) {
            row->total += row->idle[c];
            if (!hta)
                row->present[c] = true;
        }
        for (int c = 0; c < GP_IDLE_COUNT; c++)
            row->ratio[c] = row->total != 0 ? (double)row->idle[c] / (double)row->total : NAN;
    }
    return GP_OK;
}

/* ---- kernel types with overlap states -------------------------------------------------------- */

void gp__type_label(uint32_t mask, char *out, size_t cap)
{
    out[0] = '\0';
    size_t len = 0;
    for (int t = 0; t < 3; t++) {
        if (!(mask & (1u << t)))
            continue;
        int n = snprintf(out + len, cap - len, "%s%s", len ? " overlapping " : "",
                         gp_kernel_type_name((gp_kernel_type)t));
        if (n < 0 || (size_t)n >= cap - len)
            return;
        len += (size_t)n;
    }
}

static gp_status type_states(const gp__view *v, gp_rank_analysis *r)
{
    gp__ivls lists[3] = {{0}};
    int64_t dummy, time[8] = {0};
    gp_status st = GP_OK;
    for (int t = 0; t < 3 && st == GP_OK; t++)
        st = union_of(v, 1u << t, &lists[t], &dummy);
    if (st == GP_OK) {
        /* Three-way merge of the boundaries of three sorted disjoint lists. */
        size_t pos[3] = {0, 0};
        bool in[3] = {false, false, false};
        uint32_t mask = 0;
        int64_t now = INT64_MIN;
        for (;;) {
            int best = -1;
            int64_t bt = INT64_MAX;
            for (int t = 0; t < 3; t++) {
                if (pos[t] >= lists[t].n)
                    continue;
                const gp__ivl *iv = &lists[t].v[pos[t]];
                if (iv->e < iv->s) { /* HTA rounding produced an empty group: skip it */
                    pos[t]++;
                    t--;
                    continue;
                }
                int64_t bnd = in[t] ? iv->e : iv->s;
                if (bnd < bt) {
                    bt = bnd;
                    best = t;
                }
            }
            if (best < 0)
                break;
            if (mask && now != INT64_MIN)
                time[mask] += bt - now;
            now = bt;
            if (in[best]) {
                in[best] = false;
                mask &= ~(1u << best);
                pos[best]++;
            } else {
                in[best] = true;
                mask |= 1u << best;
            }
        }
        int64_t sum = 0;
        for (int m = 1; m < 8; m++)
            sum = gp__sat_add(sum, time[m]);
        for (int m = 1; m < 8; m++) {
            if (time[m] == 0)
                continue;
            size_t cap_t = r->n_types;
            gp_type_state *ts = GP_PUSH(r->types, r->n_types, cap_t);
            if (!ts) {
                st = GP_ENOMEM;
                break;
            }
            ts->mask = (uint32_t)m;
            gp__type_label((uint32_t)m, ts->label, sizeof(ts->label));
            ts->time = time[m] * v->unit;
            ts->pct = sum > 0 ? 100.0 * (double)time[m] / (double)sum : NAN;
        }
    }
    for (int t = 0; t < 3; t++)
        gp__ivls_free(&lists[t]);
    return st;
}

/* ---- top kernels ----------------------------------------------------------------------------- */

typedef struct name_acc {
    gp_strid name;
    uint64_t count;
    int64_t sum, max, min;
    double mean, m2; /* Welford */
} name_acc;

static int cmp_acc(const void *pa, const void *pb, void *ctx)
{
    const name_acc *a = pa, *b = pb;
    if (a->sum != b->sum)
        return a->sum > b->sum ? -1 : 1;
    return strcmp(gp_trace_str(ctx, a->name), gp_trace_str(ctx, b->name));
}

static gp_status push_row(gp_rank_analysis *r, size_t *cap, const gp_kernel_row *row)
{
    gp_kernel_row *p = GP_PUSH(r->kernels, r->n_kernels, *cap);
    if (!p)
        return GP_ENOMEM;
    *p = *row;
    return GP_OK;
}

static gp_status top_kernels(const gp__view *v, gp_rank_analysis *r)
{
    const gp_trace *t = v->t;
    size_t cap_rows = 0;
    gp__imap idx;
    gp_status st = gp__imap_init(&idx, 256);
    if (st != GP_OK)
        return st;
    name_acc *acc = NULL;
    size_t n_acc = 0, cap_acc = 0;
    for (int ty = 0; ty < 3 && st == GP_OK; ty++) {
        n_acc = 0;
        gp__imap_free(&idx);
        st = gp__imap_init(&idx, 256);
        for (size_t i = 0; i < v->n_g && st == GP_OK; i++) {
            const gp__gev *g = &v->g[i];
            if (g->type != ty)
                continue;
            uint64_t k;
            name_acc *a;
            if (gp__imap_get(&idx, g->ev->name, &k)) {
                a = &acc[k];
            } else {
                a = GP_PUSH(acc, n_acc, cap_acc);
                if (!a || gp__imap_put(&idx, g->ev->name, n_acc - 1) != GP_OK) {
                    st = GP_ENOMEM;
                    break;
                }
                a->name = g->ev->name;
                a->max = INT64_MIN;
                a->min = INT64_MAX;
            }
            int64_t d = (g->e - g->s) * v->unit;
            a->count++;
            a->sum = gp__sat_add(a->sum, d);
            a->max = GP_MAX(a->max, d);
            a->min = GP_MIN(a->min, d);
            double delta = (double)d - a->mean;
            a->mean += delta / (double)a->count;
            a->m2 += delta * ((double)d - a->mean);
        }
        if (st != GP_OK || n_acc == 0)
            continue;
        qsort_r(acc, n_acc, sizeof(*acc), cmp_acc, (void *)t);
        size_t keep = n_acc;
        if (n_acc > v->o->top_kernels) {
            /* HTA: names past the duration_ratio quantile of the cumulative sums, or past
             * num_kernels, fold into "others". */
            int64_t *cum = malloc(n_acc * sizeof(*cum));
            if (!cum) {
                st = GP_ENOMEM;
                break;
            }
            int64_t run = 0;
            for (size_t i = 0; i < n_acc; i++)
                cum[i] = run = gp__sat_add(run, acc[i].sum);
            double pos = v->o->duration_ratio * (double)(n_acc - 1);
            size_t lo = (size_t)floor(pos);
            size_t hi = lo + 1 < n_acc ? lo + 1 : lo;
            double q = (double)cum[lo] + (pos - (double)lo) * (double)(cum[hi] - cum[lo]);
            keep = 0;
            while (keep < n_acc && keep < v->o->top_kernels && (double)cum[keep] <= q)
                keep++;
            free(cum);
        }
        bool folded = keep < n_acc;
        for (size_t i = 0; i < keep && st == GP_OK; i++) {
            gp_kernel_row row = {
                .name = gp_trace_str(t, acc[i].name),
                .type = (gp_kernel_type)ty,
                .rank = r->rank,
                .count = acc[i].count,
                .sum = acc[i].sum,
                .max = acc[i].max,
                .min = acc[i].min,
                .mean = acc[i].mean,
                .stddev = acc[i].count > 1 ? sqrt(acc[i].m2 / (double)(acc[i].count - 1)) : 0.0};
            if (folded && v->o->hta) { /* HTA re-aggregates the named rows over their sum */
                row.max = row.min = row.sum;
                row.mean = (double)row.sum;
                row.stddev = 0.0;
            }
            st = push_row(r, &cap_rows, &row);
        }
        if (folded && st == GP_OK) {
            gp_kernel_row row = {.name = "others",
                                 .others = true,
                                 .type = (gp_kernel_type)ty,
                                 .rank = r->rank,
                                 .max = INT64_MIN,
                                 .min = INT64_MAX};
            double mean = 0, m2 = 0;
            for (size_t i = keep; i < n_acc; i++) {
                int64_t x = acc[i].sum;
                row.count++;
                row.sum = gp__sat_add(row.sum, x);
                row.max = GP_MAX(row.max, x);
                row.min = GP_MIN(row.min, x);
                double delta = (double)x - mean;
                mean += delta / (double)row.count;
                m2 += delta * ((double)x - mean);
            }
            row.mean = mean;
            row.stddev = row.count > 1 ? sqrt(m2 / (double)(row.count - 1)) : 0.0;
            st = push_row(r, &cap_rows, &row);
        }
    }
    free(acc);
    gp__imap_free(&idx);
    return st;
}

gp_status gp__analyze_temporal(const gp__view *v, gp_rank_analysis *r)
{
    gp__ivls all = {0}, comp = {0}, comm = {0};
    gp_status st = temporal(v, r, &all, &comp, &comm);
    gp__ivls_free(&all);
    gp__ivls_free(&comp);
    gp__ivls_free(&comm);
    return st;
}

gp_status gp__analyze_idle(const gp__view *v, gp_rank_analysis *r)
{
    return idle_breakdown(v, r);
}

gp_status gp__analyze_types(const gp__view *v, gp_rank_analysis *r)
{
    return type_states(v, r);
}

gp_status gp__analyze_top_kernels(const gp__view *v, gp_rank_analysis *r)
{
    return top_kernels(v, r);
}
