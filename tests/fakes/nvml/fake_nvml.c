/* A fake libnvidia-ml.so.1 for tests: the NVML C ABI with values scripted by a scenario file.
 * It tests gpuprof's monitor code; it proves nothing about a real GPU or driver.
 *
 * GP_FAKE_NVML_SCENARIO=path selects the scenario (format: tests/fakes/nvml/README.md); without it
 * the fake has one idle GPU. Time: seconds since nvmlInit times GP_FAKE_NVML_SPEED (default 1),
 * unless a test pins it with fake_nvml_set_time(). Built twice: the full library, and with
 * FAKE_NVML_OLD an "old driver" without the versioned functions (memory _v2, TemperatureV,
 * ClocksEventReasons, processes _v3/_v2, EventSetWait_v2) to test the fallbacks. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "produce/monitor/nvml.h"

#define API __attribute__((visibility("default")))
#define MAX_DEV 16
#define MAX_PROC 64
#define MAX_PTS 24
#define MAX_XID 64

enum field {
    F_UTIL_GPU,
    F_UTIL_MEM,
    F_MEM_TOTAL,
    F_MEM_USED,
    F_MEM_RESERVED,
    F_TEMP,
    F_TEMP_SLOWDOWN,
    F_TEMP_SHUTDOWN,
    F_POWER_MW,
    F_POWER_LIMIT_MW,
    F_ENERGY_MJ,
    F_CLOCK_GRAPHICS,
    F_CLOCK_SM,
    F_CLOCK_MEM,
    F_MAX_CLOCK_GRAPHICS,
    F_MAX_CLOCK_SM,
    F_MAX_CLOCK_MEM,
    F_FAN,
    F_PCIE_TX_KBS,
    F_PCIE_RX_KBS,
    F_THROTTLE,
    F_ECC_CORRECTED,
    F_ECC_UNCORRECTED,
    F_MIG_MODE,
    F_PROCESSES, /* only for "unsupported" */
    F_PROC_UTIL, /* only for "unsupported" */
    F_COUNT
};

static const char *const field_names[F_COUNT] = {
    "util_gpu",       "util_mem",        "mem_total",
    "mem_used",       "mem_reserved",    "temp",
    "temp_slowdown",  "temp_shutdown",   "power_mw",
    "power_limit_mw", "energy_mj",       "clock_graphics",
    "clock_sm",       "clock_mem",       "max_clock_graphics",
    "max_clock_sm",   "max_clock_mem",   "fan",
    "pcie_tx_kbs",    "pcie_rx_kbs",     "throttle",
    "ecc_corrected",  "ecc_uncorrected", "mig_mode",
    "processes",      "proc_util"};

typedef struct point {
    double t, v;
    bool ramp_to; /* the value ramps linearly from the previous point to this one */
} point;

typedef struct series {
    point pts[MAX_PTS];
    int n;
    double noise; /* deterministic +- amplitude */
} series;

typedef struct proc {
    unsigned pid;
    int type; /* 0 compute, 1 graphics, 2 mps */
    series mem;
    double sm_util;
} proc;

typedef struct device {
    char name[96], uuid[96], pci[32];
    series f[F_COUNT];
    bool unsupported[F_COUNT];
    double lost_at; /* < 0: never */
    proc procs[MAX_PROC];
    int n_procs;
    int procs_race;          /* times the list grows between the size query and the fetch */
    unsigned mem_v2_version; /* version the "driver" accepts */
    int mig_count;
    bool ready; /* defaults applied */
} device;

typedef struct xid {
    double t;
    int dev;
    unsigned long long code;
    bool delivered;
} xid;

static struct {
    pthread_mutex_t lock;
    bool loaded, inited;
    int init_error;
    int n_dev;
    device dev[MAX_DEV];
    xid xids[MAX_XID];
    int n_xid;
    double speed;
    struct timespec t0;
    bool pinned;
    double pinned_t;
    atomic_ulong calls[64];
    char driver[32];
} S = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* per-function call counters, read by tests through fake_nvml_calls() */
enum {
    C_UTIL,
    C_MEM_V2,
    C_MEM_V1,
    C_TEMP_V,
    C_TEMP,
    C_POWER,
    C_FAN,
    C_PCIE,
    C_PROCS,
    C_PROC_UTIL,
    C_REASONS,
    C_ECC,
    C_CLOCK,
    C_EVENT_WAIT,
    C_COUNT
};
static const char *const call_names[C_COUNT] = {"nvmlDeviceGetUtilizationRates",
                                                "nvmlDeviceGetMemoryInfo_v2",
                                                "nvmlDeviceGetMemoryInfo",
                                                "nvmlDeviceGetTemperatureV",
                                                "nvmlDeviceGetTemperature",
                                                "nvmlDeviceGetPowerUsage",
                                                "nvmlDeviceGetFanSpeed",
                                                "nvmlDeviceGetPcieThroughput",
                                                "nvmlDeviceGetComputeRunningProcesses",
                                                "nvmlDeviceGetProcessUtilization",
                                                "nvmlDeviceGetCurrentClocksEventReasons",
                                                "nvmlDeviceGetTotalEccErrors",
                                                "nvmlDeviceGetClockInfo",
                                                "nvmlEventSetWait"};
