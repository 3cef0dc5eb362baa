/* gpuprof convert: read any supported trace and write Kineto-compatible Chrome JSON. */
#include <stdio.h>
#include <string.h>

#include "app/cli/cli.h"
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
            "  -q, --quiet        no warnings about suspect input\n"
            "  -h, --help         this help\n");
}

static const gp__cli_opt convert_opts[] = {GP__CLI_OPT_OUTPUT, GP__CLI_OPT_QUIET, GP__CLI_OPT_HELP,
                                           GP__CLI_END};

int gp__cmd_convert(int argc, char **argv)
{
    static const gp__cli_spec spec = {.cmd = "convert", .usage = usage, .opts = convert_opts};
    gp__cli_common o;
    int first;
    int rc = gp__cli_parse_options(&spec, NULL, argc, argv, &o, &first);
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
    gp_status s = strcmp(out, "-") == 0 ? gp_trace_write_chrome_stream(t, stdout, &err)
                                        : gp_trace_write_chrome(t, out, &err);
    gp_trace_free(t);
    if (s != GP_OK) {
        fprintf(stderr, "gpuprof convert: %s\n", err.msg);
        return gp_status_exit_code(s);
    }
    return 0;
}
