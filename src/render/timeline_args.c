/* Timeline renderer, the side block: the details panel's data (argument objects, per-row
 * references, correlation ids, op shapes), parsed by the page only when an event is hovered or
 * selected (docs/internals/report.md). The page itself is timeline_html.c. */
#include <stdlib.h>
#include <string.h>

#include "core/imap.h"
#include "core/json_writer.h"
#include "core/msort.h"
#include "core/strtab.h"
#include "core/util.h"

/* The side block's argument objects with their use counts (sorted most used first). */
typedef struct obj_use {
    uint32_t id, count;
} obj_use;

#define CMP_OBJ_USE(x, y)                                                                          \
    ((x)->count != (y)->count ? ((x)->count < (y)->count) - ((x)->count > (y)->count)              \
                              : GP_CMP((x)->id, (y)->id))
GP__DEFINE_MERGE_SORT(sort_obj_use, obj_use, CMP_OBJ_USE)

#include "render/timeline_out.h"

/* Which argument object an event has (event_args writes it, args_key keys it). */
typedef enum args_class {
    ARGS_NONE,
    ARGS_GPU,     /* the GPU fields */
    ARGS_JSON,    /* a range's source args */
    ARGS_CBID,    /* a runtime or driver call's cbid */
    ARGS_STREAM,  /* a CPU op's stream */
    ARGS_CATEGORY /* an other event's category */
} args_class;

static args_class event_args_class(const gp_trace *t, const gp_event *e)
{
    if (gp_event_gpu_info(t, e))
        return ARGS_GPU;
    if (gp_event_args_json(t, e))
        return ARGS_JSON;
    if ((e->kind == GP_EV_RUNTIME || e->kind == GP_EV_DRIVER) && e->extra)
        return ARGS_CBID;
    if (e->kind == GP_EV_CPU_OP && gp_event_cpu_stream(e) >= 0)
        return ARGS_STREAM;
    if (e->kind == GP_EV_OTHER && e->extra)
        return ARGS_CATEGORY;
    return ARGS_NONE;
}

/* The GPU fields of an event, the names as Kineto's args spell them. */
static void gpu_args(const gp_trace *t, const gp_gpu_info *g, gp__jw *w)
{
    const gp_gpu_ext *x = gp_gpu_info_ext(t, g);
    gp__jw_kv_int(w, "device", g->device);
    gp__jw_kv_int(w, "stream", g->stream);
    if (g->grid[0] >= 0) {
        gp__jw_key(w, "grid");
        gp__jw_arr_begin(w);
        for (int k = 0; k < 3; k++)
            gp__jw_int(w, g->grid[k]);
        gp__jw_arr_end(w);
        gp__jw_key(w, "block");
        gp__jw_arr_begin(w);
        for (int k = 0; k < 3; k++)
            gp__jw_int(w, g->block[k]);
        gp__jw_arr_end(w);
    }
    static const char *const ik[] = {"registers per thread", "shared memory", "queued", "context"};
    int64_t iv[] = {g->registers_per_thread, g->shared_memory, g->queued, g->context};
    for (size_t k = 0; k < GP_ARRAY_LEN(ik); k++)
        if (iv[k] >= 0)
            gp__jw_kv_int(w, ik[k], iv[k]);
    static const char *const fk[] = {"blocks per SM", "warps per SM", "est. achieved occupancy %"};
    double fv[] = {g->blocks_per_sm, g->warps_per_sm, g->occupancy_pct};
    for (size_t k = 0; k < GP_ARRAY_LEN(fk); k++)
        if (fv[k] > 0)
            gp__jw_kv_double(w, fk[k], round(fv[k] * 1e6) / 1e6); /* Kineto's 6 decimals */
    static const char *const lk[] = {"bytes",          "graph id",      "graph node id",
                                     "wait_on_stream", "in msg nelems", "out msg nelems",
                                     "group size"};
    int64_t lv[] = {g->bytes,         g->graph_id,       g->graph_node_id, x->wait_on_stream,
                    x->in_msg_nelems, x->out_msg_nelems, x->group_size};
    for (size_t k = 0; k < GP_ARRAY_LEN(lk); k++)
        if (lv[k] >= 0)
            gp__jw_kv_int(w, lk[k], lv[k]);
    if (g->bandwidth_gbps > 0)
        gp__jw_kv_double(w, "memory bandwidth (GB/s)", g->bandwidth_gbps);
    static const char *const sk[] = {"cuda_sync_kind", "Collective name", "dtype", "kind"};
    gp_strid sv[] = {x->sync_kind, x->collective, x->dtype, g->copy_kind};
    for (size_t k = 0; k < GP_ARRAY_LEN(sk); k++)
        if (sv[k])
            gp__jw_kv_str(w, sk[k], gp_trace_str(t, sv[k]));
}

