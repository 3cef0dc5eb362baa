/* Monitor configuration: defaults, one key at a time (CLI flags), and YAML files (libyaml's
 * document loader): flat or inside a `gpu_profiler:` block, each key once, decimal numbers,
 * lenient booleans and keys without effect reported as warnings. See docs/monitor.md. */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
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
    c->max_samples = 10000;
    c->retention_hours = 24;
    c->utilization_threshold = 85;
    c->utilization_low_threshold = 10;
    c->memory_threshold = 90;
    c->temperature_threshold = 80;
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
    c->enable_memory_tracking = true;
    c->enable_power_monitoring = true;
    c->enable_temperature_monitoring = true;
    c->enable_multi_gpu = true;
    c->integrate_with_component_profiling = true;
    c->enable_optimization_suggestions = true;
    c->enable_real_time_monitoring = true;
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
    double lo, hi;         /* accepted range for numbers */
    int moot;              /* bools: the value (0 or 1) that asks for what gpuprof does not do */
    const char *no_effect; /* why that value has no effect, or NULL */
} key_def;

#define KD(name, type, lo, hi)                                                                     \
    {                                                                                              \
#name, type, offsetof(gp_monitor_config, name), lo, hi, -1, NULL                           \
    }
#define KB(name) KD(name, K_BOOL, 0, 0)
#define KMOOT(name, value, why)                                                                    \
    {                                                                                              \
#name, K_BOOL, offsetof(gp_monitor_config, name), 0, 0, value, why                         \
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
    KD(utilization_low_threshold, K_DOUBLE, 0, 100),
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
    KB(enable_alerts),
    KB(enable_leak_detection),
    KB(enable_bottleneck_detection),
    KB(enable_process_monitoring),
    KB(enable_xid_events),
    KB(enable_pcie),
    KB(enable_memory_tracking),
    KB(enable_power_monitoring),
    KB(enable_temperature_monitoring),
    KB(enable_multi_gpu),
    KB(integrate_with_component_profiling),
    KB(enable_optimization_suggestions),
    KMOOT(enable_real_time_monitoring, 0,
          "the monitor always samples continuously (in C, call gp_monitor_sample_now without "
          "gp_monitor_start for samples on demand)"),
    KMOOT(enable_kernel_profiling, 1,
          "the monitor reads NVML counters; kernels are profiled by `gpuprof trace` (CUPTI) or "
          "the in-process profiler's CUDA timers"),
    KMOOT(integrate_with_tracing, 1,
          "samples go into a trace with `gpuprof monitor -o FILE` (profiling mode)"),
    KMOOT(integrate_with_metrics, 1, "`gpuprof exporter` publishes the metrics to Prometheus"),
};

/* Sends "where: fmt..." to warn (where may be ""). */
static void warnf(gp_config_warn_fn warn, void *ctx, const char *where, const char *fmt, ...)
    GP_PRINTF(4, 5);
static void warnf(gp_config_warn_fn warn, void *ctx, const char *where, const char *fmt, ...)
{
    if (!warn)
        return;
    char msg[512];
    int n = snprintf(msg, sizeof msg, "%s%s", where, where[0] ? ": " : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);
    warn(msg, ctx);
}

/* A boolean: true/false in any case; yes/no, on/off, y/n, 1/0 (YAML 1.1 booleans, text or numbers
 * in YAML 1.2) with a warning. -1 when the text is none of these. */
static int parse_bool(const char *key, const char *value, gp_config_warn_fn warn, void *ctx,
                      const char *where)
{
    static const gp__named words[] = {{"true", 1}, {"false", 0}, {"yes", 1}, {"no", 0}, {"on", 1},
                                      {"off", 0},  {"y", 1},     {"n", 0},   {"1", 1},  {"0", 0}};
    int i = GP_VALUE_OF_NOCASE(words, value, -1);
    if (i >= 0 && strcasecmp(value, "true") != 0 && strcasecmp(value, "false") != 0)
        warnf(warn, ctx, where, "%s: '%s' read as %s (YAML 1.2 reads it as text): write %s", key,
              value, i ? "true" : "false", i ? "true" : "false");
    return i;
}

/* A decimal number; hexadecimal, octal and binary prefixes are refused (GP_EINVAL), a leading
 * zero is read as decimal with a warning (YAML 1.1 would read 010 as octal 8). */
