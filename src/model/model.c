/* The trace model: building, strings, queries, sorting, freeing, comparing. */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/invariant.h"
#include "core/msort.h"
#include "core/strtab.h"
#include "core/util.h"
#include "gpuprof/trace.h"
#include "model/model_internal.h"

static const char *const kind_names[GP_EV_KIND_COUNT] = {
    [GP_EV_CPU_OP] = "cpu_op",
    [GP_EV_USER_ANNOTATION] = "user_annotation",
    [GP_EV_GPU_USER_ANNOTATION] = "gpu_user_annotation",
    [GP_EV_PYTHON] = "python_function",
    [GP_EV_RUNTIME] = "cuda_runtime",
    [GP_EV_DRIVER] = "cuda_driver",
    [GP_EV_KERNEL] = "kernel",
    [GP_EV_MEMCPY] = "gpu_memcpy",
    [GP_EV_MEMSET] = "gpu_memset",
    [GP_EV_SYNC] = "cuda_sync",
    [GP_EV_MEMORY] = "memory",
    [GP_EV_RANGE] = "range",
    [GP_EV_COUNTER] = "counter",
    [GP_EV_OVERHEAD] = "overhead",
    [GP_EV_INSTANT] = "instant",
    [GP_EV_OTHER] = "other",
};

const char *gp_event_kind_name(gp_event_kind kind)
{
    return (unsigned)kind < GP_EV_KIND_COUNT ? kind_names[kind] : "invalid";
}

gp_status gp_event_kind_parse(const char *name, gp_event_kind *out)
{
    static const gp__named aliases[] = {
        {"kernels", GP_EV_KERNEL},
        {"memcpy", GP_EV_MEMCPY},
        {"memset", GP_EV_MEMSET},
        {"cpu", GP_EV_CPU_OP},
        {"ops", GP_EV_CPU_OP},
        {"cpu_ops", GP_EV_CPU_OP},
        {"runtime", GP_EV_RUNTIME},
        {"driver", GP_EV_DRIVER},
        {"annotations", GP_EV_USER_ANNOTATION},
        {"annotation", GP_EV_USER_ANNOTATION},
        {"gpu_annotations", GP_EV_GPU_USER_ANNOTATION},
        {"gpu_annotation", GP_EV_GPU_USER_ANNOTATION},
        {"python", GP_EV_PYTHON},
        {"sync", GP_EV_SYNC},
        {"ranges", GP_EV_RANGE},
    };
    int k = gp__index_of(kind_names, GP_EV_KIND_COUNT, name, false);
    int v = k >= 0 ? k : GP_VALUE_OF(aliases, name, GP_EV_KIND_COUNT);
    if (v == GP_EV_KIND_COUNT)
        return GP_EINVAL;
    *out = (gp_event_kind)v;
    return GP_OK;
}

bool gp_event_kind_is_gpu(gp_event_kind kind)
{
    return kind == GP_EV_KERNEL || kind == GP_EV_MEMCPY || kind == GP_EV_MEMSET ||
           kind == GP_EV_SYNC || kind == GP_EV_GPU_USER_ANNOTATION;
}

bool gp_event_kind_is_gpu_work(gp_event_kind kind)
{
    return kind == GP_EV_KERNEL || kind == GP_EV_MEMCPY || kind == GP_EV_MEMSET;
}

bool gp_event_kind_has_duration(gp_event_kind kind)
{
    return kind != GP_EV_MEMORY && kind != GP_EV_INSTANT && kind != GP_EV_COUNTER;
}

/* ---- strings ---- */

const char *gp_trace_str(const gp_trace *t, gp_strid id)
{
    return t ? gp__strtab_get(&gp__trace_impl_const(t)->strings, id) : "";
}

size_t gp_trace_strlen(const gp_trace *t, gp_strid id)
{
    return t ? gp__strtab_len(&gp__trace_impl_const(t)->strings, id) : 0;
}

gp_status gp_trace_intern(gp_trace *t, const char *s, size_t len, gp_strid *out)
{
    return gp__strtab_intern(gp__trace_strtab(t), s, len, out);
}

