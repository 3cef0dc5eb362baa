/* Helpers of the profiler's test programs (tests/profiler): golden files, capturing a print
 * function's output, and the FAKE libcuda.so.1 of tests/fakes/cuda (scripted values: the
 * fake_cuda_* cases test our code, not a GPU). Header-only: each program includes it once, after
 * <cmocka.h>. */
#ifndef GP_TESTS_PROFILER_TEST_UTIL_H
#define GP_TESTS_PROFILER_TEST_UTIL_H

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpuprof/profiler.h"
#include "produce/profiler/cuda_driver.h"

#define GP_TEST_UNUSED __attribute__((unused))

GP_TEST_UNUSED static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = 0;
    fclose(f);
    return s;
}

/* Compares text produced by fn with tests/profiler/golden/<name> (GP_UPDATE_GOLDEN=1 rewrites). */
GP_TEST_UNUSED static void check_golden(const char *name, const char *text)
{
    const char *src = getenv("GP_SOURCE_DIR");
    assert_non_null(src);
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/profiler/golden/%s", src, name);
    if (getenv("GP_UPDATE_GOLDEN")) {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
    }
    char *want = read_all(path);
    assert_non_null(want);
    assert_string_equal(text, want);
    free(want);
}

/* Runs a print function into memory. */
__attribute__((noinline, unused)) static char *capture(gp_status (*fn)(void *, FILE *), void *obj)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(fn(obj, f), GP_OK);
    fclose(f);
    return buf;
}

typedef struct fake_cuda_counts {
    uint64_t records, queries, elapsed, creates, destroys, syncs, mem_get_info;
    int64_t live_events;
} fake_cuda_counts;

static struct {
    void *h;
    void (*reset)(void);
    void (*script)(const double *, size_t);
    void (*not_ready)(int);
    void (*mem)(size_t, size_t);
    void (*pool)(int, uint64_t, uint64_t);
    void (*counts)(fake_cuda_counts *);
} fake;

GP_TEST_UNUSED static int fake_setup(void **state)
{
    const char *path = getenv("GPUPROF_CUDA_LIBRARY");
    if (!path)
        return -1;
    fake.h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!fake.h)
        return -1;
    *(void **)&fake.reset = dlsym(fake.h, "fake_cuda_reset");
    *(void **)&fake.script = dlsym(fake.h, "fake_cuda_script_times");
    *(void **)&fake.not_ready = dlsym(fake.h, "fake_cuda_set_not_ready");
    *(void **)&fake.mem = dlsym(fake.h, "fake_cuda_set_mem");
    *(void **)&fake.pool = dlsym(fake.h, "fake_cuda_set_pool");
    *(void **)&fake.counts = dlsym(fake.h, "fake_cuda_get_counts");
    if (!fake.reset || !fake.script || !fake.counts)
        return -1;
    fake.reset();
    return gp__cuda_reload(path)->status == GP_OK ? 0 : -1;
}

#endif
