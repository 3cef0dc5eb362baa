/* The dashboard of an in-process profile (ranges, no GPU events): per range name, the calls and
 * times, the figures the profiler stored in the ranges' args (to_trace.c: gpu_ns, cpu_ns,
 * transfer_ns, overhead_ns, mem_peak_bytes), the self-time distribution over the operations, the
 * per-operation split of the wall time and the memory chart from the ranges. Average memory and
 * GPU utilisation per operation are the summary's (summary.c computes them for `gpuprof summary`
 * too). */
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze_internal.h"
#include "core/msort.h"
#include "core/util.h"

enum { MAX_SEGS = GP_DASH_SEGS - 1, BUCKETS = 600 };

typedef struct mem_pt {
    gp_ns ts;
    double v;
    const char *name;
} mem_pt;

static int mem_pt_cmp(const void *a, const void *b)
{
    const mem_pt *p = a, *q = b;
    return GP_CMP(p->ts, q->ts);
}

static int op_total_cmp(const void *a, const void *b)
{
    const gp_dash_prof_op *p = a, *q = b;
    int c = GP_CMP(q->total, p->total);
    return c ? c : strcmp(p->name, q->name);
}

/* True for a profile: range events and no GPU work. */
static bool is_profile(const gp_summary *s)
{
    for (int k = 0; k < GP_EV_KIND_COUNT; k++)
        if (gp_event_kind_is_gpu((gp_event_kind)k) && s->kinds[k].calls > 0)
            return false;
    return s->kinds[GP_EV_RANGE].calls > 0;
}

/* Sums start at -1 ("absent in every call") and count from the first call that has the arg; a
 * negative value (a hostile trace's) is ignored. */
static void add_opt(gp_ns *sum, int64_t v)
{
    if (v >= 0)
        *sum = gp__sat_add(*sum < 0 ? 0 : *sum, v);
}

/* Adds the args of one range call to its operation. */
static void add_call(const gp_trace *t, const gp_event *ev, gp_dash_prof_op *o, gp_ns self)
{
    int64_t v;
    o->self = gp__sat_add(o->self, self);
    if (gp_event_arg_int(t, ev, "gpu_ns", &v))
        add_opt(&o->gpu, v);
    if (gp_event_arg_int(t, ev, "cpu_ns", &v))
        add_opt(&o->cpu, v);
    if (gp_event_arg_int(t, ev, "transfer_ns", &v))
        add_opt(&o->transfer, v);
    if (gp_event_arg_int(t, ev, "overhead_ns", &v))
        add_opt(&o->overhead, v);
}

/* Scans the range events of every CPU thread: self time and args per operation (matched by name
 * once per string id), memory points into *pts. */
static gp_status scan(gp_dashboard *d, const gp_trace *const *traces, size_t n, mem_pt **pts,
                      size_t *n_pts)
{
    size_t cap = 0;
    gp_status st = GP_OK;
    for (size_t i = 0; i < n && st == GP_OK; i++) {
        const gp_trace *t = traces[i];
        size_t n_str = gp_trace_str_count(t) + 1, most = 0;
        for (size_t k = 0; k < t->n_tracks; k++)
            most = GP_MAX(most, t->tracks[k].n_events);
        int32_t *op_of = malloc(n_str * sizeof *op_of);
        gp_ns *self = malloc((most ? most : 1) * sizeof *self);
        st = op_of && self ? GP_OK : GP_ENOMEM;
        for (size_t k = 0; st == GP_OK && k < n_str; k++)
            op_of[k] = -2; /* not looked up yet */
        for (size_t k = 0; k < t->n_tracks && st == GP_OK; k++) {
            const gp_track *tr = &t->tracks[k];
            if (tr->kind != GP_TRACK_CPU_THREAD || tr->n_events == 0)
                continue;
            st = gp_track_self_times(tr, self);
            for (size_t e = 0; st == GP_OK && e < tr->n_events; e++) {
                const gp_event *ev = &tr->events[e];
                if (ev->kind != GP_EV_RANGE || ev->name >= n_str)
                    continue;
                if (op_of[ev->name] == -2) {
                    const char *nm = gp_trace_str(t, ev->name);
                    op_of[ev->name] = -1;
                    for (size_t o = 0; o < d->n_prof_ops; o++)
                        if (strcmp(d->prof_ops[o].name, nm) == 0)
                            op_of[ev->name] = (int32_t)o;
                }
                int32_t o = op_of[ev->name];
                if (o < 0)
                    continue;
                add_call(t, ev, &d->prof_ops[o], self[e]);
                int64_t v;
                if (gp_event_arg_int(t, ev, "mem_peak_bytes", &v)) {
                    mem_pt *p = GP_PUSH(*pts, *n_pts, cap);
                    if (!p)
                        st = GP_ENOMEM;
                    else
                        *p = (mem_pt){ev->ts, (double)v, d->prof_ops[o].name};
                }
            }
        }
        free(op_of);
        free(self);
    }
    return st;
}

