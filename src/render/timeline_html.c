/* Timeline renderer: formats a gp_timeline (rows and depths laid out by timeline.c) as one
 * self-contained HTML page: compact delta-encoded JSON drawn by assets/timeline.js on a canvas. */
#include <stdlib.h>
#include <string.h>

#include "core/imap.h"
#include "core/json_writer.h"
#include "core/strtab.h"
#include "core/util.h"
#include "render/render_internal.h"

/* Output buffer flushed to the stream in large blocks; numbers are formatted by hand because a
 * 1.5 M-event page holds about 7 M of them. */
typedef struct out {
    FILE *fp;
    gp__buf b;
    gp_status err;
} out;

/* Writes the buffer to the stream (an out without a stream keeps everything in memory). */
static void out_flush(out *o)
{
    if (!o->fp)
        return;
    if (o->b.len && fwrite(o->b.data, 1, o->b.len, o->fp) != o->b.len)
        o->err = GP_EIO;
    o->b.len = 0;
}

static void out_raw(out *o, const char *s, size_t n)
{
    if (o->err)
        return;
    if (gp__buf_append(&o->b, s, n) != GP_OK)
        o->err = GP_ENOMEM;
    else if (o->b.len >= (1u << 20))
        out_flush(o);
}

static void out_str(out *o, const char *s)
{
    out_raw(o, s, strlen(s));
}

static void out_int(out *o, int64_t v)
{
    char tmp[24];
    char *p = tmp + sizeof tmp;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    out_raw(o, p, (size_t)(tmp + sizeof tmp - p));
}

/* A JSON string, escaped for embedding in HTML (<, >, & as \u00XX). */
static void out_jstr(out *o, const char *s)
{
    if (o->err)
        return;
    if (gp__buf_append(&o->b, "\"", 1) != GP_OK || gp__json_escape(&o->b, s, strlen(s), true) ||
        gp__buf_append(&o->b, "\"", 1) != GP_OK)
        o->err = GP_ENOMEM;
}

static void out_double(out *o, double v)
{
    char tmp[40];
    int n = snprintf(tmp, sizeof tmp, "%.6g", v);
    if (strchr(tmp, 'n') || strchr(tmp, 'i')) /* nan, inf */
        out_str(o, "null");
    else
        out_raw(o, tmp, (size_t)n);
}

static const char *row_kind_name(gp_tl_row_kind k)
{
    static const char *const names[] = {[GP_TL_CPU] = "cpu",
                                        [GP_TL_GPU] = "gpu",
                                        [GP_TL_COUNTER] = "counter",
                                        [GP_TL_MEMORY] = "memory"};
    return GP_NAME_OF(names, k, "other");
}

/* Dense correlation numbers of one trace: each distinct correlation id gets 1, 2, ... in order of
 * first appearance, so the page's delta encoding stays small and exact whatever the ids are (ids
 * near the int64 limits overflowed a plain difference). INT64_MIN, the map's empty key, is kept
 * apart. */
typedef struct corr_map {
    gp__imap m;
    uint64_t next, min_ord;
} corr_map;

static gp_status corr_ord(corr_map *c, int64_t id, uint64_t *ord)
{
    if (id == INT64_MIN) {
        if (!c->min_ord)
            c->min_ord = ++c->next;
        *ord = c->min_ord;
        return GP_OK;
    }
    if (gp__imap_get(&c->m, id, ord))
        return GP_OK;
    *ord = ++c->next;
    return gp__imap_put(&c->m, id, *ord);
}

/* Whether a slice row emits event i: drawn with the Python frames, or without them. */
static bool emitted(const gp_tl_row *row, size_t i)
{
    return row->depth[i] != 255 || (row->depth_nopy && row->depth_nopy[i] != 255);
}

/* The events of a slice row: dts, dur, name, level code, correlation (docs/internals/report.md).
 */
