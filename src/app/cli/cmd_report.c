/* gpuprof report: the one-page dashboard (report.html) of a trace, profile or job. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli/cli.h"
#include "core/json_writer.h"
#include "gpuprof/analyze.h"
#include "gpuprof/report.h"
#include "gpuprof/summary.h"
#include "gpuprof/trace.h"

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: gpuprof report [options] TRACE|PROFILE|DIR -o report.html\n"
            "\n"
            "Writes the dashboard, one self-contained HTML file (no network, print-friendly):\n"
            "total time, operations, unique operations, GPU busy, GPU work sum and peak memory\n"
            "(docs/analyses.md, \"Terms\"); the wall time of each CPU thread and GPU stream split\n"
            "by kind; a per-ProfilerStep breakdown; the HTA breakdowns (temporal, idle per\n"
            "stream, kernel types, overlap, queue length); mean time and calls of the top\n"
            "operations; memory over time; bottlenecks with suggestions (`gpuprof analyze`) and\n"
            "the top operations; a compact timeline; a sortable, filterable table of every\n"
            "operation (statistics from `gpuprof summary`); on traces with input shapes, the\n"
            "operators by shape with their roofline figures (`gpuprof ops`); on traces with\n"
            "torch.compile regions, the regions and the time between them (`gpuprof compile`).\n"
            "\n"
            "options:\n"
            "  -o, --output FILE   output file (required)\n"
            "      --title TEXT    page title (default: the input's name)\n"
            "  -n, --top N         operations in the top-operations list (default 10) and chart\n"
            "                      (at most 15)\n"
            "      --json          print the headline figures as JSON on stdout\n"
            "  -q, --quiet         no warnings about suspect input on stderr\n"
            "      --progress      show read progress on stderr even when not a terminal\n"
            "  -h, --help          this help\n"
            "\n"
            "exit status: 0 success, 2 usage or input error\n");
}

static const gp__cli_opt report_opts[] = {
    GP__CLI_OPT_OUTPUT, GP__CLI_OPT_TITLE,    GP__CLI_OPT_TOP,  GP__CLI_OPT_JSON,
    GP__CLI_OPT_QUIET,  GP__CLI_OPT_PROGRESS, GP__CLI_OPT_HELP, GP__CLI_END};

/* The headline figures as one JSON object on stdout. */
static int print_json(const char *out, const gp_dashboard *d)
{
    gp__jw w;
    gp__jw_init(&w, stdout);
    gp__jw_obj_begin(&w);
    gp__jw_kv_str(&w, "output", out);
    gp__jw_kv_int(&w, "total_time_ns", d->span);
    gp__jw_kv_int(&w, "operations", (int64_t)d->operations);
    gp__jw_kv_int(&w, "unique_operations", (int64_t)d->unique_operations);
    /* GPU busy (union per device, from the analysis; null without one) and the GPU work sum
     * (durations added up): docs/analyses.md, "Terms". Was one "gpu_time_ns" holding either. */
    gp__jw_key(&w, "gpu_busy_ns");
    if (d->gpu_busy)
        gp__jw_int(&w, d->gpu_time);
    else
        gp__jw_null(&w);
    gp__jw_kv_int(&w, "gpu_work_sum_ns", d->summary->gpu_time);
    gp__jw_key(&w, "peak_memory_bytes");
    if (d->peak_memory >= 0)
        gp__jw_double(&w, d->peak_memory);
    else
        gp__jw_null(&w);
    return gp__cli_end_json_line("report", &w);
}

int gp__cmd_report(int argc, char **argv)
{
    static const gp__cli_spec spec = {
        .cmd = "report", .usage = usage, .opts = report_opts, .top_min = 1, .top_max = 1000};
    gp__cli_common o;
    int first;
    int rc = gp__cli_parse_options(&spec, NULL, argc, argv, &o, &first);
    if (rc >= 0)
        return rc;
    if (!gp__cli_one_input_to_file("report", argc - first, o.output, "report.html", usage))
        return 2;
    gp_summary_opts so;
    gp_summary_opts_init(&so);
    if (o.top_given)
        so.top_n = (size_t)o.top;
    gp_read_opts rd;
    gp__cli_read_opts(&o, &rd);
    rd.keep_op_shapes = true; /* the op section's FLOPs and bytes (gpuprof ops --by shape) */
    const char *in = argv[first];
    gp_job *job = NULL;
    gp_report_bundle *b = NULL;
    gp_error err = {0};
    rc = 2;
    if (gp__cli_read_job("report", in, &rd, o.progress, true, &job) != GP_OK)
        goto done;
    gp_status s = gp_report_bundle_build(job, &so, &b);
    if (s != GP_OK) {
        gp__cli_error("report", "%s: %s", in, gp_strerror(s));
        rc = gp_status_exit_code(s);
        goto done;
    }
    /* Without an analysis the dashboard still has everything else; its panels say what is
     * missing. */
    if (b->analysis_error.status != GP_OK)
        fprintf(stderr, "gpuprof report: analysis failed, no suggestions: %s\n",
                b->analysis_error.msg);
    s = gp_dashboard_write_html(b->dashboard, o.title ? o.title : in, o.output, &err);
    if (!gp__cli_file_written("report", s, &err, &rc))
        goto done;
    if (o.json)
        rc = print_json(o.output, b->dashboard);
    else {
        printf("wrote %s: open it in a browser\n", o.output);
        rc = gp__cli_finish_stdout("report", GP_OK);
    }
done:
    gp_report_bundle_free(b);
    gp_job_free(job);
    return rc;
}
