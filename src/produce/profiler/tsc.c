/* TSC calibration: see tsc.h. */
#include "produce/profiler/tsc.h"

#include "core/lock.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if GP__HAVE_RDTSC
#include <cpuid.h>
#endif

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static gp__mutex g_lock = GP_MUTEX_INIT;
static gp__tsc_info g_info GP_GUARDED_BY(g_lock);
static uint64_t g_tsc0 GP_GUARDED_BY(g_lock);
static int64_t g_ns0 GP_GUARDED_BY(g_lock);
static double g_ns_per_tick GP_GUARDED_BY(g_lock);

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
            g_ns_per_tick = 1.0 / ghz;
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

void gp__tick_conv_get(gp__tick_conv *c)
{
    gp__tsc_init();
    memset(c, 0, sizeof(*c));
    gp__mutex_lock(&g_lock);
    bool use_tsc = g_info.use_tsc;
    gp__mutex_unlock(&g_lock);
    if (!use_tsc)
        return;
#if GP__HAVE_RDTSC
    uint64_t t;
    int64_t n;
    sample_pair(&t, &n);
    gp__mutex_lock(&g_lock);
    if (n - g_ns0 > 100000000 && t > g_tsc0) { /* > 100 ms of baseline */
        g_ns_per_tick = (double)(n - g_ns0) / (double)(t - g_tsc0);
        g_info.ghz = 1.0 / g_ns_per_tick;
    }
    c->use_tsc = true;
    c->tsc0 = g_tsc0;
    c->ns0 = g_ns0;
    c->ns_per_tick = g_ns_per_tick;
    gp__mutex_unlock(&g_lock);
#endif
}
