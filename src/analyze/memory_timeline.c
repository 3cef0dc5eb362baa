/* The memory timeline of `gpuprof memory`: replays each allocator's "[memory]" events in time
 * order, finds the peak and the blocks live at it, groups them by allocating op and Python line,
 * and keeps the curve (memory_timeline.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/memory_timeline.h"
#include "core/imap.h"
#include "core/msort.h"
#include "core/util.h"

typedef struct mem_ev {
    const gp_event *ev;
    const gp_mem_info *mi;
} mem_ev;

typedef struct block {
    int64_t bytes;
    gp_ns ts;
    const char *op, *py;
    bool live;
} block;

/* Device types in the order of the report: the accelerators (CUDA 1, ...), then the CPU (0). */
static int64_t type_order(int32_t type)
{
    return type == 0 ? INT64_MAX : type;
}

static int cmp_mem_ev(const void *pa, const void *pb)
{
    const mem_ev *a = pa, *b = pb;
    if (a->mi->device_type != b->mi->device_type)
        return type_order(a->mi->device_type) < type_order(b->mi->device_type) ? -1 : 1;
    if (a->mi->device_id != b->mi->device_id)
        return a->mi->device_id < b->mi->device_id ? -1 : 1;
    if (a->ev->ts != b->ev->ts)
        return a->ev->ts < b->ev->ts ? -1 : 1;
    return a->ev < b->ev ? -1 : a->ev > b->ev; /* track order within a track */
}

const char *gp__mem_device_type_name(int32_t type, char *buf, size_t cap)
{
    static const char *const names[] = {"CPU",   "CUDA", "MKLDNN", "OPENGL", "OPENCL",
                                        "IDEEP", "HIP",  "FPGA",   "MSNPU",  "XLA"};
    if (type >= 0 && (size_t)type < GP_ARRAY_LEN(names))
        return names[type];
    snprintf(buf, cap, "device type %d", (int)type);
    return buf;
}

/* True for a Python frame of torch's own files ("…/torch/nn/modules/linear.py(114): forward"). */
static bool torch_frame(const char *name)
{
    return strstr(name, "/torch/") || strncmp(name, "torch/", 6) == 0 || name[0] == '<';
}

/* True for a frame that names a source line ("model.py(12): forward"), not a module frame
 * ("nn.Module: Linear_0") or a built-in ("<built-in method ...>"). */
static bool line_frame(const char *name)
{
    return strstr(name, ".py(") != NULL;
}

/* The innermost CPU op and Python frame (outside torch's files when there is one) on ev's track
 * that cover ev->ts. The track is sorted by start: binary search, then walk back. */
static void context_of(const gp_trace *t, const gp_event *ev, const char **op, const char **py)
{
    *op = *py = "";
    const gp_track *tr = &t->tracks[ev->track];
    size_t lo = 0, hi = tr->n_events;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tr->events[mid].ts <= ev->ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    bool have_op = false, have_py = false;
    const char *py_any = NULL;
    for (size_t i = lo, steps = 0; i-- > 0 && steps < 100000 && !(have_op && have_py); steps++) {
        const gp_event *e = &tr->events[i];
        if (e->ts + e->dur < ev->ts || (e->kind != GP_EV_CPU_OP && e->kind != GP_EV_PYTHON))
            continue;
        const char *name = gp_trace_str(t, e->name);
        if (e->kind == GP_EV_CPU_OP && !have_op) {
            *op = name;
            have_op = true;
        } else if (e->kind == GP_EV_PYTHON && !have_py && line_frame(name)) {
            if (!py_any)
                py_any = name;
            if (!torch_frame(name)) {
                *py = name;
                have_py = true;
            }
        }
    }
    if (!have_py && py_any)
        *py = py_any;
}

static int cmp_live(const void *pa, const void *pb)
{
    const gp__mem_live *a = pa, *b = pb;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    int c = strcmp(a->op, b->op);
    return c ? c : strcmp(a->py, b->py);
}

static int cmp_block_group(const void *pa, const void *pb)
{
    const block *a = pa, *b = pb;
    int c = strcmp(a->op, b->op);
    return c ? c : strcmp(a->py, b->py);
}

