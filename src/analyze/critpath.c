/* The critical path of each step (docs/analyses.md, "Critical path"): the regions (steps,
 * annotation instances, the whole trace) and the events of each region, side by side;
 * critpath_rank.c builds the rank's tables, critpath_graph.c the graph and its longest path,
 * critpath_result.c the result. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/critpath_internal.h"
#include "core/invariant.h"
#include "core/msort.h"
#include "core/par.h"

const char *gp_cp_class_name(gp_cp_class c)
{
    static const char *names[] = {"cpu_bound",
                                  "data_loading",
                                  "gpu_compute_bound",
                                  "gpu_communication_bound",
                                  "gpu_kernel_kernel_overhead",
                                  "gpu_kernel_launch_overhead",
                                  "dependency"};
    return (unsigned)c < GP_CP_COUNT ? names[c] : "unknown";
}

static bool cpu_kind(const gp_event *ev)
{
    return !(ev->flags & GP_EVF_INSTANT) && gp__is_cpu_frame_kind(ev->kind);
}

/* ---- the events of one region ---------------------------------------------------------------- */

static int cmp_nest(const gp__cpev *a, const gp__cpev *b)
{
    GP_CMP_KEY(a->s, b->s);
    GP_CMP_KEY(b->e, a->e); /* longer first */
    return GP_CMP((uintptr_t)a->ev, (uintptr_t)b->ev);
}

/* Nesting parents of one thread's events g->evs[from, to) (sorted by cmp_nest); in the default
 * mode an event nests only in one that contains it, and data loading passes down to the
 * children. */
static void nest(gp__cpgraph *g, size_t from, size_t to, int32_t *stack)
{
    size_t sp = 0;
    for (size_t i = from; i < to; i++) {
        gp__cpev *e = &g->evs[i];
        /* HTA nests an event under whatever is open; the default mode only under an event that
         * contains it (a record_function annotation opened inside a short Python frame and closed
         * much later is that frame's sibling, not its child) */
        while (sp > 0 &&
               (g->evs[stack[sp - 1]].e <= e->s || (!g->hta && g->evs[stack[sp - 1]].e < e->e)))
            sp--;
        e->parent = sp ? stack[sp - 1] : -1;
        if (!g->hta && e->parent >= 0 && (g->evs[e->parent].flags & GP__CPE_DATALOAD))
            e->flags |= GP__CPE_DATALOAD;
        stack[sp++] = (int32_t)i;
    }
}

static uint16_t cpu_flags(const gp__cprank *k, const gp_event *ev)
{
    uint16_t nb = gp__cp_name_bits(k, ev->name, (gp_event_kind)ev->kind);
    uint16_t f = 0;
    bool op = ev->kind == GP_EV_CPU_OP || ev->kind == GP_EV_RUNTIME || ev->kind == GP_EV_DRIVER;
    if (nb & GP__NB_DATALOAD)
        f |= GP__CPE_DATALOAD;
    if (!k->hta || op || (nb & GP__NB_DATALOAD))
        f |= GP__CPE_NODE;
    if (k->hta && (nb & GP__NB_HTA_BLOCKING))
        f |= GP__CPE_BLOCKING;
    if (k->hta && (nb & GP__NB_LOCK))
        f |= GP__CPE_LOCK;
    if (!k->hta && (nb & GP__NB_SYNC_CALL))
        f |= GP__CPE_SYNCCALL;
    if (!k->hta && (nb & GP__NB_ASYNC_COPY))
        f |= GP__CPE_ACOPY;
    return f;
}

static int cmp_thread_nest(const gp__cpev *a, const gp__cpev *b)
{
    GP_CMP_KEY(a->thread, b->thread);
    return cmp_nest(a, b);
}
GP__DEFINE_MERGE_SORT(sort_thread_nest, gp__cpev, cmp_thread_nest)

/* HTA's backward thread merge (§4.2): when exactly one thread holds cpu_op / user_annotation
 * names with "autograd" and exactly one other thread names with "forward", the first is nested
 * as part of the second. Returns whether it did. */
