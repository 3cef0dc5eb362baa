/* gpuprof timeline: a self-contained HTML timeline of a trace (tracks per CPU thread and GPU
 * stream per rank, counters, memory) drawn on a canvas with level of detail. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli/cli.h"
#include "core/json_writer.h"
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
            "CPU active / GPU active / overlap figures. Drawn on a canvas with level of detail:\n"
            "drag to pan, wheel to zoom, shift+wheel to scroll rows, click an event for its\n"
            "details and its launch -> kernel flow, shift+drag to measure.\n"
            "\n"
            "options:\n"
            "  -o, --output FILE   output file (required)\n"
            "      --title TEXT    page title (default: the input's name)\n"
            "      --max-depth N   draw nesting levels 0..N only (default: all)\n"
            "      --no-cpu        GPU streams and counters only\n"
            "      --json          print the figures as JSON on stdout\n"
            "  -q, --quiet         no warnings about suspect input on stderr\n"
            "      --progress      show read progress on stderr even when not a terminal\n"
            "  -h, --help          this help\n"
            "\n"
            "exit status: 0 success, 2 usage or input error\n");
}

int gp__cmd_timeline(int argc, char **argv)
{
    enum { OPT_TITLE = 256, OPT_DEPTH, OPT_NOCPU, OPT_JSON, OPT_PROGRESS };
    static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
                                             {"title", required_argument, NULL, OPT_TITLE},
                                             {"max-depth", required_argument, NULL, OPT_DEPTH},
                                             {"no-cpu", no_argument, NULL, OPT_NOCPU},
                                             {"json", no_argument, NULL, OPT_JSON},
                                             {"quiet", no_argument, NULL, 'q'},
                                             {"progress", no_argument, NULL, OPT_PROGRESS},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    gp_timeline_opts to;
    gp_timeline_opts_init(&to);
    gp_read_opts rd;
    gp_read_opts_init(&rd);
    const char *out = NULL, *title = NULL;
    bool json = false, progress = gp__cli_stderr_is_tty();
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case OPT_TITLE:
            title = optarg;
            break;
        case OPT_DEPTH: {
            long v;
            if (!gp__cli_parse_long("timeline", "--max-depth", optarg, 0, 250, &v))
                return 2;
            to.max_depth = (int)v;
            break;
        }
        case OPT_NOCPU:
            to.cpu_rows = false;
            break;
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
    if (!gp__cli_one_input_to_file("timeline", argc - optind, out, "timeline.html", usage))
        return 2;
    const char *in = argv[optind];
    gp_job *job = NULL;
    gp_timeline *tl = NULL;
    gp_analysis *an = NULL;
    gp_error err = {0};
    int rc = 2;
    if (gp__cli_read_and_analyze("timeline", in, &rd, progress, "no busy figures", &job, &an) !=
        GP_OK)
        goto done;
    to.analysis = an; /* CPU active / GPU active / overlap as `gpuprof analyze` defines them */
    gp_status s = gp_timeline_build(job->ranks, job->n_ranks, &to, &tl);
    if (s != GP_OK) {
        gp__cli_error("timeline", "%s: %s", in, gp_strerror(s));
        rc = gp_status_exit_code(s);
        goto done;
    }
    if (gp_timeline_write_html(tl, title ? title : in, out, &err) != GP_OK) {
        fprintf(stderr, "gpuprof timeline: %s\n", err.msg);
        rc = gp_status_exit_code(err.status ? err.status : GP_EIO);
        goto done;
    }
    if (json) {
        gp__jw w;
        gp__jw_init(&w, stdout);
        gp__jw_obj_begin(&w);
        gp__jw_kv_str(&w, "output", out);
        gp__jw_kv_int(&w, "rows", (int64_t)tl->n_rows);
        gp__jw_kv_int(&w, "events", (int64_t)tl->n_events);
        gp__jw_kv_int(&w, "span_ns", tl->end - tl->start);
        gp__jw_kv_int(&w, "cpu_active_ns", tl->cpu_active);
        gp__jw_kv_int(&w, "gpu_active_ns", tl->gpu_active);
        gp__jw_kv_int(&w, "overlap_ns", tl->overlap);
        gp__jw_obj_end(&w);
        (void)gp__jw_finish(&w);
        putchar('\n');
    } else
        printf("wrote %s (%zu rows, %llu events)\n", out, tl->n_rows,
               (unsigned long long)tl->n_events);
    rc = 0;
done:
    gp_timeline_free(tl);
    gp_analysis_free(an);
    gp_job_free(job);
    return rc;
}
