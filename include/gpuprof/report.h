/* gpuprof report: pictures of a trace. Flame graphs (folded stacks, speedscope JSON, SVG, HTML,
 * differential), the timeline (HTML canvas) and the dashboard (HTML).
 *
 * The split: *_build functions turn the trace model (and summary/analysis results) into view
 * structs with every piece of layout computed (stacks, x positions, nesting depth); *_write
 * functions only format those structs. Every HTML/SVG output is one self-contained file: our own
 * JavaScript and CSS (src/render/assets/) are embedded into the binary at build time, data is
 * embedded as compact JSON with <, > and & escaped, every name is escaped for its context.
 * Files are written atomically (temporary file + rename). */
#ifndef GPUPROF_REPORT_H
#define GPUPROF_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "gpuprof/analyze.h"
#include "gpuprof/summary.h"
#include "gpuprof/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- flame graphs ------------------------------------------------------------------------- */

typedef enum gp_flame_weight {
    GP_FLAME_AUTO = 0, /* GPU time when some GPU work has a duration, CPU time otherwise */
    GP_FLAME_CPU,      /* inclusive CPU duration of ranges on CPU threads; GPU work left out */
    GP_FLAME_GPU       /* GPU kernel/memcpy/memset time, under the CPU stack that launched it */
} gp_flame_weight;

/* What the frames are. */
typedef enum gp_flame_by {
    GP_FLAME_BY_STACK = 0, /* the CPU stacks of range nesting, GPU work under its launching op */
    GP_FLAME_BY_MODULE     /* the nn.Module hierarchy (python_function frames "nn.Module: X_N",
                              a frame "X_N" each) around the op that launched the GPU work (GPU
                              weight) or ran (CPU weight: the op's self CPU time), the rule of
                              `gpuprof ops --by module`; work of ops outside every module and GPU
                              work no op launched under "(no module)". No thread frames. */
} gp_flame_by;

typedef struct gp_flame_opts {
    gp_flame_weight weight;
    gp_ns min_duration;  /* frames whose total is below this are folded into their parent */
    int max_depth;       /* frames deeper than this (root = 0) fold into their ancestor; 0 = all */
    gp_ns group_kernels; /* GPU leaves below this total merge into one "[N small kernels]" frame
                            per parent; 0 = no grouping */
    bool thread_frames;  /* a frame per CPU thread under the root (default true) */
    gp_flame_by by;      /* default GP_FLAME_BY_STACK */
} gp_flame_opts;

/* Fills opts with the defaults (auto weight, no limits, thread frames on). */
GP_EXTERN void gp_flame_opts_init(gp_flame_opts *opts);

/* One frame of the tree. Children of a node are contiguous and sorted by name. */
typedef struct gp_flame_node {
    const char *name; /* owned by the tree */
    uint32_t parent;  /* index; the root (index 0) is its own parent */
    uint32_t first_child, n_children;
    uint16_t depth;   /* root = 0 */
    uint8_t kind;     /* gp_event_kind of the frame, GP_EV_KIND_COUNT for root/thread/group */
    uint32_t color;   /* layout: fill as 0xRRGGBB (kind palette, or red/blue for a diff) */
    gp_ns total;      /* inclusive weight (current input for a diff) */
    gp_ns self;       /* total minus the children's totals */
    gp_ns base_total; /* diff only: the same stack's inclusive weight in the base input */
    gp_ns base_self;  /* diff only: the same stack's self weight in the base input */
    gp_ns x;          /* layout: offset from the root's left edge, in weight units */
} gp_flame_node;

typedef struct gp_flame_tree {
    gp_flame_node *nodes; /* nodes[0] is the root "all"; parents precede children */
    size_t n_nodes;
    gp_flame_weight weight; /* resolved: CPU or GPU */
    bool is_diff;
    uint64_t events_used;      /* events that contributed weight */
    uint64_t gpu_unattributed; /* GPU events with no launch/op found (under "[unattributed]") */
    void *priv;
    gp_flame_by by;   /* what the frames are */
    size_t n_modules; /* by module: the frames that are nn.Module frames (0: the input has none) */
} gp_flame_tree;

