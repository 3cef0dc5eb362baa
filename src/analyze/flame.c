/* Flame graph model-to-view: builds the frame tree of a trace from range nesting and launch
 * correlation, prunes and groups it, and lays it out (x offsets, colors). No formatting here:
 * flame_render.c writes folded / speedscope / SVG / HTML from the finished tree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/msort.h"
#include "core/demangle.h"
#include "core/invariant.h"
#include "core/imap.h"
#include "core/strtab.h"
#include "core/util.h"
#include "gpuprof/report.h"
#include "analyze/analyze_internal.h"
#include "analyze/flame_layout.h"
#include "analyze/ops_internal.h"

/* A node of the trie built while walking events. */
typedef struct tnode {
    uint32_t name; /* id in the tree's strtab */
    uint32_t parent;
    uint8_t kind;
    gp_ns incl; /* CPU weight: clipped inclusive durations added here */
    gp_ns own;  /* GPU weight: durations of GPU events added at leaves */
    gp_ns total;
} tnode;

typedef struct builder {
    gp__strtab *st;
    tnode *nodes;
    size_t n, cap;
    gp__imap child; /* (parent << 32 | name) -> node index */
    bool additive;  /* weights are added at nodes and summed up the tree (GPU weight, by module) */
} builder;

typedef struct tree_priv {
    gp__strtab st;
} tree_priv;

void gp_flame_opts_init(gp_flame_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->weight = GP_FLAME_AUTO;
    opts->thread_frames = true;
}

static gp_status intern(gp__strtab *st, const char *s, uint32_t *id)
{
    return gp__strtab_intern(st, s, strlen(s), id);
}

/* Finds or creates the child of parent named name. */
static gp_status child_of(builder *b, uint32_t parent, uint32_t name, uint8_t kind, uint32_t *out)
{
    int64_t key = (int64_t)(((uint64_t)parent << 32) | name);
    uint64_t v;
    if (gp__imap_get(&b->child, key, &v)) {
        *out = (uint32_t)v;
        return GP_OK;
    }
    if (b->n >= UINT32_MAX - 1)
        return GP_ELIMIT;
    tnode *nd = GP_PUSH(b->nodes, b->n, b->cap);
    if (!nd)
        return GP_ENOMEM;
    nd->name = name;
    nd->parent = parent;
    nd->kind = kind;
    *out = (uint32_t)(b->n - 1);
    return gp__imap_put(&b->child, key, *out);
}

static gp_status child_named(builder *b, uint32_t parent, const char *name, uint8_t kind,
                             uint32_t *out)
{
    uint32_t id;
    gp_status s = intern(b->st, name, &id);
    if (s != GP_OK)
        return s;
    return child_of(b, parent, id, kind, out);
}

static bool is_gpu_weight_kind(uint8_t k)
{
    return k == GP_EV_KERNEL || k == GP_EV_MEMCPY || k == GP_EV_MEMSET;
}

static void thread_label(const gp_trace *t, const gp_track *tr, char *buf, size_t cap)
{
    const char *nm = gp_trace_str(t, tr->name);
    if (tr->tid_str)
        snprintf(buf, cap, "thread %s", gp_trace_str(t, tr->tid_str));
    else if (*nm)
        snprintf(buf, cap, "%s", nm); /* readers name threads "thread 12 (python3)" */
    else
        snprintf(buf, cap, "thread %lld", (long long)tr->tid);
}

/* The frame of GPU event name (a trace string id) in *id: a mangled kernel name demangled, as
 * Kineto already writes most kernel names, so a graph does not mix "void f<int>(int*)" and
 * "_Z1fIiEvPi"; each mangled name is demangled once (dem: trace string id -> tree string id). */
static gp_status gpu_frame_name(builder *b, gp__imap *dem, const gp_trace *t, gp_strid name,
                                uint32_t *id)
{
    const char *nm = gp_trace_str(t, name);
    if (!gp__is_mangled(nm))
        return intern(b->st, *nm ? nm : "[unnamed]", id);
    uint64_t v;
    if (gp__imap_get(dem, name, &v)) {
        *id = (uint32_t)v;
        return GP_OK;
    }
    char *d = gp__demangle(nm);
    gp_status s = intern(b->st, d ? d : nm, id);
    free(d);
    return s == GP_OK ? gp__imap_put(dem, name, *id) : s;
}

typedef struct open_frame {
    gp_ns end;
    uint32_t node;
} open_frame;

