/* Internals shared by the render layer's files: embedded assets, HTML escaping, duration text,
 * atomic writing of a rendered file, the rule lines of text tables, the profiler's tables. */
#ifndef GP_RENDER_INTERNAL_H
#define GP_RENDER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "gpuprof/profiler.h"
#include "gpuprof/report.h"
#include "analyze/flame_layout.h"
#include "core/units.h"

/* Asset files of src/render/assets/, embedded at build time by embed_asset.cmake (NUL-terminated;
 * the build fails if one contains "</script", "</style" or "]]>"). */
extern const char gp__asset_flame_js[];
extern const char gp__asset_flame_css[];
extern const char gp__asset_flame_page_js[];
extern const char gp__asset_timeline_js[];
extern const char gp__asset_timeline_css[];
extern const char gp__asset_report_js[];
extern const char gp__asset_report_css[];

/* Writes s[0..len) as HTML/XML text or attribute content: & < > " ' escaped; control bytes other
 * than tab and newline become spaces. */
void gp__html_text(FILE *fp, const char *s, size_t len);
/* A duration for an HTML page: as gp__fmt_dur ("1.250 ms", "93.222 \u00b5s", "80 ns") with the
 * micro sign the timeline and flame pages write, not "us" (html_util.c). */
void gp__fmt_dur_html(char *buf, size_t cap, int64_t ns);

static inline void gp__html_str(FILE *fp, const char *s)
{
    gp__html_text(fp, s, s ? __builtin_strlen(s) : 0);
}

/* The start of a plain report page (hta, memory): doctype, head with title (escaped) and the
 * timeline and report style sheets then extra_css ("" for none), body, header and the h1's title;
 * the caller goes on inside the h1 (html_util.c). */
void gp__html_page_open(FILE *fp, const char *title, const char *extra_css);

/* Opens path atomically, calls render(ctx, fp), commits. The error names the path. */
gp_status gp__render_to_file(const char *path, gp_status (*render)(const void *ctx, FILE *fp),
                             const void *ctx, gp_error *err) GP_WARN_UNUSED;

/* Writes <script id="ID" type="application/json">{timeline data}</script> (the encoding is in
 * docs/internals/report.md); the timeline page and the dashboard's compact timeline use it. */
gp_status gp__timeline_data_script(const gp_timeline *tl, const char *id, FILE *fp) GP_WARN_UNUSED;
/* gp_dashboard_render_html and gp_timeline_render_html with nav_html (NULL: none) placed right
 * after <body>: the server's bar of links (gp__serve_nav_html). */
gp_status gp__dashboard_render_page(const gp_dashboard *d, const char *title, const char *nav_html,
                                    FILE *fp) GP_WARN_UNUSED;
gp_status gp__timeline_render_page(const gp_timeline *tl, const char *title, const char *nav_html,
                                   FILE *fp) GP_WARN_UNUSED;
/* The same data as a JSON document and a newline (the server's /api/profiler/timeline/). */
gp_status gp__timeline_data_json(const gp_timeline *tl, FILE *fp) GP_WARN_UNUSED;
/* Writes <script id="ID-args" type="application/json">{exact ids and args of every event}</script>,
 * the side data the details panel parses on first use; after the page's scripts, so that the
 * first paint does not wait for it. */
gp_status gp__timeline_args_script(const gp_timeline *tl, const char *id, FILE *fp) GP_WARN_UNUSED;

/* dashboard_hta.c: a partition chart (legend with the summed segments, then one bar per part
 * with its total under the column head total_head; fills by segment index), and the analysis'
 * HTA breakdowns (temporal, idle, kernel types, overlap, queue length; a may be NULL). */
void gp__dash_chart_html(FILE *fp, const char *id, const gp_dash_chart *c, const char *const *fills,
                         const char *total_head);
void gp__dash_hta_html(FILE *fp, const gp_analysis *a);
/* dashboard_cause.c: the section above the fold: the top finding's sentence and the critical
 * path of each step by class, or an empty state (nothing when d->analysis is NULL; no path part for
 * an in-process profile). */
