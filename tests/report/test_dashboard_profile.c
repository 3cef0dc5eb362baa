/* Unit tests for the dashboard of an in-process profile (src/analyze/dashboard_profile.c,
 * src/render/dashboard_profile.c): a profile built here with exact durations and the args the
 * profiler writes (gpu_ns, cpu_ns, transfer_ns, overhead_ns, mem_peak_bytes); the per-operation
 * figures and chart segments must equal them, and the page's section matches a golden. Also the
 * dashboard's two GPU cards (docs/analyses.md, "Terms"): GPU busy and the GPU work sum, each under
 * its name, on a trace where they differ. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprof/analyze.h"
#include "gpuprof/report.h"
#include "gpuprof/summary.h"
#include "gpuprof/trace.h"

#include "report_fixture.h"

/* A range with args (NULL: none). */
static void range(gp_trace *t, uint32_t track, const char *name, gp_ns ts, gp_ns dur,
                  const char *args)
{
    gp_event ev = {0};
    ev.ts = ts;
    ev.dur = dur;
    ev.name = S(t, name);
    ev.track = track;
    ev.kind = GP_EV_RANGE;
    if (args)
        assert_int_equal(gp_trace_add_args(t, args, strlen(args), &ev.extra), GP_OK);
    assert_int_equal(gp_trace_add_event(t, &ev), GP_OK);
}

/* Thread 1: step [0,1000) {mem 4096}
 *             matmul [100,400) {gpu 250, cpu 40, transfer 20, overhead 5, mem 2048}
 *             matmul [500,700) {gpu 150, mem 3072}
 *             load [800,900) {cpu 90}
 * Thread 2: io [0,300)
 * With kernel: a kernel on a GPU stream too (then it is not a profile). */
static gp_trace *make_profile(bool with_kernel)
{
    gp_trace *t;
    uint32_t t1, t2, g;
    assert_int_equal(gp_trace_create("profile", &t), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 100, 1, &t1), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 100, 2, &t2), GP_OK);
    range(t, t1, "step", 0, 1000, "{\"mem_peak_bytes\":4096}");
    range(t, t1, "matmul", 100, 300,
          "{\"device\":\"gpu\",\"gpu_ns\":250,\"cpu_ns\":40,\"transfer_ns\":20,"
          "\"overhead_ns\":5,\"mem_peak_bytes\":2048}");
    range(t, t1, "matmul", 500, 200, "{\"gpu_ns\":150,\"mem_peak_bytes\":3072}");
    range(t, t1, "load", 800, 100, "{\"cpu_ns\":90}");
    range(t, t2, "io", 0, 300, NULL);
    if (with_kernel) {
        assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &g), GP_OK);
        add(t, g, GP_EV_KERNEL, "gemm", 150, 100, 0, 0);
    }
    assert_int_equal(gp_trace_finish(t), GP_OK);
    return t;
}

typedef struct built {
    gp_trace *t;
    gp_summary *s;
    gp_timeline *tl;
    gp_dashboard *d;
} built;

static void build(built *b, bool with_kernel)
{
    b->t = make_profile(with_kernel);
    assert_int_equal(gp_summary_compute(gp_traces_const(&b->t), 1, NULL, &b->s, NULL), GP_OK);
    assert_int_equal(gp_timeline_build(gp_traces_const(&b->t), 1, NULL, &b->tl, NULL), GP_OK);
    assert_int_equal(gp_dashboard_build(&(gp_dashboard_inputs){.traces = gp_traces_const(&b->t),
                                                               .n_traces = 1,
                                                               .summary = b->s,
                                                               .timeline = b->tl,
                                                               .analysis = NULL},
                                        &b->d, NULL),
                     GP_OK);
}

static void unbuild(built *b)
{
    gp_dashboard_free(b->d);
    gp_timeline_free(b->tl);
    gp_summary_free(b->s);
    gp_trace_free(b->t);
}