/* Walks one trace's CPU threads building stacks; in GPU mode also attaches GPU work. */
static gp_status add_trace(builder *b, const gp_trace *t, uint32_t top, gp_flame_weight w,
                           const gp_flame_opts *o, uint64_t *used, uint64_t *unattributed)
{
    gp_status s = GP_OK;
    gp__imap corr = {0}, ext = {0}, dem = {0};
    open_frame *stack = NULL;
    size_t ns = 0, cs = 0;
    char label[256];
    if ((s = gp__imap_init(&corr, 0)) != GP_OK || (s = gp__imap_init(&ext, 0)) != GP_OK ||
        (s = gp__imap_init(&dem, 0)) != GP_OK)
        goto done;
    for (size_t ti = 0; ti < t->n_tracks; ti++) {
        const gp_track *tr = &t->tracks[ti];
        if (tr->kind == GP_TRACK_GPU_STREAM || tr->kind == GP_TRACK_COUNTER)
            continue;
        bool any = false;
        for (size_t i = 0; i < tr->n_events && !any; i++)
            any = gp__is_cpu_frame_kind(tr->events[i].kind) &&
                  !(tr->events[i].flags & GP_EVF_INSTANT);
        if (!any)
            continue;
        uint32_t thread = top;
        if (o->thread_frames) {
            thread_label(t, tr, label, sizeof label);
            if ((s = child_named(b, top, label, GP_EV_KIND_COUNT, &thread)) != GP_OK)
                goto done;
        }
        ns = 0;
        for (size_t i = 0; i < tr->n_events; i++) {
            const gp_event *ev = &tr->events[i];
            if (!gp__is_cpu_frame_kind(ev->kind) || (ev->flags & GP_EVF_INSTANT))
                continue;
            while (ns > 0 && stack[ns - 1].end <= ev->ts)
                ns--;
            uint32_t parent = ns ? stack[ns - 1].node : thread;
            gp_ns end = ev->ts + ev->dur;
            if (ns && end > stack[ns - 1].end)
                end = stack[ns - 1].end; /* partial overlap: clip to the enclosing frame */
            if (w == GP_FLAME_GPU && (ev->kind == GP_EV_RUNTIME || ev->kind == GP_EV_DRIVER)) {
                /* Launches are not frames in the GPU view: their work hangs under the op. */
                if (ev->correlation != 0 &&
                    (s = gp__imap_put(&corr, ev->correlation, parent)) != GP_OK)
                    goto done;
                continue;
            }
            uint32_t node;
            const char *nm = gp_trace_str(t, ev->name);
            if ((s = child_named(b, parent, *nm ? nm : "[unnamed]", ev->kind, &node)) != GP_OK)
                goto done;
            if (w == GP_FLAME_CPU) {
                b->nodes[node].incl = gp__sat_add(b->nodes[node].incl, end - ev->ts);
                (*used)++;
            } else {
                if (ev->correlation != 0 &&
                    (s = gp__imap_put(&corr, ev->correlation, node)) != GP_OK)
                    goto done;
            }
            if (ev->external_id != 0 && ev->kind == GP_EV_CPU_OP &&
                (s = gp__imap_put(&ext, ev->external_id, node)) != GP_OK)
                goto done;
            open_frame *f = GP_PUSH(stack, ns, cs);
            if (!f) {
                s = GP_ENOMEM;
                goto done;
            }
            f->end = end;
            f->node = node;
        }
    }
    if (w != GP_FLAME_GPU)
        goto done;
    uint32_t unattr = UINT32_MAX;
    for (size_t ti = 0; ti < t->n_tracks; ti++) {
        const gp_track *tr = &t->tracks[ti];
        for (size_t i = 0; i < tr->n_events; i++) {
            const gp_event *ev = &tr->events[i];
            if (!is_gpu_weight_kind(ev->kind))
                continue;
            uint64_t v;
            uint32_t parent;
            if (ev->correlation != 0 && gp__imap_get(&corr, ev->correlation, &v)) {
                parent = (uint32_t)v;
            } else if (ev->external_id != 0 && gp__imap_get(&ext, ev->external_id, &v)) {
                parent = (uint32_t)v;
            } else {
                if (unattr == UINT32_MAX && (s = child_named(b, top, "[unattributed GPU]",
                                                             GP_EV_KIND_COUNT, &unattr)) != GP_OK)
                    goto done;
                parent = unattr;
                (*unattributed)++;
            }
            uint32_t id, node;
            if ((s = gpu_frame_name(b, &dem, t, ev->name, &id)) != GP_OK ||
                (s = child_of(b, parent, id, ev->kind, &node)) != GP_OK)
                goto done;
            b->nodes[node].own = gp__sat_add(b->nodes[node].own, ev->dur);
            (*used)++;
        }
    }
done:
    free(stack);
    gp__imap_free(&corr);
    gp__imap_free(&ext);
    gp__imap_free(&dem);
    return s;
}

