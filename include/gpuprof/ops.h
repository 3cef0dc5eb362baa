/* Operator attribution and the per-operator roofline: the data behind `gpuprof ops`.
 *
 * Every piece of GPU work (kernel, memcpy, memset) belongs to the CPU operator that launched it:
 * its correlation id names a runtime/driver launch call, and the launch's launcher is the innermost
 * `cpu_op` open on that thread when the call starts. A graph replay's kernels all carry the graph
 * launch's correlation: they go to the op that launched the graph, flagged as replayed. GPU work
 * whose correlation names no launch call, or whose launch ran outside every op, is listed on rows
 * of its own ("(no launch event)", "(launched outside any op)"), never dropped.
 *
 * Per op instance: self CPU (gp_track_self_times: the duration minus every event nested in it on
 * the thread), inclusive CPU (the duration), GPU time it launched directly ("self GPU"), GPU time
 * of its whole subtree of nested ops ("GPU"), the union of that subtree's GPU intervals ("busy")
 * and kernel counts. Instances are grouped (gp_ops_by) and each group's figures are sums, so the
 * self CPU and self GPU columns are partitions: the TOTAL row of self GPU is all GPU work of the
 * input.
 *
 * Performance model: for the operators of docs/ops.md (GEMMs, convolutions, attention,
 * normalisation, softmax, elementwise, reductions) the FLOPs and bytes moved come from the op's
 * record_shapes args (Input Dims, Input type, Concrete Inputs; read with
 * gp_read_opts.keep_op_shapes). Achieved rates are over the op's subtree GPU time; the roofline
 * time of an instance is max(FLOPs / peak FLOP/s of its dtype, bytes / peak bandwidth), and a
 * group's % of roofline is its summed roofline time over its summed GPU time. Peaks come from a
 * table of common GPUs (docs/ops.md names the sources) matched on deviceProperties, or from
 * gp_ops_opts; an unknown device gives achieved rates without a %.
 *
 * Names and shape texts in results point into the traces' string tables (or into the result): a
 * gp_ops must not outlive the traces it was computed from. */
#ifndef GPUPROF_OPS_H
#define GPUPROF_OPS_H

#include <stdio.h>

#include "gpuprof/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How instances are grouped into rows. */
typedef enum gp_ops_by {
    GP_OPS_BY_NAME = 0,   /* the operator's name (default) */
    GP_OPS_BY_SHAPE,      /* name + Input Dims + Input type */
    GP_OPS_BY_MODULE,     /* innermost nn.Module (python_function "nn.Module: Name_N") */
    GP_OPS_BY_LINE,       /* innermost Python source line outside torch itself */
    GP_OPS_BY_ANNOTATION, /* innermost user annotation (record_function), ProfilerStep#N aside */
    GP_OPS_BY_KERNEL,     /* the GPU work's own name, with the ops that launched it */
    GP_OPS_BY_INSTANCE,   /* one row per op instance */
    GP_OPS_BY_COUNT
} gp_ops_by;

/* Row order. Every order is descending but efficiency (lowest % of roofline first; rows without
 * a % last); ties by GPU time, then key. */
typedef enum gp_ops_sort {
    GP_OPS_SORT_SELF_GPU = 0, /* default */
    GP_OPS_SORT_GPU,
    GP_OPS_SORT_SELF_CPU,
    GP_OPS_SORT_CPU,
    GP_OPS_SORT_CALLS,
    GP_OPS_SORT_TFLOPS,
    GP_OPS_SORT_EFFICIENCY,
    GP_OPS_SORT_COUNT
} gp_ops_sort;

/* "name", "shape", ... / "self_gpu", "gpu", ...: the CLI spellings. */
GP_EXTERN const char *gp_ops_by_name(gp_ops_by by);
GP_EXTERN const char *gp_ops_sort_name(gp_ops_sort sort);
/* Inverses; GP_EINVAL when unknown (*out untouched). */
GP_EXTERN gp_status gp_ops_by_parse(const char *s, gp_ops_by *out) GP_WARN_UNUSED;
GP_EXTERN gp_status gp_ops_sort_parse(const char *s, gp_ops_sort *out) GP_WARN_UNUSED;

