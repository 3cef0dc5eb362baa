/* The critical path of each step (docs/analyses.md, "Critical path"): the rank's tables (launches
 * by correlation id, GPU events, HTA's queue lengths, name classes), the regions (steps, annotation
 * instances, the whole trace) and the events of each region; critpath_graph.c builds the graph
 * and its longest path, critpath_result.c turns the path into the result. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/critpath_internal.h"
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

/* What a name is, computed once per name (bits of cp_rank.names; bit 0: computed). */
enum {
    NB_DONE = 1u << 0,
    NB_HTA_BLOCKING = 1u << 1,  /* HTA's blocking list */
    NB_LOCK = 1u << 2,          /* HTA's runtime-lock list */
    NB_DATALOAD = 1u << 3,      /* a data-loading pattern matches */
    NB_SYNC_CALL = 1u << 4,     /* default: a synchronising call or synchronous copy */
    NB_ASYNC_COPY = 1u << 5,    /* default: an async copy (blocks when its copy ends inside) */
    NB_LAUNCH = 1u << 6,        /* HTA's launch calls (queue length) */
    NB_HTA_COMM = 1u << 7,      /* HTA's communication regexes on the short name */
    NB_COMM = 1u << 8,          /* gpuprof's communication class */
    NB_STEP = 1u << 9,          /* ProfilerStep#N */
    NB_CONTEXT_SYNC = 1u << 10, /* "Context Sync" */
    NB_AUTOGRAD = 1u << 11,     /* contains "autograd" (HTA's backward thread merge) */
    NB_FORWARD = 1u << 12       /* contains "forward" */
};

typedef struct cp_rank {
    const gp_trace *t;
    const gp_analyze_opts *o;
    bool hta;
    int64_t unit;
    uint16_t *names; /* NB_* per string id */
    size_t n_names;
    uint64_t *lk, *lv; /* (correlation, launch call) of runtime/driver calls, until joined */
    size_t n_l, cap_lk, cap_lv;
    gp__cpev *gpu; /* every GPU event of the rank (templates: launcher unset) */
    size_t n_gpu, cap_gpu;
    uint32_t *by_launch; /* GPU indices with a possible region launch (lts), by lts */
    size_t n_by_launch;
    size_t *runs; /* gpu[runs[i], runs[i + 1]) is one GPU track's events, by start */
    size_t n_runs;
    gp_ns cpu_hi;           /* HTA: CPU events starting at or after it are gone (last step) */
    const gp_event **steps; /* CPU-side ProfilerSteps, by start */
    size_t n_steps, cap_steps;
} cp_rank;

static const char *const hta_blocking[] = {"cudaDeviceSynchronize",
                                           "cudaStreamSynchronize",
                                           "cudaEventQuery",
                                           "cudaEventSynchronize",
                                           "cudaMemcpy",
                                           "cudaMemcpyAsync"};
static const char *const hta_lock[] = {"cudaLaunchKernel", "cudaMemcpyAsync", "cudaHostAlloc"};
static const char *const hta_launch[] = {
    "cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel",      "cuLaunchKernelEx",
    "cudaMemcpyAsync",  "cudaMemsetAsync",     "hipLaunchKernel",     "hipExtModuleLaunchKernel",
    "hipMemcpyAsync",   "hipMemsetAsync",      "hipMemcpyWithStream", "runFunction"};
static const char *const default_data_load[] = {"DataLoader", "dataloader"};

static bool in_list(const char *name, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(name, list[i]) == 0)
            return true;
    return false;
}

static bool is_copy_call(const char *s)
{
    return strncmp(s, "cudaMemcpy", 10) == 0 || strncmp(s, "hipMemcpy", 9) == 0 ||
           strncmp(s, "cuMemcpy", 8) == 0;
}

