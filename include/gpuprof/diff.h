/* gpuprof diff: compare a base and a current set of runs (profiles or traces) per operation /
 * kernel name and overall, with verdicts that respect noise.
 *
 * Each side is one or more runs (one gp_trace each). Events are grouped by (kind, name); names
 * found on one side only are then matched by their normalised form (template arguments and
 * trailing instance numbers, gp_diff_normalize_name) unless opts.exact, so a kernel whose template
 * arguments changed is one row showing both names. Every row gets per-side statistics (calls and
 * total per run, mean / p50 / p95 per call, peak memory where present) and three signals:
 *   - the verdict (type) on the total time per run (calls x time per call), what costs the user
 *     time: with enough runs on both sides to reach alpha (4 vs 4 at 0.05) a two-sided
 *     Mann-Whitney U test of the per-run totals, p-values adjusted over all tested names (Holm by
 *     default), and the practical threshold on the ratio of median totals; below that sample size
 *     the threshold alone decides and the verdict is untested (test.method NONE);
 *   - the call-count change (calls per run), with its direction;
 *   - the per-call shift: a Mann-Whitney U test of the per-call durations (all runs pooled),
 *     adjusted as its own family, with its direction (slower / faster / same / untested).
 * Bootstrap confidence intervals (seeded, deterministic) of the ratios of medians are computed
 * only where both samples hold at least GP_DIFF_MIN_CI_N values; below that they are NaN.
 *
 * A gp_diff owns its memory (names are copied); it does not keep pointers into the traces.
 * Thread-safety: gp_diff_compute touches only its arguments; results are read-only. */
#ifndef GPUPROF_DIFF_H
#define GPUPROF_DIFF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gpuprof/analyze.h"
#include "gpuprof/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gp_diff_type {
    GP_DIFF_NO_CHANGE = 0,
    GP_DIFF_IMPROVEMENT,
    GP_DIFF_REGRESSION,
    GP_DIFF_NEW,     /* present only in the current runs */
    GP_DIFF_REMOVED, /* present only in the base runs */
    GP_DIFF_TYPE_COUNT
} gp_diff_type;

/* "IMPROVEMENT", "REGRESSION", "NO_CHANGE", "NEW", "REMOVED". Never NULL. */
GP_EXTERN const char *gp_diff_type_name(gp_diff_type type);

typedef enum gp_diff_correction {
    GP_DIFF_HOLM = 0, /* Holm step-down: controls the family-wise error rate */
    GP_DIFF_BH,       /* Benjamini-Hochberg step-up: controls the false discovery rate */
    GP_DIFF_NONE      /* no adjustment */
} gp_diff_correction;

/* Name normalisation flags (gp_diff_opts.normalize). */
enum {
    GP_DIFF_NORM_TEMPLATES = 1u << 0, /* "f<float, 4>(int)" -> "f<...>(int)" */
    GP_DIFF_NORM_NUMBERS = 1u << 1,   /* a trailing digit run after '_' or '#' -> "N":
                                         "triton_poi_fused_add_0" -> "triton_poi_fused_add_N" */
    GP_DIFF_NORM_ARGS = 1u << 2,      /* a trailing argument list "(float*, int)" -> "(...)" */
};

typedef struct gp_diff_opts {
    double threshold; /* practical threshold as a fraction (default 0.05 = 5 %) */
    double alpha;     /* significance level (default 0.05); the CI is at 1 - alpha */
    gp_diff_correction correction;
    uint32_t normalize; /* GP_DIFF_NORM_*: names merged by this form before anything else */
    uint32_t kinds;     /* mask of (1u << gp_event_kind); 0 = the default set (see docs) */
    uint64_t seed;      /* bootstrap seed (default 1) */
    uint32_t bootstrap; /* bootstrap resamples (default 2000; 0 = no CI) */
    bool analyze; /* run gpuprof analyze on both sides for the kernel-type / temporal breakdown
                     deltas and the changes in findings (default true; needs GPU work) */
    bool exact;   /* no matching of one-sided names by normalised form (default false) */
    /* Count only tested, significant regressions as failing (n_failing_regressions); by default
     * untested threshold regressions (too few runs to test) fail too. */
    bool require_significance;
} gp_diff_opts;

