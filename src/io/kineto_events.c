/* Kineto event objects into the model: one element of traceEvents is parsed into gp__kineto_fields
 * (its args by kineto_args.c), then committed as an event on its track (a CPU thread, a GPU stream,
 * a counter, or a track keyed by string ids), a counter sample, a flow point (paired when the read
 * ends, kineto_merge.c) or track metadata. Nothing reaches the model before the element is
 * complete, so an element parsed again after a refill leaves no trace of its first attempt. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/strtab.h"
#include "core/util.h"
#include "gpuprof/trace.h"
#include "model/model_internal.h"
#include "io/json_scan.h"
#include "io/kineto_events.h"

#define ABSURD_NS (7LL * 24 * 3600 * 1000000000LL) /* HTA's 7-day cut-off */

/* ---- events ------------------------------------------------------------------------------ */

static gp__kineto_cat classify_cat(const char *s, size_t l)
{
    switch (l) {
    case 4:
        if (GP__KEY_IS(s, l, "ac2g"))
            return CAT_AC2G;
        break;
    case 5:
        if (GP__KEY_IS(s, l, "range"))
            return CAT_RANGE;
        if (GP__KEY_IS(s, l, "async"))
            return CAT_AC2G; /* legacy launch flows */
        if (GP__KEY_IS(s, l, "Trace"))
            return CAT_KNOWN_OTHER; /* the profiler's own span, "PyTorch Profiler (0)" */
        break;
    case 6:
        if (GP__KEY_IS(s, l, "cpu_op"))
            return CAT_CPU_OP;
        if (GP__KEY_IS(s, l, "kernel") || GP__KEY_IS(s, l, "Kernel"))
            return CAT_KERNEL;
        if (GP__KEY_IS(s, l, "Memcpy"))
            return CAT_MEMCPY;
        if (GP__KEY_IS(s, l, "Memset"))
            return CAT_MEMSET;
        break;
    case 7:
        if (GP__KEY_IS(s, l, "Runtime"))
            return CAT_RUNTIME;
        break;
    case 8:
        if (GP__KEY_IS(s, l, "Operator"))
            return CAT_CPU_OP;
        if (GP__KEY_IS(s, l, "overhead"))
            return CAT_OVERHEAD;
        break;
    case 9:
        if (GP__KEY_IS(s, l, "cuda_sync"))
            return CAT_SYNC;
        break;
    case 10:
        if (GP__KEY_IS(s, l, "gpu_memcpy"))
            return CAT_MEMCPY;
        if (GP__KEY_IS(s, l, "gpu_memset"))
            return CAT_MEMSET;
        break;
    case 11:
        if (GP__KEY_IS(s, l, "cuda_driver"))
            return CAT_DRIVER;
        break;
    case 12:
        if (GP__KEY_IS(s, l, "cuda_runtime"))
            return CAT_RUNTIME;
        break;
    case 15:
        if (GP__KEY_IS(s, l, "user_annotation"))
            return CAT_USER_ANNOTATION;
        if (GP__KEY_IS(s, l, "python_function"))
            return CAT_PYTHON;
        break;
    case 17:
        if (GP__KEY_IS(s, l, "cpu_instant_event"))
            return CAT_CPU_INSTANT;
        break;
    case 19:
        if (GP__KEY_IS(s, l, "gpu_user_annotation"))
            return CAT_GPU_USER_ANNOTATION;
        break;
    case 16:
        if (GP__KEY_IS(s, l, "async_cpu_to_gpu"))
            return CAT_AC2G;
        break;
    default:
        break;
    }
    return CAT_UNKNOWN;
}

