/* gpuprof compile: torch.compile analysis from TORCH_TRACE logs (graph breaks, recompilations,
 * failures, phase times, fusion) and from traces of compiled code (compiled regions, speedup).
 * Reads, analyses, renders: docs/compile.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli/cli.h"
#include "core/atomic_file.h"
#include "gpuprof/compile.h"

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: gpuprof compile [options] [LOG|DIR] [--trace TRACE [--trace TRACE]]\n"
            "\n"
            "torch.compile analysis. LOG is a structured compile log (run with TORCH_TRACE=DIR;\n"
            "plain or .gz), DIR a directory of rank logs: compile ids, graph breaks with their\n"
            "reason, user line and a suggestion, recompilations and why, failures, compile time\n"
            "per phase, cache hits, and per graph the aten ops against the kernels Inductor\n"
            "generated (fusion). torch.export logs are reported as export. With --trace, the\n"
            "compiled regions of a Kineto trace (\"Torch-Compiled Region\"): their CPU time, GPU\n"
            "work sum, kernels and launch overhead against the eager ops, and what each graph\n"
            "break costs at run time (the eager code between two regions; named from the log\n"
            "when one is given); with two traces (eager and compiled, or two modes) the\n"
            "speedup overall and per region (gpuprof diff pairs regions with eager ops).\n"
            "\n"
            "options:\n"
            "      --trace TRACE  a trace of compiled code (twice: base, then current)\n"
            "      --html FILE    also write the self-contained HTML report\n"
            "      --title TEXT   title of the HTML report\n"
            "      --json         JSON output (schema gpuprof.compile/1, docs/compile.md)\n"
            "  -n, --top N        rows per list in text (default 20; 0 = all)\n"
            "  -q, --quiet        no warnings about the input on stderr\n"
            "      --progress     show read progress on stderr even when it is not a terminal\n"
            "  -h, --help         this help\n"
            "\n"
            "exit status: 0 success, 2 usage or input error\n");
}

enum { OPT_TRACE = GP__CLI_ID_OWN, OPT_HTML };

static const gp__cli_opt compile_opts[] = {GP__CLI_ARG("trace", OPT_TRACE),
                                           GP__CLI_ARG("html", OPT_HTML),
                                           GP__CLI_OPT_TITLE,
                                           GP__CLI_OPT_JSON,
                                           GP__CLI_OPT_TOP,
                                           GP__CLI_OPT_QUIET,
                                           GP__CLI_OPT_PROGRESS,
                                           GP__CLI_OPT_HELP,
                                           GP__CLI_END};

typedef struct compile_args {
    const char *traces[2];
    size_t n_traces;
    const char *html;
} compile_args;

static int take_option(void *ctx, int id, char *arg)
{
    compile_args *a = ctx;
    if (id == OPT_HTML) {
        a->html = arg;
        return 0;
    }
    if (a->n_traces == 2) { /* OPT_TRACE */
        gp__cli_error("compile", "--trace is given at most twice (base and current)");
        return 2;
    }
    a->traces[a->n_traces++] = arg;
    return 0;
}

/* Prints the reader's warnings (at most 20, then how many more). */
static void warn_log(const gp_compile_log *log, bool quiet)
{
    if (quiet)
        return;
    size_t n = log->n_warnings < 20 ? log->n_warnings : 20;
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "gpuprof compile: warning: %s\n", log->warnings[i]);
    if (log->warnings_total > n)
        fprintf(stderr, "gpuprof compile: warning: %llu more warnings (see --json)\n",
                (unsigned long long)(log->warnings_total - n));
}

typedef struct run {
    gp_compile_log *log;
    gp_compile_analysis *an;
    gp_trace *traces[2];
    gp_compile_trace *ct[2];
    gp_compile_speedup *sp;
} run;

static void run_free(run *r)
{
    gp_compile_speedup_free(r->sp);
    for (int i = 0; i < 2; i++) {
        gp_compile_trace_free(r->ct[i]);
        gp_trace_free(r->traces[i]);
    }
    gp_compile_analysis_free(r->an);
    gp_compile_log_free(r->log);
}

/* The exit code of a failed read: an input over a reader's limit (a line or an element too long,
 * a gzip bomb) is an input error like a malformed one, 2 (issue 38 defect 6). */
