/* torch.compile analysis: the compile model read from PyTorch's structured compile logs
 * (TORCH_TRACE), its analysis (graph breaks, recompilations, failures, phase times, fusion), the
 * compiled regions of Kineto traces, and their renderers (docs/compile.md).
 *
 * The compile model is a second model beside the trace model (gpuprof/trace.h): a TORCH_TRACE log
 * is not a timeline of events but a record of what Dynamo, AOTAutograd and Inductor did per
 * compile id, so it gets a model of its own (docs/internals/compile.md). One gp_compile_log holds
 * every rank log of a job. Payloads (generated code, graphs) are not held: the reader counts what
 * the analysis needs in them as they stream by and keeps where they are (file, byte offset), so
 * memory follows what is kept, never the size of the log; gp_compile_payload_text reads one back.
 *
 * Ownership: a gp_compile_log owns every string and array it points to; an analysis or a trace
 * report points into the log or trace it was computed from and must not outlive it. */
#ifndef GPUPROF_COMPILE_H
#define GPUPROF_COMPILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gpuprof/core.h"
#include "gpuprof/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the compile model ------------------------------------------------------------------- */

/* What a payload is (from its record kind, or the name of an "artifact" record). */
typedef enum gp_compile_payload_kind {
    GP_CPL_DYNAMO_GRAPH = 0, /* dynamo_output_graph: the FX graph Dynamo captured */
    GP_CPL_AOT_GRAPH,        /* aot_{forward,backward,inference,joint}_graph */
    GP_CPL_PRE_GRAD_GRAPH,   /* inductor_pre_grad_graph */
    GP_CPL_POST_GRAD_GRAPH,  /* inductor_post_grad_graph: the graph Inductor lowers */
    GP_CPL_OUTPUT_CODE,      /* inductor_output_code: the generated Python/Triton module */
    GP_CPL_GUARDS,           /* dynamo_guards, dynamo_cpp_guards_str */
    GP_CPL_GRAPH_BREAK,      /* artifact dynamo_graph_break_reason */
    GP_CPL_EXPORTED_PROGRAM, /* exported_program (torch.export) */
    GP_CPL_ARTIFACT,         /* any other named artifact */
    GP_CPL_OTHER,            /* any other record with a payload */
    GP_CPL_KIND_COUNT
} gp_compile_payload_kind;

/* "dynamo_graph", "aot_graph", "pre_grad_graph", "post_grad_graph", "output_code", "guards",
 * "graph_break", "exported_program", "artifact", "other". */
GP_EXTERN const char *gp_compile_payload_kind_name(gp_compile_payload_kind k);

/* Where a payload lies and what the reader counted in it. Its text is not kept. */
typedef struct gp_compile_payload {
    gp_compile_payload_kind kind;
    const char *name;   /* record kind, or the artifact's name ("fx_graph_cache_hit") */
    uint32_t file;      /* index into gp_compile_log.files */
    uint32_t unit;      /* index into gp_compile_log.units; UINT32_MAX: no compile id */
    uint64_t line;      /* 1-based line of the record that announced it */
    uint64_t offset;    /* byte offset (uncompressed) of its first line in the file */
    uint64_t bytes;     /* payload text size: its lines without the leading tab, joined by '\n' */
    uint64_t raw_bytes; /* bytes its lines span in the file (tabs, newlines, blank lines) */
    uint64_t n_lines;
    /* The text does not hash to the record's has_payload (md5), or the input ended inside it:
     * the payload is incomplete or altered. */
    bool truncated;
    /* Graphs: operator calls (torch.ops.* on lines that are not comments), of which aten. */
    uint32_t n_ops, n_aten_ops;
    /* Output code: kernels it generates (NAME = async_compile.<backend>(...)), calls of library
     * kernels (extern_kernels.*), and operator calls left to eager kernels (torch.ops.* in the
     * code that runs). The kernels' names are gp_compile_log.kernel_names[first_kernel ..
     * first_kernel + n_kernels). */
    uint32_t n_kernels, n_extern, n_fallback;
    uint32_t first_kernel;
} gp_compile_payload;

