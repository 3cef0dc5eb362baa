/* The option parser and the number parser of the gpuprof command line (options.h). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli/cli.h"
#include "app/cli/options.h"
#include "render/render_internal.h"

#define MAX_OPTS 40

bool gp__cli_parse_long(const char *cmd, const char *opt, const char *text, long min, long max,
                        long *out)
{
    long long v;
    if (!gp__parse_int(text, min, max, &v)) {
        gp__cli_error(cmd, "%s needs a whole number in %ld..%ld, not '%s'", opt, min, max, text);
        return false;
    }
    *out = (long)v;
    return true;
}

bool gp__cli_parse_ulong(const char *cmd, const char *opt, const char *text, unsigned long long max,
                         unsigned long long *out)
{
    if (!gp__parse_uint(text, max, out)) {
        gp__cli_error(cmd, "%s needs a whole number <= %llu, not '%s'", opt, max, text);
        return false;
    }
    return true;
}

bool gp__cli_parse_real(const char *cmd, const char *opt, const char *text, double lo, double hi,
                        double *out)
{
    if (!gp__parse_real(text, lo, hi, out)) {
        gp__cli_error(cmd, "%s needs a number in [%g, %g], not '%s'", opt, lo, hi, text);
        return false;
    }
    return true;
}

/* A shared option into *c: 0, -1 (not a shared option), or 2 after printing why. */
static int take_shared(const gp__cli_spec *spec, gp__cli_common *c, int id, char *arg)
{
    switch (id) {
    case GP__CLI_ID_QUIET:
        c->quiet = true;
        return 0;
    case GP__CLI_ID_PROGRESS:
        c->progress = true;
        return 0;
    case GP__CLI_ID_JSON:
        c->json = true;
        return 0;
    case GP__CLI_ID_OUTPUT:
        c->output = arg;
        return 0;
    case GP__CLI_ID_TITLE:
        c->title = arg;
        return 0;
    case GP__CLI_ID_TOP:
        c->top_given = true;
        return gp__cli_parse_long(spec->cmd, "--top", arg, spec->top_min, spec->top_max, &c->top)
                   ? 0
                   : 2;
    case GP__CLI_ID_THREADS:
        return gp__cli_parse_long(spec->cmd, "--threads", arg, 0, 16, &c->threads) ? 0 : 2;
    default:
        return -1;
    }
}

/* One option: help (0), a shared one, or the command's own. -1 to go on, else the exit code. */
static int take(const gp__cli_spec *spec, void *ctx, gp__cli_common *c, int id, char *arg)
{
    if (id == GP__CLI_ID_HELP) {
        spec->usage(stdout);
        return 0;
    }
    int rc = take_shared(spec, c, id, arg);
    if (rc < 0)
        rc = spec->handle ? spec->handle(ctx, id, arg) : 2;
    return rc == 0 ? -1 : rc;
}

static int parse_getopt(const gp__cli_spec *spec, void *ctx, int argc, char **argv,
                        gp__cli_common *c, int *first_operand)
{
    struct option longopts[MAX_OPTS + 1];
    char shorts[2 * MAX_OPTS + 1];
    size_t n = 0, ns = 0;
    for (const gp__cli_opt *o = spec->opts; o->name && n < MAX_OPTS; o++, n++) {
        longopts[n] = (struct option){o->name, o->has_arg ? required_argument : no_argument, NULL,
                                      o->short_name ? o->short_name : o->id};
        if (o->short_name) {
            shorts[ns++] = (char)o->short_name;
            if (o->has_arg)
                shorts[ns++] = ':';
        }
    }
    longopts[n] = (struct option){NULL, 0, NULL, 0};
    shorts[ns] = '\0';
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
        const gp__cli_opt *o = spec->opts;
        while (o->name && (o->short_name ? o->short_name : o->id) != ch)
            o++;
        if (!o->name) { /* glibc has said what is wrong */
            spec->usage(stderr);
            return 2;
        }
        int rc = take(spec, ctx, c, o->id, optarg);
        if (rc >= 0)
            return rc;
    }
    *first_operand = optind;
    return -1;
}

