/* See http.h: what the servers read of a request before libmicrohttpd sees it (the head check of
 * the gate) and the request target (path and query), decoded. Pure functions: no I/O, no
 * allocation; the fuzz target fuzz/fuzz_http.c drives both. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "app/serve/http.h"

/* RFC 9110 tchar: the characters of a method token. */
static bool is_tchar(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return true;
    return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* Checks the request line in buf[0..n) (n may stop anywhere in it). GP__HEAD_MORE while it can
 * still become valid; *line_end is set to the index after its '\n' once it is whole. */
static gp__head_verdict check_request_line(const unsigned char *b, size_t n, size_t *line_end,
                                           const char **why)
{
    size_t i = 0;
    while (i < n && is_tchar(b[i]))
        i++;
    if (i == n)
        return GP__HEAD_MORE;
    if (i == 0 || b[i] != ' ') {
        *why = "malformed request line (expected METHOD SP TARGET SP HTTP/x.y)";
        return GP__HEAD_BAD;
    }
    size_t t = ++i; /* the target: visible ASCII, no %00 */
    for (; i < n && b[i] > ' ' && b[i] < 0x7f; i++)
        if (b[i] == '%' && i + 2 < n && b[i + 1] == '0' && b[i + 2] == '0') {
            *why = "%00 in the request target";
            return GP__HEAD_BAD;
        }
    if (i == n)
        return GP__HEAD_MORE;
    if (i == t || b[i] != ' ') {
        *why = "malformed request target";
        return GP__HEAD_BAD;
    }
    static const char proto[] = "HTTP/d.d\r\n"; /* 'd' a digit; the \r is optional */
    i++;
    for (size_t k = 0; proto[k] && i < n; k++, i++) {
        bool ok = proto[k] == 'd' ? (b[i] >= '0' && b[i] <= '9') : b[i] == (unsigned char)proto[k];
        if (!ok && proto[k] == '\r' && b[i] == '\n')
            k++, ok = true;
        if (!ok) {
            *why = "malformed request line (expected METHOD SP TARGET SP HTTP/x.y)";
            return GP__HEAD_BAD;
        }
        if (b[i] == '\n') {
            *line_end = i + 1;
            return GP__HEAD_COMPLETE;
        }
    }
    return GP__HEAD_MORE;
}

/* Checks the Content-Length fields of the header lines b[from..to): each 1 to 18 digits (no sign,
 * no overflow) and all equal. libmicrohttpd answered a negative, non-numeric or overflowing one
 * with two response heads (issue 38): the gate answers it once, before libmicrohttpd reads it. */
static bool content_length_ok(const unsigned char *b, size_t from, size_t to)
{
    static const char name[] = "content-length:";
    const size_t nlen = sizeof name - 1;
    long long seen = -1;
    for (size_t i = from; i < to;) {
        size_t end = i;
        while (end < to && b[end] != '\n')
            end++;
        if (end - i > nlen && strncasecmp((const char *)b + i, name, nlen) == 0) {
            size_t k = i + nlen, digits = 0;
            long long v = 0;
            while (k < end && (b[k] == ' ' || b[k] == '\t'))
                k++;
            for (; k < end && b[k] >= '0' && b[k] <= '9'; k++, digits++)
                v = digits < 18 ? v * 10 + (b[k] - '0') : v;
            while (k < end && (b[k] == ' ' || b[k] == '\t' || b[k] == '\r'))
                k++;
            if (k != end || digits == 0 || digits > 18 || (seen >= 0 && v != seen))
                return false;
            seen = v;
        }
        i = end + 1;
    }
    return true;
}

gp__head_verdict gp__http_head_check(const char *buf, size_t n, size_t cap, const char **why)
{
    const unsigned char *b = (const unsigned char *)buf;
    *why = "";
    size_t skip = 0; /* RFC 9112 2.2: empty lines before the request line are ignored */
    while (skip < n && skip < 8 && (b[skip] == '\r' || b[skip] == '\n'))
        skip++;
    size_t line_end = 0;
    gp__head_verdict v = check_request_line(b + skip, n - skip, &line_end, why);
    if (v == GP__HEAD_COMPLETE) { /* the header lines: no NUL; the head ends at an empty line */
        v = GP__HEAD_MORE;
        for (size_t i = skip + line_end; i < n && v == GP__HEAD_MORE; i++) {
            if (b[i] == 0) {
                *why = "NUL byte in the request head";
                return GP__HEAD_BAD;
            }
            if (b[i] == '\n' && (b[i - 1] == '\n' || (b[i - 1] == '\r' && b[i - 2] == '\n'))) {
                v = GP__HEAD_COMPLETE;
                if (!content_length_ok(b, skip + line_end, i + 1)) {
                    *why = "bad Content-Length (not 1 to 18 digits, or two that differ)";
                    return GP__HEAD_BAD;
                }
            }
        }
    }
    if (v == GP__HEAD_MORE && n >= cap) {
        *why = "request head too large";
        return GP__HEAD_TOO_LARGE;
    }
    return v;
}

/* Decodes s[0..len) (%XX escapes; '+' as a space when plus_space) into out (cap bytes with the
 * NUL). false for a bad or NUL escape, a control byte, or an overflow. */
static bool decode(const char *s, size_t len, bool plus_space, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '%') {
            if (i + 2 >= len || !isxdigit((unsigned char)s[i + 1]) ||
                !isxdigit((unsigned char)s[i + 2]))
                return false;
            char hex[3] = {s[i + 1], s[i + 2], 0};
            c = (unsigned char)strtol(hex, NULL, 16);
            i += 2;
        } else if (c == '+' && plus_space) {
            c = ' ';
        }
        if (c < 0x20 || c == 0x7f || o + 1 >= cap)
            return false;
        out[o++] = (char)c;
    }
    out[o] = 0;
    return true;
}

