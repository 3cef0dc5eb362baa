#include "core/json_writer.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>
#include <zlib.h>

#define FLUSH_AT (1u << 20)

void gp__jw_init(gp__jw *w, FILE *fp)
{
    memset(w, 0, sizeof *w);
    w->fp = fp;
    w->first[0] = 1;
}

void gp__jw_init_gz(gp__jw *w, void *gzfile)
{
    gp__jw_init(w, NULL);
    w->gz = gzfile;
}

static void put(gp__jw *w, const char *s, size_t n)
{
    if (w->err)
        return;
    gp_status st = gp__buf_append(&w->buf, s, n);
    if (st != GP_OK) {
        w->err = st;
        return;
    }
    if (w->buf.len >= FLUSH_AT && (w->fp || w->gz))
        gp__jw_flush(w);
}

static void sep(gp__jw *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->first[w->depth])
        w->first[w->depth] = 0;
    else
        put(w, ",", 1);
    if (w->pretty && w->depth > 0) {
        static const char spaces[] = "\n                                                  ";
        int n = w->depth * 2 < 50 ? w->depth * 2 : 50;
        put(w, spaces, (size_t)n + 1);
    }
}

static void open_(gp__jw *w, char c)
{
    sep(w);
    put(w, &c, 1);
    if (w->depth + 1 >= GP__JW_MAX_DEPTH) {
        w->err = GP_ELIMIT;
        return;
    }
    w->first[++w->depth] = 1;
}

static void close_(gp__jw *w, char c)
{
    if (w->depth <= 0) {
        w->err = GP_ESTATE;
        return;
    }
    bool empty = w->first[w->depth];
    w->depth--;
    if (w->pretty && !empty) {
        static const char spaces[] = "\n                                                  ";
        int n = w->depth * 2 < 50 ? w->depth * 2 : 50;
        put(w, spaces, (size_t)n + 1);
    }
    put(w, &c, 1);
}

void gp__jw_obj_begin(gp__jw *w)
{
    open_(w, '{');
}
void gp__jw_obj_end(gp__jw *w)
{
    close_(w, '}');
}
void gp__jw_arr_begin(gp__jw *w)
{
    open_(w, '[');
}
void gp__jw_arr_end(gp__jw *w)
{
    close_(w, ']');
}

static _Atomic uint64_t utf8_replaced;

uint64_t gp__json_utf8_replaced(void)
{
    return atomic_load_explicit(&utf8_replaced, memory_order_relaxed);
}

/* The length (2 to 4) of the well-formed UTF-8 sequence at s[0, n) (s[0] >= 0x80), or 0 when it is
 * ill-formed, with *bad the bytes one U+FFFD replaces: the maximal subpart (Unicode ch. 3, "U+FFFD
 * substitution of maximal subparts", as WHATWG decoders do). Overlong forms, surrogates and code
 * points past U+10FFFF are ill-formed. */
static size_t utf8_seq(const unsigned char *s, size_t n, size_t *bad)
{
    unsigned c = s[0], lo = 0x80, hi = 0xBF;
    size_t need;
    if (c >= 0xC2 && c <= 0xDF) {
        need = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 2;
        lo = c == 0xE0 ? 0xA0 : 0x80;
        hi = c == 0xED ? 0x9F : 0xBF;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 3;
        lo = c == 0xF0 ? 0x90 : 0x80;
        hi = c == 0xF4 ? 0x8F : 0xBF;
    } else {
        *bad = 1;
        return 0;
    }
    for (size_t k = 1; k <= need; k++) {
        if (k >= n || s[k] < lo || s[k] > hi) {
            *bad = k;
            return 0;
        }
        lo = 0x80;
        hi = 0xBF;
    }
    return need + 1;
}

/* At s[*i] >= 0x80: moves *i past a well-formed sequence; or appends s[*run, *i) and U+FFFD
 * (counted) to b and moves *i and *run past the ill-formed part. */
