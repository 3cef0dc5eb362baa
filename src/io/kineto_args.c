/* The "args" object of a Kineto event: the members the model keeps (launch and kernel fields,
 * correlation and external ids, memory, Python, NCCL and metadata fields, the first numeric member
 * of a counter) into gp__kineto_fields, and the object's raw text for ranges and instants.
 *
 * The known keys are one table (arg_keys). A member is found by comparing its text `"key":` with
 * the keys' patterns (arg_fast_find) and read by a case of its own key (parse_arg); a member that
 * matches none is found by a hash of its key's length and first 16 bytes (arg_hash, no string
 * compares). Any other member is skipped (validated, not kept). */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "io/json_scan.h"
#include "io/kineto_events.h"

/* How the value of a known key is read, and where it goes in gp__kineto_fields. */
typedef enum arg_how {
    ARG_INT,       /* gp__json_intish into the int64_t at `at` */
    ARG_INT_HAS,   /* the same; the bool at `has` becomes true when an integer was read */
    ARG_INT_OK,    /* the same; the bool at `has` becomes whether an integer was read */
    ARG_DOUBLE,    /* gp__json_dbl_or_skip into the double at `at` */
    ARG_STRING,    /* gp__json_str_or_skip into the const char * at `at`, its length at `has` */
    ARG_DIM3,      /* up to 3 integers (an array) into the int32_t[3] at `at` */
    ARG_PY_PARENT, /* an integer into py_parent, or null (py_parent_null) */
    ARG_RAW, /* any value, skipped; its JSON text into the const char * at `at`, length at `has` */
    ARG_PG_RANKS, /* a string (its content) or any other value (its JSON text), as ARG_RAW */
    ARG_SKIP,     /* a frequent key the model does not keep: handled as any unknown key */
} arg_how;

typedef struct arg_key {
    const char *key;
    uint8_t len;
    uint8_t how; /* arg_how */
    uint16_t at, has;
} arg_key;

#define KEY(lit) lit, sizeof(lit) - 1
#define AT(field) offsetof(gp__kineto_fields, field)