/* Builds the frame tree of n traces (one root; a "rank N" level when n > 1). CPU stacks come from
 * range nesting per CPU thread (ops, annotations, Python frames, runtime calls, own ranges); a GPU
 * event attaches under the op that encloses the runtime call with the same correlation id, or
 * else the CPU op with the same external id, or else "[unattributed GPU]". By module (opts->by)
 * the frames are the nn.Module stacks instead (see gp_flame_by), with GPU work no op launched
 * under "(no module)" / "[unattributed GPU]". opts may be NULL. On success *out is owned by the
 * caller (gp_flame_tree_free). GP_ENOMEM; GP_EEMPTY when no event carries weight; GP_ELIMIT past
 * 2^32 - 2 frames. err (may be NULL) says what failed. */
GP_EXTERN gp_status gp_flame_build(const gp_trace *const *traces, size_t n,
                                   const gp_flame_opts *opts, gp_flame_tree **out,
                                   gp_error *err) GP_WARN_UNUSED;

/* The module tree that an HTML page of the stack tree `stack` (built from the same traces and
 * opts) offers beside it, behind its "Frames" switch: the traces by module, with stack's resolved
 * weight and opts' limits. GP_OK with *out NULL when there is none to offer: the traces have no
 * nn.Module frame, no module work carries weight, or stack is a diff or already by module.
 * Otherwise *out is owned by the caller (gp_flame_tree_free). GP_ENOMEM, GP_ELIMIT as
 * gp_flame_build, with err (may be NULL) saying what failed. */
GP_EXTERN gp_status gp_flame_build_alt(const gp_trace *const *traces, size_t n,
                                       const gp_flame_opts *opts, const gp_flame_tree *stack,
                                       gp_flame_tree **out, gp_error *err) GP_WARN_UNUSED;

/* Differential tree: the shape and widths of current, every node annotated with base_total, the
 * weight of the same stack (same names root to leaf) in base. Both inputs must have the same
 * resolved weight and the same `by` (GP_EINVAL otherwise). *out is owned by the caller.
 * GP_ENOMEM; err (may be NULL) says what failed. */
GP_EXTERN gp_status gp_flame_diff(const gp_flame_tree *base, const gp_flame_tree *current,
                                  gp_flame_tree **out, gp_error *err) GP_WARN_UNUSED;

GP_EXTERN void gp_flame_tree_free(gp_flame_tree *tree);

typedef enum gp_flame_format {
    GP_FLAME_FOLDED = 0, /* "a;b;c 123" per stack with self weight (diff: "a;b;c base cur") */
    GP_FLAME_SPEEDSCOPE, /* speedscope file format, one sampled profile (not for a diff) */
    GP_FLAME_SVG,        /* standalone interactive SVG */
    GP_FLAME_HTML        /* HTML page holding the SVG, a search box and the frame details */
} gp_flame_format;

/* The format a file name asks for (.folded/.txt, .speedscope.json/.json, .svg, .html/.htm).
 * GP_EINVAL when the suffix is none of them (*out untouched). */
GP_EXTERN gp_status gp_flame_format_from_path(const char *path,
                                              gp_flame_format *out) GP_WARN_UNUSED;

/* ---- evented profiles (the speedscope file's time-order view) ---------------------------------
 */

/* A frame of the evented profiles: a name, with the source file and line where the trace has them
 * (a python_function "models/vit.py(120): forward" is "forward" in "models/vit.py", line 120). */
typedef struct gp_ss_frame {
    const char *name;
    const char *file; /* NULL when unknown */
    int32_t line;     /* -1 when unknown */
} gp_ss_frame;

/* Opens or closes frame at time at (ns from the start of the first trace). */
typedef struct gp_ss_event {
    gp_ns at;
    uint32_t frame; /* index into gp_flame_evented.frames */
    bool open;
} gp_ss_event;

/* One CPU thread or GPU stream of one rank, its slices as balanced open/close events in time
 * order (a slice that ends after its parent is cut at the parent's end). */
typedef struct gp_ss_profile {
    char name[192]; /* "rank 3 · thread 1234 (python3)", "GPU 0 stream 7" */
    int32_t rank;
    bool gpu;
    gp_ns start, end; /* first open, last close */
    gp_ss_event *events;
    size_t n_events;
} gp_ss_profile;

typedef struct gp_flame_evented {
    gp_ss_frame *frames;
    size_t n_frames;
    gp_ss_profile *profiles; /* by rank, then GPU streams, then CPU threads, as the tracks */
    size_t n_profiles;
    void *priv;
} gp_flame_evented;

