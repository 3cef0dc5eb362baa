/* Loads CUPTI with dlopen and fills the gp__cupti function table. */
#include "produce/tracer/cupti_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copies dlsym's result into a function pointer without a pointer-type pun warning. */
#define GP__SYM(api, field, name, required)                                                        \
    do {                                                                                           \
        void *sym_ = dlsym((api)->handle, name);                                                   \
        if (!sym_ && (required)) {                                                                 \
            missing = name;                                                                        \
            goto fail;                                                                             \
        }                                                                                          \
        memcpy(&(api)->field, &sym_, sizeof sym_);                                                 \
    } while (0)

static void *try_open(const char *path, char *tried, size_t cap)
{
    if (!path || !*path)
        return NULL;
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        size_t used = strlen(tried);
        const char *why = dlerror();
        if (used < cap)
            snprintf(tried + used, cap - used, "%s%s (%s)", used ? "; " : "", path,
                     why ? why : "not loadable");
    }
    return h;
}

gp_status gp__cupti_load(gp__cupti *api, const char *hint, gp_error *err)
{
    memset(api, 0, sizeof *api);
    char tried[1024] = "";
    const char *env = getenv("GP_CUPTI_LIBRARY");
    const char *missing = NULL;
    if (env && *env) {
        api->handle = try_open(env, tried, sizeof tried);
    } else {
        /* A CUPTI the program already loaded (PyTorch ships its own): use that one, never a second
         * copy in the same process. */
        static const char *const sonames[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};
        for (size_t i = 0; i < sizeof sonames / sizeof sonames[0] && !api->handle; i++)
            api->handle = dlopen(sonames[i], RTLD_NOW | RTLD_NOLOAD);
        const char *candidates[] = {hint, "libcupti.so.13", "libcupti.so"};
        for (size_t i = 0; i < sizeof candidates / sizeof candidates[0] && !api->handle; i++)
            api->handle = try_open(candidates[i], tried, sizeof tried);
    }
    if (!api->handle)
        return gp_error_set(err, GP_ENODRIVER, "cannot load CUPTI: %s", tried);
    void *probe = dlsym(api->handle, "cuptiGetVersion");
    Dl_info info;
    if (probe && dladdr(probe, &info) && info.dli_fname)
        snprintf(api->path, sizeof api->path, "%s", info.dli_fname);
    else
        snprintf(api->path, sizeof api->path, "libcupti");
    GP__SYM(api, GetVersion, "cuptiGetVersion", 1);
    GP__SYM(api, GetResultString, "cuptiGetResultString", 1);
    GP__SYM(api, Subscribe, "cuptiSubscribe", 1);
    GP__SYM(api, Unsubscribe, "cuptiUnsubscribe", 1);
    GP__SYM(api, EnableCallback, "cuptiEnableCallback", 1);
    GP__SYM(api, GetCallbackName, "cuptiGetCallbackName", 0);
    GP__SYM(api, ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks", 1);
    GP__SYM(api, ActivityRegisterTimestampCallback, "cuptiActivityRegisterTimestampCallback", 1);
    GP__SYM(api, ActivityEnable, "cuptiActivityEnable", 1);
    GP__SYM(api, ActivityDisable, "cuptiActivityDisable", 1);
    GP__SYM(api, ActivitySetAttribute, "cuptiActivitySetAttribute", 1);
    GP__SYM(api, ActivityFlushAll, "cuptiActivityFlushAll", 1);
    GP__SYM(api, ActivityFlushPeriod, "cuptiActivityFlushPeriod", 0);
    GP__SYM(api, ActivityGetNextRecord, "cuptiActivityGetNextRecord", 1);
    GP__SYM(api, ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords", 1);
    GP__SYM(api, ActivityEnableCudaEventDeviceTimestamps,
            "cuptiActivityEnableCudaEventDeviceTimestamps", 0);
    GP__SYM(api, SetThreadIdType, "cuptiSetThreadIdType", 0);
    return GP_OK;
fail:
    gp_error_set(err, GP_ENODRIVER, "%s: CUPTI library lacks %s", api->path, missing);
    /* The handle stays open: closing a library the driver may already use is not safe. */
    api->handle = NULL;
    return GP_ENODRIVER;
}

const char *gp__cupti_errstr(const gp__cupti *api, CUptiResult r)
{
    const char *s = NULL;
    if (api && api->GetResultString && api->GetResultString(r, &s) == CUPTI_SUCCESS && s)
        return s;
    return "unknown CUPTI error";
}
