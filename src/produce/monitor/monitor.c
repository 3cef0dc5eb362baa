/* The monitor: per-GPU sampling through the NVML table, retention rings, alerts, detectors,
 * events, profiling counters, component attribution, health. See docs/internals/monitor.md. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/json_writer.h"
#include "core/util.h"
#include "gpuprof/monitor.h"
#include "produce/monitor/nvml.h"

#define MAX_LISTENERS 8
#define MAX_XID_CODES 32
#define MAX_PROC_TRACKS 32
#define MAX_COMPONENTS 256
#define N_ALERT_KINDS 4

static const char *const alert_kinds[N_ALERT_KINDS] = {"utilization", "memory", "temperature",
                                                       "power"};

typedef struct proc_track {
    uint32_t pid;
    bool seen, leak_reported;
    gp_ns last_eval_bucket;
    gp_leak_detector leak;
    gp_leak_result result;
} proc_track;

typedef struct gpu {
    gp_gpu_ident id; /* published copy (under lock) */
    gp__nvmlDevice_t h;
    /* sampler-private NVML state */
    uint64_t unsup;
    bool lost;
    bool mem_v2_bad, temp_v_bad;
    unsigned n_fans;
    void *proc_buf;
    unsigned proc_buf_cap; /* entries of the v2 struct */
    gp__nvmlProcessUtilizationSample_t *util_buf;
    unsigned util_buf_cap;
    unsigned long long util_last_seen;
    gp_gpu_process *procs_next;
    size_t n_procs_next, cap_procs_next;
    /* published state (under lock) */
    gp_gpu_sample *ring;
    size_t ring_cap, ring_head, ring_n;
    gp_gpu_sample latest;
    bool has_latest;
    gp_gpu_process *procs;
    size_t n_procs, cap_procs;
    bool alert_active[N_ALERT_KINDS];
    gp_ns alert_pending[N_ALERT_KINDS]; /* since when the condition holds, when pending */
    bool alert_is_pending[N_ALERT_KINDS];
    uint64_t throttle_prev;
    gp_leak_detector leak;
    gp_leak_result leak_result;
    gp_ns leak_last_eval_bucket;
    bool leak_reported;
    proc_track ptracks[MAX_PROC_TRACKS];
    size_t n_ptracks;
    gp_bottleneck_kind bn_prev;
    gp_ns bn_last;
    /* PCIe: read at most once per second, off the sampling path when threads run (under lock) */
    double pcie_val[2];
    bool pcie_have[2];
    uint64_t pcie_unsup;
    gp_ns pcie_last;
    uint32_t xid_code[MAX_XID_CODES];
    uint64_t xid_count[MAX_XID_CODES];
    size_t n_xid;
    uint32_t trace_track;
    gp_strid series[GP_M_COUNT];
} gpu;

typedef struct comp_stats {
    uint64_t samples;
    double wall_s, busy_s, growth;
} comp_stats;

struct gp_monitor {
    gp_monitor_config cfg;
    gp__nvml nvml;
    char driver[81];
    gpu *gpus;
    size_t n_gpus;
    gp__nvmlEventSet_t evset;
    bool evset_ok;

    pthread_mutex_t lock;        /* everything published */
    pthread_cond_t cv;           /* stop requests, sample counts */
    pthread_mutex_t sample_lock; /* one sampling round at a time */
    pthread_mutex_t stream_lock;
    pthread_mutex_t deliver_lock; /* callbacks run one at a time, in queue order */
    bool running, stop;
    pthread_t thread, xid_thread;
    bool xid_thread_started;
    pthread_t pcie_thread;
    bool pcie_thread_started;
    uint64_t samples_total;
    uint64_t alerts_total[N_ALERT_KINDS];
    uint32_t interval_ms;
    char last_error[256];
    gp_ns last_error_ts; /* round of the last error (sample clock) */
    gp_ns last_round_ts;
    gp_ns started_at;

    struct {
        gp_monitor_event_cb cb;
        void *ctx;
    } listeners[MAX_LISTENERS];
    size_t n_listeners;
    FILE *stream;
    gp_monitor_event *pending;
    size_t n_pending, cap_pending;

    uint64_t wanted; /* metrics of the configured level and toggles */
    gp_trace *trace;
    comp_stats comps[MAX_COMPONENTS];
    int32_t n_comps_seen;
};

/* ---- names -------------------------------------------------------------------------------- */

static const char *const metric_names[GP_M_COUNT] = {"util_gpu",
                                                     "util_mem",
                                                     "mem_used_bytes",
                                                     "mem_free_bytes",
                                                     "mem_total_bytes",
                                                     "mem_reserved_bytes",
                                                     "temp_celsius",
                                                     "temp_slowdown_celsius",
                                                     "temp_shutdown_celsius",
                                                     "power_watts",
                                                     "power_limit_watts",
                                                     "energy_joules",
                                                     "clock_graphics_hz",
                                                     "clock_sm_hz",
                                                     "clock_mem_hz",
                                                     "clock_max_graphics_hz",
                                                     "clock_max_sm_hz",
                                                     "clock_max_mem_hz",
                                                     "fan_percent",
                                                     "pcie_tx_bytes_per_second",
                                                     "pcie_rx_bytes_per_second",
                                                     "throttle_reasons",
                                                     "ecc_corrected",
                                                     "ecc_uncorrected",
                                                     "mig_mode",
                                                     "processes"};

static const char *const metric_units[GP_M_COUNT] = {
    "percent", "percent", "bytes",   "bytes",   "bytes", "bytes", "celsius", "celsius", "celsius",
    "watts",   "watts",   "joules",  "hertz",   "hertz", "hertz", "hertz",   "hertz",   "hertz",
    "percent", "bytes/s", "bytes/s", "bitmask", "count", "count", "bool",    "count"};

const char *gp_metric_name(gp_metric m)
{
    return (unsigned)m < GP_M_COUNT ? metric_names[m] : "?";
}

const char *gp_metric_unit(gp_metric m)
{
    return (unsigned)m < GP_M_COUNT ? metric_units[m] : "?";
}

const char *gp_monitor_event_type_name(gp_monitor_event_type t)
{
    static const char *const n[GP_EVT_TYPE_COUNT] = {
        "started", "stopped", "alert",      "alert_cleared", "xid",  "throttle",
        "leak",    "spike",   "bottleneck", "device_lost",   "debug"};
    return (unsigned)t < GP_EVT_TYPE_COUNT ? n[t] : "?";
}

const char *gp_severity_name(gp_severity s)
{
    static const char *const n[] = {"info", "warning", "critical"};
    return (unsigned)s < 3 ? n[s] : "?";
}

gp_ns gp_monitor_now(void)
{
    return gp__clock_ns();
}

void gp_monitor_event_write_json(const gp_monitor_event *ev, FILE *fp)
{
    gp__jw w;
    gp__jw_init(&w, NULL);
    gp__jw_obj_begin(&w);
    gp__jw_kv_str(&w, "event", gp_monitor_event_type_name(ev->type));
    gp__jw_kv_str(&w, "severity", gp_severity_name(ev->severity));
    gp__jw_kv_int(&w, "ts_ns", ev->ts);
    gp__jw_kv_int(&w, "gpu", ev->device);
    if (ev->pid)
        gp__jw_kv_int(&w, "pid", ev->pid);
    if (ev->what[0])
        gp__jw_kv_str(&w, "what", ev->what);
    gp__jw_kv_double(&w, "value", ev->value);
    gp__jw_kv_double(&w, "threshold", ev->threshold);
    gp__jw_kv_str(&w, "message", ev->message);
    gp__jw_obj_end(&w);
    size_t len;
    char *s = gp__jw_take(&w, &len);
    if (s) {
        fwrite(s, 1, len, fp);
        fputc('\n', fp);
        fflush(fp);
        free(s);
    }
}

/* ---- events ---------------------------------------------------------------------------- */

/* Queues an event (lock held). Delivered by deliver() once the lock is released. */
static void emit(gp_monitor *m, gp_monitor_event_type type, gp_severity sev, gp_ns ts, int dev,
                 uint32_t pid, const char *what, double value, double threshold, const char *fmt,
                 ...) GP_PRINTF(10, 11);
static void emit(gp_monitor *m, gp_monitor_event_type type, gp_severity sev, gp_ns ts, int dev,
                 uint32_t pid, const char *what, double value, double threshold, const char *fmt,
                 ...)
{
    gp_monitor_event *e = GP_PUSH(m->pending, m->n_pending, m->cap_pending);
    if (!e)
        return; /* out of memory: the event is dropped, sampling goes on */
    e->type = type;
    e->severity = sev;
    e->ts = ts;
    e->device = dev;
    e->pid = pid;
    snprintf(e->what, sizeof e->what, "%s", what ? what : "");
    e->value = value;
    e->threshold = threshold;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
}