/* One frame of a user stack (dynamo_start), outermost first. */
typedef struct gp_compile_frame {
    const char *file;
    const char *name;
    int32_t line;
} gp_compile_frame;

/* A compile phase from the chromium_event B/E pairs (dynamo_timed): its summed time. */
typedef struct gp_compile_phase {
    const char *name; /* "entire_frame_compile", "backend_compile", "inductor_compile", ... */
    gp_ns total;
    uint32_t count;
} gp_compile_phase;

/* The compilation times of compilation_metrics, ns (-1: absent). Old logs give seconds
 * (entire_frame_compile_time_s, backend_compile_time_s, ...), new ones cumulative microseconds
 * (dynamo_cumulative_compile_time_us, ...): both are read into these. */
typedef struct gp_compile_times {
    gp_ns total;          /* the whole frame: entire_frame_compile_time_s / dynamo_cumulative */
    gp_ns backend;        /* backend_compile_time_s (the backend, AOT + Inductor) */
    gp_ns aot;            /* aot_autograd_cumulative_compile_time_us */
    gp_ns inductor;       /* inductor_compile_time_s / inductor_cumulative_compile_time_us */
    gp_ns code_gen;       /* code_gen_time_s / inductor_code_gen_cumulative_compile_time_us */
    gp_ns before_restart; /* dynamo_time_before_restart_s: time lost to restarts */
} gp_compile_times;

/* One compile id of one rank: frame_id/frame_compile_id, attempt N (a restart of the analysis).
 * Recompilations of frame F are F/1, F/2, ...; a frame whose function starts with
 * "torch_dynamo_resume_in_" is the continuation after a graph break. */
typedef struct gp_compile_unit {
    int32_t rank;
    uint32_t file;
    int32_t frame_id, frame_compile_id, attempt; /* attempt 0 when absent */
    int32_t compiled_autograd_id;                /* -1 when absent */
    char id[48]; /* "0/1", "0/0_1" (attempt 1), "!0/1/0"; "0/0 #2": the id's 2nd occurrence */
    /* A compile id is unique within one dynamo session only (torch._dynamo.reset() restarts at
     * 0/0): occurrence counts the units of this id so far (1 for the first), session the dynamo
     * resets before this unit's (0 for the first session). */
    int32_t occurrence, session;
    uint64_t first_line; /* first record of the unit */
    const char *co_name; /* function ("" when unknown) */
    const char *co_filename;
    int32_t co_firstlineno; /* -1 when unknown */
    gp_compile_frame *stack;
    size_t n_stack;
    bool has_start;   /* a dynamo_start record */
    bool has_metrics; /* a compilation_metrics record */
    /* compilation_metrics counts, -1 when absent or null. */
    int64_t graph_op_count, graph_node_count, graph_input_count;
    int64_t guard_count, shape_env_guard_count;
    int64_t cache_size_limit; /* dynamo_config's cache_size_limit (recompile limit) */
    gp_compile_times times;
    const char *fail_type; /* NULL when the compile did not fail */
    const char *fail_reason;
    const char *fail_user_file;
    int32_t fail_user_line;
    const char **restart_reasons;
    size_t n_restart_reasons;
    /* Why this compile happened again: compilation_metrics.recompile_reason, or the first reason
     * of a recompile_reasons artifact. NULL for a first compile. */
    const char *recompile_reason;
    /* A dynamo_graph_break_reason artifact: its reason line and the user line it names (NULL /
     * "" / -1 when absent). */
    const char *break_reason;
    const char *break_file;
    int32_t break_line;
    /* Cache artifacts (*_cache_hit, *_cache_miss, *_cache_bypass) of every cache. */
    uint32_t cache_hits, cache_misses, cache_bypasses;
    gp_compile_phase *phases; /* in order of first appearance */
    size_t n_phases;
    uint32_t *payloads; /* indices into gp_compile_log.payloads, in log order */
    size_t n_payloads;
} gp_compile_unit;

