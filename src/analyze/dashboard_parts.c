/* The dashboard's partition charts: wall time per CPU thread (self time per kind + idle) and per
 * GPU stream (busy per kernel type + idle), and the per-ProfilerStep breakdown (TensorBoard's
 * overview categories, by priority). Every bar's segments add up to its total exactly. */
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze_internal.h"
#include "core/msort.h"
#include "core/ivls.h"
#include "core/util.h"

enum { MAX_BARS = 16, MAX_STEPS = 64 };
_Static_assert((int)GP_SP_COUNT <= (int)GP_DASH_SEGS, "a step bar holds every step part");

static int part_busy_cmp(const void *x, const void *y)
{
    const gp_dash_part *p = x, *q = y;
    gp_ns a = p->total - p->seg[GP_DASH_SEGS - 1], b = q->total - q->seg[GP_DASH_SEGS - 1];
    return a > b ? -1 : a < b;
}

/* Keeps the MAX_BARS busiest bars (idle is kept in the last segment while sorting), then moves
 * idle to the chart's idle index. */
static void keep_busiest(gp_dash_chart *c, int idle_at)
{
    if (c->n_parts > 1)
        gp__msort(c->parts, c->n_parts, sizeof *c->parts, part_busy_cmp);
    if (c->n_parts > MAX_BARS) {
        c->n_more = c->n_parts - MAX_BARS;
        c->n_parts = MAX_BARS;
    }
    for (size_t i = 0; i < c->n_parts; i++) {
        gp_ns idle = c->parts[i].seg[GP_DASH_SEGS - 1];
        c->parts[i].seg[GP_DASH_SEGS - 1] = 0;
        c->parts[i].seg[idle_at] = idle;
    }
}

static gp_dash_part *new_part(gp_dash_chart *c, size_t *cap, const gp_trace *t, gp_ns wall)
{
    gp_dash_part *p = GP_PUSH(c->parts, c->n_parts, *cap);
    if (p) {
        memset(p, 0, sizeof *p);
        p->rank = t->rank;
        p->total = wall;
    }
    return p;
}

/* The name of the events of a thread that holds only the profiler's overhead (CUPTI's "Buffer
 * Flush": Kineto writes them on a thread of their own), or NULL for a thread with other work. */
static const char *overhead_only(const gp_trace *t, const gp_track *tr)
{
    const char *name = NULL;
    for (size_t i = 0; i < tr->n_events; i++) {
        if (tr->events[i].kind != GP_EV_OVERHEAD)
            return NULL;
        if (!name)
            name = gp_trace_str(t, tr->events[i].name);
    }
    return name;
}

/* Label of a track: thread name metadata, else its id (with the rank in a job); a thread of the
 * profiler's overhead alone says so ("profiler's own thread: Buffer Flush"). */
static void track_label(const gp_trace *t, const gp_track *tr, size_t n, char *out, size_t cap)
{
    char base[100];
    const char *nm = gp_trace_str(t, tr->name), *ovh = NULL;
    if (tr->kind == GP_TRACK_GPU_STREAM)
        snprintf(base, sizeof base, "GPU %d stream %lld", (int)tr->device, (long long)tr->stream);
    else if ((ovh = overhead_only(t, tr)) != NULL)
        snprintf(base, sizeof base, "profiler's own thread: %.70s", *ovh ? ovh : "overhead");
    else if (*nm)
        snprintf(base, sizeof base, "%.99s", nm);
    else
        snprintf(base, sizeof base, "thread %lld", (long long)tr->tid);
    if (n > 1)
        snprintf(out, cap, "rank %d: %s", (int)t->rank, base);
    else
        snprintf(out, cap, "%s", base);
}

/* Kernel types by name of one trace: each distinct name is classified once (classifying every
 * event matched the regular expressions per event: 35 s for a report of 300,000 kernels). */
typedef struct kt_names {
    const gp__classifier *c;
    const gp_trace *t;
    uint8_t *type; /* per string id; 0xff: not classified yet */
} kt_names;

static gp_status kt_open(kt_names *k, const gp__classifier *c, const gp_trace *t)
{
    size_t n = gp_trace_str_count(t) + 1;
    k->c = c;
    k->t = t;
    k->type = malloc(n);
    if (!k->type)
        return GP_ENOMEM;
    memset(k->type, 0xff, n);
    return GP_OK;
}

static gp_kernel_type kt_of(kt_names *k, const gp_event *e)
{
    uint8_t *slot = &k->type[e->name];
    if (*slot == 0xff)
        *slot = (uint8_t)gp__classify(k->c, gp_trace_str(k->t, e->name), (gp_event_kind)e->kind);
    return (gp_kernel_type)*slot;
}

/* The union of a GPU stream's work, each instant attributed to the first event covering it
 * (events sorted by start): busy per kernel type. */
static void stream_busy(kt_names *kt, const gp_track *tr, gp_ns *seg)
{
    gp_ns cover = INT64_MIN;
    for (size_t i = 0; i < tr->n_events; i++) {
        const gp_event *e = &tr->events[i];
        if (!gp_event_kind_is_gpu_work((gp_event_kind)e->kind))
            continue;
        gp_ns s = GP_MAX(e->ts, cover), end = e->ts + e->dur;
        if (end <= s)
            continue;
        gp_kernel_type ty = kt_of(kt, e);
        seg[ty == GP_KT_OTHER ? GP_KT_COMPUTATION : ty] += end - s;
        cover = end;
    }
}

