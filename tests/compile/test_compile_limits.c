/* Hostile compile logs (issue 38): a gzip bomb of one huge line fails with GP_ELIMIT naming the
 * file and the line after holding at most the reader's line limit (64 MiB), while a long but
 * legal line and a bomb of blank lines read with memory bounded by what is kept. The bombs are
 * generated here (deflated as they are made), never stored. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "gpuprof/compile.h"

static const char prefix[] = "V1206 15:18:20.253000 1500233 torch/_dynamo/x.py:1] ";

/* A gzip file being written: bytes are deflated as they are appended. */
typedef struct gzout {
    gzFile gz;
    char path[256];
} gzout;

static void gz_open(gzout *g, const char *tag)
{
    snprintf(g->path, sizeof g->path, "%s/gp-clog-%s-%d.log.gz", P_tmpdir, tag, (int)getpid());
    g->gz = gzopen(g->path, "wb1");
    assert_non_null(g->gz);
}

static void gz_put(gzout *g, const char *s, size_t n)
{
    assert_int_equal(gzwrite(g->gz, s, (unsigned)n), (int)n);
}

/* n bytes of c, in 1 MiB pieces. */
static void gz_fill(gzout *g, char c, size_t n)
{
    static char piece[1 << 20];
    memset(piece, c, sizeof piece);
    for (; n > 0;) {
        size_t k = n < sizeof piece ? n : sizeof piece;
        gz_put(g, piece, k);
        n -= k;
    }
}

static void gz_close(gzout *g)
{
    assert_int_equal(gzclose(g->gz), Z_OK);
}

/* A valid record before and after whatever the test puts between. */
static const char rec[] = "{\"dynamo_start\": {\"stack\": []}, \"frame_id\": 0, "
                          "\"frame_compile_id\": 0, \"attempt\": 0}\n";

static void gz_record(gzout *g)
{
    gz_put(g, prefix, strlen(prefix));
    gz_put(g, rec, strlen(rec));
}

static long peak_rss_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024;
}

/* One line of 96 MiB (a JSON string of 'a's) in a ~100 KB .log.gz: GP_ELIMIT at line 2 with the
 * file's name, before the reader holds more than the limit. */
static void one_line_bomb_is_refused(void **state)
{
    (void)state;
    gzout g;
    gz_open(&g, "bomb");
    gz_record(&g);
    gz_put(&g, prefix, strlen(prefix));
    gz_put(&g, "{\"str\": [\"", 10);
    gz_fill(&g, 'a', (size_t)96 << 20);
    gz_put(&g, "\", 0]}\n", 7);
    gz_record(&g);
    gz_close(&g);
    gp_compile_log *log = NULL;
    gp_error err = {0};
    gp_status st = gp_compile_log_read(g.path, NULL, &log, &err);
    assert_int_equal(st, GP_ELIMIT);
    assert_null(log);
    assert_non_null(strstr(err.msg, g.path));
    assert_non_null(strstr(err.msg, "line 2"));
    assert_non_null(strstr(err.msg, "64 MiB"));
    /* The buffer stops at 64 MiB (a realloc may hold 32 + 64 MiB for a moment). */
    assert_true(peak_rss_mib() < 160);
    assert_int_equal(gp_status_exit_code(st), 1); /* the CLI maps it to 2 (test_compile_cli.sh) */
    unlink(g.path);
}

/* 256 MiB of blank lines between two records: read (blank lines are dropped as they stream by),
 * memory bounded by one chunk, not by the decompressed size. */
static void blank_line_bomb_streams(void **state)
{
    (void)state;
    gzout g;
    gz_open(&g, "blank");
    gz_record(&g);
    gz_fill(&g, '\n', (size_t)256 << 20);
    gz_record(&g);
    gz_close(&g);
    long before = peak_rss_mib();
    gp_compile_log *log = NULL;
    gp_error err = {0};
    assert_int_equal(gp_compile_log_read(g.path, NULL, &log, &err), GP_OK);
    assert_int_equal(log->stats.bytes, ((uint64_t)256 << 20) + 2 * (strlen(prefix) + strlen(rec)));
    assert_true(peak_rss_mib() - before < 64);
    gp_compile_log_free(log);
    unlink(g.path);
}

/* ---- scaling: 10x the compile units costs at most 15x the time (a ratio, measured here) ---- */

/* A log of n compile units (distinct frames, attempt 0 and 1, no function name: every unit is
 * one that takes a name from its compile). */
static char *units_log(size_t n, size_t *len)
{
    size_t cap = n * 2 * 160 + 1;
    char *s = malloc(cap);
    assert_non_null(s);
    size_t at = 0;
    for (size_t i = 0; i < n; i++)
        at += (size_t)snprintf(s + at, cap - at,
                               "%s{\"dynamo_start\": {\"stack\": []}, \"frame_id\": %zu, "
                               "\"frame_compile_id\": 0, \"attempt\": %zu}\n",
                               prefix, i / 2, i % 2);
    *len = at;
    return s;
}

static double read_seconds(const char *data, size_t len, size_t want_units)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    gp_compile_log *log = NULL;
    gp_error err = {0};
    assert_int_equal(gp_compile_log_read_buffer(data, len, "units.log", &log, &err), GP_OK);
    clock_gettime(CLOCK_MONOTONIC, &b);
    assert_int_equal(log->n_units, want_units);
    gp_compile_log_free(log);
    return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
}

/* The best of three runs at each size. */
static double best_of_3(size_t n)
{
    size_t len;
    char *data = units_log(n, &len);
    double best = 1e9;
    for (int i = 0; i < 3; i++) {
        double t = read_seconds(data, len, n);
        best = t < best ? t : best;
    }
    free(data);
    return best;
}

/* A quadratic cost gives a ratio near 100; a busy machine can push a linear one past 15 once,
 * so a ratio over 15 is measured again (three times at most) before it fails. */
static void units_scale_linearly(void **state)
{
    (void)state;
    double small = 0, large = 0;
    for (int attempt = 0; attempt < 3; attempt++) {
        small = best_of_3(4000);
        large = best_of_3(40000);
        print_message("compile log read: 4,000 units %.4f s, 40,000 units %.4f s, ratio %.1f\n",
                      small, large, large / small);
        if (large <= 15 * small)
            break;
    }
    assert_true(large <= 15 * small);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(blank_line_bomb_streams),
        cmocka_unit_test(one_line_bomb_is_refused),
        cmocka_unit_test(units_scale_linearly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
