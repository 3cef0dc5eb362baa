/* Unit tests for flame, timeline and dashboard (src/analyze, src/render): flame graph stacks
 * (nesting, launch correlation, External id, pruning, grouping, diff), folded/speedscope goldens,
 * HTML/SVG escaping, timeline layout and encoding, dashboard figures. Built on a small synthetic
 * trace (make_fixture) whose expected stacks are derived by hand in the comments; real shared
 * traces where present. */
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

#include "gpuprof/analyze.h"
#include "gpuprof/report.h"
#include "gpuprof/summary.h"
#include "gpuprof/trace.h"

#include "analyze/analyze_internal.h"
#include "report_fixture.h"

#define XSS "<script>alert(1)</script>"

/* Thread 1:  ProfilerStep#1 [0,1000)
 *              aten::conv2d [10,400) ext 10
 *                aten::convolution [20,390) ext 11
 *                  cudaLaunchKernel [30,50) corr 1;  cudaLaunchKernel [60,80) corr 2
 *              aten::relu [500,600) ext 12
 *                cudaLaunchKernel [510,530) corr 3
 *              aten::copy_ [700,900) ext 13
 *                cudaMemcpyAsync [710,890) corr 4
 * Thread 2:  XSS range [100,300)
 * GPU 0 stream 7: implicit_gemm corr 1 [100,300) (gemm_dur); XSS kernel corr 2 [300,350);
 *   relu_kernel corr 3 [550,560); Memcpy HtoD corr 4 [720,880); orphan corr 99 ext 12
 *   [900,905) (External id -> aten::relu); lost [950,952) (no ids -> unattributed). */
/* The dashboard of n traces with these parts (each may be NULL), built or the test fails. */
static gp_dashboard *dash_of(gp_trace *const *t, size_t n, const gp_summary *s,
                             const gp_timeline *tl, const gp_analysis *a)
{
    gp_dashboard *d = NULL;
    gp_dashboard_inputs in = {
        .traces = gp_traces_const(t), .n_traces = n, .summary = s, .timeline = tl, .analysis = a};
    assert_int_equal(gp_dashboard_build(&in, &d, NULL), GP_OK);
    return d;
}

static gp_trace *make_fixture(gp_ns gemm_dur)
{
    gp_trace *t;
    uint32_t t1, t2, g;
    assert_int_equal(gp_trace_create("fixture", &t), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 100, 1, &t1), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 100, 2, &t2), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &g), GP_OK);
    add(t, t1, GP_EV_USER_ANNOTATION, "ProfilerStep#1", 0, 1000, 0, 0);
    add(t, t1, GP_EV_CPU_OP, "aten::conv2d", 10, 390, 0, 10);
    add(t, t1, GP_EV_CPU_OP, "aten::convolution", 20, 370, 0, 11);
    add(t, t1, GP_EV_RUNTIME, "cudaLaunchKernel", 30, 20, 1, 11);
    add(t, t1, GP_EV_RUNTIME, "cudaLaunchKernel", 60, 20, 2, 11);
    add(t, t1, GP_EV_CPU_OP, "aten::relu", 500, 100, 0, 12);
    add(t, t1, GP_EV_RUNTIME, "cudaLaunchKernel", 510, 20, 3, 12);
    add(t, t1, GP_EV_CPU_OP, "aten::copy_", 700, 200, 0, 13);
    add(t, t1, GP_EV_RUNTIME, "cudaMemcpyAsync", 710, 180, 4, 13);
    add(t, t2, GP_EV_RANGE, XSS, 100, 200, 0, 0);
    add(t, g, GP_EV_KERNEL, "implicit_gemm", 100, gemm_dur, 1, 0);
    add(t, g, GP_EV_KERNEL, XSS, 300, 50, 2, 0);
    add(t, g, GP_EV_KERNEL, "relu_kernel", 550, 10, 3, 0);
    add(t, g, GP_EV_MEMCPY, "Memcpy HtoD", 720, 160, 4, 0);
    add(t, g, GP_EV_KERNEL, "orphan", 900, 5, 99, 12);
    add(t, g, GP_EV_KERNEL, "lost", 950, 2, 0, 0);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    return t;
}

static gp_flame_tree *build(gp_trace *t, gp_flame_weight w, const gp_flame_opts *base)
{
    gp_flame_opts o;
    if (base)
        o = *base;
    else
        gp_flame_opts_init(&o);
    o.weight = w;
    gp_flame_tree *tree = NULL;
    assert_int_equal(gp_flame_build(gp_traces_const(&t), 1, &o, &tree, NULL), GP_OK);
    return tree;
}

static void flame_gpu_attaches_kernels_under_launching_op(void **state)
{
    gp_trace *t = make_fixture(200);
    gp_flame_tree *tree = build(t, GP_FLAME_AUTO, NULL);
    assert_int_equal(tree->weight, GP_FLAME_GPU); /* auto: the fixture has GPU work */
    char *txt = render(tree, GP_FLAME_FOLDED);
    /* Kernels hang under the op enclosing their launch (launch frames are not shown); orphan
     * finds aten::relu by External id 12; lost has neither id. Thread 2 has no GPU work. */
    const char *want = "[unattributed GPU];lost 2\n"
                       "thread 1;ProfilerStep#1;aten::conv2d;aten::convolution;" XSS " 50\n"
                       "thread 1;ProfilerStep#1;aten::conv2d;aten::convolution;implicit_gemm 200\n"
                       "thread 1;ProfilerStep#1;aten::copy_;Memcpy HtoD 160\n"
                       "thread 1;ProfilerStep#1;aten::relu;orphan 5\n"
                       "thread 1;ProfilerStep#1;aten::relu;relu_kernel 10\n";
    assert_string_equal(txt, want);
    assert_int_equal(tree->nodes[0].total, 200 + 50 + 10 + 160 + 5 + 2);
    assert_int_equal(tree->gpu_unattributed, 1);
    assert_int_equal(tree->events_used, 6);
    free(txt);
    gp_flame_tree_free(tree);
    gp_trace_free(t);
}

/* GPU frames of mangled kernel names are demangled: one kernel the trace names both ways (Kineto
 * demangles most names, some ROCm kernels arrive mangled) is one frame, not two. */
static void flame_gpu_frames_demangled(void **state)
{
    (void)state;
    gp_trace *t;
    uint32_t cpu, g;
    assert_int_equal(gp_trace_create("mangled", &t), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &g), GP_OK);
    add(t, cpu, GP_EV_CPU_OP, "aten::f", 0, 100, 0, 0);
    add(t, cpu, GP_EV_RUNTIME, "hipLaunchKernel", 10, 5, 1, 0);
    add(t, cpu, GP_EV_RUNTIME, "hipLaunchKernel", 20, 5, 2, 0);
    add(t, cpu, GP_EV_RUNTIME, "hipLaunchKernel", 30, 5, 3, 0);
    add(t, g, GP_EV_KERNEL, "_Z1fIiEvPi", 200, 30, 1, 0);
    add(t, g, GP_EV_KERNEL, "void f<int>(int*)", 300, 20, 2, 0);
    add(t, g, GP_EV_KERNEL, "_Zcut", 400, 7, 3, 0); /* does not demangle: kept */
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_flame_tree *tree = build(t, GP_FLAME_GPU, NULL);
    char *txt = render(tree, GP_FLAME_FOLDED);
    assert_string_equal(txt, "thread 1;aten::f;_Zcut 7\n"
                             "thread 1;aten::f;void f<int>(int*) 50\n");
    free(txt);
    gp_flame_tree_free(tree);
    gp_trace_free(t);
}

