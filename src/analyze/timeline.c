/* Timeline model-to-view: orders the rows (per rank: CPU threads, GPU streams, other rows,
 * counters, memory), computes every event's nesting depth, gathers counter and memory samples,
 * and the CPU/GPU busy figures. timeline_html.c only formats the result. */
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze_internal.h"
#include "analyze/timeline_internal.h"
#include "core/msort.h"
#include "core/imap.h"
#include "core/util.h"
#include "gpuprof/analyze.h"
#include "gpuprof/report.h"
#include "gpuprof/summary.h"

void gp_timeline_opts_init(gp_timeline_opts *o)
{
    o->max_depth = -1;
    o->cpu_rows = true;
    o->counter_rows = true;
    o->analysis = NULL;
    o->critical_path = false;
}

typedef struct order {
    uint32_t track;
    int cls; /* 0 GPU, 1 CPU, 2 other: GPU streams come first */
    int64_t k1, k2;
} order;

static int order_cmp(const void *x, const void *y)
{
    const order *p = x, *q = y;
    if (p->cls != q->cls)
        return p->cls - q->cls;
    if (p->k1 != q->k1)
        return p->k1 < q->k1 ? -1 : 1;
    if (p->k2 != q->k2)
        return p->k2 < q->k2 ? -1 : 1;
    return p->track < q->track ? -1 : p->track > q->track;
}

/* Nesting depth of every event of a track (sorted by ts, longer first) with an end-time stack;
 * 255 marks events not drawn (memory instants) and events past max_depth. With Python frames in
 * the track, a second stack gives the depth of the other events when the frames are hidden. */
static gp_status layout_depths(const gp_track *tr, int max_depth, gp_tl_row *row)
{
    size_t n = tr->n_events ? tr->n_events : 1;
    for (size_t i = 0; i < tr->n_events && !row->has_python; i++)
        row->has_python = tr->events[i].kind == GP_EV_PYTHON;
    row->depth = malloc(n);
    row->depth_nopy = row->has_python ? malloc(n) : NULL;
    gp_ns *ends = malloc(2 * 256 * sizeof *ends), *ends2 = ends + 256;
    if (!row->depth || !ends || (row->has_python && !row->depth_nopy)) {
        free(ends);
        return GP_ENOMEM;
    }
    size_t ns = 0, ns2 = 0;
    for (size_t i = 0; i < tr->n_events; i++) {
        const gp_event *e = &tr->events[i];
        if (e->kind == GP_EV_MEMORY || e->kind == GP_EV_COUNTER) {
            row->depth[i] = 255;
            if (row->depth_nopy)
                row->depth_nopy[i] = 255;
            continue;
        }
        while (ns > 0 && ends[ns - 1] <= e->ts)
            ns--;
        size_t d = ns;
        bool drawn = d < 254 && (max_depth < 0 || (int)d <= max_depth);
        row->depth[i] = drawn ? (uint8_t)d : 255;
        if (drawn) {
            row->max_depth = (uint8_t)GP_MAX(row->max_depth, d);
            row->n_drawn++;
            if (e->kind != GP_EV_MEMORY && !(e->flags & GP_EVF_INSTANT))
                row->n_spans++;
        }
        if (ns < 254)
            ends[ns++] = e->ts + e->dur;
        if (!row->depth_nopy)
            continue;
        row->depth_nopy[i] = 255;
        if (e->kind == GP_EV_PYTHON)
            continue;
        while (ns2 > 0 && ends2[ns2 - 1] <= e->ts)
            ns2--;
        size_t d2 = ns2;
        if (d2 < 254 && (max_depth < 0 || (int)d2 <= max_depth)) {
            row->depth_nopy[i] = (uint8_t)d2;
            row->max_depth_nopy = (uint8_t)GP_MAX(row->max_depth_nopy, d2);
        }
        if (ns2 < 254)
            ends2[ns2++] = e->ts + e->dur;
    }
    free(ends);
    return GP_OK;
}

