/* The decision rule of gpuprof diff (docs/diff.md, "Decision rule"), one case per row of its table,
 * on runs built here with exact durations: the verdict on the total time per run (untested with
 * one or three runs per side, tested with five), the call-count and per-call signals with their
 * directions, what fails --fail-on-regression with and without require_significance, matching of
 * renamed names, unique short names in text output, the seed's own workflow, and the copy_/clone
 * pattern (more calls, shorter each, more in total) built from a shared real trace. The text of
 * the decision cases is a golden file (GP_UPDATE_GOLDEN=1 rewrites it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/golden.h"
#include "core/util.h"
#include "common/shared_traces.h"
#include "diff/diff_builder.h"
#include "gpuprof/diff.h"

/* One case: `calls` calls of `dur` ns in each base run, the current side as given; `runs` runs per
 * side, run r's durations scaled by (1 + jitter * (r - (runs-1)/2)) so runs differ exactly. */
typedef struct vcase {
    const char *name;
    int runs;
    int calls_b, calls_c;
    gp_ns dur_b, dur_c;
    double jitter_b, jitter_c;
} vcase;

static gp_diff *compute_cases(const vcase *cs, size_t n, int runs, const gp_diff_opts *o)
{
    gp_trace *b[8], *c[8];
    for (int r = 0; r < runs; r++) {
        builder bb, cb;
        b_init(&bb, "base");
        b_init(&cb, "current");
        for (size_t k = 0; k < n; k++) {
            double mid = (runs - 1) / 2.0;
            double fb = 1 + cs[k].jitter_b * (r - mid), fc = 1 + cs[k].jitter_c * (r - mid);
            for (int i = 0; i < cs[k].calls_b; i++)
                b_add(&bb, GP_EV_KERNEL, cs[k].name, (gp_ns)llround((double)cs[k].dur_b * fb));
            for (int i = 0; i < cs[k].calls_c; i++)
                b_add(&cb, GP_EV_KERNEL, cs[k].name, (gp_ns)llround((double)cs[k].dur_c * fc));
        }
        b[r] = b_done(&bb);
        c[r] = b_done(&cb);
    }
    gp_diff *d = NULL;
    gp_error err = {0};
    assert_int_equal(gp_diff_compute(gp_traces_const(b), (size_t)runs, gp_traces_const(c),
                                     (size_t)runs, o, &d, &err),
                     GP_OK);
    for (int r = 0; r < runs; r++) {
        gp_trace_free(b[r]);
        gp_trace_free(c[r]);
    }
    return d;
}

static void opts_quiet(gp_diff_opts *o)
{
    gp_diff_opts_init(o);
    o->analyze = false;
    o->bootstrap = 200;
}

/* One run per side, the rows of the table: the threshold alone decides, untested (n=1). */
static const vcase one_run[] = {
    /* total +43 %, calls equal, 3 calls (the seed's matrix_multiply) */
    {"matrix_multiply", 1, 3, 3, 98000000, 140140000, 0, 0},
    /* total +3 %: below the threshold */
    {"small_drift", 1, 40, 40, 1000000, 1030000, 0, 0},
    /* total -20 % */
    {"faster_op", 1, 40, 40, 500000, 400000, 0, 0},
    /* copy_: 444 -> 5232 calls, 100 us -> 36.7 us per call: +332 % in total */
    {"aten::copy_", 1, 444, 5232, 100000, 36700, 0, 0},
    /* half the calls, twice as long: the total is unchanged */
    {"fused_pair", 1, 200, 100, 20000, 40000, 0, 0},
};

