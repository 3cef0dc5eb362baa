/* Output files that never clobber what is at the target (#21 items 1 and 10).
 *
 * What gp__afile_open does depends on what the path names:
 * - a regular file or nothing: write a temporary file beside the target, then fsync + rename +
 *   fsync of the directory, so a reader sees either the old file or the complete new one, never a
 *   partial one, even after a crash. A new file gets mode 0666 minus the umask (as open(2) would
 *   give it); a replaced file keeps its mode;
 * - a symbolic link (a chain of them): the same, at the file the link finally names (created when
 *   the link dangles); the link itself stays;
 * - a character or block device, a FIFO, a Unix socket: written straight into (a socket is
 *   connected to), never renamed over; an abort cannot take back what was written;
 * - "-": standard output (flushed, not closed, by commit);
 * - a directory: an error.
 *
 * Temporary files are named "<target>.tmp.XXXXXXXX" and locked (flock) while being written. Each
 * open removes the unlocked ones of the same target (left by a writer that was killed), and the
 * handlers of gp__afile_cleanup_on_signals remove this process's own on SIGINT, SIGTERM and
 * SIGHUP. */
#ifndef GP_CORE_ATOMIC_FILE_H
#define GP_CORE_ATOMIC_FILE_H

#include <stdio.h>

#include "gpuprof/core.h"

typedef enum gp__afile_mode {
    GP__AFILE_ATOMIC, /* temporary file + rename */
    GP__AFILE_DIRECT, /* device, FIFO or socket: written in place */
    GP__AFILE_STDOUT  /* "-" */
} gp__afile_mode;

typedef struct gp__afile {
    FILE *fp;            /* write here */
    char path[4096];     /* the name given, for messages */
    char target[4096];   /* the file written: path with symbolic links followed */
    char tmp[4096 + 32]; /* temporary name (atomic mode) */
    gp__afile_mode mode;
    int slot; /* the temporary file's entry in the signal-cleanup table, or -1 */
} gp__afile;

/* Opens path for writing as described above. GP_EIO (or GP_EINVAL: a directory, a path too
 * long, a link loop) with err naming the path on failure. */
gp_status gp__afile_open(gp__afile *f, const char *path, gp_error *err) GP_WARN_UNUSED;
/* Flushes and finishes: in atomic mode fsyncs, closes and renames onto the target (on failure
 * removes the temporary file); in direct mode closes; for stdout flushes. */
gp_status gp__afile_commit(gp__afile *f, gp_error *err) GP_WARN_UNUSED;
/* Closes and removes the temporary file; the target is untouched (in direct mode, what was written
 * stays written). Safe to call after commit. */
void gp__afile_abort(gp__afile *f);
/* Writes len bytes to path as gp__afile_open / gp__afile_commit do. */
gp_status gp__write_file_atomic(const char *path, const void *data, size_t len,
                                gp_error *err) GP_WARN_UNUSED;
/* For programs (the CLI), not the library: on SIGINT, SIGTERM and SIGHUP, removes the temporary
 * files being written, then dies of the signal as it would have. Handlers installed later for
 * the same signals (a server's stop) replace these. */
void gp__afile_cleanup_on_signals(void);

#endif