/* Bootstrap CIs need at least this many values on each side (a percentile interval of a median
 * from fewer is too coarse to mean anything). */
#define GP_DIFF_MIN_CI_N 10

/* Fills opts with the defaults above. */
GP_EXTERN void gp_diff_opts_init(gp_diff_opts *opts);

/* Writes the normalised form of name (flags GP_DIFF_NORM_*) into out (cap bytes, always
 * NUL-terminated; truncated if needed). One-sided names are matched by their form with all three
 * flags. */
GP_EXTERN void gp_diff_normalize_name(const char *name, uint32_t flags, char *out, size_t cap);

typedef enum gp_diff_method {
    GP_DIFF_TEST_NONE = 0, /* not tested (too few samples, or NEW / REMOVED) */
    GP_DIFF_TEST_CALLS,    /* per-call durations, one run on a side */
    GP_DIFF_TEST_RUNS      /* per-run values, several runs on both sides */
} gp_diff_method;

/* "none", "per-call", "per-run". */
GP_EXTERN const char *gp_diff_method_name(gp_diff_method m);

/* The statistical comparison behind one signal. method NONE: untested (the sizes cannot reach
 * alpha, or NEW / REMOVED); ratio is still the ratio of medians when both sides have values. */
typedef struct gp_diff_test {
    gp_diff_method method;
    uint64_t n_base, n_cur; /* samples on each side */
    bool exact;             /* exact U distribution (else normal approximation) */
    double u;               /* U statistic of the current sample (n_base*n_cur/2 = no shift) */
    double p_value;         /* two-sided, unadjusted; NaN when not tested */
    double p_adjusted;      /* after the multiple-comparison correction; NaN when not tested */
    double ratio;        /* median(current) / median(base); +inf when only the base median is 0; NaN
                            when both are 0 or a side is empty */
    double ci_lo, ci_hi; /* bootstrap (1-alpha) CI of the ratio; NaN when not computed (untested,
                            fewer than GP_DIFF_MIN_CI_N values on a side, or --bootstrap 0) */
    bool significant;    /* p_adjusted < alpha */
} gp_diff_test;

/* One side's statistics for a name. Per-run values are averages over the side's runs. */
typedef struct gp_diff_side {
    double calls;     /* calls per run */
    double total;     /* ns per run */
    double mean;      /* ns per call (all runs pooled) */
    double p50, p95;  /* ns per call */
    int64_t mem_peak; /* bytes (max "mem_peak_bytes" of the range args); -1 absent */
} gp_diff_side;

/* Direction of a signal. */
typedef enum gp_diff_dir {
    GP_DIFF_SAME = 0,    /* moved less than the threshold (or, tested, not significantly) */
    GP_DIFF_UP,          /* calls: more; per call: slower */
    GP_DIFF_DOWN,        /* calls: fewer; per call: faster */
    GP_DIFF_DIR_UNTESTED /* per call: too few calls to test */
} gp_diff_dir;

/* "same", "more" / "slower", "fewer" / "faster", "untested" (calls: for_calls true). */
GP_EXTERN const char *gp_diff_dir_name(gp_diff_dir d, bool for_calls);

typedef struct gp_diff_row {
    /* The current side's name (the base's for REMOVED), normalised with opts.normalize; for a row
     * matching several one-sided names per side, their normalised form. Owned by the gp_diff. */
    char *name;
    /* The base side's name when one base name was matched to a different current name by
     * normalised form (a renamed kernel), else NULL. Owned. */
    char *base_name;
    uint32_t n_base_names, n_cur_names; /* distinct names on each side (0 on an absent side) */
    gp_event_kind kind;
    gp_diff_side base, cur;
    double delta_ns;          /* cur.total - base.total (per run) */
    double delta_pct;         /* 100 * delta / base.total; NaN when base.total == 0 */
    gp_diff_type type;        /* the verdict on the total time per run */
    gp_diff_test test;        /* behind it: per-run totals (method RUNS), or NONE: untested */
    double calls_pct;         /* 100 * (cur.calls / base.calls - 1); NaN when base.calls == 0 */
    gp_diff_dir calls_dir;    /* UP / DOWN when calls_pct moved by at least the threshold */
    gp_diff_test per_call;    /* per-call durations of all runs pooled (method CALLS or NONE) */
    gp_diff_dir per_call_dir; /* UP (slower) / DOWN (faster): significant and past the
                                 threshold in the test's direction; SAME; or UNTESTED */
} gp_diff_row;