/* Groups the live blocks (compacted to the front of blocks, n of them) into d->live. */
static gp_status group_live(gp__mem_device *d, block *blocks, size_t n, size_t max_live)
{
    gp__msort(blocks, n, sizeof *blocks, cmp_block_group);
    size_t cap = 0;
    for (size_t i = 0; i < n; i++) {
        gp__mem_live *g = d->n_live ? &d->live[d->n_live - 1] : NULL;
        if (!g || cmp_block_group(&blocks[i], &blocks[i - 1]) != 0) {
            g = GP_PUSH(d->live, d->n_live, cap);
            if (!g)
                return GP_ENOMEM;
            *g = (gp__mem_live){.op = blocks[i].op, .py = blocks[i].py, .first_ts = INT64_MAX};
        }
        g->blocks++;
        g->bytes += blocks[i].bytes;
        g->largest = GP_MAX(g->largest, blocks[i].bytes);
        g->first_ts = GP_MIN(g->first_ts, blocks[i].ts);
    }
    gp__msort(d->live, d->n_live, sizeof *d->live, cmp_live);
    if (max_live && d->n_live > max_live)
        d->n_live = max_live;
    return GP_OK;
}

/* The level after event i: the trace's Total Allocated, or the running sum. */
static int64_t level_of(const mem_ev *e, bool totals, int64_t running)
{
    return totals ? e->mi->total_allocated : running;
}

/* Replays the events of one allocator up to the peak, keeping the blocks live there. */
static gp_status replay(const gp_trace *t, const mem_ev *ev, size_t n, size_t peak_i,
                        size_t max_live, gp__mem_device *d)
{
    gp__imap where = {0};
    block *blocks = calloc(n ? n : 1, sizeof *blocks);
    size_t nb = 0;
    gp_status st = blocks ? gp__imap_init(&where, n) : GP_ENOMEM;
    for (size_t i = 0; i <= peak_i && st == GP_OK; i++) {
        int64_t bytes = ev[i].mi->bytes;
        uint64_t at;
        if (ev[i].mi->addr == 0) /* no address (2021 traces): cannot be matched */
            continue;
        if (bytes > 0) {
            block *b = &blocks[nb];
            *b = (block){.bytes = bytes, .ts = ev[i].ev->ts, .live = true};
            context_of(t, ev[i].ev, &b->op, &b->py);
            st = gp__imap_put(&where, ev[i].mi->addr, nb++);
        } else if (bytes < 0 && gp__imap_get(&where, ev[i].mi->addr, &at) && at != UINT64_MAX) {
            blocks[at].live = false;
            st = gp__imap_put(&where, ev[i].mi->addr, UINT64_MAX);
        }
    }
    size_t live = 0;
    for (size_t i = 0; i < nb && st == GP_OK; i++)
        if (blocks[i].live) {
            d->live_traced += blocks[i].bytes;
            blocks[live++] = blocks[i];
        }
    d->live_blocks = live;
    d->live_untraced = GP_MAX(0, d->peak_allocated - d->live_traced);
    if (st == GP_OK)
        st = group_live(d, blocks, live, max_live);
    gp__imap_free(&where);
    free(blocks);
    return st;
}

/* The curve: every event's level, or per bucket of time the event with the highest level. */
static gp_status curve(const mem_ev *ev, size_t n, const int64_t *lv, size_t max_points,
                       gp__mem_device *d)
{
    size_t np = n <= max_points ? n : max_points;
    d->curve = calloc(np ? np : 1, sizeof *d->curve);
    if (!d->curve)
        return GP_ENOMEM;
    gp_ns t0 = d->first_ts, w = gp__ceil_div(d->last_ts - t0 + 1, (gp_ns)np);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t b = n <= max_points ? i : (size_t)((ev[i].ev->ts - t0) / (w ? w : 1));
        gp__mem_point p = {ev[i].ev->ts, lv[i], ev[i].mi->total_reserved};
        if (n <= max_points) {
            d->curve[k++] = p;
            continue;
        }
        /* buckets are in order; a new one starts a point, a higher level replaces it */
        if (k == 0 || (size_t)((d->curve[k - 1].ts - t0) / (w ? w : 1)) != b)
            d->curve[k++] = p;
        else if (p.allocated > d->curve[k - 1].allocated)
            d->curve[k - 1] = p;
    }
    d->n_curve = k;
    return GP_OK;
}

static double per_s(double v, gp_ns span)
{
    return span > 0 ? v * 1e9 / (double)span : 0;
}

