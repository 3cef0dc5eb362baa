/* gpuprof in-process profiler: named ranges, scope and call macros, function wrapping, CUDA-event
 * kernel timers and a GPU memory tracker, with statistics and export into the trace model.
 *
 * Recording a range costs two clock reads plus a few stores: each thread writes into its own
 * fixed-size ring of records (no lock, no allocation on the hot path). Rings are drained into the
 * profiler's store by gp_profiler_flush() (and by every summary / export call). When a ring or the
 * memory budget is full, ranges are dropped and counted (gp_profiler_stats).
 *
 * Names: range names, tag keys and backend strings are stored as pointers, not copied; they must
 * stay valid until the profiler is destroyed (string literals are). gp_profiler_intern() returns a
 * stable copy of a dynamic string.
 *
 * Thread-safety: every function may be called from any thread. gp_profiler_destroy() must not run
 * concurrently with any other call on the same profiler.
 *
 * CUDA: the driver (libcuda.so.1) is loaded with dlopen on first use (GPUPROF_CUDA_LIBRARY
 * overrides the path). Without it, CPU ranges work and the GPU features return GP_ENODRIVER and
 * report "no CUDA driver".
 *
 * Compilers: GCC or Clang (the macros use the cleanup attribute, statement expressions and
 * __atomic builtins); C11 or C++. */
#ifndef GPUPROF_PROFILER_H
#define GPUPROF_PROFILER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gpuprof/core.h"
#include "gpuprof/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_profiler gp_profiler;

/* ---- lifetime and control -------------------------------------------------------------------- */

typedef struct gp_profiler_opts {
    size_t ring_records; /* records per thread ring, rounded up to a power of two (default 65536) */
    size_t memory_budget; /* bytes for rings + flushed store (default 256 MiB) */
    bool enabled;         /* start enabled (default true) */
    double sampling;      /* fraction of top-level ranges recorded, (0, 1] (default 1) */
    bool cpu_time;        /* record thread CPU time per range (two more clock reads; default off) */
} gp_profiler_opts;

/* Fills opts with the defaults. */
GP_EXTERN void gp_profiler_opts_init(gp_profiler_opts *opts);

/* Creates an independent profiler (opts may be NULL for defaults). On success *out is owned by
 * the caller (gp_profiler_destroy). GP_ENOMEM; GP_EINVAL for a sampling rate outside (0, 1]. */
GP_EXTERN gp_status gp_profiler_create(const gp_profiler_opts *opts,
                                       gp_profiler **out) GP_WARN_UNUSED;

/* Frees a profiler and everything it recorded. NULL is ignored. No other thread may use it. */
GP_EXTERN void gp_profiler_destroy(gp_profiler *p);

/* The process-wide profiler, created with the defaults on first use (thread-safe; the
 * environment variable GPUPROF_DISABLE=1 creates it disabled). Never freed. Returns NULL only when
 * that first allocation fails. Every function below also accepts NULL for this profiler. */
GP_EXTERN gp_profiler *gp_profiler_global(void);

/* Turns recording on or off at run time. Ranges open when the state changes are discarded; so are
 * the profiler's CUDA timers started and not yet stopped. While disabled, the CUDA timers and
 * GP_PROFILE_KERNEL record nothing either. */
GP_EXTERN void gp_profiler_enable(gp_profiler *p, bool on);
GP_EXTERN bool gp_profiler_enabled(gp_profiler *p);

/* Records only a fraction of top-level ranges (ranges opened at depth 0, with everything nested in
 * them), chosen at random per thread: 0.01 records 1 %. 1 records all. GP_EINVAL outside (0, 1]. */
GP_EXTERN gp_status gp_profiler_set_sampling(gp_profiler *p, double fraction) GP_WARN_UNUSED;

/* Discards every recorded range, timer sample and tracker history (tracked buffers stay tracked)
 * and zeroes the counters. Ranges open at that moment are discarded. To clear only the timers:
 * gp_cuda_timer_reset; only the tracked buffers: gp_mem_reset. */
GP_EXTERN void gp_profiler_reset(gp_profiler *p);

/* Drains every thread's ring into the profiler's store. Called by every summary and export
 * function; call it yourself in long runs to keep rings from filling. */
GP_EXTERN void gp_profiler_flush(gp_profiler *p);

