/* The in-process profiler: instances, per-thread rings, ranges, tags, sampling, flush.
 *
 * Hot path (gp_range_begin / gp_range_end): one relaxed load of the profiler's key (enabled bit,
 * sampling bit, epoch, instance id), one compare against a thread-local cache, a clock read and a
 * few stores into memory only this thread writes. The end publishes the record with a release
 * store of the ring head; flush (any thread, under the profiler lock) consumes up to that head and
 * releases the slots with a release store of the tail. No lock, no allocation, no syscall. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/stats.h"
#include "produce/profiler/cuda_driver.h"
#include "produce/profiler/profiler_internal.h"

#define KEY_ENABLED 1ull
#define KEY_SAMPLING 2ull
#define KEY_EPOCH_ONE 4ull
#define KEY_EPOCH_MASK 0x000000fffffffffcull
#define KEY_UID_SHIFT 40

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

static _Atomic uint64_t g_next_uid = 1;

/* Thread-local cache: the state of the last profiler used, plus a few more. */
#define TLS_SLOTS 8
typedef struct tls_cache {
    uint64_t key;
    gp__prof_thread *st;
    struct {
        uint64_t uid;
        gp__prof_thread *st;
    } slots[TLS_SLOTS];
    unsigned next;
} tls_cache;
static _Thread_local tls_cache tls;

/* Live instance ids, so that a thread's exit can mark its states dead without touching a
 * destroyed profiler. The key's destructor runs at thread exit (the TLS block is still valid). */
static pthread_mutex_t g_reg_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *g_live;
static size_t g_n_live, g_cap_live;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t g_exit_key;
static bool g_key_ok;

static void thread_exit(void *arg)
{
    tls_cache *c = arg;
    pthread_mutex_lock(&g_reg_lock);
    for (unsigned i = 0; i < TLS_SLOTS; i++) {
        if (!c->slots[i].st)
            continue;
        for (size_t j = 0; j < g_n_live; j++) {
            if (g_live[j] == c->slots[i].uid) {
                atomic_store_explicit(&c->slots[i].st->dead, true, memory_order_release);
                break;
            }
        }
        c->slots[i].st = NULL;
    }
    c->key = 0;
    c->st = NULL;
    pthread_mutex_unlock(&g_reg_lock);
}

static void key_init(void)
{
    g_key_ok = pthread_key_create(&g_exit_key, thread_exit) == 0;
}

static gp_status registry_add(uint64_t uid)
{
    pthread_mutex_lock(&g_reg_lock);
    gp_status st = GP_OK;
    uint64_t *slot = GP_PUSH(g_live, g_n_live, g_cap_live);
    if (slot)
        *slot = uid;
    else
        st = GP_ENOMEM;
    pthread_mutex_unlock(&g_reg_lock);
    return st;
}

static void registry_remove(uint64_t uid)
{
    pthread_mutex_lock(&g_reg_lock);
    for (size_t j = 0; j < g_n_live; j++) {
        if (g_live[j] == uid) {
            g_live[j] = g_live[--g_n_live];
            break;
        }
    }
    pthread_mutex_unlock(&g_reg_lock);
}

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
    uint64_t key = (p->uid << KEY_UID_SHIFT) | KEY_EPOCH_ONE | (o.enabled ? KEY_ENABLED : 0) |
                   (o.sampling < 1.0 ? KEY_SAMPLING : 0);
    __atomic_store_n(&p->head.key, key, __ATOMIC_RELEASE);
    pthread_once(&g_key_once, key_init);
    if (registry_add(p->uid) != GP_OK) {
        gp__strtab_free(&p->names);
        free(p);
        return GP_ENOMEM;
    }
    pthread_mutex_init(&p->lock, NULL);
    gp__timer_init(&p->timer);
    gp__mem_init(&p->mem, p);
    *out = p;
    return GP_OK;
}

