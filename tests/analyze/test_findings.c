/* Findings built on evidence (docs/analyses.md, "Findings"): one synthetic trace per cause (data
 * loading, Python preprocessing, sync, launch overhead, communication, GPU compute, unfused
 * attention), each with its expected top finding worked out by hand in the comment above it.
 *
 * The critical path is computed by critpath.c. Where this build does not compute it (the rank
 * has no critical path), the test fills the path that the trace has, worked out by hand, and
 * runs the findings again on it: the rules read only the struct. Where the build computes it,
 * the test runs end to end on the computed path and must reach the same top finding.
 * Also: the launch_bound rule fires only where the idle causes say launching; typed metrics are
 * in base units; render composes the words. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include "common/shared_traces.h"
#include "gpuprof/analyze.h"
#include "gpuprof/trace.h"
#include "analyze/analyze_internal.h"
#include "render/render_internal.h"

#define US 1000LL
#define MS 1000000LL

/* ---- building ------------------------------------------------------------------------------ */

typedef struct tb {
    gp_trace *t;
    uint32_t cpu, s7, s9;
    int64_t corr;
} tb;

static gp_strid S(gp_trace *t, const char *s)
{
    gp_strid id;
    assert_int_equal(gp_trace_intern(t, s, strlen(s), &id), GP_OK);
    return id;
}

static void ev(tb *b, uint32_t track, gp_event_kind kind, const char *name, gp_ns ts, gp_ns dur,
               int64_t corr, int64_t ext, uint32_t extra)
{
    gp_event e = {.ts = ts,
                  .dur = dur,
                  .correlation = corr,
                  .external_id = ext,
                  .name = S(b->t, name),
                  .extra = extra,
                  .track = track,
                  .kind = (uint8_t)kind};
    assert_int_equal(gp_trace_add_event(b->t, &e), GP_OK);
}

static void gpu(tb *b, uint32_t track, int64_t stream, gp_event_kind kind, const char *name,
                gp_ns ts, gp_ns dur, int64_t corr, int64_t ext)
{
    gp_gpu_info gi;
    gp_gpu_info_init(&gi);
    gi.device = 0;
    gi.stream = stream;
    uint32_t extra;
    assert_int_equal(gp_trace_add_gpu_info(b->t, &gi, &extra), GP_OK);
    ev(b, track, kind, name, ts, dur, corr, ext, extra);
}

/* A launch [lts, lts + 5 us) on the CPU thread and its kernel [kts, kts + kdur) on stream 7
 * (stream 9 for a collective); ext: the launching op's external id (0: none). */
static void launch(tb *b, const char *kernel, gp_ns lts, gp_ns kts, gp_ns kdur, int64_t ext)
{
    int64_t c = ++b->corr;
    bool comm = strncmp(kernel, "nccl", 4) == 0;
    ev(b, b->cpu, GP_EV_RUNTIME, "cudaLaunchKernel", lts, 5 * US, c, ext, 0);
    gpu(b, comm ? b->s9 : b->s7, comm ? 9 : 7, GP_EV_KERNEL, kernel, kts, kdur, c, ext);
}

/* An H100 trace with one ProfilerStep#1 [0, step). */
static void tb_init(tb *b, const char *name, gp_ns step)
{
    memset(b, 0, sizeof *b);
    assert_int_equal(gp_trace_create(name, &b->t), GP_OK);
    assert_int_equal(gp_trace_track(b->t, GP_TRACK_CPU_THREAD, 1, 1, &b->cpu), GP_OK);
    assert_int_equal(gp_trace_track(b->t, GP_TRACK_GPU_STREAM, 0, 7, &b->s7), GP_OK);
    assert_int_equal(gp_trace_track(b->t, GP_TRACK_GPU_STREAM, 0, 9, &b->s9), GP_OK);
    gp_device_props d = {.id = 0, .name = S(b->t, "NVIDIA H100 80GB HBM3"), .num_sms = 132};
    assert_int_equal(gp_trace_add_device(b->t, &d), GP_OK);
    ev(b, b->cpu, GP_EV_USER_ANNOTATION, "ProfilerStep#1", 0, step, 0, 0, 0);
}

static gp_trace *tb_done(tb *b)
{
    assert_int_equal(gp_trace_finish(b->t), GP_OK);
    return b->t;
}

/* ---- the path by hand, and the findings on it ---------------------------------------------- */

typedef struct top_ev {
    const char *name;
    gp_event_kind kind;
    gp_cp_class cls;
    gp_ns time;
    const char *python;
} top_ev;

typedef struct hand_path {
    gp_ns by[GP_CP_COUNT];
    top_ev top[4];
    size_t n_top;
} hand_path;

/* Runs the findings of a again (after its rank structs were changed by hand). */
static void rerun_findings(gp_analysis *a, gp_trace *t)
{
    for (size_t i = 0; i < a->n_findings; i++)
        free(a->findings[i].ranks);
    free(a->findings);
    a->findings = NULL;
    a->n_findings = 0;
    free(a->stragglers);
    a->stragglers = NULL;
    a->n_stragglers = 0;
    assert_int_equal(gp__analyze_advise(a, gp_traces_const(&t), 1, NULL, NULL), GP_OK);
}

/* The analysis of t; when this build computes no critical path, the hand-worked one (p) is
 * filled in for the step [0, step) and the findings run on it. */
static gp_analysis *analyse(gp_trace *t, const hand_path *p, gp_ns step)
{
    gp_analysis *a = NULL;
    gp_error err = {0};
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    assert_int_equal(gp_analyze_trace(t, &o, &a, &err), GP_OK);
    gp_rank_analysis *r = &a->ranks[0];
    if (r->n_critical_paths > 0 && p) { /* computed: it must be the path worked out by hand */
        assert_int_equal(r->n_critical_paths, 1);
        for (int k = 0; k < GP_CP_COUNT; k++)
            if (r->critical_paths[0].by_class[k] != p->by[k])
                fail_msg("class %s: computed %lld ns, by hand %lld ns", gp_cp_class_name(k),
                         (long long)r->critical_paths[0].by_class[k], (long long)p->by[k]);
    }
    if (r->n_critical_paths > 0 || !p)
        return a; /* computed: end to end */
    gp_critical_path *cp = calloc(1, sizeof *cp);
    assert_non_null(cp);
    cp->step = 1;
    cp->region = "ProfilerStep#1";
    cp->start = 0;
    cp->end = step;
    cp->valid = true;
    gp_ns sum = 0;
    for (int k = 0; k < GP_CP_COUNT; k++) {
        cp->by_class[k] = p->by[k];
        sum += p->by[k];
    }
    cp->length = sum;
    for (int k = 0; k < GP_CP_COUNT; k++)
        cp->pct[k] = 100.0 * (double)p->by[k] / (double)sum;
    cp->top = calloc(p->n_top + 1, sizeof *cp->top);
    assert_non_null(cp->top);
    for (size_t i = 0; i < p->n_top; i++)
        cp->top[i] = (gp_cp_event){p->top[i].name,
                                   (uint8_t)p->top[i].kind,
                                   p->top[i].cls,
                                   p->top[i].time,
                                   1,
                                   p->top[i].python ? p->top[i].python : ""};
    cp->n_top = p->n_top;
    r->critical_paths = cp;
    r->n_critical_paths = 1;
    rerun_findings(a, t);
    return a;
}

