/* `gpuprof ops`: GPU work attributed to the CPU ops that launched it, grouped, with the roofline
 * of the performance model (include/gpuprof/ops.h; docs/ops.md; docs/internals/ops.md).
 *
 * Per trace: the GPU work (kernel, memcpy, memset) is collected and sorted by correlation id
 * (adaptive merge sort: each stream is nearly sorted already). Then each CPU thread is walked once
 * in time order with a stack of open events (cpu_op, python_function, user_annotation). A
 * runtime/driver call's correlation finds its GPU work by binary search; the work goes to the
 * innermost op on the stack. When an op closes, its subtree's GPU time and intervals pass to the
 * innermost op below it, its perf model is computed and the instance is added to its row. Nothing
 * per instance is kept (but with --by instance), so memory is the stack, the GPU array and the
 * rows. GPU work that no launch claimed is added to the unattributed rows at the end. */
#include <stdlib.h>
#include <string.h>

#include "core/group_table.h"
#include "core/msort.h"
#include "core/strtab.h"
#include "core/util.h"
#include "analyze/analyze_internal.h"
#include "analyze/ops_internal.h"
#include "gpuprof/ops.h"

enum { GW_USED = 1, GW_HOST_COPY = 2 /* a memcpy between host and device */ };

/* GPU work of one trace. */
typedef struct gwork {
    int64_t corr;
    gp_ns ts, dur;
    gp_strid name;
    uint32_t flags;
    uint8_t kind; /* gp_event_kind */
} gwork;

#define CMP_GWORK(x, y) GP_CMP((x)->corr, (y)->corr)
GP__DEFINE_MERGE_SORT(sort_gwork, gwork, CMP_GWORK)

/* An open event on a CPU thread's stack (cpu_op, python_function, user_annotation): small, as
 * most are Python frames (issue 37); an op's figures are in its opframe. */
typedef struct frame {
    gp_ns end;
    gp_strid module, line, annot; /* innermost context frames' names, 0 = none */
    uint32_t n_mod;               /* modules open at and below this frame: ctx.mods[0, n_mod) */
    bool is_op;                   /* a cpu_op: its opframe is the top of ctx.ops_st */
} frame;

/* An open cpu_op (ctx.ops_st: the op frames of the stack, innermost last). */
typedef struct opframe {
    const gp_event *ev;
    const gp_op_shapes *sh;       /* its record_shapes args, NULL */
    gp_strid module, line, annot; /* its frame's */
    uint32_t n_mod;               /* its frame's */
    gp_ns self; /* self CPU time: the time it is the innermost event (the sweep: self_sweep) */
    gp_ns g_direct, g_sub;
    gp_ns self_busy; /* union of the GPU work the op launched itself (set when it closes) */
    uint64_t k_direct, k_sub, replayed;
    size_t iv_mark;     /* where this op's subtree intervals start in ctx.iv */
    bool model_given;   /* a convolution whose model went to the nested op holding its GPU time */
    bool host_copy;     /* launched a host<->device memcpy itself */
    bool modeled_below; /* a modeled op instance closed inside this op */
} opframe;

/* An open event of the self-time sweep: every event of the track with a duration. */
typedef struct sweep_ev {
    gp_ns end;
    int32_t op; /* its index in ctx.ops_st (a cpu_op), else -1 */
} sweep_ev;

typedef struct ivl {
    gp_ns lo, hi;
    int32_t owner; /* the ctx.ops_st index of the op that launched it */
} ivl;

#define CMP_IVL(x, y) GP_CMP((x)->lo, (y)->lo)
GP__DEFINE_MERGE_SORT(sort_ivl, ivl, CMP_IVL)

/* A row being accumulated (a group-table record). */
typedef struct acc {
    gp__group_key key;
    gp_ops_row r;
    double ideal_ns, flop_ns, mem_ns;
    uint64_t roof_known;
    const char *launchers[3]; /* by kernel: the first distinct launching ops */
    uint64_t more_launchers;
} acc;

typedef struct ctx {
    const gp_ops_opts *o;
    gp_ops *ops;
    gp__group_table *tab;
    gp__strtab *strs; /* compact shape texts (the result's) */
    gp_ops_row *inst; /* by instance */
    size_t n_inst, cap_inst;
    char *kbuf; /* synthesized keys */
    size_t kcap;
    /* the trace being walked */
    const gp_trace *t;
    int32_t rank;
    gp_device_peak peak;
    gwork *gw;
    size_t n_gw, cap_gw;
    uint8_t *cat_memo;        /* per name id: 0 not yet, else category + 1 */
    uint8_t *py_memo;         /* per name id: 0 not yet, 1 module, 2 source line, 3 neither */
    uint32_t *row_memo;       /* by name: per name id, the row index + 1 */
    gp__idmap shape_rows;     /* by shape: (name, dims, types) ids -> row index */
    gp__idmap texts;          /* (shape text id, 0, 0, 0) -> its compact text in strs */
    size_t shape_hint;        /* gp__op_shapes_near: where the next op's shapes likely are */
    gp__op_model_memo models; /* the models of the trace's distinct names and shapes */
    size_t n_str;
    frame *st;
    size_t n_st, cap_st;
    opframe *ops_st;
    size_t n_ops, cap_ops;
    sweep_ev *sw; /* the self-time sweep's open events (gp_track_self_times' rule) */
    size_t n_sw, cap_sw;
    gp_ns now; /* the sweep's time */
    ivl *iv;
    size_t n_iv, cap_iv;
    ivl *own; /* scratch: one op's own intervals (self_busy_of) */
    size_t cap_own;
    const gp__ops_listener *lis; /* NULL: none */
    bool keep_inst; /* by shape: the modeled op instances also go to inst (gp__ops_instances) */
    gp_strid *mods; /* with a listener: the open nn.Module frames, outermost first */
    size_t n_mods, cap_mods;
    bool oom;
} ctx;

