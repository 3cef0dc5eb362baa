/* Unit tests of `gpuprof ops` (src/analyze/ops*.c, src/render/ops_*.c) on hand-built traces:
 * attribution through correlation ids to the innermost op, subtrees, busy unions, graph replays,
 * GPU work without a launcher, grouping by module / line / annotation / kernel / shape, the perf
 * model's formulas, shapes the model must refuse, the peak table, and golden text / JSON / CSV.
 * Every expected figure is derived by hand in the comment above its trace or check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/golden.h"
#include "common/shared_traces.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/ops_internal.h"
#include "render/ops_html.h"
#include "gpuprof/ops.h"
#include "gpuprof/trace.h"

#include "ops_fixture.h"

static void device(gp_trace *t, const char *name)
{
    gp_device_props d = {.id = 0, .name = str(t, name), .num_sms = 132};
    assert_int_equal(gp_trace_add_device(t, &d), GP_OK);
}

/* Thread 1 (ns):
 *   nn.Module: Block_0 [0, 1000) (python) holds
 *     model.py(10): forward [0, 1000) (python) holds
 *       aten::outer (ext 1) [0, 500) holds
 *         aten::inner (ext 2) [100, 300) holds cudaLaunchKernel corr 1 [150, 160)
 *                                          and cudaGraphLaunch corr 4 [200, 210)
 *         cudaLaunchKernel corr 2 [350, 360)            (launched by outer itself)
 *       aten::mm (ext 3) [600, 700) holds cudaLaunchKernel corr 5 [610, 620)
 *   nn.Module: Block_1 [1000, 2000) holds aten::mm (ext 4) [1100, 1200) with corr 6 [1110,1120)
 *   cudaLaunchKernel corr 3 [2100, 2110)                (outside any op)
 *   user annotation "attn" [0, 2050): innermost annotation of every op (ProfilerStep#1 around it
 *   is not one)
 * stream 7: k_inner corr 1 [1000, 1300); k_outer corr 2 [1200, 1600) (overlaps k_inner by 100);
 *   graph kernels g1, g2 corr 4 [1700, 1750), [1750, 1800); k_mm corr 5 [2000, 3000);
 *   k_mm corr 6 [3000, 4000); k_free corr 3 [5000, 5010); k_orphan corr 9 [6000, 6005).
 * Expect: inner direct 300 + 50 + 50 = 400, 3 kernels, 2 replayed; outer direct 400, subtree 800,
 *   busy = union [1000,1600) + [1700,1800) = 700; mm 2 calls, 2000 ns; outside 10; orphan 5.
 *   Total GPU 300+400+100+1000+1000+10+5 = 2815. */
static gp_trace *attribution_trace(bool with_shapes)
{
    gp_trace *t;
    assert_int_equal(gp_trace_create("attribution", &t), GP_OK);
    uint32_t cpu, s7;
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &s7), GP_OK);
    device(t, "NVIDIA H100 80GB HBM3");
    add(t, cpu, GP_EV_USER_ANNOTATION, "ProfilerStep#1", 0, 3000, 0, 0);
    add(t, cpu, GP_EV_USER_ANNOTATION, "attn", 0, 2050, 0, 0);
    add(t, cpu, GP_EV_PYTHON, "nn.Module: Block_0", 0, 1000, 0, 0);
    add(t, cpu, GP_EV_PYTHON, "model.py(10): forward", 0, 1000, 0, 0);
    add(t, cpu, GP_EV_PYTHON, "torch/nn/modules/module.py(1501): _call_impl", 0, 1000, 0, 0);
    add(t, cpu, GP_EV_CPU_OP, "aten::outer", 0, 500, 0, 1);
    add(t, cpu, GP_EV_CPU_OP, "aten::inner", 100, 200, 0, 2);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 150, 10, 1, 2);
    add(t, cpu, GP_EV_RUNTIME, "cudaGraphLaunch", 200, 10, 4, 2);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 350, 10, 2, 1);
    add(t, cpu, GP_EV_CPU_OP, "aten::mm", 600, 100, 0, 3);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 610, 10, 5, 3);
    add(t, cpu, GP_EV_PYTHON, "nn.Module: Block_1", 1000, 1000, 0, 0);
    add(t, cpu, GP_EV_CPU_OP, "aten::mm", 1100, 100, 0, 4);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 1110, 10, 6, 4);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 2100, 10, 3, 0);
    add(t, s7, GP_EV_KERNEL, "k_inner", 1000, 300, 1, 2);
    add(t, s7, GP_EV_KERNEL, "k_outer", 1200, 400, 2, 1);
    add(t, s7, GP_EV_KERNEL, "g1", 1700, 50, 4, 0);
    add(t, s7, GP_EV_KERNEL, "g2", 1750, 50, 4, 0);
    add(t, s7, GP_EV_KERNEL, "k_mm", 2000, 1000, 5, 3);
    add(t, s7, GP_EV_KERNEL, "k_mm", 3000, 1000, 6, 4);
    add(t, s7, GP_EV_KERNEL, "k_free", 5000, 10, 3, 0);
    add(t, s7, GP_EV_KERNEL, "k_orphan", 6000, 5, 9, 0);
    if (with_shapes) {
        /* mm (ext 3): [64,128] x [128,256] bf16; F = 2*64*256*128 = 4194304, bytes =
         * (64*128 + 128*256 + 64*256) * 2 = 114688. mm (ext 4): inner sizes differ -> refused.
         * outer (ext 1) is not a modeled op; inner has no shapes but is not modeled either. */
        shapes(t, 3, "[[64, 128], [128, 256]]", "[\"c10::BFloat16\", \"c10::BFloat16\"]", NULL);
        shapes(t, 4, "[[64, 128], [100, 256]]", "[\"c10::BFloat16\", \"c10::BFloat16\"]", NULL);
    }
    assert_int_equal(gp_trace_finish(t), GP_OK);
    return t;
}

