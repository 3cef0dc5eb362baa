/* The profile server behind `gpuprof serve --dir DIR`: an index of the profiles and traces in a
 * directory, each one's dashboard, timeline and flame graph, a comparison of two, and JSON
 * endpoints (docs/reports.md). Every request reads the profile afresh (a file replaced on disk
 * shows at the next request) and builds its answer with the same library calls as the CLI. Names
 * are never paths: a request names an entry of DIR's listing (listing.c) or nothing.
 *
 * Each request is answered on its own thread (gate.c); at most `analyses` profiles are read and
 * analysed at once (the memory a request holds is its profile's model: bodies are written to a
 * temporary file and sent from it), the others wait for a turn up to 30 s, then get 503. */
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app/serve/http.h"
#include "app/serve/serve.h"
#include "app/views.h"
#include "core/lock.h"
#include "core/units.h"
#include "core/util.h"
#include "gpuprof/analyze.h"
#include "gpuprof/compile.h"
#include "gpuprof/diff.h"
#include "gpuprof/ops.h"
#include "gpuprof/report.h"
#include "gpuprof/serve.h"
#include "gpuprof/summary.h"
#include "app/serve/headlines.h"
#include "render/serve_pages.h"

enum { TURN_WAIT_S = 30, HEADS_REFRESH_MS = 1000 };

/* A listing's reply body, built once and shared by every request that sends it (issue 38: each
 * request copied the listing, 54 MB at 100,000 files); freed by the last reference. */
typedef struct shared_body {
    size_t refs; /* atomic */
    size_t len;
    char data[];
} shared_body;

/* The current body of the JSON listing (json) or of the index page: built from listing gen, and
 * (the index) the headline figures of version heads, at at_ms (monotonic). */
typedef struct listing_body {
    shared_body *body; /* the cache's reference; NULL: none yet */
    uint64_t gen, heads;
    int64_t at_ms;
} listing_body;

struct gp_profile_server {
    gp__http_server *http;
    gp__serve_dir dir;
    unsigned analyses;
    uint64_t max_input;
    gp__mutex lock;
    pthread_cond_t turn;
    unsigned busy; /* guarded by lock */
    bool stopping; /* guarded by lock; no new turns: the waiting requests get 503 */
    const gp_view_info *views[GP__VIEWS_MAX]; /* the registry (app/views.h): routes, links */
    size_t n_views;
    gp__headlines *heads;          /* the index's figures per entry (headlines.c), NULL: none */
    gp__mutex body_lock;           /* one listing body built at a time */
    listing_body bodies[2];        /* [json]; guarded by body_lock */
    _Atomic uint64_t bodies_built; /* for the tests: how many listing bodies were built */
};

static const char *const TYPE_HTML = "text/html; charset=utf-8";
static const char *const TYPE_JSON = "application/json";

/* An error: JSON under /api/, a line of text elsewhere. */
static enum MHD_Result fail(struct MHD_Connection *c, bool api, unsigned code, const char *msg)
{
    if (api)
        return gp__http_json_error(c, code, msg);
    size_t len = strlen(msg);
    char *text = malloc(len + 2);
    if (!text)
        return MHD_NO;
    memcpy(text, msg, len);
    memcpy(text + len, "\n", 2);
    return gp__http_reply(c, code, "text/plain; charset=utf-8", text, len + 1, true);
}

static unsigned status_code(gp_status st)
{
    return st == GP_ENOMEM || st == GP_EIO ? MHD_HTTP_INTERNAL_SERVER_ERROR
                                           : 422u; /* Unprocessable Content */
}

/* ---- turns: at most `analyses` requests read and analyse at once ------------------------- */

static bool take_turn(gp_profile_server *s)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += TURN_WAIT_S;
    gp__mutex_lock(&s->lock);
    int rc = 0;
    while (s->busy >= s->analyses && !s->stopping && rc != ETIMEDOUT)
        rc = gp__cond_timedwait(&s->turn, &s->lock, &until);
    bool ok = s->busy < s->analyses && !s->stopping;
    if (ok)
        s->busy++;
    gp__mutex_unlock(&s->lock);
    return ok;
}

/* Ends a turn (the request's profile freed). With glibc, the memory the request freed goes back
 * to the system (malloc_trim: every arena's free pages, not only the top of the main heap): each
 * request thread's arena otherwise kept its high-water mark, and RSS climbed from 5.5 to 333 MB
 * under load (issue 38; docs/internals/serve.md, "Memory under load"). */