#define COUNT(c) atomic_fetch_add(&S.calls[c], 1)

static int find_field(const char *name)
{
    for (int i = 0; i < F_COUNT; i++)
        if (strcmp(field_names[i], name) == 0)
            return i;
    return -1;
}

static void series_set(series *s, double t, double v, bool ramp)
{
    if (s->n >= MAX_PTS)
        return;
    /* keep points ordered by time (scenario lines may come in any order) */
    int i = s->n;
    while (i > 0 && s->pts[i - 1].t > t) {
        s->pts[i] = s->pts[i - 1];
        i--;
    }
    s->pts[i] = (point){t, v, ramp};
    s->n++;
}

static double hash01(unsigned a, unsigned b, uint64_t c)
{
    uint64_t x = (uint64_t)a * 0x9E3779B97F4A7C15ull ^ (uint64_t)b * 0xC2B2AE3D27D4EB4Full ^ c;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (double)(x >> 11) / 9007199254740992.0;
}

static double series_at(const series *s, double t, unsigned dev, unsigned field)
{
    if (s->n == 0)
        return 0;
    double v = s->pts[0].v;
    for (int i = 0; i < s->n; i++) {
        if (s->pts[i].t <= t) {
            v = s->pts[i].v;
        } else {
            if (s->pts[i].ramp_to && i > 0) {
                const point *a = &s->pts[i - 1], *b = &s->pts[i];
                v = a->v + (b->v - a->v) * (t - a->t) / (b->t - a->t);
            }
            break;
        }
    }
    if (s->noise > 0)
        v += s->noise * (2 * hash01(dev, field, (uint64_t)llround(t * 10)) - 1);
    return v;
}

static double now_s(void)
{
    if (S.pinned)
        return S.pinned_t;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ((double)(ts.tv_sec - S.t0.tv_sec) + (ts.tv_nsec - S.t0.tv_nsec) / 1e9) * S.speed;
}

static void defaults(device *d, int i)
{
    /* field by field: touching the whole table would make the fake's own memory dominate the
     * monitor's resident size in the benchmark */
    for (int f = 0; f < F_COUNT; f++) {
        d->f[f].n = 0;
        d->f[f].noise = 0;
        d->unsupported[f] = false;
    }
    d->n_procs = 0;
    d->procs_race = 0;
    d->mig_count = 0;
    snprintf(d->name, sizeof d->name, "Fake GPU %d", i);
    snprintf(d->uuid, sizeof d->uuid, "GPU-fa4e0000-0000-0000-0000-%012d", i);
    snprintf(d->pci, sizeof d->pci, "00000000:%02X:00.0", 0x10 + i);
    d->lost_at = -1;
    d->mem_v2_version = GP__NVML_MEMORY_V2;
    static const double defs[F_COUNT] = {[F_UTIL_GPU] = 0,
                                         [F_UTIL_MEM] = 0,
                                         [F_MEM_TOTAL] = 80e9,
                                         [F_MEM_USED] = 1e9,
                                         [F_MEM_RESERVED] = 5e8,
                                         [F_TEMP] = 40,
                                         [F_TEMP_SLOWDOWN] = 90,
                                         [F_TEMP_SHUTDOWN] = 95,
                                         [F_POWER_MW] = 60000,
                                         [F_POWER_LIMIT_MW] = 400000,
                                         [F_ENERGY_MJ] = 1e6,
                                         [F_CLOCK_GRAPHICS] = 1410,
                                         [F_CLOCK_SM] = 1410,
                                         [F_CLOCK_MEM] = 1593,
                                         [F_MAX_CLOCK_GRAPHICS] = 1410,
                                         [F_MAX_CLOCK_SM] = 1410,
                                         [F_MAX_CLOCK_MEM] = 1593,
                                         [F_FAN] = 30,
                                         [F_PCIE_TX_KBS] = 1000,
                                         [F_PCIE_RX_KBS] = 2000,
                                         [F_THROTTLE] = 0,
                                         [F_ECC_CORRECTED] = 0,
                                         [F_ECC_UNCORRECTED] = 0,
                                         [F_MIG_MODE] = 0};
    for (int f = 0; f < F_COUNT; f++)
        series_set(&d->f[f], 0, defs[f], false);
}

/* Parses a device selector: "*" (all) or an index. Returns -2 for all, -1 on error. */
static int parse_dev(const char *s)
{
    if (strcmp(s, "*") == 0)
        return -2;
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v < 0 || v >= MAX_DEV)
        return -1;
    return (int)v;
}

