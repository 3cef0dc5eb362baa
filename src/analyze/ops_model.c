/* The performance model of `gpuprof ops`: FLOPs and bytes moved of one operator instance from its
 * record_shapes args. The formulas are those of docs/ops.md ("Performance model"), where each says
 * where it agrees with TraceLens and where it does not. Shapes are JSON texts kept verbatim by the
 * reader (gp_op_shapes); this file parses the few forms they take (nested integer lists, string
 * lists) and refuses anything else: a missing or odd shape gives no model, never a guess. */
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "analyze/ops_internal.h"

#define MAX_ARGS 24
#define MAX_DIMS 8

/* One argument as record_shapes wrote it. */
typedef struct arg {
    int nd; /* dimensions; -1: not a plain tensor (a list of tensors, a scalar) */
    int64_t d[MAX_DIMS];
    char type[32]; /* Input type, truncated */
    char conc[48]; /* Concrete Inputs text, truncated ("" when absent) */
} arg;

typedef struct args {
    arg a[MAX_ARGS];
    int n;
} args;

/* ---- parsing ------------------------------------------------------------------------------ */

static const char *ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

/* Skips one nested list at p ('['); NULL when unterminated. */
static const char *skip_list(const char *p)
{
    int depth = 0;
    for (; *p; p++) {
        if (*p == '[')
            depth++;
        else if (*p == ']' && --depth == 0)
            return p + 1;
        else if (*p == '"') {
            for (p++; *p && *p != '"'; p++)
                if (*p == '\\' && p[1])
                    p++;
            if (!*p)
                return NULL;
        }
    }
    return NULL;
}

/* One element of Input Dims at p: a list of integers (a tensor), or anything else (nd = -1).
 * NULL when malformed. */
static const char *parse_dims_elem(const char *p, arg *a)
{
    p = ws(p);
    a->nd = -1;
    if (*p != '[') { /* null or a number: not a tensor */
        while (*p && *p != ',' && *p != ']')
            p++;
        return *p ? p : NULL;
    }
    const char *q = ws(p + 1);
    if (*q == '[') /* a list of tensors */
        return skip_list(p);
    a->nd = 0;
    while (*q != ']') {
        char *e;
        long long v = strtoll(q, &e, 10);
        if (e == q || v < 0 || a->nd == MAX_DIMS) {
            a->nd = -1;
            return skip_list(p);
        }
        a->d[a->nd++] = v;
        q = ws(e);
        if (*q == ',')
            q = ws(q + 1);
        else if (*q != ']')
            return NULL;
    }
    return q + 1;
}

/* Input Dims into a->a[i].nd / d. False when malformed. */
static bool parse_dims(const char *s, args *a)
{
    const char *p = ws(s);
    if (*p != '[')
        return false;
    p = ws(p + 1);
    a->n = 0;
    while (*p != ']') {
        if (a->n == MAX_ARGS)
            return true; /* the first MAX_ARGS are enough for every formula */
        p = parse_dims_elem(p, &a->a[a->n++]);
        if (!p)
            return false;
        p = ws(p);
        if (*p == ',')
            p = ws(p + 1);
        else if (*p != ']')
            return false;
    }
    return true;
}

/* A list of JSON strings into the field at `off` of each arg (truncated to cap). Entries beyond
 * a->n are ignored. False when malformed. */
static bool parse_strings(const char *s, args *a, size_t off, size_t cap)
{
    const char *p = ws(s);
    if (*p != '[')
        return false;
    p = ws(p + 1);
    for (int i = 0; *p != ']'; i++) {
        if (*p != '"')
            return false;
        char *out = i < a->n ? (char *)&a->a[i] + off : NULL;
        size_t k = 0;
        for (p++; *p && *p != '"'; p++) {
            if (*p == '\\' && p[1])
                p++;
            if (out && k + 1 < cap)
                out[k++] = *p;
        }
        if (!*p)
            return false;
        if (out)
            out[k] = '\0';
        p = ws(p + 1);
        if (*p == ',')
            p = ws(p + 1);
        else if (*p != ']')
            return false;
    }
    return true;
}

/* Up to n integers of a Concrete Inputs text "[16, 16]" or "16" into v. Returns how many. */
static int conc_ints(const char *s, int64_t *v, int n)
{
    int k = 0;
    const char *p = ws(s);
    if (*p == '[')
        p++;
    while (k < n) {
        p = ws(p);
        char *e;
        long long x = strtoll(p, &e, 10);
        if (e == p)
            break;
        v[k++] = x;
        p = ws(e);
        if (*p != ',')
            break;
        p++;
    }
    return k;
}