static char *page(const gp_dashboard *d)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    assert_non_null(fp);
    assert_int_equal(gp_dashboard_render_html(d, "profile", fp), GP_OK);
    fclose(fp);
    return buf;
}

static void per_operation_figures_are_the_ranges(void **state)
{
    (void)state;
    built b;
    build(&b, false);
    const gp_dashboard *d = b.d;
    assert_true(d->is_profile);
    assert_int_equal(d->n_prof_ops, 4);
    /* by total: step 1000, matmul 300 + 200, io 300, load 100 */
    static const char *const names[4] = {"step", "matmul", "io", "load"};
    static const gp_ns total[4] = {1000, 500, 300, 100};
    static const gp_ns self[4] = {1000 - 300 - 200 - 100, 500, 300, 100};
    static const uint64_t calls[4] = {1, 2, 1, 1};
    for (size_t i = 0; i < 4; i++) {
        const gp_dash_prof_op *o = &d->prof_ops[i];
        assert_string_equal(o->name, names[i]);
        assert_int_equal(o->total, total[i]);
        assert_int_equal(o->self, self[i]);
        assert_int_equal(o->calls, calls[i]);
    }
    const gp_dash_prof_op *mm = &d->prof_ops[1];
    assert_true(mm->mean == 250.0);
    assert_int_equal(mm->min, 200);
    assert_int_equal(mm->max, 300);
    assert_int_equal(mm->gpu, 400);
    assert_int_equal(mm->cpu, 40);
    assert_int_equal(mm->transfer, 20);
    assert_int_equal(mm->overhead, 5);
    assert_true(mm->mem_avg == 2560.0);
    assert_true(mm->gpu_util == 400.0 / 500.0);
    assert_int_equal(d->prof_ops[0].gpu, -1);
    assert_true(d->prof_ops[0].mem_avg == 4096.0);
    assert_true(d->prof_ops[2].mem_avg < 0 && d->prof_ops[2].gpu_util < 0);
    assert_int_equal(d->prof_ops[3].cpu, 90);

    /* distribution: one bar, a segment per operation = its self time, adding up to the total */
    assert_int_equal(d->prof_dist.n_parts, 1);
    const gp_dash_part *dp = &d->prof_dist.parts[0];
    assert_int_equal(dp->total, 1300);
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(dp->seg[i], self[i]);
        assert_string_equal(d->prof_dist.seg_names[i], names[i]);
    }

    /* split: GPU, transfer, overhead, CPU, rest; each bar adds up to the wall time */
    static const gp_ns split[4][5] = {
        {0, 0, 0, 1000, 0}, /* nothing measured: CPU is the wall time */
        {400, 20, 5, 40, 35},
        {0, 0, 0, 300, 0},
        {0, 0, 0, 90, 10}, /* cpu_ns 90 of 100 */
    };
    assert_int_equal(d->prof_split.n_parts, 4);
    for (size_t i = 0; i < 4; i++) {
        const gp_dash_part *p = &d->prof_split.parts[i];
        assert_string_equal(p->label, names[i]);
        assert_int_equal(p->total, total[i]);
        for (int k = 0; k < 5; k++)
            assert_int_equal(p->seg[k], split[i][k]);
    }

    /* memory from the ranges: 4096 at 0, 2048 at 100, 3072 at 500 (scaled to the peak) */
    assert_true(d->mem_from_ranges);
    assert_true(d->peak_memory == 4096.0);
    assert_int_equal(d->n_mem, 3);
    assert_true(d->mem_y[0] == 1.0 && d->mem_y[1] == 0.5 && d->mem_y[2] == 0.75);
    assert_true(d->mem_x[0] == 0.0 && d->mem_x[1] < d->mem_x[2]);
    unbuild(&b);
}

