/* Device peaks for the roofline of `gpuprof ops`, and the names of the ops enums. The table holds
 * dense (no sparsity) tensor/matrix-core peaks per dtype and the memory bandwidth of common GPUs,
 * from the vendors' datasheets; docs/ops.md ("Device peaks") lists each source. A device is
 * matched on its deviceProperties name (case-insensitive substrings); its memory size tells the
 * A100 40 GB from the 80 GB. */
#include <strings.h>
#include <string.h>

#include "core/util.h"
#include "analyze/ops_internal.h"

/* ---- names ---------------------------------------------------------------------------------- */

static const char *const by_names[] = {
    [GP_OPS_BY_NAME] = "name",
    [GP_OPS_BY_SHAPE] = "shape",
    [GP_OPS_BY_MODULE] = "module",
    [GP_OPS_BY_LINE] = "line",
    [GP_OPS_BY_ANNOTATION] = "annotation",
    [GP_OPS_BY_KERNEL] = "kernel",
    [GP_OPS_BY_INSTANCE] = "instance",
};
static const char *const sort_names[] = {
    [GP_OPS_SORT_SELF_GPU] = "self_gpu",     [GP_OPS_SORT_GPU] = "gpu",
    [GP_OPS_SORT_SELF_CPU] = "self_cpu",     [GP_OPS_SORT_CPU] = "cpu",
    [GP_OPS_SORT_CALLS] = "calls",           [GP_OPS_SORT_TFLOPS] = "tflops",
    [GP_OPS_SORT_EFFICIENCY] = "efficiency",
};
static const char *const cat_names[] = {
    [GP_OPCAT_NONE] = "",
    [GP_OPCAT_GEMM] = "GEMM",
    [GP_OPCAT_CONV_FWD] = "CONV_fwd",
    [GP_OPCAT_CONV_BWD] = "CONV_bwd",
    [GP_OPCAT_ATTN_FWD] = "SDPA_fwd",
    [GP_OPCAT_ATTN_BWD] = "SDPA_bwd",
    [GP_OPCAT_NORM_FWD] = "NORM_fwd",
    [GP_OPCAT_NORM_BWD] = "NORM_bwd",
    [GP_OPCAT_SOFTMAX] = "softmax",
    [GP_OPCAT_ELEMENTWISE] = "elementwise",
    [GP_OPCAT_REDUCE] = "reduce",
};
static const char *const dtype_names[] = {
    [GP_DT_UNKNOWN] = "",  [GP_DT_FP64] = "fp64", [GP_DT_FP32] = "fp32",
    [GP_DT_TF32] = "tf32", [GP_DT_BF16] = "bf16", [GP_DT_FP16] = "fp16",
    [GP_DT_FP8] = "fp8",   [GP_DT_INT8] = "int8", [GP_DT_OTHER] = "other",
};
static const char *const bound_names[] = {
    [GP_BOUND_NONE] = "", [GP_BOUND_MEMORY] = "memory", [GP_BOUND_COMPUTE] = "compute"};

const char *gp_ops_by_name(gp_ops_by by)
{
    return GP_NAME_OF(by_names, by, "?");
}

const char *gp_ops_sort_name(gp_ops_sort sort)
{
    return GP_NAME_OF(sort_names, sort, "?");
}

gp_status gp_ops_by_parse(const char *s, gp_ops_by *out)
{
    int i = gp__index_of(by_names, GP_ARRAY_LEN(by_names), s, false);
    if (i < 0)
        return GP_EINVAL;
    *out = (gp_ops_by)i;
    return GP_OK;
}

gp_status gp_ops_sort_parse(const char *s, gp_ops_sort *out)
{
    int i = gp__index_of(sort_names, GP_ARRAY_LEN(sort_names), s, false);
    if (i < 0)
        return GP_EINVAL;
    *out = (gp_ops_sort)i;
    return GP_OK;
}

const char *gp_op_category_name(gp_op_category c)
{
    return GP_NAME_OF(cat_names, c, "");
}

const char *gp_op_dtype_name(gp_op_dtype d)
{
    return GP_NAME_OF(dtype_names, d, "");
}

const char *gp_op_bound_name(gp_op_bound b)
{
    return GP_NAME_OF(bound_names, b, "");
}

/* ---- the table ------------------------------------------------------------------------------ */

typedef struct peak_ent {
    const char *need[2]; /* substrings the name must hold (the second may be NULL) */
    const char *avoid;   /* a substring it must not hold, or NULL */
    double min_gib;      /* least memory size (GiB) for this entry; 0: any */
    const char *entry;
    /* fp64, fp32, tf32, bf16, fp16, fp8, int8 (TFLOP/s or TOP/s, dense), bandwidth TB/s */
    double f64, f32, tf32, bf16, f16, f8, i8, tbps;
} peak_ent;

