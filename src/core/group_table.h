/* Groups keyed by (kind, name text): a dense, insertion-ordered array of caller-defined records,
 * found by open addressing on the key's hash. `gpuprof summary` (per-name statistics) and
 * `gpuprof diff` (per-name samples of two sides) group events this way; a record type starts
 * with a gp__group_key and adds its own fields.
 *
 *   typedef struct row { gp__group_key key; int64_t *durs; size_t n, cap; } row;
 *   gp__group_table t;
 *   gp__group_table_init(&t, sizeof(row), false);
 *   uint32_t idx = gp__group_find(&t, kind, name, len);   // 0: out of memory
 *   row *r = gp__group_at(&t, idx - 1);
 */
#ifndef GP_CORE_GROUP_TABLE_H
#define GP_CORE_GROUP_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gp__group_key {
    const char *name; /* the caller's text, or the table's copy (copy_names) */
    size_t len;
    uint64_t hash;
    int32_t kind;
} gp__group_key;

typedef struct gp__group_table {
    void *recs; /* n records of rec_size bytes, each starting with a gp__group_key */
    size_t rec_size, n, cap;
    uint32_t *slots; /* record index + 1, 0 = empty */
    size_t n_slots;
    bool copy_names; /* keep a NUL-terminated copy of each name (freed with the table) */
} gp__group_table;

void gp__group_table_init(gp__group_table *t, size_t rec_size, bool copy_names);
/* The hash of a key (stable: diff seeds its bootstrap with it). */
uint64_t gp__group_hash(int32_t kind, const char *name, size_t len);
/* Index + 1 of the record for (kind, name); a new record is zeroed apart from its key. 0 when out
 * of memory. Records may move when one is added: do not keep pointers across calls. */
uint32_t gp__group_find(gp__group_table *t, int32_t kind, const char *name, size_t len);
/* Record i (0-based). */
static inline void *gp__group_at(const gp__group_table *t, size_t i)
{
    return (char *)t->recs + i * t->rec_size;
}
/* Frees the records, the slots and the copied names (not what records point to). */
void gp__group_table_free(gp__group_table *t);

#endif
