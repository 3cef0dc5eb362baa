/* The longest path of the default mode's graph with the threads' walks contracted (issue 37).
 *
 * Most nodes of a region's graph are a thread's: the walk (nesting_pass, critpath_graph.c) gives
 * each of them one edge in, from the node before, and one out, to the node after; only launch
 * calls (their launch edges), blocking calls (their synchronisation edges), the ends of each
 * walk and the GPU nodes have other edges. A run of walk edges through nodes without other edges
 * is one edge of the contracted graph, weighing the sum of its weights; the longest path runs on
 * that graph (about a node per launch instead of two per event on the H100 trace), then expands
 * the runs it takes back into walk edges.
 *
 * It gives gp__cp_longest's answer:
 * - Distances and best in-edges do not depend on the order nodes are visited: a node's distance
 *   is the largest over its in-edges, and among equals the best in-edge is the one inserted first
 *   in the full graph, where the walk edges come first (each contracted edge keeps the index its
 *   last walk edge would have, `key`).
 * - The path ends at the first node of Kahn order with the largest distance. Kahn order with a
 *   first-in first-out queue visits the nodes by level (the most edges on a path from a node
 *   without in-edges), as breadth-first search does, so the node of the smallest level among the
 *   nodes of the largest distance is first, the nodes inside runs included (level: their run's
 *   source's plus their place in the run). Two such nodes of one level would need the order
 *   within a level: *exact turns false and the caller runs the full graph
 *   (gp__cp_chain_fallbacks counts it; test_critpath compares both on every trace). */
#include <stdlib.h>
#include <string.h>

#include "analyze/critpath_internal.h"

#define KEPT 0u
#define INNER UINT32_MAX

atomic_size_t gp__cp_chain_fallbacks; /* critpath_internal.h */

/* An edge of the contracted graph: a run of walk edges g->steps[ref, ref + hops) (run), or the
 * edge g->edges[ref] (hops 1). */
typedef struct cedge {
    uint32_t src, dst; /* contracted nodes */
    int64_t w;         /* the weight the path uses: the sum of the weights, each at least 0 */
    uint32_t key;      /* the index of the (run's last) edge in the full graph: the ties */
    uint32_t ref, hops;
    bool run;
} cedge;

typedef struct cnode {
    int64_t dist;
    uint64_t level;
    uint32_t pred, indeg, head; /* best in-edge + 1; in-edges not relaxed; first out-edge + 1 */
    uint32_t node;              /* the node of the full graph */
} cnode;

/* The contracted graph, in the buffers the graph keeps from region to region (g->keep). */
typedef struct chain {
    uint32_t *cid; /* per node of the full graph: its contracted node, INNER inside a run */
    cnode *n;
    size_t m;
    cedge *e;
    size_t n_e;
    uint32_t *next, *queue;
} chain;

/* Buffer i of the graph's kept ones, room for need elements of elem bytes, in *out. GP_ENOMEM. */
static gp_status kept(gp__cpgraph *g, size_t i, size_t elem, size_t need, void *out)
{
    gp_status st = gp__cp_reserve(&g->keep[i].p, &g->keep[i].cap, elem, need);
    memcpy(out, &g->keep[i].p, sizeof(void *));
    return st;
}

static inline int64_t used(int64_t w)
{
    return GP_MAX(w, 0);
}

/* Which nodes stay: all but those between two walk edges of a thread (the node a walk edge
 * enters and the next walk edge leaves) without another edge. */
static gp_status contract_nodes(gp__cpgraph *g, chain *c)
{
    size_t nn = g->n_nodes;
    if (kept(g, 0, sizeof(*c->cid), nn, &c->cid) != GP_OK)
        return GP_ENOMEM;
    for (size_t v = 0; v < nn; v++)
        c->cid[v] = KEPT;
    for (size_t j = 0; j + 1 < g->n_steps; j++)
        if (g->steps[j + 1].src == g->steps[j].dst)
            c->cid[g->steps[j].dst] = INNER;
    for (size_t k = 0; k < g->n_edges; k++)
        c->cid[g->edges[k].src] = c->cid[g->edges[k].dst] = KEPT;
    for (size_t v = 0; v < nn; v++)
        c->m += c->cid[v] == KEPT;
    if (kept(g, 1, sizeof(*c->n), c->m, &c->n) != GP_OK)
        return GP_ENOMEM;
    size_t m = 0;
    for (size_t v = 0; v < nn; v++)
        if (c->cid[v] == KEPT) {
            c->n[m] = (cnode){0, 0, 0, 0, 0, (uint32_t)v};
            c->cid[v] = (uint32_t)m++;
        }
    return GP_OK;
}

