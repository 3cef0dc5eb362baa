/* The in-process profiler: instances and their lifetime, run-time control (enable, sampling),
 * flush of the thread rings into the store, reset, statistics, gp_profile_call_n. The hot path
 * (threads, rings, ranges, tags) is in ranges.c. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/stats.h"
#include "produce/profiler/cuda_driver.h"
#include "produce/profiler/profiler_internal.h"

static _Atomic uint64_t g_next_uid = 1;

/* ---- creation ------------------------------------------------------------------------------ */

void gp_profiler_opts_init(gp_profiler_opts *opts)
{
    memset(opts, 0, sizeof(*opts));
    opts->ring_records = 65536;
    opts->memory_budget = (size_t)256 << 20;
    opts->enabled = true;
    opts->sampling = 1.0;
}

static uint32_t threshold_of(double fraction)
{
    double t = fraction * 4294967296.0;
    return t >= 4294967295.0 ? UINT32_MAX : (uint32_t)t;
}

gp_status gp_profiler_create(const gp_profiler_opts *opts, gp_profiler **out)
{
    gp_profiler_opts o;
    if (opts)
        o = *opts;
    else
        gp_profiler_opts_init(&o);
    if (!(o.sampling > 0.0 && o.sampling <= 1.0))
        return GP_EINVAL;
    gp__tsc_init();
    gp_profiler *p = calloc(1, sizeof(*p));
    if (!p)
        return GP_ENOMEM;
    if (gp__strtab_init(&p->names) != GP_OK) {
        free(p);
        return GP_ENOMEM;
    }
    p->names_ok = true;
    gp__tsc_info ti;
    gp__tsc_get_info(&ti);
    p->use_tsc = ti.use_tsc;
    p->cpu_time_all = o.cpu_time;
    size_t rr = 64;
    while (rr < o.ring_records && rr < ((size_t)1 << 30))
        rr <<= 1;
    p->ring_records = rr;
    atomic_init(&p->budget_left,
                (int64_t)(o.memory_budget ? o.memory_budget : ((size_t)256 << 20)));
    p->uid = atomic_fetch_add(&g_next_uid, 1) & 0xffffff;
    p->sampling = o.sampling;
    atomic_init(&p->sample_threshold, threshold_of(o.sampling));
    uint64_t key = (p->uid << GP__KEY_UID_SHIFT) | GP__KEY_EPOCH_ONE |
                   (o.enabled ? GP__KEY_ENABLED : 0) | (o.sampling < 1.0 ? GP__KEY_SAMPLING : 0);
    __atomic_store_n(&p->head.key, key, __ATOMIC_RELEASE);
    gp__prof_threads_init();
    if (gp__prof_registry_add(p->uid) != GP_OK) {
        gp__strtab_free(&p->names);
        free(p);
        return GP_ENOMEM;
    }
    gp__mutex_init(&p->lock);
    gp__timer_init(&p->timer, p);
    gp__mem_init(&p->mem, p);
    *out = p;
    return GP_OK;
}

void gp_profiler_destroy(gp_profiler *p)
{
    if (!p)
        return;
    gp__prof_registry_remove(p->uid); /* from now on no exiting thread touches its states */
    gp__mem_fini(&p->mem);
    gp__timer_fini(&p->timer);
    const gp__cuda *c = gp__cuda_get();
    for (size_t i = 0; i < p->n_exts; i++) {
        if (c->status == GP_OK) {
            gp__cuda_event_put(c, p->exts[i].ev0);
            gp__cuda_event_put(c, p->exts[i].ev1);
        }
    }
    for (size_t i = 0; i < p->n_threads; i++) {
        free(p->threads[i]->ring);
        free(p->threads[i]->ext_ring);
        free(p->threads[i]);
    }
    /* Forget this thread's cache entries (other threads' caches are keyed by the unique id). */
    gp__prof_forget_thread_cache(p->uid);
    free(p->threads);
    free(p->recs);
    free(p->exts);
    if (p->names_ok)
        gp__strtab_free(&p->names);
    gp__mutex_destroy(&p->lock);
    free(p);
}

static pthread_once_t g_global_once = PTHREAD_ONCE_INIT;
static gp_profiler *_Atomic g_global;

static void global_init(void)
{
    gp_profiler_opts o;
    gp_profiler_opts_init(&o);
    const char *d = getenv("GPUPROF_DISABLE");
    if (d && strcmp(d, "1") == 0)
        o.enabled = false;
    gp_profiler *p = NULL;
    if (gp_profiler_create(&o, &p) == GP_OK)
        atomic_store_explicit(&g_global, p, memory_order_release);
}

