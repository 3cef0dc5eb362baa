/* libFuzzer target: the monitor's YAML configuration parser must never crash, leak or accept a
 * value outside its documented range. */
#include <stdint.h>
#include <stdlib.h>

#include "gpuprof/monitor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gp_monitor_config cfg;
    gp_monitor_config_init(&cfg);
    gp_error err;
    if (gp_monitor_config_parse(&cfg, (const char *)data, size, "fuzz.yaml", NULL, &err) == GP_OK) {
        if (cfg.sampling_interval_ms < 1 || cfg.max_samples < 1 || !(cfg.retention_hours > 0) ||
            cfg.level > GP_LEVEL_COMPREHENSIVE || cfg.mode > GP_MODE_DEBUG ||
            !(cfg.leak_min_r2 >= 0 && cfg.leak_min_r2 <= 1))
            abort();
    }
    return 0;
}
