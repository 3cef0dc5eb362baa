// A C++ program using every public header of an installed gpuprof (scripts/check-install): it
// links only when the headers give the functions C linkage (extern "C"), and prints a few results.
#include <cstdio>
#include <cstring>

#include "gpuprof/analyze.h"
#include "gpuprof/core.h"
#include "gpuprof/diff.h"
#include "gpuprof/monitor.h"
#include "gpuprof/profiler.h"
#include "gpuprof/report.h"
#include "gpuprof/serve.h"
#include "gpuprof/summary.h"
#include "gpuprof/trace.h"

int main()
{
    gp_profiler *p = nullptr;
    if (gp_profiler_create(nullptr, &p) != GP_OK)
        return 1;
    gp_range_begin(p, "cxx_range", NULL);
    gp_range_end(p);
    gp_profiler_flush(p);
    gp_profiler_stats st;
    gp_profiler_get_stats(p, &st);
    gp_profiler_destroy(p);
    std::printf("gpuprof %s from C++: %llu range; \"%s\"; exit code %d\n", GP_VERSION_STRING,
                (unsigned long long)st.ranges, gp_strerror(GP_ENOMEM),
                gp_status_exit_code(GP_EPARSE));
    return st.ranges == 1 && std::strcmp(gp_strerror(GP_OK), "") != 0 ? 0 : 1;
}
