/* Internals shared by the renderers of `gpuprof compile` (compile_text.c, compile_json.c,
 * compile_html.c). */
#ifndef GP_RENDER_COMPILE_RENDER_H
#define GP_RENDER_COMPILE_RENDER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpuprof/compile.h"

/* The compile report's styles (assets/compile.css, embedded at build time). */
extern const char gp__asset_compile_css[];

/* The last component of a path ("" for NULL). */
const char *gp__compile_base(const char *path);
/* Table cells (compile_regions_html.c): text (escaped; cls may be NULL), a count ("-" when < 0)
 * and a duration ("-" when < 0), numbers with data-v for sorting. */
void gp__compile_td(FILE *fp, const char *cls, const char *s);
void gp__compile_td_num(FILE *fp, int64_t v);
void gp__compile_td_dur(FILE *fp, gp_ns ns);
/* A count of compilation_metrics into buf: the number, or "-" when absent (< 0). */
void gp__compile_count(char *buf, size_t cap, int64_t v);

/* The compiled regions of one trace as HTML (an <h3> named label, the regions table, the gaps
 * between regions with the graph breaks of a, which may be NULL): gpuprof compile --html and the
 * report's torch.compile section. Needs compile.css. */
void gp__compile_trace_html(FILE *fp, const gp_compile_trace *t, const gp_compile_analysis *a,
                            const char *label);
/* report.html's torch.compile section (<section id="gp-compile">, with compile.css) for the
 * traces that have compiled regions (t[i] may be NULL); nothing when none has. GP_EIO. */
gp_status gp__render_compile_section(FILE *fp, const gp_compile_trace *const *t, size_t n);

#endif