static void flame_cpu_weight_follows_nesting(void **state)
{
    gp_trace *t = make_fixture(200);
    gp_flame_tree *tree = build(t, GP_FLAME_CPU, NULL);
    char *txt = render(tree, GP_FLAME_FOLDED);
    /* self = duration minus the children's: ProfilerStep 1000-390-100-200 = 310, conv2d
     * 390-370 = 20, convolution 370-40 = 330, relu 100-20, copy_ 200-180. */
    const char *want =
        "thread 1;ProfilerStep#1 310\n"
        "thread 1;ProfilerStep#1;aten::conv2d 20\n"
        "thread 1;ProfilerStep#1;aten::conv2d;aten::convolution 330\n"
        "thread 1;ProfilerStep#1;aten::conv2d;aten::convolution;cudaLaunchKernel 40\n"
        "thread 1;ProfilerStep#1;aten::copy_ 20\n"
        "thread 1;ProfilerStep#1;aten::copy_;cudaMemcpyAsync 180\n"
        "thread 1;ProfilerStep#1;aten::relu 80\n"
        "thread 1;ProfilerStep#1;aten::relu;cudaLaunchKernel 20\n"
        "thread 2;" XSS " 200\n";
    assert_string_equal(txt, want);
    assert_int_equal(tree->nodes[0].total, 1200);
    /* Layout: children sorted by name, x = parent x + earlier siblings' totals. */
    assert_string_equal(tree->nodes[1].name, "thread 1");
    assert_string_equal(tree->nodes[2].name, "thread 2");
    assert_int_equal(tree->nodes[2].x, 1000);
    free(txt);
    gp_flame_tree_free(tree);
    gp_trace_free(t);
}

/* A hostile trace (H = INT64_MAX / 2): threads 1..4 each run aten::mm [0, H); thread 1's launches
 * three kernels gemm [1, 1 + H) on streams 7..9. The frame weights (a node's own GPU time, the
 * totals up to the root, the layout offsets) saturate at INT64_MAX instead of overflowing (UBSan
 * aborts the sanitizer build), and every format renders. */
static void flame_weights_saturate(void **state)
{
    (void)state;
    const gp_ns h = INT64_MAX / 2;
    gp_trace *t;
    assert_int_equal(gp_trace_create("huge flame", &t), GP_OK);
    uint32_t cpu[4];
    for (int k = 0; k < 4; k++) {
        assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1 + k, &cpu[k]), GP_OK);
        add(t, cpu[k], GP_EV_CPU_OP, "aten::mm", 0, h, 0, 0);
    }
    for (int k = 0; k < 3; k++) {
        uint32_t g;
        assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7 + k, &g), GP_OK);
        add(t, cpu[0], GP_EV_RUNTIME, "cudaLaunchKernel", k, 1, 1 + k, 0);
        add(t, g, GP_EV_KERNEL, "gemm", 1, h, 1 + k, 0);
    }
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_flame_weight w[2] = {GP_FLAME_GPU, GP_FLAME_CPU};
    for (int i = 0; i < 2; i++) {
        gp_flame_tree *tree = build(t, w[i], NULL);
        assert_int_equal(tree->nodes[0].total, INT64_MAX);
        const char *name = w[i] == GP_FLAME_GPU ? "gemm" : "aten::mm";
        int found = 0; /* gemm: one frame of 3H; aten::mm: one frame of H per thread */
        for (size_t n = 0; n < tree->n_nodes; n++)
            if (strcmp(tree->nodes[n].name, name) == 0) {
                assert_int_equal(tree->nodes[n].total, w[i] == GP_FLAME_GPU ? INT64_MAX : h);
                found++;
            }
        assert_int_equal(found, w[i] == GP_FLAME_GPU ? 1 : 4);
        if (w[i] == GP_FLAME_CPU) { /* thread 4 after threads 1 to 3: x = 3H > INT64_MAX */
            assert_string_equal(tree->nodes[4].name, "thread 4");
            assert_int_equal(tree->nodes[4].x, INT64_MAX);
        }
        for (int f = GP_FLAME_FOLDED; f <= GP_FLAME_HTML; f++)
            free(render(tree, (gp_flame_format)f));
        gp_flame_tree_free(tree);
    }
    gp_trace_free(t);
}

static void flame_partial_overlap_is_clipped(void **state)
{
    gp_trace *t;
    uint32_t tr;
    assert_int_equal(gp_trace_create("overlap", &t), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &tr), GP_OK);
    add(t, tr, GP_EV_CPU_OP, "outer", 0, 100, 0, 0);
    add(t, tr, GP_EV_CPU_OP, "spill", 80, 50, 0, 0); /* ends 30 after outer */
    add(t, tr, GP_EV_CPU_OP, "after", 150, 10, 0, 0);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_flame_opts o;
    gp_flame_opts_init(&o);
    o.thread_frames = false;
    gp_flame_tree *tree = build(t, GP_FLAME_CPU, &o);
    char *txt = render(tree, GP_FLAME_FOLDED);
    assert_string_equal(txt, "after 10\nouter 80\nouter;spill 20\n");
    free(txt);
    gp_flame_tree_free(tree);
    gp_trace_free(t);
}

static void flame_min_duration_depth_and_grouping(void **state)
{
    gp_trace *t = make_fixture(200);
    gp_flame_opts o;
    gp_flame_opts_init(&o);
    o.group_kernels = 60;
    gp_flame_tree *tree = build(t, GP_FLAME_GPU, &o);
    char *txt = render(tree, GP_FLAME_FOLDED);
    /* Under aten::relu both leaves (10, 5) are < 60: one group of 2. Under convolution only
     * the XSS kernel (50) is small: a group of one stays itself. lost (2) is alone too. */
    assert_non_null(strstr(txt, "thread 1;ProfilerStep#1;aten::relu;[2 small kernels] 15\n"));
    assert_non_null(strstr(txt, "aten::convolution;" XSS " 50\n"));
    assert_null(strstr(txt, "relu_kernel"));
    free(txt);
    gp_flame_tree_free(tree);

    gp_flame_opts_init(&o);
    o.max_depth = 2; /* root 0, thread 1, ProfilerStep 2 */
    tree = build(t, GP_FLAME_GPU, &o);
    txt = render(tree, GP_FLAME_FOLDED);
    assert_string_equal(txt, "[unattributed GPU];lost 2\nthread 1;ProfilerStep#1 425\n");
    free(txt);
    gp_flame_tree_free(tree);

    gp_flame_opts_init(&o);
    o.min_duration = 100; /* relu (15) and lost's frame (2) fold into their parents */
    tree = build(t, GP_FLAME_GPU, &o);
    txt = render(tree, GP_FLAME_FOLDED);
    assert_string_equal(txt, "thread 1;ProfilerStep#1 15\n"
                             "thread 1;ProfilerStep#1;aten::conv2d;aten::convolution 50\n"
                             "thread 1;ProfilerStep#1;aten::conv2d;aten::convolution;"
                             "implicit_gemm 200\n"
                             "thread 1;ProfilerStep#1;aten::copy_;Memcpy HtoD 160\n");
    assert_int_equal(tree->nodes[0].total, 427); /* folding keeps the weight */
    assert_int_equal(tree->nodes[0].self, 2);
    free(txt);
    gp_flame_tree_free(tree);
    gp_trace_free(t);
}