/* What the reader saw, per file and summed. */
typedef struct gp_compile_read_stats {
    uint64_t bytes;              /* uncompressed bytes read */
    uint64_t lines;              /* lines, payload lines included */
    uint64_t records;            /* lines with a glog prefix and a JSON object */
    uint64_t payload_lines;      /* tab-indented lines of payloads */
    uint64_t blank_lines;        /* empty lines (skipped, as tlparse does) */
    uint64_t bad_prefix;         /* lines without a glog prefix (skipped, warned) */
    uint64_t bad_json;           /* lines whose JSON did not parse (skipped, warned) */
    uint64_t stray_payload;      /* tab-indented lines that follow no record with a payload */
    uint64_t truncated_payloads; /* payloads with a hash mismatch or cut by the end of input */
    uint64_t unknown_records;    /* records of a kind the reader does not know (counted) */
} gp_compile_read_stats;

typedef struct gp_compile_file {
    const char *path;
    int32_t rank;        /* the records' "rank", else _rank_N in the name, else file order */
    bool rank_from_name; /* not from the records */
    bool compressed;     /* gzip */
    gp_compile_read_stats stats;
} gp_compile_file;

/* A record kind and how many records of it were read. */
typedef struct gp_compile_kind_count {
    const char *kind;
    uint64_t count;
    bool known; /* a kind the reader interprets or knows to ignore */
} gp_compile_kind_count;

/* torch.export records. */
typedef struct gp_compile_export {
    uint64_t exported_programs;   /* exported_program */
    uint64_t guards_added;        /* guard_added */
    uint64_t symbols_created;     /* create_symbol */
    uint64_t unbacked_symbols;    /* create_unbacked_symbol */
    uint64_t data_dependent;      /* propagate_real_tensors_provenance (draft export) */
    uint64_t missing_fake_kernel; /* missing_fake_kernel */
    uint64_t mismatched_fake_kernel;
} gp_compile_export;

typedef struct gp__strtab gp__strtab;

typedef struct gp_compile_log {
    gp_compile_file *files; /* sorted by rank, then path */
    size_t n_files;
    gp_compile_unit *units; /* by file, then first appearance in it */
    size_t n_units;
    gp_compile_payload *payloads; /* by file, then offset */
    size_t n_payloads;
    const char **kernel_names; /* generated kernels of every output code (see payload) */
    size_t n_kernel_names;
    gp_compile_kind_count *kinds; /* every record kind seen, in order of first appearance */
    size_t n_kinds;
    gp_compile_export export_info;
    /* A torch.export log: exported_program records, or export records and no compile. */
    bool is_export;
    gp_compile_read_stats stats; /* summed over the files */
    /* Warnings about the input ("simple.log: line 12: invalid JSON (...), line skipped"), at most
     * 100 kept; warnings_total counts all. */
    const char **warnings;
    size_t n_warnings;
    uint64_t warnings_total;
    gp__strtab *strings;
    void *priv; /* reader state; a buffer's bytes for gp_compile_log_read_buffer */
} gp_compile_log;

typedef struct gp_compile_read_opts {
    /* Progress: called every few MB with bytes read so far and the total (0 if unknown). */
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
    /* Refuse any file that is not a regular one (a FIFO, device or socket: GP_EIO naming it),
     * when the log is read and when its payloads are read back, rather than read it as a stream;
     * it is opened without waiting, so a file swapped for a FIFO never blocks (gpuprof serve).
     * Default (false): a FIFO given as the log is read as a stream (`<(zcat log.gz)`). */
    bool regular_files_only;
} gp_compile_read_opts;

