/* Unit tests of the timeline's layout and page data (src/analyze/timeline.c,
 * src/render/timeline_html.c) and of the dashboard's partition charts (src/analyze/
 * dashboard_parts.c): GPU streams first, depths with and without Python frames, marker
 * rows left out, labels from metadata, and correlation ids at the int64 limits (issue 21 item 5:
 * the delta encoding overflowed; the page now numbers correlations densely per rank). Synthetic
 * traces built with the trace builder; the ASan/UBSan build runs them too. */
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

#include "report_fixture.h"

static char *page_of(const gp_timeline *tl)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    assert_non_null(fp);
    assert_int_equal(gp_timeline_render_html(tl, "t", fp), GP_OK);
    fclose(fp);
    return buf;
}

/* The decoded correlation numbers of the slice row whose label is `label` in the page data. */
static size_t row_corrs(const char *page, const char *label, int64_t *out, size_t cap)
{
    char key[160];
    snprintf(key, sizeof key, "{\"l\":\"%s\"", label);
    const char *p = strstr(page, key);
    assert_non_null(p);
    p = strstr(p, "\"e\":[");
    assert_non_null(p);
    p += 5;
    size_t n = 0, k = 0;
    int64_t c = 0;
    while (*p != ']') {
        char *end;
        long long v = strtoll(p, &end, 10);
        assert_true(end != p);
        if (k % 5 == 4 && n < cap) {
            if (v != 0)
                c += v > 0 ? v - 1 : v;
            out[n++] = v != 0 ? c : 0;
        }
        k++;
        p = *end == ',' ? end + 1 : end;
    }
    return n;
}

/* Correlation ids at and near the int64 limits: the launches and their kernels still pair up in
 * the page, the numbers in the page are small, and the exact ids are in the side data. */
static void timeline_extreme_correlation_ids(void **state)
{
    (void)state;
    gp_trace *t;
    uint32_t cpu, gpu;
    assert_int_equal(gp_trace_create("extreme", &t), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &gpu), GP_OK);
    const int64_t ids[] = {INT64_MAX, INT64_MIN, INT64_MIN + 1, -1, INT64_MAX - 1, 1};
    enum { N = sizeof ids / sizeof ids[0] };
    for (int i = 0; i < N; i++) {
        add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 100 * i, 10, ids[i], 0);
        add(t, gpu, GP_EV_KERNEL, "k", 100 * i + 20, 30, ids[i], 0);
    }
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_timeline *tl;
    assert_int_equal(gp_timeline_build(gp_traces_const(&t), 1, NULL, &tl, NULL), GP_OK);
    char *page = page_of(tl);
    int64_t lc[N], gc[N];
    assert_int_equal(row_corrs(page, "thread 1", lc, N), N);
    assert_int_equal(row_corrs(page, "GPU 0 stream 7", gc, N), N);
    for (int i = 0; i < N; i++) {
        assert_int_equal(lc[i], gc[i]); /* launch i and kernel i share a number */
        assert_true(gc[i] >= 1 && gc[i] <= N);
        for (int j = 0; j < i; j++)
            assert_true(gc[j] != gc[i]); /* distinct ids, distinct numbers */
    }
    /* the exact ids travel as text in the side data */
    assert_non_null(strstr(page, "\"9223372036854775807\""));
    assert_non_null(strstr(page, "\"-9223372036854775808\""));
    free(page);
    gp_timeline_free(tl);
    gp_trace_free(t);
}

/* An event with GPU fields (the gp_gpu_info the reader would attach). */
static void add_gpu(gp_trace *t, uint32_t track, const char *name, gp_ns ts, int64_t corr,
                    int64_t ext, int32_t grid_x)
{
    gp_gpu_info g = {.device = 0, .stream = 7, .grid = {grid_x, 1, 1}, .block = {128, 1, 1}};
    g.registers_per_thread = g.shared_memory = g.queued = g.context = -1;
    g.bytes = g.graph_id = g.graph_node_id = -1; /* ext 0: no sync or collective fields */
    g.blocks_per_sm = 0.9090909957885742f;       /* Kineto writes 0.909091 */
    uint32_t extra;
    assert_int_equal(gp_trace_add_gpu_info(t, &g, &extra), GP_OK);
    gp_event ev = {.ts = ts, .dur = 10, .correlation = corr, .external_id = ext};
    ev.name = S(t, name);
    ev.track = track;
    ev.kind = GP_EV_KERNEL;
    ev.extra = extra;
    assert_int_equal(gp_trace_add_event(t, &ev), GP_OK);
}

