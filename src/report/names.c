/* Readable short forms of long (demangled C++) names for fixed-width tables. */
#include <stdbool.h>
#include <string.h>

#include "gpuprof/summary.h"

static void copy_trunc(const char *s, size_t len, char *out, size_t cap)
{
    if (cap == 0)
        return;
    if (len >= cap)
        len = cap - 1;
    memcpy(out, s, len);
    out[len] = '\0';
}

/* Elides the middle of s[0..len) to fit width characters: "head...tail". */
static void elide(const char *s, size_t len, size_t width, char *out, size_t cap)
{
    if (len <= width || width < 8) {
        copy_trunc(s, len <= width ? len : width, out, cap);
        return;
    }
    size_t tail = (width - 3) / 2, head = width - 3 - tail;
    char tmp[1024];
    if (head + tail + 4 > sizeof tmp) {
        copy_trunc(s, width, out, cap);
        return;
    }
    memcpy(tmp, s, head);
    memcpy(tmp + head, "...", 3);
    memcpy(tmp + head + 3, s + len - tail, tail);
    copy_trunc(tmp, head + 3 + tail, out, cap);
}

void gp_shorten_name(const char *name, size_t width, char *out, size_t cap)
{
    size_t len = strlen(name);
    if (len <= width) {
        copy_trunc(name, len, out, cap);
        return;
    }
    /* Only C++-looking names are simplified: a template or scope before the first '(', or no space
     * there (a function name). "Memcpy HtoD (Pageable -> Device)" is just elided. */
    const char *paren = strchr(name, '(');
    bool cxx = false;
    if (strstr(name, "::") || strchr(name, '<')) {
        cxx = true;
    } else if (paren) {
        cxx = true;
        for (const char *q = name; q < paren; q++)
            if (*q == ' ')
                cxx = false;
    }
    if (!cxx) {
        elide(name, len, width, out, cap);
        return;
    }
    /* 1. Drop "(anonymous namespace)", template arguments and the argument list. */
    char buf[1024];
    size_t n = 0;
    int angle = 0;
    for (size_t i = 0; i < len && n + 6 < sizeof buf; i++) {
        char c = name[i];
        if (c == '(' && strncmp(name + i, "(anonymous namespace)", 21) == 0) {
            i += 20;
            if (angle == 0) {
                memcpy(buf + n, "{anon}", 6);
                n += 6;
            }
            continue;
        }
        if (angle == 0 && c == '(' && n > 0)
            break; /* argument list: the rest is parameters (and maybe qualifiers) */
        if (c == '<') {
            if (angle++ == 0) {
                memcpy(buf + n, "<...>", 5);
                n += 5;
            }
            continue;
        }
        if (c == '>' && angle > 0) {
            angle--;
            continue;
        }
        if (angle == 0)
            buf[n++] = c;
    }
    while (n > 0 && buf[n - 1] == ' ')
        n--;
    buf[n] = '\0';
    /* 2. Drop the return type: keep the last space-separated token. */
    const char *start = buf;
    for (const char *p = buf; *p; p++)
        if (*p == ' ')
            start = p + 1;
    /* 3. Keep at most the last two scopes. */
    const char *scopes[3] = {start, NULL, NULL};
    int found = 0;
    for (const char *p = start + strlen(start); p > start + 1; p--) {
        if (p[-1] == ':' && p[-2] == ':') {
            scopes[++found] = p;
            p--;
            if (found == 2)
                break;
        }
    }
    const char *keep = found == 2 ? scopes[2] : start; /* scopes[2]: last-but-one component */
    size_t klen = strlen(keep);
    if (klen == 0) {
        elide(name, len, width, out, cap);
        return;
    }
    elide(keep, klen, width, out, cap);
}
