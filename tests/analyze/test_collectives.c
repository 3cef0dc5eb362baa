/* Collectives across ranks (gpuprof/collectives.h) on jobs built in memory: TraceLens's worked
 * example (../shared/reference/collectives.md §10, figures from running TraceLens), a straggler
 * injected at a known collective, clock offsets, and bad input (a rank with fewer collectives,
 * members that disagree, no metadata, two files claiming one rank); and the reader's
 * process-group args, read and written back. */
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

#include "gpuprof/analyze.h"
#include "gpuprof/collectives.h"
#include "gpuprof/trace.h"
#include "render/render_internal.h"

#define US 1000 /* ns */

static gp_strid S(gp_trace *t, const char *s)
{
    gp_strid id;
    assert_int_equal(gp_trace_intern(t, s, strlen(s), &id), GP_OK);
    return id;
}

/* What a collective kernel carries: its args (NULL / -1 when absent). */
typedef struct kargs {
    const char *coll, *pg, *pg_ranks, *dtype;
    int64_t in, out;
    int32_t gs;
} kargs;

static const kargs NO_ARGS = {NULL, NULL, NULL, NULL, -1, -1, -1};

/* Adds a kernel named name at [ts, ts + dur) ns on stream 7 of t, with args a. */
static void kern(gp_trace *t, const char *name, gp_ns ts, gp_ns dur, kargs a)
{
    static int64_t corr = 1;
    uint32_t track, extra;
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &track), GP_OK);
    gp_gpu_info gi;
    gp_gpu_info_init(&gi);
    gi.device = 0;
    gi.stream = 7;
    gp_gpu_ext x;
    gp_gpu_ext_init(&x);
    x.collective = a.coll ? S(t, a.coll) : 0;
    x.pg_name = a.pg ? S(t, a.pg) : 0;
    x.pg_ranks = a.pg_ranks ? S(t, a.pg_ranks) : 0;
    x.dtype = a.dtype ? S(t, a.dtype) : 0;
    x.in_msg_nelems = a.in;
    x.out_msg_nelems = a.out;
    x.group_size = a.gs;
    assert_int_equal(gp_trace_add_gpu_ext(t, &x, &gi.ext), GP_OK);
    assert_int_equal(gp_trace_add_gpu_info(t, &gi, &extra), GP_OK);
    gp_event ev = {.ts = ts,
                   .dur = dur,
                   .correlation = corr++,
                   .name = S(t, name),
                   .extra = extra,
                   .track = track,
                   .kind = GP_EV_KERNEL};
    assert_int_equal(gp_trace_add_event(t, &ev), GP_OK);
}

/* A job of n empty traces, rank i = i (distributedInfo present). */
static gp_job *job_new(size_t n)
{
    gp_job *job = calloc(1, sizeof *job);
    assert_non_null(job);
    job->ranks = calloc(n, sizeof *job->ranks);
    assert_non_null(job->ranks);
    for (size_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "rank%zu.json", i);
        assert_int_equal(gp_trace_create(name, &job->ranks[i]), GP_OK);
        job->ranks[i]->rank = (int32_t)i;
        job->ranks[i]->dist.present = true;
        job->ranks[i]->dist.rank = (int32_t)i;
        job->n_ranks++;
    }
    return job;
}

static gp_collectives *analyze(gp_job *job, bool align)
{
    for (size_t i = 0; i < job->n_ranks; i++)
        assert_int_equal(gp_trace_finish(job->ranks[i]), GP_OK);
    gp_coll_opts o;
    gp_coll_opts_init(&o);
    o.align_clocks = align;
    gp_collectives *c = NULL;
    gp_error err = {0};
    assert_int_equal(gp_collectives_analyze(job, &o, &c, &err), GP_OK);
    return c;
}

static const gp_coll_member *member(const gp_collective *c, int32_t rank)
{
    for (size_t i = 0; i < c->n_members; i++)
        if (c->members[i].rank == rank)
            return &c->members[i];
    fail_msg("rank %d is not a member", rank);
    return NULL;
}

/* collectives.md §10: 4 ranks, PG "0"; an allreduce, an _allgather_base, then rank 0 sends and
 * rank 1 receives. Every expected figure is TraceLens's (its GB/s are GiB/s: ours are 10^9). */