static uint16_t name_bits_compute(const cp_rank *k, gp_strid id, gp_event_kind kind)
{
    const char *s = gp_trace_str(k->t, id);
    uint16_t b = NB_DONE;
    const char *const *dl = k->o->data_load ? k->o->data_load : default_data_load;
    size_t n_dl = k->o->data_load ? k->o->n_data_load : GP_ARRAY_LEN(default_data_load);
    for (size_t i = 0; i < n_dl; i++)
        if (dl[i] && dl[i][0] && strstr(s, dl[i]))
            b |= NB_DATALOAD;
    if (in_list(s, hta_blocking, GP_ARRAY_LEN(hta_blocking)))
        b |= NB_HTA_BLOCKING;
    if (in_list(s, hta_lock, GP_ARRAY_LEN(hta_lock)))
        b |= NB_LOCK;
    if (in_list(s, hta_launch, GP_ARRAY_LEN(hta_launch)))
        b |= NB_LAUNCH;
    if (strstr(s, "Synchronize"))
        b |= NB_SYNC_CALL;
    else if (is_copy_call(s))
        b |= (strstr(s, "Async") || strstr(s, "WithStream")) ? NB_ASYNC_COPY : NB_SYNC_CALL;
    if (strncmp(s, "ProfilerStep#", 13) == 0)
        b |= NB_STEP;
    if (strcmp(s, "Context Sync") == 0)
        b |= NB_CONTEXT_SYNC;
    if (strstr(s, "autograd"))
        b |= NB_AUTOGRAD;
    if (strstr(s, "forward"))
        b |= NB_FORWARD;
    if (gp_event_kind_is_gpu(kind)) {
        char short_name[256];
        gp__cp_short_name(s, short_name, sizeof short_name);
        if (strncmp(short_name, "nccl", 4) == 0 || strncmp(short_name, "hip", 3) == 0 ||
            strncmp(short_name, "hccl", 4) == 0 || strstr(short_name, "ncclKernel"))
            b |= NB_HTA_COMM;
        if (gp_classify_name(s, kind, false) == GP_KT_COMMUNICATION)
            b |= NB_COMM;
    }
    if (id < k->n_names)
        k->names[id] = b;
    return b;
}

/* The NB_* bits of a name: from the cache once computed (regions only read it). */
static inline uint16_t name_bits(const cp_rank *k, gp_strid id, gp_event_kind kind)
{
    if (id < k->n_names && (k->names[id] & NB_DONE))
        return k->names[id];
    return name_bits_compute(k, id, kind);
}

/* Time in the graph's unit: ns, or HTA's microseconds (starts rounded up, ends down). */
static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int64_t unit_start(const cp_rank *k, gp_ns t)
{
    return k->unit == 1 ? t : -floor_div(-(t - k->t->base_time_ns), k->unit);
}

static int64_t unit_end(const cp_rank *k, gp_ns t)
{
    return k->unit == 1 ? t : floor_div(t - k->t->base_time_ns, k->unit);
}

static bool cpu_kind(const gp_event *ev)
{
    if (ev->flags & GP_EVF_INSTANT)
        return false;
    switch (ev->kind) {
    case GP_EV_CPU_OP:
    case GP_EV_USER_ANNOTATION:
    case GP_EV_PYTHON:
    case GP_EV_RUNTIME:
    case GP_EV_DRIVER:
    case GP_EV_RANGE:
    case GP_EV_OVERHEAD:
    case GP_EV_OTHER:
        return true;
    default:
        return false;
    }
}

/* The (correlation, call) pairs of runtime/driver calls and the ProfilerSteps. */
static gp_status scan_cpu(cp_rank *k)
{
    const gp_trace *t = k->t;
    gp_status st = GP_OK;
    gp_ns last_step = INT64_MIN;
    size_t distinct = 0;
    gp_strid first_name = 0;
    for (size_t tk = 0; tk < t->n_tracks && st == GP_OK; tk++) {
        const gp_track *tr = &t->tracks[tk];
        if (tr->kind != GP_TRACK_CPU_THREAD)
            continue;
        for (size_t i = 0; i < tr->n_events && st == GP_OK; i++) {
            const gp_event *ev = &tr->events[i];
            /* every name a region reads is classified here, once: regions then only read the
             * cache (they run on several threads) */
            uint16_t nb = name_bits(k, ev->name, (gp_event_kind)ev->kind);
            if ((ev->kind == GP_EV_RUNTIME || ev->kind == GP_EV_DRIVER) && ev->correlation != 0) {
                size_t n = k->n_l;
                uint64_t *a = GP_PUSH(k->lk, n, k->cap_lk);
                uint64_t *b = a ? GP_PUSH(k->lv, k->n_l, k->cap_lv) : NULL;
                if (!b)
                    return GP_ENOMEM;
                *a = (uint64_t)ev->correlation;
                *b = (uint64_t)(uintptr_t)ev;
            }
            if ((ev->kind != GP_EV_USER_ANNOTATION && ev->kind != GP_EV_CPU_OP) || !(nb & NB_STEP))
                continue;
            const gp_event **s = GP_PUSH(k->steps, k->n_steps, k->cap_steps);
            if (!s)
                return GP_ENOMEM;
            *s = ev;
            distinct += first_name == 0 || ev->name != first_name;
            first_name = first_name ? first_name : ev->name;
            last_step = GP_MAX(last_step, ev->ts);
        }
    }
    k->cpu_hi = INT64_MAX;
    if (k->hta && distinct >= 2) /* HTA drops the last step at load time (§1) */
        k->cpu_hi = last_step;
    return st;
}

