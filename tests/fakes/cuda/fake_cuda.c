/* Fake libcuda.so.1: the subset of the CUDA driver API gpuprof's profiler loads, with scripted
 * results. Event record k gets the time script[k] (ms; after the script, previous + 1 ms); an
 * event completes after a scripted number of cuEventQuery calls. Control functions (fake_cuda_*)
 * let a test script values and read call counts. Thread-safe (one mutex). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))
#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_INVALID_CONTEXT 201
#define CUDA_ERROR_INVALID_HANDLE 400
#define CUDA_ERROR_NOT_READY 600
#define CUDA_ERROR_NOT_SUPPORTED 801

typedef struct fake_event {
    uint32_t magic;
    int recorded;
    double t_ms;
    int not_ready_left;
    uint64_t seq; /* record order: completing an event completes every earlier one (one stream) */
} fake_event;

typedef struct fake_cuda_counts {
    uint64_t records, queries, elapsed, creates, destroys, syncs, mem_get_info;
    int64_t live_events;
} fake_cuda_counts;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static double *g_script;
static size_t g_n_script, g_next;
static double g_last_ms;
static int g_not_ready;
static size_t g_free = (size_t)15 << 30, g_total = (size_t)16 << 30;
static int g_pool_supported = 1;
static uint64_t g_pool_used = (uint64_t)64 << 20, g_pool_reserved = (uint64_t)128 << 20;
static int g_init_result = CUDA_SUCCESS;
static int g_initialized;
static fake_cuda_counts g_counts;
static _Thread_local void *tls_ctx;
static int g_primary_ctx;
static uint64_t g_record_seq, g_completed_seq;

/* Lock held. */
static int is_complete(const fake_event *e)
{
    return e->not_ready_left <= 0 || e->seq <= g_completed_seq;
}

API void fake_cuda_reset(void)
{
    pthread_mutex_lock(&g_lock);
    free(g_script);
    g_script = NULL;
    g_n_script = g_next = 0;
    g_last_ms = 0;
    g_not_ready = 0;
    g_free = (size_t)15 << 30;
    g_total = (size_t)16 << 30;
    g_pool_supported = 1;
    g_pool_used = (uint64_t)64 << 20;
    g_pool_reserved = (uint64_t)128 << 20;
    g_completed_seq = g_record_seq;
    int64_t live = g_counts.live_events;
    memset(&g_counts, 0, sizeof(g_counts));
    g_counts.live_events = live;
    pthread_mutex_unlock(&g_lock);
}

API void fake_cuda_script_times(const double *ms, size_t n)
{
    pthread_mutex_lock(&g_lock);
    free(g_script);
    g_script = n ? malloc(n * sizeof(double)) : NULL;
    if (g_script)
        memcpy(g_script, ms, n * sizeof(double));
    g_n_script = g_script ? n : 0;
    g_next = 0;
    pthread_mutex_unlock(&g_lock);
}

API void fake_cuda_set_not_ready(int queries)
{
    pthread_mutex_lock(&g_lock);
    g_not_ready = queries;
    pthread_mutex_unlock(&g_lock);
}

API void fake_cuda_set_mem(size_t free_bytes, size_t total_bytes)
{
    pthread_mutex_lock(&g_lock);
    g_free = free_bytes;
    g_total = total_bytes;
    pthread_mutex_unlock(&g_lock);
}

API void fake_cuda_set_pool(int supported, uint64_t used, uint64_t reserved)
{
    pthread_mutex_lock(&g_lock);
    g_pool_supported = supported;
    g_pool_used = used;
    g_pool_reserved = reserved;
    pthread_mutex_unlock(&g_lock);
}

API void fake_cuda_set_init_result(int r)
{
    pthread_mutex_lock(&g_lock);
    g_init_result = r;
    pthread_mutex_unlock(&g_lock);
}

API void fake_cuda_get_counts(fake_cuda_counts *out)
{
    pthread_mutex_lock(&g_lock);
    *out = g_counts;
    pthread_mutex_unlock(&g_lock);
}

/* ---- the driver API subset ---------------------------------------------------------------- */

API int cuInit(unsigned flags)
{
    (void)flags;
    pthread_mutex_lock(&g_lock);
    int r = g_init_result;
    if (r == CUDA_SUCCESS)
        g_initialized = 1;
    pthread_mutex_unlock(&g_lock);
    return r;
}

API int cuDeviceGet(int *dev, int ordinal)
{
    if (!dev || ordinal != 0)
        return CUDA_ERROR_INVALID_VALUE;
    *dev = 0;
    return CUDA_SUCCESS;
}

API int cuCtxGetCurrent(void **ctx)
{
    *ctx = tls_ctx;
    return CUDA_SUCCESS;
}

API int cuCtxSetCurrent(void *ctx)
{
    tls_ctx = ctx;
    return CUDA_SUCCESS;
}

