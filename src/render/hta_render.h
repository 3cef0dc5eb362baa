/* The page of `gpuprof hta` (its JSON is the "hta" view of include/gpuprof/views.h). */
#ifndef GP_RENDER_HTA_RENDER_H
#define GP_RENDER_HTA_RENDER_H

#include <stdio.h>

#include "gpuprof/analyze.h"

/* The HTA page of analysis a (built with HTA's definitions and step filter): the breakdowns of
 * the dashboard's HTA section and the top kernels. title NULL: "gpuprof hta". GP_OK or GP_EIO. */
gp_status gp__hta_render_html(const gp_analysis *a, const char *title, FILE *fp) GP_WARN_UNUSED;

#endif
