/* Compiled regions of a Kineto trace (gpuprof/compile.h): which CPU time ran inside
 * "Torch-Compiled Region: F/C" ops and which GPU work they launched, against the eager ops around
 * them; and the speedups between two traces. A GPU event belongs to a region when its launch
 * (the runtime/driver call with the same correlation id) starts inside the region on the same
 * thread. Prints nothing. docs/compile.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprof/compile.h"
#include "core/imap.h"
#include "core/msort.h"
#include "core/util.h"

static const char region_prefix[] = "Torch-Compiled Region: ";
static const char graph_prefix[] = "## Call CompiledFxGraph ";
static const char guard_name[] = "TorchDynamo Cache Lookup";

/* A region call on a CPU track. */
typedef struct span {
    uint32_t track;
    gp_ns ts, end;
    uint32_t region; /* index into the result's regions */
} span;

static int cmp_span(const span *a, const span *b)
{
    int c = GP_CMP(a->track, b->track);
    return c ? c : GP_CMP(a->ts, b->ts);
}
GP__DEFINE_MERGE_SORT(sort_spans, span, cmp_span)

typedef struct ctx {
    const gp_trace *t;
    gp_compile_trace *out;
    size_t cap_regions;
    span *spans;
    size_t n_spans, cap_spans;
} ctx;

