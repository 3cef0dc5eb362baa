/* gpuprof timeline: a self-contained HTML timeline of a trace (tracks per CPU thread and GPU
 * stream per rank, counters, memory) drawn on a canvas with level of detail. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli/cli.h"
#include "core/json_writer.h"
#include "core/util.h"
#include "gpuprof/analyze.h"
#include "gpuprof/report.h"
#include "gpuprof/trace.h"

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: gpuprof timeline [options] TRACE|PROFILE|DIR -o timeline.html\n"
            "\n"
            "Writes one self-contained HTML file (no network) with a row per CPU thread and GPU\n"
            "stream of every rank, counter rows (monitor samples) and allocated memory, and the\n"
            "CPU active / GPU busy / overlap figures. Drawn on a canvas with level of detail:\n"
            "drag to pan, wheel to zoom, shift+wheel to scroll rows, click an event for its\n"
            "details and its launch -> kernel flow, shift+drag to measure.\n"
            "\n"
            "options:\n"
            "  -o, --output FILE   output file (required)\n"
            "      --title TEXT    page title (default: the input's name)\n"
            "      --max-depth N   draw nesting levels 0..N only (default: all)\n"
            "      --no-cpu        GPU streams and counters only\n"
            "      --critical-path compute the critical path of each step (its analysis alone)\n"
            "                      and overlay it: path events highlighted, the rest dimmed,\n"
            "                      its launch/sync/dependency edges as arrows, a legend with\n"
            "                      its length and class split; a toggle turns it off\n"
            "      --json          print the figures as JSON on stdout\n"
            "  -q, --quiet         no warnings about suspect input on stderr\n"
            "      --progress      show read progress on stderr even when not a terminal\n"
            "  -h, --help          this help\n"
            "\n"
            "exit status: 0 success, 2 usage or input error\n");
}

enum { OPT_DEPTH = GP__CLI_ID_OWN, OPT_NOCPU, OPT_CP };

static const gp__cli_opt timeline_opts[] = {GP__CLI_OPT_OUTPUT,
                                            GP__CLI_OPT_TITLE,
                                            GP__CLI_ARG("max-depth", OPT_DEPTH),
                                            GP__CLI_FLAG("no-cpu", OPT_NOCPU),
                                            GP__CLI_FLAG("critical-path", OPT_CP),
                                            GP__CLI_OPT_JSON,
                                            GP__CLI_OPT_QUIET,
                                            GP__CLI_OPT_PROGRESS,
                                            GP__CLI_OPT_HELP,
                                            GP__CLI_END};

static int take_option(void *ctx, int id, char *arg)
{
    gp_timeline_opts *to = ctx;
    if (id == OPT_NOCPU) {
        to->cpu_rows = false;
        return 0;
    }
    if (id == OPT_CP) {
        to->critical_path = true;
        return 0;
    }
    long v;
    if (!gp__cli_parse_long("timeline", "--max-depth", arg, 0, 250, &v))
        return 2;
    to->max_depth = (int)v;
    return 0;
}

/* The figures as one JSON object on stdout. */
static int print_json(const char *out, const gp_timeline *tl)
{
    gp__jw w;
    gp__jw_init(&w, stdout);
    gp__jw_obj_begin(&w);
    gp__jw_kv_str(&w, "output", out);
    gp__jw_kv_int(&w, "rows", (int64_t)tl->n_rows);
    gp__jw_kv_int(&w, "events", (int64_t)tl->n_events);
    gp__jw_kv_int(&w, "span_ns", tl->end - tl->start);
    gp__jw_kv_int(&w, "cpu_active_ns", tl->cpu_active);
    gp__jw_kv_int(&w, "gpu_busy_ns", tl->gpu_active); /* was gpu_active_ns */
    gp__jw_kv_int(&w, "overlap_ns", tl->overlap);
    if (tl->critical_path) { /* only with --critical-path: the output without it is unchanged */
        gp_ns len = 0;
        for (size_t i = 0; i < tl->n_cp_ranks; i++)
            len = gp__sat_add(len, tl->cp_ranks[i].length);
        gp__jw_kv_int(&w, "critical_path_ns", len);
        gp__jw_kv_int(&w, "critical_path_events", (int64_t)tl->n_cp_events);
        gp__jw_kv_int(&w, "critical_path_links", (int64_t)tl->n_cp_links);
    }
    return gp__cli_end_json_line("timeline", &w);
}

int gp__cmd_timeline(int argc, char **argv)
{
    gp_timeline_opts to;
    gp_timeline_opts_init(&to);
    static const gp__cli_spec spec = {
        .cmd = "timeline", .usage = usage, .opts = timeline_opts, .handle = take_option};
    gp__cli_common o;
    int first;
    int rc = gp__cli_parse_options(&spec, &to, argc, argv, &o, &first);
    if (rc >= 0)
        return rc;
    if (!gp__cli_one_input_to_file("timeline", argc - first, o.output, "timeline.html", usage))
        return 2;
    gp_read_opts rd;
    gp__cli_read_opts(&o, &rd);
    rd.keep_op_shapes = true; /* the details panel shows a CPU op's Input Dims and types */
    const char *in = argv[first];
    gp_job *job = NULL;
    gp_timeline *tl = NULL;
    gp_error err = {0};
    rc = 2;
    if (gp__cli_read_job("timeline", in, &rd, o.progress, true, &job) != GP_OK)
        goto done;
    /* CPU active / GPU busy / overlap: gp_timeline_build runs the activity analysis alone */
    gp_status s = gp_timeline_build(gp_job_traces(job), job->n_ranks, &to, &tl, &err);
    if (s != GP_OK) {
        gp__cli_error("timeline", "%s: %s", in, err.msg);
        rc = gp_status_exit_code(s);
        goto done;
    }
    s = gp_timeline_write_html(tl, o.title ? o.title : in, o.output, &err);
    if (!gp__cli_file_written("timeline", s, &err, &rc))
        goto done;
    if (o.json)
        rc = print_json(o.output, tl);
    else {
        printf("wrote %s (%zu rows, %llu events)\n", o.output, tl->n_rows,
               (unsigned long long)tl->n_events);
        rc = gp__cli_finish_stdout("timeline", GP_OK);
    }
done:
    gp_timeline_free(tl);
    gp_job_free(job);
    return rc;
}
