/* Unit tests of the critical path (src/analyze/critpath*.c) on synthetic traces. Every expected
 * figure is worked by hand in the comment above its test: HTA mode against the worked example of
 * ../shared/reference/hta-critical-path.md §10 (figures from running HTA), the default mode against
 * hand-worked traces (Python preprocessing, data loading, synchronisation-, launch- and GPU-bound
 * steps). Times in the comments are microseconds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/critpath_internal.h"
#include "common/shared_traces.h"
#include "gpuprof/analyze.h"
#include "gpuprof/trace.h"

#define US 1000       /* ns */
#define T0 1000000000 /* ns: traces start here, a whole number of microseconds */

static gp_strid S(gp_trace *t, const char *s)
{
    gp_strid id;
    assert_int_equal(gp_trace_intern(t, s, strlen(s), &id), GP_OK);
    return id;
}

/* A CPU event at [ts, ts + dur) us from T0 (fractions allowed). */
static void cpu(gp_trace *t, uint32_t track, gp_event_kind kind, const char *name, double ts,
                double dur, int64_t corr)
{
    gp_event ev = {.ts = T0 + (gp_ns)llround(ts * US),
                   .dur = (gp_ns)llround(dur * US),
                   .correlation = corr,
                   .name = S(t, name),
                   .track = track,
                   .kind = (uint8_t)kind};
    assert_int_equal(gp_trace_add_event(t, &ev), GP_OK);
}

static void gpu_ev(gp_trace *t, uint32_t track, gp_event_kind kind, const char *name, double ts,
                   double dur, int64_t corr, int64_t stream, const char *sync_kind)
{
    gp_gpu_info gi;
    gp_gpu_info_init(&gi);
    gi.device = 0;
    gi.stream = stream;
    gp_gpu_ext x;
    gp_gpu_ext_init(&x);
    if (sync_kind)
        x.sync_kind = S(t, sync_kind);
    assert_int_equal(gp_trace_add_gpu_ext(t, &x, &gi.ext), GP_OK);
    uint32_t extra;
    assert_int_equal(gp_trace_add_gpu_info(t, &gi, &extra), GP_OK);
    gp_event ev = {.ts = T0 + (gp_ns)llround(ts * US),
                   .dur = (gp_ns)llround(dur * US),
                   .correlation = corr,
                   .name = S(t, name),
                   .extra = extra,
                   .track = track,
                   .kind = (uint8_t)kind};
    assert_int_equal(gp_trace_add_event(t, &ev), GP_OK);
}

typedef struct tracks {
    uint32_t cpu, s7;
} tracks;

static gp_trace *new_trace(tracks *tk)
{
    gp_trace *t;
    assert_int_equal(gp_trace_create("critpath", &t), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &tk->cpu), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &tk->s7), GP_OK);
    return t;
}

static gp_analysis *run(gp_trace *t, const gp_analyze_opts *o)
{
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_analysis *a = NULL;
    gp_error err = {0};
    assert_int_equal(gp_analyze_trace(t, o, &a, &err), GP_OK);
    assert_int_equal(a->n_ranks, 1);
    return a;
}

static gp_analysis *run_hta(gp_trace *t)
{
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    o.cp_hta = true;
    return run(t, &o);
}

/* The single critical path of a one-rank analysis. */
static const gp_critical_path *only_path(const gp_analysis *a)
{
    assert_int_equal(a->ranks[0].n_critical_paths, 1);
    const gp_critical_path *cp = &a->ranks[0].critical_paths[0];
    assert_true(cp->valid);
    return cp;
}

static gp_ns class_sum(const gp_critical_path *cp)
{
    gp_ns s = 0;
    for (int c = 0; c < GP_CP_COUNT; c++)
        s += cp->by_class[c];
    return s;
}

/* The default mode's invariants: the classes sum to the length, which is at most the window
 * plus what GPU work ending after it adds (gpu_tail, ns). */
static void check_default(const gp_critical_path *cp, gp_ns gpu_tail)
{
    assert_int_equal(class_sum(cp), cp->length);
    assert_true(cp->length <= cp->end - cp->start + gpu_tail);
    double pct = 0;
    for (int c = 0; c < GP_CP_COUNT; c++)
        pct += cp->pct[c];
    assert_true(fabs(pct - 100.0) < 1e-9);
}

static bool on_path(const gp_critical_path *cp, const gp_trace *t, const char *name)
{
    for (size_t i = 0; i < cp->n_events; i++)
        if (strcmp(gp_trace_str(t, cp->events[i]->name), name) == 0)
            return true;
    return false;
}

/* ---- HTA mode: the worked example (§10) ------------------------------------------------------ */

/* One thread, stream 7; ProfilerStep#1 0-200; aten::op 10-130 holding L1 (20+10) -> kernA (40+50),
 * L2 (45+10) -> kernB (95+20) and cudaStreamSynchronize S (60+58) with its Stream Sync row.
 * kern_b_ts / kern_b_dur move kernB (the rounding check); sync_row and tail select the variants. */
static gp_trace *worked_example(double kern_b_ts, double kern_b_dur, bool sync_row, bool tail)
{
    tracks tk;
    gp_trace *t = new_trace(&tk);
    cpu(t, tk.cpu, GP_EV_USER_ANNOTATION, "ProfilerStep#1", 0, 200, 0);
    cpu(t, tk.cpu, GP_EV_CPU_OP, "aten::op", 10, 120, 0);
    cpu(t, tk.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 20, 10, 1); /* L1 */
    cpu(t, tk.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 45, 10, 2); /* L2 */
    cpu(t, tk.cpu, GP_EV_RUNTIME, "cudaStreamSynchronize", 60, 58, 3);
    if (tail)
        cpu(t, tk.cpu, GP_EV_CPU_OP, "aten::tail", 140, 100, 0);
    gpu_ev(t, tk.s7, GP_EV_KERNEL, "kernA", 40, 50, 1, 7, NULL);
    gpu_ev(t, tk.s7, GP_EV_KERNEL, "kernB", kern_b_ts, kern_b_dur, 2, 7, NULL);
    if (sync_row)
        gpu_ev(t, tk.s7, GP_EV_SYNC, "Stream Sync", 60, 58, 3, 7, "Stream Sync");
    return t;
}

/* Path op.s -> L1.s -> kernA.s -> kernA.e -> kernB.s -> kernB.e -> S.e -> op.e = 117 us: cpu 10 +
 * 12, launch 20, compute 50 + 20, kernel-kernel 5; HTA's summary() percentages. */