/* The evented profiles of n traces (ranks): one per CPU thread and GPU stream holding slices of
 * positive duration (instants, memory events and counters left out). *out owned by the caller
 * (gp_flame_evented_free). GP_ENOMEM, with err (may be NULL) saying what failed. */
GP_EXTERN gp_status gp_flame_evented_build(const gp_trace *const *traces, size_t n,
                                           gp_flame_evented **out, gp_error *err) GP_WARN_UNUSED;
GP_EXTERN void gp_flame_evented_free(gp_flame_evented *e);

typedef struct gp_flame_render_opts {
    const char *title;   /* shown in SVG/HTML and as the speedscope name; NULL = "gpuprof flame" */
    int width;           /* SVG width in px (default 1200) */
    double min_width_px; /* SVG/HTML: frames narrower than this at full width are not drawn
                            (default 0.1) */
    const gp_flame_tree *alt; /* HTML: the same input's tree grouped the other way (the
                                 module tree of a stack tree), offered by a "Frames"
                                 switch on the page; NULL: none (default) */
    const char *nav_html;     /* HTML: markup placed right after <body> (the server's bar of links,
                               * gp__serve_nav_html); NULL: none (default) */
    const gp_flame_evented *evented; /* speedscope: the evented profiles written after the
                                        tree's sampled one; NULL: none (default) */
    uint64_t max_bytes; /* folded / speedscope: refuse (GP_ELIMIT) output whose stack lines would
                         * pass this many bytes: each line repeats its whole stack, so deep nesting
                         * grows them with the square of the depth (issue 38: a 3.7 MB trace gave
                         * a 5.2 GB .folded). Default GP_FLAME_MAX_BYTES; 0 = no limit */
} gp_flame_render_opts;

/* The default bound of gp_flame_render_opts.max_bytes: 256 MiB. */
#define GP_FLAME_MAX_BYTES ((uint64_t)256 << 20)

GP_EXTERN void gp_flame_render_opts_init(gp_flame_render_opts *o);

/* The bytes of the stack lines the tree gives in fmt: exact for folded (names, separators and
 * counts), an upper bound for speedscope's samples; 0 for SVG and HTML (one element per frame,
 * linear in the frames). Saturates at UINT64_MAX (also when out of memory to tell). */
GP_EXTERN uint64_t gp_flame_stack_bytes(const gp_flame_tree *tree, gp_flame_format fmt);

/* Formats the tree into fp. o may be NULL. GP_EIO when the stream fails, GP_EINVAL for a
 * speedscope diff, GP_ELIMIT (nothing written) when gp_flame_stack_bytes passes o->max_bytes,
 * GP_ENOMEM; err (may be NULL) says what failed (over the limit: the size and the limit). */
GP_EXTERN gp_status gp_flame_render(const gp_flame_tree *tree, gp_flame_format fmt,
                                    const gp_flame_render_opts *o, FILE *fp,
                                    gp_error *err) GP_WARN_UNUSED;
/* As gp_flame_render, into path atomically; over o->max_bytes err says the size, the limit and
 * how to lower it (nothing is written). */
GP_EXTERN gp_status gp_flame_write(const gp_flame_tree *tree, gp_flame_format fmt,
                                   const gp_flame_render_opts *o, const char *path,
                                   gp_error *err) GP_WARN_UNUSED;

/* ---- timeline ---------------------------------------------------------------------------- */

/* One row of the timeline view: a CPU thread or GPU stream of one rank (events drawn as nested
 * slices), or a counter series (drawn as a step chart). */
typedef enum gp_tl_row_kind {
    GP_TL_CPU = 0,
    GP_TL_GPU,
    GP_TL_OTHER,
    GP_TL_COUNTER, /* a series of gp_trace.counters */
    GP_TL_MEMORY   /* allocated bytes of one device, from "[memory]" events' total_allocated */
} gp_tl_row_kind;

