/* Allocation-failure ("torture") test of gp_diff_compute and the renderers: every malloc, calloc
 * and realloc made by gpuprof code is counted through the linker's --wrap, and the run is repeated
 * failing allocation 1, 2, ... N once each. Every run must either succeed or fail cleanly with
 * GP_ENOMEM, never crash; ASan builds also check that nothing leaks on those paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprof/diff.h"

#include "common/fail_alloc.h"

static gp_trace *make_run(uint64_t seed, double scale, int with_new)
{
    gp_trace *t;
    uint32_t gpu, cpu;
    assert_int_equal(gp_trace_create("run", &t), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &gpu), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    /* The current runs rename two kernels (template arguments, instance number): matched by
     * normalised name unless o.normalize merges them first. */
    const char *base_names[] = {"gemm<float, 4>", "softmax_3", "relu", "new_one"};
    const char *cur_names[] = {"gemm<half, 4>", "softmax_5", "relu", "new_one"};
    const char *const *names = with_new ? cur_names : base_names;
    gp_ns clock = 0;
    uint64_t x = seed;
    for (int i = 0; i < 60; i++) {
        int k = i % (with_new ? 4 : 3);
        gp_event ev = {0};
        assert_int_equal(gp_trace_intern(t, names[k], strlen(names[k]), &ev.name), GP_OK);
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        ev.kind = GP_EV_KERNEL;
        ev.track = gpu;
        ev.ts = clock;
        ev.dur = (gp_ns)((1000.0 + (double)(x >> 54)) * (k == 0 ? scale : 1.0));
        clock += ev.dur + 100;
        assert_int_equal(gp_trace_add_event(t, &ev), GP_OK);
    }
    gp_event r = {0};
    assert_int_equal(gp_trace_intern(t, "step", 4, &r.name), GP_OK);
    r.kind = GP_EV_RANGE;
    r.track = cpu;
    r.dur = clock;
    const char *args = "{\"mem_peak_bytes\":4096}";
    assert_int_equal(gp_trace_add_args(t, args, strlen(args), &r.extra), GP_OK);
    assert_int_equal(gp_trace_add_event(t, &r), GP_OK);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    return t;
}

typedef gp_status (*render_fn)(const gp_diff *, const gp_diff_render_opts *, FILE *);

/* One full pass; returns the status of the first failing step (GP_OK if none). */
static gp_status one_pass(gp_trace **base, gp_trace **cur, size_t n, uint32_t normalize)
{
    gp_diff_opts o;
    gp_diff_opts_init(&o);
    o.analyze = false; /* analyze's own failure paths are its module's to test */
    o.normalize = normalize;
    o.bootstrap = 100;
    gp_diff *d = NULL;
    gp_error err = {0};
    gp_status st = gp_diff_compute(gp_traces_const(base), n, gp_traces_const(cur), n, &o, &d, &err);
    if (st != GP_OK)
        return st;
    render_fn fns[] = {gp_diff_render_text, gp_diff_render_json, gp_diff_render_html,
                       gp_diff_render_junit};
    FILE *fp = fopen("/dev/null", "w");
    assert_non_null(fp);
    for (size_t i = 0; i < 4 && st == GP_OK; i++)
        st = fns[i](d, NULL, fp);
    fclose(fp);
    gp_diff_free(d);
    return st;
}

static void every_allocation_failure_is_clean(void **state)
{
    for (int pass = 0; pass < 4; pass++) {
        size_t runs = pass % 2 ? 3 : 1;
        uint32_t norm = pass < 2 ? GP_DIFF_NORM_TEMPLATES | GP_DIFF_NORM_NUMBERS : 0;
        gp_trace *base[3], *cur[3];
        for (size_t r = 0; r < runs; r++) {
            base[r] = make_run(10 + r, 1.0, 0);
            cur[r] = make_run(20 + r, 1.3, 1);
        }
        /* Count the allocations of a clean pass. */
        g_count = 0;
        g_fail_at = -1; /* counting, never equal */
        assert_int_equal(one_pass(base, cur, runs, norm), GP_OK);
        long total = g_count;
        assert_true(total > 10);
        int failed = 0;
        for (long k = 1; k <= total; k++) {
            g_count = 0;
            g_fail_at = k;
            gp_status st = one_pass(base, cur, runs, norm);
            g_fail_at = 0;
            if (st != GP_OK) {
                if (st != GP_ENOMEM)
                    fail_msg("runs %zu, failing allocation %ld: status %d", runs, k, (int)st);
                failed++;
            }
        }
        g_fail_at = 0;
        print_message("runs per side %zu, %s: %ld allocations, %d failure points reported "
                      "ENOMEM\n",
                      runs, norm ? "names merged" : "names matched", total, failed);
        /* Most allocation failures must surface as errors (none is silently swallowed into a
         * wrong result: the renderers' output is not checked here, the statuses are). */
        assert_true(failed > total / 2);
        for (size_t r = 0; r < runs; r++) {
            gp_trace_free(base[r]);
            gp_trace_free(cur[r]);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_allocation_failure_is_clean),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
