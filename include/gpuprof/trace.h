/* gpuprof trace model: the one representation every producer fills and every consumer reads.
 *
 * A gp_trace is one process / rank: tracks (a CPU thread, a GPU stream, a counter row), each
 * holding compact fixed-size gp_event records sorted by start time; side tables for the
 * kind-specific fields (kernel launch geometry, copy bytes, memory-allocator samples, Python frame
 * ids); flows; device properties; distributed info. A gp_job is a set of rank traces.
 *
 * Times are int64 nanoseconds on one clock per trace. For traces read from Kineto JSON the clock is
 * the file's: absolute = baseTimeNanoseconds + ts, parsed exactly from the "µs.nnn" text.
 * Names are interned: events carry a gp_strid; gp_trace_str() turns it back into text.
 *
 * Ownership: a gp_trace owns all its memory; gp_trace_free() releases it. Pointers into a trace
 * (track arrays, event arrays, strings) stay valid until the trace is modified or freed.
 * Thread-safety: a finished trace may be read from several threads; building one is
 * single-threaded. */
#ifndef GPUPROF_TRACE_H
#define GPUPROF_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gpuprof/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int64_t gp_ns;     /* nanoseconds */
typedef uint32_t gp_strid; /* interned string id; 0 is the empty string */

/* What an event is. Stable values: written into JSON profiles by name (gp_event_kind_name). */
typedef enum gp_event_kind {
    GP_EV_CPU_OP = 0,          /* cpu_op / legacy Operator */
    GP_EV_USER_ANNOTATION,     /* user_annotation (record_function, ProfilerStep#N) */
    GP_EV_GPU_USER_ANNOTATION, /* gpu_user_annotation: GPU-side span of an annotation */
    GP_EV_PYTHON,              /* python_function frame */
    GP_EV_RUNTIME,             /* cuda_runtime / legacy Runtime (incl. hip* calls) */
    GP_EV_DRIVER,              /* cuda_driver (cuLaunchKernel ...) */
    GP_EV_KERNEL,              /* kernel / legacy Kernel */
    GP_EV_MEMCPY,              /* gpu_memcpy / legacy Memcpy */
    GP_EV_MEMSET,              /* gpu_memset / legacy Memset */
    GP_EV_SYNC,                /* cuda_sync (Stream Sync, Event Sync, Context Sync, ...) */
    GP_EV_MEMORY,              /* "[memory]" allocator instant event */
    GP_EV_RANGE,               /* a gpuprof in-process range or NVTX range */
    GP_EV_COUNTER,             /* counter sample (stored in gp_trace.counters, not in tracks) */
    GP_EV_OVERHEAD,            /* profiler overhead (cat "overhead") */
    GP_EV_INSTANT,             /* any other instant event (ph "i") */
    GP_EV_OTHER,               /* complete event of an unknown category (kept: gp_event_category) */
    GP_EV_KIND_COUNT
} gp_event_kind;

/* Short stable name of a kind: "cpu_op", "kernel", ... (the Kineto cat where there is one). */
GP_EXTERN const char *gp_event_kind_name(gp_event_kind kind);
/* Inverse of gp_event_kind_name; also accepts the plural CLI spellings ("kernels", "memcpy",
 * "runtime", "annotations", ...). GP_EINVAL when unknown (*out untouched). */
GP_EXTERN gp_status gp_event_kind_parse(const char *name, gp_event_kind *out) GP_WARN_UNUSED;
/* True for kinds that run on a GPU stream (kernel, memcpy, memset, sync, gpu annotation). */
GP_EXTERN bool gp_event_kind_is_gpu(gp_event_kind kind);
/* True for GPU work proper: kernel, memcpy, memset ("GPU work", docs/analyses.md "Terms"). */
GP_EXTERN bool gp_event_kind_is_gpu_work(gp_event_kind kind);
/* True for kinds whose events have a duration (all but memory samples, instants, counters). */
GP_EXTERN bool gp_event_kind_has_duration(gp_event_kind kind);

enum {
    GP_EVF_INSTANT = 1u << 0,     /* an instant (ph "i"); dur is 0 */
    GP_EVF_DUR_CLAMPED = 1u << 1, /* the source had a negative duration, clamped to 0 */
    GP_EVF_NO_DUR = 1u << 2,      /* the source had no "dur" on a complete event */
    /* GPU event whose source had no args.stream: the stream was taken from the row (tid). Kineto
     * writes GPU-side annotations (cat gpu_user_annotation) this way; HTA counts as GPU work only
     * events with an args.stream, so its mode leaves these out. */
    GP_EVF_STREAM_FROM_TID = 1u << 3,
};

