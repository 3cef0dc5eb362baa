/* Prometheus text exposition (format 0.0.4) of a monitor's latest samples. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/units.h"
#include "core/util.h"
#include "gpuprof/serve.h"

#define MAX_PROCS 256
#define MAX_XIDS 32

typedef struct snap {
    gp_gpu_ident id;
    bool has;
    gp_gpu_sample s;
    char labels[2048]; /* fits every label escaped: 2 x (96 + 96 + 32 + 255) + names */
    gp_gpu_process procs[MAX_PROCS];
    size_t np;
    uint32_t xc[MAX_XIDS];
    uint64_t xn[MAX_XIDS];
    size_t nx;
    gp_leak_result leak;
} snap;

typedef struct out {
    gp__buf b;
    gp_status st;
} out;

static void put(out *o, const char *fmt, ...) GP_PRINTF(2, 3);
static void put(out *o, const char *fmt, ...)
{
    if (o->st != GP_OK)
        return;
    char small[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        o->st = GP_EINVAL;
        return;
    }
    if ((size_t)n < sizeof small) {
        o->st = gp__buf_append(&o->b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        o->st = GP_ENOMEM;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    o->st = gp__buf_append(&o->b, big, (size_t)n);
    free(big);
}

/* Appends s escaped as a label value (backslash, double quote, newline). */
static void escape_label(char *dst, size_t cap, size_t *pos, const char *s)
{
    for (; *s && *pos + 3 < cap; s++) {
        if (*s == '\\' || *s == '"') {
            dst[(*pos)++] = '\\';
            dst[(*pos)++] = *s;
        } else if (*s == '\n') {
            dst[(*pos)++] = '\\';
            dst[(*pos)++] = 'n';
        } else {
            dst[(*pos)++] = *s;
        }
    }
    dst[*pos] = 0;
}

/* Appends s as is (clamped to the buffer). */
static void add_raw(char *dst, size_t cap, size_t *pos, const char *s)
{
    size_t n = strlen(s);
    if (*pos + n >= cap)
        n = cap - 1 - *pos;
    memcpy(dst + *pos, s, n);
    *pos += n;
    dst[*pos] = 0;
}

static void build_labels(snap *g, const char *host)
{
    size_t pos = 0;
    char *d = g->labels;
    size_t cap = sizeof g->labels;
    char idx[32];
    snprintf(idx, sizeof idx, "gpu=\"%u\",uuid=\"", g->id.index);
    d[0] = 0;
    add_raw(d, cap, &pos, idx);
    escape_label(d, cap, &pos, g->id.uuid);
    add_raw(d, cap, &pos, "\",name=\"");
    escape_label(d, cap, &pos, g->id.name);
    add_raw(d, cap, &pos, "\",pci_bus_id=\"");
    escape_label(d, cap, &pos, g->id.pci_bus_id);
    add_raw(d, cap, &pos, "\",hostname=\"");
    escape_label(d, cap, &pos, host);
    add_raw(d, cap, &pos, "\"");
}

/* A sample value: integers exactly, others with 10 significant digits. */
static void value(char *buf, size_t cap, double v)
{
    if (v == floor(v) && fabs(v) < 9e15)
        snprintf(buf, cap, "%.0f", v);
    else
        snprintf(buf, cap, "%.10g", v);
}

static void family(out *o, const char *name, const char *type, const char *help)
{
    put(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void line(out *o, const char *name, const char *labels, const char *extra, double v)
{
    char vb[64];
    value(vb, sizeof vb, v);
    if (extra)
        put(o, "%s{%s,%s} %s\n", name, labels, extra, vb);
    else
        put(o, "%s{%s} %s\n", name, labels, vb);
}

typedef struct simple_metric {
    gp_metric m;
    const char *name, *type, *help;
    double scale;
} simple_metric;

static const simple_metric simple[] = {
    {GP_M_UTIL_GPU, "gpuprof_gpu_utilization_ratio", "gauge",
     "Fraction of the last sample period during which a kernel ran (NVML utilization.gpu).", 0.01},
    {GP_M_UTIL_MEM, "gpuprof_gpu_memory_utilization_ratio", "gauge",
     "Fraction of the last sample period during which device memory was read or written.", 0.01},
    {GP_M_MEM_USED, "gpuprof_gpu_memory_used_bytes", "gauge",
     "Device memory used (NVML memory info v2: excludes driver-reserved memory).", 1},
    {GP_M_MEM_FREE, "gpuprof_gpu_memory_free_bytes", "gauge", "Device memory free.", 1},
    {GP_M_MEM_TOTAL, "gpuprof_gpu_memory_total_bytes", "gauge", "Device memory installed.", 1},
    {GP_M_MEM_RESERVED, "gpuprof_gpu_memory_reserved_bytes", "gauge",
     "Device memory reserved by the driver.", 1},
    {GP_M_TEMP, "gpuprof_gpu_temperature_celsius", "gauge", "GPU core temperature.", 1},
    {GP_M_TEMP_SLOWDOWN, "gpuprof_gpu_temperature_slowdown_celsius", "gauge",
     "Temperature at which the GPU slows down.", 1},
    {GP_M_TEMP_SHUTDOWN, "gpuprof_gpu_temperature_shutdown_celsius", "gauge",
     "Temperature at which the GPU shuts down.", 1},
    {GP_M_POWER, "gpuprof_gpu_power_watts", "gauge", "Power draw.", 1},
    {GP_M_POWER_LIMIT, "gpuprof_gpu_power_limit_watts", "gauge", "Enforced power limit.", 1},
    {GP_M_ENERGY, "gpuprof_gpu_energy_joules_total", "counter",
     "Energy consumed since the driver was loaded.", 1},
    {GP_M_FAN, "gpuprof_gpu_fan_speed_ratio", "gauge", "Fan speed as a fraction of its maximum.",
     0.01},
    {GP_M_PCIE_TX, "gpuprof_gpu_pcie_transmit_bytes_per_second", "gauge",
     "PCIe transmit throughput over NVML's 20 ms window.", 1},
    {GP_M_PCIE_RX, "gpuprof_gpu_pcie_receive_bytes_per_second", "gauge",
     "PCIe receive throughput over NVML's 20 ms window.", 1},
    {GP_M_THROTTLE, "gpuprof_gpu_clock_event_reasons", "gauge",
     "Bitmask of NVML clock-event (throttle) reasons.", 1},
    {GP_M_MIG_MODE, "gpuprof_gpu_mig_enabled", "gauge", "1 when MIG mode is enabled.", 1},
    {GP_M_PROCESSES, "gpuprof_gpu_processes", "gauge", "Processes running on the GPU.", 1},
};

static const struct {
    unsigned bit;
    const char *name;
} reasons[] = {{GP_THROTTLE_IDLE, "idle"},
               {GP_THROTTLE_APP_CLOCKS, "applications_clocks"},
               {GP_THROTTLE_SW_POWER_CAP, "sw_power_cap"},
               {GP_THROTTLE_HW_SLOWDOWN, "hw_slowdown"},
               {GP_THROTTLE_SYNC_BOOST, "sync_boost"},
               {GP_THROTTLE_SW_THERMAL, "sw_thermal"},
               {GP_THROTTLE_HW_THERMAL, "hw_thermal"},
               {GP_THROTTLE_POWER_BRAKE, "power_brake"}};

static bool any_has(const snap *g, size_t n, gp_metric m)
{
    for (size_t i = 0; i < n; i++)
        if (g[i].has && gp_sample_has(&g[i].s, m))
            return true;
    return false;
}

/* Reads every device's latest sample, processes, XID counts and leak verdict into g. */
static void take_snapshots(gp_monitor *mon, snap *g, size_t n, const char *host)
{
    for (size_t i = 0; i < n; i++) {
        if (gp_monitor_device(mon, i, &g[i].id) != GP_OK)
            continue;
        g[i].has = gp_monitor_latest(mon, i, &g[i].s) == GP_OK && !g[i].id.lost;
        if (gp_monitor_processes(mon, i, g[i].procs, MAX_PROCS, &g[i].np) != GP_OK)
            g[i].np = 0;
        g[i].nx =
            GP_MIN(gp_monitor_xid_counts(mon, i, g[i].xc, g[i].xn, MAX_XIDS), (size_t)MAX_XIDS);
        if (gp_monitor_leak(mon, i, &g[i].leak) != GP_OK)
            g[i].leak.ready = false;
        build_labels(&g[i], host);
    }
}

/* gpuprof_gpu_info and gpuprof_gpu_up. */
static void write_identity(out *o, gp_monitor *mon, const snap *g, size_t n)
{
    family(o, "gpuprof_gpu_info", "gauge", "GPU identity; the value is always 1.");
    for (size_t i = 0; i < n; i++) {
        char extra[160];
        size_t pos = 0;
        pos += (size_t)snprintf(extra, sizeof extra, "driver_version=\"");
        escape_label(extra, sizeof extra, &pos, gp_monitor_driver_version(mon));
        if (pos + 2 < sizeof extra) {
            extra[pos++] = '"';
            extra[pos] = 0;
        }
        line(o, "gpuprof_gpu_info", g[i].labels, extra, 1);
    }
    family(o, "gpuprof_gpu_up", "gauge",
           "1 while the GPU answers NVML, 0 once it is lost (GPU_IS_LOST).");
    for (size_t i = 0; i < n; i++)
        line(o, "gpuprof_gpu_up", g[i].labels, NULL, g[i].id.lost ? 0 : 1);
}

/* The one-value gauges of the table above, then the clocks by domain. */
static void write_gauges(out *o, const snap *g, size_t n)
{
    for (size_t k = 0; k < GP_ARRAY_LEN(simple); k++) {
        if (!any_has(g, n, simple[k].m))
            continue;
        family(o, simple[k].name, simple[k].type, simple[k].help);
        for (size_t i = 0; i < n; i++)
            if (g[i].has && gp_sample_has(&g[i].s, simple[k].m))
                line(o, simple[k].name, g[i].labels, NULL, g[i].s.v[simple[k].m] * simple[k].scale);
    }
    static const struct {
        gp_metric m;
        const char *clock;
        bool max;
    } clocks[] = {
        {GP_M_CLOCK_GRAPHICS, "graphics", false}, {GP_M_CLOCK_SM, "sm", false},
        {GP_M_CLOCK_MEM, "memory", false},        {GP_M_CLOCK_MAX_GRAPHICS, "graphics", true},
        {GP_M_CLOCK_MAX_SM, "sm", true},          {GP_M_CLOCK_MAX_MEM, "memory", true}};
    for (int pass = 0; pass < 2; pass++) {
        const char *name = pass ? "gpuprof_gpu_clock_max_hertz" : "gpuprof_gpu_clock_hertz";
        bool any = false;
        for (size_t c = 0; c < GP_ARRAY_LEN(clocks); c++)
            any |= clocks[c].max == (pass == 1) && any_has(g, n, clocks[c].m);
        if (!any)
            continue;
        family(o, name, "gauge",
               pass ? "Maximum clock frequency by clock domain." : "Clock frequency by domain.");
        for (size_t i = 0; i < n; i++)
            for (size_t c = 0; c < GP_ARRAY_LEN(clocks); c++)
                if (clocks[c].max == (pass == 1) && g[i].has &&
                    gp_sample_has(&g[i].s, clocks[c].m)) {
                    char extra[32];
                    snprintf(extra, sizeof extra, "clock=\"%s\"", clocks[c].clock);
                    line(o, name, g[i].labels, extra, g[i].s.v[clocks[c].m]);
                }
    }
}

/* Clock-event (throttle) reasons, ECC and XID error counters. */
static void write_events(out *o, const snap *g, size_t n)
{
    if (any_has(g, n, GP_M_THROTTLE)) {
        family(o, "gpuprof_gpu_clock_event_active", "gauge",
               "1 when the clock-event (throttle) reason is active.");
        for (size_t i = 0; i < n; i++)
            if (g[i].has && gp_sample_has(&g[i].s, GP_M_THROTTLE)) {
                uint64_t bits = (uint64_t)g[i].s.v[GP_M_THROTTLE];
                for (size_t r = 0; r < GP_ARRAY_LEN(reasons); r++) {
                    char extra[48];
                    snprintf(extra, sizeof extra, "reason=\"%s\"", reasons[r].name);
                    line(o, "gpuprof_gpu_clock_event_active", g[i].labels, extra,
                         (bits & reasons[r].bit) ? 1 : 0);
                }
            }
    }
    if (any_has(g, n, GP_M_ECC_CORRECTED) || any_has(g, n, GP_M_ECC_UNCORRECTED)) {
        family(o, "gpuprof_gpu_ecc_errors_total", "counter",
               "ECC errors since the driver was loaded (volatile counters).");
        for (size_t i = 0; i < n; i++) {
            if (g[i].has && gp_sample_has(&g[i].s, GP_M_ECC_CORRECTED))
                line(o, "gpuprof_gpu_ecc_errors_total", g[i].labels, "type=\"corrected\"",
                     g[i].s.v[GP_M_ECC_CORRECTED]);
            if (g[i].has && gp_sample_has(&g[i].s, GP_M_ECC_UNCORRECTED))
                line(o, "gpuprof_gpu_ecc_errors_total", g[i].labels, "type=\"uncorrected\"",
                     g[i].s.v[GP_M_ECC_UNCORRECTED]);
        }
    }
    family(o, "gpuprof_gpu_xid_errors_total", "counter",
           "XID error events seen since the monitor started, per XID code.");
    for (size_t i = 0; i < n; i++)
        for (size_t x = 0; x < g[i].nx; x++) {
            char extra[32];
            snprintf(extra, sizeof extra, "xid=\"%u\"", g[i].xc[x]);
            line(o, "gpuprof_gpu_xid_errors_total", g[i].labels, extra, (double)g[i].xn[x]);
        }
}

static double proc_mem_bytes(const gp_gpu_process *p)
{
    return (double)p->mem_bytes;
}

static double proc_sm_util(const gp_gpu_process *p)
{
    return p->sm_util;
}

/* One per-process family: a series per process (label pid) whose of(p) is known (>= 0; NVML
 * says -1 when it does not know); the family is left out when no process has one. */
static void process_family(out *o, const snap *g, size_t n, const char *name, const char *help,
                           double (*of)(const gp_gpu_process *))
{
    bool any = false;
    for (size_t i = 0; i < n; i++)
        for (size_t p = 0; p < g[i].np; p++)
            any |= of(&g[i].procs[p]) >= 0;
    if (!any)
        return;
    family(o, name, "gauge", help);
    for (size_t i = 0; i < n; i++)
        for (size_t p = 0; p < g[i].np; p++)
            if (of(&g[i].procs[p]) >= 0) {
                char extra[32];
                snprintf(extra, sizeof extra, "pid=\"%u\"", g[i].procs[p].pid);
                line(o, name, g[i].labels, extra, of(&g[i].procs[p]));
            }
}

/* Per-process memory and SM utilization, the leak detector's trend and verdict. */
static void write_processes_and_leaks(out *o, const snap *g, size_t n)
{
    process_family(o, g, n, "gpuprof_gpu_process_memory_bytes",
                   "Device memory used by a process (host pid).", proc_mem_bytes);
    process_family(
        o, g, n, "gpuprof_gpu_process_sm_utilization_percent",
        "SM utilization of a process (host pid), where NVML reports it (level detailed).",
        proc_sm_util);
    bool any_leak = false;
    for (size_t i = 0; i < n; i++)
        any_leak |= g[i].leak.ready;
    if (any_leak) {
        family(o, "gpuprof_gpu_memory_growth_bytes_per_second", "gauge",
               "Robust trend of used device memory over the leak detector's window.");
        for (size_t i = 0; i < n; i++)
            if (g[i].leak.ready)
                line(o, "gpuprof_gpu_memory_growth_bytes_per_second", g[i].labels, NULL,
                     g[i].leak.slope_mb_per_h * GP_MIB / 3600);
        family(o, "gpuprof_gpu_memory_leak_detected", "gauge",
               "1 when the leak detector's verdict is positive.");
        for (size_t i = 0; i < n; i++)
            if (g[i].leak.ready)
                line(o, "gpuprof_gpu_memory_leak_detected", g[i].labels, NULL,
                     g[i].leak.leak ? 1 : 0);
    }
}

/* The monitor's suggestions now: one series per suggestion, value 1, with the seed's fields as
 * labels (type, severity, message, suggestion; the message is fixed text per type, so series do
 * not churn). The evidence figures are left out for the same reason. */
static void write_suggestions(out *o, gp_monitor *mon, const snap *g, size_t n, const char *hl)
{
    gp_suggestion sg[64];
    size_t ns = 0;
    if (gp_monitor_suggestions(mon, sg, GP_ARRAY_LEN(sg), &ns) != GP_OK)
        ns = 0;
    family(o, "gpuprof_gpu_suggestion", "gauge",
           "An optimization suggestion that holds now (value 1); type, severity, message and "
           "suggestion as labels.");
    for (size_t i = 0; i < ns; i++) {
        char extra[1400];
        size_t pos = 0;
        static const char *const keys[] = {"type=\"", "\",severity=\"", "\",message=\"",
                                           "\",suggestion=\""};
        const char *vals[] = {sg[i].type, gp_severity_name(sg[i].severity), sg[i].message,
                              sg[i].suggestion};
        extra[0] = 0;
        for (size_t k = 0; k < GP_ARRAY_LEN(keys); k++) {
            add_raw(extra, sizeof extra, &pos, keys[k]);
            escape_label(extra, sizeof extra, &pos, vals[k]);
        }
        add_raw(extra, sizeof extra, &pos, "\"");
        bool per_gpu = sg[i].device >= 0 && (size_t)sg[i].device < n;
        line(o, "gpuprof_gpu_suggestion", per_gpu ? g[sg[i].device].labels : hl, extra, 1);
    }
}

/* The monitor's own counters, labelled by host. */
static void write_monitor_totals(out *o, gp_monitor *mon, const char *hl)
{
    family(o, "gpuprof_monitor_samples_total", "counter", "Sampling rounds taken.");
    line(o, "gpuprof_monitor_samples_total", hl, NULL, (double)gp_monitor_samples_total(mon));
    family(o, "gpuprof_monitor_alerts_total", "counter", "Threshold alerts fired, per kind.");
    static const char *const kinds[] = {"utilization", "utilization_low", "memory", "temperature",
                                        "power"};
    for (size_t k = 0; k < GP_ARRAY_LEN(kinds); k++) {
        char extra[48];
        snprintf(extra, sizeof extra, "kind=\"%s\"", kinds[k]);
        line(o, "gpuprof_monitor_alerts_total", hl, extra,
             (double)gp_monitor_alerts_total(mon, kinds[k]));
    }
}

gp_status gp_prometheus_render(gp_monitor *mon, const char *hostname, char **out_text,
                               size_t *out_len)
{
    char host[256] = "";
    if (hostname)
        snprintf(host, sizeof host, "%s", hostname);
    else if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "unknown");
    char hl[600]; /* hostname="<host, escaped>" */
    size_t pos = 0;
    add_raw(hl, sizeof hl, &pos, "hostname=\"");
    escape_label(hl, sizeof hl, &pos, host);
    add_raw(hl, sizeof hl, &pos, "\"");
    out o = {.b = {.max = 64u << 20}, .st = GP_OK};
    if (!mon) { /* no driver: one series says so, so that alerting on gpuprof_gpu_up == 0 fires */
        family(&o, "gpuprof_gpu_up", "gauge",
               "1 while the GPU answers NVML, 0 once it is lost (GPU_IS_LOST) or when no NVIDIA "
               "driver could be loaded (then one series with the hostname label only).");
        line(&o, "gpuprof_gpu_up", hl, NULL, 0);
    } else {
        size_t n = gp_monitor_device_count(mon);
        snap *g = calloc(n ? n : 1, sizeof *g);
        if (!g)
            return GP_ENOMEM;
        take_snapshots(mon, g, n, host);
        write_identity(&o, mon, g, n);
        write_gauges(&o, g, n);
        write_events(&o, g, n);
        write_processes_and_leaks(&o, g, n);
        write_suggestions(&o, mon, g, n, hl);
        write_monitor_totals(&o, mon, hl);
        free(g);
    }
    if (o.st == GP_OK)
        o.st = gp__buf_terminate(&o.b);
    if (o.st != GP_OK) {
        gp__buf_free(&o.b);
        return o.st;
    }
    *out_text = o.b.data;
    *out_len = o.b.len;
    return GP_OK;
}
