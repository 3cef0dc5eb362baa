/* The Prometheus exporter: libmicrohttpd serving /metrics, /healthz and / for a gp_monitor, behind
 * the gate of gate.c (slow clients, caps; docs/internals/serve.md). */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprof/serve.h"
#include "app/serve/http.h"
#include "core/lock.h"

struct gp_exporter {
    gp__http_server *http;
    gp_monitor *mon;
    char hostname[256];
    char reason[256]; /* without a monitor: why (/healthz) */
    uint16_t port;
    atomic_ullong scrapes;
    /* the text of the latest sampling round: rendered once per round, copied to each scrape */
    /* cache, cache_len and cache_round are guarded by cache_lock: clang 14 cannot name a sibling
     * member in GP_GUARDED_BY in C, so the functions that touch them say GP_REQUIRES instead. */
    gp__mutex cache_lock;
    char *cache;
    size_t cache_len;
    uint64_t cache_round;
};

/* Hands a malloc'd copy of the current /metrics text (rendered again after a new sampling round)
 * to *out. GP_ENOMEM on failure. */
static gp_status copy_metrics(gp_exporter *ex, char **out, size_t *len)
    GP_REQUIRES(&ex->cache_lock);

static gp_status copy_metrics(gp_exporter *ex, char **out, size_t *len)
{
    uint64_t round = ex->mon ? gp_monitor_samples_total(ex->mon) : 0;
    if (!ex->cache || ex->cache_round != round) {
        char *text = NULL;
        size_t n = 0;
        gp_status st = gp_prometheus_render(ex->mon, ex->hostname, &text, &n);
        if (st != GP_OK)
            return st;
        free(ex->cache);
        ex->cache = text;
        ex->cache_len = n;
        ex->cache_round = round;
    }
    *out = malloc(ex->cache_len + 1);
    if (!*out)
        return GP_ENOMEM;
    memcpy(*out, ex->cache, ex->cache_len + 1);
    *len = ex->cache_len;
    return GP_OK;
}

/* copy_metrics under the cache lock. */
static gp_status metrics_text(gp_exporter *ex, char **out, size_t *len)
{
    gp__mutex_lock(&ex->cache_lock);
    gp_status st = copy_metrics(ex, out, len);
    gp__mutex_unlock(&ex->cache_lock);
    return st;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *method,
                              const gp__http_target *t)
{
    gp_exporter *ex = cls;
    const char *url = t->path;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        static char msg[] = "method not allowed\n";
        return gp__http_reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", msg, sizeof msg - 1,
                              false);
    }
    if (strcmp(url, "/metrics") == 0) {
        char *text = NULL;
        size_t len = 0;
        if (metrics_text(ex, &text, &len) != GP_OK) {
            static char msg[] = "out of memory\n";
            return gp__http_reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", msg,
                                  sizeof msg - 1, false);
        }
        atomic_fetch_add(&ex->scrapes, 1);
        return gp__http_reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", text, len,
                              true);
    }
    if (strcmp(url, "/healthz") == 0) {
        gp_monitor_health h;
        if (ex->mon) {
            gp_monitor_get_health(ex->mon, &h);
        } else {
            gp_error why = {0};
            gp_error_set(&why, GP_ENODRIVER, "%s", ex->reason);
            gp_monitor_health_unavailable(NULL, &why, &h);
        }
        char *json = NULL;
        size_t len = 0;
        if (gp_monitor_health_render_json(&h, &json, &len) != GP_OK) {
            static char msg[] = "out of memory\n";
            return gp__http_reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", msg,
                                  sizeof msg - 1, false);
        }
        unsigned code = h.status == GP_HEALTH_ERROR || h.status == GP_HEALTH_UNAVAILABLE
                            ? MHD_HTTP_SERVICE_UNAVAILABLE
                            : MHD_HTTP_OK;
        return gp__http_reply(c, code, "application/json", json, len, true);
    }
    if (strcmp(url, "/") == 0) {
        static char page[] = "gpuprof exporter: GPU metrics at /metrics, health at /healthz\n";
        return gp__http_reply(c, MHD_HTTP_OK, "text/plain; charset=utf-8", page, sizeof page - 1,
                              false);
    }
    static char nf[] = "not found\n";
    return gp__http_reply(c, MHD_HTTP_NOT_FOUND, "text/plain", nf, sizeof nf - 1, false);
}

gp_status gp_exporter_start(gp_monitor *mon, const gp_exporter_opts *opts, gp_exporter **out,
                            gp_error *err)
{
    const char *listen = opts && opts->listen ? opts->listen : "127.0.0.1:9400";
    struct sockaddr_in sa;
    gp_status st = gp__http_parse_listen(listen, &sa, err);
    if (st != GP_OK)
        return st;
    gp_exporter *ex = calloc(1, sizeof *ex);
    if (!ex)
        return gp_error_set(err, GP_ENOMEM, "out of memory");
    ex->mon = mon;
    gp__mutex_init(&ex->cache_lock);
    snprintf(ex->reason, sizeof ex->reason, "%s",
             opts && opts->unavailable_reason ? opts->unavailable_reason : "no NVIDIA driver");
    if (opts && opts->hostname)
        snprintf(ex->hostname, sizeof ex->hostname, "%s", opts->hostname);
    else if (gethostname(ex->hostname, sizeof ex->hostname - 1) != 0)
        snprintf(ex->hostname, sizeof ex->hostname, "unknown");
    gp__http_limits lim;
    gp__http_limits_init(&lim);
    lim.pool = 4; /* every answer is at once: a copy of the cached text, or the health */
    ex->http = gp__http_start(&sa, &lim, handle, ex);
    if (!ex->http) {
        int e = errno;
        gp__mutex_destroy(&ex->cache_lock);
        free(ex);
        return gp_error_set(err, GP_EIO, "cannot listen on %s: %s", listen,
                            e ? strerror(e) : "libmicrohttpd failed to start");
    }
    ex->port = gp__http_port(ex->http);
    *out = ex;
    return GP_OK;
}

uint16_t gp_exporter_port(const gp_exporter *ex)
{
    return ex->port;
}

uint64_t gp_exporter_scrapes(const gp_exporter *ex)
{
    return atomic_load(&((gp_exporter *)ex)->scrapes);
}

void gp_exporter_stop(gp_exporter *ex)
{
    if (!ex)
        return;
    gp__http_stop(ex->http); /* no request runs after this */
    free(ex->cache);
    gp__mutex_destroy(&ex->cache_lock);
    free(ex);
}