/* The contracted edges: the runs of walk edges (each ends at a kept node: the last walk edge of
 * a thread enters one, and a run starts where the one before ended or at a thread's first node),
 * then the other edges. */
static gp_status contract_edges(gp__cpgraph *g, chain *c)
{
    size_t runs = 0;
    for (size_t j = 0; j < g->n_steps; j++)
        runs += c->cid[g->steps[j].dst] != INNER;
    size_t cap = runs + g->n_edges;
    if (kept(g, 2, sizeof(*c->e), cap, &c->e) != GP_OK)
        return GP_ENOMEM;
    for (size_t j = 0; j < g->n_steps;) {
        size_t first = j;
        int64_t w = 0;
        for (;; j++) {
            w += used(g->steps[j].w);
            g->negative += g->steps[j].w < 0;
            if (c->cid[g->steps[j].dst] != INNER)
                break;
        }
        c->e[c->n_e++] = (cedge){c->cid[g->steps[first].src],
                                 c->cid[g->steps[j].dst],
                                 w,
                                 (uint32_t)j,
                                 (uint32_t)first,
                                 (uint32_t)(j - first + 1),
                                 true};
        j++;
    }
    for (size_t k = 0; k < g->n_edges; k++) {
        const gp__cpedge *e = &g->edges[k];
        g->negative += e->w < 0;
        c->e[c->n_e++] = (cedge){
            c->cid[e->src], c->cid[e->dst], used(e->w), (uint32_t)(g->n_steps + k), (uint32_t)k, 1,
            false};
    }
    return GP_OK;
}

/* Distances, best in-edges and levels in Kahn order. GP_EINVAL on a cycle. */
static gp_status relax(gp__cpgraph *g, chain *c)
{
    size_t m = c->m;
    if (kept(g, 3, sizeof(*c->next), c->n_e, &c->next) != GP_OK ||
        kept(g, 4, sizeof(*c->queue), m, &c->queue) != GP_OK)
        return GP_ENOMEM;
    for (size_t k = 0; k < c->n_e; k++) {
        const cedge *e = &c->e[k];
        c->next[k] = c->n[e->src].head;
        c->n[e->src].head = (uint32_t)k + 1;
        c->n[e->dst].indeg++;
    }
    size_t head = 0, tail = 0;
    for (size_t v = 0; v < m; v++)
        if (c->n[v].indeg == 0) {
            c->queue[tail++] = (uint32_t)v;
            c->n[v].dist = GP_MAX(gp__cp_node(g, c->n[v].node).ts - g->origin, 0);
        }
    while (head < tail) {
        const cnode *u = &c->n[c->queue[head++]];
        for (uint32_t k = u->head; k; k = c->next[k - 1]) {
            const cedge *e = &c->e[k - 1];
            cnode *d = &c->n[e->dst];
            int64_t cand = u->dist + e->w;
            if (!d->pred || cand > d->dist || (cand == d->dist && e->key < c->e[d->pred - 1].key)) {
                d->dist = cand;
                d->pred = k;
            }
            d->level = GP_MAX(d->level, u->level + e->hops);
            if (--d->indeg == 0)
                c->queue[tail++] = e->dst;
        }
    }
    return tail < m ? GP_EINVAL : GP_OK;
}

/* Where the path ends: a contracted node (run NONE), or the node that walk edge
 * g->steps[c->e[run].ref + at] enters. */
typedef struct end {
    uint64_t level;
    uint32_t node, run, at;
    size_t ties; /* other candidates of the same level */
} end;

