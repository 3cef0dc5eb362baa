/* gpuprof advise: optimisation suggestions for a profile or trace (the profile rules of
 * gpuprof/advise.h plus analyze's bottleneck rules), filtered by priority, as text or JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli/cli.h"
#include "core/atomic_file.h"
#include "gpuprof/advise.h"

static void usage(FILE *fp)
{
    fprintf(
        fp,
        "usage: gpuprof advise [options] PROFILE|TRACE|DIR\n"
        "\n"
        "Optimisation suggestions, each with its type (routing, batching, memory, caching,\n"
        "algorithm, parallelization), priority, operation, expected improvement, an\n"
        "implementation hint, current and estimated time and the potential speedup. On the\n"
        "ranges of an in-process profile (gp_profiler_export_json): GPU ops averaging under\n"
        "1 ms -> CPU; CPU ops over 10 ms that move memory -> GPU; 10 or more back-to-back calls\n"
        "-> batching; 100 or more calls under 1 ms -> caching; ops moving over 100 MB ->\n"
        "memory; GPU busy under 50 %% of the span -> parallelization. On traces, gpuprof\n"
        "analyze's bottleneck rules (launch-bound, small kernels, overlap, copies, syncs,\n"
        "occupancy, memory, stragglers). `analyze` and `report` show the same findings.\n"
        "Rules and estimates: docs/advise.md.\n"
        "\n"
        "options:\n"
        "      --priority P        only suggestions of priority P or higher: critical, high,\n"
        "                          medium, low (default: all)\n"
        "      --gpu-op-max-ms X   routing to the CPU below this mean per call (default 1)\n"
        "      --cpu-op-min-ms X   routing to the GPU above this mean per call (default 10)\n"
        "      --batch-min-calls N batching from this many calls in a row (default 10)\n"
        "      --cache-min-calls N caching from this many calls ... (default 100)\n"
        "      --cache-max-ms X    ... averaging under this (default 1)\n"
        "      --memory-min-mb X   memory above this many MB per call (default 100)\n"
        "      --util-max-pct X    parallelization below this GPU utilisation (default 50)\n"
        "      --json              JSON output (schema gpuprof.advise/1)\n"
        "  -o, --output FILE       write the output to FILE (atomically)\n"
        "  -q, --quiet             no warnings about suspect input on stderr\n"
        "      --progress          show read progress on stderr even when not a terminal\n"
        "  -h, --help              this help\n"
        "\n"
        "exit status: 0 success, 2 usage or input error\n");
}

enum {
    OPT_PRIORITY = GP__CLI_ID_OWN,
    OPT_GPU_MAX,
    OPT_CPU_MIN,
    OPT_BATCH,
    OPT_CACHE_CALLS,
    OPT_CACHE_MS,
    OPT_MEMORY,
    OPT_UTIL
};

static const gp__cli_opt advise_opts[] = {GP__CLI_ARG("priority", OPT_PRIORITY),
                                          GP__CLI_ARG("gpu-op-max-ms", OPT_GPU_MAX),
                                          GP__CLI_ARG("cpu-op-min-ms", OPT_CPU_MIN),
                                          GP__CLI_ARG("batch-min-calls", OPT_BATCH),
                                          GP__CLI_ARG("cache-min-calls", OPT_CACHE_CALLS),
                                          GP__CLI_ARG("cache-max-ms", OPT_CACHE_MS),
                                          GP__CLI_ARG("memory-min-mb", OPT_MEMORY),
                                          GP__CLI_ARG("util-max-pct", OPT_UTIL),
                                          GP__CLI_OPT_JSON,
                                          GP__CLI_OPT_OUTPUT,
                                          GP__CLI_OPT_QUIET,
                                          GP__CLI_OPT_PROGRESS,
                                          GP__CLI_OPT_HELP,
                                          GP__CLI_END};

typedef struct advise_args {
    gp_advise_opts thr;
    gp_advise_render_opts ro;
} advise_args;

/* The thresholds that take a real number: option, range, field. */
static int take_real(advise_args *a, int id, const char *arg)
{
    const struct {
        int id;
        const char *opt;
        double hi;
        double *field;
    } reals[] = {
        {OPT_GPU_MAX, "--gpu-op-max-ms", 1e9, &a->thr.gpu_op_max_ms},
        {OPT_CPU_MIN, "--cpu-op-min-ms", 1e9, &a->thr.cpu_op_min_ms},
        {OPT_CACHE_MS, "--cache-max-ms", 1e9, &a->thr.cache_max_ms},
        {OPT_MEMORY, "--memory-min-mb", 1e12, &a->thr.memory_min_mb},
        {OPT_UTIL, "--util-max-pct", 100, &a->thr.util_max_pct},
    };
    for (size_t i = 0; i < GP_ARRAY_LEN(reals); i++)
        if (reals[i].id == id)
            return gp__cli_parse_real("advise", reals[i].opt, arg, 0, reals[i].hi, reals[i].field)
                       ? 0
                       : 2;
    return 2;
}