static const gp_finding *finding(const gp_analysis *a, const char *rule)
{
    for (size_t i = 0; i < a->n_findings; i++)
        if (strcmp(a->findings[i].rule, rule) == 0)
            return &a->findings[i];
    return NULL;
}

static double metric(const gp_finding *f, const char *name)
{
    double v = NAN;
    assert_true(gp_finding_metric(f, name, &v));
    return v;
}

static void title_has(const gp_finding *f, const char *needle)
{
    char title[512];
    gp__finding_title(f, title, sizeof title);
    if (!strstr(title, needle))
        fail_msg("title \"%s\" lacks \"%s\"", title, needle);
}

/* ---- one trace per cause ------------------------------------------------------------------- */

#define DL_NAME "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"

/* Data loading. Step [0, 100 ms): the DataLoader's next() [1, 61) ms holding the Python frame
 * dataset.py(12): __getitem__ [2, 60) ms; then one launch at 62 ms and its GEMM [62.1, 92.1) ms.
 * Path by hand (default mode: gaps are CPU time of the step annotation, and nothing waits for the
 * GEMM, so the host chain to the step's end at 100 ms is longer than the GPU chain ending at
 * 92.1 ms): data_loading 60 ms (the DataLoader event and what it holds), cpu 40 ms ([0, 1) before
 * it, [61, 62) up to the launch, the launch call and [62, 100) after it): 100 ms. Largest non-GPU
 * class: data_loading, 60 / 100 = 60 % -> critical_path_data_loading, critical, ranked first,
 * naming scipy's zoom [5, 55) ms inside __getitem__ as the top Python function; gain its 60 ms. */
