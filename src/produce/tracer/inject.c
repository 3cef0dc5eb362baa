/* libgpuprof_inject.so: the CUPTI injection library behind `gpuprof trace`.
 *
 * The CUDA driver dlopens this library when CUDA_INJECTION64_PATH names it and calls
 * InitializeInjection() during CUDA initialisation. We subscribe to CUPTI, hand it activity
 * buffers from a pool allocated up front, convert completed buffers into a gp_trace, and write the
 * trace (Kineto-compatible Chrome JSON, atomically) periodically, on cuProfilerStop, at exit and
 * on SIGINT/SIGTERM and fatal signals. See docs/internals/tracer.md for the design. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/lock.h"
#include "core/clock.h"
#include "produce/tracer/convert.h"
#include "produce/tracer/cupti_api.h"
#include "produce/tracer/tracer_internal.h"

#ifndef GP_CUPTI_LIBRARY_PATH
#define GP_CUPTI_LIBRARY_PATH NULL
#endif

#define EXPORT __attribute__((visibility("default")))

/* Activity kinds per --kinds word. */
typedef struct kind_group {
    const char *word;
    CUpti_ActivityKind kinds[2];
    int n;
} kind_group;

static const kind_group kind_groups[] = {
    {"kernel", {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL}, 1},
    {"memcpy", {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2}, 2},
    {"memset", {CUPTI_ACTIVITY_KIND_MEMSET}, 1},
    {"memory", {CUPTI_ACTIVITY_KIND_MEMORY2, CUPTI_ACTIVITY_KIND_MEMORY_POOL}, 2},
    {"runtime", {CUPTI_ACTIVITY_KIND_RUNTIME}, 1},
    {"driver", {CUPTI_ACTIVITY_KIND_DRIVER}, 1},
    {"sync", {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION}, 1},
    {"event", {CUPTI_ACTIVITY_KIND_CUDA_EVENT}, 1},
    {"nvtx", {CUPTI_ACTIVITY_KIND_MARKER, CUPTI_ACTIVITY_KIND_MARKER_DATA}, 2},
    {"overhead", {CUPTI_ACTIVITY_KIND_OVERHEAD}, 1},
};

/* The tracer's locks, outside its state so that the state's fields can name them in their
 * GP_GUARDED_BY annotations (clang resolves only ordinary identifiers there in C). Order:
 * write_lock, then lock, then pool_lock (a leaf). */
static gp__mutex g_lock = GP_MUTEX_INIT;       /* trace + converter + counters */
static gp__mutex g_write_lock = GP_MUTEX_INIT; /* one writer at a time */
static gp__mutex g_pool_lock = GP_MUTEX_INIT;  /* the buffer pool */

typedef struct tracer_state {
    gp__cupti api;
    CUpti_SubscriberHandle sub;
    gp_trace *trace;
    gp__tconv conv;
    bool conv_ready;
    bool kinds_touched;   /* we enabled activity kinds (undone if setup fails) */
    atomic_bool active;   /* initialised in this process */
    atomic_bool finished; /* final write done: nothing more is written */
    pid_t pid;
    char out_path[4096];
    bool quiet;
    /* buffer pool */
    uint8_t *pool_mem;
    size_t buf_size, n_pool;
    uint8_t **free_bufs GP_GUARDED_BY(g_pool_lock);
    size_t n_free GP_GUARDED_BY(g_pool_lock);
    size_t n_extra GP_GUARDED_BY(g_pool_lock); /* buffers malloc'd when the pool ran dry */
    size_t max_extra;
    uint64_t pool_misses GP_GUARDED_BY(g_pool_lock); /* requests with no buffer (records dropped) */
    /* counters */
    uint64_t dropped;
    uint64_t conv_failures;
    uint64_t generation, written_generation;
    uint64_t writes;
    /* writer thread */
    pthread_t thread;
    bool thread_started;
    int wake[2]; /* signal handlers write the signal number here */
    int ack[2];  /* the thread answers fatal-signal requests here */
    uint32_t flush_ms;
} tracer_state;

static tracer_state g = {.wake = {-1, -1}, .ack = {-1, -1}};

static void note(const char *fmt, ...) GP_PRINTF(1, 2);
static void note(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "gpuprof trace [pid %d]: %s\n", (int)getpid(), buf);
}

/* ---- CUPTI callbacks ---------------------------------------------------------------------- */

