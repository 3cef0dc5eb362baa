/* The JSON scanner of the Kineto / Chrome trace reader (contracts in io/json_scan.h).
 *
 * A dedicated streaming scanner (see docs/decisions/json.md for the measurements behind it): the
 * input is read in chunks into one buffer; the reader parses one top-level member or one element
 * of traceEvents at a time, straight into the model. When the scanner reaches the end of the
 * buffered bytes in the middle of an element it longjmps back to the element's start, the buffer is
 * refilled (keeping the unfinished element) and the element is parsed again. Only complete elements
 * have side effects on the model, so a retry is harmless. Memory therefore grows with the events
 * kept, not with the file: the buffer holds one chunk plus the longest element.
 *
 * The buffer is always followed by at least GP__READ_PAD zero bytes: buf[len] == '\0' is the end
 * sentinel (a NUL inside the data is an error), and the 16-byte-at-a-time string scan may read past
 * it. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/input.h"
#include "core/strtab.h"
#include "core/util.h"
#include "gpuprof/trace.h"
#include "model/model_internal.h"
#include "io/json_scan.h"

/* ---- errors and buffer management -------------------------------------------------------- */

_Noreturn void gp__json_fail_at(gp__reader *r, const char *p, const char *fmt, ...)
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
_Noreturn void gp__json_at_nul(gp__reader *r, const char *p, const char *expected)
{
    if (p < r->buf + r->len)
        gp__json_fail_at(r, p, "unexpected NUL byte");
    if (!r->eof)
        longjmp(r->jb, JMP_NEED_MORE);
    if (r->len == 0 && r->buf_off == 0)
        gp__json_fail_at(r, p, "empty file");
    gp__json_fail_at(r, p, "unexpected end of input (truncated file?): expected %s", expected);
}