void gp__dash_cause_html(FILE *fp, const gp_dashboard *d);
/* The dashboard's table of every operation of s (dashboard_ops.c): tabs per kind, filter, sorting,
 * the rows as a JSON data script that report.js draws; *rows: their count. GP_EIO on a write
 * error. */
gp_status gp__dash_ops_html(FILE *fp, const gp_summary *s, size_t *rows);
/* The collectives section (dashboard_collectives.c): nothing without matched collectives. */
void gp__dash_collectives_html(FILE *fp, const gp_analysis *a);
/* dashboard_profile.c: the section of an in-process profile (nothing unless d->is_profile). */
void gp__dash_profile_html(FILE *fp, const gp_dashboard *d);

/* finding_format.c: the words of a finding (gp_finding), composed once for every renderer.
 * gp__metric_value: a metric's value with its unit ("47.4 %", "1.234 ms", "1.50 GiB",
 * "12.00 GB/s", "312.5 TFLOP/s", "12"); gp__finding_title: the one-line title from the rule, its
 * metrics and objects; gp__finding_advice: the suggestion of the rule and variant ("" if none);
 * gp__finding_expected: the expected improvement of the profile rules (NULL for the others);
 * gp__finding_object_text: "op aten::bmm at model.py(12): forward, 1.2 ms, 3 calls, 40.0 % of
 * roofline"; gp__finding_evidence_text: " name=value, ..." on fp; gp__metric_phrase: the
 * dashboard's phrase of a metric key with "%s" for the value (NULL: none). */
void gp__metric_value(const gp_evidence *e, char *buf, size_t cap);
void gp__finding_title(const gp_finding *f, char *buf, size_t cap);
const char *gp__finding_advice(const gp_finding *f);
const char *gp__finding_expected(const gp_finding *f);
void gp__finding_object_text(const gp_finding_object *o, char *buf, size_t cap);
void gp__finding_evidence_text(const gp_finding *f, FILE *fp);
const char *gp__metric_phrase(const char *name);
/* The ranks a finding holds on, as an HTML span ("ranks 0–7 (evidence: rank 6, the worst)"),
 * with id when not NULL; nothing when it names no rank. */
void gp__finding_ranks_html(FILE *fp, const gp_finding *f, const char *id);

/* A rule line of a fixed-width text table: width copies of c, then a newline. */
void gp__rule(FILE *fp, char c, int width);

/* The in-process profiler's text tables (profiler_tables.c). They format rows that the profiler
 * computed (produce layer) and compute nothing; the app layer's profiler_output.c calls them.
 *
 * "GPU KERNEL TIMING REPORT": rows as gp_cuda_timer_all_stats returns them (sorted); why != NULL
 * prints the "status: <why>" line of a missing driver instead of the table. GP_EIO. */
gp_status gp__timer_table_text(const gp_timer_stats *rows, size_t n, const char *why,
                               FILE *fp) GP_WARN_UNUSED;
/* "GPU MEMORY TRACKING REPORT": the tracked buffers, the totals of s, the device line (device_why:
 * why the device part is missing, NULL when the driver answered) and the sampled peak (NULL when
 * there are no samples). Sizes are MiB (bytes / GP_MIB). GP_EIO. */
gp_status gp__mem_table_text(const gp_mem_status *s, const gp_mem_buffer *bufs, size_t n,
                             const char *device_why, const gp_mem_peak *peak,
                             FILE *fp) GP_WARN_UNUSED;
/* The title block of the combined report (gp_profiler_print_full_report): "GPU PROFILING REPORT"
 * between two rules, then a blank line. */
void gp__full_report_title(FILE *fp);

/* The valid critical path of a rank's step (the region of that ProfilerStep), or NULL: the step
 * breakdown's crit_path column in text, JSON and CSV. */
static inline const gp_critical_path *gp__step_critical_path(const gp_rank_analysis *r,
                                                             int64_t step)
{
    for (size_t i = 0; i < r->n_critical_paths; i++)
        if (r->critical_paths[i].step == step && r->critical_paths[i].valid)
            return &r->critical_paths[i];
    return NULL;
}

#endif