static gp_status row_events(const gp_timeline *tl, const gp_tl_row *row, const gp__imap *names,
                            corr_map *cm, out *o)
{
    const gp_trace *t = tl->traces[row->trace];
    const gp_track *tr = &t->tracks[row->track];
    gp_ns prev = tl->start;
    uint64_t prev_corr = 0;
    bool first = true;
    for (size_t i = 0; i < tr->n_events; i++) {
        const gp_event *e = &tr->events[i];
        if (!emitted(row, i))
            continue;
        uint64_t v = 0;
        (void)gp__imap_get(names, (int64_t)(((uint64_t)row->trace << 32) | e->name), &v);
        if (!first)
            out_raw(o, ",", 1);
        first = false;
        out_int(o, e->ts - prev);
        out_raw(o, ",", 1);
        out_int(o, e->dur);
        out_raw(o, ",", 1);
        out_int(o, (int64_t)v);
        out_raw(o, ",", 1);
        int64_t code = (int64_t)row->depth[i] * 16 + e->kind;
        if (row->depth_nopy && e->kind != GP_EV_PYTHON)
            code += (int64_t)row->depth_nopy[i] * 4096;
        out_int(o, code);
        out_raw(o, ",", 1);
        if (e->correlation == 0) {
            out_raw(o, "0", 1);
        } else {
            uint64_t ord;
            gp_status s = corr_ord(cm, e->correlation, &ord);
            if (s != GP_OK)
                return s;
            /* ordinals are at most the number of events: the difference cannot overflow */
            int64_t d = (int64_t)ord - (int64_t)prev_corr;
            out_int(o, d >= 0 ? d + 1 : d);
            prev_corr = ord;
        }
        prev = e->ts;
    }
    return GP_OK;
}

/* The timeline data object (see docs/internals/report.md for the encoding). */
static gp_status timeline_json(const gp_timeline *tl, out *o)
{
    gp__imap names;
    char **list = NULL; /* pointers into the traces' string tables */
    size_t n_names = 0, cap_names = 0;
    corr_map cm = {{0}, 0, 0};
    gp_status s = gp__imap_init(&names, 1024);
    if (s != GP_OK)
        return s;
    /* Name table: every emitted event's name, numbered by first appearance. */
    for (size_t r = 0; r < tl->n_rows && s == GP_OK; r++) {
        const gp_tl_row *row = &tl->rows[r];
        if (!row->depth)
            continue;
        const gp_trace *t = tl->traces[row->trace];
        const gp_track *tr = &t->tracks[row->track];
        for (size_t i = 0; i < tr->n_events; i++) {
            if (!emitted(row, i))
                continue;
            int64_t key = (int64_t)(((uint64_t)row->trace << 32) | tr->events[i].name);
            uint64_t v;
            if (gp__imap_get(&names, key, &v))
                continue;
            char **slot = GP_PUSH(list, n_names, cap_names);
            if (!slot) {
                s = GP_ENOMEM;
                break;
            }
            *slot = (char *)gp_trace_str(t, tr->events[i].name);
            s = gp__imap_put(&names, key, n_names - 1);
        }
    }
    if (s != GP_OK)
        goto done;
    out_str(o, "{\"t0\":\"");
    out_int(o, tl->start);
    out_str(o, "\",\"span\":");
    out_int(o, tl->end - tl->start);
    out_str(o, ",\"cpuActive\":");
    out_int(o, tl->cpu_active);
    out_str(o, ",\"gpuActive\":");
    out_int(o, tl->gpu_active);
    out_str(o, ",\"overlap\":");
    out_int(o, tl->overlap);
    out_str(o, ",\"events\":");
    out_int(o, (int64_t)tl->n_events);
    out_str(o, ",\"ranks\":");
    out_int(o, (int64_t)tl->n_traces);
    out_str(o, ",\"kinds\":[");
    for (int k = 0; k < GP_EV_KIND_COUNT; k++) {
        if (k)
            out_str(o, ",");
        out_jstr(o, gp_event_kind_name((gp_event_kind)k));
    }
    out_str(o, "],\"names\":[");
    for (size_t i = 0; i < n_names; i++) {
        if (i)
            out_str(o, ",");
        out_jstr(o, list[i]);
    }
    out_str(o, "],\"rows\":[");
    uint32_t cm_trace = UINT32_MAX;
    for (size_t r = 0; r < tl->n_rows && s == GP_OK; r++) {
        const gp_tl_row *row = &tl->rows[r];
        if (r)
            out_str(o, ",");
        out_str(o, "{\"l\":");
        out_jstr(o, row->label);
        out_str(o, ",\"k\":\"");
        out_str(o, row_kind_name(row->kind));
        out_str(o, "\",\"r\":");
        out_int(o, row->rank);
        if (row->depth) {
            if (row->trace != cm_trace) { /* correlation numbers are per trace (rank) */
                gp__imap_free(&cm.m);
                cm.next = cm.min_ord = 0;
                if ((s = gp__imap_init(&cm.m, 1024)) != GP_OK)
                    break;
                cm_trace = row->trace;
            }
            out_str(o, ",\"d\":");
            out_int(o, row->max_depth);
            if (row->depth_nopy) {
                out_str(o, ",\"dn\":");
                out_int(o, row->max_depth_nopy);
            }
            out_str(o, ",\"e\":[");
            s = row_events(tl, row, &names, &cm, o);
            out_str(o, "]");
        } else {
            out_str(o, ",\"c\":[");
            gp_ns prev = tl->start;
            for (size_t i = 0; i < row->n_samples; i++) {
                if (i)
                    out_raw(o, ",", 1);
                out_int(o, row->sample_ts[i] - prev);
                out_raw(o, ",", 1);
                out_double(o, row->sample_val[i]);
                prev = row->sample_ts[i];
            }
            out_str(o, "]");
        }
        out_str(o, "}");
    }
    out_str(o, "]}");
    if (s == GP_OK)
        s = o->err;
done:
    gp__imap_free(&cm.m);
    free(list);
    gp__imap_free(&names);
    return s;
}

