/* gpuprof trace: run an unmodified CUDA program under the CUPTI injection library and write a
 * Kineto-compatible trace per process; a per-kernel summary goes to stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli/cli.h"
#include "gpuprof/summary.h"
#include "gpuprof/trace.h"
#include "produce/tracer/launch.h"

static void usage(FILE *fp)
{
    fprintf(
        fp,
        "usage: gpuprof trace [-o trace.json] [--kinds LIST] [--buffer-mb N] [--flush-ms N]\n"
        "                     [--no-summary | --json] -- ./app [args...]\n"
        "\n"
        "Runs the program with CUPTI activity tracing injected (CUDA_INJECTION64_PATH) and\n"
        "writes a Kineto-compatible Chrome JSON trace: kernels, copies, memsets, allocations,\n"
        "CUDA runtime/driver calls, synchronisation, CUDA events, NVTX ranges, CUPTI overhead.\n"
        "\n"
        "  -o, --output PATH  trace file (default gpuprof_trace.json; a .gz name is compressed);\n"
        "                     when several processes use CUDA, one file per process:\n"
        "                     <stem>.<pid>.json[.gz]. '-': the trace on standard output (the\n"
        "                     program's own output then goes to stderr; one process only)\n"
        "  --kinds LIST       comma list of kernel,memcpy,memset,memory,runtime,driver,sync,\n"
        "                     event,nvtx,overhead (default: all)\n"
        "  --buffer-mb N      activity buffer pool per process in MiB, allocated up front (default "
        "32)\n"
        "  --flush-ms N       rewrite the trace every N ms while the program runs, so a crash\n"
        "                     leaves a readable trace (default 2000, 0 = only at the end)\n"
        "  --no-summary       do not print the per-kernel summary on stderr\n"
        "  --json             the summary on stderr as JSON (as gpuprof summary --json)\n"
        "\n"
        "Exit code: the program's own (128 + signal when a signal ended it); 2 for usage\n"
        "errors, when the tracer is not available, or when -o - met several processes.\n"
        "A rank from RANK, OMPI_COMM_WORLD_RANK or SLURM_PROCID goes into distributedInfo.\n");
}

static int64_t meta_int(const gp_trace *t, const char *key)
{
    for (size_t i = 0; i < t->n_meta; i++)
        if (strcmp(gp_trace_str(t, t->meta[i].key), key) == 0)
            return strtoll(gp_trace_str(t, t->meta[i].value_json), NULL, 10);
    return 0;
}

/* Reads the traces back and prints the per-kernel summary; shown names where each went ("-":
 * standard output), NULL: its path. Returns false when one is unreadable. */
typedef enum summary_mode { SUMMARY_NONE, SUMMARY_TEXT, SUMMARY_JSON } summary_mode;

static bool print_summary(char **paths, size_t n, const char *shown, summary_mode mode)
{
    gp_trace **traces = calloc(n, sizeof *traces);
    size_t got = 0;
    bool ok = traces != NULL;
    gp_read_opts ro;
    gp_read_opts_init(&ro);
    ro.quiet = true;
    for (size_t i = 0; ok && i < n; i++) {
        gp_error err = {0};
        if (gp_trace_read(paths[i], &ro, &traces[got], &err) != GP_OK) {
            gp__cli_error("trace", "%s", err.msg);
            ok = false;
            break;
        }
        const gp_trace *t = traces[got++];
        int64_t dropped = meta_int(t, "dropped_records");
        const char *where = shown ? shown : paths[i];
        fprintf(stderr, "gpuprof trace: wrote %s (%zu events",
                strcmp(where, "-") == 0 ? "the trace to standard output" : where,
                gp_trace_event_count(t));
        if (t->dist.present)
            fprintf(stderr, ", rank %d", t->dist.rank);
        fprintf(stderr, ")\n");
        if (dropped > 0)
            fprintf(stderr,
                    "gpuprof trace: %s: CUPTI dropped %lld records; the trace is incomplete "
                    "(raise --buffer-mb)\n",
                    paths[i], (long long)dropped);
    }
    if (ok && mode != SUMMARY_NONE) {
        gp_summary_opts so;
        gp_summary_opts_init(&so);
        so.kinds = (1u << GP_EV_KERNEL) | (1u << GP_EV_MEMCPY) | (1u << GP_EV_MEMSET);
        gp_summary *sum = NULL;
        gp_summary_render_opts rop = {.top_n = 15, .name_width = 48};
        if (gp_summary_compute(gp_traces_const(traces), got, &so, &sum, NULL) == GP_OK) {
            gp_status rs = mode == SUMMARY_JSON ? gp_summary_render_json(sum, &rop, stderr)
                                                : gp_summary_render_text(sum, &rop, stderr);
            if (rs != GP_OK)
                ok = false;
            gp_summary_free(sum);
        } else {
            ok = false;
        }
    }
    for (size_t i = 0; i < got; i++)
        gp_trace_free(traces[i]);
    free(traces);
    return ok;
}

