/* Per-name statistics (gpuprof summary). One pass groups event durations and self times by
 * (kind, name); each group is then sorted once for its percentiles. Self times come from
 * gp_track_self_times, one track at a time (every event of the track counts as a child, whatever
 * --kind selects, so a kind's self time does not depend on the filter). O(n log n) overall, in the
 * per-group sorts. */
#include <stdlib.h>
#include <string.h>

#include "core/msort.h"
#include "core/group_table.h"
#include "core/invariant.h"
#include "core/stats.h"
#include "core/util.h"
#include "gpuprof/summary.h"

void gp_summary_opts_init(gp_summary_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->top_n = 10;
}

/* A group: a (kind, name) pair, merged across traces by name text. */
typedef struct group {
    gp__group_key key;
    int64_t *durs;
    size_t n, cap;
    gp_ns self; /* summed self time */
    gp_ns once; /* summed durations of the calls not inside a call of the same name */
    /* The figures gpuprof's profiler writes into a range's args (to_trace.c), over the calls that
     * carry them: mem_peak_bytes (memory tracking) and gpu_ns with the calls' wall time. */
    double mem_sum;
    uint64_t mem_n;
    gp_ns gpu_sum, gpu_wall;
    uint64_t gpu_n;
} group;

/* Adds the profiler's args of one range call (mem_peak_bytes, gpu_ns) to its group. Other events,
 * and ranges without those args (every Kineto trace), add nothing. */
static void add_range_args(const gp_trace *t, const gp_event *ev, group *g)
{
    int64_t v;
    if (ev->kind != GP_EV_RANGE || !gp_event_has_args(ev))
        return;
    if (gp_event_arg_int(t, ev, "mem_peak_bytes", &v)) {
        g->mem_sum += (double)v;
        g->mem_n++;
    }
    if (gp_event_arg_int(t, ev, "gpu_ns", &v) && v >= 0) {
        g->gpu_sum = gp__sat_add(g->gpu_sum, v);
        g->gpu_wall = gp__sat_add(g->gpu_wall, ev->dur);
        g->gpu_n++;
    }
}

/* Adds one trace's reader counts to the summary's. */
static void add_read_stats(gp_read_stats *to, const gp_read_stats *rs)
{
    to->bytes += rs->bytes;
    to->events_in += rs->events_in;
    for (int k = 0; k < GP_EV_KIND_COUNT; k++)
        to->by_kind[k] += rs->by_kind[k];
    to->metadata_events += rs->metadata_events;
    to->flow_points += rs->flow_points;
    to->negative_dur += rs->negative_dur;
    to->absurd_dur += rs->absurd_dur;
    to->no_dur += rs->no_dur;
    to->unknown_cat += rs->unknown_cat;
    to->skipped += rs->skipped;
}

/* An open event of mark_recursion's sweep: its index, and the stack position + 1 of the open
 * event below it with the same name (0: none). */
typedef struct open_ev {
    size_t i;
    uint32_t prev;
} open_ev;

/* Pops the top of the sweep's stack (*n > 0), unlinking it from its name's chain. */
static void pop_open(const gp_track *tr, const open_ev *stack, size_t *n, uint32_t *head,
                     size_t n_str)
{
    const open_ev *e = &stack[--*n];
    gp_strid name = tr->events[e->i].name;
    if (name < n_str)
        head[name] = e->prev;
}

/* Whether an open event of stack[0, n) with ev's kind and name is still open at ev's start (an
 * entry under a late child may be over): through the name's chain (head[name]: the topmost one's
 * position + 1), or over the whole stack for a name outside the string table. */
static bool open_same(const gp_track *tr, const open_ev *stack, size_t n, const uint32_t *head,
                      size_t n_str, const gp_event *ev)
{
    if (ev->name < n_str) {
        for (uint32_t p = head[ev->name]; p; p = stack[p - 1].prev) {
            const gp_event *o = &tr->events[stack[p - 1].i];
            if (o->kind == ev->kind && o->ts + o->dur > ev->ts)
                return true;
        }
        return false;
    }
    for (size_t k = 0; k < n; k++) {
        const gp_event *o = &tr->events[stack[k].i];
        if (o->name == ev->name && o->kind == ev->kind && o->ts + o->dur > ev->ts)
            return true;
    }
    return false;
}

