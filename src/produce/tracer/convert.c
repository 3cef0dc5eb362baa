/* CUPTI activity record -> gp_trace conversion (see convert.h). */
#include "produce/tracer/convert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/demangle.h"
#include "io/gpu_records.h"

static gp_status intern(gp__tconv *c, const char *s, gp_strid *out)
{
    return gp_trace_intern(c->trace, s ? s : "", s ? strlen(s) : 0, out);
}

gp_status gp__tconv_init(gp__tconv *c, gp_trace *t, const gp__cupti *api)
{
    static const char *sync_names[5] = {"Unknown Sync", "Event Sync", "Stream Wait Event",
                                        "Stream Sync", "Context Sync"};
    memset(c, 0, sizeof *c);
    c->trace = t;
    c->api = api;
    c->free_marker = UINT32_MAX;
    gp_status s;
    if ((s = gp__imap_init(&c->kernel_names, 256)) != GP_OK ||
        (s = gp__imap_init(&c->api_names, 256)) != GP_OK ||
        (s = gp__imap_init(&c->ctx_device, 16)) != GP_OK ||
        (s = gp__imap_init(&c->open_markers, 256)) != GP_OK)
        goto fail;
    if ((s = intern(c, "[memory]", &c->s_memory)) != GP_OK ||
        (s = intern(c, "cuda_event", &c->s_cuda_event)) != GP_OK)
        goto fail;
    for (int i = 0; i < 5; i++)
        if ((s = intern(c, sync_names[i], &c->s_sync[i])) != GP_OK)
            goto fail;
    return GP_OK;
fail:
    gp__tconv_free(c);
    return s;
}

void gp__tconv_free(gp__tconv *c)
{
    gp__imap_free(&c->kernel_names);
    gp__imap_free(&c->api_names);
    gp__imap_free(&c->ctx_device);
    gp__imap_free(&c->open_markers);
    free(c->markers);
    c->markers = NULL;
    c->n_markers = c->cap_markers = 0;
}

size_t gp__tconv_open_ranges(const gp__tconv *c)
{
    size_t open = c->open_markers.has_min && c->open_markers.min_val != UINT64_MAX;
    for (size_t i = 0; i < c->open_markers.n_slots; i++)
        if (c->open_markers.keys[i] != INT64_MIN && c->open_markers.vals[i] != UINT64_MAX)
            open++;
    return open;
}

/* The time counts of a record mapping (io/gpu_records.h) added to the converter's stats. */
static void count_times(gp__tconv *c, const gp__grec_times *t)
{
    c->stats.bad_time += t->bad_time;
    c->stats.clamped += t->clamped;
}

/* Fills ev's time fields from a [start, end] pair; false when the record has no start time. */
static bool set_times(gp__tconv *c, gp_event *ev, uint64_t start, uint64_t end)
{
    gp__grec_times t = {0};
    bool ok = gp__grec_set_times(&t, ev, start, end);
    count_times(c, &t);
    return ok;
}

static int32_t device_of_context(const gp__tconv *c, uint32_t ctx)
{
    uint64_t dev;
    return gp__imap_get(&c->ctx_device, (int64_t)ctx, &dev) ? (int32_t)dev : 0;
}

/* Finds or creates a track with Kineto-style row names (io/gpu_records.h), the process name on CPU
 * rows when the converter has one. */
static gp_status track_of(gp__tconv *c, gp_track_kind kind, int64_t pid, int64_t tid, uint32_t *out)
{
    return gp__grec_track(c->trace, c->process_name, kind, pid, tid, out);
}

static gp_status kernel_name(gp__tconv *c, const char *name, gp_strid *out)
{
    uint64_t v;
    int64_t key = (int64_t)(uintptr_t)name;
    if (name && gp__imap_get(&c->kernel_names, key, &v)) {
        *out = (gp_strid)v;
        return GP_OK;
    }
    gp_status s;
    char *dem = gp__demangle(name);
    s = intern(c, dem ? dem : name, out);
    free(dem);
    if (s == GP_OK && name)
        s = gp__imap_put(&c->kernel_names, key, *out);
    return s;
}

/* Adds a kernel, copy or memset through the shared record mapping (io/gpu_records.h). */
static gp_status add_gpu_op(gp__tconv *c, const gp__grec_gpu_op *op)
{
    gp__grec_times t = {0};
    gp_status s = gp__grec_add_gpu_op(c->trace, &t, op);
    count_times(c, &t);
    return s;
}