static void profile_section_golden(void **state)
{
    (void)state;
    built b;
    build(&b, false);
    char *buf = page(b.d);
    char *from = strstr(buf, "<section id=\"gp-profile\">");
    assert_non_null(from);
    char *to = strstr(from, "</section>\n");
    assert_non_null(to);
    to[strlen("</section>\n")] = 0;
    assert_null(strstr(buf, "gp-mem-na")); /* the memory chart is drawn */
    check_golden("profile_section.html", from);
    free(buf);
    unbuild(&b);
}

/* The sections that cannot apply to a profile (it has no GPU work and no ProfilerStep) are left
 * out instead of saying they are empty; those with data stay. */
static void profile_page_leaves_out_what_cannot_apply(void **state)
{
    (void)state;
    built b;
    build(&b, false);
    assert_true(b.d->is_profile);
    char *buf = page(b.d);
    assert_null(strstr(buf, "gp-steps-section"));
    assert_null(strstr(buf, "No ProfilerStep"));
    assert_null(strstr(buf, "id=\"gp-hta\""));
    assert_null(strstr(buf, "gp-gpu-parts"));
    assert_null(strstr(buf, "CPU active <b>")); /* no CPU ops: the activity figures are 0 */
    assert_non_null(strstr(buf, "id=\"gp-cpu-parts-0\""));
    assert_non_null(strstr(buf, "<h2>Memory over time</h2>"));
    assert_non_null(strstr(buf, "<h2>Timeline</h2>"));
    free(buf);
    unbuild(&b);
}

/* A hostile profile: "op" on three threads, each [0, H) with H = INT64_MAX / 2, whose args are
 * any int64. Self time and the summed args saturate at INT64_MAX; negative args are ignored
 * (transfer_ns, only ever negative, stays "never measured", -1); the page renders. */
static void hostile_sums_saturate(void **state)
{
    (void)state;
    gp_trace *t;
    assert_int_equal(gp_trace_create("hostile profile", &t), GP_OK);
    static const char *const args[3] = {
        "{\"gpu_ns\":9223372036854775807,\"cpu_ns\":-5,\"transfer_ns\":-3,"
        "\"overhead_ns\":9223372036854775807}",
        "{\"gpu_ns\":9223372036854775807,\"cpu_ns\":7,\"overhead_ns\":1}",
        "{\"gpu_ns\":1,\"cpu_ns\":-9223372036854775808}"};
    for (int i = 0; i < 3; i++) {
        uint32_t tr;
        assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 100, 1 + i, &tr), GP_OK);
        range(t, tr, "op", 0, INT64_MAX / 2, args[i]);
    }
    assert_int_equal(gp_trace_finish(t), GP_OK);
    built b = {.t = t};
    assert_int_equal(gp_summary_compute(gp_traces_const(&b.t), 1, NULL, &b.s, NULL), GP_OK);
    assert_int_equal(gp_timeline_build(gp_traces_const(&b.t), 1, NULL, &b.tl, NULL), GP_OK);
    assert_int_equal(gp_dashboard_build(&(gp_dashboard_inputs){.traces = gp_traces_const(&b.t),
                                                               .n_traces = 1,
                                                               .summary = b.s,
                                                               .timeline = b.tl,
                                                               .analysis = NULL},
                                        &b.d, NULL),
                     GP_OK);
    assert_true(b.d->is_profile);
    assert_int_equal(b.d->n_prof_ops, 1);
    const gp_dash_prof_op *o = &b.d->prof_ops[0];
    assert_int_equal(o->calls, 3);
    assert_int_equal(o->total, INT64_MAX);
    assert_int_equal(o->self, INT64_MAX);
    assert_int_equal(o->gpu, INT64_MAX);
    assert_int_equal(o->overhead, INT64_MAX);
    assert_int_equal(o->cpu, 7);
    assert_int_equal(o->transfer, -1);
    char *buf = page(b.d);
    assert_non_null(strstr(buf, "id=\"gp-prof-dist\""));
    free(buf);
    unbuild(&b);
}

