/* gpuprof monitor: live GPU sampling through NVML, retention rings, alerts, memory-leak and
 * bottleneck detectors, suggestions, health and component attribution.
 *
 * NVML (libnvidia-ml.so.1) is loaded with dlopen at gp_monitor_open(); the project builds and runs
 * without it (gp_monitor_open then fails with GP_ENODRIVER). GP_NVML_LIBRARY=/path overrides the
 * library searched (tests point it at the fake driver built from tests/fakes/nvml).
 *
 * Every metric of a sample carries a validity bit: a metric the device does not support, or that
 * failed this time, is absent (never 0). Units inside gpuprof are base units: bytes, celsius,
 * watts, joules, hertz, bytes per second; utilizations and fan speed are percent (0-100).
 *
 * Threading: a gp_monitor may run its own sampler thread (gp_monitor_start) or be driven by the
 * caller (gp_monitor_sample_now, for tests and one-shot use); every query function may be called
 * from any thread at any time (they copy under the monitor's lock). Event callbacks run on one of
 * the monitor's threads (sampler, XID) or on the thread calling gp_monitor_sample_now / start /
 * stop, one at a time and in the order the events happened, with the monitor's lock NOT held: they
 * may query the monitor but must not call gp_monitor_sample_now, gp_monitor_stop or
 * gp_monitor_close. */
#ifndef GPUPROF_MONITOR_H
#define GPUPROF_MONITOR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gpuprof/core.h"
#include "gpuprof/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- metrics ---------------------------------------------------------------------------- */

typedef enum gp_metric {
    GP_M_UTIL_GPU = 0,       /* percent of time a kernel ran (NVML "gpu" utilization) */
    GP_M_UTIL_MEM,           /* percent of time the memory controller was busy */
    GP_M_MEM_USED,           /* bytes (v2: excludes driver-reserved memory) */
    GP_M_MEM_FREE,           /* bytes */
    GP_M_MEM_TOTAL,          /* bytes */
    GP_M_MEM_RESERVED,       /* bytes reserved by the driver (memory info v2 only) */
    GP_M_TEMP,               /* celsius */
    GP_M_TEMP_SLOWDOWN,      /* celsius: slowdown threshold */
    GP_M_TEMP_SHUTDOWN,      /* celsius: shutdown threshold */
    GP_M_POWER,              /* watts */
    GP_M_POWER_LIMIT,        /* watts: enforced limit */
    GP_M_ENERGY,             /* joules since the driver loaded (a counter) */
    GP_M_CLOCK_GRAPHICS,     /* hertz */
    GP_M_CLOCK_SM,           /* hertz */
    GP_M_CLOCK_MEM,          /* hertz */
    GP_M_CLOCK_MAX_GRAPHICS, /* hertz */
    GP_M_CLOCK_MAX_SM,       /* hertz */
    GP_M_CLOCK_MAX_MEM,      /* hertz */
    GP_M_FAN,                /* percent of maximum speed */
    GP_M_PCIE_TX,            /* bytes per second */
    GP_M_PCIE_RX,            /* bytes per second */
    GP_M_THROTTLE,           /* clock-event (throttle) reason bitmask, GP_THROTTLE_* */
    GP_M_ECC_CORRECTED,      /* volatile corrected ECC errors (a counter) */
    GP_M_ECC_UNCORRECTED,    /* volatile uncorrected ECC errors (a counter) */
    GP_M_MIG_MODE,           /* 1 when MIG is enabled, 0 when not */
    GP_M_PROCESSES,          /* number of running processes (compute + graphics + MPS) */
    GP_M_COUNT
} gp_metric;

/* NVML clock-event (throttle) reason bits. */
enum {
    GP_THROTTLE_IDLE = 0x1,
    GP_THROTTLE_APP_CLOCKS = 0x2,
    GP_THROTTLE_SW_POWER_CAP = 0x4,
    GP_THROTTLE_HW_SLOWDOWN = 0x8,
    GP_THROTTLE_SYNC_BOOST = 0x10,
    GP_THROTTLE_SW_THERMAL = 0x20,
    GP_THROTTLE_HW_THERMAL = 0x40,
    GP_THROTTLE_POWER_BRAKE = 0x80,
};

