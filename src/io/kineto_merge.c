/* Finishing a read, and merging the pieces of a parallel one (contracts in io/kineto_reader.h).
 *
 * Finishing (gp__reader_finish) turns what the parse collected into the model's final form: times
 * become absolute (baseTimeNanoseconds + ts), flow points are paired into flows, metadata events
 * name the tracks, and gp_trace_finish sorts and indexes.
 *
 * Merging (gp__merge_readers): each piece of a parallel read has its own trace, with its own
 * string ids, tracks and side tables. The pieces are merged into the first in file order: strings
 * are interned again and mapped, tracks are found or created in order, and the destination's arrays
 * grow once; the bulk copies (events, side records) then run as tasks of COPY_CHUNK elements on
 * several threads, each task writing its own range. The result is the trace a sequential read
 * would have built: same ids, same order.
 *
 * The merge also sorts every destination track (gp__sort_events, the sort gp_trace_finish does)
 * among the copy tasks: the task that finishes a track's last copy sorts it, and tracks that get no
 * copy have sort tasks of their own. Finishing then skips gp_trace_finish's sort
 * (gp__trace_finish_sorted, through gp__reader.tracks_sorted). The sorts thus run on every thread,
 * beside the other copies, instead of on one thread after them (the largest track of
 * large_v100_nccl x7 holds 60 % of its events). The order is the one a sequential read gets: the
 * sort is stable, and the times shifted later by baseTimeNanoseconds all move by one constant,
 * checked not to overflow. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/msort.h"
#include "core/par.h"
#include "core/strtab.h"
#include "core/util.h"
#include "gpuprof/trace.h"
#include "model/model_internal.h"
#include "io/json_scan.h"
#include "io/reader_internal.h"

#define COPY_CHUNK 32768                     /* elements per merge-copy task */
size_t gp__merge_split_min = 4 * COPY_CHUNK; /* reader_internal.h */

/* ---- finishing ---------------------------------------------------------------------------- */

static int cmp_flow_point(const void *a, const void *b)
{
    const gp__flow_point *x = a, *y = b;
    GP_CMP_KEY(x->cat, y->cat);
    GP_CMP_KEY(x->id, y->id);
    GP_CMP_KEY(x->is_end, y->is_end); /* the start before the end */
    return GP_CMP(x->ts, y->ts);
}

/* base + ts: false when the sum overflows or leaves the range the model keeps
 * (io/kineto_reader.h, GP__MIN_TIME_NS). */
static bool shifted(gp_ns ts, gp_ns base, gp_ns *out)
{
    return !__builtin_add_overflow(ts, base, out) && *out <= GP__MAX_TIME_NS &&
           *out >= GP__MIN_TIME_NS;
}

/* Shifts relative times to absolute ones (base + ts); the events' only when events (the merge
 * shifted them, each track in the task that sorts it). The caller has checked the earliest and
 * latest (the reader's time_lo and time_hi), so no sum leaves the range. */
static void shift_times(gp_trace *t, gp_ns base, bool events)
{
    gp__trace_priv *priv = gp__trace_build(t);
    for (size_t i = 0; events && i < t->n_tracks; i++)
        for (size_t j = 0; j < t->tracks[i].n_events; j++)
            t->tracks[i].events[j].ts += base;
    for (size_t i = 0; i < t->n_counters; i++)
        t->counters[i].ts += base;
    for (size_t i = 0; i < priv->n_flow_points; i++)
        priv->flow_points[i].ts += base;
}

/* Pairs flow points: a start then an end with the same (cat, id) make a flow. Longjmps (r->jb)
 * when out of memory creating a track. */
static gp_status pair_flows(gp__reader *r)
{
    gp_trace *t = r->t;
    gp__trace_priv *priv = gp__trace_build(t);
    if (!priv->n_flow_points)
        return GP_OK;
    gp__msort(priv->flow_points, priv->n_flow_points, sizeof *priv->flow_points, cmp_flow_point);
    for (size_t i = 0; i + 1 < priv->n_flow_points; i++) {
        gp__flow_point *a = &priv->flow_points[i], *b = &priv->flow_points[i + 1];
        if (a->cat == b->cat && a->id == b->id && !a->is_end && b->is_end) {
            uint32_t src = gp__kineto_track_for_ids(r, a->pid_is_str, a->pid_str, a->pid,
                                                    a->tid_is_str, a->tid_str, a->tid);
            uint32_t dst = gp__kineto_track_for_ids(r, b->pid_is_str, b->pid_str, b->pid,
                                                    b->tid_is_str, b->tid_str, b->tid);
            gp_flow f = {a->id, a->cat, a->name, src, dst, a->ts, b->ts};
            if (gp_trace_add_flow(t, &f) != GP_OK)
                return GP_ENOMEM;
            i++;
        }
    }
    return GP_OK;
}

