/* gpuprof profile: runs an unmodified Python program under torch.profiler (the bootstrap
 * python/gpuprof/_profile_boot.py, embedded at build time), one gzip trace per rank into DIR, then
 * prints the summary and the top findings of DIR and writes DIR/report.html. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app/cli/cli.h"

extern const char gp__asset_profile_boot_py[];

static void usage(FILE *fp)
{
    fprintf(
        fp,
        "usage: gpuprof profile [options] -- python SCRIPT [ARGS...]\n"
        "       gpuprof profile [options] -- python -m MODULE [ARGS...]\n"
        "\n"
        "Runs an unmodified Python program under torch.profiler and reports on it: a\n"
        "bootstrap shipped with gpuprof sets up the profiler, runs the script (runpy) and\n"
        "steps the profiler's schedule on each optimizer step (torch.optim.Optimizer.step)\n"
        "or, once the program calls it, on each gpuprof.step(). Each rank (RANK) writes\n"
        "DIR/rank<RANK>.pt.trace.json.gz; then gpuprof (rank 0; other ranks print where\n"
        "their trace went) prints the summary and the top findings of DIR and writes\n"
        "DIR/report.html. With Kineto (torch 2.x) the schedule is torch.profiler.schedule;\n"
        "without it (e.g. Debian's python3-torch 1.13) the legacy\n"
        "autograd profiler is restarted after WAIT+WARMUP steps and stopped after ACTIVE more;\n"
        "a program that ends first is written as recorded (docs/python.md, \"gpuprof\n"
        "profile\"). A SCRIPT.py without an interpreter runs with python3.\n"
        "\n"
        "options:\n"
        "      --steps W,U,A    wait, warm-up and active steps (default 1,1,3)\n"
        "      --record-shapes  record input shapes (FLOPs and bytes in gpuprof ops)\n"
        "      --with-stack     record Python stacks (flame graphs, source lines)\n"
        "      --memory         record allocations (gpuprof memory; Kineto only)\n"
        "  -o, --output DIR     the traces and report.html (default gpuprof_profile)\n"
        "  -q, --quiet          no summary and findings on stdout (report.html is written)\n"
        "  -h, --help           this help\n"
        "\n"
        "exit status: the program's when it fails, else 0 success, 2 usage or input error\n");
}

enum { OPT_STEPS = GP__CLI_ID_OWN, OPT_SHAPES, OPT_STACK, OPT_MEMORY };

static const gp__cli_opt profile_opts[] = {GP__CLI_ARG("steps", OPT_STEPS),
                                           GP__CLI_FLAG("record-shapes", OPT_SHAPES),
                                           GP__CLI_FLAG("with-stack", OPT_STACK),
                                           GP__CLI_FLAG("memory", OPT_MEMORY),
                                           GP__CLI_OPT_OUTPUT,
                                           GP__CLI_OPT_QUIET,
                                           GP__CLI_OPT_HELP,
                                           GP__CLI_END};

typedef struct profile_args {
    char steps[64];
    bool shapes, stack, memory;
} profile_args;

static int take_option(void *ctx, int id, char *arg)
{
    profile_args *a = ctx;
    long v[3];
    int n = 0;
    switch (id) {
    case OPT_STEPS:
        for (char *p = arg; n < 3; n++) {
            char *end;
            errno = 0;
            v[n] = strtol(p, &end, 10);
            if (end == p || errno || v[n] < 0 || v[n] > 1000000 || (*end && *end != ','))
                break;
            p = end + (*end == ',');
            if (!*end) {
                n++;
                break;
            }
        }
        if (n != 3 || v[2] < 1) {
            gp__cli_error("profile",
                          "--steps needs WAIT,WARMUP,ACTIVE (whole numbers, ACTIVE >= "
                          "1), not '%s'",
                          arg);
            return 2;
        }
        snprintf(a->steps, sizeof a->steps, "%ld,%ld,%ld", v[0], v[1], v[2]);
        return 0;
    case OPT_SHAPES:
        a->shapes = true;
        return 0;
    case OPT_STACK:
        a->stack = true;
        return 0;
    default: /* OPT_MEMORY */
        a->memory = true;
        return 0;
    }
}

