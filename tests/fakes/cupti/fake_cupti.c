/* Fake libcupti.so for tests: the CUPTI calls gpuprof's tracer makes, with activity records in the
 * real struct layouts of the installed CUDA headers, produced from a scenario (fake_cupti.h).
 * It tests gpuprof's code, not CUDA or CUPTI. */
#include "fake_cupti.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct tbuf {
    uint8_t *buf;
    size_t size, used;
    struct tbuf *next;
} tbuf;

typedef struct held {
    uint8_t *buf;
    size_t size, used;
} held;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static tbuf *all_tbufs;
static __thread tbuf *my_tbuf;
static held *held_bufs;
static size_t n_held, cap_held;
static bool defer_completion;

static CUpti_CallbackFunc sub_cb;
static void *sub_ud;
static bool subscribed, other_subscriber;
static bool cb_profiler_stop, cb_device_reset, cb_context_destroy;
static CUpti_BuffersCallbackRequestFunc req_cb;
static CUpti_BuffersCallbackCompleteFunc done_cb;
static CUpti_TimestampCallbackFunc ts_cb;
static bool enabled[CUPTI_ACTIVITY_KIND_COUNT];
static uint8_t per_thread = 1;
static bool thread_id_system;
static atomic_ullong dropped, requests, completions, null_buffers;

/* Strings handed out in records stay valid for the life of the process, like CUPTI's. */
static char **strs;
static size_t n_strs;
static const char *keep(const char *s)
{
    if (!s)
        return NULL;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < n_strs; i++)
        if (strcmp(strs[i], s) == 0) {
            pthread_mutex_unlock(&mu);
            return strs[i];
        }
    char **grown = realloc(strs, (n_strs + 1) * sizeof *strs);
    const char *out = NULL;
    if (grown) {
        strs = grown;
        strs[n_strs] = strdup(s);
        if (strs[n_strs])
            out = strs[n_strs++];
    }
    pthread_mutex_unlock(&mu);
    return out;
}

static uint64_t now(void)
{
    if (ts_cb)
        return ts_cb();
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts); /* real CUPTI's default on Linux */
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void deliver(uint8_t *buf, size_t size, size_t used)
{
    atomic_fetch_add(&completions, 1);
    if (done_cb)
        done_cb(NULL, 0, buf, size, used);
}

/* Takes the calling thread's buffer away (caller holds mu); returns whether there was one. */
static bool take_mine(held *out)
{
    if (!my_tbuf || !my_tbuf->buf)
        return false;
    out->buf = my_tbuf->buf;
    out->size = my_tbuf->size;
    out->used = my_tbuf->used;
    my_tbuf->buf = NULL;
    my_tbuf->size = my_tbuf->used = 0;
    return true;
}

/* Completes a buffer: delivered now, or held until a forced flush when deferring. */
static void complete(held h)
{
    pthread_mutex_lock(&mu);
    if (defer_completion) {
        if (n_held == cap_held) {
            size_t cap = cap_held ? cap_held * 2 : 16;
            held *g = realloc(held_bufs, cap * sizeof *g);
            if (!g) {
                pthread_mutex_unlock(&mu);
                deliver(h.buf, h.size, h.used);
                return;
            }
            held_bufs = g;
            cap_held = cap;
        }
        held_bufs[n_held++] = h;
        pthread_mutex_unlock(&mu);
        return;
    }
    pthread_mutex_unlock(&mu);
    deliver(h.buf, h.size, h.used);
}

static int emit(const void *rec, size_t size)
{
    CUpti_ActivityKind kind = ((const CUpti_Activity *)rec)->kind;
    if ((unsigned)kind >= CUPTI_ACTIVITY_KIND_COUNT || !enabled[kind])
        return 0;
    size_t need = (size + 7) & ~(size_t)7;
    pthread_mutex_lock(&mu);
    if (!my_tbuf) {
        my_tbuf = calloc(1, sizeof *my_tbuf);
        if (!my_tbuf) {
            pthread_mutex_unlock(&mu);
            return 0;
        }
        my_tbuf->next = all_tbufs;
        all_tbufs = my_tbuf;
    }
    if (my_tbuf->buf && my_tbuf->used + need > my_tbuf->size) {
        held h;
        take_mine(&h);
        pthread_mutex_unlock(&mu);
        complete(h);
        pthread_mutex_lock(&mu);
    }
    if (!my_tbuf->buf) {
        uint8_t *b = NULL;
        size_t sz = 0, maxrec = 0;
        pthread_mutex_unlock(&mu);
        atomic_fetch_add(&requests, 1);
        if (req_cb)
            req_cb(&b, &sz, &maxrec);
        pthread_mutex_lock(&mu);
        if (!b || sz < need) {
            atomic_fetch_add(&null_buffers, 1);
            atomic_fetch_add(&dropped, 1);
            pthread_mutex_unlock(&mu);
            return 0;
        }
        my_tbuf->buf = b;
        my_tbuf->size = sz;
        my_tbuf->used = 0;
    }
    memcpy(my_tbuf->buf + my_tbuf->used, rec, size);
    memset(my_tbuf->buf + my_tbuf->used + size, 0, need - size);
    my_tbuf->used += need;
    pthread_mutex_unlock(&mu);
    return 1;
}