static gp_ops *compute(gp_trace *t, gp_ops_by by, bool no_merge)
{
    gp_ops_opts o;
    gp_ops_opts_init(&o);
    o.by = by;
    o.no_merge = no_merge;
    gp_ops *ops = NULL;
    assert_int_equal(gp_ops_compute(gp_traces_const(&t), 1, &o, &ops, NULL), GP_OK);
    return ops;
}

static const gp_ops_row *row_of(const gp_ops *ops, const char *key)
{
    for (size_t i = 0; i < ops->n_rows; i++)
        if (strcmp(ops->rows[i].key, key) == 0)
            return &ops->rows[i];
    fail_msg("no row %s", key);
    return NULL;
}

static void attribution_by_name(void **state)
{
    (void)state;
    gp_trace *t = attribution_trace(false);
    gp_ops *ops = compute(t, GP_OPS_BY_NAME, false);
    const gp_ops_row *inner = row_of(ops, "aten::inner");
    assert_int_equal(inner->self_gpu, 400);
    assert_int_equal(inner->gpu, 400);
    assert_int_equal(inner->kernels, 3);
    assert_int_equal(inner->replayed, 2);
    assert_int_equal(inner->gpu_busy, 400); /* [1000,1300) and [1700,1800) */
    const gp_ops_row *outer = row_of(ops, "aten::outer");
    assert_int_equal(outer->self_gpu, 400);
    assert_int_equal(outer->gpu, 800);
    assert_int_equal(outer->kernels, 1);
    assert_int_equal(outer->kernels_subtree, 4);
    assert_int_equal(outer->gpu_busy, 700);
    /* self CPU: outer 500 - inner 200 - launch 10 = 290; inner 200 - 20 = 180 */
    assert_int_equal(outer->self_cpu, 290);
    assert_int_equal(outer->cpu, 500);
    assert_int_equal(inner->self_cpu, 180);
    const gp_ops_row *mm = row_of(ops, "aten::mm");
    assert_int_equal(mm->calls, 2);
    assert_int_equal(mm->self_gpu, 2000);
    const gp_ops_row *out = row_of(ops, "cudaLaunchKernel (outside any op)");
    assert_true(out->unattributed);
    assert_int_equal(out->self_gpu, 10);
    const gp_ops_row *orphan = row_of(ops, "(no launch event)");
    assert_true(orphan->unattributed);
    assert_int_equal(orphan->self_gpu, 5);
    /* self GPU is a partition of all GPU work */
    assert_int_equal(ops->total.self_gpu, 2815);
    assert_int_equal(ops->gpu_time, 2815);
    assert_int_equal(ops->gpu_events, 8);
    assert_int_equal(ops->no_launch, 1);
    assert_int_equal(ops->outside_op, 1);
    assert_int_equal(ops->replayed, 2);
    assert_int_equal(ops->instances, 4);
    /* sorted by self GPU: mm (2000) first */
    assert_string_equal(ops->rows[0].key, "aten::mm");
    assert_non_null(strstr(ops->note.msg, "no launch call"));
    gp_ops_free(ops);
    gp_trace_free(t);
}

/* The note's example of a launch outside any op is one of the table's rows: on ROCm the launch
 * calls are hip*, so a note naming cudaLaunchKernel would point at a row that is not there. */
static void outside_op_note_names_a_row(void **state)
{
    (void)state;
    gp_trace *t;
    assert_int_equal(gp_trace_create("hip", &t), GP_OK);
    uint32_t cpu, s0;
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 0, &s0), GP_OK);
    add(t, cpu, GP_EV_RUNTIME, "hipGraphLaunch", 100, 10, 1, 0);
    add(t, s0, GP_EV_KERNEL, "k", 200, 50, 1, 0);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_ops *ops = compute(t, GP_OPS_BY_NAME, false);
    assert_int_equal(ops->outside_op, 1);
    assert_non_null(row_of(ops, "hipGraphLaunch (outside any op)"));
    assert_non_null(strstr(ops->note.msg, "as \"hipGraphLaunch (outside any op)\""));
    assert_null(strstr(ops->note.msg, "cudaLaunchKernel"));
    gp_ops_free(ops);
    gp_trace_free(t);
}

/* Every grouping of a trace without a single op or GPU event: an empty table, no
 * undefined behaviour (by instance copied from a NULL instance array: fuzz_report_page found it;
 * the sanitizer build of this test aborts on it). */
static void no_instances_in_any_grouping(void **state)
{
    (void)state;
    gp_trace *t;
    assert_int_equal(gp_trace_create("no ops, no GPU work", &t), GP_OK);
    uint32_t cpu;
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    add(t, cpu, GP_EV_USER_ANNOTATION, "step", 0, 100, 0, 0);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    for (int by = 0; by < GP_OPS_BY_COUNT; by++) {
        gp_ops_opts o;
        gp_ops_opts_init(&o);
        o.by = (gp_ops_by)by;
        gp_ops *ops = NULL;
        assert_int_equal(gp_ops_compute(gp_traces_const(&t), 1, &o, &ops, NULL), GP_OK);
        assert_int_equal(ops->instances, 0);
        assert_int_equal(ops->n_rows, 0);
        assert_int_equal(ops->total.self_gpu, 0);
        gp_ops_free(ops);
    }
    gp_trace_free(t);
}

