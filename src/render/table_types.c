/* The kernel type breakdown table of `gpuprof analyze` (the GPU busy time by kernel type and
 * overlap state, for the job and per rank): its text, JSON and CSV writers, declared by the
 * registry (analysis_tables.h). They format gp_analysis and compute nothing. */
#include "render/table_internal.h"

/* Text: always GP_OK. */
gp_status gp__table_text_types(FILE *fp, const gp_analysis *a)
{
    gp__tbl_heading(
        fp, "KERNEL TYPE BREAKDOWN (all ranks, with overlap states; % of their GPU busy time)");
    fprintf(fp, "%-48s %14s %8s\n", "kernel_type", "time_ms", "%");
    for (size_t i = 0; i < a->n_types; i++)
        fprintf(fp, "%-48s %14.3f %8.1f\n", a->types[i].label, GP__TBL_MS(a->types[i].time),
                a->types[i].pct);
    return GP_OK;
}

static void type_rows(gp__jw *w, const gp_type_state *ts, size_t n, int32_t rank)
{
    for (size_t i = 0; i < n; i++) {
        gp__jw_obj_begin(w);
        if (rank >= 0)
            gp__jw_kv_int(w, "rank", rank);
        gp__jw_kv_str(w, "kernel_type", ts[i].label);
        gp__tbl_kv_us(w, "sum", ts[i].time);
        gp__tbl_kv_num(w, "percentage", ts[i].pct);
        gp__tbl_kv_ns(w, "sum_ns", ts[i].time);
        gp__jw_obj_end(w);
    }
}

/* JSON: the member "kernel_type_breakdown" (its rows as docs/analyses.md lists them). */
void gp__table_json_types(gp__jw *w, const gp_analysis *a)
{
    gp__jw_key(w, "kernel_type_breakdown");
    gp__jw_arr_begin(w);
    type_rows(w, a->types, a->n_types, -1);
    gp__jw_arr_end(w);
    gp__jw_key(w, "kernel_type_breakdown_per_rank");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_ranks; i++)
        type_rows(w, a->ranks[i].types, a->ranks[i].n_types, a->ranks[i].rank);
    gp__jw_arr_end(w);
}

/* CSV: kernel_type_breakdown.csv, header row first (the JSON fields as columns). */
void gp__table_csv_types(const gp_analysis *a, FILE *fp)
{
    fprintf(fp, "kernel_type,sum,percentage\n");
    for (size_t i = 0; i < a->n_types; i++) {
        gp__tbl_csv_text(fp, a->types[i].label, ',');
        fprintf(fp, "%.3f,", a->types[i].time / 1e3);
        gp__tbl_csv_num(fp, a->types[i].pct, '\n');
    }
}
