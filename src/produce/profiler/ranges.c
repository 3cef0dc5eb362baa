/* The in-process profiler's hot path: per-thread states and rings, ranges, tags, sampling.
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
#include <unistd.h>

#include "core/clock.h"
#include "produce/profiler/cuda_driver.h"
#include "produce/profiler/profiler_internal.h"

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

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
static gp__mutex g_reg_lock = GP_MUTEX_INIT;
static uint64_t *g_live GP_GUARDED_BY(g_reg_lock);
static size_t g_n_live GP_GUARDED_BY(g_reg_lock), g_cap_live GP_GUARDED_BY(g_reg_lock);
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t g_exit_key;
static bool g_key_ok;

static void thread_exit(void *arg)
{
    tls_cache *c = arg;
    gp__mutex_lock(&g_reg_lock);
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
    gp__mutex_unlock(&g_reg_lock);
}

static void key_init(void)
{
    g_key_ok = pthread_key_create(&g_exit_key, thread_exit) == 0;
}

gp_status gp__prof_registry_add(uint64_t uid)
{
    gp__mutex_lock(&g_reg_lock);
    gp_status st = GP_OK;
    uint64_t *slot = GP_PUSH(g_live, g_n_live, g_cap_live);
    if (slot)
        *slot = uid;
    else
        st = GP_ENOMEM;
    gp__mutex_unlock(&g_reg_lock);
    return st;
}

void gp__prof_registry_remove(uint64_t uid)
{
    gp__mutex_lock(&g_reg_lock);
    for (size_t j = 0; j < g_n_live; j++) {
        if (g_live[j] == uid) {
            g_live[j] = g_live[--g_n_live];
            break;
        }
    }
    gp__mutex_unlock(&g_reg_lock);
}

void gp__prof_threads_init(void)
{
    pthread_once(&g_key_once, key_init);
}

void gp__prof_forget_thread_cache(uint64_t uid)
{
    if ((tls.key >> GP__KEY_UID_SHIFT) == uid) {
        tls.key = 0;
        tls.st = NULL;
    }
    for (unsigned i = 0; i < TLS_SLOTS; i++)
        if (tls.slots[i].uid == uid)
            tls.slots[i].st = NULL, tls.slots[i].uid = 0;
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
    gp__mutex_lock(&p->lock);
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
    gp__mutex_unlock(&p->lock);
    if (st && g_key_ok)
        pthread_setspecific(g_exit_key, &tls);
    return st;
}

__attribute__((noinline)) static gp__prof_thread *thread_slow(gp_profiler *p, uint64_t k)
{
    uint64_t uid = k >> GP__KEY_UID_SHIFT;
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
    uint64_t epoch = k & GP__KEY_EPOCH_MASK;
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
    if (d == 0 && (k & GP__KEY_SAMPLING)) {
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
    if (UNLIKELY(!(k & GP__KEY_ENABLED)))
        return NULL;
    gp__prof_thread *st = thread_get(p, k);
    if (UNLIKELY(!st))
        return NULL;
    uint32_t d = st->depth++;
    *stp = st;
    *dp = d;
    if (UNLIKELY(st->skip | (d >= GP__PROF_MAX_DEPTH) | ((d == 0) & ((k & GP__KEY_SAMPLING) != 0))))
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

void gp__range_begin_opts(gp_profiler *p, const char *name, const gp_range_opts *opts)
{
    if (!p && !(p = gp_profiler_global()))
        return;
    if (!opts) {
        gp_range_begin(p, name, NULL);
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

/* Writes the record of closed frame f (depth d, ended at t1) into ring slot h, which the caller
 * checked is free, and publishes it to the drain. */
static inline void publish_rec(gp__prof_thread *st, const gp__prof_frame *f, uint32_t d,
                               uint64_t t1, uint64_t h)
{
    gp__prof_rec *r = &st->ring[h & st->mask];
    r->name = f->name;
    r->t0 = f->t0;
    r->t1 = t1;
    r->depth = (uint16_t)d;
    r->flags = (uint16_t)f->flags;
    st->head = h + 1;
    atomic_store_explicit(&st->head_pub, h + 1, memory_order_release);
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
    publish_rec(st, f, d, t1, h);
}

void gp__range_end_on(gp_profiler *p, uint64_t k)
{
    if (UNLIKELY(!p)) {
        if (!(p = gp_profiler_global()))
            return;
        k = __atomic_load_n(&p->head.key, __ATOMIC_RELAXED);
    }
    if (UNLIKELY(!(k & GP__KEY_ENABLED)))
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
    publish_rec(st, f, d, t1, h);
}

/* The innermost recorded open range's ext entry (created on demand), or NULL. */
static gp__prof_ext *open_ext(gp_profiler *p)
{
    if (!p && !(p = gp_profiler_global()))
        return NULL;
    uint64_t k = __atomic_load_n(&p->head.key, __ATOMIC_RELAXED);
    if (!(k & GP__KEY_ENABLED))
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

/* Takes store space from the budget; false when it is spent. */
bool gp__prof_budget_take(gp_profiler *p, size_t bytes)
{
    if (atomic_fetch_sub(&p->budget_left, (int64_t)bytes) >= (int64_t)bytes)
        return true;
    atomic_fetch_add(&p->budget_left, (int64_t)bytes);
    return false;
}

/* ---- helpers for NVTX and -finstrument-functions ------------------------------------------ */

void gp__range_end_fn(gp_profiler *p, void *fn)
{
    uint64_t k = __atomic_load_n(&p->head.key, __ATOMIC_RELAXED);
    if (!(k & GP__KEY_ENABLED))
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
    if (!(k & GP__KEY_ENABLED))
        return;
    gp__mutex_lock(&p->lock);
    if (t0 < p->floor_ticks || !gp__prof_budget_take(p, sizeof(gp__prof_srec))) {
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
    gp__mutex_unlock(&p->lock);
}