static const gp__cli_opt *find_exact(const gp__cli_opt *opts, const char *a)
{
    for (const gp__cli_opt *o = opts; o->name; o++)
        if ((a[0] == '-' && a[1] == '-' && strcmp(a + 2, o->name) == 0) ||
            (o->short_name && a[0] == '-' && a[1] == o->short_name && a[2] == '\0'))
            return o;
    return NULL;
}

static int parse_exact(const gp__cli_spec *spec, void *ctx, int argc, char **argv,
                       gp__cli_common *c, int *first_operand)
{
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (spec->stop_at_operand && strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (spec->stop_at_operand && a[0] != '-')
            break;
        const gp__cli_opt *o = find_exact(spec->opts, a);
        if (o && o->has_arg && i + 1 >= argc && (o->flags & GP__CLI_SAY_NEEDS_VALUE)) {
            gp__cli_error(spec->cmd, "%s needs a value (see --help)", a);
            return 2;
        }
        if (!o || (o->has_arg && i + 1 >= argc)) {
            gp__cli_error(spec->cmd, "unknown or incomplete option '%s' (see --help)", a);
            return 2;
        }
        int rc = take(spec, ctx, c, o->id, o->has_arg ? argv[++i] : NULL);
        if (rc >= 0)
            return rc;
    }
    *first_operand = i;
    return -1;
}

int gp__cli_parse_options(const gp__cli_spec *spec, void *ctx, int argc, char **argv,
                          gp__cli_common *c, int *first_operand)
{
    *c = (gp__cli_common){.threads = -1};
    for (const gp__cli_opt *o = spec->opts; o->name; o++)
        if (o->id == GP__CLI_ID_PROGRESS)
            c->progress = gp__cli_stderr_is_tty();
    return spec->exact ? parse_exact(spec, ctx, argc, argv, c, first_operand)
                       : parse_getopt(spec, ctx, argc, argv, c, first_operand);
}

void gp__cli_read_opts(const gp__cli_common *c, gp_read_opts *rd)
{
    gp_read_opts_init(rd);
    rd->quiet = c->quiet;
}

int gp__cli_parse_one_input(const gp__cli_spec *spec, int argc, char **argv, gp__cli_common *c,
                            int *first_operand)
{
    int rc = gp__cli_parse_options(spec, NULL, argc, argv, c, first_operand);
    if (rc >= 0)
        return rc;
    if (argc - *first_operand != 1) {
        gp__cli_error(spec->cmd, "give one input (a trace or a job directory)");
        spec->usage(stderr);
        return 2;
    }
    return -1;
}

int gp__cli_read_one_job(const gp__cli_spec *spec, int argc, char **argv, bool keep_op_shapes,
                         gp__cli_common *o, const char **input, gp_job **job)
{
    int first;
    int rc = gp__cli_parse_one_input(spec, argc, argv, o, &first);
    if (rc >= 0)
        return rc;
    gp_read_opts rd;
    gp__cli_read_opts(o, &rd);
    rd.keep_op_shapes = keep_op_shapes;
    *input = argv[first];
    return gp__cli_read_job(spec->cmd, *input, &rd, o->progress, true, job) == GP_OK ? -1 : 2;
}

int gp__cli_write_file(const char *cmd, const char *path,
                       gp_status (*render)(const void *ctx, FILE *fp), const void *ctx,
                       const char *note)
{
    gp_error err = {0};
    int rc = 0;
    if (!gp__cli_file_written(cmd, gp__render_to_file(path, render, ctx, &err), &err, &rc))
        return rc;
    printf("wrote %s%s\n", path, note);
    return gp__cli_finish_stdout(cmd, GP_OK);
}
