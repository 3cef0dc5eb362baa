/* Kineto / Chrome trace JSON reader: the entry points (gp_trace_read, gp_trace_read_buffer,
 * gp__trace_read_input), the reader's life, and the top level of the document.
 *
 * The reader is split by concern (docs/internals/io.md):
 *   json_scan.c        the streaming JSON scanner: buffer refills, strings, numbers, skipping
 *   kineto_reader.c    this file: the top-level object or bare array, deviceProperties,
 *                      distributedInfo, other members kept as metadata; sequential reads
 *   kineto_events.c    one element of traceEvents into the model
 *   kineto_args.c      the args object of an event
 *   kineto_parallel.c  large files cut into pieces parsed side by side, with work stealing
 *   kineto_merge.c     finishing a read (absolute times, flows, track names) and merging pieces
 *
 * The document is parsed one top-level member or one element of traceEvents at a time; r->state
 * says where, so that a parse can resume after a refill (JMP_NEED_MORE) and a piece of a parallel
 * read can start inside traceEvents. */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/input.h"
#include "core/par.h"
#include "core/util.h"
#include "gpuprof/trace.h"
#include "model/model_internal.h"
#include "io/formats.h"
#include "io/json_scan.h"
#include "io/reader_internal.h"

#define META_MAX 65536                 /* larger top-level values are not kept as metadata */
#define PARALLEL_MIN_BYTES (48u << 20) /* plain files from this size are read in parallel */

/* ---- top-level members ------------------------------------------------------------------- */

/* An integer into *out, saturated to int32; *out is untouched when the value is no integer. */
static const char *parse_i32(gp__reader *r, const char *p, int32_t *out)
{
    int64_t v;
    bool ok;
    p = gp__json_intish(r, p, &v, &ok);
    if (ok)
        *out = gp__i32_sat(v);
    return p;
}

/* The integer members of a deviceProperties object kept in gp_device_props. */
typedef struct prop_key {
    const char *key;
    size_t len;
    size_t at;   /* offsetof in gp_device_props */
    bool is_i32; /* int32_t (saturated), else int64_t */
} prop_key;

#define KEY(lit) lit, sizeof(lit) - 1
#define PROP32(lit, field)                                                                         \
    {                                                                                              \
        KEY(lit), offsetof(gp_device_props, field), true                                           \
    }
#define PROP64(lit, field)                                                                         \
    {                                                                                              \
        KEY(lit), offsetof(gp_device_props, field), false                                          \
    }

static const prop_key prop_keys[] = {
    PROP32("id", id),
    PROP64("totalGlobalMem", total_global_mem),
    PROP32("computeMajor", compute_major),
    PROP32("computeMinor", compute_minor),
    PROP32("numSms", num_sms),
    PROP32("maxThreadsPerBlock", max_threads_per_block),
    PROP32("maxThreadsPerMultiprocessor", max_threads_per_sm),
    PROP32("regsPerBlock", regs_per_block),
    PROP32("regsPerMultiprocessor", regs_per_sm),
    PROP32("warpSize", warp_size),
    PROP64("sharedMemPerBlock", shared_mem_per_block),
    PROP64("sharedMemPerMultiprocessor", shared_mem_per_sm),
    PROP64("sharedMemPerBlockOptin", shared_mem_per_block_optin),
};

/* Stores v into the member k of d when it is one of prop_keys. */
static void set_device_prop(gp_device_props *d, const char *k, size_t kl, int64_t v)
{
    for (size_t i = 0; i < sizeof prop_keys / sizeof *prop_keys; i++) {
        const prop_key *pk = &prop_keys[i];
        if (!gp__key_eq(k, kl, pk->key, pk->len))
            continue;
        char *at = (char *)d + pk->at;
        if (pk->is_i32)
            *(int32_t *)(void *)at = gp__i32_sat(v);
        else
            *(int64_t *)(void *)at = v;
        return;
    }
}

