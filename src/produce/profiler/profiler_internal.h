/* Internal structures of the in-process profiler, shared by its files. Not installed. */
#ifndef GP_PROFILER_INTERNAL_H
#define GP_PROFILER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/lock.h"
#include "core/strtab.h"
#include "core/util.h"
#include "gpuprof/profiler.h"
#include "produce/profiler/tsc.h"

#define GP__PROF_MAX_DEPTH 255

/* Bits of gp_profiler.head.key (profiler.h reads bit 0 inline). */
#define GP__KEY_ENABLED 1ull
#define GP__KEY_SAMPLING 2ull
#define GP__KEY_EPOCH_ONE 4ull
#define GP__KEY_EPOCH_MASK 0x000000fffffffffcull
#define GP__KEY_UID_SHIFT 40
#define GP__PROF_MAX_TAGS 4

enum {
    GP__REC_EXT = 1,    /* the record has an ext entry (tags, measurements) */
    GP__REC_FNADDR = 2, /* name is a function address (-finstrument-functions) */
};

/* One finished range in a thread ring: 32 bytes. Times are raw ticks (tsc.h). */
typedef struct gp__prof_rec {
    const char *name;
    uint64_t t0, t1;
    uint16_t depth;
    uint16_t flags;
    uint32_t reserved;
} gp__prof_rec;

enum { GP__TAG_INT = 1, GP__TAG_DOUBLE, GP__TAG_STR };

typedef struct gp__prof_tag {
    const char *key;
    union {
        int64_t i;
        double d;
    } v;
    uint8_t type;
    char str[23];
} gp__prof_tag;

/* Tags and measurements of a range opened with gp_range_begin with options or tagged. */
typedef struct gp__prof_ext {
    uint8_t device;
    uint8_t n_tags;
    bool has_cpu;
    const char *backend;
    int64_t bytes;
    int64_t cpu0, cpu1;  /* thread CPU ns */
    int64_t transfer_ns; /* declared transfer time */
    void *stream;
    void *ev0, *ev1; /* CUDA events (device = gpu) */
    int64_t gpu_ns;  /* -1 until resolved (or without events) */
    gp__prof_tag tags[GP__PROF_MAX_TAGS];
} gp__prof_ext;

typedef struct gp__prof_frame {
    const char *name;
    uint64_t t0;
    uint32_t flags;
} gp__prof_frame;

/* Per (thread, profiler) state. The first block is written only by its thread. */
typedef struct gp__prof_thread {
    uint32_t depth; /* open ranges, including sampled-out and too-deep ones */
    uint32_t skip;  /* inside a sampled-out top-level range */
    uint64_t head, tail_cache, cap, mask;
    gp__prof_rec *ring;
    uint64_t ext_head, ext_tail_cache, ext_cap, ext_mask;
    gp__prof_ext *ext_ring;
    uint64_t rng;
    uint64_t n_dropped, n_sampled_out;
    uint64_t epoch;
    gp__prof_frame frames[GP__PROF_MAX_DEPTH];
    gp__prof_ext fext[GP__PROF_MAX_DEPTH];
    /* shared with the consumer (flush) */
    _Atomic uint64_t head_pub; /* records published by the thread */
    _Atomic uint64_t tail;     /* records consumed by flush */
    _Atomic uint64_t ext_tail;
    _Atomic uint64_t dropped, sampled_out;
    int64_t tid;
    uint32_t index;
    uint64_t dropped_base, sampled_base; /* counter values at the last reset (consumer side) */
    _Atomic bool dead;                   /* its thread exited: the state may be reused */
} gp__prof_thread;

/* A flushed range in the profiler's store. Times are CLOCK_MONOTONIC ns (converted once, at
 * flush). */
typedef struct gp__prof_srec {
    const char *name;
    int64_t t0, t1;
    int64_t tid;  /* OS thread that recorded it */
    uint32_t ext; /* 1-based index into gp_profiler.exts, 0 = none */
    uint16_t depth;
    uint16_t flags;
} gp__prof_srec;

/* CUDA-event timers (cuda_timer.c). */
typedef struct gp__timer_pair {
    const char *name;
    void *stream;
    void *ev0, *ev1;
    int64_t ns; /* -1 while pending */
} gp__timer_pair;

/* Struct members cannot name their lock in C for clang's analysis (guarded_by(lock) on a member
 * needs C++ late parsing), so the members a lock protects are listed beside it, and the functions
 * that expect it held say GP_REQUIRES; the globals of the profiler's files are GP_GUARDED_BY. */
struct gp_cuda_timer {
    gp__mutex lock; /* guards every member below */
    gp__timer_pair *pairs;
    size_t n_pairs, cap_pairs;
    gp_status last;     /* the driver status seen by the last call */
    gp_profiler *owner; /* set once at init: its enabled bit gates start / stop */
};

/* Memory tracker (mem_tracker.c). */
typedef struct gp__mem_buf {
    char *name, *shape, *dtype;
    int64_t bytes;
} gp__mem_buf;

/* Times (ns) are the profiler's ticks in the tracker and ns, converted as the ranges are, in the
 * copies of gp__mem_snapshot. */