static bool merge_backward(const gp__cprank *k, gp__cpgraph *g)
{
    int32_t bw[2] = {-1, -1}, fw[2] = {-1, -1};
    size_t n_bw = 0, n_fw = 0;
    for (size_t i = 0; i < g->n_evs; i++) {
        const gp_event *ev = g->evs[i].ev;
        if (ev->kind != GP_EV_CPU_OP && ev->kind != GP_EV_USER_ANNOTATION)
            continue;
        uint16_t nb = gp__cp_name_bits(k, ev->name, (gp_event_kind)ev->kind);
        int32_t th = g->evs[i].thread;
        if ((nb & GP__NB_AUTOGRAD) && n_bw < 2 && (n_bw == 0 || bw[0] != th))
            bw[n_bw++] = th;
        if ((nb & GP__NB_FORWARD) && n_fw < 2 && (n_fw == 0 || fw[0] != th))
            fw[n_fw++] = th;
    }
    int32_t fwd = -1;
    for (size_t i = 0; i < n_fw; i++)
        if (n_bw == 1 && fw[i] != bw[0])
            fwd = fwd == -1 ? fw[i] : -2;
    if (n_bw != 1 || fwd < 0 || (n_fw == 2 && fw[0] != bw[0] && fw[1] != bw[0]))
        return false;
    for (size_t i = 0; i < g->n_evs; i++)
        if (g->evs[i].thread == bw[0])
            g->evs[i].thread = fwd;
    return true;
}

/* The CPU events of [ulo, uhi] (starts, in units, inclusive), in nesting order per thread. */
/* Where each scanned CPU event went: track tk's events [lo[tk], lo[tk] + n[tk]) map to
 * slot[off[tk] ...], the index of the region event, or -1 (not selected). */
typedef struct cp_slots {
    size_t *lo, *n, *off;
    int32_t *slot;
    size_t total; /* slots allocated */
} cp_slots;

static void slots_free(cp_slots *sl)
{
    free(sl->lo);
    free(sl->n);
    free(sl->off);
    free(sl->slot);
}

/* The region index of CPU event ev, or -1. */
static int32_t slot_of(const gp__cprank *k, const cp_slots *sl, const gp_event *ev)
{
    size_t tk = ev->track;
    if (tk >= k->t->n_tracks || !sl->n[tk])
        return -1;
    size_t pos = (size_t)(ev - k->t->tracks[tk].events);
    if (pos < sl->lo[tk] || pos - sl->lo[tk] >= sl->n[tk])
        return -1;
    return sl->slot[sl->off[tk] + pos - sl->lo[tk]];
}

/* Lays out the slots of the scanned events (sl->lo and sl->n set), all -1 ("not selected"):
 * track_cpu fills them as it appends; slots_refill after a sort. GP_ENOMEM. */
static gp_status slots_init(const gp__cprank *k, cp_slots *sl)
{
    size_t total = 0;
    for (size_t tk = 0; tk < k->t->n_tracks; tk++) {
        sl->off[tk] = total;
        total += sl->n[tk];
    }
    sl->total = total ? total : 1;
    sl->slot = malloc(sl->total * sizeof(*sl->slot));
    if (!sl->slot)
        return GP_ENOMEM;
    memset(sl->slot, 0xff, sl->total * sizeof(*sl->slot));
    return GP_OK;
}

/* The slots again, from the events' places in their tracks: after a sort moved the events (a
 * pass that reads every event of the trace it selected: only then). */
static void slots_refill(const gp__cprank *k, const gp__cpgraph *g, cp_slots *sl)
{
    memset(sl->slot, 0xff, sl->total * sizeof(*sl->slot));
    for (size_t i = 0; i < g->n_evs; i++) {
        const gp_event *ev = g->evs[i].ev;
        size_t tk = ev->track, pos = (size_t)(ev - k->t->tracks[tk].events);
        sl->slot[sl->off[tk] + pos - sl->lo[tk]] = (int32_t)i;
    }
}

/* The track indices [*from, *to) of CPU thread tr's events starting in [lo, hi] (ns). */
static void track_range(const gp_track *tr, gp_ns lo, gp_ns hi, size_t *from, size_t *to)
{
    *from = gp__track_lower_bound(tr, lo);
    *to = hi == INT64_MAX ? tr->n_events : gp__track_lower_bound(tr, hi + 1);
}

/* Notes CPU event i of g among the synchronising calls when it is one. GP_ENOMEM. */
static gp_status note_call(gp__cpgraph *g, size_t i)
{
    if (!(g->evs[i].flags & (GP__CPE_SYNCCALL | GP__CPE_ACOPY)))
        return GP_OK;
    uint32_t *c = GP_PUSH(g->calls, g->n_calls, g->cap_calls);
    if (!c)
        return GP_ENOMEM;
    *c = (uint32_t)i;
    return GP_OK;
}

/* Appends the CPU events of track tk whose starts are in [ulo, uhi] (units), their slots and the
 * synchronising calls among them; scanned: its events [from, to) (ns bounds one unit wider).
 * *sorted turns false when two of them are out of nesting order (cmp_nest): the track is in
 * (start, longer first) order in ns, which rounding to HTA's microseconds may break. g->evs has
 * room for all of them. GP_ENOMEM. */
