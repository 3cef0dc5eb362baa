/* Internals of the analyze module: the per-rank "view" every analysis reads.
 *
 * A view is built once per rank (view.c): it applies the step selection, the mode's event set and
 * rounding, classifies every GPU event once per distinct name, and joins each GPU event to its
 * launch by correlation id (a sort-merge join of the two radix-sorted sides, no hash map). The
 * analyses then sweep the view's arrays, which are sorted once. */
#ifndef GP_ANALYZE_INTERNAL_H
#define GP_ANALYZE_INTERNAL_H

#include "gpuprof/analyze.h"
#include "gpuprof/collectives.h"
#include "gpuprof/report.h"

#include "core/group_table.h"
#include "core/imap.h"
#include "core/ivls.h"
#include "core/msort.h"
#include "core/radix.h"
#include "core/util.h"
#include "analyze/table_list.h"

#define GP__NO_TIME INT64_MIN

/* Classification of names: compiled user rules plus the built-ins. */
typedef struct gp__classifier gp__classifier;

/* A GPU event selected for analysis. s/e are in the view's unit (ns, or whole us in HTA mode);
 * in HTA mode e < s is possible (sub-microsecond events rounded inward). */
typedef struct gp__gev {
    int64_t s, e;
    gp_ns ts, dur;    /* the event's own times, ns (copied: sweeps stay in this array) */
    gp_ns lts, ldur;  /* its launch's start and duration, ns (0 without a launch) */
    int64_t launch_s; /* launch start in units, GP__NO_TIME when no launch was found */
    const gp_event *ev;
    const gp_event *launch; /* the runtime/driver call, or NULL */
    int64_t stream;
    int32_t device;
    uint8_t type;          /* gp_kernel_type */
    uint8_t kind;          /* gp_event_kind */
    bool first_of_launch;  /* the earliest GPU event of its launch (delays are measured on it) */
    bool in_graph;         /* a kernel with a CUDA graph id */
    bool rounded_negative; /* HTA mode: rounded inward to a negative length, kept as empty */
    gp_strid lname;        /* its launch's name (0 without a launch) */
} gp__gev;

/* A profiler step found in the trace. */
typedef struct gp__step {
    int64_t num;
    gp_ns ts, end;
    bool streamless; /* a GPU-side step without args.stream: HTA counts it as a CPU event */
} gp__step;

typedef struct gp__view {
    const gp_trace *t;
    const gp_analyze_opts *o;
    const gp__classifier *c; /* the job's classifier (thread-safe to read) */
    int64_t unit;            /* ns per unit: 1, or 1000 in HTA mode */
    gp__gev *g;              /* sorted by (s, e descending) */
    size_t n_g, cap_g;
    /* CPU selection: a CPU event is kept when cpu_lo <= ts < cpu_hi. */
    gp_ns cpu_lo, cpu_hi;
    /* GPU-side ProfilerStep spans (gpu_user_annotation on a stream), as found, and the window of
     * the selected ones: with N-M, GPU work is selected by it when there is one (gpu_lo <
     * gpu_hi). GPU events starting before the first GPU-side step are counted (before_gpu_step). */
    gp__step *gsteps;
    size_t n_gsteps, cap_gsteps;
    gp_ns gpu_lo, gpu_hi;
    size_t before_gpu_step;
    int64_t steps_total, steps_kept;
    const gp_event **rt; /* runtime/driver calls, track by track */
    size_t n_rt, cap_rt;
    bool have_correlation;     /* some GPU event joined to a launch */
    bool hta_fallback;         /* HTA filter found no correlated GPU work: time window used */
    size_t n_rounded_negative; /* selected events with rounded_negative set */
    size_t n_stream_overlaps;  /* GPU work starting before the previous one on its stream ends */
    gp_ns max_stream_overlap;  /* the largest such overlap, ns */
    gp_error note;
} gp__view;

