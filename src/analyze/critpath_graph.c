/* The critical-path graph of one region: nodes, HTA's passes (runtime lock, CPU nesting, GPU,
 * synchronisation) and the longest path in Kahn order. See critpath_internal.h and
 * ../shared/reference/hta-critical-path.md (section numbers below are that file's). */
#include <stdlib.h>
#include <string.h>

#include "analyze/critpath_internal.h"
#include "core/msort.h"

#define NO_NODE UINT32_MAX
#define HTA_KK_LIMIT_US 1500 /* kernel-kernel edges only below this gap (us) */

bool gp__cp_contract = true; /* critpath_internal.h */

void gp__cp_graph_free(gp__cpgraph *g)
{
    free(g->steps);
    free(g->evs);
    free(g->nodes);
    free(g->pair_ev);
    free(g->edges);
    free(g->path);
    free(g->calls);
    for (size_t i = 0; i < GP_ARRAY_LEN(g->keep); i++)
        free(g->keep[i].p);
    memset(g, 0, sizeof(*g));
}

void gp__cp_graph_reset(gp__cpgraph *g)
{
    gp__cpgraph k = {.evs = g->evs,
                     .cap_evs = g->cap_evs,
                     .nodes = g->nodes,
                     .cap_nodes = g->cap_nodes,
                     .pair_ev = g->pair_ev,
                     .cap_pair_ev = g->cap_pair_ev,
                     .edges = g->edges,
                     .cap_edges = g->cap_edges,
                     .steps = g->steps,
                     .cap_steps = g->cap_steps,
                     .path = g->path,
                     .cap_path = g->cap_path,
                     .calls = g->calls,
                     .cap_calls = g->cap_calls};
    memcpy(k.keep, g->keep, sizeof k.keep);
    *g = k;
}

gp_status gp__cp_reserve(void **p, size_t *cap, size_t elem, size_t need)
{
    need = need ? need : 1;
    if (*p && *cap >= need)
        return GP_OK;
    free(*p);
    *cap = 0;
    /* a quarter more: the next region, a little larger, still fits (a new buffer is faulted in
     * anew) */
    size_t n = need + need / 4;
    if (!(*p = malloc(n * elem)))
        return GP_ENOMEM;
    *cap = n;
    return GP_OK;
}

void gp__cp_short_name(const char *name, char *out, size_t cap)
{
    if (cap == 0)
        return;
    if (!strchr(name, '<') && !strchr(name, '(')) {
        size_t n = strlen(name);
        n = n < cap - 1 ? n : cap - 1;
        memcpy(out, name, n);
        out[n] = '\0';
        return;
    }
    /* Drop <...> and (...) (nested), then keep the last space-separated token. */
    size_t n = 0, tok = 0;
    int depth = 0;
    for (const char *p = name; *p; p++) {
        if (*p == '<' || *p == '(') {
            depth++;
            continue;
        }
        if ((*p == '>' || *p == ')') && depth > 0) {
            depth--;
            continue;
        }
        if (depth > 0)
            continue;
        if (*p == ' ') {
            tok = n; /* the next token starts here */
            continue;
        }
        if (n < cap - 1) {
            if (tok != 0 || n == 0) { /* a new token: restart the output */
                n = 0;
                tok = 0;
            }
            out[n++] = *p;
        }
    }
    out[n] = '\0';
}

static int cmp_node(const gp__cpnode *a, const gp__cpnode *b)
{
    GP_CMP_KEY(a->ts, b->ts);
    GP_CMP_KEY(a->ev, b->ev);
    return GP_CMP(a->end, b->end);
}
GP__DEFINE_MERGE_SORT(sort_nodes, gp__cpnode, cmp_node)

/* Appends an edge (inlined: the graph adds one or two per node; gp__cp_build sizes the array for
 * the usual count, so growing is rare). */
static inline gp_status add_edge(gp__cpgraph *g, uint32_t src, uint32_t dst, int64_t w, int32_t ev,
                                 gp__cp_edge_type type)
{
    if (g->n_edges == g->cap_edges &&
        gp__grow((void **)&g->edges, &g->cap_edges, sizeof(*g->edges), g->n_edges + 1) != GP_OK)
        return GP_ENOMEM;
    g->edges[g->n_edges++] = (gp__cpedge){src, dst, w, ev, (uint8_t)type};
    return GP_OK;
}

