/* The launch statistics table of `gpuprof analyze` (per rank and launch API: CPU duration and
 * launch delay, outliers): its text, JSON and CSV writers, declared by the registry
 * (analysis_tables.h). They format gp_analysis and compute nothing. */
#include "render/table_internal.h"

/* Text: always GP_OK. */
gp_status gp__table_text_launch(FILE *fp, const gp_analysis *a)
{
    gp__tbl_heading(fp,
                    "LAUNCH STATISTICS (CPU duration of the call; delay = GPU start - call end)");
    fprintf(fp, "%5s %-26s %9s %9s %10s %10s %10s %10s %10s %8s %8s\n", "rank", "api", "calls",
            "matched", "cpu_p50us", "cpu_p95us", "cpu_maxus", "dly_p50us", "dly_p95us", "cpu_out",
            "dly_out");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        const gp_launch_stats *ls = &r->launch;
        for (size_t k = 0; k < ls->n_apis; k++) {
            const gp_launch_api *p = &ls->apis[k];
            fprintf(fp, "%5d %-26.26s %9llu %9llu %10.1f %10.1f %10.1f %10.1f %10.1f %8llu %8llu\n",
                    r->rank, p->name, (unsigned long long)p->calls, (unsigned long long)p->matched,
                    p->cpu_p50 / 1000.0, p->cpu_p95 / 1000.0, p->cpu_max / 1000.0,
                    p->delay_p50 / 1000.0, p->delay_p95 / 1000.0,
                    (unsigned long long)p->cpu_outliers, (unsigned long long)p->delay_outliers);
        }
        fprintf(fp,
                "%5d graph launches: %llu, kernels in graphs: %llu, GPU events without a "
                "launch: %llu\n",
                r->rank, (unsigned long long)ls->graph_launches,
                (unsigned long long)ls->graph_kernels, (unsigned long long)ls->gpu_unmatched);
        for (size_t k = 0; k < ls->n_outliers; k++) {
            const gp_launch_outlier *o = &ls->outliers[k];
            char name[48];
            gp_shorten_name(o->kernel, 40, name, sizeof(name));
            fprintf(fp, "      outlier (%s): %s cpu %.1f us, delay %.1f us -> %s\n",
                    o->by_delay ? "delay" : "cpu", o->api, o->cpu_dur / 1000.0, o->delay / 1000.0,
                    name[0] ? name : "(no GPU work)");
        }
    }
    return GP_OK;
}

/* JSON: the member "launch_stats" (its rows as docs/analyses.md lists them). */
void gp__table_json_launch(gp__jw *w, const gp_analysis *a)
{
    gp__jw_key(w, "launch_stats");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        const gp_launch_stats *ls = &r->launch;
        gp__jw_obj_begin(w);
        gp__jw_kv_int(w, "rank", r->rank);
        gp__jw_kv_int(w, "launches", (int64_t)ls->launches);
        gp__jw_kv_int(w, "matched", (int64_t)ls->matched);
        gp__jw_kv_int(w, "gpu_unmatched", (int64_t)ls->gpu_unmatched);
        gp__jw_kv_int(w, "graph_launches", (int64_t)ls->graph_launches);
        gp__jw_kv_int(w, "graph_kernels", (int64_t)ls->graph_kernels);
        gp__jw_key(w, "apis");
        gp__jw_arr_begin(w);
        for (size_t k = 0; k < ls->n_apis; k++) {
            const gp_launch_api *p = &ls->apis[k];
            gp__jw_obj_begin(w);
            gp__jw_kv_str(w, "name", p->name);
            gp__jw_kv_str(w, "category", p->driver ? "cuda_driver" : "cuda_runtime");
            gp__jw_kv_int(w, "calls", (int64_t)p->calls);
            gp__jw_kv_int(w, "matched", (int64_t)p->matched);
            gp__tbl_kv_ns(w, "cpu_total_ns", p->cpu_total);
            gp__tbl_kv_num(w, "cpu_mean_ns", p->cpu_mean);
            gp__tbl_kv_ns(w, "cpu_p50_ns", p->cpu_p50);
            gp__tbl_kv_ns(w, "cpu_p95_ns", p->cpu_p95);
            gp__tbl_kv_ns(w, "cpu_max_ns", p->cpu_max);
            gp__tbl_kv_num(w, "delay_mean_ns", p->matched ? p->delay_mean : NAN);
            gp__tbl_kv_ns(w, "delay_p50_ns", p->delay_p50);
            gp__tbl_kv_ns(w, "delay_p95_ns", p->delay_p95);
            gp__tbl_kv_ns(w, "delay_min_ns", p->delay_min);
            gp__tbl_kv_ns(w, "delay_max_ns", p->delay_max);
            gp__jw_kv_int(w, "cpu_outliers", (int64_t)p->cpu_outliers);
            gp__jw_kv_int(w, "delay_outliers", (int64_t)p->delay_outliers);
            gp__jw_kv_int(w, "negative_delay", (int64_t)p->negative_delay);
            gp__jw_obj_end(w);
        }
        gp__jw_arr_end(w);
        gp__jw_key(w, "outliers");
        gp__jw_arr_begin(w);
        for (size_t k = 0; k < ls->n_outliers; k++) {
            const gp_launch_outlier *o = &ls->outliers[k];
            gp__jw_obj_begin(w);
            gp__jw_kv_str(w, "api", o->api);
            gp__jw_kv_str(w, "kernel", o->kernel);
            gp__tbl_kv_ns(w, "ts_ns", o->ts);
            gp__tbl_kv_ns(w, "cpu_dur_ns", o->cpu_dur);
            gp__tbl_kv_ns(w, "delay_ns", o->delay);
            gp__jw_kv_str(w, "reason", o->by_delay ? "delay" : "cpu_duration");
            gp__jw_obj_end(w);
        }
        gp__jw_arr_end(w);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
}

/* CSV: launch_stats.csv, header row first (the JSON fields as columns). */
void gp__table_csv_launch(const gp_analysis *a, FILE *fp)
{
    fprintf(fp, "rank,name,calls,matched,cpu_mean_ns,cpu_p50_ns,cpu_p95_ns,cpu_max_ns,"
                "delay_mean_ns,delay_p50_ns,delay_p95_ns,delay_max_ns,cpu_outliers,"
                "delay_outliers,negative_delay\n");
    for (size_t i = 0; i < a->n_ranks; i++)
        for (size_t k = 0; k < a->ranks[i].launch.n_apis; k++) {
            const gp_launch_api *p = &a->ranks[i].launch.apis[k];
            fprintf(fp, "%d,", a->ranks[i].rank);
            gp__tbl_csv_text(fp, p->name, ',');
            fprintf(fp, "%llu,%llu,%.1f,%lld,%lld,%lld,%.1f,%lld,%lld,%lld,%llu,%llu,%llu\n",
                    (unsigned long long)p->calls, (unsigned long long)p->matched, p->cpu_mean,
                    (long long)p->cpu_p50, (long long)p->cpu_p95, (long long)p->cpu_max,
                    p->delay_mean, (long long)p->delay_p50, (long long)p->delay_p95,
                    (long long)p->delay_max, (unsigned long long)p->cpu_outliers,
                    (unsigned long long)p->delay_outliers, (unsigned long long)p->negative_delay);
        }
}