static void give_turn(gp_profile_server *s)
{
    gp__mutex_lock(&s->lock);
    s->busy--;
    pthread_cond_signal(&s->turn);
    gp__mutex_unlock(&s->lock);
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

/* Sends the body written to fp; an error (st, err) instead when the rendering failed. */
static enum MHD_Result send_body(struct MHD_Connection *c, bool api, const char *type, FILE *fp,
                                 gp_status st, const gp_error *err)
{
    if (st == GP_OK)
        return gp__http_reply_file(c, MHD_HTTP_OK, type, fp);
    fclose(fp);
    return fail(c, api, status_code(st), err->msg[0] ? err->msg : gp_strerror(st));
}

/* Finds a name of the listing (*e, its path) and checks its size; replies (false) when it
 * cannot. */
static bool find_named(gp_profile_server *s, struct MHD_Connection *c, bool api, const char *name,
                       gp__serve_entry *e, char *path, size_t path_cap, enum MHD_Result *r)
{
    char why[GP__SERVE_PATH_MAX + 256];
    gp_status st = gp__serve_find(&s->dir, name, e, path, path_cap, why, sizeof why);
    if (st != GP_OK) {
        *r = fail(c, api, st == GP_ENOENT ? 404 : st == GP_ENOTSUP ? 403 : 422, why);
        return false;
    }
    if ((uint64_t)e->bytes > s->max_input) {
        char size[32], cap[32];
        gp__fmt_bytes(size, sizeof size, (double)e->bytes);
        gp__fmt_bytes(cap, sizeof cap, (double)s->max_input);
        snprintf(why, sizeof why, "%s: %s of %s files, over this server's limit of %s", name, size,
                 e->compile_log ? "log" : "trace", cap);
        *r = fail(c, api, 413, why);
        return false;
    }
    return true;
}

/* A compile log has none of a trace's views: a 422 saying which to ask for. */
static enum MHD_Result not_a_trace(struct MHD_Connection *c, bool api, const char *name)
{
    char why[4096];
    FILE *m = fmemopen(why, sizeof why, "w");
    if (!m)
        return fail(c, api, 500, "out of memory");
    fprintf(m, "%s: a torch.compile log (TORCH_TRACE), not a trace: its views are /compile/", name);
    gp__serve_url_component(m, name);
    fputs(" (HTML) and /api/profiler/compile/", m);
    gp__serve_url_component(m, name);
    fputs(" (JSON)", m);
    fputc(0, m);
    fclose(m);
    why[sizeof why - 1] = 0;
    return fail(c, api, 422, why);
}

/* Reads the trace or job at path (a listed one); replies (false) when it cannot. */
static bool read_path(struct MHD_Connection *c, bool api, const char *path, bool shapes,
                      gp_job **job, enum MHD_Result *r)
{
    gp_read_opts rd;
    gp_read_opts_init(&rd);
    rd.regular_files_only = true; /* a file swapped for a FIFO after the listing never blocks */
    rd.no_map = true; /* a trace rewritten in place while it is read must not fault the server */
    rd.quiet = true;
    rd.keep_op_shapes = shapes;
    gp_error err = {0};
    gp_status st = gp_job_read(path, &rd, job, &err);
    if (st != GP_OK) {
        *r = fail(c, api, st == GP_ENOMEM ? 500 : 422, err.msg[0] ? err.msg : gp_strerror(st));
        return false;
    }
    return true;
}

/* Finds a name of the listing, checks its size and reads it as a trace or job; replies (false)
 * when it cannot (a compile log: which views it has). */
static bool read_named(gp_profile_server *s, struct MHD_Connection *c, bool api, const char *name,
                       bool shapes, gp_job **job, enum MHD_Result *r)
{
    gp__serve_entry e;
    char path[GP__SERVE_PATH_MAX + 512 + 2];
    if (!find_named(s, c, api, name, &e, path, sizeof path, r))
        return false;
    if (e.compile_log) {
        *r = not_a_trace(c, api, name);
        return false;
    }
    return read_path(c, api, path, shapes, job, r);
}

/* /compile/NAME and /api/profiler/compile/NAME of a compile log at path: gpuprof compile PATH
 * --html (titled name, the bar back to the index) or --json. The log is read with regular files
 * only, its payloads too (the HTML page reads them back). */
static enum MHD_Result send_compile_log(gp_profile_server *s, struct MHD_Connection *c, bool api,
                                        const char *name, const char *path)
{
    gp_compile_read_opts ro = {.regular_files_only = true};
    gp_compile_log *log = NULL;
    gp_compile_analysis *an = NULL;
    gp_error err = {0};
    gp_status st = gp_compile_log_read(path, &ro, &log, &err);
    if (st != GP_OK)
        return fail(c, api, st == GP_ENOMEM ? 500 : 422, err.msg[0] ? err.msg : gp_strerror(st));
    FILE *fp = tmpfile();
    char *nav = NULL;
    if (fp && !api && !(nav = gp__serve_nav_html(NULL, s->views, s->n_views))) {
        fclose(fp);
        fp = NULL;
    }
    if (!fp || gp_compile_analyze(log, &an) != GP_OK) {
        free(nav);
        if (fp)
            fclose(fp);
        gp_compile_log_free(log);
        return fail(c, api, 500, fp ? "out of memory" : "cannot create a temporary file");
    }
    gp_compile_report rep = {
        .log = log, .analysis = an, .top_n = 20, .title = name, .nav_html = nav};
    st = api ? gp_compile_render_json(&rep, fp) : gp_compile_render_html(&rep, fp, &err);
    free(nav);
    gp_compile_analysis_free(an);
    gp_compile_log_free(log);
    return send_body(c, api, api ? TYPE_JSON : TYPE_HTML, fp, st, &err);
}

static enum MHD_Result send_view(gp_profile_server *s, struct MHD_Connection *c, const char *name,
                                 const gp_view_info *v, const gp__http_target *t)
{
    bool api = !v->html;
    gp_view_params vp = {.title = name,
                         .weight = gp__http_param_get(t, "weight"),
                         .by = gp__http_param_get(t, "by"),
                         .critical_path = gp__http_param_get(t, "critical_path")};
    gp_error err = {0};
    if (gp_view_check_params(v, &vp, &err) != GP_OK)
        return fail(c, api, 400, err.msg);
    if (!take_turn(s))
        return fail(c, api, 503, "busy: every analysis slot is taken; try again");
    gp_job *job = NULL;
    enum MHD_Result r;
    gp__serve_entry e;
    char path[GP__SERVE_PATH_MAX + 512 + 2];
    if (!find_named(s, c, api, name, &e, path, sizeof path, &r)) {
        give_turn(s);
        return r;
    }
    if (e.compile_log) {
        r = v->compile_log ? send_compile_log(s, c, api, name, path) : not_a_trace(c, api, name);
        give_turn(s);
        return r;
    }
    if (!read_path(c, api, path, v->keep_op_shapes, &job, &r)) {
        give_turn(s);
        return r;
    }
    FILE *fp = tmpfile();
    if (!fp) {
        gp_job_free(job);
        give_turn(s);
        return fail(c, api, 500, "cannot create a temporary file for the reply");
    }
    gp_status st = gp__view_render(v, job, &vp, name, fp, &err);
    gp_job_free(job);
    give_turn(s);
    return send_body(c, api, api ? TYPE_JSON : TYPE_HTML, fp, st, &err);
}

/* /diff and /api/profiler/diff: base and current, each a name of the listing. */
static enum MHD_Result send_diff(gp_profile_server *s, struct MHD_Connection *c, bool api,
                                 const gp__http_target *t)
{
    const char *names[2] = {gp__http_param_get(t, "base"), gp__http_param_get(t, "current")};
    if (!names[0] || !names[1] || !names[0][0] || !names[1][0])
        return fail(c, api, 400, "diff: give ?base=NAME&current=NAME (names from the listing)");
    if (!take_turn(s))
        return fail(c, api, 503, "busy: every analysis slot is taken; try again");
    gp_job *jobs[2] = {NULL, NULL};
    enum MHD_Result r = MHD_NO;
    bool ok = read_named(s, c, api, names[0], false, &jobs[0], &r) &&
              read_named(s, c, api, names[1], false, &jobs[1], &r);
    FILE *fp = ok ? tmpfile() : NULL;
    char *nav = NULL;
    gp_status st = GP_ENOMEM;
    gp_error err = {0};
    gp_diff *d = NULL;
    gp_flame_tree *tree = NULL;
    if (fp && (api || (nav = gp__serve_nav_html(NULL, s->views, s->n_views)))) {
        gp_diff_opts dopts;
        gp_diff_opts_init(&dopts);
        st = gp_diff_compute(gp_job_traces(jobs[0]), jobs[0]->n_ranks, gp_job_traces(jobs[1]),
                             jobs[1]->n_ranks, &dopts, &d, &err);
        gp_diff_render_opts ro;
        gp_diff_render_opts_init(&ro);
        ro.base_label = names[0];
        ro.cur_label = names[1];
        ro.nav_html = nav;
        gp_error flame_err = {0};
        if (st == GP_OK && !api &&
            gp_diff_flame(gp_job_traces(jobs[0]), jobs[0]->n_ranks, gp_job_traces(jobs[1]),
                          jobs[1]->n_ranks, &tree, &flame_err) != GP_OK) {
            tree = NULL;
            ro.flame_note = flame_err.msg;
        }
        ro.flame = tree;
        if (st == GP_OK)
            st = (api ? gp_diff_render_json : gp_diff_render_html)(d, &ro, fp);
    }
    free(nav);
    gp_flame_tree_free(tree);
    gp_diff_free(d);
    gp_job_free(jobs[0]);
    gp_job_free(jobs[1]);
    give_turn(s);
    if (!ok)
        return r;
    if (!fp)
        return fail(c, api, 500, "cannot create a temporary file for the reply");
    return send_body(c, api, api ? TYPE_JSON : TYPE_HTML, fp, st, &err);
}

static void body_release(void *cls)
{
    shared_body *b = cls;
    if (b && __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) == 0)
        free(b);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Renders listing l as the JSON listing or the index page into a new body (one reference);
 * NULL with *st set when it cannot. The index fills a copy of the entries with the figures known
 * so far (the others are queued for the cache's worker). */
static shared_body *build_body(gp_profile_server *s, const gp__serve_listing *l, bool json,
                               gp_status *st)
{
    char *text = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);
    gp__serve_entry *v = NULL;
    if (!fp || (!json && l->n && !(v = malloc(l->n * sizeof *v)))) {
        if (fp)
            fclose(fp);
        free(text);
        *st = GP_ENOMEM;
        return NULL;
    }
    if (v) {
        memcpy(v, l->v, l->n * sizeof *v);
        gp__headlines_fill(s->heads, v, l->n);
    }
    *st = json ? gp__serve_profiles_json(fp, s->dir.dir, l->v, l->n)
               : gp__serve_index_html(fp, s->dir.dir, v, l->n, s->views, s->n_views);
    free(v);
    if (fclose(fp) != 0 && *st == GP_OK)
        *st = GP_EIO;
    shared_body *b = *st == GP_OK ? malloc(sizeof *b + len + 1) : NULL;
    if (b) {
        b->refs = 1;
        b->len = len;
        memcpy(b->data, text, len + 1);
    } else if (*st == GP_OK)
        *st = GP_ENOMEM;
    free(text);
    if (b)
        s->bodies_built++;
    return b;
}

/* The current body of the listing (a reference, for body_release), built again when the folder's
 * listing changed or (the index) when figures came in and it is HEADS_REFRESH_MS old. */
static shared_body *listing_body_get(gp_profile_server *s, bool json, gp_status *st)
{
    const gp__serve_listing *l = gp__serve_listing_get(&s->dir);
    if (!l) {
        *st = GP_ENOMEM;
        return NULL;
    }
    uint64_t heads = json ? 0 : gp__headlines_version(s->heads);
    int64_t now = now_ms();
    gp__mutex_lock(&s->body_lock);
    listing_body *c = &s->bodies[json];
    if (!c->body || c->gen != l->gen || (c->heads != heads && now - c->at_ms >= HEADS_REFRESH_MS)) {
        shared_body *b = build_body(s, l, json, st);
        if (b) {
            body_release(c->body);
            *c = (listing_body){.body = b, .gen = l->gen, .heads = heads, .at_ms = now};
        }
    }
    shared_body *b = c->body && c->gen == l->gen ? c->body : NULL;
    if (b) {
        __atomic_add_fetch(&b->refs, 1, __ATOMIC_ACQ_REL);
        *st = GP_OK;
    }
    gp__mutex_unlock(&s->body_lock);
    gp__serve_listing_put(l);
    return b;
}

/* The index page or the JSON listing, from the shared body. */
static enum MHD_Result send_listing(gp_profile_server *s, struct MHD_Connection *c, bool json)
{
    gp_status st = GP_OK;
    shared_body *b = listing_body_get(s, json, &st);
    if (!b)
        return fail(c, json, status_code(st), "cannot write the listing");
    return gp__http_reply_shared(c, MHD_HTTP_OK, json ? TYPE_JSON : TYPE_HTML, b->data, b->len,
                                 body_release, b);
}

uint64_t gp__profile_server_bodies_built(const gp_profile_server *s)
{
    return s->bodies_built;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *method,
                              const gp__http_target *t)
{
    gp_profile_server *s = cls;
    const char *url = t->path;
    bool api = strncmp(url, "/api/", 5) == 0;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return fail(c, api, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed");
    if (strcmp(url, "/") == 0)
        return send_listing(s, c, false);
    if (strcmp(url, "/favicon.ico") == 0) /* the icon held in the binary */
        return gp__http_reply(c, MHD_HTTP_OK, "image/svg+xml", (char *)gp__serve_favicon_svg,
                              strlen(gp__serve_favicon_svg), false);
    if (strcmp(url, "/healthz") == 0)
        return gp__http_reply(c, MHD_HTTP_OK, TYPE_JSON, "{\"status\":\"ok\"}\n", 16, false);
    if (strcmp(url, "/api/profiler/profiles") == 0)
        return send_listing(s, c, true);
    if (strcmp(url, "/diff") == 0 || strcmp(url, "/api/profiler/diff") == 0)
        return send_diff(s, c, api, t);
    for (size_t i = 0; i < s->n_views; i++) {
        size_t k = strlen(s->views[i]->route);
        if (strncmp(url, s->views[i]->route, k) == 0 && url[k])
            return send_view(s, c, url + k, s->views[i], t);
    }
    return fail(c, api, MHD_HTTP_NOT_FOUND, "not found (see /)");
}

gp_status gp_profile_server_start(const gp_profile_server_opts *opts, gp_profile_server **out,
                                  gp_error *err)
{
    if (!opts || !opts->dir)
        return gp_error_set(err, GP_EINVAL, "no profile directory");
    const char *listen = opts->listen ? opts->listen : "127.0.0.1:8600";
    struct sockaddr_in sa;
    gp_status st = gp__http_parse_listen(listen, &sa, err);
    if (st != GP_OK)
        return st;
    gp_profile_server *srv = calloc(1, sizeof *srv);
    if (!srv)
        return gp_error_set(err, GP_ENOMEM, "out of memory");
    if ((st = gp__serve_dir_init(&srv->dir, opts->dir, opts->follow_symlinks, err)) != GP_OK) {
        free(srv);
        return st;
    }
    srv->n_views = gp__view_list(srv->views, GP__VIEWS_MAX);
    srv->analyses = opts->analyses ? opts->analyses : 2;
    srv->max_input = opts->max_input_bytes ? opts->max_input_bytes : (uint64_t)4 << 30;
    /* NULL (out of memory): an index without figures */
    srv->heads = gp__headlines_new(&srv->dir, srv->max_input);
    gp__mutex_init(&srv->lock);
    gp__mutex_init(&srv->body_lock);
    pthread_cond_init(&srv->turn, NULL);
    srv->http = gp__http_start(&sa, NULL, handle, srv);
    if (!srv->http) {
        int e = errno;
        gp_profile_server_stop(srv);
        return gp_error_set(err, GP_EIO, "cannot listen on %s: %s", listen,
                            e ? strerror(e) : "libmicrohttpd failed to start");
    }
    *out = srv;
    return GP_OK;
}

uint16_t gp_profile_server_port(const gp_profile_server *s)
{
    return gp__http_port(s->http);
}

void gp_profile_server_stop(gp_profile_server *s)
{
    if (!s)
        return;
    gp__mutex_lock(&s->lock);
    s->stopping = true;
    pthread_cond_broadcast(&s->turn);
    gp__mutex_unlock(&s->lock);
    gp__http_stop(s->http);
    pthread_cond_destroy(&s->turn);
    gp__mutex_destroy(&s->lock);
    gp__mutex_lock(&s->body_lock);
    for (int json = 0; json < 2; json++)
        body_release(s->bodies[json].body);
    gp__mutex_unlock(&s->body_lock);
    gp__mutex_destroy(&s->body_lock);
    gp__headlines_free(s->heads);
    free(s);
}
