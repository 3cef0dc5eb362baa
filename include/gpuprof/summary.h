/* Per-name statistics of a trace (or several rank traces): the data behind `gpuprof summary`, the
 * in-process profiler's summary, the dashboard's operation table and `gpuprof diff`.
 *
 * For every event kind, events are grouped by name; each group gets calls, total, mean, min, max,
 * standard deviation (population), p50/p95/p99 (linear interpolation between closest ranks, as
 * numpy's default) of the events' durations (inclusive time), their self time (gp_track_self_times:
 * the duration minus every event nested in it on the same CPU thread, whatever its kind; on GPU
 * streams self == duration) and its share of the kind's partition. Inclusive times of nested events
 * overlap, so they are never summed into a share: shares are of self time. Rows are sorted by self
 * time, descending (as torch's key_averages().table(sort_by="self_cpu_time_total"); for GPU work
 * self == total), ties by total, then name. Names point into the traces' string tables: a summary
 * must not outlive them. */
#ifndef GPUPROF_SUMMARY_H
#define GPUPROF_SUMMARY_H

#include "gpuprof/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_name_stats {
    const char *name; /* owned by a trace's string table */
    gp_event_kind kind;
    uint64_t calls;
    gp_ns total;
    gp_ns min, max;
    double mean;          /* ns */
    double stddev;        /* ns, population */
    double p50, p95, p99; /* ns; total..p99 are of durations (inclusive time) */
    double share;         /* self_total / kind's denominator (0..1), see gp_kind_summary */
    gp_ns self_total;     /* summed self time, <= total; == total on GPU streams */
    double self_mean;     /* self_total / calls, ns */
    /* Summed durations of the calls that start inside no call of the same kind and name on their
     * thread: a recursive name's inclusive time with each call stack counted once (total adds a
     * nested `next` to the `next` around it, and can exceed the trace's span); self_total <=
     * total_once <= total
     * where calls nest properly (a call that runs past its parent's end is the exception). */
    gp_ns total_once;
    /* Per-operation figures of a gpuprof profile (the args the profiler writes into its ranges,
     * docs/profiler.md); -1 on rows none of whose calls carry them (every row of a Kineto trace):
     * mem_avg: mean of the calls' mem_peak_bytes (bytes; memory tracking on), the seed tools'
     * "avg memory"; gpu_util: the calls' summed gpu_ns over their summed wall time (0..1, the
     * calls that measured GPU time only), "avg GPU utilisation". */
    double mem_avg;
    double gpu_util;
} gp_name_stats;

typedef struct gp_kind_summary {
    gp_event_kind kind;
    gp_name_stats *rows; /* sorted by self_total desc, then total desc */
    size_t n_rows;
    uint64_t calls;
    /* Sum of durations of this kind. Nested events (aten::linear and the aten::addmm inside it)
     * are counted once each, so on CPU-side kinds this is not a time: kept for compatibility. */
    gp_ns total;
    /* Sum of self times of this kind: a partition (no instant counted twice), at most the union of
     * the kind's events per thread. */
    gp_ns self_total;
    /* share denominator: for GPU work (kernel, memcpy, memset) the summed duration of all
     * kernel+memcpy+memset events of the input (the GPU work sum; GPU events do not nest, so this
     * is also their summed self time); for every other kind, the kind's self_total. The shares of a
     * CPU-side kind sum to 1; those of GPU work sum to 1 across the three GPU-work kinds. */
    gp_ns denominator;
} gp_kind_summary;

