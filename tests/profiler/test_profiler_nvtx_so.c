/* Integration test of libgpuprof_nvtx.so: a child process annotated with NVTX (no gpuprof code
 * of its own) runs with NVTX_INJECTION64_PATH pointing at the library; at its exit the library
 * writes the JSON profile, which the parent reads back with the trace reader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

#include "gpuprof/trace.h"

static size_t count_named(const gp_trace *t, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n_tracks; i++)
        for (size_t j = 0; j < t->tracks[i].n_events; j++)
            if (strcmp(gp_trace_str(t, t->tracks[i].events[j].name), name) == 0)
                n++;
    return n;
}

static void child_work(void)
{
    for (int i = 0; i < 3; i++) {
        nvtxRangePushA("so_outer");
        nvtxRangePushA("so_inner");
        nvtxRangePop();
        nvtxRangePop();
    }
    nvtxRangeId_t id = nvtxRangeStartA("so_span");
    nvtxRangeEnd(id);
}

static void nvtx_so_writes_profile_at_exit(void **state)
{
    const char *so = getenv("GP_NVTX_SO");
    assert_non_null(so);
    char out[] = "/tmp/gp_nvtx_soXXXXXX";
    int fd = mkstemp(out);
    assert_true(fd >= 0);
    close(fd);
    unlink(out);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("NVTX_INJECTION64_PATH", so, 1);
        setenv("GPUPROF_OUTPUT", out, 1);
        child_work();
        exit(0); /* atexit: the library writes the profile */
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    gp_trace *t = NULL;
    gp_error err;
    assert_int_equal(gp_trace_read(out, NULL, &t, &err), GP_OK);
    assert_int_equal(count_named(t, "so_outer"), 3);
    assert_int_equal(count_named(t, "so_inner"), 3);
    assert_int_equal(count_named(t, "so_span"), 1);
    bool meta = false;
    for (size_t i = 0; i < t->n_meta; i++)
        meta |= strcmp(gp_trace_str(t, t->meta[i].key), "gpuprof_profile") == 0;
    assert_true(meta);
    gp_trace_free(t);
    unlink(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nvtx_so_writes_profile_at_exit),
    };
    return cmocka_run_group_tests_name("profiler_nvtx_so", tests, NULL, NULL);
}
