/* The idle time breakdown table of `gpuprof analyze` (per stream: host wait, kernel wait and other
 * idle time (HTA's get_idle_time_breakdown)): its text, JSON and CSV writers, declared by the
 * registry (analysis_tables.h). They format gp_analysis and compute nothing. */
#include "render/table_internal.h"

/* Text: always GP_OK. */
gp_status gp__table_text_idle(FILE *fp, const gp_analysis *a)
{
    char thr[32];
    snprintf(thr, sizeof(thr), "%.0f", (double)a->opts.kernel_wait_ns / 1000.0);
    fprintf(fp,
            "\nIDLE TIME BREAKDOWN (per stream; kernel_wait below %s us; ratio: of the stream's "
            "idle time)\n",
            thr);
    fprintf(fp, "%s\n",
            "======================================================================================"
            "======");
    fprintf(fp, "%5s %6s %8s %14s %8s %14s %8s %14s %8s\n", "rank", "device", "stream",
            "host_wait_ms", "ratio", "kernel_wait_ms", "ratio", "other_ms", "ratio");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        for (size_t k = 0; k < r->n_idle; k++) {
            const gp_idle_stream *s = &r->idle[k];
            fprintf(fp, "%5d %6d %8lld", r->rank, s->device, (long long)s->stream);
            for (int c = 0; c < GP_IDLE_COUNT; c++) {
                fprintf(fp, " %14.3f ", GP__TBL_MS(s->idle[c]));
                if (isnan(s->ratio[c]))
                    fprintf(fp, "%8s", "n/a");
                else
                    fprintf(fp, "%8.2f", s->ratio[c]);
            }
            fputc('\n', fp);
        }
    }
    return GP_OK;
}

/* JSON: the member "idle_time_breakdown" (its rows as docs/analyses.md lists them). */
void gp__table_json_idle(gp__jw *w, const gp_analysis *a)
{
    gp__jw_key(w, "idle_time_breakdown");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        for (size_t k = 0; k < r->n_idle; k++) {
            const gp_idle_stream *s = &r->idle[k];
            for (int c = 0; c < GP_IDLE_COUNT; c++) {
                if (!s->present[c])
                    continue;
                gp__jw_obj_begin(w);
                gp__jw_kv_int(w, "rank", r->rank);
                gp__jw_kv_int(w, "stream", s->stream);
                gp__jw_kv_str(w, "idle_category", gp_idle_category_name((gp_idle_category)c));
                gp__tbl_kv_us(w, "idle_time", s->idle[c]);
                gp__tbl_kv_num(w, "idle_time_ratio", s->ratio[c]);
                gp__jw_kv_int(w, "device", s->device);
                gp__tbl_kv_ns(w, "idle_time_ns", s->idle[c]);
                gp__jw_kv_int(w, "gaps", (int64_t)s->gaps[c]);
                gp__jw_obj_end(w);
            }
        }
    }
    gp__jw_arr_end(w);
}

/* CSV: idle_time_breakdown.csv, header row first (the JSON fields as columns). */
void gp__table_csv_idle(const gp_analysis *a, FILE *fp)
{
    fprintf(fp, "rank,stream,idle_category,idle_time,idle_time_ratio,device,gaps\n");
    for (size_t i = 0; i < a->n_ranks; i++)
        for (size_t k = 0; k < a->ranks[i].n_idle; k++) {
            const gp_idle_stream *s = &a->ranks[i].idle[k];
            for (int c = 0; c < GP_IDLE_COUNT; c++) {
                if (!s->present[c])
                    continue;
                fprintf(fp, "%d,%lld,%s,%.3f,", a->ranks[i].rank, (long long)s->stream,
                        gp_idle_category_name((gp_idle_category)c), s->idle[c] / 1e3);
                gp__tbl_csv_num(fp, s->ratio[c], ',');
                fprintf(fp, "%d,%llu\n", s->device, (unsigned long long)s->gaps[c]);
            }
        }
}
