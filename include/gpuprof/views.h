/* The registry of views: every page and data document of a trace or job that more than one front
 * end offers (the CLI, `gpuprof serve`, Python), described once.
 *
 * Each entry names the view (`name`), its server route, its index link, the read option it needs,
 * the gpuprof command and the Python call that give the same bytes, and (inside the library) its
 * builder: read once, build the analyses the view needs once, render. `gpuprof serve` takes its
 * routes, its index links, its navigation bar and its --help from this list; Python's
 * Trace.view() and gpuprof.views() read it; docs/reports.md's API table is `gpuprof serve
 * --routes` (checked by python/tests/test_views.py, which also checks, for every entry and every
 * shared trace, that the CLI command, the server and Python give the same bytes).
 * Adding a page: docs/internals/adding-a-page.md. */
#ifndef GPUPROF_VIEWS_H
#define GPUPROF_VIEWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "gpuprof/core.h"
#include "gpuprof/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_view_info {
    const char *name;    /* "report", "analysis", ... (Trace.view(name)) */
    const char *route;   /* the server's prefix: the route is route + NAME */
    const char *label;   /* its link text on the index and the navigation bar */
    bool html;           /* an HTML page (the server adds its navigation bar); else JSON */
    bool linked;         /* linked from the index (and, pages, the bar) for a trace or job */
    bool compile_log;    /* also the view of a torch.compile log (a log has no other view) */
    bool keep_op_shapes; /* the input is read with keep_op_shapes (gp_read_opts) */
    const char *params;  /* query parameters: "" or "weight,by" or "by" */
    const char *cli;     /* the gpuprof command giving the same bytes (DIR/NAME: the input, the
                          * path the server reads; NAME: its name; OUT.x: an output file whose
                          * bytes are the view's; NULL: none) */
    const char *python;  /* the Python call giving the same bytes (t = gpuprof.read(DIR/NAME)) */
    const char *doc;     /* what it is, for docs/reports.md */
} gp_view_info;

/* The number of views, and view i (0 <= i < gp_view_count()), in the index's order. */
GP_EXTERN size_t gp_view_count(void);
GP_EXTERN const gp_view_info *gp_view_at(size_t i);
/* The view named name, NULL if none. */
GP_EXTERN const gp_view_info *gp_view_find(const char *name);

/* A request's parameters; NULL fields take the defaults. */
typedef struct gp_view_params {
    const char *title;  /* pages: the title (the CLI's --title; the server: the name) */
    const char *weight; /* flame views: auto (default), cpu or gpu */
    const char *by;     /* flame views: stack (default) or module; ops: a grouping of gpuprof ops
                         * --by (default name) */
    const char *critical_path; /* timeline views: "1" or "0" (default): each step's critical
                                * path drawn over it (gpuprof timeline --critical-path) */
} gp_view_params;

/* Checks p against the view's parameters (v: from gp_view_at or gp_view_find): GP_EINVAL (err
 * says what was expected) for a value it does not take, or for a v not of the registry. */
GP_EXTERN gp_status gp_view_check_params(const gp_view_info *v, const gp_view_params *p,
                                         gp_error *err) GP_WARN_UNUSED;

/* Builds and renders view v of job (read as v->keep_op_shapes says) to fp: the bytes the command
 * v->cli writes. GP_EINVAL (a parameter), GP_EEMPTY (nothing to draw, err says why), GP_ENOMEM,
 * GP_EIO. */
GP_EXTERN gp_status gp_view_render(const gp_view_info *v, const gp_job *job,
                                   const gp_view_params *p, FILE *fp, gp_error *err) GP_WARN_UNUSED;

#ifdef __cplusplus
}
#endif
#endif
