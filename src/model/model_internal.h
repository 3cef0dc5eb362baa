/* The private half of a trace: what gp_trace_create allocates around the public gp_trace, shared
 * by model.c and the readers of src/io (their merge and finish steps grow and drop the arrays in
 * bulk). Nothing outside src/model and src/io includes this header: analyses, renderers and front
 * ends read a trace through include/gpuprof/trace.h only. */
#ifndef GP_TRACE_MODEL_INTERNAL_H
#define GP_TRACE_MODEL_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>

#include "core/imap.h"
#include "core/strtab.h"
#include "core/util.h"
#include "gpuprof/trace.h"

/* One half of a flow arrow as read (ph s or f), paired by id when the read ends. */
typedef struct gp__flow_point {
    int64_t id;
    gp_strid cat;
    gp_strid name;
    gp_ns ts;
    int64_t pid, tid;          /* numeric ids, or negative keys of string ids (see the reader) */
    gp_strid pid_str, tid_str; /* string ids when pid_is_str / tid_is_str */
    bool pid_is_str, tid_is_str;
    uint8_t is_end;
} gp__flow_point;

/* Builder state: the indexes that make adding a track or a metadata member O(1), and the flow
 * points a reader pairs when it finishes. */
typedef struct gp__trace_priv {
    /* (kind, pid, tid) -> track: open addressing; a slot holds the track index + 1 (low 32 bits,
     * 0: empty) and the high 32 bits of the key's hash (so a probe rarely reads a track), and a
     * match is confirmed against the track itself. A lookup or an insert is O(1) whatever the
     * number of tracks (#21 item 6). n_track_slots: a power of two, at least twice the tracks. */
    uint64_t *track_slots;
    size_t n_track_slots;
    gp__flow_point *flow_points;
    size_t n_flow_points, cap_flow_points;
    /* meta key (strid) -> index into t->meta, built by gp_trace_set_meta once there are
     * META_INDEX_FROM members (a scan per member was quadratic in the members, issue 38). */
    gp__imap meta_index;
    bool meta_indexed;
} gp__trace_priv;

/* A trace as gp_trace_create allocates it: the public struct, then what only the model and its
 * readers touch. Every gp_trace is the `pub` member of one of these (gp_trace_create is the only
 * constructor), so gp__trace_impl_of recovers it at a constant offset: no pointer to follow and
 * nothing private in the public header (docs/internals/model.md, "Public and private"). */
typedef struct gp__trace_impl {
    gp_trace pub;
    /* Capacities of the public arrays (n_* <= cap_*), and of each track's events: cap_events[i]
     * for tracks[i] (room for cap_events_room entries, at least n_tracks). */
    size_t cap_tracks, cap_gpu_info, cap_gpu_ext, cap_mem_info, cap_py_info, cap_counters,
        cap_flows;
    size_t cap_devices, cap_meta, cap_args, cap_op_shapes;
    size_t *cap_events, cap_events_room;
    /* The reader's progress, total / done (0: unknown): the large arrays grow to the size it
     * predicts instead of doubling (gp__trace_set_progress). */
    double grow_hint;
    gp__strtab strings; /* the interned strings (gp_trace_str, gp_trace_intern) */
    gp__trace_priv build;
} gp__trace_impl;

/* The private half of t, which gp_trace_create made. */
static inline gp__trace_impl *gp__trace_impl_of(gp_trace *t)
{
    return (gp__trace_impl *)(void *)((char *)t - offsetof(gp__trace_impl, pub));
}
static inline const gp__trace_impl *gp__trace_impl_const(const gp_trace *t)
{
    return (const gp__trace_impl *)(const void *)((const char *)t - offsetof(gp__trace_impl, pub));
}
/* The string table of t. */
static inline gp__strtab *gp__trace_strtab(gp_trace *t)
{
    return &gp__trace_impl_of(t)->strings;
}
/* The builder state of t. */
static inline gp__trace_priv *gp__trace_build(gp_trace *t)
{
    return &gp__trace_impl_of(t)->build;
}

/* A reader has read `done` of its input's `total` bytes (total 0 or done 0: unknown). Until the
 * next call, the arrays that a reader fills (each track's events, the side tables) grow, once past
 * GP__GROW_BY_PROGRESS bytes, to twice the size this progress predicts for them (their count times
 * total / done, times 2; at most 32 times their count) instead of to twice their room. Growing a
 * large block moves it (glibc's realloc remaps it elsewhere); on a host with shadow page tables
 * the first touch of every moved page then costs as much as a page fault (issue 37,
 * docs/decisions/growth-by-progress.md). Room never written is not resident: the peak RSS is
 * unchanged, and gp_trace_finish gives back what such a growth left over and forgets the
 * progress. */
void gp__trace_set_progress(gp_trace *t, uint64_t done, uint64_t total);
#define GP__GROW_BY_PROGRESS ((size_t)1 << 20)
/* Grows (data, cap) of elements of `elem` bytes to room for `need`, as above. GP_ENOMEM, both
 * unchanged. */
gp_status gp__trace_grow(const gp__trace_impl *m, void **data, size_t *cap, size_t elem,
                         size_t need) GP_WARN_UNUSED;
/* Tests: growths that took the prediction's size, counted (relaxed atomic: pieces of a parallel
 * read grow their traces on several threads). */
extern _Atomic unsigned long gp__trace_progress_growths;

/* Appends a zeroed event to track k of t (which must exist) and returns it, NULL when out of
 * memory. The readers' per-event path (gp_trace_add_event checks the track and copies). */
static inline gp_event *gp__trace_push_event(gp_trace *t, uint32_t k)
{
    gp__trace_impl *m = gp__trace_impl_of(t);
    gp_track *tr = &t->tracks[k];
    if (tr->n_events >= m->cap_events[k] &&
        gp__trace_grow(m, (void **)&tr->events, &m->cap_events[k], sizeof *tr->events,
                       tr->n_events + 1) != GP_OK)
        return NULL;
    return &tr->events[tr->n_events++];
}

/* Makes room for at least need events on track k (n_events unchanged). GP_ENOMEM. */
gp_status gp__trace_reserve_events(gp_trace *t, uint32_t k, size_t need) GP_WARN_UNUSED;
/* Frees track k's events (n_events = 0): a merge drops a source's arrays once copied. */
void gp__trace_drop_events(gp_trace *t, uint32_t k);

/* Stable sort by (ts, longer first). */
void gp__sort_events(gp_event *ev, size_t n);
/* ev[0, n) sorted as gp__sort_events would, given ev[0, mid) and ev[mid, n) each sorted by it: a
 * stable merge (the first part's events first among equals), which is the stable sort of the
 * whole. Never fails: without memory for its buffer it sorts the whole as gp__sort_events does. */
void gp__merge_sorted_events(gp_event *ev, size_t mid, size_t n);

/* gp_trace_finish for a trace whose every track the caller has sorted with gp__sort_events (the
 * parallel read's merge): the same, without the comparison pass over every event that would find
 * them sorted. */
gp_status gp__trace_finish_sorted(gp_trace *t);

#endif
