/* The "op_below_roofline" finding of `gpuprof analyze` (docs/analyses.md): the GEMM, convolution
 * or attention shape whose GPU time is furthest above its roofline time, when it runs below 30 %
 * of its roof and holds at least 5 % of the rank's GPU time. Evidence names the op, its shapes,
 * dtype, % of peak, module and source line. Needs a trace read with keep_op_shapes (the analyze
 * command sets it) and a device of the peak table; otherwise nothing. The ops are computed once
 * per rank by findings_patterns.c. */
#include <stdio.h>
#include <string.h>

#include "analyze/analyze_internal.h"
#include "gpuprof/ops.h"

#define MAX_PCT 30.0   /* below this % of the roofline */
#define MIN_SHARE 0.05 /* of the rank's GPU time */

static bool heavy(gp_op_category c)
{
    return c == GP_OPCAT_GEMM || c == GP_OPCAT_CONV_FWD || c == GP_OPCAT_CONV_BWD ||
           c == GP_OPCAT_ATTN_FWD || c == GP_OPCAT_ATTN_BWD;
}

/* The row with the most time lost against its roof (model time - roofline time), or NULL. */
static const gp_ops_row *worst_row(const gp_ops *ops)
{
    const gp_ops_row *best = NULL;
    double best_lost = 0;
    for (size_t i = 0; i < ops->n_rows; i++) {
        const gp_ops_row *r = &ops->rows[i];
        if (!r->modeled || r->roof_pct < 0 || r->roof_pct >= MAX_PCT || !heavy(r->category) ||
            (double)r->model_time < MIN_SHARE * (double)ops->gpu_time)
            continue;
        double lost = (double)r->model_time * (1 - r->roof_pct / 100);
        if (lost > best_lost) {
            best_lost = lost;
            best = r;
        }
    }
    return best;
}

/* Which suggestion applies (render's words): by bound, category and dtype, since advice to
 * leave fp32 means nothing to a bf16 op. 0 compute-bound GEMM/conv, 1 memory-bound, 2 attention
 * already fused (flash/cuDNN), 3 attention not fused, 4 fp32. */
static uint8_t variant(const gp_ops_row *r)
{
    if (r->bound == GP_BOUND_MEMORY)
        return 1;
    bool attn = r->category == GP_OPCAT_ATTN_FWD || r->category == GP_OPCAT_ATTN_BWD;
    if (attn && r->key && (strstr(r->key, "flash") || strstr(r->key, "cudnn")))
        return 2;
    if (attn)
        return 3;
    return r->dtype == GP_DT_FP32 ? 4 : 0;
}

/* The Input Dims text without trailing non-tensor arguments (",[]" says nothing here). */
static void dims_of(const gp_ops_row *r, char *dims, size_t cap)
{
    snprintf(dims, cap, "%s", r->shapes ? r->shapes : "");
    size_t n = strlen(dims);
    while (n >= 4 && strcmp(dims + n - 4, ",[]]") == 0)
        memcpy(dims + (n -= 3) - 1, "]", 2);
}

gp_status gp__advise_ops(gp_analysis *a, size_t *cap, const gp_ops *ops, int32_t rank)
{
    const gp_ops_row *r = worst_row(ops);
    if (!r)
        return GP_OK;
    gp_finding *f = gp__advise_add(a, cap, "op_below_roofline", rank);
    if (!f)
        return GP_ENOMEM;
    char dims[GP_FINDING_NAME_CAP];
    dims_of(r, dims, sizeof dims);
    gp__advise_object(f, GP_OBJ_OP, r->key, r->model_time, r->calls);
    gp__advise_object(f, GP_OBJ_SHAPES, dims, 0, 0);
    gp__advise_object(f, GP_OBJ_DTYPE, gp_op_dtype_name(r->dtype), 0, 0);
    const char *mod = r->module ? r->module : "";
    if (strncmp(mod, "nn.Module: ", 11) == 0)
        mod += 11;
    if (*mod)
        gp__advise_object(f, GP_OBJ_MODULE, mod, 0, 0);
    if (r->line && *r->line)
        gp__advise_object(f, GP_OBJ_LINE, r->line, 0, 0);
    gp__advise_metric(f, "roofline_share", r->roof_pct / 100.0, GP_FU_RATIO);
    gp__advise_metric(f, "achieved_flops", r->tflops_per_s * 1e12, GP_FU_FLOP_PER_S);
    gp__advise_metric(f, "achieved_bandwidth", r->tb_per_s * 1e12, GP_FU_BYTES_PER_S);
    gp__advise_metric(f, "gpu_work_sum", (double)r->model_time, GP_FU_NS);
    gp__advise_metric(f, "share_of_gpu_work_sum", (double)r->model_time / (double)ops->gpu_time,
                      GP_FU_RATIO);
    gp__advise_metric(f, "calls", (double)r->calls, GP_FU_COUNT);
    f->gain_ns = (gp_ns)((double)r->model_time * (1 - r->roof_pct / 100));
    f->type = GP_SUG_ALGORITHM;
    f->variant = variant(r);
    double share = (double)f->gain_ns / (double)ops->gpu_time;
    f->priority = share >= 0.30 ? GP_PRIO_HIGH : share >= 0.10 ? GP_PRIO_MEDIUM : GP_PRIO_LOW;
    return GP_OK;
}