gp_strid gp_trace_find_str(const gp_trace *t, const char *s, size_t len)
{
    return gp__strtab_find(&gp__trace_impl_const(t)->strings, s, len);
}

size_t gp_trace_str_count(const gp_trace *t)
{
    return gp__trace_impl_const(t)->strings.n - 1;
}

/* ---- lifetime ---- */

gp_status gp_trace_create(const char *source, gp_trace **out)
{
    gp__trace_impl *m = calloc(1, sizeof *m);
    if (!m)
        return GP_ENOMEM;
    if (gp__strtab_init(&m->strings) != GP_OK) {
        free(m);
        return GP_ENOMEM;
    }
    gp_trace *t = &m->pub;
    t->rank = -1;
    t->dist.rank = -1;
    t->dist.world_size = -1;
    t->schema_version = -1;
    if (source && gp_trace_intern(t, source, strlen(source), &t->source) != GP_OK) {
        gp_trace_free(t);
        return GP_ENOMEM;
    }
    *out = t;
    return GP_OK;
}

void gp_trace_free(gp_trace *t)
{
    if (!t)
        return;
    gp__trace_impl *m = gp__trace_impl_of(t);
    for (size_t i = 0; i < t->n_tracks; i++)
        free(t->tracks[i].events);
    free(t->tracks);
    free(m->cap_events);
    free(t->gpu_info);
    free(t->gpu_ext);
    free(t->mem_info);
    free(t->py_info);
    free(t->counters);
    free(t->flows);
    free(t->devices);
    free(t->meta);
    free(t->args);
    free(t->op_shapes);
    free(m->build.track_slots);
    free(m->build.flow_points);
    if (m->build.meta_indexed)
        gp__imap_free(&m->build.meta_index);
    gp__strtab_free(&m->strings);
    free(m);
}

void gp_job_free(gp_job *job)
{
    if (!job)
        return;
    for (size_t i = 0; i < job->n_ranks; i++)
        gp_trace_free(job->ranks[i]);
    free(job->ranks);
    free(job);
}

/* ---- building ---- */

static uint64_t track_hash(gp_track_kind kind, int64_t pid, int64_t tid)
{
    return gp__hash_u64((uint64_t)pid * 0x9E3779B97F4A7C15ULL ^ (uint64_t)tid ^
                        ((uint64_t)kind << 58));
}

/* The slot holding track (kind, pid, tid), or the empty slot where it would go. */
static size_t track_slot(const gp_trace *t, const gp__trace_priv *p, gp_track_kind kind,
                         int64_t pid, int64_t tid)
{
    uint64_t h = track_hash(kind, pid, tid), fp = h >> 32 << 32;
    size_t mask = p->n_track_slots - 1, i = h & mask;
    for (;; i = (i + 1) & mask) {
        uint64_t v = p->track_slots[i];
        if (!v)
            return i;
        if ((v >> 32 << 32) != fp)
            continue;
        const gp_track *tr = &t->tracks[(uint32_t)v - 1];
        if (tr->pid == pid && tr->tid == tid && tr->kind == kind)
            return i;
    }
}

/* The slot value for track k. */
static uint64_t track_entry(gp_track_kind kind, int64_t pid, int64_t tid, size_t k)
{
    return track_hash(kind, pid, tid) >> 32 << 32 | (uint64_t)(k + 1);
}

/* Re-indexes every track into a table of n_slots (a power of two). */
static gp_status track_rehash(gp_trace *t, gp__trace_priv *p, size_t n_slots)
{
    uint64_t *slots = calloc(n_slots, sizeof *slots);
    if (!slots)
        return GP_ENOMEM;
    free(p->track_slots);
    p->track_slots = slots;
    p->n_track_slots = n_slots;
    for (size_t k = 0; k < t->n_tracks; k++) {
        const gp_track *tr = &t->tracks[k];
        slots[track_slot(t, p, tr->kind, tr->pid, tr->tid)] =
            track_entry(tr->kind, tr->pid, tr->tid, k);
    }
    return GP_OK;
}

