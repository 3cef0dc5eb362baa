/* Helpers shared by the writers of the analysis tables (src/render/table_*.c): the heading and
 * percentage cells of the text, the number members of the JSON, the cells of the CSV. */
#ifndef GP_RENDER_TABLE_INTERNAL_H
#define GP_RENDER_TABLE_INTERNAL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprof/analyze.h"
#include "gpuprof/summary.h"
#include "analyze/analyze_internal.h"
#include "core/csv.h"
#include "core/json_writer.h"
#include "core/units.h"
#include "core/util.h"
#include "render/analysis_tables.h"
#include "render/render_internal.h"

/* Nanoseconds as milliseconds. */
#define GP__TBL_MS(ns) ((double)(ns) / 1e6)

/* Text: a section's title, then a rule of '=' as long as the title. */
static inline void gp__tbl_heading(FILE *fp, const char *title)
{
    fprintf(fp, "\n%s\n", title);
    size_t n = strlen(title);
    for (size_t i = 0; i < n; i++)
        fputc('=', fp);
    fputc('\n', fp);
}

/* Text: a percentage in width, "n/a" for NaN. */
static inline void gp__tbl_pct(FILE *fp, double v, int width)
{
    if (isnan(v))
        fprintf(fp, "%*s", width, "n/a");
    else
        fprintf(fp, "%*.2f", width, v);
}

/* JSON: a number member (NaN -> null). */
static inline void gp__tbl_kv_num(gp__jw *w, const char *k, double v)
{
    gp__jw_key(w, k);
    gp__jw_double(w, v);
}

/* JSON: a nanosecond member. */
static inline void gp__tbl_kv_ns(gp__jw *w, const char *k, int64_t v)
{
    gp__jw_kv_int(w, k, v);
}

/* JSON: nanoseconds as a microsecond number member (HTA's columns). */
static inline void gp__tbl_kv_us(gp__jw *w, const char *k, int64_t ns)
{
    gp__tbl_kv_num(w, k, (double)ns / 1000.0);
}

/* JSON: a series member, an array of [t, v] pairs. */
static inline void gp__tbl_series(gp__jw *w, const char *k, const gp_series_point *p, size_t n)
{
    gp__jw_key(w, k);
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < n; i++) {
        gp__jw_arr_begin(w);
        gp__jw_int(w, p[i].t);
        gp__jw_double(w, p[i].v);
        gp__jw_arr_end(w);
    }
    gp__jw_arr_end(w);
}

/* CSV: a number cell (empty for NaN: a figure that does not exist) and the separator after it. */
static inline void gp__tbl_csv_num(FILE *fp, double v, char sep)
{
    if (!isnan(v))
        fprintf(fp, "%.6g", v);
    fputc(sep, fp);
}

/* CSV: a text cell (quoted as RFC 4180 needs) and the separator after it. */
static inline void gp__tbl_csv_text(FILE *fp, const char *s, char sep)
{
    gp__csv_field(fp, s);
    fputc(sep, fp);
}

#endif
