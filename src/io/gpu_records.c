/* GPU activity records -> the trace model (see gpu_records.h). */
#include "io/gpu_records.h"

#include <stdio.h>
#include <string.h>

#include "core/util.h"

const char *gp__grec_copy_kind(unsigned kind)
{
    static const char *names[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                  "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
    return kind < GP_ARRAY_LEN(names) ? names[kind] : "Unknown";
}

const char *gp__grec_memory_kind(unsigned kind)
{
    static const char *names[] = {"Unknown", "Pageable", "Pinned",        "Device",
                                  "Array",   "Managed",  "Device Static", "Managed Static"};
    return kind < GP_ARRAY_LEN(names) ? names[kind] : "Unknown";
}

bool gp__grec_set_times(gp__grec_times *times, gp_event *ev, uint64_t start, uint64_t end)
{
    if (start == 0) {
        times->bad_time++;
        return false;
    }
    ev->ts = (gp_ns)start;
    if (end < start) {
        ev->dur = 0;
        ev->flags |= GP_EVF_DUR_CLAMPED;
        times->clamped++;
    } else {
        ev->dur = (gp_ns)(end - start);
    }
    return true;
}

const gp_device_props *gp__grec_find_device(const gp_trace *t, uint32_t id)
{
    for (size_t i = 0; i < t->n_devices; i++)
        if ((uint32_t)t->devices[i].id == id)
            return &t->devices[i];
    return NULL;
}

static gp_status intern(gp_trace *t, const char *s, gp_strid *out)
{
    return gp_trace_intern(t, s, strlen(s), out);
}

gp_status gp__grec_track(gp_trace *t, gp_strid cpu_process_name, gp_track_kind kind, int64_t pid,
                         int64_t tid, uint32_t *out)
{
    size_t before = t->n_tracks;
    gp_status s = gp_trace_track(t, kind, pid, tid, out);
    if (s != GP_OK || t->n_tracks == before)
        return s;
    gp_track *tr = &t->tracks[*out];
    char buf[48];
    if (kind == GP_TRACK_GPU_STREAM) {
        snprintf(buf, sizeof buf, "GPU %lld", (long long)pid);
        s = intern(t, buf, &tr->process_name);
        if (s == GP_OK && tid >= 0) {
            snprintf(buf, sizeof buf, "stream %lld", (long long)tid);
            s = intern(t, buf, &tr->name);
        }
    } else if (kind == GP_TRACK_CPU_THREAD) {
        tr->process_name = cpu_process_name;
    }
    return s;
}

gp_status gp__grec_add_on_stream(gp_trace *t, gp_event *ev, gp_gpu_info *gi, uint32_t device,
                                 int64_t stream)
{
    gp_status s = gp__grec_track(t, 0, GP_TRACK_GPU_STREAM, device, stream, &ev->track);
    if (s == GP_OK)
        s = gp_trace_add_gpu_info(t, gi, &ev->extra);
    if (s == GP_OK)
        s = gp_trace_add_event(t, ev);
    return s;
}

static double bandwidth_gbps(uint64_t bytes, gp_ns dur)
{
    return dur > 0 ? (double)bytes / (double)dur : 0.0; /* bytes per ns == GB/s */
}

/* A kernel's blocks and warps per SM, from the device's properties when t has them. */
static void occupancy(const gp_trace *t, const gp__grec_gpu_op *op, gp_gpu_info *gi)
{
    const gp_device_props *d = gp__grec_find_device(t, op->device);
    if (!d || d->num_sms <= 0)
        return;
    double blocks = (double)op->grid[0] * op->grid[1] * op->grid[2];
    int64_t threads = (int64_t)op->block[0] * op->block[1] * op->block[2];
    int64_t warp = d->warp_size > 0 ? d->warp_size : 32;
    int64_t warps_per_block = (threads + warp - 1) / warp;
    gi->blocks_per_sm = (float)(blocks / d->num_sms);
    gi->warps_per_sm = (float)(blocks * (double)warps_per_block / d->num_sms);
}

gp_status gp__grec_add_gpu_op(gp_trace *t, gp__grec_times *times, const gp__grec_gpu_op *op)
{
    gp_event ev = {0};
    if (!gp__grec_set_times(times, &ev, op->start, op->end))
        return GP_OK;
    ev.kind = op->kind;
    ev.correlation = op->correlation;
    ev.name = op->name;
    gp_status s = GP_OK;
    char name[96];
    if (op->kind == GP_EV_MEMCPY) {
        snprintf(name, sizeof name, "Memcpy %s (%s -> %s)", gp__grec_copy_kind(op->copy_kind),
                 gp__grec_memory_kind(op->src_kind), gp__grec_memory_kind(op->dst_kind));
        s = intern(t, name, &ev.name);
    } else if (op->kind == GP_EV_MEMSET) {
        snprintf(name, sizeof name, "Memset (%s)", gp__grec_memory_kind(op->dst_kind));
        s = intern(t, name, &ev.name);
    }
    if (s != GP_OK)
        return s;
    gp_gpu_info gi;
    gp_gpu_info_init(&gi);
    gi.device = (int32_t)op->device;
    gi.context = (int32_t)op->context;
    gi.stream = op->stream;
    if (op->kind == GP_EV_KERNEL) {
        for (int i = 0; i < 3; i++) {
            gi.grid[i] = op->grid[i];
            gi.block[i] = op->block[i];
        }
        gi.registers_per_thread = op->registers_per_thread;
        gi.shared_memory = op->shared_memory;
        occupancy(t, op, &gi);
    } else {
        gi.bytes = (int64_t)op->bytes;
        gi.bandwidth_gbps = bandwidth_gbps(op->bytes, ev.dur);
    }
    if (op->graph_id != 0) {
        gi.graph_id = op->graph_id;
        gi.graph_node_id = (int64_t)op->graph_node_id;
    }
    return gp__grec_add_on_stream(t, &ev, &gi, op->device, op->stream);
}
