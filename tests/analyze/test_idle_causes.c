/* Idle causes and the step breakdown (src/analyze/idle_causes.c, step_parts.c) on small synthetic
 * traces, one per cause, each with its expected attribution worked out by hand in the comment
 * above it (docs/analyses.md, "Idle causes" and "Step breakdown", has the rules applied). Times
 * are ns; thread T is the one CPU thread; stream 7 (and 20) are on device 0. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprof/analyze.h"
#include "gpuprof/report.h"
#include "gpuprof/summary.h"
#include "gpuprof/trace.h"

/* ---- building ------------------------------------------------------------------------------ */

typedef struct tb {
    gp_trace *t;
    uint32_t cpu, s7, s20;
} tb;

static tb make(void)
{
    tb b;
    assert_int_equal(gp_trace_create("idle", &b.t), GP_OK);
    b.t->rank = 0;
    assert_int_equal(gp_trace_track(b.t, GP_TRACK_CPU_THREAD, 1, 1, &b.cpu), GP_OK);
    assert_int_equal(gp_trace_track(b.t, GP_TRACK_GPU_STREAM, 0, 7, &b.s7), GP_OK);
    assert_int_equal(gp_trace_track(b.t, GP_TRACK_GPU_STREAM, 0, 20, &b.s20), GP_OK);
    return b;
}

static void add(tb *b, uint32_t track, gp_event_kind kind, const char *name, gp_ns ts, gp_ns dur,
                int64_t corr)
{
    gp_strid id;
    assert_int_equal(gp_trace_intern(b->t, name, strlen(name), &id), GP_OK);
    gp_event ev = {.ts = ts,
                   .dur = dur,
                   .correlation = corr,
                   .name = id,
                   .track = track,
                   .kind = (uint8_t)kind};
    if (gp_event_kind_is_gpu(kind)) {
        gp_gpu_info gi;
        gp_gpu_info_init(&gi);
        gi.device = 0;
        gi.stream = track == b->s7 ? 7 : 20;
        assert_int_equal(gp_trace_add_gpu_info(b->t, &gi, &ev.extra), GP_OK);
    }
    assert_int_equal(gp_trace_add_event(b->t, &ev), GP_OK);
}

static gp_analysis *analyze(tb *b, const char *steps)
{
    assert_int_equal(gp_trace_finish(b->t), GP_OK);
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    o.critical_path = false;
    if (steps)
        assert_int_equal(gp_analyze_parse_steps(steps, &o), GP_OK);
    gp_analysis *a = NULL;
    assert_int_equal(gp_analyze_trace(b->t, &o, &a, NULL), GP_OK);
    assert_int_equal(a->n_ranks, 1);
    return a;
}

/* The row of a stream (-1: the whole device). */
static const gp_idle_causes *row(const gp_analysis *a, int64_t stream)
{
    const gp_rank_analysis *r = &a->ranks[0];
    for (size_t i = 0; i < r->n_idle_causes; i++)
        if (r->idle_causes[i].stream == stream)
            return &r->idle_causes[i];
    fail_msg("no idle-causes row for stream %lld", (long long)stream);
    return NULL;
}

/* Checks a row: idle, then the time of each cause in gp_idle_cause order; every row's causes
 * sum to its idle and its shares are by_cause / idle. */
static void expect(const gp_idle_causes *c, gp_ns idle, gp_ns dl, gp_ns cpu, gp_ns sync,
                   gp_ns launch, gp_ns comm, gp_ns unrec)
{
    const gp_ns want[GP_IC_COUNT] = {dl, cpu, sync, launch, comm, unrec};
    assert_int_equal(c->idle, idle);
    for (int k = 0; k < GP_IC_COUNT; k++) {
        if (c->by_cause[k] != want[k])
            fail_msg("stream %lld, %s: %lld, expected %lld", (long long)c->stream,
                     gp_idle_cause_name((gp_idle_cause)k), (long long)c->by_cause[k],
                     (long long)want[k]);
        assert_true(fabs(c->share[k] - (double)want[k] / (double)idle) < 1e-12);
    }
}