static bool starts_with(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static uint32_t region_index(ctx *c, const char *name)
{
    gp_compile_trace *o = c->out;
    for (size_t i = 0; i < o->n_regions; i++)
        if (strcmp(o->regions[i].name, name) == 0)
            return (uint32_t)i;
    if (gp__grow((void **)&o->regions, &c->cap_regions, sizeof *o->regions, o->n_regions + 1) !=
        GP_OK)
        return UINT32_MAX;
    gp_compile_region *r = &o->regions[o->n_regions];
    memset(r, 0, sizeof *r);
    r->name = name;
    r->graph = "";
    return (uint32_t)o->n_regions++;
}

/* The graph hash of the first CompiledFxGraph annotation inside [ts, end) on track tr. */
static char *graph_in(const gp_trace *t, const gp_track *tr, size_t from, gp_ns end)
{
    for (size_t i = from; i < tr->n_events && tr->events[i].ts < end; i++) {
        const gp_event *e = &tr->events[i];
        const char *n = gp_trace_str(t, e->name);
        if (e->kind != GP_EV_USER_ANNOTATION || !starts_with(n, graph_prefix))
            continue;
        const char *h = n + strlen(graph_prefix);
        const char *he = strstr(h, " ##");
        size_t len = he ? (size_t)(he - h) : strlen(h);
        char *s = malloc(len + 1);
        if (s) {
            memcpy(s, h, len);
            s[len] = '\0';
        }
        return s;
    }
    return NULL;
}

/* CPU tracks: regions, their calls, and the outermost ops inside / outside them. */
static gp_status scan_cpu(ctx *c)
{
    const gp_trace *t = c->t;
    gp_compile_trace *o = c->out;
    for (size_t k = 0; k < t->n_tracks; k++) {
        const gp_track *tr = &t->tracks[k];
        if (tr->kind != GP_TRACK_CPU_THREAD)
            continue;
        gp_ns outer_end = INT64_MIN;
        for (size_t i = 0; i < tr->n_events; i++) {
            const gp_event *e = &tr->events[i];
            if (e->kind != GP_EV_CPU_OP)
                continue;
            const char *n = gp_trace_str(t, e->name);
            bool region = starts_with(n, region_prefix);
            if (e->ts >= outer_end) {
                gp_ns *sum = region                       ? &o->cpu_compiled
                             : strcmp(n, guard_name) == 0 ? &o->cpu_guard
                                                          : &o->cpu_eager;
                *sum = gp__sat_add(*sum, e->dur);
                outer_end = e->ts + e->dur;
            }
            if (!region)
                continue;
            uint32_t ri = region_index(c, n + strlen(region_prefix));
            if (ri == UINT32_MAX || gp__grow((void **)&c->spans, &c->cap_spans, sizeof *c->spans,
                                             c->n_spans + 1) != GP_OK)
                return GP_ENOMEM;
            c->spans[c->n_spans++] = (span){(uint32_t)k, e->ts, e->ts + e->dur, ri};
            gp_compile_region *r = &o->regions[ri];
            r->calls++;
            r->cpu_time = gp__sat_add(r->cpu_time, e->dur);
            if (!r->graph[0]) {
                char *g = graph_in(t, tr, i, e->ts + e->dur);
                if (g)
                    r->graph = g;
            }
        }
    }
    return sort_spans(c->spans, c->n_spans) ? GP_OK : GP_ENOMEM;
}

/* The region whose call contains time x on track k (the innermost), or UINT32_MAX. */
static uint32_t region_at(const ctx *c, uint32_t k, gp_ns x)
{
    size_t lo = 0, hi = c->n_spans;
    while (lo < hi) { /* first span after (k, x) */
        size_t m = lo + (hi - lo) / 2;
        const span *s = &c->spans[m];
        if (s->track < k || (s->track == k && s->ts <= x))
            lo = m + 1;
        else
            hi = m;
    }
    for (size_t i = lo, steps = 0; i > 0 && steps < 64; i--, steps++) {
        const span *s = &c->spans[i - 1];
        if (s->track != k)
            break;
        if (x < s->end)
            return s->region;
    }
    return UINT32_MAX;
}

static bool is_gpu_work(const gp_event *e)
{
    return gp_event_kind_is_gpu_work((gp_event_kind)e->kind);
}

/* Launches: each runtime/driver call that has GPU work is counted inside its region or eager;
 * launch_of maps its correlation to the region + 1 (0: eager). */
static gp_status scan_launches(ctx *c, const gp__imap *gpu, gp__imap *launch_of)
{
    const gp_trace *t = c->t;
    gp_compile_trace *o = c->out;
    for (size_t k = 0; k < t->n_tracks; k++) {
        const gp_track *tr = &t->tracks[k];
        if (tr->kind == GP_TRACK_GPU_STREAM)
            continue;
        for (size_t i = 0; i < tr->n_events; i++) {
            const gp_event *e = &tr->events[i];
            uint64_t v;
            if ((e->kind != GP_EV_RUNTIME && e->kind != GP_EV_DRIVER) || !e->correlation ||
                !gp__imap_get(gpu, e->correlation, &v))
                continue;
            uint32_t ri = region_at(c, (uint32_t)k, e->ts);
            if (ri == UINT32_MAX) {
                o->launches_eager++;
                o->launch_eager = gp__sat_add(o->launch_eager, e->dur);
            } else {
                o->launches_compiled++;
                o->launch_compiled = gp__sat_add(o->launch_compiled, e->dur);
                o->regions[ri].launches++;
                o->regions[ri].launch_time = gp__sat_add(o->regions[ri].launch_time, e->dur);
            }
            if (gp__imap_put(launch_of, e->correlation, ri == UINT32_MAX ? 0 : (uint64_t)ri + 1) !=
                GP_OK)
                return GP_ENOMEM;
        }
    }
    return GP_OK;
}

static void scan_gpu(ctx *c, const gp__imap *launch_of)
{
    const gp_trace *t = c->t;
    gp_compile_trace *o = c->out;
    for (size_t k = 0; k < t->n_tracks; k++) {
        const gp_track *tr = &t->tracks[k];
        for (size_t i = 0; i < tr->n_events; i++) {
            const gp_event *e = &tr->events[i];
            if (!is_gpu_work(e))
                continue;
            uint64_t v;
            bool kernel = e->kind == GP_EV_KERNEL;
            if (!e->correlation || !gp__imap_get(launch_of, e->correlation, &v)) {
                o->gpu_unlinked = gp__sat_add(o->gpu_unlinked, e->dur);
            } else if (v == 0) {
                o->gpu_eager = gp__sat_add(o->gpu_eager, e->dur);
                o->kernels_eager += kernel;
            } else {
                gp_compile_region *r = &o->regions[v - 1];
                o->gpu_compiled = gp__sat_add(o->gpu_compiled, e->dur);
                o->kernels_compiled += kernel;
                r->gpu_time = gp__sat_add(r->gpu_time, e->dur);
                r->kernels += kernel;
                r->triton_kernels += kernel && starts_with(gp_trace_str(t, e->name), "triton_");
            }
        }
    }
}

static int cmp_region(const gp_compile_region *a, const gp_compile_region *b)
{
    int c = GP_CMP(b->gpu_time, a->gpu_time);
    if (!c)
        c = GP_CMP(b->cpu_time, a->cpu_time);
    return c ? c : strcmp(a->name, b->name);
}
GP__DEFINE_MERGE_SORT(sort_regions, gp_compile_region, cmp_region)

static void span_of(const gp_trace *t, gp_ns *out)
{
    gp_ns lo = INT64_MAX, hi = INT64_MIN;
    for (size_t k = 0; k < t->n_tracks; k++) {
        const gp_track *tr = &t->tracks[k];
        for (size_t i = 0; i < tr->n_events; i++) {
            const gp_event *e = &tr->events[i];
            lo = GP_MIN(lo, e->ts);
            hi = GP_MAX(hi, e->ts + e->dur);
        }
    }
    *out = hi > lo ? hi - lo : 0;
}

gp_status gp_compile_trace_analyze(const gp_trace *t, gp_compile_trace **out)
{
    ctx c = {.t = t};
    c.out = calloc(1, sizeof *c.out);
    gp__imap gpu = {0}, launch_of = {0};
    gp_status st = c.out ? GP_OK : GP_ENOMEM;
    if (st == GP_OK) {
        c.out->source = gp_trace_str(t, t->source);
        span_of(t, &c.out->span);
        st = scan_cpu(&c);
    }
    if (st == GP_OK && (st = gp__imap_init(&gpu, 1024)) == GP_OK)
        st = gp__imap_init(&launch_of, 1024);
    for (size_t k = 0; st == GP_OK && k < t->n_tracks; k++)
        for (size_t i = 0; st == GP_OK && i < t->tracks[k].n_events; i++) {
            const gp_event *e = &t->tracks[k].events[i];
            if (is_gpu_work(e) && e->correlation)
                st = gp__imap_put(&gpu, e->correlation, 1);
        }
    if (st == GP_OK)
        st = scan_launches(&c, &gpu, &launch_of);
    if (st == GP_OK) {
        scan_gpu(&c, &launch_of);
        if (!sort_regions(c.out->regions, c.out->n_regions))
            st = GP_ENOMEM;
    }
    gp__imap_free(&gpu);
    gp__imap_free(&launch_of);
    free(c.spans);
    if (st != GP_OK) {
        gp_compile_trace_free(c.out);
        return GP_ENOMEM;
    }
    *out = c.out;
    return GP_OK;
}

void gp_compile_trace_free(gp_compile_trace *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n_regions; i++)
        if (t->regions[i].graph[0])
            free((void *)t->regions[i].graph);
    free(t->regions);
    free(t);
}