static void die(const char *path, int line, const char *what)
{
    fprintf(stderr, "fake NVML: %s:%d: %s\n", path, line, what);
    abort();
}

static void apply_series(int dev, const char *fname, double t0, double v0, double t1, double v1,
                         bool ramp, const char *path, int line)
{
    for (int i = 0; i < S.n_dev; i++) {
        if (dev != -2 && dev != i)
            continue;
        device *d = &S.dev[i];
        series *s = NULL;
        if (strncmp(fname, "proc_mem.", 9) == 0) {
            unsigned pid = (unsigned)strtoul(fname + 9, NULL, 10);
            for (int p = 0; p < d->n_procs; p++)
                if (d->procs[p].pid == pid)
                    s = &d->procs[p].mem;
            if (!s)
                die(path, line, "proc_mem.<pid> before its 'proc' line");
        } else {
            int f = find_field(fname);
            if (f < 0)
                die(path, line, "unknown field");
            s = &d->f[f];
        }
        if (t0 == 0 && !ramp) { /* replaces the default at t=0 */
            for (int k = 0; k < s->n; k++)
                if (s->pts[k].t == 0) {
                    s->pts[k].v = v0;
                    goto next;
                }
        }
        series_set(s, t0, v0, false);
        if (ramp)
            series_set(s, t1, v1, true);
    next:;
    }
}

static void ensure_defaults(void)
{
    for (int i = 0; i < S.n_dev; i++)
        if (!S.dev[i].ready) {
            defaults(&S.dev[i], i);
            S.dev[i].ready = true;
        }
}

static void load_scenario(void)
{
    S.n_dev = 1;
    for (int i = 0; i < MAX_DEV; i++)
        S.dev[i].ready = false;
    snprintf(S.driver, sizeof S.driver, "580.65.06");
    ensure_defaults();
    const char *path = getenv("GP_FAKE_NVML_SCENARIO");
    if (!path || !*path)
        return;
    FILE *fp = fopen(path, "r");
    if (!fp)
        die(path, 0, "cannot open scenario");
    char buf[512];
    int line = 0;
    while (fgets(buf, sizeof buf, fp)) {
        line++;
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = 0;
        char *tok[12];
        int nt = 0;
        char *save = NULL;
        for (char *p = strtok_r(buf, " \t\r\n", &save); p && nt < 12;
             p = strtok_r(NULL, " \t\r\n", &save))
            tok[nt++] = p;
        if (nt == 0)
            continue;
        const char *k = tok[0];
        if (strcmp(k, "devices") == 0 && nt == 2) {
            S.n_dev = atoi(tok[1]);
            if (S.n_dev < 0 || S.n_dev > MAX_DEV)
                die(path, line, "devices out of range");
            ensure_defaults();
        } else if ((strcmp(k, "name") == 0 || strcmp(k, "uuid") == 0 || strcmp(k, "pci") == 0) &&
                   nt >= 3) {
            int d = parse_dev(tok[1]);
            if (d < 0)
                die(path, line, "bad device");
            char *dst = k[0] == 'n' ? S.dev[d].name : k[0] == 'u' ? S.dev[d].uuid : S.dev[d].pci;
            size_t cap = k[0] == 'p' ? sizeof S.dev[d].pci : sizeof S.dev[d].name;
            dst[0] = 0;
            for (int i = 2; i < nt; i++) {
                size_t len = strlen(dst);
                snprintf(dst + len, cap - len, "%s%s", i > 2 ? " " : "", tok[i]);
            }
        } else if (strcmp(k, "set") == 0 && nt == 4) {
            int d = parse_dev(tok[1]);
            if (d == -1)
                die(path, line, "bad device");
            apply_series(d, tok[2], 0, atof(tok[3]), 0, 0, false, path, line);
        } else if (strcmp(k, "at") == 0 && nt == 5) {
            int d = parse_dev(tok[2]);
            if (d == -1)
                die(path, line, "bad device");
            apply_series(d, tok[3], atof(tok[1]), atof(tok[4]), 0, 0, false, path, line);
        } else if (strcmp(k, "ramp") == 0 && nt == 7) {
            int d = parse_dev(tok[3]);
            if (d == -1)
                die(path, line, "bad device");
            apply_series(d, tok[4], atof(tok[1]), atof(tok[5]), atof(tok[2]), atof(tok[6]), true,
                         path, line);
        } else if (strcmp(k, "noise") == 0 && nt == 4) {
            int d = parse_dev(tok[1]);
            int f = find_field(tok[2]);
            if (d == -1 || f < 0)
                die(path, line, "bad noise line");
            for (int i = 0; i < S.n_dev; i++)
                if (d == -2 || d == i)
                    S.dev[i].f[f].noise = atof(tok[3]);
        } else if (strcmp(k, "unsupported") == 0 && nt == 3) {
            int d = parse_dev(tok[1]);
            int f = find_field(tok[2]);
            if (d == -1 || f < 0)
                die(path, line, "bad unsupported line");
            for (int i = 0; i < S.n_dev; i++)
                if (d == -2 || d == i)
                    S.dev[i].unsupported[f] = true;
        } else if (strcmp(k, "lost") == 0 && nt == 3) {
            int d = parse_dev(tok[1]);
            if (d < 0)
                die(path, line, "bad device");
            S.dev[d].lost_at = atof(tok[2]);
        } else if (strcmp(k, "xid") == 0 && nt == 4) {
            int d = parse_dev(tok[2]);
            if (d < 0 || S.n_xid >= MAX_XID)
                die(path, line, "bad xid line");
            S.xids[S.n_xid++] = (xid){atof(tok[1]), d, strtoull(tok[3], NULL, 10), false};
        } else if (strcmp(k, "proc") == 0 && (nt == 5 || nt == 6)) {
            int d = parse_dev(tok[1]);
            if (d < 0 || S.dev[d].n_procs >= MAX_PROC)
                die(path, line, "bad proc line");
            proc *p = &S.dev[d].procs[S.dev[d].n_procs++];
            memset(p, 0, sizeof *p);
            p->pid = (unsigned)strtoul(tok[2], NULL, 10);
            p->type = strcmp(tok[3], "graphics") == 0 ? 1 : strcmp(tok[3], "mps") == 0 ? 2 : 0;
            series_set(&p->mem, 0, atof(tok[4]), false);
            p->sm_util = nt == 6 ? atof(tok[5]) : -1;
        } else if (strcmp(k, "procs_race") == 0 && nt == 3) {
            int d = parse_dev(tok[1]);
            if (d < 0)
                die(path, line, "bad device");
            S.dev[d].procs_race = atoi(tok[2]);
        } else if (strcmp(k, "memory_v2_version") == 0 && nt == 3) {
            int d = parse_dev(tok[1]);
            if (d == -1)
                die(path, line, "bad device");
            for (int i = 0; i < S.n_dev; i++)
                if (d == -2 || d == i)
                    S.dev[i].mem_v2_version = (unsigned)strtoul(tok[2], NULL, 0);
        } else if (strcmp(k, "mig") == 0 && nt == 3) {
            int d = parse_dev(tok[1]);
            if (d < 0)
                die(path, line, "bad device");
            S.dev[d].mig_count = atoi(tok[2]);
            apply_series(d, "mig_mode", 0, S.dev[d].mig_count > 0, 0, 0, false, path, line);
        } else if (strcmp(k, "init_error") == 0 && nt == 2) {
            S.init_error = atoi(tok[1]);
        } else if (strcmp(k, "driver") == 0 && nt == 2) {
            snprintf(S.driver, sizeof S.driver, "%s", tok[1]);
        } else {
            die(path, line, "unknown or malformed line");
        }
    }
    fclose(fp);
}

