/* Idle causes filled in one pass per launching thread (src/analyze/idle_causes_pass.c) against
 * the stored timelines (GP_IDLE_CAUSES=stored, idle_causes.c), on random traces built to stress
 * what the pass does differently: several launching threads taking turns on the same streams (a
 * row's intervals change thread, so the pass resumes the row at each run of intervals), nested
 * host events of every class, events longer than many idle intervals, gaps with nothing recorded,
 * and kernels with no launch. Every row must be identical: idle time, time per cause and the top
 * name per cause with its time. The stored timelines have their own hand-worked cases
 * (test_idle_causes.c) and an independent reference (check_idle_causes.py). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprof/analyze.h"
#include "gpuprof/trace.h"

/* A small deterministic generator (xorshift64*), so a failure names its seed. */
static uint64_t rnd_state;
static uint64_t rnd(uint64_t n)
{
    rnd_state ^= rnd_state >> 12;
    rnd_state ^= rnd_state << 25;
    rnd_state ^= rnd_state >> 27;
    return (rnd_state * 0x2545F4914F6CDD1DULL) % n;
}

static void add(gp_trace *t, uint32_t track, gp_event_kind kind, const char *name, gp_ns ts,
                gp_ns dur, int64_t corr, uint32_t extra)
{
    gp_strid id;
    assert_int_equal(gp_trace_intern(t, name, strlen(name), &id), GP_OK);
    gp_event ev = {.ts = ts,
                   .dur = dur,
                   .correlation = corr,
                   .name = id,
                   .extra = extra,
                   .track = track,
                   .kind = (uint8_t)kind};
    assert_int_equal(gp_trace_add_event(t, &ev), GP_OK);
}

static const char *host_names[] = {
    "aten::mm",  "DataLoader.__next__", "nccl:all_reduce", "cudaStreamSynchronize",
    "aten::add", "model.py(12): fwd",   "cudaMemcpy",      "ProfilerStep#1"};
static const gp_event_kind host_kinds[] = {GP_EV_CPU_OP,  GP_EV_CPU_OP,         GP_EV_CPU_OP,
                                           GP_EV_RUNTIME, GP_EV_CPU_OP,         GP_EV_PYTHON,
                                           GP_EV_RUNTIME, GP_EV_USER_ANNOTATION};

/* A random trace: `threads` CPU threads, each a sequence of top-level host events with nested
 * children, and n kernels on `streams` streams of two devices, each launched (a cudaLaunchKernel
 * inside a host event of a random thread, or, one in eight, with no launch) from a thread chosen
 * at random when mixed, else thread k % threads in runs of `run` kernels. */