/* Delivers queued events to listeners and the stream (lock NOT held on entry). */
static void deliver(gp_monitor *m)
{
    pthread_mutex_lock(&m->deliver_lock);
    for (;;) {
        pthread_mutex_lock(&m->lock);
        if (m->n_pending == 0) {
            pthread_mutex_unlock(&m->lock);
            pthread_mutex_unlock(&m->deliver_lock);
            return;
        }
        gp_monitor_event *evs = m->pending;
        size_t n = m->n_pending;
        m->pending = NULL;
        m->n_pending = m->cap_pending = 0;
        size_t nl = m->n_listeners;
        gp_monitor_event_cb cbs[MAX_LISTENERS];
        void *ctxs[MAX_LISTENERS];
        for (size_t i = 0; i < nl; i++) {
            cbs[i] = m->listeners[i].cb;
            ctxs[i] = m->listeners[i].ctx;
        }
        FILE *fp = m->stream;
        pthread_mutex_unlock(&m->lock);
        for (size_t k = 0; k < n; k++) {
            for (size_t i = 0; i < nl; i++)
                cbs[i](&evs[k], ctxs[i]);
            if (fp) {
                pthread_mutex_lock(&m->stream_lock);
                gp_monitor_event_write_json(&evs[k], fp);
                pthread_mutex_unlock(&m->stream_lock);
            }
        }
        free(evs);
    }
}

/* ---- opening ----------------------------------------------------------------------------- */

static void set_last_error(gp_monitor *m, const char *fmt, ...) GP_PRINTF(2, 3);
static void set_last_error(gp_monitor *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->last_error, sizeof m->last_error, fmt, ap);
    va_end(ap);
}

static gp_leak_params leak_params(const gp_monitor_config *c)
{
    gp_leak_params p;
    gp_leak_params_init(&p);
    p.window_s = c->leak_window_minutes * 60;
    p.warmup_s = c->leak_warmup_minutes * 60;
    p.min_slope_mb_per_h = c->leak_min_slope_mb_per_hour;
    p.min_r2 = c->leak_min_r2;
    p.min_duration_s = c->leak_min_duration_minutes * 60;
    p.spike_mb = c->leak_spike_mb;
    return p;
}

gp_status gp_monitor_open(const gp_monitor_config *cfg, gp_monitor **out, gp_error *err)
{
    gp_monitor_config defaults;
    if (!cfg) {
        gp_monitor_config_init(&defaults);
        cfg = &defaults;
    }
    if (cfg->sampling_interval_ms == 0 || cfg->max_samples == 0 || !(cfg->retention_hours > 0))
        return gp_error_set(err, GP_EINVAL,
                            "sampling_interval_ms, max_samples and retention_hours must be > 0");
    gp_leak_params lp = leak_params(cfg);
    gp_leak_detector probe;
    if (gp_leak_detector_init(&probe, &lp) != GP_OK)
        return gp_error_set(err, GP_EINVAL, "invalid leak detector settings");

    gp_monitor *m = calloc(1, sizeof *m);
    if (!m)
        return gp_error_set(err, GP_ENOMEM, "out of memory");
    m->cfg = *cfg;
    m->interval_ms = cfg->sampling_interval_ms;
    for (int k = 0; k < GP_M_COUNT; k++)
        if (gp_monitor_config_wants(cfg, (gp_metric)k))
            m->wanted |= 1ull << k;
    pthread_mutex_init(&m->lock, NULL);
    pthread_mutex_init(&m->sample_lock, NULL);
    pthread_mutex_init(&m->stream_lock, NULL);
    pthread_mutex_init(&m->deliver_lock, NULL);
    pthread_cond_init(&m->cv, NULL);
    gp_status st = gp__nvml_load(&m->nvml, err);
    if (st != GP_OK)
        goto fail;
    if (m->nvml.driver_version &&
        m->nvml.driver_version(m->driver, sizeof m->driver) != NVMLR_SUCCESS)
        m->driver[0] = 0;
    unsigned count = 0;
    int r = m->nvml.device_count(&count);
    if (r != NVMLR_SUCCESS) {
        st = gp_error_set(err, GP_ENODRIVER, "no NVIDIA driver found: nvmlDeviceGetCount: %s",
                          gp__nvml_strerror(&m->nvml, r));
        goto fail;
    }
    m->gpus = calloc(count ? count : 1, sizeof *m->gpus);
    if (!m->gpus) {
        st = gp_error_set(err, GP_ENOMEM, "out of memory");
        goto fail;
    }
    m->n_gpus = count;
    if (cfg->enable_xid_events && cfg->level >= GP_LEVEL_STANDARD && m->nvml.event_set_create &&
        m->nvml.register_events && m->nvml.event_set_wait &&
        m->nvml.event_set_create(&m->evset) == NVMLR_SUCCESS)
        m->evset_ok = true;
    for (unsigned i = 0; i < count; i++) {
        gpu *g = &m->gpus[i];
        g->id.index = i;
        g->bn_prev = GP_BN_UNKNOWN;
        g->leak_last_eval_bucket = -1;
        if (gp_leak_detector_init(&g->leak, &lp) != GP_OK) {
            st = gp_error_set(err, GP_EINVAL, "invalid leak detector settings");
            goto fail;
        }
        r = m->nvml.device_handle(i, &g->h);
        if (r != NVMLR_SUCCESS) {
            /* keep the slot, marked lost, so indices stay NVML's */
            g->lost = g->id.lost = true;
            set_last_error(m, "gpu%u: nvmlDeviceGetHandleByIndex: %s", i,
                           gp__nvml_strerror(&m->nvml, r));
            continue;
        }
        if (!m->nvml.name || m->nvml.name(g->h, g->id.name, sizeof g->id.name) != NVMLR_SUCCESS)
            snprintf(g->id.name, sizeof g->id.name, "unknown");
        if (!m->nvml.uuid || m->nvml.uuid(g->h, g->id.uuid, sizeof g->id.uuid) != NVMLR_SUCCESS)
            g->id.uuid[0] = 0;
        gp__nvmlPciInfo_t pci;
        memset(&pci, 0, sizeof pci);
        if (m->nvml.pci_info && m->nvml.pci_info(g->h, &pci) == NVMLR_SUCCESS)
            snprintf(g->id.pci_bus_id, sizeof g->id.pci_bus_id, "%.31s", pci.busId);
        if (m->nvml.num_fans && m->nvml.num_fans(g->h, &g->n_fans) != NVMLR_SUCCESS)
            g->n_fans = 0;
        unsigned cur = 0, pend = 0, maxmig = 0;
        if (cfg->level >= GP_LEVEL_DETAILED && m->nvml.mig_mode &&
            m->nvml.mig_mode(g->h, &cur, &pend) == NVMLR_SUCCESS && cur && m->nvml.max_mig_count &&
            m->nvml.max_mig_count(g->h, &maxmig) == NVMLR_SUCCESS && m->nvml.mig_handle) {
            for (unsigned k = 0; k < maxmig; k++) {
                gp__nvmlDevice_t mh;
                if (m->nvml.mig_handle(g->h, k, &mh) == NVMLR_SUCCESS)
                    g->id.mig_instances++;
            }
        }
        if (m->evset_ok) {
            r = m->nvml.register_events(g->h, GP__NVML_EVENT_XID, m->evset);
            if (r != NVMLR_SUCCESS && r != NVMLR_NOT_SUPPORTED)
                set_last_error(m, "gpu%u: nvmlDeviceRegisterEvents: %s", i,
                               gp__nvml_strerror(&m->nvml, r));
        }
    }
    *out = m;
    return GP_OK;
fail:
    gp_monitor_close(m);
    return st;
}

void gp_monitor_close(gp_monitor *m)
{
    if (!m)
        return;
    gp_monitor_stop(m);
    if (m->evset_ok && m->nvml.event_set_free)
        m->nvml.event_set_free(m->evset);
    gp__nvml_unload(&m->nvml);
    for (size_t i = 0; i < m->n_gpus; i++) {
        gpu *g = &m->gpus[i];
        free(g->ring);
        free(g->procs);
        free(g->procs_next);
        free(g->proc_buf);
        free(g->util_buf);
    }
    free(m->gpus);
    free(m->pending);
    pthread_mutex_destroy(&m->lock);
    pthread_mutex_destroy(&m->sample_lock);
    pthread_mutex_destroy(&m->stream_lock);
    pthread_mutex_destroy(&m->deliver_lock);
    pthread_cond_destroy(&m->cv);
    free(m);
}

/* ---- reading one GPU (no lock: sampler-private state only) ------------------------------- */

#define BIT(mm) (1ull << (mm))

/* Handles a non-success NVML return for the metrics in mask. */
static void nvml_failed(gp_monitor *m, gpu *g, uint64_t mask, int r, const char *fn, char *errbuf,
                        size_t errlen)
{
    if (r == NVMLR_NOT_SUPPORTED || r == NVMLR_FUNCTION_NOT_FOUND) {
        g->unsup |= mask; /* remembered: never polled again */
    } else if (r == NVMLR_GPU_IS_LOST) {
        g->lost = true;
    } else if (errbuf[0] == 0) {
        snprintf(errbuf, errlen, "gpu%u: %s: %s (NVML %d)", g->id.index, fn,
                 gp__nvml_strerror(&m->nvml, r), r);
    }
}

static bool want(const gp_monitor *m, const gpu *g, uint64_t mask)
{
    if (g->lost)
        return false;
    for (int k = 0; k < GP_M_COUNT; k++)
        if ((mask & BIT(k)) && !(g->unsup & BIT(k)) && gp_monitor_config_wants(&m->cfg, k))
            return true;
    return false;
}

/* Calls an optional table entry; a missing function reads as FUNCTION_NOT_FOUND. */
#define CALL(fn, ...) ((fn) ? (fn)(__VA_ARGS__) : NVMLR_FUNCTION_NOT_FOUND)

