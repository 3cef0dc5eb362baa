/* The kernel timer and memory tracker as users of the seed's CUDA-event timer and tensor tracker
 * (../shared/seeds/003_*.txt) call them: get_tensor_info (gp_mem_buffer_info), the tracker reset,
 * the timer-only reset, the scoped profile_kernel form (GP_PROFILE_KERNEL / GP_KERNEL_SCOPE), the
 * combined full report, disable() stopping the timers, and "Calls" in the timing report. Every
 * case runs against the FAKE libcuda.so.1 of tests/fakes/cuda (scripted event times): they test
 * our code, not a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "gpuprof/profiler.h"
#include "profiler/profiler_test_util.h"

static gp_profiler *new_profiler(void)
{
    gp_profiler *p = NULL;
    assert_int_equal(gp_profiler_create(NULL, &p), GP_OK);
    return p;
}

static uint64_t timer_calls(gp_profiler *p, const char *name)
{
    gp_timer_stats s;
    if (gp_cuda_timer_stats(gp_profiler_cuda_timer(p), name, &s) != GP_OK)
        return 0;
    return s.calls;
}

static gp_status full_report_cb(void *p, FILE *f)
{
    return gp_profiler_print_full_report(p, f);
}

static gp_status timer_report_cb(void *p, FILE *f)
{
    return gp_cuda_timer_print(gp_profiler_cuda_timer(p), f);
}

static void fake_cuda_tensor_info_looks_up_one_buffer(void **state)
{
    (void)state;
    fake.reset();
    gp_profiler *p = new_profiler();
    gp_mem_tracker *m = gp_profiler_mem_tracker(p);
    assert_int_equal(gp_mem_track(m, "psi", "(100, 50, 64, 64)", "float32", 83886080), GP_OK);
    assert_int_equal(gp_mem_track(m, "dose", "(64, 64)", "float32", 16384), GP_OK);
    gp_mem_buffer *b = NULL;
    assert_int_equal(gp_mem_buffer_info(m, "dose", &b), GP_OK);
    assert_string_equal(b->name, "dose");
    assert_string_equal(b->shape, "(64, 64)");
    assert_string_equal(b->dtype, "float32");
    assert_int_equal(b->bytes, 16384);
    free(b);
    b = (gp_mem_buffer *)1;
    assert_int_equal(gp_mem_buffer_info(m, "escapes", &b), GP_ENOENT);
    assert_null(b);
    /* the copy is the caller's: untracking does not change it */
    assert_int_equal(gp_mem_buffer_info(m, "psi", &b), GP_OK);
    assert_int_equal(gp_mem_untrack(m, "psi"), GP_OK);
    assert_string_equal(b->shape, "(100, 50, 64, 64)");
    free(b);
    assert_int_equal(gp_mem_buffer_info(m, "psi", &b), GP_ENOENT);
    gp_profiler_destroy(p);
}

static void fake_cuda_tracker_reset_clears_buffers_only(void **state)
{
    (void)state;
    fake.reset();
    gp_profiler *p = new_profiler();
    gp_mem_tracker *m = gp_profiler_mem_tracker(p);
    const double times[] = {0.0, 2.0};
    fake.script(times, 2);
    assert_int_equal(gp_cuda_timer_start(gp_profiler_cuda_timer(p), "k", NULL), GP_OK);
    assert_int_equal(gp_cuda_timer_stop(gp_profiler_cuda_timer(p), "k"), GP_OK);
    assert_int_equal(gp_mem_track(m, "a", "10", "int8", 10), GP_OK);
    assert_int_equal(gp_mem_track(m, "b", "20", "int8", 20), GP_OK);
    gp_mem_reset(m);
    gp_mem_status s;
    gp_mem_status_get(m, &s);
    assert_int_equal(s.buffers, 0);
    assert_int_equal(s.tracked_bytes, 0);
    assert_int_equal(s.peak_bytes, 0);
    gp_mem_buffer *b = NULL;
    assert_int_equal(gp_mem_buffer_info(m, "a", &b), GP_ENOENT);
    assert_int_equal(timer_calls(p, "k"), 1); /* the timers stay */
    /* tracking again starts from zero */
    assert_int_equal(gp_mem_track(m, "c", "5", "int8", 5), GP_OK);
    gp_mem_status_get(m, &s);
    assert_int_equal(s.peak_bytes, 5);
    gp_profiler_destroy(p);
}