/* ---- rows ----------------------------------------------------------------------------------- */

/* The row of (kind, key[0, len)); NULL when out of memory. kind 1 marks unattributed rows. */
static acc *row_for(ctx *c, int32_t kind, const char *key, size_t len)
{
    uint32_t idx = gp__group_find(c->tab, kind, key, len);
    if (!idx) {
        c->oom = true;
        return NULL;
    }
    acc *a = gp__group_at(c->tab, idx - 1);
    if (!a->r.key) {
        a->r.key = a->key.name;
        a->r.unattributed = kind == 1;
        a->r.roof_pct = -1;
    }
    return a;
}

/* ctx.kbuf holding at least n bytes. */
static bool kbuf_fit(ctx *c, size_t n)
{
    if (n <= c->kcap)
        return true;
    char *p = realloc(c->kbuf, n);
    if (!p) {
        c->oom = true;
        return false;
    }
    c->kbuf = p;
    c->kcap = n;
    return true;
}

/* The JSON text of trace string id without the blanks outside its strings ("[[4, 197, 768], []]" ->
 * "[[4,197,768],[]]"), interned in the result's strings (once per id: rows share the texts); NULL
 * when out of memory. */
static const char *compact(ctx *c, gp_strid id)
{
    uint32_t key[4] = {id, 0, 0, 0}, out;
    if (gp__idmap_get(&c->texts, key, &out))
        return gp__strtab_get(c->strs, out);
    const char *s = gp_trace_str(c->t, id);
    size_t n = strlen(s), k = 0;
    if (!kbuf_fit(c, n + 1))
        return NULL;
    bool in_str = false;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (in_str) {
            c->kbuf[k++] = ch;
            if (ch == '\\' && i + 1 < n)
                c->kbuf[k++] = s[++i];
            else if (ch == '"')
                in_str = false;
        } else if (ch != ' ' && ch != '\n' && ch != '\t' && ch != '\r') {
            c->kbuf[k++] = ch;
            in_str = ch == '"';
        }
    }
    if (gp__strtab_intern(c->strs, c->kbuf, k, &out) != GP_OK ||
        gp__idmap_put(&c->texts, key, out) != GP_OK) {
        c->oom = true;
        return NULL;
    }
    return gp__strtab_get(c->strs, out);
}

/* A name as a module key: "nn.Module: Linear_3" without its prefix (and number). */
static const char *module_text(const ctx *c, gp_strid id, size_t *len)
{
    return gp__module_name(gp_trace_str(c->t, id), gp_trace_strlen(c->t, id), !c->o->no_merge, len);
}

/* The row an op instance belongs to (not by instance, not by kernel). */
static acc *instance_row(ctx *c, const opframe *f, const gp_op_shapes *sh)
{
    const gp_trace *t = c->t;
    gp_strid name = f->ev->name;
    switch (c->o->by) {
    case GP_OPS_BY_SHAPE: {
        /* instances of one name and shapes share their ids: the key text is made once */
        uint32_t key[4] = {name, sh ? sh->dims : UINT32_MAX, sh ? sh->types : UINT32_MAX, 0}, ri;
        if (gp__idmap_get(&c->shape_rows, key, &ri))
            return gp__group_at(c->tab, ri);
        const char *n = gp_trace_str(t, name), *d = sh ? gp_trace_str(t, sh->dims) : "",
                   *ty = sh ? gp_trace_str(t, sh->types) : "";
        size_t ln = strlen(n), ld = strlen(d), lt = strlen(ty);
        if (!kbuf_fit(c, ln + ld + lt + 3))
            return NULL;
        memcpy(c->kbuf, n, ln);
        c->kbuf[ln] = '\x1f';
        memcpy(c->kbuf + ln + 1, d, ld);
        c->kbuf[ln + 1 + ld] = '\x1f';
        memcpy(c->kbuf + ln + 2 + ld, ty, lt);
        acc *a = row_for(c, 0, c->kbuf, ln + ld + lt + 2);
        if (a && !a->r.shapes) {
            a->r.key = n;
            a->r.shapes = sh ? compact(c, sh->dims) : NULL;
            a->r.types = sh ? compact(c, sh->types) : NULL;
        }
        if (a && gp__idmap_put(&c->shape_rows, key, (uint32_t)(a - (acc *)c->tab->recs)) != GP_OK)
            c->oom = true;
        return a;
    }
    case GP_OPS_BY_MODULE: {
        if (!f->module)
            return row_for(c, 2, "(no module)", 11);
        size_t len;
        const char *s = module_text(c, f->module, &len);
        return row_for(c, 0, s, len);
    }
    case GP_OPS_BY_LINE:
        return f->line ? row_for(c, 0, gp_trace_str(t, f->line), gp_trace_strlen(t, f->line))
                       : row_for(c, 2, "(no source line)", 16);
    case GP_OPS_BY_ANNOTATION:
        return f->annot ? row_for(c, 0, gp_trace_str(t, f->annot), gp_trace_strlen(t, f->annot))
                        : row_for(c, 2, "(no annotation)", 15);
    default: {
        uint32_t *m = name < c->n_str ? &c->row_memo[name] : NULL;
        if (m && *m)
            return gp__group_at(c->tab, *m - 1);
        acc *a = row_for(c, 0, gp_trace_str(t, name), gp_trace_strlen(t, name));
        if (a && m)
            *m = (uint32_t)(a - (acc *)c->tab->recs) + 1;
        return a;
    }
    }
}

