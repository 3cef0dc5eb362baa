/* gpuprof monitor: live NVML monitor. A compact table per interval (like `nvidia-smi dmon`), JSON
 * lines or CSV; alerts and detector events interleaved; clean exit on SIGINT/SIGTERM. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "render/monitor_text.h"
#include "core/parse.h"
#include "app/cli/cli.h"
#include "core/lock.h"
#include "gpuprof/monitor.h"
#include "gpuprof/trace.h"

typedef enum { OUT_TABLE, OUT_JSON, OUT_CSV } out_format;

/* Serialises stdout (and stderr for CSV) between the sampler thread's event listener and the
 * printing loop. stdout itself is not a variable the analysis can see; the printers that use it
 * say GP_REQUIRES(out_lock). */
static gp__mutex out_lock = GP_MUTEX_INIT;

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: gpuprof monitor [options]\n"
            "\n"
            "Samples every NVIDIA GPU through NVML and prints one row per GPU per interval;\n"
            "alerts and detector events (leaks, bottlenecks, XID, throttling) are interleaved.\n"
            "\n"
            "options:\n"
            "  --interval DUR    print interval: 500ms, 1s, 2m (default 1s); sampling runs at\n"
            "                    sampling_interval_ms (default 100 ms) or faster to match\n"
            "  --count N         stop after N intervals (default: until Ctrl-C / SIGTERM)\n"
            "  --json            JSON lines: {\"type\":\"sample\",...} rows and {\"event\":...} "
            "events\n"
            "  --csv             CSV rows on stdout (events go to stderr)\n"
            "  --processes       with --csv: one row per GPU process instead of per GPU (the\n"
            "                    table and JSON lines always list the processes)\n"
            "  --config FILE     YAML configuration (docs/monitor.md lists the keys)\n"
            "  --level L         lightweight | standard | detailed | comprehensive\n"
            "  --mode M          monitoring | adaptive | debug (profiling: use -o)\n"
            "  --set KEY=VALUE   set any configuration key (after --config)\n"
            "  --health          print the health check as JSON after one sample and exit;\n"
            "                    with --json and no driver: status \"unavailable\", exit 2\n"
            "  -o, --output FILE profiling mode: also record every sample as counter tracks\n"
            "                    (gpu0.temp_celsius, ...) and write them as a Chrome/Kineto\n"
            "                    trace to FILE on exit (.gz compresses)\n"
            "  -h, --help        this text\n"
            "\n"
            "At the end it prints the suggestions drawn from what it saw (type, severity,\n"
            "message, suggestion, evidence). Without an NVIDIA driver it prints one line\n"
            "and exits with code 2.\n");
}

static void on_event(const gp_monitor_event *ev, void *ctx)
{
    out_format fmt = *(const out_format *)ctx;
    gp__mutex_lock(&out_lock);
    if (fmt == OUT_JSON) {
        gp_monitor_event_write_json(ev, stdout);
    } else {
        FILE *fp = fmt == OUT_CSV ? stderr : stdout;
        fprintf(fp, "# %-8s %s: %s\n", gp_severity_name(ev->severity),
                gp_monitor_event_type_name(ev->type), ev->message);
        fflush(fp);
    }
    gp__mutex_unlock(&out_lock);
}

static void sleep_ms(uint32_t ms)
{
    /* in slices, so a signal ends the wait quickly */
    while (ms > 0 && !gp__cli_stopping()) {
        uint32_t slice = ms < 50 ? ms : 50;
        struct timespec ts = {0, (long)slice * 1000000L};
        nanosleep(&ts, NULL);
        ms -= slice;
    }
}

enum { OPT_JSON = GP__CLI_ID_OWN, OPT_CSV, OPT_HEALTH, OPT_INTERVAL, OPT_COUNT, OPT_PROCS };

