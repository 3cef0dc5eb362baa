/* The profile server's view of its directory (listing.c): which entries it lists, and whether a
 * file or folder may be read. A served folder may hold anything: a FIFO or a device is never
 * opened, and a symbolic link that leads out of the folder is refused unless the server follows
 * links (gpuprof serve --follow-symlinks). */
#ifndef GP_SERVE_SERVE_H
#define GP_SERVE_SERVE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "gpuprof/core.h"
#include "gpuprof/serve.h"
#include "render/serve_pages.h"

enum { GP__SERVE_PATH_MAX = 4096 };

typedef struct gp__serve_dir {
    char dir[GP__SERVE_PATH_MAX];  /* as given */
    char real[GP__SERVE_PATH_MAX]; /* resolved (realpath): what "inside" means */
    bool follow_symlinks;
} gp__serve_dir;

/* Fills d for dir. GP_ENOENT when dir is not a directory, GP_EINVAL when its path is too long. */
gp_status gp__serve_dir_init(gp__serve_dir *d, const char *dir, bool follow_symlinks,
                             gp_error *err) GP_WARN_UNUSED;

/* Whether path may be read as a directory (want_dir) or a regular file, following a symbolic link
 * only inside d (or anywhere with follow_symlinks). GP_OK with *st of the target; else why says
 * what it is: GP_ENOTSUP a link out of the folder, GP_EINVAL not a regular file (or directory),
 * GP_ENOENT missing. */
gp_status gp__serve_check_path(const gp__serve_dir *d, const char *path, bool want_dir,
                               struct stat *st, char *why, size_t cap);

/* The listing, sorted by name: trace files (*.json, *.json.gz), job folders (with rank files of
 * their own), torch.compile logs (TORCH_TRACE: a file, or a folder without rank traces whose
 * rank logs gp_compile_log_read would read; by name, gp_compile_log_name), and for a folder
 * without rank files of its own each subfolder that has some ("folder/sub"); hidden entries,
 * other files and refused links left out. malloc'd (*n entries), NULL with *n 0 when there are
 * none. */
gp__serve_entry *gp__serve_list(const gp__serve_dir *d, size_t *n);

/* One listing as the cache holds it: immutable, shared by reference (issue 38: a copy per
 * request was 54 MB at 100,000 files). gen is the same for two snapshots only when they list the
 * same entries: a folder listed again unchanged keeps its snapshot. */
typedef struct gp__serve_listing {
    size_t refs; /* atomic; the cache holds one while the snapshot is current */
    uint64_t gen;
    size_t n;
    gp__serve_entry *v; /* sorted by name; NULL when n is 0 */
} gp__serve_listing;

/* A reference to d's current listing (listed again when stale, as gp__serve_list); release it
 * with gp__serve_listing_put. NULL when out of memory. */
const gp__serve_listing *gp__serve_listing_get(const gp__serve_dir *d);
/* Releases a reference from gp__serve_listing_get (NULL: nothing). */
void gp__serve_listing_put(const gp__serve_listing *l);

/* How many listing bodies (the JSON listing, the index page) the server has built (profiles.c:
 * once per listing change, shared by the requests; for the tests). */
uint64_t gp__profile_server_bodies_built(const gp_profile_server *s);

/* Finds name in the listing (a name is never a path: "group/job" only as the listing has it) and
 * writes its path. For a folder (a job, a compile log's), every rank file must be readable.
 * GP_ENOENT when it is not listed; GP_ENOTSUP or GP_EINVAL (why names the file) when a rank file
 * may not be read. */
gp_status gp__serve_find(const gp__serve_dir *d, const char *name, gp__serve_entry *out, char *path,
                         size_t path_cap, char *why, size_t cap) GP_WARN_UNUSED;

#endif