/* Short stable name of a metric ("util_gpu", "mem_used_bytes", ...); "?" when out of range. */
GP_EXTERN const char *gp_metric_name(gp_metric m);
/* Unit of a metric as text ("percent", "bytes", "celsius", ...). */
GP_EXTERN const char *gp_metric_unit(gp_metric m);

/* One sample of one GPU. v[m] is meaningful only when valid has bit (1 << m). */
typedef struct gp_gpu_sample {
    gp_ns ts;       /* CLOCK_MONOTONIC */
    uint64_t valid; /* bit m set: v[m] holds a value */
    double v[GP_M_COUNT];
    int32_t component; /* active component id at this sample (gp_component_*), -1 = none */
} gp_gpu_sample;

static inline bool gp_sample_has(const gp_gpu_sample *s, gp_metric m)
{
    return (s->valid >> m) & 1u;
}

typedef enum gp_process_type {
    GP_PROC_COMPUTE = 1,
    GP_PROC_GRAPHICS = 2,
    GP_PROC_MPS = 4
} gp_process_type;

typedef struct gp_gpu_process {
    uint32_t pid;             /* host pid */
    uint32_t types;           /* GP_PROC_* bits (a process may be in several lists) */
    int64_t mem_bytes;        /* used GPU memory, -1 when NVML does not say (e.g. in containers) */
    int32_t sm_util;          /* percent from per-process utilization, -1 when unknown */
    int32_t mem_util;         /* percent, -1 when unknown */
    uint32_t gpu_instance_id; /* MIG, 0xFFFFFFFF when not applicable */
    uint32_t compute_instance_id; /* MIG, 0xFFFFFFFF when not applicable */
} gp_gpu_process;

/* Static identity of a GPU. */
typedef struct gp_gpu_ident {
    uint32_t index;
    char name[96];
    char uuid[96];
    char pci_bus_id[32];
    bool lost;              /* NVML said GPU_IS_LOST: no longer sampled */
    uint64_t unsupported;   /* bit m: NVML said NOT_SUPPORTED for metric m (never polled again) */
    uint32_t mig_instances; /* MIG devices (0 when MIG is off or unknown) */
} gp_gpu_ident;

/* ---- configuration -------------------------------------------------------------------- */

typedef enum gp_monitor_level {
    GP_LEVEL_LIGHTWEIGHT = 0, /* utilization, memory used/total, temperature, power */
    GP_LEVEL_STANDARD,        /* + free/reserved memory, power limit, energy, clocks, fan,
                                 throttle reasons, processes, XID events */
    GP_LEVEL_DETAILED,        /* + max clocks, temperature thresholds, ECC, per-process
                                 utilization, MIG */
    GP_LEVEL_COMPREHENSIVE    /* + PCIe throughput (each read blocks ~20 ms in NVML) */
} gp_monitor_level;

typedef enum gp_monitor_mode {
    GP_MODE_MONITORING = 0, /* continuous sampling at the interval */
    GP_MODE_PROFILING,      /* also record every sample as counter samples in a gp_trace */
    GP_MODE_ADAPTIVE,       /* sample at adaptive_min_interval_ms while any GPU is busy */
    GP_MODE_DEBUG           /* like monitoring, plus "debug" events for every NVML failure */
} gp_monitor_mode;

GP_EXTERN const char *gp_monitor_level_name(gp_monitor_level l);
GP_EXTERN const char *gp_monitor_mode_name(gp_monitor_mode m);