gp_status gp_trace_track(gp_trace *t, gp_track_kind kind, int64_t pid, int64_t tid, uint32_t *out)
{
    gp__trace_impl *m = gp__trace_impl_of(t);
    gp__trace_priv *p = &m->build;
    if ((t->n_tracks + 1) * 2 > p->n_track_slots) {
        gp_status s = track_rehash(t, p, GP_MAX(p->n_track_slots * 2, (size_t)64));
        if (s != GP_OK)
            return s;
    }
    size_t slot = track_slot(t, p, kind, pid, tid);
    if (p->track_slots[slot]) {
        *out = (uint32_t)p->track_slots[slot] - 1;
        return GP_OK;
    }
    if (t->n_tracks >= UINT32_MAX - 1)
        return GP_ELIMIT;
    /* The events' capacities first: a failure leaves both arrays as they were. */
    if (gp__grow((void **)&m->cap_events, &m->cap_events_room, sizeof *m->cap_events,
                 t->n_tracks + 1) != GP_OK)
        return GP_ENOMEM;
    gp_track *tr = GP_PUSH(t->tracks, t->n_tracks, m->cap_tracks);
    if (!tr)
        return GP_ENOMEM;
    tr->kind = kind;
    tr->pid = pid;
    tr->tid = tid;
    tr->device = kind == GP_TRACK_GPU_STREAM ? (int32_t)pid : -1;
    tr->stream = kind == GP_TRACK_GPU_STREAM ? tid : -1;
    tr->sort_index = tid;
    *out = (uint32_t)(t->n_tracks - 1);
    /* A small first block (GP_PUSH would start at 16 events, 768 bytes): with a million tracks of
     * one event each, that was most of the memory and of the time (page faults). Best effort. */
    tr->events = malloc(4 * sizeof *tr->events);
    m->cap_events[*out] = tr->events ? 4 : 0;
    p->track_slots[slot] = track_entry(kind, pid, tid, *out);
    return GP_OK;
}

gp_status gp__trace_reserve_events(gp_trace *t, uint32_t k, size_t need)
{
    gp_track *tr = &t->tracks[k];
    return gp__grow((void **)&tr->events, &gp__trace_impl_of(t)->cap_events[k], sizeof *tr->events,
                    need);
}

void gp__trace_drop_events(gp_trace *t, uint32_t k)
{
    gp_track *tr = &t->tracks[k];
    free(tr->events);
    tr->events = NULL;
    tr->n_events = 0;
    gp__trace_impl_of(t)->cap_events[k] = 0;
}

gp_status gp_trace_add_event(gp_trace *t, const gp_event *ev)
{
    if (ev->track >= t->n_tracks)
        return GP_EINVAL;
    gp_event *e = gp__trace_push_event(t, ev->track);
    if (!e)
        return GP_ENOMEM;
    *e = *ev;
    return GP_OK;
}

_Atomic unsigned long gp__trace_progress_growths;

void gp__trace_set_progress(gp_trace *t, uint64_t done, uint64_t total)
{
    gp__trace_impl_of(t)->grow_hint = done && total > done ? (double)total / (double)done : 0;
}

gp_status gp__trace_grow(const gp__trace_impl *m, void **data, size_t *cap, size_t elem,
                         size_t need)
{
    if (m->grow_hint > 0 && need <= SIZE_MAX / 32 / elem && need * elem >= GP__GROW_BY_PROGRESS) {
        double want = (double)need * m->grow_hint * 2;
        size_t most = need * 32;
        size_t ncap = want < (double)most ? (size_t)want : most;
        /* a prediction below doubling, or a reservation refused: doubling */
        if (ncap > *cap * 2 && gp__reserve(data, cap, elem, ncap) == GP_OK) {
            atomic_fetch_add_explicit(&gp__trace_progress_growths, 1, memory_order_relaxed);
            return GP_OK;
        }
    }
    return gp__grow(data, cap, elem, need);
}

/* Gives back room a prediction left over (gp__trace_set_progress): more than doubling leaves,
 * and at least GP__GROW_BY_PROGRESS bytes. A large block shrinks where it lies (glibc's realloc
 * unmaps its tail), so nothing moves or is touched. Room doubling left stays: the in-process
 * tracer finishes its trace at every periodic write and adds to it after, and a block cut to its
 * count would move at the next event. Best effort. */
