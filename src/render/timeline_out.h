/* Private to the timeline renderer: timeline_html.c writes the page and its rows,
 * timeline_args.c the side block of the details panel. Both format into the buffered writer
 * below, emit the same slice events, and number correlation ids the same way. */
#ifndef GP_RENDER_TIMELINE_OUT_H
#define GP_RENDER_TIMELINE_OUT_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/json_writer.h"
#include "core/util.h"
#include "gpuprof/report.h"

/* Output buffer flushed to the stream in large blocks; numbers are formatted by hand because a
 * 1.5 M-event page holds about 7 M of them. */
typedef struct gp__out {
    FILE *fp;
    gp__buf b;
    gp_status err;
} gp__out;

/* Writes the buffer to the stream (an out without a stream keeps everything in memory). */
static inline void gp__out_flush(gp__out *o)
{
    if (!o->fp)
        return;
    if (o->b.len && fwrite(o->b.data, 1, o->b.len, o->fp) != o->b.len)
        o->err = GP_EIO;
    o->b.len = 0;
}

static inline void gp__out_raw(gp__out *o, const char *s, size_t n)
{
    if (o->err)
        return;
    if (o->b.len + n < o->b.cap && !o->b.max) { /* the common case, without a call */
        memcpy(o->b.data + o->b.len, s, n);
        o->b.len += n;
    } else if (gp__buf_append(&o->b, s, n) != GP_OK)
        o->err = GP_ENOMEM;
    else if (o->b.len >= (1u << 20))
        gp__out_flush(o);
}

static inline void gp__out_str(gp__out *o, const char *s)
{
    gp__out_raw(o, s, strlen(s));
}

static inline void gp__out_int(gp__out *o, int64_t v)
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
    gp__out_raw(o, p, (size_t)(tmp + sizeof tmp - p));
}

/* A JSON string, escaped for embedding in HTML (<, >, & as \u00XX). */
static inline void gp__out_jstr(gp__out *o, const char *s)
{
    if (o->err)
        return;
    if (gp__buf_append(&o->b, "\"", 1) != GP_OK || gp__json_escape(&o->b, s, strlen(s), true) ||
        gp__buf_append(&o->b, "\"", 1) != GP_OK)
        o->err = GP_ENOMEM;
}

/* A sample value: an integral one (bytes, counts) exactly as an integer, others with 6
 * significant digits; one a JSON number cannot hold (inf, nan) as null. The range is tested
 * before the cast: converting a double beyond int64 is undefined (fuzz_timeline_page found it). */
static inline void gp__out_double(gp__out *o, double v)
{
    if (!isfinite(v)) {
        gp__out_raw(o, "null", 4);
        return;
    }
    if (v > -9007199254740992.0 && v < 9007199254740992.0 && v == (double)(int64_t)v) {
        gp__out_int(o, (int64_t)v);
        return;
    }
    char tmp[40];
    int n = snprintf(tmp, sizeof tmp, "%.6g", v);
    if (strchr(tmp, 'n') || strchr(tmp, 'i')) /* nan, inf */
        gp__out_str(o, "null");
    else
        gp__out_raw(o, tmp, (size_t)n);
}

/* Whether a slice row emits event i: drawn with the Python frames, or without them. */
static inline bool gp__tl_emitted(const gp_tl_row *row, size_t i)
{
    return row->depth[i] != 255 || (row->depth_nopy && row->depth_nopy[i] != 255);
}

/* Dense correlation numbers of one trace: its slice rows' distinct correlation ids, sorted (as
 * keys that sort signed ids in order); an id's number is its position + 1, so the page's delta
 * encoding stays small and exact whatever the ids are (ids near the int64 limits overflowed a
 * plain difference). */
typedef struct gp__corr_tab {
    uint64_t *keys;
    size_t n;
} gp__corr_tab;

/* Fills c with the correlation numbers of trace's emitted slice events. GP_ENOMEM. */
gp_status gp__tl_corr_build(const gp_timeline *tl, uint32_t trace, gp__corr_tab *c) GP_WARN_UNUSED;
/* The number of correlation id `id` (which the table holds), searched from *cur, the position of
 * the row's previous id: ids mostly rise along a row, so this is mostly a step. */
uint64_t gp__tl_corr_num(const gp__corr_tab *c, int64_t id, size_t *cur);

/* The critical-path overlay (timeline_cp.c), only when tl->critical_path: its JSON (GP_ENOMEM,
 * GP_EIO) and its legend line; the overlay's script. */
gp_status gp__tl_cp_json(const gp_timeline *tl, gp__out *o) GP_WARN_UNUSED;
void gp__tl_cp_legend(const gp_timeline *tl, FILE *fp);
extern const char gp__asset_timeline_cp_js[];

/* Writes the side block's JSON (timeline_args.c). GP_ENOMEM, GP_EIO. */
gp_status gp__tl_args_json(const gp_timeline *tl, gp__out *o) GP_WARN_UNUSED;

#endif