gp_status gp__classifier_new(const gp_analyze_opts *o, gp__classifier **out,
                             gp_error *err) GP_WARN_UNUSED;
void gp__classifier_free(gp__classifier *c);
gp_kernel_type gp__classify(const gp__classifier *c, const char *name, gp_event_kind kind);

/* view.c */
/* Builds v, the events of t the analyses read (options o, kernel types from c). On failure v is
 * left empty (every array freed); on success the caller frees it with gp__view_free. */
gp_status gp__view_build(gp__view *v, const gp_trace *t, const gp_analyze_opts *o,
                         const gp__classifier *c) GP_WARN_UNUSED;
void gp__view_free(gp__view *v);
/* Where half `half` (0: the first, 1: the second) of the host-side events starts: the events of
 * the CPU thread tracks (with other_too, also of the GP_TRACK_OTHER ones) taken in track order and
 * then by index, the second half starting at the middle one when there are more than 8 host
 * events per GPU event, else empty (at the end). *tk, *i: the track and the index there (*tk ==
 * t->n_tracks: at the end). Scans cut in two halves, one after the other, take the events in the
 * order one scan takes them. */
void gp__host_half(const gp_trace *t, bool other_too, int half, size_t *tk, size_t *i);
/* Tests: whether gp__host_half cuts in two: 1 always, 0 never, -1 (the default) by the rule
 * above. */
extern int gp__host_split;
/* Room for the runtime and driver calls a host scan of `half` (ending at track end_tk) will meet:
 * all of them, or about half in each half of a cut scan (the view's scan and the critical path's,
 * whose arrays are reserved exactly, issue 37). */
static inline size_t gp__host_calls_expected(const gp_trace *t, int half, size_t end_tk)
{
    size_t expect = (size_t)(t->stats.by_kind[GP_EV_RUNTIME] + t->stats.by_kind[GP_EV_DRIVER]);
    return half == 1 || end_tk < t->n_tracks ? expect / 2 + 16 : expect;
}
/* Whether (tk, i) is before the end (etk, ei) in that order. */
static inline bool gp__host_before(size_t tk, size_t i, size_t etk, size_t ei)
{
    return tk < etk || (tk == etk && i < ei);
}
/* HTA's rounding to whole microseconds (docs/analyses.md, "Rounding"), shared by HTA mode's
 * breakdowns and its critical path: the start ceil(ts) and the end floor(ts + dur) on the binary64
 * microseconds json.loads reads from the file (rel_ts: ns relative to the trace's base time). */
int64_t gp__hta_us_start(gp_ns rel_ts);
int64_t gp__hta_us_end(gp_ns rel_ts, gp_ns dur);
static inline bool gp__view_cpu_kept(const gp__view *v, gp_ns ts)
{
    return ts >= v->cpu_lo && ts < v->cpu_hi;
}
/* Appends a note sentence to a note buffer. */

/* Lanes: pairs (a, b) such as (device, stream) numbered 0, 1, ... in the order first seen, found
 * by hash (a scan of the lanes seen so far was quadratic in streams and memory devices, issue 38).
 * Init with gp__lanes_init, free with gp__group_table_free. */
static inline void gp__lanes_init(gp__group_table *t)
{
    gp__group_table_init(t, sizeof(gp__group_key), true);
}
/* The number of lane (a, b), added when new (then it equals the count before the call); -1 when
 * out of memory. */
static inline int64_t gp__lane_of(gp__group_table *t, int32_t a, int64_t b)
{
    uint32_t i = gp__group_find(t, a, (const char *)&b, sizeof(b));
    return i ? (int64_t)i - 1 : -1;
}

/* "COMPUTATION overlapping COMMUNICATION" for a mask of (1 << gp_kernel_type). */
void gp__type_label(uint32_t mask, char *out, size_t cap);

/* Threads for one rank's work: opts->threads (0 = automatic), at most max; one thread for ranks of
 * fewer than 50 000 events, where starting a thread (about 0.1 ms, bench_core) is not repaid. */
