/* String interning: each distinct byte string gets a small integer id (1, 2, ...; 0 is "").
 * Strings live in arena chunks that never move, so returned pointers stay valid until
 * gp__strtab_free. Lookup is one hash and, on a hit, one memcmp. */
#ifndef GP_CORE_STRTAB_H
#define GP_CORE_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "gpuprof/core.h"

typedef struct gp__strent {
    const char *s;
    uint32_t len;
    uint32_t hash32;
} gp__strent;

struct gp__strtab {
    gp__strent *ents; /* ents[id]; ents[0] is "" */
    size_t n, cap;
    uint32_t *slots; /* open addressing: id or 0 */
    size_t n_slots;  /* power of two */
    char *chunk;     /* current arena chunk */
    size_t chunk_used, chunk_cap;
    char **chunks;
    size_t n_chunks, cap_chunks;
};
typedef struct gp__strtab gp__strtab;

gp_status gp__strtab_init(gp__strtab *t) GP_WARN_UNUSED;
void gp__strtab_free(gp__strtab *t);
/* The table's hash of a string: every insert and lookup uses it. Every byte is hashed, from a
 * seed drawn once per process, so no file can be prepared whose names share a hash (a sample of
 * the bytes let 64 K crafted names take 20 s to intern: docs/performance.md, "String table"). */
uint64_t gp__strtab_hash(const char *s, size_t n);
/* The slots a lookup of s[0..len) visits (1 when the first slot decides), present or not: the
 * cost of an insert or a lookup, for the hardening tests. */
size_t gp__strtab_probes(const gp__strtab *t, const char *s, size_t len);
/* Interns s[0..len) with precomputed hash h, which must be gp__strtab_hash(s, len). */
gp_status gp__strtab_intern_h(gp__strtab *t, const char *s, size_t len, uint64_t h,
                              uint32_t *id) GP_WARN_UNUSED;
gp_status gp__strtab_intern(gp__strtab *t, const char *s, size_t len, uint32_t *id) GP_WARN_UNUSED;
/* 0 when absent. */
uint32_t gp__strtab_find(const gp__strtab *t, const char *s, size_t len);
static inline const char *gp__strtab_get(const gp__strtab *t, uint32_t id)
{
    return id < t->n ? t->ents[id].s : "";
}
static inline size_t gp__strtab_len(const gp__strtab *t, uint32_t id)
{
    return id < t->n ? t->ents[id].len : 0;
}

#endif