static gp_trace *random_trace(uint64_t seed, int threads, int streams, size_t n, bool mixed,
                              size_t run)
{
    rnd_state = seed * 0x9E3779B97F4A7C15ULL + 1;
    gp_trace *t;
    assert_int_equal(gp_trace_create("pass", &t), GP_OK);
    t->rank = 0;
    uint32_t cpu[8], gpu[8];
    for (int k = 0; k < threads; k++)
        assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, k + 1, &cpu[k]), GP_OK);
    for (int k = 0; k < streams; k++)
        assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, k % 2, 7 + k, &gpu[k]), GP_OK);
    gp_ns clock[8] = {0};
    gp_ns gpu_free[8] = {0};
    for (size_t i = 0; i < n; i++) {
        int k = mixed ? (int)rnd((uint64_t)threads) : (int)((i / run) % (size_t)threads);
        /* a host event, sometimes long, with the launch inside it */
        gp_ns gap = (gp_ns)rnd(4) == 0 ? (gp_ns)rnd(5000) : (gp_ns)rnd(50);
        gp_ns ts = clock[k] + gap, dur = 40 + (gp_ns)rnd(rnd(10) == 0 ? 20000 : 400);
        size_t h = rnd(sizeof host_names / sizeof *host_names);
        add(t, cpu[k], host_kinds[h], host_names[h], ts, dur, 0, 0);
        gp_ns at = ts + 5 + (gp_ns)rnd((uint64_t)(dur - 30));
        if (rnd(3) == 0) { /* a nested child around the launch */
            size_t c = rnd(sizeof host_names / sizeof *host_names);
            add(t, cpu[k], host_kinds[c], host_names[c], at - 3, 20, 0, 0);
        }
        bool launched = rnd(8) != 0;
        if (launched)
            add(t, cpu[k], GP_EV_RUNTIME, "cudaLaunchKernel", at, 10, (int64_t)i + 1, 0);
        clock[k] = ts + dur;
        int s = (int)rnd((uint64_t)streams);
        gp_gpu_info gi;
        gp_gpu_info_init(&gi);
        gi.device = s % 2;
        gi.stream = 7 + s;
        uint32_t extra;
        assert_int_equal(gp_trace_add_gpu_info(t, &gi, &extra), GP_OK);
        gp_ns ks = at + 10 + (gp_ns)rnd(300);
        if (ks < gpu_free[s])
            ks = gpu_free[s];
        gp_ns kd = 1 + (gp_ns)rnd(rnd(6) == 0 ? 8000 : 200);
        add(t, gpu[s], GP_EV_KERNEL, "gemm", ks, kd, launched ? (int64_t)i + 1 : 0, extra);
        gpu_free[s] = ks + kd;
    }
    assert_int_equal(gp_trace_finish(t), GP_OK);
    return t;
}

static gp_analysis *analyze(const gp_trace *t, const char *mode)
{
    if (mode)
        assert_int_equal(setenv("GP_IDLE_CAUSES", mode, 1), 0);
    else
        assert_int_equal(unsetenv("GP_IDLE_CAUSES"), 0);
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    o.critical_path = false;
    o.threads = 1;
    gp_analysis *a = NULL;
    assert_int_equal(gp_analyze_trace(t, &o, &a, NULL), GP_OK);
    unsetenv("GP_IDLE_CAUSES");
    return a;
}

/* Compares every row of both; returns the rows compared. */
static size_t same_rows(const gp_analysis *x, const gp_analysis *y, uint64_t seed)
{
    const gp_rank_analysis *p = &x->ranks[0], *q = &y->ranks[0];
    assert_int_equal(p->n_idle_causes, q->n_idle_causes);
    assert_int_equal(p->idle_causes_dropped, 0);
    assert_int_equal(q->idle_causes_dropped, 0);
    for (size_t i = 0; i < p->n_idle_causes; i++) {
        const gp_idle_causes *a = &p->idle_causes[i], *b = &q->idle_causes[i];
        if (a->idle != b->idle)
            fail_msg("seed %llu row %zu: idle %lld vs %lld", (unsigned long long)seed, i,
                     (long long)a->idle, (long long)b->idle);
        assert_int_equal(a->device, b->device);
        assert_int_equal(a->stream, b->stream);
        for (int k = 0; k < GP_IC_COUNT; k++) {
            if (a->by_cause[k] != b->by_cause[k] || a->top_time[k] != b->top_time[k])
                fail_msg("seed %llu row %zu cause %d: %lld/%lld vs %lld/%lld",
                         (unsigned long long)seed, i, k, (long long)a->by_cause[k],
                         (long long)a->top_time[k], (long long)b->by_cause[k],
                         (long long)b->top_time[k]);
            assert_string_equal(a->top_what[k], b->top_what[k]);
        }
    }
    return p->n_idle_causes;
}

static void check(uint64_t seed, int threads, int streams, size_t n, bool mixed, size_t run)
{
    gp_trace *t = random_trace(seed, threads, streams, n, mixed, run);
    gp_analysis *pass = analyze(t, NULL), *stored = analyze(t, "stored");
    size_t rows = same_rows(pass, stored, seed);
    assert_true(rows >= 2); /* a device row and at least one stream */
    /* the rows are not all idle or all unrecorded: the comparison says something */
    const gp_idle_causes *dev = &pass->ranks[0].idle_causes[0];
    assert_true(dev->idle > 0 && dev->by_cause[GP_IC_UNRECORDED] < dev->idle);
    gp_analysis_free(pass);
    gp_analysis_free(stored);
    gp_trace_free(t);
}