static const arg_key arg_keys[] = {
    /* the keys of the most frequent events first (Python frames, CPU ops, runtime calls,
     * kernels): keys that share their first 4 bytes ("Python ...", "Input ...") share a slot of
     * the fast lookup, and the first added takes it (one probe) */
    {KEY("Python parent id"), ARG_PY_PARENT, AT(py_parent), AT(py_parent_null)},
    {KEY("Python id"), ARG_INT, AT(py_id), 0},
    {KEY("Ev Idx"), ARG_SKIP, 0, 0},
    {KEY("External id"), ARG_INT_HAS, AT(ext), AT(has_ext)},
    {KEY("Record function id"), ARG_SKIP, 0, 0},
    {KEY("Sequence number"), ARG_SKIP, 0, 0},
    {KEY("Fwd thread id"), ARG_SKIP, 0, 0},
    {KEY("Input Dims"), ARG_RAW, AT(in_dims), AT(in_dims_len)},
    {KEY("Input type"), ARG_RAW, AT(in_types), AT(in_types_len)},
    {KEY("Input Strides"), ARG_RAW, AT(in_strides), AT(in_strides_len)},
    {KEY("Concrete Inputs"), ARG_RAW, AT(in_concrete), AT(in_concrete_len)},
    {KEY("correlation"), ARG_INT_HAS, AT(corr), AT(has_corr)},
    {KEY("cbid"), ARG_INT, AT(cbid), 0},
    {KEY("external id"), ARG_INT_HAS, AT(ext), AT(has_ext)},
    {KEY("device"), ARG_INT_HAS, AT(device), AT(has_device)},
    {KEY("stream"), ARG_INT_HAS, AT(stream), AT(has_stream)},
    {KEY("queued"), ARG_INT, AT(queued), 0},
    {KEY("context"), ARG_INT, AT(context), 0},
    {KEY("registers per thread"), ARG_INT, AT(regs), 0},
    {KEY("shared memory"), ARG_INT, AT(smem), 0},
    {KEY("blocks per SM"), ARG_DOUBLE, AT(bps), 0},
    {KEY("warps per SM"), ARG_DOUBLE, AT(wps), 0},
    {KEY("grid"), ARG_DIM3, AT(grid), 0},
    {KEY("block"), ARG_DIM3, AT(block), 0},
    {KEY("est. achieved occupancy %"), ARG_DOUBLE, AT(occ), 0},
    /* the other keys; ARG_SKIP ones are found by the fast lookup, so that they are skipped
     * without the general key scan */
    {KEY("Addr"), ARG_INT, AT(addr), 0},
    {KEY("name"), ARG_STRING, AT(meta_name), AT(meta_name_len)},
    {KEY("kind"), ARG_STRING, AT(copy_kind), AT(copy_kind_len)},
    {KEY("bytes"), ARG_INT, AT(bytes), 0},
    {KEY("Bytes"), ARG_INT_OK, AT(mem_bytes), AT(has_mem_bytes)},
    {KEY("dtype"), ARG_STRING, AT(dtype), AT(dtype_len)},
    {KEY("graph id"), ARG_INT, AT(graph_id), 0},
    {KEY("Device Id"), ARG_INT, AT(dev_id), 0},
    {KEY("sort_index"), ARG_INT_OK, AT(sort_index), AT(has_sort_index)},
    {KEY("Group size"), ARG_INT, AT(group_size), 0},
    {KEY("Device Type"), ARG_INT, AT(dev_type), 0},
    {KEY("In msg nelems"), ARG_INT, AT(in_nelems), 0},
    {KEY("graph node id"), ARG_INT, AT(graph_node), 0},
    {KEY("Out msg nelems"), ARG_INT, AT(out_nelems), 0},
    {KEY("cuda_sync_kind"), ARG_STRING, AT(sync_kind), AT(sync_kind_len)},
    {KEY("Total Reserved"), ARG_INT, AT(total_res), 0},
    {KEY("wait_on_stream"), ARG_INT, AT(wait_on_stream), 0},
    {KEY("Total Allocated"), ARG_INT, AT(total_alloc), 0},
    {KEY("Collective name"), ARG_STRING, AT(collective), AT(collective_len)},
    {KEY("Process Group Name"), ARG_STRING, AT(pg_name), AT(pg_name_len)},
    {KEY("Process Group Ranks"), ARG_PG_RANKS, AT(pg_ranks), AT(pg_ranks_len)},
    {KEY("memory bandwidth (GB/s)"), ARG_DOUBLE, AT(bw), 0},
    {KEY("Process Group Description"), ARG_STRING, AT(pg_desc), AT(pg_desc_len)},
    {KEY("wait_on_cuda_event_record_corr_id"), ARG_INT, AT(wait_on_event_corr), 0},
    {KEY("Python module id"), ARG_SKIP, 0, 0},
};

#define N_ARG_KEYS (sizeof arg_keys / sizeof *arg_keys)
#define ARG_KEY_MAXLEN 40 /* longer keys are never known (the longest is 33 bytes) */

/* The fast lookup, tried first for every member: the member's text `"key":` itself is compared
 * with the patterns of the keys of arg_keys, found by a hash of its first 5 bytes (the quote and
 * 4 bytes of the key; the shortest key has 4), and the member is then read by a case of its own
 * (parse_arg), which skips the key by a constant: the next position does not wait for the
 * table's loads (the parse is one chain of dependent positions). The general path
 * (gp__json_key_word, then find_arg_key) scans for the key's end first. A member that matches no
 * pattern (an escape in its key, blanks before ':', an unknown key, the end of the buffered data)
 * takes the general path, which finds the same key for the same text. */
#define ARG_PAT_WORDS 5 /* `"` + key + `":` of the longest known key (33 bytes), in words */

typedef struct arg_pat {
    uint64_t w[ARG_PAT_WORDS]; /* the pattern's bytes, zero past its end */
    uint64_t m0, m1;           /* the bytes of the pattern in words 0 and 1 */
    uint8_t len;               /* bytes */
} arg_pat;

#define ARG_FAST_BITS 8
static arg_pat arg_pats[N_ARG_KEYS];          /* the pattern of arg_keys[i] */
static uint8_t arg_fast[1u << ARG_FAST_BITS]; /* 1 + index in arg_keys, 0 for none */

static inline unsigned arg_fast_slot(uint64_t w)
{
    return (unsigned)(((w & 0xFFFFFFFFFFULL) * 0x9E3779B97F4A7C15ULL) >> (64 - ARG_FAST_BITS));
}

