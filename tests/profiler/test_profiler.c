/* Tests of the in-process profiler (src/produce/profiler): nesting, early exits, threads, sampling,
 * drops, tags, exports and their round trip, NVTX injection, -finstrument-functions, and the
 * CUDA-event timers / memory tracker against a FAKE libcuda.so.1 (tests/fakes/cuda, scripted
 * values: fake_cuda_* tests check our code, not a GPU). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpuprof/profiler.h"
#include "gpuprof/summary.h"
#include "produce/profiler/cuda_driver.h"
#include "produce/profiler/profiler_internal.h"
#include "profiler/profiler_test_util.h"

#ifdef GP_TEST_NVTX
/* Static NVTX injection: this program's NVTX calls initialise through gp_nvtx_initialize, the
 * same function libgpuprof_nvtx.so's InitializeInjectionNvtx2 calls. */
#define NVTX_STATIC_INJECTION_IMPL
extern int (*InitializeInjectionNvtx2_fnptr)(const void *(*)(uint32_t));
int (*InitializeInjectionNvtx2_fnptr)(const void *(*)(uint32_t)) = gp_nvtx_initialize;
#include <nvtx3/nvToolsExt.h>
int gp__nvtx_init_count(void);
#endif

/* instrumented.c is compiled with -finstrument-functions. */
int inst_outer(int n);

/* ---- helpers ------------------------------------------------------------------------------- */

static gp_profiler *new_prof(size_t ring, size_t budget)
{
    gp_profiler_opts o;
    gp_profiler_opts_init(&o);
    if (ring)
        o.ring_records = ring;
    if (budget)
        o.memory_budget = budget;
    gp_profiler *p = NULL;
    assert_int_equal(gp_profiler_create(&o, &p), GP_OK);
    return p;
}

static gp_trace *to_trace(gp_profiler *p)
{
    gp_trace *t = NULL;
    assert_int_equal(gp_profiler_to_trace(p, &t), GP_OK);
    return t;
}

static size_t count_named(const gp_trace *t, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n_tracks; i++)
        for (size_t j = 0; j < t->tracks[i].n_events; j++)
            if (strcmp(gp_trace_str(t, t->tracks[i].events[j].name), name) == 0)
                n++;
    return n;
}

static const gp_event *find_named(const gp_trace *t, const char *name, size_t nth)
{
    for (size_t i = 0; i < t->n_tracks; i++)
        for (size_t j = 0; j < t->tracks[i].n_events; j++)
            if (strcmp(gp_trace_str(t, t->tracks[i].events[j].name), name) == 0 && nth-- == 0)
                return &t->tracks[i].events[j];
    return NULL;
}

static bool contains(const gp_event *outer, const gp_event *inner)
{
    return outer->track == inner->track && outer->ts <= inner->ts &&
           inner->ts + inner->dur <= outer->ts + outer->dur;
}

static void spin_ns(int64_t ns)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do {
        clock_gettime(CLOCK_MONOTONIC, &b);
    } while ((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec) < ns);
}

/* ---- ranges -------------------------------------------------------------------------------- */

static void nesting_records_parent_and_children(void **state)
{
    gp_profiler *p = new_prof(0, 0);
    gp_range_begin(p, "outer", NULL);
    spin_ns(2000);
    gp_range_begin(p, "child_a", NULL);
    spin_ns(2000);
    gp_range_end(p);
    gp_range_begin(p, "child_b", NULL);
    gp_range_begin(p, "grandchild", NULL);
    spin_ns(1000);
    gp_range_end(p);
    gp_range_end(p);
    gp_range_end(p);
    gp_range_end(p); /* unmatched: ignored */
    gp_trace *t = to_trace(p);
    assert_int_equal(gp_trace_event_count(t), 4);
    const gp_event *o = find_named(t, "outer", 0), *a = find_named(t, "child_a", 0),
                   *b = find_named(t, "child_b", 0), *g = find_named(t, "grandchild", 0);
    assert_non_null(o);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(g);
    assert_int_equal(o->kind, GP_EV_RANGE);
    assert_true(contains(o, a));
    assert_true(contains(o, b));
    assert_true(contains(b, g));
    assert_false(contains(a, b));
    assert_true(a->ts + a->dur <= b->ts);
    assert_true(a->dur >= 2000);
    /* The parent carries the profiler's own cost of its 3 descendants. */
    const char *args = gp_event_args_json(t, o);
    assert_non_null(args);
    assert_non_null(strstr(args, "\"overhead_ns\":"));
    assert_null(gp_event_args_json(t, g));
    gp_trace_free(t);
    gp_profiler_destroy(p);
}

static int early_return(gp_profiler *p, int x)
{
    GP_SCOPE(p, "early");
    if (x > 0)
        return 1;
    GP_SCOPE(p, "late");
    return 0;
}

static int goto_exit(gp_profiler *p)
{
    int r = 0;
    {
        GP_SCOPE(p, "goto_scope");
        goto out;
    }
out:
    r = 5;
    return r;
}

static int twice(int x)
{
    return 2 * x;
}

static int g_side;
static void side_effect(void)
{
    g_side++;
}

static void side_effect_arg(void *arg)
{
    (void)arg;
    g_side++;
}

GP_PROFILED_FUNCTION(NULL, int, profiled_add, (int a, int b), (a, b))
{
    return a + b;
}

static int g_void_calls;
GP_PROFILED_VOID_FUNCTION(NULL, profiled_void, (int n), (n))
{
    g_void_calls += n;
}

static gp_profiler *g_wrap_prof;
GP_PROFILE_WRAP(g_wrap_prof, int, wrapped_twice, twice, (int x), (x))

