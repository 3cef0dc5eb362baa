/* What the host was doing while the GPU was idle (docs/analyses.md, "Idle causes").
 *
 * Each CPU thread that launched GPU work becomes a timeline of disjoint segments, each holding the
 * cause of its instants (the highest-precedence class among the events open there: sync >
 * comm_wait > launch > data_loading > cpu > unrecorded) and the event naming it (the innermost
 * event of that class). Each idle interval of a stream, and of the union of a device's streams,
 * inside the analysed window is then walked along the timeline of the thread that launched the
 * GPU work ending the interval. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze_internal.h"

const char *gp_idle_cause_name(gp_idle_cause c)
{
    static const char *names[] = {"data_loading", "cpu",       "sync",
                                  "launch",       "comm_wait", "unrecorded"};
    return (unsigned)c < GP_IC_COUNT ? names[c] : "unknown";
}

const char *gp_step_part_name(gp_step_part p)
{
    static const char *names[] = {"kernel",  "memcpy",     "memset",   "communication",
                                  "runtime", "dataloader", "cpu_exec", "other"};
    return (unsigned)p < GP_SP_COUNT ? names[p] : "unknown";
}

/* Classes of host events, by precedence (a higher class wins over the events enclosing it). */
enum { P_NONE, P_ANNOT, P_CPU, P_DL, P_LAUNCH, P_COMM, P_SYNC };
static const uint8_t class_cause[] = {GP_IC_UNRECORDED,   GP_IC_UNRECORDED, GP_IC_CPU,
                                      GP_IC_DATA_LOADING, GP_IC_LAUNCH,     GP_IC_COMM_WAIT,
                                      GP_IC_SYNC};

/* Name flags, computed once per string id. */
enum { F_KNOWN = 1, F_SYNC = 2, F_LAUNCH = 4, F_COMM = 8, F_DL = 16 };

#define NO_THREAD UINT32_MAX

/* Time (or an index) per (cause, name): open addressing on key = (cause << 32 | name) + 1, 0
 * marking an empty slot; one probe sequence per addition. */
typedef struct name_acc {
    uint64_t *key;
    gp_ns *time;
    size_t n, cap; /* cap: a power of two */
} name_acc;

static gp_status acc_grow(name_acc *m)
{
    size_t cap = m->cap ? m->cap * 2 : 256;
    uint64_t *key = calloc(cap, sizeof *key);
    gp_ns *time = calloc(cap, sizeof *time);
    if (!key || !time) {
        free(key);
        free(time);
        return GP_ENOMEM;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->key[i])
            continue;
        size_t j = gp__hash_u64(m->key[i]) & (cap - 1);
        while (key[j])
            j = (j + 1) & (cap - 1);
        key[j] = m->key[i];
        time[j] = m->time[i];
    }
    free(m->key);
    free(m->time);
    m->key = key;
    m->time = time;
    m->cap = cap;
    return GP_OK;
}

/* The slot of (cause, name), added with time 0 (*added true) when new. NULL when out of memory. */
static gp_ns *acc_slot(name_acc *m, int cause, gp_strid name, bool *added)
{
    if ((m->n + 1) * 2 > m->cap && acc_grow(m) != GP_OK)
        return NULL;
    uint64_t k = ((uint64_t)cause << 32 | name) + 1;
    size_t j = gp__hash_u64(k) & (m->cap - 1);
    while (m->key[j] && m->key[j] != k)
        j = (j + 1) & (m->cap - 1);
    *added = !m->key[j];
    if (*added) {
        m->key[j] = k;
        m->n++;
    }
    return &m->time[j];
}

static gp_status acc_add(name_acc *m, int cause, gp_strid name, gp_ns d)
{
    bool added;
    gp_ns *t = acc_slot(m, cause, name, &added);
    if (!t)
        return GP_ENOMEM;
    *t += d;
    return GP_OK;
}

static void acc_free(name_acc *m)
{
    free(m->key);
    free(m->time);
    memset(m, 0, sizeof *m);
}

