/* NVML loader: dlopen + dlsym, newest function version first. See nvml.h. */
#include "produce/monitor/nvml.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Resolves the first symbol of names[] that the library exports; writes which one to *which. */
static void *resolve(void *lib, const char *const *names, size_t n, const char **which)
{
    for (size_t i = 0; i < n; i++) {
        void *p = dlsym(lib, names[i]);
        if (p) {
            if (which)
                *which = names[i];
            return p;
        }
    }
    if (which)
        *which = NULL;
    return NULL;
}

#define RESOLVE(field, ...)                                                                        \
    do {                                                                                           \
        static const char *const names_[] = {__VA_ARGS__};                                         \
        void *p_ = resolve(n->lib, names_, sizeof names_ / sizeof names_[0], NULL);                \
        memcpy(&n->field, &p_, sizeof p_);                                                         \
    } while (0)

#define RESOLVE_NAMED(field, which, ...)                                                           \
    do {                                                                                           \
        static const char *const names_[] = {__VA_ARGS__};                                         \
        void *p_ = resolve(n->lib, names_, sizeof names_ / sizeof names_[0], &n->which);           \
        memcpy(&n->field, &p_, sizeof p_);                                                         \
    } while (0)

static void resolve_procs(gp__nvml *n, int slot, const char *base)
{
    static const char *const suffix[] = {"_v3", "_v2", ""};
    char name[96];
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "%s%s", base, suffix[i]);
        void *p = dlsym(n->lib, name);
        if (p) {
            memcpy(&n->procs[slot], &p, sizeof p);
            n->proc_v1[slot] = (i == 2);
            n->proc_fn_name[slot] = suffix[i][0] == '_' ? (i == 0 ? "_v3" : "_v2") : "v1";
            return;
        }
    }
    n->procs[slot] = NULL;
    n->proc_fn_name[slot] = NULL;
}

const char *gp__nvml_strerror(const gp__nvml *n, gp__nvmlReturn r)
{
    if (n && n->error_string) {
        const char *s = n->error_string(r);
        if (s)
            return s;
    }
    switch (r) {
    case GP__NVMLR_SUCCESS:
        return "Success";
    case GP__NVMLR_NOT_SUPPORTED:
        return "Not Supported";
    case GP__NVMLR_DRIVER_NOT_LOADED:
        return "Driver Not Loaded";
    case GP__NVMLR_GPU_IS_LOST:
        return "GPU is lost";
    default:
        return "NVML error";
    }
}

