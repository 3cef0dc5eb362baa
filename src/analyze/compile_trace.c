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
#include "core/parse.h"
#include "core/msort.h"
#include "core/util.h"

static const char region_prefix[] = "Torch-Compiled Region: ";
static const char graph_prefix[] = "## Call CompiledFxGraph ";
static const char guard_name[] = "TorchDynamo Cache Lookup";

/* A region call on a CPU track (idx: the region), or the time between two outermost region calls
 * (idx: the gap, the pair of regions it counts for). */
typedef struct span {
    uint32_t track;
    gp_ns ts, end;
    uint32_t idx; /* index into the result's regions or gaps */
} span;

static int cmp_span(const span *a, const span *b)
{
    int c = GP_CMP(a->track, b->track);
    return c ? c : GP_CMP(a->ts, b->ts);
}
GP__DEFINE_MERGE_SORT(sort_spans, span, cmp_span)

enum { OPS_KEPT = 16 }; /* distinct eager op names counted per gap; the rest are not named */

/* The eager op names of one gap and their time. */
typedef struct gap_ops {
    gp_strid name[OPS_KEPT];
    gp_ns time[OPS_KEPT];
    size_t n;
} gap_ops;

typedef struct ctx {
    const gp_trace *t;
    gp_compile_trace *out;
    size_t cap_regions;
    span *spans;
    size_t n_spans, cap_spans;
    span *gs; /* the gaps, sorted as spans */
    size_t n_gs, cap_gs, cap_gaps, cap_gops;
    gap_ops *gops; /* per gap */
} ctx;

/* launch_of values: 0 eager, region + 1, or GAP_TAG + gap (eager, between two regions). */
#define GAP_TAG ((uint64_t)1 << 40)

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

/* Calls fn on every cpu_op of every CPU thread, in order, saying whether it is outermost (starts
 * after the previous outermost op ended); stops at the first error fn returns. */
static gp_status each_cpu_op(ctx *c, gp_status (*fn)(ctx *c, uint32_t k, size_t i, const char *name,
                                                     bool outer))
{
    const gp_trace *t = c->t;
    for (size_t k = 0; k < t->n_tracks; k++) {
        const gp_track *tr = &t->tracks[k];
        if (tr->kind != GP_TRACK_CPU_THREAD)
            continue;
        gp_ns outer_end = INT64_MIN;
        for (size_t i = 0; i < tr->n_events; i++) {
            const gp_event *e = &tr->events[i];
            if (e->kind != GP_EV_CPU_OP)
                continue;
            bool outer = e->ts >= outer_end;
            if (outer)
                outer_end = e->ts + e->dur;
            gp_status st = fn(c, (uint32_t)k, i, gp_trace_str(t, e->name), outer);
            if (st != GP_OK)
                return st;
        }
    }
    return GP_OK;
}

/* A cpu_op: the outermost ones' time inside / outside regions; region calls. */
static gp_status cpu_op(ctx *c, uint32_t k, size_t i, const char *n, bool outer)
{
    gp_compile_trace *o = c->out;
    const gp_track *tr = &c->t->tracks[k];
    const gp_event *e = &tr->events[i];
    bool region = starts_with(n, region_prefix);
    if (outer) {
        gp_ns *sum = region                       ? &o->cpu_compiled
                     : strcmp(n, guard_name) == 0 ? &o->cpu_guard
                                                  : &o->cpu_eager;
        *sum = gp__sat_add(*sum, e->dur);
    }
    if (!region)
        return GP_OK;
    uint32_t ri = region_index(c, n + strlen(region_prefix));
    if (ri == UINT32_MAX ||
        gp__grow((void **)&c->spans, &c->cap_spans, sizeof *c->spans, c->n_spans + 1) != GP_OK)
        return GP_ENOMEM;
    c->spans[c->n_spans++] = (span){k, e->ts, e->ts + e->dur, ri};
    gp_compile_region *r = &o->regions[ri];
    r->calls++;
    r->cpu_time = gp__sat_add(r->cpu_time, e->dur);
    if (!r->graph[0]) {
        char *g = graph_in(c->t, tr, i, e->ts + e->dur);
        if (g)
            r->graph = g;
    }
    return GP_OK;
}