/* A stretch of a thread's timeline: what the thread was doing over [s, e); pair indexes the
 * thread's distinct (cause, name) pairs. */
typedef struct seg {
    gp_ns s, e;
    uint32_t pair;
    uint8_t cause;
} seg;

/* Whether segment x ends by t; segs_ending_by(v, n, t): the first of v[0, n) ending after t. */
static inline bool seg_ends_by(const seg *x, gp_ns t)
{
    return x->e <= t;
}
GP__DEFINE_LOWER_BOUND(segs_ending_by, seg, gp_ns, seg_ends_by)

/* A thread's timeline, and the time the current row attributed to each of its pairs (summed per
 * pair while walking, folded into the row's names once per row: no hashing per segment). */
typedef struct timeline {
    seg *v;
    size_t n, cap;
    name_acc index;     /* (cause, name) -> pair index */
    uint64_t *pair_key; /* cause << 32 | name */
    gp_ns *pair_time;
    size_t n_pairs, cap_pairs;
    size_t cursor;      /* while touched: segments before it end before the row's next interval */
    gp_strid last_name; /* class and name of the last segment (merging) */
    uint8_t last_cls;
    bool built, touched;
} timeline;

/* The pair index of (cause, name) on tl, added when new; UINT32_MAX when out of memory. */
static uint32_t pair_of(timeline *tl, int cause, gp_strid name)
{
    bool added;
    gp_ns *slot = acc_slot(&tl->index, cause, name, &added);
    if (!slot)
        return UINT32_MAX;
    if (!added)
        return (uint32_t)*slot;
    uint64_t *k = GP_PUSH(tl->pair_key, tl->n_pairs, tl->cap_pairs);
    if (!k)
        return UINT32_MAX;
    *k = (uint64_t)cause << 32 | name;
    *slot = (gp_ns)(tl->n_pairs - 1);
    return (uint32_t)(tl->n_pairs - 1);
}

/* A GPU event of one lane (a stream or a device): its time and the thread that launched it. */
typedef struct work {
    gp_ns s, e;
    uint32_t thread;
} work;

typedef struct ctx {
    const gp__view *v;
    const gp_trace *t;
    uint8_t *flags; /* per string id */
    size_t n_str;
    gp__imap blocking; /* correlation ids of blocking copies and host synchronisations */
    timeline *tl;      /* per track, built on first use */
    uint32_t *touched; /* threads whose pair_time the current row has added to */
    size_t n_touched, cap_touched;
    uint32_t main_thread;
    gp_ns lo, hi; /* the analysed window */
} ctx;

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static uint8_t name_flags(ctx *c, gp_strid id)
{
    if (id < c->n_str && c->flags[id])
        return c->flags[id];
    const char *nm = gp_trace_str(c->t, id);
    uint8_t f = F_KNOWN;
    bool mem = starts(nm, "cudaMem") || starts(nm, "hipMem") || starts(nm, "cuMem");
    bool copy = starts(nm, "cudaMemcpy") || starts(nm, "hipMemcpy") || starts(nm, "cuMemcpy");
    if (strstr(nm, "Synchronize") || (copy && !strstr(nm, "Async")))
        f |= F_SYNC;
    if (strstr(nm, "Launch") || (mem && strstr(nm, "Async")))
        f |= F_LAUNCH;
    if (strcmp(nm, "record_param_comms") == 0 || starts(nm, "nccl:") ||
        (strstr(nm, "c10d") && strstr(nm, "wait")) ||
        (starts(nm, "ProcessGroup") && (strstr(nm, "wait") || strstr(nm, "Wait"))))
        f |= F_COMM;
    if (gp__is_data_load(nm, c->v->o->data_load, c->v->o->n_data_load))
        f |= F_DL;
    if (id < c->n_str)
        c->flags[id] = f;
    return f;
}

