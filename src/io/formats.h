/* The reader registry: every trace format gpuprof reads is one entry of one table (formats.c), as
 * Perfetto's trace processor sniffs a trace's first bytes and creates the reader that claims them,
 * and curl looks a URL's scheme up in one table of protocol handlers.
 *
 * An entry names the format, says how sure it is that the first bytes of an input are its own
 * (sniff), which file names a directory listing takes as its traces (file_name), and reads an
 * opened input into a new trace (read). An entry whose records are fed by a producer rather than
 * read from a file (CUPTI activity records, delivered to the tracer in process) has no sniff and no
 * read; it names the io mapping its producer calls (records). Adding a reader: the walkthrough in
 * docs/internals/io.md ("Adding a reader"). Internal (gp__ prefix). */
#ifndef GP_IO_FORMATS_H
#define GP_IO_FORMATS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/input.h"
#include "gpuprof/trace.h"

/* How sure an entry is that bytes are its format's. */
typedef enum gp__sniff { GP__SNIFF_NO = 0, GP__SNIFF_MAYBE = 1, GP__SNIFF_YES = 2 } gp__sniff;

/* Bytes of an input's start shown to the sniffers (fewer for a shorter input). */
#define GP__SNIFF_BYTES 4096

typedef struct gp__trace_format {
    const char *name; /* "kineto", "legacy_autograd", "cupti" */
    const char *what; /* one line: what the format is and who writes it */
    /* head[0..n): the input's first bytes (n may be under GP__SNIFF_BYTES). NULL: no file. */
    gp__sniff (*sniff)(const char *head, size_t n);
    /* Whether a file of a directory named name (no folder, not hidden) is one of its traces.
     * NULL: none. */
    bool (*file_name)(const char *name);
    /* Reads the opened input, which it takes over (and closes), into a new trace *out (the
     * caller's, gp_trace_free). path is the file's path (NULL for memory): a reader may open it
     * again (the Kineto reader's parallel pieces). Fails as gp_trace_read. NULL: no file. */
    gp_status (*read)(const char *path, gp__input *in, const gp_read_opts *opts, gp_trace **out,
                      gp_error *err);
    const char *records; /* an entry without a file: the io header its producer maps through */
} gp__trace_format;

/* The table, in order of preference for ties; *n its length. */
const gp__trace_format *gp__trace_formats(size_t *n);

/* The reader of an input whose first bytes are head[0..n) (n 0: unknown, e.g. gzip or a stream):
 * the entry with a read whose sniff is surest, the first of equals; when none claims the bytes,
 * the first entry (Kineto JSON), whose reader says what is wrong with them. Never NULL. */
const gp__trace_format *gp__trace_format_of(const char *head, size_t n);

/* The reader of an opened input (its first bytes peeked when that reads nothing: core/input.h). */
const gp__trace_format *gp__trace_format_of_input(const gp__input *in);

#endif