static void put(gp_gpu_sample *s, gp_metric k, double v)
{
    s->v[k] = v;
    s->valid |= BIT(k);
}

static void read_processes(gp_monitor *m, gpu *g, char *errbuf, size_t errlen)
{
    g->n_procs_next = 0;
    for (int slot = 0; slot < 3 && !g->lost; slot++) {
        gp__nvml_proc_fn fn = m->nvml.procs[slot];
        if (!fn)
            continue;
        size_t esz = m->nvml.proc_v1[slot] ? sizeof(gp__nvmlProcessInfo_v1_t)
                                           : sizeof(gp__nvmlProcessInfo_v2_t);
        unsigned count = 0;
        int r = NVMLR_INSUFFICIENT_SIZE;
        /* The list may grow between calls: retry a few times with a larger buffer. */
        for (int attempt = 0; attempt < 4 && r == NVMLR_INSUFFICIENT_SIZE; attempt++) {
            if (g->proc_buf_cap == 0 || count > g->proc_buf_cap) {
                unsigned want_cap = GP_MAX(count + 8, g->proc_buf_cap ? g->proc_buf_cap * 2 : 16);
                void *nb = realloc(g->proc_buf, want_cap * sizeof(gp__nvmlProcessInfo_v2_t));
                if (!nb) {
                    snprintf(errbuf, errlen, "gpu%u: out of memory for the process list",
                             g->id.index);
                    return;
                }
                g->proc_buf = nb;
                g->proc_buf_cap = want_cap;
            }
            count = g->proc_buf_cap;
            r = fn(g->h, &count, g->proc_buf);
        }
        if (r != NVMLR_SUCCESS) {
            if (slot == 0 || r == NVMLR_GPU_IS_LOST)
                nvml_failed(m, g, BIT(GP_M_PROCESSES), r, "nvmlDevice...RunningProcesses", errbuf,
                            errlen);
            continue;
        }
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
            gp_gpu_process *q = NULL;
            for (size_t k = 0; k < g->n_procs_next; k++)
                if (g->procs_next[k].pid == pid)
                    q = &g->procs_next[k];
            if (!q) {
                q = GP_PUSH(g->procs_next, g->n_procs_next, g->cap_procs_next);
                if (!q)
                    return;
                q->pid = pid;
                q->mem_bytes = -1;
                q->sm_util = q->mem_util = -1;
                q->gpu_instance_id = gi;
                q->compute_instance_id = ci;
            }
            q->types |= slot == 0 ? GP_PROC_COMPUTE : slot == 1 ? GP_PROC_GRAPHICS : GP_PROC_MPS;
            /* NVML reports "not available" as ~0ULL (e.g. without permission in containers) */
            if (mem != ~0ULL && (int64_t)mem > q->mem_bytes)
                q->mem_bytes = (int64_t)mem;
        }
    }
    /* per-process utilization (detailed level) */
    if (m->cfg.level < GP_LEVEL_DETAILED || !m->nvml.process_utilization || g->lost ||
        g->n_procs_next == 0 || (g->unsup & BIT(GP_M_PROCESSES)))
        return;
    unsigned count = 0;
    int r = m->nvml.process_utilization(g->h, NULL, &count, g->util_last_seen);
    if (r == NVMLR_INSUFFICIENT_SIZE || r == NVMLR_SUCCESS) {
        if (count > g->util_buf_cap) {
            void *nb = realloc(g->util_buf, (count + 8) * sizeof *g->util_buf);
            if (!nb)
                return;
            g->util_buf = nb;
            g->util_buf_cap = count + 8;
        }
        count = g->util_buf_cap;
        r = g->util_buf ? m->nvml.process_utilization(g->h, g->util_buf, &count, g->util_last_seen)
                        : NVMLR_NOT_FOUND;
    }
    if (r != NVMLR_SUCCESS)
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

static void read_gpu(gp_monitor *m, gpu *g, gp_gpu_sample *s, char *errbuf, size_t errlen)
{
    const gp__nvml *n = &m->nvml;
    int r;
    if (want(m, g, BIT(GP_M_UTIL_GPU) | BIT(GP_M_UTIL_MEM))) {
        gp__nvmlUtilization_t u;
        r = CALL(n->utilization, g->h, &u);
        if (r == NVMLR_SUCCESS) {
            put(s, GP_M_UTIL_GPU, u.gpu);
            put(s, GP_M_UTIL_MEM, u.memory);
        } else {
            nvml_failed(m, g, BIT(GP_M_UTIL_GPU) | BIT(GP_M_UTIL_MEM), r,
                        "nvmlDeviceGetUtilizationRates", errbuf, errlen);
        }
    }
    uint64_t memmask =
        BIT(GP_M_MEM_USED) | BIT(GP_M_MEM_FREE) | BIT(GP_M_MEM_TOTAL) | BIT(GP_M_MEM_RESERVED);
    if (want(m, g, memmask)) {
        r = NVMLR_FUNCTION_NOT_FOUND;
        if (n->memory_v2 && !g->mem_v2_bad) {
            gp__nvmlMemory_v2_t mv;
            memset(&mv, 0, sizeof mv);
            mv.version = GP__NVML_MEMORY_V2;
            r = n->memory_v2(g->h, &mv);
            if (r == NVMLR_SUCCESS) {
                put(s, GP_M_MEM_USED, (double)mv.used);
                put(s, GP_M_MEM_FREE, (double)mv.free);
                put(s, GP_M_MEM_TOTAL, (double)mv.total);
                put(s, GP_M_MEM_RESERVED, (double)mv.reserved);
            } else if (r == NVMLR_FUNCTION_NOT_FOUND || r == NVMLR_ARGUMENT_VERSION_MISMATCH) {
                g->mem_v2_bad = true; /* this driver does not take our struct version */
            }
        }
        if (r == NVMLR_FUNCTION_NOT_FOUND || r == NVMLR_ARGUMENT_VERSION_MISMATCH) {
            gp__nvmlMemory_t mv;
            r = CALL(n->memory_v1, g->h, &mv);
            if (r == NVMLR_SUCCESS) { /* v1: "used" includes reserved memory */
                put(s, GP_M_MEM_USED, (double)mv.used);
                put(s, GP_M_MEM_FREE, (double)mv.free);
                put(s, GP_M_MEM_TOTAL, (double)mv.total);
            }
        }
        if (r != NVMLR_SUCCESS)
            nvml_failed(m, g, memmask, r, "nvmlDeviceGetMemoryInfo", errbuf, errlen);
    }
    if (want(m, g, BIT(GP_M_TEMP))) {
        r = NVMLR_FUNCTION_NOT_FOUND;
        if (n->temperature_v && !g->temp_v_bad) {
            gp__nvmlTemperature_v1_t tv;
            memset(&tv, 0, sizeof tv);
            tv.version = GP__NVML_TEMPERATURE_V1;
            tv.sensorType = 0;
            r = n->temperature_v(g->h, &tv);
            if (r == NVMLR_SUCCESS)
                put(s, GP_M_TEMP, tv.temperature);
            else if (r == NVMLR_FUNCTION_NOT_FOUND || r == NVMLR_ARGUMENT_VERSION_MISMATCH)
                g->temp_v_bad = true;
        }
        if (r == NVMLR_FUNCTION_NOT_FOUND || r == NVMLR_ARGUMENT_VERSION_MISMATCH) {
            unsigned t;
            r = CALL(n->temperature, g->h, 0, &t);
            if (r == NVMLR_SUCCESS)
                put(s, GP_M_TEMP, t);
        }
        if (r != NVMLR_SUCCESS)
            nvml_failed(m, g, BIT(GP_M_TEMP), r, "nvmlDeviceGetTemperature", errbuf, errlen);
    }
    static const struct {
        gp_metric m;
        int type;
    } thresholds[] = {{GP_M_TEMP_SLOWDOWN, GP__NVML_TEMP_THRESHOLD_SLOWDOWN},
                      {GP_M_TEMP_SHUTDOWN, GP__NVML_TEMP_THRESHOLD_SHUTDOWN}};
    for (size_t i = 0; i < 2; i++)
        if (want(m, g, BIT(thresholds[i].m))) {
            unsigned t;
            r = CALL(n->temperature_threshold, g->h, thresholds[i].type, &t);
            if (r == NVMLR_SUCCESS)
                put(s, thresholds[i].m, t);
            else
                nvml_failed(m, g, BIT(thresholds[i].m), r, "nvmlDeviceGetTemperatureThreshold",
                            errbuf, errlen);
        }
    if (want(m, g, BIT(GP_M_POWER))) {
        unsigned mw;
        r = CALL(n->power_usage, g->h, &mw);
        if (r == NVMLR_SUCCESS)
            put(s, GP_M_POWER, mw / 1000.0);
        else
            nvml_failed(m, g, BIT(GP_M_POWER), r, "nvmlDeviceGetPowerUsage", errbuf, errlen);
    }
    if (want(m, g, BIT(GP_M_POWER_LIMIT))) {
        unsigned mw;
        r = CALL(n->power_limit, g->h, &mw);
        if (r == NVMLR_SUCCESS)
            put(s, GP_M_POWER_LIMIT, mw / 1000.0);
        else
            nvml_failed(m, g, BIT(GP_M_POWER_LIMIT), r, "nvmlDeviceGetEnforcedPowerLimit", errbuf,
                        errlen);
    }
    if (want(m, g, BIT(GP_M_ENERGY))) {
        unsigned long long mj;
        r = CALL(n->energy, g->h, &mj);
        if (r == NVMLR_SUCCESS)
            put(s, GP_M_ENERGY, (double)mj / 1000.0);
        else
            nvml_failed(m, g, BIT(GP_M_ENERGY), r, "nvmlDeviceGetTotalEnergyConsumption", errbuf,
                        errlen);
    }
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
        if (want(m, g, BIT(clocks[i].m))) {
            unsigned mhz;
            r = clocks[i].max ? CALL(n->max_clock, g->h, clocks[i].type, &mhz)
                              : CALL(n->clock, g->h, clocks[i].type, &mhz);
            if (r == NVMLR_SUCCESS)
                put(s, clocks[i].m, mhz * 1e6);
            else
                nvml_failed(m, g, BIT(clocks[i].m), r, "nvmlDeviceGetClockInfo", errbuf, errlen);
        }
    if (want(m, g, BIT(GP_M_FAN))) {
        unsigned pct;
        r = n->fan_speed_v2 && g->n_fans > 0 ? n->fan_speed_v2(g->h, 0, &pct)
                                             : CALL(n->fan_speed, g->h, &pct);
        if (r == NVMLR_SUCCESS)
            put(s, GP_M_FAN, pct);
        else
            nvml_failed(m, g, BIT(GP_M_FAN), r, "nvmlDeviceGetFanSpeed", errbuf, errlen);
    }
    /* PCIe throughput is read apart (read_pcie): each call blocks ~20 ms in NVML */
    if (want(m, g, BIT(GP_M_THROTTLE))) {
        unsigned long long bits;
        r = CALL(n->clock_reasons, g->h, &bits);
        if (r == NVMLR_SUCCESS)
            put(s, GP_M_THROTTLE, (double)bits);
        else
            nvml_failed(m, g, BIT(GP_M_THROTTLE), r, "nvmlDeviceGetCurrentClocksEventReasons",
                        errbuf, errlen);
    }
    static const struct {
        gp_metric m;
        int type;
    } ecc[] = {{GP_M_ECC_CORRECTED, 0}, {GP_M_ECC_UNCORRECTED, 1}};
    for (size_t i = 0; i < 2; i++)
        if (want(m, g, BIT(ecc[i].m))) {
            unsigned long long c;
            r = CALL(n->ecc_errors, g->h, ecc[i].type, 0 /* volatile */, &c);
            if (r == NVMLR_SUCCESS)
                put(s, ecc[i].m, (double)c);
            else
                nvml_failed(m, g, BIT(ecc[i].m), r, "nvmlDeviceGetTotalEccErrors", errbuf, errlen);
        }
    if (want(m, g, BIT(GP_M_MIG_MODE))) {
        unsigned cur, pend;
        r = CALL(n->mig_mode, g->h, &cur, &pend);
        if (r == NVMLR_SUCCESS)
            put(s, GP_M_MIG_MODE, cur ? 1 : 0);
        else
            nvml_failed(m, g, BIT(GP_M_MIG_MODE), r, "nvmlDeviceGetMigMode", errbuf, errlen);
    }
    if (want(m, g, BIT(GP_M_PROCESSES))) {
        read_processes(m, g, errbuf, errlen);
        if (!g->lost && !(g->unsup & BIT(GP_M_PROCESSES)))
            put(s, GP_M_PROCESSES, (double)g->n_procs_next);
    } else {
        g->n_procs_next = 0;
    }
    s->valid &= m->wanted; /* calls that return several metrics: keep the level's set */
    if (g->lost)
        s->valid = 0; /* nothing from a lost GPU is trusted */
}

