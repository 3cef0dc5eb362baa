/* See serve_pages.h: the profile server's own pages and documents. */
#include "render/serve_pages.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/json_writer.h"
#include "core/units.h"
#include "render/render_internal.h"

/* Three white bars on blue: a profile. */
const char gp__serve_favicon_svg[] =
    "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 16 16\"><rect width=\"16\" "
    "height=\"16\" rx=\"3\" fill=\"#4a90d9\"/><rect x=\"3\" y=\"8\" width=\"2.5\" "
    "height=\"5\" fill=\"#fff\"/><rect x=\"6.8\" y=\"3\" width=\"2.5\" height=\"10\" "
    "fill=\"#fff\"/><rect x=\"10.5\" y=\"6\" width=\"2.5\" height=\"7\" fill=\"#fff\"/>"
    "</svg>\n";

#define ICON_LINK "<link rel=\"icon\" type=\"image/svg+xml\" href=\"/favicon.ico\">"

void gp__serve_url_component(FILE *fp, const char *name)
{
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '.' || *p == '_' || *p == '~')
            fputc(*p, fp);
        else
            fprintf(fp, "%%%02X", *p);
    }
}

/* Links " · "-separated to the views of name among the n views vs that are pages (html) or data
 * (!html) and belong to a trace (linked) or a compile log (compile_log). */
static void links(FILE *fp, const char *name, const gp_view_info *const *vs, size_t n, bool html,
                  bool compile_log)
{
    for (size_t k = 0, shown = 0; k < n; k++) {
        if (vs[k]->html != html || !(compile_log ? vs[k]->compile_log : vs[k]->linked))
            continue;
        fprintf(fp, "%s<a href=\"%s", shown++ ? " · " : "", vs[k]->route);
        gp__serve_url_component(fp, name);
        fprintf(fp, "\">%s</a>", vs[k]->label);
    }
}

/* The compare form: two lists of the entries (traces and jobs: a compile log is not compared),
 * GET /diff?base=&current=. */
static void diff_form(FILE *fp, const gp__serve_entry *v, size_t n)
{
    size_t traces = 0;
    for (size_t i = 0; i < n; i++)
        traces += !v[i].compile_log;
    if (traces < 2)
        return;
    fputs("<h2>Compare two</h2><form id=\"gp-diff\" action=\"/diff\" method=\"get\">", fp);
    static const char *const sides[][2] = {{"base", "base"}, {"current", "current"}};
    for (int s = 0; s < 2; s++) {
        fprintf(fp, "<label>%s <select name=\"%s\">", sides[s][1], sides[s][0]);
        for (size_t i = 0, k = 0; i < n; i++) {
            if (v[i].compile_log)
                continue;
            fputs("<option value=\"", fp);
            gp__html_str(fp, v[i].name);
            fprintf(fp, "\"%s>", (size_t)s == k++ ? " selected" : "");
            gp__html_str(fp, v[i].name);
            fputs("</option>", fp);
        }
        fputs("</select></label> ", fp);
    }
    fputs("<button type=\"submit\">diff</button></form>", fp);
}

/* The span, GPU busy and device cells of an entry (empty when its figures are not known). */
static void headline(FILE *fp, const gp__serve_entry *e)
{
    if (!e->has_head) {
        fputs("<td class=\"n\"></td><td class=\"n\"></td><td></td>", fp);
        return;
    }
    char span[32], busy[32];
    gp__fmt_dur_html(span, sizeof span, e->head.span);
    gp__fmt_dur_html(busy, sizeof busy, e->head.gpu_busy);
    fprintf(fp,
            "<td class=\"n\" data-v=\"%lld\">%s</td><td class=\"n\" data-v=\"%lld\">%s</td><td>",
            (long long)e->head.span, span, (long long)e->head.gpu_busy, busy);
    gp__html_str(fp, e->head.device);
    fputs("</td>", fp);
}

