/* The monitor as users of the tool it replaces (../shared/seeds/000_*.txt) try it first: the
 * seed's YAML file exactly as printed (tests/monitor/seed/gpu_profiler.yaml) loads and its values
 * are applied, each feature toggle does what it says or warns, the YAML leniency rules, the
 * seed's defaults, low-utilization alerts with hysteresis, suggestions with the seed's fields,
 * the stopped event's count, the device_lost event's UUID and the "unavailable" health. The
 * monitor cases run against the FAKE NVML driver (tests/fakes/nvml): they test our code, not a
 * GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "monitor/monitor_test_util.h"

/* ---- configuration ------------------------------------------------------------------------- */

#define MAX_WARNINGS 16
static char warnings[MAX_WARNINGS][512];
static size_t n_warnings;

static void on_warning(const char *msg, void *ctx)
{
    (void)ctx;
    if (n_warnings < MAX_WARNINGS)
        snprintf(warnings[n_warnings++], sizeof warnings[0], "%s", msg);
}

static bool warned(const char *text)
{
    for (size_t i = 0; i < n_warnings; i++)
        if (strstr(warnings[i], text))
            return true;
    return false;
}

static gp_status parse(gp_monitor_config *c, const char *yaml, gp_error *err)
{
    n_warnings = 0;
    return gp_monitor_config_parse(c, yaml, strlen(yaml), "m.yaml",
                                   &(gp_config_opts){.warn = on_warning}, err);
}

