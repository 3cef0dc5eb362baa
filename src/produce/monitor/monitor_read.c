/* The monitor's NVML reads: one GPU's metrics (sampler-private state, no lock), its process list,
 * PCIe throughput and XID events. Vendor code only: what happens to a sample afterwards is in
 * monitor_commit.c. See docs/internals/monitor.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/util.h"
#include "produce/monitor/monitor_internal.h"

/* Handles a non-success NVML return for the metrics in mask. */
static void nvml_failed(gp_monitor *m, gp__mon_gpu *g, uint64_t mask, int r, const char *fn,
                        char *errbuf, size_t errlen)
{
    if (r == GP__NVMLR_NOT_SUPPORTED || r == GP__NVMLR_FUNCTION_NOT_FOUND) {
        g->unsup |= mask; /* remembered: never polled again */
    } else if (r == GP__NVMLR_GPU_IS_LOST) {
        g->lost = true;
    } else if (errbuf[0] == 0) {
        snprintf(errbuf, errlen, "gpu%u: %s: %s (NVML %d)", g->id.index, fn,
                 gp__nvml_strerror(&m->nvml, r), r);
    }
}

static bool want(const gp_monitor *m, const gp__mon_gpu *g, uint64_t mask)
{
    if (g->lost)
        return false;
    for (int k = 0; k < GP_M_COUNT; k++)
        if ((mask & GP__MON_BIT(k)) && !(g->unsup & GP__MON_BIT(k)) &&
            gp_monitor_config_wants(&m->cfg, k))
            return true;
    return false;
}

/* Calls an optional table entry; a missing function reads as FUNCTION_NOT_FOUND. */
#define CALL(fn, ...) ((fn) ? (fn)(__VA_ARGS__) : GP__NVMLR_FUNCTION_NOT_FOUND)

static void put(gp_gpu_sample *s, gp_metric k, double v)
{
    s->v[k] = v;
    s->valid |= GP__MON_BIT(k);
}

/* ---- processes -------------------------------------------------------------------------- */

/* The entry of pid in the next process list, added when new; NULL when out of memory. */
static gp_gpu_process *proc_entry(gp__mon_gpu *g, uint32_t pid, uint32_t gi, uint32_t ci)
{
    for (size_t k = 0; k < g->n_procs_next; k++)
        if (g->procs_next[k].pid == pid)
            return &g->procs_next[k];
    gp_gpu_process *q = GP_PUSH(g->procs_next, g->n_procs_next, g->cap_procs_next);
    if (!q)
        return NULL;
    q->pid = pid;
    q->mem_bytes = -1;
    q->sm_util = q->mem_util = -1;
    q->gpu_instance_id = gi;
    q->compute_instance_id = ci;
    return q;
}

/* Calls process-list function `slot` (compute, graphics, MPS) with NVML's size protocol: the list
 * may grow between calls, so it retries a few times with a larger buffer. Returns the NVML result;
 * *count receives the entries. GP-level failure (out of memory) returns -1 with errbuf set. */
static int proc_list_call(gp__mon_gpu *g, gp__nvml_proc_fn fn, unsigned *count, char *errbuf,
                          size_t errlen)
{
    int r = GP__NVMLR_INSUFFICIENT_SIZE;
    *count = 0;
    for (int attempt = 0; attempt < 4 && r == GP__NVMLR_INSUFFICIENT_SIZE; attempt++) {
        if (g->proc_buf_cap == 0 || *count > g->proc_buf_cap) {
            unsigned want_cap = GP_MAX(*count + 8, g->proc_buf_cap ? g->proc_buf_cap * 2 : 16);
            void *nb = realloc(g->proc_buf, want_cap * sizeof(gp__nvmlProcessInfo_v2_t));
            if (!nb) {
                snprintf(errbuf, errlen, "gpu%u: out of memory for the process list", g->id.index);
                return -1;
            }
            g->proc_buf = nb;
            g->proc_buf_cap = want_cap;
        }
        *count = g->proc_buf_cap;
        r = fn(g->h, count, g->proc_buf);
    }
    return r;
}

/* Merges the `count` entries of g->proc_buf (list `slot`) into the next process list. Returns
 * false when out of memory. */