static void scopes_end_on_every_exit_path(void **state)
{
    gp_profiler *p = new_prof(0, 0);
    assert_int_equal(early_return(p, 1), 1);
    assert_int_equal(early_return(p, 0), 0);
    assert_int_equal(goto_exit(p), 5);
    for (int i = 0; i < 5; i++) {
        GP_SCOPE_BLOCK(p, "loop_body")
        {
            if (i == 1)
                continue;
            if (i == 3)
                break;
        }
    }
    GP_SCOPE_BLOCK(p, "block")
    {
        GP_SCOPE_BLOCK(p, "nested_block")
        {
            break;
        }
    }
    int v = GP_PROFILE_CALL(p, "call_value", twice(21));
    assert_int_equal(v, 42);
    GP_PROFILE_CALL(p, "call_void", side_effect());
    assert_int_equal(g_side, 1);
    g_wrap_prof = p;
    assert_int_equal(wrapped_twice(4), 8);
    gp_range_begin(p, "after", NULL); /* must be top-level if every scope above closed */
    gp_range_end(p);
    gp_trace *t = to_trace(p);
    assert_int_equal(count_named(t, "early"), 2);
    assert_int_equal(count_named(t, "late"), 1);
    assert_int_equal(count_named(t, "goto_scope"), 1);
    assert_int_equal(count_named(t, "loop_body"), 5); /* every iteration, also the break */
    assert_int_equal(count_named(t, "block"), 1);
    assert_int_equal(count_named(t, "nested_block"), 1);
    assert_int_equal(count_named(t, "call_value"), 1);
    assert_int_equal(count_named(t, "call_void"), 1);
    assert_int_equal(count_named(t, "twice"), 1);
    const gp_event *after = find_named(t, "after", 0);
    assert_non_null(after);
    for (size_t i = 0; i < t->tracks[after->track].n_events; i++) {
        const gp_event *e = &t->tracks[after->track].events[i];
        if (e != after)
            assert_false(contains(e, after));
    }
    gp_trace_free(t);
    gp_profiler_destroy(p);

    /* NULL means the global profiler. */
    gp_profiler *g = gp_profiler_global();
    assert_non_null(g);
    assert_ptr_equal(g, gp_profiler_global());
    gp_profiler_reset(g);
    assert_int_equal(profiled_add(2, 3), 5);
    profiled_void(4);
    assert_int_equal(g_void_calls, 4);
    t = to_trace(g);
    assert_int_equal(count_named(t, "profiled_add"), 1);
    assert_int_equal(count_named(t, "profiled_void"), 1);
    gp_trace_free(t);
    gp_profiler_reset(g);
}

/* ---- threads ------------------------------------------------------------------------------- */

typedef struct thr_arg {
    gp_profiler *p;
    int n;
    pthread_barrier_t *bar; /* NULL: none */
} thr_arg;

static void *worker(void *a)
{
    thr_arg *ta = a;
    if (ta->bar) { /* every thread holds its state before any finishes */
        gp_range_begin(ta->p, "registered", NULL);
        gp_range_end(ta->p);
        pthread_barrier_wait(ta->bar);
    }
    for (int i = 0; i < ta->n; i++) {
        gp_range_begin(ta->p, "work", NULL);
        gp_range_begin(ta->p, "inner", NULL);
        gp_range_end(ta->p);
        gp_range_end(ta->p);
    }
    return NULL;
}

static _Atomic int g_stop_flusher;
static void *flusher(void *a)
{
    while (!atomic_load(&g_stop_flusher))
        gp_profiler_flush(a);
    return NULL;
}

static void threads_record_into_their_own_tracks(void **state)
{
    enum { T = 4, N = 20000 };
    gp_profiler *p = new_prof(1024, 0); /* small rings: the flusher keeps them drained */
    pthread_t th[T], fl;
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, T);
    thr_arg ta = {p, N, &bar};
    atomic_store(&g_stop_flusher, 0);
    assert_int_equal(pthread_create(&fl, NULL, flusher, p), 0);
    for (int i = 0; i < T; i++)
        assert_int_equal(pthread_create(&th[i], NULL, worker, &ta), 0);
    for (int i = 0; i < T; i++)
        pthread_join(th[i], NULL);
    atomic_store(&g_stop_flusher, 1);
    pthread_join(fl, NULL);
    gp_profiler_stats st;
    gp_profiler_get_stats(p, &st);
    /* Every range is either recorded or counted as dropped (ring full between flushes). */
    assert_int_equal(st.ranges + st.dropped, (uint64_t)T * (N * 2 + 1));
    assert_int_equal(st.threads, T);
    pthread_barrier_destroy(&bar);
    gp_trace *t = to_trace(p);
    assert_int_equal(t->n_tracks, T);
    assert_int_equal(gp_trace_event_count(t), st.ranges);
    for (size_t i = 0; i < t->n_tracks; i++)
        assert_int_equal(t->tracks[i].kind, GP_TRACK_CPU_THREAD);
    gp_trace_free(t);
    gp_profiler_destroy(p);
}

static void *one_range(void *a)
{
    gp_range_begin(a, "short_lived", NULL);
    gp_range_begin(a, "left_open", NULL); /* the thread exits inside it */
    return NULL;
}

static void exited_threads_states_are_reused(void **state)
{
    /* Budget for about 3 rings: 200 threads one after the other still all record. */
    size_t ring = 1024, per_thread = ring * sizeof(gp__prof_rec) + 64 * sizeof(gp__prof_ext);
    gp_profiler *p = new_prof(ring, 3 * per_thread + per_thread / 2);
    for (int i = 0; i < 200; i++) {
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, one_range, p), 0);
        pthread_join(th, NULL);
    }
    gp_profiler_stats st;
    gp_profiler_get_stats(p, &st);
    assert_int_equal(st.dropped, 0);
    assert_true(st.threads <= 3);
    gp_trace *t = to_trace(p);
    assert_int_equal(count_named(t, "short_lived"), 0); /* never closed: not recorded */
    gp_trace_free(t);
    gp_profiler_destroy(p);

    p = new_prof(ring, 3 * per_thread + per_thread / 2);
    for (int i = 0; i < 200; i++) {
        pthread_t th;
        thr_arg ta = {p, 1, NULL};
        assert_int_equal(pthread_create(&th, NULL, worker, &ta), 0);
        pthread_join(th, NULL);
    }
    gp_profiler_get_stats(p, &st);
    assert_int_equal(st.dropped, 0);
    assert_int_equal(st.ranges, 400);
    assert_true(st.threads <= 3);
    t = to_trace(p);
    assert_int_equal(count_named(t, "work"), 200);
    /* every range sits on the track of the thread that recorded it */
    for (size_t i = 0; i < t->n_tracks; i++)
        assert_int_equal(t->tracks[i].n_events % 2, 0);
    gp_trace_free(t);
    gp_profiler_destroy(p);
}

/* ---- sampling, drops, enable, reset ---------------------------------------------------------- */

