/* The per-rank view: step selection, the mode's GPU event set and rounding, classification and
 * the correlation join. See analyze_internal.h. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze_internal.h"
#include "core/msort.h"
#include "core/par.h"

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return -floor_div(-a, b);
}

/* x ns (relative to the trace's base time) as the binary64 that json.loads gives for the file's
 * microsecond text "x / 1000" with its three decimals: strtod of that exact decimal (correctly
 * rounded; above 2^53 ns a plain (double)x / 1000 would round twice). */
static double hta_us(gp_ns x)
{
    char b[48];
    uint64_t m = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
    snprintf(b, sizeof b, "%s%llu.%03llu", x < 0 ? "-" : "", (unsigned long long)(m / 1000),
             (unsigned long long)(m % 1000));
    return strtod(b, NULL);
}

/* HTA's ceil(ts) on the binary64 microseconds (docs/analyses.md, "Rounding"): above 2^43 us the
 * double's spacing exceeds 1 ns, so a start whose fraction is at most half a spacing lands on the
 * whole microsecond below, and ceil keeps it there. */
int64_t gp__hta_us_start(gp_ns rel_ts)
{
    double us = hta_us(rel_ts);
    if (fabs(us) >= 9.0e15) /* beyond 2^53 us: no fraction left, the exact rule is as good */
        return ceil_div(rel_ts, 1000);
    return (int64_t)ceil(us);
}

/* HTA's floor(ts + dur), both read as binary64 microseconds and added as doubles. */
int64_t gp__hta_us_end(gp_ns rel_ts, gp_ns dur)
{
    double us = hta_us(rel_ts) + hta_us(dur);
    if (fabs(us) >= 9.0e15)
        return floor_div(rel_ts + dur, 1000);
    return (int64_t)floor(us);
}

/* Start of an interval in the view's unit (ns, or HTA mode's microseconds). */
static int64_t to_unit_start(const gp__view *v, gp_ns t)
{
    return v->unit == 1 ? t : gp__hta_us_start(t - v->t->base_time_ns);
}

/* End of an interval [ts, ts + dur) in the view's unit. */
static int64_t to_unit_end(const gp__view *v, gp_ns ts, gp_ns dur)
{
    return v->unit == 1 ? ts + dur : gp__hta_us_end(ts - v->t->base_time_ns, dur);
}

static bool is_profiler_step(const char *name, int64_t *num)
{
    if (strncmp(name, "ProfilerStep", 12) != 0)
        return false;
    const char *p = strchr(name, '#');
    *num = p ? strtoll(p + 1, NULL, 10) : -1;
    return true;
}

static bool in_hta_set(const gp__view *v, const gp_event *ev, int64_t stream)
{
    /* HTA: a GPU event is one whose args.stream is present and not -1. */
    if (ev->flags & (GP_EVF_INSTANT | GP_EVF_NO_DUR | GP_EVF_STREAM_FROM_TID))
        return false;
    switch (ev->kind) {
    case GP_EV_KERNEL:
    case GP_EV_MEMCPY:
    case GP_EV_MEMSET:
    case GP_EV_SYNC:
    case GP_EV_GPU_USER_ANNOTATION:
        return stream != -1;
    default:
        return false;
    }
}

/* HTA takes every event with an args.stream other than -1 for GPU work, so a cpu_op that records
 * the stream it launches on (torch.compile's Triton launches) is counted as GPU work too, under
 * its own name. gpuprof's default mode does not (docs/analyses.md, "HTA mode"). */
static bool hta_cpu_op(const gp_event *ev)
{
    return gp_event_cpu_stream(ev) >= 0 && !(ev->flags & (GP_EVF_INSTANT | GP_EVF_NO_DUR));
}

static bool in_default_set(const gp_event *ev)
{
    return ev->kind == GP_EV_KERNEL || ev->kind == GP_EV_MEMCPY || ev->kind == GP_EV_MEMSET;
}

void gp__view_free(gp__view *v)
{
    free(v->g);
    free(v->rt);
    free(v->gsteps);
    memset(v, 0, sizeof(*v));
}

int gp__host_split = -1; /* analyze_internal.h */

