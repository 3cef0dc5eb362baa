/* Semantics that PyTorch 2.x traces need (issue: right figures on today's traces): self time from
 * nesting, HTA's GPU event set (a GPU-side annotation without args.stream is not GPU work, a
 * Triton cpu_op with args.stream is), HTA's negative rounded lengths, GPU-side step selection. Each
 * test reads a small Kineto document written here, shaped like the real traces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "gpuprof/analyze.h"
#include "gpuprof/trace.h"

static gp_trace *read_doc(const char *doc)
{
    gp_read_opts o;
    gp_read_opts_init(&o);
    o.quiet = true;
    gp_trace *t = NULL;
    gp_error err = {0};
    assert_int_equal(gp_trace_read_buffer(doc, strlen(doc), "unit", &o, &t, &err), GP_OK);
    return t;
}

static const gp_track *cpu_track(const gp_trace *t)
{
    for (size_t i = 0; i < t->n_tracks; i++)
        if (t->tracks[i].kind == GP_TRACK_CPU_THREAD)
            return &t->tracks[i];
    fail();
    return NULL;
}

/* python frame [0,100) > aten::linear [10,60) > aten::addmm [20,50) > cudaLaunchKernel [30,35);
 * a second op [70,90) whose child runs past it [80,95). */
static const char NESTED[] =
    "{\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"model.py(10): forward\",\"pid\":1,"
    "\"tid\":1,\"ts\":0,\"dur\":100},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,\"ts\":10,"
    "\"dur\":50},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":1,\"tid\":1,\"ts\":20,"
    "\"dur\":30},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":30,\"dur\":5,\"args\":{\"correlation\":1}},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::relu\",\"pid\":1,\"tid\":1,\"ts\":70,"
    "\"dur\":20},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::clamp_min\",\"pid\":1,\"tid\":1,\"ts\":80,"
    "\"dur\":15},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":40,\"dur\":10,"
    "\"args\":{\"stream\":7,\"correlation\":1}}]}";

static void self_times_follow_nesting(void **state)
{
    (void)state;
    gp_trace *t = read_doc(NESTED);
    const gp_track *tr = cpu_track(t);
    assert_int_equal(tr->n_events, 6);
    gp_ns self[6];
    assert_int_equal(gp_track_self_times(tr, self), GP_OK);
    /* track order: frame, linear, addmm, launch, relu, clamp_min */
    /* us; the frame is innermost in [0,10), [60,70) and [95,100): clamp_min, running past relu,
     * stays innermost until 95 */
    gp_ns want[6] = {25, 50 - 30, 30 - 5, 5, 20 - 10, 15};
    gp_ns sum = 0;
    for (int i = 0; i < 6; i++) {
        assert_int_equal(self[i], want[i] * 1000);
        assert_true(self[i] >= 0 && self[i] <= tr->events[i].dur);
        sum += self[i];
    }
    /* The self times partition the union of the thread's events: [0, 100) us here. */
    assert_int_equal(sum, 100000);
    gp_trace_free(t);
}

