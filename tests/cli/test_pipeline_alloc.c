/* Allocation-failure ("torture") runs of every output command's pipeline, as curl's runtests -t
 * does: summary, ops, analyze (+ advise), flame (four formats), timeline, report (the dashboard
 * bundle), diff (with its analysis and its flame graph), convert, compile, memory (the timeline
 * and its three outputs) and hta (its page and its view) are each composed
 * here as the CLI composes them, from the read of the file to the last byte rendered (to
 * /dev/null). Each pipeline is run once counting the allocations gpuprof's code makes (malloc,
 * calloc and realloc, redirected with the linker's --wrap), then again failing allocation 1, 2,
 * ... N in turn. Every run must succeed or return GP_ENOMEM, never crash; the ASan stage checks
 * that no failure path leaks. Inputs: the bundled example trace (CPU ops, kernels, copies,
 * memory events, steps), the synthetic torch.compile log and traces of tests/compile/data and,
 * when ../shared/traces is there, two real ones (gzip, syncs, compiled regions, no steps). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprof/advise.h"
#include "gpuprof/analyze.h"
#include "gpuprof/compile.h"
#include "gpuprof/diff.h"
#include "gpuprof/ops.h"
#include "gpuprof/report.h"
#include "gpuprof/summary.h"
#include "gpuprof/trace.h"
#include "gpuprof/views.h"
#include "analyze/memory_timeline.h"
#include "common/shared_traces.h"
#include "render/hta_render.h"
#include "render/memory_render.h"

#include "common/fail_alloc.h"

static char g_inputs[3][1024], g_log[1024], g_eager[1024], g_compiled[1024];
static size_t g_n_inputs;
static const char *g_trace; /* the input of the trace pipelines now */
static FILE *g_null;

/* The first failing status of a sequence of steps. */
#define STEP(expr)                                                                                 \
    do {                                                                                           \
        if (st == GP_OK)                                                                           \
            st = (expr);                                                                           \
    } while (0)

/* A step that takes a gp_error (expr passes &e_): when it fails, e_ says so, with the same
 * status and a message (issue 32: the builds fill err like the rest of the API). */
#define ESTEP(expr)                                                                                \
    do {                                                                                           \
        if (st == GP_OK) {                                                                         \
            gp_error e_ = {0};                                                                     \
            st = (expr);                                                                           \
            if (st != GP_OK) {                                                                     \
                assert_int_equal(e_.status, st);                                                   \
                assert_true(e_.msg[0] != '\0');                                                    \
            }                                                                                      \
        }                                                                                          \
    } while (0)

static gp_status read_job(const char *path, bool shapes, gp_job **job)
{
    gp_read_opts ro;
    gp_read_opts_init(&ro);
    ro.keep_op_shapes = shapes;
    gp_error err = {0};
    return gp_job_read(path, &ro, job, &err);
}

static gp_status run_summary(void)
{
    gp_job *job = NULL;
    gp_summary *s = NULL;
    gp_status st = read_job(g_trace, false, &job);
    gp_summary_opts so;
    gp_summary_opts_init(&so);
    ESTEP(gp_summary_compute(gp_job_traces(job), job->n_ranks, &so, &s, &e_));
    STEP(gp_summary_render_text(s, NULL, g_null));
    STEP(gp_summary_render_json(s, NULL, g_null));
    STEP(gp_summary_render_csv(s, NULL, g_null));
    gp_summary_free(s);
    gp_job_free(job);
    return st;
}

static gp_status run_ops(void)
{
    gp_job *job = NULL;
    gp_ops *ops = NULL;
    gp_status st = read_job(g_trace, true, &job);
    for (int by = 0; by < 2 && st == GP_OK; by++) {
        gp_ops_opts oo;
        gp_ops_opts_init(&oo);
        oo.by = by ? GP_OPS_BY_SHAPE : GP_OPS_BY_NAME;
        ESTEP(gp_ops_compute(gp_job_traces(job), job->n_ranks, &oo, &ops, &e_));
        STEP(gp_ops_render_text(ops, 0, g_null));
        STEP(gp_ops_render_json(ops, 0, g_null));
        STEP(gp_ops_render_csv(ops, 0, g_null));
        gp_ops_free(ops);
        ops = NULL;
    }
    gp_job_free(job);
    return st;
}

