/* gpuprof ops: GPU and CPU time per launching operator (or module, source line, annotation,
 * kernel, shape, instance), with the roofline of the performance model (docs/ops.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli/cli.h"
#include "render/ops_html.h"
#include "gpuprof/ops.h"
#include "gpuprof/trace.h"

static void usage(FILE *fp)
{
    fprintf(
        fp,
        "usage: gpuprof ops [options] TRACE|DIR...\n"
        "\n"
        "GPU work attributed to the CPU operators that launched it (correlation id -> launch\n"
        "call -> innermost cpu_op on that thread), with each op's self and inclusive CPU time,\n"
        "the GPU work it launched itself and with its nested ops (durations summed) and its\n"
        "GPU busy time, kernel counts, and for GEMMs, convolutions, attention, norms, softmax,\n"
        "elementwise ops and reductions the FLOPs and bytes of their input shapes: achieved\n"
        "TFLOP/s and TB/s, arithmetic intensity, compute- or memory-bound and %% of the\n"
        "device's roofline. Shapes need a trace recorded with record_shapes=True. Formulas and\n"
        "peaks: docs/ops.md.\n"
        "\n"
        "options:\n"
        "  -b, --by KEY        rows by name (default), shape (name + input dims + dtypes),\n"
        "                      module (innermost nn.Module), line (Python source line),\n"
        "                      annotation (record_function), kernel, instance\n"
        "      --no-merge      --by module: keep numbered modules apart (Linear_0, Linear_1)\n"
        "  -s, --sort KEY      self_gpu (default), gpu, self_cpu, cpu, calls, tflops,\n"
        "                      efficiency (lowest %% of roofline first)\n"
        "  -n, --top N         rows shown (text: default 20; --json and --csv: every row\n"
        "                      unless --top is given; 0 = all rows)\n"
        "      --peak-tflops X the device's peak TFLOP/s for every dtype (overrides the table)\n"
        "      --peak-tbps X   the device's memory bandwidth, TB/s (overrides the table)\n"
        "      --json          JSON output (schema in docs/ops.md)\n"
        "      --csv           CSV output, one row per line of the table\n"
        "      --html FILE     also write FILE: the roofline and every row of the table as a\n"
        "                      page (sortable, filterable), titled with the trace and device\n"
        "      --title TEXT    the page's title (default: the input's name)\n"
        "  -q, --quiet         no warnings about suspect input on stderr\n"
        "      --progress      show read progress on stderr even when it is not a terminal\n"
        "  -h, --help          this help\n"
        "\n"
        "exit status: 0 success, 2 usage or input error\n");
}

enum { OPT_CSV = GP__CLI_ID_OWN, OPT_NO_MERGE, OPT_PEAK_TFLOPS, OPT_PEAK_TBPS, OPT_HTML };

static const gp__cli_opt ops_opts[] = {GP__CLI_ARG_S("by", 'b'),
                                       GP__CLI_FLAG("no-merge", OPT_NO_MERGE),
                                       GP__CLI_ARG_S("sort", 's'),
                                       GP__CLI_OPT_TOP,
                                       GP__CLI_ARG("peak-tflops", OPT_PEAK_TFLOPS),
                                       GP__CLI_ARG("peak-tbps", OPT_PEAK_TBPS),
                                       GP__CLI_OPT_JSON,
                                       GP__CLI_FLAG("csv", OPT_CSV),
                                       GP__CLI_ARG("html", OPT_HTML),
                                       GP__CLI_OPT_TITLE,
                                       GP__CLI_OPT_QUIET,
                                       GP__CLI_OPT_PROGRESS,
                                       GP__CLI_OPT_HELP,
                                       GP__CLI_END};

typedef struct ops_args {
    gp_ops_opts o;
    bool csv;
    const char *html;
} ops_args;

static int take_option(void *ctx, int id, char *arg)
{
    ops_args *a = ctx;
    switch (id) {
    case OPT_CSV:
        a->csv = true;
        return 0;
    case OPT_HTML:
        a->html = arg;
        return 0;
    case OPT_NO_MERGE:
        a->o.no_merge = true;
        return 0;
    case OPT_PEAK_TFLOPS:
        return gp__cli_parse_real("ops", "--peak-tflops", arg, 1e-6, 1e9, &a->o.peak_tflops) ? 0
                                                                                             : 2;
    case OPT_PEAK_TBPS:
        return gp__cli_parse_real("ops", "--peak-tbps", arg, 1e-6, 1e6, &a->o.peak_tbps) ? 0 : 2;
    case 'b':
        if (gp_ops_by_parse(arg, &a->o.by) != GP_OK) {
            gp__cli_error("ops",
                          "unknown --by '%s' (name, shape, module, line, annotation, "
                          "kernel, instance)",
                          arg);
            return 2;
        }
        return 0;
    default: /* 's' */
        if (gp_ops_sort_parse(arg, &a->o.sort) != GP_OK) {
            gp__cli_error("ops",
                          "unknown --sort '%s' (self_gpu, gpu, self_cpu, cpu, calls, "
                          "tflops, efficiency)",
                          arg);
            return 2;
        }
        return 0;
    }
}