/* Returns a copy of s owned by the profiler (same pointer for equal strings), valid until it is
 * destroyed: use it for range names built at run time. NULL when out of memory. Takes a lock. */
GP_EXTERN const char *gp_profiler_intern(gp_profiler *p, const char *s);

typedef struct gp_profiler_stats {
    uint64_t ranges;      /* ranges in the store after a flush */
    uint64_t dropped;     /* ranges lost: ring full, memory budget, nesting > 255 levels */
    uint64_t sampled_out; /* top-level ranges skipped by sampling */
    uint64_t threads;     /* threads that recorded */
    double overhead_ns;   /* measured cost of one begin/end pair on this machine */
    const char *clock;    /* "tsc" or "monotonic" */
    double tsc_ghz;       /* calibrated TSC frequency; 0 with the monotonic clock */
    bool tsc_invariant;   /* the CPU reports an invariant TSC */
} gp_profiler_stats;

/* Flushes, then fills *out. */
GP_EXTERN void gp_profiler_get_stats(gp_profiler *p, gp_profiler_stats *out);

/* ---- ranges ---------------------------------------------------------------------------------- */

/* Internal: the first member of every gp_profiler, read by the inline fast paths below so that a
 * disabled profiler costs one load and one branch. Not part of the API. */
typedef struct gp__prof_head {
    uint64_t key; /* bit 0: enabled; accessed only with __atomic builtins */
} gp__prof_head;
GP_EXTERN void gp__range_begin_on(gp_profiler *p, const char *name, uint64_t key);
GP_EXTERN void gp__range_end_on(gp_profiler *p, uint64_t key);

typedef enum gp_range_device { GP_DEVICE_CPU = 0, GP_DEVICE_GPU = 1 } gp_range_device;

/* What a range measures besides its wall time. Zero (or a NULL pointer) is a plain range;
 * designated initialisers read well: &(gp_range_opts){.device = GP_DEVICE_GPU}. */
typedef struct gp_range_opts {
    gp_range_device device; /* GP_DEVICE_GPU: GPU time from CUDA events on `stream` */
    void *stream;           /* CUstream for device=gpu (NULL = the legacy default stream) */
    const char *backend;    /* e.g. "cuda", "cublas" (not copied); NULL = none */
    int64_t bytes;          /* bytes this range moves (for GB/s); 0 = not declared */
    bool cpu_time;          /* also record thread CPU time for this range */
} gp_range_opts;
GP_EXTERN void gp__range_begin_opts(gp_profiler *p, const char *name, const gp_range_opts *opts);

/* Opens a range on the calling thread (nested inside the innermost open one). name must outlive
 * the profiler. opts (NULL: a plain range, the inline fast path) adds tags and measurements; it
 * replaced gp_range_begin_ex (issue 32). Never fails: when it cannot record, the range is counted
 * as dropped. */
static inline void gp_range_begin(gp_profiler *p, const char *name, const gp_range_opts *opts)
{
    if (opts) {
        gp__range_begin_opts(p, name, opts);
        return;
    }
    uint64_t k = 0;
    if (p) {
        k = __atomic_load_n(&((gp__prof_head *)(void *)p)->key, __ATOMIC_RELAXED);
        if (!(k & 1u))
            return;
    }
    gp__range_begin_on(p, name, k);
}

/* Closes the innermost range opened by this thread. An end with no open range is ignored. */
static inline void gp_range_end(gp_profiler *p)
{
    uint64_t k = 0;
    if (p) {
        k = __atomic_load_n(&((gp__prof_head *)(void *)p)->key, __ATOMIC_RELAXED);
        if (!(k & 1u))
            return;
    }
    gp__range_end_on(p, k);
}

/* Tags on the innermost open range of this thread (at most 4 per range; more are ignored).
 * key must outlive the profiler; string values are copied (first 23 bytes). */
GP_EXTERN void gp_range_tag_int(gp_profiler *p, const char *key, int64_t value);
GP_EXTERN void gp_range_tag_double(gp_profiler *p, const char *key, double value);
GP_EXTERN void gp_range_tag_str(gp_profiler *p, const char *key, const char *value);
/* Adds time spent in data transfers (e.g. a timed copy) to the innermost open range. */
GP_EXTERN void gp_range_add_transfer_ns(gp_profiler *p, int64_t ns);