/* Track names and sort indices from metadata events. */
static void apply_track_meta(gp__reader *r)
{
    gp_trace *t = r->t;
    for (size_t m = 0; m < r->n_meta; m++) {
        const gp__reader_pending_meta *pm = &r->meta[m];
        for (size_t i = 0; i < t->n_tracks; i++) {
            gp_track *tr = &t->tracks[i];
            if (tr->kind == GP_TRACK_OTHER || tr->kind == GP_TRACK_COUNTER || tr->pid != pm->pid)
                continue;
            if (pm->kind == 0)
                tr->process_name = pm->value;
            else if (pm->kind == 1 && tr->tid == pm->tid)
                tr->name = pm->value;
            else if (pm->kind == 2 && tr->tid == pm->tid)
                tr->sort_index = pm->num;
        }
    }
}

gp_status gp__reader_finish(gp__reader *r)
{
    /* Helpers used below report out-of-memory with longjmp (as during parsing). */
    if (setjmp(r->jb))
        return GP_ENOMEM;
    gp_trace *t = r->t;
    /* Every committed time lies between the earliest and the latest (note_time): checking those
     * two checks all, and the error names the element's offset. */
    for (int k = 0; r->have_times && k < 2; k++) {
        const gp__reader_time_mark *tm = k ? &r->time_hi : &r->time_lo;
        gp_ns abs;
        if (shifted(tm->ts, t->base_time_ns, &abs))
            continue;
        char base[64] = "";
        if (t->base_time_ns)
            snprintf(base, sizeof base, "baseTimeNanoseconds %lld + ", (long long)t->base_time_ns);
        return gp_error_set(r->err, GP_EPARSE,
                            "%s: byte %llu: %s time is out of range: %sts %lld ns is outside "
                            "-2^61 .. 2^62 ns (the years 1897 .. 2116)",
                            r->name, (unsigned long long)tm->off, tm->what, base,
                            (long long)tm->ts);
    }
    if (t->base_time_ns)
        shift_times(t, t->base_time_ns, !r->events_shifted);
    if (pair_flows(r) != GP_OK)
        return GP_ENOMEM;
    apply_track_meta(r);
    t->rank = t->dist.present && t->dist.rank >= 0 ? t->dist.rank : -1;
    return r->tracks_sorted ? gp__trace_finish_sorted(t) : gp_trace_finish(t);
}

/* ---- merging pieces ----------------------------------------------------------------------- */

/* How one piece's trace maps into the first piece's. */
typedef struct merge_src {
    gp__reader *src;
    gp_strid *map;     /* string ids */
    uint32_t *tmap;    /* track indexes */
    size_t *track_off; /* per track: where its events go in the destination track */
    size_t off_gpu, off_ext, off_mem, off_py, off_args, off_shapes;
    /* Copy tasks not yet done per source array (the side tables by copy_what, then one per
     * track): the task that brings one to zero frees that array, which keeps the peak low. */
    _Atomic size_t *left;
} merge_src;

typedef enum copy_what {
    COPY_GPU,
    COPY_MEM,
    COPY_PY,
    COPY_ARGS,
    COPY_SHAPES,
    COPY_EVENTS,
    SORT_TRACK, /* no copy: sorts destination track `track`, which gets no copy */
    SORT_HALF   /* no copy: sorts half `lo` of split track `track`, which no copy writes */
} copy_what;

typedef struct copy_task {
    const merge_src *m; /* NULL for SORT_TRACK */
    copy_what what;
    uint32_t track; /* COPY_EVENTS: the source track; SORT_TRACK: the destination track */
    size_t lo, hi;
    size_t order; /* the run order's key (order_tasks) */
} copy_task;

/* A large destination track is sorted in two halves, [0, mid) and [mid, n), each by the task
 * that finishes its last copy (or by a SORT_HALF task when no copy writes it), then merged by
 * the one of those two that finishes last: the two sorts run side by side, and only the merge,
 * which is one comparison where the halves do not overlap in time (a replicated or concatenated
 * trace), waits for both. The largest track of the H100 trace x10 holds 90 % of its events: its
 * sort alone was 9 ms of one thread, the other idle. mid is a boundary between copies, so that
 * each copy writes one half. */