void gp__host_half(const gp_trace *t, bool other_too, int half, size_t *tk, size_t *i)
{
    size_t total = 0, gpu = 0;
    for (size_t k = 0; k < t->n_tracks; k++) {
        gp_track_kind kind = t->tracks[k].kind;
        if (kind == GP_TRACK_CPU_THREAD || (other_too && kind == GP_TRACK_OTHER))
            total += t->tracks[k].n_events;
        else if (kind == GP_TRACK_GPU_STREAM)
            gpu += t->tracks[k].n_events;
    }
    /* Cut in two only when the host side outweighs the GPU side's task, which costs about 4x
     * as much per event (large_v100_nccl x7: 0.7 M host events and 0.15 M GPU events, 16 ms
     * each): otherwise the second half is empty, and the host side one task as before. */
    bool split = gp__host_split < 0 ? total / 8 > gpu : gp__host_split > 0;
    size_t skip = half == 0 ? 0 : split ? total / 2 : total;
    for (*tk = 0; *tk < t->n_tracks; (*tk)++) {
        const gp_track *tr = &t->tracks[*tk];
        if (tr->kind != GP_TRACK_CPU_THREAD && !(other_too && tr->kind == GP_TRACK_OTHER))
            continue;
        if (skip < tr->n_events)
            break;
        skip -= tr->n_events;
    }
    *i = *tk < t->n_tracks ? skip : 0;
}

/* What a scan of half the host-side events found (scan_cpu): their runtime/driver calls, the
 * (correlation, launch) pairs of those with a correlation id, and the profiler steps. */
typedef struct cpu_scan {
    const gp_event **rt;
    size_t n_rt, cap_rt;
    uint64_t *lk, *lv;
    size_t n_l, cap_l, cap_l2;
    gp__step *steps;
    size_t n_steps, cap_steps;
} cpu_scan;

static void cpu_scan_free(cpu_scan *c)
{
    free(c->rt);
    free(c->lk);
    free(c->lv);
    free(c->steps);
}

/* Pass over half `half` of the host-side tracks' events (gp__host_half): profiler steps and the
 * (correlation, launch) pairs of runtime/driver calls. */
static gp_status scan_cpu(const gp__view *v, int half, cpu_scan *out)
{
    const gp_trace *t = v->t;
    size_t tk, i, end_tk = t->n_tracks, end_i = 0, n_l2 = 0;
    gp__host_half(t, true, half, &tk, &i);
    if (half == 0)
        gp__host_half(t, true, 1, &end_tk, &end_i);
    if (!gp__host_before(tk, i, end_tk, end_i))
        return GP_OK; /* an empty half */
    size_t n_str = gp_trace_str_count(t) + 1;
    uint8_t *is_step = calloc(n_str, 1); /* per name: 0 unknown, 1 no, 2 ProfilerStep */
    if (!is_step)
        return GP_ENOMEM;
    gp_status st = GP_OK;
    size_t expect = gp__host_calls_expected(t, half, end_tk);
    if (expect &&
        (gp__reserve((void **)&out->rt, &out->cap_rt, sizeof(*out->rt), expect) != GP_OK ||
         gp__reserve((void **)&out->lk, &out->cap_l, sizeof(*out->lk), expect) != GP_OK ||
         gp__reserve((void **)&out->lv, &out->cap_l2, sizeof(*out->lv), expect) != GP_OK)) {
        free(is_step);
        return GP_ENOMEM;
    }
    for (; gp__host_before(tk, i, end_tk, end_i); tk++, i = 0) {
        const gp_track *tr = &t->tracks[tk];
        if (tr->kind == GP_TRACK_GPU_STREAM || tr->kind == GP_TRACK_COUNTER)
            continue;
        size_t n = tk == end_tk ? end_i : tr->n_events;
        for (; i < n; i++) {
            const gp_event *ev = &tr->events[i];
            int64_t num;
            if (ev->kind == GP_EV_RUNTIME || ev->kind == GP_EV_DRIVER) {
                const gp_event **r = GP_PUSH(out->rt, out->n_rt, out->cap_rt);
                if (!r) {
                    st = GP_ENOMEM;
                    goto done;
                }
                *r = ev;
                if (ev->correlation == 0)
                    continue;
                uint64_t *a = GP_PUSH(out->lk, out->n_l, out->cap_l);
                uint64_t *b = a ? GP_PUSH(out->lv, n_l2, out->cap_l2) : NULL;
                if (!b) {
                    st = GP_ENOMEM;
                    goto done;
                }
                *a = (uint64_t)ev->correlation;
                *b = (uint64_t)(uintptr_t)ev;
            } else if ((ev->kind == GP_EV_USER_ANNOTATION || ev->kind == GP_EV_CPU_OP) &&
                       ev->name != 0 && ev->name < n_str) {
                if (is_step[ev->name] == 0)
                    is_step[ev->name] = is_profiler_step(gp_trace_str(t, ev->name), &num) ? 2 : 1;
                if (is_step[ev->name] != 2)
                    continue;
                is_profiler_step(gp_trace_str(t, ev->name), &num);
                gp__step *s = GP_PUSH(out->steps, out->n_steps, out->cap_steps);
                if (!s) {
                    st = GP_ENOMEM;
                    goto done;
                }
                s->num = num;
                s->ts = ev->ts;
                s->end = ev->ts + ev->dur;
            }
        }
    }
done:
    free(is_step);
    /* sorted by correlation id, stably (the join's launch side), here beside the GPU side */
    return st == GP_OK ? gp__radix_sort_kv(out->lk, out->lv, out->n_l) : st;
}