/* CPU tracks: regions, their calls, and the outermost ops inside / outside them. */
static gp_status scan_cpu(ctx *c)
{
    gp_status st = each_cpu_op(c, cpu_op);
    if (st != GP_OK)
        return st;
    return sort_spans(c->spans, c->n_spans) ? GP_OK : GP_ENOMEM;
}

/* The number of spans of v[0..n) (sorted by track, start) that start at or before (k, x). */
static size_t spans_upto(const span *v, size_t n, uint32_t k, gp_ns x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (v[m].track < k || (v[m].track == k && v[m].ts <= x))
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}

/* The region whose call contains time x on track k (the innermost), or UINT32_MAX. */
static uint32_t region_at(const ctx *c, uint32_t k, gp_ns x)
{
    size_t lo = spans_upto(c->spans, c->n_spans, k, x);
    for (size_t i = lo, steps = 0; i > 0 && steps < 64; i--, steps++) {
        const span *s = &c->spans[i - 1];
        if (s->track != k)
            break;
        if (x < s->end)
            return s->idx;
    }
    return UINT32_MAX;
}

/* The gap that contains time x on track k (gaps do not overlap), or UINT32_MAX. */
static uint32_t gap_at(const ctx *c, uint32_t k, gp_ns x)
{
    size_t lo = spans_upto(c->gs, c->n_gs, k, x);
    const span *s = lo ? &c->gs[lo - 1] : NULL;
    return s && s->track == k && x < s->end ? s->idx : UINT32_MAX;
}

static uint32_t gap_index(ctx *c, const char *from, const char *to)
{
    gp_compile_trace *o = c->out;
    for (size_t i = 0; i < o->n_gaps; i++)
        if (o->gaps[i].from == from && o->gaps[i].to == to)
            return (uint32_t)i;
    if (gp__grow((void **)&o->gaps, &c->cap_gaps, sizeof *o->gaps, o->n_gaps + 1) != GP_OK ||
        gp__grow((void **)&c->gops, &c->cap_gops, sizeof *c->gops, o->n_gaps + 1) != GP_OK)
        return UINT32_MAX;
    o->gaps[o->n_gaps] = (gp_compile_gap){.from = from, .to = to, .brk = UINT32_MAX};
    c->gops[o->n_gaps].n = 0;
    return (uint32_t)o->n_gaps++;
}

/* The gaps: per track, from the end of each outermost region call to the start of the next. */
static gp_status find_gaps(ctx *c)
{
    gp_compile_trace *o = c->out;
    const span *prev = NULL;
    for (size_t i = 0; i < c->n_spans; i++) {
        const span *s = &c->spans[i];
        if (prev && prev->track == s->track && s->ts < prev->end)
            continue; /* nested in (or overlapping) the previous call */
        if (prev && prev->track == s->track) {
            uint32_t g = gap_index(c, o->regions[prev->idx].name, o->regions[s->idx].name);
            if (g == UINT32_MAX ||
                gp__grow((void **)&c->gs, &c->cap_gs, sizeof *c->gs, c->n_gs + 1) != GP_OK)
                return GP_ENOMEM;
            c->gs[c->n_gs++] = (span){s->track, prev->end, s->ts, g};
            o->gaps[g].count++;
            o->gaps[g].wall = gp__sat_add(o->gaps[g].wall, s->ts - prev->end);
        }
        prev = s;
    }
    return GP_OK;
}