static gp_job *worked_example(void)
{
    gp_job *job = job_new(4);
    const gp_ns s1[4] = {1000, 1010, 1040, 1005}, d1[4] = {62, 51, 21, 56};
    const gp_ns s2[4] = {2000, 2000, 2003, 2008}, d2[4] = {40, 40, 37, 30};
    kargs ar = {"allreduce", "0", "[0, 1, 2, 3]", "Float", 262144, 262144, 4};
    kargs ag = {"_allgather_base", "0", "[0, 1, 2, 3]", "BFloat16", 131072, 524288, 4};
    for (int r = 0; r < 4; r++) {
        kern(job->ranks[r], "ncclKernel_AllReduce_RING_LL_Sum_float", s1[r] * US, d1[r] * US, ar);
        kern(job->ranks[r], "ncclKernel_AllGather_RING_LL_Sum_bf16", s2[r] * US, d2[r] * US, ag);
    }
    kargs send = {"send", "0", "[0, 1, 2, 3]", "Float", 100, 100, 4};
    kargs recv = {"recv", "0", "[0, 1, 2, 3]", "Float", 100, 100, 4};
    kern(job->ranks[0], "ncclKernel_SendRecv", 3000 * US, 10 * US, send);
    kern(job->ranks[1], "ncclKernel_SendRecv", 3000 * US, 12 * US, recv);
    return job;
}

static void tracelens_worked_example(void **state)
{
    (void)state;
    gp_job *job = worked_example();
    gp_collectives *c = analyze(job, true);
    assert_false(c->by_order);
    assert_false(c->aligned);
    assert_int_equal(c->n_colls, 3);
    const gp_collective *ar = &c->colls[0], *ag = &c->colls[1], *p2p = &c->colls[2];
    assert_string_equal(ar->group, "0");
    assert_int_equal(ar->type, GP_COLL_ALLREDUCE);
    assert_int_equal(ar->latency, 21 * US);
    const gp_ns w1[4] = {40, 30, 0, 35}, w2[4] = {8, 8, 5, 0};
    for (int r = 0; r < 4; r++) {
        assert_int_equal(member(ar, r)->wait, w1[r] * US);
        assert_int_equal(member(ag, r)->wait, w2[r] * US);
    }
    assert_int_equal(ar->start_skew, 40 * US);
    assert_int_equal(ar->first_rank, 0);
    assert_true(fabs(ar->avg_wait - 26.25 * US) < 1e-6);
    assert_int_equal(ar->end_skew, 1 * US);
    assert_int_equal(ar->bytes, 1048576);
    const double gib = 1073741824.0 / 1e9; /* TraceLens GiB/s -> GB/s */
    assert_true(fabs(ar->algo_gbps - 46.502976 * gib) < 1e-4);
    assert_true(fabs(ar->bus_gbps - 69.754464 * gib) < 1e-4);
    assert_int_equal(ag->type, GP_COLL_ALLGATHER);
    assert_int_equal(ag->latency, 30 * US);
    assert_int_equal(ag->start_skew, 8 * US);
    assert_int_equal(ag->first_rank, 1); /* tie of ranks 0 and 1: TraceLens names the higher */
    assert_true(fabs(ag->avg_wait - 5.25 * US) < 1e-6);
    assert_int_equal(ag->end_skew, 2 * US);
    assert_int_equal(ag->bytes, 1048576); /* Out for allgather */
    assert_true(fabs(ag->bus_gbps - 24.414062 * gib) < 1e-4);
    /* the send/recv pair: matched apart, not a synchronising collective, not doubted */
    assert_int_equal(p2p->type, GP_COLL_SENDRECV);
    assert_int_equal(p2p->n_members, 2);
    assert_false(p2p->implicit_sync);
    assert_int_equal(p2p->doubt, GP_COLL_OK);
    /* straggler_summary: totals 48, 38, 5, 35 us; last once each for ranks 2 and 3 */
    const gp_ns total[4] = {48, 38, 5, 35}, comm[4] = {112, 103, 58, 86};
    const uint64_t last[4] = {0, 0, 1, 1}, first[4] = {1, 1, 0, 0};
    assert_int_equal(c->n_ranks, 4);
    assert_int_equal(c->implicit_sync, 2);
    for (int r = 0; r < 4; r++) {
        assert_int_equal(c->ranks[r].wait_total, total[r] * US);
        assert_int_equal(c->ranks[r].arrived_last, last[r]);
        assert_int_equal(c->ranks[r].arrived_first, first[r]);
        assert_int_equal(c->ranks[r].comm_time, comm[r] * US);
    }
    /* rank 2 made the others wait 40 + 30 + 35 us, rank 3 8 + 8 + 5 us */
    assert_int_equal(c->ranks[2].caused_total, 105 * US);
    assert_int_equal(c->ranks[3].caused_total, 21 * US);
    assert_int_equal(c->straggler, 2);
    /* the summary: allgather (30 us) before allreduce (21 us); p2p listed too */
    assert_int_equal(c->n_summary, 3);
    assert_string_equal(c->summary[0].name, "_allgather_base");
    assert_string_equal(c->summary[1].name, "allreduce");
    assert_string_equal(c->note.msg, "");
    gp_collectives_free(c);
    gp_job_free(job);
}

