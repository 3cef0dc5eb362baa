/* Timeline renderer: formats a gp_timeline (rows and depths laid out by timeline.c) as one
 * self-contained HTML page: compact delta-encoded JSON drawn by assets/timeline.js on a canvas. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/imap.h"
#include "core/radix.h"
#include "core/util.h"
#include "render/render_internal.h"
#include "render/timeline_out.h"

static const char *row_kind_name(gp_tl_row_kind k)
{
    static const char *const names[] = {[GP_TL_CPU] = "cpu",
                                        [GP_TL_GPU] = "gpu",
                                        [GP_TL_COUNTER] = "counter",
                                        [GP_TL_MEMORY] = "memory"};
    return GP_NAME_OF(names, k, "other");
}

static uint64_t corr_key(int64_t id)
{
    return (uint64_t)id ^ ((uint64_t)1 << 63);
}

gp_status gp__tl_corr_build(const gp_timeline *tl, uint32_t trace, gp__corr_tab *c)
{
    size_t n = 0;
    for (size_t r = 0; r < tl->n_rows; r++)
        if (tl->rows[r].trace == trace && tl->rows[r].depth)
            n += tl->traces[trace]->tracks[tl->rows[r].track].n_events;
    uint64_t *k = malloc((n ? n : 1) * sizeof *k), *v = calloc(n ? n : 1, sizeof *v);
    gp_status s = k && v ? GP_OK : GP_ENOMEM;
    n = 0;
    for (size_t r = 0; s == GP_OK && r < tl->n_rows; r++) {
        const gp_tl_row *row = &tl->rows[r];
        if (row->trace != trace || !row->depth)
            continue;
        const gp_track *tr = &tl->traces[trace]->tracks[row->track];
        for (size_t i = 0; i < tr->n_events; i++)
            if (tr->events[i].correlation != 0 && gp__tl_emitted(row, i))
                k[n++] = corr_key(tr->events[i].correlation);
    }
    if (s == GP_OK)
        s = gp__radix_sort_kv(k, v, n);
    size_t u = 0;
    for (size_t i = 0; s == GP_OK && i < n; i++)
        if (u == 0 || k[i] != k[u - 1])
            k[u++] = k[i];
    free(v);
    free(c->keys);
    c->keys = k;
    c->n = s == GP_OK ? u : 0;
    return s;
}

/* The number of correlation id `id` (which the table holds), searched from *cur, the position of
 * the row's previous id: ids mostly rise along a row, so this is mostly a step. */
uint64_t gp__tl_corr_num(const gp__corr_tab *c, int64_t id, size_t *cur)
{
    uint64_t key = corr_key(id);
    size_t lo, hi, step = 1, n = c->n;
    if (*cur < n && c->keys[*cur] == key)
        return *cur + 1;
    if (*cur < n && c->keys[*cur] < key) { /* gallop up: every key before lo is below */
        lo = *cur + 1;
        while (lo + step - 1 < n && c->keys[lo + step - 1] < key) {
            lo += step;
            step *= 2;
        }
        hi = GP_MIN(lo + step - 1, n);
    } else { /* gallop down: keys[hi] >= key (or hi == n) */
        hi = GP_MIN(*cur, n);
        while (hi >= step && c->keys[hi - step] >= key) {
            hi -= step;
            step *= 2;
        }
        lo = hi >= step ? hi - step + 1 : 0;
    }
    while (lo < hi) { /* the first key >= key */
        size_t m = lo + (hi - lo) / 2;
        if (c->keys[m] < key)
            lo = m + 1;
        else
            hi = m;
    }
    *cur = lo;
    return lo + 1;
}

/* The events of a slice row: dts, dur, name, level code, correlation (docs/internals/report.md).
 */