/* The side block of the details panel: argument objects written once each, most used first; the
 * exact correlation ids per rank by number; a CPU op's record_shapes args (whitespace of the
 * source removed) by External id, with the op's name, for the op and for the launches and kernels
 * that carry its External id. */
static void timeline_side_block(void **state)
{
    (void)state;
    gp_trace *t;
    uint32_t cpu, gpu;
    assert_int_equal(gp_trace_create("side", &t), GP_OK);
    t->rank = 0;
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &gpu), GP_OK);
    add(t, cpu, GP_EV_CPU_OP, "aten::mm", 0, 100, 0, 7);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 10, 5, 1000, 7);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 20, 5, 1001, 7);
    add_gpu(t, gpu, "gemm", 30, 1000, 7, 64);
    add_gpu(t, gpu, "gemm", 50, 1001, 7, 64);
    add_gpu(t, gpu, "other", 70, 1002, 0, 2);
    gp_op_shapes os = {7, S(t, "[\n  [4, 8],\n  [8, 16]\n]"), S(t, "[\"float\", \"c10::Half\"]"), 0,
                       S(t, "[\"\", \"1 2\"]")};
    assert_int_equal(gp_trace_add_op_shapes(t, &os), GP_OK);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_timeline *tl;
    assert_int_equal(gp_timeline_build(gp_traces_const(&t), 1, NULL, &tl, NULL), GP_OK);
    char *page = page_of(tl);
    const char *side = strstr(page, "<script id=\"gp-tl-data-args\"");
    assert_non_null(side);
    /* the kernels' fields: the object of the two gemms first (used twice), written once */
    const char *gemm = "{\"device\":0,\"stream\":7,\"grid\":[64,1,1],\"block\":[128,1,1],"
                       "\"blocks per SM\":0.909091}";
    assert_non_null(strstr(side, "{\"args\":[{\"device\":0,\"stream\":7,\"grid\":[64,1,1]"));
    assert_non_null(strstr(side, gemm));
    assert_null(strstr(strstr(side, gemm) + 1, gemm));
    /* the op's shapes: compact, html-safe, after the other kernel's object (both used once) */
    assert_non_null(strstr(side, "\"grid\":[2,1,1]"));
    assert_true(strstr(side, "\"grid\":[2,1,1]") <
                strstr(side, "{\"op\":\"aten::mm\",\"Input Dims\":\"[[4,8],[8,16]]\","
                             "\"Input type\":\"[\\\"float\\\",\\\"c10::Half\\\"]\","
                             "\"Concrete Inputs\":\"[\\\"\\\",\\\"1 2\\\"]\"}]"));
    /* rows (GPU stream first): [External id, object number] per event, ids delta-encoded */
    assert_non_null(strstr(side, "\"rows\":[[8,1,1,1,0,2],[8,0,1,0,1,0]]"));
    /* correlation numbers 1, 2, 3 are the ids 1000, 1001, 1002 */
    assert_non_null(strstr(side, "\"corr\":[{\"r\":0,\"x\":[1001,2,2]}]"));
    /* External id 7 has the shapes object (number 3) */
    assert_non_null(strstr(side, "\"ops\":[{\"r\":0,\"x\":[8,3]}]}"));
    free(page);
    gp_timeline_free(tl);
    gp_trace_free(t);
}

/* GPU streams come before CPU threads; Python frames get a second depth that skips them; a row
 * of instant markers only is left out; a thread without a name gets its process name. */
