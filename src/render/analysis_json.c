/* JSON renderer of gp_analysis (schema "gpuprof.analyze/1", docs/analyses.md). Each HTA table keeps
 * HTA's column names at the top level of its rows; gpuprof's own fields sit beside them. */
#include <math.h>

#include "analyze/analyze_internal.h"
#include "render/collectives_render.h"
#include "core/json_writer.h"
#include "render/analysis_tables.h"
#include "render/render_internal.h"

#define WANT(bit) (tables & (bit))

static void kv_num(gp__jw *w, const char *k, double v)
{
    gp__jw_key(w, k);
    gp__jw_double(w, v); /* NaN -> null */
}

static void kv_ns(gp__jw *w, const char *k, int64_t v)
{
    gp__jw_kv_int(w, k, v);
}

static void kv_us(gp__jw *w, const char *k, int64_t ns)
{
    kv_num(w, k, (double)ns / 1000.0);
}

static void series(gp__jw *w, const char *k, const gp_series_point *p, size_t n)
{
    gp__jw_key(w, k);
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < n; i++) {
        gp__jw_arr_begin(w);
        gp__jw_int(w, p[i].t);
        gp__jw_double(w, p[i].v);
        gp__jw_arr_end(w);
    }
    gp__jw_arr_end(w);
}

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
    kv_num(w, "duration_ratio", o->duration_ratio);
    gp__jw_kv_str(w, "critical_path", !o->critical_path ? "off" : o->cp_hta ? "hta" : "default");
    gp__jw_obj_end(w);
}

static void temporal(gp__jw *w, const gp_analysis *a)
{
    gp__jw_key(w, "temporal_breakdown");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        const gp_temporal *t = &r->temporal;
        gp__jw_obj_begin(w);
        gp__jw_kv_int(w, "rank", r->rank);
        kv_us(w, "idle_time(us)", t->idle);
        kv_us(w, "compute_time(us)", t->compute);
        kv_us(w, "non_compute_time(us)", t->non_compute);
        kv_us(w, "kernel_time(us)", t->kernel_time);
        kv_num(w, "idle_time_pctg", t->idle_pct);
        kv_num(w, "compute_time_pctg", t->compute_pct);
        kv_num(w, "non_compute_time_pctg", t->non_compute_pct);
        gp__jw_kv_bool(w, "valid", t->valid);
        kv_ns(w, "idle_time_ns", t->idle);
        kv_ns(w, "compute_time_ns", t->compute);
        kv_ns(w, "non_compute_time_ns", t->non_compute);
        kv_ns(w, "kernel_time_ns", t->kernel_time);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
}

static void idle(gp__jw *w, const gp_analysis *a)
{
    gp__jw_key(w, "idle_time_breakdown");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        for (size_t k = 0; k < r->n_idle; k++) {
            const gp_idle_stream *s = &r->idle[k];
            for (int c = 0; c < GP_IDLE_COUNT; c++) {
                if (!s->present[c])
                    continue;
                gp__jw_obj_begin(w);
                gp__jw_kv_int(w, "rank", r->rank);
                gp__jw_kv_int(w, "stream", s->stream);
                gp__jw_kv_str(w, "idle_category", gp_idle_category_name((gp_idle_category)c));
                kv_us(w, "idle_time", s->idle[c]);
                kv_num(w, "idle_time_ratio", s->ratio[c]);
                gp__jw_kv_int(w, "device", s->device);
                kv_ns(w, "idle_time_ns", s->idle[c]);
                gp__jw_kv_int(w, "gaps", (int64_t)s->gaps[c]);
                gp__jw_obj_end(w);
            }
        }
    }
    gp__jw_arr_end(w);
}

static void type_rows(gp__jw *w, const gp_type_state *ts, size_t n, int32_t rank)
{
    for (size_t i = 0; i < n; i++) {
        gp__jw_obj_begin(w);
        if (rank >= 0)
            gp__jw_kv_int(w, "rank", rank);
        gp__jw_kv_str(w, "kernel_type", ts[i].label);
        kv_us(w, "sum", ts[i].time);
        kv_num(w, "percentage", ts[i].pct);
        kv_ns(w, "sum_ns", ts[i].time);
        gp__jw_obj_end(w);
    }
}

