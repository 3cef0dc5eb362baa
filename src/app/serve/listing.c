/* See serve.h (internal): what a served directory holds, and whether a file may be read. Nothing
 * here opens a file for reading: entries are lstat'ed and stat'ed, so a FIFO, a device or a socket
 * is seen for what it is and never read (opening a FIFO would wait for a writer). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "app/serve/http.h"
#include "app/serve/serve.h"
#include "core/util.h"
#include "gpuprof/compile.h"

static bool is_trace_name(const char *n)
{
    return gp_trace_file_name(n); /* the reader registry's names (io/formats.c) */
}

gp_status gp__serve_dir_init(gp__serve_dir *d, const char *dir, bool follow_symlinks, gp_error *err)
{
    memset(d, 0, sizeof *d);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return gp_error_set(err, GP_ENOENT, "%s: not a directory", dir);
    if (strlen(dir) >= sizeof d->dir)
        return gp_error_set(err, GP_EINVAL, "%s: path too long", dir);
    if (!realpath(dir, d->real))
        return gp_error_set(err, GP_EIO, "%s: %s", dir, strerror(errno));
    snprintf(d->dir, sizeof d->dir, "%s", dir);
    d->follow_symlinks = follow_symlinks;
    gp__http_hide_prefix(d->dir); /* error replies name files under it, never it (issue 38) */
    gp__http_hide_prefix(d->real);
    return GP_OK;
}

gp_status gp__serve_check_path(const gp__serve_dir *d, const char *path, bool want_dir,
                               struct stat *st, char *why, size_t cap)
{
    struct stat lst;
    if (lstat(path, &lst) != 0)
        return snprintf(why, cap, "%s", strerror(errno)), GP_ENOENT;
    if (S_ISLNK(lst.st_mode) && !d->follow_symlinks) {
        char real[PATH_MAX];
        size_t n = strlen(d->real);
        if (!realpath(path, real))
            return snprintf(why, cap, "a symbolic link to nothing"), GP_ENOENT;
        if (strncmp(real, d->real, n) != 0 || (real[n] != '/' && real[n] != 0))
            return snprintf(why, cap,
                            "a symbolic link out of the served folder (gpuprof serve "
                            "--follow-symlinks serves it)"),
                   GP_ENOTSUP;
    }
    if (stat(path, st) != 0)
        return snprintf(why, cap, "%s", strerror(errno)), GP_ENOENT;
    if (want_dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode))
        return snprintf(why, cap, "not a %s (a FIFO, device or socket is never read)",
                        want_dir ? "directory" : "regular file"),
               GP_EINVAL;
    return GP_OK;
}

/* The rank files (names that match: traces of a job, or a compile log's rank logs as
 * gp_compile_log_read takes them) of the folder path (rel: its name in the listing): counted,
 * sizes summed, newest time into e. With why non-NULL, the first file that may not be read is
 * named there (GP_ENOTSUP, GP_EINVAL); without, such files are skipped. */
static gp_status scan_folder(const gp__serve_dir *d, const char *path, const char *rel,
                             bool (*match)(const char *), gp__serve_entry *e, char *why, size_t cap)
{
    DIR *dh = opendir(path);
    if (!dh)
        return GP_ENOENT;
    e->ranks = 0;
    e->bytes = 0;
    gp_status s = GP_OK;
    for (struct dirent *de; s == GP_OK && (de = readdir(dh));) {
        if (!match(de->d_name))
            continue;
        char file[GP__SERVE_PATH_MAX + 256 + 2], reason[160];
        snprintf(file, sizeof file, "%s/%s", path, de->d_name);
        struct stat st;
        gp_status c = gp__serve_check_path(d, file, false, &st, reason, sizeof reason);
        if (c != GP_OK) {
            if (why) {
                snprintf(why, cap, "%s/%s: %s", rel, de->d_name, reason);
                s = c;
            }
            continue;
        }
        e->ranks++;
        e->bytes += (int64_t)st.st_size;
        e->mtime = GP_MAX(e->mtime, (int64_t)st.st_mtime);
    }
    closedir(dh);
    return s;
}

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const gp__serve_entry *)a)->name, ((const gp__serve_entry *)b)->name);
}

/* Adds name (path: where it is) to the listing when it is a trace file, a job folder, a compile
 * log or a folder of them (a folder with rank traces is a job, whatever logs it holds); a folder
 * without rank files of its own lists its subfolders that have some, as "name/sub", when depth
 * is 0. */