/* ---- the CUPTI API ------------------------------------------------------------------------ */

EXPORT CUptiResult cuptiGetVersion(uint32_t *version)
{
    *version = CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
    switch (result) {
    case CUPTI_SUCCESS:
        *str = "CUPTI_SUCCESS";
        break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
        *str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
        break;
    case CUPTI_ERROR_INVALID_KIND:
        *str = "CUPTI_ERROR_INVALID_KIND";
        break;
    default:
        *str = "CUPTI_ERROR_UNKNOWN";
        break;
    }
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb, void *ud)
{
    const char *env = getenv("FAKE_CUPTI_OTHER_SUBSCRIBER");
    if (other_subscriber || subscribed || (env && *env == '1'))
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    sub_cb = cb;
    sub_ud = ud;
    subscribed = true;
    *sub = (CUpti_SubscriberHandle)(uintptr_t)0x5a;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle sub)
{
    (void)sub;
    subscribed = false;
    sub_cb = NULL;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle sub,
                                       CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    (void)sub;
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop)
        cb_profiler_stop = enable != 0;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
        cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020)
        cb_device_reset = enable != 0;
    if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
        cb_context_destroy = enable != 0;
    return CUPTI_SUCCESS;
}

#define RT(x)                                                                                      \
    {                                                                                              \
        CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##x, #x                              \
    }
#define DRV(x)                                                                                     \
    {                                                                                              \
        CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##x, #x                                \
    }
static const struct api_name {
    CUpti_CallbackDomain domain;
    uint32_t cbid;
    const char *name;
} api_names[] = {
    RT(cudaMalloc_v3020),       RT(cudaFree_v3020),         RT(cudaMemcpy_v3020),
    RT(cudaMemcpyAsync_v3020),  RT(cudaMemsetAsync_v3020),  RT(cudaStreamSynchronize_v3020),
    RT(cudaEventRecord_v3020),  RT(cudaDeviceReset_v3020),  RT(cudaDeviceSynchronize_v3020),
    RT(cudaLaunchKernel_v7000), RT(cudaGraphLaunch_v10000), DRV(cuMemAlloc_v2),
    DRV(cuLaunchKernel),        DRV(cuProfilerStop),        DRV(cuLaunchKernelEx),
};

EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
                                        const char **name)
{
    for (size_t i = 0; i < sizeof api_names / sizeof api_names[0]; i++)
        if (api_names[i].domain == domain && api_names[i].cbid == cbid) {
            *name = api_names[i].name;
            return CUPTI_SUCCESS;
        }
    *name = NULL;
    return CUPTI_ERROR_INVALID_PARAMETER;
}

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                                  CUpti_BuffersCallbackCompleteFunc done)
{
    req_cb = req;
    done_cb = done;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn)
{
    for (int k = 0; k < CUPTI_ACTIVITY_KIND_COUNT; k++)
        if (enabled[k]) /* the real rule: register before enabling any kind */
            return CUPTI_ERROR_INVALID_OPERATION;
    ts_cb = fn;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
    if ((unsigned)kind >= CUPTI_ACTIVITY_KIND_COUNT)
        return CUPTI_ERROR_INVALID_KIND;
    enabled[kind] = true;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
    if ((unsigned)kind >= CUPTI_ACTIVITY_KIND_COUNT)
        return CUPTI_ERROR_INVALID_KIND;
    enabled[kind] = false;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t *size,
                                             void *value)
{
    if (attr == CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER && *size == sizeof(uint8_t))
        per_thread = *(uint8_t *)value;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
    thread_id_system = type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnableCudaEventDeviceTimestamps(uint8_t enable)
{
    (void)enable;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityFlushPeriod(uint32_t ms)
{
    (void)ms;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    if (!(flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED))
        return CUPTI_SUCCESS; /* the fake completes full buffers at once: nothing pending */
    for (;;) {                /* every thread's partly filled buffer, then the held ones */
        held h = {0};
        bool got = false;
        pthread_mutex_lock(&mu);
        for (tbuf *t = all_tbufs; t && !got; t = t->next)
            if (t->buf) {
                h.buf = t->buf, h.size = t->size, h.used = t->used;
                t->buf = NULL;
                t->size = t->used = 0;
                got = true;
            }
        if (!got && n_held > 0) {
            h = held_bufs[--n_held];
            got = true;
        }
        pthread_mutex_unlock(&mu);
        if (!got)
            return CUPTI_SUCCESS;
        deliver(h.buf, h.size, h.used);
    }
}

static size_t record_size(CUpti_ActivityKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL:
        return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
        return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
        return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
        return sizeof(CUpti_ActivityCudaEvent2);
    case CUPTI_ACTIVITY_KIND_MARKER:
        return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_MEMORY2:
        return sizeof(CUpti_ActivityMemory4);
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
        return sizeof(CUpti_ActivityMemoryPool3);
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
        return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_DEVICE:
        return sizeof(CUpti_ActivityDevice5);
    case CUPTI_ACTIVITY_KIND_CONTEXT:
        return sizeof(CUpti_ActivityContext3);
    default:
        return 0;
    }
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid,
                                              CUpti_Activity **record)
{
    size_t off = 0;
    if (*record) {
        size_t sz = record_size((*record)->kind);
        if (sz == 0)
            return CUPTI_ERROR_INVALID_KIND;
        off = (size_t)((uint8_t *)*record - buffer) + ((sz + 7) & ~(size_t)7);
    }
    if (off + sizeof(CUpti_Activity) > valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *record = (CUpti_Activity *)(buffer + off);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *out)
{
    (void)ctx;
    (void)stream;
    *out = (size_t)atomic_exchange(&dropped, 0);
    return CUPTI_SUCCESS;
}

/* ---- scenario ----------------------------------------------------------------------------- */

#define MAX_FIELDS 24

typedef struct line {
    char *key[MAX_FIELDS];
    char *val[MAX_FIELDS];
    int n;
    char *cmd;
} line;

static const char *get(const line *l, const char *k)
{
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->key[i], k) == 0)
            return l->val[i];
    return NULL;
}

static long long num(const line *l, const char *k, long long def)
{
    const char *v = get(l, k);
    return v ? strtoll(v, NULL, 0) : def;
}

static void triple(const line *l, const char *k, int32_t out[3])
{
    out[0] = out[1] = out[2] = 1;
    const char *v = get(l, k);
    if (v)
        sscanf(v, "%d,%d,%d", &out[0], &out[1], &out[2]);
}

static int index_of(const char *v, const char *const *names, int n, int def)
{
    for (int i = 0; v && i < n; i++)
        if (strcmp(v, names[i]) == 0)
            return i;
    return def;
}