/* Reads a TORCH_TRACE log: a file (plain or gzip, any name) or a directory of rank logs (every
 * regular file in it whose name ends in .log or .log.gz, or starts with dedicated_log_torch_trace).
 * opts may be NULL. Bad lines do not fail the read: a line without a glog prefix or with invalid
 * JSON is a warning ("FILE: line N: ...") and is skipped; unknown record kinds are counted; an
 * incomplete payload is counted and warned. Fails with GP_ENOENT (nothing at path), GP_EIO
 * (cannot open or read; a directory
 * without logs), GP_EPARSE (corrupt gzip; a file with lines but not one record: not a TORCH_TRACE
 * log), GP_ENOMEM. On success *out is the caller's (gp_compile_log_free). */
GP_EXTERN gp_status gp_compile_log_read(const char *path, const gp_compile_read_opts *opts,
                                        gp_compile_log **out, gp_error *err) GP_WARN_UNUSED;
/* Whether a file named name (no directory) is read as a rank log of a directory by
 * gp_compile_log_read: it ends in .log or .log.gz, or starts with dedicated_log_torch_trace, and
 * is not hidden. By name only (gpuprof serve lists logs without opening them). */
GP_EXTERN bool gp_compile_log_name(const char *name);
/* As gp_compile_log_read, from memory (one file named name). data must stay valid while payload
 * texts are read from the log. */
GP_EXTERN gp_status gp_compile_log_read_buffer(const char *data, size_t len, const char *name,
                                               gp_compile_log **out, gp_error *err) GP_WARN_UNUSED;
GP_EXTERN void gp_compile_log_free(gp_compile_log *log);

/* Reads the text of payloads back (reopening the files; one pass when they are asked for in
 * file order). */
typedef struct gp_compile_payload_reader gp_compile_payload_reader;
GP_EXTERN gp_status gp_compile_payload_open(const gp_compile_log *log,
                                            gp_compile_payload_reader **out) GP_WARN_UNUSED;
/* The text of p (tabs removed, lines joined by '\n'), at most max bytes of it, NUL-terminated in
 * *text (the reader's buffer, valid until the next call); *len its length. GP_EIO / GP_EPARSE when
 * the file changed or cannot be read, GP_ENOMEM. */
GP_EXTERN gp_status gp_compile_payload_text(gp_compile_payload_reader *r,
                                            const gp_compile_payload *p, size_t max,
                                            const char **text, size_t *len,
                                            gp_error *err) GP_WARN_UNUSED;
GP_EXTERN void gp_compile_payload_close(gp_compile_payload_reader *r);

/* ---- analysis of a log ------------------------------------------------------------------- */

/* What a graph break or a recompilation was about, from its reason text. */
typedef enum gp_compile_cause {
    GP_CC_EXPLICIT = 0,   /* torch._dynamo.graph_break() or a function Dynamo skips */
    GP_CC_DATA_DEPENDENT, /* control flow on tensor values */
    GP_CC_SCALAR,         /* .item() / .tolist(): a tensor value into Python */
    GP_CC_DYNAMIC_OUTPUT, /* operators with data-dependent output shapes (nonzero, unique) */
    GP_CC_UNSUPPORTED,    /* an unsupported builtin, C extension or Python construct */
    GP_CC_PRINT,          /* print / logging inside the compiled function */
    GP_CC_SHAPE,          /* recompile: a size or stride changed (dynamic shapes) */
    GP_CC_TYPE,           /* recompile: dtype, device or requires_grad changed */
    GP_CC_IDENTITY,       /* recompile: a guarded object (id, module, function) changed */
    GP_CC_VALUE,          /* recompile: a guarded Python value changed */
    GP_CC_CACHE_LIMIT,    /* the cache (recompile) limit was hit */
    GP_CC_OTHER,
    GP_CC_COUNT
} gp_compile_cause;

/* "explicit", "data_dependent", "scalar", "dynamic_output", "unsupported", "print", "shape",
 * "type", "identity", "value", "cache_limit", "other". */
