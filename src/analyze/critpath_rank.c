/* The critical path's per-rank tables (critpath_internal.h): name classes, the GPU events as
 * templates, their join with the launch calls, the GPU events by launch time, HTA's queue lengths
 * and the ProfilerSteps. */
#include <stdlib.h>
#include <string.h>

#include "analyze/critpath_internal.h"
#include "core/msort.h"
#include "core/par.h"

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

uint16_t gp__cp_name_bits_compute(const gp__cprank *k, gp_strid id, gp_event_kind kind)
{
    const char *s = gp_trace_str(k->t, id);
    uint16_t b = GP__NB_DONE;
    const char *const *dl = k->o->data_load ? k->o->data_load : default_data_load;
    size_t n_dl = k->o->data_load ? k->o->n_data_load : GP_ARRAY_LEN(default_data_load);
    for (size_t i = 0; i < n_dl; i++)
        if (dl[i] && dl[i][0] && strstr(s, dl[i]))
            b |= GP__NB_DATALOAD;
    if (in_list(s, hta_blocking, GP_ARRAY_LEN(hta_blocking)))
        b |= GP__NB_HTA_BLOCKING;
    if (in_list(s, hta_lock, GP_ARRAY_LEN(hta_lock)))
        b |= GP__NB_LOCK;
    if (in_list(s, hta_launch, GP_ARRAY_LEN(hta_launch)))
        b |= GP__NB_LAUNCH;
    if (strstr(s, "Synchronize"))
        b |= GP__NB_SYNC_CALL;
    else if (is_copy_call(s))
        b |= (strstr(s, "Async") || strstr(s, "WithStream")) ? GP__NB_ASYNC_COPY : GP__NB_SYNC_CALL;
    if (strncmp(s, "ProfilerStep#", 13) == 0)
        b |= GP__NB_STEP;
    if (strcmp(s, "Context Sync") == 0)
        b |= GP__NB_CONTEXT_SYNC;
    if (strstr(s, "autograd"))
        b |= GP__NB_AUTOGRAD;
    if (strstr(s, "forward"))
        b |= GP__NB_FORWARD;
    if (gp_event_kind_is_gpu(kind)) {
        char short_name[256];
        gp__cp_short_name(s, short_name, sizeof short_name);
        if (strncmp(short_name, "nccl", 4) == 0 || strncmp(short_name, "hip", 3) == 0 ||
            strncmp(short_name, "hccl", 4) == 0 || strstr(short_name, "ncclKernel"))
            b |= GP__NB_HTA_COMM;
        if (gp_classify_name(s, kind, false) == GP_KT_COMMUNICATION)
            b |= GP__NB_COMM;
    }
    if (id < k->n_names)
        atomic_store_explicit(&k->names[id], b, memory_order_relaxed);
    return b;
}

static int cmp_step(const gp_event *const *a, const gp_event *const *b)
{
    return GP_CMP((*a)->ts, (*b)->ts);
}
GP__DEFINE_MERGE_SORT(sort_steps, gp__cp_evp, cmp_step)

/* What a scan of part of the CPU events found (scan_cpu): the (correlation, call) pairs of
 * runtime/driver calls, sorted by correlation, and the ProfilerSteps in scan order. */
typedef struct cpu_scan {
    uint64_t *lk, *lv;
    size_t n_l, cap_lk, cap_lv;
    const gp_event **steps;
    size_t n_steps, cap_steps;
} cpu_scan;

/* Scans part `half` of the CPU threads' events (the first or the second half, in track order:
 * the two, one after the other, are the events in the order one scan takes them), classifying
 * every name it meets (regions then only read the names' cache, from several threads), and sorts
 * the pairs it found. */
