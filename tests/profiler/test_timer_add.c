/* Kernel-timer samples measured outside the timer set (gp_cuda_timer_add: the elapsed times of
 * torch.cuda.Event / CuPy events the Python KernelTimer reads) and the public renderer of timer
 * rows (gp_timer_stats_render_text). The fake_cuda_* case runs against the FAKE libcuda.so.1 of
 * tests/fakes/cuda (scripted event times): it tests our code, not a GPU. The others run with no
 * driver at all (a library path that does not exist). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <unistd.h>

#include "gpuprof/profiler.h"
#include "profiler/profiler_test_util.h"

static gp_profiler *new_profiler(void)
{
    gp_profiler *p = NULL;
    assert_int_equal(gp_profiler_create(NULL, &p), GP_OK);
    return p;
}

static gp_status timer_print_cb(void *t, FILE *f)
{
    return gp_cuda_timer_print(t, f);
}

typedef struct rows_arg {
    const gp_timer_stats *rows;
    size_t n;
    const char *why;
} rows_arg;

static gp_status render_cb(void *arg, FILE *f)
{
    const rows_arg *a = arg;
    return gp_timer_stats_render_text(a->rows, a->n, a->why, f);
}

static bool near(double a, double b)
{
    return a > b - 1e-9 && a < b + 1e-9;
}

/* Asserts timer name's calls, total and mean (ms); returns its min / max through s. */
static void check_stats(gp_cuda_timer *t, const char *name, uint64_t calls, double total_ms,
                        gp_timer_stats *s)
{
    assert_int_equal(gp_cuda_timer_stats(t, name, s), GP_OK);
    assert_int_equal(s->calls, calls);
    assert_int_equal(s->pending, 0);
    assert_true(near(s->total_ms, total_ms));
    assert_true(near(s->mean_ms, total_ms / (double)calls));
}

/* Added samples and the set's own event pairs are one table: a name timed both ways has the calls
 * of both; toggling the profiler (which drops open pairs) keeps the samples. */
static void fake_cuda_added_samples_join_own_events(void **state)
{
    (void)state;
    fake.reset();
    gp_profiler *p = new_profiler();
    gp_cuda_timer *t = gp_profiler_cuda_timer(p);
    const double times[] = {0.0, 1.5};
    fake.script(times, 2);
    assert_int_equal(gp_cuda_timer_start(t, "gemm", NULL), GP_OK);
    assert_int_equal(gp_cuda_timer_stop(t, "gemm"), GP_OK);
    assert_int_equal(gp_cuda_timer_add(t, "gemm", 500000), GP_OK);
    assert_int_equal(gp_cuda_timer_start(t, "open", NULL), GP_OK);
    gp_profiler_enable(p, false);
    gp_profiler_enable(p, true);
    gp_timer_stats s;
    check_stats(t, "gemm", 2, 2.0, &s);
    assert_true(near(s.min_ms, 0.5) && near(s.max_ms, 1.5));
    assert_int_equal(gp_cuda_timer_stats(t, "open", &s), GP_ENOENT); /* dropped */
    gp_profiler_destroy(p);
}

/* Without a driver: nothing added is the status line (as before); added samples are the
 * statistics, the fixed-width report (golden) and the export's cuda_timers. */
