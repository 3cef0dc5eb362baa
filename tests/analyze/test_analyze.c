/* Unit tests for src/analyze on small synthetic traces built with the model's builder API. Every
 * expected figure is derived by hand in the comment above the trace (synthetic_trace) or the test.
 * The last tests run on the shared real traces and skip when they are absent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/shared_traces.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gpuprof/analyze.h"
#include "gpuprof/collectives.h"
#include "gpuprof/trace.h"
#include "analyze/analyze_internal.h"
#include "render/render_internal.h"

/* ---- building ------------------------------------------------------------------------------ */

static gp_strid S(gp_trace *t, const char *s)
{
    gp_strid id;
    assert_int_equal(gp_trace_intern(t, s, strlen(s), &id), GP_OK);
    return id;
}

static void add(gp_trace *t, uint32_t track, gp_event_kind kind, const char *name, gp_ns ts,
                gp_ns dur, int64_t corr, uint32_t extra)
{
    gp_event ev = {.ts = ts,
                   .dur = dur,
                   .correlation = corr,
                   .name = S(t, name),
                   .extra = extra,
                   .track = track,
                   .kind = (uint8_t)kind};
    if (kind == GP_EV_MEMORY)
        ev.flags = GP_EVF_INSTANT;
    assert_int_equal(gp_trace_add_event(t, &ev), GP_OK);
}

static void gpu(gp_trace *t, uint32_t track, gp_event_kind kind, const char *name, gp_ns ts,
                gp_ns dur, int64_t corr, int64_t stream, int64_t bytes)
{
    gp_gpu_info gi;
    gp_gpu_info_init(&gi);
    gi.device = 0;
    gi.stream = stream;
    gi.bytes = bytes;
    uint32_t extra;
    assert_int_equal(gp_trace_add_gpu_info(t, &gi, &extra), GP_OK);
    add(t, track, kind, name, ts, dur, corr, extra);
}

static void mem(gp_trace *t, uint32_t track, gp_ns ts, int64_t alloc, int64_t reserved)
{
    gp_mem_info mi = {.addr = 1,
                      .bytes = 1,
                      .total_allocated = alloc,
                      .total_reserved = reserved,
                      .device_type = 1,
                      .device_id = 0};
    uint32_t extra;
    assert_int_equal(gp_trace_add_mem_info(t, &mi, &extra), GP_OK);
    add(t, track, GP_EV_MEMORY, "[memory]", ts, 0, 0, extra);
}

/* The synthetic trace (times in ns; all multiples of 1 us so HTA's rounding is exact):
 *   CPU thread: L1 cudaLaunchKernel [0,5000) corr 1; L2 cudaLaunchKernel [6000,10000) corr 2;
 *               L3 cudaMemcpyAsync [60000,63000) corr 3; L4 cudaLaunchKernel [105000,107000) corr 4
 *               cpu_op outer [11000,40000), cpu_op aten::mm [15000,25000)
 *               [memory]: 12000 alloc 100 / res 200; 20000 alloc 300 / res 400; 50000 alloc 50
 *   stream 7:   K1 gemm_kernel [10000,30000) corr 1; K2 ncclDevKernel_AllReduce [35000,45000)
 *               corr 2; K3 Memcpy HtoD (Pageable -> Device) [100000,110000) corr 3, 1 MB;
 *               K4 gemm_kernel [150000,150000+k4) corr 4
 *   stream 20:  K5 multimem_all_reduce_kernel [20000,40000), no correlation
 *   device 0 capacity 310 bytes.
 * With k4 = 10000, default definitions:
 *   kernel_time 150000; union [10000,45000)+[100000,110000)+[150000,160000) = 55000; idle 95000;
 *   compute (K1, K4) 30000; non-compute 25000 -> 63.33 % / 20 % / 16.67 %.
 *   comm union [20000,45000) = 25000; overlap with compute [20000,30000) = 10000 -> 40 %.
 *   states: COMP 20000, COMM 15000, COMP+COMM 10000, MEM 10000 (of 55000).
 *   idle stream 7: K2 gap 5000, L2 before K1 end -> kernel_wait; K3 gap 55000, L3 (60000) after
 *   45000 -> host_wait; K4 gap 40000, L4 (105000) before 110000, >= 30 us -> other. */
static gp_trace *synthetic_trace(gp_ns k4, int32_t rank)
{
    gp_trace *t;
    assert_int_equal(gp_trace_create("synthetic", &t), GP_OK);
    uint32_t cpu, s7, s20;
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &s7), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 20, &s20), GP_OK);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 0, 5000, 1, 0);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 6000, 4000, 2, 0);
    add(t, cpu, GP_EV_RUNTIME, "cudaMemcpyAsync", 60000, 3000, 3, 0);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 105000, 2000, 4, 0);
    add(t, cpu, GP_EV_CPU_OP, "outer", 11000, 29000, 0, 0);
    add(t, cpu, GP_EV_CPU_OP, "aten::mm", 15000, 10000, 0, 0);
    mem(t, cpu, 12000, 100, 200);
    mem(t, cpu, 20000, 300, 400);
    mem(t, cpu, 50000, 50, 400);
    gpu(t, s7, GP_EV_KERNEL, "gemm_kernel", 10000, 20000, 1, 7, -1);
    gpu(t, s7, GP_EV_KERNEL, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 35000, 10000, 2, 7, -1);
    gpu(t, s7, GP_EV_MEMCPY, "Memcpy HtoD (Pageable -> Device)", 100000, 10000, 3, 7, 1000000);
    gpu(t, s7, GP_EV_KERNEL, "gemm_kernel", 150000, k4, 4, 7, -1);
    gpu(t, s20, GP_EV_KERNEL, "multimem_all_reduce_kernel", 20000, 20000, 0, 20, -1);
    gp_device_props d = {.id = 0, .total_global_mem = 310};
    assert_int_equal(gp_trace_add_device(t, &d), GP_OK);
    t->rank = rank;
    t->dist.present = true;
    t->dist.rank = rank;
    assert_int_equal(gp_trace_finish(t), GP_OK);
    return t;
}

static gp_analysis *run(const gp_trace *t, const gp_analyze_opts *o)
{
    gp_analysis *a = NULL;
    gp_error err = {0};
    assert_int_equal(gp_analyze_trace(t, o, &a, &err), GP_OK);
    assert_non_null(a);
    return a;
}

static const gp_idle_stream *idle_of(const gp_rank_analysis *r, int64_t stream)
{
    for (size_t i = 0; i < r->n_idle; i++)
        if (r->idle[i].stream == stream)
            return &r->idle[i];
    fail_msg("no idle row for stream %lld", (long long)stream);
    return NULL;
}

static gp_ns state_time(const gp_type_state *s, size_t n, uint32_t mask)
{
    for (size_t i = 0; i < n; i++)
        if (s[i].mask == mask)
            return s[i].time;
    return -1;
}

/* ---- tests ------------------------------------------------------------------------------- */

static void temporal_and_overlap_default(void **state)
{
    gp_trace *t = synthetic_trace(10000, 0);
    gp_analysis *a = run(t, NULL);
    const gp_rank_analysis *r = &a->ranks[0];
    assert_true(r->temporal.valid);
    assert_int_equal(r->temporal.kernel_time, 150000);
    assert_int_equal(r->temporal.idle, 95000);
    assert_int_equal(r->temporal.compute, 30000);
    assert_int_equal(r->temporal.non_compute, 25000);
    assert_float_equal(r->temporal.idle_pct, 100.0 * 95000 / 150000, 1e-9);
    assert_float_equal(r->temporal.compute_pct, 20.0, 1e-9);
    assert_int_equal(r->overlap.comm, 25000);
    assert_int_equal(r->overlap.comp, 30000);
    assert_int_equal(r->overlap.overlap, 10000);
    assert_float_equal(r->overlap.pct, 40.0, 1e-9);
    /* kernel types with overlap states (masks: 1 comp, 2 comm, 4 memory) */
    assert_int_equal(state_time(a->types, a->n_types, 1), 20000);
    assert_int_equal(state_time(a->types, a->n_types, 2), 15000);
    assert_int_equal(state_time(a->types, a->n_types, 3), 10000);
    assert_int_equal(state_time(a->types, a->n_types, 4), 10000);
    assert_int_equal(a->n_types, 4);
    assert_string_equal(a->types[0].label, "COMPUTATION");
    for (size_t i = 0; i < a->n_types; i++)
        if (a->types[i].mask == 3)
            assert_string_equal(a->types[i].label, "COMPUTATION overlapping COMMUNICATION");
    assert_float_equal(a->types[0].pct, 100.0 * 20000 / 55000, 1e-9);
    gp_analysis_free(a);
    gp_trace_free(t);
}

