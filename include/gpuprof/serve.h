/* gpuprof serve: HTTP endpoints over libmicrohttpd. The Prometheus exporter publishes a running
 * gp_monitor's latest samples at /metrics (text exposition format 0.0.4, base units, `_total`
 * counters) and its health at /healthz; the profile server publishes a directory of profiles
 * (dashboards, timelines, summary and analysis JSON). Both bind 127.0.0.1 unless told otherwise. */
#ifndef GPUPROF_SERVE_H
#define GPUPROF_SERVE_H

#include <stdbool.h>
#include <stdint.h>

#include "gpuprof/core.h"
#include "gpuprof/monitor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Renders the Prometheus text exposition of mon's latest samples into a malloc'd NUL-terminated
 * buffer (*out, caller frees; *len its length). Every per-GPU series carries the labels gpu, uuid,
 * name, pci_bus_id and hostname (hostname NULL: the machine's name). A metric the GPU did not
 * report is left out, never written as 0. mon NULL (no driver): only gpuprof_gpu_up{hostname} 0.
 * GP_ENOMEM on allocation failure. */
GP_EXTERN gp_status gp_prometheus_render(gp_monitor *mon, const char *hostname, char **out,
                                         size_t *len) GP_WARN_UNUSED;

typedef struct gp_exporter gp_exporter;

typedef struct gp_exporter_opts {
    const char *listen;   /* "HOST:PORT"; HOST an IPv4 address or "localhost"; NULL:
                             "127.0.0.1:9400". PORT 0 picks a free port (gp_exporter_port). */
    const char *hostname; /* hostname label; NULL: gethostname() */
    /* Without a monitor (gp_exporter_start's mon NULL: no driver could be loaded), why: /healthz
     * answers the "unavailable" health with it as the reason. NULL: "no NVIDIA driver". */
    const char *unavailable_reason;
} gp_exporter_opts;

/* Starts serving mon (which must outlive the exporter; start its sampler separately) on its own
 * thread. mon may be NULL when no driver could be loaded: /metrics then says gpuprof_gpu_up 0
 * (gp_prometheus_render with NULL) and /healthz answers 503 with the "unavailable" health. /metrics
 * is rendered once per sampling round and the same text is served to every scrape until the next
 * round (XID counts that arrive between rounds show at the next round). GP_EINVAL for a malformed
 * listen address, GP_EIO when it cannot bind (err says why). On success *out owns the server
 * (gp_exporter_stop). */
GP_EXTERN gp_status gp_exporter_start(gp_monitor *mon, const gp_exporter_opts *opts,
                                      gp_exporter **out, gp_error *err) GP_WARN_UNUSED;
/* The TCP port actually bound. */
GP_EXTERN uint16_t gp_exporter_port(const gp_exporter *ex);
/* Scrapes of /metrics served so far. */
GP_EXTERN uint64_t gp_exporter_scrapes(const gp_exporter *ex);
/* Stops the server and frees it. NULL is ignored. */
GP_EXTERN void gp_exporter_stop(gp_exporter *ex);

/* ---- profile server (gpuprof serve --dir) ----------------------------------------------------
 * Serves a directory of profiles and traces (*.json, *.json.gz, folders of rank traces as jobs,
 * and the job folders one level further down as "folder/job"):
 *   /                              an HTML index with links to each one's views and data
 *   /report/NAME, /timeline/NAME,  the dashboard, the timeline and the flame graph (what
 *   /flame/NAME                    `gpuprof report`, `timeline` and `flame` write), built on
 * request /diff?base=NAME&current=NAME   the comparison page of `gpuprof diff --html`
 *   /api/profiler/profiles         the listing as JSON: name, type (file | job), bytes, modified
 *   /api/profiler/VIEW/NAME        JSON: summary, analysis, kernels, memory, hta, flame, timeline,
 *                                  compile; /api/profiler/diff?base=&current= (docs/reports.md)
 *   /healthz                       {"status":"ok"}
 * NAME is an entry of the directory (404 otherwise, never a path); a profile that cannot be read
 * answers 422 with the reader's message; errors under /api/ are JSON. Binds 127.0.0.1:8600 unless
 * told otherwise. Slow or misbehaving clients are bounded (docs/internals/serve.md). */
typedef struct gp_profile_server gp_profile_server;

typedef struct gp_profile_server_opts {
    const char *dir;          /* required */
    const char *listen;       /* "HOST:PORT" as for the exporter; NULL: "127.0.0.1:8600" */
    bool follow_symlinks;     /* serve symbolic links that lead out of dir (default: refused) */
    unsigned analyses;        /* profiles read and analysed at once (0: 2); more wait up to 30 s,
                                 then get 503 */
    uint64_t max_input_bytes; /* a profile whose files are larger is refused with 413 (0: 4 GiB) */
} gp_profile_server_opts;

/* Starts serving on its own thread. GP_ENOENT when dir is not a directory, GP_EINVAL for a bad
 * listen address, GP_EIO when it cannot bind (err says why). *out: gp_profile_server_stop. */
GP_EXTERN gp_status gp_profile_server_start(const gp_profile_server_opts *opts,
                                            gp_profile_server **out, gp_error *err) GP_WARN_UNUSED;
/* The TCP port actually bound. */
GP_EXTERN uint16_t gp_profile_server_port(const gp_profile_server *s);
/* Stops the server and frees it. NULL is ignored. */
GP_EXTERN void gp_profile_server_stop(gp_profile_server *s);

#ifdef __cplusplus
}
#endif
#endif