static void added_samples_without_driver_are_reported(void **state)
{
    (void)state;
    assert_int_equal(gp__cuda_reload("/nonexistent/libcuda.so.1")->status, GP_ENODRIVER);
    gp_profiler *p = new_profiler();
    gp_cuda_timer *t = gp_profiler_cuda_timer(p);
    gp_timer_stats *rows = NULL;
    size_t n = 0;
    assert_int_equal(gp_cuda_timer_all_stats(t, &rows, &n), GP_ENODRIVER);
    char *text = capture(timer_print_cb, t);
    assert_non_null(strstr(text, "status: no CUDA driver"));
    free(text);

    assert_int_equal(gp_cuda_timer_add(t, "torch_gemm", 1500000), GP_OK);
    assert_int_equal(gp_cuda_timer_add(t, "torch_gemm", 500000), GP_OK);
    assert_int_equal(gp_cuda_timer_add(t, "cupy_copy", 3000000), GP_OK);
    assert_int_equal(gp_cuda_timer_add(t, "bad", -1), GP_EINVAL);
    assert_int_equal(gp_cuda_timer_add(t, NULL, 1), GP_EINVAL);
    assert_int_equal(gp_cuda_timer_add(NULL, "x", 1), GP_EINVAL);
    gp_profiler_enable(p, false); /* the caller decides: a sample read after a disable counts */
    assert_int_equal(gp_cuda_timer_add(t, "zero", 0), GP_OK);
    gp_profiler_enable(p, true);

    gp_timer_stats s;
    check_stats(t, "torch_gemm", 2, 2.0, &s);
    check_stats(t, "zero", 1, 0.0, &s);
    assert_int_equal(gp_cuda_timer_stats(t, "bad", &s), GP_ENOENT);
    assert_int_equal(gp_cuda_timer_all_stats(t, &rows, &n), GP_OK);
    assert_int_equal(n, 3);
    assert_string_equal(rows[0].name, "cupy_copy"); /* by total time */
    assert_string_equal(rows[1].name, "torch_gemm");
    assert_string_equal(rows[2].name, "zero");
    text = capture(timer_print_cb, t);
    check_golden("timer_added_samples.txt", text);
    /* The public renderer of rows prints what gp_cuda_timer_print prints for the same rows. */
    rows_arg a = {rows, n, NULL};
    char *rendered = capture(render_cb, &a);
    assert_string_equal(rendered, text);
    free(rendered);
    free(text);
    free(rows);

    char path[] = "/tmp/gpuprof-timer-add-XXXXXX.json";
    int fd = mkstemps(path, 5);
    assert_true(fd >= 0);
    close(fd);
    gp_error err = {0};
    assert_int_equal(gp_profiler_export_json(p, path, &err), GP_OK);
    char *json = read_all(path);
    unlink(path);
    assert_non_null(json);
    assert_non_null(
        strstr(json, "\"timers\":[{\"name\":\"cupy_copy\",\"calls\":1,\"total_ms\":3,"));
    assert_non_null(strstr(json, "{\"name\":\"torch_gemm\",\"calls\":2,\"total_ms\":2,"));
    free(json);

    gp_cuda_timer_reset(t);
    assert_int_equal(gp_cuda_timer_all_stats(t, &rows, &n), GP_ENODRIVER);
    gp_profiler_destroy(p);
}

static void render_text_empty_why_and_errors(void **state)
{
    (void)state;
    rows_arg none = {NULL, 0, NULL};
    char *text = capture(render_cb, &none);
    assert_non_null(strstr(text, "(no timers recorded)\n"));
    assert_non_null(strstr(text, "\nTOTAL                                    0        0.000\n"));
    free(text);
    rows_arg why = {NULL, 0, "no CUDA driver (test)"};
    text = capture(render_cb, &why);
    assert_non_null(strstr(text, "GPU KERNEL TIMING REPORT\n"));
    assert_non_null(strstr(text, "status: no CUDA driver (test)\n"));
    assert_null(strstr(text, "TOTAL"));
    free(text);
    gp_timer_stats pend = {.name = "late", .calls = 1, .total_ms = 2, .pending = 3};
    rows_arg p1 = {&pend, 1, NULL};
    text = capture(render_cb, &p1);
    assert_non_null(strstr(text, "pending: 3 timer(s) not complete on the GPU after 2 s\n"));
    free(text);
    assert_int_equal(gp_timer_stats_render_text(NULL, 1, NULL, stdout), GP_EINVAL);
    assert_int_equal(gp_timer_stats_render_text(&pend, 1, NULL, NULL), GP_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fake_cuda_added_samples_join_own_events),
        cmocka_unit_test(render_text_empty_why_and_errors),
        /* last: it unloads the fake driver */
        cmocka_unit_test(added_samples_without_driver_are_reported),
    };
    return cmocka_run_group_tests(tests, fake_setup, NULL);
}
