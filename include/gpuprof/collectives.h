/* gpuprof collectives: the same collective matched across the ranks of a job, its latency,
 * bandwidth and arrival skew, and the rank everyone waits for (docs/analyses.md, "Collectives").
 *
 * A collective kernel is a GPU kernel whose name contains "nccl" or "rccl" (any case) or
 * "cross_device_reduce", or that carries a "Collective name" arg, and that has a correlation or
 * External id (TraceLens's rule). Kernels are matched across ranks by process group
 * ("Process Group Name") and position in that group, ordered by GPU start; a job without any
 * process-group metadata (2023 traces) is matched by the order of its collective kernels (group
 * "all"). Every figure is computed from GPU timestamps, after the clock alignment below.
 *
 * Ownership: a gp_collectives owns its arrays (gp_collectives_free); its strings point into the
 * traces' string tables, so the job must outlive it. Thread-safety: a finished result may be read
 * from several threads. */
#ifndef GPUPROF_COLLECTIVES_H
#define GPUPROF_COLLECTIVES_H

#include <stdbool.h>
#include <stdint.h>

#include "gpuprof/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The class of a collective, from its "Collective name" arg (TraceLens's spellings) or, without
 * one, from the kernel name (ncclKernel_AllReduce_..., ncclDevKernel_SendRecv, ...). */
typedef enum gp_coll_type {
    GP_COLL_UNKNOWN = 0,
    GP_COLL_ALLREDUCE,
    GP_COLL_REDUCESCATTER,
    GP_COLL_ALLGATHER,
    GP_COLL_ALLTOALL,
    GP_COLL_ALLTOALLV,
    GP_COLL_BROADCAST,
    GP_COLL_REDUCE,
    GP_COLL_SENDRECV, /* send, recv, SendRecv (point to point) */
    GP_COLL_BARRIER,
    GP_COLL_OTHER, /* a name outside the lists (gather, scatter, allgather_coalesced, ...) */
    GP_COLL_TYPE_COUNT
} gp_coll_type;

/* "unknown", "allreduce", "reducescatter", "allgather", "alltoall", "alltoallv", "broadcast",
 * "reduce", "sendrecv", "barrier", "other". */
GP_EXTERN const char *gp_coll_type_name(gp_coll_type t);
/* True for the implicit-sync classes (allreduce, reducescatter, allgather, alltoall): no rank can
 * finish before every rank has started, so a rank's earlier start is waiting. */
GP_EXTERN bool gp_coll_type_implicit_sync(gp_coll_type t);
/* The nccl-tests bus-bandwidth factor of a class for n ranks: allreduce 2(n-1)/n; reducescatter,
 * allgather, alltoall(v) (n-1)/n; broadcast, reduce, sendrecv 1; NaN for the others or n < 1. */
GP_EXTERN double gp_coll_bus_factor(gp_coll_type t, int32_t n);
/* Bytes per element of a PyTorch dtype name ("Float" 4, "BFloat16" 2, ...), -1 when unknown. */
GP_EXTERN int32_t gp_coll_dtype_bytes(const char *dtype);

/* One rank's kernel of a matched collective. Times are on the job's aligned clock. */
typedef struct gp_coll_member {
    int32_t rank;
    gp_ns start, dur;
    gp_ns wait;       /* latest start among the members - start (>= 0) */
    uint32_t arrival; /* 0 = first to start; equal starts: the lower rank first */
} gp_coll_member;

/* Why a matched collective is not trusted (it is listed, but kept out of the summary and the
 * straggler table). */
typedef enum gp_coll_doubt {
    GP_COLL_OK = 0,
    GP_COLL_INCOMPLETE, /* fewer members than its group has ranks (a crashed or cut trace) */
    GP_COLL_MISMATCH,   /* the members disagree on name, size or dtype here or earlier in the group:
                           the ordinal match is no longer known to pair the same operation */
} gp_coll_doubt;

