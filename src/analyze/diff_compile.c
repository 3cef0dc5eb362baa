/* gpuprof diff: torch.compile regions paired across the sides (docs/diff.md, "torch.compile").
 * One side eager, the other compiled: each region's kernels name the aten ops they replace
 * (the ops the region calls itself, aten::mm; the ops Inductor lists in a fused kernel's name,
 * triton_poi_fused_add_relu_1 -> aten::add, aten::relu, decoded against the op names the eager
 * side has), and the eager side's GPU work is given to the innermost op of its launch that a
 * region names, each op's figures split between the regions naming it by how many of their
 * kernels name it. Both compiled: regions paired by compile id. Prints nothing. */
#include "analyze/diff_compile.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/group_table.h"
#include "core/imap.h"
#include "core/msort.h"
#include "core/util.h"
#include "gpuprof/compile.h"

static const char region_prefix[] = "Torch-Compiled Region: ";
#define MAX_STACK 128

/* The GPU work of one correlation id. */
typedef struct gwork {
    gp_ns dur;
    gp_strid name;
} gwork;

/* A compiled region ([side] figures summed over the side's runs). */
typedef struct region_rec {
    gp__group_key key;
    double calls[2], gpu[2], cpu[2];
} region_rec;

/* kind -1: an op name some region names (w > 0), with the eager figures paired with it; kind r:
 * how many kernels of region r name it (w). */
typedef struct op_rec {
    gp__group_key key;
    double w, gpu, cpu, calls;
    const gp_event *last; /* the last op call counted */
} op_rec;

typedef struct dctx {
    gp__group_table regions, ops;
    const gp_trace *const *eager; /* the eager side's runs (NULL when both are compiled) */
    size_t n_eager;
    int side;
    bool weigh; /* compiled pass: record which ops each region names */
    double paired_gpu[2], other_gpu[2];
    gp_status st;
    /* per trace */
    const gp_trace *t;
    gp__imap gidx;
    gwork *work;
    size_t n_work, cap_work;
} dctx;

static bool starts_with(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static bool side_compiled(const gp_trace *const *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (gp_compile_trace_has_regions(t[i]))
            return true;
    return false;
}

/* The GPU work of the trace per correlation id. */
static gp_status map_gpu(dctx *c)
{
    const gp_trace *t = c->t;
    c->n_work = 0;
    gp_status st = gp__imap_init(&c->gidx, 1024);
    for (size_t k = 0; st == GP_OK && k < t->n_tracks; k++)
        for (size_t i = 0; st == GP_OK && i < t->tracks[k].n_events; i++) {
            const gp_event *e = &t->tracks[k].events[i];
            uint64_t v;
            if (!gp_event_kind_is_gpu_work((gp_event_kind)e->kind) || !e->correlation)
                continue;
            if (gp__imap_get(&c->gidx, e->correlation, &v)) {
                c->work[v].dur = gp__sat_add(c->work[v].dur, e->dur);
            } else if ((st = gp__grow((void **)&c->work, &c->cap_work, sizeof *c->work,
                                      c->n_work + 1)) == GP_OK) {
                c->work[c->n_work] = (gwork){e->dur, e->name};
                st = gp__imap_put(&c->gidx, e->correlation, c->n_work++);
            }
        }
    return st;
}

static op_rec *op_at(dctx *c, int32_t kind, const char *name, size_t len)
{
    uint32_t i = gp__group_find(&c->ops, kind, name, len);
    if (!i)
        c->st = GP_ENOMEM;
    return i ? gp__group_at(&c->ops, i - 1) : NULL;
}

static void weigh(dctx *c, int32_t region, const char *name, size_t len)
{
    op_rec *r = op_at(c, region, name, len);
    if (r)
        r->w += 1;
    if ((r = op_at(c, -1, name, len)))
        r->w += 1;
}

/* True when the eager side has the op "aten::<s[0..len)>" (in *buf). */
static bool eager_has(const dctx *c, const char *s, size_t len, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "aten::%.*s", (int)len, s);
    if (n < 0 || (size_t)n >= cap)
        return false;
    for (size_t i = 0; i < c->n_eager; i++)
        if (gp_trace_find_str(c->eager[i], buf, (size_t)n))
            return true;
    return false;
}

