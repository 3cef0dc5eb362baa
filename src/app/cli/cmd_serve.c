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

int gp__cmd_serve(int argc, char **argv)
{
    gp_profile_server_opts opts = {NULL, "127.0.0.1:8600"};
    const char *port_file = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_next = i + 1 < argc;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--dir") == 0 && has_next) {
            opts.dir = argv[++i];
        } else if (strcmp(a, "--listen") == 0 && has_next) {
            opts.listen = argv[++i];
        } else if (strcmp(a, "--port-file") == 0 && has_next) {
            port_file = argv[++i];
        } else {
            gp__cli_error("serve", "unknown or incomplete option '%s' (see --help)", a);
            return 2;
        }
    }
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
    int rc = 0;
    if (port_file && !gp__cli_write_port_file("serve", port_file, gp_profile_server_port(srv))) {
        gp__cli_request_stop();
        rc = 1;
    }
    gp__cli_wait_for_stop();
    gp_profile_server_stop(srv);
    return rc;
}