typedef struct gp_monitor_config {
    gp_monitor_level level;
    gp_monitor_mode mode;
    uint32_t sampling_interval_ms;     /* default 100 */
    uint32_t adaptive_min_interval_ms; /* fast interval of the adaptive mode, default 20 */
    double adaptive_busy_percent;      /* adaptive: "busy" when util_gpu >= this, default 50 */
    uint32_t max_samples;              /* ring size per GPU, default 10000 (1000 s at 100 ms) */
    double retention_hours;            /* samples older than this are dropped, default 24 */
    /* alert thresholds (0 disables one) */
    double utilization_threshold; /* percent, default 85 */
    double memory_threshold;      /* percent of total memory, default 90 */
    double temperature_threshold; /* celsius, default 80 */
    double power_threshold;       /* percent of the enforced power limit, default 95 */
    double alert_hysteresis; /* an alert clears below threshold - this (same unit), default 5 */
    uint32_t
        alert_min_duration_ms; /* condition must hold this long before it fires, default 5000 */
    /* leak detector */
    double leak_window_minutes;        /* rolling window, default 30 */
    double leak_warmup_minutes;        /* ignored start, default 2 */
    double leak_min_slope_mb_per_hour; /* MiB per hour, default 50 */
    double leak_min_r2;                /* goodness-of-fit floor, default 0.8 */
    double leak_min_duration_minutes;  /* data needed before a verdict, default 10 */
    double leak_spike_mb; /* MiB: a transient rise above this is a spike, default 256 */
    /* feature toggles */
    bool enable_alerts;
    bool enable_leak_detection;
    bool enable_bottleneck_detection;
    bool enable_process_monitoring;
    bool enable_xid_events;
    bool enable_pcie;
    /* added with the seed configuration (docs/monitor.md, "Configuration"); defaults in () */
    double utilization_low_threshold;   /* percent: alert when util_gpu stays <= this (10); 0 off;
                                           clears above this + alert_hysteresis */
    bool enable_memory_tracking;        /* memory figures, memory alert, leak detectors (true) */
    bool enable_power_monitoring;       /* power, power limit, energy, power alert (true) */
    bool enable_temperature_monitoring; /* temperatures, temperature alert (true) */
    bool enable_multi_gpu;              /* false: only GPU 0 is monitored (true) */
    bool integrate_with_component_profiling; /* gp_component_* attribution (true) */
    bool enable_optimization_suggestions;    /* gp_monitor_suggestions answers (true) */
    /* read and kept, but no effect in gpuprof (a warning says why when set as below) */
    bool enable_real_time_monitoring; /* always continuous; warning when false (true) */
    bool enable_kernel_profiling;     /* kernels: gpuprof trace; warning when true (false) */
    bool integrate_with_tracing;      /* traces: monitor -o FILE; warning when true (false) */
    bool integrate_with_metrics;      /* metrics: gpuprof exporter; warning when true (false) */
} gp_monitor_config;

/* Fills cfg with the defaults listed above (level standard, mode monitoring). */
GP_EXTERN void gp_monitor_config_init(gp_monitor_config *cfg);

/* Receives one configuration warning: a key read but without effect in gpuprof, or a value read
 * leniently ("yes" as true). msg is one line, "file:line: key: why" for files. */
typedef void (*gp_config_warn_fn)(const char *msg, void *ctx);

/* How a configuration is read (issue 32: one function with options in place of the _ex twins).
 * Zero, or a NULL pointer, is the default: warnings dropped. Designated initialisers read well:
 * &(gp_config_opts){.warn = fn, .warn_ctx = ctx}. */
typedef struct gp_config_opts {
    gp_config_warn_fn warn; /* receives each warning; NULL: dropped */
    void *warn_ctx;         /* passed to warn */
} gp_config_opts;

/* Applies a YAML configuration on top of cfg: a mapping of the keys named in gp_monitor_config
 * (`sampling_interval_ms: 250`, `level: detailed`, `enable_pcie: true`), either flat or inside a
 * top-level `gpu_profiler:` block (the layout of the tool gpuprof replaces; the other top-level
 * sections of such a file are ignored, with a warning each). name is used in messages. Unknown
 * keys, repeated keys, nested values, hexadecimal numbers and bad values fail with GP_EPARSE /
 * GP_EINVAL and err names the file, line and key. Warnings go to opts->warn (opts NULL or warn
 * NULL: dropped). cfg is unchanged on failure. */
GP_EXTERN gp_status gp_monitor_config_parse(gp_monitor_config *cfg, const char *text, size_t len,
                                            const char *name, const gp_config_opts *opts,
                                            gp_error *err) GP_WARN_UNUSED;