static void row_events(const gp_timeline *tl, const gp_tl_row *row, const gp__imap *names,
                       const gp__corr_tab *ct, gp__out *o)
{
    const gp_trace *t = tl->traces[row->trace];
    const gp_track *tr = &t->tracks[row->track];
    gp_ns prev = tl->start;
    uint64_t prev_corr = 0;
    size_t cur = 0;
    bool first = true;
    for (size_t i = 0; i < tr->n_events; i++) {
        const gp_event *e = &tr->events[i];
        if (!gp__tl_emitted(row, i))
            continue;
        uint64_t v = 0;
        (void)gp__imap_get(names, (int64_t)(((uint64_t)row->trace << 32) | e->name), &v);
        if (!first)
            gp__out_raw(o, ",", 1);
        first = false;
        gp__out_int(o, e->ts - prev);
        gp__out_raw(o, ",", 1);
        gp__out_int(o, e->dur);
        gp__out_raw(o, ",", 1);
        gp__out_int(o, (int64_t)v);
        gp__out_raw(o, ",", 1);
        int64_t code = (int64_t)row->depth[i] * 16 + e->kind;
        if (row->depth_nopy && e->kind != GP_EV_PYTHON)
            code += (int64_t)row->depth_nopy[i] * 4096;
        gp__out_int(o, code);
        gp__out_raw(o, ",", 1);
        if (e->correlation == 0) {
            gp__out_raw(o, "0", 1);
        } else {
            uint64_t ord = gp__tl_corr_num(ct, e->correlation, &cur);
            /* numbers are at most the number of events: the difference cannot overflow */
            int64_t d = (int64_t)ord - (int64_t)prev_corr;
            gp__out_int(o, d >= 0 ? d + 1 : d);
            prev_corr = ord;
        }
        prev = e->ts;
    }
}

/* A row's collective members: "cl":[event number, 1 + collective index, ...], the event number
 * counting the row's emitted events (timeline.js's idx). */
static void row_colls(const gp_timeline *tl, const gp_tl_row *row, gp__out *o)
{
    const gp_track *tr = &tl->traces[row->trace]->tracks[row->track];
    size_t k = 0;
    bool first = true;
    gp__out_str(o, ",\"cl\":[");
    for (size_t i = 0; i < tr->n_events; i++) {
        if (!gp__tl_emitted(row, i))
            continue;
        if (row->coll[i]) {
            if (!first)
                gp__out_raw(o, ",", 1);
            first = false;
            gp__out_int(o, (int64_t)k);
            gp__out_raw(o, ",", 1);
            gp__out_int(o, row->coll[i]);
        }
        k++;
    }
    gp__out_str(o, "]");
}

/* The job's collectives: "colls":[[name, group, index, members, latency, start skew, trusted]]. */
static void colls_json(const gp_timeline *tl, gp__out *o)
{
    gp__out_str(o, ",\"colls\":[");
    for (size_t i = 0; i < tl->n_colls; i++) {
        const gp_tl_coll *c = &tl->colls[i];
        gp__out_str(o, i ? ",[" : "[");
        gp__out_jstr(o, c->name);
        gp__out_raw(o, ",", 1);
        gp__out_jstr(o, c->group);
        gp__out_raw(o, ",", 1);
        gp__out_int(o, (int64_t)c->index);
        gp__out_raw(o, ",", 1);
        gp__out_int(o, c->n_members);
        gp__out_raw(o, ",", 1);
        gp__out_int(o, c->latency);
        gp__out_raw(o, ",", 1);
        gp__out_int(o, c->start_skew);
        gp__out_str(o, c->trusted ? ",1]" : ",0]");
    }
    gp__out_str(o, "]");
}