/* The kind-specific fields of an event (class c) as one JSON object (html-safe). */
static void event_args(const gp_trace *t, const gp_event *e, args_class c, gp__jw *w)
{
    gp__jw_obj_begin(w);
    switch (c) {
    case ARGS_GPU:
        gpu_args(t, gp_event_gpu_info(t, e), w);
        break;
    case ARGS_JSON: /* the source's args, parsed by the page when shown */
        gp__jw_kv_str(w, "json", gp_event_args_json(t, e));
        break;
    case ARGS_CBID:
        gp__jw_kv_int(w, "cbid", (int64_t)e->extra - 1);
        break;
    case ARGS_STREAM:
        gp__jw_kv_int(w, "stream", gp_event_cpu_stream(e));
        break;
    default:
        gp__jw_kv_str(w, "cat", gp_trace_str(t, e->extra));
        break;
    }
    gp__jw_obj_end(w);
}

enum { ARGS_KEY_MAX = 32 };

/* Everything event_args reads for e (class c) as int64s, after a full hash of them (the string
 * table hashes only a sample of long keys; the hash in front makes that sample enough). Equal
 * keys give equal objects. Returns the key's length in int64s. */
static size_t args_key(uint32_t ti, const gp_trace *t, const gp_event *e, args_class c,
                       int64_t k[ARGS_KEY_MAX])
{
    size_t n = 1;
    k[n++] = ((int64_t)ti << 8) | c;
    if (c == ARGS_GPU) {
        const gp_gpu_info *g = gp_event_gpu_info(t, e);
        const gp_gpu_ext *x = gp_gpu_info_ext(t, g);
        uint32_t f[3];
        memcpy(&f[0], &g->blocks_per_sm, 4);
        memcpy(&f[1], &g->warps_per_sm, 4);
        memcpy(&f[2], &g->occupancy_pct, 4);
        int64_t bw;
        memcpy(&bw, &g->bandwidth_gbps, 8);
        int64_t v[] = {g->device,
                       g->context,
                       g->stream,
                       g->grid[0],
                       g->grid[1],
                       g->grid[2],
                       g->block[0],
                       g->block[1],
                       g->block[2],
                       g->registers_per_thread,
                       g->shared_memory,
                       f[0],
                       f[1],
                       f[2],
                       g->queued,
                       g->bytes,
                       bw,
                       g->graph_id,
                       g->graph_node_id,
                       x->sync_kind,
                       x->wait_on_stream,
                       x->collective,
                       x->in_msg_nelems,
                       x->out_msg_nelems,
                       x->group_size,
                       x->dtype,
                       g->copy_kind};
        memcpy(k + n, v, sizeof v);
        n += GP_ARRAY_LEN(v);
    } else {
        k[n++] = c == ARGS_JSON ? (int64_t)t->args[e->extra - 1] : (int64_t)e->extra;
    }
    uint64_t h = gp__hash_bytes(k + 1, (n - 1) * sizeof *k);
    memcpy(k, &h, sizeof h);
    return n;
}

/* The distinct argument objects of the side block and how many emitted events use each: an
 * event's fields are formatted once per distinct key, not once per event. */
typedef struct args_tab {
    gp__strtab keys; /* args_key bytes */
    uint32_t *obj;   /* obj[key id]: the object's id in objs (0: not formatted yet) */
    size_t cap_obj;
    gp__strtab objs; /* the JSON texts */
    uint32_t *count; /* count[object id] */
    size_t cap_count;
    uint32_t *events; /* per emitted event, in row order: its object id (0: none) */
    size_t n_events, cap_events;
} args_tab;

/* Interns a JSON object text; *id receives its id (its use count starts at 0). */
static gp_status args_obj(args_tab *a, const gp__jw *w, uint32_t *id)
{
    gp_status s = w->err;
    if (s == GP_OK)
        s = gp__strtab_intern(&a->objs, w->buf.data, w->buf.len, id);
    if (s == GP_OK && *id >= a->cap_count) {
        size_t old = a->cap_count;
        if ((s = gp__grow((void **)&a->count, &a->cap_count, sizeof *a->count, *id + 1)) == GP_OK)
            memset(a->count + old, 0, (a->cap_count - old) * sizeof *a->count);
    }
    return s;
}

