/* Monitor configuration: defaults, one key at a time (CLI flags), and YAML files (libyaml). */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "core/util.h"
#include "gpuprof/monitor.h"
#include "core/parse.h"

void gp_monitor_config_init(gp_monitor_config *c)
{
    memset(c, 0, sizeof *c);
    c->level = GP_LEVEL_STANDARD;
    c->mode = GP_MODE_MONITORING;
    c->sampling_interval_ms = 100;
    c->adaptive_min_interval_ms = 20;
    c->adaptive_busy_percent = 50;
    c->max_samples = 1000;
    c->retention_hours = 1;
    c->utilization_threshold = 95;
    c->memory_threshold = 90;
    c->temperature_threshold = 85;
    c->power_threshold = 95;
    c->alert_hysteresis = 5;
    c->alert_min_duration_ms = 5000;
    c->leak_window_minutes = 30;
    c->leak_warmup_minutes = 2;
    c->leak_min_slope_mb_per_hour = 50;
    c->leak_min_r2 = 0.8;
    c->leak_min_duration_minutes = 10;
    c->leak_spike_mb = 256;
    c->enable_alerts = true;
    c->enable_leak_detection = true;
    c->enable_bottleneck_detection = true;
    c->enable_process_monitoring = true;
    c->enable_xid_events = true;
    c->enable_pcie = false;
}

static const char *const level_names[] = {"lightweight", "standard", "detailed", "comprehensive"};
static const char *const mode_names[] = {"monitoring", "profiling", "adaptive", "debug"};

const char *gp_monitor_level_name(gp_monitor_level l)
{
    return GP_NAME_OF(level_names, l, "?");
}

const char *gp_monitor_mode_name(gp_monitor_mode m)
{
    return GP_NAME_OF(mode_names, m, "?");
}

typedef enum { K_LEVEL, K_MODE, K_U32, K_DOUBLE, K_BOOL } key_type;

typedef struct key_def {
    const char *name;
    key_type type;
    size_t off;
    double lo, hi; /* accepted range for numbers */
} key_def;

#define KD(name, type, lo, hi)                                                                     \
    {                                                                                              \
#name, type, offsetof(gp_monitor_config, name), lo, hi                                     \
    }
static const key_def keys[] = {
    KD(level, K_LEVEL, 0, 0),
    KD(mode, K_MODE, 0, 0),
    KD(sampling_interval_ms, K_U32, 1, 3600000),
    KD(adaptive_min_interval_ms, K_U32, 1, 3600000),
    KD(adaptive_busy_percent, K_DOUBLE, 0, 100),
    KD(max_samples, K_U32, 1, 10000000),
    KD(retention_hours, K_DOUBLE, 1e-6, 24 * 365),
    KD(utilization_threshold, K_DOUBLE, 0, 100),
    KD(memory_threshold, K_DOUBLE, 0, 100),
    KD(temperature_threshold, K_DOUBLE, 0, 200),
    KD(power_threshold, K_DOUBLE, 0, 200),
    KD(alert_hysteresis, K_DOUBLE, 0, 100),
    KD(alert_min_duration_ms, K_U32, 0, 86400000),
    KD(leak_window_minutes, K_DOUBLE, 0.01, 7 * 24 * 60),
    KD(leak_warmup_minutes, K_DOUBLE, 0, 7 * 24 * 60),
    KD(leak_min_slope_mb_per_hour, K_DOUBLE, 1e-6, 1e9),
    KD(leak_min_r2, K_DOUBLE, 0, 1),
    KD(leak_min_duration_minutes, K_DOUBLE, 0.01, 7 * 24 * 60),
    KD(leak_spike_mb, K_DOUBLE, 1e-6, 1e9),
    KD(enable_alerts, K_BOOL, 0, 0),
    KD(enable_leak_detection, K_BOOL, 0, 0),
    KD(enable_bottleneck_detection, K_BOOL, 0, 0),
    KD(enable_process_monitoring, K_BOOL, 0, 0),
    KD(enable_xid_events, K_BOOL, 0, 0),
    KD(enable_pcie, K_BOOL, 0, 0),
};

static bool parse_double(const char *s, double *out)
{
    if (!*s)
        return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v))
        return false;
    *out = v;
    return true;
}