/* The timeline data object (see docs/internals/report.md for the encoding). */
static gp_status timeline_json(const gp_timeline *tl, gp__out *o)
{
    gp__imap names;
    char **list = NULL; /* pointers into the traces' string tables */
    size_t n_names = 0, cap_names = 0;
    gp__corr_tab ct = {NULL, 0};
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
            if (!gp__tl_emitted(row, i))
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
    gp__out_str(o, "{\"t0\":\"");
    gp__out_int(o, tl->start);
    gp__out_str(o, "\",\"span\":");
    gp__out_int(o, tl->end - tl->start);
    gp__out_str(o, ",\"cpuActive\":");
    gp__out_int(o, tl->cpu_active);
    gp__out_str(o, ",\"gpuActive\":");
    gp__out_int(o, tl->gpu_active);
    gp__out_str(o, ",\"overlap\":");
    gp__out_int(o, tl->overlap);
    gp__out_str(o, ",\"events\":");
    gp__out_int(o, (int64_t)tl->n_events);
    gp__out_str(o, ",\"ranks\":");
    gp__out_int(o, (int64_t)tl->n_traces);
    gp__out_str(o, ",\"kinds\":[");
    for (int k = 0; k < GP_EV_KIND_COUNT; k++) {
        if (k)
            gp__out_str(o, ",");
        gp__out_jstr(o, gp_event_kind_name((gp_event_kind)k));
    }
    gp__out_str(o, "],\"names\":[");
    for (size_t i = 0; i < n_names; i++) {
        if (i)
            gp__out_str(o, ",");
        gp__out_jstr(o, list[i]);
    }
    gp__out_str(o, "],\"rows\":[");
    uint32_t ct_trace = UINT32_MAX;
    for (size_t r = 0; r < tl->n_rows && s == GP_OK; r++) {
        const gp_tl_row *row = &tl->rows[r];
        if (r)
            gp__out_str(o, ",");
        gp__out_str(o, "{\"l\":");
        gp__out_jstr(o, row->label);
        gp__out_str(o, ",\"k\":\"");
        gp__out_str(o, row_kind_name(row->kind));
        gp__out_str(o, "\",\"r\":");
        gp__out_int(o, row->rank);
        if (row->depth) {
            if (row->trace != ct_trace) { /* correlation numbers are per trace (rank) */
                if ((s = gp__tl_corr_build(tl, row->trace, &ct)) != GP_OK)
                    break;
                ct_trace = row->trace;
            }
            gp__out_str(o, ",\"d\":");
            gp__out_int(o, row->max_depth);
            if (row->depth_nopy) {
                gp__out_str(o, ",\"dn\":");
                gp__out_int(o, row->max_depth_nopy);
            }
            gp__out_str(o, ",\"e\":[");
            row_events(tl, row, &names, &ct, o);
            gp__out_str(o, "]");
            if (row->coll)
                row_colls(tl, row, o);
        } else {
            gp__out_str(o, ",\"c\":[");
            gp_ns prev = tl->start;
            for (size_t i = 0; i < row->n_samples; i++) {
                if (i)
                    gp__out_raw(o, ",", 1);
                gp__out_int(o, row->sample_ts[i] - prev);
                gp__out_raw(o, ",", 1);
                gp__out_double(o, row->sample_val[i]);
                prev = row->sample_ts[i];
            }
            gp__out_str(o, "]");
        }
        gp__out_str(o, "}");
    }
    gp__out_str(o, "]");
    if (tl->n_colls)
        colls_json(tl, o);
    gp__out_str(o, "}");
    if (s == GP_OK)
        s = o->err;
done:
    free(ct.keys);
    free(list);
    gp__imap_free(&names);
    return s;
}

/* body's JSON inside <script id="ID" type="application/json">...</script> and a newline, or (id
 * NULL) as a document and a newline. */
static gp_status json_script(const gp_timeline *tl, const char *id,
                             gp_status (*body)(const gp_timeline *, gp__out *), FILE *fp)
{
    gp__out o = {fp, {0}, GP_OK};
    if (id) {
        gp__out_str(&o, "<script id=\"");
        gp__out_str(&o, id);
        gp__out_str(&o, "\" type=\"application/json\">");
    }
    gp_status s = body(tl, &o);
    gp__out_str(&o, id ? "</script>\n" : "\n");
    if (s == GP_OK)
        s = o.err;
    gp__out_flush(&o);
    gp__buf_free(&o.b);
    return s != GP_OK ? s : o.err;
}

/* Shared with the dashboard: the data script element of an embedded timeline. */
gp_status gp__timeline_data_script(const gp_timeline *tl, const char *id, FILE *fp)
{
    return json_script(tl, id, timeline_json, fp);
}

gp_status gp__timeline_data_json(const gp_timeline *tl, FILE *fp)
{
    return json_script(tl, NULL, timeline_json, fp);
}

gp_status gp__timeline_args_script(const gp_timeline *tl, const char *id, FILE *fp)
{
    char aid[96];
    snprintf(aid, sizeof aid, "%s-args", id);
    return json_script(tl, aid, gp__tl_args_json, fp);
}

static double pct(gp_ns a, gp_ns b)
{
    return b > 0 ? 100.0 * (double)a / (double)b : 0.0;
}

