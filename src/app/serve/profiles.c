/* The profile server behind `gpuprof serve --dir DIR`: an index of the profiles and traces in a
 * directory, each one's dashboard and timeline, and their summary and analysis as JSON. Every
 * request reads the profile afresh (a file replaced on disk shows at the next request) and builds
 * its answer with the same library calls as the CLI; requests are served one at a time on the
 * server's thread. Names are never paths: a request names an entry of DIR's listing or nothing. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/json_writer.h"
#include "core/util.h"
#include "gpuprof/analyze.h"
#include "gpuprof/report.h"
#include "gpuprof/serve.h"
#include "gpuprof/summary.h"
#include "render/render_internal.h"
#include "app/serve/http.h"

struct gp_profile_server {
    struct MHD_Daemon *daemon;
    char dir[4096];
    uint16_t port;
};

typedef struct entry {
    char name[256];
    bool job; /* a directory of ranks */
    int64_t bytes;
    int64_t mtime;
} entry;

static bool has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), k = strlen(suf);
    return n > k && strcmp(s + n - k, suf) == 0;
}

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const entry *)a)->name, ((const entry *)b)->name);
}

/* The profiles of dir: *.json and *.json.gz files and subdirectories (jobs), sorted by name,
 * hidden entries left out. malloc'd (*n entries); NULL with *n 0 when none or unreadable. */
static entry *list_profiles(const char *dir, size_t *n)
{
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    entry *v = NULL;
    size_t cap = 0;
    for (struct dirent *de; (de = readdir(d));) {
        const char *nm = de->d_name;
        if (nm[0] == '.' || strlen(nm) >= sizeof v->name)
            continue;
        char path[4096 + 256 + 2];
        snprintf(path, sizeof path, "%s/%s", dir, nm);
        struct stat st;
        if (stat(path, &st) != 0)
            continue;
        bool job = S_ISDIR(st.st_mode);
        if (!job &&
            !(S_ISREG(st.st_mode) && (has_suffix(nm, ".json") || has_suffix(nm, ".json.gz"))))
            continue;
        entry *e = GP_PUSH(v, *n, cap);
        if (!e)
            break;
        snprintf(e->name, sizeof e->name, "%s", nm);
        e->job = job;
        e->bytes = job ? -1 : (int64_t)st.st_size;
        e->mtime = (int64_t)st.st_mtime;
    }
    closedir(d);
    if (*n > 1)
        qsort(v, *n, sizeof *v, cmp_entry);
    return v;
}

/* Reply built in a memory stream. */
typedef struct body {
    char *text;
    size_t len;
    FILE *fp;
} body;

static bool body_open(body *b)
{
    b->text = NULL;
    b->len = 0;
    b->fp = open_memstream(&b->text, &b->len);
    return b->fp != NULL;
}

static enum MHD_Result body_send(struct MHD_Connection *c, body *b, gp_status st, const char *type)
{
    bool ok = fclose(b->fp) == 0 && st == GP_OK;
    if (!ok) {
        free(b->text);
        return gp__http_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "could not render the page\n");
    }
    return gp__http_reply(c, MHD_HTTP_OK, type, b->text, b->len, true);
}

/* A name as one URL path segment: unreserved characters as they are, every other byte %XX. */
static void url_segment(FILE *fp, const char *name)
{
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '.' || *p == '_' || *p == '~')
            fputc(*p, fp);
        else
            fprintf(fp, "%%%02X", *p);
    }
}

/* The index page of the directory's n profiles v. */
static gp_status write_index_html(FILE *fp, const char *dir, const entry *v, size_t n)
{
    fputs("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>gpuprof: profiles</title>"
          "<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}"
          "td,th{padding:4px 12px;border-bottom:1px solid #ddd;text-align:left}"
          "td.n{text-align:right}</style></head><body><h1>gpuprof profiles</h1><p>",
          fp);
    gp__html_str(fp, dir);
    fprintf(fp,
            ": %zu profile%s</p><table id=\"gp-profiles\"><tr><th>name</th><th>size</th>"
            "<th>modified</th><th>views</th><th>data</th></tr>",
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
            fputs(" (job)", fp);
        char size[32];
        gp__fmt_bytes(size, sizeof size, (double)v[i].bytes);
        if (v[i].bytes >= 0)
            fprintf(fp, "</td><td class=\"n\">%s", size);
        else
            fputs("</td><td class=\"n\">-", fp);
        fprintf(fp, "</td><td>%s</td><td>", when);
        static const char *const views[][2] = {{"report", "report"}, {"timeline", "timeline"}};
        static const char *const data[][2] = {{"api/profiler/summary", "summary"},
                                              {"api/profiler/analysis", "analysis"}};
        for (int k = 0; k < 2; k++) {
            fprintf(fp, "%s<a href=\"/%s/", k ? " · " : "", views[k][0]);
            url_segment(fp, v[i].name); /* names come from readdir: no '/' in them */
            fprintf(fp, "\">%s</a>", views[k][1]);
        }
        fputs("</td><td>", fp);
        for (int k = 0; k < 2; k++) {
            fprintf(fp, "%s<a href=\"/%s/", k ? " · " : "", data[k][0]);
            url_segment(fp, v[i].name);
            fprintf(fp, "\">%s</a>", data[k][1]);
        }
        fputs("</td></tr>", fp);
    }
    fputs("</table><p>JSON: <a href=\"/api/profiler/profiles\">/api/profiler/profiles</a></p>"
          "</body></html>\n",
          fp);
    return GP_OK;
}

