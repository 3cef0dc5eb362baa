/* Streaming JSON writer with correct escaping. Errors are sticky: after the first failure every
 * call is a no-op and gp__jw_finish() returns that failure, so callers check once at the end.
 * Output is buffered and flushed to a FILE*, a gzFile, or kept in memory (take it with
 * gp__jw_take). html_safe escapes <, > and & as \u003c, \u003e, \u0026 for JSON embedded in HTML.
 */
#ifndef GP_CORE_JSON_WRITER_H
#define GP_CORE_JSON_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/util.h"

#define GP__JW_MAX_DEPTH 64

typedef struct gp__jw {
    gp__buf buf;
    FILE *fp; /* flush target or NULL */
    void *gz; /* gzFile flush target or NULL */
    bool html_safe;
    bool pretty; /* newline + indent between elements (for small human-read files) */
    bool after_key;
    int depth;
    uint8_t first[GP__JW_MAX_DEPTH];
    gp_status err;
    int err_errno; /* with err GP_EIO: errno of the failed write (ENOSPC: disk full), 0 unknown */
} gp__jw;

/* The errno of this thread's last failed write to a FILE (0: none yet): why a writer that has
 * gone out of scope failed (the CLI's "No space left on device"). */
int gp__jw_last_write_errno(void);
/* Writes to fp (NULL: keep everything in memory). */
void gp__jw_init(gp__jw *w, FILE *fp);
void gp__jw_init_gz(gp__jw *w, void *gzfile);
void gp__jw_obj_begin(gp__jw *w);
void gp__jw_obj_end(gp__jw *w);
void gp__jw_arr_begin(gp__jw *w);
void gp__jw_arr_end(gp__jw *w);
void gp__jw_key(gp__jw *w, const char *key);
void gp__jw_str(gp__jw *w, const char *s);
void gp__jw_strn(gp__jw *w, const char *s, size_t len);
void gp__jw_int(gp__jw *w, int64_t v);
void gp__jw_uint(gp__jw *w, uint64_t v);
/* Shortest round-trip form (%.17g trimmed); NaN and infinities are written as null. */
void gp__jw_double(gp__jw *w, double v);
/* A fixed-point number with `decimals` digits after the point (e.g. 3 for ms). NaN -> null. */
void gp__jw_fixed(gp__jw *w, double v, int decimals);
/* An integer nanosecond count written exactly as microseconds with 3 decimals ("12.345"). */
void gp__jw_ns_as_us(gp__jw *w, int64_t ns);
void gp__jw_bool(gp__jw *w, bool v);
void gp__jw_null(gp__jw *w);
/* Inserts already-valid JSON text as one value. */
void gp__jw_raw(gp__jw *w, const char *json, size_t len);
/* Appends text outside the JSON structure (no separator), e.g. a final newline. */
void gp__jw_text(gp__jw *w, const char *text, size_t len);
/* Convenience: key + value. */
void gp__jw_kv_str(gp__jw *w, const char *key, const char *s);
void gp__jw_kv_int(gp__jw *w, const char *key, int64_t v);
void gp__jw_kv_uint(gp__jw *w, const char *key, uint64_t v);
void gp__jw_kv_double(gp__jw *w, const char *key, double v);
void gp__jw_kv_bool(gp__jw *w, const char *key, bool v);
/* Flushes buffered output to the target. Returns the sticky status. Does not free. */
gp_status gp__jw_flush(gp__jw *w);
/* Flushes and frees the buffer; returns the sticky status. */
gp_status gp__jw_finish(gp__jw *w);
/* For in-memory writers: hands over the NUL-terminated text (caller frees) and its length. */
char *gp__jw_take(gp__jw *w, size_t *len);
/* For in-memory writers: writes the document and a newline to fp with one fwrite (a line is never
 * interleaved with another thread's output) and frees it. GP_ENOMEM or GP_EIO. */
gp_status gp__jw_take_line(gp__jw *w, FILE *fp);

/* Appends s escaped for a JSON string body (no quotes) to b. Ill-formed UTF-8 (a stray byte, a
 * cut sequence, an overlong form, a surrogate) becomes U+FFFD, so the output is always valid JSON;
 * gp__jw_raw does the same inside the text it inserts. */
gp_status gp__json_escape(gp__buf *b, const char *s, size_t len, bool html_safe) GP_WARN_UNUSED;

/* How many ill-formed UTF-8 subparts every JSON writer of this process has replaced with U+FFFD so
 * far (the CLI warns with it when a command ends). */
uint64_t gp__json_utf8_replaced(void);

#endif