static void seed_yaml_file_loads_and_its_values_are_applied(void **state)
{
    (void)state;
    char path[2048];
    snprintf(path, sizeof path, "%s/tests/monitor/seed/gpu_profiler.yaml", getenv("GP_SOURCE_DIR"));
    gp_monitor_config c;
    gp_monitor_config_init(&c);
    /* start from other values, so that each assertion shows the file set it */
    c.level = GP_LEVEL_DETAILED;
    c.mode = GP_MODE_DEBUG;
    c.sampling_interval_ms = 7;
    c.utilization_threshold = c.memory_threshold = c.temperature_threshold = 1;
    c.power_threshold = 1;
    c.max_samples = 3;
    c.retention_hours = 1;
    c.enable_memory_tracking = c.enable_power_monitoring = false;
    c.enable_temperature_monitoring = c.enable_multi_gpu = false;
    c.integrate_with_component_profiling = c.enable_optimization_suggestions = false;
    c.enable_bottleneck_detection = c.enable_leak_detection = false;
    c.enable_real_time_monitoring = false;
    gp_error err = {0};
    n_warnings = 0;
    if (gp_monitor_config_load(&c, path, &(gp_config_opts){.warn = on_warning}, &err) != GP_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(c.level, GP_LEVEL_STANDARD);
    assert_int_equal(c.mode, GP_MODE_MONITORING);
    assert_int_equal(c.sampling_interval_ms, 100);
    assert_true(c.utilization_threshold == 85);
    assert_true(c.memory_threshold == 90);
    assert_true(c.temperature_threshold == 80);
    assert_true(c.power_threshold == 95);
    assert_int_equal(c.max_samples, 10000);
    assert_true(c.retention_hours == 24);
    assert_true(c.enable_real_time_monitoring && c.enable_kernel_profiling);
    assert_true(c.enable_memory_tracking && c.enable_power_monitoring);
    assert_true(c.enable_temperature_monitoring && c.enable_multi_gpu);
    assert_true(c.integrate_with_tracing && c.integrate_with_metrics);
    assert_true(c.integrate_with_component_profiling);
    assert_true(c.enable_bottleneck_detection && c.enable_optimization_suggestions);
    assert_true(c.enable_leak_detection);
    /* the three keys without effect in gpuprof are named, with their line and why */
    assert_int_equal(n_warnings, 3);
    assert_true(warned("gpu_profiler.yaml:14: enable_kernel_profiling: true has no effect"));
    assert_true(warned("gpu_profiler.yaml:21: integrate_with_tracing: true has no effect"));
    assert_true(warned("gpu_profiler.yaml:22: integrate_with_metrics: true has no effect"));
    assert_true(warned("gpuprof trace"));
}

static void seed_defaults_are_the_seeds(void **state)
{
    (void)state;
    gp_monitor_config c;
    gp_monitor_config_init(&c);
    assert_true(c.utilization_threshold == 85);
    assert_true(c.temperature_threshold == 80);
    assert_int_equal(c.max_samples, 10000);
    assert_true(c.retention_hours == 24);
    assert_true(c.memory_threshold == 90 && c.power_threshold == 95);
    assert_int_equal(c.sampling_interval_ms, 100);
    assert_int_equal(c.level, GP_LEVEL_STANDARD);
    assert_true(c.utilization_low_threshold == 10);
}

static void yaml_block_flat_and_other_sections(void **state)
{
    (void)state;
    gp_monitor_config c;
    gp_monitor_config_init(&c);
    gp_error err = {0};
    /* the block among other sections of an application's configuration */
    assert_int_equal(parse(&c,
                           "logging:\n  level: debug\n"
                           "gpu_profiler:\n  level: detailed\n  enable_multi_gpu: false\n"
                           "metrics: {port: 9090}\n",
                           &err),
                     GP_OK);
    assert_int_equal(c.level, GP_LEVEL_DETAILED);
    assert_false(c.enable_multi_gpu);
    assert_int_equal(n_warnings, 2);
    assert_true(warned("m.yaml:1: section 'logging' ignored"));
    assert_true(warned("m.yaml:6: section 'metrics' ignored"));
    /* flat, as before */
    assert_int_equal(parse(&c, "level: lightweight\n", &err), GP_OK);
    assert_int_equal(c.level, GP_LEVEL_LIGHTWEIGHT);
    assert_int_equal(n_warnings, 0);
    /* an empty block; a block that is not a mapping */
    assert_int_equal(parse(&c, "gpu_profiler:\n", &err), GP_OK);
    assert_int_equal(parse(&c, "gpu_profiler: 3\n", &err), GP_EPARSE);
    assert_non_null(strstr(err.msg, "m.yaml:1: gpu_profiler: expected a mapping"));
    /* keys inside the block are checked as flat ones are */
    assert_int_equal(parse(&c, "gpu_profiler:\n  level: standard\n  bogus: 1\n", &err), GP_EINVAL);
    assert_string_equal(err.msg, "m.yaml:3: unknown key 'bogus'");
}

static void yaml_repeated_keys_hex_and_yes(void **state)
{
    (void)state;
    gp_monitor_config c, before;
    gp_monitor_config_init(&c);
    before = c;
    gp_error err = {0};
    /* a repeated key is refused, naming both lines (not "last wins") */
    assert_int_equal(parse(&c, "level: detailed\nmode: debug\nlevel: lightweight\n", &err),
                     GP_EPARSE);
    assert_string_equal(err.msg, "m.yaml:3: key 'level' repeats the one on line 1 (each key may "
                                 "appear once)");
    assert_int_equal(parse(&c, "gpu_profiler:\n  max_samples: 5\n  max_samples: 6\n", &err),
                     GP_EPARSE);
    assert_non_null(strstr(err.msg, "m.yaml:3: key 'max_samples' repeats the one on line 2"));
    /* hexadecimal (and octal, binary) numbers are refused */
    assert_int_equal(parse(&c, "max_samples: 0x10\n", &err), GP_EINVAL);
    assert_string_equal(err.msg, "m.yaml:1: max_samples: '0x10' is not a decimal number "
                                 "(hexadecimal, octal and binary are not accepted)");
    assert_int_equal(parse(&c, "power_threshold: 0o17\n", &err), GP_EINVAL);
    assert_int_equal(parse(&c, "temperature_threshold: -0x1p4\n", &err), GP_EINVAL);
    assert_memory_equal(&c, &before, sizeof c); /* unchanged on failure */
    /* yes / no / on / off / 1 / 0 are read as booleans, with a warning */
    assert_int_equal(parse(&c, "enable_pcie: yes\nenable_xid_events: off\n", &err), GP_OK);
    assert_true(c.enable_pcie);
    assert_false(c.enable_xid_events);
    assert_int_equal(n_warnings, 2);
    assert_true(warned("m.yaml:1: enable_pcie: 'yes' read as true (YAML 1.2 reads it as text)"));
    assert_true(warned("m.yaml:2: enable_xid_events: 'off' read as false"));
    assert_int_equal(parse(&c, "enable_pcie: False\n", &err), GP_OK);
    assert_false(c.enable_pcie);
    assert_int_equal(n_warnings, 0);
    /* a leading zero is decimal, with a warning */
    assert_int_equal(parse(&c, "max_samples: 010\n", &err), GP_OK);
    assert_int_equal(c.max_samples, 10);
    assert_true(warned("max_samples: '010' read as the decimal 10"));
    /* the same rules for --set */
    n_warnings = 0;
    assert_int_equal(
        gp_monitor_config_set(&c, "enable_pcie", "on", &(gp_config_opts){.warn = on_warning}, &err),
        GP_OK);
    assert_true(warned("enable_pcie: 'on' read as true"));
    assert_int_equal(gp_monitor_config_set(&c, "sampling_interval_ms", "0x20",
                                           &(gp_config_opts){.warn = on_warning}, &err),
                     GP_EINVAL);
    assert_int_equal(gp_monitor_config_set(&c, "integrate_with_metrics", "true",
                                           &(gp_config_opts){.warn = on_warning}, &err),
                     GP_OK);
    assert_true(
        warned("integrate_with_metrics: true has no effect in gpuprof: `gpuprof exporter`"));
    n_warnings = 0;
    assert_int_equal(gp_monitor_config_set(&c, "integrate_with_metrics", "false",
                                           &(gp_config_opts){.warn = on_warning}, &err),
                     GP_OK);
    assert_int_equal(n_warnings, 0); /* asking for nothing is not worth a warning */
}

/* ---- toggles on the fake driver ------------------------------------------------------------ */

static void fake_nvml_seed_toggles_do_what_they_say(void **state)
{
    (void)state;
    gp_monitor_config cfg;
    gp_monitor_config_init(&cfg);
    cfg.enable_power_monitoring = false;
    cfg.enable_temperature_monitoring = false;
    cfg.enable_memory_tracking = false;
    cfg.enable_multi_gpu = false;
    cfg.integrate_with_component_profiling = false;
    cfg.enable_optimization_suggestions = false;
    gp_monitor *m = open_scenario("basic.txt", &cfg); /* two GPUs */
    assert_int_equal(gp_monitor_device_count(m), 1);
    assert_int_equal(gp_component_begin("image_processor"), GP_OK);
    for (int t = 0; t <= 12; t++)
        step(m, t);
    assert_int_equal(gp_component_end("image_processor"), GP_OK);
    gp_gpu_sample s;
    assert_int_equal(gp_monitor_latest(m, 0, &s), GP_OK);
    assert_true(gp_sample_has(&s, GP_M_UTIL_GPU));
    static const gp_metric off[] = {GP_M_POWER,    GP_M_POWER_LIMIT, GP_M_ENERGY,
                                    GP_M_TEMP,     GP_M_MEM_USED,    GP_M_MEM_TOTAL,
                                    GP_M_MEM_FREE, GP_M_MEM_RESERVED};
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++)
        assert_false(gp_sample_has(&s, off[i]));
    assert_int_equal(fake_calls("nvmlDeviceGetPowerUsage"), 0); /* not even asked */
    assert_int_equal(
        fake_calls("nvmlDeviceGetTemperature") + fake_calls("nvmlDeviceGetTemperatureV"), 0);
    gp_component_stats cs[4];
    size_t n = 9;
    assert_int_equal(gp_monitor_components(m, cs, 4, &n), GP_OK);
    assert_int_equal(n, 0);
    gp_suggestion sg[8];
    assert_int_equal(gp_monitor_suggestions(m, sg, 8, &n), GP_OK);
    assert_int_equal(n, 0);
    gp_monitor_close(m);
    /* the same scenario with the defaults: both GPUs, power and temperature, suggestions */
    gp_monitor_config_init(&cfg);
    m = open_scenario("basic.txt", &cfg);
    assert_int_equal(gp_monitor_device_count(m), 2);
    assert_int_equal(gp_component_begin("image_processor"), GP_OK);
    for (int t = 0; t <= 12; t++)
        step(m, t);
    assert_int_equal(gp_component_end("image_processor"), GP_OK);
    assert_int_equal(gp_monitor_latest(m, 0, &s), GP_OK);
    assert_true(gp_sample_has(&s, GP_M_POWER) && gp_sample_has(&s, GP_M_TEMP));
    assert_true(gp_sample_has(&s, GP_M_MEM_USED));
    assert_int_equal(gp_monitor_components(m, cs, 4, &n), GP_OK);
    assert_int_equal(n, 1);
    assert_string_equal(cs[0].name, "image_processor");
    assert_int_equal(gp_monitor_suggestions(m, sg, 8, &n), GP_OK);
    assert_true(n >= 1);
    gp_monitor_close(m);
    gp_component_reset();
}