gp_profiler *gp_profiler_global(void)
{
    gp_profiler *p = atomic_load_explicit(&g_global, memory_order_acquire);
    if (__builtin_expect(p != NULL, 1))
        return p;
    pthread_once(&g_global_once, global_init);
    return atomic_load_explicit(&g_global, memory_order_acquire);
}

gp_profiler *gp__prof_resolve(gp_profiler *p)
{
    return p ? p : gp_profiler_global();
}

/* ---- control ------------------------------------------------------------------------------- */

/* Applies f to the key with a new epoch (open ranges are discarded by their threads). */
static void key_update(gp_profiler *p, uint64_t set, uint64_t clear)
{
    uint64_t k = __atomic_load_n(&p->head.key, __ATOMIC_RELAXED);
    uint64_t nk;
    do {
        uint64_t epoch = ((k & GP__KEY_EPOCH_MASK) + GP__KEY_EPOCH_ONE) & GP__KEY_EPOCH_MASK;
        nk = ((k & ~GP__KEY_EPOCH_MASK) | epoch | set) & ~clear;
    } while (!__atomic_compare_exchange_n(&p->head.key, &k, nk, true, __ATOMIC_ACQ_REL,
                                          __ATOMIC_RELAXED));
}

void gp_profiler_enable(gp_profiler *p, bool on)
{
    p = gp__prof_resolve(p);
    if (!p)
        return;
    bool was = gp_profiler_enabled(p);
    if (on)
        key_update(p, GP__KEY_ENABLED, 0);
    else
        key_update(p, 0, GP__KEY_ENABLED);
    if (was != on)
        gp__timer_drop_open(&p->timer);
}

bool gp_profiler_enabled(gp_profiler *p)
{
    p = gp__prof_resolve(p);
    return p && (__atomic_load_n(&p->head.key, __ATOMIC_ACQUIRE) & GP__KEY_ENABLED);
}

gp_status gp_profiler_set_sampling(gp_profiler *p, double fraction)
{
    p = gp__prof_resolve(p);
    if (!p)
        return GP_ENOMEM;
    if (!(fraction > 0.0 && fraction <= 1.0))
        return GP_EINVAL;
    gp__mutex_lock(&p->lock);
    p->sampling = fraction;
    gp__mutex_unlock(&p->lock);
    atomic_store(&p->sample_threshold, threshold_of(fraction));
    if (fraction < 1.0)
        key_update(p, GP__KEY_SAMPLING, 0);
    else
        key_update(p, 0, GP__KEY_SAMPLING);
    return GP_OK;
}

/* ---- flush --------------------------------------------------------------------------------- */

static void release_events(const gp__prof_ext *e)
{
    if (!e->ev0 && !e->ev1)
        return;
    const gp__cuda *c = gp__cuda_get();
    gp__cuda_event_put(c, e->ev0);
    gp__cuda_event_put(c, e->ev1);
}

void gp__prof_flush_locked(gp_profiler *p)
{
    /* Each range is converted to ns exactly once, here, so that every export of it agrees. */
    gp__tick_conv conv;
    gp__tick_conv_get(&conv);
    for (size_t i = 0; i < p->n_threads; i++) {
        gp__prof_thread *st = p->threads[i];
        if (!st->ring)
            continue;
        uint64_t h = atomic_load_explicit(&st->head_pub, memory_order_acquire);
        uint64_t t = atomic_load_explicit(&st->tail, memory_order_relaxed);
        uint64_t et = atomic_load_explicit(&st->ext_tail, memory_order_relaxed);
        for (; t < h; t++) {
            const gp__prof_rec *r = &st->ring[t & st->mask];
            const gp__prof_ext *e = NULL;
            if (r->flags & GP__REC_EXT)
                e = &st->ext_ring[et++ & st->ext_mask];
            if (r->t0 < p->floor_ticks) {
                if (e)
                    release_events(e);
                continue;
            }
            size_t need = sizeof(gp__prof_srec) + (e ? sizeof(gp__prof_ext) : 0);
            if (!gp__prof_budget_take(p, need)) {
                p->dropped_store++;
                if (e)
                    release_events(e);
                continue;
            }
            uint32_t ext_idx = 0;
            if (e) {
                gp__prof_ext *se = GP_PUSH(p->exts, p->n_exts, p->cap_exts);
                if (!se) {
                    p->dropped_store++;
                    release_events(e);
                    continue;
                }
                *se = *e;
                ext_idx = (uint32_t)p->n_exts;
            }
            gp__prof_srec *s = GP_PUSH(p->recs, p->n_recs, p->cap_recs);
            if (!s) {
                p->dropped_store++;
                continue;
            }
            s->name = r->name;
            s->t0 = gp__tick_conv_ns(&conv, r->t0);
            s->t1 = gp__tick_conv_ns(&conv, r->t1);
            if (s->t1 < s->t0)
                s->t1 = s->t0;
            s->tid = st->tid;
            s->ext = ext_idx;
            s->depth = r->depth;
            s->flags = r->flags;
        }
        atomic_store_explicit(&st->ext_tail, et, memory_order_release);
        atomic_store_explicit(&st->tail, h, memory_order_release);
    }
}