void gp_profiler_destroy(gp_profiler *p)
{
    if (!p)
        return;
    registry_remove(p->uid); /* from now on no exiting thread touches its states */
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
    uint64_t uid = p->uid;
    if ((tls.key >> KEY_UID_SHIFT) == uid) {
        tls.key = 0;
        tls.st = NULL;
    }
    for (unsigned i = 0; i < TLS_SLOTS; i++)
        if (tls.slots[i].uid == uid)
            tls.slots[i].st = NULL, tls.slots[i].uid = 0;
    free(p->threads);
    free(p->recs);
    free(p->exts);
    if (p->names_ok)
        gp__strtab_free(&p->names);
    pthread_mutex_destroy(&p->lock);
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
    if (LIKELY(p != NULL))
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
        uint64_t epoch = ((k & KEY_EPOCH_MASK) + KEY_EPOCH_ONE) & KEY_EPOCH_MASK;
        nk = ((k & ~KEY_EPOCH_MASK) | epoch | set) & ~clear;
    } while (!__atomic_compare_exchange_n(&p->head.key, &k, nk, true, __ATOMIC_ACQ_REL,
                                          __ATOMIC_RELAXED));
}

void gp_profiler_enable(gp_profiler *p, bool on)
{
    p = gp__prof_resolve(p);
    if (!p)
        return;
    if (on)
        key_update(p, KEY_ENABLED, 0);
    else
        key_update(p, 0, KEY_ENABLED);
}

bool gp_profiler_enabled(gp_profiler *p)
{
    p = gp__prof_resolve(p);
    return p && (__atomic_load_n(&p->head.key, __ATOMIC_ACQUIRE) & KEY_ENABLED);
}

gp_status gp_profiler_set_sampling(gp_profiler *p, double fraction)
{
    p = gp__prof_resolve(p);
    if (!p)
        return GP_ENOMEM;
    if (!(fraction > 0.0 && fraction <= 1.0))
        return GP_EINVAL;
    pthread_mutex_lock(&p->lock);
    p->sampling = fraction;
    pthread_mutex_unlock(&p->lock);
    atomic_store(&p->sample_threshold, threshold_of(fraction));
    if (fraction < 1.0)
        key_update(p, KEY_SAMPLING, 0);
    else
        key_update(p, 0, KEY_SAMPLING);
    return GP_OK;
}

/* ---- threads ------------------------------------------------------------------------------- */

/* Returns the CUDA events of open frames (their ranges are being discarded). */
static void discard_open_frames(gp__prof_thread *st)
{
    const gp__cuda *c = NULL;
    for (uint32_t d = 0; d < st->depth && d < GP__PROF_MAX_DEPTH; d++) {
        if ((st->frames[d].flags & GP__REC_EXT) && st->fext[d].ev0) {
            if (!c)
                c = gp__cuda_get();
            gp__cuda_event_put(c, st->fext[d].ev0);
            st->fext[d].ev0 = NULL;
        }
    }
}

static gp__prof_thread *register_thread(gp_profiler *p)
{
    int64_t tid = (int64_t)syscall(SYS_gettid);
    pthread_mutex_lock(&p->lock);
    gp__prof_thread *st = NULL;
    for (size_t i = 0; i < p->n_threads; i++) {
        if (p->threads[i]->tid == tid) { /* evicted from the cache, or a reused tid */
            st = p->threads[i];
            break;
        }
    }
    if (!st) {
        /* A state whose thread exited: drain what it recorded, then hand it over. */
        for (size_t i = 0; i < p->n_threads; i++) {
            if (atomic_load_explicit(&p->threads[i]->dead, memory_order_acquire)) {
                st = p->threads[i];
                gp__prof_flush_locked(p);
                break;
            }
        }
    }
    if (st) {
        /* The previous owner is gone (dead) or is this thread: writer fields are ours. */
        atomic_store_explicit(&st->dead, false, memory_order_relaxed);
        discard_open_frames(st);
        st->tid = tid;
        st->depth = 0;
        st->skip = 0;
        st->epoch = 0;
    }
    if (!st && (p->n_threads < p->cap_threads ||
                gp__grow((void **)&p->threads, &p->cap_threads, sizeof(*p->threads),
                         p->n_threads + 1) == GP_OK)) {
        st = calloc(1, sizeof(*st));
        if (st) {
            st->tid = tid;
            st->index = (uint32_t)p->n_threads;
            st->rng = gp__hash_u64((uint64_t)tid ^ (p->uid << 32) ^ 0x9e3779b97f4a7c15ull) | 1;
            size_t rb = p->ring_records * sizeof(gp__prof_rec);
            size_t ext_n = p->ring_records / 16 < 64 ? 64 : p->ring_records / 16;
            size_t eb = ext_n * sizeof(gp__prof_ext);
            /* The budget pays for the rings; without budget the thread records nothing. */
            if (atomic_fetch_sub(&p->budget_left, (int64_t)(rb + eb)) >= (int64_t)(rb + eb)) {
                st->ring = malloc(rb);
                st->ext_ring = malloc(eb);
            } else {
                atomic_fetch_add(&p->budget_left, (int64_t)(rb + eb));
            }
            if (st->ring && st->ext_ring) {
                st->cap = p->ring_records;
                st->mask = p->ring_records - 1;
                st->ext_cap = ext_n;
                st->ext_mask = ext_n - 1;
            } else {
                free(st->ring);
                free(st->ext_ring);
                st->ring = NULL;
                st->ext_ring = NULL;
            }
            p->threads[p->n_threads++] = st;
        }
    }
    pthread_mutex_unlock(&p->lock);
    if (st && g_key_ok)
        pthread_setspecific(g_exit_key, &tls);
    return st;
}