/* ---- frames by module ------------------------------------------------------------------------ */

enum { MOD_CACHE = 64 };

/* One trace's module walk: the attribution of gpuprof ops (gp__ops_compute_with) tells where each
 * GPU event or op's CPU time goes; this hangs it under its module stack. */
typedef struct mod_walk {
    builder *b;
    uint32_t top;
    gp_flame_weight w;
    uint32_t none, unattr; /* "(no module)" and its "[unattributed GPU]"; UINT32_MAX until made */
    gp_strid path[MOD_CACHE]; /* the last module stack looked up, and its node */
    size_t n_path;
    uint32_t path_node;
    uint64_t *used, *unattributed;
    gp__imap dem; /* gpu_frame_name's demangled names */
    gp_status s;
} mod_walk;

/* The node of module stack mods[0, n) under the walk's top frame, "(no module)" when n is 0.
 * Consecutive events mostly share their stack: the last one is remembered. */
static bool module_node(mod_walk *m, const gp_trace *t, const gp_strid *mods, size_t n,
                        uint32_t *out)
{
    if (n == 0) {
        if (m->none == UINT32_MAX &&
            (m->s = child_named(m->b, m->top, "(no module)", GP_EV_KIND_COUNT, &m->none)) != GP_OK)
            return false;
        *out = m->none;
        return true;
    }
    if (m->n_path == n && memcmp(m->path, mods, n * sizeof *mods) == 0) {
        *out = m->path_node;
        return true;
    }
    uint32_t node = m->top, id;
    for (size_t k = 0; k < n; k++) {
        size_t len; /* "nn.Module: Linear_3" -> "Linear_3" */
        const char *s =
            gp__module_name(gp_trace_str(t, mods[k]), gp_trace_strlen(t, mods[k]), false, &len);
        if ((m->s = gp__strtab_intern(m->b->st, s, len, &id)) != GP_OK ||
            (m->s = child_of(m->b, node, id, GP_EV_PYTHON, &node)) != GP_OK)
            return false;
    }
    if (n <= MOD_CACHE) {
        memcpy(m->path, mods, n * sizeof *mods);
        m->n_path = n;
        m->path_node = node;
    }
    *out = node;
    return true;
}

/* GPU weight: GPU work of duration dur under its launching op's modules, as the leaf below a
 * frame of that op (op NULL: no op launched it; under "(no module)" / "[unattributed GPU]"). */
static bool module_gpu(void *ud, const gp_trace *t, const gp_strid *mods, size_t n, gp_ns dur,
                       const char *op, gp_strid work, uint8_t work_kind)
{
    mod_walk *m = ud;
    uint32_t node, id;
    if (m->w != GP_FLAME_GPU)
        return true;
    if (!module_node(m, t, mods, n, &node))
        return false;
    if (!op) {
        if (m->unattr == UINT32_MAX && (m->s = child_named(m->b, node, "[unattributed GPU]",
                                                           GP_EV_KIND_COUNT, &m->unattr)) != GP_OK)
            return false;
        node = m->unattr;
        (*m->unattributed)++;
    } else if ((m->s = child_named(m->b, node, *op ? op : "[unnamed]", GP_EV_CPU_OP, &node)) !=
               GP_OK) {
        return false;
    }
    if ((m->s = gpu_frame_name(m->b, &m->dem, t, work, &id)) != GP_OK ||
        (m->s = child_of(m->b, node, id, work_kind, &node)) != GP_OK)
        return false;
    m->b->nodes[node].own = gp__sat_add(m->b->nodes[node].own, dur);
    (*m->used)++;
    return true;
}

/* CPU weight: an op's self CPU time under its modules, in a leaf frame of the op. */
static bool module_op(void *ud, const gp_trace *t, const gp_strid *mods, size_t n, gp_ns self_cpu,
                      const char *op)
{
    mod_walk *m = ud;
    uint32_t node;
    if (m->w != GP_FLAME_CPU)
        return true;
    if (!module_node(m, t, mods, n, &node) ||
        (m->s = child_named(m->b, node, *op ? op : "[unnamed]", GP_EV_CPU_OP, &node)) != GP_OK)
        return false;
    m->b->nodes[node].own = gp__sat_add(m->b->nodes[node].own, self_cpu);
    (*m->used)++;
    return true;
}