int gp__rank_threads(const gp_trace *t, const gp_analyze_opts *o, int max);

/* One rank's analyses, named by the registry of tables (table_list.h, its BUILD column): for
 * each B(stem), gp_status gp__analyze_stem(const gp__view *v, gp_rank_analysis *r) computes its
 * table's figures of rank r from the view v (GP_OK, GP_ENOMEM). Each reads the view and writes only
 * its own fields of the rank's results (its definition's comment names them), so they may run at
 * the same time on different threads (analyze.c does). Where they are and what they fill:
 * breakdown.c: temporal (temporal, overlap), idle, types, top_kernels (kernels); launch.c:
 * launch_stats (launch), queues, bandwidth; activity.c: activity (activity, memory), kernel_stats
 * (kernels_*, small_kernels*, low_occ_*); peak.c: peak_memory; idle_causes.c; step_parts.c;
 * critpath.c: critical_path (critical_paths). */
#define GP__DECLARE_RANK_ANALYSIS(stem)                                                            \
    gp_status gp__analyze_##stem(const gp__view *v, gp_rank_analysis *r) GP_WARN_UNUSED;
#define B GP__DECLARE_RANK_ANALYSIS
#define X(bit, fn, name, alias, json, csv, build) build
GP__ANALYSIS_TABLES(X)
#undef X
#undef B
/* activity.c: the CPU/GPU activity of each of the n traces (default analysis options), its CPU
 * active, GPU active and overlap figures summed into *sum (the other fields left 0): what the
 * timeline shows, without the rest of an analysis. GP_ENOMEM. */
gp_status gp__activity_sum(const gp_trace *const *traces, size_t n,
                           gp_activity *sum) GP_WARN_UNUSED;
/* findings_syncs.c: the blocking host calls inside a trace's ProfilerStep windows, by call
 * site (the call and the innermost Python frame, a user line outside torch when there is one),
 * by time desc. beyond: the blocked time beyond the longest call of each step (one read per
 * step is normal). All zero without steps. */
typedef struct gp__sync_site {
    const char *call, *frame; /* trace strings */
    gp_ns time;
    uint64_t count;
} gp__sync_site;
typedef struct gp__sync_sites {
    gp__sync_site s[32];
    size_t n;
    gp_ns time, beyond, step_time;
    uint64_t calls, steps;
} gp__sync_sites;
gp_status gp__sync_sites_of(const gp_trace *t, gp__sync_sites *out) GP_WARN_UNUSED;
/* What a rank's findings read of its trace alone, computed beside the rank's tables
 * (gp__analyze_ranks) and handed to gp__advise_rank: its ops by shape (gp__findings_ops; NULL
 * without record_shapes) unless the caller has the op table (want_ops false), its sync sites
 * (gp__sync_sites_of, findings_syncs.c) and its ranges (gp__profile_ops_of). done: they were
 * computed. */
typedef struct gp__rank_pre {
    bool want_ops;
    bool done;
    struct gp_ops *ops;
    gp__sync_sites syncs;
    struct gp__profile_ops *profile; /* the ranges the profile rules read (gp__profile_ops_of) */
} gp__rank_pre;
/* advise.c: n of them (calloc'd), want_ops each; NULL when out of memory. */
gp__rank_pre *gp__rank_pre_new(size_t n, bool want_ops);
/* Frees the n of p (NULL: nothing) and their ops. */
void gp__rank_pre_free(gp__rank_pre *p, size_t n);
/* advise.c: stragglers and findings over the finished rank results, and the profile rules
 * (advise_profile.c) over the job's traces; shape_ops (NULL: none) the job's op table by shape
 * when the caller has it (one rank: the findings' ops by shape, gp__findings_ops, not computed
 * again); pre (NULL: computed here) the n ranks' own ops and sync sites. */
