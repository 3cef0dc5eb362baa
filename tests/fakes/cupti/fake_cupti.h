/* Control interface of the fake libcupti.so (tests/fakes/cupti): what a test harness calls to make
 * the fake deliver activity records, as the real CUPTI would while a CUDA program runs.
 *
 * The fake implements the CUPTI C functions that the tracer calls, with the real record structs of
 * the installed CUDA headers. It tests gpuprof's code, not CUDA: nothing here runs on a GPU.
 *
 * Scenario text: one command per line, `key=value` fields, `#` comments. Times (`at`, `dur`) are
 * nanoseconds after the moment fake_cupti_run() was called, read through the timestamp callback the
 * tracer registered (CLOCK_REALTIME, as real CUPTI, when none was registered).
 *   device id=0 name=FakeGPU sms=132
 *   context id=1 device=0
 *   runtime api=cudaLaunchKernel at=100 dur=20 corr=1 [tid=N] [pid=N]
 *   driver api=cuLaunchKernel at=100 dur=20 corr=1
 *   kernel name=_Z6vecAddPfS_S_i at=150 dur=500 corr=1 device=0 stream=7 ctx=1
 *          grid=256,1,1 block=256,1,1 regs=32 smem=0,1024 [graph=3 node=9]
 *   memcpy kind=HtoD src=Pageable dst=Device bytes=4096 at= dur= corr= stream= [device=]
 *   memcpy2 (peer copy: same fields, plus srcdev= dstdev=)
 *   memset bytes= value= at= dur= corr= stream=
 *   sync type=stream|event|context|wait at= dur= corr= stream= ctx=
 *   event corr= at= stream= device=
 *   range_start id= name= at= [domain=]     range_end id= at=     mark name= at=
 *   alloc addr= bytes= at= device=          free addr= bytes= at= device=
 *   pool utilized= at= device=
 *   overhead kind=buffer_request|instrumentation at= dur=
 *   drop n=N          (records CUPTI had no room for)
 *   flush             (deliver this thread's buffer now, as CUPTI's worker would)
 *   defer on|off      (hold completed buffers until a forced flush: lets a buffer pool run dry)
 *   repeat n=N step=NS <command>   (N copies, `at` advanced by step, `corr` by 1 each)
 */
#ifndef GP_TESTS_FAKE_CUPTI_H
#define GP_TESTS_FAKE_CUPTI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Runs a scenario on the calling thread. Returns the number of records written into activity
 * buffers (records of kinds the tracer did not enable are not written, as with real CUPTI), or -1
 * on a malformed line (the line is printed to stderr). */
int fake_cupti_run(const char *scenario);

/* Calls the subscriber's callback for cuProfilerStop (API exit), as the driver would. */
void fake_cupti_profiler_stop(void);

/* Queries: "subscribed", "ts_callback", "per_thread", "buffer_callbacks", "thread_id_system",
 * "enabled:<CUPTI_ACTIVITY_KIND number>", "callback:profiler_stop", "callback:device_reset",
 * "callback:context_destroy", "requests", "completions",
 * "null_buffers" (requests answered with no buffer). 0 for unknown names. */
uint64_t fake_cupti_query(const char *what);

/* Makes the next cuptiSubscribe fail with CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, as when
 * Nsight Systems or another tool is attached (also: environment FAKE_CUPTI_OTHER_SUBSCRIBER=1). */
void fake_cupti_set_other_subscriber(int on);

#ifdef __cplusplus
}
#endif
#endif
