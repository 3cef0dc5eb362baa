#include "core/strtab.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"

#define ARENA_CHUNK_MIN (64 * 1024)

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
        size_t cap = len + 1 > ARENA_CHUNK_MIN ? len + 1 : ARENA_CHUNK_MIN;
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

/* The process's secret seed of every table's hash: drawn once (getrandom, else the clock, the
 * process id and an address), never 0 once drawn. Ids never depend on it (they are given in
 * insertion order), so outputs do not either; only the slots probed do. */
static _Atomic uint64_t g_seed;

static uint64_t draw_seed(void)
{
    uint64_t s = 0;
    if (getrandom(&s, sizeof s, GRND_NONBLOCK) != (ssize_t)sizeof s) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        s = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ULL ^ (uint64_t)ts.tv_sec ^
            (uint64_t)getpid() << 32 ^ (uint64_t)(uintptr_t)&s;
    }
    s |= 1;
    uint64_t expected = 0; /* the first drawer wins: every table of the process shares one seed */
    atomic_compare_exchange_strong(&g_seed, &expected, s);
    return atomic_load(&g_seed);
}

uint64_t gp__strtab_hash(const char *s, size_t n)
{
    uint64_t seed = atomic_load_explicit(&g_seed, memory_order_relaxed);
    if (__builtin_expect(seed == 0, 0))
        seed = draw_seed();
    return gp__hash_bytes_seeded(s, n, seed);
}

size_t gp__strtab_probes(const gp__strtab *t, const char *s, size_t len)
{
    uint32_t h32 = (uint32_t)gp__strtab_hash(s, len);
    size_t probes = 1;
    for (size_t i = h32 & (t->n_slots - 1); t->slots[i] != 0; i = (i + 1) & (t->n_slots - 1)) {
        const gp__strent *e = &t->ents[t->slots[i]];
        if (e->hash32 == h32 && e->len == len && memcmp(e->s, s, len) == 0)
            break;
        probes++;
    }
    return probes;
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
