/* Internals shared by the diff renderers (diff_render.c: text, JSON, JUnit; diff_html.c: the
 * HTML page): number formatting and the JSON document. */
#ifndef GP_RENDER_DIFF_RENDER_H
#define GP_RENDER_DIFF_RENDER_H

#include <stdint.h>
#include <stdio.h>

#include "core/json_writer.h"
#include "gpuprof/diff.h"

/* Bytes per short (display) name of a row. */
enum { GP__DIFF_SHORT_CAP = 512 };

/* o, or the defaults written into def. */
const gp_diff_render_opts *gp__diff_opts_or_default(const gp_diff_render_opts *o,
                                                    gp_diff_render_opts *def);
/* "holm", "benjamini-hochberg", "none". */
const char *gp__diff_correction_name(gp_diff_correction c);
/* A metric value with its unit: "12.345 ms", "1408.2 MiB", "n/a". */
void gp__diff_fmt_value(char *buf, size_t cap, double v, const char *unit);
/* "+12.3%" or "n/a". */
void gp__diff_fmt_pct(char *buf, size_t cap, double pct);
/* How a verdict was reached: "untested (n=1)", "untested (n=3/2)", "p(adj) 0.0022, n=6/6". */
void gp__diff_fmt_basis(char *buf, size_t cap, const gp_diff_test *t);
/* The per-call signal: "slower p<1e-4", "same p=0.3288", "untested n=2/2", "-" (NEW/REMOVED). */
void gp__diff_fmt_shift(char *buf, size_t cap, const gp_diff_row *r);
/* 100 * (ratio - 1); NaN stays NaN. */
double gp__diff_ratio_pct(double ratio);
/* JUnit: the test cases of d (one per metric and per row present on both sides), and the
 * <testsuite> element named name holding them (gp_diff_render_junit's; two jobs write one per
 * rank pair, app/cli/diff_jobs.c). */
size_t gp__diff_junit_cases(const gp_diff *d);
void gp__diff_junit_suite(const gp_diff *d, const char *name, FILE *fp);
/* One rank pair's diff page (gp_diff_render_html's bytes, NUL-terminated) for gp__diff_jobs_html.
 */
typedef struct gp__diff_job_page {
    int32_t rank;
    const char *html;
    /* the pair's gp_diff figures, for the selector's label: speedup (NaN: unknown),
     * regressions (tested + untested), improvements */
    double speedup;
    size_t regressions, improvements;
} gp__diff_job_page;
/* The page of two jobs compared rank by rank (diff_jobs_html.c): a rank selector (each pair's
 * speedup, regressions and improvements in its label) and one section per pair holding its page
 * in an iframe; notes (ranks on one side only) under the selector. */
gp_status gp__diff_jobs_html(const gp__diff_job_page *pages, size_t n, const char *const *notes,
                             size_t n_notes, FILE *fp);
/* The "gpuprof.diff/2" document. */
void gp__diff_write_json(gp__jw *w, const gp_diff *d, const gp_diff_render_opts *o);
/* The torch.compile section (diff_compile_render.c) in text, as the "compile" member of the JSON
 * document, and in HTML; each writes nothing when no side has compiled regions. */
void gp__diff_compile_text(const gp_diff *d, FILE *fp);
void gp__diff_compile_json(gp__jw *w, const gp_diff *d);
void gp__diff_compile_html(const gp_diff *d, FILE *fp);
/* What each side ran on and the context warning (diff_context_render.c). */
void gp__diff_context_text(const gp_diff *d, FILE *fp);
void gp__diff_context_json(gp__jw *w, const gp_diff *d);
void gp__diff_context_html(const gp_diff *d, FILE *fp);

#endif
