/* gpuprof analyze: HTA-style analyses of a trace or a job, plus bottlenecks and suggestions.
 *
 * One call, gp_analyze_job(), runs every analysis on every rank of a job and returns one result
 * struct (gp_analysis) that the renderers (text, JSON, CSV) format. Analyses never print; renderers
 * never compute. Every figure is defined in docs/analyses.md precisely enough to recompute it.
 *
 * Two modes of definition:
 *  - default: nanosecond precision; GPU work = kernel, memcpy and memset events; kernels are
 *    classified by gpuprof's rules (NCCL/RCCL/symmetric-memory collectives are communication,
 *    hip* runtime names are not).
 *  - HTA compatible (opts.hta = true, `--classify hta`): Holistic Trace Analysis' event set (every
 *    GPU-track event whose stream is not -1, synchronisations included), its regexes and its
 *    integer-microsecond rounding (starts rounded up, ends rounded down).
 * Step selection (opts.steps) is independent of the mode.
 *
 * Ownership: a gp_analysis owns its memory (gp_analysis_free) but kernel names point into the
 * traces' string tables: the job must outlive the analysis. */
#ifndef GPUPROF_ANALYZE_H
#define GPUPROF_ANALYZE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gpuprof/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- classification ----------------------------------------------------------------------- */

typedef enum gp_kernel_type {
    GP_KT_COMPUTATION = 0,
    GP_KT_COMMUNICATION,
    GP_KT_MEMORY,
    GP_KT_OTHER, /* synchronisation and anything not GPU work (HTA mode only) */
    GP_KT_COUNT
} gp_kernel_type;

/* "COMPUTATION", "COMMUNICATION", "MEMORY", "OTHER" (HTA's spelling). */
GP_EXTERN const char *gp_kernel_type_name(gp_kernel_type t);
/* Case-insensitive inverse of gp_kernel_type_name; also "comp", "comm", "mem". GP_EINVAL when
 * unknown (*out untouched). Every gpuprof parse function says "unknown" this way. */
GP_EXTERN gp_status gp_kernel_type_parse(const char *s, gp_kernel_type *out) GP_WARN_UNUSED;

/* A user rule: names matching the POSIX extended regex get the type. Checked before built-ins. */
typedef struct gp_classify_rule {
    const char *regex; /* borrowed */
    gp_kernel_type type;
} gp_classify_rule;

/* Classifies one GPU event name with the built-in rules. kind is the event's kind (a memcpy is
 * MEMORY whatever its name in the default rules); hta selects HTA's regexes exactly. The rules
 * are compiled once per process (thread-safe); a call costs only the matching. */
GP_EXTERN gp_kernel_type gp_classify_name(const char *name, gp_event_kind kind, bool hta);

/* ---- options ------------------------------------------------------------------------------ */

typedef enum gp_steps_mode {
    GP_STEPS_ALL = 0, /* every event */
    GP_STEPS_HTA,     /* HTA: with >= 2 ProfilerSteps drop the last one (see docs) */
    GP_STEPS_RANGE    /* ProfilerStep#first .. #last inclusive */
} gp_steps_mode;

