/* Internals shared by the report module's files: embedded assets, HTML escaping, duration text,
 * flame graph pixel layout, atomic writing of a rendered file. */
#ifndef GP_REPORT_INTERNAL_H
#define GP_REPORT_INTERNAL_H

#include <stddef.h>
#include <stdio.h>

#include "gpuprof/report.h"

/* Asset files of src/report/assets/, embedded at build time by embed_asset.cmake (NUL-terminated;
 * the build fails if one contains "</script", "</style" or "]]>"). */
extern const char gp__asset_flame_js[];
extern const char gp__asset_flame_css[];
extern const char gp__asset_timeline_js[];
extern const char gp__asset_timeline_css[];
extern const char gp__asset_report_js[];
extern const char gp__asset_report_css[];

/* Writes s[0..len) as HTML/XML text or attribute content: & < > " ' escaped; control bytes other
 * than tab and newline become spaces. */
void gp__html_text(FILE *fp, const char *s, size_t len);
static inline void gp__html_str(FILE *fp, const char *s)
{
    gp__html_text(fp, s, s ? __builtin_strlen(s) : 0);
}

/* "1.234 ms", "12.3 us", "3.45 s", "870 ns" into buf. */
void gp__fmt_dur(char *buf, size_t cap, gp_ns ns);
/* "1.5 GiB", "512 KiB", "12 B" into buf. */
void gp__fmt_bytes(char *buf, size_t cap, double bytes);

/* A drawn flame frame: tree node index and its geometry at full (unzoomed) width. */
typedef struct gp__flame_px {
    uint32_t node;
    uint32_t parent;  /* index into the drawn array (the root is its own parent) */
    double x, w;      /* px */
    int row;          /* 0 = top row of the picture */
    size_t label_len; /* bytes of the name that fit in the frame (0 = no label) */
    int ellipsis;     /* 1 when the label is cut and ".." follows */
} gp__flame_px;

/* Lays out the tree for a picture width px wide (with 10 px side margins): frames at least
 * min_px wide are drawn, the root at the bottom row. *out is malloc'd (caller frees); *rows
 * receives the number of rows. */
gp_status gp__flame_layout_px(const gp_flame_tree *t, int width, double min_px, gp__flame_px **out,
                              size_t *n_out, int *rows) GP_WARN_UNUSED;

/* Opens path atomically, calls render(ctx, fp), commits. The error names the path. */
gp_status gp__render_to_file(const char *path, gp_status (*render)(const void *ctx, FILE *fp),
                             const void *ctx, gp_error *err) GP_WARN_UNUSED;

/* Writes <script id="ID" type="application/json">{timeline data}</script> (the encoding is in
 * docs/internals/report.md); the timeline page and the dashboard's compact timeline use it. */
gp_status gp__timeline_data_script(const gp_timeline *tl, const char *id, FILE *fp) GP_WARN_UNUSED;

#endif