/* Says where the traces of an earlier run that was killed before it could move them are. */
static void tell_earlier(const char *output)
{
    char **paths = NULL;
    size_t n = 0;
    if (gp__trace_find_earlier(output, &paths, &n) != GP_OK)
        return;
    for (size_t k = 0; k < n; k++)
        fprintf(stderr,
                "gpuprof trace: note: an earlier run was stopped before it could move its trace; "
                "it is at %s (move or delete it)\n",
                paths[k]);
    gp__trace_paths_free(paths, n);
}

enum { OPT_KINDS = GP__CLI_ID_OWN, OPT_BUFFER_MB, OPT_FLUSH_MS, OPT_NO_SUMMARY, OPT_JSON };

static const gp__cli_opt trace_opts[] = {GP__CLI_OPT_HELP,
                                         GP__CLI_OPT_OUTPUT,
                                         GP__CLI_ARG("kinds", OPT_KINDS),
                                         GP__CLI_ARG("buffer-mb", OPT_BUFFER_MB),
                                         GP__CLI_ARG("flush-ms", OPT_FLUSH_MS),
                                         GP__CLI_FLAG("no-summary", OPT_NO_SUMMARY),
                                         GP__CLI_FLAG("json", OPT_JSON),
                                         GP__CLI_END};

typedef struct trace_args {
    gp__trace_launch_opts launch;
    summary_mode summary;
} trace_args;

static int take_option(void *ctx, int id, char *arg)
{
    trace_args *a = ctx;
    unsigned long long v;
    switch (id) {
    case OPT_KINDS:
        a->launch.kinds = arg;
        break;
    case OPT_BUFFER_MB:
        if (!gp__parse_uint(arg, 65536, &v) || v == 0) {
            gp__cli_error("trace", "--buffer-mb: '%s' is not a size in MiB (1..65536)", arg);
            return 2;
        }
        a->launch.buffer_mb = (unsigned)v;
        break;
    case OPT_FLUSH_MS:
        if (!gp__parse_uint(arg, 3600000, &v)) {
            gp__cli_error("trace", "--flush-ms: '%s' is not a number of ms", arg);
            return 2;
        }
        a->launch.flush_ms = (int)v;
        break;
    case OPT_NO_SUMMARY:
        a->summary = SUMMARY_NONE;
        break;
    default: /* OPT_JSON */
        a->summary = SUMMARY_JSON;
    }
    return 0;
}

int gp__cmd_trace(int argc, char **argv)
{
    trace_args a = {.launch = {.flush_ms = -1}, .summary = SUMMARY_TEXT};
    static const gp__cli_spec spec = {.cmd = "trace",
                                      .usage = usage,
                                      .opts = trace_opts,
                                      .handle = take_option,
                                      .exact = true,
                                      .stop_at_operand = true};
    gp__cli_common c;
    int i;
    int rc = gp__cli_parse_options(&spec, &a, argc, argv, &c, &i);
    if (rc >= 0)
        return rc;
    gp__trace_launch_opts o = a.launch;
    o.output = c.output;
    summary_mode summary = a.summary;
    if (o.kinds) {
        static const char *words[] = {"kernel", "memcpy", "memset", "memory",   "runtime", "driver",
                                      "sync",   "event",  "nvtx",   "overhead", "all"};
        for (const char *p = o.kinds; *p;) {
            size_t len = strcspn(p, ","), k;
            for (k = 0; k < sizeof words / sizeof words[0]; k++) {
                size_t wl = strlen(words[k]);
                if ((len == wl || (len == wl + 1 && p[wl] == 's')) && strncmp(p, words[k], wl) == 0)
                    break;
            }
            if (k == sizeof words / sizeof words[0]) {
                gp__cli_error("trace", "--kinds: unknown kind '%.*s'", (int)len, p);
                return 2;
            }
            p += len + (p[len] == ',');
        }
    }
    if (i >= argc) {
        gp__cli_error("trace", "no program given (usage: gpuprof trace [options] -- ./app args)");
        return 2;
    }
    o.argv = argv + i;
    tell_earlier(o.output);
    gp__trace_launch_result res;
    gp_error err = {0};
    gp_status s = gp__trace_launch(&o, &res, &err);
    if (s != GP_OK) {
        gp__cli_error("trace", "%s", err.msg[0] ? err.msg : gp_strerror(s));
        return 2;
    }
    if (res.term_signal)
        fprintf(stderr, "gpuprof trace: %s ended by signal %d\n", o.argv[0], res.term_signal);
    if (res.n_traces == 0)
        fprintf(stderr, "gpuprof trace: no CUDA activity recorded\n");
    else if (!res.kept &&
             !print_summary(res.traces, res.n_traces, res.scratch ? o.output : NULL, summary))
        fprintf(stderr, "gpuprof trace: could not summarise the trace\n");
    int code = res.exit_code;
    if (res.kept) { /* several processes: standard output takes one trace */
        gp__cli_error("trace",
                      "%zu processes used CUDA and standard output takes one trace: nothing was "
                      "written to it; the traces are in %s",
                      res.n_traces, res.scratch);
        for (size_t k = 0; k < res.n_traces; k++)
            fprintf(stderr, "  %s\n", res.traces[k]);
        code = 2;
    }
    gp__trace_launch_result_free(&res);
    return code;
}
