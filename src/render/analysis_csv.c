/* CSV renderer: one table per call, header row first, RFC 4180 quoting. Columns are the JSON
 * fields of the same table (docs/analyses.md). */
#include <math.h>
#include <string.h>

#include "analyze/analyze_internal.h"
#include "render/collectives_render.h"
#include "core/csv.h"
#include "core/util.h"
#include "render/analysis_tables.h"
#include "render/render_internal.h"

/* A number cell (empty for NaN: a figure that does not exist) and the separator after it. */
static void num(FILE *fp, double v, char sep)
{
    if (!isnan(v))
        fprintf(fp, "%.6g", v);
    fputc(sep, fp);
}

/* A text cell (quoted as RFC 4180 needs) and the separator after it. */
static void text(FILE *fp, const char *s, char sep)
{
    gp__csv_field(fp, s);
    fputc(sep, fp);
}

static const gp__analysis_table tables[] = {
#define X(bit, fn, name, alias, json, csv) {bit, name, alias, json, csv},
    GP__ANALYSIS_TABLES(X)
#undef X
};

const gp__analysis_table *gp__analysis_tables(size_t *n)
{
    *n = GP_ARRAY_LEN(tables);
    return tables;
}

gp_status gp_analysis_table_parse(const char *name, unsigned *out)
{
    if (!name)
        return GP_EINVAL;
    if (strcmp(name, "all") == 0) {
        *out = GP_AT_ALL;
        return GP_OK;
    }
    for (size_t i = 0; i < GP_ARRAY_LEN(tables); i++)
        if (strcmp(name, tables[i].name) == 0 || strcmp(name, tables[i].alias) == 0) {
            *out = tables[i].bit;
            return GP_OK;
        }
    return GP_EINVAL;
}

static void csv_temporal(const gp_analysis *a, FILE *fp)
{
    fprintf(fp, "rank,idle_time(us),compute_time(us),non_compute_time(us),kernel_time(us),"
                "idle_time_pctg,compute_time_pctg,non_compute_time_pctg\n");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_temporal *t = &a->ranks[i].temporal;
        fprintf(fp, "%d,%.3f,%.3f,%.3f,%.3f,", a->ranks[i].rank, t->idle / 1e3, t->compute / 1e3,
                t->non_compute / 1e3, t->kernel_time / 1e3);
        num(fp, t->idle_pct, ',');
        num(fp, t->compute_pct, ',');
        num(fp, t->non_compute_pct, '\n');
    }
}

static void csv_idle(const gp_analysis *a, FILE *fp)
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
                num(fp, s->ratio[c], ',');
                fprintf(fp, "%d,%llu\n", s->device, (unsigned long long)s->gaps[c]);
            }
        }
}

static void csv_types(const gp_analysis *a, FILE *fp)
{
    fprintf(fp, "kernel_type,sum,percentage\n");
    for (size_t i = 0; i < a->n_types; i++) {
        text(fp, a->types[i].label, ',');
        fprintf(fp, "%.3f,", a->types[i].time / 1e3);
        num(fp, a->types[i].pct, '\n');
    }
}

static void csv_kernels(const gp_analysis *a, FILE *fp)
{
    fprintf(fp, "name,sum (us),max (us),min (us),stddev,mean (us),kernel_type,rank,count\n");
    for (size_t i = 0; i < a->n_ranks; i++)
        for (size_t k = 0; k < a->ranks[i].n_kernels; k++) {
            const gp_kernel_row *r = &a->ranks[i].kernels[k];
            text(fp, r->name, ',');
            fprintf(fp, "%.3f,%.3f,%.3f,%.6g,%.6g,%s,%d,%llu\n", r->sum / 1e3, r->max / 1e3,
                    r->min / 1e3, r->stddev / 1e3, r->mean / 1e3, gp_kernel_type_name(r->type),
                    r->rank, (unsigned long long)r->count);
        }
}

static void csv_overlap(const gp_analysis *a, FILE *fp)
{
    fprintf(fp, "rank,comp_comm_overlap_pctg,communication_time_ns,computation_time_ns,"
                "overlap_time_ns\n");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_overlap *o = &a->ranks[i].overlap;
        fprintf(fp, "%d,", a->ranks[i].rank);
        num(fp, o->pct, ',');
        fprintf(fp, "%lld,%lld,%lld\n", (long long)o->comm, (long long)o->comp,
                (long long)o->overlap);
    }
}

static void csv_launch(const gp_analysis *a, FILE *fp)
{
    fprintf(fp, "rank,name,calls,matched,cpu_mean_ns,cpu_p50_ns,cpu_p95_ns,cpu_max_ns,"
                "delay_mean_ns,delay_p50_ns,delay_p95_ns,delay_max_ns,cpu_outliers,"
                "delay_outliers,negative_delay\n");
    for (size_t i = 0; i < a->n_ranks; i++)
        for (size_t k = 0; k < a->ranks[i].launch.n_apis; k++) {
            const gp_launch_api *p = &a->ranks[i].launch.apis[k];
            fprintf(fp, "%d,", a->ranks[i].rank);
            text(fp, p->name, ',');
            fprintf(fp, "%llu,%llu,%.1f,%lld,%lld,%lld,%.1f,%lld,%lld,%lld,%llu,%llu,%llu\n",
                    (unsigned long long)p->calls, (unsigned long long)p->matched, p->cpu_mean,
                    (long long)p->cpu_p50, (long long)p->cpu_p95, (long long)p->cpu_max,
                    p->delay_mean, (long long)p->delay_p50, (long long)p->delay_p95,
                    (long long)p->delay_max, (unsigned long long)p->cpu_outliers,
                    (unsigned long long)p->delay_outliers, (unsigned long long)p->negative_delay);
        }
}

