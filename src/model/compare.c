/* Model equality for round-trip tests: compares content, not string ids or track creation order
 * details that carry no meaning. GP_EVF_DUR_CLAMPED is provenance (the source had a negative
 * duration) and is not compared. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprof/trace.h"

static bool why(gp_error *w, const char *fmt, ...) GP_PRINTF(2, 3);

/* Writes the first difference into w (status untouched) and returns false. */
static bool why(gp_error *w, const char *fmt, ...)
{
    if (w) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->msg, sizeof w->msg, fmt, ap);
        va_end(ap);
    }
    return false;
}

static bool str_eq(const gp_trace *a, gp_strid x, const gp_trace *b, gp_strid y)
{
    return strcmp(gp_trace_str(a, x), gp_trace_str(b, y)) == 0;
}

/* Equal, and a zero of the same sign: +0.0 is an absent float arg, -0.0 a 0 of the source. */
static bool same(double x, double y)
{
    return x == y && signbit(x) == signbit(y);
}

static bool ext_eq(const gp_trace *a, const gp_gpu_ext *x, const gp_trace *b, const gp_gpu_ext *y)
{
    return str_eq(a, x->sync_kind, b, y->sync_kind) && x->wait_on_stream == y->wait_on_stream &&
           x->wait_on_event_corr == y->wait_on_event_corr &&
           str_eq(a, x->collective, b, y->collective) && x->in_msg_nelems == y->in_msg_nelems &&
           x->out_msg_nelems == y->out_msg_nelems && x->group_size == y->group_size &&
           str_eq(a, x->dtype, b, y->dtype) && str_eq(a, x->pg_name, b, y->pg_name) &&
           str_eq(a, x->pg_desc, b, y->pg_desc) && str_eq(a, x->pg_ranks, b, y->pg_ranks);
}

/* Field by field, the ext records by content (their indexes may differ). */
static bool gpu_eq(const gp_trace *a, const gp_gpu_info *x, const gp_trace *b, const gp_gpu_info *y)
{
    return x->device == y->device && x->context == y->context && x->stream == y->stream &&
           memcmp(x->grid, y->grid, sizeof x->grid) == 0 &&
           memcmp(x->block, y->block, sizeof x->block) == 0 &&
           x->registers_per_thread == y->registers_per_thread &&
           x->shared_memory == y->shared_memory && same(x->blocks_per_sm, y->blocks_per_sm) &&
           same(x->warps_per_sm, y->warps_per_sm) && same(x->occupancy_pct, y->occupancy_pct) &&
           x->queued == y->queued && x->bytes == y->bytes &&
           same(x->bandwidth_gbps, y->bandwidth_gbps) && x->graph_id == y->graph_id &&
           x->graph_node_id == y->graph_node_id && str_eq(a, x->copy_kind, b, y->copy_kind) &&
           ext_eq(a, gp_gpu_info_ext(a, x), b, gp_gpu_info_ext(b, y));
}

static bool event_eq(const gp_trace *a, const gp_event *x, const gp_trace *b, const gp_event *y)
{
    const uint8_t mask = (uint8_t)~GP_EVF_DUR_CLAMPED;
    if (x->ts != y->ts || x->dur != y->dur || x->correlation != y->correlation ||
        x->external_id != y->external_id || x->kind != y->kind ||
        (x->flags & mask) != (y->flags & mask) || !str_eq(a, x->name, b, y->name))
        return false;
    const gp_gpu_info *gx = gp_event_gpu_info(a, x), *gy = gp_event_gpu_info(b, y);
    if ((gx == NULL) != (gy == NULL) || (gx && !gpu_eq(a, gx, b, gy)))
        return false;
    const gp_mem_info *mx = gp_event_mem_info(a, x), *my = gp_event_mem_info(b, y);
    if ((mx == NULL) != (my == NULL) || (mx && memcmp(mx, my, sizeof *mx) != 0))
        return false;
    const gp_py_info *px = gp_event_py_info(a, x), *py = gp_event_py_info(b, y);
    if ((px == NULL) != (py == NULL) || (px && memcmp(px, py, sizeof *px) != 0))
        return false;
    const char *ax = gp_event_args_json(a, x), *ay = gp_event_args_json(b, y);
    if ((ax == NULL) != (ay == NULL) || (ax && strcmp(ax, ay) != 0))
        return false;
    if ((x->kind == GP_EV_RUNTIME || x->kind == GP_EV_DRIVER || x->kind == GP_EV_CPU_OP) &&
        x->extra != y->extra)
        return false;
    if (x->kind == GP_EV_OTHER && !str_eq(a, x->extra, b, y->extra))
        return false;
    return true;
}