static void timeline_rows_and_python_depths(void **state)
{
    (void)state;
    gp_trace *t;
    uint32_t cpu, gpu, marks;
    assert_int_equal(gp_trace_create("py", &t), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 5, 9, &cpu), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_OTHER, 5, 10, &marks), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &gpu), GP_OK);
    t->tracks[cpu].process_name = S(t, "python3");
    add(t, cpu, GP_EV_PYTHON, "main.py(1): <module>", 0, 100, 0, 0);
    add(t, cpu, GP_EV_CPU_OP, "aten::mm", 10, 40, 0, 0);
    add(t, cpu, GP_EV_PYTHON, "torch/functional.py(5): mm", 20, 20, 0, 0);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 25, 5, 1, 0);
    add(t, gpu, GP_EV_KERNEL, "gemm", 40, 10, 1, 0);
    add(t, marks, GP_EV_INSTANT, "Iteration Start", 0, 0, 0, 0);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_timeline *tl;
    assert_int_equal(gp_timeline_build(gp_traces_const(&t), 1, NULL, &tl, NULL), GP_OK);
    assert_int_equal(tl->n_rows, 2); /* the marker row is left out */
    assert_int_equal(tl->rows[0].kind, GP_TL_GPU);
    assert_false(tl->rows[0].has_python);
    assert_null(tl->rows[0].depth_nopy);
    const gp_tl_row *row = &tl->rows[1];
    assert_string_equal(row->label, "thread 9 (python3)");
    assert_true(row->has_python);
    assert_int_equal(row->max_depth, 3);
    assert_int_equal(row->max_depth_nopy, 1);
    const gp_track *tr = &t->tracks[row->track];
    for (size_t i = 0; i < tr->n_events; i++) {
        const char *nm = gp_trace_str(t, tr->events[i].name);
        if (strcmp(nm, "aten::mm") == 0) {
            assert_int_equal(row->depth[i], 1);
            assert_int_equal(row->depth_nopy[i], 0);
        } else if (strcmp(nm, "cudaLaunchKernel") == 0) {
            assert_int_equal(row->depth[i], 3);
            assert_int_equal(row->depth_nopy[i], 1);
        } else {
            assert_int_equal(row->depth_nopy[i], 255); /* Python frames hidden */
        }
    }
    /* the page: "dn" on the Python row, the level code carries both depths (mm: kind 0, depth 1,
     * depth without Python 0 -> 16) */
    char *page = page_of(tl);
    assert_non_null(strstr(page, "\"d\":3,\"dn\":1,\"e\":["));
    assert_non_null(strstr(page, ",16,0,")); /* aten::mm: code 16, no correlation */
    free(page);
    gp_timeline_free(tl);

    /* the compact timeline (depth <= 1): the launch is hidden with the frames shown, drawn at
     * depth 1 without them */
    gp_timeline_opts o;
    gp_timeline_opts_init(&o);
    o.max_depth = 1;
    assert_int_equal(gp_timeline_build(gp_traces_const(&t), 1, &o, &tl, NULL), GP_OK);
    row = &tl->rows[1];
    for (size_t i = 0; i < tr->n_events; i++)
        if (strcmp(gp_trace_str(t, tr->events[i].name), "cudaLaunchKernel") == 0) {
            assert_int_equal(row->depth[i], 255);
            assert_int_equal(row->depth_nopy[i], 1);
        }
    gp_timeline_free(tl);
    gp_trace_free(t);
}

/* Thread 1: ProfilerStep#1 [0,1000) > aten::mm [100,400) > cudaLaunchKernel [150,200);
 *           enumerate(DataLoader)#next [500,600)
 * GPU stream 7: gemm [300,700), Memcpy HtoD [650,800), ncclAllReduce kernel [750,900).
 * Expected by hand (comments below). */
