/* The NVTX injection entry point of libgpuprof_nvtx.so (NVTX_INJECTION64_PATH). Only this shared
 * library defines InitializeInjectionNvtx2, so that static users of libgpuprof.a (the CUPTI
 * tracer's library among them) can define their own without a clash. */
#include <stdint.h>

#include "gpuprof/profiler.h"

GP_EXTERN int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t id));

int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t id))
{
    return gp_nvtx_initialize(get_export_table);
}
