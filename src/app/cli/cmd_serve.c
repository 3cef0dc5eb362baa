/* gpuprof serve --dir DIR: the profile server (dashboards, timelines, summary and analysis JSON of
 * a directory of profiles) until SIGINT or SIGTERM. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "app/cli/cli.h"
#include "core/parse.h"
#include "gpuprof/serve.h"

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: gpuprof serve --dir DIR [--listen HOST:PORT] [--port-file FILE]\n"
            "                     [--follow-symlinks] [--analyses N] [--max-input-mib N]\n"
            "\n"
            "Serves a directory of profiles and traces (*.json, *.json.gz; a folder of rank\n"
            "traces is a job, and so is each such folder one level further down) and of\n"
            "torch.compile logs (TORCH_TRACE: a *.log[.gz] file, or a folder of rank logs) over\n"
            "HTTP until interrupted:\n"
            "  /                                index of the profiles, with links\n"
            "  /report/NAME                     the dashboard (as gpuprof report writes it)\n"
            "  /timeline/NAME                   the timeline (as gpuprof timeline writes it)\n"
            "  /flame/NAME[?weight=cpu|gpu]     the flame graph (as gpuprof flame -o x.html)\n"
            "                                   (&by=module: frames by nn.Module, as --by module)\n"
            "  /diff?base=NAME&current=NAME     the comparison page (gpuprof diff --html)\n"
            "  /compile/NAME                    gpuprof compile NAME --html (a compile log;\n"
            "                                   a trace: --trace NAME, its compiled regions)\n"
            "  /api/profiler/profiles           the listing as JSON\n"
            "  /api/profiler/summary/NAME       gpuprof summary --json of NAME\n"
            "  /api/profiler/kernels/NAME       gpuprof ops --json --by kernel\n"
            "  /api/profiler/ops/NAME[?by=B]    gpuprof ops --json [--by B]\n"
            "  /api/profiler/analysis/NAME      gpuprof analyze --json\n"
            "  /api/profiler/memory/NAME        its memory and peak_memory tables\n"
            "  /api/profiler/hta/NAME           gpuprof analyze --json --hta, HTA's tables\n"
            "  /api/profiler/flame/NAME         the flame graph as speedscope JSON (?by=module,\n"
            "                                   ?weight=cpu|gpu)\n"
            "  /api/profiler/timeline/NAME      the timeline's data\n"
            "  /api/profiler/diff?base=&current=  gpuprof diff --json\n"
            "  /api/profiler/compile/NAME       gpuprof compile NAME --json (a trace: --trace)\n"
            "  /healthz                         {\"status\":\"ok\"}\n"
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
    OPT_MAX_INPUT
};

static const gp__cli_opt serve_opts[] = {GP__CLI_OPT_HELP,
                                         GP__CLI_ARG("dir", OPT_DIR),
                                         GP__CLI_ARG("listen", OPT_LISTEN),
                                         GP__CLI_ARG("port-file", OPT_PORT_FILE),
                                         GP__CLI_FLAG("follow-symlinks", OPT_FOLLOW),
                                         GP__CLI_ARG("analyses", OPT_ANALYSES),
                                         GP__CLI_ARG("max-input-mib", OPT_MAX_INPUT),
                                         GP__CLI_END};

typedef struct serve_args {
    gp_profile_server_opts opts;
    const char *port_file;
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
    stop_within(srv);
    return rc;
}