static void give_back(void **data, size_t *cap, size_t n, size_t elem)
{
    if (n && *cap / 2 > n && (*cap - n) * elem >= GP__GROW_BY_PROGRESS) {
        void *p = realloc(*data, n * elem);
        if (p) {
            *data = p;
            *cap = n;
        }
    }
}

#define ADD_SIDE(arr, n, cap, rec, extra_out)                                                      \
    do {                                                                                           \
        if ((n) >= UINT32_MAX - 1)                                                                 \
            return GP_ELIMIT;                                                                      \
        if ((n) >= (cap) && gp__trace_grow(gp__trace_impl_of(t), (void **)&(arr), &(cap),          \
                                           sizeof *(arr), (n) + 1) != GP_OK)                       \
            return GP_ENOMEM;                                                                      \
        memcpy(&(arr)[(n)++], rec, sizeof *(arr));                                                 \
        *(extra_out) = (uint32_t)(n);                                                              \
        return GP_OK;                                                                              \
    } while (0)

gp_status gp_trace_add_gpu_info(gp_trace *t, const gp_gpu_info *info, uint32_t *extra_out)
{
    ADD_SIDE(t->gpu_info, t->n_gpu_info, gp__trace_impl_of(t)->cap_gpu_info, info, extra_out);
}

gp_status gp_trace_add_gpu_ext(gp_trace *t, const gp_gpu_ext *x, uint32_t *ext_out)
{
    if (gp_gpu_ext_is_blank(x)) {
        *ext_out = 0;
        return GP_OK;
    }
    ADD_SIDE(t->gpu_ext, t->n_gpu_ext, gp__trace_impl_of(t)->cap_gpu_ext, x, ext_out);
}

gp_status gp_trace_add_mem_info(gp_trace *t, const gp_mem_info *info, uint32_t *extra_out)
{
    ADD_SIDE(t->mem_info, t->n_mem_info, gp__trace_impl_of(t)->cap_mem_info, info, extra_out);
}

gp_status gp_trace_add_py_info(gp_trace *t, const gp_py_info *info, uint32_t *extra_out)
{
    ADD_SIDE(t->py_info, t->n_py_info, gp__trace_impl_of(t)->cap_py_info, info, extra_out);
}

gp_status gp_trace_add_args(gp_trace *t, const char *json, size_t len, uint32_t *extra_out)
{
    gp_strid id;
    gp_status s = gp_trace_intern(t, json, len, &id);
    if (s != GP_OK)
        return s;
    ADD_SIDE(t->args, t->n_args, gp__trace_impl_of(t)->cap_args, &id, extra_out);
}

gp_status gp_trace_add_counter(gp_trace *t, const gp_counter_sample *s)
{
    gp_counter_sample *c = GP_PUSH(t->counters, t->n_counters, gp__trace_impl_of(t)->cap_counters);
    if (!c)
        return GP_ENOMEM;
    *c = *s;
    return GP_OK;
}

gp_status gp_trace_add_flow(gp_trace *t, const gp_flow *f)
{
    gp_flow *d = GP_PUSH(t->flows, t->n_flows, gp__trace_impl_of(t)->cap_flows);
    if (!d)
        return GP_ENOMEM;
    *d = *f;
    return GP_OK;
}

gp_status gp_trace_add_device(gp_trace *t, const gp_device_props *d)
{
    gp_device_props *x = GP_PUSH(t->devices, t->n_devices, gp__trace_impl_of(t)->cap_devices);
    if (!x)
        return GP_ENOMEM;
    *x = *d;
    return GP_OK;
}

gp_status gp_trace_add_op_shapes(gp_trace *t, const gp_op_shapes *s)
{
    gp_op_shapes *o = GP_PUSH(t->op_shapes, t->n_op_shapes, gp__trace_impl_of(t)->cap_op_shapes);
    if (!o)
        return GP_ENOMEM;
    *o = *s;
    return GP_OK;
}

/* Members from which gp_trace_set_meta looks keys up in an index rather than scanning. */
#define META_INDEX_FROM 16