/* ---- alerts, suggestions, events ------------------------------------------------------------ */

static void fake_nvml_low_utilization_alert_with_hysteresis(void **state)
{
    (void)state;
    gp_monitor_config cfg;
    gp_monitor_config_init(&cfg); /* low threshold 10 %, hysteresis 5, 5 s minimum */
    gp_monitor *m = open_scenario("low_util.txt", &cfg);
    for (int t = 0; t <= 50; t++)
        step(m, t);
    assert_int_equal(count_events(GP_EVT_ALERT, "utilization_low"), 2);
    assert_int_equal(count_events(GP_EVT_ALERT_CLEARED, "utilization_low"), 1);
    assert_int_equal(count_events(GP_EVT_ALERT, "utilization"), 0);
    const gp_monitor_event *first = find_event(GP_EVT_ALERT, "utilization_low");
    assert_int_equal(first->ts, 5 * SEC);
    assert_int_equal(first->severity, GP_SEV_INFO);
    assert_true(first->value == 3 && first->threshold == 10);
    assert_non_null(strstr(first->message, "gpu0 utilization_low 3.0% <= 10.0% for 5.0 s"));
    /* 12 % at 20 s is above 10 but not above 10 + 5: still active until 20 % at 30 s */
    const gp_monitor_event *cleared = find_event(GP_EVT_ALERT_CLEARED, "utilization_low");
    assert_int_equal(cleared->ts, 30 * SEC);
    assert_non_null(strstr(cleared->message, "(above 15.0%)"));
    size_t again = 0;
    for (size_t i = 0; i < n_events; i++)
        if (events[i].type == GP_EVT_ALERT && strcmp(events[i].what, "utilization_low") == 0)
            again = i;
    assert_int_equal(events[again].ts, 45 * SEC);
    assert_int_equal(gp_monitor_alerts_total(m, "utilization_low"), 2);
    assert_int_equal(gp_monitor_alerts_total(m, "utilization"), 0);
    gp_monitor_close(m);
    /* 0 turns it off */
    cfg.utilization_low_threshold = 0;
    m = open_scenario("low_util.txt", &cfg);
    for (int t = 0; t <= 50; t++)
        step(m, t);
    assert_int_equal(count_events(GP_EVT_ALERT, "utilization_low"), 0);
    gp_monitor_close(m);
}

