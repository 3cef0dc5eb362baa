/* The attribution rules of `gpuprof ops` that TraceLens compares against (docs/ops.md, "Agreement
 * with TraceLens"), one hand-built trace with a part per rule; every figure is worked out in the
 * comment above the trace or the check:
 * - self_gpu_busy: the union of an instance's own GPU work beside its sum;
 * - rows of work launched outside any op carry the launching call (launch_call);
 * - --by instance rows carry their rates (TFLOP/s, TB/s, FLOP/B), not 0;
 * - vllm::rocm_unquantized_gemm is modelled by name, its rate over its subtree's busy time;
 * - a convolution's FLOPs go on the op that holds its GPU time (cudnn_convolution);
 * - an op whose GPU work is a host<->device memcpy has no roof (not HBM's). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gpuprof/ops.h"
#include "gpuprof/trace.h"

#include "ops_fixture.h"

#define BF2 "[\"c10::BFloat16\", \"c10::BFloat16\"]"
#define CONV_DIMS "[[1, 3, 8, 8], [4, 3, 3, 3], [], [], [], [], [], [], []]"
#define CONV_TYPES                                                                                 \
    "[\"c10::BFloat16\", \"c10::BFloat16\", \"\", \"ScalarList\", \"ScalarList\", "                \
    "\"ScalarList\", \"Scalar\", \"ScalarList\", \"Scalar\"]"
#define CONV_CONC                                                                                  \
    "[\"\", \"\", \"\", \"[1, 1]\", \"[0, 0]\", \"[1, 1]\", \"False\", \"[0, 0]\", \"1\"]"

/* CPU thread 1, streams 7 and 8 (ns):
 * A. aten::mm (ext 1) [0, 500): launches corr 1 -> k_a [1000, 2000) on 7 and corr 2 -> k_b
 *    [1500, 2500) on 8. Shapes [64,128] x [128,256] bf16: F = 2*64*128*256 = 4194304, bytes
 *    (64*128 + 128*256 + 64*256) * 2 = 114688. self GPU (sum) 2000, self busy (union) 1500.
 *    Rates over the subtree sum, 2000 ns: 2.097152 TFLOP/s, 0.057344 TB/s, 36.571 FLOP/B.
 * B. cudaLaunchKernel corr 3 [600, 610) outside any op -> k_free [3000, 3100).
 *    k_orphan corr 99 [3200, 3205): no launch call.
 * C. vllm::rocm_unquantized_gemm (ext 4) [4000, 4500): corr 4 -> g1 [5000, 7000) on 7, corr 5 ->
 *    g2 [6000, 8000) on 8. x[32, 2880] . W[201088, 2880]^T, no bias, bf16: F = 2*32*201088*2880
 *    = 37064540160 (TraceLens: 37.06454016 GFLOP), bytes (32*2880 + 201088*2880 + 32*201088) * 2
 *    = 1171320832. Rate over the busy union 3000 ns (not the 4000 ns sum): 12354.84672 TFLOP/s.
 * D. aten::conv2d (ext 10) [9000, 9900) > aten::convolution (ext 11) [9100, 9800) >
 *    aten::_convolution (ext 12) [9200, 9700) > aten::cudnn_convolution (ext 13) [9300, 9600),
 *    which launches corr 6 -> k_conv [10000, 11000). conv2d and convolution carry the shapes
 *    [1,3,8,8] * [4,3,3,3], stride 1, no padding: out 6x6, F = 2*1*4*36*3*9 = 7776, bytes
 *    (192 + 108 + 144) * 2 = 888. The model lands on cudnn_convolution (its GPU time: 1000 ns,
 *    7.776e-3 TFLOP/s) from convolution (ext 11); conv2d and convolution have none.
 * E. aten::copy_ (ext 20) [12000, 12500): corr 7 -> "Memcpy HtoD (Pageable -> Device)"
 *    [13000, 14000): modelled (elementwise), no roof. aten::copy_ (ext 21) [14500, 15000): corr 8
 *    -> "Memcpy DtoD (Device -> Device)" [15000, 16000): HBM's roof applies. */
