/* The monitor's one replaceable listener, for the layers above that deliver events somewhere
 * (src/render/monitor_json.c implements gp_monitor_set_event_stream with it). The producer only
 * calls callbacks; it writes nothing itself. */
#ifndef GP_PRODUCE_MONITOR_MONITOR_SINK_H
#define GP_PRODUCE_MONITOR_MONITOR_SINK_H

#include "gpuprof/monitor.h"

/* Sets the sink: a listener called for every event after those of gp_monitor_add_listener, with
 * the same guarantees (one at a time, in order, lock not held). It replaces the previous sink; a
 * NULL cb removes it. Events already handed to a delivery in progress may still reach the previous
 * sink. Does not count against the listener limit. */
void gp__monitor_set_sink(gp_monitor *mon, gp_monitor_event_cb cb, void *ctx);

#endif
