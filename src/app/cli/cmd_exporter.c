/* gpuprof exporter: Prometheus exporter for GPU metrics (libmicrohttpd), /metrics and /healthz.
 * Binds 127.0.0.1 unless --listen names another address. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli/cli.h"
#include "gpuprof/monitor.h"
#include "gpuprof/serve.h"
#include "produce/monitor/duration.h"

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: gpuprof exporter [options]\n"
            "\n"
            "Serves GPU metrics in the Prometheus text format at /metrics and a health check at\n"
            "/healthz. Metric names and units: docs/monitor.md.\n"
            "\n"
            "options:\n"
            "  --listen HOST:PORT  address to bind (default 127.0.0.1:9400; port 0 = any free)\n"
            "  --interval DUR      sampling interval (default 1s)\n"
            "  --config FILE       YAML monitor configuration\n"
            "  --level L           lightweight | standard | detailed | comprehensive\n"
            "                      (default detailed: ECC, max clocks, per-process data, MIG)\n"
            "  --set KEY=VALUE     set any monitor configuration key\n"
            "  --hostname NAME     value of the hostname label (default: this machine's name)\n"
            "  --port-file FILE    write the bound port to FILE once listening\n"
            "  -h, --help          this text\n");
}

int gp__cmd_exporter(int argc, char **argv)
{
    gp_monitor_config cfg;
    gp_monitor_config_init(&cfg);
    cfg.level = GP_LEVEL_DETAILED;
    cfg.sampling_interval_ms = 1000;
    const char *listen = "127.0.0.1:9400", *hostname = NULL;
    const char *port_file = NULL;
    uint32_t interval_ms = 0;
    gp__cli_monitor_cfg mc = {0};
    gp_error err = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_next = i + 1 < argc;
        int taken = gp__cli_monitor_option("exporter", &mc, argc, argv, &i, false);
        if (taken < 0)
            return 2;
        if (taken)
            continue;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--listen") == 0 && has_next) {
            listen = argv[++i];
        } else if (strcmp(a, "--interval") == 0 && has_next) {
            if (gp__parse_duration_ms(argv[++i], &interval_ms) != GP_OK) {
                gp__cli_error("exporter", "--interval '%s': expected e.g. 500ms, 1s", argv[i]);
                return 2;
            }
        } else if (strcmp(a, "--hostname") == 0 && has_next) {
            hostname = argv[++i];
        } else if (strcmp(a, "--port-file") == 0 && has_next) {
            port_file = argv[++i];
        } else {
            gp__cli_error("exporter", "unknown or incomplete option '%s' (see --help)", a);
            return 2;
        }
    }
    if (!gp__cli_monitor_apply("exporter", &mc, &cfg))
        return 2;
    if (interval_ms)
        cfg.sampling_interval_ms = interval_ms;
    if (cfg.mode == GP_MODE_PROFILING)
        cfg.mode = GP_MODE_MONITORING;

    gp_monitor *mon = NULL;
    if (gp_monitor_open(&cfg, &mon, &err) != GP_OK) {
        gp__cli_error("exporter", "%s", err.msg);
        return 2;
    }
    gp_exporter_opts opts = {.listen = listen, .hostname = hostname};
    gp_exporter *ex = NULL;
    gp_status st = gp_exporter_start(mon, &opts, &ex, &err);
    if (st != GP_OK) {
        gp__cli_error("exporter", "%s", err.msg);
        gp_monitor_close(mon);
        return st == GP_EINVAL ? 2 : 1;
    }
    if (gp_monitor_start(mon) != GP_OK) {
        gp__cli_error("exporter", "cannot start the sampler thread");
        gp_exporter_stop(ex);
        gp_monitor_close(mon);
        return 1;
    }
    gp__cli_catch_stop_signals();
    char host[80];
    snprintf(host, sizeof host, "%.*s", (int)(strrchr(listen, ':') - listen), listen);
    fprintf(stderr, "gpuprof exporter: serving http://%s:%u/metrics (%zu GPU(s), every %u ms)\n",
            host, gp_exporter_port(ex), gp_monitor_device_count(mon), cfg.sampling_interval_ms);
    int rc = 0;
    if (port_file && !gp__cli_write_port_file("exporter", port_file, gp_exporter_port(ex))) {
        gp__cli_request_stop();
        rc = 1;
    }
    gp__cli_wait_for_stop();
    gp_exporter_stop(ex);
    gp_monitor_stop(mon);
    gp_monitor_close(mon);
    return rc;
}