static bool merge_procs(const gp_monitor *m, gp__mon_gpu *g, int slot, unsigned count)
{
    size_t esz =
        m->nvml.proc_v1[slot] ? sizeof(gp__nvmlProcessInfo_v1_t) : sizeof(gp__nvmlProcessInfo_v2_t);
    for (unsigned i = 0; i < count; i++) {
        const char *p = (const char *)g->proc_buf + i * esz;
        uint32_t pid;
        unsigned long long mem;
        uint32_t gi = 0xFFFFFFFFu, ci = 0xFFFFFFFFu;
        if (m->nvml.proc_v1[slot]) {
            const gp__nvmlProcessInfo_v1_t *e = (const gp__nvmlProcessInfo_v1_t *)p;
            pid = e->pid;
            mem = e->usedGpuMemory;
        } else {
            const gp__nvmlProcessInfo_v2_t *e = (const gp__nvmlProcessInfo_v2_t *)p;
            pid = e->pid;
            mem = e->usedGpuMemory;
            gi = e->gpuInstanceId;
            ci = e->computeInstanceId;
        }
        gp_gpu_process *q = proc_entry(g, pid, gi, ci);
        if (!q)
            return false;
        q->types |= slot == 0 ? GP_PROC_COMPUTE : slot == 1 ? GP_PROC_GRAPHICS : GP_PROC_MPS;
        /* NVML reports "not available" as ~0ULL (e.g. without permission in containers) */
        if (mem != ~0ULL && (int64_t)mem > q->mem_bytes)
            q->mem_bytes = (int64_t)mem;
    }
    return true;
}

/* Per-process utilization (detailed level) into the next process list. */
static void read_process_util(gp_monitor *m, gp__mon_gpu *g)
{
    if (m->cfg.level < GP_LEVEL_DETAILED || !m->nvml.process_utilization || g->lost ||
        g->n_procs_next == 0 || (g->unsup & GP__MON_BIT(GP_M_PROCESSES)))
        return;
    unsigned count = 0;
    int r = m->nvml.process_utilization(g->h, NULL, &count, g->util_last_seen);
    if (r == GP__NVMLR_INSUFFICIENT_SIZE || r == GP__NVMLR_SUCCESS) {
        if (count > g->util_buf_cap) {
            void *nb = realloc(g->util_buf, (count + 8) * sizeof *g->util_buf);
            if (!nb)
                return;
            g->util_buf = nb;
            g->util_buf_cap = count + 8;
        }
        count = g->util_buf_cap;
        r = g->util_buf ? m->nvml.process_utilization(g->h, g->util_buf, &count, g->util_last_seen)
                        : GP__NVMLR_NOT_FOUND;
    }
    if (r != GP__NVMLR_SUCCESS)
        return; /* NOT_FOUND: no new samples since last time; NOT_SUPPORTED on MIG */
    for (unsigned i = 0; i < count; i++) {
        const gp__nvmlProcessUtilizationSample_t *u = &g->util_buf[i];
        if (u->timeStamp > g->util_last_seen)
            g->util_last_seen = u->timeStamp;
        if (u->smUtil > 100 || u->memUtil > 100)
            continue; /* bogus samples seen on some drivers (nvtop#110) */
        for (size_t k = 0; k < g->n_procs_next; k++)
            if (g->procs_next[k].pid == u->pid) {
                g->procs_next[k].sm_util = (int32_t)u->smUtil;
                g->procs_next[k].mem_util = (int32_t)u->memUtil;
            }
    }
}

static void read_processes(gp_monitor *m, gp__mon_gpu *g, char *errbuf, size_t errlen)
{
    g->n_procs_next = 0;
    for (int slot = 0; slot < 3 && !g->lost; slot++) {
        gp__nvml_proc_fn fn = m->nvml.procs[slot];
        if (!fn)
            continue;
        unsigned count = 0;
        int r = proc_list_call(g, fn, &count, errbuf, errlen);
        if (r == -1)
            return;
        if (r != GP__NVMLR_SUCCESS) {
            if (slot == 0 || r == GP__NVMLR_GPU_IS_LOST)
                nvml_failed(m, g, GP__MON_BIT(GP_M_PROCESSES), r, "nvmlDevice...RunningProcesses",
                            errbuf, errlen);
            continue;
        }
        if (!merge_procs(m, g, slot, count))
            return;
    }
    read_process_util(m, g);
}

/* ---- one GPU ------------------------------------------------------------------------------ */

