/* See headlines.h: the profile server's cache of each entry's headline figures. */
#include "app/serve/headlines.h"

#include <stdlib.h>
#include <string.h>

#include "core/lock.h"
#include "core/util.h"

typedef struct hl_ent {
    char name[512];
    int64_t bytes, mtime;
    gp__headline head;
} hl_ent;

struct gp__headlines {
    gp__mutex lock;
    hl_ent *v GP_GUARDED_BY(lock);
    size_t n GP_GUARDED_BY(lock), cap GP_GUARDED_BY(lock);
};

gp__headlines *gp__headlines_new(void)
{
    gp__headlines *h = calloc(1, sizeof *h);
    if (h)
        gp__mutex_init(&h->lock);
    return h;
}

void gp__headlines_free(gp__headlines *h)
{
    if (!h)
        return;
    gp__mutex_destroy(&h->lock);
    free(h->v);
    free(h);
}

/* The cached figures of e, true when its name, size and time match. */
static bool lookup(gp__headlines *h, const gp__serve_entry *e, gp__headline *out)
{
    bool hit = false;
    gp__mutex_lock(&h->lock);
    for (size_t i = 0; i < h->n && !hit; i++)
        if (h->v[i].bytes == e->bytes && h->v[i].mtime == e->mtime &&
            strcmp(h->v[i].name, e->name) == 0) {
            *out = h->v[i].head;
            hit = true;
        }
    gp__mutex_unlock(&h->lock);
    return hit;
}

/* Keeps e's figures (replacing those of an older version of the same name). */
static void store(gp__headlines *h, const gp__serve_entry *e, const gp__headline *head)
{
    gp__mutex_lock(&h->lock);
    hl_ent *slot = NULL;
    for (size_t i = 0; i < h->n && !slot; i++)
        if (strcmp(h->v[i].name, e->name) == 0)
            slot = &h->v[i];
    if (!slot)
        slot = GP_PUSH(h->v, h->n, h->cap);
    if (slot) {
        snprintf(slot->name, sizeof slot->name, "%s", e->name);
        slot->bytes = e->bytes;
        slot->mtime = e->mtime;
        slot->head = *head;
    }
    gp__mutex_unlock(&h->lock);
}

/* Reads the trace or job of e and computes its figures; false when it cannot. */
static bool compute(const gp__serve_dir *dir, const gp__serve_entry *e, gp__headline *out)
{
    gp__serve_entry found;
    char path[GP__SERVE_PATH_MAX + 512 + 2], why[256];
    if (gp__serve_find(dir, e->name, &found, path, sizeof path, why, sizeof why) != GP_OK)
        return false;
    gp_read_opts rd;
    gp_read_opts_init(&rd);
    rd.regular_files_only = true;
    rd.quiet = true;
    gp_job *job = NULL;
    gp_error err = {0};
    if (gp_job_read(path, &rd, &job, &err) != GP_OK)
        return false;
    bool ok = gp__job_headline(job, out) == GP_OK;
    gp_job_free(job);
    return ok;
}

void gp__headlines_fill(gp__headlines *h, const gp__serve_dir *dir, gp__serve_entry *v, size_t n,
                        size_t budget, uint64_t max_bytes)
{
    for (size_t i = 0; h && i < n; i++) {
        gp__serve_entry *e = &v[i];
        if (e->compile_log)
            continue;
        if (lookup(h, e, &e->head)) {
            e->has_head = true;
        } else if (budget > 0 && (uint64_t)e->bytes <= max_bytes) {
            budget--;
            if (compute(dir, e, &e->head)) {
                e->has_head = true;
                store(h, e, &e->head);
            }
        }
    }
}