/* One event: 48 bytes. extra holds one of seven things, by kind; read and write it through the
 * accessor of its meaning ("gp_event.extra", below the queries), never raw:
 *   kernel/memcpy/memset/sync/gpu annotation -> gp_trace.gpu_info[extra-1]  gp_event_gpu_info
 *   memory                                   -> gp_trace.mem_info[extra-1]  gp_event_mem_info
 *   python                                   -> gp_trace.py_info[extra-1]   gp_event_py_info
 *   range / instant                          -> gp_trace.args[extra-1], the "args" JSON object
 *                                               text                        gp_event_args_json
 *   other (unknown category)                 -> the gp_strid of the category gp_event_category
 *   runtime/driver                           -> the CUPTI callback id (cbid) + 1, 0 = unknown
 *                                                                           gp_event_cbid
 *   cpu_op                                   -> args.stream + 1 when the op carries one
 *                                               (Inductor's Triton launches do), 0 = none
 *                                                                           gp_event_cpu_stream
 * The side-table indices are set by gp_trace_add_gpu_info / _mem_info / _py_info / _args (their
 * extra_out); the three ids by gp_event_set_category / _set_cbid / _set_cpu_stream. */
typedef struct gp_event {
    gp_ns ts;            /* start */
    gp_ns dur;           /* duration, >= 0 */
    int64_t correlation; /* links a runtime/driver launch to its GPU work; 0 = none */
    int64_t external_id; /* links GPU work / launches to the CPU op or annotation; 0 = none */
    gp_strid name;
    uint32_t extra;
    uint32_t track; /* index into gp_trace.tracks */
    uint8_t kind;   /* gp_event_kind */
    uint8_t flags;  /* GP_EVF_* */
    uint16_t reserved;
} gp_event;

typedef enum gp_track_kind {
    GP_TRACK_CPU_THREAD = 0, /* pid / tid of an OS thread */
    GP_TRACK_GPU_STREAM,     /* device / stream */
    GP_TRACK_COUNTER,        /* counter samples (memory, monitor metrics) */
    GP_TRACK_OTHER           /* rows such as pid "Spans"; string pid/tid kept in pid_str/tid_str */
} gp_track_kind;

typedef struct gp_track {
    gp_track_kind kind;
    int64_t pid;           /* OS pid, or device index for GPU rows as written by Kineto */
    int64_t tid;           /* OS tid, or stream id for GPU rows */
    int32_t device;        /* GPU index for GPU tracks, -1 otherwise */
    int64_t stream;        /* stream id for GPU tracks (-1 = none: device/event sync), else -1 */
    bool pid_is_str;       /* the source pid was a (non-numeric) string, kept in pid_str */
    bool tid_is_str;       /* the source tid was a (non-numeric) string, kept in tid_str */
    gp_strid pid_str;      /* the string pid (0 when it was the empty string) */
    gp_strid tid_str;      /* the string tid */
    gp_strid name;         /* thread_name metadata ("stream 7 "), 0 if none */
    gp_strid process_name; /* process_name metadata, 0 if none */
    int64_t sort_index;    /* thread_sort_index metadata, or tid */
    gp_event *events;      /* sorted by ts (ties: longer first), after gp_trace_finish() */
    size_t n_events;
} gp_track;

/* Kind-specific fields of GPU work. Fields absent from the source are -1 (or +0.0 for floats; a
 * float the source gave as 0 is -0.0, which compares equal to 0, so that writers tell the two
 * apart: `convert` writes the zeros back). A sync's wait and a collective's message live in a
 * gp_gpu_ext record that `ext` points to (gp_gpu_info_ext), kept only for the events that have
 * one: 104 bytes here instead of 168 for every GPU event (docs/internals/model.md, "Side
 * records"). */