static gp_status track_cpu(const gp__cprank *k, size_t tk, size_t from, size_t to, int64_t ulo,
                           int64_t uhi, gp__cpgraph *g, cp_slots *sl, bool *sorted)
{
    const gp_event *evs = k->t->tracks[tk].events;
    int32_t *slot = sl->slot + sl->off[tk] - sl->lo[tk];
    const gp__cpev *prev = NULL;
    for (size_t i = from; i < to; i++) {
        const gp_event *ev = &evs[i];
        if (!cpu_kind(ev) || ev->ts >= k->cpu_hi)
            continue;
        int64_t s = gp__cp_unit_start(k, ev->ts), e = gp__cp_unit_end(k, ev->ts, ev->dur);
        if (s < ulo || s > uhi || e - s <= 0)
            continue;
        if (prev && (prev->s > s || (prev->s == s && prev->e < e)))
            *sorted = false;
        slot[i] = (int32_t)g->n_evs;
        gp__cpev *c = &g->evs[g->n_evs++];
        *c = (gp__cpev){.ev = ev,
                        .s = s,
                        .e = e,
                        .parent = -1,
                        .launcher = -1,
                        .thread = (int32_t)tk,
                        .q_launch = INT32_MIN,
                        .q_start = INT32_MIN,
                        .ns = UINT32_MAX,
                        .ne = UINT32_MAX,
                        .wait_src = -1,
                        .flags = cpu_flags(k, ev)};
        prev = c;
        if (note_call(g, g->n_evs - 1) != GP_OK)
            return GP_ENOMEM;
    }
    return GP_OK;
}

/* The number of GPU events of the rank launched by a call starting in [ulo, uhi] (units), the
 * first of them at k->by_launch[*first]. */
static size_t launched_count(const gp__cprank *k, int64_t ulo, int64_t uhi, size_t *first)
{
    size_t bound[2];
    for (int b = 0; b < 2; b++) {
        size_t lo = 0, hi = k->n_by_launch;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (b == 0 ? k->lts[k->by_launch[mid]] < ulo : k->lts[k->by_launch[mid]] <= uhi)
                lo = mid + 1;
            else
                hi = mid;
        }
        bound[b] = lo;
    }
    *first = bound[0];
    return bound[1] - bound[0];
}

static gp_status region_cpu(const gp__cprank *k, int64_t ulo, int64_t uhi, gp__cpgraph *g,
                            cp_slots *sl)
{
    sl->lo = calloc(k->t->n_tracks + 1, sizeof(*sl->lo));
    sl->n = calloc(k->t->n_tracks + 1, sizeof(*sl->n));
    sl->off = calloc(k->t->n_tracks + 1, sizeof(*sl->off));
    if (!sl->lo || !sl->n || !sl->off)
        return GP_ENOMEM;
    const gp_trace *t = k->t;
    gp_ns base = k->unit > 1 ? t->base_time_ns : 0;
    gp_ns lo = ulo == INT64_MIN ? INT64_MIN : (ulo - 1) * k->unit + base;
    gp_ns hi = uhi == INT64_MAX ? INT64_MAX : (uhi + 1) * k->unit + base;
    /* the events are sized once: every scanned CPU event, and the GPU events the region's calls
     * launched (growing by doubling copied them several times) */
    size_t most = 0, first;
    for (size_t tk = 0; tk < t->n_tracks; tk++) {
        if (t->tracks[tk].kind != GP_TRACK_CPU_THREAD)
            continue;
        size_t to;
        track_range(&t->tracks[tk], lo, hi, &sl->lo[tk], &to);
        sl->n[tk] = to - sl->lo[tk];
        most += sl->n[tk];
    }
    size_t scanned = most;
    most += launched_count(k, ulo, uhi, &first);
    if (slots_init(k, sl) != GP_OK ||
        gp__cp_reserve((void **)&g->evs, &g->cap_evs, sizeof(*g->evs), most) != GP_OK)
        return GP_ENOMEM;
    int32_t *stack = malloc((scanned ? scanned : 1) * sizeof(*stack));
    if (!stack)
        return GP_ENOMEM;
    /* The events of a thread are in nesting order already unless rounding or the merge moved
     * them. In the default mode a thread's events are final once appended in order: nested
     * there, while they are in the cache (one pass fewer over the region's events). */
    bool sorted = true;
    for (size_t tk = 0; tk < t->n_tracks; tk++) {
        if (!sl->n[tk])
            continue;
        size_t from = g->n_evs;
        bool in_order = true;
        if (track_cpu(k, tk, sl->lo[tk], sl->lo[tk] + sl->n[tk], ulo, uhi, g, sl, &in_order) !=
            GP_OK) {
            free(stack);
            return GP_ENOMEM;
        }
        if (!in_order)
            sorted = false;
        else if (!k->hta)
            nest(g, from, g->n_evs, stack);
    }
    if (k->hta && merge_backward(k, g))
        sorted = false;
    if (!sorted && !sort_thread_nest(g->evs, g->n_evs)) {
        free(stack);
        return GP_ENOMEM;
    }
    /* the calls again when the sort moved them */
    g->n_calls = sorted ? g->n_calls : 0;
    for (size_t i = 0; !sorted && i < g->n_evs; i++)
        if (note_call(g, i) != GP_OK) {
            free(stack);
            return GP_ENOMEM;
        }
    /* HTA mode, or a thread out of order: every thread nested here (again: nesting a thread
     * twice gives the same parents and flags) */
    for (size_t from = 0, to; (k->hta || !sorted) && from < g->n_evs; from = to) {
        for (to = from + 1; to < g->n_evs && g->evs[to].thread == g->evs[from].thread; to++)
            ;
        nest(g, from, to, stack);
    }
    free(stack);
    if (!sorted)
        slots_refill(k, g, sl);
    return GP_OK;
}

