/* gpuprof hta: Holistic Trace Analysis's analyses (the figures of `gpuprof analyze --hta`) as a
 * page or JSON, under the verb HTA's users type. The JSON is the "hta" view (views.h): the same
 * bytes as `gpuprof analyze --json --hta --table temporal ...` and the server's /api/profiler/hta/.
 */
#include <stdio.h>
#include <stdlib.h>

#include "app/cli/cli.h"
#include "gpuprof/analyze.h"
#include "gpuprof/views.h"
#include "render/hta_render.h"
#include "render/render_internal.h"

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: gpuprof hta [options] TRACE|DIR [-o hta_report.html | --json]\n"
            "\n"
            "HTA's analyses with HTA's definitions and step filter (`gpuprof analyze --hta`):\n"
            "the temporal breakdown (idle, compute, non-compute per rank), the idle-time\n"
            "breakdown per stream, the kernel-type breakdown with overlap, the top kernels per\n"
            "type, communication / computation overlap and queue length. Writes them as a\n"
            "self-contained page (-o, default hta_report.html) or as JSON (--json, on stdout or\n"
            "into the -o file: the tables of `gpuprof analyze --json --hta`). docs/analyses.md\n"
            "compares the figures with HTA's.\n"
            "\n"
            "options:\n"
            "  -o, --output FILE   the page (default hta_report.html), or the JSON with --json\n"
            "      --title TEXT    page title (default: the input's name)\n"
            "      --json          the tables as JSON instead of the page\n"
            "  -q, --quiet         no warnings about suspect input on stderr\n"
            "      --progress      show read progress on stderr even when not a terminal\n"
            "  -h, --help          this help\n"
            "\n"
            "exit status: 0 success, 2 usage or input error\n");
}

static const gp__cli_opt hta_opts[] = {GP__CLI_OPT_OUTPUT, GP__CLI_OPT_TITLE,    GP__CLI_OPT_JSON,
                                       GP__CLI_OPT_QUIET,  GP__CLI_OPT_PROGRESS, GP__CLI_OPT_HELP,
                                       GP__CLI_END};

/* The HTA page of a gp__cli_page over a gp_analysis. */
static gp_status write_page(const void *ctx, FILE *fp)
{
    const gp__cli_page *p = ctx;
    return gp__hta_render_html(p->data, p->title, fp);
}

static gp_status write_view(const void *ctx, FILE *fp)
{
    gp_error err = {0};
    return gp_view_render(gp_view_find("hta"), ctx, NULL, fp, &err);
}

/* The "hta" view's JSON on stdout, or into out (atomically) when given. */
static int print_json(const gp_job *job, const char *out)
{
    if (out)
        return gp__cli_write_file("hta", out, write_view, job, "");
    gp_error err = {0};
    gp_status st = gp_view_render(gp_view_find("hta"), job, NULL, stdout, &err);
    if (st != GP_OK && st != GP_EIO) {
        gp__cli_error("hta", "%s", err.msg[0] ? err.msg : gp_strerror(st));
        return gp_status_exit_code(st);
    }
    return gp__cli_finish_stdout("hta", st);
}

static int write_html(const gp_job *job, const gp__cli_common *o, const char *in)
{
    gp_analyze_opts ao;
    gp_analyze_opts_init(&ao);
    ao.steps = GP_STEPS_HTA;
    ao.hta = true;
    gp_analysis *an = NULL;
    gp_error err = {0};
    gp_status st = gp_analyze_job(job, &ao, &an, &err);
    if (st != GP_OK) {
        gp__cli_error("hta", "%s", err.msg[0] ? err.msg : gp_strerror(st));
        return gp_status_exit_code(st);
    }
    const char *out = o->output ? o->output : "hta_report.html";
    gp__cli_page p = {an, o->title ? o->title : in};
    int rc = gp__cli_write_file("hta", out, write_page, &p, ": open it in a browser");
    gp_analysis_free(an);
    return rc;
}

int gp__cmd_hta(int argc, char **argv)
{
    static const gp__cli_spec spec = {.cmd = "hta", .usage = usage, .opts = hta_opts};
    gp__cli_common o;
    const char *in;
    gp_job *job = NULL;
    /* op shapes kept as the "hta" view reads (the same analysis, the same bytes) */
    int rc = gp__cli_read_one_job(&spec, argc, argv, true, &o, &in, &job);
    if (rc < 0)
        rc = o.json ? print_json(job, o.output) : write_html(job, &o, in);
    gp_job_free(job);
    return rc;
}