static gp_status make_nodes(gp__cpgraph *g)
{
    /* HTA numbers nodes by (time, event), which decides its ties (§6): a node array, sorted
     * below. The default mode needs no order (the longest path does not depend on it: sorting 2
     * nodes per event was the largest cost of the graph): numbered in event order, a pair per node
     * event, and only the pair's event kept (gp__cp_node). */
    gp_status st =
        g->hta
            ? gp__cp_reserve((void **)&g->nodes, &g->cap_nodes, sizeof(*g->nodes), 2 * g->n_evs)
            : gp__cp_reserve((void **)&g->pair_ev, &g->cap_pair_ev, sizeof(*g->pair_ev), g->n_evs);
    if (st != GP_OK)
        return st;
    g->max_end = INT64_MIN;
    for (size_t i = 0; i < g->n_evs; i++) {
        gp__cpev *e = &g->evs[i];
        e->ns = e->ne = NO_NODE;
        g->max_end = GP_MAX(g->max_end, e->e);
        if (!(e->flags & GP__CPE_NODE))
            continue;
        if (g->hta) {
            g->nodes[g->n_nodes] = (gp__cpnode){e->s, (uint32_t)i, false};
            g->nodes[g->n_nodes + 1] = (gp__cpnode){e->e, (uint32_t)i, true};
        } else {
            g->pair_ev[g->n_nodes / 2] = (uint32_t)i;
        }
        e->ns = (uint32_t)g->n_nodes++;
        e->ne = (uint32_t)g->n_nodes++;
    }
    if (!g->hta)
        return GP_OK;
    if (!sort_nodes(g->nodes, g->n_nodes))
        return GP_ENOMEM;
    for (size_t k = 0; k < g->n_nodes; k++) {
        gp__cpev *e = &g->evs[g->nodes[k].ev];
        if (g->nodes[k].end)
            e->ne = (uint32_t)k;
        else
            e->ns = (uint32_t)k;
    }
    return GP_OK;
}

/* §4.1: calls that take CUDA's runtime lock are serialised across threads. */
static gp_status lock_pass(gp__cpgraph *g)
{
    uint32_t *pending = malloc((g->n_nodes ? g->n_nodes : 1) * sizeof(*pending));
    if (!pending)
        return GP_ENOMEM;
    size_t n_pending = 0;
    uint32_t last_end = NO_NODE;
    bool prev_end = false;
    gp_status st = GP_OK;
    for (uint32_t k = 0; k < g->n_nodes && st == GP_OK; k++) {
        const gp__cpnode *nd = &g->nodes[k];
        const gp__cpev *e = &g->evs[nd->ev];
        if (!(e->flags & GP__CPE_LOCK))
            continue;
        if (!nd->end) {
            pending[n_pending++] = k;
            prev_end = false;
            continue;
        }
        for (size_t p = 0; p < n_pending && st == GP_OK; p++) {
            if (pending[p] == e->ns)
                st = add_edge(g, e->ns, k, e->e - e->s, (int32_t)nd->ev, GP__CPT_OPERATOR);
            else
                st = add_edge(g, pending[p], k, 0, -1, GP__CPT_DEPENDENCY);
        }
        n_pending = 0;
        if (prev_end && st == GP_OK)
            st = add_edge(g, last_end, k, 0, -1, GP__CPT_DEPENDENCY);
        prev_end = true;
        last_end = k;
    }
    free(pending);
    return st;
}

/* An edge of a thread's walk: in g->steps when the graph contracts the walks (g->chain). */
static inline gp_status walk_edge(gp__cpgraph *g, uint32_t src, uint32_t dst, int64_t w, int32_t ev,
                                  gp__cp_edge_type type)
{
    if (!g->chain)
        return add_edge(g, src, dst, w, ev, type);
    if (g->n_steps == g->cap_steps &&
        gp__grow((void **)&g->steps, &g->cap_steps, sizeof(*g->steps), g->n_steps + 1) != GP_OK)
        return GP_ENOMEM;
    g->steps[g->n_steps++] = (gp__cpedge){src, dst, w, ev, (uint8_t)type};
    return GP_OK;
}

/* A thread's walk (§4.2): the last visited node, with its event, end flag and time (read here,
 * not from g->nodes: the walk is one edge per node), the open node events, and in the default
 * mode the latest time the thread's chain has covered. */
typedef struct walk {
    uint32_t last; /* NO_NODE at the start of a thread */
    uint32_t last_ev;
    bool last_end;
    int depth;
    int64_t last_ts;
    int64_t cursor;
} walk;

/* The event an operator edge from the last node to a node of event i (its end when end) counts
 * for (§7). */