/* Builds the meta index of a trace with enough members (false: out of memory). */
static bool meta_index_build(gp_trace *t, gp__trace_priv *p)
{
    if (gp__imap_init(&p->meta_index, t->n_meta * 2) != GP_OK)
        return false;
    for (size_t i = 0; i < t->n_meta; i++)
        if (gp__imap_put(&p->meta_index, t->meta[i].key, i) != GP_OK) {
            gp__imap_free(&p->meta_index);
            return false;
        }
    p->meta_indexed = true;
    return true;
}

gp_status gp_trace_set_meta(gp_trace *t, const char *key, const char *value_json)
{
    gp_strid k, v;
    gp_status s = gp_trace_intern(t, key, strlen(key), &k);
    if (s == GP_OK)
        s = gp_trace_intern(t, value_json, strlen(value_json), &v);
    if (s != GP_OK)
        return s;
    gp__trace_impl *m = gp__trace_impl_of(t);
    gp__trace_priv *p = &m->build;
    if (!p->meta_indexed && t->n_meta >= META_INDEX_FROM && !meta_index_build(t, p))
        return GP_ENOMEM;
    if (p->meta_indexed) {
        uint64_t i;
        if (gp__imap_get(&p->meta_index, k, &i)) {
            t->meta[i].value_json = v;
            return GP_OK;
        }
    } else {
        for (size_t i = 0; i < t->n_meta; i++)
            if (t->meta[i].key == k) {
                t->meta[i].value_json = v;
                return GP_OK;
            }
    }
    gp_meta *e = GP_PUSH(t->meta, t->n_meta, m->cap_meta);
    if (!e)
        return GP_ENOMEM;
    e->key = k;
    e->value_json = v;
    if (p->meta_indexed && gp__imap_put(&p->meta_index, k, t->n_meta - 1) != GP_OK) {
        t->n_meta--;
        return GP_ENOMEM;
    }
    return GP_OK;
}

void gp_gpu_info_init(gp_gpu_info *info)
{
    gp__zero(info, sizeof *info); /* once per GPU event: see gp__zero */
    info->device = -1;
    info->context = -1;
    info->stream = -1;
    for (int i = 0; i < 3; i++)
        info->grid[i] = info->block[i] = -1;
    info->registers_per_thread = -1;
    info->shared_memory = -1;
    info->queued = -1;
    info->bytes = -1;
    info->graph_id = -1;
    info->graph_node_id = -1;
}

/* Every field absent: what gp_gpu_ext_init writes and gp_gpu_info_ext returns for "none". */
static const gp_gpu_ext gpu_ext_blank = {
    .wait_on_stream = -1,
    .wait_on_event_corr = -1,
    .in_msg_nelems = -1,
    .out_msg_nelems = -1,
    .group_size = -1,
};

void gp_gpu_ext_init(gp_gpu_ext *x)
{
    *x = gpu_ext_blank;
}

bool gp_gpu_ext_is_blank(const gp_gpu_ext *x)
{
    return x->sync_kind == 0 && x->wait_on_stream == -1 && x->wait_on_event_corr == -1 &&
           x->collective == 0 && x->in_msg_nelems == -1 && x->out_msg_nelems == -1 &&
           x->group_size == -1 && x->dtype == 0 && x->pg_name == 0 && x->pg_desc == 0 &&
           x->pg_ranks == 0;
}

/* ---- sorting ---- */

static int cmp_event(const void *a, const void *b)
{
    const gp_event *x = a, *y = b;
    GP_CMP_KEY(x->ts, y->ts);
    return GP_CMP(y->dur, x->dur); /* longer first: parents before children */
}

/* Counter samples by (track, ts), stably: samples of one time keep file order. Ordering them by
 * series id made the order depend on which names were interned first, so a trace written and read
 * back (or read in parallel pieces) could list the samples of one time in another order
 * (fuzz_trace_reader found it). */
#define CMP_COUNTER(x, y)                                                                          \
    ((x)->track != (y)->track ? GP_CMP((x)->track, (y)->track) : GP_CMP((x)->ts, (y)->ts))
GP__DEFINE_MERGE_SORT(sort_counters, gp_counter_sample, CMP_COUNTER)

#define CMP_OP_SHAPES(x, y) GP_CMP((x)->external_id, (y)->external_id)
GP__DEFINE_MERGE_SORT(sort_op_shapes, gp_op_shapes, CMP_OP_SHAPES)