/* Adds the pattern of key[0..len), arg_keys[at], to the fast lookup. */
static void arg_fast_add(size_t at, const char *key, size_t len)
{
    char text[ARG_PAT_WORDS * 8] = {0};
    arg_pat *k = &arg_pats[at];
    if (len + 3 > sizeof text)
        return; /* a key this long is found by the general path only */
    text[0] = '"';
    memcpy(text + 1, key, len);
    memcpy(text + 1 + len, "\":", 2);
    k->len = (uint8_t)(len + 3);
    for (size_t i = 0; i < ARG_PAT_WORDS; i++)
        k->w[i] = gp__json_word(text, sizeof text, 8 * i);
    k->m0 = k->len >= 8 ? ~0ULL : ~0ULL >> (64 - 8 * k->len);
    k->m1 = k->len >= 16 ? ~0ULL : k->len > 8 ? ~0ULL >> (64 - 8 * (k->len - 8)) : 0;
    unsigned s = arg_fast_slot(k->w[0]);
    while (arg_fast[s])
        s = (s + 1) & ((1u << ARG_FAST_BITS) - 1);
    arg_fast[s] = (uint8_t)(at + 1);
}

/* Whether the text at p continues the pattern k past its 16th byte (keys of more than 13
 * bytes). A word is read only when the words before it matched, so no read goes beyond the NUL
 * sentinel's padding. */
static bool arg_pat_tail(const char *p, const arg_pat *k)
{
    for (size_t off = 16; off < k->len; off += 8) {
        uint64_t x;
        memcpy(&x, p + off, 8);
        uint64_t m = k->len - off >= 8 ? ~0ULL : ~0ULL >> (64 - 8 * (k->len - off));
        if ((x ^ k->w[off / 8]) & m)
            return false;
    }
    return true;
}

/* The index in arg_keys of the pattern that the text at p begins with, or -1. The first 16
 * bytes are compared without branches (p is at most at the NUL sentinel, and 16 bytes past it
 * are padding). */
static inline int arg_fast_find(const char *p)
{
    uint64_t a, b;
    memcpy(&a, p, 8);
    memcpy(&b, p + 8, 8);
    for (unsigned s = arg_fast_slot(a);; s = (s + 1) & ((1u << ARG_FAST_BITS) - 1)) {
        unsigned i = arg_fast[s];
        if (!i)
            return -1;
        const arg_pat *k = &arg_pats[i - 1];
        if ((((a ^ k->w[0]) & k->m0) | ((b ^ k->w[1]) & k->m1)) == 0 &&
            (k->len <= 16 || arg_pat_tail(p, k)))
            return (int)i - 1;
    }
}

/* The known keys by hash of their length and first 16 bytes (gp__json_kw's words): slot + 1 of
 * arg_keys, 0 for none; linear probing. Built once (gp__kineto_args_init, before any parse)
 * from arg_keys, so the table stays the single place that lists the keys. */
#define ARG_HASH_BITS 7
static uint8_t arg_hash[1u << ARG_HASH_BITS];
static uint64_t arg_w0[N_ARG_KEYS], arg_w1[N_ARG_KEYS];
static pthread_once_t arg_hash_once = PTHREAD_ONCE_INIT;

/* The first slot to probe for a key of length len and words w0, w1. */
static inline unsigned arg_slot(uint64_t w0, uint64_t w1, size_t len)
{
    uint64_t h = (w0 ^ (w1 * 0x9E3779B97F4A7C15ULL) ^ len) * 0xC2B2AE3D27D4EB4FULL;
    return (unsigned)(h >> (64 - ARG_HASH_BITS));
}

/* Fills arg_w0, arg_w1 and arg_hash from arg_keys, and the fast lookup's patterns. */
static void arg_hash_init(void)
{
    for (size_t i = 0; i < N_ARG_KEYS; i++) {
        arg_w0[i] = gp__json_word(arg_keys[i].key, arg_keys[i].len, 0);
        arg_w1[i] = gp__json_word(arg_keys[i].key, arg_keys[i].len, 8);
        unsigned s = arg_slot(arg_w0[i], arg_w1[i], arg_keys[i].len);
        while (arg_hash[s])
            s = (s + 1) & ((1u << ARG_HASH_BITS) - 1);
        arg_hash[s] = (uint8_t)(i + 1);
    }
    for (size_t i = 0; i < N_ARG_KEYS; i++)
        arg_fast_add(i, arg_keys[i].key, arg_keys[i].len);
}

void gp__kineto_args_init(void)
{
    pthread_once(&arg_hash_once, arg_hash_init);
}