__attribute__((noinline)) static gp__prof_thread *thread_slow(gp_profiler *p, uint64_t k)
{
    uint64_t uid = k >> KEY_UID_SHIFT;
    gp__prof_thread *st = NULL;
    for (unsigned i = 0; i < TLS_SLOTS; i++) {
        if (tls.slots[i].uid == uid && tls.slots[i].st) {
            st = tls.slots[i].st;
            break;
        }
    }
    if (!st) {
        st = register_thread(p);
        if (!st)
            return NULL;
        unsigned s = tls.next++ % TLS_SLOTS;
        tls.slots[s].uid = uid;
        tls.slots[s].st = st;
    }
    uint64_t epoch = k & KEY_EPOCH_MASK;
    if (st->epoch != epoch) { /* enable/disable/reset happened: discard open ranges */
        discard_open_frames(st);
        st->depth = 0;
        st->skip = 0;
        st->epoch = epoch;
    }
    tls.key = k;
    tls.st = st;
    return st;
}

static inline gp__prof_thread *thread_get(gp_profiler *p, uint64_t k)
{
    if (LIKELY(tls.key == k))
        return tls.st;
    return thread_slow(p, k);
}

static inline void count_drop(gp__prof_thread *st)
{
    st->n_dropped++;
    atomic_store_explicit(&st->dropped, st->n_dropped, memory_order_relaxed);
}

/* ---- ranges -------------------------------------------------------------------------------- */

static inline uint32_t rng_next(gp__prof_thread *st)
{
    uint64_t x = st->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    st->rng = x;
    return (uint32_t)(x >> 32);
}

/* The rare cases of a begin: inside a sampled-out range, too deep, or a sampling decision.
 * Returns the frame to fill, or NULL when the range is not recorded. */
__attribute__((noinline)) static gp__prof_frame *begin_rare(gp_profiler *p, gp__prof_thread *st,
                                                            uint32_t d, uint64_t k)
{
    if (st->skip)
        return NULL;
    if (d >= GP__PROF_MAX_DEPTH) {
        count_drop(st);
        return NULL;
    }
    if (d == 0 && (k & KEY_SAMPLING)) {
        uint32_t th = atomic_load_explicit(&p->sample_threshold, memory_order_relaxed);
        if (rng_next(st) >= th) {
            st->skip = 1;
            st->n_sampled_out++;
            atomic_store_explicit(&st->sampled_out, st->n_sampled_out, memory_order_relaxed);
            return NULL;
        }
    }
    return &st->frames[d];
}

/* Opens a frame; NULL when the range is not recorded (disabled, sampled out, dropped). */
static inline gp__prof_frame *begin_frame(gp_profiler *p, uint64_t k, gp__prof_thread **stp,
                                          uint32_t *dp)
{
    if (UNLIKELY(!(k & KEY_ENABLED)))
        return NULL;
    gp__prof_thread *st = thread_get(p, k);
    if (UNLIKELY(!st))
        return NULL;
    uint32_t d = st->depth++;
    *stp = st;
    *dp = d;
    if (UNLIKELY(st->skip | (d >= GP__PROF_MAX_DEPTH) | ((d == 0) & ((k & KEY_SAMPLING) != 0))))
        return begin_rare(p, st, d, k);
    return &st->frames[d];
}