static gp_status scan_cpu(gp__cprank *k, int half, cpu_scan *out)
{
    const gp_trace *t = k->t;
    size_t tk, i, end_tk = t->n_tracks, end_i = 0;
    gp__host_half(t, false, half, &tk, &i);
    if (half == 0)
        gp__host_half(t, false, 1, &end_tk, &end_i);
    size_t expect = gp__host_calls_expected(t, half, end_tk);
    if (expect && gp__host_before(tk, i, end_tk, end_i) &&
        (gp__reserve((void **)&out->lk, &out->cap_lk, sizeof *out->lk, expect) != GP_OK ||
         gp__reserve((void **)&out->lv, &out->cap_lv, sizeof *out->lv, expect) != GP_OK))
        return GP_ENOMEM;
    for (; gp__host_before(tk, i, end_tk, end_i); tk++, i = 0) {
        const gp_track *tr = &t->tracks[tk];
        if (tr->kind != GP_TRACK_CPU_THREAD)
            continue;
        size_t n = tk == end_tk ? end_i : tr->n_events;
        for (; i < n; i++) {
            const gp_event *ev = &tr->events[i];
            uint16_t nb = gp__cp_name_bits(k, ev->name, (gp_event_kind)ev->kind);
            if ((ev->kind == GP_EV_RUNTIME || ev->kind == GP_EV_DRIVER) && ev->correlation != 0) {
                size_t m = out->n_l;
                uint64_t *a = GP_PUSH(out->lk, m, out->cap_lk);
                uint64_t *b = a ? GP_PUSH(out->lv, out->n_l, out->cap_lv) : NULL;
                if (!b)
                    return GP_ENOMEM;
                *a = (uint64_t)ev->correlation;
                *b = (uint64_t)(uintptr_t)ev;
            }
            if ((ev->kind != GP_EV_USER_ANNOTATION && ev->kind != GP_EV_CPU_OP) ||
                !(nb & GP__NB_STEP))
                continue;
            const gp_event **s = GP_PUSH(out->steps, out->n_steps, out->cap_steps);
            if (!s)
                return GP_ENOMEM;
            *s = ev;
        }
    }
    return gp__radix_sort_kv(out->lk, out->lv, out->n_l);
}

/* Appends what the second half's scan found to the first's (in k), frees it, and sorts: the
 * pairs (two sorted runs: one merge), the steps by start; sets cpu_hi. */
static gp_status join_scans(gp__cprank *k, cpu_scan *b)
{
    gp_status st = GP_OK;
    if (b->n_l &&
        (gp__reserve((void **)&k->lk, &k->cap_lk, sizeof *k->lk, k->n_l + b->n_l) != GP_OK ||
         gp__reserve((void **)&k->lv, &k->cap_lv, sizeof *k->lv, k->n_l + b->n_l) != GP_OK))
        st = GP_ENOMEM;
    if (st == GP_OK && b->n_steps &&
        gp__grow((void **)&k->steps, &k->cap_steps, sizeof *k->steps, k->n_steps + b->n_steps) !=
            GP_OK)
        st = GP_ENOMEM;
    if (st == GP_OK) {
        if (b->n_l) {
            memcpy(k->lk + k->n_l, b->lk, b->n_l * sizeof *b->lk);
            memcpy(k->lv + k->n_l, b->lv, b->n_l * sizeof *b->lv);
        }
        if (b->n_steps)
            memcpy(k->steps + k->n_steps, b->steps, b->n_steps * sizeof *b->steps);
        k->n_l += b->n_l;
        k->n_steps += b->n_steps;
    }
    free(b->lk);
    free(b->lv);
    free(b->steps);
    if (st != GP_OK)
        return st;
    /* HTA drops the last step at load time (§1) when the steps have two names or more: counted
     * in scan order, the first step's name and each later one of another */
    size_t distinct = 0;
    gp_ns last_step = INT64_MIN;
    for (size_t i = 0; i < k->n_steps; i++) {
        distinct += i == 0 || k->steps[i]->name != k->steps[0]->name;
        last_step = GP_MAX(last_step, k->steps[i]->ts);
    }
    k->cpu_hi = INT64_MAX;
    if (k->hta && distinct >= 2)
        k->cpu_hi = last_step;
    if (!sort_steps(k->steps, k->n_steps))
        return GP_ENOMEM;
    /* two sorted runs: merged (none to merge when the second half was empty) */
    return b->n_l ? gp__radix_sort_kv(k->lk, k->lv, k->n_l) : GP_OK;
}