/* ---- dtypes --------------------------------------------------------------------------------- */

typedef struct dtype_ent {
    const char *type; /* Input type as torch writes it */
    gp_op_dtype dt;
    int size; /* bytes per element */
} dtype_ent;

static const dtype_ent dtypes[] = {
    {"c10::BFloat16", GP_DT_BF16, 2},
    {"c10::Half", GP_DT_FP16, 2},
    {"float", GP_DT_FP32, 4},
    {"double", GP_DT_FP64, 8},
    {"c10::Float8_e4m3fn", GP_DT_FP8, 1},
    {"c10::Float8_e5m2", GP_DT_FP8, 1},
    {"c10::Float8_e4m3fnuz", GP_DT_FP8, 1},
    {"c10::Float8_e5m2fnuz", GP_DT_FP8, 1},
    {"signed char", GP_DT_INT8, 1},
    {"unsigned char", GP_DT_OTHER, 1},
    {"bool", GP_DT_OTHER, 1},
    {"short int", GP_DT_OTHER, 2},
    {"int", GP_DT_OTHER, 4},
    {"long int", GP_DT_OTHER, 8},
    {"c10::complex<float>", GP_DT_OTHER, 8},
    {"c10::complex<double>", GP_DT_OTHER, 16},
};

/* The dtype entry of an Input type, or NULL (Scalar, ScalarList, "", TensorList, ...). */
static const dtype_ent *dtype_of(const char *type)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++)
        if (strcmp(type, dtypes[i].type) == 0)
            return &dtypes[i];
    return NULL;
}

/* True when argument i is a tensor with dims and a known element type. */
static bool is_tensor(const args *a, int i)
{
    return i < a->n && a->a[i].nd >= 1 && dtype_of(a->a[i].type);
}

static double numel(const arg *x)
{
    double n = 1;
    for (int i = 0; i < x->nd; i++)
        n *= (double)x->d[i];
    return n;
}

static int esize(const arg *x)
{
    const dtype_ent *e = dtype_of(x->type);
    return e ? e->size : 0;
}

static double tbytes(const arg *x)
{
    return numel(x) * esize(x);
}

/* ---- categories ----------------------------------------------------------------------------- */

typedef struct op_ent {
    const char *name;
    uint8_t cat; /* gp_op_category */
} op_ent;