/* /api/profiler/profiles: {"dir": ..., "profiles": [{name, type, bytes, modified_unix}]}. */
static gp_status write_profiles_json(FILE *fp, const char *dir, const entry *v, size_t n)
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
        gp__jw_kv_str(&w, "type", v[i].job ? "job" : "file");
        gp__jw_key(&w, "bytes");
        if (v[i].bytes >= 0)
            gp__jw_int(&w, v[i].bytes);
        else
            gp__jw_null(&w);
        gp__jw_kv_int(&w, "modified_unix", v[i].mtime);
        gp__jw_obj_end(&w);
    }
    gp__jw_arr_end(&w);
    gp__jw_obj_end(&w);
    gp_status st = gp__jw_finish(&w);
    fputc('\n', fp);
    return st;
}

/* Lists the directory and answers with write's rendering of the listing. */
static enum MHD_Result send_listing(struct MHD_Connection *c, const gp_profile_server *s,
                                    gp_status (*write)(FILE *fp, const char *dir, const entry *v,
                                                       size_t n),
                                    const char *type)
{
    size_t n;
    entry *v = list_profiles(s->dir, &n);
    body b;
    if (!body_open(&b)) {
        free(v);
        return gp__http_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    }
    gp_status st = write(b.fp, s->dir, v, n);
    free(v);
    return body_send(c, &b, st, type);
}

/* Reads the profile `name` of the directory. A name that is not in the listing is a 404; an
 * unreadable or malformed profile a 422 with the reader's message. */
static enum MHD_Result read_named(struct MHD_Connection *c, const gp_profile_server *s,
                                  const char *name, gp_job **job, bool *replied)
{
    *replied = true;
    size_t n;
    entry *v = list_profiles(s->dir, &n);
    bool found = false;
    for (size_t i = 0; i < n && !found; i++)
        found = strcmp(v[i].name, name) == 0;
    free(v);
    if (!found)
        return gp__http_text(c, MHD_HTTP_NOT_FOUND, "no such profile in the directory\n");
    char path[4096 + 256 + 2];
    snprintf(path, sizeof path, "%s/%s", s->dir, name);
    gp_read_opts rd;
    gp_read_opts_init(&rd);
    rd.quiet = true;
    gp_error err = {0};
    gp_status st = gp_job_read(path, &rd, job, &err);
    if (st == GP_OK) {
        *replied = false;
        return MHD_YES;
    }
    char *msg = malloc(sizeof err.msg + 2);
    if (!msg)
        return gp__http_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    int len = snprintf(msg, sizeof err.msg + 2, "%s\n", err.msg[0] ? err.msg : gp_strerror(st));
    unsigned code =
        st == GP_ENOMEM ? MHD_HTTP_INTERNAL_SERVER_ERROR : 422u; /* Unprocessable Content */
    return gp__http_reply(c, code, "text/plain; charset=utf-8", msg, (size_t)len, true);
}

typedef enum view { VIEW_REPORT, VIEW_TIMELINE, VIEW_SUMMARY, VIEW_ANALYSIS } view;

