/* Conversion of CUPTI activity records into the gp_trace model: this file reads the records
 * through CUPTI's structs; what a kernel, copy, memset or sync becomes in the model (names, tracks,
 * side records) is io/gpu_records.h, which other readers of GPU activity share.
 *
 * One converter per traced process. It dispatches on the record kind and reads each record through
 * the struct of the CUDA headers the tracer was built with (CUpti_ActivityKernel10, Memcpy6, ...).
 * Records may arrive in any order and from several threads' buffers: callers serialise calls
 * (the injection library holds its lock). Internal (gp__ prefix); not installed. */
#ifndef GP_TRACER_CONVERT_H
#define GP_TRACER_CONVERT_H

#include <stdint.h>

#include "core/imap.h"
#include "gpuprof/trace.h"
#include "produce/tracer/cupti_api.h"

/* What the converter saw. */
typedef struct gp__tconv_stats {
    uint64_t records;   /* every record handed in */
    uint64_t kernels;   /* CONCURRENT_KERNEL / KERNEL */
    uint64_t memcpys;   /* MEMCPY and MEMCPY2 (peer) */
    uint64_t memsets;   /* MEMSET */
    uint64_t api_calls; /* RUNTIME + DRIVER */
    uint64_t syncs;     /* SYNCHRONIZATION */
    uint64_t markers;   /* NVTX ranges closed + instant marks */
    uint64_t memory;    /* MEMORY2 + MEMORY_POOL */
    uint64_t overhead;  /* OVERHEAD */
    uint64_t events;    /* CUDA_EVENT */
    uint64_t meta;      /* DEVICE, CONTEXT, NAME, MARKER_DATA: used, not events */
    uint64_t ignored;   /* kinds the tracer does not convert */
    uint64_t bad_time;  /* records with a zero start time: skipped */
    uint64_t clamped;   /* end before start: kept with duration 0 */
} gp__tconv_stats;

typedef struct gp__tconv_marker {
    gp_ns ts;
    gp_strid name;
    uint32_t track;
    uint32_t next_free; /* free-list link, valid when the slot is free */
} gp__tconv_marker;

typedef struct gp__tconv {
    gp_trace *trace;       /* not owned */
    const gp__cupti *api;  /* for callback names; may be NULL */
    gp__imap kernel_names; /* name pointer -> gp_strid (demangled once) */
    gp__imap api_names;    /* domain << 32 | cbid -> gp_strid */
    gp__imap ctx_device;   /* context id -> device id */
    gp__imap open_markers; /* NVTX range id -> slot in markers[]; UINT64_MAX once closed */
    gp__tconv_marker *markers;
    size_t n_markers, cap_markers;
    uint32_t free_marker;  /* head of the free list, UINT32_MAX when empty */
    int64_t mem_total[64]; /* bytes allocated per device (MEMORY2 records) */
    gp_strid s_memory, s_cuda_event, s_sync[5];
    gp_strid process_name; /* process_name of CPU rows (0 = none); set by the caller */
    gp__tconv_stats stats;
} gp__tconv;

/* Prepares a converter that appends to t (not owned; must outlive the converter). api may be NULL
 * (API calls are then named "cbid N"). Kernel names are demangled with gp__demangle
 * (core/demangle.h: libiberty, linked in); a name it cannot demangle stays mangled. GP_ENOMEM. */
gp_status gp__tconv_init(gp__tconv *c, gp_trace *t, const gp__cupti *api) GP_WARN_UNUSED;

/* Converts one record into events / side records / devices of the trace. Kinds it does not know
 * are counted in stats.ignored and succeed. Fails only with GP_ENOMEM (the trace keeps what was
 * added before). */
gp_status gp__tconv_record(gp__tconv *c, const CUpti_Activity *rec) GP_WARN_UNUSED;

/* Number of NVTX ranges started but not yet ended. */
size_t gp__tconv_open_ranges(const gp__tconv *c);

/* Frees the converter's own tables (not the trace). */
void gp__tconv_free(gp__tconv *c);

#endif