/* The object id of e's arguments (0: none), formatting them the first time their key is seen. */
static gp_status event_obj(args_tab *a, uint32_t ti, const gp_trace *t, const gp_event *e,
                           uint32_t *id)
{
    *id = 0;
    args_class c = event_args_class(t, e);
    if (c == ARGS_NONE)
        return GP_OK;
    int64_t k[ARGS_KEY_MAX];
    size_t n = args_key(ti, t, e, c, k);
    uint32_t kid;
    gp_status s = gp__strtab_intern(&a->keys, (const char *)k, n * sizeof *k, &kid);
    if (s != GP_OK)
        return s;
    if (kid >= a->cap_obj) {
        size_t old = a->cap_obj;
        if ((s = gp__grow((void **)&a->obj, &a->cap_obj, sizeof *a->obj, kid + 1)) != GP_OK)
            return s;
        memset(a->obj + old, 0, (a->cap_obj - old) * sizeof *a->obj);
    }
    if (!a->obj[kid]) {
        gp__jw w;
        gp__jw_init(&w, NULL);
        w.html_safe = true;
        event_args(t, e, c, &w);
        s = args_obj(a, &w, &a->obj[kid]);
        gp__buf_free(&w.buf);
        if (s != GP_OK)
            return s;
    }
    *id = a->obj[kid];
    return GP_OK;
}
/* An id (correlation, External id) exactly, delta-encoded against *prev (0: none; a difference
 * d >= 0 written as d + 1). Ids or differences a double cannot hold exactly (beyond 2^52) are
 * written as a decimal string and reset *prev to 0, so no difference can overflow. */
static void out_id(gp__out *o, int64_t v, int64_t *prev)
{
    const int64_t lim = (int64_t)1 << 52;
    if (v == 0) {
        gp__out_raw(o, "0", 1);
    } else if (v > -lim && v<lim && * prev> - lim && *prev < lim) {
        int64_t d = v - *prev;
        gp__out_int(o, d >= 0 ? d + 1 : d);
        *prev = v;
    } else {
        gp__out_raw(o, "\"", 1);
        gp__out_int(o, v);
        gp__out_raw(o, "\"", 1);
        *prev = 0;
    }
}

/* Per op shapes entry of a trace: whether an emitted event refers to it and, once formatted, its
 * object id; the name of its op when the op itself is emitted. */
typedef struct shape_use {
    bool used;
    uint32_t obj;
    gp_strid op;
} shape_use;

/* First pass: the argument object of every emitted event (counted), and which of the traces'
 * op shapes (read with keep_op_shapes) an emitted event refers to by its External id: the CPU op
 * itself, and the launches and kernels that carry the op's External id. */
static gp_status collect_args(const gp_timeline *tl, args_tab *a, shape_use **shapes)
{
    for (size_t r = 0; r < tl->n_rows; r++) {
        const gp_tl_row *row = &tl->rows[r];
        if (!row->depth)
            continue;
        const gp_trace *t = tl->traces[row->trace];
        const gp_track *tr = &t->tracks[row->track];
        shape_use *used = shapes[row->trace];
        for (size_t i = 0; i < tr->n_events; i++) {
            const gp_event *e = &tr->events[i];
            if (!gp__tl_emitted(row, i))
                continue;
            uint32_t *slot = GP_PUSH(a->events, a->n_events, a->cap_events), id;
            if (!slot)
                return GP_ENOMEM;
            gp_status s = event_obj(a, row->trace, t, e, &id);
            if (s != GP_OK)
                return s;
            *slot = id;
            a->count[id] += id != 0;
            const gp_op_shapes *sh = used ? gp_trace_op_shapes(t, e->external_id) : NULL;
            if (sh) {
                used[sh - t->op_shapes].used = true;
                if (e->kind == GP_EV_CPU_OP)
                    used[sh - t->op_shapes].op = e->name;
            }
        }
    }
    return GP_OK;
}