static int cmp_step(const gp_event *const *a, const gp_event *const *b)
{
    return GP_CMP((*a)->ts, (*b)->ts);
}
GP__DEFINE_MERGE_SORT(sort_steps, const gp_event *, cmp_step)

/* A GPU event as a template of the region events: times, lane, flags. */
static gp_status add_gpu(cp_rank *k, const gp_track *tr, const gp_event *ev, int64_t *lanes,
                         size_t *n_lanes)
{
    const gp_gpu_info *gi = gp_event_gpu_info(k->t, ev);
    int64_t stream = gi ? gi->stream : tr->stream;
    int32_t device = k->hta ? -1 : (gi ? gi->device : tr->device);
    uint16_t nb = name_bits(k, ev->name, (gp_event_kind)ev->kind);
    bool sync = ev->kind == GP_EV_SYNC;
    if (sync && !k->hta)
        return GP_OK; /* the default mode infers synchronisations from the calls */
    if (!sync && stream == -1 && k->hta)
        return GP_OK;
    size_t lane = 0;
    int64_t key = stream * 4096 + device;
    while (lane < *n_lanes && lanes[lane] != key)
        lane++;
    if (lane == *n_lanes) {
        if (*n_lanes == 4096)
            lane = 4095; /* more lanes than any GPU has: share the last */
        else
            lanes[(*n_lanes)++] = key;
    }
    gp__cpev *g = GP_PUSH(k->gpu, k->n_gpu, k->cap_gpu);
    if (!g)
        return GP_ENOMEM;
    g->ev = ev;
    g->s = unit_start(k, ev->ts);
    g->e = unit_end(k, ev->ts + ev->dur);
    g->parent = -1;
    g->launcher = -1;
    g->thread = (int32_t)lane;
    g->q_launch = g->q_start = INT32_MIN;
    g->ns = g->ne = UINT32_MAX;
    g->launch = NULL;
    g->lts = INT64_MIN;
    g->flags = GP__CPE_GPU | (sync ? GP__CPE_SYNC : GP__CPE_NODE);
    if (sync ? (nb & NB_CONTEXT_SYNC) ||
                   (gi && gi->sync_kind &&
                    strcmp(gp_trace_str(k->t, gi->sync_kind), "Context Sync") == 0)
             : (nb & (k->hta ? NB_HTA_COMM : NB_COMM)))
        g->flags |= GP__CPE_COMM;
    return GP_OK;
}

static gp_status collect_gpu(cp_rank *k)
{
    int64_t *lanes = malloc(4096 * sizeof(*lanes));
    size_t n_lanes = 0;
    k->runs = malloc((k->t->n_tracks + 1) * sizeof(*k->runs));
    if (!lanes || !k->runs) {
        free(lanes);
        return GP_ENOMEM;
    }
    gp_status st = GP_OK;
    k->runs[0] = 0;
    for (size_t tk = 0; tk < k->t->n_tracks && st == GP_OK; tk++) {
        const gp_track *tr = &k->t->tracks[tk];
        if (tr->kind != GP_TRACK_GPU_STREAM)
            continue;
        if (k->n_gpu > k->runs[k->n_runs])
            k->runs[++k->n_runs] = k->n_gpu;
        for (size_t i = 0; i < tr->n_events && st == GP_OK; i++) {
            const gp_event *ev = &tr->events[i];
            if ((ev->flags & (GP_EVF_INSTANT | GP_EVF_STREAM_FROM_TID)) ||
                (!gp_event_kind_is_gpu_work((gp_event_kind)ev->kind) && ev->kind != GP_EV_SYNC))
                continue;
            st = add_gpu(k, tr, ev, lanes, &n_lanes);
        }
    }
    if (k->n_gpu > k->runs[k->n_runs])
        k->runs[++k->n_runs] = k->n_gpu;
    free(lanes);
    return st;
}

