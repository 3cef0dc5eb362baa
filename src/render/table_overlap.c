/* The communication / computation overlap table of `gpuprof analyze` (per rank): its text, JSON and
 * CSV writers, declared by the registry (analysis_tables.h). They format gp_analysis and compute
 * nothing. */
#include "render/table_internal.h"

/* Text: always GP_OK. */
gp_status gp__table_text_overlap(FILE *fp, const gp_analysis *a)
{
    gp__tbl_heading(fp, "COMMUNICATION / COMPUTATION OVERLAP (overlap% of the communication time)");
    fprintf(fp, "%5s %14s %14s %14s %10s\n", "rank", "comm_ms", "comp_ms", "overlap_ms",
            "overlap%");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_overlap *o = &a->ranks[i].overlap;
        fprintf(fp, "%5d %14.3f %14.3f %14.3f ", a->ranks[i].rank, GP__TBL_MS(o->comm),
                GP__TBL_MS(o->comp), GP__TBL_MS(o->overlap));
        gp__tbl_pct(fp, o->pct, 10);
        fputc('\n', fp);
    }
    return GP_OK;
}

/* JSON: the member "comm_comp_overlap" (its rows as docs/analyses.md lists them). */
void gp__table_json_overlap(gp__jw *w, const gp_analysis *a)
{
    gp__jw_key(w, "comm_comp_overlap");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_overlap *o = &a->ranks[i].overlap;
        gp__jw_obj_begin(w);
        gp__jw_kv_int(w, "rank", a->ranks[i].rank);
        gp__tbl_kv_num(w, "comp_comm_overlap_pctg", o->pct);
        gp__tbl_kv_ns(w, "communication_time_ns", o->comm);
        gp__tbl_kv_ns(w, "computation_time_ns", o->comp);
        gp__tbl_kv_ns(w, "overlap_time_ns", o->overlap);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
}

/* CSV: comm_comp_overlap.csv, header row first (the JSON fields as columns). */
void gp__table_csv_overlap(const gp_analysis *a, FILE *fp)
{
    fprintf(fp, "rank,comp_comm_overlap_pctg,communication_time_ns,computation_time_ns,"
                "overlap_time_ns\n");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_overlap *o = &a->ranks[i].overlap;
        fprintf(fp, "%d,", a->ranks[i].rank);
        gp__tbl_csv_num(fp, o->pct, ',');
        fprintf(fp, "%lld,%lld,%lld\n", (long long)o->comm, (long long)o->comp,
                (long long)o->overlap);
    }
}