static gp_status parse_number(const key_def *k, const char *value, double *out,
                              gp_config_warn_fn warn, void *ctx, const char *where, gp_error *err)
{
    const char *digits = value + (value[0] == '+' || value[0] == '-');
    if (digits[0] == '0' && digits[1] && strchr("xXoObB", digits[1]))
        return gp_error_set(err, GP_EINVAL,
                            "%s: '%s' is not a decimal number (hexadecimal, octal and binary "
                            "are not accepted)",
                            k->name, value);
    if (!gp__parse_real(value, -DBL_MAX, DBL_MAX, out))
        return gp_error_set(err, GP_EINVAL, "%s: '%s' is not a number", k->name, value);
    if (digits[0] == '0' && isdigit((unsigned char)digits[1]))
        warnf(warn, ctx, where,
              "%s: '%s' read as the decimal %g (YAML 1.1 reads a leading 0 as "
              "octal)",
              k->name, value, *out);
    if (k->type == K_U32 && *out != floor(*out))
        return gp_error_set(err, GP_EINVAL, "%s: '%s' is not a whole number", k->name, value);
    if (*out < k->lo || *out > k->hi)
        return gp_error_set(err, GP_EINVAL, "%s: %s is out of range [%g, %g]", k->name, value,
                            k->lo, k->hi);
    return GP_OK;
}

/* Sets key from text; where ("file:line" or "") prefixes warnings. */
static gp_status set_key(gp_monitor_config *cfg, const char *key, const char *value,
                         gp_config_warn_fn warn, void *ctx, const char *where, gp_error *err)
{
    const key_def *k = NULL;
    for (size_t i = 0; i < GP_ARRAY_LEN(keys) && !k; i++)
        if (strcmp(keys[i].name, key) == 0)
            k = &keys[i];
    if (!k)
        return gp_error_set(err, GP_EINVAL, "unknown key '%s'", key);
    char *field = (char *)cfg + k->off;
    int i;
    double v;
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
        if ((i = parse_bool(key, value, warn, ctx, where)) < 0)
            return gp_error_set(err, GP_EINVAL, "%s: '%s' is not a boolean (true or false)", key,
                                value);
        *(bool *)field = i == 1;
        if (k->no_effect && i == k->moot)
            warnf(warn, ctx, where, "%s: %s has no effect in gpuprof: %s", key,
                  i ? "true" : "false", k->no_effect);
        return GP_OK;
    case K_U32:
    case K_DOUBLE: {
        gp_status st = parse_number(k, value, &v, warn, ctx, where, err);
        if (st != GP_OK)
            return st;
        if (k->type == K_U32)
            *(uint32_t *)field = (uint32_t)v;
        else
            *(double *)field = v;
        return GP_OK;
    }
    }
    return GP_EINVAL;
}

gp_status gp_monitor_config_set(gp_monitor_config *cfg, const char *key, const char *value,
                                const gp_config_opts *opts, gp_error *err)
{
    return set_key(cfg, key, value, opts ? opts->warn : NULL, opts ? opts->warn_ctx : NULL, "",
                   err);
}

static const char *node_kind(const yaml_node_t *n)
{
    static const char *const names[] = {[YAML_SEQUENCE_NODE] = "a list",
                                        [YAML_MAPPING_NODE] = "a mapping",
                                        [YAML_SCALAR_NODE] = "a value"};
    return GP_NAME_OF(names, n->type, "an unexpected element");
}

static size_t line_of(const yaml_node_t *n)
{
    return n->start_mark.line + 1;
}

typedef struct parse_ctx {
    yaml_document_t *doc;
    const char *name;
    gp_config_warn_fn warn;
    void *wctx;
    gp_error *err;
} parse_ctx;