/* ---- test hooks (not NVML) -------------------------------------------------------------- */

API void fake_nvml_set_time(double seconds)
{
    pthread_mutex_lock(&S.lock);
    S.pinned = true;
    S.pinned_t = seconds;
    pthread_mutex_unlock(&S.lock);
}

/* Forgets the scenario, the clock and the counters: the next nvmlInit reads the scenario again. */
API void fake_nvml_reload(void)
{
    pthread_mutex_lock(&S.lock);
    S.loaded = false;
    S.inited = false;
    S.pinned = false;
    S.n_xid = 0;
    S.init_error = 0;
    for (int i = 0; i < C_COUNT; i++)
        atomic_store(&S.calls[i], 0);
    pthread_mutex_unlock(&S.lock);
}

API unsigned long fake_nvml_calls(const char *fn)
{
    for (int i = 0; i < C_COUNT; i++)
        if (strcmp(call_names[i], fn) == 0)
            return atomic_load(&S.calls[i]);
    return 0;
}

/* ---- NVML ------------------------------------------------------------------------------- */

#define DEV(h) ((device *)(void *)(h))

static int check(gp__nvmlDevice_t h, int field, double *t)
{
    if (!S.inited)
        return GP__NVMLR_UNINITIALIZED;
    device *d = DEV(h);
    if (!d || d < S.dev || d >= S.dev + S.n_dev)
        return GP__NVMLR_INVALID_ARGUMENT;
    *t = now_s();
    if (d->lost_at >= 0 && *t >= d->lost_at)
        return GP__NVMLR_GPU_IS_LOST;
    if (field >= 0 && d->unsupported[field])
        return GP__NVMLR_NOT_SUPPORTED;
    return GP__NVMLR_SUCCESS;
}