static void groupings(void **state)
{
    (void)state;
    gp_trace *t = attribution_trace(false);
    gp_ops *ops = compute(t, GP_OPS_BY_MODULE, false);
    /* Block_0 holds outer (400 direct), inner (400), mm ext 3 (1000); Block_1 mm ext 4 (1000) */
    const gp_ops_row *b = row_of(ops, "Block");
    assert_int_equal(b->calls, 4);
    assert_int_equal(b->self_gpu, 2800);
    gp_ops_free(ops);
    ops = compute(t, GP_OPS_BY_MODULE, true);
    assert_int_equal(row_of(ops, "Block_0")->self_gpu, 1800);
    assert_int_equal(row_of(ops, "Block_1")->self_gpu, 1000);
    gp_ops_free(ops);
    /* the source line skips torch's own frame; Block_1's op has none */
    ops = compute(t, GP_OPS_BY_LINE, false);
    assert_int_equal(row_of(ops, "model.py(10): forward")->calls, 3);
    assert_int_equal(row_of(ops, "(no source line)")->calls, 1);
    gp_ops_free(ops);
    ops = compute(t, GP_OPS_BY_ANNOTATION, false);
    assert_int_equal(row_of(ops, "attn")->calls, 4);
    assert_int_equal(row_of(ops, "attn")->self_gpu, 2800);
    gp_ops_free(ops);
    /* by kernel: k_mm launched twice by aten::mm; g1 by aten::inner from a replay */
    ops = compute(t, GP_OPS_BY_KERNEL, false);
    const gp_ops_row *k = row_of(ops, "k_mm");
    assert_int_equal(k->calls, 2);
    assert_string_equal(k->module, "aten::mm");
    assert_int_equal(row_of(ops, "g1")->replayed, 1);
    assert_string_equal(row_of(ops, "k_free")->module, "cudaLaunchKernel");
    assert_string_equal(row_of(ops, "k_orphan")->module, "(no launch event)");
    assert_int_equal(ops->total.self_gpu, 2815);
    gp_ops_free(ops);
    /* by instance: one row per op instance and per unattributed event */
    ops = compute(t, GP_OPS_BY_INSTANCE, false);
    assert_int_equal(ops->n_rows, 6);
    assert_int_equal(ops->total.self_gpu, 2815);
    gp_ops_free(ops);
    gp_trace_free(t);
}

static void perf_model_and_refusals(void **state)
{
    (void)state;
    gp_trace *t = attribution_trace(true);
    gp_ops *ops = compute(t, GP_OPS_BY_SHAPE, false);
    assert_int_equal(ops->modeled, 1);
    assert_int_equal(ops->bad_shapes, 1);
    assert_int_equal(ops->no_shapes, 0); /* outer and inner are not modeled ops */
    const gp_ops_row *mm = NULL;
    for (size_t i = 0; i < ops->n_rows; i++)
        if (ops->rows[i].modeled)
            mm = &ops->rows[i];
    assert_non_null(mm);
    assert_string_equal(mm->key, "aten::mm");
    assert_string_equal(mm->shapes, "[[64,128],[128,256]]"); /* blanks dropped */
    assert_int_equal(mm->category, GP_OPCAT_GEMM);
    assert_int_equal(mm->dtype, GP_DT_BF16);
    assert_true(mm->flops == 4194304.0);
    assert_true(mm->bytes == 114688.0);
    /* 1000 ns of GPU time: 4.194304 TFLOP/s, 0.114688 TB/s; roof on H100 SXM5:
     * max(4194304 / 989.5e3, 114688 / 3.35e3) = 34.2352 ns -> 3.42 %, memory-bound */
    assert_true(fabs(mm->tflops_per_s - 4.194304) < 1e-9);
    assert_true(fabs(mm->tb_per_s - 0.114688) < 1e-9);
    assert_true(fabs(mm->roof_pct - 100.0 * 114688 / 3.35e3 / 1000) < 1e-9);
    assert_int_equal(mm->bound, GP_BOUND_MEMORY);
    assert_non_null(strstr(ops->note.msg, "cannot use"));
    gp_ops_free(ops);
    gp_trace_free(t);
}

/* A hostile trace: three threads, each an aten::mm [0, H) launching one kernel [1, 1 + H) with
 * H = INT64_MAX / 2, so every sum of durations (the row's, the total's, the GPU time) passes
 * INT64_MAX; they saturate instead of overflowing (UBSan aborts the sanitizer build). */
static void duration_sums_saturate(void **state)
{
    (void)state;
    const gp_ns h = INT64_MAX / 2;
    gp_trace *t;
    assert_int_equal(gp_trace_create("huge ops", &t), GP_OK);
    for (int k = 0; k < 3; k++) {
        uint32_t cpu, s;
        assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1 + k, &cpu), GP_OK);
        assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7 + k, &s), GP_OK);
        add(t, cpu, GP_EV_CPU_OP, "aten::mm", 0, h, 0, 1 + k);
        add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 0, 1, 1 + k, 1 + k);
        add(t, s, GP_EV_KERNEL, "gemm", 1, h, 1 + k, 1 + k);
    }
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_ops_by by[] = {GP_OPS_BY_NAME, GP_OPS_BY_KERNEL};
    for (size_t b = 0; b < sizeof by / sizeof by[0]; b++) {
        gp_ops *ops = compute(t, by[b], false);
        assert_int_equal(ops->gpu_events, 3);
        assert_int_equal(ops->gpu_time, INT64_MAX);
        const gp_ops_row *r = row_of(ops, by[b] == GP_OPS_BY_NAME ? "aten::mm" : "gemm");
        assert_int_equal(r->calls, 3);
        assert_int_equal(r->self_gpu, INT64_MAX);
        assert_int_equal(r->gpu, INT64_MAX);
        assert_int_equal(r->gpu_busy, INT64_MAX);
        if (by[b] == GP_OPS_BY_NAME)
            assert_int_equal(r->cpu, INT64_MAX);
        assert_int_equal(ops->total.gpu, INT64_MAX);
        assert_int_equal(ops->total.gpu_busy, INT64_MAX);
        gp_ops_free(ops);
    }
    gp_trace_free(t);
}

/* A convolution's stride, padding and dilation are any int64 in a hostile trace: an output size
 * beyond int64, a negative padding or a dilation below 1 leave the shape unknown (no model). */