static void add_gap_op(ctx *c, uint32_t g, const gp_event *e, bool guard)
{
    gp_compile_gap *gap = &c->out->gaps[g];
    if (guard) {
        gap->guard = gp__sat_add(gap->guard, e->dur);
        return;
    }
    gap->cpu_ops = gp__sat_add(gap->cpu_ops, e->dur);
    gap_ops *ops = &c->gops[g];
    for (size_t i = 0; i < ops->n; i++)
        if (ops->name[i] == e->name) {
            ops->time[i] = gp__sat_add(ops->time[i], e->dur);
            return;
        }
    if (ops->n < OPS_KEPT) {
        ops->name[ops->n] = e->name;
        ops->time[ops->n++] = e->dur;
    }
}

/* An outermost eager op inside a gap. */
static gp_status gap_op(ctx *c, uint32_t k, size_t i, const char *n, bool outer)
{
    const gp_event *e = &c->t->tracks[k].events[i];
    uint32_t g = outer && !starts_with(n, region_prefix) ? gap_at(c, k, e->ts) : UINT32_MAX;
    if (g != UINT32_MAX)
        add_gap_op(c, g, e, strcmp(n, guard_name) == 0);
    return GP_OK;
}

/* Names each gap's ops, the most time first. */
static void name_gap_ops(ctx *c)
{
    gp_compile_trace *o = c->out;
    for (size_t g = 0; g < o->n_gaps; g++) {
        gap_ops *ops = &c->gops[g];
        for (size_t k = 0; k < GP_COMPILE_GAP_OPS && k < ops->n; k++) {
            size_t best = k;
            for (size_t i = k + 1; i < ops->n; i++)
                if (ops->time[i] > ops->time[best])
                    best = i;
            gp_strid n = ops->name[k];
            gp_ns tm = ops->time[k];
            ops->name[k] = ops->name[best];
            ops->time[k] = ops->time[best];
            ops->name[best] = n;
            ops->time[best] = tm;
            o->gaps[g].ops[k] = gp_trace_str(c->t, ops->name[k]);
            o->gaps[g].op_time[k] = ops->time[k];
        }
    }
}

/* The frame of a region name ("3/1" -> 3; compiled autograd's "!0/3/1" -> 3); -1 when none. */
static long long frame_of(const char *name)
{
    const char *s = name;
    if (s[0] == '!' && strchr(s, '/'))
        s = strchr(s, '/') + 1;
    const char *slash = strchr(s, '/');
    char buf[24];
    size_t len = slash ? (size_t)(slash - s) : strlen(s);
    long long f;
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    return gp__parse_int(buf, 0, INT32_MAX, &f) ? f : -1;
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
            v = ri == UINT32_MAX ? 0 : (uint64_t)ri + 1;
            if (ri == UINT32_MAX) {
                o->launches_eager++;
                o->launch_eager = gp__sat_add(o->launch_eager, e->dur);
                uint32_t g = gap_at(c, (uint32_t)k, e->ts);
                if (g != UINT32_MAX) {
                    o->gaps[g].launches++;
                    o->gaps[g].launch_time = gp__sat_add(o->gaps[g].launch_time, e->dur);
                    v = GAP_TAG + g;
                }
            } else {
                o->launches_compiled++;
                o->launch_compiled = gp__sat_add(o->launch_compiled, e->dur);
                o->regions[ri].launches++;
                o->regions[ri].launch_time = gp__sat_add(o->regions[ri].launch_time, e->dur);
            }
            if (gp__imap_put(launch_of, e->correlation, v) != GP_OK)
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
            } else if (v == 0 || v >= GAP_TAG) {
                o->gpu_eager = gp__sat_add(o->gpu_eager, e->dur);
                o->kernels_eager += kernel;
                if (v >= GAP_TAG) {
                    gp_compile_gap *g = &o->gaps[v - GAP_TAG];
                    g->gpu = gp__sat_add(g->gpu, e->dur);
                    g->kernels += kernel;
                }
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

static int cmp_gap(const gp_compile_gap *a, const gp_compile_gap *b)
{
    int c = GP_CMP(b->kind, a->kind);
    if (!c)
        c = GP_CMP(b->wall, a->wall);
    if (!c)
        c = strcmp(a->from, b->from);
    return c ? c : strcmp(a->to, b->to);
}
GP__DEFINE_MERGE_SORT(sort_gaps, gp_compile_gap, cmp_gap)

/* Without a log: a gap into a frame compiled later (a higher frame id) is a probable break. */
static void classify_gaps(gp_compile_trace *o)
{
    for (size_t i = 0; i < o->n_gaps; i++) {
        gp_compile_gap *g = &o->gaps[i];
        long long f = frame_of(g->from), r = frame_of(g->to);
        g->kind = f >= 0 && r > f ? GP_CGAP_PROBABLE : GP_CGAP_BETWEEN;
    }
}

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
        /* a rank a job gave by file order is not the trace's: read alone it has none */
        c.out->rank = t->rank_from_file_order ? -1 : t->rank;
        span_of(t, &c.out->span);
        st = scan_cpu(&c);
    }
    if (st == GP_OK && (st = find_gaps(&c)) == GP_OK && c.n_gs)
        st = each_cpu_op(&c, gap_op);
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
        name_gap_ops(&c);
        classify_gaps(c.out);
        /* gaps hold region names, not indices: sorting the regions leaves them valid */
        if (!sort_regions(c.out->regions, c.out->n_regions) ||
            !sort_gaps(c.out->gaps, c.out->n_gaps))
            st = GP_ENOMEM;
    }
    gp__imap_free(&gpu);
    gp__imap_free(&launch_of);
    free(c.spans);
    free(c.gs);
    free(c.gops);
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
    free(t->gaps);
    free(t);
}