/* ---- committing a sample (lock held) --------------------------------------------------- */

static void alerts(gp_monitor *m, gpu *g, const gp_gpu_sample *s)
{
    const gp_monitor_config *c = &m->cfg;
    double val[N_ALERT_KINDS], thr[N_ALERT_KINDS] = {c->utilization_threshold, c->memory_threshold,
                                                     c->temperature_threshold, c->power_threshold};
    bool have[N_ALERT_KINDS] = {false};
    if (gp_sample_has(s, GP_M_UTIL_GPU)) {
        val[0] = s->v[GP_M_UTIL_GPU];
        have[0] = true;
    }
    if (gp_sample_has(s, GP_M_MEM_USED) && gp_sample_has(s, GP_M_MEM_TOTAL) &&
        s->v[GP_M_MEM_TOTAL] > 0) {
        val[1] = 100 * s->v[GP_M_MEM_USED] / s->v[GP_M_MEM_TOTAL];
        have[1] = true;
    }
    if (gp_sample_has(s, GP_M_TEMP)) {
        val[2] = s->v[GP_M_TEMP];
        have[2] = true;
    }
    if (gp_sample_has(s, GP_M_POWER) && gp_sample_has(s, GP_M_POWER_LIMIT) &&
        s->v[GP_M_POWER_LIMIT] > 0) {
        val[3] = 100 * s->v[GP_M_POWER] / s->v[GP_M_POWER_LIMIT];
        have[3] = true;
    }
    static const char *const units[N_ALERT_KINDS] = {"%", "% of memory", " C", "% of the limit"};
    gp_ns min_dur = (gp_ns)c->alert_min_duration_ms * 1000000;
    for (int k = 0; k < N_ALERT_KINDS; k++) {
        if (!have[k] || !(thr[k] > 0))
            continue;
        if (!g->alert_active[k]) {
            if (val[k] >= thr[k]) {
                if (!g->alert_is_pending[k]) {
                    g->alert_pending[k] = s->ts;
                    g->alert_is_pending[k] = true;
                }
                if (s->ts - g->alert_pending[k] >= min_dur) {
                    g->alert_active[k] = true;
                    m->alerts_total[k]++;
                    gp_severity sev = k == 2 && gp_sample_has(s, GP_M_TEMP_SLOWDOWN) &&
                                              val[k] >= s->v[GP_M_TEMP_SLOWDOWN]
                                          ? GP_SEV_CRITICAL
                                          : GP_SEV_WARNING;
                    emit(m, GP_EVT_ALERT, sev, s->ts, (int)g->id.index, 0, alert_kinds[k], val[k],
                         thr[k], "gpu%u %s %.1f%s >= %.1f%s for %.1f s", g->id.index,
                         alert_kinds[k], val[k], units[k], thr[k], units[k],
                         (double)(s->ts - g->alert_pending[k]) / 1e9);
                }
            } else {
                g->alert_is_pending[k] = false;
            }
        } else if (val[k] < thr[k] - c->alert_hysteresis) {
            g->alert_active[k] = false;
            g->alert_is_pending[k] = false;
            emit(m, GP_EVT_ALERT_CLEARED, GP_SEV_INFO, s->ts, (int)g->id.index, 0, alert_kinds[k],
                 val[k], thr[k], "gpu%u %s back to %.1f%s (below %.1f%s)", g->id.index,
                 alert_kinds[k], val[k], units[k], thr[k] - c->alert_hysteresis, units[k]);
        }
    }
}

static void throttle_events(gp_monitor *m, gpu *g, const gp_gpu_sample *s)
{
    if (!gp_sample_has(s, GP_M_THROTTLE))
        return;
    uint64_t bits = (uint64_t)s->v[GP_M_THROTTLE];
    uint64_t thermal = GP_THROTTLE_SW_THERMAL | GP_THROTTLE_HW_THERMAL | GP_THROTTLE_HW_SLOWDOWN;
    uint64_t power = GP_THROTTLE_SW_POWER_CAP | GP_THROTTLE_POWER_BRAKE;
    uint64_t fresh = bits & ~g->throttle_prev;
    g->throttle_prev = bits;
    if (fresh & thermal)
        emit(m, GP_EVT_THROTTLE, GP_SEV_WARNING, s->ts, (int)g->id.index, 0, "thermal",
             (double)bits, NAN, "gpu%u clocks reduced for temperature (reasons 0x%llx)",
             g->id.index, (unsigned long long)bits);
    if (fresh & power)
        emit(m, GP_EVT_THROTTLE, GP_SEV_WARNING, s->ts, (int)g->id.index, 0, "power", (double)bits,
             NAN, "gpu%u clocks reduced by the power limit (reasons 0x%llx)", g->id.index,
             (unsigned long long)bits);
}

static gp_ns newest_bucket(const gp_leak_detector *d)
{
    return d->count ? d->b_start[(d->head + d->count - 1) % GP_LEAK_BUCKETS] : -1;
}