/* The memory chart from the ranges' mem_peak_bytes (the highest per bucket of the span). */
static gp_status range_memory(gp_dashboard *d, mem_pt *pts, size_t n)
{
    if (n == 0 || d->n_mem > 0)
        return GP_OK;
    gp__msort(pts, n, sizeof *pts, mem_pt_cmp);
    const mem_pt *top = &pts[0];
    for (size_t i = 1; i < n; i++)
        if (pts[i].v > top->v)
            top = &pts[i];
    if (top->v <= 0)
        return GP_OK;
    d->mem_x = malloc(BUCKETS * sizeof *d->mem_x);
    d->mem_y = malloc(BUCKETS * sizeof *d->mem_y);
    if (!d->mem_x || !d->mem_y)
        return GP_ENOMEM;
    gp_ns t0 = d->timeline ? d->timeline->start : pts[0].ts;
    double span = d->timeline ? (double)(d->timeline->end - t0) : (double)(pts[n - 1].ts - t0);
    if (span <= 0)
        span = 1;
    long last = -1;
    for (size_t i = 0; i < n; i++) {
        long b = (long)gp__ns_of_double((double)(pts[i].ts - t0) / span * (BUCKETS - 1));
        double fy = pts[i].v / top->v;
        if (b == last) {
            d->mem_y[d->n_mem - 1] = GP_MAX(d->mem_y[d->n_mem - 1], fy);
            continue;
        }
        d->mem_x[d->n_mem] = (double)b / (BUCKETS - 1);
        d->mem_y[d->n_mem++] = fy;
        last = b;
    }
    d->mem_from_ranges = true;
    d->mem_peak_x = GP_MAX(0.0, GP_MIN(1.0, (double)(top->ts - t0) / span));
    snprintf(d->mem_label, sizeof d->mem_label, "peak memory of the ranges (mem_peak_bytes)");
    if (d->peak_memory < 0 || !d->peak_note[0]) { /* else the analysis' peak and note stay */
        d->peak_memory = top->v;
        snprintf(d->peak_note, sizeof d->peak_note, "range %.80s, at %.3f ms", top->name,
                 (double)(top->ts - t0) / 1e6);
    }
    for (int i = 0; i < 5; i++) {
        d->mem_ytick[i] = top->v * i / 4;
        d->mem_xtick[i] = gp__ns_of_double(span * i / 4);
    }
    return GP_OK;
}