void gp_profiler_flush(gp_profiler *p)
{
    p = gp__prof_resolve(p);
    if (!p)
        return;
    gp__mutex_lock(&p->lock);
    gp__prof_flush_locked(p);
    gp__prof_resolve_gpu_locked(p, false);
    gp__mutex_unlock(&p->lock);
}

void gp__prof_resolve_gpu_locked(gp_profiler *p, bool wait)
{
    const gp__cuda *c = NULL;
    int64_t deadline = gp__clock_ns() + 2000000000LL;
    for (size_t i = 0; i < p->n_exts; i++) {
        gp__prof_ext *e = &p->exts[i];
        if (!e->ev0)
            continue;
        if (!c)
            c = gp__cuda_get();
        if (e->ev1) {
            for (;;) {
                gp__CUresult r = c->cuEventQuery(e->ev1);
                if (r == GP__CUDA_SUCCESS) {
                    float ms = 0;
                    if (c->cuEventElapsedTime(&ms, e->ev0, e->ev1) == GP__CUDA_SUCCESS)
                        e->gpu_ns = (int64_t)((double)ms * 1e6 + 0.5);
                    break;
                }
                if (r != GP__CUDA_ERROR_NOT_READY || !wait || gp__clock_ns() > deadline)
                    break;
                struct timespec ts = {0, 100000};
                nanosleep(&ts, NULL);
            }
            if (e->gpu_ns < 0 && !wait)
                continue; /* still pending: keep the events */
        }
        gp__cuda_event_put(c, e->ev0);
        gp__cuda_event_put(c, e->ev1);
        e->ev0 = e->ev1 = NULL;
    }
}

void gp_profiler_reset(gp_profiler *p)
{
    p = gp__prof_resolve(p);
    if (!p)
        return;
    key_update(p, 0, 0); /* new epoch: open ranges are discarded */
    gp__mutex_lock(&p->lock);
    gp__prof_flush_locked(p);
    for (size_t i = 0; i < p->n_exts; i++)
        release_events(&p->exts[i]);
    int64_t freed = (int64_t)(p->n_recs * sizeof(gp__prof_srec) + p->n_exts * sizeof(gp__prof_ext));
    atomic_fetch_add(&p->budget_left, freed);
    p->n_recs = 0;
    p->n_exts = 0;
    p->dropped_store = 0;
    p->floor_ticks = gp__ticks_now(p->use_tsc);
    for (size_t i = 0; i < p->n_threads; i++) {
        /* The counters are written by their threads; a reset zeroes what is reported by taking
         * the current values as the new baseline. */
        gp__prof_thread *st = p->threads[i];
        st->dropped_base = atomic_load_explicit(&st->dropped, memory_order_relaxed);
        st->sampled_base = atomic_load_explicit(&st->sampled_out, memory_order_relaxed);
    }
    gp__mutex_unlock(&p->lock);
    gp__timer_reset(&p->timer);
    gp__mem_reset(&p->mem);
}

const char *gp_profiler_intern(gp_profiler *p, const char *s)
{
    p = gp__prof_resolve(p);
    if (!p || !s)
        return NULL;
    gp__mutex_lock(&p->lock);
    uint32_t id;
    const char *r = NULL;
    if (gp__strtab_intern(&p->names, s, strlen(s), &id) == GP_OK)
        r = gp__strtab_get(&p->names, id);
    gp__mutex_unlock(&p->lock);
    return r;
}

/* ---- statistics ---------------------------------------------------------------------------- */

static pthread_once_t g_cost_once = PTHREAD_ONCE_INIT;
static double g_pair_cost;

static void measure_pair_cost(void)
{
    gp_profiler_opts o;
    gp_profiler_opts_init(&o);
    o.ring_records = 4096;
    gp_profiler *q = NULL;
    if (gp_profiler_create(&o, &q) != GP_OK)
        return;
    enum { BATCH = 256, ROUNDS = 15 };
    int64_t med[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        int64_t a = gp__clock_ns();
        for (int i = 0; i < BATCH; i++) {
            gp_range_begin(q, "cost", NULL);
            gp_range_end(q);
        }
        int64_t b = gp__clock_ns();
        med[r] = b - a;
        gp_profiler_reset(q);
    }
    gp__sort_i64(med, ROUNDS);
    g_pair_cost = (double)med[ROUNDS / 2] / BATCH;
    gp_profiler_destroy(q);
}

