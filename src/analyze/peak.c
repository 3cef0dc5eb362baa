/* Peak memory: the one definition (docs/analyses.md, "Peak memory"), shared by analyze, the report
 * dashboard and diff. */
#include <string.h>

#include "core/util.h"
#include "analyze/analyze_internal.h"

const char *gp_peak_source_name(gp_peak_source s)
{
    static const char *const names[] = {[GP_PEAK_NONE] = "none",
                                        [GP_PEAK_ALLOCATOR] = "allocator",
                                        [GP_PEAK_PROFILER] = "profiler",
                                        [GP_PEAK_COUNTER] = "counter"};
    return GP_NAME_OF(names, s, "none");
}

static bool memory_series(const char *name)
{
    return strstr(name, "mem") || strstr(name, "tracked_bytes");
}

/* Keeps the largest value per source; the earliest time among equal values. */
static void consider(gp_peak_memory *best, int64_t bytes, gp_ns ts, const char *what)
{
    if (bytes < 0)
        return;
    if (best->bytes < 0 || bytes > best->bytes || (bytes == best->bytes && ts < best->ts)) {
        best->bytes = bytes;
        best->ts = ts;
        best->what = what;
    }
}

void gp_peak_memory_of(const gp_trace *t, gp_ns lo, gp_ns hi, gp_peak_memory *out)
{
    /* One pass collects each source's peak; the first source present wins. */
    gp_peak_memory src[4];
    for (int i = 0; i < 4; i++)
        src[i] = (gp_peak_memory){(gp_peak_source)i, -1, 0, ""};
    for (size_t k = 0; k < t->n_tracks; k++) {
        const gp_track *tr = &t->tracks[k];
        for (size_t i = 0; i < tr->n_events; i++) {
            const gp_event *ev = &tr->events[i];
            if ((ev->kind != GP_EV_MEMORY && ev->kind != GP_EV_RANGE) || ev->ts < lo ||
                ev->ts >= hi)
                continue;
            if (ev->kind == GP_EV_MEMORY) {
                const gp_mem_info *mi = gp_event_mem_info(t, ev);
                if (mi)
                    consider(&src[GP_PEAK_ALLOCATOR], mi->total_allocated, ev->ts, "");
            } else {
                int64_t v;
                if (gp_event_arg_int(t, ev, "mem_peak_bytes", &v))
                    consider(&src[GP_PEAK_PROFILER], v, ev->ts, gp_trace_str(t, ev->name));
            }
        }
    }
    for (size_t i = 0; i < t->n_counters; i++) {
        const gp_counter_sample *c = &t->counters[i];
        const char *series = gp_trace_str(t, c->series);
        if (c->ts >= lo && c->ts < hi && memory_series(series) && c->value >= 0 &&
            c->value < 9.2e18)
            consider(&src[GP_PEAK_COUNTER], (int64_t)c->value, c->ts, series);
    }
    *out = src[GP_PEAK_NONE];
    for (int i = GP_PEAK_ALLOCATOR; i <= GP_PEAK_COUNTER; i++)
        if (src[i].bytes >= 0) {
            *out = src[i];
            return;
        }
}

gp_status gp__analyze_peak_memory(const gp__view *v, gp_rank_analysis *r)
{
    gp_peak_memory_of(v->t, v->cpu_lo, v->cpu_hi, &r->peak_memory);
    return GP_OK;
}
