/* The result of one critical path: the breakdown by bound_by class, the events holding the most
 * path time (with their Python frame) and the events on the path (docs/analyses.md, "Critical
 * path"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/critpath_internal.h"
#include "core/invariant.h"
#include "core/msort.h"

#define CP_TOP 10

/* §7: the class an edge's time counts to. */
static gp_cp_class edge_class(const gp__cpgraph *g, const gp__cpedge *e)
{
    switch ((gp__cp_edge_type)e->type) {
    case GP__CPT_LAUNCH:
        return GP_CP_LAUNCH;
    case GP__CPT_KERNEL_KERNEL:
        return GP_CP_KERNEL_KERNEL;
    case GP__CPT_DEPENDENCY:
        return GP_CP_DEPENDENCY;
    case GP__CPT_SYNC:
        if (g->hta || e->ev < 0)
            return GP_CP_DEPENDENCY;
        break;
    case GP__CPT_OPERATOR:
        break;
    }
    if (e->ev < 0)
        return GP_CP_CPU;
    const gp__cpev *ev = &g->evs[e->ev];
    if (ev->flags & GP__CPE_GPU)
        return (ev->flags & GP__CPE_COMM) ? GP_CP_GPU_COMM : GP_CP_GPU_COMPUTE;
    return (ev->flags & GP__CPE_DATALOAD) ? GP_CP_DATA_LOADING : GP_CP_CPU;
}

/* One (name, class) entry of the top events. */
typedef struct contrib {
    const char *name;
    int32_t ev;   /* the first (in path order) event of this name and class, -1 */
    int32_t last; /* the event of the entry's latest edge: an event's edges count it once */
    int32_t next; /* the next entry of the same name (another class) + 1, 0 */
    uint8_t cls;
    uint8_t kind;
    gp_ns time;
    uint64_t count;
} contrib;

static int cmp_contrib_time(const contrib *a, const contrib *b)
{
    GP_CMP_KEY(b->time, a->time);
    return strcmp(a->name, b->name);
}
GP__DEFINE_MERGE_SORT(sort_contrib_time, contrib, cmp_contrib_time)

/* The innermost Python frame enclosing event i (a GPU event: its launch call; a Python frame: its
 * caller). */
static const char *python_of(const gp__cpgraph *g, const gp_trace *t, int32_t i)
{
    if (i >= 0 && (g->evs[i].flags & GP__CPE_GPU))
        i = g->evs[i].launcher;
    else if (i >= 0)
        i = g->evs[i].parent;
    for (; i >= 0; i = g->evs[i].parent)
        if (g->evs[i].ev->kind == GP_EV_PYTHON)
            return gp_trace_str(t, g->evs[i].ev->name);
    return "";
}

/* What one pass over the path gathers: the (name, class) entries c[0, m) in path order (an entry
 * keeps the earliest event of its name on the path), found through first, indexed by name id
 * (the unattributed and head entries use the ids after the table's), and the events seen. A table
 * by name, not a hash map: a path edge costs one array read (a map lookup per edge was a third of
 * the result's cost). */
typedef struct tally {
    contrib *c;
    size_t m;
    int32_t *first; /* the first entry of a name + 1, 0 */
    size_t none;    /* the id of "between top-level events"; none + 1: the head's */
    uint8_t *seen;  /* per region event: on the path already */
} tally;

static void tally_free(tally *ty)
{
    free(ty->c);
    free(ty->first);
    free(ty->seen);
}

static gp_status tally_init(tally *ty, const gp__cpgraph *g, const gp_trace *t)
{
    ty->none = gp_trace_str_count(t) + 1;
    ty->m = 0;
    ty->c = malloc((g->n_path + 1) * sizeof(*ty->c));
    ty->first = calloc(ty->none + 2, sizeof(*ty->first));
    ty->seen = calloc(g->n_evs ? g->n_evs : 1, 1);
    return ty->c && ty->first && ty->seen ? GP_OK : GP_ENOMEM;
}