typedef struct split_track {
    size_t mid;              /* 0: not split */
    _Atomic size_t left[2];  /* per half: copies not done yet */
    _Atomic unsigned halves; /* halves not sorted yet */
} split_track;

typedef struct copy_job {
    gp_trace *dst;
    gp_ns shift; /* added to every event's time by the task that sorts its track (0: none) */
    copy_task *tasks;
    size_t n, cap;
    /* Per destination track: copy tasks not yet done; the task that brings one to zero sorts the
     * track (when it is not split). */
    _Atomic size_t *track_left;
    split_track *split; /* per destination track */
} copy_job;

static void copy_events(gp_trace *d, const merge_src *m, uint32_t k, size_t lo, size_t hi)
{
    const gp_track *st = &m->src->t->tracks[k];
    uint32_t di = m->tmap[k];
    gp_event *out = d->tracks[di].events + m->track_off[k];
    for (size_t j = lo; j < hi; j++) {
        gp_event e = st->events[j];
        e.name = m->map[e.name];
        e.track = di;
        switch ((gp_event_kind)e.kind) {
        case GP_EV_KERNEL:
        case GP_EV_MEMCPY:
        case GP_EV_MEMSET:
        case GP_EV_SYNC:
        case GP_EV_GPU_USER_ANNOTATION:
            e.extra += e.extra ? (uint32_t)m->off_gpu : 0;
            break;
        case GP_EV_MEMORY:
            e.extra += e.extra ? (uint32_t)m->off_mem : 0;
            break;
        case GP_EV_PYTHON:
            e.extra += e.extra ? (uint32_t)m->off_py : 0;
            break;
        case GP_EV_RANGE:
        case GP_EV_INSTANT:
            e.extra += e.extra ? (uint32_t)m->off_args : 0;
            break;
        case GP_EV_OTHER:
            e.extra = m->map[e.extra];
            break;
        default:
            break;
        }
        out[j] = e;
    }
}

/* Frees *data and empties the array (*n = *cap = 0). */
static void drop_array(void **data, size_t *n, size_t *cap)
{
    free(*data);
    *data = NULL;
    *n = *cap = 0;
}

/* Frees the source array of a copy task's kind, once its last task is done. */
static void drop_source(gp_trace *src, copy_what what, uint32_t track)
{
    gp__trace_impl *s = gp__trace_impl_of(src);
    switch (what) {
    case COPY_EVENTS:
        gp__trace_drop_events(src, track);
        break;
    case COPY_GPU:
        drop_array((void **)&src->gpu_info, &src->n_gpu_info, &s->cap_gpu_info);
        break;
    case COPY_MEM:
        drop_array((void **)&src->mem_info, &src->n_mem_info, &s->cap_mem_info);
        break;
    case COPY_PY:
        drop_array((void **)&src->py_info, &src->n_py_info, &s->cap_py_info);
        break;
    case COPY_ARGS:
        drop_array((void **)&src->args, &src->n_args, &s->cap_args);
        break;
    case COPY_SHAPES:
        drop_array((void **)&src->op_shapes, &src->n_op_shapes, &s->cap_op_shapes);
        break;
    case SORT_TRACK:
    case SORT_HALF:
        break;
    }
}

/* Maps the pages wholly inside [p, p + n) that are not mapped yet, as the copy about to write them
 * would fault them in, one by one: madvise(MADV_POPULATE_WRITE) maps them in one call, which
 * costs less than a fault per page (the copies into the destination's fresh arrays spent most of
 * their time in page faults; docs/internals/io.md). Best effort: where it fails or is unknown
 * (Linux before 5.14), the copy faults them in as before. */
static void populate(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), a = ((uintptr_t)p + page - 1) & ~(page - 1),
              e = ((uintptr_t)p + n) & ~(page - 1);
    if (e > a)
        (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)n;
#endif
}

/* Adds the base time to events [lo, hi) of track k (relative times made absolute here, beside the
 * other tracks' sorts: alone in gp__reader_finish it was 2-3 ms of one thread on the H100 trace
 * x10). */
static void shift_events(const copy_job *job, uint32_t k, size_t lo, size_t hi)
{
    gp_event *ev = job->dst->tracks[k].events;
    for (size_t j = lo; job->shift && j < hi; j++)
        ev[j].ts += job->shift;
}

