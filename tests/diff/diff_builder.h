/* Test helpers of the diff suites: synthetic runs built with the trace builder API, with exactly
 * known durations and gaps. Needs cmocka (include after <cmocka.h>). */
#ifndef GP_TESTS_DIFF_BUILDER_H
#define GP_TESTS_DIFF_BUILDER_H

#include <math.h>
#include <string.h>

#include "analyze/diff_stats.h"
#include "gpuprof/diff.h"
#include "gpuprof/trace.h"

/* A run under construction: events laid one after another on GPU stream (device 0, stream 7)
 * with a fixed 1 µs gap, so the idle time is known exactly. */
typedef struct builder {
    gp_trace *t;
    uint32_t track, cpu_track;
    gp_ns clock;
} builder;

static inline void b_init(builder *b, const char *name)
{
    assert_int_equal(gp_trace_create(name, &b->t), GP_OK);
    assert_int_equal(gp_trace_track(b->t, GP_TRACK_GPU_STREAM, 0, 7, &b->track), GP_OK);
    assert_int_equal(gp_trace_track(b->t, GP_TRACK_CPU_THREAD, 100, 101, &b->cpu_track), GP_OK);
    b->clock = 1000000;
}

static inline void b_add(builder *b, gp_event_kind kind, const char *name, gp_ns dur)
{
    gp_event ev = {0};
    assert_int_equal(gp_trace_intern(b->t, name, strlen(name), &ev.name), GP_OK);
    ev.kind = (uint8_t)kind;
    ev.ts = b->clock;
    ev.dur = dur;
    ev.track = gp_event_kind_is_gpu(kind) ? b->track : b->cpu_track;
    if (kind == GP_EV_KERNEL) {
        gp_gpu_info gi;
        gp_gpu_info_init(&gi);
        gi.device = 0;
        gi.stream = 7;
        assert_int_equal(gp_trace_add_gpu_info(b->t, &gi, &ev.extra), GP_OK);
    }
    assert_int_equal(gp_trace_add_event(b->t, &ev), GP_OK);
    b->clock += dur + 1000;
}

static inline void b_add_range(builder *b, const char *name, gp_ns dur, const char *args)
{
    gp_event ev = {0};
    assert_int_equal(gp_trace_intern(b->t, name, strlen(name), &ev.name), GP_OK);
    ev.kind = GP_EV_RANGE;
    ev.ts = b->clock;
    ev.dur = dur;
    ev.track = b->cpu_track;
    if (args)
        assert_int_equal(gp_trace_add_args(b->t, args, strlen(args), &ev.extra), GP_OK);
    assert_int_equal(gp_trace_add_event(b->t, &ev), GP_OK);
    b->clock += dur + 1000;
}

static inline gp_trace *b_done(builder *b)
{
    assert_int_equal(gp_trace_finish(b->t), GP_OK);
    return b->t;
}

/* Log-normal duration around median `med` ns with log-sd `sigma`. */
static inline gp_ns lognormal(gp__rng *r, double med, double sigma)
{
    return (gp_ns)llround(med * exp(sigma * gp__rng_normal(r)));
}

static inline const gp_diff_row *find_row(const gp_diff *d, const char *name)
{
    for (size_t i = 0; i < d->n_rows; i++)
        if (strcmp(d->rows[i].name, name) == 0)
            return &d->rows[i];
    return NULL;
}

#endif