static void expect_top(const gp_idle_causes *c, gp_idle_cause k, const char *what, gp_ns time)
{
    assert_string_equal(c->top_what[k], what);
    assert_int_equal(c->top_time[k], time);
}

/* ---- one test per cause -------------------------------------------------------------------- */

/* Data loading.
 *   T: L1 cudaLaunchKernel [0,2000) c1; DL = enumerate(DataLoader)#...__next__ (annotation)
 *      [10000,50000) holding the frame dataset.py(10): __getitem__ [12000,48000);
 *      L2 cudaLaunchKernel [50000,55000) c2
 *   stream 7: K1 [2000,10000) c1, K2 [56000,60000) c2.       Window [0,60000).
 * Idle [0,2000) (next K1): L1, launch 2000. Idle [10000,56000) (next K2): DL 40000 (the frame is
 * nested in DL, so it is data loading, named by DL), L2 launch 5000, [55000,56000) nothing: 1000.
 * Idle 48000 = data_loading 40000 + launch 7000 + unrecorded 1000; the device is stream 7. */
static void cause_data_loading(void **state)
{
    (void)state;
    tb b = make();
    const char *dl = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";
    add(&b, b.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 0, 2000, 1);
    add(&b, b.cpu, GP_EV_USER_ANNOTATION, dl, 10000, 40000, 0);
    add(&b, b.cpu, GP_EV_PYTHON, "dataset.py(10): __getitem__", 12000, 36000, 0);
    add(&b, b.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 50000, 5000, 2);
    add(&b, b.s7, GP_EV_KERNEL, "gemm_kernel", 2000, 8000, 1);
    add(&b, b.s7, GP_EV_KERNEL, "gemm_kernel", 56000, 4000, 2);
    gp_analysis *a = analyze(&b, NULL);
    assert_int_equal(a->ranks[0].n_idle_causes, 2);
    assert_int_equal(a->ranks[0].idle_causes[0].stream, -1); /* the device first */
    for (int64_t s = -1; s <= 7; s += 8) {
        expect(row(a, s), 48000, 40000, 0, 0, 7000, 0, 1000);
        expect_top(row(a, s), GP_IC_DATA_LOADING, dl, 40000);
        expect_top(row(a, s), GP_IC_LAUNCH, "cudaLaunchKernel", 7000);
    }
    gp_analysis_free(a);
    gp_trace_free(b.t);
}

/* Python preprocessing, named by the innermost frame or op.
 *   T: step = train.py(20): step [0,100000) > normalize = transforms.py(5): normalize
 *      [10000,40000), resize = transforms.py(9): resize [40000,70000) > aten::resize_
 *      [50000,60000); L1 cudaLaunchKernel [80000,82000) c1
 *   stream 7: K1 [85000,95000) c1.                          Window [0,100000).
 * Idle [0,85000) (next K1): step [0,10000) + [70000,80000) + [82000,85000) = 23000, normalize
 * 30000, resize 20000, aten::resize_ 10000, L1 launch 2000. Idle [95000,100000) after the last
 * work: the last launching thread, T: step 5000. Idle 90000 = cpu 88000 + launch 2000; the cpu
 * time by name: normalize 30000 > step 28000 > resize 20000 > aten::resize_ 10000. */
