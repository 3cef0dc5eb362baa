/* The temporal breakdown table of `gpuprof analyze` (per rank: idle, compute and non-compute time
 * of the GPU span (HTA's get_temporal_breakdown)): its text, JSON and CSV writers, declared by the
 * registry (analysis_tables.h). They format gp_analysis and compute nothing. */
#include "render/table_internal.h"

/* Text: always GP_OK. */
gp_status gp__table_text_temporal(FILE *fp, const gp_analysis *a)
{
    gp__tbl_heading(
        fp, "TEMPORAL BREAKDOWN (per rank, % of the GPU span: first to last GPU work, HTA's "
            "kernel_time)");
    fprintf(fp, "%5s %14s %14s %14s %14s %8s %8s %8s\n", "rank", "gpu_span_ms", "idle_ms",
            "compute_ms", "non_comp_ms", "idle%", "comp%", "noncomp%");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        const gp_temporal *t = &r->temporal;
        fprintf(fp, "%5d %14.3f %14.3f %14.3f %14.3f ", r->rank, GP__TBL_MS(t->kernel_time),
                GP__TBL_MS(t->idle), GP__TBL_MS(t->compute), GP__TBL_MS(t->non_compute));
        gp__tbl_pct(fp, t->idle_pct, 8);
        fputc(' ', fp);
        gp__tbl_pct(fp, t->compute_pct, 8);
        fputc(' ', fp);
        gp__tbl_pct(fp, t->non_compute_pct, 8);
        fputc('\n', fp);
    }
    return GP_OK;
}

/* JSON: the member "temporal_breakdown" (its rows as docs/analyses.md lists them). */
void gp__table_json_temporal(gp__jw *w, const gp_analysis *a)
{
    gp__jw_key(w, "temporal_breakdown");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        const gp_temporal *t = &r->temporal;
        gp__jw_obj_begin(w);
        gp__jw_kv_int(w, "rank", r->rank);
        gp__tbl_kv_us(w, "idle_time(us)", t->idle);
        gp__tbl_kv_us(w, "compute_time(us)", t->compute);
        gp__tbl_kv_us(w, "non_compute_time(us)", t->non_compute);
        gp__tbl_kv_us(w, "kernel_time(us)", t->kernel_time);
        gp__tbl_kv_num(w, "idle_time_pctg", t->idle_pct);
        gp__tbl_kv_num(w, "compute_time_pctg", t->compute_pct);
        gp__tbl_kv_num(w, "non_compute_time_pctg", t->non_compute_pct);
        gp__jw_kv_bool(w, "valid", t->valid);
        gp__tbl_kv_ns(w, "idle_time_ns", t->idle);
        gp__tbl_kv_ns(w, "compute_time_ns", t->compute);
        gp__tbl_kv_ns(w, "non_compute_time_ns", t->non_compute);
        gp__tbl_kv_ns(w, "kernel_time_ns", t->kernel_time);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
}

/* CSV: temporal_breakdown.csv, header row first (the JSON fields as columns). */
void gp__table_csv_temporal(const gp_analysis *a, FILE *fp)
{
    fprintf(fp, "rank,idle_time(us),compute_time(us),non_compute_time(us),kernel_time(us),"
                "idle_time_pctg,compute_time_pctg,non_compute_time_pctg\n");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_temporal *t = &a->ranks[i].temporal;
        fprintf(fp, "%d,%.3f,%.3f,%.3f,%.3f,", a->ranks[i].rank, t->idle / 1e3, t->compute / 1e3,
                t->non_compute / 1e3, t->kernel_time / 1e3);
        gp__tbl_csv_num(fp, t->idle_pct, ',');
        gp__tbl_csv_num(fp, t->compute_pct, ',');
        gp__tbl_csv_num(fp, t->non_compute_pct, '\n');
    }
}
