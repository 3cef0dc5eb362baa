/* The sync_in_step rule (docs/analyses.md, "Findings: patterns"): host calls that block until
 * the GPU catches up (cuda/hip *Synchronize, blocking cudaMemcpy / hipMemcpy) inside
 * ProfilerStep windows, grouped by call site: the call and the innermost Python frame around it
 * (the user's line outside torch when there is one). One such call per step (reading the loss)
 * is normal: the estimated gain is the blocked time beyond the longest call of each step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze_internal.h"
#include "core/msort.h"

#define SYNC_MIN 0.01 /* of the step time: blocked time beyond one call per step under this */
#define MAX_NAMED 4
#define DEPTH 256

static bool blocking_call(const char *n)
{
    if (strstr(n, "Synchronize"))
        return true;
    return (strncmp(n, "cudaMemcpy", 10) == 0 || strncmp(n, "hipMemcpy", 9) == 0) &&
           !strstr(n, "Async") && !strstr(n, "ToSymbol") && !strstr(n, "FromSymbol");
}

/* A Python frame at a source line outside torch ("train.py(42): step"). */
static bool user_line(const char *s)
{
    const char *paren = strstr(s, ".py(");
    if (!paren || !strstr(paren, "): "))
        return false;
    return strncmp(s, "torch/", 6) != 0 && !strstr(s, "/torch/");
}

static void add_site(gp__sync_sites *c, const char *call, const char *frame, gp_ns dur)
{
    c->time = gp__sat_add(c->time, dur);
    c->calls++;
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->s[i].call, call) == 0 && strcmp(c->s[i].frame, frame) == 0) {
            c->s[i].time = gp__sat_add(c->s[i].time, dur);
            c->s[i].count++;
            return;
        }
    if (c->n < GP_ARRAY_LEN(c->s))
        c->s[c->n++] = (gp__sync_site){call, frame, dur, 1};
}

/* The ProfilerStep windows of t (user annotations "ProfilerStep#N"), into *steps (malloc'd). */
static gp_status step_windows(const gp_trace *t, gp_ns (**steps)[2], size_t *n)
{
    size_t cap = 0;
    *steps = NULL;
    *n = 0;
    gp__cpu_events it = {t, 0, 0};
    for (const gp_event *e; (e = gp__cpu_events_next(&it));) {
        if (e->kind != GP_EV_USER_ANNOTATION ||
            strncmp(gp_trace_str(t, e->name), "ProfilerStep#", 13) != 0)
            continue;
        gp_ns(*w)[2] = GP_PUSH(*steps, *n, cap);
        if (!w)
            return GP_ENOMEM;
        (*w)[0] = e->ts;
        (*w)[1] = e->ts + e->dur;
    }
    return GP_OK;
}

/* The step window holding ts, or -1. */
static long step_of(gp_ns (*steps)[2], size_t n, gp_ns ts)
{
    for (size_t i = 0; i < n; i++)
        if (ts >= steps[i][0] && ts < steps[i][1])
            return (long)i;
    return -1;
}

/* Walks one CPU thread: a stack of its open Python frames; each blocking call inside a step
 * goes to its site, and to the step's longest call (longest[]). */
static void walk(const gp_trace *t, const gp_track *tr, gp_ns (*steps)[2], size_t n_steps,
                 gp_ns *longest, gp__sync_sites *c)
{
    const gp_event *stack[DEPTH];
    size_t depth = 0;
    for (size_t i = 0; i < tr->n_events; i++) {
        const gp_event *e = &tr->events[i];
        while (depth > 0 && stack[depth - 1]->ts + stack[depth - 1]->dur <= e->ts)
            depth--;
        if (e->kind == GP_EV_PYTHON) {
            if (depth < DEPTH)
                stack[depth++] = e;
            continue;
        }
        if (e->kind != GP_EV_RUNTIME && e->kind != GP_EV_DRIVER)
            continue;
        const char *name = gp_trace_str(t, e->name);
        long s = blocking_call(name) ? step_of(steps, n_steps, e->ts) : -1;
        if (s < 0)
            continue;
        const char *frame = "";
        for (size_t d = depth; d-- > 0;) {
            const char *fn = gp_trace_str(t, stack[d]->name);
            if (!*frame)
                frame = fn; /* innermost of any kind, unless a user line is found */
            if (user_line(fn)) {
                frame = fn;
                break;
            }
        }
        add_site(c, name, frame, e->dur);
        longest[s] = GP_MAX(longest[s], e->dur);
    }
}

static int cmp_site(const void *pa, const void *pb)
{
    const gp__sync_site *a = pa, *b = pb;
    return a->time != b->time ? (a->time > b->time ? -1 : 1) : strcmp(a->call, b->call);
}

gp_status gp__sync_sites_of(const gp_trace *t, gp__sync_sites *c)
{
    memset(c, 0, sizeof *c);
    gp_ns(*steps)[2] = NULL;
    size_t n_steps = 0;
    gp_status st = step_windows(t, &steps, &n_steps);
    gp_ns *longest = calloc(n_steps + 1, sizeof *longest);
    if (st == GP_OK && !longest)
        st = GP_ENOMEM;
    if (st != GP_OK || n_steps == 0)
        goto done;
    for (size_t k = 0; k < t->n_tracks; k++)
        if (t->tracks[k].kind == GP_TRACK_CPU_THREAD)
            walk(t, &t->tracks[k], steps, n_steps, longest, c);
    gp_ns kept = 0;
    for (size_t i = 0; i < n_steps; i++) {
        c->step_time = gp__sat_add(c->step_time, steps[i][1] - steps[i][0]);
        kept = gp__sat_add(kept, longest[i]);
    }
    c->steps = n_steps;
    c->beyond = GP_MAX(0, c->time - kept);
    gp__msort(c->s, c->n, sizeof *c->s, cmp_site);
done:
    free(steps);
    free(longest);
    return st;
}

gp_status gp__findings_syncs(gp_analysis *a, size_t *cap, const gp_rank_analysis *r,
                             const gp__sync_sites *c)
{
    if (c->beyond <= 0 || (double)c->beyond < SYNC_MIN * (double)c->step_time)
        return GP_OK;
    gp_finding *f = gp__advise_add(a, cap, "sync_in_step", r->rank);
    if (!f)
        return GP_ENOMEM;
    gp__advise_sync_sites(f, c, MAX_NAMED);
    gp__advise_metric(f, "syncs", (double)c->calls, GP_FU_COUNT);
    gp__advise_metric(f, "sync_time", (double)c->time, GP_FU_NS);
    gp__advise_metric(f, "steps", (double)c->steps, GP_FU_COUNT);
    gp__advise_metric(f, "step_time", (double)c->step_time, GP_FU_NS);
    gp__advise_metric(f, "sync_share_of_step", (double)c->time / (double)c->step_time, GP_FU_RATIO);
    gp__advise_metric(f, "call_sites", (double)c->n, GP_FU_COUNT);
    f->gain_ns = c->beyond;
    f->type = GP_SUG_ALGORITHM;
    f->priority = gp__advise_priority(f->gain_ns, c->step_time);
    return GP_OK;
}

void gp__advise_sync_sites(gp_finding *f, const gp__sync_sites *c, size_t max)
{
    for (size_t i = 0; i < c->n && i < max; i++) {
        gp_finding_object *o =
            gp__advise_object(f, GP_OBJ_CALL, c->s[i].call, c->s[i].time, c->s[i].count);
        if (o)
            snprintf(o->frame, sizeof o->frame, "%s", c->s[i].frame);
    }
}
