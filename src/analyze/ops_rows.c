/* The rows and the note of `gpuprof ops` (analyze layer): the order of the rows, what the result
 * cannot say, the naming rules and shape lookup of the walk, the result's lifetime and the map of
 * string-id tuples the walk memoises rows and models with. Split from ops.c
 * (include/gpuprof/ops.h; docs/ops.md; docs/internals/ops.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/msort.h"
#include "core/util.h"
#include "analyze/ops_internal.h"
#include "gpuprof/ops.h"

/* A row's place in the order: primary key descending, then GPU time, key, shapes, rank, start. */
typedef struct sortrec {
    double primary;
    const gp_ops_row *r;
} sortrec;

static double primary_of(const gp_ops_row *r, gp_ops_sort s)
{
    switch (s) {
    case GP_OPS_SORT_GPU:
        return (double)r->gpu;
    case GP_OPS_SORT_SELF_CPU:
        return (double)r->self_cpu;
    case GP_OPS_SORT_CPU:
        return (double)r->cpu;
    case GP_OPS_SORT_CALLS:
        return (double)r->calls;
    case GP_OPS_SORT_TFLOPS:
        return r->tflops_per_s;
    case GP_OPS_SORT_EFFICIENCY: /* lowest % first, rows without one last */
        return r->roof_pct >= 0 ? -r->roof_pct : -1e300;
    default:
        return (double)r->self_gpu;
    }
}