gp_status gp__analyze_advise(gp_analysis *a, const gp_trace *const *traces, size_t n,
                             const struct gp_ops *shape_ops,
                             const gp__rank_pre *pre) GP_WARN_UNUSED;
/* The rank traces an analysis reads, read-only: a job's (gp__ranks_of_job) or any array of
 * traces (a side of a diff, one trace), so that no caller casts const away to make a gp_job. */
typedef struct gp__ranks {
    const gp_trace *const *t;
    size_t n;
    bool from_file_order; /* some rank numbers follow file order (gp_job.ranks_from_file_order) */
} gp__ranks;
static inline gp__ranks gp__ranks_of_job(const gp_job *job)
{
    return (gp__ranks){gp_job_traces(job), job->n_ranks, job->ranks_from_file_order};
}
/* analyze.c: the figures of every rank of in into a->ranks (a->opts set; many: the job has
 * several ranks, for the notes); pre NULL, or an array of in->n (want_ops set by the caller) that
 * receives what each rank's findings read of its trace (gp__rank_pre_new; the caller frees it with
 * gp__rank_pre_free), computed beside its tables. GP_EINVAL (a user regex, err says which),
 * GP_ENOMEM. */
gp_status gp__analyze_ranks(const gp__ranks *in, bool many, gp_analysis *a, gp__rank_pre *pre,
                            gp_error *err) GP_WARN_UNUSED;
gp_status gp__analyze_job_types(gp_analysis *a) GP_WARN_UNUSED;
/* The two halves of gp__analyze_advise, apart for partial results (partial.c): the findings of
 * rank i (a->ranks[i], trace t; NULL: only those of its figures), appended to a->findings
 * (capacity *cap), in a job of job_ranks ranks, pre its ops and sync sites when computed already
 * (NULL or not done: computed here); then the job's: stragglers, their findings, the sort and the
 * merge of a rule's findings across ranks. */
gp_status gp__advise_rank(gp_analysis *a, size_t *cap, size_t i, const gp_trace *t,
                          const struct gp_ops *shape_ops, size_t job_ranks,
                          const gp__rank_pre *pre) GP_WARN_UNUSED;
gp_status gp__advise_job(gp_analysis *a, size_t *cap) GP_WARN_UNUSED;
/* findings_cause.c: the largest class of rank r's critical paths summed over its steps (the
 * classes of the cause findings, "sync" from the path's own sync events, launch calls in the
 * launch class unless hta (HTA's critical path), never dependency): its
 * rule id ("critical_path_gpu_communication_bound", static), *share of the path; its top events
 * (at most max) are named as objects of f. NULL when r has no valid path, or out of memory. */
const char *gp__cause_dominant(const gp_rank_analysis *r, bool hta, gp_finding *f, size_t max,
                               double *share);
/* findings_straggler.c: the straggler finding from the collectives' evidence (a->collectives):
 * *done true when the job has trusted implicit-sync collectives (then the finding names the rank
 * that made the others wait most, if any); false: the caller falls back to medians of totals. */
gp_status gp__straggler_finding(gp_analysis *a, size_t *cap, bool *done) GP_WARN_UNUSED;
/* analyze.c: gp_analyze_job of the ranks in, given the job's `gpuprof ops --by shape` table (NULL:
 * none) for the op rule of a one-rank job (the report bundle computes it for its own op section).
 */
gp_status gp__analyze_with_ops(const gp__ranks *in, const gp_analyze_opts *opts,
                               const struct gp_ops *shape_ops, gp_analysis **out,
                               gp_error *err) GP_WARN_UNUSED;
/* collectives.c: gp_collectives_analyze of the ranks in. */
gp_status gp__collectives_of_ranks(const gp__ranks *in, const gp_coll_opts *opts,
                                   gp_collectives **out, gp_error *err) GP_WARN_UNUSED;