typedef enum gp_diff_metric_id {
    GP_DIFF_M_TOTAL = 0, /* wall span of the run: first event start to last event end */
    GP_DIFF_M_GPU,       /* summed kernel + memcpy + memset durations */
    GP_DIFF_M_IDLE,      /* per device: GPU span minus the union of GPU work, summed */
    GP_DIFF_M_PEAK_MEM,  /* bytes: max of allocator totals, memory counters, range peaks */
    GP_DIFF_METRIC_COUNT
} gp_diff_metric_id;

typedef struct gp_diff_metric {
    const char *name; /* "total_time", "gpu_work_sum", "idle_time", "peak_memory" (static) */
    const char *unit; /* "ns" or "bytes" (static) */
    bool present;     /* measured on both sides */
    double base, cur; /* median over the side's runs */
    double delta, delta_pct;
    /* Type by the same rule as names: tested with enough runs on both sides, else (test.method
     * NONE) by the threshold alone, an untested verdict. */
    gp_diff_type type;
    gp_diff_test test;
} gp_diff_metric;

/* One line of a breakdown compared between the sides: a temporal component ("idle", "compute",
 * "non_compute") or a kernel-type overlap state ("COMPUTATION overlapping COMMUNICATION"). Times
 * are per run (averaged over the side's runs); shares are of the side's total for the table. */
typedef struct gp_diff_share {
    char label[96];
    double base_ns, cur_ns;
    double base_pct, cur_pct; /* 0..100; the change is reported in percentage points */
} gp_diff_share;

typedef enum gp_diff_finding_change {
    GP_DIFF_FINDING_NEW = 0,  /* the rule fires on the current runs only */
    GP_DIFF_FINDING_RESOLVED, /* the rule fired on the base runs only */
    GP_DIFF_FINDING_PERSISTS  /* both */
} gp_diff_finding_change;

/* "NEW", "RESOLVED", "PERSISTS". */
GP_EXTERN const char *gp_diff_finding_change_name(gp_diff_finding_change c);

/* An analyze finding (bottleneck rule) compared between the sides, by rule id. */
typedef struct gp_diff_finding {
    char rule[48]; /* analyze's stable rule id ("launch_bound", ...) */
    /* the current side's finding (the base side's for RESOLVED), ranks cleared: render composes
     * its title and suggestion */
    gp_finding finding;
    gp_diff_finding_change change;
    double base_gain_ns, cur_gain_ns; /* estimated recoverable time per run, 0 when absent */
} gp_diff_finding;

/* torch.compile: which sides ran compiled code ("Torch-Compiled Region" ops). */
typedef enum gp_diff_compile_mode {
    GP_DIFF_COMPILE_NONE = 0,   /* neither side has compiled regions */
    GP_DIFF_COMPILE_BASE_EAGER, /* base eager, current compiled */
    GP_DIFF_COMPILE_CUR_EAGER,  /* base compiled, current eager */
    GP_DIFF_COMPILE_BOTH        /* both compiled: regions paired by compile id */
} gp_diff_compile_mode;

/* "none", "eager_to_compiled", "compiled_to_eager", "compiled_both". */
GP_EXTERN const char *gp_diff_compile_mode_name(gp_diff_compile_mode m);

