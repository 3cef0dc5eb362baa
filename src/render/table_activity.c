/* The CPU / GPU activity table of `gpuprof analyze` (per rank): its text, JSON and CSV writers,
 * declared by the registry (analysis_tables.h). They format gp_analysis and compute nothing. */
#include "render/table_internal.h"

/* Text: always GP_OK. */
gp_status gp__table_text_activity(FILE *fp, const gp_analysis *a)
{
    gp__tbl_heading(fp, "CPU / GPU ACTIVITY");
    fprintf(fp, "%5s %12s %12s %12s %12s %12s %8s %10s\n", "rank", "span_ms", "cpu_ms",
            "gpu_busy_ms", "both_ms", "sync_ms", "syncs", "kernels");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        const gp_activity *x = &r->activity;
        fprintf(fp, "%5d %12.3f %12.3f %12.3f %12.3f %12.3f %8llu %10llu\n", r->rank,
                GP__TBL_MS(x->span), GP__TBL_MS(x->cpu_active), GP__TBL_MS(x->gpu_active),
                GP__TBL_MS(x->overlap), GP__TBL_MS(x->sync), (unsigned long long)x->syncs,
                (unsigned long long)r->kernels_total);
    }
    return GP_OK;
}

/* JSON: the member "activity" (its rows as docs/analyses.md lists them). */
void gp__table_json_activity(gp__jw *w, const gp_analysis *a)
{
    gp__jw_key(w, "activity");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        const gp_activity *x = &r->activity;
        gp__jw_obj_begin(w);
        gp__jw_kv_int(w, "rank", r->rank);
        gp__tbl_kv_ns(w, "span_ns", x->span);
        gp__tbl_kv_ns(w, "cpu_active_ns", x->cpu_active);
        gp__tbl_kv_ns(w, "gpu_active_ns", x->gpu_active);
        gp__tbl_kv_ns(w, "cpu_gpu_overlap_ns", x->overlap);
        gp__tbl_kv_ns(w, "sync_ns", x->sync);
        gp__jw_kv_int(w, "syncs", (int64_t)x->syncs);
        gp__jw_kv_int(w, "kernels", (int64_t)r->kernels_total);
        gp__jw_kv_int(w, "small_kernels", (int64_t)r->small_kernels);
        gp__tbl_kv_ns(w, "small_kernels_ns", r->small_kernels_time);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
}

/* CSV: activity.csv, header row first (the JSON fields as columns). */
void gp__table_csv_activity(const gp_analysis *a, FILE *fp)
{
    fprintf(fp, "rank,span_ns,cpu_active_ns,gpu_active_ns,cpu_gpu_overlap_ns,sync_ns,syncs\n");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_activity *x = &a->ranks[i].activity;
        fprintf(fp, "%d,%lld,%lld,%lld,%lld,%lld,%llu\n", a->ranks[i].rank, (long long)x->span,
                (long long)x->cpu_active, (long long)x->gpu_active, (long long)x->overlap,
                (long long)x->sync, (unsigned long long)x->syncs);
    }
}