static void sort_track(copy_job *job, uint32_t k)
{
    gp_track *tr = &job->dst->tracks[k];
    shift_events(job, k, 0, tr->n_events);
    gp__sort_events(tr->events, tr->n_events);
}

/* Sorts half h of split track k; the second half sorted merges the two. */
static void sort_half(copy_job *job, uint32_t k, int h)
{
    gp_track *tr = &job->dst->tracks[k];
    split_track *sp = &job->split[k];
    size_t lo = h ? sp->mid : 0, hi = h ? tr->n_events : sp->mid;
    shift_events(job, k, lo, hi);
    gp__sort_events(tr->events + lo, hi - lo);
    if (atomic_fetch_sub(&sp->halves, 1) == 1)
        gp__merge_sorted_events(tr->events, sp->mid, tr->n_events);
}

static void run_copy_task(void *ctx, size_t i)
{
    copy_job *job = ctx;
    const copy_task *c = &job->tasks[i];
    gp_trace *d = job->dst;
    if (c->what == SORT_TRACK) {
        sort_track(job, c->track);
        return;
    }
    if (c->what == SORT_HALF) {
        sort_half(job, c->track, (int)c->lo);
        return;
    }
    const merge_src *m = c->m;
    const gp_trace *t = m->src->t;
    size_t n = c->hi - c->lo;
    switch (c->what) {
    case COPY_EVENTS:
        populate(d->tracks[m->tmap[c->track]].events + m->track_off[c->track] + c->lo,
                 n * sizeof(gp_event));
        copy_events(d, m, c->track, c->lo, c->hi);
        break;
    case COPY_GPU:
        populate(d->gpu_info + m->off_gpu + c->lo, n * sizeof *d->gpu_info);
        for (size_t j = c->lo; j < c->hi; j++) { /* one pass: each record mapped as it is copied */
            gp_gpu_info g = t->gpu_info[j];
            g.copy_kind = m->map[g.copy_kind];
            g.ext += g.ext ? (uint32_t)m->off_ext : 0;
            d->gpu_info[m->off_gpu + j] = g;
        }
        break;
    case COPY_MEM:
        populate(d->mem_info + m->off_mem + c->lo, n * sizeof *d->mem_info);
        memcpy(d->mem_info + m->off_mem + c->lo, t->mem_info + c->lo, n * sizeof *d->mem_info);
        break;
    case COPY_PY:
        memcpy(d->py_info + m->off_py + c->lo, t->py_info + c->lo, n * sizeof *d->py_info);
        break;
    case COPY_ARGS:
        for (size_t j = c->lo; j < c->hi; j++)
            d->args[m->off_args + j] = m->map[t->args[j]];
        break;
    case COPY_SHAPES:
        for (size_t j = c->lo; j < c->hi; j++) {
            gp_op_shapes o = t->op_shapes[j];
            o.dims = m->map[o.dims];
            o.types = m->map[o.types];
            o.strides = m->map[o.strides];
            o.concrete = m->map[o.concrete];
            d->op_shapes[m->off_shapes + j] = o;
        }
        break;
    case SORT_TRACK:
    case SORT_HALF:
        break;
    }
    /* The last task over a source array frees it (no other task reads it any more). */
    size_t slot = c->what == COPY_EVENTS ? COPY_EVENTS + c->track : c->what;
    if (atomic_fetch_sub(&m->left[slot], 1) == 1)
        drop_source(m->src->t, c->what, c->track);
    /* The last copy into a destination track sorts it (every copy into it is done), or, for a
     * split track, the last copy into one of its halves sorts that half. */
    if (c->what == COPY_EVENTS) {
        uint32_t k = m->tmap[c->track];
        split_track *sp = &job->split[k];
        if (sp->mid) {
            int h = m->track_off[c->track] + c->lo >= sp->mid;
            if (atomic_fetch_sub(&sp->left[h], 1) == 1)
                sort_half(job, k, h);
        } else if (atomic_fetch_sub(&job->track_left[k], 1) == 1) {
            sort_track(job, k);
        }
    }
}

/* Queues copy tasks of at most COPY_CHUNK elements for [0, n). Longjmps (dst) when out of memory.
 */
static void add_copy_tasks(gp__reader *dst, copy_job *job, const merge_src *m, copy_what what,
                           uint32_t track, size_t n)
{
    size_t slot = what == COPY_EVENTS ? COPY_EVENTS + track : what;
    for (size_t lo = 0; lo < n; lo += COPY_CHUNK) {
        copy_task *c = GP_PUSH(job->tasks, job->n, job->cap);
        if (!c)
            gp__reader_oom(dst);
        *c = (copy_task){m, what, track, lo, GP_MIN(n, lo + COPY_CHUNK), 0};
        atomic_fetch_add(&m->left[slot], 1);
    }
}