/* A compiled region and what it replaces on the other side (docs/diff.md, "torch.compile"). Index
 * 0 is the base side, 1 the current side; all figures per run (averaged over the side's runs). On
 * the compiled side(s): the region's calls, its GPU work (what its launches ran) and CPU time. On
 * an eager side: the eager ops paired with the region by name (ops it calls itself, such as
 * aten::mm, and the aten ops Inductor names in its fused kernels, triton_poi_fused_add_relu_1 ->
 * aten::add, aten::relu), each op's time split between the regions naming it by how many of
 * their kernels name it: their calls, the GPU work they launched, their CPU time. */
typedef struct gp_diff_region {
    char name[48]; /* compile id "0/0" */
    double calls[2];
    double gpu[2], cpu[2]; /* ns per run */
    char ops[256];         /* eager side: the paired ops, most GPU time first ("" none) */
    double gpu_speedup;    /* gpu[0] / gpu[1] (> 1: current faster); NaN when either is 0 */
    double cpu_speedup;    /* cpu[0] / cpu[1] */
} gp_diff_region;

typedef struct gp_diff_compile {
    gp_diff_compile_mode mode;
    gp_diff_region *regions; /* by the compiled side's GPU time (current's when both), desc */
    size_t n_regions;
    /* Per run, [side]: GPU work paired (regions, and the eager ops paired with them) and GPU
     * work outside: launched outside regions on a compiled side, by ops paired with no region on
     * an eager side. */
    double paired_gpu[2], other_gpu[2];
    double speedup; /* paired_gpu[0] / paired_gpu[1]; NaN when either is 0 */
} gp_diff_compile;

/* What one side ran on (docs/diff.md, "What each side ran on"): from its runs' deviceProperties,
 * distributedInfo and top-level metadata. Strings are copied (owned by the gp_diff). */
typedef struct gp_diff_side_info {
    char device[96];    /* the first run's first device name; "" unknown; "mixed" if runs differ */
    int32_t world_size; /* distributedInfo.world_size of the first run, -1 unknown */
    char ranks[64];     /* the runs' distributedInfo ranks ("0", "0-7", "0-3, 5"; "" none) */
    bool job;           /* the runs are distinct ranks of one job (world size > 1) */
    char cuda_runtime[24]; /* "cuda_runtime_version" (12040), "" absent */
    char cuda_driver[24];  /* "cuda_driver_version" */
    char pytorch[32];      /* "pytorch_version" / "torch_version" metadata, "" absent */
    char nccl[32];         /* distributedInfo.nccl_version */
} gp_diff_side_info;

typedef struct gp_diff {
    gp_diff_opts opts;
    /* [0] base, [1] current; context_note warns when they differ (device, world size, rank,
     * versions), when a side is the ranks of one job, or when few names are on both sides. */
    gp_diff_side_info side_info[2];
    gp_error context_note;
    size_t n_both_names; /* rows present on both sides (not NEW / REMOVED) */
    size_t n_base_runs, n_cur_runs;
    gp_diff_row *rows; /* sorted by delta_ns descending, then kind, then name */
    size_t n_rows;
    gp_diff_metric metrics[GP_DIFF_METRIC_COUNT];
    double speedup;           /* base total_time / current total_time; NaN when unknown */
    size_t n_tested;          /* rows in the multiple-comparison family of the verdicts */
    size_t runs_needed;       /* the smallest n for which n vs n runs can reach alpha (4 at 0.05) */
    size_t n_matched;         /* rows matched by normalised name (base_name set or several names) */
    size_t n_tested_per_call; /* rows in the family of the per-call tests */
    size_t n_by_type[GP_DIFF_TYPE_COUNT];
    size_t n_significant_regressions; /* rows + metrics: REGRESSION, tested and significant */
    size_t n_untested_regressions;    /* rows + metrics: REGRESSION by the threshold, untested */
    /* What `--fail-on-regression` fails on: significant + untested regressions, or only the
     * significant ones with opts.require_significance. */
    size_t n_failing_regressions;

    /* From gpuprof analyze, when opts.analyze and both sides have GPU work (else analyzed is
     * false and analyze_note says why). No statistical test: descriptive deltas. */
    bool analyzed;
    gp_error analyze_note;     /* status GP_OK; msg says why analyzed is false */
    gp_diff_share temporal[3]; /* idle, compute, non_compute: share of the GPU kernel time */
    gp_diff_share *types;      /* kernel-type overlap states, by current time descending */
    size_t n_types;
    gp_diff_finding *findings; /* NEW first, then RESOLVED, then PERSISTS; by gain within */
    size_t n_findings;

    /* torch.compile regions paired across the sides (mode NONE: none); set by gp_diff_compute. */
    gp_diff_compile *compile;
} gp_diff;

