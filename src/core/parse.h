/* The one number parser of gpuprof: the CLI's options and the monitor's configuration read
 * integers, reals and durations through these. Each reads the whole text (leading blanks and a
 * sign as strtoll / strtod read them, nothing after) and checks the range; none prints. */
#ifndef GP_CORE_PARSE_H
#define GP_CORE_PARSE_H

#include <stdbool.h>
#include <stdint.h>

#include "gpuprof/core.h"

/* A decimal integer in [min, max]; an out-of-range magnitude counts as LLONG_MIN/LLONG_MAX. */
bool gp__parse_int(const char *text, long long min, long long max, long long *out);
/* A decimal integer in [0, max] that does not start with '-'; past 2^64-1 counts as 2^64-1. */
bool gp__parse_uint(const char *text, unsigned long long max, unsigned long long *out);
/* A real number (strtod syntax) in [lo, hi]; NaN is out of every range. */
bool gp__parse_real(const char *text, double lo, double hi, double *out);
/* A non-negative, finite duration with an optional unit ns, us, ms, s, m or min; a bare number is
 * in units of bare_ns nanoseconds (1 for the CLI's --min-duration, 1e6 for the monitor's
 * intervals): "50us" -> 50000. Rounded to the nearest ns. */
bool gp__parse_duration_ns(const char *text, double bare_ns, int64_t *out);
/* The monitor's intervals: "250", "250ms", "1s", "0.5s", "2m" in milliseconds (bare numbers are
 * ms). GP_EINVAL for anything else, for zero, or for more than one hour. */
gp_status gp__parse_duration_ms(const char *text, uint32_t *ms) GP_WARN_UNUSED;

#endif
