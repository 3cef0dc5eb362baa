/* The pattern rules with an estimated gain (docs/analyses.md, "Findings: patterns"), read from
 * one rank's trace: unfused attention (matmul -> softmax -> matmul on the same shapes, no fused
 * attention op), fp32 GEMMs on a tensor-core GPU, synchronisations inside the step, and the op
 * furthest below its roofline (advise_ops.c). Many tiny kernels and pageable copies are the
 * small_kernels and copy_heavy rules of advise.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze_internal.h"
#include "analyze/ops_internal.h"
#include "gpuprof/ops.h"

#define MAX_DIMS 8
#define ATTN_GAP 3    /* ops allowed between matmul, softmax and matmul (scale, mask, dropout) */
#define FUSED_EFF 0.5 /* a fused attention kernel's assumed share of the dtype's peak */
#define FP32_MIN 0.01 /* of the GPU time: fp32 GEMMs below this are not worth a finding */

gp_status gp__findings_ops(const gp_trace *t, gp_ops **out)
{
    *out = NULL;
    if (!t->n_op_shapes)
        return GP_OK;
    gp_ops_opts o;
    gp_ops_opts_init(&o);
    o.by = GP_OPS_BY_SHAPE;
    return gp__ops_compute_kept(&t, 1, &o, out); /* the instances from the same walk */
}

/* The dims of tensor idx of an Input Dims text ("[[8,12,3137,64],[8,12,64,3137],[]]") into out;
 * the number of dims, 0 when absent or not a list of integers. */
static int dims_of(const char *s, int idx, int64_t *out)
{
    if (!s || *s != '[')
        return 0;
    s++;
    for (int k = 0; *s; k++) {
        while (*s == ' ' || *s == ',')
            s++;
        if (*s != '[')
            return 0;
        const char *end = strchr(s, ']');
        if (!end)
            return 0;
        if (k == idx) {
            int n = 0;
            for (const char *p = s + 1; p < end && n < MAX_DIMS;) {
                char *q;
                long long v = strtoll(p, &q, 10);
                if (q == p)
                    return 0;
                out[n++] = v;
                p = q;
                while (p < end && (*p == ',' || *p == ' '))
                    p++;
            }
            return n;
        }
        s = end + 1;
    }
    return 0;
}

/* The modeled op instances of the rank in time order, outermost only (an instance inside the
 * previous kept one, such as aten::bmm under aten::matmul, is its detail): those kept beside its
 * ops by shape (gp__findings_ops: one walk for both tables), ties in time in the order of a table
 * by instance (gp__ops_rows_by_time). *out points into by_shape's instances; the caller frees it.
 */
static gp_status instances(const gp_ops *by_shape, const gp_ops_row ***out, size_t *n)
{
    size_t k = 0;
    const gp_ops_row *kept = gp__ops_instances(by_shape, &k);
    const gp_ops_row **v = malloc((k ? k : 1) * sizeof *v);
    if (!v || (k && gp__ops_rows_by_time(kept, k, by_shape->sort, v) != GP_OK)) {
        free(v);
        return GP_ENOMEM;
    }
    size_t m = 0;
    gp_ns open_end = INT64_MIN;
    for (size_t i = 0; i < k; i++) {
        if (v[i]->ts < open_end)
            continue;
        open_end = v[i]->ts + v[i]->cpu;
        v[m++] = v[i];
    }
    *out = v;
    *n = m;
    return GP_OK;
}

/* An unfused attention at v[i]: matmul (scores), softmax, matmul (values), each within ATTN_GAP
 * ops of the previous one; the softmax's last dim is the first matmul's output's last dim and
 * the second matmul's reduction dim. *end: the index of the second matmul. */
static bool attention_at(const gp_ops_row *const *v, size_t n, size_t i, size_t *end)
{
    if (v[i]->category != GP_OPCAT_GEMM)
        return false;
    int64_t b[MAX_DIMS], s[MAX_DIMS], c[MAX_DIMS];
    int nb = dims_of(v[i]->shapes, 1, b);
    if (nb < 3) /* a batched product: a linear layer is no attention */
        return false;
    for (size_t j = i + 1; j < n && j <= i + 1 + ATTN_GAP; j++) {
        if (v[j]->category != GP_OPCAT_SOFTMAX)
            continue;
        int ns = dims_of(v[j]->shapes, 0, s);
        if (ns < 2 || s[ns - 1] != b[nb - 1])
            return false;
        for (size_t k = j + 1; k < n && k <= j + 1 + ATTN_GAP; k++) {
            if (v[k]->category != GP_OPCAT_GEMM)
                continue;
            int nc = dims_of(v[k]->shapes, 0, c);
            if (nc < 3 || c[nc - 1] != s[ns - 1])
                return false;
            *end = k;
            return true;
        }
        return false;
    }
    return false;
}

