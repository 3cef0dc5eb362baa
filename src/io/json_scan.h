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

static inline const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
        p++;
    return p;
}

static inline bool is_number_start(char c)
{
    return c == '-' || (c >= '0' && c <= '9');
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
static inline const char *expect_char(gp__reader *r, const char *p, char c, const char *what)
{
    p = skip_ws(p);
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
    const char *p = skip_ws(*pp);
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

#endif