static void flame_empty_weight_is_reported(void **state)
{
    gp_trace *t;
    uint32_t tr;
    assert_int_equal(gp_trace_create("cpu", &t), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &tr), GP_OK);
    add(t, tr, GP_EV_CPU_OP, "op", 0, 100, 0, 0);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_flame_opts o;
    gp_flame_opts_init(&o);
    o.weight = GP_FLAME_GPU;
    gp_flame_tree *tree = NULL;
    assert_int_equal(gp_flame_build(gp_traces_const(&t), 1, &o, &tree, NULL), GP_EEMPTY);
    o.weight = GP_FLAME_AUTO;
    assert_int_equal(gp_flame_build(gp_traces_const(&t), 1, &o, &tree, NULL), GP_OK);
    assert_int_equal(tree->weight, GP_FLAME_CPU);
    gp_flame_tree_free(tree);
    gp_trace_free(t);
}

static void flame_diff_marks_growth(void **state)
{
    gp_trace *a = make_fixture(200), *b = make_fixture(300);
    gp_flame_tree *ta = build(a, GP_FLAME_GPU, NULL), *tb = build(b, GP_FLAME_GPU, NULL), *d;
    assert_int_equal(gp_flame_diff(ta, tb, &d, NULL), GP_OK);
    assert_true(d->is_diff);
    bool seen = false;
    for (size_t i = 0; i < d->n_nodes; i++) {
        const gp_flame_node *nd = &d->nodes[i];
        if (strcmp(nd->name, "implicit_gemm") == 0) {
            assert_int_equal(nd->base_total, 200);
            assert_int_equal(nd->total, 300);
            assert_int_equal(nd->color >> 16, 255); /* red: grew */
            seen = true;
        } else if (strcmp(nd->name, "relu_kernel") == 0) {
            assert_int_equal(nd->base_total, nd->total);
            assert_int_equal(nd->color, 0xdcdcdc); /* unchanged: grey */
        }
    }
    assert_true(seen);
    char *txt = render(d, GP_FLAME_FOLDED);
    assert_non_null(strstr(txt, "aten::convolution;implicit_gemm 200 300\n"));
    free(txt);
    gp_flame_tree_free(d);
    /* The other way round it shrank: blue. */
    assert_int_equal(gp_flame_diff(tb, ta, &d, NULL), GP_OK);
    for (size_t i = 0; i < d->n_nodes; i++)
        if (strcmp(d->nodes[i].name, "implicit_gemm") == 0)
            assert_int_equal(d->nodes[i].color & 0xff, 255);
    /* speedscope cannot hold a diff */
    FILE *fp = fopen("/dev/null", "w");
    assert_int_equal(gp_flame_render(d, GP_FLAME_SPEEDSCOPE, NULL, fp, NULL), GP_EINVAL);
    fclose(fp);
    gp_flame_tree_free(d);
    gp_flame_tree *tc = build(a, GP_FLAME_CPU, NULL);
    assert_int_equal(gp_flame_diff(tc, tb, &d, NULL), GP_EINVAL); /* weights differ */
    gp_flame_tree_free(tc);
    gp_flame_tree_free(ta);
    gp_flame_tree_free(tb);
    gp_trace_free(a);
    gp_trace_free(b);
}

static void flame_goldens(void **state)
{
    gp_trace *t = make_fixture(200);
    gp_flame_tree *tree = build(t, GP_FLAME_GPU, NULL);
    char *txt = render(tree, GP_FLAME_SPEEDSCOPE);
    check_golden("fixture_gpu.speedscope.json", txt);
    free(txt);
    txt = render(tree, GP_FLAME_FOLDED);
    check_golden("fixture_gpu.folded", txt);
    free(txt);
    gp_flame_tree_free(tree);
    tree = build(t, GP_FLAME_CPU, NULL);
    txt = render(tree, GP_FLAME_SPEEDSCOPE);
    check_golden("fixture_cpu.speedscope.json", txt);
    free(txt);
    gp_flame_tree_free(tree);
    gp_trace_free(t);
}

static void flame_speedscope_is_consistent(void **state)
{
    gp_trace *t = make_fixture(200);
    gp_flame_tree *tree = build(t, GP_FLAME_GPU, NULL);
    char *txt = render(tree, GP_FLAME_SPEEDSCOPE);
    /* every name once in shared.frames, escaped as JSON */
    assert_non_null(
        strstr(txt, "\"$schema\":\"https://www.speedscope.app/file-format-schema.json\""));
    assert_non_null(strstr(txt, "\"endValue\":427"));
    assert_non_null(strstr(txt, "\"weights\":[2,160,5,10,50,200]"));
    const char *p = strstr(txt, "{\"name\":\"aten::relu\"}");
    assert_non_null(p);
    assert_null(strstr(p + 1, "{\"name\":\"aten::relu\"}"));
    free(txt);
    gp_flame_tree_free(tree);
    gp_trace_free(t);
}

