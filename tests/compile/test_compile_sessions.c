/* A compile id is unique only within one dynamo session (docs/compile.md, "Repeated compile ids"):
 * torch._dynamo.reset() restarts the ids at 0/0, and tlparse lists every compilation_metrics record
 * as its own compile. gpuprof starts a new compile when a dynamo_start arrives for an id that has
 * started already, keeps records after compilation_metrics (backward compiles) with their compile,
 * counts and sums every occurrence and labels repeats "0/0 #2". On a hand-built log (figures
 * worked out in the comments) and on the shared simple.log written twice in a row (two sessions).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/shared_traces.h"
#include "gpuprof/compile.h"

static const char prefix[] = "V1206 15:18:20.253000 1500233 torch/_dynamo/x.py:1] ";

typedef struct text {
    char *s;
    size_t len, cap;
} text;

static void put(text *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->s = realloc(t->s, t->cap);
        assert_non_null(t->s);
    }
    memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = '\0';
}

/* One record of kind `body` for compile id f/c. */
static void rec(text *t, int f, int c, const char *body)
{
    char j[2048];
    int n = snprintf(j, sizeof j,
                     "%s{%s, \"frame_id\": %d, \"frame_compile_id\": %d, \"attempt\": 0}\n", prefix,
                     body, f, c);
    put(t, j, (size_t)n);
}

static void start(text *t, int f, int c)
{
    rec(t, f, c, "\"dynamo_start\": {\"stack\": []}");
}

/* compilation_metrics of f/c taking secs seconds. */
static void metrics(text *t, int f, int c, const char *co_name, const char *secs)
{
    char b[1024];
    snprintf(b, sizeof b,
             "\"compilation_metrics\": {\"co_name\": \"%s\", \"co_filename\": \"/x/m.py\", "
             "\"co_firstlineno\": 1, \"entire_frame_compile_time_s\": %s}",
             co_name, secs);
    rec(t, f, c, b);
}

static gp_compile_unit *unit_named(gp_compile_log *log, const char *id)
{
    for (size_t i = 0; i < log->n_units; i++)
        if (strcmp(log->units[i].id, id) == 0)
            return &log->units[i];
    return NULL;
}

/* Session 1: 0/0 (1 s), 1/0 (0.5 s). torch._dynamo.reset(). Session 2: 0/0 (2 s) followed, after
 * its compilation_metrics, by a backward-compile record of 0/0 (bwd_compilation_metrics: stays
 * with 0/0 #2, no new compile), then 0/1 (0.25 s), a recompile of frame 0 in session 2.
 * Expect 4 compiles: 0/0, 1/0, 0/0 #2, 0/1; compile time 1 + 0.5 + 2 + 0.25 = 3.75 s. Frames:
 * frame 0 and 1 of session 1, frame 0 of session 2 (2 compiles, 1 recompile) = 3. Keyed by id
 * alone (the old reader), 0/0 #2 overwrote 0/0: 3 compiles, 2.75 s. */
static void reset_restarts_ids(void **state)
{
    (void)state;
    text t = {0};
    start(&t, 0, 0);
    metrics(&t, 0, 0, "forward", "1.0");
    start(&t, 1, 0);
    metrics(&t, 1, 0, "helper", "0.5");
    start(&t, 0, 0);
    metrics(&t, 0, 0, "forward", "2.0");
    rec(&t, 0, 0, "\"bwd_compilation_metrics\": {\"inductor_compile_time_s\": 0.1}");
    start(&t, 0, 1);
    metrics(&t, 0, 1, "forward", "0.25");
    gp_compile_log *log = NULL;
    gp_error err = {0};
    assert_int_equal(gp_compile_log_read_buffer(t.s, t.len, "t.log", &log, &err), GP_OK);
    assert_int_equal(log->n_units, 4);
    gp_compile_unit *first = unit_named(log, "0/0"), *again = unit_named(log, "0/0 #2");
    assert_non_null(first);
    assert_non_null(again);
    assert_int_equal(first->times.total, 1000000000);
    assert_int_equal(again->times.total, 2000000000);
    assert_int_equal(first->occurrence, 1);
    assert_int_equal(again->occurrence, 2);
    assert_int_equal(first->session, 0);
    assert_int_equal(again->session, 1);
    assert_non_null(unit_named(log, "1/0"));
    gp_compile_unit *re = unit_named(log, "0/1");
    assert_non_null(re);
    assert_int_equal(re->session, 1);
    gp_compile_analysis *a = NULL;
    assert_int_equal(gp_compile_analyze(log, &a), GP_OK);
    assert_int_equal(a->summary.compiles, 4);
    assert_int_equal(a->summary.compile_time, 3750000000);
    assert_int_equal(a->summary.frames, 3);
    assert_int_equal(a->summary.recompiles, 1);
    gp_compile_analysis_free(a);
    gp_compile_log_free(log);
    free(t.s);
}

/* The shared simple.log (one compile, 0/0) written twice, as two sessions of one process would
 * write it: twice the compiles and twice the compile time of one copy, the second labelled
 * "0/0 #2". */
static void shared_log_twice(void **state)
{
    (void)state;
    if (!gp_test_have_shared_traces())
        skip();
    const char *shared = getenv("GP_SHARED_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/compile-logs/simple.log", shared ? shared : "../shared");
    FILE *fp = fopen(path, "rb");
    if (!fp)
        skip();
    text one = {0}, two = {0};
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, fp)) > 0)
        put(&one, buf, n);
    fclose(fp);
    if (one.len && one.s[one.len - 1] != '\n') /* the file ends without a newline */
        put(&one, "\n", 1);
    put(&two, one.s, one.len);
    put(&two, one.s, one.len);
    gp_compile_log *l1 = NULL, *l2 = NULL;
    gp_compile_analysis *a1 = NULL, *a2 = NULL;
    assert_int_equal(gp_compile_log_read_buffer(one.s, one.len, "simple.log", &l1, NULL), GP_OK);
    gp_error err = {0};
    assert_int_equal(gp_compile_log_read_buffer(two.s, two.len, "simple.log", &l2, &err), GP_OK);
    assert_int_equal(gp_compile_analyze(l1, &a1), GP_OK);
    assert_int_equal(gp_compile_analyze(l2, &a2), GP_OK);
    assert_int_equal(l2->warnings_total, l1->warnings_total); /* the copies join cleanly */
    assert_int_equal(a1->summary.compiles, 1);
    assert_int_equal(a2->summary.compiles, 2);
    assert_true(a1->summary.compile_time > 0);
    assert_int_equal(a2->summary.compile_time, 2 * a1->summary.compile_time);
    assert_non_null(unit_named(l2, "0/0"));
    assert_non_null(unit_named(l2, "0/0 #2"));
    gp_compile_analysis_free(a1);
    gp_compile_analysis_free(a2);
    gp_compile_log_free(l1);
    gp_compile_log_free(l2);
    free(one.s);
    free(two.s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reset_restarts_ids),
        cmocka_unit_test(shared_log_twice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