static void idle_breakdown_default(void **state)
{
    gp_trace *t = synthetic_trace(10000, 0);
    gp_analysis *a = run(t, NULL);
    const gp_idle_stream *s = idle_of(&a->ranks[0], 7);
    assert_int_equal(s->idle[GP_IDLE_HOST_WAIT], 55000);
    assert_int_equal(s->idle[GP_IDLE_KERNEL_WAIT], 5000);
    assert_int_equal(s->idle[GP_IDLE_OTHER], 40000);
    assert_int_equal(s->total, 100000);
    assert_float_equal(s->ratio[GP_IDLE_HOST_WAIT], 0.55, 1e-12);
    /* a 60 us threshold turns the 40 us gap into kernel_wait */
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    o.kernel_wait_ns = 60000;
    gp_analysis *b = run(t, &o);
    s = idle_of(&b->ranks[0], 7);
    assert_int_equal(s->idle[GP_IDLE_KERNEL_WAIT], 45000);
    assert_int_equal(s->idle[GP_IDLE_OTHER], 0);
    /* stream 20 has a single event: no gap, ratios undefined */
    s = idle_of(&b->ranks[0], 20);
    assert_int_equal(s->total, 0);
    assert_true(isnan(s->ratio[GP_IDLE_OTHER]));
    gp_analysis_free(a);
    gp_analysis_free(b);
    gp_trace_free(t);
}

/* HTA definitions: multimem_all_reduce_kernel is COMPUTATION for HTA, so compute = union of K1,
 * K5 ([10,40) us) + K4 = 40 us, non-compute 150 - 40 - 95 = 15 us; communication is K2 only
 * [35,45): overlap with [10,40) is 5 us -> 50 %. */
static void hta_mode_classification(void **state)
{
    gp_trace *t = synthetic_trace(10000, 0);
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    o.hta = true;
    gp_analysis *a = run(t, &o);
    const gp_rank_analysis *r = &a->ranks[0];
    assert_int_equal(r->temporal.compute, 40000);
    assert_int_equal(r->temporal.non_compute, 15000);
    assert_int_equal(r->overlap.comm, 10000);
    assert_float_equal(r->overlap.pct, 50.0, 1e-9);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* --steps hta: steps #1 [0,100000), #2 [100000,200000); CPU events before 100000 are kept, so
 * L4 (105000) is dropped with K4; K5 has no launch and is dropped. Left: K1, K2, K3:
 * kernel_time 110-10 = 100 us, busy 40 us, idle 60 us, compute 20 us, non-compute 20 us.
 * --steps 2-2: window [100000,200000): only L4 -> K4 alone: kernel_time 10 us, all compute. */
static void step_selection(void **state)
{
    gp_trace *t = synthetic_trace(10000, 0);
    uint32_t cpu;
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    add(t, cpu, GP_EV_USER_ANNOTATION, "ProfilerStep#1", 0, 100000, 0, 0);
    add(t, cpu, GP_EV_USER_ANNOTATION, "ProfilerStep#2", 100000, 100000, 0, 0);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    assert_int_equal(gp_analyze_parse_steps("hta", &o), GP_OK);
    gp_analysis *a = run(t, &o);
    const gp_rank_analysis *r = &a->ranks[0];
    assert_int_equal(r->steps_total, 2);
    assert_int_equal(r->steps_kept, 1);
    assert_int_equal(r->gpu_events, 3);
    assert_int_equal(r->temporal.kernel_time, 100000);
    assert_int_equal(r->temporal.idle, 60000);
    assert_int_equal(r->temporal.compute, 20000);
    assert_int_equal(r->temporal.non_compute, 20000);
    gp_analysis_free(a);
    assert_int_equal(gp_analyze_parse_steps("2-2", &o), GP_OK);
    a = run(t, &o);
    r = &a->ranks[0];
    assert_int_equal(r->gpu_events, 1);
    assert_int_equal(r->temporal.kernel_time, 10000);
    assert_float_equal(r->temporal.compute_pct, 100.0, 1e-9);
    gp_analysis_free(a);
    assert_int_equal(gp_analyze_parse_steps("7-9", &o), GP_OK);
    a = run(t, &o);
    assert_int_equal(a->ranks[0].gpu_events, 0);
    assert_false(a->ranks[0].temporal.valid);
    assert_non_null(strstr(a->ranks[0].note.msg, "ProfilerStep#7..#9"));
    gp_analysis_free(a);
    gp_trace_free(t);
}

static void parse_steps(void **state)
{
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    assert_int_equal(gp_analyze_parse_steps("all", &o), GP_OK);
    assert_int_equal(o.steps, GP_STEPS_ALL);
    assert_int_equal(gp_analyze_parse_steps("3-5", &o), GP_OK);
    assert_int_equal(o.steps, GP_STEPS_RANGE);
    assert_int_equal(o.step_first, 3);
    assert_int_equal(o.step_last, 5);
    assert_int_equal(gp_analyze_parse_steps("7", &o), GP_OK);
    assert_int_equal(o.step_first, 7);
    assert_int_equal(o.step_last, 7);
    assert_int_equal(gp_analyze_parse_steps("5-3", &o), GP_EINVAL);
    assert_int_equal(gp_analyze_parse_steps("x", &o), GP_EINVAL);
    assert_int_equal(gp_analyze_parse_steps("3-", &o), GP_EINVAL);
}

/* A 300 ns kernel at 200.4 us: HTA rounds the start up (201) and the end down (200): -1 us. */
static void hta_rounding_inward(void **state)
{
    gp_trace *t;
    assert_int_equal(gp_trace_create("tiny", &t), GP_OK);
    uint32_t s7;
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &s7), GP_OK);
    gpu(t, s7, GP_EV_KERNEL, "tiny_kernel", 200400, 300, 0, 7, -1);
    gpu(t, s7, GP_EV_KERNEL, "tiny_kernel", 300000, 2500, 0, 7, -1);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    o.hta = true;
    gp_analysis *a = run(t, &o);
    const gp_rank_analysis *r = &a->ranks[0];
    assert_int_equal(r->n_kernels, 1);
    assert_int_equal(r->kernels[0].sum, -1000 + 2000);
    assert_int_equal(r->kernels[0].min, -1000);
    gp_analysis_free(a);
    a = run(t, NULL);
    assert_int_equal(a->ranks[0].kernels[0].sum, 2800);
    assert_int_equal(a->ranks[0].kernels[0].min, 300);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* Top kernels: 7 names with sums 70,60,...,10 us (one event each), num_kernels 5. Cumulative sums
 * 70,130,180,220,250,270,280; the 0.8 quantile (linear, position 4.8) is 250 + 0.8*20 = 266, so
 * the first five names are kept and the last two (20 + 10 us) fold into "others" with mean 15. */
static void top_kernels_others(void **state)
{
    gp_trace *t;
    assert_int_equal(gp_trace_create("topk", &t), GP_OK);
    uint32_t s7;
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &s7), GP_OK);
    char name[16];
    for (int i = 0; i < 7; i++) {
        snprintf(name, sizeof(name), "k%d", i);
        gpu(t, s7, GP_EV_KERNEL, name, 1000000 * (i + 1), (gp_ns)(70 - 10 * i) * 1000, 0, 7, -1);
    }
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_analysis *a = run(t, NULL);
    const gp_rank_analysis *r = &a->ranks[0];
    assert_int_equal(r->n_kernels, 6);
    assert_string_equal(r->kernels[0].name, "k0");
    assert_int_equal(r->kernels[0].sum, 70000);
    const gp_kernel_row *o = &r->kernels[5];
    assert_true(o->others);
    assert_string_equal(o->name, "others");
    assert_int_equal(o->count, 2);
    assert_int_equal(o->sum, 30000);
    assert_int_equal(o->max, 20000);
    assert_int_equal(o->min, 10000);
    assert_float_equal(o->mean, 15000.0, 1e-9);
    assert_float_equal(o->stddev, sqrt(2.0 * 5000.0 * 5000.0), 1e-6);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* Launch statistics: cudaLaunchKernel L1, L2, L4 with CPU durations 5, 4, 2 us and delays
 * 10-5 = 5, 35-10 = 25 and 150-107 = 43 us; cudaMemcpyAsync delay 100-63 = 37 us. Queue on
 * stream 7: L1 +1, L2 +1 -> 2 before K1 starts. */