static double val(gp__nvmlDevice_t h, int field, double t)
{
    device *d = DEV(h);
    double v = series_at(&d->f[field], t, (unsigned)(d - S.dev), (unsigned)field);
    return v < 0 ? 0 : v;
}

API int nvmlInit_v2(void)
{
    pthread_mutex_lock(&S.lock);
    if (!S.loaded) {
        load_scenario();
        const char *sp = getenv("GP_FAKE_NVML_SPEED");
        S.speed = sp && *sp ? atof(sp) : 1.0;
        clock_gettime(CLOCK_MONOTONIC, &S.t0);
        S.loaded = true;
    }
    int r = S.init_error;
    if (r == 0)
        S.inited = true;
    pthread_mutex_unlock(&S.lock);
    return r;
}

API int nvmlInitWithFlags(unsigned int flags)
{
    (void)flags;
    return nvmlInit_v2();
}

API int nvmlShutdown(void)
{
    S.inited = false;
    return 0;
}

API const char *nvmlErrorString(int r)
{
    switch (r) {
    case GP__NVMLR_SUCCESS:
        return "Success";
    case GP__NVMLR_NOT_SUPPORTED:
        return "Not Supported";
    case GP__NVMLR_INSUFFICIENT_SIZE:
        return "Insufficient Size";
    case GP__NVMLR_DRIVER_NOT_LOADED:
        return "Driver Not Loaded";
    case GP__NVMLR_TIMEOUT:
        return "Timeout";
    case GP__NVMLR_FUNCTION_NOT_FOUND:
        return "Function Not Found";
    case GP__NVMLR_GPU_IS_LOST:
        return "GPU is lost";
    case GP__NVMLR_ARGUMENT_VERSION_MISMATCH:
        return "Argument version mismatch";
    default:
        return "Unknown Error";
    }
}

API int nvmlSystemGetDriverVersion(char *buf, unsigned int len)
{
    snprintf(buf, len, "%s", S.driver);
    return 0;
}

API int nvmlDeviceGetCount_v2(unsigned int *count)
{
    if (!S.inited)
        return GP__NVMLR_UNINITIALIZED;
    *count = (unsigned)S.n_dev;
    return 0;
}

API int nvmlDeviceGetHandleByIndex_v2(unsigned int i, gp__nvmlDevice_t *out)
{
    if (!S.inited)
        return GP__NVMLR_UNINITIALIZED;
    if (i >= (unsigned)S.n_dev)
        return GP__NVMLR_INVALID_ARGUMENT;
    *out = (gp__nvmlDevice_t)(void *)&S.dev[i];
    return 0;
}

API int nvmlDeviceGetName(gp__nvmlDevice_t h, char *buf, unsigned int len)
{
    double t;
    int r = check(h, -1, &t);
    if (r == 0)
        snprintf(buf, len, "%s", DEV(h)->name);
    return r;
}

API int nvmlDeviceGetUUID(gp__nvmlDevice_t h, char *buf, unsigned int len)
{
    double t;
    int r = check(h, -1, &t);
    if (r == 0)
        snprintf(buf, len, "%s", DEV(h)->uuid);
    return r;
}

API int nvmlDeviceGetPciInfo_v3(gp__nvmlDevice_t h, gp__nvmlPciInfo_t *pci)
{
    double t;
    int r = check(h, -1, &t);
    if (r == 0) {
        memset(pci, 0, sizeof *pci);
        snprintf(pci->busId, sizeof pci->busId, "%s", DEV(h)->pci);
    }
    return r;
}

API int nvmlDeviceGetUtilizationRates(gp__nvmlDevice_t h, gp__nvmlUtilization_t *u)
{
    COUNT(C_UTIL);
    double t;
    int r = check(h, F_UTIL_GPU, &t);
    if (r == 0) {
        u->gpu = (unsigned)llround(val(h, F_UTIL_GPU, t));
        u->memory = (unsigned)llround(val(h, F_UTIL_MEM, t));
    }
    return r;
}

static void memory_now(gp__nvmlDevice_t h, double t, double *total, double *reserved, double *used)
{
    *total = val(h, F_MEM_TOTAL, t);
    *reserved = val(h, F_MEM_RESERVED, t);
    *used = val(h, F_MEM_USED, t);
    if (*used + *reserved > *total)
        *used = *total - *reserved;
}

#ifndef FAKE_NVML_OLD
API int nvmlDeviceGetMemoryInfo_v2(gp__nvmlDevice_t h, gp__nvmlMemory_v2_t *m)
{
    COUNT(C_MEM_V2);
    double t;
    int r = check(h, F_MEM_USED, &t);
    if (r != 0)
        return r;
    /* The driver rejects a struct version it does not know (observed: FUNCTION_NOT_FOUND, as
     * nvtop's plain "2" gets). */
    if (m->version != DEV(h)->mem_v2_version)
        return GP__NVMLR_FUNCTION_NOT_FOUND;
    double total, reserved, used;
    memory_now(h, t, &total, &reserved, &used);
    m->total = (unsigned long long)total;
    m->reserved = (unsigned long long)reserved;
    m->used = (unsigned long long)used;
    m->free = m->total - m->reserved - m->used;
    return 0;
}
#endif