/* Adds one instance's figures (and model, when m is not NULL) to row r. */
static void add_instance(ctx *c, acc *a, const opframe *f, gp_ns busy, const gp__op_model *m)
{
    gp_ops_row *r = &a->r;
    r->calls++;
    r->self_cpu = gp__sat_add(r->self_cpu, f->self);
    r->cpu = gp__sat_add(r->cpu, f->ev->dur);
    r->self_gpu = gp__sat_add(r->self_gpu, f->g_direct);
    r->self_gpu_busy = gp__sat_add(r->self_gpu_busy, f->self_busy);
    r->gpu = gp__sat_add(r->gpu, f->g_sub);
    r->gpu_busy = gp__sat_add(r->gpu_busy, busy);
    r->kernels += f->k_direct;
    r->kernels_subtree += f->k_sub;
    r->replayed += f->replayed;
    if (!m)
        return;
    if (!r->modeled) {
        r->category = m->cat;
        r->dtype = m->dtype;
    } else if (r->dtype != m->dtype) {
        r->dtype = GP_DT_UNKNOWN;
    }
    r->modeled++;
    r->leaves += !f->modeled_below;
    r->flops += m->flops;
    r->bytes += m->bytes;
    r->model_time = gp__sat_add(r->model_time, m->over_busy ? busy : f->g_sub);
    /* a copy between host and device (or peers) moves its bytes over PCIe / NVLink, whose peak
     * the table lacks: no roof rather than HBM's */
    double fl = 0, me = 0, roof = m->host_copy ? -1 : gp__op_roof_ns(&c->peak, m, &fl, &me);
    if (roof >= 0) {
        a->ideal_ns += roof;
        a->flop_ns += fl;
        a->mem_ns += me;
        a->roof_known++;
    }
}

/* Rates, roofline and bound of a finished row. */
static void finish_row(acc *a)
{
    gp_ops_row *r = &a->r;
    if (r->model_time > 0) {
        double s = (double)r->model_time * 1e-9;
        r->tflops_per_s = r->flops / s * 1e-12;
        r->tb_per_s = r->bytes / s * 1e-12;
    }
    r->intensity = r->bytes > 0 ? r->flops / r->bytes : 0;
    if (r->modeled && a->roof_known == r->modeled && r->model_time > 0) {
        r->roof_pct = 100.0 * a->ideal_ns / (double)r->model_time;
        r->bound = a->flop_ns > a->mem_ns ? GP_BOUND_COMPUTE : GP_BOUND_MEMORY;
    } else {
        r->roof_pct = -1;
        r->bound = GP_BOUND_NONE;
    }
}

/* The union of v[0, n): sorts v in place (runs of children are sorted). */
static gp_ns union_of(ctx *c, ivl *v, size_t n)
{
    if (n == 0)
        return 0; /* v may be NULL: no pointer arithmetic on it */
    if (n > 1 && !sort_ivl(v, n))
        c->oom = true;
    gp_ns total = 0, s = 0, e = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || v[i].lo > e) {
            total += e - s;
            s = v[i].lo;
            e = v[i].hi;
        } else if (v[i].hi > e) {
            e = v[i].hi;
        }
    }
    return total + (e - s);
}

/* The union of ctx.iv[lo, n_iv): the subtree of the op whose intervals start at lo. */
static gp_ns busy_of(ctx *c, size_t lo)
{
    return union_of(c, c->n_iv > lo ? c->iv + lo : NULL, c->n_iv - lo);
}

/* The union of the intervals in ctx.iv[lo, n_iv) that the op at stack index `owner` launched
 * itself (TraceLens's direct kernel time: overlapping kernels of one op count once). */
static gp_ns self_busy_of(ctx *c, size_t lo, int32_t owner)
{
    size_t n = 0;
    for (size_t i = lo; i < c->n_iv; i++) {
        if (c->iv[i].owner != owner)
            continue;
        if (n == c->cap_own) {
            size_t cap = c->cap_own ? 2 * c->cap_own : 64;
            ivl *p = realloc(c->own, cap * sizeof *p);
            if (!p) {
                c->oom = true;
                return 0;
            }
            c->own = p;
            c->cap_own = cap;
        }
        c->own[n++] = c->iv[i];
    }
    return union_of(c, c->own, n);
}

/* The model family of op name `name` (memoised). */
static gp_op_category cat_of(ctx *c, gp_strid name)
{
    uint8_t cat1 = name < c->n_str ? c->cat_memo[name] : 0;
    if (!cat1) {
        cat1 = (uint8_t)(gp__op_category_of(gp_trace_str(c->t, name)) + 1);
        if (name < c->n_str)
            c->cat_memo[name] = cat1;
    }
    return (gp_op_category)(cat1 - 1);
}