/* Threads taking turns at random: nearly every interval starts a run. */
static void mixed_threads(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 40; seed++)
        check(seed, 1 + (int)(seed % 4), 1 + (int)(seed % 5), 200 + seed * 13, true, 1);
}

/* Threads in turns of 50 kernels (forward on one thread, backward on another). */
static void threads_in_turns(void **state)
{
    (void)state;
    for (uint64_t seed = 41; seed <= 60; seed++)
        check(seed, 2 + (int)(seed % 3), 2 + (int)(seed % 3), 3000, false, 50);
}

/* Kernel i launched by thread i % 2 (a 10 ns cudaLaunchKernel inside a 50 ns aten::mm at i *
 * 100), run for 30 ns from i * 100 + 60 on one stream: every idle interval is on the other thread
 * than the one before, so each row has n runs. */
static gp_trace *alternating(size_t n)
{
    gp_trace *t;
    assert_int_equal(gp_trace_create("alternating", &t), GP_OK);
    t->rank = 0;
    uint32_t cpu[2], gpu;
    for (int k = 0; k < 2; k++)
        assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, k + 1, &cpu[k]), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &gpu), GP_OK);
    for (size_t i = 0; i < n; i++) {
        gp_ns ts = (gp_ns)i * 100;
        add(t, cpu[i % 2], GP_EV_CPU_OP, "aten::mm", ts, 50, 0, 0);
        add(t, cpu[i % 2], GP_EV_RUNTIME, "cudaLaunchKernel", ts + 20, 10, (int64_t)i + 1, 0);
        gp_gpu_info gi;
        gp_gpu_info_init(&gi);
        gi.device = 0;
        gi.stream = 7;
        uint32_t extra;
        assert_int_equal(gp_trace_add_gpu_info(t, &gi, &extra), GP_OK);
        add(t, gpu, GP_EV_KERNEL, "gemm", ts + 60, 30, (int64_t)i + 1, extra);
    }
    assert_int_equal(gp_trace_finish(t), GP_OK);
    return t;
}

/* n runs per row, n below and above the most the pass takes (RUNS_MAX, 65536 in all): the pass
 * fills the rows, then the stored timelines do; the figures agree with the closed form either way.
 * Each row has n idle intervals: [0, 60) first (aten::mm 20, launch 10, aten::mm 20, unrecorded
 * 10), then [i * 100 - 10, i * 100 + 60) on the thread of kernel i (unrecorded 10 since that
 * thread's previous event, then the same 50 ns and 10 unrecorded); the window ends with the last
 * kernel. */
static void many_runs(void **state)
{
    (void)state;
    size_t sizes[] = {1000, 40000};
    for (size_t k = 0; k < 2; k++) {
        size_t n = sizes[k];
        gp_trace *t = alternating(n);
        gp_analysis *pass = analyze(t, NULL), *stored = analyze(t, "stored");
        assert_int_equal(same_rows(pass, stored, n), 2);
        const gp_idle_causes *dev = &pass->ranks[0].idle_causes[0];
        assert_int_equal(dev->idle, (gp_ns)n * 70 - 10);
        assert_int_equal(dev->by_cause[GP_IC_LAUNCH], (gp_ns)n * 10);
        assert_int_equal(dev->by_cause[GP_IC_CPU], (gp_ns)n * 40);
        assert_int_equal(dev->by_cause[GP_IC_UNRECORDED], (gp_ns)n * 20 - 10);
        assert_string_equal(dev->top_what[GP_IC_CPU], "aten::mm");
        gp_analysis_free(pass);
        gp_analysis_free(stored);
        gp_trace_free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mixed_threads),
        cmocka_unit_test(threads_in_turns),
        cmocka_unit_test(many_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