/* The kind-specific fields of an event as one JSON object (html-safe), the names as Kineto's args
 * spell them; empty when it has none. */
static void event_args(const gp_trace *t, const gp_event *e, gp__jw *w)
{
    const gp_gpu_info *g = gp_event_gpu_info(t, e);
    const char *aj = gp_event_args_json(t, e);
    if (g) {
        gp__jw_obj_begin(w);
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
        static const char *const ik[] = {"registers per thread", "shared memory", "queued",
                                         "context"};
        int64_t iv[] = {g->registers_per_thread, g->shared_memory, g->queued, g->context};
        for (size_t k = 0; k < GP_ARRAY_LEN(ik); k++)
            if (iv[k] >= 0)
                gp__jw_kv_int(w, ik[k], iv[k]);
        static const char *const fk[] = {"blocks per SM", "warps per SM",
                                         "est. achieved occupancy %"};
        double fv[] = {g->blocks_per_sm, g->warps_per_sm, g->occupancy_pct};
        for (size_t k = 0; k < GP_ARRAY_LEN(fk); k++)
            if (fv[k] > 0)
                gp__jw_kv_double(w, fk[k], (double)(float)fv[k]);
        static const char *const lk[] = {"bytes",          "graph id",      "graph node id",
                                         "wait_on_stream", "in msg nelems", "out msg nelems",
                                         "group size"};
        int64_t lv[] = {g->bytes,         g->graph_id,       g->graph_node_id, g->wait_on_stream,
                        g->in_msg_nelems, g->out_msg_nelems, g->group_size};
        for (size_t k = 0; k < GP_ARRAY_LEN(lk); k++)
            if (lv[k] >= 0)
                gp__jw_kv_int(w, lk[k], lv[k]);
        if (g->bandwidth_gbps > 0)
            gp__jw_kv_double(w, "memory bandwidth (GB/s)", g->bandwidth_gbps);
        static const char *const sk[] = {"cuda_sync_kind", "Collective name", "dtype", "kind"};
        gp_strid sv[] = {g->sync_kind, g->collective, g->dtype, g->copy_kind};
        for (size_t k = 0; k < GP_ARRAY_LEN(sk); k++)
            if (sv[k])
                gp__jw_kv_str(w, sk[k], gp_trace_str(t, sv[k]));
        gp__jw_obj_end(w);
    } else if (aj) {
        gp__jw_obj_begin(w);
        gp__jw_kv_str(w, "json", aj); /* the source's args, parsed by the page when shown */
        gp__jw_obj_end(w);
    } else if ((e->kind == GP_EV_RUNTIME || e->kind == GP_EV_DRIVER) && e->extra) {
        gp__jw_obj_begin(w);
        gp__jw_kv_int(w, "cbid", (int64_t)e->extra - 1);
        gp__jw_obj_end(w);
    } else if (e->kind == GP_EV_CPU_OP && gp_event_cpu_stream(e) >= 0) {
        gp__jw_obj_begin(w);
        gp__jw_kv_int(w, "stream", gp_event_cpu_stream(e));
        gp__jw_obj_end(w);
    } else if (e->kind == GP_EV_OTHER && e->extra) {
        gp__jw_obj_begin(w);
        gp__jw_kv_str(w, "cat", gp_trace_str(t, e->extra));
        gp__jw_obj_end(w);
    }
}