/* A trace with GPU work is not a profile: no section, nothing computed. */
static void traces_with_gpu_work_keep_their_dashboard(void **state)
{
    (void)state;
    built b;
    build(&b, true);
    assert_false(b.d->is_profile);
    assert_int_equal(b.d->n_prof_ops, 0);
    assert_false(b.d->mem_from_ranges);
    char *buf = page(b.d);
    assert_null(strstr(buf, "gp-profile"));
    /* a trace keeps every section, with a line that says why one is empty */
    assert_non_null(strstr(buf, "id=\"gp-steps-na\""));
    assert_non_null(strstr(buf, "id=\"gp-hta\""));
    free(buf);
    unbuild(&b);
}

/* The card whose id is id: its value and label, as the page writes them. */
static void assert_card(const char *page, const char *id, const char *value, const char *label)
{
    char want[256];
    snprintf(want, sizeof want,
             "<div class=\"gp-card\" id=\"%s\"><div class=\"gp-card-v\">%s</div>"
             "<div class=\"gp-card-l\">%s</div></div>",
             id, value, label);
    if (!strstr(page, want))
        fail_msg("no card %s", want);
}

/* Stream 7: k1 [0,100); stream 8: k2 [50,150): GPU busy (the union) 150 ns, the GPU work sum
 * (durations added up) 200 ns, more than the 150 ns span. The page shows both, each under its
 * name, and the top list's shares are of the work sum (k1: 100 / 200 = 50 %). Without an analysis
 * only the work sum, which is all the page can know. */
static void gpu_cards_name_busy_and_work_sum(void **state)
{
    (void)state;
    gp_trace *t;
    uint32_t s7, s8;
    assert_int_equal(gp_trace_create("overlap", &t), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &s7), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 8, &s8), GP_OK);
    add(t, s7, GP_EV_KERNEL, "k1", 0, 100, 0, 0);
    add(t, s8, GP_EV_KERNEL, "k2", 50, 100, 0, 0);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    gp_summary *s;
    gp_timeline *tl;
    gp_analysis *a;
    gp_error err;
    assert_int_equal(gp_summary_compute(gp_traces_const(&t), 1, NULL, &s, NULL), GP_OK);
    assert_int_equal(gp_timeline_build(gp_traces_const(&t), 1, NULL, &tl, NULL), GP_OK);
    assert_int_equal(gp_analyze_trace(t, NULL, &a, &err), GP_OK);
    for (int with_analysis = 1; with_analysis >= 0; with_analysis--) {
        gp_dashboard *d;
        gp_dashboard_inputs in = {.traces = gp_traces_const(&t),
                                  .n_traces = 1,
                                  .summary = s,
                                  .timeline = tl,
                                  .analysis = with_analysis ? a : NULL};
        assert_int_equal(gp_dashboard_build(&in, &d, NULL), GP_OK);
        char *buf = page(d);
        if (with_analysis)
            assert_card(buf, "gp-gpu-busy", "150 ns", "GPU busy (union per device)");
        else
            assert_null(strstr(buf, "gp-gpu-busy"));
        assert_card(buf, "gp-gpu-work-sum", "200 ns", "GPU work sum (durations added up)");
        assert_non_null(strstr(buf, "in 1 calls, 50.0% of the GPU work sum</li>"));
        assert_null(strstr(buf, "GPU time"));
        free(buf);
        gp_dashboard_free(d);
    }
    gp_analysis_free(a);
    gp_timeline_free(tl);
    gp_summary_free(s);
    gp_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(per_operation_figures_are_the_ranges),
        cmocka_unit_test(profile_section_golden),
        cmocka_unit_test(profile_page_leaves_out_what_cannot_apply),
        cmocka_unit_test(traces_with_gpu_work_keep_their_dashboard),
        cmocka_unit_test(hostile_sums_saturate),
        cmocka_unit_test(gpu_cards_name_busy_and_work_sum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