static void launches_and_queues(void **state)
{
    gp_trace *t = synthetic_trace(10000, 0);
    gp_analysis *a = run(t, NULL);
    const gp_rank_analysis *r = &a->ranks[0];
    const gp_launch_stats *ls = &r->launch;
    assert_int_equal(ls->launches, 4);
    assert_int_equal(ls->matched, 4);
    assert_int_equal(ls->gpu_unmatched, 1);
    assert_int_equal(ls->n_apis, 2);
    const gp_launch_api *k = &ls->apis[0];
    assert_string_equal(k->name, "cudaLaunchKernel");
    assert_int_equal(k->calls, 3);
    assert_int_equal(k->cpu_p50, 4000);
    assert_int_equal(k->cpu_max, 5000);
    assert_int_equal(k->delay_p50, 25000);
    assert_int_equal(k->delay_min, 5000);
    assert_int_equal(k->delay_max, 43000);
    assert_int_equal(ls->apis[1].delay_max, 37000);
    assert_int_equal(r->n_queues, 1);
    assert_int_equal(r->queues[0].stream, 7);
    assert_int_equal(r->queues[0].launches, 4);
    assert_int_equal(r->queues[0].max_len, 2);
    assert_int_equal(r->bandwidth.copies, 1);
    assert_int_equal(r->bandwidth.pageable, 1);
    assert_float_equal(r->bandwidth.mean_gbps, 1e6 / 1e4, 1e-9);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* Kernels in graphs: those with a graph id (CUDA), and those a graph launch call launched with
 * its correlation id and no graph id (ROCm: modern_vllm_decode_graph replays 421 kernels under one
 * hipGraphLaunch). A kernel of an ordinary launch is not one. */
static void graph_kernels_by_id_or_launch(void **state)
{
    (void)state;
    gp_trace *t;
    assert_int_equal(gp_trace_create("graphs", &t), GP_OK);
    uint32_t cpu, s0;
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 0, &s0), GP_OK);
    add(t, cpu, GP_EV_RUNTIME, "hipGraphLaunch", 1000, 500, 10, 0);
    add(t, cpu, GP_EV_RUNTIME, "hipLaunchKernel", 2000, 10, 11, 0);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 2100, 10, 12, 0);
    for (int i = 0; i < 3; i++)
        gpu(t, s0, GP_EV_KERNEL, "replayed", 3000 + i * 100, 50, 10, 0, 0);
    gpu(t, s0, GP_EV_KERNEL, "plain", 4000, 50, 11, 0, 0);
    gp_gpu_info gi; /* a CUDA kernel that carries its graph's id */
    gp_gpu_info_init(&gi);
    gi.device = 0;
    gi.stream = 0;
    gi.graph_id = 7;
    uint32_t extra;
    assert_int_equal(gp_trace_add_gpu_info(t, &gi, &extra), GP_OK);
    add(t, s0, GP_EV_KERNEL, "with_id", 5000, 50, 12, extra);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_analysis *a = run(t, NULL);
    const gp_launch_stats *ls = &a->ranks[0].launch;
    assert_int_equal(ls->graph_launches, 1);
    assert_int_equal(ls->graph_kernels, 4);
    assert_int_equal(ls->matched, 3);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* Byte counts come from the file: two copies of INT64_MAX and 4096 bytes sum to INT64_MAX, not to
 * a wrapped negative (undefined: fuzz_timeline_page found it); the busy time sums normally. */
static void bandwidth_sums_saturate(void **state)
{
    (void)state;
    gp_trace *t;
    assert_int_equal(gp_trace_create("huge copies", &t), GP_OK);
    uint32_t s7;
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &s7), GP_OK);
    gpu(t, s7, GP_EV_MEMCPY, "Memcpy HtoD", 1000, 1000, 1, 7, INT64_MAX);
    gpu(t, s7, GP_EV_MEMCPY, "Memcpy HtoD", 3000, 1000, 2, 7, 4096);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_analysis *a = run(t, NULL);
    const gp_bandwidth *bw = &a->ranks[0].bandwidth;
    assert_int_equal(bw->copies, 2);
    assert_int_equal(bw->bytes, INT64_MAX);
    assert_int_equal(bw->busy, 2000);
    assert_true(bw->mean_gbps > 0);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* A hostile trace: three streams, each one launched kernel [0, H) with H = INT64_MAX / 2, so
 * every sum of durations passes INT64_MAX (a file reaches it with 15,251 events at the 7-day
 * duration cap). The sums saturate instead of overflowing (UBSan aborts the sanitizer build). */
#define HUGE_DUR (INT64_MAX / 2)
static gp_trace *huge_kernels_trace(int32_t rank)
{
    gp_trace *t;
    assert_int_equal(gp_trace_create("huge kernels", &t), GP_OK);
    uint32_t cpu;
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    for (int k = 0; k < 3; k++) {
        uint32_t s;
        assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7 + k, &s), GP_OK);
        add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", k, 1, 1 + k, 0);
        gpu(t, s, GP_EV_KERNEL, "gemm_kernel", 0, HUGE_DUR, 1 + k, 7 + k, -1);
    }
    t->rank = rank;
    t->dist.present = true;
    t->dist.rank = rank;
    assert_int_equal(gp_trace_finish(t), GP_OK);
    return t;
}