static void conv_params_out_of_range_are_unknown(void **state)
{
    (void)state;
    gp__op_model m;
    const char *dims = "[[1, 3, 8, 8], [4, 3, 3, 3], [4], [], [], [], [], [], []]";
    const char *types = "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"ScalarList\", "
                        "\"ScalarList\", \"ScalarList\", \"Scalar\", \"ScalarList\", \"Scalar\"]";
    char conc[256];
    /* stride, padding, dilation: the first is the control (out 8x8), the others are refused */
    static const char *const params[][3] = {
        {"[1, 1]", "[1, 1]", "[1, 1]"},
        {"[1, 1]", "[4611686018427387904, 0]", "[1, 1]"},  /* 2p overflows */
        {"[1, 1]", "[4611686018427387903, 0]", "[1, 1]"},  /* in + 2p overflows */
        {"[1, 1]", "[0, 0]", "[9223372036854775807, 1]"},  /* d (k - 1) overflows */
        {"[1, 1]", "[0, 0]", "[-9223372036854775807, 1]"}, /* dilation below 1 */
        {"[1, 1]", "[-4611686018427387904, 0]", "[1, 1]"}, /* negative padding */
        {"[-1, 1]", "[0, 0]", "[1, 1]"},                   /* stride below 1 */
    };
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
        snprintf(conc, sizeof conc,
                 "[\"\", \"\", \"\", \"%s\", \"%s\", \"%s\", \"False\", \"[0, 0]\", \"1\"]",
                 params[i][0], params[i][1], params[i][2]);
        bool ok =
            gp__op_model_compute("aten::convolution", GP_OPCAT_CONV_FWD, dims, types, conc, &m);
        assert_int_equal(ok, i == 0);
        if (ok) /* F = 2 * N * Cout * out_sp * Cin * k = 2 * 1 * 4 * 64 * 3 * 9 */
            assert_true(m.flops == 2.0 * 4 * 64 * 3 * 9);
    }
}

/* Formulas of docs/ops.md, each against a count done by hand. */
static void formulas(void **state)
{
    (void)state;
    gp__op_model m;
    const char *bf2 = "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"]";
    /* addmm(bias[1024], A[8944,1024], B[1024,1024]): 2MNK + MN = 18766086144 (TraceLens' figure) */
    assert_true(gp__op_model_compute("aten::addmm", GP_OPCAT_GEMM,
                                     "[[1024], [8944, 1024], [1024, 1024]]", bf2, NULL, &m));
    assert_true(m.flops == 18766086144.0);
    assert_true(m.bytes == (8944.0 * 1024 + 1024 * 1024 + 8944.0 * 1024) * 2 + 2048);
    /* conv [128,3,224,224] * [768,3,16,16], stride 16: out 14x14; F = 2*128*768*196*768 */
    assert_true(gp__op_model_compute(
        "aten::convolution", GP_OPCAT_CONV_FWD,
        "[[128, 3, 224, 224], [768, 3, 16, 16], [768], [], [], [], [], [], []]",
        "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"ScalarList\", \"ScalarList\", "
        "\"ScalarList\", \"Scalar\", \"ScalarList\", \"Scalar\"]",
        "[\"\", \"\", \"\", \"[16, 16]\", \"[0, 0]\", \"[1, 1]\", \"False\", \"[0, 0]\", \"1\"]",
        &m));
    assert_true(m.flops == 29595009024.0);
    assert_true(m.bytes == (128.0 * 3 * 224 * 224 + 768.0 * 768 + 128.0 * 768 * 196) * 2);
    /* a convolution without Concrete Inputs has no output size: refused */
    assert_false(gp__op_model_compute("aten::convolution", GP_OPCAT_CONV_FWD,
                                      "[[1, 3, 8, 8], [4, 3, 3, 3]]", bf2, NULL, &m));
    /* causal flash attention [16,16,559,64]: 4 B H N^2 d / 2 = 10239377408 */
    const char *q = "[[16, 16, 559, 64], [16, 16, 559, 64], [16, 16, 559, 64], [], [], [], []]";
    const char *qt = "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", "
                     "\"Scalar\", \"Scalar\", \"Scalar\"]";
    assert_true(gp__op_model_compute("aten::_scaled_dot_product_flash_attention", GP_OPCAT_ATTN_FWD,
                                     q, qt, "[\"\", \"\", \"\", \"0.\", \"True\", \"False\", \"\"]",
                                     &m));
    assert_true(m.flops == 10239377408.0);
    assert_true(m.bytes == 4.0 * 16 * 16 * 559 * 64 * 2);
    assert_true(gp__op_model_compute("aten::_scaled_dot_product_flash_attention", GP_OPCAT_ATTN_FWD,
                                     q, qt,
                                     "[\"\", \"\", \"\", \"0.\", \"False\", \"False\", \"\"]", &m));
    assert_true(m.flops == 2 * 10239377408.0);
    /* broadcast add [4,197,768] + [1,197,768]: 605184 FLOPs, (605184 + 151296 + 605184) * 2 B */
    assert_true(gp__op_model_compute(
        "aten::add", GP_OPCAT_ELEMENTWISE, "[[4, 197, 768], [1, 197, 768], []]",
        "[\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"]", NULL, &m));
    assert_true(m.flops == 605184.0 && m.bytes == 2723328.0);
    /* copy_ float <- long [559]: 559 FLOPs, 559 * (4 + 8) bytes */
    assert_true(gp__op_model_compute("aten::copy_", GP_OPCAT_ELEMENTWISE,
                                     "[[1, 1, 559], [1, 1, 559], []]",
                                     "[\"float\", \"long int\", \"Scalar\"]", NULL, &m));
    assert_true(m.flops == 559.0 && m.bytes == 6708.0);
    /* layer_norm [3136,8,768]: 5 FLOPs per element */
    assert_true(gp__op_model_compute("aten::layer_norm", GP_OPCAT_NORM_FWD,
                                     "[[3136, 8, 768], [], [768], [768], [], []]",
                                     "[\"c10::BFloat16\", \"ScalarList\", \"c10::BFloat16\", "
                                     "\"c10::BFloat16\", \"Scalar\", \"Scalar\"]",
                                     NULL, &m));
    assert_true(m.flops == 5.0 * 3136 * 8 * 768);
    /* refusals: malformed JSON, mismatched inner sizes, a shape that does not broadcast, no types
     */
    assert_false(
        gp__op_model_compute("aten::mm", GP_OPCAT_GEMM, "[[64, 128], [128", bf2, NULL, &m));
    assert_false(
        gp__op_model_compute("aten::bmm", GP_OPCAT_GEMM, "[[2, 3, 4], [2, 5, 6]]", bf2, NULL, &m));
    assert_false(
        gp__op_model_compute("aten::mul", GP_OPCAT_ELEMENTWISE, "[[3, 4], [5, 4]]", bf2, NULL, &m));
    assert_false(gp__op_model_compute("aten::mm", GP_OPCAT_GEMM, "[[2, 2], [2, 2]]", "", NULL, &m));
    assert_false(gp__op_model_compute("aten::mm", GP_OPCAT_GEMM, "[[2, 2], [2, 2]]",
                                      "[\"ScalarList\", \"Scalar\"]", NULL, &m));
    assert_int_equal(gp__op_category_of("aten::linear"), GP_OPCAT_GEMM);
    assert_int_equal(gp__op_category_of("aten::view"), GP_OPCAT_NONE);
}