/* One object of deviceProperties, p at its '{': added to the trace's devices. */
static const char *parse_device(gp__reader *r, const char *p)
{
    gp_device_props d = {0};
    d.id = -1;
    p = gp__skip_ws(p + 1);
    while (*p != '}') {
        const char *k;
        size_t kl;
        p = gp__json_key(r, p, &k, &kl, "expected a member name in deviceProperties");
        if (GP__KEY_IS(k, kl, "name")) {
            const char *s = NULL;
            size_t l = 0;
            p = gp__json_str_or_skip(r, p, &s, &l);
            if (s)
                d.name = gp__reader_intern(r, s, l);
        } else {
            int64_t v = 0;
            bool ok = false;
            p = gp__json_intish(r, p, &v, &ok);
            if (ok)
                set_device_prop(&d, k, kl, v);
        }
        if (gp__json_sep(r, &p, '}', "expected ',' or '}'"))
            p = gp__skip_ws(p);
    }
    if (gp_trace_add_device(r->t, &d) != GP_OK)
        gp__reader_oom(r);
    return p + 1;
}

/* "deviceProperties": an array of objects, one per GPU (other elements are skipped). */
static const char *parse_device_props(gp__reader *r, const char *p)
{
    /* This member may be parsed again after a refill: start from no devices each time. */
    r->t->n_devices = 0;
    p = gp__skip_ws(p);
    if (*p != '[')
        return gp__json_skip_value(r, p);
    p = gp__skip_ws(p + 1);
    if (*p == ']')
        return p + 1;
    do {
        p = gp__skip_ws(p);
        p = *p == '{' ? parse_device(r, p) : gp__json_skip_value(r, p);
    } while (gp__json_sep(r, &p, ']', "expected ',' or ']'"));
    return p + 1;
}

/* "distributedInfo": rank, world size, backend... into r->t->dist. */
static const char *parse_dist_info(gp__reader *r, const char *p)
{
    p = gp__skip_ws(p);
    if (*p != '{')
        return gp__json_skip_value(r, p);
    gp_dist_info *d = &r->t->dist;
    d->present = true;
    p = gp__skip_ws(p + 1);
    while (*p != '}') {
        const char *k;
        size_t kl;
        p = gp__json_key(r, p, &k, &kl, "expected a member name in distributedInfo");
        if (GP__KEY_IS(k, kl, "rank")) {
            p = parse_i32(r, p, &d->rank);
        } else if (GP__KEY_IS(k, kl, "world_size")) {
            p = parse_i32(r, p, &d->world_size);
        } else if (GP__KEY_IS(k, kl, "pg_count")) {
            p = parse_i32(r, p, &d->pg_count);
        } else if (GP__KEY_IS(k, kl, "backend") || GP__KEY_IS(k, kl, "nccl_version")) {
            bool backend = k[0] == 'b';
            const char *s = NULL;
            size_t l = 0;
            p = gp__json_str_or_skip(r, p, &s, &l);
            if (s) {
                gp_strid id = gp__reader_intern(r, s, l);
                if (backend)
                    d->backend = id;
                else
                    d->nccl_version = id;
            }
        } else {
            p = gp__json_skip_value(r, p);
        }
        if (gp__json_sep(r, &p, '}', "expected ',' or '}'"))
            p = gp__skip_ws(p);
    }
    return p + 1;
}

/* One top-level member "key": value, p at the key's quote. *events_next: the member is
 * traceEvents, and p is returned after its '['. */
