/* The idle causes table of `gpuprof analyze` (per device and stream: what the launching thread did
 * while the GPU idled): its text, JSON and CSV writers, declared by the registry
 * (analysis_tables.h). They format gp_analysis and compute nothing. */
#include "render/table_internal.h"

/* The cause holding the most idle time of a row (-1 when the row has none). */
static int largest_cause(const gp_idle_causes *c)
{
    int best = -1;
    for (int k = 0; k < GP_IC_COUNT; k++)
        if (c->by_cause[k] > 0 && (best < 0 || c->by_cause[k] > c->by_cause[best]))
            best = k;
    return best;
}

/* IDLE CAUSES: one line per device and stream, the share of each cause, the largest cause's top
 * frame/op/call (docs/analyses.md, "Idle causes"). Always GP_OK. */
gp_status gp__table_text_idle_causes(FILE *fp, const gp_analysis *a)
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
            fprintf(fp, "%5d %6d %8s %12.3f", r->rank, c->device, stream, GP__TBL_MS(c->idle));
            for (int k = 0; k < GP_IC_COUNT; k++) {
                if (isnan(c->share[k]))
                    fprintf(fp, " %12s", "n/a");
                else
                    fprintf(fp, " %11.2f%%", 100.0 * c->share[k]);
            }
            int big = largest_cause(c);
            if (big >= 0)
                fprintf(fp, "  %s: %.60s (%.3f)", gp_idle_cause_name((gp_idle_cause)big),
                        *c->top_what[big] ? c->top_what[big] : "-", GP__TBL_MS(c->top_time[big]));
            fputc('\n', fp);
        }
    }
    return GP_OK;
}

/* The "idle_causes" member: one object per device and stream row. */
void gp__table_json_idle_causes(gp__jw *w, const gp_analysis *a)
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

/* idle_causes.csv: one row per row and cause. */
void gp__table_csv_idle_causes(const gp_analysis *a, FILE *fp)
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