static int event_class(ctx *c, const gp_event *e)
{
    uint64_t unused;
    switch ((gp_event_kind)e->kind) {
    case GP_EV_RUNTIME:
    case GP_EV_DRIVER: {
        uint8_t f = name_flags(c, e->name);
        if ((f & F_SYNC) ||
            (e->correlation != 0 && gp__imap_get(&c->blocking, e->correlation, &unused)))
            return P_SYNC;
        return (f & F_LAUNCH) ? P_LAUNCH : P_CPU;
    }
    case GP_EV_CPU_OP:
    case GP_EV_PYTHON:
    case GP_EV_USER_ANNOTATION: {
        uint8_t f = name_flags(c, e->name);
        if (f & F_COMM)
            return P_COMM;
        if (f & F_DL)
            return P_DL;
        return e->kind == GP_EV_USER_ANNOTATION ? P_ANNOT : P_CPU;
    }
    case GP_EV_RANGE:
        return P_ANNOT;
    default:
        return P_NONE;
    }
}

/* The correlation ids whose host call blocks: copies to pageable host memory ("-> Pageable") and
 * cuda_sync events other than stream waits (which do not block the host). */
static gp_status find_blocking(ctx *c)
{
    const gp_trace *t = c->t;
    gp_status st = gp__imap_init(&c->blocking, 16);
    for (size_t k = 0; k < t->n_tracks && st == GP_OK; k++) {
        const gp_track *tr = &t->tracks[k];
        if (tr->kind != GP_TRACK_GPU_STREAM)
            continue;
        for (size_t i = 0; i < tr->n_events && st == GP_OK; i++) {
            const gp_event *e = &tr->events[i];
            if (e->correlation == 0)
                continue;
            const char *nm = gp_trace_str(t, e->name);
            if ((e->kind == GP_EV_MEMCPY && strstr(nm, "-> Pageable")) ||
                (e->kind == GP_EV_SYNC && !strstr(nm, "Wait")))
                st = gp__imap_put(&c->blocking, e->correlation, 1);
        }
    }
    return st;
}

/* Appends [s, e) of class cls named name, merged with the previous segment when they match. */
static gp_status emit(timeline *tl, gp_ns s, gp_ns e, int cls, gp_strid name)
{
    if (e <= s || cls == P_NONE)
        return GP_OK;
    seg *last = tl->n ? &tl->v[tl->n - 1] : NULL;
    if (last && last->e == s && tl->last_cls == cls && tl->last_name == name) {
        last->e = e;
        return GP_OK;
    }
    uint32_t pair = pair_of(tl, class_cause[cls], name);
    seg *x = pair != UINT32_MAX ? GP_PUSH(tl->v, tl->n, tl->cap) : NULL;
    if (!x)
        return GP_ENOMEM;
    *x = (seg){s, e, pair, class_cause[cls]};
    tl->last_cls = (uint8_t)cls;
    tl->last_name = name;
    return GP_OK;
}

/* An open event on the thread's stack and the state of its innermost instants. */
typedef struct frame {
    gp_ns end;
    gp_strid name;
    uint8_t cls;
} frame;

/* Builds the timeline of a CPU track: events nest by start (as gp_track_self_times has them); an
 * event's state is its own class and name when its class is at least its parent's, else the
 * parent's state. Between two boundaries the state is the top of the stack's. */
