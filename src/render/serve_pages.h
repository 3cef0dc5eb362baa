/* What the profile server (`gpuprof serve`, src/app/serve/profiles.c) writes of its own: the
 * index page and the JSON listing of a directory, JSON errors, and the navigation bar that the
 * page renderers place after <body> (their nav_html option). Formats only: the server lists the
 * directory and builds every view. */
#ifndef GP_RENDER_SERVE_PAGES_H
#define GP_RENDER_SERVE_PAGES_H

#include <stdint.h>
#include <stdio.h>

#include "analyze/analyze_internal.h"
#include "gpuprof/report.h"
#include "gpuprof/views.h"

/* One entry of a served directory: a trace file, a job (a folder of rank traces, directly in
 * the directory or one level further down, "group/job"), or a torch.compile log (TORCH_TRACE: a
 * log file, or a folder of rank logs, placed as a job is). */
typedef struct gp__serve_entry {
    char name[512]; /* relative to the directory; "group/job" for a folder one level down */
    bool job;
    bool compile_log;
    bool dir;      /* a folder: a job, or a compile log's folder of rank logs */
    int32_t ranks; /* a folder's rank files (a compile log's: its log files); 0 for a file */
    int64_t bytes; /* a file's size, a folder's files' sizes summed */
    int64_t mtime; /* seconds since the epoch (a folder: its newest file) */
    bool has_head; /* head holds the entry's figures (the server's cache, headlines.c) */
    gp__headline head;
} gp__serve_entry;

/* A name as one URL path or query component: unreserved characters as they are, every other byte
 * %XX (a '/' of "group/job" too: the server decodes it back and looks the name up). */
void gp__serve_url_component(FILE *fp, const char *name);
/* The index page: a table of the n entries v of dir with their headline figures (span, GPU
 * busy, device; "" where has_head is false) and links to their views among the n_views views (the
 * registry, gpuprof/views.h: a trace's linked pages and documents, its compile page when it holds
 * compiled regions, a compile log's own), and a form to compare two of them (/diff; traces and jobs
 * only). GP_EIO when the stream fails. */
gp_status gp__serve_index_html(FILE *fp, const char *dir, const gp__serve_entry *v, size_t n,
                               const gp_view_info *const *views, size_t n_views) GP_WARN_UNUSED;
/* /api/profiler/profiles: {"dir", "profiles": [{name, type (file|job|compile_log), bytes,
 * modified_unix, ranks (jobs), files (a compile log's folder)}]} and a newline. */
gp_status gp__serve_profiles_json(FILE *fp, const char *dir, const gp__serve_entry *v,
                                  size_t n) GP_WARN_UNUSED;
/* {"status": code, "error": reason, "message": message} and a newline. */
gp_status gp__serve_error_json(FILE *fp, unsigned code, const char *reason,
                               const char *message) GP_WARN_UNUSED;

/* The server's icon, an SVG held in the binary (no file): /favicon.ico answers it (the browser asks
 * for it on every page) and the index links it. */
extern const char gp__serve_favicon_svg[];

/* The server's bar of links for the page of entry name (NULL: the index link only): a small
 * fixed <nav> linking back to the index and to the linked pages among views, as a malloc'd
 * string for a renderer's nav_html option (placed right after <body>); NULL when out of memory. */
char *gp__serve_nav_html(const char *name, const gp_view_info *const *views, size_t n_views);

#endif