typedef struct gp_summary {
    size_t n_traces;
    gp_kind_summary kinds[GP_EV_KIND_COUNT]; /* n_rows == 0 for kinds absent or not asked for */
    /* Any kernel, memcpy or memset in the input, whatever opts.kinds selects. */
    bool has_gpu;
    /* The GPU work sum (docs/analyses.md, "Terms"; JSON gpu_work_sum_ns): summed
     * kernel+memcpy+memset durations of the input, whatever opts.kinds selects. */
    gp_ns gpu_time;
    /* Earliest start to latest end over all events, per trace, summed over the traces: a sum of
     * spans, never a job's span (gp_dashboard.span is that). JSON: span_ns. */
    gp_ns span_sum;
    /* The readers' counts, summed over the traces. */
    gp_read_stats input;
    /* Top-N bottlenecks by self time: GPU work when the selected kinds hold any (top_is_gpu), else
     * CPU ops, annotations and ranges. */
    gp_name_stats *top;
    size_t n_top;
    bool top_is_gpu;
    uint32_t kinds_selected; /* opts.kinds: 0 = every kind with a duration */
    /* Some row has mem_avg >= 0 / gpu_util >= 0: the renderers show those columns only then. */
    bool has_mem_avg, has_gpu_util;
} gp_summary;

typedef struct gp_summary_opts {
    uint32_t kinds; /* bit mask of (1u << gp_event_kind); 0 = every kind with a duration */
    size_t top_n;   /* bottleneck rows (default 10) */
} gp_summary_opts;

GP_EXTERN void gp_summary_opts_init(gp_summary_opts *opts);

/* Computes the summary over n traces (rows of equal kind and name merge across traces).
 * opts may be NULL. On success *out is owned by the caller (gp_summary_free). GP_ENOMEM, with err
 * (may be NULL) saying what failed. */
GP_EXTERN gp_status gp_summary_compute(const gp_trace *const *traces, size_t n,
                                       const gp_summary_opts *opts, gp_summary **out,
                                       gp_error *err) GP_WARN_UNUSED;
GP_EXTERN void gp_summary_free(gp_summary *s);

/* Renderers. Text is the fixed-width report ("GPU KERNEL TIMING REPORT", ...); tables of CPU-side
 * kinds show self and inclusive time, and their TOTAL row is of self time. JSON and CSV carry every
 * field. Return GP_EIO when the stream fails. */
typedef struct gp_summary_render_opts {
    size_t top_n;   /* rows per table; 0 = all (what machine output gets unless --top is given) */
    int name_width; /* text: width of the name column (default 40) */
} gp_summary_render_opts;

GP_EXTERN gp_status gp_summary_render_text(const gp_summary *s, const gp_summary_render_opts *o,
                                           FILE *fp) GP_WARN_UNUSED;
GP_EXTERN gp_status gp_summary_render_json(const gp_summary *s, const gp_summary_render_opts *o,
                                           FILE *fp) GP_WARN_UNUSED;
GP_EXTERN gp_status gp_summary_render_csv(const gp_summary *s, const gp_summary_render_opts *o,
                                          FILE *fp) GP_WARN_UNUSED;

/* Writes a readable short form of a (demangled C++) kernel or op name into out (size cap, always
 * NUL-terminated): return type and argument list dropped, template arguments collapsed to "<...>",
 * at most the last two scopes kept, then the middle elided with "..." if still longer than width.
 * e.g. "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, ...>(int,
 * ...)"
 *   -> "native::vectorized_elementwise_kernel<...>". */
GP_EXTERN void gp_shorten_name(const char *name, size_t width, char *out, size_t cap);

/* Short forms of a set of names shown together (the rows of one table, chart or finding list):
 * gp_shorten_name of each, except that two different names never get the same short form. Where
 * shortening makes different names equal, each is shown from its long form (the name without a
 * "void " return type and the trailing argument list) around the part that tells it from the most
 * similar other name: the differing template argument, the dropped prefix such as
 * "autograd::engine::evaluate_function: "; whatever still collides gets "#2", "#3"... in input
 * order. Equal names get equal short forms. Each short form fits width characters (when width >=
 * 16). out holds n * cap bytes: the short form of names[i] is the NUL-terminated string at
 * out + i * cap (a NULL name counts as ""). Allocates a scratch index of n entries and frees it:
 * GP_ENOMEM; GP_EINVAL when cap is 0 and n is not. Cost O(n log n) plus O(k^2) per group of k
 * colliding names. */
GP_EXTERN gp_status gp_shorten_names_unique(const char *const *names, size_t n, size_t width,
                                            char *out, size_t cap) GP_WARN_UNUSED;

#ifdef __cplusplus
}
#endif
#endif