/* Sort-merge join of GPU events and launch calls on the correlation id (both radix-sorted; the
 * first call of an id wins; HTA mode links only the first GPU event of an id, as HTA's one-to-one
 * link), then the GPU events that a region's call can launch, by the call's start. */
static gp_status join_launches(cp_rank *k)
{
    uint64_t *keys = malloc((k->n_gpu ? k->n_gpu : 1) * sizeof(*keys));
    uint64_t *vals = malloc((k->n_gpu ? k->n_gpu : 1) * sizeof(*vals));
    gp_status st = keys && vals ? gp__radix_sort_kv(k->lk, k->lv, k->n_l) : GP_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < k->n_gpu && st == GP_OK; i++) {
        if (k->gpu[i].ev->correlation == 0)
            continue;
        keys[n] = (uint64_t)k->gpu[i].ev->correlation;
        vals[n++] = i;
    }
    if (st == GP_OK)
        st = gp__radix_sort_kv(keys, vals, n);
    int64_t min_lts = INT64_MAX;
    for (size_t i = 0, j = 0; i < n && st == GP_OK; i++) {
        while (j < k->n_l && k->lk[j] < keys[i])
            j++;
        if (j == k->n_l || k->lk[j] != keys[i] || (k->hta && i > 0 && keys[i] == keys[i - 1]))
            continue;
        gp__cpev *g = &k->gpu[vals[i]];
        const gp_event *l = (const gp_event *)(uintptr_t)k->lv[j];
        g->launch = l;
        if (l->ts < k->cpu_hi && unit_end(k, l->ts + l->dur) - unit_start(k, l->ts) > 0) {
            g->lts = unit_start(k, l->ts);
            min_lts = GP_MIN(min_lts, g->lts);
        }
    }
    n = 0;
    for (size_t i = 0; i < k->n_gpu && st == GP_OK; i++) {
        if (k->gpu[i].lts == INT64_MIN)
            continue;
        keys[n] = (uint64_t)(k->gpu[i].lts - min_lts);
        vals[n++] = i;
    }
    if (st == GP_OK)
        st = gp__radix_sort_kv(keys, vals, n);
    if (st == GP_OK && !(k->by_launch = malloc((n ? n : 1) * sizeof(*k->by_launch))))
        st = GP_ENOMEM;
    for (size_t i = 0; i < n && st == GP_OK; i++)
        k->by_launch[i] = (uint32_t)vals[i];
    k->n_by_launch = n;
    free(keys);
    free(vals);
    free(k->lk);
    free(k->lv);
    k->lk = k->lv = NULL;
    return st;
}

typedef struct qpoint {
    int64_t lane, t;
    int32_t delta; /* +1 launch, -1 start */
    uint32_t gpu;
} qpoint;

static int cmp_qpoint(const qpoint *a, const qpoint *b)
{
    GP_CMP_KEY(a->lane, b->lane);
    GP_CMP_KEY(a->t, b->t);
    GP_CMP_KEY(b->delta, a->delta); /* a launch before a start at the same time */
    return GP_CMP(a->gpu, b->gpu);
}
GP__DEFINE_MERGE_SORT(sort_qpoints, qpoint, cmp_qpoint)

/* §4.3: HTA's queue length per stream over the whole rank, read after each launch and start. */
static gp_status queue_lengths(cp_rank *k)
{
    qpoint *q = malloc((2 * k->n_gpu + 1) * sizeof(*q));
    if (!q)
        return GP_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < k->n_gpu; i++) {
        const gp__cpev *g = &k->gpu[i];
        const gp_event *l = (g->flags & GP__CPE_SYNC) ? NULL : g->launch;
        if (!l || !(name_bits(k, l->name, (gp_event_kind)l->kind) & NB_LAUNCH) ||
            l->ts >= k->cpu_hi)
            continue;
        q[n++] = (qpoint){g->thread, unit_start(k, l->ts), +1, (uint32_t)i};
        q[n++] = (qpoint){g->thread, g->s, -1, (uint32_t)i};
    }
    if (!sort_qpoints(q, n)) {
        free(q);
        return GP_ENOMEM;
    }
    int64_t len = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || q[i].lane != q[i - 1].lane)
            len = 0;
        len += q[i].delta;
        int32_t v = (int32_t)GP_MAX(GP_MIN(len, INT32_MAX), INT32_MIN + 1);
        if (q[i].delta > 0)
            k->gpu[q[i].gpu].q_launch = v;
        else
            k->gpu[q[i].gpu].q_start = v;
    }
    free(q);
    return GP_OK;
}

