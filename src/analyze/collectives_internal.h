/* Internals of the collectives analysis: collectives.c matches the kernels across ranks,
 * collectives_figures.c aligns clocks and computes the figures, the summary and the straggler
 * table (docs/internals/analyze.md, "Collectives"). */
#ifndef GP_ANALYZE_COLLECTIVES_INTERNAL_H
#define GP_ANALYZE_COLLECTIVES_INTERNAL_H

#include "gpuprof/collectives.h"

/* One included rank while matching: its trace and what the figures need of it. */
typedef struct gp__coll_rank_in {
    const gp_trace *t;
    int32_t rank;
    gp_ns comm_time;
    int64_t steps;
    const char *device; /* its first device's name ("" if none) */
} gp__coll_rank_in;

/* Aligns the ranks' clocks on the ends of trusted implicit-sync collectives where the offsets are
 * consistent (writes c->ranks[].clock_offset, shifts the members' starts, says so in c->note),
 * then fills every collective's figures, the summary and the straggler table. c->colls hold
 * members with raw starts and durations; c->ranks one row per included rank with rank,
 * comm_time and steps. GP_ENOMEM. */
gp_status gp__coll_figures(gp_collectives *c, const gp__coll_rank_in *in, const gp_coll_opts *o);

#endif
