/* The critical path table of `gpuprof analyze` (per rank and step or region, by class, with its top
 * events): its text, JSON and CSV writers, declared by the registry (analysis_tables.h). They
 * format gp_analysis and compute nothing. */
#include "render/table_internal.h"

/* The region of a critical path as a short label. */
static void cp_label(const gp_critical_path *cp, char *buf, size_t cap)
{
    if (cp->step >= 0)
        snprintf(buf, cap, "step %lld", (long long)cp->step);
    else if (cp->region[0])
        snprintf(buf, cap, "%.40s", cp->region);
    else
        snprintf(buf, cap, "whole trace");
}

/* Text: always GP_OK. */
gp_status gp__table_text_critical_path(FILE *fp, const gp_analysis *a)
{
    gp__tbl_heading(fp, a->opts.cp_hta ? "CRITICAL PATH (HTA's graph, % of path length)"
                                       : "CRITICAL PATH (per step, % of path length)");
    fprintf(fp, "%5s %-16s %12s %7s %7s %7s %7s %7s %7s\n", "rank", "region", "length_ms", "cpu%",
            "data%", "gpu%", "comm%", "k-k%", "launch%");
    static const gp_cp_class cols[] = {GP_CP_CPU,      GP_CP_DATA_LOADING,  GP_CP_GPU_COMPUTE,
                                       GP_CP_GPU_COMM, GP_CP_KERNEL_KERNEL, GP_CP_LAUNCH};
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        for (size_t k = 0; k < r->n_critical_paths; k++) {
            const gp_critical_path *cp = &r->critical_paths[k];
            char label[48];
            cp_label(cp, label, sizeof label);
            if (!cp->valid) {
                fprintf(fp, "%5d %-16s %12s  %s\n", r->rank, label, "-", cp->note);
                continue;
            }
            fprintf(fp, "%5d %-16s %12.3f", r->rank, label, GP__TBL_MS(cp->length));
            for (size_t c = 0; c < GP_ARRAY_LEN(cols); c++) {
                fputc(' ', fp);
                gp__tbl_pct(fp, isnan(cp->pct[cols[c]]) ? NAN : cp->pct[cols[c]], 7);
            }
            fputc('\n', fp);
            for (size_t t = 0; t < cp->n_top && t < 3; t++) {
                const gp_cp_event *e = &cp->top[t];
                fprintf(fp, "%22s %10.3f ms  %-26s %.70s%s%.60s\n", "", GP__TBL_MS(e->time),
                        gp_cp_class_name(e->cls), e->name, e->python[0] ? "  <- " : "", e->python);
            }
            if (cp->note[0])
                fprintf(fp, "%22s note: %s\n", "", cp->note);
        }
    }
    return GP_OK;
}

static void critical_path_one(gp__jw *w, int32_t rank, const gp_critical_path *cp)
{
    gp__jw_obj_begin(w);
    gp__jw_kv_int(w, "rank", rank);
    gp__jw_kv_int(w, "step", cp->step);
    gp__jw_kv_str(w, "region", cp->region);
    gp__tbl_kv_ns(w, "start_ns", cp->start);
    gp__tbl_kv_ns(w, "end_ns", cp->end);
    gp__jw_kv_bool(w, "valid", cp->valid);
    gp__jw_kv_str(w, "note", cp->note);
    gp__tbl_kv_ns(w, "length_ns", cp->length);
    gp__jw_key(w, "by_class_ns");
    gp__jw_obj_begin(w);
    for (int c = 0; c < GP_CP_COUNT; c++)
        gp__tbl_kv_ns(w, gp_cp_class_name((gp_cp_class)c), cp->by_class[c]);
    gp__jw_obj_end(w);
    gp__jw_key(w, "by_class_pct");
    gp__jw_obj_begin(w);
    for (int c = 0; c < GP_CP_COUNT; c++)
        gp__tbl_kv_num(w, gp_cp_class_name((gp_cp_class)c), cp->pct[c]);
    gp__jw_obj_end(w);
    gp__jw_key(w, "top");
    gp__jw_arr_begin(w);
    for (size_t k = 0; k < cp->n_top; k++) {
        const gp_cp_event *e = &cp->top[k];
        gp__jw_obj_begin(w);
        gp__jw_kv_str(w, "name", e->name);
        gp__jw_kv_str(w, "kind", gp_event_kind_name((gp_event_kind)e->kind));
        gp__jw_kv_str(w, "class", gp_cp_class_name(e->cls));
        gp__tbl_kv_ns(w, "time_ns", e->time);
        gp__jw_kv_int(w, "count", (int64_t)e->count);
        gp__jw_kv_str(w, "python", e->python);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
    gp__jw_kv_int(w, "events_on_path", (int64_t)cp->n_events);
    gp__jw_obj_end(w);
}

/* JSON: the member "critical_path" (its rows as docs/analyses.md lists them). */
void gp__table_json_critical_path(gp__jw *w, const gp_analysis *a)
{
    gp__jw_key(w, "critical_path");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_ranks; i++)
        for (size_t k = 0; k < a->ranks[i].n_critical_paths; k++)
            critical_path_one(w, a->ranks[i].rank, &a->ranks[i].critical_paths[k]);
    gp__jw_arr_end(w);
}

/* One row per critical path, then its top events in their own rows (row_type "top"). */
void gp__table_csv_critical_path(const gp_analysis *a, FILE *fp)
{
    fprintf(fp, "rank,step,region,row_type,valid,length_ns");
    for (int c = 0; c < GP_CP_COUNT; c++)
        fprintf(fp, ",%s_ns,%s_pct", gp_cp_class_name((gp_cp_class)c),
                gp_cp_class_name((gp_cp_class)c));
    fprintf(fp, ",name,class,time_ns,count,python,note\n");
    for (size_t i = 0; i < a->n_ranks; i++)
        for (size_t k = 0; k < a->ranks[i].n_critical_paths; k++) {
            const gp_critical_path *cp = &a->ranks[i].critical_paths[k];
            fprintf(fp, "%d,%lld,", a->ranks[i].rank, (long long)cp->step);
            gp__tbl_csv_text(fp, cp->region, ',');
            fprintf(fp, "path,%d,%lld", cp->valid ? 1 : 0, (long long)cp->length);
            for (int c = 0; c < GP_CP_COUNT; c++) {
                fprintf(fp, ",%lld,", (long long)cp->by_class[c]);
                if (!isnan(cp->pct[c]))
                    fprintf(fp, "%.6g", cp->pct[c]);
            }
            fprintf(fp, ",,,,,,");
            gp__tbl_csv_text(fp, cp->note, '\n');
            for (size_t t = 0; t < cp->n_top; t++) {
                const gp_cp_event *e = &cp->top[t];
                fprintf(fp, "%d,%lld,", a->ranks[i].rank, (long long)cp->step);
                gp__tbl_csv_text(fp, cp->region, ',');
                fprintf(fp, "top,%d,%lld", cp->valid ? 1 : 0, (long long)cp->length);
                for (int c = 0; c < GP_CP_COUNT; c++)
                    fprintf(fp, ",,");
                fputc(',', fp);
                gp__tbl_csv_text(fp, e->name, ',');
                fprintf(fp, "%s,%lld,%llu,", gp_cp_class_name(e->cls), (long long)e->time,
                        (unsigned long long)e->count);
                gp__tbl_csv_text(fp, e->python, ',');
                fputc('\n', fp); /* no note */
            }
        }
}
