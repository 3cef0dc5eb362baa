/* Internals of the TORCH_TRACE reader (compile_log.c: files, lines, warnings, reading payloads
 * back; compile_records.c: one record into the compile model; compile_payload.c: what the reader
 * counts in payloads as they stream by). docs/internals/compile.md. */
#ifndef GP_IO_COMPILE_LOG_INTERNAL_H
#define GP_IO_COMPILE_LOG_INTERNAL_H

#include <nettle/md5.h>
#include <stdbool.h>
#include <stdint.h>

#include "gpuprof/compile.h"
#include "core/imap.h"
#include "core/strtab.h"
#include "core/util.h"

/* Payloads captured whole (chromium events, recompile reasons, graph break reasons) are kept up
 * to this many bytes; anything longer is not interpreted. */
#define GP__CLOG_CAPTURE_MAX (1u << 20)
/* Warnings kept in the log (all are counted). */
#define GP__CLOG_MAX_WARNINGS 100
/* The longest line the reader holds: the trace reader's element limit (GP__READ_MAX_ELEMENT,
 * 64 MiB; the longest line of the shared logs is 31 KB), so that a gzip bomb of one huge line
 * fails with GP_ELIMIT after holding at most 64 MiB (issue 38). Payloads are not held: they
 * stream by line, and only their captured part (GP__CLOG_CAPTURE_MAX) is kept. */
#define GP__CLOG_MAX_LINE ((size_t)64 << 20)

/* What the reader does with the payload lines of the current record. */
typedef enum gp__clog_capture {
    GP__CAP_NONE = 0,  /* count and hash only */
    GP__CAP_CHROMIUM,  /* chromium_event: a JSON event, parsed at its end */
    GP__CAP_RECOMPILE, /* artifact recompile_reasons: a JSON list of strings */
    GP__CAP_BREAK,     /* artifact dynamo_graph_break_reason: text */
} gp__clog_capture;

/* An open chromium "B" event waiting for its "E". */
typedef struct gp__clog_open_phase {
    uint32_t name; /* strtab id */
    uint32_t unit;
    int64_t ts_ns;
} gp__clog_open_phase;

/* Everything the reader keeps while reading one file. */
typedef struct gp__clog_reader {
    gp_compile_log *log;
    uint32_t file;
    const char *name; /* file path for messages */
    uint64_t lineno;  /* current line (1-based) */
    int32_t rank;     /* first "rank" of a record, -1 until one is seen */
    /* "str" records: interned file names, id -> strtab id. */
    uint32_t *strs;
    size_t n_strs;
    gp__imap unit_index; /* compile id key -> its latest unit's index (verified on hit) */
    int32_t session;     /* dynamo sessions seen before the current one (resets found) */
    /* The payload being read. */
    bool in_payload;
    char expect_md5[33];
    struct md5_ctx md5;
    uint64_t payload_lines;
    uint64_t payload_bytes;
    uint64_t payload_start; /* offset of its first line, 0 before one */
    uint64_t payload_end;   /* offset after its last line */
    uint64_t record_line;
    uint32_t payload_index; /* into log->payloads, UINT32_MAX when not registered */
    uint32_t payload_unit;
    gp__clog_capture capture;
    gp__buf captured;
    bool capture_overflow;
    /* Output-code scanning state. */
    bool code_in_call;
    /* Open chromium phases. */
    gp__clog_open_phase *open;
    size_t n_open, cap_open;
    /* The last dynamo_config seen and the recompile limit it sets. */
    gp__buf last_config;
    int64_t last_limit;
} gp__clog_reader;

/* Capacities of the growable arrays of a log under construction (log->priv). */
typedef struct gp__clog_priv {
    size_t cap_files, cap_units, cap_payloads, cap_kernel_names, cap_kinds, cap_warnings;
    const char *mem; /* gp_compile_log_read_buffer: the caller's bytes */
    size_t mem_len;
    bool regular_only; /* gp_compile_read_opts.regular_files_only, for reading payloads back */
} gp__clog_priv;

/* compile_log.c */
/* Tests: when non-zero, no read of the input returns more than this many bytes (lines then cross
 * every chunk boundary). */
extern size_t gp__clog_max_read;
/* Interns s[0..len) in the log's table; NULL when out of memory. */
const char *gp__clog_intern(gp_compile_log *log, const char *s, size_t len);
/* Adds a warning "<file>: line <n>: <text>" (counted always, kept up to the cap). GP_ENOMEM. */
gp_status gp__clog_warn(gp__clog_reader *r, const char *fmt, ...) GP_PRINTF(2, 3) GP_WARN_UNUSED;

/* compile_records.c */
/* One record line (glog prefix checked by the caller): json[0..len) is the text after "] ".
 * Starts the record's payload when it has one. GP_ENOMEM only. */
gp_status gp__clog_record(gp__clog_reader *r, const char *json, size_t len,
                          uint64_t next_offset) GP_WARN_UNUSED;
/* Finishes the payload being read (hash check, captured text interpreted). GP_ENOMEM only. */
gp_status gp__clog_end_payload(gp__clog_reader *r) GP_WARN_UNUSED;
/* One payload line (without its tab) at offset; end is the offset after its newline. */
gp_status gp__clog_payload_line(gp__clog_reader *r, const char *s, size_t len, uint64_t offset,
                                uint64_t end) GP_WARN_UNUSED;
/* Frees what the reader holds (not the log). */
void gp__clog_reader_free(gp__clog_reader *r);

/* compile_payload.c: counting inside payloads. */
/* A line of a graph (FX code): operator calls into *ops / *aten. */
void gp__clog_count_graph_line(const char *s, size_t len, uint32_t *ops, uint32_t *aten);
/* A line of output code. Returns the length of the kernel name it defines (NAME =
 * async_compile.<backend>(...)) with *name pointing at it, else 0; counts extern_kernels.* and
 * torch.ops.* calls inside call() into *ext / *fallback (in_call is the scanner's state). */
size_t gp__clog_code_line(const char *s, size_t len, bool *in_call, uint32_t *ext,
                          uint32_t *fallback, const char **name);
/* Parses a dynamo_graph_break_reason text into its reason (trimmed, at most cap-1 bytes in out)
 * and user location (*file into file_out, *line; "" / -1 when absent). */
void gp__clog_parse_break(const char *text, size_t len, char *out, size_t cap, char *file_out,
                          size_t file_cap, int32_t *line);

#endif