/* An id (correlation, External id) exactly, delta-encoded against *prev (0: none; a difference
 * d >= 0 written as d + 1). Ids or differences a double cannot hold exactly (beyond 2^52) are
 * written as a decimal string and reset *prev to 0, so no difference can overflow. */
static void out_id(out *o, int64_t v, int64_t *prev)
{
    const int64_t lim = (int64_t)1 << 52;
    if (v == 0) {
        out_raw(o, "0", 1);
    } else if (v > -lim && v<lim && * prev> - lim && *prev < lim) {
        int64_t d = v - *prev;
        out_int(o, d >= 0 ? d + 1 : d);
        *prev = v;
    } else {
        out_raw(o, "\"", 1);
        out_int(o, v);
        out_raw(o, "\"", 1);
        *prev = 0;
    }
}

/* The side data of the details panel, parsed by the page only when an event is hovered or
 * selected: {"args":[distinct argument objects], "rows":[per row: [correlation, External id,
 * 1 + index into args or 0, ...] for each emitted event, in the order of "e"; 0 for counter
 * rows]}. */
static gp_status timeline_args_json(const gp_timeline *tl, out *o)
{
    gp__strtab tab;
    gp_status s = gp__strtab_init(&tab);
    if (s != GP_OK)
        return s;
    out ro = {NULL, {0}, GP_OK}; /* the rows part, written after the table */
    for (size_t r = 0; r < tl->n_rows && s == GP_OK; r++) {
        const gp_tl_row *row = &tl->rows[r];
        if (r)
            out_raw(&ro, ",", 1);
        if (!row->depth) {
            out_raw(&ro, "0", 1);
            continue;
        }
        const gp_trace *t = tl->traces[row->trace];
        const gp_track *tr = &t->tracks[row->track];
        int64_t pc = 0, px = 0;
        bool first = true;
        out_raw(&ro, "[", 1);
        for (size_t i = 0; i < tr->n_events && s == GP_OK; i++) {
            const gp_event *e = &tr->events[i];
            if (!emitted(row, i))
                continue;
            if (!first)
                out_raw(&ro, ",", 1);
            first = false;
            out_id(&ro, e->correlation, &pc);
            out_raw(&ro, ",", 1);
            out_id(&ro, e->external_id, &px);
            out_raw(&ro, ",", 1);
            gp__jw w;
            gp__jw_init(&w, NULL);
            w.html_safe = true;
            event_args(t, e, &w);
            uint32_t id = 0;
            if (w.buf.len && (s = w.err) == GP_OK)
                s = gp__strtab_intern(&tab, w.buf.data, w.buf.len, &id);
            gp__buf_free(&w.buf);
            out_int(&ro, id);
        }
        out_raw(&ro, "]", 1);
    }
    if (s == GP_OK)
        s = ro.err;
    out_str(o, "{\"args\":[");
    for (size_t i = 1; s == GP_OK && i < tab.n; i++) {
        if (i > 1)
            out_raw(o, ",", 1);
        out_raw(o, tab.ents[i].s, tab.ents[i].len);
    }
    out_str(o, "],\"rows\":[");
    if (s == GP_OK)
        out_raw(o, ro.b.data, ro.b.len);
    out_str(o, "]}");
    gp__buf_free(&ro.b);
    gp__strtab_free(&tab);
    return s != GP_OK ? s : o->err;
}

/* Shared with the dashboard: the data script element of an embedded timeline. */
/* One <script id="ID" type="application/json"> element holding what body writes. */
static gp_status json_script(const gp_timeline *tl, const char *id,
                             gp_status (*body)(const gp_timeline *, out *), FILE *fp)
{
    out o = {fp, {0}, GP_OK};
    out_str(&o, "<script id=\"");
    out_str(&o, id);
    out_str(&o, "\" type=\"application/json\">");
    gp_status s = body(tl, &o);
    out_str(&o, "</script>\n");
    if (s == GP_OK)
        s = o.err;
    out_flush(&o);
    gp__buf_free(&o.b);
    return s != GP_OK ? s : o.err;
}