GP_EXTERN const char *gp_compile_cause_name(gp_compile_cause c);
/* The advice for a cause (one sentence, static). */
GP_EXTERN const char *gp_compile_cause_suggestion(gp_compile_cause c);

/* A graph break: Dynamo stopped the graph at a user line and resumed after it. */
typedef struct gp_compile_break {
    int32_t rank;
    uint32_t unit;        /* the compile that broke (UINT32_MAX when not in the log) */
    uint32_t resume_unit; /* the torch_dynamo_resume_in_* compile (UINT32_MAX when none) */
    const char *function; /* user function that broke */
    const char *file;     /* user file and line of the break ("" / -1 unknown) */
    int32_t line;
    const char *reason; /* "" when the log does not say */
    gp_compile_cause cause;
} gp_compile_break;

/* A recompilation: compile id F/N with N >= 1. */
typedef struct gp_compile_recompile {
    int32_t rank;
    uint32_t unit;
    const char *reason; /* "" when the log does not say */
    gp_compile_cause cause;
} gp_compile_recompile;

/* A frame (frame_id of one rank): its compiles and recompiles. */
typedef struct gp_compile_frame_stats {
    int32_t rank;
    int32_t frame_id;
    uint32_t first_unit;
    uint32_t compiles;   /* distinct frame_compile_id */
    uint32_t recompiles; /* compiles - 1 */
    int64_t limit;       /* cache_size_limit from the log, -1 unknown */
    bool over_limit;     /* recompiles reached the limit */
    bool is_resume;      /* a torch_dynamo_resume_in_* frame */
} gp_compile_frame_stats;

/* A compiled graph: an Inductor output code against its post-grad graph. */
typedef struct gp_compile_graph {
    uint32_t unit;
    uint32_t code_payload;  /* UINT32_MAX when no output code */
    uint32_t graph_payload; /* post-grad graph, UINT32_MAX when none */
    uint32_t ops, aten_ops; /* of the post-grad graph */
    uint32_t kernels, extern_calls, fallback_ops;
    /* aten ops per generated kernel (0 when either is 0): how many aten ops each kernel fused. */
    double fusion_ratio;
} gp_compile_graph;

/* One rank's figures. */
typedef struct gp_compile_rank {
    int32_t rank;
    uint32_t frames, compiles, recompiles, breaks, failures, graphs;
    gp_ns compile_time; /* -1 when no compile of the rank has a time */
} gp_compile_rank;

typedef struct gp_compile_summary {
    uint32_t ranks, frames, compiles, recompiles, breaks, failures, restarts, graphs;
    gp_ns compile_time;                     /* summed frame times (times.total) */
    gp_ns backend, aot, inductor, code_gen; /* summed where the log has them; -1: nowhere */
    uint64_t cache_hits, cache_misses;
    double cache_hit_rate; /* hits / (hits + misses), -1 with neither */
    uint64_t kernels, aten_ops;
    double fusion_ratio; /* aten ops / kernels over graphs with both, 0 when none */
} gp_compile_summary;

typedef struct gp_compile_analysis {
    gp_compile_summary summary;
    gp_compile_phase *phases; /* chromium phases over every unit, by total time desc */
    size_t n_phases;
    gp_compile_break *breaks;
    size_t n_breaks;
    gp_compile_recompile *recompiles;
    size_t n_recompiles;
    uint32_t *failures; /* unit indices of compiles with a fail_type */
    size_t n_failures;
    gp_compile_frame_stats *frames;
    size_t n_frames;
    gp_compile_graph *graphs;
    size_t n_graphs;
    gp_compile_rank *ranks;
    size_t n_ranks;
    /* Where ranks compiled differently ("rank 1: 15 compiles, rank 0: 1"), one sentence each. */
    const char **divergences;
    size_t n_divergences;
    char *text; /* storage of the sentences above */
} gp_compile_analysis;