static void hta_worked_example(void **state)
{
    (void)state;
    gp_trace *t = worked_example(95, 20, true, false);
    gp_analysis *a = run_hta(t);
    const gp_critical_path *cp = only_path(a);
    assert_int_equal(cp->step, 1);
    assert_int_equal(cp->length, 117 * US);
    assert_int_equal(cp->by_class[GP_CP_CPU], 22 * US);
    assert_int_equal(cp->by_class[GP_CP_LAUNCH], 20 * US);
    assert_int_equal(cp->by_class[GP_CP_GPU_COMPUTE], 70 * US);
    assert_int_equal(cp->by_class[GP_CP_KERNEL_KERNEL], 5 * US);
    assert_int_equal(cp->by_class[GP_CP_DEPENDENCY], 0);
    assert_true(fabs(cp->pct[GP_CP_CPU] - 18.803419) < 1e-6);
    assert_true(fabs(cp->pct[GP_CP_GPU_COMPUTE] - 59.829060) < 1e-6);
    assert_true(fabs(cp->pct[GP_CP_KERNEL_KERNEL] - 4.273504) < 1e-6);
    assert_true(fabs(cp->pct[GP_CP_LAUNCH] - 17.094017) < 1e-6);
    /* critical events: aten::op, L1, kernA, kernB, S (5) */
    assert_int_equal(cp->n_events, 5);
    assert_true(on_path(cp, t, "aten::op"));
    assert_true(on_path(cp, t, "kernA"));
    assert_true(on_path(cp, t, "kernB"));
    assert_true(on_path(cp, t, "cudaStreamSynchronize"));
    assert_false(on_path(cp, t, "ProfilerStep#1"));
    gp_analysis_free(a);
    gp_trace_free(t);
}

static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* The overlay of the worked example (§9, §10): the 5 critical events get args.critical = 1 and
 * two flow pairs are drawn, the launch edge (weight 20) and the sync edge, whose start sits 1 us
 * before kernB's end (114) and whose end is S's end (118). */
static void hta_worked_example_overlay(void **state)
{
    (void)state;
    gp_trace *t = worked_example(95, 20, true, false);
    gp_analysis *a = run_hta(t);
    const gp_critical_path *cp = only_path(a);
    assert_int_equal(cp->n_links, 2);
    gp_chrome_marks m = {cp->events, cp->n_events, cp->links, cp->n_links};
    FILE *fp = tmpfile();
    assert_non_null(fp);
    gp_error err = {0};
    assert_int_equal(gp_trace_write_chrome_stream_marked(t, fp, &m, &err), GP_OK);
    long len = ftell(fp);
    rewind(fp);
    char *text = calloc((size_t)len + 1, 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)len, fp), (size_t)len);
    fclose(fp);
    assert_int_equal(count_of(text, "\"critical\":1"), 5);
    assert_int_equal(count_of(text, "\"cat\":\"critical_path\""), 4);
    assert_int_equal(count_of(text, "\"type\":\"critical_path_kernel_launch_delay\""), 2);
    assert_int_equal(count_of(text, "\"type\":\"critical_path_sync_dependency\""), 2);
    assert_non_null(strstr(text, "\"weight\":20.000"));
    assert_non_null(strstr(text, "\"ts\":1000114.000")); /* kernB's end - 1 us */
    assert_non_null(strstr(text, "\"ts\":1000118.000")); /* S's end */
    free(text);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* Without the overlay (critical_path_overlay false, as `gpuprof analyze` runs), the same path
 * keeps its figures and its event count, and no events or links are kept. */
static void hta_worked_example_no_overlay(void **state)
{
    (void)state;
    gp_trace *t = worked_example(95, 20, true, false);
    gp_analysis *with = run_hta(t);
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    assert_true(o.critical_path_overlay);
    o.cp_hta = true;
    o.critical_path_overlay = false;
    gp_analysis *without = NULL;
    gp_error err = {0};
    assert_int_equal(gp_analyze_trace(t, &o, &without, &err), GP_OK);
    const gp_critical_path *p = only_path(with), *q = only_path(without);
    assert_int_equal(p->n_events, 5);
    assert_int_equal(q->n_events, p->n_events);
    assert_null(q->events);
    assert_null(q->links);
    assert_int_equal(q->n_links, 0);
    assert_int_equal(q->length, p->length);
    for (int c = 0; c < GP_CP_COUNT; c++)
        assert_int_equal(q->by_class[c], p->by_class[c]);
    assert_int_equal(q->n_top, p->n_top);
    gp_analysis_free(with);
    gp_analysis_free(without);
    gp_trace_free(t);
}

/* Without the Stream Sync row the path cannot come back to the CPU: it ends at kernB.e = 105 us
 * (cpu 10, launch 20, compute 70, kernel-kernel 5). With aten::tail 140-240 added the CPU chain
 * wins: 62 at op.e, 0 across the idle gap, +100 -> 162 us, all cpu_bound. */
static void hta_worked_example_variants(void **state)
{
    (void)state;
    gp_trace *t = worked_example(95, 20, false, false);
    gp_analysis *a = run_hta(t);
    const gp_critical_path *cp = only_path(a);
    assert_int_equal(cp->length, 105 * US);
    assert_int_equal(cp->by_class[GP_CP_CPU], 10 * US);
    assert_int_equal(cp->by_class[GP_CP_LAUNCH], 20 * US);
    assert_int_equal(cp->by_class[GP_CP_GPU_COMPUTE], 70 * US);
    assert_int_equal(cp->by_class[GP_CP_KERNEL_KERNEL], 5 * US);
    gp_analysis_free(a);
    gp_trace_free(t);

    t = worked_example(95, 20, false, true);
    a = run_hta(t);
    cp = only_path(a);
    assert_int_equal(cp->length, 162 * US);
    assert_int_equal(cp->by_class[GP_CP_CPU], 162 * US);
    assert_true(fabs(cp->pct[GP_CP_CPU] - 100.0) < 1e-9);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* kernB at 95.2 + 0.5 rounds inward to [96, 95]: weight -1, used as 0 by the path (98 us), kept
 * by the breakdown (compute 50 - 1, kernel-kernel 6: the classes sum to 97). */
/* HTA drops the last step at load time when the steps have two names or more (§1): a region
 * within it (the annotation "late region") is then not found; with one name (two ProfilerStep#1)
 * nothing is dropped. The host scan runs whole and cut in two halves (gp__host_half), which count
 * the names across the cut. */
static void hta_drops_the_last_step_of_two_names(void **state)
{
    (void)state;
    for (int names = 1; names <= 2; names++) {
        for (int split = 0; split < 2; split++) {
            tracks tk;
            gp_trace *t = new_trace(&tk);
            cpu(t, tk.cpu, GP_EV_USER_ANNOTATION, "ProfilerStep#1", 0, 200, 0);
            cpu(t, tk.cpu, GP_EV_CPU_OP, "aten::early", 10, 100, 0);
            cpu(t, tk.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 20, 10, 1);
            cpu(t, tk.cpu, GP_EV_USER_ANNOTATION, names == 2 ? "ProfilerStep#2" : "ProfilerStep#1",
                300, 400, 0);
            cpu(t, tk.cpu, GP_EV_USER_ANNOTATION, "late region", 305, 350, 0);
            cpu(t, tk.cpu, GP_EV_CPU_OP, "aten::late", 310, 300, 0);
            gpu_ev(t, tk.s7, GP_EV_KERNEL, "kernA", 40, 50, 1, 7, NULL);
            gp_analyze_opts o;
            gp_analyze_opts_init(&o);
            o.cp_hta = true;
            o.cp_annotation = "late region";
            gp__host_split = split;
            gp_analysis *a = run(t, &o);
            gp__host_split = -1;
            assert_int_equal(a->ranks[0].n_critical_paths, 1);
            const gp_critical_path *cp = &a->ranks[0].critical_paths[0];
            if (names == 2) {
                assert_false(cp->valid);
                assert_non_null(strstr(cp->note, "late region"));
            } else {
                assert_true(cp->valid);
                assert_true(on_path(cp, t, "aten::late"));
            }
            gp_analysis_free(a);
            gp_trace_free(t);
        }
    }
}

static void hta_rounding(void **state)
{
    (void)state;
    gp_trace *t = worked_example(95.2, 0.5, true, false);
    gp_analysis *a = run_hta(t);
    const gp_critical_path *cp = only_path(a);
    assert_int_equal(cp->length, 98 * US);
    assert_int_equal(class_sum(cp), 97 * US);
    assert_int_equal(cp->by_class[GP_CP_GPU_COMPUTE], 49 * US);
    assert_int_equal(cp->by_class[GP_CP_KERNEL_KERNEL], 6 * US);
    assert_non_null(strstr(cp->note, "negative weight"));
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* One thread whose order rounding to HTA's microseconds changes: aten::a at 10.1 us (11-15 after
 * rounding), its launch call at 10.15 (11-12) and aten::b at 10.2 (11-16) come in that order in
 * ns, and in the order b, a, call in HTA's units. The region's events are sorted again, and the
 * launch call's place in them with it (critpath.c: the slots and the synchronising calls are
 * found again after a sort). The path must be the one of the same thread written in whole
 * microseconds (rounded: no sort), link for link. */