static void leak_check(gp_monitor *m, gpu *g, gp_leak_detector *d, gp_leak_result *res,
                       gp_ns *last_eval, bool *reported, uint32_t pid, gp_ns ts, double used,
                       double total)
{
    if (gp_leak_detector_add(d, ts, used, total))
        emit(m, GP_EVT_SPIKE, GP_SEV_INFO, ts, (int)g->id.index, pid, pid ? "process" : "device",
             d->last_spike_mb, m->cfg.leak_spike_mb,
             "gpu%u%s%.0u memory spike of %.0f MB above the baseline", g->id.index,
             pid ? " pid " : "", pid, d->last_spike_mb);
    gp_ns nb = newest_bucket(d);
    if (nb == *last_eval)
        return; /* re-evaluate once per bucket: the fit is the costly part */
    *last_eval = nb;
    gp_leak_detector_eval(d, res);
    if (res->leak && !*reported) {
        *reported = true;
        char ttf[64] = "";
        if (res->time_to_full_s >= 0)
            snprintf(ttf, sizeof ttf, ", full in %.1f h", res->time_to_full_s / 3600);
        emit(m, GP_EVT_LEAK, GP_SEV_CRITICAL, ts, (int)g->id.index, pid, pid ? "process" : "device",
             res->slope_mb_per_h, m->cfg.leak_min_slope_mb_per_hour,
             "gpu%u%s%.0u memory grows %.0f MB/h (R2 %.2f over %.1f min)%s", g->id.index,
             pid ? " pid " : "", pid, res->slope_mb_per_h, res->r2, res->window_s / 60, ttf);
    } else if (!res->leak && res->ready) {
        *reported = false;
    }
}

static void bottleneck_of(gp_monitor *m, gpu *g, gp_ns now, gp_bottleneck *out);

static void commit(gp_monitor *m, gpu *g, gp_gpu_sample *s, int32_t comp)
{
    const gp_monitor_config *c = &m->cfg;
    /* attribution to the running component */
    if (comp >= 0 && comp < MAX_COMPONENTS && g->has_latest) {
        double dt = (double)(s->ts - g->latest.ts) / 1e9;
        if (dt > 0 && dt < 60) {
            comp_stats *cs = &m->comps[comp];
            cs->samples++;
            cs->wall_s += dt;
            if (gp_sample_has(s, GP_M_UTIL_GPU))
                cs->busy_s += dt * s->v[GP_M_UTIL_GPU] / 100;
            if (gp_sample_has(s, GP_M_MEM_USED) && gp_sample_has(&g->latest, GP_M_MEM_USED))
                cs->growth += s->v[GP_M_MEM_USED] - g->latest.v[GP_M_MEM_USED];
            if (comp + 1 > m->n_comps_seen)
                m->n_comps_seen = comp + 1;
        }
    }
    /* the ring: grows lazily up to max_samples, drops by age */
    if (g->ring_n == g->ring_cap && g->ring_cap < c->max_samples) {
        size_t nc = GP_MIN((size_t)c->max_samples, g->ring_cap ? g->ring_cap * 2 : 64);
        gp_gpu_sample *nr = malloc(nc * sizeof *nr);
        if (nr) {
            for (size_t i = 0; i < g->ring_n; i++)
                nr[i] = g->ring[(g->ring_head + i) % g->ring_cap];
            free(g->ring);
            g->ring = nr;
            g->ring_cap = nc;
            g->ring_head = 0;
        }
    }
    if (g->ring_cap) {
        if (g->ring_n == g->ring_cap) {
            g->ring_head = (g->ring_head + 1) % g->ring_cap;
            g->ring_n--;
        }
        g->ring[(g->ring_head + g->ring_n) % g->ring_cap] = *s;
        g->ring_n++;
    }
    gp_ns max_age = (gp_ns)(c->retention_hours * 3600e9);
    while (g->ring_n > 1 && s->ts - g->ring[g->ring_head].ts > max_age) {
        g->ring_head = (g->ring_head + 1) % g->ring_cap;
        g->ring_n--;
    }
    g->latest = *s;
    g->has_latest = true;
    /* the process list */
    gp_gpu_process *tp = g->procs;
    size_t tc = g->cap_procs;
    g->procs = g->procs_next;
    g->n_procs = g->n_procs_next;
    g->cap_procs = g->cap_procs_next;
    g->procs_next = tp;
    g->cap_procs_next = tc;
    g->n_procs_next = 0;

    if (c->enable_alerts) {
        alerts(m, g, s);
        throttle_events(m, g, s);
    }
    if (c->enable_leak_detection && gp_sample_has(s, GP_M_MEM_USED)) {
        double total = gp_sample_has(s, GP_M_MEM_TOTAL) ? s->v[GP_M_MEM_TOTAL] : 0;
        leak_check(m, g, &g->leak, &g->leak_result, &g->leak_last_eval_bucket, &g->leak_reported, 0,
                   s->ts, s->v[GP_M_MEM_USED], total);
        for (size_t i = 0; i < g->n_ptracks; i++)
            g->ptracks[i].seen = false;
        for (size_t k = 0; k < g->n_procs; k++) {
            const gp_gpu_process *p = &g->procs[k];
            if (p->mem_bytes < 0)
                continue;
            proc_track *pt = NULL;
            for (size_t i = 0; i < g->n_ptracks; i++)
                if (g->ptracks[i].pid == p->pid)
                    pt = &g->ptracks[i];
            if (!pt && g->n_ptracks < MAX_PROC_TRACKS) {
                pt = &g->ptracks[g->n_ptracks++];
                memset(pt, 0, sizeof *pt);
                pt->pid = p->pid;
                pt->last_eval_bucket = -1;
                gp_leak_params lp = leak_params(c);
                if (gp_leak_detector_init(&pt->leak, &lp) != GP_OK) {
                    g->n_ptracks--;
                    continue;
                }
            }
            if (!pt)
                continue;
            pt->seen = true;
            leak_check(m, g, &pt->leak, &pt->result, &pt->last_eval_bucket, &pt->leak_reported,
                       p->pid, s->ts, (double)p->mem_bytes, total);
        }
        for (size_t i = 0; i < g->n_ptracks;) /* processes that exited */
            if (!g->ptracks[i].seen)
                g->ptracks[i] = g->ptracks[--g->n_ptracks];
            else
                i++;
    }
    if (c->enable_bottleneck_detection && s->ts - g->bn_last >= 1000000000LL) {
        g->bn_last = s->ts;
        gp_bottleneck b;
        bottleneck_of(m, g, s->ts, &b);
        if (b.kind != g->bn_prev && b.samples >= 5) {
            if (b.kind != GP_BN_UNKNOWN && b.kind != GP_BN_NONE)
                emit(m, GP_EVT_BOTTLENECK, b.kind == GP_BN_IDLE ? GP_SEV_INFO : GP_SEV_WARNING,
                     s->ts, (int)g->id.index, 0, gp_bottleneck_name(b.kind), b.confidence, NAN,
                     "gpu%u is %s (confidence %.2f over %u samples)", g->id.index,
                     gp_bottleneck_name(b.kind), b.confidence, b.samples);
            g->bn_prev = b.kind;
        }
    }
    if (m->trace) {
        if (g->trace_track == 0 &&
            gp_trace_track(m->trace, GP_TRACK_COUNTER, g->id.index, 0, &g->trace_track) != GP_OK)
            return;
        for (int k = 0; k < GP_M_COUNT; k++) {
            if (!gp_sample_has(s, k))
                continue;
            if (g->series[k] == 0) {
                char name[64];
                int len = snprintf(name, sizeof name, "gpu%u.%s", g->id.index, metric_names[k]);
                if (gp_trace_intern(m->trace, name, (size_t)len, &g->series[k]) != GP_OK)
                    continue;
            }
            gp_counter_sample cs = {
                .ts = s->ts, .value = s->v[k], .series = g->series[k], .track = g->trace_track};
            if (gp_trace_add_counter(m->trace, &cs) != GP_OK)
                set_last_error(m, "profiling: cannot add a counter sample (out of memory)");
        }
    }
}

/* Reads PCIe TX/RX of g (blocks ~2 x 20 ms on a real driver) and publishes them under the lock.
 * Called by the PCIe thread, or inline by sample_round when no thread runs. */
static void read_pcie(gp_monitor *m, gpu *g, gp_ns ts)
{
    static const struct {
        gp_metric m;
        int counter;
    } pcie[] = {{GP_M_PCIE_TX, GP__NVML_PCIE_TX}, {GP_M_PCIE_RX, GP__NVML_PCIE_RX}};
    double val[2] = {0, 0};
    int rc[2] = {NVMLR_FUNCTION_NOT_FOUND, NVMLR_FUNCTION_NOT_FOUND};
    pthread_mutex_lock(&m->lock);
    uint64_t unsup = g->pcie_unsup;
    bool lost = g->id.lost;
    pthread_mutex_unlock(&m->lock);
    if (lost)
        return;
    for (int i = 0; i < 2; i++) {
        if (!(m->wanted & BIT(pcie[i].m)) || (unsup & BIT(pcie[i].m)))
            continue;
        unsigned kbs = 0;
        rc[i] = m->nvml.pcie_throughput ? m->nvml.pcie_throughput(g->h, pcie[i].counter, &kbs)
                                        : NVMLR_FUNCTION_NOT_FOUND;
        val[i] = kbs * 1024.0;
    }
    pthread_mutex_lock(&m->lock);
    g->pcie_last = ts;
    for (int i = 0; i < 2; i++) {
        if (!(m->wanted & BIT(pcie[i].m)) || (unsup & BIT(pcie[i].m)))
            continue;
        if (rc[i] == NVMLR_SUCCESS) {
            g->pcie_val[i] = val[i];
            g->pcie_have[i] = true;
        } else {
            g->pcie_have[i] = false;
            if (rc[i] == NVMLR_NOT_SUPPORTED || rc[i] == NVMLR_FUNCTION_NOT_FOUND)
                g->pcie_unsup |= BIT(pcie[i].m);
            else if (rc[i] != NVMLR_GPU_IS_LOST)
                set_last_error(m, "gpu%u: nvmlDeviceGetPcieThroughput: %s (NVML %d)", g->id.index,
                               gp__nvml_strerror(&m->nvml, rc[i]), rc[i]);
        }
    }
    pthread_mutex_unlock(&m->lock);
}