static gp_trace *rules_trace(void)
{
    gp_trace *t;
    assert_int_equal(gp_trace_create("rules", &t), GP_OK);
    uint32_t cpu, s7, s8;
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &s7), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 8, &s8), GP_OK);
    gp_device_props d = {.id = 0, .name = str(t, "NVIDIA H100 80GB HBM3"), .num_sms = 132};
    assert_int_equal(gp_trace_add_device(t, &d), GP_OK);
    add(t, cpu, GP_EV_CPU_OP, "aten::mm", 0, 500, 0, 1);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 100, 10, 1, 1);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 200, 10, 2, 1);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 600, 10, 3, 0);
    add(t, cpu, GP_EV_CPU_OP, "vllm::rocm_unquantized_gemm", 4000, 500, 0, 4);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 4100, 10, 4, 4);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 4200, 10, 5, 4);
    add(t, cpu, GP_EV_CPU_OP, "aten::conv2d", 9000, 900, 0, 10);
    add(t, cpu, GP_EV_CPU_OP, "aten::convolution", 9100, 700, 0, 11);
    add(t, cpu, GP_EV_CPU_OP, "aten::_convolution", 9200, 500, 0, 12);
    add(t, cpu, GP_EV_CPU_OP, "aten::cudnn_convolution", 9300, 300, 0, 13);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 9400, 10, 6, 13);
    add(t, cpu, GP_EV_CPU_OP, "aten::copy_", 12000, 500, 0, 20);
    add(t, cpu, GP_EV_RUNTIME, "cudaMemcpyAsync", 12100, 10, 7, 20);
    add(t, cpu, GP_EV_CPU_OP, "aten::copy_", 14500, 500, 0, 21);
    add(t, cpu, GP_EV_RUNTIME, "cudaMemcpyAsync", 14600, 10, 8, 21);
    add(t, s7, GP_EV_KERNEL, "k_a", 1000, 1000, 1, 1);
    add(t, s8, GP_EV_KERNEL, "k_b", 1500, 1000, 2, 1);
    add(t, s7, GP_EV_KERNEL, "k_free", 3000, 100, 3, 0);
    add(t, s7, GP_EV_KERNEL, "k_orphan", 3200, 5, 99, 0);
    add(t, s7, GP_EV_KERNEL, "g1", 5000, 2000, 4, 4);
    add(t, s8, GP_EV_KERNEL, "g2", 6000, 2000, 5, 4);
    add(t, s7, GP_EV_KERNEL, "k_conv", 10000, 1000, 6, 13);
    add(t, s7, GP_EV_MEMCPY, "Memcpy HtoD (Pageable -> Device)", 13000, 1000, 7, 20);
    add(t, s7, GP_EV_MEMCPY, "Memcpy DtoD (Device -> Device)", 15000, 1000, 8, 21);
    shapes(t, 1, "[[64, 128], [128, 256]]", BF2, NULL);
    shapes(t, 4, "[[32, 2880], [201088, 2880], []]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"\"]",
           NULL);
    shapes(t, 10, "[[1, 3, 8, 8], [4, 3, 3, 3], [], [], [], [], []]",
           "[\"c10::BFloat16\", \"c10::BFloat16\", \"\", \"ScalarList\", \"ScalarList\", "
           "\"ScalarList\", \"Scalar\"]",
           "[\"\", \"\", \"\", \"[1, 1]\", \"[0, 0]\", \"[1, 1]\", \"1\"]");
    shapes(t, 11, CONV_DIMS, CONV_TYPES, CONV_CONC);
    shapes(t, 20, "[[1024], [1024], []]", "[\"float\", \"float\", \"Scalar\"]", NULL);
    shapes(t, 21, "[[1024], [1024], []]", "[\"float\", \"float\", \"Scalar\"]", NULL);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    return t;
}

static gp_ops *compute(gp_trace *t, gp_ops_by by)
{
    gp_ops_opts o;
    gp_ops_opts_init(&o);
    o.by = by;
    gp_ops *ops = NULL;
    assert_int_equal(gp_ops_compute(gp_traces_const(&t), 1, &o, &ops, NULL), GP_OK);
    return ops;
}

/* The row of key (by instance: the one with external id ext, 0 for any). */
static const gp_ops_row *row(const gp_ops *ops, const char *key, int64_t ext)
{
    for (size_t i = 0; i < ops->n_rows; i++)
        if (strcmp(ops->rows[i].key, key) == 0 && (!ext || ops->rows[i].external_id == ext))
            return &ops->rows[i];
    fail_msg("no row %s", key);
    return NULL;
}

static void near(double got, double want)
{
    if (fabs(got - want) > 1e-9 * fabs(want))
        fail_msg("%.12g, expected %.12g", got, want);
}

static void busy_beside_sum(void **state)
{
    (void)state;
    gp_trace *t = rules_trace();
    for (int by = GP_OPS_BY_NAME; by <= GP_OPS_BY_INSTANCE; by += GP_OPS_BY_INSTANCE) {
        gp_ops *ops = compute(t, (gp_ops_by)by);
        const gp_ops_row *mm = row(ops, "aten::mm", 0);
        assert_int_equal(mm->self_gpu, 2000);
        assert_int_equal(mm->self_gpu_busy, 1500);
        assert_int_equal(mm->gpu_busy, 1500);
        const gp_ops_row *g = row(ops, "vllm::rocm_unquantized_gemm", 0);
        assert_int_equal(g->self_gpu, 4000);
        assert_int_equal(g->self_gpu_busy, 3000);
        gp_ops_free(ops);
    }
    gp_trace_free(t);
}