/* Allocates m's maps and interns every string of the source into dst: m->map. */
static void merge_strings(gp__reader *dst, merge_src *m)
{
    const gp_trace *t = m->src->t;
    size_t n_str = gp_trace_str_count(t) + 1;
    m->map = malloc(n_str * sizeof *m->map);
    m->tmap = malloc((t->n_tracks + 1) * sizeof *m->tmap);
    m->track_off = malloc((t->n_tracks + 1) * sizeof *m->track_off);
    m->left = calloc(COPY_EVENTS + t->n_tracks, sizeof *m->left);
    if (!m->map || !m->tmap || !m->track_off || !m->left)
        gp__reader_oom(dst);
    for (size_t i = 0; i < n_str; i++)
        m->map[i] =
            gp__reader_intern(dst, gp_trace_str(t, (gp_strid)i), gp_trace_strlen(t, (gp_strid)i));
}

/* Appends the source's gpu_ext records to dst's, their strings mapped, here on the merging thread
 * (one per sync row and per collective kernel with args: few), then frees the source's. The copied
 * gpu_info records add m->off_ext. A reader stores at most one record per gpu_info, so the gpu_info
 * limit checked by the caller bounds these too. */
static void merge_gpu_ext(gp__reader *dst, merge_src *m)
{
    gp_trace *d = dst->t, *src = m->src->t;
    m->off_ext = d->n_gpu_ext;
    if (gp__grow((void **)&d->gpu_ext, &gp__trace_impl_of(d)->cap_gpu_ext, sizeof *d->gpu_ext,
                 m->off_ext + src->n_gpu_ext) != GP_OK)
        gp__reader_oom(dst);
    for (size_t j = 0; j < src->n_gpu_ext; j++) {
        gp_gpu_ext x = src->gpu_ext[j];
        gp_strid *ids[] = {&x.sync_kind, &x.collective, &x.dtype,
                           &x.pg_name,   &x.pg_desc,    &x.pg_ranks};
        for (size_t k = 0; k < GP_ARRAY_LEN(ids); k++)
            *ids[k] = m->map[*ids[k]];
        d->gpu_ext[d->n_gpu_ext++] = x;
    }
    drop_array((void **)&src->gpu_ext, &src->n_gpu_ext, &gp__trace_impl_of(src)->cap_gpu_ext);
}

/* Reserves room for the source's side records (gpu, mem, py, args, op shapes) after dst's, and
 * queues their copies. */
static void merge_side_tables(gp__reader *dst, merge_src *m, copy_job *job)
{
    gp_trace *d = dst->t;
    const gp_trace *t = m->src->t;
    m->off_gpu = d->n_gpu_info;
    m->off_mem = d->n_mem_info;
    m->off_py = d->n_py_info;
    m->off_args = d->n_args;
    m->off_shapes = d->n_op_shapes;
    /* Event `extra` fields are uint32 indexes into these tables (see gp_trace_add_gpu_info). */
    if (m->off_gpu + t->n_gpu_info >= UINT32_MAX - 1 ||
        m->off_mem + t->n_mem_info >= UINT32_MAX - 1 ||
        m->off_py + t->n_py_info >= UINT32_MAX - 1 || m->off_args + t->n_args >= UINT32_MAX - 1) {
        gp_error_set(dst->err, GP_ELIMIT, "%s: more than 2^32 side records", dst->name);
        longjmp(dst->jb, JMP_ERROR);
    }
    gp__trace_impl *dm = gp__trace_impl_of(d);
    if (gp__grow((void **)&d->gpu_info, &dm->cap_gpu_info, sizeof *d->gpu_info,
                 m->off_gpu + t->n_gpu_info) != GP_OK ||
        gp__grow((void **)&d->mem_info, &dm->cap_mem_info, sizeof *d->mem_info,
                 m->off_mem + t->n_mem_info) != GP_OK ||
        gp__grow((void **)&d->py_info, &dm->cap_py_info, sizeof *d->py_info,
                 m->off_py + t->n_py_info) != GP_OK ||
        gp__grow((void **)&d->args, &dm->cap_args, sizeof *d->args, m->off_args + t->n_args) !=
            GP_OK ||
        gp__grow((void **)&d->op_shapes, &dm->cap_op_shapes, sizeof *d->op_shapes,
                 m->off_shapes + t->n_op_shapes) != GP_OK)
        gp__reader_oom(dst);
    d->n_gpu_info += t->n_gpu_info;
    merge_gpu_ext(dst, m);
    d->n_mem_info += t->n_mem_info;
    d->n_py_info += t->n_py_info;
    d->n_args += t->n_args;
    d->n_op_shapes += t->n_op_shapes;
    add_copy_tasks(dst, job, m, COPY_GPU, 0, t->n_gpu_info);
    add_copy_tasks(dst, job, m, COPY_MEM, 0, t->n_mem_info);
    add_copy_tasks(dst, job, m, COPY_PY, 0, t->n_py_info);
    add_copy_tasks(dst, job, m, COPY_ARGS, 0, t->n_args);
    add_copy_tasks(dst, job, m, COPY_SHAPES, 0, t->n_op_shapes);
}