/* Every modeled operator. Sorted by name (binary search). */
static const op_ent op_table[] = {
    {"aten::_efficient_attention_backward", GP_OPCAT_ATTN_BWD},
    {"aten::_efficient_attention_forward", GP_OPCAT_ATTN_FWD},
    {"aten::_flash_attention_backward", GP_OPCAT_ATTN_BWD},
    {"aten::_flash_attention_forward", GP_OPCAT_ATTN_FWD},
    {"aten::_log_softmax", GP_OPCAT_SOFTMAX},
    {"aten::_log_softmax_backward_data", GP_OPCAT_SOFTMAX},
    {"aten::_scaled_dot_product_cudnn_attention", GP_OPCAT_ATTN_FWD},
    {"aten::_scaled_dot_product_cudnn_attention_backward", GP_OPCAT_ATTN_BWD},
    {"aten::_scaled_dot_product_efficient_attention", GP_OPCAT_ATTN_FWD},
    {"aten::_scaled_dot_product_efficient_attention_backward", GP_OPCAT_ATTN_BWD},
    {"aten::_scaled_dot_product_flash_attention", GP_OPCAT_ATTN_FWD},
    {"aten::_scaled_dot_product_flash_attention_backward", GP_OPCAT_ATTN_BWD},
    {"aten::_scaled_mm", GP_OPCAT_GEMM},
    {"aten::_softmax", GP_OPCAT_SOFTMAX},
    {"aten::_softmax_backward_data", GP_OPCAT_SOFTMAX},
    {"aten::abs", GP_OPCAT_ELEMENTWISE},
    {"aten::add", GP_OPCAT_ELEMENTWISE},
    {"aten::add_", GP_OPCAT_ELEMENTWISE},
    {"aten::addcdiv_", GP_OPCAT_ELEMENTWISE},
    {"aten::addcmul_", GP_OPCAT_ELEMENTWISE},
    {"aten::addmm", GP_OPCAT_GEMM},
    {"aten::amax", GP_OPCAT_REDUCE},
    {"aten::baddbmm", GP_OPCAT_GEMM},
    {"aten::batch_norm", GP_OPCAT_NORM_FWD},
    {"aten::bmm", GP_OPCAT_GEMM},
    {"aten::clamp", GP_OPCAT_ELEMENTWISE},
    {"aten::clamp_min", GP_OPCAT_ELEMENTWISE},
    {"aten::clamp_min_", GP_OPCAT_ELEMENTWISE},
    {"aten::conv1d", GP_OPCAT_CONV_FWD},
    {"aten::conv2d", GP_OPCAT_CONV_FWD},
    {"aten::conv3d", GP_OPCAT_CONV_FWD},
    {"aten::convolution", GP_OPCAT_CONV_FWD},
    {"aten::convolution_backward", GP_OPCAT_CONV_BWD},
    {"aten::copy_", GP_OPCAT_ELEMENTWISE},
    {"aten::cos", GP_OPCAT_ELEMENTWISE},
    {"aten::cudnn_batch_norm", GP_OPCAT_NORM_FWD},
    {"aten::cudnn_batch_norm_backward", GP_OPCAT_NORM_BWD},
    {"aten::cumsum", GP_OPCAT_REDUCE},
    {"aten::div", GP_OPCAT_ELEMENTWISE},
    {"aten::div_", GP_OPCAT_ELEMENTWISE},
    {"aten::exp", GP_OPCAT_ELEMENTWISE},
    {"aten::gelu", GP_OPCAT_ELEMENTWISE},
    {"aten::gelu_backward", GP_OPCAT_ELEMENTWISE},
    {"aten::group_norm", GP_OPCAT_NORM_FWD},
    {"aten::layer_norm", GP_OPCAT_NORM_FWD},
    {"aten::linear", GP_OPCAT_GEMM},
    {"aten::log", GP_OPCAT_ELEMENTWISE},
    {"aten::log_softmax", GP_OPCAT_SOFTMAX},
    {"aten::matmul", GP_OPCAT_GEMM},
    {"aten::max", GP_OPCAT_REDUCE},
    {"aten::mean", GP_OPCAT_REDUCE},
    {"aten::mm", GP_OPCAT_GEMM},
    {"aten::mul", GP_OPCAT_ELEMENTWISE},
    {"aten::mul_", GP_OPCAT_ELEMENTWISE},
    {"aten::native_batch_norm", GP_OPCAT_NORM_FWD},
    {"aten::native_batch_norm_backward", GP_OPCAT_NORM_BWD},
    {"aten::native_group_norm", GP_OPCAT_NORM_FWD},
    {"aten::native_group_norm_backward", GP_OPCAT_NORM_BWD},
    {"aten::native_layer_norm", GP_OPCAT_NORM_FWD},
    {"aten::native_layer_norm_backward", GP_OPCAT_NORM_BWD},
    {"aten::neg", GP_OPCAT_ELEMENTWISE},
    {"aten::norm", GP_OPCAT_REDUCE},
    {"aten::pow", GP_OPCAT_ELEMENTWISE},
    {"aten::relu", GP_OPCAT_ELEMENTWISE},
    {"aten::relu_", GP_OPCAT_ELEMENTWISE},
    {"aten::rms_norm", GP_OPCAT_NORM_FWD},
    {"aten::rsqrt", GP_OPCAT_ELEMENTWISE},
    {"aten::rsub", GP_OPCAT_ELEMENTWISE},
    {"aten::scaled_dot_product_attention", GP_OPCAT_ATTN_FWD},
    {"aten::sigmoid", GP_OPCAT_ELEMENTWISE},
    {"aten::sigmoid_backward", GP_OPCAT_ELEMENTWISE},
    {"aten::silu", GP_OPCAT_ELEMENTWISE},
    {"aten::silu_", GP_OPCAT_ELEMENTWISE},
    {"aten::silu_backward", GP_OPCAT_ELEMENTWISE},
    {"aten::sin", GP_OPCAT_ELEMENTWISE},
    {"aten::softmax", GP_OPCAT_SOFTMAX},
    {"aten::sqrt", GP_OPCAT_ELEMENTWISE},
    {"aten::sub", GP_OPCAT_ELEMENTWISE},
    {"aten::sub_", GP_OPCAT_ELEMENTWISE},
    {"aten::sum", GP_OPCAT_REDUCE},
    {"aten::tanh", GP_OPCAT_ELEMENTWISE},
    {"aten::tanh_backward", GP_OPCAT_ELEMENTWISE},
    {"aten::threshold_backward", GP_OPCAT_ELEMENTWISE},
    {"aten::var", GP_OPCAT_REDUCE},
    {"aten::where", GP_OPCAT_ELEMENTWISE},
    /* framework ops modelled by exact name, as TraceLens does (docs/ops.md, "Custom ops"): vLLM's
     * ROCm GEMM wrapper, x[M, K] @ W[N, K]^T (+ bias[N]), the form of aten::linear */
    {"vllm::rocm_unquantized_gemm", GP_OPCAT_GEMM},
    {"vllm::rocm_unquantized_gemm_impl", GP_OPCAT_GEMM},
};