void gp__range_begin_on(gp_profiler *p, const char *name, uint64_t k)
{
    if (UNLIKELY(!p)) {
        if (!(p = gp_profiler_global()))
            return;
        k = __atomic_load_n(&p->head.key, __ATOMIC_RELAXED);
    }
    gp__prof_thread *st;
    uint32_t d;
    gp__prof_frame *f = begin_frame(p, k, &st, &d);
    if (UNLIKELY(!f))
        return;
    f->name = name;
    f->flags = 0;
    if (UNLIKELY(p->cpu_time_all)) {
        gp__prof_ext *e = &st->fext[d];
        memset(e, 0, offsetof(gp__prof_ext, tags));
        e->gpu_ns = -1;
        e->has_cpu = true;
        e->cpu0 = gp__thread_cpu_ns();
        f->flags = GP__REC_EXT;
    }
    f->t0 = gp__ticks_now(p->use_tsc);
}

void gp__range_begin_fn(gp_profiler *p, void *fn)
{
    gp__prof_thread *st;
    uint32_t d;
    gp__prof_frame *f = begin_frame(p, __atomic_load_n(&p->head.key, __ATOMIC_RELAXED), &st, &d);
    if (!f)
        return;
    f->name = (const char *)fn;
    f->flags = GP__REC_FNADDR;
    f->t0 = gp__ticks_now(p->use_tsc);
}

void gp_range_begin_ex(gp_profiler *p, const char *name, const gp_range_opts *opts)
{
    if (!p && !(p = gp_profiler_global()))
        return;
    if (!opts) {
        gp_range_begin(p, name);
        return;
    }
    gp__prof_thread *st;
    uint32_t d;
    gp__prof_frame *f = begin_frame(p, __atomic_load_n(&p->head.key, __ATOMIC_RELAXED), &st, &d);
    if (!f)
        return;
    gp__prof_ext *e = &st->fext[d];
    memset(e, 0, sizeof(*e));
    e->gpu_ns = -1;
    e->device = (uint8_t)opts->device;
    e->backend = opts->backend;
    e->bytes = opts->bytes;
    e->stream = opts->stream;
    if (opts->device == GP_DEVICE_GPU) {
        const gp__cuda *c = gp__cuda_get();
        void *ev = NULL;
        if (c->status == GP_OK && gp__cuda_event_get(c, &ev) == GP_OK) {
            if (c->cuEventRecord(ev, opts->stream) == GP__CUDA_SUCCESS)
                e->ev0 = ev;
            else
                gp__cuda_event_put(c, ev);
        }
    }
    if (opts->cpu_time || p->cpu_time_all) {
        e->has_cpu = true;
        e->cpu0 = gp__thread_cpu_ns();
    }
    f->name = name;
    f->flags = GP__REC_EXT;
    f->t0 = gp__ticks_now(p->use_tsc);
}

/* End of a range with an ext entry: measurements, then both rings. */
__attribute__((noinline)) static void end_ext(gp__prof_thread *st, gp__prof_frame *f, uint32_t d,
                                              uint64_t t1)
{
    gp__prof_ext *e = &st->fext[d];
    if (e->has_cpu)
        e->cpu1 = gp__thread_cpu_ns();
    const gp__cuda *c = NULL;
    if (e->ev0) {
        c = gp__cuda_get();
        void *ev = NULL;
        if (gp__cuda_event_get(c, &ev) == GP_OK) {
            if (c->cuEventRecord(ev, e->stream) == GP__CUDA_SUCCESS)
                e->ev1 = ev;
            else
                gp__cuda_event_put(c, ev);
        }
    }
    uint64_t h = st->head, eh = st->ext_head;
    if (h - st->tail_cache >= st->cap)
        st->tail_cache = atomic_load_explicit(&st->tail, memory_order_acquire);
    if (eh - st->ext_tail_cache >= st->ext_cap)
        st->ext_tail_cache = atomic_load_explicit(&st->ext_tail, memory_order_acquire);
    if (h - st->tail_cache >= st->cap || eh - st->ext_tail_cache >= st->ext_cap) {
        count_drop(st);
        if (e->ev0) {
            gp__cuda_event_put(c, e->ev0);
            gp__cuda_event_put(c, e->ev1);
        }
        return;
    }
    st->ext_ring[eh & st->ext_mask] = *e;
    st->ext_head = eh + 1;
    gp__prof_rec *r = &st->ring[h & st->mask];
    r->name = f->name;
    r->t0 = f->t0;
    r->t1 = t1;
    r->depth = (uint16_t)d;
    r->flags = (uint16_t)f->flags;
    st->head = h + 1;
    atomic_store_explicit(&st->head_pub, h + 1, memory_order_release);
}

