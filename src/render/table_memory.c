/* The memory table of `gpuprof analyze` (per rank and device, from the [memory] events): its text,
 * JSON and CSV writers, declared by the registry (analysis_tables.h). They format gp_analysis and
 * compute nothing. */
#include "render/table_internal.h"

/* Text: always GP_OK. */
gp_status gp__table_text_memory(FILE *fp, const gp_analysis *a)
{
    gp__tbl_heading(fp, "MEMORY ([memory] events)");
    fprintf(fp, "%5s %8s %12s %14s %12s %12s  %s\n", "rank", "device", "events", "peak_alloc_MiB",
            "peak_at_ms", "reserved_MiB", "running at the peak (cpu op | kernel)");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        for (size_t k = 0; k < r->n_memory; k++) {
            const gp_memory_device *m = &r->memory[k];
            char dev[16], cpu[48], gpu[48];
            snprintf(dev, sizeof(dev), "%s%d",
                     m->device_type == 1 ? "cuda:" : "cpu:", m->device_id);
            gp_shorten_name(m->running_cpu, 40, cpu, sizeof(cpu));
            gp_shorten_name(m->running_gpu, 40, gpu, sizeof(gpu));
            fprintf(fp, "%5d %8s %12llu %14.1f %12.3f %12.1f  %s | %s\n", r->rank, dev,
                    (unsigned long long)m->events, (double)m->peak_allocated / GP_MIB,
                    m->n_series ? GP__TBL_MS(m->peak_ts - m->allocated[0].t) : 0.0,
                    (double)m->peak_reserved / GP_MIB, cpu[0] ? cpu : "-", gpu[0] ? gpu : "-");
        }
    }
    return GP_OK;
}

/* JSON: the member "memory" (its rows as docs/analyses.md lists them). */
void gp__table_json_memory(gp__jw *w, const gp_analysis *a)
{
    gp__jw_key(w, "memory");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        for (size_t k = 0; k < r->n_memory; k++) {
            const gp_memory_device *m = &r->memory[k];
            gp__jw_obj_begin(w);
            gp__jw_kv_int(w, "rank", r->rank);
            gp__jw_kv_int(w, "device_type", m->device_type);
            gp__jw_kv_int(w, "device_id", m->device_id);
            gp__jw_kv_int(w, "events", (int64_t)m->events);
            gp__jw_kv_int(w, "peak_allocated_bytes", m->peak_allocated);
            gp__tbl_kv_ns(w, "peak_ts_ns", m->peak_ts);
            gp__jw_kv_int(w, "peak_reserved_bytes", m->peak_reserved);
            gp__jw_kv_int(w, "final_allocated_bytes", m->final_allocated);
            gp__jw_kv_int(w, "capacity_bytes", m->capacity);
            gp__jw_kv_str(w, "cpu_op_at_peak", m->running_cpu);
            gp__jw_kv_str(w, "kernel_at_peak", m->running_gpu);
            gp__tbl_series(w, "allocated", m->allocated, m->n_series);
            gp__tbl_series(w, "reserved", m->reserved, m->n_series);
            gp__jw_obj_end(w);
        }
    }
    gp__jw_arr_end(w);
}

/* CSV: memory.csv, header row first (the JSON fields as columns). */
void gp__table_csv_memory(const gp_analysis *a, FILE *fp)
{
    fprintf(fp, "rank,device_type,device_id,events,peak_allocated_bytes,peak_ts_ns,"
                "peak_reserved_bytes,capacity_bytes,cpu_op_at_peak,kernel_at_peak\n");
    for (size_t i = 0; i < a->n_ranks; i++)
        for (size_t k = 0; k < a->ranks[i].n_memory; k++) {
            const gp_memory_device *m = &a->ranks[i].memory[k];
            fprintf(fp, "%d,%d,%d,%llu,%lld,%lld,%lld,%lld,", a->ranks[i].rank, m->device_type,
                    m->device_id, (unsigned long long)m->events, (long long)m->peak_allocated,
                    (long long)m->peak_ts, (long long)m->peak_reserved, (long long)m->capacity);
            gp__tbl_csv_text(fp, m->running_cpu, ',');
            gp__tbl_csv_text(fp, m->running_gpu, '\n');
        }
}
