/* Unit tests of the timeline's collectives (gp__timeline_collectives, src/analyze/timeline_coll.c,
 * run by gp_timeline_build for several traces) and their place in the page's data. Hand-built
 * traces: every figure derived in the comment above its test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "report_fixture.h"

#include "render/render_internal.h"

#define US 1000 /* ns */

/* Adds a kernel at [ts, ts + dur) on stream 7 of device 0 of t (no collective args: NCCL kernels
 * are matched by kernel order). */
static void kern(gp_trace *t, const char *name, gp_ns ts, gp_ns dur)
{
    uint32_t track, extra;
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &track), GP_OK);
    gp_gpu_info gi;
    gp_gpu_info_init(&gi);
    gi.device = 0;
    gi.stream = 7;
    assert_int_equal(gp_trace_add_gpu_info(t, &gi, &extra), GP_OK);
    static int64_t corr = 1; /* a kernel without a correlation is no collective's member */
    gp_event ev = {.ts = ts,
                   .dur = dur,
                   .correlation = corr++,
                   .name = S(t, name),
                   .extra = extra,
                   .track = track,
                   .kind = GP_EV_KERNEL};
    assert_int_equal(gp_trace_add_event(t, &ev), GP_OK);
}

/* Two ranks, each: a gemm, an AllReduce, a gemm, a SendRecv. Rank 0's AllReduce [1000, 1030) us,
 * rank 1's [1010, 1030) us: one collective (latency 20 us, start skew 10 us), the first of group
 * "all"; the SendRecvs the second. Each rank's stream row marks its kernels 1 and 3 (events in
 * time order) with collectives 1 and 2, the gemms with 0. */
static void members_are_marked_on_every_rank(void **state)
{
    (void)state;
    gp_trace *t[2];
    for (int r = 0; r < 2; r++) {
        char name[16];
        snprintf(name, sizeof name, "rank%d", r);
        assert_int_equal(gp_trace_create(name, &t[r]), GP_OK);
        t[r]->rank = r;
        t[r]->dist.present = true;
        t[r]->dist.rank = r;
        kern(t[r], "gemm", 500 * US, 100 * US);
        kern(t[r], "ncclKernel_AllReduce_RING_LL_Sum_float", (1000 + r * 10) * US,
             (30 - r * 10) * US);
        kern(t[r], "gemm", 1500 * US, 100 * US);
        kern(t[r], "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8", 2000 * US, 50 * US);
        assert_int_equal(gp_trace_finish(t[r]), GP_OK);
    }
    gp_timeline *tl = NULL;
    assert_int_equal(gp_timeline_build(gp_traces_const(t), 2, NULL, &tl, NULL), GP_OK);
    assert_int_equal(tl->n_colls, 2);
    assert_string_equal(tl->colls[0].group, "all");
    assert_string_equal(tl->colls[0].name, "allreduce");
    assert_int_equal(tl->colls[0].n_members, 2);
    assert_int_equal(tl->colls[0].latency, 20 * US);
    assert_int_equal(tl->colls[0].start_skew, 10 * US);
    int rows = 0;
    for (size_t i = 0; i < tl->n_rows; i++) {
        const gp_tl_row *row = &tl->rows[i];
        if (row->kind != GP_TL_GPU)
            continue;
        rows++;
        assert_non_null(row->coll);
        assert_int_equal(row->coll[0], 0);
        assert_int_equal(row->coll[1], 1);
        assert_int_equal(row->coll[2], 0);
        assert_int_equal(row->coll[3], 2);
    }
    assert_int_equal(rows, 2);
    /* the page's data: the members by event number, the collectives' figures */
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    assert_non_null(fp);
    assert_int_equal(gp__timeline_data_json(tl, fp), GP_OK);
    fclose(fp);
    assert_non_null(strstr(buf, "\"cl\":[1,1,3,2]"));
    assert_non_null(strstr(buf, "\"colls\":[[\"allreduce\",\"all\",0,2,20000,10000,1],"));
    free(buf);
    gp_timeline_free(tl);
    /* one trace: no matching, no marks */
    assert_int_equal(gp_timeline_build(gp_traces_const(t), 1, NULL, &tl, NULL), GP_OK);
    assert_int_equal(tl->n_colls, 0);
    for (size_t i = 0; i < tl->n_rows; i++)
        assert_null(tl->rows[i].coll);
    fp = open_memstream(&buf, &len);
    assert_non_null(fp);
    assert_int_equal(gp__timeline_data_json(tl, fp), GP_OK);
    fclose(fp);
    assert_null(strstr(buf, "\"colls\""));
    free(buf);
    gp_timeline_free(tl);
    gp_trace_free(t[0]);
    gp_trace_free(t[1]);
}

int main(void)
{
    (void)add; /* the fixture's: these kernels need their gp_gpu_info (kern) */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(members_are_marked_on_every_rank),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
