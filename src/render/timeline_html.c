/* Timeline renderer: formats a gp_timeline (rows and depths laid out by timeline.c) as one
 * self-contained HTML page: compact delta-encoded JSON drawn by assets/timeline.js on a canvas. */
#include <stdlib.h>
#include <string.h>

#include "core/imap.h"
#include "core/json_writer.h"
#include "core/util.h"
#include "render/render_internal.h"

/* Output buffer flushed to the stream in large blocks; numbers are formatted by hand because a
 * 1.5 M-event page holds about 7 M of them. */
typedef struct out {
    FILE *fp;
    gp__buf b;
    gp_status err;
} out;

static void out_flush(out *o)
{
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

/* The timeline data object (see docs/internals/report.md for the encoding). */
static gp_status timeline_json(const gp_timeline *tl, out *o)
{
    gp__imap names;
    char **list = NULL; /* pointers into the traces' string tables */
    size_t n_names = 0, cap_names = 0;
    gp_status s = gp__imap_init(&names, 1024);
    if (s != GP_OK)
        return s;
    /* Name table: every drawn event's name, numbered by first appearance. */
    for (size_t r = 0; r < tl->n_rows && s == GP_OK; r++) {
        const gp_tl_row *row = &tl->rows[r];
        if (!row->depth)
            continue;
        const gp_trace *t = tl->traces[row->trace];
        const gp_track *tr = &t->tracks[row->track];
        for (size_t i = 0; i < tr->n_events; i++) {
            if (row->depth[i] == 255)
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
    for (size_t r = 0; r < tl->n_rows; r++) {
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
            const gp_trace *t = tl->traces[row->trace];
            const gp_track *tr = &t->tracks[row->track];
            out_str(o, ",\"d\":");
            out_int(o, row->max_depth);
            out_str(o, ",\"e\":[");
            gp_ns prev = tl->start;
            int64_t prev_corr = 0;
            bool first = true;
            for (size_t i = 0; i < tr->n_events; i++) {
                const gp_event *e = &tr->events[i];
                if (row->depth[i] == 255)
                    continue;
                uint64_t v = 0;
                (void)gp__imap_get(&names, (int64_t)(((uint64_t)row->trace << 32) | e->name), &v);
                if (!first)
                    out_raw(o, ",", 1);
                first = false;
                out_int(o, e->ts - prev);
                out_raw(o, ",", 1);
                out_int(o, e->dur);
                out_raw(o, ",", 1);
                out_int(o, (int64_t)v);
                out_raw(o, ",", 1);
                out_int(o, (int64_t)row->depth[i] * 16 + e->kind);
                out_raw(o, ",", 1);
                if (e->correlation == 0) {
                    out_raw(o, "0", 1);
                } else {
                    int64_t d = e->correlation - prev_corr;
                    out_int(o, d >= 0 ? d + 1 : d);
                    prev_corr = e->correlation;
                }
                prev = e->ts;
            }
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
    s = o->err;
done:
    free(list);
    gp__imap_free(&names);
    return s;
}

/* Shared with the dashboard: the data script element of an embedded timeline. */
gp_status gp__timeline_data_script(const gp_timeline *tl, const char *id, FILE *fp)
{
    out o = {fp, {0}, GP_OK};
    out_str(&o, "<script id=\"");
    out_str(&o, id);
    out_str(&o, "\" type=\"application/json\">");
    gp_status s = timeline_json(tl, &o);
    out_str(&o, "</script>\n");
    if (s == GP_OK)
        s = o.err;
    out_flush(&o);
    gp__buf_free(&o.b);
    return s != GP_OK ? s : o.err;
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
            "<p class=\"gp-help\">drag: pan &middot; wheel or W/S: zoom &middot; shift+wheel: "
            "scroll rows &middot; A/D: pan &middot; click: details and launch/kernel flow "
            "&middot; shift+drag: measure &middot; 0: reset</p>\n</header>\n"
            "<div id=\"gp-tl\" class=\"gp-tl\" data-src=\"gp-tl-data\"></div>\n"
            "<pre id=\"gp-tl-details\" class=\"gp-tl-details\">Click an event for its "
            "details.</pre>\n",
            span, cpu, pct(tl->cpu_active, denom), gpu, pct(tl->gpu_active, denom), ov,
            pct(tl->overlap, denom), (unsigned long long)tl->n_events);
    gp_status s = gp__timeline_data_script(tl, "gp-tl-data", fp);
    if (s != GP_OK)
        return s;
    fprintf(fp, "<script>\n%s</script>\n</body>\n</html>\n", gp__asset_timeline_js);
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