/* Scope macros (GCC/Clang cleanup attribute): the range ends on every exit path of the enclosing
 * block (return, break, goto, continue), not on longjmp or exit().
 *   GP_SCOPE(p, "load");              declaration form: ends at the end of the enclosing block
 *   GP_SCOPE_BLOCK(p, "load") { ... } block form
 *   x = GP_PROFILE_CALL(p, "f", f(a)); an expression: value of the call (void calls allowed) */
static inline gp_profiler *gp__scope_begin(gp_profiler *p, const char *name)
{
    if (!p)
        p = gp_profiler_global();
    if (p)
        gp_range_begin(p, name, NULL);
    return p;
}
static inline void gp__scope_end(gp_profiler **pp)
{
    if (*pp)
        gp_range_end(*pp);
}
#define GP__CAT2(a, b) a##b
#define GP__CAT(a, b) GP__CAT2(a, b)
#define GP_SCOPE(p, name) GP__SCOPE((p), (name), __COUNTER__)
#define GP__SCOPE(p, name, id)                                                                     \
    gp_profiler *GP__CAT(gp__scope_, id) __attribute__((cleanup(gp__scope_end), unused)) =         \
        gp__scope_begin((p), (name))
#define GP_SCOPE_BLOCK(p, name) GP__SCOPE_BLOCK((p), (name), __COUNTER__)
#define GP__SCOPE_BLOCK(p, name, id)                                                               \
    for (gp_profiler * GP__CAT(gp__sb_p, id) __attribute__((                                       \
                           cleanup(gp__scope_end), unused)) = gp__scope_begin((p), (name)),        \
                                                   *GP__CAT(gp__sb_once, id) = (gp_profiler *)1;   \
         GP__CAT(gp__sb_once, id); GP__CAT(gp__sb_once, id) = NULL)
#define GP_PROFILE_CALL(p, name, expr) GP__PROFILE_CALL((p), (name), expr, __COUNTER__)
#define GP__PROFILE_CALL(p, name, expr, id)                                                        \
    __extension__({                                                                                \
        gp_profiler *GP__CAT(gp__call_p, id) __attribute__((cleanup(gp__scope_end), unused)) =     \
            gp__scope_begin((p), (name));                                                          \
        expr;                                                                                      \
    })

/* Profiles a whole function without touching its body: writes the definition of `fname` as a
 * wrapper that opens a range named #fname and calls the body that follows the macro.
 *   GP_PROFILED_FUNCTION(p, double, dot, (const double *a, const double *b, int n), (a, b, n))
 *   { ...original body... }
 * GP_PROFILED_VOID_FUNCTION is the same for functions returning void. */
