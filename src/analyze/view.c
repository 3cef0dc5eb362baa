/* The per-rank view: step selection, the mode's GPU event set and rounding, classification and
 * the correlation join. See analyze_internal.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze_internal.h"

void gp__note(char *note, size_t cap, const char *fmt, ...)
{
    size_t len = strlen(note);
    if (len + 2 >= cap)
        return;
    if (len) {
        note[len++] = ' ';
        note[len] = '\0';
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(note + len, cap - len, fmt, ap);
    va_end(ap);
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return -floor_div(-a, b);
}

/* Start of an interval in the view's unit: HTA rounds starts up to the microsecond. */
static int64_t to_unit_start(const gp__view *v, gp_ns t)
{
    if (v->unit == 1)
        return t;
    return ceil_div(t - v->t->base_time_ns, v->unit);
}

static int64_t to_unit_end(const gp__view *v, gp_ns t)
{
    if (v->unit == 1)
        return t;
    return floor_div(t - v->t->base_time_ns, v->unit);
}

static bool is_profiler_step(const char *name, int64_t *num)
{
    if (strncmp(name, "ProfilerStep", 12) != 0)
        return false;
    const char *p = strchr(name, '#');
    *num = p ? strtoll(p + 1, NULL, 10) : -1;
    return true;
}

static int cmp_gev(const void *pa, const void *pb)
{
    const gp__gev *a = pa, *b = pb;
    if (a->s != b->s)
        return a->s < b->s ? -1 : 1;
    if (a->e != b->e)
        return a->e > b->e ? -1 : 1;
    return (a->ev > b->ev) - (a->ev < b->ev);
}

const gp_event *gp__view_launch(const gp__view *v, int64_t correlation)
{
    uint64_t ref;
    if (correlation == 0 || !gp__imap_get(&v->corr, correlation, &ref))
        return NULL;
    const gp_track *tr = &v->t->tracks[ref >> 32];
    return &tr->events[ref & 0xffffffffu];
}

static bool in_hta_set(const gp__view *v, const gp_event *ev, int64_t stream)
{
    if (ev->flags & (GP_EVF_INSTANT | GP_EVF_NO_DUR))
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

static bool in_default_set(const gp_event *ev)
{
    return ev->kind == GP_EV_KERNEL || ev->kind == GP_EV_MEMCPY || ev->kind == GP_EV_MEMSET;
}

void gp__view_free(gp__view *v)
{
    free(v->g);
    gp__imap_free(&v->corr);
    memset(v, 0, sizeof(*v));
}

/* Pass over CPU tracks: profiler steps and the correlation map. */
static gp_status scan_cpu(gp__view *v, gp__step **steps, size_t *n_steps)
{
    const gp_trace *t = v->t;
    size_t n_launch = 0, cap_steps = 0;
    for (size_t k = 0; k < t->n_tracks; k++) {
        const gp_track *tr = &t->tracks[k];
        for (size_t i = 0; i < tr->n_events; i++) {
            const gp_event *ev = &tr->events[i];
            if ((ev->kind == GP_EV_RUNTIME || ev->kind == GP_EV_DRIVER) && ev->correlation != 0)
                n_launch++;
        }
    }
    gp_status st = gp__imap_init(&v->corr, n_launch);
    if (st != GP_OK)
        return st;
    for (size_t k = 0; k < t->n_tracks; k++) {
        const gp_track *tr = &t->tracks[k];
        for (size_t i = 0; i < tr->n_events; i++) {
            const gp_event *ev = &tr->events[i];
            int64_t num;
            if ((ev->kind == GP_EV_RUNTIME || ev->kind == GP_EV_DRIVER) && ev->correlation != 0) {
                uint64_t old;
                if (!gp__imap_get(&v->corr, ev->correlation, &old)) {
                    st = gp__imap_put(&v->corr, ev->correlation, ((uint64_t)k << 32) | i);
                    if (st != GP_OK)
                        return st;
                }
            } else if ((ev->kind == GP_EV_USER_ANNOTATION || ev->kind == GP_EV_CPU_OP) &&
                       is_profiler_step(gp_trace_str(t, ev->name), &num)) {
                gp__step *s = GP_PUSH(*steps, *n_steps, cap_steps);
                if (!s)
                    return GP_ENOMEM;
                s->num = num;
                s->ts = ev->ts;
                s->end = ev->ts + ev->dur;
            }
        }
    }
    return GP_OK;
}

static void select_window(gp__view *v, const gp__step *steps, size_t n_steps)
{
    const gp_analyze_opts *o = v->o;
    v->cpu_lo = INT64_MIN;
    v->cpu_hi = INT64_MAX;
    v->steps_total = (int64_t)n_steps;
    v->steps_kept = (int64_t)n_steps;
    if (o->steps == GP_STEPS_HTA) {
        if (n_steps < 2) {
            if (n_steps == 0)
                gp__note(v->note, sizeof(v->note),
                         "No ProfilerStep in the trace: --steps hta keeps every event.");
            else
                gp__note(v->note, sizeof(v->note),
                         "One ProfilerStep only: --steps hta keeps every event.");
            return;
        }
        gp_ns last = steps[0].ts;
        for (size_t i = 1; i < n_steps; i++)
            last = GP_MAX(last, steps[i].ts);
        v->cpu_hi = last;
        v->steps_kept = 0;
        for (size_t i = 0; i < n_steps; i++)
            v->steps_kept += steps[i].ts < last;
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
            gp__note(v->note, sizeof(v->note),
                     "No ProfilerStep#%lld..#%lld in the trace (%zu steps): nothing selected.",
                     (long long)o->step_first, (long long)o->step_last, n_steps);
            v->cpu_lo = v->cpu_hi = 0;
            return;
        }
        v->cpu_lo = lo;
        v->cpu_hi = hi;
    }
}