static const char *parse_idval(gp__reader *r, const char *p, gp__kineto_idval *v,
                               struct gp__reader_id_memo *memo)
{
    p = gp__skip_ws(p);
    uint64_t w;
    memcpy(&w, p, 8); /* the buffer's padding makes 8 bytes readable */
    /* The same 8 bytes as a remembered value: the same digits and the same delimiter after
     * them, which is not the NUL at the end of the buffered data (a memo is made only when the
     * delimiter is within the 8 bytes and not NUL), so the digits are all in the buffer. */
    for (int k = 0; k < GP__ID_MEMO; k++)
        if (w == memo->w[k] && memo->len[k]) {
            *v = (gp__kineto_idval){.present = true, .numeric = true, .num = memo->num[k]};
            return p + memo->len[k];
        }
    memset(v, 0, sizeof *v);
    v->present = true;
    if (*p == '"') {
        p = gp__json_string(r, p, &v->s, &v->len, NULL);
        v->is_str = true;
        /* "25738" (legacy) and "stream 7" (legacy GPU rows) carry numbers. */
        const char *q = v->s;
        size_t n = v->len;
        if (n > 7 && memcmp(q, "stream ", 7) == 0) {
            q += 7;
            n -= 7;
        }
        if (n > 0 && n < 19) { /* at most 18 digits: cannot overflow int64 */
            bool neg = q[0] == '-';
            size_t i = neg ? 1 : 0;
            int64_t x = 0;
            bool digits = i < n;
            for (; i < n; i++) {
                if (q[i] < '0' || q[i] > '9') {
                    digits = false;
                    break;
                }
                x = x * 10 + (q[i] - '0');
            }
            if (digits) {
                v->numeric = true;
                v->num = neg ? -x : x;
            }
        }
        return p;
    }
    if (gp__is_number_start(*p)) {
        const char *q = gp__json_int(r, p, &v->num);
        v->numeric = true;
        size_t n = (size_t)(q - p);
        if (n >= 1 && n <= 7 && *q != '\0') { /* the delimiter within the 8 bytes */
            unsigned k = memo->next++ % GP__ID_MEMO;
            memo->w[k] = w;
            memo->len[k] = (uint8_t)n;
            memo->num[k] = v->num;
        }
        return q;
    }
    /* Other JSON values (null, objects...) count as absent, i.e. 0, as Chrome's viewer does. */
    v->present = false;
    v->numeric = true;
    return gp__json_skip_value(r, p);
}

/* The event's name interned. Names repeat (an operator, a kernel, "cudaLaunchKernel"): one of
 * at least 8 bytes seen lately is found in r->names by its length and first and last words and
 * checked with one compare of its bytes, without hashing it (the string table's hash and probe
 * were 3-5 % of ingest). The id is the string table's either way. */
static gp_strid intern_name(gp__reader *r, const gp__kineto_fields *f)
{
    gp__strtab *st = gp__trace_strtab(r->t);
    const char *s = f->name;
    size_t len = f->name_len;
    struct gp__reader_name *c = NULL;
    uint64_t head = 0, tail = 0;
    if (len >= 8) {
        memcpy(&head, s, 8);
        memcpy(&tail, s + len - 8, 8);
        uint64_t h = (head ^ (tail * 0x9E3779B97F4A7C15ULL) ^ len) * 0xC2B2AE3D27D4EB4FULL;
        c = &r->names[h >> (64 - 6)];
        if (c->len == len && c->head == head && c->tail == tail &&
            gp__strtab_len(st, c->id) == len && memcmp(gp__strtab_get(st, c->id), s, len) == 0)
            return c->id;
    }
    gp_strid id;
    if (gp__strtab_intern_h(st, s, len, gp__strtab_hash(s, len), &id) != GP_OK)
        gp__reader_oom(r);
    if (c)
        *c = (struct gp__reader_name){head, tail, len, id};
    return id;
}

uint32_t gp__kineto_get_track(gp__reader *r, gp_track_kind kind, int64_t pid, int64_t tid)
{
    if (r->have_last && r->last_kind == kind && r->last_pid == pid && r->last_tid == tid)
        return r->last_track;
    uint32_t idx;
    if (gp_trace_track(r->t, kind, pid, tid, &idx) != GP_OK)
        gp__reader_oom(r);
    r->have_last = true;
    r->last_kind = kind;
    r->last_pid = pid;
    r->last_tid = tid;
    r->last_track = idx;
    return idx;
}

uint32_t gp__kineto_track_for_ids(gp__reader *r, bool pstr, gp_strid ps, int64_t pnum, bool tstr,
                                  gp_strid ts, int64_t tnum)
{
    if (!pstr && !tstr)
        return gp__kineto_get_track(r, GP_TRACK_CPU_THREAD, pnum, tnum);
    int64_t pid = pstr ? -(int64_t)ps - 1 : pnum;
    int64_t tid = tstr ? -(int64_t)ts - 1 : tnum;
    uint32_t idx = gp__kineto_get_track(r, GP_TRACK_OTHER, pid, tid);
    gp_track *tr = &r->t->tracks[idx];
    tr->pid_is_str = pstr;
    tr->tid_is_str = tstr;
    tr->pid_str = ps;
    tr->tid_str = ts;
    return idx;
}

static uint32_t get_string_track(gp__reader *r, const gp__kineto_fields *f)
{
    bool pstr = f->pid.is_str && !f->pid.numeric, tstr = f->tid.is_str && !f->tid.numeric;
    return gp__kineto_track_for_ids(
        r, pstr, pstr ? gp__reader_intern(r, f->pid.s, f->pid.len) : 0, f->pid.num, tstr,
        tstr ? gp__reader_intern(r, f->tid.s, f->tid.len) : 0, f->tid.num);
}

gp__legacy_pid gp__kineto_legacy_pid_name(const char *s, size_t len)
{
    if (GP__KEY_IS(s, len, "CPU functions"))
        return GP__LEGACY_CPU;
    if (GP__KEY_IS(s, len, "CUDA functions"))
        return GP__LEGACY_CUDA;
    return GP__LEGACY_NONE;
}