static gp_status conv_kernel(gp__tconv *c, const CUpti_ActivityKernel10 *k)
{
    if (k->start == 0) { /* no time: counted, and the name is not interned */
        c->stats.bad_time++;
        return GP_OK;
    }
    gp__grec_gpu_op op = {.kind = GP_EV_KERNEL,
                          .start = k->start,
                          .end = k->end,
                          .correlation = k->correlationId,
                          .device = k->deviceId,
                          .context = k->contextId,
                          .stream = gp__grec_stream(k->streamId),
                          .grid = {k->gridX, k->gridY, k->gridZ},
                          .block = {k->blockX, k->blockY, k->blockZ},
                          .registers_per_thread = k->registersPerThread,
                          .shared_memory = k->staticSharedMemory + k->dynamicSharedMemory,
                          .graph_id = k->graphId,
                          .graph_node_id = k->graphNodeId};
    gp_status s = kernel_name(c, k->name, &op.name);
    if (s == GP_OK)
        s = add_gpu_op(c, &op);
    if (s == GP_OK)
        c->stats.kernels++;
    return s;
}

static gp_status copy_event(gp__tconv *c, uint64_t start, uint64_t end, uint32_t corr,
                            unsigned copy_kind, unsigned src, unsigned dst, uint64_t bytes,
                            uint32_t device, uint32_t ctx, uint32_t stream, uint32_t graph,
                            uint64_t node)
{
    gp__grec_gpu_op op = {.kind = GP_EV_MEMCPY,
                          .start = start,
                          .end = end,
                          .correlation = corr,
                          .device = device,
                          .context = ctx,
                          .stream = gp__grec_stream(stream),
                          .copy_kind = copy_kind,
                          .src_kind = src,
                          .dst_kind = dst,
                          .bytes = bytes,
                          .graph_id = graph,
                          .graph_node_id = node};
    gp_status s = add_gpu_op(c, &op);
    if (s == GP_OK && start != 0)
        c->stats.memcpys++;
    return s;
}

static gp_status conv_memset(gp__tconv *c, const CUpti_ActivityMemset4 *m)
{
    gp__grec_gpu_op op = {.kind = GP_EV_MEMSET,
                          .start = m->start,
                          .end = m->end,
                          .correlation = m->correlationId,
                          .device = m->deviceId,
                          .context = m->contextId,
                          .stream = gp__grec_stream(m->streamId),
                          .dst_kind = m->memoryKind,
                          .bytes = m->bytes,
                          .graph_id = m->graphId,
                          .graph_node_id = m->graphNodeId};
    gp_status s = add_gpu_op(c, &op);
    if (s == GP_OK && m->start != 0)
        c->stats.memsets++;
    return s;
}

/* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel". */
static size_t strip_version(const char *s)
{
    size_t n = strlen(s);
    const char *v = strstr(s, "_v");
    if (v && v[2] >= '0' && v[2] <= '9' && strspn(v + 2, "0123456789") == strlen(v + 2))
        n = (size_t)(v - s);
    return n;
}

static gp_status api_name(gp__tconv *c, CUpti_CallbackDomain domain, uint32_t cbid, gp_strid *out)
{
    uint64_t v;
    int64_t key = ((int64_t)domain << 32) | cbid;
    if (gp__imap_get(&c->api_names, key, &v)) {
        *out = (gp_strid)v;
        return GP_OK;
    }
    const char *name = NULL;
    char buf[48];
    gp_status s;
    if (c->api && c->api->GetCallbackName &&
        c->api->GetCallbackName(domain, cbid, &name) == CUPTI_SUCCESS && name && *name) {
        s = gp_trace_intern(c->trace, name, strip_version(name), out);
    } else {
        snprintf(buf, sizeof buf, "%s cbid %u",
                 domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "runtime" : "driver", cbid);
        s = intern(c, buf, out);
    }
    if (s == GP_OK)
        s = gp__imap_put(&c->api_names, key, *out);
    return s;
}

static gp_status conv_api(gp__tconv *c, const CUpti_ActivityAPI *a, bool runtime)
{
    gp_event ev = {0};
    if (!set_times(c, &ev, a->start, a->end))
        return GP_OK;
    ev.kind = runtime ? GP_EV_RUNTIME : GP_EV_DRIVER;
    ev.correlation = a->correlationId;
    gp_event_set_cbid(&ev, a->cbid);
    gp_status s = api_name(c, runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API,
                           a->cbid, &ev.name);
    if (s == GP_OK)
        s = track_of(c, GP_TRACK_CPU_THREAD, a->processId, a->threadId, &ev.track);
    if (s == GP_OK)
        s = gp_trace_add_event(c->trace, &ev);
    if (s == GP_OK)
        c->stats.api_calls++;
    return s;
}

