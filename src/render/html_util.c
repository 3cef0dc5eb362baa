/* Small formatting helpers shared by the report renderers: HTML escaping, durations, byte counts,
 * and atomic writing of a rendered file. */
#include <string.h>

#include "core/atomic_file.h"
#include "render/render_internal.h"

void gp__html_text(FILE *fp, const char *s, size_t len)
{
    size_t run = 0; /* start of the pending unescaped run */
    for (size_t i = 0; i < len; i++) {
        const char *rep = NULL;
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '&':
            rep = "&amp;";
            break;
        case '<':
            rep = "&lt;";
            break;
        case '>':
            rep = "&gt;";
            break;
        case '"':
            rep = "&quot;";
            break;
        case '\'':
            rep = "&#39;";
            break;
        default:
            if (c < 0x20 && c != '\t' && c != '\n')
                rep = " ";
            break;
        }
        if (rep) {
            if (i > run)
                fwrite(s + run, 1, i - run, fp);
            fputs(rep, fp);
            run = i + 1;
        }
    }
    if (len > run)
        fwrite(s + run, 1, len - run, fp);
}

gp_status gp__render_to_file(const char *path, gp_status (*render)(const void *ctx, FILE *fp),
                             const void *ctx, gp_error *err)
{
    gp__afile f;
    gp_status s = gp__afile_open(&f, path, err);
    if (s != GP_OK)
        return s;
    s = render(ctx, f.fp);
    if (s != GP_OK) {
        gp__afile_abort(&f);
        return gp_error_set(err, s, "%s: cannot write: %s", path, gp_strerror(s));
    }
    return gp__afile_commit(&f, err);
}

void gp__fmt_dur_html(char *buf, size_t cap, int64_t ns)
{
    gp__fmt_dur(buf, cap, ns);
    size_t n = strlen(buf);
    if (n >= 3 && strcmp(buf + n - 3, " us") == 0 && n + 1 < cap) /* "us" -> "\u00b5s" (2 bytes) */
        memcpy(buf + n - 2, "\xc2\xb5s", 4);
}

void gp__html_page_open(FILE *fp, const char *title, const char *extra_css)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", fp);
    gp__html_str(fp, title);
    fprintf(fp, "</title>\n<style>\n%s%s%s</style>\n</head>\n<body>\n<header>\n<h1>",
            gp__asset_timeline_css, gp__asset_report_css, extra_css);
    gp__html_str(fp, title);
}