/* The module frames of one trace under top: the walk of gpuprof ops --by module, listened to. */
static gp_status add_trace_modules(builder *b, const gp_trace *const *t, uint32_t top,
                                   gp_flame_weight w, uint64_t *used, uint64_t *unattributed)
{
    mod_walk m = {.b = b,
                  .top = top,
                  .w = w,
                  .none = UINT32_MAX,
                  .unattr = UINT32_MAX,
                  .used = used,
                  .unattributed = unattributed};
    gp__ops_listener l = {.ud = &m, .gpu = module_gpu, .op = module_op};
    gp_ops_opts oo;
    gp_ops_opts_init(&oo);
    oo.by = GP_OPS_BY_MODULE;
    gp_ops *ops = NULL;
    gp_status s = gp__imap_init(&m.dem, 64);
    if (s == GP_OK)
        s = gp__ops_compute_with(t, 1, &oo, &l, &ops);
    gp_ops_free(ops);
    gp__imap_free(&m.dem);
    return m.s != GP_OK ? m.s : s;
}

/* Palette by kind: warm for CPU ops, yellow for Python, grey for runtime, green for kernels,
 * blue for copies. A small name hash varies the shade so neighbours stay distinguishable. */
static uint32_t kind_color(uint8_t kind, const char *name)
{
    uint64_t h = gp__hash_bytes(name, strlen(name));
    unsigned v1 = (unsigned)(h & 0xff), v2 = (unsigned)((h >> 8) & 0xff);
    unsigned r, g, bl;
    switch (kind) {
    case GP_EV_KERNEL:
        r = 60 + v1 % 60, g = 170 + v2 % 60, bl = 60 + v1 % 40;
        break;
    case GP_EV_MEMCPY:
    case GP_EV_MEMSET:
        r = 70 + v1 % 40, g = 130 + v2 % 50, bl = 210 + v1 % 40;
        break;
    case GP_EV_PYTHON:
        r = 220 + v1 % 30, g = 200 + v2 % 40, bl = 60 + v1 % 40;
        break;
    case GP_EV_RUNTIME:
    case GP_EV_DRIVER:
    case GP_EV_OVERHEAD:
        r = g = bl = 170 + v1 % 50;
        break;
    case GP_EV_KIND_COUNT:
        r = 200, g = 200, bl = 210;
        break;
    default:
        r = 205 + v1 % 50, g = 100 + v2 % 100, bl = 40 + v1 % 40;
        break;
    }
    return (r << 16) | (g << 8) | bl;
}

typedef struct kid {
    uint32_t idx;
    const char *name;
} kid;

static int kid_cmp(const void *a, const void *b)
{
    const kid *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->idx < y->idx ? -1 : x->idx > y->idx);
}

/* Appends node c of b (its index and name) to the kids array; GP_ENOMEM when it cannot grow. */
static gp_status push_kid(kid **kids, size_t *nk, size_t *cap, const builder *b, uint32_t c)
{
    kid *k = GP_PUSH(*kids, *nk, *cap);
    if (!k)
        return GP_ENOMEM;
    k->idx = c;
    k->name = gp__strtab_get(b->st, b->nodes[c].name);
    return GP_OK;
}

/* Emits the final tree breadth-first: children sorted by name, small frames folded, deep frames
 * cut, small GPU leaves grouped, x offsets laid out. */
/* Links each node into its parent's child list (first/next, in creation order) and sums the
 * totals bottom-up for the tree's weight (nodes are created after their parents). */
static void link_children(builder *b, gp_flame_weight weight, uint32_t *first, uint32_t *next)
{
    bool additive = b->additive || weight == GP_FLAME_GPU;
    for (size_t i = 0; i < b->n; i++)
        first[i] = next[i] = UINT32_MAX;
    for (size_t i = b->n;
         i-- > 1;) { /* children lists; totals bottom-up (children after parents) */
        tnode *nd = &b->nodes[i];
        nd->total = gp__sat_add(nd->total, additive ? nd->own : nd->incl);
        if (additive)
            b->nodes[nd->parent].total = gp__sat_add(b->nodes[nd->parent].total, nd->total);
        next[i] = first[nd->parent];
        first[nd->parent] = (uint32_t)i;
    }
    if (!additive) {
        /* inclusive CPU time: a thread (or rank, root) frame is the sum of its top frames */
        for (size_t i = b->n; i-- > 1;) {
            tnode *nd = &b->nodes[i];
            if (b->nodes[nd->parent].kind == GP_EV_KIND_COUNT)
                b->nodes[nd->parent].total = gp__sat_add(b->nodes[nd->parent].total, nd->total);
        }
    }
}

