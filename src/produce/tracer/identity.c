/* Who produced a trace: rank, world size, process and CUPTI version. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "produce/tracer/tracer_internal.h"

static int32_t env_int(const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *v = getenv(names[i]);
        if (!v || !*v)
            continue;
        char *end;
        long x = strtol(v, &end, 10);
        if (*end == '\0' && x >= 0 && x <= INT32_MAX)
            return (int32_t)x;
        return -1;
    }
    return -1;
}

int32_t gp__tracer_env_rank(void)
{
    static const char *const names[] = {"RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK"};
    return env_int(names, sizeof names / sizeof names[0]);
}

int32_t gp__tracer_env_world_size(void)
{
    static const char *const names[] = {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS",
                                        "PMI_SIZE"};
    return env_int(names, sizeof names / sizeof names[0]);
}

void gp__tracer_fill_identity(gp_trace *t, const gp__cupti *api)
{
    int32_t rank = gp__tracer_env_rank();
    if (rank >= 0) {
        t->dist.present = true;
        t->dist.rank = rank;
        t->dist.world_size = gp__tracer_env_world_size();
        t->rank = rank;
    }
    char buf[64];
    gp_status s = gp_trace_set_meta(t, "trace_producer", "\"gpuprof trace " GP_VERSION_STRING "\"");
    if (s == GP_OK)
        s = gp_trace_set_meta(t, "clock", "\"CLOCK_MONOTONIC\"");
    snprintf(buf, sizeof buf, "%d", (int)getpid());
    if (s == GP_OK)
        s = gp_trace_set_meta(t, "pid", buf);
    uint32_t v = 0;
    if (s == GP_OK && api && api->GetVersion && api->GetVersion(&v) == CUPTI_SUCCESS) {
        snprintf(buf, sizeof buf, "%u", v);
        s = gp_trace_set_meta(t, "cupti_version", buf);
    }
    (void)s; /* metadata is best effort */
}
