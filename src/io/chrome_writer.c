/* Chrome trace JSON writer, Kineto-compatible (HTA, Perfetto, chrome://tracing, gpuprof read it).
 *
 * Layout: schemaVersion, deviceProperties, distributedInfo (with `"rank": N` — HTA finds the rank
 * with the regex "rank":\s+(\d+)), verbatim metadata, displayTimeUnit, baseTimeNanoseconds, then
 * traceEvents: track metadata (process_name, thread_name, thread_sort_index), every track's events,
 * ac2g flow pairs for each launch whose correlation id matches GPU work, other flows, counters.
 * Times are µs with exactly three decimals relative to baseTimeNanoseconds, written from int64 ns
 * without floating point. */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "core/atomic_file.h"
#include "core/imap.h"
#include "core/json_writer.h"
#include "core/msort.h"
#include "core/util.h"
#include "gpuprof/trace.h"
#include "io/kineto_events.h"

static const char *cat_of(const gp_trace *t, const gp_event *ev)
{
    switch ((gp_event_kind)ev->kind) {
    case GP_EV_MEMORY:
        return "cpu_instant_event";
    case GP_EV_INSTANT:
        return NULL;
    case GP_EV_OTHER:
        return gp_event_category(ev) ? gp_trace_str(t, gp_event_category(ev)) : NULL;
    default:
        return gp_event_kind_name((gp_event_kind)ev->kind);
    }
}

static void write_pid_tid(gp__jw *w, const gp_trace *t, const gp_track *tr)
{
    gp__jw_key(w, "pid");
    if (tr->pid_is_str)
        gp__jw_str(w, gp_trace_str(t, tr->pid_str));
    else
        gp__jw_int(w, tr->pid);
    gp__jw_key(w, "tid");
    if (tr->tid_is_str)
        gp__jw_str(w, gp_trace_str(t, tr->tid_str));
    else
        gp__jw_int(w, tr->tid);
}

static void kv_int_if(gp__jw *w, const char *k, int64_t v)
{
    if (v != -1)
        gp__jw_kv_int(w, k, v);
}

static void kv_str_if(gp__jw *w, const gp_trace *t, const char *k, gp_strid id)
{
    if (id)
        gp__jw_kv_str(w, k, gp_trace_str(t, id));
}

/* A float arg of the reader: absent is +0.0, a 0 of the source -0.0 (written as 0). */
static bool float_present(double v)
{
    return v != 0 || signbit(v);
}

static void kv_float_if(gp__jw *w, const char *k, double v)
{
    if (float_present(v))
        gp__jw_kv_double(w, k, v == 0 ? 0.0 : v);
}

/* A float field (stored in 32 bits) as Kineto writes it, 6 decimals (trailing zeros dropped),
 * when that reads back to the same float, else with the fewest digits that do: Kineto's
 * "47.515152" stays 47.515152 (not the float's 47.515151977539062) and read -> write -> read is
 * exact (issue 38 defect 5). */
static void kv_f32_if(gp__jw *w, const char *k, float v)
{
    if (!float_present(v))
        return;
    double d = v == 0 ? 0.0 : (double)v;
    char tmp[64];
    int n = 0;
    if (fabs(d) < 1e9) {
        n = snprintf(tmp, sizeof tmp, "%.6f", d);
        while (tmp[n - 1] == '0')
            n--;
        if (tmp[n - 1] == '.')
            n--;
        tmp[n] = '\0';
    }
    for (int prec = 6; prec <= 9 && (n == 0 || (float)strtod(tmp, NULL) != v); prec++)
        n = snprintf(tmp, sizeof tmp, "%.*g", prec, d);
    gp__jw_key(w, k);
    gp__jw_raw(w, tmp, (size_t)n);
}

static void dim3(gp__jw *w, const char *k, const int32_t d[3])
{
    if (d[0] == -1 && d[1] == -1 && d[2] == -1)
        return;
    gp__jw_key(w, k);
    gp__jw_arr_begin(w);
    for (int i = 0; i < 3; i++)
        gp__jw_int(w, d[i]);
    gp__jw_arr_end(w);
}

/* The critical events of an overlay, sorted by address (NULL: none). */
typedef struct marks_index {
    const gp_event **ev;
    size_t n;
} marks_index;

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (const gp_event *const *)a,
              y = (uintptr_t) * (const gp_event *const *)b;
    return (x > y) - (x < y);
}

