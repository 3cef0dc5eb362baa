/* Committing one sample of one GPU (lock held): the ring, the latest sample and process list,
 * alerts, throttle events, leak detectors, bottleneck changes, component attribution and
 * profiling counters. Events are queued with gp__mon_emit and delivered after the lock is
 * released. See docs/internals/monitor.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "produce/monitor/monitor_internal.h"

/* ---- alerts and throttle events ------------------------------------------------------------ */

/* The alert figures of s: val[k] is meaningful when have[k]. */
static void alert_values(const gp_gpu_sample *s, double val[GP__MON_N_ALERT_KINDS],
                         bool have[GP__MON_N_ALERT_KINDS])
{
    /* metric, and the metric it is a percentage of (GP_M_COUNT: none, the value itself) */
    static const gp_metric figure[GP__MON_N_ALERT_KINDS][2] = {{GP_M_UTIL_GPU, GP_M_COUNT},
                                                               {GP_M_MEM_USED, GP_M_MEM_TOTAL},
                                                               {GP_M_TEMP, GP_M_COUNT},
                                                               {GP_M_POWER, GP_M_POWER_LIMIT},
                                                               {GP_M_UTIL_GPU, GP_M_COUNT}};
    for (int k = 0; k < GP__MON_N_ALERT_KINDS; k++) {
        gp_metric m = figure[k][0], of = figure[k][1];
        if (!gp_sample_has(s, m))
            continue;
        if (of == GP_M_COUNT) {
            val[k] = s->v[m];
            have[k] = true;
        } else if (gp_sample_has(s, of) && s->v[of] > 0) {
            val[k] = 100 * s->v[m] / s->v[of];
            have[k] = true;
        }
    }
}

#define ALERT_LOW 4 /* the low-utilization alert: fires at or below its threshold */

static const char *const units[GP__MON_N_ALERT_KINDS] = {"%", "% of memory", " C", "% of the limit",
                                                         "%"};

/* Queues the alert event of kind k (the condition held for the minimum duration). */
static void alert_fire(gp_monitor *m, gp__mon_gpu *g, const gp_gpu_sample *s, int k, double val,
                       double thr) GP_REQUIRES(m->lock)
{
    g->alert_active[k] = true;
    m->alerts_total[k]++;
    gp_severity sev = k == ALERT_LOW ? GP_SEV_INFO : GP_SEV_WARNING;
    if (k == 2 && gp_sample_has(s, GP_M_TEMP_SLOWDOWN) && val >= s->v[GP_M_TEMP_SLOWDOWN])
        sev = GP_SEV_CRITICAL;
    gp__mon_emit(m, GP_EVT_ALERT, sev, s->ts, (int)g->id.index, 0, gp__alert_kinds[k], val, thr,
                 "gpu%u %s %.1f%s %s %.1f%s for %.1f s", g->id.index, gp__alert_kinds[k], val,
                 units[k], k == ALERT_LOW ? "<=" : ">=", thr, units[k],
                 (double)(s->ts - g->alert_pending[k]) / 1e9);
}

static void alerts(gp_monitor *m, gp__mon_gpu *g, const gp_gpu_sample *s) GP_REQUIRES(m->lock)
{
    const gp_monitor_config *c = &m->cfg;
    double val[GP__MON_N_ALERT_KINDS],
        thr[GP__MON_N_ALERT_KINDS] = {c->utilization_threshold, c->memory_threshold,
                                      c->temperature_threshold, c->power_threshold,
                                      c->utilization_low_threshold};
    bool have[GP__MON_N_ALERT_KINDS] = {false};
    alert_values(s, val, have);
    gp_ns min_dur = (gp_ns)c->alert_min_duration_ms * 1000000;
    for (int k = 0; k < GP__MON_N_ALERT_KINDS; k++) {
        if (!have[k] || !(thr[k] > 0))
            continue;
        bool low = k == ALERT_LOW;
        bool over = low ? val[k] <= thr[k] : val[k] >= thr[k];
        double clear_at = low ? thr[k] + c->alert_hysteresis : thr[k] - c->alert_hysteresis;
        if (!g->alert_active[k]) {
            if (!over) {
                g->alert_is_pending[k] = false;
                continue;
            }
            if (!g->alert_is_pending[k]) {
                g->alert_pending[k] = s->ts;
                g->alert_is_pending[k] = true;
            }
            if (s->ts - g->alert_pending[k] >= min_dur)
                alert_fire(m, g, s, k, val[k], thr[k]);
        } else if (low ? val[k] > clear_at : val[k] < clear_at) {
            g->alert_active[k] = false;
            g->alert_is_pending[k] = false;
            gp__mon_emit(m, GP_EVT_ALERT_CLEARED, GP_SEV_INFO, s->ts, (int)g->id.index, 0,
                         gp__alert_kinds[k], val[k], thr[k], "gpu%u %s back to %.1f%s (%s %.1f%s)",
                         g->id.index, gp__alert_kinds[k], val[k], units[k], low ? "above" : "below",
                         clear_at, units[k]);
        }
    }
}