/* Appends b's finds to a's (a then b: one scan's order; the pairs, each half sorted, merged). */
static gp_status join_scans(cpu_scan *a, const cpu_scan *b)
{
    if (b->n_rt &&
        gp__reserve((void **)&a->rt, &a->cap_rt, sizeof(*a->rt), a->n_rt + b->n_rt) != GP_OK)
        return GP_ENOMEM;
    if (b->n_l &&
        (gp__reserve((void **)&a->lk, &a->cap_l, sizeof(*a->lk), a->n_l + b->n_l) != GP_OK ||
         gp__reserve((void **)&a->lv, &a->cap_l2, sizeof(*a->lv), a->n_l + b->n_l) != GP_OK))
        return GP_ENOMEM;
    if (b->n_steps && gp__grow((void **)&a->steps, &a->cap_steps, sizeof(*a->steps),
                               a->n_steps + b->n_steps) != GP_OK)
        return GP_ENOMEM;
    if (b->n_rt)
        memcpy(a->rt + a->n_rt, b->rt, b->n_rt * sizeof(*b->rt));
    if (b->n_l) {
        memcpy(a->lk + a->n_l, b->lk, b->n_l * sizeof(*b->lk));
        memcpy(a->lv + a->n_l, b->lv, b->n_l * sizeof(*b->lv));
    }
    if (b->n_steps)
        memcpy(a->steps + a->n_steps, b->steps, b->n_steps * sizeof(*b->steps));
    a->n_rt += b->n_rt;
    a->n_l += b->n_l;
    a->n_steps += b->n_steps;
    return b->n_l ? gp__radix_sort_kv(a->lk, a->lv, a->n_l) : GP_OK;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* How many distinct step numbers (HTA: distinct names) the CPU- and GPU-side steps have; 2 when
 * out of memory (the caller then cuts, as it would for most traces). */
static size_t distinct_steps(const gp__view *v, const gp__step *steps, size_t n_steps)
{
    size_t n = n_steps + v->n_gsteps, k = 0;
    if (n < 2)
        return n;
    int64_t *nums = malloc(n * sizeof *nums);
    if (!nums)
        return 2;
    for (size_t i = 0; i < n_steps; i++)
        nums[k++] = steps[i].num;
    for (size_t i = 0; i < v->n_gsteps; i++)
        nums[k++] = v->gsteps[i].num;
    gp__msort(nums, n, sizeof *nums, cmp_i64);
    size_t d = 1;
    for (size_t i = 1; i < n; i++)
        d += nums[i] != nums[i - 1];
    free(nums);
    return d;
}

/* The first words of the --steps hta notes on a GPU-side cut: where HTA cuts (its argument: the
 * GPU-side step's number). */
#define HTA_CUT                                                                                    \
    "--steps hta: HTA's cut is the start of the GPU-side ProfilerStep#%lld (a "                    \
    "gpu_user_annotation without a stream, which HTA counts as a CPU event)"

/* --steps hta: HTA's cut (docs/analyses.md, "Step selection"). HTA counts the distinct
 * ProfilerStep names of the trace, CPU- or GPU-side; with two or more it cuts at the latest start
 * of any step that is not a GPU event (no args.stream): the CPU-side ones and the GPU-side
 * gpu_user_annotation steps written without a stream. It keeps the CPU events that start before
 * the cut (and the GPU work they launched). When the GPU lags, a GPU-side step starts after the
 * last CPU-side one: HTA then keeps part or all of the last step, and the note says how much. */
static void hta_cut(gp__view *v, const gp__step *steps, size_t n_steps)
{
    size_t n_all = distinct_steps(v, steps, n_steps), n_gpu = 0;
    gp_ns last = INT64_MIN, last_cpu = INT64_MIN, cpu_end = INT64_MIN;
    int64_t last_num = -1, gpu_num = -1;
    for (size_t i = 0; i < n_steps; i++) {
        if (steps[i].ts >= last_cpu) {
            last_cpu = steps[i].ts;
            last_num = steps[i].num;
            cpu_end = steps[i].end;
        }
    }
    last = last_cpu;
    for (size_t i = 0; i < v->n_gsteps; i++) {
        if (!v->gsteps[i].streamless)
            continue;
        n_gpu++;
        if (v->gsteps[i].ts > last) {
            last = v->gsteps[i].ts;
            gpu_num = v->gsteps[i].num;
        }
    }
    if (n_all < 2) {
        if (n_all == 0)
            gp_error_note(&v->note, "No ProfilerStep in the trace: --steps hta keeps every event.");
        else
            gp_error_note(&v->note, "One ProfilerStep only: --steps hta keeps every event.");
        return;
    }
    v->cpu_hi = last;
    v->steps_kept = 0;
    for (size_t i = 0; i < n_steps; i++)
        v->steps_kept += steps[i].ts < last;
    if (last == last_cpu)
        return;
    /* the cut is a GPU-side step's start: the CPU-side step(s) before it are kept, in part */
    if (n_steps == 0)
        gp_error_note(&v->note, HTA_CUT "; no CPU-side step.", (long long)gpu_num);
    else if (last >= cpu_end)
        gp_error_note(&v->note,
                      HTA_CUT ", %.3f ms after the last CPU-side step ProfilerStep#%lld ends: that "
                              "step is kept whole (%zu of %zu steps kept, %zu GPU-side).",
                      (long long)gpu_num, (double)(last - cpu_end) / 1e6, (long long)last_num,
                      (size_t)v->steps_kept, n_steps, n_gpu);
    else
        gp_error_note(&v->note,
                      HTA_CUT ", %.3f ms into the last CPU-side step ProfilerStep#%lld: its first "
                              "%.1f %% is kept (%zu of %zu steps kept, in part; %zu GPU-side).",
                      (long long)gpu_num, (double)(last - last_cpu) / 1e6, (long long)last_num,
                      cpu_end > last_cpu
                          ? 100.0 * (double)(last - last_cpu) / (double)(cpu_end - last_cpu)
                          : 100.0,
                      (size_t)v->steps_kept, n_steps, n_gpu);
}

static void select_window(gp__view *v, const gp__step *steps, size_t n_steps)
{
    const gp_analyze_opts *o = v->o;
    v->cpu_lo = INT64_MIN;
    v->cpu_hi = INT64_MAX;
    v->steps_total = (int64_t)n_steps;
    v->steps_kept = (int64_t)n_steps;
    if (o->steps == GP_STEPS_HTA) {
        hta_cut(v, steps, n_steps);
    } else if (o->steps == GP_STEPS_RANGE) {
        gp_ns lo = INT64_MAX, hi = INT64_MIN;
        v->steps_kept = 0;
        for (size_t i = 0; i < n_steps; i++) {
            if (steps[i].num < o->step_first || steps[i].num > o->step_last)
                continue;
            lo = GP_MIN(lo, steps[i].ts);
            hi = GP_MAX(hi, steps[i].end);
            v->steps_kept++;
        }
        if (v->steps_kept == 0) {
            gp_error_note(&v->note,
                          "No ProfilerStep#%lld..#%lld in the trace (%zu steps): nothing selected.",
                          (long long)o->step_first, (long long)o->step_last, n_steps);
            v->cpu_lo = v->cpu_hi = 0;
            return;
        }
        v->cpu_lo = lo;
        v->cpu_hi = hi;
        v->gpu_lo = INT64_MAX;
        v->gpu_hi = INT64_MIN;
        for (size_t i = 0; i < v->n_gsteps; i++) {
            const gp__step *g = &v->gsteps[i];
            if (g->num >= o->step_first && g->num <= o->step_last) {
                v->gpu_lo = GP_MIN(v->gpu_lo, g->ts);
                v->gpu_hi = GP_MAX(v->gpu_hi, g->end);
            }
        }
    }
}

/* Every GPU event of the mode's set, classified, before step selection. */
static gp_status collect_gpu(gp__view *v, const gp__classifier *c)
{
    const gp_trace *t = v->t;
    const gp_analyze_opts *o = v->o;
    size_t n_str = gp_trace_str_count(t) + 1;
    uint8_t *cache = malloc(n_str);
    if (!cache)
        return GP_ENOMEM;
    memset(cache, 0xff, n_str);
    size_t expect = 0;
    for (size_t k = 0; k < t->n_tracks; k++)
        if (t->tracks[k].kind == GP_TRACK_GPU_STREAM)
            expect += t->tracks[k].n_events;
    if (expect && gp__reserve((void **)&v->g, &v->cap_g, sizeof(*v->g), expect) != GP_OK) {
        free(cache);
        return GP_ENOMEM;
    }
    for (size_t k = 0; k < t->n_tracks; k++) {
        const gp_track *tr = &t->tracks[k];
        /* HTA also counts CPU events that carry an args.stream (see hta_cpu_op). */
        if (tr->kind == GP_TRACK_COUNTER || (tr->kind == GP_TRACK_CPU_THREAD && !o->hta))
            continue;
        for (size_t i = 0; i < tr->n_events; i++) {
            const gp_event *ev = &tr->events[i];
            const gp_gpu_info *gi = NULL;
            int64_t stream, num;
            if (ev->kind == GP_EV_GPU_USER_ANNOTATION &&
                is_profiler_step(gp_trace_str(t, ev->name), &num)) {
                gp__step *s = GP_PUSH(v->gsteps, v->n_gsteps, v->cap_gsteps);
                if (!s) {
                    free(cache);
                    return GP_ENOMEM;
                }
                const gp_gpu_info *si = gp_event_gpu_info(t, ev);
                int64_t sst = si ? si->stream : tr->stream;
                bool streamless = (ev->flags & GP_EVF_STREAM_FROM_TID) || sst == -1;
                *s = (gp__step){num, ev->ts, ev->ts + ev->dur, streamless};
            }
            if (o->hta && hta_cpu_op(ev)) {
                stream = gp_event_cpu_stream(ev);
            } else if (tr->kind == GP_TRACK_CPU_THREAD ||
                       !gp_event_kind_is_gpu((gp_event_kind)ev->kind)) {
                continue;
            } else {
                gi = gp_event_gpu_info(t, ev);
                stream = gi ? gi->stream : tr->stream;
                if (o->hta ? !in_hta_set(v, ev, stream) : !in_default_set(ev))
                    continue;
            }
            gp__gev *g = GP_PUSH(v->g, v->n_g, v->cap_g);
            if (!g) {
                free(cache);
                return GP_ENOMEM;
            }
            g->ev = ev;
            g->ts = ev->ts;
            g->dur = ev->dur;
            g->s = to_unit_start(v, ev->ts);
            g->e = to_unit_end(v, ev->ts, ev->dur);
            /* HTA's inward rounding of a sub-us event can give a negative length (HTA #317):
             * kept, as HTA keeps it, unless it makes a figure negative (analyze.c) */
            g->rounded_negative = g->e < g->s;
            g->launch_s = GP__NO_TIME;
            g->stream = stream;
            g->device = o->hta ? -1 : (gi ? gi->device : tr->device);
            g->kind = ev->kind;
            g->in_graph = ev->kind == GP_EV_KERNEL && gi && gi->graph_id >= 0;
            uint8_t ty = ev->name < n_str ? cache[ev->name] : 0xff;
            if (ty == 0xff) {
                ty = (uint8_t)gp__classify(c, gp_trace_str(t, ev->name), (gp_event_kind)ev->kind);
                if (ev->name < n_str)
                    cache[ev->name] = ty;
            }
            if (!o->hta && ty == GP_KT_COMPUTATION && o->n_rules == 0 &&
                gp_gpu_info_ext(t, gi)->collective != 0)
                ty = GP_KT_COMMUNICATION;
            g->type = ty;
        }
    }
    free(cache);
    return GP_OK;
}

/* Joins v->g[x] to its launch. */
static void set_launch(gp__gev *g, const gp_event *launch)
{
    g->launch = launch;
    g->lts = launch->ts;
    g->lname = launch->name;
    g->ldur = launch->dur;
}

#define PREFETCH 16 /* join_sorted: how far ahead the join fetches */

/* The GPU side of the join: the correlation ids of v->g's events (gk) and their indexes (gv),
 * sorted by id unless the ids are dense enough for join_dense (*sorted says which). Built beside
 * the host scan, in the GPU task. */
static gp_status gpu_keys(const gp__view *v, uint64_t **gk, uint64_t **gv, size_t *n_gk,
                          bool *sorted)
{
    size_t n = 0;
    *gk = malloc((v->n_g ? v->n_g : 1) * sizeof(**gk));
    *gv = malloc((v->n_g ? v->n_g : 1) * sizeof(**gv));
    if (!*gk || !*gv)
        return GP_ENOMEM;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < v->n_g; i++) {
        uint64_t id = (uint64_t)v->g[i].ev->correlation;
        if (id == 0)
            continue;
        (*gk)[n] = id;
        (*gv)[n] = i;
        lo = GP_MIN(lo, id);
        hi = GP_MAX(hi, id);
        n++;
    }
    *n_gk = n;
    /* ids within 16 slots per event: the launches' are likely dense too, and join_dense needs no
     * sorted side (join_sorted sorts it when they are not) */
    *sorted = !(n > 0 && hi - lo < 16 * (uint64_t)n + 4096);
    return *sorted ? gp__radix_sort_kv(*gk, *gv, n) : GP_OK;
}

