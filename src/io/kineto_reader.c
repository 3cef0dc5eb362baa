/* Kineto / Chrome trace JSON reader.
 *
 * A dedicated streaming scanner (see docs/decisions/json.md for the measurements behind it): the
 * input is read in chunks into one buffer; the scanner parses one top-level member or one element
 * of traceEvents at a time, straight into the model. When it reaches the end of the buffered bytes
 * in the middle of an element it longjmps back to the element's start, the buffer is refilled
 * (keeping the unfinished element) and the element is parsed again. Only complete elements have
 * side effects on the model, so a retry is harmless. Memory therefore grows with the events kept,
 * not with the file: the buffer holds one chunk plus the longest element.
 *
 * The buffer is always followed by at least PAD zero bytes: buf[len] == '\0' is the end sentinel
 * (a NUL inside the data is an error), and the 8-byte-at-a-time string scan may read past it. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "core/input.h"
#include "core/par.h"
#include "core/strtab.h"
#include "core/util.h"
#include "gpuprof/trace.h"
#include "model/model_internal.h"
#include "io/reader_internal.h"

#define CHUNK (4u << 20)
#define PAD 32 /* zero bytes after the data: the sentinel plus room for 16-byte loads */
#define MAX_BUF ((size_t)1 << 31)                  /* longest single element we accept: 2 GiB */
#define MAX_DEPTH 256                              /* nesting depth limit */
#define ABSURD_NS (7LL * 24 * 3600 * 1000000000LL) /* HTA's 7-day cut-off */
#define META_MAX 65536 /* larger top-level values are not kept as metadata */
/* Times and durations are limited to 2^62 ns (146 years) in magnitude, so that ts + dur and
 * base + ts cannot overflow int64. */
#define GP__MAX_TIME_NS (INT64_C(1) << 62)
#define GP__MAX_TIME_US (GP__MAX_TIME_NS / 1000)

enum { JMP_NEED_MORE = 1, JMP_ERROR = 2 };

/* int64 → int32 for counts and ids the model keeps in 32 bits (grid sizes, device properties,
 * ranks): out-of-range values saturate instead of wrapping (a wrapped value could turn into -1,
 * "absent", or change sign). */
static inline int32_t i32_sat(int64_t v)
{
    return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
}

/* Categories, from the "cat" string. */
typedef enum cat_id {
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
} cat_id;

/* A JSON value that is a number or a string, as seen in pid/tid. */
typedef struct idval {
    bool present;
    bool is_str;
    bool numeric; /* is_str but all digits (legacy "25738"), or "stream 7" */
    int64_t num;
    const char *s;
    size_t len;
} idval;

/* Everything one event may carry, filled by parse_event and consumed by commit_event. */
typedef struct ev_fields {
    char ph;
    cat_id cat;
    const char *cat_s;
    size_t cat_len;
    const char *name;
    size_t name_len;
    uint64_t name_hash;
    bool name_escaped;
    idval pid, tid;
    bool has_ts, has_dur;
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
    const char *collective, *dtype, *copy_kind;
    size_t collective_len, dtype_len, copy_kind_len;
    int64_t in_nelems, out_nelems, group_size;
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
} ev_fields;

/* Track-name metadata, applied to tracks when reading ends. */
typedef struct pending_meta {
    int kind; /* 0 process_name, 1 thread_name, 2 thread_sort_index, 3 process_sort_index */
    int64_t pid, tid;
    gp_strid value;
    int64_t num;
} pending_meta;

typedef enum top_state {
    TOP_START,       /* before the first byte */
    TOP_OBJ_KEY,     /* inside the top object, expecting a key or '}' */
    TOP_OBJ_NEXT,    /* after a member: ',' or '}' */
    TOP_EVENTS,      /* inside traceEvents: expecting an element or ']' */
    TOP_EVENTS_NEXT, /* after an element: ',' or ']' */
    TOP_DONE         /* after the closing brace/bracket */
} top_state;

typedef struct reader {
    gp__input in;
    char *buf;
    size_t len, cap;  /* bytes in buf, allocated (without PAD) */
    size_t mark;      /* start of the element being parsed */
    uint64_t buf_off; /* input offset of buf[0] */
    bool eof;
    jmp_buf jb;
    int depth;
    gp_trace *t;
    gp_error *err;
    const gp_read_opts *opts;
    const char *name; /* for messages */
    char *scratch;    /* unescaped strings of the current element */
    size_t scratch_len, scratch_cap;
    char **retired; /* outgrown scratch blocks, kept until the element ends (pointers into them
                       may still be held by the element being parsed) */
    size_t n_retired, cap_retired;
    pending_meta *meta;
    size_t n_meta, cap_meta;
    uint32_t last_track;
    gp_track_kind last_kind;
    int64_t last_pid, last_tid;
    bool have_last;
    uint64_t next_progress;
    bool saw_events;
    top_state state; /* where run_parser is; kept here so a parse can be resumed */
    bool bare_array; /* the trace is a bare array of events */
    /* Parallel reads (see read_parallel): the piece of the input this reader parses (NULL in a
     * sequential read). Every piece but the first starts at an element of traceEvents. */
    struct piece *piece;
    bool split_part;
    /* How a second part ended, checked against the first part's view of the document: */
    bool part_bare_end;      /* end of input right after the events' ']' */
    bool part_object_closed; /* the top-level object's '}' */
    bool part_members;       /* top-level members after the events array */
} reader;

/* Parallel reads: see read_parallel. */
static bool piece_stops_at(struct piece *pc, uint64_t at);
static void piece_events_ended(struct piece *pc);
static void piece_read_bytes(struct piece *pc, size_t n);

/* ---- errors and buffer management -------------------------------------------------------- */

static _Noreturn void fail_at(reader *r, const char *p, const char *fmt, ...) GP_PRINTF(3, 4);

static _Noreturn void fail_at(reader *r, const char *p, const char *fmt, ...)
{
    if (r->err) {
        char what[300];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        unsigned long long off = r->buf_off + (unsigned long long)(p - r->buf);
        gp_error_set(r->err, GP_EPARSE, "%s: byte %llu: %s", r->name, off, what);
    }
    longjmp(r->jb, JMP_ERROR);
}

/* Called when the scanner meets a NUL byte at p: the end of the buffered data (need more input, or
 * the real end of the input), or a NUL inside the data. */
static _Noreturn void at_nul(reader *r, const char *p, const char *expected)
{
    if (p < r->buf + r->len)
        fail_at(r, p, "unexpected NUL byte");
    if (!r->eof)
        longjmp(r->jb, JMP_NEED_MORE);
    if (r->len == 0 && r->buf_off == 0)
        fail_at(r, p, "empty file");
    fail_at(r, p, "unexpected end of input (truncated file?): expected %s", expected);
}

/* Reads more input, keeping buf[mark..len). Returns false at end of input. Errors longjmp. */
static bool refill(reader *r)
{
    if (r->eof)
        return false;
    if (r->mark > 0) {
        memmove(r->buf, r->buf + r->mark, r->len - r->mark);
        r->len -= r->mark;
        r->buf_off += r->mark;
        r->mark = 0;
    }
    if (r->cap - r->len < CHUNK / 2) {
        size_t ncap = r->cap * 2;
        if (ncap > MAX_BUF) {
            gp_error_set(r->err, GP_ELIMIT, "%s: byte %llu: an element longer than %zu MB", r->name,
                         (unsigned long long)r->buf_off, MAX_BUF >> 20);
            longjmp(r->jb, JMP_ERROR);
        }
        char *nb = realloc(r->buf, ncap + PAD);
        if (!nb) {
            gp_error_set(r->err, GP_ENOMEM, "%s: out of memory growing the read buffer", r->name);
            longjmp(r->jb, JMP_ERROR);
        }
        r->buf = nb;
        r->cap = ncap;
    }
    size_t got = 0;
    gp_status s = gp__input_read(&r->in, r->buf + r->len, r->cap - r->len, &got, r->err);
    if (s != GP_OK)
        longjmp(r->jb, JMP_ERROR);
    if (got == 0)
        r->eof = true;
    if (r->piece)
        piece_read_bytes(r->piece, got);
    r->len += got;
    memset(r->buf + r->len, 0, PAD);
    r->t->stats.bytes = r->buf_off + r->len;
    if (r->opts->progress && r->buf_off + r->len >= r->next_progress) {
        r->opts->progress(r->opts->progress_ctx, gp__input_raw_pos(&r->in), r->in.file_size);
        r->next_progress = r->buf_off + r->len + (16u << 20);
    }
    return got > 0;
}

/* ---- scanning primitives ----------------------------------------------------------------- */

static inline const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
        p++;
    return p;
}

static inline const char *expect_char(reader *r, const char *p, char c, const char *what)
{
    p = skip_ws(p);
    if (*p != c) {
        if (*p == '\0')
            at_nul(r, p, what);
        fail_at(r, p, "expected %s", what);
    }
    return p + 1;
}

#define HASZERO(v) (((v)-0x0101010101010101ULL) & ~(v)&0x8080808080808080ULL)

/* First byte at or after p that is '"', '\\' or a control character (< 0x20, incl. the NUL
 * sentinel). 16 bytes at a time with SSE2 (baseline on x86-64), 8 at a time elsewhere; may read up
 * to 15 bytes past the match, which the buffer's padding allows. */
#if defined(__SSE2__)
#include <emmintrin.h>
static inline const char *scan_string_body(const char *p)
{
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
    const __m128i ctl = _mm_set1_epi8(0x1f);
    for (;;) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
                                 _mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl));
        unsigned mask = (unsigned)_mm_movemask_epi8(m);
        if (mask)
            return p + __builtin_ctz(mask);
        p += 16;
    }
}
#else
static inline const char *scan_string_body(const char *p)
{
    for (;;) {
        uint64_t w;
        memcpy(&w, p, 8);
        uint64_t m = HASZERO(w ^ 0x2222222222222222ULL) | HASZERO(w ^ 0x5c5c5c5c5c5c5c5cULL) |
                     ((w - 0x2020202020202020ULL) & ~w & 0x8080808080808080ULL);
        if (m)
            return p + (__builtin_ctzll(m) >> 3);
        p += 8;
    }
}
#endif

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static void scratch_reset(reader *r)
{
    for (size_t i = 0; i < r->n_retired; i++)
        free(r->retired[i]);
    r->n_retired = 0;
    r->scratch_len = 0;
}

static void scratch_put(reader *r, const char *s, size_t n)
{
    if (r->scratch_len + n + 1 > r->scratch_cap) {
        /* Copy into a bigger block but keep the old one alive until the element ends. */
        size_t ncap = GP_MAX(r->scratch_cap * 2, r->scratch_len + n + 1024);
        char *nb = malloc(ncap);
        char **slot = nb && r->scratch ? GP_PUSH(r->retired, r->n_retired, r->cap_retired) : NULL;
        if (!nb || (r->scratch && !slot)) {
            free(nb);
            gp_error_set(r->err, GP_ENOMEM, "%s: out of memory", r->name);
            longjmp(r->jb, JMP_ERROR);
        }
        if (r->scratch) {
            memcpy(nb, r->scratch, r->scratch_len);
            *slot = r->scratch;
        }
        r->scratch = nb;
        r->scratch_cap = ncap;
    }
    memcpy(r->scratch + r->scratch_len, s, n);
    r->scratch_len += n;
}

static void put_utf8(reader *r, uint32_t cp)
{
    char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | (cp >> 6));
        b[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | (cp >> 12));
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (char)(0xF0 | (cp >> 18));
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    scratch_put(r, b, n);
}

static uint32_t read_u4(reader *r, const char *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p[i]);
        if (h < 0) {
            if (p[i] == '\0')
                at_nul(r, p + i, "4 hex digits");
            fail_at(r, p + i, "invalid \\u escape");
        }
        v = v << 4 | (uint32_t)h;
    }
    return v;
}

/* Parses a string starting at the opening quote p. Writes its bytes (unescaped when needed) to
 * *s / *len; unescaped text lives in r->scratch, which the next string with escapes may reuse
 * unless `keep` (then appended). Returns the position after the closing quote. */
static const char *parse_string(reader *r, const char *p, const char **s, size_t *len,
                                bool *escaped)
{
    const char *start = ++p;
    p = scan_string_body(p);
    if (*p == '"') {
        *s = start;
        *len = (size_t)(p - start);
        if (escaped)
            *escaped = false;
        return p + 1;
    }
    /* Slow path: escapes. */
    size_t base = r->scratch_len;
    for (;;) {
        if (*p == '"')
            break;
        if (*p == '\0')
            at_nul(r, p, "end of string");
        if ((unsigned char)*p < 0x20)
            fail_at(r, p, "control character in string");
        if (*p != '\\') { /* plain run */
            const char *q = scan_string_body(p);
            scratch_put(r, start, (size_t)(q - start));
            p = start = q;
            continue;
        }
        scratch_put(r, start, (size_t)(p - start));
        char c = p[1];
        const char *rep = NULL;
        switch (c) {
        case '"':
            rep = "\"";
            break;
        case '\\':
            rep = "\\";
            break;
        case '/':
            rep = "/";
            break;
        case 'b':
            rep = "\b";
            break;
        case 'f':
            rep = "\f";
            break;
        case 'n':
            rep = "\n";
            break;
        case 'r':
            rep = "\r";
            break;
        case 't':
            rep = "\t";
            break;
        case 'u': {
            uint32_t cp = read_u4(r, p + 2);
            p += 6;
            if (cp >= 0xD800 && cp <= 0xDBFF && p[0] == '\\' && p[1] == 'u') {
                uint32_t lo = read_u4(r, p + 2);
                if (lo >= 0xDC00 && lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    p += 6;
                }
            }
            if (cp >= 0xD800 && cp <= 0xDFFF)
                cp = 0xFFFD; /* lone surrogate */
            if (cp == 0)
                cp = 0xFFFD; /* names are C strings in the model: no embedded NUL */
            put_utf8(r, cp);
            start = p;
            continue;
        }
        case '\0':
            at_nul(r, p + 1, "escape character");
        default:
            fail_at(r, p, "invalid escape '\\%c'", c);
        }
        scratch_put(r, rep, 1);
        p += 2;
        start = p;
    }
    scratch_put(r, start, (size_t)(p - start));
    *s = r->scratch + base;
    *len = r->scratch_len - base;
    if (escaped)
        *escaped = true;
    return p + 1;
}

