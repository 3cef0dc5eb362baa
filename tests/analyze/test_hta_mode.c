/* HTA mode's step cut and rounding (docs/analyses.md, "Step selection" and "Rounding"), one
 * hand-built trace per rule; every expected figure is worked out in the comment above its test.
 * HTA's rules (HolisticTraceAnalysis @ f4d0062c, hta/common/trace.py,
 * _filter_irrelevant_gpu_kernels): the steps are the distinct names containing "ProfilerStep"; with
 * two or more, the cut is the latest start of any event with such a name that is not a GPU event
 * (args.stream absent or -1), and only CPU events before the cut and the GPU work they launched are
 * kept. Times are json.loads binary64 microseconds, ceil(ts) and floor(ts + dur). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "gpuprof/analyze.h"
#include "gpuprof/trace.h"

static gp_strid S(gp_trace *t, const char *s)
{
    gp_strid id;
    assert_int_equal(gp_trace_intern(t, s, strlen(s), &id), GP_OK);
    return id;
}

static void add(gp_trace *t, uint32_t track, gp_event_kind kind, const char *name, gp_ns ts,
                gp_ns dur, int64_t corr, uint32_t extra, uint32_t flags)
{
    gp_event ev = {.ts = ts,
                   .dur = dur,
                   .correlation = corr,
                   .name = S(t, name),
                   .extra = extra,
                   .flags = flags,
                   .track = track,
                   .kind = (uint8_t)kind};
    assert_int_equal(gp_trace_add_event(t, &ev), GP_OK);
}

/* A GPU event with args.stream = stream and device 0. */
static void gpu(gp_trace *t, uint32_t track, gp_event_kind kind, const char *name, gp_ns ts,
                gp_ns dur, int64_t corr, int64_t stream)
{
    gp_gpu_info gi;
    gp_gpu_info_init(&gi);
    gi.device = 0;
    gi.stream = stream;
    uint32_t extra;
    assert_int_equal(gp_trace_add_gpu_info(t, &gi, &extra), GP_OK);
    add(t, track, kind, name, ts, dur, corr, extra, 0);
}

static gp_analysis *run_hta(const gp_trace *t)
{
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    o.hta = true;
    o.steps = GP_STEPS_HTA;
    gp_analysis *a = NULL;
    gp_error err = {0};
    assert_int_equal(gp_analyze_trace(t, &o, &a, &err), GP_OK);
    assert_int_equal(a->n_ranks, 1);
    return a;
}

/* How the GPU-side steps are written. */
enum gside { STREAMLESS, WITH_STREAM, ONE_NAME };

/* CPU thread (ns): ProfilerStep#1 [0, 10000), ProfilerStep#2 [10000, 20000) (ONE_NAME: #1 only);
 * cudaLaunchKernel corr 1 at 1000, corr 2 at 12000, corr 3 at 17000.
 * Stream 7: K1 [5000, 8000) corr 1, K2 [20000, 22000) corr 2, K3 [25000, 27000) corr 3.
 * GPU side: gpu_user_annotation ProfilerStep#1 [4000, 15000) and ProfilerStep#2 [15000, 30000)
 * (ONE_NAME: #1 [4000, 30000) only), without a stream (the tid is the stream: HTA reads no
 * args.stream, so they are CPU events to it) or, WITH_STREAM, with args.stream 7. */
static gp_trace *step_trace(enum gside g)
{
    gp_trace *t;
    assert_int_equal(gp_trace_create("hta-steps", &t), GP_OK);
    uint32_t cpu, s7;
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &s7), GP_OK);
    add(t, cpu, GP_EV_USER_ANNOTATION, "ProfilerStep#1", 0, 10000, 0, 0, 0);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 1000, 500, 1, 0, 0);
    if (g != ONE_NAME)
        add(t, cpu, GP_EV_USER_ANNOTATION, "ProfilerStep#2", 10000, 10000, 0, 0, 0);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 12000, 500, 2, 0, 0);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 17000, 500, 3, 0, 0);
    if (g == WITH_STREAM) {
        gpu(t, s7, GP_EV_GPU_USER_ANNOTATION, "ProfilerStep#1", 4000, 11000, 0, 7);
        gpu(t, s7, GP_EV_GPU_USER_ANNOTATION, "ProfilerStep#2", 15000, 15000, 0, 7);
    } else if (g == STREAMLESS) {
        add(t, s7, GP_EV_GPU_USER_ANNOTATION, "ProfilerStep#1", 4000, 11000, 0, 0,
            GP_EVF_STREAM_FROM_TID);
        add(t, s7, GP_EV_GPU_USER_ANNOTATION, "ProfilerStep#2", 15000, 15000, 0, 0,
            GP_EVF_STREAM_FROM_TID);
    } else {
        add(t, s7, GP_EV_GPU_USER_ANNOTATION, "ProfilerStep#1", 4000, 26000, 0, 0,
            GP_EVF_STREAM_FROM_TID);
    }
    gpu(t, s7, GP_EV_KERNEL, "k1", 5000, 3000, 1, 7);
    gpu(t, s7, GP_EV_KERNEL, "k2", 20000, 2000, 2, 7);
    gpu(t, s7, GP_EV_KERNEL, "k3", 25000, 2000, 3, 7);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    return t;
}

/* Streamless GPU-side steps: the cut is the GPU-side ProfilerStep#2's start, 15000 (after the CPU
 * side's last step start, 10000): launches 1 and 2 are kept, 3 (17000) is not. GPU events: K1,
 * K2 = 2 (the old CPU-side cut, 10000, kept K1 only); kernel_time = 22 - 5 = 17 us. Both CPU
 * steps start before the cut: 2 of 2 kept, the last in part: 5000 ns of its 10000 = 50 %. */
