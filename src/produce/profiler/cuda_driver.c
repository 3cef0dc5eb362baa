/* CUDA driver function table: see cuda_driver.h. */
#include "produce/profiler/cuda_driver.h"

#include "gpuprof/profiler.h"

#include "core/lock.h"
#include "core/util.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static gp__cuda g_cuda;
static gp__mutex g_ev_lock = GP_MUTEX_INIT;
static void **g_ev_free GP_GUARDED_BY(g_ev_lock);
static size_t g_ev_n GP_GUARDED_BY(g_ev_lock), g_ev_cap GP_GUARDED_BY(g_ev_lock);
static _Thread_local const gp__cuda *tls_ctx_ok; /* table for which this thread has a context */

static void *sym2(void *h, const char *a, const char *b)
{
    void *f = dlsym(h, a);
    if (!f && b)
        f = dlsym(h, b);
    return f;
}

static void load(const char *path)
{
    gp__cuda *c = &g_cuda;
    memset(c, 0, sizeof(*c));
    if (!path)
        path = getenv("GPUPROF_CUDA_LIBRARY");
    if (!path || !*path)
        path = "libcuda.so.1";
    c->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!c->handle) {
        const char *e = dlerror();
        c->status = GP_ENODRIVER;
        snprintf(c->why, sizeof(c->why), "no CUDA driver (%s)", e ? e : path);
        return;
    }
    void *h = c->handle;
#define REQ(field, name, alt)                                                                      \
    do {                                                                                           \
        *(void **)&c->field = sym2(h, name, alt);                                                  \
        if (!c->field) {                                                                           \
            c->status = GP_ENODRIVER;                                                              \
            snprintf(c->why, sizeof(c->why), "no CUDA driver (%s lacks %s)", path, name);          \
            return;                                                                                \
        }                                                                                          \
    } while (0)
    REQ(cuInit, "cuInit", NULL);
    REQ(cuDeviceGet, "cuDeviceGet", NULL);
    REQ(cuCtxGetCurrent, "cuCtxGetCurrent", NULL);
    REQ(cuCtxSetCurrent, "cuCtxSetCurrent", NULL);
    REQ(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL);
    REQ(cuEventCreate, "cuEventCreate", NULL);
    REQ(cuEventRecord, "cuEventRecord", NULL);
    REQ(cuEventQuery, "cuEventQuery", NULL);
    REQ(cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime");
    REQ(cuEventDestroy, "cuEventDestroy_v2", "cuEventDestroy");
    REQ(cuMemGetInfo, "cuMemGetInfo_v2", "cuMemGetInfo");
#undef REQ
    *(void **)&c->cuDeviceGetDefaultMemPool = dlsym(h, "cuDeviceGetDefaultMemPool");
    *(void **)&c->cuMemPoolGetAttribute = dlsym(h, "cuMemPoolGetAttribute");
    gp__CUresult r = c->cuInit(0);
    if (r != GP__CUDA_SUCCESS) {
        c->status = GP_ENODRIVER;
        snprintf(c->why, sizeof(c->why), "no CUDA driver (cuInit failed with error %d)", r);
        return;
    }
    c->status = GP_OK;
}

static void load_default(void)
{
    load(NULL);
}

const gp__cuda *gp__cuda_get(void)
{
    pthread_once(&g_once, load_default);
    return &g_cuda;
}

const char *gp_profiler_cuda_status(void)
{
    const gp__cuda *c = gp__cuda_get();
    return c->status == GP_OK ? NULL : c->why;
}

const gp__cuda *gp__cuda_reload(const char *path)
{
    pthread_once(&g_once, load_default);
    gp__mutex_lock(&g_ev_lock);
    g_ev_n = 0; /* events of the old library are abandoned */
    gp__mutex_unlock(&g_ev_lock);
    tls_ctx_ok = NULL;
    load(path);
    return &g_cuda;
}

gp_status gp__cuda_ensure_context(const gp__cuda *c)
{
    if (c->status != GP_OK)
        return c->status;
    if (tls_ctx_ok == c)
        return GP_OK;
    void *ctx = NULL;
    if (c->cuCtxGetCurrent(&ctx) != GP__CUDA_SUCCESS)
        return GP_EEXTERNAL;
    if (!ctx) {
        int dev = 0;
        if (c->cuDeviceGet(&dev, 0) != GP__CUDA_SUCCESS ||
            c->cuDevicePrimaryCtxRetain(&ctx, dev) != GP__CUDA_SUCCESS ||
            c->cuCtxSetCurrent(ctx) != GP__CUDA_SUCCESS)
            return GP_EEXTERNAL;
    }
    tls_ctx_ok = c;
    return GP_OK;
}

gp_status gp__cuda_event_get(const gp__cuda *c, void **ev)
{
    gp_status st = gp__cuda_ensure_context(c);
    if (st != GP_OK)
        return st;
    gp__mutex_lock(&g_ev_lock);
    if (g_ev_n > 0) {
        *ev = g_ev_free[--g_ev_n];
        gp__mutex_unlock(&g_ev_lock);
        return GP_OK;
    }
    gp__mutex_unlock(&g_ev_lock);
    void *e = NULL;
    if (c->cuEventCreate(&e, 0) != GP__CUDA_SUCCESS || !e)
        return GP_EEXTERNAL;
    *ev = e;
    return GP_OK;
}

void gp__cuda_event_put(const gp__cuda *c, void *ev)
{
    if (!ev)
        return;
    gp__mutex_lock(&g_ev_lock);
    if (g_ev_n < 4096 && (g_ev_n < g_ev_cap || gp__grow((void **)&g_ev_free, &g_ev_cap,
                                                        sizeof(void *), g_ev_n + 1) == GP_OK)) {
        g_ev_free[g_ev_n++] = ev;
        gp__mutex_unlock(&g_ev_lock);
        return;
    }
    gp__mutex_unlock(&g_ev_lock);
    c->cuEventDestroy(ev);
}