typedef struct attn_shape {
    const char *shapes; /* the first product's Input Dims */
    uint64_t calls;
    gp_ns time;
} attn_shape;

typedef struct attn_acc {
    const gp_ops_row *first; /* the first product of the first attention */
    uint64_t calls;
    gp_ns time, gemm_time;
    double flops;
    int64_t score_bytes; /* the materialised score matrix of one call */
    attn_shape shape[2]; /* the two shapes holding the most time (space and time attention) */
    size_t n_shape;
} attn_acc;

/* Counts one attention of shapes s and time t toward its shape (the first two seen). */
static void add_shape(attn_acc *acc, const char *s, gp_ns t)
{
    s = s ? s : "";
    for (size_t k = 0; k < acc->n_shape; k++)
        if (strcmp(acc->shape[k].shapes, s) == 0) {
            acc->shape[k].calls++;
            acc->shape[k].time = gp__sat_add(acc->shape[k].time, t);
            return;
        }
    if (acc->n_shape < GP_ARRAY_LEN(acc->shape))
        acc->shape[acc->n_shape++] = (attn_shape){s, 1, t};
}

/* Whether the ops by shape hold a softmax and a batched product (a second input of 3 dims or
 * more): without both there is no attention to find, and the instances (about 3 times the cost
 * of the ops by shape: 27 ms on the 75 K-event ResNet-50 trace) are not computed. */
static bool may_hold_attention(const gp_ops *by_shape)
{
    bool softmax = false, batched = false;
    int64_t d[MAX_DIMS];
    for (size_t i = 0; by_shape && i < by_shape->n_rows; i++) {
        const gp_ops_row *o = &by_shape->rows[i];
        softmax |= o->category == GP_OPCAT_SOFTMAX;
        batched |= o->category == GP_OPCAT_GEMM && dims_of(o->shapes, 1, d) >= 3;
    }
    return softmax && batched;
}

static gp_status unfused_attention(gp_analysis *a, size_t *cap, const gp_rank_analysis *r,
                                   const gp_ops *by_shape)
{
    if (!may_hold_attention(by_shape))
        return GP_OK;
    const gp_ops_row **v = NULL;
    size_t n = 0;
    gp_status st = instances(by_shape, &v, &n);
    attn_acc acc = {0};
    for (size_t i = 0; st == GP_OK && i < n; i++) {
        size_t end;
        if (!attention_at(v, n, i, &end))
            continue;
        const gp_ops_row *sm = NULL;
        for (size_t j = i + 1; j < end; j++)
            if (v[j]->category == GP_OPCAT_SOFTMAX)
                sm = v[j];
        if (!acc.first)
            acc.first = v[i];
        int64_t d[MAX_DIMS];
        int nd = sm ? dims_of(sm->shapes, 0, d) : 0;
        int64_t elems = nd ? 1 : 0;
        for (int k = 0; k < nd; k++)
            elems *= d[k];
        int esz = v[i]->dtype == GP_DT_FP32 ? 4 : v[i]->dtype == GP_DT_FP64 ? 8 : 2;
        acc.score_bytes = GP_MAX(acc.score_bytes, elems * esz);
        acc.calls++;
        gp_ns one = 0;
        for (size_t j = i; j <= end; j++)
            one = gp__sat_add(one, v[j]->gpu);
        acc.time = gp__sat_add(acc.time, one);
        add_shape(&acc, v[i]->shapes, one);
        acc.gemm_time = gp__sat_add(acc.gemm_time, gp__sat_add(v[i]->gpu, v[end]->gpu));
        acc.flops += v[i]->flops + v[end]->flops;
        i = end;
    }
    if (st == GP_OK && acc.calls && acc.time > 0) {
        /* fused: the two products at FUSED_EFF of the dtype's peak; without a peak, the
         * products' own time (what fusing saves is the softmax and the score round trips) */
        double peak = by_shape ? by_shape->peak.tflops[acc.first->dtype] * 1e12 : 0;
        gp_ns fused =
            peak > 0 ? gp__ns_of_double(acc.flops / (FUSED_EFF * peak) * 1e9) : acc.gemm_time;
        fused = GP_MIN(fused, acc.time);
        gp_finding *f = gp__advise_add(a, cap, "unfused_attention", r->rank);
        if (!f) {
            st = GP_ENOMEM;
        } else {
            gp__advise_object(f, GP_OBJ_OP, acc.first->key, acc.time, acc.calls);
            if (acc.n_shape == 2 && acc.shape[1].time > acc.shape[0].time) {
                attn_shape x = acc.shape[0];
                acc.shape[0] = acc.shape[1];
                acc.shape[1] = x;
            }
            for (size_t k = 0; k < acc.n_shape; k++) /* the largest first: the title's */
                gp__advise_object(f, GP_OBJ_SHAPES, acc.shape[k].shapes, acc.shape[k].time,
                                  acc.shape[k].calls);
            gp__advise_object(f, GP_OBJ_DTYPE, gp_op_dtype_name(acc.first->dtype), 0, 0);
            if (acc.first->line)
                gp__advise_object(f, GP_OBJ_LINE, acc.first->line, 0, 0);
            if (acc.first->module)
                gp__advise_object(f, GP_OBJ_MODULE, acc.first->module, 0, 0);
            gp__advise_metric(f, "attention_time", (double)acc.time, GP_FU_NS);
            gp__advise_metric(f, "calls", (double)acc.calls, GP_FU_COUNT);
            gp_ns gpu = r->kernels_time > 0 ? r->kernels_time : acc.time;
            gp__advise_metric(f, "share_of_gpu_work_sum", (double)acc.time / (double)gpu,
                              GP_FU_RATIO);
            gp__advise_metric(f, "fused_estimate", (double)fused, GP_FU_NS);
            gp__advise_metric(f, "score_bytes", (double)acc.score_bytes, GP_FU_BYTES);
            f->gain_ns = acc.time - fused;
            f->type = GP_SUG_ALGORITHM;
            f->priority = gp__advise_priority(f->gain_ns, gpu);
        }
    }
    free(v);
    return st;
}