/* advise.c, for the rule files: a new finding (zeroed but for rule and rank) in a->findings
 * (capacity *cap), NULL when out of memory; a metric (name: static text; value in base units;
 * dropped when the finding is full); an object it names (name copied, cut to fit; roof -1;
 * NULL when the finding is full); the priority of a gain against a base time (>= 30 %
 * critical, >= 15 % high, >= 5 % medium, else low). */
gp_finding *gp__advise_add(gp_analysis *a, size_t *cap, const char *rule, int32_t rank);
void gp__advise_metric(gp_finding *f, const char *name, double value, gp_finding_unit unit);
gp_finding_object *gp__advise_object(gp_finding *f, gp_object_kind kind, const char *name,
                                     gp_ns time, uint64_t count);
gp_priority gp__advise_priority(gp_ns gain, gp_ns base);
/* findings_cause.c: the dominant-cause findings of one rank (critical_path_<class>) from its
 * critical paths (r->critical_paths, summed over the steps), appended to a->findings. ops (the
 * rank's ops by shape, gp__findings_ops; may be NULL) give the roofline of the top GPU ops;
 * syncs (may be NULL) the blocking calls of the steps: their time beyond one per step moves out
 * of the path's CPU and launch time into the class "sync" (the host work that waited could have
 * overlapped the GPU). t (may be NULL) names the data-loading cause's top Python function (the
 * most self time inside the data-loading events). Nothing without a valid critical path, nor when
 * t holds no kernel, copy or memset in the paths' regions (a profile, a CPU-only trace). GP_ENOMEM.
 * A test may hand it a rank analysis filled by hand. */
struct gp_ops;
struct gp__sync_sites;
gp_status gp__finding_cause(gp_analysis *a, size_t *cap, const gp_rank_analysis *r,
                            const gp_trace *t, const struct gp_ops *ops,
                            const struct gp__sync_sites *syncs) GP_WARN_UNUSED;
/* The order of a cause finding among the cause findings: 0 the largest class that is not GPU
 * compute, 1 a pattern finding promoted to explain GPU compute (gp__cause_promote), 2 the
 * GPU-compute one. */
int gp__cause_rank(const gp_finding *f);
/* When one rank's findings (a->findings[first..]) hold a GPU-compute cause, the GPU pattern
 * finding (unfused_attention, fp32_gemm, op_below_roofline) with the largest gain, if that gain
 * is at least 10 % of the GPU-compute path time, becomes a cause too: it says what the GPU
 * computes too slowly, and is ranked before the generic GPU-compute finding. */
void gp__cause_promote(gp_analysis *a, size_t first);
/* findings_patterns.c: the pattern rules with an estimated gain on one rank's trace (unfused
 * attention, fp32 GEMMs on tensor-core GPUs, syncs inside the step, op_below_roofline);
 * docs/analyses.md. GP_ENOMEM. */
gp_status gp__findings_patterns(gp_analysis *a, size_t *cap, const gp_rank_analysis *r,
                                const gp_trace *t, const struct gp_ops *ops,
                                const struct gp__sync_sites *syncs) GP_WARN_UNUSED;
/* The sync_in_step rule on them (nothing when beyond is under 1 % of the step time); the first
 * max sites as objects of f. GP_ENOMEM. */
gp_status gp__findings_syncs(gp_analysis *a, size_t *cap, const gp_rank_analysis *r,
                             const gp__sync_sites *s) GP_WARN_UNUSED;
void gp__advise_sync_sites(gp_finding *f, const gp__sync_sites *s, size_t max);
/* findings_patterns.c: the ops of t grouped by shape, with the roofline (*out NULL when t has
 * no record_shapes args). The caller frees *out (gp_ops_free). GP_ENOMEM. */
gp_status gp__findings_ops(const gp_trace *t, struct gp_ops **out) GP_WARN_UNUSED;
/* advise_profile.c: the ranges of a trace by name (GP_EV_RANGE rows: profiles), what the profile
 * rules read: a walk of every event, computed beside the tables (gp__rank_pre). *out is freed
 * with gp__profile_ops_free (NULL: nothing). GP_ENOMEM. */