/* The legacy autograd-profiler format (torch.autograd.profiler.profile(...).export_chrome_trace
 * in a PyTorch built without Kineto, e.g. Debian's python3-torch): a bare array of "X" events
 * without "cat" whose pid is the string "CPU functions" (operators, tid the profiler's thread
 * number) or "CUDA functions" (kernels, tid the CUDA device index), plus "s"/"f" flows of cat
 * "cpu_to_cuda" from an operator to its kernels. Decided per event from the pid string alone, so
 * every piece of a parallel read decides exactly as a sequential read does. Returns which of the
 * two pids f carries (GP__LEGACY_NONE for anything else, including a numeric pid). */
static gp__legacy_pid legacy_pid_of(const gp__kineto_idval *pid)
{
    if (!pid->is_str || pid->numeric)
        return GP__LEGACY_NONE;
    return gp__kineto_legacy_pid_name(pid->s, pid->len);
}

static int64_t norm_stream(int64_t s)
{
    return s == 4294967295LL ? -1 : s;
}

static gp_event_kind kind_of(gp__kineto_cat c)
{
    switch (c) {
    case CAT_CPU_OP:
        return GP_EV_CPU_OP;
    case CAT_USER_ANNOTATION:
        return GP_EV_USER_ANNOTATION;
    case CAT_GPU_USER_ANNOTATION:
        return GP_EV_GPU_USER_ANNOTATION;
    case CAT_PYTHON:
        return GP_EV_PYTHON;
    case CAT_RUNTIME:
        return GP_EV_RUNTIME;
    case CAT_DRIVER:
        return GP_EV_DRIVER;
    case CAT_KERNEL:
        return GP_EV_KERNEL;
    case CAT_MEMCPY:
        return GP_EV_MEMCPY;
    case CAT_MEMSET:
        return GP_EV_MEMSET;
    case CAT_SYNC:
        return GP_EV_SYNC;
    case CAT_OVERHEAD:
        return GP_EV_OVERHEAD;
    case CAT_RANGE:
        return GP_EV_RANGE;
    default:
        return GP_EV_OTHER;
    }
}

/* Keeps ts as the earliest or latest time committed so far, with the offset of the element being
 * parsed (gp__reader_finish checks them once the base time is known). */
static void note_time(gp__reader *r, gp_ns ts, const char *what)
{
    gp__reader_time_mark m = {ts, r->buf_off + r->mark, what};
    gp__reader_widen_times(r, &m, &m);
}

static void add_event(gp__reader *r, const gp_event *ev)
{
    gp_event *e = gp__trace_push_event(r->t, ev->track);
    if (!e)
        gp__reader_oom(r);
    *e = *ev;
    r->t->stats.by_kind[ev->kind]++;
    note_time(r, ev->ts, "an event's");
}

static void commit_metadata(gp__reader *r, const gp__kineto_fields *f)
{
    r->t->stats.metadata_events++;
    if (!f->pid.present)
        return;
    gp__reader_pending_meta m = {0};
    m.pid = f->pid.numeric ? f->pid.num : INT64_MIN;
    m.tid = f->tid.numeric ? f->tid.num : INT64_MIN;
    if (GP__KEY_IS(f->name, f->name_len, "process_name") && f->meta_name)
        m.kind = 0;
    else if (GP__KEY_IS(f->name, f->name_len, "thread_name") && f->meta_name)
        m.kind = 1;
    else if (GP__KEY_IS(f->name, f->name_len, "thread_sort_index") && f->has_sort_index)
        m.kind = 2;
    else
        return;
    if (m.pid == INT64_MIN)
        return;
    if (f->meta_name)
        m.value = gp__reader_intern(r, f->meta_name, f->meta_name_len);
    m.num = f->sort_index;
    gp__reader_pending_meta *slot = GP_PUSH(r->meta, r->n_meta, r->cap_meta);
    if (!slot)
        gp__reader_oom(r);
    *slot = m;
}

