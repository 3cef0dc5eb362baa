/* Internals shared by the render layer's files: embedded assets, HTML escaping, duration text,
 * atomic writing of a rendered file. */
#ifndef GP_RENDER_INTERNAL_H
#define GP_RENDER_INTERNAL_H

#include <stddef.h>
#include <stdio.h>

#include "gpuprof/report.h"
#include "analyze/flame_layout.h"
#include "core/units.h"

/* Asset files of src/render/assets/, embedded at build time by embed_asset.cmake (NUL-terminated;
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

/* Opens path atomically, calls render(ctx, fp), commits. The error names the path. */
gp_status gp__render_to_file(const char *path, gp_status (*render)(const void *ctx, FILE *fp),
                             const void *ctx, gp_error *err) GP_WARN_UNUSED;

/* Writes <script id="ID" type="application/json">{timeline data}</script> (the encoding is in
 * docs/internals/report.md); the timeline page and the dashboard's compact timeline use it. */
gp_status gp__timeline_data_script(const gp_timeline *tl, const char *id, FILE *fp) GP_WARN_UNUSED;

#endif