typedef struct gp_gpu_info {
    int32_t device;
    int32_t context;
    int64_t stream;
    int32_t grid[3];
    int32_t block[3];
    int32_t registers_per_thread;
    int32_t shared_memory; /* bytes of static+dynamic shared memory */
    float blocks_per_sm;
    float warps_per_sm;
    float occupancy_pct; /* "est. achieved occupancy %" */
    int32_t queued;
    int64_t bytes;         /* memcpy/memset */
    double bandwidth_gbps; /* "memory bandwidth (GB/s)" */
    int64_t graph_id;      /* CUDA graph, -1 if none */
    int64_t graph_node_id;
    gp_strid copy_kind; /* AMD "kind" ("HtoD") */
    /* 1-based index into gp_trace.gpu_ext, 0 = none (every field absent); set by
     * gp_trace_add_gpu_ext, read through gp_gpu_info_ext. */
    uint32_t ext;
} gp_gpu_info;

/* The rarer fields of GPU work: a cuda_sync's wait and a collective kernel's message (one record
 * per sync row and per collective kernel with args; 64 bytes). Absent fields are -1 (integers) or
 * 0 (strings), as in gp_gpu_info. */
typedef struct gp_gpu_ext {
    int64_t wait_on_stream; /* cuda_sync wait_on_stream */
    /* cuda_sync wait_on_cuda_event_record_corr_id: the correlation id of the cudaEventRecord
     * call an Event Sync or Stream Wait Event waits for */
    int64_t wait_on_event_corr;
    int64_t in_msg_nelems;  /* NCCL "In msg nelems" */
    int64_t out_msg_nelems; /* NCCL "Out msg nelems" */
    int32_t group_size;     /* NCCL "Group size" */
    gp_strid sync_kind;     /* cuda_sync_kind ("Stream Sync", ...) */
    gp_strid collective;    /* NCCL "Collective name" */
    gp_strid dtype;
    /* PyTorch's process-group args of a collective kernel (0 when absent): "Process Group Name",
     * "Process Group Description", "Process Group Ranks" (PyTorch writes a string such as
     * "[0, 1]"; a JSON array is kept as its text). */
    gp_strid pg_name;
    gp_strid pg_desc;
    gp_strid pg_ranks;
} gp_gpu_ext;

/* A "[memory]" allocator sample: an allocation (bytes > 0) or a free (bytes < 0). */
typedef struct gp_mem_info {
    int64_t addr;
    int64_t bytes;
    int64_t total_allocated; /* -1 if absent */
    int64_t total_reserved;  /* -1 if absent */
    int32_t device_type;     /* 0 CPU, 1 CUDA, ... as Kineto writes it */
    int32_t device_id;
} gp_mem_info;

typedef struct gp_py_info {
    int64_t id;
    int64_t parent_id; /* -1 at a root (null in the source) */
} gp_py_info;

/* A counter sample: one value of a series at a time. */
typedef struct gp_counter_sample {
    gp_ns ts;
    double value;
    gp_strid series; /* e.g. "gpu0.memory_used_bytes" */
    uint32_t track;
} gp_counter_sample;

/* A flow arrow between two events (fwdbwd, user flows). Launch->GPU flows (ac2g) are not stored:
 * they are implied by equal correlation ids and regenerated by the writer. */
typedef struct gp_flow {
    int64_t id;
    gp_strid cat;
    gp_strid name;
    uint32_t src_track;
    uint32_t dst_track;
    gp_ns src_ts;
    gp_ns dst_ts;
} gp_flow;

/* The record_shapes fields of one cpu_op, kept only when the trace is read with
 * gp_read_opts.keep_op_shapes: each is the JSON text of the op's args member as the file wrote it
 * ("[[4,197,768],[768,3072],[]]"), 0 when the member is absent. Looked up by External id
 * (gp_trace_op_shapes); the Chrome writer does not write them back. */
typedef struct gp_op_shapes {
    int64_t external_id; /* the op's External id */
    gp_strid dims;       /* "Input Dims" */
    gp_strid types;      /* "Input type" */
    gp_strid strides;    /* "Input Strides" */
    gp_strid concrete;   /* "Concrete Inputs" */
} gp_op_shapes;

typedef struct gp_device_props {
    int32_t id;
    gp_strid name;
    int64_t total_global_mem;
    int32_t compute_major, compute_minor;
    int32_t num_sms;
    int32_t max_threads_per_block, max_threads_per_sm;
    int32_t regs_per_block, regs_per_sm;
    int32_t warp_size;
    int64_t shared_mem_per_block, shared_mem_per_sm, shared_mem_per_block_optin;
} gp_device_props;