/* Analyses a log. GP_ENOMEM. *out is the caller's (gp_compile_analysis_free). */
GP_EXTERN gp_status gp_compile_analyze(const gp_compile_log *log,
                                       gp_compile_analysis **out) GP_WARN_UNUSED;
GP_EXTERN void gp_compile_analysis_free(gp_compile_analysis *a);

/* ---- compiled regions of a trace --------------------------------------------------------- */

/* A compiled region ("Torch-Compiled Region: 0/0" cpu_op): its calls and the work they launched.
 * A kernel belongs to a region when its launch (runtime/driver call) lies inside the region on
 * the same thread. */
typedef struct gp_compile_region {
    const char *name;  /* "0/0" (the compile id) */
    const char *graph; /* first "## Call CompiledFxGraph HASH ##" inside it, "" when none */
    uint64_t calls;
    gp_ns cpu_time;          /* summed region durations */
    gp_ns gpu_time;          /* summed durations of the GPU work it launched */
    uint64_t kernels;        /* kernels launched */
    uint64_t triton_kernels; /* of which triton_* (generated) */
    uint64_t launches;       /* launch calls */
    gp_ns launch_time;       /* summed durations of those launch calls (launch overhead) */
} gp_compile_region;

/* What ran between two compiled regions (docs/compile.md, "Graph breaks at run time"). */
typedef enum gp_compile_gap_kind {
    GP_CGAP_BETWEEN = 0, /* between calls: back to an earlier or the same frame, or the log names
                            no break between the two frames */
    GP_CGAP_PROBABLE,    /* no log: `to` is a frame compiled after `from`'s (a graph break resumes
                            in a frame compiled after the one that broke; two compiled functions
                            called in a row look the same) */
    GP_CGAP_BREAK        /* the log names a graph break of from's frame resuming in to's frame */
} gp_compile_gap_kind;

/* "between", "probable_break", "graph_break". */
GP_EXTERN const char *gp_compile_gap_kind_name(gp_compile_gap_kind k);

enum { GP_COMPILE_GAP_OPS = 4 }; /* eager ops named per gap */

/* Transitions from a call of region `from` to the next outermost region call on the same CPU
 * thread, `to`, and what ran in the time between (eager code: at a graph break, the eager
 * fallback, the guard checks of the resume function and its launches). */
typedef struct gp_compile_gap {
    const char *from, *to; /* region names (compile ids) */
    gp_compile_gap_kind kind;
    uint32_t brk;   /* GP_CGAP_BREAK: index into the linked analysis' breaks, else UINT32_MAX */
    uint64_t count; /* transitions */
    gp_ns wall;     /* summed time from the end of a `from` call to the start of the `to` call */
    gp_ns cpu_ops;  /* outermost cpu_op time in those gaps, guard checks excluded */
    gp_ns guard;    /* "TorchDynamo Cache Lookup" in those gaps */
    gp_ns gpu;      /* GPU work launched in those gaps */
    uint64_t kernels, launches;
    gp_ns launch_time;
    /* The outermost eager ops with the most time in those gaps (NULL past the last). */
    const char *ops[GP_COMPILE_GAP_OPS];
    gp_ns op_time[GP_COMPILE_GAP_OPS];
} gp_compile_gap;

typedef struct gp_compile_trace {
    const char *source;
    int32_t rank;         /* the trace's distributedInfo rank, -1 when the trace has none */
    gp_compile_gap *gaps; /* by kind (breaks first), then wall time desc */
    size_t n_gaps;
    bool linked;                /* gaps classified against a log (gp_compile_trace_link) */
    gp_ns span;                 /* first start to last end of the trace */
    gp_compile_region *regions; /* by gpu_time desc */
    size_t n_regions;
    gp_ns cpu_compiled, cpu_eager; /* outermost cpu_op time inside / outside regions */
    gp_ns cpu_guard;               /* "TorchDynamo Cache Lookup": guard evaluation */
    gp_ns gpu_compiled, gpu_eager; /* GPU work launched inside / outside regions */
    gp_ns gpu_unlinked;            /* GPU work without a launch in the trace */
    uint64_t kernels_compiled, kernels_eager;
    gp_ns launch_compiled, launch_eager; /* launch call time */
    uint64_t launches_compiled, launches_eager;
} gp_compile_trace;