static void candidate(end *b, uint64_t level, uint32_t node, uint32_t run, uint32_t at)
{
    if (level < b->level)
        *b = (end){level, node, run, at, 0};
    else if (level == b->level)
        b->ties++;
}

/* The first node of Kahn order with the largest distance, max: the kept nodes of that distance
 * and, in each run into one whose source plus the run reach it, the first node inside the run
 * that does. */
static end path_end(const gp__cpgraph *g, const chain *c, int64_t max)
{
    end b = {UINT64_MAX, UINT32_MAX, UINT32_MAX, 0, 0};
    for (size_t v = 0; v < c->m; v++)
        if (c->n[v].dist == max)
            candidate(&b, c->n[v].level, (uint32_t)v, UINT32_MAX, 0);
    for (size_t k = 0; k < c->n_e; k++) {
        const cedge *e = &c->e[k];
        const cnode *s = &c->n[e->src];
        if (!e->run || e->hops < 2 || c->n[e->dst].dist != max || s->dist + e->w != max)
            continue;
        int64_t d = s->dist;
        for (uint32_t t = 0; t + 1 < e->hops; t++) {
            d += used(g->steps[e->ref + t].w);
            if (d == max) {
                candidate(&b, s->level + t + 1, UINT32_MAX, (uint32_t)k, t);
                break;
            }
        }
    }
    return b;
}

/* Writes walk edges [from, to] (backwards, as steps: GP__CP_STEP) before *at. */
static void expand(uint32_t *path, size_t *at, size_t from, size_t to)
{
    for (size_t s = to + 1; s-- > from;)
        path[--*at] = GP__CP_STEP + (uint32_t)s;
}

/* The path from its end back along the best in-edges, runs expanded. GP_ENOMEM. */
static gp_status build_path(gp__cpgraph *g, const chain *c, end b)
{
    size_t n = 0;
    uint32_t v = b.node;
    if (b.run != UINT32_MAX) {
        n = b.at + 1;
        v = c->e[b.run].src;
    }
    for (uint32_t p = c->m ? c->n[v].pred : 0; p; p = c->n[v].pred) {
        n += c->e[p - 1].hops;
        v = c->e[p - 1].src;
    }
    uint32_t first = v;
    if (g->n_steps >= GP__CP_STEP) /* path entries name steps below GP__CP_STEP */
        return GP_ENOMEM;
    if (gp__cp_reserve((void **)&g->path, &g->cap_path, sizeof(*g->path), n) != GP_OK)
        return GP_ENOMEM;
    uint32_t *path = g->path;
    size_t at = n;
    v = b.node;
    if (b.run != UINT32_MAX) {
        expand(path, &at, c->e[b.run].ref, c->e[b.run].ref + b.at);
        v = c->e[b.run].src;
    }
    for (uint32_t p = c->m ? c->n[v].pred : 0; p; p = c->n[v].pred) {
        const cedge *e = &c->e[p - 1];
        if (e->run)
            expand(path, &at, e->ref, e->ref + e->hops - 1);
        else
            path[--at] = e->ref;
        v = e->src;
    }
    g->n_path = n;
    g->head_offset = c->m ? c->n[first].dist : 0;
    return GP_OK;
}

gp_status gp__cp_chain_longest(gp__cpgraph *g, bool *exact)
{
    chain c = {0};
    *exact = true;
    gp_status st = contract_nodes(g, &c);
    if (st == GP_OK)
        st = contract_edges(g, &c);
    if (st == GP_OK)
        st = relax(g, &c);
    if (st == GP_OK && c.m == 0) {
        g->length = 0;
        g->head_offset = 0;
        st = gp__cp_reserve((void **)&g->path, &g->cap_path, sizeof(*g->path), 1);
    } else if (st == GP_OK) {
        int64_t max = c.n[0].dist;
        for (size_t v = 1; v < c.m; v++)
            max = GP_MAX(max, c.n[v].dist);
        end b = path_end(g, &c, max);
        if (b.ties) {
            *exact = false;
            atomic_fetch_add(&gp__cp_chain_fallbacks, 1);
        } else {
            g->length = max;
            st = build_path(g, &c, b);
        }
    }
    return st;
}