static void read_utilization(gp_monitor *m, gp__mon_gpu *g, gp_gpu_sample *s, char *errbuf,
                             size_t errlen)
{
    if (!want(m, g, GP__MON_BIT(GP_M_UTIL_GPU) | GP__MON_BIT(GP_M_UTIL_MEM)))
        return;
    gp__nvmlUtilization_t u;
    int r = CALL(m->nvml.utilization, g->h, &u);
    if (r == GP__NVMLR_SUCCESS) {
        put(s, GP_M_UTIL_GPU, u.gpu);
        put(s, GP_M_UTIL_MEM, u.memory);
    } else {
        nvml_failed(m, g, GP__MON_BIT(GP_M_UTIL_GPU) | GP__MON_BIT(GP_M_UTIL_MEM), r,
                    "nvmlDeviceGetUtilizationRates", errbuf, errlen);
    }
}

static void read_memory(gp_monitor *m, gp__mon_gpu *g, gp_gpu_sample *s, char *errbuf,
                        size_t errlen)
{
    const gp__nvml *n = &m->nvml;
    uint64_t memmask = GP__MON_BIT(GP_M_MEM_USED) | GP__MON_BIT(GP_M_MEM_FREE) |
                       GP__MON_BIT(GP_M_MEM_TOTAL) | GP__MON_BIT(GP_M_MEM_RESERVED);
    if (!want(m, g, memmask))
        return;
    int r = GP__NVMLR_FUNCTION_NOT_FOUND;
    if (n->memory_v2 && !g->mem_v2_bad) {
        gp__nvmlMemory_v2_t mv;
        memset(&mv, 0, sizeof mv);
        mv.version = GP__NVML_MEMORY_V2;
        r = n->memory_v2(g->h, &mv);
        if (r == GP__NVMLR_SUCCESS) {
            put(s, GP_M_MEM_USED, (double)mv.used);
            put(s, GP_M_MEM_FREE, (double)mv.free);
            put(s, GP_M_MEM_TOTAL, (double)mv.total);
            put(s, GP_M_MEM_RESERVED, (double)mv.reserved);
        } else if (r == GP__NVMLR_FUNCTION_NOT_FOUND || r == GP__NVMLR_ARGUMENT_VERSION_MISMATCH) {
            g->mem_v2_bad = true; /* this driver does not take our struct version */
        }
    }
    if (r == GP__NVMLR_FUNCTION_NOT_FOUND || r == GP__NVMLR_ARGUMENT_VERSION_MISMATCH) {
        gp__nvmlMemory_t mv;
        r = CALL(n->memory_v1, g->h, &mv);
        if (r == GP__NVMLR_SUCCESS) { /* v1: "used" includes reserved memory */
            put(s, GP_M_MEM_USED, (double)mv.used);
            put(s, GP_M_MEM_FREE, (double)mv.free);
            put(s, GP_M_MEM_TOTAL, (double)mv.total);
        }
    }
    if (r != GP__NVMLR_SUCCESS)
        nvml_failed(m, g, memmask, r, "nvmlDeviceGetMemoryInfo", errbuf, errlen);
}

