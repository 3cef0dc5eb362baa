/* Time stamp counter calibrated to CLOCK_MONOTONIC nanoseconds, with a clean fallback to
 * clock_gettime when the CPU has no invariant TSC (or GPUPROF_CLOCK=monotonic). Internal. */
#ifndef GP_PROFILER_TSC_H
#define GP_PROFILER_TSC_H

#include <stdbool.h>
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
/* A snapshot of the tick -> ns conversion, for batches of conversions without locking. */
typedef struct gp__tick_conv {
    bool use_tsc;
    uint64_t tsc0;
    int64_t ns0;
    double ns_per_tick;
} gp__tick_conv;

/* Re-measures the ratio over the whole time since calibration (the longer the baseline, the
 * better the ratio) and returns the snapshot. */
void gp__tick_conv_get(gp__tick_conv *c);

static inline int64_t gp__tick_conv_ns(const gp__tick_conv *c, uint64_t ticks)
{
    if (!c->use_tsc)
        return (int64_t)ticks;
    int64_t d = (int64_t)(ticks - c->tsc0); /* negative for ticks read before calibration */
    return c->ns0 + (int64_t)((double)d * c->ns_per_tick);
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
