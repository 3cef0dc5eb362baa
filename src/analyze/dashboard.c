/* Dashboard model-to-view: picks the figures, charts and tables of report.html out of the
 * summary (per-name statistics), the timeline (memory rows) and the analysis (GPU busy and idle,
 * peak memory, findings), computes the job-level figures (the job's span, CPU thread self time
 * per kind) and lays the charts out as fractions of partitions. dashboard_html.c formats the
 * result and computes nothing. */
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze_internal.h"
#include "core/util.h"
#include "gpuprof/analyze.h"
#include "gpuprof/report.h"
#include "gpuprof/summary.h"

/* The memory chart: the timeline row of the peak's source (allocator rows, or the peak's counter
 * series), drawn as the highest value per horizontal bucket, scaled to the peak. */
static gp_status memory_chart(gp_dashboard *d, const gp_timeline *tl, const gp_peak_memory *pk)
{
    if (pk->source != GP_PEAK_ALLOCATOR && pk->source != GP_PEAK_COUNTER)
        return GP_OK;
    const gp_tl_row *best = NULL;
    double top = -1;
    for (size_t r = 0; r < tl->n_rows; r++) {
        const gp_tl_row *row = &tl->rows[r];
        bool match = pk->source == GP_PEAK_ALLOCATOR
                         ? row->kind == GP_TL_MEMORY
                         : row->kind == GP_TL_COUNTER && strcmp(row->label, pk->what) == 0;
        for (size_t i = 0; match && i < row->n_samples; i++)
            if (row->sample_val[i] > top) {
                top = row->sample_val[i];
                best = row;
            }
    }
    if (!best || top <= 0)
        return GP_OK;
    snprintf(d->mem_label, sizeof d->mem_label, "%s", best->label);
    enum { BUCKETS = 600 };
    d->mem_x = malloc(BUCKETS * sizeof *d->mem_x);
    d->mem_y = malloc(BUCKETS * sizeof *d->mem_y);
    if (!d->mem_x || !d->mem_y)
        return GP_ENOMEM;
    double span = (double)(tl->end - tl->start);
    if (span <= 0)
        span = 1;
    long last = -1;
    for (size_t i = 0; i < best->n_samples; i++) {
        double fx = (double)(best->sample_ts[i] - tl->start) / span;
        long b = (long)gp__ns_of_double(fx * (BUCKETS - 1));
        double fy = best->sample_val[i] / top;
        if (b == last && d->n_mem > 0) {
            if (fy > d->mem_y[d->n_mem - 1])
                d->mem_y[d->n_mem - 1] = fy; /* the highest value per bucket */
            continue;
        }
        d->mem_x[d->n_mem] = (double)b / (BUCKETS - 1);
        d->mem_y[d->n_mem++] = fy;
        last = b;
    }
    d->mem_peak_x = GP_MAX(0.0, GP_MIN(1.0, (double)(pk->ts - tl->start) / span));
    for (int i = 0; i < 5; i++) {
        d->mem_ytick[i] = top * i / 4;
        d->mem_xtick[i] = gp__ns_of_double(span * i / 4);
    }
    return GP_OK;
}

/* The peak memory of the job: the highest rank peak of the analysis (docs/analyses.md, "Peak
 * memory"), with its context; none without an analysis. */
static const gp_peak_memory *job_peak(gp_dashboard *d, const gp_analysis *a)
{
    const gp_rank_analysis *best_r = NULL;
    for (size_t r = 0; a && r < a->n_ranks; r++) {
        const gp_peak_memory *p = &a->ranks[r].peak_memory;
        if (p->source != GP_PEAK_NONE && (!best_r || p->bytes > best_r->peak_memory.bytes))
            best_r = &a->ranks[r];
    }
    if (!best_r)
        return NULL;
    const gp_peak_memory *p = &best_r->peak_memory;
    d->peak_memory = (double)p->bytes;
    double at = d->timeline ? (double)(p->ts - d->timeline->start) / 1e6 : 0;
    const gp_memory_device *dev = NULL;
    for (size_t i = 0; p->source == GP_PEAK_ALLOCATOR && i < best_r->n_memory; i++)
        if (best_r->memory[i].peak_allocated == p->bytes)
            dev = &best_r->memory[i];
    if (dev)
        snprintf(d->peak_note, sizeof d->peak_note, "rank %d, %s %d, at %.3f ms%s%.60s%s%.60s",
                 (int)best_r->rank, dev->device_type == 1 ? "GPU" : "device", (int)dev->device_id,
                 at, *dev->running_cpu ? ", during " : "", dev->running_cpu,
                 *dev->running_gpu ? ", kernel " : "", dev->running_gpu);
    else
        snprintf(d->peak_note, sizeof d->peak_note, "rank %d, %s%s%.60s, at %.3f ms",
                 (int)best_r->rank, gp_peak_source_name(p->source), *p->what ? " " : "", p->what,
                 at);
    return p;
}