/* Reads more input, keeping buf[mark..len). Returns false at end of input. Errors longjmp. */
bool gp__json_refill(gp__reader *r)
{
    if (r->eof)
        return false;
    if (r->mark > 0) {
        memmove(r->buf, r->buf + r->mark, r->len - r->mark);
        r->len -= r->mark;
        r->buf_off += r->mark;
        r->mark = 0;
    }
    if (r->cap - r->len < GP_MIN(GP__READ_CHUNK, r->cap) / 2) {
        size_t ncap = r->cap * 2;
        if (ncap > GP__READ_MAX_ELEMENT) {
            gp_error_set(r->err, GP_ELIMIT,
                         "%s: byte %llu: an element (an event or a top-level member) longer than "
                         "%zu MiB, the reader's limit",
                         r->name, (unsigned long long)r->buf_off, GP__READ_MAX_ELEMENT >> 20);
            longjmp(r->jb, JMP_ERROR);
        }
        char *nb = realloc(r->buf, ncap + GP__READ_PAD);
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
    if (got == 0) {
        r->eof = true;
        r->t->stats.gzip_trailing_bytes = r->in.trailing_bytes;
        r->t->stats.gzip_trailing_at = r->in.trailing_at;
    }
    if (r->piece)
        gp__piece_read_bytes(r->piece, got, r->t, r->buf_off + r->len + got);
    else
        gp__trace_set_progress(r->t, gp__input_raw_pos(&r->in), r->in.file_size);
    r->len += got;
    memset(r->buf + r->len, 0, GP__READ_PAD);
    r->t->stats.bytes = r->buf_off + r->len;
    if (r->opts->progress && r->buf_off + r->len >= r->next_progress) {
        r->opts->progress(r->opts->progress_ctx, gp__input_raw_pos(&r->in), r->in.file_size);
        r->next_progress = r->buf_off + r->len + (16u << 20);
    }
    return got > 0;
}

/* ---- strings ------------------------------------------------------------------------------ */

/* ---- SIMD dispatch ------------------------------------------------------------------------ */

/* The string scanner's instruction set, chosen once (gp__json_simd_init) from the CPU and the
 * GP_JSON_SIMD environment variable; tests and the fuzz targets set it (gp__json_simd_set). */
static int simd_level = -1;
static pthread_once_t simd_once = PTHREAD_ONCE_INIT;

/* The best level this CPU runs. */
static int simd_best(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? GP__JSON_SIMD_AVX2 : GP__JSON_SIMD_SSE2;
#elif defined(__SSE2__)
    return GP__JSON_SIMD_SSE2;
#else
    return GP__JSON_SIMD_SCALAR;
#endif
}

/* The level from the CPU and GP_JSON_SIMD, unless a test set one first. */
static void simd_init_once(void)
{
    int best = simd_best();
    const char *e = getenv("GP_JSON_SIMD");
    if (e && strcmp(e, "scalar") == 0)
        best = GP__JSON_SIMD_SCALAR;
    else if (e && strcmp(e, "sse2") == 0 && best > GP__JSON_SIMD_SSE2)
        best = GP__JSON_SIMD_SSE2;
    if (simd_level < 0)
        simd_level = best;
}

void gp__json_simd_init(void)
{
    pthread_once(&simd_once, simd_init_once);
}

int gp__json_simd_set(int level)
{
    gp__json_simd_init();
    int best = simd_best();
    simd_level = level < 0 ? best : GP_MIN(level, best);
    return simd_level;
}

int gp__json_simd_level(void)
{
    gp__json_simd_init();
    return simd_level;
}

/* ---- strings ------------------------------------------------------------------------------ */

#define HASZERO(v) (((v)-0x0101010101010101ULL) & ~(v)&0x8080808080808080ULL)

/* The scanners below return the first byte at or after p that is '"', '\\' or a control character
 * (< 0x20, incl. the NUL sentinel). They may read up to 31 bytes past the match, which the
 * buffer's padding allows. */

/* Scalar (SWAR, no SIMD instructions): 8 bytes at a time in a 64-bit word. Every build has it; on
 * x86-64 it runs when GP_JSON_SIMD=scalar or a test asks for it. */
static inline const char *scan_body_scalar(const char *p)
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

#if defined(__SSE2__)
#include <emmintrin.h>
/* SSE2 (the x86-64 baseline): 16 bytes at a time. */
static inline const char *scan_body_sse2(const char *p)
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
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define AVX2_FN __attribute__((target("avx2")))
/* AVX2 (runtime dispatch): 32 bytes at a time; the first 16 with SSE2 compares, as most strings
 * (keys, short values) end there. */
AVX2_FN static inline const char *scan_body_avx2(const char *p)
{
    const __m256i quote = _mm256_set1_epi8('"'), bslash = _mm256_set1_epi8('\\');
    const __m256i ctl = _mm256_set1_epi8(0x1f);
    for (;;) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)p);
        __m256i m = _mm256_or_si256(
            _mm256_or_si256(_mm256_cmpeq_epi8(v, quote), _mm256_cmpeq_epi8(v, bslash)),
            _mm256_cmpeq_epi8(_mm256_max_epu8(v, ctl), ctl));
        unsigned mask = (unsigned)_mm256_movemask_epi8(m);
        if (mask)
            return p + __builtin_ctz(mask);
        p += 32;
    }
}
#endif

/* The scanner of the current level (the slow path's plain runs). */
static const char *scan_string_body(const char *p)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (simd_level == GP__JSON_SIMD_AVX2)
        return scan_body_avx2(p);
#endif
#if defined(__SSE2__)
    if (simd_level == GP__JSON_SIMD_SSE2)
        return scan_body_sse2(p);
#endif
    return scan_body_scalar(p);
}

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

void gp__json_scratch_reset(gp__reader *r)
{
    for (size_t i = 0; i < r->n_retired; i++)
        free(r->retired[i]);
    r->n_retired = 0;
    r->scratch_len = 0;
}

