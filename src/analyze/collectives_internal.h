/* Internals of the collectives analysis: collectives.c matches the kernels across ranks,
 * collectives_figures.c aligns clocks and computes the figures, the summary and the straggler
 * table (docs/internals/analyze.md, "Collectives"). */
#ifndef GP_ANALYZE_COLLECTIVES_INTERNAL_H
#define GP_ANALYZE_COLLECTIVES_INTERNAL_H

#include "gpuprof/collectives.h"

/* One collective kernel of a rank, as the matching needs it: taken from a trace
 * (gp__coll_record_of) or from a partial result (analyze/partial.c). Strings are borrowed. */
typedef struct gp__coll_kern {
    gp_ns ts, dur;
    const char *kernel;     /* the kernel's name */
    const char *collective; /* its "Collective name" arg; NULL when absent */
    const char *pg_name;    /* its "Process Group Name" arg; NULL when absent */
    const char *dtype;      /* its dtype arg; "" when absent */
    int64_t in_nelems, out_nelems;
    int32_t group_size;
    bool has_info; /* the kernel carried GPU info (gp_event_gpu_info) */
    uint32_t track;
    uint64_t pos; /* in its track */
} gp__coll_kern;

/* What the collectives analysis needs of one rank: its identity, device, steps and collective
 * kernels in track order. Everything the matching reads comes from here, never from the trace, so
 * that a job's result is the same from traces or from partial results. */
typedef struct gp__coll_record {
    int32_t rank;       /* its rank in the job */
    bool dist_claims;   /* distributedInfo names a rank */
    int32_t dist_rank;  /* that rank (-1 if none) */
    const char *source; /* the file it was read from */
    const char *device; /* its first device's name ("" if none) */
    int32_t n_devices;
    int64_t steps; /* ProfilerStep annotations */
    gp__coll_kern *k;
    size_t n_k;
} gp__coll_record;

/* Fills *out from trace t (whose strings it borrows; its rank is t->rank). *out owns out->k
 * (gp__coll_record_free). GP_ENOMEM. */
gp_status gp__coll_record_of(const gp_trace *t, gp__coll_record *out);
/* Frees the kernels of r (not r). */
void gp__coll_record_free(gp__coll_record *r);
/* gp_collectives_analyze on records (n of them, in any order) instead of traces: the one code
 * path of both. GP_ENOMEM. */
gp_status gp__collectives_of_records(const gp__coll_record *recs, size_t n,
                                     const gp_coll_opts *opts, gp_collectives **out, gp_error *err);

/* One included rank while matching: its record and what the figures need of it. */
typedef struct gp__coll_rank_in {
    const gp__coll_record *rec;
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