/* As gp_monitor_config_parse, reading the file at path (GP_ENOENT when nothing is at path, GP_EIO
 * when it cannot be read). */
GP_EXTERN gp_status gp_monitor_config_load(gp_monitor_config *cfg, const char *path,
                                           const gp_config_opts *opts,
                                           gp_error *err) GP_WARN_UNUSED;
/* Sets one key from text, as a CLI flag would ("level", "detailed"). GP_EINVAL on an unknown key
 * or a bad value (err says which); warnings as for files, without a line. */
GP_EXTERN gp_status gp_monitor_config_set(gp_monitor_config *cfg, const char *key,
                                          const char *value, const gp_config_opts *opts,
                                          gp_error *err) GP_WARN_UNUSED;
/* True when metric m is sampled at cfg's level and feature toggles. */
GP_EXTERN bool gp_monitor_config_wants(const gp_monitor_config *cfg, gp_metric m);

/* ---- events ---------------------------------------------------------------------------- */

typedef enum gp_monitor_event_type {
    GP_EVT_STARTED = 0,
    GP_EVT_STOPPED,
    GP_EVT_ALERT,         /* a threshold held for the minimum duration */
    GP_EVT_ALERT_CLEARED, /* the value fell below threshold - hysteresis */
    GP_EVT_XID,           /* an XID error event from the driver */
    GP_EVT_THROTTLE,      /* new thermal / power throttle reasons appeared (value = bitmask) */
    GP_EVT_LEAK,          /* the leak detector's verdict turned positive */
    GP_EVT_SPIKE,         /* a transient memory spike */
    GP_EVT_BOTTLENECK,    /* the bottleneck class of a GPU changed */
    GP_EVT_DEVICE_LOST,   /* NVML said GPU_IS_LOST; the device is no longer sampled */
    GP_EVT_DEBUG,         /* debug mode: an NVML call failed */
    GP_EVT_TYPE_COUNT
} gp_monitor_event_type;

typedef enum gp_severity { GP_SEV_INFO = 0, GP_SEV_WARNING, GP_SEV_CRITICAL } gp_severity;

GP_EXTERN const char *gp_monitor_event_type_name(gp_monitor_event_type t);
GP_EXTERN const char *gp_severity_name(gp_severity s);

typedef struct gp_monitor_event {
    gp_monitor_event_type type;
    gp_severity severity;
    gp_ns ts;
    int32_t device;   /* -1 for monitor-wide events */
    uint32_t pid;     /* per-process leak events, else 0 */
    char what[96];    /* alert kind ("temperature"), XID code, leak scope ("device", "process"), the
                         UUID of a lost GPU (whole: 40 characters) */
    double value;     /* the observed figure (e.g. 91 celsius, slope MiB/h) */
    double threshold; /* the limit it crossed, NaN when none */
    char message[256]; /* one human-readable sentence */
} gp_monitor_event;

typedef void (*gp_monitor_event_cb)(const gp_monitor_event *ev, void *ctx);

/* Writes ev as one JSON object and a newline to fp (render layer). */
GP_EXTERN void gp_monitor_event_write_json(const gp_monitor_event *ev, FILE *fp);

/* ---- the leak detector (pure: feed it samples, ask for a verdict) ----------------------- */

#define GP_LEAK_BUCKETS 64

typedef struct gp_leak_params {
    double window_s;           /* rolling window */
    double warmup_s;           /* samples earlier than first + warmup are ignored */
    double min_slope_mb_per_h; /* MiB/h: slopes below this are not leaks */
    double min_r2;             /* goodness-of-fit floor of the linear trend */
    double min_duration_s;     /* data span needed before any verdict */
    double spike_mb;           /* MiB: rise above the baseline that counts as a spike */
    double spike_max_s;        /* a rise that lasts longer than this is a level shift */
} gp_leak_params;