static void duration_sums_saturate(void **state)
{
    (void)state;
    gp_trace *t = huge_kernels_trace(0);
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    o.small_kernel_ns = 1e19; /* every kernel is "small": small_kernels_time sums them too */
    gp_analysis *a = run(t, &o);
    const gp_rank_analysis *r = &a->ranks[0];
    assert_int_equal(r->kernels_total, 3);
    assert_int_equal(r->kernels_time, INT64_MAX);
    assert_int_equal(r->small_kernels, 3);
    assert_int_equal(r->small_kernels_time, INT64_MAX);
    bool found = false; /* the top-kernels row of gemm_kernel: 3 calls, summed */
    for (size_t i = 0; i < r->n_kernels; i++)
        if (!r->kernels[i].others && strcmp(r->kernels[i].name, "gemm_kernel") == 0) {
            assert_int_equal(r->kernels[i].count, 3);
            assert_int_equal(r->kernels[i].sum, INT64_MAX);
            found = true;
        }
    assert_true(found);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* Three such ranks: each rank's COMPUTATION time is H (the union of its kernels); the job's
 * kernel-type table adds the ranks and saturates at INT64_MAX. */
static void rank_sums_saturate(void **state)
{
    (void)state;
    gp_trace *ranks[3] = {huge_kernels_trace(0), huge_kernels_trace(1), huge_kernels_trace(2)};
    gp_job job = {.ranks = ranks, .n_ranks = 3};
    gp_analysis *a = NULL;
    assert_int_equal(gp_analyze_job(&job, NULL, &a, NULL), GP_OK);
    assert_int_equal(a->n_ranks, 3);
    assert_int_equal(state_time(a->ranks[0].types, a->ranks[0].n_types, 1), HUGE_DUR);
    assert_int_equal(state_time(a->types, a->n_types, 1), INT64_MAX);
    gp_analysis_free(a);
    for (int i = 0; i < 3; i++)
        gp_trace_free(ranks[i]);
}

/* Activity: CPU union = L1 5 + L2 4 + outer 29 + L3 3 + L4 2 = 43 us; GPU union 55 us; both:
 * outer [11,40) within [10,45) = 29 us + L4 [105,107) = 2 us. Memory peak 300 B at 20 us while
 * aten::mm (innermost) and gemm_kernel run; capacity 310 B. */
static void activity_and_memory(void **state)
{
    gp_trace *t = synthetic_trace(10000, 0);
    gp_analysis *a = run(t, NULL);
    const gp_rank_analysis *r = &a->ranks[0];
    assert_int_equal(r->activity.cpu_active, 43000);
    assert_int_equal(r->activity.gpu_active, 55000);
    assert_int_equal(r->activity.overlap, 31000);
    assert_int_equal(r->activity.span, 160000);
    assert_int_equal(r->n_memory, 1);
    const gp_memory_device *m = &r->memory[0];
    assert_int_equal(m->events, 3);
    assert_int_equal(m->peak_allocated, 300);
    assert_int_equal(m->peak_ts, 20000);
    assert_int_equal(m->peak_reserved, 400);
    assert_int_equal(m->final_allocated, 50);
    assert_int_equal(m->capacity, 310);
    assert_string_equal(m->running_cpu, "aten::mm");
    assert_string_equal(m->running_gpu, "gemm_kernel");
    /* The one peak-memory definition agrees with the allocator table. */
    assert_int_equal(r->peak_memory.source, GP_PEAK_ALLOCATOR);
    assert_int_equal(r->peak_memory.bytes, m->peak_allocated);
    assert_int_equal(r->peak_memory.ts, m->peak_ts);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* The CPU op at each memory device's peak against its definition, on random threads: of the
 * cpu_ops covering the peak (start <= peak < end), the one that started last; on a tie of starts
 * the first thread's (tracks in creation order), within a thread the later one. Three threads of
 * nested and overlapping ops on a 1 us grid (ties across threads), Python frames and [memory]
 * events between them (not ops), 40 devices with one [memory] event each, some peaks outside
 * every op. */
static void cpu_op_at_peaks_match_definition(void **state)
{
    (void)state;
    enum { THREADS = 3, OPS = 300, DEVS = 40 };
    static char names[THREADS][OPS][16];
    static gp_ns ts[THREADS][OPS], dur[THREADS][OPS];
    uint32_t seed = 777;
    gp_trace *t;
    assert_int_equal(gp_trace_create("peaks_random", &t), GP_OK);
    uint32_t tracks[THREADS];
    for (int k = 0; k < THREADS; k++)
        assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 10 + k, &tracks[k]), GP_OK);
    for (int k = 0; k < THREADS; k++) {
        gp_ns at = 0;
        for (int i = 0; i < OPS; i++) {
            seed = seed * 1103515245u + 12345u;
            at += 1000 * (gp_ns)((seed >> 16) % 3 + 1);
            ts[k][i] = at;
            seed = seed * 1103515245u + 12345u;
            dur[k][i] = 1000 * (gp_ns)((seed >> 16) % 12);
            snprintf(names[k][i], sizeof names[k][i], "op%d_%d", k, i);
            add(t, tracks[k], GP_EV_CPU_OP, names[k][i], ts[k][i], dur[k][i], 0, 0);
            add(t, tracks[k], GP_EV_PYTHON, "frame.py(1): f", ts[k][i] + 500, 200, 0, 0);
        }
    }
    gp_ns peak[DEVS];
    for (int d = 0; d < DEVS; d++) {
        seed = seed * 1103515245u + 12345u;
        peak[d] = 1000 * (gp_ns)((seed >> 16) % 700);
        gp_mem_info mi = {.addr = 1,
                          .bytes = 1,
                          .total_allocated = 100 + d,
                          .total_reserved = 200,
                          .device_type = 1,
                          .device_id = d};
        uint32_t extra;
        assert_int_equal(gp_trace_add_mem_info(t, &mi, &extra), GP_OK);
        add(t, tracks[d % THREADS], GP_EV_MEMORY, "[memory]", peak[d], 0, 0, extra);
    }
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_analysis *a = run(t, NULL);
    const gp_rank_analysis *r = &a->ranks[0];
    assert_int_equal(r->n_memory, DEVS);
    size_t outside = 0;
    for (size_t m = 0; m < r->n_memory; m++) {
        const gp_memory_device *md = &r->memory[m];
        gp_ns at = peak[md->device_id];
        assert_int_equal(md->peak_ts, at);
        const char *want = "";
        gp_ns best = INT64_MIN;
        for (int k = 0; k < THREADS; k++) /* a later thread replaces on a later start only */
            for (int i = 0; i < OPS; i++)
                if (ts[k][i] <= at && ts[k][i] + dur[k][i] > at && ts[k][i] > best) {
                    best = ts[k][i];
                    want = names[k][i];
                }
        outside += want[0] == '\0';
        assert_string_equal(md->running_cpu, want);
    }
    assert_true(outside > 0 && outside < DEVS); /* both cases occur */
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* Peak memory: the first source present wins (allocator, then profiler ranges, then memory
 * counters), its largest value (earliest on ties), within the window. */
static void peak_memory_sources_and_window(void **state)
{
    gp_trace *t;
    uint32_t cpu, ctr, extra;
    assert_int_equal(gp_trace_create("peak", &t), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_COUNTER, 1, 0, &ctr), GP_OK);
    static const char *args[] = {"{\"mem_peak_bytes\": 700}", "{\"size\": 9999}",
                                 "{\"mem_peak_bytes\":900,\"x\":1}", "{\"mem_peak_bytes\": 900}"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(gp_trace_add_args(t, args[i], strlen(args[i]), &extra), GP_OK);
        add(t, cpu, GP_EV_RANGE, i == 3 ? "late" : "step", 100 * i, 50, 0, extra);
    }
    static const double vals[] = {5000, 8000, 6000};
    for (int i = 0; i < 3; i++) {
        gp_counter_sample c = {.ts = 10 + 100 * i, .value = vals[i], .track = ctr};
        c.series = S(t, i == 1 ? "gpu0.utilization_pct" : "gpu0.memory_used_bytes");
        assert_int_equal(gp_trace_add_counter(t, &c), GP_OK);
    }
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_peak_memory p;
    gp_peak_memory_of(t, INT64_MIN, INT64_MAX, &p);
    assert_int_equal(p.source, GP_PEAK_PROFILER); /* no allocator events: ranges first */
    assert_int_equal(p.bytes, 900);
    assert_int_equal(p.ts, 200); /* the earlier of the two 900s */
    assert_string_equal(p.what, "step");
    gp_peak_memory_of(t, 0, 100, &p); /* only the first range and the first sample */
    assert_int_equal(p.source, GP_PEAK_PROFILER);
    assert_int_equal(p.bytes, 700);
    gp_peak_memory_of(t, 1000, 2000, &p);
    assert_int_equal(p.source, GP_PEAK_NONE);
    assert_int_equal(p.bytes, -1);
    assert_string_equal(gp_peak_source_name(p.source), "none");
    gp_trace_free(t);
    /* Counters only: the memory series, not the larger utilization series. */
    assert_int_equal(gp_trace_create("peak2", &t), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_COUNTER, 1, 0, &ctr), GP_OK);
    for (int i = 0; i < 3; i++) {
        gp_counter_sample c = {.ts = 10 + 100 * i, .value = vals[i], .track = ctr};
        c.series = S(t, i == 1 ? "gpu0.utilization_pct" : "gpu0.memory_used_bytes");
        assert_int_equal(gp_trace_add_counter(t, &c), GP_OK);
    }
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_peak_memory_of(t, INT64_MIN, INT64_MAX, &p);
    assert_int_equal(p.source, GP_PEAK_COUNTER);
    assert_int_equal(p.bytes, 6000);
    assert_int_equal(p.ts, 210);
    assert_string_equal(p.what, "gpu0.memory_used_bytes");
    gp_trace_free(t);
}

/* Findings: the cause first, then by gain: copy_heavy (a pageable copy, gain 10/2 = 5 us -> low),
 * memory_peak (300/310 = 97 % -> critical, gain 0). The cause, from the critical path of the whole
 * trace [0, 160) us worked out by hand (default mode): cpu 0 -> 60 (up to L3's start: L1 5, L2 4,
 * outer 29 of which aten::mm 10, the gaps 1 + 1 + 20), launch L3 60 -> K3 100 (40), K3 10, K4
 * queued behind K3 (L4 at 105 < 110): kernel-kernel 110 -> 150 (40), K4 10. The cause finding
 * counts the launch calls on the path (L1 5, L2 4) as launch overhead (docs/decisions/
 * launch-call-time.md): cpu 51, launch 49. cpu 51 of 160 = 31.9 % is the largest class that is not
 * GPU compute (launch 49, k-k 40): critical_path_cpu_bound, a cause, critical (>= 30 %), gain
 * 51 us. (K1 -> K2 and K5 end at 45 and 40, nothing waits.)
 * launch_bound (idle 63 %, host_wait 55 of 100 us idle) does not fire: the rank has a critical
 * path. Metrics are in base units. */
