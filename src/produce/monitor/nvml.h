/* The NVML backend: the minimal NVML types we use (declared here like nvtop does; no nvml.h is
 * needed) and a table of function pointers resolved with dlsym, newest version first.
 * Internal to src/produce/monitor; the fake driver in tests/fakes/nvml includes it for the same
 * ABI. */
#ifndef GP_MONITOR_NVML_H
#define GP_MONITOR_NVML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpuprof/core.h"

/* ---- NVML ABI (public facts of nvml.h, API version 12/13) ---------------------------------- */

typedef struct gp__nvml_device_st *gp__nvmlDevice_t;
typedef struct gp__nvml_eventset_st *gp__nvmlEventSet_t;

enum {
    GP__NVMLR_SUCCESS = 0,
    GP__NVMLR_UNINITIALIZED = 1,
    GP__NVMLR_INVALID_ARGUMENT = 2,
    GP__NVMLR_NOT_SUPPORTED = 3,
    GP__NVMLR_NO_PERMISSION = 4,
    GP__NVMLR_NOT_FOUND = 6,
    GP__NVMLR_INSUFFICIENT_SIZE = 7,
    GP__NVMLR_DRIVER_NOT_LOADED = 9,
    GP__NVMLR_TIMEOUT = 10,
    GP__NVMLR_LIBRARY_NOT_FOUND = 12,
    GP__NVMLR_FUNCTION_NOT_FOUND = 13,
    GP__NVMLR_GPU_IS_LOST = 15,
    GP__NVMLR_ARGUMENT_VERSION_MISMATCH = 25,
    GP__NVMLR_UNKNOWN = 999
};

#define GP__NVML_STRUCT_VERSION(type, ver) ((unsigned int)(sizeof(type) | ((ver) << 24U)))

typedef struct {
    unsigned long long total, free, used;
} gp__nvmlMemory_t;

typedef struct {
    unsigned int version;
    unsigned long long total, reserved, free, used;
} gp__nvmlMemory_v2_t;
#define GP__NVML_MEMORY_V2 GP__NVML_STRUCT_VERSION(gp__nvmlMemory_v2_t, 2)

typedef struct {
    unsigned int gpu, memory;
} gp__nvmlUtilization_t;

typedef struct {
    unsigned int version;
    int sensorType;
    int temperature;
} gp__nvmlTemperature_v1_t;
#define GP__NVML_TEMPERATURE_V1 GP__NVML_STRUCT_VERSION(gp__nvmlTemperature_v1_t, 1)

typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} gp__nvmlPciInfo_t;

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
} gp__nvmlProcessInfo_v1_t;

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} gp__nvmlProcessInfo_v2_t; /* also the _v3 functions' layout */

typedef struct {
    unsigned int pid;
    unsigned long long timeStamp;
    unsigned int smUtil, memUtil, encUtil, decUtil;
} gp__nvmlProcessUtilizationSample_t;

typedef struct {
    gp__nvmlDevice_t device;
    unsigned long long eventType;
    unsigned long long eventData;
    unsigned int gpuInstanceId, computeInstanceId;
} gp__nvmlEventData_t;

#define GP__NVML_INIT_FLAG_NO_GPUS 1u
#define GP__NVML_EVENT_XID 0x8ull
#define GP__NVML_CLOCK_GRAPHICS 0
#define GP__NVML_CLOCK_SM 1
#define GP__NVML_CLOCK_MEM 2
#define GP__NVML_TEMP_THRESHOLD_SHUTDOWN 0
#define GP__NVML_TEMP_THRESHOLD_SLOWDOWN 1
#define GP__NVML_PCIE_TX 0
#define GP__NVML_PCIE_RX 1

/* ---- the function table ----------------------------------------------------------------- */

typedef int gp__nvmlReturn;
typedef gp__nvmlReturn (*gp__nvml_proc_fn)(gp__nvmlDevice_t, unsigned int *, void *);

