/* See serve.h (internal): what a served directory holds, and whether a file may be read. Nothing
 * here opens a file for reading: entries are lstat'ed and stat'ed, so a FIFO, a device or a socket
 * is seen for what it is and never read (opening a FIFO would wait for a writer). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

gp__serve_entry *gp__serve_list(const gp__serve_dir *d, size_t *n)
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

gp_status gp__serve_find(const gp__serve_dir *d, const char *name, gp__serve_entry *out, char *path,
                         size_t path_cap, char *why, size_t cap)
{
    size_t n;
    gp__serve_entry *v = gp__serve_list(d, &n);
    gp_status s = GP_ENOENT;
    for (size_t i = 0; i < n && s != GP_OK; i++)
        if (strcmp(v[i].name, name) == 0) {
            *out = v[i];
            s = GP_OK;
        }
    free(v);
    if (s != GP_OK)
        return snprintf(why, cap, "%s: no such profile in the directory (see /)", name), s;
    snprintf(path, path_cap, "%s/%s", d->dir, name);
    if (out->dir) /* every rank file, as the reader will take them all */
        return scan_folder(d, path, name, out->job ? is_trace_name : gp_compile_log_name, out, why,
                           cap);
    return GP_OK;
}