#define GP_PROFILED_FUNCTION(p, ret, fname, params, args)                                          \
    static ret fname##__gp_body params;                                                            \
    ret fname params                                                                               \
    {                                                                                              \
        GP_SCOPE((p), #fname);                                                                     \
        return fname##__gp_body args;                                                              \
    }                                                                                              \
    static ret fname##__gp_body params
#define GP_PROFILED_VOID_FUNCTION(p, fname, params, args)                                          \
    static void fname##__gp_body params;                                                           \
    void fname params                                                                              \
    {                                                                                              \
        GP_SCOPE((p), #fname);                                                                     \
        fname##__gp_body args;                                                                     \
    }                                                                                              \
    static void fname##__gp_body params
/* Defines `wrapper` that calls an existing function `fn` inside a range named #fn. */
#define GP_PROFILE_WRAP(p, ret, wrapper, fn, params, args)                                         \
    ret wrapper params                                                                             \
    {                                                                                              \
        GP_SCOPE((p), #fn);                                                                        \
        return fn args;                                                                            \
    }

/* -finstrument-functions: compile a module with that flag and link gpuprof; every function of
 * the module then records a range in the global profiler, named by dladdr() at flush (or
 * "0x<address>" when the symbol is not exported: link with -rdynamic). Off until this is called
 * with true, so merely linking changes nothing. */
GP_EXTERN void gp_profiler_instrument_functions(bool on);

/* ---- statistics and reports ------------------------------------------------------------------ */

/* Recording, the conversion to the trace model and the statistics of the profiler's own store
 * (breakdown, timers, memory) are the profiler's (src/produce/profiler). The printing and the
 * exports that run an analysis (summary statistics, flame tree) are assembled above it
 * (src/app/profiler_output.c: convert, analyze, render); the API is the same. */

/* Flushes the profiler into a new trace (one CPU-thread track per thread, GP_EV_RANGE events,
 * args holding tags and measurements, counter samples of the memory sampler, and metadata
 * "gpuprof_profile" without its "summary" array, which only gp_profiler_export_json computes; see
 * docs/profiler.md). *out is owned by the caller (gp_trace_free). GP_ENOMEM. */
GP_EXTERN gp_status gp_profiler_to_trace(gp_profiler *p, gp_trace **out) GP_WARN_UNUSED;

/* Prints the per-name statistics (calls, total, mean, min, max, stddev, p50/p95/p99) in the
 * fixed-width format of `gpuprof summary`: gp_profiler_to_trace, then gp_summary_compute and
 * gp_summary_render_text (the computing and the formatting are those of the summary module).
 * GP_EEMPTY when nothing was recorded, GP_EIO. */
GP_EXTERN gp_status gp_profiler_print_summary(gp_profiler *p, FILE *fp) GP_WARN_UNUSED;
/* Prints the n names with the largest total time (n = 0: 10), same format. */
GP_EXTERN gp_status gp_profiler_print_bottlenecks(gp_profiler *p, FILE *fp,
                                                  size_t n) GP_WARN_UNUSED;

/* Per-name time breakdown of the ranges: where the time of each range name went, as far as it
 * was measured. Fields a name never measured are -1 (shown as n/a, never 0). */
typedef struct gp_range_breakdown {
    const char *name; /* valid until the profiler is reset or destroyed */
    uint64_t calls;
    gp_ns wall_ns;     /* summed durations */
    gp_ns gpu_ns;      /* summed CUDA-event GPU time of device=gpu ranges, or -1 */
    gp_ns cpu_ns;      /* summed thread CPU time, or -1 */
    gp_ns transfer_ns; /* summed declared transfer time, or -1 */
    gp_ns overhead_ns; /* profiler's own cost inside these ranges (nested ranges x pair cost) */
    int64_t bytes;     /* summed declared bytes, or -1 */
    double gbps;       /* bytes / (gpu_ns when measured, else wall_ns); -1 without bytes */
} gp_range_breakdown;

/* Computes the breakdown, rows sorted by wall time (descending). On success *rows (n_rows) is
 * owned by the caller (free()). GP_ENOMEM. */
GP_EXTERN gp_status gp_profiler_breakdown(gp_profiler *p, gp_range_breakdown **rows,
                                          size_t *n_rows) GP_WARN_UNUSED;
/* Formats breakdown rows as a fixed-width "RANGE TIME BREAKDOWN" table (no computing). GP_EIO. */
GP_EXTERN gp_status gp_range_breakdown_render_text(const gp_range_breakdown *rows, size_t n,
                                                   FILE *fp) GP_WARN_UNUSED;
/* gp_profiler_breakdown + gp_range_breakdown_render_text. GP_EEMPTY, GP_ENOMEM, GP_EIO. */
GP_EXTERN gp_status gp_profiler_print_breakdown(gp_profiler *p, FILE *fp) GP_WARN_UNUSED;

/* Writes the JSON profile (a Chrome/Kineto trace with the profile in metadata, including the
 * "summary" array of gp_summary_compute over the trace; `gpuprof summary` reads it). Atomic; ".gz"
 * compresses. err may be NULL. */
GP_EXTERN gp_status gp_profiler_export_json(gp_profiler *p, const char *path,
                                            gp_error *err) GP_WARN_UNUSED;
/* The Chrome trace: the same file as the JSON profile (open it in Perfetto / chrome://tracing). */
GP_EXTERN gp_status gp_profiler_export_chrome(gp_profiler *p, const char *path,
                                              gp_error *err) GP_WARN_UNUSED;
/* Folded stacks ("outer;inner self_ns" per line, merged over threads) for flame graph tools:
 * gp_profiler_to_trace, gp_flame_build (CPU weight, no thread frames) and the folded writer of
 * gp_flame_write, so frame names are escaped as in `gpuprof flame` (';' becomes ':'). An empty
 * profile writes an empty file. */
GP_EXTERN gp_status gp_profiler_export_folded(gp_profiler *p, const char *path,
                                              gp_error *err) GP_WARN_UNUSED;

/* ---- profiling a function -------------------------------------------------------------------- */

typedef struct gp_call_stats {
    uint64_t iterations;
    gp_ns total, min, max;
    double mean, stddev, p50, p95, p99; /* ns, wall time per iteration */
    bool has_gpu;                       /* GPU time measured with CUDA events on stream 0 */
    double gpu_mean_ns;
    bool has_memory; /* tracker peak during the timed iterations */
    int64_t peak_bytes;
} gp_call_stats;

/* Runs fn(arg) `warmup` times unrecorded, then `iterations` times, each inside a range named name
 * (so the runs appear in exports and `gpuprof diff` compares two profiles). Fills *out. GPU time
 * is measured when the CUDA driver is present. GP_EINVAL for iterations == 0 or a NULL fn. */
GP_EXTERN gp_status gp_profile_call_n(gp_profiler *p, const char *name, void (*fn)(void *),
                                      void *arg, unsigned warmup, unsigned iterations,
                                      gp_call_stats *out) GP_WARN_UNUSED;

/* ---- CUDA-event kernel timers ---------------------------------------------------------------- */

typedef struct gp_cuda_timer gp_cuda_timer;

/* The profiler's timer set (owned by the profiler; its results go into the profiler's exports). */
GP_EXTERN gp_cuda_timer *gp_profiler_cuda_timer(gp_profiler *p);

/* Records a start event on `stream` (a CUstream; NULL = default stream) for `name`. Does not
 * synchronise. GP_ENODRIVER without a CUDA driver, GP_EEXTERNAL when the driver call fails,
 * GP_ELIMIT when 64 timers of one name are open. name must outlive the profiler. While the
 * owning profiler is disabled, start and stop record nothing and return GP_OK. */
GP_EXTERN gp_status gp_cuda_timer_start(gp_cuda_timer *t, const char *name, void *stream);
/* Records the stop event of the oldest open start of `name` on the same stream. GP_ENOENT when
 * none is open. The elapsed time is read later (gp_cuda_timer_resolve), never here. */
GP_EXTERN gp_status gp_cuda_timer_stop(gp_cuda_timer *t, const char *name);
/* Reads the elapsed times of completed event pairs (cuEventQuery; no sync). With wait = true,
 * polls until every pair completed or 2 s passed. Returns the number still pending. */
GP_EXTERN size_t gp_cuda_timer_resolve(gp_cuda_timer *t, bool wait);

typedef struct gp_timer_stats {
    const char *name;
    union {
        uint64_t calls; /* timed calls (completed pairs): "Calls", as in gpuprof summary */
        uint64_t count; /* the former name of calls */
    };
    double total_ms, mean_ms, min_ms, max_ms, stddev_ms, p50_ms, p95_ms, p99_ms;
    uint64_t pending; /* stopped but not yet complete on the GPU */
} gp_timer_stats;

/* Resolves (wait = true), then returns the statistics of timer `name`. GP_ENOENT. */
GP_EXTERN gp_status gp_cuda_timer_stats(gp_cuda_timer *t, const char *name,
                                        gp_timer_stats *out) GP_WARN_UNUSED;
/* Resolves (wait = true), then the statistics of every timer name, sorted by total time
 * (descending, then name). On success *rows (*n) is owned by the caller (free()); names point to
 * the names given to gp_cuda_timer_start / gp_cuda_timer_add. GP_ENODRIVER without a CUDA driver
 * when no sample was added with gp_cuda_timer_add (nothing to report), GP_ENOMEM. */
GP_EXTERN gp_status gp_cuda_timer_all_stats(gp_cuda_timer *t, gp_timer_stats **rows,
                                            size_t *n) GP_WARN_UNUSED;
/* Prints the fixed-width "GPU KERNEL TIMING REPORT" (without a CUDA driver, and no sample added
 * with gp_cuda_timer_add, its "no CUDA driver" status line). */
GP_EXTERN gp_status gp_cuda_timer_print(gp_cuda_timer *t, FILE *fp) GP_WARN_UNUSED;

/* Adds one sample measured outside the timer set to timer `name`: `ns` (>= 0) is the elapsed time
 * between two events the caller recorded and read itself (torch.cuda.Event.elapsed_time,
 * cupy.cuda.get_elapsed_time, cudaEventElapsedTime of its own events). The sample counts in
 * gp_cuda_timer_stats / gp_cuda_timer_all_stats, the timing report and the profile export exactly
 * like a completed pair of the set's own events, and needs no CUDA driver: with samples added, the
 * statistics, the report and the export list them even where no driver loads. name must outlive
 * the profiler (gp_profiler_intern). Records whether or not the owning profiler is enabled: the
 * caller measured the time and decides (events recorded while enabled may complete, and be read,
 * after a disable). GP_EINVAL (NULL t or name, ns < 0), GP_ENOMEM. Thread-safe. */
GP_EXTERN gp_status gp_cuda_timer_add(gp_cuda_timer *t, const char *name, gp_ns ns) GP_WARN_UNUSED;
/* Prints rows (n of them, e.g. from gp_cuda_timer_all_stats, in the order given) as the
 * fixed-width "GPU KERNEL TIMING REPORT" that gp_cuda_timer_print prints: one line per row, the
 * TOTAL line, and the pending count when a row has pending pairs; "(no timers recorded)" when n is
 * 0. With why non-NULL prints only the title and "status: <why>" (the no-driver form). Formats
 * only. GP_EINVAL (rows NULL with n > 0, fp NULL), GP_EIO. */
GP_EXTERN gp_status gp_timer_stats_render_text(const gp_timer_stats *rows, size_t n,
                                               const char *why, FILE *fp) GP_WARN_UNUSED;
/* Clears every timer (completed, pending and open pairs) and nothing else: ranges, the memory
 * tracker and the profiler's counters stay. */
GP_EXTERN void gp_cuda_timer_reset(gp_cuda_timer *t);

/* Scoped kernel timing (GCC/Clang cleanup attribute), the counterpart of a `with
 * profile_kernel(name):` block: a CUDA timer `name` of p's timer set (NULL: the global profiler)
 * starts on `stream` when the scope opens and stops on every exit path; the result is in the
 * timing report (gp_cuda_timer_print, gp_profiler_print_full_report). Errors (no driver) are
 * ignored: the scope runs either way, and a disabled profiler records nothing.
 *   GP_PROFILE_KERNEL(p, "angular_scattering", stream) { launch(...); }   block form
 *   GP_KERNEL_SCOPE(p, "energy_loss", stream);                            declaration form */
typedef struct gp__kernel_scope {
    gp_cuda_timer *timer; /* NULL when the start was not recorded */
    const char *name;
} gp__kernel_scope;
GP_EXTERN gp__kernel_scope gp__kernel_scope_begin(gp_profiler *p, const char *name, void *stream);
GP_EXTERN void gp__kernel_scope_end(gp__kernel_scope *s);
#define GP_KERNEL_SCOPE(p, name, stream) GP__KERNEL_SCOPE((p), (name), (stream), __COUNTER__)
#define GP__KERNEL_SCOPE(p, name, stream, id)                                                      \
    gp__kernel_scope GP__CAT(gp__ks_, id) __attribute__((cleanup(gp__kernel_scope_end), unused)) = \
        gp__kernel_scope_begin((p), (name), (stream))
#define GP_PROFILE_KERNEL(p, name, stream) GP__PROFILE_KERNEL((p), (name), (stream), __COUNTER__)
#define GP__PROFILE_KERNEL(p, name, stream, id)                                                    \
    for (gp__kernel_scope GP__CAT(gp__pk_, id) __attribute__((cleanup(gp__kernel_scope_end))) =    \
             gp__kernel_scope_begin((p), (name), (stream)),                                        \
                                               *GP__CAT(gp__pk_once, id) = &GP__CAT(gp__pk_, id);  \
         GP__CAT(gp__pk_once, id); GP__CAT(gp__pk_once, id) = NULL)

/* Why the CUDA driver is unusable (loads it on first use), or NULL when it is loaded. The text is
 * static. */
GP_EXTERN const char *gp_profiler_cuda_status(void);

/* ---- GPU memory tracker ---------------------------------------------------------------------- */

typedef struct gp_mem_tracker gp_mem_tracker;

/* The profiler's memory tracker (owned by the profiler). While it holds history, exported ranges
 * carry mem_delta_bytes and mem_peak_bytes. */
GP_EXTERN gp_mem_tracker *gp_profiler_mem_tracker(gp_profiler *p);

/* Tracks a named buffer: shape text (e.g. "1024x1024"), dtype (e.g. "float32"), size in bytes.
 * Strings are copied. Tracking an existing name replaces it. GP_ENOMEM, GP_EINVAL (bytes < 0). */
GP_EXTERN gp_status gp_mem_track(gp_mem_tracker *m, const char *name, const char *shape,
                                 const char *dtype, int64_t bytes) GP_WARN_UNUSED;
/* Stops tracking name. GP_ENOENT when it is not tracked. */
GP_EXTERN gp_status gp_mem_untrack(gp_mem_tracker *m, const char *name);

typedef struct gp_mem_status {
    int64_t tracked_bytes, peak_bytes;
    size_t buffers;
    bool has_device; /* cuMemGetInfo answered */
    int64_t free_bytes, total_bytes;
    bool has_pool; /* default memory pool attributes answered */
    int64_t pool_used, pool_reserved;
    gp_status driver; /* GP_OK, or why the device part is missing */
} gp_mem_status;

/* Fills *out (queries the driver when present; never fails). */
GP_EXTERN void gp_mem_status_get(gp_mem_tracker *m, gp_mem_status *out);
/* A tracked buffer as gp_mem_buffers copies it. */
typedef struct gp_mem_buffer {
    const char *name, *shape, *dtype;
    int64_t bytes;
} gp_mem_buffer;

/* Copies of the tracked buffers, in tracking order. On success *rows (*n) is one allocation owned
 * by the caller: free(*rows) frees the strings too. GP_ENOMEM. */
GP_EXTERN gp_status gp_mem_buffers(gp_mem_tracker *m, gp_mem_buffer **rows,
                                   size_t *n) GP_WARN_UNUSED;
/* Prints the fixed-width "GPU MEMORY TRACKING REPORT" (sizes in binary megabytes, 2^20 bytes). */
GP_EXTERN gp_status gp_mem_print(gp_mem_tracker *m, FILE *fp) GP_WARN_UNUSED;
/* Looks up one tracked buffer (get_tensor_info): on success *out is one allocation owned by the
 * caller (free(*out) frees the strings too). GP_ENOENT when name is not tracked, GP_ENOMEM. */
GP_EXTERN gp_status gp_mem_buffer_info(gp_mem_tracker *m, const char *name,
                                       gp_mem_buffer **out) GP_WARN_UNUSED;
/* Stops tracking every buffer and clears the tracker: tracked total, peak, history and the
 * sampler's samples (a running sampler goes on). Ranges and timers stay. */
GP_EXTERN void gp_mem_reset(gp_mem_tracker *m);

/* The combined report: the kernel timing report, then the memory tracking report (each as printed
 * alone), under one "GPU PROFILING REPORT" title. GP_EIO. */
GP_EXTERN gp_status gp_profiler_print_full_report(gp_profiler *p, FILE *fp) GP_WARN_UNUSED;

/* Starts a thread sampling the device's used memory (total - free, cuMemGetInfo) every
 * interval_ms into a counter track ("gpu0.memory_used_bytes"). GP_ENODRIVER without a driver,
 * GP_ESTATE when already running. */
GP_EXTERN gp_status gp_mem_sampler_start(gp_mem_tracker *m, unsigned interval_ms) GP_WARN_UNUSED;
/* Stops and joins the sampler thread (no-op when not running). */
GP_EXTERN void gp_mem_sampler_stop(gp_mem_tracker *m);

typedef struct gp_mem_peak {
    uint64_t samples;
    int64_t peak_bytes;
    gp_ns peak_ts;          /* ns, on the ranges' clock (CLOCK_MONOTONIC scale) */
    const char *open_range; /* innermost range open at the peak on any thread, or NULL */
} gp_mem_peak;

/* Peak of the sampled series and which range was open then. GP_EEMPTY with no samples. */
GP_EXTERN gp_status gp_mem_sampler_peak(gp_mem_tracker *m, gp_mem_peak *out) GP_WARN_UNUSED;

/* ---- NVTX --------------------------------------------------------------------------------- */

/* NVTX v3 injection entry point: export NVTX_INJECTION64_PATH=<path to libgpuprof_nvtx.so> and
 * nvtxRangePush/Pop and nvtxRangeStart/End of the program are recorded as ranges of the global
 * profiler; the profile is written at exit to $GPUPROF_OUTPUT (default gpuprof_nvtx.json).
 * Returns 1 (success) every time, also when several NVTX copies initialise. Built when the NVTX v3
 * headers (CUDA toolkit include/nvtx3) were found at configure time. */
GP_EXTERN int gp_nvtx_initialize(const void *(*get_export_table)(uint32_t id));

#ifdef __cplusplus
}
#endif
#endif