static gp_status finish_tree(builder *b, const gp_flame_opts *o, gp_flame_tree *tree)
{
    gp_status s = GP_OK;
    uint32_t *first = NULL, *next = NULL, *map = NULL;
    kid *kids = NULL;
    size_t cap_kids = 0;
    gp_flame_node *out = NULL;
    size_t n_out = 0, cap_out = 0;
    first = malloc(b->n * sizeof *first);
    next = malloc(b->n * sizeof *next);
    map = malloc(b->n * sizeof *map); /* final index -> temp index */
    if (!first || !next || !map) {
        s = GP_ENOMEM;
        goto done;
    }
    link_children(b, tree->weight, first, next);
    if (b->nodes[0].total <= 0) {
        s = GP_EEMPTY;
        goto done;
    }
    gp_flame_node *root = GP_PUSH(out, n_out, cap_out);
    if (!root) {
        s = GP_ENOMEM;
        goto done;
    }
    root->name = gp__strtab_get(b->st, b->nodes[0].name);
    root->kind = GP_EV_KIND_COUNT;
    root->total = b->nodes[0].total;
    map[0] = 0;
    for (size_t fi = 0; fi < n_out; fi++) {
        uint32_t ti = map[fi];
        if (ti == UINT32_MAX) { /* a group of small kernels: a leaf */
            out[fi].self = out[fi].total;
            out[fi].first_child = 0;
            continue;
        }
        gp_ns grouped = 0;
        size_t n_grouped = 0, nk = 0;
        uint16_t depth = out[fi].depth;
        for (uint32_t c = first[ti]; c != UINT32_MAX; c = next[c]) {
            const tnode *cn = &b->nodes[c];
            if (cn->total <= 0)
                continue;
            if (cn->total < o->min_duration || (o->max_depth > 0 && depth + 1 > o->max_depth))
                continue; /* folded into this frame's self */
            if (o->group_kernels > 0 && is_gpu_weight_kind(cn->kind) &&
                cn->total < o->group_kernels && first[c] == UINT32_MAX) {
                grouped = gp__sat_add(grouped, cn->total);
                n_grouped++;
                continue;
            }
            if ((s = push_kid(&kids, &nk, &cap_kids, b, c)) != GP_OK)
                goto done;
        }
        if (n_grouped == 1) { /* a group of one is just the frame */
            for (uint32_t c = first[ti]; c != UINT32_MAX; c = next[c]) {
                const tnode *cn = &b->nodes[c];
                if (cn->total > 0 && is_gpu_weight_kind(cn->kind) && cn->total < o->group_kernels &&
                    first[c] == UINT32_MAX && cn->total >= o->min_duration) {
                    if ((s = push_kid(&kids, &nk, &cap_kids, b, c)) != GP_OK)
                        goto done;
                }
            }
            n_grouped = 0;
            grouped = 0;
        }
        if (nk > 1)
            gp__msort(kids, nk, sizeof *kids, kid_cmp);
        gp_ns kept = 0;
        out[fi].first_child = (uint32_t)n_out;
        gp_ns x = out[fi].x;
        size_t slots = nk + (n_grouped ? 1 : 0);
        for (size_t k = 0; k < slots; k++) {
            if (n_out >= UINT32_MAX - 1) {
                s = GP_ELIMIT;
                goto done;
            }
            gp_flame_node *cn = GP_PUSH(out, n_out, cap_out);
            if (!cn) {
                s = GP_ENOMEM;
                goto done;
            }
            cn->parent = (uint32_t)fi;
            cn->depth = (uint16_t)(depth + 1);
            cn->x = x;
            cn->first_child = (uint32_t)n_out; /* empty until its turn */
            if (k < nk) {
                const tnode *tn = &b->nodes[kids[k].idx];
                cn->name = kids[k].name;
                cn->kind = tn->kind;
                cn->total = tn->total;
                map[n_out - 1] = kids[k].idx;
            } else {
                char label[64];
                uint32_t id;
                snprintf(label, sizeof label, "[%zu small kernels]", n_grouped);
                if ((s = intern(b->st, label, &id)) != GP_OK)
                    goto done;
                cn->name = gp__strtab_get(b->st, id);
                cn->kind = GP_EV_KIND_COUNT;
                cn->total = grouped;
                map[n_out - 1] = UINT32_MAX; /* a leaf, see above */
            }
            x = gp__sat_add(x, cn->total);
            kept = gp__sat_add(kept, cn->total);
        }
        out[fi].n_children = (uint32_t)slots;
        out[fi].self = out[fi].total - kept;
        if (out[fi].self < 0)
            out[fi].self = 0;
    }
    for (size_t i = 0; i < n_out; i++)
        out[i].color = kind_color(out[i].kind, out[i].name);
#ifdef GP_CHECK_INVARIANTS
    /* total = self + the children's totals, unless the children overlap past their parent (CPU
     * weight on malformed nesting), where self is 0 (docs/internals/report.md). */
    for (size_t i = 0; i < n_out; i++) {
        gp_ns kids_total = 0;
        for (uint32_t k = 0; k < out[i].n_children; k++)
            kids_total = gp__sat_add(kids_total, out[out[i].first_child + k].total);
        GP_INVARIANT(out[i].self == (out[i].total > kids_total ? out[i].total - kids_total : 0),
                     "frame %zu: total %lld, self %lld, children %lld", i, (long long)out[i].total,
                     (long long)out[i].self, (long long)kids_total);
    }
#endif
    tree->nodes = out;
    tree->n_nodes = n_out;
    out = NULL;
done:
    free(out);
    free(first);
    free(next);
    free(map);
    free(kids);
    return s;
}

