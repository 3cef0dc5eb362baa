/* gpuprof summary: per-name statistics per event kind and the top-N bottlenecks. */
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
        "p99, share of the GPU work sum or of the kind's self time) for each event kind, and\n"
        "the top-N bottlenecks by self time (GPU work when selected, else CPU). Self time\n"
        "excludes events nested on the same thread (aten::addmm inside aten::linear). TRACE is a\n"
        "PyTorch-profiler/Kineto or Chrome trace (.json or .json.gz) or a gpuprof profile; a\n"
        "DIR is a multi-rank job (every *.json[.gz] in it). Several inputs are merged by name.\n"
        "A gpuprof profile whose ranges carry memory and CUDA-event times adds, per operation,\n"
        "the average memory (MiB) and GPU utilisation (%%) of its calls.\n"
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

enum { OPT_CSV = GP__CLI_ID_OWN };

static const gp__cli_opt summary_opts[] = {GP__CLI_ARG_S("kind", 'k'),
                                           GP__CLI_OPT_TOP,
                                           GP__CLI_ARG_S("name-width", 'w'),
                                           GP__CLI_OPT_JSON,
                                           GP__CLI_FLAG("csv", OPT_CSV),
                                           GP__CLI_OPT_QUIET,
                                           GP__CLI_OPT_PROGRESS,
                                           GP__CLI_OPT_HELP,
                                           GP__CLI_END};

typedef struct summary_args {
    gp_summary_opts sopts;
    gp_summary_render_opts ropts;
    bool csv;
    gp__cli_common o; /* the shared options */
    int first;        /* argv index of the first input */
    gp_read_opts rd;  /* how the inputs are read */
} summary_args;

static int take_option(void *ctx, int id, char *arg)
{
    summary_args *a = ctx;
    if (id == OPT_CSV) {
        a->csv = true;
        return 0;
    }
    if (id == 'w') {
        long v;
        if (!gp__cli_parse_long("summary", "--name-width", arg, 10, 400, &v))
            return 2;
        a->ropts.name_width = (int)v;
        return 0;
    }
    char *list = strdup(arg); /* 'k' */
    if (!list)
        return 2;
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        gp_event_kind k;
        if (gp_event_kind_parse(tok, &k) != GP_OK) {
            gp__cli_error("summary", "unknown kind '%s' (see --help)", tok);
            free(list);
            return 2;
        }
        a->sopts.kinds |= 1u << k;
    }
    free(list);
    return 0;
}

/* Options and operands into *a; -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, summary_args *a)
{
    gp__cli_common *o = &a->o;
    int *first = &a->first;
    gp_summary_opts_init(&a->sopts);
    a->ropts = (gp_summary_render_opts){10, 40};
    static const gp__cli_spec spec = {.cmd = "summary",
                                      .usage = usage,
                                      .opts = summary_opts,
                                      .handle = take_option,
                                      .top_min = 0,
                                      .top_max = 1000000};
    int rc = gp__cli_parse_options(&spec, a, argc, argv, o, first);
    if (rc >= 0)
        return rc;
    if (*first >= argc) {
        gp__cli_error("summary", "no input (give a trace file or a directory)");
        usage(stderr);
        return 2;
    }
    if (o->json && a->csv) {
        gp__cli_error("summary", "--json and --csv are exclusive");
        return 2;
    }
    if (o->top_given) {
        a->ropts.top_n = (size_t)o->top;
        a->sopts.top_n = o->top ? (size_t)o->top : SIZE_MAX; /* 0: every row, bottlenecks too */
    } else if (o->json || a->csv) {
        /* Machine output holds every row unless --top asks for a cut; text keeps a readable
         * default and says how many rows it left out. */
        a->ropts.top_n = 0;
    }
    gp__cli_read_opts(o, &a->rd);
    return -1;
}

int gp__cmd_summary(int argc, char **argv)
{
    summary_args a = {.csv = false};
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    rc = 2;
    gp__cli_inputs in;
    gp_summary *sum = NULL;
    gp_status rs =
        gp__cli_read_inputs("summary", argv + a.first, argc - a.first, &a.rd, a.o.progress, &in);
    if (rs != GP_OK) {
        if (rs == GP_ENOMEM)
            gp__cli_error("summary", "out of memory");
        goto done;
    }
    gp_error err = {0};
    if (gp_summary_compute(gp_traces_const(in.traces), in.n_traces, &a.sopts, &sum, &err) !=
        GP_OK) {
        gp__cli_error("summary", "%s", err.msg);
        rc = 1;
        goto done;
    }
    gp_status st = a.o.json ? gp_summary_render_json(sum, &a.ropts, stdout)
                   : a.csv  ? gp_summary_render_csv(sum, &a.ropts, stdout)
                            : gp_summary_render_text(sum, &a.ropts, stdout);
    rc = gp__cli_finish_stdout("summary", st);
done:
    gp_summary_free(sum);
    gp__cli_inputs_free(&in);
    return rc;
}