/* The known key kw, or NULL: one hash of its words and length, then the words compared (and the
 * bytes past the 16th for the few longer keys). Every member of every event's args comes through
 * here: a linear scan of the table cost ingest a fifth of its time, a binary search for the
 * length a few percent, string compares by length and first byte about 2 %. */
static const arg_key *find_arg_key(const gp__json_kw *kw)
{
    if (kw->len > ARG_KEY_MAXLEN)
        return NULL;
    for (unsigned s = arg_slot(kw->w0, kw->w1, kw->len);;
         s = (s + 1) & ((1u << ARG_HASH_BITS) - 1)) {
        unsigned i = arg_hash[s];
        if (!i)
            return NULL;
        const arg_key *a = &arg_keys[i - 1];
        if (a->len == kw->len && arg_w0[i - 1] == kw->w0 && arg_w1[i - 1] == kw->w1 &&
            (kw->len <= 16 || memcmp(kw->s + 16, a->key + 16, kw->len - 16) == 0))
            return a;
    }
}

/* "grid" / "block": an array of up to three integers (more are validated and ignored; what is not
 * an integer is -1). Any other value is skipped. */
static const char *parse_dim3(gp__reader *r, const char *p, int32_t d[3])
{
    p = gp__skip_ws(p);
    if (*p != '[')
        return gp__json_skip_value(r, p);
    p = gp__skip_ws(p + 1);
    int i = 0;
    if (*p == ']')
        return p + 1;
    do {
        int64_t v = -1;
        bool ok;
        p = gp__json_intish(r, p, &v, &ok);
        if (i < 3)
            d[i++] = ok ? gp__i32_sat(v) : -1;
    } while (gp__json_sep(r, &p, ']', "expected ',' or ']'"));
    return p + 1;
}

/* Any value at p, skipped; its JSON text into the const char * at `at`, its length at `has`. */
static const char *read_raw(gp__reader *r, const char *p, char *at, char *has)
{
    const char *v = gp__skip_ws(p);
    p = gp__json_skip_value(r, v);
    *(const char **)(void *)at = v;
    *(size_t *)(void *)has = (size_t)(p - v);
    return p;
}

/* An integer member's value at p (blanks skipped): the short non-negative integers of ids and
 * indices inline, any other value through gp__json_intish. */
static inline const char *read_int(gp__reader *r, const char *p, int64_t *out, bool *ok)
{
    const char *q = gp__json_uint_fast(p, out);
    if (q) {
        *ok = true;
        return q;
    }
    return gp__json_intish(r, p, out, ok);
}

/* Reads the value at p of the known key a (not ARG_SKIP) into f. Inlined: each case of parse_arg
 * gets the code of its own key's `how`. */
static inline __attribute__((always_inline)) const char *
read_known_arg(gp__reader *r, const char *p, gp__kineto_fields *f, const arg_key *a)
{
    char *at = (char *)f + a->at, *has = (char *)f + a->has;
    bool ok = false;
    switch ((arg_how)a->how) {
    case ARG_INT:
        return read_int(r, p, (int64_t *)(void *)at, &ok);
    case ARG_INT_HAS:
        p = read_int(r, p, (int64_t *)(void *)at, &ok);
        if (ok)
            *(bool *)has = true;
        return p;
    case ARG_INT_OK:
        p = read_int(r, p, (int64_t *)(void *)at, &ok);
        *(bool *)has = ok;
        return p;
    case ARG_DOUBLE: {
        /* A number read: a 0 is kept as -0.0 (equal to 0 everywhere; +0.0 is "absent"), so that
         * the writer writes it back; beyond the range of a double, +-DBL_MAX. Anything else is
         * skipped and leaves the field as it was. */
        double *d = (double *)(void *)at, prev = *d;
        *d = NAN;
        p = gp__json_dbl_or_skip(r, p, d);
        if (isnan(*d))
            *d = prev;
        else if (*d == 0)
            *d = -0.0;
        else if (!isfinite(*d))
            *d = copysign(DBL_MAX, *d);
        return p;
    }
    case ARG_STRING:
        return gp__json_str_or_skip(r, p, (const char **)(void *)at, (size_t *)(void *)has);
    case ARG_DIM3:
        return parse_dim3(r, p, (int32_t *)(void *)at);
    case ARG_PY_PARENT:
        if (*p == 'n') {
            p = gp__json_skip_literal(r, p, "null");
            f->py_parent_null = true;
            return p;
        }
        return read_int(r, p, &f->py_parent, &ok);
    case ARG_PG_RANKS: /* a string: its content; an array: its text */
        if (*gp__skip_ws(p) == '"')
            return gp__json_str_or_skip(r, p, (const char **)(void *)at, (size_t *)(void *)has);
        return read_raw(r, p, at, has);
    case ARG_RAW:
        return read_raw(r, p, at, has);
    case ARG_SKIP:
        break;
    }
    return gp__json_skip_value(r, p);
}