static bool is_critical(const marks_index *mi, const gp_event *ev)
{
    size_t lo = 0, hi = mi ? mi->n : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)mi->ev[mid] < (uintptr_t)ev)
            lo = mid + 1;
        else
            hi = mid;
    }
    return mi && lo < mi->n && mi->ev[lo] == ev;
}

static void write_args(gp__jw *w, const gp_trace *t, const gp_event *ev, bool critical)
{
    gp_event_kind kind = (gp_event_kind)ev->kind;
    if (kind == GP_EV_RANGE || kind == GP_EV_INSTANT) {
        const char *json = gp_event_args_json(t, ev);
        if (json && critical) { /* {"a":1} -> {"a":1,"critical":1} */
            size_t n = strlen(json);
            while (n > 0 && json[n - 1] != '}')
                n--;
            bool empty = true;
            for (size_t i = 1; n > 0 && i + 1 < n; i++)
                empty &= json[i] == ' ' || json[i] == '\n' || json[i] == '\t' || json[i] == '\r';
            gp__jw_key(w, "args");
            gp__jw_raw(w, json, n > 0 ? n - 1 : 0);
            gp__jw_text(w, empty ? "\"critical\":1}" : ",\"critical\":1}", empty ? 13 : 14);
        } else if (json) {
            gp__jw_key(w, "args");
            gp__jw_raw(w, json, strlen(json));
        } else if (critical) {
            gp__jw_key(w, "args");
            gp__jw_obj_begin(w);
            gp__jw_kv_int(w, "critical", 1);
            gp__jw_obj_end(w);
        }
        return;
    }
    gp__jw_key(w, "args");
    gp__jw_obj_begin(w);
    if (critical)
        gp__jw_kv_int(w, "critical", 1);
    if (ev->external_id)
        gp__jw_kv_int(w, "External id", ev->external_id);
    const gp_gpu_info *g = gp_event_gpu_info(t, ev);
    if (g) {
        gp__jw_kv_int(w, "device", g->device);
        kv_int_if(w, "context", g->context);
        if (!(ev->flags & GP_EVF_STREAM_FROM_TID))
            gp__jw_kv_int(w, "stream", g->stream);
        if (ev->correlation)
            gp__jw_kv_int(w, "correlation", ev->correlation);
        kv_int_if(w, "queued", g->queued);
        kv_int_if(w, "registers per thread", g->registers_per_thread);
        kv_int_if(w, "shared memory", g->shared_memory);
        kv_f32_if(w, "blocks per SM", g->blocks_per_sm);
        kv_f32_if(w, "warps per SM", g->warps_per_sm);
        dim3(w, "grid", g->grid);
        dim3(w, "block", g->block);
        kv_f32_if(w, "est. achieved occupancy %", g->occupancy_pct);
        kv_int_if(w, "bytes", g->bytes);
        kv_float_if(w, "memory bandwidth (GB/s)", g->bandwidth_gbps);
        kv_int_if(w, "graph id", g->graph_id);
        kv_int_if(w, "graph node id", g->graph_node_id);
        const gp_gpu_ext *x = gp_gpu_info_ext(t, g);
        kv_str_if(w, t, "cuda_sync_kind", x->sync_kind);
        kv_int_if(w, "wait_on_stream", x->wait_on_stream);
        kv_int_if(w, "wait_on_cuda_event_record_corr_id", x->wait_on_event_corr);
        kv_str_if(w, t, "Collective name", x->collective);
        kv_int_if(w, "In msg nelems", x->in_msg_nelems);
        kv_int_if(w, "Out msg nelems", x->out_msg_nelems);
        kv_int_if(w, "Group size", x->group_size);
        kv_str_if(w, t, "dtype", x->dtype);
        kv_str_if(w, t, "kind", g->copy_kind);
        kv_str_if(w, t, "Process Group Name", x->pg_name);
        kv_str_if(w, t, "Process Group Description", x->pg_desc);
        kv_str_if(w, t, "Process Group Ranks", x->pg_ranks);
    } else if (ev->correlation) {
        gp__jw_kv_int(w, "correlation", ev->correlation);
    }
    if (gp_event_cbid(ev) >= 0)
        gp__jw_kv_int(w, "cbid", gp_event_cbid(ev));
    if (gp_event_cpu_stream(ev) >= 0)
        gp__jw_kv_int(w, "stream", gp_event_cpu_stream(ev));
    const gp_py_info *py = gp_event_py_info(t, ev);
    if (py) {
        gp__jw_kv_int(w, "Python id", py->id);
        gp__jw_key(w, "Python parent id");
        if (py->parent_id == -1)
            gp__jw_null(w);
        else
            gp__jw_int(w, py->parent_id);
    }
    const gp_mem_info *m = gp_event_mem_info(t, ev);
    if (m) {
        gp__jw_kv_int(w, "Device Type", m->device_type);
        gp__jw_kv_int(w, "Device Id", m->device_id);
        gp__jw_kv_int(w, "Addr", m->addr);
        gp__jw_kv_int(w, "Bytes", m->bytes);
        kv_int_if(w, "Total Allocated", m->total_allocated);
        kv_int_if(w, "Total Reserved", m->total_reserved);
    }
    gp__jw_obj_end(w);
}