typedef struct gp_analyze_opts {
    gp_steps_mode steps;
    int64_t step_first, step_last; /* GP_STEPS_RANGE */
    bool hta;                      /* HTA-compatible definitions (see above) */
    const gp_classify_rule *rules; /* user rules, checked first (may be NULL) */
    size_t n_rules;
    gp_ns kernel_wait_ns;    /* idle gaps shorter than this are kernel_wait (30 us) */
    size_t top_kernels;      /* per type and rank before "others" (HTA num_kernels, 5) */
    double duration_ratio;   /* HTA duration_ratio (0.8) */
    gp_ns launch_outlier_ns; /* CPU launch duration outlier cut-off (50 us) */
    gp_ns delay_outlier_ns;  /* launch delay outlier cut-off (100 us) */
    size_t series_points;    /* time-series buckets (queue, bandwidth, memory) (100) */
    size_t max_outliers;     /* launch outliers listed per rank (10) */
    double small_kernel_ns;  /* "small kernel" cut-off for the bottleneck rules (10 us) */
    /* Thresholds of the profile rules (gpuprof/advise.h); NULL: the defaults. */
    const struct gp_advise_opts *advise;
    /* Critical path and idle causes (docs/analyses.md, "Critical path"). */
    bool critical_path; /* compute the critical path (default true) */
    /* Keep each path's events and drawn links (gp_critical_path.events / links: the timeline's
     * highlight, `convert --critical-path`); default true. false leaves them NULL (n_events still
     * counts the events): 17 MB on large_v100_nccl x7 that `gpuprof analyze` never draws. */
    bool critical_path_overlay;
    bool cp_hta;                  /* HTA's graph as HTA builds it (--critical-path hta) */
    const char *cp_annotation;    /* region: annotation substring; NULL = each ProfilerStep, or
                                   * the whole trace without steps; "" = the whole trace */
    int64_t cp_instance;          /* with cp_annotation: instance index, -1 = every instance */
    const char *const *data_load; /* data-loading name patterns (substrings); NULL = PyTorch's
                                   * DataLoader events ("DataLoader", "dataloader") */
    size_t n_data_load;
    /* Threads for one rank's independent analyses: 0 = automatic (up to 4, as many as the machine
     * has CPUs, for ranks of 50 000 events or more), 1 = the caller's only, N = up to N. Results
     * never depend on it. */
    int threads;
    /* Collectives: ranks per node for intra-/inter-node (0: the first trace's device count). */
    int32_t gpus_per_node;
} gp_analyze_opts;

/* Fills opts with the defaults above. */
GP_EXTERN void gp_analyze_opts_init(gp_analyze_opts *opts);

/* Parses a --steps value: "all", "hta" or "N-M" (or "N"). GP_EINVAL on anything else. */
GP_EXTERN gp_status gp_analyze_parse_steps(const char *s, gp_analyze_opts *opts) GP_WARN_UNUSED;

/* ---- results ------------------------------------------------------------------------------ */

/* Temporal breakdown of one rank (HTA get_temporal_breakdown). Times in ns (in HTA mode whole
 * microseconds * 1000). valid is false when the rank has no GPU work (percentages are then NaN). */
typedef struct gp_temporal {
    bool valid;
    gp_ns kernel_time; /* end of the last GPU event - start of the first */
    gp_ns idle, compute, non_compute;
    double idle_pct, compute_pct, non_compute_pct; /* of kernel_time, 0..100 */
} gp_temporal;

typedef enum gp_idle_category {
    GP_IDLE_HOST_WAIT = 0,
    GP_IDLE_KERNEL_WAIT,
    GP_IDLE_OTHER,
    GP_IDLE_COUNT
} gp_idle_category;

/* "host_wait", "kernel_wait", "other". */
GP_EXTERN const char *gp_idle_category_name(gp_idle_category c);

/* Idle-time breakdown of one stream. ratio[c] = idle[c] / total (NaN when total is 0). */
typedef struct gp_idle_stream {
    int32_t device; /* -1 in HTA mode (HTA groups by stream number only) */
    int64_t stream;
    gp_ns idle[GP_IDLE_COUNT];
    uint64_t gaps[GP_IDLE_COUNT]; /* number of gaps in each category */
    bool present[GP_IDLE_COUNT];  /* category occurs (HTA lists only those) */
    gp_ns total;
    double ratio[GP_IDLE_COUNT];
} gp_idle_stream;

/* One overlap state of the kernel-type breakdown: mask is a set of (1 << gp_kernel_type) among
 * computation, communication and memory; label "COMPUTATION overlapping COMMUNICATION". */
typedef struct gp_type_state {
    uint32_t mask;
    char label[96];
    gp_ns time;
    double pct; /* of the sum over all states, 0..100 */
} gp_type_state;

/* One row of the top-kernels table (HTA get_gpu_kernel_breakdown's second frame). For "others"
 * the statistics are over the per-name sums of the names folded into it (as HTA). */