static void peak_table(void **state)
{
    (void)state;
    gp_device_peak p;
    gp_device_peak_lookup("NVIDIA A100-SXM4-40GB", 42505273344LL, &p);
    assert_string_equal(p.entry, "NVIDIA A100 SXM4 40GB");
    assert_true(p.tbps == 1.555);
    gp_device_peak_lookup("NVIDIA A100 80GB PCIe", 85899345920LL, &p);
    assert_string_equal(p.entry, "NVIDIA A100 PCIe 80GB");
    gp_device_peak_lookup("NVIDIA H100 PCIe", 0, &p);
    assert_true(p.tflops[GP_DT_BF16] == 756);
    gp_device_peak_lookup("AMD Instinct MI300X", 0, &p);
    assert_true(p.tbps == 5.3);
    gp_device_peak_lookup("AMD Radeon Graphics", 0, &p);
    assert_null(p.entry);
    assert_true(p.tbps == 0);
    gp_ops_by by = GP_OPS_BY_NAME;
    gp_ops_sort sort = GP_OPS_SORT_GPU;
    assert_int_equal(gp_ops_by_parse("module", &by), GP_OK);
    assert_int_equal(by, GP_OPS_BY_MODULE);
    assert_int_equal(gp_ops_by_parse("modules", &by), GP_EINVAL);
    assert_int_equal(by, GP_OPS_BY_MODULE); /* untouched */
    assert_int_equal(gp_ops_sort_parse("efficiency", &sort), GP_OK);
    assert_int_equal(sort, GP_OPS_SORT_EFFICIENCY);
    assert_int_equal(gp_ops_sort_parse("speed", &sort), GP_EINVAL);
}

/* An unnamed device (vLLM's ROCm traces: "name": "") is told by its properties only where they
 * single out one entry: gfx942 with 304 CUs and 192 GiB, as in the named MI300X traces. */
static void unnamed_device_by_properties(void **state)
{
    (void)state;
    const int64_t gib = 1073741824LL;
    static const struct {
        int64_t mem_gib;
        int32_t major, minor, cus, warp;
        bool mi300x;
    } c[] = {
        {192, 9, 4, 304, 64, true},  /* modern_vllm_decode_graph's properties */
        {256, 9, 4, 304, 64, false}, /* MI325X: not in the table */
        {192, 9, 4, 228, 64, false}, /* another CU count */
        {192, 9, 0, 304, 64, false}, /* another architecture */
        {192, 9, 4, 304, 32, false}, /* 32-wide warps: not AMD */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        gp_trace *t;
        assert_int_equal(gp_trace_create("unnamed", &t), GP_OK);
        gp_device_props d = {.id = 0,
                             .name = str(t, ""),
                             .total_global_mem = c[i].mem_gib * gib,
                             .compute_major = c[i].major,
                             .compute_minor = c[i].minor,
                             .num_sms = c[i].cus,
                             .warp_size = c[i].warp};
        assert_int_equal(gp_trace_add_device(t, &d), GP_OK);
        assert_int_equal(gp_trace_finish(t), GP_OK);
        gp_device_peak p;
        gp__ops_trace_peak(t, 0, 0, &p);
        if (c[i].mi300x) {
            assert_string_equal(p.entry, "AMD Instinct MI300X");
            assert_true(p.tbps == 5.3);
            assert_non_null(strstr(p.device, "unnamed"));
        } else {
            assert_null(p.entry);
            assert_null(p.device);
        }
        assert_int_equal(p.num_sms, c[i].cus);
        gp_trace_free(t);
    }
    /* A named device keeps its name, whatever its properties. */
    gp_trace *t;
    assert_int_equal(gp_trace_create("named", &t), GP_OK);
    gp_device_props d = {.id = 0,
                         .name = str(t, "AMD Radeon Graphics"),
                         .total_global_mem = 192 * gib,
                         .compute_major = 9,
                         .compute_minor = 4,
                         .num_sms = 304,
                         .warp_size = 64};
    assert_int_equal(gp_trace_add_device(t, &d), GP_OK);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_device_peak p;
    gp__ops_trace_peak(t, 0, 0, &p);
    assert_null(p.entry);
    assert_string_equal(p.device, "AMD Radeon Graphics");
    gp_trace_free(t);
}