static uint64_t CUPTIAPI timestamp_cb(void)
{
    return (uint64_t)gp__clock_ns();
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    uint8_t *b = NULL;
    gp__mutex_lock(&g_pool_lock);
    if (g.n_free > 0) {
        b = g.free_bufs[--g.n_free];
    } else if (g.n_extra < g.max_extra) {
        b = aligned_alloc(8, g.buf_size);
        if (b)
            g.n_extra++;
    }
    if (!b)
        g.pool_misses++;
    gp__mutex_unlock(&g_pool_lock);
    *buffer = b;
    *size = b ? g.buf_size : 0;
    *max_records = 0;
}

static bool in_pool(const uint8_t *b)
{
    return g.pool_mem && b >= g.pool_mem && b < g.pool_mem + g.buf_size * g.n_pool;
}

static void release_buffer(uint8_t *b)
{
    if (!b)
        return;
    if (in_pool(b)) {
        gp__mutex_lock(&g_pool_lock);
        g.free_bufs[g.n_free++] = b;
        gp__mutex_unlock(&g_pool_lock);
    } else {
        gp__mutex_lock(&g_pool_lock);
        g.n_extra--;
        gp__mutex_unlock(&g_pool_lock);
        free(b);
    }
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid)
{
    CUpti_Activity *rec = NULL;
    size_t dropped = 0;
    gp__mutex_lock(&g_lock);
    if (g.conv_ready && valid > 0) {
        while (g.api.ActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
            if (gp__tconv_record(&g.conv, rec) != GP_OK)
                g.conv_failures++;
        g.generation++;
    }
    if (g.api.ActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
        g.dropped += dropped;
    gp__mutex_unlock(&g_lock);
    release_buffer(buffer);
}

static void write_trace(bool final, const char *why);

static void CUPTIAPI api_callback(void *ud, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                  const void *data)
{
    const CUpti_CallbackData *cd = data;
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop &&
        cd && cd->callbackSite == CUPTI_API_EXIT) {
        write_trace(false, "cuProfilerStop");
    } else if ((domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
                cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020 && cd &&
                cd->callbackSite == CUPTI_API_ENTER) ||
               (domain == CUPTI_CB_DOMAIN_RESOURCE &&
                cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)) {
        /* A context's records go away with it (device reset, or the runtime tearing down before
         * our atexit handler runs): collect them first. */
        g.api.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    }
}

/* ---- writing ------------------------------------------------------------------------------ */

static void set_meta_int(const char *key, int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    if (gp_trace_set_meta(g.trace, key, buf) != GP_OK)
        g.conv_failures++;
}

/* Flushes CUPTI and writes the trace when it holds anything new. final: forced flush, and no
 * write happens after this one. */
static void write_trace(bool final, const char *why)
{
    if (!atomic_load(&g.active) || getpid() != g.pid)
        return;
    gp__mutex_lock(&g_write_lock);
    if (atomic_load(&g.finished)) {
        gp__mutex_unlock(&g_write_lock);
        return;
    }
    /* Forced: with per-thread buffers a partly filled buffer is otherwise never delivered. */
    g.api.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    gp__mutex_lock(&g_lock);
    size_t dropped = 0;
    if (g.api.ActivityGetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS)
        g.dropped += dropped;
    gp__mutex_lock(&g_pool_lock); /* leaf lock: pool counters are kept under it */
    uint64_t misses = g.pool_misses;
    gp__mutex_unlock(&g_pool_lock);
    bool changed = g.generation != g.written_generation;
    size_t n_events = gp_trace_event_count(g.trace) + g.trace->n_counters;
    gp_error err = {0};
    gp_status s = GP_OK;
    if (n_events > 0 && (changed || final)) {
        set_meta_int("dropped_records", (int64_t)g.dropped);
        set_meta_int("buffer_pool_misses", (int64_t)misses);
        set_meta_int("conversion_failures", (int64_t)g.conv_failures);
        set_meta_int("open_nvtx_ranges", (int64_t)gp__tconv_open_ranges(&g.conv));
        s = gp_trace_finish(g.trace);
        if (s == GP_OK)
            s = gp_trace_write_chrome(g.trace, g.out_path, &err);
        if (s == GP_OK) {
            g.written_generation = g.generation;
            g.writes++;
        } else {
            note("cannot write %s (%s): %s", g.out_path, why,
                 err.msg[0] ? err.msg : gp_strerror(s));
        }
    }
    if (final) {
        atomic_store(&g.finished, true);
        if (!g.quiet && s == GP_OK && n_events > 0)
            note("%zu events written to %s", n_events, g.out_path);
        if (g.dropped > 0)
            note("CUPTI dropped %llu activity records (%llu buffer requests found the pool of %zu "
                 "x %zu KB empty); raise --buffer-mb",
                 (unsigned long long)g.dropped, (unsigned long long)misses, g.n_pool,
                 g.buf_size >> 10);
    }
    gp__mutex_unlock(&g_lock);
    gp__mutex_unlock(&g_write_lock);
}

static void at_exit(void)
{
    write_trace(true, "exit");
}

/* ---- signals ------------------------------------------------------------------------------ */

static const int term_signals[] = {SIGINT, SIGTERM};
static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static atomic_int fatal_seen;

static void on_term_signal(int sig)
{
    unsigned char b = (unsigned char)sig;
    int saved = errno;
    if (write(g.wake[1], &b, 1) < 0) { /* the writer thread is gone: die the default way */
        signal(sig, SIG_DFL);
        raise(sig);
    }
    errno = saved;
}

/* Runs on the crashing thread: asks the writer thread for a final write, waits for it (bounded),
 * then lets the signal take its default course. Uses only async-signal-safe calls. */
static void on_fatal_signal(int sig)
{
    if (atomic_exchange(&fatal_seen, 1) == 0 && g.thread_started) {
        unsigned char b = (unsigned char)sig, r;
        if (write(g.wake[1], &b, 1) == 1) {
            struct pollfd p = {.fd = g.ack[0], .events = POLLIN};
            if (poll(&p, 1, 10000) == 1 && read(g.ack[0], &r, 1) < 0)
                r = 0;
        }
    }
    signal(sig, SIG_DFL);
    raise(sig); /* pending until the handler returns; a fault re-executes and kills anyway */
}

static void install_handler(int sig, void (*fn)(int))
{
    struct sigaction old, sa;
    if (sigaction(sig, NULL, &old) != 0 || old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO))
        return; /* the program (or a sanitizer) handles it: leave it alone */
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(sig, &sa, NULL);
}