static inline int32_t attributed(const gp__cpgraph *g, const walk *w, uint32_t i, bool end)
{
    if (!w->last_end)
        return (int32_t)w->last_ev;
    if (end)
        return (int32_t)i;
    return g->evs[w->last_ev].parent;
}

/* The weight of a CPU edge last -> a node at ts: the gap (HTA), or in the default mode the time
 * past the cursor, so that events overlapping their siblings count their time once. */
static inline int64_t cpu_gap(const gp__cpgraph *g, walk *w, int64_t ts)
{
    if (g->hta)
        return ts - w->last_ts;
    int64_t gap = GP_MAX(ts - w->cursor, 0);
    w->cursor = GP_MAX(w->cursor, ts);
    return gap;
}

/* HTA: the last node and the next (of event e, its end when end) are both runtime-lock calls,
 * not an end followed by a start: lock_pass links them. */
static inline bool lock_pair(const gp__cpgraph *g, const walk *w, const gp__cpev *e, bool end)
{
    if (!g->hta || w->last == NO_NODE)
        return false;
    if (!(g->evs[w->last_ev].flags & GP__CPE_LOCK) || !(e->flags & GP__CPE_LOCK))
        return false;
    return !(w->last_end && !end);
}

static inline void visit(walk *w, uint32_t node, uint32_t i, bool end, int64_t ts)
{
    w->last = node;
    w->last_ev = i;
    w->last_end = end;
    w->last_ts = ts;
}

static inline gp_status enter(gp__cpgraph *g, walk *w, uint32_t i)
{
    const gp__cpev *e = &g->evs[i];
    if (!(e->flags & GP__CPE_NODE))
        return GP_OK;
    gp_status st = GP_OK;
    if (w->last == NO_NODE)
        w->cursor = e->s;
    if (w->last != NO_NODE && !lock_pair(g, w, e, false)) {
        int64_t gap = cpu_gap(g, w, e->s);
        if (w->depth == 0 && g->hta) /* idle between top-level ops: free in HTA */
            st = add_edge(g, w->last, e->ns, 0, -1, GP__CPT_DEPENDENCY);
        else
            st = walk_edge(g, w->last, e->ns, gap, attributed(g, w, i, false), GP__CPT_OPERATOR);
    }
    visit(w, e->ns, i, false, e->s);
    w->depth++;
    return st;
}

static inline gp_status leave(gp__cpgraph *g, walk *w, uint32_t i)
{
    const gp__cpev *e = &g->evs[i];
    if (!(e->flags & GP__CPE_NODE))
        return GP_OK;
    gp_status st = GP_OK;
    if (!lock_pair(g, w, e, true)) {
        int64_t gap = cpu_gap(g, w, e->e);
        if (e->flags & GP__CPE_BLOCKING)
            gap = 0;
        st = walk_edge(g, w->last, e->ne, gap, attributed(g, w, i, true), GP__CPT_OPERATOR);
    }
    visit(w, e->ne, i, true, e->e);
    w->depth--;
    return st;
}

/* §4.2: a depth-first walk of each thread's nesting tree. The CPU events of a thread are
 * contiguous in g->evs, in nesting order (start, longer first), and their parents are set, so
 * the walk is a stack of the open events. */
static gp_status nesting_pass(gp__cpgraph *g)
{
    uint32_t *stack = malloc((g->n_evs ? g->n_evs : 1) * sizeof(*stack));
    if (!stack)
        return GP_ENOMEM;
    size_t sp = 0;
    const walk start = {NO_NODE, 0, false, 0, 0, 0};
    walk w = start;
    int32_t thread = INT32_MIN;
    gp_status st = GP_OK;
    for (size_t i = 0; i <= g->n_cpu && st == GP_OK; i++) {
        const gp__cpev *e = i < g->n_cpu ? &g->evs[i] : NULL;
        bool cpu = e != NULL;
        if (!cpu || e->thread != thread) { /* close the previous thread */
            while (sp > 0 && st == GP_OK)
                st = leave(g, &w, stack[--sp]);
            w = start;
            if (!cpu)
                break;
            thread = e->thread;
        }
        while (sp > 0 && (int32_t)stack[sp - 1] != e->parent && st == GP_OK)
            st = leave(g, &w, stack[--sp]);
        if (st == GP_OK)
            st = enter(g, &w, (uint32_t)i);
        stack[sp++] = (uint32_t)i;
    }
    free(stack);
    return st;
}

GP__DEFINE_MERGE_SORT(sort_gpu_keys, gp__cp_time_key, gp__cp_time_key_cmp)