static void commit_flow(gp__reader *r, const gp__kineto_fields *f)
{
    r->t->stats.flow_points++;
    if (f->cat == CAT_AC2G || !f->has_id || !f->has_ts)
        return; /* launch flows are implied by correlation ids */
    /* Legacy operator -> kernel arrows are launch flows too; without correlation ids the model
     * has no link to keep for them (docs/internals/io.md). */
    if (f->cat_s && GP__KEY_IS(f->cat_s, f->cat_len, "cpu_to_cuda") &&
        legacy_pid_of(&f->pid) != GP__LEGACY_NONE)
        return;
    gp__trace_priv *priv = gp__trace_build(r->t);
    gp__flow_point *fp = GP_PUSH(priv->flow_points, priv->n_flow_points, priv->cap_flow_points);
    if (!fp)
        gp__reader_oom(r);
    fp->id = f->id;
    fp->cat = f->cat_s ? gp__reader_intern(r, f->cat_s, f->cat_len) : 0;
    fp->name = f->name ? gp__reader_intern(r, f->name, f->name_len) : 0;
    fp->is_end = f->ph == 'f';
    fp->ts = f->ts;
    note_time(r, f->ts, "a flow point's");
    /* The track is found when the flow is paired: an endpoint without its partner must not
     * create a track. */
    fp->pid_is_str = f->pid.is_str && !f->pid.numeric;
    fp->tid_is_str = f->tid.is_str && !f->tid.numeric;
    fp->pid_str = fp->pid_is_str ? gp__reader_intern(r, f->pid.s, f->pid.len) : 0;
    fp->tid_str = fp->tid_is_str ? gp__reader_intern(r, f->tid.s, f->tid.len) : 0;
    fp->pid = f->pid.num;
    fp->tid = f->tid.num;
}

/* One counter sample of the event's series `key`: the event's name when the key is "value" (the
 * usual single-series form), else "<name>.<key>". */
static void add_counter_sample(gp__reader *r, const gp__kineto_fields *f, const char *key,
                               size_t key_len, double value)
{
    gp_counter_sample c = {0};
    c.ts = f->ts;
    c.value = value;
    if (GP__KEY_IS(key, key_len, "value")) {
        c.series = f->name ? gp__reader_intern(r, f->name, f->name_len) : 0;
    } else {
        char tmp[512];
        int n = snprintf(tmp, sizeof tmp, "%.*s.%.*s", (int)GP_MIN(f->name_len, 250),
                         f->name ? f->name : "", (int)GP_MIN(key_len, 250), key);
        c.series = gp__reader_intern(r, tmp, (size_t)n);
    }
    c.track = gp__kineto_get_track(r, GP_TRACK_COUNTER, f->pid.numeric ? f->pid.num : 0, 0);
    if (gp_trace_add_counter(r->t, &c) != GP_OK)
        gp__reader_oom(r);
    note_time(r, c.ts, "a counter's");
    r->t->stats.by_kind[GP_EV_COUNTER]++;
}

/* A counter event: one sample per numeric member of args, as Chrome's viewer draws each member as
 * a series of its own. parse_args kept the first; with several, the args text (validated by
 * parse_args, complete in the buffer) is scanned again for all of them. */
static void commit_counter(gp__reader *r, const gp__kineto_fields *f)
{
    if (!f->n_ctr || !f->has_ts)
        return;
    if (f->n_ctr == 1 || !f->args_s) {
        add_counter_sample(r, f, f->ctr_key, f->ctr_key_len, f->ctr_value);
        return;
    }
    const char *p = gp__skip_ws(f->args_s + 1);
    while (*p == '"') {
        const char *k;
        size_t kl;
        p = gp__json_string(r, p, &k, &kl, NULL);
        p = gp__skip_ws(gp__expect_char(r, p, ':', "':'"));
        if (gp__is_number_start(*p)) {
            double d;
            p = gp__json_double(r, p, &d);
            add_counter_sample(r, f, k, kl, d);
        } else {
            p = gp__json_skip_value(r, p);
        }
        p = gp__skip_ws(p);
        if (*p == ',')
            p = gp__skip_ws(p + 1);
    }
}

