/* The step breakdown table of `gpuprof analyze` (per step: TensorBoard's parts of the step time and
 * the critical path): its text, JSON and CSV writers, declared by the registry (analysis_tables.h).
 * They format gp_analysis and compute nothing. */
#include "render/table_internal.h"

/* STEP BREAKDOWN: ms per part, the step's critical path length beside it, "-" without one
 * (docs/analyses.md, "Step breakdown"). Always GP_OK. */
gp_status gp__table_text_step_parts(FILE *fp, const gp_analysis *a)
{
    static const char title[] = "STEP BREAKDOWN (TensorBoard's step time, ms: each instant once, "
                                "by precedence from kernel to other)";
    fprintf(fp, "\n%s\n", title);
    gp__rule(fp, '=', (int)strlen(title));
    fprintf(fp, "%5s %6s %11s", "rank", "step", "step_ms");
    for (int k = 0; k < GP_SP_COUNT; k++)
        fprintf(fp, " %11s",
                k == GP_SP_COMMUNICATION ? "comm" : gp_step_part_name((gp_step_part)k));
    fprintf(fp, " %11s\n", "crit_path");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        for (size_t j = 0; j < r->n_step_parts; j++) {
            const gp_step_breakdown *b = &r->step_parts[j];
            char step[24];
            if (b->step < 0)
                snprintf(step, sizeof step, "all");
            else
                snprintf(step, sizeof step, "%lld", (long long)b->step);
            fprintf(fp, "%5d %6s %11.3f", r->rank, step, GP__TBL_MS(b->end - b->start));
            for (int k = 0; k < GP_SP_COUNT; k++)
                fprintf(fp, " %11.3f", GP__TBL_MS(b->part[k]));
            const gp_critical_path *cp = b->step >= 0 ? gp__step_critical_path(r, b->step) : NULL;
            if (cp)
                fprintf(fp, " %11.3f\n", GP__TBL_MS(cp->length));
            else
                fprintf(fp, " %11s\n", "-");
        }
    }
    return GP_OK;
}

/* The "step_breakdown" member: one object per step (critical_path_ns null without a path). */
void gp__table_json_step_parts(gp__jw *w, const gp_analysis *a)
{
    gp__jw_key(w, "step_breakdown");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        for (size_t j = 0; j < r->n_step_parts; j++) {
            const gp_step_breakdown *b = &r->step_parts[j];
            gp__jw_obj_begin(w);
            gp__jw_kv_int(w, "rank", r->rank);
            gp__jw_kv_int(w, "step", b->step);
            gp__jw_kv_int(w, "start_ns", b->start);
            gp__jw_kv_int(w, "end_ns", b->end);
            gp__jw_kv_int(w, "duration_ns", b->end - b->start);
            gp__jw_key(w, "parts_ns");
            gp__jw_obj_begin(w);
            for (int k = 0; k < GP_SP_COUNT; k++)
                gp__jw_kv_int(w, gp_step_part_name((gp_step_part)k), b->part[k]);
            gp__jw_obj_end(w);
            const gp_critical_path *cp = b->step >= 0 ? gp__step_critical_path(r, b->step) : NULL;
            gp__jw_key(w, "critical_path_ns");
            if (cp)
                gp__jw_int(w, cp->length);
            else
                gp__jw_null(w);
            gp__jw_obj_end(w);
        }
    }
    gp__jw_arr_end(w);
}

/* step_breakdown.csv: one row per step. */
void gp__table_csv_step_parts(const gp_analysis *a, FILE *fp)
{
    fprintf(fp, "rank,step,start_ns,end_ns,duration_ns");
    for (int k = 0; k < GP_SP_COUNT; k++)
        fprintf(fp, ",%s_ns", gp_step_part_name((gp_step_part)k));
    fprintf(fp, ",critical_path_ns\n");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        for (size_t j = 0; j < r->n_step_parts; j++) {
            const gp_step_breakdown *b = &r->step_parts[j];
            fprintf(fp, "%d,%lld,%lld,%lld,%lld", r->rank, (long long)b->step, (long long)b->start,
                    (long long)b->end, (long long)(b->end - b->start));
            for (int k = 0; k < GP_SP_COUNT; k++)
                fprintf(fp, ",%lld", (long long)b->part[k]);
            const gp_critical_path *cp = b->step >= 0 ? gp__step_critical_path(r, b->step) : NULL;
            fputc(',', fp); /* empty without a critical path */
            if (cp)
                fprintf(fp, "%lld", (long long)cp->length);
            fputc('\n', fp);
        }
    }
}
