/* Internals of the monitor, shared by its files only (docs/internals/monitor.md):
 *
 *   monitor.c         lifecycle (open/close), events (emit/deliver), listeners, the sampler, XID
 *                     and PCIe threads, start/stop/sample_now, the sampling round
 *   monitor_read.c    NVML reads of one GPU (sampler-private state), PCIe, XID polling
 *   monitor_commit.c  committing a sample: rings, alerts, throttle events, leak detectors,
 *                     bottleneck changes, component attribution, profiling counters
 *   monitor_query.c   query functions, suggestions, components, health
 *
 * Locks (gp__mutex, core/lock.h): `lock` protects everything published: the "guarded by lock"
 * fields of gp_monitor and the "published" part of each gpu. clang (14) cannot name a sibling
 * member in a guarded_by attribute in C (only C++ or clang >= 20 with late-parsed attributes can),
 * so the per-monitor data carries the rule in comments and the checked part is the functions:
 * every function that touches published data without taking the lock itself says
 * GP_REQUIRES(m->lock), and -Wthread-safety checks each call. `sample_lock` makes one sampling
 * round at a time and owns the "sampler-private" part of each gpu (GP_REQUIRES(m->sample_lock)
 * on the readers). `deliver_lock` runs callbacks one at a time. Fields written only by open/close
 * or by the thread calling start/stop belong to no lock. (component.c's lock is a global, so its
 * data is GP_GUARDED_BY it.) */
#ifndef GP_PRODUCE_MONITOR_MONITOR_INTERNAL_H
#define GP_PRODUCE_MONITOR_MONITOR_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/lock.h"
#include "gpuprof/monitor.h"
#include "produce/monitor/monitor_sink.h"
#include "produce/monitor/nvml.h"

#define GP__MON_MAX_LISTENERS 8
#define GP__MON_MAX_XID_CODES 32
#define GP__MON_MAX_PROC_TRACKS 32
#define GP__MON_MAX_COMPONENTS 256
#define GP__MON_N_ALERT_KINDS 5 /* utilization, memory, temperature, power, utilization_low */

#define GP__MON_BIT(mm) (1ull << (mm))

extern const char *const gp__alert_kinds[GP__MON_N_ALERT_KINDS];
extern const char *const gp__metric_names[GP_M_COUNT];

typedef struct gp__mon_proc_track {
    uint32_t pid;
    bool seen, leak_reported;
    gp_ns last_eval_bucket;
    gp_leak_detector leak;
    gp_leak_result result;
} gp__mon_proc_track;

typedef struct gp__mon_gpu {
    gp_gpu_ident id; /* published copy (under lock) */
    gp__nvmlDevice_t h;
    /* sampler-private NVML state */
    uint64_t unsup;
    bool lost;
    bool mem_v2_bad, temp_v_bad;
    unsigned n_fans;
    void *proc_buf;
    unsigned proc_buf_cap; /* entries of the v2 struct */
    gp__nvmlProcessUtilizationSample_t *util_buf;
    unsigned util_buf_cap;
    unsigned long long util_last_seen;
    gp_gpu_process *procs_next;
    size_t n_procs_next, cap_procs_next;
    /* published state (under lock) */
    gp_gpu_sample *ring;
    size_t ring_cap, ring_head, ring_n;
    gp_gpu_sample latest;
    bool has_latest;
    gp_gpu_process *procs;
    size_t n_procs, cap_procs;
    bool alert_active[GP__MON_N_ALERT_KINDS];
    gp_ns alert_pending[GP__MON_N_ALERT_KINDS]; /* since when the condition holds, when pending */
    bool alert_is_pending[GP__MON_N_ALERT_KINDS];
    uint64_t throttle_prev;
    gp_leak_detector leak;
    gp_leak_result leak_result;
    gp_ns leak_last_eval_bucket;
    bool leak_reported;
    gp__mon_proc_track ptracks[GP__MON_MAX_PROC_TRACKS];
    size_t n_ptracks;
    gp_bottleneck_kind bn_prev;
    gp_ns bn_last;
    /* PCIe: read at most once per second, off the sampling path when threads run (under lock) */
    double pcie_val[2];
    bool pcie_have[2];
    uint64_t pcie_unsup;
    gp_ns pcie_last;
    uint32_t xid_code[GP__MON_MAX_XID_CODES];
    uint64_t xid_count[GP__MON_MAX_XID_CODES];
    size_t n_xid;
    uint32_t trace_track;
    gp_strid series[GP_M_COUNT];
} gp__mon_gpu;