/* The GPU stream track of a GPU event, and its side record (grid, block, bytes, NCCL fields...). */
static void commit_gpu_fields(gp__reader *r, const gp__kineto_fields *f, gp__legacy_pid legacy,
                              gp_event *ev)
{
    int64_t device = f->has_device ? f->device : (f->pid.numeric ? f->pid.num : 0);
    int64_t stream = f->has_stream ? f->stream : (f->tid.numeric ? f->tid.num : -1);
    if (legacy == GP__LEGACY_CUDA) { /* tid is the device; the format records no stream */
        device = f->has_device ? f->device : (f->tid.numeric ? f->tid.num : 0);
        stream = f->has_stream ? f->stream : 0;
    }
    stream = norm_stream(stream);
    /* the side record holds the device in 32 bits: the track takes the same value, so the
     * "device" the writer puts in args reads back onto the same track */
    device = gp__i32_sat(device);
    if (!f->has_stream)
        ev->flags |= GP_EVF_STREAM_FROM_TID;
    ev->track = gp__kineto_get_track(r, GP_TRACK_GPU_STREAM, device, stream);
    gp_gpu_info gi;
    gp_gpu_info_init(&gi);
    gi.device = (int32_t)device;
    gi.stream = stream;
    gi.context = f->context >= 0 ? gp__i32_sat(f->context) : -1;
    memcpy(gi.grid, f->grid, sizeof gi.grid);
    memcpy(gi.block, f->block, sizeof gi.block);
    gi.registers_per_thread = gp__i32_sat(f->regs);
    gi.shared_memory = gp__i32_sat(f->smem);
    gi.blocks_per_sm = gp__f32_sat(f->bps);
    gi.warps_per_sm = gp__f32_sat(f->wps);
    gi.occupancy_pct = gp__f32_sat(f->occ);
    gi.queued = gp__i32_sat(f->queued);
    gi.bytes = f->bytes;
    gi.bandwidth_gbps = f->bw;
    gi.graph_id = f->graph_id;
    gi.graph_node_id = f->graph_node;
    gi.copy_kind = f->copy_kind ? gp__reader_intern(r, f->copy_kind, f->copy_kind_len) : 0;
    gp_gpu_ext x;
    gp_gpu_ext_init(&x);
    x.sync_kind = f->sync_kind ? gp__reader_intern(r, f->sync_kind, f->sync_kind_len) : 0;
    x.wait_on_stream = f->wait_on_stream;
    x.wait_on_event_corr = f->wait_on_event_corr;
    x.collective = f->collective ? gp__reader_intern(r, f->collective, f->collective_len) : 0;
    x.in_msg_nelems = f->in_nelems;
    x.out_msg_nelems = f->out_nelems;
    x.group_size = gp__i32_sat(f->group_size);
    x.dtype = f->dtype ? gp__reader_intern(r, f->dtype, f->dtype_len) : 0;
    x.pg_name = f->pg_name ? gp__reader_intern(r, f->pg_name, f->pg_name_len) : 0;
    x.pg_desc = f->pg_desc ? gp__reader_intern(r, f->pg_desc, f->pg_desc_len) : 0;
    x.pg_ranks = f->pg_ranks ? gp__reader_intern(r, f->pg_ranks, f->pg_ranks_len) : 0;
    if (gp_trace_add_gpu_ext(r->t, &x, &gi.ext) != GP_OK)
        gp__reader_oom(r);
    if (gp_trace_add_gpu_info(r->t, &gi, &ev->extra) != GP_OK)
        gp__reader_oom(r);
}

/* The track of a CPU-side event: a CPU thread, or a track keyed by string ids. */
static uint32_t cpu_track(gp__reader *r, const gp__kineto_fields *f, gp__legacy_pid legacy)
{
    if (legacy == GP__LEGACY_CPU) /* process 0, the profiler's thread number */
        return f->tid.is_str && !f->tid.numeric
                   ? gp__kineto_track_for_ids(r, false, 0, 0, true,
                                              gp__reader_intern(r, f->tid.s, f->tid.len), 0)
                   : gp__kineto_get_track(r, GP_TRACK_CPU_THREAD, 0, f->tid.num);
    if (f->pid.numeric && f->tid.numeric)
        return gp__kineto_get_track(r, GP_TRACK_CPU_THREAD, f->pid.num, f->tid.num);
    return get_string_track(r, f);
}

/* ev->extra of a CPU-side event of kind `kind`: its side record or the id it carries. */
static void commit_cpu_extra(gp__reader *r, const gp__kineto_fields *f, gp_event_kind kind,
                             gp_event *ev)
{
    gp_trace *t = r->t;
    switch (kind) {
    case GP_EV_MEMORY: {
        gp_mem_info mi = {f->addr,
                          f->has_mem_bytes ? f->mem_bytes : 0,
                          f->total_alloc,
                          f->total_res,
                          gp__i32_sat(f->dev_type),
                          gp__i32_sat(f->dev_id)};
        if (gp_trace_add_mem_info(t, &mi, &ev->extra) != GP_OK)
            gp__reader_oom(r);
        break;
    }
    case GP_EV_PYTHON: {
        gp_py_info pi = {f->py_id, f->py_parent_null ? -1 : f->py_parent};
        if (gp_trace_add_py_info(t, &pi, &ev->extra) != GP_OK)
            gp__reader_oom(r);
        break;
    }
    case GP_EV_RUNTIME:
    case GP_EV_DRIVER:
        gp_event_set_cbid(ev, f->cbid);
        break;
    case GP_EV_RANGE:
    case GP_EV_INSTANT:
        if (f->args_s && f->args_len > 2 &&
            gp_trace_add_args(t, f->args_s, f->args_len, &ev->extra) != GP_OK)
            gp__reader_oom(r);
        break;
    case GP_EV_OTHER:
        gp_event_set_category(ev, f->cat_s ? gp__reader_intern(r, f->cat_s, f->cat_len) : 0);
        break;
    case GP_EV_CPU_OP: {
        gp_event_set_cpu_stream(ev, f->has_stream ? norm_stream(f->stream) : -1);
        if (r->opts->keep_op_shapes && f->has_ext && f->ext > 0 && (f->in_dims || f->in_types)) {
            gp_op_shapes os = {
                f->ext, f->in_dims ? gp__reader_intern(r, f->in_dims, f->in_dims_len) : 0,
                f->in_types ? gp__reader_intern(r, f->in_types, f->in_types_len) : 0,
                f->in_strides ? gp__reader_intern(r, f->in_strides, f->in_strides_len) : 0,
                f->in_concrete ? gp__reader_intern(r, f->in_concrete, f->in_concrete_len) : 0};
            if (gp_trace_add_op_shapes(t, &os) != GP_OK)
                gp__reader_oom(r);
        }
        break;
    }
    default:
        break;
    }
}