/* Number token: validates JSON number syntax and returns the end. */
static const char *scan_number(reader *r, const char *p)
{
    const char *q = p;
    if (*q == '-')
        q++;
    if (*q < '0' || *q > '9') {
        if (*q == '\0')
            at_nul(r, q, "a digit");
        if (strncmp(q, "NaN", 3) == 0 || strncmp(q, "Infinity", 8) == 0)
            fail_at(r, p, "NaN or Infinity is not a valid JSON number");
        fail_at(r, q, "expected a digit");
    }
    while (*q >= '0' && *q <= '9')
        q++;
    if (*q == '.') {
        q++;
        if (*q < '0' || *q > '9') {
            if (*q == '\0')
                at_nul(r, q, "a digit");
            fail_at(r, q, "expected a digit after '.'");
        }
        while (*q >= '0' && *q <= '9')
            q++;
    }
    if (*q == 'e' || *q == 'E') {
        q++;
        if (*q == '+' || *q == '-')
            q++;
        if (*q < '0' || *q > '9') {
            if (*q == '\0')
                at_nul(r, q, "a digit");
            fail_at(r, q, "expected exponent digits");
        }
        while (*q >= '0' && *q <= '9')
            q++;
    }
    if (*q == '\0')
        at_nul(r, q, "end of number"); /* the number may continue in the next chunk */
    return q;
}

static void oom(reader *r);

/* strtod over a validated number token [p, end), copied whole (long tokens such as 0.000...1 with
 * many digits must not be cut). The C locale's decimal point is assumed, as JSON requires. */
static double token_to_double(reader *r, const char *p, const char *end)
{
    size_t n = (size_t)(end - p);
    char small[64];
    char *tmp = n < sizeof small ? small : malloc(n + 1);
    if (!tmp)
        oom(r);
    memcpy(tmp, p, n);
    tmp[n] = '\0';
    double v = strtod(tmp, NULL);
    if (tmp != small)
        free(tmp);
    return v;
}

/* Converts "[-]digits[.digits]" in [s, end) from microseconds to exact nanoseconds: integer part *
 * 1000 plus the first three fraction digits, rounded half away from zero on the fourth. Returns
 * false on other syntax (exponents) or overflow. */
static bool us_text_to_ns(const char *s, const char *end, int64_t *out)
{
    bool neg = s < end && *s == '-';
    if (neg)
        s++;
    if (s >= end || *s < '0' || *s > '9')
        return false;
    uint64_t ip = 0;
    while (s < end && *s >= '0' && *s <= '9') {
        ip = ip * 10 + (uint64_t)(*s++ - '0');
        if (ip > GP__MAX_TIME_US)
            return false; /* the careful path reports "time value out of range" */
    }
    uint64_t frac = 0;
    int nd = 0;
    bool round_up = false;
    if (s < end && *s == '.') {
        s++;
        while (s < end && *s >= '0' && *s <= '9') {
            if (nd < 3)
                frac = frac * 10 + (uint64_t)(*s - '0');
            else if (nd == 3)
                round_up = *s >= '5';
            nd++;
            s++;
        }
    }
    if (s != end)
        return false;
    for (int i = nd; i < 3; i++)
        frac *= 10;
    uint64_t v = ip * 1000 + frac + (round_up ? 1 : 0); /* <= 2^62 + 1000: no overflow */
    *out = neg ? -(int64_t)v : (int64_t)v;
    return true;
}

/* Parses a number in microseconds to exact int64 nanoseconds: integer part * 1000 plus the first
 * three fraction digits, rounded half away from zero on the fourth. Exponent forms go through
 * strtod (and are rare). */
/* One pass over "[-]digits[.digits]" followed by a delimiter; NULL when the number has another
 * form (exponent, leading '.', too long) or ends at the buffer's end, for the careful path. */
static inline const char *fast_us_ns(const char *p, int64_t *out)
{
    const char *q = p;
    bool neg = *q == '-';
    q += neg;
    if ((unsigned)(*q - '0') > 9)
        return NULL;
    uint64_t ip = 0;
    int n = 0;
    while ((unsigned)(*q - '0') <= 9) {
        ip = ip * 10 + (uint64_t)(*q++ - '0');
        if (++n > 16)
            return NULL;
    }
    if (ip > GP__MAX_TIME_US)
        return NULL; /* the careful path reports "out of range" */
    uint64_t frac = 0;
    int nd = 0;
    if (*q == '.') {
        q++;
        while ((unsigned)(*q - '0') <= 9 && nd < 3) {
            frac = frac * 10 + (uint64_t)(*q++ - '0');
            nd++;
        }
        if ((unsigned)(*q - '0') <= 9 || nd == 0)
            return NULL; /* more than 3 decimals (rounding) or "1.": careful path */
    }
    if (*q == 'e' || *q == 'E' || *q == '\0')
        return NULL;
    static const uint64_t scale[4] = {1000, 100, 10, 1};
    int64_t v = (int64_t)(ip * 1000 + frac * scale[nd]);
    *out = neg ? -v : v;
    return q;
}

/* Parses a time in µs to ns. Beyond ±2^62 ns: an error for times; for durations (saturate) the
 * value becomes INT64_MAX, which the absurd-duration rule then drops and counts. */
static const char *parse_us_ns_sat(reader *r, const char *p, int64_t *out, bool saturate)
{
    const char *fast = fast_us_ns(p, out);
    if (fast)
        return fast;
    const char *end = scan_number(r, p);
    if (us_text_to_ns(p, end, out))
        return end;
    double v = token_to_double(r, p, end) * 1000.0;
    if (!(fabs(v) <= (double)GP__MAX_TIME_NS)) {
        if (!saturate || v != v)
            fail_at(r, p, "time value out of range (more than 2^62 ns)");
        *out = v > 0 ? INT64_MAX : INT64_MIN;
        return end;
    }
    *out = llround(v);
    return end;
}

static const char *parse_us_ns(reader *r, const char *p, int64_t *out)
{
    return parse_us_ns_sat(r, p, out, false);
}

/* Parses an integer (a JSON number; fractions truncated, exponents via strtod). */
static const char *parse_int(reader *r, const char *p, int64_t *out)
{
    {
        /* Fast path: up to 18 digits followed by a delimiter. */
        const char *q = p;
        bool neg = *q == '-';
        q += neg;
        uint64_t v = 0;
        int n = 0;
        while ((unsigned)(*q - '0') <= 9 && n < 18) {
            v = v * 10 + (uint64_t)(*q++ - '0');
            n++;
        }
        if (n > 0 && n < 18 && *q != '.' && *q != 'e' && *q != 'E' && *q != '\0') {
            *out = neg ? -(int64_t)v : (int64_t)v;
            return q;
        }
    }
    const char *end = scan_number(r, p);
    const char *q = p;
    bool neg = *q == '-';
    if (neg)
        q++;
    uint64_t v = 0;
    bool simple = true;
    while (q < end && *q >= '0' && *q <= '9') {
        if (v > (UINT64_MAX - 9) / 10) {
            simple = false;
            break;
        }
        v = v * 10 + (uint64_t)(*q++ - '0');
    }
    if (simple && (q == end || *q == '.')) {
        if (q < end) { /* fraction: ok, truncate; but an exponent needs strtod */
            for (const char *x = q; x < end; x++)
                if (*x == 'e' || *x == 'E')
                    simple = false;
        }
    } else {
        simple = false;
    }
    if (simple) {
        if (neg)
            *out = v > (uint64_t)INT64_MAX + 1 ? INT64_MIN : (int64_t)(0 - v);
        else
            *out = v > (uint64_t)INT64_MAX ? (int64_t)v /* uint64 ids wrap like Kineto's */
                                           : (int64_t)v;
        return end;
    }
    double d = token_to_double(r, p, end);
    *out = fabs(d) < 9.2e18 ? (int64_t)d : (d < 0 ? INT64_MIN : INT64_MAX);
    return end;
}

static const char *parse_double(reader *r, const char *p, double *out)
{
    {
        /* Exact fast path (Clinger): at most 15 significant digits and 22 decimals give an integer
         * below 2^53 divided by an exact power of ten, which IEEE division rounds correctly. */
        static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
        const char *q = p;
        bool neg = *q == '-';
        q += neg;
        uint64_t m = 0;
        int digits = 0, decimals = 0;
        while ((unsigned)(*q - '0') <= 9 && digits < 16) {
            m = m * 10 + (uint64_t)(*q++ - '0');
            digits += m != 0;
        }
        if (*q == '.') {
            q++;
            while ((unsigned)(*q - '0') <= 9 && digits < 16 && decimals < 22) {
                m = m * 10 + (uint64_t)(*q++ - '0');
                digits += m != 0;
                decimals++;
            }
        }
        if (digits < 16 && q > p + neg && q[-1] != '.' && (unsigned)(*q - '0') > 9 && *q != 'e' &&
            *q != 'E' && *q != '.' && *q != '\0') {
            double v = (double)m / pow10[decimals];
            *out = neg ? -v : v;
            return q;
        }
    }
    const char *end = scan_number(r, p);
    *out = token_to_double(r, p, end);
    return end;
}

static const char *skip_value(reader *r, const char *p);

static const char *skip_literal(reader *r, const char *p, const char *lit)
{
    size_t n = strlen(lit);
    for (size_t i = 0; i < n; i++) {
        if (p[i] != lit[i]) {
            if (p[i] == '\0')
                at_nul(r, p + i, lit);
            fail_at(r, p, "invalid literal (expected %s)", lit);
        }
    }
    return p + n;
}

static const char *skip_container(reader *r, const char *p, char close)
{
    if (++r->depth > MAX_DEPTH)
        fail_at(r, p, "nesting deeper than %d levels", MAX_DEPTH);
    p = skip_ws(p + 1);
    if (*p == close) {
        r->depth--;
        return p + 1;
    }
    for (;;) {
        if (close == '}') {
            p = skip_ws(p);
            if (*p != '"') {
                if (*p == '\0')
                    at_nul(r, p, "a member name");
                fail_at(r, p, "expected a member name (a string)");
            }
            const char *s;
            size_t l;
            p = parse_string(r, p, &s, &l, NULL);
            p = expect_char(r, p, ':', "':'");
        }
        p = skip_value(r, skip_ws(p));
        p = skip_ws(p);
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == close) {
            r->depth--;
            return p + 1;
        }
        if (*p == '\0')
            at_nul(r, p, close == '}' ? "',' or '}'" : "',' or ']'");
        fail_at(r, p, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static const char *skip_value(reader *r, const char *p)
{
    p = skip_ws(p);
    switch (*p) {
    case '"': {
        const char *s;
        size_t l;
        size_t keep = r->scratch_len;
        p = parse_string(r, p, &s, &l, NULL);
        r->scratch_len = keep;
        return p;
    }
    case '{':
        return skip_container(r, p, '}');
    case '[':
        return skip_container(r, p, ']');
    case 't':
        return skip_literal(r, p, "true");
    case 'f':
        return skip_literal(r, p, "false");
    case 'n':
        return skip_literal(r, p, "null");
    case '\0':
        at_nul(r, p, "a value");
    default:
        if (*p == '-' || (*p >= '0' && *p <= '9'))
            return scan_number(r, p);
        if (*p == 'N' || *p == 'I')
            fail_at(r, p, "NaN or Infinity is not a valid JSON value");
        fail_at(r, p, "expected a value");
    }
}

/* Key comparison against a literal: with n a constant, this unrolls into a few word compares
 * (glibc's memcmp is a real call here and showed up at 6 % of the read). */
static inline bool key_eq(const char *k, size_t kl, const char *lit, size_t n)
{
    if (kl != n)
        return false;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t a, b;
        memcpy(&a, k + i, 8);
        memcpy(&b, lit + i, 8);
        if (a != b)
            return false;
    }
    for (; i < n; i++)
        if (k[i] != lit[i])
            return false;
    return true;
}

#define KEY_IS(k, kl, lit) key_eq((k), (kl), (lit), sizeof(lit) - 1)

/* ---- values in args ---------------------------------------------------------------------- */

/* An integer that may be written as a number, or as a string of digits / 0x-hex. Other values are
 * skipped and reported absent. */
static const char *parse_intish(reader *r, const char *p, int64_t *out, bool *ok)
{
    p = skip_ws(p);
    *ok = false;
    if (*p == '-' || (*p >= '0' && *p <= '9')) {
        *ok = true;
        return parse_int(r, p, out);
    }
    if (*p == '"') {
        const char *s;
        size_t l;
        size_t keep = r->scratch_len;
        p = parse_string(r, p, &s, &l, NULL);
        if (l > 0 && l < 32) {
            char tmp[32];
            memcpy(tmp, s, l);
            tmp[l] = '\0';
            char *end;
            errno = 0;
            long long v = strtoll(tmp, &end, 0);
            if (*end == '\0' && errno == 0) {
                *out = v;
                *ok = true;
            }
        }
        r->scratch_len = keep;
        return p;
    }
    return skip_value(r, p);
}

static const char *parse_dbl_or_skip(reader *r, const char *p, double *out)
{
    p = skip_ws(p);
    if (*p == '-' || (*p >= '0' && *p <= '9'))
        return parse_double(r, p, out);
    return skip_value(r, p);
}

static const char *parse_str_or_skip(reader *r, const char *p, const char **s, size_t *l)
{
    p = skip_ws(p);
    if (*p == '"')
        return parse_string(r, p, s, l, NULL);
    return skip_value(r, p);
}

static const char *parse_dim3(reader *r, const char *p, int32_t d[3])
{
    p = skip_ws(p);
    if (*p != '[')
        return skip_value(r, p);
    p = skip_ws(p + 1);
    int i = 0;
    if (*p == ']')
        return p + 1;
    for (;;) {
        int64_t v = -1;
        bool ok;
        p = parse_intish(r, p, &v, &ok);
        if (i < 3)
            d[i++] = ok ? i32_sat(v) : -1;
        p = skip_ws(p);
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == ']')
            return p + 1;
        if (*p == '\0')
            at_nul(r, p, "',' or ']'");
        fail_at(r, p, "expected ',' or ']'");
    }
}