static const char *parse_member(gp__reader *r, const char *p, bool *events_next)
{
    const char *k;
    size_t kl;
    p = gp__json_key(r, p, &k, &kl, "expected a member name (a string)");
    *events_next = false;
    if (GP__KEY_IS(k, kl, "traceEvents")) {
        gp__json_want(r, p, '[', "'['", "\"traceEvents\" must be an array");
        *events_next = true;
        return p + 1;
    }
    if (GP__KEY_IS(k, kl, "deviceProperties"))
        return parse_device_props(r, p);
    if (GP__KEY_IS(k, kl, "distributedInfo"))
        return parse_dist_info(r, p);
    char key[128];
    size_t klen = GP_MIN(kl, sizeof key - 1);
    memcpy(key, k, klen);
    key[klen] = '\0';
    if (GP__KEY_IS(k, kl, "baseTimeNanoseconds")) {
        int64_t v;
        bool ok;
        const char *at = p;
        p = gp__json_intish(r, p, &v, &ok);
        if (ok && (v > GP__MAX_TIME_NS || v < -GP__MAX_TIME_NS))
            gp__json_fail_at(r, at, "baseTimeNanoseconds out of range (more than 2^62 ns)");
        if (ok)
            r->t->base_time_ns = v;
        return p;
    }
    if (GP__KEY_IS(k, kl, "schemaVersion"))
        return parse_i32(r, p, &r->t->schema_version);
    if (GP__KEY_IS(k, kl, "displayTimeUnit")) {
        const char *s = NULL;
        size_t l = 0;
        p = gp__json_str_or_skip(r, p, &s, &l);
        if (s)
            r->t->display_time_unit = gp__reader_intern(r, s, l);
        return p;
    }
    const char *vstart = p;
    p = gp__json_skip_value(r, p);
    size_t vlen = (size_t)(p - vstart);
    if (vlen <= META_MAX && !GP__KEY_IS(k, kl, "INFO") && !GP__KEY_IS(k, kl, "WARNING") &&
        !GP__KEY_IS(k, kl, "ERROR")) {
        char *val = malloc(vlen + 1);
        if (!val)
            gp__reader_oom(r);
        memcpy(val, vstart, vlen);
        val[vlen] = '\0';
        gp_status s = gp_trace_set_meta(r->t, key, val);
        free(val);
        if (s != GP_OK)
            gp__reader_oom(r);
    }
    return p;
}

/* ---- the document ------------------------------------------------------------------------ */

/* GP__TOP_START: '{' (a Kineto object) or '[' (a bare array of events), after an optional UTF-8
 * byte order mark at byte 0 (editors write one; it is skipped and counted). */
static const char *top_start(gp__reader *r, const char *p)
{
    if (*p == '\xEF' && r->buf_off + (uint64_t)(p - r->buf) == 0) {
        for (int i = 1; i < 3; i++)
            if (p[i] == '\0')
                gp__json_at_nul(r, p + i, "'{' or '['");
        if (p[1] == '\xBB' && p[2] == '\xBF') {
            r->t->stats.bom = true;
            return p + 3; /* still GP__TOP_START */
        }
    }
    if (*p == '{') {
        r->state = GP__TOP_OBJ_KEY;
    } else if (*p == '[') {
        r->state = GP__TOP_EVENTS;
        r->bare_array = true;
        r->saw_events = true;
    } else if (*p == '\0') {
        gp__json_at_nul(r, p, "'{' or '['");
    } else {
        gp__json_fail_at(r, p, "expected '{' or '[' at the start of a trace");
    }
    return p + 1;
}

/* After the ',' at p between two elements: the comma and the blanks after it are consumed for good
 * (r->mark moves past them, in state `next`), so that a retry after a refill does not keep them.
 * Returns the position of what follows. */
static const char *after_comma(gp__reader *r, const char *p, gp__reader_state next)
{
    p = gp__skip_ws(p + 1);
    r->mark = (size_t)(p - r->buf);
    r->state = next;
    return p;
}

/* GP__TOP_OBJ_KEY / GP__TOP_OBJ_NEXT / GP__TOP_OBJ_MEMBER: the next member of the top-level object,
 * or its end. NULL when a second part of a bare array ends right after its ']' (nothing more to
 * parse). */
static const char *top_member(gp__reader *r, const char *p)
{
    if (r->state == GP__TOP_OBJ_KEY && *p == '}') {
        r->state = GP__TOP_DONE;
        return p + 1;
    }
    if (r->state == GP__TOP_OBJ_NEXT) {
        if (*p == '\0' && r->split_part && r->eof && p == r->buf + r->len && !r->part_members) {
            r->part_bare_end = true; /* a bare array's second part ends after ']' */
            return NULL;
        }
        if (*p == '}') {
            r->part_object_closed = r->split_part;
            r->state = GP__TOP_DONE;
            return p + 1;
        }
        gp__json_want(r, p, ',', "',' or '}'", "expected ',' or '}'");
        p = after_comma(r, p, GP__TOP_OBJ_MEMBER);
    }
    gp__json_want(r, p, '"', "a member name", "expected a member name (a string)");
    bool events_next;
    r->part_members = r->split_part;
    p = parse_member(r, p, &events_next);
    if (events_next) {
        r->state = GP__TOP_EVENTS;
        r->saw_events = true;
    } else {
        r->state = GP__TOP_OBJ_NEXT;
    }
    return p;
}