/* Marks the events of a nesting track that start inside an open event of the same kind and name
 * (recursion: `<built-in function next>` inside another `next`): inner[i] = 1 for those, whose
 * time the outer call already holds, so a row's total_once counts each call stack once. A sweep
 * with a stack of open events, each linked to the one below it of the same name (head: per name
 * id < n_str, zeros on entry and on return): O(n * recursion depth of a name), not O(n * depth). */
static gp_status mark_recursion(const gp_track *tr, uint8_t *inner, uint32_t *head, size_t n_str)
{
    open_ev *stack = NULL;
    size_t n = 0, cap = 0;
    gp_status st = GP_OK;
    for (size_t i = 0; i < tr->n_events; i++) {
        const gp_event *ev = &tr->events[i];
        while (n > 0 && tr->events[stack[n - 1].i].ts + tr->events[stack[n - 1].i].dur <= ev->ts)
            pop_open(tr, stack, &n, head, n_str);
        inner[i] = open_same(tr, stack, n, head, n_str, ev);
        if (ev->dur == 0)
            continue;
        open_ev *slot = GP_PUSH(stack, n, cap);
        if (!slot) {
            st = GP_ENOMEM;
            break;
        }
        slot->i = i;
        slot->prev = ev->name < n_str ? head[ev->name] : 0;
        if (ev->name < n_str)
            head[ev->name] = (uint32_t)n;
    }
    while (n > 0)
        pop_open(tr, stack, &n, head, n_str);
    free(stack);
    return st;
}

/* Self times (*self) and recursion marks (*inner, mark_recursion) of a nesting track, in buffers
 * grown to its event count (*cap: their capacity); *head: mark_recursion's per-name chain heads
 * for the trace's n_str names, allocated on first use. */
static gp_status track_times(const gp_track *tr, gp_ns **self, uint8_t **inner, size_t *cap,
                             uint32_t **head, size_t n_str)
{
    if (tr->n_events > *cap) {
        gp_ns *p = realloc(*self, tr->n_events * sizeof **self);
        if (p)
            *self = p;
        uint8_t *q = p ? realloc(*inner, tr->n_events) : NULL;
        if (!q)
            return GP_ENOMEM;
        *inner = q;
        *cap = tr->n_events;
    }
    if (!*head && !(*head = calloc(n_str ? n_str : 1, sizeof **head)))
        return GP_ENOMEM;
    gp_status st = gp_track_self_times(tr, *self);
    return st == GP_OK ? mark_recursion(tr, *inner, *head, n_str) : st;
}

/* The row of a finished group: its duration statistics, self time and the profiler's range
 * figures (mem_avg, gpu_util; -1 where no call carries them, and then s's has_ flags stay). */
static void fill_row(gp_summary *s, gp_name_stats *r, const group *g)
{
    gp__stats stt;
    gp__stats_compute(g->durs, g->n, &stt);
    r->name = g->key.name;
    r->kind = (gp_event_kind)g->key.kind;
    r->calls = stt.n;
    GP__STATS_COPY(r, stt);
    /* Self time is the part of each event's duration spent in no child (model/nesting.c). */
    GP_INVARIANT(g->self >= 0 && g->self <= stt.total, "%s: self %lld of total %lld", r->name,
                 (long long)g->self, (long long)stt.total);
    r->self_total = g->self;
    GP_INVARIANT(g->once <= stt.total, "%s: once %lld of total %lld", r->name, (long long)g->once,
                 (long long)stt.total);
    r->total_once = g->once;
    r->self_mean = stt.n ? (double)g->self / (double)stt.n : 0;
    r->mem_avg = g->mem_n ? g->mem_sum / (double)g->mem_n : -1;
    r->gpu_util = g->gpu_n && g->gpu_wall > 0 ? (double)g->gpu_sum / (double)g->gpu_wall : -1;
    s->has_mem_avg |= g->mem_n > 0;
    s->has_gpu_util |= r->gpu_util >= 0;
}

/* Bottlenecks are GPU work when the selected kinds hold any; otherwise CPU ops, annotations and
 * ranges. */