static void fake_nvml_suggestions_have_the_seed_fields(void **state)
{
    (void)state;
    gp_monitor_config cfg;
    gp_monitor_config_init(&cfg);
    gp_monitor *m = open_scenario("basic.txt", &cfg);
    for (int t = 0; t <= 12; t++)
        step(m, t);
    gp_suggestion sg[8];
    size_t n = 0;
    assert_int_equal(gp_monitor_suggestions(m, sg, 8, &n), GP_OK);
    assert_true(n >= 2);
    bool power = false, idle = false;
    for (size_t i = 0; i < n; i++) {
        assert_true(sg[i].type[0] && sg[i].message[0] && sg[i].suggestion[0]);
        assert_true(sg[i].severity <= GP_SEV_CRITICAL);
        assert_string_not_equal(sg[i].message, sg[i].suggestion);
        if (strcmp(sg[i].type, "power") == 0) {
            power = true;
            assert_int_equal(sg[i].device, 0);
            assert_int_equal(sg[i].severity, GP_SEV_WARNING);
            assert_string_equal(sg[i].message, "The GPU runs at its power limit.");
            assert_non_null(strstr(sg[i].suggestion, "Raise the limit"));
            assert_non_null(strstr(sg[i].evidence, "power_throttle_share=1.00"));
        }
        idle |= sg[i].device == 1 && strcmp(sg[i].type, "idle") == 0;
    }
    assert_true(power && idle);
    gp_monitor_close(m);
}