static gp_status conv_sync(gp__tconv *c, const CUpti_ActivitySynchronization2 *y)
{
    gp_event ev = {0};
    if (!set_times(c, &ev, y->start, y->end))
        return GP_OK;
    unsigned type = (unsigned)y->type <= 4 ? (unsigned)y->type : 0;
    ev.kind = GP_EV_SYNC;
    ev.name = c->s_sync[type];
    ev.correlation = y->correlationId;
    int32_t dev = device_of_context(c, y->contextId);
    gp_gpu_info gi;
    gp_gpu_info_init(&gi);
    gi.device = dev;
    gi.context = y->contextId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? -1 : (int32_t)y->contextId;
    /* Event and context syncs are not tied to one stream: Kineto writes stream -1. */
    gi.stream = type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE ||
                        type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT
                    ? gp__grec_stream(y->streamId)
                    : -1;
    gp_gpu_ext x;
    gp_gpu_ext_init(&x);
    x.sync_kind = ev.name;
    gp_status s = gp_trace_add_gpu_ext(c->trace, &x, &gi.ext);
    if (s != GP_OK)
        return s;
    c->stats.syncs++;
    return gp__grec_add_on_stream(c->trace, &ev, &gi, (uint32_t)dev, gi.stream);
}

static gp_status conv_cuda_event(gp__tconv *c, const CUpti_ActivityCudaEvent2 *e)
{
    if (e->deviceTimestamp == 0) { /* device timestamps not enabled or not supported */
        c->stats.bad_time++;
        return GP_OK;
    }
    gp_event ev = {0};
    ev.ts = (gp_ns)e->deviceTimestamp;
    ev.kind = GP_EV_OTHER;
    gp_event_set_category(&ev, c->s_cuda_event);
    ev.correlation = e->correlationId;
    gp_status s = intern(c, "cudaEventRecord", &ev.name);
    if (s == GP_OK)
        s = track_of(c, GP_TRACK_GPU_STREAM, e->deviceId, gp__grec_stream(e->streamId), &ev.track);
    if (s == GP_OK)
        s = gp_trace_add_event(c->trace, &ev);
    if (s == GP_OK)
        c->stats.events++;
    return s;
}

static gp_status marker_track(gp__tconv *c, const CUpti_ActivityMarker2 *m, uint32_t *track)
{
    int64_t pid = m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
                          m->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS
                      ? m->objectId.pt.processId
                      : 0;
    int64_t tid = m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m->objectId.pt.threadId : pid;
    return track_of(c, GP_TRACK_CPU_THREAD, pid, tid, track);
}

static gp_status marker_name(gp__tconv *c, const CUpti_ActivityMarker2 *m, gp_strid *out)
{
    if (m->domain && *m->domain) {
        char buf[512];
        snprintf(buf, sizeof buf, "%s: %s", m->domain, m->name ? m->name : "");
        return intern(c, buf, out);
    }
    return intern(c, m->name, out);
}