static void findings_rules(void **state)
{
    gp_trace *t = synthetic_trace(10000, 0);
    gp_analysis *a = run(t, NULL);
    if (!a->ranks[0].n_critical_paths) {
        gp_analysis_free(a); /* a build without critpath.c: test_findings fills paths by hand */
        gp_trace_free(t);
        skip();
    }
    const gp_critical_path *cp = &a->ranks[0].critical_paths[0];
    assert_int_equal(cp->length, 160000);
    assert_int_equal(cp->by_class[GP_CP_CPU], 60000);
    assert_int_equal(cp->by_class[GP_CP_KERNEL_KERNEL], 40000);
    assert_int_equal(cp->by_class[GP_CP_LAUNCH], 40000);
    assert_int_equal(cp->by_class[GP_CP_GPU_COMPUTE], 20000);
    assert_int_equal(a->n_findings, 3);
    assert_string_equal(a->findings[0].rule, "critical_path_cpu_bound");
    assert_true(a->findings[0].cause);
    assert_int_equal(a->findings[0].priority, GP_PRIO_CRITICAL);
    assert_int_equal(a->findings[0].gain_ns, 51000);
    assert_string_equal(a->findings[1].rule, "copy_heavy");
    assert_int_equal(a->findings[1].gain_ns, 5000);
    assert_int_equal(a->findings[1].priority, GP_PRIO_LOW);
    assert_string_equal(a->findings[1].evidence[0].name, "memcpy_time");
    assert_float_equal(a->findings[1].evidence[0].value, 10000.0, 0);
    assert_int_equal(a->findings[1].evidence[0].unit, GP_FU_NS);
    assert_string_equal(a->findings[2].rule, "memory_peak");
    assert_int_equal(a->findings[2].priority, GP_PRIO_CRITICAL);
    double share = 0, peak = 0;
    assert_true(gp_finding_metric(&a->findings[2], "peak_share", &share));
    assert_true(gp_finding_metric(&a->findings[2], "peak_allocated", &peak));
    assert_float_equal(share, 300.0 / 310.0, 1e-12);
    assert_float_equal(peak, 300.0, 0); /* bytes, not "GB" */
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* Three ranks; rank 2's K4 runs 250 us instead of 10: compute 270 us against a median of 30. */
static void stragglers_across_ranks(void **state)
{
    gp_trace *ranks[3] = {synthetic_trace(10000, 0), synthetic_trace(10000, 1),
                          synthetic_trace(250000, 2)};
    gp_job job = {.ranks = ranks, .n_ranks = 3};
    gp_analysis *a = NULL;
    assert_int_equal(gp_analyze_job(&job, NULL, &a, NULL), GP_OK);
    assert_int_equal(a->n_ranks, 3);
    assert_int_equal(a->n_stragglers, 1);
    assert_int_equal(a->stragglers[0].rank, 2);
    assert_string_equal(a->stragglers[0].metric, "compute_time");
    assert_float_equal(a->stragglers[0].value, 270000.0, 1e-9);
    assert_float_equal(a->stragglers[0].median, 30000.0, 1e-9);
    /* job-level kernel types add the ranks: COMPUTATION = 20 + 20 + 260 us */
    for (size_t i = 0; i < a->n_types; i++)
        if (a->types[i].mask == 1)
            assert_int_equal(a->types[i].time, 300000);
    /* every rank starts its one allreduce at 35 us: the collectives say nobody waited, so no
     * straggler finding, whatever the medians of totals say */
    for (size_t i = 0; i < a->n_findings; i++)
        assert_string_not_equal(a->findings[i].rule, "straggler");
    /* without the collectives the finding is the medians-of-totals fallback (variant 1), and
     * says so */
    gp_collectives_free(a->collectives);
    a->collectives = NULL;
    for (size_t i = 0; i < a->n_findings; i++)
        free(a->findings[i].ranks);
    free(a->findings);
    a->findings = NULL;
    a->n_findings = 0;
    free(a->stragglers);
    a->stragglers = NULL;
    a->n_stragglers = 0;
    assert_int_equal(gp__analyze_advise(a, gp_job_traces(&job), job.n_ranks, NULL, NULL), GP_OK);
    const gp_finding *f = NULL;
    for (size_t i = 0; i < a->n_findings; i++)
        if (strcmp(a->findings[i].rule, "straggler") == 0 && a->findings[i].rank == 2)
            f = &a->findings[i];
    assert_non_null(f);
    assert_int_equal(f->variant, 1);
    char title[512];
    gp__finding_title(f, title, sizeof title);
    assert_non_null(strstr(title, "(no trusted collectives: medians of per-rank totals): "
                                  "compute_time 270.000 us against a median of 30.000 us"));
    gp_analysis_free(a);
    for (int i = 0; i < 3; i++)
        gp_trace_free(ranks[i]);
}

static void classification_rules(void **state)
{
    /* gpuprof defaults fix HTA's misses */
    assert_int_equal(
        gp_classify_name("ncclDevKernel_AllReduce_Sum_f32_RING_LL", GP_EV_KERNEL, false),
        GP_KT_COMMUNICATION);
    assert_int_equal(gp_classify_name("multimem_all_reduce_kernel", GP_EV_KERNEL, false),
                     GP_KT_COMMUNICATION);
    assert_int_equal(gp_classify_name("rcclKernel_x", GP_EV_KERNEL, false), GP_KT_COMMUNICATION);
    assert_int_equal(gp_classify_name("hip_fused_gemm", GP_EV_KERNEL, false), GP_KT_COMPUTATION);
    assert_int_equal(gp_classify_name("Memcpy DtoD (Device -> Device)", GP_EV_MEMCPY, false),
                     GP_KT_MEMORY);
    assert_int_equal(gp_classify_name("Stream Sync", GP_EV_SYNC, false), GP_KT_OTHER);
    /* HTA's regexes, misses included */
    assert_int_equal(gp_classify_name("multimem_all_reduce_kernel", GP_EV_KERNEL, true),
                     GP_KT_COMPUTATION);
    assert_int_equal(gp_classify_name("hip_fused_gemm", GP_EV_KERNEL, true), GP_KT_COMMUNICATION);
    assert_int_equal(gp_classify_name("ncclDevKernel_X", GP_EV_KERNEL, true), GP_KT_COMMUNICATION);
    assert_int_equal(gp_classify_name("void ncclKernel_AllReduce", GP_EV_KERNEL, true),
                     GP_KT_COMMUNICATION);
    assert_int_equal(gp_classify_name("Memset (Device)", GP_EV_MEMSET, true), GP_KT_MEMORY);
    assert_int_equal(gp_classify_name("Stream Sync", GP_EV_SYNC, true), GP_KT_OTHER);
    assert_int_equal(gp_classify_name("Event Sync", GP_EV_SYNC, true), GP_KT_OTHER);
    gp_kernel_type kt = GP_KT_OTHER;
    assert_int_equal(gp_kernel_type_parse("comm", &kt), GP_OK);
    assert_int_equal(kt, GP_KT_COMMUNICATION);
    assert_int_equal(gp_kernel_type_parse("Memory", &kt), GP_OK);
    assert_int_equal(kt, GP_KT_MEMORY);
    assert_int_equal(gp_kernel_type_parse("bogus", &kt), GP_EINVAL);
    assert_int_equal(kt, GP_KT_MEMORY);
    gp_event_kind ek = GP_EV_OTHER;
    assert_int_equal(gp_event_kind_parse("kernels", &ek), GP_OK);
    assert_int_equal(ek, GP_EV_KERNEL);
    assert_int_equal(gp_event_kind_parse("kernelz", &ek), GP_EINVAL);
    unsigned bits = 0;
    assert_int_equal(gp_analysis_table_parse("top_kernels", &bits), GP_OK);
    assert_int_equal(bits, GP_AT_KERNELS);
    assert_int_equal(gp_analysis_table_parse("nope", &bits), GP_EINVAL);
}

/* A user rule makes gemm_kernel communication: compute drops to 0, comm grows by K1 + K4. */
static void user_rules(void **state)
{
    gp_trace *t = synthetic_trace(10000, 0);
    gp_classify_rule rules[] = {{"^gemm", GP_KT_COMMUNICATION}};
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    o.rules = rules;
    o.n_rules = 1;
    gp_analysis *a = run(t, &o);
    assert_int_equal(a->ranks[0].temporal.compute, 0);
    /* comm union: [10000,45000) + [150000,160000) = 45000 */
    assert_int_equal(a->ranks[0].overlap.comm, 45000);
    gp_analysis_free(a);
    gp_classify_rule bad[] = {{"(unclosed", GP_KT_MEMORY}};
    o.rules = bad;
    gp_error err = {0};
    a = NULL;
    assert_int_equal(gp_analyze_trace(t, &o, &a, &err), GP_EINVAL);
    assert_null(a);
    assert_non_null(strstr(err.msg, "(unclosed"));
    gp_trace_free(t);
}

/* A CPU-only trace: no GPU figures, a note, no crash in any renderer. */
static void cpu_only_trace(void **state)
{
    gp_trace *t;
    assert_int_equal(gp_trace_create("cpu", &t), GP_OK);
    uint32_t cpu;
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    add(t, cpu, GP_EV_CPU_OP, "aten::add", 0, 1000, 0, 0);
    add(t, cpu, GP_EV_CPU_OP, "aten::mul", 500, 2000, 0, 0);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_analysis *a = run(t, NULL);
    const gp_rank_analysis *r = &a->ranks[0];
    assert_false(r->temporal.valid);
    assert_true(isnan(r->temporal.idle_pct));
    assert_true(isnan(r->overlap.pct));
    assert_int_equal(r->activity.cpu_active, 2500);
    assert_non_null(strstr(r->note.msg, "CPU-only"));
    FILE *fp = tmpfile();
    assert_non_null(fp);
    assert_int_equal(gp_analysis_render_text(a, 0, fp), GP_OK);
    assert_int_equal(gp_analysis_render_json(a, 0, fp), GP_OK);
    for (unsigned bit = 1; bit && bit <= GP_AT_ALL; bit <<= 1)
        if (bit & GP_AT_ALL)
            assert_int_equal(gp_analysis_render_csv(a, bit, fp), GP_OK);
    assert_int_equal(gp_analysis_render_csv(a, GP_AT_TEMPORAL | GP_AT_IDLE, fp), GP_EINVAL);
    fclose(fp);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* ---- golden outputs ------------------------------------------------------------------------ */

static char *slurp(FILE *fp, size_t *len)
{
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    rewind(fp);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
    buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

static void check_golden(const char *name,
                         gp_status (*render)(const gp_analysis *, unsigned, FILE *),
                         const gp_analysis *a)
{
    const char *src = getenv("GP_SOURCE_DIR");
    if (!src)
        skip();
    char path[4096];
    snprintf(path, sizeof(path), "%s/tests/analyze/golden/%s", src, name);
    FILE *fp = tmpfile();
    assert_non_null(fp);
    assert_int_equal(render(a, 0, fp), GP_OK);
    size_t len;
    char *got = slurp(fp, &len);
    fclose(fp);
    if (getenv("GP_UPDATE_GOLDEN")) {
        FILE *out = fopen(path, "w");
        assert_non_null(out);
        fwrite(got, 1, len, out);
        fclose(out);
    }
    FILE *gf = fopen(path, "r");
    if (!gf)
        fail_msg("missing golden file %s (run with GP_UPDATE_GOLDEN=1)", path);
    size_t glen;
    char *want = slurp(gf, &glen);
    fclose(gf);
    if (glen != len || memcmp(want, got, len) != 0)
        fail_msg("%s differs from the golden file (GP_UPDATE_GOLDEN=1 to accept)", name);
    free(want);
    free(got);
}

static void golden_outputs(void **state)
{
    gp_trace *t = synthetic_trace(10000, 0);
    gp_analysis *a = run(t, NULL);
    check_golden("synthetic.txt", gp_analysis_render_text, a);
    check_golden("synthetic.json", gp_analysis_render_json, a);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* ---- real traces (skip when ../shared/traces is absent) ------------------------------------ */

static const char *shared_trace(const char *name, char *buf, size_t cap)
{
    const char *dir = getenv("GP_SHARED_DIR");
    if (!dir)
        return NULL;
    snprintf(buf, cap, "%s/traces/%s", dir, name);
    struct stat st;
    return stat(buf, &st) == 0 ? buf : NULL;
}

/* The job at path, read quietly (keep_shapes: with the ops' shapes, record_shapes). */
static gp_job *read_job_opts(const char *path, bool keep_shapes)
{
    gp_read_opts rd;
    gp_read_opts_init(&rd);
    rd.quiet = true;
    rd.keep_op_shapes = keep_shapes;
    gp_job *job = NULL;
    gp_error err = {0};
    assert_int_equal(gp_job_read(path, &rd, &job, &err), GP_OK);
    return job;
}

static gp_job *read_job(const char *path)
{
    return read_job_opts(path, false);
}

/* Reads and analyses a trace of ../shared/traces into *job; NULL (the caller skips) when absent. */
static gp_analysis *analyze_shared(const char *name, bool keep_shapes, gp_job **job)
{
    char buf[4096];
    const char *p = shared_trace(name, buf, sizeof(buf));
    if (!p)
        return NULL;
    *job = read_job_opts(p, keep_shapes);
    gp_analysis *a = NULL;
    assert_int_equal(gp_analyze_job(*job, NULL, &a, NULL), GP_OK);
    return a;
}

/* medium_a100_nccl is host_wait-bound (HTA's idle breakdown), but host_wait alone does not say
 * the host was launching: launch_bound fires only where the idle causes or the critical path say
 * so. Without them (a build that computes neither) it does not fire; with them the first finding
 * is a cause finding of the critical path. */
static void real_medium_launch_bound_needs_evidence(void **state)
{
    gp_job *job = NULL;
    gp_analysis *a = analyze_shared("medium_a100_nccl.json.gz", false, &job);
    if (!a)
        skip();
    const gp_rank_analysis *r = &a->ranks[0];
    assert_true(r->temporal.idle_pct > 50.0);
    assert_true(r->launch.matched > 1000);
    bool path = false;
    for (size_t i = 0; i < r->n_critical_paths; i++)
        path |= r->critical_paths[i].valid;
    if (!path && r->n_idle_causes == 0) {
        for (size_t i = 0; i < a->n_findings; i++)
            assert_string_not_equal(a->findings[i].rule, "launch_bound");
    } else if (path) {
        assert_true(a->n_findings >= 1);
        assert_true(strncmp(a->findings[0].rule, "critical_path_", 14) == 0 ||
                    a->findings[0].cause);
    }
    gp_analysis_free(a);
    gp_job_free(job);
}

static const gp_finding *finding(const gp_analysis *a, const char *rule)
{
    for (size_t i = 0; i < a->n_findings; i++)
        if (strcmp(a->findings[i].rule, rule) == 0)
            return &a->findings[i];
    return NULL;
}

static double evidence(const gp_finding *f, const char *name)
{
    for (size_t i = 0; i < f->n_evidence; i++)
        if (strcmp(f->evidence[i].name, name) == 0)
            return f->evidence[i].value;
    return -1.0;
}

/* modern_mi300_sglang_decode replays 544 of its 555 kernels in one hipGraphLaunch: the host-wait
 * finding must not advise capturing a graph, and fusing small kernels can only save the gaps
 * between queued kernels (the mean over all gaps was one 463 ms host gap: a 310 ms "gain"). */
static void real_graph_replay_advice(void **state)
{
    gp_job *job = NULL;
    gp_analysis *a = analyze_shared("modern_mi300_sglang_decode.json.gz", false, &job);
    if (!a)
        skip();
    const gp_rank_analysis *r = &a->ranks[0];
    assert_true(r->launch.graph_kernels * 2 >= r->kernels_total);
    /* launch_bound fires only where the idle causes (or the critical path) say launching; when
     * it does here, it must not advise capturing a graph (variant 1). */
    const gp_finding *lb = finding(a, "launch_bound");
    if (lb) {
        assert_int_equal(lb->type, GP_SUG_PARALLELIZATION);
        assert_int_equal(lb->variant, 1);
        assert_null(strstr(gp__finding_advice(lb), "Capture"));
        assert_non_null(strstr(gp__finding_advice(lb), "graph replays"));
        assert_float_equal(evidence(lb, "kernels_in_graphs"), (double)r->launch.graph_kernels, 0.0);
    } else {
        /* Not launch bound: the device-wide idle causes name something else first (here the
         * host blocked in hipMemcpyWithStream), or no idle was attributed at all. */
        for (size_t i = 0; i < r->n_idle_causes; i++) {
            const gp_idle_causes *ic = &r->idle_causes[i];
            if (ic->stream != -1 || ic->idle <= 0)
                continue;
            bool other_larger = false;
            for (int c = 0; c < GP_IC_COUNT; c++)
                other_larger |= c != GP_IC_LAUNCH && ic->by_cause[c] > ic->by_cause[GP_IC_LAUNCH];
            assert_true(other_larger);
        }
    }
    const gp_finding *sk = finding(a, "small_kernels");
    assert_non_null(sk);
    gp_ns kw = 0;
    uint64_t kw_gaps = 0;
    for (size_t i = 0; i < r->n_idle; i++) {
        kw += r->idle[i].idle[GP_IDLE_KERNEL_WAIT];
        kw_gaps += r->idle[i].gaps[GP_IDLE_KERNEL_WAIT];
    }
    assert_true(kw_gaps > 0);
    assert_int_equal(sk->gain_ns, (gp_ns)r->small_kernels * (kw / (gp_ns)kw_gaps));
    assert_true(sk->gain_ns < 1000000); /* under 1 ms of a 474 ms span */
    assert_int_equal(sk->priority, GP_PRIO_LOW);
    gp_analysis_free(a);
    gp_job_free(job);
}

/* Ranks taken from file order are noted for a job of several traces, not for a single trace,
 * whose rank says nothing. */
static void file_order_rank_note_only_for_jobs(void **state)
{
    gp_trace *ranks[2] = {synthetic_trace(10000, 0), synthetic_trace(10000, 1)};
    for (int i = 0; i < 2; i++)
        ranks[i]->dist.present = false;
    for (size_t n = 1; n <= 2; n++) {
        gp_job job = {.ranks = ranks, .n_ranks = n, .ranks_from_file_order = true};
        gp_analysis *a = NULL;
        assert_int_equal(gp_analyze_job(&job, NULL, &a, NULL), GP_OK);
        bool job_note = strstr(a->note.msg, "file-name order") != NULL;
        bool rank_note = strstr(a->ranks[0].note.msg, "No distributedInfo") != NULL;
        assert_true(job_note == (n > 1));
        assert_true(rank_note == (n > 1));
        gp_analysis_free(a);
    }
    gp_trace_free(ranks[0]);
    gp_trace_free(ranks[1]);
}

/* Synchronisation time: the cuda_sync events when the trace has any; else (most traces: Kineto
 * writes them only when asked to) the blocking calls, *Synchronize and copies without Async. */
static void sync_from_events_else_blocking_calls(void **state)
{
    for (int with_events = 0; with_events < 2; with_events++) {
        gp_trace *t;
        assert_int_equal(gp_trace_create("sync", &t), GP_OK);
        uint32_t cpu, s7;
        assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
        assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &s7), GP_OK);
        add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 0, 1000, 1, 0);
        add(t, cpu, GP_EV_RUNTIME, "cudaStreamSynchronize", 2000, 8000, 0, 0);
        add(t, cpu, GP_EV_RUNTIME, "cudaMemcpyAsync", 11000, 1000, 0, 0);
        add(t, cpu, GP_EV_RUNTIME, "hipMemcpyWithStream", 13000, 5000, 0, 0);
        add(t, cpu, GP_EV_DRIVER, "cuCtxSynchronize", 20000, 2000, 0, 0);
        add(t, cpu, GP_EV_RUNTIME, "cudaMemcpy", 23000, 3000, 0, 0);
        add(t, cpu, GP_EV_CPU_OP, "aten::synchronize_like_Synchronize", 27000, 1000, 0, 0);
        gpu(t, s7, GP_EV_KERNEL, "k", 1500, 9000, 1, 7, -1);
        if (with_events)
            gpu(t, s7, GP_EV_SYNC, "Stream Sync", 9000, 1000, 0, 7, -1);
        assert_int_equal(gp_trace_finish(t), GP_OK);
        gp_analysis *a = run(t, NULL);
        const gp_activity *act = &a->ranks[0].activity;
        if (with_events) {
            assert_int_equal(act->syncs, 1);
            assert_int_equal(act->sync, 1000);
        } else {
            /* StreamSynchronize 8, WithStream 5, CtxSynchronize 2, cudaMemcpy 3 us */
            assert_int_equal(act->syncs, 4);
            assert_int_equal(act->sync, 18000);
        }
        gp_analysis_free(a);
        gp_trace_free(t);
    }
}

/* op_below_roofline on real traces: its gain is the GPU time above the roof, and its suggestion
 * fits the op (timesformer's matmul is memory-bound; the MI300 trace's attention already runs
 * flash, so "pick the flash backend" would be wrong there). */
static void real_op_below_roofline(void **state)
{
    static const struct {
        const char *trace, *says;
    } c[] = {{"modern_h100_timesformer.json.gz", "memory-bound"},
             {"modern_mi300_torch_compile.json.gz", "already runs a fused kernel"}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        gp_job *job = NULL;
        gp_analysis *a = analyze_shared(c[i].trace, true, &job);
        if (!a)
            skip();
        const gp_finding *f = finding(a, "op_below_roofline");
        assert_non_null(f);
        double roof = evidence(f, "roofline_share"), ns = evidence(f, "gpu_work_sum");
        assert_true(roof > 0 && roof < 0.30);
        assert_true(evidence(f, "share_of_gpu_work_sum") >= 0.05);
        assert_true(fabs((double)f->gain_ns - ns * (1 - roof)) <= 1000.0);
        assert_non_null(strstr(gp__finding_advice(f), c[i].says));
        gp_analysis_free(a);
        gp_job_free(job);
    }
}

/* modern_h100_timesformer's attention is unfused: matmul -> softmax -> matmul on
 * [8,12,3137,64] (space) and [3136,12,8,64] (time), 12 layers each. TraceLens's op_perf
 * (tracelens-reference) lists the matmuls and softmaxes; the rule must find all 24 and hold most
 * of the GPU time (the matmuls and softmaxes are 87 % of the kernel time), with the
 * scaled_dot_product_attention advice. */
static void real_unfused_attention(void **state)
{
    gp_job *job = NULL;
    gp_analysis *a = analyze_shared("modern_h100_timesformer.json.gz", true, &job);
    if (!a)
        skip();
    const gp_finding *f = finding(a, "unfused_attention");
    assert_non_null(f);
    assert_float_equal(evidence(f, "calls"), 24, 0);
    assert_true(evidence(f, "share_of_gpu_work_sum") > 0.8);
    assert_true(f->gain_ns > 0 && (double)f->gain_ns < evidence(f, "attention_time"));
    assert_string_equal(gp_finding_object_of(f, GP_OBJ_DTYPE), "bf16");
    assert_non_null(strstr(gp_finding_object_of(f, GP_OBJ_SHAPES), ",12,"));
    assert_non_null(strstr(gp__finding_advice(f), "scaled_dot_product_attention"));
    /* JSON: typed metrics with unit names, objects, and the title composed by render */
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    assert_int_equal(gp_analysis_render_json(a, GP_AT_FINDINGS, fp), GP_OK);
    fclose(fp);
    const char *at = strstr(buf, "\"rule\":\"unfused_attention\"");
    assert_non_null(at);
    assert_non_null(strstr(at, "\"title\":\"Unfused attention (aten::matmul -> softmax"));
    assert_non_null(strstr(at, "\"attention_time\":"));
    assert_non_null(strstr(at, "\"unit\":\"ns\""));
    assert_non_null(strstr(at, "\"unit\":\"ratio\""));
    assert_non_null(strstr(at, "\"kind\":\"shapes\""));
    assert_null(strstr(buf, "\"evidence\""));
    free(buf);
    /* vit runs flash attention: nothing unfused there */
    gp_analysis_free(a);
    gp_job_free(job);
    a = analyze_shared("modern_h100_vit.json.gz", true, &job);
    if (!a)
        skip();
    assert_null(finding(a, "unfused_attention"));
    gp_analysis_free(a);
    gp_job_free(job);
}

/* Low occupancy: the hottest compute kernel under 25 % is named. An occupancy of 0 with a warp
 * or more per SM is Kineto's "not computed" (qwen's sm90 GEMM: 10.9 warps per SM), never "runs
 * at 0 %"; a one-block grid's 0 is real (tiny_triton: 0.037 warps per SM). */
static void occupancy_zero_is_not_reported(void **state)
{
    static const struct {
        const char *name;
        gp_ns dur;
        float occ, warps;
    } k[] = {{"sm90_gemm_not_computed", 90000, 0.0f, 10.9f},
             {"small_occ_kernel", 30000, 12.5f, 8.0f},
             {"full_occ_kernel", 20000, 75.0f, 48.0f},
             {"one_block_kernel", 5000, 0.0f, 0.037f}};
    for (int with_low = 0; with_low < 3; with_low++) {
        gp_trace *t;
        assert_int_equal(gp_trace_create("occupancy", &t), GP_OK);
        uint32_t s7;
        assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &s7), GP_OK);
        gp_ns ts = 0;
        for (size_t i = 0; i < 4; i++) {
            if ((i == 1 && with_low != 1) || (i == 3 && with_low != 2))
                continue;
            gp_gpu_info gi;
            gp_gpu_info_init(&gi);
            gi.device = 0;
            gi.stream = 7;
            gi.blocks_per_sm = 0.9f;
            gi.occupancy_pct = k[i].occ;
            gi.warps_per_sm = k[i].warps;
            uint32_t extra;
            assert_int_equal(gp_trace_add_gpu_info(t, &gi, &extra), GP_OK);
            add(t, s7, GP_EV_KERNEL, k[i].name, ts, k[i].dur, 0, extra);
            ts += k[i].dur + 1000;
        }
        assert_int_equal(gp_trace_finish(t), GP_OK);
        gp_analysis *a = run(t, NULL);
        const gp_rank_analysis *r = &a->ranks[0];
        if (with_low == 1) {
            assert_string_equal(r->low_occ_kernel, "small_occ_kernel");
            assert_float_equal(r->low_occ_pct, 12.5, 1e-9);
            assert_int_equal(r->low_occ_time, 30000);
        } else if (with_low == 2) {
            assert_string_equal(r->low_occ_kernel, "one_block_kernel");
            assert_float_equal(r->low_occ_pct, 0.0, 1e-9);
        } else {
            assert_null(r->low_occ_kernel);
        }
        gp_analysis_free(a);
        gp_trace_free(t);
    }
}