static gp_status build_timeline(ctx *c, uint32_t track)
{
    timeline *tl = &c->tl[track];
    tl->built = true;
    const gp_track *tr = &c->t->tracks[track];
    frame *stack = NULL;
    size_t depth = 0, cap = 0;
    gp_ns cur = INT64_MIN;
    /* pair 0: nothing recorded (the gaps between segments) */
    gp_status st = pair_of(tl, GP_IC_UNRECORDED, 0) == 0 ? GP_OK : GP_ENOMEM;
    for (size_t i = 0; i <= tr->n_events && st == GP_OK; i++) {
        const gp_event *e = i < tr->n_events ? &tr->events[i] : NULL;
        int cls = e && e->dur > 0 ? event_class(c, e) : P_NONE;
        if (e && cls == P_NONE)
            continue;
        gp_ns at = e ? e->ts : INT64_MAX;
        while (depth > 0 && stack[depth - 1].end <= at && st == GP_OK) {
            frame *f = &stack[--depth];
            if (f->end > cur) {
                st = emit(tl, cur, f->end, f->cls, f->name);
                cur = f->end;
            }
        }
        if (!e || st != GP_OK)
            break;
        if (depth > 0 && at > cur)
            st = emit(tl, cur, at, stack[depth - 1].cls, stack[depth - 1].name);
        cur = GP_MAX(cur, at);
        frame *f = GP_PUSH(stack, depth, cap);
        if (!f) {
            st = GP_ENOMEM;
            break;
        }
        *f = (frame){e->ts + e->dur, e->name, (uint8_t)cls};
        if (depth > 1 && stack[depth - 2].cls > cls) {
            f->cls = stack[depth - 2].cls;
            f->name = stack[depth - 2].name;
        }
    }
    free(stack);
    if (st == GP_OK && !(tl->pair_time = calloc(tl->n_pairs, sizeof *tl->pair_time)))
        st = GP_ENOMEM;
    acc_free(&tl->index);
    return st;
}

/* One row being filled: the totals per cause and the time per (cause, name). */
typedef struct row_acc {
    gp_idle_causes *row;
    name_acc names;
} row_acc;

static gp_status add(row_acc *a, int cause, gp_strid name, gp_ns d)
{
    a->row->by_cause[cause] += d;
    return acc_add(&a->names, cause, name, d);
}

/* Adds d of pair (of cause) on thread tl to the row. */
static gp_status add_pair(ctx *c, row_acc *a, uint32_t thread, uint32_t pair, int cause, gp_ns d)
{
    timeline *tl = &c->tl[thread];
    a->row->by_cause[cause] += d;
    tl->pair_time[pair] += d;
    if (!tl->touched) {
        uint32_t *x = GP_PUSH(c->touched, c->n_touched, c->cap_touched);
        if (!x)
            return GP_ENOMEM;
        *x = thread;
        tl->touched = true;
    }
    return GP_OK;
}

/* Attributes the idle interval [s, e) to what thread was doing then. */
static gp_status attribute(ctx *c, row_acc *a, gp_ns s, gp_ns e, uint32_t thread)
{
    a->row->idle += e - s;
    if (thread == NO_THREAD)
        return add(a, GP_IC_UNRECORDED, 0, e - s);
    timeline *tl = &c->tl[thread];
    gp_status st = tl->built ? GP_OK : build_timeline(c, thread);
    if (st != GP_OK)
        return st;
    /* The first segment ending after s: a row's intervals come in time order, so search forward
     * from where the row's previous interval on this thread started, doubling the step. */
    size_t lo = tl->touched ? tl->cursor : 0, step = 1;
    while (lo + step <= tl->n && tl->v[lo + step - 1].e <= s) {
        lo += step;
        step *= 2;
    }
    lo += segs_ending_by(tl->v + lo, GP_MIN(lo + step, tl->n) - lo, s);
    tl->cursor = lo;
    gp_ns t = s;
    for (size_t i = lo; i < tl->n && t < e && st == GP_OK; i++) {
        const seg *x = &tl->v[i];
        if (x->s > t)
            st = add_pair(c, a, thread, 0, GP_IC_UNRECORDED, GP_MIN(x->s, e) - t);
        t = GP_MAX(t, x->s);
        if (t < e && st == GP_OK)
            st = add_pair(c, a, thread, x->pair, x->cause, GP_MIN(x->e, e) - t);
        t = GP_MAX(t, GP_MIN(x->e, e));
    }
    if (t < e && st == GP_OK)
        st = add_pair(c, a, thread, 0, GP_IC_UNRECORDED, e - t);
    return st;
}

/* The thread that launched w, else fallback, else the rank's main launching thread. */
static uint32_t thread_of(const ctx *c, const work *w, uint32_t fallback)
{
    if (w && w->thread != NO_THREAD)
        return w->thread;
    return fallback != NO_THREAD ? fallback : c->main_thread;
}