static const char *parse_args(reader *r, const char *p, ev_fields *f)
{
    p = skip_ws(p);
    if (*p != '{')
        return skip_value(r, p);
    const char *args_start = p;
    if (++r->depth > MAX_DEPTH)
        fail_at(r, p, "nesting too deep");
    p = skip_ws(p + 1);
    if (*p == '}') {
        r->depth--;
        f->args_s = args_start;
        f->args_len = (size_t)(p + 1 - args_start);
        return p + 1;
    }
    for (;;) {
        p = skip_ws(p);
        if (*p != '"') {
            if (*p == '\0')
                at_nul(r, p, "a member name");
            fail_at(r, p, "expected a member name (a string) in args");
        }
        const char *k;
        size_t kl;
        size_t keep = r->scratch_len;
        p = parse_string(r, p, &k, &kl, NULL);
        p = expect_char(r, p, ':', "':'");
        p = skip_ws(p);
        bool ok = false;
        int64_t v = 0;
        switch (kl) {
        case 4:
            if (KEY_IS(k, kl, "grid")) {
                p = parse_dim3(r, p, f->grid);
                goto next;
            }
            if (KEY_IS(k, kl, "Addr")) {
                p = parse_intish(r, p, &f->addr, &ok);
                goto next;
            }
            if (KEY_IS(k, kl, "cbid")) {
                p = parse_intish(r, p, &f->cbid, &ok);
                goto next;
            }
            if (KEY_IS(k, kl, "name")) {
                p = parse_str_or_skip(r, p, &f->meta_name, &f->meta_name_len);
                goto next;
            }
            if (KEY_IS(k, kl, "kind")) {
                p = parse_str_or_skip(r, p, &f->copy_kind, &f->copy_kind_len);
                goto next;
            }
            break;
        case 5:
            if (KEY_IS(k, kl, "block")) {
                p = parse_dim3(r, p, f->block);
                goto next;
            }
            if (KEY_IS(k, kl, "bytes")) {
                p = parse_intish(r, p, &f->bytes, &ok);
                goto next;
            }
            if (KEY_IS(k, kl, "Bytes")) {
                p = parse_intish(r, p, &f->mem_bytes, &ok);
                f->has_mem_bytes = ok;
                goto next;
            }
            if (KEY_IS(k, kl, "dtype")) {
                p = parse_str_or_skip(r, p, &f->dtype, &f->dtype_len);
                goto next;
            }
            break;
        case 6:
            if (KEY_IS(k, kl, "stream")) {
                p = parse_intish(r, p, &v, &ok);
                if (ok) {
                    f->stream = v;
                    f->has_stream = true;
                }
                goto next;
            }
            if (KEY_IS(k, kl, "device")) {
                p = parse_intish(r, p, &v, &ok);
                if (ok) {
                    f->device = v;
                    f->has_device = true;
                }
                goto next;
            }
            if (KEY_IS(k, kl, "queued")) {
                p = parse_intish(r, p, &f->queued, &ok);
                goto next;
            }
            break;
        case 7:
            if (KEY_IS(k, kl, "context")) {
                p = parse_intish(r, p, &f->context, &ok);
                goto next;
            }
            break;
        case 9:
            if (KEY_IS(k, kl, "Python id")) {
                p = parse_intish(r, p, &f->py_id, &ok);
                goto next;
            }
            if (KEY_IS(k, kl, "Device Id")) {
                p = parse_intish(r, p, &f->dev_id, &ok);
                goto next;
            }
            break;
        case 10:
            if (KEY_IS(k, kl, "sort_index")) {
                p = parse_intish(r, p, &f->sort_index, &ok);
                f->has_sort_index = ok;
                goto next;
            }
            if (KEY_IS(k, kl, "Group size")) {
                p = parse_intish(r, p, &f->group_size, &ok);
                goto next;
            }
            break;
        case 11:
            if (KEY_IS(k, kl, "External id") || KEY_IS(k, kl, "external id")) {
                p = parse_intish(r, p, &v, &ok);
                if (ok) {
                    f->ext = v;
                    f->has_ext = true;
                }
                goto next;
            }
            if (KEY_IS(k, kl, "correlation")) {
                p = parse_intish(r, p, &v, &ok);
                if (ok) {
                    f->corr = v;
                    f->has_corr = true;
                }
                goto next;
            }
            if (KEY_IS(k, kl, "Device Type")) {
                p = parse_intish(r, p, &f->dev_type, &ok);
                goto next;
            }
            break;
        case 12:
            if (KEY_IS(k, kl, "warps per SM")) {
                p = parse_dbl_or_skip(r, p, &f->wps);
                goto next;
            }
            break;
        case 13:
            if (KEY_IS(k, kl, "blocks per SM")) {
                p = parse_dbl_or_skip(r, p, &f->bps);
                goto next;
            }
            if (KEY_IS(k, kl, "shared memory")) {
                p = parse_intish(r, p, &f->smem, &ok);
                goto next;
            }
            if (KEY_IS(k, kl, "In msg nelems")) {
                p = parse_intish(r, p, &f->in_nelems, &ok);
                goto next;
            }
            break;
        case 14:
            if (KEY_IS(k, kl, "Out msg nelems")) {
                p = parse_intish(r, p, &f->out_nelems, &ok);
                goto next;
            }
            if (KEY_IS(k, kl, "cuda_sync_kind")) {
                p = parse_str_or_skip(r, p, &f->sync_kind, &f->sync_kind_len);
                goto next;
            }
            if (KEY_IS(k, kl, "Total Reserved")) {
                p = parse_intish(r, p, &f->total_res, &ok);
                goto next;
            }
            if (KEY_IS(k, kl, "wait_on_stream")) {
                p = parse_intish(r, p, &f->wait_on_stream, &ok);
                goto next;
            }
            break;
        case 15:
            if (KEY_IS(k, kl, "Total Allocated")) {
                p = parse_intish(r, p, &f->total_alloc, &ok);
                goto next;
            }
            if (KEY_IS(k, kl, "Collective name")) {
                p = parse_str_or_skip(r, p, &f->collective, &f->collective_len);
                goto next;
            }
            break;
        case 8:
            if (KEY_IS(k, kl, "graph id")) {
                p = parse_intish(r, p, &f->graph_id, &ok);
                goto next;
            }
            break;
        case 16:
            if (KEY_IS(k, kl, "Python parent id")) {
                if (*p == 'n') {
                    p = skip_literal(r, p, "null");
                    f->py_parent_null = true;
                } else {
                    p = parse_intish(r, p, &f->py_parent, &ok);
                }
                goto next;
            }
            break;
        default:
            break;
        }
        if (KEY_IS(k, kl, "registers per thread")) {
            p = parse_intish(r, p, &f->regs, &ok);
            goto next;
        }
        if (KEY_IS(k, kl, "est. achieved occupancy %")) {
            p = parse_dbl_or_skip(r, p, &f->occ);
            goto next;
        }
        if (KEY_IS(k, kl, "memory bandwidth (GB/s)")) {
            p = parse_dbl_or_skip(r, p, &f->bw);
            goto next;
        }
        if (KEY_IS(k, kl, "graph node id")) {
            p = parse_intish(r, p, &f->graph_node, &ok);
            goto next;
        }
        if (f->ph == 'C' && (*p == '-' || (*p >= '0' && *p <= '9'))) {
            double d;
            p = parse_double(r, p, &d);
            if (f->n_ctr++ == 0) {
                f->ctr_key = k;
                f->ctr_key_len = kl;
                f->ctr_value = d;
            }
            goto next;
        }
        p = skip_value(r, p);
        r->scratch_len = keep; /* the key's unescaped copy, if any, is no longer needed */
    next:
        p = skip_ws(p);
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == '}') {
            r->depth--;
            f->args_s = args_start;
            f->args_len = (size_t)(p + 1 - args_start);
            return p + 1;
        }
        if (*p == '\0')
            at_nul(r, p, "',' or '}'");
        fail_at(r, p, "expected ',' or '}' in args");
    }
}

/* ---- events ------------------------------------------------------------------------------ */

static cat_id classify_cat(const char *s, size_t l)
{
    switch (l) {
    case 4:
        if (KEY_IS(s, l, "ac2g"))
            return CAT_AC2G;
        break;
    case 5:
        if (KEY_IS(s, l, "range"))
            return CAT_RANGE;
        if (KEY_IS(s, l, "async"))
            return CAT_AC2G; /* legacy launch flows */
        if (KEY_IS(s, l, "Trace"))
            return CAT_KNOWN_OTHER; /* the profiler's own span, "PyTorch Profiler (0)" */
        break;
    case 6:
        if (KEY_IS(s, l, "cpu_op"))
            return CAT_CPU_OP;
        if (KEY_IS(s, l, "kernel") || KEY_IS(s, l, "Kernel"))
            return CAT_KERNEL;
        if (KEY_IS(s, l, "Memcpy"))
            return CAT_MEMCPY;
        if (KEY_IS(s, l, "Memset"))
            return CAT_MEMSET;
        break;
    case 7:
        if (KEY_IS(s, l, "Runtime"))
            return CAT_RUNTIME;
        break;
    case 8:
        if (KEY_IS(s, l, "Operator"))
            return CAT_CPU_OP;
        if (KEY_IS(s, l, "overhead"))
            return CAT_OVERHEAD;
        break;
    case 9:
        if (KEY_IS(s, l, "cuda_sync"))
            return CAT_SYNC;
        break;
    case 10:
        if (KEY_IS(s, l, "gpu_memcpy"))
            return CAT_MEMCPY;
        if (KEY_IS(s, l, "gpu_memset"))
            return CAT_MEMSET;
        break;
    case 11:
        if (KEY_IS(s, l, "cuda_driver"))
            return CAT_DRIVER;
        break;
    case 12:
        if (KEY_IS(s, l, "cuda_runtime"))
            return CAT_RUNTIME;
        break;
    case 15:
        if (KEY_IS(s, l, "user_annotation"))
            return CAT_USER_ANNOTATION;
        if (KEY_IS(s, l, "python_function"))
            return CAT_PYTHON;
        break;
    case 17:
        if (KEY_IS(s, l, "cpu_instant_event"))
            return CAT_CPU_INSTANT;
        break;
    case 19:
        if (KEY_IS(s, l, "gpu_user_annotation"))
            return CAT_GPU_USER_ANNOTATION;
        break;
    case 16:
        if (KEY_IS(s, l, "async_cpu_to_gpu"))
            return CAT_AC2G;
        break;
    default:
        break;
    }
    return CAT_UNKNOWN;
}

static const char *parse_idval(reader *r, const char *p, idval *v)
{
    p = skip_ws(p);
    memset(v, 0, sizeof *v);
    v->present = true;
    if (*p == '"') {
        p = parse_string(r, p, &v->s, &v->len, NULL);
        v->is_str = true;
        /* "25738" (legacy) and "stream 7" (legacy GPU rows) carry numbers. */
        const char *q = v->s;
        size_t n = v->len;
        if (n > 7 && memcmp(q, "stream ", 7) == 0) {
            q += 7;
            n -= 7;
        }
        if (n > 0 && n < 19) { /* at most 18 digits: cannot overflow int64 */
            bool neg = q[0] == '-';
            size_t i = neg ? 1 : 0;
            int64_t x = 0;
            bool digits = i < n;
            for (; i < n; i++) {
                if (q[i] < '0' || q[i] > '9') {
                    digits = false;
                    break;
                }
                x = x * 10 + (q[i] - '0');
            }
            if (digits) {
                v->numeric = true;
                v->num = neg ? -x : x;
            }
        }
        return p;
    }
    if (*p == '-' || (*p >= '0' && *p <= '9')) {
        p = parse_int(r, p, &v->num);
        v->numeric = true;
        return p;
    }
    /* Other JSON values (null, objects...) count as absent, i.e. 0, as Chrome's viewer does. */
    v->present = false;
    v->numeric = true;
    return skip_value(r, p);
}

static gp_strid intern(reader *r, const char *s, size_t len)
{
    gp_strid id;
    if (gp_trace_intern(r->t, s, len, &id) != GP_OK) {
        gp_error_set(r->err, GP_ENOMEM, "%s: out of memory", r->name);
        longjmp(r->jb, JMP_ERROR);
    }
    return id;
}

static gp_strid intern_name(reader *r, const ev_fields *f)
{
    gp_strid id;
    if (gp__strtab_intern_h(r->t->strings, f->name, f->name_len,
                            gp__strtab_hash(f->name, f->name_len), &id) != GP_OK) {
        gp_error_set(r->err, GP_ENOMEM, "%s: out of memory", r->name);
        longjmp(r->jb, JMP_ERROR);
    }
    return id;
}

static void oom(reader *r)
{
    gp_error_set(r->err, GP_ENOMEM, "%s: out of memory", r->name);
    longjmp(r->jb, JMP_ERROR);
}

