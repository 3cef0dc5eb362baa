/* Time stamp counter calibrated to CLOCK_MONOTONIC nanoseconds, with a clean fallback to
 * clock_gettime when the CPU has no invariant TSC (or GPUPROF_CLOCK=monotonic). Internal. */
#ifndef GP_PROFILER_TSC_H
#define GP_PROFILER_TSC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/clock.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define GP__HAVE_RDTSC 1
#else
#define GP__HAVE_RDTSC 0
#endif

typedef struct gp__tsc_info {
    bool use_tsc;       /* ticks are TSC; else ticks are CLOCK_MONOTONIC ns */
    bool invariant;     /* CPUID reports an invariant TSC */
    double ghz;         /* ticks per ns (0 when !use_tsc) */
    const char *reason; /* why the fallback was taken, or "" */
} gp__tsc_info;

/* Decides the clock and calibrates once per process (thread-safe). */
void gp__tsc_init(void);
/* The decision (after gp__tsc_init). */
void gp__tsc_get_info(gp__tsc_info *out);
/* The tick -> ns conversion is one continuous, increasing, piecewise-linear function of the tick,
 * the same for every caller: the calibration starts its first segment; each refinement (when the
 * baseline since calibration has doubled, from 100 ms on) starts a new segment at the tick it
 * reads, with the ratio measured over the whole baseline, slewed so that the segment meets
 * CLOCK_MONOTONIC again one baseline later. A tick already read is always converted by the segment
 * that held it then, so a tick converts to the same ns whenever it is converted, and two ticks
 * keep their order: ranges converted at flush and tracker points converted at export compare
 * exactly. Segments are append-only; those below a snapshot's n_segs never change. */
typedef struct gp__tick_seg {
    uint64_t tsc0;
    int64_t ns0;
    double ns_per_tick;
} gp__tick_seg;

/* A snapshot of the conversion, for batches of conversions without locking: valid for ticks read
 * up to `until` (gp__tick_conv_ns refreshes it for later ticks). */
typedef struct gp__tick_conv {
    bool use_tsc;
    const gp__tick_seg *segs;
    size_t n_segs;
    uint64_t until;
    int64_t skew_ns; /* gp__tsc_test_skew_ns */
} gp__tick_conv;

/* Refines the ratio when the baseline since calibration has doubled (a new segment) and returns
 * the snapshot. */
void gp__tick_conv_get(gp__tick_conv *c);
/* Retakes the snapshot (new segments) without refining. */
void gp__tick_conv_refresh(gp__tick_conv *c);
/* The segment of c that holds ticks (ticks before the first: the first), out of line. */
const gp__tick_seg *gp__tick_seg_find(const gp__tick_conv *c, uint64_t ticks);
/* Test hook: adds ns to every conversion from now on (0 turns it off), so that a test can show a
 * comparison that mixes the profiler's clock with another. Not for production use. */
void gp__tsc_test_skew_ns(int64_t ns);

/* ns of a tick read before now (CLOCK_MONOTONIC scale). */
static inline int64_t gp__tick_conv_ns(gp__tick_conv *c, uint64_t ticks)
{
    if (!c->use_tsc)
        return (int64_t)ticks + c->skew_ns;
    if (ticks > c->until) /* read after the snapshot: a later segment may hold it */
        gp__tick_conv_refresh(c);
    const gp__tick_seg *s = &c->segs[c->n_segs - 1];
    if (ticks < s->tsc0)
        s = gp__tick_seg_find(c, ticks);
    int64_t d = (int64_t)(ticks - s->tsc0); /* negative for ticks read before calibration */
    return s->ns0 + (int64_t)((double)d * s->ns_per_tick) + c->skew_ns;
}

/* The current tick. */
static inline uint64_t gp__ticks_now(bool use_tsc)
{
#if GP__HAVE_RDTSC
    if (use_tsc)
        return __rdtsc();
#endif
    (void)use_tsc;
    return (uint64_t)gp__clock_ns();
}

#endif