/* Unknown device: rates without a %, and the note says so; an override gives the %. */
static void unknown_device_and_override(void **state)
{
    (void)state;
    gp_trace *t;
    assert_int_equal(gp_trace_create("unknown", &t), GP_OK);
    uint32_t cpu, s;
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 0, &s), GP_OK);
    device(t, "Some Future GPU");
    add(t, cpu, GP_EV_CPU_OP, "aten::mm", 0, 100, 0, 7);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 10, 10, 1, 7);
    add(t, s, GP_EV_KERNEL, "gemm", 100, 1000000, 1, 7);
    shapes(t, 7, "[[1000, 1000], [1000, 1000]]", "[\"float\", \"float\"]", NULL);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_ops *ops = compute(t, GP_OPS_BY_NAME, false);
    const gp_ops_row *r = row_of(ops, "aten::mm");
    assert_true(fabs(r->tflops_per_s - 2.0) < 1e-9); /* 2e9 FLOPs in 1 ms */
    assert_true(r->roof_pct < 0);
    assert_non_null(strstr(ops->note.msg, "not in the peak table"));
    gp_ops_free(ops);
    /* override: 4 TFLOP/s, 1 TB/s: roof max(2e9 / 4e3, 12e6 / 1e3) = 500000 ns of 1 ms: 50 % */
    gp_ops_opts o;
    gp_ops_opts_init(&o);
    o.peak_tflops = 4;
    o.peak_tbps = 1;
    assert_int_equal(gp_ops_compute(gp_traces_const(&t), 1, &o, &ops, NULL), GP_OK);
    r = row_of(ops, "aten::mm");
    assert_true(fabs(r->roof_pct - 50.0) < 1e-9);
    assert_int_equal(r->bound, GP_BOUND_COMPUTE);
    assert_true(ops->peak.overridden);
    gp_ops_free(ops);
    gp_trace_free(t);
}

/* Renders ops into memory and compares it with tests/ops/golden/<name>. */
static void check_golden(const char *name, gp_status (*render)(const gp_ops *, size_t, FILE *),
                         const gp_ops *ops)
{
    char *text = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);
    assert_non_null(fp);
    assert_int_equal(render(ops, 0, fp), GP_OK);
    fclose(fp);
    char rel[256];
    snprintf(rel, sizeof rel, "tests/ops/golden/%s", name);
    gp_test_check_golden(rel, text, len);
    free(text);
}

static gp_status render_html(const gp_ops *ops, size_t top_n, FILE *fp)
{
    return gp__render_ops_html(ops, top_n, "ops", fp);
}

static void golden_outputs(void **state)
{
    (void)state;
    gp_trace *t = attribution_trace(true);
    gp_ops *ops = compute(t, GP_OPS_BY_NAME, false);
    check_golden("by_name.txt", gp_ops_render_text, ops);
    check_golden("by_name.json", gp_ops_render_json, ops);
    check_golden("by_name.csv", gp_ops_render_csv, ops);
    gp_ops_free(ops);
    ops = compute(t, GP_OPS_BY_INSTANCE, false);
    check_golden("by_instance.txt", gp_ops_render_text, ops);
    gp_ops_free(ops);
    ops = compute(t, GP_OPS_BY_KERNEL, false);
    check_golden("by_kernel.txt", gp_ops_render_text, ops);
    gp_ops_free(ops);
    ops = compute(t, GP_OPS_BY_SHAPE, false);
    check_golden("by_shape.html", render_html, ops);
    gp_ops_free(ops);
    gp_trace_free(t);
}

/* Issue 35: a CPU-only trace (no GPU work) sorted by self_gpu, every value 0, came out in name
 * order. The rows follow self CPU time instead (gpu: CPU total), and ops->sort says so; with GPU
 * work the sort asked for stays. */
static void cpu_only_sorts_by_cpu(void **state)
{
    (void)state;
    gp_trace *t;
    assert_int_equal(gp_trace_create("cpu_only", &t), GP_OK);
    uint32_t cpu;
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    add(t, cpu, GP_EV_CPU_OP, "alpha", 0, 60, 0, 1);
    add(t, cpu, GP_EV_CPU_OP, "gamma", 5, 20, 0, 2);
    add(t, cpu, GP_EV_CPU_OP, "alpha_tail", 30, 30, 0, 3);
    add(t, cpu, GP_EV_CPU_OP, "beta", 100, 30, 0, 4);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_ops *ops = compute(t, GP_OPS_BY_NAME, false);
    assert_int_equal(ops->sort, GP_OPS_SORT_SELF_CPU);
    assert_int_equal(ops->n_rows, 4);
    /* self: alpha 60 - 20 - 30 = 10, alpha_tail 30, beta 30, gamma 20; ties by name */
    const char *want[] = {"alpha_tail", "beta", "gamma", "alpha"};
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(ops->rows[i].key, want[i]);
    gp_ops_free(ops);
    gp_ops_opts o;
    gp_ops_opts_init(&o);
    o.sort = GP_OPS_SORT_GPU;
    assert_int_equal(gp_ops_compute(gp_traces_const(&t), 1, &o, &ops, NULL), GP_OK);
    assert_int_equal(ops->sort, GP_OPS_SORT_CPU);
    assert_string_equal(ops->rows[0].key, "alpha"); /* CPU total 60 */
    gp_ops_free(ops);
    gp_trace_free(t);
    t = attribution_trace(false); /* GPU work: self_gpu stays */
    ops = compute(t, GP_OPS_BY_NAME, false);
    assert_int_equal(ops->sort, GP_OPS_SORT_SELF_GPU);
    gp_ops_free(ops);
    gp_trace_free(t);
}

/* The roofline's leaves: aten::linear (ext 10) holds aten::addmm (ext 11), both modeled GEMMs of
 * the same product ([64,128] x [128,256] + bias), and addmm launches the kernel. linear's model
 * is the time of the addmm inside it: linear is modeled but no leaf (leaves 0), addmm a leaf. A
 * lone aten::mm (ext 12, no modeled op inside) is a leaf too. */
