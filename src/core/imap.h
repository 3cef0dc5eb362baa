/* Open-addressing hash map from int64 keys to uint64 values (e.g. correlation id -> event index).
 * Key INT64_MIN is reserved as the empty marker. */
#ifndef GP_CORE_IMAP_H
#define GP_CORE_IMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "core/util.h"

typedef struct gp__imap {
    int64_t *keys;
    uint64_t *vals;
    size_t n, n_slots; /* n_slots: power of two or 0 */
} gp__imap;

/* expected: number of keys to size for (may be 0). */
gp_status gp__imap_init(gp__imap *m, size_t expected) GP_WARN_UNUSED;
void gp__imap_free(gp__imap *m);
/* Inserts or overwrites. */
gp_status gp__imap_put(gp__imap *m, int64_t key, uint64_t val) GP_WARN_UNUSED;
/* Returns true and writes *val when present. */
bool gp__imap_get(const gp__imap *m, int64_t key, uint64_t *val);

#endif