static bool track_id_eq(const gp_trace *a, const gp_track *x, const gp_trace *b, const gp_track *y)
{
    if (x->kind != y->kind)
        return false;
    if (x->pid_is_str != y->pid_is_str || x->tid_is_str != y->tid_is_str)
        return false;
    if (x->pid_is_str ? !str_eq(a, x->pid_str, b, y->pid_str) : x->pid != y->pid)
        return false;
    if (x->tid_is_str ? !str_eq(a, x->tid_str, b, y->tid_str) : x->tid != y->tid)
        return false;
    return x->device == y->device && x->stream == y->stream;
}

bool gp_trace_equal(const gp_trace *a, const gp_trace *b, gp_error *w)
{
    if (a->base_time_ns != b->base_time_ns)
        return why(w, "baseTimeNanoseconds %" PRId64 " vs %" PRId64, a->base_time_ns,
                   b->base_time_ns);
    if (a->dist.present != b->dist.present || a->dist.rank != b->dist.rank ||
        a->dist.world_size != b->dist.world_size || !str_eq(a, a->dist.backend, b, b->dist.backend))
        return why(w, "distributedInfo differs");
    if (a->n_devices != b->n_devices)
        return why(w, "%zu vs %zu devices", a->n_devices, b->n_devices);
    for (size_t i = 0; i < a->n_devices; i++) {
        gp_device_props x = a->devices[i], y = b->devices[i];
        bool names = str_eq(a, x.name, b, y.name);
        x.name = y.name = 0;
        if (!names || memcmp(&x, &y, sizeof x) != 0)
            return why(w, "device %zu differs", i);
    }
    if (a->n_tracks != b->n_tracks)
        return why(w, "%zu vs %zu tracks", a->n_tracks, b->n_tracks);
    /* Tracks match by identity, not position: the order tracks were created in carries no
     * meaning (a writer may emit counters or flows after the events that create other tracks). */
    uint32_t *map = malloc(a->n_tracks * sizeof *map + 1);
    if (!map)
        return why(w, "out of memory");
    bool ok = true;
    for (size_t i = 0; ok && i < a->n_tracks; i++) {
        const gp_track *x = &a->tracks[i], *y = NULL;
        for (size_t k = 0; k < b->n_tracks && !y; k++)
            if (track_id_eq(a, x, b, &b->tracks[k])) {
                y = &b->tracks[k];
                map[i] = (uint32_t)k;
            }
        if (!y) {
            ok = why(w, "track %zu (pid %" PRId64 ", tid %" PRId64 ") has no match", i, x->pid,
                     x->tid);
        } else if (!str_eq(a, x->name, b, y->name) ||
                   !str_eq(a, x->process_name, b, y->process_name)) {
            ok = why(w, "track %zu: names differ", i);
        } else if (x->n_events != y->n_events) {
            ok = why(w, "track %zu: %zu vs %zu events", i, x->n_events, y->n_events);
        } else {
            for (size_t j = 0; ok && j < x->n_events; j++)
                if (!event_eq(a, &x->events[j], b, &y->events[j]))
                    ok = why(w, "track %zu event %zu (\"%s\" at %" PRId64 " ns) differs", i, j,
                             gp_trace_str(a, x->events[j].name), x->events[j].ts);
        }
    }
    if (ok && a->n_counters != b->n_counters)
        ok = why(w, "%zu vs %zu counter samples", a->n_counters, b->n_counters);
    /* Counters are sorted by (track, ts), file order among equal times: compare each track's
     * block with the block of its match. */
    for (size_t i = 0; ok && i < a->n_counters;) {
        uint32_t ta = a->counters[i].track;
        size_t ae = i;
        while (ae < a->n_counters && a->counters[ae].track == ta)
            ae++;
        uint32_t tb = ta < a->n_tracks ? map[ta] : UINT32_MAX;
        size_t lo = 0, hi = b->n_counters;
        while (lo < hi) { /* first sample of track tb */
            size_t mid = lo + (hi - lo) / 2;
            if (b->counters[mid].track < tb)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t k = i; ok && k < ae; k++, lo++) {
            const gp_counter_sample *x = &a->counters[k], *y = &b->counters[lo];
            if (lo >= b->n_counters || y->track != tb || x->ts != y->ts || x->value != y->value ||
                !str_eq(a, x->series, b, y->series))
                ok = why(w, "counter sample %zu differs", k);
        }
        i = ae;
    }
    if (ok && a->n_flows != b->n_flows)
        ok = why(w, "%zu vs %zu flows", a->n_flows, b->n_flows);
    for (size_t i = 0; ok && i < a->n_flows; i++) {
        const gp_flow *x = &a->flows[i], *y = &b->flows[i];
        if (x->id != y->id || x->src_ts != y->src_ts || x->dst_ts != y->dst_ts ||
            x->src_track >= a->n_tracks || x->dst_track >= a->n_tracks ||
            map[x->src_track] != y->src_track || map[x->dst_track] != y->dst_track ||
            !str_eq(a, x->cat, b, y->cat))
            ok = why(w, "flow %zu differs", i);
    }
    free(map);
    return ok;
}