/* gp_trace_finish; events_sorted: every track is sorted already (gp__trace_finish_sorted). */
static gp_status finish(gp_trace *t, bool events_sorted)
{
    gp__trace_impl *m = gp__trace_impl_of(t);
    m->grow_hint = 0;
    give_back((void **)&t->gpu_info, &m->cap_gpu_info, t->n_gpu_info, sizeof *t->gpu_info);
    give_back((void **)&t->gpu_ext, &m->cap_gpu_ext, t->n_gpu_ext, sizeof *t->gpu_ext);
    give_back((void **)&t->mem_info, &m->cap_mem_info, t->n_mem_info, sizeof *t->mem_info);
    give_back((void **)&t->py_info, &m->cap_py_info, t->n_py_info, sizeof *t->py_info);
    give_back((void **)&t->args, &m->cap_args, t->n_args, sizeof *t->args);
    for (size_t i = 0; i < t->n_tracks; i++) {
        gp_track *tr = &t->tracks[i];
        give_back((void **)&tr->events, &m->cap_events[i], tr->n_events, sizeof *tr->events);
        if (!events_sorted)
            gp__sort_events(tr->events, tr->n_events); /* one comparison pass when sorted */
#ifdef GP_CHECK_INVARIANTS
        /* Every track of a finished trace is sorted by start, longer first on ties (trace.h). */
        for (size_t j = 1; j < tr->n_events; j++)
            GP_INVARIANT(cmp_event(&tr->events[j - 1], &tr->events[j]) <= 0,
                         "track %zu: event %zu starts before event %zu", i, j, j - 1);
#endif
    }
    if (t->n_counters > 1 && !sort_counters(t->counters, t->n_counters))
        return GP_ENOMEM;
    /* Stable: among equal External ids the first in file order is the one looked up. */
    if (t->n_op_shapes > 1 && !sort_op_shapes(t->op_shapes, t->n_op_shapes))
        return GP_ENOMEM;
    return GP_OK;
}

gp_status gp_trace_finish(gp_trace *t)
{
    return finish(t, false);
}

gp_status gp__trace_finish_sorted(gp_trace *t)
{
    return finish(t, true);
}

/* Stable (equal events keep file order, so a round trip reproduces the same model) and adaptive to
 * presortedness: see core/msort.h. */
GP__DEFINE_MERGE_SORT(sort_events, gp_event, cmp_event)

void gp__sort_events(gp_event *ev, size_t n)
{
    if (!sort_events(ev, n)) /* out of memory: the stable sort without a buffer, not a failure */
        gp__msort_in_place(ev, n, sizeof *ev, cmp_event);
}

void gp__merge_sorted_events(gp_event *ev, size_t mid, size_t n)
{
    if (mid == 0 || mid >= n || cmp_event(&ev[mid - 1], &ev[mid]) <= 0)
        return; /* in order already: the halves do not overlap (a replicated trace's copies) */
    size_t small = GP_MIN(mid, n - mid); /* the merge buffers at most the smaller side */
    gp_event *tmp = malloc(small * sizeof *tmp);
    if (!tmp) {
        gp__sort_events(ev, n);
        return;
    }
    sort_events_merge(ev, 0, mid, n, tmp);
    free(tmp);
}

/* ---- queries ---- */

const gp_gpu_info *gp_event_gpu_info(const gp_trace *t, const gp_event *ev)
{
    if (!gp_event_kind_is_gpu((gp_event_kind)ev->kind) || ev->extra == 0 ||
        ev->extra > t->n_gpu_info)
        return NULL;
    return &t->gpu_info[ev->extra - 1];
}

const gp_gpu_ext *gp_gpu_info_ext(const gp_trace *t, const gp_gpu_info *g)
{
    if (!g || g->ext == 0 || g->ext > t->n_gpu_ext)
        return &gpu_ext_blank;
    return &t->gpu_ext[g->ext - 1];
}

const gp_gpu_ext *gp_event_gpu_ext(const gp_trace *t, const gp_event *ev)
{
    return gp_gpu_info_ext(t, gp_event_gpu_info(t, ev));
}

