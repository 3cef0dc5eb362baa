/* Atomic file output: write to a temporary file beside the target, then fsync + rename + fsync of
 * the directory, so a reader sees either the old file or the complete new one, never a partial
 * one, even after a crash. A new file gets mode 0666 minus the umask (as open(2) would give it); a
 * replaced file keeps its mode. */
#ifndef GP_CORE_ATOMIC_FILE_H
#define GP_CORE_ATOMIC_FILE_H

#include <stdio.h>

#include "gpuprof/core.h"

typedef struct gp__afile {
    FILE *fp;            /* write here */
    char path[4096];     /* final name */
    char tmp[4096 + 32]; /* temporary name */
} gp__afile;

/* Creates "<path>.tmp.XXXXXXXX" in the target's directory. GP_EIO with err on failure. */
gp_status gp__afile_open(gp__afile *f, const char *path, gp_error *err) GP_WARN_UNUSED;
/* Flushes, fsyncs, closes and renames onto the target. On failure removes the temporary file. */
gp_status gp__afile_commit(gp__afile *f, gp_error *err) GP_WARN_UNUSED;
/* Closes and removes the temporary file; the target is untouched. Safe to call after commit. */
void gp__afile_abort(gp__afile *f);
/* Writes len bytes to path atomically. */
gp_status gp__write_file_atomic(const char *path, const void *data, size_t len,
                                gp_error *err) GP_WARN_UNUSED;

#endif