static void one_run_per_side(void **state)
{
    gp_diff_opts o;
    opts_quiet(&o);
    gp_diff *d = compute_cases(one_run, GP_ARRAY_LEN(one_run), 1, &o);
    const gp_diff_row *r = find_row(d, "matrix_multiply");
    assert_int_equal(r->type, GP_DIFF_REGRESSION);
    assert_int_equal(r->test.method, GP_DIFF_TEST_NONE);
    assert_true(fabs(r->delta_pct - 43.0) < 1e-9);
    assert_int_equal(r->calls_dir, GP_DIFF_SAME);
    assert_int_equal(r->per_call_dir, GP_DIFF_DIR_UNTESTED); /* 3 vs 3 calls: min p 0.1 */
    assert_true(isnan(r->test.ci_lo) && isnan(r->per_call.ci_lo));
    r = find_row(d, "small_drift");
    assert_int_equal(r->type, GP_DIFF_NO_CHANGE);
    assert_int_equal(r->per_call_dir, GP_DIFF_SAME); /* significant, but 3 % < 5 % */
    assert_true(r->per_call.significant);
    r = find_row(d, "faster_op");
    assert_int_equal(r->type, GP_DIFF_IMPROVEMENT);
    assert_int_equal(r->per_call_dir, GP_DIFF_DOWN);
    r = find_row(d, "aten::copy_");
    assert_int_equal(r->type, GP_DIFF_REGRESSION); /* the total, not the per-call median */
    assert_true(fabs(r->delta_pct - 100.0 * (5232 * 36700.0 / (444 * 100000.0) - 1)) < 1e-9);
    assert_int_equal(r->calls_dir, GP_DIFF_UP);
    assert_true(fabs(r->calls_pct - 100.0 * (5232.0 / 444 - 1)) < 1e-9);
    assert_int_equal(r->per_call_dir, GP_DIFF_DOWN);
    assert_true(fabs(r->per_call.ratio - 0.367) < 1e-12);
    r = find_row(d, "fused_pair");
    assert_int_equal(r->type, GP_DIFF_NO_CHANGE);
    assert_int_equal(r->calls_dir, GP_DIFF_DOWN);
    assert_int_equal(r->per_call_dir, GP_DIFF_UP);
    /* matrix_multiply, copy_, and the total span (+5 % and more) */
    assert_int_equal(d->n_significant_regressions, 0);
    size_t metric_regressions = 0;
    for (int m = 0; m < GP_DIFF_METRIC_COUNT; m++)
        metric_regressions += d->metrics[m].type == GP_DIFF_REGRESSION;
    assert_int_equal(d->n_untested_regressions, 2 + metric_regressions);
    assert_int_equal(d->n_failing_regressions, d->n_untested_regressions);
    gp_diff_free(d);
    o.require_significance = true;
    d = compute_cases(one_run, GP_ARRAY_LEN(one_run), 1, &o);
    assert_int_equal(d->n_untested_regressions, 2 + metric_regressions);
    assert_int_equal(d->n_failing_regressions, 0); /* untested ones do not fail */
    gp_diff_free(d);
}

/* Three runs per side: still untested (3 vs 3 cannot reach 0.05); the median run total decides. */
static void three_runs_per_side(void **state)
{
    static const vcase cs[] = {
        {"k_up", 3, 10, 10, 100000, 110000, 0.02, 0.02},
        {"k_flat", 3, 10, 10, 100000, 101000, 0.02, 0.02},
    };
    gp_diff_opts o;
    opts_quiet(&o);
    gp_diff *d = compute_cases(cs, 2, 3, &o);
    const gp_diff_row *r = find_row(d, "k_up");
    assert_int_equal(r->test.method, GP_DIFF_TEST_NONE);
    assert_int_equal(r->test.n_base, 3);
    assert_true(fabs(r->test.ratio - 1.10) < 1e-12); /* medians: the middle run of each side */
    assert_int_equal(r->type, GP_DIFF_REGRESSION);
    assert_int_equal(find_row(d, "k_flat")->type, GP_DIFF_NO_CHANGE);
    assert_int_equal(d->n_tested, 0);
    gp_diff_free(d);
}