/* The row's label: the thread_name metadata, else the thread id with the process name. */
static void row_label(const gp_trace *t, const gp_track *tr, int cls, char *out, size_t cap)
{
    const char *nm = gp_trace_str(t, tr->name), *proc = gp_trace_str(t, tr->process_name);
    if (cls == 0)
        snprintf(out, cap, "GPU %d stream %lld", (int)tr->device, (long long)tr->stream);
    else if (*nm)
        snprintf(out, cap, "%s", nm);
    else if (tr->tid_is_str)
        snprintf(out, cap, "%s", gp_trace_str(t, tr->tid_str));
    else if (*proc)
        snprintf(out, cap, "thread %lld (%.80s)", (long long)tr->tid, proc);
    else
        snprintf(out, cap, "thread %lld", (long long)tr->tid);
}

static gp_tl_row *new_row(gp_timeline *tl, size_t *cap)
{
    return GP_PUSH(tl->rows, tl->n_rows, *cap);
}

static gp_status add_counter_rows(gp_timeline *tl, size_t *cap, uint32_t ti)
{
    const gp_trace *t = tl->traces[ti];
    /* Counters are sorted by (track, ts): one row per (track, series), samples in order. */
    gp__imap idx;
    gp_status s = gp__imap_init(&idx, 16);
    if (s != GP_OK)
        return s;
    for (size_t i = 0; i < t->n_counters; i++) {
        const gp_counter_sample *c = &t->counters[i];
        int64_t key = (int64_t)(((uint64_t)c->track << 32) | c->series);
        uint64_t v;
        gp_tl_row *row;
        if (gp__imap_get(&idx, key, &v)) {
            row = &tl->rows[v];
        } else {
            if (!(row = new_row(tl, cap))) {
                s = GP_ENOMEM;
                break;
            }
            row->kind = GP_TL_COUNTER;
            row->rank = t->rank;
            row->trace = ti;
            row->track = c->track;
            row->series = c->series;
            snprintf(row->label, sizeof row->label, "%s", gp_trace_str(t, c->series));
            if ((s = gp__imap_put(&idx, key, tl->n_rows - 1)) != GP_OK)
                break;
        }
        size_t ns = row->n_samples; /* capacity 4, 8, 16, ...: a counter of one sample took
                                     * 16 KB, 200,000 of them 1.69 GB (issue 38) */
        if (ns == 0 || (ns >= 4 && (ns & (ns - 1)) == 0)) {
            size_t nc = ns == 0 ? 4 : 2 * ns;
            gp_ns *a = realloc(row->sample_ts, nc * sizeof *a);
            if (a)
                row->sample_ts = a;
            double *b = realloc(row->sample_val, nc * sizeof *b);
            if (b)
                row->sample_val = b;
            if (!a || !b) {
                s = GP_ENOMEM;
                break;
            }
        }
        row->sample_ts[row->n_samples] = c->ts;
        row->sample_val[row->n_samples++] = c->value;
        row->n_drawn++;
        tl->n_events++;
    }
    gp__imap_free(&idx);
    return s;
}

typedef struct mem_pt {
    gp_ns ts;
    double v;
    int32_t type, id; /* the device: any int32 values a trace holds */
} mem_pt;

/* By device (type, then id), then time. */
static int mem_cmp(const void *x, const void *y)
{
    const mem_pt *p = x, *q = y;
    GP_CMP_KEY(p->type, q->type);
    GP_CMP_KEY(p->id, q->id);
    return GP_CMP(p->ts, q->ts);
}

