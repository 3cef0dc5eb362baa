/* Internals of the critical path (docs/internals/analyze.md, "Critical path"): the per-rank
 * tables (critpath.c) and the graph of one region (critpath_graph.c).
 *
 * The graph is HTA's (../shared/reference/hta-critical-path.md): two nodes per selected event,
 * five edge types, the longest path in Kahn order. The default mode changes a few rules (see
 * docs/analyses.md, "Critical path"): every CPU event with a duration is a node event (so gaps on
 * a thread are CPU time of the innermost enclosing frame), blocking calls get synchronisation
 * edges from the GPU work that ended last inside them, and each kernel gets both its launch and
 * its kernel-kernel edge (the longest path picks what it waited for). */
#ifndef GP_CRITPATH_INTERNAL_H
#define GP_CRITPATH_INTERNAL_H

#include <stdatomic.h>

#include "analyze/analyze_internal.h"

enum {
    GP__CPE_NODE = 1u << 0,      /* has a start and an end node */
    GP__CPE_BLOCKING = 1u << 1,  /* a blocking call: its closing edge weighs 0 */
    GP__CPE_LOCK = 1u << 2,      /* HTA's runtime-lock names */
    GP__CPE_DATALOAD = 1u << 3,  /* its CPU time is data loading */
    GP__CPE_GPU = 1u << 4,       /* runs on a GPU stream */
    GP__CPE_SYNC = 1u << 5,      /* a cuda_sync row (no duration edge) */
    GP__CPE_COMM = 1u << 6,      /* GPU communication; on a sync row: a Context Sync */
    GP__CPE_EVSYNC = 1u << 7,    /* an Event Sync row (HTA mode) */
    GP__CPE_WAITROW = 1u << 8,   /* a Stream Wait Event row (HTA mode) */
    GP__CPE_XREC = 1u << 9,      /* default mode: wait_src from a Stream Wait Event row's record */
    GP__CPE_SYNCCALL = 1u << 10, /* default mode: a synchronising call (GP__NB_SYNC_CALL) */
    GP__CPE_ACOPY = 1u << 11,    /* default mode: an async copy call (GP__NB_ASYNC_COPY) */
};

/* A pointer to a trace event, as one type name: GP__DEFINE_MERGE_SORT(name, T, cmp) writes
 * `const T *`, which with T spelled `const gp_event *` repeats the const (clang -Werror). */
typedef const gp_event *gp__cp_evp;

/* One event of a region. s/e are in the graph's unit (ns, or whole us in HTA mode). */
typedef struct gp__cpev {
    const gp_event *ev;
    int64_t s, e;
    int32_t parent;   /* CPU nesting parent (index in the region's events), -1 */
    int32_t launcher; /* GPU event: its launch call's index; a blocking call (default mode): the
                       * GPU event that ended last inside it; -1 */
    int32_t thread;   /* CPU: thread index (track); GPU: lane (stream) index */
    int32_t q_launch; /* GPU: HTA queue length after its launch / after its start; INT32_MIN */
    int32_t q_start;  /*      when the launch is not a launch call */
    uint32_t ns, ne;  /* node ids, UINT32_MAX without nodes */
    /* HTA mode: the GPU event an Event Sync row, or a kernel behind a Stream Wait Event, waits
     * for (the recorded event's work); an index of the rank's templates, then of the region;
     * default mode: the region's GPU work on another stream of the device that a kernel may have
     * waited for (critpath.c, infer_xwaits); -1 */
    int32_t wait_src;
    uint16_t flags; /* GP__CPE_* */
} gp__cpev;

/* A GPU event of the rank (gp__cprank.gpu), as a region takes it into its events: a gp__cpev
 * without the fields only a region sets (parent, launcher, node ids): 48 bytes instead of 64, on
 * every GPU event of the rank (156 K on large_v100_nccl x7: 2.5 MB less at the analysis's peak).
 * gp__cp_from_tmpl makes the region's event. */
typedef struct gp__cptmpl {
    const gp_event *ev;
    int64_t s, e;
    int32_t thread, q_launch, q_start, wait_src; /* as gp__cpev's */
    uint16_t flags;
} gp__cptmpl;

