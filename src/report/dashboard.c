/* Dashboard model-to-view: picks the figures, charts and tables of report.html out of the
 * summary (per-name statistics), the timeline (busy figures, memory rows) and the analysis (peak
 * memory, findings), and lays the charts out as fractions. No statistics are computed here;
 * dashboard_html.c formats the result. */
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "report/report_internal.h"

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
        long b = (long)(fx * (BUCKETS - 1));
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

gp_status gp_dashboard_build(gp_trace *const *traces, size_t n, const gp_summary *s,
                             const gp_timeline *tl, const gp_analysis *a, gp_dashboard **out)
{
    gp_dashboard *d = calloc(1, sizeof *d);
    if (!d)
        return GP_ENOMEM;
    d->traces = traces;
    d->n_traces = n;
    d->summary = s;
    d->timeline = tl;
    d->analysis = a;
    d->span = s->span;
    d->gpu_time = s->gpu_time;
    gp_ns kind_sum = 0;
    for (int k = 0; k < GP_EV_KIND_COUNT; k++) {
        const gp_kind_summary *ks = &s->kinds[k];
        if (!gp_event_kind_has_duration((gp_event_kind)k))
            continue;
        d->operations += ks->calls;
        d->unique_operations += ks->n_rows;
        if (ks->total > 0)
            kind_sum += ks->total;
    }
    double x = 0;
    for (int k = 0; k < GP_EV_KIND_COUNT; k++) {
        const gp_kind_summary *ks = &s->kinds[k];
        if (!gp_event_kind_has_duration((gp_event_kind)k) || ks->total <= 0)
            continue;
        gp_dash_bar *b = &d->dist[d->n_dist++];
        b->label = gp_event_kind_name((gp_event_kind)k);
        b->kind = (gp_event_kind)k;
        b->value = (double)ks->total;
        b->x = x;
        b->frac = (double)ks->total / (double)kind_sum;
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
    gp_ns kern = s->kinds[GP_EV_KERNEL].total;
    gp_ns xfer = s->kinds[GP_EV_MEMCPY].total + s->kinds[GP_EV_MEMSET].total;
    gp_ns rt = s->kinds[GP_EV_RUNTIME].total + s->kinds[GP_EV_DRIVER].total;
    gp_ns over = rt + s->kinds[GP_EV_SYNC].total + s->kinds[GP_EV_OVERHEAD].total;
    gp_ns cpu = tl ? tl->cpu_active - rt : 0;
    if (cpu < 0)
        cpu = 0;
    static const char *stack_names[4] = {"GPU compute", "transfer", "CPU", "overhead"};
    gp_ns stack_v[4] = {kern, xfer, cpu, over};
    gp_ns stack_sum = kern + xfer + cpu + over;
    x = 0;
    for (int i = 0; i < 4; i++) {
        gp_dash_bar *b = &d->stack[i];
        b->label = stack_names[i];
        b->kind = GP_EV_KIND_COUNT;
        b->value = (double)stack_v[i];
        b->x = x;
        b->frac = stack_sum > 0 ? (double)stack_v[i] / (double)stack_sum : 0;
        x += b->frac;
    }
    d->peak_memory = -1;
    const gp_peak_memory *pk = job_peak(d, a);
    gp_status st = tl && pk ? memory_chart(d, tl, pk) : GP_OK;
    if (st != GP_OK) {
        gp_dashboard_free(d);
        return st;
    }
    *out = d;
    return GP_OK;
}

void gp_dashboard_free(gp_dashboard *d)
{
    if (!d)
        return;
    free(d->mem_x);
    free(d->mem_y);
    free(d);
}