/* The value at p of a member the model does not keep, key k[0..kl): the first numeric one of a
 * counter event is its sample, any other is skipped (scratch_len back to keep: the key's unescaped
 * copy, if any, is no longer needed). */
static const char *unknown_arg(gp__reader *r, const char *p, gp__kineto_fields *f, const char *k,
                               size_t kl, size_t keep)
{
    if (f->ph == 'C' && gp__is_number_start(*p)) {
        double d;
        p = gp__json_double(r, p, &d);
        if (f->n_ctr++ == 0) { /* the key stays in scratch: the counter's series name */
            f->ctr_key = k;
            f->ctr_key_len = kl;
            f->ctr_value = d;
        }
        return p;
    }
    p = gp__json_skip_value(r, p);
    r->scratch_len = keep;
    return p;
}

/* The member of key arg_keys[i] at p (its `"key":`), the fast lookup's match: the key skipped by
 * a constant when i is one (each case of parse_arg). */
static inline __attribute__((always_inline)) const char *
read_arg_at(gp__reader *r, const char *p, gp__kineto_fields *f, size_t i, size_t keep)
{
    const arg_key *a = &arg_keys[i];
    const char *v = gp__skip_ws(p + a->len + 3);
    if (a->how == ARG_SKIP) {
        const char *q = f->ph != 'C' ? gp__json_uint_end(v) : NULL;
        return q ? q : unknown_arg(r, v, f, p + 1, a->len, keep);
    }
    return read_known_arg(r, v, f, a);
}

#define ARG_CASE(i)                                                                                \
    case i:                                                                                        \
        return read_arg_at(r, p, f, i, keep);
#define ARG_CASES10(d)                                                                             \
    ARG_CASE(d##0)                                                                                 \
    ARG_CASE(d##1)                                                                                 \
    ARG_CASE(d##2)                                                                                 \
    ARG_CASE(d##3)                                                                                 \
    ARG_CASE(d##4)                                                                                 \
    ARG_CASE(d##5)                                                                                 \
    ARG_CASE(d##6)                                                                                 \
    ARG_CASE(d##7)                                                                                 \
    ARG_CASE(d##8)                                                                                 \
    ARG_CASE(d##9)
_Static_assert(N_ARG_KEYS == 50, "parse_arg has one case per key of arg_keys");

/* One member "key": value of args, p at (or blanks before) the key: the fast lookup, else the
 * general one. */
static const char *parse_arg(gp__reader *r, const char *p, gp__kineto_fields *f)
{
    p = gp__skip_ws(p);
    size_t keep = r->scratch_len;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    switch (arg_fast_find(p)) {
        ARG_CASES10()
        ARG_CASES10(1)
        ARG_CASES10(2)
        ARG_CASES10(3)
        ARG_CASES10(4)
    default: /* no match */
        break;
    }
#endif
    gp__json_kw kw;
    p = gp__json_key_word(r, p, &kw, "expected a member name (a string) in args");
    const arg_key *a = find_arg_key(&kw);
    if (a && a->how != ARG_SKIP)
        return read_known_arg(r, p, f, a);
    return unknown_arg(r, p, f, kw.s, kw.len, keep);
}
#undef ARG_CASE
#undef ARG_CASES10

const char *gp__kineto_parse_args(gp__reader *r, const char *p, gp__kineto_fields *f)
{
    p = gp__skip_ws(p);
    if (*p != '{')
        return gp__json_skip_value(r, p);
    const char *args_start = p;
    if (++r->depth > GP__READ_MAX_DEPTH)
        gp__json_fail_at(r, p, "nesting too deep");
    p = gp__skip_ws(p + 1);
    if (*p != '}') {
        do
            p = parse_arg(r, p, f);
        while (gp__json_sep(r, &p, '}', "expected ',' or '}' in args"));
    }
    r->depth--;
    f->args_s = args_start;
    f->args_len = (size_t)(p + 1 - args_start);
    return p + 1;
}
