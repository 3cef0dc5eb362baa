/* gpuprof serve --dir DIR: the profile server (dashboards, timelines, summary and analysis JSON of
 * a directory of profiles) until SIGINT or SIGTERM. */
#include <stdio.h>
#include <string.h>

#include "app/cli/cli.h"
#include "gpuprof/serve.h"

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: gpuprof serve --dir DIR [--listen HOST:PORT] [--port-file FILE]\n"
            "\n"
            "Serves a directory of profiles and traces (*.json, *.json.gz; subdirectories are\n"
            "jobs, one trace per rank) over HTTP until interrupted:\n"
            "  /                             index of the profiles, with links\n"
            "  /report/NAME                  the dashboard (as gpuprof report writes it)\n"
            "  /timeline/NAME                the timeline (as gpuprof timeline writes it)\n"
            "  /api/profiler/profiles        the listing as JSON\n"
            "  /api/profiler/summary/NAME    gpuprof summary --json of NAME\n"
            "  /api/profiler/analysis/NAME   gpuprof analyze --json of NAME\n"
            "  /healthz                      {\"status\":\"ok\"}\n"
            "Each request reads the profile again, so new or replaced files show at once.\n"
            "\n"
            "options:\n"
            "  --dir DIR           the directory to serve (required)\n"
            "  --listen HOST:PORT  address to bind (default 127.0.0.1:8600; port 0 = any free)\n"
            "  --port-file FILE    write the bound port to FILE once listening\n"
            "  -h, --help          this text\n"
            "\n"
            "exit status: 0 after SIGINT/SIGTERM, 2 usage error or no such directory,\n"
            "1 cannot listen\n");
}

enum { OPT_DIR = GP__CLI_ID_OWN, OPT_LISTEN, OPT_PORT_FILE };

static const gp__cli_opt serve_opts[] = {GP__CLI_OPT_HELP, GP__CLI_ARG("dir", OPT_DIR),
                                         GP__CLI_ARG("listen", OPT_LISTEN),
                                         GP__CLI_ARG("port-file", OPT_PORT_FILE), GP__CLI_END};

typedef struct serve_args {
    gp_profile_server_opts opts;
    const char *port_file;
} serve_args;

static int take_option(void *ctx, int id, char *arg)
{
    serve_args *a = ctx;
    if (id == OPT_DIR)
        a->opts.dir = arg;
    else if (id == OPT_LISTEN)
        a->opts.listen = arg;
    else
        a->port_file = arg;
    return 0;
}

int gp__cmd_serve(int argc, char **argv)
{
    serve_args a = {{NULL, "127.0.0.1:8600"}, NULL};
    static const gp__cli_spec spec = {
        .cmd = "serve", .usage = usage, .opts = serve_opts, .handle = take_option, .exact = true};
    gp__cli_common o;
    int first;
    int rc = gp__cli_parse_options(&spec, &a, argc, argv, &o, &first);
    if (rc >= 0)
        return rc;
    const gp_profile_server_opts opts = a.opts;
    const char *port_file = a.port_file;
    if (!opts.dir) {
        gp__cli_error("serve", "no directory (--dir DIR)");
        usage(stderr);
        return 2;
    }
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
    gp_profile_server_stop(srv);
    return rc;
}
