/* The queue length and memcpy bandwidth table of `gpuprof analyze` (per stream, then the copies of
 * each rank): its text, JSON and CSV writers, declared by the registry (analysis_tables.h). They
 * format gp_analysis and compute nothing. */
#include "render/table_internal.h"

/* Text: always GP_OK. */
gp_status gp__table_text_queue(FILE *fp, const gp_analysis *a)
{
    gp__tbl_heading(fp, "QUEUE LENGTH PER STREAM AND MEMCPY BANDWIDTH");
    fprintf(fp, "%5s %6s %8s %10s %10s %10s\n", "rank", "device", "stream", "launches", "max_len",
            "mean_len");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        for (size_t k = 0; k < r->n_queues; k++) {
            const gp_queue_stream *q = &r->queues[k];
            fprintf(fp, "%5d %6d %8lld %10llu %10lld %10.2f\n", r->rank, q->device,
                    (long long)q->stream, (unsigned long long)q->launches, (long long)q->max_len,
                    q->mean_len);
        }
    }
    fprintf(fp, "%5s %8s %9s %14s %12s %10s\n", "rank", "copies", "pageable", "bytes",
            "copy_sum_ms", "mean_GB/s");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_bandwidth *b = &a->ranks[i].bandwidth;
        fprintf(fp, "%5d %8llu %9llu %14lld %12.3f %10.2f\n", a->ranks[i].rank,
                (unsigned long long)b->copies, (unsigned long long)b->pageable, (long long)b->bytes,
                GP__TBL_MS(b->busy), b->mean_gbps);
    }
    return GP_OK;
}

/* JSON: the member "queue_length" (its rows as docs/analyses.md lists them). */
void gp__table_json_queue(gp__jw *w, const gp_analysis *a)
{
    gp__jw_key(w, "queue_length");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        for (size_t k = 0; k < r->n_queues; k++) {
            const gp_queue_stream *q = &r->queues[k];
            gp__jw_obj_begin(w);
            gp__jw_kv_int(w, "rank", r->rank);
            gp__jw_kv_int(w, "device", q->device);
            gp__jw_kv_int(w, "stream", q->stream);
            gp__jw_kv_int(w, "launches", (int64_t)q->launches);
            gp__jw_kv_int(w, "max_queue_length", q->max_len);
            gp__tbl_kv_num(w, "mean_queue_length", q->mean_len);
            gp__tbl_series(w, "series", q->series, q->n_series);
            gp__jw_obj_end(w);
        }
    }
    gp__jw_arr_end(w);
    gp__jw_key(w, "memcpy_bandwidth");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_bandwidth *b = &a->ranks[i].bandwidth;
        gp__jw_obj_begin(w);
        gp__jw_kv_int(w, "rank", a->ranks[i].rank);
        gp__jw_kv_int(w, "copies", (int64_t)b->copies);
        gp__jw_kv_int(w, "pageable_copies", (int64_t)b->pageable);
        gp__jw_kv_int(w, "bytes", b->bytes);
        gp__tbl_kv_ns(w, "busy_ns", b->busy);
        gp__tbl_kv_num(w, "mean_gbps", b->mean_gbps);
        gp__tbl_series(w, "series_gbps", b->series, b->n_series);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
}

/* CSV: queue_length.csv, header row first (the JSON fields as columns). */
void gp__table_csv_queue(const gp_analysis *a, FILE *fp)
{
    fprintf(fp, "rank,device,stream,launches,max_queue_length,mean_queue_length\n");
    for (size_t i = 0; i < a->n_ranks; i++)
        for (size_t k = 0; k < a->ranks[i].n_queues; k++) {
            const gp_queue_stream *s = &a->ranks[i].queues[k];
            fprintf(fp, "%d,%d,%lld,%llu,%lld,%.4f\n", a->ranks[i].rank, s->device,
                    (long long)s->stream, (unsigned long long)s->launches, (long long)s->max_len,
                    s->mean_len);
        }
}
