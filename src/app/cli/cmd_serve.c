/* gpuprof serve --dir DIR: the profile server (dashboards, timelines, summary and analysis JSON of
 * a directory of profiles) until SIGINT or SIGTERM. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "app/cli/cli.h"
#include "core/parse.h"
#include "core/util.h"
#include "gpuprof/serve.h"
#include "gpuprof/views.h"

/* A route of the registry as a URL: ROUTE + NAME and its query parameters. */
static void route_url(char *buf, size_t cap, const gp_view_info *v)
{
    int n = snprintf(buf, cap, "%sNAME", v->route);
    const char *p = v->params;
    for (bool first = true; *p && n >= 0 && (size_t)n < cap; first = false) {
        size_t k = strcspn(p, ",");
        n += snprintf(buf + n, cap - (size_t)n, "%s%.*s=", first ? "[?" : "&", (int)k, p);
        p += k + (p[k] == ',');
        if (!*p)
            snprintf(buf + n, cap - (size_t)n, "]");
    }
}

/* Words of text on lines of at most 88 columns, each after indent spaces (the first line
 * continuing at column col). */
static void wrap(FILE *fp, const char *text, size_t col, size_t indent)
{
    for (const char *p = text; *p;) {
        size_t k = strcspn(p, " ");
        if (col > indent && col + 1 + k > 88) {
            fprintf(fp, "\n%*s", (int)indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', fp);
            col++;
        }
        fprintf(fp, "%.*s", (int)k, p);
        col += k;
        p += k + (p[k] == ' ');
    }
    fputc('\n', fp);
}

/* The routes of the registry's views (gpuprof/views.h) with the command that gives the same
 * bytes: the help's lines, or (markdown) the rows of docs/reports.md's table. */
static void print_routes(FILE *fp, bool markdown)
{
    for (size_t i = 0; i < gp_view_count(); i++) {
        const gp_view_info *v = gp_view_at(i);
        char url[256];
        route_url(url, sizeof url, v);
        if (markdown) {
            fprintf(fp, "| `%s` | %s", url, v->doc);
            if (v->cli)
                fprintf(fp, "; %s `%s`", v->html ? "the page of" : "byte for byte", v->cli);
            fprintf(fp, "; Python `%s` |\n", v->python);
            continue;
        }
        if (strlen(url) > 32)
            fprintf(fp, "  %s\n%35s", url, "");
        else
            fprintf(fp, "  %-32s ", url);
        wrap(fp, v->cli ? v->cli : v->doc, 35, 35);
    }
}

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: gpuprof serve --dir DIR [--listen HOST:PORT] [--port-file FILE]\n"
            "                     [--follow-symlinks] [--analyses N] [--max-input-mib N]\n"
            "       gpuprof serve --routes\n"
            "\n"
            "Serves a directory of profiles and traces (*.json, *.json.gz; a folder of rank\n"
            "traces is a job, and so is each such folder one level further down) and of\n"
            "torch.compile logs (TORCH_TRACE: a *.log[.gz] file, or a folder of rank logs) over\n"
            "HTTP until interrupted; each view gives the bytes of the command beside it (a page\n"
            "with a bar of links added):\n"
            "  /                                index of the profiles, with links\n"
            "  /diff?base=NAME&current=NAME     the comparison page (gpuprof diff --html)\n"
            "  /api/profiler/profiles           the listing as JSON\n"
            "  /api/profiler/diff?base=&current=  gpuprof diff --json\n"
            "  /healthz                         {\"status\":\"ok\"}\n");
    print_routes(fp, false);
    fprintf(fp,
            "Each request reads the profile again, so new or replaced files show at once.\n"
            "Formats: docs/reports.md. Errors under /api/ are JSON.\n"
            "\n"
            "options:\n"
            "  --dir DIR           the directory to serve (required)\n"
            "  --listen HOST:PORT  address to bind (default 127.0.0.1:8600; port 0 = any free).\n"
            "                      Bind beyond loopback only behind a proxy that authenticates:\n"
            "                      anyone who reaches the port reads every profile in DIR\n"
            "  --port-file FILE    write the bound port to FILE once listening\n"
            "  --follow-symlinks   serve symbolic links that lead out of DIR (default: refused)\n"
            "  --analyses N        profiles read and analysed at once (default 2); more wait\n"
            "                      up to 30 s, then get 503\n"
            "  --max-input-mib N   refuse (413) a profile whose files exceed N MiB (default 4096)\n"
            "  --routes            print the views' routes as rows of docs/reports.md's table\n"
            "  -h, --help          this text\n"
            "\n"
            "exit status: 0 after SIGINT/SIGTERM, 2 usage error or no such directory,\n"
            "1 cannot listen\n");
}

enum {
    OPT_DIR = GP__CLI_ID_OWN,
    OPT_LISTEN,
    OPT_PORT_FILE,
    OPT_FOLLOW,
    OPT_ANALYSES,
    OPT_MAX_INPUT,
    OPT_ROUTES
};