static void dashboard_partitions_by_hand(void **state)
{
    (void)state;
    gp_trace *t;
    uint32_t cpu, gpu;
    assert_int_equal(gp_trace_create("parts", &t), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &gpu), GP_OK);
    add(t, cpu, GP_EV_USER_ANNOTATION, "ProfilerStep#1", 0, 1000, 0, 0);
    add(t, cpu, GP_EV_CPU_OP, "aten::mm", 100, 300, 0, 0);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 150, 50, 1, 0);
    add(t, cpu, GP_EV_CPU_OP, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 500,
        100, 0, 0);
    add(t, gpu, GP_EV_KERNEL, "gemm", 300, 400, 1, 0);
    add(t, gpu, GP_EV_MEMCPY, "Memcpy HtoD", 650, 150, 0, 0);
    add(t, gpu, GP_EV_KERNEL, "ncclKernel_AllReduce_RING_LL_Sum_float", 750, 150, 0, 0);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_summary *s;
    gp_dashboard *d;
    assert_int_equal(gp_summary_compute(gp_traces_const(&t), 1, NULL, &s, NULL), GP_OK);
    assert_int_equal(gp_dashboard_build(&(gp_dashboard_inputs){.traces = gp_traces_const(&t),
                                                               .n_traces = 1,
                                                               .summary = s,
                                                               .timeline = NULL,
                                                               .analysis = NULL},
                                        &d, NULL),
                     GP_OK);
    assert_int_equal(d->span, 1000);
    /* thread: step self 1000 - 300 - 100 = 600; ops 250 + 100; launch 50; no idle */
    assert_int_equal(d->cpu_parts.n_parts, 1);
    const gp_dash_part *p = &d->cpu_parts.parts[0];
    assert_int_equal(p->total, 1000);
    assert_int_equal(p->seg[GP_EV_USER_ANNOTATION], 600);
    assert_int_equal(p->seg[GP_EV_CPU_OP], 350);
    assert_int_equal(p->seg[GP_EV_RUNTIME], 50);
    assert_int_equal(p->seg[GP_EV_KIND_COUNT], 0);
    /* stream: computation [300,700), memory [700,800) (the copy's part not under the gemm),
     * communication [800,900), idle 400 */
    assert_int_equal(d->gpu_parts.n_parts, 1);
    p = &d->gpu_parts.parts[0];
    assert_int_equal(p->total, 1000);
    assert_int_equal(p->seg[GP_KT_COMPUTATION], 400);
    assert_int_equal(p->seg[GP_KT_MEMORY], 100);
    assert_int_equal(p->seg[GP_KT_COMMUNICATION], 100);
    assert_int_equal(p->seg[GP_KT_COUNT], 400);
    assert_string_equal(d->gpu_parts.seg_names[GP_KT_COUNT], "idle");
    /* step [0,1000) by priority: kernel 400, memcpy 100 [700,800), communication 100 [800,900),
     * runtime 50, dataloader 0 (under the kernel), CPU exec [100,150) + [200,300) = 150,
     * other [0,100) + [900,1000) = 200 */
    assert_int_equal(d->steps.n_parts, 1);
    p = &d->steps.parts[0];
    assert_int_equal(p->total, 1000);
    const gp_ns want[8] = {400, 100, 0, 100, 50, 0, 150, 200};
    for (int k = 0; k < 8; k++)
        assert_int_equal(p->seg[k], want[k]);
    assert_string_equal(d->steps.seg_names[6], "CPU exec");
    gp_dashboard_free(d);
    gp_summary_free(s);
    gp_trace_free(t);
}

/* The header's CPU/GPU activity figures are shown when the analysis has them and left out when
 * both are 0 (a profile's ranges are neither CPU ops nor GPU work: "CPU active 0 ns" above a row of
 * ranges would be wrong to the eye). */
static void timeline_header_figures_only_when_measured(void **state)
{
    (void)state;
    for (int with_ops = 0; with_ops < 2; with_ops++) {
        gp_trace *t;
        uint32_t cpu, gpu;
        assert_int_equal(gp_trace_create("figs", &t), GP_OK);
        assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
        add(t, cpu, GP_EV_RANGE, "step", 0, 1000, 0, 0);
        if (with_ops) {
            assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &gpu), GP_OK);
            add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 100, 10, 5, 0);
            add(t, gpu, GP_EV_KERNEL, "k", 120, 30, 5, 0);
        }
        assert_int_equal(gp_trace_finish(t), GP_OK);
        gp_timeline *tl;
        assert_int_equal(gp_timeline_build(gp_traces_const(&t), 1, NULL, &tl, NULL), GP_OK);
        char *page = page_of(tl);
        if (with_ops) {
            assert_int_equal(tl->gpu_active, 30);
            assert_non_null(
                strstr(page, "id=\"gp-gpu-active\">GPU busy <b>30 ns</b> (3.0% of span)"));
        } else {
            assert_int_equal(tl->cpu_active, 0);
            assert_null(strstr(page, "gp-cpu-active"));
            assert_null(strstr(page, "gp-gpu-active"));
        }
        assert_non_null(strstr(page, "events</span>"));
        free(page);
        gp_timeline_free(tl);
        gp_trace_free(t);
    }
}

/* Counter values beyond int64 and beyond a JSON number: written as %.6g and as null, without
 * converting an out-of-range double to int64 (undefined; fuzz_timeline_page found it with
 * "res": 2022...2 (57 digits) in a "C" event). */
static void timeline_counter_values_out_of_range(void **state)
{
    (void)state;
    gp_trace *t;
    uint32_t tr, ct;
    assert_int_equal(gp_trace_create("huge", &t), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &tr), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_COUNTER, 1, 1, &ct), GP_OK);
    add(t, tr, GP_EV_RANGE, "step", 0, 100, 0, 0);
    const double vals[] = {2.0222e56, -3e30, 1.5, 4096, HUGE_VAL};
    for (int i = 0; i < 5; i++) {
        gp_counter_sample c = {.ts = 10 * i, .value = vals[i], .series = S(t, "res"), .track = ct};
        assert_int_equal(gp_trace_add_counter(t, &c), GP_OK);
    }
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_timeline *tl;
    assert_int_equal(gp_timeline_build(gp_traces_const(&t), 1, NULL, &tl, NULL), GP_OK);
    char *page = page_of(tl);
    assert_non_null(strstr(page, "2.0222e+56"));
    assert_non_null(strstr(page, "-3e+30"));
    assert_non_null(strstr(page, "1.5"));
    assert_non_null(strstr(page, "4096"));
    assert_non_null(strstr(page, "null"));
    assert_null(strstr(page, "inf"));
    free(page);
    gp_timeline_free(tl);
    gp_trace_free(t);
}