typedef struct gp_kernel_row {
    const char *name; /* "others" or a name in a trace's string table */
    bool others;
    gp_kernel_type type;
    int32_t rank;
    uint64_t count; /* events (for "others": names folded) */
    gp_ns sum, max, min;
    double mean, stddev; /* sample standard deviation (ddof 1), 0 for a single value */
} gp_kernel_row;

/* Communication / computation overlap of one rank. pct is NaN without communication. */
typedef struct gp_overlap {
    gp_ns comm, comp, overlap;
    double pct;
} gp_overlap;

/* Launch statistics for one launch API name (cudaLaunchKernel, cuLaunchKernelEx, ...). */
typedef struct gp_launch_api {
    const char *name;
    bool driver;      /* cuda_driver category */
    uint64_t calls;   /* calls seen */
    uint64_t matched; /* calls joined to GPU work by correlation */
    gp_ns cpu_total;  /* summed CPU duration */
    double cpu_mean;  /* ns */
    gp_ns cpu_p50, cpu_p95, cpu_max;
    double delay_mean; /* ns, over matched calls */
    gp_ns delay_p50, delay_p95, delay_max, delay_min;
    uint64_t cpu_outliers;   /* cpu duration > launch_outlier_ns */
    uint64_t delay_outliers; /* delay > delay_outlier_ns */
    uint64_t negative_delay; /* GPU start before the launch returned */
} gp_launch_api;

typedef struct gp_launch_outlier {
    const char *api;
    const char *kernel;
    gp_ns ts; /* launch start */
    gp_ns cpu_dur, delay;
    bool by_delay; /* listed for its delay (else for its CPU duration) */
} gp_launch_outlier;

typedef struct gp_launch_stats {
    gp_launch_api *apis;
    size_t n_apis;
    uint64_t launches, matched, gpu_unmatched; /* GPU work with no launch found */
    uint64_t graph_launches;                   /* cudaGraphLaunch calls */
    uint64_t graph_kernels; /* kernels carrying a graph id or launched by a graph launch call */
    gp_launch_outlier *outliers; /* worst first */
    size_t n_outliers;
} gp_launch_stats;

typedef struct gp_series_point {
    gp_ns t; /* bucket start */
    double v;
} gp_series_point;

/* Queue length of one stream: +1 at each launch, -1 when its GPU work starts (HTA definition). */
typedef struct gp_queue_stream {
    int32_t device;
    int64_t stream;
    uint64_t launches;
    int64_t max_len;
    double mean_len;         /* time-weighted over the rank's span */
    gp_series_point *series; /* max queue length per bucket */
    size_t n_series;
} gp_queue_stream;

/* Memcpy bandwidth over time (sum of bytes / duration of transfers active in each bucket). */
typedef struct gp_bandwidth {
    uint64_t copies;
    int64_t bytes;
    gp_ns busy;
    double mean_gbps;        /* bytes / busy */
    gp_series_point *series; /* GB/s per bucket, time-weighted */
    size_t n_series;
    uint64_t pageable; /* copies whose name says Pageable */
} gp_bandwidth;

/* CPU and GPU activity (timeline statistics). */
typedef struct gp_activity {
    gp_ns span;       /* first event start to last event end */
    gp_ns cpu_active; /* union of CPU ops and runtime/driver calls (not Python frames) */
    gp_ns gpu_active; /* union of kernel, memcpy and memset */
    gp_ns overlap;    /* both at once */
    gp_ns sync;       /* union of synchronisation events (cuda_sync); in a trace without any,
                       * of the blocking calls (*Synchronize, copies without Async) */
    uint64_t syncs;   /* number of those events, or calls */
} gp_activity;

/* Memory timeline from "[memory]" events of one device (device_type/device_id). */
typedef struct gp_memory_device {
    int32_t device_type, device_id;
    uint64_t events;
    int64_t peak_allocated;
    gp_ns peak_ts;
    int64_t peak_reserved;
    int64_t final_allocated;
    const char *running_cpu;    /* innermost CPU op running at the peak ("" if none) */
    const char *running_gpu;    /* kernel running at the peak ("" if none) */
    int64_t capacity;           /* device total memory, 0 if unknown */
    gp_series_point *allocated; /* max allocated per bucket */
    gp_series_point *reserved;
    size_t n_series;
} gp_memory_device;