const gp_mem_info *gp_event_mem_info(const gp_trace *t, const gp_event *ev)
{
    if (ev->kind != GP_EV_MEMORY || ev->extra == 0 || ev->extra > t->n_mem_info)
        return NULL;
    return &t->mem_info[ev->extra - 1];
}

const gp_py_info *gp_event_py_info(const gp_trace *t, const gp_event *ev)
{
    if (ev->kind != GP_EV_PYTHON || ev->extra == 0 || ev->extra > t->n_py_info)
        return NULL;
    return &t->py_info[ev->extra - 1];
}

int64_t gp_event_cpu_stream(const gp_event *ev)
{
    return ev->kind == GP_EV_CPU_OP && ev->extra ? (int64_t)ev->extra - 1 : -1;
}

const char *gp_event_args_json(const gp_trace *t, const gp_event *ev)
{
    if ((ev->kind != GP_EV_RANGE && ev->kind != GP_EV_INSTANT) || ev->extra == 0 ||
        ev->extra > t->n_args)
        return NULL;
    return gp_trace_str(t, t->args[ev->extra - 1]);
}

bool gp_event_arg_int(const gp_trace *t, const gp_event *ev, const char *key, int64_t *out)
{
    const char *json = gp_event_args_json(t, ev);
    if (!json)
        return false;
    size_t kl = strlen(key);
    for (const char *p = strstr(json, key); p; p = strstr(p + 1, key)) {
        if (p == json || p[-1] != '"' || p[kl] != '"')
            continue;
        const char *q = p + kl + 1;
        while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
            q++;
        if (*q != ':')
            continue;
        q++;
        while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')
            q++;
        char *end;
        errno = 0;
        long long v = strtoll(q, &end, 10);
        if (end == q || errno == ERANGE || *end == '.' || *end == 'e' || *end == 'E')
            return false;
        *out = (int64_t)v;
        return true;
    }
    return false;
}

/* Whether a shapes record is of an external id below id. */
static inline bool shapes_below(const gp_op_shapes *x, int64_t id)
{
    return x->external_id < id;
}
GP__DEFINE_LOWER_BOUND(shapes_lower_bound, gp_op_shapes, int64_t, shapes_below)

const gp_op_shapes *gp_trace_op_shapes(const gp_trace *t, int64_t external_id)
{
    if (external_id <= 0)
        return NULL;
    size_t i = shapes_lower_bound(t->op_shapes, t->n_op_shapes, external_id);
    return i < t->n_op_shapes && t->op_shapes[i].external_id == external_id ? &t->op_shapes[i]
                                                                            : NULL;
}

size_t gp_trace_event_count(const gp_trace *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n_tracks; i++)
        n += t->tracks[i].n_events;
    return n;
}

void gp_trace_span(const gp_trace *t, gp_ns *start, gp_ns *end)
{
    bool any = false;
    gp_ns s = 0, e = 0;
    for (size_t i = 0; i < t->n_tracks; i++) {
        const gp_track *tr = &t->tracks[i];
        for (size_t j = 0; j < tr->n_events; j++) {
            const gp_event *ev = &tr->events[j];
            if (!any || ev->ts < s)
                s = ev->ts;
            if (!any || ev->ts + ev->dur > e)
                e = ev->ts + ev->dur;
            any = true;
        }
    }
    *start = s;
    *end = e;
}

/* The GPU streams first: GPU work is nearly always there, so the answer costs a look at one event
 * per stream, not a walk of every CPU thread before them (2 ms of `analyze` on the H100 trace x10,
 * twice, while nothing else ran). Any kind of track may hold GPU work, so the others follow. */
bool gp_trace_has_gpu(const gp_trace *t)
{
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < t->n_tracks; i++) {
            const gp_track *tr = &t->tracks[i];
            if ((tr->kind == GP_TRACK_GPU_STREAM) != (pass == 0))
                continue;
            for (size_t j = 0; j < tr->n_events; j++) {
                uint8_t k = tr->events[j].kind;
                if (k == GP_EV_KERNEL || k == GP_EV_MEMCPY || k == GP_EV_MEMSET)
                    return true;
            }
        }
    return false;
}