static gp_status utf8_step(gp__buf *b, const char *s, size_t len, size_t *i, size_t *run)
{
    size_t bad = 0, ok = utf8_seq((const unsigned char *)s + *i, len - *i, &bad);
    if (ok) {
        *i += ok;
        return GP_OK;
    }
    gp_status st = gp__buf_append(b, s + *run, *i - *run);
    if (st == GP_OK)
        st = gp__buf_append(b, "\xEF\xBF\xBD", 3);
    if (st != GP_OK)
        return st;
    atomic_fetch_add_explicit(&utf8_replaced, 1, memory_order_relaxed);
    *i += bad;
    *run = *i;
    return GP_OK;
}

/* Appends s[0, len) to b with every ill-formed UTF-8 subpart replaced by U+FFFD (counted). */
static gp_status append_utf8(gp__buf *b, const char *s, size_t len)
{
    size_t run = 0;
    for (size_t i = 0; i < len;) {
        if ((unsigned char)s[i] < 0x80) {
            i++;
            continue;
        }
        gp_status st = utf8_step(b, s, len, &i, &run);
        if (st != GP_OK)
            return st;
    }
    return gp__buf_append(b, s + run, len - run);
}

gp_status gp__json_escape(gp__buf *b, const char *s, size_t len, bool html_safe)
{
    static const char hex[] = "0123456789abcdef";
    size_t run = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *rep = NULL;
        char ubuf[6];
        if (c >= 0x80) {
            gp_status st = utf8_step(b, s, len, &i, &run);
            if (st != GP_OK)
                return st;
            i--; /* utf8_step moved past the sequence; the loop adds 1 */
            continue;
        }
        if (c >= 0x20 && c != '"' && c != '\\' &&
            !(html_safe && (c == '<' || c == '>' || c == '&')))
            continue;
        switch (c) {
        case '"':
            rep = "\\\"";
            break;
        case '\\':
            rep = "\\\\";
            break;
        case '\n':
            rep = "\\n";
            break;
        case '\r':
            rep = "\\r";
            break;
        case '\t':
            rep = "\\t";
            break;
        case '\b':
            rep = "\\b";
            break;
        case '\f':
            rep = "\\f";
            break;
        default:
            ubuf[0] = '\\';
            ubuf[1] = 'u';
            ubuf[2] = '0';
            ubuf[3] = '0';
            ubuf[4] = hex[c >> 4];
            ubuf[5] = hex[c & 15];
            break;
        }
        gp_status st = gp__buf_append(b, s + run, i - run);
        if (st == GP_OK)
            st = rep ? gp__buf_append(b, rep, strlen(rep)) : gp__buf_append(b, ubuf, 6);
        if (st != GP_OK)
            return st;
        run = i + 1;
    }
    return gp__buf_append(b, s + run, len - run);
}

void gp__jw_key(gp__jw *w, const char *key)
{
    gp__jw_str(w, key);
    if (!w->err) {
        put(w, ":", 1);
        w->after_key = true;
    }
}

void gp__jw_strn(gp__jw *w, const char *s, size_t len)
{
    sep(w);
    put(w, "\"", 1);
    if (!w->err) {
        gp_status st = gp__json_escape(&w->buf, s ? s : "", s ? len : 0, w->html_safe);
        if (st != GP_OK)
            w->err = st;
    }
    put(w, "\"", 1);
}

void gp__jw_str(gp__jw *w, const char *s)
{
    gp__jw_strn(w, s, s ? strlen(s) : 0);
}