/* Sort-merge join of GPU events and launches on the correlation id: lk/lv sorted by id (stably:
 * among equal ids in scan order), gk/gv the GPU side (gpu_keys; sorted here when it is not yet).
 * Linear, no hash map. The first launch of a correlation id wins. */
static gp_status join_sorted(gp__view *v, const uint64_t *lk, const uint64_t *lv, size_t n_l,
                             uint64_t *gk, uint64_t *gv, size_t n, bool gk_sorted)
{
    gp_status st = gk_sorted ? GP_OK : gp__radix_sort_kv(gk, gv, n);
    size_t j = 0;
    for (size_t i = 0; i < n && st == GP_OK;) {
        size_t e = i;
        while (e < n && gk[e] == gk[i])
            e++;
        while (j < n_l && lk[j] < gk[i])
            j++;
        /* In correlation order the launches and GPU events are scattered: a cache miss each, which
         * was 40 % of the view's serial tail on large_v100_nccl x7. Fetched 16 ahead: the join
         * took 7-10 instead of 10-13 ms there (docs/performance.md, issue 37). */
        if (j + PREFETCH < n_l)
            __builtin_prefetch((const void *)(uintptr_t)lv[j + PREFETCH]);
        if (i + PREFETCH < n)
            __builtin_prefetch(&v->g[gv[i + PREFETCH]]);
        if (j < n_l && lk[j] == gk[i]) {
            const gp_event *launch = (const gp_event *)(uintptr_t)lv[j];
            size_t first = gv[i];
            for (size_t x = i; x < e; x++) {
                set_launch(&v->g[gv[x]], launch);
                if (v->g[gv[x]].ts < v->g[first].ts)
                    first = gv[x];
            }
            v->g[first].first_of_launch = true;
        }
        i = e;
    }
    return st;
}

