/* Idle causes, between its two files: idle_causes.c (the classes, the lanes and their idle
 * intervals, the segments of a thread's activity, the stored timelines and the rows' budget) and
 * idle_causes_pass.c (the names accumulator, and the rows filled in one pass per launching
 * thread, with no stored timeline). docs/internals/analyze.md, "Idle causes". */
#ifndef GP_ANALYZE_IDLE_CAUSES_INTERNAL_H
#define GP_ANALYZE_IDLE_CAUSES_INTERNAL_H

#include "analyze/analyze_internal.h"

#define GP__IC_NO_THREAD UINT32_MAX

/* Time (or an index) per (cause, name): open addressing on key = (cause << 32 | name) + 1, 0
 * marking an empty slot; one probe sequence per addition. */
typedef struct gp__ic_acc {
    uint64_t *key;
    gp_ns *time;
    size_t n, cap; /* cap: a power of two */
} gp__ic_acc;

/* The slot of (cause, name), added with time 0 (*added true) when new. NULL when out of memory. */
gp_ns *gp__ic_acc_slot(gp__ic_acc *m, int cause, gp_strid name, bool *added);
/* Adds d to the time of (cause, name). GP_ENOMEM. */
gp_status gp__ic_acc_add(gp__ic_acc *m, int cause, gp_strid name, gp_ns d);
void gp__ic_acc_free(gp__ic_acc *m);

/* A thread's distinct (cause, name) pairs, by index (key: cause << 32 | name); pair 0 is
 * (unrecorded, 0), the time between its segments. index maps a pair to its index while the
 * segments are made. */
typedef struct gp__ic_pairs {
    gp__ic_acc index;
    uint64_t *key;
    size_t n, cap;
} gp__ic_pairs;

/* The analysis' state (idle_causes.c). */
typedef struct gp__ic_ctx gp__ic_ctx;

/* A segment of a thread's activity: [s, e) spent in pair (of cause). */
typedef struct gp__ic_seg {
    gp_ns s, e;
    uint32_t pair;
    int cause;
} gp__ic_seg;

/* Receives a thread's segments v[0, n) (n > 0), the next ones of its timeline: in time order and
 * disjoint across calls. */
typedef gp_status (*gp__ic_sink)(void *arg, const gp__ic_seg *v, size_t n);

/* Makes the segments of a CPU track's activity (the pairs in *pairs, which starts empty) and hands
 * them to sink, in time order, a batch at a time. GP_ENOMEM, or the sink's status. */
gp_status gp__ic_segments(gp__ic_ctx *c, uint32_t track, gp__ic_pairs *pairs, gp__ic_sink sink,
                          void *arg);

/* What the lanes' sweeps read: the view's GPU events, the thread that launched each
 * (GP__IC_NO_THREAD: unknown), the analysed window [lo, hi) and the rank's main launching thread
 * (GP__IC_NO_THREAD: none). */
typedef struct gp__ic_sweep {
    const gp__gev *g;
    const uint32_t *thread;
    gp_ns lo, hi;
    uint32_t main_thread;
} gp__ic_sweep;

/* A lane's idle intervals inside the analysed window, one at a time (gp__ic_next): its work w[0,
 * n) by start, the time covered so far and the last launching thread seen. Copying a cursor keeps
 * its place. */
typedef struct gp__ic_cursor {
    const uint32_t *w;
    size_t n, i;
    gp_ns cover;
    uint32_t prev;
    bool done;
} gp__ic_cursor;

static inline void gp__ic_cursor_init(const gp__ic_sweep *sw, gp__ic_cursor *k, const uint32_t *w,
                                      size_t n)
{
    *k = (gp__ic_cursor){.w = w, .n = n, .cover = sw->lo, .prev = GP__IC_NO_THREAD};
}

/* The thread that launched the work (GP__IC_NO_THREAD: unknown), else fallback, else the rank's
 * main launching thread. */
static inline uint32_t gp__ic_thread_of(const gp__ic_sweep *sw, uint32_t thread, uint32_t fallback)
{
    if (thread != GP__IC_NO_THREAD)
        return thread;
    return fallback != GP__IC_NO_THREAD ? fallback : sw->main_thread;
}

/* The next idle interval [*s, *e) and the thread that launched the work ending it (the last
 * launching thread for the interval after the last work; GP__IC_NO_THREAD when there is none).
 * false after the last. Inline: it runs once per interval and row in each of two sweeps. */
static inline bool gp__ic_next(const gp__ic_sweep *sw, gp__ic_cursor *k, gp_ns *s, gp_ns *e,
                               uint32_t *thread)
{
    while (k->i < k->n && k->cover < sw->hi) {
        uint32_t w = k->w[k->i++];
        const gp__gev *g = &sw->g[w];
        uint32_t launched = sw->thread[w];
        bool idle = g->ts > k->cover;
        if (idle) {
            *s = k->cover;
            *e = GP_MIN(g->ts, sw->hi);
            *thread = gp__ic_thread_of(sw, launched, k->prev);
        }
        k->cover = GP_MAX(k->cover, g->ts + g->dur);
        if (launched != GP__IC_NO_THREAD)
            k->prev = launched;
        if (idle)
            return true;
    }
    if (k->done || k->cover >= sw->hi)
        return false;
    k->done = true; /* the interval after the last work */
    *s = k->cover;
    *e = sw->hi;
    *thread = gp__ic_thread_of(sw, GP__IC_NO_THREAD, k->prev);
    return true;
}

/* A row to fill: its lane's work and the row (idle, by_cause), and its time per (cause, name). */
typedef struct gp__ic_row {
    const uint32_t *w;
    size_t n;
    gp_idle_causes *out;
    gp__ic_acc names;
} gp__ic_row;

/* Fills every row (idle time, totals and shares per cause, top names) in one pass over each
 * thread the rows' intervals name, with no stored timeline. The caller has checked that every
 * row's walk fits the budget (so that the stored timelines would name every row too); here the
 * rows' intervals must change thread at most a fixed number of times in all, else *done is false,
 * the rows are untouched and the stored timelines fill them. */
gp_status gp__ic_pass(gp__ic_ctx *c, const gp__ic_sweep *sw, const gp_trace *t, gp__ic_row *rows,
                      size_t n_rows, bool *done);

/* The row's share of idle time per cause, and no top names yet. */
void gp__ic_shares(gp_idle_causes *row);
/* Fills the top name of each cause from the row's time per name (ties: the smaller name). */
void gp__ic_top_names(const gp_trace *t, gp_idle_causes *r, const gp__ic_acc *names);

#endif