static int cmp_str0(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

static int cmp_sortrec(const sortrec *x, const sortrec *y)
{
    if (x->primary != y->primary)
        return x->primary > y->primary ? -1 : 1;
    const gp_ops_row *a = x->r, *b = y->r;
    GP_CMP_KEY(b->gpu, a->gpu);
    int k = strcmp(a->key, b->key);
    if (k)
        return k;
    if ((k = cmp_str0(a->shapes, b->shapes)) || (k = cmp_str0(a->types, b->types)))
        return k;
    GP_CMP_KEY(a->unattributed, b->unattributed);
    GP_CMP_KEY(a->rank, b->rank);
    return GP_CMP(a->ts, b->ts);
}
GP__DEFINE_MERGE_SORT(sort_recs, sortrec, cmp_sortrec)

gp_status gp__ops_sort_rows(const gp_ops_row *rows, size_t n, gp_ops_sort sort, gp_ops_row *out)
{
    sortrec *rec = calloc(n ? n : 1, sizeof *rec);
    if (!rec)
        return GP_ENOMEM;
    for (size_t i = 0; i < n; i++)
        rec[i] = (sortrec){primary_of(&rows[i], sort), &rows[i]};
    if (n > 1 && !sort_recs(rec, n)) {
        free(rec);
        return GP_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = *rec[i].r;
    free(rec);
    return GP_OK;
}

/* Time order first (gp__ops_rows_by_time), then the order of cmp_sortrec. A stable sort by time
 * of rows a stable sort ordered by cmp_sortrec is the stable sort by this composite key: one sort,
 * whose comparisons nearly all end at the start times (the table order's string compares ran on
 * every comparison of the sort it replaces). */
static int cmp_time_rec(const sortrec *x, const sortrec *y)
{
    GP_CMP_KEY(x->r->ts, y->r->ts);
    GP_CMP_KEY(y->r->cpu, x->r->cpu);
    return cmp_sortrec(x, y);
}
GP__DEFINE_MERGE_SORT(sort_time_recs, sortrec, cmp_time_rec)

gp_status gp__ops_rows_by_time(const gp_ops_row *rows, size_t n, gp_ops_sort sort,
                               const gp_ops_row **out)
{
    sortrec *rec = calloc(n ? n : 1, sizeof *rec);
    if (!rec)
        return GP_ENOMEM;
    for (size_t i = 0; i < n; i++)
        rec[i] = (sortrec){primary_of(&rows[i], sort), &rows[i]};
    if (n > 1 && !sort_time_recs(rec, n)) {
        free(rec);
        return GP_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = rec[i].r;
    free(rec);
    return GP_OK;
}

/* The key of the first row whose key ends with suffix, or NULL. */
static const char *row_ending(const gp_ops *ops, const char *suffix)
{
    size_t sl = strlen(suffix);
    for (size_t i = 0; i < ops->n_rows; i++) {
        const char *k = ops->rows[i].key;
        size_t kl = k ? strlen(k) : 0;
        if (kl >= sl && memcmp(k + kl - sl, suffix, sl) == 0)
            return k;
    }
    return NULL;
}

/* What the result cannot say, in its note. Where such GPU events have a row of their own (by
 * name, shape, module, line, annotation), the note names one: hipGraphLaunch on ROCm,
 * cudaLaunchKernel on CUDA; by kernel or instance they have none. */
void gp__ops_write_notes(gp_ops *ops)
{
    if (ops->no_launch) {
        gp_error_note(&ops->note, "%llu GPU events have no launch call with their correlation id%s",
                      (unsigned long long)ops->no_launch,
                      row_ending(ops, GP__NO_LAUNCH) ? ": listed as \"" GP__NO_LAUNCH "\"." : ".");
    }
    if (ops->outside_op) {
        const char *eg = row_ending(ops, GP__OUTSIDE_ROW);
        if (eg)
            gp_error_note(&ops->note,
                          "%llu GPU events were launched outside any CPU op: listed by launch "
                          "call, as \"%s\".",
                          (unsigned long long)ops->outside_op, eg);
        else
            gp_error_note(&ops->note, "%llu GPU events were launched outside any CPU op.",
                          (unsigned long long)ops->outside_op);
    }
    if (ops->no_shapes)
        gp_error_note(&ops->note,
                      "%llu instances of modeled ops have no Input Dims (recorded without "
                      "record_shapes=True): no FLOPs or bytes for them.",
                      (unsigned long long)ops->no_shapes);
    if (ops->bad_shapes)
        gp_error_note(&ops->note,
                      "%llu instances of modeled ops have shapes the model cannot use "
                      "(malformed, or not the operator's form): listed without a perf model.",
                      (unsigned long long)ops->bad_shapes);
    if (ops->modeled && !ops->peak.tbps)
        gp_error_note(&ops->note,
                      "Device %s is not in the peak table: achieved rates without %% of roofline "
                      "(give --peak-tflops and --peak-tbps).",
                      ops->peak.device ? ops->peak.device : "unknown");
}

/* ---- names, shapes and the result's lifetime --------------------------------------------------
 */

const char *gp__module_name(const char *s, size_t len, bool merge, size_t *out_len)
{
    if (len > 11 && memcmp(s, "nn.Module: ", 11) == 0) {
        s += 11;
        len -= 11;
    }
    size_t i = len;
    while (merge && i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
        i--;
    *out_len = merge && i > 1 && i < len && s[i - 1] == '_' ? i - 1 : len; /* "_7" stays */
    return s;
}

uint8_t gp__py_class(const char *s)
{
    if (strncmp(s, "nn.Module: ", 11) == 0)
        return 1;
    const char *paren = strstr(s, ".py(");
    if (!paren || !strstr(paren, "): "))
        return 3;
    if (strncmp(s, "torch/", 6) == 0 || strstr(s, "/torch/") != NULL)
        return 3; /* torch's own frames: the user's line is further out */
    return 2;
}

bool gp__memcpy_is_dtod(const char *name)
{
    return strstr(name, "DtoD") != NULL || strstr(name, "DeviceToDevice") != NULL;
}

const gp_op_shapes *gp__op_shapes_near(const gp_trace *t, int64_t ext, size_t *hint)
{
    const gp_op_shapes *v = t->op_shapes;
    size_t n = t->n_op_shapes, lo = *hint, hi, step = 1;
    if (ext <= 0)
        return NULL;
    if (lo > n || (lo > 0 && v[lo - 1].external_id >= ext))
        lo = 0;                                                   /* past it: from the start */
    for (hi = lo; hi < n && v[hi].external_id < ext; step *= 2) { /* v[0, lo) < ext */
        lo = hi + 1;
        hi = lo + step < n ? lo + step : n;
    }
    while (lo < hi) { /* the first of [lo, hi) not below ext (v[hi] is not, or hi = n) */
        size_t m = lo + (hi - lo) / 2;
        if (v[m].external_id < ext)
            lo = m + 1;
        else
            hi = m;
    }
    if (lo == n || v[lo].external_id != ext)
        return NULL;
    *hint = lo + 1;
    return &v[lo];
}

void gp_ops_opts_init(gp_ops_opts *opts)
{
    memset(opts, 0, sizeof *opts);
}

const gp_ops_row *gp__ops_instances(const gp_ops *ops, size_t *n)
{
    const gp__ops_priv *p = ops ? ops->priv : NULL;
    *n = p ? p->n_inst : 0;
    return p ? p->inst : NULL;
}

void gp__ops_drop_instances(gp_ops *ops)
{
    gp__ops_priv *p = ops ? ops->priv : NULL;
    if (p) {
        free(p->inst);
        p->inst = NULL;
        p->n_inst = 0;
    }
}

void gp_ops_free(gp_ops *ops)
{
    if (!ops)
        return;
    gp__ops_priv *p = ops->priv;
    if (p) {
        gp__group_table_free(&p->tab);
        gp__strtab_free(&p->strs);
        free(p->inst);
        free(p);
    }
    free(ops->rows);
    free(ops);
}

const char *gp__ops_launcher_text(gp__strtab *strs, const char *const launchers[3], uint64_t more)
{
    size_t n = 64;
    for (int i = 0; i < 3 && launchers[i]; i++)
        n += strlen(launchers[i]) + 2;
    char *buf = malloc(n);
    if (!buf)
        return NULL;
    size_t k = 0;
    for (int i = 0; i < 3 && launchers[i]; i++) {
        size_t l = strlen(launchers[i]);
        if (i) {
            memcpy(buf + k, ", ", 2);
            k += 2;
        }
        memcpy(buf + k, launchers[i], l);
        k += l;
    }
    if (more)
        k += (size_t)snprintf(buf + k, n - k, " (+%llu launches by others)",
                              (unsigned long long)more);
    uint32_t id;
    gp_status st = gp__strtab_intern(strs, buf, k, &id);
    free(buf);
    return st == GP_OK ? gp__strtab_get(strs, id) : NULL;
}

/* ---- gp__idmap ------------------------------------------------------------------------------ */

static size_t idmap_home(const uint32_t key[4], size_t mask)
{
    uint64_t h = gp__hash_u64(((uint64_t)key[0] << 32 | key[1]) ^
                              gp__hash_u64((uint64_t)key[2] << 32 | key[3]));
    return (size_t)h & mask;
}

/* The slot of key in m: its own, or the empty one where it would go. m->n_slots > 0. */
static uint32_t *idmap_slot(const gp__idmap *m, const uint32_t key[4])
{
    size_t mask = m->n_slots - 1;
    for (size_t i = idmap_home(key, mask);; i = (i + 1) & mask) {
        uint32_t *s = m->slots[i];
        if (!s[4] || memcmp(s, key, 4 * sizeof *key) == 0)
            return s;
    }
}

bool gp__idmap_get(const gp__idmap *m, const uint32_t key[4], uint32_t *val)
{
    if (!m->n)
        return false;
    const uint32_t *s = idmap_slot(m, key);
    if (!s[4])
        return false;
    *val = s[4] - 1;
    return true;
}

gp_status gp__idmap_put(gp__idmap *m, const uint32_t key[4], uint32_t val)
{
    if (2 * (m->n + 1) > m->n_slots) { /* at most half full: short probes */
        size_t ns = m->n_slots ? 2 * m->n_slots : 64;
        gp__idmap grown = {calloc(ns, sizeof *grown.slots), m->n, ns};
        if (!grown.slots)
            return GP_ENOMEM;
        for (size_t i = 0; i < m->n_slots; i++)
            if (m->slots[i][4])
                memcpy(idmap_slot(&grown, m->slots[i]), m->slots[i], sizeof *m->slots);
        free(m->slots);
        *m = grown;
    }
    uint32_t *s = idmap_slot(m, key);
    memcpy(s, key, 4 * sizeof *key);
    s[4] = val + 1;
    m->n++;
    return GP_OK;
}

void gp__idmap_clear(gp__idmap *m)
{
    if (m->n)
        memset(m->slots, 0, m->n_slots * sizeof *m->slots);
    m->n = 0;
}

void gp__idmap_free(gp__idmap *m)
{
    free(m->slots);
    *m = (gp__idmap){0};
}
