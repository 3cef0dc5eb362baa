/* What the TORCH_TRACE reader counts inside payloads as their lines stream by: operator calls of
 * FX graphs, the kernels an Inductor output code generates and the calls it leaves to library or
 * eager kernels, and the parts of a graph break reason. Lines are not NUL-terminated. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/compile_log_internal.h"

/* Occurrences of the literal lit in s[0..len). */
static uint32_t count_of(const char *s, size_t len, const char *lit)
{
    size_t n = strlen(lit);
    uint32_t c = 0;
    const char *p = s, *end = s + len;
    while ((size_t)(end - p) >= n) {
        const char *q = memchr(p, lit[0], (size_t)(end - p) - n + 1);
        if (!q)
            break;
        if (memcmp(q, lit, n) == 0) {
            c++;
            q += n - 1;
        }
        p = q + 1;
    }
    return c;
}

static size_t skip_blanks(const char *s, size_t len, size_t i)
{
    while (i < len && (s[i] == ' ' || s[i] == '\t'))
        i++;
    return i;
}

void gp__clog_count_graph_line(const char *s, size_t len, uint32_t *ops, uint32_t *aten)
{
    size_t i = skip_blanks(s, len, 0);
    if (i == len || s[i] == '#')
        return;
    *ops += count_of(s + i, len - i, "torch.ops.");
    *aten += count_of(s + i, len - i, "torch.ops.aten.");
}

static bool is_ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

size_t gp__clog_code_line(const char *s, size_t len, bool *in_call, uint32_t *ext,
                          uint32_t *fallback, const char **name)
{
    static const char def_call[] = "def call(";
    if (len >= sizeof def_call - 1 && memcmp(s, def_call, sizeof def_call - 1) == 0) {
        *in_call = true;
        return 0;
    }
    /* A statement at column 0 ends call() (blank lines and comments do not). */
    if (*in_call && len > 0 && s[0] != ' ' && s[0] != '\t' && s[0] != '#')
        *in_call = false;
    if (*in_call) {
        size_t i = skip_blanks(s, len, 0);
        if (i < len && s[i] != '#') {
            *ext += count_of(s + i, len - i, "extern_kernels.");
            *fallback += count_of(s + i, len - i, "torch.ops.");
        }
        return 0;
    }
    /* NAME = async_compile.<backend>( at column 0. */
    size_t n = 0;
    while (n < len && is_ident(s[n]))
        n++;
    static const char ac[] = " = async_compile.";
    if (n == 0 || len - n < sizeof ac - 1 || memcmp(s + n, ac, sizeof ac - 1) != 0)
        return 0;
    size_t j = n + sizeof ac - 1, b = j;
    while (j < len && is_ident(s[j]))
        j++;
    if (j == b || j >= len || s[j] != '(')
        return 0;
    *name = s;
    return n;
}

/* Copies s[0..n) into out (cap bytes), trimmed of blanks at both ends; newlines become spaces. */
static void copy_trimmed(char *out, size_t cap, const char *s, size_t n)
{
    while (n > 0 && (*s == ' ' || *s == '\t' || *s == '\n'))
        s++, n--;
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        n--;
    if (cap == 0)
        return;
    size_t k = n < cap - 1 ? n : cap - 1;
    for (size_t i = 0; i < k; i++)
        out[i] = s[i] == '\n' ? ' ' : s[i];
    out[k] = '\0';
}

/* "FILE:LINE" ending at s[0..n) (the last ':' followed by digits). */
static bool split_location(const char *s, size_t n, char *file, size_t cap, int32_t *line)
{
    const char *colon = NULL;
    for (size_t i = n; i > 0; i--)
        if (s[i - 1] == ':') {
            colon = s + i - 1;
            break;
        }
    if (!colon || colon + 1 == s + n)
        return false;
    long v = 0;
    for (const char *p = colon + 1; p < s + n; p++) {
        if (*p < '0' || *p > '9' || v > 100000000)
            return false;
        v = v * 10 + (*p - '0');
    }
    copy_trimmed(file, cap, s, (size_t)(colon - s));
    *line = (int32_t)v;
    return true;
}

/* The length of the line starting at p (up to end). */
static size_t line_len(const char *p, const char *end)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    return (size_t)((nl ? nl : end) - p);
}

/* Older form: "File "X", line N, in fn" inside the text: the last one names the user line. */
static void last_file_line(const char *text, size_t len, char *file, size_t cap, int32_t *line)
{
    const char *p = text, *end = text + len;
    static const char key[] = "File \"";
    while (p < end) {
        const char *q = memchr(p, 'F', (size_t)(end - p));
        if (!q || (size_t)(end - q) < sizeof key - 1)
            break;
        if (memcmp(q, key, sizeof key - 1) == 0) {
            const char *f = q + sizeof key - 1;
            const char *fe = memchr(f, '"', (size_t)(end - f));
            if (fe && (size_t)(end - fe) > 8 && memcmp(fe, "\", line ", 8) == 0) {
                copy_trimmed(file, cap, f, (size_t)(fe - f));
                *line = (int32_t)strtol(fe + 8, NULL, 10);
            }
        }
        p = q + 1;
    }
}

void gp__clog_parse_break(const char *text, size_t len, char *out, size_t cap, char *file_out,
                          size_t file_cap, int32_t *line)
{
    static const char at[] = "Graph break in user code at ";
    static const char why[] = "Graph Break Reason: ";
    static const char tb[] = "User code traceback:";
    const char *end = text + len;
    out[0] = '\0';
    file_out[0] = '\0';
    *line = -1;
    for (const char *p = text; p < end;) {
        size_t n = line_len(p, end);
        if (n > sizeof at - 1 && memcmp(p, at, sizeof at - 1) == 0) {
            split_location(p + sizeof at - 1, n - (sizeof at - 1), file_out, file_cap, line);
        } else if (n >= sizeof why - 1 && memcmp(p, why, sizeof why - 1) == 0) {
            /* The reason runs to "User code traceback:" (newer logs add Explanation / Hint). */
            const char *r = p + sizeof why - 1, *re = end;
            for (const char *q = r; q < end;) {
                size_t m = line_len(q, end);
                if (m >= sizeof tb - 1 && memcmp(q, tb, sizeof tb - 1) == 0) {
                    re = q;
                    break;
                }
                q += m + 1;
            }
            copy_trimmed(out, cap, r, (size_t)(re - r));
            break;
        }
        p += n + 1;
    }
    if (!out[0]) /* older logs: "Graph break: skip: from user code at: ..." */
        copy_trimmed(out, cap, text, line_len(text, end));
    if (*line < 0)
        last_file_line(text, len, file_out, file_cap, line);
}