static const gp__cli_opt monitor_opts[] = {GP__CLI_OPT_CONFIG,
                                           GP__CLI_OPT_SET,
                                           GP__CLI_OPT_LEVEL,
                                           GP__CLI_OPT_MODE,
                                           GP__CLI_OPT_HELP,
                                           GP__CLI_FLAG("json", OPT_JSON),
                                           GP__CLI_FLAG("csv", OPT_CSV),
                                           GP__CLI_FLAG("health", OPT_HEALTH),
                                           GP__CLI_FLAG("processes", OPT_PROCS),
                                           GP__CLI_ARG("interval", OPT_INTERVAL),
                                           GP__CLI_ARG("count", OPT_COUNT),
                                           GP__CLI_OPT_OUTPUT,
                                           GP__CLI_END};

/* The process rows of a round and the /proc reader behind their host figures (rows NULL: the
 * processes are not printed, for want of memory). */
typedef struct proc_out {
    gp_host_procs *hp;
    gp_process_row *rows;
    size_t cap;
} proc_out;

typedef struct monitor_args {
    gp__cli_monitor_cfg mc;
    out_format fmt;
    uint32_t interval_ms;
    long long count; /* -1: until stopped */
    bool health;
    bool procs_csv; /* --processes */
} monitor_args;

static int take_option(void *ctx, int id, char *arg)
{
    monitor_args *a = ctx;
    int rc = gp__cli_monitor_option("monitor", &a->mc, id, arg);
    if (rc >= 0)
        return rc;
    switch (id) {
    case OPT_JSON:
        a->fmt = OUT_JSON;
        break;
    case OPT_CSV:
        a->fmt = OUT_CSV;
        break;
    case OPT_HEALTH:
        a->health = true;
        break;
    case OPT_PROCS:
        a->procs_csv = true;
        break;
    case OPT_INTERVAL:
        if (gp__parse_duration_ms(arg, &a->interval_ms) != GP_OK) {
            gp__cli_error("monitor", "--interval '%s': expected e.g. 500ms, 1s, 2m", arg);
            return 2;
        }
        break;
    default: /* OPT_COUNT */
        if (!gp__parse_int(arg, 1, LLONG_MAX, &a->count)) {
            gp__cli_error("monitor", "--count '%s': expected a positive integer", arg);
            return 2;
        }
    }
    return 0;
}

/* Options into *a and the configuration into *cfg; -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, monitor_args *a, const char **output,
                      gp_monitor_config *cfg)
{
    gp_monitor_config_init(cfg);
    *a = (monitor_args){.fmt = OUT_TABLE, .interval_ms = 1000, .count = -1};
    static const gp__cli_spec spec = {.cmd = "monitor",
                                      .usage = usage,
                                      .opts = monitor_opts,
                                      .handle = take_option,
                                      .exact = true};
    gp__cli_common o;
    int first;
    int rc = gp__cli_parse_options(&spec, a, argc, argv, &o, &first);
    if (rc >= 0)
        return rc;
    *output = o.output;
    if (!gp__cli_monitor_apply("monitor", &a->mc, cfg))
        return 2;
    if (o.output)
        cfg->mode = GP_MODE_PROFILING;
    if (cfg->mode == GP_MODE_PROFILING && !o.output) {
        gp__cli_error("monitor", "mode 'profiling' records a trace: name it with -o FILE");
        return 2;
    }
    if (a->procs_csv && a->fmt != OUT_CSV) {
        gp__cli_error("monitor", "--processes goes with --csv");
        return 2;
    }
    if (cfg->sampling_interval_ms > a->interval_ms)
        cfg->sampling_interval_ms = a->interval_ms;
    return -1;
}

/* --health --json without a monitor: the health document with status "unavailable" and the
 * reason on stdout; exit code 2. */
static int print_unavailable(const gp_monitor_config *cfg, const gp_error *why)
{
    gp_monitor_health h;
    gp_monitor_health_unavailable(cfg, why, &h);
    char *json = NULL;
    size_t len = 0;
    if (gp_monitor_health_render_json(&h, &json, &len) != GP_OK) {
        gp__cli_error("monitor", "%s", why->msg);
        return 2;
    }
    printf("%s\n", json);
    free(json);
    (void)gp__cli_finish_stdout("monitor", GP_OK);
    return 2;
}

/* Opens NVML, attaches the trace for -o, adds the event listener and waits for the first sample.
 * -1 with *mon (and *trace for -o) the caller's, else the exit code with nothing left open. */