typedef enum gp_priority {
    GP_PRIO_CRITICAL = 0,
    GP_PRIO_HIGH,
    GP_PRIO_MEDIUM,
    GP_PRIO_LOW
} gp_priority;

typedef enum gp_suggestion_type {
    GP_SUG_ROUTING = 0,
    GP_SUG_BATCHING,
    GP_SUG_MEMORY,
    GP_SUG_CACHING,
    GP_SUG_ALGORITHM,
    GP_SUG_PARALLELIZATION
} gp_suggestion_type;

GP_EXTERN const char *gp_priority_name(gp_priority p);
/* Writes the ranks of a finding as text into buf (size cap, always NUL-terminated): "rank 3",
 * "ranks 0-7", "ranks 0-3, 5" (runs of consecutive ranks joined by dash, e.g. "-" or an en dash),
 * "job" when n is 0. ranks ascending. */
GP_EXTERN void gp_ranks_format(const int32_t *ranks, size_t n, const char *dash, char *buf,
                               size_t cap);
GP_EXTERN const char *gp_suggestion_type_name(gp_suggestion_type t);

/* The unit of a finding's metric. Metrics are stored in base units only; render turns them into
 * text ("47.4 %", "1.2 ms", "3.5 GiB", "1.2 TB/s") once. */
typedef enum gp_finding_unit {
    GP_FU_NS = 0,      /* "ns": a duration */
    GP_FU_BYTES,       /* "bytes" */
    GP_FU_BYTES_PER_S, /* "bytes/s" */
    GP_FU_FLOP_PER_S,  /* "flop/s" */
    GP_FU_RATIO,       /* "ratio": a share, 0..1 */
    GP_FU_COUNT        /* "count": a number of things (or an id: "device") */
} gp_finding_unit;

/* "ns", "bytes", "bytes/s", "flop/s", "ratio", "count". */
GP_EXTERN const char *gp_finding_unit_name(gp_finding_unit u);

/* One figure behind a finding: a stable key (static text, docs/analyses.md lists each rule's),
 * its value in base units and the unit. */
typedef struct gp_evidence {
    const char *name;
    double value;
    gp_finding_unit unit;
} gp_evidence;

/* What a finding names: the things a reader looks up (an op, a kernel, a Python frame, ...). */
typedef enum gp_object_kind {
    GP_OBJ_OP = 0,     /* a CPU operator or profiler range ("aten::bmm") */
    GP_OBJ_KERNEL,     /* a GPU kernel name */
    GP_OBJ_FRAME,      /* a Python frame ("train.py(42): load") or a CPU event on the path */
    GP_OBJ_SHAPES,     /* input dims as the trace wrote them ("[[96,3137,64],[96,64,3137]]") */
    GP_OBJ_DTYPE,      /* "bf16", "fp32", ... */
    GP_OBJ_MODULE,     /* an nn.Module */
    GP_OBJ_LINE,       /* a Python source line outside torch */
    GP_OBJ_CALL,       /* a runtime call (cudaStreamSynchronize) */
    GP_OBJ_COLLECTIVE, /* a collective matched across ranks ("allreduce #7": class, index) */
    GP_OBJ_KIND_COUNT
} gp_object_kind;

/* "op", "kernel", "frame", "shapes", "dtype", "module", "line", "call", "collective". */
GP_EXTERN const char *gp_object_kind_name(gp_object_kind k);

#define GP_FINDING_NAME_CAP 224
/* One object a finding names, copied (a finding never points into a trace, so it can outlive
 * it: gpuprof diff keeps findings). Names longer than the buffer are cut. */
