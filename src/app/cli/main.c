/* gpuprof: dispatch to subcommands. */
#include <stdarg.h>
#include <signal.h>
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app/cli/cli.h"
#include "core/atomic_file.h"
#include "core/json_writer.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"summary", gp__cmd_summary, "per-kernel / per-op statistics and top-N bottlenecks"},
    {"analyze", gp__cmd_analyze, "HTA-style analyses, bottlenecks and suggestions"},
    {"hta", gp__cmd_hta, "HTA's breakdowns (analyze --hta) as a page or JSON"},
    {"merge", gp__cmd_merge, "the job's analysis from partial results (analyze --partial)"},
    {"ops", gp__cmd_ops, "GPU work per launching op, module or line; per-op roofline"},
    {"flame", gp__cmd_flame, "flame graph (html, svg, folded, speedscope)"},
    {"timeline", gp__cmd_timeline, "interactive CPU/GPU timeline (html)"},
    {"report", gp__cmd_report, "one-page dashboard (html)"},
    {"memory", gp__cmd_memory, "memory timeline per device, the peak and what was live at it"},
    {"diff", gp__cmd_diff, "compare two runs; gate CI on significant regressions"},
    {"advise", gp__cmd_advise, "optimisation suggestions for a profile or trace"},
    {"profile", gp__cmd_profile, "run a Python program under torch.profiler, then report"},
    {"trace", gp__cmd_trace, "trace an unmodified CUDA program through CUPTI"},
    {"monitor", gp__cmd_monitor, "live GPU monitor with alerts and detectors (NVML)"},
    {"top", gp__cmd_top, "live terminal view of every GPU and process (NVML, ncurses)"},
    {"exporter", gp__cmd_exporter, "Prometheus exporter for GPU metrics"},
    {"serve", gp__cmd_serve, "serve a directory of profiles: dashboards, timelines, JSON API"},
    {"convert", gp__cmd_convert, "re-write a trace as Kineto-compatible Chrome JSON"},
    {"compile", gp__cmd_compile, "torch.compile: graph breaks, recompiles, fusion (TORCH_TRACE)"},
};

static void usage(FILE *fp)
{
    fprintf(fp, "usage: gpuprof <command> [options] [args]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(fp, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(fp, "\n'gpuprof <command> --help' describes a command's options.\n"
                "'gpuprof --version' prints the version.\n"
                "Exit codes: 0 success, 1 a verdict failed, 2 usage or input error.\n");
}

void gp__cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "gpuprof %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void gp__cli_warn_read(const gp_job *job, bool ranks_note, bool quiet)
{
    if (quiet || !job)
        return;
    for (size_t i = 0; i < job->n_ranks; i++) {
        const gp_trace *t = job->ranks[i];
        const gp_read_stats *s = &t->stats;
        const struct {
            uint64_t n;
            const char *what;
        } notes[] = {
            {s->negative_dur, "negative durations (clamped to 0)"},
            {s->absurd_dur, "durations over 7 days (dropped as corrupt)"},
            {s->no_dur, "complete events without \"dur\" (kept with 0)"},
            {s->unknown_cat, "events of unknown category (kept as \"other\")"},
            {s->quoted_times, "events with a time written as a string (\"ts\":\"123\"), read "
                              "as a number"},
        };
        for (size_t k = 0; k < sizeof notes / sizeof notes[0]; k++)
            if (notes[k].n)
                fprintf(stderr, "gpuprof: %s: warning: %llu %s\n", gp_trace_str(t, t->source),
                        (unsigned long long)notes[k].n, notes[k].what);
        if (s->bom)
            fprintf(stderr, "gpuprof: %s: warning: starts with a UTF-8 byte order mark (skipped)\n",
                    gp_trace_str(t, t->source));
        if (s->gzip_trailing_bytes)
            fprintf(stderr,
                    "gpuprof: %s: warning: %llu bytes after the end of the gzip data (from byte "
                    "%llu of the compressed file) ignored\n",
                    gp_trace_str(t, t->source), (unsigned long long)s->gzip_trailing_bytes,
                    (unsigned long long)s->gzip_trailing_at);
    }
    if (ranks_note && job->ranks_from_file_order && job->n_ranks > 1)
        fprintf(stderr, "gpuprof: note: some traces have no (or a duplicate) distributedInfo.rank; "
                        "they were numbered in file-name order\n");
}