/* True when some kernel, memcpy or memset of the traces has a duration. */
static bool any_gpu_weight(const gp_trace *const *traces, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < traces[i]->n_tracks; k++) {
            const gp_track *tr = &traces[i]->tracks[k];
            for (size_t e = 0; e < tr->n_events; e++)
                if (is_gpu_weight_kind(tr->events[e].kind) && tr->events[e].dur > 0)
                    return true;
        }
    return false;
}

/* An empty tree with its own string table (freed by gp_flame_tree_free). */
static gp_status tree_new(gp_flame_tree **out)
{
    gp_flame_tree *t = calloc(1, sizeof *t);
    tree_priv *priv = calloc(1, sizeof *priv);
    gp_status s = t && priv ? gp__strtab_init(&priv->st) : GP_ENOMEM;
    if (s != GP_OK) {
        free(priv);
        free(t);
        return s;
    }
    t->priv = priv;
    *out = t;
    return GP_OK;
}

static gp_status flame_build(const gp_trace *const *traces, size_t n, const gp_flame_opts *opts,
                             gp_flame_tree **out)
{
    gp_flame_opts defaults;
    if (!opts) {
        gp_flame_opts_init(&defaults);
        opts = &defaults;
    }
    builder b = {0};
    gp_flame_tree *tree;
    gp_status s = tree_new(&tree);
    if (s != GP_OK)
        return s;
    tree_priv *priv = tree->priv;
    b.st = &priv->st;
    if ((s = gp__imap_init(&b.child, 1024)) != GP_OK)
        goto done;
    gp_flame_weight w = opts->weight;
    if (w == GP_FLAME_AUTO) /* GPU weight when some GPU work has a duration */
        w = any_gpu_weight(traces, n) ? GP_FLAME_GPU : GP_FLAME_CPU;
    tree->weight = w;
    tree->by = opts->by;
    b.additive = opts->by == GP_FLAME_BY_MODULE;
    uint32_t root_name;
    if ((s = intern(b.st, "all", &root_name)) != GP_OK)
        goto done;
    tnode *root = GP_PUSH(b.nodes, b.n, b.cap);
    if (!root) {
        s = GP_ENOMEM;
        goto done;
    }
    root->name = root_name;
    root->kind = GP_EV_KIND_COUNT;
    for (size_t i = 0; i < n; i++) {
        uint32_t top = 0;
        if (n > 1) {
            char label[64];
            snprintf(label, sizeof label, "rank %d", (int)traces[i]->rank);
            if ((s = child_named(&b, 0, label, GP_EV_KIND_COUNT, &top)) != GP_OK)
                goto done;
        }
        if (opts->by == GP_FLAME_BY_MODULE)
            s = add_trace_modules(&b, &traces[i], top, w, &tree->events_used,
                                  &tree->gpu_unattributed);
        else
            s = add_trace(&b, traces[i], top, w, opts, &tree->events_used, &tree->gpu_unattributed);
        if (s != GP_OK)
            goto done;
    }
    s = finish_tree(&b, opts, tree);
    for (size_t i = 1; s == GP_OK && tree->by == GP_FLAME_BY_MODULE && i < tree->n_nodes; i++)
        tree->n_modules += tree->nodes[i].kind == GP_EV_PYTHON; /* module frames only */
done:
    free(b.nodes);
    gp__imap_free(&b.child);
    if (s != GP_OK) {
        gp_flame_tree_free(tree);
        return s;
    }
    *out = tree;
    return GP_OK;
}

