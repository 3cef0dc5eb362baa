/* Nesting of the events of one track: self (exclusive) times. One pass with a stack of open
 * events; see gp_track_self_times in gpuprof/trace.h for the rules. */
#include <stdlib.h>

#include "core/invariant.h"
#include "core/util.h"
#include "gpuprof/trace.h"

/* Gives the time from *now up to `until` to the innermost open event, closing the events that end
 * by then (each gets the time it was innermost until its end). */
static void advance(const gp_track *tr, gp_ns *self, const size_t *stack, size_t *n, gp_ns *now,
                    gp_ns until)
{
    while (*n > 0) {
        size_t top = stack[*n - 1];
        gp_ns end = tr->events[top].ts + tr->events[top].dur;
        if (end > until) {
            self[top] += until - *now;
            *now = until;
            return;
        }
        if (end > *now) {
            self[top] += end - *now;
            *now = end;
        }
        (*n)--;
    }
    *now = until;
}

gp_status gp_track_self_times(const gp_track *tr, gp_ns *self)
{
    bool gpu = tr->kind == GP_TRACK_GPU_STREAM;
    for (size_t i = 0; i < tr->n_events; i++)
        self[i] = gpu ? tr->events[i].dur : 0;
    if (gpu || tr->n_events == 0)
        return GP_OK;
    /* A sweep over starts and ends: at every moment the innermost open event (the top of the
     * stack) owns the time. A child that runs past its parent stays on top until it ends. */
    size_t *stack = NULL, n = 0, cap = 0;
    gp_ns now = tr->events[0].ts;
    for (size_t i = 0; i < tr->n_events; i++) {
        const gp_event *ev = &tr->events[i];
        advance(tr, self, stack, &n, &now, GP_MAX(now, ev->ts));
        if (ev->dur == 0) /* an instant or empty event holds no time and has no children */
            continue;
        size_t *slot = GP_PUSH(stack, n, cap);
        if (!slot) {
            free(stack);
            return GP_ENOMEM;
        }
        *slot = i;
    }
    advance(tr, self, stack, &n, &now, INT64_MAX);
    free(stack);
#ifdef GP_CHECK_INVARIANTS
    gp_ns sum = 0, lo = tr->events[0].ts, hi = lo;
    for (size_t i = 0; i < tr->n_events; i++) {
        GP_INVARIANT(self[i] >= 0 && self[i] <= tr->events[i].dur, "event %zu: self %lld of %lld",
                     i, (long long)self[i], (long long)tr->events[i].dur);
        sum += self[i];
        hi = GP_MAX(hi, tr->events[i].ts + tr->events[i].dur);
    }
    GP_INVARIANT(sum <= hi - lo, "self times %lld exceed the track's span %lld", (long long)sum,
                 (long long)(hi - lo));
#endif
    return GP_OK;
}
