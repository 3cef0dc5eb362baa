/* The app layer's side of the registry of views (include/gpuprof/views.h): rendering with the
 * server's navigation bar. */
#ifndef GP_APP_VIEWS_H
#define GP_APP_VIEWS_H

#include "gpuprof/views.h"

/* gp_view_render; with nav non-NULL a page carries the server's navigation bar (links to the
 * index and, nav non-empty, to the linked pages of the entry nav). */
gp_status gp__view_render(const gp_view_info *v, const gp_job *job, const gp_view_params *p,
                          const char *nav, FILE *fp, gp_error *err) GP_WARN_UNUSED;

/* The views, in the registry's order, into out[0..cap): how many were written (GP__VIEWS_MAX
 * holds them all). */
enum { GP__VIEWS_MAX = 32 };
size_t gp__view_list(const gp_view_info **out, size_t cap);

#endif