/* The pairs of mapping node map onto cfg: scalar keys, each once, with scalar values. */
static gp_status apply_mapping(parse_ctx *pc, const yaml_node_t *map, gp_monitor_config *cfg)
{
    yaml_node_pair_t *start = map->data.mapping.pairs.start, *top = map->data.mapping.pairs.top;
    for (yaml_node_pair_t *p = start; p < top; p++) {
        const yaml_node_t *k = yaml_document_get_node(pc->doc, p->key);
        const yaml_node_t *v = yaml_document_get_node(pc->doc, p->value);
        if (!k || !v)
            return gp_error_set(pc->err, GP_EPARSE, "%s: malformed mapping", pc->name);
        if (k->type != YAML_SCALAR_NODE)
            return gp_error_set(pc->err, GP_EPARSE, "%s:%zu: expected a key, found %s", pc->name,
                                line_of(k), node_kind(k));
        const char *key = (const char *)k->data.scalar.value;
        for (yaml_node_pair_t *q = start; q < p; q++) {
            const yaml_node_t *qk = yaml_document_get_node(pc->doc, q->key);
            if (qk && qk->type == YAML_SCALAR_NODE &&
                strcmp((const char *)qk->data.scalar.value, key) == 0)
                return gp_error_set(pc->err, GP_EPARSE,
                                    "%s:%zu: key '%s' repeats the one on line %zu (each key may "
                                    "appear once)",
                                    pc->name, line_of(k), key, line_of(qk));
        }
        if (v->type != YAML_SCALAR_NODE)
            return gp_error_set(pc->err, GP_EPARSE,
                                "%s:%zu: key '%s': expected a single value, found %s", pc->name,
                                line_of(v), key, node_kind(v));
        char where[300];
        snprintf(where, sizeof where, "%s:%zu", pc->name, line_of(k));
        gp_error e = {0};
        if (set_key(cfg, key, (const char *)v->data.scalar.value, pc->warn, pc->wctx, where, &e) !=
            GP_OK)
            return gp_error_set(pc->err, GP_EINVAL, "%s: %s", where, e.msg);
    }
    return GP_OK;
}

/* The root mapping: the `gpu_profiler:` block when there is one (other sections ignored, with a
 * warning each), else the root itself. */
static gp_status apply_root(parse_ctx *pc, const yaml_node_t *root, gp_monitor_config *cfg)
{
    const yaml_node_t *block = NULL;
    yaml_node_pair_t *start = root->data.mapping.pairs.start, *top = root->data.mapping.pairs.top;
    for (yaml_node_pair_t *p = start; p < top && !block; p++) {
        const yaml_node_t *k = yaml_document_get_node(pc->doc, p->key);
        if (k && k->type == YAML_SCALAR_NODE &&
            strcmp((const char *)k->data.scalar.value, "gpu_profiler") == 0)
            block = yaml_document_get_node(pc->doc, p->value);
    }
    if (!block)
        return apply_mapping(pc, root, cfg);
    if (block->type == YAML_SCALAR_NODE && block->data.scalar.length == 0)
        return GP_OK; /* an empty block */
    if (block->type != YAML_MAPPING_NODE)
        return gp_error_set(pc->err, GP_EPARSE,
                            "%s:%zu: gpu_profiler: expected a mapping of key: value, found %s",
                            pc->name, line_of(block), node_kind(block));
    for (yaml_node_pair_t *p = start; p < top; p++) {
        const yaml_node_t *k = yaml_document_get_node(pc->doc, p->key);
        if (k && k->type == YAML_SCALAR_NODE &&
            strcmp((const char *)k->data.scalar.value, "gpu_profiler") != 0)
            warnf(pc->warn, pc->wctx, "",
                  "%s:%zu: section '%s' ignored (only gpu_profiler is read)", pc->name, line_of(k),
                  (const char *)k->data.scalar.value);
    }
    return apply_mapping(pc, block, cfg);
}

/* The deepest nesting a configuration may have: flow collections ([ {) open at once, and block
 * nesting (the columns of indentation and "- " / "? " indicators starting a line). libyaml's
 * cost grows with the square of the nesting (issue 38: 400 KB of "[" took 93 s), so the depth
 * is bounded before it reads the text. */
enum { MAX_FLOW_DEPTH = 64, MAX_BLOCK_COLUMNS = 256 };

/* GP_OK, or GP_EPARSE with err naming the line where the text nests deeper than the bounds.
 * Brackets inside quoted scalars and comments do not count; a quote opens a scalar only where one
 * may start (after nothing, ':', '-', '?', ',', '[' or '{' on its line), as in YAML. */