static uint32_t get_track(reader *r, gp_track_kind kind, int64_t pid, int64_t tid)
{
    if (r->have_last && r->last_kind == kind && r->last_pid == pid && r->last_tid == tid)
        return r->last_track;
    uint32_t idx;
    if (gp_trace_track(r->t, kind, pid, tid, &idx) != GP_OK)
        oom(r);
    r->have_last = true;
    r->last_kind = kind;
    r->last_pid = pid;
    r->last_tid = tid;
    r->last_track = idx;
    return idx;
}

/* The track for a pid/tid pair where either may be a string ("Spans", ""): a CPU thread when both
 * are numeric, else an OTHER track keyed by the interned strings (mapped to negative keys so they
 * cannot collide with numeric ids). */
static uint32_t track_for_ids(reader *r, bool pstr, gp_strid ps, int64_t pnum, bool tstr,
                              gp_strid ts, int64_t tnum)
{
    if (!pstr && !tstr)
        return get_track(r, GP_TRACK_CPU_THREAD, pnum, tnum);
    int64_t pid = pstr ? -(int64_t)ps - 1 : pnum;
    int64_t tid = tstr ? -(int64_t)ts - 1 : tnum;
    uint32_t idx = get_track(r, GP_TRACK_OTHER, pid, tid);
    gp_track *tr = &r->t->tracks[idx];
    tr->pid_is_str = pstr;
    tr->tid_is_str = tstr;
    tr->pid_str = ps;
    tr->tid_str = ts;
    return idx;
}

static uint32_t get_string_track(reader *r, const ev_fields *f)
{
    bool pstr = f->pid.is_str && !f->pid.numeric, tstr = f->tid.is_str && !f->tid.numeric;
    return track_for_ids(r, pstr, pstr ? intern(r, f->pid.s, f->pid.len) : 0, f->pid.num, tstr,
                         tstr ? intern(r, f->tid.s, f->tid.len) : 0, f->tid.num);
}

/* The legacy autograd-profiler format (torch.autograd.profiler.profile(...).export_chrome_trace
 * in a PyTorch built without Kineto, e.g. Debian's python3-torch): a bare array of "X" events
 * without "cat" whose pid is the string "CPU functions" (operators, tid the profiler's thread
 * number) or "CUDA functions" (kernels, tid the CUDA device index), plus "s"/"f" flows of cat
 * "cpu_to_cuda" from an operator to its kernels. Decided per event from the pid string alone, so
 * every piece of a parallel read decides exactly as a sequential read does. Returns which of the
 * two pids f carries (LEGACY_NONE for anything else, including a numeric pid). */
typedef enum legacy_pid { LEGACY_NONE = 0, LEGACY_CPU, LEGACY_CUDA } legacy_pid;

static legacy_pid legacy_pid_of(const idval *pid)
{
    if (!pid->is_str || pid->numeric)
        return LEGACY_NONE;
    if (KEY_IS(pid->s, pid->len, "CPU functions"))
        return LEGACY_CPU;
    if (KEY_IS(pid->s, pid->len, "CUDA functions"))
        return LEGACY_CUDA;
    return LEGACY_NONE;
}

static int64_t norm_stream(int64_t s)
{
    return s == 4294967295LL ? -1 : s;
}

static gp_event_kind kind_of(cat_id c)
{
    switch (c) {
    case CAT_CPU_OP:
        return GP_EV_CPU_OP;
    case CAT_USER_ANNOTATION:
        return GP_EV_USER_ANNOTATION;
    case CAT_GPU_USER_ANNOTATION:
        return GP_EV_GPU_USER_ANNOTATION;
    case CAT_PYTHON:
        return GP_EV_PYTHON;
    case CAT_RUNTIME:
        return GP_EV_RUNTIME;
    case CAT_DRIVER:
        return GP_EV_DRIVER;
    case CAT_KERNEL:
        return GP_EV_KERNEL;
    case CAT_MEMCPY:
        return GP_EV_MEMCPY;
    case CAT_MEMSET:
        return GP_EV_MEMSET;
    case CAT_SYNC:
        return GP_EV_SYNC;
    case CAT_OVERHEAD:
        return GP_EV_OVERHEAD;
    case CAT_RANGE:
        return GP_EV_RANGE;
    default:
        return GP_EV_OTHER;
    }
}

static void add_event(reader *r, const gp_event *ev)
{
    gp_track *tr = &r->t->tracks[ev->track];
    gp_event *e = GP_PUSH(tr->events, tr->n_events, tr->cap_events);
    if (!e)
        oom(r);
    *e = *ev;
    r->t->stats.by_kind[ev->kind]++;
}

static void commit_metadata(reader *r, const ev_fields *f)
{
    r->t->stats.metadata_events++;
    if (!f->pid.present)
        return;
    pending_meta m = {0};
    m.pid = f->pid.numeric ? f->pid.num : INT64_MIN;
    m.tid = f->tid.numeric ? f->tid.num : INT64_MIN;
    if (KEY_IS(f->name, f->name_len, "process_name") && f->meta_name)
        m.kind = 0;
    else if (KEY_IS(f->name, f->name_len, "thread_name") && f->meta_name)
        m.kind = 1;
    else if (KEY_IS(f->name, f->name_len, "thread_sort_index") && f->has_sort_index)
        m.kind = 2;
    else
        return;
    if (m.pid == INT64_MIN)
        return;
    if (f->meta_name)
        m.value = intern(r, f->meta_name, f->meta_name_len);
    m.num = f->sort_index;
    pending_meta *slot = GP_PUSH(r->meta, r->n_meta, r->cap_meta);
    if (!slot)
        oom(r);
    *slot = m;
}

static void commit_flow(reader *r, const ev_fields *f)
{
    r->t->stats.flow_points++;
    if (f->cat == CAT_AC2G || !f->has_id || !f->has_ts)
        return; /* launch flows are implied by correlation ids */
    /* Legacy operator -> kernel arrows are launch flows too; without correlation ids the model
     * has no link to keep for them (docs/internals/trace.md). */
    if (f->cat_s && KEY_IS(f->cat_s, f->cat_len, "cpu_to_cuda") &&
        legacy_pid_of(&f->pid) != LEGACY_NONE)
        return;
    gp__trace_priv *priv = r->t->priv;
    gp__flow_point *fp = GP_PUSH(priv->flow_points, priv->n_flow_points, priv->cap_flow_points);
    if (!fp)
        oom(r);
    fp->id = f->id;
    fp->cat = f->cat_s ? intern(r, f->cat_s, f->cat_len) : 0;
    fp->name = f->name ? intern(r, f->name, f->name_len) : 0;
    fp->is_end = f->ph == 'f';
    fp->ts = f->ts;
    /* The track is found when the flow is paired: an endpoint without its partner must not
     * create a track. */
    fp->pid_is_str = f->pid.is_str && !f->pid.numeric;
    fp->tid_is_str = f->tid.is_str && !f->tid.numeric;
    fp->pid_str = fp->pid_is_str ? intern(r, f->pid.s, f->pid.len) : 0;
    fp->tid_str = fp->tid_is_str ? intern(r, f->tid.s, f->tid.len) : 0;
    fp->pid = f->pid.num;
    fp->tid = f->tid.num;
}

/* One counter sample of the event's series `key`: the event's name when the key is "value" (the
 * usual single-series form), else "<name>.<key>". */
static void add_counter_sample(reader *r, const ev_fields *f, const char *key, size_t key_len,
                               double value)
{
    gp_counter_sample c = {0};
    c.ts = f->ts;
    c.value = value;
    if (KEY_IS(key, key_len, "value")) {
        c.series = f->name ? intern(r, f->name, f->name_len) : 0;
    } else {
        char tmp[512];
        int n = snprintf(tmp, sizeof tmp, "%.*s.%.*s", (int)GP_MIN(f->name_len, 250),
                         f->name ? f->name : "", (int)GP_MIN(key_len, 250), key);
        c.series = intern(r, tmp, (size_t)n);
    }
    c.track = get_track(r, GP_TRACK_COUNTER, f->pid.numeric ? f->pid.num : 0, 0);
    if (gp_trace_add_counter(r->t, &c) != GP_OK)
        oom(r);
    r->t->stats.by_kind[GP_EV_COUNTER]++;
}

/* A counter event: one sample per numeric member of args, as Chrome's viewer draws each member as
 * a series of its own. parse_args kept the first; with several, the args text (validated by
 * parse_args, complete in the buffer) is scanned again for all of them. */
static void commit_counter(reader *r, const ev_fields *f)
{
    if (!f->n_ctr || !f->has_ts)
        return;
    if (f->n_ctr == 1 || !f->args_s) {
        add_counter_sample(r, f, f->ctr_key, f->ctr_key_len, f->ctr_value);
        return;
    }
    const char *p = skip_ws(f->args_s + 1);
    while (*p == '"') {
        const char *k;
        size_t kl;
        p = parse_string(r, p, &k, &kl, NULL);
        p = skip_ws(expect_char(r, p, ':', "':'"));
        if (*p == '-' || (*p >= '0' && *p <= '9')) {
            double d;
            p = parse_double(r, p, &d);
            add_counter_sample(r, f, k, kl, d);
        } else {
            p = skip_value(r, p);
        }
        p = skip_ws(p);
        if (*p == ',')
            p = skip_ws(p + 1);
    }
}

static void commit_event(reader *r, const ev_fields *f)
{
    gp_trace *t = r->t;
    if (f->ph == 'M') {
        commit_metadata(r, f);
        return;
    }
    if (f->ph == 's' || f->ph == 'f' || f->ph == 't') {
        commit_flow(r, f);
        return;
    }
    if (f->ph == 'C') {
        commit_counter(r, f);
        return;
    }
    if ((f->ph != 'X' && f->ph != 'i' && f->ph != 'I') || !f->has_ts) {
        t->stats.skipped++;
        return;
    }
    gp_event ev = {0};
    ev.ts = f->ts;
    ev.correlation = f->has_corr ? f->corr : 0;
    ev.external_id = f->has_ext ? f->ext : 0;
    bool instant = f->ph != 'X';
    gp_event_kind kind;
    legacy_pid legacy = LEGACY_NONE; /* a legacy "X" event without cat (see legacy_pid_of) */
    if (instant) {
        bool is_mem = f->name_len == 8 && memcmp(f->name, "[memory]", 8) == 0;
        if (is_mem && !r->opts->keep_memory)
            return;
        kind = is_mem ? GP_EV_MEMORY : GP_EV_INSTANT;
        ev.flags |= GP_EVF_INSTANT;
    } else {
        legacy = f->cat_s ? LEGACY_NONE : legacy_pid_of(&f->pid);
        kind = legacy == LEGACY_CPU    ? GP_EV_CPU_OP
               : legacy == LEGACY_CUDA ? GP_EV_KERNEL
                                       : kind_of(f->cat);
        if (kind == GP_EV_PYTHON && !r->opts->keep_python)
            return;
        if (f->has_dur) {
            ev.dur = f->dur;
            if (ev.dur < 0) {
                ev.dur = 0;
                ev.flags |= GP_EVF_DUR_CLAMPED;
                t->stats.negative_dur++;
            } else if (ev.dur > ABSURD_NS) {
                t->stats.absurd_dur++;
                return;
            }
        } else {
            ev.flags |= GP_EVF_NO_DUR;
            t->stats.no_dur++;
        }
        if (kind == GP_EV_OTHER && f->cat != CAT_KNOWN_OTHER)
            t->stats.unknown_cat++;
    }
    ev.kind = (uint8_t)kind;
    ev.name = f->name ? intern_name(r, f) : 0;

    if (gp_event_kind_is_gpu(kind)) {
        int64_t device = f->has_device ? f->device : (f->pid.numeric ? f->pid.num : 0);
        int64_t stream = f->has_stream ? f->stream : (f->tid.numeric ? f->tid.num : -1);
        if (legacy == LEGACY_CUDA) { /* tid is the device; the format records no stream */
            device = f->has_device ? f->device : (f->tid.numeric ? f->tid.num : 0);
            stream = f->has_stream ? f->stream : 0;
        }
        stream = norm_stream(stream);
        if (!f->has_stream)
            ev.flags |= GP_EVF_STREAM_FROM_TID;
        ev.track = get_track(r, GP_TRACK_GPU_STREAM, device, stream);
        gp_gpu_info gi;
        gp_gpu_info_init(&gi);
        gi.device = i32_sat(device);
        gi.stream = stream;
        gi.context = f->context >= 0 ? i32_sat(f->context) : -1;
        memcpy(gi.grid, f->grid, sizeof gi.grid);
        memcpy(gi.block, f->block, sizeof gi.block);
        gi.registers_per_thread = i32_sat(f->regs);
        gi.shared_memory = i32_sat(f->smem);
        gi.blocks_per_sm = (float)f->bps;
        gi.warps_per_sm = (float)f->wps;
        gi.occupancy_pct = (float)f->occ;
        gi.queued = i32_sat(f->queued);
        gi.bytes = f->bytes;
        gi.bandwidth_gbps = f->bw;
        gi.graph_id = f->graph_id;
        gi.graph_node_id = f->graph_node;
        gi.sync_kind = f->sync_kind ? intern(r, f->sync_kind, f->sync_kind_len) : 0;
        gi.wait_on_stream = f->wait_on_stream;
        gi.collective = f->collective ? intern(r, f->collective, f->collective_len) : 0;
        gi.in_msg_nelems = f->in_nelems;
        gi.out_msg_nelems = f->out_nelems;
        gi.group_size = i32_sat(f->group_size);
        gi.dtype = f->dtype ? intern(r, f->dtype, f->dtype_len) : 0;
        gi.copy_kind = f->copy_kind ? intern(r, f->copy_kind, f->copy_kind_len) : 0;
        if (gp_trace_add_gpu_info(t, &gi, &ev.extra) != GP_OK)
            oom(r);
    } else {
        if (legacy == LEGACY_CPU) /* process 0, the profiler's thread number */
            ev.track = f->tid.is_str && !f->tid.numeric
                           ? track_for_ids(r, false, 0, 0, true, intern(r, f->tid.s, f->tid.len), 0)
                           : get_track(r, GP_TRACK_CPU_THREAD, 0, f->tid.num);
        else if (f->pid.numeric && f->tid.numeric)
            ev.track = get_track(r, GP_TRACK_CPU_THREAD, f->pid.num, f->tid.num);
        else
            ev.track = get_string_track(r, f);
        switch (kind) {
        case GP_EV_MEMORY: {
            gp_mem_info mi = {f->addr,
                              f->has_mem_bytes ? f->mem_bytes : 0,
                              f->total_alloc,
                              f->total_res,
                              i32_sat(f->dev_type),
                              i32_sat(f->dev_id)};
            if (gp_trace_add_mem_info(t, &mi, &ev.extra) != GP_OK)
                oom(r);
            break;
        }
        case GP_EV_PYTHON: {
            gp_py_info pi = {f->py_id, f->py_parent_null ? -1 : f->py_parent};
            if (gp_trace_add_py_info(t, &pi, &ev.extra) != GP_OK)
                oom(r);
            break;
        }
        case GP_EV_RUNTIME:
        case GP_EV_DRIVER:
            ev.extra = f->cbid >= 0 && f->cbid < UINT32_MAX ? (uint32_t)f->cbid + 1 : 0;
            break;
        case GP_EV_RANGE:
        case GP_EV_INSTANT:
            if (f->args_s && f->args_len > 2 &&
                gp_trace_add_args(t, f->args_s, f->args_len, &ev.extra) != GP_OK)
                oom(r);
            break;
        case GP_EV_OTHER:
            ev.extra = f->cat_s ? intern(r, f->cat_s, f->cat_len) : 0;
            break;
        case GP_EV_CPU_OP: {
            int64_t s = f->has_stream ? norm_stream(f->stream) : -1;
            ev.extra = s >= 0 && s < (int64_t)UINT32_MAX - 1 ? (uint32_t)s + 1 : 0;
            break;
        }
        default:
            break;
        }
    }
    add_event(r, &ev);
}