/* Five runs per side: tested on the per-run totals. */
static void five_runs_per_side(void **state)
{
    static const vcase cs[] = {
        /* +10 %, runs within +-4 %: fully separated, exact p = 2 / C(10, 5) = 2/252 */
        {"k_up", 5, 10, 10, 100000, 110000, 0.02, 0.02},
        /* +10 % medians, runs within +-40 %: overlapping, not significant */
        {"k_noisy", 5, 10, 10, 100000, 110000, 0.2, 0.2},
        /* +2 %, separated: significant but below the threshold */
        {"k_small", 5, 10, 10, 100000, 102000, 0.002, 0.002},
    };
    gp_diff_opts o;
    opts_quiet(&o);
    o.correction = GP_DIFF_NONE; /* the raw p-values of the table */
    gp_diff *d = compute_cases(cs, 3, 5, &o);
    const gp_diff_row *r = find_row(d, "k_up");
    assert_int_equal(r->test.method, GP_DIFF_TEST_RUNS);
    assert_true(r->test.exact);
    assert_true(fabs(r->test.p_value - 2.0 / 252.0) < 1e-12);
    assert_int_equal(r->type, GP_DIFF_REGRESSION);
    r = find_row(d, "k_noisy");
    assert_int_equal(r->test.method, GP_DIFF_TEST_RUNS);
    assert_false(r->test.significant);
    assert_int_equal(r->type, GP_DIFF_NO_CHANGE);
    r = find_row(d, "k_small");
    assert_true(r->test.significant);
    assert_int_equal(r->type, GP_DIFF_NO_CHANGE);
    assert_int_equal(d->n_tested, 3);
    assert_int_equal(d->n_significant_regressions,
                     1 + (d->metrics[GP_DIFF_M_TOTAL].type == GP_DIFF_REGRESSION));
    o.require_significance = true;
    gp_diff *d2 = compute_cases(cs, 3, 5, &o);
    assert_int_equal(d2->n_failing_regressions, d->n_significant_regressions);
    gp_diff_free(d2);
    gp_diff_free(d);
}

static void text_of(const gp_diff *d, int width, char **buf, size_t *len)
{
    FILE *fp = open_memstream(buf, len);
    assert_non_null(fp);
    gp_diff_render_opts ro;
    gp_diff_render_opts_init(&ro);
    ro.base_label = "base";
    ro.cur_label = "current";
    ro.top_n = 0;
    ro.name_width = width;
    assert_int_equal(gp_diff_render_text(d, &ro, fp), GP_OK);
    fclose(fp);
}

/* The decision cases of one_run_per_side as text: the golden file docs/diff.md quotes from. */
static void decision_text_golden(void **state)
{
    gp_diff_opts o;
    opts_quiet(&o);
    gp_diff *d = compute_cases(one_run, GP_ARRAY_LEN(one_run), 1, &o);
    char *buf = NULL;
    size_t len = 0;
    text_of(d, 32, &buf, &len);
    gp_test_check_golden("tests/diff/golden/decisions.txt", buf, len);
    assert_non_null(strstr(buf, "untested (n=1)"));
    free(buf);
    gp_diff_free(d);
}

/* A kernel whose template arguments changed is one row with both names (not NEW + REMOVED);
 * renumbered instances on both sides merge into one row of their normalised name. */
static void renamed_names_match(void **state)
{
    builder b, c;
    b_init(&b, "base");
    b_init(&c, "current");
    for (int i = 0; i < 20; i++) {
        b_add(&b, GP_EV_KERNEL, "void gemm_kernel<float, 128, 64>(float*, int)", 50000);
        b_add(&c, GP_EV_KERNEL, "void gemm_kernel<__half, 128, 64>(__half*, int)", 30000);
        b_add(&b, GP_EV_KERNEL, "triton_poi_fused_add_0", 4000);
        b_add(&b, GP_EV_KERNEL, "triton_poi_fused_add_1", 4000);
        b_add(&c, GP_EV_KERNEL, "triton_poi_fused_add_5", 4000);
        b_add(&c, GP_EV_KERNEL, "triton_poi_fused_add_6", 4000);
        b_add(&c, GP_EV_KERNEL, "triton_poi_fused_add_7", 4000);
    }
    gp_trace *bt = b_done(&b), *ct = b_done(&c);
    gp_diff_opts o;
    opts_quiet(&o);
    gp_diff *d = NULL;
    assert_int_equal(
        gp_diff_compute(gp_traces_const(&bt), 1, gp_traces_const(&ct), 1, &o, &d, NULL), GP_OK);
    assert_int_equal(d->n_rows, 2);
    assert_int_equal(d->n_matched, 2);
    const gp_diff_row *r = find_row(d, "void gemm_kernel<__half, 128, 64>(__half*, int)");
    assert_non_null(r);
    assert_string_equal(r->base_name, "void gemm_kernel<float, 128, 64>(float*, int)");
    assert_int_equal(r->type, GP_DIFF_IMPROVEMENT);
    assert_int_equal(r->per_call_dir, GP_DIFF_DOWN);
    r = find_row(d, "triton_poi_fused_add_N");
    assert_non_null(r);
    assert_null(r->base_name);
    assert_int_equal(r->n_base_names, 2);
    assert_int_equal(r->n_cur_names, 3);
    assert_true(r->base.calls == 40 && r->cur.calls == 60);
    assert_int_equal(r->type, GP_DIFF_REGRESSION);
    assert_int_equal(r->calls_dir, GP_DIFF_UP);
    assert_int_equal(r->per_call_dir, GP_DIFF_SAME);
    char *buf = NULL;
    size_t len = 0;
    text_of(d, 48, &buf, &len);
    assert_non_null(strstr(buf, "MATCHED BY NORMALISED NAME (2"));
    assert_non_null(strstr(buf, "base:    void gemm_kernel<float, 128, 64>(float*, int)"));
    assert_non_null(strstr(buf, "2 base names -> 3 current names: triton_poi_fused_add_N"));
    free(buf);
    gp_diff_free(d);
    o.exact = true;
    assert_int_equal(
        gp_diff_compute(gp_traces_const(&bt), 1, gp_traces_const(&ct), 1, &o, &d, NULL), GP_OK);
    assert_int_equal(d->n_rows, 7);
    assert_int_equal(d->n_by_type[GP_DIFF_NEW], 4);
    assert_int_equal(d->n_by_type[GP_DIFF_REMOVED], 3);
    gp_diff_free(d);
    gp_trace_free(bt);
    gp_trace_free(ct);
}

