/* Open-addressing hash map from int64 keys to uint64 values (e.g. correlation id -> event index).
 * Every int64 is a valid key: INT64_MIN marks empty slots and is kept beside the table (Kineto's
 * uint64 ids wrap to it, so a trace may hold it). */
#ifndef GP_CORE_IMAP_H
#define GP_CORE_IMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "core/util.h"

typedef struct gp__imap {
    int64_t *keys;
    uint64_t *vals;
    size_t n, n_slots; /* keys in the slots; n_slots: power of two or 0 */
    bool has_min;      /* key INT64_MIN is present, its value in min_val */
    uint64_t min_val;
} gp__imap;

/* expected: number of keys to size for (may be 0). */
gp_status gp__imap_init(gp__imap *m, size_t expected) GP_WARN_UNUSED;
void gp__imap_free(gp__imap *m);
/* Inserts or overwrites. */
gp_status gp__imap_put(gp__imap *m, int64_t key, uint64_t val) GP_WARN_UNUSED;
/* Returns true and writes *val when present. */
bool gp__imap_get(const gp__imap *m, int64_t key, uint64_t *val);

#endif