/* The GPU events launched by the region's CPU events (by launch time: no lookups). */
static gp_status region_gpu(const gp__cprank *k, const cp_slots *sl, int64_t ulo, int64_t uhi,
                            gp__cpgraph *g)
{
    size_t lo = 0, hi = k->n_by_launch, from = g->n_evs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (k->lts[k->by_launch[mid]] < ulo)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* rank template -> region index, for the waits (wait_src) */
    int32_t *map = malloc((k->n_gpu ? k->n_gpu : 1) * sizeof(*map));
    if (!map)
        return GP_ENOMEM;
    memset(map, 0xff, (k->n_gpu ? k->n_gpu : 1) * sizeof(*map));
    for (size_t i = lo; i < k->n_by_launch && k->lts[k->by_launch[i]] <= uhi; i++) {
        const gp__cptmpl *tmpl = &k->gpu[k->by_launch[i]];
        int32_t l = slot_of(k, sl, k->launch[k->by_launch[i]]);
        if (l < 0 || !(g->evs[l].flags & GP__CPE_NODE))
            continue;
        gp__cpev *c = GP_PUSH(g->evs, g->n_evs, g->cap_evs);
        if (!c) {
            free(map);
            return GP_ENOMEM;
        }
        *c = gp__cp_from_tmpl(tmpl);
        c->launcher = l;
        map[k->by_launch[i]] = (int32_t)(g->n_evs - 1);
    }
    for (size_t i = from; i < g->n_evs; i++)
        if (g->evs[i].wait_src >= 0)
            g->evs[i].wait_src = map[g->evs[i].wait_src];
    free(map);
    return GP_OK;
}

/* True when the launch call starting at lts (a template's) is one of the region's events
 * (region_gpu took its GPU event). */
static bool launched_inside(int64_t lts, int64_t ulo, int64_t uhi)
{
    return lts != INT64_MIN && lts >= ulo && lts <= uhi;
}

/* Default mode: the GPU work that runs in the region but was launched before it (or by no
 * recorded call), clipped to the region's start: a step that begins by waiting for the previous
 * step's kernels waits for GPU work. */
static gp_status region_carried(const gp__cprank *k, int64_t ulo, int64_t uhi, gp__cpgraph *g)
{
    for (size_t r = 0; r < k->n_runs; r++) {
        size_t from = k->runs[r], to = k->runs[r + 1], lo = from, hi = to;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (k->gpu[mid].s < ulo)
                lo = mid + 1;
            else
                hi = mid;
        }
        while (lo > from && k->gpu[lo - 1].e > ulo)
            lo--;
        for (size_t i = lo; i < to && k->gpu[i].s <= uhi; i++) {
            const gp__cptmpl *tmpl = &k->gpu[i];
            if (tmpl->e <= ulo || launched_inside(k->lts[i], ulo, uhi))
                continue;
            gp__cpev *c = GP_PUSH(g->evs, g->n_evs, g->cap_evs);
            if (!c)
                return GP_ENOMEM;
            *c = gp__cp_from_tmpl(tmpl);
            c->s = GP_MAX(c->s, ulo);
            c->wait_src = -1; /* not launched in the region: its launch and waits are outside */
            c->flags &= (uint16_t)~GP__CPE_XREC;
        }
    }
    return GP_OK;
}