/* 39 different kernels that shorten to the same text: no two text rows show the same name. */
static void text_rows_have_unique_names(void **state)
{
    builder b, c;
    b_init(&b, "base");
    b_init(&c, "current");
    for (int k = 0; k < 39; k++) {
        char name[256];
        snprintf(
            name, sizeof name,
            "void at::native::vectorized_elementwise_kernel<4, at::native::Functor%02d<float>, "
            "at::detail::Array<char*, 2> >(int, at::native::Functor%02d<float>, "
            "at::detail::Array<char*, 2>)",
            k, k);
        for (int i = 0; i < 12; i++) {
            b_add(&b, GP_EV_KERNEL, name, 10000);
            b_add(&c, GP_EV_KERNEL, name, 11000 + 1000 * k);
        }
    }
    gp_trace *bt = b_done(&b), *ct = b_done(&c);
    gp_diff_opts o;
    opts_quiet(&o);
    gp_diff *d = NULL;
    assert_int_equal(
        gp_diff_compute(gp_traces_const(&bt), 1, gp_traces_const(&ct), 1, &o, &d, NULL), GP_OK);
    assert_int_equal(d->n_rows, 39);
    for (int width = 48; width <= 120; width += 72) {
        char *buf = NULL;
        size_t len = 0;
        text_of(d, width, &buf, &len);
        /* Every table line of a kernel row: its first `width` bytes are the name column. */
        size_t seen = 0;
        char(*names)[128] = calloc(64, sizeof *names);
        assert_non_null(names);
        for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
            if (!strstr(line, " kernel ") || strlen(line) < (size_t)width || seen >= 64)
                continue;
            snprintf(names[seen], sizeof names[seen], "%.*s", width, line);
            for (size_t j = 0; j < seen; j++)
                if (strcmp(names[j], names[seen]) == 0)
                    fail_msg("width %d: two rows show '%s'", width, names[seen]);
            seen++;
        }
        assert_true(seen >= 39); /* every kernel is in a table (-n 0) */
        free(names);
        free(buf);
    }
    gp_diff_free(d);
    gp_trace_free(bt);
    gp_trace_free(ct);
}

/* The seed's workflow: one profile per side of in-process ranges with 1-3 calls each;
 * matrix_multiply +43 % must fail --fail-on-regression (it passed as NO_CHANGE before). */
