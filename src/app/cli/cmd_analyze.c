/* gpuprof analyze: every HTA analysis of a trace or a job directory, plus bottlenecks and
 * suggestions. Text tables by default, --json, or --csv DIR (one file per table). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/cli/cli.h"
#include "core/atomic_file.h"
#include "core/util.h"
#include "gpuprof/analyze.h"
#include "gpuprof/trace.h"

static void usage(FILE *fp)
{
    fprintf(
        fp,
        "usage: gpuprof analyze [options] TRACE|DIR\n"
        "\n"
        "Holistic-Trace-Analysis figures for each rank (temporal breakdown, idle time per\n"
        "stream, kernel types with overlap states, top kernels, communication/computation\n"
        "overlap), launch statistics, queue lengths, memcpy bandwidth, CPU/GPU activity, the\n"
        "memory timeline, stragglers across ranks, and bottlenecks with suggestions. TRACE is a\n"
        "Kineto/Chrome trace (.json or .json.gz); DIR is a job (one trace per rank).\n"
        "Every figure is defined in docs/analyses.md.\n"
        "\n"
        "options:\n"
        "      --steps S        all (default) | hta (HTA's filter: drop the last ProfilerStep)\n"
        "                       | N-M (ProfilerStep#N..#M) | N\n"
        "      --classify C     default (gpuprof rules, ns precision) | hta (HTA's event set,\n"
        "                       regexes and integer-us rounding)\n"
        "      --hta            same as --steps hta --classify hta\n"
        "      --rule TYPE=RE   classify kernels matching the POSIX extended regex RE as TYPE\n"
        "                       (computation, communication, memory, other); repeatable,\n"
        "                       checked before the built-in rules\n"
        "      --rules FILE     read rules from FILE, one 'TYPE=RE' per line ('#' comments)\n"
        "      --kernel-wait-us N  idle gaps below N us are kernel_wait (default 30)\n"
        "      --top N          kernels per type and rank before \"others\" (default 5)\n"
        "      --table NAME     only this table (repeatable): temporal, idle, kernel_types,\n"
        "                       top_kernels, overlap, launch, queue, activity, memory,\n"
        "                       peak_memory, ranks, findings\n"
        "      --json           JSON output (schema gpuprof.analyze/1, docs/analyses.md)\n"
        "      --csv DIR        write DIR/<table>.csv for each table\n"
        "  -o, --output FILE    write the text or JSON output to FILE (atomically)\n"
        "  -q, --quiet          no warnings about suspect input on stderr\n"
        "      --progress       show read progress on stderr even when it is not a terminal\n"
        "      --threads N      threads for reading and analysing: 0 = automatic (the default:\n"
        "                       up to 4, for inputs of 48 MB or more), 1 = one; at most 16\n"
        "  -h, --help           this help\n"
        "\n"
        "exit status: 0 success, 2 usage or input error\n");
}

typedef struct rules_buf {
    gp_classify_rule *rules;
    size_t n, cap;
    char **owned;
    size_t n_owned, cap_owned;
} rules_buf;

static int add_rule(rules_buf *rb, const char *spec, const char *where)
{
    const char *eq = strchr(spec, '=');
    if (!eq) {
        gp__cli_error("analyze", "%s: rule '%s' is not TYPE=REGEX", where, spec);
        return 2;
    }
    char type[32];
    size_t tl = (size_t)(eq - spec);
    if (tl >= sizeof(type))
        tl = sizeof(type) - 1;
    memcpy(type, spec, tl);
    type[tl] = '\0';
    gp_kernel_type t = gp_kernel_type_parse(type);
    if (t == GP_KT_COUNT) {
        gp__cli_error("analyze", "%s: unknown kernel type '%s'", where, type);
        return 2;
    }
    char *re = strdup(eq + 1);
    char **slot = re ? GP_PUSH(rb->owned, rb->n_owned, rb->cap_owned) : NULL;
    gp_classify_rule *r = slot ? GP_PUSH(rb->rules, rb->n, rb->cap) : NULL;
    if (!r) {
        free(re);
        return 2;
    }
    *slot = re;
    r->regex = re;
    r->type = t;
    return 0;
}

static int read_rules(rules_buf *rb, const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp) {
        gp__cli_error("analyze", "cannot open rules file %s: %s", path, strerror(errno));
        return 2;
    }
    char line[4096], where[4200];
    int rc = 0;
    for (int no = 1; rc == 0 && fgets(line, sizeof(line), fp); no++) {
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' '))
            line[--n] = '\0';
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0' || *p == '#')
            continue;
        snprintf(where, sizeof(where), "%s line %d", path, no);
        rc = add_rule(rb, p, where);
    }
    fclose(fp);
    return rc;
}

static int write_csv_dir(const gp_analysis *a, unsigned tables, const char *dir)
{
    static const struct {
        unsigned bit;
        const char *file;
    } files[] = {{GP_AT_TEMPORAL, "temporal_breakdown.csv"},
                 {GP_AT_IDLE, "idle_time_breakdown.csv"},
                 {GP_AT_TYPES, "kernel_type_breakdown.csv"},
                 {GP_AT_KERNELS, "top_kernels.csv"},
                 {GP_AT_OVERLAP, "comm_comp_overlap.csv"},
                 {GP_AT_LAUNCH, "launch_stats.csv"},
                 {GP_AT_QUEUE, "queue_length.csv"},
                 {GP_AT_ACTIVITY, "activity.csv"},
                 {GP_AT_MEMORY, "memory.csv"},
                 {GP_AT_PEAK_MEMORY, "peak_memory.csv"},
                 {GP_AT_RANKS, "stragglers.csv"},
                 {GP_AT_FINDINGS, "findings.csv"}};
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        gp__cli_error("analyze", "cannot create %s: %s", dir, strerror(errno));
        return 2;
    }
    for (size_t i = 0; i < GP_ARRAY_LEN(files); i++) {
        if (!(tables & files[i].bit))
            continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, files[i].file);
        gp__afile f;
        gp_error err = {0};
        if (gp__afile_open(&f, path, &err) != GP_OK) {
            fprintf(stderr, "gpuprof analyze: %s\n", err.msg);
            return 2;
        }
        if (gp_analysis_render_csv(a, files[i].bit, f.fp) != GP_OK ||
            gp__afile_commit(&f, &err) != GP_OK) {
            gp__afile_abort(&f);
            fprintf(stderr, "gpuprof analyze: cannot write %s %s\n", path, err.msg);
            return 2;
        }
    }
    return 0;
}

int gp__cmd_analyze(int argc, char **argv)
{
    enum {
        OPT_STEPS = 256,
        OPT_CLASSIFY,
        OPT_HTA,
        OPT_RULE,
        OPT_RULES,
        OPT_KW,
        OPT_TOP,
        OPT_TABLE,
        OPT_JSON,
        OPT_CSV,
        OPT_PROGRESS,
        OPT_THREADS
    };
    static const struct option longopts[] = {{"steps", required_argument, NULL, OPT_STEPS},
                                             {"classify", required_argument, NULL, OPT_CLASSIFY},
                                             {"hta", no_argument, NULL, OPT_HTA},
                                             {"rule", required_argument, NULL, OPT_RULE},
                                             {"rules", required_argument, NULL, OPT_RULES},
                                             {"kernel-wait-us", required_argument, NULL, OPT_KW},
                                             {"top", required_argument, NULL, OPT_TOP},
                                             {"table", required_argument, NULL, OPT_TABLE},
                                             {"json", no_argument, NULL, OPT_JSON},
                                             {"csv", required_argument, NULL, OPT_CSV},
                                             {"output", required_argument, NULL, 'o'},
                                             {"quiet", no_argument, NULL, 'q'},
                                             {"progress", no_argument, NULL, OPT_PROGRESS},
                                             {"threads", required_argument, NULL, OPT_THREADS},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    gp_analyze_opts opts;
    gp_analyze_opts_init(&opts);
    gp_read_opts rd;
    gp_read_opts_init(&rd);
    rules_buf rb = {0};
    bool json = false, progress = gp__cli_stderr_is_tty();
    const char *csv_dir = NULL, *out_path = NULL;
    unsigned tables = 0;
    int rc = 2, c;
    gp_job *job = NULL;
    gp_analysis *an = NULL;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_STEPS:
            if (gp_analyze_parse_steps(optarg, &opts) != GP_OK) {
                gp__cli_error("analyze", "--steps takes all, hta, N or N-M, not '%s'", optarg);
                goto done;
            }
            break;
        case OPT_CLASSIFY:
            if (strcmp(optarg, "hta") == 0)
                opts.hta = true;
            else if (strcmp(optarg, "default") == 0)
                opts.hta = false;
            else {
                gp__cli_error("analyze", "--classify takes default or hta, not '%s'", optarg);
                goto done;
            }
            break;
        case OPT_HTA:
            opts.hta = true;
            opts.steps = GP_STEPS_HTA;
            break;
        case OPT_RULE:
            if (add_rule(&rb, optarg, "--rule"))
                goto done;
            break;
        case OPT_RULES:
            if (read_rules(&rb, optarg))
                goto done;
            break;
        case OPT_TOP: {
            long v;
            if (!gp__cli_parse_long("analyze", "--top", optarg, 1, 100000, &v))
                goto done;
            opts.top_kernels = (size_t)v;
            break;
        }
        case OPT_KW: {
            char *end;
            double v = strtod(optarg, &end);
            if (end == optarg || *end || !(v >= 0 && v <= 1e9)) { /* also rejects NaN */
                gp__cli_error("analyze", "--kernel-wait-us needs a number in 0..1e9, not '%s'",
                              optarg);
                goto done;
            }
            opts.kernel_wait_ns = (gp_ns)(v * 1000.0);
            break;
        }
        case OPT_TABLE: {
            unsigned bit = gp_analysis_table_parse(optarg);
            if (!bit) {
                gp__cli_error("analyze", "unknown table '%s' (see --help)", optarg);
                goto done;
            }
            tables |= bit;
            break;
        }
        case OPT_JSON:
            json = true;
            break;
        case OPT_CSV:
            csv_dir = optarg;
            break;
        case 'o':
            out_path = optarg;
            break;
        case 'q':
            rd.quiet = true;
            break;
        case OPT_PROGRESS:
            progress = true;
            break;
        case OPT_THREADS: {
            long v;
            if (!gp__cli_parse_long("analyze", "--threads", optarg, 0, 16, &v))
                goto done;
            rd.threads = (int)v;
            opts.threads = (int)v;
            break;
        }
        case 'h':
            usage(stdout);
            rc = 0;
            goto done;
        default:
            usage(stderr);
            goto done;
        }
    }
    if (optind != argc - 1) {
        gp__cli_error("analyze", optind >= argc ? "no input (give a trace file or a directory)"
                                                : "give exactly one trace file or directory");
        usage(stderr);
        goto done;
    }
    if (json && csv_dir) {
        gp__cli_error("analyze", "--json and --csv are exclusive");
        goto done;
    }
    opts.rules = rb.rules;
    opts.n_rules = rb.n;
    gp_error err = {0};
    if (gp__cli_read_job("analyze", argv[optind], &rd, progress, true, &job) != GP_OK)
        goto done;
    gp_status st = gp_analyze_job(job, &opts, &an, &err);
    if (st != GP_OK) {
        fprintf(stderr, "gpuprof analyze: %s\n", err.msg[0] ? err.msg : gp_strerror(st));
        rc = st == GP_EINVAL ? 2 : 1;
        goto done;
    }
    if (!tables)
        tables = GP_AT_ALL;
    if (csv_dir) {
        rc = write_csv_dir(an, tables, csv_dir);
        goto done;
    }
    gp__afile f;
    FILE *fp = stdout;
    if (out_path) {
        if (gp__afile_open(&f, out_path, &err) != GP_OK) {
            fprintf(stderr, "gpuprof analyze: %s\n", err.msg);
            goto done;
        }
        fp = f.fp;
    }
    st = json ? gp_analysis_render_json(an, tables, fp) : gp_analysis_render_text(an, tables, fp);
    if (out_path) {
        if (st == GP_OK)
            st = gp__afile_commit(&f, &err);
        else
            gp__afile_abort(&f);
    }
    if (st != GP_OK)
        gp__cli_error("analyze", "writing %s failed: %s", out_path ? out_path : "the output",
                      gp_strerror(st));
    rc = gp_status_exit_code(st);
done:
    gp_analysis_free(an);
    gp_job_free(job);
    for (size_t i = 0; i < rb.n_owned; i++)
        free(rb.owned[i]);
    free(rb.owned);
    free(rb.rules);
    return rc;
}