API int nvmlDeviceGetMemoryInfo(gp__nvmlDevice_t h, gp__nvmlMemory_t *m)
{
    COUNT(C_MEM_V1);
    double t;
    int r = check(h, F_MEM_USED, &t);
    if (r != 0)
        return r;
    double total, reserved, used;
    memory_now(h, t, &total, &reserved, &used);
    /* v1 "used" includes the reserved memory */
    m->total = (unsigned long long)total;
    m->used = (unsigned long long)(used + reserved);
    m->free = m->total - m->used;
    return 0;
}

#ifndef FAKE_NVML_OLD
API int nvmlDeviceGetTemperatureV(gp__nvmlDevice_t h, gp__nvmlTemperature_v1_t *tv)
{
    COUNT(C_TEMP_V);
    double t;
    int r = check(h, F_TEMP, &t);
    if (r != 0)
        return r;
    if (tv->version != GP__NVML_TEMPERATURE_V1)
        return GP__NVMLR_ARGUMENT_VERSION_MISMATCH;
    tv->temperature = (int)llround(val(h, F_TEMP, t));
    return 0;
}
#endif

API int nvmlDeviceGetTemperature(gp__nvmlDevice_t h, int sensor, unsigned int *out)
{
    COUNT(C_TEMP);
    double t;
    int r = check(h, F_TEMP, &t);
    if (r == 0)
        *out = (unsigned)llround(val(h, F_TEMP, t));
    return r;
}

API int nvmlDeviceGetTemperatureThreshold(gp__nvmlDevice_t h, int type, unsigned int *out)
{
    int f = type == GP__NVML_TEMP_THRESHOLD_SLOWDOWN ? F_TEMP_SLOWDOWN : F_TEMP_SHUTDOWN;
    double t;
    int r = check(h, f, &t);
    if (r == 0)
        *out = (unsigned)llround(val(h, f, t));
    return r;
}

#define SIMPLE_UINT(fn, field, counter)                                                            \
    API int fn(gp__nvmlDevice_t h, unsigned int *out)                                              \
    {                                                                                              \
        counter;                                                                                   \
        double t;                                                                                  \
        int r = check(h, field, &t);                                                               \
        if (r == 0)                                                                                \
            *out = (unsigned)llround(val(h, field, t));                                            \
        return r;                                                                                  \
    }

SIMPLE_UINT(nvmlDeviceGetPowerUsage, F_POWER_MW, COUNT(C_POWER))
SIMPLE_UINT(nvmlDeviceGetEnforcedPowerLimit, F_POWER_LIMIT_MW, (void)0)
SIMPLE_UINT(nvmlDeviceGetFanSpeed, F_FAN, COUNT(C_FAN))

API int nvmlDeviceGetNumFans(gp__nvmlDevice_t h, unsigned int *n)
{
    double t;
    int r = check(h, F_FAN, &t);
    if (r == 0)
        *n = 1;
    return r;
}

API int nvmlDeviceGetFanSpeed_v2(gp__nvmlDevice_t h, unsigned int fan, unsigned int *out)
{
    COUNT(C_FAN);
    double t;
    int r = check(h, F_FAN, &t);
    if (r == 0 && fan != 0)
        return GP__NVMLR_INVALID_ARGUMENT;
    if (r == 0)
        *out = (unsigned)llround(val(h, F_FAN, t));
    return r;
}

API int nvmlDeviceGetTotalEnergyConsumption(gp__nvmlDevice_t h, unsigned long long *out)
{
    double t;
    int r = check(h, F_ENERGY_MJ, &t);
    if (r == 0) /* the scenario's energy plus the integral of the scripted power */
        *out = (unsigned long long)llround(val(h, F_ENERGY_MJ, t) + val(h, F_POWER_MW, t) * t);
    return r;
}

API int nvmlDeviceGetClockInfo(gp__nvmlDevice_t h, int type, unsigned int *out)
{
    COUNT(C_CLOCK);
    int f = type == GP__NVML_CLOCK_GRAPHICS ? F_CLOCK_GRAPHICS
            : type == GP__NVML_CLOCK_SM     ? F_CLOCK_SM
                                            : F_CLOCK_MEM;
    double t;
    int r = check(h, f, &t);
    if (r == 0)
        *out = (unsigned)llround(val(h, f, t));
    return r;
}