/* The idle intervals of a lane (its GPU work sorted by start) inside the window, each attributed
 * to the thread that launched the work ending it (the last launching thread for the interval
 * after the last work). */
static gp_status sweep(ctx *c, row_acc *a, const work *w, size_t n)
{
    gp_ns cover = c->lo;
    uint32_t prev = NO_THREAD;
    gp_status st = GP_OK;
    for (size_t i = 0; i < n && cover < c->hi && st == GP_OK; i++) {
        if (w[i].s > cover)
            st = attribute(c, a, cover, GP_MIN(w[i].s, c->hi), thread_of(c, &w[i], prev));
        cover = GP_MAX(cover, w[i].e);
        if (w[i].thread != NO_THREAD)
            prev = w[i].thread;
    }
    if (cover < c->hi && st == GP_OK)
        st = attribute(c, a, cover, c->hi, thread_of(c, NULL, prev));
    return st;
}

/* Folds the touched threads' pair times into the row's names (and clears them), then fills share
 * and the top name of each cause. */
static gp_status finish_row(ctx *c, row_acc *a)
{
    gp_idle_causes *r = a->row;
    for (size_t i = 0; i < c->n_touched; i++) {
        timeline *tl = &c->tl[c->touched[i]];
        for (size_t p = 0; p < tl->n_pairs; p++) {
            if (tl->pair_time[p] == 0)
                continue;
            gp_status st = acc_add(&a->names, (int)(tl->pair_key[p] >> 32),
                                   (gp_strid)(tl->pair_key[p] & 0xffffffff), tl->pair_time[p]);
            if (st != GP_OK)
                return st;
            tl->pair_time[p] = 0;
        }
        tl->touched = false;
    }
    c->n_touched = 0;
    for (int k = 0; k < GP_IC_COUNT; k++) {
        r->share[k] = r->idle > 0 ? (double)r->by_cause[k] / (double)r->idle : NAN;
        r->top_what[k] = "";
    }
    gp_strid best[GP_IC_COUNT] = {0};
    for (size_t i = 0; i < a->names.cap; i++) {
        if (!a->names.key[i])
            continue;
        uint64_t key = a->names.key[i] - 1;
        int cause = (int)(key >> 32);
        gp_strid name = (gp_strid)(key & 0xffffffff);
        gp_ns time = a->names.time[i];
        if (time > r->top_time[cause] ||
            (time == r->top_time[cause] &&
             strcmp(gp_trace_str(c->t, name), gp_trace_str(c->t, best[cause])) < 0)) {
            r->top_time[cause] = time;
            best[cause] = name;
        }
    }
    for (int k = 0; k < GP_IC_COUNT; k++)
        r->top_what[k] = gp_trace_str(c->t, best[k]);
    return GP_OK;
}

static gp_status fill_row(ctx *c, gp_idle_causes *row, const work *w, size_t n)
{
    row_acc a = {.row = row};
    gp_status st = sweep(c, &a, w, n);
    if (st == GP_OK)
        st = finish_row(c, &a);
    acc_free(&a.names);
    return st;
}

static int cmp_work(const void *x, const void *y)
{
    const work *p = x, *q = y;
    return GP_CMP(p->s, q->s);
}

/* The CPU thread holding the most runtime/driver calls (the launching thread when the work ending
 * an interval has no launch), NO_THREAD when there is none. */
static uint32_t main_thread(const gp__view *v)
{
    uint32_t best = NO_THREAD;
    size_t best_n = 0, run = 0;
    for (size_t i = 0; i < v->n_rt; i++) { /* rt is track by track */
        run = i > 0 && v->rt[i]->track == v->rt[i - 1]->track ? run + 1 : 1;
        if (run > best_n) {
            best_n = run;
            best = v->rt[i]->track;
        }
    }
    return best;
}

/* A lane: the GPU work of one stream, or of a whole device (whole). */
typedef struct lane {
    int32_t device;
    int64_t stream;
    bool whole;
    work *w;
    size_t n, cap;
} lane;