typedef struct gp_finding_object {
    gp_object_kind kind;
    char name[GP_FINDING_NAME_CAP];
    char frame[GP_FINDING_NAME_CAP]; /* the innermost Python frame around it ("" if none) */
    gp_ns time;     /* the time it holds (path time, blocked time, GPU time); 0 when none */
    uint64_t count; /* calls or events; 0 when none */
    double roof;    /* an op's share of its roofline, 0..1; -1 when not known */
} gp_finding_object;

/* A bottleneck with typed evidence: the rule that fired, its metrics in base units and the
 * objects it names. No English: titles, units and the suggestion's words are composed by the
 * renderers from (rule, variant, metrics, objects), once (src/render/finding_format.c).
 * A rule that fires on several ranks gives one finding naming them all (ranks); its evidence,
 * gain and priority are the worst rank's (the largest gain; then the higher priority; then the
 * lower rank), and rank is that rank. */
typedef struct gp_finding {
    const char *rule; /* stable id: "launch_bound", "critical_path_cpu_bound", ... (static) */
    int32_t rank;     /* the rank whose evidence is shown; -1 for the job */
    int32_t *ranks;   /* every rank it holds on, ascending; owned by the analysis (read-only) */
    size_t n_ranks;   /* 0 for a job-level finding */
    gp_evidence evidence[8];
    size_t n_evidence;
    gp_finding_object objects[6];
    size_t n_objects;
    gp_ns gain_ns; /* estimated recoverable time */
    gp_suggestion_type type;
    gp_priority priority;
    uint8_t variant; /* which of the rule's suggestions applies (docs/analyses.md), 0 default */
    bool cause;      /* a cause of the critical path, or the pattern explaining it (ranked first) */
    /* The profile rules of gpuprof advise (gpuprof/advise.h) name one operation (object "op")
     * and estimate its time after the suggestion: current_ns / estimated_ns are the op's total
     * time in the trace (for "gpu_underutilized": the trace's span) now and after. 0 for the
     * other rules. */
    gp_ns current_ns, estimated_ns;
} gp_finding;

/* The value of the metric called name in *out; false (and *out untouched) when f has none. */
GP_EXTERN bool gp_finding_metric(const gp_finding *f, const char *name, double *out);
/* The name of the first object of kind k, or NULL. */
GP_EXTERN const char *gp_finding_object_of(const gp_finding *f, gp_object_kind k);

/* Where a peak-memory figure comes from (docs/analyses.md, "Peak memory"). */
typedef enum gp_peak_source {
    GP_PEAK_NONE = 0,  /* no memory information */
    GP_PEAK_ALLOCATOR, /* "[memory]" allocator events: total allocated */
    GP_PEAK_PROFILER,  /* gpuprof profiler ranges: their "mem_peak_bytes" arg */
    GP_PEAK_COUNTER    /* counter series whose name has "mem" or "tracked_bytes" */
} gp_peak_source;

/* The peak memory of a trace: gpuprof's one definition, used by analyze, report and diff. */
typedef struct gp_peak_memory {
    gp_peak_source source;
    int64_t bytes;    /* -1 with GP_PEAK_NONE */
    gp_ns ts;         /* when it was reached (the event's or sample's time) */
    const char *what; /* the counter series or range name; "" for the allocator */
} gp_peak_memory;

/* "none", "allocator", "profiler", "counter". */
GP_EXTERN const char *gp_peak_source_name(gp_peak_source s);

/* The peak memory of t over events and samples with lo <= ts < hi (INT64_MIN, INT64_MAX: all):
 * from the allocator events when the trace has any, else from the profiler's ranges, else from
 * memory counter series; the largest value of the first source present. */
GP_EXTERN void gp_peak_memory_of(const gp_trace *t, gp_ns lo, gp_ns hi, gp_peak_memory *out);

/* ---- critical path (docs/analyses.md, "Critical path") ------------------------------------- */

/* What bounds a stretch of the critical path: HTA's bound_by classes, in HTA's spelling
 * (gp_cp_class_name). GP_CP_DEPENDENCY is HTA's "" class (0-weight edges). */
