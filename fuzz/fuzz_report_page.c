/* libFuzzer target for report.html and the JSON documents behind it (#21 item 5): trace in, page
 * out. Input: one option byte, then a trace (Kineto/Chrome JSON), or two traces (two ranks of a
 * job) separated by the first NUL byte. When the traces read, the report bundle is built as
 * `gpuprof report` and `gpuprof serve` build it (summary, analysis, compact timeline, dashboard,
 * op table) and rendered: the dashboard page (page_check.h: no markup or script from the input,
 * embedded data parses back with jansson), and the summary, analysis and op-table JSON documents
 * (the `/api/profiler/` endpoints, `--json`), each parsed back whole with jansson. The option byte
 * picks the op grouping of the op-table JSON and whether the analysis is the HTA-mode one. */
#include <stdint.h>
#include <stdlib.h>

#include "gpuprof/analyze.h"
#include "gpuprof/ops.h"
#include "gpuprof/report.h"
#include "page_check.h"

static void render_json(gp_status (*fn)(const void *, FILE *), const void *what_obj,
                        const char *what)
{
    gp_fuzz_mem m;
    gp_fuzz_mem_open(&m);
    gp_status st = fn(what_obj, m.fp);
    gp_fuzz_mem_close(&m);
    gp_fuzz_check(st == GP_OK, what);
    gp_fuzz_check_json(m.text, m.len, what);
    gp_fuzz_mem_free(&m);
}

static gp_status summary_json(const void *s, FILE *fp)
{
    return gp_summary_render_json(s, NULL, fp);
}

static gp_status analysis_json(const void *a, FILE *fp)
{
    return gp_analysis_render_json(a, GP_AT_ALL, fp);
}

static gp_status ops_json(const void *o, FILE *fp)
{
    return gp_ops_render_json(o, 0, fp);
}

static void fuzz_one(gp_fuzz_input *in)
{
    gp_trace **t = in->t;
    size_t n = in->n;
    uint8_t flags = in->flags;
    gp_job job = {.ranks = t, .n_ranks = n};
    gp_report_bundle *b = NULL;
    gp_status st = gp_report_bundle_build(&job, NULL, &b);
    gp_fuzz_check(st == GP_OK || st == GP_ENOMEM, "gp_report_bundle_build: GP_OK or GP_ENOMEM");
    if (st == GP_OK) {
        gp_fuzz_mem m;
        gp_fuzz_mem_open(&m);
        st = gp_dashboard_render_html(b->dashboard, (flags & 1) ? "<b>x</b></title>" : NULL, m.fp);
        gp_fuzz_mem_close(&m);
        gp_fuzz_check(st == GP_OK, "gp_dashboard_render_html");
        gp_fuzz_check_page(m.text, m.len, "report HTML");
        gp_fuzz_mem_free(&m);
        render_json(summary_json, b->summary, "summary JSON");
        if (b->analysis)
            render_json(analysis_json, b->analysis, "analysis JSON");
        if (b->ops && !(flags & 2))
            render_json(ops_json, b->ops, "op table JSON (by shape)");
    }
    gp_report_bundle_free(b);
    if (flags & 2) { /* another grouping of the op table, and the HTA-mode analysis */
        gp_ops_opts oo;
        gp_ops_opts_init(&oo);
        oo.by = (gp_ops_by)((flags >> 2) % GP_OPS_BY_COUNT);
        gp_ops *ops = NULL;
        if (gp_ops_compute(gp_traces_const(t), n, &oo, &ops, NULL) == GP_OK)
            render_json(ops_json, ops, "op table JSON");
        gp_ops_free(ops);
        gp_analyze_opts ao;
        gp_analyze_opts_init(&ao);
        ao.steps = GP_STEPS_HTA;
        ao.hta = true;
        gp_analysis *an = NULL;
        if (gp_analyze_job(&job, &ao, &an, NULL) == GP_OK)
            render_json(analysis_json, an, "analysis JSON (HTA mode)");
        gp_analysis_free(an);
    }
}

GP_FUZZ_TRACES_TARGET(fuzz_one)