/* A GPU event as a template of the region events: times, lane, flags. */
static gp_status add_gpu(gp__cprank *k, const gp_track *tr, const gp_event *ev, int64_t *lanes,
                         size_t *n_lanes)
{
    const gp_gpu_info *gi = gp_event_gpu_info(k->t, ev);
    int64_t stream = gi ? gi->stream : tr->stream;
    int32_t device = k->hta ? -1 : (gi ? gi->device : tr->device);
    uint16_t nb = gp__cp_name_bits(k, ev->name, (gp_event_kind)ev->kind);
    bool sync = ev->kind == GP_EV_SYNC;
    if (sync && !k->hta)
        return GP_OK; /* the default mode infers synchronisations from the calls */
    if (!sync && stream == -1 && k->hta)
        return GP_OK;
    int64_t key = (int64_t)((uint64_t)stream * 4096 + (uint64_t)(int64_t)device);
    uint64_t found;
    size_t lane = *n_lanes;
    if (*n_lanes && key == k->last_key) /* a track's events share a lane: no lookup */
        lane = k->last_lane;
    else if (gp__imap_get(&k->lane_index, key, &found))
        lane = (size_t)found;
    if (lane == *n_lanes) {
        if (*n_lanes == 4096)
            lane = 4095; /* more lanes than any GPU has: share the last */
        else if (gp__imap_put(&k->lane_index, key, *n_lanes) != GP_OK)
            return GP_ENOMEM;
        else
            lanes[(*n_lanes)++] = key;
    }
    k->last_key = key;
    k->last_lane = lane;
    gp__cptmpl *g = GP_PUSH(k->gpu, k->n_gpu, k->cap_gpu);
    if (!g)
        return GP_ENOMEM;
    g->ev = ev;
    g->s = gp__cp_unit_start(k, ev->ts);
    g->e = gp__cp_unit_end(k, ev->ts, ev->dur);
    g->thread = (int32_t)lane;
    g->q_launch = g->q_start = INT32_MIN;
    g->wait_src = -1;
    g->flags = GP__CPE_GPU | (sync ? GP__CPE_SYNC : GP__CPE_NODE);
    gp_strid sync_kind = sync ? gp_gpu_info_ext(k->t, gi)->sync_kind : 0;
    const char *kind = sync ? gp_trace_str(k->t, sync_kind ? sync_kind : ev->name) : "";
    if (strcmp(kind, "Event Sync") == 0)
        g->flags |= GP__CPE_EVSYNC;
    else if (strcmp(kind, "Stream Wait Event") == 0)
        g->flags |= GP__CPE_WAITROW;
    if (sync ? (nb & GP__NB_CONTEXT_SYNC) ||
                   (sync_kind && strcmp(gp_trace_str(k->t, sync_kind), "Context Sync") == 0)
             : (nb & (k->hta ? GP__NB_HTA_COMM : GP__NB_COMM)))
        g->flags |= GP__CPE_COMM;
    return GP_OK;
}

static gp_status collect_gpu(gp__cprank *k)
{
    int64_t *lanes = k->lanes = malloc(4096 * sizeof(*lanes));
    size_t n_lanes = 0;
    k->runs = malloc((k->t->n_tracks + 1) * sizeof(*k->runs));
    if (!lanes || !k->runs || gp__imap_init(&k->lane_index, 64) != GP_OK)
        return GP_ENOMEM;
    /* sized once, to the GPU tracks' events (grown by doubling, each growth copied the array on
     * the heap) */
    size_t most = 0;
    for (size_t tk = 0; tk < k->t->n_tracks; tk++)
        if (k->t->tracks[tk].kind == GP_TRACK_GPU_STREAM)
            most += k->t->tracks[tk].n_events;
    if (!(k->gpu = malloc((most ? most : 1) * sizeof(*k->gpu))))
        return GP_ENOMEM;
    k->cap_gpu = most ? most : 1;
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
    k->n_lanes = n_lanes;
    return st;
}