static bool is_python(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strncmp(base, "python", 6) == 0;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* argv for the child: PYTHON [interpreter options] -c BOOT SCRIPT|-m MODULE ARGS; NULL (after a
 * message) when cmd is not a Python program. The caller frees the array (not its strings). */
static char **child_argv(char **cmd, int n)
{
    char **out = calloc((size_t)n + 4, sizeof *out);
    if (!out)
        return NULL;
    int k = 0, i = 0;
    if (is_python(cmd[0])) {
        out[k++] = cmd[i++];
        while (i < n && cmd[i][0] == '-' && strcmp(cmd[i], "-m") != 0 && strcmp(cmd[i], "-c")) {
            bool takes_value = strcmp(cmd[i], "-X") == 0 || strcmp(cmd[i], "-W") == 0;
            out[k++] = cmd[i++]; /* -u, -O, -X dev, -W error, ... */
            if (takes_value && i < n)
                out[k++] = cmd[i++];
        }
    } else if (ends_with(cmd[0], ".py")) {
        out[k++] = "python3";
    } else {
        gp__cli_error("profile",
                      "'%s' is not a Python program: give -- python SCRIPT [ARGS] "
                      "(a CUDA program: gpuprof trace -- ./app)",
                      cmd[0]);
        free(out);
        return NULL;
    }
    if (i >= n || strcmp(cmd[i], "-c") == 0) {
        gp__cli_error("profile",
                      "no script after %s: give -- python SCRIPT [ARGS] or "
                      "-- python -m MODULE [ARGS]",
                      cmd[0]);
        free(out);
        return NULL;
    }
    out[k++] = "-c";
    out[k++] = (char *)gp__asset_profile_boot_py;
    while (i < n)
        out[k++] = cmd[i++];
    out[k] = NULL;
    return out;
}

/* The rank of this process as the bootstrap names its trace: RANK, else LOCAL_RANK, else 0. */
static long this_rank(void)
{
    const char *r = getenv("RANK");
    if (!r || !*r)
        r = getenv("LOCAL_RANK");
    return r && *r ? strtol(r, NULL, 10) : 0;
}

/* Creates DIR and removes the trace an earlier run of this rank left there
 * (DIR/rank<RANK>.pt.trace.json.gz), so that a failed run is not reported from an old trace. Other
 * ranks' files are theirs (each worker of a job may run under gpuprof profile). false after a
 * message. */
static bool prepare_dir(const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        gp__cli_error("profile", "%s: cannot create: %s", dir, strerror(errno));
        return false;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/rank%ld.pt.trace.json.gz", dir, this_rank());
    if (unlink(path) != 0 && errno != ENOENT) {
        gp__cli_error("profile", "%s: cannot remove the earlier trace: %s", path, strerror(errno));
        return false;
    }
    return true;
}

/* Runs argv with the bootstrap's settings in its environment; the program's exit code (128+N
 * after signal N), or -1 when it could not start. */
static int run_child(char **argv, const char *dir, const profile_args *a)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        gp__cli_error("profile", "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        setenv("GPUPROF_PROFILE_DIR", dir, 1);
        setenv("GPUPROF_PROFILE_STEPS", a->steps, 1);
        setenv("GPUPROF_PROFILE_SHAPES", a->shapes ? "1" : "0", 1);
        setenv("GPUPROF_PROFILE_STACK", a->stack ? "1" : "0", 1);
        setenv("GPUPROF_PROFILE_MEMORY", a->memory ? "1" : "0", 1);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        execvp(argv[0], argv);
        fprintf(stderr, "gpuprof profile: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

/* The summary, the findings and report.html of dir, by the commands that give them. */
static int report(const char *dir, bool quiet)
{
    char html[4096];
    snprintf(html, sizeof html, "%s/report.html", dir);
    char *sum[] = {"summary", "-q", "--top", "10", (char *)dir, NULL};
    char *find[] = {"analyze", "-q", "--table", "findings", (char *)dir, NULL};
    char *rep[] = {"report", "-q", (char *)dir, "-o", html, NULL};
    int rc = quiet ? 0 : gp__cmd_summary(5, sum);
    if (rc == 0 && !quiet)
        rc = gp__cmd_analyze(5, find);
    if (rc == 0) {
        fflush(stdout);
        rc = gp__cmd_report(5, rep);
    }
    return rc;
}

int gp__cmd_profile(int argc, char **argv)
{
    profile_args a = {.steps = "1,1,3"};
    static const gp__cli_spec spec = {.cmd = "profile",
                                      .usage = usage,
                                      .opts = profile_opts,
                                      .handle = take_option,
                                      .exact = true,
                                      .stop_at_operand = true};
    gp__cli_common c;
    int first;
    int rc = gp__cli_parse_options(&spec, &a, argc, argv, &c, &first);
    if (rc >= 0)
        return rc;
    if (first >= argc) {
        gp__cli_error("profile", "no program: gpuprof profile [options] -- python SCRIPT [ARGS]");
        return 2;
    }
    const char *dir = c.output ? c.output : "gpuprof_profile";
    char **cargv = child_argv(argv + first, argc - first);
    if (!cargv)
        return 2;
    if (!prepare_dir(dir)) {
        free(cargv);
        return 2;
    }
    int prc = run_child(cargv, dir, &a);
    free(cargv);
    if (prc < 0 || prc == 127)
        return 2;
    if (prc != 0)
        fprintf(stderr, "gpuprof profile: the program exited with status %d\n", prc);
    struct stat st;
    char trace[4096];
    snprintf(trace, sizeof trace, "%s/rank%ld.pt.trace.json.gz", dir, this_rank());
    if (stat(trace, &st) != 0) {
        gp__cli_error("profile", "%s: no trace was written", trace);
        return prc ? prc : 2;
    }
    if (this_rank() != 0) { /* a worker of a job: rank 0 reports */
        printf("wrote %s\n", trace);
        return prc ? prc : gp__cli_finish_stdout("profile", GP_OK);
    }
    rc = report(dir, c.quiet);
    return prc ? prc : rc;
}