static bool wants_pcie(const gp_monitor *m)
{
    return (m->wanted & (BIT(GP_M_PCIE_TX) | BIT(GP_M_PCIE_RX))) != 0;
}

static void poll_xids(gp_monitor *m, unsigned timeout_ms);

static gp_status sample_round(gp_monitor *m, gp_ns ts)
{
    int32_t comp = gp_component_current();
    bool busy = false;
    for (size_t i = 0; i < m->n_gpus; i++) {
        gpu *g = &m->gpus[i];
        if (g->lost)
            continue;
        if (wants_pcie(m) && !m->pcie_thread_started &&
            (g->pcie_last == 0 || ts - g->pcie_last >= 1000000000LL))
            read_pcie(m, g, ts);
        gp_gpu_sample s;
        memset(&s, 0, sizeof s);
        s.ts = ts;
        s.component = comp;
        char gerr[256] = "";
        read_gpu(m, g, &s, gerr, sizeof gerr);
        pthread_mutex_lock(&m->lock);
        if (gerr[0]) {
            set_last_error(m, "%s", gerr);
            m->last_error_ts = ts;
            if (m->cfg.mode == GP_MODE_DEBUG)
                emit(m, GP_EVT_DEBUG, GP_SEV_INFO, ts, (int)i, 0, "nvml", NAN, NAN, "%s", gerr);
        }
        uint64_t newly = g->unsup & ~g->id.unsupported;
        if (newly && m->cfg.mode == GP_MODE_DEBUG)
            emit(m, GP_EVT_DEBUG, GP_SEV_INFO, ts, (int)i, 0, "unsupported", (double)newly, NAN,
                 "gpu%zu: metrics not supported, no longer polled (mask 0x%llx)", i,
                 (unsigned long long)newly);
        g->id.unsupported = g->unsup | g->pcie_unsup;
        if (!g->lost) /* the latest PCIe reading (at most 1 s old) */
            for (int k = 0; k < 2; k++)
                if (g->pcie_have[k]) {
                    s.v[GP_M_PCIE_TX + k] = g->pcie_val[k];
                    s.valid |= BIT(GP_M_PCIE_TX + k);
                }
        if (g->lost) {
            g->id.lost = true;
            g->n_procs = 0;
            set_last_error(m, "gpu%zu (%s) is lost: NVML returned GPU_IS_LOST", i,
                           g->id.pci_bus_id);
            m->last_error_ts = ts;
            emit(m, GP_EVT_DEVICE_LOST, GP_SEV_CRITICAL, ts, (int)i, 0, g->id.uuid, NAN, NAN,
                 "gpu%zu (%s, %s) fell off the bus or stopped answering; other GPUs go on", i,
                 g->id.name, g->id.pci_bus_id);
        } else {
            commit(m, g, &s, comp);
            if (gp_sample_has(&s, GP_M_UTIL_GPU) &&
                s.v[GP_M_UTIL_GPU] >= m->cfg.adaptive_busy_percent)
                busy = true;
        }
        pthread_mutex_unlock(&m->lock);
    }
    pthread_mutex_lock(&m->lock);
    m->samples_total++;
    m->last_round_ts = ts;
    if (m->cfg.mode == GP_MODE_ADAPTIVE)
        m->interval_ms = busy ? GP_MIN(m->cfg.adaptive_min_interval_ms, m->cfg.sampling_interval_ms)
                              : m->cfg.sampling_interval_ms;
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->lock);
    return GP_OK;
}

/* ---- XID events ------------------------------------------------------------------------ */

static void record_xid(gp_monitor *m, const gp__nvmlEventData_t *d)
{
    gp_ns ts = gp__clock_ns();
    pthread_mutex_lock(&m->lock);
    for (size_t i = 0; i < m->n_gpus; i++) {
        gpu *g = &m->gpus[i];
        if (g->h != d->device)
            continue;
        uint32_t code = (uint32_t)d->eventData;
        size_t k = 0;
        while (k < g->n_xid && g->xid_code[k] != code)
            k++;
        if (k == g->n_xid && g->n_xid < MAX_XID_CODES) {
            g->xid_code[k] = code;
            g->xid_count[k] = 0;
            g->n_xid++;
        }
        if (k < g->n_xid)
            g->xid_count[k]++;
        char what[16];
        snprintf(what, sizeof what, "%u", code);
        emit(m, GP_EVT_XID, GP_SEV_CRITICAL, ts, (int)i, 0, what, code, NAN,
             "gpu%zu reported XID %u%s", i, code, code == 999 ? " (unknown)" : "");
        break;
    }
    pthread_mutex_unlock(&m->lock);
}

static void poll_xids(gp_monitor *m, unsigned timeout_ms)
{
    if (!m->evset_ok)
        return;
    for (int i = 0; i < 64; i++) {
        gp__nvmlEventData_t d;
        memset(&d, 0, sizeof d);
        int r = m->nvml.event_set_wait(m->evset, &d, timeout_ms);
        if (r != NVMLR_SUCCESS)
            return;
        if (d.eventType & GP__NVML_EVENT_XID)
            record_xid(m, &d);
        timeout_ms = 0;
    }
}

static void *xid_main(void *arg)
{
    gp_monitor *m = arg;
    for (;;) {
        pthread_mutex_lock(&m->lock);
        bool stop = m->stop;
        pthread_mutex_unlock(&m->lock);
        if (stop)
            break;
        poll_xids(m, 200);
        deliver(m);
    }
    return NULL;
}

static void *pcie_main(void *arg)
{
    gp_monitor *m = arg;
    for (;;) {
        for (size_t i = 0; i < m->n_gpus; i++)
            read_pcie(m, &m->gpus[i], gp__clock_ns());
        pthread_mutex_lock(&m->lock);
        struct timespec rt;
        clock_gettime(CLOCK_REALTIME, &rt);
        gp_ns abs_ns = (gp_ns)rt.tv_sec * 1000000000LL + rt.tv_nsec + 1000000000LL;
        struct timespec until = {(time_t)(abs_ns / 1000000000LL), (long)(abs_ns % 1000000000LL)};
        while (!m->stop)
            if (pthread_cond_timedwait(&m->cv, &m->lock, &until) == ETIMEDOUT)
                break;
        bool stop = m->stop;
        pthread_mutex_unlock(&m->lock);
        if (stop)
            return NULL;
    }
}

/* ---- the sampler thread ----------------------------------------------------------------- */

static void *sampler_main(void *arg)
{
    gp_monitor *m = arg;
    for (;;) {
        gp_ns t0 = gp__clock_ns();
        pthread_mutex_lock(&m->sample_lock);
        (void)sample_round(m, t0);
        pthread_mutex_unlock(&m->sample_lock);
        deliver(m);
        pthread_mutex_lock(&m->lock);
        gp_ns wake_ns = t0 + (gp_ns)m->interval_ms * 1000000;
        struct timespec rt;
        clock_gettime(CLOCK_REALTIME, &rt); /* the condvar's clock */
        gp_ns left = wake_ns - gp__clock_ns();
        if (left < 0)
            left = 0;
        gp_ns abs_ns = (gp_ns)rt.tv_sec * 1000000000LL + rt.tv_nsec + left;
        struct timespec until = {(time_t)(abs_ns / 1000000000LL), (long)(abs_ns % 1000000000LL)};
        while (!m->stop) {
            int rc = pthread_cond_timedwait(&m->cv, &m->lock, &until);
            if (rc == ETIMEDOUT)
                break;
        }
        bool stop = m->stop;
        pthread_mutex_unlock(&m->lock);
        if (stop)
            break;
    }
    return NULL;
}

gp_status gp_monitor_start(gp_monitor *m)
{
    pthread_mutex_lock(&m->lock);
    if (m->running) {
        pthread_mutex_unlock(&m->lock);
        return GP_ESTATE;
    }
    m->running = true;
    m->stop = false;
    m->started_at = gp__clock_ns();
    emit(m, GP_EVT_STARTED, GP_SEV_INFO, m->started_at, -1, 0, gp_monitor_mode_name(m->cfg.mode),
         m->cfg.sampling_interval_ms, NAN, "monitoring %zu GPU(s) every %u ms, level %s", m->n_gpus,
         m->cfg.sampling_interval_ms, gp_monitor_level_name(m->cfg.level));
    pthread_mutex_unlock(&m->lock);
    deliver(m);
    /* PCIe first, so the sampler never reads it inline once threads run */
    if (wants_pcie(m) && pthread_create(&m->pcie_thread, NULL, pcie_main, m) == 0)
        m->pcie_thread_started = true;
    if (pthread_create(&m->thread, NULL, sampler_main, m) != 0) {
        pthread_mutex_lock(&m->lock);
        m->stop = true;
        pthread_cond_broadcast(&m->cv);
        pthread_mutex_unlock(&m->lock);
        if (m->pcie_thread_started)
            pthread_join(m->pcie_thread, NULL);
        m->pcie_thread_started = false;
        pthread_mutex_lock(&m->lock);
        m->running = false;
        pthread_mutex_unlock(&m->lock);
        return GP_EEXTERNAL;
    }
    if (m->evset_ok && pthread_create(&m->xid_thread, NULL, xid_main, m) == 0)
        m->xid_thread_started = true;
    return GP_OK;
}