typedef struct gp_dist_info {
    bool present;       /* distributedInfo was in the source */
    int32_t rank;       /* -1 if unknown */
    int32_t world_size; /* -1 if unknown */
    gp_strid backend;
    gp_strid nccl_version;
    int32_t pg_count;
} gp_dist_info;

/* A top-level metadata entry kept verbatim (cupti_version, traceName, ...). value is the JSON text.
 */
typedef struct gp_meta {
    gp_strid key;
    gp_strid value_json;
} gp_meta;

/* What the reader saw and what it did about it. */
typedef struct gp_read_stats {
    uint64_t bytes;                     /* bytes of JSON text read (after decompression) */
    uint64_t events_in;                 /* elements of traceEvents */
    uint64_t by_kind[GP_EV_KIND_COUNT]; /* events kept, per kind */
    uint64_t metadata_events;           /* ph M */
    uint64_t flow_points;               /* ph s/f/t */
    uint64_t negative_dur;              /* clamped to 0, kept */
    uint64_t absurd_dur;                /* dur > 7 days: dropped */
    uint64_t no_dur;                    /* ph X without dur: kept with dur 0 */
    uint64_t unknown_cat;               /* kept as GP_EV_OTHER */
    uint64_t skipped;                   /* unsupported ph or missing fields */
    uint32_t threads_used;              /* threads that parsed the input (1: a sequential read) */
    uint32_t pieces;                    /* pieces the input was parsed in (1: sequential) */
    /* Leniencies (docs/trace.md, "What the reader accepts"): */
    uint64_t quoted_times;        /* "ts" / "dur" written as strings ("123"), read as numbers */
    uint64_t gzip_trailing_bytes; /* bytes after the end of the gzip data, ignored */
    uint64_t gzip_trailing_at;    /* where they start in the compressed file */
    bool bom;                     /* the text began with a UTF-8 byte order mark, skipped */
    bool mapped;                  /* the plain file was parsed in place, mapped (opts.map) */
} gp_read_stats;

/* A trace as its users see it. Read-only for users: fill a trace only through the building
 * functions below (gp_trace_create, gp_trace_track, gp_trace_add_*, gp_trace_set_meta,
 * gp_trace_finish), and reach its strings through gp_trace_str / gp_trace_intern & co. The
 * arrays' capacities, the string table and the builder's indexes live in a private struct that
 * gp_trace_create allocates around this one: a gp_trace is never declared, copied or allocated
 * by a user, only pointed to. Each array below holds exactly its n_* elements. */
typedef struct gp_trace {
    gp_strid source;           /* path the trace was read from, or a producer's name */
    int32_t rank;              /* dist.rank, or the job's file-order index when absent */
    bool rank_from_file_order; /* rank was not in the source */
    gp_dist_info dist;
    gp_ns base_time_ns;     /* Kineto baseTimeNanoseconds; 0 when times are absolute */
    int32_t schema_version; /* -1 if absent */
    gp_strid display_time_unit;

    gp_track *tracks;
    size_t n_tracks;
    gp_gpu_info *gpu_info;
    size_t n_gpu_info;
    gp_gpu_ext *gpu_ext; /* the records gp_gpu_info.ext points to */
    size_t n_gpu_ext;
    gp_mem_info *mem_info;
    size_t n_mem_info;
    gp_py_info *py_info;
    size_t n_py_info;
    gp_counter_sample *counters;
    size_t n_counters;
    gp_flow *flows;
    size_t n_flows;
    gp_device_props *devices;
    size_t n_devices;
    gp_meta *meta;
    size_t n_meta;
    gp_strid *args; /* "args" JSON object texts of range/instant events (see gp_event.extra) */
    size_t n_args;
    /* record_shapes args of cpu_ops (gp_op_shapes), sorted by external_id once finished; empty
     * unless read with keep_op_shapes. */
    gp_op_shapes *op_shapes;
    size_t n_op_shapes;

    gp_read_stats stats;
} gp_trace;

typedef struct gp_job {
    gp_trace **ranks; /* sorted by rank */
    size_t n_ranks;
    bool ranks_from_file_order; /* at least one trace lacked distributedInfo.rank */
} gp_job;

/* Traces as the read-only input every analysis and view takes, const gp_trace *const *: C
 * converts a gp_trace ** to it only by a cast, made here once (it adds const, never removes it).
 * gp_traces_const(&t) for one trace t; gp_job_traces(job) for a job's ranks. */
