/* The monitor's queries (copies under the lock), suggestions, component attribution and health.
 * Rendering of health and events is in src/render/monitor_json.c. See
 * docs/internals/monitor.md. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/util.h"
#include "produce/monitor/monitor_internal.h"

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
    gp__mutex_lock(&m->lock);
    *out = m->gpus[idx].id;
    gp__mutex_unlock(&m->lock);
    return GP_OK;
}

gp_status gp_monitor_latest(gp_monitor *m, size_t idx, gp_gpu_sample *out)
{
    if (idx >= m->n_gpus)
        return GP_ENOENT;
    gp__mutex_lock(&m->lock);
    gp_status st = m->gpus[idx].has_latest ? GP_OK : GP_EEMPTY;
    if (st == GP_OK)
        *out = m->gpus[idx].latest;
    gp__mutex_unlock(&m->lock);
    return st;
}

size_t gp_monitor_history(gp_monitor *m, size_t idx, gp_gpu_sample *out, size_t max)
{
    if (idx >= m->n_gpus)
        return 0;
    gp__mutex_lock(&m->lock);
    const gp__mon_gpu *g = &m->gpus[idx];
    size_t n = GP_MIN(max, g->ring_n), skip = g->ring_n - n;
    for (size_t i = 0; i < n; i++)
        out[i] = g->ring[(g->ring_head + skip + i) % g->ring_cap];
    gp__mutex_unlock(&m->lock);
    return n;
}

gp_status gp_monitor_processes(gp_monitor *m, size_t idx, gp_gpu_process *out, size_t max,
                               size_t *n)
{
    if (idx >= m->n_gpus)
        return GP_ENOENT;
    gp__mutex_lock(&m->lock);
    const gp__mon_gpu *g = &m->gpus[idx];
    size_t k = GP_MIN(max, g->n_procs);
    if (k)
        memcpy(out, g->procs, k * sizeof *out);
    *n = k;
    gp__mutex_unlock(&m->lock);
    return GP_OK;
}

size_t gp_monitor_xid_counts(gp_monitor *m, size_t idx, uint32_t *codes, uint64_t *counts,
                             size_t max)
{
    if (idx >= m->n_gpus)
        return 0;
    gp__mutex_lock(&m->lock);
    const gp__mon_gpu *g = &m->gpus[idx];
    for (size_t i = 0; i < g->n_xid && i < max; i++) {
        codes[i] = g->xid_code[i];
        counts[i] = g->xid_count[i];
    }
    size_t n = g->n_xid;
    gp__mutex_unlock(&m->lock);
    return n;
}

uint64_t gp_monitor_samples_total(gp_monitor *m)
{
    gp__mutex_lock(&m->lock);
    uint64_t n = m->samples_total;
    gp__mutex_unlock(&m->lock);
    return n;
}

uint64_t gp_monitor_alerts_total(gp_monitor *m, const char *kind)
{
    uint64_t n = 0;
    gp__mutex_lock(&m->lock);
    for (int k = 0; k < GP__MON_N_ALERT_KINDS; k++)
        if (!kind || strcmp(kind, gp__alert_kinds[k]) == 0)
            n += m->alerts_total[k];
    gp__mutex_unlock(&m->lock);
    return n;
}

uint32_t gp_monitor_current_interval_ms(gp_monitor *m)
{
    gp__mutex_lock(&m->lock);
    uint32_t v = m->interval_ms;
    gp__mutex_unlock(&m->lock);
    return v;
}

gp_status gp_monitor_leak(gp_monitor *m, size_t idx, gp_leak_result *out)
{
    if (idx >= m->n_gpus)
        return GP_ENOENT;
    gp__mutex_lock(&m->lock);
    gp_leak_detector_eval(&m->gpus[idx].leak, out);
    gp__mutex_unlock(&m->lock);
    return GP_OK;
}

gp_status gp_monitor_process_leak(gp_monitor *m, size_t idx, uint32_t pid, gp_leak_result *out)
{
    if (idx >= m->n_gpus)
        return GP_ENOENT;
    gp_status st = GP_ENOENT;
    gp__mutex_lock(&m->lock);
    const gp__mon_gpu *g = &m->gpus[idx];
    for (size_t i = 0; i < g->n_ptracks; i++)
        if (g->ptracks[i].pid == pid) {
            gp_leak_detector_eval(&g->ptracks[i].leak, out);
            st = GP_OK;
        }
    gp__mutex_unlock(&m->lock);
    return st;
}

gp_status gp_monitor_bottleneck(gp_monitor *m, size_t idx, gp_bottleneck *out)
{
    if (idx >= m->n_gpus)
        return GP_ENOENT;
    gp__mutex_lock(&m->lock);
    gp__mon_gpu *g = &m->gpus[idx];
    gp__mon_bottleneck_of(m, g, g->has_latest ? g->latest.ts : 0, out);
    gp__mutex_unlock(&m->lock);
    return GP_OK;
}

/* One suggestion: what was seen (msg), what to do (action) and the figures (evfmt). */
static void suggest(gp_suggestion *out, size_t max, size_t *n, const char *type, gp_severity sev,
                    int dev, const char *msg, const char *action, const char *evfmt, ...)
    GP_PRINTF(9, 10);