/* The perf model of a closing op: true and *m when it has one; counts what it lacks. */
static bool model_of(ctx *c, const opframe *f, const gp_op_shapes *sh, gp__op_model *m)
{
    gp_strid name = f->ev->name;
    uint8_t cat1 = (uint8_t)(cat_of(c, name) + 1);
    if (cat1 == GP_OPCAT_NONE + 1 || f->g_sub <= 0 || f->model_given)
        return false; /* not modeled, no GPU time to rate, or modelled on a nested op */
    if (!sh) {
        c->ops->no_shapes++;
        return false;
    }
    if (!gp__op_model_memo_compute(&c->models, c->t, name, (gp_op_category)(cat1 - 1), sh, m,
                                   &c->oom)) {
        c->ops->bad_shapes++;
        return false;
    }
    c->ops->modeled++;
    return true;
}

/* A convolution's FLOPs go on the op that holds its GPU time (docs/ops.md, "Convolutions"):
 * conv2d -> convolution -> _convolution -> cudnn_convolution launches its kernels from the
 * innermost op, which has no model of its own. When op f (not modelled, with GPU work launched
 * itself) closes inside forward convolutions that launched nothing themselves (unmodelled wrappers
 * that launched nothing between them are looked through), the innermost one's model is f's, and
 * every such convolution around it gives up its own (model_given). True and *m,
 * *ext (the external id whose shapes made the model) when so. */
static bool conv_model_from_above(ctx *c, const opframe *f, gp__op_model *m, int64_t *ext)
{
    if (f->g_direct <= 0)
        return false;
    bool found = false;
    for (size_t up = c->n_ops; up-- > 0;) { /* the ops around f, innermost first */
        opframe *p = &c->ops_st[up];
        gp_op_category pc = cat_of(c, p->ev->name);
        if (p->g_direct > 0 || p->model_given || (pc != GP_OPCAT_CONV_FWD && pc != GP_OPCAT_NONE))
            break;
        if (pc == GP_OPCAT_NONE) /* a wrapper between them (aten::_convolution): look through */
            continue;
        if (!found) {
            const gp_op_shapes *sh = p->sh;
            if (!sh || !gp__op_model_memo_compute(&c->models, c->t, p->ev->name, GP_OPCAT_CONV_FWD,
                                                  sh, m, &c->oom))
                return false; /* the convolution models itself, or counts what it lacks */
            *ext = p->ev->external_id;
            found = true;
            c->ops->modeled++;
        }
        p->model_given = true;
    }
    return found;
}

/* One op instance's row into ctx.inst (model m NULL: none). row: the instance's row by shape when
 * the instances are kept beside it, whose texts are the instance's (the same compact text, one
 * copy); NULL by instance. */
static void push_instance(ctx *c, const opframe *f, const gp_op_shapes *sh, gp_ns busy,
                          const gp__op_model *m, int64_t model_ext, const acc *row)
{
    gp_ops_row *r = GP_PUSH(c->inst, c->n_inst, c->cap_inst);
    if (!r) {
        c->oom = true;
        return;
    }
    acc a = {.r = {.roof_pct = -1}};
    add_instance(c, &a, f, busy, m);
    a.r.key = gp_trace_str(c->t, f->ev->name);
    bool row_texts = row && row->r.shapes; /* a row made without shapes has dims "" */
    a.r.shapes = !sh ? NULL : row_texts ? row->r.shapes : compact(c, sh->dims);
    a.r.types = !sh ? NULL : row_texts ? row->r.types : compact(c, sh->types);
    a.r.module = f->module ? gp_trace_str(c->t, f->module) : NULL;
    a.r.line = f->line ? gp_trace_str(c->t, f->line) : NULL;
    a.r.external_id = f->ev->external_id;
    a.r.model_external_id = m ? model_ext : 0;
    a.r.rank = c->rank;
    a.r.ts = f->ev->ts;
    finish_row(&a); /* rates, roofline and bound, as for a grouped row */
    *r = a.r;
}

/* An op instance closes: its row gets its figures. True when it has a model (the enclosing op
 * then has a modeled op below it, and is no leaf of the roofline). */
static bool close_op(ctx *c, const opframe *f)
{
    gp_ns busy = busy_of(c, f->iv_mark);
    const gp_op_shapes *sh = f->sh;
    gp__op_model m;
    int64_t model_ext = f->ev->external_id;
    bool has_model = model_of(c, f, sh, &m);
    if (!has_model && cat_of(c, f->ev->name) == GP_OPCAT_NONE)
        has_model = conv_model_from_above(c, f, &m, &model_ext);
    if (has_model && f->host_copy)
        m.host_copy = true;
    c->ops->instances++;
    if (c->lis && c->lis->op &&
        !c->lis->op(c->lis->ud, c->t, c->mods, f->n_mod, f->self, gp_trace_str(c->t, f->ev->name)))
        c->oom = true;
    if (c->o->by == GP_OPS_BY_KERNEL)
        return has_model;
    if (c->o->by == GP_OPS_BY_INSTANCE) {
        push_instance(c, f, sh, busy, has_model ? &m : NULL, model_ext, NULL);
        return has_model;
    }
    acc *a = instance_row(c, f, sh);
    if (a && !a->r.calls) { /* the first instance's place in the model (findings quote it) */
        a->r.module = f->module ? gp_trace_str(c->t, f->module) : NULL;
        a->r.line = f->line ? gp_trace_str(c->t, f->line) : NULL;
    }
    if (a)
        add_instance(c, a, f, busy, has_model ? &m : NULL);
    if (a && has_model && c->keep_inst)
        push_instance(c, f, sh, busy, &m, model_ext, a);
    return has_model;
}

