/* Internal state of a trace under construction, shared by model.c and the readers. */
#ifndef GP_TRACE_MODEL_INTERNAL_H
#define GP_TRACE_MODEL_INTERNAL_H

#include "core/imap.h"
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

typedef struct gp__trace_priv {
    /* (kind, pid, tid) -> track: open addressing; a slot holds the track index + 1 (low 32 bits,
     * 0: empty) and the high 32 bits of the key's hash (so a probe rarely reads a track), and a
     * match is confirmed against the track itself. A lookup or an insert is O(1) whatever the
     * number of tracks (#21 item 6). n_track_slots: a power of two, at least twice the tracks. */
    uint64_t *track_slots;
    size_t n_track_slots;
    gp__flow_point *flow_points;
    size_t n_flow_points, cap_flow_points;
    bool sorted;
    /* meta key (strid) -> index into t->meta, built by gp_trace_set_meta once there are
     * META_INDEX_FROM members (a scan per member was quadratic in the members, issue 38). */
    gp__imap meta_index;
    bool meta_indexed;
} gp__trace_priv;

/* Stable sort by (ts, longer first). */
void gp__sort_events(gp_event *ev, size_t n);

#endif
