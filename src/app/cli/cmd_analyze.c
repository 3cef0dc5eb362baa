/* gpuprof analyze: every HTA analysis of a trace or a job directory, plus bottlenecks and
 * suggestions. Text tables by default, --json, or --csv DIR (one file per table). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/cli/cli.h"
#include "core/atomic_file.h"
#include "core/util.h"
#include "gpuprof/analyze.h"
#include "gpuprof/trace.h"
#include "render/analysis_tables.h"

/* The --table names of the registry (render/analysis_tables.h), wrapped under the option's
 * text. */
static void table_names(FILE *fp)
{
    size_t n, col = 50;
    const gp__analysis_table *t = gp__analysis_tables(&n);
    for (size_t i = 0; i < n; i++) {
        size_t w = strlen(t[i].name) + (i + 1 < n);
        if (col + 1 + w > 86) {
            fputs("\n                      ", fp);
            col = 22;
        }
        fprintf(fp, " %s%s", t[i].name, i + 1 < n ? "," : "");
        col += 1 + w;
    }
    fputc('\n', fp);
}

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
        "      --critical-path M  default (each step's critical path, ns, inferred syncs) |\n"
        "                       hta (HTA's graph and figures: one region, us) | off\n"
        "      --cp-annotation NAME  critical path of the events whose name contains NAME\n"
        "                       (\"\" = the whole trace; default: each ProfilerStep)\n"
        "      --cp-instance N  only instance N (from 0) of --cp-annotation (default: all;\n"
        "                       hta mode: 0)\n"
        "      --data-load PAT  events whose name contains PAT are data loading (repeatable;\n"
        "                       default: DataLoader, dataloader)\n"
        "      --gpus-per-node N  ranks per node, for intra- vs inter-node collectives\n"
        "                       (default: the first trace's device count)\n"
        "      --table NAME     only this table (repeatable):");
    table_names(fp);
    fprintf(
        fp,
        "      --json           JSON output (schema gpuprof.analyze/1, docs/analyses.md)\n"
        "      --csv DIR        write DIR/<table>.csv for each table\n"
        "  -o, --output FILE    write the text or JSON output to FILE (atomically)\n"
        "      --partial OUT    write the ranks' partial result to OUT, for gpuprof merge\n"
        "                       (docs/jobs.md); under mpirun, DIR's ranks are split across\n"
        "                       the processes and rank 0 writes the job's output\n"
        "  -q, --quiet          no warnings about suspect input on stderr\n"
        "      --progress       show read progress on stderr even when it is not a terminal\n"
        "      --threads N      threads for reading and analysing: 0 = automatic (the default:\n"
        "                       up to 4, for inputs of 48 MiB or more), 1 = one; at most 16\n"
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
    gp_kernel_type t;
    if (gp_kernel_type_parse(type, &t) != GP_OK) {
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
    /* messages say "gpuprof analyze" also for merge: the tables are analyze's */
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        gp__cli_error("analyze", "cannot create %s: %s", dir, strerror(errno));
        return 2;
    }
    size_t n;
    const gp__analysis_table *files = gp__analysis_tables(&n);
    for (size_t i = 0; i < n; i++) {
        /* a single trace has no collectives table (nor its file) */
        if (!(tables & files[i].bit) || (files[i].bit == GP_AT_COLLECTIVES && !a->collectives))
            continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, files[i].csv);
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

enum {
    OPT_STEPS = GP__CLI_ID_OWN,
    OPT_CLASSIFY,
    OPT_HTA,
    OPT_RULE,
    OPT_RULES,
    OPT_KW,
    OPT_TABLE,
    OPT_CP,
    OPT_CP_ANN,
    OPT_CP_INST,
    OPT_DATA_LOAD,
    OPT_CSV,
    OPT_GPN,
    OPT_PARTIAL
};

static const gp__cli_opt analyze_opts[] = {GP__CLI_ARG("steps", OPT_STEPS),
                                           GP__CLI_ARG("classify", OPT_CLASSIFY),
                                           GP__CLI_FLAG("hta", OPT_HTA),
                                           GP__CLI_ARG("rule", OPT_RULE),
                                           GP__CLI_ARG("rules", OPT_RULES),
                                           GP__CLI_ARG("kernel-wait-us", OPT_KW),
                                           GP__CLI_OPT_TOP_LONG,
                                           GP__CLI_ARG("table", OPT_TABLE),
                                           GP__CLI_ARG("critical-path", OPT_CP),
                                           GP__CLI_ARG("cp-annotation", OPT_CP_ANN),
                                           GP__CLI_ARG("cp-instance", OPT_CP_INST),
                                           GP__CLI_ARG("data-load", OPT_DATA_LOAD),
                                           GP__CLI_OPT_JSON,
                                           GP__CLI_ARG("csv", OPT_CSV),
                                           GP__CLI_ARG("gpus-per-node", OPT_GPN),
                                           GP__CLI_ARG("partial", OPT_PARTIAL),
                                           GP__CLI_OPT_OUTPUT,
                                           GP__CLI_OPT_QUIET,
                                           GP__CLI_OPT_PROGRESS,
                                           GP__CLI_OPT_THREADS,
                                           GP__CLI_OPT_HELP,
                                           GP__CLI_END};

typedef struct analyze_args {
    gp_analyze_opts opts;
    rules_buf rb;
    const char *csv_dir;
    const char *partial; /* --partial OUT */
    unsigned tables;
    const char *data_load[64]; /* --data-load patterns (argv strings) */
    size_t n_data_load;
} analyze_args;

/* --critical-path, --cp-annotation, --cp-instance and --data-load. */
static int take_cp_option(analyze_args *a, int id, char *arg)
{
    double n;
    switch (id) {
    case OPT_CP:
        if (strcmp(arg, "default") != 0 && strcmp(arg, "hta") != 0 && strcmp(arg, "off") != 0) {
            gp__cli_error("analyze", "--critical-path takes default, hta or off, not '%s'", arg);
            return 2;
        }
        a->opts.critical_path = strcmp(arg, "off") != 0;
        a->opts.cp_hta = strcmp(arg, "hta") == 0;
        return 0;
    case OPT_CP_ANN:
        a->opts.cp_annotation = arg;
        return 0;
    case OPT_CP_INST:
        if (!gp__parse_real(arg, 0, 1e15, &n) || n != (double)(int64_t)n) {
            gp__cli_error("analyze", "--cp-instance needs a whole number >= 0, not '%s'", arg);
            return 2;
        }
        a->opts.cp_instance = (int64_t)n;
        return 0;
    default: /* OPT_DATA_LOAD */
        if (a->n_data_load == GP_ARRAY_LEN(a->data_load) || !arg[0]) {
            gp__cli_error("analyze", arg[0] ? "at most 64 --data-load patterns"
                                            : "--data-load needs a non-empty pattern");
            return 2;
        }
        a->data_load[a->n_data_load++] = arg;
        a->opts.data_load = a->data_load;
        a->opts.n_data_load = a->n_data_load;
        return 0;
    }
}

static int take_option(void *ctx, int id, char *arg)
{
    analyze_args *a = ctx;
    double us;
    switch (id) {
    case OPT_STEPS:
        if (gp_analyze_parse_steps(arg, &a->opts) != GP_OK) {
            gp__cli_error("analyze", "--steps takes all, hta, N or N-M, not '%s'", arg);
            return 2;
        }
        return 0;
    case OPT_CLASSIFY:
        if (strcmp(arg, "hta") != 0 && strcmp(arg, "default") != 0) {
            gp__cli_error("analyze", "--classify takes default or hta, not '%s'", arg);
            return 2;
        }
        a->opts.hta = strcmp(arg, "hta") == 0;
        return 0;
    case OPT_HTA:
        a->opts.hta = true;
        a->opts.steps = GP_STEPS_HTA;
        return 0;
    case OPT_RULE:
        return add_rule(&a->rb, arg, "--rule");
    case OPT_RULES:
        return read_rules(&a->rb, arg);
    case OPT_KW:
        if (!gp__parse_real(arg, 0, 1e9, &us)) {
            gp__cli_error("analyze", "--kernel-wait-us needs a number in 0..1e9, not '%s'", arg);
            return 2;
        }
        a->opts.kernel_wait_ns = (gp_ns)(us * 1000.0);
        return 0;
    case OPT_TABLE: {
        unsigned bit;
        if (gp_analysis_table_parse(arg, &bit) != GP_OK) {
            gp__cli_error("analyze", "unknown table '%s' (see --help)", arg);
            return 2;
        }
        a->tables |= bit;
        return 0;
    }
    case OPT_GPN: {
        long n;
        if (!gp__cli_parse_long("analyze", "--gpus-per-node", arg, 1, 1000000, &n))
            return 2;
        a->opts.gpus_per_node = (int32_t)n;
        return 0;
    }
    case OPT_CSV:
        a->csv_dir = arg;
        return 0;
    case OPT_PARTIAL:
        a->partial = arg;
        return 0;
    default:
        return take_cp_option(a, id, arg);
    }
}

/* Options and the one operand; -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, analyze_args *a, gp__cli_common *o, gp_read_opts *rd)
{
    static const gp__cli_spec spec = {.cmd = "analyze",
                                      .usage = usage,
                                      .opts = analyze_opts,
                                      .handle = take_option,
                                      .top_min = 1,
                                      .top_max = 100000};
    int first;
    int rc = gp__cli_parse_options(&spec, a, argc, argv, o, &first);
    if (rc >= 0)
        return rc;
    if (first != argc - 1) {
        gp__cli_error("analyze", first >= argc ? "no input (give a trace file or a directory)"
                                               : "give exactly one trace file or directory");
        usage(stderr);
        return 2;
    }
    if (o->json && a->csv_dir) {
        gp__cli_error("analyze", "--json and --csv are exclusive");
        return 2;
    }
    if (o->top_given)
        a->opts.top_kernels = (size_t)o->top;
    if (o->threads >= 0)
        rd->threads = a->opts.threads = (int)o->threads;
    rd->quiet = o->quiet;
    a->opts.rules = a->rb.rules;
    a->opts.n_rules = a->rb.n;
    if (!a->tables)
        a->tables = GP_AT_ALL;
    return -1;
}

/* Text or JSON to -o FILE (atomically) or stdout. */
static int write_output(const gp_analysis *an, unsigned tables, const gp__cli_common *o)
{
    gp_error err = {0};
    gp__afile f;
    FILE *fp = stdout;
    if (o->output) {
        if (gp__afile_open(&f, o->output, &err) != GP_OK) {
            fprintf(stderr, "gpuprof analyze: %s\n", err.msg);
            return 2;
        }
        fp = f.fp;
    }
    gp_status st =
        o->json ? gp_analysis_render_json(an, tables, fp) : gp_analysis_render_text(an, tables, fp);
    if (!o->output)
        return gp__cli_finish_stdout("analyze", st);
    if (st == GP_OK)
        st = gp__afile_commit(&f, &err);
    else
        gp__afile_abort(&f);
    if (st != GP_OK)
        gp__cli_error("analyze", "writing %s failed: %s", o->output, gp_strerror(st));
    return gp_status_exit_code(st);
}

int gp__cli_analysis_out(const gp_analysis *an, unsigned tables, const char *csv_dir,
                         const gp__cli_common *o)
{
    return csv_dir ? write_csv_dir(an, tables, csv_dir) : write_output(an, tables, o);
}

int gp__cmd_analyze(int argc, char **argv)
{
    analyze_args a = {.csv_dir = NULL};
    gp_analyze_opts_init(&a.opts);
    a.opts.critical_path_overlay = false; /* tables only: no timeline or overlay is drawn here */
    gp_read_opts rd;
    gp_read_opts_init(&rd);
    rd.keep_op_shapes = true; /* the op roofline rule (advise_ops.c) */
    gp__cli_common o;
    gp_job *job = NULL;
    gp_analysis *an = NULL;
    int rc = parse_args(argc, argv, &a, &o, &rd);
    if (rc >= 0)
        goto done;
    rc = 2;
    gp_error err = {0};
    if (!a.partial && gp__mpi_world() > 0) { /* under mpirun (mpi_job.c) */
        rc = gp__mpi_analyze(argv[argc - 1], &rd, &a.opts, a.tables, a.csv_dir, &o);
        goto done;
    }
    int task, tasks = a.partial ? 0 : gp__srun_tasks(&task);
    if (tasks > 1) { /* under srun without MPI (srun_job.c) */
        rc = gp__srun_analyze(argv[argc - 1], task, tasks, &rd, &a.opts, a.tables, a.csv_dir, &o);
        goto done;
    }
    if (gp__cli_read_job("analyze", argv[argc - 1], &rd, o.progress, true, &job) != GP_OK)
        goto done;
    if (a.partial) { /* cmd_merge.c */
        rc = gp__cli_write_partial(job, &a.opts, a.partial);
        goto done;
    }
    gp_status st = gp_analyze_job(job, &a.opts, &an, &err);
    if (st != GP_OK) {
        fprintf(stderr, "gpuprof analyze: %s\n", err.msg[0] ? err.msg : gp_strerror(st));
        rc = st == GP_EINVAL ? 2 : 1;
        goto done;
    }
    rc = gp__cli_analysis_out(an, a.tables, a.csv_dir, &o);
done:
    gp_analysis_free(an);
    gp_job_free(job);
    for (size_t i = 0; i < a.rb.n_owned; i++)
        free(a.rb.owned[i]);
    free(a.rb.owned);
    free(a.rb.rules);
    return rc;
}