static int cmp_op_ent(const void *k, const void *e)
{
    return strcmp((const char *)k, ((const op_ent *)e)->name);
}

gp_op_category gp__op_category_of(const char *name)
{
    const op_ent *e =
        bsearch(name, op_table, sizeof op_table / sizeof *op_table, sizeof *op_table, cmp_op_ent);
    return e ? (gp_op_category)e->cat : GP_OPCAT_NONE;
}

/* ---- formulas ------------------------------------------------------------------------------- */

/* A (b x m x k) by (b x k x n) product; F = 2bmnk, bytes of A, B and the output. */
static bool gemm(double b, double m, double k, double n, int es, gp__op_model *o)
{
    if (b <= 0 || m <= 0 || k <= 0 || n <= 0)
        return false;
    o->flops = 2 * b * m * n * k;
    o->bytes = b * (m * k + k * n + m * n) * es;
    return true;
}

/* GEMM family; a0 is the first matrix operand's index. */
static bool model_gemm(const char *op, const args *a, gp__op_model *o)
{
    if (strcmp(op, "aten::addmm") == 0 || strcmp(op, "aten::baddbmm") == 0) {
        /* bias + A @ B: the bias adds one FLOP per output element and its own bytes. */
        bool batched = op[6] == 'b';
        int nd = batched ? 3 : 2;
        if (!is_tensor(a, 1) || !is_tensor(a, 2) || a->a[1].nd != nd || a->a[2].nd != nd)
            return false;
        const int64_t *x = a->a[1].d, *y = a->a[2].d;
        double b = batched ? (double)x[0] : 1;
        if (x[nd - 1] != y[nd - 2] || (batched && x[0] != y[0]) ||
            !gemm(b, (double)x[nd - 2], (double)x[nd - 1], (double)y[nd - 1], esize(&a->a[1]), o))
            return false;
        o->flops += b * (double)x[nd - 2] * (double)y[nd - 1];
        o->bytes += is_tensor(a, 0) ? tbytes(&a->a[0]) : 0;
        return true;
    }
    if (!is_tensor(a, 0) || !is_tensor(a, 1))
        return false;
    const arg *x = &a->a[0], *y = &a->a[1];
    int es = esize(x);
    if (strcmp(op, "aten::mm") == 0 || strcmp(op, "aten::_scaled_mm") == 0) {
        if (x->nd != 2 || y->nd != 2 || x->d[1] != y->d[0])
            return false;
        /* _scaled_mm: 1-byte operands, a 2-byte (bf16) output as its callers ask. */
        bool scaled = op[6] == '_';
        if (!gemm(1, (double)x->d[0], (double)x->d[1], (double)y->d[1], es, o))
            return false;
        if (scaled)
            o->bytes += (double)x->d[0] * (double)y->d[1] * (2 - es);
        return true;
    }
    if (strcmp(op, "aten::bmm") == 0)
        return x->nd == 3 && y->nd == 3 && x->d[0] == y->d[0] && x->d[2] == y->d[1] &&
               gemm((double)x->d[0], (double)x->d[1], (double)x->d[2], (double)y->d[2], es, o);
    if (strcmp(op, "aten::linear") == 0 || strncmp(op, "vllm::rocm_unquantized_gemm", 27) == 0) {
        /* x[..., K] @ W[N, K]^T (+ bias[N]) */
        if (y->nd != 2 || x->d[x->nd - 1] != y->d[1])
            return false;
        double m = numel(x) / (double)x->d[x->nd - 1];
        if (!gemm(1, m, (double)y->d[1], (double)y->d[0], es, o))
            return false;
        if (is_tensor(a, 2)) {
            o->flops += m * (double)y->d[0];
            o->bytes += tbytes(&a->a[2]);
        }
        return true;
    }
    /* aten::matmul: batch dims of the operand with more than two dims; 1-D operands are vectors. */
    double k = (double)x->d[x->nd - 1];
    double yk = (double)(y->nd == 1 ? y->d[0] : y->d[y->nd - 2]);
    double n = y->nd == 1 ? 1 : (double)y->d[y->nd - 1];
    if (k != yk)
        return false;
    double b = 1, m;
    if (y->nd <= 2) {
        m = numel(x) / k;
    } else {
        for (int i = 0; i < y->nd - 2; i++)
            b *= (double)y->d[i];
        m = x->nd >= 2 ? (double)x->d[x->nd - 2] : 1;
    }
    return gemm(b, m, k, n, es, o);
}