static void scratch_put(gp__reader *r, const char *s, size_t n)
{
    if (r->scratch_len + n + 1 > r->scratch_cap) {
        /* Copy into a bigger block but keep the old one alive until the element ends. */
        size_t ncap = GP_MAX(r->scratch_cap * 2, r->scratch_len + n + 1024);
        char *nb = malloc(ncap);
        char **slot = nb && r->scratch ? GP_PUSH(r->retired, r->n_retired, r->cap_retired) : NULL;
        if (!nb || (r->scratch && !slot)) {
            free(nb);
            gp__reader_oom(r);
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

static void put_utf8(gp__reader *r, uint32_t cp)
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

static uint32_t read_u4(gp__reader *r, const char *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p[i]);
        if (h < 0) {
            if (p[i] == '\0')
                gp__json_at_nul(r, p + i, "4 hex digits");
            gp__json_fail_at(r, p + i, "invalid \\u escape");
        }
        v = v << 4 | (uint32_t)h;
    }
    return v;
}

/* Parses a string starting at the opening quote p. Writes its bytes (unescaped when needed) to
 * *s / *len; unescaped text lives in r->scratch, which the next string with escapes may reuse
 * unless `keep` (then appended). Returns the position after the closing quote. */
/* The string from its first byte `start`, p at its first backslash or control character (or
 * the NUL sentinel): escapes unescaped into r->scratch. Out of line: the fast paths below stay
 * small (no register saves for this loop). */
__attribute__((noinline)) static const char *string_slow(gp__reader *r, const char *start,
                                                         const char *p, const char **s, size_t *len,
                                                         bool *escaped)
{
    size_t base = r->scratch_len;
    for (;;) {
        if (*p == '"')
            break;
        if (*p == '\0')
            gp__json_at_nul(r, p, "end of string");
        if ((unsigned char)*p < 0x20)
            gp__json_fail_at(r, p, "control character in string");
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
            gp__json_at_nul(r, p + 1, "escape character");
        default:
            gp__json_fail_at(r, p, "invalid escape '\\%c'", c);
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

/* A string without escapes is a pointer into the buffer: found with the level's scanner. */
#define STRING_FAST(NAME, SCAN, ATTR)                                                              \
    ATTR static const char *NAME(gp__reader *r, const char *p, const char **s, size_t *len,        \
                                 bool *escaped)                                                    \
    {                                                                                              \
        const char *start = ++p;                                                                   \
        p = SCAN(p);                                                                               \
        if (__builtin_expect(*p == '"', 1)) {                                                      \
            *s = start;                                                                            \
            *len = (size_t)(p - start);                                                            \
            if (escaped)                                                                           \
                *escaped = false;                                                                  \
            return p + 1;                                                                          \
        }                                                                                          \
        return string_slow(r, start, p, s, len, escaped);                                          \
    }

STRING_FAST(string_scalar, scan_body_scalar, )
#if defined(__SSE2__)
STRING_FAST(string_sse2, scan_body_sse2, )
#endif
#if defined(__x86_64__) && defined(__GNUC__)
STRING_FAST(string_avx2, scan_body_avx2, AVX2_FN __attribute__((noinline)))
#endif

const char *gp__json_string(gp__reader *r, const char *p, const char **s, size_t *len,
                            bool *escaped)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_expect(simd_level == GP__JSON_SIMD_AVX2, 1))
        return string_avx2(r, p, s, len, escaped);
#endif
#if defined(__SSE2__)
    if (simd_level == GP__JSON_SIMD_SSE2)
        return string_sse2(r, p, s, len, escaped);
#endif
    return string_scalar(r, p, s, len, escaped);
}

/* The table of gp__json_int_end_ok: 1 for the bytes that continue a number or end the data. */
const uint8_t gp__json_int_more[256] = {
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1,
    ['7'] = 1, ['8'] = 1, ['9'] = 1, ['.'] = 1, ['e'] = 1, ['E'] = 1, ['\0'] = 1};

const char *gp__skip_ws_run(const char *p)
{
    for (;;) {
        uint64_t w;
        memcpy(&w, p, 8);
        uint64_t x = w ^ 0x2020202020202020ULL; /* zero bytes: spaces */
        if (x == 0) {
            p += 8;
            continue;
        }
        p += __builtin_ctzll(x) >> 3;
        if (!gp__is_ws((unsigned char)*p))
            return p;
        p++; /* a tab, newline or carriage return */
    }
}

/* ---- numbers ------------------------------------------------------------------------------ */

/* The leading decimal digits at q (at most 16 are read; q has 16 readable bytes, which the
 * buffer's padding gives): their value in *v, their count returned (16: there may be more). */
static inline int swar_digits16(const char *q, uint64_t *v)
{
    static const uint64_t pow10[9] = {1,      10,      100,      1000,     10000,
                                      100000, 1000000, 10000000, 100000000};
    uint64_t w;
    memcpy(&w, q, 8);
    uint64_t x = w ^ 0x3030303030303030ULL;
    int n = gp__json_swar_run(x);
    if (n < 8) {
        *v = n ? gp__json_swar_eight(x << (64 - 8 * n)) : 0;
        return n;
    }
    uint64_t hi = gp__json_swar_eight(x);
    memcpy(&w, q + 8, 8);
    x = w ^ 0x3030303030303030ULL;
    n = gp__json_swar_run(x);
    *v = n ? hi * pow10[n] + gp__json_swar_eight(x << (64 - 8 * n)) : hi;
    return 8 + n;
}

/* A leading zero followed by a digit ("0123"), which JSON does not allow (docs/trace.md: refused,
 * as every other syntax error is; the fast paths below leave such numbers to the careful one). */
static inline bool leading_zero(const char *q)
{
    return q[0] == '0' && (unsigned)(q[1] - '0') <= 9;
}

/* One or more digits at q ("a digit" expected at the end of the data, else `msg`): their end. */
static const char *digits(gp__reader *r, const char *q, const char *msg)
{
    if (*q < '0' || *q > '9') {
        if (*q == '\0')
            gp__json_at_nul(r, q, "a digit");
        gp__json_fail_at(r, q, "%s", msg);
    }
    while (*q >= '0' && *q <= '9')
        q++;
    return q;
}

const char *gp__json_scan_number(gp__reader *r, const char *p)
{
    const char *q = p;
    if (*q == '-')
        q++;
    /* The first byte decides first: two strncmp calls per skipped number cost ingest 2 %. */
    if ((*q == 'N' && strncmp(q, "NaN", 3) == 0) || (*q == 'I' && strncmp(q, "Infinity", 8) == 0))
        gp__json_fail_at(r, p, "NaN or Infinity is not a valid JSON number");
    if (leading_zero(q))
        gp__json_fail_at(r, p, "a number with a leading zero (0123) is not valid JSON");
    q = digits(r, q, "expected a digit");
    if (*q == '.')
        q = digits(r, q + 1, "expected a digit after '.'");
    if (*q == 'e' || *q == 'E') {
        q++;
        if (*q == '+' || *q == '-')
            q++;
        q = digits(r, q, "expected exponent digits");
    }
    if (*q == '\0')
        gp__json_at_nul(r, q, "end of number"); /* the number may continue in the next chunk */
    return q;
}

/* strtod over a validated number token [p, end), copied whole (long tokens such as 0.000...1 with
 * many digits must not be cut). The C locale's decimal point is assumed, as JSON requires. */
static double token_to_double(gp__reader *r, const char *p, const char *end)
{
    size_t n = (size_t)(end - p);
    char small[64];
    char *tmp = n < sizeof small ? small : malloc(n + 1);
    if (!tmp)
        gp__reader_oom(r);
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
bool gp__json_us_text_to_ns(const char *s, const char *end, int64_t *out)
{
    bool neg = s < end && *s == '-';
    if (neg)
        s++;
    if (s >= end || *s < '0' || *s > '9' || (end - s > 1 && leading_zero(s)))
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
    uint64_t ip;
    int n = swar_digits16(q, &ip);
    if (n == 0 || (n == 16 && (unsigned)(q[16] - '0') <= 9) || (n > 1 && q[0] == '0'))
        return NULL; /* not a number, too long, or a leading zero: the careful path */
    q += n;
    if (ip > GP__MAX_TIME_US)
        return NULL; /* the careful path reports "out of range" */
    uint64_t frac = 0, up = 0;
    if (*q == '.') {
        /* the fraction's first 8 bytes at once (q is before the data's end: the padding holds
         * the load): its digits run, the first three as ns (a missing one counts 0: ".5" is 500),
         * a 4th decimal rounds half away from zero (times shifted by a float sum, as
         * replicate_trace.py's) */
        uint64_t w;
        memcpy(&w, q + 1, 8);
        uint64_t x = w ^ 0x3030303030303030ULL;
        int run = gp__json_swar_run(x);
        if (run == 0)
            return NULL; /* "1.": the careful path reports it */
        uint64_t d = run >= 3 ? x : x & ((1ULL << (8 * run)) - 1);
        frac = (d & 0xFF) * 100 + ((d >> 8) & 0xFF) * 10 + ((d >> 16) & 0xFF);
        up = run >= 4 && ((x >> 24) & 0xFF) >= 5;
        q += 1 + run;
        if (run == 8)
            while ((unsigned)(*q - '0') <= 9)
                q++;
    }
    if (*q == 'e' || *q == 'E' || *q == '\0')
        return NULL;
    int64_t v = (int64_t)(ip * 1000 + frac + up);
    *out = neg ? -v : v;
    return q;
}

/* Parses a time in µs to ns. Beyond ±2^62 ns: an error for times; for durations (saturate) the
 * value becomes INT64_MAX, which the absurd-duration rule then drops and counts. */
__attribute__((noinline)) static const char *us_ns_careful(gp__reader *r, const char *p,
                                                           int64_t *out, bool saturate)
{
    const char *end = gp__json_scan_number(r, p);
    if (gp__json_us_text_to_ns(p, end, out))
        return end;
    double v = token_to_double(r, p, end) * 1000.0;
    if (!(fabs(v) <= (double)GP__MAX_TIME_NS)) {
        if (!saturate || v != v)
            gp__json_fail_at(r, p, "time value out of range (more than 2^62 ns)");
        *out = v > 0 ? INT64_MAX : INT64_MIN;
        return end;
    }
    *out = llround(v);
    return end;
}

const char *gp__json_us_ns(gp__reader *r, const char *p, int64_t *out, bool saturate)
{
    const char *fast = fast_us_ns(p, out);
    if (__builtin_expect(fast != NULL, 1))
        return fast;
    return us_ns_careful(r, p, out, saturate);
}

/* The careful path of gp__json_int: any form of number, validated (fractions truncated,
 * exponents via strtod). Out of line, so that the fast path saves no registers. */
__attribute__((noinline)) static const char *json_int_careful(gp__reader *r, const char *p,
                                                              int64_t *out)
{
    const char *end = gp__json_scan_number(r, p);
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

/* gp__json_int of 8 to 16 digits at q (hi: the value of the first 8), neg the sign: out of line,
 * so that the common short integers need no saved registers. */
__attribute__((noinline)) static const char *json_int_long(gp__reader *r, const char *p,
                                                           const char *q, uint64_t hi, int64_t *out)
{
    static const uint64_t pow10[9] = {1,      10,      100,      1000,     10000,
                                      100000, 1000000, 10000000, 100000000};
    uint64_t w;
    memcpy(&w, q + 8, 8);
    uint64_t x = w ^ 0x3030303030303030ULL;
    int n = gp__json_swar_run(x);
    uint64_t v = n ? hi * pow10[n] + gp__json_swar_eight(x << (64 - 8 * n)) : hi;
    if (gp__json_int_end_ok(q[8 + n]) && q[0] != '0') {
        *out = *p == '-' ? -(int64_t)v : (int64_t)v;
        return q + 8 + n;
    }
    return json_int_careful(r, p, out);
}

/* Parses an integer: up to 16 digits (read 8 at a time, SWAR) followed by a delimiter here, any
 * other form through json_int_careful. */
const char *gp__json_int(gp__reader *r, const char *p, int64_t *out)
{
    const char *q = p + (*p == '-');
    uint64_t w;
    memcpy(&w, q, 8);
    uint64_t x = w ^ 0x3030303030303030ULL;
    int n = gp__json_swar_run(x);
    if (n == 8)
        return json_int_long(r, p, q, gp__json_swar_eight(x), out);
    if (__builtin_expect(n > 0 && gp__json_int_end_ok(q[n]) && !(n > 1 && q[0] == '0'), 1)) {
        uint64_t v = gp__json_swar_eight(x << (64 - 8 * n));
        *out = *p == '-' ? -(int64_t)v : (int64_t)v;
        return q + n;
    }
    return json_int_careful(r, p, out);
}

const char *gp__json_double(gp__reader *r, const char *p, double *out)
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
            *q != 'E' && *q != '.' && *q != '\0' && !leading_zero(p + neg)) {
            double v = (double)m / pow10[decimals];
            *out = neg ? -v : v;
            return q;
        }
    }
    const char *end = gp__json_scan_number(r, p);
    *out = token_to_double(r, p, end);
    return end;
}

