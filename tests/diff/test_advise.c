/* Tests of gpuprof advise's profile rules (src/analyze/advise_profile.c) and renderers
 * (src/render/advise_render.c): a profile built here with exact durations and args on which every
 * rule fires once, with its current / estimated times checked to the nanosecond; each threshold
 * just missed; the thresholds as options; the findings in gp_analysis (what `analyze` and `report`
 * show); a profile written by the in-process profiler itself; the bundled example profiles; golden
 * text and JSON (GP_UPDATE_GOLDEN=1 rewrites them). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/golden.h"
#include "core/clock.h"
#include "diff/diff_builder.h"
#include "gpuprof/advise.h"
#include "gpuprof/profiler.h"
#include "render/render_internal.h"

#define MS_NS 1000000LL

/* The issue's profile, back to back on one thread (1 µs gaps, b_add_range):
 *   small_gpu_op  200 x 0.5 ms, device gpu, 200 MB moved -> routing_to_cpu, batching, caching,
 *                                                            memory_heavy_op
 *   repeated_op    20 x 20 ms, cpu                        -> batching
 *   cpu_heavy       3 x 30 ms, cpu, 50 MB moved           -> routing_to_gpu
 *   step            2 x (5 children "leaf" of 1 ms)       -> nothing (a loop body; leaf runs 5)
 * GPU ranges cover 100 ms of a span of about 600 ms      -> gpu_underutilized */
static gp_trace *issue_profile(void)
{
    builder b;
    b_init(&b, "issue_profile");
    for (int i = 0; i < 200; i++)
        b_add_range(&b, "small_gpu_op", MS_NS / 2, "{\"device\":\"gpu\",\"bytes\":200000000}");
    for (int i = 0; i < 20; i++)
        b_add_range(&b, "repeated_op", 20 * MS_NS, "{\"device\":\"cpu\"}");
    for (int i = 0; i < 3; i++)
        b_add_range(&b, "cpu_heavy", 30 * MS_NS, "{\"device\":\"cpu\",\"bytes\":50000000}");
    for (int s = 0; s < 2; s++) {
        gp_ns start = b.clock;
        b.clock += 1000;
        for (int k = 0; k < 5; k++)
            b_add_range(&b, "leaf", MS_NS, NULL);
        gp_ns end = b.clock;
        gp_ns saved = b.clock;
        b.clock = start;
        b_add_range(&b, "step", end - start, NULL);
        b.clock = saved;
    }
    return b_done(&b);
}

static gp_analysis *analyse(const gp_trace *t, const gp_advise_opts *ao)
{
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    o.advise = ao;
    gp_analysis *a = NULL;
    gp_error err = {0};
    assert_int_equal(gp_analyze_trace(t, &o, &a, &err), GP_OK);
    return a;
}

static const gp_finding *find(const gp_analysis *a, const char *rule, const char *op)
{
    for (size_t i = 0; i < a->n_findings; i++) {
        const gp_finding *f = &a->findings[i];
        const char *fop = gp_finding_object_of(f, GP_OBJ_OP);
        if (strcmp(f->rule, rule) == 0 && (op ? fop && strcmp(fop, op) == 0 : fop == NULL))
            return f;
    }
    return NULL;
}

