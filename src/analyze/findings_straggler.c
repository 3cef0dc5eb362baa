/* The straggler finding from the collectives' evidence (docs/analyses.md, "Findings": straggler):
 * on a job with trusted implicit-sync collectives, the rank that made the others wait most
 * (gp_collectives.straggler), how often it arrived last and at which collectives, the wait it
 * caused them in total and per step, and what it was doing instead: the largest class of its own
 * critical path with its top events (findings_cause.c) and the largest cause of its GPU's idle
 * time (idle_causes.c), both read from its rank results, never recomputed. Runs in the job half
 * of the findings (advise.c), on merged data alike for one process, partials and MPI. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "analyze/analyze_internal.h"
#include "gpuprof/collectives.h"

#define MAX_COLLS 3 /* collectives named, by the wait they caused */
#define MAX_PATH 2  /* top events of the dominant path class */

/* A trusted implicit-sync collective: those of the straggler table (collectives_figures.c). */
static bool trusted_sync(const gp_collective *c)
{
    return c->doubt == GP_COLL_OK && c->implicit_sync && c->n_members > 1;
}

static gp_ns caused_at(const gp_collective *c)
{
    gp_ns sum = 0;
    for (size_t k = 0; k < c->n_members; k++)
        sum += c->members[k].wait;
    return sum;
}

/* The collectives rank arrived last at, by the wait they caused (ties: the earlier one), as
 * objects "allreduce #7" (time: the others' summed wait there). */
static void name_collectives(gp_finding *f, const gp_collectives *c, int32_t rank)
{
    size_t picked[MAX_COLLS];
    size_t n = 0;
    for (size_t k = 0; k < MAX_COLLS; k++) {
        size_t best = SIZE_MAX;
        gp_ns best_wait = 0;
        for (size_t i = 0; i < c->n_colls; i++) {
            const gp_collective *col = &c->colls[i];
            bool seen = false;
            for (size_t j = 0; j < n; j++)
                seen |= picked[j] == i;
            if (seen || !trusted_sync(col) || col->last_rank != rank)
                continue;
            gp_ns w = caused_at(col);
            if (best == SIZE_MAX || w > best_wait) {
                best = i;
                best_wait = w;
            }
        }
        if (best == SIZE_MAX || best_wait <= 0)
            return;
        picked[n++] = best;
        const gp_collective *col = &c->colls[best];
        char name[GP_FINDING_NAME_CAP];
        bool grouped = col->group && strcmp(col->group, "all") != 0;
        snprintf(name, sizeof name, "%s #%llu%s%s", gp_coll_type_name(col->type),
                 (unsigned long long)col->index, grouped ? " in group " : "",
                 grouped ? col->group : "");
        gp__advise_object(f, GP_OBJ_COLLECTIVE, name, best_wait, 0);
    }
}

/* The largest cause of rank r's device-wide idle time (idle causes, stream -1): its share as a
 * metric idle_<cause>_share and, name_it, what held it as an object (after the path's: the
 * renderers take the first object after the collectives as the path's top event). */
static void idle_cause(gp_finding *f, const gp_rank_analysis *r, bool name_it)
{
    static const char *const keys[GP_IC_COUNT] = {
        "idle_data_loading_share", "idle_cpu_share",       "idle_sync_share",
        "idle_launch_share",       "idle_comm_wait_share", "idle_unrecorded_share"};
    for (size_t i = 0; i < r->n_idle_causes; i++) {
        const gp_idle_causes *ic = &r->idle_causes[i];
        if (ic->stream != -1 || ic->idle <= 0)
            continue;
        int best = -1;
        for (int k = 0; k < GP_IC_COUNT; k++)
            if (ic->by_cause[k] > 0 && (best < 0 || ic->by_cause[k] > ic->by_cause[best]))
                best = k;
        if (best < 0)
            return;
        gp__advise_metric(f, keys[best], (double)ic->by_cause[best] / (double)ic->idle,
                          GP_FU_RATIO);
        if (name_it && ic->top_what[best] && ic->top_what[best][0])
            gp__advise_object(f, GP_OBJ_FRAME, ic->top_what[best], ic->top_time[best], 0);
        return;
    }
}

gp_status gp__straggler_finding(gp_analysis *a, size_t *cap, bool *done)
{
    const gp_collectives *c = a->collectives;
    *done = c && c->implicit_sync > 0;
    if (!*done || c->straggler < 0)
        return GP_OK;
    const gp_coll_rank *row = NULL;
    for (size_t i = 0; i < c->n_ranks; i++)
        if (c->ranks[i].rank == c->straggler)
            row = &c->ranks[i];
    const gp_rank_analysis *r = NULL;
    gp_ns base = 0; /* the ranks' summed GPU span: the waits are summed over ranks too */
    for (size_t i = 0; i < a->n_ranks; i++) {
        if (a->ranks[i].rank == c->straggler)
            r = &a->ranks[i];
        if (a->ranks[i].temporal.valid)
            base += a->ranks[i].temporal.kernel_time;
    }
    if (!row)
        return GP_OK;
    gp_finding *f = gp__advise_add(a, cap, "straggler", c->straggler);
    if (!f)
        return GP_ENOMEM;
    gp__advise_metric(f, "arrived_last", (double)row->arrived_last, GP_FU_COUNT);
    gp__advise_metric(f, "collectives", (double)row->collectives, GP_FU_COUNT);
    gp__advise_metric(f, "caused_wait", (double)row->caused_total, GP_FU_NS);
    if (row->steps > 0) {
        gp__advise_metric(f, "steps", (double)row->steps, GP_FU_COUNT);
        gp__advise_metric(f, "caused_wait_per_step", row->caused_per_step, GP_FU_NS);
    }
    name_collectives(f, c, c->straggler);
    if (r) {
        double share = NAN;
        gp_finding probe; /* the path's events, appended after the collectives */
        memset(&probe, 0, sizeof probe);
        const char *cls = gp__cause_dominant(r, a->opts.cp_hta, &probe, MAX_PATH, &share);
        bool no_path_events = cls && probe.n_objects == 0;
        if (cls) {
            gp__advise_metric(f, cls, share, GP_FU_RATIO);
            for (size_t i = 0; i < probe.n_objects; i++) {
                gp_finding_object *o =
                    gp__advise_object(f, probe.objects[i].kind, probe.objects[i].name,
                                      probe.objects[i].time, probe.objects[i].count);
                if (o)
                    memcpy(o->frame, probe.objects[i].frame, sizeof o->frame);
            }
        }
        idle_cause(f, r, !no_path_events);
    }
    f->gain_ns = row->caused_total;
    f->type = GP_SUG_PARALLELIZATION;
    f->priority = gp__advise_priority(f->gain_ns, base);
    return GP_OK;
}