API int cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
    (void)dev;
    *ctx = &g_primary_ctx;
    return CUDA_SUCCESS;
}

API int cuEventCreate(void **ev, unsigned flags)
{
    (void)flags;
    if (!tls_ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    fake_event *e = calloc(1, sizeof(*e));
    if (!e)
        return CUDA_ERROR_INVALID_VALUE;
    e->magic = 0xC0DAu;
    pthread_mutex_lock(&g_lock);
    g_counts.creates++;
    g_counts.live_events++;
    pthread_mutex_unlock(&g_lock);
    *ev = e;
    return CUDA_SUCCESS;
}

API int cuEventRecord(void *ev, void *stream)
{
    (void)stream;
    fake_event *e = ev;
    if (!tls_ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!e || e->magic != 0xC0DAu)
        return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&g_lock);
    double t = g_next < g_n_script ? g_script[g_next] : g_last_ms + 1.0;
    g_next++;
    g_last_ms = t;
    e->t_ms = t;
    e->recorded = 1;
    e->not_ready_left = g_not_ready;
    e->seq = ++g_record_seq;
    g_counts.records++;
    pthread_mutex_unlock(&g_lock);
    return CUDA_SUCCESS;
}

API int cuEventQuery(void *ev)
{
    fake_event *e = ev;
    if (!e || e->magic != 0xC0DAu)
        return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&g_lock);
    g_counts.queries++;
    int r = CUDA_SUCCESS;
    if (!is_complete(e)) { /* the first not_ready queries of an event answer "not ready" */
        e->not_ready_left--;
        r = CUDA_ERROR_NOT_READY;
    } else if (e->seq > g_completed_seq) {
        g_completed_seq = e->seq;
    }
    pthread_mutex_unlock(&g_lock);
    return r;
}

static int elapsed(float *ms, void *a, void *b)
{
    fake_event *x = a, *y = b;
    if (!ms || !x || !y || x->magic != 0xC0DAu || y->magic != 0xC0DAu)
        return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&g_lock);
    g_counts.elapsed++;
    int r = CUDA_SUCCESS;
    if (!x->recorded || !y->recorded)
        r = CUDA_ERROR_INVALID_HANDLE;
    else if (!is_complete(x) || !is_complete(y))
        r = CUDA_ERROR_NOT_READY;
    else
        *ms = (float)(y->t_ms - x->t_ms);
    pthread_mutex_unlock(&g_lock);
    return r;
}

API int cuEventElapsedTime(float *ms, void *a, void *b)
{
    return elapsed(ms, a, b);
}

API int cuEventElapsedTime_v2(float *ms, void *a, void *b)
{
    return elapsed(ms, a, b);
}

API int cuEventDestroy_v2(void *ev)
{
    fake_event *e = ev;
    if (!e || e->magic != 0xC0DAu)
        return CUDA_ERROR_INVALID_HANDLE;
    e->magic = 0;
    free(e);
    pthread_mutex_lock(&g_lock);
    g_counts.destroys++;
    g_counts.live_events--;
    pthread_mutex_unlock(&g_lock);
    return CUDA_SUCCESS;
}

API int cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
    if (!tls_ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&g_lock);
    *free_bytes = g_free;
    *total_bytes = g_total;
    g_counts.mem_get_info++;
    pthread_mutex_unlock(&g_lock);
    return CUDA_SUCCESS;
}

API int cuDeviceGetDefaultMemPool(void **pool, int dev)
{
    (void)dev;
    pthread_mutex_lock(&g_lock);
    int ok = g_pool_supported;
    pthread_mutex_unlock(&g_lock);
    if (!ok)
        return CUDA_ERROR_NOT_SUPPORTED;
    *pool = &g_pool_supported;
    return CUDA_SUCCESS;
}

API int cuMemPoolGetAttribute(void *pool, int attr, void *value)
{
    (void)pool;
    pthread_mutex_lock(&g_lock);
    int r = CUDA_SUCCESS;
    if (attr == 7) /* CU_MEMPOOL_ATTR_USED_MEM_CURRENT */
        *(uint64_t *)value = g_pool_used;
    else if (attr == 5) /* CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT */
        *(uint64_t *)value = g_pool_reserved;
    else
        r = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_unlock(&g_lock);
    return r;
}

/* Synchronising calls: the profiler must never make them; a test checks the count stays 0. */
static int count_sync(void)
{
    pthread_mutex_lock(&g_lock);
    g_counts.syncs++;
    pthread_mutex_unlock(&g_lock);
    return CUDA_SUCCESS;
}

API int cuCtxSynchronize(void)
{
    return count_sync();
}

API int cuEventSynchronize(void *ev)
{
    (void)ev;
    return count_sync();
}

API int cuStreamSynchronize(void *stream)
{
    (void)stream;
    return count_sync();
}