typedef struct gp_tl_row {
    gp_tl_row_kind kind;
    int32_t rank;
    uint32_t trace;                 /* index into the traces given to gp_timeline_build */
    uint32_t track;                 /* index into that trace's tracks */
    gp_strid series;                /* GP_TL_COUNTER: the series */
    int32_t device_type, device_id; /* GP_TL_MEMORY: the device of its "[memory]" events */
    char label[128];
    uint8_t *depth; /* slice rows: per event of the track, its nesting level; 255 = not drawn
                       (memory instants); NULL for counter rows */
    uint8_t max_depth;
    /* Slice rows holding Python frames (has_python): the nesting level of every other event when
     * the Python frames are hidden (255 for the frames themselves and for what depth hides);
     * NULL otherwise. */
    bool has_python;
    uint8_t *depth_nopy;
    uint8_t max_depth_nopy;
    uint64_t n_drawn; /* events (or samples) this row draws */
    uint64_t n_spans; /* of those, events that are not instants */
    gp_ns *sample_ts; /* counter/memory rows: the samples in time order */
    double *sample_val;
    size_t n_samples;
    /* With gp_timeline_opts.critical_path: per event of the track, 1 when the event is on a
     * critical path of its rank (gp_critical_path.events), else 0; NULL when the track has none. */
    uint8_t *on_path;
    /* A job of several ranks: per event of the track, 1 + the index in gp_timeline.colls of the
     * collective it is a member of, 0 for the others; NULL when the track has none. */
    uint32_t *coll;
} gp_tl_row;

/* A collective matched across the ranks (gp_collectives_analyze), which the timeline highlights
 * on every rank when one of its kernels is selected. */
typedef struct gp_tl_coll {
    char name[64];  /* "allreduce", the "Collective name" arg */
    char group[64]; /* its process group; "all" when matched by kernel order */
    uint64_t index; /* 0-based position in its group */
    uint32_t n_members;
    gp_ns latency, start_skew; /* shortest member duration; latest - earliest start */
    bool trusted;              /* gp_collective.doubt == GP_COLL_OK */
} gp_tl_coll;

/* The critical paths of one rank, summed over its steps (regions), for the overlay's legend. */
typedef struct gp_tl_cp_rank {
    int32_t rank;
    size_t n_paths; /* regions with a valid path */
    gp_ns length;   /* sum of their lengths */
    gp_ns by_class[GP_CP_COUNT];
} gp_tl_cp_rank;

/* An edge of a critical path the overlay draws as an arrow (gp_critical_path.links): from event
 * src_ev of row src_row (its end when src_end, else its start) to event dst_ev of row dst_row;
 * event indices are into the rows' tracks. type: HTA's edge type (static text). */
typedef struct gp_tl_link {
    uint32_t src_row, dst_row;
    uint32_t src_ev, dst_ev;
    bool src_end, dst_end;
    const char *type;
} gp_tl_link;

typedef struct gp_timeline_opts {
    int max_depth;     /* draw slices up to this nesting level (0 = top level only); -1 = all */
    bool cpu_rows;     /* include CPU thread rows (default true) */
    bool counter_rows; /* include counter and memory rows (default true) */
    /* The CPU active / GPU active / overlap figures are an analysis' activity figures (gp_activity,
     * summed over ranks): this one when set, else gp_timeline_build runs gp_analyze_job itself. */
    const gp_analysis *analysis;
    /* Compute the critical path of every rank (its analysis alone, default options) and mark its
     * events and edges (default false; gpuprof timeline --critical-path). */
    bool critical_path;
} gp_timeline_opts;

GP_EXTERN void gp_timeline_opts_init(gp_timeline_opts *o);

typedef struct gp_timeline {
    const gp_trace *const *traces;
    size_t n_traces;
    gp_tl_row *rows;
    size_t n_rows;
    gp_ns start, end; /* over all traces (absolute, the traces' clock) */
    /* Busy figures, summed over ranks, from the analysis' activity (docs/analyses.md);
     * busy_from_analysis is false only when that analysis could not be made (then they are 0). */
    gp_ns cpu_active, gpu_active, overlap;
    bool busy_from_analysis;
    uint64_t n_events; /* slices and samples drawn */
    /* With opts.critical_path: true, the legend per rank, the path's edges between drawn rows, and
     * how many events carry an on_path flag. */
    bool critical_path;
    gp_tl_cp_rank *cp_ranks;
    size_t n_cp_ranks;
    gp_tl_link *cp_links;
    size_t n_cp_links;
    uint64_t n_cp_events;
    /* A job of several ranks: its collectives matched across ranks (rows' coll index them). */
    gp_tl_coll *colls;
    size_t n_colls;
} gp_timeline;