/* Maps each source track to dst's (found or created in order: m->tmap), reserves room for its
 * events after the destination track's, and queues their copies. */
static void merge_tracks(gp__reader *dst, merge_src *m, copy_job *job)
{
    gp_trace *d = dst->t;
    const gp_trace *t = m->src->t;
    for (size_t k = 0; k < t->n_tracks; k++) {
        const gp_track *st = &t->tracks[k];
        uint32_t di;
        if (st->kind == GP_TRACK_CPU_THREAD || st->kind == GP_TRACK_OTHER)
            di = gp__kineto_track_for_ids(dst, st->pid_is_str, m->map[st->pid_str], st->pid,
                                          st->tid_is_str, m->map[st->tid_str], st->tid);
        else
            di = gp__kineto_get_track(dst, st->kind, st->pid, st->tid);
        m->tmap[k] = di;
        gp_track *dt = &d->tracks[di];
        if (gp__trace_reserve_events(d, di, dt->n_events + st->n_events) != GP_OK)
            gp__reader_oom(dst);
        m->track_off[k] = dt->n_events;
        dt->n_events += st->n_events;
        add_copy_tasks(dst, job, m, COPY_EVENTS, (uint32_t)k, st->n_events);
    }
}

/* Counter samples, flow points and pending track metadata, appended now with ids mapped. */
static void merge_small_parts(gp__reader *dst, const merge_src *m)
{
    gp_trace *d = dst->t;
    const gp_trace *t = m->src->t;
    for (size_t i = 0; i < t->n_counters; i++) {
        gp_counter_sample c = t->counters[i];
        c.series = m->map[c.series];
        c.track = m->tmap[c.track];
        if (gp_trace_add_counter(d, &c) != GP_OK)
            gp__reader_oom(dst);
    }
    gp__trace_priv *sp = gp__trace_build(m->src->t), *dp = gp__trace_build(d);
    for (size_t i = 0; i < sp->n_flow_points; i++) {
        gp__flow_point f = sp->flow_points[i];
        f.cat = m->map[f.cat];
        f.name = m->map[f.name];
        f.pid_str = m->map[f.pid_str];
        f.tid_str = m->map[f.tid_str];
        gp__flow_point *fp = GP_PUSH(dp->flow_points, dp->n_flow_points, dp->cap_flow_points);
        if (!fp)
            gp__reader_oom(dst);
        *fp = f;
    }
    const gp__reader *src = m->src;
    for (size_t i = 0; i < src->n_meta; i++) {
        gp__reader_pending_meta pm = src->meta[i];
        pm.value = m->map[pm.value];
        gp__reader_pending_meta *q = GP_PUSH(dst->meta, dst->n_meta, dst->cap_meta);
        if (!q)
            gp__reader_oom(dst);
        *q = pm;
    }
}

/* Top-level members after the events (older files put some after traceEvents): what dst has not
 * got yet. */
static void merge_top_level(gp__reader *dst, const merge_src *m)
{
    gp_trace *d = dst->t;
    const gp_trace *t = m->src->t;
    if (!d->n_devices)
        for (size_t i = 0; i < t->n_devices; i++) {
            gp_device_props dv = t->devices[i];
            dv.name = m->map[dv.name];
            if (gp_trace_add_device(d, &dv) != GP_OK)
                gp__reader_oom(dst);
        }
    if (!d->dist.present && t->dist.present) {
        d->dist = t->dist;
        d->dist.backend = m->map[t->dist.backend];
        d->dist.nccl_version = m->map[t->dist.nccl_version];
    }
    if (!d->base_time_ns)
        d->base_time_ns = t->base_time_ns;
    if (d->schema_version < 0)
        d->schema_version = t->schema_version;
    if (!d->display_time_unit)
        d->display_time_unit = m->map[t->display_time_unit];
    for (size_t i = 0; i < t->n_meta; i++)
        if (gp_trace_set_meta(d, gp_trace_str(t, t->meta[i].key),
                              gp_trace_str(t, t->meta[i].value_json)) != GP_OK)
            gp__reader_oom(dst);
}

