/* The top kernels table of `gpuprof analyze` (per rank and kernel type, the rest folded into
 * "others"): its text, JSON and CSV writers, declared by the registry (analysis_tables.h). They
 * format gp_analysis and compute nothing. */
#include "render/table_internal.h"

enum { KNAME_CAP = 48 };

/* Text: GP_OK, or GP_ENOMEM. */
gp_status gp__table_text_kernels(FILE *fp, const gp_analysis *a)
{
    gp__tbl_heading(fp, "TOP KERNELS (per rank and type; the rest folded into \"others\")");
    fprintf(fp, "%5s %-13s %-44s %8s %12s %10s %10s %10s\n", "rank", "type", "name", "count",
            "sum_ms", "mean_us", "min_us", "max_us");
    /* one set of short names for the whole table: different kernels never look the same */
    size_t n = 0;
    for (size_t i = 0; i < a->n_ranks; i++)
        n += a->ranks[i].n_kernels;
    const char **names = malloc((n + 1) * sizeof *names);
    char *shortn = malloc((n + 1) * KNAME_CAP);
    gp_status st = names && shortn ? GP_OK : GP_ENOMEM;
    size_t j = 0;
    for (size_t i = 0; st == GP_OK && i < a->n_ranks; i++)
        for (size_t k = 0; k < a->ranks[i].n_kernels; k++)
            names[j++] = a->ranks[i].kernels[k].name;
    if (st == GP_OK)
        st = gp_shorten_names_unique(names, n, 44, shortn, KNAME_CAP);
    j = 0;
    for (size_t i = 0; st == GP_OK && i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        for (size_t k = 0; k < r->n_kernels; k++) {
            const gp_kernel_row *row = &r->kernels[k];
            fprintf(fp, "%5d %-13s %-44s %8llu %12.3f %10.1f %10.1f %10.1f\n", row->rank,
                    gp_kernel_type_name(row->type), shortn + KNAME_CAP * j++,
                    (unsigned long long)row->count, GP__TBL_MS(row->sum), row->mean / 1000.0,
                    (double)row->min / 1000.0, (double)row->max / 1000.0);
        }
    }
    free(names);
    free(shortn);
    return st;
}

/* JSON: the member "top_kernels" (its rows as docs/analyses.md lists them). */
void gp__table_json_kernels(gp__jw *w, const gp_analysis *a)
{
    gp__jw_key(w, "top_kernels");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        for (size_t k = 0; k < r->n_kernels; k++) {
            const gp_kernel_row *row = &r->kernels[k];
            gp__jw_obj_begin(w);
            gp__jw_kv_str(w, "name", row->name);
            gp__tbl_kv_us(w, "sum (us)", row->sum);
            gp__tbl_kv_us(w, "max (us)", row->max);
            gp__tbl_kv_us(w, "min (us)", row->min);
            gp__tbl_kv_num(w, "stddev", row->stddev / 1000.0);
            gp__tbl_kv_num(w, "mean (us)", row->mean / 1000.0);
            gp__jw_kv_str(w, "kernel_type", gp_kernel_type_name(row->type));
            gp__jw_kv_int(w, "rank", row->rank);
            gp__jw_kv_bool(w, "others", row->others);
            gp__jw_kv_int(w, "count", (int64_t)row->count);
            gp__tbl_kv_ns(w, "sum_ns", row->sum);
            gp__jw_obj_end(w);
        }
    }
    gp__jw_arr_end(w);
}

/* CSV: top_kernels.csv, header row first (the JSON fields as columns). */
void gp__table_csv_kernels(const gp_analysis *a, FILE *fp)
{
    fprintf(fp, "name,sum (us),max (us),min (us),stddev,mean (us),kernel_type,rank,count\n");
    for (size_t i = 0; i < a->n_ranks; i++)
        for (size_t k = 0; k < a->ranks[i].n_kernels; k++) {
            const gp_kernel_row *r = &a->ranks[i].kernels[k];
            gp__tbl_csv_text(fp, r->name, ',');
            fprintf(fp, "%.3f,%.3f,%.3f,%.6g,%.6g,%s,%d,%llu\n", r->sum / 1e3, r->max / 1e3,
                    r->min / 1e3, r->stddev / 1e3, r->mean / 1e3, gp_kernel_type_name(r->type),
                    r->rank, (unsigned long long)r->count);
        }
}