typedef struct gp__mon_comp_stats {
    uint64_t samples;
    double wall_s, busy_s, growth;
} gp__mon_comp_stats;

typedef struct gp__mon_listener {
    gp_monitor_event_cb cb;
    void *ctx;
} gp__mon_listener;

struct gp_monitor {
    /* set by gp_monitor_open, read-only afterwards */
    gp_monitor_config cfg;
    gp__nvml nvml;
    char driver[81];
    gp__mon_gpu *gpus;
    size_t n_gpus;
    gp__nvmlEventSet_t evset;
    bool evset_ok;
    uint64_t wanted; /* metrics of the configured level and toggles */

    gp__mutex lock;         /* everything published */
    pthread_cond_t cv;      /* stop requests, sample counts (waited on with lock) */
    gp__mutex sample_lock;  /* one sampling round at a time */
    gp__mutex deliver_lock; /* callbacks run one at a time, in queue order */

    /* owned by the thread calling start / stop */
    pthread_t thread, xid_thread, pcie_thread;
    bool xid_thread_started, pcie_thread_started;

    /* guarded by lock (see the note at the top of this file) */
    bool running;
    bool stop;
    uint64_t samples_total;
    uint64_t alerts_total[GP__MON_N_ALERT_KINDS];
    uint32_t interval_ms;
    gp_error last_error; /* msg "" when none */
    gp_ns last_error_ts; /* round of the last error (sample clock) */
    gp_ns last_round_ts;
    gp_ns started_at;

    gp__mon_listener listeners[GP__MON_MAX_LISTENERS];
    size_t n_listeners;
    gp__mon_listener sink; /* gp__monitor_set_sink: after the listeners */
    gp_monitor_event *pending;
    size_t n_pending, cap_pending;

    gp_trace *trace;
    gp__mon_comp_stats comps[GP__MON_MAX_COMPONENTS];
    int32_t n_comps_seen;
};

/* ---- monitor.c ---- */

/* Queues an event (lock held). Delivered by gp__mon_deliver once the lock is released. */
void gp__mon_emit(gp_monitor *m, gp_monitor_event_type type, gp_severity sev, gp_ns ts, int dev,
                  uint32_t pid, const char *what, double value, double threshold, const char *fmt,
                  ...) GP_PRINTF(10, 11) GP_REQUIRES(m->lock);
/* Records the monitor's last error (health's last_error), truncated to 255 bytes. */
void gp__mon_set_last_error(gp_monitor *m, const char *fmt, ...) GP_PRINTF(2, 3)
    GP_REQUIRES(m->lock);
/* The leak detector parameters of a configuration. */
gp_leak_params gp__mon_leak_params(const gp_monitor_config *c);

/* ---- monitor_read.c ---- */

/* Reads every wanted metric of g into s (sampler-private state; lock NOT held). The first NVML
 * failure other than NOT_SUPPORTED / GPU_IS_LOST is described in errbuf when it is empty. */
void gp__mon_read_gpu(gp_monitor *m, gp__mon_gpu *g, gp_gpu_sample *s, char *errbuf, size_t errlen)
    GP_REQUIRES(m->sample_lock) GP_EXCLUDES(m->lock);
/* Reads PCIe TX/RX of g and publishes them under the lock (takes it). */
void gp__mon_read_pcie(gp_monitor *m, gp__mon_gpu *g, gp_ns ts) GP_EXCLUDES(m->lock);
/* True when PCIe throughput is part of the configured metric set. */
bool gp__mon_wants_pcie(const gp_monitor *m);
/* Waits up to timeout_ms for XID events and records them (takes the lock per event). */
void gp__mon_poll_xids(gp_monitor *m, unsigned timeout_ms) GP_EXCLUDES(m->lock);

/* ---- monitor_commit.c ---- */

/* Publishes sample s of g (ring, latest, process list) and runs alerts, detectors, attribution
 * and profiling counters on it; comp is the running component id. */
void gp__mon_commit(gp_monitor *m, gp__mon_gpu *g, gp_gpu_sample *s, int32_t comp)
    GP_REQUIRES(m->lock);
/* Bottleneck over the last 10 s (at most 200 samples) of g's ring. */
void gp__mon_bottleneck_of(gp_monitor *m, const gp__mon_gpu *g, gp_ns now, gp_bottleneck *out)
    GP_REQUIRES(m->lock);

#endif