static void types(gp__jw *w, const gp_analysis *a)
{
    gp__jw_key(w, "kernel_type_breakdown");
    gp__jw_arr_begin(w);
    type_rows(w, a->types, a->n_types, -1);
    gp__jw_arr_end(w);
    gp__jw_key(w, "kernel_type_breakdown_per_rank");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_ranks; i++)
        type_rows(w, a->ranks[i].types, a->ranks[i].n_types, a->ranks[i].rank);
    gp__jw_arr_end(w);
}

static void kernels(gp__jw *w, const gp_analysis *a)
{
    gp__jw_key(w, "top_kernels");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        for (size_t k = 0; k < r->n_kernels; k++) {
            const gp_kernel_row *row = &r->kernels[k];
            gp__jw_obj_begin(w);
            gp__jw_kv_str(w, "name", row->name);
            kv_us(w, "sum (us)", row->sum);
            kv_us(w, "max (us)", row->max);
            kv_us(w, "min (us)", row->min);
            kv_num(w, "stddev", row->stddev / 1000.0);
            kv_num(w, "mean (us)", row->mean / 1000.0);
            gp__jw_kv_str(w, "kernel_type", gp_kernel_type_name(row->type));
            gp__jw_kv_int(w, "rank", row->rank);
            gp__jw_kv_bool(w, "others", row->others);
            gp__jw_kv_int(w, "count", (int64_t)row->count);
            kv_ns(w, "sum_ns", row->sum);
            gp__jw_obj_end(w);
        }
    }
    gp__jw_arr_end(w);
}

static void overlap(gp__jw *w, const gp_analysis *a)
{
    gp__jw_key(w, "comm_comp_overlap");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_overlap *o = &a->ranks[i].overlap;
        gp__jw_obj_begin(w);
        gp__jw_kv_int(w, "rank", a->ranks[i].rank);
        kv_num(w, "comp_comm_overlap_pctg", o->pct);
        kv_ns(w, "communication_time_ns", o->comm);
        kv_ns(w, "computation_time_ns", o->comp);
        kv_ns(w, "overlap_time_ns", o->overlap);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
}

static void launch(gp__jw *w, const gp_analysis *a)
{
    gp__jw_key(w, "launch_stats");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        const gp_launch_stats *ls = &r->launch;
        gp__jw_obj_begin(w);
        gp__jw_kv_int(w, "rank", r->rank);
        gp__jw_kv_int(w, "launches", (int64_t)ls->launches);
        gp__jw_kv_int(w, "matched", (int64_t)ls->matched);
        gp__jw_kv_int(w, "gpu_unmatched", (int64_t)ls->gpu_unmatched);
        gp__jw_kv_int(w, "graph_launches", (int64_t)ls->graph_launches);
        gp__jw_kv_int(w, "graph_kernels", (int64_t)ls->graph_kernels);
        gp__jw_key(w, "apis");
        gp__jw_arr_begin(w);
        for (size_t k = 0; k < ls->n_apis; k++) {
            const gp_launch_api *p = &ls->apis[k];
            gp__jw_obj_begin(w);
            gp__jw_kv_str(w, "name", p->name);
            gp__jw_kv_str(w, "category", p->driver ? "cuda_driver" : "cuda_runtime");
            gp__jw_kv_int(w, "calls", (int64_t)p->calls);
            gp__jw_kv_int(w, "matched", (int64_t)p->matched);
            kv_ns(w, "cpu_total_ns", p->cpu_total);
            kv_num(w, "cpu_mean_ns", p->cpu_mean);
            kv_ns(w, "cpu_p50_ns", p->cpu_p50);
            kv_ns(w, "cpu_p95_ns", p->cpu_p95);
            kv_ns(w, "cpu_max_ns", p->cpu_max);
            kv_num(w, "delay_mean_ns", p->matched ? p->delay_mean : NAN);
            kv_ns(w, "delay_p50_ns", p->delay_p50);
            kv_ns(w, "delay_p95_ns", p->delay_p95);
            kv_ns(w, "delay_min_ns", p->delay_min);
            kv_ns(w, "delay_max_ns", p->delay_max);
            gp__jw_kv_int(w, "cpu_outliers", (int64_t)p->cpu_outliers);
            gp__jw_kv_int(w, "delay_outliers", (int64_t)p->delay_outliers);
            gp__jw_kv_int(w, "negative_delay", (int64_t)p->negative_delay);
            gp__jw_obj_end(w);
        }
        gp__jw_arr_end(w);
        gp__jw_key(w, "outliers");
        gp__jw_arr_begin(w);
        for (size_t k = 0; k < ls->n_outliers; k++) {
            const gp_launch_outlier *o = &ls->outliers[k];
            gp__jw_obj_begin(w);
            gp__jw_kv_str(w, "api", o->api);
            gp__jw_kv_str(w, "kernel", o->kernel);
            kv_ns(w, "ts_ns", o->ts);
            kv_ns(w, "cpu_dur_ns", o->cpu_dur);
            kv_ns(w, "delay_ns", o->delay);
            gp__jw_kv_str(w, "reason", o->by_delay ? "delay" : "cpu_duration");
            gp__jw_obj_end(w);
        }
        gp__jw_arr_end(w);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
}

