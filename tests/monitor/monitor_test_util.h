/* Helpers of the monitor's test programs (tests/monitor): event capture and the FAKE NVML driver
 * of tests/fakes/nvml (scenario files in tests/monitor/scenarios, a clock the test sets): the
 * cases that use them test our code, not a GPU. Header-only: each program includes it once, after
 * <cmocka.h>. */
#ifndef GP_TESTS_MONITOR_TEST_UTIL_H
#define GP_TESTS_MONITOR_TEST_UTIL_H

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprof/monitor.h"

#define SEC 1000000000LL
#define GP_TEST_UNUSED __attribute__((unused))

static void *fake;
static void (*fake_set_time)(double);
static void (*fake_reload)(void);
static unsigned long (*fake_calls)(const char *);

/* ---- event capture ----------------------------------------------------------------------- */

#define MAX_EVENTS 512
static gp_monitor_event events[MAX_EVENTS];
static size_t n_events;

GP_TEST_UNUSED static void on_event(const gp_monitor_event *ev, void *ctx)
{
    (void)ctx;
    if (n_events < MAX_EVENTS)
        events[n_events++] = *ev;
}

GP_TEST_UNUSED static size_t count_events(gp_monitor_event_type t, const char *what)
{
    size_t n = 0;
    for (size_t i = 0; i < n_events; i++)
        if (events[i].type == t && (!what || strcmp(events[i].what, what) == 0))
            n++;
    return n;
}

GP_TEST_UNUSED static const gp_monitor_event *find_event(gp_monitor_event_type t, const char *what)
{
    for (size_t i = 0; i < n_events; i++)
        if (events[i].type == t && (!what || strcmp(events[i].what, what) == 0))
            return &events[i];
    return NULL;
}

/* ---- fake driver helpers --------------------------------------------------------------- */

GP_TEST_UNUSED static void use_library(const char *env_name)
{
    const char *lib = getenv(env_name);
    assert_non_null(lib);
    setenv("GP_NVML_LIBRARY", lib, 1);
    if (fake)
        dlclose(fake);
    fake = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(fake);
    *(void **)&fake_set_time = dlsym(fake, "fake_nvml_set_time");
    *(void **)&fake_reload = dlsym(fake, "fake_nvml_reload");
    *(void **)&fake_calls = dlsym(fake, "fake_nvml_calls");
    assert_non_null(fake_set_time);
    assert_non_null(fake_reload);
    assert_non_null(fake_calls);
}

GP_TEST_UNUSED static gp_monitor *open_scenario_lib(const char *lib_env, const char *scenario,
                                                    const gp_monitor_config *cfg)
{
    use_library(lib_env);
    char path[2048];
    snprintf(path, sizeof path, "%s/tests/monitor/scenarios/%s", getenv("GP_SOURCE_DIR"), scenario);
    setenv("GP_FAKE_NVML_SCENARIO", path, 1);
    fake_reload();
    n_events = 0;
    gp_monitor *m = NULL;
    gp_error err = {0};
    gp_status st = gp_monitor_open(cfg, &m, &err);
    if (st != GP_OK)
        fail_msg("gp_monitor_open(%s): %s", scenario, err.msg);
    fake_set_time(0);
    assert_int_equal(gp_monitor_add_listener(m, on_event, NULL), GP_OK);
    return m;
}

GP_TEST_UNUSED static gp_monitor *open_scenario(const char *scenario, const gp_monitor_config *cfg)
{
    return open_scenario_lib("GP_FAKE_NVML", scenario, cfg);
}

/* One sampling round at fake time t seconds (monitor timestamps are t * 1e9 ns). */
GP_TEST_UNUSED static void step(gp_monitor *m, double t)
{
    fake_set_time(t);
    assert_int_equal(gp_monitor_sample_now(m, (gp_ns)llround(t * 1e9)), GP_OK);
}

#endif
