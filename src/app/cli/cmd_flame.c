/* gpuprof flame: flame graph of a trace or profile (folded, speedscope, SVG, HTML), or the
 * differential flame graph of two. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli/cli.h"
#include "gpuprof/report.h"
#include "gpuprof/trace.h"

static void usage(FILE *fp)
{
    fprintf(
        fp,
        "usage: gpuprof flame [options] TRACE|PROFILE|DIR -o OUT\n"
        "       gpuprof flame [options] --diff BASE CURRENT -o OUT\n"
        "\n"
        "Flame graph of a PyTorch-profiler/Kineto or Chrome trace, a gpuprof profile or a\n"
        "multi-rank job directory. Stacks come from range nesting on each CPU thread (ops,\n"
        "annotations, Python frames, runtime calls, own ranges); with GPU weight each kernel,\n"
        "memcpy and memset hangs under the op that launched it (correlation id, else\n"
        "External id, else \"[unattributed GPU]\"). The output format follows OUT's suffix:\n"
        "  .folded / .txt            folded stacks (flamegraph.pl, inferno, speedscope)\n"
        "  .speedscope.json / .json  speedscope file\n"
        "  .svg                      interactive SVG (click to zoom, search)\n"
        "  .html                     interactive page: zoom, search with match %%, tooltips,\n"
        "                            view state in the URL (#f=FRAME&s=REGEX)\n"
        "With --diff the picture has CURRENT's shape, red where a stack grew against BASE and\n"
        "blue where it shrank; folded output then has two counts per line (base current).\n"
        "With --by module the frames are the nn.Module hierarchy instead (a frame \"Block_3\"\n"
        "per python_function frame \"nn.Module: Block_3\" of a trace recorded with\n"
        "with_stack=True): each kernel under the modules around the op that launched it, the\n"
        "rule of `gpuprof ops --by module`; CPU weight is the ops' self CPU time. Work outside\n"
        "every module, and GPU work no op launched, is under \"(no module)\". No thread\n"
        "frames. An HTML page of call stacks also holds the module tree when the input has\n"
        "nn.Module frames: its \"Frames\" switch shows either.\n"
        "\n"
        "options:\n"
        "  -o, --output FILE       output file (required)\n"
        "  -f, --format FMT        folded, speedscope, svg or html (overrides the suffix)\n"
        "      --weight W          cpu, gpu or auto (default: gpu when there is GPU work)\n"
        "      --by B              stack (default) or module: the frames are the nn.Module\n"
        "                          hierarchy\n"
        "      --min-duration D    fold frames shorter than D into their parent (e.g. 50us)\n"
        "      --max-depth N       fold frames deeper than N (root = 0, thread = 1)\n"
        "      --group-kernels D   merge GPU leaves shorter than D into \"[N small kernels]\"\n"
        "      --no-threads        no per-thread frame under the root (the default with\n"
        "                          --diff, where thread ids differ between runs)\n"
        "      --threads           keep the per-thread frames with --diff\n"
        "      --diff              two inputs: BASE CURRENT\n"
        "      --title TEXT        title of the picture\n"
        "      --width PX          SVG/HTML width (default 1200)\n"
        "      --max-output MB     refuse folded or speedscope output over MB megabytes (each\n"
        "                          line repeats its stack: deep nesting grows with the square\n"
        "                          of the depth); default 256, 0 = no limit\n"
        "  -q, --quiet             no warnings about suspect input on stderr\n"
        "      --progress          show read progress on stderr even when not a terminal\n"
        "  -h, --help              this help\n"
        "\n"
        "Durations take a unit: ns, us, ms, s (no unit = ns).\n"
        "exit status: 0 success, 2 usage or input error\n");
}

/* One input's tree; with alt (not NULL) also the module tree the HTML page offers. */
static gp_status build_one(const char *path, gp_read_opts *rd, bool progress,
                           const gp_flame_opts *fo, gp_flame_tree **tree, gp_flame_tree **alt,
                           gp_flame_evented **ev)
{
    gp_job *job = NULL;
    gp_status s = gp__cli_read_job("flame", path, rd, progress, true, &job);
    if (s != GP_OK)
        return s;
    gp_error err = {0};
    s = gp_flame_build(gp_job_traces(job), job->n_ranks, fo, tree, &err);
    if (s == GP_OK &&
        ((alt && (s = gp_flame_build_alt(gp_job_traces(job), job->n_ranks, fo, *tree, alt, &err)) !=
                     GP_OK) ||
         (ev &&
          (s = gp_flame_evented_build(gp_job_traces(job), job->n_ranks, ev, &err)) != GP_OK))) {
        gp_flame_tree_free(*tree);
        *tree = NULL;
    }
    if (s == GP_EEMPTY) {
        /* suggest the other weight only when it works on this input (issue 21 item 12: GPU
         * events that all have zero duration made "try --weight gpu" fail the same way) */
        gp_flame_opts other = *fo;
        other.weight = fo->weight == GP_FLAME_CPU ? GP_FLAME_GPU : GP_FLAME_CPU;
        gp_flame_tree *probe = NULL;
        bool works = fo->weight != GP_FLAME_AUTO && gp_flame_build(gp_job_traces(job), job->n_ranks,
                                                                   &other, &probe, NULL) == GP_OK;
        gp_flame_tree_free(probe);
        if (works)
            gp__cli_error("flame", "%s: no event carries %s weight (try --weight %s)", path,
                          fo->weight == GP_FLAME_GPU ? "GPU" : "CPU",
                          fo->weight == GP_FLAME_GPU ? "cpu" : "gpu");
        else
            gp__cli_error("flame",
                          "%s: no event carries weight: every CPU range and GPU event has a zero "
                          "duration",
                          path);
    } else if (s != GP_OK)
        gp__cli_error("flame", "%s: %s", path, err.msg);
    gp_job_free(job);
    return s;
}

