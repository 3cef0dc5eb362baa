/* The JSON scanner of the Kineto reader (json_scan.c): a streaming scanner over the reader's
 * buffer, which is always followed by at least GP__READ_PAD zero bytes (buf[len] == '\0' is the end
 * sentinel; a NUL inside the data is an error).
 *
 * Every function takes p, a position inside r->buf, and returns the position after what it read.
 * None returns an error: a syntax error longjmps to r->jb with JMP_ERROR and the message "<name>:
 * byte <offset>: <what>" in r->err (GP_EPARSE); reaching the end of the buffered bytes longjmps
 * with JMP_NEED_MORE (the caller refills and parses the element again); out of memory longjmps
 * with GP_ENOMEM. Strings that needed unescaping live in r->scratch until the element ends
 * (gp__json_scratch_reset). */
#ifndef GP_IO_JSON_SCAN_H
#define GP_IO_JSON_SCAN_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/util.h"
#include "io/kineto_reader.h"

/* ---- errors and the buffer ---- */

/* Fails the parse at p: "<name>: byte <offset of p>: <message>" (GP_EPARSE) in r->err. */
_Noreturn void gp__json_fail_at(gp__reader *r, const char *p, const char *fmt, ...) GP_PRINTF(3, 4);

/* Called when the scanner meets a NUL byte at p: the end of the buffered data (need more input:
 * JMP_NEED_MORE), the real end of the input ("unexpected end of input (truncated file?): expected
 * <expected>", or "empty file"), or a NUL inside the data. */
_Noreturn void gp__json_at_nul(gp__reader *r, const char *p, const char *expected);

/* Fails with GP_ENOMEM, "<name>: out of memory". */
_Noreturn void gp__reader_oom(gp__reader *r);

/* Reads more input, keeping buf[mark..len) (moved to buf[0]). Returns false at end of input.
 * Errors (read errors, an element longer than GP__READ_MAX_ELEMENT, out of memory) longjmp. */
bool gp__json_refill(gp__reader *r);

/* Frees the scratch blocks outgrown by the last element and empties the scratch buffer: called
 * when an element starts (strings of the previous one are no longer referenced). */
void gp__json_scratch_reset(gp__reader *r);

/* Interns s[0..len) in r->t's string table. Longjmps when out of memory. */
gp_strid gp__reader_intern(gp__reader *r, const char *s, size_t len);

/* ---- SIMD dispatch ---- */

/* The instruction set of the string scanner (gp__json_string, the scanner of every key and string
 * value): SWAR on 64-bit words (every build), SSE2 (the x86-64 baseline), AVX2 (chosen at run time
 * when the CPU has it). Models are identical whichever runs (tests/trace, fuzz_trace_reader). */
enum { GP__JSON_SIMD_SCALAR = 0, GP__JSON_SIMD_SSE2 = 1, GP__JSON_SIMD_AVX2 = 2 };

/* Chooses the level once per process: the best the CPU runs, or less when the environment
 * variable GP_JSON_SIMD says "scalar" or "sse2". Thread-safe; called before every read. */
void gp__json_simd_init(void);

/* Sets the level (a GP__JSON_SIMD_* value, lowered to the best the CPU runs; -1: the best) and
 * returns the level set. For tests and fuzz targets: not while a read runs. */
int gp__json_simd_set(int level);

/* The current level (after gp__json_simd_init). */
int gp__json_simd_level(void);

/* ---- primitives ---- */

/* Whether c is a JSON blank (space, tab, newline, carriage return): one compare and one bit of
 * a constant (bits 9, 10, 13 and 32). */
static inline bool gp__is_ws(unsigned char c)
{
    return c <= ' ' && ((0x100002600ULL >> c) & 1);
}

/* gp__skip_ws past a run of blanks (out of line): spaces 8 at a time, one word compared with 8
 * spaces (indented JSON: a newline and a row of spaces before each member). p is in a reader's
 * buffer, whose NUL sentinel is followed by padding: 8 bytes at p are readable. */
const char *gp__skip_ws_run(const char *p);

/* p past the blanks at p. Most calls find none or one space (Kineto writes one after ':' and
 * ','): those two cases are a compare or two (p[1] is readable: the NUL sentinel ends the data);
 * longer runs go to gp__skip_ws_run. Only for positions in a reader's buffer. */