static int start(const gp_monitor_config *cfg, const char *output, monitor_args *a,
                 gp_monitor **mon, gp_trace **trace)
{
    gp_error err = {0};
    if (gp_monitor_open(cfg, mon, &err) != GP_OK) {
        if (a->health && a->fmt == OUT_JSON)
            return print_unavailable(cfg, &err);
        gp__cli_error("monitor", "%s", err.msg);
        return 2;
    }
    if (gp_monitor_device_count(*mon) == 0) {
        gp__cli_error("monitor", "the NVIDIA driver (%s) reports no GPU",
                      gp_monitor_driver_version(*mon));
        gp_monitor_close(*mon);
        return 2;
    }
    gp__cli_catch_stop_signals();
    const char *why = NULL;
    if (output && (gp_trace_create("gpuprof monitor", trace) != GP_OK ||
                   gp_monitor_attach_trace(*mon, *trace) != GP_OK))
        why = "cannot create the trace (out of memory)";
    else if (!a->health && gp_monitor_add_listener(*mon, on_event, &a->fmt) != GP_OK)
        why = "";
    else if (gp_monitor_start(*mon) != GP_OK)
        why = "cannot start the sampler thread";
    else if (!gp_monitor_wait_samples(*mon, 1, 10000))
        why = "no sample within 10 s";
    if (!why)
        return -1;
    if (why[0])
        gp__cli_error("monitor", "%s", why);
    gp_monitor_close(*mon);
    gp_trace_free(*trace);
    *trace = NULL;
    return 1;
}

/* --health: one health check as JSON on stdout; 1 when it says error. */
static int print_health(gp_monitor *mon)
{
    gp_monitor_stop(mon);
    gp_monitor_health h;
    gp_monitor_get_health(mon, &h);
    char *json = NULL;
    size_t len = 0;
    int rc = 1;
    if (gp_monitor_health_render_json(&h, &json, &len) == GP_OK) {
        printf("%s\n", json);
        rc = h.status == GP_HEALTH_ERROR ? 1 : 0;
        free(json);
        if (gp__cli_finish_stdout("monitor", GP_OK) != 0)
            rc = 2;
    }
    return rc;
}

/* Waits until the sampler has taken more than `seen` rounds (or a stop signal came). */
static void wait_new_round(gp_monitor *mon, uint64_t seen)
{
    while (!gp__cli_stopping() && !gp_monitor_wait_samples(mon, seen + 1, 100)) {
    }
}

/* The suggestions after the run, in the output's format (CSV: on stderr, as events). */
static void print_suggestions(gp_monitor *mon, out_format fmt) GP_REQUIRES(out_lock)
{
    gp_suggestion sg[64];
    size_t n = 0;
    if (gp_monitor_suggestions(mon, sg, GP_ARRAY_LEN(sg), &n) != GP_OK)
        return;
    if (fmt == OUT_JSON)
        gp_monitor_suggestions_write_json(stdout, sg, n);
    else
        gp_monitor_suggestions_text(fmt == OUT_CSV ? stderr : stdout, sg, n);
}

/* The rows of one round: the n GPUs, then the np processes (table, JSON; CSV: one or the
 * other). */
static void print_round(gp_monitor *mon, const monitor_args *a, size_t n, const gp_process_row *r,
                        size_t np) GP_REQUIRES(out_lock)
{
    gp_ns ts = gp_monitor_now();
    for (size_t i = 0; i < n && !(a->fmt == OUT_CSV && a->procs_csv); i++) {
        gp_gpu_ident id;
        gp_gpu_sample s;
        if (gp_monitor_device(mon, i, &id) != GP_OK)
            continue;
        bool have = gp_monitor_latest(mon, i, &s) == GP_OK;
        if (have)
            ts = s.ts;
        if (a->fmt == OUT_TABLE)
            gp_monitor_table_row(stdout, &id, &s, have);
        else if (a->fmt == OUT_CSV)
            gp_monitor_csv_row(stdout, &id, &s, have);
        else
            gp_monitor_sample_write_json(stdout, &id, &s, have);
    }
    if (a->fmt == OUT_TABLE)
        gp_monitor_process_table(stdout, r, np);
    else if (a->fmt == OUT_JSON)
        gp_monitor_process_write_json(stdout, ts, r, np);
    else if (a->procs_csv)
        gp_monitor_process_csv_rows(stdout, ts, r, np);
}

