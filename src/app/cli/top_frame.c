/* gpuprof top's data side: the monitor's figures gathered into a frame (top_frame.h). */
#include "app/cli/top_frame.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void on_event(const gp_monitor_event *ev, void *ctx)
{
    gp__top_data *d = ctx;
    gp__mutex_lock(&d->ev_lock);
    d->ev_ring[d->ev_count % GP__TOP_EVENTS] = *ev;
    d->ev_count++;
    gp__mutex_unlock(&d->ev_lock);
}

gp_status gp__top_data_init(gp__top_data *d, gp_monitor *mon, uint64_t gpu_mask,
                            uint32_t interval_ms)
{
    memset(d, 0, sizeof *d);
    d->mon = mon;
    d->gpu_mask = gpu_mask;
    d->interval_ms = interval_ms;
    gp__mutex_init(&d->ev_lock);
    size_t n = gp_monitor_device_count(mon);
    d->gpus = calloc(n ? n : 1, sizeof *d->gpus);
    d->procs = calloc(GP__TOP_PROCS, sizeof *d->procs);
    d->hist = calloc(GP_TOP_HISTORY, sizeof *d->hist);
    if (!d->gpus || !d->procs || !d->hist || gp_host_procs_create(&d->hp) != GP_OK ||
        gp_monitor_add_listener(mon, on_event, d) != GP_OK) {
        gp__top_data_free(d);
        return GP_ENOMEM;
    }
    return GP_OK;
}

void gp__top_data_free(gp__top_data *d)
{
    free(d->gpus);
    free(d->procs);
    free(d->hist);
    gp_host_procs_free(d->hp);
    gp__mutex_destroy(&d->ev_lock);
    memset(d, 0, sizeof *d);
}

static bool shown(const gp__top_data *d, size_t idx)
{
    return idx < 64 ? (d->gpu_mask >> idx) & 1u : false;
}

static void gather_gpu(gp__top_data *d, size_t idx, gp_top_gpu *g)
{
    memset(g, 0, sizeof *g);
    if (gp_monitor_device(d->mon, idx, &g->id) != GP_OK)
        return;
    g->have = gp_monitor_latest(d->mon, idx, &g->s) == GP_OK;
    size_t n = gp_monitor_history(d->mon, idx, d->hist, GP_TOP_HISTORY);
    for (size_t i = 0; i < n; i++) {
        const gp_gpu_sample *s = &d->hist[i];
        g->util[i] = gp_sample_has(s, GP_M_UTIL_GPU) ? (float)s->v[GP_M_UTIL_GPU] : NAN;
        bool mem = gp_sample_has(s, GP_M_MEM_USED) && gp_sample_has(s, GP_M_MEM_TOTAL) &&
                   s->v[GP_M_MEM_TOTAL] > 0;
        g->mem[i] = mem ? (float)(100.0 * s->v[GP_M_MEM_USED] / s->v[GP_M_MEM_TOTAL]) : NAN;
    }
    g->n_hist = n;
    if (gp_monitor_leak(d->mon, idx, &g->leak) != GP_OK)
        memset(&g->leak, 0, sizeof g->leak);
    if (gp_monitor_bottleneck(d->mon, idx, &g->bn) != GP_OK)
        g->bn.kind = GP_BN_UNKNOWN;
    uint32_t codes[32];
    uint64_t counts[32];
    size_t nx = gp_monitor_xid_counts(d->mon, idx, codes, counts, 32);
    for (size_t i = 0; i < nx && i < 32; i++)
        g->xid_total += counts[i];
}

void gp__top_gather(gp__top_data *d, gp_top_frame *f)
{
    size_t n = gp_monitor_device_count(d->mon);
    d->n_gpus = 0;
    for (size_t i = 0; i < n; i++)
        if (shown(d, i))
            gather_gpu(d, i, &d->gpus[d->n_gpus++]);
    size_t np = 0;
    if (gp_monitor_process_rows(d->mon, d->hp, d->procs, GP__TOP_PROCS, &np) != GP_OK)
        np = 0;
    d->n_procs = 0;
    for (size_t i = 0; i < np; i++)
        if (shown(d, d->procs[i].gpu))
            d->procs[d->n_procs++] = d->procs[i];
    gp__mutex_lock(&d->ev_lock);
    size_t ne = d->ev_count < GP__TOP_EVENTS ? d->ev_count : GP__TOP_EVENTS;
    for (size_t i = 0; i < ne; i++)
        d->ev_copy[i] = d->ev_ring[(d->ev_count - ne + i) % GP__TOP_EVENTS];
    gp__mutex_unlock(&d->ev_lock);
    *f = (gp_top_frame){.gpus = d->gpus,
                        .n_gpus = d->n_gpus,
                        .procs = d->procs,
                        .n_procs = d->n_procs,
                        .events = d->ev_copy,
                        .n_events = ne,
                        .interval_ms = d->interval_ms};
    gp_monitor_get_health(d->mon, &f->health);
}