/* Whether tr's pid is one of the legacy autograd-profiler's: the reader takes an "X" event
 * without "cat" there for an operator or a kernel of that format, whatever it was. */
static bool legacy_pid_track(const gp_trace *t, const gp_track *tr)
{
    if (!tr->pid_is_str)
        return false;
    const char *pid = gp_trace_str(t, tr->pid_str);
    return gp__kineto_legacy_pid_name(pid, strlen(pid)) != GP__LEGACY_NONE;
}

static void write_event(gp__jw *w, const gp_trace *t, const gp_track *tr, const gp_event *ev,
                        const marks_index *mi)
{
    gp__jw_obj_begin(w);
    bool instant = ev->flags & GP_EVF_INSTANT;
    gp__jw_kv_str(w, "ph", instant ? "i" : "X");
    const char *cat = cat_of(t, ev);
    if (cat)
        gp__jw_kv_str(w, "cat", cat);
    else if (!instant && legacy_pid_track(t, tr))
        gp__jw_kv_str(w, "cat", ""); /* read back as it is, not as a legacy operator or kernel */
    gp__jw_kv_str(w, "name", gp_trace_str(t, ev->name));
    write_pid_tid(w, t, tr);
    gp__jw_key(w, "ts");
    gp__jw_ns_as_us(w, ev->ts - t->base_time_ns);
    if (instant) {
        gp__jw_kv_str(w, "s", "t");
    } else if (!(ev->flags & GP_EVF_NO_DUR)) {
        gp__jw_key(w, "dur");
        gp__jw_ns_as_us(w, ev->dur);
    }
    write_args(w, t, ev, is_critical(mi, ev));
    gp__jw_obj_end(w);
}

static void write_meta_event(gp__jw *w, const gp_trace *t, const gp_track *tr, const char *name,
                             const char *key, gp_strid sval, int64_t ival)
{
    gp__jw_obj_begin(w);
    gp__jw_kv_str(w, "name", name);
    gp__jw_kv_str(w, "ph", "M");
    write_pid_tid(w, t, tr);
    gp__jw_key(w, "args");
    gp__jw_obj_begin(w);
    if (sval)
        gp__jw_kv_str(w, key, gp_trace_str(t, sval));
    else
        gp__jw_kv_int(w, key, ival);
    gp__jw_obj_end(w);
    gp__jw_obj_end(w);
}

static void write_flow_point(gp__jw *w, const gp_trace *t, const char *cat, const char *name,
                             int64_t id, const gp_track *tr, gp_ns ts, bool end)
{
    gp__jw_obj_begin(w);
    gp__jw_kv_str(w, "ph", end ? "f" : "s");
    gp__jw_kv_int(w, "id", id);
    write_pid_tid(w, t, tr);
    gp__jw_key(w, "ts");
    gp__jw_ns_as_us(w, ts - t->base_time_ns);
    gp__jw_kv_str(w, "cat", cat);
    gp__jw_kv_str(w, "name", name);
    if (end)
        gp__jw_kv_str(w, "bp", "e");
    gp__jw_obj_end(w);
}