/* The join by direct addressing, for correlation ids within [lo, lo + range): a slot per id holds
 * its first launch (in scan order: lk is sorted stably) and the earliest of its GPU events (the
 * first in v->g on a tie), as the sort-merge join finds them, without the GPU side's sort. */
static gp_status join_dense(gp__view *v, const uint64_t *lk, const uint64_t *lv, size_t n_l,
                            uint64_t lo, size_t range)
{
    uint32_t *launch_of = calloc(range, sizeof(*launch_of)); /* id - lo -> launch index + 1 */
    uint32_t *first = calloc(n_l ? n_l : 1, sizeof(*first)); /* launch -> GPU event index + 1 */
    if (!launch_of || !first) {
        free(launch_of);
        free(first);
        return GP_ENOMEM;
    }
    for (size_t i = 0; i < n_l; i++)
        if (!launch_of[lk[i] - lo])
            launch_of[lk[i] - lo] = (uint32_t)(i + 1);
    for (size_t x = 0; x < v->n_g; x++) {
        gp__gev *g = &v->g[x];
        uint64_t id = (uint64_t)g->ev->correlation;
        if (id == 0 || id - lo >= range || !launch_of[id - lo])
            continue;
        size_t l = launch_of[id - lo] - 1;
        set_launch(g, (const gp_event *)(uintptr_t)lv[l]);
        if (!first[l] || g->ts < v->g[first[l] - 1].ts)
            first[l] = (uint32_t)(x + 1);
    }
    for (size_t l = 0; l < n_l; l++)
        if (first[l])
            v->g[first[l] - 1].first_of_launch = true;
    free(launch_of);
    free(first);
    return GP_OK;
}