/* Output size of one spatial dimension: (in + 2p - d(k - 1) - 1) / s + 1, or -1 (unknown) for a
 * stride or dilation below 1, a negative padding, or a size beyond int64 (the args of a hostile
 * trace are any int64). */
static int64_t conv_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d)
{
    int64_t pp, span, num, out;
    if (s < 1 || p < 0 || d < 1 || __builtin_mul_overflow(p, 2, &pp) ||
        __builtin_mul_overflow(d, k - 1, &span) || __builtin_add_overflow(in, pp, &num) ||
        __builtin_sub_overflow(num, span, &num) || __builtin_sub_overflow(num, 1, &num) ||
        __builtin_add_overflow(num / s, 1, &out))
        return -1;
    return out;
}

/* stride, padding, dilation (Concrete Inputs at si, si+1, si+2) for nsp spatial dims. */
static bool conv_params(const args *a, int si, int nsp, int64_t st[3], int64_t pd[3], int64_t dl[3])
{
    if (si + 2 >= a->n)
        return false;
    int ns = conc_ints(a->a[si].conc, st, 3), np = conc_ints(a->a[si + 1].conc, pd, 3),
        nl = conc_ints(a->a[si + 2].conc, dl, 3);
    if (ns < 1 || np < 1 || nl < 1)
        return false;               /* no Concrete Inputs: the output size is unknown */
    for (int i = 0; i < nsp; i++) { /* a single value applies to every dimension */
        st[i] = st[i < ns ? i : 0];
        pd[i] = pd[i < np ? i : 0];
        dl[i] = dl[i < nl ? i : 0];
    }
    return true;
}

/* convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
 * and conv1d/2d/3d(input, weight, bias, stride, padding, dilation, groups). */
static bool model_conv_fwd(const char *op, const args *a, gp__op_model *o)
{
    if (!is_tensor(a, 0) || !is_tensor(a, 1))
        return false;
    const arg *x = &a->a[0], *w = &a->a[1];
    int nsp = x->nd - 2;
    if (nsp < 1 || nsp > 3 || w->nd != x->nd)
        return false;
    bool full = strcmp(op, "aten::convolution") == 0;
    if (full && a->n > 6 && strcmp(a->a[6].conc, "False") != 0)
        return false; /* transposed: not modeled */
    int64_t st[3], pd[3], dl[3];
    if (!conv_params(a, 3, nsp, st, pd, dl))
        return false;
    double out_sp = 1, k = 1;
    for (int i = 0; i < nsp; i++) {
        int64_t os = conv_out(x->d[2 + i], w->d[2 + i], st[i], pd[i], dl[i]);
        if (os <= 0)
            return false;
        out_sp *= (double)os;
        k *= (double)w->d[2 + i];
    }
    double n = (double)x->d[0], cout = (double)w->d[0], cin_g = (double)w->d[1];
    o->flops = 2 * n * cout * out_sp * cin_g * k;
    o->bytes = (numel(x) + numel(w) + n * cout * out_sp) * esize(x); /* bias left out (TraceLens) */
    return true;
}

/* convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
 * transposed, output_padding, groups, output_mask): the input and weight gradients each cost one
 * forward pass. */