GP__DEFINE_MERGE_SORT(sort_end_keys, gp__cp_time_key, gp__cp_time_key_cmp)

/* Default mode: each synchronising call waits for the GPU work that ended last inside it; an
 * async copy blocks when its own copy ended inside it (a D2H copy to pageable memory). */
static gp_status infer_syncs(gp__cpgraph *g)
{
    if (g->n_calls == 0)
        return GP_OK;
    gp__cp_time_key *ends = malloc((g->n_evs - g->n_cpu + 1) * sizeof(*ends));
    if (!ends)
        return GP_ENOMEM;
    size_t n = 0;
    for (size_t i = g->n_cpu; i < g->n_evs; i++)
        ends[n++] = (gp__cp_time_key){g->evs[i].e, (uint32_t)i};
    if (!sort_end_keys(ends, n)) {
        free(ends);
        return GP_ENOMEM;
    }
    for (size_t k = 0; k < g->n_calls; k++) {
        size_t i = g->calls[k];
        gp__cpev *c = &g->evs[i];
        /* The last GPU end <= the call's end. */
        size_t lo = gp__cp_time_keys_upto(ends, n, c->e);
        for (size_t j = lo; j-- > 0 && ends[j].t > c->s;) {
            const gp__cpev *w = &g->evs[ends[j].ev];
            if ((c->flags & GP__CPE_ACOPY) && w->launcher != (int32_t)i)
                continue; /* an async copy waits only for its own copy */
            c->launcher = (int32_t)ends[j].ev;
            c->flags |= GP__CPE_BLOCKING;
            break;
        }
    }
    free(ends);
    return GP_OK;
}

/* Default mode: how soon after the end of GPU work on another stream of its device a kernel must
 * start for that work to count as what it waited for (a cross-stream event wait), in ns. */
#define XWAIT_SLACK_NS 5000

typedef struct xw_key {
    int64_t dev, e;
    uint32_t ev;
} xw_key;

static int cmp_xw_key(const xw_key *a, const xw_key *b)
{
    GP_CMP_KEY(a->dev, b->dev);
    GP_CMP_KEY(a->e, b->e);
    return GP_CMP(a->ev, b->ev);
}
GP__DEFINE_MERGE_SORT(sort_xw_keys, xw_key, cmp_xw_key)

/* The device of a lane (its key is stream * 4096 + device). */
static int64_t lane_device(const gp__cprank *k, int32_t lane)
{
    int64_t key = k->lanes[lane];
    return ((key % 4096) + 4096) % 4096;
}

/* Default mode, cross-stream waits without a record: for each launched GPU event whose wait the
 * trace's Stream Wait Event rows did not name (default_wait_sources, critpath_rank.c), the GPU
 * work of another stream of the same device that started before it and ended last at most
 * XWAIT_SLACK_NS before its start (wait_src; gpu_edges takes it only when the launch and the
 * stream's own queue do not explain the start). A cudaStreamWaitEvent's recorded work ends so;
 * without cuda_sync rows the trace names neither the event's stream nor the record call
 * (docs/analyses.md, "Critical path"). GP_ENOMEM. */
static gp_status infer_xwaits(const gp__cprank *k, gp__cpgraph *g)
{
    xw_key *keys = malloc((g->n_evs ? g->n_evs : 1) * sizeof(*keys));
    if (!keys)
        return GP_ENOMEM;
    size_t n = 0;
    for (size_t i = g->n_cpu; i < g->n_evs; i++)
        if (g->evs[i].flags & GP__CPE_NODE)
            keys[n++] = (xw_key){lane_device(k, g->evs[i].thread), g->evs[i].e, (uint32_t)i};
    if (!sort_xw_keys(keys, n)) {
        free(keys);
        return GP_ENOMEM;
    }
    for (size_t i = g->n_cpu; i < g->n_evs; i++) {
        gp__cpev *c = &g->evs[i];
        if (!(c->flags & GP__CPE_NODE) || c->launcher < 0)
            continue;
        if ((c->flags & GP__CPE_XREC) && c->wait_src >= 0)
            continue; /* the record named its work (default_wait_sources) */
        c->flags &= (uint16_t)~GP__CPE_XREC;
        xw_key x = {lane_device(k, c->thread), c->s, UINT32_MAX};
        size_t lo = 0, hi = n; /* the first key after (device, start) */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (cmp_xw_key(&keys[mid], &x) <= 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t j = lo, seen = 0; j-- > 0 && seen < 16; seen++) {
            if (keys[j].dev != x.dev || keys[j].e < c->s - XWAIT_SLACK_NS)
                break;
            const gp__cpev *w = &g->evs[keys[j].ev];
            if (w->thread != c->thread && w->s < c->s) {
                c->wait_src = (int32_t)keys[j].ev;
                break;
            }
        }
    }
    free(keys);
    return GP_OK;
}

