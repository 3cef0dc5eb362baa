/* TSC calibration: see tsc.h. */
#include "produce/profiler/tsc.h"

#include "core/lock.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if GP__HAVE_RDTSC
#include <cpuid.h>
#endif

#define MAX_SEGS 64 /* refinements double the baseline: 100 ms * 2^62 is never reached */
#define FIRST_REFINE_NS 100000000

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static gp__mutex g_lock = GP_MUTEX_INIT;
static gp__tsc_info g_info GP_GUARDED_BY(g_lock);
static uint64_t g_tsc0 GP_GUARDED_BY(g_lock); /* the calibration's first pair */
static int64_t g_ns0 GP_GUARDED_BY(g_lock);
/* Append-only, written under g_lock: entries below g_n_segs never change, so a snapshot reads
 * them without the lock (its n_segs was read under it). */
static gp__tick_seg g_segs[MAX_SEGS];
static size_t g_n_segs GP_GUARDED_BY(g_lock);
static int64_t g_next_refine GP_GUARDED_BY(g_lock); /* baseline (ns) of the next refinement */
static int64_t g_skew GP_GUARDED_BY(g_lock);

#if GP__HAVE_RDTSC
/* One (tsc, monotonic) pair: the TSC read bracketed by two clock reads; the narrowest of a few
 * tries wins, and the TSC is paired with the midpoint. */
static void sample_pair(uint64_t *tsc, int64_t *ns)
{
    int64_t best_w = INT64_MAX;
    for (int i = 0; i < 16; i++) {
        int64_t a = gp__clock_ns();
        uint64_t t = __rdtsc();
        int64_t b = gp__clock_ns();
        if (b - a < best_w) {
            best_w = b - a;
            *tsc = t;
            *ns = a + (b - a) / 2;
        }
    }
}

/* The TSC, not read ahead of or behind the instructions around it (segment starts and snapshot
 * limits are read with the lock held, so that they order against the ticks of other threads). */
static uint64_t tick_fenced(void)
{
    _mm_lfence();
    uint64_t t = __rdtsc();
    _mm_lfence();
    return t;
}

static bool cpu_invariant_tsc(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return false;
    __cpuid(0x80000007u, a, b, c, d);
    return (d >> 8) & 1u;
}
#endif

static void init_once(void)
{
    gp__mutex_lock(&g_lock); /* once; taken so that every write of the state is under it */
    g_info.use_tsc = false;
    g_info.reason = "";
#if GP__HAVE_RDTSC
    g_info.invariant = cpu_invariant_tsc();
    const char *env = getenv("GPUPROF_CLOCK");
    if (env && strcmp(env, "monotonic") == 0) {
        g_info.reason = "GPUPROF_CLOCK=monotonic";
    } else if (!g_info.invariant) {
        g_info.reason = "no invariant TSC";
    } else {
        uint64_t t0, t1;
        int64_t n0, n1;
        sample_pair(&t0, &n0);
        /* Spin ~3 ms: long enough for a ratio within ~1e-4, refined later over the run. */
        do {
            sample_pair(&t1, &n1);
        } while (n1 - n0 < 3000000);
        double ghz = (double)(t1 - t0) / (double)(n1 - n0);
        if (t1 > t0 && ghz > 0.1 && ghz < 20.0) {
            g_info.use_tsc = true;
            g_info.ghz = ghz;
            g_tsc0 = t0;
            g_ns0 = n0;
            g_segs[0] = (gp__tick_seg){t0, n0, 1.0 / ghz};
            g_n_segs = 1;
            g_next_refine = FIRST_REFINE_NS;
        } else {
            g_info.reason = "TSC calibration out of range";
        }
    }
#else
    g_info.reason = "not x86";
#endif
    gp__mutex_unlock(&g_lock);
}

void gp__tsc_init(void)
{
    pthread_once(&g_once, init_once);
}

void gp__tsc_get_info(gp__tsc_info *out)
{
    gp__tsc_init();
    gp__mutex_lock(&g_lock);
    *out = g_info;
    gp__mutex_unlock(&g_lock);
}

/* The snapshot of the current segments (lock held). */
static void snapshot_locked(gp__tick_conv *c) GP_REQUIRES(g_lock)
{
    c->use_tsc = g_info.use_tsc;
    c->segs = g_segs;
    c->n_segs = g_n_segs;
    c->skew_ns = g_skew;
    c->until = UINT64_MAX;
#if GP__HAVE_RDTSC
    if (c->use_tsc)
        c->until = tick_fenced();
#endif
}

#if GP__HAVE_RDTSC
/* Starts a new segment at the current tick (lock held): continuous with the last one, with the
 * ratio r (ns per tick) measured over the baseline, plus the slew that brings the conversion back
 * to CLOCK_MONOTONIC (n at tick t) one baseline later. */
static void add_segment_locked(uint64_t t, int64_t n, double r) GP_REQUIRES(g_lock)
{
    const gp__tick_seg *last = &g_segs[g_n_segs - 1];
    uint64_t start = tick_fenced();
    int64_t v = last->ns0 + (int64_t)((double)(int64_t)(start - last->tsc0) * last->ns_per_tick);
    double truth = (double)n + (double)(int64_t)(start - t) * r;
    double slope = r + (truth - (double)v) / (double)(start - g_tsc0);
    if (slope < r / 2)
        slope = r / 2;
    if (slope > r * 2)
        slope = r * 2;
    g_segs[g_n_segs] = (gp__tick_seg){start, v, slope};
    g_n_segs++;
}
#endif

void gp__tick_conv_get(gp__tick_conv *c)
{
    gp__tsc_init();
    memset(c, 0, sizeof(*c));
    gp__mutex_lock(&g_lock);
    bool use_tsc = g_info.use_tsc;
    if (!use_tsc)
        snapshot_locked(c);
    gp__mutex_unlock(&g_lock);
    if (!use_tsc)
        return;
#if GP__HAVE_RDTSC
    uint64_t t;
    int64_t n;
    sample_pair(&t, &n);
    gp__mutex_lock(&g_lock);
    int64_t base = n - g_ns0;
    if (base >= g_next_refine && t > g_tsc0 && g_n_segs < MAX_SEGS) {
        double r = (double)base / (double)(t - g_tsc0);
        add_segment_locked(t, n, r);
        g_info.ghz = 1.0 / r;
        g_next_refine = 2 * base;
    }
    snapshot_locked(c);
    gp__mutex_unlock(&g_lock);
#endif
}

void gp__tick_conv_refresh(gp__tick_conv *c)
{
    gp__mutex_lock(&g_lock);
    snapshot_locked(c);
    gp__mutex_unlock(&g_lock);
}

const gp__tick_seg *gp__tick_seg_find(const gp__tick_conv *c, uint64_t ticks)
{
    size_t lo = 0, hi = c->n_segs; /* the first segment that starts after ticks */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->segs[mid].tsc0 <= ticks)
            lo = mid + 1;
        else
            hi = mid;
    }
    return &c->segs[lo ? lo - 1 : 0];
}

void gp__tsc_test_skew_ns(int64_t ns)
{
    gp__tsc_init();
    gp__mutex_lock(&g_lock);
    g_skew = ns;
    gp__mutex_unlock(&g_lock);
}