/* The job's span: earliest start to latest end over the traces (empty traces left out). */
static gp_ns job_span(const gp_trace *const *traces, size_t n)
{
    gp_ns lo = 0, hi = 0;
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        if (gp_trace_event_count(traces[i]) == 0)
            continue;
        gp_ns s, e;
        gp_trace_span(traces[i], &s, &e);
        if (!any || s < lo)
            lo = s;
        if (!any || e > hi)
            hi = e;
        any = true;
    }
    return hi - lo;
}

/* CPU thread time (self) per kind, summed over every CPU thread of every trace. */
static gp_status thread_self_time(const gp_trace *const *traces, size_t n, gp_ns *per_kind)
{
    size_t most = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < traces[i]->n_tracks; k++)
            most = GP_MAX(most, traces[i]->tracks[k].n_events);
    if (most == 0)
        return GP_OK;
    gp_ns *self = malloc(most * sizeof *self);
    if (!self)
        return GP_ENOMEM;
    gp_status st = GP_OK;
    for (size_t i = 0; i < n && st == GP_OK; i++)
        for (size_t k = 0; k < traces[i]->n_tracks && st == GP_OK; k++) {
            const gp_track *tr = &traces[i]->tracks[k];
            if (tr->kind != GP_TRACK_CPU_THREAD || tr->n_events == 0)
                continue;
            st = gp_track_self_times(tr, self);
            for (size_t e = 0; st == GP_OK && e < tr->n_events; e++) {
                gp_event_kind kind = (gp_event_kind)tr->events[e].kind;
                if (gp_event_kind_has_duration(kind) && !gp_event_kind_is_gpu(kind))
                    per_kind[kind] = gp__sat_add(per_kind[kind], self[e]);
            }
        }
    free(self);
    return st;
}

/* The GPU span split of the analysis (temporal breakdown, summed over ranks with GPU work). */
static void gpu_split(gp_dashboard *d, const gp_analysis *a)
{
    gp_ns comp = 0, non = 0, idle = 0, span = 0;
    bool any = false;
    for (size_t i = 0; a && i < a->n_ranks; i++) {
        const gp_temporal *t = &a->ranks[i].temporal;
        if (!t->valid)
            continue;
        comp = gp__sat_add(comp, t->compute);
        non = gp__sat_add(non, t->non_compute);
        idle = gp__sat_add(idle, t->idle);
        span = gp__sat_add(span, t->kernel_time);
        any = true;
    }
    if (!any)
        return;
    d->gpu_time = gp__sat_add(comp, non);
    d->gpu_busy = true;
    d->gpu_span = span;
    static const char *names[3] = {"compute", "other GPU work", "idle"};
    gp_ns v[3] = {comp, non, idle};
    double x = 0;
    for (int i = 0; i < 3; i++) {
        gp_dash_bar *b = &d->gpu_split[d->n_gpu_split++];
        b->label = names[i];
        b->kind = GP_EV_KIND_COUNT;
        b->value = (double)v[i];
        b->x = x;
        b->frac = span > 0 ? (double)v[i] / (double)span : 0;
        x += b->frac;
    }
}

/* Unique short names of the top operations: width 48 for the chart, 80 for the list. */
static gp_status short_names(gp_dashboard *d, const gp_summary *s)
{
    if (s->n_top == 0)
        return GP_OK;
    const char **names = malloc(s->n_top * sizeof *names);
    char *ops = malloc(s->n_top * GP_DASH_NAME_CAP);
    d->top_names = malloc(s->n_top * GP_DASH_NAME_CAP);
    gp_status st = names && ops && d->top_names ? GP_OK : GP_ENOMEM;
    for (size_t i = 0; st == GP_OK && i < s->n_top; i++)
        names[i] = s->top[i].name;
    if (st == GP_OK)
        st = gp_shorten_names_unique(names, s->n_top, 48, ops, GP_DASH_NAME_CAP);
    if (st == GP_OK)
        st = gp_shorten_names_unique(names, s->n_top, 80, d->top_names, GP_DASH_NAME_CAP);
    for (size_t i = 0; st == GP_OK && i < d->n_ops; i++)
        memcpy(d->op_names[i], ops + i * GP_DASH_NAME_CAP, GP_DASH_NAME_CAP);
    free(names);
    free(ops);
    return st;
}

/* The critical-path section: every valid path's classes summed (negative times as 0), and the
 * first GP_DASH_CP_BARS paths with their rank and the sum of their positive classes. */