gp_status gp__timeline_data_script(const gp_timeline *tl, const char *id, FILE *fp)
{
    return json_script(tl, id, timeline_json, fp);
}

gp_status gp__timeline_args_script(const gp_timeline *tl, const char *id, FILE *fp)
{
    char aid[96];
    snprintf(aid, sizeof aid, "%s-args", id);
    return json_script(tl, aid, timeline_args_json, fp);
}

static double pct(gp_ns a, gp_ns b)
{
    return b > 0 ? 100.0 * (double)a / (double)b : 0.0;
}

gp_status gp_timeline_render_html(const gp_timeline *tl, const char *title, FILE *fp)
{
    if (!title)
        title = "gpuprof timeline";
    fputs("<!DOCTYPE html>\n<html lang=\"en\" data-ready=\"0\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
          fp);
    gp__html_str(fp, title);
    fprintf(fp, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<header>\n<h1>",
            gp__asset_timeline_css);
    gp__html_str(fp, title);
    char span[32], cpu[32], gpu[32], ov[32];
    gp_ns total = tl->end - tl->start;
    gp__fmt_dur(span, sizeof span, total);
    gp__fmt_dur(cpu, sizeof cpu, tl->cpu_active);
    gp__fmt_dur(gpu, sizeof gpu, tl->gpu_active);
    gp__fmt_dur(ov, sizeof ov, tl->overlap);
    gp_ns denom = total * (gp_ns)(tl->n_traces ? tl->n_traces : 1);
    fprintf(fp,
            "</h1>\n<p class=\"gp-figs\"><span>span <b>%s</b></span> "
            "<span id=\"gp-cpu-active\">CPU active <b>%s</b> (%.1f%%)</span> "
            "<span id=\"gp-gpu-active\">GPU active <b>%s</b> (%.1f%%)</span> "
            "<span id=\"gp-overlap\">CPU/GPU overlap <b>%s</b> (%.1f%%)</span> "
            "<span><b>%llu</b> events</span></p>\n"
            "<p class=\"gp-help\">wheel: scroll tracks &middot; ctrl/&#8984;+wheel or W/S: zoom "
            "&middot; drag or shift+wheel or A/D: pan &middot; 0: whole trace &middot; click a "
            "label: collapse or expand a track or rank &middot; click an event: its details and "
            "launch/kernel flow &middot; shift+drag: select a range (per-name totals)</p>\n"
            "</header>\n"
            "<div id=\"gp-tl\" class=\"gp-tl\" data-src=\"gp-tl-data\"></div>\n"
            "<div id=\"gp-tl-details\" class=\"gp-tl-details\">Click an event for its "
            "details.</div>\n<div id=\"gp-tl-agg\" class=\"gp-tl-agg\"></div>\n",
            span, cpu, pct(tl->cpu_active, denom), gpu, pct(tl->gpu_active, denom), ov,
            pct(tl->overlap, denom), (unsigned long long)tl->n_events);
    gp_status s = gp__timeline_data_script(tl, "gp-tl-data", fp);
    if (s != GP_OK)
        return s;
    /* the side data after the script: the first paint does not wait for the parser to read it */
    fprintf(fp, "<script>\n%s</script>\n", gp__asset_timeline_js);
    if ((s = gp__timeline_args_script(tl, "gp-tl-data", fp)) != GP_OK)
        return s;
    fputs("</body>\n</html>\n", fp);
    return ferror(fp) ? GP_EIO : GP_OK;
}

typedef struct tl_ctx {
    const gp_timeline *tl;
    const char *title;
} tl_ctx;

static gp_status tl_cb(const void *ctx, FILE *fp)
{
    const tl_ctx *c = ctx;
    return gp_timeline_render_html(c->tl, c->title, fp);
}

gp_status gp_timeline_write_html(const gp_timeline *tl, const char *title, const char *path,
                                 gp_error *err)
{
    tl_ctx c = {tl, title};
    return gp__render_to_file(path, tl_cb, &c, err);
}