static void fake_cuda_timer_reset_keeps_ranges_and_buffers(void **state)
{
    (void)state;
    fake.reset();
    gp_profiler *p = new_profiler();
    gp_cuda_timer *t = gp_profiler_cuda_timer(p);
    const double times[] = {0.0, 1.0, 1.0, 3.0};
    fake.script(times, 4);
    gp_range_begin(p, "step", NULL);
    assert_int_equal(gp_cuda_timer_start(t, "k", NULL), GP_OK);
    assert_int_equal(gp_cuda_timer_stop(t, "k"), GP_OK);
    gp_range_end(p);
    assert_int_equal(gp_mem_track(gp_profiler_mem_tracker(p), "w", "4", "float32", 16), GP_OK);
    assert_int_equal(timer_calls(p, "k"), 1);
    gp_cuda_timer_reset(t);
    gp_timer_stats s;
    assert_int_equal(gp_cuda_timer_stats(t, "k", &s), GP_ENOENT);
    gp_mem_status ms;
    gp_mem_status_get(gp_profiler_mem_tracker(p), &ms);
    assert_int_equal(ms.buffers, 1);
    gp_profiler_stats ps;
    gp_profiler_get_stats(p, &ps);
    assert_int_equal(ps.ranges, 1);
    /* and timing goes on after the reset */
    assert_int_equal(gp_cuda_timer_start(t, "k", NULL), GP_OK);
    assert_int_equal(gp_cuda_timer_stop(t, "k"), GP_OK);
    assert_int_equal(gp_cuda_timer_stats(t, "k", &s), GP_OK);
    assert_int_equal(s.calls, 1);
    assert_true(s.total_ms > 1.999 && s.total_ms < 2.001);
    gp_profiler_destroy(p);
}

/* The seed's integration example: three kernels in profile_kernel blocks, one of them left early.
 */
static int step_kernels(gp_profiler *p, int early)
{
    GP_PROFILE_KERNEL(p, "angular_scattering", NULL)
    {
        (void)0;
    }
    GP_PROFILE_KERNEL(p, "energy_loss", NULL)
    {
        if (early)
            return 1; /* the timer stops on this exit too */
    }
    GP_KERNEL_SCOPE(p, "spatial_streaming", NULL);
    return 0;
}

static void fake_cuda_profile_kernel_scope_goes_to_timing_report(void **state)
{
    (void)state;
    fake.reset();
    gp_profiler *p = new_profiler();
    /* event times: each pair 2 ms apart */
    double times[18];
    for (int i = 0; i < 18; i++)
        times[i] = (i / 2) * 10.0 + (i % 2) * 2.0;
    fake.script(times, 18);
    assert_int_equal(step_kernels(p, 0), 0);
    assert_int_equal(step_kernels(p, 0), 0);
    assert_int_equal(step_kernels(p, 1), 1);
    assert_int_equal(timer_calls(p, "angular_scattering"), 3);
    assert_int_equal(timer_calls(p, "energy_loss"), 3);
    assert_int_equal(timer_calls(p, "spatial_streaming"), 2);
    gp_timer_stats s;
    assert_int_equal(gp_cuda_timer_stats(gp_profiler_cuda_timer(p), "energy_loss", &s), GP_OK);
    assert_int_equal(s.pending, 0);
    assert_true(s.mean_ms > 1.999 && s.mean_ms < 2.001);
    char *text = capture(timer_report_cb, p);
    assert_non_null(strstr(text, "angular_scattering "));
    assert_non_null(strstr(text, "\nKernel "));
    assert_non_null(strstr(text, " Calls "));
    assert_null(strstr(text, "Count"));
    free(text);
    gp_profiler_destroy(p);
}

