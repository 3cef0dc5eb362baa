/* Invariants of rendered pages for the renderer fuzz targets (see page_check.h). A small HTML/SVG
 * tokenizer that knows only what our renderers write: anything else found in a page came from the
 * input unescaped. */
#include "page_check.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "render/render_internal.h"

void gp_fuzz_check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz invariant broken: %s\n", what);
        abort();
    }
}

static void failf(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void failf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fuzz invariant broken: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

/* gp_fuzz_check with a formatted message, formatted only when the check fails: the tokenizer
 * checks every attribute, and formatting each message up front was a tenth of a page's check. */
#define CHECKF(ok, ...)                                                                            \
    do {                                                                                           \
        if (!(ok))                                                                                 \
            failf(__VA_ARGS__);                                                                    \
    } while (0)

/* Parses text as JSON with jansson (integers as reals: our counters are unsigned 64-bit, which
 * jansson's json_int_t cannot hold). eof_check false: a value followed by more text, whose
 * length is returned in *used. */
static void parse_json(const char *text, size_t len, bool eof_check, size_t *used, const char *what)
{
    json_error_t je;
    size_t flags = JSON_DECODE_INT_AS_REAL | JSON_DECODE_ANY;
    if (!eof_check)
        flags = JSON_DECODE_INT_AS_REAL | JSON_DISABLE_EOF_CHECK;
    json_t *v = json_loadb(text, len, flags, &je);
    if (!v) {
        size_t at = (size_t)(je.position > 0 ? je.position : 0);
        fprintf(stderr, "%s: invalid JSON at byte %zu of %zu: %s\n  near: %.80s\n", what, at, len,
                je.text, text + (at > 40 && at - 40 < len ? at - 40 : 0));
        abort();
    }
    if (used)
        *used = (size_t)je.position;
    json_decref(v);
}

void gp_fuzz_check_json(const char *text, size_t len, const char *what)
{
    parse_json(text, len, true, NULL, what);
}

/* ASCII case folding by hand: strncasecmp at every byte of a page's scripts (ASan intercepts it)
 * was a third of fuzz_report_page's time. */
static bool eq_ci(const char *s, const char *lit, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char a = s[i], b = lit[i];
        if (a >= 'A' && a <= 'Z')
            a = (char)(a - 'A' + 'a');
        if (b >= 'A' && b <= 'Z')
            b = (char)(b - 'A' + 'a');
        if (a != b)
            return false;
    }
    return true;
}

/* memcmp(s, lit, n) == 0 by hand: libFuzzer intercepts memcmp and strncmp and walks both
 * buffers for its value profile, and comparing a page's scripts with our 10-60 KB assets that way
 * was a fifth of fuzz_diff's time. */
static bool eq_bytes(const char *s, const char *lit, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != lit[i])
            return false;
    return true;
}

static bool starts_ci(const char *s, const char *end, const char *lit)
{
    size_t n = strlen(lit);
    return (size_t)(end - s) >= n && eq_ci(s, lit, n);
}

/* The first case-insensitive lit in [s, end), or NULL. lit starts with a character that has no
 * case ('<' or '-'), found with memchr. */
static const char *find_ci(const char *s, const char *end, const char *lit)
{
    size_t n = strlen(lit);
    while ((size_t)(end - s) >= n) {
        s = memchr(s, lit[0], (size_t)(end - s) - n + 1);
        if (!s)
            return NULL;
        if (eq_ci(s, lit, n))
            return s;
        s++;
    }
    return NULL;
}

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_name_char(char c)
{
    return is_alpha(c) || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == ':' || c == '.';
}

/* Every element our HTML and SVG renderers write. */
static bool known_tag(const char *s, size_t n)
{
    static const char *const tags[] = {
        "html",     "head",
        "meta",     "title",
        "style",    "body",
        "header",   "footer",
        "main",     "nav",
        "section",  "h1",
        "h2",       "h3",
        "h4",       "p",
        "span",     "b",
        "i",        "em",
        "strong",   "small",
        "code",     "pre",
        "br",       "hr",
        "div",      "a",
        "table",    "thead",
        "tbody",    "tfoot",
        "tr",       "th",
        "td",       "caption",
        "ul",       "ol",
        "li",       "details",
        "summary",  "label",
        "button",   "input",
        "select",   "option",
        "form",     "time",
        "script",   "svg",
        "g",        "rect",
        "text",     "tspan",
        "line",     "polyline",
        "polygon",  "path",
        "circle",   "defs",
        "clipPath", "linearGradient",
        "stop",     "abbr",
        "sup",      "sub",
        "iframe",   "dl",
        "dt",       "dd",
        "link",     "noscript",
        "canvas",   "wbr",
    };
    for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++)
        if (strlen(tags[i]) == n && eq_bytes(tags[i], s, n))
            return true;
    return false;
}

static void check_srcdoc(const char *v, size_t n, const char *what);

/* The attributes of the tag whose name ends at p, up to its '>'. Sets *json when the tag has
 * type="application/json" and *ecma for type="text/ecmascript". Returns the byte after '>'. */
