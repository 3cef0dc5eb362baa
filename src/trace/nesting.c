/* Nesting of the events of one track: self (exclusive) times. One pass with a stack of open
 * events; see gp_track_self_times in gpuprof/trace.h for the rules. */
#include <stdlib.h>

#include "core/util.h"
#include "gpuprof/trace.h"

gp_status gp_track_self_times(const gp_track *tr, gp_ns *self)
{
    for (size_t i = 0; i < tr->n_events; i++)
        self[i] = tr->events[i].dur;
    if (tr->kind == GP_TRACK_GPU_STREAM || tr->n_events < 2)
        return GP_OK;
    size_t *stack = NULL, n = 0, cap = 0;
    for (size_t i = 0; i < tr->n_events; i++) {
        const gp_event *ev = &tr->events[i];
        gp_ns end = ev->ts + ev->dur;
        while (n > 0) {
            const gp_event *top = &tr->events[stack[n - 1]];
            if (top->ts + top->dur > ev->ts)
                break;
            n--;
        }
        if (n > 0) {
            const gp_event *parent = &tr->events[stack[n - 1]];
            gp_ns pend = parent->ts + parent->dur;
            self[stack[n - 1]] -= GP_MIN(end, pend) - ev->ts;
        }
        if (ev->dur == 0) /* an instant or empty event holds no time and has no children */
            continue;
        size_t *slot = GP_PUSH(stack, n, cap);
        if (!slot) {
            free(stack);
            return GP_ENOMEM;
        }
        *slot = i;
    }
    free(stack);
    return GP_OK;
}