const char *gp_compile_gap_kind_name(gp_compile_gap_kind k)
{
    static const char *const names[] = {[GP_CGAP_BETWEEN] = "between",
                                        [GP_CGAP_PROBABLE] = "probable_break",
                                        [GP_CGAP_BREAK] = "graph_break"};
    return GP_NAME_OF(names, k, "between");
}

bool gp_compile_trace_has_regions(const gp_trace *t)
{
    size_t n = gp_trace_str_count(t), len = strlen(region_prefix);
    for (size_t id = 1; id <= n; id++)
        if (gp_trace_strlen(t, (gp_strid)id) > len &&
            starts_with(gp_trace_str(t, (gp_strid)id), region_prefix))
            return true;
    return false;
}

/* The break of frame f resuming in frame r, of this rank if there is one; UINT32_MAX. */
static uint32_t break_of(const gp_compile_log *log, const gp_compile_analysis *a, int32_t rank,
                         long long f, long long r)
{
    uint32_t any = UINT32_MAX;
    for (size_t i = 0; i < a->n_breaks; i++) {
        const gp_compile_break *b = &a->breaks[i];
        if (b->unit == UINT32_MAX || b->resume_unit == UINT32_MAX ||
            log->units[b->unit].frame_id != f || log->units[b->resume_unit].frame_id != r)
            continue;
        if (b->rank == rank)
            return (uint32_t)i;
        if (any == UINT32_MAX)
            any = (uint32_t)i;
    }
    return any;
}

void gp_compile_trace_link(gp_compile_trace *t, const gp_compile_log *log,
                           const gp_compile_analysis *a)
{
    for (size_t i = 0; i < t->n_gaps; i++) {
        gp_compile_gap *g = &t->gaps[i];
        long long f = frame_of(g->from), r = frame_of(g->to);
        g->brk = f >= 0 && r >= 0 ? break_of(log, a, t->rank, f, r) : UINT32_MAX;
        g->kind = g->brk != UINT32_MAX ? GP_CGAP_BREAK : GP_CGAP_BETWEEN;
    }
    t->linked = true;
    (void)sort_gaps(t->gaps, t->n_gaps); /* on GP_ENOMEM the order stays unsorted, still valid */
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
