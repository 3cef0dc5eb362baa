/* Tests of src/produce/monitor against the fake NVML driver (tests/fakes/nvml, scenario files in
 * tests/monitor/scenarios): these test our code, not a GPU. Also the pure detectors (leak trend,
 * bottleneck classes) on scripted series, the YAML configuration and the component API. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuprof/monitor.h"
#include "gpuprof/trace.h"
#include "monitor/monitor_test_util.h"

/* the leak detector's *_mb figures are MiB (2^20 bytes); the series below are in bytes */
#define MIB(bytes) ((bytes) / (1024.0 * 1024.0))

/* ---- NVML backend ------------------------------------------------------------------------ */

static void fake_nvml_no_driver_is_one_clear_error(void **state)
{
    setenv("GP_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    gp_monitor *m = NULL;
    gp_error err = {0};
    assert_int_equal(gp_monitor_open(NULL, &m, &err), GP_ENODRIVER);
    assert_null(m);
    assert_true(strncmp(err.msg, "no NVIDIA driver found: ", 24) == 0);
    assert_null(strchr(err.msg, '\n'));
}

static void fake_nvml_init_failure_is_no_driver(void **state)
{
    use_library("GP_FAKE_NVML");
    char path[2048];
    char dir[] = "/tmp/gp_nvml_XXXXXX";
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/s.txt", dir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("init_error 9\n", fp);
    fclose(fp);
    setenv("GP_FAKE_NVML_SCENARIO", path, 1);
    fake_reload();
    gp_monitor *m = NULL;
    gp_error err = {0};
    assert_int_equal(gp_monitor_open(NULL, &m, &err), GP_ENODRIVER);
    assert_non_null(strstr(err.msg, "no NVIDIA driver found: nvmlInit failed: Driver Not Loaded"));
    unlink(path);
    rmdir(dir);
}

static void fake_nvml_values_units_and_identity(void **state)
{
    gp_monitor_config cfg;
    gp_monitor_config_init(&cfg);
    cfg.level = GP_LEVEL_DETAILED;
    gp_monitor *m = open_scenario("basic.txt", &cfg);
    assert_int_equal(gp_monitor_device_count(m), 2);
    gp_gpu_ident id;
    assert_int_equal(gp_monitor_device(m, 0, &id), GP_OK);
    assert_string_equal(id.name, "NVIDIA A100-SXM4-80GB");
    assert_string_equal(id.uuid, "GPU-11111111-2222-3333-4444-555555555555");
    assert_string_equal(id.pci_bus_id, "00000000:07:00.0");
    assert_int_equal(gp_monitor_device(m, 2, &id), GP_ENOENT);
    gp_gpu_sample s;
    assert_int_equal(gp_monitor_latest(m, 0, &s), GP_EEMPTY);
    step(m, 1);
    assert_int_equal(gp_monitor_latest(m, 0, &s), GP_OK);
    assert_int_equal(s.ts, SEC);
    assert_true(gp_sample_has(&s, GP_M_UTIL_GPU));
    assert_true(s.v[GP_M_UTIL_GPU] == 42);
    assert_true(s.v[GP_M_UTIL_MEM] == 17);
    /* memory v2: used excludes the driver-reserved memory */
    assert_true(s.v[GP_M_MEM_USED] == 10737418240.0);
    assert_true(s.v[GP_M_MEM_RESERVED] == 536870912.0);
    assert_true(s.v[GP_M_MEM_FREE] == 85899345920.0 - 10737418240.0 - 536870912.0);
    assert_true(s.v[GP_M_TEMP] == 61);
    assert_true(fabs(s.v[GP_M_POWER] - 251.5) < 1e-9); /* mW -> W */
    assert_true(fabs(s.v[GP_M_POWER_LIMIT] - 400) < 1e-9);
    assert_true(s.v[GP_M_CLOCK_SM] == 1410e6); /* MHz -> Hz */
    assert_true(s.v[GP_M_FAN] == 55);
    assert_true(s.v[GP_M_THROTTLE] == GP_THROTTLE_SW_POWER_CAP);
    assert_true(gp_sample_has(&s, GP_M_ECC_UNCORRECTED));
    assert_true(s.v[GP_M_ECC_UNCORRECTED] == 0);   /* a real zero, valid */
    assert_false(gp_sample_has(&s, GP_M_PCIE_TX)); /* comprehensive level only */
    assert_true(s.v[GP_M_PROCESSES] == 2);
    gp_gpu_process procs[8];
    size_t np = 0;
    assert_int_equal(gp_monitor_processes(m, 0, procs, 8, &np), GP_OK);
    assert_int_equal(np, 2);
    assert_int_equal(procs[0].pid, 4242);
    assert_int_equal(procs[0].types, GP_PROC_COMPUTE);
    assert_int_equal(procs[0].mem_bytes, 2147483648LL);
    assert_int_equal(procs[0].sm_util, 80);
    assert_int_equal(procs[1].pid, 4343);
    assert_int_equal(procs[1].types, GP_PROC_GRAPHICS);
    assert_int_equal(procs[1].sm_util, -1);
    gp_monitor_close(m);
}

static void fake_nvml_not_supported_is_remembered(void **state)
{
    gp_monitor_config cfg;
    gp_monitor_config_init(&cfg);
    cfg.level = GP_LEVEL_DETAILED;
    gp_monitor *m = open_scenario("basic.txt", &cfg);
    step(m, 1);
    unsigned long fan_calls = fake_calls("nvmlDeviceGetFanSpeed");
    unsigned long util_calls = fake_calls("nvmlDeviceGetUtilizationRates");
    assert_int_equal(util_calls, 2);
    for (int i = 2; i <= 5; i++)
        step(m, i);
    /* GPU 0 has a fan: one call per round; GPU 1 said NOT_SUPPORTED once and is not asked again */
    assert_int_equal(fake_calls("nvmlDeviceGetFanSpeed"), fan_calls + 4);
    assert_int_equal(fake_calls("nvmlDeviceGetUtilizationRates"), util_calls + 8);
    gp_gpu_sample s;
    assert_int_equal(gp_monitor_latest(m, 1, &s), GP_OK);
    assert_false(gp_sample_has(&s, GP_M_FAN));
    assert_false(gp_sample_has(&s, GP_M_ECC_UNCORRECTED));
    assert_true(gp_sample_has(&s, GP_M_UTIL_GPU));
    gp_gpu_ident id;
    assert_int_equal(gp_monitor_device(m, 1, &id), GP_OK);
    assert_true(id.unsupported & (1ull << GP_M_FAN));
    assert_true(id.unsupported & (1ull << GP_M_ECC_CORRECTED));
    assert_false(id.unsupported & (1ull << GP_M_UTIL_GPU));
    assert_int_equal(gp_monitor_device(m, 0, &id), GP_OK);
    assert_int_equal(id.unsupported, 0);
    gp_monitor_close(m);
}

static void fake_nvml_lost_gpu_others_go_on(void **state)
{
    gp_monitor *m = open_scenario("lost.txt", NULL);
    step(m, 1);
    step(m, 4);
    assert_int_equal(count_events(GP_EVT_DEVICE_LOST, NULL), 0);
    step(m, 6);
    step(m, 7);
    step(m, 8);
    assert_int_equal(count_events(GP_EVT_DEVICE_LOST, NULL), 1);
    const gp_monitor_event *ev = find_event(GP_EVT_DEVICE_LOST, NULL);
    assert_int_equal(ev->device, 1);
    assert_int_equal(ev->severity, GP_SEV_CRITICAL);
    gp_gpu_ident id;
    assert_int_equal(gp_monitor_device(m, 1, &id), GP_OK);
    assert_true(id.lost);
    assert_int_equal(gp_monitor_device(m, 0, &id), GP_OK);
    assert_false(id.lost);
    gp_gpu_sample s;
    assert_int_equal(gp_monitor_latest(m, 0, &s), GP_OK);
    assert_int_equal(s.ts, 8 * SEC);
    assert_int_equal(gp_monitor_latest(m, 1, &s), GP_OK);
    assert_int_equal(s.ts, 4 * SEC); /* the last good sample is kept */
    char *json = NULL;
    size_t len = 0;
    assert_int_equal(gp_monitor_health_json(m, &json, &len), GP_OK);
    assert_non_null(strstr(json, "\"status\":\"degraded\""));
    assert_non_null(strstr(json, "\"gpus_lost\":1"));
    assert_non_null(strstr(json, "\"samples_collected\":5"));
    assert_non_null(strstr(json, "GPU_IS_LOST"));
    free(json);
    gp_monitor_health h; /* the struct the JSON renders */
    gp_monitor_get_health(m, &h);
    assert_int_equal(h.status, GP_HEALTH_DEGRADED);
    assert_string_equal(gp_health_status_name(h.status), "degraded");
    assert_int_equal(h.gpus, 2);
    assert_int_equal(h.gpus_lost, 1);
    assert_int_equal(h.samples_collected, 5);
    assert_non_null(strstr(h.last_error.msg, "GPU_IS_LOST"));
    gp_monitor_close(m);
}

static void fake_nvml_process_list_grows(void **state)
{
    gp_monitor *m = open_scenario("procs.txt", NULL);
    step(m, 1);
    gp_gpu_process procs[64];
    size_t np = 0;
    assert_int_equal(gp_monitor_processes(m, 0, procs, 64, &np), GP_OK);
    /* 40 scripted + 1 that appeared between the size query and the fetch */
    assert_int_equal(np, 41);
    int64_t sum = 0;
    for (size_t i = 0; i < np; i++)
        sum += procs[i].mem_bytes;
    assert_int_equal(sum, 820000000LL + 1000000);
    gp_gpu_sample s;
    assert_int_equal(gp_monitor_latest(m, 0, &s), GP_OK);
    assert_true(s.v[GP_M_PROCESSES] == 41);
    gp_monitor_close(m);
}

static void fake_nvml_rejects_wrong_struct_version(void **state)
{
    use_library("GP_FAKE_NVML");
    setenv("GP_FAKE_NVML_SCENARIO", "", 1);
    fake_reload();
    int (*init)(void);
    int (*handle)(unsigned, void **);
    int (*mem2)(void *, void *);
    *(void **)&init = dlsym(fake, "nvmlInit_v2");
    *(void **)&handle = dlsym(fake, "nvmlDeviceGetHandleByIndex_v2");
    *(void **)&mem2 = dlsym(fake, "nvmlDeviceGetMemoryInfo_v2");
    assert_int_equal(init(), 0);
    void *dev = NULL;
    assert_int_equal(handle(0, &dev), 0);
    struct {
        unsigned version;
        unsigned long long total, reserved, free, used;
    } mv;
    assert_int_equal(sizeof mv, 40);
    memset(&mv, 0, sizeof mv);
    mv.version = 2; /* what nvtop passes */
    assert_int_equal(mem2(dev, &mv), 13);
    mv.version = (unsigned)sizeof mv | 2u << 24; /* 0x02000028 */
    assert_int_equal(mv.version, 0x02000028);
    assert_int_equal(mem2(dev, &mv), 0);
    assert_true(mv.total > 0);
}

static void fake_nvml_memory_v2_rejected_falls_back_to_v1(void **state)
{
    gp_monitor *m = open_scenario("memv2_mismatch.txt", NULL);
    step(m, 1);
    step(m, 2);
    gp_gpu_sample s;
    assert_int_equal(gp_monitor_latest(m, 0, &s), GP_OK);
    assert_true(gp_sample_has(&s, GP_M_MEM_USED));
    assert_true(s.v[GP_M_MEM_USED] == 1.5e9); /* v1 counts reserved memory as used */
    assert_false(gp_sample_has(&s, GP_M_MEM_RESERVED));
    assert_int_equal(fake_calls("nvmlDeviceGetMemoryInfo_v2"), 1); /* tried once */
    assert_int_equal(fake_calls("nvmlDeviceGetMemoryInfo"), 2);
    gp_monitor_close(m);
}

static void fake_nvml_old_driver_uses_older_functions(void **state)
{
    gp_monitor_config cfg;
    gp_monitor_config_init(&cfg);
    cfg.level = GP_LEVEL_DETAILED;
    gp_monitor *m = open_scenario_lib("GP_FAKE_NVML_OLD", "basic.txt", &cfg);
    step(m, 1);
    gp_gpu_sample s;
    assert_int_equal(gp_monitor_latest(m, 0, &s), GP_OK);
    assert_true(s.v[GP_M_MEM_USED] == 10737418240.0 + 536870912.0);
    assert_false(gp_sample_has(&s, GP_M_MEM_RESERVED));
    assert_true(s.v[GP_M_TEMP] == 61);
    assert_true(s.v[GP_M_THROTTLE] == GP_THROTTLE_SW_POWER_CAP);
    assert_int_equal(fake_calls("nvmlDeviceGetTemperature"), 2);
    assert_int_equal(fake_calls("nvmlDeviceGetTemperatureV"), 0);
    gp_gpu_process procs[8];
    size_t np = 0;
    assert_int_equal(gp_monitor_processes(m, 0, procs, 8, &np), GP_OK);
    assert_int_equal(np, 2); /* v1 process structs parsed with their own stride */
    assert_int_equal(procs[0].pid, 4242);
    assert_int_equal(procs[0].mem_bytes, 2147483648LL);
    assert_int_equal(procs[1].pid, 4343);
    gp_monitor_close(m);
}

static void fake_nvml_levels_select_metrics(void **state)
{
    gp_monitor_config cfg;
    gp_monitor_config_init(&cfg);
    cfg.level = GP_LEVEL_LIGHTWEIGHT;
    gp_monitor *m = open_scenario("basic.txt", &cfg);
    step(m, 1);
    gp_gpu_sample s;
    assert_int_equal(gp_monitor_latest(m, 0, &s), GP_OK);
    assert_true(gp_sample_has(&s, GP_M_TEMP));
    assert_false(gp_sample_has(&s, GP_M_CLOCK_SM));
    assert_false(gp_sample_has(&s, GP_M_PROCESSES));
    assert_int_equal(fake_calls("nvmlDeviceGetComputeRunningProcesses"), 0);
    gp_monitor_close(m);
    cfg.level = GP_LEVEL_COMPREHENSIVE;
    m = open_scenario("basic.txt", &cfg);
    step(m, 1);
    assert_int_equal(gp_monitor_latest(m, 0, &s), GP_OK);
    assert_true(s.v[GP_M_PCIE_TX] == 1000 * 1024.0);
    assert_true(s.v[GP_M_PCIE_RX] == 2000 * 1024.0);
    assert_true(s.v[GP_M_CLOCK_MAX_MEM] == 1593e6);
    assert_true(s.v[GP_M_TEMP_SLOWDOWN] == 90);
    /* PCIe blocks ~20 ms per call on a real driver: read at most once a second, the latest
     * reading carried into every sample */
    assert_int_equal(fake_calls("nvmlDeviceGetPcieThroughput"), 4); /* 2 GPUs x TX, RX */
    step(m, 1.5);
    assert_int_equal(fake_calls("nvmlDeviceGetPcieThroughput"), 4);
    assert_int_equal(gp_monitor_latest(m, 0, &s), GP_OK);
    assert_true(s.v[GP_M_PCIE_TX] == 1000 * 1024.0);
    step(m, 2.0);
    assert_int_equal(fake_calls("nvmlDeviceGetPcieThroughput"), 8);
    gp_monitor_close(m);
}

/* ---- alerts and events ---------------------------------------------------------------------- */

static void fake_nvml_alerts_hysteresis_duration_xid_throttle(void **state)
{
    gp_monitor_config cfg;
    gp_monitor_config_init(&cfg);
    cfg.level = GP_LEVEL_DETAILED;
    cfg.enable_bottleneck_detection = false;
    cfg.temperature_threshold = 85; /* the scenario's figures were written for 85 C */
    cfg.utilization_low_threshold = 0;
    char dir[] = "/tmp/gp_mon_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char jpath[2048];
    snprintf(jpath, sizeof jpath, "%s/events.jsonl", dir);
    FILE *jf = fopen(jpath, "w+");
    assert_non_null(jf);
    gp_monitor *m = open_scenario("alerts.txt", &cfg);
    gp_monitor_set_event_stream(m, jf);
    for (int t = 0; t <= 50; t++)
        step(m, t);
    /* the 2 s blip at 4-6 s did not fire; 90 C from 10 s fires at 15 s (5 s minimum) */
    assert_int_equal(count_events(GP_EVT_ALERT, "temperature"), 1);
    const gp_monitor_event *a = find_event(GP_EVT_ALERT, "temperature");
    assert_int_equal(a->ts, 15 * SEC);
    assert_true(a->value == 90);
    assert_true(a->threshold == 85);
    assert_int_equal(count_events(GP_EVT_ALERT_CLEARED, "temperature"), 1);
    assert_int_equal(find_event(GP_EVT_ALERT_CLEARED, "temperature")->ts, 30 * SEC);
    assert_int_equal(gp_monitor_alerts_total(m, "temperature"), 1);
    /* power at 99.7 % of the limit from 40 s: fires at 45 s */
    assert_int_equal(count_events(GP_EVT_ALERT, "power"), 1);
    assert_int_equal(find_event(GP_EVT_ALERT, "power")->ts, 45 * SEC);
    assert_int_equal(count_events(GP_EVT_ALERT_CLEARED, "power"), 0);
    /* thermal throttle reasons appeared once, at 12 s */
    assert_int_equal(count_events(GP_EVT_THROTTLE, "thermal"), 1);
    assert_int_equal(find_event(GP_EVT_THROTTLE, "thermal")->ts, 12 * SEC);
    /* XID 79 at 3 s, counted per code */
    assert_int_equal(count_events(GP_EVT_XID, "79"), 1);
    uint32_t codes[4];
    uint64_t counts[4];
    assert_int_equal(gp_monitor_xid_counts(m, 0, codes, counts, 4), 1);
    assert_int_equal(codes[0], 79);
    assert_int_equal(counts[0], 1);
    gp_monitor_close(m);
    /* the JSON lines match the golden file (timestamps are the fake's, so stable) except for
     * the XID's, which is the wall clock of its arrival: drop that line */
    rewind(jf);
    char line[1024];
    char got[8192] = "";
    size_t got_len = 0;
    while (fgets(line, sizeof line, jf)) {
        size_t l = strlen(line);
        if (!strstr(line, "\"event\":\"xid\"") && got_len + l < sizeof got) {
            memcpy(got + got_len, line, l + 1);
            got_len += l;
        }
    }
    fclose(jf);
    unlink(jpath);
    rmdir(dir);
    char gpath[2048];
    snprintf(gpath, sizeof gpath, "%s/tests/monitor/golden/alerts.jsonl", getenv("GP_SOURCE_DIR"));
    if (getenv("GP_UPDATE_GOLDEN")) {
        FILE *g = fopen(gpath, "w");
        assert_non_null(g);
        fputs(got, g);
        fclose(g);
    }
    FILE *g = fopen(gpath, "r");
    assert_non_null(g);
    char want[8192];
    size_t n = fread(want, 1, sizeof want - 1, g);
    want[n] = 0;
    fclose(g);
    assert_string_equal(got, want);
}

/* ---- leak detector on scripted series ------------------------------------------------------ */

typedef double (*series_fn)(double t_s);

/* Feeds fn sampled every dt seconds for dur seconds; returns the final verdict. */
static gp_leak_result run_leak(series_fn fn, double dur, double dt, uint32_t *spike_events)
{
    gp_leak_params p;
    gp_leak_params_init(&p);
    gp_leak_detector d;
    assert_int_equal(gp_leak_detector_init(&d, &p), GP_OK);
    uint32_t spikes = 0;
    for (double t = 0; t <= dur; t += dt)
        spikes += gp_leak_detector_add(&d, (gp_ns)llround(t * 1e9), fn(t), 16e9);
    if (spike_events)
        *spike_events = spikes;
    gp_leak_result r;
    gp_leak_detector_eval(&d, &r);
    return r;
}

static double noise(double t)
{
    /* deterministic pseudo-random in [-1, 1] */
    uint64_t x = (uint64_t)llround(t * 1000) * 0x9E3779B97F4A7C15ull;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return (double)(x >> 11) / 4503599627370496.0 - 1;
}

static double linear_leak(double t)
{
    return 2e9 + t * (200e6 / 3600) + 10e6 * noise(t); /* 200 MB/h */
}
static double staircase_leak(double t)
{
    return 2e9 + floor(t / 300) * 50e6; /* +50 MB every 5 minutes = 600 MB/h */
}
static double plateau(double t)
{
    /* a caching allocator: rises 4 GB over the first 8 minutes, then flat */
    return 1e9 + (t < 480 ? t / 480 : 1) * 4e9 + 5e6 * noise(t);
}
static double big_plateau(double t)
{
    /* a large warm-up: +10 GB over 15 minutes, then flat */
    return 2e9 + (t < 900 ? t / 900 : 1) * 10e9 + 5e6 * noise(t);
}
static double noisy_flat(double t)
{
    return 5e9 + 100e6 * noise(t);
}
static double spiky_flat(double t)
{
    /* flat with a 1 GB spike lasting 5 s every 10 minutes */
    return 3e9 + (fmod(t, 600) >= 300 && fmod(t, 600) < 305 ? 1e9 : 0);
}
static double slow_growth(double t)
{
    return 3e9 + t * (10e6 / 3600); /* 10 MB/h: below the 50 MB/h floor */
}

static void leak_detector_linear_leak(void **state)
{
    gp_leak_result r = run_leak(linear_leak, 3600, 1, NULL);
    assert_true(r.ready);
    assert_true(r.leak);
    assert_true(fabs(r.slope_mb_per_h - MIB(200e6)) < 10);
    assert_true(r.r2 > 0.95);
    /* time to full: (16 GB - used now) / slope */
    double used_mb = MIB(2000e6 + 200e6);
    double expect = (MIB(16e9) - used_mb) / MIB(200e6) * 3600;
    assert_true(fabs(r.time_to_full_s - expect) / expect < 0.05);
    /* not before warm-up + the minimum duration */
    gp_leak_result early = run_leak(linear_leak, 9 * 60, 1, NULL);
    assert_false(early.ready);
    assert_false(early.leak);
}

static void leak_detector_staircase_leak(void **state)
{
    gp_leak_result r = run_leak(staircase_leak, 3600, 1, NULL);
    assert_true(r.leak);
    assert_true(fabs(r.slope_mb_per_h - MIB(600e6)) < 60);
    assert_true(r.r2 > 0.9);
}

static void leak_detector_plateau_is_not_a_leak(void **state)
{
    for (double end = 12 * 60; end <= 3600; end += 60) {
        gp_leak_result r = run_leak(plateau, end, 1, NULL);
        if (r.leak)
            fail_msg("plateau flagged at %.0f s: slope %.1f recent %.1f r2 %.2f", end,
                     r.slope_mb_per_h, r.recent_slope_mb_per_h, r.r2);
        /* a warm-up that keeps rising past warm-up + minimum duration (12 min) looks like a leak
         * while it rises (documented); the verdict must clear within 5 minutes of the plateau */
        r = run_leak(big_plateau, end, 1, NULL);
        if (end > 12 * 60 && end <= 15 * 60)
            assert_true(r.leak);
        if (end < 20 * 60)
            continue;
        if (r.leak)
            fail_msg("plateau flagged at %.0f s: slope %.1f recent %.1f r2 %.2f", end,
                     r.slope_mb_per_h, r.recent_slope_mb_per_h, r.r2);
    }
}

static void leak_detector_noise_and_slow_growth(void **state)
{
    gp_leak_result r = run_leak(noisy_flat, 3600, 1, NULL);
    assert_true(r.ready);
    assert_false(r.leak);
    /* +-100 MB of noise: bucket means scatter ~10 MB, so the fitted slope stays well below the
     * 50 MB/h floor and the fit explains almost nothing */
    assert_true(fabs(r.slope_mb_per_h) < 50);
    assert_true(r.r2 < 0.5);
    r = run_leak(slow_growth, 3600, 1, NULL);
    assert_true(r.ready);
    assert_false(r.leak);
    assert_true(fabs(r.slope_mb_per_h - MIB(10e6)) < 2);
}

static void leak_detector_spikes(void **state)
{
    uint32_t spike_events = 0;
    gp_leak_result r = run_leak(spiky_flat, 3600, 1, &spike_events);
    assert_false(r.leak);
    assert_int_equal(r.spikes, 6); /* at 300, 900, ..., 3300 s */
    assert_int_equal(spike_events, 6);
    assert_true(fabs(r.last_spike_mb - MIB(1e9)) < 1);
    assert_true(fabs(r.slope_mb_per_h) < 1); /* spikes are kept out of the trend */
}

static void leak_detector_rejects_bad_params(void **state)
{
    gp_leak_params p;
    gp_leak_params_init(&p);
    gp_leak_detector d;
    p.window_s = 0;
    assert_int_equal(gp_leak_detector_init(&d, &p), GP_EINVAL);
    gp_leak_params_init(&p);
    p.min_r2 = 1.5;
    assert_int_equal(gp_leak_detector_init(&d, &p), GP_EINVAL);
}

static void fake_nvml_leak_device_and_process(void **state)
{
    gp_monitor_config cfg;
    gp_monitor_config_init(&cfg);
    cfg.enable_bottleneck_detection = false;
    gp_monitor *m = open_scenario("leak.txt", &cfg);
    for (int t = 0; t <= 3600; t += 5)
        step(m, t);
    gp_leak_result r;
    assert_int_equal(gp_monitor_leak(m, 0, &r), GP_OK);
    assert_true(r.leak);
    assert_true(fabs(r.slope_mb_per_h - MIB(600e6)) < 30);
    assert_int_equal(count_events(GP_EVT_LEAK, "device"), 1);
    const gp_monitor_event *ev = find_event(GP_EVT_LEAK, "device");
    /* warm-up 2 min + 10 min of data before the first verdict */
    assert_true(ev->ts >= 12 * 60 * SEC);
    assert_true(ev->ts <= 20 * 60 * SEC);
    assert_int_equal(gp_monitor_process_leak(m, 0, 77, &r), GP_OK);
    assert_true(r.leak);
    assert_true(fabs(r.slope_mb_per_h - MIB(360e6)) < 20);
    assert_int_equal(gp_monitor_process_leak(m, 0, 88, &r), GP_OK);
    assert_false(r.leak); /* grew for 5 minutes, then plateaued */
    assert_int_equal(gp_monitor_process_leak(m, 0, 99, &r), GP_ENOENT);
    size_t nleak = 0;
    for (size_t i = 0; i < n_events; i++)
        if (events[i].type == GP_EVT_LEAK && events[i].pid != 0) {
            assert_int_equal(events[i].pid, 77);
            nleak++;
        }
    assert_int_equal(nleak, 1);
    gp_suggestion sug[8];
    size_t ns = 0;
    assert_int_equal(gp_monitor_suggestions(m, sug, 8, &ns), GP_OK);
    bool found = false;
    for (size_t i = 0; i < ns; i++)
        if (strcmp(sug[i].type, "memory_leak") == 0) {
            found = true;
            assert_int_equal(sug[i].severity, GP_SEV_CRITICAL);
            assert_non_null(strstr(sug[i].evidence, "slope_mb_per_h="));
        }
    assert_true(found);
    gp_monitor_close(m);
}

/* ---- bottlenecks ---------------------------------------------------------------------------- */

static void fill(gp_gpu_sample *s, size_t n, double ug, double um, double used_ratio, double temp,
                 double power_ratio, uint64_t throttle)
{
    for (size_t i = 0; i < n; i++) {
        memset(&s[i], 0, sizeof s[i]);
        s[i].ts = (gp_ns)i * SEC / 10;
        s[i].v[GP_M_UTIL_GPU] = ug;
        s[i].v[GP_M_UTIL_MEM] = um;
        s[i].v[GP_M_MEM_TOTAL] = 80e9;
        s[i].v[GP_M_MEM_USED] = used_ratio * 80e9;
        s[i].v[GP_M_TEMP] = temp;
        s[i].v[GP_M_TEMP_SLOWDOWN] = 90;
        s[i].v[GP_M_POWER_LIMIT] = 400;
        s[i].v[GP_M_POWER] = power_ratio * 400;
        s[i].v[GP_M_THROTTLE] = (double)throttle;
        s[i].valid = (1ull << GP_M_UTIL_GPU) | (1ull << GP_M_UTIL_MEM) | (1ull << GP_M_MEM_TOTAL) |
                     (1ull << GP_M_MEM_USED) | (1ull << GP_M_TEMP) | (1ull << GP_M_TEMP_SLOWDOWN) |
                     (1ull << GP_M_POWER_LIMIT) | (1ull << GP_M_POWER) | (1ull << GP_M_THROTTLE);
    }
}

static void bottleneck_classes(void **state)
{
    gp_gpu_sample s[50] = {0};
    gp_bottleneck b;
    gp_bottleneck_classify(s, 0, &b);
    assert_int_equal(b.kind, GP_BN_UNKNOWN);
    fill(s, 50, 2, 1, 0.1, 40, 0.2, GP_THROTTLE_IDLE);
    gp_bottleneck_classify(s, 50, &b);
    assert_int_equal(b.kind, GP_BN_IDLE);
    assert_true(b.confidence == 1);
    fill(s, 50, 97, 30, 0.5, 70, 0.7, 0);
    gp_bottleneck_classify(s, 50, &b);
    assert_int_equal(b.kind, GP_BN_COMPUTE);
    fill(s, 50, 85, 80, 0.5, 70, 0.7, 0);
    gp_bottleneck_classify(s, 50, &b);
    assert_int_equal(b.kind, GP_BN_MEMORY_BANDWIDTH);
    fill(s, 50, 60, 20, 0.98, 70, 0.7, 0);
    gp_bottleneck_classify(s, 50, &b);
    assert_int_equal(b.kind, GP_BN_MEMORY_CAPACITY);
    assert_true(fabs(b.mem_used_ratio - 0.98) < 1e-9);
    fill(s, 50, 99, 30, 0.5, 75, 0.99, GP_THROTTLE_SW_POWER_CAP);
    gp_bottleneck_classify(s, 50, &b);
    assert_int_equal(b.kind, GP_BN_POWER);
    assert_true(b.power_throttle_share == 1);
    fill(s, 50, 99, 30, 0.5, 89, 0.8, 0);
    fill(s + 25, 25, 99, 30, 0.5, 89, 0.8, GP_THROTTLE_HW_THERMAL);
    gp_bottleneck_classify(s, 50, &b);
    assert_int_equal(b.kind, GP_BN_THERMAL); /* 88+ C near the 90 C slowdown */
    assert_true(fabs(b.thermal_throttle_share - 0.5) < 1e-9);
    assert_true(b.temp_max == 89);
    /* missing metrics: no verdict from absent data */
    for (int i = 0; i < 50; i++)
        s[i].valid = 0;
    gp_bottleneck_classify(s, 50, &b);
    assert_int_equal(b.kind, GP_BN_UNKNOWN);
    assert_true(isnan(b.util_gpu_mean));
}

/* ---- configuration ------------------------------------------------------------------------- */

static void config_yaml_good(void **state)
{
    gp_monitor_config c;
    gp_monitor_config_init(&c);
    const char *y = "# monitor settings\n"
                    "level: detailed\n"
                    "mode: adaptive\n"
                    "sampling_interval_ms: 250\n"
                    "max_samples: 500\n"
                    "retention_hours: 0.5\n"
                    "temperature_threshold: 80\n"
                    "memory_threshold: 92.5\n"
                    "enable_pcie: yes\n"
                    "enable_xid_events: false\n";
    gp_error err = {0};
    assert_int_equal(gp_monitor_config_parse(&c, y, strlen(y), "m.yaml", NULL, &err), GP_OK);
    assert_int_equal(c.level, GP_LEVEL_DETAILED);
    assert_int_equal(c.mode, GP_MODE_ADAPTIVE);
    assert_int_equal(c.sampling_interval_ms, 250);
    assert_int_equal(c.max_samples, 500);
    assert_true(c.retention_hours == 0.5);
    assert_true(c.temperature_threshold == 80);
    assert_true(c.memory_threshold == 92.5);
    assert_true(c.enable_pcie);
    assert_false(c.enable_xid_events);
    assert_true(c.utilization_threshold == 85); /* untouched default */
    /* a CLI flag overrides the file */
    assert_int_equal(gp_monitor_config_set(&c, "sampling_interval_ms", "50", NULL, &err), GP_OK);
    assert_int_equal(c.sampling_interval_ms, 50);
    assert_true(gp_monitor_config_wants(&c, GP_M_PCIE_TX));
    /* an empty file is fine */
    assert_int_equal(gp_monitor_config_parse(&c, "", 0, "e.yaml", NULL, &err), GP_OK);
}

/* Issue 38: libyaml's cost grows with the square of the nesting (400 KB of "[" took 93 s): the
 * depth is bounded before libyaml reads the text, at once and naming the line; brackets in quoted
 * scalars and comments, and 64 levels, are fine. */
static void config_yaml_nesting_bounded(void **state)
{
    (void)state;
    size_t n = 400000;
    char *deep = malloc(2 * n + 16);
    assert_non_null(deep);
    memcpy(deep, "level: ", 7);
    memset(deep + 7, '[', n);
    memset(deep + 7 + n, ']', n);
    deep[7 + 2 * n] = 0;
    gp_monitor_config c;
    gp_monitor_config_init(&c);
    gp_error err = {0};
    assert_int_equal(gp_monitor_config_parse(&c, deep, strlen(deep), "deep.yaml", NULL, &err),
                     GP_EPARSE);
    assert_non_null(strstr(err.msg, "deep.yaml:1: nested deeper than 64"));
    for (size_t i = 0; i < n; i++) /* block nesting: "- - - - ..." */
        memcpy(deep + 2 * i, "- ", 2);
    memcpy(deep + 2 * n, "x\n", 3);
    assert_int_equal(gp_monitor_config_parse(&c, deep, strlen(deep), "deep.yaml", NULL, &err),
                     GP_EPARSE);
    assert_non_null(strstr(err.msg, "deep.yaml:1: nested deeper than 256 columns"));
    free(deep);
    /* 64 levels, and brackets that are text: libyaml reads them (then the keys are checked) */
    char ok[400];
    size_t at = (size_t)snprintf(ok, sizeof ok, "# [[[[ a comment\nmode: \"[[[{{{\"\nx: ");
    for (int i = 0; i < 64; i++)
        ok[at++] = '[';
    for (int i = 0; i < 64; i++)
        ok[at++] = ']';
    ok[at++] = '\n';
    ok[at] = 0;
    gp_status st = gp_monitor_config_parse(&c, ok, strlen(ok), "ok.yaml", NULL, &err);
    assert_true(st == GP_EINVAL || st == GP_EPARSE);
    assert_null(strstr(err.msg, "nested deeper"));
}

static void config_yaml_errors_name_the_line(void **state)
{
    static const struct {
        const char *yaml;
        const char *msg;
    } cases[] = {
        {"level: standard\nsampling_intervl_ms: 10\n",
         "m.yaml:2: unknown key 'sampling_intervl_ms'"},
        {"mode: debug\n\nlevel: extreme\n", "m.yaml:3: level: 'extreme' is not one of"},
        {"max_samples: -3\n", "m.yaml:1: max_samples: -3 is out of range"},
        {"sampling_interval_ms: 1.5\n", "m.yaml:1: sampling_interval_ms: '1.5' is not a whole"},
        {"enable_pcie: maybe\n", "m.yaml:1: enable_pcie: 'maybe' is not a boolean"},
        {"leak_min_r2: 2\n", "m.yaml:1: leak_min_r2: 2 is out of range"},
        {"thresholds:\n  temperature: 80\n", "m.yaml:2: key 'thresholds': expected a single"},
        {"- a\n- b\n", "m.yaml:1: expected a mapping"},
        {"level: 'unterminated\n", "m.yaml:2: YAML error"},
        {"temperature_threshold: hot\n", "m.yaml:1: temperature_threshold: 'hot' is not a number"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gp_monitor_config c, before;
        gp_monitor_config_init(&c);
        before = c;
        gp_error err = {0};
        gp_status st =
            gp_monitor_config_parse(&c, cases[i].yaml, strlen(cases[i].yaml), "m.yaml", NULL, &err);
        assert_true(st == GP_EINVAL || st == GP_EPARSE);
        if (strncmp(err.msg, cases[i].msg, strlen(cases[i].msg)) != 0)
            fail_msg("case %zu: got '%s', want prefix '%s'", i, err.msg, cases[i].msg);
        assert_memory_equal(&c, &before, sizeof c); /* unchanged on failure */
    }
    gp_monitor_config c;
    gp_monitor_config_init(&c);
    gp_error err = {0};
    assert_int_equal(gp_monitor_config_load(&c, "/nonexistent/m.yaml", NULL, &err), GP_ENOENT);
    assert_non_null(strstr(err.msg, "/nonexistent/m.yaml"));
}

/* ---- modes, retention, components, threads ---------------------------------------------- */

static void fake_nvml_profiling_mode_writes_counters(void **state)
{
    gp_monitor_config cfg;
    gp_monitor_config_init(&cfg);
    cfg.mode = GP_MODE_PROFILING;
    cfg.level = GP_LEVEL_LIGHTWEIGHT;
    gp_monitor *m = open_scenario("basic.txt", &cfg);
    gp_trace *t = NULL;
    assert_int_equal(gp_trace_create("gpuprof monitor", &t), GP_OK);
    assert_int_equal(gp_monitor_attach_trace(m, t), GP_OK);
    step(m, 1);
    step(m, 2);
    step(m, 3);
    gp_monitor_close(m);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    /* lightweight: 6 metrics on GPU 0 and GPU 1, 3 rounds */
    assert_int_equal(t->n_counters, 3 * 6 * 2);
    gp_strid id = gp_trace_find_str(t, "gpu0.temp_celsius", strlen("gpu0.temp_celsius"));
    assert_int_not_equal(id, 0);
    size_t n = 0;
    for (size_t i = 0; i < t->n_counters; i++)
        if (t->counters[i].series == id) {
            assert_true(t->counters[i].value == 61);
            assert_true(t->counters[i].ts == (gp_ns)(n + 1) * SEC);
            assert_int_equal(t->tracks[t->counters[i].track].kind, GP_TRACK_COUNTER);
            n++;
        }
    assert_int_equal(n, 3);
    gp_trace_free(t);
}

static void fake_nvml_retention_by_count_and_age(void **state)
{
    gp_monitor_config cfg;
    gp_monitor_config_init(&cfg);
    cfg.max_samples = 10;
    gp_monitor *m = open_scenario("busy.txt", &cfg);
    for (int t = 1; t <= 25; t++)
        step(m, t);
    gp_gpu_sample h[32];
    size_t n = gp_monitor_history(m, 0, h, 32);
    assert_int_equal(n, 10);
    assert_int_equal(h[0].ts, 16 * SEC);
    assert_int_equal(h[9].ts, 25 * SEC);
    assert_int_equal(gp_monitor_history(m, 0, h, 3), 3);
    assert_int_equal(h[2].ts, 25 * SEC); /* the newest 3 */
    gp_monitor_close(m);
    cfg.max_samples = 1000;
    cfg.retention_hours = 10.0 / 3600; /* 10 s */
    m = open_scenario("busy.txt", &cfg);
    for (int t = 1; t <= 25; t++)
        step(m, t);
    n = gp_monitor_history(m, 0, h, 32);
    assert_int_equal(n, 11); /* 15 s .. 25 s */
    assert_int_equal(h[0].ts, 15 * SEC);
    gp_monitor_close(m);
}

static void fake_nvml_adaptive_mode(void **state)
{
    gp_monitor_config cfg;
    gp_monitor_config_init(&cfg);
    cfg.mode = GP_MODE_ADAPTIVE;
    cfg.sampling_interval_ms = 500;
    cfg.adaptive_min_interval_ms = 25;
    gp_monitor *m = open_scenario("busy.txt", &cfg);
    assert_int_equal(gp_monitor_current_interval_ms(m), 500);
    step(m, 1);
    assert_int_equal(gp_monitor_current_interval_ms(m), 25);
    gp_monitor_close(m);
    m = open_scenario("lost.txt", &cfg); /* 30 % busy: below the 50 % default */
    step(m, 1);
    assert_int_equal(gp_monitor_current_interval_ms(m), 500);
    gp_monitor_close(m);
}

static void fake_nvml_component_attribution(void **state)
{
    gp_component_reset();
    gp_monitor *m = open_scenario("busy.txt", NULL);
    step(m, 0);
    assert_int_equal(gp_component_begin("image_processor"), GP_OK);
    for (int t = 1; t <= 10; t++)
        step(m, t);
    assert_int_equal(gp_component_begin("decoder"), GP_OK);
    assert_int_equal(gp_component_end("image_processor"), GP_ESTATE); /* not innermost */
    for (int t = 11; t <= 15; t++)
        step(m, t);
    assert_int_equal(gp_component_end("decoder"), GP_OK);
    assert_int_equal(gp_component_end("image_processor"), GP_OK);
    assert_int_equal(gp_component_current(), -1);
    step(m, 16);
    gp_component_stats cs[4];
    size_t n = 0;
    assert_int_equal(gp_monitor_components(m, cs, 4, &n), GP_OK);
    assert_int_equal(n, 2);
    assert_string_equal(cs[0].name, "image_processor");
    assert_int_equal(cs[0].samples, 10);
    assert_true(fabs(cs[0].wall_s - 10) < 1e-9);
    assert_true(fabs(cs[0].gpu_busy_s - 9) < 1e-9);        /* 90 % busy */
    assert_true(fabs(cs[0].mem_growth_bytes - 100e6) < 1); /* 10 MB/s for 10 s */
    assert_string_equal(cs[1].name, "decoder");
    assert_int_equal(cs[1].samples, 5);
    assert_true(fabs(cs[1].mem_growth_bytes - 50e6) < 1);
    assert_int_equal(gp_component_begin(""), GP_EINVAL);
    gp_monitor_close(m);
    gp_component_reset();
}

static void fake_nvml_sampler_thread(void **state)
{
    gp_monitor_config cfg;
    gp_monitor_config_init(&cfg);
    cfg.sampling_interval_ms = 10;
    cfg.level = GP_LEVEL_COMPREHENSIVE; /* with the XID and PCIe threads */
    gp_monitor *m = open_scenario("lost.txt", &cfg);
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    gp_monitor_set_event_stream(m, tmp);
    assert_int_equal(gp_monitor_start(m), GP_OK);
    assert_int_equal(gp_monitor_start(m), GP_ESTATE);
    assert_int_equal(gp_monitor_sample_now(m, 0), GP_ESTATE);
    assert_true(gp_monitor_wait_samples(m, 5, 5000));
    gp_gpu_sample s;
    assert_int_equal(gp_monitor_latest(m, 0, &s), GP_OK); /* read while it samples */
    /* the PCIe thread reads at its start, then every second: wait up to 10 s (loaded machines) */
    for (int i = 0; i < 1000 && !gp_sample_has(&s, GP_M_PCIE_RX); i++) {
        usleep(10000);
        assert_int_equal(gp_monitor_latest(m, 0, &s), GP_OK);
    }
    assert_true(gp_sample_has(&s, GP_M_PCIE_RX)); /* from the PCIe thread */
    char *json = NULL;
    size_t len;
    assert_int_equal(gp_monitor_health_json(m, &json, &len), GP_OK);
    assert_non_null(strstr(json, "\"running\":true"));
    free(json);
    gp_monitor_stop(m);
    gp_monitor_stop(m); /* idempotent */
    uint64_t n = gp_monitor_samples_total(m);
    assert_true(n >= 5);
    usleep(30000);
    assert_int_equal(gp_monitor_samples_total(m), n); /* really stopped */
    assert_int_equal(count_events(GP_EVT_STARTED, NULL), 1);
    assert_int_equal(count_events(GP_EVT_STOPPED, NULL), 1);
    gp_monitor_close(m);
    rewind(tmp);
    char line[1024];
    int started = 0, stopped = 0;
    while (fgets(line, sizeof line, tmp)) {
        started += strstr(line, "{\"event\":\"started\"") != NULL;
        stopped += strstr(line, "{\"event\":\"stopped\"") != NULL;
    }
    fclose(tmp);
    assert_int_equal(started, 1);
    assert_int_equal(stopped, 1);
}

static void fake_nvml_debug_mode_reports_unsupported(void **state)
{
    gp_monitor_config cfg;
    gp_monitor_config_init(&cfg);
    cfg.mode = GP_MODE_DEBUG;
    cfg.level = GP_LEVEL_DETAILED;
    gp_monitor *m = open_scenario("basic.txt", &cfg);
    step(m, 1);
    step(m, 2);
    assert_int_equal(count_events(GP_EVT_DEBUG, "unsupported"), 1); /* GPU 1, once */
    assert_int_equal(find_event(GP_EVT_DEBUG, "unsupported")->device, 1);
    gp_monitor_close(m);
}

static void fake_nvml_utilization_memory_alerts_bottlenecks_mig(void **state)
{
    gp_monitor_config cfg;
    gp_monitor_config_init(&cfg);
    cfg.level = GP_LEVEL_DETAILED;
    cfg.alert_min_duration_ms = 3000;
    cfg.utilization_threshold = 95;    /* the scenario's figures were written for 95 % */
    cfg.temperature_threshold = 85;    /* and 85 C */
    cfg.utilization_low_threshold = 0; /* low utilization: tests/monitor/test_monitor_seed.c */
    gp_monitor *m = open_scenario("busy_hot.txt", &cfg);
    gp_gpu_ident id;
    assert_int_equal(gp_monitor_device(m, 1, &id), GP_OK);
    assert_int_equal(id.mig_instances, 3);
    for (int t = 0; t <= 60; t++) {
        step(m, t);
        if (t == 30) {
            gp_suggestion sug[8];
            size_t ns = 0;
            assert_int_equal(gp_monitor_suggestions(m, sug, 8, &ns), GP_OK);
            bool capacity = false, idle = false;
            for (size_t i = 0; i < ns; i++) {
                capacity |= sug[i].device == 0 && strcmp(sug[i].type, "memory_capacity") == 0;
                idle |= sug[i].device == 1 && strcmp(sug[i].type, "idle") == 0;
            }
            assert_true(capacity);
            assert_true(idle);
        }
    }
    gp_gpu_sample s;
    assert_int_equal(gp_monitor_latest(m, 1, &s), GP_OK);
    assert_true(s.v[GP_M_MIG_MODE] == 1);
    /* utilization 97 % >= 95 % from 0 s: fires at 3 s, clears at 40 s (5 < 95 - 5) */
    assert_int_equal(count_events(GP_EVT_ALERT, "utilization"), 1);
    assert_int_equal(find_event(GP_EVT_ALERT, "utilization")->ts, 3 * SEC);
    assert_int_equal(find_event(GP_EVT_ALERT_CLEARED, "utilization")->ts, 40 * SEC);
    /* memory 95 % >= 90 % from 20 s: fires at 23 s, never clears */
    assert_int_equal(count_events(GP_EVT_ALERT, "memory"), 1);
    assert_int_equal(find_event(GP_EVT_ALERT, "memory")->ts, 23 * SEC);
    assert_int_equal(count_events(GP_EVT_ALERT_CLEARED, "memory"), 0);
    assert_int_equal(gp_monitor_alerts_total(m, NULL), 2);
    /* bottleneck changes: compute-bound, then memory capacity once memory fills */
    size_t nb = 0;
    const char *seen[8];
    for (size_t i = 0; i < n_events && nb < 8; i++)
        if (events[i].type == GP_EVT_BOTTLENECK && events[i].device == 0)
            seen[nb++] = events[i].what;
    assert_true(nb >= 2);
    assert_string_equal(seen[0], "compute_bound");
    assert_string_equal(seen[1], "memory_capacity");
    gp_bottleneck b;
    assert_int_equal(gp_monitor_bottleneck(m, 1, &b), GP_OK);
    assert_int_equal(b.kind, GP_BN_IDLE);
    assert_int_equal(b.samples, 11); /* the last 10 s, both ends included */
    gp_monitor_close(m);
}

static void names_are_stable(void **state)
{
    assert_string_equal(gp_metric_name(GP_M_MEM_USED), "mem_used_bytes");
    assert_string_equal(gp_metric_unit(GP_M_POWER), "watts");
    assert_string_equal(gp_metric_name(GP_M_COUNT), "?");
    assert_string_equal(gp_monitor_event_type_name(GP_EVT_LEAK), "leak");
    assert_string_equal(gp_bottleneck_name(GP_BN_MEMORY_BANDWIDTH), "memory_bandwidth_bound");
    assert_string_equal(gp_monitor_level_name(GP_LEVEL_COMPREHENSIVE), "comprehensive");
    for (int k = 0; k < GP_M_COUNT; k++)
        assert_string_not_equal(gp_metric_name((gp_metric)k), "?");
}

int main(void)
{
    if (!getenv("GP_FAKE_NVML") || !getenv("GP_SOURCE_DIR")) {
        fprintf(stderr, "GP_FAKE_NVML / GP_SOURCE_DIR not set: run through ctest\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fake_nvml_no_driver_is_one_clear_error),
        cmocka_unit_test(fake_nvml_init_failure_is_no_driver),
        cmocka_unit_test(fake_nvml_values_units_and_identity),
        cmocka_unit_test(fake_nvml_not_supported_is_remembered),
        cmocka_unit_test(fake_nvml_lost_gpu_others_go_on),
        cmocka_unit_test(fake_nvml_process_list_grows),
        cmocka_unit_test(fake_nvml_rejects_wrong_struct_version),
        cmocka_unit_test(fake_nvml_memory_v2_rejected_falls_back_to_v1),
        cmocka_unit_test(fake_nvml_old_driver_uses_older_functions),
        cmocka_unit_test(fake_nvml_levels_select_metrics),
        cmocka_unit_test(fake_nvml_alerts_hysteresis_duration_xid_throttle),
        cmocka_unit_test(leak_detector_linear_leak),
        cmocka_unit_test(leak_detector_staircase_leak),
        cmocka_unit_test(leak_detector_plateau_is_not_a_leak),
        cmocka_unit_test(leak_detector_noise_and_slow_growth),
        cmocka_unit_test(leak_detector_spikes),
        cmocka_unit_test(leak_detector_rejects_bad_params),
        cmocka_unit_test(fake_nvml_leak_device_and_process),
        cmocka_unit_test(bottleneck_classes),
        cmocka_unit_test(config_yaml_good),
        cmocka_unit_test(config_yaml_errors_name_the_line),
        cmocka_unit_test(config_yaml_nesting_bounded),
        cmocka_unit_test(fake_nvml_profiling_mode_writes_counters),
        cmocka_unit_test(fake_nvml_retention_by_count_and_age),
        cmocka_unit_test(fake_nvml_adaptive_mode),
        cmocka_unit_test(fake_nvml_component_attribution),
        cmocka_unit_test(fake_nvml_sampler_thread),
        cmocka_unit_test(fake_nvml_debug_mode_reports_unsupported),
        cmocka_unit_test(fake_nvml_utilization_memory_alerts_bottlenecks_mig),
        cmocka_unit_test(names_are_stable),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (fake)
        dlclose(fake);
    return rc;
}