const char *gp__json_skip_literal(gp__reader *r, const char *p, const char *lit)
{
    size_t n = strlen(lit);
    for (size_t i = 0; i < n; i++) {
        if (p[i] != lit[i]) {
            if (p[i] == '\0')
                gp__json_at_nul(r, p + i, lit);
            gp__json_fail_at(r, p, "invalid literal (expected %s)", lit);
        }
    }
    return p + n;
}

static const char *skip_container(gp__reader *r, const char *p, char close)
{
    if (++r->depth > GP__READ_MAX_DEPTH)
        gp__json_fail_at(r, p, "nesting deeper than %d levels", GP__READ_MAX_DEPTH);
    p = gp__skip_ws(p + 1);
    if (*p == close) {
        r->depth--;
        return p + 1;
    }
    do {
        if (close == '}') {
            const char *k;
            size_t kl;
            p = gp__json_key(r, p, &k, &kl, "expected a member name (a string)");
        }
        p = gp__json_skip_value(r, p);
    } while (
        gp__json_sep(r, &p, close, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'"));
    r->depth--;
    return p + 1;
}

const char *gp__json_skip_value(gp__reader *r, const char *p)
{
    p = gp__skip_ws(p);
    switch (*p) {
    case '"': {
        const char *s;
        size_t l;
        size_t keep = r->scratch_len;
        p = gp__json_string(r, p, &s, &l, NULL);
        r->scratch_len = keep;
        return p;
    }
    case '{':
        return skip_container(r, p, '}');
    case '[':
        return skip_container(r, p, ']');
    case 't':
        return gp__json_skip_literal(r, p, "true");
    case 'f':
        return gp__json_skip_literal(r, p, "false");
    case 'n':
        return gp__json_skip_literal(r, p, "null");
    case '\0':
        gp__json_at_nul(r, p, "a value");
    default: {
        const char *q = gp__json_uint_end(p);
        if (q)
            return q;
        if (gp__is_number_start(*p))
            return gp__json_scan_number(r, p);
        if (*p == 'N' || *p == 'I')
            gp__json_fail_at(r, p, "NaN or Infinity is not a valid JSON value");
        gp__json_fail_at(r, p, "expected a value");
    }
    }
}

/* ---- typed values ----------------------------------------------------------------------- */

/* gp__json_intish of a string at p: decimal digits or 0x-hex. Out of line (strtoll's buffer). */
__attribute__((noinline)) static const char *intish_string(gp__reader *r, const char *p,
                                                           int64_t *out, bool *ok)
{
    const char *s;
    size_t l;
    size_t keep = r->scratch_len;
    p = gp__json_string(r, p, &s, &l, NULL);
    if (l > 0 && l < 32) {
        char tmp[32];
        memcpy(tmp, s, l);
        tmp[l] = '\0';
        char *end;
        errno = 0;
        /* Decimal, or hex after 0x: "0123" is 123, not octal 83. */
        const char *d = tmp + (tmp[0] == '-' || tmp[0] == '+');
        int base = d[0] == '0' && (d[1] == 'x' || d[1] == 'X') ? 16 : 10;
        long long v = strtoll(tmp, &end, base);
        if (*end == '\0' && errno == 0) {
            *out = v;
            *ok = true;
        }
    }
    r->scratch_len = keep;
    return p;
}

const char *gp__json_intish(gp__reader *r, const char *p, int64_t *out, bool *ok)
{
    p = gp__skip_ws(p);
    if (gp__is_number_start(*p)) {
        *ok = true;
        return gp__json_int(r, p, out);
    }
    *ok = false;
    if (*p == '"')
        return intish_string(r, p, out, ok);
    return gp__json_skip_value(r, p);
}

const char *gp__json_dbl_or_skip(gp__reader *r, const char *p, double *out)
{
    p = gp__skip_ws(p);
    if (gp__is_number_start(*p))
        return gp__json_double(r, p, out);
    return gp__json_skip_value(r, p);
}

const char *gp__json_str_or_skip(gp__reader *r, const char *p, const char **s, size_t *l)
{
    p = gp__skip_ws(p);
    if (*p == '"')
        return gp__json_string(r, p, s, l, NULL);
    return gp__json_skip_value(r, p);
}
const char *gp__json_key(gp__reader *r, const char *p, const char **k, size_t *kl, const char *msg)
{
    p = gp__skip_ws(p);
    gp__json_want(r, p, '"', "a member name", msg);
    p = gp__json_string(r, p, k, kl, NULL);
    return gp__skip_ws(gp__expect_char(r, p, ':', "':'"));
}

/* ---- the model's strings -------------------------------------------------------------------- */

gp_strid gp__reader_intern(gp__reader *r, const char *s, size_t len)
{
    gp_strid id;
    if (gp_trace_intern(r->t, s, len, &id) != GP_OK)
        gp__reader_oom(r);
    return id;
}

_Noreturn void gp__reader_oom(gp__reader *r)
{
    gp_error_set(r->err, GP_ENOMEM, "%s: out of memory", r->name);
    longjmp(r->jb, JMP_ERROR);
}