static const gp__cli_opt serve_opts[] = {GP__CLI_OPT_HELP,
                                         GP__CLI_ARG("dir", OPT_DIR),
                                         GP__CLI_ARG("listen", OPT_LISTEN),
                                         GP__CLI_ARG("port-file", OPT_PORT_FILE),
                                         GP__CLI_FLAG("follow-symlinks", OPT_FOLLOW),
                                         GP__CLI_ARG("analyses", OPT_ANALYSES),
                                         GP__CLI_ARG("max-input-mib", OPT_MAX_INPUT),
                                         GP__CLI_FLAG("routes", OPT_ROUTES),
                                         GP__CLI_END};

typedef struct serve_args {
    gp_profile_server_opts opts;
    const char *port_file;
    bool routes;
} serve_args;

static int take_option(void *ctx, int id, char *arg)
{
    serve_args *a = ctx;
    unsigned long long v = 0;
    if (id == OPT_DIR)
        a->opts.dir = arg;
    else if (id == OPT_LISTEN)
        a->opts.listen = arg;
    else if (id == OPT_PORT_FILE)
        a->port_file = arg;
    else if (id == OPT_FOLLOW)
        a->opts.follow_symlinks = true;
    else if (id == OPT_ROUTES)
        a->routes = true;
    else if (!gp__parse_uint(arg, id == OPT_ANALYSES ? 64 : 1ull << 30, &v) || v == 0) {
        gp__cli_error("serve", "--%s '%s': expected a whole number from 1",
                      id == OPT_ANALYSES ? "analyses" : "max-input-mib", arg);
        return 2;
    } else if (id == OPT_ANALYSES)
        a->opts.analyses = (unsigned)v;
    else
        a->opts.max_input_bytes = (uint64_t)v << 20;
    return 0;
}

static atomic_bool stopped;

static void *stop_server(void *srv)
{
    gp_profile_server_stop(srv);
    atomic_store(&stopped, true);
    return NULL;
}

/* Stops the server, waiting at most STOP_WAIT_MS for the requests being answered (a long
 * analysis, or a read that does not return): past that the command exits without them. */
enum { STOP_WAIT_MS = 3000 };
static void stop_within(gp_profile_server *srv)
{
    pthread_t t;
    if (pthread_create(&t, NULL, stop_server, srv) != 0) {
        gp_profile_server_stop(srv);
        return;
    }
    for (int waited = 0; waited < STOP_WAIT_MS && !atomic_load(&stopped); waited += 20)
        usleep(20 * 1000);
    if (atomic_load(&stopped)) {
        pthread_join(t, NULL);
        return;
    }
    pthread_detach(t);
    fprintf(stderr, "gpuprof serve: a request is still running after %d s; exiting without it\n",
            STOP_WAIT_MS / 1000);
}

/* At most SERVE_ARENA_MAX glibc malloc arenas (issue 38): each request runs on its own thread,
 * and glibc gives threads up to 8 arenas per core, each keeping what its requests freed; fewer
 * arenas, with the trim after each analysis (profiles.c), bound the server's RSS under load
 * (docs/internals/serve.md, "Memory under load"). GP_SERVE_ARENA_MAX=N overrides it, 0 leaves
 * glibc's default (for measuring). */
enum { SERVE_ARENA_MAX = 2 };

static void bound_arenas(void)
{
#ifdef __GLIBC__
    const char *env = getenv("GP_SERVE_ARENA_MAX");
    long n = env && *env ? strtol(env, NULL, 10) : SERVE_ARENA_MAX;
    if (n > 0)
        mallopt(M_ARENA_MAX, (int)n);
#endif
}

int gp__cmd_serve(int argc, char **argv)
{
    serve_args a = {.opts = {.listen = "127.0.0.1:8600"}};
    static const gp__cli_spec spec = {
        .cmd = "serve", .usage = usage, .opts = serve_opts, .handle = take_option, .exact = true};
    gp__cli_common o;
    int first;
    int rc = gp__cli_parse_options(&spec, &a, argc, argv, &o, &first);
    if (rc >= 0)
        return rc;
    if (a.routes) {
        print_routes(stdout, true);
        return gp__cli_finish_stdout("serve", GP_OK);
    }
    const gp_profile_server_opts opts = a.opts;
    const char *port_file = a.port_file;
    if (!opts.dir) {
        gp__cli_error("serve", "no directory (--dir DIR)");
        usage(stderr);
        return 2;
    }
    bound_arenas();
    gp_profile_server *srv = NULL;
    gp_error err = {0};
    gp_status st = gp_profile_server_start(&opts, &srv, &err);
    if (st != GP_OK) {
        gp__cli_error("serve", "%s", err.msg);
        return st == GP_EIO ? 1 : 2;
    }
    gp__cli_catch_stop_signals();
    char host[80];
    snprintf(host, sizeof host, "%.*s", (int)(strrchr(opts.listen, ':') - opts.listen),
             opts.listen);
    fprintf(stderr, "gpuprof serve: http://%s:%u/ serving %s\n", host, gp_profile_server_port(srv),
            opts.dir);
    rc = gp__cli_serve_until_stopped("serve", port_file, gp_profile_server_port(srv));
    stop_within(srv);
    return rc;
}