/* The performance model's operator families (docs/ops.md). */
typedef enum gp_op_category {
    GP_OPCAT_NONE = 0, /* no model */
    GP_OPCAT_GEMM,
    GP_OPCAT_CONV_FWD,
    GP_OPCAT_CONV_BWD,
    GP_OPCAT_ATTN_FWD,
    GP_OPCAT_ATTN_BWD,
    GP_OPCAT_NORM_FWD,
    GP_OPCAT_NORM_BWD,
    GP_OPCAT_SOFTMAX,
    GP_OPCAT_ELEMENTWISE,
    GP_OPCAT_REDUCE,
    GP_OPCAT_COUNT
} gp_op_category;

/* Data types of the peak table. */
typedef enum gp_op_dtype {
    GP_DT_UNKNOWN = 0, /* absent, or mixed within a row */
    GP_DT_FP64,
    GP_DT_FP32,
    GP_DT_TF32,
    GP_DT_BF16,
    GP_DT_FP16,
    GP_DT_FP8,
    GP_DT_INT8,
    GP_DT_OTHER, /* integers, bool, complex: no peak */
    GP_DT_COUNT
} gp_op_dtype;

typedef enum gp_op_bound { GP_BOUND_NONE = 0, GP_BOUND_MEMORY, GP_BOUND_COMPUTE } gp_op_bound;

/* "GEMM", "CONV_fwd", ... ; "bf16", "fp32", ... ; "memory", "compute" ("" for none). */
GP_EXTERN const char *gp_op_category_name(gp_op_category c);
GP_EXTERN const char *gp_op_dtype_name(gp_op_dtype d);
GP_EXTERN const char *gp_op_bound_name(gp_op_bound b);

/* A device's roof: dense peak arithmetic rate per dtype and memory bandwidth. */
typedef struct gp_device_peak {
    const char *entry;  /* the table entry used ("NVIDIA H100 SXM5"), NULL when none matched */
    const char *device; /* deviceProperties name of the trace (trace string); for an unnamed
                         * device that its properties identify, a static description
                         * ("unnamed gfx942, 304 CUs, 192 GiB: AMD Instinct MI300X"); NULL
                         * when absent */
    int32_t num_sms;    /* deviceProperties numSms, -1 when absent */
    double tflops[GP_DT_COUNT]; /* TFLOP/s (10^12 per second); 0 = unknown */
    double tbps;                /* TB/s (10^12 bytes per second); 0 = unknown */
    bool overridden;            /* --peak-tflops / --peak-tbps given */
} gp_device_peak;

/* The peak of a device name (deviceProperties name), from the built-in table; all zero and
 * entry NULL when no entry matches. total_mem (bytes, 0 when unknown) tells A100 40 GB from 80 GB.
 */
GP_EXTERN void gp_device_peak_lookup(const char *device, int64_t total_mem, gp_device_peak *out);

/* One row of the table. */
typedef struct gp_ops_row {
    const char *key; /* op name, module, line, annotation or kernel name; "(no launch event)"
                        and "(launched outside any op)" on unattributed rows */
    const char
        *shapes;       /* by shape / instance: the Input Dims JSON text; NULL otherwise or absent */
    const char *types; /* by shape / instance: the Input type JSON text; NULL otherwise or absent */
    /* innermost module and source line (python_function names) of the instance, or of a grouped
     * row's first instance; NULL when none. By kernel, module lists the launching ops. */
    const char *module;
    const char *line;
    int64_t external_id; /* by instance */
    /* by instance, modelled: the external id of the op whose shapes gave the model: its own, or,
     * for the op holding a convolution's GPU time (cudnn_convolution), the convolution's */
    int64_t model_external_id;
    int32_t rank;        /* by instance: the rank of its trace */
    gp_ns ts;            /* by instance: start */
    uint64_t calls;      /* op instances (by kernel: GPU events) */
    gp_ns self_cpu;      /* summed self CPU time */
    gp_ns cpu;           /* summed inclusive CPU time (nested instances overlap: not a partition) */
    gp_ns self_gpu;      /* GPU time launched directly: a partition of all GPU work */
    gp_ns self_gpu_busy; /* per instance, the union of the GPU work it launched directly (its
                          * overlapping kernels count once: TraceLens's direct kernel time),
                          * summed over instances; <= self_gpu */
    gp_ns gpu;           /* GPU time of the instances' subtrees (summed) */
    gp_ns gpu_busy;      /* union of each instance's subtree GPU intervals, summed */
    uint64_t kernels;    /* GPU events launched directly */
    uint64_t kernels_subtree;
    uint64_t replayed; /* of `kernels`, those from a CUDA/HIP graph replay */
    bool unattributed; /* a row of GPU work without a launching op */
    /* unattributed rows of work launched outside every op: the runtime call that launched it
     * ("cudaLaunchKernel", "hipGraphLaunch"; TraceLens's row name); NULL otherwise */
    const char *launch_call;
    /* performance model (modeled == 0: none) */
    gp_op_category category; /* of the row's modeled instances (the first one's) */
    gp_op_dtype dtype;       /* GP_DT_UNKNOWN when the modeled instances differ */
    uint64_t modeled;        /* instances with FLOPs and bytes */
    /* of those, the instances inside which no modeled op ran (the leaves of the op tree that
     * have a model): the roofline plots rows with some, so a parent and the child doing its work
     * (aten::linear and aten::addmm, softmax and _softmax) are not one GPU time drawn twice */
    uint64_t leaves;
    double flops, bytes; /* summed over modeled instances */
    gp_ns model_time;    /* subtree GPU time of modeled instances */
    double tflops_per_s; /* flops / model_time, TFLOP/s; 0 when model_time is 0 */
    double tb_per_s;     /* bytes / model_time, TB/s */
    double intensity;    /* flops / bytes, FLOP/byte; 0 when bytes is 0 */
    double roof_pct;     /* 100 * roofline time / model_time; -1 when unknown (no peak) */
    gp_op_bound bound;   /* compute when the FLOP time of the roof exceeds its memory time */
} gp_ops_row;