static void fake_cuda_full_report_has_timers_and_memory(void **state)
{
    (void)state;
    fake.reset();
    fake.mem((size_t)12 << 30, (size_t)16 << 30);
    fake.pool(1, (uint64_t)145 << 20, (uint64_t)512 << 20);
    gp_profiler *p = new_profiler();
    const double times[] = {0.0, 15.0, 20.0, 43.5};
    fake.script(times, 4);
    GP_PROFILE_KERNEL(p, "angular_scattering", NULL)
    {
    }
    GP_PROFILE_KERNEL(p, "energy_loss", NULL)
    {
    }
    gp_mem_tracker *m = gp_profiler_mem_tracker(p);
    assert_int_equal(gp_mem_track(m, "psi", "(100, 50, 64, 64)", "float32", 83886080), GP_OK);
    assert_int_equal(gp_mem_track(m, "dose", "(64, 64)", "float32", 16384), GP_OK);
    char *text = capture(full_report_cb, p);
    check_golden("full_report.txt", text);
    const char *timing = strstr(text, "GPU KERNEL TIMING REPORT");
    const char *memory = strstr(text, "GPU MEMORY TRACKING REPORT");
    assert_non_null(timing);
    assert_non_null(memory);
    assert_true(timing < memory);
    free(text);
    gp_profiler_destroy(p);
}

static void fake_cuda_disable_stops_timers(void **state)
{
    (void)state;
    fake.reset();
    gp_profiler *p = new_profiler();
    gp_cuda_timer *t = gp_profiler_cuda_timer(p);
    fake_cuda_counts c0, c1;
    /* open while enabled, then disabled: the open timer is discarded, nothing records */
    assert_int_equal(gp_cuda_timer_start(t, "open_at_disable", NULL), GP_OK);
    gp_profiler_enable(p, false);
    fake.counts(&c0);
    assert_int_equal(gp_cuda_timer_start(t, "k", NULL), GP_OK);
    assert_int_equal(gp_cuda_timer_stop(t, "k"), GP_OK);
    GP_PROFILE_KERNEL(p, "scoped", NULL)
    {
    }
    assert_int_equal(gp_cuda_timer_stop(t, "open_at_disable"), GP_OK);
    fake.counts(&c1);
    assert_int_equal(c1.records, c0.records); /* no CUDA event recorded while disabled */
    assert_int_equal(timer_calls(p, "k"), 0);
    assert_int_equal(timer_calls(p, "scoped"), 0);
    gp_timer_stats s;
    assert_int_equal(gp_cuda_timer_stats(t, "open_at_disable", &s), GP_ENOENT);
    /* enabled again: timing works, and an enable that changes nothing keeps open timers */
    gp_profiler_enable(p, true);
    assert_int_equal(gp_cuda_timer_start(t, "k", NULL), GP_OK);
    gp_profiler_enable(p, true);
    assert_int_equal(gp_cuda_timer_stop(t, "k"), GP_OK);
    assert_int_equal(timer_calls(p, "k"), 1);
    gp_profiler_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fake_cuda_tensor_info_looks_up_one_buffer),
        cmocka_unit_test(fake_cuda_tracker_reset_clears_buffers_only),
        cmocka_unit_test(fake_cuda_timer_reset_keeps_ranges_and_buffers),
        cmocka_unit_test(fake_cuda_profile_kernel_scope_goes_to_timing_report),
        cmocka_unit_test(fake_cuda_full_report_has_timers_and_memory),
        cmocka_unit_test(fake_cuda_disable_stops_timers),
    };
    return cmocka_run_group_tests_name("profiler_kernel_fake_cuda", tests, fake_setup, NULL);
}
