/* The peak memory table of `gpuprof analyze` (per rank, from the best source the trace has): its
 * text, JSON and CSV writers, declared by the registry (analysis_tables.h). They format gp_analysis
 * and compute nothing. */
#include "render/table_internal.h"

/* Text: always GP_OK. */
gp_status gp__table_text_peak_memory(FILE *fp, const gp_analysis *a)
{
    gp__tbl_heading(fp, "PEAK MEMORY (allocator, else profiler ranges, else memory counters)");
    fprintf(fp, "%5s %10s %14s  %s\n", "rank", "source", "peak_MiB", "what");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_peak_memory *p = &a->ranks[i].peak_memory;
        if (p->source == GP_PEAK_NONE) {
            fprintf(fp, "%5d %10s %14s  %s\n", a->ranks[i].rank, "none", "-", "-");
            continue;
        }
        fprintf(fp, "%5d %10s %14.1f  %s\n", a->ranks[i].rank, gp_peak_source_name(p->source),
                (double)p->bytes / GP_MIB, p->what && p->what[0] ? p->what : "-");
    }
    return GP_OK;
}

/* JSON: the member "peak_memory" (its rows as docs/analyses.md lists them). */
void gp__table_json_peak_memory(gp__jw *w, const gp_analysis *a)
{
    gp__jw_key(w, "peak_memory");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_peak_memory *p = &a->ranks[i].peak_memory;
        gp__jw_obj_begin(w);
        gp__jw_kv_int(w, "rank", a->ranks[i].rank);
        gp__jw_kv_str(w, "source", gp_peak_source_name(p->source));
        gp__jw_key(w, "bytes");
        if (p->source == GP_PEAK_NONE)
            gp__jw_null(w);
        else
            gp__jw_int(w, p->bytes);
        gp__tbl_kv_ns(w, "ts_ns", p->source == GP_PEAK_NONE ? 0 : p->ts);
        gp__jw_kv_str(w, "what", p->what ? p->what : "");
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
}

/* CSV: peak_memory.csv, header row first (the JSON fields as columns). */
void gp__table_csv_peak_memory(const gp_analysis *a, FILE *fp)
{
    fprintf(fp, "rank,source,bytes,ts_ns,what\n");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_peak_memory *p = &a->ranks[i].peak_memory;
        fprintf(fp, "%d,%s,", a->ranks[i].rank, gp_peak_source_name(p->source));
        if (p->source != GP_PEAK_NONE)
            fprintf(fp, "%lld,%lld", (long long)p->bytes, (long long)p->ts);
        else
            fputc(',', fp);
        fputc(',', fp);
        gp__tbl_csv_text(fp, p->what ? p->what : "", '\n');
    }
}