static void html_escapes_names(void **state)
{
    gp_trace *t = make_fixture(200);
    gp_flame_tree *tree = build(t, GP_FLAME_GPU, NULL);
    for (int f = GP_FLAME_SVG; f <= GP_FLAME_HTML; f++) {
        char *txt = render(tree, (gp_flame_format)f);
        assert_null(strstr(txt, "<script>alert"));
        /* the SVG has the names as text; the HTML page draws them from its JSON data */
        if (f == GP_FLAME_SVG)
            assert_non_null(strstr(txt, "&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert_non_null(strstr(txt, "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e"));
        free(txt);
    }
    gp_flame_tree_free(tree);

    gp_timeline *tl;
    assert_int_equal(gp_timeline_build(gp_traces_const(&t), 1, NULL, &tl, NULL), GP_OK);
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    assert_int_equal(gp_timeline_render_html(tl, XSS, fp), GP_OK);
    fclose(fp);
    assert_null(strstr(buf, "<script>alert"));
    assert_non_null(strstr(buf, "<title>&lt;script&gt;alert(1)&lt;/script&gt;</title>"));
    free(buf);

    gp_summary *s;
    gp_dashboard *d;
    assert_int_equal(gp_summary_compute(gp_traces_const(&t), 1, NULL, &s, NULL), GP_OK);
    d = dash_of(&t, 1, s, tl, NULL);
    buf = NULL;
    fp = open_memstream(&buf, &len);
    assert_int_equal(gp_dashboard_render_html(d, XSS, fp), GP_OK);
    fclose(fp);
    assert_null(strstr(buf, "<script>alert"));
    assert_non_null(
        strstr(buf, "title=\"&lt;script&gt;alert(1)&lt;/script&gt;\">&lt;script&gt;alert(1)&lt;/"
                    "script&gt;</td>"));
    free(buf);
    gp_dashboard_free(d);
    gp_summary_free(s);
    gp_timeline_free(tl);
    gp_trace_free(t);
}

static void format_from_path(void **state)
{
    gp_flame_format f;
    assert_int_equal(GP_OK, gp_flame_format_from_path("a/flame.speedscope.json", &f));
    assert_int_equal(f, GP_FLAME_SPEEDSCOPE);
    assert_int_equal(GP_OK, gp_flame_format_from_path("x.folded", &f));
    assert_int_equal(f, GP_FLAME_FOLDED);
    assert_int_equal(GP_OK, gp_flame_format_from_path("x.svg", &f));
    assert_int_equal(f, GP_FLAME_SVG);
    assert_int_equal(GP_OK, gp_flame_format_from_path("x.html", &f));
    assert_int_equal(f, GP_FLAME_HTML);
    assert_int_equal(GP_EINVAL, gp_flame_format_from_path("x.png", &f));
}

static void timeline_layout_and_encoding(void **state)
{
    gp_trace *t = make_fixture(200);
    gp_timeline *tl;
    assert_int_equal(gp_timeline_build(gp_traces_const(&t), 1, NULL, &tl, NULL), GP_OK);
    /* rows: GPU 0 stream 7 (GPU streams first), then thread 1, thread 2 */
    assert_int_equal(tl->n_rows, 3);
    assert_int_equal(tl->rows[0].kind, GP_TL_GPU);
    assert_int_equal(tl->rows[1].kind, GP_TL_CPU);
    assert_string_equal(tl->rows[0].label, "GPU 0 stream 7");
    assert_int_equal(tl->rows[1].max_depth, 3); /* step > conv2d > convolution > launch */
    const gp_track *tr = &t->tracks[tl->rows[1].track];
    for (size_t i = 0; i < tr->n_events; i++)
        if (strcmp(gp_trace_str(t, tr->events[i].name), "aten::convolution") == 0)
            assert_int_equal(tl->rows[1].depth[i], 2);
    assert_int_equal(tl->n_events, 9 + 1 + 6);
    /* busy, as the analysis defines it (CPU ops and runtime calls, not the annotation that spans
     * the step): CPU 690; GPU [100,350) [550,560) [720,880) [900,905) [950,952) = 427 */
    assert_true(tl->busy_from_analysis);
    assert_int_equal(tl->cpu_active, 690);
    assert_int_equal(tl->gpu_active, 427);
    /* GPU work at [900,905) and [950,952) runs after the last CPU op ends at 900 */
    assert_int_equal(tl->overlap, 420);
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    assert_int_equal(gp_timeline_render_html(tl, "t", fp), GP_OK);
    fclose(fp);
    /* GPU row: implicit_gemm starts 100 after the trace start, corr 1 -> 2 (delta + 1), then
     * the XSS kernel 200 later with corr 2 -> delta 1 -> 2. */
    const char *gpu = strstr(buf, "\"k\":\"gpu\"");
    assert_non_null(gpu);
    char want[64];
    snprintf(want, sizeof want, ",\"e\":[100,200,%s", "");
    assert_non_null(strstr(gpu, want));
    free(buf);
    gp_timeline_free(tl);

    gp_timeline_opts o;
    gp_timeline_opts_init(&o);
    o.max_depth = 0;
    o.cpu_rows = false;
    assert_int_equal(gp_timeline_build(gp_traces_const(&t), 1, &o, &tl, NULL), GP_OK);
    assert_int_equal(tl->n_rows, 1);
    /* one stream, no nesting: all six GPU events at depth 0 (XSS starts where gemm ends) */
    assert_int_equal(tl->n_events, 6);
    gp_timeline_free(tl);
    gp_trace_free(t);
}

/* A "[memory]" instant on track tr: total_allocated bytes of device (type, id) at ts. */
static void add_memory(gp_trace *t, uint32_t tr, gp_ns ts, int64_t total, int32_t type, int32_t id)
{
    gp_mem_info mi = {0};
    mi.bytes = 1;
    mi.total_allocated = total;
    mi.total_reserved = -1;
    mi.device_type = type;
    mi.device_id = id;
    gp_event ev = {0};
    ev.ts = ts;
    ev.name = S(t, "[memory]");
    ev.track = tr;
    ev.kind = GP_EV_MEMORY;
    ev.flags = GP_EVF_INSTANT;
    assert_int_equal(gp_trace_add_mem_info(t, &mi, &ev.extra), GP_OK);
    assert_int_equal(gp_trace_add_event(t, &ev), GP_OK);
}

/* One memory row per (device_type, device_id) pair, whatever int32 values a trace holds: once
 * keyed as type * 1000 + id, which merged (0, 1000) with (1, 0) and overflowed (found by
 * fuzz_timeline_page) on extreme values. */
static void timeline_memory_rows_by_device_pair(void **state)
{
    (void)state;
    gp_trace *t;
    uint32_t tr;
    assert_int_equal(gp_trace_create("mem", &t), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &tr), GP_OK);
    add(t, tr, GP_EV_CPU_OP, "op", 0, 100, 0, 0);
    const int32_t dev[][2] = {{1, 0},         {0, 1000},       {INT32_MAX, INT32_MAX},
                              {1, INT32_MIN}, {INT32_MIN, -1}, {0, -1},
                              {1, 0}};
    const size_t n = sizeof dev / sizeof dev[0];
    for (size_t i = 0; i < n; i++)
        add_memory(t, tr, 10 + 10 * (gp_ns)i, (int64_t)i + 1, dev[i][0], dev[i][1]);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_timeline *tl;
    assert_int_equal(gp_timeline_build(gp_traces_const(&t), 1, NULL, &tl, NULL), GP_OK);
    /* the thread's row, then six memory rows in (type, id) order: (1, 0) has two samples */
    const int32_t want[][2] = {{INT32_MIN, -1}, {0, -1}, {0, 1000},
                               {1, INT32_MIN},  {1, 0},  {INT32_MAX, INT32_MAX}};
    const char *label[] = {"memory allocated (device)",   "memory allocated (CPU)",
                           "memory allocated (CPU 1000)", "memory allocated (GPU)",
                           "memory allocated (GPU 0)",    "memory allocated (device 2147483647)"};
    assert_int_equal(tl->n_rows, 7);
    for (size_t r = 0; r < 6; r++) {
        const gp_tl_row *row = &tl->rows[1 + r];
        assert_int_equal(row->kind, GP_TL_MEMORY);
        assert_string_equal(row->label, label[r]);
        assert_int_equal(row->device_type, want[r][0]);
        assert_int_equal(row->device_id, want[r][1]);
        assert_int_equal(row->n_samples, r == 4 ? 2 : 1);
    }
    assert_true(tl->rows[5].sample_val[0] == 1.0 && tl->rows[5].sample_val[1] == 7.0);
    gp_timeline_free(tl);
    gp_trace_free(t);
}

static void timeline_memory_rows(void **state)
{
    gp_trace *t;
    uint32_t tr;
    assert_int_equal(gp_trace_create("mem", &t), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &tr), GP_OK);
    add(t, tr, GP_EV_CPU_OP, "op", 0, 100, 0, 0);
    int64_t totals[3] = {1000, 5000, 2000};
    for (int i = 0; i < 3; i++)
        add_memory(t, tr, 10 + 10 * i, totals[i], 1, 0);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_timeline *tl;
    assert_int_equal(gp_timeline_build(gp_traces_const(&t), 1, NULL, &tl, NULL), GP_OK);
    assert_int_equal(tl->n_rows, 2);
    assert_int_equal(tl->rows[0].n_drawn, 1); /* memory instants are not slices */
    assert_int_equal(tl->rows[1].kind, GP_TL_MEMORY);
    assert_int_equal(tl->rows[1].n_samples, 3);
    assert_true(tl->rows[1].sample_val[1] == 5000.0);
    gp_summary *s;
    gp_dashboard *d;
    assert_int_equal(gp_summary_compute(gp_traces_const(&t), 1, NULL, &s, NULL), GP_OK);
    d = dash_of(&t, 1, s, tl, NULL);
    assert_true(d->peak_memory < 0); /* peak memory is the analysis' figure */
    gp_dashboard_free(d);
    gp_analysis *a;
    assert_int_equal(gp_analyze_trace(t, NULL, &a, NULL), GP_OK);
    assert_int_equal(a->ranks[0].peak_memory.source, GP_PEAK_ALLOCATOR);
    d = dash_of(&t, 1, s, tl, a);
    assert_true(d->peak_memory == 5000.0);
    assert_int_equal(d->n_mem, 3);
    assert_true(d->mem_y[1] == 1.0 && d->mem_y[0] == 0.2);
    gp_dashboard_free(d);
    gp_analysis_free(a);
    gp_summary_free(s);
    gp_timeline_free(tl);
    gp_trace_free(t);
}

