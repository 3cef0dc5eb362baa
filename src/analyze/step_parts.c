/* TensorBoard's step-time breakdown (docs/analyses.md, "Step breakdown"): each instant of a step
 * counted once, by precedence kernel > memcpy > memset > communication > runtime > dataloader >
 * cpu_exec > other. One definition, shared by the analyses (gp_rank_analysis.step_parts) and the
 * dashboard's Steps bar (dashboard_parts.c). */
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze_internal.h"

static const char *const default_data_load[] = {"DataLoader", "dataloader"};

bool gp__is_data_load(const char *name, const char *const *pat, size_t n_pat)
{
    if (!pat || n_pat == 0) {
        pat = default_data_load;
        n_pat = sizeof default_data_load / sizeof *default_data_load;
    }
    for (size_t i = 0; i < n_pat; i++)
        if (pat[i] && *pat[i] && strstr(name, pat[i]))
            return true;
    return false;
}

/* The part an event's time counts to, or -1 when it counts to none (then "other"). cache holds
 * one byte per string id for kernels (0xff: not classified yet), dl one per string id for CPU
 * names (0 not looked at, 1 data loading, 2 not). */
static int part_of(const gp__step_split *s, const gp_event *e, uint8_t *cache, uint8_t *dl,
                   size_t n_str)
{
    const gp_trace *t = s->t;
    switch ((gp_event_kind)e->kind) {
    case GP_EV_KERNEL: {
        uint8_t ty = e->name < n_str ? cache[e->name] : 0xff;
        if (ty == 0xff) {
            ty = (uint8_t)gp__classify(s->c, gp_trace_str(t, e->name), GP_EV_KERNEL);
            if (e->name < n_str)
                cache[e->name] = ty;
        }
        return ty == GP_KT_COMMUNICATION ? GP_SP_COMMUNICATION : GP_SP_KERNEL;
    }
    case GP_EV_MEMCPY:
        return GP_SP_MEMCPY;
    case GP_EV_MEMSET:
        return GP_SP_MEMSET;
    case GP_EV_RUNTIME:
    case GP_EV_DRIVER:
        return GP_SP_RUNTIME;
    case GP_EV_CPU_OP:
    case GP_EV_USER_ANNOTATION: {
        uint8_t is_dl = e->name < n_str ? dl[e->name] : 0;
        if (!is_dl) {
            is_dl =
                gp__is_data_load(gp_trace_str(t, e->name), s->data_load, s->n_data_load) ? 1 : 2;
            if (e->name < n_str)
                dl[e->name] = is_dl;
        }
        if (is_dl == 1)
            return GP_SP_DATALOADER;
        return e->kind == GP_EV_CPU_OP ? GP_SP_CPU_EXEC : -1;
    }
    default:
        return -1;
    }
}

gp_status gp__step_split_init(gp__step_split *s, const gp_trace *t, const gp__classifier *c,
                              const char *const *data_load, size_t n_data_load)
{
    memset(s, 0, sizeof *s);
    s->t = t;
    s->c = c;
    s->data_load = data_load;
    s->n_data_load = n_data_load;
    size_t n_str = gp_trace_str_count(t) + 1;
    uint8_t *cache = malloc(n_str), *dl = calloc(n_str, 1);
    if (!cache || !dl) {
        free(cache);
        free(dl);
        return GP_ENOMEM;
    }
    memset(cache, 0xff, n_str);
    gp_status st = GP_OK;
    for (size_t k = 0; k < t->n_tracks && st == GP_OK; k++) {
        const gp_track *tr = &t->tracks[k];
        if (tr->kind == GP_TRACK_COUNTER)
            continue;
        /* Per track, each part's overlapping events (nested ops) are merged before they are
         * pushed: the track is sorted by start, so a part's open interval only grows. */
        gp__ivl open[GP_SP_OTHER];
        bool is_open[GP_SP_OTHER] = {false};
        for (size_t i = 0; i < tr->n_events && st == GP_OK; i++) {
            const gp_event *e = &tr->events[i];
            if (e->dur <= 0)
                continue;
            int p = part_of(s, e, cache, dl, n_str);
            if (p < 0)
                continue;
            if (is_open[p] && e->ts <= open[p].e) {
                open[p].e = GP_MAX(open[p].e, e->ts + e->dur);
                continue;
            }
            if (is_open[p])
                st = gp__ivls_push(&s->u[p], open[p].s, open[p].e);
            open[p] = (gp__ivl){e->ts, e->ts + e->dur};
            is_open[p] = true;
        }
        for (int p = 0; p < GP_SP_OTHER && st == GP_OK; p++)
            if (is_open[p])
                st = gp__ivls_push(&s->u[p], open[p].s, open[p].e);
    }
    free(cache);
    free(dl);
    for (int p = 0; p < GP_SP_OTHER && st == GP_OK; p++)
        if ((st = gp__ivls_sort(&s->u[p])) == GP_OK)
            (void)gp__ivls_union_sorted(&s->u[p]);
    if (st != GP_OK)
        gp__step_split_free(s);
    return st;
}

void gp__step_split_free(gp__step_split *s)
{
    for (int p = 0; p < GP_SP_OTHER; p++)
        gp__ivls_free(&s->u[p]);
}

/* Whether interval x ends by t. */
static inline bool ivl_ends_by(const gp__ivl *x, gp_ns t)
{
    return x->e <= t;
}
/* ivls_ending_by(v, n, t): index of the first interval of a sorted disjoint list ending after t. */
GP__DEFINE_LOWER_BOUND(ivls_ending_by, gp__ivl, gp_ns, ivl_ends_by)

