/* Documented invariants, checked where they are established.
 *
 * GP_INVARIANT(cond, fmt, ...) states a property that the code guarantees (sorted tracks, self <=
 * inclusive, idle + compute + non-compute = kernel time, ...). In debug, sanitizer and fuzz builds
 * (GP_CHECK_INVARIANTS, set by CMake) a false condition prints the condition, the message and the
 * place to stderr and aborts, so tests and fuzzers stop at the first broken figure. In release
 * builds the condition is not evaluated. Conditions must have no side effects. Internal. */
#ifndef GP_CORE_INVARIANT_H
#define GP_CORE_INVARIANT_H

#include "gpuprof/core.h"

#ifdef GP_CHECK_INVARIANTS
#define GP_INVARIANT(cond, ...)                                                                    \
    ((cond) ? (void)0 : gp__invariant_failed(#cond, __FILE__, __LINE__, __VA_ARGS__))
#else
#define GP_INVARIANT(cond, ...) ((void)sizeof(cond))
#endif

/* Prints "invariant broken: COND (MESSAGE) at FILE:LINE" and aborts. */
_Noreturn void gp__invariant_failed(const char *cond, const char *file, int line, const char *fmt,
                                    ...) GP_PRINTF(4, 5);

#endif