/* A JSON text without the whitespace outside its strings (Kineto pretty-prints the shapes). */
static gp_status json_compact(const char *s, gp__buf *b)
{
    b->len = 0;
    bool in_str = false;
    gp_status st = gp__buf_append(b, "", 0);
    for (const char *p = s; *p && st == GP_OK; p++) {
        if (!in_str && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
            continue;
        size_t n = in_str && *p == '\\' && p[1] ? 2 : 1; /* an escape: both bytes */
        in_str ^= n == 1 && *p == '"';
        st = gp__buf_append(b, p, n);
        p += n - 1;
    }
    return st;
}

/* The op shapes objects ({"op": name when emitted, "Input Dims": JSON text, ...}) of the marked
 * entries. */
static gp_status shape_objs(const gp_timeline *tl, args_tab *a, shape_use **shapes)
{
    static const char *const keys[] = {"Input Dims", "Input type", "Input Strides",
                                       "Concrete Inputs"};
    gp__buf text = {0};
    gp_status s = GP_OK;
    for (size_t ti = 0; ti < tl->n_traces && s == GP_OK; ti++) {
        const gp_trace *t = tl->traces[ti];
        for (size_t k = 0; shapes[ti] && k < t->n_op_shapes && s == GP_OK; k++) {
            shape_use *u = &shapes[ti][k];
            if (!u->used)
                continue;
            const gp_op_shapes *sh = &t->op_shapes[k];
            gp_strid v[] = {sh->dims, sh->types, sh->strides, sh->concrete};
            gp__jw w;
            gp__jw_init(&w, NULL);
            w.html_safe = true;
            gp__jw_obj_begin(&w);
            if (u->op)
                gp__jw_kv_str(&w, "op", gp_trace_str(t, u->op));
            for (size_t j = 0; j < GP_ARRAY_LEN(keys); j++) {
                if (!v[j])
                    continue;
                if ((s = json_compact(gp_trace_str(t, v[j]), &text)) != GP_OK)
                    break;
                gp__jw_key(&w, keys[j]);
                gp__jw_strn(&w, text.data, text.len);
            }
            gp__jw_obj_end(&w);
            if (s == GP_OK)
                s = args_obj(a, &w, &u->obj);
            gp__buf_free(&w.buf);
            if (s != GP_OK)
                break;
            a->count[u->obj]++;
        }
    }
    gp__buf_free(&text);
    return s;
}

/* Numbers the objects by use, most used first (1, 2, ...: few digits for the common ones), and
 * writes them in that order. rank[id] receives the number of object id. */
static gp_status write_objs(const args_tab *a, uint32_t *rank, gp__out *o)
{
    size_t n = a->objs.n - 1;
    obj_use *u = malloc((n ? n : 1) * sizeof *u);
    if (!u)
        return GP_ENOMEM;
    for (size_t i = 0; i < n; i++)
        u[i] = (obj_use){(uint32_t)i + 1, a->count[i + 1]};
    if (!sort_obj_use(u, n)) {
        free(u);
        return GP_ENOMEM;
    }
    rank[0] = 0;
    for (size_t i = 0; i < n; i++) {
        rank[u[i].id] = (uint32_t)i + 1;
        if (i)
            gp__out_raw(o, ",", 1);
        gp__out_raw(o, a->objs.ents[u[i].id].s, a->objs.ents[u[i].id].len);
    }
    free(u);
    return GP_OK;
}

/* Second pass: per slice row [External id, object number, ...] (0 for counter rows). */
static void write_rows(const gp_timeline *tl, const args_tab *a, const uint32_t *rank, gp__out *o)
{
    size_t j = 0;
    for (size_t r = 0; r < tl->n_rows; r++) {
        const gp_tl_row *row = &tl->rows[r];
        if (r)
            gp__out_raw(o, ",", 1);
        if (!row->depth) {
            gp__out_raw(o, "0", 1);
            continue;
        }
        const gp_track *tr = &tl->traces[row->trace]->tracks[row->track];
        int64_t px = 0;
        bool first = true;
        gp__out_raw(o, "[", 1);
        for (size_t i = 0; i < tr->n_events; i++) {
            if (!gp__tl_emitted(row, i))
                continue;
            if (!first)
                gp__out_raw(o, ",", 1);
            first = false;
            out_id(o, tr->events[i].external_id, &px);
            gp__out_raw(o, ",", 1);
            gp__out_int(o, rank[a->events[j++]]);
        }
        gp__out_raw(o, "]", 1);
    }
}

/* Opens the entry of trace t in a per-rank list (`"key":[{"r":rank,"x":[`), closing the previous
 * entry; *any says whether the list is open. */
static void rank_entry(gp__out *o, const char *key, const gp_trace *t, bool *any)
{
    if (*any) {
        gp__out_str(o, "]},{\"r\":");
    } else {
        gp__out_str(o, ",\"");
        gp__out_str(o, key);
        gp__out_str(o, "\":[{\"r\":");
    }
    *any = true;
    gp__out_int(o, t->rank);
    gp__out_str(o, ",\"x\":[");
}

/* Per trace with correlation ids: {"r": rank, "x": [its distinct ids, ascending]}: the exact id of
 * correlation number k (the main block's) is x[k - 1]. */
static gp_status write_corr(const gp_timeline *tl, gp__out *o)
{
    gp__corr_tab ct = {NULL, 0};
    gp_status s = GP_OK;
    bool any = false;
    for (uint32_t ti = 0; ti < tl->n_traces && s == GP_OK; ti++) {
        if ((s = gp__tl_corr_build(tl, ti, &ct)) != GP_OK || ct.n == 0)
            continue;
        rank_entry(o, "corr", tl->traces[ti], &any);
        int64_t prev = 0;
        for (size_t i = 0; i < ct.n; i++) {
            if (i)
                gp__out_raw(o, ",", 1);
            out_id(o, (int64_t)(ct.keys[i] ^ ((uint64_t)1 << 63)), &prev);
        }
    }
    if (any)
        gp__out_str(o, "]}]");
    free(ct.keys);
    return s;
}

/* Per trace with marked op shapes: {"r": rank, "x": [External id, object number, ...]}, the ids
 * ascending and delta-encoded as in the rows. */
static void write_ops(const gp_timeline *tl, shape_use *const *shapes, const uint32_t *rank,
                      gp__out *o)
{
    bool any = false;
    for (size_t ti = 0; ti < tl->n_traces; ti++) {
        const gp_trace *t = tl->traces[ti];
        int64_t px = 0;
        bool first = true;
        for (size_t k = 0; shapes[ti] && k < t->n_op_shapes; k++) {
            if (!shapes[ti][k].used)
                continue;
            if (first)
                rank_entry(o, "ops", t, &any);
            else
                gp__out_raw(o, ",", 1);
            first = false;
            out_id(o, t->op_shapes[k].external_id, &px);
            gp__out_raw(o, ",", 1);
            gp__out_int(o, rank[shapes[ti][k].obj]);
        }
    }
    if (any)
        gp__out_str(o, "]}]");
}

/* The side data of the details panel, parsed by the page only when an event is hovered or
 * selected: {"args":[distinct argument objects, most used first], "rows":[per row: [External id,
 * 1 + index into args or 0, ...] for each emitted event, in the order of "e"; 0 for counter
 * rows], "corr":[per rank: {"r":rank, "x":[correlation ids by number]}], "ops":[per rank whose
 * trace has op shapes: {"r":rank, "x":[External id, 1 + index into args, ...]}]} ("corr" and
 * "ops" absent when empty; docs/internals/report.md). */
gp_status gp__tl_args_json(const gp_timeline *tl, gp__out *o)
{
    args_tab a = {0};
    shape_use **shapes = calloc(tl->n_traces ? tl->n_traces : 1, sizeof *shapes);
    uint32_t *rank = NULL;
    gp_status s = shapes ? GP_OK : GP_ENOMEM;
    for (size_t ti = 0; s == GP_OK && ti < tl->n_traces; ti++)
        if (tl->traces[ti]->n_op_shapes &&
            !(shapes[ti] = calloc(tl->traces[ti]->n_op_shapes, sizeof **shapes)))
            s = GP_ENOMEM;
    if (s == GP_OK && (s = gp__strtab_init(&a.keys)) == GP_OK &&
        (s = gp__strtab_init(&a.objs)) == GP_OK &&
        (s = gp__grow((void **)&a.count, &a.cap_count, sizeof *a.count, 1)) == GP_OK) {
        memset(a.count, 0, a.cap_count * sizeof *a.count); /* the whole first block, not [0] */
        s = collect_args(tl, &a, shapes);
    }
    if (s == GP_OK)
        s = shape_objs(tl, &a, shapes);
    if (s == GP_OK && !(rank = malloc(a.objs.n * sizeof *rank)))
        s = GP_ENOMEM;
    if (s == GP_OK) {
        gp__out_str(o, "{\"args\":[");
        s = write_objs(&a, rank, o);
    }
    if (s == GP_OK) {
        gp__out_str(o, "],\"rows\":[");
        write_rows(tl, &a, rank, o);
        gp__out_str(o, "]");
        s = write_corr(tl, o);
        write_ops(tl, shapes, rank, o);
        gp__out_str(o, "}");
    }
    for (size_t ti = 0; shapes && ti < tl->n_traces; ti++)
        free(shapes[ti]);
    free(shapes);
    free(rank);
    free(a.obj);
    free(a.count);
    free(a.events);
    gp__strtab_free(&a.keys);
    gp__strtab_free(&a.objs);
    return s != GP_OK ? s : o->err;
}