/* Lays out the rows of n traces (by rank: GPU streams by device and stream, CPU threads, other
 * rows, counters, memory; rows of instant markers only are left out) and the nesting depth of every
 * event. The traces must outlive the result. opts may be NULL. *out owned by the caller
 * (gp_timeline_free). GP_ENOMEM, with err (may be NULL) saying what failed. */
GP_EXTERN gp_status gp_timeline_build(const gp_trace *const *traces, size_t n,
                                      const gp_timeline_opts *opts, gp_timeline **out,
                                      gp_error *err) GP_WARN_UNUSED;
GP_EXTERN void gp_timeline_free(gp_timeline *tl);

/* Writes the self-contained timeline page. title may be NULL. */
GP_EXTERN gp_status gp_timeline_render_html(const gp_timeline *tl, const char *title,
                                            FILE *fp) GP_WARN_UNUSED;
GP_EXTERN gp_status gp_timeline_write_html(const gp_timeline *tl, const char *title,
                                           const char *path, gp_error *err) GP_WARN_UNUSED;

/* ---- dashboard --------------------------------------------------------------------------- */

/* A bar or segment of a dashboard chart, with its geometry as fractions of the chart (0..1). */
typedef struct gp_dash_bar {
    const char *label; /* owned by a trace's string table or static */
    gp_event_kind kind;
    double value;  /* ns, or a count */
    double x;      /* stacked charts: left edge; 0 otherwise */
    double frac;   /* width: value / chart maximum (bars) or / chart sum (stacked) */
    double value2; /* per-op chart: calls */
    double frac2;  /* calls / most calls */
} gp_dash_bar;

/* A bar of a partition chart: a time (`total`: the wall time of a thread or stream, or a step's
 * duration) split into segments that add up to it exactly (seg: ns, by the chart's seg_names). */
enum { GP_DASH_SEGS = GP_EV_KIND_COUNT + 1 };
typedef struct gp_dash_part {
    char label[128];
    int32_t rank;
    gp_ns total;
    gp_ns seg[GP_DASH_SEGS];
} gp_dash_part;

/* A chart of partition bars with its segment names (NULL: a segment the chart does not use). */
typedef struct gp_dash_chart {
    const char *seg_names[GP_DASH_SEGS];
    gp_dash_part *parts;
    size_t n_parts;
    size_t n_more; /* bars left out (the chart keeps the busiest) */
} gp_dash_chart;

/* Everything the dashboard shows, computed before rendering. Per-name statistics come from the
 * summary (gp_summary_compute), busy figures from the analysis; dashboard.c computes the job-level
 * figures and the partitions the charts draw, the renderer only formats them. */