static void cpu_active_leaves_python_frames_out(void **state)
{
    (void)state;
    gp_trace *t = read_doc(NESTED);
    gp_analysis *a = NULL;
    gp_error err = {0};
    assert_int_equal(gp_analyze_trace(t, NULL, &a, &err), GP_OK);
    /* ops and the launch: [10,60) and [70,95) = 75 ns, not the frame's 100 */
    assert_int_equal(a->ranks[0].activity.cpu_active, 75 * 1000);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* Two kernels, a GPU-side ProfilerStep over them without args.stream (as Kineto writes it), and a
 * Triton cpu_op carrying args.stream 7 (as Inductor writes it). Times in us. */
static const char MODERN[] =
    "{\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#3\",\"pid\":1,\"tid\":1,"
    "\"ts\":0,\"dur\":100},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"triton_poi_fused_0\",\"pid\":1,\"tid\":1,"
    "\"ts\":1,\"dur\":4,\"args\":{\"stream\":7,\"kernel_backend\":\"triton\"}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":2,\"dur\":2,\"args\":{\"correlation\":1}},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
    "\"ts\":6,\"dur\":2,\"args\":{\"correlation\":2}},"
    "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"ProfilerStep#3\",\"pid\":0,"
    "\"tid\":7,\"ts\":10,\"dur\":90},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"triton_poi_fused_0\",\"pid\":0,\"tid\":7,"
    "\"ts\":10,\"dur\":10,\"args\":{\"stream\":7,\"correlation\":1}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":50,"
    "\"dur\":10,\"args\":{\"stream\":7,\"correlation\":2}}]}";

static void hta_event_set_of_modern_traces(void **state)
{
    (void)state;
    gp_trace *t = read_doc(MODERN);
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    gp_analysis *a = NULL;
    gp_error err = {0};
    /* Default mode: kernels only. GPU span [10, 60): 20 busy, 30 idle. */
    assert_int_equal(gp_analyze_trace(t, &o, &a, &err), GP_OK);
    assert_int_equal(a->ranks[0].temporal.kernel_time, 50000);
    assert_int_equal(a->ranks[0].temporal.idle, 30000);
    gp_analysis_free(a);
    /* HTA mode: the GPU-side annotation (no args.stream) is not GPU work, so idle stays; the
     * Triton cpu_op (args.stream 7) is: its [1, 5) widens the span to [1, 60) and adds 4 us. */
    o.hta = true;
    o.steps = GP_STEPS_HTA;
    assert_int_equal(gp_analyze_trace(t, &o, &a, &err), GP_OK);
    const gp_temporal *tb = &a->ranks[0].temporal;
    assert_int_equal(tb->kernel_time, 59000);
    assert_int_equal(tb->compute, 24000);
    assert_int_equal(tb->idle, 35000);
    gp_analysis_free(a);
    gp_trace_free(t);
}

static void gpu_side_step_selects_gpu_work(void **state)
{
    (void)state;
    /* A kernel that ran before the GPU-side step (queued earlier, no launch in the trace). */
    char doc[4096];
    size_t n = strlen(MODERN);
    memcpy(doc, MODERN, n - 2); /* without the closing "]}" */
    strcpy(doc + n - 2, ",{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"early\",\"pid\":0,\"tid\":7,"
                        "\"ts\":3,\"dur\":5,\"args\":{\"stream\":7}}]}");
    gp_trace *t = read_doc(doc);
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    gp_analysis *a = NULL;
    gp_error err = {0};
    assert_int_equal(gp_analyze_trace(t, &o, &a, &err), GP_OK);
    assert_int_equal(a->ranks[0].temporal.kernel_time, 57000); /* [3, 60) */
    assert_non_null(strstr(a->ranks[0].note.msg, "before the first GPU-side ProfilerStep"));
    gp_analysis_free(a);
    assert_int_equal(gp_analyze_parse_steps("3", &o), GP_OK);
    assert_int_equal(gp_analyze_trace(t, &o, &a, &err), GP_OK);
    assert_int_equal(a->ranks[0].temporal.kernel_time, 50000); /* [10, 60): the GPU-side step */
    assert_int_equal(a->ranks[0].gpu_events, 2);
    gp_analysis_free(a);
    gp_trace_free(t);
}

static void hta_negative_lengths_never_make_a_negative_figure(void **state)
{
    (void)state;
    /* Sub-us memsets inside no us boundary round inward to a negative length; a kernel overlaps
     * them so HTA's union would give non-compute < 0 (HTA fails on such traces). */
    const char *doc = "{\"traceEvents\":["
                      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
                      "\"ts\":10.0,\"dur\":20.0,\"args\":{\"stream\":7}},"
                      "{\"ph\":\"X\",\"cat\":\"gpu_memset\",\"name\":\"Memset (Device)\",\"pid\":0,"
                      "\"tid\":7,\"ts\":30.2,\"dur\":0.5,\"args\":{\"stream\":7}},"
                      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
                      "\"ts\":31.0,\"dur\":9.0,\"args\":{\"stream\":7}}]}";
    gp_trace *t = read_doc(doc);
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    o.hta = true;
    gp_analysis *a = NULL;
    gp_error err = {0};
    assert_int_equal(gp_analyze_trace(t, &o, &a, &err), GP_OK);
    const gp_rank_analysis *r = &a->ranks[0];
    assert_int_equal(r->rounded_negative, 1);
    assert_true(r->temporal.idle >= 0 && r->temporal.compute >= 0 && r->temporal.non_compute >= 0);
    assert_int_equal(r->temporal.idle + r->temporal.compute + r->temporal.non_compute,
                     r->temporal.kernel_time);
    for (size_t i = 0; i < r->n_kernels; i++)
        assert_true(r->kernels[i].sum >= 0);
    gp_analysis_free(a);
    gp_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(self_times_follow_nesting),
        cmocka_unit_test(cpu_active_leaves_python_frames_out),
        cmocka_unit_test(hta_event_set_of_modern_traces),
        cmocka_unit_test(gpu_side_step_selects_gpu_work),
        cmocka_unit_test(hta_negative_lengths_never_make_a_negative_figure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