static void roofline_leaves(void **state)
{
    (void)state;
    gp_trace *t;
    assert_int_equal(gp_trace_create("leaves", &t), GP_OK);
    uint32_t cpu, s7;
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &s7), GP_OK);
    device(t, "NVIDIA H100 80GB HBM3");
    add(t, cpu, GP_EV_CPU_OP, "aten::linear", 0, 500, 0, 10);
    add(t, cpu, GP_EV_CPU_OP, "aten::addmm", 100, 300, 0, 11);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 150, 10, 1, 11);
    add(t, cpu, GP_EV_CPU_OP, "aten::mm", 600, 100, 0, 12);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 610, 10, 2, 12);
    add(t, s7, GP_EV_KERNEL, "k_gemm", 1000, 300, 1, 11);
    add(t, s7, GP_EV_KERNEL, "k_mm", 2000, 300, 2, 12);
    const char *bf = "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"]";
    shapes(t, 10, "[[64, 128], [256, 128], [256]]", bf, NULL);
    shapes(t, 11, "[[256], [64, 128], [128, 256]]", bf, NULL);
    shapes(t, 12, "[[64, 128], [128, 256]]", bf, NULL);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_ops *ops = compute(t, GP_OPS_BY_NAME, false);
    const gp_ops_row *lin = row_of(ops, "aten::linear"), *mm = row_of(ops, "aten::addmm"),
                     *m2 = row_of(ops, "aten::mm");
    assert_int_equal(lin->modeled, 1);
    assert_int_equal(lin->leaves, 0);
    assert_int_equal(mm->modeled, 1);
    assert_int_equal(mm->leaves, 1);
    assert_int_equal(m2->leaves, 1);
    gp_ops_free(ops);
    gp_trace_free(t);
}

/* A real trace read with and without the shapes: the same attribution; the partition holds. */
static void real_vit(void **state)
{
    (void)state;
    if (!gp_test_have_shared_traces())
        skip();
    char path[4096];
    const char *shared = getenv("GP_SHARED_DIR");
    snprintf(path, sizeof path, "%s/traces/modern_h100_vit.json.gz", shared ? shared : "../shared");
    gp_read_opts rd;
    gp_read_opts_init(&rd);
    rd.keep_op_shapes = true;
    rd.threads = 3; /* the pieces of a parallel read merge their shape tables */
    gp_trace *t;
    assert_int_equal(gp_trace_read(path, &rd, &t, NULL), GP_OK);
    assert_true(t->n_op_shapes > 1000);
    gp_ops *ops = compute(t, GP_OPS_BY_NAME, false);
    assert_int_equal(ops->total.self_gpu, ops->gpu_time);
    assert_int_equal(ops->gpu_events, 156);
    const gp_ops_row *addmm = row_of(ops, "aten::addmm");
    assert_int_equal(addmm->calls, 73);
    assert_int_equal(addmm->modeled, 73);
    assert_true(addmm->roof_pct > 0 && addmm->roof_pct < 100);
    gp_ops_free(ops);
    gp_trace_free(t);
    rd.keep_op_shapes = false;
    assert_int_equal(gp_trace_read(path, &rd, &t, NULL), GP_OK);
    assert_int_equal(t->n_op_shapes, 0);
    gp_trace_free(t);
}

/* The instances kept beside the table by shape (gp__ops_compute_kept, one walk) are the table by
 * instance's modeled, attributed rows, in walk order: compared field by field, after sorting them
 * as that table is sorted, on a real trace with shapes (timesformer: its attention products are
 * what the findings' unfused-attention rule reads). The shape table itself is the plain one. */
static void kept_instances_are_the_table_by_instance(void **state)
{
    (void)state;
    if (!gp_test_have_shared_traces())
        skip();
    char path[4096];
    const char *shared = getenv("GP_SHARED_DIR");
    snprintf(path, sizeof path, "%s/traces/modern_h100_timesformer.json.gz",
             shared ? shared : "../shared");
    gp_read_opts rd;
    gp_read_opts_init(&rd);
    rd.keep_op_shapes = true;
    gp_trace *t;
    assert_int_equal(gp_trace_read(path, &rd, &t, NULL), GP_OK);
    gp_ops_opts o;
    gp_ops_opts_init(&o);
    o.by = GP_OPS_BY_SHAPE;
    gp_ops *kept = NULL, *plain = NULL, *inst = NULL;
    assert_int_equal(gp__ops_compute_kept(gp_traces_const(&t), 1, &o, &kept), GP_OK);
    assert_int_equal(gp_ops_compute(gp_traces_const(&t), 1, &o, &plain, NULL), GP_OK);
    o.by = GP_OPS_BY_INSTANCE;
    assert_int_equal(gp_ops_compute(gp_traces_const(&t), 1, &o, &inst, NULL), GP_OK);
    size_t n_plain = 0;
    assert_null(gp__ops_instances(plain, &n_plain));
    assert_int_equal(n_plain, 0);
    assert_int_equal(kept->n_rows, plain->n_rows);
    for (size_t i = 0; i < kept->n_rows; i++) {
        assert_string_equal(kept->rows[i].key, plain->rows[i].key);
        assert_int_equal(kept->rows[i].gpu, plain->rows[i].gpu);
    }
    size_t n = 0;
    const gp_ops_row *k = gp__ops_instances(kept, &n);
    gp_ops_row *sorted = malloc((n ? n : 1) * sizeof *sorted);
    assert_non_null(sorted);
    assert_int_equal(gp__ops_sort_rows(k, n, inst->sort, sorted), GP_OK);
    size_t m = 0;
    for (size_t i = 0; i < inst->n_rows; i++) {
        const gp_ops_row *r = &inst->rows[i];
        if (!r->modeled || r->unattributed)
            continue;
        assert_true(m < n);
        const gp_ops_row *q = &sorted[m++];
        assert_string_equal(q->key, r->key);
        assert_string_equal(q->shapes, r->shapes);
        assert_string_equal(q->types, r->types);
        assert_int_equal(q->ts, r->ts);
        assert_int_equal(q->cpu, r->cpu);
        assert_int_equal(q->gpu, r->gpu);
        assert_int_equal(q->external_id, r->external_id);
        assert_int_equal(q->model_external_id, r->model_external_id);
        assert_int_equal(q->category, r->category);
        assert_int_equal(q->dtype, r->dtype);
        assert_true(q->flops == r->flops && q->bytes == r->bytes);
        assert_true((q->module == NULL) == (r->module == NULL));
        assert_true((q->line == NULL) == (r->line == NULL));
    }
    assert_int_equal(m, n);
    uint64_t modeled = 0; /* every modeled instance of the shape rows is kept, no other */
    for (size_t i = 0; i < kept->n_rows; i++)
        modeled += kept->rows[i].modeled;
    assert_true(n > 0);
    assert_int_equal(modeled, n);
    gp__ops_drop_instances(kept);
    assert_null(gp__ops_instances(kept, &n));
    assert_int_equal(n, 0);
    free(sorted);
    gp_ops_free(kept);
    gp_ops_free(plain);
    gp_ops_free(inst);
    gp_trace_free(t);
}