/* Fills err after a failed build of the frames of n traces. */
static gp_status build_error(gp_status s, size_t n, gp_error *err)
{
    if (s == GP_EEMPTY)
        return gp_error_set(err, s, "no event of the %zu trace%s carries weight", n,
                            n == 1 ? "" : "s");
    if (s == GP_ELIMIT)
        return gp_error_set(err, s, "the flame graph would pass %u frames, its limit",
                            (unsigned)(UINT32_MAX - 1));
    return gp_error_set(err, s, "%s building the flame graph of %zu trace%s", gp_strerror(s), n,
                        n == 1 ? "" : "s");
}

gp_status gp_flame_build(const gp_trace *const *traces, size_t n, const gp_flame_opts *opts,
                         gp_flame_tree **out, gp_error *err)
{
    gp_status s = flame_build(traces, n, opts, out);
    return s == GP_OK ? s : build_error(s, n, err);
}

gp_status gp_flame_build_alt(const gp_trace *const *traces, size_t n, const gp_flame_opts *opts,
                             const gp_flame_tree *stack, gp_flame_tree **out, gp_error *err)
{
    *out = NULL;
    if (stack->by != GP_FLAME_BY_STACK || stack->is_diff)
        return GP_OK;
    gp_flame_opts mo;
    if (opts)
        mo = *opts;
    else
        gp_flame_opts_init(&mo);
    mo.by = GP_FLAME_BY_MODULE;
    mo.weight = stack->weight;
    gp_flame_tree *alt = NULL;
    gp_status s = flame_build(traces, n, &mo, &alt);
    if (s == GP_EEMPTY || (s == GP_OK && !alt->n_modules)) {
        gp_flame_tree_free(alt);
        return GP_OK;
    }
    if (s == GP_OK)
        *out = alt;
    return s == GP_OK ? s : build_error(s, n, err);
}

/* Index of the child of base node p named name, or UINT32_MAX (children are sorted by name). */
static uint32_t find_child(const gp_flame_tree *t, uint32_t p, const char *name)
{
    const gp_flame_node *pn = &t->nodes[p];
    size_t lo = 0, hi = pn->n_children;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(t->nodes[pn->first_child + mid].name, name);
        if (c == 0)
            return (uint32_t)(pn->first_child + mid);
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return UINT32_MAX;
}

/* Red when the stack grew, blue when it shrank, light grey when unchanged; the tint's strength
 * follows the change relative to the biggest change of any frame, from a pale tint (a small
 * change still shows) to a mid tone that keeps black labels readable: the darkest blue
 * (110, 110, 255) has a relative luminance of 0.22, a 5.3:1 contrast with black text (WCAG AA
 * asks 4.5:1); the darkest red more. */
static uint32_t diff_color(gp_ns base, gp_ns cur, gp_ns maxdelta)
{
    gp_ns d = cur - base;
    if (d == 0 || maxdelta == 0)
        return 0xdcdcdc;
    double f = (double)(d < 0 ? -d : d) / (double)maxdelta;
    unsigned fade = (unsigned)(225.0 - 115.0 * (f > 1 ? 1 : f));
    if (d > 0)
        return (255u << 16) | (fade << 8) | fade;
    return (fade << 16) | (fade << 8) | 255u;
}