/* By kernel: GPU work g launched by op `op` (a name) or by nothing (label). */
static void add_kernel(ctx *c, const gwork *g, const char *launcher, bool replayed)
{
    acc *a = row_for(c, 0, gp_trace_str(c->t, g->name), gp_trace_strlen(c->t, g->name));
    if (!a)
        return;
    gp_ops_row *r = &a->r;
    r->calls++;
    r->self_gpu = gp__sat_add(r->self_gpu, g->dur);
    r->self_gpu_busy = gp__sat_add(r->self_gpu_busy, g->dur);
    r->gpu = gp__sat_add(r->gpu, g->dur);
    r->gpu_busy = gp__sat_add(r->gpu_busy, g->dur);
    r->kernels++;
    r->kernels_subtree++;
    r->replayed += replayed;
    for (size_t i = 0; i < 3; i++) {
        if (a->launchers[i] && strcmp(a->launchers[i], launcher) == 0)
            return;
        if (!a->launchers[i]) {
            a->launchers[i] = launcher;
            return;
        }
    }
    a->more_launchers++; /* counts further launches by other ops, not distinct ops */
}

/* GPU work without a launching op goes to its row: "(no launch event)", or, for work launched
 * outside every op, a row per launch call ("cudaLaunchKernel (outside any op)"; launch is the
 * call's name). */
static void add_unattributed(ctx *c, const gwork *g, const char *label, const char *launch)
{
    if (c->lis && c->lis->gpu &&
        !c->lis->gpu(c->lis->ud, c->t, NULL, 0, g->dur, NULL, g->name, g->kind))
        c->oom = true;
    if (c->o->by == GP_OPS_BY_KERNEL) {
        add_kernel(c, g, launch ? launch : label, false);
        return;
    }
    acc *a;
    if (launch) {
        size_t l = strlen(launch);
        if (!kbuf_fit(c, l + sizeof GP__OUTSIDE_ROW))
            return;
        memcpy(c->kbuf, launch, l);
        memcpy(c->kbuf + l, GP__OUTSIDE_ROW, sizeof GP__OUTSIDE_ROW);
        a = row_for(c, 1, c->kbuf, l + sizeof GP__OUTSIDE_ROW - 1);
    } else {
        a = row_for(c, 1, label, strlen(label));
    }
    if (!a)
        return;
    a->r.self_gpu = gp__sat_add(a->r.self_gpu, g->dur);
    a->r.self_gpu_busy = gp__sat_add(a->r.self_gpu_busy, g->dur);
    a->r.gpu = gp__sat_add(a->r.gpu, g->dur);
    a->r.launch_call = launch; /* a trace string: the call of every event of this row */
    a->r.gpu_busy = gp__sat_add(a->r.gpu_busy, g->dur);
    a->r.kernels++;
    a->r.kernels_subtree++;
    if (c->o->by == GP_OPS_BY_INSTANCE) { /* an instance row per unattributed event */
        gp_ops_row *r = GP_PUSH(c->inst, c->n_inst, c->cap_inst);
        if (!r) {
            c->oom = true;
            return;
        }
        *r = (gp_ops_row){.key = gp_trace_str(c->t, g->name),
                          .module = label,
                          .line = launch,
                          .launch_call = launch,
                          .rank = c->rank,
                          .ts = g->ts,
                          .self_gpu = g->dur,
                          .self_gpu_busy = g->dur,
                          .gpu = g->dur,
                          .gpu_busy = g->dur,
                          .kernels = 1,
                          .kernels_subtree = 1,
                          .unattributed = true,
                          .roof_pct = -1};
    }
}

/* ---- the walk ------------------------------------------------------------------------------- */

/* A runtime/driver call: its GPU work goes to the innermost open op. */
static void launch(ctx *c, const gp_event *ev)
{
    size_t lo = 0, hi = c->n_gw;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (c->gw[m].corr < ev->correlation)
            lo = m + 1;
        else
            hi = m;
    }
    if (lo == c->n_gw || c->gw[lo].corr != ev->correlation)
        return;
    int32_t op = (int32_t)c->n_ops - 1; /* the innermost open op, -1 */
    bool replay = gp__is_graph_launch(gp_trace_str(c->t, ev->name));
    for (size_t j = lo; j < c->n_gw && c->gw[j].corr == ev->correlation; j++) {
        gwork *g = &c->gw[j];
        if (g->flags & GW_USED)
            continue;
        g->flags |= GW_USED;
        c->ops->replayed += replay;
        if (op < 0) {
            c->ops->outside_op++;
            add_unattributed(c, g, GP__OUTSIDE_OP, gp_trace_str(c->t, ev->name));
            continue;
        }
        opframe *f = &c->ops_st[op];
        if (c->lis && c->lis->gpu &&
            !c->lis->gpu(c->lis->ud, c->t, c->mods, f->n_mod, g->dur,
                         gp_trace_str(c->t, f->ev->name), g->name, g->kind))
            c->oom = true;
        f->g_direct = gp__sat_add(f->g_direct, g->dur);
        f->k_direct++;
        f->host_copy |= (g->flags & GW_HOST_COPY) != 0;
        f->replayed += replay;
        ivl *v = GP_PUSH(c->iv, c->n_iv, c->cap_iv);
        if (!v) {
            c->oom = true;
            return;
        }
        *v = (ivl){g->ts, g->ts + g->dur, op};
        if (c->o->by == GP_OPS_BY_KERNEL)
            add_kernel(c, g, gp_trace_str(c->t, f->ev->name), replay);
    }
}