typedef struct gp_leak_result {
    bool ready;                   /* enough data for a verdict */
    bool leak;                    /* the verdict */
    double slope_mb_per_h;        /* robust (Theil-Sen) slope over the window, MiB (2^20 bytes)/h */
    double recent_slope_mb_per_h; /* least-squares slope over the newer half of the window */
    double r2;                    /* goodness of fit of the robust line */
    double window_s;              /* span of the data used */
    double last_mb;               /* latest baseline value, MiB */
    double time_to_full_s;        /* (total - used) / slope; negative when unknown or no leak */
    uint32_t spikes;              /* spikes seen so far */
    double last_spike_mb;         /* height of the latest spike above the baseline, MiB */
} gp_leak_result;

/* Fixed-size detector state (no allocation). Buckets of window_s / GP_LEAK_BUCKETS seconds hold
 * the mean of the samples that fell in them. */
typedef struct gp_leak_detector {
    gp_leak_params p;
    gp_ns first_ts;
    bool started;
    double bucket_w_ns;
    gp_ns b_start[GP_LEAK_BUCKETS];
    double b_sum[GP_LEAK_BUCKETS];
    uint32_t b_n[GP_LEAK_BUCKETS];
    uint32_t head, count; /* ring of buckets */
    /* an excursion above the baseline, held aside until it ends or lasts too long */
    bool in_excursion;
    gp_ns exc_start;
    double exc_sum, exc_peak;
    uint32_t exc_n;
    uint32_t spikes;
    double last_spike_mb;
    bool spike_pending_event; /* set when a spike was confirmed by the latest add */
    double total_bytes;
    double last_value;
} gp_leak_detector;

/* Fills p with the defaults matching gp_monitor_config_init. */
GP_EXTERN void gp_leak_params_init(gp_leak_params *p);
/* Resets d with parameters p. GP_EINVAL when a parameter is not positive (min_r2 may be 0). */
GP_EXTERN gp_status gp_leak_detector_init(gp_leak_detector *d,
                                          const gp_leak_params *p) GP_WARN_UNUSED;
/* Adds one sample: used bytes at ts (monotonic, non-decreasing), total bytes (0 if unknown).
 * Returns true when this sample confirmed a spike. */
GP_EXTERN bool gp_leak_detector_add(gp_leak_detector *d, gp_ns ts, double used_bytes,
                                    double total_bytes);
/* Computes the verdict over the current window. */
GP_EXTERN void gp_leak_detector_eval(const gp_leak_detector *d, gp_leak_result *out);

/* ---- bottlenecks and suggestions ------------------------------------------------------ */

typedef enum gp_bottleneck_kind {
    GP_BN_NONE = 0,         /* busy, nothing dominant */
    GP_BN_IDLE,             /* GPU mostly idle */
    GP_BN_COMPUTE,          /* compute-bound */
    GP_BN_MEMORY_BANDWIDTH, /* memory-bandwidth-bound */
    GP_BN_MEMORY_CAPACITY,  /* memory (almost) full */
    GP_BN_THERMAL,          /* thermal throttling or temperature at the slowdown threshold */
    GP_BN_POWER,            /* power cap reasons or draw at the enforced limit */
    GP_BN_UNKNOWN           /* not enough data */
} gp_bottleneck_kind;

GP_EXTERN const char *gp_bottleneck_name(gp_bottleneck_kind k);

typedef struct gp_bottleneck {
    gp_bottleneck_kind kind;
    double confidence;             /* 0..1: share of samples supporting the verdict */
    uint32_t samples;              /* samples looked at */
    double util_gpu_mean;          /* percent, NaN when unknown */
    double util_mem_mean;          /* percent, NaN when unknown */
    double mem_used_ratio;         /* latest used / total, NaN when unknown */
    double temp_max;               /* celsius, NaN when unknown */
    double power_ratio;            /* mean power / limit, NaN when unknown */
    double thermal_throttle_share; /* share of samples with a thermal reason */
    double power_throttle_share;   /* share of samples with a power reason */
} gp_bottleneck;

/* Classifies n samples of one GPU (oldest first). Pure; never fails (GP_BN_UNKNOWN when n == 0). */
GP_EXTERN void gp_bottleneck_classify(const gp_gpu_sample *samples, size_t n, gp_bottleneck *out);