static void cause_python_preprocessing(void **state)
{
    (void)state;
    tb b = make();
    add(&b, b.cpu, GP_EV_PYTHON, "train.py(20): step", 0, 100000, 0);
    add(&b, b.cpu, GP_EV_PYTHON, "transforms.py(5): normalize", 10000, 30000, 0);
    add(&b, b.cpu, GP_EV_PYTHON, "transforms.py(9): resize", 40000, 30000, 0);
    add(&b, b.cpu, GP_EV_CPU_OP, "aten::resize_", 50000, 10000, 0);
    add(&b, b.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 80000, 2000, 1);
    add(&b, b.s7, GP_EV_KERNEL, "gemm_kernel", 85000, 10000, 1);
    gp_analysis *a = analyze(&b, NULL);
    expect(row(a, -1), 90000, 0, 88000, 0, 2000, 0, 0);
    expect(row(a, 7), 90000, 0, 88000, 0, 2000, 0, 0);
    expect_top(row(a, -1), GP_IC_CPU, "transforms.py(5): normalize", 30000);
    gp_analysis_free(a);
    gp_trace_free(b.t);
}

/* Synchronisation: a blocking D2H copy from .item(), a stream sync, a call made blocking by its
 * cuda_sync event, and a stream wait (not blocking).
 *   T: L1 cudaLaunchKernel [0,1000) c1; aten::item [2000,60000) > cudaMemcpyAsync [3000,58000)
 *      c2, cudaStreamSynchronize [58000,59000); cudaStreamWaitEvent [60000,62000) c5;
 *      cuStreamWaitValue32 [64000,66000) c6; L3 cudaLaunchKernel [70000,71000) c3
 *   stream 7: K1 [1000,50000) c1; Memcpy DtoH (Device -> Pageable) [50000,50010) c2;
 *      cuda_sync "Stream Wait Event" [60000,62000) c5, "Event Sync" [64000,66000) c6;
 *      K3 [72000,80000) c3.                                  Window [0,80000).
 * Idle [0,1000): L1 launch 1000. Idle [50010,72000) (next K3): cudaMemcpyAsync to pageable memory
 * sync 7990, cudaStreamSynchronize sync 1000, aten::item cpu 1000, cudaStreamWaitEvent cpu 2000
 * (its sync event is a stream wait), nothing 2000, cuStreamWaitValue32 sync 2000 (its Event
 * Sync), nothing 4000, L3 launch 1000, nothing 1000.
 * Idle 22990 = sync 10990 + cpu 3000 + launch 2000 + unrecorded 7000. */
static void cause_sync(void **state)
{
    (void)state;
    tb b = make();
    add(&b, b.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 0, 1000, 1);
    add(&b, b.cpu, GP_EV_CPU_OP, "aten::item", 2000, 58000, 0);
    add(&b, b.cpu, GP_EV_RUNTIME, "cudaMemcpyAsync", 3000, 55000, 2);
    add(&b, b.cpu, GP_EV_RUNTIME, "cudaStreamSynchronize", 58000, 1000, 0);
    add(&b, b.cpu, GP_EV_RUNTIME, "cudaStreamWaitEvent", 60000, 2000, 5);
    add(&b, b.cpu, GP_EV_RUNTIME, "cuStreamWaitValue32", 64000, 2000, 6);
    add(&b, b.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 70000, 1000, 3);
    add(&b, b.s7, GP_EV_KERNEL, "gemm_kernel", 1000, 49000, 1);
    add(&b, b.s7, GP_EV_MEMCPY, "Memcpy DtoH (Device -> Pageable)", 50000, 10, 2);
    add(&b, b.s7, GP_EV_SYNC, "Stream Wait Event", 60000, 2000, 5);
    add(&b, b.s7, GP_EV_SYNC, "Event Sync", 64000, 2000, 6);
    add(&b, b.s7, GP_EV_KERNEL, "gemm_kernel", 72000, 8000, 3);
    gp_analysis *a = analyze(&b, NULL);
    expect(row(a, -1), 22990, 0, 3000, 10990, 2000, 0, 7000);
    expect(row(a, 7), 22990, 0, 3000, 10990, 2000, 0, 7000);
    expect_top(row(a, 7), GP_IC_SYNC, "cudaMemcpyAsync", 7990);
    expect_top(row(a, 7), GP_IC_CPU, "cudaStreamWaitEvent", 2000);
    gp_analysis_free(a);
    gp_trace_free(b.t);
}

