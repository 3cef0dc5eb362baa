/* The critical path of each step (docs/analyses.md, "Critical path"). */
#include "gpuprof/analyze.h"

const char *gp_cp_class_name(gp_cp_class c)
{
    static const char *names[] = {"cpu_bound",
                                  "data_loading",
                                  "gpu_compute_bound",
                                  "gpu_communication_bound",
                                  "gpu_kernel_kernel_overhead",
                                  "gpu_kernel_launch_overhead",
                                  "dependency"};
    return (unsigned)c < GP_CP_COUNT ? names[c] : "unknown";
}