static bool is_fatal(int sig)
{
    for (size_t i = 0; i < GP_ARRAY_LEN(fatal_signals); i++)
        if (fatal_signals[i] == sig)
            return true;
    return false;
}

static void *writer_thread(void *arg)
{
    (void)arg;

    uint32_t period = g.flush_ms;
    for (;;) {
        struct pollfd p = {.fd = g.wake[0], .events = POLLIN};
        int r = poll(&p, 1, period ? (int)period : -1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return NULL;
        if (r == 0) { /* periodic write: bounded to ~5% of run time by backing off */
            int64_t t0 = gp__clock_ns();
            write_trace(false, "periodic");
            int64_t took_ms = (gp__clock_ns() - t0) / 1000000;
            period = (uint32_t)GP_MAX((int64_t)g.flush_ms, took_ms * 20);
            continue;
        }
        unsigned char b;
        if (read(g.wake[0], &b, 1) != 1)
            continue;
        int sig = b;
        write_trace(true, "signal");
        if (is_fatal(sig)) {
            unsigned char a = 1;
            if (write(g.ack[1], &a, 1) < 0)
                return NULL;
            return NULL;
        }
        signal(sig, SIG_DFL);
        kill(getpid(), sig);
        return NULL;
    }
}

static void after_fork_child(void)
{
    /* CUPTI and our writer thread do not survive fork; a child that runs CUDA again is traced
     * through its own InitializeInjection (after exec). */
    atomic_store(&g.active, false);
}

/* ---- configuration ------------------------------------------------------------------------ */

static bool kind_selected(const char *list, const char *word)
{
    if (!list || !*list || strcmp(list, "all") == 0)
        return true;
    size_t n = strlen(word);
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        /* Accept the plural spelling too ("kernels"). */
        if ((len == n && strncmp(p, word, n) == 0) ||
            (len == n + 1 && strncmp(p, word, n) == 0 && p[n] == 's'))
            return true;
        p += len;
        if (*p == ',')
            p++;
    }
    return false;
}

