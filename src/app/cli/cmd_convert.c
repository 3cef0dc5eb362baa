/* gpuprof convert: read any supported trace and write Kineto-compatible Chrome JSON. */
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include "app/cli/cli.h"
#include "core/parse.h"
#include "gpuprof/analyze.h"
#include "gpuprof/trace.h"

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: gpuprof convert [options] INPUT -o OUTPUT\n"
            "\n"
            "Reads a trace (Kineto/PyTorch profiler JSON of any schema, legacy 2021 files, bare\n"
            "event arrays, gzip-compressed or not) and writes Chrome trace JSON that HTA,\n"
            "Perfetto UI, chrome://tracing and gpuprof read: times in µs with 3 decimals relative\n"
            "to baseTimeNanoseconds, `\"rank\": N`, ac2g flows for launch -> GPU work. OUTPUT\n"
            "ending in .gz is compressed. The output is written atomically.\n"
            "\n"
            "options:\n"
            "  -o, --output FILE  output path (required; - for standard output)\n"
            "      --critical-path  mark the critical path as HTA's overlaid trace does:\n"
            "                     args.critical = 1 on its events, flow arrows (cat\n"
            "                     critical_path) for its launch, dependency and sync edges;\n"
            "                     every step's path (docs/analyses.md, \"Critical path\")\n"
            "      --cp-mode M    default | hta (HTA's graph: one region)\n"
            "      --cp-annotation NAME  the path of events whose name contains NAME (\"\": the\n"
            "                     whole trace)\n"
            "      --cp-instance N  only instance N of --cp-annotation\n"
            "  -q, --quiet        no warnings about suspect input\n"
            "  -h, --help         this help\n");
}

enum { OPT_CP = GP__CLI_ID_OWN, OPT_CP_MODE, OPT_CP_ANN, OPT_CP_INST };

static const gp__cli_opt convert_opts[] = {GP__CLI_OPT_OUTPUT,
                                           GP__CLI_FLAG("critical-path", OPT_CP),
                                           GP__CLI_ARG("cp-mode", OPT_CP_MODE),
                                           GP__CLI_ARG("cp-annotation", OPT_CP_ANN),
                                           GP__CLI_ARG("cp-instance", OPT_CP_INST),
                                           GP__CLI_OPT_QUIET,
                                           GP__CLI_OPT_HELP,
                                           GP__CLI_END};

typedef struct convert_args {
    bool critical_path;
    gp_analyze_opts opts;
} convert_args;

static int take_option(void *ctx, int id, char *arg)
{
    convert_args *a = ctx;
    double n;
    switch (id) {
    case OPT_CP:
        a->critical_path = true;
        return 0;
    case OPT_CP_MODE:
        if (strcmp(arg, "default") != 0 && strcmp(arg, "hta") != 0) {
            gp__cli_error("convert", "--cp-mode takes default or hta, not '%s'", arg);
            return 2;
        }
        a->opts.cp_hta = strcmp(arg, "hta") == 0;
        return 0;
    case OPT_CP_ANN:
        a->opts.cp_annotation = arg;
        return 0;
    default: /* OPT_CP_INST */
        if (!gp__parse_real(arg, 0, 1e15, &n) || n != (double)(int64_t)n) {
            gp__cli_error("convert", "--cp-instance needs a whole number >= 0, not '%s'", arg);
            return 2;
        }
        a->opts.cp_instance = (int64_t)n;
        return 0;
    }
}

/* The marks of every critical path of t (owned by *an and *m's arrays: free both). */
static gp_status critical_marks(const gp_trace *t, const gp_analyze_opts *o, gp_analysis **an,
                                gp_chrome_marks *m, gp_error *err)
{
    memset(m, 0, sizeof(*m));
    gp_status st = gp_analyze_trace(t, o, an, err);
    if (st != GP_OK)
        return st;
    const gp_rank_analysis *r = &(*an)->ranks[0];
    size_t ne = 0, nl = 0;
    for (size_t i = 0; i < r->n_critical_paths; i++) {
        ne += r->critical_paths[i].n_events;
        nl += r->critical_paths[i].n_links;
    }
    const gp_event **ev = malloc((ne + 1) * sizeof(*ev));
    gp_chrome_link *ln = malloc((nl + 1) * sizeof(*ln));
    if (!ev || !ln) {
        free(ev);
        free(ln);
        return GP_ENOMEM;
    }
    for (size_t i = 0; i < r->n_critical_paths; i++) {
        const gp_critical_path *cp = &r->critical_paths[i];
        if (cp->n_events) /* an empty path's arrays are NULL */
            memcpy(ev + m->n_critical, cp->events, cp->n_events * sizeof(*ev));
        m->n_critical += cp->n_events;
        if (cp->n_links)
            memcpy(ln + m->n_links, cp->links, cp->n_links * sizeof(*ln));
        m->n_links += cp->n_links;
    }
    m->critical = ev;
    m->links = ln;
    return GP_OK;
}

int gp__cmd_convert(int argc, char **argv)
{
    static const gp__cli_spec spec = {
        .cmd = "convert", .usage = usage, .opts = convert_opts, .handle = take_option};
    gp__cli_common o;
    int first;
    convert_args ca = {.critical_path = false};
    gp_analyze_opts_init(&ca.opts);
    int rc = gp__cli_parse_options(&spec, &ca, argc, argv, &o, &first);
    if (rc >= 0)
        return rc;
    const char *out = o.output;
    if (first != argc - 1 || !out) {
        gp__cli_error("convert", "need exactly one INPUT and -o OUTPUT");
        usage(stderr);
        return 2;
    }
    gp_read_opts rd;
    gp__cli_read_opts(&o, &rd);
    gp_error err = {0};
    gp_trace *t = NULL;
    if (gp_trace_read(argv[first], &rd, &t, &err) != GP_OK) {
        fprintf(stderr, "gpuprof convert: %s\n", err.msg);
        return 2;
    }
    gp_trace *one[1] = {t};
    gp_job job = {one, 1, false};
    gp__cli_warn_read(&job, false, rd.quiet);
    gp_analysis *an = NULL;
    gp_chrome_marks marks = {NULL, 0, NULL, 0};
    gp_status s = ca.critical_path ? critical_marks(t, &ca.opts, &an, &marks, &err) : GP_OK;
    if (s == GP_OK)
        s = strcmp(out, "-") == 0
                ? gp_trace_write_chrome_stream_marked(t, stdout, ca.critical_path ? &marks : NULL,
                                                      &err)
                : gp_trace_write_chrome_marked(t, out, ca.critical_path ? &marks : NULL, &err);
    free((void *)marks.critical);
    free((void *)marks.links);
    gp_analysis_free(an);
    gp_trace_free(t);
    if (s != GP_OK) {
        fprintf(stderr, "gpuprof convert: %s\n", err.msg);
        return gp_status_exit_code(s);
    }
    return 0;
}