/* 4 ranks, 10 allreduces; arrival jitter of 0-4 us; rank 2 starts collective 6 500 us late.
 * The others wait for it 3 x 500 us plus their jitter differences there. */
static gp_job *straggler_job(int late_rank, int late_at, gp_ns late, gp_ns rank1_clock)
{
    gp_job *job = job_new(4);
    kargs ar = {"allreduce", "0", "[0, 1, 2, 3]", "Float", 1 << 20, 1 << 20, 4};
    for (int k = 0; k < 10; k++) {
        gp_ns t0 = (gp_ns)(k + 1) * 1000 * US, lat = 100 * US;
        gp_ns start[4], last = 0;
        for (int r = 0; r < 4; r++) {
            start[r] =
                t0 + ((r * 7 + k * 3) % 5) * US + (r == late_rank && k == late_at ? late : 0);
            last = start[r] > last ? start[r] : last;
        }
        for (int r = 0; r < 4; r++) /* every rank ends latency after the last arrival */
            kern(job->ranks[r], "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                 start[r] + (r == 1 ? rank1_clock : 0), last + lat - start[r], ar);
    }
    return job;
}

static void straggler_injected(void **state)
{
    (void)state;
    gp_job *job = straggler_job(2, 6, 500 * US, 0);
    gp_collectives *c = analyze(job, true);
    assert_int_equal(c->n_colls, 10);
    assert_int_equal(c->straggler, 2);
    const gp_collective *k = &c->colls[6];
    assert_int_equal(k->last_rank, 2);
    assert_int_equal(k->latency, 100 * US);
    gp_ns sum = 0;
    for (size_t i = 0; i < k->n_members; i++)
        sum += k->members[i].wait;
    assert_int_equal(sum, 1499 * US); /* (502-3) + (502-0) + (502-4): jitter 3, 0, 2, 4 us */
    assert_int_equal(member(k, 2)->wait, 0);
    assert_int_equal(member(k, 2)->arrival, 3);
    assert_true(c->ranks[2].caused_total >= sum);
    for (int r = 0; r < 4; r++)
        if (r != 2)
            assert_true(c->ranks[r].caused_total < c->ranks[2].caused_total / 10);
    /* bus bandwidth: 4 MiB in 100 us, x 2(n-1)/n = 1.5 */
    assert_true(fabs(k->bus_gbps - 4194304.0 / 100000.0 * 1.5) < 1e-9);
    gp_collectives_free(c);
    gp_job_free(job);
}

/* Rank 1's clock runs 2 ms ahead: its ends are consistently 2 ms late. Aligned, the figures are
 * those of the same job without the offset; the note gives the offset. */
static void clock_offset_aligned(void **state)
{
    (void)state;
    gp_job *ref = straggler_job(2, 6, 500 * US, 0);
    gp_job *job = straggler_job(2, 6, 500 * US, 2000 * US);
    gp_collectives *a = analyze(ref, true), *b = analyze(job, true), *raw = analyze(job, false);
    assert_false(a->aligned);
    assert_true(b->aligned);
    assert_int_equal(b->ranks[1].clock_offset, 2000 * US);
    assert_non_null(strstr(b->note.msg, "Clocks aligned"));
    assert_non_null(strstr(b->note.msg, "rank 1 +2000.0 us"));
    for (size_t i = 0; i < a->n_colls; i++) {
        assert_int_equal(a->colls[i].start_skew, b->colls[i].start_skew);
        assert_int_equal(a->colls[i].end_skew, b->colls[i].end_skew);
    }
    assert_int_equal(a->straggler, b->straggler);
    /* without alignment rank 1 looks like the straggler of every collective */
    assert_int_equal(raw->straggler, 1);
    assert_string_equal(raw->note.msg, "");
    gp_collectives_free(a);
    gp_collectives_free(b);
    gp_collectives_free(raw);
    gp_job_free(ref);
    gp_job_free(job);
}

/* Rank 3 crashed after 7 of 10 collectives: positions 7-9 lack it, are doubted and stay out of
 * the straggler table; the note names the rank. */
static void rank_with_fewer_collectives(void **state)
{
    (void)state;
    gp_job *job = job_new(4);
    kargs ar = {"allreduce", "0", "[0, 1, 2, 3]", "Float", 1024, 1024, 4};
    for (int k = 0; k < 10; k++)
        for (int r = 0; r < 4; r++)
            if (r != 3 || k < 7)
                kern(job->ranks[r], "ncclKernel_AllReduce", (k + 1) * 1000 * US + r * US, 50 * US,
                     ar);
    gp_collectives *c = analyze(job, true);
    assert_int_equal(c->n_colls, 10);
    for (int k = 0; k < 10; k++)
        assert_int_equal(c->colls[k].doubt, k < 7 ? GP_COLL_OK : GP_COLL_INCOMPLETE);
    assert_int_equal(c->implicit_sync, 7);
    assert_int_equal(c->ranks[0].collectives, 7);
    assert_non_null(strstr(c->note.msg, "rank 3 has 7 collectives, another rank 10"));
    assert_int_equal(c->summary[0].count, 7);
    gp_collectives_free(c);
    gp_job_free(job);
}

/* Rank 1 ran a different-sized allreduce at position 2: from there on the group is not trusted. */
static void members_disagree(void **state)
{
    (void)state;
    gp_job *job = job_new(2);
    for (int k = 0; k < 5; k++)
        for (int r = 0; r < 2; r++) {
            kargs ar = {"allreduce", "0", "[0, 1]", "Float", 1024, 1024, 2};
            if (r == 1 && k == 2)
                ar.in = ar.out = 2048;
            kern(job->ranks[r], "ncclKernel_AllReduce", (k + 1) * 1000 * US, 50 * US, ar);
        }
    gp_collectives *c = analyze(job, true);
    for (int k = 0; k < 5; k++)
        assert_int_equal(c->colls[k].doubt, k < 2 ? GP_COLL_OK : GP_COLL_MISMATCH);
    assert_int_equal(c->implicit_sync, 2);
    assert_non_null(strstr(c->note.msg, "Group 0, collective 2: rank 1"));
    gp_collectives_free(c);
    gp_job_free(job);
}

/* No metadata at all (2023 traces): matched by kernel order in group "all", classes from the
 * kernel names, no size hence no bandwidth. */
static void no_metadata_by_order(void **state)
{
    (void)state;
    gp_job *job = job_new(2);
    for (int r = 0; r < 2; r++) {
        kern(job->ranks[r], "ncclKernel_AllReduce_RING_LL_Sum_float", (1000 + r * 10) * US,
             (30 - r * 10) * US, NO_ARGS);
        kern(job->ranks[r], "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8", (2000 + r * 100) * US,
             (105 - r * 100) * US, NO_ARGS);
    }
    gp_collectives *c = analyze(job, true);
    assert_true(c->by_order);
    assert_int_equal(c->n_colls, 2);
    assert_string_equal(c->colls[0].group, "all");
    assert_int_equal(c->colls[0].type, GP_COLL_ALLREDUCE);
    assert_int_equal(c->colls[0].latency, 20 * US);
    assert_int_equal(c->colls[0].bytes, -1);
    assert_true(isnan(c->colls[0].bus_gbps));
    /* the SendRecv on both ranks ended together (at 2105): taken as synchronising, said */
    assert_int_equal(c->colls[1].type, GP_COLL_SENDRECV);
    assert_true(c->colls[1].sync_from_ends);
    assert_int_equal(c->implicit_sync, 2);
    assert_non_null(strstr(c->note.msg, "taken as synchronising"));
    gp_collectives_free(c);
    gp_job_free(job);
    /* a third rank without any collective kernel: every collective lacks it, and it is said */
    job = job_new(3);
    for (int r = 0; r < 2; r++)
        kern(job->ranks[r], "ncclKernel_AllReduce", 1000 * US, 20 * US, NO_ARGS);
    c = analyze(job, true);
    assert_int_equal(c->colls[0].doubt, GP_COLL_INCOMPLETE);
    assert_non_null(strstr(c->note.msg, "rank 2 has 0 collectives, another rank 1"));
    gp_collectives_free(c);
    gp_job_free(job);
}

/* Two files claim rank 0 (the job reader gave the second rank 1 from file order): neither is
 * matched; the note names both files. */
static void two_files_claim_one_rank(void **state)
{
    (void)state;
    gp_job *job = job_new(3);
    job->ranks[1]->dist.rank = 0;
    job->ranks[1]->rank_from_file_order = true;
    kargs ar = {"allreduce", "0", "[0, 1, 2]", "Float", 1024, 1024, 3};
    for (int r = 0; r < 3; r++)
        kern(job->ranks[r], "ncclKernel_AllReduce", (1000 + r) * US, 50 * US, ar);
    gp_collectives *c = analyze(job, true);
    assert_int_equal(c->n_ranks, 1);
    assert_int_equal(c->ranks[0].rank, 2);
    assert_non_null(strstr(c->note.msg, "rank0.json and rank1.json both claim rank 0"));
    /* the one rank left is short of the group's 3: not trusted */
    assert_int_equal(c->colls[0].doubt, GP_COLL_INCOMPLETE);
    assert_int_equal(c->implicit_sync, 0);
    assert_int_equal(c->straggler, -1);
    gp_collectives_free(c);
    gp_job_free(job);
}

/* The analysis of a job carries the collectives; a job of one rank none. */
static void analysis_carries_collectives(void **state)
{
    (void)state;
    gp_job *job = worked_example();
    for (size_t i = 0; i < job->n_ranks; i++)
        assert_int_equal(gp_trace_finish(job->ranks[i]), GP_OK);
    gp_analysis *a = NULL;
    gp_error err = {0};
    assert_int_equal(gp_analyze_job(job, NULL, &a, &err), GP_OK);
    assert_non_null(a->collectives);
    assert_int_equal(a->collectives->n_colls, 3);
    unsigned bits = 0;
    assert_int_equal(gp_analysis_table_parse("collectives", &bits), GP_OK);
    assert_int_equal(bits, GP_AT_COLLECTIVES);
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    assert_int_equal(gp_analysis_render_csv(a, GP_AT_COLLECTIVES, fp), GP_OK);
    fclose(fp);
    assert_non_null(strstr(buf, "\n\"0\",0,\"allreduce\",allreduce,1,\"Float\",262144,262144,4,"
                                "1048576,4,21.000,40.000,1.000,26.250,0,2,49.9322,74.8983,,"));
    free(buf);
    gp_analysis_free(a);
    gp_analysis *one = NULL;
    assert_int_equal(gp_analyze_trace(job->ranks[0], NULL, &one, &err), GP_OK);
    assert_null(one->collectives);
    gp_analysis_free(one);
    gp_job_free(job);
}

/* Adds the annotation ProfilerStep#n at [ts, ts + dur) on a CPU thread of t. */
static void step(gp_trace *t, int n, gp_ns ts, gp_ns dur)
{
    uint32_t track;
    char name[32];
    snprintf(name, sizeof name, "ProfilerStep#%d", n);
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &track), GP_OK);
    gp_event ev = {
        .ts = ts, .dur = dur, .name = S(t, name), .track = track, .kind = GP_EV_USER_ANNOTATION};
    assert_int_equal(gp_trace_add_event(t, &ev), GP_OK);
}