static void fake_nvml_device_lost_what_is_the_whole_uuid(void **state)
{
    (void)state;
    gp_monitor *m = open_scenario("lost.txt", NULL);
    for (int t = 0; t <= 6; t++)
        step(m, t);
    const gp_monitor_event *e = find_event(GP_EVT_DEVICE_LOST, NULL);
    assert_non_null(e);
    gp_gpu_ident id;
    assert_int_equal(gp_monitor_device(m, 1, &id), GP_OK);
    assert_int_equal(strlen(id.uuid), 40); /* "GPU-" and 36 characters */
    assert_string_equal(e->what, id.uuid);
    gp_monitor_close(m);
}

static void fake_nvml_stopped_event_counts_every_sample(void **state)
{
    (void)state;
    gp_monitor_config cfg;
    gp_monitor_config_init(&cfg);
    cfg.sampling_interval_ms = 5;
    gp_monitor *m = open_scenario("lost.txt", &cfg);
    assert_int_equal(gp_monitor_start(m), GP_OK);
    assert_true(gp_monitor_wait_samples(m, 8, 10000));
    gp_monitor_stop(m);
    const gp_monitor_event *e = find_event(GP_EVT_STOPPED, NULL);
    assert_non_null(e);
    uint64_t total = gp_monitor_samples_total(m);
    gp_gpu_sample hist[10000];
    size_t kept = gp_monitor_history(m, 0, hist, 10000); /* GPU 0: one sample per round */
    assert_true(total >= 8);
    assert_int_equal(kept, total);
    assert_true(e->value == (double)total);
    char want[64];
    snprintf(want, sizeof want, "stopped after %llu samples", (unsigned long long)total);
    assert_string_equal(e->message, want);
    gp_monitor_close(m);
}

static void health_unavailable_has_status_and_reason(void **state)
{
    (void)state;
    setenv("GP_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    gp_monitor *m = NULL;
    gp_error err = {0};
    assert_int_equal(gp_monitor_open(NULL, &m, &err), GP_ENODRIVER);
    gp_monitor_config cfg;
    gp_monitor_config_init(&cfg);
    cfg.level = GP_LEVEL_DETAILED;
    gp_monitor_health h;
    gp_monitor_health_unavailable(&cfg, &err, &h);
    assert_int_equal(h.status, GP_HEALTH_UNAVAILABLE);
    assert_string_equal(gp_health_status_name(h.status), "unavailable");
    char *json = NULL;
    size_t len = 0;
    assert_int_equal(gp_monitor_health_render_json(&h, &json, &len), GP_OK);
    assert_non_null(strstr(json, "{\"status\":\"unavailable\",\"gpus\":0,"));
    assert_non_null(strstr(json, "\"level\":\"detailed\""));
    assert_non_null(strstr(json, "\"reason\":\"no NVIDIA driver found: "));
    free(json);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(seed_yaml_file_loads_and_its_values_are_applied),
        cmocka_unit_test(seed_defaults_are_the_seeds),
        cmocka_unit_test(yaml_block_flat_and_other_sections),
        cmocka_unit_test(yaml_repeated_keys_hex_and_yes),
        cmocka_unit_test(fake_nvml_seed_toggles_do_what_they_say),
        cmocka_unit_test(fake_nvml_low_utilization_alert_with_hysteresis),
        cmocka_unit_test(fake_nvml_suggestions_have_the_seed_fields),
        cmocka_unit_test(fake_nvml_device_lost_what_is_the_whole_uuid),
        cmocka_unit_test(fake_nvml_stopped_event_counts_every_sample),
        cmocka_unit_test(health_unavailable_has_status_and_reason),
    };
    return cmocka_run_group_tests_name("monitor_seed_fake_nvml", tests, NULL, NULL);
}