static gp_status write_ac2g(gp__jw *w, const gp_trace *t)
{
    /* correlation -> launch (track << 32 | index) for runtime/driver events */
    gp__imap launches;
    gp_status s = gp__imap_init(&launches, 1024);
    if (s != GP_OK)
        return s;
    for (size_t i = 0; i < t->n_tracks; i++) {
        const gp_track *tr = &t->tracks[i];
        for (size_t j = 0; j < tr->n_events; j++) {
            const gp_event *ev = &tr->events[j];
            /* INT64_MIN is the map's empty marker: such a (corrupt) id gets no flow. */
            if ((ev->kind == GP_EV_RUNTIME || ev->kind == GP_EV_DRIVER) && ev->correlation &&
                ev->correlation != INT64_MIN &&
                (s = gp__imap_put(&launches, ev->correlation, (uint64_t)i << 32 | j)) != GP_OK)
                goto done;
        }
    }
    for (size_t i = 0; i < t->n_tracks; i++) {
        const gp_track *tr = &t->tracks[i];
        if (tr->kind != GP_TRACK_GPU_STREAM)
            continue;
        for (size_t j = 0; j < tr->n_events; j++) {
            const gp_event *ev = &tr->events[j];
            uint64_t v;
            if (!ev->correlation || ev->kind == GP_EV_GPU_USER_ANNOTATION ||
                !gp__imap_get(&launches, ev->correlation, &v))
                continue;
            const gp_track *ltr = &t->tracks[v >> 32];
            const gp_event *lev = &ltr->events[v & 0xffffffffu];
            write_flow_point(w, t, "ac2g", "ac2g", ev->correlation, ltr, lev->ts, false);
            write_flow_point(w, t, "ac2g", "ac2g", ev->correlation, tr, ev->ts, true);
        }
    }
done:
    gp__imap_free(&launches);
    return s;
}

static void write_dist_info(gp__jw *w, const gp_trace *t)
{
    /* Written by hand: HTA's rank regex needs the space after "rank":. */
    gp__buf b = {0};
    gp_status s = gp__buf_printf(&b, "{\"backend\": \"");
    if (s == GP_OK)
        s = gp__json_escape(&b, gp_trace_str(t, t->dist.backend),
                            gp_trace_strlen(t, t->dist.backend), false);
    if (s == GP_OK)
        s = gp__buf_printf(&b, "\", \"rank\": %d, \"world_size\": %d", t->dist.rank,
                           t->dist.world_size);
    if (s == GP_OK && t->dist.pg_count)
        s = gp__buf_printf(&b, ", \"pg_count\": %d", t->dist.pg_count);
    if (s == GP_OK && t->dist.nccl_version) {
        s = gp__buf_printf(&b, ", \"nccl_version\": \"");
        if (s == GP_OK)
            s = gp__json_escape(&b, gp_trace_str(t, t->dist.nccl_version),
                                gp_trace_strlen(t, t->dist.nccl_version), false);
        if (s == GP_OK)
            s = gp__buf_append(&b, "\"", 1);
    }
    if (s == GP_OK)
        s = gp__buf_append(&b, "}", 1);
    if (s != GP_OK) {
        w->err = s;
    } else {
        gp__jw_key(w, "distributedInfo");
        gp__jw_raw(w, b.data, b.len);
    }
    gp__buf_free(&b);
}

static gp_status write_all_marked(gp__jw *w, const gp_trace *t, const gp_chrome_marks *m,
                                  const marks_index *mi);

/* One end of an overlay link: HTA's flow point (see gp_chrome_marks). */
static void write_link_point(gp__jw *w, const gp_trace *t, const gp_chrome_link *l, int64_t id,
                             bool end)
{
    const gp_event *ev = end ? l->dst : l->src;
    bool at_end = end ? l->dst_end : l->src_end;
    gp_ns ts = ev->ts;
    if (at_end)
        ts += ev->dur - (gp_event_kind_is_gpu((gp_event_kind)ev->kind) ? GP_MIN(1000, ev->dur) : 0);
    gp__jw_obj_begin(w);
    gp__jw_kv_str(w, "ph", end ? "f" : "s");
    gp__jw_kv_int(w, "id", id);
    write_pid_tid(w, t, &t->tracks[ev->track]);
    gp__jw_key(w, "ts");
    gp__jw_ns_as_us(w, ts - t->base_time_ns);
    gp__jw_kv_str(w, "cat", "critical_path");
    gp__jw_kv_str(w, "name", "critical_path");
    gp__jw_key(w, "args");
    gp__jw_obj_begin(w);
    gp__jw_key(w, "weight");
    gp__jw_ns_as_us(w, l->weight);
    gp__jw_kv_bool(w, "critical", true);
    gp__jw_kv_str(w, "type", l->type ? l->type : "");
    gp__jw_obj_end(w);
    if (end)
        gp__jw_kv_str(w, "bp", "e");
    gp__jw_obj_end(w);
}

