/* gpuprof top: the live terminal view. The monitor samples and detects (src/produce/monitor), the
 * data side gathers a frame (top_frame.c), the renderer lays it out (src/render/top_*.c) and the
 * terminal shows it (ncurses) or --once prints it as text. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "app/cli/cli.h"
#include "app/cli/top_frame.h"
#include "core/parse.h"
#include "render/top.h"

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: gpuprof top [options]\n"
            "\n"
            "The live view of every NVIDIA GPU and every process on it: per GPU utilisation,\n"
            "memory, temperature, power, clocks, PCIe, fan and throttle reasons with history\n"
            "graphs; the processes (pid, user, GPU, type, GPU memory, SM%%, host CPU%% and RSS,\n"
            "command); the monitor's events (alerts, leak trend, bottleneck, XID, throttling,\n"
            "a lost GPU). Figures a GPU does not report show as n/a, never 0.\n"
            "\n"
            "options:\n"
            "  --interval DUR    refresh and sampling interval: 500ms, 1s, 2s (default 1s)\n"
            "  --config FILE     the monitor's YAML configuration (docs/monitor.md)\n"
            "  --set KEY=VALUE   set any monitor configuration key (after --config)\n"
            "  --gpus LIST       show only these NVML indices: 0,3 (default: all)\n"
            "  --once            print one frame as text on stdout and exit (scripts, CI)\n"
            "  --size WxH        the frame size of --once (default: the terminal's, else 80x24)\n"
            "  --mono            no colours (bold and reverse only)\n"
            "  -h, --help        this text\n"
            "\n"
            "keys: up/down or j/k select, PgUp/PgDn, s or F6 sort by the next column, S reverse,\n"
            "/ filter by text, g show one GPU (again: the next; after the last: all), space\n"
            "pause, h or F1 help, q quit. Without an NVIDIA driver it prints one line and\n"
            "exits with code 2.\n");
}

enum { OPT_INTERVAL = GP__CLI_ID_OWN, OPT_GPUS, OPT_ONCE, OPT_SIZE, OPT_MONO };

static const gp__cli_opt top_opts[] = {GP__CLI_OPT_CONFIG,
                                       GP__CLI_OPT_SET,
                                       GP__CLI_OPT_HELP,
                                       GP__CLI_ARG("interval", OPT_INTERVAL),
                                       GP__CLI_ARG("gpus", OPT_GPUS),
                                       GP__CLI_FLAG("once", OPT_ONCE),
                                       GP__CLI_ARG("size", OPT_SIZE),
                                       GP__CLI_FLAG("mono", OPT_MONO),
                                       GP__CLI_END};

typedef struct top_args {
    gp__cli_monitor_cfg mc;
    uint32_t interval_ms;
    uint64_t gpu_mask;
    bool once, mono;
    int w, h; /* --size; 0: the terminal's */
} top_args;

/* "0,3" into a mask of NVML indices below 64; false on anything else. */
static bool parse_gpus(const char *arg, uint64_t *mask)
{
    *mask = 0;
    const char *p = arg;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v > 63)
            return false;
        *mask |= 1ull << v;
        p = end;
        if (*p == ',')
            p++;
        else if (*p)
            return false;
    }
    return *mask != 0;
}

static int take_option(void *ctx, int id, char *arg)
{
    top_args *a = ctx;
    int rc = gp__cli_monitor_option("top", &a->mc, id, arg);
    if (rc >= 0)
        return rc;
    switch (id) {
    case OPT_INTERVAL:
        if (gp__parse_duration_ms(arg, &a->interval_ms) != GP_OK || a->interval_ms < 100) {
            gp__cli_error("top", "--interval '%s': expected e.g. 500ms, 1s (at least 100ms)", arg);
            return 2;
        }
        return 0;
    case OPT_GPUS:
        if (!parse_gpus(arg, &a->gpu_mask)) {
            gp__cli_error("top", "--gpus '%s': expected NVML indices like 0,3", arg);
            return 2;
        }
        return 0;
    case OPT_SIZE:
        if (sscanf(arg, "%dx%d", &a->w, &a->h) != 2 || a->w < 1 || a->h < 1 || a->w > 1000 ||
            a->h > 1000) {
            gp__cli_error("top", "--size '%s': expected WxH, e.g. 80x24", arg);
            return 2;
        }
        return 0;
    case OPT_ONCE:
        a->once = true;
        return 0;
    default: /* OPT_MONO */
        a->mono = true;
        return 0;
    }
}