static gp_status run_analyze(void)
{
    gp_job *job = NULL;
    gp_analysis *a = NULL;
    gp_status st = read_job(g_trace, true, &job);
    for (int hta = 0; hta < 2 && st == GP_OK; hta++) {
        gp_analyze_opts ao;
        gp_analyze_opts_init(&ao);
        ao.hta = hta;
        gp_error err = {0};
        STEP(gp_analyze_job(job, &ao, &a, &err));
        STEP(gp_analysis_render_text(a, 0, g_null));
        STEP(gp_analysis_render_json(a, 0, g_null));
        for (unsigned bit = 1; bit & GP_AT_ALL; bit <<= 1)
            STEP(gp_analysis_render_csv(a, bit, g_null));
        STEP(gp_advise_render_text(a, NULL, g_null));
        STEP(gp_advise_render_json(a, NULL, g_null));
        gp_analysis_free(a);
        a = NULL;
    }
    gp_job_free(job);
    return st;
}

static gp_status run_flame(void)
{
    gp_job *job = NULL;
    gp_flame_tree *tree = NULL;
    gp_status st = read_job(g_trace, false, &job);
    gp_flame_opts fo;
    gp_flame_opts_init(&fo);
    ESTEP(gp_flame_build(gp_job_traces(job), job->n_ranks, &fo, &tree, &e_));
    gp_flame_format fmts[] = {GP_FLAME_FOLDED, GP_FLAME_SPEEDSCOPE, GP_FLAME_SVG, GP_FLAME_HTML};
    for (size_t i = 0; i < 4; i++)
        ESTEP(gp_flame_render(tree, fmts[i], NULL, g_null, &e_));
    gp_flame_tree_free(tree);
    gp_job_free(job);
    return st;
}

static gp_status run_timeline(void)
{
    gp_job *job = NULL;
    gp_timeline *tl = NULL;
    gp_status st = read_job(g_trace, false, &job);
    gp_timeline_opts to;
    gp_timeline_opts_init(&to);
    ESTEP(gp_timeline_build(gp_job_traces(job), job->n_ranks, &to, &tl, &e_));
    STEP(gp_timeline_render_html(tl, "t", g_null));
    gp_timeline_free(tl);
    gp_job_free(job);
    return st;
}

static gp_status run_report(void)
{
    gp_job *job = NULL;
    gp_report_bundle *b = NULL;
    gp_status st = read_job(g_trace, true, &job);
    STEP(gp_report_bundle_build(job, NULL, &b));
    /* The bundle carries a failed analysis or op table as a note (the dashboard is drawn
     * without it): surfaced here, so that the count below sees it. */
    if (st == GP_OK && b->analysis_error.status != GP_OK)
        st = b->analysis_error.status;
    if (st == GP_OK && b->ops_error.status != GP_OK)
        st = b->ops_error.status;
    STEP(gp_dashboard_render_html(b->dashboard, "t", g_null));
    gp_report_bundle_free(b);
    gp_job_free(job);
    return st;
}

static gp_status run_diff(void)
{
    gp_job *base = NULL, *cur = NULL;
    gp_diff *d = NULL;
    gp_flame_tree *tree = NULL;
    gp_status st = read_job(g_eager, false, &base);
    STEP(read_job(g_compiled, false, &cur));
    gp_diff_opts o;
    gp_diff_opts_init(&o);
    o.bootstrap = 50;
    gp_error err = {0};
    STEP(gp_diff_compute(gp_job_traces(base), base->n_ranks, gp_job_traces(cur), cur->n_ranks, &o,
                         &d, &err));
    STEP(gp_diff_render_text(d, NULL, g_null));
    STEP(gp_diff_render_json(d, NULL, g_null));
    STEP(gp_diff_render_html(d, NULL, g_null));
    STEP(gp_diff_render_junit(d, NULL, g_null));
    STEP(gp_diff_flame(gp_job_traces(base), base->n_ranks, gp_job_traces(cur), cur->n_ranks, &tree,
                       &err));
    ESTEP(gp_flame_render(tree, GP_FLAME_HTML, NULL, g_null, &e_));
    gp_flame_tree_free(tree);
    gp_diff_free(d);
    gp_job_free(cur);
    gp_job_free(base);
    return st;
}