/* gp__piece_stops_at(r->piece, at), with its common case inline: the position published for
 * thieves, and no stop at or before `at` (0: none; UINT64_MAX: the piece is done). The call is
 * made only when the piece may stop here (it saved 2 ns an element, measured as the function's
 * own time under perf on large_v100_nccl x7). */
static inline bool piece_stops_at(gp__reader *r, uint64_t at)
{
    atomic_store_explicit(r->piece_pos, at, memory_order_relaxed);
    uint64_t s = atomic_load_explicit(r->piece_stop, memory_order_acquire);
    return s && at >= s && gp__piece_stops_at(r->piece, at);
}

/* GP__TOP_EVENTS / GP__TOP_EVENTS_NEXT: the next element of traceEvents, or its end. NULL when a
 * piece of a parallel read stops at this element (r->mark on it). */
static const char *top_event(gp__reader *r, const char *p)
{
    if (*p == ']' && r->state != GP__TOP_EVENTS_ELEM) {
        r->state = r->bare_array ? GP__TOP_DONE : GP__TOP_OBJ_NEXT;
        if (r->piece)
            gp__piece_events_ended(r->piece);
        return p + 1;
    }
    if (r->state == GP__TOP_EVENTS_NEXT) {
        gp__json_want(r, p, ',', "',' or ']'", "expected ',' or ']' between events");
        p = after_comma(r, p, GP__TOP_EVENTS_ELEM);
    }
    gp__json_want(r, p, '{', "an event object", "expected an event object");
    if (r->piece && piece_stops_at(r, r->buf_off + (uint64_t)(p - r->buf))) {
        r->mark = (size_t)(p - r->buf); /* the next piece starts at this element */
        r->state = GP__TOP_EVENTS;
        return NULL;
    }
    p = gp__kineto_parse_event(r, p);
    r->t->stats.events_in++; /* counted once the element is complete (no retry left) */
    r->state = GP__TOP_EVENTS_NEXT;
    return p;
}

/* GP__TOP_DONE: only blanks may follow, up to the end of the input. True at the end; false after
 * reading more input (r->mark at p). */
static bool top_done(gp__reader *r, const char *p)
{
    if (*p != '\0')
        gp__json_fail_at(r, p, "unexpected data after the end of the trace");
    if (p < r->buf + r->len)
        gp__json_fail_at(r, p, "unexpected NUL byte");
    if (r->eof)
        return true;
    r->mark = (size_t)(p - r->buf);
    gp__json_refill(r);
    return false;
}

/* A mapped read passed r->next_drop: the pages behind the element being parsed are handed back
 * (they would otherwise all count in the resident set), and the bytes passed are counted for the
 * progress. */
static void mapped_pass(gp__reader *r)
{
    gp__input_map_drop(&r->map, r->mark);
    if (r->piece)
        gp__piece_read_bytes(r->piece, r->mark - r->counted, r->t, r->mark);
    else
        gp__trace_set_progress(r->t, r->mark, r->map.size);
    r->counted = r->mark;
    r->next_drop = r->mark + GP__READ_CHUNK;
    if (r->opts->progress && r->mark >= r->next_progress) {
        r->opts->progress(r->opts->progress_ctx, r->mark, r->in.file_size);
        r->next_progress = r->mark + (16u << 20);
    }
}