static void csv_queue(const gp_analysis *a, FILE *fp)
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

static void csv_activity(const gp_analysis *a, FILE *fp)
{
    fprintf(fp, "rank,span_ns,cpu_active_ns,gpu_active_ns,cpu_gpu_overlap_ns,sync_ns,syncs\n");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_activity *x = &a->ranks[i].activity;
        fprintf(fp, "%d,%lld,%lld,%lld,%lld,%lld,%llu\n", a->ranks[i].rank, (long long)x->span,
                (long long)x->cpu_active, (long long)x->gpu_active, (long long)x->overlap,
                (long long)x->sync, (unsigned long long)x->syncs);
    }
}

static void csv_memory(const gp_analysis *a, FILE *fp)
{
    fprintf(fp, "rank,device_type,device_id,events,peak_allocated_bytes,peak_ts_ns,"
                "peak_reserved_bytes,capacity_bytes,cpu_op_at_peak,kernel_at_peak\n");
    for (size_t i = 0; i < a->n_ranks; i++)
        for (size_t k = 0; k < a->ranks[i].n_memory; k++) {
            const gp_memory_device *m = &a->ranks[i].memory[k];
            fprintf(fp, "%d,%d,%d,%llu,%lld,%lld,%lld,%lld,", a->ranks[i].rank, m->device_type,
                    m->device_id, (unsigned long long)m->events, (long long)m->peak_allocated,
                    (long long)m->peak_ts, (long long)m->peak_reserved, (long long)m->capacity);
            text(fp, m->running_cpu, ',');
            text(fp, m->running_gpu, '\n');
        }
}

static void csv_peak_memory(const gp_analysis *a, FILE *fp)
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
        text(fp, p->what ? p->what : "", '\n');
    }
}

static void csv_ranks(const gp_analysis *a, FILE *fp)
{
    fprintf(fp, "rank,metric,value,median\n");
    for (size_t i = 0; i < a->n_stragglers; i++)
        fprintf(fp, "%d,%s,%.6g,%.6g\n", a->stragglers[i].rank, a->stragglers[i].metric,
                a->stragglers[i].value, a->stragglers[i].median);
}

static void csv_findings(const gp_analysis *a, FILE *fp)
{
    fprintf(fp, "rule,rank,priority,type,estimated_gain_ns,title,suggestion,ranks\n");
    for (size_t i = 0; i < a->n_findings; i++) {
        const gp_finding *f = &a->findings[i];
        fprintf(fp, "%s,%d,%s,%s,%lld,", f->rule, f->rank, gp_priority_name(f->priority),
                gp_suggestion_type_name(f->type), (long long)f->gain_ns);
        char title[512];
        gp__finding_title(f, title, sizeof title);
        text(fp, title, ',');
        text(fp, gp__finding_advice(f), ',');
        char who[256];
        gp_ranks_format(f->ranks, f->n_ranks, "-", who, sizeof(who));
        text(fp, who, '\n');
    }
}

/* One row per critical path, then its top events in their own rows (row_type "top"). */
static void csv_critical_path(const gp_analysis *a, FILE *fp)
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
            text(fp, cp->region, ',');
            fprintf(fp, "path,%d,%lld", cp->valid ? 1 : 0, (long long)cp->length);
            for (int c = 0; c < GP_CP_COUNT; c++) {
                fprintf(fp, ",%lld,", (long long)cp->by_class[c]);
                if (!isnan(cp->pct[c]))
                    fprintf(fp, "%.6g", cp->pct[c]);
            }
            fprintf(fp, ",,,,,,");
            text(fp, cp->note, '\n');
            for (size_t t = 0; t < cp->n_top; t++) {
                const gp_cp_event *e = &cp->top[t];
                fprintf(fp, "%d,%lld,", a->ranks[i].rank, (long long)cp->step);
                text(fp, cp->region, ',');
                fprintf(fp, "top,%d,%lld", cp->valid ? 1 : 0, (long long)cp->length);
                for (int c = 0; c < GP_CP_COUNT; c++)
                    fprintf(fp, ",,");
                fputc(',', fp);
                text(fp, e->name, ',');
                fprintf(fp, "%s,%lld,%llu,", gp_cp_class_name(e->cls), (long long)e->time,
                        (unsigned long long)e->count);
                text(fp, e->python, ',');
                fputc('\n', fp); /* no note */
            }
        }
}

/* One writer per table, indexed by the table's bit (gp_analysis_table). */
/* idle_causes.csv: one row per row and cause. */
static void csv_idle_causes(const gp_analysis *a, FILE *fp)
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

/* step_breakdown.csv: one row per step. */
static void csv_step_parts(const gp_analysis *a, FILE *fp)
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

/* collectives.csv: one row per matched collective (nothing for a single trace). */
static void csv_collectives(const gp_analysis *a, FILE *fp)
{
    gp__coll_render_csv(fp, a->collectives);
}

/* One writer per table, from the registry (render/analysis_tables.h). */
static const struct {
    unsigned table;
    void (*write)(const gp_analysis *a, FILE *fp);
} csv_writers[] = {
#define X(bit, fn, name, alias, json, csv) {bit, csv_##fn},
    GP__ANALYSIS_TABLES(X)
#undef X
};

/* The CSV of one of the tables of csv_writers. */
static gp_status analysis_csv(const gp_analysis *a, unsigned table, FILE *fp)
{
    for (size_t i = 0; i < sizeof csv_writers / sizeof *csv_writers; i++)
        if (csv_writers[i].table == table) {
            csv_writers[i].write(a, fp);
            return ferror(fp) ? GP_EIO : GP_OK;
        }
    return GP_EINVAL;
}

gp_status gp_analysis_render_csv(const gp_analysis *a, unsigned table, FILE *fp)
{
    return analysis_csv(a, table, fp);
}
