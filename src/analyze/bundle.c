/* gp_report_bundle: the pipeline behind report.html (summary, analysis, compact timeline,
 * dashboard), shared by `gpuprof report` and `gpuprof serve`. */
#include <stdio.h>
#include <stdlib.h>

#include "analyze/analyze_internal.h"
#include "analyze/ops_internal.h"
#include "gpuprof/analyze.h"
#include "gpuprof/compile.h"
#include "gpuprof/ops.h"
#include "gpuprof/report.h"

/* The torch.compile section: the compiled regions of each rank that has some. */
static gp_status compile_regions(const gp_job *job, gp_report_bundle *b)
{
    for (size_t i = 0; i < job->n_ranks; i++) {
        if (!gp_compile_trace_has_regions(job->ranks[i]))
            continue;
        if (!b->compile && !(b->compile = calloc(job->n_ranks, sizeof *b->compile)))
            return GP_ENOMEM;
        b->n_compile = job->n_ranks;
        gp_status s = gp_compile_trace_analyze(job->ranks[i], &b->compile[i]);
        if (s != GP_OK)
            return s;
    }
    return GP_OK;
}

gp_status gp_report_bundle_build(const gp_job *job, const gp_summary_opts *so,
                                 gp_report_bundle **out)
{
    gp_report_bundle *b = calloc(1, sizeof *b);
    if (!b)
        return GP_ENOMEM;
    /* The op table first: the op section shows it and, for one rank, the analysis' op rule
     * reads it, and its unfused-attention rule the instances kept from the same walk (ops
     * computed once per report). */
    gp_ops_opts oo;
    gp_ops_opts_init(&oo);
    oo.by = GP_OPS_BY_SHAPE;
    const gp_trace *const *traces = gp_job_traces(job);
    gp_status os = job->n_ranks == 1 ? gp__ops_compute_kept(traces, 1, &oo, &b->ops)
                                     : gp_ops_compute(traces, job->n_ranks, &oo, &b->ops, NULL);
    if (os != GP_OK)
        gp_error_set(&b->ops_error, os, "op table: %s", gp_strerror(os));
    gp_error err = {0};
    gp__ranks in_ranks = gp__ranks_of_job(job);
    if (gp__analyze_with_ops(&in_ranks, NULL, b->ops, &b->analysis, &err) != GP_OK) {
        gp_error_set(&b->analysis_error, err.status ? err.status : GP_ENOMEM, "%s",
                     err.msg[0] ? err.msg : gp_strerror(err.status ? err.status : GP_ENOMEM));
        b->analysis = NULL;
    }
    gp__ops_drop_instances(b->ops); /* the findings were their only reader */
    gp_timeline_opts to;
    gp_timeline_opts_init(&to);
    to.max_depth = 1; /* the compact timeline: top two nesting levels */
    to.analysis = b->analysis;
    gp_status s = gp_summary_compute(gp_job_traces(job), job->n_ranks, so, &b->summary, NULL);
    if (s == GP_OK)
        s = gp_timeline_build(gp_job_traces(job), job->n_ranks, &to, &b->timeline, NULL);
    if (s == GP_OK)
        s = compile_regions(job, b);
    if (s == GP_OK) {
        gp_dashboard_inputs in = {
            .traces = gp_job_traces(job),
            .n_traces = job->n_ranks,
            .summary = b->summary,
            .timeline = b->timeline,
            .analysis = b->analysis,
            .op_table = b->ops,
            .compile = (const gp_compile_trace *const *)b->compile,
            .n_compile = b->n_compile,
        };
        s = gp_dashboard_build(&in, &b->dashboard, NULL);
    }
    if (s != GP_OK) {
        gp_report_bundle_free(b);
        return s;
    }
    *out = b;
    return GP_OK;
}

void gp_report_bundle_free(gp_report_bundle *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n_compile; i++)
        gp_compile_trace_free(b->compile[i]);
    free(b->compile);
    gp_dashboard_free(b->dashboard);
    gp_ops_free(b->ops);
    gp_timeline_free(b->timeline);
    gp_analysis_free(b->analysis);
    gp_summary_free(b->summary);
    free(b);
}