/* The innermost open op closes (its frame has popped): its figures go to its row and its
 * subtree's to the op around it. */
static void close_top_op(ctx *c)
{
    opframe *f = &c->ops_st[--c->n_ops];
    f->g_sub = gp__sat_add(f->g_sub, f->g_direct);
    f->k_sub += f->k_direct;
    f->self_busy = self_busy_of(c, f->iv_mark, (int32_t)c->n_ops);
    bool modeled = close_op(c, f);
    if (c->n_ops) { /* the subtree's time and intervals pass to the enclosing op */
        opframe *up = &c->ops_st[c->n_ops - 1];
        up->g_sub = gp__sat_add(up->g_sub, f->g_sub);
        up->k_sub += f->k_sub;
        up->modeled_below |= modeled || f->modeled_below;
    } else {
        c->n_iv = f->iv_mark;
    }
}

static void pop(ctx *c)
{
    bool is_op = c->st[--c->n_st].is_op;
    /* the modules of the frame's scope close (ctx.mods keeps their ids until the next push) */
    c->n_mods = c->n_st ? c->st[c->n_st - 1].n_mod : 0;
    if (is_op)
        close_top_op(c);
}

/* Rare paths of push, kept out of it so that its common case (a Python frame of a known name)
 * stays a few instructions: a grown stack, a new name, a module, an op, an annotation. */
__attribute__((noinline)) static bool grow_stack(ctx *c)
{
    if (gp__grow((void **)&c->st, &c->cap_st, sizeof *c->st, c->n_st + 1) == GP_OK)
        return true;
    c->oom = true;
    return false;
}

__attribute__((noinline)) static uint8_t py_kind_new(ctx *c, gp_strid name)
{
    uint8_t k = gp__py_class(gp_trace_str(c->t, name));
    if (name < c->n_str)
        c->py_memo[name] = k;
    return k;
}

__attribute__((noinline)) static void open_module(ctx *c, frame *f, gp_strid name)
{
    f->module = name;
    gp_strid *m = c->lis ? GP_PUSH(c->mods, c->n_mods, c->cap_mods) : NULL;
    if (m)
        *m = name;
    else if (c->lis)
        c->oom = true;
}

__attribute__((noinline)) static void open_op(ctx *c, frame *f, const gp_event *ev)
{
    opframe *o = GP_PUSH(c->ops_st, c->n_ops, c->cap_ops);
    if (!o) {
        c->oom = true;
        return;
    }
    f->is_op = true;
    o->ev = ev;
    o->sh = gp__op_shapes_near(c->t, ev->external_id, &c->shape_hint);
    o->module = f->module;
    o->line = f->line;
    o->annot = f->annot;
    o->n_mod = (uint32_t)c->n_mods;
    o->iv_mark = c->n_iv;
}

__attribute__((noinline)) static void open_annotation(ctx *c, frame *f, const gp_event *ev)
{
    if (strncmp(gp_trace_str(c->t, ev->name), "ProfilerStep#", 13) != 0)
        f->annot = ev->name;
}

/* Opens the frame of ev (a cpu_op, python_function or user annotation). */
static void push(ctx *c, const gp_event *ev)
{
    if (c->n_st == c->cap_st && !grow_stack(c))
        return;
    frame *f = &c->st[c->n_st++];
    *f = c->n_st > 1 ? f[-1] : (frame){0}; /* the context of the frame around it */
    f->end = ev->ts + ev->dur;
    f->is_op = false;
    if (ev->kind == GP_EV_PYTHON) {
        uint8_t k = ev->name < c->n_str ? c->py_memo[ev->name] : 0;
        if (!k)
            k = py_kind_new(c, ev->name);
        if (k == 1)
            open_module(c, f, ev->name);
        else if (k == 2)
            f->line = ev->name;
    } else if (ev->kind == GP_EV_CPU_OP) {
        open_op(c, f, ev);
    } else {
        open_annotation(c, f, ev);
    }
    f->n_mod = (uint32_t)c->n_mods;
}

/* The self-time sweep (gp_track_self_times' rule, fused into the walk so that the track is read
 * once): gives the time from ctx.now up to `until` to the innermost open event, closing the events
 * that end by then; only an op keeps its share (opframe.self). An op's share is complete when the
 * walk pops it, as the sweep has reached the event that pops it. An op's share depends only on the
 * events opened after it, so while no op is open the sweep holds nothing (walk_track): the Python
 * frames between ops cost it nothing. ctx.now is the latest start (or end) reached, whatever the
 * sweep holds. */
static void self_sweep(ctx *c, gp_ns until)
{
    while (c->n_sw > 0) {
        const sweep_ev *top = &c->sw[c->n_sw - 1];
        if (top->end > until) {
            if (top->op >= 0)
                c->ops_st[top->op].self += until - c->now;
            c->now = until;
            return;
        }
        if (top->end > c->now) {
            if (top->op >= 0)
                c->ops_st[top->op].self += top->end - c->now;
            c->now = top->end;
        }
        c->n_sw--;
    }
    c->now = until;
}