static gp_status flame_diff(const gp_flame_tree *base, const gp_flame_tree *current,
                            gp_flame_tree **out)
{
    gp_flame_tree *t;
    gp_status s = tree_new(&t);
    if (s != GP_OK)
        return s;
    tree_priv *priv = t->priv;
    uint32_t *bmap = malloc((current->n_nodes ? current->n_nodes : 1) * sizeof *bmap);
    if (!bmap) {
        gp_flame_tree_free(t);
        return GP_ENOMEM;
    }
    t->weight = current->weight;
    t->by = current->by;
    t->n_modules = current->n_modules;
    t->is_diff = true;
    t->events_used = current->events_used;
    t->nodes = malloc(current->n_nodes * sizeof *t->nodes);
    if (!t->nodes) {
        s = GP_ENOMEM;
        goto done;
    }
    t->n_nodes = current->n_nodes;
    gp_ns maxdelta = 0;
    for (size_t i = 0; i < current->n_nodes; i++) {
        gp_flame_node *nd = &t->nodes[i];
        *nd = current->nodes[i];
        uint32_t id;
        if ((s = intern(&priv->st, nd->name, &id)) != GP_OK)
            goto done;
        nd->name = gp__strtab_get(&priv->st, id);
        uint32_t bi = i == 0 ? 0 : bmap[nd->parent];
        if (i != 0 && bi != UINT32_MAX)
            bi = find_child(base, bi, nd->name);
        bmap[i] = bi;
        nd->base_total = bi == UINT32_MAX ? 0 : base->nodes[bi].total;
        nd->base_self = bi == UINT32_MAX ? 0 : base->nodes[bi].self;
        gp_ns d = nd->total - nd->base_total;
        if (i != 0 && (d < 0 ? -d : d) > maxdelta)
            maxdelta = d < 0 ? -d : d;
    }
    for (size_t i = 0; i < t->n_nodes; i++)
        t->nodes[i].color = diff_color(t->nodes[i].base_total, t->nodes[i].total, maxdelta);
    s = GP_OK;
done:
    free(bmap);
    if (s != GP_OK) {
        gp_flame_tree_free(t);
        return s;
    }
    *out = t;
    return GP_OK;
}

gp_status gp_flame_diff(const gp_flame_tree *base, const gp_flame_tree *current,
                        gp_flame_tree **out, gp_error *err)
{
    if (base->weight != current->weight || base->by != current->by)
        return gp_error_set(err, GP_EINVAL,
                            "the two flame graphs differ in %s: a diff needs the same weight "
                            "and frames",
                            base->weight != current->weight ? "weight" : "frames (by)");
    gp_status s = flame_diff(base, current, out);
    if (s != GP_OK)
        gp_error_set(err, s, "%s comparing two flame graphs", gp_strerror(s));
    return s;
}

void gp_flame_tree_free(gp_flame_tree *tree)
{
    if (!tree)
        return;
    tree_priv *p = tree->priv;
    if (p) {
        gp__strtab_free(&p->st);
        free(p);
    }
    free(tree->nodes);
    free(tree);
}

gp_status gp__flame_layout_px(const gp_flame_tree *t, int width, double min_px, gp__flame_px **out,
                              size_t *n_out, int *rows)
{
    const double pad = 10.0, char_px = 7.0;
    double usable = width - 2 * pad;
    gp__flame_px *px = NULL;
    size_t n = 0, cap = 0;
    uint32_t *drawn = malloc((t->n_nodes ? t->n_nodes : 1) * sizeof *drawn);
    if (!drawn)
        return GP_ENOMEM;
    int max_depth = 0;
    double scale = t->n_nodes && t->nodes[0].total > 0 ? usable / (double)t->nodes[0].total : 0;
    for (size_t i = 0; i < t->n_nodes; i++) {
        const gp_flame_node *nd = &t->nodes[i];
        drawn[i] = UINT32_MAX;
        double w = (double)nd->total * scale;
        if (i != 0 && (drawn[nd->parent] == UINT32_MAX || w < min_px))
            continue; /* too narrow, or its parent was */
        gp__flame_px *p = GP_PUSH(px, n, cap);
        if (!p) {
            free(drawn);
            free(px);
            return GP_ENOMEM;
        }
        drawn[i] = (uint32_t)(n - 1);
        p->node = (uint32_t)i;
        p->parent = i == 0 ? 0 : drawn[nd->parent];
        p->x = pad + (double)nd->x * scale;
        p->w = w;
        p->row = nd->depth; /* flipped below, once the depth is known */
        if (nd->depth > max_depth)
            max_depth = nd->depth;
        size_t fit = w > 6 ? (size_t)((w - 6) / char_px) : 0;
        size_t len = strlen(nd->name);
        if (fit < 3) {
            p->label_len = 0;
        } else if (len <= fit) {
            p->label_len = len;
        } else {
            size_t k = fit - 2;
            while (k > 0 && ((unsigned char)nd->name[k] & 0xC0) == 0x80)
                k--; /* never cut a UTF-8 sequence */
            p->label_len = k;
            p->ellipsis = 1;
        }
    }
    for (size_t i = 0; i < n; i++)
        px[i].row = max_depth - px[i].row;
    free(drawn);
    *out = px;
    *n_out = n;
    *rows = max_depth + 1;
    return GP_OK;
}