static void rank_free(cp_rank *k)
{
    free(k->names);
    free(k->lk);
    free(k->lv);
    free(k->gpu);
    free(k->runs);
    free(k->by_launch);
    free(k->steps);
}

static gp_status rank_init(cp_rank *k, const gp_trace *t, const gp_analyze_opts *o)
{
    memset(k, 0, sizeof(*k));
    k->t = t;
    k->o = o;
    k->hta = o->cp_hta;
    k->unit = k->hta ? 1000 : 1;
    k->n_names = gp_trace_str_count(t) + 1;
    k->names = calloc(k->n_names, sizeof(*k->names));
    if (!k->names)
        return GP_ENOMEM;
    gp_status st = scan_cpu(k);
    if (st == GP_OK && !sort_steps(k->steps, k->n_steps))
        st = GP_ENOMEM;
    if (st == GP_OK)
        st = collect_gpu(k);
    if (st == GP_OK)
        st = join_launches(k);
    if (st == GP_OK && k->hta)
        st = queue_lengths(k);
    return st;
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

static size_t lower_bound(const gp_track *tr, gp_ns ts)
{
    size_t lo = 0, hi = tr->n_events;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tr->events[mid].ts < ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static uint8_t cpu_flags(const cp_rank *k, const gp_event *ev)
{
    uint16_t nb = name_bits(k, ev->name, (gp_event_kind)ev->kind);
    uint8_t f = 0;
    bool op = ev->kind == GP_EV_CPU_OP || ev->kind == GP_EV_RUNTIME || ev->kind == GP_EV_DRIVER;
    if (nb & NB_DATALOAD)
        f |= GP__CPE_DATALOAD;
    if (!k->hta || op || (nb & NB_DATALOAD))
        f |= GP__CPE_NODE;
    if (k->hta && (nb & NB_HTA_BLOCKING))
        f |= GP__CPE_BLOCKING;
    if (k->hta && (nb & NB_LOCK))
        f |= GP__CPE_LOCK;
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
 * as part of the second. */
static void merge_backward(const cp_rank *k, gp__cpgraph *g)
{
    int32_t bw[2] = {-1, -1}, fw[2] = {-1, -1};
    size_t n_bw = 0, n_fw = 0;
    for (size_t i = 0; i < g->n_evs; i++) {
        const gp_event *ev = g->evs[i].ev;
        if (ev->kind != GP_EV_CPU_OP && ev->kind != GP_EV_USER_ANNOTATION)
            continue;
        uint16_t nb = name_bits(k, ev->name, (gp_event_kind)ev->kind);
        int32_t th = g->evs[i].thread;
        if ((nb & NB_AUTOGRAD) && n_bw < 2 && (n_bw == 0 || bw[0] != th))
            bw[n_bw++] = th;
        if ((nb & NB_FORWARD) && n_fw < 2 && (n_fw == 0 || fw[0] != th))
            fw[n_fw++] = th;
    }
    int32_t fwd = -1;
    for (size_t i = 0; i < n_fw; i++)
        if (n_bw == 1 && fw[i] != bw[0])
            fwd = fwd == -1 ? fw[i] : -2;
    if (n_bw != 1 || fwd < 0 || (n_fw == 2 && fw[0] != bw[0] && fw[1] != bw[0]))
        return;
    for (size_t i = 0; i < g->n_evs; i++)
        if (g->evs[i].thread == bw[0])
            g->evs[i].thread = fwd;
}

/* The CPU events of [ulo, uhi] (starts, in units, inclusive), in nesting order per thread. */
/* Where each scanned CPU event went: track tk's events [lo[tk], lo[tk] + n[tk]) map to
 * slot[off[tk] ...], the index of the region event, or -1 (not selected). */
typedef struct cp_slots {
    size_t *lo, *n, *off;
    int32_t *slot;
} cp_slots;

static void slots_free(cp_slots *sl)
{
    free(sl->lo);
    free(sl->n);
    free(sl->off);
    free(sl->slot);
}

/* The region index of CPU event ev, or -1. */
static int32_t slot_of(const cp_rank *k, const cp_slots *sl, const gp_event *ev)
{
    size_t tk = ev->track;
    if (tk >= k->t->n_tracks || !sl->n[tk])
        return -1;
    size_t pos = (size_t)(ev - k->t->tracks[tk].events);
    if (pos < sl->lo[tk] || pos - sl->lo[tk] >= sl->n[tk])
        return -1;
    return sl->slot[sl->off[tk] + pos - sl->lo[tk]];
}

static gp_status slots_fill(const cp_rank *k, const gp__cpgraph *g, cp_slots *sl)
{
    size_t total = 0;
    for (size_t tk = 0; tk < k->t->n_tracks; tk++) {
        sl->off[tk] = total;
        total += sl->n[tk];
    }
    sl->slot = malloc((total ? total : 1) * sizeof(*sl->slot));
    if (!sl->slot)
        return GP_ENOMEM;
    memset(sl->slot, 0xff, (total ? total : 1) * sizeof(*sl->slot));
    for (size_t i = 0; i < g->n_evs; i++) {
        const gp_event *ev = g->evs[i].ev;
        size_t tk = ev->track, pos = (size_t)(ev - k->t->tracks[tk].events);
        sl->slot[sl->off[tk] + pos - sl->lo[tk]] = (int32_t)i;
    }
    return GP_OK;
}

static gp_status region_cpu(const cp_rank *k, int64_t ulo, int64_t uhi, gp__cpgraph *g,
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
    for (size_t tk = 0; tk < t->n_tracks; tk++) {
        const gp_track *tr = &t->tracks[tk];
        if (tr->kind != GP_TRACK_CPU_THREAD)
            continue;
        size_t i = lower_bound(tr, lo);
        sl->lo[tk] = i;
        for (; i < tr->n_events && tr->events[i].ts <= hi; i++) {
            const gp_event *ev = &tr->events[i];
            sl->n[tk] = i + 1 - sl->lo[tk];
            if (!cpu_kind(ev) || ev->ts >= k->cpu_hi)
                continue;
            int64_t s = unit_start(k, ev->ts), e = unit_end(k, ev->ts + ev->dur);
            if (s < ulo || s > uhi || e - s <= 0)
                continue;
            gp__cpev *c = GP_PUSH(g->evs, g->n_evs, g->cap_evs);
            if (!c)
                return GP_ENOMEM;
            *c = (gp__cpev){.ev = ev,
                            .s = s,
                            .e = e,
                            .parent = -1,
                            .launcher = -1,
                            .thread = (int32_t)tk,
                            .q_launch = INT32_MIN,
                            .q_start = INT32_MIN,
                            .lts = INT64_MIN,
                            .ns = UINT32_MAX,
                            .ne = UINT32_MAX,
                            .flags = cpu_flags(k, ev)};
        }
    }
    if (k->hta)
        merge_backward(k, g);
    int32_t *stack = malloc((g->n_evs ? g->n_evs : 1) * sizeof(*stack));
    if (!stack || !sort_thread_nest(g->evs, g->n_evs)) {
        free(stack);
        return GP_ENOMEM;
    }
    for (size_t from = 0, to; from < g->n_evs; from = to) {
        for (to = from + 1; to < g->n_evs && g->evs[to].thread == g->evs[from].thread; to++)
            ;
        nest(g, from, to, stack);
    }
    free(stack);
    return slots_fill(k, g, sl);
}

/* The GPU events launched by the region's CPU events (by launch time: no lookups). */
static gp_status region_gpu(const cp_rank *k, const cp_slots *sl, int64_t ulo, int64_t uhi,
                            gp__cpgraph *g)
{
    size_t lo = 0, hi = k->n_by_launch;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (k->gpu[k->by_launch[mid]].lts < ulo)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < k->n_by_launch && k->gpu[k->by_launch[i]].lts <= uhi; i++) {
        const gp__cpev *tmpl = &k->gpu[k->by_launch[i]];
        int32_t l = slot_of(k, sl, tmpl->launch);
        if (l < 0 || !(g->evs[l].flags & GP__CPE_NODE))
            continue;
        gp__cpev *c = GP_PUSH(g->evs, g->n_evs, g->cap_evs);
        if (!c)
            return GP_ENOMEM;
        *c = *tmpl;
        c->launcher = l;
    }
    return GP_OK;
}

/* True when the GPU event's launch call is one of the region's events (region_gpu took it). */
static bool launched_inside(const gp__cpev *g, int64_t ulo, int64_t uhi)
{
    return g->lts != INT64_MIN && g->lts >= ulo && g->lts <= uhi;
}

/* Default mode: the GPU work that runs in the region but was launched before it (or by no
 * recorded call), clipped to the region's start: a step that begins by waiting for the previous
 * step's kernels waits for GPU work. */
static gp_status region_carried(const cp_rank *k, int64_t ulo, int64_t uhi, gp__cpgraph *g)
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
            const gp__cpev *tmpl = &k->gpu[i];
            if (tmpl->e <= ulo || launched_inside(tmpl, ulo, uhi))
                continue;
            gp__cpev *c = GP_PUSH(g->evs, g->n_evs, g->cap_evs);
            if (!c)
                return GP_ENOMEM;
            *c = *tmpl;
            c->s = GP_MAX(c->s, ulo);
        }
    }
    return GP_OK;
}