typedef struct gp_suggestion {
    char type[32]; /* "thermal", "power", "memory_leak", "memory_capacity", "idle", ... */
    gp_severity severity;
    int32_t device;       /* -1 for monitor-wide */
    char message[256];    /* what was observed (fixed text per type: no figures) */
    char evidence[256];   /* the figures behind it, "key=value" separated by spaces */
    char suggestion[256]; /* what to do about it */
} gp_suggestion;

/* ---- component attribution (process-wide) --------------------------------------------- */

/* Marks component `name` as running from now until the matching gp_component_end. Components
 * nest (a stack per process; the innermost one is attributed). Up to 256 distinct names; names
 * are copied. GP_ELIMIT past that, GP_EINVAL for NULL/empty names. Thread-safe. */
GP_EXTERN gp_status gp_component_begin(const char *name);
/* Ends the innermost activation of `name`. GP_ESTATE when name is not the innermost running
 * component (the stack is left unchanged). */
GP_EXTERN gp_status gp_component_end(const char *name);
/* Id of the innermost running component, -1 when none. */
GP_EXTERN int32_t gp_component_current(void);
/* Name of a component id, NULL when out of range. */
GP_EXTERN const char *gp_component_name(int32_t id);
/* Clears every component (tests). Not safe while a monitor samples. */
GP_EXTERN void gp_component_reset(void);

typedef struct gp_component_stats {
    int32_t id;
    char name[64];
    uint64_t samples;        /* samples taken while it was the innermost component */
    double wall_s;           /* time attributed, summed over GPUs */
    double gpu_busy_s;       /* sum of interval * util_gpu / 100 over GPUs */
    double mem_growth_bytes; /* sum of memory-used changes between consecutive samples */
} gp_component_stats;

/* ---- the monitor ------------------------------------------------------------------------- */

typedef struct gp_monitor gp_monitor;

/* Loads NVML, initialises it and enumerates the GPUs. cfg is copied. On success *out owns the
 * monitor (gp_monitor_close). Fails with GP_ENODRIVER when no NVML library can be loaded or its
 * init fails (err: "no NVIDIA driver found: <reason>"), GP_EINVAL for a bad config, GP_ENOMEM. */
GP_EXTERN gp_status gp_monitor_open(const gp_monitor_config *cfg, gp_monitor **out,
                                    gp_error *err) GP_WARN_UNUSED;
/* Stops the threads if running, shuts NVML down and frees everything. NULL is ignored. */
GP_EXTERN void gp_monitor_close(gp_monitor *mon);

/* Registers a callback for every event (up to 8). GP_ELIMIT past that. */
GP_EXTERN gp_status gp_monitor_add_listener(gp_monitor *mon, gp_monitor_event_cb cb,
                                            void *ctx) GP_WARN_UNUSED;
/* Also writes every event as a JSON line to fp (NULL stops), after the listeners have seen it. fp
 * must outlive the monitor's use. Implemented in the render layer as the monitor's sink listener.
 */
GP_EXTERN void gp_monitor_set_event_stream(gp_monitor *mon, FILE *fp);
/* Profiling mode: every later sample is appended to t as counter samples on one counter track per
 * GPU (pid = GPU index), series "gpu<N>.<metric>". The caller must not touch t until
 * gp_monitor_stop() (or its last gp_monitor_sample_now) returned, then call gp_trace_finish. */
GP_EXTERN gp_status gp_monitor_attach_trace(gp_monitor *mon, gp_trace *t) GP_WARN_UNUSED;

/* Starts the sampler thread (and the XID thread when enabled). Emits GP_EVT_STARTED.
 * GP_ESTATE when already running. */
GP_EXTERN gp_status gp_monitor_start(gp_monitor *mon) GP_WARN_UNUSED;
/* Stops the threads (returns within about one interval) and emits GP_EVT_STOPPED. Idempotent. */
GP_EXTERN void gp_monitor_stop(gp_monitor *mon);
/* Takes one sample of every GPU now, stamped ts (pass gp_monitor_now() outside tests), runs the
 * detectors and delivers events on the caller's thread. Also polls XID events without waiting.
 * GP_ESTATE while the sampler thread runs. */