static void dashboard_peak_from_memory_counter(void **state)
{
    gp_trace *t;
    uint32_t tr, ct;
    assert_int_equal(gp_trace_create("profile", &t), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &tr), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_COUNTER, 1, 1, &ct), GP_OK);
    add(t, tr, GP_EV_RANGE, "step", 0, 100, 0, 0);
    double vals[3] = {10, 40, 25};
    for (int i = 0; i < 3; i++) {
        gp_counter_sample c = {0};
        c.ts = 30 * i;
        c.value = vals[i];
        c.series = S(t, "gpu0.memory_used_bytes");
        c.track = ct;
        assert_int_equal(gp_trace_add_counter(t, &c), GP_OK);
        c.series = S(t, "gpu0.utilization_pct"); /* larger, but not memory */
        c.value = 90;
        assert_int_equal(gp_trace_add_counter(t, &c), GP_OK);
    }
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_summary *s;
    gp_timeline *tl;
    gp_dashboard *d;
    assert_int_equal(gp_summary_compute(gp_traces_const(&t), 1, NULL, &s, NULL), GP_OK);
    assert_int_equal(gp_timeline_build(gp_traces_const(&t), 1, NULL, &tl, NULL), GP_OK);
    assert_int_equal(tl->n_rows, 3); /* the thread and two counter series */
    gp_analysis *a;
    assert_int_equal(gp_analyze_trace(t, NULL, &a, NULL), GP_OK);
    const gp_peak_memory *pk = &a->ranks[0].peak_memory;
    assert_int_equal(pk->source, GP_PEAK_COUNTER);
    assert_string_equal(pk->what, "gpu0.memory_used_bytes");
    assert_int_equal(pk->ts, 30);
    d = dash_of(&t, 1, s, tl, a);
    assert_true(d->peak_memory == 40.0);
    assert_string_equal(d->mem_label, "gpu0.memory_used_bytes");
    assert_non_null(strstr(d->peak_note, "counter gpu0.memory_used_bytes"));
    gp_dashboard_free(d);
    gp_analysis_free(a);
    gp_timeline_free(tl);
    gp_summary_free(s);
    gp_trace_free(t);
}