static void critical_paths(gp_dashboard *d, const gp_analysis *a)
{
    for (size_t i = 0; a && i < a->n_ranks; i++)
        for (size_t s = 0; s < a->ranks[i].n_critical_paths; s++) {
            const gp_critical_path *p = &a->ranks[i].critical_paths[s];
            if (!p->valid)
                continue;
            d->n_cp_paths++;
            gp_ns total = 0;
            for (int k = 0; k < GP_CP_COUNT; k++) {
                gp_ns v = p->by_class[k] > 0 ? p->by_class[k] : 0;
                d->cp_sums[k] = gp__sat_add(d->cp_sums[k], v);
                total = gp__sat_add(total, v);
            }
            if (d->n_cp_bars < GP_DASH_CP_BARS) {
                d->cp_bar[d->n_cp_bars] = p;
                d->cp_rank[d->n_cp_bars] = a->ranks[i].rank;
                d->cp_total[d->n_cp_bars++] = total;
            }
        }
}

static gp_status dashboard_build(const gp_dashboard_inputs *in, gp_dashboard **out)
{
    const gp_trace *const *traces = in->traces;
    size_t n = in->n_traces;
    const gp_summary *s = in->summary;
    const gp_timeline *tl = in->timeline;
    const gp_analysis *a = in->analysis;
    gp_dashboard *d = calloc(1, sizeof *d);
    if (!d)
        return GP_ENOMEM;
    d->traces = traces;
    d->n_traces = n;
    d->summary = s;
    d->timeline = tl;
    d->analysis = a;
    d->op_table = in->op_table;
    d->compile = in->compile;
    d->n_compile = in->compile ? in->n_compile : 0;
    d->span = job_span(traces, n);
    d->gpu_time = s->gpu_time;
    for (int k = 0; k < GP_EV_KIND_COUNT; k++) {
        const gp_kind_summary *ks = &s->kinds[k];
        if (!gp_event_kind_has_duration((gp_event_kind)k))
            continue;
        d->operations += ks->calls;
        d->unique_operations += ks->n_rows;
    }
    gp_ns self[GP_EV_KIND_COUNT] = {0};
    gp_status st = thread_self_time(traces, n, self);
    if (st != GP_OK)
        goto fail;
    for (int k = 0; k < GP_EV_KIND_COUNT; k++)
        d->thread_time = gp__sat_add(d->thread_time, self[k]);
    double x = 0;
    for (int k = 0; k < GP_EV_KIND_COUNT; k++) {
        if (self[k] <= 0)
            continue;
        gp_dash_bar *b = &d->dist[d->n_dist++];
        b->label = gp_event_kind_name((gp_event_kind)k);
        b->kind = (gp_event_kind)k;
        b->value = (double)self[k];
        b->x = x;
        b->frac = (double)self[k] / (double)d->thread_time;
        x += b->frac;
    }
    /* Per-operation bars: the summary's bottleneck list (GPU kinds, or CPU kinds without GPU). */
    double max_mean = 0, max_calls = 0;
    for (size_t i = 0; i < s->n_top && d->n_ops < GP_ARRAY_LEN(d->ops); i++) {
        const gp_name_stats *r = &s->top[i];
        gp_dash_bar *b = &d->ops[d->n_ops++];
        b->label = r->name;
        b->kind = r->kind;
        b->value = r->mean;
        b->value2 = (double)r->calls;
        if (r->mean > max_mean)
            max_mean = r->mean;
        if ((double)r->calls > max_calls)
            max_calls = (double)r->calls;
    }
    for (size_t i = 0; i < d->n_ops; i++) {
        d->ops[i].frac = max_mean > 0 ? d->ops[i].value / max_mean : 0;
        d->ops[i].frac2 = max_calls > 0 ? d->ops[i].value2 / max_calls : 0;
    }
    if ((st = short_names(d, s)) != GP_OK)
        goto fail;
    gpu_split(d, a);
    critical_paths(d, a);
    if ((st = gp__dash_partitions(d, traces, n)) != GP_OK)
        goto fail;
    d->peak_memory = -1;
    const gp_peak_memory *pk = job_peak(d, a);
    st = tl && pk ? memory_chart(d, tl, pk) : GP_OK;
    if (st != GP_OK)
        goto fail;
    if ((st = gp__dash_profile(d, traces, n, s)) != GP_OK)
        goto fail;
    *out = d;
    return GP_OK;
fail:
    gp_dashboard_free(d);
    return st;
}

void gp_dashboard_free(gp_dashboard *d)
{
    if (!d)
        return;
    free(d->mem_x);
    free(d->mem_y);
    free(d->top_names);
    free(d->cpu_parts.parts);
    free(d->gpu_parts.parts);
    free(d->steps.parts);
    free(d->prof_ops);
    free(d->prof_dist.parts);
    free(d->prof_split.parts);
    free(d);
}

gp_status gp_dashboard_build(const gp_dashboard_inputs *in, gp_dashboard **out, gp_error *err)
{
    gp_status s = dashboard_build(in, out);
    if (s != GP_OK)
        gp_error_set(err, s, "%s building the dashboard of %zu trace%s", gp_strerror(s),
                     in->n_traces, in->n_traces == 1 ? "" : "s");
    return s;
}