static void sampling_keeps_whole_top_level_ranges(void **state)
{
    gp_profiler *p = new_prof(0, 0);
    assert_int_equal(gp_profiler_set_sampling(p, 0.0), GP_EINVAL);
    assert_int_equal(gp_profiler_set_sampling(p, 1.5), GP_EINVAL);
    assert_int_equal(gp_profiler_set_sampling(p, 0.25), GP_OK);
    for (int i = 0; i < 4000; i++) {
        gp_range_begin(p, "top", NULL);
        gp_range_begin(p, "mid", NULL);
        gp_range_begin(p, "leaf", NULL);
        gp_range_end(p);
        gp_range_end(p);
        gp_range_begin(p, "mid", NULL);
        gp_range_end(p);
        gp_range_end(p);
    }
    gp_profiler_stats st;
    gp_profiler_get_stats(p, &st);
    gp_trace *t = to_trace(p);
    size_t top = count_named(t, "top");
    /* Binomial(4000, 0.25): mean 1000, sd 27; 800..1200 is > 7 sd. */
    assert_in_range(top, 800, 1200);
    assert_int_equal(count_named(t, "mid"), 2 * top);
    assert_int_equal(count_named(t, "leaf"), top);
    assert_int_equal(st.sampled_out + top, 4000);
    gp_trace_free(t);
    /* Back to 1: everything recorded. */
    gp_profiler_reset(p);
    assert_int_equal(gp_profiler_set_sampling(p, 1.0), GP_OK);
    for (int i = 0; i < 100; i++) {
        gp_range_begin(p, "top", NULL);
        gp_range_end(p);
    }
    gp_profiler_get_stats(p, &st);
    assert_int_equal(st.ranges, 100);
    assert_int_equal(st.sampled_out, 0);
    gp_profiler_destroy(p);
}

static void drops_are_counted_and_memory_bounded(void **state)
{
    gp_profiler *p = new_prof(64, 0);
    for (int i = 0; i < 100; i++) {
        gp_range_begin(p, "r", NULL);
        gp_range_end(p);
    }
    gp_profiler_stats st;
    gp_profiler_get_stats(p, &st); /* flushes: the ring is free again */
    assert_int_equal(st.ranges, 64);
    assert_int_equal(st.dropped, 36);
    for (int i = 0; i < 10; i++) {
        gp_range_begin(p, "r", NULL);
        gp_range_end(p);
    }
    gp_profiler_get_stats(p, &st);
    assert_int_equal(st.ranges, 74);
    /* Deeper than 255 levels: the extra levels are dropped, the rest stays consistent. */
    gp_profiler_reset(p);
    for (int i = 0; i < 300; i++)
        gp_range_begin(p, "deep", NULL);
    for (int i = 0; i < 300; i++)
        gp_range_end(p);
    gp_range_begin(p, "after_deep", NULL);
    gp_range_end(p);
    gp_profiler_get_stats(p, &st);
    /* 45 levels over the limit, then 255 - 64 ends into the full ring, then after_deep. */
    assert_int_equal(st.ranges, 64);
    assert_int_equal(st.dropped, 45 + (255 - 64) + 1);
    gp_profiler_destroy(p);

    /* A budget smaller than one ring: the thread records nothing, everything is counted. */
    p = new_prof(65536, 4096);
    for (int i = 0; i < 10; i++) {
        gp_range_begin(p, "r", NULL);
        gp_range_end(p);
    }
    gp_profiler_get_stats(p, &st);
    assert_int_equal(st.ranges, 0);
    assert_int_equal(st.dropped, 10);
    gp_profiler_destroy(p);
}

static void enable_disable_and_reset(void **state)
{
    gp_profiler_opts o;
    gp_profiler_opts_init(&o);
    o.enabled = false;
    gp_profiler *p = NULL;
    assert_int_equal(gp_profiler_create(&o, &p), GP_OK);
    assert_false(gp_profiler_enabled(p));
    gp_range_begin(p, "off", NULL);
    gp_range_end(p);
    gp_profiler_enable(p, true);
    assert_true(gp_profiler_enabled(p));
    gp_range_begin(p, "on", NULL);
    gp_range_end(p);
    gp_range_begin(p, "open_across_disable", NULL);
    gp_profiler_enable(p, false);
    gp_range_end(p);
    gp_profiler_enable(p, true);
    gp_range_begin(p, "top_again", NULL);
    gp_range_end(p);
    gp_trace *t = to_trace(p);
    assert_int_equal(count_named(t, "off"), 0);
    assert_int_equal(count_named(t, "on"), 1);
    assert_int_equal(count_named(t, "open_across_disable"), 0);
    assert_int_equal(count_named(t, "top_again"), 1);
    gp_trace_free(t);
    gp_profiler_reset(p);
    gp_profiler_stats st;
    gp_profiler_get_stats(p, &st);
    assert_int_equal(st.ranges, 0);
    assert_int_equal(st.dropped, 0);
    gp_range_begin(p, "after_reset", NULL);
    gp_range_end(p);
    gp_profiler_get_stats(p, &st);
    assert_int_equal(st.ranges, 1);
    const char *want_clock = getenv("GPUPROF_CLOCK");
    if (want_clock && strcmp(want_clock, "monotonic") == 0) {
        assert_string_equal(st.clock, "monotonic");
        assert_true(st.tsc_ghz == 0.0);
    } else {
        assert_true(strcmp(st.clock, "tsc") == 0 || strcmp(st.clock, "monotonic") == 0);
        if (strcmp(st.clock, "tsc") == 0)
            assert_true(st.tsc_invariant && st.tsc_ghz > 0.1 && st.tsc_ghz < 20.0);
    }
    assert_true(st.overhead_ns > 0);
    const char *a = gp_profiler_intern(p, "dyn-name");
    char buf[16];
    snprintf(buf, sizeof buf, "dyn-%s", "name");
    assert_ptr_equal(a, gp_profiler_intern(p, buf));
    gp_profiler_destroy(p);

    gp_profiler_opts_init(&o);
    o.sampling = 0;
    assert_int_equal(gp_profiler_create(&o, &p), GP_EINVAL);
}

static void tags_and_measurements_go_into_args(void **state)
{
    gp_profiler *p = new_prof(0, 0);
    gp_range_opts ro = {0};
    ro.backend = "cuda";
    ro.bytes = 1000000;
    ro.cpu_time = true;
    gp_range_begin(p, "copy", &ro);
    gp_range_tag_int(p, "size", 1024);
    gp_range_tag_str(p, "layout", "row \"major\"");
    gp_range_tag_double(p, "scale", 0.5);
    gp_range_add_transfer_ns(p, 1234);
    spin_ns(10000);
    gp_range_end(p);
    gp_range_begin(p, "plain", NULL);
    gp_range_tag_int(p, "k", 1);
    gp_range_tag_int(p, "k2", 2);
    gp_range_tag_int(p, "k3", 3);
    gp_range_tag_int(p, "k4", 4);
    gp_range_tag_int(p, "k5", 5); /* over the limit of 4: ignored */
    gp_range_end(p);
    gp_trace *t = to_trace(p);
    const char *a = gp_event_args_json(t, find_named(t, "copy", 0));
    assert_non_null(a);
    assert_non_null(strstr(a, "{\"device\":\"cpu\",\"backend\":\"cuda\",\"size\":1024,"
                              "\"layout\":\"row \\\"major\\\"\",\"scale\":0.5,\"cpu_ns\":"));
    assert_non_null(strstr(a, "\"transfer_ns\":1234,\"bytes\":1000000,\"gbps\":"));
    const char *b = gp_event_args_json(t, find_named(t, "plain", 0));
    assert_string_equal(b, "{\"device\":\"cpu\",\"k\":1,\"k2\":2,\"k3\":3,\"k4\":4}");
    gp_trace_free(t);
    gp_profiler_destroy(p);
}