/* The straggler finding cites the collectives: rank 2 starts allreduce #6 500 us late. Worked
 * out by hand from straggler_job's jitter (r * 7 + k * 3) % 5 us: rank 2 arrives last at
 * allreduces #0 (the others wait 4 + 2 + 3 = 9 us), #5 (9 us) and #6 (499 + 502 + 498 =
 * 1499 us): 3 of 10, 1517 us in all, 758.5 us per step over the 2 steps. The medians-of-totals
 * rule is not used (no "Out of step" finding). */
static void straggler_finding_cites_collectives(void **state)
{
    (void)state;
    gp_job *job = straggler_job(2, 6, 500 * US, 0);
    for (size_t i = 0; i < job->n_ranks; i++) {
        step(job->ranks[i], 1, 500 * US, 5000 * US);
        step(job->ranks[i], 2, 5500 * US, 6000 * US);
        assert_int_equal(gp_trace_finish(job->ranks[i]), GP_OK);
    }
    gp_analysis *a = NULL;
    gp_error err = {0};
    assert_int_equal(gp_analyze_job(job, NULL, &a, &err), GP_OK);
    const gp_finding *f = NULL;
    size_t n = 0;
    for (size_t i = 0; i < a->n_findings; i++)
        if (strcmp(a->findings[i].rule, "straggler") == 0) {
            f = &a->findings[i];
            n++;
        }
    assert_int_equal(n, 1);
    assert_int_equal(f->rank, 2);
    assert_int_equal(f->n_ranks, 1);
    assert_int_equal(f->variant, 0);
    double v = 0;
    assert_true(gp_finding_metric(f, "arrived_last", &v));
    assert_float_equal(v, 3, 0);
    assert_true(gp_finding_metric(f, "collectives", &v));
    assert_float_equal(v, 10, 0);
    assert_true(gp_finding_metric(f, "caused_wait", &v));
    assert_float_equal(v, 1517 * US, 0);
    assert_true(gp_finding_metric(f, "caused_wait_per_step", &v));
    assert_float_equal(v, 758.5 * US, 1e-6);
    assert_int_equal(f->gain_ns, 1517 * US);
    /* the collectives it arrived last at, by the wait they caused (ties: the earlier) */
    assert_true(f->n_objects >= 3);
    const char *names[3] = {"allreduce #6 in group 0", "allreduce #0 in group 0",
                            "allreduce #5 in group 0"};
    const gp_ns waits[3] = {1499 * US, 9 * US, 9 * US};
    for (int k = 0; k < 3; k++) {
        assert_int_equal(f->objects[k].kind, GP_OBJ_COLLECTIVE);
        assert_string_equal(f->objects[k].name, names[k]);
        assert_int_equal(f->objects[k].time, waits[k]);
    }
    char title[512];
    gp__finding_title(f, title, sizeof title);
    assert_non_null(strstr(title, "Arrived last at 3 of 10 collectives (allreduce #6 in group 0, "
                                  "allreduce #0 in group 0, allreduce #5 in group 0); the "
                                  "others waited 1.517 ms for it (758.500 us per step)"));
    assert_null(strstr(title, "Out of step"));
    gp_analysis_free(a);
    gp_job_free(job);
}

