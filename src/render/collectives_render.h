/* The collectives table of `gpuprof analyze` (gpuprof/collectives.h) as text, JSON and CSV: the
 * analysis renderers call these for the GP_AT_COLLECTIVES table (docs/analyses.md, "Collectives").
 */
#ifndef GP_RENDER_COLLECTIVES_RENDER_H
#define GP_RENDER_COLLECTIVES_RENDER_H

#include <stdio.h>

#include "gpuprof/collectives.h"
#include "core/json_writer.h"

/* The text section: notes, the summary, the straggler table, then every collective (at most
 * `limit` rows; 0 = all). Nothing when c is NULL. */
void gp__coll_render_text(FILE *fp, const gp_collectives *c, size_t limit);
/* The member "collectives" of the analyze document; nothing when c is NULL (a job of one rank). */
void gp__coll_render_json(gp__jw *w, const gp_collectives *c);
/* CSV: one row per matched collective, header first (only the header when c is NULL). */
void gp__coll_render_csv(FILE *fp, const gp_collectives *c);

#endif