int gp__cli_finish_stdout(const char *cmd, gp_status st)
{
    /* why a write failed (ENOSPC: "No space left on device", not "input/output error"): the
     * failed flush's errno, else a JSON writer's failed write, else a retried flush's */
    int e = 0, before = errno; /* a renderer's failed fprintf leaves its errno */
    errno = 0;
    if (st == GP_OK && (fflush(stdout) != 0 || ferror(stdout))) {
        st = GP_EIO;
        e = errno;
    }
    if (st == GP_EIO && !e) {
        e = gp__jw_last_write_errno();
        errno = 0;
        if (!e && fflush(stdout) != 0)
            e = errno;
        if (!e && (before == ENOSPC || before == EDQUOT || before == EFBIG || before == EPIPE))
            e = before; /* only errnos a write gives: an older one could be anything's */
    }
    if (e)
        gp__cli_error(cmd, "writing the output failed: standard output: %s", strerror(e));
    else if (st != GP_OK)
        gp__cli_error(cmd, "writing the output failed: %s", gp_strerror(st));
    return gp_status_exit_code(st);
}

int gp__cli_end_json_line(const char *cmd, gp__jw *w)
{
    gp__jw_obj_end(w);
    gp_status st = gp__jw_finish(w);
    putchar('\n');
    return gp__cli_finish_stdout(cmd, st);
}

bool gp__cli_file_written(const char *cmd, gp_status s, const gp_error *err, int *rc)
{
    if (s == GP_OK)
        return true;
    fprintf(stderr, "gpuprof %s: %s\n", cmd, err->msg);
    *rc = gp_status_exit_code(err->status ? err->status : GP_EIO);
    return false;
}

gp_status gp__cli_read_job(const char *cmd, const char *path, gp_read_opts *rd, bool progress,
                           bool ranks_note, gp_job **out)
{
    gp_error err = {0};
    rd->progress = progress ? gp__cli_progress : NULL;
    rd->progress_ctx = (void *)path;
    gp_status s = gp_job_read(path, rd, out, &err);
    if (s != GP_OK) {
        fprintf(stderr, "gpuprof %s: %s\n", cmd, err.msg);
        return s;
    }
    gp__cli_warn_read(*out, ranks_note, rd->quiet);
    return GP_OK;
}

gp_status gp__cli_read_inputs(const char *cmd, char *const *paths, int n, gp_read_opts *rd,
                              bool progress, gp__cli_inputs *in)
{
    *in = (gp__cli_inputs){0};
    in->jobs = calloc(n > 0 ? (size_t)n : 1, sizeof *in->jobs);
    if (!in->jobs)
        return GP_ENOMEM;
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        gp_status st = gp__cli_read_job(cmd, paths[i], rd, progress, true, &in->jobs[in->n_jobs]);
        if (st != GP_OK)
            return st;
        total += in->jobs[in->n_jobs++]->n_ranks;
    }
    in->traces = calloc(total ? total : 1, sizeof *in->traces);
    if (!in->traces)
        return GP_ENOMEM;
    for (size_t j = 0; j < in->n_jobs; j++)
        for (size_t r = 0; r < in->jobs[j]->n_ranks; r++)
            in->traces[in->n_traces++] = in->jobs[j]->ranks[r];
    return GP_OK;
}

void gp__cli_inputs_free(gp__cli_inputs *in)
{
    free(in->traces);
    for (size_t j = 0; j < in->n_jobs; j++)
        gp_job_free(in->jobs[j]);
    free(in->jobs);
    *in = (gp__cli_inputs){0};
}