static gp_status write_all(gp__jw *w, const gp_trace *t, const gp_chrome_marks *m)
{
    marks_index mi = {NULL, 0};
    if (m && m->n_critical) {
        mi.ev = malloc(m->n_critical * sizeof(*mi.ev));
        if (!mi.ev)
            return GP_ENOMEM;
        memcpy(mi.ev, m->critical, m->n_critical * sizeof(*mi.ev));
        gp__msort(mi.ev, m->n_critical, sizeof(*mi.ev), cmp_ptr);
        mi.n = m->n_critical;
    }
    gp_status s = write_all_marked(w, t, m, &mi);
    free(mi.ev);
    return s;
}

/* The document; events in mi get args.critical, and m's links become flow pairs. */
static gp_status write_all_marked(gp__jw *w, const gp_trace *t, const gp_chrome_marks *m,
                                  const marks_index *mi)
{
    gp__jw_obj_begin(w);
    gp__jw_kv_int(w, "schemaVersion", t->schema_version >= 0 ? t->schema_version : 1);
    gp__jw_key(w, "deviceProperties");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < t->n_devices; i++) {
        const gp_device_props *d = &t->devices[i];
        gp__jw_obj_begin(w);
        gp__jw_kv_int(w, "id", d->id);
        gp__jw_kv_str(w, "name", gp_trace_str(t, d->name));
        gp__jw_kv_int(w, "totalGlobalMem", d->total_global_mem);
        gp__jw_kv_int(w, "computeMajor", d->compute_major);
        gp__jw_kv_int(w, "computeMinor", d->compute_minor);
        gp__jw_kv_int(w, "maxThreadsPerBlock", d->max_threads_per_block);
        gp__jw_kv_int(w, "maxThreadsPerMultiprocessor", d->max_threads_per_sm);
        gp__jw_kv_int(w, "regsPerBlock", d->regs_per_block);
        gp__jw_kv_int(w, "regsPerMultiprocessor", d->regs_per_sm);
        gp__jw_kv_int(w, "warpSize", d->warp_size);
        gp__jw_kv_int(w, "sharedMemPerBlock", d->shared_mem_per_block);
        gp__jw_kv_int(w, "sharedMemPerMultiprocessor", d->shared_mem_per_sm);
        gp__jw_kv_int(w, "numSms", d->num_sms);
        gp__jw_kv_int(w, "sharedMemPerBlockOptin", d->shared_mem_per_block_optin);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
    if (t->dist.present)
        write_dist_info(w, t);
    for (size_t i = 0; i < t->n_meta; i++) {
        gp__jw_key(w, gp_trace_str(t, t->meta[i].key));
        const char *v = gp_trace_str(t, t->meta[i].value_json);
        gp__jw_raw(w, v, strlen(v));
    }
    if (t->display_time_unit)
        gp__jw_kv_str(w, "displayTimeUnit", gp_trace_str(t, t->display_time_unit));
    gp__jw_kv_int(w, "baseTimeNanoseconds", t->base_time_ns);
    gp__jw_key(w, "traceEvents");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < t->n_tracks; i++) {
        const gp_track *tr = &t->tracks[i];
        if (tr->kind == GP_TRACK_OTHER || tr->kind == GP_TRACK_COUNTER)
            continue;
        if (tr->process_name)
            write_meta_event(w, t, tr, "process_name", "name", tr->process_name, 0);
        if (tr->name)
            write_meta_event(w, t, tr, "thread_name", "name", tr->name, 0);
        write_meta_event(w, t, tr, "thread_sort_index", "sort_index", 0, tr->sort_index);
    }
    for (size_t i = 0; i < t->n_tracks; i++) {
        const gp_track *tr = &t->tracks[i];
        for (size_t j = 0; j < tr->n_events; j++)
            write_event(w, t, tr, &tr->events[j], mi);
    }
    gp_status s = write_ac2g(w, t);
    if (s != GP_OK)
        return s;
    for (size_t i = 0; i < t->n_flows; i++) {
        const gp_flow *f = &t->flows[i];
        if (f->src_track >= t->n_tracks || f->dst_track >= t->n_tracks)
            continue;
        const char *cat = gp_trace_str(t, f->cat), *name = gp_trace_str(t, f->name);
        write_flow_point(w, t, cat, name, f->id, &t->tracks[f->src_track], f->src_ts, false);
        write_flow_point(w, t, cat, name, f->id, &t->tracks[f->dst_track], f->dst_ts, true);
    }
    for (size_t i = 0; m && i < m->n_links; i++) {
        write_link_point(w, t, &m->links[i], (int64_t)i, false);
        write_link_point(w, t, &m->links[i], (int64_t)i, true);
    }
    for (size_t i = 0; i < t->n_counters; i++) {
        const gp_counter_sample *c = &t->counters[i];
        gp__jw_obj_begin(w);
        gp__jw_kv_str(w, "ph", "C");
        gp__jw_kv_str(w, "name", gp_trace_str(t, c->series));
        gp__jw_kv_int(w, "pid", c->track < t->n_tracks ? t->tracks[c->track].pid : 0);
        gp__jw_kv_int(w, "tid", 0);
        gp__jw_key(w, "ts");
        gp__jw_ns_as_us(w, c->ts - t->base_time_ns);
        gp__jw_key(w, "args");
        gp__jw_obj_begin(w);
        gp__jw_kv_double(w, "value", c->value);
        gp__jw_obj_end(w);
        gp__jw_obj_end(w);
        if ((i & 1023) == 0)
            gp__jw_flush(w);
    }
    gp__jw_arr_end(w);
    gp__jw_obj_end(w);
    gp__jw_text(w, "\n", 1);
    return gp__jw_flush(w);
}

