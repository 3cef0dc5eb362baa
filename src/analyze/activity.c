/* CPU/GPU activity (timeline statistics), the memory timeline from "[memory]" events, small-kernel
 * counts and the occupancy of hot kernels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze_internal.h"
#include "core/msort.h"

/* "CPU active" is what the CPU was doing for the GPU program: inside an operator or a runtime or
 * driver call. Python frames and annotations are context around that work, not work: with
 * with_stack=True a Python frame is open for the whole trace and would make CPU active equal the
 * span. */
static bool is_cpu_work(uint8_t kind)
{
    return kind == GP_EV_CPU_OP || kind == GP_EV_RUNTIME || kind == GP_EV_DRIVER;
}

/* A runtime or driver call that blocks the host until the GPU catches up: the *Synchronize calls
 * of CUDA, the driver and HIP, and the copies without Async (cudaMemcpy, hipMemcpyWithStream:
 * `.cpu()` and `.item()` on ROCm). */
static bool is_blocking_call(const char *name)
{
    size_t n = strlen(name);
    static const char sfx[] = "Synchronize";
    if (strncmp(name, "cu", 2) != 0 && strncmp(name, "hip", 3) != 0)
        return false;
    if (n > sizeof sfx - 1 && strcmp(name + n - (sizeof sfx - 1), sfx) == 0)
        return true;
    bool copy = strncmp(name, "cudaMemcpy", 10) == 0 || strncmp(name, "hipMemcpy", 9) == 0 ||
                strncmp(name, "cuMemcpy", 8) == 0;
    return copy && !strstr(name, "Async");
}

typedef struct mem_list {
    const gp_event **v;
    size_t n, cap;
} mem_list;

