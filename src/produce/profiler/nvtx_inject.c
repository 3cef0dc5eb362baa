/* The NVTX injection entry point of libgpuprof_nvtx.so (NVTX_INJECTION64_PATH). Only this shared
 * library defines InitializeInjectionNvtx2, so that static users of libgpuprof.a (the CUPTI
 * tracer's library among them) can define their own without a clash. The library holds its own
 * copy of gpuprof (archive symbols hidden) and writes the global profiler's JSON profile at exit
 * to $GPUPROF_OUTPUT (default gpuprof_nvtx.json). The library belongs to the produce layer, so the
 * profile is gp_profiler_to_trace as written by gp_trace_write_chrome: its metadata has no
 * "summary" array (that needs the analyze layer; `gpuprof summary` computes it from the file). */
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
    gp_trace *t = NULL;
    gp_status st = gp_profiler_to_trace(gp_profiler_global(), &t);
    if (st != GP_OK)
        gp_error_set(&err, st, "%s: cannot build the profile: %s", out, gp_strerror(st));
    else
        st = gp_trace_write_chrome(t, out, &err);
    gp_trace_free(t);
    if (st != GP_OK)
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