typedef enum gp_cp_class {
    GP_CP_CPU = 0,       /* "cpu_bound": CPU ops, runtime calls, Python work */
    GP_CP_DATA_LOADING,  /* "data_loading": DataLoader events (opts.data_load) */
    GP_CP_GPU_COMPUTE,   /* "gpu_compute_bound": kernels, copies, memsets */
    GP_CP_GPU_COMM,      /* "gpu_communication_bound": collective kernels */
    GP_CP_KERNEL_KERNEL, /* "gpu_kernel_kernel_overhead": gaps between GPU events */
    GP_CP_LAUNCH,        /* "gpu_kernel_launch_overhead": launch call start -> kernel */
    GP_CP_DEPENDENCY,    /* "dependency" (HTA's ""): 0-weight dependency and sync edges */
    GP_CP_COUNT
} gp_cp_class;

GP_EXTERN const char *gp_cp_class_name(gp_cp_class c);

/* One event (by name, within one critical path) holding time on the path. */
typedef struct gp_cp_event {
    const char *name;   /* the event's name (trace string table) */
    uint8_t kind;       /* gp_event_kind */
    gp_cp_class cls;    /* the class its time counts to */
    gp_ns time;         /* path time attributed to events of this name and class */
    uint64_t count;     /* events of them with time on the path (each counted once) */
    const char *python; /* innermost Python frame enclosing the first such event ("" if none) */
} gp_cp_event;

/* The critical path of one region (a step, an annotation instance or the whole rank). */
typedef struct gp_critical_path {
    int64_t step;       /* ProfilerStep number, -1 when the region is not a step */
    const char *region; /* region name ("ProfilerStep#3", an annotation, "" = whole trace) */
    gp_ns start, end;   /* the region's window */
    bool valid;         /* false: no path (why: in note) */
    char note[160];     /* "" or why the path is missing or approximate */
    gp_ns length;       /* path length: sum of its edge weights, ns */
    gp_ns by_class[GP_CP_COUNT];
    double pct[GP_CP_COUNT]; /* of the sum over classes, 0..100; NaN when that sum is 0 */
    gp_cp_event *top;        /* the events holding the most path time, by time desc */
    size_t n_top;
    /* The events on the path, for overlays (timeline highlight, convert --critical-path). */
    const gp_event **events;
    size_t n_events;
    /* The path's edges an overlay draws (HTA's default: dependency, launch and synchronisation
     * edges; type is HTA's edge type string). */
    gp_chrome_link *links;
    size_t n_links;
} gp_critical_path;

/* ---- idle causes (docs/analyses.md, "Idle causes") --------------------------------------------
 */

/* What the host was doing while the GPU (a stream, or the whole device) was idle. */
typedef enum gp_idle_cause {
    GP_IC_DATA_LOADING = 0, /* DataLoader events, worker waits */
    GP_IC_CPU,              /* Python or CPU work outside launches (named by its frame or op) */
    GP_IC_SYNC,             /* the host blocked in a synchronisation or blocking copy */
    GP_IC_LAUNCH,           /* the host was launching (launch overhead) */
    GP_IC_COMM_WAIT,        /* waiting for a collective */
    GP_IC_UNRECORDED,       /* nothing recorded on the launching thread */
    GP_IC_COUNT
} gp_idle_cause;

GP_EXTERN const char *gp_idle_cause_name(gp_idle_cause c);

/* Idle attribution of one stream (stream >= 0) or of the whole device (stream -1): each idle
 * instant of the analysed window to what the thread that launched the next GPU work was doing. */
typedef struct gp_idle_causes {
    int32_t device;
    int64_t stream;
    gp_ns idle; /* idle time inside the analysed window: the one denominator of share */
    gp_ns by_cause[GP_IC_COUNT];       /* sums to idle */
    double share[GP_IC_COUNT];         /* by_cause / idle, 0..1; NaN when idle is 0 */
    const char *top_what[GP_IC_COUNT]; /* the frame, op or call holding most of each cause */
    gp_ns top_time[GP_IC_COUNT];
} gp_idle_causes;

/* TensorBoard profiler's step-time breakdown of one step (each instant counted once, in this
 * order of precedence): kernel, memcpy, memset, communication, runtime, dataloader, cpu_exec,
 * other. */
