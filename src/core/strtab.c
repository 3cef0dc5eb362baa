#include "core/strtab.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

#define CHUNK_MIN (64 * 1024)

gp_status gp__strtab_init(gp__strtab *t)
{
    memset(t, 0, sizeof *t);
    t->n_slots = 1024;
    t->slots = calloc(t->n_slots, sizeof *t->slots);
    if (!t->slots)
        return GP_ENOMEM;
    gp__strent *e = GP_PUSH(t->ents, t->n, t->cap);
    if (!e) {
        free(t->slots);
        t->slots = NULL; /* callers may run their own cleanup (gp__strtab_free) after a failure */
        return GP_ENOMEM;
    }
    e->s = "";
    return GP_OK;
}

void gp__strtab_free(gp__strtab *t)
{
    for (size_t i = 0; i < t->n_chunks; i++)
        free(t->chunks[i]);
    free(t->chunks);
    free(t->ents);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

static gp_status rehash(gp__strtab *t)
{
    size_t ns = t->n_slots * 2;
    uint32_t *slots = calloc(ns, sizeof *slots);
    if (!slots)
        return GP_ENOMEM;
    for (uint32_t id = 1; id < t->n; id++) {
        size_t i = t->ents[id].hash32 & (ns - 1);
        while (slots[i])
            i = (i + 1) & (ns - 1);
        slots[i] = id;
    }
    free(t->slots);
    t->slots = slots;
    t->n_slots = ns;
    return GP_OK;
}

static char *arena_copy(gp__strtab *t, const char *s, size_t len)
{
    if (t->chunk_used + len + 1 > t->chunk_cap) {
        size_t cap = len + 1 > CHUNK_MIN ? len + 1 : CHUNK_MIN;
        char *c = malloc(cap);
        if (!c)
            return NULL;
        char **slot = GP_PUSH(t->chunks, t->n_chunks, t->cap_chunks);
        if (!slot) {
            free(c);
            return NULL;
        }
        *slot = c;
        t->chunk = c;
        t->chunk_cap = cap;
        t->chunk_used = 0;
    }
    char *d = t->chunk + t->chunk_used;
    memcpy(d, s, len);
    d[len] = '\0';
    t->chunk_used += len + 1;
    return d;
}

uint64_t gp__strtab_hash(const char *s, size_t n)
{
    if (n <= 48)
        return gp__hash_bytes(s, n);
    char sample[48 + sizeof n];
    memcpy(sample, s, 16);
    memcpy(sample + 16, s + n / 2 - 8, 16);
    memcpy(sample + 32, s + n - 16, 16);
    memcpy(sample + 48, &n, sizeof n);
    return gp__hash_bytes(sample, sizeof sample);
}

uint32_t gp__strtab_find(const gp__strtab *t, const char *s, size_t len)
{
    if (len == 0)
        return 0;
    uint32_t h32 = (uint32_t)gp__strtab_hash(s, len);
    size_t i = h32 & (t->n_slots - 1);
    for (uint32_t id; (id = t->slots[i]) != 0; i = (i + 1) & (t->n_slots - 1)) {
        const gp__strent *e = &t->ents[id];
        if (e->hash32 == h32 && e->len == len && memcmp(e->s, s, len) == 0)
            return id;
    }
    return 0;
}

gp_status gp__strtab_intern_h(gp__strtab *t, const char *s, size_t len, uint64_t h, uint32_t *id)
{
    if (len == 0) {
        *id = 0;
        return GP_OK;
    }
    if (len > UINT32_MAX)
        return GP_ELIMIT;
    uint32_t h32 = (uint32_t)h;
    size_t mask = t->n_slots - 1;
    size_t i = h32 & mask;
    for (uint32_t cur; (cur = t->slots[i]) != 0; i = (i + 1) & mask) {
        const gp__strent *e = &t->ents[cur];
        if (e->hash32 == h32 && e->len == len && memcmp(e->s, s, len) == 0) {
            *id = cur;
            return GP_OK;
        }
    }
    if (t->n >= UINT32_MAX)
        return GP_ELIMIT;
    char *copy = arena_copy(t, s, len);
    if (!copy)
        return GP_ENOMEM;
    gp__strent *e = GP_PUSH(t->ents, t->n, t->cap);
    if (!e)
        return GP_ENOMEM;
    e->s = copy;
    e->len = (uint32_t)len;
    e->hash32 = h32;
    uint32_t nid = (uint32_t)(t->n - 1);
    t->slots[i] = nid;
    *id = nid;
    if (t->n * 2 > t->n_slots)
        return rehash(t);
    return GP_OK;
}

gp_status gp__strtab_intern(gp__strtab *t, const char *s, size_t len, uint32_t *id)
{
    return gp__strtab_intern_h(t, s, len, gp__strtab_hash(s, len), id);
}