static void gpu_side_streamless_step_moves_the_cut(void **state)
{
    (void)state;
    gp_trace *t = step_trace(STREAMLESS);
    gp_analysis *a = run_hta(t);
    const gp_rank_analysis *r = &a->ranks[0];
    assert_int_equal(r->gpu_events, 2);
    assert_int_equal(r->temporal.kernel_time, 17000);
    assert_int_equal(r->steps_total, 2);
    assert_int_equal(r->steps_kept, 2);
    assert_non_null(strstr(r->note.msg, "GPU-side ProfilerStep#2"));
    assert_non_null(strstr(r->note.msg, "0.005 ms into the last CPU-side step ProfilerStep#2"));
    assert_non_null(strstr(r->note.msg, "first 50.0 %"));
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* GPU-side steps with args.stream are GPU events to HTA: the cut is the CPU side's 10000, so
 * only launch 1 is kept: 1 GPU event, kernel_time = K1 = 3 us, 1 of 2 steps kept. */
static void gpu_side_step_with_stream_does_not(void **state)
{
    (void)state;
    gp_trace *t = step_trace(WITH_STREAM);
    gp_analysis *a = run_hta(t);
    const gp_rank_analysis *r = &a->ranks[0];
    assert_int_equal(r->gpu_events, 1);
    assert_int_equal(r->temporal.kernel_time, 3000);
    assert_int_equal(r->steps_kept, 1);
    assert_null(strstr(r->note.msg, "GPU-side"));
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* One step name (CPU-side and GPU-side ProfilerStep#1): HTA counts distinct names, so nothing is
 * cut although two step events exist: 3 GPU events, kernel_time = 27 - 5 = 22 us. */
static void one_step_name_cuts_nothing(void **state)
{
    (void)state;
    gp_trace *t = step_trace(ONE_NAME);
    gp_analysis *a = run_hta(t);
    const gp_rank_analysis *r = &a->ranks[0];
    assert_int_equal(r->gpu_events, 3);
    assert_int_equal(r->temporal.kernel_time, 22000);
    assert_non_null(strstr(r->note.msg, "One ProfilerStep only"));
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* One kernel at base + start_ns, 10800 ns long, launched by a 3000 ns call at start_ns - 5000 (no
 * steps). */
static gp_trace *one_kernel(gp_ns start_ns)
{
    gp_trace *t;
    assert_int_equal(gp_trace_create("hta-rounding", &t), GP_OK);
    uint32_t cpu, s7;
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &s7), GP_OK);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", start_ns - 5000, 3000, 1, 0, 0);
    gpu(t, s7, GP_EV_KERNEL, "k", start_ns, 10800, 1, 7);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    return t;
}

/* Rounding. Epoch-like start 1.7e15 us + 0.100 us: binary64's spacing there is 0.25 us, so
 * json.loads gives 1700000000000000.0 and ceil leaves it; the end, 0.0 + 10.8 = ...010.8 as a
 * double (spacing 0.25: ...010.75), floors to ...010: HTA's length is 10 us (checked with Python:
 * math.floor(float("1700000000000000.100") + float("10.800")) - math.ceil(...) == 10). The exact
 * decimal would give ceil(...000.1) = ...001 and floor(...010.9) = ...010: 9 us. Below 2^43 us
 * (1e6 us + 0.100) the double holds the fraction and HTA's answer is the exact one, 9 us. The
 * default mode keeps ns: 10800. */
static void binary64_rounding(void **state)
{
    (void)state;
    gp_trace *t = one_kernel((gp_ns)1700000000000000100LL);
    gp_analysis *a = run_hta(t);
    assert_int_equal(a->ranks[0].temporal.kernel_time, 10000);
    gp_analysis_free(a);
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    gp_error err = {0};
    assert_int_equal(gp_analyze_trace(t, &o, &a, &err), GP_OK);
    assert_int_equal(a->ranks[0].temporal.kernel_time, 10800);
    gp_analysis_free(a);
    gp_trace_free(t);

    t = one_kernel((gp_ns)1000000100LL);
    a = run_hta(t);
    assert_int_equal(a->ranks[0].temporal.kernel_time, 9000);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* HTA's critical path (cp_hta, the whole trace) of one_kernel rounds the kernel as HTA mode's
 * breakdowns do (binary64_rounding above): at 1.7e15 us + 0.100 its GPU compute time is 10 us (the
 * exact decimal's rounding gave 9), below 2^43 us 9 us. */
static gp_ns cp_gpu_compute(gp_ns start_ns)
{
    gp_trace *t = one_kernel(start_ns);
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    o.hta = true;
    o.steps = GP_STEPS_HTA;
    o.cp_hta = true;
    o.cp_annotation = "";
    gp_analysis *a = NULL;
    gp_error err = {0};
    assert_int_equal(gp_analyze_trace(t, &o, &a, &err), GP_OK);
    const gp_rank_analysis *r = &a->ranks[0];
    assert_int_equal(r->n_critical_paths, 1);
    assert_true(r->critical_paths[0].valid);
    gp_ns v = r->critical_paths[0].by_class[GP_CP_GPU_COMPUTE];
    gp_analysis_free(a);
    gp_trace_free(t);
    return v;
}

static void binary64_rounding_critical_path(void **state)
{
    (void)state;
    assert_int_equal(cp_gpu_compute((gp_ns)1700000000000000100LL), 10000);
    assert_int_equal(cp_gpu_compute((gp_ns)1000000100LL), 9000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpu_side_streamless_step_moves_the_cut),
        cmocka_unit_test(gpu_side_step_with_stream_does_not),
        cmocka_unit_test(one_step_name_cuts_nothing),
        cmocka_unit_test(binary64_rounding),
        cmocka_unit_test(binary64_rounding_critical_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