/* The interval of part p current at t (the first ending after t, from pos[p] on) into cs[p], ce[p];
 * both INT64_MAX when none is left. */
static inline void current_ivl(const gp__ivls *u, size_t *pos, gp_ns t, gp_ns *cs, gp_ns *ce)
{
    size_t i = *pos;
    while (i < u->n && u->v[i].e <= t)
        i++;
    *pos = i;
    *cs = i < u->n ? u->v[i].s : INT64_MAX;
    *ce = i < u->n ? u->v[i].e : INT64_MAX;
}

/* The sweep moves t from boundary to boundary of the part that counts at t (best, the first part
 * covering t) and of the parts above it: until the best part's interval ends or a part above it
 * starts, nothing changes what counts, so the parts below are not looked at (their positions catch
 * up when they are; each list is walked once). A sweep over every part's boundaries looked at all
 * seven parts at each of them: most of the step breakdown's time on large_v100_nccl. */
void gp__step_split_run(const gp__step_split *s, gp_ns start, gp_ns end, gp_ns part[GP_SP_COUNT])
{
    memset(part, 0, GP_SP_COUNT * sizeof *part);
    size_t pos[GP_SP_OTHER];
    gp_ns cs[GP_SP_OTHER], ce[GP_SP_OTHER];
    for (int p = 0; p < GP_SP_OTHER; p++) {
        pos[p] = ivls_ending_by(s->u[p].v, s->u[p].n, start);
        current_ivl(&s->u[p], &pos[p], start, &cs[p], &ce[p]);
    }
    gp_ns t = start;
    while (t < end) {
        int best = GP_SP_OTHER;
        gp_ns next = end;
        for (int p = 0; p < GP_SP_OTHER; p++) {
            if (ce[p] <= t)
                current_ivl(&s->u[p], &pos[p], t, &cs[p], &ce[p]);
            if (cs[p] <= t) { /* p counts until its interval ends or a part above starts */
                best = p;
                next = GP_MIN(next, ce[p]);
                break;
            }
            next = GP_MIN(next, cs[p]);
        }
        part[best] += next - t;
        t = next;
    }
}

gp_status gp__profiler_steps(const gp_trace *t, gp__step **out, size_t *n_out)
{
    gp__step *steps = NULL;
    size_t n = 0, cap = 0, n_str = gp_trace_str_count(t) + 1;
    uint8_t *is_step = calloc(n_str, 1); /* per name: 0 not looked at, 1 no, 2 ProfilerStep# */
    if (!is_step)
        return GP_ENOMEM;
    gp__cpu_events it = {t, 0, 0};
    for (const gp_event *e; (e = gp__cpu_events_next(&it));) {
        if (e->kind != GP_EV_USER_ANNOTATION && e->kind != GP_EV_CPU_OP)
            continue;
        if (e->name >= n_str) /* no such string: its name reads "" */
            continue;
        if (!is_step[e->name])
            is_step[e->name] = strncmp(gp_trace_str(t, e->name), "ProfilerStep#", 13) == 0 ? 2 : 1;
        if (is_step[e->name] != 2)
            continue;
        const char *nm = gp_trace_str(t, e->name);
        gp__step *s = GP_PUSH(steps, n, cap);
        if (!s) {
            free(is_step);
            free(steps);
            return GP_ENOMEM;
        }
        *s = (gp__step){strtoll(nm + 13, NULL, 10), e->ts, e->ts + e->dur, false};
    }
    /* By start (insertion sort: a trace holds a handful of steps, each track's in order). */
    for (size_t i = 1; i < n; i++) {
        gp__step x = steps[i];
        size_t j = i;
        for (; j > 0 && steps[j - 1].ts > x.ts; j--)
            steps[j] = steps[j - 1];
        steps[j] = x;
    }
    free(is_step);
    *out = steps;
    *n_out = n;
    return GP_OK;
}

/* The steps the selection keeps (opts.steps, as view.c selects them), or the whole trace. */
static bool step_kept(const gp__view *v, const gp__step *s)
{
    const gp_analyze_opts *o = v->o;
    if (o->steps == GP_STEPS_RANGE)
        return s->num >= o->step_first && s->num <= o->step_last;
    return gp__view_cpu_kept(v, s->ts);
}

gp_status gp__analyze_step_parts(const gp__view *v, gp_rank_analysis *r)
{
    gp__step *steps = NULL;
    size_t n = 0;
    gp_status st = gp__profiler_steps(v->t, &steps, &n);
    if (st != GP_OK)
        return st;
    gp__step whole = {-1, 0, 0, false};
    if (n == 0) {
        gp_trace_span(v->t, &whole.ts, &whole.end);
        if (gp_trace_event_count(v->t) > 0) {
            steps = NULL;
            n = 1;
        }
    }
    const gp__step *list = steps ? steps : &whole;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        kept += !steps || step_kept(v, &list[i]);
    if (kept == 0) {
        free(steps);
        return GP_OK;
    }
    gp__step_split sp;
    if ((st = gp__step_split_init(&sp, v->t, v->c, v->o->data_load, v->o->n_data_load)) != GP_OK) {
        free(steps);
        return st;
    }
    r->step_parts = calloc(kept, sizeof *r->step_parts);
    if (!r->step_parts)
        st = GP_ENOMEM;
    for (size_t i = 0; i < n && st == GP_OK; i++) {
        if (steps && !step_kept(v, &list[i]))
            continue;
        gp_step_breakdown *b = &r->step_parts[r->n_step_parts++];
        b->step = list[i].num;
        b->start = list[i].ts;
        b->end = list[i].end;
        gp__step_split_run(&sp, b->start, b->end, b->part);
    }
    gp__step_split_free(&sp);
    free(steps);
    return st;
}