/* A new (name id, class) entry, linked at *link; the name is resolved here, once per entry. */
static void new_contrib(tally *ty, const gp_trace *t, int32_t *link, size_t id, int32_t ev,
                        gp_cp_class cls, uint8_t kind, gp_ns time)
{
    const char *name = id == ty->none       ? "(between top-level events)"
                       : id == ty->none + 1 ? "(before the first event of the path's thread or "
                                              "stream)"
                                            : gp_trace_str(t, (gp_strid)id);
    ty->c[ty->m] = (contrib){name, ev, ev, 0, (uint8_t)cls, kind, time, 1};
    *link = (int32_t)++ty->m;
}

/* Adds one path edge's time to the (name id, class) entry (inlined: once per path edge). */
static inline void add_contrib(tally *ty, const gp_trace *t, size_t id, int32_t ev, gp_cp_class cls,
                               uint8_t kind, gp_ns time)
{
    int32_t *link = &ty->first[id];
    while (*link && ty->c[*link - 1].cls != (uint8_t)cls)
        link = &ty->c[*link - 1].next;
    if (!*link) {
        new_contrib(ty, t, link, id, ev, cls, kind, time);
        return;
    }
    contrib *c = &ty->c[*link - 1];
    c->time += time;
    if (ev < 0 || ev != c->last) /* a new event (an event's path edges are consecutive in its
                                    entry: its children belong to other entries) */
        c->count++;
    c->last = ev;
}

/* The top events from the entries (sorted by time here). */
static gp_status top_events(const gp__cpgraph *g, const gp_trace *t, tally *ty,
                            gp_critical_path *cp)
{
    contrib *c = ty->c;
    size_t m = ty->m;
    if (!sort_contrib_time(c, m))
        return GP_ENOMEM;
    size_t n_top = GP_MIN(m, (size_t)CP_TOP);
    cp->top = calloc(n_top ? n_top : 1, sizeof(*cp->top));
    if (!cp->top)
        return GP_ENOMEM;
    for (size_t k = 0; k < n_top; k++)
        cp->top[k] = (gp_cp_event){c[k].name, c[k].kind,  (gp_cp_class)c[k].cls,
                                   c[k].time, c[k].count, python_of(g, t, c[k].ev)};
    cp->n_top = n_top;
    return GP_OK;
}

/* An array sized for the worst case, cut to its n used elements (it lives as long as the
 * analysis; heaptrack: 12 MB of links and 5 MB of events allocated on large_v100_nccl x7); freed
 * (NULL) when n is 0: the default mode's paths there have no link to draw, and 35 empty arrays of
 * 0.48 MB stayed to the end of `report`. Kept as is when realloc fails. */
static void shrink(void **p, size_t n, size_t size)
{
    if (!n) {
        free(*p);
        *p = NULL;
        return;
    }
    void *q = realloc(*p, n * size);
    if (q)
        *p = q;
}

/* §6: the event of node v when not seen yet, in path order (only counted without an overlay). */
static inline void path_event(const gp__cpgraph *g, uint32_t v, tally *ty, bool overlay,
                              gp_critical_path *cp)
{
    uint32_t i = gp__cp_node(g, v).ev;
    if (ty->seen[i])
        return;
    ty->seen[i] = 1;
    if (overlay)
        cp->events[cp->n_events] = g->evs[i].ev;
    cp->n_events++;
}

/* HTA's edge type strings. */
static const char *edge_type_name(gp__cp_edge_type type)
{
    static const char *const names[] = {[GP__CPT_OPERATOR] = "critical_path_operator",
                                        [GP__CPT_DEPENDENCY] = "critical_path_dependency",
                                        [GP__CPT_LAUNCH] = "critical_path_kernel_launch_delay",
                                        [GP__CPT_KERNEL_KERNEL] =
                                            "critical_path_kernel_kernel_delay",
                                        [GP__CPT_SYNC] = "critical_path_sync_dependency"};
    return GP_NAME_OF(names, type, "");
}