/* Wall-time partitions of every CPU thread and GPU stream of the job (wall: the job's span). */
static gp_status thread_stream_parts(gp_dashboard *d, const gp_trace *const *traces, size_t n,
                                     kt_names *kts)
{
    size_t most = 0, cap_c = 0, cap_g = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < traces[i]->n_tracks; k++)
            most = GP_MAX(most, traces[i]->tracks[k].n_events);
    gp_ns *self = malloc((most ? most : 1) * sizeof *self);
    if (!self)
        return GP_ENOMEM;
    gp_status st = GP_OK;
    for (size_t i = 0; i < n && st == GP_OK; i++) {
        const gp_trace *t = traces[i];
        for (size_t k = 0; k < t->n_tracks && st == GP_OK; k++) {
            const gp_track *tr = &t->tracks[k];
            bool cpu = tr->kind == GP_TRACK_CPU_THREAD, gpu = tr->kind == GP_TRACK_GPU_STREAM;
            if ((!cpu && !gpu) || tr->n_events == 0)
                continue;
            gp_dash_part *p = cpu ? new_part(&d->cpu_parts, &cap_c, t, d->span)
                                  : new_part(&d->gpu_parts, &cap_g, t, d->span);
            if (!p) {
                st = GP_ENOMEM;
                break;
            }
            track_label(t, tr, n, p->label, sizeof p->label);
            if (gpu) {
                stream_busy(&kts[i], tr, p->seg);
            } else if ((st = gp_track_self_times(tr, self)) == GP_OK) {
                for (size_t e = 0; e < tr->n_events; e++) {
                    gp_event_kind kind = (gp_event_kind)tr->events[e].kind;
                    if (gp_event_kind_has_duration(kind) && !gp_event_kind_is_gpu(kind))
                        p->seg[kind] = gp__sat_add(p->seg[kind], self[e]);
                }
            }
            gp_ns busy = 0;
            for (int s = 0; s < GP_DASH_SEGS - 1; s++)
                busy = gp__sat_add(busy, p->seg[s]);
            p->seg[GP_DASH_SEGS - 1] = GP_MAX(0, d->span - busy);
            p->total = busy + p->seg[GP_DASH_SEGS - 1];
        }
    }
    free(self);
    if (st != GP_OK)
        return st;
    keep_busiest(&d->cpu_parts, GP_EV_KIND_COUNT);
    keep_busiest(&d->gpu_parts, GP_KT_COUNT);
    for (int k = 0; k < GP_EV_KIND_COUNT; k++)
        if (gp_event_kind_has_duration((gp_event_kind)k) && !gp_event_kind_is_gpu((gp_event_kind)k))
            d->cpu_parts.seg_names[k] = gp_event_kind_name((gp_event_kind)k);
    d->cpu_parts.seg_names[GP_EV_KIND_COUNT] = "idle";
    static const char *const gpu_names[] = {"computation", "communication", "memory", "idle"};
    for (int k = 0; k <= GP_KT_COUNT; k++)
        d->gpu_parts.seg_names[k] = k == GP_KT_OTHER ? NULL : gpu_names[k < GP_KT_OTHER ? k : 3];
    return GP_OK;
}

/* ---- per-step breakdown --------------------------------------------------------------------- */

/* The dashboard's Steps bar: one bar per ProfilerStep, split by gp__step_split_run (the analyses'
 * step breakdown, docs/analyses.md "Step breakdown"); the segments are gp_step_part's. */
static gp_status rank_steps(gp_dashboard *d, const gp_trace *t, const gp__classifier *c,
                            size_t *cap)
{
    gp__step *steps = NULL;
    size_t n = 0;
    gp_status st = gp__profiler_steps(t, &steps, &n);
    if (st != GP_OK || n == 0)
        return st;
    gp__step_split sp;
    if ((st = gp__step_split_init(&sp, t, c, NULL, 0)) != GP_OK) {
        free(steps);
        return st;
    }
    for (size_t i = 0; i < n; i++) {
        if (d->steps.n_parts >= MAX_STEPS) {
            d->steps.n_more++;
            continue;
        }
        gp_dash_part *p = new_part(&d->steps, cap, t, steps[i].end - steps[i].ts);
        if (!p) {
            st = GP_ENOMEM;
            break;
        }
        /* named by its number, as the trace and the critical path name it */
        if (d->n_traces > 1)
            snprintf(p->label, sizeof p->label, "rank %d ProfilerStep#%lld", (int)t->rank,
                     (long long)steps[i].num);
        else
            snprintf(p->label, sizeof p->label, "ProfilerStep#%lld", (long long)steps[i].num);
        gp_ns part[GP_SP_COUNT];
        gp__step_split_run(&sp, steps[i].ts, steps[i].end, part);
        for (int k = 0; k < GP_SP_COUNT; k++)
            p->seg[k] = part[k];
    }
    gp__step_split_free(&sp);
    free(steps);
    return st;
}

gp_status gp__dash_partitions(gp_dashboard *d, const gp_trace *const *traces, size_t n)
{
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    gp__classifier *c = NULL;
    kt_names *kts = calloc(n ? n : 1, sizeof *kts);
    gp_status st = kts ? gp__classifier_new(&o, &c, NULL) : GP_ENOMEM;
    for (size_t i = 0; i < n && st == GP_OK; i++)
        st = kt_open(&kts[i], c, traces[i]);
    if (st == GP_OK)
        st = thread_stream_parts(d, traces, n, kts);
    size_t cap = 0;
    for (size_t i = 0; i < n && st == GP_OK; i++)
        st = rank_steps(d, traces[i], c, &cap);
    static const char *const step_names[GP_SP_COUNT] = {"kernel",        "memcpy",  "memset",
                                                        "communication", "runtime", "dataloader",
                                                        "CPU exec",      "other"};
    for (int k = 0; k < GP_SP_COUNT; k++)
        d->steps.seg_names[k] = step_names[k];
    for (size_t i = 0; kts && i < n; i++)
        free(kts[i].type);
    free(kts);
    gp__classifier_free(c);
    return st;
}
