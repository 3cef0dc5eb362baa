/* The run-time side of torch.compile: the gaps between compiled regions (what each graph break
 * costs, with and without a compile log), report.html's torch.compile section (shown only when a
 * trace has compiled regions), and gpuprof diff pairing compiled regions with the eager ops they
 * replace. Inputs: the synthetic tests/compile/data (make_synthetic.py: every figure an exact
 * number of microseconds, the expectations below computed by hand from it); the shared compile
 * trace is test_compile.c's. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpuprof/compile.h"
#include "gpuprof/diff.h"
#include "gpuprof/report.h"

static void data_path(char *buf, size_t cap, const char *name)
{
    const char *src = getenv("GP_SOURCE_DIR");
    snprintf(buf, cap, "%s/tests/compile/data/%s", src ? src : ".", name);
}

static gp_trace *read_data(const char *name)
{
    char path[4096];
    data_path(path, sizeof path, name);
    gp_trace *t = NULL;
    assert_int_equal(gp_trace_read(path, NULL, &t, NULL), GP_OK);
    return t;
}

static const gp_compile_gap *find_gap(const gp_compile_trace *ct, const char *from, const char *to)
{
    for (size_t i = 0; i < ct->n_gaps; i++)
        if (!strcmp(ct->gaps[i].from, from) && !strcmp(ct->gaps[i].to, to))
            return &ct->gaps[i];
    fail_msg("no gap %s -> %s", from, to);
    return NULL;
}

/* Per iteration of compiled.json: region 0/0 ends at +110 us, the .item() fallback (aten::item,
 * 40 us, with a 2 us DtoH memcpy), a 5 us guard check, region 1/0 starts at +180 us: a 70 us
 * gap, twice. Region 1/0 of iteration 1 ends at 1240 us, 0/0 of iteration 2 starts at 2010 us:
 * one 770 us gap holding aten::copy_ (50 us, a 25 us kernel) and a guard check. */
static void gaps_without_a_log(void **state)
{
    (void)state;
    gp_trace *t = read_data("compiled.json");
    gp_compile_trace *ct;
    assert_int_equal(gp_compile_trace_analyze(t, &ct), GP_OK);
    assert_int_equal(ct->n_gaps, 2);
    assert_false(ct->linked);
    const gp_compile_gap *g = &ct->gaps[0]; /* probable breaks first */
    assert_string_equal(g->from, "0/0");
    assert_string_equal(g->to, "1/0");
    assert_int_equal(g->kind, GP_CGAP_PROBABLE); /* frame 1 compiled after frame 0 */
    assert_int_equal(g->brk, UINT32_MAX);
    assert_int_equal(g->count, 2);
    assert_int_equal(g->wall, 140000);
    assert_int_equal(g->cpu_ops, 80000);
    assert_int_equal(g->guard, 10000);
    assert_int_equal(g->gpu, 4000);
    assert_int_equal(g->kernels, 0); /* a memcpy, not a kernel */
    assert_int_equal(g->launches, 2);
    assert_int_equal(g->launch_time, 8000);
    assert_string_equal(g->ops[0], "aten::item");
    assert_int_equal(g->op_time[0], 80000);
    assert_null(g->ops[1]);
    g = find_gap(ct, "1/0", "0/0");
    assert_int_equal(g->kind, GP_CGAP_BETWEEN); /* back to an earlier frame: the next call */
    assert_int_equal(g->count, 1);
    assert_int_equal(g->wall, 770000);
    assert_int_equal(g->cpu_ops, 50000);
    assert_int_equal(g->guard, 5000);
    assert_int_equal(g->gpu, 25000);
    assert_int_equal(g->kernels, 1);
    assert_string_equal(g->ops[0], "aten::copy_");
    /* the gaps' GPU work is part of the eager GPU work */
    assert_int_equal(ct->gpu_eager, 4000 + 2 * 25000);
    gp_compile_trace_free(ct);
    gp_trace_free(t);
}

/* breaks.log: fn (frame 0) breaks at model.py:12 on Tensor.item() and resumes in frame 1. */
static void gaps_linked_to_the_log(void **state)
{
    (void)state;
    char path[4096];
    data_path(path, sizeof path, "breaks.log");
    gp_compile_log *log;
    gp_compile_analysis *a;
    assert_int_equal(gp_compile_log_read(path, NULL, &log, NULL), GP_OK);
    assert_int_equal(gp_compile_analyze(log, &a), GP_OK);
    assert_int_equal(a->n_breaks, 1);
    gp_trace *t = read_data("compiled.json");
    gp_compile_trace *ct;
    assert_int_equal(gp_compile_trace_analyze(t, &ct), GP_OK);
    gp_compile_trace_link(ct, log, a);
    assert_true(ct->linked);
    const gp_compile_gap *g = find_gap(ct, "0/0", "1/0");
    assert_int_equal(g->kind, GP_CGAP_BREAK);
    assert_int_equal(g->brk, 0);
    assert_int_equal(a->breaks[g->brk].line, 12);
    assert_int_equal(a->breaks[g->brk].cause, GP_CC_SCALAR);
    assert_int_equal(g->wall, 140000);
    g = find_gap(ct, "1/0", "0/0");
    assert_int_equal(g->kind, GP_CGAP_BETWEEN);
    assert_int_equal(g->brk, UINT32_MAX);
    /* A log without that break: no gap is a break (the log decides, not the frame order). */
    gp_compile_analysis none = {0};
    gp_compile_trace_link(ct, log, &none);
    for (size_t i = 0; i < ct->n_gaps; i++)
        assert_int_equal(ct->gaps[i].kind, GP_CGAP_BETWEEN);
    gp_compile_trace_free(ct);
    gp_trace_free(t);
    gp_compile_analysis_free(a);
    gp_compile_log_free(log);
}