static inline const gp_trace *const *gp_traces_const(gp_trace *const *traces)
{
    return (const gp_trace *const *)traces;
}
static inline const gp_trace *const *gp_job_traces(const gp_job *job)
{
    return gp_traces_const(job->ranks);
}

/* ---- strings ---------------------------------------------------------------------------- */

/* The text of an interned id. Never NULL ("" for 0 and for out-of-range ids). */
GP_EXTERN const char *gp_trace_str(const gp_trace *t, gp_strid id);
/* Length in bytes of an interned string. */
GP_EXTERN size_t gp_trace_strlen(const gp_trace *t, gp_strid id);
/* Interns len bytes of s (need not be NUL-terminated). Writes the id to *out. GP_ENOMEM on failure.
 */
GP_EXTERN gp_status gp_trace_intern(gp_trace *t, const char *s, size_t len,
                                    gp_strid *out) GP_WARN_UNUSED;
/* Looks up a string without interning it; returns 0 when it is not in the table. */
GP_EXTERN gp_strid gp_trace_find_str(const gp_trace *t, const char *s, size_t len);
/* Number of distinct interned strings (ids are 1..count). */
GP_EXTERN size_t gp_trace_str_count(const gp_trace *t);

/* ---- reading ------------------------------------------------------------------------------ */

typedef struct gp_read_opts {
    bool keep_python; /* keep python_function frames (default true) */
    bool keep_memory; /* keep [memory] events (default true) */
    bool quiet;       /* for callers: the library never prints; suspect input is counted in stats */
    /* 0: automatic (uncompressed files of 48 MB or more are parsed on up to 4 threads, as many as
     * the machine has CPUs), 1: single-threaded, N >= 2: N threads (at most 16) for any
     * uncompressed file. Results never depend on it. */
    int threads;
    /* Progress: called every few MB with bytes read so far and the total (0 if unknown). */
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
    /* keep the record_shapes args of cpu_ops (Input Dims, Input type, Input Strides, Concrete
     * Inputs) in gp_trace.op_shapes (default false: they cost memory and only `gpuprof ops` reads
     * them) */
    bool keep_op_shapes;
    /* refuse any input that is not a regular file (FIFO, device, socket) at once, without
     * waiting for a writer, even when it was swapped in after the caller's own check (serve sets
     * it). Default false: the CLI reads `<(zcat t.json.gz)` and /dev/stdin, waiting for the
     * writer as cat would. */
    bool regular_files_only;
    /* parse a plain file in place, mapped, instead of reading it through read(2) (default false:
     * on the virtual machines measured in docs/decisions/mmap-read.md the page faults of a
     * mapping cost more than read(2)'s copy, up to 1.37x the time). A mapped file that another
     * process truncates during the read faults (SIGBUS) where read(2) reports a truncated input.
     * The environment variable GP_READ_MMAP=1 turns it on for every read of the process but
     * no_map's; GP_READ_MMAP=0 off everywhere. */
    bool map;
    /* never map, whatever map and GP_READ_MMAP say: a long-lived process reading files that may
     * be rewritten in place sets it (serve does) */
    bool no_map;
} gp_read_opts;

/* Fills opts with the defaults. */
GP_EXTERN void gp_read_opts_init(gp_read_opts *opts);

/* Reads a Kineto / Chrome JSON trace (.json or gzip-compressed, any name) into a new trace.
 * opts may be NULL for defaults. On success *out owns the trace (free with gp_trace_free).
 * Fails with GP_ENOENT (nothing at path), GP_EIO (cannot open/read), GP_EPARSE (malformed: err
 * names file and byte offset), GP_ENOMEM. Suspect values (negative or absurd durations, unknown
 * categories) do not fail the read: they are counted in (*out)->stats. */
GP_EXTERN gp_status gp_trace_read(const char *path, const gp_read_opts *opts, gp_trace **out,
                                  gp_error *err) GP_WARN_UNUSED;

/* As gp_trace_read, from memory; name is used in messages. data need not be NUL-terminated. */
GP_EXTERN gp_status gp_trace_read_buffer(const char *data, size_t len, const char *name,
                                         const gp_read_opts *opts, gp_trace **out,
                                         gp_error *err) GP_WARN_UNUSED;