/* Joins the GPU events to their launches (lk: correlation ids, lv: launches, sorted by id, stably;
 * gk/gv: gpu_keys). CUPTI numbers correlations nearly densely (a few ids per launch call:
 * large_v100_nccl has 6.4): when the launches' ids span at most 16 slots per launch, by direct
 * addressing; else by a sort-merge join. Both sides are sorted in the view's tasks, side by side
 * (serial here they were 20-25 ms of large_v100_nccl x7's view, whose copies' ids lie 10^8 apart:
 * issue 37). */
static gp_status join_launches(gp__view *v, const uint64_t *lk, const uint64_t *lv, size_t n_l,
                               uint64_t *gk, uint64_t *gv, size_t n_gk, bool gk_sorted)
{
    uint64_t lo = n_l ? lk[0] : UINT64_MAX, hi = n_l ? lk[n_l - 1] : 0;
    if (n_l > 0 && n_l < UINT32_MAX && v->n_g < UINT32_MAX && hi - lo < 16 * (uint64_t)n_l + 4096)
        return join_dense(v, lk, lv, n_l, lo, (size_t)(hi - lo + 1));
    return join_sorted(v, lk, lv, n_l, gk, gv, n_gk, gk_sorted);
}

/* Keeps the GPU events of the selected steps (see docs/analyses.md, "Step selection"). */
static void select_gpu(gp__view *v)
{
    const gp_analyze_opts *o = v->o;
    if (v->cpu_lo == INT64_MIN && v->cpu_hi == INT64_MAX)
        return;
    bool by_time = false;
    if (o->steps == GP_STEPS_HTA) {
        size_t kept = 0;
        for (size_t i = 0; i < v->n_g; i++)
            kept += v->g[i].launch && v->g[i].lts < v->cpu_hi;
        /* HTA keeps only GPU work whose launch it kept; without correlation ids that is nothing
         * (HTA then fails). Select by time instead and say so. */
        if (kept == 0 && v->n_g > 0) {
            by_time = true;
            v->hta_fallback = true;
            gp_error_note(
                &v->note,
                "No GPU event is linked to a launch by correlation id: --steps hta selected "
                "GPU work by time (start before the last ProfilerStep) instead.");
        }
    }
    size_t out = 0;
    for (size_t i = 0; i < v->n_g; i++) {
        const gp__gev *g = &v->g[i];
        bool keep;
        if (by_time)
            keep = gp__view_cpu_kept(v, g->ts);
        else if (o->steps == GP_STEPS_HTA)
            keep = g->launch && g->lts < v->cpu_hi;
        else if (v->gpu_lo < v->gpu_hi) /* the GPU-side span of the selected steps */
            keep = g->ts >= v->gpu_lo && g->ts < v->gpu_hi;
        else
            keep = gp__view_cpu_kept(v, g->launch ? g->lts : g->ts);
        if (keep)
            v->g[out++] = *g;
    }
    v->n_g = out;
}