typedef struct end_key {
    int64_t e;
    uint32_t ev;
} end_key;

static int cmp_end_key(const end_key *a, const end_key *b)
{
    GP_CMP_KEY(a->e, b->e);
    return GP_CMP(a->ev, b->ev);
}
GP__DEFINE_MERGE_SORT(sort_end_keys, end_key, cmp_end_key)

/* Default mode: each synchronising call waits for the GPU work that ended last inside it; an
 * async copy blocks when its own copy ended inside it (a D2H copy to pageable memory). */
static gp_status infer_syncs(const cp_rank *k, gp__cpgraph *g)
{
    end_key *ends = malloc((g->n_evs ? g->n_evs : 1) * sizeof(*ends));
    if (!ends)
        return GP_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < g->n_evs; i++)
        if (g->evs[i].flags & GP__CPE_GPU)
            ends[n++] = (end_key){g->evs[i].e, (uint32_t)i};
    if (!sort_end_keys(ends, n)) {
        free(ends);
        return GP_ENOMEM;
    }
    for (size_t i = 0; i < g->n_evs; i++) {
        gp__cpev *c = &g->evs[i];
        if (c->flags & GP__CPE_GPU)
            continue;
        uint16_t nb = name_bits(k, c->ev->name, (gp_event_kind)c->ev->kind);
        if (!(nb & (NB_SYNC_CALL | NB_ASYNC_COPY)))
            continue;
        /* The last GPU end <= the call's end. */
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (ends[mid].e <= c->e)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t j = lo; j-- > 0 && ends[j].e > c->s;) {
            const gp__cpev *w = &g->evs[ends[j].ev];
            if ((nb & NB_ASYNC_COPY) && w->launcher != (int32_t)i)
                continue; /* an async copy waits only for its own copy */
            c->launcher = (int32_t)ends[j].ev;
            c->flags |= GP__CPE_BLOCKING;
            break;
        }
    }
    free(ends);
    return GP_OK;
}