static void every_rule_fires(void **state)
{
    gp_trace *t = issue_profile();
    gp_analysis *a = analyse(t, NULL);
    const gp_finding *f = find(a, "routing_to_cpu", "small_gpu_op");
    assert_non_null(f);
    assert_int_equal(f->type, GP_SUG_ROUTING);
    assert_int_equal(f->current_ns, 100 * MS_NS);
    assert_int_equal(f->estimated_ns, 50 * MS_NS);
    assert_int_equal(f->gain_ns, 50 * MS_NS);
    assert_non_null(gp__finding_expected(f)); /* render's words for the rule */
    f = find(a, "batching", "small_gpu_op");
    assert_non_null(f);
    assert_int_equal(f->type, GP_SUG_BATCHING);
    assert_int_equal(f->estimated_ns, 70 * MS_NS);
    f = find(a, "caching", "small_gpu_op");
    assert_non_null(f);
    assert_int_equal(f->type, GP_SUG_CACHING);
    assert_int_equal(f->estimated_ns, 50 * MS_NS);
    f = find(a, "memory_heavy_op", "small_gpu_op");
    assert_non_null(f);
    assert_int_equal(f->type, GP_SUG_MEMORY);
    assert_int_equal(f->priority, GP_PRIO_MEDIUM); /* 200 MB: under 1 GB */
    assert_int_equal(f->estimated_ns, f->current_ns);
    f = find(a, "batching", "repeated_op");
    assert_non_null(f);
    assert_int_equal(f->current_ns, 400 * MS_NS);
    assert_int_equal(f->estimated_ns, 280 * MS_NS);
    assert_null(find(a, "caching", "repeated_op"));        /* 20 ms calls are not small */
    assert_null(find(a, "routing_to_gpu", "repeated_op")); /* moves no memory */
    f = find(a, "routing_to_gpu", "cpu_heavy");
    assert_non_null(f);
    assert_int_equal(f->current_ns, 90 * MS_NS);
    assert_int_equal(f->estimated_ns, 18 * MS_NS);
    assert_null(find(a, "memory_heavy_op", "cpu_heavy")); /* 50 MB */
    assert_null(find(a, "batching", "step"));             /* has ranges inside */
    assert_null(find(a, "batching", "leaf"));             /* 5 in a row */
    f = find(a, "gpu_underutilized", NULL);
    assert_non_null(f);
    assert_int_equal(f->type, GP_SUG_PARALLELIZATION);
    gp_ns s0, s1;
    gp_trace_span(t, &s0, &s1);
    assert_int_equal(f->current_ns, s1 - s0);
    assert_int_equal(f->estimated_ns, 200 * MS_NS); /* 100 ms busy at 50 % */
    /* a ratio in base units, not a percentage */
    assert_string_equal(f->evidence[0].name, "gpu_utilization");
    assert_int_equal(f->evidence[0].unit, GP_FU_RATIO);
    assert_true(fabs(f->evidence[0].value - 100.0 * MS_NS / (double)(s1 - s0)) < 1e-12);
    /* 7 profile findings, sorted by gain. */
    size_t n = 0;
    for (size_t i = 0; i < a->n_findings; i++) {
        n += gp_finding_object_of(&a->findings[i], GP_OBJ_OP) != NULL ||
             strcmp(a->findings[i].rule, "gpu_underutilized") == 0;
        if (i)
            assert_true(a->findings[i - 1].gain_ns >= a->findings[i].gain_ns);
    }
    assert_int_equal(n, 7);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* Each threshold just missed: nothing fires. */
static void thresholds_just_missed(void **state)
{
    builder b;
    b_init(&b, "quiet_profile");
    for (int i = 0; i < 99; i++) /* 99 < 100 calls; each exactly 1 ms: not under 1 ms */
        b_add_range(&b, i % 2 ? "gpu_a" : "gpu_b", MS_NS, "{\"device\":\"gpu\"}");
    for (int i = 0; i < 9; i++) /* 9 in a row */
        b_add_range(&b, "nine", 2 * MS_NS, NULL);
    b_add_range(&b, "cpu_10ms", 10 * MS_NS, "{\"bytes\":100000000}"); /* 10 ms, 100 MB: not over */
    gp_trace *t = b_done(&b);
    gp_analysis *a = analyse(t, NULL);
    for (size_t i = 0; i < a->n_findings; i++)
        fail_msg("unexpected finding %s on %s", a->findings[i].rule,
                 gp_finding_object_of(&a->findings[i], GP_OBJ_OP)
                     ? gp_finding_object_of(&a->findings[i], GP_OBJ_OP)
                     : "-");
    gp_analysis_free(a);
    /* Lower thresholds make them fire. */
    gp_advise_opts o;
    gp_advise_opts_init(&o);
    o.gpu_op_max_ms = 1.5;
    o.batch_min_calls = 9;
    o.cache_min_calls = 40;
    o.cache_max_ms = 1.5;
    o.memory_min_mb = 99;
    o.cpu_op_min_ms = 9;
    o.util_max_pct = 90; /* GPU ranges cover 99 of about 128 ms */
    a = analyse(t, &o);
    assert_non_null(find(a, "routing_to_cpu", "gpu_a"));
    assert_non_null(find(a, "caching", "gpu_a"));
    assert_non_null(find(a, "batching", "nine"));
    assert_non_null(find(a, "routing_to_gpu", "cpu_10ms"));
    assert_non_null(find(a, "memory_heavy_op", "cpu_10ms"));
    assert_non_null(find(a, "gpu_underutilized", NULL));
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* A hostile profile: "op" 10 times in a row of 2^59 ns on one thread (total 5.8e18: total * 3
 * passes INT64_MAX) and once more on two other threads for 2^62 ns each, with gpu_ns args of
 * INT64_MAX: the op's total saturates at INT64_MAX (so does its gpu_ns) and batching estimates
 * 70 % of it without overflowing (UBSan aborts the sanitizer build). */
static void hostile_totals_saturate(void **state)
{
    (void)state;
    const gp_ns big = (gp_ns)1 << 59, huge = (gp_ns)1 << 62;
    builder b;
    b_init(&b, "hostile_profile");
    for (int i = 0; i < 10; i++)
        b_add_range(&b, "op", big, NULL);
    for (int i = 0; i < 2; i++) {
        gp_event ev = {.ts = 0, .dur = huge, .kind = GP_EV_RANGE};
        assert_int_equal(gp_trace_track(b.t, GP_TRACK_CPU_THREAD, 100, 102 + i, &ev.track), GP_OK);
        assert_int_equal(gp_trace_intern(b.t, "op", 2, &ev.name), GP_OK);
        const char *args = "{\"gpu_ns\":9223372036854775807}";
        assert_int_equal(gp_trace_add_args(b.t, args, strlen(args), &ev.extra), GP_OK);
        assert_int_equal(gp_trace_add_event(b.t, &ev), GP_OK);
    }
    gp_trace *t = b_done(&b);
    gp_analysis *a = analyse(t, NULL);
    const gp_finding *f = find(a, "batching", "op");
    assert_non_null(f);
    assert_int_equal(f->current_ns, INT64_MAX);
    /* INT64_MAX - INT64_MAX * 3 / 10 (2767011611056432742) */
    assert_int_equal(f->estimated_ns, 6456360425798343065);
    gp_analysis_free(a);
    gp_trace_free(t);
}

typedef gp_status (*advise_fn)(const gp_analysis *, const gp_advise_render_opts *, FILE *);

/* The output of fn as a string (the caller frees it). */
static char *render(const gp_analysis *a, advise_fn fn, gp_priority min, const char *source,
                    size_t *len)
{
    gp_advise_render_opts ro = {.min_priority = min, .source = source};
    char *buf = NULL;
    FILE *fp = open_memstream(&buf, len);
    assert_non_null(fp);
    assert_int_equal(fn(a, &ro, fp), GP_OK);
    fclose(fp);
    return buf;
}

static void render_both(const gp_analysis *a, const char *source, const char *txt, const char *json)
{
    size_t len;
    char *buf = render(a, gp_advise_render_text, GP_PRIO_LOW, source, &len);
    gp_test_check_golden(txt, buf, len);
    free(buf);
    buf = render(a, gp_advise_render_json, GP_PRIO_LOW, source, &len);
    gp_test_check_golden(json, buf, len);
    free(buf);
}

static void goldens_and_priority_filter(void **state)
{
    gp_trace *t = issue_profile();
    gp_analysis *a = analyse(t, NULL);
    render_both(a, "issue_profile", "tests/diff/golden/advise_issue.txt",
                "tests/diff/golden/advise_issue.json");
    /* --priority high: only critical and high are listed. */
    size_t len = 0;
    char *buf = render(a, gp_advise_render_text, GP_PRIO_HIGH, NULL, &len);
    assert_null(strstr(buf, "[medium/"));
    assert_null(strstr(buf, "[low/"));
    assert_non_null(strstr(buf, "of priority high or higher"));
    assert_non_null(strstr(buf, "not evaluated: algorithm"));
    free(buf);
    /* analyze's own text shows the same findings. */
    FILE *fp = open_memstream(&buf, &len);
    assert_non_null(fp);
    assert_int_equal(gp_analysis_render_text(a, GP_AT_FINDINGS, fp), GP_OK);
    fclose(fp);
    assert_non_null(strstr(buf, "[medium/routing] job: small_gpu_op runs on the GPU"));
    assert_non_null(strstr(buf, "repeated_op is called 20 times in a row"));
    free(buf);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* The bundled example profiles: 40 training steps of interleaved phases; no profile rule fires
 * (no op is repeated back to back, none is tagged gpu, none moves memory). */
static void bundled_profiles(void **state)
{
    const char *src = getenv("GP_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/examples/profiles/current.json", src ? src : ".");
    gp_trace *t = NULL;
    gp_error err = {0};
    assert_int_equal(gp_trace_read(path, NULL, &t, &err), GP_OK);
    gp_analysis *a = analyse(t, NULL);
    render_both(a, "examples/profiles/current.json", "tests/diff/golden/advise_bundled.txt",
                "tests/diff/golden/advise_bundled.json");
    assert_int_equal(a->n_findings, 0);
    gp_analysis_free(a);
    gp_trace_free(t);
}

/* A profile written by the in-process profiler: 150 tiny GPU-tagged ranges in a row. */
static void profiler_written_profile(void **state)
{
    gp_profiler *p = NULL;
    assert_int_equal(gp_profiler_create(NULL, &p), GP_OK);
    gp_range_opts ro = {.device = GP_DEVICE_GPU, .bytes = 1 << 20};
    for (int i = 0; i < 150; i++) {
        gp_range_begin(p, "tiny_gpu_op", &ro);
        int64_t end = gp__clock_ns() + 20000;
        while (gp__clock_ns() < end) {
        }
        gp_range_end(p);
    }
    char dir[] = "/tmp/gpuprof-advise-test.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/p.json", dir);
    gp_error err = {0};
    assert_int_equal(gp_profiler_export_json(p, path, &err), GP_OK);
    gp_profiler_destroy(p);
    gp_trace *t = NULL;
    assert_int_equal(gp_trace_read(path, NULL, &t, &err), GP_OK);
    gp_analysis *a = analyse(t, NULL);
    assert_non_null(find(a, "routing_to_cpu", "tiny_gpu_op"));
    assert_non_null(find(a, "batching", "tiny_gpu_op"));
    assert_non_null(find(a, "caching", "tiny_gpu_op"));
    assert_null(find(a, "memory_heavy_op", "tiny_gpu_op")); /* 1 MiB */
    gp_analysis_free(a);
    gp_trace_free(t);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_rule_fires),        cmocka_unit_test(thresholds_just_missed),
        cmocka_unit_test(hostile_totals_saturate), cmocka_unit_test(goldens_and_priority_filter),
        cmocka_unit_test(bundled_profiles),        cmocka_unit_test(profiler_written_profile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
