/* Gzip input inflated on a second thread (core/input.c, issue 37) reads the same as inflated on the
 * reading thread: every shared .json.gz trace gives an equal model both ways (GP_INFLATE_THREAD=1
 * and =0), a large generated trace too, and its corruptions (a flipped byte, a truncation, a syntax
 * error early in the text while the inflater is still running) fail with the same status and
 * message both ways. The gzip error cases of test_reader_limits also run with the thread forced
 * (tests/trace/CMakeLists.txt). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "common/shared_traces.h"
#include "core/input.h"
#include "gpuprof/trace.h"

/* Reads path with the inflater thread forced on (1) or off (0). */
static gp_status read_with(const char *path, int threaded, gp_trace **t, gp_error *err)
{
    setenv("GP_INFLATE_THREAD", threaded ? "1" : "0", 1);
    gp_read_opts o;
    gp_read_opts_init(&o);
    o.quiet = true;
    o.keep_op_shapes = true;
    *t = NULL;
    gp_status st = gp_trace_read(path, &o, t, err);
    unsetenv("GP_INFLATE_THREAD");
    return st;
}

/* Both ways: the same status; equal models when read, the same message when not. */
static void assert_same_both_ways(const char *path)
{
    gp_trace *a = NULL, *b = NULL;
    gp_error ea = {0}, eb = {0};
    gp_status sa = read_with(path, 1, &a, &ea);
    gp_status sb = read_with(path, 0, &b, &eb);
    assert_int_equal(sa, sb);
    if (sa == GP_OK) {
        gp_error why = {0};
        if (!gp_trace_equal(a, b, &why))
            fail_msg("%s: the models differ: %s", path, why.msg);
        assert_int_equal(a->stats.gzip_trailing_bytes, b->stats.gzip_trailing_bytes);
    } else {
        assert_string_equal(ea.msg, eb.msg);
    }
    gp_trace_free(a);
    gp_trace_free(b);
}

static void shared_traces_alike(void **state)
{
    (void)state;
    if (!gp_test_have_shared_traces())
        skip();
    const char *shared = getenv("GP_SHARED_DIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/traces", shared ? shared : "../shared");
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 8 || strcmp(e->d_name + l - 8, ".json.gz") != 0)
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        assert_same_both_ways(path);
        n++;
    }
    closedir(d);
    assert_true(n >= 10);
}

/* A generated trace of `events` kernels with pseudo-random names (so the compressed file is well
 * over GP__INFLATE_THREAD_MIN and many ring blocks long), gzip-compressed at path; `bad_at` > 0
 * writes a syntax error into event number bad_at. Returns the compressed size. */
static long write_big_gz(const char *path, int events, int bad_at)
{
    gzFile gz = gzopen(path, "wb1");
    assert_non_null(gz);
    gzputs(gz, "{\"traceEvents\":[");
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < events; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        gzprintf(gz,
                 "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k_%016llx\",\"pid\":0,\"tid\":7,"
                 "\"ts\":%d.%03d,\"dur\":1.5,\"args\":{\"device\":0,\"stream\":7,"
                 "\"correlation\":%d}}",
                 i ? "," : "", (unsigned long long)x, 1000 + 3 * i, (int)(x % 1000),
                 i == bad_at ? -1 : i);
        if (i == bad_at && bad_at > 0)
            gzputs(gz, "]]");
    }
    gzputs(gz, "]}");
    assert_int_equal(gzclose(gz), Z_OK);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    return size;
}

static void big_trace_and_its_corruptions_alike(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "/tmp/gp-test-inflate.%d.json.gz", (int)getpid());
    long size = write_big_gz(path, 60000, 0);
    assert_true(size >= (long)GP__INFLATE_THREAD_MIN);
    assert_same_both_ways(path);
    gp_trace *t = NULL;
    gp_error err = {0};
    assert_int_equal(read_with(path, 1, &t, &err), GP_OK);
    assert_int_equal(t->stats.by_kind[GP_EV_KERNEL], 60000);
    gp_trace_free(t);

    FILE *f = fopen(path, "rb");
    unsigned char *gz = malloc((size_t)size);
    assert_non_null(gz);
    assert_int_equal(fread(gz, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    /* A byte flipped in the middle, near the end, in the CRC; the file cut short. */
    const long flips[] = {size / 2, size - 100, size - 8};
    for (size_t i = 0; i < sizeof flips / sizeof *flips; i++) {
        gz[flips[i]] ^= 0x5a;
        f = fopen(path, "wb");
        fwrite(gz, 1, (size_t)size, f);
        fclose(f);
        gz[flips[i]] ^= 0x5a;
        assert_same_both_ways(path);
        assert_int_not_equal(read_with(path, 1, &t, &err), GP_OK);
    }
    f = fopen(path, "wb");
    fwrite(gz, 1, (size_t)size / 3, f);
    fclose(f);
    assert_same_both_ways(path);
    free(gz);

    /* A syntax error early: the read stops while the inflater may still be filling its ring. */
    write_big_gz(path, 60000, 10);
    assert_same_both_ways(path);
    assert_int_equal(read_with(path, 1, &t, &err), GP_EPARSE);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shared_traces_alike),
        cmocka_unit_test(big_trace_and_its_corruptions_alike),
    };
    return gp_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