static gp_status run_convert(void)
{
    gp_trace *t = NULL;
    gp_error err = {0};
    gp_status st = gp_trace_read(g_trace, NULL, &t, &err);
    STEP(gp_trace_write_chrome_stream(t, g_null, &err));
    gp_trace_free(t);
    return st;
}

static gp_status run_compile(void)
{
    gp_compile_log *log = NULL;
    gp_compile_analysis *an = NULL;
    gp_trace *tr[2] = {NULL, NULL};
    gp_compile_trace *ct[2] = {NULL, NULL};
    gp_compile_speedup *sp = NULL;
    gp_error err = {0};
    gp_compile_read_opts ro = {0};
    gp_status st = gp_compile_log_read(g_log, &ro, &log, &err);
    STEP(gp_compile_analyze(log, &an));
    const char *paths[2] = {g_eager, g_compiled};
    for (size_t i = 0; i < 2; i++) {
        STEP(gp_trace_read(paths[i], NULL, &tr[i], &err));
        STEP(gp_compile_trace_analyze(tr[i], &ct[i]));
        if (st == GP_OK)
            gp_compile_trace_link(ct[i], log, an);
    }
    STEP(gp_compile_speedup_compute(ct[0], ct[1], &sp));
    if (st == GP_OK) {
        const gp_compile_trace *cts[2] = {ct[0], ct[1]};
        gp_compile_report rep = {log, an, cts, 2, sp, 20, "t", NULL};
        STEP(gp_compile_render_text(&rep, g_null));
        STEP(gp_compile_render_json(&rep, g_null));
        STEP(gp_compile_render_html(&rep, g_null, &err));
    }
    gp_compile_speedup_free(sp);
    for (size_t i = 0; i < 2; i++) {
        gp_compile_trace_free(ct[i]);
        gp_trace_free(tr[i]);
    }
    gp_compile_analysis_free(an);
    gp_compile_log_free(log);
    return st;
}

/* gpuprof memory: the timeline, its text, JSON and page. */
static gp_status run_memory(void)
{
    gp_job *job = NULL;
    gp__mem_timeline m = {0};
    gp_status st = read_job(g_trace, false, &job);
    STEP(gp__mem_timeline_build(gp_job_traces(job), job->n_ranks, 0, 0, &m));
    STEP(gp__mem_render_text(&m, 10, g_null));
    STEP(gp__mem_render_json(&m, g_null));
    STEP(gp__mem_render_html(&m, "memory", g_null));
    gp__mem_timeline_free(&m);
    gp_job_free(job);
    return st;
}

/* gpuprof hta: the page of an HTA-mode analysis, and the "hta" view (--json). */
static gp_status run_hta(void)
{
    gp_job *job = NULL;
    gp_analysis *a = NULL;
    gp_status st = read_job(g_trace, true, &job);
    gp_analyze_opts ao;
    gp_analyze_opts_init(&ao);
    ao.steps = GP_STEPS_HTA;
    ao.hta = true;
    gp_error err = {0};
    STEP(gp_analyze_job(job, &ao, &a, &err));
    STEP(gp__hta_render_html(a, "hta", g_null));
    STEP(gp_view_render(gp_view_find("hta"), job, NULL, g_null, &err));
    gp_analysis_free(a);
    gp_job_free(job);
    return st;
}