static void cause_data_loading(void **state)
{
    (void)state;
    tb b;
    tb_init(&b, "data_loading", 100 * MS);
    ev(&b, b.cpu, GP_EV_USER_ANNOTATION, DL_NAME, 1 * MS, 60 * MS, 0, 0, 0);
    ev(&b, b.cpu, GP_EV_PYTHON, "dataset.py(12): __getitem__", 2 * MS, 58 * MS, 0, 0, 0);
    ev(&b, b.cpu, GP_EV_PYTHON, "scipy/ndimage/_interpolation.py(400): zoom", 5 * MS, 50 * MS, 0, 0,
       0);
    launch(&b, "sm90_gemm_kernel", 62 * MS, 62 * MS + 100 * US, 30 * MS, 0);
    gp_trace *t = tb_done(&b);
    hand_path p = {.by = {[GP_CP_CPU] = 40 * MS, [GP_CP_DATA_LOADING] = 60 * MS},
                   .top = {{DL_NAME, GP_EV_USER_ANNOTATION, GP_CP_DATA_LOADING, 60 * MS,
                            "dataset.py(12): __getitem__"}},
                   .n_top = 1};
    gp_analysis *a = analyse(t, &p, 100 * MS);
    assert_true(a->n_findings >= 1);
    const gp_finding *f = &a->findings[0];
    assert_string_equal(f->rule, "critical_path_data_loading");
    assert_true(f->cause);
    assert_int_equal(f->priority, GP_PRIO_CRITICAL);
    assert_true(fabs(metric(f, "class_share") - 60.0 / 100.0) < 0.005);
    assert_int_equal(f->gain_ns, (gp_ns)metric(f, "class_time"));
    assert_int_equal(f->evidence[0].unit, GP_FU_NS);
    /* the top Python function inside the DataLoader by self time: zoom 50 ms (__getitem__ holds
     * 58 - 50 = 8 ms of its own), then the path's DataLoader event with its frame */
    assert_true(f->n_objects >= 2);
    assert_int_equal(f->objects[0].kind, GP_OBJ_FRAME);
    assert_string_equal(f->objects[0].name, "scipy/ndimage/_interpolation.py(400): zoom");
    assert_int_equal(f->objects[0].time, 50 * MS);
    /* then the path's data-loading events by path time, zoom not repeated: __getitem__'s own 8 ms,
     * then the DataLoader event's own 2 ms (its time outside __getitem__) */
    assert_string_equal(f->objects[1].name, "dataset.py(12): __getitem__");
    assert_int_equal(f->objects[1].time, 8 * MS);
    bool dl = false;
    for (size_t i = 2; i < f->n_objects; i++)
        dl |= strcmp(f->objects[i].name, DL_NAME) == 0 && f->objects[i].time == 2 * MS;
    assert_true(dl);
    title_has(f, "zoom");
    assert_non_null(strstr(gp__finding_advice(f), "num_workers"));
    assert_non_null(strstr(gp__finding_advice(f), "pin_memory"));
    title_has(f, "Data loading holds");
    assert_null(finding(a, "launch_bound")); /* the GPU idles for data, not for launches */
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* Python preprocessing. Step [0, 100 ms): preprocess.py(40): resize [1, 71) ms (scipy-style
 * work, no op) inside train.py(88): <module> [0, 99) ms; then a launch at 72 ms and a 25 ms
 * GEMM [72.1, 97.1) ms that nothing waits for. Path by hand: the host chain to the step's end,
 * cpu 100 ms (resize 70, <module> 29 minus the launch call, the step's last 1 ms), longer than the
 * GPU chain (97.1 ms). Largest non-GPU class: cpu, 100 % -> critical_path_cpu_bound, critical,
 * ranked first, naming first the step's top Python function by self time, resize (70 ms; <module>
 * holds 99 - 70 = 29 ms of its own), then the path's <module>. */
static void cause_python_preprocessing(void **state)
{
    (void)state;
    tb b;
    tb_init(&b, "python", 100 * MS);
    ev(&b, b.cpu, GP_EV_PYTHON, "train.py(88): <module>", 0, 99 * MS, 0, 0, 0);
    ev(&b, b.cpu, GP_EV_PYTHON, "preprocess.py(40): resize", 1 * MS, 70 * MS, 0, 0, 0);
    launch(&b, "sm90_gemm_kernel", 72 * MS, 72 * MS + 100 * US, 25 * MS, 0);
    gp_trace *t = tb_done(&b);
    hand_path p = {
        .by = {[GP_CP_CPU] = 100 * MS},
        /* the path holds the outer frame: the top Python function comes from the trace */
        .top = {{"train.py(88): <module>", GP_EV_PYTHON, GP_CP_CPU, 29 * MS,
                 "train.py(88): <module>"}},
        .n_top = 1};
    gp_analysis *a = analyse(t, &p, 100 * MS);
    const gp_finding *f = &a->findings[0];
    assert_string_equal(f->rule, "critical_path_cpu_bound");
    assert_true(f->cause);
    assert_int_equal(f->priority, GP_PRIO_CRITICAL);
    assert_int_equal(f->objects[0].kind, GP_OBJ_FRAME);
    assert_string_equal(f->objects[0].name, "preprocess.py(40): resize");
    assert_int_equal(f->objects[0].time, 70 * MS); /* its self time */
    assert_true(f->n_objects >= 2);
    assert_string_equal(f->objects[1].name, "train.py(88): <module>");
    title_has(f, "resize");
    /* the GPU compute part is no cause: 25 ms against 72 */
    assert_null(finding(a, "critical_path_gpu_compute_bound"));
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* The path's heaviest frame, not the top self time. Step [0, 100 ms): train.py(88): <module>
 * [0, 99) ms holds prep.py(10): normalize [1, 56) ms, which calls the built-in
 * `<built-in method astype ...>` three times, [5, 15), [20, 30) and [35, 45) ms; then a launch at
 * 72 ms and a 25 ms GEMM [72.1, 97.1) ms that nothing waits for. Self times: <module> 99 - 55 =
 * 44 ms, astype 30 ms, normalize 55 - 30 = 25 ms: the top self time is <module>'s, and astype's
 * beats normalize's. Path by hand: all host, cpu 100 ms (as in cause_python_preprocessing). The
 * frame that holds most of the path is normalize: its own 25 ms plus the 30 ms of the built-in it
 * calls (a built-in folds into its Python caller: it is not a level a user acts on) = 55 ms,
 * against <module>'s 44 ms less the launch call. The finding names normalize first, with its
 * caller, and lists astype after it with its own 30 ms. */
static void cause_heaviest_path_frame(void **state)
{
    (void)state;
    tb b;
    tb_init(&b, "heaviest_frame", 100 * MS);
    static const char astype[] = "<built-in method astype of numpy.ndarray object at 0x7f00>";
    ev(&b, b.cpu, GP_EV_PYTHON, "train.py(88): <module>", 0, 99 * MS, 0, 0, 0);
    ev(&b, b.cpu, GP_EV_PYTHON, "prep.py(10): normalize", 1 * MS, 55 * MS, 0, 0, 0);
    for (int i = 0; i < 3; i++)
        ev(&b, b.cpu, GP_EV_PYTHON, astype, (5 + 15 * i) * MS, 10 * MS, 0, 0, 0);
    launch(&b, "sm90_gemm_kernel", 72 * MS, 72 * MS + 100 * US, 25 * MS, 0);
    gp_trace *t = tb_done(&b);
    hand_path p = {.by = {[GP_CP_CPU] = 100 * MS},
                   .top = {{"prep.py(10): normalize", GP_EV_PYTHON, GP_CP_CPU, 25 * MS,
                            "train.py(88): <module>"},
                           {astype, GP_EV_PYTHON, GP_CP_CPU, 30 * MS, "prep.py(10): normalize"},
                           {"train.py(88): <module>", GP_EV_PYTHON, GP_CP_CPU, 44 * MS, ""}},
                   .n_top = 3};
    gp_analysis *a = analyse(t, &p, 100 * MS);
    const gp_finding *f = &a->findings[0];
    assert_string_equal(f->rule, "critical_path_cpu_bound");
    assert_true(f->n_objects >= 3);
    assert_int_equal(f->objects[0].kind, GP_OBJ_FRAME);
    assert_string_equal(f->objects[0].name, "prep.py(10): normalize");
    assert_int_equal(f->objects[0].time, 55 * MS);
    assert_string_equal(f->objects[0].frame, "train.py(88): <module>");
    /* one call: its four path edges (around the three built-ins) are one event */
    assert_int_equal(f->objects[0].count, 1);
    title_has(f, "top prep.py(10): normalize in train.py(88): <module>");
    bool listed = false; /* the built-in, after it, with its own path time and its 3 calls */
    for (size_t i = 1; i < f->n_objects; i++)
        listed |= strcmp(f->objects[i].name, astype) == 0 && f->objects[i].time == 30 * MS &&
                  f->objects[i].count == 3;
    assert_true(listed);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* A host that only issues launches. Step [0, 10 ms): 100 cudaLaunchKernel calls, call i at
 * [100 i, 100 i + 90) us, each launching a 2 us kernel at 100 i + 95 us; nothing else. The host
 * chain to the step's end (10 ms) is longer than the GPU chain (the last kernel ends at 9.997 ms):
 * the path is the host's, 9 ms of launch calls and 1 ms of gaps between them (100 x 10 us). The
 * critical path's classes count the calls as CPU (HTA's classes: cpu 10 ms); the cause finding, in
 * the default mode, counts their 9 ms as launch overhead (docs/decisions/launch-call-time.md):
 * critical_path_gpu_kernel_launch_overhead, 90 % of the path, naming cudaLaunchKernel, with the
 * CUDA-graph advice. With HTA's critical path (cp_hta) the calls stay CPU, as HTA reports them:
 * critical_path_cpu_bound. */
static void cause_launch_calls(void **state)
{
    (void)state;
    for (int hta = 0; hta < 2; hta++) {
        tb b;
        tb_init(&b, "launches", 10 * MS);
        for (int i = 0; i < 100; i++) {
            int64_t c = ++b.corr;
            ev(&b, b.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", i * 100 * US, 90 * US, c, 0, 0);
            gpu(&b, b.s7, 7, GP_EV_KERNEL, "small_kernel", (i * 100 + 95) * US, 2 * US, c, 0);
        }
        gp_trace *t = tb_done(&b);
        gp_analyze_opts o;
        gp_analyze_opts_init(&o);
        o.cp_hta = hta;
        gp_analysis *a = NULL;
        gp_error err = {0};
        assert_int_equal(gp_analyze_trace(t, &o, &a, &err), GP_OK);
        const gp_rank_analysis *r = &a->ranks[0];
        assert_int_equal(r->n_critical_paths, 1);
        const gp_finding *f = &a->findings[0];
        if (!hta) {
            assert_int_equal(r->critical_paths[0].by_class[GP_CP_CPU], 10 * MS);
            assert_string_equal(f->rule, "critical_path_gpu_kernel_launch_overhead");
            assert_int_equal((gp_ns)metric(f, "class_time"), 9 * MS);
            assert_true(fabs(metric(f, "class_share") - 0.9) < 1e-9);
            assert_string_equal(f->objects[0].name, "cudaLaunchKernel");
            assert_int_equal(f->objects[0].time, 9 * MS);
            assert_non_null(strstr(gp__finding_advice(f), "CUDA graph"));
            assert_null(
                finding(a, "critical_path_cpu_bound")); /* 1 ms of gaps: 10 %, not the top */
        } else {
            assert_string_equal(f->rule, "critical_path_cpu_bound");
            assert_null(finding(a, "critical_path_gpu_kernel_launch_overhead"));
        }
        gp_analysis_free(a);
        gp_trace_free(t);
    }
}

/* Sync. Step [0, 100 ms), all inside step.py(50): train_step: ten iterations i at 10 i ms, each a
 * launch at +0, a 4 ms kernel at +0.1 ms, cudaStreamSynchronize [+0.05, +4.1) ms (4.05 ms
 * blocked), then 5.9 ms of host work. Blocked time 40.5 ms, beyond the longest call of the one
 * step 40.5 - 4.05 = 36.45 ms. Path by hand: launch 1 ms, gpu_compute 40 ms, cpu 59 ms (the
 * host work after each sync; the sync edges weigh 0). The syncs' 36.45 ms move out of cpu into
 * "sync": sync 36.45, cpu 22.55, gpu 40 -> critical_path_sync (36 %, critical), naming
 * cudaStreamSynchronize at step.py(50): train_step; sync_in_step fires too, gain 36.45 ms. */
static void cause_sync(void **state)
{
    (void)state;
    tb b;
    tb_init(&b, "sync", 100 * MS);
    ev(&b, b.cpu, GP_EV_PYTHON, "step.py(50): train_step", 0, 100 * MS, 0, 0, 0);
    for (int i = 0; i < 10; i++) {
        gp_ns t0 = i * 10 * MS;
        launch(&b, "sm90_gemm_kernel", t0, t0 + 100 * US, 4 * MS, 0);
        ev(&b, b.cpu, GP_EV_RUNTIME, "cudaStreamSynchronize", t0 + 50 * US, 4050 * US, 0, 0, 0);
    }
    gp_trace *t = tb_done(&b);
    hand_path p = {
        .by = {[GP_CP_CPU] = 59 * MS, [GP_CP_LAUNCH] = 1 * MS, [GP_CP_GPU_COMPUTE] = 40 * MS},
        .top = {{"step.py(50): train_step", GP_EV_PYTHON, GP_CP_CPU, 59 * MS,
                 "step.py(50): train_step"},
                {"sm90_gemm_kernel", GP_EV_KERNEL, GP_CP_GPU_COMPUTE, 40 * MS, ""}},
        .n_top = 2};
    gp_analysis *a = analyse(t, &p, 100 * MS);
    const gp_finding *f = &a->findings[0];
    assert_string_equal(f->rule, "critical_path_sync");
    assert_true(f->cause);
    assert_int_equal(f->gain_ns, 36450 * US);
    assert_int_equal(f->priority, GP_PRIO_CRITICAL);
    assert_int_equal(f->objects[0].kind, GP_OBJ_CALL);
    assert_string_equal(f->objects[0].name, "cudaStreamSynchronize");
    assert_string_equal(f->objects[0].frame, "step.py(50): train_step");
    assert_int_equal(f->objects[0].count, 10);
    const gp_finding *s = finding(a, "sync_in_step");
    assert_non_null(s);
    assert_int_equal(s->gain_ns, 36450 * US);
    assert_float_equal(metric(s, "syncs"), 10, 0);
    assert_float_equal(metric(s, "sync_time"), 40500.0 * US, 0);
    title_has(s, "cudaStreamSynchronize at step.py(50): train_step");
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* Launch overhead. Step [0, 2 ms): 200 iterations of 10 us, each a slow cudaLaunchKernel call
 * [10i, 10i + 8) us whose 1 us kernel starts at 10i + 8.5 us (the stream was idle: it waited for
 * the launch), and a cudaStreamSynchronize [10i + 8, 10i + 10) us that wakes 0.5 us after the
 * kernel. (A host that only launches, with nothing waiting for the GPU, is cpu_bound in the
 * default mode: its launch calls and the gaps between them are CPU time on the path.) Path by
 * hand, per iteration: launch 10i -> 10i + 8.5 (8.5 us), kernel 1 us, wake-up 0.5 us (the sync
 * call's CPU time); the host chain through the launch call (8 us, the sync weighs 0) is shorter.
 * 200 x: launch 1.7 ms, gpu 0.2 ms, cpu 0.1 ms = 2 ms. The sync class takes the sync calls' path
 * time (0.1 ms, out of cpu) and the blocked time beyond the longest call (200 x 2 - 2 = 398 us,
 * counted once with the 0.1 ms already on the path: 298 us more, out of launch): sync 0.398 ms,
 * launch 1.402 ms (70 %) -> critical_path_gpu_kernel_launch_overhead, critical, ranked first,
 * variant 0 (no graphs): "CUDA graph". The old launch_bound finding does not fire (the path is
 * computed); small_kernels does (200 kernels under 10 us). */
static void cause_launch_overhead(void **state)
{
    (void)state;
    tb b;
    tb_init(&b, "launch", 2000 * US);
    for (int i = 0; i < 200; i++) {
        gp_ns t0 = i * 10 * US;
        int64_t c = ++b.corr;
        ev(&b, b.cpu, GP_EV_RUNTIME, "cudaLaunchKernel", t0, 8 * US, c, 0, 0);
        gpu(&b, b.s7, 7, GP_EV_KERNEL, "vectorized_elementwise_kernel", t0 + 8500, 1 * US, c, 0);
        ev(&b, b.cpu, GP_EV_RUNTIME, "cudaStreamSynchronize", t0 + 8 * US, 2 * US, 0, 0, 0);
    }
    gp_trace *t = tb_done(&b);
    hand_path p = {
        .by = {[GP_CP_CPU] = 100 * US, [GP_CP_LAUNCH] = 1700 * US, [GP_CP_GPU_COMPUTE] = 200 * US},
        .top = {{"cudaLaunchKernel", GP_EV_RUNTIME, GP_CP_LAUNCH, 1700 * US, ""},
                {"vectorized_elementwise_kernel", GP_EV_KERNEL, GP_CP_GPU_COMPUTE, 200 * US, ""},
                {"cudaStreamSynchronize", GP_EV_RUNTIME, GP_CP_CPU, 100 * US, ""}},
        .n_top = 3};
    gp_analysis *a = analyse(t, &p, 2000 * US);
    const gp_finding *f = &a->findings[0];
    assert_string_equal(f->rule, "critical_path_gpu_kernel_launch_overhead");
    assert_true(f->cause);
    assert_int_equal(f->priority, GP_PRIO_CRITICAL);
    assert_true(fabs(metric(f, "class_share") - 0.701) < 0.01);
    assert_int_equal(f->variant, 0);
    assert_non_null(strstr(gp__finding_advice(f), "CUDA graph"));
    assert_null(finding(a, "launch_bound"));
    assert_non_null(finding(a, "small_kernels"));
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* Communication. Step [0, 50.2 ms): a 10 ms GEMM [0.1, 10.1) ms, then a 40 ms NCCL all-reduce
 * on stream 9 [10.1, 50.1) ms that waits for it (launched at 1 ms), and the host blocks in
 * cudaStreamSynchronize [1.01, 50.2) ms. The all-reduce starts as the GEMM on the other stream
 * ends: the default mode infers that cross-stream wait (docs/analyses.md), so the path runs
 * through the GEMM. Path by hand: launch 0 -> 0.1 ms (the GEMM's launch delay), gpu_compute
 * 10 ms, the wait edge (0), gpu_communication 40 ms, wake-up 0.1 ms (cpu, moved into sync by the
 * cause rule): 50.2 ms. Largest non-GPU class: communication, 40 / 50.2 = 80 % ->
 * critical_path_gpu_communication_bound, critical, ranked first, naming the NCCL kernel; the
 * advice says overlap and bucket sizes. */
static void cause_communication(void **state)
{
    (void)state;
    tb b;
    tb_init(&b, "comm", 50200 * US);
    launch(&b, "sm90_gemm_kernel", 0, 100 * US, 10 * MS, 0);
    launch(&b, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 1 * MS, 10100 * US, 40 * MS, 0);
    ev(&b, b.cpu, GP_EV_RUNTIME, "cudaStreamSynchronize", 1010 * US, 49190 * US, 0, 0, 0);
    gp_trace *t = tb_done(&b);
    hand_path p = {.by = {[GP_CP_CPU] = 100 * US,
                          [GP_CP_LAUNCH] = 100 * US,
                          [GP_CP_GPU_COMPUTE] = 10 * MS,
                          [GP_CP_GPU_COMM] = 40 * MS},
                   .top = {{"ncclDevKernel_AllReduce_Sum_bf16_RING_LL", GP_EV_KERNEL,
                            GP_CP_GPU_COMM, 40 * MS, ""}},
                   .n_top = 1};
    gp_analysis *a = analyse(t, &p, 50200 * US);
    const gp_finding *f = &a->findings[0];
    assert_string_equal(f->rule, "critical_path_gpu_communication_bound");
    assert_true(f->cause);
    assert_int_equal(f->priority, GP_PRIO_CRITICAL);
    assert_true(fabs(metric(f, "class_share") - 40.0 / 50.2) < 0.005);
    assert_int_equal(f->objects[0].kind, GP_OBJ_KERNEL);
    assert_non_null(strstr(gp__finding_advice(f), "bucket_cap_mb"));
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* GPU compute. Step [0, 93.2 ms): 3 ms of host work, one launch at 3 ms and its 90 ms GEMM
 * [3.1, 93.1) ms, the host blocked in cudaStreamSynchronize [3.01, 93.2) ms until it ends (a step
 * whose host does not wait for the GPU is cpu_bound in the default mode: the host chain runs to
 * the step's end). Path by hand: cpu 3 ms + 0.1 ms wake-up, launch 0.1 ms, gpu_compute 90 ms:
 * 93.2 ms. No non-GPU class reaches 5 % (cpu: 3.3 %): the top finding is
 * critical_path_gpu_compute_bound, critical (97 %), naming the GEMM kernel. */
static void cause_gpu_compute(void **state)
{
    (void)state;
    tb b;
    tb_init(&b, "gpu", 93200 * US);
    launch(&b, "sm90_gemm_kernel", 3 * MS, 3100 * US, 90 * MS, 0);
    ev(&b, b.cpu, GP_EV_RUNTIME, "cudaStreamSynchronize", 3010 * US, 90190 * US, 0, 0, 0);
    gp_trace *t = tb_done(&b);
    hand_path p = {
        .by = {[GP_CP_CPU] = 3100 * US, [GP_CP_LAUNCH] = 100 * US, [GP_CP_GPU_COMPUTE] = 90 * MS},
        .top = {{"sm90_gemm_kernel", GP_EV_KERNEL, GP_CP_GPU_COMPUTE, 90 * MS, ""}},
        .n_top = 1};
    gp_analysis *a = analyse(t, &p, 93200 * US);
    const gp_finding *f = &a->findings[0];
    assert_string_equal(f->rule, "critical_path_gpu_compute_bound");
    assert_true(f->cause);
    assert_int_equal(f->priority, GP_PRIO_CRITICAL);
    assert_true(fabs(metric(f, "class_share") - 90.0 / 93.2) < 0.005);
    assert_string_equal(f->objects[0].name, "sm90_gemm_kernel");
    assert_null(finding(a, "critical_path_cpu_bound"));
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* Unfused attention. Step [0, 50 ms), four layers each: aten::matmul Q K^T on
 * [8,12,1024,64] x [8,12,64,1024] bf16 (kernel 2 ms), aten::div (0.5 ms), aten::softmax on
 * [8,12,1024,1024] (1.5 ms), aten::matmul P V on [8,12,1024,1024] x [8,12,1024,64] (2 ms): 6 ms a
 * layer, 24 ms in all. Each product: 2 * 96 * 1024 * 1024 * 64 = 12.9 GFLOP; fused at half the
 * H100's bf16 peak (989 TFLOP/s in the peak table, docs/ops.md): 4 x 25.8 GFLOP / 494.5 TFLOP/s
 * = 0.21 ms; gain = 24 - 0.21 = 23.8 ms. The host issues the 16 ops every 60 us (op [t, t + 50) us,
 * its launch at t + 10 us), far ahead of the GPU: the kernels run back to back on stream 7 from
 * 20 us (each queued behind the previous one, still running or not yet started when its launch
 * call started), and the host blocks in cudaDeviceSynchronize [0.92, 24.12) ms until 0.1 ms after
 * the last kernel; the step ends there, at 24.12 ms. Path by hand: cpu 10 us (up to the first
 * launch) + 0.1 ms wake-up, launch 10 us, gpu_compute 24 ms, kernel-kernel 0: 24.12 ms. GPU
 * compute is the largest class (99.5 %); no other class reaches 5 %; unfused_attention's gain is
 * far above 10 % of it: promoted, and ranked first. */
static void cause_unfused_attention(void **state)
{
    (void)state;
    tb b;
    tb_init(&b, "attention", 24120 * US);
    static const struct {
        const char *op, *dims, *kernel;
        gp_ns dur;
    } step[] = {
        {"aten::matmul", "[[8, 12, 1024, 64], [8, 12, 64, 1024]]", "sm90_bmm_kernel", 2 * MS},
        {"aten::div", "[[8, 12, 1024, 1024], []]", "elementwise_kernel", 500 * US},
        {"aten::softmax", "[[8, 12, 1024, 1024], [], []]", "softmax_warp_forward", 1500 * US},
        {"aten::matmul", "[[8, 12, 1024, 1024], [8, 12, 1024, 64]]", "sm90_bmm_kernel", 2 * MS},
    };
    int64_t ext = 0;
    gp_ns t0 = 0, k0 = 20 * US;
    for (int layer = 0; layer < 4; layer++)
        for (size_t k = 0; k < 4; k++) {
            ext++;
            ev(&b, b.cpu, GP_EV_CPU_OP, step[k].op, t0, 50 * US, 0, ext, 0);
            launch(&b, step[k].kernel, t0 + 10 * US, k0, step[k].dur, ext);
            gp_op_shapes sh = {ext, S(b.t, step[k].dims),
                               S(b.t, strcmp(step[k].op, "aten::matmul") == 0
                                          ? "[\"c10::BFloat16\", \"c10::BFloat16\"]"
                                          : "[\"c10::BFloat16\", \"Scalar\", \"\"]"),
                               0, 0};
            assert_int_equal(gp_trace_add_op_shapes(b.t, &sh), GP_OK);
            t0 += 60 * US;
            k0 += step[k].dur;
        }
    ev(&b, b.cpu, GP_EV_RUNTIME, "cudaDeviceSynchronize", 920 * US, 23200 * US, 0, 0, 0);
    gp_trace *t = tb_done(&b);
    hand_path p = {
        .by = {[GP_CP_CPU] = 110 * US, [GP_CP_LAUNCH] = 10 * US, [GP_CP_GPU_COMPUTE] = 24 * MS},
        .top = {{"sm90_bmm_kernel", GP_EV_KERNEL, GP_CP_GPU_COMPUTE, 16 * MS, ""}},
        .n_top = 1};
    gp_analysis *a = analyse(t, &p, 24120 * US);
    const gp_finding *f = &a->findings[0];
    assert_string_equal(f->rule, "unfused_attention");
    assert_true(f->cause);
    assert_float_equal(metric(f, "calls"), 4, 0);
    assert_float_equal(metric(f, "attention_time"), 24.0 * MS, 0);
    double fused = metric(f, "fused_estimate");
    assert_true(fused > 0.15 * MS && fused < 0.30 * MS);
    assert_int_equal(f->gain_ns, 24 * MS - (gp_ns)fused);
    assert_float_equal(metric(f, "score_bytes"), 8.0 * 12 * 1024 * 1024 * 2, 0);
    assert_string_equal(gp_finding_object_of(f, GP_OBJ_DTYPE), "bf16");
    assert_non_null(strstr(gp__finding_advice(f), "scaled_dot_product_attention"));
    /* the generic GPU-compute finding follows it */
    assert_string_equal(a->findings[1].rule, "critical_path_gpu_compute_bound");
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* The same attention fused (one aten::scaled_dot_product_attention op): no unfused_attention. A
 * matmul -> softmax -> matmul whose dims do not chain (a softmax over another tensor) neither. */
static void fused_attention_is_not_flagged(void **state)
{
    (void)state;
    tb b;
    tb_init(&b, "fused", 50 * MS);
    ev(&b, b.cpu, GP_EV_CPU_OP, "aten::scaled_dot_product_attention", 0, 50 * US, 0, 1, 0);
    launch(&b, "flash_fwd_kernel", 10 * US, 100 * US, 1 * MS, 1);
    gp_op_shapes sh = {1, S(b.t, "[[8, 12, 1024, 64], [8, 12, 1024, 64], [8, 12, 1024, 64]]"),
                       S(b.t, "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"]"), 0, 0};
    assert_int_equal(gp_trace_add_op_shapes(b.t, &sh), GP_OK);
    static const char *const dims[] = {"[[8, 12, 1024, 64], [8, 12, 64, 1024]]",
                                       "[[8, 12, 1024, 77], [], []]",
                                       "[[8, 12, 1024, 1024], [8, 12, 1024, 64]]"};
    static const char *const ops[] = {"aten::matmul", "aten::softmax", "aten::matmul"};
    for (int k = 0; k < 3; k++) {
        ev(&b, b.cpu, GP_EV_CPU_OP, ops[k], (2 + k) * MS, 50 * US, 0, 2 + k, 0);
        launch(&b, "k", (2 + k) * MS + 10 * US, (2 + k) * MS + 100 * US, 500 * US, 2 + k);
        gp_op_shapes s2 = {2 + k, S(b.t, dims[k]), S(b.t, "[\"c10::BFloat16\", \"c10::BFloat16\"]"),
                           0, 0};
        assert_int_equal(gp_trace_add_op_shapes(b.t, &s2), GP_OK);
    }
    gp_trace *t = tb_done(&b);
    gp_analysis *a = analyse(t, NULL, 0);
    assert_null(finding(a, "unfused_attention"));
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* ---- launch_bound and the idle causes ------------------------------------------------------ */

/* The GPU idles 90 % of [0, 1 ms): two 50 us kernels at 0 and 950 us. Without a critical path
 * or idle causes launch_bound does not fire (no evidence that the host was launching). With idle
 * causes of the device saying launch (800 of 900 us idle), it does, gain min(idle, launch) =
 * 800 us; saying Python work (cpu 800 us), it does not. */
static void launch_bound_needs_idle_causes(void **state)
{
    (void)state;
    tb b;
    tb_init(&b, "idle", 1 * MS);
    launch(&b, "k1", 0, 0, 50 * US, 0);
    launch(&b, "k2", 940 * US, 950 * US, 50 * US, 0);
    gp_trace *t = tb_done(&b);
    gp_analysis *a = analyse(t, NULL, 0);
    gp_rank_analysis *r = &a->ranks[0];
    if (r->n_critical_paths || r->n_idle_causes) { /* computed by this build */
        gp_analysis_free(a);
        gp_trace_free(t);
        skip();
    }
    assert_true(r->temporal.idle_pct > 80.0);
    assert_null(finding(a, "launch_bound"));
    for (int say = 0; say < 2; say++) {
        gp_idle_causes *ic = calloc(1, sizeof *ic);
        assert_non_null(ic);
        ic->device = 0;
        ic->stream = -1;
        ic->idle = 900 * US;
        ic->by_cause[say == 0 ? GP_IC_LAUNCH : GP_IC_CPU] = 800 * US;
        ic->by_cause[GP_IC_UNRECORDED] = 100 * US;
        free(r->idle_causes);
        r->idle_causes = ic;
        r->n_idle_causes = 1;
        rerun_findings(a, t);
        const gp_finding *f = finding(a, "launch_bound");
        if (say == 0) {
            assert_non_null(f);
            assert_int_equal(f->gain_ns, 800 * US);
            assert_float_equal(metric(f, "launch_idle"), 800.0 * US, 0);
            assert_int_equal(f->variant, 0);
        } else {
            assert_null(f);
        }
    }
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* No GPU work in the step: a ProfilerStep [0, 10 ms) holding a Python frame [1, 9) ms and nothing
 * else. The path is computed (the whole step, 10 ms of cpu_bound: the frame 8 ms, the gaps 2 ms)
 * but names no cause: a path over no GPU work is all CPU by construction (an in-process profile,
 * cpu_only). The same step with one 1 us kernel in it gets its critical_path_cpu_bound. */
static void no_cause_without_gpu_work(void **state)
{
    (void)state;
    for (int with_kernel = 0; with_kernel < 2; with_kernel++) {
        tb b;
        tb_init(&b, "cpu", 10 * MS);
        ev(&b, b.cpu, GP_EV_PYTHON, "train.py(3): <module>", 1 * MS, 8 * MS, 0, 0, 0);
        if (with_kernel)
            launch(&b, "k", 9500 * US, 9600 * US, 1 * US, 0);
        gp_trace *t = tb_done(&b);
        hand_path p = {.by = {[GP_CP_CPU] = 10 * MS}};
        gp_analysis *a = analyse(t, &p, 10 * MS);
        if (a->ranks[0].n_critical_paths > 0 && !with_kernel)
            assert_int_equal(a->ranks[0].critical_paths[0].by_class[GP_CP_CPU], 10 * MS);
        const gp_finding *f = finding(a, "critical_path_cpu_bound");
        if (with_kernel) {
            assert_non_null(f);
            assert_true(f->cause);
        } else {
            assert_null(f);
        }
        for (size_t i = 0; i < a->n_findings && !with_kernel; i++)
            assert_true(strncmp(a->findings[i].rule, "critical_path_", 14) != 0);
        gp_analysis_free(a);
        gp_trace_free(t);
    }
}

/* ---- the shared traces ---------------------------------------------------------------------- */

/* True when a kernel, copy or memset of t overlaps a valid path region of r. */
static bool gpu_work_in_paths(const gp_trace *t, const gp_rank_analysis *r)
{
    for (size_t k = 0; k < t->n_tracks; k++)
        for (size_t i = 0; i < t->tracks[k].n_events; i++) {
            const gp_event *e = &t->tracks[k].events[i];
            if (e->kind != GP_EV_KERNEL && e->kind != GP_EV_MEMCPY && e->kind != GP_EV_MEMSET)
                continue;
            for (size_t j = 0; j < r->n_critical_paths; j++) {
                const gp_critical_path *p = &r->critical_paths[j];
                if (p->valid && e->ts < p->end && e->ts + e->dur > p->start)
                    return true;
            }
        }
    return false;
}

/* On every shared trace the top finding agrees with the dominant class of the critical path that
 * is not GPU compute (docs/analyses.md, "Findings: the cause"): where some rank's largest such
 * class holds >= 15 % of its path, the top finding is critical_path_<that class> of some rank
 * (or critical_path_sync, which takes its time out of the CPU and launch classes); where none
 * does, the top finding is a cause (GPU compute, or the pattern that explains it). Without a
 * computed path (a build without critpath.c), or where the path's regions hold no GPU work
 * (cpu_only: a path that is all CPU by construction), no critical_path_* finding may appear, and
 * launch_bound only with idle causes. The list must name every trace of the folder. */
static void shared_traces_top_finding_agrees(void **state)
{
    (void)state;
    static const char *const names[] = {"tiny_cuda_event_sync.json.gz",
                                        "tiny_triton.json.gz",
                                        "small_amd_mi250.json.gz",
                                        "cpu_only.json.gz",
                                        "small_alexnet_cudasync.json.gz",
                                        "multirank8_dlrm_v100",
                                        "medium_a100_nccl.json.gz",
                                        "legacy2021_resnet50_v100.json.gz",
                                        "large_v100_nccl.json.gz",
                                        "modern_h100_vit.json.gz",
                                        "modern_h100_timesformer.json.gz",
                                        "modern_h100_qwen_chat.json.gz",
                                        "modern_mi300_torch_compile.json.gz",
                                        "modern_mi300_sglang_decode.json.gz",
                                        "modern_vllm_decode_graph.json.gz",
                                        "modern_mi210_gpu_only.json.gz"};
    const char *dir = getenv("GP_SHARED_DIR");
    if (!dir || !gp_test_have_shared_traces())
        skip();
    char folder[4096];
    snprintf(folder, sizeof folder, "%s/traces", dir);
    DIR *d = opendir(folder);
    assert_non_null(d);
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        size_t len = strlen(de->d_name);
        bool trace = (len > 8 && strcmp(de->d_name + len - 8, ".json.gz") == 0) ||
                     strcmp(de->d_name, "multirank8_dlrm_v100") == 0;
        bool listed = false;
        for (size_t n = 0; n < sizeof names / sizeof *names; n++)
            listed |= strcmp(de->d_name, names[n]) == 0;
        if (trace && !listed)
            fail_msg("%s/%s is not checked", folder, de->d_name);
    }
    closedir(d);
    for (size_t n = 0; n < sizeof names / sizeof *names; n++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/traces/%s", dir, names[n]);
        if (access(path, R_OK) != 0)
            continue;
        gp_read_opts rd;
        gp_read_opts_init(&rd);
        rd.quiet = true;
        rd.keep_op_shapes = true;
        gp_job *job = NULL;
        gp_error err = {0};
        assert_int_equal(gp_job_read(path, &rd, &job, &err), GP_OK);
        gp_analysis *a = NULL;
        assert_int_equal(gp_analyze_job(job, NULL, &a, NULL), GP_OK);
        const char *want[64];
        size_t n_want = 0, with_path = 0, idle_causes = 0;
        for (size_t i = 0; i < a->n_ranks; i++) {
            const gp_rank_analysis *r = &a->ranks[i];
            idle_causes += r->n_idle_causes;
            gp_ns by[GP_CP_COUNT] = {0}, total = 0;
            for (size_t k = 0; k < r->n_critical_paths; k++)
                if (r->critical_paths[k].valid)
                    for (int c = 0; c < GP_CP_COUNT; c++) {
                        by[c] += r->critical_paths[k].by_class[c];
                        total += r->critical_paths[k].by_class[c];
                    }
            if (total <= 0 || !gpu_work_in_paths(job->ranks[i], r))
                continue; /* no path, or one over no GPU work (cpu_only): no cause */
            with_path++;
            int host = -1;
            for (int c = 0; c < GP_CP_COUNT; c++)
                if (c != GP_CP_GPU_COMPUTE && c != GP_CP_DEPENDENCY &&
                    (host < 0 || by[c] > by[host]))
                    host = c;
            static char rules[GP_CP_COUNT][64];
            snprintf(rules[host], sizeof rules[host], "critical_path_%s",
                     gp_cp_class_name((gp_cp_class)host));
            if ((double)by[host] >= 0.15 * (double)total && n_want < 64)
                want[n_want++] = rules[host];
        }
        if (!with_path) {
            for (size_t i = 0; i < a->n_findings; i++) {
                if (strncmp(a->findings[i].rule, "critical_path_", 14) == 0)
                    fail_msg("%s: %s without a critical path", names[n], a->findings[i].rule);
                if (!idle_causes && strcmp(a->findings[i].rule, "launch_bound") == 0)
                    fail_msg("%s: launch_bound without idle causes", names[n]);
            }
        } else if (n_want) {
            assert_true(a->n_findings > 0);
            bool ok = strcmp(a->findings[0].rule, "critical_path_sync") == 0;
            for (size_t k = 0; k < n_want; k++)
                ok |= strcmp(a->findings[0].rule, want[k]) == 0;
            if (!ok)
                fail_msg("%s: top finding %s, the path says %s", names[n], a->findings[0].rule,
                         want[0]);
        } else {
            assert_true(a->n_findings > 0 && a->findings[0].cause);
        }
        gp_analysis_free(a);
        gp_job_free(job);
    }
}

/* ---- words composed in render -------------------------------------------------------------- */

/* Metrics in base units become text once: a ratio as %, ns as a duration, bytes binary, rates
 * decimal. */
static void metric_words(void **state)
{
    (void)state;
    char v[64];
    gp_evidence e = {"x", 0.474, GP_FU_RATIO};
    gp__metric_value(&e, v, sizeof v);
    assert_string_equal(v, "47.4 %");
    e = (gp_evidence){"x", 531e6, GP_FU_NS};
    gp__metric_value(&e, v, sizeof v);
    assert_string_equal(v, "531.000 ms");
    e = (gp_evidence){"x", 3.0 * 1024 * 1024 * 1024, GP_FU_BYTES};
    gp__metric_value(&e, v, sizeof v);
    assert_string_equal(v, "3.00 GiB");
    e = (gp_evidence){"x", 1.2e12, GP_FU_BYTES_PER_S};
    gp__metric_value(&e, v, sizeof v);
    assert_string_equal(v, "1200.00 GB/s");
    e = (gp_evidence){"x", 312.5e12, GP_FU_FLOP_PER_S};
    gp__metric_value(&e, v, sizeof v);
    assert_string_equal(v, "312.5 TFLOP/s");
    e = (gp_evidence){"x", 12, GP_FU_COUNT};
    gp__metric_value(&e, v, sizeof v);
    assert_string_equal(v, "12");
    assert_string_equal(gp_finding_unit_name(GP_FU_BYTES_PER_S), "bytes/s");
    assert_string_equal(gp_object_kind_name(GP_OBJ_FRAME), "frame");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cause_data_loading),
        cmocka_unit_test(cause_python_preprocessing),
        cmocka_unit_test(cause_heaviest_path_frame),
        cmocka_unit_test(cause_launch_calls),
        cmocka_unit_test(cause_sync),
        cmocka_unit_test(cause_launch_overhead),
        cmocka_unit_test(cause_communication),
        cmocka_unit_test(cause_gpu_compute),
        cmocka_unit_test(cause_unfused_attention),
        cmocka_unit_test(fused_attention_is_not_flagged),
        cmocka_unit_test(launch_bound_needs_idle_causes),
        cmocka_unit_test(no_cause_without_gpu_work),
        cmocka_unit_test(shared_traces_top_finding_agrees),
        cmocka_unit_test(metric_words),
    };
    return gp_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
