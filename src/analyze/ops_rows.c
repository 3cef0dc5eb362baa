/* The rows and the note of `gpuprof ops` (analyze layer): the order of the rows and what the result
 * cannot say. Split from ops.c (include/gpuprof/ops.h; docs/ops.md; docs/internals/ops.md). */
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