/* Compares base[0..n_base) with cur[0..n_cur) (each trace one run; both counts >= 1). opts may be
 * NULL for defaults. On success *out is owned by the caller (gp_diff_free). Fails with GP_EINVAL
 * (no runs on a side, threshold/alpha out of range; err says which) or GP_ENOMEM. */
GP_EXTERN gp_status gp_diff_compute(const gp_trace *const *base, size_t n_base,
                                    const gp_trace *const *cur, size_t n_cur,
                                    const gp_diff_opts *opts, gp_diff **out,
                                    gp_error *err) GP_WARN_UNUSED;
GP_EXTERN void gp_diff_free(gp_diff *d);

/* ---- differential flame graph ------------------------------------------------------------- */

struct gp_flame_tree; /* gpuprof/report.h */

/* Builds the differential flame tree (gpuprof/report.h gp_flame_diff) of the current runs against
 * the base runs: current's shape, each frame annotated with the base weight of the same stack.
 * Weight: GPU time when both sides have GPU work, else CPU time of ranges; no per-thread frames
 * (thread ids differ between runs). On success *out is the caller's (gp_flame_tree_free).
 * GP_EEMPTY when a side has no weighted event, GP_EINVAL when the sides resolve to different
 * weights, GP_ENOMEM; err says which. */
GP_EXTERN gp_status gp_diff_flame(const gp_trace *const *base, size_t n_base,
                                  const gp_trace *const *cur, size_t n_cur,
                                  struct gp_flame_tree **out, gp_error *err) GP_WARN_UNUSED;

/* ---- renderers (format a gp_diff; compute nothing) ------------------------------------------ */

typedef struct gp_diff_render_opts {
    size_t top_n;           /* rows per text table (default 10; 0 = all) */
    int name_width;         /* text: width of the name column (default 48) */
    const char *base_label; /* e.g. the base path(s); NULL -> "base" */
    const char *cur_label;  /* NULL -> "current" */
    /* HTML only: a differential flame tree from gp_diff_flame to embed (NULL: none), or the
     * reason there is none (NULL: not requested). */
    const struct gp_flame_tree *flame;
    const char *flame_note;
    const char *nav_html; /* HTML: markup placed right after <body> (the server's bar of links,
                           * gp__serve_nav_html); NULL: none (default) */
} gp_diff_render_opts;

GP_EXTERN void gp_diff_render_opts_init(gp_diff_render_opts *o);

/* Fixed-width text: summary, top-N regressions, top-N improvements, NEW / REMOVED, notes. */
GP_EXTERN gp_status gp_diff_render_text(const gp_diff *d, const gp_diff_render_opts *o,
                                        FILE *fp) GP_WARN_UNUSED;
/* JSON with every field (schema "gpuprof.diff/2"). */
GP_EXTERN gp_status gp_diff_render_json(const gp_diff *d, const gp_diff_render_opts *o,
                                        FILE *fp) GP_WARN_UNUSED;
/* Self-contained HTML comparison page: summary and side-by-side bars per name. */
GP_EXTERN gp_status gp_diff_render_html(const gp_diff *d, const gp_diff_render_opts *o,
                                        FILE *fp) GP_WARN_UNUSED;
/* JUnit XML: one testcase per name present on both sides and per overall metric; each failing
 * regression (n_failing_regressions) is a failed case. */
GP_EXTERN gp_status gp_diff_render_junit(const gp_diff *d, const gp_diff_render_opts *o,
                                         FILE *fp) GP_WARN_UNUSED;

#ifdef __cplusplus
}
#endif
#endif
