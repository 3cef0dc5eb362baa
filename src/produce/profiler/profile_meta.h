/* The "gpuprof_profile" metadata of the profiler's trace, in two steps, so that the app layer can
 * put the summary statistics (an analysis, which the profiler may not call) into the JSON profile:
 * gp__prof_build_trace, then gp_summary_compute over the trace (app), then
 * gp__prof_set_profile_meta with its rows. gp_profiler_to_trace is the two steps with no rows.
 * Internal: included by src/produce/profiler and src/app/profiler_output.c. */
#ifndef GP_PROFILER_PROFILE_META_H
#define GP_PROFILER_PROFILE_META_H

#include <stddef.h>

#include "gpuprof/profiler.h"
#include "gpuprof/summary.h"

/* What the metadata says about the profiler at the moment the trace was built. */
typedef struct gp__prof_snapshot {
    gp_profiler_stats stats; /* ranges: those in the trace */
    double sampling;
} gp__prof_snapshot;

/* gp_profiler_to_trace without the metadata (p may be NULL: the global profiler). Fills *snap. On
 * success *out is owned by the caller. GP_ENOMEM. */
gp_status gp__prof_build_trace(gp_profiler *p, gp__prof_snapshot *snap,
                               gp_trace **out) GP_WARN_UNUSED;

/* Sets t's "gpuprof_profile" metadata: the snapshot, the "summary" array from rows[0..n_rows)
 * (rows == NULL: no "summary" key), the CUDA timers and the memory tracker of p (not NULL).
 * GP_ENOMEM. */
gp_status gp__prof_set_profile_meta(gp_profiler *p, const gp__prof_snapshot *snap,
                                    const gp_name_stats *rows, size_t n_rows,
                                    gp_trace *t) GP_WARN_UNUSED;

#endif