static void consider(const gp__serve_dir *d, const char *path, const char *name, int depth,
                     gp__serve_entry **v, size_t *n, size_t *cap)
{
    struct stat st;
    char why[8];
    bool dir = gp__serve_check_path(d, path, true, &st, why, sizeof why) == GP_OK;
    bool log = !dir && !is_trace_name(name) && gp_compile_log_name(name);
    if (!dir && ((!is_trace_name(name) && !log) ||
                 gp__serve_check_path(d, path, false, &st, why, sizeof why) != GP_OK))
        return;
    gp__serve_entry e = {.job = dir,
                         .compile_log = log,
                         .dir = dir,
                         .bytes = dir ? 0 : (int64_t)st.st_size,
                         .mtime = (int64_t)st.st_mtime};
    if (snprintf(e.name, sizeof e.name, "%s", name) >= (int)sizeof e.name)
        return;
    if (dir && (scan_folder(d, path, name, is_trace_name, &e, NULL, 0) != GP_OK || e.ranks == 0) &&
        scan_folder(d, path, name, gp_compile_log_name, &e, NULL, 0) == GP_OK && e.ranks > 0) {
        e.job = false;
        e.compile_log = true;
    }
    if (dir && e.ranks == 0) {
        DIR *dh = depth == 0 ? opendir(path) : NULL;
        for (struct dirent *de; dh && (de = readdir(dh));) {
            if (de->d_name[0] == '.')
                continue;
            char sub[GP__SERVE_PATH_MAX + 256 + 2], subname[600];
            snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
            snprintf(subname, sizeof subname, "%s/%s", name, de->d_name);
            if (gp__serve_check_path(d, sub, true, &st, why, sizeof why) == GP_OK)
                consider(d, sub, subname, 1, v, n, cap);
        }
        if (dh)
            closedir(dh);
        return;
    }
    gp__serve_entry *slot = GP_PUSH(*v, *n, *cap);
    if (slot)
        *slot = e;
}

/* Lists d afresh: readdir and stat of every entry (and of a folder's rank files). */
static gp__serve_entry *list_now(const gp__serve_dir *d, size_t *n)
{
    *n = 0;
    DIR *dh = opendir(d->dir);
    if (!dh)
        return NULL;
    gp__serve_entry *v = NULL;
    size_t cap = 0;
    for (struct dirent *de; (de = readdir(dh));) {
        if (de->d_name[0] == '.')
            continue;
        char path[GP__SERVE_PATH_MAX + 256 + 2];
        snprintf(path, sizeof path, "%s/%s", d->dir, de->d_name);
        consider(d, path, de->d_name, 0, &v, n, &cap);
    }
    closedir(dh);
    if (*n > 1)
        qsort(v, *n, sizeof *v, cmp_entry);
    return v;
}

/* The listing cache (issue 38: every request listed the folder again, 0.65 s per request at
 * 100,000 files, and concurrent requests each built their own). One listing per served folder,
 * built by one request at a time under the lock and shared by reference (gp__serve_listing: a
 * request holds the snapshot, never a copy); it is listed again when the folder's modification
 * time changes (a file added, removed or renamed into it) and at least every LIST_REFRESH_MS
 * (what changes inside job folders or in a file's size; or 4 times what the last listing took,
 * when that is longer: 100,000 files took 2.6 s on a loaded machine, and every request listed
 * them again one after the other), and a listing equal to the current one keeps the current
 * snapshot and its gen. */
enum { LIST_REFRESH_MS = 2000, LIST_CACHES = 8 };

typedef struct list_cache {
    char real[GP__SERVE_PATH_MAX]; /* the folder (resolved); "" = unused */
    gp__serve_listing *cur;        /* the cache's reference; NULL = none yet */
    struct timespec dir_mtime;
    int64_t at_ms;   /* when its listing ended (monotonic) */
    int64_t cost_ms; /* how long that listing took */
    int64_t used_ms;
} list_cache;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static list_cache caches[LIST_CACHES];
static uint64_t last_gen; /* guarded by cache_lock */

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void gp__serve_listing_put(const gp__serve_listing *l)
{
    gp__serve_listing *m = (gp__serve_listing *)l;
    if (m && __atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        free(m->v);
        free(m);
    }
}

/* Makes v (n entries, owned) c's listing: kept as a new snapshot unless it equals the current
 * one. False when out of memory (v freed, the current snapshot kept). */