static void analysis_feeds_busy_figures_and_findings(void **state)
{
    gp_trace *t = make_fixture(200);
    gp_analysis *a;
    gp_error err;
    assert_int_equal(gp_analyze_trace(t, NULL, &a, &err), GP_OK);
    gp_timeline_opts o;
    gp_timeline_opts_init(&o);
    o.analysis = a;
    gp_timeline *tl;
    assert_int_equal(gp_timeline_build(gp_traces_const(&t), 1, &o, &tl, NULL), GP_OK);
    assert_true(tl->busy_from_analysis);
    /* the analysis counts CPU ops and runtime calls, not annotations or ranges: conv2d [10,400),
     * relu [500,600), copy_ [700,900) = 690 (the model-derived union would be 1000) */
    assert_int_equal(tl->cpu_active, a->ranks[0].activity.cpu_active);
    assert_int_equal(tl->cpu_active, 690);
    assert_int_equal(tl->gpu_active, 427);
    gp_summary *s;
    gp_dashboard *d;
    assert_int_equal(gp_summary_compute(gp_traces_const(&t), 1, NULL, &s, NULL), GP_OK);
    d = dash_of(&t, 1, s, tl, a);
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    assert_int_equal(gp_dashboard_render_html(d, "t", fp), GP_OK);
    fclose(fp);
    assert_null(strstr(buf, "gp-suggestions-na"));
    if (a->n_findings > 0) {
        assert_non_null(strstr(buf, "id=\"gp-findings\""));
        assert_non_null(strstr(buf, gp_priority_name(a->findings[0].priority)));
    } else {
        assert_non_null(strstr(buf, "gp-findings-none"));
    }
    free(buf);
    gp_dashboard_free(d);
    gp_summary_free(s);
    gp_timeline_free(tl);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* The sum of the data-v values of the rects of the bar starting at p (up to </svg>). */
static long long bar_sum(const char *p)
{
    const char *end = strstr(p, "</svg>");
    long long sum = 0;
    for (const char *q = strstr(p, "data-v=\""); q && q < end; q = strstr(q + 1, "data-v=\""))
        sum += atoll(q + 8);
    return sum;
}

/* Above the fold: the top finding's sentence and the critical path of each step by class, before
 * the wall-time charts. The fixture's one step [0, 1000) ns, worked out in the default mode: the
 * GEMM chain (launch 30 -> 100, 200 + 50 ns queued) and relu_kernel (launch 510 -> 550, 10 ns) end
 * without anything waiting for them; cudaMemcpyAsync [710, 890) waits for its copy [720, 880)
 * (it ends inside the call). Path: cpu 0 -> 710, launch 710 -> 720 (10), the copy 160, the call's
 * wake-up 880 -> 890 (cpu 10), then cpu to the step's end (110): cpu 830, launch 10, gpu 160 =
 * 1000 ns. The cause finding counts the path's three launch calls ([30, 50), [60, 80), [510, 530):
 * 60 ns) as launch overhead (docs/decisions/launch-call-time.md): cpu 770, launch 70; cpu 77.0 %:
 * critical_path_cpu_bound. (orphan and lost, chained after the copy, end at
 * 952 with nothing waiting.) Where a build computes no path, two are filled by hand: cpu 600 + gpu
 * 300 + dependency 100 ns and cpu 500 + gpu 400 ns; cpu 1100 of 1900 (57.9 %). Without paths: the
 * empty state. */
static void dashboard_cause_above_the_fold(void **state)
{
    gp_trace *t = make_fixture(200);
    gp_analysis *a;
    gp_error err;
    assert_int_equal(gp_analyze_trace(t, NULL, &a, &err), GP_OK);
    gp_summary *s;
    gp_dashboard *d;
    assert_int_equal(gp_summary_compute(gp_traces_const(&t), 1, NULL, &s, NULL), GP_OK);
    gp_rank_analysis *r = &a->ranks[0];
    const bool computed = r->n_critical_paths > 0;
    if (computed) { /* the path worked out by hand (comment above) */
        assert_int_equal(r->n_critical_paths, 1);
        const gp_critical_path *cp = &r->critical_paths[0];
        assert_int_equal(cp->length, 1000);
        assert_int_equal(cp->by_class[GP_CP_CPU], 830);
        assert_int_equal(cp->by_class[GP_CP_LAUNCH], 10);
        assert_int_equal(cp->by_class[GP_CP_GPU_COMPUTE], 160);
    }
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && r->n_critical_paths == 0) {
            gp_critical_path *cp = calloc(2, sizeof *cp);
            assert_non_null(cp);
            static const gp_ns by[2][3] = {{600, 300, 100}, {500, 400, 0}};
            for (int k = 0; k < 2; k++) {
                cp[k].step = k + 1;
                cp[k].region = k ? "ProfilerStep#2" : "ProfilerStep#1";
                cp[k].valid = true;
                cp[k].by_class[GP_CP_CPU] = by[k][0];
                cp[k].by_class[GP_CP_GPU_COMPUTE] = by[k][1];
                cp[k].by_class[GP_CP_DEPENDENCY] = by[k][2];
                cp[k].length = by[k][0] + by[k][1] + by[k][2];
            }
            r->critical_paths = cp;
            r->n_critical_paths = 2;
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
        gp_dashboard_inputs in = {
            .traces = gp_traces_const(&t), .n_traces = 1, .summary = s, .analysis = a};
        assert_int_equal(gp_dashboard_build(&in, &d, NULL), GP_OK);
        char *buf = NULL;
        size_t len = 0;
        FILE *fp = open_memstream(&buf, &len);
        assert_int_equal(gp_dashboard_render_html(d, "t", fp), GP_OK);
        fclose(fp);
        const char *cause = strstr(buf, "id=\"gp-cause\""), *where = strstr(buf, "id=\"gp-where\"");
        assert_non_null(cause);
        assert_non_null(where);
        assert_true(cause < where);
        if (r->n_critical_paths == 0) {
            assert_non_null(strstr(buf, "id=\"gp-critpath-na\""));
            assert_true(a->n_findings == 0 || a->findings[0].cause ||
                        strstr(buf, "<h2>Top finding</h2>"));
        } else {
            assert_null(strstr(buf, "id=\"gp-critpath-na\""));
            assert_non_null(strstr(buf, "data-rule=\"critical_path_cpu_bound\""));
            assert_non_null(strstr(buf, "<h2>What holds the step</h2>"));
            assert_non_null(strstr(buf, computed
                                            ? "CPU/Python work holds 77.0 % of the critical path"
                                            : "CPU/Python work holds 57.9 % of the critical path"));
            const char *b1 = strstr(buf, "gp-cp-bar\" data-length=\"1000\"");
            assert_non_null(b1);
            assert_int_equal(bar_sum(b1), 1000);
            if (computed) {
                assert_null(strstr(b1 + 1, "gp-cp-bar\" data-length="));
                assert_non_null(strstr(buf, "data-class=\"cpu_bound\" data-v=\"830\""));
            } else {
                const char *b2 = strstr(b1 + 1, "gp-cp-bar\" data-length=\"900\"");
                assert_non_null(b2);
                assert_int_equal(bar_sum(b2), 900);
                assert_non_null(strstr(buf, "data-class=\"cpu_bound\" data-v=\"600\""));
            }
        }
        free(buf);
        gp_dashboard_free(d);
    }
    gp_summary_free(s);
    gp_analysis_free(a);
    gp_trace_free(t);
}

static void dashboard_figures_come_from_summary(void **state)
{
    gp_trace *t = make_fixture(200);
    gp_summary *s;
    gp_timeline *tl;
    gp_dashboard *d;
    assert_int_equal(gp_summary_compute(gp_traces_const(&t), 1, NULL, &s, NULL), GP_OK);
    assert_int_equal(gp_timeline_build(gp_traces_const(&t), 1, NULL, &tl, NULL), GP_OK);
    d = dash_of(&t, 1, s, tl, NULL);
    assert_int_equal(d->operations, 16);
    /* names: annotation 1, cpu_op 4, runtime 2, range 1, kernel 5, memcpy 1 */
    assert_int_equal(d->unique_operations, 14);
    assert_int_equal(d->gpu_time, 427);
    assert_true(d->peak_memory < 0);
    assert_false(d->gpu_busy); /* no analysis: summed GPU durations */
    assert_int_equal(d->span, 1000);
    /* thread time (self): thread 1: annotation 1000 - 390 - 100 - 200 = 310; cpu ops
     * (390 - 370) + (370 - 40) + (100 - 20) + (200 - 180) = 450; runtime 20+20+20+180 = 240;
     * thread 2: range 200. GPU streams are not thread time. */
    assert_int_equal(d->thread_time, 1200);
    gp_ns want[GP_EV_KIND_COUNT] = {0};
    want[GP_EV_USER_ANNOTATION] = 310;
    want[GP_EV_CPU_OP] = 450;
    want[GP_EV_RUNTIME] = 240;
    want[GP_EV_RANGE] = 200;
    assert_int_equal(d->n_dist, 4);
    double sum = 0;
    for (size_t i = 0; i < d->n_dist; i++) {
        assert_true(d->dist[i].value == (double)want[d->dist[i].kind]);
        sum += d->dist[i].frac;
    }
    assert_true(fabs(sum - 1.0) <= 1e-9);
    assert_int_equal(d->n_gpu_split, 0);
    assert_string_equal(d->ops[0].label, "implicit_gemm");
    assert_true(d->ops[0].frac == 1.0);
    gp_dashboard_free(d);
    gp_timeline_free(tl);
    gp_summary_free(s);
    gp_trace_free(t);
}

