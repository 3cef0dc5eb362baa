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
    hl_ent *v; /* guarded by lock, as n, cap and stop */
    size_t n, cap;
    bool stop;
};

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
            for (i = 0; i < h->n && (h->v[i].done || h->v[i].failed); i++)
                ;
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
        for (size_t k = 0; k < h->n; k++) /* the table may have grown: find it again */
            if (strcmp(h->v[k].name, e.name) == 0 && h->v[k].bytes == e.bytes &&
                h->v[k].mtime == e.mtime) {
                h->v[k].head = head;
                h->v[k].done = ok;
                h->v[k].failed = !ok;
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
    free(h);
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
        hl_ent *slot = NULL;
        for (size_t k = 0; k < h->n && !slot; k++)
            if (strcmp(h->v[k].name, e->name) == 0)
                slot = &h->v[k];
        if (slot && slot->bytes == e->bytes && slot->mtime == e->mtime) {
            e->has_head = slot->done;
            if (slot->done)
                e->head = slot->head;
            continue;
        }
        if (!slot && !(slot = GP_PUSH(h->v, h->n, h->cap)))
            continue;                  /* out of memory: no figures for it */
        memset(slot, 0, sizeof *slot); /* a new entry, or a new version of it */
        snprintf(slot->name, sizeof slot->name, "%s", e->name);
        slot->bytes = e->bytes;
        slot->mtime = e->mtime;
        queued = true;
    }
    if (queued)
        pthread_cond_signal(&h->wake);
    gp__mutex_unlock(&h->lock);
}