/* Rank i of a hostile job: aten::mm [0, H) launching gemm [1, 1 + H) with H = INT64_MAX / 2. */
static gp_trace *huge_rank(int32_t rank)
{
    gp_trace *t;
    uint32_t cpu, gpu;
    assert_int_equal(gp_trace_create("huge", &t), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &gpu), GP_OK);
    add(t, cpu, GP_EV_CPU_OP, "aten::mm", 0, INT64_MAX / 2, 0, 1);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 0, 1, 1, 1);
    add(t, gpu, GP_EV_KERNEL, "gemm", 1, INT64_MAX / 2, 1, 1);
    t->rank = rank;
    t->dist.present = true;
    t->dist.rank = rank;
    assert_int_equal(gp_trace_finish(t), GP_OK);
    return t;
}

/* Three such ranks: the figures summed over ranks (the timeline's CPU/GPU activity, the
 * dashboard's GPU split and thread time) saturate at INT64_MAX, and the pages that show them
 * (shares of span x ranks, sums of the partition charts, INT64_MAX as a double, 2^63, back to ns)
 * neither overflow nor convert out of range (UBSan aborts the sanitizer build). */
static void job_sums_saturate(void **state)
{
    (void)state;
    gp_trace *t[3] = {huge_rank(0), huge_rank(1), huge_rank(2)};
    gp_timeline *tl;
    assert_int_equal(gp_timeline_build(gp_traces_const(t), 3, NULL, &tl, NULL), GP_OK);
    assert_int_equal(tl->cpu_active, INT64_MAX);
    assert_int_equal(tl->gpu_active, INT64_MAX);
    assert_int_equal(tl->overlap, INT64_MAX);
    char *page = page_of(tl);
    /* INT64_MAX of a saturated span x 3 ranks: 100 %, not a share of a wrapped product */
    assert_non_null(strstr(page, "id=\"gp-gpu-active\">GPU busy <b>"));
    assert_non_null(strstr(page, "(100.0% of span &times; 3 ranks)</span>"));
    free(page);
    gp_summary *s;
    gp_analysis *a;
    gp_dashboard *d;
    gp_job job = {.ranks = t, .n_ranks = 3};
    assert_int_equal(gp_summary_compute(gp_traces_const(t), 3, NULL, &s, NULL), GP_OK);
    assert_int_equal(gp_analyze_job(&job, NULL, &a, NULL), GP_OK);
    assert_int_equal(gp_dashboard_build(&(gp_dashboard_inputs){.traces = gp_traces_const(t),
                                                               .n_traces = 3,
                                                               .summary = s,
                                                               .timeline = tl,
                                                               .analysis = a},
                                        &d, NULL),
                     GP_OK);
    assert_int_equal(d->thread_time, INT64_MAX);
    assert_int_equal(d->gpu_time, INT64_MAX);
    assert_int_equal(d->gpu_span, INT64_MAX);
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    assert_non_null(fp);
    assert_int_equal(gp_dashboard_render_html(d, "huge", fp), GP_OK);
    fclose(fp);
    /* the operations table's rows (a JSON data script): the saturated total, not a wrapped one */
    const char *rows = strstr(buf, "id=\"gp-ops-data\"");
    assert_non_null(rows);
    assert_non_null(strstr(rows, ",9223372036854775807,"));
    free(buf);
    gp_dashboard_free(d);
    gp_analysis_free(a);
    gp_summary_free(s);
    gp_timeline_free(tl);
    for (int i = 0; i < 3; i++)
        gp_trace_free(t[i]);
}

/* Whether e is one of the events of a critical path of a (rank 0). */
static bool on_a_path(const gp_analysis *a, const gp_event *e)
{
    const gp_rank_analysis *r = &a->ranks[0];
    for (size_t p = 0; p < r->n_critical_paths; p++)
        for (size_t i = 0; i < r->critical_paths[p].n_events; i++)
            if (r->critical_paths[p].events[i] == e)
                return true;
    return false;
}