/* The analyses of a rank run side by side: any thread count gives the same results, byte for
 * byte in the JSON rendering, in both modes (large_v100_nccl: memory events, NCCL, two streams;
 * modern_h100_timesformer: shapes, so the findings' op table is computed beside the tables). */
static char *render_json_text(const gp_analysis *a)
{
    char *text = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);
    assert_non_null(fp);
    assert_int_equal(gp_analysis_render_json(a, 0, fp), GP_OK);
    fclose(fp);
    return text;
}

static void thread_count_does_not_change_results_of(const char *name, bool shapes)
{
    char buf[4096];
    const char *p = shared_trace(name, buf, sizeof(buf));
    if (!p)
        skip();
    gp_job *job = read_job_opts(p, shapes);
    for (int hta = 0; hta < 2; hta++) {
        char *first = NULL;
        for (int threads = 1; threads <= 5; threads += 2) {
            gp_analyze_opts o;
            gp_analyze_opts_init(&o);
            o.threads = threads;
            if (hta) {
                o.hta = true;
                o.steps = GP_STEPS_HTA;
            }
            gp_analysis *a = NULL;
            assert_int_equal(gp_analyze_job(job, &o, &a, NULL), GP_OK);
            assert_true(a->ranks[0].gpu_events > 100);
            char *text = render_json_text(a);
            /* the op rule reads the op table by shape: present iff the trace has shapes */
            assert_int_equal(strstr(text, "\"op_below_roofline\"") != NULL, shapes);
            if (!first)
                first = text;
            else {
                assert_string_equal(first, text);
                free(text);
            }
            gp_analysis_free(a);
        }
        free(first);
    }
    gp_job_free(job);
}