typedef enum gp_step_part {
    GP_SP_KERNEL = 0,
    GP_SP_MEMCPY,
    GP_SP_MEMSET,
    GP_SP_COMMUNICATION,
    GP_SP_RUNTIME,
    GP_SP_DATALOADER,
    GP_SP_CPU_EXEC,
    GP_SP_OTHER,
    GP_SP_COUNT
} gp_step_part;

GP_EXTERN const char *gp_step_part_name(gp_step_part p);

/* One step (docs/analyses.md, "Step breakdown"); the report's Steps bar is the same split. */
typedef struct gp_step_breakdown {
    int64_t step; /* ProfilerStep number, -1: the whole trace */
    gp_ns start, end;
    gp_ns part[GP_SP_COUNT]; /* sums to end - start */
} gp_step_breakdown;

/* Everything about one rank. */
typedef struct gp_rank_analysis {
    int32_t rank;
    const char *source;
    gp_error note; /* status GP_OK; msg: what the analyses could not do, and why ("" if nothing) */
    uint64_t gpu_events; /* GPU events analysed (after step selection) */
    uint64_t cpu_events;
    int64_t steps_total, steps_kept; /* ProfilerSteps seen / kept */
    /* Events that broke a rule of the analyses, and what was done (also said in note):
     * GPU work that starts before the previous event on its stream ends (a stream runs one at a
     * time): unions count the overlap once, idle gaps are measured from the latest end. */
    uint64_t stream_overlaps;
    gp_ns max_stream_overlap;
    /* HTA mode: events shorter than 1 us rounded inward to a negative length. HTA keeps the
     * negative length and so does gpuprof, unless a figure comes out negative (HTA then fails
     * its own non-compute >= 0 check): then they count as empty (rounded_negative_empty). */
    uint64_t rounded_negative;
    bool rounded_negative_empty;
    gp_temporal temporal;
    gp_idle_stream *idle;
    size_t n_idle;
    gp_type_state *types; /* this rank's overlap states, by time desc */
    size_t n_types;
    gp_kernel_row *kernels; /* top kernels per type (HTA order: type, name) */
    size_t n_kernels;
    gp_overlap overlap;
    gp_launch_stats launch;
    gp_queue_stream *queues;
    size_t n_queues;
    gp_bandwidth bandwidth;
    gp_activity activity;
    gp_memory_device *memory;
    size_t n_memory;
    gp_peak_memory peak_memory; /* over the selected steps */
    uint64_t small_kernels;     /* kernels shorter than small_kernel_ns */
    gp_ns small_kernels_time;
    uint64_t kernels_total;
    gp_ns kernels_time;
    /* The hottest computation kernel name with a reported occupancy below 25 % (NULL if none). */
    const char *low_occ_kernel;
    double low_occ_pct; /* its duration-weighted "est. achieved occupancy %" */
    gp_ns low_occ_time; /* its summed duration */
    /* Critical path per step (or per region, or the whole rank), in time order. */
    gp_critical_path *critical_paths;
    size_t n_critical_paths;
    /* Idle attribution: the whole device (stream -1) first, then each stream, every one. The
     * top names need a walk of the launching threads' activity per row, so rows times activity
     * (issue 38): they come within a budget linear in the trace, the devices and then the
     * streams with the most GPU work first; idle_causes_dropped counts the rows left without
     * them (top_what "", top_time 0; said in note). */
    gp_idle_causes *idle_causes;
    size_t n_idle_causes;
    size_t idle_causes_dropped;
    /* TensorBoard-style breakdown per step (or one row for the whole trace). */
    gp_step_breakdown *step_parts;
    size_t n_step_parts;
} gp_rank_analysis;

typedef struct gp_straggler {
    int32_t rank;
    const char *metric; /* "kernel_time", "idle_pct", "compute_time" */
    double value, median;
} gp_straggler;