static gp_trace *reordered_example(bool rounded)
{
    tracks tk;
    gp_trace *t = new_trace(&tk);
    cpu(t, tk.cpu, GP_EV_USER_ANNOTATION, "ProfilerStep#1", 0, 200, 0);
    cpu(t, tk.cpu, GP_EV_CPU_OP, "aten::a", rounded ? 11 : 10.1, rounded ? 4 : 5.0, 0);
    cpu(t, tk.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", rounded ? 11 : 10.15, rounded ? 1 : 2.0, 5);
    cpu(t, tk.cpu, GP_EV_CPU_OP, "aten::b", rounded ? 11 : 10.2, rounded ? 5 : 5.8, 0);
    cpu(t, tk.cpu, GP_EV_RUNTIME, "cudaStreamSynchronize", 30, 40, 6);
    gpu_ev(t, tk.s7, GP_EV_KERNEL, "kern", 13, 50, 5, 7, NULL);
    return t;
}

static void hta_reordered_thread_matches_rounded(void **state)
{
    (void)state;
    gp_analysis *a[2];
    gp_trace *t[2];
    for (int r = 0; r < 2; r++) {
        t[r] = reordered_example(r == 1);
        gp_analyze_opts o;
        gp_analyze_opts_init(&o);
        o.cp_hta = true;
        o.critical_path_overlay = true;
        a[r] = run(t[r], &o);
    }
    const gp_critical_path *x = only_path(a[0]), *y = only_path(a[1]);
    assert_int_equal(x->length, y->length);
    assert_true(x->length > 0);
    for (int c = 0; c < GP_CP_COUNT; c++)
        assert_int_equal(x->by_class[c], y->by_class[c]);
    assert_int_equal(x->n_events, y->n_events);
    for (size_t i = 0; i < x->n_events; i++)
        assert_string_equal(gp_trace_str(t[0], x->events[i]->name),
                            gp_trace_str(t[1], y->events[i]->name));
    assert_int_equal(x->n_links, y->n_links);
    assert_true(x->n_links > 0);
    for (size_t i = 0; i < x->n_links; i++) {
        assert_string_equal(x->links[i].type, y->links[i].type);
        assert_string_equal(gp_trace_str(t[0], x->links[i].src->name),
                            gp_trace_str(t[1], y->links[i].src->name));
        assert_string_equal(gp_trace_str(t[0], x->links[i].dst->name),
                            gp_trace_str(t[1], y->links[i].dst->name));
        assert_int_equal(x->links[i].weight, y->links[i].weight);
    }
    assert_true(on_path(x, t[0], "cudaLaunchKernel"));
    for (int r = 0; r < 2; r++) {
        gp_analysis_free(a[r]);
        gp_trace_free(t[r]);
    }
}

/* The worked example with an event instead of the stream sync: cudaEventRecord (corr 10) at
 * rec_ts, cudaEventSynchronize S 60-118 and its Event Sync row (stream -1) naming the record
 * (wait_on_cuda_event_record_corr_id 10, wait_on_stream 7). The recorded work is the GPU work of
 * the latest launch on stream 7 before the record. */
static gp_trace *event_sync_example(double rec_ts, int64_t wait_corr)
{
    tracks tk;
    gp_trace *t = new_trace(&tk);
    uint32_t s_none;
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, -1, &s_none), GP_OK);
    cpu(t, tk.cpu, GP_EV_USER_ANNOTATION, "ProfilerStep#1", 0, 200, 0);
    cpu(t, tk.cpu, GP_EV_CPU_OP, "aten::op", 10, 120, 0);
    cpu(t, tk.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 20, 10, 1);
    cpu(t, tk.cpu, GP_EV_RUNTIME, "cudaEventRecord", rec_ts, 1, 10);
    cpu(t, tk.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 45, 10, 2);
    cpu(t, tk.cpu, GP_EV_RUNTIME, "cudaEventSynchronize", 60, 58, 3);
    gpu_ev(t, tk.s7, GP_EV_KERNEL, "kernA", 40, 50, 1, 7, NULL);
    gpu_ev(t, tk.s7, GP_EV_KERNEL, "kernB", 95, 20, 2, 7, NULL);
    gp_gpu_info gi;
    gp_gpu_info_init(&gi);
    gi.device = 0;
    gi.stream = -1;
    gp_gpu_ext x;
    gp_gpu_ext_init(&x);
    x.sync_kind = S(t, "Event Sync");
    x.wait_on_event_corr = wait_corr;
    x.wait_on_stream = 7;
    assert_int_equal(gp_trace_add_gpu_ext(t, &x, &gi.ext), GP_OK);
    uint32_t extra;
    assert_int_equal(gp_trace_add_gpu_info(t, &gi, &extra), GP_OK);
    gp_event ev = {.ts = T0 + 60 * US,
                   .dur = 58 * US,
                   .correlation = 3,
                   .name = S(t, "Event Sync"),
                   .extra = extra,
                   .track = s_none,
                   .kind = GP_EV_SYNC};
    assert_int_equal(gp_trace_add_event(t, &ev), GP_OK);
    return t;
}