static gp_status collect_gpu(gp__view *v, const gp__classifier *c, bool time_window_only)
{
    const gp_trace *t = v->t;
    const gp_analyze_opts *o = v->o;
    bool filtering = v->cpu_lo != INT64_MIN || v->cpu_hi != INT64_MAX;
    size_t n_str = gp_trace_str_count(t) + 1;
    uint8_t *cache = malloc(n_str);
    if (!cache)
        return GP_ENOMEM;
    memset(cache, 0xff, n_str);
    v->n_g = 0;
    for (size_t k = 0; k < t->n_tracks; k++) {
        const gp_track *tr = &t->tracks[k];
        if (tr->kind == GP_TRACK_CPU_THREAD || tr->kind == GP_TRACK_COUNTER)
            continue;
        for (size_t i = 0; i < tr->n_events; i++) {
            const gp_event *ev = &tr->events[i];
            if (!gp_event_kind_is_gpu((gp_event_kind)ev->kind))
                continue;
            const gp_gpu_info *gi = gp_event_gpu_info(t, ev);
            int64_t stream = gi ? gi->stream : tr->stream;
            if (o->hta ? !in_hta_set(v, ev, stream) : !in_default_set(ev))
                continue;
            const gp_event *launch = gp__view_launch(v, ev->correlation);
            if (filtering) {
                bool keep;
                if (time_window_only)
                    keep = gp__view_cpu_kept(v, ev->ts);
                else if (o->steps == GP_STEPS_HTA)
                    keep = launch && launch->ts < v->cpu_hi;
                else
                    keep = launch ? gp__view_cpu_kept(v, launch->ts) : gp__view_cpu_kept(v, ev->ts);
                if (!keep)
                    continue;
            }
            gp__gev *g = GP_PUSH(v->g, v->n_g, v->cap_g);
            if (!g) {
                free(cache);
                return GP_ENOMEM;
            }
            g->ev = ev;
            g->s = to_unit_start(v, ev->ts);
            g->e = to_unit_end(v, ev->ts + ev->dur);
            g->launch = launch;
            g->launch_s = launch ? to_unit_start(v, launch->ts) : GP__NO_TIME;
            g->stream = stream;
            g->device = gi ? gi->device : tr->device;
            if (o->hta)
                g->device = -1;
            g->kind = ev->kind;
            uint8_t ty = ev->name < n_str ? cache[ev->name] : 0xff;
            if (ty == 0xff) {
                ty = (uint8_t)gp__classify(c, gp_trace_str(t, ev->name), (gp_event_kind)ev->kind);
                if (ev->name < n_str)
                    cache[ev->name] = ty;
            }
            if (!o->hta && ty == GP_KT_COMPUTATION && gi && gi->collective != 0 && o->n_rules == 0)
                ty = GP_KT_COMMUNICATION;
            g->type = ty;
            if (launch)
                v->have_correlation = true;
        }
    }
    free(cache);
    return GP_OK;
}

gp_status gp__view_build(gp__view *v, const gp_trace *t, const gp_analyze_opts *o,
                         const gp__classifier *c)
{
    memset(v, 0, sizeof(*v));
    v->t = t;
    v->o = o;
    v->unit = o->hta ? 1000 : 1;
    gp__step *steps = NULL;
    size_t n_steps = 0;
    gp_status st = scan_cpu(v, &steps, &n_steps);
    if (st == GP_OK) {
        select_window(v, steps, n_steps);
        st = collect_gpu(v, c, false);
    }
    if (st == GP_OK && v->n_g == 0 && o->steps == GP_STEPS_HTA && v->cpu_hi != INT64_MAX) {
        /* HTA keeps only GPU work whose launch it kept; without correlation ids that is nothing
         * (HTA then fails). Select by time instead and say so. */
        st = collect_gpu(v, c, true);
        if (st == GP_OK && v->n_g > 0) {
            v->hta_fallback = true;
            gp__note(v->note, sizeof(v->note),
                     "No GPU event is linked to a launch by correlation id: --steps hta selected "
                     "GPU work by time (start before the last ProfilerStep) instead.");
        }
    }
    free(steps);
    if (st != GP_OK) {
        gp__view_free(v);
        return st;
    }
    if (v->n_g > 1)
        qsort(v->g, v->n_g, sizeof(*v->g), cmp_gev);
    for (size_t k = 0; k < t->n_tracks; k++) {
        const gp_track *tr = &t->tracks[k];
        if (tr->kind != GP_TRACK_CPU_THREAD)
            continue;
        for (size_t i = 0; i < tr->n_events; i++)
            v->cpu_events += gp__view_cpu_kept(v, tr->events[i].ts);
    }
    if (v->n_g > 0 && !v->have_correlation)
        gp__note(v->note, sizeof(v->note),
                 "No GPU event carries a correlation id matching a launch: host_wait, launch "
                 "delays and queue lengths are unavailable.");
    return GP_OK;
}
