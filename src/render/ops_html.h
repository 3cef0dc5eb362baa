/* The `gpuprof ops` section of an HTML page (render/ops_html.c): for the dashboard, which the lead
 * wires in (report.html) and for any page that shows an op table. Internal to gpuprof. */
#ifndef GP_RENDER_OPS_HTML_H
#define GP_RENDER_OPS_HTML_H

#include <stddef.h>
#include <stdio.h>

#include "gpuprof/ops.h"

/* Writes one self-contained <section class="gp-ops" id="ID"> (id "ops" when NULL): a roofline
 * chart (SVG, log-log: arithmetic intensity against achieved TFLOP/s, the device's roof for the
 * dtype with the most modeled GPU time, one point per modeled row sized by its GPU time) and the
 * op table (the first top_n rows, 0 = all; shapes shown; every column sortable by a click on its
 * header; a text box filters rows by key and shapes), with its own small style and script (no
 * external assets). Give it the result of --by shape for one point per op + shape. GP_EIO when
 * the stream fails. */
gp_status gp__render_ops_html(const gp_ops *ops, size_t top_n, const char *id,
                              FILE *fp) GP_WARN_UNUSED;

/* Writes a whole page holding that section (first top_n rows, 0 = all) to path, atomically:
 * styled as the other pages, titled with the trace (its path or name) and the device. The error
 * names the path. */
gp_status gp__render_ops_page(const gp_ops *ops, size_t top_n, const char *trace, const char *path,
                              gp_error *err) GP_WARN_UNUSED;

/* The same page into fp, with nav_html (trusted markup, NULL: none) at the top of the body (the
 * profile server's links). GP_EIO when the stream fails. */
gp_status gp__render_ops_page_to(const gp_ops *ops, size_t top_n, const char *trace,
                                 const char *nav_html, FILE *fp) GP_WARN_UNUSED;

#endif