/* gpuprof timeline --critical-path on a small step: the flagged events are exactly the events of
 * the analysis' critical paths (gp_analyze_trace, default options), the long kernel the step
 * waits for among them; the legend sums the paths; without the option nothing is flagged and the
 * page has no overlay. */
static void timeline_critical_path_flags(void **state)
{
    (void)state;
    gp_trace *t;
    uint32_t cpu, cpu2, gpu;
    assert_int_equal(gp_trace_create("cp", &t), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 2, &cpu2), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &gpu), GP_OK);
    add(t, cpu, GP_EV_USER_ANNOTATION, "ProfilerStep#1", 0, 1000, 0, 0);
    add(t, cpu, GP_EV_CPU_OP, "aten::mm", 10, 60, 0, 1);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 20, 10, 1, 1);
    add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 40, 10, 2, 1);
    add(t, cpu, GP_EV_RUNTIME, "cudaDeviceSynchronize", 100, 800, 0, 0);
    add(t, cpu2, GP_EV_CPU_OP, "aten::copy_", 200, 10, 0, 0);
    add(t, gpu, GP_EV_KERNEL, "k_short", 50, 250, 1, 0);
    add(t, gpu, GP_EV_KERNEL, "k_long", 300, 580, 2, 0);
    assert_int_equal(gp_trace_finish(t), GP_OK);

    gp_analysis *a = NULL;
    gp_error err = {0};
    assert_int_equal(gp_analyze_trace(t, NULL, &a, &err), GP_OK);
    assert_true(a->ranks[0].n_critical_paths >= 1 && a->ranks[0].critical_paths[0].valid);

    gp_timeline_opts o;
    gp_timeline_opts_init(&o);
    assert_false(o.critical_path);
    o.critical_path = true;
    gp_timeline *tl;
    assert_int_equal(gp_timeline_build(gp_traces_const(&t), 1, &o, &tl, NULL), GP_OK);
    assert_true(tl->critical_path);
    uint64_t flagged = 0, total = 0;
    bool long_flagged = false;
    for (size_t r = 0; r < tl->n_rows; r++) {
        const gp_tl_row *row = &tl->rows[r];
        if (!row->depth)
            continue;
        const gp_track *tr = &t->tracks[row->track];
        for (size_t i = 0; i < tr->n_events; i++) {
            bool want = on_a_path(a, &tr->events[i]);
            bool got = row->on_path && row->on_path[i];
            if (want != got)
                fail_msg("row %zu event %zu (%s): flag %d, on the analysis' path %d", r, i,
                         gp_trace_str(t, tr->events[i].name), got, want);
            flagged += got;
            total++;
            if (got && strcmp(gp_trace_str(t, tr->events[i].name), "k_long") == 0)
                long_flagged = true;
        }
    }
    assert_true(flagged > 0 && flagged < total);
    assert_int_equal(tl->n_cp_events, flagged);
    assert_true(long_flagged);
    assert_int_equal(tl->n_cp_ranks, 1);
    assert_int_equal(tl->cp_ranks[0].length, a->ranks[0].critical_paths[0].length);
    assert_true(tl->n_cp_links > 0);
    char *page = page_of(tl);
    assert_non_null(strstr(page, "id=\"gp-tl-cp-legend\""));
    assert_non_null(strstr(page, "<script id=\"gp-tl-data-cp\""));
    free(page);
    gp_timeline_free(tl);

    assert_int_equal(gp_timeline_build(gp_traces_const(&t), 1, NULL, &tl, NULL), GP_OK);
    assert_false(tl->critical_path);
    for (size_t r = 0; r < tl->n_rows; r++)
        assert_null(tl->rows[r].on_path);
    page = page_of(tl);
    assert_null(strstr(page, "gp-tl-cp"));
    assert_null(strstr(page, "critical path"));
    free(page);
    gp_timeline_free(tl);
    gp_analysis_free(a);
    gp_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(timeline_counter_values_out_of_range),
        cmocka_unit_test(timeline_header_figures_only_when_measured),
        cmocka_unit_test(timeline_extreme_correlation_ids),
        cmocka_unit_test(timeline_side_block),
        cmocka_unit_test(timeline_rows_and_python_depths),
        cmocka_unit_test(dashboard_partitions_by_hand),
        cmocka_unit_test(timeline_critical_path_flags),
        cmocka_unit_test(job_sums_saturate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