/* The aten ops a fused kernel's name lists ("triton_red_fused__unsafe_view_add_mean_2": the
 * longest run of '_'-separated words at each place that is an eager op name). */
static void decode_fused(dctx *c, int32_t region, const char *kname)
{
    const char *f = strstr(kname, "fused_");
    if (!f)
        return;
    f += strlen("fused_");
    size_t len = strlen(f), end = len;
    while (end > 0 && isdigit((unsigned char)f[end - 1]))
        end--;
    if (end < len && end > 0 && f[end - 1] == '_') /* the kernel's number */
        len = end - 1;
    char buf[256];
    for (size_t p = 0; p < len;) {
        size_t best = 0;
        for (size_t e = len; e > p && !best; e--)
            if ((e == len || f[e] == '_') && eager_has(c, f + p, e - p, buf, sizeof buf))
                best = e;
        if (best) {
            weigh(c, region, buf, strlen(buf));
            p = best + 1;
        } else {
            const char *u = memchr(f + p + 1, '_', len - p - 1);
            p = u ? (size_t)(u - f) + 1 : len;
        }
    }
}

/* A launch on the compiled side: its GPU work to the outermost region open, or outside. */
static void compiled_launch(dctx *c, const gp_event *const *stack, size_t depth, const gwork *w)
{
    size_t r = 0;
    while (r < depth && !starts_with(gp_trace_str(c->t, stack[r]->name), region_prefix))
        r++;
    if (r == depth) {
        c->other_gpu[c->side] += (double)w->dur;
        return;
    }
    const char *rn = gp_trace_str(c->t, stack[r]->name) + strlen(region_prefix);
    uint32_t ri = gp__group_find(&c->regions, 0, rn, strlen(rn));
    if (!ri) {
        c->st = GP_ENOMEM;
        return;
    }
    region_rec *g = gp__group_at(&c->regions, ri - 1);
    g->gpu[c->side] += (double)w->dur;
    c->paired_gpu[c->side] += (double)w->dur;
    if (!c->weigh)
        return;
    const char *kn = gp_trace_str(c->t, w->name);
    for (size_t i = depth; i > r + 1 && !starts_with(kn, "triton_"); i--)
        if (starts_with(gp_trace_str(c->t, stack[i - 1]->name), "triton_"))
            kn = gp_trace_str(c->t, stack[i - 1]->name);
    if (starts_with(kn, "triton_"))
        decode_fused(c, (int32_t)(ri - 1), kn);
    for (size_t i = r + 1; i < depth; i++) {
        const char *n = gp_trace_str(c->t, stack[i]->name);
        if (starts_with(n, "aten::"))
            weigh(c, (int32_t)(ri - 1), n, strlen(n));
    }
}

/* A launch on the eager side: to the innermost open op that a region names. */
static void eager_launch(dctx *c, const gp_event *const *stack, size_t depth, const gwork *w)
{
    for (size_t i = depth; i > 0; i--) {
        const gp_event *op = stack[i - 1];
        const char *n = gp_trace_str(c->t, op->name);
        op_rec *r = op_at(c, -1, n, strlen(n));
        if (!r || r->w <= 0)
            continue;
        r->gpu += (double)w->dur;
        if (r->last != op) {
            r->last = op;
            r->calls += 1;
            r->cpu += (double)op->dur;
        }
        c->paired_gpu[c->side] += (double)w->dur;
        return;
    }
    c->other_gpu[c->side] += (double)w->dur;
}

/* Walks the CPU threads of c->t with the stack of open cpu_ops; regions counted on a compiled
 * side, launches handed to compiled_launch / eager_launch. */