/* The kind, duration and flags of an "X" event into ev. False when the event is dropped (Python
 * functions when not kept, absurd durations). */
static bool span_kind(gp__reader *r, const gp__kineto_fields *f, gp__legacy_pid legacy,
                      gp_event *ev)
{
    gp_read_stats *stats = &r->t->stats;
    gp_event_kind kind = legacy == GP__LEGACY_CPU    ? GP_EV_CPU_OP
                         : legacy == GP__LEGACY_CUDA ? GP_EV_KERNEL
                                                     : kind_of(f->cat);
    if (kind == GP_EV_PYTHON && !r->opts->keep_python)
        return false;
    if (f->has_dur) {
        ev->dur = f->dur;
        if (ev->dur < 0) {
            ev->dur = 0;
            ev->flags |= GP_EVF_DUR_CLAMPED;
            stats->negative_dur++;
        } else if (ev->dur > ABSURD_NS) {
            stats->absurd_dur++;
            return false;
        }
    } else {
        ev->flags |= GP_EVF_NO_DUR;
        stats->no_dur++;
    }
    if (kind == GP_EV_OTHER && f->cat != CAT_KNOWN_OTHER)
        stats->unknown_cat++;
    ev->kind = (uint8_t)kind;
    return true;
}

/* An "X" (complete) or "i" / "I" (instant) event: one gp_event on its track. */
static void commit_span(gp__reader *r, const gp__kineto_fields *f)
{
    gp_event ev = {0};
    ev.ts = f->ts;
    ev.correlation = f->has_corr ? f->corr : 0;
    ev.external_id = f->has_ext ? f->ext : 0;
    gp__legacy_pid legacy =
        GP__LEGACY_NONE; /* a legacy "X" event without cat (see legacy_pid_of) */
    if (f->ph != 'X') {
        bool is_mem = f->name_len == 8 && memcmp(f->name, "[memory]", 8) == 0;
        if (is_mem && !r->opts->keep_memory)
            return;
        ev.kind = (uint8_t)(is_mem ? GP_EV_MEMORY : GP_EV_INSTANT);
        ev.flags |= GP_EVF_INSTANT;
    } else {
        legacy = f->cat_s ? GP__LEGACY_NONE : legacy_pid_of(&f->pid);
        if (!span_kind(r, f, legacy, &ev))
            return;
    }
    gp_event_kind kind = (gp_event_kind)ev.kind;
    ev.name = f->name ? intern_name(r, f) : 0;
    if (gp_event_kind_is_gpu(kind)) {
        commit_gpu_fields(r, f, legacy, &ev);
    } else {
        ev.track = cpu_track(r, f, legacy);
        commit_cpu_extra(r, f, kind, &ev);
    }
    add_event(r, &ev);
}

static void commit_event(gp__reader *r, const gp__kineto_fields *f)
{
    r->t->stats.quoted_times += f->quoted_time;
    if (f->ph == 'M') {
        commit_metadata(r, f);
        return;
    }
    if (f->ph == 's' || f->ph == 'f' || f->ph == 't') {
        commit_flow(r, f);
        return;
    }
    if (f->ph == 'C') {
        commit_counter(r, f);
        return;
    }
    if ((f->ph != 'X' && f->ph != 'i' && f->ph != 'I') || !f->has_ts) {
        r->t->stats.skipped++;
        return;
    }
    commit_span(r, f);
}

static void fields_init(gp__kineto_fields *f)
{
    gp__zero(f, sizeof *f);                 /* once per event: see gp__zero */
    f->pid.numeric = f->tid.numeric = true; /* a missing pid or tid is 0 */
    f->context = -1;
    f->cbid = -1;
    for (int i = 0; i < 3; i++)
        f->grid[i] = f->block[i] = -1;
    f->regs = f->smem = f->queued = f->bytes = -1;
    f->graph_id = f->graph_node = -1;
    f->py_id = f->py_parent = -1;
    f->total_alloc = f->total_res = -1;
    f->dev_type = f->dev_id = -1;
    f->wait_on_stream = -1;
    f->wait_on_event_corr = -1;
    f->in_nelems = f->out_nelems = f->group_size = -1;
}