/* One pass over every event: CPU and sync unions, CPU event count, and the [memory] events. */
static gp_status activity(const gp__view *v, gp_rank_analysis *r, mem_list *mem)
{
    const gp_trace *t = v->t;
    gp__ivls cpu = {0}, gpu = {0}, sync = {0}, blocking = {0};
    gp_status st = GP_OK;
    gp_activity *a = &r->activity;
    uint64_t n_blocking = 0;
    /* per name: 0 not looked at yet, 1 not blocking, 2 blocking */
    uint8_t *memo = calloc(gp_trace_str_count(t) + 1, 1);
    if (!memo)
        return GP_ENOMEM;
    for (size_t k = 0; k < t->n_tracks && st == GP_OK; k++) {
        const gp_track *tr = &t->tracks[k];
        if (tr->kind == GP_TRACK_COUNTER)
            continue;
        /* the kept events, [lo, hi): the track is sorted by start */
        size_t lo = v->cpu_lo == INT64_MIN ? 0 : gp__track_lower_bound(tr, v->cpu_lo);
        size_t hi = v->cpu_hi == INT64_MAX ? tr->n_events : gp__track_lower_bound(tr, v->cpu_hi);
        if (tr->kind == GP_TRACK_CPU_THREAD && hi > lo)
            r->cpu_events += hi - lo;
        bool open = false, work = tr->kind != GP_TRACK_GPU_STREAM;
        gp_ns cs = 0, ce = 0;
        for (size_t i = lo; i < hi && st == GP_OK; i++) {
            const gp_event *ev = &tr->events[i];
            if (ev->kind == GP_EV_SYNC) {
                a->syncs++;
                st = gp__ivls_push(&sync, ev->ts, ev->ts + ev->dur);
                continue;
            }
            if (ev->kind == GP_EV_MEMORY) {
                const gp_event **slot = GP_PUSH(mem->v, mem->n, mem->cap);
                if (!slot)
                    st = GP_ENOMEM;
                else
                    *slot = ev;
                continue;
            }
            if (!work || !is_cpu_work(ev->kind))
                continue;
            if (ev->kind != GP_EV_CPU_OP) {
                uint8_t *m = &memo[ev->name];
                if (!*m)
                    *m = is_blocking_call(gp_trace_str(t, ev->name)) ? 2 : 1;
                if (*m == 2) {
                    n_blocking++;
                    if ((st = gp__ivls_push(&blocking, ev->ts, ev->ts + ev->dur)) != GP_OK)
                        break;
                }
            }
            /* Per-thread union first (the track is sorted): few intervals leave the track. */
            if (open && ev->ts <= ce) {
                ce = GP_MAX(ce, ev->ts + ev->dur);
                continue;
            }
            if (open)
                st = gp__ivls_push(&cpu, cs, ce);
            open = true;
            cs = ev->ts;
            ce = ev->ts + ev->dur;
        }
        if (open && st == GP_OK)
            st = gp__ivls_push(&cpu, cs, ce);
    }
    /* at most an interval per GPU event: sized once, filled without a push each */
    if (st == GP_OK && v->n_g && !(gpu.v = malloc(v->n_g * sizeof(*gpu.v))))
        st = GP_ENOMEM;
    gpu.cap = gpu.v ? v->n_g : 0;
    for (size_t i = 0; i < v->n_g && st == GP_OK; i++) {
        const gp__gev *g = &v->g[i];
        if (g->kind == GP_EV_KERNEL || g->kind == GP_EV_MEMCPY || g->kind == GP_EV_MEMSET)
            gpu.v[gpu.n++] = (gp__ivl){g->ts, g->ts + g->dur};
    }
    if (st == GP_OK)
        st = gp__ivls_sort(&cpu);
    if (st == GP_OK)
        st = gp__ivls_sort(&gpu);
    /* Kineto writes cuda_sync events only when asked to (few traces have them): without them,
     * the blocking calls measure the same time from the host's side. */
    if (st == GP_OK && !a->syncs) {
        gp__ivls tmp = sync;
        sync = blocking;
        blocking = tmp;
        a->syncs = n_blocking;
    }
    if (st == GP_OK)
        st = gp__ivls_sort(&sync);
    if (st == GP_OK) {
        a->cpu_active = gp__ivls_union_sorted(&cpu);
        a->gpu_active = gp__ivls_union_sorted(&gpu);
        a->sync = gp__ivls_union_sorted(&sync);
        a->overlap = gp__ivls_intersect(&cpu, &gpu);
        gp_ns lo = INT64_MAX, hi = INT64_MIN;
        if (cpu.n) {
            lo = cpu.v[0].s;
            hi = cpu.v[cpu.n - 1].e;
        }
        if (gpu.n) {
            lo = GP_MIN(lo, gpu.v[0].s);
            hi = GP_MAX(hi, gpu.v[gpu.n - 1].e);
        }
        a->span = hi > lo ? hi - lo : 0;
    }
    gp__ivls_free(&cpu);
    gp__ivls_free(&gpu);
    gp__ivls_free(&sync);
    gp__ivls_free(&blocking);
    free(memo);
    return st;
}

/* The row of mi's device in r->memory, added when new (devs: (type, id) -> row); SIZE_MAX when out
 * of memory. *last: the row found last, tried first (a trace's memory events are mostly of one
 * device: the lookup by hash was a fifth of the task). */
static size_t mem_device(gp_rank_analysis *r, size_t *cap, gp__imap *devs, const gp_mem_info *mi,
                         size_t *last)
{
    if (*last < r->n_memory && r->memory[*last].device_type == mi->device_type &&
        r->memory[*last].device_id == mi->device_id)
        return *last;
    int64_t key = (int64_t)((uint64_t)(uint32_t)mi->device_type << 32 | (uint32_t)mi->device_id);
    uint64_t k;
    if (gp__imap_get(devs, key, &k))
        return *last = (size_t)k;
    if (gp__imap_put(devs, key, r->n_memory) != GP_OK)
        return SIZE_MAX;
    gp_memory_device *d = GP_PUSH(r->memory, r->n_memory, *cap);
    if (!d)
        return SIZE_MAX;
    d->device_type = mi->device_type;
    d->device_id = mi->device_id;
    d->peak_allocated = -1;
    d->running_cpu = d->running_gpu = "";
    return *last = r->n_memory - 1;
}