/* Writes the decimal digits of v ending at end (exclusive); returns the first digit. */
static char *u64_digits(uint64_t v, char *end)
{
    do {
        *--end = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return end;
}

void gp__jw_int(gp__jw *w, int64_t v)
{
    char tmp[24];
    char *end = tmp + sizeof tmp;
    char *p = u64_digits(v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, end);
    if (v < 0)
        *--p = '-';
    sep(w);
    put(w, p, (size_t)(end - p));
}

void gp__jw_uint(gp__jw *w, uint64_t v)
{
    char tmp[24];
    char *end = tmp + sizeof tmp;
    char *p = u64_digits(v, end);
    sep(w);
    put(w, p, (size_t)(end - p));
}

void gp__jw_double(gp__jw *w, double v)
{
    if (!isfinite(v)) {
        gp__jw_null(w);
        return;
    }
    char tmp[40];
    int n = snprintf(tmp, sizeof tmp, "%.15g", v);
    if (strtod(tmp, NULL) != v)
        n = snprintf(tmp, sizeof tmp, "%.17g", v);
    sep(w);
    put(w, tmp, (size_t)n);
}

void gp__jw_fixed(gp__jw *w, double v, int decimals)
{
    if (!isfinite(v)) {
        gp__jw_null(w);
        return;
    }
    char tmp[64];
    int n = snprintf(tmp, sizeof tmp, "%.*f", decimals, v);
    sep(w);
    put(w, tmp, (size_t)n);
}

void gp__jw_ns_as_us(gp__jw *w, int64_t ns)
{
    char tmp[32];
    char *end = tmp + sizeof tmp;
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    unsigned frac = (unsigned)(a % 1000);
    *--end = (char)('0' + frac % 10);
    *--end = (char)('0' + frac / 10 % 10);
    *--end = (char)('0' + frac / 100);
    *--end = '.';
    char *p = u64_digits(a / 1000, end);
    if (ns < 0)
        *--p = '-';
    sep(w);
    put(w, p, (size_t)(tmp + sizeof tmp - p));
}

void gp__jw_bool(gp__jw *w, bool v)
{
    sep(w);
    put(w, v ? "true" : "false", v ? 4 : 5);
}

void gp__jw_null(gp__jw *w)
{
    sep(w);
    put(w, "null", 4);
}

void gp__jw_raw(gp__jw *w, const char *json, size_t len)
{
    sep(w);
    if (w->err)
        return;
    gp_status st = append_utf8(&w->buf, json, len);
    if (st != GP_OK)
        w->err = st;
    else if (w->buf.len >= FLUSH_AT && (w->fp || w->gz))
        gp__jw_flush(w);
}

void gp__jw_text(gp__jw *w, const char *text, size_t len)
{
    put(w, text, len);
}

/* The key + value writers: gp__jw_kv_NAME(w, key, v) is gp__jw_key, then gp__jw_NAME(w, v). */
#define KV(name, T)                                                                                \
    void gp__jw_kv_##name(gp__jw *w, const char *key, T v)                                         \
    {                                                                                              \
        gp__jw_key(w, key);                                                                        \
        gp__jw_##name(w, v);                                                                       \
    }
KV(str, const char *)
KV(int, int64_t)
KV(uint, uint64_t)
KV(double, double)
KV(bool, bool)
#undef KV

static _Thread_local int last_errno;

int gp__jw_last_write_errno(void)
{
    return last_errno;
}

gp_status gp__jw_flush(gp__jw *w)
{
    if (w->err || w->buf.len == 0)
        return w->err;
    if (w->fp) {
        errno = 0;
        if (fwrite(w->buf.data, 1, w->buf.len, w->fp) != w->buf.len) {
            w->err = GP_EIO;
            w->err_errno = last_errno = errno;
        }
    } else if (w->gz) {
        if (gzwrite((gzFile)w->gz, w->buf.data, (unsigned)w->buf.len) != (int)w->buf.len)
            w->err = GP_EIO;
    } else {
        return GP_OK; /* in-memory: keep */
    }
    w->buf.len = 0;
    return w->err;
}

gp_status gp__jw_finish(gp__jw *w)
{
    gp__jw_flush(w);
    gp__buf_free(&w->buf);
    return w->err;
}

char *gp__jw_take(gp__jw *w, size_t *len)
{
    if (w->err) {
        gp__buf_free(&w->buf);
        return NULL;
    }
    if (gp__buf_terminate(&w->buf) != GP_OK)
        return NULL;
    char *s = w->buf.data;
    if (len)
        *len = w->buf.len;
    memset(&w->buf, 0, sizeof w->buf);
    return s;
}

gp_status gp__jw_take_line(gp__jw *w, FILE *fp)
{
    size_t len;
    char *s = gp__jw_take(w, &len);
    if (!s)
        return GP_ENOMEM;
    s[len] = '\n'; /* the terminator's byte: one fwrite for the line */
    gp_status st = fwrite(s, 1, len + 1, fp) == len + 1 ? GP_OK : GP_EIO;
    free(s);
    return st;
}
