/* The CUPTI functions the tracer calls, behind a table of function pointers filled with dlopen +
 * dlsym, so the injection library has no link-time dependency on libcupti and the tests can load
 * a fake libcupti.so that implements the same C ABI (tests/fakes/cupti).
 *
 * Types come from the installed CUDA headers (cupti.h): the records the tracer reads are the real
 * struct layouts of the toolkit it was built with. Internal (gp__ prefix); not installed. */
#ifndef GP_TRACER_CUPTI_API_H
#define GP_TRACER_CUPTI_API_H

#include <cupti.h>

#include "gpuprof/core.h"

typedef struct gp__cupti {
    void *handle; /* dlopen handle; never closed (the driver may call back until exit) */
    char path[4096];
    CUptiResult (*GetVersion)(uint32_t *version);
    CUptiResult (*GetResultString)(CUptiResult result, const char **str);
    CUptiResult (*Subscribe)(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb, void *ud);
    CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle sub);
    CUptiResult (*EnableCallback)(uint32_t enable, CUpti_SubscriberHandle sub,
                                  CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
    CUptiResult (*GetCallbackName)(CUpti_CallbackDomain domain, uint32_t cbid, const char **name);
    CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc req,
                                             CUpti_BuffersCallbackCompleteFunc done);
    CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc fn);
    CUptiResult (*ActivityEnable)(CUpti_ActivityKind kind);
    CUptiResult (*ActivityDisable)(CUpti_ActivityKind kind);
    CUptiResult (*ActivitySetAttribute)(CUpti_ActivityAttribute attr, size_t *size, void *value);
    CUptiResult (*ActivityFlushAll)(uint32_t flag);
    CUptiResult (*ActivityFlushPeriod)(uint32_t ms);
    CUptiResult (*ActivityGetNextRecord)(uint8_t *buffer, size_t valid, CUpti_Activity **record);
    CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext ctx, uint32_t stream, size_t *dropped);
    /* Optional (NULL when the library lacks it). */
    CUptiResult (*ActivityEnableCudaEventDeviceTimestamps)(uint8_t enable);
    CUptiResult (*SetThreadIdType)(CUpti_ActivityThreadIdType type);
} gp__cupti;

/* Loads CUPTI into *api. The GP_CUPTI_LIBRARY environment variable, when set, is the only choice
 * (tests point it at the fake). Otherwise: a libcupti already loaded in the process (so there is
 * never a second copy), then `hint` (may be NULL: the path found when gpuprof was built),
 * "libcupti.so.13", "libcupti.so". api->path receives the file actually loaded. Fails with
 * GP_ENODRIVER (err names every path tried and dlerror) when no library loads or a required symbol
 * is missing. */
gp_status gp__cupti_load(gp__cupti *api, const char *hint, gp_error *err) GP_WARN_UNUSED;

/* A static text for a CUPTI result ("CUPTI_ERROR_..." via cuptiGetResultString when it works). */
const char *gp__cupti_errstr(const gp__cupti *api, CUptiResult r);

#endif