static void walk(dctx *c, bool compiled)
{
    const gp_trace *t = c->t;
    const gp_event *stack[MAX_STACK];
    for (size_t k = 0; k < t->n_tracks && c->st == GP_OK; k++) {
        const gp_track *tr = &t->tracks[k];
        if (tr->kind != GP_TRACK_CPU_THREAD)
            continue;
        size_t depth = 0;
        for (size_t i = 0; i < tr->n_events && c->st == GP_OK; i++) {
            const gp_event *e = &tr->events[i];
            while (depth && stack[depth - 1]->ts + stack[depth - 1]->dur <= e->ts)
                depth--;
            uint64_t v;
            if (e->kind == GP_EV_CPU_OP) {
                const char *n = gp_trace_str(t, e->name);
                if (compiled && starts_with(n, region_prefix)) {
                    n += strlen(region_prefix);
                    uint32_t ri = gp__group_find(&c->regions, 0, n, strlen(n));
                    if (!ri) {
                        c->st = GP_ENOMEM;
                        break;
                    }
                    region_rec *g = gp__group_at(&c->regions, ri - 1);
                    g->calls[c->side] += 1;
                    g->cpu[c->side] += (double)e->dur;
                }
                if (depth < MAX_STACK)
                    stack[depth++] = e;
            } else if ((e->kind == GP_EV_RUNTIME || e->kind == GP_EV_DRIVER) && e->correlation &&
                       gp__imap_get(&c->gidx, e->correlation, &v)) {
                if (compiled)
                    compiled_launch(c, stack, depth, &c->work[v]);
                else
                    eager_launch(c, stack, depth, &c->work[v]);
            }
        }
    }
}

static void run_side(dctx *c, const gp_trace *const *runs, size_t n, int side, bool compiled)
{
    c->side = side;
    for (size_t i = 0; i < n && c->st == GP_OK; i++) {
        c->t = runs[i];
        if ((c->st = map_gpu(c)) == GP_OK)
            walk(c, compiled);
        gp__imap_free(&c->gidx);
        for (size_t k = 0; k < c->ops.n; k++) /* op calls are per trace */
            ((op_rec *)gp__group_at(&c->ops, k))->last = NULL;
    }
}

typedef struct named {
    const char *name;
    double gpu;
} named;

static int cmp_named(const named *a, const named *b)
{
    int c = GP_CMP(b->gpu, a->gpu);
    return c ? c : strcmp(a->name, b->name);
}
GP__DEFINE_MERGE_SORT(sort_named, named, cmp_named)

/* Region i's share of the eager ops that name it, on side e; its op list. */
static gp_status pair_ops(dctx *c, gp_diff_region *out, int32_t i, int e, named *tmp)
{
    size_t n = 0;
    for (size_t k = 0; k < c->ops.n; k++) {
        const op_rec *r = gp__group_at(&c->ops, k);
        if (r->key.kind != i)
            continue;
        /* weigh() made the name's kind -1 record: found, not added, so r stays valid */
        const op_rec *all = op_at(c, -1, r->key.name, r->key.len);
        if (!all)
            return GP_ENOMEM;
        double share = r->w / all->w;
        out->gpu[e] += all->gpu * share;
        out->cpu[e] += all->cpu * share;
        out->calls[e] += all->calls * share;
        if (all->calls > 0)
            tmp[n++] = (named){r->key.name, all->gpu * share};
    }
    if (!sort_named(tmp, n))
        return GP_ENOMEM;
    size_t used = 0;
    for (size_t k = 0; k < n; k++) {
        int w =
            snprintf(out->ops + used, sizeof out->ops - used, "%s%s", k ? ", " : "", tmp[k].name);
        if (w < 0 || (size_t)w >= sizeof out->ops - used) {
            out->ops[used] = '\0';
            break;
        }
        used += (size_t)w;
    }
    return GP_OK;
}

static double ratio(double a, double b)
{
    return a > 0 && b > 0 ? a / b : NAN;
}

static int cmp_region(const gp_diff_region *a, const gp_diff_region *b)
{
    double x = GP_MAX(a->gpu[1], a->gpu[0]), y = GP_MAX(b->gpu[1], b->gpu[0]);
    int c = GP_CMP(y, x);
    return c ? c : strcmp(a->name, b->name);
}
GP__DEFINE_MERGE_SORT(sort_regions, gp_diff_region, cmp_region)

