/* Timeline critical-path overlay: the critical path of each rank (gp__analyze_critical_path on
 * the rank's view, nothing else of an analysis) turned into flags on the timeline's events, a
 * legend per rank and the edges between drawn rows. Events are found by address (the path holds
 * pointers into the trace's tracks), never by name. */
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze_internal.h"
#include "analyze/timeline_internal.h"
#include "core/util.h"
#include "gpuprof/analyze.h"

/* The track and index of e in t; false when e is not one of t's events. */
static bool locate(const gp_trace *t, const gp_event *e, uint32_t *track, uint32_t *idx)
{
    for (size_t i = 0; i < t->n_tracks; i++) {
        const gp_track *tr = &t->tracks[i];
        if (tr->n_events && e >= tr->events && e < tr->events + tr->n_events) {
            *track = (uint32_t)i;
            *idx = (uint32_t)(e - tr->events);
            return true;
        }
    }
    return false;
}

/* The row of (trace ti, track), UINT32_MAX when that track is not drawn (--no-cpu, no spans). */
static uint32_t row_of(const gp_timeline *tl, uint32_t ti, uint32_t track)
{
    for (size_t r = 0; r < tl->n_rows; r++)
        if (tl->rows[r].trace == ti && tl->rows[r].track == track && tl->rows[r].depth)
            return (uint32_t)r;
    return UINT32_MAX;
}

/* Flags the events of one rank's paths and appends its legend and edges. */
static gp_status mark_rank(gp_timeline *tl, uint32_t ti, const gp_rank_analysis *ra,
                           size_t *cap_links)
{
    const gp_trace *t = tl->traces[ti];
    gp_tl_cp_rank *lg = &tl->cp_ranks[tl->n_cp_ranks++];
    lg->rank = t->rank;
    for (size_t p = 0; p < ra->n_critical_paths; p++) {
        const gp_critical_path *cp = &ra->critical_paths[p];
        if (!cp->valid)
            continue;
        lg->n_paths++;
        lg->length = gp__sat_add(lg->length, cp->length);
        for (int c = 0; c < GP_CP_COUNT; c++)
            lg->by_class[c] = gp__sat_add(lg->by_class[c], cp->by_class[c]);
        for (size_t i = 0; i < cp->n_events; i++) {
            uint32_t track, idx, r;
            if (!locate(t, cp->events[i], &track, &idx) ||
                (r = row_of(tl, ti, track)) == UINT32_MAX)
                continue;
            gp_tl_row *row = &tl->rows[r];
            if (!row->on_path &&
                !(row->on_path = calloc(t->tracks[track].n_events, sizeof *row->on_path)))
                return GP_ENOMEM;
            tl->n_cp_events += row->on_path[idx] == 0;
            row->on_path[idx] = 1;
        }
        for (size_t i = 0; i < cp->n_links; i++) {
            const gp_chrome_link *l = &cp->links[i];
            gp_tl_link k = {.src_end = l->src_end, .dst_end = l->dst_end, .type = l->type};
            uint32_t st, dt;
            if (!locate(t, l->src, &st, &k.src_ev) || !locate(t, l->dst, &dt, &k.dst_ev) ||
                (k.src_row = row_of(tl, ti, st)) == UINT32_MAX ||
                (k.dst_row = row_of(tl, ti, dt)) == UINT32_MAX)
                continue;
            gp_tl_link *slot = GP_PUSH(tl->cp_links, tl->n_cp_links, *cap_links);
            if (!slot)
                return GP_ENOMEM;
            *slot = k;
        }
    }
    return GP_OK;
}

/* Frees what gp__analyze_critical_path put in r. */
static void free_paths(gp_rank_analysis *r)
{
    for (size_t i = 0; i < r->n_critical_paths; i++) {
        free(r->critical_paths[i].top);
        free(r->critical_paths[i].events);
        free(r->critical_paths[i].links);
    }
    free(r->critical_paths);
}

gp_status gp__timeline_critical_path(gp_timeline *tl)
{
    tl->critical_path = true;
    if (tl->n_traces == 0)
        return GP_OK;
    if (!(tl->cp_ranks = calloc(tl->n_traces, sizeof *tl->cp_ranks)))
        return GP_ENOMEM;
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    gp__classifier *c = NULL;
    gp_status st = gp__classifier_new(&o, &c, NULL);
    size_t cap_links = 0;
    for (size_t i = 0; i < tl->n_traces && st == GP_OK; i++) {
        gp__view v;
        if ((st = gp__view_build(&v, tl->traces[i], &o, c)) != GP_OK)
            break;
        gp_rank_analysis r = {.rank = tl->traces[i]->rank};
        st = gp__analyze_critical_path(&v, &r);
        if (st == GP_OK)
            st = mark_rank(tl, (uint32_t)i, &r, &cap_links);
        free_paths(&r);
        gp__view_free(&v);
    }
    gp__classifier_free(c);
    return st;
}