/* By unit start, stably (ties keep collection order). The events arrive as one sorted run per
 * stream, which the adaptive merge sort merges in place. */
static int cmp_gev_start(const gp__gev *a, const gp__gev *b)
{
    return (a->s > b->s) - (a->s < b->s);
}

GP__DEFINE_MERGE_SORT(sort_gev, gp__gev, cmp_gev_start)

static gp_status sort_gpu(gp__view *v)
{
    return sort_gev(v->g, v->n_g) ? GP_OK : GP_ENOMEM;
}

/* Counts the selected events that break a rule the analyses rely on (see gp_rank_analysis): GPU
 * work overlapping the previous work on its stream (in ns, whatever the mode), and HTA-rounded
 * negative lengths. The events are sorted by start. */
static gp_status count_rule_breaks(gp__view *v)
{
    struct lane {
        int64_t stream;
        int32_t device;
        gp_ns end;
    } *lanes = NULL;
    size_t n_lanes = 0, cap_lanes = 0;
    gp__group_table index; /* (device, stream) -> its lane */
    gp__lanes_init(&index);
    /* per track, the lane of its last event, tried before the hash lookup (a track's events are
     * of one lane but for a few): the lookup per event was a sixth of the view */
    size_t n_tracks = v->t->n_tracks;
    size_t *track_lane = malloc((n_tracks ? n_tracks : 1) * sizeof(*track_lane));
    if (!track_lane) {
        gp__group_table_free(&index);
        return GP_ENOMEM;
    }
    for (size_t k = 0; k < n_tracks; k++)
        track_lane[k] = SIZE_MAX;
    for (size_t i = 0; i < v->n_g; i++) {
        const gp__gev *g = &v->g[i];
        v->n_rounded_negative += g->rounded_negative;
        if (g->kind != GP_EV_KERNEL && g->kind != GP_EV_MEMCPY && g->kind != GP_EV_MEMSET)
            continue;
        size_t *tl = g->ev->track < n_tracks ? &track_lane[g->ev->track] : NULL;
        struct lane *l = NULL;
        if (tl && *tl < n_lanes && lanes[*tl].stream == g->stream && lanes[*tl].device == g->device)
            l = &lanes[*tl];
        int64_t k = l ? (int64_t)*tl : gp__lane_of(&index, g->device, g->stream);
        if (!l && k >= 0 && (size_t)k < n_lanes)
            l = &lanes[k];
        if (tl && k >= 0)
            *tl = (size_t)k;
        if (!l) {
            if (k < 0 || !(l = GP_PUSH(lanes, n_lanes, cap_lanes))) {
                free(lanes);
                free(track_lane);
                gp__group_table_free(&index);
                return GP_ENOMEM;
            }
            *l = (struct lane){g->stream, g->device, g->ts + g->dur};
            continue;
        }
        if (g->ts < l->end) {
            v->n_stream_overlaps++;
            v->max_stream_overlap = GP_MAX(v->max_stream_overlap, l->end - g->ts);
        }
        l->end = GP_MAX(l->end, g->ts + g->dur);
    }
    free(lanes);
    free(track_lane);
    gp__group_table_free(&index);
    if (v->o->steps == GP_STEPS_ALL && v->n_gsteps > 0) {
        gp_ns first = v->gsteps[0].ts;
        for (size_t i = 1; i < v->n_gsteps; i++)
            first = GP_MIN(first, v->gsteps[i].ts);
        for (size_t i = 0; i < v->n_g && v->g[i].ts < first; i++)
            if (v->g[i].kind == GP_EV_KERNEL || v->g[i].kind == GP_EV_MEMCPY ||
                v->g[i].kind == GP_EV_MEMSET)
                v->before_gpu_step++;
    }
    return GP_OK;
}

