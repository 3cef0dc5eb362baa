/* The across ranks (stragglers) table of `gpuprof analyze` (per rank, with the stragglers): its
 * text, JSON and CSV writers, declared by the registry (analysis_tables.h). They format gp_analysis
 * and compute nothing. */
#include "render/table_internal.h"

/* Text: always GP_OK. */
gp_status gp__table_text_ranks(FILE *fp, const gp_analysis *a)
{
    if (a->n_ranks < 2)
        return GP_OK;
    gp__tbl_heading(fp, "ACROSS RANKS (idle% and comp% of each rank's GPU span, overlap% of its "
                        "communication)");
    fprintf(fp, "%5s %12s %8s %8s %10s %10s %12s\n", "rank", "gpu_span_ms", "idle%", "comp%",
            "overlap%", "launches", "straggler");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        const char *why = "";
        for (size_t k = 0; k < a->n_stragglers; k++)
            if (a->stragglers[k].rank == r->rank)
                why = a->stragglers[k].metric;
        fprintf(fp, "%5d %12.3f ", r->rank, GP__TBL_MS(r->temporal.kernel_time));
        gp__tbl_pct(fp, r->temporal.idle_pct, 8);
        fputc(' ', fp);
        gp__tbl_pct(fp, r->temporal.compute_pct, 8);
        fputc(' ', fp);
        gp__tbl_pct(fp, r->overlap.pct, 10);
        fprintf(fp, " %10llu %12s\n", (unsigned long long)r->launch.launches, why);
    }
    return GP_OK;
}

/* JSON: the member "stragglers" (its rows as docs/analyses.md lists them). */
void gp__table_json_ranks(gp__jw *w, const gp_analysis *a)
{
    gp__jw_key(w, "stragglers");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_stragglers; i++) {
        const gp_straggler *s = &a->stragglers[i];
        gp__jw_obj_begin(w);
        gp__jw_kv_int(w, "rank", s->rank);
        gp__jw_kv_str(w, "metric", s->metric);
        gp__tbl_kv_num(w, "value", s->value);
        gp__tbl_kv_num(w, "median", s->median);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
}

/* CSV: stragglers.csv, header row first (the JSON fields as columns). */
void gp__table_csv_ranks(const gp_analysis *a, FILE *fp)
{
    fprintf(fp, "rank,metric,value,median\n");
    for (size_t i = 0; i < a->n_stragglers; i++)
        fprintf(fp, "%d,%s,%.6g,%.6g\n", a->stragglers[i].rank, a->stragglers[i].metric,
                a->stragglers[i].value, a->stragglers[i].median);
}