static void read_temperature(gp_monitor *m, gp__mon_gpu *g, gp_gpu_sample *s, char *errbuf,
                             size_t errlen)
{
    const gp__nvml *n = &m->nvml;
    int r;
    if (want(m, g, GP__MON_BIT(GP_M_TEMP))) {
        r = GP__NVMLR_FUNCTION_NOT_FOUND;
        if (n->temperature_v && !g->temp_v_bad) {
            gp__nvmlTemperature_v1_t tv;
            memset(&tv, 0, sizeof tv);
            tv.version = GP__NVML_TEMPERATURE_V1;
            tv.sensorType = 0;
            r = n->temperature_v(g->h, &tv);
            if (r == GP__NVMLR_SUCCESS)
                put(s, GP_M_TEMP, tv.temperature);
            else if (r == GP__NVMLR_FUNCTION_NOT_FOUND || r == GP__NVMLR_ARGUMENT_VERSION_MISMATCH)
                g->temp_v_bad = true;
        }
        if (r == GP__NVMLR_FUNCTION_NOT_FOUND || r == GP__NVMLR_ARGUMENT_VERSION_MISMATCH) {
            unsigned t;
            r = CALL(n->temperature, g->h, 0, &t);
            if (r == GP__NVMLR_SUCCESS)
                put(s, GP_M_TEMP, t);
        }
        if (r != GP__NVMLR_SUCCESS)
            nvml_failed(m, g, GP__MON_BIT(GP_M_TEMP), r, "nvmlDeviceGetTemperature", errbuf,
                        errlen);
    }
    static const struct {
        gp_metric m;
        int type;
    } thresholds[] = {{GP_M_TEMP_SLOWDOWN, GP__NVML_TEMP_THRESHOLD_SLOWDOWN},
                      {GP_M_TEMP_SHUTDOWN, GP__NVML_TEMP_THRESHOLD_SHUTDOWN}};
    for (size_t i = 0; i < 2; i++)
        if (want(m, g, GP__MON_BIT(thresholds[i].m))) {
            unsigned t;
            r = CALL(n->temperature_threshold, g->h, thresholds[i].type, &t);
            if (r == GP__NVMLR_SUCCESS)
                put(s, thresholds[i].m, t);
            else
                nvml_failed(m, g, GP__MON_BIT(thresholds[i].m), r,
                            "nvmlDeviceGetTemperatureThreshold", errbuf, errlen);
        }
}

/* Metric mm in watts from an NVML call that reads milliwatts (fn, named what). */
static void read_watts(gp_monitor *m, gp__mon_gpu *g, gp_gpu_sample *s, gp_metric mm,
                       gp__nvmlReturn (*fn)(gp__nvmlDevice_t, unsigned int *), const char *what,
                       char *errbuf, size_t errlen)
{
    if (!want(m, g, GP__MON_BIT(mm)))
        return;
    unsigned mw;
    int r = CALL(fn, g->h, &mw);
    if (r == GP__NVMLR_SUCCESS)
        put(s, mm, mw / 1000.0);
    else
        nvml_failed(m, g, GP__MON_BIT(mm), r, what, errbuf, errlen);
}

static void read_power(gp_monitor *m, gp__mon_gpu *g, gp_gpu_sample *s, char *errbuf, size_t errlen)
{
    const gp__nvml *n = &m->nvml;
    read_watts(m, g, s, GP_M_POWER, n->power_usage, "nvmlDeviceGetPowerUsage", errbuf, errlen);
    read_watts(m, g, s, GP_M_POWER_LIMIT, n->power_limit, "nvmlDeviceGetEnforcedPowerLimit", errbuf,
               errlen);
    if (want(m, g, GP__MON_BIT(GP_M_ENERGY))) {
        unsigned long long mj;
        int r = CALL(n->energy, g->h, &mj);
        if (r == GP__NVMLR_SUCCESS)
            put(s, GP_M_ENERGY, (double)mj / 1000.0);
        else
            nvml_failed(m, g, GP__MON_BIT(GP_M_ENERGY), r, "nvmlDeviceGetTotalEnergyConsumption",
                        errbuf, errlen);
    }
}

static void read_clocks_fan(gp_monitor *m, gp__mon_gpu *g, gp_gpu_sample *s, char *errbuf,
                            size_t errlen)
{
    const gp__nvml *n = &m->nvml;
    int r;
    static const struct {
        gp_metric m;
        int type;
        bool max;
    } clocks[] = {{GP_M_CLOCK_GRAPHICS, GP__NVML_CLOCK_GRAPHICS, false},
                  {GP_M_CLOCK_SM, GP__NVML_CLOCK_SM, false},
                  {GP_M_CLOCK_MEM, GP__NVML_CLOCK_MEM, false},
                  {GP_M_CLOCK_MAX_GRAPHICS, GP__NVML_CLOCK_GRAPHICS, true},
                  {GP_M_CLOCK_MAX_SM, GP__NVML_CLOCK_SM, true},
                  {GP_M_CLOCK_MAX_MEM, GP__NVML_CLOCK_MEM, true}};
    for (size_t i = 0; i < GP_ARRAY_LEN(clocks); i++)
        if (want(m, g, GP__MON_BIT(clocks[i].m))) {
            unsigned mhz;
            r = clocks[i].max ? CALL(n->max_clock, g->h, clocks[i].type, &mhz)
                              : CALL(n->clock, g->h, clocks[i].type, &mhz);
            if (r == GP__NVMLR_SUCCESS)
                put(s, clocks[i].m, mhz * 1e6);
            else
                nvml_failed(m, g, GP__MON_BIT(clocks[i].m), r, "nvmlDeviceGetClockInfo", errbuf,
                            errlen);
        }
    if (want(m, g, GP__MON_BIT(GP_M_FAN))) {
        unsigned pct;
        r = n->fan_speed_v2 && g->n_fans > 0 ? n->fan_speed_v2(g->h, 0, &pct)
                                             : CALL(n->fan_speed, g->h, &pct);
        if (r == GP__NVMLR_SUCCESS)
            put(s, GP_M_FAN, pct);
        else
            nvml_failed(m, g, GP__MON_BIT(GP_M_FAN), r, "nvmlDeviceGetFanSpeed", errbuf, errlen);
    }
}

