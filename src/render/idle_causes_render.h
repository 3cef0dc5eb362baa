/* The renderers of the idle causes and the step breakdown (idle_causes_render.c), called by
 * analysis_text.c, analysis_json.c and analysis_csv.c. They format gp_analysis and compute
 * nothing; stdio errors are left on the stream for the caller's ferror(). */
#ifndef GP_RENDER_IDLE_CAUSES_RENDER_H
#define GP_RENDER_IDLE_CAUSES_RENDER_H

#include <stdio.h>

#include "gpuprof/analyze.h"
#include "core/json_writer.h"

/* Text tables: "IDLE CAUSES" (one line per device and stream, the share of each cause, the
 * largest cause's top frame/op/call) and "STEP BREAKDOWN" (ms per part, the step's critical path
 * length beside it, "-" without one). */
void gp__text_idle_causes(FILE *fp, const gp_analysis *a);
void gp__text_step_parts(FILE *fp, const gp_analysis *a);
/* The "idle_causes" and "step_breakdown" members of the analyze document (docs/analyses.md). */
void gp__json_idle_causes(gp__jw *w, const gp_analysis *a);
void gp__json_step_parts(gp__jw *w, const gp_analysis *a);
/* idle_causes.csv (one row per row and cause) and step_breakdown.csv (one row per step). */
void gp__csv_idle_causes(const gp_analysis *a, FILE *fp);
void gp__csv_step_parts(const gp_analysis *a, FILE *fp);

#endif
