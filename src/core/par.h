/* A minimal fork-join helper: run a handful of independent tasks on a few threads.
 *
 * Used where one phase splits into a few coarse, independent pieces (the analyses of one rank, the
 * two halves of a view), not as a general pool: threads are created per call (tens of µs), which is
 * noise next to tasks of milliseconds. */
#ifndef GP_CORE_PAR_H
#define GP_CORE_PAR_H

#include <stddef.h>

/* Calls fn(ctx, i) once for every i in [0, n), on up to `threads` threads counting the caller's.
 * Free threads take the next index in order, so put the longest tasks first. Returns after every
 * call has returned. With threads <= 1, n <= 1, or when no thread can be started, every call runs
 * on the caller's thread, in index order. Tasks must not share mutable state; each reports its
 * result through ctx. */
void gp__par_for(size_t n, int threads, void (*fn)(void *ctx, size_t i), void *ctx);

/* The thread count for `requested` (0 = automatic: the online CPUs, at most `max`). */
int gp__par_threads(int requested, int max);

#endif
