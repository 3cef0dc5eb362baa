/* gpuprof flame: flame graph of a trace or profile (folded, speedscope, SVG, HTML), or the
 * differential flame graph of two. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli/cli.h"
#include "gpuprof/report.h"
#include "gpuprof/trace.h"

static void usage(FILE *fp)
{
    fprintf(fp,
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
            "\n"
            "options:\n"
            "  -o, --output FILE       output file (required)\n"
            "  -f, --format FMT        folded, speedscope, svg or html (overrides the suffix)\n"
            "      --weight W          cpu, gpu or auto (default: gpu when there is GPU work)\n"
            "      --min-duration D    fold frames shorter than D into their parent (e.g. 50us)\n"
            "      --max-depth N       fold frames deeper than N (root = 0, thread = 1)\n"
            "      --group-kernels D   merge GPU leaves shorter than D into \"[N small kernels]\"\n"
            "      --no-threads        no per-thread frame under the root (the default with\n"
            "                          --diff, where thread ids differ between runs)\n"
            "      --threads           keep the per-thread frames with --diff\n"
            "      --diff              two inputs: BASE CURRENT\n"
            "      --title TEXT        title of the picture\n"
            "      --width PX          SVG/HTML width (default 1200)\n"
            "  -q, --quiet             no warnings about suspect input on stderr\n"
            "      --progress          show read progress on stderr even when not a terminal\n"
            "  -h, --help              this help\n"
            "\n"
            "Durations take a unit: ns, us, ms, s (no unit = ns).\n"
            "exit status: 0 success, 2 usage or input error\n");
}

/* "50us" -> 50000. Returns false on junk or a negative value. */
static bool parse_dur(const char *s, gp_ns *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0)
        return false;
    double mul = 1;
    if (*end == 0 || strcmp(end, "ns") == 0)
        mul = 1;
    else if (strcmp(end, "us") == 0)
        mul = 1e3;
    else if (strcmp(end, "ms") == 0)
        mul = 1e6;
    else if (strcmp(end, "s") == 0)
        mul = 1e9;
    else
        return false;
    *out = (gp_ns)(v * mul + 0.5);
    return true;
}

static gp_status build_one(const char *path, gp_read_opts *rd, const gp_flame_opts *fo,
                           gp_flame_tree **tree)
{
    gp_job *job = NULL;
    gp_status s = gp__cli_read_job("flame", path, rd, rd->progress != NULL, true, &job);
    if (s != GP_OK)
        return s;
    s = gp_flame_build(job->ranks, job->n_ranks, fo, tree);
    if (s == GP_EEMPTY)
        gp__cli_error("flame", "%s: no event carries %s weight (try --weight %s)", path,
                      fo->weight == GP_FLAME_GPU ? "GPU" : "any",
                      fo->weight == GP_FLAME_GPU ? "cpu" : "gpu");
    else if (s != GP_OK)
        gp__cli_error("flame", "%s: %s", path, gp_strerror(s));
    gp_job_free(job);
    return s;
}

