/* The profile rules of gpuprof advise (gpuprof/advise.h): routing, batching, caching, memory and
 * parallelization suggestions on the ranges of a profile, with the thresholds of the tool gpuprof
 * replaces as defaults. Every rule, threshold and estimate is in docs/advise.md. The algorithm
 * rule needs per-op rates against the roofline, which profiles (ranges without input shapes)
 * cannot give: on traces it is analyze's op_below_roofline finding (advise_ops.c), and
 * gp_advise_skipped_rules says so for profiles. */
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze_internal.h"
#include "core/msort.h"
#include "core/ivls.h"
#include "gpuprof/advise.h"

void gp_advise_opts_init(gp_advise_opts *o)
{
    o->gpu_op_max_ms = 1.0;
    o->cpu_op_min_ms = 10.0;
    o->batch_min_calls = 10;
    o->cache_min_calls = 100;
    o->cache_max_ms = 1.0;
    o->memory_min_mb = 100.0;
    o->util_max_pct = 50.0;
}

const gp_advise_skipped *gp_advise_skipped_rules(size_t *n)
{
    static const gp_advise_skipped skipped[] = {
        {"algorithm", "on profiles: their ranges carry no input shapes, so no FLOP or byte "
                      "rates; on traces recorded with record_shapes=True the rule is analyze's "
                      "op_below_roofline finding (gpuprof ops' roofline)"},
    };
    *n = GP_ARRAY_LEN(skipped);
    return skipped;
}

/* The thresholds of gp_advise_opts are in the seed tool's units: ms, and MB = 10^6 bytes
 * (docs/advise.md); metrics are in ns and bytes. */
#define OPT_MS_NS 1e6
#define OPT_MB_BYTES 1e6

/* One operation (range name) of a trace. */
typedef struct op_acc {
    gp_strid name;
    uint64_t calls;
    gp_ns total;        /* wall time, summed */
    gp_ns gpu_ns;       /* summed "gpu_ns" of its calls (0 when none) */
    uint64_t gpu_calls; /* calls tagged "device": "gpu" */
    int64_t mem;        /* largest "bytes" or "mem_delta_bytes" of a call */
    uint32_t run;       /* longest run of back-to-back calls under one parent */
    bool parent;        /* some call has ranges nested in it (a loop body, not a batchable op) */
} op_acc;

/* True when the range's args say "device": "gpu" (the profiler's tag). */
static bool is_gpu_range(const gp_trace *t, const gp_event *ev)
{
    const char *j = gp_event_args_json(t, ev);
    const char *p = j ? strstr(j, "\"device\"") : NULL;
    if (!p)
        return false;
    p += 8;
    while (*p == ' ' || *p == ':')
        p++;
    return strncmp(p, "\"gpu\"", 5) == 0;
}

typedef struct op_set {
    op_acc *v;
    size_t n, cap;
    uint32_t *slot; /* name id -> index + 1 */
    gp__ivls gpu;   /* wall intervals of GPU-tagged ranges */
} op_set;

/* Adds one range event (at nesting depth `depth` on its row; prev[] holds the last name seen at
 * each depth and runs[] its run length). *index: the op's index in o->v. */
static gp_status add_range(op_set *o, const gp_trace *t, const gp_event *ev, gp_strid *prev,
                           uint32_t *runs, size_t depth, uint32_t *index)
{
    uint32_t k = o->slot[ev->name];
    if (!k) {
        op_acc *a = GP_PUSH(o->v, o->n, o->cap);
        if (!a)
            return GP_ENOMEM;
        memset(a, 0, sizeof *a);
        a->name = ev->name;
        k = o->slot[ev->name] = (uint32_t)o->n;
    }
    *index = k - 1;
    op_acc *a = &o->v[k - 1];
    a->calls++;
    a->total = gp__sat_add(a->total, ev->dur);
    int64_t v;
    if (gp_event_arg_int(t, ev, "gpu_ns", &v) && v > 0)
        a->gpu_ns = gp__sat_add(a->gpu_ns, v);
    if (gp_event_arg_int(t, ev, "bytes", &v) && v > a->mem)
        a->mem = v;
    if (gp_event_arg_int(t, ev, "mem_delta_bytes", &v) && v > a->mem)
        a->mem = v;
    if (is_gpu_range(t, ev)) {
        a->gpu_calls++;
        if (gp__ivls_push(&o->gpu, ev->ts, ev->ts + ev->dur) != GP_OK)
            return GP_ENOMEM;
    }
    runs[depth] = prev[depth] == ev->name ? runs[depth] + 1 : 1;
    prev[depth] = ev->name;
    prev[depth + 1] = 0; /* its children start a new sequence */
    if (runs[depth] > a->run)
        a->run = runs[depth];
    return GP_OK;
}