/* Sort-merge join of GPU events and launch calls on the correlation id (both radix-sorted; the
 * first call of an id wins; HTA mode links only the first GPU event of an id, as HTA's one-to-one
 * link), then the GPU events that a region's call can launch, by the call's start. */
/* The GPU events' (correlation, index) pairs, sorted (k->gk, k->gv), for the join. GP_ENOMEM. */
static gp_status gpu_keys(gp__cprank *k)
{
    k->gk = malloc((k->n_gpu ? k->n_gpu : 1) * sizeof(*k->gk));
    k->gv = malloc((k->n_gpu ? k->n_gpu : 1) * sizeof(*k->gv));
    if (!k->gk || !k->gv)
        return GP_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < k->n_gpu; i++) {
        if (k->gpu[i].ev->correlation == 0)
            continue;
        k->gk[n] = (uint64_t)k->gpu[i].ev->correlation;
        k->gv[n++] = i;
    }
    k->n_gk = n;
    return gp__radix_sort_kv(k->gk, k->gv, n);
}

/* The join's two sides, side by side: the GPU templates and their ids sorted (task 0, first:
 * on large_v100_nccl x7 the longest), and the CPU scan in two halves, each with its calls sorted
 * by correlation (tasks 1 and 2: on the H100 trace x10, 90 % Python frames on one thread, one scan
 * was 4-5 ms alone while the other thread had done the GPU side in 0.6). */
typedef struct init_tasks {
    gp__cprank *k;
    cpu_scan scan[2];
    gp_status st[3];
} init_tasks;

static void run_init_task(void *ctx, size_t i)
{
    init_tasks *it = ctx;
    gp__cprank *k = it->k;
    gp_status st;
    if (i == 0) {
        st = collect_gpu(k);
        if (st == GP_OK)
            st = gpu_keys(k);
    } else {
        st = scan_cpu(k, (int)i - 1, &it->scan[i - 1]);
    }
    it->st[i] = st;
}

