/* The "op_below_roofline" finding of `gpuprof analyze` (docs/analyses.md): the GEMM, convolution
 * or attention shape whose GPU time is furthest above its roofline time, when it runs below 30 %
 * of its roof and holds at least 5 % of the rank's GPU time. Evidence names the op, its shapes,
 * dtype, % of peak, module and source line. Needs a trace read with keep_op_shapes (the analyze
 * command sets it) and a device of the peak table; otherwise nothing. */
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

/* What to try, by bound, category and dtype: advice to leave fp32 means nothing to a bf16 op. */
static const char *suggestion(const gp_ops_row *r)
{
    if (r->bound == GP_BOUND_MEMORY)
        return "This shape is memory-bound and far from the bandwidth roof: fuse it with its "
               "neighbours (torch.compile), batch small products together, or keep operands in a "
               "layout the kernel reads contiguously.";
    if ((r->category == GP_OPCAT_ATTN_FWD || r->category == GP_OPCAT_ATTN_BWD) && r->key &&
        (strstr(r->key, "flash") || strstr(r->key, "cudnn")))
        return "This attention already runs a fused kernel, far below the compute roof: a newer "
               "kernel for this GPU (FlashAttention-3 on Hopper, CK or aiter on MI300) and more "
               "or longer sequences per call raise its utilisation.";
    if (r->category == GP_OPCAT_ATTN_FWD || r->category == GP_OPCAT_ATTN_BWD)
        return "This attention shape runs far below the compute roof: pick the flash or cuDNN "
               "backend (torch.nn.attention.sdpa_kernel) rather than the memory-efficient or "
               "math one, and batch more sequences per call.";
    if (r->dtype == GP_DT_FP32)
        return "This shape runs far below the compute roof: use bf16/fp16 (or TF32) instead of "
               "fp32, pad dimensions to multiples of 8/16 for tensor cores, and try torch.compile "
               "max-autotune or cuBLASLt heuristics.";
    return "This shape runs far below the compute roof: pad dimensions to multiples of 8/16 (64 "
           "suits most tiles), batch small products into one call, and try torch.compile "
           "max-autotune or cuBLASLt heuristics.";
}

gp_status gp__advise_ops(gp_analysis *a, size_t *cap, const gp_trace *t, const gp_ops *given)
{
    if (!t->n_op_shapes)
        return GP_OK;
    gp_ops *own = NULL;
    const gp_ops *ops = given;
    if (!ops) {
        gp_ops_opts o;
        gp_ops_opts_init(&o);
        o.by = GP_OPS_BY_SHAPE;
        gp_trace *tt = (gp_trace *)t; /* gp_ops_compute reads only */
        gp_status st = gp_ops_compute(&tt, 1, &o, &own);
        if (st != GP_OK)
            return st;
        ops = own;
    }
    const gp_ops_row *r = worst_row(ops);
    if (r) {
        gp_finding *f = gp__advise_add(a, cap, "op_below_roofline", t->rank);
        if (!f) {
            gp_ops_free(own);
            return GP_ENOMEM;
        }
        const char *mod = r->module ? r->module : "", *line = r->line ? r->line : "";
        if (strncmp(mod, "nn.Module: ", 11) == 0)
            mod += 11;
        char dims[96];
        snprintf(dims, sizeof dims, "%s", r->shapes ? r->shapes : "");
        size_t n = strlen(dims); /* trailing non-tensor arguments ",[]" say nothing here */
        while (n >= 4 && strcmp(dims + n - 4, ",[]]") == 0)
            memcpy(dims + (n -= 3) - 1, "]", 2);
        snprintf(f->title, sizeof f->title, "%s %s %s at %.1f%% of peak%s%s%s%s%s", r->key, dims,
                 gp_op_dtype_name(r->dtype), r->roof_pct, *mod || *line ? " (" : "", mod,
                 *mod && *line ? ", " : "", line, *mod || *line ? ")" : "");
        gp__advise_evidence(f, "roofline_pct", r->roof_pct, "%");
        gp__advise_evidence(f, "achieved_tflops", r->tflops_per_s, "TFLOP/s");
        gp__advise_evidence(f, "achieved_tbps", r->tb_per_s, "TB/s");
        gp__advise_evidence(f, "gpu_time", (double)r->model_time / 1000.0, "us");
        gp__advise_evidence(f, "share_of_gpu_time",
                            100.0 * (double)r->model_time / (double)ops->gpu_time, "%");
        gp__advise_evidence(f, "calls", (double)r->calls, "count");
        f->gain_ns = (gp_ns)((double)r->model_time * (1 - r->roof_pct / 100));
        f->type = GP_SUG_ALGORITHM;
        double share = (double)f->gain_ns / (double)ops->gpu_time;
        f->priority = share >= 0.30 ? GP_PRIO_HIGH : share >= 0.10 ? GP_PRIO_MEDIUM : GP_PRIO_LOW;
        f->suggestion = suggestion(r);
    }
    gp_ops_free(own);
    return GP_OK;
}
