/* Text, JSON and CSV of the idle causes and the step breakdown (docs/analyses.md, "Idle causes",
 * "Step breakdown"); analysis_{text,json,csv}.c call these. */
#include <math.h>
#include <string.h>

#include "render/idle_causes_render.h"
#include "render/render_internal.h"
#include "core/csv.h"

#define MS(ns) ((double)(ns) / 1e6)

/* The critical path of step (the region of that ProfilerStep), or NULL. */
static const gp_critical_path *step_path(const gp_rank_analysis *r, int64_t step)
{
    for (size_t i = 0; i < r->n_critical_paths; i++)
        if (r->critical_paths[i].step == step && r->critical_paths[i].valid)
            return &r->critical_paths[i];
    return NULL;
}

/* The cause holding the most idle time of a row (-1 when the row has none). */
static int largest_cause(const gp_idle_causes *c)
{
    int best = -1;
    for (int k = 0; k < GP_IC_COUNT; k++)
        if (c->by_cause[k] > 0 && (best < 0 || c->by_cause[k] > c->by_cause[best]))
            best = k;
    return best;
}

void gp__text_idle_causes(FILE *fp, const gp_analysis *a)
{
    static const char title[] = "IDLE CAUSES (what the launching thread did while the GPU idled; "
                                "% of the row's idle time in the analysed window)";
    fprintf(fp, "\n%s\n", title);
    gp__rule(fp, '=', (int)strlen(title));
    fprintf(fp, "%5s %6s %8s %12s", "rank", "device", "stream", "idle_ms");
    for (int k = 0; k < GP_IC_COUNT; k++)
        fprintf(fp, " %12s", gp_idle_cause_name((gp_idle_cause)k));
    fprintf(fp, "  largest: what (ms)\n");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        for (size_t j = 0; j < r->n_idle_causes; j++) {
            const gp_idle_causes *c = &r->idle_causes[j];
            char stream[24];
            if (c->stream == -1)
                snprintf(stream, sizeof stream, "all");
            else
                snprintf(stream, sizeof stream, "%lld", (long long)c->stream);
            fprintf(fp, "%5d %6d %8s %12.3f", r->rank, c->device, stream, MS(c->idle));
            for (int k = 0; k < GP_IC_COUNT; k++) {
                if (isnan(c->share[k]))
                    fprintf(fp, " %12s", "n/a");
                else
                    fprintf(fp, " %11.2f%%", 100.0 * c->share[k]);
            }
            int big = largest_cause(c);
            if (big >= 0)
                fprintf(fp, "  %s: %.60s (%.3f)", gp_idle_cause_name((gp_idle_cause)big),
                        *c->top_what[big] ? c->top_what[big] : "-", MS(c->top_time[big]));
            fputc('\n', fp);
        }
    }
}

void gp__text_step_parts(FILE *fp, const gp_analysis *a)
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
            fprintf(fp, "%5d %6s %11.3f", r->rank, step, MS(b->end - b->start));
            for (int k = 0; k < GP_SP_COUNT; k++)
                fprintf(fp, " %11.3f", MS(b->part[k]));
            const gp_critical_path *cp = b->step >= 0 ? step_path(r, b->step) : NULL;
            if (cp)
                fprintf(fp, " %11.3f\n", MS(cp->length));
            else
                fprintf(fp, " %11s\n", "-");
        }
    }
}

void gp__json_idle_causes(gp__jw *w, const gp_analysis *a)
{
    gp__jw_key(w, "idle_causes");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        for (size_t j = 0; j < r->n_idle_causes; j++) {
            const gp_idle_causes *c = &r->idle_causes[j];
            gp__jw_obj_begin(w);
            gp__jw_kv_int(w, "rank", r->rank);
            gp__jw_kv_int(w, "device", c->device);
            gp__jw_kv_int(w, "stream", c->stream);
            gp__jw_kv_str(w, "scope", c->stream == -1 ? "device" : "stream");
            gp__jw_kv_int(w, "idle_ns", c->idle);
            gp__jw_key(w, "causes");
            gp__jw_obj_begin(w);
            for (int k = 0; k < GP_IC_COUNT; k++) {
                gp__jw_key(w, gp_idle_cause_name((gp_idle_cause)k));
                gp__jw_obj_begin(w);
                gp__jw_kv_int(w, "time_ns", c->by_cause[k]);
                gp__jw_key(w, "share");
                gp__jw_double(w, c->share[k]); /* NaN -> null */
                gp__jw_kv_str(w, "top", c->top_what[k] ? c->top_what[k] : "");
                gp__jw_kv_int(w, "top_ns", c->top_time[k]);
                gp__jw_obj_end(w);
            }
            gp__jw_obj_end(w);
            gp__jw_obj_end(w);
        }
    }
    gp__jw_arr_end(w);
}

void gp__json_step_parts(gp__jw *w, const gp_analysis *a)
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
            const gp_critical_path *cp = b->step >= 0 ? step_path(r, b->step) : NULL;
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

void gp__csv_idle_causes(const gp_analysis *a, FILE *fp)
{
    fprintf(fp, "rank,device,stream,idle_ns,cause,time_ns,share,top,top_ns\n");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        for (size_t j = 0; j < r->n_idle_causes; j++) {
            const gp_idle_causes *c = &r->idle_causes[j];
            for (int k = 0; k < GP_IC_COUNT; k++) {
                fprintf(fp, "%d,%d,%lld,%lld,%s,%lld,", r->rank, c->device, (long long)c->stream,
                        (long long)c->idle, gp_idle_cause_name((gp_idle_cause)k),
                        (long long)c->by_cause[k]);
                if (!isnan(c->share[k]))
                    fprintf(fp, "%.6g", c->share[k]);
                fputc(',', fp);
                gp__csv_field(fp, c->top_what[k] ? c->top_what[k] : "");
                fprintf(fp, ",%lld\n", (long long)c->top_time[k]);
            }
        }
    }
}

void gp__csv_step_parts(const gp_analysis *a, FILE *fp)
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
            const gp_critical_path *cp = b->step >= 0 ? step_path(r, b->step) : NULL;
            fputc(',', fp); /* empty without a critical path */
            if (cp)
                fprintf(fp, "%lld", (long long)cp->length);
            fputc('\n', fp);
        }
    }
}