static bool model_conv_bwd(const args *a, gp__op_model *o)
{
    if (!is_tensor(a, 0) || !is_tensor(a, 1) || !is_tensor(a, 2))
        return false;
    const arg *gy = &a->a[0], *x = &a->a[1], *w = &a->a[2];
    if (gy->nd != x->nd || w->nd != x->nd || x->nd < 3)
        return false;
    if (a->n > 7 && strcmp(a->a[7].conc, "False") != 0)
        return false;
    bool want_in = true, want_w = true;
    if (a->n > 10 && a->a[10].conc[0] == '[') { /* "[True, True, False]" */
        want_in = strncmp(a->a[10].conc + 1, "True", 4) == 0;
        const char *c = strchr(a->a[10].conc, ',');
        want_w = c && strncmp(c + 1 + (c[1] == ' '), "True", 4) == 0;
    }
    double out_sp = 1, k = 1;
    for (int i = 2; i < x->nd; i++) {
        out_sp *= (double)gy->d[i];
        k *= (double)w->d[i];
    }
    double fwd = 2 * (double)x->d[0] * (double)w->d[0] * out_sp * (double)w->d[1] * k;
    o->flops = fwd * ((want_in ? 1 : 0) + (want_w ? 1 : 0));
    o->bytes =
        (numel(gy) + numel(x) + numel(w) + (want_in ? numel(x) : 0) + (want_w ? numel(w) : 0)) *
        esize(x);
    return true;
}

/* Where an attention op's is_causal (or custom_mask_type, 1 = causal) is in its arguments. */
static const struct {
    const char *op;
    int at;
} causal_arg[] = {
    {"aten::scaled_dot_product_attention", 5},
    {"aten::_scaled_dot_product_flash_attention", 4},
    {"aten::_scaled_dot_product_efficient_attention", 6},
    {"aten::_scaled_dot_product_cudnn_attention", 6},
    {"aten::_flash_attention_forward", 8},
    {"aten::_efficient_attention_forward", 9},
    {"aten::_scaled_dot_product_flash_attention_backward", 11},
    {"aten::_scaled_dot_product_efficient_attention_backward", 11},
    {"aten::_scaled_dot_product_cudnn_attention_backward", 11},
    {"aten::_flash_attention_backward", 11},
    {"aten::_efficient_attention_backward", 14},
};

/* True when the op's Concrete Inputs say the attention is causal. */
static bool is_causal(const char *op, const args *a)
{
    for (size_t i = 0; i < sizeof causal_arg / sizeof *causal_arg; i++)
        if (strcmp(op, causal_arg[i].op) == 0) {
            int at = causal_arg[i].at;
            return at < a->n && (strcmp(a->a[at].conc, "True") == 0 ||
                                 (strstr(op, "_efficient_attention_") && op[6] == '_' &&
                                  strcmp(a->a[at].conc, "1") == 0));
        }
    return false;
}

/* Attention: q, k, v at 0, 1, 2 (backward: grad_out at 0, q, k, v at 1, 2, 3). heads_first:
 * [B, H, N, d] (scaled_dot_product_*), else [B, N, H, d] (_flash_ / _efficient_attention_*).
 * F = 2 B H Nq Nk (d + dv) forward, halved when causal (the masked half of the scores is skipped),
 * 2.5 times that backward (five products instead of two). */
static bool model_attn(const char *op, bool bwd, const args *a, gp__op_model *o)
{
    int q0 = bwd ? 1 : 0;
    for (int i = q0; i < q0 + 3; i++)
        if (!is_tensor(a, i) || a->a[i].nd != 4)
            return false;
    const arg *q = &a->a[q0], *k = &a->a[q0 + 1], *v = &a->a[q0 + 2];
    bool heads_first = strstr(op, "scaled_dot_product") != NULL;
    int hi = heads_first ? 1 : 2, ni = heads_first ? 2 : 1;
    double b = (double)q->d[0], h = (double)q->d[hi], nq = (double)q->d[ni], nk = (double)k->d[ni],
           d = (double)q->d[3], dv = (double)v->d[3];
    if (k->d[3] != q->d[3] || v->d[ni] != k->d[ni])
        return false;
    double fwd = 2 * b * h * nq * nk * (d + dv) * (is_causal(op, a) ? 0.5 : 1);
    double out = b * h * nq * dv;
    int es = esize(q);
    if (!bwd) {
        o->flops = fwd;
        o->bytes = (numel(q) + numel(k) + numel(v) + out) * es;
    } else { /* read dO, Q, K, V, O; write dQ, dK, dV */
        o->flops = 2.5 * fwd;
        o->bytes = (2 * out + 2 * (numel(q) + numel(k) + numel(v))) * es;
    }
    return true;
}

/* The largest tensor argument (the activation of a norm or softmax), or -1. */
static int largest_tensor(const args *a)
{
    int best = -1;
    for (int i = 0; i < a->n; i++)
        if (is_tensor(a, i) && (best < 0 || numel(&a->a[i]) > numel(&a->a[best])))
            best = i;
    return best;
}