/* ---- summaries and exports ----------------------------------------------------------------- */

static gp_status print_summary_cb(void *p, FILE *f)
{
    return gp_profiler_print_summary(p, f);
}

static gp_status print_top2_cb(void *p, FILE *f)
{
    return gp_profiler_print_bottlenecks(p, f, 2);
}

static void summary_and_bottlenecks_print_in_summary_format(void **state)
{
    gp_profiler *p = new_prof(0, 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(gp_profiler_print_summary(p, f), GP_EEMPTY);
    fclose(f);
    free(buf);
    for (int i = 0; i < 5; i++) {
        GP_SCOPE_BLOCK(p, "slow")
        spin_ns(200000);
        GP_SCOPE_BLOCK(p, "medium")
        spin_ns(50000);
        GP_SCOPE_BLOCK(p, "fast")
        spin_ns(1000);
    }
    char *s = capture(print_summary_cb, p);
    assert_non_null(strstr(s, "RANGE TIMING REPORT"));
    assert_non_null(strstr(s, "Calls"));
    assert_non_null(strstr(s, "Self (ms)")); /* ranges nest: self and inclusive columns */
    assert_non_null(strstr(s, "P95 incl."));
    assert_non_null(strstr(s, "TOTAL (self)"));
    const char *slow = strstr(s, "\nslow "), *med = strstr(s, "\nmedium "),
               *fast = strstr(s, "\nfast ");
    assert_non_null(slow);
    assert_non_null(med);
    assert_non_null(fast);
    /* Sorted by self time, as recorded. The spins only make slow > medium > fast likely: a range's
     * wall time also holds any preemption between its begin and end, and under load (ctest -j16
     * on 2 cores) one scheduler slice in "fast" (5 x 1 us) or "medium" outweighs the spins. So the
     * expected order is taken from the recorded times (the breakdown: these ranges do not nest,
     * so self = wall), not from the spin lengths. */
    gp_range_breakdown *rows = NULL;
    size_t n_rows = 0;
    assert_int_equal(gp_profiler_breakdown(p, &rows, &n_rows), GP_OK);
    assert_int_equal(n_rows, 3);
    const char *pos[3];
    for (size_t i = 0; i < 3; i++) {
        const char *name = rows[i].name;
        pos[i] = strcmp(name, "slow") == 0 ? slow : strcmp(name, "medium") == 0 ? med : fast;
    }
    assert_true(pos[0] < pos[1] && pos[1] < pos[2]);
    free(rows);
    free(s);
    s = capture(print_top2_cb, p);
    assert_non_null(strstr(s, "TOP 2 BOTTLENECKS"));
    assert_non_null(strstr(s, "(1 more not shown"));
    free(s);
    gp_profiler_destroy(p);
}

static void folded_export_has_self_times(void **state)
{
    gp_profiler *p = new_prof(0, 0);
    { /* nothing recorded: an empty file */
        char empty[] = "/tmp/gp_prof_folded_emptyXXXXXX";
        int efd = mkstemp(empty);
        assert_true(efd >= 0);
        close(efd);
        gp_error eerr;
        assert_int_equal(gp_profiler_export_folded(p, empty, &eerr), GP_OK);
        char *etext = read_all(empty);
        assert_non_null(etext);
        assert_string_equal(etext, "");
        free(etext);
        unlink(empty);
    }
    for (int i = 0; i < 3; i++) {
        gp_range_begin(p, "main loop", NULL);
        spin_ns(20000);
        gp_range_begin(p, "step;x", NULL);
        spin_ns(30000);
        gp_range_end(p);
        gp_range_end(p);
    }
    char path[] = "/tmp/gp_prof_foldedXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    gp_error err;
    assert_int_equal(gp_profiler_export_folded(p, path, &err), GP_OK);
    char *text = read_all(path);
    assert_non_null(text);
    /* The folded writer of `gpuprof flame`: ';' in a name becomes ':' (it would split the frame),
     * spaces stay (the count is after the last space); one line per stack, merged over threads. */
    long long root = -1, child = -1;
    char *l1 = strstr(text, "main loop ");
    char *l2 = strstr(text, "main loop;step:x ");
    assert_non_null(l1);
    assert_non_null(l2);
    assert_true(l1 == text || l1[-1] == '\n');
    assert_true(l2 == text || l2[-1] == '\n');
    root = atoll(l1 + strlen("main loop "));
    child = atoll(l2 + strlen("main loop;step:x "));
    assert_true(child >= 3 * 30000);
    assert_true(root >= 3 * 20000);
    /* Self times add up to the roots' total time. */
    gp_trace *t = to_trace(p);
    long long total = 0;
    for (int i = 0; i < 3; i++)
        total += find_named(t, "main loop", (size_t)i)->dur;
    assert_int_equal(root + child, total);
    gp_trace_free(t);
    free(text);
    unlink(path);
    gp_profiler_destroy(p);
}

static void export_round_trip_gives_same_statistics(void **state)
{
    gp_profiler *p = new_prof(0, 0);
    for (int i = 0; i < 50; i++) {
        gp_range_begin(p, "step", NULL);
        spin_ns(1000 + 37 * i);
        gp_range_begin(p, "load", &(gp_range_opts){.backend = "io", .bytes = 4096});
        gp_range_tag_int(p, "i", i);
        spin_ns(500);
        gp_range_end(p);
        gp_range_end(p);
    }
    char path[] = "/tmp/gp_prof_rtXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    gp_error err;
    assert_int_equal(gp_profiler_export_json(p, path, &err), GP_OK);
    gp_trace *a = to_trace(p), *b = NULL;
    gp_read_opts ro;
    gp_read_opts_init(&ro);
    ro.quiet = true;
    assert_int_equal(gp_trace_read(path, &ro, &b, &err), GP_OK);
    gp_summary *sa = NULL, *sb = NULL;
    assert_int_equal(gp_summary_compute(gp_traces_const(&a), 1, NULL, &sa, NULL), GP_OK);
    assert_int_equal(gp_summary_compute(gp_traces_const(&b), 1, NULL, &sb, NULL), GP_OK);
    const gp_kind_summary *ka = &sa->kinds[GP_EV_RANGE], *kb = &sb->kinds[GP_EV_RANGE];
    assert_int_equal(ka->n_rows, 2);
    assert_int_equal(kb->n_rows, ka->n_rows);
    for (size_t i = 0; i < ka->n_rows; i++) {
        assert_string_equal(ka->rows[i].name, kb->rows[i].name);
        assert_int_equal(ka->rows[i].calls, kb->rows[i].calls);
        assert_int_equal(ka->rows[i].total, kb->rows[i].total);
        assert_int_equal(ka->rows[i].min, kb->rows[i].min);
        assert_int_equal(ka->rows[i].max, kb->rows[i].max);
        assert_true(ka->rows[i].p99 == kb->rows[i].p99);
    }
    const gp_event *ev = find_named(b, "load", 7);
    assert_non_null(ev);
    const char *args = gp_event_args_json(b, ev);
    assert_non_null(args);
    assert_non_null(strstr(args, "\"backend\":\"io\""));
    bool meta = false;
    for (size_t i = 0; i < b->n_meta; i++)
        if (strcmp(gp_trace_str(b, b->meta[i].key), "gpuprof_profile") == 0)
            meta = strstr(gp_trace_str(b, b->meta[i].value_json), "\"summary\":[") != NULL;
    assert_true(meta);
    gp_summary_free(sa);
    gp_summary_free(sb);
    gp_trace_free(a);
    gp_trace_free(b);
    unlink(path);
    gp_profiler_destroy(p);
}

static void exports_to_bad_paths_fail_cleanly(void **state)
{
    gp_profiler *p = new_prof(0, 0);
    gp_range_begin(p, "x", NULL);
    gp_range_end(p);
    gp_error err;
    memset(&err, 0, sizeof(err));
    assert_int_equal(gp_profiler_export_json(p, "/nonexistent-dir/p.json", &err), GP_EIO);
    assert_non_null(strstr(err.msg, "/nonexistent-dir/p.json"));
    memset(&err, 0, sizeof(err));
    assert_int_equal(gp_profiler_export_folded(p, "/nonexistent-dir/p.folded", &err), GP_EIO);
    assert_non_null(strstr(err.msg, "/nonexistent-dir"));
    assert_int_equal(gp_profiler_export_json(p, "/nonexistent-dir/p.json", NULL), GP_EIO);
    gp_profiler_destroy(p);
}

static const char *profile_meta(const gp_trace *t)
{
    for (size_t i = 0; i < t->n_meta; i++)
        if (strcmp(gp_trace_str(t, t->meta[i].key), "gpuprof_profile") == 0)
            return gp_trace_str(t, t->meta[i].value_json);
    return NULL;
}

static void export_json_meta_has_profile(void **state)
{
    gp_profiler *p = new_prof(0, 0);
    gp_range_begin(p, "x", NULL);
    gp_range_end(p);
    /* gp_profiler_to_trace (produce layer): the profile without the summary statistics. */
    gp_trace *t = to_trace(p);
    const char *meta = profile_meta(t);
    assert_non_null(meta);
    assert_non_null(strstr(meta, "\"version\":1"));
    assert_non_null(strstr(meta, "\"ranges\":1,\"dropped\":0"));
    assert_null(strstr(meta, "\"summary\":"));
    assert_non_null(strstr(meta, "\"overhead_ns_per_range\":"));
    assert_non_null(strstr(meta, "\"cuda_timers\":{"));
    assert_non_null(strstr(meta, "\"memory\":{"));
    gp_trace_free(t);
    /* gp_profiler_export_json (app layer) adds gp_summary_compute's rows, between the counters and
     * the timers. */
    char path[] = "/tmp/gp_prof_metaXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    gp_error err;
    assert_int_equal(gp_profiler_export_json(p, path, &err), GP_OK);
    assert_int_equal(gp_trace_read(path, NULL, &t, &err), GP_OK);
    meta = profile_meta(t);
    assert_non_null(meta);
    assert_non_null(strstr(meta, "\"overhead_ns_per_range\":"));
    assert_non_null(strstr(meta, "\"summary\":[{\"name\":\"x\",\"calls\":1,"));
    assert_true(strstr(meta, "\"summary\":") < strstr(meta, "\"cuda_timers\":{"));
    gp_trace_free(t);
    unlink(path);
    gp_profiler_destroy(p);
}

/* ---- -finstrument-functions and NVTX ----------------------------------------------------------
 */

static void instrument_functions_names_by_dladdr(void **state)
{
    gp_profiler *g = gp_profiler_global();
    gp_profiler_reset(g);
    assert_int_equal(inst_outer(3), 6); /* not switched on yet: nothing recorded */
    gp_profiler_instrument_functions(true);
    assert_int_equal(inst_outer(2), 4);
    gp_profiler_instrument_functions(false);
    gp_trace *t = to_trace(g);
    assert_int_equal(count_named(t, "inst_outer"), 1);
    assert_int_equal(count_named(t, "inst_inner"), 2);
    const gp_event *o = find_named(t, "inst_outer", 0);
    assert_true(contains(o, find_named(t, "inst_inner", 0)));
    gp_trace_free(t);
    gp_profiler_reset(g);
}

/* A hand-made NVTX export table, as a second NVTX copy would present it. */
typedef void (*fnptr)(void);
static fnptr g_core_slots[16], g_core2_slots[17];
static fnptr *g_core_tab[16], *g_core2_tab[17];

static int fake_get_module(int module, fnptr ***out_table, unsigned *out_size)
{
    if (module == 1) { /* CORE */
        for (int i = 0; i < 16; i++)
            g_core_tab[i] = &g_core_slots[i];
        *out_table = g_core_tab;
        *out_size = 15;
        return 1;
    }
    if (module == 5) { /* CORE2 */
        for (int i = 0; i < 17; i++)
            g_core2_tab[i] = &g_core2_slots[i];
        *out_table = g_core2_tab;
        *out_size = 16;
        return 1;
    }
    return 0;
}

static struct {
    size_t size;
    int (*get)(int, fnptr ***, unsigned *);
} g_etbl = {sizeof(g_etbl), fake_get_module};

static const void *fake_export_table(uint32_t id)
{
    return id == 1 ? (const void *)&g_etbl : NULL;
}

static void nvtx_injection_records_ranges(void **state)
{
    gp_profiler *g = gp_profiler_global();
    gp_profiler_reset(g);
#ifdef GP_TEST_NVTX
    nvtxRangePushA("nvtx_outer");
    nvtxEventAttributes_t at = {0};
    at.version = NVTX_VERSION;
    at.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    at.messageType = NVTX_MESSAGE_TYPE_ASCII;
    at.message.ascii = "nvtx_inner";
    nvtxRangePushEx(&at);
    nvtxRangePop();
    nvtxRangePop();
    nvtxRangeId_t id = nvtxRangeStartA("nvtx_span");
    nvtxRangeEnd(id);
    nvtxDomainHandle_t dom = nvtxDomainCreateA("mydomain");
    nvtxEventAttributes_t da = {0};
    da.version = NVTX_VERSION;
    da.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    da.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    da.message.registered = nvtxDomainRegisterStringA(dom, "nvtx_registered");
    nvtxDomainRangePushEx(dom, &da);
    nvtxDomainRangePop(dom);
    assert_true(gp__nvtx_init_count() >= 1);
#endif
    /* A second NVTX copy initialising: accepted, and its slots work too. */
    assert_int_equal(gp_nvtx_initialize(fake_export_table), 1);
    assert_int_equal(gp_nvtx_initialize(fake_export_table), 1);
    assert_non_null(g_core_slots[9]);  /* RangePushA */
    assert_non_null(g_core_slots[11]); /* RangePop */
    ((int (*)(const char *))g_core_slots[9])("copy2_range");
    ((int (*)(void))g_core_slots[11])();
    gp_trace *t = to_trace(g);
    assert_int_equal(count_named(t, "copy2_range"), 1);
#ifdef GP_TEST_NVTX
    assert_int_equal(count_named(t, "nvtx_outer"), 1);
    assert_int_equal(count_named(t, "nvtx_inner"), 1);
    assert_int_equal(count_named(t, "nvtx_span"), 1);
    assert_int_equal(count_named(t, "nvtx_registered"), 1);
    assert_true(contains(find_named(t, "nvtx_outer", 0), find_named(t, "nvtx_inner", 0)));
#endif
    gp_trace_free(t);
    gp_profiler_reset(g);
}

/* ---- fake CUDA driver ---------------------------------------------------------------------- */

static gp_status print_breakdown_cb(void *p, FILE *f)
{
    return gp_profiler_print_breakdown(p, f);
}

static gp_status timer_print_cb(void *t, FILE *f)
{
    return gp_cuda_timer_print(t, f);
}

static gp_status mem_print_cb(void *m, FILE *f)
{
    return gp_mem_print(m, f);
}

static void fake_cuda_timers_resolve_lazily(void **state)
{
    gp_profiler *p = new_prof(0, 0);
    gp_cuda_timer *t = gp_profiler_cuda_timer(p);
    const double times[] = {0.0, 1.5, 2.0, 2.25, 10.0, 13.0};
    fake.script(times, 6);
    fake.not_ready(3); /* each event needs 3 queries before it completes */
    assert_int_equal(gp_cuda_timer_start(t, "gemm", NULL), GP_OK);
    assert_int_equal(gp_cuda_timer_stop(t, "gemm"), GP_OK);
    assert_int_equal(gp_cuda_timer_start(t, "gemm", NULL), GP_OK);
    assert_int_equal(gp_cuda_timer_stop(t, "gemm"), GP_OK);
    assert_int_equal(gp_cuda_timer_start(t, "copy_h2d", (void *)0x7), GP_OK);
    assert_int_equal(gp_cuda_timer_stop(t, "copy_h2d"), GP_OK);
    assert_int_equal(gp_cuda_timer_stop(t, "copy_h2d"), GP_ENOENT);
    fake_cuda_counts c;
    fake.counts(&c);
    assert_int_equal(c.records, 6);
    assert_int_equal(c.queries, 0); /* start/stop never ask the GPU */
    assert_int_equal(gp_cuda_timer_resolve(t, false), 3);
    assert_int_equal(gp_cuda_timer_resolve(t, false), 3);
    assert_int_equal(gp_cuda_timer_resolve(t, false), 3);
    assert_int_equal(gp_cuda_timer_resolve(t, false), 0);
    gp_timer_stats s;
    assert_int_equal(gp_cuda_timer_stats(t, "gemm", &s), GP_OK);
    assert_int_equal(s.count, 2);
    assert_true(s.total_ms > 1.7499 && s.total_ms < 1.7501);
    assert_true(s.min_ms > 0.2499 && s.min_ms < 0.2501);
    assert_true(s.max_ms > 1.4999 && s.max_ms < 1.5001);
    assert_int_equal(gp_cuda_timer_stats(t, "nope", &s), GP_ENOENT);
    char *text = capture(timer_print_cb, t);
    check_golden("kernel_timing_report.txt", text);
    free(text);
    fake.counts(&c);
    assert_int_equal(c.syncs, 0);
    /* 64 open starts of one name are the limit. */
    for (int i = 0; i < 64; i++)
        assert_int_equal(gp_cuda_timer_start(t, "many", NULL), GP_OK);
    assert_int_equal(gp_cuda_timer_start(t, "many", NULL), GP_ELIMIT);
    gp_profiler_destroy(p);
    fake.counts(&c);
    assert_int_equal(c.syncs, 0);
}

static void fake_cuda_gpu_ranges_and_call_n(void **state)
{
    fake.reset();
    gp_profiler *p = new_prof(0, 0);
    const double times[] = {5.0, 7.5};
    fake.script(times, 2);
    gp_range_begin(p, "kernel_range", &(gp_range_opts){.device = GP_DEVICE_GPU, .bytes = 5000000});
    gp_range_end(p);
    gp_trace *t = to_trace(p);
    const char *a = gp_event_args_json(t, find_named(t, "kernel_range", 0));
    assert_non_null(a);
    assert_non_null(strstr(a, "\"device\":\"gpu\""));
    assert_non_null(strstr(a, "\"gpu_ns\":2500000,\"bytes\":5000000,\"gbps\":2}"));
    gp_trace_free(t);
    /* The breakdown: GPU time and GB/s for the GPU range, n/a (-1) for what was not measured. */
    gp_range_begin(p, "parent", NULL);
    gp_range_begin(p, "host_copy", &(gp_range_opts){.cpu_time = true});
    gp_range_add_transfer_ns(p, 700);
    gp_range_end(p);
    gp_range_end(p);
    gp_range_breakdown *rows = NULL;
    size_t n = 0;
    assert_int_equal(gp_profiler_breakdown(p, &rows, &n), GP_OK);
    assert_int_equal(n, 3);
    bool seen[3] = {false, false, false};
    gp_ns parent_wall = 0, child_wall = 0;
    for (size_t i = 0; i < n; i++) {
        const gp_range_breakdown *r = &rows[i];
        assert_int_equal(r->calls, 1);
        if (strcmp(r->name, "kernel_range") == 0) {
            seen[0] = true;
            assert_int_equal(r->gpu_ns, 2500000);
            assert_int_equal(r->bytes, 5000000);
            assert_true(r->gbps > 1.9999 && r->gbps < 2.0001);
            assert_int_equal(r->cpu_ns, -1);
            assert_int_equal(r->overhead_ns, 0);
        } else if (strcmp(r->name, "host_copy") == 0) {
            seen[1] = true;
            child_wall = r->wall_ns;
            assert_int_equal(r->gpu_ns, -1);
            assert_true(r->cpu_ns >= 0);
            assert_int_equal(r->transfer_ns, 700);
            assert_true(r->gbps < 0);
        } else if (strcmp(r->name, "parent") == 0) {
            seen[2] = true;
            parent_wall = r->wall_ns;
            assert_true(r->overhead_ns > 0); /* one nested range */
        }
    }
    assert_true(seen[0] && seen[1] && seen[2]);
    assert_true(parent_wall >= child_wall);
    for (size_t i = 1; i < n; i++)
        assert_true(rows[i - 1].wall_ns >= rows[i].wall_ns);
    free(rows);
    char *text = capture(print_breakdown_cb, p);
    assert_non_null(strstr(text, "RANGE TIME BREAKDOWN"));
    assert_non_null(strstr(text, "Transfer (ms)"));
    assert_non_null(strstr(text, " 2.500        "));
    assert_non_null(strstr(text, " 2.000\n"));
    free(text);
    gp_profiler_reset(p);
    /* profile_call_n: every iteration's events are 1 ms apart after the script. */
    gp_call_stats cs;
    assert_int_equal(gp_profile_call_n(p, "fn", NULL, NULL, 1, 1, &cs), GP_EINVAL);
    assert_int_equal(gp_profile_call_n(p, "fn", side_effect_arg, NULL, 3, 10, &cs), GP_OK);
    assert_int_equal(cs.iterations, 10);
    assert_true(cs.min <= cs.p50 && cs.p50 <= cs.max && cs.p99 <= cs.max);
    assert_true(cs.has_gpu);
    assert_true(cs.gpu_mean_ns > 999999.0 && cs.gpu_mean_ns < 1000001.0);
    t = to_trace(p);
    assert_int_equal(count_named(t, "fn"), 10);
    gp_trace_free(t);
    gp_profiler_destroy(p);
    fake_cuda_counts c;
    fake.counts(&c);
    assert_int_equal(c.syncs, 0);
}

static void fake_cuda_memory_tracker_report(void **state)
{
    fake.reset();
    fake.mem((size_t)12 << 30, (size_t)16 << 30);
    fake.pool(1, (uint64_t)48 << 20, (uint64_t)96 << 20);
    gp_profiler *p = new_prof(0, 0);
    gp_mem_tracker *m = gp_profiler_mem_tracker(p);
    assert_int_equal(gp_mem_track(m, "weights", "1024x1024", "float32", 4 << 20), GP_OK);
    gp_range_begin(p, "forward", NULL);
    assert_int_equal(gp_mem_track(m, "activations", "64x256x256", "float16", 8 << 20), GP_OK);
    assert_int_equal(gp_mem_untrack(m, "activations"), GP_OK);
    assert_int_equal(gp_mem_track(m, "logits", "64x1000", "float32", 256000), GP_OK);
    gp_range_end(p);
    assert_int_equal(gp_mem_untrack(m, "nope"), GP_ENOENT);
    assert_int_equal(gp_mem_track(m, "bad", "", "", -1), GP_EINVAL);
    gp_mem_status s;
    gp_mem_status_get(m, &s);
    assert_int_equal(s.tracked_bytes, (4 << 20) + 256000);
    assert_int_equal(s.peak_bytes, 12 << 20);
    assert_int_equal(s.buffers, 2);
    assert_true(s.has_device);
    assert_int_equal(s.free_bytes, (int64_t)12 << 30);
    assert_true(s.has_pool);
    assert_int_equal(s.pool_used, 48 << 20);
    char *text = capture(mem_print_cb, m);
    check_golden("memory_report.txt", text);
    free(text);
    gp_trace *t = to_trace(p);
    const char *a = gp_event_args_json(t, find_named(t, "forward", 0));
    assert_non_null(a);
    char want[128];
    snprintf(want, sizeof want, "\"mem_delta_bytes\":256000,\"mem_peak_bytes\":%d", 12 << 20);
    assert_non_null(strstr(a, want));
    gp_trace_free(t);
    /* No pool support: reported as n/a, not 0. */
    fake.pool(0, 0, 0);
    gp_mem_status_get(m, &s);
    assert_false(s.has_pool);
    gp_profiler_destroy(p);
}

/* The tracker's points and the ranges are on one clock. With every conversion of the profiler's
 * ticks skewed by a second either way (gp__tsc_test_skew_ns: a miscalibrated TSC, writ large), a
 * change made inside a range is still inside it and one made after it is not. Stamped with
 * CLOCK_MONOTONIC, as they were before, the points fell outside the range (delta 0, or the peak of
 * the whole history). */
static void memory_changes_stay_in_their_range_under_a_skewed_clock(void **state)
{
    (void)state;
    static const int64_t skews[] = {1000000000, -1000000000};
    for (size_t k = 0; k < sizeof skews / sizeof *skews; k++) {
        gp_profiler *p = new_prof(0, 0);
        gp_mem_tracker *m = gp_profiler_mem_tracker(p);
        gp__tsc_test_skew_ns(skews[k]);
        assert_int_equal(gp_mem_track(m, "weights", "", "", 1000), GP_OK);
        gp_range_begin(p, "step", NULL);
        assert_int_equal(gp_mem_track(m, "scratch", "", "", 5000), GP_OK);
        assert_int_equal(gp_mem_untrack(m, "scratch"), GP_OK);
        assert_int_equal(gp_mem_track(m, "out", "", "", 300), GP_OK);
        gp_range_end(p);
        assert_int_equal(gp_mem_track(m, "later", "", "", 70000), GP_OK);
        gp_trace *t = to_trace(p);
        gp__tsc_test_skew_ns(0);
        const char *a = gp_event_args_json(t, find_named(t, "step", 0));
        assert_non_null(a);
        if (!strstr(a, "\"mem_delta_bytes\":300,\"mem_peak_bytes\":6000"))
            fail_msg("skew %lld ns: step's args %s", (long long)skews[k], a);
        gp_trace_free(t);
        gp_profiler_destroy(p);
    }
}

/* Waits (up to 10 s, for loaded machines) until the sampler took k more samples. */
static void wait_samples(gp_mem_tracker *m, size_t k)
{
    gp__mutex_lock(&m->lock);
    size_t target = m->n_samples + k;
    gp__mutex_unlock(&m->lock);
    for (int i = 0; i < 10000; i++) {
        gp__mutex_lock(&m->lock);
        size_t n = m->n_samples;
        gp__mutex_unlock(&m->lock);
        if (n >= target)
            return;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    fail_msg("the sampler took no samples for 10 s");
}

static void fake_cuda_memory_sampler_finds_peak_range(void **state)
{
    fake.reset();
    fake.mem((size_t)15 << 30, (size_t)16 << 30);
    gp_profiler *p = new_prof(0, 0);
    gp_mem_tracker *m = gp_profiler_mem_tracker(p);
    assert_int_equal(gp_mem_sampler_start(m, 1), GP_OK);
    assert_int_equal(gp_mem_sampler_start(m, 1), GP_ESTATE);
    wait_samples(m, 3);
    gp_range_begin(p, "outer", NULL);
    gp_range_begin(p, "peak_here", NULL);
    fake.mem((size_t)10 << 30, (size_t)16 << 30);
    wait_samples(m, 3);
    fake.mem((size_t)15 << 30, (size_t)16 << 30);
    wait_samples(m, 2); /* the sample in flight may still see the peak */
    gp_range_end(p);
    gp_range_end(p);
    wait_samples(m, 3);
    gp_mem_sampler_stop(m);
    gp_mem_peak pk;
    assert_int_equal(gp_mem_sampler_peak(m, &pk), GP_OK);
    assert_true(pk.samples >= 3);
    assert_int_equal(pk.peak_bytes, (int64_t)6 << 30);
    assert_non_null(pk.open_range);
    assert_string_equal(pk.open_range, "peak_here");
    char *text = capture(mem_print_cb, m);
    assert_non_null(strstr(text, "Sampled device peak: 6144.000 MiB ("));
    assert_non_null(strstr(text, "range open at the peak: peak_here\n"));
    free(text);
    gp_trace *t = to_trace(p);
    assert_true(t->n_counters >= 3);
    assert_string_equal(gp_trace_str(t, t->counters[0].series), "gpu0.memory_used_bytes");
    gp_trace_free(t);
    gp_profiler_destroy(p);
}

static void fake_cuda_absent_driver_is_a_status(void **state)
{
    const gp__cuda *c = gp__cuda_reload("/nonexistent/libcuda.so.1");
    assert_int_equal(c->status, GP_ENODRIVER);
    gp_profiler *p = new_prof(0, 0);
    gp_cuda_timer *t = gp_profiler_cuda_timer(p);
    assert_int_equal(gp_cuda_timer_start(t, "k", NULL), GP_ENODRIVER);
    assert_int_equal(gp_cuda_timer_stop(t, "k"), GP_ENODRIVER);
    gp_mem_tracker *m = gp_profiler_mem_tracker(p);
    assert_int_equal(gp_mem_track(m, "host_side", "10", "int8", 10), GP_OK);
    assert_int_equal(gp_mem_sampler_start(m, 5), GP_ENODRIVER);
    gp_mem_status s;
    gp_mem_status_get(m, &s);
    assert_int_equal(s.driver, GP_ENODRIVER);
    assert_false(s.has_device);
    char *text = capture(timer_print_cb, t);
    assert_non_null(strstr(text, "status: no CUDA driver"));
    free(text);
    text = capture(mem_print_cb, m);
    assert_non_null(strstr(text, "Device memory: no CUDA driver"));
    assert_non_null(strstr(text, "Memory pool: n/a"));
    free(text);
    /* CPU ranges, GPU-tagged ranges and call_n still work. */
    gp_range_begin(p, "gpu_but_no_driver", &(gp_range_opts){.device = GP_DEVICE_GPU});
    gp_range_end(p);
    gp_call_stats cs;
    assert_int_equal(gp_profile_call_n(p, "f", side_effect_arg, NULL, 0, 3, &cs), GP_OK);
    assert_false(cs.has_gpu);
    gp_trace *tr = to_trace(p);
    assert_int_equal(count_named(tr, "gpu_but_no_driver"), 1);
    assert_null(strstr(gp_event_args_json(tr, find_named(tr, "gpu_but_no_driver", 0)), "gpu_ns"));
    gp_trace_free(tr);
    gp_profiler_destroy(p);
    assert_int_equal(gp__cuda_reload(getenv("GPUPROF_CUDA_LIBRARY"))->status, GP_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nesting_records_parent_and_children),
        cmocka_unit_test(scopes_end_on_every_exit_path),
        cmocka_unit_test(threads_record_into_their_own_tracks),
        cmocka_unit_test(exited_threads_states_are_reused),
        cmocka_unit_test(sampling_keeps_whole_top_level_ranges),
        cmocka_unit_test(drops_are_counted_and_memory_bounded),
        cmocka_unit_test(enable_disable_and_reset),
        cmocka_unit_test(tags_and_measurements_go_into_args),
        cmocka_unit_test(summary_and_bottlenecks_print_in_summary_format),
        cmocka_unit_test(folded_export_has_self_times),
        cmocka_unit_test(export_json_meta_has_profile),
        cmocka_unit_test(exports_to_bad_paths_fail_cleanly),
        cmocka_unit_test(export_round_trip_gives_same_statistics),
        cmocka_unit_test(instrument_functions_names_by_dladdr),
        cmocka_unit_test(nvtx_injection_records_ranges),
    };
    const struct CMUnitTest fake_tests[] = {
        cmocka_unit_test(fake_cuda_timers_resolve_lazily),
        cmocka_unit_test(fake_cuda_gpu_ranges_and_call_n),
        cmocka_unit_test(fake_cuda_memory_tracker_report),
        cmocka_unit_test(memory_changes_stay_in_their_range_under_a_skewed_clock),
        cmocka_unit_test(fake_cuda_memory_sampler_finds_peak_range),
        cmocka_unit_test(fake_cuda_absent_driver_is_a_status),
    };
    int rc = cmocka_run_group_tests_name("profiler", tests, NULL, NULL);
    rc += cmocka_run_group_tests_name("profiler_fake_cuda", fake_tests, fake_setup, NULL);
    return rc;
}