int gp__cmd_flame(int argc, char **argv)
{
    enum {
        OPT_WEIGHT = 256,
        OPT_MIN,
        OPT_DEPTH,
        OPT_GROUP,
        OPT_NOTHREADS,
        OPT_THREADS,
        OPT_DIFF,
        OPT_TITLE,
        OPT_WIDTH,
        OPT_PROGRESS
    };
    static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
                                             {"format", required_argument, NULL, 'f'},
                                             {"weight", required_argument, NULL, OPT_WEIGHT},
                                             {"min-duration", required_argument, NULL, OPT_MIN},
                                             {"max-depth", required_argument, NULL, OPT_DEPTH},
                                             {"group-kernels", required_argument, NULL, OPT_GROUP},
                                             {"no-threads", no_argument, NULL, OPT_NOTHREADS},
                                             {"threads", no_argument, NULL, OPT_THREADS},
                                             {"diff", no_argument, NULL, OPT_DIFF},
                                             {"title", required_argument, NULL, OPT_TITLE},
                                             {"width", required_argument, NULL, OPT_WIDTH},
                                             {"quiet", no_argument, NULL, 'q'},
                                             {"progress", no_argument, NULL, OPT_PROGRESS},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    gp_flame_opts fo;
    gp_flame_opts_init(&fo);
    gp_flame_render_opts ro;
    gp_flame_render_opts_init(&ro);
    gp_read_opts rd;
    gp_read_opts_init(&rd);
    const char *out = NULL, *format = NULL;
    bool diff = false, progress = gp__cli_stderr_is_tty();
    int threads = -1; /* -1: default (on, off for --diff) */
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:f:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 'f':
            format = optarg;
            break;
        case OPT_WEIGHT:
            if (strcmp(optarg, "cpu") == 0)
                fo.weight = GP_FLAME_CPU;
            else if (strcmp(optarg, "gpu") == 0)
                fo.weight = GP_FLAME_GPU;
            else if (strcmp(optarg, "auto") == 0)
                fo.weight = GP_FLAME_AUTO;
            else {
                gp__cli_error("flame", "--weight is cpu, gpu or auto, not '%s'", optarg);
                return 2;
            }
            break;
        case OPT_MIN:
        case OPT_GROUP: {
            gp_ns v;
            if (!parse_dur(optarg, &v)) {
                gp__cli_error("flame", "%s needs a duration such as 50us, not '%s'",
                              c == OPT_MIN ? "--min-duration" : "--group-kernels", optarg);
                return 2;
            }
            if (c == OPT_MIN)
                fo.min_duration = v;
            else
                fo.group_kernels = v;
            break;
        }
        case OPT_DEPTH:
        case OPT_WIDTH: {
            long v;
            if (!gp__cli_parse_long("flame", c == OPT_DEPTH ? "--max-depth" : "--width", optarg, 1,
                                    c == OPT_DEPTH ? 10000 : 100000, &v))
                return 2;
            if (c == OPT_DEPTH)
                fo.max_depth = (int)v;
            else
                ro.width = (int)v;
            break;
        }
        case OPT_NOTHREADS:
            threads = 0;
            break;
        case OPT_THREADS:
            threads = 1;
            break;
        case OPT_DIFF:
            diff = true;
            break;
        case OPT_TITLE:
            ro.title = optarg;
            break;
        case 'q':
            rd.quiet = true;
            break;
        case OPT_PROGRESS:
            progress = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    int n_in = argc - optind;
    if (n_in != (diff ? 2 : 1)) {
        gp__cli_error("flame", diff ? "--diff needs two inputs: BASE CURRENT"
                                    : "give one input (two with --diff)");
        usage(stderr);
        return 2;
    }
    if (!out) {
        gp__cli_error("flame", "no output file (-o flame.html|.svg|.folded|.speedscope.json)");
        return 2;
    }
    gp_flame_format fmt;
    if (format) {
        if (strcmp(format, "folded") == 0)
            fmt = GP_FLAME_FOLDED;
        else if (strcmp(format, "speedscope") == 0)
            fmt = GP_FLAME_SPEEDSCOPE;
        else if (strcmp(format, "svg") == 0)
            fmt = GP_FLAME_SVG;
        else if (strcmp(format, "html") == 0)
            fmt = GP_FLAME_HTML;
        else {
            gp__cli_error("flame", "--format is folded, speedscope, svg or html, not '%s'", format);
            return 2;
        }
    } else if (!gp_flame_format_from_path(out, &fmt)) {
        gp__cli_error("flame",
                      "%s: cannot tell the format from the name (use .html, .svg, .folded, "
                      ".speedscope.json or --format)",
                      out);
        return 2;
    }
    if (diff && fmt == GP_FLAME_SPEEDSCOPE) {
        gp__cli_error("flame", "speedscope files cannot hold a differential flame graph");
        return 2;
    }
    fo.thread_frames = threads < 0 ? !diff : threads == 1;
    rd.progress = progress ? gp__cli_progress : NULL;
    int rc = 2;
    gp_flame_tree *tree = NULL, *base = NULL, *cur = NULL;
    if (diff) {
        if (fo.weight == GP_FLAME_AUTO) {
            /* Both sides need one weight: resolve it from the current input. */
            if (build_one(argv[optind + 1], &rd, &fo, &cur) != GP_OK)
                goto done;
            fo.weight = cur->weight;
        } else if (build_one(argv[optind + 1], &rd, &fo, &cur) != GP_OK) {
            goto done;
        }
        if (build_one(argv[optind], &rd, &fo, &base) != GP_OK)
            goto done;
        gp_status s = gp_flame_diff(base, cur, &tree);
        if (s != GP_OK) {
            gp__cli_error("flame", "diff: %s", gp_strerror(s));
            rc = gp_status_exit_code(s);
            goto done;
        }
    } else if (build_one(argv[optind], &rd, &fo, &tree) != GP_OK) {
        goto done;
    }
    gp_error err = {0};
    if (gp_flame_write(tree, fmt, &ro, out, &err) != GP_OK) {
        fprintf(stderr, "gpuprof flame: %s\n", err.msg);
        rc = gp_status_exit_code(err.status ? err.status : GP_EIO);
        goto done;
    }
    printf("wrote %s (%zu frames, %s weight%s)\n", out, tree->n_nodes,
           tree->weight == GP_FLAME_GPU ? "GPU" : "CPU", diff ? ", differential" : "");
    rc = 0;
done:
    gp_flame_tree_free(tree);
    gp_flame_tree_free(base);
    gp_flame_tree_free(cur);
    return rc;
}