/* One CPU thread, in time order. */
static void walk_track(ctx *c, const gp_track *tr)
{
    c->n_st = c->n_ops = c->n_iv = c->n_mods = c->n_sw = 0;
    c->now = tr->n_events ? tr->events[0].ts : 0;
    for (size_t i = 0; i < tr->n_events && !c->oom; i++) {
        const gp_event *ev = &tr->events[i];
        if (c->n_sw)
            self_sweep(c, GP_MAX(c->now, ev->ts));
        else
            c->now = GP_MAX(c->now, ev->ts);
        while (c->n_st && ev->ts >= c->st[c->n_st - 1].end)
            pop(c);
        int32_t op = -1;
        switch ((gp_event_kind)ev->kind) {
        case GP_EV_RUNTIME:
        case GP_EV_DRIVER:
            if (ev->correlation)
                launch(c, ev);
            break;
        case GP_EV_CPU_OP:
        case GP_EV_PYTHON:
        case GP_EV_USER_ANNOTATION:
            push(c, ev);
            op = ev->kind == GP_EV_CPU_OP ? (int32_t)c->n_ops - 1 : -1;
            break;
        default:
            break;
        }
        if (!c->n_ops) { /* no op to give time to, now or to one opened later */
            c->n_sw = 0;
            continue;
        }
        if (ev->dur == 0) /* an instant or empty event holds no time and has no children */
            continue;
        sweep_ev *s = GP_PUSH(c->sw, c->n_sw, c->cap_sw);
        if (!s)
            c->oom = true;
        else
            *s = (sweep_ev){ev->ts + ev->dur, op};
    }
    self_sweep(c, INT64_MAX);
    while (c->n_st && !c->oom)
        pop(c);
}

/* The GPU work of c->t into c->gw, sorted by correlation. */
static void collect_gpu(ctx *c)
{
    const gp_trace *t = c->t;
    c->n_gw = 0;
    size_t k = 0, i = 0;
    const gp_track *tr;
    const gp_event *ev;
    while ((ev = gp__next_gpu_work(t, &k, &i, &tr))) {
        gwork *g = GP_PUSH(c->gw, c->n_gw, c->cap_gw);
        if (!g) {
            c->oom = true;
            return;
        }
        *g = (gwork){ev->correlation, ev->ts, ev->dur, ev->name, 0, ev->kind};
        if (ev->kind == GP_EV_MEMCPY && !gp__memcpy_is_dtod(gp_trace_str(t, ev->name)))
            g->flags |= GW_HOST_COPY;
        c->ops->gpu_events++;
        c->ops->gpu_time = gp__sat_add(c->ops->gpu_time, ev->dur);
    }
    if (c->n_gw > 1 && !sort_gwork(c->gw, c->n_gw))
        c->oom = true;
}

/* One trace: GPU work, every CPU thread, then the work no launch claimed. */
static void run_trace(ctx *c, const gp_trace *t)
{
    c->t = t;
    c->rank = t->rank;
    gp__ops_trace_peak(t, c->o->peak_tflops, c->o->peak_tbps, &c->peak);
    c->n_str = gp_trace_str_count(t) + 1;
    free(c->cat_memo);
    free(c->py_memo);
    free(c->row_memo);
    c->cat_memo = calloc(c->n_str, 1);
    c->py_memo = calloc(c->n_str, 1);
    c->row_memo = calloc(c->n_str, sizeof *c->row_memo);
    gp__idmap_clear(&c->shape_rows); /* ids of another trace */
    gp__op_model_memo_clear(&c->models);
    gp__idmap_clear(&c->texts);
    c->shape_hint = 0;
    if (!c->cat_memo || !c->py_memo || !c->row_memo) {
        c->oom = true;
        return;
    }
    size_t gpu_before = c->ops->gpu_events;
    collect_gpu(c);
    if (c->ops->gpu_events > gpu_before && !c->ops->peak.device && !c->ops->peak.overridden)
        c->ops->peak = c->peak;
    else if (c->ops->gpu_events > gpu_before && c->ops->peak.entry != c->peak.entry)
        gp_error_note(&c->ops->note,
                      "Rank %d runs on another device (%s): its rows use its own "
                      "peaks; the header shows the first rank's.",
                      (int)t->rank, c->peak.device ? c->peak.device : "unknown");
    for (size_t k = 0; k < t->n_tracks && !c->oom; k++)
        if (t->tracks[k].kind != GP_TRACK_GPU_STREAM)
            walk_track(c, &t->tracks[k]);
    for (size_t j = 0; j < c->n_gw && !c->oom; j++)
        if (!(c->gw[j].flags & GW_USED)) {
            c->ops->no_launch++;
            add_unattributed(c, &c->gw[j], GP__NO_LAUNCH, NULL);
        }
}