enum {
    OPT_WEIGHT = GP__CLI_ID_OWN,
    OPT_MIN,
    OPT_DEPTH,
    OPT_GROUP,
    OPT_NOTHREADS,
    OPT_THREADS,
    OPT_DIFF,
    OPT_WIDTH,
    OPT_BY,
    OPT_MAXOUT
};

static const gp__cli_opt flame_opts[] = {GP__CLI_OPT_OUTPUT,
                                         GP__CLI_ARG_S("format", 'f'),
                                         GP__CLI_ARG("weight", OPT_WEIGHT),
                                         GP__CLI_ARG("by", OPT_BY),
                                         GP__CLI_ARG("min-duration", OPT_MIN),
                                         GP__CLI_ARG("max-depth", OPT_DEPTH),
                                         GP__CLI_ARG("group-kernels", OPT_GROUP),
                                         GP__CLI_FLAG("no-threads", OPT_NOTHREADS),
                                         GP__CLI_FLAG("threads", OPT_THREADS),
                                         GP__CLI_FLAG("diff", OPT_DIFF),
                                         GP__CLI_OPT_TITLE,
                                         GP__CLI_ARG("width", OPT_WIDTH),
                                         GP__CLI_ARG("max-output", OPT_MAXOUT),
                                         GP__CLI_OPT_QUIET,
                                         GP__CLI_OPT_PROGRESS,
                                         GP__CLI_OPT_HELP,
                                         GP__CLI_END};

typedef struct flame_args {
    char title[512];
    gp_flame_opts fo;
    gp_flame_render_opts ro;
    const char *format;
    gp_flame_format fmt;
    bool diff;
    int threads;      /* -1: default (on, off for --diff) */
    gp__cli_common o; /* the shared options */
    int first;        /* argv index of the first input */
    gp_read_opts rd;  /* how the inputs are read */
} flame_args;