static gp_status build(dctx *c, gp_diff_compile *o, const size_t *runs)
{
    if (c->regions.n && !(o->regions = calloc(c->regions.n, sizeof *o->regions)))
        return GP_ENOMEM;
    named *tmp = malloc((c->ops.n + 1) * sizeof *tmp);
    if (!tmp)
        return GP_ENOMEM;
    int eager = o->mode == GP_DIFF_COMPILE_BASE_EAGER  ? 0
                : o->mode == GP_DIFF_COMPILE_CUR_EAGER ? 1
                                                       : -1;
    gp_status st = GP_OK;
    for (size_t i = 0; i < c->regions.n && st == GP_OK; i++) {
        const region_rec *g = gp__group_at(&c->regions, i);
        gp_diff_region *r = &o->regions[o->n_regions++];
        snprintf(r->name, sizeof r->name, "%s", g->key.name);
        for (int s = 0; s < 2; s++) {
            r->calls[s] = g->calls[s];
            r->gpu[s] = g->gpu[s];
            r->cpu[s] = g->cpu[s];
        }
        if (eager >= 0)
            st = pair_ops(c, r, (int32_t)i, eager, tmp);
        for (int s = 0; s < 2; s++) {
            r->calls[s] /= (double)runs[s];
            r->gpu[s] /= (double)runs[s];
            r->cpu[s] /= (double)runs[s];
        }
        r->gpu_speedup = ratio(r->gpu[0], r->gpu[1]);
        r->cpu_speedup = ratio(r->cpu[0], r->cpu[1]);
    }
    free(tmp);
    for (int s = 0; s < 2; s++) {
        o->paired_gpu[s] = c->paired_gpu[s] / (double)runs[s];
        o->other_gpu[s] = c->other_gpu[s] / (double)runs[s];
    }
    o->speedup = ratio(o->paired_gpu[0], o->paired_gpu[1]);
    if (st == GP_OK && !sort_regions(o->regions, o->n_regions))
        st = GP_ENOMEM;
    return st;
}

gp_status gp__diff_compile(const gp_trace *const *base, size_t nb, const gp_trace *const *cur,
                           size_t nc, gp_diff_compile **out)
{
    gp_diff_compile *o = calloc(1, sizeof *o);
    if (!o)
        return GP_ENOMEM;
    bool cb = side_compiled(base, nb), cc = side_compiled(cur, nc);
    o->mode = cb && cc ? GP_DIFF_COMPILE_BOTH
              : cc     ? GP_DIFF_COMPILE_BASE_EAGER
              : cb     ? GP_DIFF_COMPILE_CUR_EAGER
                       : GP_DIFF_COMPILE_NONE;
    o->speedup = NAN;
    if (o->mode == GP_DIFF_COMPILE_NONE) {
        *out = o;
        return GP_OK;
    }
    dctx c = {.st = GP_OK};
    gp__group_table_init(&c.regions, sizeof(region_rec), true);
    gp__group_table_init(&c.ops, sizeof(op_rec), true);
    const gp_trace *const *sides[2] = {base, cur};
    size_t runs[2] = {nb, nc};
    if (o->mode == GP_DIFF_COMPILE_BOTH) {
        run_side(&c, base, nb, 0, true);
        run_side(&c, cur, nc, 1, true);
    } else {
        int e = o->mode == GP_DIFF_COMPILE_BASE_EAGER ? 0 : 1;
        c.eager = sides[e];
        c.n_eager = runs[e];
        c.weigh = true;
        run_side(&c, sides[1 - e], runs[1 - e], 1 - e, true);
        c.weigh = false;
        run_side(&c, sides[e], runs[e], e, false);
    }
    gp_status st = c.st == GP_OK ? build(&c, o, runs) : c.st;
    if (st == GP_OK && c.st != GP_OK)
        st = c.st;
    free(c.work);
    gp__group_table_free(&c.regions);
    gp__group_table_free(&c.ops);
    if (st != GP_OK) {
        gp__diff_compile_free(o);
        return st;
    }
    *out = o;
    return GP_OK;
}

void gp__diff_compile_free(gp_diff_compile *c)
{
    if (!c)
        return;
    free(c->regions);
    free(c);
}

const char *gp_diff_compile_mode_name(gp_diff_compile_mode m)
{
    static const char *const names[] = {[GP_DIFF_COMPILE_NONE] = "none",
                                        [GP_DIFF_COMPILE_BASE_EAGER] = "eager_to_compiled",
                                        [GP_DIFF_COMPILE_CUR_EAGER] = "compiled_to_eager",
                                        [GP_DIFF_COMPILE_BOTH] = "compiled_both"};
    return GP_NAME_OF(names, m, "none");
}
