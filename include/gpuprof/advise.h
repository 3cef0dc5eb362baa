/* gpuprof advise: optimisation suggestions for a profile or trace, with the rules of the
 * comparison-and-optimizer tool gpuprof replaces (routing, batching, caching, memory,
 * parallelization; algorithm when per-op rates exist) on top of gpuprof analyze's bottleneck
 * rules. Each suggestion is a gp_finding of gp_analysis (gpuprof/analyze.h) with its operation,
 * type, priority, expected improvement, implementation hint (suggestion), current and estimated
 * time and so its potential speedup. The profile rules look at the ranges of the in-process
 * profiler (what gp_profiler_export_json writes: "device", "gpu_ns", "bytes", "mem_delta_bytes"
 * in their args); every rule, threshold and estimate is listed in docs/advise.md.
 * gp_analyze_job runs them with opts.advise (NULL: the defaults below), so `analyze` and
 * `report` show the same findings. */
#ifndef GPUPROF_ADVISE_H
#define GPUPROF_ADVISE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gpuprof/analyze.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_advise_opts {
    double gpu_op_max_ms; /* routing: GPU ops averaging under this run better on the CPU (1) */
    double cpu_op_min_ms; /* routing: CPU ops averaging over this that move memory -> GPU (10) */
    uint32_t batch_min_calls; /* batching: this many back-to-back calls of one op (10) */
    uint32_t cache_min_calls; /* caching: this many calls ... (100) */
    double cache_max_ms;      /* ... averaging under this (1) */
    double memory_min_mb;     /* memory: ops that allocate or move more MB than this (100) */
    double util_max_pct;      /* parallelization: GPU busy under this share of the span (50) */
} gp_advise_opts;

/* Fills opts with the defaults above (the seed tool's values). */
GP_EXTERN void gp_advise_opts_init(gp_advise_opts *opts);

/* The rules gpuprof advise knows but could not evaluate on this input, and why ("algorithm"
 * needs per-op rates against the device roofline from `gpuprof ops`, which this build does not
 * have). *n set; the array is static. */
typedef struct gp_advise_skipped {
    const char *rule;
    const char *why;
} gp_advise_skipped;
GP_EXTERN const gp_advise_skipped *gp_advise_skipped_rules(size_t *n);

typedef struct gp_advise_render_opts {
    gp_priority min_priority; /* show findings of this priority or higher (GP_PRIO_LOW: all) */
    const char *source;       /* the input's name for the heading; NULL: none */
} gp_advise_render_opts;

/* Text: one numbered block per finding (type, priority, operation, title, current -> estimated
 * time and speedup, expected improvement, hint, evidence), then the skipped rules. GP_EIO. */
GP_EXTERN gp_status gp_advise_render_text(const gp_analysis *a, const gp_advise_render_opts *o,
                                          FILE *fp) GP_WARN_UNUSED;
/* JSON, schema "gpuprof.advise/1" (docs/advise.md). GP_EIO. */
GP_EXTERN gp_status gp_advise_render_json(const gp_analysis *a, const gp_advise_render_opts *o,
                                          FILE *fp) GP_WARN_UNUSED;

#ifdef __cplusplus
}
#endif
#endif