static gp_status add_memory_rows(gp_timeline *tl, size_t *cap, uint32_t ti)
{
    const gp_trace *t = tl->traces[ti];
    mem_pt *pts = NULL;
    size_t n = 0, c = 0;
    for (size_t i = 0; i < t->n_tracks; i++) {
        const gp_track *tr = &t->tracks[i];
        for (size_t j = 0; j < tr->n_events; j++) {
            const gp_mem_info *mi = gp_event_mem_info(t, &tr->events[j]);
            if (tr->events[j].kind != GP_EV_MEMORY || !mi || mi->total_allocated < 0)
                continue;
            mem_pt *p = GP_PUSH(pts, n, c);
            if (!p) {
                free(pts);
                return GP_ENOMEM;
            }
            p->ts = tr->events[j].ts;
            p->v = (double)mi->total_allocated;
            p->type = mi->device_type;
            p->id = mi->device_id;
        }
    }
    if (n > 1)
        gp__msort(pts, n, sizeof *pts, mem_cmp);
    gp_status s = GP_OK;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && pts[j].type == pts[i].type && pts[j].id == pts[i].id)
            j++;
        gp_tl_row *row = new_row(tl, cap);
        if (!row) {
            s = GP_ENOMEM;
            break;
        }
        row->kind = GP_TL_MEMORY;
        row->rank = t->rank;
        row->trace = ti;
        row->track = UINT32_MAX;
        row->device_type = pts[i].type;
        row->device_id = pts[i].id;
        int32_t dt = pts[i].type, di = pts[i].id;
        const char *dn = dt == 0 ? "CPU" : dt == 1 ? "GPU" : "device";
        if (di < 0) /* the host allocator has no device index (-1) */
            snprintf(row->label, sizeof row->label, "memory allocated (%s)", dn);
        else
            snprintf(row->label, sizeof row->label, "memory allocated (%s %d)", dn, di);
        row->sample_ts = malloc((j - i) * sizeof *row->sample_ts);
        row->sample_val = malloc((j - i) * sizeof *row->sample_val);
        if (!row->sample_ts || !row->sample_val) {
            s = GP_ENOMEM;
            break;
        }
        for (size_t k = i; k < j; k++) {
            row->sample_ts[k - i] = pts[k].ts;
            row->sample_val[k - i] = pts[k].v;
        }
        row->n_samples = row->n_drawn = j - i;
        tl->n_events += j - i;
        i = j;
    }
    free(pts);
    return s;
}