typedef struct gp__profile_ops gp__profile_ops;
gp_status gp__profile_ops_of(const gp_trace *t, gp__profile_ops **out) GP_WARN_UNUSED;
void gp__profile_ops_free(gp__profile_ops *p);
/* advise_profile.c: the profile rules (gpuprof/advise.h) on one rank's trace, over its ranges
 * (given; NULL: found here). */
gp_status gp__advise_profile(gp_analysis *a, size_t *cap, const gp_trace *t, int32_t rank,
                             const gp__profile_ops *given) GP_WARN_UNUSED;
/* advise_ops.c: the "op_below_roofline" finding of trace t (rank) from its ops grouped by shape
 * (docs/analyses.md), appended to a->findings (capacity *cap). Nothing without a known peak.
 * GP_ENOMEM. */
gp_status gp__advise_ops(gp_analysis *a, size_t *cap, const struct gp_ops *ops,
                         int32_t rank) GP_WARN_UNUSED;

/* dashboard_parts.c: the dashboard's wall-time partitions (threads, streams) and per-step
 * breakdown (gp_dashboard.cpu_parts, gpu_parts, steps); d->span and d->n_traces must be set. */
gp_status gp__dash_partitions(gp_dashboard *d, const gp_trace *const *traces,
                              size_t n) GP_WARN_UNUSED;
/* The in-process profile part of the dashboard (gp_dashboard.is_profile and prof_*), after the
 * memory chart (dashboard_profile.c). GP_ENOMEM. */
gp_status gp__dash_profile(gp_dashboard *d, const gp_trace *const *traces, size_t n,
                           const gp_summary *s) GP_WARN_UNUSED;

/* step_parts.c: the step-time breakdown shared by the analyses and the dashboard. u[p] holds the
 * union of the events of part p (sorted, disjoint); "other" is what no part covers. */
typedef struct gp__step_split {
    const gp_trace *t;
    const gp__classifier *c;
    const char *const *data_load;
    size_t n_data_load;
    gp__ivls u[GP_SP_OTHER];
} gp__step_split;
/* Builds the unions of every part over all of t's tracks: kernels (communication when the
 * classifier calls the name COMMUNICATION), copies, memsets, runtime and driver calls, cpu_ops and
 * user annotations matching the data-loading patterns (NULL: "DataLoader", "dataloader"), other
 * cpu_ops. s borrows t, c and data_load. GP_ENOMEM (s is then empty). */
gp_status gp__step_split_init(gp__step_split *s, const gp_trace *t, const gp__classifier *c,
                              const char *const *data_load, size_t n_data_load) GP_WARN_UNUSED;
/* Splits [start, end) among the parts by precedence: part[] sums to end - start exactly
 * (start <= end). O(intervals inside the window + log n). */
void gp__step_split_run(const gp__step_split *s, gp_ns start, gp_ns end, gp_ns part[GP_SP_COUNT]);
void gp__step_split_free(gp__step_split *s);
/* The ProfilerStep#N spans of t (user annotations or cpu_ops on CPU threads), by start; *out is
 * the caller's (free), NULL when there is none. GP_ENOMEM. */
gp_status gp__profiler_steps(const gp_trace *t, gp__step **out, size_t *n_out) GP_WARN_UNUSED;
/* True when name contains one of the data-loading patterns (NULL or none: the defaults above). */
bool gp__is_data_load(const char *name, const char *const *pat, size_t n_pat);

/* Time-series helpers: n buckets over [t0, t1). */
gp_status gp__series_alloc(gp_series_point **out, size_t n, gp_ns t0, gp_ns t1) GP_WARN_UNUSED;

/* A CPU-side complete event kind: the frames of a thread's nesting (ops, annotations, Python
 * frames, runtime and driver calls, in-process ranges, profiler overhead, unknown categories).
 * The flame graph and the critical path use this one list. */