/* Reads a job: a directory of rank traces (*.json, *.json.gz), or a single file (a job of one).
 * Ranks come from distributedInfo.rank; files without one (or with a rank another file already
 * has) get the lowest unused numbers in file-name order, and job->ranks_from_file_order is set.
 * Fails as gp_trace_read (GP_ENOENT when nothing is at path). */
GP_EXTERN gp_status gp_job_read(const char *path, const gp_read_opts *opts, gp_job **out,
                                gp_error *err) GP_WARN_UNUSED;

/* Whether gp_job_read takes a file named name (no folder) from a directory as a rank trace: a
 * name a format gpuprof reads claims (*.json, *.json.gz), not hidden. By name only (gpuprof serve
 * lists traces without opening them). */
GP_EXTERN bool gp_trace_file_name(const char *name);

/* Frees a trace or a job (and its traces). NULL is ignored. */
GP_EXTERN void gp_trace_free(gp_trace *t);
GP_EXTERN void gp_job_free(gp_job *job);

/* ---- building (for producers: the tracer, the in-process profiler, the monitor) ------------- */

/* Creates an empty trace. source names the producer or file (copied). */
GP_EXTERN gp_status gp_trace_create(const char *source, gp_trace **out) GP_WARN_UNUSED;

/* Finds or creates the track (kind, pid, tid). For GPU streams pass pid = device, tid = stream.
 * Writes its index to *out. */
GP_EXTERN gp_status gp_trace_track(gp_trace *t, gp_track_kind kind, int64_t pid, int64_t tid,
                                   uint32_t *out) GP_WARN_UNUSED;

/* Appends a copy of *ev to track ev->track (which must exist). Events may arrive in any order;
 * gp_trace_finish() sorts each track. */
GP_EXTERN gp_status gp_trace_add_event(gp_trace *t, const gp_event *ev) GP_WARN_UNUSED;

/* Append a side record; *extra_out receives the 1-based index to store in gp_event.extra. */
GP_EXTERN gp_status gp_trace_add_gpu_info(gp_trace *t, const gp_gpu_info *info,
                                          uint32_t *extra_out) GP_WARN_UNUSED;
/* Stores *x for a gp_gpu_info about to be added and writes the index to keep in its `ext` to
 * *ext_out: 0, storing nothing, when every field of *x is absent (as gp_gpu_ext_init leaves it).
 * GP_ENOMEM, GP_ELIMIT. */
GP_EXTERN gp_status gp_trace_add_gpu_ext(gp_trace *t, const gp_gpu_ext *x,
                                         uint32_t *ext_out) GP_WARN_UNUSED;
GP_EXTERN gp_status gp_trace_add_mem_info(gp_trace *t, const gp_mem_info *info,
                                          uint32_t *extra_out) GP_WARN_UNUSED;
GP_EXTERN gp_status gp_trace_add_py_info(gp_trace *t, const gp_py_info *info,
                                         uint32_t *extra_out) GP_WARN_UNUSED;
/* Stores an event's "args" JSON object text (must be a valid JSON object, e.g. {"size":1024}) for a
 * GP_EV_RANGE or GP_EV_INSTANT event; writers emit it verbatim. */
GP_EXTERN gp_status gp_trace_add_args(gp_trace *t, const char *json, size_t len,
                                      uint32_t *extra_out) GP_WARN_UNUSED;
GP_EXTERN gp_status gp_trace_add_counter(gp_trace *t, const gp_counter_sample *s) GP_WARN_UNUSED;
GP_EXTERN gp_status gp_trace_add_flow(gp_trace *t, const gp_flow *f) GP_WARN_UNUSED;
GP_EXTERN gp_status gp_trace_add_device(gp_trace *t, const gp_device_props *d) GP_WARN_UNUSED;
/* Adds or replaces a metadata entry; value_json must be valid JSON text (e.g. "\"13.0\"" or "12").
 */
/* Appends a cpu_op's record_shapes fields (ids interned in t). gp_trace_finish sorts them by
 * external_id. GP_ENOMEM. */
GP_EXTERN gp_status gp_trace_add_op_shapes(gp_trace *t, const gp_op_shapes *s) GP_WARN_UNUSED;
GP_EXTERN gp_status gp_trace_set_meta(gp_trace *t, const char *key,
                                      const char *value_json) GP_WARN_UNUSED;