/* The graph of the region whose CPU events start in [ulo, uhi] (units), with its longest path.
 * GP_EINVAL: the graph has a cycle. */
static gp_status region_graph(const cp_rank *k, int64_t ulo, int64_t uhi, gp__cpgraph *g)
{
    memset(g, 0, sizeof(*g));
    g->hta = k->hta;
    cp_slots sl = {NULL, NULL, NULL, NULL};
    gp_status st = region_cpu(k, ulo, uhi, g, &sl);
    if (st == GP_OK)
        st = region_gpu(k, &sl, ulo, uhi, g);
    slots_free(&sl);
    if (st == GP_OK && !k->hta)
        st = region_carried(k, ulo, uhi, g);
    if (st == GP_OK && !k->hta)
        st = infer_syncs(k, g);
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

/* The critical path of the region of annotation event ann (NULL: the whole trace). */
static gp_status one_region(const cp_rank *k, const gp_event *ann, gp_critical_path *cp)
{
    int64_t ulo = INT64_MIN, uhi = INT64_MAX;
    cp->step = -1;
    cp->region = "";
    for (int c = 0; c < GP_CP_COUNT; c++)
        cp->pct[c] = NAN;
    if (ann) {
        cp->region = gp_trace_str(k->t, ann->name);
        if (name_bits(k, ann->name, (gp_event_kind)ann->kind) & NB_STEP)
            cp->step = step_number(cp->region);
        cp->start = ann->ts;
        cp->end = ann->ts + ann->dur;
        ulo = unit_start(k, ann->ts);
        uhi = unit_end(k, ann->ts + ann->dur) - (k->hta ? 0 : 1); /* HTA: end inclusive */
    } else {
        gp_trace_span(k->t, &cp->start, &cp->end);
    }
    gp__cpgraph g;
    gp_status st = region_graph(k, ulo, uhi, &g);
    if (st == GP_EINVAL) {
        snprintf(cp->note, sizeof cp->note,
                 "The region's graph has a cycle (overlapping events on one thread): no path.");
        st = GP_OK;
    } else if (st == GP_OK && g.n_path == 0) {
        snprintf(cp->note, sizeof cp->note,
                 "No CPU op, runtime call or GPU event in the region: no path.");
    } else if (st == GP_OK) {
        st = gp__cp_result(&g, k->t, k->unit, cp);
        cp->valid = st == GP_OK;
        if (g.negative && k->hta)
            snprintf(cp->note, sizeof cp->note,
                     "%zu edges have a negative weight (events rounded inward to the microsecond): "
                     "the path uses 0, the breakdown their weight, as HTA.",
                     g.negative);
    }
    gp__cp_graph_free(&g);
    return st;
}

static int cmp_ts(const gp_event *const *a, const gp_event *const *b)
{
    return GP_CMP((*a)->ts, (*b)->ts);
}
GP__DEFINE_MERGE_SORT(sort_by_ts, const gp_event *, cmp_ts)

/* The instances of an annotation: events whose name contains it, CPU-side ones by start, then
 * GPU-side annotation copies by start (HTA's order, §2). */
static gp_status instances(const cp_rank *k, const char *ann, const gp_event ***out, size_t *n)
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
                (void)name_bits(k, ev->name, (gp_event_kind)ev->kind); /* cached before threads */
            }
        }
        if (pass == 0)
            n_cpu = *n;
    }
    if (!sort_by_ts(*out, n_cpu) || !sort_by_ts(*out + n_cpu, *n - n_cpu))
        return GP_ENOMEM;
    return GP_OK;
}