static void throttle_events(gp_monitor *m, gp__mon_gpu *g, const gp_gpu_sample *s)
    GP_REQUIRES(m->lock)
{
    if (!gp_sample_has(s, GP_M_THROTTLE))
        return;
    uint64_t bits = (uint64_t)s->v[GP_M_THROTTLE];
    uint64_t thermal = GP_THROTTLE_SW_THERMAL | GP_THROTTLE_HW_THERMAL | GP_THROTTLE_HW_SLOWDOWN;
    uint64_t power = GP_THROTTLE_SW_POWER_CAP | GP_THROTTLE_POWER_BRAKE;
    uint64_t fresh = bits & ~g->throttle_prev;
    g->throttle_prev = bits;
    if (fresh & thermal)
        gp__mon_emit(m, GP_EVT_THROTTLE, GP_SEV_WARNING, s->ts, (int)g->id.index, 0, "thermal",
                     (double)bits, NAN, "gpu%u clocks reduced for temperature (reasons 0x%llx)",
                     g->id.index, (unsigned long long)bits);
    if (fresh & power)
        gp__mon_emit(m, GP_EVT_THROTTLE, GP_SEV_WARNING, s->ts, (int)g->id.index, 0, "power",
                     (double)bits, NAN, "gpu%u clocks reduced by the power limit (reasons 0x%llx)",
                     g->id.index, (unsigned long long)bits);
}

/* ---- leak detectors ------------------------------------------------------------------------ */

static gp_ns newest_bucket(const gp_leak_detector *d)
{
    return d->count ? d->b_start[(d->head + d->count - 1) % GP_LEAK_BUCKETS] : -1;
}

static void leak_check(gp_monitor *m, gp__mon_gpu *g, gp_leak_detector *d, gp_leak_result *res,
                       gp_ns *last_eval, bool *reported, uint32_t pid, gp_ns ts, double used,
                       double total) GP_REQUIRES(m->lock)
{
    if (gp_leak_detector_add(d, ts, used, total))
        gp__mon_emit(m, GP_EVT_SPIKE, GP_SEV_INFO, ts, (int)g->id.index, pid,
                     pid ? "process" : "device", d->last_spike_mb, m->cfg.leak_spike_mb,
                     "gpu%u%s%.0u memory spike of %.0f MiB above the baseline", g->id.index,
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
        gp__mon_emit(
            m, GP_EVT_LEAK, GP_SEV_CRITICAL, ts, (int)g->id.index, pid, pid ? "process" : "device",
            res->slope_mb_per_h, m->cfg.leak_min_slope_mb_per_hour,
            "gpu%u%s%.0u memory grows %.0f MiB/h (R2 %.2f over %.1f min)%s", g->id.index,
            pid ? " pid " : "", pid, res->slope_mb_per_h, res->r2, res->window_s / 60, ttf);
    } else if (!res->leak && res->ready) {
        *reported = false;
    }
}

/* The tracked process pid of g, started when new (up to GP__MON_MAX_PROC_TRACKS); NULL when none.
 */
static gp__mon_proc_track *proc_track_of(gp_monitor *m, gp__mon_gpu *g, uint32_t pid)
{
    for (size_t i = 0; i < g->n_ptracks; i++)
        if (g->ptracks[i].pid == pid)
            return &g->ptracks[i];
    if (g->n_ptracks >= GP__MON_MAX_PROC_TRACKS)
        return NULL;
    gp__mon_proc_track *pt = &g->ptracks[g->n_ptracks++];
    memset(pt, 0, sizeof *pt);
    pt->pid = pid;
    pt->last_eval_bucket = -1;
    gp_leak_params lp = gp__mon_leak_params(&m->cfg);
    if (gp_leak_detector_init(&pt->leak, &lp) != GP_OK) {
        g->n_ptracks--;
        return NULL;
    }
    return pt;
}

/* Feeds the device and per-process leak detectors; drops the tracks of processes that exited. */
static void leak_detect(gp_monitor *m, gp__mon_gpu *g, const gp_gpu_sample *s) GP_REQUIRES(m->lock)
{
    double total = gp_sample_has(s, GP_M_MEM_TOTAL) ? s->v[GP_M_MEM_TOTAL] : 0;
    leak_check(m, g, &g->leak, &g->leak_result, &g->leak_last_eval_bucket, &g->leak_reported, 0,
               s->ts, s->v[GP_M_MEM_USED], total);
    for (size_t i = 0; i < g->n_ptracks; i++)
        g->ptracks[i].seen = false;
    for (size_t k = 0; k < g->n_procs; k++) {
        const gp_gpu_process *p = &g->procs[k];
        if (p->mem_bytes < 0)
            continue;
        gp__mon_proc_track *pt = proc_track_of(m, g, p->pid);
        if (!pt)
            continue;
        pt->seen = true;
        leak_check(m, g, &pt->leak, &pt->result, &pt->last_eval_bucket, &pt->leak_reported, p->pid,
                   s->ts, (double)p->mem_bytes, total);
    }
    for (size_t i = 0; i < g->n_ptracks;) /* processes that exited */
        if (!g->ptracks[i].seen)
            g->ptracks[i] = g->ptracks[--g->n_ptracks];
        else
            i++;
}