GP_EXTERN gp_status gp_monitor_sample_now(gp_monitor *mon, gp_ns ts) GP_WARN_UNUSED;
/* CLOCK_MONOTONIC now, ns. */
GP_EXTERN gp_ns gp_monitor_now(void);
/* Blocks until the sampler thread has taken at least `count` samples in total or timeout_ms
 * passed. Returns true when reached. */
GP_EXTERN bool gp_monitor_wait_samples(gp_monitor *mon, uint64_t count, uint32_t timeout_ms);

GP_EXTERN size_t gp_monitor_device_count(const gp_monitor *mon);
/* Copies the identity of GPU idx. GP_ENOENT when idx is out of range. */
GP_EXTERN gp_status gp_monitor_device(gp_monitor *mon, size_t idx,
                                      gp_gpu_ident *out) GP_WARN_UNUSED;
/* Copies the latest sample of GPU idx. GP_EEMPTY before the first sample. */
GP_EXTERN gp_status gp_monitor_latest(gp_monitor *mon, size_t idx,
                                      gp_gpu_sample *out) GP_WARN_UNUSED;
/* Copies the newest min(max, retained) samples of GPU idx into out, oldest first; returns how
 * many (0 for a bad index). */
GP_EXTERN size_t gp_monitor_history(gp_monitor *mon, size_t idx, gp_gpu_sample *out, size_t max);
/* Copies up to max processes of GPU idx from the latest sample; *n receives the number copied. */
GP_EXTERN gp_status gp_monitor_processes(gp_monitor *mon, size_t idx, gp_gpu_process *out,
                                         size_t max, size_t *n) GP_WARN_UNUSED;
/* ---- host figures of GPU processes (/proc) --------------------------------------------- */

/* What the host says about a process: read from /proc/PID (GP_PROC_ROOT=/dir replaces /proc, for
 * tests). A figure that cannot be read (the process is gone, another user's process hides it) is
 * unknown, never 0. */
typedef struct gp_host_process {
    char user[32];      /* owner's login name, the numeric uid when it has none, "" unknown */
    char command[256];  /* command line, arguments separated by one space, "" unknown */
    double cpu_percent; /* host CPU time / wall time since the previous read of this pid (the
                           first read: since the process started); 100 = one core; NaN unknown */
    int64_t rss_bytes;  /* resident set size, -1 unknown */
} gp_host_process;

/* Remembers the CPU time of the pids it read (up to 1024), so each read gives the CPU% since the
 * previous one, and their user and command line (read once per process: a pid with another start
 * time is another process). Not thread-safe: one reader at a time. */
typedef struct gp_host_procs gp_host_procs;
GP_EXTERN gp_status gp_host_procs_create(gp_host_procs **out) GP_WARN_UNUSED;
GP_EXTERN void gp_host_procs_free(gp_host_procs *hp);
/* Reads pid's figures at now (CLOCK_MONOTONIC ns, gp_monitor_now()) into *out; hp may be NULL
 * (CPU% then always since the process started). */
GP_EXTERN void gp_host_process_read(gp_host_procs *hp, uint32_t pid, gp_ns now,
                                    gp_host_process *out);

/* One process on one GPU, as the monitor's outputs list it. */
typedef struct gp_process_row {
    uint32_t gpu; /* NVML index */
    gp_gpu_process p;
    gp_host_process host;
} gp_process_row;

/* The processes of every GPU in the latest samples (GPU order, then NVML's order; at most 256 per
 * GPU), with their host figures when hp is not NULL (else host fields unknown): up to max into
 * out; *n receives the count. */
GP_EXTERN gp_status gp_monitor_process_rows(gp_monitor *mon, gp_host_procs *hp, gp_process_row *out,
                                            size_t max, size_t *n) GP_WARN_UNUSED;

/* XID counts of GPU idx: up to max (code, count) pairs; returns the number of distinct codes. */
GP_EXTERN size_t gp_monitor_xid_counts(gp_monitor *mon, size_t idx, uint32_t *codes,
                                       uint64_t *counts, size_t max);
/* Total samples taken (all GPUs count as one sampling round). */
GP_EXTERN uint64_t gp_monitor_samples_total(gp_monitor *mon);
/* Alerts fired so far, per kind: "utilization", "utilization_low", "memory", "temperature",
 * "power" (NULL: all kinds). */