static gp_status conv_marker(gp__tconv *c, const CUpti_ActivityMarker2 *m)
{
    gp_status s;
    uint64_t slot;
    if (m->timestamp == 0) {
        c->stats.bad_time++;
        return GP_OK;
    }
    if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
        gp_event ev = {.ts = (gp_ns)m->timestamp, .kind = GP_EV_INSTANT, .flags = GP_EVF_INSTANT};
        if ((s = marker_name(c, m, &ev.name)) != GP_OK ||
            (s = marker_track(c, m, &ev.track)) != GP_OK ||
            (s = gp_trace_add_event(c->trace, &ev)) != GP_OK)
            return s;
        c->stats.markers++;
        return GP_OK;
    }
    if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
        gp__tconv_marker *mk;
        uint32_t idx;
        if (c->free_marker != UINT32_MAX) {
            idx = c->free_marker;
            mk = &c->markers[idx];
            c->free_marker = mk->next_free;
        } else {
            mk = GP_PUSH(c->markers, c->n_markers, c->cap_markers);
            if (!mk)
                return GP_ENOMEM;
            idx = (uint32_t)(c->n_markers - 1);
        }
        mk->ts = (gp_ns)m->timestamp;
        if ((s = marker_name(c, m, &mk->name)) != GP_OK ||
            (s = marker_track(c, m, &mk->track)) != GP_OK)
            return s;
        return gp__imap_put(&c->open_markers, m->id, idx);
    }
    if ((m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) &&
        gp__imap_get(&c->open_markers, m->id, &slot) && slot != UINT64_MAX) {
        gp__tconv_marker *mk = &c->markers[slot];
        gp_event ev = {.ts = mk->ts, .name = mk->name, .track = mk->track, .kind = GP_EV_RANGE};
        if ((gp_ns)m->timestamp >= mk->ts) {
            ev.dur = (gp_ns)m->timestamp - mk->ts;
        } else {
            ev.flags |= GP_EVF_DUR_CLAMPED;
            c->stats.clamped++;
        }
        if ((s = gp_trace_add_event(c->trace, &ev)) != GP_OK)
            return s;
        if ((s = gp__imap_put(&c->open_markers, m->id, UINT64_MAX)) != GP_OK)
            return s;
        mk->next_free = c->free_marker;
        c->free_marker = (uint32_t)slot;
        c->stats.markers++;
        return GP_OK;
    }
    c->stats.ignored++; /* an end without a start, or sync-object markers */
    return GP_OK;
}

static gp_status conv_memory(gp__tconv *c, const CUpti_ActivityMemory4 *m)
{
    if (m->timestamp == 0) {
        c->stats.bad_time++;
        return GP_OK;
    }
    bool alloc = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    if (!alloc && m->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) {
        c->stats.ignored++;
        return GP_OK;
    }
    gp_mem_info mi = {0};
    mi.addr = (int64_t)m->address;
    mi.bytes = alloc ? (int64_t)m->bytes : -(int64_t)m->bytes;
    mi.device_type = 1; /* CUDA, as Kineto writes it */
    mi.device_id = (int32_t)m->deviceId;
    mi.total_reserved = -1;
    mi.total_allocated = -1;
    if (m->deviceId < GP_ARRAY_LEN(c->mem_total)) {
        c->mem_total[m->deviceId] += mi.bytes;
        mi.total_allocated = c->mem_total[m->deviceId];
    }
    gp_event ev = {.ts = (gp_ns)m->timestamp,
                   .kind = GP_EV_MEMORY,
                   .flags = GP_EVF_INSTANT,
                   .name = c->s_memory,
                   .correlation = m->correlationId};
    gp_status s = gp_trace_add_mem_info(c->trace, &mi, &ev.extra);
    if (s == GP_OK) /* no thread id in the record: the process's main-thread row */
        s = track_of(c, GP_TRACK_CPU_THREAD, m->processId, m->processId, &ev.track);
    if (s == GP_OK)
        s = gp_trace_add_event(c->trace, &ev);
    if (s == GP_OK)
        c->stats.memory++;
    return s;
}

static gp_status conv_memory_pool(gp__tconv *c, const CUpti_ActivityMemoryPool3 *p)
{
    if (p->timestamp == 0) {
        c->stats.bad_time++;
        return GP_OK;
    }
    char series[64];
    snprintf(series, sizeof series, "gpu%u.pool_utilized_bytes", p->deviceId);
    gp_counter_sample cs = {.ts = (gp_ns)p->timestamp, .value = (double)p->utilizedSize};
    gp_status s = intern(c, series, &cs.series);
    if (s == GP_OK)
        s = gp_trace_track(c->trace, GP_TRACK_COUNTER, p->processId, p->deviceId, &cs.track);
    if (s == GP_OK)
        s = gp_trace_add_counter(c->trace, &cs);
    if (s == GP_OK)
        c->stats.memory++;
    return s;
}

static const char *overhead_name(unsigned kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER:
        return "Driver Compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH:
        return "Buffer Flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION:
        return "Instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE:
        return "Resource";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING:
        return "Runtime Triggered Module Loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING:
        return "Lazy Function Loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL:
        return "Command Buffer Full";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST:
        return "Activity Buffer Request";
    case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT:
        return "UVM Activity Init";
    default:
        return "Unknown Overhead";
    }
}