static void expand_output(const char *tmpl, char *out, size_t cap)
{
    size_t o = 0;
    for (const char *p = tmpl; *p && o + 1 < cap; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            o += (size_t)snprintf(out + o, cap - o, "%d", (int)g.pid);
            p++;
        } else if (p[0] == '%' && p[1] == 'r') {
            o += (size_t)snprintf(out + o, cap - o, "%d", (int)gp__tracer_env_rank());
            p++;
        } else {
            out[o++] = *p;
        }
        if (o >= cap)
            o = cap - 1;
    }
    out[o] = '\0';
}

static bool alloc_pool(size_t total_mb)
{
    size_t total = GP_MAX(total_mb, (size_t)1) << 20;
    g.buf_size = GP_MIN((size_t)4 << 20, total / 2);
    g.n_pool = total / g.buf_size;
    g.max_extra = g.n_pool; /* at most twice the pool when many threads hold buffers */
    g.pool_mem = aligned_alloc(4096, g.buf_size * g.n_pool);
    /* Set up before CUPTI can call back; the lock costs nothing here and keeps the rule simple. */
    gp__mutex_lock(&g_pool_lock);
    g.free_bufs = calloc(g.n_pool, sizeof *g.free_bufs);
    bool ok = g.pool_mem && g.free_bufs;
    if (ok) {
        memset(g.pool_mem, 0, g.buf_size * g.n_pool); /* fault the pages in now, not at a launch */
        for (size_t i = 0; i < g.n_pool; i++)
            g.free_bufs[g.n_free++] = g.pool_mem + (g.n_pool - 1 - i) * g.buf_size;
    }
    gp__mutex_unlock(&g_pool_lock);
    return ok;
}

static bool check(CUptiResult r, const char *what)
{
    if (r != CUPTI_SUCCESS)
        note("%s failed: %s", what, gp__cupti_errstr(&g.api, r));
    return r == CUPTI_SUCCESS;
}

static bool setup(void)
{
    gp_error err = {0};
    if (gp__cupti_load(&g.api, GP_CUPTI_LIBRARY_PATH, &err) != GP_OK) {
        note("%s; nothing is traced", err.msg);
        return false;
    }
    uint32_t version = 0;
    if (g.api.GetVersion(&version) == CUPTI_SUCCESS && version / 10000 != CUPTI_API_VERSION / 10000)
        note(
            "%s reports CUPTI API version %u; gpuprof reads records with the layouts of version %d",
            g.api.path, version, CUPTI_API_VERSION);
    CUptiResult r = g.api.Subscribe(&g.sub, api_callback, NULL);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        note("another CUPTI tool (Nsight Systems, compute-sanitizer, torch.profiler, ...) is "
             "already attached to this process; gpuprof records nothing here and the program runs "
             "unchanged");
        return false;
    }
    if (r != CUPTI_SUCCESS) {
        note("cuptiSubscribe failed (%s): nothing is traced, the program runs unchanged",
             gp__cupti_errstr(&g.api, r));
        return false;
    }
    g.api.EnableCallback(1, g.sub, CUPTI_CB_DOMAIN_DRIVER_API,
                         CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
    g.api.EnableCallback(1, g.sub, CUPTI_CB_DOMAIN_RUNTIME_API,
                         CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
    g.api.EnableCallback(1, g.sub, CUPTI_CB_DOMAIN_RESOURCE,
                         CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);

    const char *mb = getenv("GP_TRACE_BUFFER_MB");
    const char *flush = getenv("GP_TRACE_FLUSH_MS");
    g.flush_ms = flush && *flush ? (uint32_t)strtoul(flush, NULL, 10) : 2000;
    if (!alloc_pool(mb && *mb ? strtoul(mb, NULL, 10) : 32)) {
        note("cannot allocate the activity buffer pool; nothing is traced");
        return false;
    }
    if (gp_trace_create("gpuprof trace", &g.trace) != GP_OK ||
        gp__tconv_init(&g.conv, g.trace, &g.api) != GP_OK) {
        note("out of memory; nothing is traced");
        return false;
    }
    g.conv_ready = true;
    gp__tracer_fill_identity(g.trace, &g.api);
    char comm[64] = "";
    FILE *fc = fopen("/proc/self/comm", "r");
    if (fc) {
        if (fgets(comm, sizeof comm, fc))
            comm[strcspn(comm, "\n")] = '\0';
        fclose(fc);
    }
    if (comm[0] && gp_trace_intern(g.trace, comm, strlen(comm), &g.conv.process_name) != GP_OK)
        g.conv.process_name = 0;

    /* Order matters: clock and buffer attributes before callbacks and before any kind. */
    check(g.api.ActivityRegisterTimestampCallback(timestamp_cb),
          "cuptiActivityRegisterTimestampCallback");
    uint8_t per_thread = 1;
    size_t sz = sizeof per_thread;
    g.api.ActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &sz, &per_thread);
    if (g.api.SetThreadIdType)
        g.api.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    if (!check(g.api.ActivityRegisterCallbacks(buffer_requested, buffer_completed),
               "cuptiActivityRegisterCallbacks"))
        return false;
    g.kinds_touched = true;
    g.api.ActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE);
    g.api.ActivityEnable(CUPTI_ACTIVITY_KIND_CONTEXT);
    const char *kinds = getenv("GP_TRACE_KINDS");
    int enabled = 0;
    for (size_t i = 0; i < GP_ARRAY_LEN(kind_groups); i++) {
        if (!kind_selected(kinds, kind_groups[i].word))
            continue;
        for (int k = 0; k < kind_groups[i].n; k++) {
            r = g.api.ActivityEnable(kind_groups[i].kinds[k]);
            if (r == CUPTI_SUCCESS)
                enabled++;
            else if (!g.quiet)
                note("activity kind %d (%s) not enabled: %s", (int)kind_groups[i].kinds[k],
                     kind_groups[i].word, gp__cupti_errstr(&g.api, r));
        }
        if (strcmp(kind_groups[i].word, "event") == 0 &&
            g.api.ActivityEnableCudaEventDeviceTimestamps)
            g.api.ActivityEnableCudaEventDeviceTimestamps(1);
    }
    if (enabled == 0) {
        note("no activity kind could be enabled (GP_TRACE_KINDS=%s)", kinds ? kinds : "");
        return false;
    }
    return true;
}

