/* The CUDA driver API behind a function table, loaded with dlopen (libcuda.so.1, or the path in
 * GPUPROF_CUDA_LIBRARY). Only the calls the profiler needs; no CUDA header required. Internal. */
#ifndef GP_PROFILER_CUDA_DRIVER_H
#define GP_PROFILER_CUDA_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "gpuprof/core.h"

typedef int gp__CUresult; /* CUDA_SUCCESS = 0 */
#define GP__CUDA_SUCCESS 0
#define GP__CUDA_ERROR_NOT_READY 600
#define GP__CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT 5
#define GP__CU_MEMPOOL_ATTR_USED_MEM_CURRENT 7

typedef struct gp__cuda {
    gp_status status; /* GP_OK when every required symbol resolved and cuInit succeeded */
    char why[192];    /* what failed, for reports ("no CUDA driver: ...") */
    void *handle;
    gp__CUresult (*cuInit)(unsigned flags);
    gp__CUresult (*cuDeviceGet)(int *dev, int ordinal);
    gp__CUresult (*cuCtxGetCurrent)(void **ctx);
    gp__CUresult (*cuCtxSetCurrent)(void *ctx);
    gp__CUresult (*cuDevicePrimaryCtxRetain)(void **ctx, int dev);
    gp__CUresult (*cuEventCreate)(void **ev, unsigned flags);
    gp__CUresult (*cuEventRecord)(void *ev, void *stream);
    gp__CUresult (*cuEventQuery)(void *ev);
    gp__CUresult (*cuEventElapsedTime)(float *ms, void *start, void *end);
    gp__CUresult (*cuEventDestroy)(void *ev);
    gp__CUresult (*cuMemGetInfo)(size_t *free_bytes, size_t *total_bytes);
    /* optional (NULL when absent): the default memory pool's use */
    gp__CUresult (*cuDeviceGetDefaultMemPool)(void **pool, int dev);
    gp__CUresult (*cuMemPoolGetAttribute)(void *pool, int attr, void *value);
} gp__cuda;

/* The process's driver table, loaded on first call (thread-safe). Never NULL; check ->status. */
const gp__cuda *gp__cuda_get(void);
/* Tests only (not thread-safe): drops the current table and loads path (NULL: the default). */
const gp__cuda *gp__cuda_reload(const char *path);
/* Makes sure the calling thread has a current context (retains device 0's primary context when
 * it has none). GP_ENODRIVER / GP_EEXTERNAL. */
gp_status gp__cuda_ensure_context(const gp__cuda *c);
/* Events from a shared free list (created with default flags on demand). */
gp_status gp__cuda_event_get(const gp__cuda *c, void **ev);
void gp__cuda_event_put(const gp__cuda *c, void *ev);

#endif