void gp__range_end_on(gp_profiler *p, uint64_t k)
{
    if (UNLIKELY(!p)) {
        if (!(p = gp_profiler_global()))
            return;
        k = __atomic_load_n(&p->head.key, __ATOMIC_RELAXED);
    }
    if (UNLIKELY(!(k & KEY_ENABLED)))
        return;
    uint64_t t1 = gp__ticks_now(p->use_tsc);
    gp__prof_thread *st = thread_get(p, k);
    if (UNLIKELY(!st || st->depth == 0))
        return;
    uint32_t d = --st->depth;
    if (UNLIKELY(st->skip | (d >= GP__PROF_MAX_DEPTH))) {
        if (d == 0)
            st->skip = 0;
        return;
    }
    gp__prof_frame *f = &st->frames[d];
    if (UNLIKELY(f->flags & GP__REC_EXT)) {
        end_ext(st, f, d, t1);
        return;
    }
    uint64_t h = st->head;
    if (UNLIKELY(h - st->tail_cache >= st->cap)) {
        st->tail_cache = atomic_load_explicit(&st->tail, memory_order_acquire);
        if (h - st->tail_cache >= st->cap) {
            count_drop(st);
            return;
        }
    }
    gp__prof_rec *r = &st->ring[h & st->mask];
    r->name = f->name;
    r->t0 = f->t0;
    r->t1 = t1;
    r->depth = (uint16_t)d;
    r->flags = (uint16_t)f->flags;
    st->head = h + 1;
    atomic_store_explicit(&st->head_pub, h + 1, memory_order_release);
}

/* The innermost recorded open range's ext entry (created on demand), or NULL. */
static gp__prof_ext *open_ext(gp_profiler *p)
{
    if (!p && !(p = gp_profiler_global()))
        return NULL;
    uint64_t k = __atomic_load_n(&p->head.key, __ATOMIC_RELAXED);
    if (!(k & KEY_ENABLED))
        return NULL;
    gp__prof_thread *st = thread_get(p, k);
    if (!st || st->depth == 0 || st->skip || st->depth > GP__PROF_MAX_DEPTH)
        return NULL;
    uint32_t d = st->depth - 1;
    gp__prof_frame *f = &st->frames[d];
    gp__prof_ext *e = &st->fext[d];
    if (!(f->flags & GP__REC_EXT)) {
        memset(e, 0, sizeof(*e));
        e->gpu_ns = -1;
        f->flags |= GP__REC_EXT;
    }
    return e;
}

static gp__prof_tag *new_tag(gp_profiler *p, const char *key)
{
    gp__prof_ext *e = open_ext(p);
    if (!e || e->n_tags >= GP__PROF_MAX_TAGS || !key)
        return NULL;
    gp__prof_tag *t = &e->tags[e->n_tags++];
    memset(t, 0, sizeof(*t));
    t->key = key;
    return t;
}

void gp_range_tag_int(gp_profiler *p, const char *key, int64_t value)
{
    gp__prof_tag *t = new_tag(p, key);
    if (t) {
        t->type = GP__TAG_INT;
        t->v.i = value;
    }
}

void gp_range_tag_double(gp_profiler *p, const char *key, double value)
{
    gp__prof_tag *t = new_tag(p, key);
    if (t) {
        t->type = GP__TAG_DOUBLE;
        t->v.d = value;
    }
}

void gp_range_tag_str(gp_profiler *p, const char *key, const char *value)
{
    gp__prof_tag *t = new_tag(p, key);
    if (t) {
        t->type = GP__TAG_STR;
        snprintf(t->str, sizeof(t->str), "%s", value ? value : "");
    }
}

void gp_range_add_transfer_ns(gp_profiler *p, int64_t ns)
{
    gp__prof_ext *e = open_ext(p);
    if (e && ns > 0)
        e->transfer_ns += ns;
}

/* ---- flush --------------------------------------------------------------------------------- */