static gp_status check_depth(const char *text, size_t len, const char *name, gp_error *err)
{
    size_t line = 1, depth = 0, column = 0;
    char quote = 0, prev = 0; /* prev: the last character that is not a space on this line */
    bool line_start = true, comment = false;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == '\n') {
            line++;
            line_start = true;
            comment = false;
            column = 0;
            prev = 0;
            continue;
        }
        if (line_start && !quote) {
            if (c == ' ' || ((c == '-' || c == '?') && (i + 1 == len || text[i + 1] == ' '))) {
                if (++column > MAX_BLOCK_COLUMNS)
                    return gp_error_set(err, GP_EPARSE,
                                        "%s:%zu: nested deeper than %d columns of indentation",
                                        name, line, MAX_BLOCK_COLUMNS);
                continue;
            }
            line_start = false;
        }
        if (comment)
            continue;
        if (quote) {
            if (c == '\\' && quote == '"' && i + 1 < len)
                i++;
            else if (c == quote)
                quote = 0;
            continue;
        }
        if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t'))
            comment = true;
        else if ((c == '"' || c == '\'') && (!prev || strchr(":-?,[{", prev)))
            quote = c;
        else if ((c == '[' || c == '{') && ++depth > MAX_FLOW_DEPTH)
            return gp_error_set(err, GP_EPARSE, "%s:%zu: nested deeper than %d [ or { levels", name,
                                line, MAX_FLOW_DEPTH);
        else if ((c == ']' || c == '}') && depth > 0)
            depth--;
        if (c != ' ' && c != '\t')
            prev = c;
    }
    return GP_OK;
}

gp_status gp_monitor_config_parse(gp_monitor_config *cfg, const char *text, size_t len,
                                  const char *name, const gp_config_opts *opts, gp_error *err)
{
    gp_config_warn_fn warn = opts ? opts->warn : NULL;
    void *ctx = opts ? opts->warn_ctx : NULL;
    yaml_parser_t p;
    yaml_document_t doc;
    gp_monitor_config tmp = *cfg;
    gp_status depth_st = check_depth(text, len, name, err);
    if (depth_st != GP_OK)
        return depth_st;
    if (!yaml_parser_initialize(&p))
        return gp_error_set(err, GP_ENOMEM, "%s: cannot initialise the YAML parser", name);
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    if (!yaml_parser_load(&p, &doc)) {
        gp_status st = gp_error_set(err, p.error == YAML_MEMORY_ERROR ? GP_ENOMEM : GP_EPARSE,
                                    "%s:%zu: YAML error: %s", name, p.problem_mark.line + 1,
                                    p.problem ? p.problem : "malformed");
        yaml_parser_delete(&p);
        return st;
    }
    gp_status st = GP_OK;
    const yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root && !(root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0)) {
        parse_ctx pc = {&doc, name, warn, ctx, err};
        if (root->type != YAML_MAPPING_NODE)
            st = gp_error_set(err, GP_EPARSE, "%s:%zu: expected a mapping of key: value", name,
                              line_of(root));
        else
            st = apply_root(&pc, root, &tmp);
    }
    yaml_document_delete(&doc);
    if (st == GP_OK && root) { /* a second document is refused, as before */
        yaml_document_t more;
        if (!yaml_parser_load(&p, &more)) {
            st = gp_error_set(err, GP_EPARSE, "%s:%zu: YAML error: %s", name,
                              p.problem_mark.line + 1, p.problem ? p.problem : "malformed");
        } else {
            const yaml_node_t *r2 = yaml_document_get_root_node(&more);
            if (r2)
                st = gp_error_set(err, GP_EPARSE, "%s:%zu: only one document is allowed", name,
                                  line_of(r2));
            yaml_document_delete(&more);
        }
    }
    yaml_parser_delete(&p);
    if (st == GP_OK)
        *cfg = tmp;
    return st;
}

gp_status gp_monitor_config_load(gp_monitor_config *cfg, const char *path,
                                 const gp_config_opts *opts, gp_error *err)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return gp_error_set(err, gp__status_of_errno(errno), "%s: %s", path, strerror(errno));
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
    st = gp_monitor_config_parse(cfg, b.data ? b.data : "", b.len, path, opts, err);
    gp__buf_free(&b);
    return st;
}

/* True when a feature toggle turns metric m off. */
static bool toggled_off(const gp_monitor_config *cfg, gp_metric m)
{
    switch (m) {
    case GP_M_MEM_USED:
    case GP_M_MEM_FREE:
    case GP_M_MEM_TOTAL:
    case GP_M_MEM_RESERVED:
        return !cfg->enable_memory_tracking;
    case GP_M_POWER:
    case GP_M_POWER_LIMIT:
    case GP_M_ENERGY:
        return !cfg->enable_power_monitoring;
    case GP_M_TEMP:
    case GP_M_TEMP_SLOWDOWN:
    case GP_M_TEMP_SHUTDOWN:
        return !cfg->enable_temperature_monitoring;
    case GP_M_PROCESSES:
        return !cfg->enable_process_monitoring;
    default:
        return false;
    }
}

bool gp_monitor_config_wants(const gp_monitor_config *cfg, gp_metric m)
{
    if (toggled_off(cfg, m))
        return false;
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