gp_status gp_monitor_config_set(gp_monitor_config *cfg, const char *key, const char *value,
                                gp_error *err)
{
    const key_def *k = NULL;
    for (size_t i = 0; i < GP_ARRAY_LEN(keys); i++)
        if (strcmp(keys[i].name, key) == 0)
            k = &keys[i];
    if (!k)
        return gp_error_set(err, GP_EINVAL, "unknown key '%s'", key);
    char *field = (char *)cfg + k->off;
    int i;
    switch (k->type) {
    case K_LEVEL:
        if ((i = gp__index_of(level_names, GP_ARRAY_LEN(level_names), value, true)) < 0)
            return gp_error_set(err, GP_EINVAL,
                                "level: '%s' is not one of lightweight, standard, detailed, "
                                "comprehensive",
                                value);
        cfg->level = (gp_monitor_level)i;
        return GP_OK;
    case K_MODE:
        if ((i = gp__index_of(mode_names, GP_ARRAY_LEN(mode_names), value, true)) < 0)
            return gp_error_set(err, GP_EINVAL,
                                "mode: '%s' is not one of monitoring, profiling, adaptive, debug",
                                value);
        cfg->mode = (gp_monitor_mode)i;
        return GP_OK;
    case K_BOOL:
        if (strcasecmp(value, "true") == 0 || strcasecmp(value, "yes") == 0 ||
            strcasecmp(value, "on") == 0 || strcmp(value, "1") == 0) {
            *(bool *)field = true;
            return GP_OK;
        }
        if (strcasecmp(value, "false") == 0 || strcasecmp(value, "no") == 0 ||
            strcasecmp(value, "off") == 0 || strcmp(value, "0") == 0) {
            *(bool *)field = false;
            return GP_OK;
        }
        return gp_error_set(err, GP_EINVAL, "%s: '%s' is not a boolean (true or false)", key,
                            value);
    case K_U32:
    case K_DOUBLE: {
        double v;
        if (!parse_double(value, &v))
            return gp_error_set(err, GP_EINVAL, "%s: '%s' is not a number", key, value);
        if (k->type == K_U32 && v != floor(v))
            return gp_error_set(err, GP_EINVAL, "%s: '%s' is not a whole number", key, value);
        if (v < k->lo || v > k->hi)
            return gp_error_set(err, GP_EINVAL, "%s: %s is out of range [%g, %g]", key, value,
                                k->lo, k->hi);
        if (k->type == K_U32)
            *(uint32_t *)field = (uint32_t)v;
        else
            *(double *)field = v;
        return GP_OK;
    }
    }
    return GP_EINVAL;
}

static const char *event_name(yaml_event_type_t t)
{
    static const char *const names[] = {[YAML_SEQUENCE_START_EVENT] = "a list",
                                        [YAML_MAPPING_START_EVENT] = "a mapping",
                                        [YAML_ALIAS_EVENT] = "an alias"};
    return GP_NAME_OF(names, t, "an unexpected element");
}

