/* The NVTX injection entry point of libgpuprof_nvtx.so (NVTX_INJECTION64_PATH). Only this shared
 * library defines InitializeInjectionNvtx2, so that static users of libgpuprof.a (the CUPTI
 * tracer's library among them) can define their own without a clash. The library holds its own
 * copy of gpuprof (archive symbols hidden) and writes the global profiler's JSON profile at exit
 * to $GPUPROF_OUTPUT (default gpuprof_nvtx.json). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpuprof/profiler.h"

GP_EXTERN int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t id));

static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void write_at_exit(void)
{
    const char *out = getenv("GPUPROF_OUTPUT");
    if (!out || !*out)
        out = "gpuprof_nvtx.json";
    gp_error err;
    if (gp_profiler_export_json(gp_profiler_global(), out, &err) != GP_OK)
        fprintf(stderr, "gpuprof: NVTX profile not written: %s\n", err.msg);
    else
        fprintf(stderr, "gpuprof: NVTX profile written to %s\n", out);
}

static void register_exit(void)
{
    atexit(write_at_exit);
}

int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t id))
{
    int ok = gp_nvtx_initialize(get_export_table);
    if (ok)
        pthread_once(&g_once, register_exit);
    return ok;
}