/* Real names that shorten to the same form (kernels of modern_h100_vit / modern_h100_timesformer,
 * autograd ops as PyTorch 2.x names them) get distinct short forms within the width. */
static void names_unique_in_a_set(void **state)
{
    (void)state;
    static const char *names[] = {
        "void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_128x128_nn_align1>("
        "cutlass_75_tensorop_bf16_s1688gemm_bf16_128x128_nn_align1::Params)",
        "void at::native::vectorized_elementwise_kernel<4, "
        "at::native::AUnaryFunctor<c10::BFloat16, "
        "c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, "
        "std::array<char*, 2ul> >(int, at::native::AUnaryFunctor<c10::BFloat16, c10::BFloat16, "
        "c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul>)",
        "void at::native::vectorized_elementwise_kernel<4, "
        "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
        "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() "
        "const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, "
        "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
        "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() "
        "const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)",
        "void at::native::vectorized_elementwise_kernel<4, "
        "at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, "
        "at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)",
        "void "
        "cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_32x1_nn_align8>("
        "cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_32x1_nn_align8::Params)",
        "void "
        "cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_64x1_nn_align8>("
        "cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_64x1_nn_align8::Params)",
        "void "
        "cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x64_64x6_tn_align8>("
        "cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x64_64x6_tn_align8::Params)",
        "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8>("
        "cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8::Params)",
        "AddmmBackward0",
        "autograd::engine::evaluate_function: AddmmBackward0",
        "ns::f(int)",
        "ns::f(float)",
        "Memcpy HtoD (Pageable -> Device)",
        "AddmmBackward0", /* the same name again: the same short form */
        "aten::linear",
    };
    enum { N = sizeof names / sizeof names[0], CAP = 96 };
    static const size_t widths[] = {16, 30, 44, 48, 80};
    char *out = malloc(N * CAP);
    assert_non_null(out);
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        assert_int_equal(gp_shorten_names_unique(names, N, widths[w], out, CAP), GP_OK);
        for (size_t i = 0; i < N; i++) {
            assert_true(strlen(out + i * CAP) <= widths[w]);
            for (size_t j = i + 1; j < N; j++) {
                bool same = strcmp(names[i], names[j]) == 0;
                assert_true(same == (strcmp(out + i * CAP, out + j * CAP) == 0));
            }
        }
        /* a name that collides with nothing keeps gp_shorten_name's form */
        char one[CAP];
        gp_shorten_name(names[N - 1], widths[w], one, sizeof one);
        assert_string_equal(out + (N - 1) * CAP, one);
    }
    /* the distinguishing part is shown, not a counter */
    assert_int_equal(gp_shorten_names_unique(names, N, 48, out, CAP), GP_OK);
    assert_non_null(strstr(out + 2 * CAP, "GeluCUDAKernelImpl"));
    assert_non_null(strstr(out + 4 * CAP, "32x1"));
    assert_non_null(strstr(out + 9 * CAP, "evalu"));
    free(out);
}

/* Mangled kernel names (as ROCm and vLLM traces write some) are shown demangled by libiberty,
 * std::bfloat16_t ("DF16b", unknown to GCC 12's libstdc++) included; two that differ only in
 * template arguments are told apart by those arguments, not by their mangled bytes. A name that
 * does not demangle (Kineto truncates long ones) is shown as written. */
static void names_mangled_are_demangled(void **state)
{
    (void)state;
    static const char *const names[] = {
        "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi16ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS4_"
        "S4_"
        "S4_diiiiiiib",
        "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi64ELi8ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_"
        "S4_diiiiiiib",
        "_Z6vecAddPKfS0_Pfi",
        "_ZN19cutlass_cudnn_train6KernelINS_4conv6kernel23ImplicitGemm", /* truncated */
    };
    char one[96];
    gp_shorten_name(names[0], 48, one, sizeof one);
    assert_string_equal(one, "aiter::add_rmsnorm_quant_kernel<...>");
    gp_shorten_name(names[2], 48, one, sizeof one); /* fits whole */
    assert_string_equal(one, "vecAdd(float const*, float const*, float*, int)");
    gp_shorten_name(names[2], 30, one, sizeof one);
    assert_string_equal(one, "vecAdd");
    gp_shorten_name(names[3], 30, one, sizeof one);
    assert_string_equal(one, "_ZN19cutlass_c...3ImplicitGemm");
    enum { N = sizeof names / sizeof names[0], CAP = 96 };
    char out[N * CAP];
    assert_int_equal(gp_shorten_names_unique(names, N, 40, out, CAP), GP_OK);
    assert_string_equal(out + 2 * CAP, "vecAdd");
    for (int i = 0; i < 2; i++) {
        assert_true(strlen(out + i * CAP) <= 40);
        assert_non_null(strstr(out + i * CAP, "add_rmsnorm_quan")); /* not "_ZN5aiter..." */
    }
    assert_non_null(strstr(out, "256, 16"));
    assert_non_null(strstr(out + CAP, "64, 8"));
    /* one kernel the trace names both ways is two rows: they keep two labels */
    static const char *const twice[] = {"_Z1fIiEvPi", "void f<int>(int*)"};
    char two[2 * CAP];
    assert_int_equal(gp_shorten_names_unique(twice, 2, 12, two, CAP), GP_OK);
    assert_string_not_equal(two, two + CAP);
    assert_true(strlen(two) <= 12 && strlen(two + CAP) <= 12);
    assert_non_null(strstr(two + CAP, "#2"));
    /* a name whose text would double with each back-reference is shown as written */
    static const char *const bomb[] = {
        "_Z1f1AIiES_IS0_S0_ES_IS1_S1_ES_IS2_S2_ES_IS3_S3_ES_IS4_S4_ES_IS5_S5_ES_IS6_S6_ES_IS7_S7_"
        "ES_"
        "IS8_S8_ES_IS9_S9_ES_ISA_SA_ES_ISB_SB_ES_ISC_SC_ES_ISD_SD_ES_ISE_SE_ES_ISF_SF_ES_ISG_SG_ES_"
        "ISH_SH_ES_ISI_SI_ES_ISJ_SJ_ES_ISK_SK_ES_ISL_SL_ES_ISM_SM_ES_ISN_SN_ES_ISO_SO_ES_ISP_SP_E"};
    gp_shorten_name(bomb[0], 20, one, sizeof one);
    assert_true(strncmp(one, "_Z1f1AIiE", 9) == 0);
}

/* The 8-rank job: the dashboard's total time is the job's span (not a sum over ranks), its charts
 * are partitions, and a finding that holds on several ranks is listed once, naming them. */