/* Default mode: the path's cross-stream wait edges inferred without a record (gpu_edges: the only
 * sync edges attributed to GPU work; the waiting kernel without GP__CPE_XREC). */
static size_t xwaits_on_path(const gp__cpgraph *g)
{
    size_t n = 0;
    for (size_t i = 0; i < g->n_path; i++) {
        const gp__cpedge *e = gp__cp_path_edge(g, i);
        n += e->type == GP__CPT_SYNC && e->ev >= 0 && (g->evs[e->ev].flags & GP__CPE_GPU) &&
             !(g->evs[gp__cp_node(g, e->dst).ev].flags & GP__CPE_XREC);
    }
    return n;
}

/* The graph of the region whose CPU events start in [ulo, uhi] (units), with its longest path,
 * in g (reset: its buffers kept). GP_EINVAL: the graph has a cycle. */
static gp_status region_graph(const gp__cprank *k, int64_t ulo, int64_t uhi, gp__cpgraph *g)
{
    gp__cp_graph_reset(g);
    g->hta = k->hta;
    cp_slots sl = {NULL, NULL, NULL, NULL, 0};
    gp_status st = region_cpu(k, ulo, uhi, g, &sl);
    g->n_cpu = g->n_evs;
    if (st == GP_OK)
        st = region_gpu(k, &sl, ulo, uhi, g);
    slots_free(&sl);
    if (st == GP_OK && !k->hta)
        st = region_carried(k, ulo, uhi, g);
    if (st == GP_OK && !k->hta)
        st = infer_syncs(g);
    if (st == GP_OK && !k->hta)
        st = infer_xwaits(k, g);
    g->origin = ulo;
    for (size_t i = 0; ulo == INT64_MIN && i < g->n_evs; i++)
        g->origin = i == 0 ? g->evs[i].s : GP_MIN(g->origin, g->evs[i].s);
    if (st == GP_OK)
        st = gp__cp_build(g);
    if (st == GP_OK)
        st = gp__cp_longest(g);
    return st;
}

/* ---- regions ------------------------------------------------------------------------------- */

static int64_t step_number(const char *name)
{
    const char *p = strchr(name, '#');
    return p ? strtoll(p + 1, NULL, 10) : -1;
}

/* The critical path of the region of annotation event ann (NULL: the whole trace), its graph
 * built in g (whose buffers the next region reuses). */
static gp_status one_region(const gp__cprank *k, const gp_event *ann, gp_critical_path *cp,
                            gp__cpgraph *graph)
{
    int64_t ulo = INT64_MIN, uhi = INT64_MAX;
    cp->step = -1;
    cp->region = "";
    for (int c = 0; c < GP_CP_COUNT; c++)
        cp->pct[c] = NAN;
    if (ann) {
        cp->region = gp_trace_str(k->t, ann->name);
        if (gp__cp_name_bits(k, ann->name, (gp_event_kind)ann->kind) & GP__NB_STEP)
            cp->step = step_number(cp->region);
        cp->start = ann->ts;
        cp->end = ann->ts + ann->dur;
        ulo = gp__cp_unit_start(k, ann->ts);
        uhi = gp__cp_unit_end(k, ann->ts, ann->dur) - (k->hta ? 0 : 1); /* HTA: end inclusive */
    } else {
        gp_trace_span(k->t, &cp->start, &cp->end);
    }
    gp__cpgraph g = *graph;
    gp_status st = region_graph(k, ulo, uhi, &g);
    if (st == GP_EINVAL) {
        snprintf(cp->note, sizeof cp->note,
                 "The region's graph has a cycle (overlapping events on one thread): no path.");
        st = GP_OK;
    } else if (st == GP_OK && g.n_path == 0) {
        snprintf(cp->note, sizeof cp->note,
                 "No CPU op, runtime call or GPU event in the region: no path.");
    } else if (st == GP_OK) {
        st = gp__cp_result(&g, k->t, k->unit, k->o->critical_path_overlay, cp);
        cp->valid = st == GP_OK;
        /* default mode: the path covers at most the region from its start to its last end (the
         * window plus the tail of work launched in it) */
        int64_t last = GP_MAX(g.origin, g.max_end);
        /* Not an invariant of every input: a negative weight used as 0 (a GPU event that starts
         * before its launch call, clock skew) or events that overlap without nesting on a thread
         * (found by fuzz_report_page) let the path pass the region. The note says so. */
        if (!k->hta && cp->valid && g.length > last - g.origin && !cp->note[0])
            snprintf(cp->note, sizeof cp->note, "%s",
                     "The path is longer than its region from start to last end: events out of "
                     "order (clock skew or overlapping events).");
        if (g.negative && k->hta)
            snprintf(cp->note, sizeof cp->note,
                     "%zu edges have a negative weight (events rounded inward to the microsecond): "
                     "the path uses 0, the breakdown their weight, as HTA.",
                     g.negative);
        size_t xw = k->hta ? 0 : xwaits_on_path(&g);
        if (xw)
            snprintf(cp->note, sizeof cp->note,
                     "%zu cross-stream wait%s inferred: a kernel started <= %d us after work on "
                     "another stream ended (no event record in the trace).",
                     xw, xw == 1 ? "" : "s", XWAIT_SLACK_NS / 1000);
    }
    *graph = g; /* its buffers, for the next region */
    return st;
}