/* "ph": a string; the event's phase is its first character. */
static const char *parse_ph(gp__reader *r, const char *p, gp__kineto_fields *f)
{
    if (p[0] == '"' && p[2] == '"' && p[1] != '"' && p[1] != '\\' &&
        (unsigned char)p[1] >= 0x20) { /* one character, no escape: Kineto's "X", "f"... */
        f->ph = p[1];
        return p + 3;
    }
    const char *s;
    size_t l;
    gp__json_want(r, p, '"', "a string", "field \"ph\": expected a string");
    p = gp__json_string(r, p, &s, &l, NULL);
    f->ph = l ? s[0] : 0;
    return p;
}

/* "ts" or "dur" (field): microseconds into exact nanoseconds in *out, *has set. Some writers
 * quote numbers: a quoted number is read the same way, *quoted set (counted, warned about). A null
 * duration (is_dur) is absent; anything else that is not a number is an error. Durations saturate
 * (see gp__json_us_ns). */
static const char *parse_time(gp__reader *r, const char *p, const char *field, bool is_dur,
                              int64_t *out, bool *has, bool *quoted)
{
    if (*p == '"') {
        const char *s;
        size_t l;
        const char *q = gp__json_string(r, p, &s, &l, NULL);
        if (!gp__json_us_text_to_ns(s, s + l, out))
            gp__json_fail_at(r, p, "field \"%s\": expected a number", field);
        *has = true;
        *quoted = true;
        return q;
    }
    if (!gp__is_number_start(*p)) {
        if (*p == '\0')
            gp__json_at_nul(r, p, "a number");
        if (*p == 'N' || *p == 'I')
            gp__json_fail_at(r, p, "field \"%s\": NaN or Infinity is not a valid JSON number",
                             field);
        if (is_dur && *p == 'n') /* null */
            return gp__json_skip_literal(r, p, "null");
        gp__json_fail_at(r, p, "field \"%s\": expected a number", field);
    }
    p = gp__json_us_ns(r, p, out, is_dur);
    *has = true;
    return p;
}

/* The members of an event object the reader keeps. */
typedef enum ev_key {
    EK_OTHER = 0,
    EK_PH,
    EK_TS,
    EK_ID,
    EK_CAT,
    EK_PID,
    EK_TID,
    EK_DUR,
    EK_NAME,
    EK_ARGS
} ev_key;

static const char *parse_event_member(gp__reader *r, const char *p, gp__kineto_fields *f);

/* The value of member `key` into f: at p (blanks skipped), or when at_key (the fast dispatch) p is
 * at the member's `"key":` and the value after it. Each case skips its key by a constant, so the
 * next position does not wait for the dispatch table's load (with the branch predicted, the
 * parse of the value starts at once). Inlined into both callers, at_key a constant. */
#define EV_SKIP(lit) (at_key ? gp__skip_ws(p + sizeof(lit) - 1) : p)
static inline __attribute__((always_inline)) const char *
parse_event_value(gp__reader *r, const char *p, gp__kineto_fields *f, ev_key key, bool at_key)
{
    bool ok;
    switch (key) {
    case EK_PH:
        return parse_ph(r, EV_SKIP("\"ph\":"), f);
    case EK_TS:
        return parse_time(r, EV_SKIP("\"ts\":"), "ts", false, &f->ts, &f->has_ts, &f->quoted_time);
    case EK_ID:
        p = gp__json_intish(r, EV_SKIP("\"id\":"), &f->id, &ok);
        f->has_id = ok;
        return p;
    case EK_CAT:
        p = EV_SKIP("\"cat\":");
        if (*p != '"')
            return gp__json_skip_value(r, p);
        p = gp__json_string(r, p, &f->cat_s, &f->cat_len, NULL);
        f->cat = classify_cat(f->cat_s, f->cat_len);
        return p;
    case EK_PID:
        return parse_idval(r, EV_SKIP("\"pid\":"), &f->pid, &r->id_memo[0]);
    case EK_TID:
        return parse_idval(r, EV_SKIP("\"tid\":"), &f->tid, &r->id_memo[1]);
    case EK_DUR:
        return parse_time(r, EV_SKIP("\"dur\":"), "dur", true, &f->dur, &f->has_dur,
                          &f->quoted_time);
    case EK_NAME:
        p = EV_SKIP("\"name\":");
        if (*p != '"')
            return gp__json_skip_value(r, p);
        return gp__json_string(r, p, &f->name, &f->name_len, &f->name_escaped);
    case EK_ARGS:
        return gp__kineto_parse_args(r, EV_SKIP("\"args\":"), f);
    case EK_OTHER:
        break;
    }
    /* EK_OTHER has no pattern: at_key only from a table not yet built (gp__kineto_events_init),
     * where the general path reads the member from its key */
    return at_key ? parse_event_member(r, p, f) : gp__json_skip_value(r, p);
}
#undef EV_SKIP