/* The compiled regions of a trace. GP_ENOMEM. *out is the caller's (gp_compile_trace_free). */
GP_EXTERN gp_status gp_compile_trace_analyze(const gp_trace *t,
                                             gp_compile_trace **out) GP_WARN_UNUSED;
GP_EXTERN void gp_compile_trace_free(gp_compile_trace *t);
/* True when the trace has a "Torch-Compiled Region" op name (a look at its string table, not its
 * events: cheap enough to ask before gp_compile_trace_analyze on every report). */
GP_EXTERN bool gp_compile_trace_has_regions(const gp_trace *t);
/* Classifies t's gaps against the graph breaks of a log (a of log): a gap from frame F to frame R
 * is GP_CGAP_BREAK when a break of F resumes in R (a break of t's rank first, else of any rank),
 * else GP_CGAP_BETWEEN; sets linked. Re-sorts the gaps (the break's index stays in brk). */
GP_EXTERN void gp_compile_trace_link(gp_compile_trace *t, const gp_compile_log *log,
                                     const gp_compile_analysis *a);

/* Two traces (eager and compiled, or two modes): speedups base / current, > 1 when current is
 * faster. Regions are paired by name; a region of one side only has 0 for the other. */
typedef struct gp_compile_region_pair {
    const char *name;
    const gp_compile_region *base, *cur; /* NULL when absent on that side */
    double gpu_speedup, cpu_speedup;     /* 0 when either side lacks it */
} gp_compile_region_pair;

typedef struct gp_compile_speedup {
    double span_speedup; /* trace spans */
    double gpu_speedup;  /* total GPU work */
    double cpu_speedup;  /* outermost CPU op time */
    gp_compile_region_pair *pairs;
    size_t n_pairs;
} gp_compile_speedup;

GP_EXTERN gp_status gp_compile_speedup_compute(const gp_compile_trace *base,
                                               const gp_compile_trace *cur,
                                               gp_compile_speedup **out) GP_WARN_UNUSED;
GP_EXTERN void gp_compile_speedup_free(gp_compile_speedup *s);

/* ---- rendering --------------------------------------------------------------------------- */

/* Everything one `gpuprof compile` run shows; any part may be absent (NULL / 0). */
typedef struct gp_compile_report {
    const gp_compile_log *log;
    const gp_compile_analysis *analysis; /* of log */
    const gp_compile_trace *const *traces;
    size_t n_traces;
    const gp_compile_speedup *speedup; /* traces[0] -> traces[1] */
    size_t top_n;                      /* text: rows per list, 0 = all */
    const char *title;                 /* HTML */
    const char
        *nav_html; /* HTML: markup placed right after <body> (the server's bar); NULL: none */
} gp_compile_report;

/* Text and JSON (schema gpuprof.compile/1, docs/compile.md) on fp. GP_EIO. */
GP_EXTERN gp_status gp_compile_render_text(const gp_compile_report *r, FILE *fp) GP_WARN_UNUSED;
GP_EXTERN gp_status gp_compile_render_json(const gp_compile_report *r, FILE *fp) GP_WARN_UNUSED;
/* The self-contained HTML report: one row per compile id with its graphs and generated code
 * (read back from the log's files, each shown up to 256 KiB), breaks highlighted, the phase-time
 * chart. GP_EIO, or the payload reader's error in err. */
GP_EXTERN gp_status gp_compile_render_html(const gp_compile_report *r, FILE *fp,
                                           gp_error *err) GP_WARN_UNUSED;

#ifdef __cplusplus
}
#endif

#endif