/* Launch overhead: launches longer than their kernels.
 *   T: L1 cudaLaunchKernel [0,10000) c1, L2 cudaLaunchKernel [10000,20000) c2, L3 cudaGraphLaunch
 *      [20000,30000) c3
 *   stream 7: K1 [8000,9000) c1, K2 [18000,19000) c2, K3 [28000,29000) c3.   Window [0,30000).
 * Idle [0,8000): L1 8000. [9000,18000): L1 1000 + L2 8000. [19000,28000): L2 1000 + L3 8000.
 * [29000,30000) after the last work: L3 1000. Idle 27000, all launch: cudaLaunchKernel 18000,
 * cudaGraphLaunch 9000. */
static void cause_launch(void **state)
{
    (void)state;
    tb b = make();
    add(&b, b.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 0, 10000, 1);
    add(&b, b.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 10000, 10000, 2);
    add(&b, b.cpu, GP_EV_RUNTIME, "cudaGraphLaunch", 20000, 10000, 3);
    for (int i = 0; i < 3; i++)
        add(&b, b.s7, GP_EV_KERNEL, "small_kernel", 8000 + 10000 * i, 1000, i + 1);
    gp_analysis *a = analyze(&b, NULL);
    expect(row(a, 7), 27000, 0, 0, 0, 27000, 0, 0);
    expect_top(row(a, 7), GP_IC_LAUNCH, "cudaLaunchKernel", 18000);
    gp_analysis_free(a);
    gp_trace_free(b.t);
}

/* Waiting for a collective, on two streams.
 *   T: c10d::allreduce_ [0,5000) > record_param_comms [1000,4000) > L1 cudaLaunchKernel
 *      [2000,3000) c1; c10d::wait [5000,41000) > cudaStreamWaitEvent [6000,7000);
 *      L2 cudaLaunchKernel [41000,42000) c2
 *   stream 20: ncclDevKernel_AllReduce [3000,40000) c1; stream 7: gemm [42000,50000) c2.
 *   Window [0,50000).
 * c10d::allreduce_ is not a wait: cpu. L1 inside record_param_comms: comm_wait (it ranks above
 * launch); the wait call inside c10d::wait: comm_wait.
 * Stream 7, idle [0,42000): cpu 1000 + comm 3000 + cpu 1000 + comm 36000 + launch 1000 = 42000.
 * Stream 20, idle [0,3000): cpu 1000 + comm 2000; [40000,50000) after its last work (T): comm
 * 1000, launch 1000, nothing 8000. = 13000.
 * Device (busy [3000,40000) and [42000,50000)): [0,3000) cpu 1000 + comm 2000; [40000,42000)
 * (next: gemm) comm 1000 + launch 1000. = 5000. */
static void cause_comm_wait(void **state)
{
    (void)state;
    tb b = make();
    add(&b, b.cpu, GP_EV_CPU_OP, "c10d::allreduce_", 0, 5000, 0);
    add(&b, b.cpu, GP_EV_CPU_OP, "record_param_comms", 1000, 3000, 0);
    add(&b, b.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 2000, 1000, 1);
    add(&b, b.cpu, GP_EV_CPU_OP, "c10d::wait", 5000, 36000, 0);
    add(&b, b.cpu, GP_EV_RUNTIME, "cudaStreamWaitEvent", 6000, 1000, 0);
    add(&b, b.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 41000, 1000, 2);
    add(&b, b.s20, GP_EV_KERNEL, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 3000, 37000, 1);
    add(&b, b.s7, GP_EV_KERNEL, "gemm_kernel", 42000, 8000, 2);
    gp_analysis *a = analyze(&b, NULL);
    expect(row(a, 7), 42000, 0, 2000, 0, 1000, 39000, 0);
    expect(row(a, 20), 13000, 0, 1000, 0, 1000, 3000, 8000);
    expect(row(a, -1), 5000, 0, 1000, 0, 1000, 3000, 0);
    expect_top(row(a, 7), GP_IC_COMM_WAIT, "c10d::wait", 36000);
    expect_top(row(a, 7), GP_IC_CPU, "c10d::allreduce_", 2000);
    gp_analysis_free(a);
    gp_trace_free(b.t);
}