static int read_exit_code(gp_status st)
{
    return st == GP_ELIMIT ? 2 : gp_status_exit_code(st);
}

/* Reads and analyses everything asked for; the exit code on failure, else -1. */
static int load(run *r, const char *log_path, const compile_args *a, const gp__cli_common *o)
{
    gp_error err = {0};
    if (log_path) {
        gp_compile_read_opts ro = {.progress = o->progress ? gp__cli_progress : NULL,
                                   .progress_ctx = (void *)log_path};
        gp_status st = gp_compile_log_read(log_path, &ro, &r->log, &err);
        if (st != GP_OK) {
            gp__cli_error("compile", "%s", err.msg);
            return read_exit_code(st);
        }
        warn_log(r->log, o->quiet);
        if (gp_compile_analyze(r->log, &r->an) != GP_OK) {
            gp__cli_error("compile", "out of memory");
            return 1;
        }
    }
    gp_read_opts rd;
    gp__cli_read_opts(o, &rd);
    for (size_t i = 0; i < a->n_traces; i++) {
        rd.progress = o->progress ? gp__cli_progress : NULL;
        rd.progress_ctx = (void *)a->traces[i];
        gp_status st = gp_trace_read(a->traces[i], &rd, &r->traces[i], &err);
        if (st != GP_OK) {
            gp__cli_error("compile", "%s", err.msg);
            return read_exit_code(st);
        }
        if (gp_compile_trace_analyze(r->traces[i], &r->ct[i]) != GP_OK) {
            gp__cli_error("compile", "out of memory");
            return 1;
        }
        if (r->log) /* the gaps between regions that are graph breaks the log names */
            gp_compile_trace_link(r->ct[i], r->log, r->an);
    }
    if (a->n_traces == 2 && gp_compile_speedup_compute(r->ct[0], r->ct[1], &r->sp) != GP_OK) {
        gp__cli_error("compile", "out of memory");
        return 1;
    }
    return -1;
}

static int write_html(const gp_compile_report *rep, const char *path)
{
    gp_error err = {0};
    gp__afile f;
    gp_status st = gp__afile_open(&f, path, &err);
    if (st == GP_OK) {
        st = gp_compile_render_html(rep, f.fp, &err);
        if (st != GP_OK)
            gp__afile_abort(&f);
        else
            st = gp__afile_commit(&f, &err);
    }
    int rc = 0;
    return gp__cli_file_written("compile", st, &err, &rc) ? 0 : rc;
}

int gp__cmd_compile(int argc, char **argv)
{
    compile_args a = {.n_traces = 0};
    gp__cli_common o;
    int first;
    static const gp__cli_spec spec = {.cmd = "compile",
                                      .usage = usage,
                                      .opts = compile_opts,
                                      .handle = take_option,
                                      .top_min = 0,
                                      .top_max = 1000000};
    int rc = gp__cli_parse_options(&spec, &a, argc, argv, &o, &first);
    if (rc >= 0)
        return rc;
    if (argc - first > 1) {
        gp__cli_error("compile", "give one log or directory of rank logs");
        usage(stderr);
        return 2;
    }
    if (first == argc && a.n_traces == 0) {
        gp__cli_error("compile", "no input (give a TORCH_TRACE log or directory, or --trace)");
        usage(stderr);
        return 2;
    }
    run r = {0};
    rc = load(&r, first < argc ? argv[first] : NULL, &a, &o);
    if (rc < 0) {
        const gp_compile_trace *ct[2] = {r.ct[0], r.ct[1]};
        /* the page names its log (or its trace) unless --title says otherwise */
        char title[600];
        snprintf(title, sizeof title, "%s: torch.compile",
                 first < argc ? argv[first]
                 : a.n_traces ? a.traces[0]
                              : "gpuprof compile");
        gp_compile_report rep = {r.log,
                                 r.an,
                                 ct,
                                 a.n_traces,
                                 r.sp,
                                 o.top_given ? (size_t)o.top : 20,
                                 o.title ? o.title : title,
                                 NULL};
        rc = a.html ? write_html(&rep, a.html) : 0;
        if (rc == 0) {
            gp_status st = o.json ? gp_compile_render_json(&rep, stdout)
                                  : gp_compile_render_text(&rep, stdout);
            rc = gp__cli_finish_stdout("compile", st);
        }
    }
    run_free(&r);
    return rc;
}