static gp_status conv_overhead(gp__tconv *c, const CUpti_ActivityOverhead3 *o)
{
    gp_event ev = {0};
    if (!set_times(c, &ev, o->start, o->end))
        return GP_OK;
    ev.kind = GP_EV_OVERHEAD;
    ev.correlation = o->correlationId;
    int64_t pid = 0, tid = 0;
    if (o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
        o->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS) {
        pid = o->objectId.pt.processId;
        tid = o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? o->objectId.pt.threadId : pid;
    }
    gp_status s = intern(c, overhead_name((unsigned)o->overheadKind), &ev.name);
    if (s == GP_OK)
        s = track_of(c, GP_TRACK_CPU_THREAD, pid, tid, &ev.track);
    if (s == GP_OK)
        s = gp_trace_add_event(c->trace, &ev);
    if (s == GP_OK)
        c->stats.overhead++;
    return s;
}

static gp_status conv_device(gp__tconv *c, const CUpti_ActivityDevice5 *d)
{
    if (gp__grec_find_device(c->trace, d->id))
        return GP_OK;
    gp_device_props p = {0};
    p.id = (int32_t)d->id;
    gp_status s = intern(c, d->name, &p.name);
    if (s != GP_OK)
        return s;
    p.total_global_mem = (int64_t)d->globalMemorySize;
    p.compute_major = (int32_t)d->computeCapabilityMajor;
    p.compute_minor = (int32_t)d->computeCapabilityMinor;
    p.num_sms = (int32_t)d->numMultiprocessors;
    p.max_threads_per_block = (int32_t)d->maxThreadsPerBlock;
    p.max_threads_per_sm = (int32_t)(d->maxWarpsPerMultiprocessor * d->numThreadsPerWarp);
    p.regs_per_block = (int32_t)d->maxRegistersPerBlock;
    p.regs_per_sm = (int32_t)d->maxRegistersPerMultiprocessor;
    p.warp_size = (int32_t)d->numThreadsPerWarp;
    p.shared_mem_per_block = d->maxSharedMemoryPerBlock;
    p.shared_mem_per_sm = d->maxSharedMemoryPerMultiprocessor;
    p.shared_mem_per_block_optin = -1;
    c->stats.meta++;
    return gp_trace_add_device(c->trace, &p);
}

gp_status gp__tconv_record(gp__tconv *c, const CUpti_Activity *rec)
{
    c->stats.records++;
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return conv_kernel(c, (const CUpti_ActivityKernel10 *)rec);
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)rec;
        return copy_event(c, m->start, m->end, m->correlationId, m->copyKind, m->srcKind,
                          m->dstKind, m->bytes, m->deviceId, m->contextId, m->streamId, m->graphId,
                          m->graphNodeId);
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
        const CUpti_ActivityMemcpyPtoP4 *m = (const CUpti_ActivityMemcpyPtoP4 *)rec;
        return copy_event(c, m->start, m->end, m->correlationId, m->copyKind, m->srcKind,
                          m->dstKind, m->bytes, m->deviceId, m->contextId, m->streamId, m->graphId,
                          m->graphNodeId);
    }
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return conv_memset(c, (const CUpti_ActivityMemset4 *)rec);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
        return conv_api(c, (const CUpti_ActivityAPI *)rec, true);
    case CUPTI_ACTIVITY_KIND_DRIVER:
        return conv_api(c, (const CUpti_ActivityAPI *)rec, false);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        return conv_sync(c, (const CUpti_ActivitySynchronization2 *)rec);
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
        return conv_cuda_event(c, (const CUpti_ActivityCudaEvent2 *)rec);
    case CUPTI_ACTIVITY_KIND_MARKER:
        return conv_marker(c, (const CUpti_ActivityMarker2 *)rec);
    case CUPTI_ACTIVITY_KIND_MEMORY2:
        return conv_memory(c, (const CUpti_ActivityMemory4 *)rec);
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
        return conv_memory_pool(c, (const CUpti_ActivityMemoryPool3 *)rec);
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
        return conv_overhead(c, (const CUpti_ActivityOverhead3 *)rec);
    case CUPTI_ACTIVITY_KIND_DEVICE:
        return conv_device(c, (const CUpti_ActivityDevice5 *)rec);
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
        const CUpti_ActivityContext3 *x = (const CUpti_ActivityContext3 *)rec;
        c->stats.meta++;
        return gp__imap_put(&c->ctx_device, x->contextId, x->deviceId);
    }
    case CUPTI_ACTIVITY_KIND_MARKER_DATA:
    case CUPTI_ACTIVITY_KIND_NAME:
        c->stats.meta++;
        return GP_OK;
    default:
        c->stats.ignored++;
        return GP_OK;
    }
}