/* The launch or kernel-kernel edge into GPU event r (§4.3). */
static gp_status gpu_edges(gp__cpgraph *g, uint32_t r, int32_t prev)
{
    const gp__cpev *e = &g->evs[r];
    const gp__cpev *l = e->launcher >= 0 ? &g->evs[e->launcher] : NULL;
    const gp__cpev *p = prev >= 0 ? &g->evs[prev] : NULL;
    if (l && l->ns == NO_NODE)
        l = NULL;
    if (g->hta) {
        /* a Stream Wait Event in front of the kernel: the waited-for work's end -> its start */
        const gp__cpev *w = e->wait_src >= 0 ? &g->evs[e->wait_src] : NULL;
        if (w && w->ne == NO_NODE)
            w = NULL;
        gp_status st = w ? add_edge(g, w->ne, e->ns, 0, -1, GP__CPT_SYNC) : GP_OK;
        if (st != GP_OK)
            return st;
        if (l && e->q_launch == 1 && e->q_start == 0 && (!p || p->e < l->s) && (!w || w->e < l->s))
            return add_edge(g, l->ns, e->ns, e->s - l->s, -1, GP__CPT_LAUNCH);
        if (p && e->s - p->e < HTA_KK_LIMIT_US && (!w || w->e < p->e))
            return add_edge(g, p->ne, e->ns, e->s - p->e, prev, GP__CPT_KERNEL_KERNEL);
        return GP_OK;
    }
    /* A cross-stream wait (wait_src: named by a Stream Wait Event row, or infer_xwaits): work on
     * another stream that ended after the launch call returned and after the previous work of the
     * stream, and before the kernel started: the kernel waited for it, and the gap counts to it
     * (a time-ordered edge: no cycle). */
    const gp__cpev *w = e->wait_src >= 0 ? &g->evs[e->wait_src] : NULL;
    if (w && w->ne != NO_NODE && l && w->e > l->e && w->e <= e->s && (!p || w->e > p->e))
        return add_edge(g, w->ne, e->ns, e->s - w->e, e->wait_src, GP__CPT_SYNC);
    /* The dependency the kernel waited for: the previous GPU event when it was still running
     * when the launch call started (the work was queued), else the launch. */
    if (p && (!l || p->e >= l->s))
        return add_edge(g, p->ne, e->ns, e->s - p->e, prev, GP__CPT_KERNEL_KERNEL);
    if (l)
        return add_edge(g, l->ns, e->ns, e->s - l->s, -1, GP__CPT_LAUNCH);
    return GP_OK;
}

/* §4.4 for Context Sync (every stream), Stream Sync (its stream) and Event Sync (the recorded
 * event's work) rows; a Stream Wait Event's edge goes to the waiting kernel (gpu_edges). */
static gp_status sync_row(gp__cpgraph *g, uint32_t r, const int32_t *prev, size_t n_lanes)
{
    const gp__cpev *e = &g->evs[r];
    if (e->launcher < 0 || g->evs[e->launcher].ne == NO_NODE)
        return GP_OK;
    uint32_t call_end = g->evs[e->launcher].ne;
    gp_status st = GP_OK;
    if (e->flags & GP__CPE_WAITROW) /* applied to the waiting kernel (gpu_edges) */
        return GP_OK;
    if (e->flags & GP__CPE_EVSYNC) { /* the recorded event's work -> the call's end */
        const gp__cpev *w = e->wait_src >= 0 ? &g->evs[e->wait_src] : NULL;
        return w && w->ne != NO_NODE ? add_edge(g, w->ne, call_end, 0, -1, GP__CPT_SYNC) : GP_OK;
    }
    if (e->flags & GP__CPE_COMM) { /* Context Sync: marked COMM by the caller */
        for (size_t k = 0; k < n_lanes && st == GP_OK; k++)
            if (prev[k] >= 0)
                st = add_edge(g, g->evs[prev[k]].ne, call_end, 0, -1, GP__CPT_SYNC);
        return st;
    }
    if (e->thread >= 0 && (size_t)e->thread < n_lanes && prev[e->thread] >= 0)
        st = add_edge(g, g->evs[prev[e->thread]].ne, call_end, 0, -1, GP__CPT_SYNC);
    return st;
}