typedef struct gp__nvml {
    void *lib;
    char lib_path[256];
    gp__nvmlReturn (*init)(void);
    gp__nvmlReturn (*init_with_flags)(unsigned int);
    gp__nvmlReturn (*shutdown)(void);
    const char *(*error_string)(gp__nvmlReturn);
    gp__nvmlReturn (*driver_version)(char *, unsigned int);
    gp__nvmlReturn (*device_count)(unsigned int *);
    gp__nvmlReturn (*device_handle)(unsigned int, gp__nvmlDevice_t *);
    gp__nvmlReturn (*name)(gp__nvmlDevice_t, char *, unsigned int);
    gp__nvmlReturn (*uuid)(gp__nvmlDevice_t, char *, unsigned int);
    gp__nvmlReturn (*pci_info)(gp__nvmlDevice_t, gp__nvmlPciInfo_t *);
    gp__nvmlReturn (*utilization)(gp__nvmlDevice_t, gp__nvmlUtilization_t *);
    gp__nvmlReturn (*memory_v2)(gp__nvmlDevice_t, gp__nvmlMemory_v2_t *);
    gp__nvmlReturn (*memory_v1)(gp__nvmlDevice_t, gp__nvmlMemory_t *);
    gp__nvmlReturn (*temperature_v)(gp__nvmlDevice_t, gp__nvmlTemperature_v1_t *);
    gp__nvmlReturn (*temperature)(gp__nvmlDevice_t, int, unsigned int *);
    gp__nvmlReturn (*temperature_threshold)(gp__nvmlDevice_t, int, unsigned int *);
    gp__nvmlReturn (*power_usage)(gp__nvmlDevice_t, unsigned int *);
    gp__nvmlReturn (*power_limit)(gp__nvmlDevice_t, unsigned int *);
    gp__nvmlReturn (*energy)(gp__nvmlDevice_t, unsigned long long *);
    gp__nvmlReturn (*clock)(gp__nvmlDevice_t, int, unsigned int *);
    gp__nvmlReturn (*max_clock)(gp__nvmlDevice_t, int, unsigned int *);
    gp__nvmlReturn (*num_fans)(gp__nvmlDevice_t, unsigned int *);
    gp__nvmlReturn (*fan_speed_v2)(gp__nvmlDevice_t, unsigned int, unsigned int *);
    gp__nvmlReturn (*fan_speed)(gp__nvmlDevice_t, unsigned int *);
    gp__nvmlReturn (*pcie_throughput)(gp__nvmlDevice_t, int, unsigned int *);
    gp__nvmlReturn (*clock_reasons)(gp__nvmlDevice_t, unsigned long long *);
    gp__nvmlReturn (*ecc_errors)(gp__nvmlDevice_t, int, int, unsigned long long *);
    /* processes: [0] compute, [1] graphics, [2] MPS compute; proc_v1 says the struct is v1 */
    gp__nvml_proc_fn procs[3];
    bool proc_v1[3];
    const char *proc_fn_name[3];
    gp__nvmlReturn (*process_utilization)(gp__nvmlDevice_t, gp__nvmlProcessUtilizationSample_t *,
                                          unsigned int *, unsigned long long);
    gp__nvmlReturn (*mig_mode)(gp__nvmlDevice_t, unsigned int *, unsigned int *);
    gp__nvmlReturn (*max_mig_count)(gp__nvmlDevice_t, unsigned int *);
    gp__nvmlReturn (*mig_handle)(gp__nvmlDevice_t, unsigned int, gp__nvmlDevice_t *);
    gp__nvmlReturn (*event_set_create)(gp__nvmlEventSet_t *);
    gp__nvmlReturn (*register_events)(gp__nvmlDevice_t, unsigned long long, gp__nvmlEventSet_t);
    gp__nvmlReturn (*event_set_wait)(gp__nvmlEventSet_t, gp__nvmlEventData_t *, unsigned int);
    gp__nvmlReturn (*event_set_free)(gp__nvmlEventSet_t);
    /* which versions were resolved (for health / docs / tests) */
    const char *memory_fn_name;
    const char *temperature_fn_name;
    const char *clock_reasons_fn_name;
} gp__nvml;

/* Loads the NVML library (GP_NVML_LIBRARY, else libnvidia-ml.so.1, else libnvidia-ml.so),
 * resolves the table and calls nvmlInit. GP_ENODRIVER with err "no NVIDIA driver found: ..." when
 * the library is missing, lacks the init/count/handle functions, or init fails. */
gp_status gp__nvml_load(gp__nvml *n, gp_error *err) GP_WARN_UNUSED;
/* nvmlShutdown + dlclose. Safe on a zeroed or failed table. */
void gp__nvml_unload(gp__nvml *n);
/* Text of an NVML return code (nvmlErrorString when available). */
const char *gp__nvml_strerror(const gp__nvml *n, gp__nvmlReturn r);

#endif
