/* gpuprof summary: per-name statistics per event kind and the top-N bottlenecks. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli/cli.h"
#include "gpuprof/summary.h"
#include "gpuprof/trace.h"

static void usage(FILE *fp)
{
    fprintf(
        fp,
        "usage: gpuprof summary [options] TRACE|DIR...\n"
        "\n"
        "Per-name statistics (calls, self and inclusive time, mean, min, max, stddev, p50, p95,\n"
        "p99, share of GPU time or of the kind's self time) for each event kind, and the top-N\n"
        "bottlenecks by self time (GPU work when selected, else CPU). Self time excludes events\n"
        "nested on the same thread (aten::addmm inside aten::linear). TRACE is a\n"
        "PyTorch-profiler/Kineto or Chrome trace (.json or .json.gz) or a gpuprof profile; a\n"
        "DIR is a multi-rank job (every *.json[.gz] in it). Several inputs are merged by name.\n"
        "\n"
        "options:\n"
        "  -k, --kind KIND    only this kind (repeatable or comma-separated): kernel, memcpy,\n"
        "                     memset, sync, cpu_op, runtime, driver, annotation,\n"
        "                     gpu_annotation, python, range, overhead, other\n"
        "  -n, --top N        rows per table and bottlenecks (text: default 10; --json and\n"
        "                     --csv: every row unless --top is given; 0 = all rows)\n"
        "  -w, --name-width N width of the name column in text output (default 40)\n"
        "      --json         JSON output (schema in docs/summary.md)\n"
        "      --csv          CSV output, one row per (kind, name)\n"
        "  -q, --quiet        no warnings about suspect input on stderr\n"
        "      --progress     show read progress on stderr even when it is not a terminal\n"
        "  -h, --help         this help\n"
        "\n"
        "exit status: 0 success, 2 usage or input error\n");
}

int gp__cmd_summary(int argc, char **argv)
{
    enum { OPT_JSON = 256, OPT_CSV, OPT_PROGRESS };
    static const struct option longopts[] = {{"kind", required_argument, NULL, 'k'},
                                             {"top", required_argument, NULL, 'n'},
                                             {"name-width", required_argument, NULL, 'w'},
                                             {"json", no_argument, NULL, OPT_JSON},
                                             {"csv", no_argument, NULL, OPT_CSV},
                                             {"quiet", no_argument, NULL, 'q'},
                                             {"progress", no_argument, NULL, OPT_PROGRESS},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    gp_summary_opts sopts;
    gp_summary_opts_init(&sopts);
    gp_summary_render_opts ropts = {10, 40};
    bool top_given = false;
    gp_read_opts rd;
    gp_read_opts_init(&rd);
    bool json = false, csv = false, progress = gp__cli_stderr_is_tty();
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "k:n:w:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'k': {
            char *list = strdup(optarg);
            if (!list)
                return 2;
            for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
                 tok = strtok_r(NULL, ",", &save)) {
                gp_event_kind k = gp_event_kind_parse(tok);
                if (k == GP_EV_KIND_COUNT) {
                    gp__cli_error("summary", "unknown kind '%s' (see --help)", tok);
                    free(list);
                    return 2;
                }
                sopts.kinds |= 1u << k;
            }
            free(list);
            break;
        }
        case 'n': {
            long v;
            if (!gp__cli_parse_long("summary", "--top", optarg, 0, 1000000, &v))
                return 2;
            ropts.top_n = (size_t)v;
            top_given = true;
            sopts.top_n = v ? (size_t)v : SIZE_MAX; /* 0: every row, bottlenecks too */
            break;
        }
        case 'w': {
            long v;
            if (!gp__cli_parse_long("summary", "--name-width", optarg, 10, 400, &v))
                return 2;
            ropts.name_width = (int)v;
            break;
        }
        case OPT_JSON:
            json = true;
            break;
        case OPT_CSV:
            csv = true;
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
    if (optind >= argc) {
        gp__cli_error("summary", "no input (give a trace file or a directory)");
        usage(stderr);
        return 2;
    }
    if (json && csv) {
        gp__cli_error("summary", "--json and --csv are exclusive");
        return 2;
    }
    /* Machine output holds every row unless --top asks for a cut; text keeps a readable default
     * and says how many rows it left out. */
    if ((json || csv) && !top_given)
        ropts.top_n = 0;
    int rc = 2;
    gp_job **jobs = calloc((size_t)(argc - optind), sizeof *jobs);
    gp_trace **traces = NULL;
    size_t n_jobs = 0, n_traces = 0;
    gp_summary *sum = NULL;
    if (!jobs)
        goto done;
    for (int i = optind; i < argc; i++) {
        if (gp__cli_read_job("summary", argv[i], &rd, progress, true, &jobs[n_jobs]) != GP_OK)
            goto done;
        n_traces += jobs[n_jobs++]->n_ranks;
    }
    traces = calloc(n_traces, sizeof *traces);
    if (!traces)
        goto done;
    n_traces = 0;
    for (size_t j = 0; j < n_jobs; j++)
        for (size_t r = 0; r < jobs[j]->n_ranks; r++)
            traces[n_traces++] = jobs[j]->ranks[r];
    if (gp_summary_compute(traces, n_traces, &sopts, &sum) != GP_OK) {
        gp__cli_error("summary", "out of memory");
        rc = 1;
        goto done;
    }
    gp_status st = json  ? gp_summary_render_json(sum, &ropts, stdout)
                   : csv ? gp_summary_render_csv(sum, &ropts, stdout)
                         : gp_summary_render_text(sum, &ropts, stdout);
    if (st != GP_OK)
        gp__cli_error("summary", "writing the output failed: %s", gp_strerror(st));
    rc = gp_status_exit_code(st);
done:
    gp_summary_free(sum);
    free(traces);
    for (size_t j = 0; j < n_jobs; j++)
        gp_job_free(jobs[j]);
    free(jobs);
    return rc;
}