static void queue(gp__jw *w, const gp_analysis *a)
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
            kv_num(w, "mean_queue_length", q->mean_len);
            series(w, "series", q->series, q->n_series);
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
        kv_ns(w, "busy_ns", b->busy);
        kv_num(w, "mean_gbps", b->mean_gbps);
        series(w, "series_gbps", b->series, b->n_series);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
}

static void activity(gp__jw *w, const gp_analysis *a)
{
    gp__jw_key(w, "activity");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        const gp_activity *x = &r->activity;
        gp__jw_obj_begin(w);
        gp__jw_kv_int(w, "rank", r->rank);
        kv_ns(w, "span_ns", x->span);
        kv_ns(w, "cpu_active_ns", x->cpu_active);
        kv_ns(w, "gpu_active_ns", x->gpu_active);
        kv_ns(w, "cpu_gpu_overlap_ns", x->overlap);
        kv_ns(w, "sync_ns", x->sync);
        gp__jw_kv_int(w, "syncs", (int64_t)x->syncs);
        gp__jw_kv_int(w, "kernels", (int64_t)r->kernels_total);
        gp__jw_kv_int(w, "small_kernels", (int64_t)r->small_kernels);
        kv_ns(w, "small_kernels_ns", r->small_kernels_time);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
}

static void memory(gp__jw *w, const gp_analysis *a)
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
            kv_ns(w, "peak_ts_ns", m->peak_ts);
            gp__jw_kv_int(w, "peak_reserved_bytes", m->peak_reserved);
            gp__jw_kv_int(w, "final_allocated_bytes", m->final_allocated);
            gp__jw_kv_int(w, "capacity_bytes", m->capacity);
            gp__jw_kv_str(w, "cpu_op_at_peak", m->running_cpu);
            gp__jw_kv_str(w, "kernel_at_peak", m->running_gpu);
            series(w, "allocated", m->allocated, m->n_series);
            series(w, "reserved", m->reserved, m->n_series);
            gp__jw_obj_end(w);
        }
    }
    gp__jw_arr_end(w);
}

static void peak_memory(gp__jw *w, const gp_analysis *a)
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
        kv_ns(w, "ts_ns", p->source == GP_PEAK_NONE ? 0 : p->ts);
        gp__jw_kv_str(w, "what", p->what ? p->what : "");
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
}