enum { GP_DASH_NAME_CAP = 96 }; /* bytes per short name in op_names / top_names */
enum { GP_DASH_CP_BARS = 24 };  /* critical paths drawn as bars (the first ranks' steps) */
typedef struct gp_dashboard {
    const gp_trace *const *traces;
    size_t n_traces;
    const gp_summary *summary;   /* not owned */
    const gp_timeline *timeline; /* compact timeline (not owned) */
    const gp_analysis *analysis; /* bottlenecks and suggestions, memory peak (not owned; may be
                                    NULL: the page then says the panel is unavailable) */
    /* The job's span: earliest start to latest end over every rank, on the traces' common clock
     * (one trace: its span). Never a sum over ranks. */
    gp_ns span;
    uint64_t operations;        /* events with a duration (summary calls over all kinds) */
    uint64_t unique_operations; /* distinct (kind, name): summary rows */
    /* GPU busy: the union of GPU work (analysis temporal: compute + non-compute) of each rank,
     * summed over the ranks (gpu_busy true); without an analysis, the GPU work sum, the summed
     * durations of kernels, memcpys and memsets (gpu_busy false). The page and report --json
     * show GPU busy only when gpu_busy, and the GPU work sum from the summary always. */
    gp_ns gpu_time;
    bool gpu_busy;
    double peak_memory;  /* bytes (the analysis' peak memory); < 0 when unknown */
    char peak_note[256]; /* where the peak was (device, time, what ran), from the analysis */
    /* Time distribution: CPU thread time (self) per event kind, summed over every CPU thread of
     * every rank (gp_track_self_times), one stacked segment per kind with time; fractions are of
     * thread_time, their sum, so the segments partition it. */
    gp_dash_bar dist[GP_EV_KIND_COUNT];
    size_t n_dist;
    gp_ns thread_time;
    /* per-operation bars: the top operations by total time, mean time and calls */
    gp_dash_bar ops[15];
    size_t n_ops;
    /* short names, unique within the chart (gp_shorten_names_unique): op_names[i] for ops[i]
     * (48 characters), top_names + i * GP_DASH_NAME_CAP for summary->top[i] (80 characters) */
    char op_names[15][GP_DASH_NAME_CAP];
    char *top_names;
    /* The GPU span (first to last GPU work of each rank, summed over ranks: the analysis'
     * temporal kernel_time) split into compute / other GPU work (communication, memory, not under
     * compute) / idle; fractions of gpu_span. n_gpu_split 0 without an analysis or GPU work. */
    gp_dash_bar gpu_split[3];
    size_t n_gpu_split;
    gp_ns gpu_span;
    /* memory over time of the device with the highest peak: points as fractions of the chart
     * (x: time over the span, y: bytes over the peak), at most 600 (the highest per bucket) */
    double *mem_x, *mem_y;
    size_t n_mem;
    char mem_label[128];
    /* memory chart axes: the peak's place (fraction of the span), ticks as values (bytes, ns from
     * the start) at fractions 0, 1/4, ... 1 of the chart */
    double mem_peak_x;
    double mem_ytick[5];
    gp_ns mem_xtick[5];
    /* Partitions of wall time (the job's span), one bar per thread or stream (the busiest 16):
     * CPU threads: self time per event kind (seg[kind]) + idle (seg[GP_EV_KIND_COUNT]);
     * GPU streams: busy by kernel type (seg[gp_kernel_type], memcpy/memset are MEMORY) + idle
     * (seg[GP_KT_COUNT]), the union of the stream's GPU work attributed to the event that covers
     * each instant first. */
    gp_dash_chart cpu_parts, gpu_parts;
    /* Per-ProfilerStep breakdown (as TensorBoard's overview): each step of each rank (its
     * ProfilerStep#N on a CPU thread) split by priority, every instant counted once under the
     * first category active then: kernel (non-communication kernels), memcpy, memset,
     * communication (kernels), runtime (CUDA runtime/driver calls), dataloader (CPU ops and
     * annotations named *DataLoader*), CPU exec (other CPU ops), other (none of these). At most
     * 64 steps. */
    gp_dash_chart steps;
    /* The `gpuprof ops` table by op + input shapes (FLOPs, bytes, the roofline) shown as the
     * page's op section; not owned (gp_dashboard_inputs.op_table), NULL: no section. */
    const struct gp_ops *op_table;
    /* In-process profile (is_profile: ranges and no GPU events, what gpu_profiler exports): the
     * operations are the range names, with the figures the profiler stored in each range's args
     * (gpu_ns, cpu_ns, transfer_ns, overhead_ns, mem_peak_bytes; docs/reports.md). prof_ops: one
     * row per range name, by total time (descending). prof_dist: one bar, the ranges' self time
     * (summed over threads and ranks), a segment per operation (the top 16, then the rest).
     * prof_split: a bar per operation (the top 16) of its wall time split into GPU, transfer,
     * profiler overhead, CPU and the rest (not measured, or waiting), each clipped to what is left
     * so the segments add up to the wall time. When no allocator or counter memory exists, the
     * memory chart (mem_*) holds the ranges' mem_peak_bytes at their starts (mem_from_ranges). */
    bool is_profile;
    bool mem_from_ranges;
    struct gp_dash_prof_op *prof_ops;
    size_t n_prof_ops;
    gp_dash_chart prof_dist, prof_split;
    /* torch.compile section: compiled regions per rank (NULL entries: none), not owned
     * (gp_dashboard_inputs.compile; NULL: no section). */
    const struct gp_compile_trace *const *compile;
    size_t n_compile;
    /* The critical-path section (from the analysis): the valid paths of every rank (n_cp_paths),
     * each class summed over them (cp_sums[gp_cp_class], negative class times counted as 0), and
     * the first GP_DASH_CP_BARS of them in rank then step order, each with its rank and the sum of
     * its positive classes (cp_total: the bar's length). */
    size_t n_cp_paths;
    gp_ns cp_sums[GP_CP_COUNT];
    const gp_critical_path *cp_bar[GP_DASH_CP_BARS];
    int32_t cp_rank[GP_DASH_CP_BARS];
    gp_ns cp_total[GP_DASH_CP_BARS];
    size_t n_cp_bars;
} gp_dashboard;