static int cmp_lane(const void *x, const void *y)
{
    const lane *p = x, *q = y;
    if (p->device != q->device)
        return GP_CMP(p->device, q->device);
    if (p->whole != q->whole)
        return p->whole ? -1 : 1;
    return GP_CMP(p->stream, q->stream);
}

/* The lane of (device, stream), or of the whole device, added when new. index maps (device,
 * stream, whole) to the lane's place in lanes (lanes are added in its order), found by hash: a
 * scan of the lanes was quadratic in streams (issue 38). */
static lane *find_lane(lane **lanes, size_t *n, size_t *cap, gp__group_table *index, int32_t device,
                       int64_t stream, bool whole)
{
    char key[sizeof(int64_t) + 1];
    int64_t s = whole ? -1 : stream;
    memcpy(key, &s, sizeof s);
    key[sizeof s] = (char)whole;
    uint32_t k = gp__group_find(index, device, key, sizeof key);
    if (k == 0)
        return NULL;
    if (k - 1 < *n)
        return &(*lanes)[k - 1];
    lane *l = GP_PUSH(*lanes, *n, *cap);
    if (l)
        *l = (lane){.device = device, .stream = s, .whole = whole};
    return l;
}

/* Whole devices first, then by GPU work, descending. */
static int cmp_lane_busiest(const void *x, const void *y)
{
    const lane *p = x, *q = y;
    if (p->whole != q->whole)
        return p->whole ? -1 : 1;
    if (p->n != q->n)
        return p->n > q->n ? -1 : 1;
    return cmp_lane(p, q);
}

/* Keeps GP_IDLE_CAUSES_MAX_ROWS lanes: the devices with the most work, then the busiest streams
 * of kept devices (a stream row needs its device's row); frees the others' work. Returns the
 * lanes kept, at the front. */
static size_t keep_busiest(lane *lanes, size_t n)
{
    qsort(lanes, n, sizeof *lanes, cmp_lane_busiest);
    size_t kept = 0, devices = 0;
    while (devices < n && lanes[devices].whole)
        devices++;
    devices = GP_MIN(devices, (size_t)GP_IDLE_CAUSES_MAX_ROWS);
    for (size_t i = 0; i < n; i++) {
        bool keep = false;
        if (lanes[i].whole)
            keep = i < devices;
        else if (kept < GP_IDLE_CAUSES_MAX_ROWS)
            for (size_t d = 0; d < devices && !keep; d++) /* at most MAX_ROWS devices */
                keep = lanes[d].device == lanes[i].device;
        if (keep) {
            lane l = lanes[i];
            lanes[i] = lanes[kept];
            lanes[kept++] = l;
        } else
            free(lanes[i].w);
    }
    return kept;
}

/* Splits the selected GPU work (kernels, copies, memsets) into lanes, each sorted by start; keeps
 * GP_IDLE_CAUSES_MAX_ROWS of them at most (*dropped: how many it did not keep). */
static gp_status collect_lanes(const gp__view *v, lane **out, size_t *n_out, size_t *dropped)
{
    lane *lanes = NULL;
    size_t n = 0, cap = 0, last = 0;
    gp_status st = GP_OK;
    gp__group_table index;
    gp__group_table_init(&index, sizeof(gp__group_key), true);
    for (size_t i = 0; i < v->n_g && st == GP_OK; i++) {
        const gp__gev *g = &v->g[i];
        if (g->kind != GP_EV_KERNEL && g->kind != GP_EV_MEMCPY && g->kind != GP_EV_MEMSET)
            continue;
        work w = {g->ts, g->ts + g->dur, g->launch ? g->launch->track : NO_THREAD};
        for (int whole = 0; whole < 2 && st == GP_OK; whole++) {
            lane *l = whole == 0 && last < n && lanes[last].device == g->device &&
                              !lanes[last].whole && lanes[last].stream == g->stream
                          ? &lanes[last]
                          : find_lane(&lanes, &n, &cap, &index, g->device, g->stream, whole);
            if (!l) {
                st = GP_ENOMEM;
                break;
            }
            if (whole == 0)
                last = (size_t)(l - lanes);
            work *x = GP_PUSH(l->w, l->n, l->cap);
            if (!x)
                st = GP_ENOMEM;
            else
                *x = w;
        }
    }
    gp__group_table_free(&index);
    for (size_t i = 0; i < n; i++) { /* sorted already unless HTA's rounding reordered ties */
        size_t k = 1;
        while (k < lanes[i].n && lanes[i].w[k - 1].s <= lanes[i].w[k].s)
            k++;
        if (k < lanes[i].n)
            qsort(lanes[i].w, lanes[i].n, sizeof *lanes[i].w, cmp_work);
    }
    if (n > GP_IDLE_CAUSES_MAX_ROWS && st == GP_OK) {
        size_t kept = keep_busiest(lanes, n);
        *dropped = n - kept;
        n = kept;
    }
    if (n > 1)
        qsort(lanes, n, sizeof *lanes, cmp_lane);
    *out = lanes;
    *n_out = n;
    return st;
}

