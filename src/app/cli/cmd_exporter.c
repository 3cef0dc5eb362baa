/* gpuprof exporter: Prometheus exporter for GPU metrics (libmicrohttpd), /metrics and /healthz.
 * Binds 127.0.0.1 unless --listen names another address. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/parse.h"
#include "app/cli/cli.h"
#include "gpuprof/monitor.h"
#include "gpuprof/serve.h"

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: gpuprof exporter [options]\n"
            "\n"
            "Serves GPU metrics in the Prometheus text format at /metrics and a health check at\n"
            "/healthz. Metric names and units: docs/monitor.md.\n"
            "\n"
            "options:\n"
            "  --listen HOST:PORT  address to bind (default 127.0.0.1:9400; port 0 = any free).\n"
            "                      No authentication or TLS: beyond loopback, bind one interface\n"
            "                      and put an authenticating proxy in front (docs/monitor.md)\n"
            "  --interval DUR      sampling interval (default 1s)\n"
            "  --config FILE       YAML monitor configuration\n"
            "  --level L           lightweight | standard | detailed | comprehensive\n"
            "                      (default detailed: ECC, max clocks, per-process data, MIG)\n"
            "  --set KEY=VALUE     set any monitor configuration key\n"
            "  --hostname NAME     value of the hostname label (default: this machine's name)\n"
            "  --port-file FILE    write the bound port to FILE once listening\n"
            "  -h, --help          this text\n");
}

enum { OPT_LISTEN = GP__CLI_ID_OWN, OPT_INTERVAL, OPT_HOSTNAME, OPT_PORT_FILE };

static const gp__cli_opt exporter_opts[] = {GP__CLI_OPT_CONFIG,
                                            GP__CLI_OPT_SET,
                                            GP__CLI_OPT_LEVEL,
                                            GP__CLI_OPT_HELP,
                                            GP__CLI_ARG("listen", OPT_LISTEN),
                                            GP__CLI_ARG("interval", OPT_INTERVAL),
                                            GP__CLI_ARG("hostname", OPT_HOSTNAME),
                                            GP__CLI_ARG("port-file", OPT_PORT_FILE),
                                            GP__CLI_END};

typedef struct exporter_args {
    gp__cli_monitor_cfg mc;
    const char *listen, *hostname, *port_file;
    uint32_t interval_ms;
} exporter_args;

static int take_option(void *ctx, int id, char *arg)
{
    exporter_args *a = ctx;
    int rc = gp__cli_monitor_option("exporter", &a->mc, id, arg);
    if (rc >= 0)
        return rc;
    if (id == OPT_LISTEN)
        a->listen = arg;
    else if (id == OPT_HOSTNAME)
        a->hostname = arg;
    else if (id == OPT_PORT_FILE)
        a->port_file = arg;
    else if (gp__parse_duration_ms(arg, &a->interval_ms) != GP_OK) {
        gp__cli_error("exporter", "--interval '%s': expected e.g. 500ms, 1s", arg);
        return 2;
    }
    return 0;
}

int gp__cmd_exporter(int argc, char **argv)
{
    gp_monitor_config cfg;
    gp_monitor_config_init(&cfg);
    cfg.level = GP_LEVEL_DETAILED;
    cfg.sampling_interval_ms = 1000;
    exporter_args a = {.listen = "127.0.0.1:9400"};
    static const gp__cli_spec spec = {.cmd = "exporter",
                                      .usage = usage,
                                      .opts = exporter_opts,
                                      .handle = take_option,
                                      .exact = true};
    gp__cli_common o;
    int first;
    int rc = gp__cli_parse_options(&spec, &a, argc, argv, &o, &first);
    if (rc >= 0)
        return rc;
    const char *listen = a.listen;
    uint32_t interval_ms = a.interval_ms;
    gp_error err = {0};
    if (!gp__cli_monitor_apply("exporter", &a.mc, &cfg))
        return 2;
    if (interval_ms)
        cfg.sampling_interval_ms = interval_ms;
    if (cfg.mode == GP_MODE_PROFILING)
        cfg.mode = GP_MODE_MONITORING;

    gp_monitor *mon = NULL;
    gp_status st = gp_monitor_open(&cfg, &mon, &err);
    if (st != GP_OK && st != GP_ENODRIVER) {
        gp__cli_error("exporter", "%s", err.msg);
        return 2;
    }
    /* No driver: serve anyway, gpuprof_gpu_up 0 and an unavailable /healthz, so that the
     * scrape target is up and an alert on the GPU fires instead of a silent dead target. */
    char reason[sizeof err.msg];
    snprintf(reason, sizeof reason, "%s", st == GP_ENODRIVER ? err.msg : "");
    gp_exporter_opts opts = {
        .listen = listen, .hostname = a.hostname, .unavailable_reason = mon ? NULL : reason};
    gp_exporter *ex = NULL;
    st = gp_exporter_start(mon, &opts, &ex, &err);
    if (st != GP_OK) {
        gp__cli_error("exporter", "%s", err.msg);
        gp_monitor_close(mon);
        return st == GP_EINVAL ? 2 : 1;
    }
    if (!mon)
        fprintf(stderr, "gpuprof exporter: %s: serving gpuprof_gpu_up 0\n", reason);
    if (mon && gp_monitor_start(mon) != GP_OK) {
        gp__cli_error("exporter", "cannot start the sampler thread");
        gp_exporter_stop(ex);
        gp_monitor_close(mon);
        return 1;
    }
    gp__cli_catch_stop_signals();
    char host[80];
    snprintf(host, sizeof host, "%.*s", (int)(strrchr(listen, ':') - listen), listen);
    fprintf(stderr, "gpuprof exporter: serving http://%s:%u/metrics (%zu GPU(s), every %u ms)\n",
            host, gp_exporter_port(ex), mon ? gp_monitor_device_count(mon) : 0,
            cfg.sampling_interval_ms);
    rc = gp__cli_serve_until_stopped("exporter", a.port_file, gp_exporter_port(ex));
    gp_exporter_stop(ex);
    if (mon)
        gp_monitor_stop(mon);
    gp_monitor_close(mon);
    return rc;
}