/* fp32 GEMMs and convolutions on a GPU whose TF32 tensor cores are at least twice its fp32 rate:
 * the compute-bound ones would run at the TF32 rate (torch.backends.cuda.matmul.allow_tf32,
 * torch.set_float32_matmul_precision("high")) or faster in bf16. */
static gp_status fp32_gemm(gp_analysis *a, size_t *cap, const gp_rank_analysis *r,
                           const gp_ops *ops)
{
    double f32 = ops->peak.tflops[GP_DT_FP32], tf32 = ops->peak.tflops[GP_DT_TF32];
    if (f32 <= 0 || tf32 < 2 * f32 || ops->gpu_time <= 0)
        return GP_OK;
    gp_ns time = 0, gain = 0;
    uint64_t rows = 0;
    const gp_ops_row *top = NULL;
    for (size_t i = 0; i < ops->n_rows; i++) {
        const gp_ops_row *o = &ops->rows[i];
        bool gemm = o->category == GP_OPCAT_GEMM || o->category == GP_OPCAT_CONV_FWD ||
                    o->category == GP_OPCAT_CONV_BWD;
        if (!o->modeled || !gemm || o->dtype != GP_DT_FP32)
            continue;
        rows++;
        time = gp__sat_add(time, o->model_time);
        if (o->bound == GP_BOUND_COMPUTE)
            gain = gp__sat_add(gain, (gp_ns)((double)o->model_time * (1 - f32 / tf32)));
        if (!top || o->model_time > top->model_time)
            top = o;
    }
    if (!top || gain <= 0 || (double)time < FP32_MIN * (double)ops->gpu_time)
        return GP_OK;
    gp_finding *f = gp__advise_add(a, cap, "fp32_gemm", r->rank);
    if (!f)
        return GP_ENOMEM;
    gp__advise_object(f, GP_OBJ_OP, top->key, top->model_time, top->calls);
    gp__advise_object(f, GP_OBJ_SHAPES, top->shapes, 0, 0);
    gp__advise_object(f, GP_OBJ_DTYPE, "fp32", 0, 0);
    gp__advise_metric(f, "fp32_gemm_time", (double)time, GP_FU_NS);
    gp__advise_metric(f, "share_of_gpu_work_sum", (double)time / (double)ops->gpu_time,
                      GP_FU_RATIO);
    gp__advise_metric(f, "shapes", (double)rows, GP_FU_COUNT);
    gp__advise_metric(f, "peak_fp32", f32 * 1e12, GP_FU_FLOP_PER_S);
    gp__advise_metric(f, "peak_tf32", tf32 * 1e12, GP_FU_FLOP_PER_S);
    f->gain_ns = gain;
    f->type = GP_SUG_ALGORITHM;
    f->priority = gp__advise_priority(gain, ops->gpu_time);
    return GP_OK;
}

gp_status gp__findings_patterns(gp_analysis *a, size_t *cap, const gp_rank_analysis *r,
                                const gp_trace *t, const gp_ops *ops, const gp__sync_sites *syncs)
{
    gp_status st = syncs ? gp__findings_syncs(a, cap, r, syncs) : GP_OK; /* findings_syncs.c */
    if (st == GP_OK && t->n_op_shapes)
        st = unfused_attention(a, cap, r, ops);
    if (st == GP_OK && ops)
        st = fp32_gemm(a, cap, r, ops);
    if (st == GP_OK && ops)
        st = gp__advise_ops(a, cap, ops, r->rank);
    return st;
}