/* The CPU scan and the GPU collection read the trace and fill disjoint parts of the view: they run
 * side by side. */
/* The view's tasks: the GPU side (task 0, first: on large_v100_nccl x7 the longest) and the host
 * side's scan in two halves (tasks 1 and 2: on the H100 trace x10, 90 % Python frames on one
 * thread, one scan was about 4 ms while the other thread had done the GPU side in 0.5). */
typedef struct view_tasks {
    gp__view *v;
    const gp__classifier *c;
    cpu_scan scan[2];
    uint64_t *gk, *gv; /* the GPU side of the join (gpu_keys) */
    size_t n_gk;
    bool gk_sorted;
    gp_status st[3];
} view_tasks;

static void run_view_task(void *ctx, size_t i)
{
    view_tasks *vt = ctx;
    if (i == 0) {
        vt->st[0] = collect_gpu(vt->v, vt->c);
        if (vt->st[0] == GP_OK)
            vt->st[0] = gpu_keys(vt->v, &vt->gk, &vt->gv, &vt->n_gk, &vt->gk_sorted);
    } else
        vt->st[i] = scan_cpu(vt->v, (int)i - 1, &vt->scan[i - 1]);
}

gp_status gp__view_build(gp__view *v, const gp_trace *t, const gp_analyze_opts *o,
                         const gp__classifier *c)
{
    memset(v, 0, sizeof(*v));
    v->t = t;
    v->o = o;
    v->c = c;
    v->unit = o->hta ? 1000 : 1;
    view_tasks vt = {.v = v, .c = c, .st = {GP_OK, GP_OK, GP_OK}};
    gp__par_for(3, gp__rank_threads(t, o, 2), run_view_task, &vt);
    gp_status st = vt.st[0] != GP_OK ? vt.st[0] : vt.st[1] != GP_OK ? vt.st[1] : vt.st[2];
    cpu_scan *sc = &vt.scan[0];
    if (st == GP_OK)
        st = join_scans(sc, &vt.scan[1]);
    cpu_scan_free(&vt.scan[1]);
    v->rt = sc->rt; /* the calls, in one scan's order */
    v->n_rt = sc->n_rt;
    v->cap_rt = sc->cap_rt;
    if (st == GP_OK) {
        select_window(v, sc->steps, sc->n_steps);
        st = join_launches(v, sc->lk, sc->lv, sc->n_l, vt.gk, vt.gv, vt.n_gk, vt.gk_sorted);
    }
    free(sc->steps);
    free(sc->lk);
    free(sc->lv);
    free(vt.gk);
    free(vt.gv);
    if (st == GP_OK) {
        select_gpu(v);
        st = sort_gpu(v);
    }
    if (st != GP_OK) {
        gp__view_free(v);
        return st;
    }
    for (size_t i = 0; i < v->n_g; i++) {
        gp__gev *g = &v->g[i];
        if (g->launch) {
            g->launch_s = to_unit_start(v, g->lts);
            v->have_correlation = true;
        }
    }
    if (v->n_g > 0 && !v->have_correlation)
        gp_error_note(&v->note,
                      "No GPU event carries a correlation id matching a launch: host_wait, launch "
                      "delays and queue lengths are unavailable.");
    st = count_rule_breaks(v);
    if (st != GP_OK)
        gp__view_free(v); /* on failure the caller has nothing to free */
    return st;
}