/* The distribution bar and the split bars, from the finished rows. */
static void charts(gp_dashboard *d)
{
    gp_dash_chart *dist = &d->prof_dist, *split = &d->prof_split;
    gp_dash_part *dp = &dist->parts[0];
    snprintf(dp->label, sizeof dp->label, "all ranges (self time)");
    dist->n_parts = 1;
    for (size_t i = 0; i < d->n_prof_ops; i++) {
        const gp_dash_prof_op *o = &d->prof_ops[i];
        size_t seg = i < MAX_SEGS ? i : MAX_SEGS;
        dist->seg_names[seg] = i < MAX_SEGS ? o->short_name : "other operations";
        dp->seg[seg] = gp__sat_add(dp->seg[seg], o->self);
        dp->total = gp__sat_add(dp->total, o->self);
    }
    static const char *const names[5] = {"GPU", "transfer", "profiler overhead", "CPU",
                                         "not measured / waiting"};
    memcpy(split->seg_names, names, sizeof names);
    for (size_t i = 0; i < d->n_prof_ops && i < 16; i++) {
        const gp_dash_prof_op *o = &d->prof_ops[i];
        gp_dash_part *p = &split->parts[split->n_parts++];
        snprintf(p->label, sizeof p->label, "%s", o->short_name);
        p->total = o->total;
        gp_ns left = o->total;
        gp_ns want[4] = {o->gpu, o->transfer, o->overhead,
                         o->cpu < 0 && o->gpu < 0 ? left : o->cpu};
        for (int k = 0; k < 4; k++) {
            gp_ns v = GP_MAX(want[k], 0);
            p->seg[k] = GP_MIN(v, left);
            left -= p->seg[k];
        }
        p->seg[4] = left;
    }
    split->n_more = d->n_prof_ops > 16 ? d->n_prof_ops - 16 : 0;
}

gp_status gp__dash_profile(gp_dashboard *d, const gp_trace *const *traces, size_t n,
                           const gp_summary *s)
{
    if (!is_profile(s))
        return GP_OK;
    const gp_kind_summary *ks = &s->kinds[GP_EV_RANGE];
    d->is_profile = true;
    d->prof_ops = calloc(ks->n_rows, sizeof *d->prof_ops);
    const char **names = malloc(ks->n_rows * sizeof *names);
    char *shorts = malloc(ks->n_rows * GP_DASH_NAME_CAP);
    d->prof_dist.parts = calloc(1, sizeof *d->prof_dist.parts);
    d->prof_split.parts = calloc(16, sizeof *d->prof_split.parts);
    mem_pt *pts = NULL;
    size_t n_pts = 0;
    gp_status st = d->prof_ops && names && shorts && d->prof_dist.parts && d->prof_split.parts
                       ? GP_OK
                       : GP_ENOMEM;
    for (size_t i = 0; st == GP_OK && i < ks->n_rows; i++) {
        const gp_name_stats *r = &ks->rows[i];
        gp_dash_prof_op *o = &d->prof_ops[d->n_prof_ops++];
        *o = (gp_dash_prof_op){.name = r->name,
                               .calls = r->calls,
                               .total = r->total,
                               .min = r->min,
                               .max = r->max,
                               .mean = r->mean,
                               .gpu = -1,
                               .cpu = -1,
                               .transfer = -1,
                               .overhead = -1,
                               .mem_avg = r->mem_avg,
                               .gpu_util = r->gpu_util};
    }
    if (st == GP_OK)
        gp__msort(d->prof_ops, d->n_prof_ops, sizeof *d->prof_ops, op_total_cmp);
    if (st == GP_OK)
        st = scan(d, traces, n, &pts, &n_pts);
    for (size_t i = 0; st == GP_OK && i < d->n_prof_ops; i++)
        names[i] = d->prof_ops[i].name;
    if (st == GP_OK && d->n_prof_ops)
        st = gp_shorten_names_unique(names, d->n_prof_ops, 48, shorts, GP_DASH_NAME_CAP);
    for (size_t i = 0; st == GP_OK && i < d->n_prof_ops; i++)
        memcpy(d->prof_ops[i].short_name, shorts + i * GP_DASH_NAME_CAP, GP_DASH_NAME_CAP);
    if (st == GP_OK) {
        charts(d);
        st = range_memory(d, pts, n_pts);
    }
    free(names);
    free(shorts);
    free(pts);
    return st;
}