gp_status gp_trace_write_chrome_stream(const gp_trace *t, FILE *fp, gp_error *err)
{
    return gp_trace_write_chrome_stream_marked(t, fp, NULL, err);
}

gp_status gp_trace_write_chrome_stream_marked(const gp_trace *t, FILE *fp, const gp_chrome_marks *m,
                                              gp_error *err)
{
    gp__jw w;
    gp__jw_init(&w, fp);
    gp_status s = write_all(&w, t, m);
    gp_status f = gp__jw_finish(&w);
    if (s == GP_OK)
        s = f;
    /* Why a write failed (issue 38: a full disk read "input/output error"): the errno of the
     * writer's failed fwrite, else of the failed flush. */
    int e = s == GP_EIO ? w.err_errno : 0;
    errno = 0;
    if (s == GP_OK && (fflush(fp) != 0 || ferror(fp))) {
        s = GP_EIO;
        e = errno;
    }
    if (s == GP_EIO && e)
        return gp_error_set(err, s, "writing trace: %s", strerror(e));
    if (s != GP_OK)
        return gp_error_set(err, s, "writing trace: %s", gp_strerror(s));
    return GP_OK;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

gp_status gp_trace_write_chrome(const gp_trace *t, const char *path, gp_error *err)
{
    return gp_trace_write_chrome_marked(t, path, NULL, err);
}

gp_status gp_trace_write_chrome_marked(const gp_trace *t, const char *path,
                                       const gp_chrome_marks *m, gp_error *err)
{
    gp__afile af;
    gp_status s = gp__afile_open(&af, path, err);
    if (s != GP_OK)
        return s;
    if (ends_with(path, ".gz")) {
        fflush(af.fp);
        int fd = dup(fileno(af.fp));
        gzFile gz = fd >= 0 ? gzdopen(fd, "wb6") : NULL;
        if (!gz) {
            gp__afile_abort(&af);
            return gp_error_set(err, GP_ENOMEM, "%s: cannot start gzip", path);
        }
        gp__jw w;
        gp__jw_init_gz(&w, gz);
        s = write_all(&w, t, m);
        gp_status f = gp__jw_finish(&w);
        if (gzclose(gz) != Z_OK && s == GP_OK)
            s = GP_EIO;
        if (s == GP_OK)
            s = f;
    } else {
        gp_error werr = {0};
        s = gp_trace_write_chrome_stream_marked(t, af.fp, m, &werr);
        if (s != GP_OK) /* the message names the file (issue 38) */
            gp_error_set(err, s, "%s: %s", path,
                         strncmp(werr.msg, "writing trace: ", 15) == 0 ? werr.msg + 15 : werr.msg);
    }
    if (s != GP_OK) {
        gp__afile_abort(&af);
        return err && err->status ? s : gp_error_set(err, s, "%s: %s", path, gp_strerror(s));
    }
    return gp__afile_commit(&af, err);
}