/* One member "key": value of an event object, p at (or blanks before) the key, the general way:
 * the key is dispatched by its length and its first word (gp__json_key_word), no string
 * compares. Any key, escaped ones included. */
static const char *parse_event_member(gp__reader *r, const char *p, gp__kineto_fields *f)
{
    gp__json_kw kw;
    p = gp__json_key_word(r, p, &kw, "expected a member name (a string) in event");
    uint64_t w = kw.w0;
    ev_key key = EK_OTHER;
    switch (kw.len) {
    case 2:
        key = w == GP__W0("ph")   ? EK_PH
              : w == GP__W0("ts") ? EK_TS
              : w == GP__W0("id") ? EK_ID
                                  : EK_OTHER;
        break;
    case 3:
        key = w == GP__W0("cat")   ? EK_CAT
              : w == GP__W0("pid") ? EK_PID
              : w == GP__W0("tid") ? EK_TID
              : w == GP__W0("dur") ? EK_DUR
                                   : EK_OTHER;
        break;
    case 4:
        key = w == GP__W0("name") ? EK_NAME : w == GP__W0("args") ? EK_ARGS : EK_OTHER;
        break;
    default:
        break;
    }
    return parse_event_value(r, p, f, key, false);
}

/* The fast dispatch of event members: the text `"key":` of each kept member (at most 7 bytes) is
 * one little-endian word under a mask, found in a 16-slot table by a multiplicative hash of the
 * member's first 5 bytes and checked with one compare. No scan for the key's end, no dependent
 * loads: the general path (gp__json_key_word) cost a fifth of parse_event in a chain of the word
 * scan, the quote check at the found end and the dispatch. A key that does not match (another
 * member, an escape, blanks before ':', the end of the buffered data) takes the general path,
 * which reaches the same value parser for the same key. */
#define EV_SLOT_BITS 4
typedef struct ev_slot {
    uint64_t pat, mask; /* the bytes of `"key":`, and which bytes of the word they are */
    uint8_t key;        /* ev_key */
} ev_slot;
static ev_slot ev_slots[1u << EV_SLOT_BITS];
static pthread_once_t ev_slots_once = PTHREAD_ONCE_INIT;

static inline unsigned ev_slot_of(uint64_t w)
{
    return (unsigned)(((w & 0xFFFFFFFFFFULL) * 0x9E3779B97F4A7C15ULL) >> (64 - EV_SLOT_BITS));
}

static void ev_slots_init(void)
{
    static const struct {
        const char *text;
        ev_key key;
    } members[] = {{"\"ph\":", EK_PH},   {"\"ts\":", EK_TS},     {"\"id\":", EK_ID},
                   {"\"cat\":", EK_CAT}, {"\"pid\":", EK_PID},   {"\"tid\":", EK_TID},
                   {"\"dur\":", EK_DUR}, {"\"name\":", EK_NAME}, {"\"args\":", EK_ARGS}};
    for (size_t i = 0; i < GP_ARRAY_LEN(ev_slots); i++)
        ev_slots[i] = (ev_slot){.pat = 1, .mask = 0}; /* matches nothing */
    for (size_t i = 0; i < GP_ARRAY_LEN(members); i++) {
        size_t n = strlen(members[i].text);
        uint64_t pat = gp__json_word(members[i].text, n, 0);
        ev_slot *s = &ev_slots[ev_slot_of(pat)];
        if (s->mask) /* a collision (none with this hash): the later key takes the general path */
            continue;
        *s = (ev_slot){pat, ~0ULL >> (64 - 8 * n), (uint8_t)members[i].key};
    }
}

void gp__kineto_events_init(void)
{
    pthread_once(&ev_slots_once, ev_slots_init);
}

/* One member of an event object, p at (or blanks before) its key: the fast dispatch above, else
 * parse_event_member. */
static inline const char *parse_member(gp__reader *r, const char *p, gp__kineto_fields *f)
{
    p = gp__skip_ws(p);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t w;
    memcpy(&w, p, 8); /* the buffer's padding makes 8 bytes readable */
    const ev_slot *s = &ev_slots[ev_slot_of(w)];
    if ((w & s->mask) == s->pat)
        return parse_event_value(r, p, f, (ev_key)s->key, true);
#endif
    return parse_event_member(r, p, f);
}

const char *gp__kineto_parse_event(gp__reader *r, const char *p)
{
    gp__kineto_fields f;
    fields_init(&f);
    gp__json_scratch_reset(r);
    p = gp__skip_ws(p + 1);
    if (*p == '}') {
        r->t->stats.skipped++;
        return p + 1;
    }
    do
        p = parse_member(r, p, &f);
    while (gp__json_sep(r, &p, '}', "expected ',' or '}'"));
    commit_event(r, &f);
    return p + 1;
}