static bool install(list_cache *c, gp__serve_entry *v, size_t n)
{
    if (c->cur && c->cur->n == n && (n == 0 || memcmp(c->cur->v, v, n * sizeof *v) == 0)) {
        free(v);
        return true;
    }
    gp__serve_listing *l = malloc(sizeof *l);
    if (!l) {
        free(v);
        return false;
    }
    *l = (gp__serve_listing){.refs = 1, .gen = ++last_gen, .n = n, .v = v};
    gp__serve_listing_put(c->cur);
    c->cur = l;
    return true;
}

/* d's cached listing, listed again when stale; call with cache_lock held. NULL when out of
 * memory for a new slot's listing. */
static const gp__serve_listing *cached(const gp__serve_dir *d)
{
    int64_t now = mono_ms();
    struct stat st;
    struct timespec mt = {0, 0};
    if (stat(d->dir, &st) == 0)
        mt = st.st_mtim;
    list_cache *c = NULL, *lru = &caches[0];
    for (size_t i = 0; i < LIST_CACHES && !c; i++) {
        if (strcmp(caches[i].real, d->real) == 0)
            c = &caches[i];
        else if (caches[i].used_ms < lru->used_ms)
            lru = &caches[i];
    }
    if (c && c->cur && c->dir_mtime.tv_sec == mt.tv_sec && c->dir_mtime.tv_nsec == mt.tv_nsec &&
        now - c->at_ms < GP_MAX((int64_t)LIST_REFRESH_MS, 4 * c->cost_ms)) {
        c->used_ms = now;
        return c->cur;
    }
    if (!c) {
        c = lru;
        gp__serve_listing_put(c->cur);
        memset(c, 0, sizeof *c);
        snprintf(c->real, sizeof c->real, "%s", d->real);
    }
    size_t n = 0;
    gp__serve_entry *v = list_now(d, &n);
    int64_t end = mono_ms();
    if (install(c, v, n)) {
        c->dir_mtime = mt;
        c->at_ms = end;
        c->cost_ms = end - now;
    }
    c->used_ms = end;
    return c->cur;
}

const gp__serve_listing *gp__serve_listing_get(const gp__serve_dir *d)
{
    pthread_mutex_lock(&cache_lock);
    gp__serve_listing *l = (gp__serve_listing *)cached(d);
    if (l)
        __atomic_add_fetch(&l->refs, 1, __ATOMIC_ACQ_REL);
    pthread_mutex_unlock(&cache_lock);
    return l;
}

gp__serve_entry *gp__serve_list(const gp__serve_dir *d, size_t *n)
{
    const gp__serve_listing *l = gp__serve_listing_get(d);
    gp__serve_entry *v = l && l->n ? malloc(l->n * sizeof *v) : NULL;
    *n = v ? l->n : 0;
    if (v)
        memcpy(v, l->v, l->n * sizeof *v);
    gp__serve_listing_put(l);
    return v;
}

gp_status gp__serve_find(const gp__serve_dir *d, const char *name, gp__serve_entry *out, char *path,
                         size_t path_cap, char *why, size_t cap)
{
    gp_status s = GP_ENOENT;
    pthread_mutex_lock(&cache_lock); /* the name looked up in the shared listing, not a copy */
    const gp__serve_listing *c = cached(d);
    gp__serve_entry key;
    snprintf(key.name, sizeof key.name, "%s", name);
    const gp__serve_entry *hit =
        c && c->n ? bsearch(&key, c->v, c->n, sizeof *c->v, cmp_entry) : NULL;
    if (hit && strcmp(hit->name, name) == 0) {
        *out = *hit;
        s = GP_OK;
    }
    pthread_mutex_unlock(&cache_lock);
    if (s != GP_OK)
        return snprintf(why, cap, "%s: no such profile in the directory (see /)", name), s;
    snprintf(path, path_cap, "%s/%s", d->dir, name);
    if (out->dir) /* every rank file, as the reader will take them all */
        return scan_folder(d, path, name, out->job ? is_trace_name : gp_compile_log_name, out, why,
                           cap);
    struct stat st; /* a file as it is now (the listing may be up to LIST_REFRESH_MS old) */
    char reason[160];
    if ((s = gp__serve_check_path(d, path, false, &st, reason, sizeof reason)) != GP_OK)
        return snprintf(why, cap, "%s: %s", name, reason), s;
    out->bytes = (int64_t)st.st_size;
    out->mtime = (int64_t)st.st_mtime;
    return GP_OK;
}
