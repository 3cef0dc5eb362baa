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

/* Everything one event may carry, filled by parse_event and consumed by commit_event. One per
 * reader (r->fields), set to its defaults (gp__kineto_fields_default: zeros, and -1 for the args
 * whose absence is -1) at the start of each attempt at an element, in three parts:
 *   - the core, up to GP__KINETO_ARGS_START, and the args most events carry, up to
 *     GP__KINETO_ARGS_HOT_END: set whole, a fixed size;
 *   - the other args: restored up to r->fields_hi, which read_known_arg (kineto_args.c) raises to
 *     the end of a key's fields there before it writes them.
 * Only read_known_arg writes fields from GP__KINETO_ARGS_START on; a field written anywhere else
 * must be in the core. */
typedef struct gp__kineto_fields {
    /* ---- core ---- */
    char ph;
    bool name_escaped;
    bool has_ts, has_dur;
    bool quoted_time; /* "ts" or "dur" was a string */
    bool has_id;
    gp__kineto_cat cat;
    /* counter args: the number of numeric members, the first one's key and value */
    int n_ctr;
    const char *cat_s;
    size_t cat_len;
    const char *name;
    size_t name_len;
    gp__kineto_idval pid, tid;
    int64_t ts, dur;
    int64_t id;
    const char *args_s; /* raw args object text */
    size_t args_len;
    const char *ctr_key;
    size_t ctr_key_len;
    double ctr_value;
    /* ---- args of interest (has_* when present), by the keys of kineto_args.c; the ones an
     * event usually carries together are next to each other ---- */
    int64_t ext, corr;
    bool has_ext, has_corr, has_stream, has_device;
    int64_t cbid;
    int64_t stream, device, context, queued;
    int64_t regs, smem;
    int32_t grid[3], block[3];
    double bps, wps, occ;
    int64_t bytes;
    double bw;
    int64_t py_id, py_parent;
    bool py_parent_null;
    /* ---- the other args ---- */
    /* record_shapes args of a cpu_op: raw JSON text of each value (NULL when absent) */
    const char *in_dims, *in_types, *in_strides, *in_concrete;
    size_t in_dims_len, in_types_len, in_strides_len, in_concrete_len;
    int64_t addr, mem_bytes, total_alloc, total_res, dev_type, dev_id;
    bool has_mem_bytes;
    int64_t graph_id, graph_node;
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
    /* metadata args */
    const char *meta_name;
    size_t meta_name_len;
    bool has_sort_index;
    int64_t sort_index;
} gp__kineto_fields;

/* Where the args part of gp__kineto_fields begins, and where its usual args end. */
#define GP__KINETO_ARGS_START offsetof(gp__kineto_fields, ext)
#define GP__KINETO_ARGS_HOT_END offsetof(gp__kineto_fields, in_dims)

/* The defaults of every field (kineto_events.c). */
extern const gp__kineto_fields gp__kineto_fields_default;

/* Parses the args object at p (blanks first) into the fields of interest of f, and records its
 * raw text in f->args_s / f->args_len. A value that is not an object is skipped. Returns the
 * position after it. Errors longjmp (io/json_scan.h). */
const char *gp__kineto_parse_args(gp__reader *r, const char *p, gp__kineto_fields *f);

#endif
