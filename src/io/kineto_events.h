/* Kineto events as the reader sees them: the fields of one event object, filled while it is parsed
 * (kineto_events.c, with the args object in kineto_args.c) and turned into the model once the
 * object is complete. Internal to src/io. */
#ifndef GP_IO_KINETO_EVENTS_H
#define GP_IO_KINETO_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/kineto_reader.h"

/* Categories, from the "cat" string. */
typedef enum gp__kineto_cat {
    CAT_NONE = 0,
    CAT_CPU_OP,
    CAT_USER_ANNOTATION,
    CAT_GPU_USER_ANNOTATION,
    CAT_PYTHON,
    CAT_RUNTIME,
    CAT_DRIVER,
    CAT_KERNEL,
    CAT_MEMCPY,
    CAT_MEMSET,
    CAT_SYNC,
    CAT_CPU_INSTANT,
    CAT_OVERHEAD,
    CAT_RANGE,
    CAT_AC2G,        /* launch flows: implied by correlation ids */
    CAT_KNOWN_OTHER, /* categories we know and keep as GP_EV_OTHER without a warning ("Trace") */
    CAT_UNKNOWN
} gp__kineto_cat;

/* A JSON value that is a number or a string, as seen in pid/tid. */
typedef struct gp__kineto_idval {
    bool present;
    bool is_str;
    bool numeric; /* is_str but all digits (legacy "25738"), or "stream 7" */
    int64_t num;
    const char *s;
    size_t len;
} gp__kineto_idval;

/* The legacy autograd-profiler format's two pids (see kineto_events.c, legacy_pid_of): an "X"
 * event without "cat" on one of them is read as an operator or a kernel of that format. */
typedef enum gp__legacy_pid { GP__LEGACY_NONE = 0, GP__LEGACY_CPU, GP__LEGACY_CUDA } gp__legacy_pid;

/* Which of the two the pid string s[0..len) names ("CPU functions", "CUDA functions"). The reader
 * decides with it, and the Chrome writer (chrome_writer.c) so that what it writes reads back. */
gp__legacy_pid gp__kineto_legacy_pid_name(const char *s, size_t len);

/* Everything one event may carry, filled by parse_event and consumed by commit_event. */
typedef struct gp__kineto_fields {
    char ph;
    gp__kineto_cat cat;
    const char *cat_s;
    size_t cat_len;
    const char *name;
    size_t name_len;
    uint64_t name_hash;
    bool name_escaped;
    gp__kineto_idval pid, tid;
    bool has_ts, has_dur;
    bool quoted_time; /* "ts" or "dur" was a string */
    int64_t ts, dur;
    bool has_id;
    int64_t id;
    const char *args_s; /* raw args object text */
    size_t args_len;
    /* args of interest (has_* when present) */
    bool has_ext, has_corr, has_stream, has_device;
    int64_t ext, corr, stream, device, context;
    int64_t cbid;
    int32_t grid[3], block[3];
    int64_t regs, smem, queued, bytes;
    double bps, wps, occ, bw;
    int64_t graph_id, graph_node;
    int64_t py_id, py_parent;
    bool py_parent_null;
    int64_t addr, mem_bytes, total_alloc, total_res, dev_type, dev_id;
    bool has_mem_bytes;
    const char *sync_kind;
    size_t sync_kind_len;
    int64_t wait_on_stream;
    int64_t wait_on_event_corr;
    const char *collective, *dtype, *copy_kind;
    size_t collective_len, dtype_len, copy_kind_len;
    /* Process Group Name / Description (strings); Ranks: a string's content or an array's text */
    const char *pg_name, *pg_desc, *pg_ranks;
    size_t pg_name_len, pg_desc_len, pg_ranks_len;
    int64_t in_nelems, out_nelems, group_size;
    /* record_shapes args of a cpu_op: raw JSON text of each value (NULL when absent) */
    const char *in_dims, *in_types, *in_strides, *in_concrete;
    size_t in_dims_len, in_types_len, in_strides_len, in_concrete_len;
    /* metadata args */
    const char *meta_name;
    size_t meta_name_len;
    bool has_sort_index;
    int64_t sort_index;
    /* counter args: first numeric member */
    const char *ctr_key;
    size_t ctr_key_len;
    double ctr_value;
    int n_ctr;
} gp__kineto_fields;

/* Parses the args object at p (blanks first) into the fields of interest of f, and records its
 * raw text in f->args_s / f->args_len. A value that is not an object is skipped. Returns the
 * position after it. Errors longjmp (io/json_scan.h). */
const char *gp__kineto_parse_args(gp__reader *r, const char *p, gp__kineto_fields *f);

#endif