/* The analysed window: from the earliest start to the latest end of the selected events, those
 * with a duration on CPU threads (kept by the step selection) and the selected GPU work. */
static void window(ctx *c, const lane *lanes, size_t n)
{
    const gp__view *v = c->v;
    const gp_trace *t = v->t;
    c->lo = INT64_MAX;
    c->hi = INT64_MIN;
    gp__cpu_events it = {t, 0, 0};
    for (const gp_event *e; (e = gp__cpu_events_next(&it));) {
        if ((e->flags & GP_EVF_INSTANT) || !gp_event_kind_has_duration((gp_event_kind)e->kind) ||
            !gp__view_cpu_kept(v, e->ts))
            continue;
        c->lo = GP_MIN(c->lo, e->ts);
        c->hi = GP_MAX(c->hi, e->ts + e->dur);
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; lanes[i].whole && j < lanes[i].n; j++) {
            c->lo = GP_MIN(c->lo, lanes[i].w[j].s);
            c->hi = GP_MAX(c->hi, lanes[i].w[j].e);
        }
}

static void free_ctx(ctx *c)
{
    free(c->flags);
    gp__imap_free(&c->blocking);
    for (size_t k = 0; c->tl && k < c->t->n_tracks; k++) {
        free(c->tl[k].v);
        free(c->tl[k].pair_key);
        free(c->tl[k].pair_time);
        acc_free(&c->tl[k].index);
    }
    free(c->tl);
    free(c->touched);
}

gp_status gp__analyze_idle_causes(const gp__view *v, gp_rank_analysis *r)
{
    ctx c = {.v = v, .t = v->t, .main_thread = main_thread(v)};
    if (v->n_g == 0)
        return GP_OK;
    lane *lanes = NULL;
    size_t n = 0;
    c.n_str = gp_trace_str_count(v->t) + 1;
    c.flags = calloc(c.n_str, 1);
    c.tl = calloc(v->t->n_tracks ? v->t->n_tracks : 1, sizeof *c.tl);
    gp_status st = c.flags && c.tl ? find_blocking(&c) : GP_ENOMEM;
    if (st == GP_OK)
        st = collect_lanes(v, &lanes, &n, &r->idle_causes_dropped);
    if (st == GP_OK)
        window(&c, lanes, n);
    size_t rows = c.lo < c.hi ? n : 0; /* no window: nothing selected, no rows */
    if (st == GP_OK && rows > 0 && !(r->idle_causes = calloc(rows, sizeof *r->idle_causes)))
        st = GP_ENOMEM;
    for (size_t i = 0; i < rows && st == GP_OK; i++) {
        gp_idle_causes *row = &r->idle_causes[r->n_idle_causes++];
        row->device = lanes[i].device;
        row->stream = lanes[i].stream;
        st = fill_row(&c, row, lanes[i].w, lanes[i].n);
    }
    for (size_t i = 0; i < n; i++)
        free(lanes[i].w);
    free(lanes);
    free_ctx(&c);
    return st;
}