typedef struct gp_analysis {
    gp_analyze_opts opts;
    gp_rank_analysis *ranks;
    size_t n_ranks;
    gp_type_state *types; /* kernel-type breakdown over all ranks (HTA's table) */
    size_t n_types;
    gp_straggler *stragglers;
    size_t n_stragglers;
    /* The cause findings first (cause set: the largest class of the critical path that is not
     * GPU compute, then the GPU pattern finding that explains GPU compute, then the GPU-compute
     * one), then every other finding by gain, descending (docs/analyses.md, "Findings"). */
    gp_finding *findings;
    size_t n_findings;
    gp_error note; /* status GP_OK; msg: job-level note ("ranks from file order", ...) */
    /* Collectives matched across ranks (gpuprof/collectives.h); NULL for a job of one rank. */
    struct gp_collectives *collectives;
} gp_analysis;

/* Runs every analysis on every rank of job. opts may be NULL (defaults). On success *out is the
 * caller's (gp_analysis_free). Fails with GP_EINVAL (a user regex does not compile: err says
 * which), GP_ENOMEM. A rank without GPU work, without correlation ids or without steps is not an
 * error: its note says what could not be computed. */
GP_EXTERN gp_status gp_analyze_job(const gp_job *job, const gp_analyze_opts *opts,
                                   gp_analysis **out, gp_error *err) GP_WARN_UNUSED;
/* As gp_analyze_job for one trace (a job of one). */
GP_EXTERN gp_status gp_analyze_trace(const gp_trace *t, const gp_analyze_opts *opts,
                                     gp_analysis **out, gp_error *err) GP_WARN_UNUSED;
GP_EXTERN void gp_analysis_free(gp_analysis *a);

/* ---- renderers ---------------------------------------------------------------------------- */

/* Which tables to render (bit mask); 0 = all. */
enum {
    GP_AT_TEMPORAL = 1u << 0,
    GP_AT_IDLE = 1u << 1,
    GP_AT_TYPES = 1u << 2,
    GP_AT_KERNELS = 1u << 3,
    GP_AT_OVERLAP = 1u << 4,
    GP_AT_LAUNCH = 1u << 5,
    GP_AT_QUEUE = 1u << 6,
    GP_AT_ACTIVITY = 1u << 7,
    GP_AT_MEMORY = 1u << 8,
    GP_AT_RANKS = 1u << 9,
    GP_AT_FINDINGS = 1u << 10,
    GP_AT_PEAK_MEMORY = 1u << 11,
    GP_AT_CRITICAL_PATH = 1u << 12, /* critical_paths (critpath.c) */
    GP_AT_IDLE_CAUSES = 1u << 13,   /* idle_causes (idle_causes.c) */
    GP_AT_STEP_PARTS = 1u << 14,    /* step_parts (idle_causes.c) */
    GP_AT_COLLECTIVES = 1u << 15,   /* collectives across ranks (collectives.c); nothing for a
                                     * single trace */
    GP_AT_ALL = (1u << 16) - 1
};

/* Parses a table name (one of `gpuprof analyze --help`'s, from the registry of tables,
 * src/render/analysis_tables.h, or its alias; "all") into its bits. GP_EINVAL when unknown (*out
 * untouched). */
GP_EXTERN gp_status gp_analysis_table_parse(const char *name, unsigned *out) GP_WARN_UNUSED;

/* Fixed-width text tables. GP_EIO when the stream fails. */
GP_EXTERN gp_status gp_analysis_render_text(const gp_analysis *a, unsigned tables,
                                            FILE *fp) GP_WARN_UNUSED;
/* The JSON document (schema "gpuprof.analyze/1", see docs/analyses.md). */
GP_EXTERN gp_status gp_analysis_render_json(const gp_analysis *a, unsigned tables,
                                            FILE *fp) GP_WARN_UNUSED;
/* One CSV table (exactly one bit of GP_AT_*), header row first. GP_EINVAL for several bits. */
GP_EXTERN gp_status gp_analysis_render_csv(const gp_analysis *a, unsigned table,
                                           FILE *fp) GP_WARN_UNUSED;

#ifdef __cplusplus
}
#endif
#endif
