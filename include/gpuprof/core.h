/* gpuprof core: the one error type, export macros and version.
 *
 * Every fallible public function returns gp_status. Out-parameters are valid only when the call
 * returns GP_OK. Functions that can say more than a status take an optional gp_error* (may be NULL)
 * that receives a human-readable message naming the file, byte offset or field at fault. */
#ifndef GPUPROF_CORE_H
#define GPUPROF_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define GP_EXTERN __attribute__((visibility("default")))
#define GP_WARN_UNUSED __attribute__((warn_unused_result))
#define GP_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define GP_EXTERN
#define GP_WARN_UNUSED
#define GP_PRINTF(fmt, args)
#endif

#define GP_VERSION_STRING "0.1.0"

/* The one error enum of the project. Values are negative; GP_OK is 0. */
typedef enum gp_status {
    GP_OK = 0,
    GP_ENOMEM = -1,     /* an allocation failed */
    GP_EIO = -2,        /* reading or writing a file failed (errno text in the detail) */
    GP_EPARSE = -3,     /* malformed input; the detail names file and byte offset */
    GP_EINVAL = -4,     /* an invalid argument, option or field value */
    GP_ENOTSUP = -5,    /* not supported by this device, driver or build */
    GP_ENOENT = -6,     /* a file, name or item was not found */
    GP_ENODRIVER = -7,  /* a driver library (NVML, CUDA, CUPTI) could not be loaded */
    GP_ELIMIT = -8,     /* a size cap or memory budget was reached */
    GP_ESTATE = -9,     /* the call is not valid in the object's current state */
    GP_EGPULOST = -10,  /* the GPU fell off the bus or stopped answering */
    GP_EEXTERNAL = -11, /* an external library or tool failed; the detail says which */
    GP_EEMPTY = -12     /* nothing to report (e.g. no events recorded) */
} gp_status;

/* Returns a static, human-readable name for a status ("out of memory", ...). Never NULL. */
GP_EXTERN const char *gp_strerror(gp_status status);

/* A status plus a message: the one carrier of error and note text in gpuprof. Functions that accept
 * a gp_error* fill it on failure when it is non-NULL; the message is always NUL-terminated and
 * truncated to fit. A result struct that can say what it could not do holds a gp_error too: status
 * GP_OK with a non-empty msg is a note (the result is valid; msg says what was left out and why),
 * any other status an error. A zeroed gp_error is "OK, nothing to say". */
typedef struct gp_error {
    gp_status status;
    char msg[512];
} gp_error;

/* Sets err->status and formats err->msg; a NULL err is ignored. Returns status, so callers can
 * write `return gp_error_set(err, GP_EINVAL, "...")`. */
GP_EXTERN gp_status gp_error_set(gp_error *err, gp_status status, const char *fmt, ...)
    GP_PRINTF(3, 4);

/* Appends one sentence to err->msg, separated by a space, leaving err->status as it is (notes keep
 * GP_OK). Text that does not fit is dropped whole or truncated; a NULL err is ignored. */
GP_EXTERN void gp_error_note(gp_error *err, const char *fmt, ...) GP_PRINTF(2, 3);

/* Maps a status to the CLI exit code convention: 0 for GP_OK, 2 for input/usage errors and 1 for
 * everything else that failed at run time. */
GP_EXTERN int gp_status_exit_code(gp_status status);

/* Writes len bytes of data to path the way every gpuprof output is written: a regular file (or a
 * new one) through a temporary file beside it, fsync and rename, so a reader sees the old file or
 * the whole new one and a failed write (a full disk) leaves the old file and no temporary file; a
 * symbolic link is written through (the link stays); a device, FIFO or Unix socket is written
 * into, never replaced; "-" is standard output; a directory is refused. GP_EIO (GP_EINVAL: a
 * directory, a link loop, a path too long) with err naming path on failure. For bindings (the
 * Python package) that write files of their own. */
GP_EXTERN gp_status gp_write_file(const char *path, const void *data, size_t len, gp_error *err);

#ifdef __cplusplus
}
#endif
#endif
