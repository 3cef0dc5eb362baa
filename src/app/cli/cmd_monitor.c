/* gpuprof monitor: live NVML monitor. A compact table per interval (like `nvidia-smi dmon`), JSON
 * lines or CSV; alerts and detector events interleaved; clean exit on SIGINT/SIGTERM. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app/cli/cli.h"
#include "core/json_writer.h"
#include "gpuprof/monitor.h"
#include "gpuprof/trace.h"
#include "produce/monitor/duration.h"

typedef enum { OUT_TABLE, OUT_JSON, OUT_CSV } out_format;

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

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
            "  --config FILE     YAML configuration (docs/monitor.md lists the keys)\n"
            "  --level L         lightweight | standard | detailed | comprehensive\n"
            "  --mode M          monitoring | adaptive | debug (profiling: use -o)\n"
            "  --set KEY=VALUE   set any configuration key (after --config)\n"
            "  --health          print the health check as JSON after one sample and exit\n"
            "  -o, --output FILE profiling mode: also record every sample as counter tracks\n"
            "                    (gpu0.temp_celsius, ...) and write them as a Chrome/Kineto\n"
            "                    trace to FILE on exit (.gz compresses)\n"
            "  -h, --help        this text\n"
            "\n"
            "Without an NVIDIA driver it prints one line and exits with code 2.\n");
}

static void on_event(const gp_monitor_event *ev, void *ctx)
{
    out_format fmt = *(const out_format *)ctx;
    pthread_mutex_lock(&out_lock);
    if (fmt == OUT_JSON) {
        gp_monitor_event_write_json(ev, stdout);
    } else {
        FILE *fp = fmt == OUT_CSV ? stderr : stdout;
        fprintf(fp, "# %-8s %s: %s\n", gp_severity_name(ev->severity),
                gp_monitor_event_type_name(ev->type), ev->message);
        fflush(fp);
    }
    pthread_mutex_unlock(&out_lock);
}

static void cell(char *buf, size_t cap, const gp_gpu_sample *s, gp_metric m, double scale,
                 int width)
{
    if (gp_sample_has(s, m))
        snprintf(buf, cap, "%*.0f", width, s->v[m] * scale);
    else
        snprintf(buf, cap, "%*s", width, "-");
}

static const char *throttle_text(const gp_gpu_sample *s)
{
    if (!gp_sample_has(s, GP_M_THROTTLE))
        return "-";
    uint64_t b = (uint64_t)s->v[GP_M_THROTTLE];
    if (b & (GP_THROTTLE_HW_THERMAL | GP_THROTTLE_SW_THERMAL))
        return "thermal";
    if (b & (GP_THROTTLE_SW_POWER_CAP | GP_THROTTLE_POWER_BRAKE))
        return "power";
    if (b & GP_THROTTLE_HW_SLOWDOWN)
        return "hw_slow";
    if (b & GP_THROTTLE_IDLE)
        return "idle";
    return b ? "other" : "none";
}

static void print_table_header(void)
{
    printf("# gpu    sm   mem  fb_used fb_total  temp   pwr plimit  sclk  mclk  fan procs "
           "throttle\n"
           "# idx     %%     %%      MiB      MiB     C     W      W   MHz   MHz    %%     # "
           "\n");
}

static void print_table_row(const gp_gpu_ident *id, const gp_gpu_sample *s, bool have)
{
    char c[13][24];
    if (!have || id->lost) {
        printf("  %3u  %s\n", id->index, id->lost ? "lost (GPU_IS_LOST)" : "no sample yet");
        return;
    }
    cell(c[0], sizeof c[0], s, GP_M_UTIL_GPU, 1, 5);
    cell(c[1], sizeof c[1], s, GP_M_UTIL_MEM, 1, 5);
    cell(c[2], sizeof c[2], s, GP_M_MEM_USED, 1.0 / 1048576, 8);
    cell(c[3], sizeof c[3], s, GP_M_MEM_TOTAL, 1.0 / 1048576, 8);
    cell(c[4], sizeof c[4], s, GP_M_TEMP, 1, 5);
    cell(c[5], sizeof c[5], s, GP_M_POWER, 1, 5);
    cell(c[6], sizeof c[6], s, GP_M_POWER_LIMIT, 1, 6);
    cell(c[7], sizeof c[7], s, GP_M_CLOCK_SM, 1e-6, 5);
    cell(c[8], sizeof c[8], s, GP_M_CLOCK_MEM, 1e-6, 5);
    cell(c[9], sizeof c[9], s, GP_M_FAN, 1, 4);
    cell(c[10], sizeof c[10], s, GP_M_PROCESSES, 1, 5);
    printf("  %3u %s %s %s %s %s %s %s %s %s %s %s %s\n", id->index, c[0], c[1], c[2], c[3], c[4],
           c[5], c[6], c[7], c[8], c[9], c[10], throttle_text(s));
}

static void print_csv_header(void)
{
    printf("ts_ns,gpu,uuid");
    for (int k = 0; k < GP_M_COUNT; k++)
        printf(",%s", gp_metric_name((gp_metric)k));
    printf("\n");
}

static void print_csv_row(const gp_gpu_ident *id, const gp_gpu_sample *s, bool have)
{
    if (!have || id->lost)
        return;
    printf("%lld,%u,%s", (long long)s->ts, id->index, id->uuid);
    for (int k = 0; k < GP_M_COUNT; k++) {
        if (gp_sample_has(s, (gp_metric)k) && s->v[k] == floor(s->v[k]) && fabs(s->v[k]) < 9e15)
            printf(",%.0f", s->v[k]);
        else if (gp_sample_has(s, (gp_metric)k))
            printf(",%.10g", s->v[k]);
        else
            printf(",");
    }
    printf("\n");
}

static void print_json_row(const gp_gpu_ident *id, const gp_gpu_sample *s, bool have)
{
    gp__jw w;
    gp__jw_init(&w, NULL);
    gp__jw_obj_begin(&w);
    gp__jw_kv_str(&w, "type", "sample");
    gp__jw_kv_int(&w, "gpu", id->index);
    gp__jw_kv_str(&w, "uuid", id->uuid);
    gp__jw_kv_str(&w, "name", id->name);
    gp__jw_kv_str(&w, "pci_bus_id", id->pci_bus_id);
    gp__jw_kv_bool(&w, "lost", id->lost);
    if (have && !id->lost) {
        gp__jw_kv_int(&w, "ts_ns", s->ts);
        for (int k = 0; k < GP_M_COUNT; k++)
            if (gp_sample_has(s, (gp_metric)k))
                gp__jw_kv_double(&w, gp_metric_name((gp_metric)k), s->v[k]);
    }
    gp__jw_obj_end(&w);
    size_t len;
    char *text = gp__jw_take(&w, &len);
    if (text) {
        fwrite(text, 1, len, stdout);
        fputc('\n', stdout);
        free(text);
    }
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

int gp__cmd_monitor(int argc, char **argv)
{
    gp_monitor_config cfg;
    gp_monitor_config_init(&cfg);
    out_format fmt = OUT_TABLE;
    uint32_t interval_ms = 1000;
    long long count = -1;
    bool health = false;
    const char *output = NULL;
    gp__cli_monitor_cfg mc = {0};
    gp_error err = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_next = i + 1 < argc;
        int taken = gp__cli_monitor_option("monitor", &mc, argc, argv, &i, true);
        if (taken < 0)
            return 2;
        if (taken)
            continue;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--json") == 0) {
            fmt = OUT_JSON;
        } else if (strcmp(a, "--csv") == 0) {
            fmt = OUT_CSV;
        } else if (strcmp(a, "--health") == 0) {
            health = true;
        } else if (strcmp(a, "--interval") == 0 && has_next) {
            if (gp__parse_duration_ms(argv[++i], &interval_ms) != GP_OK) {
                gp__cli_error("monitor", "--interval '%s': expected e.g. 500ms, 1s, 2m", argv[i]);
                return 2;
            }
        } else if (strcmp(a, "--count") == 0 && has_next) {
            char *end;
            count = strtoll(argv[++i], &end, 10);
            if (*end || count <= 0) {
                gp__cli_error("monitor", "--count '%s': expected a positive integer", argv[i]);
                return 2;
            }
        } else if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && has_next) {
            output = argv[++i];
        } else {
            gp__cli_error("monitor", "unknown or incomplete option '%s' (see --help)", a);
            return 2;
        }
    }
    if (!gp__cli_monitor_apply("monitor", &mc, &cfg))
        return 2;
    if (output)
        cfg.mode = GP_MODE_PROFILING;
    if (cfg.mode == GP_MODE_PROFILING && !output) {
        gp__cli_error("monitor", "mode 'profiling' records a trace: name it with -o FILE");
        return 2;
    }
    if (cfg.sampling_interval_ms > interval_ms)
        cfg.sampling_interval_ms = interval_ms;

    gp_monitor *mon = NULL;
    gp_status st = gp_monitor_open(&cfg, &mon, &err);
    if (st != GP_OK) {
        gp__cli_error("monitor", "%s", err.msg);
        return 2;
    }
    size_t n = gp_monitor_device_count(mon);
    if (n == 0) {
        gp__cli_error("monitor", "the NVIDIA driver (%s) reports no GPU",
                      gp_monitor_driver_version(mon));
        gp_monitor_close(mon);
        return 2;
    }
    gp__cli_catch_stop_signals();

    gp_trace *trace = NULL;
    if (output && (gp_trace_create("gpuprof monitor", &trace) != GP_OK ||
                   gp_monitor_attach_trace(mon, trace) != GP_OK)) {
        gp__cli_error("monitor", "cannot create the trace (out of memory)");
        gp_trace_free(trace);
        gp_monitor_close(mon);
        return 1;
    }
    if (!health && gp_monitor_add_listener(mon, on_event, &fmt) != GP_OK) {
        gp_monitor_close(mon);
        gp_trace_free(trace);
        return 1;
    }
    if (gp_monitor_start(mon) != GP_OK) {
        gp__cli_error("monitor", "cannot start the sampler thread");
        gp_monitor_close(mon);
        gp_trace_free(trace);
        return 1;
    }
    if (!gp_monitor_wait_samples(mon, 1, 10000)) {
        gp__cli_error("monitor", "no sample within 10 s");
        gp_monitor_close(mon);
        gp_trace_free(trace);
        return 1;
    }
    if (health) {
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
        }
        gp_monitor_close(mon);
        gp_trace_free(trace);
        return rc;
    }
    pthread_mutex_lock(&out_lock);
    if (fmt == OUT_CSV)
        print_csv_header();
    pthread_mutex_unlock(&out_lock);
    long long rows = 0;
    while (!gp__cli_stopping() && (count < 0 || rows < count)) {
        if (rows > 0)
            sleep_ms(interval_ms);
        if (gp__cli_stopping())
            break;
        pthread_mutex_lock(&out_lock);
        if (fmt == OUT_TABLE && rows % 20 == 0)
            print_table_header();
        for (size_t i = 0; i < n; i++) {
            gp_gpu_ident id;
            gp_gpu_sample s;
            if (gp_monitor_device(mon, i, &id) != GP_OK)
                continue;
            bool have = gp_monitor_latest(mon, i, &s) == GP_OK;
            if (fmt == OUT_TABLE)
                print_table_row(&id, &s, have);
            else if (fmt == OUT_CSV)
                print_csv_row(&id, &s, have);
            else
                print_json_row(&id, &s, have);
        }
        fflush(stdout);
        pthread_mutex_unlock(&out_lock);
        rows++;
    }
    gp_monitor_stop(mon);
    gp_monitor_close(mon);
    int rc = 0;
    if (trace) {
        if (gp_trace_finish(trace) != GP_OK ||
            gp_trace_write_chrome(trace, output, &err) != GP_OK) {
            gp__cli_error("monitor", "cannot write %s: %s", output,
                          err.msg[0] ? err.msg : "out of memory");
            rc = 1;
        } else if (fmt != OUT_JSON) {
            fprintf(stderr, "gpuprof monitor: wrote %zu counter samples to %s\n", trace->n_counters,
                    output);
        }
        gp_trace_free(trace);
    }
    return rc;
}