gp_status gp__reader_run(gp__reader *r)
{
    gp__kineto_args_init();
    gp__kineto_events_init();
    gp__json_simd_init();
    int jmp = setjmp(r->jb);
    if (jmp == JMP_ERROR)
        return r->err && r->err->status ? r->err->status : GP_EPARSE;
    if (jmp == JMP_NEED_MORE)
        gp__json_refill(r); /* at the end of the input, the sentinel tells the parse below */
    for (;;) {
        const char *p = gp__skip_ws(r->buf + r->mark);
        r->mark = (size_t)(p - r->buf); /* blanks between elements are not kept on a refill */
        if (r->mark >= r->next_drop)
            mapped_pass(r);
        r->depth = 0;
        switch (r->state) {
        case GP__TOP_START:
            p = top_start(r, p);
            break;
        case GP__TOP_OBJ_KEY:
        case GP__TOP_OBJ_NEXT:
        case GP__TOP_OBJ_MEMBER:
            p = top_member(r, p);
            break;
        case GP__TOP_EVENTS:
        case GP__TOP_EVENTS_NEXT:
        case GP__TOP_EVENTS_ELEM:
            p = top_event(r, p);
            break;
        case GP__TOP_DONE:
            if (top_done(r, p))
                return GP_OK;
            continue;
        }
        if (!p)
            return GP_OK;
        r->mark = (size_t)(p - r->buf);
    }
}

/* ---- the reader ----------------------------------------------------------------------------- */

void gp_read_opts_init(gp_read_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->keep_python = true;
    opts->keep_memory = true;
}

/* The first buffer: one GP__READ_CHUNK, or less for an input expected to be smaller (the whole
 * input in one read, rounded up to 64 KiB; for gzip, the size its trailer states): thousands of
 * small reads (serve's folders, the fuzz targets) do not each map and poison a whole chunk. Refills
 * grow it as needed (gp__json_refill), so a trailer that lies costs refills, never bytes. */
static size_t first_cap(const gp__input *in)
{
    uint64_t size = in->size_hint;
    if (size == 0 || size >= GP__READ_CHUNK)
        return GP__READ_CHUNK;
    return (size_t)((size + 1 + 0xffff) & ~(uint64_t)0xffff);
}

gp__reader *gp__reader_new_buf(const gp__input *in, const gp_read_opts *opts, gp_error *err,
                               char *buf, size_t cap)
{
    gp__reader *r = calloc(1, sizeof *r);
    if (!r) {
        free(buf);
        return NULL;
    }
    r->in = *in;
    r->err = err;
    r->opts = opts;
    r->name = r->in.path;
    r->next_drop = SIZE_MAX;
    r->state = GP__TOP_START;
    if (gp_trace_create(r->in.path, &r->t) != GP_OK) {
        free(buf);
        free(r);
        return NULL;
    }
    if (!opts->no_map && (opts->map || gp__input_map_forced()) && gp__input_map_file(in, &r->map)) {
        free(buf);
        r->buf = r->map.base;
        r->len = r->cap = r->map.size;
        r->eof = true;
        r->next_drop = GP__READ_CHUNK;
        r->t->stats.bytes = r->map.size;
        r->t->stats.mapped = true;
        return r;
    }
    r->cap = buf ? cap : first_cap(in);
    r->buf = buf ? buf : malloc(r->cap + GP__READ_PAD);
    if (!r->buf) {
        gp_trace_free(r->t);
        free(r);
        return NULL;
    }
    memset(r->buf, 0, GP__READ_PAD);
    return r;
}

void gp__reader_start_at(gp__reader *r, uint64_t start)
{
    if (r->map.base) {
        r->mark = (size_t)start;
        r->counted = (size_t)start;
        r->next_drop = (size_t)start + GP__READ_CHUNK;
        r->map.dropped = (size_t)start; /* nothing before it was touched */
    } else {
        r->buf_off = start;
    }
    r->state = GP__TOP_EVENTS;
    r->split_part = true;
    r->saw_events = true;
}

void gp__reader_release_buf(gp__reader *r, char **spare, size_t *spare_cap)
{
    if (r->map.base) {
        gp__input_map_free(&r->map);
    } else {
        *spare = r->buf;
        *spare_cap = r->cap;
    }
    r->buf = NULL;
}

void gp__reader_free(gp__reader *r)
{
    if (!r)
        return;
    gp__input_close(&r->in);
    if (r->map.base)
        gp__input_map_free(&r->map);
    else
        free(r->buf);
    gp__json_scratch_reset(r);
    free(r->retired);
    free(r->scratch);
    free(r->meta);
    gp_trace_free(r->t);
    free(r);
}