static int cmp_ts(const gp_event *const *a, const gp_event *const *b)
{
    return GP_CMP((*a)->ts, (*b)->ts);
}
GP__DEFINE_MERGE_SORT(sort_by_ts, gp__cp_evp, cmp_ts)

/* The instances of an annotation: events whose name contains it, CPU-side ones by start, then
 * GPU-side annotation copies by start (HTA's order, §2). */
static gp_status instances(const gp__cprank *k, const char *ann, const gp_event ***out, size_t *n)
{
    const gp_trace *t = k->t;
    size_t cap = 0, n_cpu = 0;
    *out = NULL;
    *n = 0;
    gp_strid last_yes = 0, last_no = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t tk = 0; tk < t->n_tracks; tk++) {
            const gp_track *tr = &t->tracks[tk];
            if (tr->kind != (pass == 0 ? GP_TRACK_CPU_THREAD : GP_TRACK_GPU_STREAM))
                continue;
            for (size_t i = 0; i < tr->n_events; i++) {
                const gp_event *ev = &tr->events[i];
                if ((pass == 0 ? !cpu_kind(ev) : ev->kind != GP_EV_GPU_USER_ANNOTATION) ||
                    ev->ts >= k->cpu_hi || ev->name == last_no)
                    continue;
                if (ev->name != last_yes) {
                    if (!strstr(gp_trace_str(t, ev->name), ann)) {
                        last_no = ev->name;
                        continue;
                    }
                    last_yes = ev->name;
                }
                const gp_event **p = GP_PUSH(*out, *n, cap);
                if (!p)
                    return GP_ENOMEM;
                *p = ev;
                (void)gp__cp_name_bits(k, ev->name,
                                       (gp_event_kind)ev->kind); /* cached before threads */
            }
        }
        if (pass == 0)
            n_cpu = *n;
    }
    if (!sort_by_ts(*out, n_cpu) || !sort_by_ts(*out + n_cpu, *n - n_cpu))
        return GP_ENOMEM;
    return GP_OK;
}

/* The steps --steps selects (N-M: ProfilerStep#N..#M; hta: all but the last), in *list (a new
 * array unless every step is kept). */
static gp_status select_steps(const gp__cprank *k, const gp_event ***list, size_t *n, char *why,
                              size_t cap)
{
    const gp_analyze_opts *o = k->o;
    if (o->steps == GP_STEPS_ALL || k->n_steps == 0 || (o->steps == GP_STEPS_HTA && k->n_steps < 2))
        return GP_OK;
    const gp_event **kept = malloc(k->n_steps * sizeof(*kept));
    if (!kept)
        return GP_ENOMEM;
    gp_ns last = k->steps[k->n_steps - 1]->ts; /* sorted by start */
    size_t m = 0;
    for (size_t i = 0; i < k->n_steps; i++) {
        const gp_event *s = k->steps[i];
        int64_t num = step_number(gp_trace_str(k->t, s->name));
        if (o->steps == GP_STEPS_HTA ? s->ts < last : num >= o->step_first && num <= o->step_last)
            kept[m++] = s;
    }
    if (m == 0)
        snprintf(why, cap, "No ProfilerStep selected by --steps: no critical path.");
    *list = kept;
    *n = m;
    return GP_OK;
}

/* The regions: each ProfilerStep (the whole trace without steps), or the instances of
 * opts.cp_annotation; HTA mode: one region, as HTA (see gp_analyze_opts). */
