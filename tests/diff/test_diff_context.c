/* gpuprof diff's context (gp_diff.side_info, context_note): what each side ran on, and the
 * warnings when the sides ran on different devices / world sizes / ranks / versions, when a side
 * is the ranks of one job, or when few names are on both sides. Traces built in memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "gpuprof/diff.h"
#include "gpuprof/trace.h"

static gp_strid S(gp_trace *t, const char *s)
{
    gp_strid id;
    assert_int_equal(gp_trace_intern(t, s, strlen(s), &id), GP_OK);
    return id;
}

/* A trace of rank `rank` of world_size on device, with kernels k0..k(n-1) (names prefix_i). */
static gp_trace *trace(const char *device, int rank, int world, const char *runtime,
                       const char *prefix, int n)
{
    gp_trace *t;
    assert_int_equal(gp_trace_create("t.json", &t), GP_OK);
    gp_device_props d = {.id = 0, .name = S(t, device)};
    assert_int_equal(gp_trace_add_device(t, &d), GP_OK);
    t->dist.present = true;
    t->dist.rank = rank;
    t->dist.world_size = world;
    t->rank = rank;
    if (runtime)
        assert_int_equal(gp_trace_set_meta(t, "cuda_runtime_version", runtime), GP_OK);
    uint32_t track;
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &track), GP_OK);
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "%s_%d", prefix, i);
        gp_gpu_info gi;
        gp_gpu_info_init(&gi);
        uint32_t extra;
        assert_int_equal(gp_trace_add_gpu_info(t, &gi, &extra), GP_OK);
        gp_event ev = {.ts = 1000 * (i + 1),
                       .dur = 500,
                       .name = S(t, name),
                       .extra = extra,
                       .track = track,
                       .kind = GP_EV_KERNEL};
        assert_int_equal(gp_trace_add_event(t, &ev), GP_OK);
    }
    assert_int_equal(gp_trace_finish(t), GP_OK);
    return t;
}

static gp_diff *diff(gp_trace *const *b, size_t nb, gp_trace *const *c, size_t nc)
{
    gp_diff_opts o;
    gp_diff_opts_init(&o);
    o.analyze = false;
    o.bootstrap = 0;
    gp_diff *d = NULL;
    gp_error err = {0};
    assert_int_equal(gp_diff_compute(gp_traces_const(b), nb, gp_traces_const(c), nc, &o, &d, &err),
                     GP_OK);
    return d;
}

/* A V100 rank 0 of 8 against an A100 rank 1 of 2 running other kernels: every difference is said.
 */
static void different_hardware_is_said(void **state)
{
    (void)state;
    gp_trace *b = trace("Tesla V100-SXM2-32GB", 0, 8, "11080", "a", 6);
    gp_trace *c = trace("NVIDIA A100-SXM4-80GB", 1, 2, "12040", "b", 6);
    gp_diff *d = diff(&b, 1, &c, 1);
    assert_string_equal(d->side_info[0].device, "Tesla V100-SXM2-32GB");
    assert_string_equal(d->side_info[1].device, "NVIDIA A100-SXM4-80GB");
    assert_int_equal(d->side_info[0].world_size, 8);
    assert_string_equal(d->side_info[1].ranks, "1");
    assert_string_equal(d->side_info[1].cuda_runtime, "12040");
    const char *m = d->context_note.msg;
    assert_non_null(strstr(m, "different devices (base Tesla V100-SXM2-32GB, current NVIDIA "
                              "A100-SXM4-80GB)"));
    assert_non_null(strstr(m, "World size differs: base 8, current 2."));
    assert_non_null(strstr(m, "Rank differs: base 0, current 1."));
    assert_non_null(strstr(m, "CUDA runtime differs: base 11080, current 12040."));
    assert_non_null(strstr(m, "Only 0 of 12 names are on both sides"));
    gp_diff_free(d);
    gp_trace_free(b);
    gp_trace_free(c);
}

/* The same setup on both sides: no warning. Ranks 0-3 of one job: said to be ranks, not runs. */
static void same_setup_and_job_ranks(void **state)
{
    (void)state;
    gp_trace *b = trace("NVIDIA H100 80GB HBM3", 0, 4, "12040", "k", 5);
    gp_trace *c = trace("NVIDIA H100 80GB HBM3", 0, 4, "12040", "k", 5);
    gp_diff *d = diff(&b, 1, &c, 1);
    assert_string_equal(d->context_note.msg, "");
    assert_int_equal(d->n_both_names, 5);
    gp_diff_free(d);
    gp_trace *job[4];
    for (int r = 0; r < 4; r++)
        job[r] = trace("NVIDIA H100 80GB HBM3", r, 4, "12040", "k", 5);
    d = diff(job, 4, job, 4);
    assert_true(d->side_info[0].job);
    assert_string_equal(d->side_info[0].ranks, "0-3");
    assert_non_null(strstr(d->context_note.msg, "The base side holds ranks 0-3 of one job, not "
                                                "repeated runs"));
    gp_diff_free(d);
    for (int r = 0; r < 4; r++)
        gp_trace_free(job[r]);
    gp_trace_free(b);
    gp_trace_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(different_hardware_is_said),
        cmocka_unit_test(same_setup_and_job_ranks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
