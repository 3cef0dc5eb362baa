/* Scaling of the analyses (issue 38 item 3): a trace with 10x the streams, devices or memory
 * devices costs at most 15x the time of gp_analyze_trace (a ratio measured here, see
 * tests/common/scaling.h). Each stream and memory device was found by a scan of those seen so
 * far (gp__analyze_idle, gp__view_build's rule check, the memory analysis' mem_device): 100,000
 * streams took 7.5 s, 100,000 memory devices 16 s. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>

#include "common/scaling.h"
#include "gpuprof/analyze.h"
#include "gpuprof/summary.h"
#include "gpuprof/trace.h"

static gp_strid S(gp_trace *t, const char *s)
{
    gp_strid id;
    assert_int_equal(gp_trace_intern(t, s, strlen(s), &id), GP_OK);
    return id;
}

static void add(gp_trace *t, uint32_t track, gp_event_kind kind, gp_strid name, gp_ns ts, gp_ns dur,
                int64_t corr, uint32_t extra)
{
    gp_event ev = {.ts = ts,
                   .dur = dur,
                   .correlation = corr,
                   .name = name,
                   .extra = extra,
                   .track = track,
                   .kind = (uint8_t)kind};
    if (kind == GP_EV_MEMORY)
        ev.flags = GP_EVF_INSTANT;
    assert_int_equal(gp_trace_add_event(t, &ev), GP_OK);
}

/* n GPU streams over 8 devices (two kernels each, each launched from the one CPU thread), or one
 * stream and n memory devices (one [memory] event each) when memory is set. */
static gp_trace *wide_trace(size_t n, bool memory)
{
    gp_trace *t;
    assert_int_equal(gp_trace_create("wide", &t), GP_OK);
    uint32_t cpu;
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    gp_strid launch = S(t, "cudaLaunchKernel"), kern = S(t, "gemm_kernel"), mem = S(t, "[memory]");
    size_t streams = memory ? 1 : n;
    int64_t corr = 1;
    for (size_t i = 0; i < streams; i++) {
        uint32_t tr;
        int32_t dev = (int32_t)(i % 8);
        assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, dev, (int64_t)i + 7, &tr), GP_OK);
        for (int k = 0; k < 2; k++, corr++) {
            gp_ns ts = (gp_ns)i * 100 + k * 50000000;
            add(t, cpu, GP_EV_RUNTIME, launch, ts, 10, corr, 0);
            gp_gpu_info gi;
            gp_gpu_info_init(&gi);
            gi.device = dev;
            gi.stream = (int64_t)i + 7;
            uint32_t extra;
            assert_int_equal(gp_trace_add_gpu_info(t, &gi, &extra), GP_OK);
            add(t, tr, GP_EV_KERNEL, kern, ts + 20, 1000, corr, extra);
        }
    }
    for (size_t i = 0; memory && i < n; i++) {
        gp_mem_info mi = {.addr = 1,
                          .bytes = 64,
                          .total_allocated = (int64_t)i,
                          .total_reserved = (int64_t)i,
                          .device_type = 1,
                          .device_id = (int32_t)i};
        uint32_t extra;
        assert_int_equal(gp_trace_add_mem_info(t, &mi, &extra), GP_OK);
        add(t, cpu, GP_EV_MEMORY, mem, (gp_ns)i * 10, 0, 0, extra);
    }
    assert_int_equal(gp_trace_finish(t), GP_OK);
    return t;
}

static double analyze_seconds(bool memory, size_t n)
{
    gp_trace *t = wide_trace(n, memory);
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    gp_analysis *a = NULL;
    gp_error err = {0};
    double t0 = gp_test_now();
    assert_int_equal(gp_analyze_trace(t, &o, &a, &err), GP_OK);
    double t1 = gp_test_now();
    const gp_rank_analysis *r = &a->ranks[0];
    if (memory)
        assert_int_equal(r->n_memory, n);
    else
        assert_int_equal(r->n_idle, n);
    gp_analysis_free(a);
    gp_trace_free(t);
    return t1 - t0;
}

static double streams_cost(void *ctx, size_t n)
{
    (void)ctx;
    return analyze_seconds(false, n);
}

static double memory_cost(void *ctx, size_t n)
{
    (void)ctx;
    return analyze_seconds(true, n);
}

static void streams_scale_linearly(void **state)
{
    (void)state;
    gp_test_assert_scales("analyze, GPU streams", streams_cost, NULL, 2000);
}

static void memory_devices_scale_linearly(void **state)
{
    (void)state;
    gp_test_assert_scales("analyze, memory devices", memory_cost, NULL, 5000);
}

/* n table rows whose short forms all collide ("ns::kernel<...>"): n/2 template instances, each
 * named twice (the second time, half of them with another argument list: same long form), in
 * the order merged tables list them (one rank's rows, then the next's). gp_shorten_names_unique
 * compared each row with every other row of its run: 1,024 ranks' tables merged spent half their
 * time there. */
static double names_cost(void *ctx, size_t n)
{
    (void)ctx;
    enum { CAP = 96 };
    char *text = malloc(n * 64), *out = malloc(n * CAP);
    const char **names = malloc(n * sizeof *names);
    assert_true(text && out && names);
    for (size_t k = 0; k < n; k++) {
        size_t inst = k % (n / 2), second = k >= n / 2; /* as merged tables list them */
        snprintf(text + k * 64, 64, "void ns::kernel<cfg_%07zu, float>(%s)", inst,
                 inst % 2 && second ? "float" : "int");
        names[k] = text + k * 64;
    }
    /* the best of 5 (with the helper's best of 3): a run of 2 ms is often preempted on a loaded
     * host, and one preemption is 10x its time */
    double best = 1e30;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = gp_test_now();
        assert_int_equal(gp_shorten_names_unique(names, n, 40, out, CAP), GP_OK);
        double t1 = gp_test_now();
        best = t1 - t0 < best ? t1 - t0 : best;
    }
    for (size_t k = 1; k < n; k++) /* distinct names, distinct forms (a check that can fail) */
        assert_true((strcmp(names[k], names[0]) == 0) == (strcmp(out + k * CAP, out) == 0));
    free(text);
    free(out);
    free(names);
    return best;
}

static void short_names_scale(void **state)
{
    (void)state;
#ifdef __GLIBC__
    /* both sizes on warm heap memory: with glibc's defaults the large size's buffers are fresh
     * mappings, faulted in on every run, while the small size reuses freed heap memory. The sizes
     * (2,000 and 20,000 rows) both fit the caches: at 200,000 the hash table and the names are
     * read from DRAM and a loaded host doubled the ratio (20 where a quiet one gave 12); the
     * quadratic pass gave about 100. */
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
    gp_test_assert_scales("unique short names, one colliding run", names_cost, NULL, 2000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        /* first: the heap as a fresh process has it, for both sizes (after the streams test the
         * small size reuses warm memory that the large one must fault in) */
        cmocka_unit_test(memory_devices_scale_linearly),
        cmocka_unit_test(streams_scale_linearly),
        cmocka_unit_test(short_names_scale),
    };
    if (getenv("GP_TEST_FILTER")) /* a cmocka pattern: one test under a profiler */
        cmocka_set_test_filter(getenv("GP_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