static void thread_count_does_not_change_results(void **state)
{
    (void)state;
    thread_count_does_not_change_results_of("large_v100_nccl.json.gz", false);
    thread_count_does_not_change_results_of("modern_h100_timesformer.json.gz", true);
}

/* The host-side scans of the view and of the critical path's rank tables, cut in two halves run
 * side by side (gp__host_half), give one scan's results: the JSON rendering is the same, byte for
 * byte, cut or not, in both modes (timesformer is cut by default: 90 % Python frames; the NCCL
 * trace is not). */
static void host_scan_halves_match_one_scan_of(const char *name)
{
    char buf[4096];
    const char *p = shared_trace(name, buf, sizeof(buf));
    if (!p)
        skip();
    gp_job *job = read_job_opts(p, true);
    for (int hta = 0; hta < 2; hta++) {
        char *text[2];
        for (int split = 0; split < 2; split++) {
            gp_analyze_opts o;
            gp_analyze_opts_init(&o);
            o.threads = 2;
            if (hta) {
                o.hta = true;
                o.steps = GP_STEPS_HTA;
            }
            gp__host_split = split;
            gp_analysis *a = NULL;
            assert_int_equal(gp_analyze_job(job, &o, &a, NULL), GP_OK);
            assert_true(a->ranks[0].n_critical_paths > 0);
            text[split] = render_json_text(a);
            gp_analysis_free(a);
        }
        gp__host_split = -1;
        assert_string_equal(text[0], text[1]);
        free(text[0]);
        free(text[1]);
    }
    gp_job_free(job);
}