static gp_status regions(const gp__cprank *k, const gp_event ***list, size_t *n, bool *whole,
                         char *why, size_t cap)
{
    const gp_analyze_opts *o = k->o;
    const char *ann = o->cp_annotation;
    int64_t inst = o->cp_instance;
    *list = NULL;
    *n = 0;
    *whole = false;
    why[0] = '\0';
    if (k->hta) {
        ann = ann ? ann : (k->n_steps ? "ProfilerStep" : "");
        inst = inst < 0 ? 0 : inst;
    }
    if (!ann) {
        *whole = k->n_steps == 0;
        *list = k->steps;
        *n = k->n_steps;
        return select_steps(k, list, n, why, cap);
    }
    if (!ann[0]) {
        *whole = true;
        return GP_OK;
    }
    const gp_event **all;
    size_t n_all;
    gp_status st = instances(k, ann, &all, &n_all);
    if (st != GP_OK) {
        free(all);
        return st;
    }
    if (n_all == 0)
        snprintf(why, cap, "No event name contains \"%s\": no critical path.", ann);
    else if (inst >= (int64_t)n_all)
        snprintf(why, cap, "Instance %lld of \"%s\" asked for, the trace has %zu.", (long long)inst,
                 ann, n_all);
    if (why[0]) {
        free(all);
        return GP_OK;
    }
    if (inst >= 0) {
        all[0] = all[inst];
        n_all = 1;
    }
    *list = all;
    *n = n_all;
    return GP_OK;
}

/* The regions' tasks. Each takes one of the graphs (one per thread: a free one is always there)
 * and gives it back, its buffers kept for the next region. */
typedef struct region_tasks {
    const gp__cprank *k;
    const gp_event **list; /* NULL: one region, the whole trace */
    gp_critical_path *out;
    gp_status *st;
    gp__cpgraph *graphs;
    atomic_bool *taken;
} region_tasks;

static void run_region(void *ctx, size_t i)
{
    region_tasks *rt = ctx;
    size_t s = 0;
    while (atomic_exchange(&rt->taken[s], true))
        s++;
    rt->st[i] = one_region(rt->k, rt->list ? rt->list[i] : NULL, &rt->out[i], &rt->graphs[s]);
    atomic_store(&rt->taken[s], false);
}

gp_status gp__analyze_critical_path(const gp__view *v, gp_rank_analysis *r)
{
    if (!v->o->critical_path)
        return GP_OK;
    gp__cprank k;
    gp_status st = gp__cp_rank_init(&k, v->t, v->o);
    const gp_event **list = NULL;
    size_t n = 0;
    bool whole = false;
    char why[160];
    if (st == GP_OK)
        st = regions(&k, &list, &n, &whole, why, sizeof why);
    size_t n_cp = whole || why[0] ? 1 : n;
    if (st == GP_OK && n_cp && !(r->critical_paths = calloc(n_cp, sizeof(*r->critical_paths))))
        st = GP_ENOMEM;
    if (st == GP_OK && why[0]) {
        gp_critical_path *cp = &r->critical_paths[r->n_critical_paths++];
        cp->step = -1;
        cp->region = "";
        for (int c = 0; c < GP_CP_COUNT; c++)
            cp->pct[c] = NAN;
        snprintf(cp->note, sizeof cp->note, "%s", why);
    }
    if (st == GP_OK && !why[0]) {
        /* the regions are independent: side by side, each writing its own result */
        int threads = n_cp > 1 ? GP_MAX(gp__rank_threads(v->t, v->o, 4), 1) : 1;
        region_tasks rt = {&k, whole ? NULL : list, r->critical_paths, NULL, NULL, NULL};
        rt.st = calloc(n_cp, sizeof(*rt.st));
        rt.graphs = calloc((size_t)threads, sizeof(*rt.graphs));
        rt.taken = calloc((size_t)threads, sizeof(*rt.taken));
        if (!rt.st || !rt.graphs || !rt.taken) {
            st = GP_ENOMEM;
        } else {
            for (int i = 0; i < threads; i++)
                atomic_init(&rt.taken[i], false);
            gp__par_for(n_cp, threads, run_region, &rt);
        }
        for (size_t i = 0; rt.st && i < n_cp; i++)
            if (rt.st[i] != GP_OK)
                st = rt.st[i];
        r->n_critical_paths = n_cp;
        for (int i = 0; rt.graphs && i < threads; i++)
            gp__cp_graph_free(&rt.graphs[i]);
        free(rt.st);
        free(rt.graphs);
        free(rt.taken);
    }
    if (list != k.steps)
        free(list);
    gp__cp_rank_free(&k);
    return st;
}