static inline bool gp__is_cpu_frame_kind(uint8_t k)
{
    switch (k) {
    case GP_EV_CPU_OP:
    case GP_EV_USER_ANNOTATION:
    case GP_EV_PYTHON:
    case GP_EV_RUNTIME:
    case GP_EV_DRIVER:
    case GP_EV_RANGE:
    case GP_EV_OVERHEAD:
    case GP_EV_OTHER:
        return true;
    default:
        return false;
    }
}

/* A CUDA or HIP graph launch call (cudaGraphLaunch, cuGraphLaunch, hipGraphLaunch, suffixed
 * forms such as _v10000 or _ptsz included): the one test the analyses use. */
static inline bool gp__is_graph_launch(const char *name)
{
    return strncmp(name, "cudaGraphLaunch", 15) == 0 || strncmp(name, "hipGraphLaunch", 14) == 0 ||
           strncmp(name, "cuGraphLaunch", 13) == 0;
}

/* An iterator over the events of t's CPU-thread tracks, track by track, each track's in order:
 * `gp__cpu_events it = {t, 0, 0}; for (const gp_event *e; (e = gp__cpu_events_next(&it));)`. */
typedef struct gp__cpu_events {
    const gp_trace *t;
    size_t k, i; /* the track and the event in it that come next */
} gp__cpu_events;

/* The next CPU-thread event of it, or NULL after the last. */
static inline const gp_event *gp__cpu_events_next(gp__cpu_events *it)
{
    for (; it->k < it->t->n_tracks; it->k++, it->i = 0) {
        const gp_track *tr = &it->t->tracks[it->k];
        if (tr->kind == GP_TRACK_CPU_THREAD && it->i < tr->n_events)
            return &tr->events[it->i++];
    }
    return NULL;
}

/* Whether event e starts before ts. */
static inline bool gp__event_starts_before(const gp_event *e, gp_ns ts)
{
    return e->ts < ts;
}
GP__DEFINE_LOWER_BOUND(gp__events_lower_bound, gp_event, gp_ns, gp__event_starts_before)

/* The index of tr's first event starting at ts or later (tr->n_events when none): a binary search
 * over the events, which are sorted by start. */
static inline size_t gp__track_lower_bound(const gp_track *tr, gp_ns ts)
{
    return gp__events_lower_bound(tr->events, tr->n_events, ts);
}

/* Steps to t's next GPU work event (kernel, memcpy, memset; gp_event_kind_is_gpu_work) on its GPU
 * stream tracks, track by track in order, each track's events in order. *k and *i are the cursor
 * (both 0 to start). Returns the event with *tr set to its track, or NULL after the last. */
static inline const gp_event *gp__next_gpu_work(const gp_trace *t, size_t *k, size_t *i,
                                                const gp_track **tr)
{
    for (; *k < t->n_tracks; (*k)++, *i = 0) {
        *tr = &t->tracks[*k];
        if ((*tr)->kind != GP_TRACK_GPU_STREAM)
            continue;
        while (*i < (*tr)->n_events) {
            const gp_event *ev = &(*tr)->events[(*i)++];
            if (gp_event_kind_is_gpu_work((gp_event_kind)ev->kind))
                return ev;
        }
    }
    return NULL;
}

/* The headline figures of a trace or job (headline.c), for the profile server's index: the job's
 * span (first start to last end over the ranks), GPU busy (the union of kernels, memcpys and
 * memsets per device, summed over devices and ranks), its ranks, the first device's name ("" when
 * the trace has none) and whether a rank holds torch.compile regions. */
typedef struct gp__headline {
    gp_ns span;
    gp_ns gpu_busy;
    int32_t ranks;
    char device[96];
    bool compiled;
} gp__headline;

/* Fills *out from job in one pass (no analysis). GP_ENOMEM. */
gp_status gp__job_headline(const gp_job *job, gp__headline *out);

#endif