/* One operation (range name) of an in-process profile. Fields never measured are -1. */
typedef struct gp_dash_prof_op {
    const char *name; /* owned by a trace's string table */
    char short_name[GP_DASH_NAME_CAP];
    uint64_t calls;
    gp_ns total, self, min, max;
    double mean;
    gp_ns gpu, cpu, transfer, overhead; /* summed over the calls that measured it, or -1 */
    double mem_avg;                     /* mean mem_peak_bytes of the calls that have it, or -1 */
    double gpu_util;                    /* gpu / total of the calls that measured GPU time, or -1 */
} gp_dash_prof_op;

/* What a dashboard is built from; every input must outlive the dashboard. */
typedef struct gp_dashboard_inputs {
    const gp_trace *const *traces; /* the job's rank traces */
    size_t n_traces;
    const gp_summary *summary;     /* of the traces (required) */
    const gp_timeline *timeline;   /* of the traces (required; the compact timeline) */
    const gp_analysis *analysis;   /* of the traces, or NULL (no findings, no peak memory) */
    const struct gp_ops *op_table; /* `gpuprof ops --by shape` of the traces, or NULL: no op
                                    * section */
    const struct gp_compile_trace *const *compile; /* compiled regions per rank (NULL entries:
                                                    * none), or NULL: no torch.compile section */
    size_t n_compile;
} gp_dashboard_inputs;

/* Fills the dashboard from in. Per-name rows come from the summary; the job's span, the CPU
 * thread self time per kind and the GPU span split are computed here from the traces and the
 * analysis (see gp_dashboard); peak memory and findings come from the analysis (without one they
 * are absent). *out owned by the caller (gp_dashboard_free). GP_ENOMEM, with err (may be NULL)
 * saying what failed. */
GP_EXTERN gp_status gp_dashboard_build(const gp_dashboard_inputs *in, gp_dashboard **out,
                                       gp_error *err) GP_WARN_UNUSED;
GP_EXTERN void gp_dashboard_free(gp_dashboard *d);

GP_EXTERN gp_status gp_dashboard_render_html(const gp_dashboard *d, const char *title,
                                             FILE *fp) GP_WARN_UNUSED;
GP_EXTERN gp_status gp_dashboard_write_html(const gp_dashboard *d, const char *title,
                                            const char *path, gp_error *err) GP_WARN_UNUSED;

/* ---- report.html from a job -------------------------------------------------------------- */

/* Everything report.html shows, built from a job: its summary, its analysis (NULL when the
 * analysis failed: analysis_error says why, and the dashboard shows what it has), the compact
 * timeline (two nesting levels) and the dashboard. `gpuprof report` and `gpuprof serve` build it.
 */
typedef struct gp_report_bundle {
    gp_summary *summary;
    gp_analysis *analysis;
    gp_timeline *timeline;
    gp_dashboard *dashboard;
    struct gp_ops *ops;      /* gpuprof ops --by shape (the dashboard's op section); NULL when
                                it could not be made (ops_error) */
    gp_error analysis_error; /* status GP_OK when the analysis succeeded */
    gp_error ops_error;
    /* Compiled regions (gpuprof/compile.h) of each rank that has "Torch-Compiled Region" ops,
     * NULL for the others; NULL when no rank has any. n_compile is the job's rank count. */
    struct gp_compile_trace **compile;
    size_t n_compile;
} gp_report_bundle;

/* Builds the bundle of job (which must outlive it) with summary options so (NULL: defaults).
 * The op section's FLOPs and bytes need the traces read with gp_read_opts.keep_op_shapes.
 * GP_ENOMEM; an analysis failure is not an error (see analysis_error). *out owned by the caller
 * (gp_report_bundle_free). */
GP_EXTERN gp_status gp_report_bundle_build(const gp_job *job, const gp_summary_opts *so,
                                           gp_report_bundle **out) GP_WARN_UNUSED;
GP_EXTERN void gp_report_bundle_free(gp_report_bundle *b);

#ifdef __cplusplus
}
#endif
#endif