/* Throttle reasons, ECC counters, MIG mode. */
static void read_health_bits(gp_monitor *m, gp__mon_gpu *g, gp_gpu_sample *s, char *errbuf,
                             size_t errlen)
{
    const gp__nvml *n = &m->nvml;
    int r;
    if (want(m, g, GP__MON_BIT(GP_M_THROTTLE))) {
        unsigned long long bits;
        r = CALL(n->clock_reasons, g->h, &bits);
        if (r == GP__NVMLR_SUCCESS)
            put(s, GP_M_THROTTLE, (double)bits);
        else
            nvml_failed(m, g, GP__MON_BIT(GP_M_THROTTLE), r,
                        "nvmlDeviceGetCurrentClocksEventReasons", errbuf, errlen);
    }
    static const struct {
        gp_metric m;
        int type;
    } ecc[] = {{GP_M_ECC_CORRECTED, 0}, {GP_M_ECC_UNCORRECTED, 1}};
    for (size_t i = 0; i < 2; i++)
        if (want(m, g, GP__MON_BIT(ecc[i].m))) {
            unsigned long long c;
            r = CALL(n->ecc_errors, g->h, ecc[i].type, 0 /* volatile */, &c);
            if (r == GP__NVMLR_SUCCESS)
                put(s, ecc[i].m, (double)c);
            else
                nvml_failed(m, g, GP__MON_BIT(ecc[i].m), r, "nvmlDeviceGetTotalEccErrors", errbuf,
                            errlen);
        }
    if (want(m, g, GP__MON_BIT(GP_M_MIG_MODE))) {
        unsigned cur, pend;
        r = CALL(n->mig_mode, g->h, &cur, &pend);
        if (r == GP__NVMLR_SUCCESS)
            put(s, GP_M_MIG_MODE, cur ? 1 : 0);
        else
            nvml_failed(m, g, GP__MON_BIT(GP_M_MIG_MODE), r, "nvmlDeviceGetMigMode", errbuf,
                        errlen);
    }
}

void gp__mon_read_gpu(gp_monitor *m, gp__mon_gpu *g, gp_gpu_sample *s, char *errbuf, size_t errlen)
{
    read_utilization(m, g, s, errbuf, errlen);
    read_memory(m, g, s, errbuf, errlen);
    read_temperature(m, g, s, errbuf, errlen);
    read_power(m, g, s, errbuf, errlen);
    read_clocks_fan(m, g, s, errbuf, errlen);
    /* PCIe throughput is read apart (gp__mon_read_pcie): each call blocks ~20 ms in NVML */
    read_health_bits(m, g, s, errbuf, errlen);
    if (want(m, g, GP__MON_BIT(GP_M_PROCESSES))) {
        read_processes(m, g, errbuf, errlen);
        if (!g->lost && !(g->unsup & GP__MON_BIT(GP_M_PROCESSES)))
            put(s, GP_M_PROCESSES, (double)g->n_procs_next);
    } else {
        g->n_procs_next = 0;
    }
    s->valid &= m->wanted; /* calls that return several metrics: keep the level's set */
    if (g->lost)
        s->valid = 0; /* nothing from a lost GPU is trusted */
}

/* ---- PCIe --------------------------------------------------------------------------------- */

bool gp__mon_wants_pcie(const gp_monitor *m)
{
    return (m->wanted & (GP__MON_BIT(GP_M_PCIE_TX) | GP__MON_BIT(GP_M_PCIE_RX))) != 0;
}