static gp_status join_launches(gp__cprank *k)
{
    uint64_t *keys = k->gk, *vals = k->gv;
    size_t n = k->n_gk;
    k->launch = calloc(k->n_gpu ? k->n_gpu : 1, sizeof(*k->launch));
    k->lts = malloc((k->n_gpu ? k->n_gpu : 1) * sizeof(*k->lts));
    gp_status st = k->launch && k->lts ? GP_OK : GP_ENOMEM;
    for (size_t i = 0; i < k->n_gpu && st == GP_OK; i++)
        k->lts[i] = INT64_MIN;
    int64_t min_lts = INT64_MAX;
    for (size_t i = 0, j = 0; i < n && st == GP_OK; i++) {
        while (j < k->n_l && k->lk[j] < keys[i])
            j++;
        /* the calls, in correlation order, are a cache miss each: fetched 16 ahead (as the
         * view's join_sorted) */
        if (j + 16 < k->n_l)
            __builtin_prefetch((const void *)(uintptr_t)k->lv[j + 16]);
        if (j == k->n_l || k->lk[j] != keys[i] || (k->hta && i > 0 && keys[i] == keys[i - 1]))
            continue;
        const gp_event *l = (const gp_event *)(uintptr_t)k->lv[j];
        k->launch[vals[i]] = l;
        if (l->ts < k->cpu_hi &&
            gp__cp_unit_end(k, l->ts, l->dur) - gp__cp_unit_start(k, l->ts) > 0) {
            k->lts[vals[i]] = gp__cp_unit_start(k, l->ts);
            min_lts = GP_MIN(min_lts, k->lts[vals[i]]);
        }
    }
    n = 0;
    for (size_t i = 0; i < k->n_gpu && st == GP_OK; i++) {
        if (k->lts[i] == INT64_MIN)
            continue;
        keys[n] = (uint64_t)(k->lts[i] - min_lts);
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
    k->gk = k->gv = NULL;
    return st;
}

/* The launch call of correlation id corr (lk/lv sorted by the join), or NULL. */
static const gp_event *call_of(const gp__cprank *k, int64_t corr)
{
    size_t lo = 0, hi = k->n_l;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (k->lk[mid] < (uint64_t)corr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < k->n_l && k->lk[lo] == (uint64_t)corr ? (const gp_event *)(uintptr_t)k->lv[lo]
                                                      : NULL;
}

/* The first position of [lo, hi) of the sorted keys holding a key >= x. */
static size_t first_at_least(const uint64_t *keys, size_t lo, size_t hi, uint64_t x)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (keys[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The work launched on lane at or after t (units from the earliest launch) by a call of track
 * tk, the first such (a kernel behind a stream wait), or -1. keys/vals: the launched GPU work
 * sorted by (lane, launch start). */
static int32_t first_launch_after(const gp__cprank *k, const uint64_t *keys, const uint64_t *vals,
                                  size_t n, uint64_t lane, int64_t t, uint32_t tk)
{
    size_t end = first_at_least(keys, 0, n, (lane + 1) << 44);
    for (size_t j = first_at_least(keys, 0, n, lane << 44 | (uint64_t)t); j < end; j++)
        if (k->launch[vals[j]]->track == tk)
            return (int32_t)vals[j];
    return -1;
}

/* §4.4: the recorded work of a wait on lane: the latest launch on it that started before the
 * cudaEventRecord call of correlation rec_corr, or -1. */
static int32_t recorded_work(const gp__cprank *k, const uint64_t *keys, const uint64_t *vals,
                             size_t n, int64_t min, size_t lane, int64_t rec_corr)
{
    const gp_event *rec = call_of(k, rec_corr);
    int64_t t_rec = rec ? gp__cp_unit_start(k, rec->ts) - min : -1;
    if (!rec || lane >= k->n_lanes || t_rec < 0)
        return -1;
    size_t lo = first_at_least(keys, 0, n, (uint64_t)lane << 44);
    size_t pos = first_at_least(keys, lo, n, (uint64_t)lane << 44 | (uint64_t)t_rec);
    return pos == lo ? -1 : (int32_t)vals[pos - 1]; /* nothing launched there before the record */
}

/* The lane of key (stream * 4096 + device), or n_lanes. */
static size_t lane_of(const gp__cprank *k, int64_t key)
{
    uint64_t lane;
    return gp__imap_get(&k->lane_index, key, &lane) ? (size_t)lane : k->n_lanes;
}

/* HTA mode (§4.4): what an Event Sync row, or the kernel behind a Stream Wait Event, waits for
 * (wait_src): the GPU work of the latest launch on the recorded stream (wait_on_stream) that
 * started before the cudaEventRecord call (wait_on_cuda_event_record_corr_id). The waiting kernel
 * is the first launch on the waiting stream after the wait call, from the same thread. keys/vals:
 * the launched GPU work sorted by (lane, launch start). */
static void hta_wait_sources(gp__cprank *k, const uint64_t *keys, const uint64_t *vals, size_t n,
                             int64_t min)
{
    for (size_t i = 0; i < k->n_gpu; i++) {
        gp__cptmpl *r = &k->gpu[i];
        const gp_gpu_ext *x = gp_event_gpu_ext(k->t, r->ev);
        if (!(r->flags & (GP__CPE_EVSYNC | GP__CPE_WAITROW)) || x->wait_on_event_corr < 0)
            continue;
        size_t lane = lane_of(k, x->wait_on_stream * 4096 - 1);
        int32_t src = recorded_work(k, keys, vals, n, min, lane, x->wait_on_event_corr);
        if (src < 0)
            continue;
        if (r->flags & GP__CPE_EVSYNC) {
            r->wait_src = src;
            continue;
        }
        const gp_event *w = k->launch[i]; /* the cudaStreamWaitEvent call */
        int64_t t_w = w ? gp__cp_unit_start(k, w->ts) - min : -1;
        int32_t j =
            t_w < 0 ? -1 : first_launch_after(k, keys, vals, n, (uint64_t)r->thread, t_w, w->track);
        if (j >= 0)
            k->gpu[j].wait_src = src;
    }
}

/* Default mode: the same rule for the kernels behind a Stream Wait Event row (the rows are not
 * GPU events of this mode): wait_src and GP__CPE_XREC on the waiting kernel. */
static void default_wait_sources(gp__cprank *k, const uint64_t *keys, const uint64_t *vals,
                                 size_t n, int64_t min)
{
    for (size_t tk = 0; tk < k->t->n_tracks; tk++) {
        const gp_track *tr = &k->t->tracks[tk];
        for (size_t i = 0; tr->kind == GP_TRACK_GPU_STREAM && i < tr->n_events; i++) {
            const gp_event *ev = &tr->events[i];
            if (ev->kind != GP_EV_SYNC)
                continue;
            const gp_gpu_info *gi = gp_event_gpu_info(k->t, ev);
            const gp_gpu_ext *x = gp_gpu_info_ext(k->t, gi);
            if (!gi || x->wait_on_event_corr < 0 || !x->sync_kind ||
                strcmp(gp_trace_str(k->t, x->sync_kind), "Stream Wait Event") != 0)
                continue;
            int64_t stream = gi->stream, device = gi->device;
            size_t lane = lane_of(k, stream * 4096 + device);
            size_t rec_lane = lane_of(k, x->wait_on_stream * 4096 + device);
            int32_t src = recorded_work(k, keys, vals, n, min, rec_lane, x->wait_on_event_corr);
            const gp_event *w = ev->correlation ? call_of(k, ev->correlation) : NULL;
            int64_t t_w = w ? gp__cp_unit_start(k, w->ts) - min : -1;
            if (src < 0 || lane == k->n_lanes || t_w < 0)
                continue;
            int32_t j = first_launch_after(k, keys, vals, n, lane, t_w, w->track);
            if (j >= 0 && j != src) {
                k->gpu[j].wait_src = src;
                k->gpu[j].flags |= GP__CPE_XREC;
            }
        }
    }
}

/* Whether the rank has a row that hta_wait_sources or default_wait_sources reads: without one,
 * the launched work need not be sorted by lane (7 ms of large_v100_nccl x7, which has none). */
static bool any_wait_row(const gp__cprank *k)
{
    for (size_t i = 0; k->hta && i < k->n_gpu; i++) {
        if ((k->gpu[i].flags & (GP__CPE_EVSYNC | GP__CPE_WAITROW)) &&
            gp_event_gpu_ext(k->t, k->gpu[i].ev)->wait_on_event_corr >= 0)
            return true;
    }
    for (size_t tk = 0; !k->hta && tk < k->t->n_tracks; tk++) {
        const gp_track *tr = &k->t->tracks[tk];
        for (size_t i = 0; tr->kind == GP_TRACK_GPU_STREAM && i < tr->n_events; i++) {
            const gp_event *ev = &tr->events[i];
            if (ev->kind != GP_EV_SYNC)
                continue;
            const gp_gpu_ext *x = gp_event_gpu_ext(k->t, ev);
            if (x->wait_on_event_corr >= 0 && x->sync_kind &&
                strcmp(gp_trace_str(k->t, x->sync_kind), "Stream Wait Event") == 0)
                return true;
        }
    }
    return false;
}

/* The work a GPU event waits for on another stream (wait_src), from the Stream Wait Event and
 * Event Sync rows (hta_wait_sources, default_wait_sources). GP_ENOMEM. */
static gp_status wait_sources(gp__cprank *k)
{
    if (!any_wait_row(k))
        return GP_OK;
    uint64_t *keys = malloc((k->n_gpu ? k->n_gpu : 1) * sizeof(*keys));
    uint64_t *vals = malloc((k->n_gpu ? k->n_gpu : 1) * sizeof(*vals));
    gp_status st = keys && vals ? GP_OK : GP_ENOMEM;
    int64_t min = INT64_MAX;
    size_t n = 0;
    for (size_t i = 0; i < k->n_gpu; i++)
        if (k->launch[i] && !(k->gpu[i].flags & GP__CPE_SYNC))
            min = GP_MIN(min, gp__cp_unit_start(k, k->launch[i]->ts));
    for (size_t i = 0; i < k->n_gpu && st == GP_OK; i++) {
        const gp__cptmpl *g = &k->gpu[i];
        if (!k->launch[i] || (g->flags & GP__CPE_SYNC))
            continue;
        keys[n] = (uint64_t)g->thread << 44 |
                  ((uint64_t)(gp__cp_unit_start(k, k->launch[i]->ts) - min) & ((1ull << 44) - 1));
        vals[n++] = i;
    }
    if (st == GP_OK)
        st = gp__radix_sort_kv(keys, vals, n);
    if (st == GP_OK && k->hta)
        hta_wait_sources(k, keys, vals, n, min);
    else if (st == GP_OK)
        default_wait_sources(k, keys, vals, n, min);
    free(keys);
    free(vals);
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
static gp_status queue_lengths(gp__cprank *k)
{
    qpoint *q = malloc((2 * k->n_gpu + 1) * sizeof(*q));
    if (!q)
        return GP_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < k->n_gpu; i++) {
        const gp__cptmpl *g = &k->gpu[i];
        const gp_event *l = (g->flags & GP__CPE_SYNC) ? NULL : k->launch[i];
        if (!l || !(gp__cp_name_bits(k, l->name, (gp_event_kind)l->kind) & GP__NB_LAUNCH) ||
            l->ts >= k->cpu_hi)
            continue;
        q[n++] = (qpoint){g->thread, gp__cp_unit_start(k, l->ts), +1, (uint32_t)i};
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

void gp__cp_rank_free(gp__cprank *k)
{
    free(k->names);
    free(k->lk);
    free(k->lv);
    free(k->lanes);
    gp__imap_free(&k->lane_index);
    free(k->gpu);
    free(k->launch);
    free(k->lts);
    free(k->runs);
    free(k->by_launch);
    free(k->gk);
    free(k->gv);
    free(k->steps);
}

gp_status gp__cp_rank_init(gp__cprank *k, const gp_trace *t, const gp_analyze_opts *o)
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
    init_tasks it = {.k = k, .st = {GP_OK, GP_OK, GP_OK}};
    gp__par_for(3, gp__rank_threads(t, o, 2), run_init_task, &it);
    gp_status st = it.st[0] != GP_OK ? it.st[0] : it.st[1] != GP_OK ? it.st[1] : it.st[2];
    /* the first half's finds become the rank's, the second's follow them */
    k->lk = it.scan[0].lk;
    k->lv = it.scan[0].lv;
    k->n_l = it.scan[0].n_l;
    k->cap_lk = it.scan[0].cap_lk;
    k->cap_lv = it.scan[0].cap_lv;
    k->steps = it.scan[0].steps;
    k->n_steps = it.scan[0].n_steps;
    k->cap_steps = it.scan[0].cap_steps;
    if (st == GP_OK) {
        st = join_scans(k, &it.scan[1]);
    } else {
        free(it.scan[1].lk);
        free(it.scan[1].lv);
        free(it.scan[1].steps);
    }
    if (st == GP_OK)
        st = join_launches(k);
    if (st == GP_OK && k->hta)
        st = queue_lengths(k);
    if (st == GP_OK)
        st = wait_sources(k);
    /* the launch calls by correlation served the joins and the waits: freed before the regions
     * run (16 bytes per runtime call) */
    free(k->lk);
    free(k->lv);
    k->lk = NULL;
    k->lv = NULL;
    k->n_l = k->cap_lk = k->cap_lv = 0;
    return st;
}