static void seed_workflow(void **state)
{
    builder b, c;
    b_init(&b, "baseline");
    b_init(&c, "current");
    for (int i = 0; i < 2; i++) {
        b_add_range(&b, "matrix_multiply", 49000000, NULL);
        b_add_range(&c, "matrix_multiply", 70070000, NULL);
    }
    b_add_range(&b, "xor_transform", 35000000, NULL);
    b_add_range(&c, "xor_transform", 250000, NULL);
    b_add_range(&c, "new_op", 1000000, NULL);
    gp_trace *bt = b_done(&b), *ct = b_done(&c);
    gp_diff_opts o;
    opts_quiet(&o);
    gp_diff *d = NULL;
    assert_int_equal(
        gp_diff_compute(gp_traces_const(&bt), 1, gp_traces_const(&ct), 1, &o, &d, NULL), GP_OK);
    const gp_diff_row *r = find_row(d, "matrix_multiply");
    assert_int_equal(r->type, GP_DIFF_REGRESSION);
    assert_int_equal(r->test.method, GP_DIFF_TEST_NONE);
    assert_int_equal(find_row(d, "xor_transform")->type, GP_DIFF_IMPROVEMENT);
    assert_int_equal(find_row(d, "new_op")->type, GP_DIFF_NEW);
    assert_true(d->n_failing_regressions >= 1);
    gp_diff_free(d);
    gp_trace_free(bt);
    gp_trace_free(ct);
}

/* The copy_/clone pattern of HTA's diff pair, built from a real trace (modern_h100_qwen_chat): the
 * base run holds the trace's aten::copy_ and aten::clone calls with their recorded durations; the
 * current run replaces each call by 12 calls of a third of its duration (more calls, shorter
 * each, 4x in total). The verdict must follow the total. */
static void copy_clone_pattern_from_shared_trace(void **state)
{
    const char *shared = getenv("GP_SHARED_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/traces/modern_h100_qwen_chat.json.gz",
             shared ? shared : "../shared");
    if (!gp_test_have_shared_traces()) {
        print_message("skip: %s not found\n", path);
        skip();
    }
    gp_read_opts ro;
    gp_read_opts_init(&ro);
    ro.quiet = true;
    gp_trace *t = NULL;
    gp_error err = {0};
    assert_int_equal(gp_trace_read(path, &ro, &t, &err), GP_OK);
    builder b, c;
    b_init(&b, "base");
    b_init(&c, "current");
    size_t n[2] = {0, 0};
    for (size_t k = 0; k < t->n_tracks; k++)
        for (size_t i = 0; i < t->tracks[k].n_events; i++) {
            const gp_event *ev = &t->tracks[k].events[i];
            const char *nm = gp_trace_str(t, ev->name);
            int which = strcmp(nm, "aten::copy_") == 0   ? 0
                        : strcmp(nm, "aten::clone") == 0 ? 1
                                                         : -1;
            if (ev->kind != GP_EV_CPU_OP || which < 0 || ev->dur < 3)
                continue;
            n[which]++;
            b_add(&b, GP_EV_CPU_OP, nm, ev->dur);
            for (int j = 0; j < 12; j++)
                b_add(&c, GP_EV_CPU_OP, nm, ev->dur / 3);
        }
    gp_trace_free(t);
    assert_true(n[0] > 100 && n[1] > 50);
    gp_trace *bt = b_done(&b), *ct = b_done(&c);
    gp_diff_opts o;
    opts_quiet(&o);
    gp_diff *d = NULL;
    assert_int_equal(
        gp_diff_compute(gp_traces_const(&bt), 1, gp_traces_const(&ct), 1, &o, &d, NULL), GP_OK);
    static const char *const names[] = {"aten::copy_", "aten::clone"};
    for (int w = 0; w < 2; w++) {
        const gp_diff_row *r = find_row(d, names[w]);
        assert_non_null(r);
        assert_true(r->base.calls == (double)n[w] && r->cur.calls == 12.0 * (double)n[w]);
        assert_int_equal(r->type, GP_DIFF_REGRESSION); /* 4x the time in total */
        assert_true(r->delta_pct > 290 && r->delta_pct < 300);
        assert_int_equal(r->calls_dir, GP_DIFF_UP);
        assert_int_equal(r->per_call_dir, GP_DIFF_DOWN); /* each call is faster */
        assert_true(r->per_call.significant);
    }
    gp_diff_free(d);
    gp_trace_free(bt);
    gp_trace_free(ct);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_run_per_side),
        cmocka_unit_test(three_runs_per_side),
        cmocka_unit_test(five_runs_per_side),
        cmocka_unit_test(decision_text_golden),
        cmocka_unit_test(renamed_names_match),
        cmocka_unit_test(text_rows_have_unique_names),
        cmocka_unit_test(seed_workflow),
        cmocka_unit_test(copy_clone_pattern_from_shared_trace),
    };
    return gp_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
