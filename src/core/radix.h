/* Stable LSD radix sort of (key, value) pairs: the analyses' correlation joins, queue boundaries
 * and interval lists sort with it. */
#ifndef GP_CORE_RADIX_H
#define GP_CORE_RADIX_H

#include <stddef.h>
#include <stdint.h>

#include "gpuprof/core.h"

/* Sorts n (keys[i], vals[i]) pairs by key, ascending, stably. GP_ENOMEM. */
gp_status gp__radix_sort_kv(uint64_t *keys, uint64_t *vals, size_t n) GP_WARN_UNUSED;

#endif