gp_status gp__http_parse_target(const char *raw, size_t len, gp__http_target *t, const char **why)
{
    memset(t, 0, sizeof *t);
    *why = "";
    if (len == 0 || raw[0] != '/') {
        *why = "the request target must start with '/'";
        return GP_EINVAL;
    }
    for (size_t i = 0; i < len; i++) /* anywhere, the fragment included */
        if ((unsigned char)raw[i] <= ' ' || raw[i] == 0x7f ||
            (raw[i] == '%' && i + 2 < len && raw[i + 1] == '0' && raw[i + 2] == '0')) {
            *why = "a control byte, a space or %00 in the request target";
            return GP_EINVAL;
        }
    const char *q = memchr(raw, '?', len);
    size_t plen = q ? (size_t)(q - raw) : len;
    const char *frag = memchr(raw, '#', len);
    if (frag && (!q || frag < q))
        plen = (size_t)(frag - raw);
    if (!decode(raw, plen, false, t->path, sizeof t->path)) {
        *why = "bad %-escape, NUL or control byte in the path, or a path too long";
        return GP_EINVAL;
    }
    if (!q)
        return GP_OK;
    const char *p = q + 1, *end = raw + len;
    if (frag && frag > q)
        end = frag;
    while (p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *stop = amp ? amp : end;
        if (stop > p) {
            if (t->n_params == GP__HTTP_MAX_PARAMS) {
                *why = "too many query parameters";
                return GP_EINVAL;
            }
            const char *eq = memchr(p, '=', (size_t)(stop - p));
            const char *kend = eq ? eq : stop;
            gp__http_param *pa = &t->params[t->n_params++];
            if (!decode(p, (size_t)(kend - p), true, pa->key, sizeof pa->key) ||
                !decode(eq ? eq + 1 : stop, eq ? (size_t)(stop - eq - 1) : 0, true, pa->value,
                        sizeof pa->value)) {
                *why = "bad %-escape, NUL or control byte in the query, or a value too long";
                return GP_EINVAL;
            }
        }
        p = stop + 1;
    }
    return GP_OK;
}

const char *gp__http_param_get(const gp__http_target *t, const char *key)
{
    for (size_t i = 0; i < t->n_params; i++)
        if (strcmp(t->params[i].key, key) == 0)
            return t->params[i].value;
    return NULL;
}