static void fields_init(ev_fields *f)
{
    gp__zero(f, sizeof *f);                 /* once per event: see gp__zero */
    f->pid.numeric = f->tid.numeric = true; /* a missing pid or tid is 0 */
    f->context = -1;
    f->cbid = -1;
    for (int i = 0; i < 3; i++)
        f->grid[i] = f->block[i] = -1;
    f->regs = f->smem = f->queued = f->bytes = -1;
    f->graph_id = f->graph_node = -1;
    f->py_id = f->py_parent = -1;
    f->total_alloc = f->total_res = -1;
    f->dev_type = f->dev_id = -1;
    f->wait_on_stream = -1;
    f->in_nelems = f->out_nelems = f->group_size = -1;
}

/* Parses one event object at p (which points at '{') and commits it. */
static const char *parse_event(reader *r, const char *p)
{
    ev_fields f;
    fields_init(&f);
    scratch_reset(r);
    p = skip_ws(p + 1);
    if (*p == '}') {
        r->t->stats.skipped++;
        return p + 1;
    }
    for (;;) {
        p = skip_ws(p);
        if (*p != '"') {
            if (*p == '\0')
                at_nul(r, p, "a member name");
            fail_at(r, p, "expected a member name (a string) in event");
        }
        const char *k;
        size_t kl;
        p = parse_string(r, p, &k, &kl, NULL);
        p = expect_char(r, p, ':', "':'");
        p = skip_ws(p);
        switch (kl) {
        case 2:
            if (k[0] == 'p' && k[1] == 'h') {
                const char *s;
                size_t l;
                if (*p != '"') {
                    if (*p == '\0')
                        at_nul(r, p, "a string");
                    fail_at(r, p, "field \"ph\": expected a string");
                }
                p = parse_string(r, p, &s, &l, NULL);
                f.ph = l ? s[0] : 0;
                goto next;
            }
            if (k[0] == 't' && k[1] == 's') {
                if (*p == '"') { /* some writers quote numbers */
                    const char *s;
                    size_t l;
                    const char *q = parse_string(r, p, &s, &l, NULL);
                    if (!us_text_to_ns(s, s + l, &f.ts))
                        fail_at(r, p, "field \"ts\": expected a number");
                    f.has_ts = true;
                    p = q;
                    goto next;
                }
                if (*p != '-' && (*p < '0' || *p > '9')) {
                    if (*p == '\0')
                        at_nul(r, p, "a number");
                    if (*p == 'N' || *p == 'I')
                        fail_at(r, p, "field \"ts\": NaN or Infinity is not a valid JSON number");
                    fail_at(r, p, "field \"ts\": expected a number");
                }
                p = parse_us_ns(r, p, &f.ts);
                f.has_ts = true;
                goto next;
            }
            if (k[0] == 'i' && k[1] == 'd') {
                bool ok;
                p = parse_intish(r, p, &f.id, &ok);
                f.has_id = ok;
                goto next;
            }
            break;
        case 3:
            if (KEY_IS(k, kl, "cat")) {
                if (*p == '"') {
                    p = parse_string(r, p, &f.cat_s, &f.cat_len, NULL);
                    f.cat = classify_cat(f.cat_s, f.cat_len);
                } else {
                    p = skip_value(r, p);
                }
                goto next;
            }
            if (KEY_IS(k, kl, "pid")) {
                p = parse_idval(r, p, &f.pid);
                goto next;
            }
            if (KEY_IS(k, kl, "tid")) {
                p = parse_idval(r, p, &f.tid);
                goto next;
            }
            if (KEY_IS(k, kl, "dur")) {
                if (*p == '"') { /* quoted, as "ts" may be */
                    const char *s;
                    size_t l;
                    const char *q = parse_string(r, p, &s, &l, NULL);
                    if (!us_text_to_ns(s, s + l, &f.dur))
                        fail_at(r, p, "field \"dur\": expected a number");
                    f.has_dur = true;
                    p = q;
                    goto next;
                }
                if (*p != '-' && (*p < '0' || *p > '9')) {
                    if (*p == '\0')
                        at_nul(r, p, "a number");
                    if (*p == 'N' || *p == 'I')
                        fail_at(r, p, "field \"dur\": NaN or Infinity is not a valid JSON number");
                    if (*p == 'n') { /* null */
                        p = skip_literal(r, p, "null");
                        goto next;
                    }
                    fail_at(r, p, "field \"dur\": expected a number");
                }
                p = parse_us_ns_sat(r, p, &f.dur, true);
                f.has_dur = true;
                goto next;
            }
            break;
        case 4:
            if (KEY_IS(k, kl, "name")) {
                if (*p == '"')
                    p = parse_string(r, p, &f.name, &f.name_len, &f.name_escaped);
                else
                    p = skip_value(r, p);
                goto next;
            }
            if (KEY_IS(k, kl, "args")) {
                p = parse_args(r, p, &f);
                goto next;
            }
            break;
        default:
            break;
        }
        p = skip_value(r, p);
    next:
        p = skip_ws(p);
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == '}') {
            p++;
            break;
        }
        if (*p == '\0')
            at_nul(r, p, "',' or '}'");
        fail_at(r, p, "expected ',' or '}'");
    }
    commit_event(r, &f);
    return p;
}

/* ---- top level --------------------------------------------------------------------------- */

static const char *parse_device_props(reader *r, const char *p)
{
    /* This member may be parsed again after a refill: start from no devices each time. */
    r->t->n_devices = 0;
    p = skip_ws(p);
    if (*p != '[')
        return skip_value(r, p);
    p = skip_ws(p + 1);
    if (*p == ']')
        return p + 1;
    for (;;) {
        p = skip_ws(p);
        if (*p != '{') {
            p = skip_value(r, p);
        } else {
            gp_device_props d = {0};
            d.id = -1;
            p = skip_ws(p + 1);
            while (*p != '}') {
                if (*p != '"') {
                    if (*p == '\0')
                        at_nul(r, p, "a member name");
                    fail_at(r, p, "expected a member name in deviceProperties");
                }
                const char *k;
                size_t kl;
                p = parse_string(r, p, &k, &kl, NULL);
                p = skip_ws(expect_char(r, p, ':', "':'"));
                int64_t v = 0;
                bool ok = false;
                if (KEY_IS(k, kl, "name")) {
                    const char *s = NULL;
                    size_t l = 0;
                    p = parse_str_or_skip(r, p, &s, &l);
                    if (s)
                        d.name = intern(r, s, l);
                } else {
                    p = parse_intish(r, p, &v, &ok);
                    if (ok) {
                        if (KEY_IS(k, kl, "id"))
                            d.id = i32_sat(v);
                        else if (KEY_IS(k, kl, "totalGlobalMem"))
                            d.total_global_mem = v;
                        else if (KEY_IS(k, kl, "computeMajor"))
                            d.compute_major = i32_sat(v);
                        else if (KEY_IS(k, kl, "computeMinor"))
                            d.compute_minor = i32_sat(v);
                        else if (KEY_IS(k, kl, "numSms"))
                            d.num_sms = i32_sat(v);
                        else if (KEY_IS(k, kl, "maxThreadsPerBlock"))
                            d.max_threads_per_block = i32_sat(v);
                        else if (KEY_IS(k, kl, "maxThreadsPerMultiprocessor"))
                            d.max_threads_per_sm = i32_sat(v);
                        else if (KEY_IS(k, kl, "regsPerBlock"))
                            d.regs_per_block = i32_sat(v);
                        else if (KEY_IS(k, kl, "regsPerMultiprocessor"))
                            d.regs_per_sm = i32_sat(v);
                        else if (KEY_IS(k, kl, "warpSize"))
                            d.warp_size = i32_sat(v);
                        else if (KEY_IS(k, kl, "sharedMemPerBlock"))
                            d.shared_mem_per_block = v;
                        else if (KEY_IS(k, kl, "sharedMemPerMultiprocessor"))
                            d.shared_mem_per_sm = v;
                        else if (KEY_IS(k, kl, "sharedMemPerBlockOptin"))
                            d.shared_mem_per_block_optin = v;
                    }
                }
                p = skip_ws(p);
                if (*p == ',')
                    p = skip_ws(p + 1);
                else if (*p != '}') {
                    if (*p == '\0')
                        at_nul(r, p, "',' or '}'");
                    fail_at(r, p, "expected ',' or '}'");
                }
            }
            p++;
            if (gp_trace_add_device(r->t, &d) != GP_OK)
                oom(r);
        }
        p = skip_ws(p);
        if (*p == ',') {
            p = skip_ws(p + 1);
            continue;
        }
        if (*p == ']')
            return p + 1;
        if (*p == '\0')
            at_nul(r, p, "',' or ']'");
        fail_at(r, p, "expected ',' or ']'");
    }
}

static const char *parse_dist_info(reader *r, const char *p)
{
    p = skip_ws(p);
    if (*p != '{')
        return skip_value(r, p);
    gp_dist_info *d = &r->t->dist;
    d->present = true;
    p = skip_ws(p + 1);
    while (*p != '}') {
        if (*p != '"') {
            if (*p == '\0')
                at_nul(r, p, "a member name");
            fail_at(r, p, "expected a member name in distributedInfo");
        }
        const char *k;
        size_t kl;
        p = parse_string(r, p, &k, &kl, NULL);
        p = skip_ws(expect_char(r, p, ':', "':'"));
        int64_t v;
        bool ok;
        if (KEY_IS(k, kl, "rank")) {
            p = parse_intish(r, p, &v, &ok);
            if (ok)
                d->rank = i32_sat(v);
        } else if (KEY_IS(k, kl, "world_size")) {
            p = parse_intish(r, p, &v, &ok);
            if (ok)
                d->world_size = i32_sat(v);
        } else if (KEY_IS(k, kl, "pg_count")) {
            p = parse_intish(r, p, &v, &ok);
            if (ok)
                d->pg_count = i32_sat(v);
        } else if (KEY_IS(k, kl, "backend") || KEY_IS(k, kl, "nccl_version")) {
            bool backend = k[0] == 'b';
            const char *s = NULL;
            size_t l = 0;
            p = parse_str_or_skip(r, p, &s, &l);
            if (s) {
                gp_strid id = intern(r, s, l);
                if (backend)
                    d->backend = id;
                else
                    d->nccl_version = id;
            }
        } else {
            p = skip_value(r, p);
        }
        p = skip_ws(p);
        if (*p == ',')
            p = skip_ws(p + 1);
        else if (*p != '}') {
            if (*p == '\0')
                at_nul(r, p, "',' or '}'");
            fail_at(r, p, "expected ',' or '}'");
        }
    }
    return p + 1;
}