static void torture_one(const char *name, gp_status (*pipeline)(void))
{
    g_count = 0;
    g_fail_at = -1; /* counting, never equal */
    gp_status st = pipeline();
    g_fail_at = 0;
    if (st != GP_OK)
        fail_msg("%s: the pipeline fails without a failing allocation: %s", name, gp_strerror(st));
    long total = g_count, failed = 0;
    assert_true(total > 10);
    for (long k = 1; k <= total; k++) {
        g_count = 0;
        g_fail_at = k;
        st = pipeline();
        g_fail_at = 0;
        if (st == GP_ENOMEM)
            failed++;
        else if (st == GP_OK && getenv("GP_TEST_SHOW_SWALLOWED")) /* best-effort allocations */
            print_message("%s: allocation %ld failed, the pipeline succeeded\n", name, k);
        else if (st != GP_OK)
            fail_msg("%s, failing allocation %ld of %ld: %s instead of GP_ENOMEM", name, k, total,
                     gp_strerror(st));
    }
    const char *base = strrchr(g_trace, '/');
    print_message("%-9s %-36s %6ld allocations, %6ld failure points reported GP_ENOMEM\n", name,
                  base ? base + 1 : g_trace, total, failed);
    /* A failed allocation the pipeline swallows leaves a wrong or partial result: most of them
     * must surface. (Some are allowed to: a lost cache, a shortened note.) */
    assert_true(failed > total / 2);
}

/* Every input for the pipelines that read one trace; diff and compile read their own. */
static void torture(const char *name, gp_status (*pipeline)(void), bool per_input)
{
    for (size_t i = 0; i < (per_input ? g_n_inputs : 1); i++) {
        g_trace = per_input ? g_inputs[i] : "tests/compile/data";
        torture_one(name, pipeline);
    }
}

#define TORTURE(fn, per_input)                                                                     \
    static void fn##_under_failing_allocations(void **state)                                       \
    {                                                                                              \
        (void)state;                                                                               \
        torture(#fn, run_##fn, per_input);                                                         \
    }
#define PER_INPUT true
#define OWN_INPUTS false
TORTURE(summary, PER_INPUT)
TORTURE(ops, PER_INPUT)
TORTURE(analyze, PER_INPUT)
TORTURE(flame, PER_INPUT)
TORTURE(timeline, PER_INPUT)
TORTURE(report, PER_INPUT)
TORTURE(diff, OWN_INPUTS)
TORTURE(convert, PER_INPUT)
TORTURE(compile, OWN_INPUTS)
TORTURE(memory, PER_INPUT)
TORTURE(hta, PER_INPUT)

int main(void)
{
    const char *src = getenv("GP_SOURCE_DIR");
    if (!src)
        src = ".";
    snprintf(g_inputs[g_n_inputs++], sizeof g_inputs[0], "%s/examples/traces/example_step.json",
             src);
    if (gp_test_have_shared_traces()) {
        const char *shared = getenv("GP_SHARED_DIR");
        const char *names[] = {"tiny_cuda_event_sync.json.gz",
                               "modern_mi300_torch_compile.json.gz"};
        for (size_t i = 0; i < 2; i++)
            snprintf(g_inputs[g_n_inputs++], sizeof g_inputs[0], "%s/traces/%s",
                     shared ? shared : "../shared", names[i]);
    }
    snprintf(g_log, sizeof g_log, "%s/tests/compile/data/breaks.log", src);
    snprintf(g_eager, sizeof g_eager, "%s/tests/compile/data/eager.json", src);
    snprintf(g_compiled, sizeof g_compiled, "%s/tests/compile/data/compiled.json", src);
    g_null = fopen("/dev/null", "w");
    if (!g_null)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(summary_under_failing_allocations),
        cmocka_unit_test(ops_under_failing_allocations),
        cmocka_unit_test(analyze_under_failing_allocations),
        cmocka_unit_test(flame_under_failing_allocations),
        cmocka_unit_test(timeline_under_failing_allocations),
        cmocka_unit_test(report_under_failing_allocations),
        cmocka_unit_test(diff_under_failing_allocations),
        cmocka_unit_test(convert_under_failing_allocations),
        cmocka_unit_test(compile_under_failing_allocations),
        cmocka_unit_test(memory_under_failing_allocations),
        cmocka_unit_test(hta_under_failing_allocations),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    fclose(g_null);
    return rc;
}