static bool is_bottleneck_kind(bool gpu_rows, gp_event_kind k)
{
    return gpu_rows ? gp_event_kind_is_gpu_work(k)
                    : (k == GP_EV_CPU_OP || k == GP_EV_USER_ANNOTATION || k == GP_EV_RANGE);
}

/* Self time desc (what torch's key_averages().table(sort_by="self_cpu_time_total") shows; on GPU
 * rows self == total), then total desc, kind, name. */
static int cmp_rows(const void *a, const void *b)
{
    const gp_name_stats *x = a, *y = b;
    if (x->self_total != y->self_total)
        return x->self_total > y->self_total ? -1 : 1;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Over 150 lines on purpose (one of the three in src/, docs/internals/layers.md): one pass over
 * every event groups, sums and keeps samples in a single loop whose locals are the hot state of
 * the per-event work; the pieces of a split would pass most of them to each other. */
static gp_status summary_compute(const gp_trace *const *traces, size_t n,
                                 const gp_summary_opts *opts, gp_summary **out)
{
    gp_summary_opts defaults;
    if (!opts) {
        gp_summary_opts_init(&defaults);
        opts = &defaults;
    }
    gp_status st = GP_ENOMEM;
    gp__group_table tab;
    gp__group_table_init(&tab, sizeof(group), false);
    gp_summary *s = calloc(1, sizeof *s);
    if (!s)
        return GP_ENOMEM;
    s->n_traces = n;
    uint32_t mask = opts->kinds;
    s->kinds_selected = mask;
    uint32_t gpu_mask = 0;
    for (int k = 0; k < GP_EV_KIND_COUNT; k++)
        if (gp_event_kind_is_gpu((gp_event_kind)k))
            gpu_mask |= 1u << k;

    /* One pass: each event's duration goes to its group. memo[kind][name id] caches the group
     * index per trace, so names are hashed once per trace, not once per event. */
    for (size_t ti = 0; ti < n; ti++) {
        const gp_trace *t = traces[ti];
        size_t n_str = gp_trace_str_count(t) + 1;
        uint32_t *memo[GP_EV_KIND_COUNT] = {0};
        gp_ns *self = NULL;
        uint8_t *inner = NULL;
        uint32_t *heads = NULL;
        size_t self_cap = 0;
        bool ok = true;
        gp_ns start, end;
        gp_trace_span(t, &start, &end);
        s->span_sum = gp__sat_add(s->span_sum, end - start);
        add_read_stats(&s->input, &t->stats);
        for (size_t k = 0; ok && k < t->n_tracks; k++) {
            const gp_track *tr = &t->tracks[k];
            /* Self times only where events nest and a nesting kind is selected. */
            bool nested = tr->kind != GP_TRACK_GPU_STREAM && (mask == 0 || (mask & ~gpu_mask));
            if (nested && track_times(tr, &self, &inner, &self_cap, &heads, n_str) != GP_OK) {
                ok = false;
                break;
            }
            for (size_t i = 0; i < tr->n_events; i++) {
                const gp_event *ev = &tr->events[i];
                gp_event_kind kind = (gp_event_kind)ev->kind;
                /* GPU work is counted from the whole input, whatever --kind selects: has_gpu and
                 * gpu_time describe the trace, and a kernel's share does not depend on the
                 * filter. */
                if (gp_event_kind_is_gpu_work(kind)) {
                    s->gpu_time = gp__sat_add(s->gpu_time, ev->dur);
                    s->has_gpu = true;
                }
                if (!gp_event_kind_has_duration(kind) || (mask && !(mask & (1u << kind))))
                    continue;
                if (!memo[kind] && !(memo[kind] = calloc(n_str, sizeof(uint32_t)))) {
                    ok = false;
                    break;
                }
                uint32_t idx = ev->name < n_str ? memo[kind][ev->name] : 0;
                if (!idx) {
                    idx = gp__group_find(&tab, kind, gp_trace_str(t, ev->name),
                                         gp_trace_strlen(t, ev->name));
                    if (!idx) {
                        ok = false;
                        break;
                    }
                    if (ev->name < n_str)
                        memo[kind][ev->name] = idx;
                }
                group *g = gp__group_at(&tab, idx - 1);
                int64_t *d = GP_PUSH(g->durs, g->n, g->cap);
                if (!d) {
                    ok = false;
                    break;
                }
                *d = ev->dur;
                g->self = gp__sat_add(g->self, nested ? self[i] : ev->dur);
                g->once = gp__sat_add(g->once, nested && inner[i] ? 0 : ev->dur);
                add_range_args(t, ev, g);
            }
        }
        free(self);
        free(inner);
        free(heads);
        for (int m = 0; m < GP_EV_KIND_COUNT; m++)
            free(memo[m]);
        if (!ok)
            goto fail;
    }
    /* Rows per kind. */
    size_t per_kind[GP_EV_KIND_COUNT] = {0};
    for (size_t i = 0; i < tab.n; i++)
        per_kind[((group *)gp__group_at(&tab, i))->key.kind]++;
    for (int k = 0; k < GP_EV_KIND_COUNT; k++) {
        s->kinds[k].kind = (gp_event_kind)k;
        if (per_kind[k] && !(s->kinds[k].rows = calloc(per_kind[k], sizeof(gp_name_stats))))
            goto fail;
    }
    for (size_t i = 0; i < tab.n; i++) {
        group *g = gp__group_at(&tab, i);
        gp_kind_summary *ks = &s->kinds[g->key.kind];
        gp_name_stats *r = &ks->rows[ks->n_rows++];
        fill_row(s, r, g);
        ks->calls += r->calls;
        ks->total = gp__sat_add(ks->total, r->total);
        ks->self_total = gp__sat_add(ks->self_total, g->self);
    }
    for (int k = 0; k < GP_EV_KIND_COUNT; k++) {
        gp_kind_summary *ks = &s->kinds[k];
        ks->denominator =
            gp_event_kind_is_gpu_work((gp_event_kind)k) ? s->gpu_time : ks->self_total;
        for (size_t i = 0; i < ks->n_rows; i++)
            ks->rows[i].share =
                ks->denominator > 0 ? (double)ks->rows[i].self_total / (double)ks->denominator : 0;
        if (ks->n_rows > 1)
            gp__msort(ks->rows, ks->n_rows, sizeof *ks->rows, cmp_rows);
    }
    /* Top-N bottlenecks: GPU work when the selected kinds hold any, else CPU ops and
     * annotations/ranges, by self time. */
    for (int k = 0; k < GP_EV_KIND_COUNT; k++)
        if (gp_event_kind_is_gpu_work((gp_event_kind)k) && s->kinds[k].n_rows)
            s->top_is_gpu = true;
    size_t cand = 0;
    for (int k = 0; k < GP_EV_KIND_COUNT; k++)
        if (is_bottleneck_kind(s->top_is_gpu, (gp_event_kind)k))
            cand += s->kinds[k].n_rows;
    if (cand) {
        if (!(s->top = malloc(cand * sizeof *s->top)))
            goto fail;
        for (int k = 0; k < GP_EV_KIND_COUNT; k++) {
            if (is_bottleneck_kind(s->top_is_gpu, (gp_event_kind)k) && s->kinds[k].n_rows) {
                memcpy(s->top + s->n_top, s->kinds[k].rows, s->kinds[k].n_rows * sizeof *s->top);
                s->n_top += s->kinds[k].n_rows;
            }
        }
        gp__msort(s->top, s->n_top, sizeof *s->top, cmp_rows);
        size_t top_n = opts->top_n ? opts->top_n : 10;
        if (s->n_top > top_n)
            s->n_top = top_n;
    }
    st = GP_OK;
    *out = s;
    s = NULL;
fail:
    for (size_t i = 0; i < tab.n; i++)
        free(((group *)gp__group_at(&tab, i))->durs);
    gp__group_table_free(&tab);
    gp_summary_free(s);
    return st;
}

void gp_summary_free(gp_summary *s)
{
    if (!s)
        return;
    for (int k = 0; k < GP_EV_KIND_COUNT; k++)
        free(s->kinds[k].rows);
    free(s->top);
    free(s);
}

gp_status gp_summary_compute(const gp_trace *const *traces, size_t n, const gp_summary_opts *opts,
                             gp_summary **out, gp_error *err)
{
    gp_status st = summary_compute(traces, n, opts, out);
    if (st != GP_OK)
        gp_error_set(err, st, "%s computing the summary of %zu trace%s", gp_strerror(st), n,
                     n == 1 ? "" : "s");
    return st;
}