static double ratio(gp_ns base, gp_ns cur)
{
    return base > 0 && cur > 0 ? (double)base / (double)cur : 0;
}

gp_status gp_compile_speedup_compute(const gp_compile_trace *base, const gp_compile_trace *cur,
                                     gp_compile_speedup **out)
{
    gp_compile_speedup *s = calloc(1, sizeof *s);
    size_t cap = base->n_regions + cur->n_regions;
    if (!s || (cap && !(s->pairs = calloc(cap, sizeof *s->pairs)))) {
        free(s);
        return GP_ENOMEM;
    }
    s->span_speedup = ratio(base->span, cur->span);
    s->gpu_speedup = ratio(base->gpu_compiled + base->gpu_eager + base->gpu_unlinked,
                           cur->gpu_compiled + cur->gpu_eager + cur->gpu_unlinked);
    s->cpu_speedup = ratio(base->cpu_compiled + base->cpu_eager + base->cpu_guard,
                           cur->cpu_compiled + cur->cpu_eager + cur->cpu_guard);
    for (size_t i = 0; i < cur->n_regions; i++)
        s->pairs[s->n_pairs++] =
            (gp_compile_region_pair){cur->regions[i].name, NULL, &cur->regions[i], 0, 0};
    for (size_t i = 0; i < base->n_regions; i++) {
        const gp_compile_region *b = &base->regions[i];
        gp_compile_region_pair *p = NULL;
        for (size_t k = 0; k < s->n_pairs && !p; k++)
            if (strcmp(s->pairs[k].name, b->name) == 0)
                p = &s->pairs[k];
        if (!p) {
            p = &s->pairs[s->n_pairs++];
            *p = (gp_compile_region_pair){b->name, NULL, NULL, 0, 0};
        }
        p->base = b;
        if (p->cur) {
            p->gpu_speedup = ratio(b->gpu_time, p->cur->gpu_time);
            p->cpu_speedup = ratio(b->cpu_time, p->cur->cpu_time);
        }
    }
    *out = s;
    return GP_OK;
}

void gp_compile_speedup_free(gp_compile_speedup *s)
{
    if (!s)
        return;
    free(s->pairs);
    free(s);
}