/* The region's event of template t: its fields, no parent nor launcher, no nodes yet. */
static inline gp__cpev gp__cp_from_tmpl(const gp__cptmpl *t)
{
    return (gp__cpev){.ev = t->ev,
                      .s = t->s,
                      .e = t->e,
                      .parent = -1,
                      .launcher = -1,
                      .thread = t->thread,
                      .q_launch = t->q_launch,
                      .q_start = t->q_start,
                      .ns = UINT32_MAX,
                      .ne = UINT32_MAX,
                      .wait_src = t->wait_src,
                      .flags = t->flags};
}

typedef enum gp__cp_edge_type {
    GP__CPT_OPERATOR = 0,
    GP__CPT_DEPENDENCY,
    GP__CPT_LAUNCH,
    GP__CPT_KERNEL_KERNEL,
    GP__CPT_SYNC,
} gp__cp_edge_type;

typedef struct gp__cpedge {
    uint32_t src, dst;
    int64_t w;    /* the edge's weight as computed (may be negative) */
    int32_t ev;   /* attributed event (index), -1 */
    uint8_t type; /* gp__cp_edge_type */
} gp__cpedge;

typedef struct gp__cpnode {
    int64_t ts;
    uint32_t ev;
    bool end;
} gp__cpnode;

/* A region's graph: events (CPU first in thread order, then GPU), nodes (HTA mode: in (ts, event)
 * order; default mode: in event order),
 * edges in insertion order. */
typedef struct gp__cpgraph {
    bool hta;
    gp__cpev *evs;
    size_t n_evs, cap_evs;
    size_t n_cpu; /* evs[0, n_cpu) are the CPU events, the rest GPU events */
    /* The nodes (gp__cp_node): HTA mode keeps them in nodes, in (ts, event) order; the default
     * mode numbers them 2 per node event in event order (start, end), and keeps only each pair's
     * event in pair_ev (a node is its event's start or end: 4 bytes a pair, not 32) */
    gp__cpnode *nodes;
    uint32_t *pair_ev;
    size_t n_nodes, cap_pair_ev;
    gp__cpedge *edges;
    size_t n_edges, cap_edges;
    /* The longest path: edges from the first node to the last (gp__cp_path_edge), and its
     * length (unit). */
    uint32_t *path;
    size_t n_path;
    int64_t length;
    size_t negative; /* edges with a negative weight (used as 0) */
    /* Default mode: the region's start. A node without predecessors starts at its distance from
     * it (what a thread or stream that starts later waited); head_offset is the path's. */
    int64_t origin;
    int64_t head_offset;
    int64_t max_end; /* the latest end of the events (gp__cp_build), INT64_MIN without events */
    /* Default mode: the CPU events flagged GP__CPE_SYNCCALL or GP__CPE_ACOPY (indices, in order;
     * critpath.c), so that the synchronisation pass visits them and not every CPU event. */
    uint32_t *calls;
    size_t n_calls, cap_calls;
    /* Default mode with gp__cp_contract: the threads' walk edges (nesting pass) kept here, in walk
     * order, and not in edges, which then holds the GPU and synchronisation edges; the longest
     * path contracts each run of walk edges through nodes without other edges into one edge
     * (critpath_chain.c), and the path names the walk edges on it here (GP__CP_STEP): copied
     * into edges, they were 1.7 MB a region on the H100 trace, faulted in anew by each thread's
     * first region (issue 37). */
    bool chain;
    gp__cpedge *steps;
    size_t n_steps, cap_steps;
    /* The capacities of nodes and path, and critpath_chain.c's arrays: the buffers of a graph
     * are kept from one region to the next (gp__cp_graph_reset): freed and allocated again,
     * each region faulted its pages in anew (a third of the critical path's time, issue 37). */
    size_t cap_nodes, cap_path;
    struct {
        void *p;
        size_t cap;
    } keep[5];
} gp__cpgraph;

/* Node v of g. */
static inline gp__cpnode gp__cp_node(const gp__cpgraph *g, uint32_t v)
{
    if (g->hta)
        return g->nodes[v];
    uint32_t i = g->pair_ev[v >> 1];
    bool end = v & 1;
    return (gp__cpnode){end ? g->evs[i].e : g->evs[i].s, i, end};
}

/* A path entry with this bit names g->steps[entry - GP__CP_STEP] (a walk edge of a contracted
 * graph), else g->edges[entry]. */
#define GP__CP_STEP 0x80000000u

