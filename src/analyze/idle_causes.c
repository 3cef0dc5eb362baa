/* What the host was doing while the GPU was idle, and the per-step breakdown
 * (docs/analyses.md, "Idle causes"). */
#include "gpuprof/analyze.h"

const char *gp_idle_cause_name(gp_idle_cause c)
{
    static const char *names[] = {"data_loading", "cpu",       "sync",
                                  "launch",       "comm_wait", "unrecorded"};
    return (unsigned)c < GP_IC_COUNT ? names[c] : "unknown";
}

const char *gp_step_part_name(gp_step_part p)
{
    static const char *names[] = {"kernel",  "memcpy",     "memset",   "communication",
                                  "runtime", "dataloader", "cpu_exec", "other"};
    return (unsigned)p < GP_SP_COUNT ? names[p] : "unknown";
}