/* HTA's Event Sync edge (§4.4). Record at 56 (after L2): the recorded work is kernB, whose end
 * reaches S's end as the Stream Sync did: 117 us, as the worked example. Record at 44 (before
 * L2): kernA; S's end is then max(50, 80), op's end 92, and kernB's end (105) ends the path.
 * Without a record id (-1): no edge, 105. */
static void hta_event_sync(void **state)
{
    (void)state;
    const struct {
        double rec_ts;
        int64_t wait_corr;
        gp_ns length;
    } cases[] = {{56, 10, 117 * US}, {44, 10, 105 * US}, {56, -1, 105 * US}};
    for (size_t i = 0; i < 3; i++) {
        gp_trace *t = event_sync_example(cases[i].rec_ts, cases[i].wait_corr);
        gp_analysis *a = run_hta(t);
        const gp_critical_path *cp = only_path(a);
        assert_int_equal(cp->length, cases[i].length);
        assert_int_equal(on_path(cp, t, "cudaEventSynchronize"), i == 0);
        gp_analysis_free(a);
        gp_trace_free(t);
    }
}

/* HTA mode on an annotation no event has: one invalid path saying why. */
static void hta_annotation_not_found(void **state)
{
    (void)state;
    gp_trace *t = worked_example(95, 20, true, false);
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    o.cp_hta = true;
    o.cp_annotation = "NoSuchRegion";
    gp_analysis *a = run(t, &o);
    assert_int_equal(a->ranks[0].n_critical_paths, 1);
    assert_false(a->ranks[0].critical_paths[0].valid);
    assert_non_null(strstr(a->ranks[0].critical_paths[0].note, "NoSuchRegion"));
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* ---- default mode ------------------------------------------------------------------------------
 */

/* ProfilerStep#1 0-400. Python preprocessing "resize" 10-175; "forward" 180-390 holding
 * aten::linear 185-200 (cudaLaunchKernel 190-195 -> gemm 196-360) and a D2H cudaMemcpyAsync 200-380
 * whose copy runs 362-370 (it blocks: the copy ends inside it). No cuda_sync event. The CPU chain
 * counts every gap: 0-190 is cpu (ProfilerStep 10, resize 165, ProfilerStep 5, forward 5, linear
 * 5). Launch edge 190 -> 196 (6), gemm 164, kernel-kernel 360 -> 362 (2, the copy was queued behind
 * gemm), copy 8, the host wakes 370 -> 380 (10 cpu), forward 10, step 10: 400 = the step. cpu 190 +
 * 30 = 220, launch 6, compute 172, kernel-kernel 2. HTA mode instead: the Python frames have no
 * nodes and the blocking copy call is CPU time (§11). */
static gp_trace *preprocessing_trace(void)
{
    tracks tk;
    gp_trace *t = new_trace(&tk);
    cpu(t, tk.cpu, GP_EV_USER_ANNOTATION, "ProfilerStep#1", 0, 400, 0);
    cpu(t, tk.cpu, GP_EV_PYTHON, "transformers/image_transforms.py(390): resize", 10, 165, 0);
    cpu(t, tk.cpu, GP_EV_PYTHON, "model.py(5): forward", 180, 210, 0);
    cpu(t, tk.cpu, GP_EV_CPU_OP, "aten::linear", 185, 15, 0);
    cpu(t, tk.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 190, 5, 1);
    cpu(t, tk.cpu, GP_EV_RUNTIME, "cudaMemcpyAsync", 200, 180, 2);
    gpu_ev(t, tk.s7, GP_EV_KERNEL, "gemm", 196, 164, 1, 7, NULL);
    gpu_ev(t, tk.s7, GP_EV_MEMCPY, "Memcpy DtoH (Device -> Pageable)", 362, 8, 2, 7, NULL);
    return t;
}

static void default_python_preprocessing(void **state)
{
    (void)state;
    gp_trace *t = preprocessing_trace();
    gp_analysis *a = run(t, NULL);
    const gp_critical_path *cp = only_path(a);
    check_default(cp, 0);
    assert_int_equal(cp->length, 400 * US);
    assert_int_equal(cp->by_class[GP_CP_CPU], 220 * US);
    assert_int_equal(cp->by_class[GP_CP_LAUNCH], 6 * US);
    assert_int_equal(cp->by_class[GP_CP_GPU_COMPUTE], 172 * US);
    assert_int_equal(cp->by_class[GP_CP_KERNEL_KERNEL], 2 * US);
    /* the Python frame holds the most time, then the kernel (launched from forward's frame) */
    assert_true(cp->n_top >= 2);
    assert_string_equal(cp->top[0].name, "transformers/image_transforms.py(390): resize");
    assert_int_equal(cp->top[0].cls, GP_CP_CPU);
    assert_int_equal(cp->top[0].time, 165 * US);
    assert_string_equal(cp->top[1].name, "gemm");
    assert_int_equal(cp->top[1].cls, GP_CP_GPU_COMPUTE);
    assert_string_equal(cp->top[1].python, "model.py(5): forward");
    assert_true(on_path(cp, t, "Memcpy DtoH (Device -> Pageable)"));
    gp_analysis_free(a);

    /* HTA mode: the chain through the Python frames is free and nothing brings the path back
     * from the GPU: linear's launch 190 -> gemm 196 (6) + 164 -> kernel-kernel 2 -> copy 8 = 180,
     * against the CPU: linear 5 (185-190) + 5 (launch lock edge) + 5 + copy call 180 = 195. */
    a = run_hta(t);
    const gp_critical_path *h = only_path(a);
    assert_int_equal(h->length, 195 * US);
    assert_int_equal(h->by_class[GP_CP_CPU], 195 * US);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* ProfilerStep#1 0-100: the DataLoader frame 5-60 holding aten::stack 10-30, then aten::add
 * 65-95. Default patterns: data_loading 55 (the frame and what it holds), cpu 45 (5 + 5 + 30 + 5).
 * With --data-load stack instead: data_loading 20 (aten::stack), cpu 80. */
static void default_data_loading(void **state)
{
    (void)state;
    tracks tk;
    gp_trace *t = new_trace(&tk);
    cpu(t, tk.cpu, GP_EV_USER_ANNOTATION, "ProfilerStep#1", 0, 100, 0);
    cpu(t, tk.cpu, GP_EV_PYTHON, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 5,
        55, 0);
    cpu(t, tk.cpu, GP_EV_CPU_OP, "aten::stack", 10, 20, 0);
    cpu(t, tk.cpu, GP_EV_CPU_OP, "aten::add", 65, 30, 0);
    gp_analysis *a = run(t, NULL);
    const gp_critical_path *cp = only_path(a);
    check_default(cp, 0);
    assert_int_equal(cp->length, 100 * US);
    assert_int_equal(cp->by_class[GP_CP_DATA_LOADING], 55 * US);
    assert_int_equal(cp->by_class[GP_CP_CPU], 45 * US);
    /* the overlay's events are kept; a path of host work only has no link to draw, and keeps no
     * array for none (each was 0.48 MB a step on large_v100_nccl x7, to the end of `report`) */
    assert_true(cp->n_events > 0);
    assert_non_null(cp->events);
    assert_int_equal(cp->n_links, 0);
    assert_null(cp->links);
    gp_analysis_free(a);

    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    const char *const pats[] = {"stack"};
    o.data_load = pats;
    o.n_data_load = 1;
    a = run(t, &o);
    cp = only_path(a);
    assert_int_equal(cp->by_class[GP_CP_DATA_LOADING], 20 * US);
    assert_int_equal(cp->by_class[GP_CP_CPU], 80 * US);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* ProfilerStep#1 0-100: launch 10-15 -> kernel 20-90 on stream 7, then SYNC 16-92 (no cuda_sync
 * row). Path: cpu 10, launch 10, compute 70, wake-up 90 -> 92 (2 cpu), then 8 to the step's end:
 * cpu 20, launch 10, compute 70. The 76 us the host spends blocked count as the kernel's. Same with
 * HIP's names. */
static void default_sync_bound(void **state)
{
    (void)state;
    const char *names[][2] = {{"cudaLaunchKernel", "cudaStreamSynchronize"},
                              {"hipLaunchKernel", "hipStreamSynchronize"},
                              {"cudaLaunchKernel", "cudaDeviceSynchronize"}};
    for (size_t i = 0; i < 3; i++) {
        tracks tk;
        gp_trace *t = new_trace(&tk);
        cpu(t, tk.cpu, GP_EV_USER_ANNOTATION, "ProfilerStep#1", 0, 100, 0);
        cpu(t, tk.cpu, GP_EV_RUNTIME, names[i][0], 10, 5, 1);
        cpu(t, tk.cpu, GP_EV_RUNTIME, names[i][1], 16, 76, 0);
        gpu_ev(t, tk.s7, GP_EV_KERNEL, "kernel", 20, 70, 1, 7, NULL);
        gp_analysis *a = run(t, NULL);
        const gp_critical_path *cp = only_path(a);
        check_default(cp, 0);
        assert_int_equal(cp->length, 100 * US);
        assert_int_equal(cp->by_class[GP_CP_CPU], 20 * US);
        assert_int_equal(cp->by_class[GP_CP_LAUNCH], 10 * US);
        assert_int_equal(cp->by_class[GP_CP_GPU_COMPUTE], 70 * US);
        gp_analysis_free(a);
        gp_trace_free(t);
    }
}

/* ProfilerStep#1 0-100: four launches 10-20, 30-40, 50-60, 70-80, each kernel 2 us starting 12 us
 * after its launch started (22, 42, 62, 82), then cudaDeviceSynchronize 81-90. Each kernel waited
 * for its launch (the stream was idle when the call started). Path: CPU 0-70, launch 70 -> 82 (12),
 * kernel 2, wake-up 84 -> 90 (6), 10 to the end: cpu 86, launch 12, compute 2. */
static void default_launch_bound(void **state)
{
    (void)state;
    tracks tk;
    gp_trace *t = new_trace(&tk);
    cpu(t, tk.cpu, GP_EV_USER_ANNOTATION, "ProfilerStep#1", 0, 100, 0);
    for (int i = 0; i < 4; i++) {
        cpu(t, tk.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 10 + 20 * i, 10, 1 + i);
        gpu_ev(t, tk.s7, GP_EV_KERNEL, "tiny", 22 + 20 * i, 2, 1 + i, 7, NULL);
    }
    cpu(t, tk.cpu, GP_EV_RUNTIME, "cudaDeviceSynchronize", 81, 9, 0);
    gp_analysis *a = run(t, NULL);
    const gp_critical_path *cp = only_path(a);
    check_default(cp, 0);
    assert_int_equal(cp->length, 100 * US);
    assert_int_equal(cp->by_class[GP_CP_CPU], 86 * US);
    assert_int_equal(cp->by_class[GP_CP_LAUNCH], 12 * US);
    assert_int_equal(cp->by_class[GP_CP_GPU_COMPUTE], 2 * US);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* Clock skew: a kernel 0-100 whose launch call runs 2-3 (it starts 2 before its launch). The
 * launch edge weighs -2, used as 0: cpu 0 -> 2, launch 0, the kernel 100: 102 over a 100 region.
 * A valid path, no broken invariant (a Debug build aborted here on a hostile trace of
 * test_analyze), and the classes still sum to its length. */
static void default_kernel_before_its_launch(void **state)
{
    (void)state;
    tracks tk;
    gp_trace *t = new_trace(&tk);
    cpu(t, tk.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 2, 1, 1);
    gpu_ev(t, tk.s7, GP_EV_KERNEL, "early", 0, 100, 1, 7, NULL);
    gp_analysis *a = run(t, NULL);
    const gp_critical_path *cp = only_path(a);
    assert_true(cp->valid);
    assert_int_equal(class_sum(cp), cp->length);
    assert_int_equal(cp->by_class[GP_CP_GPU_COMPUTE], 100 * US);
    assert_int_equal(cp->by_class[GP_CP_LAUNCH], 0);
    assert_int_equal(cp->length, 102 * US);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* ProfilerStep#1 0-200: launches 10-12, 13-15, 16-18; kernels 20-80, 80-140, 141-190 (queued:
 * each previous kernel still ran when the next launch started); cudaStreamSynchronize 19-192.
 * Path: cpu 10, launch 10, compute 60 + 60 + 49, kernel-kernel 0 + 1, wake-up 2, 8 to the end:
 * cpu 20, launch 10, compute 169, kernel-kernel 1. The steps's next launches are all on the path
 * from the GPU side: the GPU bounds the step. */
static void default_gpu_bound(void **state)
{
    (void)state;
    tracks tk;
    gp_trace *t = new_trace(&tk);
    cpu(t, tk.cpu, GP_EV_USER_ANNOTATION, "ProfilerStep#1", 0, 200, 0);
    cpu(t, tk.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 10, 2, 1);
    cpu(t, tk.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 13, 2, 2);
    cpu(t, tk.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 16, 2, 3);
    cpu(t, tk.cpu, GP_EV_RUNTIME, "cudaStreamSynchronize", 19, 173, 0);
    gpu_ev(t, tk.s7, GP_EV_KERNEL, "k1", 20, 60, 1, 7, NULL);
    gpu_ev(t, tk.s7, GP_EV_KERNEL, "k2", 80, 60, 2, 7, NULL);
    gpu_ev(t, tk.s7, GP_EV_KERNEL, "k3", 141, 49, 3, 7, NULL);
    gp_analysis *a = run(t, NULL);
    const gp_critical_path *cp = only_path(a);
    check_default(cp, 0);
    assert_int_equal(cp->length, 200 * US);
    assert_int_equal(cp->by_class[GP_CP_CPU], 20 * US);
    assert_int_equal(cp->by_class[GP_CP_LAUNCH], 10 * US);
    assert_int_equal(cp->by_class[GP_CP_GPU_COMPUTE], 169 * US);
    assert_int_equal(cp->by_class[GP_CP_KERNEL_KERNEL], 1 * US);
    assert_true(on_path(cp, t, "k1") && on_path(cp, t, "k2") && on_path(cp, t, "k3"));
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* Two steps: one path each, in time order, numbered (--steps selects among them). The second begins
 * by waiting (cudaDevice- Synchronize 100-150) for a kernel the first launched (70-150 on stream
 * 7): that wait is GPU time of the second step (the kernel, clipped to the step's start), not CPU
 * time. Step 1 (0-100): cpu 0-60, launch 60 -> 70 (10), kernel 70-150 runs past the step: length
 * 150 = the window + a GPU tail of 50. Step 2 (100-200): compute 100-150 (50), wake-up 0, cpu
 * 150-200 (50). With
 * --cp-annotation "" one path for the whole trace. */
static void default_steps_and_carried_work(void **state)
{
    (void)state;
    tracks tk;
    gp_trace *t = new_trace(&tk);
    cpu(t, tk.cpu, GP_EV_USER_ANNOTATION, "ProfilerStep#1", 0, 100, 0);
    cpu(t, tk.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 60, 5, 1);
    gpu_ev(t, tk.s7, GP_EV_KERNEL, "long", 70, 80, 1, 7, NULL);
    cpu(t, tk.cpu, GP_EV_USER_ANNOTATION, "ProfilerStep#2", 100, 100, 0);
    cpu(t, tk.cpu, GP_EV_RUNTIME, "cudaDeviceSynchronize", 100, 50, 0);
    gp_analysis *a = run(t, NULL);
    const gp_rank_analysis *r = &a->ranks[0];
    assert_int_equal(r->n_critical_paths, 2);
    const gp_critical_path *s1 = &r->critical_paths[0], *s2 = &r->critical_paths[1];
    assert_int_equal(s1->step, 1);
    assert_int_equal(s2->step, 2);
    check_default(s1, 50 * US);
    assert_int_equal(s1->length, 150 * US);
    assert_int_equal(s1->by_class[GP_CP_CPU], 60 * US);
    assert_int_equal(s1->by_class[GP_CP_LAUNCH], 10 * US);
    assert_int_equal(s1->by_class[GP_CP_GPU_COMPUTE], 80 * US);
    check_default(s2, 0);
    assert_int_equal(s2->length, 100 * US);
    assert_int_equal(s2->by_class[GP_CP_GPU_COMPUTE], 50 * US);
    assert_int_equal(s2->by_class[GP_CP_CPU], 50 * US);
    gp_analysis_free(a);

    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    o.cp_annotation = "";
    a = run(t, &o);
    const gp_critical_path *w = only_path(a);
    assert_int_equal(w->step, -1);
    check_default(w, 0);
    assert_int_equal(w->length, 200 * US);
    gp_analysis_free(a);

    /* --steps 2 (and --steps hta, which drops the last step) select the paths */
    o.cp_annotation = NULL;
    assert_int_equal(gp_analyze_parse_steps("2", &o), GP_OK);
    a = run(t, &o);
    assert_int_equal(only_path(a)->step, 2);
    gp_analysis_free(a);
    assert_int_equal(gp_analyze_parse_steps("hta", &o), GP_OK);
    a = run(t, &o);
    assert_int_equal(only_path(a)->step, 1);
    gp_analysis_free(a);

    o.critical_path = false;
    a = run(t, &o);
    assert_int_equal(a->ranks[0].n_critical_paths, 0);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* Annotation instances: "ProfilerStep#" has two; instance 1 is the second step, instance 5 does
 * not exist (an invalid path that says so). */
static void default_annotation_instances(void **state)
{
    (void)state;
    tracks tk;
    gp_trace *t = new_trace(&tk);
    cpu(t, tk.cpu, GP_EV_USER_ANNOTATION, "ProfilerStep#1", 0, 100, 0);
    cpu(t, tk.cpu, GP_EV_CPU_OP, "aten::a", 10, 50, 0);
    cpu(t, tk.cpu, GP_EV_USER_ANNOTATION, "ProfilerStep#2", 100, 40, 0);
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    o.cp_annotation = "ProfilerStep#";
    o.cp_instance = 1;
    gp_analysis *a = run(t, &o);
    const gp_critical_path *cp = only_path(a);
    assert_int_equal(cp->step, 2);
    assert_int_equal(cp->length, 40 * US);
    gp_analysis_free(a);
    o.cp_instance = 5;
    a = run(t, &o);
    assert_int_equal(a->ranks[0].n_critical_paths, 1);
    assert_false(a->ranks[0].critical_paths[0].valid);
    assert_non_null(strstr(a->ranks[0].critical_paths[0].note, "Instance 5"));
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* A cross-stream event wait (docs/analyses.md, "Critical path"): ProfilerStep#1 0-200 on one
 * thread: cudaLaunchKernel 10-15 -> ncclKernel_AllReduce on stream 84 at 20 until nccl_end,
 * cudaEventRecord 15.5 (corr 4, after the collective's launch), cudaStreamWaitEvent 16-17 (corr
 * 2), cudaLaunchKernel 18-23 -> gemm on stream 7 at 152-172 (the wait held it),
 * cudaStreamSynchronize 24-180, CPU until 200. With row: the Stream Wait Event row of the wait
 * (stream 7, wait_on_stream 84, wait_on_cuda_event_record_corr_id 4).
 * nccl_end 150 (gemm starts 2 us after it), no row: the gemm waited for the collective (the
 * fallback: work on another stream ended just before it, after its launch). Path: cpu 0-10,
 * launch 10 -> 20 (10), comm 20-150 (130) + the wait's 2 us (charged to the collective), compute
 * 152-172 (20), wake-up 172 -> 180 (8, cpu), cpu 180-200 (20): cpu 38, launch 10, comm 132,
 * compute 20. Without the wait edge it would be cpu 0-18, launch 18 -> 152 (134): cpu 46,
 * launch 134, compute 20.
 * nccl_end 100 (52 us before the gemm), no row: nothing ended just before it, no wait is
 * inferred: cpu 46, launch 134, compute 20, and the collective is off the path.
 * nccl_end 100 with the row: the record names the collective: launch 10 -> 20, comm 80 + 52,
 * compute 20: cpu 38, launch 10, comm 132, compute 20, and no note (nothing guessed). */
static gp_analysis *xwait_trace(double nccl_end, bool row, gp_trace **out)
{
    tracks tk;
    gp_trace *t = new_trace(&tk);
    uint32_t s84;
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 84, &s84), GP_OK);
    cpu(t, tk.cpu, GP_EV_USER_ANNOTATION, "ProfilerStep#1", 0, 200, 0);
    cpu(t, tk.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 10, 5, 1);
    cpu(t, tk.cpu, GP_EV_RUNTIME, "cudaEventRecord", 15.5, 0.4, 4);
    cpu(t, tk.cpu, GP_EV_RUNTIME, "cudaStreamWaitEvent", 16, 1, 2);
    cpu(t, tk.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 18, 5, 3);
    cpu(t, tk.cpu, GP_EV_RUNTIME, "cudaStreamSynchronize", 24, 156, 0);
    gpu_ev(t, s84, GP_EV_KERNEL, "ncclKernel_AllReduce_RING_LL_Sum_float", 20, nccl_end - 20, 1, 84,
           NULL);
    gpu_ev(t, tk.s7, GP_EV_KERNEL, "gemm", 152, 20, 3, 7, NULL);
    if (row) {
        gp_gpu_info gi;
        gp_gpu_info_init(&gi);
        gi.device = 0;
        gi.stream = 7;
        gp_gpu_ext x;
        gp_gpu_ext_init(&x);
        x.sync_kind = S(t, "Stream Wait Event");
        x.wait_on_event_corr = 4;
        x.wait_on_stream = 84;
        assert_int_equal(gp_trace_add_gpu_ext(t, &x, &gi.ext), GP_OK);
        uint32_t extra;
        assert_int_equal(gp_trace_add_gpu_info(t, &gi, &extra), GP_OK);
        gp_event ev = {.ts = T0 + 20 * US,
                       .dur = 0,
                       .correlation = 2,
                       .name = S(t, "Stream Wait Event"),
                       .extra = extra,
                       .track = tk.s7,
                       .kind = GP_EV_SYNC};
        assert_int_equal(gp_trace_add_event(t, &ev), GP_OK);
    }
    *out = t;
    return run(t, NULL);
}

static void check_xwait(const gp_critical_path *cp, const gp_trace *t, bool waited)
{
    check_default(cp, 0);
    assert_int_equal(cp->length, 200 * US);
    assert_int_equal(cp->by_class[GP_CP_CPU], (waited ? 38 : 46) * US);
    assert_int_equal(cp->by_class[GP_CP_LAUNCH], (waited ? 10 : 134) * US);
    assert_int_equal(cp->by_class[GP_CP_GPU_COMM], (waited ? 132 : 0) * US);
    assert_int_equal(cp->by_class[GP_CP_GPU_COMPUTE], 20 * US);
    assert_true(on_path(cp, t, "gemm"));
    assert_true(on_path(cp, t, "ncclKernel_AllReduce_RING_LL_Sum_float") == waited);
}

static void default_cross_stream_wait(void **state)
{
    (void)state;
    gp_trace *t;
    gp_analysis *a = xwait_trace(150, false, &t);
    check_xwait(only_path(a), t, true);
    assert_non_null(strstr(only_path(a)->note, "1 cross-stream wait inferred"));
    gp_analysis_free(a);
    gp_trace_free(t);

    a = xwait_trace(100, false, &t);
    check_xwait(only_path(a), t, false);
    assert_string_equal(only_path(a)->note, "");
    gp_analysis_free(a);
    gp_trace_free(t);

    a = xwait_trace(100, true, &t);
    check_xwait(only_path(a), t, true);
    assert_string_equal(only_path(a)->note, "");
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* ---- the contracted walks (critpath_chain.c) against the full graph ------------------------ */

static uint64_t rng_next(uint64_t *r)
{
    *r = *r * 6364136223846793005ULL + 1442695040888963407ULL;
    return *r >> 33;
}

/* Random whole-microsecond events nested in [s, e) on a thread: Python frames and ops (nested
 * further), launches of kernels on streams 7 and 8 that start 0-5 us later, and synchronising
 * calls (some with a driver call inside); small gaps and durations, so that many nodes tie in time
 * and in distance. */
static void random_nest(gp_trace *t, uint64_t *r, uint32_t track, const uint32_t *streams,
                        int depth, double s, double e, int64_t *corr)
{
    static const char *const names[] = {"forward (m.py:1)", "aten::linear", "aten::add",
                                        "step (m.py:9)", "collate (data.py:3)"};
    double cur = s;
    int n = depth > 4 ? 0 : (int)(rng_next(r) % 4);
    for (int i = 0; i < n; i++) {
        double cs = cur + (double)(rng_next(r) % 3), ce = cs + (double)(rng_next(r) % 40);
        if (cs >= e)
            break;
        ce = ce > e ? e : ce;
        uint64_t pick = rng_next(r) % 8;
        if (depth > 0 && pick < 2) {
            int64_t c = ++*corr;
            int st = (int)(rng_next(r) % 2);
            cpu(t, track, GP_EV_RUNTIME, "cudaLaunchKernel", cs, ce - cs, c);
            gpu_ev(t, streams[st], GP_EV_KERNEL, pick ? "gemm" : "elementwise",
                   cs + (double)(rng_next(r) % 6), (double)(rng_next(r) % 30), c, 7 + st, NULL);
        } else if (depth > 0 && pick == 2) {
            cpu(t, track, GP_EV_RUNTIME,
                rng_next(r) % 2 ? "cudaStreamSynchronize" : "cudaDeviceSynchronize", cs, ce - cs,
                0);
            /* a driver call to its end: the walk from it and the synchronisation edge into the
             * call's end can tie (the walk's edge, inserted first, wins) */
            double ds = cs + (double)(rng_next(r) % 2);
            if (rng_next(r) % 2 && ds < ce)
                cpu(t, track, GP_EV_DRIVER, "cuStreamSynchronize", ds, ce - ds, 0);
        } else {
            cpu(t, track, pick < 5 ? GP_EV_PYTHON : GP_EV_CPU_OP, names[rng_next(r) % 5], cs,
                ce - cs, 0);
            random_nest(t, r, track, streams, depth + 1, cs, ce, corr);
        }
        cur = ce;
    }
}

static gp_trace *random_trace(uint64_t seed)
{
    uint64_t r = seed;
    tracks tk;
    gp_trace *t = new_trace(&tk);
    uint32_t streams[2] = {tk.s7, 0}, threads[3] = {tk.cpu, 0, 0};
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 8, &streams[1]), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 2, &threads[1]), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 3, &threads[2]), GP_OK);
    int64_t corr = 0;
    for (int k = 0; k < 3; k++) {
        char step[32];
        snprintf(step, sizeof step, "ProfilerStep#%d", k + 1);
        /* every third trace: no steps (one region), and the second thread repeats the first,
         * whose ends then tie in time, distance and level with its own (the full graph orders
         * them) */
        bool twin = seed % 3 == 0;
        if (!twin)
            cpu(t, tk.cpu, GP_EV_USER_ANNOTATION, step, k * 200.0, 200, 0);
        uint64_t first = r;
        for (int th = 0; th < 3; th++) {
            if (twin && th == 1)
                r = first;
            double at = k * 200.0 + (twin && th == 1 ? 0 : th);
            random_nest(t, &r, threads[th], streams, 0, at, k * 200.0 + 200, &corr);
        }
    }
    return t;
}

/* The two analyses' critical paths are the same, field by field (their events are the same
 * trace's). */
static void assert_same_paths(const gp_rank_analysis *x, const gp_rank_analysis *y)
{
    assert_int_equal(x->n_critical_paths, y->n_critical_paths);
    for (size_t i = 0; i < x->n_critical_paths; i++) {
        const gp_critical_path *a = &x->critical_paths[i], *b = &y->critical_paths[i];
        assert_int_equal(a->valid, b->valid);
        assert_string_equal(a->note, b->note);
        assert_int_equal(a->length, b->length);
        for (int c = 0; c < GP_CP_COUNT; c++)
            assert_int_equal(a->by_class[c], b->by_class[c]);
        assert_int_equal(a->n_top, b->n_top);
        for (size_t k = 0; k < a->n_top; k++) {
            assert_string_equal(a->top[k].name, b->top[k].name);
            assert_int_equal(a->top[k].cls, b->top[k].cls);
            assert_int_equal(a->top[k].time, b->top[k].time);
            assert_int_equal(a->top[k].count, b->top[k].count);
            assert_string_equal(a->top[k].python, b->top[k].python);
        }
        assert_int_equal(a->n_events, b->n_events);
        for (size_t k = 0; k < a->n_events; k++)
            assert_ptr_equal(a->events[k], b->events[k]);
        assert_int_equal(a->n_links, b->n_links);
        for (size_t k = 0; k < a->n_links; k++) {
            const gp_chrome_link *p = &a->links[k], *q = &b->links[k];
            assert_ptr_equal(p->src, q->src);
            assert_ptr_equal(p->dst, q->dst);
            assert_true(p->src_end == q->src_end && p->dst_end == q->dst_end);
            assert_int_equal(p->weight, q->weight);
            assert_string_equal(p->type, q->type);
        }
    }
}

/* The default mode's critical paths of t with the walks contracted and on the full graph; returns
 * the regions the contracted graph decided (not handed to the full graph). */
static size_t compare_contracted(gp_trace *t, size_t *regions)
{
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    o.critical_path_overlay = true;
    o.threads = 1;
    gp_error err = {0};
    gp_analysis *full = NULL, *chain = NULL;
    gp__cp_contract = false;
    assert_int_equal(gp_analyze_trace(t, &o, &full, &err), GP_OK);
    gp__cp_contract = true;
    size_t before = atomic_load(&gp__cp_chain_fallbacks);
    assert_int_equal(gp_analyze_trace(t, &o, &chain, &err), GP_OK);
    size_t fell_back = atomic_load(&gp__cp_chain_fallbacks) - before;
    assert_int_equal(full->n_ranks, chain->n_ranks);
    size_t n = 0;
    for (size_t i = 0; i < full->n_ranks; i++) {
        assert_same_paths(&full->ranks[i], &chain->ranks[i]);
        for (size_t k = 0; k < chain->ranks[i].n_critical_paths; k++)
            n += chain->ranks[i].critical_paths[k].valid;
    }
    gp_analysis_free(full);
    gp_analysis_free(chain);
    *regions += n;
    assert_true(fell_back <= n);
    return n - fell_back;
}

/* Contracting the threads' walks (issue 37) gives the full graph's paths: 300 random traces full
 * of ties (three steps each, or one region), where the end of the path is often a node inside a
 * run; both the contracted graph and the fallback to the full graph (two ends of one level: the
 * twin threads) are exercised. */
static void contracted_walks_match_full_graph(void **state)
{
    (void)state;
    size_t regions = 0, decided = 0;
    for (uint64_t seed = 1; seed <= 300; seed++) {
        gp_trace *t = random_trace(seed);
        assert_int_equal(gp_trace_finish(t), GP_OK);
        decided += compare_contracted(t, &regions);
        gp_trace_free(t);
    }
    print_message("contracted: %zu of %zu regions decided without the full graph\n", decided,
                  regions);
    assert_true(regions >= 400);
    assert_true(decided > regions / 2); /* the contracted graph decides most */
    assert_true(decided < regions);     /* and the fallback ran */
}

/* The same on the real traces of ../shared/traces that have GPU work and Python frames. */
static void contracted_walks_match_on_shared_traces(void **state)
{
    (void)state;
    if (!gp_test_have_shared_traces())
        skip();
    static const char *const names[] = {"modern_h100_timesformer.json.gz",
                                        "modern_h100_vit.json.gz", "small_alexnet_cudasync.json.gz",
                                        "large_v100_nccl.json.gz"};
    const char *shared = getenv("GP_SHARED_DIR");
    size_t regions = 0, decided = 0;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/traces/%s", shared ? shared : "../shared", names[i]);
        gp_trace *t = NULL;
        gp_error err = {0};
        assert_int_equal(gp_trace_read(path, NULL, &t, &err), GP_OK);
        decided += compare_contracted(t, &regions);
        gp_trace_free(t);
    }
    assert_true(regions >= 4);
    assert_true(decided > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hta_worked_example),
        cmocka_unit_test(hta_drops_the_last_step_of_two_names),
        cmocka_unit_test(hta_worked_example_overlay),
        cmocka_unit_test(hta_worked_example_no_overlay),
        cmocka_unit_test(hta_worked_example_variants),
        cmocka_unit_test(hta_rounding),
        cmocka_unit_test(hta_reordered_thread_matches_rounded),
        cmocka_unit_test(hta_event_sync),
        cmocka_unit_test(hta_annotation_not_found),
        cmocka_unit_test(default_python_preprocessing),
        cmocka_unit_test(default_data_loading),
        cmocka_unit_test(default_sync_bound),
        cmocka_unit_test(default_launch_bound),
        cmocka_unit_test(default_gpu_bound),
        cmocka_unit_test(default_kernel_before_its_launch),
        cmocka_unit_test(default_steps_and_carried_work),
        cmocka_unit_test(default_annotation_instances),
        cmocka_unit_test(default_cross_stream_wait),
        cmocka_unit_test(contracted_walks_match_full_graph),
        cmocka_unit_test(contracted_walks_match_on_shared_traces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
