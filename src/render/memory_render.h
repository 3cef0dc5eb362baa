/* The outputs of `gpuprof memory` (analyze/memory_timeline.h): text, JSON and the self-contained
 * page with each allocator's curve. Formats; computes nothing. */
#ifndef GP_RENDER_MEMORY_RENDER_H
#define GP_RENDER_MEMORY_RENDER_H

#include <stdio.h>

#include "analyze/memory_timeline.h"

/* The text report: per allocator the peak, what was live at it (at most top groups; 0: all), the
 * levels and the rates. GP_OK, or GP_EIO when fp reports a write error. */
gp_status gp__mem_render_text(const gp__mem_timeline *m, size_t top, FILE *fp) GP_WARN_UNUSED;

/* One JSON document and a newline: every field of the timeline, the curves included (ns, bytes;
 * null where the trace does not say). GP_OK, GP_ENOMEM, GP_EIO. */
gp_status gp__mem_render_json(const gp__mem_timeline *m, FILE *fp) GP_WARN_UNUSED;

/* The page: a header, per allocator its curve as an inline SVG (allocated and reserved, the peak
 * marked), its figures and the table of what was live at the peak; no script, no outside file.
 * title NULL: "gpuprof memory". GP_OK, or GP_EIO. */
gp_status gp__mem_render_html(const gp__mem_timeline *m, const char *title,
                              FILE *fp) GP_WARN_UNUSED;

/* "CUDA:0", "CPU" (an id < 0 is not written) into buf. */
const char *gp__mem_device_label(const gp__mem_device *d, char *buf, size_t cap);

#endif