/* Edge k of g's longest path. */
static inline const gp__cpedge *gp__cp_path_edge(const gp__cpgraph *g, size_t k)
{
    uint32_t i = g->path[k];
    return (i & GP__CP_STEP) ? &g->steps[i - GP__CP_STEP] : &g->edges[i];
}

/* critpath_rank.c: what a name is, computed once per name (bits of gp__cprank.names; bit 0:
 * computed). */
enum {
    GP__NB_DONE = 1u << 0,
    GP__NB_HTA_BLOCKING = 1u << 1,  /* HTA's blocking list */
    GP__NB_LOCK = 1u << 2,          /* HTA's runtime-lock list */
    GP__NB_DATALOAD = 1u << 3,      /* a data-loading pattern matches */
    GP__NB_SYNC_CALL = 1u << 4,     /* default: a synchronising call or synchronous copy */
    GP__NB_ASYNC_COPY = 1u << 5,    /* default: an async copy (blocks when its copy ends inside) */
    GP__NB_LAUNCH = 1u << 6,        /* HTA's launch calls (queue length) */
    GP__NB_HTA_COMM = 1u << 7,      /* HTA's communication regexes on the short name */
    GP__NB_COMM = 1u << 8,          /* gpuprof's communication class */
    GP__NB_STEP = 1u << 9,          /* ProfilerStep#N */
    GP__NB_CONTEXT_SYNC = 1u << 10, /* "Context Sync" */
    GP__NB_AUTOGRAD = 1u << 11,     /* contains "autograd" (HTA's backward thread merge) */
    GP__NB_FORWARD = 1u << 12       /* contains "forward" */
};

typedef struct gp__cprank {
    const gp_trace *t;
    const gp_analyze_opts *o;
    bool hta;
    int64_t unit;
    /* GP__NB_* per string id; atomic (relaxed: a plain load or store on x86 and arm64) as the
     * CPU scan and the GPU collection fill it side by side, and may compute one name twice */
    _Atomic uint16_t *names;
    size_t n_names;
    uint64_t *lk, *lv; /* (correlation, launch call) of runtime/driver calls; freed after init */
    size_t n_l, cap_lk, cap_lv;
    gp__cptmpl *gpu; /* every GPU event of the rank, as templates of a region's events */
    size_t n_gpu, cap_gpu;
    /* Per template, beside it (the region events never read them, and 64-byte events are what
     * the regions' passes and sorts move): its launch call (joined by correlation id) or NULL, and
     * that call's start (units) when it can be a region's event (a runtime/driver call with a
     * duration), else INT64_MIN. */
    const gp_event **launch;
    int64_t *lts;
    uint32_t *by_launch; /* GPU indices with a possible region launch (lts), by lts */
    size_t n_by_launch;
    int64_t *lanes; /* the key (stream * 4096 + device) of each lane */
    size_t n_lanes;
    gp__imap lane_index; /* key -> lane (a scan of the lanes was quadratic in streams) */
    int64_t last_key;    /* the last lane looked up (collect_gpu) */
    size_t last_lane;
    size_t *runs; /* gpu[runs[i], runs[i + 1]) is one GPU track's events, by start */
    size_t n_runs;
    gp_ns cpu_hi;           /* HTA: CPU events starting at or after it are gone (last step) */
    const gp_event **steps; /* CPU-side ProfilerSteps, by start */
    size_t n_steps, cap_steps;
    /* (correlation, GPU index) of the GPU events with an id, sorted (collect_gpu's task; the join
     * frees them) */
    uint64_t *gk, *gv;
    size_t n_gk;
} gp__cprank;

/* The rank's tables, built once (critpath_rank.c). GP_ENOMEM. */
gp_status gp__cp_rank_init(gp__cprank *k, const gp_trace *t,
                           const gp_analyze_opts *o) GP_WARN_UNUSED;
void gp__cp_rank_free(gp__cprank *k);
/* The GP__NB_* bits of a name, computed and cached (callers use gp__cp_name_bits). */
uint16_t gp__cp_name_bits_compute(const gp__cprank *k, gp_strid id, gp_event_kind kind);

/* The GP__NB_* bits of a name: from the cache once computed (regions only read it). */
static inline uint16_t gp__cp_name_bits(const gp__cprank *k, gp_strid id, gp_event_kind kind)
{
    uint16_t b = id < k->n_names ? atomic_load_explicit(&k->names[id], memory_order_relaxed) : 0;
    return (b & GP__NB_DONE) ? b : gp__cp_name_bits_compute(k, id, kind);
}