/* Every range of t into o, with nesting per row. */
static gp_status collect_ops(op_set *o, const gp_trace *t)
{
    enum { DEPTH = 256 };
    gp_strid prev[DEPTH + 1];
    uint32_t runs[DEPTH];
    gp_ns ends[DEPTH];
    uint32_t open_op[DEPTH];
    for (size_t k = 0; k < t->n_tracks; k++) {
        const gp_track *tr = &t->tracks[k];
        size_t depth = 0;
        memset(prev, 0, sizeof prev);
        for (size_t i = 0; i < tr->n_events; i++) {
            const gp_event *ev = &tr->events[i];
            if (ev->kind != GP_EV_RANGE || ev->name == 0)
                continue;
            while (depth > 0 && ends[depth - 1] <= ev->ts)
                depth--;
            if (depth >= DEPTH)
                continue;
            gp_status st = add_range(o, t, ev, prev, runs, depth, &open_op[depth]);
            if (st != GP_OK)
                return st;
            if (depth > 0)
                o->v[open_op[depth - 1]].parent = true;
            ends[depth++] = ev->ts + ev->dur;
        }
    }
    return GP_OK;
}

/* Fills the parts every profile finding has: op, times, type, metrics. */
static void fill(gp_finding *f, const gp_trace *t, const op_acc *op, gp_ns current, gp_ns estimated,
                 gp_suggestion_type type, gp_ns span)
{
    f->current_ns = current;
    f->estimated_ns = estimated;
    f->gain_ns = current - estimated;
    f->type = type;
    f->priority = gp__advise_priority(f->gain_ns, span);
    if (op) {
        gp__advise_object(f, GP_OBJ_OP, gp_trace_str(t, op->name), op->total, op->calls);
        gp__advise_metric(f, "calls", (double)op->calls, GP_FU_COUNT);
        gp__advise_metric(f, "mean", (double)op->total / (double)op->calls, GP_FU_NS);
        gp__advise_metric(f, "total", (double)op->total, GP_FU_NS);
    }
}

/* The rules on one operation. */
static gp_status op_rules(gp_analysis *a, size_t *cap, const gp_trace *t, int32_t rank,
                          const op_acc *op, const gp_advise_opts *o, gp_ns span)
{
    double mean_ms = (double)op->total / (double)op->calls / OPT_MS_NS;
    bool gpu = op->gpu_calls * 2 > op->calls;
    gp_finding *f;
    if (gpu && mean_ms < o->gpu_op_max_ms) {
        if (!(f = gp__advise_add(a, cap, "routing_to_cpu", rank)))
            return GP_ENOMEM;
        fill(f, t, op, op->total, op->total / 2, GP_SUG_ROUTING, span);
    }
    if (!gpu && op->mem > 0 && mean_ms > o->cpu_op_min_ms) {
        if (!(f = gp__advise_add(a, cap, "routing_to_gpu", rank)))
            return GP_ENOMEM;
        fill(f, t, op, op->total, op->total / 5, GP_SUG_ROUTING, span);
        gp__advise_metric(f, "memory", (double)op->mem, GP_FU_BYTES);
    }
    if (op->run >= o->batch_min_calls && !op->parent) {
        if (!(f = gp__advise_add(a, cap, "batching", rank)))
            return GP_ENOMEM;
        /* 30 % of the total, without overflowing total * 3 (totals saturate at INT64_MAX) */
        gp_ns cut = op->total / 10 * 3 + op->total % 10 * 3 / 10;
        fill(f, t, op, op->total, op->total - cut, GP_SUG_BATCHING, span);
        gp__advise_metric(f, "calls_in_a_row", (double)op->run, GP_FU_COUNT);
    }
    if (op->calls >= o->cache_min_calls && mean_ms < o->cache_max_ms) {
        if (!(f = gp__advise_add(a, cap, "caching", rank)))
            return GP_ENOMEM;
        fill(f, t, op, op->total, op->total / 2, GP_SUG_CACHING, span);
    }
    if ((double)op->mem > o->memory_min_mb * OPT_MB_BYTES) {
        if (!(f = gp__advise_add(a, cap, "memory_heavy_op", rank)))
            return GP_ENOMEM;
        fill(f, t, op, op->total, op->total, GP_SUG_MEMORY, span);
        gp__advise_metric(f, "memory", (double)op->mem, GP_FU_BYTES);
        f->priority = (double)op->mem >= 1000 * OPT_MB_BYTES ? GP_PRIO_HIGH : GP_PRIO_MEDIUM;
    }
    return GP_OK;
}