/* One row per GPU per interval until stopped or --count rows, then the suggestions. Each row is a
 * new sampling round (never the same sample twice): with the print interval equal to the sampling
 * interval, every round is printed once, so the stopped event's count is the rows printed. 2 when
 * stdout failed. */
static int print_rows(gp_monitor *mon, const monitor_args *a, const gp_monitor_config *cfg,
                      const proc_out *pr)
{
    size_t n = gp_monitor_device_count(mon);
    gp__mutex_lock(&out_lock);
    if (a->fmt == OUT_CSV && a->procs_csv)
        gp_monitor_process_csv_header(stdout);
    else if (a->fmt == OUT_CSV)
        gp_monitor_csv_header(stdout);
    gp__mutex_unlock(&out_lock);
    long long rows = 0;
    uint64_t seen = 0;
    while (!gp__cli_stopping() && (a->count < 0 || rows < a->count)) {
        if (rows > 0) {
            if (a->interval_ms > cfg->sampling_interval_ms)
                sleep_ms(a->interval_ms);
            wait_new_round(mon, seen);
        }
        if (gp__cli_stopping())
            break;
        seen = gp_monitor_samples_total(mon);
        size_t np = 0;
        if (pr->rows && gp_monitor_process_rows(mon, pr->hp, pr->rows, pr->cap, &np) != GP_OK)
            np = 0;
        gp__mutex_lock(&out_lock);
        if (a->fmt == OUT_TABLE && rows % 20 == 0)
            gp_monitor_table_header(stdout);
        print_round(mon, a, n, pr->rows, np);
        fflush(stdout);
        gp__mutex_unlock(&out_lock);
        rows++;
    }
    gp_monitor_stop(mon);
    gp__mutex_lock(&out_lock);
    if (cfg->enable_optimization_suggestions)
        print_suggestions(mon, a->fmt);
    int rc = gp__cli_finish_stdout("monitor", GP_OK);
    gp__mutex_unlock(&out_lock);
    return rc;
}

/* -o: writes the recorded counters as a trace; 1 on failure. */
static int write_trace(gp_trace *trace, const char *output, out_format fmt)
{
    gp_error err = {0};
    int rc = 0;
    if (gp_trace_finish(trace) != GP_OK || gp_trace_write_chrome(trace, output, &err) != GP_OK) {
        gp__cli_error("monitor", "cannot write %s: %s", output,
                      err.msg[0] ? err.msg : "out of memory");
        rc = 1;
    } else if (fmt != OUT_JSON) {
        fprintf(stderr, "gpuprof monitor: wrote %zu counter samples to %s\n", trace->n_counters,
                output);
    }
    gp_trace_free(trace);
    return rc;
}

int gp__cmd_monitor(int argc, char **argv)
{
    gp_monitor_config cfg;
    monitor_args a;
    const char *output = NULL;
    int rc = parse_args(argc, argv, &a, &output, &cfg);
    if (rc >= 0)
        return rc;
    gp_monitor *mon = NULL;
    gp_trace *trace = NULL;
    rc = start(&cfg, output, &a, &mon, &trace);
    if (rc >= 0)
        return rc;
    if (a.health) {
        rc = print_health(mon);
        gp_monitor_close(mon);
        gp_trace_free(trace);
        return rc;
    }
    proc_out pr = {.cap = 1024};
    if (gp_host_procs_create(&pr.hp) == GP_OK)
        pr.rows = malloc(pr.cap * sizeof *pr.rows);
    rc = print_rows(mon, &a, &cfg, &pr);
    free(pr.rows);
    gp_host_procs_free(pr.hp);
    gp_monitor_close(mon);
    if (trace && write_trace(trace, output, a.fmt) != 0 && rc == 0)
        rc = 1;
    return rc;
}