void gp_monitor_stop(gp_monitor *m)
{
    pthread_mutex_lock(&m->lock);
    if (!m->running) {
        pthread_mutex_unlock(&m->lock);
        return;
    }
    m->stop = true;
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->lock);
    pthread_join(m->thread, NULL);
    if (m->xid_thread_started)
        pthread_join(m->xid_thread, NULL);
    m->xid_thread_started = false;
    if (m->pcie_thread_started)
        pthread_join(m->pcie_thread, NULL);
    m->pcie_thread_started = false;
    pthread_mutex_lock(&m->lock);
    m->running = false;
    gp_ns now = gp__clock_ns();
    emit(m, GP_EVT_STOPPED, GP_SEV_INFO, now, -1, 0, "", (double)m->samples_total, NAN,
         "stopped after %llu samples", (unsigned long long)m->samples_total);
    pthread_mutex_unlock(&m->lock);
    deliver(m);
}

gp_status gp_monitor_sample_now(gp_monitor *m, gp_ns ts)
{
    pthread_mutex_lock(&m->lock);
    bool running = m->running;
    pthread_mutex_unlock(&m->lock);
    if (running)
        return GP_ESTATE;
    pthread_mutex_lock(&m->sample_lock);
    gp_status st = sample_round(m, ts);
    poll_xids(m, 0);
    pthread_mutex_unlock(&m->sample_lock);
    deliver(m);
    return st;
}

bool gp_monitor_wait_samples(gp_monitor *m, uint64_t count, uint32_t timeout_ms)
{
    gp_ns deadline = gp__clock_ns() + (gp_ns)timeout_ms * 1000000;
    pthread_mutex_lock(&m->lock);
    while (m->samples_total < count) {
        gp_ns left = deadline - gp__clock_ns();
        if (left <= 0)
            break;
        struct timespec rt;
        clock_gettime(CLOCK_REALTIME, &rt);
        gp_ns abs_ns = (gp_ns)rt.tv_sec * 1000000000LL + rt.tv_nsec + GP_MIN(left, 50000000LL);
        struct timespec until = {(time_t)(abs_ns / 1000000000LL), (long)(abs_ns % 1000000000LL)};
        pthread_cond_timedwait(&m->cv, &m->lock, &until);
    }
    bool ok = m->samples_total >= count;
    pthread_mutex_unlock(&m->lock);
    return ok;
}

/* ---- listeners, trace ------------------------------------------------------------------- */

gp_status gp_monitor_add_listener(gp_monitor *m, gp_monitor_event_cb cb, void *ctx)
{
    if (!cb)
        return GP_EINVAL;
    pthread_mutex_lock(&m->lock);
    gp_status st = GP_ELIMIT;
    if (m->n_listeners < MAX_LISTENERS) {
        m->listeners[m->n_listeners].cb = cb;
        m->listeners[m->n_listeners].ctx = ctx;
        m->n_listeners++;
        st = GP_OK;
    }
    pthread_mutex_unlock(&m->lock);
    return st;
}

void gp_monitor_set_event_stream(gp_monitor *m, FILE *fp)
{
    pthread_mutex_lock(&m->lock);
    m->stream = fp;
    pthread_mutex_unlock(&m->lock);
}

gp_status gp_monitor_attach_trace(gp_monitor *m, gp_trace *t)
{
    pthread_mutex_lock(&m->lock);
    gp_status st = GP_OK;
    if (m->running) {
        st = GP_ESTATE;
    } else {
        m->trace = t;
        for (size_t i = 0; i < m->n_gpus; i++) {
            m->gpus[i].trace_track = 0;
            memset(m->gpus[i].series, 0, sizeof m->gpus[i].series);
        }
    }
    pthread_mutex_unlock(&m->lock);
    return st;
}

/* ---- queries ------------------------------------------------------------------------------ */

size_t gp_monitor_device_count(const gp_monitor *m)
{
    return m->n_gpus;
}

const char *gp_monitor_driver_version(const gp_monitor *m)
{
    return m->driver;
}

gp_status gp_monitor_device(gp_monitor *m, size_t idx, gp_gpu_ident *out)
{
    if (idx >= m->n_gpus)
        return GP_ENOENT;
    pthread_mutex_lock(&m->lock);
    *out = m->gpus[idx].id;
    pthread_mutex_unlock(&m->lock);
    return GP_OK;
}

gp_status gp_monitor_latest(gp_monitor *m, size_t idx, gp_gpu_sample *out)
{
    if (idx >= m->n_gpus)
        return GP_ENOENT;
    pthread_mutex_lock(&m->lock);
    gp_status st = m->gpus[idx].has_latest ? GP_OK : GP_EEMPTY;
    if (st == GP_OK)
        *out = m->gpus[idx].latest;
    pthread_mutex_unlock(&m->lock);
    return st;
}

size_t gp_monitor_history(gp_monitor *m, size_t idx, gp_gpu_sample *out, size_t max)
{
    if (idx >= m->n_gpus)
        return 0;
    pthread_mutex_lock(&m->lock);
    const gpu *g = &m->gpus[idx];
    size_t n = GP_MIN(max, g->ring_n), skip = g->ring_n - n;
    for (size_t i = 0; i < n; i++)
        out[i] = g->ring[(g->ring_head + skip + i) % g->ring_cap];
    pthread_mutex_unlock(&m->lock);
    return n;
}

gp_status gp_monitor_processes(gp_monitor *m, size_t idx, gp_gpu_process *out, size_t max,
                               size_t *n)
{
    if (idx >= m->n_gpus)
        return GP_ENOENT;
    pthread_mutex_lock(&m->lock);
    const gpu *g = &m->gpus[idx];
    size_t k = GP_MIN(max, g->n_procs);
    if (k)
        memcpy(out, g->procs, k * sizeof *out);
    *n = k;
    pthread_mutex_unlock(&m->lock);
    return GP_OK;
}

size_t gp_monitor_xid_counts(gp_monitor *m, size_t idx, uint32_t *codes, uint64_t *counts,
                             size_t max)
{
    if (idx >= m->n_gpus)
        return 0;
    pthread_mutex_lock(&m->lock);
    const gpu *g = &m->gpus[idx];
    for (size_t i = 0; i < g->n_xid && i < max; i++) {
        codes[i] = g->xid_code[i];
        counts[i] = g->xid_count[i];
    }
    size_t n = g->n_xid;
    pthread_mutex_unlock(&m->lock);
    return n;
}

uint64_t gp_monitor_samples_total(gp_monitor *m)
{
    pthread_mutex_lock(&m->lock);
    uint64_t n = m->samples_total;
    pthread_mutex_unlock(&m->lock);
    return n;
}

uint64_t gp_monitor_alerts_total(gp_monitor *m, const char *kind)
{
    uint64_t n = 0;
    pthread_mutex_lock(&m->lock);
    for (int k = 0; k < N_ALERT_KINDS; k++)
        if (!kind || strcmp(kind, alert_kinds[k]) == 0)
            n += m->alerts_total[k];
    pthread_mutex_unlock(&m->lock);
    return n;
}

uint32_t gp_monitor_current_interval_ms(gp_monitor *m)
{
    pthread_mutex_lock(&m->lock);
    uint32_t v = m->interval_ms;
    pthread_mutex_unlock(&m->lock);
    return v;
}

gp_status gp_monitor_leak(gp_monitor *m, size_t idx, gp_leak_result *out)
{
    if (idx >= m->n_gpus)
        return GP_ENOENT;
    pthread_mutex_lock(&m->lock);
    gp_leak_detector_eval(&m->gpus[idx].leak, out);
    pthread_mutex_unlock(&m->lock);
    return GP_OK;
}

gp_status gp_monitor_process_leak(gp_monitor *m, size_t idx, uint32_t pid, gp_leak_result *out)
{
    if (idx >= m->n_gpus)
        return GP_ENOENT;
    gp_status st = GP_ENOENT;
    pthread_mutex_lock(&m->lock);
    const gpu *g = &m->gpus[idx];
    for (size_t i = 0; i < g->n_ptracks; i++)
        if (g->ptracks[i].pid == pid) {
            gp_leak_detector_eval(&g->ptracks[i].leak, out);
            st = GP_OK;
        }
    pthread_mutex_unlock(&m->lock);
    return st;
}

/* Bottleneck over the last 10 s (at most 200 samples) of g's ring (lock held). */
static void bottleneck_of(gp_monitor *m, gpu *g, gp_ns now, gp_bottleneck *out)
{
    (void)m;
    gp_gpu_sample buf[200];
    size_t n = 0;
    for (size_t i = g->ring_n; i > 0 && n < 200; i--) {
        const gp_gpu_sample *s = &g->ring[(g->ring_head + i - 1) % g->ring_cap];
        if (now - s->ts > 10000000000LL)
            break;
        buf[200 - 1 - n] = *s;
        n++;
    }
    gp_bottleneck_classify(buf + 200 - n, n, out);
}