/* Adds src's counts to dst's; the bytes read are the source's, which read up to the end. */
static void merge_stats(gp_read_stats *ds, const gp__reader *src)
{
    const gp_read_stats *ss = &src->t->stats;
    ds->events_in += ss->events_in;
    for (int k = 0; k < GP_EV_KIND_COUNT; k++)
        ds->by_kind[k] += ss->by_kind[k];
    ds->metadata_events += ss->metadata_events;
    ds->flow_points += ss->flow_points;
    ds->negative_dur += ss->negative_dur;
    ds->absurd_dur += ss->absurd_dur;
    ds->no_dur += ss->no_dur;
    ds->unknown_cat += ss->unknown_cat;
    ds->skipped += ss->skipped;
    ds->quoted_times += ss->quoted_times;
    ds->bytes = src->buf_off + src->len;
}

/* Appends src's records to dst's tables, reserving room for the copies (queued in job, run later
 * in parallel) and merging the small parts (counters, flows, metadata, top-level members) now.
 * src parsed the input after everything dst holds. Longjmps (dst's jb) when out of memory. */
static void merge_prepare(gp__reader *dst, merge_src *m, copy_job *job)
{
    merge_strings(dst, m);
    merge_side_tables(dst, m, job);
    merge_tracks(dst, m, job);
    merge_small_parts(dst, m);
    merge_top_level(dst, m);
    merge_stats(&dst->t->stats, m->src);
    if (m->src->have_times) /* src parsed later input: on a tie, dst's element came first */
        gp__reader_widen_times(dst, &m->src->time_lo, &m->src->time_hi);
}

static void merge_src_free(merge_src *m)
{
    free(m->map);
    free(m->tmap);
    free(m->track_off);
    free((void *)m->left);
}

/* Orders tasks: first the event copies and sorts, by the size of their destination track, largest
 * first (a track's sort waits for its last copy, and the largest sort is the longest task), then
 * the side tables' copies, which fill the other threads meanwhile. */
#define CMP_TASK_ORDER(x, y) GP_CMP((x)->order, (y)->order)
GP__DEFINE_MERGE_SORT(sort_tasks, copy_task, CMP_TASK_ORDER)

/* Where copy task c writes in its destination track: [*start, *end). */
static void copy_range(const copy_task *c, size_t *start, size_t *end)
{
    *start = c->m->track_off[c->track] + c->lo;
    *end = c->m->track_off[c->track] + c->hi;
}

/* Splits the destination tracks of gp__merge_split_min events or more that get copies
 * (split_track): mid is the boundary nearest the middle among the ends of the copies and the end of
 * the destination's own events (no copy then straddles it); the copies per half are counted, and a
 * half no copy writes (the destination's own events) gets a SORT_HALF task. Longjmps (dst) when out
 * of memory.
 */
static void plan_splits(gp__reader *dst, copy_job *job)
{
    gp_trace *d = dst->t;
    size_t n_tasks = job->n;
    for (size_t i = 0; i < n_tasks; i++) {
        const copy_task *c = &job->tasks[i];
        if (c->what != COPY_EVENTS)
            continue;
        uint32_t k = c->m->tmap[c->track];
        size_t n = d->tracks[k].n_events, start, end;
        if (n < gp__merge_split_min || n < 2)
            continue;
        copy_range(c, &start, &end);
        split_track *sp = &job->split[k];
        /* the destination's own events end where the first copy into the track starts */
        size_t cand[2] = {start, end};
        for (int x = 0; x < 2; x++) {
            size_t b = cand[x];
            if (b == 0 || b >= n)
                continue;
            size_t db = b > n / 2 ? b - n / 2 : n / 2 - b,
                   dm = sp->mid > n / 2 ? sp->mid - n / 2 : n / 2 - sp->mid;
            if (!sp->mid || db < dm || (db == dm && b < sp->mid))
                sp->mid = b;
        }
    }
    for (size_t i = 0; i < n_tasks; i++) {
        const copy_task *c = &job->tasks[i];
        if (c->what != COPY_EVENTS || !job->split[c->m->tmap[c->track]].mid)
            continue;
        size_t start, end;
        copy_range(c, &start, &end);
        split_track *sp = &job->split[c->m->tmap[c->track]];
        atomic_fetch_add(&sp->left[start >= sp->mid], 1);
    }
    for (size_t k = 0; k < d->n_tracks; k++) {
        split_track *sp = &job->split[k];
        if (!sp->mid)
            continue;
        atomic_store(&sp->halves, 2);
        for (int h = 0; h < 2; h++) {
            if (atomic_load(&sp->left[h]))
                continue;
            copy_task *c = GP_PUSH(job->tasks, job->n, job->cap);
            if (!c)
                gp__reader_oom(dst);
            *c = (copy_task){NULL, SORT_HALF, (uint32_t)k, (size_t)h, 0, 0};
        }
    }
}