/* The name of the first kernel of v->g (in its order) running at ts, "" when none. end_max[i]:
 * the latest end of the kernels among v->g[0..i] (INT64_MIN before the first), so the first
 * kernel ending after ts is found by binary search; one starting after ts can only be followed by
 * a covering one of the same start unit (v->g is sorted by unit start). */
static const char *kernel_at(const gp__view *v, const gp_ns *end_max, gp_ns ts)
{
    size_t lo = 0, hi = v->n_g; /* first i with end_max[i] > ts */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (end_max[mid] > ts)
            hi = mid;
        else
            lo = mid + 1;
    }
    for (size_t i = lo; i < v->n_g && v->g[i].s == v->g[lo].s; i++) {
        const gp__gev *g = &v->g[i];
        if (g->kind == GP_EV_KERNEL && g->ts <= ts && g->ts + g->dur > ts)
            return gp_trace_str(v->t, g->ev->name);
    }
    return "";
}

/* A memory device's peak to look up. */
typedef struct at_peak {
    gp_ns ts;
    uint32_t d; /* the device */
} at_peak;

static int cmp_peak(const void *x, const void *y)
{
    return GP_CMP(((const at_peak *)x)->ts, ((const at_peak *)y)->ts);
}

/* A CPU thread in the merge of running_cpu_ops: its next op, events[i] of track k. */
typedef struct at_cursor {
    gp_ns ts;
    uint32_t k;
    size_t i;
} at_cursor;

/* The merge order of the CPU threads' ops: by start; on a tie the later track first (pushed
 * first: the earliest track's op ends on top), within a track the track's order. */
static bool cursor_before(const at_cursor *a, const at_cursor *b)
{
    return a->ts != b->ts ? a->ts < b->ts : a->k > b->k;
}

/* Restores the min-heap h[0, n) below position i. */
static void heap_down(at_cursor *h, size_t n, size_t i)
{
    for (;;) {
        size_t m = i, l = 2 * i + 1, r = l + 1;
        if (l < n && cursor_before(&h[l], &h[m]))
            m = l;
        if (r < n && cursor_before(&h[r], &h[m]))
            m = r;
        if (m == i)
            return;
        at_cursor x = h[i];
        h[i] = h[m];
        h[m] = x;
        i = m;
    }
}

/* The first CPU op of track tr at or after index i; tr->n_events when none. */
static size_t next_op(const gp_track *tr, size_t i)
{
    while (i < tr->n_events && tr->events[i].kind != GP_EV_CPU_OP)
        i++;
    return i;
}

/* Each memory device's running_cpu: the innermost CPU op running at its peak, i.e. of the ops
 * that cover the peak, the one that started last (the earliest CPU thread's on a tie). One sweep
 * over the ops of every CPU thread, merged by start through a heap of thread cursors, and the
 * peaks in time order (a search per device walked back over every op before the peak: quadratic
 * in memory devices, issue 38): a stack holds the ops started so far; ops ending by the current
 * peak are popped from its top (they end by every later peak too), and so are, before a push,
 * those ending by the new op's start (the stack stays as deep as the nesting; the ops were copied
 * and sorted, 38 MB on large_v100_nccl x7), so the top is the latest-started op covering it. */
