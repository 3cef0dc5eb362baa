/* GPU activity records -> the trace model, independent of the API that produced them.
 *
 * CUPTI's activity records (the tracer, src/produce/tracer/convert.c, reads them through the CUDA
 * headers' structs), and any later source of the same facts (an Nsight Systems export, a Perfetto
 * trace with GPU tracks), describe kernels, copies, memsets and synchronisations with the same
 * fields: times in ns, device, context, stream, correlation id, launch geometry, bytes, copy and
 * memory kinds. This file maps such fields to events, GPU side records and Kineto-style tracks
 * once, so that every reader of such records gives the model Kineto's JSON would have given (the
 * names "Memcpy HtoD (Pageable -> Device)", the rows "GPU 0" / "stream 7", stream -1 for "no
 * stream", occupancy from the device's properties). The reader registry (io/formats.h) lists CUPTI
 * records as the entry that uses it. Internal (gp__ prefix). */
#ifndef GP_IO_GPU_RECORDS_H
#define GP_IO_GPU_RECORDS_H

#include <stdbool.h>
#include <stdint.h>

#include "gpuprof/trace.h"

/* What a record mapping saw of the times (the caller keeps its other counts). */
typedef struct gp__grec_times {
    uint64_t bad_time; /* records with a zero start time: skipped */
    uint64_t clamped;  /* end before start: kept with duration 0 */
} gp__grec_times;

/* One GPU operation on a stream: a kernel, a copy or a memset (ev->kind says which). */
typedef struct gp__grec_gpu_op {
    gp_event_kind kind; /* GP_EV_KERNEL, GP_EV_MEMCPY or GP_EV_MEMSET */
    uint64_t start, end;
    uint32_t correlation;
    uint32_t device, context;
    int64_t stream; /* -1: none (gp__grec_stream maps CUPTI's invalid id) */
    gp_strid name;  /* kernels: the (demangled) kernel name; copies and memsets: 0 (named here) */
    /* kernels */
    int32_t grid[3], block[3];
    int32_t registers_per_thread;
    int32_t shared_memory; /* static + dynamic */
    /* copies and memsets: CUPTI's enum values, which are Kineto's words' order */
    unsigned copy_kind, src_kind, dst_kind; /* memset: dst_kind is its memory kind */
    uint64_t bytes;
    uint32_t graph_id; /* 0: not in a CUDA graph */
    uint64_t graph_node_id;
} gp__grec_gpu_op;

/* Kineto's copy-kind and memory-kind words ("HtoD", "Pageable"); "Unknown" when out of range. */
const char *gp__grec_copy_kind(unsigned kind);
const char *gp__grec_memory_kind(unsigned kind);

/* A stream id as the model keeps it: CUPTI's invalid id (0xffffffff) is -1. */
static inline int64_t gp__grec_stream(uint32_t s)
{
    return s == UINT32_MAX ? -1 : (int64_t)s;
}

/* Fills ev's ts and dur from a [start, end] pair in ns. False (counted in times->bad_time) when
 * start is 0, i.e. the record has no time; an end before the start gives duration 0, flagged
 * GP_EVF_DUR_CLAMPED and counted. */
bool gp__grec_set_times(gp__grec_times *times, gp_event *ev, uint64_t start, uint64_t end);

/* The device of t with id, or NULL. */
const gp_device_props *gp__grec_find_device(const gp_trace *t, uint32_t id);

/* Finds or creates a track; a new one gets Kineto-style row names: "GPU <pid>" / "stream <tid>"
 * for GPU streams, cpu_process_name (0: none) on CPU threads. GP_ENOMEM. */
gp_status gp__grec_track(gp_trace *t, gp_strid cpu_process_name, gp_track_kind kind, int64_t pid,
                         int64_t tid, uint32_t *out) GP_WARN_UNUSED;

/* Adds ev with its GPU side record gi on the stream track (device, stream). GP_ENOMEM. */
gp_status gp__grec_add_on_stream(gp_trace *t, gp_event *ev, gp_gpu_info *gi, uint32_t device,
                                 int64_t stream) GP_WARN_UNUSED;

/* Adds one kernel, copy or memset. A record without a start time is skipped (GP_OK, counted in
 * times). Copies are named "Memcpy <kind> (<src> -> <dst>)", memsets "Memset (<kind>)"; a
 * kernel's blocks and warps per SM come from the device's properties when t has them. GP_ENOMEM. */
gp_status gp__grec_add_gpu_op(gp_trace *t, gp__grec_times *times,
                              const gp__grec_gpu_op *op) GP_WARN_UNUSED;

#endif