/* Sorts every track by (ts, longer first) and counters by (track, ts), both stably (insertion
 * order among equals, so a trace written and read back keeps its order). Call once after
 * building; readers call it themselves. Idempotent. GP_ENOMEM. */
GP_EXTERN gp_status gp_trace_finish(gp_trace *t) GP_WARN_UNUSED;

/* A blank side record with every optional field set to "absent". */
GP_EXTERN void gp_gpu_info_init(gp_gpu_info *info);
GP_EXTERN void gp_gpu_ext_init(gp_gpu_ext *x);
/* True when every field of *x is absent. */
GP_EXTERN bool gp_gpu_ext_is_blank(const gp_gpu_ext *x);

/* ---- queries ---------------------------------------------------------------------------- */

/* Side records of an event, or NULL when it has none. */
GP_EXTERN const gp_gpu_info *gp_event_gpu_info(const gp_trace *t, const gp_event *ev);
/* The sync and collective fields of GPU work: never NULL; a blank record (every field absent) when
 * g (which may be NULL) has none. gp_event_gpu_ext(t, ev) is gp_gpu_info_ext of the event's info.
 */
GP_EXTERN const gp_gpu_ext *gp_gpu_info_ext(const gp_trace *t, const gp_gpu_info *g);
GP_EXTERN const gp_gpu_ext *gp_event_gpu_ext(const gp_trace *t, const gp_event *ev);
GP_EXTERN const gp_mem_info *gp_event_mem_info(const gp_trace *t, const gp_event *ev);
GP_EXTERN const gp_py_info *gp_event_py_info(const gp_trace *t, const gp_event *ev);
/* The args.stream of a cpu_op that carries one (torch.compile's Triton kernel launches record the
 * stream they launch on), else -1. */
GP_EXTERN int64_t gp_event_cpu_stream(const gp_event *ev);
/* The "args" JSON text of a range or instant event, or NULL. */
GP_EXTERN const char *gp_event_args_json(const gp_trace *t, const gp_event *ev);

/* ---- gp_event.extra: the ids an event carries in it (the side records are above) ---------- */

/* The category of an event of an unknown category (GP_EV_OTHER), 0 when none or another kind. */
static inline gp_strid gp_event_category(const gp_event *ev)
{
    return ev->kind == GP_EV_OTHER ? ev->extra : 0;
}
static inline void gp_event_set_category(gp_event *ev, gp_strid cat)
{
    ev->extra = cat; /* kind GP_EV_OTHER */
}
/* The CUPTI callback id of a runtime or driver call, -1 when unknown or another kind. */
static inline int64_t gp_event_cbid(const gp_event *ev)
{
    return (ev->kind == GP_EV_RUNTIME || ev->kind == GP_EV_DRIVER) && ev->extra
               ? (int64_t)ev->extra - 1
               : -1;
}
/* Sets the callback id (kind GP_EV_RUNTIME or GP_EV_DRIVER); one outside 0 .. 2^32 - 2 is
 * "unknown". */
static inline void gp_event_set_cbid(gp_event *ev, int64_t cbid)
{
    ev->extra = cbid >= 0 && cbid < (int64_t)UINT32_MAX ? (uint32_t)cbid + 1 : 0;
}
/* Sets the stream of a cpu_op (read by gp_event_cpu_stream); one outside 0 .. 2^32 - 3 is
 * "none". */
static inline void gp_event_set_cpu_stream(gp_event *ev, int64_t stream)
{
    ev->extra = stream >= 0 && stream < (int64_t)UINT32_MAX - 1 ? (uint32_t)stream + 1 : 0;
}
/* Whether a range or instant event has an "args" text (gp_event_args_json reads it). */
static inline bool gp_event_has_args(const gp_event *ev)
{
    return (ev->kind == GP_EV_RANGE || ev->kind == GP_EV_INSTANT) && ev->extra != 0;
}
/* The integer value of the member `key` of a range or instant event's args (the first member of
 * that name; ranges written by the profiler keep flat args such as {"mem_peak_bytes": 4096}):
 * true and *out when present and an integer, false otherwise. */
GP_EXTERN bool gp_event_arg_int(const gp_trace *t, const gp_event *ev, const char *key,
                                int64_t *out);

/* The record_shapes fields of the cpu_op with this External id (the first when several share it),
 * or NULL (none kept, or external_id <= 0). Binary search of a finished trace: O(log n). */