static const char *const copy_kinds[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                         "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
static const char *const mem_kinds[] = {"Unknown", "Pageable", "Pinned",
                                        "Device",  "Array",    "Managed"};

static uint32_t api_cbid(const char *name, CUpti_CallbackDomain domain)
{
    for (size_t i = 0; name && i < sizeof api_names / sizeof api_names[0]; i++) {
        size_t len = strlen(name);
        if (api_names[i].domain == domain && strncmp(api_names[i].name, name, len) == 0 &&
            (api_names[i].name[len] == '\0' || api_names[i].name[len] == '_'))
            return api_names[i].cbid;
    }
    return 0;
}

/* Executes one parsed command; base is the scenario's time origin. Returns records, -1 on error. */
static int exec(const line *l, uint64_t base, long long shift, long long corr_shift)
{
    const char *c = l->cmd;
    uint64_t at = base + (uint64_t)(num(l, "at", 0) + shift);
    uint64_t end = at + (uint64_t)num(l, "dur", 0);
    uint32_t corr = (uint32_t)(num(l, "corr", 0) + (get(l, "corr") ? corr_shift : 0));
    uint32_t pid = (uint32_t)num(l, "pid", getpid());
    if (strcmp(c, "device") == 0) {
        CUpti_ActivityDevice5 d = {.kind = CUPTI_ACTIVITY_KIND_DEVICE};
        d.id = (uint32_t)num(l, "id", 0);
        d.name = keep(get(l, "name") ? get(l, "name") : "Fake GPU");
        d.numMultiprocessors = (uint32_t)num(l, "sms", 132);
        d.numThreadsPerWarp = 32;
        d.maxWarpsPerMultiprocessor = 64;
        d.maxThreadsPerBlock = 1024;
        d.maxRegistersPerBlock = 65536;
        d.maxRegistersPerMultiprocessor = 65536;
        d.maxSharedMemoryPerBlock = 49152;
        d.maxSharedMemoryPerMultiprocessor = 233472;
        d.globalMemorySize = (uint64_t)num(l, "mem", 85899345920LL);
        d.computeCapabilityMajor = (uint32_t)num(l, "major", 9);
        d.computeCapabilityMinor = (uint32_t)num(l, "minor", 0);
        return emit(&d, sizeof d);
    }
    if (strcmp(c, "context") == 0) {
        CUpti_ActivityContext3 x = {.kind = CUPTI_ACTIVITY_KIND_CONTEXT};
        x.contextId = (uint32_t)num(l, "id", 1);
        x.deviceId = (uint32_t)num(l, "device", 0);
        return emit(&x, sizeof x);
    }
    if (strcmp(c, "runtime") == 0 || strcmp(c, "driver") == 0) {
        bool rt = c[0] == 'r';
        CUpti_ActivityAPI a = {.kind =
                                   rt ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER};
        a.cbid = get(l, "cbid") ? (uint32_t)num(l, "cbid", 0)
                                : api_cbid(get(l, "api"), rt ? CUPTI_CB_DOMAIN_RUNTIME_API
                                                             : CUPTI_CB_DOMAIN_DRIVER_API);
        a.start = at;
        a.end = end;
        a.processId = pid;
        a.threadId = (uint32_t)num(l, "tid", pid);
        a.correlationId = corr;
        return emit(&a, sizeof a);
    }
    if (strcmp(c, "kernel") == 0) {
        CUpti_ActivityKernel10 k = {.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL};
        int32_t g[3], b[3], sm[3] = {0, 0, 0};
        triple(l, "grid", g);
        triple(l, "block", b);
        if (get(l, "smem"))
            sscanf(get(l, "smem"), "%d,%d", &sm[0], &sm[1]);
        k.start = at;
        k.end = end;
        k.deviceId = (uint32_t)num(l, "device", 0);
        k.contextId = (uint32_t)num(l, "ctx", 1);
        k.streamId = (uint32_t)num(l, "stream", 7);
        k.gridX = g[0], k.gridY = g[1], k.gridZ = g[2];
        k.blockX = b[0], k.blockY = b[1], k.blockZ = b[2];
        k.registersPerThread = (uint16_t)num(l, "regs", 32);
        k.staticSharedMemory = sm[0];
        k.dynamicSharedMemory = sm[1];
        k.correlationId = corr;
        k.name = keep(get(l, "name") ? get(l, "name") : "kernel");
        k.graphId = (uint32_t)num(l, "graph", 0);
        k.graphNodeId = (uint64_t)num(l, "node", 0);
        return emit(&k, sizeof k);
    }
    if (strcmp(c, "memcpy") == 0) {
        CUpti_ActivityMemcpy6 m = {.kind = CUPTI_ACTIVITY_KIND_MEMCPY};
        m.copyKind = (uint8_t)index_of(get(l, "kind"), copy_kinds, 11, 0);
        m.srcKind = (uint8_t)index_of(get(l, "src"), mem_kinds, 6, 0);
        m.dstKind = (uint8_t)index_of(get(l, "dst"), mem_kinds, 6, 0);
        m.bytes = (uint64_t)num(l, "bytes", 0);
        m.start = at;
        m.end = end;
        m.deviceId = (uint32_t)num(l, "device", 0);
        m.contextId = (uint32_t)num(l, "ctx", 1);
        m.streamId = (uint32_t)num(l, "stream", 7);
        m.correlationId = corr;
        return emit(&m, sizeof m);
    }
    if (strcmp(c, "memcpy2") == 0) {
        CUpti_ActivityMemcpyPtoP4 m = {.kind = CUPTI_ACTIVITY_KIND_MEMCPY2};
        m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
        m.srcKind = m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        m.bytes = (uint64_t)num(l, "bytes", 0);
        m.start = at;
        m.end = end;
        m.deviceId = (uint32_t)num(l, "device", 0);
        m.srcDeviceId = (uint32_t)num(l, "srcdev", 0);
        m.dstDeviceId = (uint32_t)num(l, "dstdev", 1);
        m.streamId = (uint32_t)num(l, "stream", 7);
        m.correlationId = corr;
        return emit(&m, sizeof m);
    }
    if (strcmp(c, "memset") == 0) {
        CUpti_ActivityMemset4 m = {.kind = CUPTI_ACTIVITY_KIND_MEMSET};
        m.value = (uint32_t)num(l, "value", 0);
        m.bytes = (uint64_t)num(l, "bytes", 0);
        m.start = at;
        m.end = end;
        m.deviceId = (uint32_t)num(l, "device", 0);
        m.contextId = (uint32_t)num(l, "ctx", 1);
        m.streamId = (uint32_t)num(l, "stream", 7);
        m.correlationId = corr;
        m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        return emit(&m, sizeof m);
    }
    if (strcmp(c, "sync") == 0) {
        static const char *const types[] = {"unknown", "event", "wait", "stream", "context"};
        CUpti_ActivitySynchronization2 y = {.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION};
        y.type = (CUpti_ActivitySynchronizationType)index_of(get(l, "type"), types, 5, 0);
        y.start = at;
        y.end = end;
        y.correlationId = corr;
        y.contextId = (uint32_t)num(l, "ctx", 1);
        y.streamId =
            get(l, "stream") ? (uint32_t)num(l, "stream", 0) : CUPTI_SYNCHRONIZATION_INVALID_VALUE;
        y.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
        return emit(&y, sizeof y);
    }
    if (strcmp(c, "event") == 0) {
        CUpti_ActivityCudaEvent2 e = {.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT};
        e.correlationId = corr;
        e.contextId = (uint32_t)num(l, "ctx", 1);
        e.streamId = (uint32_t)num(l, "stream", 7);
        e.eventId = (uint32_t)num(l, "id", 1);
        e.deviceId = (uint32_t)num(l, "device", 0);
        e.deviceTimestamp = at;
        return emit(&e, sizeof e);
    }
    if (strcmp(c, "range_start") == 0 || strcmp(c, "range_end") == 0 || strcmp(c, "mark") == 0) {
        CUpti_ActivityMarker2 m = {.kind = CUPTI_ACTIVITY_KIND_MARKER};
        m.flags = c[0] == 'm'   ? CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS
                  : c[6] == 's' ? CUPTI_ACTIVITY_FLAG_MARKER_START
                                : CUPTI_ACTIVITY_FLAG_MARKER_END;
        m.timestamp = at;
        m.id = (uint32_t)num(l, "id", 0);
        m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
        m.objectId.pt.processId = pid;
        m.objectId.pt.threadId = (uint32_t)num(l, "tid", pid);
        m.name = c[6] == 'e' ? NULL : keep(get(l, "name"));
        m.domain = keep(get(l, "domain"));
        return emit(&m, sizeof m);
    }
    if (strcmp(c, "alloc") == 0 || strcmp(c, "free") == 0) {
        CUpti_ActivityMemory4 m = {.kind = CUPTI_ACTIVITY_KIND_MEMORY2};
        m.memoryOperationType = c[0] == 'a' ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
                                            : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
        m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        m.correlationId = corr;
        m.address = (uint64_t)num(l, "addr", 0);
        m.bytes = (uint64_t)num(l, "bytes", 0);
        m.timestamp = at;
        m.processId = pid;
        m.deviceId = (uint32_t)num(l, "device", 0);
        m.contextId = (uint32_t)num(l, "ctx", 1);
        return emit(&m, sizeof m);
    }
    if (strcmp(c, "pool") == 0) {
        CUpti_ActivityMemoryPool3 p = {.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL};
        p.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED;
        p.processId = pid;
        p.deviceId = (uint32_t)num(l, "device", 0);
        p.timestamp = at;
        p.utilizedSize = (uint64_t)num(l, "utilized", 0);
        return emit(&p, sizeof p);
    }
    if (strcmp(c, "overhead") == 0) {
        CUpti_ActivityOverhead3 o = {.kind = CUPTI_ACTIVITY_KIND_OVERHEAD};
        const char *k = get(l, "kind");
        o.overheadKind = k && strcmp(k, "instrumentation") == 0
                             ? CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION
                             : CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST;
        o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
        o.objectId.pt.processId = pid;
        o.objectId.pt.threadId = (uint32_t)num(l, "tid", pid);
        o.start = at;
        o.end = end;
        return emit(&o, sizeof o);
    }
    if (strcmp(c, "drop") == 0) {
        atomic_fetch_add(&dropped, (unsigned long long)num(l, "n", 1));
        return 0;
    }
    if (strcmp(c, "flush") == 0) {
        held h;
        pthread_mutex_lock(&mu);
        bool got = take_mine(&h);
        pthread_mutex_unlock(&mu);
        if (got)
            complete(h);
        return 0;
    }
    if (strcmp(c, "defer") == 0) {
        pthread_mutex_lock(&mu);
        defer_completion = get(l, "on") != NULL;
        pthread_mutex_unlock(&mu);
        return 0;
    }
    return -1;
}

/* Splits text[0..] (modified in place) into a command and key=value fields. */
static int parse(char *text, line *l)
{
    memset(l, 0, sizeof *l);
    char *save = NULL;
    for (char *tok = strtok_r(text, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        if (!l->cmd) {
            l->cmd = tok;
            continue;
        }
        if (l->n == MAX_FIELDS)
            return -1;
        char *eq = strchr(tok, '=');
        l->key[l->n] = tok;
        l->val[l->n] = eq ? eq + 1 : tok + strlen(tok);
        if (eq)
            *eq = '\0';
        l->n++;
    }
    return l->cmd ? 0 : 1;
}

EXPORT int fake_cupti_run(const char *scenario)
{
    char *copy = strdup(scenario);
    if (!copy)
        return -1;
    uint64_t base = now();
    int total = 0;
    char *save = NULL;
    for (char *ln = strtok_r(copy, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
        char *hash = strchr(ln, '#');
        if (hash)
            *hash = '\0';
        char orig[512];
        snprintf(orig, sizeof orig, "%s", ln);
        long long n = 1, step = 0;
        char *body = ln;
        if (strncmp(ln, "repeat ", 7) == 0) { /* repeat n=N step=S <command ...> */
            char *p = ln + 7;
            for (int f = 0; f < 2; f++) {
                while (*p == ' ')
                    p++;
                if (strncmp(p, "n=", 2) == 0)
                    n = strtoll(p + 2, &p, 10);
                else if (strncmp(p, "step=", 5) == 0)
                    step = strtoll(p + 5, &p, 10);
            }
            body = p;
        }
        line l;
        int pr = parse(body, &l);
        if (pr > 0)
            continue;
        if (pr < 0) {
            fprintf(stderr, "fake_cupti: malformed scenario line: %s\n", orig);
            free(copy);
            return -1;
        }
        for (long long i = 0; i < n; i++) {
            int r = exec(&l, base, i * step, i);
            if (r < 0) {
                fprintf(stderr, "fake_cupti: unknown scenario command: %s\n", orig);
                free(copy);
                return -1;
            }
            total += r;
        }
    }
    free(copy);
    return total;
}

EXPORT void fake_cupti_profiler_stop(void)
{
    if (!sub_cb || !cb_profiler_stop)
        return;
    CUpti_CallbackData cd = {0};
    cd.callbackSite = CUPTI_API_EXIT;
    cd.functionName = "cuProfilerStop";
    sub_cb(sub_ud, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop, &cd);
}

EXPORT void fake_cupti_set_other_subscriber(int on)
{
    other_subscriber = on != 0;
}

EXPORT uint64_t fake_cupti_query(const char *what)
{
    if (strcmp(what, "subscribed") == 0)
        return subscribed;
    if (strcmp(what, "ts_callback") == 0)
        return ts_cb != NULL;
    if (strcmp(what, "per_thread") == 0)
        return per_thread;
    if (strcmp(what, "buffer_callbacks") == 0)
        return req_cb && done_cb;
    if (strcmp(what, "thread_id_system") == 0)
        return thread_id_system;
    if (strcmp(what, "callback:profiler_stop") == 0)
        return cb_profiler_stop;
    if (strcmp(what, "callback:device_reset") == 0)
        return cb_device_reset;
    if (strcmp(what, "callback:context_destroy") == 0)
        return cb_context_destroy;
    if (strcmp(what, "requests") == 0)
        return atomic_load(&requests);
    if (strcmp(what, "completions") == 0)
        return atomic_load(&completions);
    if (strcmp(what, "null_buffers") == 0)
        return atomic_load(&null_buffers);
    if (strncmp(what, "enabled:", 8) == 0) {
        long k = strtol(what + 8, NULL, 10);
        return k >= 0 && k < CUPTI_ACTIVITY_KIND_COUNT && enabled[k];
    }
    return 0;
}