static void suggest(gp_suggestion *out, size_t max, size_t *n, const char *type, gp_severity sev,
                    int dev, const char *msg, const char *action, const char *evfmt, ...)
{
    if (*n >= max)
        return;
    gp_suggestion *s = &out[(*n)++];
    memset(s, 0, sizeof *s);
    snprintf(s->type, sizeof s->type, "%s", type);
    s->severity = sev;
    s->device = dev;
    snprintf(s->message, sizeof s->message, "%s", msg);
    snprintf(s->suggestion, sizeof s->suggestion, "%s", action);
    va_list ap;
    va_start(ap, evfmt);
    vsnprintf(s->evidence, sizeof s->evidence, evfmt, ap);
    va_end(ap);
}

/* The suggestion of a bottleneck class, if it has one. */
static void suggest_bottleneck(gp_suggestion *out, size_t max, size_t *n, int d,
                               const gp_bottleneck *b)
{
    switch (b->kind) {
    case GP_BN_THERMAL:
        suggest(out, max, n, "thermal", GP_SEV_WARNING, d, "Clocks are reduced for temperature.",
                "Check airflow, fan curves and ambient temperature.",
                "temp_max_c=%.0f thermal_throttle_share=%.2f", b->temp_max,
                b->thermal_throttle_share);
        break;
    case GP_BN_POWER:
        suggest(out, max, n, "power", GP_SEV_WARNING, d, "The GPU runs at its power limit.",
                "Raise the limit if allowed, or expect lower clocks under this load.",
                "power_ratio=%.2f power_throttle_share=%.2f", b->power_ratio,
                b->power_throttle_share);
        break;
    case GP_BN_MEMORY_CAPACITY:
        suggest(out, max, n, "memory_capacity", GP_SEV_WARNING, d, "GPU memory is almost full.",
                "Reduce the batch size, use activation checkpointing or mixed precision.",
                "mem_used_ratio=%.3f", b->mem_used_ratio);
        break;
    case GP_BN_IDLE:
        suggest(out, max, n, "idle", GP_SEV_INFO, d, "The GPU is mostly idle.",
                "The input pipeline or CPU work may be the bottleneck: more data-loader workers, "
                "pinned memory, prefetching.",
                "util_gpu_mean=%.1f samples=%u", b->util_gpu_mean, b->samples);
        break;
    case GP_BN_MEMORY_BANDWIDTH:
        suggest(out, max, n, "memory_bandwidth", GP_SEV_INFO, d, "Memory-bandwidth-bound.",
                "Fuse element-wise kernels, use lower precision or raise arithmetic intensity.",
                "util_mem_mean=%.1f util_gpu_mean=%.1f", b->util_mem_mean, b->util_gpu_mean);
        break;
    case GP_BN_COMPUTE:
        suggest(out, max, n, "compute", GP_SEV_INFO, d, "Compute-bound.",
                "Tensor cores (TF32/FP16/BF16) and kernel-level profiling are the next steps.",
                "util_gpu_mean=%.1f", b->util_gpu_mean);
        break;
    default:
        break;
    }
}

