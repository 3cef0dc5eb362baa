/* Counter rows of the timeline (and the report, which builds the same model) cost memory in
 * proportion to their samples (issue 38: each counter row reserved room for 1,024 samples, 16 KB,
 * so 200,000 counters of one sample each took 1.69 GB): 20,000 one-sample counters take less than
 * 1 KB each beyond the trace, and every sample is kept, in order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprof/report.h"
#include "gpuprof/trace.h"

#include "common/sanitizer.h"

static gp_trace *counters_trace(size_t n, size_t samples_of_first)
{
    gp_trace *t;
    assert_int_equal(gp_trace_create("counters", &t), GP_OK);
    uint32_t cpu;
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    for (size_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "c%zu", i);
        gp_strid id;
        assert_int_equal(gp_trace_intern(t, name, strlen(name), &id), GP_OK);
        for (size_t k = 0; k < (i == 0 ? samples_of_first : 1); k++) {
            gp_counter_sample c = {
                .ts = (gp_ns)(i * 10 + k), .value = (double)k, .series = id, .track = cpu};
            assert_int_equal(gp_trace_add_counter(t, &c), GP_OK);
        }
    }
    assert_int_equal(gp_trace_finish(t), GP_OK);
    return t;
}

static void counter_rows_cost_their_samples(void **state)
{
    (void)state;
    enum { N = 20000, FIRST = 5000 };
    gp_trace *t = counters_trace(N, FIRST);
    struct mallinfo2 m0 = mallinfo2(); /* heap in use, and the large blocks mmap holds */
    size_t before = m0.uordblks + m0.hblkhd;
    gp_timeline *tl = NULL;
    assert_int_equal(gp_timeline_build(gp_traces_const(&t), 1, NULL, &tl, NULL), GP_OK);
    struct mallinfo2 m1 = mallinfo2();
    size_t after = m1.uordblks + m1.hblkhd;
    size_t rows = 0, samples = 0;
    const gp_tl_row *first = NULL;
    for (size_t i = 0; i < tl->n_rows; i++)
        if (tl->rows[i].kind == GP_TL_COUNTER) {
            rows++;
            samples += tl->rows[i].n_samples;
            if (strcmp(tl->rows[i].label, "c0") == 0)
                first = &tl->rows[i];
        }
    assert_int_equal(rows, N);
    assert_int_equal(samples, N - 1 + FIRST);
    assert_non_null(first);
    assert_int_equal(first->n_samples, FIRST); /* grown past every doubling, in order */
    for (size_t k = 0; k < FIRST; k++) {
        assert_int_equal(first->sample_ts[k], (gp_ns)k);
        assert_true(first->sample_val[k] == (double)k);
    }
#if !GP_TEST_ASAN
    double per = (double)(after - before) / N;
    print_message("timeline: %.0f bytes per one-sample counter row\n", per);
    assert_true(per < 1024); /* was about 16 KB */
#else
    (void)before;
    (void)after;
#endif
    gp_timeline_free(tl);
    gp_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(counter_rows_cost_their_samples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