static gp_status running_cpu_ops(const gp__view *v, gp_rank_analysis *r)
{
    const gp_trace *t = v->t;
    size_t n_peaks = 0, n_heap = 0, depth = 0, cap = 0;
    at_peak *peaks = malloc((r->n_memory ? r->n_memory : 1) * sizeof *peaks);
    at_cursor *heap = malloc((t->n_tracks ? t->n_tracks : 1) * sizeof *heap);
    const gp_event **stack = NULL;
    gp_status st = peaks && heap ? GP_OK : GP_ENOMEM;
    for (size_t d = 0; st == GP_OK && d < r->n_memory; d++)
        if (r->memory[d].peak_allocated >= 0)
            peaks[n_peaks++] = (at_peak){r->memory[d].peak_ts, (uint32_t)d};
    for (size_t k = 0; st == GP_OK && n_peaks && k < t->n_tracks; k++) {
        const gp_track *tr = &t->tracks[k];
        size_t i = tr->kind == GP_TRACK_CPU_THREAD ? next_op(tr, 0) : tr->n_events;
        if (i < tr->n_events)
            heap[n_heap++] = (at_cursor){tr->events[i].ts, (uint32_t)k, i};
    }
    for (size_t i = n_heap / 2; i-- > 0;)
        heap_down(heap, n_heap, i);
    if (st == GP_OK && n_peaks > 1)
        gp__msort(peaks, n_peaks, sizeof *peaks, cmp_peak);
    for (size_t q = 0; st == GP_OK && q < n_peaks; q++) {
        gp_ns at = peaks[q].ts;
        while (n_heap && heap[0].ts <= at) {
            const gp_track *tr = &t->tracks[heap[0].k];
            const gp_event *ev = &tr->events[heap[0].i];
            while (depth > 0 && stack[depth - 1]->ts + stack[depth - 1]->dur <= ev->ts)
                depth--;
            const gp_event **slot = GP_PUSH(stack, depth, cap);
            if (!slot) {
                st = GP_ENOMEM;
                break;
            }
            *slot = ev;
            size_t i = next_op(tr, heap[0].i + 1);
            if (i < tr->n_events)
                heap[0] = (at_cursor){tr->events[i].ts, heap[0].k, i};
            else
                heap[0] = heap[--n_heap];
            heap_down(heap, n_heap, 0);
        }
        while (depth > 0 && stack[depth - 1]->ts + stack[depth - 1]->dur <= at)
            depth--;
        r->memory[peaks[q].d].running_cpu = depth ? gp_trace_str(t, stack[depth - 1]->name) : "";
    }
    free(peaks);
    free(heap);
    free(stack);
    return st;
}

/* Each device's series: the maximum of each bucket (dev[i]: the row of mem->v[i], SIZE_MAX for
 * none; mi[i]: its figures; t0, t1: each row's span). */
static void memory_series(gp_rank_analysis *r, const mem_list *mem, const size_t *dev,
                          const gp_mem_info *const *mi, const gp_ns *t0, const gp_ns *t1, size_t nb)
{
    for (size_t i = 0; i < mem->n && nb; i++) {
        if (dev[i] == SIZE_MAX)
            continue;
        size_t d = dev[i];
        gp_memory_device *md = &r->memory[d];
        gp_ns w = t1[d] > t0[d] ? gp__ceil_div(t1[d] - t0[d], (gp_ns)nb) : 1;
        size_t b = (size_t)((mem->v[i]->ts - t0[d]) / w);
        if (b >= nb)
            b = nb - 1;
        if (mi[i]->total_allocated >= 0 &&
            (isnan(md->allocated[b].v) || (double)mi[i]->total_allocated > md->allocated[b].v))
            md->allocated[b].v = (double)mi[i]->total_allocated;
        if (mi[i]->total_reserved >= 0 &&
            (isnan(md->reserved[b].v) || (double)mi[i]->total_reserved > md->reserved[b].v))
            md->reserved[b].v = (double)mi[i]->total_reserved;
    }
}