static int take_option(void *ctx, int id, char *arg)
{
    advise_args *a = ctx;
    unsigned long long u;
    switch (id) {
    case OPT_PRIORITY:
        for (int p = GP_PRIO_CRITICAL; p <= GP_PRIO_LOW; p++)
            if (strcmp(arg, gp_priority_name((gp_priority)p)) == 0) {
                a->ro.min_priority = (gp_priority)p;
                return 0;
            }
        gp__cli_error("advise", "--priority: critical, high, medium or low, not '%s'", arg);
        return 2;
    case OPT_GPU_MAX:
    case OPT_CPU_MIN:
    case OPT_CACHE_MS:
    case OPT_MEMORY:
    case OPT_UTIL:
        return take_real(a, id, arg);
    default: /* OPT_BATCH, OPT_CACHE_CALLS */
        if (!gp__cli_parse_ulong("advise",
                                 id == OPT_BATCH ? "--batch-min-calls" : "--cache-min-calls", arg,
                                 UINT32_MAX, &u))
            return 2;
        if (u < 2) {
            gp__cli_error("advise", "%s needs at least 2",
                          id == OPT_BATCH ? "--batch-min-calls" : "--cache-min-calls");
            return 2;
        }
        *(id == OPT_BATCH ? &a->thr.batch_min_calls : &a->thr.cache_min_calls) = (uint32_t)u;
        return 0;
    }
}

/* Renders to o->output (atomically) or stdout; the exit code. */
static int write_result(const gp_analysis *an, const advise_args *a, const gp__cli_common *o)
{
    gp_status (*fn)(const gp_analysis *, const gp_advise_render_opts *, FILE *) =
        o->json ? gp_advise_render_json : gp_advise_render_text;
    if (!o->output)
        return gp__cli_finish_stdout("advise", fn(an, &a->ro, stdout));
    gp__afile f;
    gp_error err = {0};
    int rc = 0;
    gp_status st = gp__afile_open(&f, o->output, &err);
    if (st == GP_OK && (st = fn(an, &a->ro, f.fp)) != GP_OK) {
        gp__afile_abort(&f);
        gp_error_set(&err, st, "%s: cannot write: %s", o->output, gp_strerror(st));
    } else if (st == GP_OK) {
        st = gp__afile_commit(&f, &err);
    }
    return gp__cli_file_written("advise", st, &err, &rc) ? 0 : rc;
}

int gp__cmd_advise(int argc, char **argv)
{
    advise_args a;
    gp_advise_opts_init(&a.thr);
    a.ro = (gp_advise_render_opts){.min_priority = GP_PRIO_LOW, .source = NULL};
    gp__cli_common o;
    int first;
    static const gp__cli_spec spec = {
        .cmd = "advise", .usage = usage, .opts = advise_opts, .handle = take_option};
    int rc = gp__cli_parse_options(&spec, &a, argc, argv, &o, &first);
    if (rc >= 0)
        return rc;
    if (argc - first != 1) {
        gp__cli_error("advise", "give one profile, trace or job directory");
        usage(stderr);
        return 2;
    }
    gp_read_opts rd;
    gp__cli_read_opts(&o, &rd);
    gp_job *job = NULL;
    gp_analysis *an = NULL;
    if (gp__cli_read_job("advise", argv[first], &rd, o.progress, true, &job) != GP_OK)
        return 2;
    gp_analyze_opts ao;
    gp_analyze_opts_init(&ao);
    ao.advise = &a.thr;
    gp_error err = {0};
    gp_status st = gp_analyze_job(job, &ao, &an, &err);
    if (st != GP_OK) {
        fprintf(stderr, "gpuprof advise: %s\n", err.msg[0] ? err.msg : gp_strerror(st));
        rc = 2;
    } else {
        a.ro.source = argv[first];
        rc = write_result(an, &a, &o);
    }
    gp_analysis_free(an);
    gp_job_free(job);
    return rc;
}