gp_status gp_monitor_bottleneck(gp_monitor *m, size_t idx, gp_bottleneck *out)
{
    if (idx >= m->n_gpus)
        return GP_ENOENT;
    pthread_mutex_lock(&m->lock);
    gpu *g = &m->gpus[idx];
    bottleneck_of(m, g, g->has_latest ? g->latest.ts : 0, out);
    pthread_mutex_unlock(&m->lock);
    return GP_OK;
}

static void suggest(gp_suggestion *out, size_t max, size_t *n, const char *type, gp_severity sev,
                    int dev, const char *msg, const char *evfmt, ...) GP_PRINTF(8, 9);
static void suggest(gp_suggestion *out, size_t max, size_t *n, const char *type, gp_severity sev,
                    int dev, const char *msg, const char *evfmt, ...)
{
    if (*n >= max)
        return;
    gp_suggestion *s = &out[(*n)++];
    memset(s, 0, sizeof *s);
    snprintf(s->type, sizeof s->type, "%s", type);
    s->severity = sev;
    s->device = dev;
    snprintf(s->message, sizeof s->message, "%s", msg);
    va_list ap;
    va_start(ap, evfmt);
    vsnprintf(s->evidence, sizeof s->evidence, evfmt, ap);
    va_end(ap);
}

gp_status gp_monitor_suggestions(gp_monitor *m, gp_suggestion *out, size_t max, size_t *n)
{
    *n = 0;
    pthread_mutex_lock(&m->lock);
    for (size_t i = 0; i < m->n_gpus; i++) {
        gpu *g = &m->gpus[i];
        int d = (int)i;
        if (g->id.lost) {
            suggest(out, max, n, "device_lost", GP_SEV_CRITICAL, d,
                    "The GPU stopped answering: check dmesg for XID errors, reseat or replace it.",
                    "gpu=%zu pci_bus_id=%s", i, g->id.pci_bus_id);
            continue;
        }
        if (!g->has_latest)
            continue;
        gp_leak_result lr;
        gp_leak_detector_eval(&g->leak, &lr);
        if (lr.leak)
            suggest(out, max, n, "memory_leak", GP_SEV_CRITICAL, d,
                    "GPU memory keeps growing: look for tensors or buffers kept alive across "
                    "iterations (caches, lists of losses, graphs retained for backward).",
                    "slope_mb_per_h=%.1f r2=%.3f window_min=%.1f time_to_full_h=%.2f",
                    lr.slope_mb_per_h, lr.r2, lr.window_s / 60,
                    lr.time_to_full_s >= 0 ? lr.time_to_full_s / 3600 : -1.0);
        gp_bottleneck b;
        bottleneck_of(m, g, g->latest.ts, &b);
        switch (b.kind) {
        case GP_BN_THERMAL:
            suggest(out, max, n, "thermal", GP_SEV_WARNING, d,
                    "Clocks are reduced for temperature: check airflow, fan curves and "
                    "ambient temperature.",
                    "temp_max_c=%.0f thermal_throttle_share=%.2f", b.temp_max,
                    b.thermal_throttle_share);
            break;
        case GP_BN_POWER:
            suggest(out, max, n, "power", GP_SEV_WARNING, d,
                    "The GPU runs at its power limit: raise the limit if allowed, or expect "
                    "lower clocks under this load.",
                    "power_ratio=%.2f power_throttle_share=%.2f", b.power_ratio,
                    b.power_throttle_share);
            break;
        case GP_BN_MEMORY_CAPACITY:
            suggest(out, max, n, "memory_capacity", GP_SEV_WARNING, d,
                    "GPU memory is almost full: reduce the batch size, use activation "
                    "checkpointing or mixed precision.",
                    "mem_used_ratio=%.3f", b.mem_used_ratio);
            break;
        case GP_BN_IDLE:
            suggest(out, max, n, "idle", GP_SEV_INFO, d,
                    "The GPU is mostly idle: the input pipeline or CPU work may be the "
                    "bottleneck (more data-loader workers, pinned memory, prefetching).",
                    "util_gpu_mean=%.1f samples=%u", b.util_gpu_mean, b.samples);
            break;
        case GP_BN_MEMORY_BANDWIDTH:
            suggest(out, max, n, "memory_bandwidth", GP_SEV_INFO, d,
                    "Memory-bandwidth-bound: fuse element-wise kernels, use lower precision "
                    "or larger arithmetic intensity.",
                    "util_mem_mean=%.1f util_gpu_mean=%.1f", b.util_mem_mean, b.util_gpu_mean);
            break;
        case GP_BN_COMPUTE:
            suggest(out, max, n, "compute", GP_SEV_INFO, d,
                    "Compute-bound: tensor cores (TF32/FP16/BF16) and kernel-level profiling "
                    "are the next steps.",
                    "util_gpu_mean=%.1f", b.util_gpu_mean);
            break;
        default:
            break;
        }
        if (gp_sample_has(&g->latest, GP_M_ECC_UNCORRECTED) &&
            g->latest.v[GP_M_ECC_UNCORRECTED] > 0)
            suggest(out, max, n, "ecc", GP_SEV_CRITICAL, d,
                    "Uncorrected ECC errors: drain the GPU and run diagnostics.",
                    "ecc_uncorrected=%.0f", g->latest.v[GP_M_ECC_UNCORRECTED]);
        if (g->n_xid)
            suggest(out, max, n, "xid", GP_SEV_CRITICAL, d,
                    "The driver reported XID errors: look them up in NVIDIA's XID catalogue.",
                    "xid_codes=%zu first_code=%u", g->n_xid, g->xid_code[0]);
    }
    pthread_mutex_unlock(&m->lock);
    return GP_OK;
}

gp_status gp_monitor_components(gp_monitor *m, gp_component_stats *out, size_t max, size_t *n)
{
    *n = 0;
    pthread_mutex_lock(&m->lock);
    for (int32_t id = 0; id < m->n_comps_seen && *n < max; id++) {
        const comp_stats *c = &m->comps[id];
        if (!c->samples)
            continue;
        gp_component_stats *o = &out[(*n)++];
        memset(o, 0, sizeof *o);
        o->id = id;
        const char *name = gp_component_name(id);
        snprintf(o->name, sizeof o->name, "%s", name ? name : "?");
        o->samples = c->samples;
        o->wall_s = c->wall_s;
        o->gpu_busy_s = c->busy_s;
        o->mem_growth_bytes = c->growth;
    }
    pthread_mutex_unlock(&m->lock);
    return GP_OK;
}

const char *gp_health_status_name(gp_health_status s)
{
    switch (s) {
    case GP_HEALTH_OK:
        return "ok";
    case GP_HEALTH_DEGRADED:
        return "degraded";
    case GP_HEALTH_ERROR:
        return "error";
    }
    return "error";
}

void gp_monitor_get_health(gp_monitor *m, gp_monitor_health *h)
{
    memset(h, 0, sizeof *h);
    pthread_mutex_lock(&m->lock);
    for (size_t i = 0; i < m->n_gpus; i++)
        h->gpus_lost += m->gpus[i].id.lost;
    h->gpus = m->n_gpus;
    h->status = m->n_gpus == 0 || h->gpus_lost == m->n_gpus ? GP_HEALTH_ERROR
                : h->gpus_lost || m->last_error[0]          ? GP_HEALTH_DEGRADED
                                                            : GP_HEALTH_OK;
    h->samples_collected = m->samples_total;
    h->running = m->running;
    h->level = m->cfg.level;
    h->mode = m->cfg.mode;
    h->interval_ms = m->interval_ms;
    snprintf(h->driver_version, sizeof h->driver_version, "%s", m->driver);
    snprintf(h->nvml_library, sizeof h->nvml_library, "%s", m->nvml.lib_path);
    snprintf(h->last_error, sizeof h->last_error, "%s", m->last_error);
    pthread_mutex_unlock(&m->lock);
}

gp_status gp_monitor_health_render_json(const gp_monitor_health *h, char **out, size_t *len)
{
    gp__jw w;
    gp__jw_init(&w, NULL);
    gp__jw_obj_begin(&w);
    gp__jw_kv_str(&w, "status", gp_health_status_name(h->status));
    gp__jw_kv_int(&w, "gpus", (int64_t)h->gpus);
    gp__jw_kv_int(&w, "gpus_lost", (int64_t)h->gpus_lost);
    gp__jw_kv_int(&w, "samples_collected", (int64_t)h->samples_collected);
    gp__jw_kv_bool(&w, "running", h->running);
    gp__jw_kv_str(&w, "level", gp_monitor_level_name(h->level));
    gp__jw_kv_str(&w, "mode", gp_monitor_mode_name(h->mode));
    gp__jw_kv_int(&w, "interval_ms", h->interval_ms);
    gp__jw_kv_str(&w, "driver_version", h->driver_version);
    gp__jw_kv_str(&w, "nvml_library", h->nvml_library);
    gp__jw_key(&w, "last_error");
    if (h->last_error[0])
        gp__jw_str(&w, h->last_error);
    else
        gp__jw_null(&w);
    gp__jw_obj_end(&w);
    gp_status st = gp__jw_flush(&w);
    if (st != GP_OK) {
        gp__jw_finish(&w);
        return st;
    }
    *out = gp__jw_take(&w, len);
    return *out ? GP_OK : GP_ENOMEM;
}

gp_status gp_monitor_health_json(gp_monitor *m, char **out, size_t *len)
{
    gp_monitor_health h;
    gp_monitor_get_health(m, &h);
    return gp_monitor_health_render_json(&h, out, len);
}