static gp_status gpu_pass(gp__cpgraph *g)
{
    size_t n = g->n_evs - g->n_cpu, n_lanes = 0;
    for (size_t i = g->n_cpu; i < g->n_evs; i++)
        n_lanes = GP_MAX(n_lanes, (size_t)g->evs[i].thread + 1);
    gp__cp_time_key *keys = malloc((n ? n : 1) * sizeof(*keys));
    int32_t *prev = malloc((n_lanes ? n_lanes : 1) * sizeof(*prev));
    if (!keys || !prev) {
        free(keys);
        free(prev);
        return GP_ENOMEM;
    }
    n = 0;
    for (size_t i = g->n_cpu; i < g->n_evs; i++) {
        const gp__cpev *e = &g->evs[i];
        keys[n++] = (gp__cp_time_key){(e->flags & GP__CPE_SYNC) ? e->e : e->s, (uint32_t)i};
    }
    for (size_t k = 0; k < n_lanes; k++)
        prev[k] = -1;
    gp_status st = sort_gpu_keys(keys, n) ? GP_OK : GP_ENOMEM;
    for (size_t k = 0; k < n && st == GP_OK; k++) {
        uint32_t r = keys[k].ev;
        const gp__cpev *e = &g->evs[r];
        if (e->flags & GP__CPE_SYNC) {
            st = sync_row(g, r, prev, n_lanes);
            continue;
        }
        if (e->ns == NO_NODE)
            continue;
        int32_t p = prev[e->thread];
        /* default mode: work overlapping the previous on its stream counts its time once */
        int64_t from = g->hta || p < 0 ? e->s : GP_MAX(e->s, g->evs[p].e);
        st = add_edge(g, e->ns, e->ne, e->e - from, (int32_t)r, GP__CPT_OPERATOR);
        if (st == GP_OK)
            st = gpu_edges(g, r, p);
        if (g->hta || p < 0 || e->e > g->evs[p].e)
            prev[e->thread] = (int32_t)r;
    }
    free(keys);
    free(prev);
    return st;
}

/* Default mode: a blocking call waits for the GPU work that ended last inside it (the caller
 * sets it as the call's launcher field and flags the call blocking). The edge carries the time
 * from that end to the call's return (the host waking up), counted as the call's CPU time. */
static gp_status inferred_syncs(gp__cpgraph *g)
{
    gp_status st = GP_OK;
    for (size_t i = 0; i < g->n_cpu && st == GP_OK; i++) {
        const gp__cpev *c = &g->evs[i];
        if (!(c->flags & GP__CPE_BLOCKING) || c->launcher < 0)
            continue;
        const gp__cpev *src = &g->evs[c->launcher];
        if (src->ne == NO_NODE || c->ne == NO_NODE)
            continue;
        st = add_edge(g, src->ne, c->ne, GP_MAX(c->e - src->e, 0), (int32_t)i, GP__CPT_SYNC);
    }
    return st;
}

/* The passes that add the edges, in HTA's order (which the ties of the longest path follow). */
static gp_status edge_passes(gp__cpgraph *g)
{
    gp_status st = GP_OK;
    if (g->hta)
        st = lock_pass(g);
    if (st == GP_OK)
        st = nesting_pass(g);
    if (st == GP_OK)
        st = gpu_pass(g);
    if (st == GP_OK && !g->hta)
        st = inferred_syncs(g);
    return st;
}

gp_status gp__cp_build(gp__cpgraph *g)
{
    gp_status st = make_nodes(g);
    g->chain = !g->hta && gp__cp_contract;
    /* about one edge per node (the CPU walk and each GPU event's operator edge) and one per event
     * (a GPU event's launch or kernel-kernel edge, a synchronisation): one allocation; with the
     * walks contracted, the walk edges (one per CPU node) apart from the rest (two per GPU event
     * and one per synchronisation; the path names the walk edges on it in steps) */
    size_t n_gpu = g->n_evs - g->n_cpu;
    size_t cap = g->chain ? 2 * n_gpu + g->n_calls + 16 : g->n_nodes + g->n_evs + 16;
    if (st == GP_OK)
        st = gp__cp_reserve((void **)&g->edges, &g->cap_edges, sizeof(*g->edges), cap);
    if (st == GP_OK && g->chain)
        st = gp__cp_reserve((void **)&g->steps, &g->cap_steps, sizeof(*g->steps), g->n_nodes);
    return st == GP_OK ? edge_passes(g) : st;
}

/* The full graph of a contracted one: the walk edges in edges again, in HTA's order. */
static gp_status rebuild_full(gp__cpgraph *g)
{
    g->n_steps = 0;
    g->chain = false;
    g->n_edges = 0;
    g->negative = 0;
    return edge_passes(g);
}