GP_EXTERN const gp_op_shapes *gp_trace_op_shapes(const gp_trace *t, int64_t external_id);

/* Total number of events over all tracks. */
GP_EXTERN size_t gp_trace_event_count(const gp_trace *t);
/* Earliest start and latest end over all events; both 0 for an empty trace. */
GP_EXTERN void gp_trace_span(const gp_trace *t, gp_ns *start, gp_ns *end);

/* Self (exclusive) time of every event of a track, in track order: the time during which it is the
 * innermost open event. On a CPU thread (or any non-GPU row) events nest by time: an event that
 * starts inside another is its child (torch's key_averages "Self CPU" is the parent's duration
 * minus its children's); a child that runs past its parent's end stays innermost until it ends.
 * On a GPU stream nothing nests: every event's self time is its duration (GPU-side annotations
 * are labels, not work; overlapping kernels are each their own time). Guarantees: 0 <= self <=
 * dur for each event, and on a non-GPU row the self times sum to the union of the row's events,
 * so to at most the row's span. self must hold tr->n_events values. GP_ENOMEM. */
GP_EXTERN gp_status gp_track_self_times(const gp_track *tr, gp_ns *self) GP_WARN_UNUSED;
/* True when the trace has any kernel, memcpy or memset event. */
GP_EXTERN bool gp_trace_has_gpu(const gp_trace *t);

/* ---- writing ---------------------------------------------------------------------------- */

/* Writes Chrome trace JSON that Kineto readers (HTA, Perfetto, chrome://tracing, gpuprof) accept:
 * ts/dur in µs with 3 decimals relative to baseTimeNanoseconds, `"rank": N` in distributedInfo,
 * ac2g flows for every correlation between a launch and GPU work. path ending in ".gz" is
 * compressed. The file is written atomically (temporary file + rename); on failure no partial file
 * is left behind and the old file, if any, is kept. */
GP_EXTERN gp_status gp_trace_write_chrome(const gp_trace *t, const char *path,
                                          gp_error *err) GP_WARN_UNUSED;
/* Writes the same JSON to an open stream (no atomicity, no compression). */
GP_EXTERN gp_status gp_trace_write_chrome_stream(const gp_trace *t, FILE *fp,
                                                 gp_error *err) GP_WARN_UNUSED;

/* An extra flow arrow for gp_trace_write_chrome_marked: from the start or end of one event of the
 * trace to the start or end of another (an edge of a critical path). */
typedef struct gp_chrome_link {
    const gp_event *src, *dst; /* events of the trace being written */
    bool src_end, dst_end;     /* the arrow leaves / reaches the event's end (else its start) */
    gp_ns weight;              /* written as args.weight, in us */
    const char *type;          /* written as args.type ("critical_path_dependency", ...) */
} gp_chrome_link;

/* Marks of an overlay (`gpuprof convert --critical-path`, as HTA's overlaid trace): the events
 * written with args.critical = 1, and flow pairs (cat and name "critical_path", ids from 0, args
 * weight / critical / type) for the links. A point at the end of a GPU event sits 1 us before it
 * (min(1 us, dur)), as HTA draws it, so that viewers bind it to that event. */
typedef struct gp_chrome_marks {
    const gp_event *const *critical; /* any order; NULL when none */
    size_t n_critical;
    const gp_chrome_link *links;
    size_t n_links;
} gp_chrome_marks;

/* As gp_trace_write_chrome / gp_trace_write_chrome_stream, with the marks m (NULL: none).
 * GP_ENOMEM besides their errors. */
GP_EXTERN gp_status gp_trace_write_chrome_marked(const gp_trace *t, const char *path,
                                                 const gp_chrome_marks *m,
                                                 gp_error *err) GP_WARN_UNUSED;
GP_EXTERN gp_status gp_trace_write_chrome_stream_marked(const gp_trace *t, FILE *fp,
                                                        const gp_chrome_marks *m,
                                                        gp_error *err) GP_WARN_UNUSED;

/* Compares two traces' models (not their string ids): same tracks, events, side records, counters,
 * flows, devices and distributed info. Returns true when equal; otherwise describes the first
 * difference in why->msg (why may be NULL; its status is left GP_OK). Used by round-trip tests. */
GP_EXTERN bool gp_trace_equal(const gp_trace *a, const gp_trace *b, gp_error *why);

#ifdef __cplusplus
}
#endif
#endif