static void critical_path_one(gp__jw *w, int32_t rank, const gp_critical_path *cp)
{
    gp__jw_obj_begin(w);
    gp__jw_kv_int(w, "rank", rank);
    gp__jw_kv_int(w, "step", cp->step);
    gp__jw_kv_str(w, "region", cp->region);
    kv_ns(w, "start_ns", cp->start);
    kv_ns(w, "end_ns", cp->end);
    gp__jw_kv_bool(w, "valid", cp->valid);
    gp__jw_kv_str(w, "note", cp->note);
    kv_ns(w, "length_ns", cp->length);
    gp__jw_key(w, "by_class_ns");
    gp__jw_obj_begin(w);
    for (int c = 0; c < GP_CP_COUNT; c++)
        kv_ns(w, gp_cp_class_name((gp_cp_class)c), cp->by_class[c]);
    gp__jw_obj_end(w);
    gp__jw_key(w, "by_class_pct");
    gp__jw_obj_begin(w);
    for (int c = 0; c < GP_CP_COUNT; c++)
        kv_num(w, gp_cp_class_name((gp_cp_class)c), cp->pct[c]);
    gp__jw_obj_end(w);
    gp__jw_key(w, "top");
    gp__jw_arr_begin(w);
    for (size_t k = 0; k < cp->n_top; k++) {
        const gp_cp_event *e = &cp->top[k];
        gp__jw_obj_begin(w);
        gp__jw_kv_str(w, "name", e->name);
        gp__jw_kv_str(w, "kind", gp_event_kind_name((gp_event_kind)e->kind));
        gp__jw_kv_str(w, "class", gp_cp_class_name(e->cls));
        kv_ns(w, "time_ns", e->time);
        gp__jw_kv_int(w, "count", (int64_t)e->count);
        gp__jw_kv_str(w, "python", e->python);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
    gp__jw_kv_int(w, "events_on_path", (int64_t)cp->n_events);
    gp__jw_obj_end(w);
}

static void critical_path(gp__jw *w, const gp_analysis *a)
{
    gp__jw_key(w, "critical_path");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_ranks; i++)
        for (size_t k = 0; k < a->ranks[i].n_critical_paths; k++)
            critical_path_one(w, a->ranks[i].rank, &a->ranks[i].critical_paths[k]);
    gp__jw_arr_end(w);
}

/* The "collectives" member (absent for a single trace). */
static void collectives(gp__jw *w, const gp_analysis *a)
{
    gp__coll_render_json(w, a->collectives);
}

/* The "idle_causes" member: one object per device and stream row. */
static void idle_causes(gp__jw *w, const gp_analysis *a)
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

/* The "step_breakdown" member: one object per step (critical_path_ns null without a path). */
static void step_parts(gp__jw *w, const gp_analysis *a)
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

static void ranks(gp__jw *w, const gp_analysis *a)
{
    gp__jw_key(w, "stragglers");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_stragglers; i++) {
        const gp_straggler *s = &a->stragglers[i];
        gp__jw_obj_begin(w);
        gp__jw_kv_int(w, "rank", s->rank);
        gp__jw_kv_str(w, "metric", s->metric);
        kv_num(w, "value", s->value);
        kv_num(w, "median", s->median);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
}

static void findings(gp__jw *w, const gp_analysis *a)
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
        kv_ns(w, "estimated_gain_ns", f->gain_ns);
        gp__jw_kv_str(w, "suggestion", gp__finding_advice(f));
        gp__jw_key(w, "metrics");
        gp__jw_obj_begin(w);
        for (size_t k = 0; k < f->n_evidence; k++) {
            gp__jw_key(w, f->evidence[k].name);
            gp__jw_obj_begin(w);
            kv_num(w, "value", f->evidence[k].value);
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
            kv_ns(w, "time_ns", o->time);
            gp__jw_kv_int(w, "count", (int64_t)o->count);
            kv_num(w, "roofline_share", o->roof >= 0 ? o->roof : NAN);
            gp__jw_obj_end(w);
        }
        gp__jw_arr_end(w);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
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
#define X(bit, fn, name, alias, json, csv)                                                         \
    if (WANT(bit))                                                                                 \
        fn(&w, a);
    GP__ANALYSIS_TABLES(X)
#undef X
    gp__jw_obj_end(&w);
    gp_status st = gp__jw_finish(&w);
    if (st == GP_OK && fputc('\n', fp) == EOF)
        st = GP_EIO;
    return st;
}
