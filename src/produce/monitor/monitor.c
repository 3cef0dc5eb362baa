/* The monitor: lifecycle, events and listeners, the sampling round, the sampler / XID / PCIe
 * threads. NVML reads are in monitor_read.c, the commit step in monitor_commit.c, queries and
 * health in monitor_query.c, rendering in src/render/monitor_json.c. See
 * docs/internals/monitor.md. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/util.h"
#include "produce/monitor/monitor_internal.h"

const char *const gp__alert_kinds[GP__MON_N_ALERT_KINDS] = {"utilization", "memory", "temperature",
                                                            "power", "utilization_low"};

/* ---- names -------------------------------------------------------------------------------- */

const char *const gp__metric_names[GP_M_COUNT] = {"util_gpu",
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
    return (unsigned)m < GP_M_COUNT ? gp__metric_names[m] : "?";
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

/* ---- events ---------------------------------------------------------------------------- */

void gp__mon_emit(gp_monitor *m, gp_monitor_event_type type, gp_severity sev, gp_ns ts, int dev,
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

/* Delivers queued events to the listeners, then the sink (lock NOT held on entry). */
static void deliver(gp_monitor *m) GP_EXCLUDES(m->lock, m->deliver_lock)
{
    gp__mutex_lock(&m->deliver_lock);
    for (;;) {
        gp__mutex_lock(&m->lock);
        if (m->n_pending == 0) {
            gp__mutex_unlock(&m->lock);
            gp__mutex_unlock(&m->deliver_lock);
            return;
        }
        gp_monitor_event *evs = m->pending;
        size_t n = m->n_pending;
        m->pending = NULL;
        m->n_pending = m->cap_pending = 0;
        gp__mon_listener ls[GP__MON_MAX_LISTENERS + 1];
        size_t nl = m->n_listeners;
        memcpy(ls, m->listeners, nl * sizeof ls[0]);
        if (m->sink.cb)
            ls[nl++] = m->sink;
        gp__mutex_unlock(&m->lock);
        for (size_t k = 0; k < n; k++)
            for (size_t i = 0; i < nl; i++)
                ls[i].cb(&evs[k], ls[i].ctx);
        free(evs);
    }
}

void gp__mon_set_last_error(gp_monitor *m, const char *fmt, ...)
{
    char msg[256]; /* the length the health struct has always carried */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gp_error_set(&m->last_error, GP_EEXTERNAL, "%s", msg);
}

/* ---- opening ----------------------------------------------------------------------------- */

gp_leak_params gp__mon_leak_params(const gp_monitor_config *c)
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

/* Fills the identity of GPU i (handle already had): name, UUID, PCI id, fans, MIG instances,
 * XID registration. */
static void open_ident(gp_monitor *m, gp__mon_gpu *g, unsigned i) GP_REQUIRES(m->lock)
{
    if (!m->nvml.name || m->nvml.name(g->h, g->id.name, sizeof g->id.name) != GP__NVMLR_SUCCESS)
        snprintf(g->id.name, sizeof g->id.name, "unknown");
    if (!m->nvml.uuid || m->nvml.uuid(g->h, g->id.uuid, sizeof g->id.uuid) != GP__NVMLR_SUCCESS)
        g->id.uuid[0] = 0;
    gp__nvmlPciInfo_t pci;
    memset(&pci, 0, sizeof pci);
    if (m->nvml.pci_info && m->nvml.pci_info(g->h, &pci) == GP__NVMLR_SUCCESS)
        snprintf(g->id.pci_bus_id, sizeof g->id.pci_bus_id, "%.31s", pci.busId);
    if (m->nvml.num_fans && m->nvml.num_fans(g->h, &g->n_fans) != GP__NVMLR_SUCCESS)
        g->n_fans = 0;
    unsigned cur = 0, pend = 0, maxmig = 0;
    if (m->cfg.level >= GP_LEVEL_DETAILED && m->nvml.mig_mode &&
        m->nvml.mig_mode(g->h, &cur, &pend) == GP__NVMLR_SUCCESS && cur && m->nvml.max_mig_count &&
        m->nvml.max_mig_count(g->h, &maxmig) == GP__NVMLR_SUCCESS && m->nvml.mig_handle) {
        for (unsigned k = 0; k < maxmig; k++) {
            gp__nvmlDevice_t mh;
            if (m->nvml.mig_handle(g->h, k, &mh) == GP__NVMLR_SUCCESS)
                g->id.mig_instances++;
        }
    }
    if (m->evset_ok) {
        int r = m->nvml.register_events(g->h, GP__NVML_EVENT_XID, m->evset);
        if (r != GP__NVMLR_SUCCESS && r != GP__NVMLR_NOT_SUPPORTED)
            gp__mon_set_last_error(m, "gpu%u: nvmlDeviceRegisterEvents: %s", i,
                                   gp__nvml_strerror(&m->nvml, r));
    }
}

/* Enumerates the GPUs of the loaded NVML into m->gpus. */
static gp_status open_devices(gp_monitor *m, const gp_leak_params *lp, gp_error *err)
    GP_REQUIRES(m->lock)
{
    unsigned count = 0;
    int r = m->nvml.device_count(&count);
    if (r != GP__NVMLR_SUCCESS)
        return gp_error_set(err, GP_ENODRIVER, "no NVIDIA driver found: nvmlDeviceGetCount: %s",
                            gp__nvml_strerror(&m->nvml, r));
    m->gpus = calloc(count ? count : 1, sizeof *m->gpus);
    if (!m->gpus)
        return gp_error_set(err, GP_ENOMEM, "out of memory");
    const gp_monitor_config *cfg = &m->cfg;
    if (!cfg->enable_multi_gpu && count > 1)
        count = 1; /* enable_multi_gpu: false monitors GPU 0 only */
    m->n_gpus = count;
    if (cfg->enable_xid_events && cfg->level >= GP_LEVEL_STANDARD && m->nvml.event_set_create &&
        m->nvml.register_events && m->nvml.event_set_wait &&
        m->nvml.event_set_create(&m->evset) == GP__NVMLR_SUCCESS)
        m->evset_ok = true;
    for (unsigned i = 0; i < count; i++) {
        gp__mon_gpu *g = &m->gpus[i];
        g->id.index = i;
        g->bn_prev = GP_BN_UNKNOWN;
        g->leak_last_eval_bucket = -1;
        if (gp_leak_detector_init(&g->leak, lp) != GP_OK)
            return gp_error_set(err, GP_EINVAL, "invalid leak detector settings");
        r = m->nvml.device_handle(i, &g->h);
        if (r != GP__NVMLR_SUCCESS) {
            /* keep the slot, marked lost, so indices stay NVML's */
            g->lost = g->id.lost = true;
            gp__mon_set_last_error(m, "gpu%u: nvmlDeviceGetHandleByIndex: %s", i,
                                   gp__nvml_strerror(&m->nvml, r));
            continue;
        }
        open_ident(m, g, i);
    }
    return GP_OK;
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
    gp_leak_params lp = gp__mon_leak_params(cfg);
    gp_leak_detector probe;
    if (gp_leak_detector_init(&probe, &lp) != GP_OK)
        return gp_error_set(err, GP_EINVAL, "invalid leak detector settings");

    gp_monitor *m = calloc(1, sizeof *m);
    if (!m)
        return gp_error_set(err, GP_ENOMEM, "out of memory");
    m->cfg = *cfg;
    for (int k = 0; k < GP_M_COUNT; k++)
        if (gp_monitor_config_wants(cfg, (gp_metric)k))
            m->wanted |= 1ull << k;
    gp__mutex_init(&m->lock);
    gp__mutex_init(&m->sample_lock);
    gp__mutex_init(&m->deliver_lock);
    pthread_cond_init(&m->cv, NULL);
    gp_status st = gp__nvml_load(&m->nvml, err);
    if (st != GP_OK)
        goto fail;
    if (m->nvml.driver_version &&
        m->nvml.driver_version(m->driver, sizeof m->driver) != GP__NVMLR_SUCCESS)
        m->driver[0] = 0;
    gp__mutex_lock(&m->lock); /* nobody else sees m yet: taken for the analysis' sake */
    m->interval_ms = cfg->sampling_interval_ms;
    st = open_devices(m, &lp, err);
    gp__mutex_unlock(&m->lock);
    if (st != GP_OK)
        goto fail;
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
        gp__mon_gpu *g = &m->gpus[i];
        free(g->ring);
        free(g->procs);
        free(g->procs_next);
        free(g->proc_buf);
        free(g->util_buf);
    }
    free(m->gpus);
    gp__mutex_lock(&m->lock);
    free(m->pending);
    m->pending = NULL;
    gp__mutex_unlock(&m->lock);
    gp__mutex_destroy(&m->lock);
    gp__mutex_destroy(&m->sample_lock);
    gp__mutex_destroy(&m->deliver_lock);
    pthread_cond_destroy(&m->cv);
    free(m);
}

/* ---- the sampling round ------------------------------------------------------------------ */

/* Publishes what the read of GPU i found (errors, unsupported bits, PCIe, loss) and commits s. */
static void publish_gpu(gp_monitor *m, size_t i, gp_gpu_sample *s, const char *gerr, int32_t comp)
    GP_REQUIRES(m->lock)
{
    gp__mon_gpu *g = &m->gpus[i];
    gp_ns ts = s->ts;
    if (gerr[0]) {
        gp__mon_set_last_error(m, "%s", gerr);
        m->last_error_ts = ts;
        if (m->cfg.mode == GP_MODE_DEBUG)
            gp__mon_emit(m, GP_EVT_DEBUG, GP_SEV_INFO, ts, (int)i, 0, "nvml", NAN, NAN, "%s", gerr);
    }
    uint64_t newly = g->unsup & ~g->id.unsupported;
    if (newly && m->cfg.mode == GP_MODE_DEBUG)
        gp__mon_emit(m, GP_EVT_DEBUG, GP_SEV_INFO, ts, (int)i, 0, "unsupported", (double)newly, NAN,
                     "gpu%zu: metrics not supported, no longer polled (mask 0x%llx)", i,
                     (unsigned long long)newly);
    g->id.unsupported = g->unsup | g->pcie_unsup;
    if (!g->lost) /* the latest PCIe reading (at most 1 s old) */
        for (int k = 0; k < 2; k++)
            if (g->pcie_have[k]) {
                s->v[GP_M_PCIE_TX + k] = g->pcie_val[k];
                s->valid |= GP__MON_BIT(GP_M_PCIE_TX + k);
            }
    if (g->lost) {
        g->id.lost = true;
        g->n_procs = 0;
        gp__mon_set_last_error(m, "gpu%zu (%s) is lost: NVML returned GPU_IS_LOST", i,
                               g->id.pci_bus_id);
        m->last_error_ts = ts;
        gp__mon_emit(m, GP_EVT_DEVICE_LOST, GP_SEV_CRITICAL, ts, (int)i, 0, g->id.uuid, NAN, NAN,
                     "gpu%zu (%s, %s) fell off the bus or stopped answering; other GPUs go on", i,
                     g->id.name, g->id.pci_bus_id);
    } else {
        gp__mon_commit(m, g, s, comp);
    }
}

static gp_status sample_round(gp_monitor *m, gp_ns ts) GP_REQUIRES(m->sample_lock)
    GP_EXCLUDES(m->lock)
{
    int32_t comp = m->cfg.integrate_with_component_profiling ? gp_component_current() : -1;
    bool busy = false;
    for (size_t i = 0; i < m->n_gpus; i++) {
        gp__mon_gpu *g = &m->gpus[i];
        if (g->lost)
            continue;
        if (gp__mon_wants_pcie(m) && !m->pcie_thread_started &&
            (g->pcie_last == 0 || ts - g->pcie_last >= 1000000000LL))
            gp__mon_read_pcie(m, g, ts);
        gp_gpu_sample s;
        memset(&s, 0, sizeof s);
        s.ts = ts;
        s.component = comp;
        char gerr[256] = "";
        gp__mon_read_gpu(m, g, &s, gerr, sizeof gerr);
        gp__mutex_lock(&m->lock);
        publish_gpu(m, i, &s, gerr, comp);
        if (!g->lost && gp_sample_has(&s, GP_M_UTIL_GPU) &&
            s.v[GP_M_UTIL_GPU] >= m->cfg.adaptive_busy_percent)
            busy = true;
        gp__mutex_unlock(&m->lock);
    }
    gp__mutex_lock(&m->lock);
    m->samples_total++;
    m->last_round_ts = ts;
    if (m->cfg.mode == GP_MODE_ADAPTIVE)
        m->interval_ms = busy ? GP_MIN(m->cfg.adaptive_min_interval_ms, m->cfg.sampling_interval_ms)
                              : m->cfg.sampling_interval_ms;
    pthread_cond_broadcast(&m->cv);
    gp__mutex_unlock(&m->lock);
    return GP_OK;
}

/* ---- threads ------------------------------------------------------------------------------ */

/* Absolute CLOCK_REALTIME (the condvar's clock) `left` ns from now. */
static struct timespec deadline_in(gp_ns left)
{
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    gp_ns abs_ns = (gp_ns)rt.tv_sec * 1000000000LL + rt.tv_nsec + left;
    struct timespec until = {(time_t)(abs_ns / 1000000000LL), (long)(abs_ns % 1000000000LL)};
    return until;
}

/* Waits until `until` or a stop request; returns true when stop was requested. */
static bool wait_stop(gp_monitor *m, const struct timespec *until) GP_REQUIRES(m->lock)
{
    while (!m->stop)
        if (gp__cond_timedwait(&m->cv, &m->lock, until) == ETIMEDOUT)
            break;
    return m->stop;
}

static void *xid_main(void *arg)
{
    gp_monitor *m = arg;
    for (;;) {
        gp__mutex_lock(&m->lock);
        bool stop = m->stop;
        gp__mutex_unlock(&m->lock);
        if (stop)
            break;
        gp__mon_poll_xids(m, 200);
        deliver(m);
    }
    return NULL;
}

static void *pcie_main(void *arg)
{
    gp_monitor *m = arg;
    for (;;) {
        for (size_t i = 0; i < m->n_gpus; i++)
            gp__mon_read_pcie(m, &m->gpus[i], gp__clock_ns());
        gp__mutex_lock(&m->lock);
        struct timespec until = deadline_in(1000000000LL);
        bool stop = wait_stop(m, &until);
        gp__mutex_unlock(&m->lock);
        if (stop)
            return NULL;
    }
}

static void *sampler_main(void *arg)
{
    gp_monitor *m = arg;
    for (;;) {
        gp_ns t0 = gp__clock_ns();
        gp__mutex_lock(&m->sample_lock);
        (void)sample_round(m, t0);
        gp__mutex_unlock(&m->sample_lock);
        deliver(m);
        gp__mutex_lock(&m->lock);
        gp_ns wake_ns = t0 + (gp_ns)m->interval_ms * 1000000;
        gp_ns left = wake_ns - gp__clock_ns();
        if (left < 0)
            left = 0;
        struct timespec until = deadline_in(left);
        bool stop = wait_stop(m, &until);
        gp__mutex_unlock(&m->lock);
        if (stop)
            break;
    }
    return NULL;
}

gp_status gp_monitor_start(gp_monitor *m)
{
    gp__mutex_lock(&m->lock);
    if (m->running) {
        gp__mutex_unlock(&m->lock);
        return GP_ESTATE;
    }
    m->running = true;
    m->stop = false;
    m->started_at = gp__clock_ns();
    gp__mon_emit(m, GP_EVT_STARTED, GP_SEV_INFO, m->started_at, -1, 0,
                 gp_monitor_mode_name(m->cfg.mode), m->cfg.sampling_interval_ms, NAN,
                 "monitoring %zu GPU(s) every %u ms, level %s", m->n_gpus,
                 m->cfg.sampling_interval_ms, gp_monitor_level_name(m->cfg.level));
    gp__mutex_unlock(&m->lock);
    deliver(m);
    /* PCIe first, so the sampler never reads it inline once threads run */
    if (gp__mon_wants_pcie(m) && pthread_create(&m->pcie_thread, NULL, pcie_main, m) == 0)
        m->pcie_thread_started = true;
    if (pthread_create(&m->thread, NULL, sampler_main, m) != 0) {
        gp__mutex_lock(&m->lock);
        m->stop = true;
        pthread_cond_broadcast(&m->cv);
        gp__mutex_unlock(&m->lock);
        if (m->pcie_thread_started)
            pthread_join(m->pcie_thread, NULL);
        m->pcie_thread_started = false;
        gp__mutex_lock(&m->lock);
        m->running = false;
        gp__mutex_unlock(&m->lock);
        return GP_EEXTERNAL;
    }
    if (m->evset_ok && pthread_create(&m->xid_thread, NULL, xid_main, m) == 0)
        m->xid_thread_started = true;
    return GP_OK;
}

void gp_monitor_stop(gp_monitor *m)
{
    gp__mutex_lock(&m->lock);
    if (!m->running) {
        gp__mutex_unlock(&m->lock);
        return;
    }
    m->stop = true;
    pthread_cond_broadcast(&m->cv);
    gp__mutex_unlock(&m->lock);
    pthread_join(m->thread, NULL);
    if (m->xid_thread_started)
        pthread_join(m->xid_thread, NULL);
    m->xid_thread_started = false;
    if (m->pcie_thread_started)
        pthread_join(m->pcie_thread, NULL);
    m->pcie_thread_started = false;
    gp__mutex_lock(&m->lock);
    m->running = false;
    gp_ns now = gp__clock_ns();
    gp__mon_emit(m, GP_EVT_STOPPED, GP_SEV_INFO, now, -1, 0, "", (double)m->samples_total, NAN,
                 "stopped after %llu samples", (unsigned long long)m->samples_total);
    gp__mutex_unlock(&m->lock);
    deliver(m);
}

gp_status gp_monitor_sample_now(gp_monitor *m, gp_ns ts)
{
    gp__mutex_lock(&m->lock);
    bool running = m->running;
    gp__mutex_unlock(&m->lock);
    if (running)
        return GP_ESTATE;
    gp__mutex_lock(&m->sample_lock);
    gp_status st = sample_round(m, ts);
    gp__mon_poll_xids(m, 0);
    gp__mutex_unlock(&m->sample_lock);
    deliver(m);
    return st;
}

bool gp_monitor_wait_samples(gp_monitor *m, uint64_t count, uint32_t timeout_ms)
{
    gp_ns deadline = gp__clock_ns() + (gp_ns)timeout_ms * 1000000;
    gp__mutex_lock(&m->lock);
    while (m->samples_total < count) {
        gp_ns left = deadline - gp__clock_ns();
        if (left <= 0)
            break;
        struct timespec until = deadline_in(GP_MIN(left, 50000000LL));
        gp__cond_timedwait(&m->cv, &m->lock, &until);
    }
    bool ok = m->samples_total >= count;
    gp__mutex_unlock(&m->lock);
    return ok;
}

/* ---- listeners, trace ------------------------------------------------------------------- */

gp_status gp_monitor_add_listener(gp_monitor *m, gp_monitor_event_cb cb, void *ctx)
{
    if (!cb)
        return GP_EINVAL;
    gp__mutex_lock(&m->lock);
    gp_status st = GP_ELIMIT;
    if (m->n_listeners < GP__MON_MAX_LISTENERS) {
        m->listeners[m->n_listeners].cb = cb;
        m->listeners[m->n_listeners].ctx = ctx;
        m->n_listeners++;
        st = GP_OK;
    }
    gp__mutex_unlock(&m->lock);
    return st;
}

void gp__monitor_set_sink(gp_monitor *m, gp_monitor_event_cb cb, void *ctx)
{
    gp__mutex_lock(&m->lock);
    m->sink.cb = cb;
    m->sink.ctx = cb ? ctx : NULL;
    gp__mutex_unlock(&m->lock);
}

gp_status gp_monitor_attach_trace(gp_monitor *m, gp_trace *t)
{
    gp__mutex_lock(&m->lock);
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
    gp__mutex_unlock(&m->lock);
    return st;
}
