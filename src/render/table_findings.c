/* The findings table of `gpuprof analyze` (the bottlenecks and suggestions, their words from
 * finding_format.c): its text, JSON and CSV writers, declared by the registry (analysis_tables.h).
 * They format gp_analysis and compute nothing. */
#include "render/table_internal.h"

/* Text: always GP_OK. */
gp_status gp__table_text_findings(FILE *fp, const gp_analysis *a)
{
    gp__tbl_heading(fp,
                    a->n_findings && a->findings[0].cause
                        ? "BOTTLENECKS AND SUGGESTIONS (the causes first, then by estimated gain)"
                        : "BOTTLENECKS AND SUGGESTIONS (by estimated gain)");
    if (a->n_findings == 0)
        fprintf(fp, "No bottleneck rule fired.\n");
    for (size_t i = 0; i < a->n_findings; i++) {
        const gp_finding *f = &a->findings[i];
        char who[256];
        gp_ranks_format(f->ranks, f->n_ranks, "-", who, sizeof(who));
        char title[512];
        gp__finding_title(f, title, sizeof title);
        fprintf(fp, "%zu. [%s/%s] %s: %s\n", i + 1, gp_priority_name(f->priority),
                gp_suggestion_type_name(f->type), who, title);
        if (f->n_ranks > 1)
            fprintf(fp, "   (evidence and gain of rank %d, the worst)\n", f->rank);
        fprintf(fp, "   rule %s; estimated gain: %.3f ms; evidence:", f->rule,
                GP__TBL_MS(f->gain_ns));
        gp__finding_evidence_text(f, fp);
        for (size_t k = 0; k < f->n_objects; k++) {
            char o[600];
            gp__finding_object_text(&f->objects[k], o, sizeof o);
            fprintf(fp, "\n   - %s", o);
        }
        fprintf(fp, "\n   -> %s\n", gp__finding_advice(f));
    }
    return GP_OK;
}

/* JSON: the member "findings" (its rows as docs/analyses.md lists them). */
void gp__table_json_findings(gp__jw *w, const gp_analysis *a)
{
    gp__jw_key(w, "findings");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_findings; i++) {
        const gp_finding *f = &a->findings[i];
        gp__jw_obj_begin(w);
        gp__jw_kv_str(w, "rule", f->rule);
        gp__jw_kv_int(w, "rank", f->rank);
        gp__jw_key(w, "ranks");
        gp__jw_arr_begin(w);
        for (size_t k = 0; k < f->n_ranks; k++)
            gp__jw_int(w, f->ranks[k]);
        gp__jw_arr_end(w);
        char title[512];
        gp__finding_title(f, title, sizeof title);
        gp__jw_kv_str(w, "title", title);
        gp__jw_kv_str(w, "type", gp_suggestion_type_name(f->type));
        gp__jw_kv_str(w, "priority", gp_priority_name(f->priority));
        gp__jw_kv_bool(w, "cause", f->cause);
        gp__jw_kv_int(w, "variant", f->variant);
        gp__tbl_kv_ns(w, "estimated_gain_ns", f->gain_ns);
        gp__jw_kv_str(w, "suggestion", gp__finding_advice(f));
        gp__jw_key(w, "metrics");
        gp__jw_obj_begin(w);
        for (size_t k = 0; k < f->n_evidence; k++) {
            gp__jw_key(w, f->evidence[k].name);
            gp__jw_obj_begin(w);
            gp__tbl_kv_num(w, "value", f->evidence[k].value);
            gp__jw_kv_str(w, "unit", gp_finding_unit_name(f->evidence[k].unit));
            gp__jw_obj_end(w);
        }
        gp__jw_obj_end(w);
        gp__jw_key(w, "objects");
        gp__jw_arr_begin(w);
        for (size_t k = 0; k < f->n_objects; k++) {
            const gp_finding_object *o = &f->objects[k];
            gp__jw_obj_begin(w);
            gp__jw_kv_str(w, "kind", gp_object_kind_name(o->kind));
            gp__jw_kv_str(w, "name", o->name);
            gp__jw_kv_str(w, "frame", o->frame);
            gp__tbl_kv_ns(w, "time_ns", o->time);
            gp__jw_kv_int(w, "count", (int64_t)o->count);
            gp__tbl_kv_num(w, "roofline_share", o->roof >= 0 ? o->roof : NAN);
            gp__jw_obj_end(w);
        }
        gp__jw_arr_end(w);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
}

/* CSV: findings.csv, header row first (the JSON fields as columns). */
void gp__table_csv_findings(const gp_analysis *a, FILE *fp)
{
    fprintf(fp, "rule,rank,priority,type,estimated_gain_ns,title,suggestion,ranks\n");
    for (size_t i = 0; i < a->n_findings; i++) {
        const gp_finding *f = &a->findings[i];
        fprintf(fp, "%s,%d,%s,%s,%lld,", f->rule, f->rank, gp_priority_name(f->priority),
                gp_suggestion_type_name(f->type), (long long)f->gain_ns);
        char title[512];
        gp__finding_title(f, title, sizeof title);
        gp__tbl_csv_text(fp, title, ',');
        gp__tbl_csv_text(fp, gp__finding_advice(f), ',');
        char who[256];
        gp_ranks_format(f->ranks, f->n_ranks, "-", who, sizeof(who));
        gp__tbl_csv_text(fp, who, '\n');
    }
}
