/* Kernel arguments through `convert` (issue 38 defect 5): read -> write -> read is exact, a 0 of
 * the source is written back (Kineto writes "est. achieved occupancy %": 0 for half the kernels
 * of a real trace), floats are written with the digits the source gave them (not the float's
 * 47.515151977539062), and values beyond a float's or a double's range read back the same. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuprof/trace.h"

#define KERNEL(ts, args)                                                                           \
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": " #ts   \
    ", \"dur\": 1, \"args\": {\"device\": 0, \"stream\": 7, " args "}}"

static const char trace[] = "{\"traceEvents\": ["
    /* Kineto's own figures, and zeros */
    KERNEL(
        10,
        "\"blocks per SM\": 0.909091, \"warps per SM\": 0, "
        "\"est. achieved occupancy %\": 0, \"memory bandwidth (GB/s)\": 0") "," KERNEL(20,
                                                                                       "\"blocks "
                                                                                       "per SM\": "
                                                                                       "2, \"warps "
                                                                                       "per SM\": "
                                                                                       "5.818182, "
                                                                                       "\"est. "
                                                                                       "achieved "
                                                                                       "occupancy "
                                                                                       "%\": "
                                                                                       "47.515152") ","
    /* absent (none of the four) */
    KERNEL(30, "\"registers per thread\": 32") ","
    /* out of range: beyond a float (the fuzz finding), beyond a double */
    KERNEL(40, "\"blocks per SM\": -1e300, \"est. achieved occupancy %\": 1e39, "
               "\"memory bandwidth (GB/s)\": 1e400") "]}";

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

/* The k-th kernel (in time order: the four share one stream). */
static const gp_gpu_info *kernel_at(const gp_trace *t, size_t k)
{
    for (size_t i = 0; i < t->n_tracks; i++)
        for (size_t j = 0; j < t->tracks[i].n_events; j++) {
            const gp_event *ev = &t->tracks[i].events[j];
            if (ev->kind == GP_EV_KERNEL && k-- == 0)
                return gp_event_gpu_info(t, ev);
        }
    fail_msg("no kernel %zu", k);
    return NULL;
}

/* The args object of the k-th kernel of a written trace's text, without its closing brace. */
static char *args_of(const char *text, int k)
{
    const char *at = text;
    for (int i = 0; i <= k; i++) {
        at = strstr(at, "\"cat\":\"kernel\"");
        assert_non_null(at);
        at++;
    }
    const char *a = strstr(at, "\"args\":{");
    assert_non_null(a);
    const char *end = strchr(a, '}');
    assert_non_null(end);
    char *out = calloc(1, (size_t)(end - a) + 1);
    assert_non_null(out);
    memcpy(out, a, (size_t)(end - a));
    return out;
}

static void kernel_args_round_trip(void **state)
{
    (void)state;
    gp_trace *t = NULL, *back = NULL, *again = NULL;
    gp_error err = {0};
    assert_int_equal(gp_trace_read_buffer(trace, strlen(trace), "args.json", NULL, &t, &err),
                     GP_OK);
    char path[256], path2[256];
    snprintf(path, sizeof path, "%s/gp-args-%d.json", P_tmpdir, (int)getpid());
    snprintf(path2, sizeof path2, "%s/gp-args-%d-2.json", P_tmpdir, (int)getpid());
    assert_int_equal(gp_trace_write_chrome(t, path, &err), GP_OK);
    assert_int_equal(gp_trace_read(path, NULL, &back, &err), GP_OK);
    gp_error why = {0};
    if (!gp_trace_equal(t, back, &why))
        fail_msg("read -> write -> read differs: %s", why.msg);
    /* and once more: the written text is a fixed point */
    assert_int_equal(gp_trace_write_chrome(back, path2, &err), GP_OK);
    assert_int_equal(gp_trace_read(path2, NULL, &again, &err), GP_OK);
    assert_true(gp_trace_equal(back, again, &why));
    char *text = slurp(path), *text2 = slurp(path2);
    assert_string_equal(text, text2);

    /* zeros are kept and written back; absent stays absent */
    const gp_gpu_info *z = kernel_at(back, 0);
    assert_true(z->warps_per_sm == 0 && z->occupancy_pct == 0 && z->bandwidth_gbps == 0);
    char *a10 = args_of(text, 0), *a20 = args_of(text, 1), *a30 = args_of(text, 2),
         *a40 = args_of(text, 3);
    assert_non_null(strstr(a10, "\"blocks per SM\":0.909091,\"warps per SM\":0,"
                                "\"est. achieved occupancy %\":0,\"memory bandwidth (GB/s)\":0"));
    assert_null(strstr(a30, "occupancy"));
    assert_null(strstr(a30, "per SM"));
    assert_null(strstr(a30, "bandwidth"));
    /* the source's digits, not the float's */
    assert_non_null(
        strstr(a20, "\"warps per SM\":5.818182,\"est. achieved occupancy %\":47.515152"));
    assert_null(strstr(text, "47.51515197"));
    /* out of range: finite, saturated, the same after the round trip */
    const gp_gpu_info *o = kernel_at(back, 3);
    assert_true(isfinite(o->occupancy_pct) && o->occupancy_pct > 3.4e38f);
    assert_true(isfinite(o->blocks_per_sm) && o->blocks_per_sm < -3.4e38f);
    assert_true(isfinite(o->bandwidth_gbps) && o->bandwidth_gbps > 1.7e308);
    assert_null(strstr(a40, "null"));
    free(a10);
    free(a20);
    free(a30);
    free(a40);
    free(text);
    free(text2);
    unlink(path);
    unlink(path2);
    gp_trace_free(t);
    gp_trace_free(back);
    gp_trace_free(again);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kernel_args_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