static inline const char *gp__skip_ws(const char *p)
{
    if ((unsigned char)p[0] > ' ')
        return p;
    if (p[0] == ' ' && (unsigned char)p[1] > ' ')
        return p + 1;
    return gp__skip_ws_run(p);
}

static inline bool gp__is_number_start(char c)
{
    return c == '-' || (c >= '0' && c <= '9');
}

/* The value of 8 decimal digits, one per byte of x (0..9, the first in the lowest byte): three
 * multiplications instead of eight multiply-adds (the SWAR conversion simdjson uses). */
static inline uint64_t gp__json_swar_eight(uint64_t x)
{
    x = x * 10 + (x >> 8);
    return (((x & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
            (((x >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >>
           32;
}

/* How many of the 8 bytes of x (bytes XOR '0') are digits before the first that is not (0..8). */
static inline int gp__json_swar_run(uint64_t x)
{
    uint64_t m = ((x + 0x7676767676767676ULL) | x) & 0x8080808080808080ULL;
    return m ? __builtin_ctzll(m) >> 3 : 8;
}

/* 1 for the bytes that continue a number after its digits ('0'-'9', '.', 'e', 'E') or end the
 * buffered data (NUL): one load instead of four compares after every integer of a trace. */
extern const uint8_t gp__json_int_more[256];

/* Whether c may follow the digits of an integer that the fast paths read: not a digit, '.', an
 * exponent or the end of the buffered data. */
static inline bool gp__json_int_end_ok(char c)
{
    return !gp__json_int_more[(unsigned char)c];
}

/* How many digits begin p (0 to 15; 16: 16 or more), and in *x the first word XOR '0' (and in
 * *x2 the second, read only when the first 8 bytes are digits: a NUL ends the data, and the
 * buffer's padding makes 16 bytes after it readable). */
static inline int gp__json_digit_run(const char *p, uint64_t *x, uint64_t *x2)
{
    uint64_t w;
    memcpy(&w, p, 8);
    *x = w ^ 0x3030303030303030ULL;
    int n = gp__json_swar_run(*x);
    if (n < 8)
        return n;
    memcpy(&w, p + 8, 8);
    *x2 = w ^ 0x3030303030303030ULL;
    return 8 + gp__json_swar_run(*x2);
}

/* Whether the n digits at p (gp__json_digit_run) are an integer the fast paths read: 1 to 15
 * digits, no leading zero, and a byte after them that ends it (gp__json_int_end_ok). */
static inline bool gp__json_uint_ok(const char *p, int n)
{
    return n > 0 && n < 16 && !(n > 1 && p[0] == '0') && gp__json_int_end_ok(p[n]);
}

/* The end of a non-negative integer of 1 to 15 digits at p (gp__json_uint_ok), its value in *v;
 * NULL for any other text (*v untouched: the caller takes the general path, which reads the same
 * value or reports the same error). The ids and indices of args are such integers: this is
 * gp__json_int's common case, inlined into the callers. */
static inline const char *gp__json_uint_fast(const char *p, int64_t *v)
{
    static const uint64_t pow10[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
    uint64_t x, x2 = 0;
    int n = gp__json_digit_run(p, &x, &x2);
    if (!gp__json_uint_ok(p, n))
        return NULL;
    if (n < 8)
        *v = (int64_t)gp__json_swar_eight(x << (64 - 8 * n));
    else if (n == 8)
        *v = (int64_t)gp__json_swar_eight(x);
    else
        *v = (int64_t)(gp__json_swar_eight(x) * pow10[n - 8] +
                       gp__json_swar_eight(x2 << (64 - 8 * (n - 8))));
    return p + n;
}

/* gp__json_uint_fast's end, without the value: skipping such an integer (an index the model does
 * not keep, a dimension inside a skipped array) validates it as gp__json_scan_number would. */
static inline const char *gp__json_uint_end(const char *p)
{
    uint64_t x, x2;
    int n = gp__json_digit_run(p, &x, &x2);
    return gp__json_uint_ok(p, n) ? p + n : NULL;
}

/* Fails at p unless *p is c: at a NUL, as gp__json_at_nul with `expected`; else with `msg`. */
static inline void gp__json_want(gp__reader *r, const char *p, char c, const char *expected,
                                 const char *msg)
{
    if (*p != c) {
        if (*p == '\0')
            gp__json_at_nul(r, p, expected);
        gp__json_fail_at(r, p, "%s", msg);
    }
}

/* Skips blanks, then the character c ("expected <what>" otherwise). */
static inline const char *gp__expect_char(gp__reader *r, const char *p, char c, const char *what)
{
    p = gp__skip_ws(p);
    if (*p != c) {
        if (*p == '\0')
            gp__json_at_nul(r, p, what);
        gp__json_fail_at(r, p, "expected %s", what);
    }
    return p + 1;
}

/* After a value inside an object (close '}') or array (close ']'): skips blanks; at ',' moves *pp
 * past it and returns true (another member follows); at `close` leaves *pp on it and returns
 * false. Anything else fails with `msg` (or at a NUL, expecting "',' or '}'" / "',' or ']'"). */
static inline bool gp__json_sep(gp__reader *r, const char **pp, char close, const char *msg)
{
    const char *p = gp__skip_ws(*pp);
    if (*p == ',') {
        *pp = p + 1;
        return true;
    }
    if (*p != close) {
        if (*p == '\0')
            gp__json_at_nul(r, p, close == '}' ? "',' or '}'" : "',' or ']'");
        gp__json_fail_at(r, p, "%s", msg);
    }
    *pp = p;
    return false;
}

/* Key comparison against a literal: with n a constant, this unrolls into a few word compares
 * (glibc's memcmp is a real call here and showed up at 6 % of the read). */
static inline bool gp__key_eq(const char *k, size_t kl, const char *lit, size_t n)
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

#define GP__KEY_IS(k, kl, lit) gp__key_eq((k), (kl), (lit), sizeof(lit) - 1)

/* ---- values ---- */

/* Parses a string starting at the opening quote p. Its bytes (unescaped when needed) are *s /
 * *len: in the buffer when the string has no escapes, else in r->scratch (appended). *escaped
 * (optional) says which. Returns the position after the closing quote. */
const char *gp__json_string(gp__reader *r, const char *p, const char **s, size_t *len,
                            bool *escaped);

/* Validates a JSON number token at p and returns its end. */
const char *gp__json_scan_number(gp__reader *r, const char *p);

/* Converts "[-]digits[.digits]" in [s, end) from microseconds to exact nanoseconds: integer part *
 * 1000 plus the first three fraction digits, rounded half away from zero on the fourth. Returns
 * false on other syntax (exponents) or overflow. */
bool gp__json_us_text_to_ns(const char *s, const char *end, int64_t *out);

/* Parses a number of microseconds at p to exact int64 nanoseconds (as gp__json_us_text_to_ns;
 * exponent forms through strtod). Beyond ±2^62 ns: an error, or when `saturate` (durations)
 * INT64_MAX / INT64_MIN. */
const char *gp__json_us_ns(gp__reader *r, const char *p, int64_t *out, bool saturate);

/* Parses an integer (a JSON number; fractions truncated, exponents via strtod, out-of-range
 * values saturate, uint64 ids wrap as Kineto's do). */
const char *gp__json_int(gp__reader *r, const char *p, int64_t *out);

/* Parses a JSON number into a double, correctly rounded. */
const char *gp__json_double(gp__reader *r, const char *p, double *out);

/* Skips the literal lit (true, false, null) at p. */
const char *gp__json_skip_literal(gp__reader *r, const char *p, const char *lit);

/* Skips any JSON value (blanks before it included), validating it; nesting is limited to
 * GP__READ_MAX_DEPTH levels. Scratch space used by its strings is given back. */
const char *gp__json_skip_value(gp__reader *r, const char *p);

/* An integer that may be written as a number, or as a string of decimal digits / 0x-hex (a
 * leading zero is decimal, not octal): *out and *ok =
 * true. Other values are skipped, *ok = false and *out untouched. */
const char *gp__json_intish(gp__reader *r, const char *p, int64_t *out, bool *ok);

/* A number into *out; any other value is skipped and *out untouched. */
const char *gp__json_dbl_or_skip(gp__reader *r, const char *p, double *out);

/* A string into *s / *l (as gp__json_string); any other value is skipped and *s, *l untouched. */
const char *gp__json_str_or_skip(gp__reader *r, const char *p, const char **s, size_t *l);

/* An object member's key at p (blanks first): fails with `msg` unless a string is there. Returns
 * the position after the key's ':' (blanks after it skipped), the key in *k / *kl. */
const char *gp__json_key(gp__reader *r, const char *p, const char **k, size_t *kl, const char *msg);

/* ---- keys as words ---- */

/* An object member's key and its first 16 bytes as two words (zero-padded past the key; from
 * the unescaped key when it had escapes): keys are dispatched by comparing words with the words
 * of the known keys (gp__json_word), not by comparing strings. */
typedef struct gp__json_kw {
    const char *s;
    size_t len;
    uint64_t w0, w1; /* bytes [0, 8) and [8, 16) of the key, zero past its end */
} gp__json_kw;

/* The word of s[off, off + 8) within s[0, n), zero-padded, the first byte lowest (the order of
 * a little-endian load, which the fast path of gp__json_key_word does). */
static inline uint64_t gp__json_word(const char *s, size_t n, size_t off)
{
    uint64_t w = 0;
    for (size_t i = 0; i < 8 && off + i < n; i++)
        w |= (uint64_t)(unsigned char)s[off + i] << (8 * i);
    return w;
}

/* The first word of a literal as a constant (as gp__json_word(lit, len, 0)). */
#define GP__LB(lit, i) (sizeof(lit) - 1 > (i) ? (uint64_t)(unsigned char)(lit)[i] << (8 * (i)) : 0)
#define GP__W0(lit)                                                                                \
    (GP__LB(lit, 0) | GP__LB(lit, 1) | GP__LB(lit, 2) | GP__LB(lit, 3) | GP__LB(lit, 4) |          \
     GP__LB(lit, 5) | GP__LB(lit, 6) | GP__LB(lit, 7))

/* Bit 7 of each byte of w that is '"', '\\' or below 0x20 (bytes after the first such byte may
 * be flagged wrongly: only the first counts). */
static inline uint64_t gp__json_special8(uint64_t w)
{
#define GP__HZ(v) (((v)-0x0101010101010101ULL) & ~(v)&0x8080808080808080ULL)
    return GP__HZ(w ^ 0x2222222222222222ULL) | GP__HZ(w ^ 0x5c5c5c5c5c5c5c5cULL) |
           ((w - 0x2020202020202020ULL) & ~w & 0x8080808080808080ULL);
#undef GP__HZ
}

/* An object member's key at p (blanks first) into *kw, as gp__json_key: a key of at most 15
 * bytes without escapes directly followed by ':' is read from two 8-byte words, with no call
 * (most keys of a Kineto trace); any other through gp__json_key. Returns the position after the
 * ':' (blanks after it skipped). */
static inline const char *gp__json_key_word(gp__reader *r, const char *p, gp__json_kw *kw,
                                            const char *msg)
{
    p = gp__skip_ws(p);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (*p == '"') {
        uint64_t a, b;
        memcpy(&a, p + 1, 8);
        memcpy(&b, p + 9, 8);
        uint64_t ma = gp__json_special8(a), mb = gp__json_special8(b);
        size_t n = ma ? (size_t)__builtin_ctzll(ma) >> 3
                      : (mb ? 8 + ((size_t)__builtin_ctzll(mb) >> 3) : 16);
        if (n < 16 && p[1 + n] == '"' && p[2 + n] == ':') {
            kw->s = p + 1;
            kw->len = n;
            kw->w0 = n >= 8 ? a : (n ? a & (~0ULL >> (64 - 8 * n)) : 0);
            kw->w1 = n <= 8 ? 0 : b & (~0ULL >> (64 - 8 * (n - 8)));
            return gp__skip_ws(p + n + 3);
        }
    }
#endif
    p = gp__json_key(r, p, &kw->s, &kw->len, msg);
    kw->w0 = gp__json_word(kw->s, kw->len, 0);
    kw->w1 = gp__json_word(kw->s, kw->len, 8);
    return p;
}

#endif