/* Time in the graph's unit: ns, or HTA's microseconds rounded as HTA mode's breakdowns round them
 * (gp__hta_us_start/end: starts up, ends down, on binary64 microseconds). An end is taken as the
 * event's ts and dur: HTA adds them as doubles. */
static inline int64_t gp__cp_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static inline int64_t gp__cp_unit_start(const gp__cprank *k, gp_ns t)
{
    return k->unit == 1 ? t : gp__hta_us_start(t - k->t->base_time_ns);
}

static inline int64_t gp__cp_unit_end(const gp__cprank *k, gp_ns ts, gp_ns dur)
{
    return k->unit == 1 ? ts + dur : gp__hta_us_end(ts - k->t->base_time_ns, dur);
}

/* critpath_graph.c: builds nodes and edges over g->evs (filled by the caller: parent, launcher,
 * thread, flags, s, e set). GP_ENOMEM. */
gp_status gp__cp_build(gp__cpgraph *g) GP_WARN_UNUSED;
/* The longest path of the built graph (g->path, g->length). GP_ENOMEM; GP_EINVAL on a cycle. */
gp_status gp__cp_longest(gp__cpgraph *g) GP_WARN_UNUSED;
/* An empty graph (all zero) keeping g's buffers for the next region. */
void gp__cp_graph_reset(gp__cpgraph *g);
void gp__cp_graph_free(gp__cpgraph *g);
/* Room for need elements of elem bytes in *p (capacity *cap, in elements), its content not kept.
 * GP_ENOMEM. */
gp_status gp__cp_reserve(void **p, size_t *cap, size_t elem, size_t need) GP_WARN_UNUSED;

/* critpath_chain.c: the longest path of a graph built with g->chain (gp__cp_build), computed on
 * the graph with each thread's runs of walk edges contracted: the same path, length and head
 * offset as gp__cp_longest on the full graph, which the caller runs instead when *exact is false
 * (two nodes of the largest distance that the contracted graph cannot order as Kahn order does).
 * GP_ENOMEM; GP_EINVAL on a cycle. */
gp_status gp__cp_chain_longest(gp__cpgraph *g, bool *exact) GP_WARN_UNUSED;
/* Whether the default mode contracts the walk edges (true; tests compare both). */
extern bool gp__cp_contract;
/* The regions whose contracted graph could not decide the path and ran on the full graph (tests,
 * on one thread). */
extern atomic_size_t gp__cp_chain_fallbacks;

/* critpath_result.c: fills cp's length, by_class, pct, top and events from the path of g (times
 * in units of unit ns; t is the trace the events belong to); without overlay, events and links
 * stay NULL and n_events counts the events. GP_ENOMEM. */
gp_status gp__cp_result(const gp__cpgraph *g, const gp_trace *t, int64_t unit, bool overlay,
                        gp_critical_path *cp) GP_WARN_UNUSED;

/* The name HTA classifies: a name with '<' or '(' loses template arguments and parenthesised
 * parts and keeps its last space-separated token. Writes at most cap bytes (NUL-terminated). */
void gp__cp_short_name(const char *name, char *out, size_t cap);

/* An event of the graph under a time of it (its end, its start): sorted by time, ties by index,
 * so the order is total and the same on every run. Each file that sorts them defines its sort with
 * GP__DEFINE_MERGE_SORT(name, gp__cp_time_key, gp__cp_time_key_cmp). */
typedef struct gp__cp_time_key {
    int64_t t;
    uint32_t ev;
} gp__cp_time_key;

static inline int gp__cp_time_key_cmp(const gp__cp_time_key *a, const gp__cp_time_key *b)
{
    GP_CMP_KEY(a->t, b->t);
    return GP_CMP(a->ev, b->ev);
}

/* Whether key k is at time t or earlier; gp__cp_time_keys_upto(v, n, t): how many of the sorted
 * keys v[0, n) are. */
static inline bool gp__cp_time_key_upto(const gp__cp_time_key *k, int64_t t)
{
    return k->t <= t;
}
GP__DEFINE_LOWER_BOUND(gp__cp_time_keys_upto, gp__cp_time_key, int64_t, gp__cp_time_key_upto)

#endif