/* A node of the longest-path walk, its fields side by side (one cache line per visit: the walk
 * is a random access per edge): its distance, best in-edge + 1 (0: none yet), in-edges not yet
 * relaxed, and first out-edge + 1 (0: none). */
typedef struct lp_node {
    int64_t dist;
    uint32_t pred, indeg, head;
} lp_node;

/* §6: networkx's dag_longest_path: nodes in Kahn order (in-degree-0 nodes by id, then generation
 * by generation), each taking its best predecessor (the first edge inserted among equals), the
 * path ending at the first node of that order with the largest distance. Linear. The out-edges
 * of a node are a list through next (one pass over the edges, backwards so that each list is in
 * insertion order, which Kahn order depends on), not a copy of the edges by source. */
gp_status gp__cp_longest(gp__cpgraph *g)
{
    if (g->chain) {
        bool exact = false;
        gp_status st = gp__cp_chain_longest(g, &exact);
        if (st != GP_OK || exact)
            return st;
        /* two ends of the path that the contracted graph cannot order: the full graph */
        if ((st = rebuild_full(g)) != GP_OK)
            return st;
    }
    size_t nn = g->n_nodes, ne = g->n_edges;
    const gp__cpedge *edges = g->edges;
    uint32_t *next = malloc((ne ? ne : 1) * sizeof(*next)); /* next out-edge of the source + 1 */
    lp_node *nd = malloc((nn ? nn : 1) * sizeof(*nd));
    uint32_t *queue = malloc((nn ? nn : 1) * sizeof(*queue));
    gp_status st = GP_ENOMEM;
    if (!next || !nd || !queue)
        goto done;
    /* no calloc: the lists and in-degrees start empty here, distances and best edges below */
    for (size_t v = 0; v < nn; v++)
        nd[v].head = nd[v].indeg = 0;
    for (size_t k = ne; k-- > 0;) {
        const gp__cpedge *e = &edges[k];
        next[k] = nd[e->src].head;
        nd[e->src].head = (uint32_t)k + 1;
        nd[e->dst].indeg++;
        g->negative += e->w < 0;
    }
    size_t head = 0, tail = 0;
    for (size_t v = 0; v < nn; v++) {
        nd[v].dist = 0;
        nd[v].pred = 0;
        if (nd[v].indeg == 0) {
            queue[tail++] = (uint32_t)v;
            /* default mode: a chain starts at the region's start (a thread or stream that
             * starts later has waited since then) */
            if (!g->hta)
                nd[v].dist = GP_MAX(gp__cp_node(g, (uint32_t)v).ts - g->origin, 0);
        }
    }
    /* the first node of Kahn order with the largest distance: a node's distance is final when it
     * leaves the queue */
    uint32_t best = nn ? queue[0] : 0;
    int64_t best_dist = nn ? nd[best].dist : 0;
    while (head < tail) {
        uint32_t u = queue[head++];
        int64_t du = nd[u].dist;
        if (du > best_dist) {
            best = u;
            best_dist = du;
        }
        for (uint32_t k = nd[u].head; k; k = next[k - 1]) {
            const gp__cpedge *e = &edges[k - 1];
            lp_node *d = &nd[e->dst];
            int64_t cand = du + GP_MAX(e->w, 0);
            if (!d->pred || cand > d->dist || (cand == d->dist && k < d->pred)) {
                d->dist = cand;
                d->pred = k;
            }
            if (--d->indeg == 0)
                queue[tail++] = e->dst;
        }
    }
    if (tail < nn) {
        st = GP_EINVAL; /* a cycle */
        goto done;
    }
    g->length = nn ? best_dist : 0;
    /* one walk back along the best in-edges, writing the path's edges from the end of an array
     * of the largest size (a path visits each node once: at most nn - 1 edges), then moved to
     * its front */
    if (gp__cp_reserve((void **)&g->path, &g->cap_path, sizeof(*g->path), nn) != GP_OK)
        goto done;
    uint32_t *path = g->path;
    size_t at = nn ? nn : 1;
    uint32_t first = best;
    for (; nn && nd[first].pred; first = edges[nd[first].pred - 1].src)
        path[--at] = nd[first].pred - 1;
    g->n_path = (nn ? nn : 1) - at;
    memmove(path, path + at, g->n_path * sizeof(*path));
    g->path = path;
    g->head_offset = nn ? nd[first].dist : 0;
    st = GP_OK;
done:
    free(next);
    free(nd);
    free(queue);
    return st;
}