/* gp__ops_rows_by_time is the findings' two sorts in one: the rows in the table's order (by each
 * sort key), then stably by start and longer CPU time first. Rows with many ties (12 starts, 3 CPU
 * times, 3 keys, absent and present shapes and types) are put both ways; their external ids
 * (unique) must come out in the same order. Sorting by time alone fails it (the table order
 * decides the ties), and so does any tie-break that is not the table's. */
static int cmp_row_ptr_time(const void *pa, const void *pb)
{
    const gp_ops_row *a = *(const gp_ops_row *const *)pa, *b = *(const gp_ops_row *const *)pb;
    return a->ts != b->ts ? (a->ts > b->ts) - (a->ts < b->ts)
                          : (b->cpu > a->cpu) - (b->cpu < a->cpu);
}

static void rows_by_time_are_table_order_then_time(void **state)
{
    (void)state;
    enum { N = 400 };
    static const char *const keys[] = {"aten::bmm", "aten::softmax", "aten::mm"};
    static const char *const texts[] = {NULL, "[[8,4],[4,8]]", "[[2,2]]"};
    gp_ops_row *rows = calloc(N, sizeof *rows), *table = calloc(N, sizeof *table);
    const gp_ops_row **want = calloc(N, sizeof *want), **got = calloc(N, sizeof *got);
    assert_true(rows && table && want && got);
    uint64_t s = 0x243f6a8885a308d3ull;
    for (size_t i = 0; i < N; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        gp_ops_row *r = &rows[i];
        r->key = keys[s % 3];
        r->shapes = texts[(s >> 4) % 3];
        r->types = texts[(s >> 8) % 2];
        r->ts = (gp_ns)((s >> 12) % 12);
        r->cpu = (gp_ns)((s >> 16) % 3);
        r->gpu = (gp_ns)((s >> 20) % 4);
        r->self_gpu = (gp_ns)((s >> 24) % 4);
        r->self_cpu = (gp_ns)((s >> 28) % 4);
        r->calls = (s >> 32) % 3;
        r->tflops_per_s = (double)((s >> 36) % 3);
        r->roof_pct = (double)((s >> 40) % 3) - 1;
        r->rank = (int32_t)((s >> 44) % 2);
        r->unattributed = (s >> 48) % 2;
        r->external_id = (int64_t)i;
    }
    for (int sort = 0; sort < GP_OPS_SORT_COUNT; sort++) {
        assert_int_equal(gp__ops_sort_rows(rows, N, (gp_ops_sort)sort, table), GP_OK);
        for (size_t i = 0; i < N; i++)
            want[i] = &table[i];
        qsort(want, N, sizeof *want, cmp_row_ptr_time); /* a stable order: ties broken below */
        for (size_t i = 1; i < N; i++) /* qsort is not stable: restore the table order on ties */
            for (size_t j = i;
                 j > 0 && cmp_row_ptr_time(&want[j - 1], &want[j]) == 0 && want[j - 1] > want[j];
                 j--) {
                const gp_ops_row *x = want[j];
                want[j] = want[j - 1];
                want[j - 1] = x;
            }
        assert_int_equal(gp__ops_rows_by_time(rows, N, (gp_ops_sort)sort, got), GP_OK);
        for (size_t i = 0; i < N; i++)
            if (got[i]->external_id != want[i]->external_id)
                fail_msg("sort %d: position %zu holds row %lld, expected row %lld", sort, i,
                         (long long)got[i]->external_id, (long long)want[i]->external_id);
    }
    free(rows);
    free(table);
    free(want);
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(attribution_by_name),
        cmocka_unit_test(outside_op_note_names_a_row),
        cmocka_unit_test(no_instances_in_any_grouping),
        cmocka_unit_test(groupings),
        cmocka_unit_test(perf_model_and_refusals),
        cmocka_unit_test(formulas),
        cmocka_unit_test(duration_sums_saturate),
        cmocka_unit_test(conv_params_out_of_range_are_unknown),
        cmocka_unit_test(peak_table),
        cmocka_unit_test(unnamed_device_by_properties),
        cmocka_unit_test(unknown_device_and_override),
        cmocka_unit_test(golden_outputs),
        cmocka_unit_test(cpu_only_sorts_by_cpu),
        cmocka_unit_test(roofline_leaves),
        cmocka_unit_test(real_vit),
        cmocka_unit_test(kept_instances_are_the_table_by_instance),
        cmocka_unit_test(rows_by_time_are_table_order_then_time),
    };
    return gp_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