/* Nothing recorded: the thread is inside ProfilerStep#1 only (an annotation is not work), and a
 * trace without any CPU event.
 *   T: ProfilerStep#1 [0,53000); L1 cudaLaunchKernel [0,1000) c1; L2 [50000,51000) c2
 *   stream 7: K1 [1000,2000) c1, K2 [52000,53000) c2.          Window [0,53000).
 * Idle [0,1000): launch 1000; [2000,52000): unrecorded 48000 (named ProfilerStep#1), launch 1000,
 * unrecorded 1000. Idle 51000 = launch 2000 + unrecorded 49000.
 * Without CPU events: K1 [0,1000), K2 [5000,6000), no launch: idle [1000,5000) unrecorded 4000. */
static void cause_unrecorded(void **state)
{
    (void)state;
    tb b = make();
    add(&b, b.cpu, GP_EV_USER_ANNOTATION, "ProfilerStep#1", 0, 53000, 0);
    add(&b, b.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 0, 1000, 1);
    add(&b, b.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 50000, 1000, 2);
    add(&b, b.s7, GP_EV_KERNEL, "gemm_kernel", 1000, 1000, 1);
    add(&b, b.s7, GP_EV_KERNEL, "gemm_kernel", 52000, 1000, 2);
    gp_analysis *a = analyze(&b, NULL);
    expect(row(a, 7), 51000, 0, 0, 0, 2000, 0, 49000);
    expect_top(row(a, 7), GP_IC_UNRECORDED, "ProfilerStep#1", 49000);
    gp_analysis_free(a);
    gp_trace_free(b.t);

    tb g = make();
    add(&g, g.s7, GP_EV_KERNEL, "gemm_kernel", 0, 1000, 0);
    add(&g, g.s7, GP_EV_KERNEL, "gemm_kernel", 5000, 1000, 0);
    a = analyze(&g, NULL);
    expect(row(a, 7), 4000, 0, 0, 0, 0, 0, 4000);
    expect_top(row(a, 7), GP_IC_UNRECORDED, "", 4000);
    gp_analysis_free(a);
    gp_trace_free(g.t);
}

/* ---- step breakdown ------------------------------------------------------------------------ */

/* Two steps.
 *   T: ProfilerStep#3 [0,100000), ProfilerStep#4 [100000,160000); aten::linear [10000,60000) >
 *      cudaLaunchKernel [20000,25000) c1; DL annotation [60000,80000) > aten::stack
 *      [65000,70000); frame train.py(1): loop [85000,95000)
 *   stream 7: gemm [22000,50000) c1, gemm [150000,170000); stream 20: Memcpy HtoD [45000,55000),
 *      Memset [55000,58000), ncclDevKernel_AllReduce [75000,90000).
 * Step 3: kernel [22000,50000) 28000; memcpy [50000,55000) 5000 (the kernel covers its start);
 * memset 3000; communication [75000,90000) 15000 (above the data loader's end); runtime
 * [20000,22000) 2000; dataloader [60000,75000) 15000 (aten::stack inside it too); cpu_exec:
 * aten::linear outside the above, [10000,20000) + [58000,60000) = 12000; other [0,10000) +
 * [90000,100000) = 20000 (a Python frame is not cpu_exec, as in TensorBoard). Sum 100000.
 * Step 4: kernel [150000,160000) 10000 (cut at the step's end), other 50000. Sum 60000. */