static gp_status memory(const gp__view *v, gp_rank_analysis *r, const mem_list *mem)
{
    const gp_trace *t = v->t;
    size_t cap = 0, last = SIZE_MAX;
    gp_ns *t0 = NULL, *t1 = NULL, *end_max = NULL;
    gp_status st = GP_OK;
    gp__imap capacity = {0};
    /* per event: its device's row (SIZE_MAX: none) and its figures, found once */
    size_t *dev = malloc((mem->n ? mem->n : 1) * sizeof(*dev));
    const gp_mem_info **mi = malloc((mem->n ? mem->n : 1) * sizeof(*mi));
    gp__imap devs; /* (device type << 32 | id) -> its row in r->memory */
    if (!dev || !mi || gp__imap_init(&devs, 16) != GP_OK) {
        free(dev);
        free(mi);
        return GP_ENOMEM;
    }
    /* Pass 1: devices and peaks. */
    for (size_t i = 0; i < mem->n; i++) {
        dev[i] = SIZE_MAX;
        if (!(mi[i] = gp_event_mem_info(t, mem->v[i])))
            continue;
        if ((dev[i] = mem_device(r, &cap, &devs, mi[i], &last)) == SIZE_MAX) {
            st = GP_ENOMEM;
            goto done;
        }
        gp_memory_device *d = &r->memory[dev[i]];
        d->events++;
        if (mi[i]->total_allocated >= 0) {
            if (mi[i]->total_allocated > d->peak_allocated) {
                d->peak_allocated = mi[i]->total_allocated;
                d->peak_ts = mem->v[i]->ts;
            }
            d->final_allocated = mi[i]->total_allocated;
        }
        d->peak_reserved = GP_MAX(d->peak_reserved, mi[i]->total_reserved);
    }
    if (r->n_memory == 0)
        goto done;
    size_t nb = v->o->series_points;
    t0 = calloc(r->n_memory, sizeof(*t0));
    t1 = calloc(r->n_memory, sizeof(*t1));
    if (!t0 || !t1) {
        st = GP_ENOMEM;
        goto done;
    }
    /* A device's capacity and the kernel running at its peak are looked up, not scanned for
     * (issue 38: quadratic in memory devices). The last device of an id wins, as the scan did. */
    if ((st = gp__imap_init(&capacity, t->n_devices)) != GP_OK)
        goto done;
    for (size_t i = 0; i < t->n_devices && st == GP_OK; i++)
        st = gp__imap_put(&capacity, t->devices[i].id, (uint64_t)t->devices[i].total_global_mem);
    end_max = malloc((v->n_g ? v->n_g : 1) * sizeof(*end_max));
    if (st != GP_OK || !end_max) {
        st = GP_ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < v->n_g; i++) {
        gp_ns prev = i ? end_max[i - 1] : INT64_MIN;
        const gp__gev *g = &v->g[i];
        end_max[i] = g->kind == GP_EV_KERNEL ? GP_MAX(prev, g->ts + g->dur) : prev;
    }
    for (size_t d = 0; d < r->n_memory; d++) {
        t0[d] = INT64_MAX;
        t1[d] = INT64_MIN;
    }
    for (size_t i = 0; i < mem->n; i++) {
        if (dev[i] == SIZE_MAX)
            continue;
        t0[dev[i]] = GP_MIN(t0[dev[i]], mem->v[i]->ts);
        t1[dev[i]] = GP_MAX(t1[dev[i]], mem->v[i]->ts + 1);
    }
    for (size_t d = 0; d < r->n_memory && st == GP_OK; d++) {
        gp_memory_device *md = &r->memory[d];
        st = gp__series_alloc(&md->allocated, nb, t0[d], t1[d]);
        if (st == GP_OK)
            st = gp__series_alloc(&md->reserved, nb, t0[d], t1[d]);
        if (st != GP_OK)
            break;
        md->n_series = nb;
        for (size_t b = 0; b < nb; b++)
            md->allocated[b].v = md->reserved[b].v = NAN;
        uint64_t cap_of = 0;
        if (md->device_type == 1 && gp__imap_get(&capacity, md->device_id, &cap_of))
            md->capacity = (int64_t)cap_of;
        md->running_gpu = kernel_at(v, end_max, md->peak_ts);
    }
    if (st == GP_OK)
        st = running_cpu_ops(v, r);
    /* Pass 2: series, the maximum of each bucket. */
    if (st == GP_OK)
        memory_series(r, mem, dev, mi, t0, t1, nb);
done:
    free(dev);
    free(mi);
    gp__imap_free(&devs);
    gp__imap_free(&capacity);
    free(end_max);
    free(t0);
    free(t1);
    return st;
}

typedef struct occ_acc {
    gp_strid name;
    gp_ns time;
    double occ_weighted; /* sum of occupancy * dur over kernels reporting it */
    gp_ns occ_time;
} occ_acc;