API int nvmlDeviceGetMaxClockInfo(gp__nvmlDevice_t h, int type, unsigned int *out)
{
    int f = type == GP__NVML_CLOCK_GRAPHICS ? F_MAX_CLOCK_GRAPHICS
            : type == GP__NVML_CLOCK_SM     ? F_MAX_CLOCK_SM
                                            : F_MAX_CLOCK_MEM;
    double t;
    int r = check(h, f, &t);
    if (r == 0)
        *out = (unsigned)llround(val(h, f, t));
    return r;
}

API int nvmlDeviceGetPcieThroughput(gp__nvmlDevice_t h, int counter, unsigned int *out)
{
    COUNT(C_PCIE);
    int f = counter == GP__NVML_PCIE_TX ? F_PCIE_TX_KBS : F_PCIE_RX_KBS;
    double t;
    int r = check(h, f, &t);
    if (r == 0)
        *out = (unsigned)llround(val(h, f, t));
    return r;
}

static int reasons(gp__nvmlDevice_t h, unsigned long long *out)
{
    COUNT(C_REASONS);
    double t;
    int r = check(h, F_THROTTLE, &t);
    if (r == 0)
        *out = (unsigned long long)llround(val(h, F_THROTTLE, t));
    return r;
}

#ifndef FAKE_NVML_OLD
API int nvmlDeviceGetCurrentClocksEventReasons(gp__nvmlDevice_t h, unsigned long long *out)
{
    return reasons(h, out);
}
#endif

API int nvmlDeviceGetCurrentClocksThrottleReasons(gp__nvmlDevice_t h, unsigned long long *out)
{
    return reasons(h, out);
}

API int nvmlDeviceGetTotalEccErrors(gp__nvmlDevice_t h, int type, int counter,
                                    unsigned long long *out)
{
    COUNT(C_ECC);
    int f = type == 0 ? F_ECC_CORRECTED : F_ECC_UNCORRECTED;
    double t;
    int r = check(h, f, &t);
    if (r == 0)
        *out = (unsigned long long)llround(val(h, f, t));
    return r;
}

/* Running processes of one type. v1 selects the 16-byte struct. */
static int procs(gp__nvmlDevice_t h, int type, unsigned int *count, void *infos, bool v1)
{
    if (type == 0)
        COUNT(C_PROCS);
    double t;
    int r = check(h, F_PROCESSES, &t);
    if (r != 0)
        return r;
    device *d = DEV(h);
    pthread_mutex_lock(&S.lock);
    unsigned n = 0;
    for (int i = 0; i < d->n_procs; i++)
        n += d->procs[i].type == type;
    /* a process starts between the caller's size query and its fetch */
    if (type == 0 && d->procs_race > 0 && *count > 0 && d->n_procs < MAX_PROC) {
        d->procs_race--;
        proc *p = &d->procs[d->n_procs++];
        memset(p, 0, sizeof *p);
        p->pid = 90000u + (unsigned)d->n_procs;
        p->type = 0;
        p->sm_util = -1;
        series_set(&p->mem, 0, 1e6, false);
        n++;
    }
    if (*count < n || (infos == NULL && n > 0)) {
        *count = n;
        pthread_mutex_unlock(&S.lock);
        return GP__NVMLR_INSUFFICIENT_SIZE;
    }
    unsigned k = 0;
    for (int i = 0; i < d->n_procs; i++) {
        const proc *p = &d->procs[i];
        if (p->type != type)
            continue;
        unsigned long long mem =
            (unsigned long long)series_at(&p->mem, t, (unsigned)(d - S.dev), 1000 + p->pid);
        if (v1) {
            gp__nvmlProcessInfo_v1_t *o = (gp__nvmlProcessInfo_v1_t *)infos + k;
            o->pid = p->pid;
            o->usedGpuMemory = mem;
        } else {
            gp__nvmlProcessInfo_v2_t *o = (gp__nvmlProcessInfo_v2_t *)infos + k;
            o->pid = p->pid;
            o->usedGpuMemory = mem;
            o->gpuInstanceId = 0xFFFFFFFFu;
            o->computeInstanceId = 0xFFFFFFFFu;
        }
        k++;
    }
    *count = k;
    pthread_mutex_unlock(&S.lock);
    return 0;
}

#ifndef FAKE_NVML_OLD
API int nvmlDeviceGetComputeRunningProcesses_v3(gp__nvmlDevice_t h, unsigned int *c, void *i)
{
    return procs(h, 0, c, i, false);
}
API int nvmlDeviceGetGraphicsRunningProcesses_v3(gp__nvmlDevice_t h, unsigned int *c, void *i)
{
    return procs(h, 1, c, i, false);
}
API int nvmlDeviceGetMPSComputeRunningProcesses_v3(gp__nvmlDevice_t h, unsigned int *c, void *i)
{
    return procs(h, 2, c, i, false);
}
#endif
API int nvmlDeviceGetComputeRunningProcesses(gp__nvmlDevice_t h, unsigned int *c, void *i)
{
    return procs(h, 0, c, i, true);
}
API int nvmlDeviceGetGraphicsRunningProcesses(gp__nvmlDevice_t h, unsigned int *c, void *i)
{
    return procs(h, 1, c, i, true);
}

