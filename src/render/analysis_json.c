/* JSON renderer of gp_analysis (schema "gpuprof.analyze/1", docs/analyses.md): the document's own
 * members, then each table's member (src/render/table_*.c) in the registry's order. Each HTA table
 * keeps HTA's column names at the top level of its rows; gpuprof's own fields sit beside them. */
#include "render/table_internal.h"

/* The member "options": the analysis options the figures were computed with. */
static void options(gp__jw *w, const gp_analyze_opts *o)
{
    gp__jw_key(w, "options");
    gp__jw_obj_begin(w);
    gp__jw_kv_str(w, "steps",
                  o->steps == GP_STEPS_ALL   ? "all"
                  : o->steps == GP_STEPS_HTA ? "hta"
                                             : "range");
    if (o->steps == GP_STEPS_RANGE) {
        gp__jw_kv_int(w, "step_first", o->step_first);
        gp__jw_kv_int(w, "step_last", o->step_last);
    }
    gp__jw_kv_str(w, "classify", o->hta ? "hta" : "default");
    gp__jw_kv_int(w, "user_rules", (int64_t)o->n_rules);
    gp__jw_kv_int(w, "kernel_wait_ns", o->kernel_wait_ns);
    gp__jw_kv_int(w, "num_kernels", (int64_t)o->top_kernels);
    gp__tbl_kv_num(w, "duration_ratio", o->duration_ratio);
    gp__jw_kv_str(w, "critical_path", !o->critical_path ? "off" : o->cp_hta ? "hta" : "default");
    gp__jw_obj_end(w);
}

gp_status gp_analysis_render_json(const gp_analysis *a, unsigned tables, FILE *fp)
{
    if (tables == 0)
        tables = GP_AT_ALL;
    gp__jw w;
    gp__jw_init(&w, fp);
    w.pretty = true;
    gp__jw_obj_begin(&w);
    gp__jw_kv_str(&w, "schema", "gpuprof.analyze/1");
    options(&w, &a->opts);
    gp__jw_key(&w, "ranks");
    gp__jw_arr_begin(&w);
    for (size_t i = 0; i < a->n_ranks; i++)
        gp__jw_int(&w, a->ranks[i].rank);
    gp__jw_arr_end(&w);
    gp__jw_key(&w, "rank_info");
    gp__jw_arr_begin(&w);
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        gp__jw_obj_begin(&w);
        gp__jw_kv_int(&w, "rank", r->rank);
        gp__jw_kv_str(&w, "source", r->source);
        gp__jw_kv_int(&w, "gpu_events", (int64_t)r->gpu_events);
        gp__jw_kv_int(&w, "cpu_events", (int64_t)r->cpu_events);
        gp__jw_kv_int(&w, "steps_total", r->steps_total);
        gp__jw_kv_int(&w, "steps_kept", r->steps_kept);
        gp__jw_kv_int(&w, "stream_overlaps", (int64_t)r->stream_overlaps);
        gp__jw_kv_int(&w, "max_stream_overlap_ns", r->max_stream_overlap);
        gp__jw_kv_int(&w, "rounded_negative", (int64_t)r->rounded_negative);
        gp__jw_kv_bool(&w, "rounded_negative_empty", r->rounded_negative_empty);
        gp__jw_kv_str(&w, "note", r->note.msg);
        gp__jw_obj_end(&w);
    }
    gp__jw_arr_end(&w);
    gp__jw_kv_str(&w, "note", a->note.msg);
#define X(bit, fn, name, alias, json, csv, build)                                                  \
    if (tables & (bit))                                                                            \
        gp__table_json_##fn(&w, a);
    GP__ANALYSIS_TABLES(X)
#undef X
    gp__jw_obj_end(&w);
    gp_status st = gp__jw_finish(&w);
    if (st == GP_OK && fputc('\n', fp) == EOF)
        st = GP_EIO;
    return st;
}