gp_status gp_timeline_render_html(const gp_timeline *tl, const char *title, FILE *fp)
{
    return gp__timeline_render_page(tl, title, NULL, fp);
}

gp_status gp__timeline_render_page(const gp_timeline *tl, const char *title, const char *nav_html,
                                   FILE *fp)
{
    if (!title)
        title = "gpuprof timeline";
    fputs("<!DOCTYPE html>\n<html lang=\"en\" data-ready=\"0\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
          fp);
    gp__html_str(fp, title);
    fprintf(fp, "</title>\n<style>\n%s</style>\n</head>\n<body>%s\n<header>\n<h1>",
            gp__asset_timeline_css, nav_html ? nav_html : "");
    gp__html_str(fp, title);
    char span[32], cpu[32], gpu[32], ov[32];
    gp_ns total = tl->end - tl->start;
    gp__fmt_dur(span, sizeof span, total);
    gp__fmt_dur(cpu, sizeof cpu, tl->cpu_active);
    gp__fmt_dur(gpu, sizeof gpu, tl->gpu_active);
    gp__fmt_dur(ov, sizeof ov, tl->overlap);
    gp_ns denom = gp__sat_mul(total, (gp_ns)(tl->n_traces ? tl->n_traces : 1));
    /* Shares of the span, times the ranks when several (each rank's figures are of its own
     * span): said next to each share, as every idle or busy share says its denominator. */
    char of[48];
    if (tl->n_traces > 1)
        snprintf(of, sizeof of, "of span &times; %zu ranks", tl->n_traces);
    else
        snprintf(of, sizeof of, "of span");
    fprintf(fp, "</h1>\n<p class=\"gp-figs\"><span>span <b>%s</b></span> ", span);
    /* Both 0 (a profile's ranges are neither CPU ops nor GPU work): the figures say nothing true
     * of the rows below, so they are left out, as on the dashboard. */
    if (tl->cpu_active || tl->gpu_active)
        fprintf(fp,
                "<span id=\"gp-cpu-active\">CPU active <b>%s</b> (%.1f%% %s)</span> "
                "<span id=\"gp-gpu-active\">GPU busy <b>%s</b> (%.1f%% %s)</span> "
                "<span id=\"gp-overlap\">CPU/GPU overlap <b>%s</b> (%.1f%% %s)</span> ",
                cpu, pct(tl->cpu_active, denom), of, gpu, pct(tl->gpu_active, denom), of, ov,
                pct(tl->overlap, denom), of);
    fprintf(fp, "<span><b>%llu</b> events</span></p>\n", (unsigned long long)tl->n_events);
    if (tl->critical_path)
        gp__tl_cp_legend(tl, fp);
    fprintf(fp,
            "<p class=\"gp-help\">wheel: scroll tracks &middot; ctrl/&#8984;+wheel or W/S: zoom "
            "&middot; drag or shift+wheel or A/D: pan &middot; 0: whole trace &middot; click a "
            "label: collapse or expand a track or rank &middot; click an event: its details and "
            "launch/kernel flow &middot; shift+drag: select a range (per-name totals)</p>\n"
            "</header>\n"
            "<div id=\"gp-tl\" class=\"gp-tl\" data-src=\"gp-tl-data\"></div>\n"
            "<div id=\"gp-tl-details\" class=\"gp-tl-details\">Click an event for its "
            "details.</div>\n<div id=\"gp-tl-agg\" class=\"gp-tl-agg\"></div>\n");
    gp_status s = gp__timeline_data_script(tl, "gp-tl-data", fp);
    if (s != GP_OK)
        return s;
    /* the side data after the script: the first paint does not wait for the parser to read it */
    fprintf(fp, "<script>\n%s</script>\n", gp__asset_timeline_js);
    if ((s = gp__timeline_args_script(tl, "gp-tl-data", fp)) != GP_OK)
        return s;
    if (tl->critical_path) { /* the overlay after the timeline it draws on */
        if ((s = json_script(tl, "gp-tl-data-cp", gp__tl_cp_json, fp)) != GP_OK)
            return s;
        fprintf(fp, "<script>\n%s</script>\n", gp__asset_timeline_cp_js);
    }
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