static gp_status timeline_build(const gp_trace *const *traces, size_t n,
                                const gp_timeline_opts *opts, gp_timeline **out)
{
    gp_timeline_opts defaults;
    if (!opts) {
        gp_timeline_opts_init(&defaults);
        opts = &defaults;
    }
    gp_timeline *tl = calloc(1, sizeof *tl);
    if (!tl)
        return GP_ENOMEM;
    tl->traces = traces;
    tl->n_traces = n;
    size_t cap = 0;
    gp_status s = GP_OK;
    bool any = false;
    order *ord = NULL;
    for (size_t ti = 0; ti < n && s == GP_OK; ti++) {
        const gp_trace *t = traces[ti];
        gp_ns a, b;
        gp_trace_span(t, &a, &b);
        if (gp_trace_event_count(t) > 0) {
            if (!any || a < tl->start)
                tl->start = a;
            if (!any || b > tl->end)
                tl->end = b;
            any = true;
        }
        for (size_t i = 0; i < t->n_counters; i++) {
            gp_ns ts = t->counters[i].ts;
            if (!any || ts < tl->start)
                tl->start = ts;
            if (!any || ts > tl->end)
                tl->end = ts;
            any = true;
        }
        free(ord);
        ord = malloc((t->n_tracks ? t->n_tracks : 1) * sizeof *ord);
        if (!ord) {
            s = GP_ENOMEM;
            break;
        }
        size_t no = 0;
        for (size_t i = 0; i < t->n_tracks; i++) {
            const gp_track *tr = &t->tracks[i];
            if (tr->kind == GP_TRACK_COUNTER || tr->n_events == 0)
                continue;
            order *o = &ord[no++];
            o->track = (uint32_t)i;
            o->cls = tr->kind == GP_TRACK_GPU_STREAM ? 0 : tr->kind == GP_TRACK_CPU_THREAD ? 1 : 2;
            o->k1 = o->cls == 0 ? tr->device : tr->pid;
            o->k2 = o->cls == 0 ? tr->stream : tr->sort_index;
        }
        if (no > 1)
            gp__msort(ord, no, sizeof *ord, order_cmp);
        for (size_t k = 0; k < no; k++) {
            const gp_track *tr = &t->tracks[ord[k].track];
            if (ord[k].cls == 1 && !opts->cpu_rows)
                continue;
            gp_tl_row *row = new_row(tl, &cap);
            if (!row) {
                s = GP_ENOMEM;
                break;
            }
            row->kind = ord[k].cls == 0 ? GP_TL_GPU : ord[k].cls == 1 ? GP_TL_CPU : GP_TL_OTHER;
            row->rank = t->rank;
            row->trace = (uint32_t)ti;
            row->track = ord[k].track;
            row_label(t, tr, ord[k].cls, row->label, sizeof row->label);
            if ((s = layout_depths(tr, opts->max_depth, row)) != GP_OK)
                break;
            /* A row of instant markers only ("Iteration Start", "Record Window End") or of memory
             * instants only (the memory row shows them) is left out. */
            if (row->n_spans == 0) {
                free(row->depth);
                free(row->depth_nopy);
                memset(row, 0, sizeof *row);
                tl->n_rows--;
                continue;
            }
            tl->n_events += row->n_drawn;
        }
        if (s == GP_OK && opts->counter_rows)
            s = add_counter_rows(tl, &cap, (uint32_t)ti);
        if (s == GP_OK && opts->counter_rows)
            s = add_memory_rows(tl, &cap, (uint32_t)ti);
    }
    free(ord);
    /* Busy figures are the analysis' activity figures (docs/analyses.md): the caller's analysis,
     * else the activity analysis alone (the timeline computes no statistics of its own). */
    const gp_analysis *an = opts->analysis;
    if (s == GP_OK && an) {
        tl->busy_from_analysis = true;
        for (size_t r = 0; r < an->n_ranks; r++) {
            const gp_activity *a = &an->ranks[r].activity;
            tl->cpu_active = gp__sat_add(tl->cpu_active, a->cpu_active);
            tl->gpu_active = gp__sat_add(tl->gpu_active, a->gpu_active);
            tl->overlap = gp__sat_add(tl->overlap, a->overlap);
        }
    } else if (s == GP_OK) {
        gp_activity sum;
        if (gp__activity_sum(traces, n, &sum) == GP_OK) {
            tl->busy_from_analysis = true;
            tl->cpu_active = sum.cpu_active;
            tl->gpu_active = sum.gpu_active;
            tl->overlap = sum.overlap;
        }
    }
    if (s == GP_OK && opts->critical_path)
        s = gp__timeline_critical_path(tl);
    if (s == GP_OK && n > 1)
        s = gp__timeline_collectives(tl);
    if (s != GP_OK) {
        gp_timeline_free(tl);
        return s;
    }
    *out = tl;
    return GP_OK;
}

void gp_timeline_free(gp_timeline *tl)
{
    if (!tl)
        return;
    for (size_t i = 0; i < tl->n_rows; i++) {
        free(tl->rows[i].depth);
        free(tl->rows[i].depth_nopy);
        free(tl->rows[i].sample_ts);
        free(tl->rows[i].sample_val);
        free(tl->rows[i].on_path);
        free(tl->rows[i].coll);
    }
    free(tl->rows);
    free(tl->cp_ranks);
    free(tl->cp_links);
    free(tl->colls);
    free(tl);
}

gp_status gp_timeline_build(const gp_trace *const *traces, size_t n, const gp_timeline_opts *opts,
                            gp_timeline **out, gp_error *err)
{
    gp_status s = timeline_build(traces, n, opts, out);
    if (s != GP_OK)
        gp_error_set(err, s, "%s laying out the timeline of %zu trace%s", gp_strerror(s), n,
                     n == 1 ? "" : "s");
    return s;
}