API int nvmlDeviceGetProcessUtilization(gp__nvmlDevice_t h,
                                        gp__nvmlProcessUtilizationSample_t *samples,
                                        unsigned int *count, unsigned long long last_seen)
{
    COUNT(C_PROC_UTIL);
    double t;
    int r = check(h, F_PROC_UTIL, &t);
    if (r != 0)
        return r;
    device *d = DEV(h);
    unsigned n = 0;
    for (int i = 0; i < d->n_procs; i++)
        n += d->procs[i].sm_util >= 0;
    if (n == 0)
        return GP__NVMLR_NOT_FOUND;
    if (!samples || *count < n) {
        *count = n;
        return GP__NVMLR_INSUFFICIENT_SIZE;
    }
    unsigned k = 0;
    for (int i = 0; i < d->n_procs; i++) {
        if (d->procs[i].sm_util < 0)
            continue;
        samples[k].pid = d->procs[i].pid;
        samples[k].timeStamp = (unsigned long long)(t * 1e6) + 1;
        samples[k].smUtil = (unsigned)d->procs[i].sm_util;
        samples[k].memUtil = 0;
        samples[k].encUtil = samples[k].decUtil = 0;
        k++;
    }
    *count = k;
    return 0;
}

API int nvmlDeviceGetMigMode(gp__nvmlDevice_t h, unsigned int *current, unsigned int *pending)
{
    double t;
    int r = check(h, F_MIG_MODE, &t);
    if (r == 0)
        *current = *pending = (unsigned)llround(val(h, F_MIG_MODE, t));
    return r;
}

API int nvmlDeviceGetMaxMigDeviceCount(gp__nvmlDevice_t h, unsigned int *count)
{
    double t;
    int r = check(h, F_MIG_MODE, &t);
    if (r == 0)
        *count = (unsigned)DEV(h)->mig_count;
    return r;
}

API int nvmlDeviceGetMigDeviceHandleByIndex(gp__nvmlDevice_t h, unsigned int i,
                                            gp__nvmlDevice_t *out)
{
    double t;
    int r = check(h, F_MIG_MODE, &t);
    if (r != 0)
        return r;
    if (i >= (unsigned)DEV(h)->mig_count)
        return GP__NVMLR_NOT_FOUND;
    *out = h;
    return 0;
}

struct gp__nvml_eventset_st {
    unsigned registered; /* device bits */
};

API int nvmlEventSetCreate(gp__nvmlEventSet_t *set)
{
    *set = calloc(1, sizeof **set);
    return *set ? 0 : GP__NVMLR_UNKNOWN;
}

API int nvmlEventSetFree(gp__nvmlEventSet_t set)
{
    free(set);
    return 0;
}

API int nvmlDeviceRegisterEvents(gp__nvmlDevice_t h, unsigned long long types,
                                 gp__nvmlEventSet_t set)
{
    double t;
    int r = check(h, -1, &t);
    if (r != 0)
        return r;
    if (types & GP__NVML_EVENT_XID)
        set->registered |= 1u << (DEV(h) - S.dev);
    return 0;
}

static int event_wait(gp__nvmlEventSet_t set, gp__nvmlEventData_t *data, unsigned int timeout_ms)
{
    COUNT(C_EVENT_WAIT);
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        pthread_mutex_lock(&S.lock);
        double t = now_s();
        for (int i = 0; i < S.n_xid; i++) {
            xid *x = &S.xids[i];
            if (!x->delivered && x->t <= t && (set->registered >> x->dev & 1u)) {
                x->delivered = true;
                memset(data, 0, sizeof *data);
                data->device = (gp__nvmlDevice_t)(void *)&S.dev[x->dev];
                data->eventType = GP__NVML_EVENT_XID;
                data->eventData = x->code;
                pthread_mutex_unlock(&S.lock);
                return 0;
            }
        }
        pthread_mutex_unlock(&S.lock);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double waited = (now.tv_sec - start.tv_sec) * 1e3 + (now.tv_nsec - start.tv_nsec) / 1e6;
        if (waited >= timeout_ms)
            return GP__NVMLR_TIMEOUT;
        struct timespec nap = {0, 5 * 1000000};
        nanosleep(&nap, NULL);
    }
}

#ifndef FAKE_NVML_OLD
API int nvmlEventSetWait_v2(gp__nvmlEventSet_t set, gp__nvmlEventData_t *data,
                            unsigned int timeout_ms)
{
    return event_wait(set, data, timeout_ms);
}
#endif
API int nvmlEventSetWait(gp__nvmlEventSet_t set, gp__nvmlEventData_t *data, unsigned int timeout_ms)
{
    return event_wait(set, data, timeout_ms);
}
