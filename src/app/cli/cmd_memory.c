/* gpuprof memory: the memory timeline per device and allocator of a trace or job, the peak with
 * what was live at it, allocation and free rates; text, JSON or a page (analyze/memory_timeline.h,
 * render/memory_render.h). */
#include <stdio.h>
#include <stdlib.h>

#include "analyze/memory_timeline.h"
#include "app/cli/cli.h"
#include "render/render_internal.h"
#include "render/memory_render.h"

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: gpuprof memory [options] TRACE|DIR [-o memory.html | --json]\n"
            "\n"
            "The memory timeline of a trace recorded with profile_memory=True (its \"[memory]\"\n"
            "events), per rank, device and allocator (CPU, CUDA:0, ...): the peak allocated and\n"
            "reserved, when it was reached and the op and Python line running then; what was live\n"
            "at the peak, grouped by the op that allocated it and its Python line (with\n"
            "with_stack=True; the innermost frame outside torch's own files), and what was\n"
            "allocated before the trace began; allocations and frees with their rates; the curve.\n"
            "Prints a text report; --json gives every figure and the curves (ns, bytes); -o\n"
            "writes the curves as a self-contained page (the JSON with --json).\n"
            "\n"
            "options:\n"
            "  -o, --output FILE   write the page (memory.html), or the JSON with --json\n"
            "      --title TEXT    page title (default: the input's name)\n"
            "      --json          every figure and the curves as JSON\n"
            "  -n, --top N         groups of live blocks in the text report (default 10, 0: all)\n"
            "  -q, --quiet         no warnings about suspect input on stderr\n"
            "      --progress      show read progress on stderr even when not a terminal\n"
            "  -h, --help          this help\n"
            "\n"
            "exit status: 0 success (also without memory events: the report says so), 2 usage or\n"
            "input error\n");
}

static const gp__cli_opt memory_opts[] = {
    GP__CLI_OPT_OUTPUT, GP__CLI_OPT_TITLE,    GP__CLI_OPT_JSON, GP__CLI_OPT_TOP,
    GP__CLI_OPT_QUIET,  GP__CLI_OPT_PROGRESS, GP__CLI_OPT_HELP, GP__CLI_END};

/* The memory page of a gp__cli_page over a gp__mem_timeline. */
static gp_status write_page(const void *ctx, FILE *fp)
{
    const gp__cli_page *p = ctx;
    return gp__mem_render_html(p->data, p->title, fp);
}

/* The memory JSON of a gp__cli_page over a gp__mem_timeline. */
static gp_status write_json(const void *ctx, FILE *fp)
{
    const gp__cli_page *p = ctx;
    return gp__mem_render_json(p->data, fp);
}

/* Renders m as o asks; the exit code. */
static int output(const gp__mem_timeline *m, const gp__cli_common *o, const char *in)
{
    if (o->output) {
        gp__cli_page p = {m, o->title ? o->title : in};
        return gp__cli_write_file("memory", o->output, o->json ? write_json : write_page, &p,
                                  o->json ? "" : ": open it in a browser");
    }
    gp_status st = o->json ? gp__mem_render_json(m, stdout)
                           : gp__mem_render_text(m, o->top_given ? (size_t)o->top : 10, stdout);
    return gp__cli_finish_stdout("memory", st);
}

int gp__cmd_memory(int argc, char **argv)
{
    static const gp__cli_spec spec = {
        .cmd = "memory", .usage = usage, .opts = memory_opts, .top_min = 0, .top_max = 100000};
    gp__cli_common o;
    const char *in;
    gp_job *job = NULL;
    gp__mem_timeline m = {0};
    int rc = gp__cli_read_one_job(&spec, argc, argv, false, &o, &in, &job);
    if (rc >= 0)
        goto done;
    gp_status st = gp__mem_timeline_build(gp_job_traces(job), job->n_ranks, 0, 0, &m);
    if (st != GP_OK) {
        gp__cli_error("memory", "%s: %s", in, gp_strerror(st));
        rc = gp_status_exit_code(st);
        goto done;
    }
    rc = output(&m, &o, in);
done:
    gp__mem_timeline_free(&m);
    gp_job_free(job);
    return rc;
}
