/* Timeline collectives: the collectives of a job matched across ranks (the collectives analysis,
 * nothing else) turned into a collective index on each member kernel of the timeline's rows, so
 * that selecting one highlights it on every rank. A member is found by its rank, raw start (the
 * aligned start plus the rank's clock offset) and duration among the rank's GPU-stream events. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze_internal.h"
#include "analyze/timeline_internal.h"
#include "gpuprof/collectives.h"

/* The row drawing event idx of track `track` of trace ti; UINT32_MAX when none. */
static uint32_t row_of(const gp_timeline *tl, uint32_t ti, uint32_t track)
{
    for (size_t r = 0; r < tl->n_rows; r++)
        if (tl->rows[r].trace == ti && tl->rows[r].track == track && tl->rows[r].depth)
            return (uint32_t)r;
    return UINT32_MAX;
}

/* Marks the kernel of member m (raw start ts) of collective number id in trace ti's GPU rows. */
static gp_status mark(gp_timeline *tl, uint32_t ti, gp_ns ts, gp_ns dur, uint32_t id)
{
    const gp_trace *t = tl->traces[ti];
    for (size_t k = 0; k < t->n_tracks; k++) {
        const gp_track *tr = &t->tracks[k];
        if (tr->kind != GP_TRACK_GPU_STREAM)
            continue;
        size_t lo = gp__track_lower_bound(tr, ts);
        for (; lo < tr->n_events && tr->events[lo].ts == ts; lo++) {
            if (tr->events[lo].dur != dur || tr->events[lo].kind != GP_EV_KERNEL)
                continue;
            uint32_t r = row_of(tl, ti, (uint32_t)k);
            if (r == UINT32_MAX)
                return GP_OK;
            gp_tl_row *row = &tl->rows[r];
            if (!row->coll && !(row->coll = calloc(tr->n_events, sizeof *row->coll)))
                return GP_ENOMEM;
            row->coll[lo] = id;
            return GP_OK;
        }
    }
    return GP_OK;
}

gp_status gp__timeline_collectives(gp_timeline *tl)
{
    gp__ranks in = {tl->traces, tl->n_traces, false};
    gp_collectives *c = NULL;
    gp_error err = {0};
    gp_status s = gp__collectives_of_ranks(&in, NULL, &c, &err);
    if (s != GP_OK)
        return s == GP_ENOMEM ? s : GP_OK; /* nothing to highlight */
    if (c->n_colls && !(tl->colls = calloc(c->n_colls, sizeof *tl->colls)))
        s = GP_ENOMEM;
    for (size_t i = 0; s == GP_OK && i < c->n_colls; i++) {
        const gp_collective *col = &c->colls[i];
        gp_tl_coll *o = &tl->colls[tl->n_colls++];
        snprintf(o->name, sizeof o->name, "%s", col->name ? col->name : "");
        snprintf(o->group, sizeof o->group, "%s", col->group ? col->group : "");
        o->index = col->index;
        o->n_members = (uint32_t)col->n_members;
        o->latency = col->latency;
        o->start_skew = col->start_skew;
        o->trusted = col->doubt == GP_COLL_OK;
        for (size_t k = 0; s == GP_OK && k < col->n_members; k++) {
            const gp_coll_member *m = &col->members[k];
            gp_ns off = 0;
            for (size_t r = 0; r < c->n_ranks; r++)
                if (c->ranks[r].rank == m->rank)
                    off = c->ranks[r].clock_offset;
            for (uint32_t ti = 0; s == GP_OK && ti < tl->n_traces; ti++)
                if (tl->traces[ti]->rank == m->rank)
                    s = mark(tl, ti, m->start + off, m->dur, (uint32_t)i + 1);
        }
    }
    gp_collectives_free(c);
    return s;
}
