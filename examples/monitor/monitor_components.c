/* Example: monitor the GPUs from inside a program, attribute GPU time and memory growth to named
 * components, print events as JSON lines, then the per-component figures, suggestions and health.
 *
 *   ./monitor_components            (needs an NVIDIA driver; exits 2 with one line without it)
 *   GP_NVML_LIBRARY=build/fakes/nvml/libnvidia-ml.so.1 ./monitor_components   (the test fake) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gpuprof/monitor.h"

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int main(void)
{
    gp_monitor_config cfg;
    gp_monitor_config_init(&cfg);
    cfg.sampling_interval_ms = 20;
    gp_monitor *mon = NULL;
    gp_error err;
    if (gp_monitor_open(&cfg, &mon, &err) != GP_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 2;
    }
    gp_monitor_set_event_stream(mon, stdout);
    if (gp_monitor_start(mon) != GP_OK) {
        gp_monitor_close(mon);
        return 1;
    }
    if (gp_component_begin("image_processor") == GP_OK) {
        sleep_ms(300); /* your GPU work here */
        (void)gp_component_end("image_processor");
    }
    if (gp_component_begin("trainer") == GP_OK) {
        sleep_ms(300);
        (void)gp_component_end("trainer");
    }
    gp_monitor_stop(mon);

    gp_component_stats cs[8];
    size_t n = 0;
    if (gp_monitor_components(mon, cs, 8, &n) == GP_OK)
        for (size_t i = 0; i < n; i++)
            printf("component %-16s samples %4llu  wall %.2f s  gpu busy %.2f s  memory %+.0f B\n",
                   cs[i].name, (unsigned long long)cs[i].samples, cs[i].wall_s, cs[i].gpu_busy_s,
                   cs[i].mem_growth_bytes);
    gp_suggestion sug[16];
    if (gp_monitor_suggestions(mon, sug, 16, &n) == GP_OK)
        for (size_t i = 0; i < n; i++)
            printf("suggestion gpu%d [%s] %s: %s (%s)\n", sug[i].device,
                   gp_severity_name(sug[i].severity), sug[i].type, sug[i].message, sug[i].evidence);
    char *health = NULL;
    size_t len = 0;
    if (gp_monitor_health_json(mon, &health, &len) == GP_OK) {
        printf("health %s\n", health);
        free(health);
    }
    gp_monitor_close(mon);
    return 0;
}