gp_status gp__serve_index_html(FILE *fp, const char *dir, const gp__serve_entry *v, size_t n,
                               const gp_view_info *const *views, size_t n_views)
{
    fputs("<!DOCTYPE html><html><head><meta charset=\"utf-8\">" ICON_LINK
          "<title>gpuprof: profiles</title>"
          "<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}"
          "td,th{padding:4px 12px;border-bottom:1px solid #ddd;text-align:left}"
          "td.n{text-align:right}label{margin-right:1em}</style></head><body>"
          "<h1>gpuprof profiles</h1><p>",
          fp);
    gp__html_str(fp, dir);
    fprintf(fp,
            ": %zu profile%s</p><table id=\"gp-profiles\"><tr><th>name</th><th>size</th>"
            "<th>modified</th><th>span</th><th>GPU busy</th><th>device</th><th>views</th>"
            "<th>data (JSON)</th></tr>",
            n, n == 1 ? "" : "s");
    for (size_t i = 0; i < n; i++) {
        char when[32] = "";
        time_t t = (time_t)v[i].mtime;
        struct tm tm;
        if (gmtime_r(&t, &tm))
            strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &tm);
        fputs("<tr><td>", fp);
        gp__html_str(fp, v[i].name);
        if (v[i].job)
            fprintf(fp, " (job, %d rank%s)", v[i].ranks, v[i].ranks == 1 ? "" : "s");
        else if (v[i].compile_log && v[i].dir)
            fprintf(fp, " (torch.compile log, %d file%s)", v[i].ranks, v[i].ranks == 1 ? "" : "s");
        else if (v[i].compile_log)
            fputs(" (torch.compile log)", fp);
        char size[32];
        gp__fmt_bytes(size, sizeof size, (double)v[i].bytes);
        fprintf(fp, "</td><td class=\"n\">%s</td><td>%s</td>", size, when);
        headline(fp, &v[i]);
        fputs("<td>", fp);
        bool cl = v[i].compile_log;
        links(fp, v[i].name, views, n_views, true, cl);
        if (!cl && v[i].has_head && v[i].head.compiled) { /* a trace with compiled regions */
            fputs(" · <a href=\"/compile/", fp);
            gp__serve_url_component(fp, v[i].name);
            fputs("\">compile</a>", fp);
        }
        fputs("</td><td>", fp);
        links(fp, v[i].name, views, n_views, false, cl);
        fputs("</td></tr>", fp);
    }
    fputs("</table>", fp);
    diff_form(fp, v, n);
    fputs("<p>JSON: <a href=\"/api/profiler/profiles\">/api/profiler/profiles</a>; the endpoints "
          "are described in docs/reports.md.</p></body></html>\n",
          fp);
    return ferror(fp) ? GP_EIO : GP_OK;
}

gp_status gp__serve_profiles_json(FILE *fp, const char *dir, const gp__serve_entry *v, size_t n)
{
    gp__jw w;
    gp__jw_init(&w, fp);
    gp__jw_obj_begin(&w);
    gp__jw_kv_str(&w, "dir", dir);
    gp__jw_key(&w, "profiles");
    gp__jw_arr_begin(&w);
    for (size_t i = 0; i < n; i++) {
        gp__jw_obj_begin(&w);
        gp__jw_kv_str(&w, "name", v[i].name);
        gp__jw_kv_str(&w, "type", v[i].compile_log ? "compile_log" : v[i].job ? "job" : "file");
        gp__jw_kv_int(&w, "bytes", v[i].bytes);
        gp__jw_kv_int(&w, "modified_unix", v[i].mtime);
        if (v[i].job)
            gp__jw_kv_int(&w, "ranks", v[i].ranks);
        else if (v[i].compile_log && v[i].dir)
            gp__jw_kv_int(&w, "files", v[i].ranks);
        gp__jw_obj_end(&w);
    }
    gp__jw_arr_end(&w);
    gp__jw_obj_end(&w);
    gp__jw_text(&w, "\n", 1);
    return gp__jw_finish(&w);
}

gp_status gp__serve_error_json(FILE *fp, unsigned code, const char *reason, const char *message)
{
    gp__jw w;
    gp__jw_init(&w, fp);
    gp__jw_obj_begin(&w);
    gp__jw_kv_int(&w, "status", code);
    gp__jw_kv_str(&w, "error", reason);
    gp__jw_kv_str(&w, "message", message);
    gp__jw_obj_end(&w);
    gp__jw_text(&w, "\n", 1);
    return gp__jw_finish(&w);
}

/* ---- the navigation bar ------------------------------------------------------------------ */

char *gp__serve_nav_html(const char *name, const gp_view_info *const *views, size_t n_views)
{
    char *html = NULL;
    size_t len = 0;
    FILE *bar = open_memstream(&html, &len);
    if (!bar)
        return NULL;
    fputs("\n<nav id=\"gp-serve-nav\" style=\"position:fixed;top:6px;right:10px;z-index:9999;"
          "font:12px system-ui,sans-serif;background:#fff;color:#222;border:1px solid #bbb;"
          "border-radius:4px;padding:3px 8px;opacity:.92\"><a href=\"/\">&larr; all profiles</a>",
          bar);
    if (name) {
        fputs(" · ", bar);
        links(bar, name, views, n_views, true, false);
    }
    fputs("</nav>\n", bar);
    if (fclose(bar) != 0) {
        free(html);
        return NULL;
    }
    return html;
}