/* §9: the path edges HTA's overlay draws by default (dependency, launch, synchronisation). */
static gp_status path_links(const gp__cpgraph *g, int64_t unit, gp_critical_path *cp)
{
    cp->links = malloc((g->n_path ? g->n_path : 1) * sizeof(*cp->links));
    if (!cp->links)
        return GP_ENOMEM;
    for (size_t k = 0; k < g->n_path; k++) {
        const gp__cpedge *e = gp__cp_path_edge(g, k);
        if (e->type != GP__CPT_DEPENDENCY && e->type != GP__CPT_LAUNCH && e->type != GP__CPT_SYNC)
            continue;
        gp__cpnode a = gp__cp_node(g, e->src), b = gp__cp_node(g, e->dst);
        cp->links[cp->n_links++] = (gp_chrome_link){g->evs[a.ev].ev,
                                                    g->evs[b.ev].ev,
                                                    a.end,
                                                    b.end,
                                                    (g->hta ? e->w : GP_MAX(e->w, 0)) * unit,
                                                    edge_type_name((gp__cp_edge_type)e->type)};
    }
    shrink((void **)&cp->links, cp->n_links, sizeof(*cp->links));
    return GP_OK;
}

gp_status gp__cp_result(const gp__cpgraph *g, const gp_trace *t, int64_t unit, bool overlay,
                        gp_critical_path *cp)
{
    tally ty;
    gp_status st = tally_init(&ty, g, t);
    cp->events = overlay ? malloc((2 * g->n_path + 1) * sizeof(*cp->events)) : NULL;
    if (st != GP_OK || (overlay && !cp->events)) {
        tally_free(&ty);
        return GP_ENOMEM;
    }
    /* one pass over the path: the classes, the top events' entries and the events */
    gp_ns sum = 0;
    for (size_t k = 0; k < g->n_path; k++) {
        const gp__cpedge *e = gp__cp_path_edge(g, k);
        /* HTA's breakdown keeps a negative weight that the path used as 0 (§5) */
        gp_ns w = (g->hta ? e->w : GP_MAX(e->w, 0)) * unit;
        gp_cp_class cls = edge_class(g, e);
        cp->by_class[cls] += w;
        sum += w;
        if (cls != GP_CP_DEPENDENCY && cls != GP_CP_LAUNCH) {
            const gp_event *ev = e->ev >= 0 ? g->evs[e->ev].ev : NULL;
            add_contrib(&ty, t, ev ? (size_t)ev->name : ty.none, e->ev, cls,
                        (uint8_t)(ev ? ev->kind : GP_EV_OTHER), w);
        }
        /* the path is a chain (an edge starts where the previous ended): its nodes are the
         * first edge's source and each edge's target */
        if (k == 0)
            path_event(g, e->src, &ty, overlay, cp);
        path_event(g, e->dst, &ty, overlay, cp);
    }
    if (overlay)
        shrink((void **)&cp->events, cp->n_events, sizeof(*cp->events));
    if (g->head_offset > 0) { /* default mode: the path's head started after the region */
        cp->by_class[GP_CP_CPU] += g->head_offset * unit;
        sum += g->head_offset * unit;
        add_contrib(&ty, t, ty.none + 1, -1, GP_CP_CPU, GP_EV_OTHER, g->head_offset * unit);
    }
    cp->length = g->length * unit;
    for (int c = 0; c < GP_CP_COUNT; c++)
        cp->pct[c] = sum != 0 ? 100.0 * (double)cp->by_class[c] / (double)sum : NAN;
    GP_INVARIANT(g->hta || sum == cp->length, "critical path: classes sum to %lld, length %lld",
                 (long long)sum, (long long)cp->length);
    st = top_events(g, t, &ty, cp);
    tally_free(&ty);
    if (st == GP_OK && overlay)
        st = path_links(g, unit, cp);
    return st;
}