static tb step_trace(void)
{
    tb b = make();
    add(&b, b.cpu, GP_EV_USER_ANNOTATION, "ProfilerStep#3", 0, 100000, 0);
    add(&b, b.cpu, GP_EV_USER_ANNOTATION, "ProfilerStep#4", 100000, 60000, 0);
    add(&b, b.cpu, GP_EV_CPU_OP, "aten::linear", 10000, 50000, 0);
    add(&b, b.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 20000, 5000, 1);
    add(&b, b.cpu, GP_EV_USER_ANNOTATION,
        "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 60000, 20000, 0);
    add(&b, b.cpu, GP_EV_CPU_OP, "aten::stack", 65000, 5000, 0);
    add(&b, b.cpu, GP_EV_PYTHON, "train.py(1): loop", 85000, 10000, 0);
    add(&b, b.s7, GP_EV_KERNEL, "gemm_kernel", 22000, 28000, 1);
    add(&b, b.s7, GP_EV_KERNEL, "gemm_kernel", 150000, 20000, 0);
    add(&b, b.s20, GP_EV_MEMCPY, "Memcpy HtoD (Pinned -> Device)", 45000, 10000, 0);
    add(&b, b.s20, GP_EV_MEMSET, "Memset (Device)", 55000, 3000, 0);
    add(&b, b.s20, GP_EV_KERNEL, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 75000, 15000, 0);
    return b;
}

static void expect_parts(const gp_step_breakdown *s, int64_t step, const gp_ns *want)
{
    assert_int_equal(s->step, step);
    gp_ns sum = 0;
    for (int k = 0; k < GP_SP_COUNT; k++) {
        if (s->part[k] != want[k])
            fail_msg("step %lld, %s: %lld, expected %lld", (long long)step,
                     gp_step_part_name((gp_step_part)k), (long long)s->part[k], (long long)want[k]);
        sum += s->part[k];
    }
    assert_int_equal(sum, s->end - s->start);
}

static const gp_ns step3[GP_SP_COUNT] = {28000, 5000, 3000, 15000, 2000, 15000, 12000, 20000};
static const gp_ns step4[GP_SP_COUNT] = {10000, 0, 0, 0, 0, 0, 0, 50000};

static void step_breakdown(void **state)
{
    (void)state;
    tb b = step_trace();
    gp_analysis *a = analyze(&b, NULL);
    const gp_rank_analysis *r = &a->ranks[0];
    assert_int_equal(r->n_step_parts, 2);
    expect_parts(&r->step_parts[0], 3, step3);
    expect_parts(&r->step_parts[1], 4, step4);
    gp_analysis_free(a);
    /* The selection: --steps 4 keeps step 4, --steps hta drops the last step. */
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    assert_int_equal(gp_analyze_parse_steps("4", &o), GP_OK);
    assert_int_equal(gp_analyze_trace(b.t, &o, &a, NULL), GP_OK);
    assert_int_equal(a->ranks[0].n_step_parts, 1);
    expect_parts(&a->ranks[0].step_parts[0], 4, step4);
    gp_analysis_free(a);
    o.steps = GP_STEPS_HTA;
    assert_int_equal(gp_analyze_trace(b.t, &o, &a, NULL), GP_OK);
    assert_int_equal(a->ranks[0].n_step_parts, 1);
    expect_parts(&a->ranks[0].step_parts[0], 3, step3);
    gp_analysis_free(a);
    gp_trace_free(b.t);
}

/* Without ProfilerSteps: one row (step -1) for the whole trace, from its first event's start to
 * its last event's end. */
static void step_breakdown_whole_trace(void **state)
{
    (void)state;
    tb b = make();
    add(&b, b.s7, GP_EV_KERNEL, "gemm_kernel", 0, 1000, 0);
    add(&b, b.cpu, GP_EV_RUNTIME, "cudaDeviceSynchronize", 500, 2000, 0);
    add(&b, b.cpu, GP_EV_CPU_OP, "aten::copy_", 3000, 1000, 0);
    gp_analysis *a = analyze(&b, NULL);
    /* [0,4000): kernel [0,1000) 1000, runtime [1000,2500) 1500, other [2500,3000) 500, cpu_exec
     * [3000,4000) 1000. */
    const gp_ns want[GP_SP_COUNT] = {1000, 0, 0, 0, 1500, 0, 1000, 500};
    assert_int_equal(a->ranks[0].n_step_parts, 1);
    expect_parts(&a->ranks[0].step_parts[0], -1, want);
    gp_analysis_free(a);
    gp_trace_free(b.t);
}

/* The dashboard's Steps bar and the analysis' step breakdown are one computation: equal segments
 * on the same trace. */
static void dashboard_steps_agree(void **state)
{
    (void)state;
    tb b = step_trace();
    gp_analysis *a = analyze(&b, NULL);
    gp_summary *s = NULL;
    gp_timeline *tl = NULL;
    gp_dashboard *d = NULL;
    assert_int_equal(gp_summary_compute(gp_traces_const(&b.t), 1, NULL, &s, NULL), GP_OK);
    assert_int_equal(gp_timeline_build(gp_traces_const(&b.t), 1, NULL, &tl, NULL), GP_OK);
    gp_dashboard_inputs in = {.traces = gp_traces_const(&b.t),
                              .n_traces = 1,
                              .summary = s,
                              .timeline = tl,
                              .analysis = a};
    assert_int_equal(gp_dashboard_build(&in, &d, NULL), GP_OK);
    assert_int_equal(d->steps.n_parts, 2);
    for (size_t i = 0; i < 2; i++)
        for (int k = 0; k < GP_SP_COUNT; k++)
            assert_int_equal(d->steps.parts[i].seg[k], a->ranks[0].step_parts[i].part[k]);
    gp_dashboard_free(d);
    gp_timeline_free(tl);
    gp_summary_free(s);
    gp_analysis_free(a);
    gp_trace_free(b.t);
}

/* Renderers: the CSV tables have their header and one line per row (and cause); the table
 * names parse. */
static void render_tables(void **state)
{
    (void)state;
    tb b = step_trace();
    gp_analysis *a = analyze(&b, NULL);
    unsigned bits = 0;
    assert_int_equal(gp_analysis_table_parse("idle_causes", &bits), GP_OK);
    assert_int_equal(bits, GP_AT_IDLE_CAUSES);
    assert_int_equal(gp_analysis_table_parse("step_breakdown", &bits), GP_OK);
    assert_int_equal(bits, GP_AT_STEP_PARTS);
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    assert_non_null(fp);
    assert_int_equal(gp_analysis_render_csv(a, GP_AT_STEP_PARTS, fp), GP_OK);
    fclose(fp);
    assert_string_equal(buf, "rank,step,start_ns,end_ns,duration_ns,kernel_ns,memcpy_ns,memset_ns,"
                             "communication_ns,runtime_ns,dataloader_ns,cpu_exec_ns,other_ns,"
                             "critical_path_ns\n"
                             "0,3,0,100000,100000,28000,5000,3000,15000,2000,15000,12000,20000,\n"
                             "0,4,100000,160000,60000,10000,0,0,0,0,0,0,50000,\n");
    free(buf);
    fp = open_memstream(&buf, &len);
    assert_non_null(fp);
    assert_int_equal(gp_analysis_render_csv(a, GP_AT_IDLE_CAUSES, fp), GP_OK);
    fclose(fp);
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += buf[i] == '\n';
    assert_int_equal(lines, 1 + a->ranks[0].n_idle_causes * GP_IC_COUNT);
    free(buf);
    gp_analysis_free(a);
    gp_trace_free(b.t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cause_data_loading),
        cmocka_unit_test(cause_python_preprocessing),
        cmocka_unit_test(cause_sync),
        cmocka_unit_test(cause_launch),
        cmocka_unit_test(cause_comm_wait),
        cmocka_unit_test(cause_unrecorded),
        cmocka_unit_test(step_breakdown),
        cmocka_unit_test(step_breakdown_whole_trace),
        cmocka_unit_test(dashboard_steps_agree),
        cmocka_unit_test(render_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
