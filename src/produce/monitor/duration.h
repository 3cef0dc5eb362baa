/* Internal helper shared by the monitor's CLI commands. */
#ifndef GP_MONITOR_DURATION_H
#define GP_MONITOR_DURATION_H

#include <stdint.h>

#include "gpuprof/core.h"

/* Parses "250", "250ms", "1s", "0.5s", "2m" into milliseconds (bare numbers are ms). GP_EINVAL for
 * anything else, zero, or more than one hour. */
gp_status gp__parse_duration_ms(const char *s, uint32_t *ms) GP_WARN_UNUSED;

#endif
