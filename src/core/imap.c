#include "core/imap.h"

#include <stdlib.h>

#define EMPTY INT64_MIN

static gp_status alloc_slots(gp__imap *m, size_t n_slots)
{
    m->keys = malloc(n_slots * sizeof *m->keys);
    m->vals = malloc(n_slots * sizeof *m->vals);
    if (!m->keys || !m->vals) {
        free(m->keys);
        free(m->vals);
        m->keys = NULL;
        m->vals = NULL;
        return GP_ENOMEM;
    }
    for (size_t i = 0; i < n_slots; i++)
        m->keys[i] = EMPTY;
    m->n_slots = n_slots;
    return GP_OK;
}

gp_status gp__imap_init(gp__imap *m, size_t expected)
{
    m->n = 0;
    m->has_min = false;
    size_t s = 16;
    while (s < expected * 2)
        s *= 2;
    return alloc_slots(m, s);
}

void gp__imap_free(gp__imap *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->n = m->n_slots = 0;
    m->has_min = false;
}

static gp_status grow(gp__imap *m)
{
    gp__imap old = *m;
    gp_status s = alloc_slots(m, old.n_slots * 2);
    if (s != GP_OK) {
        *m = old;
        return s;
    }
    m->n = 0;
    for (size_t i = 0; i < old.n_slots; i++)
        if (old.keys[i] != EMPTY) {
            /* Cannot fail: the new table has room for every old key. */
            size_t mask = m->n_slots - 1, j = gp__hash_u64((uint64_t)old.keys[i]) & mask;
            while (m->keys[j] != EMPTY)
                j = (j + 1) & mask;
            m->keys[j] = old.keys[i];
            m->vals[j] = old.vals[i];
            m->n++;
        }
    free(old.keys);
    free(old.vals);
    return GP_OK;
}

gp_status gp__imap_put(gp__imap *m, int64_t key, uint64_t val)
{
    if (key == EMPTY) {
        m->has_min = true;
        m->min_val = val;
        return GP_OK;
    }
    if ((m->n + 1) * 2 > m->n_slots) {
        gp_status s = grow(m);
        if (s != GP_OK)
            return s;
    }
    size_t mask = m->n_slots - 1;
    size_t i = gp__hash_u64((uint64_t)key) & mask;
    while (m->keys[i] != EMPTY && m->keys[i] != key)
        i = (i + 1) & mask;
    if (m->keys[i] == EMPTY) {
        m->keys[i] = key;
        m->n++;
    }
    m->vals[i] = val;
    return GP_OK;
}

bool gp__imap_get(const gp__imap *m, int64_t key, uint64_t *val)
{
    if (key == EMPTY) {
        if (m->has_min)
            *val = m->min_val;
        return m->has_min;
    }
    if (!m->n_slots)
        return false;
    size_t mask = m->n_slots - 1;
    size_t i = gp__hash_u64((uint64_t)key) & mask;
    while (m->keys[i] != EMPTY) {
        if (m->keys[i] == key) {
            *val = m->vals[i];
            return true;
        }
        i = (i + 1) & mask;
    }
    return false;
}