int gp__cmd_ops(int argc, char **argv)
{
    ops_args a = {.csv = false};
    gp_ops_opts_init(&a.o);
    gp__cli_common o;
    int first;
    static const gp__cli_spec spec = {.cmd = "ops",
                                      .usage = usage,
                                      .opts = ops_opts,
                                      .handle = take_option,
                                      .top_min = 0,
                                      .top_max = 100000000};
    int rc = gp__cli_parse_options(&spec, &a, argc, argv, &o, &first);
    if (rc >= 0)
        return rc;
    if (first >= argc) {
        gp__cli_error("ops", "no input (give a trace file or a directory)");
        usage(stderr);
        return 2;
    }
    if (o.json && a.csv) {
        gp__cli_error("ops", "--json and --csv are exclusive");
        return 2;
    }
    size_t top = o.top_given ? (size_t)o.top : (o.json || a.csv) ? 0 : 20;
    gp_read_opts rd;
    gp__cli_read_opts(&o, &rd);
    rd.keep_op_shapes = true;
    rc = 2;
    gp__cli_inputs in;
    gp_ops *ops = NULL;
    gp_status rs = gp__cli_read_inputs("ops", argv + first, argc - first, &rd, o.progress, &in);
    if (rs != GP_OK) {
        if (rs == GP_ENOMEM)
            gp__cli_error("ops", "out of memory");
        goto done;
    }
    gp_error cerr = {0};
    if (gp_ops_compute(gp_traces_const(in.traces), in.n_traces, &a.o, &ops, &cerr) != GP_OK) {
        gp__cli_error("ops", "%s", cerr.msg);
        rc = 1;
        goto done;
    }
    gp_status st = o.json  ? gp_ops_render_json(ops, top, stdout)
                   : a.csv ? gp_ops_render_csv(ops, top, stdout)
                           : gp_ops_render_text(ops, top, stdout);
    rc = gp__cli_finish_stdout("ops", st);
    if (rc == 0 && a.html) {
        gp_error err = {0};
        char title[512]; /* the first input, and how many more */
        if (o.title)
            snprintf(title, sizeof title, "%s", o.title);
        else if (argc - first > 1)
            snprintf(title, sizeof title, "%s (+%d more)", argv[first], argc - first - 1);
        else
            snprintf(title, sizeof title, "%s", argv[first]);
        /* the page holds every row: its filter and counter are the way through them */
        (void)gp__cli_file_written("ops", gp__render_ops_page(ops, 0, title, a.html, &err), &err,
                                   &rc);
    }
done:
    gp_ops_free(ops);
    gp__cli_inputs_free(&in);
    return rc;
}