gp_status gp_monitor_config_parse(gp_monitor_config *cfg, const char *text, size_t len,
                                  const char *name, gp_error *err)
{
    yaml_parser_t p;
    yaml_event_t ev;
    gp_monitor_config tmp = *cfg;
    gp_status st = GP_OK;
    char key[128] = "";
    size_t key_line = 0;
    int state = 0; /* 0 before the mapping, 1 expecting a key, 2 expecting a value, 3 done */
    bool have_event = false;
    if (!yaml_parser_initialize(&p))
        return gp_error_set(err, GP_ENOMEM, "%s: cannot initialise the YAML parser", name);
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    for (;;) {
        if (!yaml_parser_parse(&p, &ev)) {
            st = gp_error_set(err, GP_EPARSE, "%s:%zu: YAML error: %s", name,
                              p.problem_mark.line + 1, p.problem ? p.problem : "malformed");
            goto done;
        }
        have_event = true;
        size_t line = ev.start_mark.line + 1;
        yaml_event_type_t t = ev.type;
        if (t == YAML_STREAM_END_EVENT)
            break;
        if (t == YAML_STREAM_START_EVENT || t == YAML_DOCUMENT_START_EVENT ||
            t == YAML_DOCUMENT_END_EVENT) {
        } else if (state == 0) {
            if (t == YAML_MAPPING_START_EVENT) {
                state = 1;
            } else if (t == YAML_SCALAR_EVENT && ev.data.scalar.length == 0) {
                state = 3; /* an empty document */
            } else {
                st = gp_error_set(err, GP_EPARSE, "%s:%zu: expected a mapping of key: value", name,
                                  line);
                goto done;
            }
        } else if (state == 1) {
            if (t == YAML_MAPPING_END_EVENT) {
                state = 3;
            } else if (t == YAML_SCALAR_EVENT) {
                snprintf(key, sizeof key, "%s", (const char *)ev.data.scalar.value);
                key_line = line;
                state = 2;
            } else {
                st = gp_error_set(err, GP_EPARSE, "%s:%zu: expected a key, found %s", name, line,
                                  event_name(t));
                goto done;
            }
        } else if (state == 2) {
            if (t != YAML_SCALAR_EVENT) {
                st = gp_error_set(err, GP_EPARSE,
                                  "%s:%zu: key '%s': expected a single value, found %s", name, line,
                                  key, event_name(t));
                goto done;
            }
            gp_error e;
            if (gp_monitor_config_set(&tmp, key, (const char *)ev.data.scalar.value, &e) != GP_OK) {
                st = gp_error_set(err, GP_EINVAL, "%s:%zu: %s", name, key_line, e.msg);
                goto done;
            }
            state = 1;
        } else {
            st = gp_error_set(err, GP_EPARSE, "%s:%zu: only one document is allowed", name, line);
            goto done;
        }
        yaml_event_delete(&ev);
        have_event = false;
    }
done:
    if (have_event)
        yaml_event_delete(&ev);
    yaml_parser_delete(&p);
    if (st == GP_OK)
        *cfg = tmp;
    return st;
}

gp_status gp_monitor_config_load(gp_monitor_config *cfg, const char *path, gp_error *err)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return gp_error_set(err, GP_EIO, "%s: %s", path, strerror(errno));
    gp__buf b = {0};
    b.max = 1 << 20;
    char chunk[4096];
    size_t n;
    gp_status st = GP_OK;
    while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0)
        if ((st = gp__buf_append(&b, chunk, n)) != GP_OK)
            break;
    if (ferror(fp) && st == GP_OK)
        st = GP_EIO;
    fclose(fp);
    if (st != GP_OK) {
        gp__buf_free(&b);
        return gp_error_set(err, st, "%s: cannot read the configuration (%s)", path,
                            gp_strerror(st));
    }
    st = gp_monitor_config_parse(cfg, b.data ? b.data : "", b.len, path, err);
    gp__buf_free(&b);
    return st;
}

bool gp_monitor_config_wants(const gp_monitor_config *cfg, gp_metric m)
{
    gp_monitor_level need;
    switch (m) {
    case GP_M_UTIL_GPU:
    case GP_M_UTIL_MEM:
    case GP_M_MEM_USED:
    case GP_M_MEM_TOTAL:
    case GP_M_TEMP:
    case GP_M_POWER:
        need = GP_LEVEL_LIGHTWEIGHT;
        break;
    case GP_M_MEM_FREE:
    case GP_M_MEM_RESERVED:
    case GP_M_POWER_LIMIT:
    case GP_M_ENERGY:
    case GP_M_CLOCK_GRAPHICS:
    case GP_M_CLOCK_SM:
    case GP_M_CLOCK_MEM:
    case GP_M_FAN:
    case GP_M_THROTTLE:
        need = GP_LEVEL_STANDARD;
        break;
    case GP_M_PROCESSES:
        if (!cfg->enable_process_monitoring)
            return false;
        need = GP_LEVEL_STANDARD;
        break;
    case GP_M_CLOCK_MAX_GRAPHICS:
    case GP_M_CLOCK_MAX_SM:
    case GP_M_CLOCK_MAX_MEM:
    case GP_M_TEMP_SLOWDOWN:
    case GP_M_TEMP_SHUTDOWN:
    case GP_M_ECC_CORRECTED:
    case GP_M_ECC_UNCORRECTED:
    case GP_M_MIG_MODE:
        need = GP_LEVEL_DETAILED;
        break;
    case GP_M_PCIE_TX:
    case GP_M_PCIE_RX:
        if (cfg->enable_pcie)
            return true;
        need = GP_LEVEL_COMPREHENSIVE;
        break;
    default:
        return false;
    }
    return cfg->level >= need;
}
