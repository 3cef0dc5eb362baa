/* Clocks. gp__clock_ns() is CLOCK_MONOTONIC in ns: the one clock of everything gpuprof records
 * (in-process ranges, CUPTI records via its timestamp callback, monitor samples). */
#ifndef GP_CORE_CLOCK_H
#define GP_CORE_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t gp__clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline int64_t gp__clock_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* CPU time of the calling thread, ns. */
static inline int64_t gp__thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#endif