/* The accumulated rows (or instances) into ops->rows, finished and sorted, and the total row. */
static gp_status build_rows(ctx *c, gp__ops_priv *p)
{
    gp_ops *ops = c->ops;
    size_t n = c->o->by == GP_OPS_BY_INSTANCE ? c->n_inst : c->tab->n;
    gp_ops_row *rows = calloc(n ? n : 1, sizeof *rows);
    if (!rows)
        return GP_ENOMEM;
    if (c->o->by == GP_OPS_BY_INSTANCE) {
        /* instance rows are finished; the unattributed group rows only fed the total. No
         * instance: c->inst is NULL, which memcpy may not be given even for 0 bytes. */
        if (n)
            memcpy(rows, c->inst, n * sizeof *rows);
    } else {
        for (size_t i = 0; i < n; i++) {
            acc *a = gp__group_at(c->tab, i);
            finish_row(a);
            if (a->launchers[0] &&
                !(a->r.module = gp__ops_launcher_text(&p->strs, a->launchers, a->more_launchers)))
                c->oom = true;
            rows[i] = a->r;
        }
    }
    gp_ops_row *t = &ops->total;
    acc tot = {.r = {.key = "TOTAL", .roof_pct = -1}};
    bool gpu_work = false;
    for (size_t i = 0; i < n; i++)
        gpu_work = gpu_work || rows[i].gpu > 0 || rows[i].self_gpu > 0;
    /* Without GPU work every GPU figure is 0: sorting by one would leave the rows in name order.
     * The CPU figure of the same kind takes its place, and ops->sort says which was used. */
    if (!gpu_work && ops->sort == GP_OPS_SORT_SELF_GPU)
        ops->sort = GP_OPS_SORT_SELF_CPU;
    else if (!gpu_work && ops->sort == GP_OPS_SORT_GPU)
        ops->sort = GP_OPS_SORT_CPU;
    for (size_t i = 0; i < n; i++) {
        const gp_ops_row *r = &rows[i];
        tot.r.calls += r->calls;
        tot.r.self_cpu = gp__sat_add(tot.r.self_cpu, r->self_cpu);
        tot.r.cpu = gp__sat_add(tot.r.cpu, r->cpu);
        tot.r.self_gpu = gp__sat_add(tot.r.self_gpu, r->self_gpu);
        tot.r.self_gpu_busy = gp__sat_add(tot.r.self_gpu_busy, r->self_gpu_busy);
        tot.r.gpu = gp__sat_add(tot.r.gpu, r->gpu);
        tot.r.gpu_busy = gp__sat_add(tot.r.gpu_busy, r->gpu_busy);
        tot.r.kernels += r->kernels;
        tot.r.kernels_subtree += r->kernels_subtree;
        tot.r.replayed += r->replayed;
    }
    ops->rows = malloc((n ? n : 1) * sizeof *ops->rows);
    gp_status st = ops->rows ? gp__ops_sort_rows(rows, n, ops->sort, ops->rows) : GP_ENOMEM;
    ops->n_rows = st == GP_OK ? n : 0;
    *t = tot.r;
    free(rows);
    return st != GP_OK ? st : c->oom ? GP_ENOMEM : GP_OK;
}

static gp_status compute(const gp_trace *const *traces, size_t n, const gp_ops_opts *opts,
                         const gp__ops_listener *l, bool keep, gp_ops **out);

gp_status gp_ops_compute(const gp_trace *const *traces, size_t n, const gp_ops_opts *opts,
                         gp_ops **out, gp_error *err)
{
    gp_status st = gp__ops_compute_with(traces, n, opts, NULL, out);
    if (st != GP_OK)
        gp_error_set(err, st, "%s attributing the ops of %zu trace%s", gp_strerror(st), n,
                     n == 1 ? "" : "s");
    return st;
}

gp_status gp__ops_compute_with(const gp_trace *const *traces, size_t n, const gp_ops_opts *opts,
                               const gp__ops_listener *l, gp_ops **out)
{
    return compute(traces, n, opts, l, false, out);
}

gp_status gp__ops_compute_kept(const gp_trace *const *traces, size_t n, const gp_ops_opts *opts,
                               gp_ops **out)
{
    return compute(traces, n, opts, NULL, opts && opts->by == GP_OPS_BY_SHAPE, out);
}

/* gp__ops_compute_with; keep: by shape, the modeled instances kept in the result's private part. */
static gp_status compute(const gp_trace *const *traces, size_t n, const gp_ops_opts *opts,
                         const gp__ops_listener *l, bool keep, gp_ops **out)
{
    gp_ops_opts defaults;
    if (!opts) {
        gp_ops_opts_init(&defaults);
        opts = &defaults;
    }
    gp_ops *ops = calloc(1, sizeof *ops);
    gp__ops_priv *p = calloc(1, sizeof *p);
    if (!ops || !p || gp__strtab_init(&p->strs) != GP_OK) {
        free(ops);
        free(p);
        return GP_ENOMEM;
    }
    ops->priv = p;
    gp__group_table_init(&p->tab, sizeof(acc), true);
    ops->by = opts->by;
    ops->sort = opts->sort;
    ops->n_traces = n;
    ops->peak.num_sms = -1;
    ctx c = {.o = opts, .ops = ops, .tab = &p->tab, .strs = &p->strs, .lis = l, .keep_inst = keep};
    for (size_t i = 0; i < n && !c.oom; i++)
        run_trace(&c, traces[i]);
    gp_status st = c.oom ? GP_ENOMEM : build_rows(&c, p);
    if (keep) {
        p->inst = c.inst;
        p->n_inst = c.n_inst;
    } else {
        free(c.inst);
    }
    free(c.kbuf);
    free(c.gw);
    free(c.cat_memo);
    free(c.py_memo);
    free(c.row_memo);
    gp__idmap_free(&c.shape_rows);
    gp__op_model_memo_free(&c.models);
    gp__idmap_free(&c.texts);
    free(c.st);
    free(c.iv);
    free(c.own);
    free(c.ops_st);
    free(c.sw);
    free(c.mods);
    if (st != GP_OK) {
        gp_ops_free(ops);
        return st;
    }
    gp__ops_write_notes(ops);
    *out = ops;
    return GP_OK;
}