/* One allocator: ev[0..n) of one device, sorted by time. */
static gp_status device(const gp_trace *t, const mem_ev *ev, size_t n, size_t max_points,
                        size_t max_live, gp__mem_device *d)
{
    int64_t *lv = calloc(n, sizeof *lv);
    if (!lv)
        return GP_ENOMEM;
    d->device_type = ev[0].mi->device_type;
    d->device_id = ev[0].mi->device_id;
    d->events = n;
    d->first_ts = ev[0].ev->ts;
    d->last_ts = ev[n - 1].ev->ts;
    d->from_totals = true;
    d->peak_reserved = -1;
    for (size_t i = 0; i < n; i++) {
        d->from_totals = d->from_totals && ev[i].mi->total_allocated >= 0;
        d->has_addresses = d->has_addresses || ev[i].mi->addr != 0;
    }
    int64_t running = 0;
    size_t peak_i = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t b = ev[i].mi->bytes;
        running += b;
        if (b > 0) {
            d->allocs++;
            d->bytes_allocated += b;
        } else if (b < 0) {
            d->frees++;
            d->bytes_freed -= b;
        }
        lv[i] = level_of(&ev[i], d->from_totals, running);
        if (i == 0 || lv[i] > lv[peak_i])
            peak_i = i;
        d->peak_reserved = GP_MAX(d->peak_reserved, ev[i].mi->total_reserved);
    }
    d->start_allocated = lv[0] - ev[0].mi->bytes;
    d->peak_allocated = lv[peak_i];
    d->peak_ts = ev[peak_i].ev->ts;
    d->final_allocated = lv[n - 1];
    context_of(t, ev[peak_i].ev, &d->peak_op, &d->peak_py);
    gp_ns span = d->last_ts - d->first_ts;
    d->allocs_per_s = per_s((double)d->allocs, span);
    d->frees_per_s = per_s((double)d->frees, span);
    d->alloc_bytes_per_s = per_s((double)d->bytes_allocated, span);
    d->free_bytes_per_s = per_s((double)d->bytes_freed, span);
    gp_status st = d->has_addresses ? replay(t, ev, n, peak_i, max_live, d) : GP_OK;
    if (st == GP_OK)
        st = curve(ev, n, lv, max_points, d);
    free(lv);
    return st;
}

/* Collects the "[memory]" events of t that carry their fields. */
static gp_status collect(const gp_trace *t, mem_ev **out, size_t *n_out, bool *stacks)
{
    size_t n = 0, cap = 0;
    mem_ev *v = NULL;
    for (size_t k = 0; k < t->n_tracks; k++)
        for (size_t i = 0; i < t->tracks[k].n_events; i++) {
            const gp_event *e = &t->tracks[k].events[i];
            *stacks = *stacks || e->kind == GP_EV_PYTHON;
            const gp_mem_info *mi = e->kind == GP_EV_MEMORY ? gp_event_mem_info(t, e) : NULL;
            if (!mi)
                continue;
            mem_ev *slot = GP_PUSH(v, n, cap);
            if (!slot) {
                free(v);
                return GP_ENOMEM;
            }
            *slot = (mem_ev){e, mi};
        }
    if (n)
        gp__msort(v, n, sizeof *v, cmp_mem_ev);
    *out = v;
    *n_out = n;
    return GP_OK;
}

gp_status gp__mem_timeline_build(const gp_trace *const *traces, size_t n, size_t max_points,
                                 size_t max_live, gp__mem_timeline *out)
{
    *out = (gp__mem_timeline){0};
    size_t cap = 0;
    gp_status st = GP_OK;
    for (size_t r = 0; r < n && st == GP_OK; r++) {
        mem_ev *ev = NULL;
        size_t ne = 0;
        st = collect(traces[r], &ev, &ne, &out->has_stacks);
        for (size_t i = 0; i < ne && st == GP_OK;) {
            size_t j = i + 1;
            while (j < ne && ev[j].mi->device_type == ev[i].mi->device_type &&
                   ev[j].mi->device_id == ev[i].mi->device_id)
                j++;
            gp__mem_device *d = GP_PUSH(out->devices, out->n_devices, cap);
            if (!d) {
                st = GP_ENOMEM;
                break;
            }
            *d = (gp__mem_device){.rank = traces[r]->rank};
            st = device(traces[r], ev + i, j - i, max_points ? max_points : 1000, max_live, d);
            i = j;
        }
        free(ev);
    }
    return st;
}

void gp__mem_timeline_free(gp__mem_timeline *m)
{
    for (size_t i = 0; i < m->n_devices; i++) {
        free(m->devices[i].live);
        free(m->devices[i].curve);
    }
    free(m->devices);
    *m = (gp__mem_timeline){0};
}