static int take_option(void *ctx, int id, char *arg)
{
    static const char *const weights[] = {"cpu", "gpu", "auto"};
    static const gp_flame_weight weight_of[] = {GP_FLAME_CPU, GP_FLAME_GPU, GP_FLAME_AUTO};
    flame_args *a = ctx;
    size_t w = 0;
    gp_ns d;
    long v;
    switch (id) {
    case 'f':
        a->format = arg;
        return 0;
    case OPT_BY:
        if (strcmp(arg, "stack") != 0 && strcmp(arg, "module") != 0) {
            gp__cli_error("flame", "--by is stack or module, not '%s'", arg);
            return 2;
        }
        a->fo.by = arg[0] == 'm' ? GP_FLAME_BY_MODULE : GP_FLAME_BY_STACK;
        return 0;
    case OPT_WEIGHT:
        while (w < GP_ARRAY_LEN(weights) && strcmp(arg, weights[w]) != 0)
            w++;
        if (w == GP_ARRAY_LEN(weights)) {
            gp__cli_error("flame", "--weight is cpu, gpu or auto, not '%s'", arg);
            return 2;
        }
        a->fo.weight = weight_of[w];
        return 0;
    case OPT_MIN:
    case OPT_GROUP:
        if (!gp__parse_duration_ns(arg, 1, &d)) {
            gp__cli_error("flame", "%s needs a duration such as 50us, not '%s'",
                          id == OPT_MIN ? "--min-duration" : "--group-kernels", arg);
            return 2;
        }
        *(id == OPT_MIN ? &a->fo.min_duration : &a->fo.group_kernels) = d;
        return 0;
    case OPT_DEPTH:
    case OPT_WIDTH:
        if (!gp__cli_parse_long("flame", id == OPT_DEPTH ? "--max-depth" : "--width", arg, 1,
                                id == OPT_DEPTH ? 10000 : 100000, &v))
            return 2;
        *(id == OPT_DEPTH ? &a->fo.max_depth : &a->ro.width) = (int)v;
        return 0;
    case OPT_MAXOUT:
        if (!gp__cli_parse_long("flame", "--max-output", arg, 0, 1L << 30, &v))
            return 2;
        a->ro.max_bytes = (uint64_t)v << 20;
        return 0;
    case OPT_NOTHREADS:
    case OPT_THREADS:
        a->threads = id == OPT_THREADS;
        return 0;
    default: /* OPT_DIFF */
        a->diff = true;
        return 0;
    }
}

/* The output format: --format, else the output's suffix. false with the error printed. */
static bool pick_format(flame_args *a, const char *out)
{
    static const char *const names[] = {"folded", "speedscope", "svg", "html"};
    static const gp_flame_format formats[] = {GP_FLAME_FOLDED, GP_FLAME_SPEEDSCOPE, GP_FLAME_SVG,
                                              GP_FLAME_HTML};
    if (a->format) {
        size_t i = 0;
        while (i < GP_ARRAY_LEN(names) && strcmp(a->format, names[i]) != 0)
            i++;
        if (i == GP_ARRAY_LEN(names)) {
            gp__cli_error("flame", "--format is folded, speedscope, svg or html, not '%s'",
                          a->format);
            return false;
        }
        a->fmt = formats[i];
    } else if (gp_flame_format_from_path(out, &a->fmt) != GP_OK) {
        gp__cli_error("flame",
                      "%s: cannot tell the format from the name (use .html, .svg, .folded, "
                      ".speedscope.json or --format)",
                      out);
        return false;
    }
    if (a->diff && a->fmt == GP_FLAME_SPEEDSCOPE) {
        gp__cli_error("flame", "speedscope files cannot hold a differential flame graph");
        return false;
    }
    return true;
}