static void launch_call_of_rows_outside_ops(void **state)
{
    (void)state;
    gp_trace *t = rules_trace();
    gp_ops *ops = compute(t, GP_OPS_BY_NAME);
    const gp_ops_row *r = row(ops, "cudaLaunchKernel (outside any op)", 0);
    assert_true(r->unattributed);
    assert_string_equal(r->launch_call, "cudaLaunchKernel");
    assert_int_equal(r->self_gpu, 100);
    assert_null(row(ops, "(no launch event)", 0)->launch_call);
    assert_null(row(ops, "aten::mm", 0)->launch_call);
    gp_ops_free(ops);
    ops = compute(t, GP_OPS_BY_INSTANCE);
    assert_string_equal(row(ops, "k_free", 0)->launch_call, "cudaLaunchKernel");
    assert_null(row(ops, "k_orphan", 0)->launch_call);
    gp_ops_free(ops);
    gp_trace_free(t);
}

static void instance_rows_have_rates(void **state)
{
    (void)state;
    gp_trace *t = rules_trace();
    gp_ops *ops = compute(t, GP_OPS_BY_INSTANCE);
    const gp_ops_row *mm = row(ops, "aten::mm", 1);
    assert_int_equal(mm->modeled, 1);
    near(mm->flops, 4194304);
    near(mm->tflops_per_s, 2.097152);
    near(mm->tb_per_s, 0.057344);
    near(mm->intensity, 4194304.0 / 114688.0);
    assert_true(mm->roof_pct > 0);
    assert_int_equal(mm->bound, GP_BOUND_MEMORY);
    gp_ops_free(ops);
    gp_trace_free(t);
}

static void vllm_gemm_by_name_over_busy(void **state)
{
    (void)state;
    gp_trace *t = rules_trace();
    gp_ops *ops = compute(t, GP_OPS_BY_INSTANCE);
    const gp_ops_row *g = row(ops, "vllm::rocm_unquantized_gemm", 4);
    assert_int_equal(g->modeled, 1);
    assert_int_equal(g->category, GP_OPCAT_GEMM);
    near(g->flops, 37064540160.0);
    near(g->bytes, 1171320832.0);
    assert_int_equal(g->model_time, 3000);
    near(g->tflops_per_s, 37064540160.0 / 3000e-9 * 1e-12);
    gp_ops_free(ops);
    gp_trace_free(t);
}

static void conv_flops_on_the_op_with_gpu_time(void **state)
{
    (void)state;
    gp_trace *t = rules_trace();
    gp_ops *ops = compute(t, GP_OPS_BY_INSTANCE);
    const gp_ops_row *k = row(ops, "aten::cudnn_convolution", 13);
    assert_int_equal(k->modeled, 1);
    assert_int_equal(k->category, GP_OPCAT_CONV_FWD);
    assert_int_equal(k->model_external_id, 11);
    near(k->flops, 7776);
    near(k->bytes, 888);
    near(k->tflops_per_s, 7776 / 1000e-9 * 1e-12);
    assert_int_equal(row(ops, "aten::conv2d", 10)->modeled, 0);
    assert_int_equal(row(ops, "aten::convolution", 11)->modeled, 0);
    assert_int_equal(row(ops, "aten::_convolution", 12)->modeled, 0);
    gp_ops_free(ops);
    ops = compute(t, GP_OPS_BY_NAME); /* counted once: 7776 FLOPs in the whole table */
    double flops = 0;
    for (size_t i = 0; i < ops->n_rows; i++)
        if (strstr(ops->rows[i].key, "conv"))
            flops += ops->rows[i].flops;
    near(flops, 7776);
    gp_ops_free(ops);
    gp_trace_free(t);
}

static void host_copies_have_no_hbm_roof(void **state)
{
    (void)state;
    gp_trace *t = rules_trace();
    gp_ops *ops = compute(t, GP_OPS_BY_INSTANCE);
    const gp_ops_row *h = row(ops, "aten::copy_", 20), *d = row(ops, "aten::copy_", 21);
    assert_int_equal(h->modeled, 1);
    assert_int_equal(d->modeled, 1);
    assert_true(h->tb_per_s > 0);
    assert_true(h->roof_pct < 0);
    assert_int_equal(h->bound, GP_BOUND_NONE);
    assert_true(d->roof_pct > 0);
    gp_ops_free(ops);
    gp_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(busy_beside_sum),
        cmocka_unit_test(launch_call_of_rows_outside_ops),
        cmocka_unit_test(instance_rows_have_rates),
        cmocka_unit_test(vllm_gemm_by_name_over_busy),
        cmocka_unit_test(conv_flops_on_the_op_with_gpu_time),
        cmocka_unit_test(host_copies_have_no_hbm_roof),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
