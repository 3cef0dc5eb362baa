/* The memory timeline of `gpuprof memory` (docs/internals/analyze.md, "Memory timeline"): per rank,
 * device and allocator, the allocator's level over time from the "[memory]" events, the peak and
 * what was live at it (grouped by the op that allocated it and the Python line, when the trace has
 * stacks), and the allocation and free rates. Computes; prints nothing (render/memory_render.h
 * formats it). */
#ifndef GP_ANALYZE_MEMORY_TIMELINE_H
#define GP_ANALYZE_MEMORY_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "gpuprof/trace.h"

/* A group of the blocks live at the peak: the same allocating op and Python line. */
typedef struct gp__mem_live {
    const char *op;  /* innermost CPU op running when the block was allocated ("" if none) */
    const char *py;  /* innermost Python frame outside torch's own files ("" if no stacks) */
    uint64_t blocks; /* number of live blocks */
    int64_t bytes;   /* their sizes added up */
    int64_t largest; /* the largest block */
    gp_ns first_ts;  /* the earliest allocation among them */
} gp__mem_live;

/* One point of the curve: the allocator's level after the event at ts. */
typedef struct gp__mem_point {
    gp_ns ts;
    int64_t allocated; /* bytes */
    int64_t reserved;  /* bytes; -1 when the trace does not say */
} gp__mem_point;

/* One allocator of one device of one rank ("[memory]" events with the same Device Type and Id). */
typedef struct gp__mem_device {
    int32_t rank;
    int32_t device_type; /* 0 CPU, 1 CUDA, ... as Kineto writes it */
    int32_t device_id;
    uint64_t events, allocs, frees;
    int64_t bytes_allocated, bytes_freed; /* sums of the positive / negative Bytes */
    gp_ns first_ts, last_ts;              /* first and last event */
    double allocs_per_s, frees_per_s;     /* over last_ts - first_ts; 0 when it is 0 */
    double alloc_bytes_per_s, free_bytes_per_s;
    bool from_totals;        /* levels are the trace's "Total Allocated" (else a running sum) */
    int64_t start_allocated; /* the level at the first event, before it */
    int64_t peak_allocated;  /* the highest level, bytes */
    gp_ns peak_ts;           /* the event that reached it (its first time) */
    int64_t peak_reserved;   /* highest "Total Reserved", -1 if none */
    int64_t final_allocated; /* the level after the last event */
    const char *peak_op;     /* the op running at the peak (as gp__mem_live.op) */
    const char *peak_py;     /* the Python line at the peak (as gp__mem_live.py) */
    bool has_addresses;    /* the events carry Addr (not 2021 traces): the live fields are valid */
    int64_t live_traced;   /* bytes of the blocks allocated in the trace and live at the peak */
    uint64_t live_blocks;  /* their number */
    int64_t live_untraced; /* peak_allocated - live_traced: allocated before the trace began */
    gp__mem_live *live;    /* groups, largest bytes first (ties: op, then line) */
    size_t n_live;
    gp__mem_point *curve; /* every event's level, or at most max_points (each bucket's highest) */
    size_t n_curve;
} gp__mem_device;

typedef struct gp__mem_timeline {
    gp__mem_device *devices; /* by rank, device type (the CPU last), device id */
    size_t n_devices;
    bool has_stacks; /* some trace has Python frames */
} gp__mem_timeline;

/* Builds the timeline of the n traces (ranks) into out (zeroed first; freed with
 * gp__mem_timeline_free, also after a failure). max_points caps each curve (0: 1000); max_live
 * caps the groups kept per device (0: all). Devices without events are absent; a trace without
 * "[memory]" events adds nothing (out->n_devices 0 is not an error). GP_ENOMEM. */
gp_status gp__mem_timeline_build(const gp_trace *const *traces, size_t n, size_t max_points,
                                 size_t max_live, gp__mem_timeline *out) GP_WARN_UNUSED;

/* Frees what gp__mem_timeline_build allocated; the strings belong to the traces. */
void gp__mem_timeline_free(gp__mem_timeline *m);

/* "CPU", "CUDA", ... for a Kineto device type ("device type N" beyond the known ones, in buf). */
const char *gp__mem_device_type_name(int32_t type, char *buf, size_t cap);

#endif