/* The text table and the report's section say who the straggler is; one rank: no section. */
static void text_and_report_sections(void **state)
{
    (void)state;
    gp_job *job = worked_example();
    for (size_t i = 0; i < job->n_ranks; i++)
        assert_int_equal(gp_trace_finish(job->ranks[i]), GP_OK);
    gp_analysis *a = NULL;
    gp_error err = {0};
    assert_int_equal(gp_analyze_job(job, NULL, &a, &err), GP_OK);
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    assert_int_equal(gp_analysis_render_text(a, GP_AT_COLLECTIVES, fp), GP_OK);
    fclose(fp);
    assert_non_null(strstr(buf, "matched by process group and position"));
    /* rank 2 arrived last at 1 of the 2 implicit-sync collectives; the others waited 105 us */
    assert_non_null(strstr(buf, "Straggler: rank 2 arrived last at 1 of 2 collectives; the others "
                                "waited 0.105 ms for it."));
    free(buf);
    fp = open_memstream(&buf, &len);
    gp__dash_collectives_html(fp, a);
    fclose(fp);
    assert_non_null(strstr(buf, "<section id=\"gp-collectives\">"));
    assert_non_null(strstr(buf, "Rank <b>2</b> is the one the others wait for most."));
    assert_non_null(strstr(buf, "105.000&nbsp;\xc2\xb5s"));
    free(buf);
    gp_analysis *one = NULL;
    assert_int_equal(gp_analyze_trace(job->ranks[0], NULL, &one, &err), GP_OK);
    fp = open_memstream(&buf, &len);
    gp__dash_collectives_html(fp, one);
    assert_int_equal(gp_analysis_render_json(one, 0, fp), GP_OK);
    fclose(fp);
    assert_null(strstr(buf, "\"collectives\""));
    assert_null(strstr(buf, "gp-collectives"));
    free(buf);
    gp_analysis_free(one);
    gp_analysis_free(a);
    gp_job_free(job);
}