gp_status gp__reader_complete(gp__reader *r, gp_status st, gp_trace **out)
{
    gp_error *err = r->err;
    if (st == GP_OK && !r->saw_events)
        st = gp_error_set(err, GP_EPARSE, "%s: byte %llu: no \"traceEvents\" array in this JSON",
                          r->name, (unsigned long long)(r->buf_off + r->len));
    if (st == GP_OK)
        st = gp__reader_finish(r);
    if (st != GP_OK) {
        if (err->status == GP_OK)
            gp_error_set(err, st, "%s: %s", r->name, gp_strerror(st));
        gp__reader_free(r);
        return st;
    }
    gp__trace_priv *priv = gp__trace_build(r->t);
    free(priv->flow_points);
    priv->flow_points = NULL;
    priv->n_flow_points = priv->cap_flow_points = 0;
    *out = r->t;
    r->t = NULL;
    gp__reader_free(r);
    return GP_OK;
}

/* The caller's options, or the defaults (written to *defaults) when opts is NULL. */
static const gp_read_opts *opts_or_defaults(const gp_read_opts *opts, gp_read_opts *defaults)
{
    if (opts)
        return opts;
    gp_read_opts_init(defaults);
    return defaults;
}

gp_status gp__trace_read_input(gp__input *in, const gp_read_opts *opts, gp_trace **out,
                               gp_error *err)
{
    gp_read_opts defaults;
    opts = opts_or_defaults(opts, &defaults);
    gp_error local;
    if (!err)
        err = &local;
    err->status = GP_OK;
    err->msg[0] = '\0';
    gp__reader *r = gp__reader_new_buf(in, opts, err, NULL, 0);
    if (!r) {
        gp__input_close(in);
        return gp_error_set(err, GP_ENOMEM, "%s: out of memory", in->path);
    }
    r->t->stats.threads_used = 1;
    r->t->stats.pieces = 1;
    return gp__reader_complete(r, gp__reader_run(r), out);
}

/* ---- entry points ------------------------------------------------------------------------ */

/* The reader registry's entry point of this reader (io/formats.h): a regular file of 48 MB or more
 * (or any file when threads are forced) goes to the parallel reader, the rest is read in
 * sequence. */
gp_status gp__kineto_read(const char *path, gp__input *in, const gp_read_opts *opts, gp_trace **out,
                          gp_error *err)
{
    gp_read_opts defaults;
    opts = opts_or_defaults(opts, &defaults);
    int threads = gp__par_threads(opts->threads, opts->threads > 0 ? 16 : 4);
    if (path && in->fd >= 0 && threads >= 2 && !in->compressed &&
        (opts->threads >= 2 || in->file_size >= PARALLEL_MIN_BYTES))
        return gp__read_parallel(path, in, opts, threads, out, err);
    return gp__trace_read_input(in, opts, out, err);
}

gp_status gp_trace_read(const char *path, const gp_read_opts *opts, gp_trace **out, gp_error *err)
{
    gp_read_opts defaults;
    opts = opts_or_defaults(opts, &defaults);
    gp_error local;
    if (!err)
        err = &local;
    gp__input in;
    gp_status s = gp__input_open(&in, path, opts->regular_files_only, err);
    if (s != GP_OK)
        return s;
    return gp__trace_format_of_input(&in)->read(path, &in, opts, out, err);
}

gp_status gp_trace_read_buffer(const char *data, size_t len, const char *name,
                               const gp_read_opts *opts, gp_trace **out, gp_error *err)
{
    gp__input in;
    gp__input_open_mem(&in, data, len, name);
    return gp__trace_format_of_input(&in)->read(NULL, &in, opts, out, err);
}

gp_status gp__trace_read_buffer_pieces(const char *data, size_t len, const char *name,
                                       const gp_read_opts *opts, size_t max_read, gp_trace **out,
                                       gp_error *err)
{
    gp__input in;
    gp__input_open_mem(&in, data, len, name);
    in.max_read = max_read;
    return gp__trace_read_input(&in, opts, out, err);
}
