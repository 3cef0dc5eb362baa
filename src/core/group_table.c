/* See group_table.h. */
#include "core/group_table.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

void gp__group_table_init(gp__group_table *t, size_t rec_size, bool copy_names)
{
    memset(t, 0, sizeof *t);
    t->rec_size = rec_size;
    t->copy_names = copy_names;
}

uint64_t gp__group_hash(int32_t kind, const char *name, size_t len)
{
    /* kind + 1 in 64 bits: a kind of INT32_MAX (a fuzzed timeline key) is no overflow */
    return gp__hash_bytes(name, len) ^ (((uint64_t)(int64_t)kind + 1) * 0x9E3779B97F4A7C15ULL);
}

static gp__group_key *key_at(const gp__group_table *t, size_t i)
{
    return (gp__group_key *)gp__group_at(t, i);
}

static bool grow_slots(gp__group_table *t)
{
    size_t ns = t->n_slots ? t->n_slots * 2 : 256;
    uint32_t *slots = calloc(ns, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = key_at(t, i)->hash & (ns - 1);
        while (slots[j])
            j = (j + 1) & (ns - 1);
        slots[j] = (uint32_t)i + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->n_slots = ns;
    return true;
}

uint32_t gp__group_find(gp__group_table *t, int32_t kind, const char *name, size_t len)
{
    if (t->n >= UINT32_MAX - 1 || ((t->n + 1) * 2 > t->n_slots && !grow_slots(t)))
        return 0;
    uint64_t h = gp__group_hash(kind, name, len);
    size_t j = h & (t->n_slots - 1);
    for (uint32_t idx; (idx = t->slots[j]) != 0; j = (j + 1) & (t->n_slots - 1)) {
        const gp__group_key *k = key_at(t, idx - 1);
        if (k->hash == h && k->kind == kind && k->len == len && memcmp(k->name, name, len) == 0)
            return idx;
    }
    const char *stored = name;
    if (t->copy_names) {
        char *copy = malloc(len + 1);
        if (!copy)
            return 0;
        memcpy(copy, name, len);
        copy[len] = '\0';
        stored = copy;
    }
    if (t->n == t->cap && gp__grow(&t->recs, &t->cap, t->rec_size, t->n + 1) != GP_OK) {
        if (t->copy_names)
            free((char *)stored);
        return 0;
    }
    gp__group_key *k = key_at(t, t->n);
    memset(k, 0, t->rec_size);
    *k = (gp__group_key){stored, len, h, kind};
    t->slots[j] = (uint32_t)++t->n;
    return (uint32_t)t->n;
}

void gp__group_table_free(gp__group_table *t)
{
    if (t->copy_names)
        for (size_t i = 0; i < t->n; i++)
            free((char *)key_at(t, i)->name);
    free(t->recs);
    free(t->slots);
    memset(t, 0, sizeof *t);
}