/* The reader keeps Process Group Name / Description / Ranks (a string, or an array's text); the
 * Chrome writer writes them back and they read back equal. */
static void process_group_args_round_trip(void **state)
{
    (void)state;
    const char *json =
        "{\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclKernel_AllReduce\",\"pid\":0,\"tid\":7,"
        "\"ts\":10,\"dur\":5,\"args\":{\"stream\":7,\"correlation\":3,\"Collective name\":"
        "\"allreduce\",\"Process Group Name\":\"0\",\"Process Group Description\":\"default_pg\","
        "\"Process Group Ranks\":\"[0, 1]\",\"Group size\":2,\"dtype\":\"Float\"}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclKernel_AllGather\",\"pid\":0,\"tid\":7,"
        "\"ts\":20,\"dur\":5,\"args\":{\"stream\":7,\"correlation\":4,\"Process Group Name\":"
        "\"tp\",\"Process Group Ranks\":[2, 3]}}]}";
    gp_trace *t = NULL;
    gp_error err = {0};
    assert_int_equal(gp_trace_read_buffer(json, strlen(json), "pg.json", NULL, &t, &err), GP_OK);
    const gp_track *tr = NULL;
    for (size_t i = 0; i < t->n_tracks; i++)
        if (t->tracks[i].kind == GP_TRACK_GPU_STREAM)
            tr = &t->tracks[i];
    assert_non_null(tr);
    assert_int_equal(tr->n_events, 2);
    const gp_gpu_ext *a = gp_event_gpu_ext(t, &tr->events[0]);
    const gp_gpu_ext *b = gp_event_gpu_ext(t, &tr->events[1]);
    assert_string_equal(gp_trace_str(t, a->pg_name), "0");
    assert_string_equal(gp_trace_str(t, a->pg_desc), "default_pg");
    assert_string_equal(gp_trace_str(t, a->pg_ranks), "[0, 1]");
    assert_string_equal(gp_trace_str(t, b->pg_name), "tp");
    assert_int_equal(b->pg_desc, 0);
    assert_string_equal(gp_trace_str(t, b->pg_ranks), "[2, 3]");
    char path[] = "/tmp/gp_coll_rtXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(gp_trace_write_chrome(t, path, &err), GP_OK);
    gp_trace *back = NULL;
    assert_int_equal(gp_trace_read(path, NULL, &back, &err), GP_OK);
    gp_error why = {0};
    if (!gp_trace_equal(t, back, &why))
        fail_msg("round trip differs: %s", why.msg);
    unlink(path);
    gp_trace_free(t);
    gp_trace_free(back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tracelens_worked_example),
        cmocka_unit_test(straggler_injected),
        cmocka_unit_test(clock_offset_aligned),
        cmocka_unit_test(rank_with_fewer_collectives),
        cmocka_unit_test(members_disagree),
        cmocka_unit_test(no_metadata_by_order),
        cmocka_unit_test(two_files_claim_one_rank),
        cmocka_unit_test(analysis_carries_collectives),
        cmocka_unit_test(straggler_finding_cites_collectives),
        cmocka_unit_test(text_and_report_sections),
        cmocka_unit_test(process_group_args_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
