/* What the host was doing while the GPU was idle (docs/analyses.md, "Idle causes").
 *
 * Each CPU thread that launched GPU work becomes a timeline of disjoint segments, each holding the
 * cause of its instants (the highest-precedence class among the events open there: sync >
 * comm_wait > launch > data_loading > cpu > unrecorded) and the event naming it (the innermost
 * event of that class). Each idle interval of a stream, and of the union of a device's streams,
 * inside the analysed window is then walked along the timeline of the thread that launched the
 * GPU work ending the interval.
 *
 * Cost (issue 38): every row is kept. Its top name per cause needs the time per name over the
 * row's intervals, which is a walk of the segments they cover (the same walk gives its totals
 * per cause); the rows take turns, devices first and then the streams with the most GPU work,
 * against one budget linear in the input (IC_WALK_PER_EVENT segments per event, plus
 * IC_WALK_FREE), and a row whose walk would overdraw it gets no top names (counted in
 * idle_causes_dropped, said in the note) and its totals from per-thread prefix sums of time per
 * cause (two searches per interval, no walk).
 * Exact top names for every row would be a weighted range-mode query per row, for which no
 * near-linear algorithm is known; on real traces (a few streams) every row fits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/idle_causes_internal.h"
#include "core/msort.h"

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

#define NO_THREAD GP__IC_NO_THREAD
#define IC_WALK_PER_EVENT 64
#define IC_WALK_FREE ((size_t)1 << 22)
#define CUM_STEP 16  /* segments per prefix-sum checkpoint (3.5 bytes per segment) */
#define IC_BATCH 128 /* segments handed to a sink at a time */

/* A stretch of a thread's timeline: what the thread was doing over [s, s + len), or from s to its
 * entry in the timeline's long ends when len is SEG_LONG (2^32 - 1 ns or more); pc is
 * pair << 3 | cause, the pair indexing the thread's distinct (cause, name) pairs. 16 bytes: with
 * its end and cause stored in full (24 bytes), the segments were the largest working set of the
 * analyses (28 MB on large_v100_nccl x7). */
typedef struct seg {
    gp_ns s;
    uint32_t len;
    uint32_t pc;
} seg;

#define SEG_LONG UINT32_MAX
#define PAIR_MAX (UINT32_MAX >> 3)

/* The end of a long segment: its index and end. */
typedef struct long_end {
    size_t i;
    gp_ns e;
} long_end;

static inline int seg_cause(const seg *x)
{
    return (int)(x->pc & 7);
}

static inline uint32_t seg_pair(const seg *x)
{
    return x->pc >> 3;
}

/* A thread's timeline, and the time the current row attributed to each of its pairs (summed per
 * pair while walking, folded into the row's names once per row: no hashing per segment). */
typedef struct timeline {
    seg *v;
    size_t n, cap;
    long_end *lng; /* the long segments' ends, by index */
    size_t n_lng, cap_lng;
    gp_ns *cum; /* cum[b * GP_IC_COUNT + k]: time of cause k in segments [0, b * CUM_STEP) */
    gp__ic_pairs pairs;
    gp_ns *pair_time;
    uint32_t *hot; /* the pairs whose pair_time the current row has made nonzero */
    size_t n_hot, cap_hot;
    size_t cursor; /* segments before it end before the next interval of row `row` */
    size_t row;
    bool built, touched;
} timeline;

/* The end of segment k of tl. */
static gp_ns long_end_of(const timeline *tl, size_t k)
{
    size_t lo = 0, hi = tl->n_lng;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tl->lng[mid].i < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return tl->lng[lo].e; /* present: every long segment has its entry */
}

static inline gp_ns seg_end(const timeline *tl, size_t k)
{
    const seg *x = &tl->v[k];
    return x->len != SEG_LONG ? x->s + x->len : long_end_of(tl, k);
}

/* Sets the end of tl's last segment k to e (after its start). GP_ENOMEM. */
static gp_status set_end(timeline *tl, size_t k, gp_ns e)
{
    seg *x = &tl->v[k];
    gp_ns len = e - x->s;
    if (x->len == SEG_LONG) { /* the last long end is k's: segments are added in order */
        tl->lng[tl->n_lng - 1].e = e;
        return GP_OK;
    }
    if (len < (gp_ns)SEG_LONG) {
        x->len = (uint32_t)len;
        return GP_OK;
    }
    long_end *l = GP_PUSH(tl->lng, tl->n_lng, tl->cap_lng);
    if (!l)
        return GP_ENOMEM;
    *l = (long_end){k, e};
    x->len = SEG_LONG;
    return GP_OK;
}