double gp__prof_pair_cost_ns(void)
{
    pthread_once(&g_cost_once, measure_pair_cost);
    return g_pair_cost;
}

void gp_profiler_get_stats(gp_profiler *p, gp_profiler_stats *out)
{
    memset(out, 0, sizeof(*out));
    p = gp__prof_resolve(p);
    if (!p)
        return;
    out->overhead_ns = gp__prof_pair_cost_ns();
    gp__mutex_lock(&p->lock);
    gp__prof_flush_locked(p);
    out->ranges = p->n_recs;
    out->dropped = p->dropped_store;
    for (size_t i = 0; i < p->n_threads; i++) {
        gp__prof_thread *st = p->threads[i];
        out->dropped += atomic_load_explicit(&st->dropped, memory_order_relaxed) - st->dropped_base;
        out->sampled_out +=
            atomic_load_explicit(&st->sampled_out, memory_order_relaxed) - st->sampled_base;
    }
    out->threads = p->n_threads;
    gp__mutex_unlock(&p->lock);
    gp__tsc_info ti;
    gp__tsc_get_info(&ti);
    out->clock = p->use_tsc ? "tsc" : "monotonic";
    out->tsc_ghz = p->use_tsc ? ti.ghz : 0.0;
    out->tsc_invariant = ti.invariant;
}

/* ---- profiling a function ------------------------------------------------------------------ */

gp_status gp_profile_call_n(gp_profiler *p, const char *name, void (*fn)(void *), void *arg,
                            unsigned warmup, unsigned iterations, gp_call_stats *out)
{
    p = gp__prof_resolve(p);
    if (!p)
        return GP_ENOMEM;
    if (!fn || !name || iterations == 0)
        return GP_EINVAL;
    for (unsigned i = 0; i < warmup; i++)
        fn(arg);
    int64_t *wall = malloc(sizeof(int64_t) * iterations);
    int64_t *gpu = malloc(sizeof(int64_t) * iterations);
    if (!wall || !gpu) {
        free(wall);
        free(gpu);
        return GP_ENOMEM;
    }
    const gp__cuda *c = gp__cuda_get();
    bool use_gpu = c->status == GP_OK && gp__cuda_ensure_context(c) == GP_OK;
    void *e0 = NULL, *e1 = NULL;
    if (use_gpu && (gp__cuda_event_get(c, &e0) != GP_OK || gp__cuda_event_get(c, &e1) != GP_OK))
        use_gpu = false;
    gp__mutex_lock(&p->mem.lock);
    int64_t peak_before = p->mem.peak;
    p->mem.peak = p->mem.total; /* measure the peak of these iterations */
    gp__mutex_unlock(&p->mem.lock);
    size_t n_gpu = 0;
    for (unsigned i = 0; i < iterations; i++) {
        if (use_gpu)
            c->cuEventRecord(e0, NULL);
        int64_t a = gp__clock_ns();
        gp_range_begin(p, name, NULL);
        fn(arg);
        gp_range_end(p);
        int64_t b = gp__clock_ns();
        wall[i] = b - a;
        if (use_gpu && c->cuEventRecord(e1, NULL) == GP__CUDA_SUCCESS) {
            /* Measuring GPU time per iteration needs the events to complete: this is the one
             * place that waits, outside any recorded range. */
            int spins = 0;
            while (c->cuEventQuery(e1) == GP__CUDA_ERROR_NOT_READY && spins++ < 2000000) {
                struct timespec ts = {0, 1000};
                nanosleep(&ts, NULL);
            }
            float ms = 0;
            if (c->cuEventElapsedTime(&ms, e0, e1) == GP__CUDA_SUCCESS)
                gpu[n_gpu++] = (int64_t)((double)ms * 1e6 + 0.5);
        }
    }
    if (use_gpu) {
        gp__cuda_event_put(c, e0);
        gp__cuda_event_put(c, e1);
    }
    memset(out, 0, sizeof(*out));
    gp__stats st;
    gp__stats_compute(wall, iterations, &st);
    out->iterations = iterations;
    GP__STATS_COPY(out, st);
    if (n_gpu) {
        gp__stats gs;
        gp__stats_compute(gpu, n_gpu, &gs);
        out->has_gpu = true;
        out->gpu_mean_ns = gs.mean;
    }
    gp__mutex_lock(&p->mem.lock);
    if (p->mem.n_bufs > 0 || p->mem.peak > 0) {
        out->has_memory = true;
        out->peak_bytes = p->mem.peak;
    }
    if (peak_before > p->mem.peak)
        p->mem.peak = peak_before;
    gp__mutex_unlock(&p->mem.lock);
    free(wall);
    free(gpu);
    return GP_OK;
}