/* Options, operands and format into *a; -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, flame_args *a)
{
    gp__cli_common *o = &a->o;
    int *first = &a->first;
    gp_flame_opts_init(&a->fo);
    gp_flame_render_opts_init(&a->ro);
    static const gp__cli_spec spec = {
        .cmd = "flame", .usage = usage, .opts = flame_opts, .handle = take_option};
    int rc = gp__cli_parse_options(&spec, a, argc, argv, o, first);
    if (rc >= 0)
        return rc;
    if (argc - *first != (a->diff ? 2 : 1)) {
        gp__cli_error("flame", a->diff ? "--diff needs two inputs: BASE CURRENT"
                                       : "give one input (two with --diff)");
        usage(stderr);
        return 2;
    }
    if (!o->output) {
        gp__cli_error("flame", "no output file (-o flame.html|.svg|.folded|.speedscope.json)");
        return 2;
    }
    if (!pick_format(a, o->output))
        return 2;
    a->fo.thread_frames = a->threads < 0 ? !a->diff : a->threads == 1;
    /* the picture's title: --title, else the input's name (BASE -> CURRENT for a diff) */
    if (o->title)
        a->ro.title = o->title;
    else if (!a->diff)
        a->ro.title = argv[*first];
    else {
        snprintf(a->title, sizeof a->title, "%s \xe2\x86\x92 %s", argv[*first], argv[*first + 1]);
        a->ro.title = a->title;
    }
    gp__cli_read_opts(o, &a->rd);
    return -1;
}

/* The tree to draw: one input's, or with --diff the differential tree of base and current. */
static int build_tree(char **inputs, flame_args *a, gp_read_opts *rd, bool progress,
                      gp_flame_tree **tree, gp_flame_tree **alt, gp_flame_evented **ev)
{
    gp_flame_tree *base = NULL, *cur = NULL;
    int rc = 2;
    if (!a->diff) /* the page's module tree; the speedscope file's evented profiles */
        return build_one(inputs[0], rd, progress, &a->fo, tree,
                         a->fmt == GP_FLAME_HTML ? alt : NULL,
                         a->fmt == GP_FLAME_SPEEDSCOPE ? ev : NULL) == GP_OK
                   ? 0
                   : 2;
    if (build_one(inputs[1], rd, progress, &a->fo, &cur, NULL, NULL) != GP_OK)
        goto done;
    if (a->fo.weight == GP_FLAME_AUTO) /* both sides need one weight: the current input's */
        a->fo.weight = cur->weight;
    if (build_one(inputs[0], rd, progress, &a->fo, &base, NULL, NULL) != GP_OK)
        goto done;
    gp_error err = {0};
    gp_status s = gp_flame_diff(base, cur, tree, &err);
    rc = gp_status_exit_code(s);
    if (s != GP_OK)
        gp__cli_error("flame", "diff: %s", err.msg);
done:
    gp_flame_tree_free(base);
    gp_flame_tree_free(cur);
    return rc;
}

int gp__cmd_flame(int argc, char **argv)
{
    flame_args a = {.threads = -1};
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    const gp__cli_common *o = &a.o;
    gp_flame_tree *tree = NULL, *alt = NULL;
    gp_flame_evented *ev = NULL;
    rc = build_tree(argv + a.first, &a, &a.rd, o->progress, &tree, &alt, &ev);
    if (rc != 0)
        goto done;
    a.ro.alt = alt;
    a.ro.evented = ev;
    gp_error err = {0};
    gp_status ws = gp_flame_write(tree, a.fmt, &a.ro, o->output, &err);
    if (!gp__cli_file_written("flame", ws, &err, &rc)) {
        if (ws == GP_ELIMIT) /* the input nests too deep for the format: an input error */
            rc = 2;
        goto done;
    }
    if (tree->by == GP_FLAME_BY_MODULE && !o->quiet && !tree->n_modules)
        fprintf(stderr,
                "gpuprof flame: warning: no nn.Module frames: every frame is \"(no module)\" "
                "(record with with_stack=True)\n");
    printf("wrote %s (%zu frames, %s weight%s%s)\n", o->output, tree->n_nodes,
           tree->weight == GP_FLAME_GPU ? "GPU" : "CPU",
           tree->by == GP_FLAME_BY_MODULE ? ", by module" : "", a.diff ? ", differential" : "");
    rc = gp__cli_finish_stdout("flame", GP_OK);
done:
    gp_flame_tree_free(tree);
    gp_flame_tree_free(alt);
    gp_flame_evented_free(ev);
    return rc;
}