/* Takes store space from the budget; false when it is spent. */
static bool budget_take(gp_profiler *p, size_t bytes)
{
    if (atomic_fetch_sub(&p->budget_left, (int64_t)bytes) >= (int64_t)bytes)
        return true;
    atomic_fetch_add(&p->budget_left, (int64_t)bytes);
    return false;
}

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
            if (!budget_take(p, need)) {
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
    pthread_mutex_lock(&p->lock);
    gp__prof_flush_locked(p);
    gp__prof_resolve_gpu_locked(p, false);
    pthread_mutex_unlock(&p->lock);
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
    pthread_mutex_lock(&p->lock);
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
    pthread_mutex_unlock(&p->lock);
    gp__timer_reset(&p->timer);
    gp__mem_reset(&p->mem);
}

const char *gp_profiler_intern(gp_profiler *p, const char *s)
{
    p = gp__prof_resolve(p);
    if (!p || !s)
        return NULL;
    pthread_mutex_lock(&p->lock);
    uint32_t id;
    const char *r = NULL;
    if (gp__strtab_intern(&p->names, s, strlen(s), &id) == GP_OK)
        r = gp__strtab_get(&p->names, id);
    pthread_mutex_unlock(&p->lock);
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
            gp_range_begin(q, "cost");
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
    pthread_mutex_lock(&p->lock);
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
    pthread_mutex_unlock(&p->lock);
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
    pthread_mutex_lock(&p->mem.lock);
    int64_t peak_before = p->mem.peak;
    p->mem.peak = p->mem.total; /* measure the peak of these iterations */
    pthread_mutex_unlock(&p->mem.lock);
    size_t n_gpu = 0;
    for (unsigned i = 0; i < iterations; i++) {
        if (use_gpu)
            c->cuEventRecord(e0, NULL);
        int64_t a = gp__clock_ns();
        gp_range_begin(p, name);
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
    out->total = st.total;
    out->min = st.min;
    out->max = st.max;
    out->mean = st.mean;
    out->stddev = st.stddev;
    out->p50 = st.p50;
    out->p95 = st.p95;
    out->p99 = st.p99;
    if (n_gpu) {
        gp__stats gs;
        gp__stats_compute(gpu, n_gpu, &gs);
        out->has_gpu = true;
        out->gpu_mean_ns = gs.mean;
    }
    pthread_mutex_lock(&p->mem.lock);
    if (p->mem.n_bufs > 0 || p->mem.peak > 0) {
        out->has_memory = true;
        out->peak_bytes = p->mem.peak;
    }
    if (peak_before > p->mem.peak)
        p->mem.peak = peak_before;
    pthread_mutex_unlock(&p->mem.lock);
    free(wall);
    free(gpu);
    return GP_OK;
}

/* ---- helpers for NVTX and -finstrument-functions ------------------------------------------ */

void gp__range_end_fn(gp_profiler *p, void *fn)
{
    uint64_t k = __atomic_load_n(&p->head.key, __ATOMIC_RELAXED);
    if (!(k & KEY_ENABLED))
        return;
    gp__prof_thread *st = thread_get(p, k);
    if (!st || st->depth == 0)
        return;
    uint32_t d = st->depth - 1;
    if (!st->skip && d < GP__PROF_MAX_DEPTH &&
        (!(st->frames[d].flags & GP__REC_FNADDR) || st->frames[d].name != (const char *)fn))
        return; /* not this function's range (instrumentation switched on mid-call) */
    gp_range_end(p);
}

uint64_t gp__prof_now(gp_profiler *p)
{
    return gp__ticks_now(p->use_tsc);
}

void gp__prof_add_span(gp_profiler *p, const char *name, uint64_t t0, uint64_t t1, int64_t tid)
{
    uint64_t k = __atomic_load_n(&p->head.key, __ATOMIC_RELAXED);
    if (!(k & KEY_ENABLED))
        return;
    pthread_mutex_lock(&p->lock);
    if (t0 < p->floor_ticks || !budget_take(p, sizeof(gp__prof_srec))) {
        p->dropped_store++;
    } else {
        gp__prof_srec *s = GP_PUSH(p->recs, p->n_recs, p->cap_recs);
        if (!s) {
            p->dropped_store++;
        } else {
            gp__tick_conv conv;
            gp__tick_conv_get(&conv);
            s->name = name;
            s->t0 = gp__tick_conv_ns(&conv, t0);
            s->t1 = gp__tick_conv_ns(&conv, t1 > t0 ? t1 : t0);
            s->tid = tid;
        }
    }
    pthread_mutex_unlock(&p->lock);
}