typedef struct gp__mem_point {
    int64_t ns;    /* ticks in the tracker, ns in a snapshot */
    int64_t total; /* tracked bytes after the change */
} gp__mem_point;

typedef struct gp__mem_sample {
    int64_t ns; /* as gp__mem_point.ns */
    int64_t used;
} gp__mem_sample;

struct gp_mem_tracker {
    gp__mutex lock; /* guards bufs..samples and sampler_running */
    gp__mem_buf *bufs;
    size_t n_bufs, cap_bufs;
    int64_t total, peak;
    gp__mem_point *hist;
    size_t n_hist, cap_hist;
    int64_t hist_base; /* tracked total when the history (re)started */
    gp__mem_sample *samples;
    size_t n_samples, cap_samples;
    pthread_t sampler; /* written before sampler_running is set, read after it is cleared */
    bool sampler_running;
    _Atomic bool sampler_stop;
    unsigned interval_ms;
    gp_profiler *owner;
};

struct gp_profiler {
    /* head.key (first member; read by the inline fast paths of profiler.h with __atomic
     * builtins): bit 0 enabled, bit 1 sampling active, bits 2..39 epoch, bits 40..63 id */
    gp__prof_head head;
    _Atomic uint32_t sample_threshold; /* record a top-level range when rng32 < threshold */
    bool use_tsc;
    bool cpu_time_all;
    uint64_t uid;
    size_t ring_records;
    _Atomic int64_t budget_left;
    double sampling;

    gp__mutex lock; /* guards threads .. names_ok: the threads list, the store, the names */
    gp__prof_thread **threads;
    size_t n_threads, cap_threads;
    gp__prof_srec *recs;
    size_t n_recs, cap_recs;
    gp__prof_ext *exts;
    size_t n_exts, cap_exts;
    /* ranges that started before the last reset are discarded */
    uint64_t floor_ticks;
    uint64_t dropped_store;
    gp__strtab names;
    bool names_ok;

    struct gp_cuda_timer timer;
    struct gp_mem_tracker mem;
};

/* Flush with p->lock held. */
void gp__prof_flush_locked(gp_profiler *p) GP_REQUIRES(p->lock);
/* p, or the global profiler for NULL. */
gp_profiler *gp__prof_resolve(gp_profiler *p);
/* Measured cost of one begin/end pair (ns), measured once per process. */
double gp__prof_pair_cost_ns(void);
/* Resolves GPU times of stored ranges; wait polls up to 2 s. Lock held. */
void gp__prof_resolve_gpu_locked(gp_profiler *p, bool wait) GP_REQUIRES(p->lock);
/* Begin/end of a range whose name is a function address (instrument.c). The end closes the
 * innermost range only when it is that function's. */
void gp__range_begin_fn(gp_profiler *p, void *fn);
void gp__range_end_fn(gp_profiler *p, void *fn);
/* Name of the innermost range (any thread) open at time ns (the ranges' converted ns), or NULL. */
const char *gp__prof_open_range_at(gp_profiler *p, int64_t ns);
/* Records a finished range directly into the store (NVTX start/end ranges, which may end on
 * another thread): t0/t1 in ticks, on the calling thread's track. */
void gp__prof_add_span(gp_profiler *p, const char *name, uint64_t t0, uint64_t t1, int64_t tid);
/* Current tick of a profiler's clock. */
uint64_t gp__prof_now(gp_profiler *p);

/* Thread registry (ranges.c): creates the thread-exit key once; live instance ids, so that an
 * exiting thread marks its states dead only in profilers that still exist; the calling thread's
 * cache entries of a destroyed instance. */
void gp__prof_threads_init(void);
gp_status gp__prof_registry_add(uint64_t uid) GP_WARN_UNUSED;
void gp__prof_registry_remove(uint64_t uid);
void gp__prof_forget_thread_cache(uint64_t uid);
/* Takes store space from the memory budget; false when it is spent. */
bool gp__prof_budget_take(gp_profiler *p, size_t bytes);

/* Timer and tracker parts embedded in the profiler. */
void gp__timer_init(struct gp_cuda_timer *t, gp_profiler *owner);
void gp__timer_fini(struct gp_cuda_timer *t);
void gp__timer_reset(struct gp_cuda_timer *t);
/* Discards the pairs started and not stopped (the profiler was enabled or disabled). */
void gp__timer_drop_open(struct gp_cuda_timer *t);
void gp__mem_init(struct gp_mem_tracker *m, gp_profiler *owner);
void gp__mem_fini(struct gp_mem_tracker *m);
void gp__mem_reset(struct gp_mem_tracker *m);
/* Appends the timers' / tracker's JSON objects (for the profile metadata). */
gp_status gp__timer_json(gp_cuda_timer *t, gp__buf *b) GP_WARN_UNUSED;
gp_status gp__mem_json(gp_mem_tracker *m, gp__buf *b) GP_WARN_UNUSED;
/* Copies of the tracker's history / samples, times converted to ns (caller frees). */
gp_status gp__mem_snapshot(gp_mem_tracker *m, gp__mem_point **hist, size_t *n_hist,
                           gp__mem_sample **samples, size_t *n_samples) GP_WARN_UNUSED;

#endif