gp_status gp_monitor_suggestions(gp_monitor *m, gp_suggestion *out, size_t max, size_t *n)
{
    *n = 0;
    if (!m->cfg.enable_optimization_suggestions)
        return GP_OK;
    gp__mutex_lock(&m->lock);
    for (size_t i = 0; i < m->n_gpus; i++) {
        gp__mon_gpu *g = &m->gpus[i];
        int d = (int)i;
        if (g->id.lost) {
            suggest(out, max, n, "device_lost", GP_SEV_CRITICAL, d, "The GPU stopped answering.",
                    "Check dmesg for XID errors, reseat or replace it.", "gpu=%zu pci_bus_id=%s", i,
                    g->id.pci_bus_id);
            continue;
        }
        if (!g->has_latest)
            continue;
        gp_leak_result lr;
        gp_leak_detector_eval(&g->leak, &lr);
        if (lr.leak)
            suggest(out, max, n, "memory_leak", GP_SEV_CRITICAL, d, "GPU memory keeps growing.",
                    "Look for tensors or buffers kept alive across iterations (caches, lists of "
                    "losses, graphs retained for backward).",
                    "slope_mb_per_h=%.1f r2=%.3f window_min=%.1f time_to_full_h=%.2f",
                    lr.slope_mb_per_h, lr.r2, lr.window_s / 60,
                    lr.time_to_full_s >= 0 ? lr.time_to_full_s / 3600 : -1.0);
        gp_bottleneck b;
        gp__mon_bottleneck_of(m, g, g->latest.ts, &b);
        suggest_bottleneck(out, max, n, d, &b);
        if (gp_sample_has(&g->latest, GP_M_ECC_UNCORRECTED) &&
            g->latest.v[GP_M_ECC_UNCORRECTED] > 0)
            suggest(out, max, n, "ecc", GP_SEV_CRITICAL, d, "Uncorrected ECC errors.",
                    "Drain the GPU and run diagnostics.", "ecc_uncorrected=%.0f",
                    g->latest.v[GP_M_ECC_UNCORRECTED]);
        if (g->n_xid)
            suggest(out, max, n, "xid", GP_SEV_CRITICAL, d, "The driver reported XID errors.",
                    "Look them up in NVIDIA's XID catalogue.", "xid_codes=%zu first_code=%u",
                    g->n_xid, g->xid_code[0]);
    }
    gp__mutex_unlock(&m->lock);
    return GP_OK;
}

gp_status gp_monitor_components(gp_monitor *m, gp_component_stats *out, size_t max, size_t *n)
{
    *n = 0;
    gp__mutex_lock(&m->lock);
    for (int32_t id = 0; id < m->n_comps_seen && *n < max; id++) {
        const gp__mon_comp_stats *c = &m->comps[id];
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
    gp__mutex_unlock(&m->lock);
    return GP_OK;
}

const char *gp_health_status_name(gp_health_status s)
{
    static const char *const names[] = {[GP_HEALTH_OK] = "ok",
                                        [GP_HEALTH_DEGRADED] = "degraded",
                                        [GP_HEALTH_ERROR] = "error",
                                        [GP_HEALTH_UNAVAILABLE] = "unavailable"};
    return GP_NAME_OF(names, s, "error");
}

void gp_monitor_health_unavailable(const gp_monitor_config *cfg, const gp_error *why,
                                   gp_monitor_health *h)
{
    gp_monitor_config defaults;
    if (!cfg) {
        gp_monitor_config_init(&defaults);
        cfg = &defaults;
    }
    memset(h, 0, sizeof *h);
    h->status = GP_HEALTH_UNAVAILABLE;
    h->level = cfg->level;
    h->mode = cfg->mode;
    h->interval_ms = cfg->sampling_interval_ms;
    if (why && why->msg[0])
        h->last_error = *why;
    else
        gp_error_set(&h->last_error, GP_ENODRIVER, "no NVIDIA driver found");
}

void gp_monitor_get_health(gp_monitor *m, gp_monitor_health *h)
{
    memset(h, 0, sizeof *h);
    gp__mutex_lock(&m->lock);
    for (size_t i = 0; i < m->n_gpus; i++)
        h->gpus_lost += m->gpus[i].id.lost;
    h->gpus = m->n_gpus;
    h->status = m->n_gpus == 0 || h->gpus_lost == m->n_gpus ? GP_HEALTH_ERROR
                : h->gpus_lost || m->last_error.msg[0]      ? GP_HEALTH_DEGRADED
                                                            : GP_HEALTH_OK;
    h->samples_collected = m->samples_total;
    h->running = m->running;
    h->level = m->cfg.level;
    h->mode = m->cfg.mode;
    h->interval_ms = m->interval_ms;
    snprintf(h->driver_version, sizeof h->driver_version, "%s", m->driver);
    snprintf(h->nvml_library, sizeof h->nvml_library, "%s", m->nvml.lib_path);
    h->last_error = m->last_error;
    gp__mutex_unlock(&m->lock);
}
