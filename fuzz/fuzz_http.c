/* libFuzzer target for what the servers read of a client before answering (src/app/serve/
 * http_parse.c): the gate's request-head check and the request-target decoder. Input: the bytes a
 * client sends. The head check must give a verdict in range and never call a head whole that
 * holds %00 in its target or a NUL byte; a whole head's target must decode to a path that starts
 * with '/' and holds no NUL or control byte, with at most GP__HTTP_MAX_PARAMS parameters whose
 * keys and values are clean the same way. The decoder also runs on the raw input. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/serve/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "http parse invariant broken: %s\n", what);
        abort();
    }
}

static bool clean(const char *s, size_t cap)
{
    size_t n = strnlen(s, cap);
    if (n == cap)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return false;
    return true;
}

static void check_target(const char *raw, size_t len)
{
    static gp__http_target t;
    const char *why = NULL;
    if (gp__http_parse_target(raw, len, &t, &why) != GP_OK) {
        check(why && why[0], "a refusal says why");
        return;
    }
    check(t.path[0] == '/', "the path starts with '/'");
    check(clean(t.path, sizeof t.path), "the path is clean");
    check(t.n_params <= GP__HTTP_MAX_PARAMS, "parameters capped");
    for (size_t i = 0; i < t.n_params; i++)
        check(clean(t.params[i].key, sizeof t.params[i].key) &&
                  clean(t.params[i].value, sizeof t.params[i].value),
              "parameters are clean");
    check(!memmem(raw, len, "%00", 3), "a %00 target is refused");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum { CAP = 16384 };
    if (size > CAP)
        return 0;
    const char *buf = (const char *)data, *why = NULL;
    gp__head_verdict v = gp__http_head_check(buf, size, CAP, &why);
    check(v >= GP__HEAD_MORE && v <= GP__HEAD_TOO_LARGE, "verdict in range");
    check(why != NULL, "why is set");
    check(v != GP__HEAD_TOO_LARGE || size == CAP, "too large only at the cap");
    if (v == GP__HEAD_COMPLETE) {
        /* the target: between the first two spaces of the request line */
        size_t skip = 0;
        while (skip < size && (buf[skip] == '\r' || buf[skip] == '\n'))
            skip++;
        const char *sp1 = memchr(buf + skip, ' ', size - skip);
        check(sp1 != NULL, "a whole head has a space after the method");
        const char *sp2 = memchr(sp1 + 1, ' ', size - (size_t)(sp1 + 1 - buf));
        check(sp2 != NULL, "a whole head has a space after the target");
        check(!memmem(sp1 + 1, (size_t)(sp2 - sp1 - 1), "%00", 3), "no %00 in a whole head");
        size_t end = skip; /* the head ends at the first empty line */
        while (end < size && !(buf[end] == '\n' && end > 0 &&
                               (buf[end - 1] == '\n' ||
                                (buf[end - 1] == '\r' && end > 1 && buf[end - 2] == '\n'))))
            end++;
        check(end < size, "a whole head ends at an empty line");
        check(!memchr(buf, 0, end), "no NUL in a whole head");
        check_target(sp1 + 1, (size_t)(sp2 - sp1 - 1));
    }
    check_target(buf, size);
    return 0;
}