/* One top-level member "key": value, p at the key's quote. */
static const char *parse_member(reader *r, const char *p, bool *events_next)
{
    const char *k;
    size_t kl;
    p = parse_string(r, p, &k, &kl, NULL);
    p = skip_ws(expect_char(r, p, ':', "':'"));
    *events_next = false;
    if (KEY_IS(k, kl, "traceEvents")) {
        if (*p != '[') {
            if (*p == '\0')
                at_nul(r, p, "'['");
            fail_at(r, p, "\"traceEvents\" must be an array");
        }
        *events_next = true;
        return p + 1;
    }
    if (KEY_IS(k, kl, "deviceProperties"))
        return parse_device_props(r, p);
    if (KEY_IS(k, kl, "distributedInfo"))
        return parse_dist_info(r, p);
    char key[128];
    size_t klen = GP_MIN(kl, sizeof key - 1);
    memcpy(key, k, klen);
    key[klen] = '\0';
    if (KEY_IS(k, kl, "baseTimeNanoseconds")) {
        int64_t v;
        bool ok;
        const char *at = p;
        p = parse_intish(r, p, &v, &ok);
        if (ok && (v > GP__MAX_TIME_NS || v < -GP__MAX_TIME_NS))
            fail_at(r, at, "baseTimeNanoseconds out of range (more than 2^62 ns)");
        if (ok)
            r->t->base_time_ns = v;
        return p;
    }
    if (KEY_IS(k, kl, "schemaVersion")) {
        int64_t v;
        bool ok;
        p = parse_intish(r, p, &v, &ok);
        if (ok)
            r->t->schema_version = i32_sat(v);
        return p;
    }
    if (KEY_IS(k, kl, "displayTimeUnit")) {
        const char *s = NULL;
        size_t l = 0;
        p = parse_str_or_skip(r, p, &s, &l);
        if (s)
            r->t->display_time_unit = intern(r, s, l);
        return p;
    }
    const char *vstart = p;
    p = skip_value(r, p);
    size_t vlen = (size_t)(p - vstart);
    if (vlen <= META_MAX && !KEY_IS(k, kl, "INFO") && !KEY_IS(k, kl, "WARNING") &&
        !KEY_IS(k, kl, "ERROR")) {
        char *val = malloc(vlen + 1);
        if (!val)
            oom(r);
        memcpy(val, vstart, vlen);
        val[vlen] = '\0';
        gp_status s = gp_trace_set_meta(r->t, key, val);
        free(val);
        if (s != GP_OK)
            oom(r);
    }
    return p;
}

static gp_status run_parser(reader *r)
{
    int jmp = setjmp(r->jb);
    if (jmp == JMP_ERROR)
        return r->err && r->err->status ? r->err->status : GP_EPARSE;
    if (jmp == JMP_NEED_MORE) {
        if (!refill(r) && r->mark >= r->len) {
            /* nothing buffered and nothing more: handled below by the sentinel */
        }
    }
    for (;;) {
        const char *p = skip_ws(r->buf + r->mark);
        r->depth = 0;
        switch (r->state) {
        case TOP_START:
            if (*p == '{') {
                r->state = TOP_OBJ_KEY;
            } else if (*p == '[') {
                r->state = TOP_EVENTS;
                r->bare_array = true;
                r->saw_events = true;
            } else if (*p == '\0') {
                at_nul(r, p, "'{' or '['");
            } else {
                fail_at(r, p, "expected '{' or '[' at the start of a trace");
            }
            p++;
            break;
        case TOP_OBJ_KEY:
            if (*p == '}') {
                r->state = TOP_DONE;
                p++;
                break;
            }
            /* fallthrough */
        case TOP_OBJ_NEXT:
            if (r->state == TOP_OBJ_NEXT) {
                if (*p == '\0' && r->split_part && r->eof && p == r->buf + r->len &&
                    !r->part_members) {
                    r->part_bare_end = true; /* a bare array's second part ends after ']' */
                    return GP_OK;
                }
                if (*p == '}') {
                    r->part_object_closed = r->split_part;
                    r->state = TOP_DONE;
                    p++;
                    break;
                }
                if (*p != ',') {
                    if (*p == '\0')
                        at_nul(r, p, "',' or '}'");
                    fail_at(r, p, "expected ',' or '}'");
                }
                p = skip_ws(p + 1);
            }
            if (*p != '"') {
                if (*p == '\0')
                    at_nul(r, p, "a member name");
                fail_at(r, p, "expected a member name (a string)");
            }
            {
                bool events_next;
                r->part_members = r->split_part;
                p = parse_member(r, p, &events_next);
                if (events_next) {
                    r->state = TOP_EVENTS;
                    r->saw_events = true;
                } else {
                    r->state = TOP_OBJ_NEXT;
                }
            }
            break;
        case TOP_EVENTS:
            if (*p == ']') {
                r->state = r->bare_array ? TOP_DONE : TOP_OBJ_NEXT;
                if (r->piece)
                    piece_events_ended(r->piece);
                p++;
                break;
            }
            /* fallthrough */
        case TOP_EVENTS_NEXT:
            if (r->state == TOP_EVENTS_NEXT) {
                if (*p == ']') {
                    r->state = r->bare_array ? TOP_DONE : TOP_OBJ_NEXT;
                    if (r->piece)
                        piece_events_ended(r->piece);
                    p++;
                    break;
                }
                if (*p != ',') {
                    if (*p == '\0')
                        at_nul(r, p, "',' or ']'");
                    fail_at(r, p, "expected ',' or ']' between events");
                }
                p = skip_ws(p + 1);
            }
            if (*p != '{') {
                if (*p == '\0')
                    at_nul(r, p, "an event object");
                fail_at(r, p, "expected an event object");
            }
            if (r->piece && piece_stops_at(r->piece, r->buf_off + (uint64_t)(p - r->buf))) {
                r->mark = (size_t)(p - r->buf); /* the next piece starts at this element */
                r->state = TOP_EVENTS;
                return GP_OK;
            }
            p = parse_event(r, p);
            r->t->stats.events_in++; /* counted once the element is complete (no retry left) */
            r->state = TOP_EVENTS_NEXT;
            break;
        case TOP_DONE:
            if (*p == '\0') {
                if (p < r->buf + r->len)
                    fail_at(r, p, "unexpected NUL byte");
                if (!r->eof) {
                    r->mark = (size_t)(p - r->buf);
                    refill(r);
                    continue;
                }
                return GP_OK;
            }
            fail_at(r, p, "unexpected data after the end of the trace");
        }
        r->mark = (size_t)(p - r->buf);
    }
}

/* ---- finishing ---------------------------------------------------------------------------- */

