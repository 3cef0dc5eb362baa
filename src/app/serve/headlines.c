/* See headlines.h: the profile server's cache of each entry's headline figures, filled by one
 * worker thread (reads are slow: a request never waits for one). */
#include "app/serve/headlines.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/lock.h"
#include "core/util.h"

typedef struct hl_ent {
    char name[512];
    int64_t bytes, mtime;
    bool done;   /* head is known (else queued for the worker, or failed) */
    bool failed; /* the worker could not read it: not queued again for this version */
    gp__headline head;
} hl_ent;

struct gp__headlines {
    const gp__serve_dir *dir;
    uint64_t max_bytes;
    gp__mutex lock;
    pthread_cond_t wake; /* a queued entry, or stop */
    pthread_t worker;
    hl_ent *v; /* guarded by lock, as every field below */
    size_t n, cap;
    uint32_t *slots; /* name -> index + 1 in v, open addressing (0: empty); n_slots a power of 2 */
    size_t n_slots;
    size_t next;      /* no entry before it is queued */
    uint64_t version; /* bumped each time the worker stores figures */
    bool stop;
};

/* FNV-1a of a name. */
static uint64_t name_hash(const char *s)
{
    uint64_t x = 1469598103934665603u;
    for (; *s; s++)
        x = (x ^ (unsigned char)*s) * 1099511628211u;
    return x;
}

/* The entry named name, NULL when there is none (issue 38: a scan per name made the index of
 * 100,000 files quadratic). */
static hl_ent *lookup(gp__headlines *h, const char *name)
{
    if (!h->n_slots)
        return NULL;
    for (size_t j = name_hash(name) & (h->n_slots - 1); h->slots[j]; j = (j + 1) & (h->n_slots - 1))
        if (strcmp(h->v[h->slots[j] - 1].name, name) == 0)
            return &h->v[h->slots[j] - 1];
    return NULL;
}

/* Indexes v[i] by name (the table doubled as it fills); false when out of memory. */
static bool index_add(gp__headlines *h, size_t i)
{
    if ((h->n + 1) * 2 > h->n_slots) {
        size_t cap = h->n_slots ? h->n_slots * 2 : 64;
        uint32_t *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return false;
        for (size_t k = 0; k < i; k++) {
            size_t j = name_hash(h->v[k].name) & (cap - 1);
            while (slots[j])
                j = (j + 1) & (cap - 1);
            slots[j] = (uint32_t)k + 1;
        }
        free(h->slots);
        h->slots = slots;
        h->n_slots = cap;
    }
    size_t j = name_hash(h->v[i].name) & (h->n_slots - 1);
    while (h->slots[j])
        j = (j + 1) & (h->n_slots - 1);
    h->slots[j] = (uint32_t)i + 1;
    return true;
}

/* Reads the trace or job named name and computes its figures; false when it cannot. */
static bool compute(const gp__serve_dir *dir, const char *name, gp__headline *out)
{
    gp__serve_entry found;
    char path[GP__SERVE_PATH_MAX + 512 + 2], why[256];
    if (gp__serve_find(dir, name, &found, path, sizeof path, why, sizeof why) != GP_OK)
        return false;
    gp_read_opts rd;
    gp_read_opts_init(&rd);
    rd.regular_files_only = true; /* never blocks on a FIFO swapped in */
    rd.no_map = true; /* a trace rewritten in place while it is read must not fault the server */
    rd.quiet = true;
    gp_job *job = NULL;
    gp_error err = {0};
    if (gp_job_read(path, &rd, &job, &err) != GP_OK)
        return false;
    bool ok = gp__job_headline(job, out) == GP_OK;
    gp_job_free(job);
    return ok;
}

/* The worker: takes the first queued entry, reads it outside the lock, stores its figures. */
static void *work(void *arg)
{
    gp__headlines *h = arg;
    gp__mutex_lock(&h->lock);
    for (;;) {
        size_t i = 0;
        while (!h->stop) {
            for (i = h->next; i < h->n && (h->v[i].done || h->v[i].failed); i++)
                ;
            h->next = i;
            if (i < h->n)
                break;
            gp__cond_wait(&h->wake, &h->lock);
        }
        if (h->stop)
            break;
        hl_ent e = h->v[i];
        gp__mutex_unlock(&h->lock);
        gp__headline head;
        bool ok = compute(h->dir, e.name, &head);
        gp__mutex_lock(&h->lock);
        hl_ent *k = lookup(h, e.name); /* the table may have grown: find it again */
        if (k && k->bytes == e.bytes && k->mtime == e.mtime) {
            k->head = head;
            k->done = ok;
            k->failed = !ok;
            h->version++;
        }
    }
    gp__mutex_unlock(&h->lock);
    return NULL;
}

gp__headlines *gp__headlines_new(const gp__serve_dir *dir, uint64_t max_bytes)
{
    gp__headlines *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->dir = dir;
    h->max_bytes = max_bytes;
    gp__mutex_init(&h->lock);
    pthread_cond_init(&h->wake, NULL);
    if (pthread_create(&h->worker, NULL, work, h) != 0) {
        pthread_cond_destroy(&h->wake);
        gp__mutex_destroy(&h->lock);
        free(h);
        return NULL;
    }
    return h;
}

void gp__headlines_free(gp__headlines *h)
{
    if (!h)
        return;
    gp__mutex_lock(&h->lock);
    h->stop = true;
    pthread_cond_signal(&h->wake);
    gp__mutex_unlock(&h->lock);
    pthread_join(h->worker, NULL);
    pthread_cond_destroy(&h->wake);
    gp__mutex_destroy(&h->lock);
    free(h->v);
    free(h->slots);
    free(h);
}

uint64_t gp__headlines_version(gp__headlines *h)
{
    if (!h)
        return 0;
    gp__mutex_lock(&h->lock);
    uint64_t v = h->version;
    gp__mutex_unlock(&h->lock);
    return v;
}

void gp__headlines_fill(gp__headlines *h, gp__serve_entry *v, size_t n)
{
    if (!h)
        return;
    bool queued = false;
    gp__mutex_lock(&h->lock);
    for (size_t i = 0; i < n; i++) {
        gp__serve_entry *e = &v[i];
        if (e->compile_log || (uint64_t)e->bytes > h->max_bytes)
            continue;
        hl_ent *slot = lookup(h, e->name);
        if (slot && slot->bytes == e->bytes && slot->mtime == e->mtime) {
            e->has_head = slot->done;
            if (slot->done)
                e->head = slot->head;
            continue;
        }
        if (!slot) {
            if (!(slot = GP_PUSH(h->v, h->n, h->cap)))
                continue; /* out of memory: no figures for it */
            snprintf(slot->name, sizeof slot->name, "%s", e->name);
            if (!index_add(h, h->n - 1)) {
                h->n--;
                continue;
            }
        }
        memset(&slot->head, 0, sizeof slot->head); /* a new entry, or a new version of it */
        slot->done = slot->failed = false;
        h->next = GP_MIN(h->next, (size_t)(slot - h->v));
        slot->bytes = e->bytes;
        slot->mtime = e->mtime;
        queued = true;
    }
    if (queued)
        pthread_cond_signal(&h->wake);
    gp__mutex_unlock(&h->lock);
}