/* Whether segment k is before time t: it ends by t (by_end), or it starts before t. */
static inline bool seg_before(const timeline *tl, size_t k, gp_ns t, bool by_end)
{
    return by_end ? seg_end(tl, k) <= t : tl->v[k].s < t;
}

/* The first of tl's segments [from, n) not before t (seg_before), every segment before from being
 * before it: a search forward from `from`, doubling the step (the intervals of a row come in time
 * order, so the answer is near the previous one; a binary search of the whole timeline per
 * interval was a cache miss per step, most of the idle causes' time). */
static size_t gallop(const timeline *tl, size_t from, gp_ns t, bool by_end)
{
    size_t lo = from, step = 1, n = tl->n;
    while (lo + step <= n && seg_before(tl, lo + step - 1, t, by_end)) {
        lo += step;
        step *= 2;
    }
    size_t hi = GP_MIN(lo + step, n);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (seg_before(tl, mid, t, by_end))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

struct gp__ic_ctx {
    const gp__view *v;
    const gp_trace *t;
    uint8_t *flags;      /* per string id */
    uint32_t *name_pair; /* per string id: 1 + the index of its first pair on the thread, 0 none */
    size_t n_str;
    gp__imap blocking; /* correlation ids of blocking copies and host synchronisations */
    timeline *tl;      /* per track, built on first use */
    uint32_t *thread;  /* per GPU event of the view: the track of its launch call, or NO_THREAD */
    gp__ic_sweep sw;   /* what the lanes' sweeps read: thread, the window, the main thread */
    uint32_t *touched; /* threads whose pair_time the current row has added to */
    size_t n_touched, cap_touched;
    size_t budget;   /* segments the rows' name walks may still visit */
    size_t max_segs; /* the most segments the timelines can hold: 2 per event of the trace */
    size_t row;      /* the row being filled, from 1 (the timelines' cursors are valid for it) */
    size_t unnamed;  /* rows without top names (their walk would overdraw the budget) */
};
typedef struct gp__ic_ctx ctx;

/* The index of (cause, name) in pairs, added (pair_of, not found by name id). */
static uint32_t pair_new(ctx *c, gp__ic_pairs *pairs, int cause, gp_strid name)
{
    uint32_t *first = name < c->n_str ? &c->name_pair[name] : NULL;
    gp_ns *slot = NULL;
    if (!first || *first) { /* another cause of the name, or a name without an id */
        bool added;
        if (!(slot = gp__ic_acc_slot(&pairs->index, cause, name, &added)))
            return UINT32_MAX;
        if (!added)
            return (uint32_t)*slot;
    }
    if (pairs->n >= PAIR_MAX)
        return UINT32_MAX;
    uint64_t *k = GP_PUSH(pairs->key, pairs->n, pairs->cap);
    if (!k)
        return UINT32_MAX;
    *k = (uint64_t)cause << 32 | name;
    if (slot)
        *slot = (gp_ns)(pairs->n - 1);
    else
        *first = (uint32_t)pairs->n;
    return (uint32_t)(pairs->n - 1);
}

/* The index of (cause, name) in pairs, added when new; UINT32_MAX when out of memory (or past
 * PAIR_MAX pairs). A name's first pair on the thread is found by its string id (c->name_pair:
 * hashing every new state was a tenth of the analysis), only its pairs of other causes by hash. */
static inline uint32_t pair_of(ctx *c, gp__ic_pairs *pairs, int cause, gp_strid name)
{
    uint32_t first = name < c->n_str ? c->name_pair[name] : 0;
    if (first && pairs->key[first - 1] == ((uint64_t)cause << 32 | name))
        return first - 1;
    return pair_new(c, pairs, cause, name);
}

/* Clears c->name_pair of the thread's pairs, for the next thread. */
static void forget_pairs(ctx *c, const gp__ic_pairs *pairs)
{
    for (size_t i = 0; i < pairs->n; i++)
        if ((gp_strid)pairs->key[i] < c->n_str) /* the name: the key's low 32 bits */
            c->name_pair[(gp_strid)pairs->key[i]] = 0;
}

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The flags of a name not seen yet (name_flags). */
static uint8_t name_flags_new(ctx *c, gp_strid id)
{
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

/* The flags of a name: computed once per string id, then one load per event. */
static inline uint8_t name_flags(ctx *c, gp_strid id)
{
    uint8_t f = id < c->n_str ? c->flags[id] : 0;
    return f ? f : name_flags_new(c, id);
}

static int event_class(ctx *c, const gp_event *e)
{
    uint64_t unused;
    switch ((gp_event_kind)e->kind) {
    case GP_EV_RUNTIME:
    case GP_EV_DRIVER: {
        uint8_t f = name_flags(c, e->name);
        if ((f & F_SYNC) || (e->correlation != 0 && (c->blocking.n || c->blocking.has_min) &&
                             gp__imap_get(&c->blocking, e->correlation, &unused)))
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

/* An open event on the thread's stack and the state of its innermost instants: their class, the
 * name, and the pair of both on the timeline (UINT32_MAX until a segment needs it: found once per
 * state, not once per segment). */
typedef struct frame {
    gp_ns end;
    gp_strid name;
    uint8_t cls;
    uint32_t pair;
} frame;

/* The segments of a CPU track: events nest by start (as gp_track_self_times has them); an event's
 * state is its own class and name when its class is at least its parent's, else the parent's
 * state. Between two boundaries the state is the top of the stack's. Segments are made in buf
 * (buf[0, n) done, buf[n] being made while cls is not P_NONE: the next may continue it), handed
 * to the sink IC_BATCH at a time (a call per segment was a fifth of the analysis). */
gp_status gp__ic_segments(ctx *c, uint32_t track, gp__ic_pairs *pairs, gp__ic_sink sink, void *arg)
{
    const gp_track *tr = &c->t->tracks[track];
    gp__ic_seg buf[IC_BATCH];
    size_t n = 0;
    uint8_t cls = P_NONE; /* the state of buf[n] */
    gp_strid name = 0;
    frame *stack = NULL;
    size_t depth = 0, cap = 0;
    gp_ns cur = INT64_MIN;
    /* pair 0: nothing recorded (the gaps between segments) */
    gp_status st = pair_of(c, pairs, GP_IC_UNRECORDED, 0) == 0 ? GP_OK : GP_ENOMEM;
    for (size_t i = 0; st == GP_OK; i++) {
        const gp_event *e = i < tr->n_events ? &tr->events[i] : NULL;
        int ecls = e && e->dur > 0 ? event_class(c, e) : P_NONE;
        if (e && ecls == P_NONE)
            continue;
        gp_ns at = e ? e->ts : INT64_MAX;
        while (depth > 0 && st == GP_OK) {
            frame *f = &stack[depth - 1];
            gp_ns to = GP_MIN(f->end, at);
            if (to > cur && cls == f->cls && name == f->name && buf[n].e == cur) {
                buf[n].e = to; /* the same state goes on */
            } else if (to > cur) {
                if (f->pair == UINT32_MAX &&
                    (f->pair = pair_of(c, pairs, class_cause[f->cls], f->name)) == UINT32_MAX) {
                    st = GP_ENOMEM;
                    break;
                }
                if (cls != P_NONE && ++n == IC_BATCH) {
                    st = sink(arg, buf, n);
                    n = 0;
                }
                buf[n] = (gp__ic_seg){cur, to, f->pair, class_cause[f->cls]};
                cls = f->cls;
                name = f->name;
            }
            cur = GP_MAX(cur, to);
            if (f->end > at)
                break;
            depth--;
        }
        if (!e || st != GP_OK)
            break;
        cur = GP_MAX(cur, at);
        if (depth == cap && gp__grow((void **)&stack, &cap, sizeof *stack, depth + 1) != GP_OK) {
            st = GP_ENOMEM;
            break;
        }
        frame *f = &stack[depth++];
        *f = (frame){e->ts + e->dur, e->name, (uint8_t)ecls, UINT32_MAX};
        if (depth > 1 && stack[depth - 2].cls > ecls) {
            f->cls = stack[depth - 2].cls;
            f->name = stack[depth - 2].name;
            f->pair = stack[depth - 2].pair;
        }
    }
    free(stack);
    n += cls != P_NONE;
    if (st == GP_OK && n > 0)
        st = sink(arg, buf, n);
    forget_pairs(c, pairs);
    return st;
}

/* Appends segments to a stored timeline (gp__ic_sink). */
static gp_status store(void *arg, const gp__ic_seg *v, size_t n)
{
    timeline *tl = arg;
    gp_status st = GP_OK;
    for (size_t i = 0; i < n && st == GP_OK; i++) {
        seg *x = GP_PUSH(tl->v, tl->n, tl->cap);
        if (!x)
            return GP_ENOMEM;
        *x = (seg){v[i].s, 0, v[i].pair << 3 | (uint32_t)v[i].cause};
        st = set_end(tl, tl->n - 1, v[i].e);
    }
    return st;
}

/* Builds and stores the timeline of a CPU track. */
static gp_status build_timeline(ctx *c, uint32_t track)
{
    timeline *tl = &c->tl[track];
    tl->built = true;
    gp_status st = gp__ic_segments(c, track, &tl->pairs, store, tl);
    if (st == GP_OK && !(tl->pair_time = calloc(tl->pairs.n, sizeof *tl->pair_time)))
        st = GP_ENOMEM;
    gp__ic_acc_free(&tl->pairs.index);
    return st;
}

/* The prefix sums of tl's time per cause (tl->cum), built when a row first needs them: only the
 * rows whose name walk overdraws the budget do. */
static gp_status build_cum(timeline *tl)
{
    size_t blocks = tl->n / CUM_STEP + 1;
    if (!(tl->cum = calloc(blocks * GP_IC_COUNT, sizeof *tl->cum)))
        return GP_ENOMEM;
    for (size_t b = 1; b < blocks; b++) {
        gp_ns *prev = &tl->cum[(b - 1) * GP_IC_COUNT], *next = prev + GP_IC_COUNT;
        memcpy(next, prev, GP_IC_COUNT * sizeof *next);
        for (size_t i = (b - 1) * CUM_STEP; i < b * CUM_STEP; i++)
            next[seg_cause(&tl->v[i])] += seg_end(tl, i) - tl->v[i].s;
    }
    return GP_OK;
}

/* Adds the time per cause of tl's segments [0, i) to out (from the checkpoint before i). */
static void prefix_add(const timeline *tl, size_t i, gp_ns *out, int sign)
{
    size_t b = i / CUM_STEP;
    for (int k = 0; k < GP_IC_COUNT; k++)
        out[k] += sign * tl->cum[b * GP_IC_COUNT + k];
    for (size_t x = b * CUM_STEP; x < i; x++)
        out[seg_cause(&tl->v[x])] += sign * (seg_end(tl, x) - tl->v[x].s);
}

/* One row being filled: its totals per cause, the segments its name walk visits (one per
 * interval and each segment an interval covers), whether that walk fits the budget (naming), and
 * then its time per (cause, name). */
typedef struct row_acc {
    gp_idle_causes *row;
    size_t walk;
    bool naming;
    gp__ic_acc names;
} row_acc;

/* Adds d > 0 of pair on thread to the row's time per name. */
static gp_status add_pair(ctx *c, uint32_t thread, uint32_t pair, gp_ns d)
{
    timeline *tl = &c->tl[thread];
    if (tl->pair_time[pair] == 0) {
        uint32_t *h = GP_PUSH(tl->hot, tl->n_hot, tl->cap_hot);
        if (!h)
            return GP_ENOMEM;
        *h = pair;
    }
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

/* The idle interval [s, e) covered by segments [i, j) of thread's timeline: its totals per cause
 * and time per name, by a walk of the segments (the gaps between them are unrecorded). */
static gp_status walk_names(ctx *c, gp_idle_causes *r, uint32_t thread, size_t i, size_t j, gp_ns s,
                            gp_ns e)
{
    const timeline *tl = &c->tl[thread];
    gp_status st = GP_OK;
    gp_ns t = s;
    for (; i < j && st == GP_OK; i++) {
        const seg *x = &tl->v[i];
        if (x->s > t) {
            r->by_cause[GP_IC_UNRECORDED] += x->s - t; /* x->s < e */
            st = add_pair(c, thread, 0, x->s - t);
            t = x->s;
        }
        gp_ns d = GP_MIN(seg_end(tl, i), e) - t; /* > 0: x ends after s, and t < e */
        r->by_cause[seg_cause(x)] += d;
        if (st == GP_OK)
            st = add_pair(c, thread, seg_pair(x), d);
        t += d;
    }
    if (t < e && st == GP_OK) {
        r->by_cause[GP_IC_UNRECORDED] += e - t;
        st = add_pair(c, thread, 0, e - t);
    }
    return st;
}

/* The same totals per cause from the prefix sums of the timeline (no names). */
static void tally_sums(timeline *tl, gp_idle_causes *r, size_t i, size_t j, gp_ns s, gp_ns e)
{
    gp_ns covered = 0;
    if (i < j) {
        gp_ns d[GP_IC_COUNT] = {0};
        prefix_add(tl, j, d, 1);
        prefix_add(tl, i, d, -1);
        for (int k = 0; k < GP_IC_COUNT; k++) {
            r->by_cause[k] += d[k];
            covered += d[k];
        }
        if (tl->v[i].s < s) { /* the part of the first segment before s */
            r->by_cause[seg_cause(&tl->v[i])] -= s - tl->v[i].s;
            covered -= s - tl->v[i].s;
        }
        gp_ns last_e = seg_end(tl, j - 1);
        if (last_e > e) { /* the part of the last segment after e */
            r->by_cause[seg_cause(&tl->v[j - 1])] -= last_e - e;
            covered -= last_e - e;
        }
    }
    r->by_cause[GP_IC_UNRECORDED] += (e - s) - covered;
}

/* The segments [*i, *j) of thread's timeline that the idle interval [s, e) covers (the timeline
 * built on first use): found from where the sweep's previous interval on the thread was. */
static gp_status covered(ctx *c, uint32_t thread, gp_ns s, gp_ns e, size_t *i, size_t *j)
{
    timeline *tl = &c->tl[thread];
    gp_status st = tl->built ? GP_OK : build_timeline(c, thread);
    if (st != GP_OK)
        return st;
    if (tl->row != c->row) { /* the sweep's first interval on this thread */
        tl->row = c->row;
        tl->cursor = 0;
    }
    /* i <= j: segment i - 1 ends by s < e, so it starts before e */
    *i = gallop(tl, tl->cursor, s, true); /* the first ending after s */
    *j = gallop(tl, *i, e, false);        /* the first starting at or after e */
    tl->cursor = *i;
    return GP_OK;
}

/* Adds the segments a name walk of the idle interval [s, e) visits to the row's walk. */
static gp_status count_walk(ctx *c, void *acc, gp_ns s, gp_ns e, uint32_t thread)
{
    row_acc *a = acc;
    size_t i, j;
    a->walk++;
    gp_status st = thread == NO_THREAD ? GP_OK : covered(c, thread, s, e, &i, &j);
    if (thread != NO_THREAD && st == GP_OK)
        a->walk += j - i;
    return st;
}

/* Adds the idle interval [s, e) to the row: its idle time, its totals per cause, and when the row
 * is named its time per name (one walk of the covered segments gives both; a row whose walk
 * overdraws the budget takes its totals from the prefix sums). */
static gp_status visit(ctx *c, void *acc, gp_ns s, gp_ns e, uint32_t thread)
{
    row_acc *a = acc;
    gp_idle_causes *r = a->row;
    r->idle += e - s;
    if (thread == NO_THREAD) {
        r->by_cause[GP_IC_UNRECORDED] += e - s;
        a->walk += a->naming;
        return a->naming ? gp__ic_acc_add(&a->names, GP_IC_UNRECORDED, 0, e - s) : GP_OK;
    }
    size_t i, j;
    gp_status st = covered(c, thread, s, e, &i, &j);
    if (st != GP_OK)
        return st;
    timeline *tl = &c->tl[thread];
    if (a->naming) {
        a->walk += 1 + (j - i); /* counted here when count_walk did not run (fill_row) */
        return walk_names(c, r, thread, i, j, s, e);
    }
    if (!tl->cum && build_cum(tl) != GP_OK)
        return GP_ENOMEM;
    tally_sums(tl, r, i, j, s, e);
    return GP_OK;
}

typedef gp_status (*interval_fn)(ctx *c, void *acc, gp_ns s, gp_ns e, uint32_t thread);

/* Calls fn on the idle intervals of a lane (its GPU work sorted by start) inside the window,
 * each with the thread that launched the work ending it (the last launching thread for the
 * interval after the last work). */
static gp_status sweep(ctx *c, interval_fn fn, void *a, const uint32_t *w, size_t n)
{
    gp__ic_cursor k;
    gp__ic_cursor_init(&c->sw, &k, w, n);
    gp_ns s, e;
    uint32_t thread;
    gp_status st = GP_OK;
    while (st == GP_OK && gp__ic_next(&c->sw, &k, &s, &e, &thread))
        st = fn(c, a, s, e, thread);
    return st;
}

/* Folds the touched threads' pair times (those the row made nonzero) into the row's names (not
 * when the row's walk overdrew the budget), and clears them. */
static gp_status fold_pairs(ctx *c, row_acc *a)
{
    for (size_t i = 0; i < c->n_touched; i++) {
        timeline *tl = &c->tl[c->touched[i]];
        for (size_t h = 0; h < tl->n_hot; h++) {
            uint32_t p = tl->hot[h];
            gp_status st = !a->naming ? GP_OK
                                      : gp__ic_acc_add(&a->names, (int)(tl->pairs.key[p] >> 32),
                                                       (gp_strid)(tl->pairs.key[p] & 0xffffffff),
                                                       tl->pair_time[p]);
            if (st != GP_OK)
                return st;
            tl->pair_time[p] = 0;
        }
        tl->n_hot = 0;
        tl->touched = false;
    }
    c->n_touched = 0;
    return GP_OK;
}

/* Fills a row: its idle time and totals per cause, and, when its walk fits the budget, the top
 * name of each cause (else "", counted in c->unnamed). */
static gp_status fill_row(ctx *c, gp_idle_causes *row, const uint32_t *w, size_t n)
{
    row_acc a = {.row = row};
    gp_status st = GP_OK;
    /* A row's walk is at most 2 (n + 1) + the segments of every timeline (one per interval, and
     * per thread its intervals cover at most its segments plus one per interval: they are
     * disjoint), and a timeline has at most 2 segments per event of its track. Within the budget,
     * the row is named and its walk counted as it goes; else a first sweep counts it (the
     * searches only). */
    if (2 * (n + 1) + c->max_segs > c->budget) {
        c->row++;
        st = sweep(c, count_walk, &a, w, n);
        a.naming = a.walk <= c->budget;
        a.walk = a.naming ? 0 : a.walk; /* a named row's walk is counted again by visit */
    } else
        a.naming = true;
    c->row++;
    if (st == GP_OK)
        st = sweep(c, visit, &a, w, n);
    gp__ic_shares(row);
    if (st == GP_OK)
        st = fold_pairs(c, &a);
    if (st == GP_OK && !a.naming)
        c->unnamed++;
    else if (st == GP_OK) {
        c->budget -= a.walk;
        gp__ic_top_names(c->t, row, &a.names);
    }
    gp__ic_acc_free(&a.names);
    return st;
}

/* A lane's work by start, where HTA's rounding reordered ties: (start, index in the view). */
typedef struct work_key {
    gp_ns s;
    uint32_t g;
} work_key;

static int cmp_work_key(const work_key *p, const work_key *q)
{
    return GP_CMP(p->s, q->s);
}
GP__DEFINE_MERGE_SORT(sort_work_keys, work_key, cmp_work_key)

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
    uint32_t dev; /* a stream's lane: the index of its device's lane while they are collected */
    uint32_t *w;  /* the lane's GPU work: indices in the view's events, by start */
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

/* Sorts a lane's work by start (stable: ties keep the view's order). */
static gp_status sort_lane(const gp__view *v, lane *l)
{
    size_t k = 1; /* sorted already unless HTA's rounding reordered ties */
    while (k < l->n && v->g[l->w[k - 1]].ts <= v->g[l->w[k]].ts)
        k++;
    if (k >= l->n)
        return GP_OK;
    work_key *keys = malloc(l->n * sizeof *keys);
    if (!keys)
        return GP_ENOMEM;
    for (size_t i = 0; i < l->n; i++)
        keys[i] = (work_key){v->g[l->w[i]].ts, l->w[i]};
    gp_status st = sort_work_keys(keys, l->n) ? GP_OK : GP_ENOMEM;
    for (size_t i = 0; i < l->n && st == GP_OK; i++)
        l->w[i] = keys[i].g;
    free(keys);
    return st;
}

/* The index of the lane of g's stream, and the lane of its device made with it (dev); UINT32_MAX
 * when out of memory. */
static uint32_t stream_lane(lane **lanes, size_t *n, size_t *cap, gp__group_table *index,
                            const gp__gev *g)
{
    lane *l = find_lane(lanes, n, cap, index, g->device, g->stream, false);
    if (!l)
        return UINT32_MAX;
    uint32_t k = (uint32_t)(l - *lanes);
    if (l->cap == 0) { /* new (a lane found before has work): find its device's lane */
        lane *d = find_lane(lanes, n, cap, index, g->device, g->stream, true);
        if (!d)
            return UINT32_MAX;
        (*lanes)[k].dev = (uint32_t)(d - *lanes);
    }
    return k;
}

/* Splits the selected GPU work (kernels, copies, memsets) into lanes, each sorted by start, the
 * lanes in row order; c->thread: the launching thread of each GPU event. A lane holds 4-byte
 * indices of the view's events (it held copies of their times: 13 MB on large_v100_nccl x7),
 * allocated to size: a first pass counts and notes each event's stream lane (two lookups per
 * event and pass were 5 % of the analysis on large_v100_nccl), the second fills the lanes. */
static gp_status collect_lanes(ctx *c, lane **out, size_t *n_out)
{
    const gp__view *v = c->v;
    lane *lanes = NULL;
    size_t n = 0, cap = 0;
    uint32_t last = UINT32_MAX;
    gp__group_table index;
    gp__group_table_init(&index, sizeof(gp__group_key), true);
    uint32_t *lane_of = malloc((v->n_g ? v->n_g : 1) * sizeof *lane_of);
    c->sw.thread = c->thread = malloc((v->n_g ? v->n_g : 1) * sizeof *c->thread);
    gp_status st = c->thread && lane_of && v->n_g <= UINT32_MAX ? GP_OK : GP_ENOMEM;
    for (size_t i = 0; i < v->n_g && st == GP_OK; i++) {
        const gp__gev *g = &v->g[i];
        c->thread[i] = g->launch ? g->launch->track : NO_THREAD;
        lane_of[i] = UINT32_MAX;
        if (g->kind != GP_EV_KERNEL && g->kind != GP_EV_MEMCPY && g->kind != GP_EV_MEMSET)
            continue; /* not a lane's work */
        if ((last >= n || lanes[last].device != g->device || lanes[last].stream != g->stream) &&
            (last = stream_lane(&lanes, &n, &cap, &index, g)) == UINT32_MAX) {
            st = GP_ENOMEM;
            break;
        }
        lane_of[i] = last;
        lanes[last].cap++;
        lanes[lanes[last].dev].cap++;
    }
    gp__group_table_free(&index);
    for (size_t i = 0; i < n && st == GP_OK; i++)
        if (!(lanes[i].w = malloc((lanes[i].cap ? lanes[i].cap : 1) * sizeof *lanes[i].w)))
            st = GP_ENOMEM;
    for (size_t i = 0; i < v->n_g && st == GP_OK; i++) {
        if (lane_of[i] == UINT32_MAX)
            continue;
        lane *l = &lanes[lane_of[i]], *d = &lanes[l->dev];
        l->w[l->n++] = (uint32_t)i;
        d->w[d->n++] = (uint32_t)i;
    }
    free(lane_of);
    for (size_t i = 0; i < n && st == GP_OK; i++)
        st = sort_lane(v, &lanes[i]);
    if (n > 1)
        gp__msort(lanes, n, sizeof *lanes, cmp_lane);
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
    uint32_t timed = 0; /* the kinds with a duration (a call per event was most of the window) */
    for (int k = 0; k < GP_EV_KIND_COUNT && k < 32; k++)
        timed |= gp_event_kind_has_duration((gp_event_kind)k) ? 1u << k : 0;
    gp_ns lo = INT64_MAX, hi = INT64_MIN;
    for (size_t k = 0; k < t->n_tracks; k++) {
        const gp_track *tr = &t->tracks[k];
        for (size_t i = 0; tr->kind == GP_TRACK_CPU_THREAD && i < tr->n_events; i++) {
            const gp_event *e = &tr->events[i];
            if ((e->flags & GP_EVF_INSTANT) || e->kind >= 32 || !(timed >> e->kind & 1) ||
                !gp__view_cpu_kept(v, e->ts))
                continue;
            lo = GP_MIN(lo, e->ts);
            hi = GP_MAX(hi, e->ts + e->dur);
        }
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; lanes[i].whole && j < lanes[i].n; j++) {
            const gp__gev *g = &v->g[lanes[i].w[j]];
            lo = GP_MIN(lo, g->ts);
            hi = GP_MAX(hi, g->ts + g->dur);
        }
    c->sw.lo = lo;
    c->sw.hi = hi;
}

/* cmp_lane_busiest on two lane pointers (qsort of by_priority's array). */
static int cmp_lane_ptr_busiest(const void *x, const void *y)
{
    return cmp_lane_busiest(*(const lane *const *)x, *(const lane *const *)y);
}

/* The order in which the rows draw on the walk budget: whole devices first, then by GPU work,
 * descending. NULL when out of memory. */
static const lane **by_priority(const lane *lanes, size_t n)
{
    const lane **p = malloc((n ? n : 1) * sizeof *p);
    for (size_t i = 0; p && i < n; i++)
        p[i] = &lanes[i];
    if (p && n > 1)
        gp__msort(p, n, sizeof *p, cmp_lane_ptr_busiest);
    return p;
}

/* The walk budget: IC_WALK_PER_EVENT segments per event of the CPU threads and per GPU work,
 * plus IC_WALK_FREE. */
static size_t walk_budget(const gp_trace *t, const lane *lanes, size_t n)
{
    size_t events = 0;
    for (size_t k = 0; k < t->n_tracks; k++)
        if (t->tracks[k].kind == GP_TRACK_CPU_THREAD)
            events += t->tracks[k].n_events;
    for (size_t i = 0; i < n; i++)
        events += lanes[i].n;
    return IC_WALK_FREE + IC_WALK_PER_EVENT * events;
}

/* Whether every row is named within the budget whatever the walks: the sum of their bounds (as
 * in fill_row) fits it. Then the rows can be filled in one pass per thread (idle_causes_pass.c),
 * unless GP_IDLE_CAUSES=stored asks for the stored timelines (tests compare the two). */
static bool all_named(const ctx *c, const lane *lanes, size_t n)
{
    const char *mode = getenv("GP_IDLE_CAUSES");
    if (mode && strcmp(mode, "stored") == 0)
        return false;
    size_t need = 0;
    for (size_t i = 0; i < n; i++) {
        size_t bound = 2 * (lanes[i].n + 1) + c->max_segs;
        if (bound > c->budget || need > c->budget - bound)
            return false;
        need += bound;
    }
    return true;
}

/* Fills the rows in one pass per thread (*done), when their intervals change thread few times. */
static gp_status fill_in_one_pass(ctx *c, const lane *lanes, size_t n, gp_idle_causes *out,
                                  bool *done)
{
    gp__ic_row *rows = calloc(n, sizeof *rows);
    if (!rows)
        return GP_ENOMEM;
    for (size_t i = 0; i < n; i++)
        rows[i] = (gp__ic_row){.w = lanes[i].w, .n = lanes[i].n, .out = &out[i]};
    gp_status st = gp__ic_pass(c, &c->sw, c->t, rows, n, done);
    for (size_t i = 0; i < n; i++)
        gp__ic_acc_free(&rows[i].names);
    free(rows);
    return st;
}

static void free_ctx(ctx *c)
{
    free(c->flags);
    free(c->name_pair);
    gp__imap_free(&c->blocking);
    for (size_t k = 0; c->tl && k < c->t->n_tracks; k++) {
        free(c->tl[k].v);
        free(c->tl[k].lng);
        free(c->tl[k].pairs.key);
        free(c->tl[k].pair_time);
        free(c->tl[k].cum);
        free(c->tl[k].hot);
        gp__ic_acc_free(&c->tl[k].pairs.index);
    }
    free(c->tl);
    free(c->touched);
    free(c->thread);
}

gp_status gp__analyze_idle_causes(const gp__view *v, gp_rank_analysis *r)
{
    ctx c = {.v = v, .t = v->t};
    c.sw = (gp__ic_sweep){.g = v->g, .main_thread = main_thread(v)};
    if (v->n_g == 0)
        return GP_OK;
    lane *lanes = NULL;
    size_t n = 0;
    c.n_str = gp_trace_str_count(v->t) + 1;
    c.flags = calloc(c.n_str, 1);
    c.name_pair = calloc(c.n_str, sizeof *c.name_pair);
    c.tl = calloc(v->t->n_tracks ? v->t->n_tracks : 1, sizeof *c.tl);
    gp_status st = c.flags && c.name_pair && c.tl ? find_blocking(&c) : GP_ENOMEM;
    if (st == GP_OK)
        st = collect_lanes(&c, &lanes, &n);
    if (st == GP_OK)
        window(&c, lanes, n);
    c.budget = walk_budget(c.t, lanes, n);
    for (size_t k = 0; k < c.t->n_tracks; k++)
        c.max_segs += 2 * c.t->tracks[k].n_events;
    size_t rows = c.sw.lo < c.sw.hi ? n : 0; /* no window: nothing selected, no rows */
    const lane **order = NULL;
    if (st == GP_OK && rows > 0 &&
        (!(r->idle_causes = calloc(rows, sizeof *r->idle_causes)) ||
         !(order = by_priority(lanes, n))))
        st = GP_ENOMEM;
    if (st == GP_OK)
        r->n_idle_causes = rows;
    for (size_t i = 0; i < rows && st == GP_OK; i++) {
        r->idle_causes[i].device = lanes[i].device;
        r->idle_causes[i].stream = lanes[i].stream;
    }
    bool done = false;
    if (st == GP_OK && rows > 0 && all_named(&c, lanes, rows))
        st = fill_in_one_pass(&c, lanes, rows, r->idle_causes, &done);
    for (size_t i = 0; i < rows && st == GP_OK && !done; i++) /* in lane order, by priority */
        st = fill_row(&c, &r->idle_causes[order[i] - lanes], order[i]->w, order[i]->n);
    r->idle_causes_dropped = c.unnamed;
    free(order);
    for (size_t i = 0; i < n; i++)
        free(lanes[i].w);
    free(lanes);
    free_ctx(&c);
    return st;
}