static char *render_report(const char *name, bool *has_compile)
{
    char path[4096];
    data_path(path, sizeof path, name);
    gp_job *job;
    assert_int_equal(gp_job_read(path, NULL, &job, NULL), GP_OK);
    gp_report_bundle *b;
    assert_int_equal(gp_report_bundle_build(job, NULL, &b), GP_OK);
    *has_compile = b->compile != NULL;
    char *html = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&html, &len);
    assert_non_null(fp);
    assert_int_equal(gp_dashboard_render_html(b->dashboard, "t", fp), GP_OK);
    fclose(fp);
    gp_report_bundle_free(b);
    gp_job_free(job);
    return html;
}

static void report_section_only_with_regions(void **state)
{
    (void)state;
    bool has;
    char *html = render_report("compiled.json", &has);
    assert_true(has);
    const char *s = strstr(html, "<section id=\"gp-compile\">");
    assert_non_null(s);
    assert_non_null(strstr(s, "<td class=\"gp-id\">0/0</td>"));
    assert_non_null(strstr(s, "probable_break"));
    assert_non_null(strstr(s, "aten::item 80.000 \xc2\xb5s")); /* the pages write µs */
    free(html);
    html = render_report("eager.json", &has);
    assert_false(has);
    assert_null(strstr(html, "gp-compile"));
    free(html);
}

static gp_diff *diff_of(const char *base, const char *cur)
{
    gp_trace *b = read_data(base), *c = read_data(cur);
    gp_diff_opts o;
    gp_diff_opts_init(&o);
    o.analyze = false;
    gp_diff *d;
    assert_int_equal(gp_diff_compute(gp_traces_const(&b), 1, gp_traces_const(&c), 1, &o, &d, NULL),
                     GP_OK);
    gp_trace_free(b);
    gp_trace_free(c);
    return d;
}

static const gp_diff_region *region(const gp_diff *d, const char *name)
{
    for (size_t i = 0; i < d->compile->n_regions; i++)
        if (!strcmp(d->compile->regions[i].name, name))
            return &d->compile->regions[i];
    fail_msg("no region %s", name);
    return NULL;
}

/* Eager, per iteration: pow 8, mean 8, add 5, rsqrt 5, mul 6, mm 30, relu 6, add 5 us of kernels
 * (every op 50 us of CPU); item's memcpy 2 and copy_ 25 us are named by no region. Region 0/0
 * names pow, mean, add, rsqrt, mul (its fused kernel) and mm (called itself); 1/0 names add and
 * relu: aten::add is named by one kernel call of each, so each gets half of the eager add. */
static void diff_pairs_regions_with_eager_ops(void **state)
{
    (void)state;
    gp_diff *d = diff_of("eager.json", "compiled.json");
    const gp_diff_compile *c = d->compile;
    assert_int_equal(c->mode, GP_DIFF_COMPILE_BASE_EAGER);
    assert_int_equal(c->n_regions, 2);
    const gp_diff_region *r = region(d, "0/0");
    /* 2 x (8 + 8 + 5 + 6 + 30) + half of 2 x (5 + 5) = 124 us */
    assert_true(r->gpu[0] == 124000 && r->gpu[1] == 100000);
    assert_true(r->calls[0] == 12 && r->calls[1] == 2);
    assert_true(r->cpu[0] == 600000 && r->cpu[1] == 200000);
    assert_true(fabs(r->gpu_speedup - 1.24) < 1e-12);
    assert_non_null(strstr(r->ops, "aten::mm"));
    assert_non_null(strstr(r->ops, "aten::rsqrt"));
    assert_null(strstr(r->ops, "aten::relu"));
    r = region(d, "1/0");
    assert_true(r->gpu[0] == 22000 && r->gpu[1] == 20000);
    assert_string_equal(r->ops, "aten::relu, aten::add");
    assert_true(c->paired_gpu[0] == 146000 && c->paired_gpu[1] == 120000);
    assert_true(c->other_gpu[0] == 54000 && c->other_gpu[1] == 54000);
    gp_diff_free(d);
    /* The other way round: the same figures, sides swapped. */
    d = diff_of("compiled.json", "eager.json");
    assert_int_equal(d->compile->mode, GP_DIFF_COMPILE_CUR_EAGER);
    r = region(d, "0/0");
    assert_true(r->gpu[0] == 100000 && r->gpu[1] == 124000);
    gp_diff_free(d);
    /* Both compiled: by compile id, every speedup 1. */
    d = diff_of("compiled.json", "compiled.json");
    assert_int_equal(d->compile->mode, GP_DIFF_COMPILE_BOTH);
    assert_true(region(d, "1/0")->gpu_speedup == 1.0 && d->compile->speedup == 1.0);
    assert_string_equal(region(d, "0/0")->ops, "");
    gp_diff_free(d);
    /* Neither: no section, and the JSON has no "compile" member. */
    d = diff_of("eager.json", "eager.json");
    assert_int_equal(d->compile->mode, GP_DIFF_COMPILE_NONE);
    char *json = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&json, &len);
    assert_int_equal(gp_diff_render_json(d, NULL, fp), GP_OK);
    fclose(fp);
    assert_null(strstr(json, "\"compile\""));
    free(json);
    gp_diff_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gaps_without_a_log),
        cmocka_unit_test(gaps_linked_to_the_log),
        cmocka_unit_test(report_section_only_with_regions),
        cmocka_unit_test(diff_pairs_regions_with_eager_ops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