bool gp__cli_one_input_to_file(const char *cmd, int n_inputs, const char *out, const char *example,
                               void (*print_usage)(FILE *))
{
    if (n_inputs != 1) {
        gp__cli_error(cmd, "give one input (a trace, a profile or a job directory)");
        print_usage(stderr);
        return false;
    }
    if (!out) {
        gp__cli_error(cmd, "no output file (-o %s)", example);
        return false;
    }
    return true;
}

static volatile sig_atomic_t stop_flag;

static void on_stop_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

void gp__cli_catch_stop_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

bool gp__cli_stopping(void)
{
    return stop_flag != 0;
}

void gp__cli_request_stop(void)
{
    stop_flag = 1;
}

void gp__cli_wait_for_stop(void)
{
    while (!stop_flag) {
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

bool gp__cli_write_port_file(const char *cmd, const char *path, unsigned port)
{
    char text[16];
    int len = snprintf(text, sizeof text, "%u\n", port);
    gp_error err = {0};
    if (gp__write_file_atomic(path, text, (size_t)len, &err) != GP_OK) {
        gp__cli_error(cmd, "%s", err.msg);
        return false;
    }
    return true;
}

int gp__cli_serve_until_stopped(const char *cmd, const char *port_file, unsigned port)
{
    int rc = 0;
    if (port_file && !gp__cli_write_port_file(cmd, port_file, port)) {
        gp__cli_request_stop();
        rc = 1;
    }
    gp__cli_wait_for_stop();
    return rc;
}

bool gp__cli_stderr_is_tty(void)
{
    return isatty(STDERR_FILENO) == 1;
}

void gp__cli_progress(void *ctx, uint64_t done, uint64_t total)
{
    const char *name = ctx ? (const char *)ctx : "input";
    if (total)
        fprintf(stderr, "\rreading %s: %3llu%% (%llu MiB)", name,
                (unsigned long long)(done * 100 / total), (unsigned long long)(done >> 20));
    else
        fprintf(stderr, "\rreading %s: %llu MiB", name, (unsigned long long)(done >> 20));
    if (total && done >= total)
        fputc('\n', stderr);
    fflush(stderr);
}

/* One glibc malloc arena for the commands (issue 37). The reader's pieces and the rank analyses
 * run on threads, and glibc gives each thread an arena of its own that keeps what the thread freed:
 * the critical path, run after them on the main thread, could not reuse it. On large_v100_nccl x7
 * `analyze` peaked at 145 MB with glibc's arenas and 125 MB with one, with the same time and fewer
 * page faults (docs/performance.md, "Issue #37: peak memory"); the threads allocate big arrays
 * that grow by mremap, outside the arena's lock. GP_ARENA_MAX=N sets another bound (0: glibc's
 * default, for measuring); serve sets its own (cmd_serve.c). */
static void bound_arenas(void)
{
#ifdef __GLIBC__
    const char *env = getenv("GP_ARENA_MAX");
    long n = env && *env ? strtol(env, NULL, 10) : 1;
    if (n > 0)
        mallopt(M_ARENA_MAX, (int)n);
#endif
}

int main(int argc, char **argv)
{
    bound_arenas();
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    gp__afile_cleanup_on_signals(); /* no <out>.tmp.* left behind by ^C, kill or a hangup */
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("gpuprof %s\n", GP_VERSION_STRING);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(name, commands[i].name) == 0) {
            int rc = commands[i].run(argc - 1, argv + 1);
            uint64_t bad = gp__json_utf8_replaced();
            if (bad)
                fprintf(stderr,
                        "gpuprof %s: warning: %llu invalid UTF-8 sequence%s in strings written "
                        "as U+FFFD\n",
                        name, (unsigned long long)bad, bad == 1 ? "" : "s");
            return rc;
        }
    const char *names[sizeof commands / sizeof commands[0]];
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        names[i] = commands[i].name;
    const char *near = gp__cli_suggest(name, names, sizeof names / sizeof names[0]);
    if (near) {
        fprintf(stderr, "gpuprof: unknown command '%s': did you mean `gpuprof %s`?\n", name, near);
        return 2;
    }
    fprintf(stderr, "gpuprof: unknown command '%s'\n\n", name);
    usage(stderr);
    return 2;
}