/* Counts the copies into each destination track (job->track_left), splits the large ones
 * (plan_splits), queues a sort for every track that gets no copy (that has events to shift or to
 * sort), and orders the tasks. Longjmps (dst) when out of memory. */
static void plan_sorts(gp__reader *dst, copy_job *job)
{
    gp_trace *d = dst->t;
    job->track_left = calloc(d->n_tracks + 1, sizeof *job->track_left);
    job->split = calloc(d->n_tracks + 1, sizeof *job->split);
    if (!job->track_left || !job->split)
        gp__reader_oom(dst);
    for (size_t i = 0; i < job->n; i++)
        if (job->tasks[i].what == COPY_EVENTS)
            atomic_fetch_add(&job->track_left[job->tasks[i].m->tmap[job->tasks[i].track]], 1);
    plan_splits(dst, job);
    for (size_t k = 0; k < d->n_tracks; k++) {
        if (atomic_load(&job->track_left[k]) || d->tracks[k].n_events < (job->shift ? 1u : 2u))
            continue;
        copy_task *c = GP_PUSH(job->tasks, job->n, job->cap);
        if (!c)
            gp__reader_oom(dst);
        *c = (copy_task){NULL, SORT_TRACK, (uint32_t)k, 0, 0, 0};
    }
    for (size_t i = 0; i < job->n; i++) {
        copy_task *c = &job->tasks[i];
        uint32_t k = c->what == SORT_TRACK || c->what == SORT_HALF ? c->track
                     : c->what == COPY_EVENTS                      ? c->m->tmap[c->track]
                                                                   : UINT32_MAX;
        c->order = k == UINT32_MAX ? SIZE_MAX : SIZE_MAX - 1 - d->tracks[k].n_events;
    }
    if (!sort_tasks(job->tasks, job->n))
        gp__reader_oom(dst);
}

/* Prepares every source (m[1..n)), then runs the copies and sorts. Longjmps (chain[0]'s jb) when
 * out of memory or past a limit. */
static gp_status merge_all(gp__reader **chain, size_t n, merge_src *m, copy_job *job, int threads)
{
    for (size_t i = 1; i < n; i++) {
        m[i].src = chain[i];
        merge_prepare(chain[0], &m[i], job);
    }
    /* the base time and the times' extremes are the whole input's now: the tasks shift the
     * events when no time leaves the range (else gp__reader_finish reports it, nothing shifted) */
    const gp__reader *d = chain[0];
    gp_ns base = d->t->base_time_ns, out;
    if (base && (!d->have_times ||
                 (shifted(d->time_lo.ts, base, &out) && shifted(d->time_hi.ts, base, &out))))
        job->shift = base;
    plan_sorts(chain[0], job);
    gp__par_for(job->n, threads, run_copy_task, job);
    return GP_OK;
}

gp_status gp__merge_readers(gp__reader **chain, size_t n, int threads)
{
    gp__reader *dst = chain[0];
    merge_src m[GP__READ_MAX_PIECES];
    copy_job job = {dst->t, 0, NULL, 0, 0, NULL, NULL};
    memset(m, 0, sizeof m);
    gp_status st;
    if (setjmp(dst->jb) == 0)
        st = merge_all(chain, n, m, &job, threads);
    else
        st = dst->err->status ? dst->err->status : GP_ENOMEM;
    for (size_t i = 1; i < n; i++)
        merge_src_free(&m[i]);
    free(job.tasks);
    free((void *)job.track_left);
    free(job.split);
    dst->tracks_sorted = st == GP_OK;
    dst->events_shifted = st == GP_OK && job.shift != 0;
    return st;
}