/* Norms and softmax: flops_per_elem FLOPs per element of the activation; bytes: every tensor
 * argument read plus one activation-sized output. */
static bool model_rowwise(const args *a, double flops_per_elem, gp__op_model *o)
{
    int x = largest_tensor(a);
    if (x < 0)
        return false;
    double in = 0;
    for (int i = 0; i < a->n; i++)
        if (is_tensor(a, i))
            in += tbytes(&a->a[i]);
    o->flops = flops_per_elem * numel(&a->a[x]);
    o->bytes = in + tbytes(&a->a[x]);
    return true;
}

/* Elementwise: one FLOP per output element (the broadcast of the tensor arguments); bytes: every
 * tensor argument read, the output written in the first argument's dtype. copy_ (dst, src)
 * writes dst without reading it. */
static bool model_elementwise(const char *op, const args *a, gp__op_model *o)
{
    int first = -1, nd = 0;
    int64_t shape[MAX_DIMS] = {0};
    double in = 0;
    for (int i = 0; i < a->n; i++) {
        if (!is_tensor(a, i))
            continue;
        const arg *x = &a->a[i];
        if (first < 0)
            first = i;
        in += tbytes(x);
        if (x->nd > nd) { /* align to the right, as broadcasting does */
            int shift = x->nd - nd;
            memmove(shape + shift, shape, (size_t)nd * sizeof *shape);
            for (int j = 0; j < shift; j++)
                shape[j] = 1;
            nd = x->nd;
        }
        for (int j = 0; j < x->nd; j++) {
            int64_t *s = &shape[nd - x->nd + j];
            if (x->d[j] != 1 && *s != 1 && *s != x->d[j] && *s != 0)
                return false; /* shapes that do not broadcast */
            if (*s == 1 || *s == 0)
                *s = x->d[j];
        }
    }
    if (first < 0)
        return false;
    double out = 1;
    for (int j = 0; j < nd; j++)
        out *= (double)shape[j];
    o->flops = out;
    if (strcmp(op, "aten::copy_") == 0)
        o->bytes = in; /* src read, dst written */
    else
        o->bytes = in + out * esize(&a->a[first]);
    return true;
}

/* Reductions: one FLOP per input element; bytes: the input and a one-element output (cumsum: an
 * input-sized output). */
static bool model_reduce(const char *op, const args *a, gp__op_model *o)
{
    if (!is_tensor(a, 0))
        return false;
    const arg *x = &a->a[0];
    o->flops = numel(x);
    o->bytes = tbytes(x) + (strcmp(op, "aten::cumsum") == 0 ? tbytes(x) : esize(x));
    return true;
}

/* The argument whose dtype the op computes in: the first matrix of addmm / baddbmm, q of an
 * attention backward, the input of a convolution backward, the activation of a norm or softmax,
 * else the first tensor argument. */
static int main_tensor(const char *op, gp_op_category cat, const args *a)
{
    int t = 0;
    if (cat == GP_OPCAT_ATTN_BWD || cat == GP_OPCAT_CONV_BWD || strstr(op, "addmm") ||
        strstr(op, "baddbmm"))
        t = 1;
    else if (cat == GP_OPCAT_NORM_FWD || cat == GP_OPCAT_NORM_BWD || cat == GP_OPCAT_SOFTMAX)
        t = largest_tensor(a);
    else
        for (t = 0; t < a->n && !is_tensor(a, t); t++)
            ;
    return t >= 0 && t < a->n ? t : 0;
}