static int parse_args(int argc, char **argv, top_args *a, gp_monitor_config *cfg)
{
    gp_monitor_config_init(cfg);
    *a = (top_args){.interval_ms = 1000, .gpu_mask = ~0ull};
    static const gp__cli_spec spec = {
        .cmd = "top", .usage = usage, .opts = top_opts, .handle = take_option, .exact = true};
    gp__cli_common o;
    int first;
    int rc = gp__cli_parse_options(&spec, a, argc, argv, &o, &first);
    if (rc >= 0)
        return rc;
    /* top samples at its refresh interval: the graphs show one point per refresh */
    cfg->sampling_interval_ms = a->interval_ms;
    /* per-process SM% (detailed) and PCIe (comprehensive, read by its own thread) are on screen */
    cfg->level = GP_LEVEL_COMPREHENSIVE;
    /* the graphs show GP_TOP_HISTORY points; the leak and bottleneck detectors keep their own
     * windows, so the rings need no more (RSS stays flat however long top runs) */
    cfg->max_samples = GP_TOP_HISTORY;
    if (!gp__cli_monitor_apply("top", &a->mc, cfg))
        return 2;
    if (cfg->mode == GP_MODE_PROFILING) {
        gp__cli_error("top", "mode 'profiling' records a trace: use gpuprof monitor -o FILE");
        return 2;
    }
    if (!a->once && !gp_top_term_available()) {
        gp__cli_error("top", "built without ncurses (Debian: libncurses-dev): only --once works");
        return 2;
    }
    if (!a->once && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
        gp__cli_error("top", "needs a terminal; use --once for one frame as text");
        return 2;
    }
    return -1;
}

/* --once: one sampling round, one frame as text. */
static int print_once(gp__top_data *d, const top_args *a)
{
    if (gp_monitor_sample_now(d->mon, gp_monitor_now()) != GP_OK) {
        gp__cli_error("top", "cannot take a sample");
        return 1;
    }
    int w = a->w, h = a->h;
    struct winsize ws;
    if (!w && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col && ws.ws_row) {
        w = ws.ws_col;
        h = ws.ws_row;
    }
    if (!w) {
        w = 80;
        h = 24;
    }
    gp_top_screen scr;
    if (gp_top_screen_init(&scr, w, h) != GP_OK) {
        gp__cli_error("top", "out of memory");
        return 1;
    }
    gp_top_frame f;
    gp__top_gather(d, &f);
    gp_top_view v;
    gp_top_view_init(&v);
    gp_top_draw(&scr, &f, &v);
    gp_top_screen_write(&scr, stdout);
    gp_top_screen_free(&scr);
    return gp__cli_finish_stdout("top", GP_OK);
}

int gp__cmd_top(int argc, char **argv)
{
    gp_monitor_config cfg;
    top_args a;
    int rc = parse_args(argc, argv, &a, &cfg);
    if (rc >= 0)
        return rc;
    gp_error err = {0};
    gp_monitor *mon = NULL;
    if (gp_monitor_open(&cfg, &mon, &err) != GP_OK) {
        gp__cli_error("top", "%s", err.msg);
        return 2;
    }
    if (gp_monitor_device_count(mon) == 0) {
        gp__cli_error("top", "the NVIDIA driver (%s) reports no GPU",
                      gp_monitor_driver_version(mon));
        gp_monitor_close(mon);
        return 2;
    }
    gp__top_data *d = malloc(sizeof *d);
    if (!d || gp__top_data_init(d, mon, a.gpu_mask, a.interval_ms) != GP_OK) {
        free(d);
        gp_monitor_close(mon);
        gp__cli_error("top", "out of memory");
        return 1;
    }
    gp__cli_catch_stop_signals();
    if (a.once)
        rc = print_once(d, &a);
    else
        rc = gp__top_loop(d, a.mono);
    gp_monitor_close(mon);
    gp__top_data_free(d);
    free(d);
    return rc;
}