/* Called by the CUDA driver (CUDA_INJECTION64_PATH) during CUDA initialisation. Returns 1 even
 * when tracing could not start, so the program always runs; the reason goes to stderr. */
EXPORT int InitializeInjection(void)
{
    static atomic_int once;
    if (atomic_exchange(&once, 1) != 0)
        return 1;
    g.pid = getpid();
    g.quiet = getenv("GP_TRACE_QUIET") && *getenv("GP_TRACE_QUIET") == '1';
    const char *tmpl = getenv("GP_TRACE_OUTPUT");
    expand_output(tmpl && *tmpl ? tmpl : "gpuprof_trace.%p.json", g.out_path, sizeof g.out_path);
    if (!setup()) {
        /* Leave CUPTI as we found it: no kind recording into buffers nobody writes out. */
        if (g.kinds_touched) { /* only what we enabled: never another tool's kinds */
            for (size_t i = 0; i < GP_ARRAY_LEN(kind_groups); i++)
                for (int k = 0; k < kind_groups[i].n; k++)
                    g.api.ActivityDisable(kind_groups[i].kinds[k]);
            g.api.ActivityDisable(CUPTI_ACTIVITY_KIND_DEVICE);
            g.api.ActivityDisable(CUPTI_ACTIVITY_KIND_CONTEXT);
        }
        gp__mutex_lock(&g_lock);
        g.conv_ready = false;
        gp__mutex_unlock(&g_lock);
        if (g.sub)
            g.api.Unsubscribe(g.sub);
        return 1;
    }
    atomic_store(&g.active, true);
    pthread_atfork(NULL, NULL, after_fork_child);
    atexit(at_exit);
    /* The writer thread starts with every signal blocked: signals for the process go to the
     * program's threads, whose handlers wake it (a fatal-signal handler run on the writer thread
     * would wait for itself). */
    sigset_t all, old_mask;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old_mask);
    bool started = pipe2(g.wake, O_CLOEXEC) == 0 && pipe2(g.ack, O_CLOEXEC) == 0 &&
                   pthread_create(&g.thread, NULL, writer_thread, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    if (started) {
        g.thread_started = true;
        for (size_t i = 0; i < GP_ARRAY_LEN(term_signals); i++)
            install_handler(term_signals[i], on_term_signal);
        for (size_t i = 0; i < GP_ARRAY_LEN(fatal_signals); i++)
            install_handler(fatal_signals[i], on_fatal_signal);
    } else {
        note("cannot start the writer thread: the trace is written at exit only");
    }
    return 1;
}
