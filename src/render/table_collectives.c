/* The collectives table of `gpuprof analyze` (the matched collectives of a job
 * (collectives_render.c)): its text, JSON and CSV writers, declared by the registry
 * (analysis_tables.h). They format gp_analysis and compute nothing. */
#include "render/table_internal.h"
#include "render/collectives_render.h"

/* COLLECTIVES ACROSS RANKS (nothing for a single trace), the 20 slowest listed. Always GP_OK. */
gp_status gp__table_text_collectives(FILE *fp, const gp_analysis *a)
{
    gp__coll_render_text(fp, a->collectives, 20);
    return GP_OK;
}

/* The "collectives" member (absent for a single trace). */
void gp__table_json_collectives(gp__jw *w, const gp_analysis *a)
{
    gp__coll_render_json(w, a->collectives);
}

/* collectives.csv: one row per matched collective (nothing for a single trace). */
void gp__table_csv_collectives(const gp_analysis *a, FILE *fp)
{
    gp__coll_render_csv(fp, a->collectives);
}