GP_EXTERN uint64_t gp_monitor_alerts_total(gp_monitor *mon, const char *kind);
/* The interval in use now (adaptive mode changes it). */
GP_EXTERN uint32_t gp_monitor_current_interval_ms(gp_monitor *mon);

/* Leak verdict of GPU idx (device memory). GP_ENOENT for a bad index. */
GP_EXTERN gp_status gp_monitor_leak(gp_monitor *mon, size_t idx,
                                    gp_leak_result *out) GP_WARN_UNUSED;
/* Leak verdict of process pid on GPU idx. GP_ENOENT when that process is not tracked. */
GP_EXTERN gp_status gp_monitor_process_leak(gp_monitor *mon, size_t idx, uint32_t pid,
                                            gp_leak_result *out) GP_WARN_UNUSED;
/* Bottleneck of GPU idx over the last 10 s of samples (at most 200). */
GP_EXTERN gp_status gp_monitor_bottleneck(gp_monitor *mon, size_t idx,
                                          gp_bottleneck *out) GP_WARN_UNUSED;
/* Suggestions drawn from the bottlenecks, leaks and alerts now: up to max into out; *n receives
 * the count (0 when enable_optimization_suggestions is off). */
GP_EXTERN gp_status gp_monitor_suggestions(gp_monitor *mon, gp_suggestion *out, size_t max,
                                           size_t *n) GP_WARN_UNUSED;
/* Per-component attribution: up to max entries; *n receives the count. */
GP_EXTERN gp_status gp_monitor_components(gp_monitor *mon, gp_component_stats *out, size_t max,
                                          size_t *n) GP_WARN_UNUSED;

/* The monitor's health: error when no GPU is monitored (none found, or all lost), degraded when
 * some GPU was lost or the last NVML call failed, ok otherwise. */
typedef enum gp_health_status {
    GP_HEALTH_OK = 0,
    GP_HEALTH_DEGRADED,
    GP_HEALTH_ERROR,
    GP_HEALTH_UNAVAILABLE /* no monitor: the driver could not be loaded (gp_monitor_open failed) */
} gp_health_status;

typedef struct gp_monitor_health {
    gp_health_status status;
    size_t gpus, gpus_lost;
    uint64_t samples_collected;
    bool running;
    gp_monitor_level level;
    gp_monitor_mode mode;
    uint32_t interval_ms;
    char driver_version[81];
    char nvml_library[256];
    gp_error last_error; /* the last NVML or profiling failure: msg "" (status GP_OK) when none */
} gp_monitor_health;

/* "ok", "degraded", "error", "unavailable". */
GP_EXTERN const char *gp_health_status_name(gp_health_status s);
/* The health of a monitor that could not be opened: status unavailable, level, mode and interval
 * from cfg (NULL: the defaults), last_error = why (the reason gp_monitor_open gave). */
GP_EXTERN void gp_monitor_health_unavailable(const gp_monitor_config *cfg, const gp_error *why,
                                             gp_monitor_health *out);
/* Fills *out with the monitor's health now. */
GP_EXTERN void gp_monitor_get_health(gp_monitor *mon, gp_monitor_health *out);
/* Renders health as a JSON object: {"status", "gpus", "gpus_lost", "samples_collected",
 * "running", "level", "mode", "interval_ms", "driver_version", "nvml_library", "last_error"
 * (null when none)}, plus "reason" (= last_error) when the status is unavailable. The text is
 * malloc'd: caller frees. */
GP_EXTERN gp_status gp_monitor_health_render_json(const gp_monitor_health *h, char **out,
                                                  size_t *len) GP_WARN_UNUSED;
/* gp_monitor_get_health + gp_monitor_health_render_json. */
GP_EXTERN gp_status gp_monitor_health_json(gp_monitor *mon, char **out, size_t *len) GP_WARN_UNUSED;
/* Driver version text reported by NVML ("" when unknown). */
GP_EXTERN const char *gp_monitor_driver_version(const gp_monitor *mon);

#ifdef __cplusplus
}
#endif
#endif
