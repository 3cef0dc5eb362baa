/* gpuprof serve: HTTP endpoints over libmicrohttpd. The Prometheus exporter publishes a running
 * gp_monitor's latest samples at /metrics (text exposition format 0.0.4, base units, `_total`
 * counters) and its health at /healthz. It binds 127.0.0.1 unless told otherwise. */
#ifndef GPUPROF_SERVE_H
#define GPUPROF_SERVE_H

#include <stdint.h>

#include "gpuprof/core.h"
#include "gpuprof/monitor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Renders the Prometheus text exposition of mon's latest samples into a malloc'd NUL-terminated
 * buffer (*out, caller frees; *len its length). Every per-GPU series carries the labels gpu, uuid,
 * name, pci_bus_id and hostname (hostname NULL: the machine's name). A metric the GPU did not
 * report is left out, never written as 0. GP_ENOMEM on allocation failure. */
GP_EXTERN gp_status gp_prometheus_render(gp_monitor *mon, const char *hostname, char **out,
                                         size_t *len) GP_WARN_UNUSED;

typedef struct gp_exporter gp_exporter;

typedef struct gp_exporter_opts {
    const char *listen;   /* "HOST:PORT"; HOST an IPv4 address or "localhost"; NULL:
                             "127.0.0.1:9400". PORT 0 picks a free port (gp_exporter_port). */
    const char *hostname; /* hostname label; NULL: gethostname() */
} gp_exporter_opts;

/* Starts serving mon (which must outlive the exporter; start its sampler separately) on its own
 * thread. /metrics is rendered once per sampling round and the same text is served to every
 * scrape until the next round (XID counts that arrive between rounds show at the next round).
 * GP_EINVAL for a malformed listen address, GP_EIO when it cannot bind (err says why). On success
 * *out owns the server (gp_exporter_stop). */
GP_EXTERN gp_status gp_exporter_start(gp_monitor *mon, const gp_exporter_opts *opts,
                                      gp_exporter **out, gp_error *err) GP_WARN_UNUSED;
/* The TCP port actually bound. */
GP_EXTERN uint16_t gp_exporter_port(const gp_exporter *ex);
/* Scrapes of /metrics served so far. */
GP_EXTERN uint64_t gp_exporter_scrapes(const gp_exporter *ex);
/* Stops the server and frees it. NULL is ignored. */
GP_EXTERN void gp_exporter_stop(gp_exporter *ex);

#ifdef __cplusplus
}
#endif
#endif