static int cmp_op(const void *pa, const void *pb)
{
    const op_acc *x = pa, *y = pb;
    return x->total != y->total ? (x->total > y->total ? -1 : 1) : GP_CMP(x->name, y->name);
}

/* The ranges by name, in the order of the findings, and the union of the GPU-tagged ones. */
struct gp__profile_ops {
    op_set s;
    bool gpu_ranges; /* some range is GPU-tagged */
    gp_ns gpu_busy;  /* the time they cover */
};

void gp__profile_ops_free(gp__profile_ops *p)
{
    if (!p)
        return;
    free(p->s.v);
    free(p->s.slot);
    gp__ivls_free(&p->s.gpu);
    free(p);
}

gp_status gp__profile_ops_of(const gp_trace *t, gp__profile_ops **out)
{
    gp__profile_ops *p = calloc(1, sizeof *p);
    *out = NULL;
    if (!p || !(p->s.slot = calloc(gp_trace_str_count(t) + 1, sizeof *p->s.slot))) {
        free(p);
        return GP_ENOMEM;
    }
    op_set *ops = &p->s;
    gp_status st = collect_ops(ops, t);
    if (st == GP_OK && ops->n > 1)
        gp__msort(ops->v, ops->n, sizeof *ops->v, cmp_op); /* findings in a stable order */
    p->gpu_ranges = ops->gpu.n > 0;
    if (st == GP_OK && ops->gpu.n && (st = gp__ivls_sort(&ops->gpu)) == GP_OK)
        p->gpu_busy = gp__ivls_union_sorted(&ops->gpu);
    if (st != GP_OK) {
        gp__profile_ops_free(p);
        return st;
    }
    *out = p;
    return GP_OK;
}

gp_status gp__advise_profile(gp_analysis *a, size_t *cap, const gp_trace *t, int32_t rank,
                             const gp__profile_ops *given)
{
    gp_advise_opts defaults;
    const gp_advise_opts *o = a->opts.advise;
    if (!o) {
        gp_advise_opts_init(&defaults);
        o = &defaults;
    }
    gp__profile_ops *own = NULL;
    if (!given) {
        gp_status st = gp__profile_ops_of(t, &own);
        if (st != GP_OK)
            return st;
        given = own;
    }
    const op_set *ops = &given->s;
    gp_status st = GP_OK;
    /* Every rule below is on a range: without any (a Kineto trace) the span is not needed, and
     * finding it is a walk of every event. */
    gp_ns s0 = 0, s1 = 0;
    if (ops->n)
        gp_trace_span(t, &s0, &s1);
    gp_ns span = s1 - s0;
    for (size_t i = 0; i < ops->n && st == GP_OK; i++)
        st = op_rules(a, cap, t, rank, &ops->v[i], o, span);
    /* GPU under-utilised: the GPU-tagged ranges cover little of the profile's span (traces with
     * GPU activity have analyze's temporal rules instead). */
    if (st == GP_OK && given->gpu_ranges && !gp_trace_has_gpu(t) && span > 0) {
        gp_ns busy = given->gpu_busy;
        double util = 100.0 * (double)busy / (double)span;
        gp_finding *f;
        if (util < o->util_max_pct) {
            if (!(f = gp__advise_add(a, cap, "gpu_underutilized", rank))) {
                st = GP_ENOMEM;
            } else {
                /* At the threshold's utilisation the same GPU work would take busy / util. */
                gp_ns est = gp__ns_of_double((double)busy * 100.0 / o->util_max_pct);
                fill(f, t, NULL, span, est < span ? est : span, GP_SUG_PARALLELIZATION, span);
                gp__advise_metric(f, "gpu_utilization", util / 100.0, GP_FU_RATIO);
                gp__advise_metric(f, "gpu_busy", (double)busy, GP_FU_NS);
                gp__advise_metric(f, "span", (double)span, GP_FU_NS);
            }
        }
    }
    gp__profile_ops_free(own);
    return st;
}