static void dashboard_multirank_job(void **state)
{
    (void)state;
    const char *dir = getenv("GP_SHARED_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/traces/multirank8_dlrm_v100", dir ? dir : "");
    FILE *probe = fopen(path, "r");
    if (!dir || !probe)
        skip();
    fclose(probe);
    gp_read_opts ro;
    gp_read_opts_init(&ro);
    ro.quiet = true;
    gp_job *job;
    gp_error err;
    assert_int_equal(gp_job_read(path, &ro, &job, &err), GP_OK);
    assert_int_equal(job->n_ranks, 8);
    gp_summary *s;
    gp_timeline *tl;
    gp_analysis *a;
    gp_dashboard *d;
    assert_int_equal(gp_summary_compute(gp_job_traces(job), job->n_ranks, NULL, &s, NULL), GP_OK);
    assert_int_equal(gp_timeline_build(gp_job_traces(job), job->n_ranks, NULL, &tl, NULL), GP_OK);
    assert_int_equal(gp_analyze_job(job, NULL, &a, &err), GP_OK);
    d = dash_of(job->ranks, job->n_ranks, s, tl, a);
    gp_ns lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < job->n_ranks; i++) {
        gp_ns b, e;
        gp_trace_span(job->ranks[i], &b, &e);
        lo = b < lo ? b : lo;
        hi = e > hi ? e : hi;
    }
    assert_int_equal(d->span, hi - lo);
    assert_true(d->span < s->span_sum); /* the summary's spans are summed over ranks */
    double sum = 0;
    for (size_t i = 0; i < d->n_dist; i++)
        sum += d->dist[i].frac;
    assert_true(fabs(sum - 1.0) <= 1e-9);
    assert_int_equal(d->n_gpu_split, 3);
    sum = 0;
    for (size_t i = 0; i < d->n_gpu_split; i++)
        sum += d->gpu_split[i].frac;
    assert_true(fabs(sum - 1.0) <= 1e-9);
    assert_true(d->gpu_busy && d->gpu_time <= d->gpu_span);
    /* one finding per kind; the small-kernels one holds on every rank */
    bool small_kernels = false;
    for (size_t i = 0; i < a->n_findings; i++) {
        const gp_finding *f = &a->findings[i];
        assert_true(f->n_ranks >= 1);
        for (size_t k = 1; k < f->n_ranks; k++)
            assert_true(f->ranks[k - 1] < f->ranks[k]);
        for (size_t j = i + 1; j < a->n_findings; j++) {
            const gp_finding *g = &a->findings[j];
            assert_false(strcmp(f->rule, g->rule) == 0 &&
                         (strcmp(f->rule, "straggler") != 0 ||
                          strcmp(f->evidence[0].name, g->evidence[0].name) == 0));
        }
        if (strcmp(f->rule, "small_kernels") == 0) {
            small_kernels = true;
            assert_int_equal(f->n_ranks, 8);
            char who[64];
            gp_ranks_format(f->ranks, f->n_ranks, "-", who, sizeof who);
            assert_string_equal(who, "ranks 0-7");
        }
    }
    assert_true(small_kernels);
    int32_t some[] = {0, 1, 2, 3, 5, 7, 8};
    char who[64];
    gp_ranks_format(some, 7, "-", who, sizeof who);
    assert_string_equal(who, "ranks 0-3, 5, 7, 8");
    gp_ranks_format(some + 4, 1, "-", who, sizeof who);
    assert_string_equal(who, "rank 5");
    gp_dashboard_free(d);
    gp_analysis_free(a);
    gp_timeline_free(tl);
    gp_summary_free(s);
    gp_job_free(job);
}

/* Every shared trace goes through all four outputs. */
static void shared_traces_render(void **state)
{
    const char *dir = getenv("GP_SHARED_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/traces/small_alexnet_cudasync.json.gz", dir ? dir : "");
    FILE *probe = fopen(path, "r");
    if (!probe)
        skip();
    fclose(probe);
    static const char *names[] = {"tiny_cuda_event_sync.json.gz",   "tiny_triton.json.gz",
                                  "small_amd_mi250.json.gz",        "cpu_only.json.gz",
                                  "small_alexnet_cudasync.json.gz", "multirank8_dlrm_v100"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/traces/%s", dir, names[i]);
        gp_read_opts ro;
        gp_read_opts_init(&ro);
        ro.quiet = true;
        gp_job *job;
        gp_error err;
        assert_int_equal(gp_job_read(path, &ro, &job, &err), GP_OK);
        gp_flame_tree *tree;
        assert_int_equal(gp_flame_build(gp_job_traces(job), job->n_ranks, NULL, &tree, NULL),
                         GP_OK);
        assert_true(tree->nodes[0].total > 0);
        FILE *fp = fopen("/dev/null", "w");
        for (int f = 0; f < 4; f++)
            assert_int_equal(gp_flame_render(tree, (gp_flame_format)f, NULL, fp, NULL), GP_OK);
        gp_flame_tree_free(tree);
        gp_timeline *tl;
        gp_summary *s;
        gp_dashboard *d;
        assert_int_equal(gp_timeline_build(gp_job_traces(job), job->n_ranks, NULL, &tl, NULL),
                         GP_OK);
        assert_true(tl->n_rows > 0);
        assert_int_equal(gp_timeline_render_html(tl, NULL, fp), GP_OK);
        assert_int_equal(gp_summary_compute(gp_job_traces(job), job->n_ranks, NULL, &s, NULL),
                         GP_OK);
        d = dash_of(job->ranks, job->n_ranks, s, tl, NULL);
        assert_int_equal(gp_dashboard_render_html(d, NULL, fp), GP_OK);
        fclose(fp);
        gp_dashboard_free(d);
        gp_summary_free(s);
        gp_timeline_free(tl);
        gp_job_free(job);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(flame_gpu_attaches_kernels_under_launching_op),
        cmocka_unit_test(flame_gpu_frames_demangled),
        cmocka_unit_test(flame_cpu_weight_follows_nesting),
        cmocka_unit_test(flame_partial_overlap_is_clipped),
        cmocka_unit_test(flame_weights_saturate),
        cmocka_unit_test(flame_min_duration_depth_and_grouping),
        cmocka_unit_test(flame_empty_weight_is_reported),
        cmocka_unit_test(flame_diff_marks_growth),
        cmocka_unit_test(flame_goldens),
        cmocka_unit_test(flame_speedscope_is_consistent),
        cmocka_unit_test(html_escapes_names),
        cmocka_unit_test(format_from_path),
        cmocka_unit_test(timeline_layout_and_encoding),
        cmocka_unit_test(timeline_memory_rows),
        cmocka_unit_test(timeline_memory_rows_by_device_pair),
        cmocka_unit_test(dashboard_figures_come_from_summary),
        cmocka_unit_test(dashboard_peak_from_memory_counter),
        cmocka_unit_test(analysis_feeds_busy_figures_and_findings),
        cmocka_unit_test(dashboard_cause_above_the_fold),
        cmocka_unit_test(shared_traces_render),
        cmocka_unit_test(names_unique_in_a_set),
        cmocka_unit_test(names_mangled_are_demangled),
        cmocka_unit_test(dashboard_multirank_job),
    };
    return gp_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
