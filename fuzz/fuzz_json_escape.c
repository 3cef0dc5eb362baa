/* libFuzzer target for the JSON writer's string escaping (core/json_writer.c, #21 item 8): any
 * bytes in, a valid JSON string body out. Checked against glibc's iconv as an independent UTF-8
 * validator: the output is always well-formed UTF-8 with no raw control character, quote or
 * backslash; nothing is replaced when the input is well-formed; and for html_safe no '<', '>' or
 * '&' is left. The first byte picks html_safe and whether the text goes through gp__jw_raw (text
 * the reader validated as JSON may still carry ill-formed UTF-8 inside its strings). */
#include <errno.h>
#include <iconv.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_writer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool utf8_valid(const char *s, size_t n)
{
    iconv_t cd = iconv_open("UTF-32LE", "UTF-8");
    if (cd == (iconv_t)-1)
        abort();
    char *in = (char *)s;
    size_t left = n;
    bool ok = true;
    while (left > 0 && ok) {
        char out[4096], *o = out;
        size_t room = sizeof out;
        if (iconv(cd, &in, &left, &o, &room) == (size_t)-1 && errno != E2BIG)
            ok = false;
    }
    iconv_close(cd);
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    bool html = data[0] & 1, raw = data[0] & 2;
    const char *s = (const char *)data + 1;
    size_t n = size - 1;
    uint64_t before = gp__json_utf8_replaced();
    gp__buf b = {0};
    if (raw) {
        gp__jw w;
        gp__jw_init(&w, NULL);
        gp__jw_raw(&w, s, n);
        size_t len = 0;
        char *text = gp__jw_take(&w, &len);
        if (!text)
            return 0;
        if (gp__buf_append(&b, text, len) != GP_OK)
            abort();
        free(text);
    } else if (gp__json_escape(&b, s, n, html) != GP_OK) {
        abort();
    }
    const char *out = b.data ? b.data : "";
    size_t len = b.len;
    if (!utf8_valid(out, len)) {
        fprintf(stderr, "output is not valid UTF-8\n");
        abort();
    }
    bool replaced = gp__json_utf8_replaced() != before;
    if (replaced == utf8_valid(s, n)) {
        fprintf(stderr, "replacement (%d) disagrees with iconv's validity of the input\n",
                (int)replaced);
        abort();
    }
    if (!raw && !replaced && html == false) {
        /* Well-formed input: unescaping gives it back (only the 8 escapes and \u00XX occur). */
        size_t j = 0;
        for (size_t i = 0; i < len; i++, j++) {
            char c = out[i];
            if (c == '\\') {
                char e = out[++i];
                static const char from[] = "\"\\nrtbf", to[] = "\"\\\n\r\t\b\f";
                const char *k = strchr(from, e);
                if (k && e) {
                    c = to[k - from];
                } else if (e == 'u') {
                    c = (char)strtol((char[]){out[i + 3], out[i + 4], 0}, NULL, 16);
                    i += 4;
                } else {
                    abort();
                }
            }
            if (j >= n || c != s[j])
                abort();
        }
        if (j != n)
            abort();
    }
    for (size_t i = 0; i < len && !raw; i++) {
        unsigned char c = (unsigned char)out[i];
        if (c < 0x20 || c == '"' || (html && (c == '<' || c == '>' || c == '&')))
            abort();
        if (c == '\\')
            i++; /* the escaped character */
    }
    gp__buf_free(&b);
    return 0;
}