bool gp__op_model_compute(const char *name, gp_op_category cat, const char *dims, const char *types,
                          const char *concrete, gp__op_model *out)
{
    memset(out, 0, sizeof *out);
    out->over_busy = strncmp(name, "aten::", 6) != 0; /* a name-keyed framework op */
    if (cat == GP_OPCAT_NONE || !dims || !*dims || !types || !*types)
        return false;
    args *a = calloc(1, sizeof *a);
    if (!a)
        return false;
    bool ok = parse_dims(dims, a) &&
              parse_strings(types, a, offsetof(arg, type), sizeof a->a[0].type) &&
              (!concrete || !*concrete ||
               parse_strings(concrete, a, offsetof(arg, conc), sizeof a->a[0].conc));
    if (ok) {
        switch (cat) {
        case GP_OPCAT_GEMM:
            ok = model_gemm(name, a, out);
            break;
        case GP_OPCAT_CONV_FWD:
            ok = model_conv_fwd(name, a, out);
            break;
        case GP_OPCAT_CONV_BWD:
            ok = model_conv_bwd(a, out);
            break;
        case GP_OPCAT_ATTN_FWD:
        case GP_OPCAT_ATTN_BWD:
            ok = model_attn(name, cat == GP_OPCAT_ATTN_BWD, a, out);
            break;
        case GP_OPCAT_NORM_FWD:
            ok = model_rowwise(a, 5, out);
            break;
        case GP_OPCAT_NORM_BWD:
            ok = model_rowwise(a, 10, out);
            break;
        case GP_OPCAT_SOFTMAX:
            ok = model_rowwise(a, strstr(name, "backward") ? 3 : 5, out);
            break;
        case GP_OPCAT_ELEMENTWISE:
            ok = model_elementwise(name, a, out);
            break;
        case GP_OPCAT_REDUCE:
            ok = model_reduce(name, a, out);
            break;
        default:
            ok = false;
        }
    }
    if (ok) {
        int t = main_tensor(name, cat, a);
        const dtype_ent *e = dtype_of(a->a[t].type);
        out->dtype = e ? e->dt : GP_DT_UNKNOWN;
        /* cuDNN convolutions run fp32 on tensor cores as TF32 by default
         * (torch.backends.cudnn.allow_tf32); matmuls do not (allow_tf32 is off). */
        if ((cat == GP_OPCAT_CONV_FWD || cat == GP_OPCAT_CONV_BWD) && out->dtype == GP_DT_FP32)
            out->dtype = GP_DT_TF32;
        out->cat = cat;
        ok = out->flops >= 0 && out->bytes > 0;
    }
    free(a);
    if (!ok)
        memset(out, 0, sizeof *out);
    return ok;
}

double gp__op_roof_ns(const gp_device_peak *pk, const gp__op_model *m, double *flop_ns,
                      double *mem_ns)
{
    double pf = m->dtype > GP_DT_UNKNOWN && m->dtype < GP_DT_COUNT ? pk->tflops[m->dtype] : 0;
    *flop_ns = pf > 0 ? m->flops / (pf * 1e3) : 0; /* TFLOP/s = 10^3 FLOP per ns */
    *mem_ns = pk->tbps > 0 ? m->bytes / (pk->tbps * 1e3) : 0;
    if (pk->tbps <= 0)
        return -1;
    if (pf <= 0) {
        bool light = m->cat == GP_OPCAT_ELEMENTWISE || m->cat == GP_OPCAT_REDUCE ||
                     m->cat == GP_OPCAT_NORM_FWD || m->cat == GP_OPCAT_NORM_BWD ||
                     m->cat == GP_OPCAT_SOFTMAX;
        return light ? *mem_ns : -1;
    }
    return *flop_ns > *mem_ns ? *flop_ns : *mem_ns;
}

/* ---- the memo ------------------------------------------------------------------------------- */

/* A computed model: gp__op_model_compute's answer for one (name, shapes) of a trace. */
struct gp__op_model_ent {
    bool ok;
    gp__op_model m;
};

bool gp__op_model_memo_compute(gp__op_model_memo *mm, const gp_trace *t, gp_strid name,
                               gp_op_category cat, const gp_op_shapes *sh, gp__op_model *out,
                               bool *oom)
{
    uint32_t key[4] = {name, sh->dims, sh->types, sh->concrete}, i;
    if (gp__idmap_get(&mm->ids, key, &i)) {
        *out = mm->ents[i].m;
        return mm->ents[i].ok;
    }
    bool ok = gp__op_model_compute(gp_trace_str(t, name), cat, gp_trace_str(t, sh->dims),
                                   gp_trace_str(t, sh->types), gp_trace_str(t, sh->concrete), out);
    struct gp__op_model_ent *e = GP_PUSH(mm->ents, mm->n, mm->cap);
    if (!e || gp__idmap_put(&mm->ids, key, (uint32_t)(mm->n - 1)) != GP_OK)
        *oom = true;
    else
        *e = (struct gp__op_model_ent){ok, *out};
    return ok;
}

void gp__op_model_memo_clear(gp__op_model_memo *mm)
{
    gp__idmap_clear(&mm->ids);
    mm->n = 0;
}

void gp__op_model_memo_free(gp__op_model_memo *mm)
{
    gp__idmap_free(&mm->ids);
    free(mm->ents);
    *mm = (gp__op_model_memo){0};
}