/* First match wins: the more specific entries first. */
static const peak_ent peaks[] = {
    {{"H100", "PCIe"}, NULL, 0, "NVIDIA H100 PCIe", 51, 51, 378, 756, 756, 1513, 1513, 2.0},
    {{"H100", "NVL"}, NULL, 0, "NVIDIA H100 NVL", 60, 60, 418, 835, 835, 1671, 1671, 3.9},
    {{"H100", NULL}, NULL, 0, "NVIDIA H100 SXM5", 67, 67, 494.5, 989.5, 989.5, 1979, 1979, 3.35},
    {{"H200", NULL}, NULL, 0, "NVIDIA H200 SXM", 67, 67, 494.5, 989.5, 989.5, 1979, 1979, 4.8},
    {{"B200", NULL}, NULL, 0, "NVIDIA B200", 37, 75, 1100, 2250, 2250, 4500, 4500, 8.0},
    {{"A100", "PCIE"}, NULL, 60, "NVIDIA A100 PCIe 80GB", 19.5, 19.5, 156, 312, 312, 0, 624, 1.935},
    {{"A100", "PCIE"}, NULL, 0, "NVIDIA A100 PCIe 40GB", 19.5, 19.5, 156, 312, 312, 0, 624, 1.555},
    {{"A100", NULL}, NULL, 60, "NVIDIA A100 SXM4 80GB", 19.5, 19.5, 156, 312, 312, 0, 624, 2.039},
    {{"A100", NULL}, NULL, 0, "NVIDIA A100 SXM4 40GB", 19.5, 19.5, 156, 312, 312, 0, 624, 1.555},
    {{"V100", "PCIE"}, NULL, 0, "NVIDIA V100 PCIe", 7, 14, 0, 0, 112, 0, 0, 0.9},
    {{"V100", NULL}, NULL, 0, "NVIDIA V100 SXM2", 7.8, 15.7, 0, 0, 125, 0, 0, 0.9},
    {{"L40S", NULL}, NULL, 0, "NVIDIA L40S", 0, 91.6, 183, 362, 362, 733, 733, 0.864},
    {{"MI300X", NULL},
     NULL,
     0,
     "AMD Instinct MI300X",
     163.4,
     163.4,
     653.7,
     1307.4,
     1307.4,
     2614.9,
     2614.9,
     5.3},
    /* One MI250X GCD, which is what a process sees as a device: half the module's figures. */
    {{"MI250X", NULL},
     NULL,
     0,
     "AMD Instinct MI250X (one GCD)",
     47.9,
     47.9,
     0,
     191.5,
     191.5,
     0,
     191.5,
     1.6384},
    {{"MI210", NULL}, NULL, 0, "AMD Instinct MI210", 45.3, 45.3, 0, 181, 181, 0, 181, 1.6384},
};

/* strcasestr without _GNU_SOURCE. */
static bool has_nocase(const char *s, const char *needle)
{
    size_t n = strlen(needle);
    for (; *s; s++)
        if (strncasecmp(s, needle, n) == 0)
            return true;
    return false;
}

void gp_device_peak_lookup(const char *device, int64_t total_mem, gp_device_peak *out)
{
    memset(out, 0, sizeof *out);
    out->device = device && *device ? device : NULL;
    out->num_sms = -1;
    if (!out->device)
        return;
    for (size_t i = 0; i < GP_ARRAY_LEN(peaks); i++) {
        const peak_ent *p = &peaks[i];
        if (!has_nocase(device, p->need[0]) || (p->need[1] && !has_nocase(device, p->need[1])) ||
            (p->avoid && has_nocase(device, p->avoid)))
            continue;
        if (p->min_gib > 0 && total_mem > 0 && (double)total_mem < p->min_gib * 1073741824.0)
            continue; /* a smaller-memory variant follows */
        out->entry = p->entry;
        out->tflops[GP_DT_FP64] = p->f64;
        out->tflops[GP_DT_FP32] = p->f32;
        out->tflops[GP_DT_TF32] = p->tf32;
        out->tflops[GP_DT_BF16] = p->bf16;
        out->tflops[GP_DT_FP16] = p->f16;
        out->tflops[GP_DT_FP8] = p->f8;
        out->tflops[GP_DT_INT8] = p->i8;
        out->tbps = p->tbps;
        return;
    }
}

/* A device the trace leaves unnamed (vLLM's ROCm traces write "name": ""), told by its properties
 * where they single out one entry: gfx942 (compute 9.4, 64-wide wavefronts) with 304 CUs and
 * 192 GiB is the MI300X (the named MI300X traces carry exactly these; the MI325X has 256 GiB and
 * is not in the table). NULL when the properties fit no entry alone. */
static const char *unnamed_device(const gp_device_props *d)
{
    const double gib = 1073741824.0;
    if (d->compute_major == 9 && d->compute_minor == 4 && d->warp_size == 64 && d->num_sms == 304 &&
        d->total_global_mem > 0 && (double)d->total_global_mem < 224.0 * gib &&
        (double)d->total_global_mem > 160.0 * gib)
        return "unnamed gfx942, 304 CUs, 192 GiB: AMD Instinct MI300X";
    return NULL;
}

void gp__ops_trace_peak(const gp_trace *t, double peak_tflops, double peak_tbps,
                        gp_device_peak *out)
{
    const gp_device_props *d = t->n_devices ? &t->devices[0] : NULL;
    const char *name = d ? gp_trace_str(t, d->name) : NULL;
    if (d && (!name || !*name))
        name = unnamed_device(d);
    gp_device_peak_lookup(name, d ? d->total_global_mem : 0, out);
    if (d)
        out->num_sms = d->num_sms;
    if (peak_tflops > 0) {
        for (int k = GP_DT_FP64; k < GP_DT_OTHER; k++)
            out->tflops[k] = peak_tflops;
        out->overridden = true;
    }
    if (peak_tbps > 0) {
        out->tbps = peak_tbps;
        out->overridden = true;
    }
}