static void host_scan_halves_match_one_scan(void **state)
{
    (void)state;
    host_scan_halves_match_one_scan_of("modern_h100_timesformer.json.gz");
    host_scan_halves_match_one_scan_of("large_v100_nccl.json.gz");
    host_scan_halves_match_one_scan_of("small_alexnet_cudasync.json.gz");
}

/* The view joins GPU events to their launches by direct addressing when the correlation ids are
 * dense (as CUPTI numbers them) and by a sort-merge join when they are not (a replicated trace's
 * copies lie 10^8 apart): the same trace with every id spread 1,000,003 times apart, which keeps
 * their order, takes the second and gives the same JSON, byte for byte, whole or with the host
 * scan cut in two (the launch side then merges two sorted halves). */
static void launch_join_ways_agree_of(const char *name)
{
    char buf[4096];
    const char *p = shared_trace(name, buf, sizeof(buf));
    if (!p)
        skip();
    gp_job *job = read_job_opts(p, true);
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    o.threads = 2;
    gp_analysis *a = NULL;
    assert_int_equal(gp_analyze_job(job, &o, &a, NULL), GP_OK);
    char *dense = render_json_text(a);
    gp_analysis_free(a);
    gp_trace *t = job->ranks[0];
    size_t spread = 0;
    for (size_t k = 0; k < t->n_tracks; k++)
        for (size_t i = 0; i < t->tracks[k].n_events; i++)
            if (t->tracks[k].events[i].correlation > 0) {
                t->tracks[k].events[i].correlation *= 1000003;
                spread++;
            }
    assert_true(spread > 1000);
    for (int split = 0; split < 2; split++) {
        gp__host_split = split;
        assert_int_equal(gp_analyze_job(job, &o, &a, NULL), GP_OK);
        gp__host_split = -1;
        char *sorted = render_json_text(a);
        assert_string_equal(dense, sorted);
        free(sorted);
        gp_analysis_free(a);
    }
    free(dense);
    gp_job_free(job);
}

static void launch_join_ways_agree(void **state)
{
    (void)state;
    launch_join_ways_agree_of("large_v100_nccl.json.gz");
    launch_join_ways_agree_of("modern_h100_timesformer.json.gz");
}

/* cpu_only (HTA raises on it) and the 8-rank job directory. */
static void real_cpu_only_and_job(void **state)
{
    char buf[4096];
    const char *p = shared_trace("cpu_only.json.gz", buf, sizeof(buf));
    if (!p)
        skip();
    gp_job *job = read_job(p);
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    o.hta = true;
    o.steps = GP_STEPS_HTA;
    gp_analysis *a = NULL;
    assert_int_equal(gp_analyze_job(job, &o, &a, NULL), GP_OK);
    assert_false(a->ranks[0].temporal.valid);
    assert_non_null(strstr(a->ranks[0].note.msg, "CPU-only"));
    gp_analysis_free(a);
    gp_job_free(job);
    p = shared_trace("multirank8_dlrm_v100", buf, sizeof(buf));
    if (!p)
        skip();
    job = read_job(p);
    assert_int_equal(gp_analyze_job(job, NULL, &a, NULL), GP_OK);
    assert_int_equal(a->n_ranks, 8);
    for (size_t i = 0; i < 8; i++) {
        assert_int_equal(a->ranks[i].rank, (int32_t)i);
        assert_true(a->ranks[i].temporal.valid);
        assert_true(a->ranks[i].overlap.comm > 0);
    }
    gp_analysis_free(a);
    gp_job_free(job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(temporal_and_overlap_default),
        cmocka_unit_test(idle_breakdown_default),
        cmocka_unit_test(hta_mode_classification),
        cmocka_unit_test(step_selection),
        cmocka_unit_test(parse_steps),
        cmocka_unit_test(hta_rounding_inward),
        cmocka_unit_test(top_kernels_others),
        cmocka_unit_test(launches_and_queues),
        cmocka_unit_test(graph_kernels_by_id_or_launch),
        cmocka_unit_test(bandwidth_sums_saturate),
        cmocka_unit_test(duration_sums_saturate),
        cmocka_unit_test(rank_sums_saturate),
        cmocka_unit_test(activity_and_memory),
        cmocka_unit_test(cpu_op_at_peaks_match_definition),
        cmocka_unit_test(peak_memory_sources_and_window),
        cmocka_unit_test(findings_rules),
        cmocka_unit_test(stragglers_across_ranks),
        cmocka_unit_test(classification_rules),
        cmocka_unit_test(user_rules),
        cmocka_unit_test(cpu_only_trace),
        cmocka_unit_test(golden_outputs),
        cmocka_unit_test(real_medium_launch_bound_needs_evidence),
        cmocka_unit_test(real_unfused_attention),
        cmocka_unit_test(real_graph_replay_advice),
        cmocka_unit_test(occupancy_zero_is_not_reported),
        cmocka_unit_test(real_op_below_roofline),
        cmocka_unit_test(sync_from_events_else_blocking_calls),
        cmocka_unit_test(file_order_rank_note_only_for_jobs),
        cmocka_unit_test(thread_count_does_not_change_results),
        cmocka_unit_test(host_scan_halves_match_one_scan),
        cmocka_unit_test(launch_join_ways_agree),
        cmocka_unit_test(real_cpu_only_and_job),
    };
    return gp_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