/* The regions: each ProfilerStep (the whole trace without steps), or the instances of
 * opts.cp_annotation; HTA mode: one region, as HTA (see gp_analyze_opts). */
static gp_status regions(const cp_rank *k, const gp_event ***list, size_t *n, bool *whole,
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
        return GP_OK;
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

typedef struct region_tasks {
    const cp_rank *k;
    const gp_event **list; /* NULL: one region, the whole trace */
    gp_critical_path *out;
    gp_status *st;
} region_tasks;

static void run_region(void *ctx, size_t i)
{
    region_tasks *rt = ctx;
    rt->st[i] = one_region(rt->k, rt->list ? rt->list[i] : NULL, &rt->out[i]);
}

gp_status gp__analyze_critical_path(const gp__view *v, gp_rank_analysis *r)
{
    if (!v->o->critical_path)
        return GP_OK;
    cp_rank k;
    gp_status st = rank_init(&k, v->t, v->o);
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
        region_tasks rt = {&k, whole ? NULL : list, r->critical_paths, NULL};
        rt.st = calloc(n_cp, sizeof(*rt.st));
        if (!rt.st)
            st = GP_ENOMEM;
        else
            gp__par_for(n_cp, n_cp > 1 ? gp__rank_threads(v->t, v->o, 4) : 1, run_region, &rt);
        for (size_t i = 0; rt.st && i < n_cp; i++)
            if (rt.st[i] != GP_OK)
                st = rt.st[i];
        r->n_critical_paths = n_cp;
        free(rt.st);
    }
    if (list != k.steps)
        free(list);
    rank_free(&k);
    return st;
}