/* Reads PCIe TX/RX of g (blocks ~2 x 20 ms on a real driver) and publishes them under the lock.
 * Called by the PCIe thread, or inline by the sampling round when no thread runs. */
void gp__mon_read_pcie(gp_monitor *m, gp__mon_gpu *g, gp_ns ts)
{
    static const struct {
        gp_metric m;
        int counter;
    } pcie[] = {{GP_M_PCIE_TX, GP__NVML_PCIE_TX}, {GP_M_PCIE_RX, GP__NVML_PCIE_RX}};
    double val[2] = {0, 0};
    int rc[2] = {GP__NVMLR_FUNCTION_NOT_FOUND, GP__NVMLR_FUNCTION_NOT_FOUND};
    gp__mutex_lock(&m->lock);
    uint64_t unsup = g->pcie_unsup;
    bool lost = g->id.lost;
    gp__mutex_unlock(&m->lock);
    if (lost)
        return;
    for (int i = 0; i < 2; i++) {
        if (!(m->wanted & GP__MON_BIT(pcie[i].m)) || (unsup & GP__MON_BIT(pcie[i].m)))
            continue;
        unsigned kbs = 0;
        rc[i] = m->nvml.pcie_throughput ? m->nvml.pcie_throughput(g->h, pcie[i].counter, &kbs)
                                        : GP__NVMLR_FUNCTION_NOT_FOUND;
        val[i] = kbs * 1024.0;
    }
    gp__mutex_lock(&m->lock);
    g->pcie_last = ts;
    for (int i = 0; i < 2; i++) {
        if (!(m->wanted & GP__MON_BIT(pcie[i].m)) || (unsup & GP__MON_BIT(pcie[i].m)))
            continue;
        if (rc[i] == GP__NVMLR_SUCCESS) {
            g->pcie_val[i] = val[i];
            g->pcie_have[i] = true;
        } else {
            g->pcie_have[i] = false;
            if (rc[i] == GP__NVMLR_NOT_SUPPORTED || rc[i] == GP__NVMLR_FUNCTION_NOT_FOUND)
                g->pcie_unsup |= GP__MON_BIT(pcie[i].m);
            else if (rc[i] != GP__NVMLR_GPU_IS_LOST)
                gp__mon_set_last_error(m, "gpu%u: nvmlDeviceGetPcieThroughput: %s (NVML %d)",
                                       g->id.index, gp__nvml_strerror(&m->nvml, rc[i]), rc[i]);
        }
    }
    gp__mutex_unlock(&m->lock);
}

/* ---- XID events ------------------------------------------------------------------------ */

static void record_xid(gp_monitor *m, const gp__nvmlEventData_t *d) GP_EXCLUDES(m->lock)
{
    gp_ns ts = gp__clock_ns();
    gp__mutex_lock(&m->lock);
    for (size_t i = 0; i < m->n_gpus; i++) {
        gp__mon_gpu *g = &m->gpus[i];
        if (g->h != d->device)
            continue;
        uint32_t code = (uint32_t)d->eventData;
        size_t k = 0;
        while (k < g->n_xid && g->xid_code[k] != code)
            k++;
        if (k == g->n_xid && g->n_xid < GP__MON_MAX_XID_CODES) {
            g->xid_code[k] = code;
            g->xid_count[k] = 0;
            g->n_xid++;
        }
        if (k < g->n_xid)
            g->xid_count[k]++;
        char what[16];
        snprintf(what, sizeof what, "%u", code);
        gp__mon_emit(m, GP_EVT_XID, GP_SEV_CRITICAL, ts, (int)i, 0, what, code, NAN,
                     "gpu%zu reported XID %u%s", i, code, code == 999 ? " (unknown)" : "");
        break;
    }
    gp__mutex_unlock(&m->lock);
}

void gp__mon_poll_xids(gp_monitor *m, unsigned timeout_ms)
{
    if (!m->evset_ok)
        return;
    for (int i = 0; i < 64; i++) {
        gp__nvmlEventData_t d;
        memset(&d, 0, sizeof d);
        int r = m->nvml.event_set_wait(m->evset, &d, timeout_ms);
        if (r != GP__NVMLR_SUCCESS)
            return;
        if (d.eventType & GP__NVML_EVENT_XID)
            record_xid(m, &d);
        timeout_ms = 0;
    }
}