/* ---- bottlenecks ------------------------------------------------------------------------- */

void gp__mon_bottleneck_of(gp_monitor *m, const gp__mon_gpu *g, gp_ns now, gp_bottleneck *out)
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

/* Emits a bottleneck event when g's class changed (checked at most once a second). */
static void bottleneck_change(gp_monitor *m, gp__mon_gpu *g, const gp_gpu_sample *s)
    GP_REQUIRES(m->lock)
{
    if (s->ts - g->bn_last < 1000000000LL)
        return;
    g->bn_last = s->ts;
    gp_bottleneck b;
    gp__mon_bottleneck_of(m, g, s->ts, &b);
    if (b.kind == g->bn_prev || b.samples < 5)
        return;
    if (b.kind != GP_BN_UNKNOWN && b.kind != GP_BN_NONE)
        gp__mon_emit(m, GP_EVT_BOTTLENECK, b.kind == GP_BN_IDLE ? GP_SEV_INFO : GP_SEV_WARNING,
                     s->ts, (int)g->id.index, 0, gp_bottleneck_name(b.kind), b.confidence, NAN,
                     "gpu%u is %s (confidence %.2f over %u samples)", g->id.index,
                     gp_bottleneck_name(b.kind), b.confidence, b.samples);
    g->bn_prev = b.kind;
}

/* ---- committing ------------------------------------------------------------------------- */

/* Attributes the interval since g's previous sample to component comp. */
static void attribute(gp_monitor *m, const gp__mon_gpu *g, const gp_gpu_sample *s, int32_t comp)
    GP_REQUIRES(m->lock)
{
    if (comp < 0 || comp >= GP__MON_MAX_COMPONENTS || !g->has_latest)
        return;
    double dt = (double)(s->ts - g->latest.ts) / 1e9;
    if (!(dt > 0 && dt < 60))
        return;
    gp__mon_comp_stats *cs = &m->comps[comp];
    cs->samples++;
    cs->wall_s += dt;
    if (gp_sample_has(s, GP_M_UTIL_GPU))
        cs->busy_s += dt * s->v[GP_M_UTIL_GPU] / 100;
    if (gp_sample_has(s, GP_M_MEM_USED) && gp_sample_has(&g->latest, GP_M_MEM_USED))
        cs->growth += s->v[GP_M_MEM_USED] - g->latest.v[GP_M_MEM_USED];
    if (comp + 1 > m->n_comps_seen)
        m->n_comps_seen = comp + 1;
}

/* Appends s to g's ring: grows lazily up to max_samples, drops by age. */
static void ring_push(const gp_monitor_config *c, gp__mon_gpu *g, const gp_gpu_sample *s)
{
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
}

/* Publishes the process list read this round (swaps the two buffers). */
static void swap_procs(gp__mon_gpu *g)
{
    gp_gpu_process *tp = g->procs;
    size_t tc = g->cap_procs;
    g->procs = g->procs_next;
    g->n_procs = g->n_procs_next;
    g->cap_procs = g->cap_procs_next;
    g->procs_next = tp;
    g->cap_procs_next = tc;
    g->n_procs_next = 0;
}

/* Profiling mode: s as counter samples "gpu<N>.<metric>" on g's counter track. */
static void trace_counters(gp_monitor *m, gp__mon_gpu *g, const gp_gpu_sample *s)
    GP_REQUIRES(m->lock)
{
    if (g->trace_track == 0 &&
        gp_trace_track(m->trace, GP_TRACK_COUNTER, g->id.index, 0, &g->trace_track) != GP_OK)
        return;
    for (int k = 0; k < GP_M_COUNT; k++) {
        if (!gp_sample_has(s, k))
            continue;
        if (g->series[k] == 0) {
            char name[64];
            int len = snprintf(name, sizeof name, "gpu%u.%s", g->id.index, gp__metric_names[k]);
            if (gp_trace_intern(m->trace, name, (size_t)len, &g->series[k]) != GP_OK)
                continue;
        }
        gp_counter_sample cs = {
            .ts = s->ts, .value = s->v[k], .series = g->series[k], .track = g->trace_track};
        if (gp_trace_add_counter(m->trace, &cs) != GP_OK)
            gp__mon_set_last_error(m, "profiling: cannot add a counter sample (out of memory)");
    }
}

void gp__mon_commit(gp_monitor *m, gp__mon_gpu *g, gp_gpu_sample *s, int32_t comp)
{
    const gp_monitor_config *c = &m->cfg;
    attribute(m, g, s, comp);
    ring_push(c, g, s);
    g->latest = *s;
    g->has_latest = true;
    swap_procs(g);
    if (c->enable_alerts) {
        alerts(m, g, s);
        throttle_events(m, g, s);
    }
    if (c->enable_leak_detection && gp_sample_has(s, GP_M_MEM_USED))
        leak_detect(m, g, s);
    if (c->enable_bottleneck_detection)
        bottleneck_change(m, g, s);
    if (m->trace)
        trace_counters(m, g, s);
}
