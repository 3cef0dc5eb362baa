/* gpuprof report: the one-page dashboard (report.html) of a trace, profile or job. */
#include <getopt.h>
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
            "total time, operations, unique operations, GPU time and peak memory; time by kind;\n"
            "mean time and calls of the top operations; GPU / CPU / transfer / overhead; memory\n"
            "over time; bottlenecks with suggestions (`gpuprof analyze`) and the top operations;\n"
            "a compact timeline; and a sortable, filterable table of every operation\n"
            "(statistics from `gpuprof summary`).\n"
            "\n"
            "options:\n"
            "  -o, --output FILE   output file (required)\n"
            "      --title TEXT    page title (default: the input's name)\n"
            "  -n, --top N         bottlenecks listed (default 10)\n"
            "      --json          print the headline figures as JSON on stdout\n"
            "  -q, --quiet         no warnings about suspect input on stderr\n"
            "      --progress      show read progress on stderr even when not a terminal\n"
            "  -h, --help          this help\n"
            "\n"
            "exit status: 0 success, 2 usage or input error\n");
}

int gp__cmd_report(int argc, char **argv)
{
    enum { OPT_TITLE = 256, OPT_JSON, OPT_PROGRESS };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'}, {"title", required_argument, NULL, OPT_TITLE},
        {"top", required_argument, NULL, 'n'},    {"json", no_argument, NULL, OPT_JSON},
        {"quiet", no_argument, NULL, 'q'},        {"progress", no_argument, NULL, OPT_PROGRESS},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    gp_summary_opts so;
    gp_summary_opts_init(&so);
    gp_read_opts rd;
    gp_read_opts_init(&rd);
    const char *out = NULL, *title = NULL;
    bool json = false, progress = gp__cli_stderr_is_tty();
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:n:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case OPT_TITLE:
            title = optarg;
            break;
        case 'n': {
            long v;
            if (!gp__cli_parse_long("report", "--top", optarg, 1, 1000, &v))
                return 2;
            so.top_n = (size_t)v;
            break;
        }
        case OPT_JSON:
            json = true;
            break;
        case 'q':
            rd.quiet = true;
            break;
        case OPT_PROGRESS:
            progress = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (!gp__cli_one_input_to_file("report", argc - optind, out, "report.html", usage))
        return 2;
    const char *in = argv[optind];
    gp_job *job = NULL;
    gp_report_bundle *b = NULL;
    gp_error err = {0};
    int rc = 2;
    if (gp__cli_read_job("report", in, &rd, progress, true, &job) != GP_OK)
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
    const gp_dashboard *d = b->dashboard;
    if (gp_dashboard_write_html(d, title ? title : in, out, &err) != GP_OK) {
        fprintf(stderr, "gpuprof report: %s\n", err.msg);
        rc = gp_status_exit_code(err.status ? err.status : GP_EIO);
        goto done;
    }
    if (json) {
        gp__jw w;
        gp__jw_init(&w, stdout);
        gp__jw_obj_begin(&w);
        gp__jw_kv_str(&w, "output", out);
        gp__jw_kv_int(&w, "total_time_ns", d->span);
        gp__jw_kv_int(&w, "operations", (int64_t)d->operations);
        gp__jw_kv_int(&w, "unique_operations", (int64_t)d->unique_operations);
        gp__jw_kv_int(&w, "gpu_time_ns", d->gpu_time);
        gp__jw_key(&w, "peak_memory_bytes");
        if (d->peak_memory >= 0)
            gp__jw_double(&w, d->peak_memory);
        else
            gp__jw_null(&w);
        gp__jw_obj_end(&w);
        (void)gp__jw_finish(&w);
        putchar('\n');
    } else
        printf("wrote %s: open it in a browser\n", out);
    rc = 0;
done:
    gp_report_bundle_free(b);
    gp_job_free(job);
    return rc;
}