gp_status gp__nvml_load(gp__nvml *n, gp_error *err)
{
    memset(n, 0, sizeof *n);
    const char *override = getenv("GP_NVML_LIBRARY");
    const char *candidates[3];
    size_t n_cand = 0;
    if (override && *override) {
        candidates[n_cand++] = override;
    } else {
        candidates[n_cand++] = "libnvidia-ml.so.1";
        candidates[n_cand++] = "libnvidia-ml.so";
    }
    char why[256] = "";
    for (size_t i = 0; i < n_cand && !n->lib; i++) {
        n->lib = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
        if (n->lib) {
            snprintf(n->lib_path, sizeof n->lib_path, "%s", candidates[i]);
        } else if (!why[0]) {
            const char *e = dlerror();
            snprintf(why, sizeof why, "%s", e ? e : candidates[i]);
        }
    }
    if (!n->lib)
        return gp_error_set(err, GP_ENODRIVER, "no NVIDIA driver found: cannot load %s (%s)",
                            override && *override ? override : "libnvidia-ml.so.1", why);

    RESOLVE(init, "nvmlInit_v2", "nvmlInit");
    RESOLVE(init_with_flags, "nvmlInitWithFlags");
    RESOLVE(shutdown, "nvmlShutdown");
    RESOLVE(error_string, "nvmlErrorString");
    RESOLVE(driver_version, "nvmlSystemGetDriverVersion");
    RESOLVE(device_count, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
    RESOLVE(device_handle, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
    RESOLVE(name, "nvmlDeviceGetName");
    RESOLVE(uuid, "nvmlDeviceGetUUID");
    RESOLVE(pci_info, "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2");
    RESOLVE(utilization, "nvmlDeviceGetUtilizationRates");
    RESOLVE_NAMED(memory_v2, memory_fn_name, "nvmlDeviceGetMemoryInfo_v2");
    RESOLVE(memory_v1, "nvmlDeviceGetMemoryInfo");
    if (!n->memory_v2)
        n->memory_fn_name = n->memory_v1 ? "nvmlDeviceGetMemoryInfo" : NULL;
    RESOLVE_NAMED(temperature_v, temperature_fn_name, "nvmlDeviceGetTemperatureV");
    RESOLVE(temperature, "nvmlDeviceGetTemperature");
    if (!n->temperature_v)
        n->temperature_fn_name = n->temperature ? "nvmlDeviceGetTemperature" : NULL;
    RESOLVE(temperature_threshold, "nvmlDeviceGetTemperatureThreshold");
    RESOLVE(power_usage, "nvmlDeviceGetPowerUsage");
    RESOLVE(power_limit, "nvmlDeviceGetEnforcedPowerLimit");
    RESOLVE(energy, "nvmlDeviceGetTotalEnergyConsumption");
    RESOLVE(clock, "nvmlDeviceGetClockInfo");
    RESOLVE(max_clock, "nvmlDeviceGetMaxClockInfo");
    RESOLVE(num_fans, "nvmlDeviceGetNumFans");
    RESOLVE(fan_speed_v2, "nvmlDeviceGetFanSpeed_v2");
    RESOLVE(fan_speed, "nvmlDeviceGetFanSpeed");
    RESOLVE(pcie_throughput, "nvmlDeviceGetPcieThroughput");
    RESOLVE_NAMED(clock_reasons, clock_reasons_fn_name, "nvmlDeviceGetCurrentClocksEventReasons",
                  "nvmlDeviceGetCurrentClocksThrottleReasons");
    RESOLVE(ecc_errors, "nvmlDeviceGetTotalEccErrors");
    resolve_procs(n, 0, "nvmlDeviceGetComputeRunningProcesses");
    resolve_procs(n, 1, "nvmlDeviceGetGraphicsRunningProcesses");
    resolve_procs(n, 2, "nvmlDeviceGetMPSComputeRunningProcesses");
    RESOLVE(process_utilization, "nvmlDeviceGetProcessUtilization");
    RESOLVE(mig_mode, "nvmlDeviceGetMigMode");
    RESOLVE(max_mig_count, "nvmlDeviceGetMaxMigDeviceCount");
    RESOLVE(mig_handle, "nvmlDeviceGetMigDeviceHandleByIndex");
    RESOLVE(event_set_create, "nvmlEventSetCreate");
    RESOLVE(register_events, "nvmlDeviceRegisterEvents");
    RESOLVE(event_set_wait, "nvmlEventSetWait_v2", "nvmlEventSetWait");
    RESOLVE(event_set_free, "nvmlEventSetFree");

    if (!n->init || !n->device_count || !n->device_handle) {
        gp_error_set(err, GP_ENODRIVER,
                     "no NVIDIA driver found: %s lacks nvmlInit / nvmlDeviceGetCount / "
                     "nvmlDeviceGetHandleByIndex",
                     n->lib_path);
        dlclose(n->lib);
        n->lib = NULL;
        return GP_ENODRIVER;
    }
    gp__nvmlReturn r = n->init();
    if (r != GP__NVMLR_SUCCESS) {
        gp_error_set(err, GP_ENODRIVER, "no NVIDIA driver found: nvmlInit failed: %s (NVML %d)",
                     gp__nvml_strerror(n, r), r);
        dlclose(n->lib);
        n->lib = NULL;
        return GP_ENODRIVER;
    }
    return GP_OK;
}

void gp__nvml_unload(gp__nvml *n)
{
    if (!n || !n->lib)
        return;
    if (n->shutdown)
        n->shutdown();
    dlclose(n->lib);
    n->lib = NULL;
}