typedef struct gp_ops {
    gp_ops_by by;
    gp_ops_sort sort; /* the order of rows: the options' sort, or, when no row has GPU work (a
                       * CPU-only trace), self_cpu in place of self_gpu and cpu in place of gpu */
    gp_ops_row *rows; /* every row, sorted; renderers cut to their top N */
    size_t n_rows;
    gp_ops_row total; /* sums of every row: self CPU and self GPU are partitions */
    size_t n_traces;
    gp_device_peak peak; /* of the first trace with GPU work (others: see note) */
    uint64_t instances;  /* op instances */
    uint64_t modeled;    /* instances with a perf model */
    uint64_t no_shapes;  /* instances of modeled operators without record_shapes args */
    uint64_t bad_shapes; /* ... whose shapes were malformed or unusable: no model */
    uint64_t gpu_events; /* kernel + memcpy + memset events */
    uint64_t no_launch;  /* of which: correlation names no launch call */
    uint64_t outside_op; /* of which: launched outside any op */
    uint64_t replayed;   /* of which: from graph replays */
    gp_ns gpu_time;      /* their summed duration */
    gp_error note;       /* GP_OK; what could not be attributed or modeled, and why */
    void *priv;          /* private: the texts of synthesized keys (modules, shape keys) */
} gp_ops;

typedef struct gp_ops_opts {
    gp_ops_by by;
    gp_ops_sort sort;
    bool no_merge;      /* by module: keep numbered instances ("Linear_3") apart */
    double peak_tflops; /* > 0: override every dtype's peak (TFLOP/s) */
    double peak_tbps;   /* > 0: override the bandwidth (TB/s) */
} gp_ops_opts;

GP_EXTERN void gp_ops_opts_init(gp_ops_opts *opts);

/* Attributes and groups the ops of n traces (rows merge across traces by key). opts may be NULL.
 * On success *out belongs to the caller (gp_ops_free). GP_ENOMEM, with err (may be NULL) saying
 * what failed. */
GP_EXTERN gp_status gp_ops_compute(const gp_trace *const *traces, size_t n, const gp_ops_opts *opts,
                                   gp_ops **out, gp_error *err) GP_WARN_UNUSED;
GP_EXTERN void gp_ops_free(gp_ops *ops);

/* Renderers. top_n rows (0 = all); text is a key_averages-style table with units in the headers
 * and a TOTAL row of the partitions. JSON and CSV carry every field (durations in ns). GP_EIO when
 * the stream fails. */
GP_EXTERN gp_status gp_ops_render_text(const gp_ops *ops, size_t top_n, FILE *fp) GP_WARN_UNUSED;
GP_EXTERN gp_status gp_ops_render_json(const gp_ops *ops, size_t top_n, FILE *fp) GP_WARN_UNUSED;
GP_EXTERN gp_status gp_ops_render_csv(const gp_ops *ops, size_t top_n, FILE *fp) GP_WARN_UNUSED;

#ifdef __cplusplus
}
#endif
#endif
