/* Writers of monitor data: events as JSON lines (and the event stream, a sink of the monitor's
 * listener mechanism), health as a JSON object. The monitor (src/produce/monitor) only produces
 * structs and calls listeners; it writes nothing. See docs/internals/monitor.md. */
#include <stdio.h>
#include <stdlib.h>

#include "core/json_writer.h"
#include "gpuprof/monitor.h"
#include "produce/monitor/monitor_sink.h"

void gp_monitor_event_write_json(const gp_monitor_event *ev, FILE *fp)
{
    gp__jw w;
    gp__jw_init(&w, NULL);
    gp__jw_obj_begin(&w);
    gp__jw_kv_str(&w, "event", gp_monitor_event_type_name(ev->type));
    gp__jw_kv_str(&w, "severity", gp_severity_name(ev->severity));
    gp__jw_kv_int(&w, "ts_ns", ev->ts);
    gp__jw_kv_int(&w, "gpu", ev->device);
    if (ev->pid)
        gp__jw_kv_int(&w, "pid", ev->pid);
    if (ev->what[0])
        gp__jw_kv_str(&w, "what", ev->what);
    gp__jw_kv_double(&w, "value", ev->value);
    gp__jw_kv_double(&w, "threshold", ev->threshold);
    gp__jw_kv_str(&w, "message", ev->message);
    gp__jw_obj_end(&w);
    (void)gp__jw_take_line(&w, fp); /* the caller checks the stream */
    fflush(fp);
}

/* The event stream's listener: the monitor calls it one event at a time (never concurrently), so
 * lines of one monitor never interleave. */
static void stream_event(const gp_monitor_event *ev, void *ctx)
{
    gp_monitor_event_write_json(ev, (FILE *)ctx);
}

void gp_monitor_set_event_stream(gp_monitor *mon, FILE *fp)
{
    gp__monitor_set_sink(mon, fp ? stream_event : NULL, fp);
}

gp_status gp_monitor_health_render_json(const gp_monitor_health *h, char **out, size_t *len)
{
    gp__jw w;
    gp__jw_init(&w, NULL);
    gp__jw_obj_begin(&w);
    gp__jw_kv_str(&w, "status", gp_health_status_name(h->status));
    gp__jw_kv_int(&w, "gpus", (int64_t)h->gpus);
    gp__jw_kv_int(&w, "gpus_lost", (int64_t)h->gpus_lost);
    gp__jw_kv_int(&w, "samples_collected", (int64_t)h->samples_collected);
    gp__jw_kv_bool(&w, "running", h->running);
    gp__jw_kv_str(&w, "level", gp_monitor_level_name(h->level));
    gp__jw_kv_str(&w, "mode", gp_monitor_mode_name(h->mode));
    gp__jw_kv_int(&w, "interval_ms", h->interval_ms);
    gp__jw_kv_str(&w, "driver_version", h->driver_version);
    gp__jw_kv_str(&w, "nvml_library", h->nvml_library);
    gp__jw_key(&w, "last_error");
    if (h->last_error.msg[0])
        gp__jw_str(&w, h->last_error.msg);
    else
        gp__jw_null(&w);
    if (h->status == GP_HEALTH_UNAVAILABLE)
        gp__jw_kv_str(&w, "reason", h->last_error.msg);
    gp__jw_obj_end(&w);
    gp_status st = gp__jw_flush(&w);
    if (st != GP_OK) {
        gp__jw_finish(&w);
        return st;
    }
    *out = gp__jw_take(&w, len);
    return *out ? GP_OK : GP_ENOMEM;
}

gp_status gp_monitor_health_json(gp_monitor *mon, char **out, size_t *len)
{
    gp_monitor_health h;
    gp_monitor_get_health(mon, &h);
    return gp_monitor_health_render_json(&h, out, len);
}