/* One collective matched across ranks. */
typedef struct gp_collective {
    const char *group;  /* process-group name; "all" when matched by kernel order */
    uint64_t index;     /* 0-based position in its group */
    const char *name;   /* the "Collective name" arg, or the kernel-derived class name */
    const char *kernel; /* the first member's kernel name */
    gp_coll_type type;
    /* Its class synchronises; or (sync_from_ends) matched by kernel order, a SendRecv or unnamed
     * kernel on every rank whose ends all lie within 10 us (an all_to_all runs as grouped
     * send/recv): taken as synchronising, and said in the note. */
    bool implicit_sync;
    bool sync_from_ends;
    const char *dtype;             /* "" when unknown */
    int64_t in_nelems, out_nelems; /* -1 when unknown */
    int32_t group_size;            /* "Group size", else the number of members */
    int64_t bytes;                 /* message size: Out for allgather, In otherwise; -1 unknown */
    gp_ns latency;                 /* shortest member duration (the rest is waiting) */
    gp_ns start_skew, end_skew;    /* latest - earliest start; latest - earliest end */
    double avg_wait;               /* ns, mean of the members' waits */
    int32_t first_rank, last_rank; /* earliest / latest to start (ties: the lower rank) */
    double algo_gbps, bus_gbps;    /* GB/s (10^9 B/s) over latency; NaN without a size */
    int8_t inter_node;             /* 1 members span nodes, 0 one node, -1 unknown */
    double peak_gbps;              /* the link's per-direction peak where known, else NaN */
    gp_coll_doubt doubt;
    gp_coll_member *members; /* by rank */
    size_t n_members;
} gp_collective;

/* A row of the summary: trusted collectives grouped by (name, bytes, dtype), by total latency. */
typedef struct gp_coll_summary {
    const char *name;
    const char *dtype;
    int64_t bytes;
    int32_t group_size;
    uint64_t count;
    gp_ns latency_total, latency_min, latency_max;
    double latency_mean, start_skew_mean, end_skew_mean, avg_wait_mean; /* ns */
    gp_ns start_skew_max;
    double algo_gbps_mean, bus_gbps_mean; /* NaN without sizes */
} gp_coll_summary;

/* One rank in the straggler table (trusted implicit-sync collectives only). */
typedef struct gp_coll_rank {
    int32_t rank;
    uint64_t collectives;  /* it took part in */
    uint64_t arrived_last; /* it started last (so everyone else waited for it) */
    uint64_t arrived_first;
    gp_ns wait_total;       /* its own waiting */
    gp_ns caused_total;     /* the others' waits summed over the collectives it arrived last at */
    int64_t steps;          /* ProfilerStep annotations in its trace (0: none) */
    double caused_per_step; /* ns; NaN without steps */
    gp_ns comm_time;        /* summed duration of all its collective kernels (any class) */
    gp_ns clock_offset;     /* subtracted from its times by the alignment (0: none) */
} gp_coll_rank;

typedef struct gp_coll_opts {
    int32_t gpus_per_node; /* 0: from hostnames if any, else the first trace's device count */
    bool align_clocks;     /* align ranks on consistent implicit-sync end offsets (default true) */
} gp_coll_opts;

/* Fills opts with the defaults. */
GP_EXTERN void gp_coll_opts_init(gp_coll_opts *opts);

typedef struct gp_collectives {
    bool by_order; /* no process-group metadata: matched by kernel order */
    bool aligned;  /* clock offsets were subtracted (see ranks[].clock_offset and note) */
    int32_t gpus_per_node;
    gp_collective *colls; /* by group (first appearance), then index */
    size_t n_colls;
    gp_coll_summary *summary;
    size_t n_summary;
    gp_coll_rank *ranks; /* by rank; ranks left out of matching (note) are absent */
    size_t n_ranks;
    int32_t straggler;      /* the rank that caused the most waiting, -1 when none */
    uint64_t implicit_sync; /* trusted implicit-sync collectives (the straggler table's basis) */
    gp_error note; /* status GP_OK; msg: what was left out or assumed, and why ("" if nothing) */
} gp_collectives;

/* Matches the collectives of job and computes their figures. opts may be NULL (defaults). A job
 * of one rank, or without collective kernels, gives an empty result (not an error). Bad input
 * (a rank with fewer collectives, members that disagree, two files claiming one rank) is said in
 * note and never matched silently. GP_ENOMEM. */
GP_EXTERN gp_status gp_collectives_analyze(const gp_job *job, const gp_coll_opts *opts,
                                           gp_collectives **out, gp_error *err) GP_WARN_UNUSED;
GP_EXTERN void gp_collectives_free(gp_collectives *c);

#ifdef __cplusplus
}
#endif
#endif