static enum MHD_Result send_view(struct MHD_Connection *c, const gp_profile_server *s,
                                 const char *name, view what)
{
    gp_job *job = NULL;
    bool replied;
    enum MHD_Result r = read_named(c, s, name, &job, &replied);
    if (replied)
        return r;
    body b;
    if (!body_open(&b)) {
        gp_job_free(job);
        return gp__http_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    }
    gp_status st = GP_OK;
    const char *type = "application/json";
    if (what == VIEW_REPORT) {
        gp_report_bundle *rb = NULL;
        st = gp_report_bundle_build(job, NULL, &rb);
        if (st == GP_OK)
            st = gp_dashboard_render_html(rb->dashboard, name, b.fp);
        gp_report_bundle_free(rb);
        type = "text/html; charset=utf-8";
    } else if (what == VIEW_TIMELINE) {
        gp_analysis *an = NULL;
        if (gp_analyze_job(job, NULL, &an, NULL) != GP_OK)
            an = NULL; /* the timeline shows without the analysis' busy figures */
        gp_timeline_opts to;
        gp_timeline_opts_init(&to);
        to.analysis = an;
        gp_timeline *tl = NULL;
        st = gp_timeline_build(job->ranks, job->n_ranks, &to, &tl);
        if (st == GP_OK)
            st = gp_timeline_render_html(tl, name, b.fp);
        gp_timeline_free(tl);
        gp_analysis_free(an);
        type = "text/html; charset=utf-8";
    } else if (what == VIEW_SUMMARY) {
        gp_summary *sum = NULL;
        st = gp_summary_compute(job->ranks, job->n_ranks, NULL, &sum);
        if (st == GP_OK)
            st = gp_summary_render_json(sum, NULL, b.fp);
        gp_summary_free(sum);
    } else {
        gp_analysis *an = NULL;
        gp_error err = {0};
        st = gp_analyze_job(job, NULL, &an, &err);
        if (st == GP_OK)
            st = gp_analysis_render_json(an, GP_AT_ALL, b.fp);
        gp_analysis_free(an);
    }
    gp_job_free(job);
    return body_send(c, &b, st, type);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    const gp_profile_server *s = cls;
    (void)version;
    (void)upload;
    (void)con_cls;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return gp__http_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
    if (*upload_size) { /* a GET with a body: ignore it */
        *upload_size = 0;
        return MHD_YES;
    }
    if (strcmp(url, "/") == 0)
        return send_listing(c, s, write_index_html, "text/html; charset=utf-8");
    if (strcmp(url, "/healthz") == 0)
        return gp__http_reply(c, MHD_HTTP_OK, "application/json", "{\"status\":\"ok\"}\n", 16,
                              false);
    if (strcmp(url, "/api/profiler/profiles") == 0)
        return send_listing(c, s, write_profiles_json, "application/json");
    static const struct {
        const char *prefix;
        view what;
    } routes[] = {{"/report/", VIEW_REPORT},
                  {"/timeline/", VIEW_TIMELINE},
                  {"/api/profiler/summary/", VIEW_SUMMARY},
                  {"/api/profiler/analysis/", VIEW_ANALYSIS}};
    for (size_t i = 0; i < GP_ARRAY_LEN(routes); i++) {
        size_t k = strlen(routes[i].prefix);
        if (strncmp(url, routes[i].prefix, k) == 0 && url[k] && !strchr(url + k, '/'))
            return send_view(c, s, url + k, routes[i].what);
    }
    return gp__http_text(c, MHD_HTTP_NOT_FOUND, "not found (see /)\n");
}

gp_status gp_profile_server_start(const gp_profile_server_opts *opts, gp_profile_server **out,
                                  gp_error *err)
{
    if (!opts || !opts->dir)
        return gp_error_set(err, GP_EINVAL, "no profile directory");
    struct stat st;
    if (stat(opts->dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return gp_error_set(err, GP_ENOENT, "%s: not a directory", opts->dir);
    if (strlen(opts->dir) >= sizeof((gp_profile_server *)0)->dir)
        return gp_error_set(err, GP_EINVAL, "%s: path too long", opts->dir);
    const char *listen = opts->listen ? opts->listen : "127.0.0.1:8600";
    struct sockaddr_in sa;
    gp_status s = gp__http_parse_listen(listen, &sa, err);
    if (s != GP_OK)
        return s;
    gp_profile_server *srv = calloc(1, sizeof *srv);
    if (!srv)
        return gp_error_set(err, GP_ENOMEM, "out of memory");
    snprintf(srv->dir, sizeof srv->dir, "%s", opts->dir);
    srv->daemon = gp__http_start(&sa, handle, srv);
    if (!srv->daemon) {
        int e = errno;
        free(srv);
        return gp_error_set(err, GP_EIO, "cannot listen on %s: %s", listen,
                            e ? strerror(e) : "libmicrohttpd failed to start");
    }
    srv->port = gp__http_port(srv->daemon, &sa);
    *out = srv;
    return GP_OK;
}

uint16_t gp_profile_server_port(const gp_profile_server *s)
{
    return s->port;
}

void gp_profile_server_stop(gp_profile_server *s)
{
    if (!s)
        return;
    MHD_stop_daemon(s->daemon);
    free(s);
}