static gp_status kernels(const gp__view *v, gp_rank_analysis *r)
{
    const gp_trace *t = v->t;
    gp__imap idx;
    occ_acc *acc = NULL;
    size_t n = 0, cap = 0;
    gp_status st = gp__imap_init(&idx, 256);
    for (size_t i = 0; i < v->n_g && st == GP_OK; i++) {
        const gp__gev *g = &v->g[i];
        const gp_event *ev = g->ev;
        if (g->kind != GP_EV_KERNEL)
            continue;
        r->kernels_total++;
        r->kernels_time = gp__sat_add(r->kernels_time, ev->dur);
        if ((double)ev->dur < v->o->small_kernel_ns) {
            r->small_kernels++;
            r->small_kernels_time = gp__sat_add(r->small_kernels_time, ev->dur);
        }
        if (g->type != GP_KT_COMPUTATION)
            continue;
        uint64_t k;
        if (!gp__imap_get(&idx, ev->name, &k)) {
            occ_acc *a = GP_PUSH(acc, n, cap);
            if (!a || gp__imap_put(&idx, ev->name, n - 1) != GP_OK) {
                st = GP_ENOMEM;
                break;
            }
            a->name = ev->name;
            k = n - 1;
        }
        occ_acc *a = &acc[k];
        a->time = gp__sat_add(a->time, ev->dur);
        const gp_gpu_info *gi = gp_event_gpu_info(t, ev);
        /* Kineto writes the occupancy as a whole percent, 0 also where CUPTI's calculator
         * failed (Hopper's sm90 GEMMs with over 200 KB of shared memory). With a warp or more
         * per SM the occupancy is at least 1/64, so a 0 there means "not computed" and the
         * kernel reports none; a one-block grid's 0 (0.0003 warps per SM) is real. */
        bool not_computed = gi && gi->occupancy_pct <= 0.0f && gi->warps_per_sm >= 1.0f;
        if (gi && gi->blocks_per_sm > 0.0f && !not_computed) {
            a->occ_weighted += (double)gi->occupancy_pct * (double)ev->dur;
            a->occ_time = gp__sat_add(a->occ_time, ev->dur);
        }
    }
    /* The hottest (by time) of the five hottest compute kernels with occupancy below 25 %. */
    for (int round = 0; round < 5 && st == GP_OK && n > 0; round++) {
        size_t best = n;
        for (size_t i = 0; i < n; i++)
            if (acc[i].time >= 0 && (best == n || acc[i].time > acc[best].time))
                best = i;
        if (best == n)
            break;
        occ_acc *a = &acc[best];
        if (a->occ_time > 0) {
            double occ = a->occ_weighted / (double)a->occ_time;
            if (occ < 25.0) {
                r->low_occ_kernel = gp_trace_str(t, a->name);
                r->low_occ_pct = occ;
                r->low_occ_time = a->time;
                break;
            }
        }
        a->time = -1; /* consumed */
    }
    free(acc);
    gp__imap_free(&idx);
    return st;
}

gp_status gp__analyze_activity(const gp__view *v, gp_rank_analysis *r)
{
    mem_list mem = {0};
    gp_status st = activity(v, r, &mem);
    if (st == GP_OK)
        st = memory(v, r, &mem);
    free(mem.v);
    return st;
}

gp_status gp__activity_sum(const gp_trace *const *traces, size_t n, gp_activity *sum)
{
    memset(sum, 0, sizeof *sum);
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    gp__classifier *c = NULL;
    gp_status st = gp__classifier_new(&o, &c, NULL);
    for (size_t i = 0; i < n && st == GP_OK; i++) {
        gp__view v;
        if ((st = gp__view_build(&v, traces[i], &o, c)) != GP_OK)
            break;
        gp_rank_analysis r = {.rank = traces[i]->rank};
        mem_list mem = {0};
        st = activity(&v, &r, &mem);
        free(mem.v);
        gp__view_free(&v);
        sum->cpu_active = gp__sat_add(sum->cpu_active, r.activity.cpu_active);
        sum->gpu_active = gp__sat_add(sum->gpu_active, r.activity.gpu_active);
        sum->overlap = gp__sat_add(sum->overlap, r.activity.overlap);
    }
    gp__classifier_free(c);
    return st;
}

gp_status gp__analyze_kernel_stats(const gp__view *v, gp_rank_analysis *r)
{
    return kernels(v, r);
}