static const char *attributes(const char *p, const char *end, bool *json, bool *ecma,
                              const char *what)
{
    for (;;) {
        while (p < end && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
            p++;
        gp_fuzz_check(p < end, "a tag is not closed");
        if (*p == '>')
            return p + 1;
        if (*p == '/' && p + 1 < end && p[1] == '>')
            return p + 2;
        const char *name = p;
        while (p < end && is_name_char(*p))
            p++;
        size_t nlen = (size_t)(p - name);
        CHECKF(nlen > 0 && is_alpha(*name), "%s: attribute name at byte %.40s", what, name);
        CHECKF(!(nlen > 2 && strncasecmp(name, "on", 2) == 0), "%s: event-handler attribute %.*s",
               what, (int)nlen, name);
        if (p < end && *p == '=') {
            p++;
            const char *v = p;
            if (p < end && *p == '"') {
                const char *q = memchr(p + 1, '"', (size_t)(end - p - 1));
                CHECKF(q != NULL, "%s: attribute %.*s: unterminated value", what, (int)nlen, name);
                CHECKF(!memchr(p + 1, '<', (size_t)(q - p - 1)),
                       "%s: '<' in the value of attribute %.*s: %.60s", what, (int)nlen, name, v);
                if (nlen == 6 && strncasecmp(name, "srcdoc", 6) == 0)
                    check_srcdoc(v + 1, (size_t)(q - v - 1), what);
                if (nlen == 4 && strncasecmp(name, "type", 4) == 0) {
                    *json |= (size_t)(q - v - 1) == 16 && eq_bytes(v + 1, "application/json", 16);
                    *ecma |= (size_t)(q - v - 1) == 15 && eq_bytes(v + 1, "text/ecmascript", 15);
                }
                p = q + 1;
            } else {
                while (p < end && is_name_char(*p))
                    p++;
                CHECKF(p > v && p < end && (*p == ' ' || *p == '>' || *p == '/'),
                       "%s: attribute %.*s: unquoted value %.40s", what, (int)nlen, name, v);
            }
        }
    }
}

/* "\n" + one of our JavaScript assets, or the op table's inline sorter (ops_html.c). */
static bool known_script(const char *s, size_t n)
{
    const char *assets[] = {gp__asset_flame_page_js, gp__asset_timeline_js, gp__asset_report_js,
                            gp__asset_flame_js};
    for (size_t i = 0; i < sizeof assets / sizeof assets[0]; i++)
        if (n == strlen(assets[i]) + 1 && s[0] == '\n' && eq_bytes(s + 1, assets[i], n - 1))
            return true;
    static const char ops_prefix[] = "(function(){var s=document.currentScript.parentNode";
    static size_t ops_len; /* the sorter's length, the first time it is seen */
    if (n > sizeof ops_prefix && eq_bytes(s, ops_prefix, sizeof ops_prefix - 1)) {
        if (!ops_len)
            ops_len = n;
        return n == ops_len;
    }
    return false;
}

/* The content [s, end) of one <script> element. */
static void script_content(const char *s, const char *end, bool json, bool ecma, const char *what)
{
    char msg[256];
    size_t n = (size_t)(end - s);
    if (json) {
        CHECKF(!memchr(s, '<', n), "%s: '<' inside embedded JSON data", what);
        snprintf(msg, sizeof msg, "%s: embedded JSON data", what);
        parse_json(s, n, true, NULL, msg);
        return;
    }
    if (ecma) { /* the flame SVG: <![CDATA[\nvar GP_FLAME = {...};\n<flame.js>]]> */
        static const char head[] = "<![CDATA[\nvar GP_FLAME = ";
        CHECKF(n > sizeof head && eq_bytes(s, head, sizeof head - 1),
               "%s: the SVG's script prelude", what);
        const char *j = s + sizeof head - 1;
        size_t used = 0;
        snprintf(msg, sizeof msg, "%s: the SVG's GP_FLAME data", what);
        parse_json(j, (size_t)(end - j), false, &used, msg);
        CHECKF(!memchr(j, '<', used) && !memmem(j, used, "]]>", 3),
               "%s: '<' or ']]>' inside the SVG's GP_FLAME data", what);
        j += used;
        size_t js = strlen(gp__asset_flame_js);
        CHECKF((size_t)(end - j) == 2 + js + 3 && eq_bytes(j, ";\n", 2) &&
                   eq_bytes(j + 2, gp__asset_flame_js, js) && eq_bytes(j + 2 + js, "]]>", 3),
               "%s: the SVG's script after GP_FLAME", what);
        return;
    }
    CHECKF(known_script(s, n), "%s: a script that is none of ours: %.80s", what, s);
}

/* A style element holds no '<' outside CSS comments (our stylesheets' comments mention tags). */
static bool style_clean(const char *s, const char *end)
{
    while (s < end) {
        if (end - s >= 2 && s[0] == '/' && s[1] == '*') {
            const char *c = memmem(s + 2, (size_t)(end - s - 2), "*/", 2);
            if (!c)
                return false;
            s = c + 2;
        } else if (*s++ == '<') {
            return false;
        }
    }
    return true;
}

void gp_fuzz_check_page(const char *text, size_t len, const char *what)
{
    const char *end = text + len, *p = text;
    while ((p = memchr(p, '<', (size_t)(end - p))) != NULL) {
        /* '<' before anything but a letter, '/', '!' or '?' is text to a browser ("p <1e-4") */
        if (p + 1 < end && !is_alpha(p[1]) && p[1] != '/' && p[1] != '!' && p[1] != '?') {
            p++;
            continue;
        }
        const char *close = NULL;
        if (starts_ci(p, end, "<!--"))
            close = "-->";
        else if (starts_ci(p, end, "<!doctype") || starts_ci(p, end, "<?xml"))
            close = ">";
        if (close) {
            const char *q = find_ci(p, end, close);
            CHECKF(q != NULL, "%s: unclosed %.9s", what, p);
            p = q + strlen(close);
            continue;
        }
        bool closing = p + 1 < end && p[1] == '/';
        const char *name = p + 1 + closing, *q = name;
        while (q < end && (is_alpha(*q) || (q > name && *q >= '0' && *q <= '9')))
            q++;
        CHECKF(known_tag(name, (size_t)(q - name)), "%s: a tag we never write at byte %zu: %.40s",
               what, (size_t)(p - text), p);
        bool json = false, ecma = false;
        const char *after = attributes(q, end, &json, &ecma, what);
        bool script = (size_t)(q - name) == 6 && strncasecmp(name, "script", 6) == 0;
        bool style = (size_t)(q - name) == 5 && strncasecmp(name, "style", 5) == 0;
        if (!closing && (script || style) && after[-2] != '/') {
            const char *stop = find_ci(after, end, script ? "</script" : "</style");
            CHECKF(stop != NULL, "%s: a <%s> element is not closed", what,
                   script ? "script" : "style");
            if (script) {
                script_content(after, stop, json, ecma, what);
            } else {
                CHECKF(style_clean(after, stop), "%s: '<' inside a style element", what);
            }
            after = stop;
        }
        p = after;
    }
}

/* An iframe's srcdoc: a whole page escaped for the attribute. Unescaped (the five entities
 * gp__html_text writes) and checked as a page of its own. */
static void check_srcdoc(const char *v, size_t n, const char *what)
{
    static const struct {
        const char *ent;
        char c;
    } ents[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&#39;", '\''}};
    char *page = malloc(n + 1), *o = page;
    gp_fuzz_check(page != NULL, "out of memory");
    for (size_t i = 0; i < n;) {
        size_t k = 0;
        while (k < sizeof ents / sizeof ents[0] &&
               !(strlen(ents[k].ent) <= n - i && eq_bytes(v + i, ents[k].ent, strlen(ents[k].ent))))
            k++;
        if (k < sizeof ents / sizeof ents[0]) {
            *o++ = ents[k].c;
            i += strlen(ents[k].ent);
        } else {
            *o++ = v[i++];
        }
    }
    *o = '\0';
    char inner[200];
    snprintf(inner, sizeof inner, "%s (iframe srcdoc)", what);
    gp_fuzz_check_page(page, (size_t)(o - page), inner);
    free(page);
}

bool gp_fuzz_input_read(const uint8_t *data, size_t size, gp_fuzz_input *in)
{
    memset(in, 0, sizeof *in);
    if (size < 2)
        return false;
    in->flags = data[0];
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    const char *sep = memchr(text, '\0', len);
    size_t first = sep ? (size_t)(sep - text) : len;
    gp_read_opts ro;
    gp_read_opts_init(&ro);
    ro.quiet = true;
    ro.threads = 1;
    ro.keep_op_shapes = true;
    gp_error err;
    if (gp_trace_read_buffer(text, first, "rank0", &ro, &in->t[0], &err) != GP_OK)
        return false;
    in->n = 1;
    if (sep &&
        gp_trace_read_buffer(sep + 1, len - first - 1, "rank1", &ro, &in->t[1], &err) != GP_OK) {
        gp_fuzz_input_free(in);
        return false;
    }
    in->n += sep != NULL;
    return true;
}

void gp_fuzz_input_free(gp_fuzz_input *in)
{
    for (size_t i = 0; i < in->n; i++)
        gp_trace_free(in->t[i]);
    in->n = 0;
}

void gp_fuzz_mem_open(gp_fuzz_mem *m)
{
    m->text = NULL;
    m->len = 0;
    m->fp = open_memstream(&m->text, &m->len);
    gp_fuzz_check(m->fp != NULL, "open_memstream");
}

void gp_fuzz_mem_close(gp_fuzz_mem *m)
{
    gp_fuzz_check(fclose(m->fp) == 0, "closing the memory stream");
    m->fp = NULL;
}

void gp_fuzz_mem_free(gp_fuzz_mem *m)
{
    free(m->text);
    m->text = NULL;
}