static int cmp_flow_point(const void *a, const void *b)
{
    const gp__flow_point *x = a, *y = b;
    if (x->cat != y->cat)
        return x->cat < y->cat ? -1 : 1;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    if (x->is_end != y->is_end)
        return x->is_end ? 1 : -1;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

static gp_status finish_read(reader *r)
{
    /* Helpers used below report out-of-memory with longjmp (as during parsing). */
    if (setjmp(r->jb))
        return GP_ENOMEM;
    gp_trace *t = r->t;
    gp__trace_priv *priv = t->priv;
    gp_ns base = t->base_time_ns;
    /* Shift relative times to absolute ones. */
    if (base) {
        /* |ts| and |base| are at most 2^62 each: the sums cannot overflow; bound them again. */
        bool range = true;
        for (size_t i = 0; i < t->n_tracks; i++)
            for (size_t j = 0; j < t->tracks[i].n_events; j++) {
                gp_ns *ts = &t->tracks[i].events[j].ts;
                *ts += base;
                range &= *ts <= GP__MAX_TIME_NS && *ts >= -GP__MAX_TIME_NS;
            }
        for (size_t i = 0; i < t->n_counters; i++) {
            t->counters[i].ts += base;
            range &= t->counters[i].ts <= GP__MAX_TIME_NS && t->counters[i].ts >= -GP__MAX_TIME_NS;
        }
        for (size_t i = 0; i < priv->n_flow_points; i++)
            priv->flow_points[i].ts += base;
        if (!range)
            return gp_error_set(r->err, GP_EPARSE,
                                "%s: field \"baseTimeNanoseconds\": base + ts is out of range "
                                "(more than 2^62 ns)",
                                r->name);
    }
    /* Pair flow points: start then end with the same (cat, id). */
    if (priv->n_flow_points) {
        qsort(priv->flow_points, priv->n_flow_points, sizeof *priv->flow_points, cmp_flow_point);
        for (size_t i = 0; i + 1 < priv->n_flow_points; i++) {
            gp__flow_point *a = &priv->flow_points[i], *b = &priv->flow_points[i + 1];
            if (a->cat == b->cat && a->id == b->id && !a->is_end && b->is_end) {
                uint32_t src = track_for_ids(r, a->pid_is_str, a->pid_str, a->pid, a->tid_is_str,
                                             a->tid_str, a->tid);
                uint32_t dst = track_for_ids(r, b->pid_is_str, b->pid_str, b->pid, b->tid_is_str,
                                             b->tid_str, b->tid);
                gp_flow f = {a->id, a->cat, a->name, src, dst, a->ts, b->ts};
                if (gp_trace_add_flow(t, &f) != GP_OK)
                    return GP_ENOMEM;
                i++;
            }
        }
    }
    /* Track names and sort indices from metadata events. */
    for (size_t m = 0; m < r->n_meta; m++) {
        const pending_meta *pm = &r->meta[m];
        for (size_t i = 0; i < t->n_tracks; i++) {
            gp_track *tr = &t->tracks[i];
            if (tr->kind == GP_TRACK_OTHER || tr->kind == GP_TRACK_COUNTER || tr->pid != pm->pid)
                continue;
            if (pm->kind == 0)
                tr->process_name = pm->value;
            else if (pm->kind == 1 && tr->tid == pm->tid)
                tr->name = pm->value;
            else if (pm->kind == 2 && tr->tid == pm->tid)
                tr->sort_index = pm->num;
        }
    }
    t->rank = t->dist.present && t->dist.rank >= 0 ? t->dist.rank : -1;
    return gp_trace_finish(t);
}

void gp_read_opts_init(gp_read_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->keep_python = true;
    opts->keep_memory = true;
}

/* Creates a reader over an opened input (which it takes over), reading into buf (cap + PAD bytes,
 * taken over) or, when buf is NULL, a new buffer. NULL when out of memory (buf is then freed). */
static reader *reader_new_buf(const gp__input *in, const gp_read_opts *opts, gp_error *err,
                              char *buf, size_t cap)
{
    reader *r = calloc(1, sizeof *r);
    if (!r) {
        free(buf);
        return NULL;
    }
    r->in = *in;
    r->err = err;
    r->opts = opts;
    r->name = r->in.path;
    r->cap = buf ? cap : CHUNK;
    r->buf = buf ? buf : malloc(r->cap + PAD);
    if (!r->buf || gp_trace_create(r->in.path, &r->t) != GP_OK) {
        free(r->buf);
        free(r);
        return NULL;
    }
    memset(r->buf, 0, PAD);
    r->state = TOP_START;
    return r;
}

static reader *reader_new(const gp__input *in, const gp_read_opts *opts, gp_error *err)
{
    return reader_new_buf(in, opts, err, NULL, 0);
}

/* Frees the reader and closes its input; the trace is freed too unless it was taken. */
static void reader_free(reader *r)
{
    if (!r)
        return;
    gp__input_close(&r->in);
    free(r->buf);
    scratch_reset(r);
    free(r->retired);
    free(r->scratch);
    free(r->meta);
    gp_trace_free(r->t);
    free(r);
}

/* After a successful parse: checks, finishes the model, hands it over. Frees the reader. */
static gp_status reader_complete(reader *r, gp_status st, gp_trace **out)
{
    gp_error *err = r->err;
    if (st == GP_OK && !r->saw_events)
        st = gp_error_set(err, GP_EPARSE, "%s: byte %llu: no \"traceEvents\" array in this JSON",
                          r->name, (unsigned long long)(r->buf_off + r->len));
    if (st == GP_OK)
        st = finish_read(r);
    if (st != GP_OK) {
        if (err->status == GP_OK)
            gp_error_set(err, st, "%s: %s", r->name, gp_strerror(st));
        reader_free(r);
        return st;
    }
    gp__trace_priv *priv = r->t->priv;
    free(priv->flow_points);
    priv->flow_points = NULL;
    priv->n_flow_points = priv->cap_flow_points = 0;
    *out = r->t;
    r->t = NULL;
    reader_free(r);
    return GP_OK;
}

gp_status gp__trace_read_input(gp__input *in, const gp_read_opts *opts, gp_trace **out,
                               gp_error *err)
{
    gp_read_opts defaults;
    if (!opts) {
        gp_read_opts_init(&defaults);
        opts = &defaults;
    }
    gp_error local;
    if (!err)
        err = &local;
    err->status = GP_OK;
    err->msg[0] = '\0';
    reader *r = reader_new(in, opts, err);
    if (!r) {
        gp__input_close(in);
        return gp_error_set(err, GP_ENOMEM, "%s: out of memory", in->path);
    }
    r->t->stats.threads_used = 1;
    r->t->stats.pieces = 1;
    return reader_complete(r, run_parser(r), out);
}

/* ---- parallel reads ----------------------------------------------------------------------- */

/* A large plain file is cut into pieces parsed side by side, each into its own trace, which are
 * then merged in file order. The first piece starts at the beginning; every other piece starts at a
 * likely element start (find_split) and is trusted only when the piece before it arrives exactly
 * there: that proves the offset is an element of traceEvents, parsed in the same state a
 * sequential read would be in. Work is balanced by stealing: a thread with nothing left moves the
 * stop of the piece with the most input remaining back to a split point in the middle of what
 * remains, and parses from there itself. Results never depend on the cuts: anything in doubt (a
 * cut that is not an element boundary, a piece that failed, a document that ends unlike it began)
 * falls back to the sequential result, or to a sequential read that reports the error exactly as
 * it would have been reported. */

#define PARALLEL_MIN_BYTES (48u << 20)
#define MAX_PIECES 64
#define PIECE_DONE UINT64_MAX
#define COPY_CHUNK 32768 /* elements per merge-copy task */

uint64_t gp__read_steal_min = 8u << 20;
size_t gp__read_initial_pieces = 2;

typedef struct par_read par_read;

/* One piece: the reader parses from `start` up to the element that begins at offset `stop` (0: to
 * the end of the input). A thief may move `stop` earlier; `stack` keeps the stops it replaced, to
 * go back to when the new stop turns out not to be an element boundary. */
typedef struct piece {
    par_read *pr;
    reader *r;
    uint64_t start;
    _Atomic uint64_t stop; /* PIECE_DONE once the piece has stopped or left traceEvents */
    _Atomic uint64_t pos;  /* offset of the element being parsed, for thieves */
    uint64_t stack[MAX_PIECES];
    size_t n_stack;      /* stack, n_stack and started: guarded by pr->mu */
    bool started;        /* taken by a thread */
    uint64_t stopped_at; /* set by the piece's thread: where it stopped, 0 = it read to the end */
    gp_status st;
    gp_error err;
} piece;

struct par_read {
    const char *path;
    uint64_t size;
    int fd; /* for find_split */
    const gp_read_opts *opts;
    gp_read_opts opts_caller; /* progress through par_progress: the caller's thread only */
    gp_read_opts opts_helper; /* no progress */
    pthread_t caller;
    gp__input first_in; /* the caller's input: the first piece's */
    _Atomic uint64_t bytes_read;
    _Atomic uint32_t threads_used;
    pthread_mutex_t mu;
    size_t n_pieces; /* guarded by mu */
    piece pieces[MAX_PIECES];
};

/* Called by a piece's reader at each element start `at`: true when the piece stops there. */
static bool piece_stops_at(piece *pc, uint64_t at)
{
    atomic_store_explicit(&pc->pos, at, memory_order_relaxed);
    for (;;) {
        uint64_t s = atomic_load_explicit(&pc->stop, memory_order_acquire);
        if (s == 0 || s == PIECE_DONE || at < s)
            return false;
        if (at == s) {
            if (atomic_compare_exchange_strong(&pc->stop, &s, PIECE_DONE)) {
                pc->stopped_at = at;
                return true;
            }
            continue; /* a thief moved the stop meanwhile: look again */
        }
        /* at > s: s was not an element boundary: go back to the stop it replaced (thieves change
         * the stop only under the lock, so it cannot move while we hold it). */
        pthread_mutex_lock(&pc->pr->mu);
        if (atomic_load(&pc->stop) == s)
            atomic_store(&pc->stop, pc->n_stack ? pc->stack[--pc->n_stack] : 0);
        pthread_mutex_unlock(&pc->pr->mu);
    }
}

/* Called at the end of traceEvents: the piece reads on to the end of the input; no stop applies. */
static void piece_events_ended(piece *pc)
{
    atomic_store(&pc->stop, PIECE_DONE);
    pc->stopped_at = 0;
}

static void piece_read_bytes(piece *pc, size_t n)
{
    atomic_fetch_add_explicit(&pc->pr->bytes_read, n, memory_order_relaxed);
}

/* Progress of the whole read, reported from the caller's thread only. */
static void par_progress(void *ctx, uint64_t done, uint64_t total)
{
    (void)done;
    par_read *pr = ctx;
    uint64_t all = atomic_load_explicit(&pr->bytes_read, memory_order_relaxed);
    pr->opts->progress(pr->opts->progress_ctx, GP_MIN(all, total), total);
}

/* Finds a likely element start in [from, limit) (scanning at most 1 MB): a '{' that begins a line
 * (after optional blanks) whose previous line ends with ','. A raw newline cannot occur inside a
 * JSON string, so this is outside strings; whether it is an element of traceEvents is proven later
 * by the piece before arriving exactly there. Returns 0 when none is found. */
static uint64_t find_split(int fd, uint64_t from, uint64_t limit)
{
    enum { WINDOW = 1 << 20 };
    if (from >= limit)
        return 0;
    size_t want = (size_t)GP_MIN((uint64_t)WINDOW, limit - from);
    char *w = malloc(want);
    if (!w)
        return 0;
    uint64_t found = 0;
    ssize_t n = pread(fd, w, want, (off_t)from);
    for (ssize_t i = 1; n > 0 && i < n && !found; i++) {
        if (w[i - 1] != '\n')
            continue;
        ssize_t k = i;
        while (k < n && (w[k] == ' ' || w[k] == '\t' || w[k] == '\r'))
            k++;
        if (k >= n || w[k] != '{')
            continue;
        ssize_t b = i - 2; /* last non-blank before the newline */
        while (b >= 0 && (w[b] == ' ' || w[b] == '\t' || w[b] == '\r'))
            b--;
        if (b >= 0 && w[b] == ',')
            found = from + (uint64_t)k;
    }
    free(w);
    return found;
}

/* Under pr->mu: splits what remains of the running piece with the most input left, and returns
 * the new piece (not started), or NULL when nothing is worth splitting. */
static piece *steal(par_read *pr)
{
    for (int attempt = 0; attempt < 4 && pr->n_pieces < MAX_PIECES; attempt++) {
        piece *v = NULL;
        uint64_t best = 0, from = 0, end = 0, stop = 0;
        for (size_t i = 0; i < pr->n_pieces; i++) {
            piece *c = &pr->pieces[i];
            uint64_t s = atomic_load(&c->stop);
            if (!c->started || s == PIECE_DONE)
                continue;
            uint64_t at = GP_MAX(atomic_load(&c->pos), c->start);
            uint64_t e = s ? s : pr->size;
            if (e > at && e - at > best) {
                best = e - at;
                v = c;
                from = at;
                end = e;
                stop = s;
            }
        }
        if (!v || best < 2 * gp__read_steal_min)
            return NULL;
        uint64_t at = find_split(pr->fd, from + best / 2, end);
        if (!at)
            return NULL;
        v->stack[v->n_stack++] = stop;
        uint64_t expect = stop;
        if (!atomic_compare_exchange_strong(&v->stop, &expect, at)) {
            v->n_stack--; /* it stopped or left the events meanwhile: look again */
            continue;
        }
        piece *n = &pr->pieces[pr->n_pieces++];
        n->pr = pr;
        n->start = at;
        atomic_init(&n->stop, stop);
        atomic_init(&n->pos, at);
        /* If `stop` is no boundary, the new piece goes back where the victim would have. */
        n->n_stack = v->n_stack - 1;
        memcpy(n->stack, v->stack, n->n_stack * sizeof *n->stack);
        return n;
    }
    return NULL;
}

/* Parses one piece on this thread. *spare is a read buffer to reuse (taken, and given back). */
static void run_piece(par_read *pr, piece *pc, char **spare, size_t *spare_cap)
{
    const gp_read_opts *opts =
        pthread_equal(pthread_self(), pr->caller) ? &pr->opts_caller : &pr->opts_helper;
    gp__input in;
    if (pc->start == 0) {
        in = pr->first_in;
        pr->first_in.fd = -1;
    } else if (gp__input_open(&in, pr->path, &pc->err) != GP_OK) {
        pc->st = pc->err.status;
        atomic_store(&pc->stop, PIECE_DONE);
        return;
    } else if (in.compressed || lseek(in.fd, (off_t)pc->start, SEEK_SET) != (off_t)pc->start) {
        gp__input_close(&in);
        pc->st = gp_error_set(&pc->err, GP_EIO, "%s: cannot read from byte %llu", pr->path,
                              (unsigned long long)pc->start);
        atomic_store(&pc->stop, PIECE_DONE);
        return;
    }
    reader *r = reader_new_buf(&in, opts, &pc->err, *spare, *spare_cap);
    *spare = NULL;
    if (!r) {
        gp__input_close(&in);
        pc->st = gp_error_set(&pc->err, GP_ENOMEM, "%s: out of memory", pr->path);
        atomic_store(&pc->stop, PIECE_DONE);
        return;
    }
    r->piece = pc;
    if (pc->start) {
        r->buf_off = pc->start;
        r->state = TOP_EVENTS;
        r->split_part = true;
        r->saw_events = true;
    }
    pc->r = r;
    pc->st = run_parser(r);
    atomic_store(&pc->stop, PIECE_DONE);
    /* Keep the trace for the merge; hand the buffer to this thread's next piece. */
    gp__input_close(&r->in);
    *spare = r->buf;
    *spare_cap = r->cap;
    r->buf = NULL;
}

static void par_worker(void *ctx, size_t i)
{
    (void)i;
    par_read *pr = ctx;
    char *spare = NULL;
    size_t spare_cap = 0;
    bool worked = false;
    for (;;) {
        pthread_mutex_lock(&pr->mu);
        piece *pc = NULL;
        for (size_t k = 0; k < pr->n_pieces && !pc; k++)
            if (!pr->pieces[k].started)
                pc = &pr->pieces[k];
        if (!pc)
            pc = steal(pr);
        if (pc)
            pc->started = true;
        pthread_mutex_unlock(&pr->mu);
        if (!pc)
            break;
        run_piece(pr, pc, &spare, &spare_cap);
        worked = true;
    }
    free(spare);
    if (worked)
        atomic_fetch_add(&pr->threads_used, 1);
}

/* ---- merging pieces ---- */

/* How one piece's trace maps into the first piece's. */
typedef struct merge_src {
    reader *src;
    gp_strid *map;     /* string ids */
    uint32_t *tmap;    /* track indexes */
    size_t *track_off; /* per track: where its events go in the destination track */
    size_t off_gpu, off_mem, off_py, off_args;
    /* Copy tasks not yet done per source array (the side tables by copy_what, then one per
     * track): the task that brings one to zero frees that array, which keeps the peak low. */
    _Atomic size_t *left;
} merge_src;

typedef enum copy_what { COPY_GPU, COPY_MEM, COPY_PY, COPY_ARGS, COPY_EVENTS } copy_what;

typedef struct copy_task {
    const merge_src *m;
    copy_what what;
    uint32_t track; /* COPY_EVENTS: the source track */
    size_t lo, hi;
} copy_task;

typedef struct copy_job {
    gp_trace *dst;
    copy_task *tasks;
    size_t n, cap;
} copy_job;

static void copy_events(gp_trace *d, const merge_src *m, uint32_t k, size_t lo, size_t hi)
{
    const gp_track *st = &m->src->t->tracks[k];
    uint32_t di = m->tmap[k];
    gp_event *out = d->tracks[di].events + m->track_off[k];
    for (size_t j = lo; j < hi; j++) {
        gp_event e = st->events[j];
        e.name = m->map[e.name];
        e.track = di;
        switch ((gp_event_kind)e.kind) {
        case GP_EV_KERNEL:
        case GP_EV_MEMCPY:
        case GP_EV_MEMSET:
        case GP_EV_SYNC:
        case GP_EV_GPU_USER_ANNOTATION:
            e.extra += e.extra ? (uint32_t)m->off_gpu : 0;
            break;
        case GP_EV_MEMORY:
            e.extra += e.extra ? (uint32_t)m->off_mem : 0;
            break;
        case GP_EV_PYTHON:
            e.extra += e.extra ? (uint32_t)m->off_py : 0;
            break;
        case GP_EV_RANGE:
        case GP_EV_INSTANT:
            e.extra += e.extra ? (uint32_t)m->off_args : 0;
            break;
        case GP_EV_OTHER:
            e.extra = m->map[e.extra];
            break;
        default:
            break;
        }
        out[j] = e;
    }
}

static void run_copy_task(void *ctx, size_t i)
{
    copy_job *job = ctx;
    const copy_task *c = &job->tasks[i];
    const merge_src *m = c->m;
    const gp_trace *t = m->src->t;
    gp_trace *d = job->dst;
    size_t n = c->hi - c->lo;
    switch (c->what) {
    case COPY_EVENTS:
        copy_events(d, m, c->track, c->lo, c->hi);
        break;
    case COPY_GPU:
        memcpy(d->gpu_info + m->off_gpu + c->lo, t->gpu_info + c->lo, n * sizeof *d->gpu_info);
        for (size_t j = c->lo; j < c->hi; j++) {
            gp_gpu_info *g = &d->gpu_info[m->off_gpu + j];
            g->sync_kind = m->map[g->sync_kind];
            g->collective = m->map[g->collective];
            g->dtype = m->map[g->dtype];
            g->copy_kind = m->map[g->copy_kind];
        }
        break;
    case COPY_MEM:
        memcpy(d->mem_info + m->off_mem + c->lo, t->mem_info + c->lo, n * sizeof *d->mem_info);
        break;
    case COPY_PY:
        memcpy(d->py_info + m->off_py + c->lo, t->py_info + c->lo, n * sizeof *d->py_info);
        break;
    case COPY_ARGS:
        for (size_t j = c->lo; j < c->hi; j++)
            d->args[m->off_args + j] = m->map[t->args[j]];
        break;
    }
    /* The last task over a source array frees it (no other task reads it any more). */
    size_t slot = c->what == COPY_EVENTS ? COPY_EVENTS + c->track : c->what;
    if (atomic_fetch_sub(&m->left[slot], 1) != 1)
        return;
    gp_trace *src = m->src->t;
    switch (c->what) {
    case COPY_EVENTS:
        free(src->tracks[c->track].events);
        src->tracks[c->track].events = NULL;
        src->tracks[c->track].n_events = src->tracks[c->track].cap_events = 0;
        break;
    case COPY_GPU:
        free(src->gpu_info);
        src->gpu_info = NULL;
        src->n_gpu_info = src->cap_gpu_info = 0;
        break;
    case COPY_MEM:
        free(src->mem_info);
        src->mem_info = NULL;
        src->n_mem_info = src->cap_mem_info = 0;
        break;
    case COPY_PY:
        free(src->py_info);
        src->py_info = NULL;
        src->n_py_info = src->cap_py_info = 0;
        break;
    case COPY_ARGS:
        free(src->args);
        src->args = NULL;
        src->n_args = src->cap_args = 0;
        break;
    }
}

/* Queues copy tasks of at most COPY_CHUNK elements for [0, n). Longjmps (dst) when out of memory.
 */
static void add_copy_tasks(reader *dst, copy_job *job, const merge_src *m, copy_what what,
                           uint32_t track, size_t n)
{
    size_t slot = what == COPY_EVENTS ? COPY_EVENTS + track : what;
    for (size_t lo = 0; lo < n; lo += COPY_CHUNK) {
        copy_task *c = GP_PUSH(job->tasks, job->n, job->cap);
        if (!c)
            oom(dst);
        *c = (copy_task){m, what, track, lo, GP_MIN(n, lo + COPY_CHUNK)};
        atomic_fetch_add(&m->left[slot], 1);
    }
}

/* Appends src's records to dst's tables, reserving room for the copies (queued in job, run later
 * in parallel) and merging the small parts (counters, flows, metadata, top-level members) now.
 * src parsed the input after everything dst holds. Longjmps (dst's jb) when out of memory. */
static void merge_prepare(reader *dst, merge_src *m, copy_job *job)
{
    gp_trace *d = dst->t, *t = m->src->t;
    reader *src = m->src;
    size_t n_str = t->strings->n;
    m->map = malloc(n_str * sizeof *m->map);
    m->tmap = malloc((t->n_tracks + 1) * sizeof *m->tmap);
    m->track_off = malloc((t->n_tracks + 1) * sizeof *m->track_off);
    m->left = calloc(COPY_EVENTS + t->n_tracks, sizeof *m->left);
    if (!m->map || !m->tmap || !m->track_off || !m->left)
        oom(dst);
    for (size_t i = 0; i < n_str; i++)
        m->map[i] = intern(dst, gp_trace_str(t, (gp_strid)i), gp_trace_strlen(t, (gp_strid)i));
    m->off_gpu = d->n_gpu_info;
    m->off_mem = d->n_mem_info;
    m->off_py = d->n_py_info;
    m->off_args = d->n_args;
    /* Event `extra` fields are uint32 indexes into these tables (see gp_trace_add_gpu_info). */
    if (m->off_gpu + t->n_gpu_info >= UINT32_MAX - 1 ||
        m->off_mem + t->n_mem_info >= UINT32_MAX - 1 ||
        m->off_py + t->n_py_info >= UINT32_MAX - 1 || m->off_args + t->n_args >= UINT32_MAX - 1) {
        gp_error_set(dst->err, GP_ELIMIT, "%s: more than 2^32 side records", dst->name);
        longjmp(dst->jb, JMP_ERROR);
    }
    if (gp__grow((void **)&d->gpu_info, &d->cap_gpu_info, sizeof *d->gpu_info,
                 m->off_gpu + t->n_gpu_info) != GP_OK ||
        gp__grow((void **)&d->mem_info, &d->cap_mem_info, sizeof *d->mem_info,
                 m->off_mem + t->n_mem_info) != GP_OK ||
        gp__grow((void **)&d->py_info, &d->cap_py_info, sizeof *d->py_info,
                 m->off_py + t->n_py_info) != GP_OK ||
        gp__grow((void **)&d->args, &d->cap_args, sizeof *d->args, m->off_args + t->n_args) !=
            GP_OK)
        oom(dst);
    d->n_gpu_info += t->n_gpu_info;
    d->n_mem_info += t->n_mem_info;
    d->n_py_info += t->n_py_info;
    d->n_args += t->n_args;
    add_copy_tasks(dst, job, m, COPY_GPU, 0, t->n_gpu_info);
    add_copy_tasks(dst, job, m, COPY_MEM, 0, t->n_mem_info);
    add_copy_tasks(dst, job, m, COPY_PY, 0, t->n_py_info);
    add_copy_tasks(dst, job, m, COPY_ARGS, 0, t->n_args);
    for (size_t k = 0; k < t->n_tracks; k++) {
        gp_track *st = &t->tracks[k];
        uint32_t di;
        if (st->kind == GP_TRACK_CPU_THREAD || st->kind == GP_TRACK_OTHER)
            di = track_for_ids(dst, st->pid_is_str, m->map[st->pid_str], st->pid, st->tid_is_str,
                               m->map[st->tid_str], st->tid);
        else
            di = get_track(dst, st->kind, st->pid, st->tid);
        m->tmap[k] = di;
        gp_track *dt = &d->tracks[di];
        if (gp__grow((void **)&dt->events, &dt->cap_events, sizeof *dt->events,
                     dt->n_events + st->n_events) != GP_OK)
            oom(dst);
        m->track_off[k] = dt->n_events;
        dt->n_events += st->n_events;
        add_copy_tasks(dst, job, m, COPY_EVENTS, (uint32_t)k, st->n_events);
    }
    for (size_t i = 0; i < t->n_counters; i++) {
        gp_counter_sample c = t->counters[i];
        c.series = m->map[c.series];
        c.track = m->tmap[c.track];
        if (gp_trace_add_counter(d, &c) != GP_OK)
            oom(dst);
    }
    gp__trace_priv *sp = t->priv, *dp = d->priv;
    for (size_t i = 0; i < sp->n_flow_points; i++) {
        gp__flow_point f = sp->flow_points[i];
        f.cat = m->map[f.cat];
        f.name = m->map[f.name];
        f.pid_str = m->map[f.pid_str];
        f.tid_str = m->map[f.tid_str];
        gp__flow_point *fp = GP_PUSH(dp->flow_points, dp->n_flow_points, dp->cap_flow_points);
        if (!fp)
            oom(dst);
        *fp = f;
    }
    for (size_t i = 0; i < src->n_meta; i++) {
        pending_meta pm = src->meta[i];
        pm.value = m->map[pm.value];
        pending_meta *q = GP_PUSH(dst->meta, dst->n_meta, dst->cap_meta);
        if (!q)
            oom(dst);
        *q = pm;
    }
    /* Top-level members after the events (older files put some after traceEvents). */
    if (!d->n_devices)
        for (size_t i = 0; i < t->n_devices; i++) {
            gp_device_props dv = t->devices[i];
            dv.name = m->map[dv.name];
            if (gp_trace_add_device(d, &dv) != GP_OK)
                oom(dst);
        }
    if (!d->dist.present && t->dist.present) {
        d->dist = t->dist;
        d->dist.backend = m->map[t->dist.backend];
        d->dist.nccl_version = m->map[t->dist.nccl_version];
    }
    if (!d->base_time_ns)
        d->base_time_ns = t->base_time_ns;
    if (d->schema_version < 0)
        d->schema_version = t->schema_version;
    if (!d->display_time_unit)
        d->display_time_unit = m->map[t->display_time_unit];
    for (size_t i = 0; i < t->n_meta; i++)
        if (gp_trace_set_meta(d, gp_trace_str(t, t->meta[i].key),
                              gp_trace_str(t, t->meta[i].value_json)) != GP_OK)
            oom(dst);
    gp_read_stats *ds = &d->stats;
    const gp_read_stats *ss = &t->stats;
    ds->events_in += ss->events_in;
    for (int k = 0; k < GP_EV_KIND_COUNT; k++)
        ds->by_kind[k] += ss->by_kind[k];
    ds->metadata_events += ss->metadata_events;
    ds->flow_points += ss->flow_points;
    ds->negative_dur += ss->negative_dur;
    ds->absurd_dur += ss->absurd_dur;
    ds->no_dur += ss->no_dur;
    ds->unknown_cat += ss->unknown_cat;
    ds->skipped += ss->skipped;
    ds->bytes = src->buf_off + src->len;
}

static void merge_src_free(merge_src *m)
{
    free(m->map);
    free(m->tmap);
    free(m->track_off);
    free((void *)m->left);
}

/* Merges the traces of chain[1..n) into chain[0]'s, in order, copying on `threads` threads. */
static gp_status merge_chain(piece **chain, size_t n, int threads)
{
    reader *dst = chain[0]->r;
    merge_src m[MAX_PIECES];
    copy_job job = {dst->t, NULL, 0, 0};
    memset(m, 0, sizeof m);
    gp_status st = GP_OK;
    if (setjmp(dst->jb) == 0) {
        for (size_t i = 1; i < n; i++) {
            m[i].src = chain[i]->r;
            merge_prepare(dst, &m[i], &job);
        }
        gp__par_for(job.n, threads, run_copy_task, &job);
    } else {
        st = dst->err->status ? dst->err->status : GP_ENOMEM;
    }
    for (size_t i = 1; i < n; i++)
        merge_src_free(&m[i]);
    free(job.tasks);
    return st;
}

static void par_read_free(par_read *pr)
{
    for (size_t i = 0; i < pr->n_pieces; i++)
        reader_free(pr->pieces[i].r);
    gp__input_close(&pr->first_in);
    close(pr->fd);
    pthread_mutex_destroy(&pr->mu);
    free(pr);
}

/* The sequential read that replaces a parallel one in doubt: the same result or error. */
static gp_status read_sequential(const char *path, const gp_read_opts *opts, gp_trace **out,
                                 gp_error *err)
{
    gp__input in;
    gp_status s = gp__input_open(&in, path, err);
    if (s != GP_OK)
        return s;
    return gp__trace_read_input(&in, opts, out, err);
}

static gp_status read_parallel(const char *path, gp__input *in, const gp_read_opts *opts,
                               int threads, gp_trace **out, gp_error *err)
{
    /* Two pieces to begin with, cut in the middle; stealing splits them further. (Tests ask for
     * more initial cuts, evenly spaced, to get long chains whatever the scheduling.) No cut: one
     * sequential read. */
    uint64_t cuts[MAX_PIECES + 1];
    size_t n_cuts = 1;
    cuts[0] = 0;
    size_t want = GP_MAX(2, GP_MIN(gp__read_initial_pieces, MAX_PIECES));
    for (size_t k = 1; k < want; k++) {
        uint64_t c = find_split(in->fd, in->file_size * k / want, in->file_size);
        if (c > cuts[n_cuts - 1])
            cuts[n_cuts++] = c;
    }
    par_read *pr = n_cuts > 1 ? calloc(1, sizeof *pr) : NULL;
    if (!pr)
        return gp__trace_read_input(in, opts, out, err);
    pr->path = path;
    pr->size = in->file_size;
    pr->fd = dup(in->fd); /* the first piece closes in->fd when it ends */
    if (pr->fd < 0) {
        free(pr);
        return gp__trace_read_input(in, opts, out, err);
    }
    pr->opts = opts;
    pr->opts_caller = *opts;
    if (opts->progress) {
        pr->opts_caller.progress = par_progress;
        pr->opts_caller.progress_ctx = pr;
    }
    pr->opts_helper = *opts;
    pr->opts_helper.progress = NULL;
    pr->caller = pthread_self();
    pr->first_in = *in;
    pthread_mutex_init(&pr->mu, NULL);
    pr->n_pieces = n_cuts;
    for (size_t i = 0; i < n_cuts; i++) {
        pr->pieces[i].pr = pr;
        pr->pieces[i].start = cuts[i];
        atomic_init(&pr->pieces[i].stop, i + 1 < n_cuts ? cuts[i + 1] : 0);
        atomic_init(&pr->pieces[i].pos, cuts[i]);
    }
    gp__par_for((size_t)threads, threads, par_worker, pr);

    /* The chain: from the first piece, each stop is the start of the next piece. */
    piece *chain[MAX_PIECES];
    size_t n = 0;
    bool whole = true;
    for (piece *c = &pr->pieces[0]; c;) {
        chain[n++] = c;
        if (c->st != GP_OK) {
            whole = false;
            break;
        }
        piece *next = NULL;
        for (size_t k = 1; c->stopped_at && k < pr->n_pieces && !next; k++)
            if (pr->pieces[k].start == c->stopped_at && pr->pieces[k].st == GP_OK)
                next = &pr->pieces[k];
        if (c->stopped_at && !next) {
            whole = false; /* the pieces that start there failed */
            break;
        }
        c = next;
    }
    /* The last piece must end the way the document began: an object closes with '}', a bare
     * array ends right after its ']'. */
    reader *first = pr->pieces[0].r, *last = chain[n - 1]->r;
    if (whole && n > 1)
        whole = first->bare_array ? last->part_bare_end : last->part_object_closed;
    gp_status st = GP_OK;
    if (whole && n > 1)
        st = merge_chain(chain, n, threads);
    if (whole && st == GP_OK) {
        first->t->stats.threads_used = atomic_load(&pr->threads_used);
        first->t->stats.pieces = (uint32_t)n;
        first->err = err;
        err->status = GP_OK;
        err->msg[0] = '\0';
        pr->pieces[0].r = NULL;
        bool progress = opts->progress != NULL;
        par_read_free(pr);
        if (progress)
            opts->progress(opts->progress_ctx, in->file_size, in->file_size);
        return reader_complete(first, GP_OK, out);
    }
    bool nomem = st == GP_ENOMEM;
    for (size_t i = 0; i < n && !nomem; i++)
        nomem = chain[i]->st == GP_ENOMEM;
    par_read_free(pr);
    if (nomem)
        return gp_error_set(err, GP_ENOMEM, "%s: out of memory", path);
    /* In doubt: read again sequentially, which reports any error exactly. */
    return read_sequential(path, opts, out, err);
}

gp_status gp_trace_read(const char *path, const gp_read_opts *opts, gp_trace **out, gp_error *err)
{
    gp_read_opts defaults;
    if (!opts) {
        gp_read_opts_init(&defaults);
        opts = &defaults;
    }
    gp_error local;
    if (!err)
        err = &local;
    gp__input in;
    gp_status s = gp__input_open(&in, path, err);
    if (s != GP_OK)
        return s;
    int threads = gp__par_threads(opts->threads, opts->threads > 0 ? 16 : 4);
    if (threads >= 2 && !in.compressed &&
        (opts->threads >= 2 || in.file_size >= PARALLEL_MIN_BYTES))
        return read_parallel(path, &in, opts, threads, out, err);
    return gp__trace_read_input(&in, opts, out, err);
}

gp_status gp_trace_read_buffer(const char *data, size_t len, const char *name,
                               const gp_read_opts *opts, gp_trace **out, gp_error *err)
{
    return gp__trace_read_buffer_pieces(data, len, name, opts, 0, out, err);
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
