/* gpuprof merge PARTIAL...: the job's analysis from partial results (`gpuprof analyze --partial`),
 * byte-identical to `gpuprof analyze JOB_DIR` on the same ranks (docs/jobs.md). Also the writer
 * of a partial result for analyze --partial. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cli/cli.h"
#include "core/atomic_file.h"
#include "gpuprof/partial.h"
#include "render/analysis_tables.h"

/* Serializes p into path (atomically); on failure an error for cmd on stderr. 0, or 2 on error. */
static int save_partial(const char *cmd, const gp_partial *p, const char *path)
{
    gp_error err = {0};
    unsigned char *buf = NULL;
    size_t len = 0;
    gp__afile f;
    gp_status st = gp_partial_serialize(p, &buf, &len, &err);
    if (st == GP_OK && (st = gp__afile_open(&f, path, &err)) == GP_OK) {
        if (fwrite(buf, 1, len, f.fp) != len) {
            gp__afile_abort(&f);
            st = gp_error_set(&err, GP_EIO, "cannot write %s", path);
        } else {
            st = gp__afile_commit(&f, &err);
        }
    }
    free(buf);
    if (st != GP_OK)
        gp__cli_error(cmd, "%s", err.msg[0] ? err.msg : gp_strerror(st));
    return st == GP_OK ? 0 : 2;
}

int gp__cli_write_partial(const gp_job *job, const gp_analyze_opts *opts, const char *path)
{
    gp_error err = {0};
    gp_partial *p = NULL;
    gp_status st = gp_partial_of_job(job, opts, 0, &p, &err);
    int rc = 2;
    if (st == GP_OK)
        rc = save_partial("analyze", p, path);
    else
        gp__cli_error("analyze", "%s", err.msg[0] ? err.msg : gp_strerror(st));
    gp_partial_free(p);
    return rc;
}

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: gpuprof merge [options] PARTIAL...\n"
            "\n"
            "The job's analysis from partial results written by `gpuprof analyze --partial OUT\n"
            "RANK_TRACE` (one per rank or per group of ranks, in any order): the same bytes as\n"
            "`gpuprof analyze JOB_DIR` on those ranks. Partials of another format version, of\n"
            "another job (world size, options) or two holding one rank are refused.\n"
            "\n"
            "options:\n"
            "      --table NAME     only this table (repeatable; see gpuprof analyze --help)\n"
            "      --json           JSON output (schema gpuprof.analyze/1)\n"
            "      --csv DIR        write DIR/<table>.csv for each table\n"
            "      --partial OUT    write the merged partial result to OUT instead\n"
            "  -o, --output FILE    write the text or JSON output to FILE (atomically)\n"
            "  -h, --help           this help\n"
            "\n"
            "exit status: 0 success, 2 usage or input error (the file at fault named)\n");
}

enum { OPT_TABLE = GP__CLI_ID_OWN, OPT_CSV, OPT_PARTIAL };

static const gp__cli_opt merge_opts[] = {GP__CLI_ARG("table", OPT_TABLE),
                                         GP__CLI_OPT_JSON,
                                         GP__CLI_ARG("csv", OPT_CSV),
                                         GP__CLI_ARG("partial", OPT_PARTIAL),
                                         GP__CLI_OPT_OUTPUT,
                                         GP__CLI_OPT_HELP,
                                         GP__CLI_END};

typedef struct merge_args {
    unsigned tables;
    const char *csv_dir, *partial;
} merge_args;

static int take_option(void *ctx, int id, char *arg)
{
    merge_args *m = ctx;
    unsigned bit;
    switch (id) {
    case OPT_TABLE:
        if (gp_analysis_table_parse(arg, &bit) != GP_OK) {
            gp__cli_error("merge", "unknown table '%s' (see gpuprof analyze --help)", arg);
            return 2;
        }
        m->tables |= bit;
        return 0;
    case OPT_CSV:
        m->csv_dir = arg;
        return 0;
    default:
        m->partial = arg;
        return 0;
    }
}

/* Reads and parses the partial result at path into *out; false with the error printed. */
static bool read_partial(const char *path, gp_partial **out)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        gp__cli_error("merge", "cannot open %s: %s", path, strerror(errno));
        return false;
    }
    unsigned char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            unsigned char *nb = realloc(buf, cap = cap ? cap * 2 : 65536);
            if (!nb)
                break;
            buf = nb;
        }
        size_t got = fread(buf + len, 1, cap - len, fp);
        len += got;
        if (got == 0)
            break;
    }
    bool io_error = ferror(fp) || len == cap;
    fclose(fp);
    gp_error err = {0};
    gp_status st = io_error ? gp_error_set(&err, GP_EIO, "%s: read failed", path)
                            : gp_partial_parse(buf, len, path, out, &err);
    free(buf);
    if (st != GP_OK)
        gp__cli_error("merge", "%s", err.msg[0] ? err.msg : gp_strerror(st));
    return st == GP_OK;
}

int gp__cmd_merge(int argc, char **argv)
{
    static const gp__cli_spec spec = {
        .cmd = "merge", .usage = usage, .opts = merge_opts, .handle = take_option};
    merge_args m = {0};
    gp__cli_common o;
    int first;
    int rc = gp__cli_parse_options(&spec, &m, argc, argv, &o, &first);
    if (rc >= 0)
        return rc;
    if (first >= argc) {
        gp__cli_error("merge", "no input (give one or more partial results)");
        usage(stderr);
        return 2;
    }
    if (o.json && m.csv_dir) {
        gp__cli_error("merge", "--json and --csv are exclusive");
        return 2;
    }
    size_t n = (size_t)(argc - first);
    gp_partial **parts = calloc(n, sizeof *parts);
    gp_partial *merged = NULL;
    gp_analysis *an = NULL;
    gp_error err = {0};
    rc = 2;
    if (!parts)
        goto done;
    for (size_t i = 0; i < n; i++)
        if (!read_partial(argv[first + (int)i], &parts[i]))
            goto done;
    if (gp_partial_merge((const gp_partial *const *)parts, n, &merged, &err) != GP_OK ||
        (!m.partial && gp_partial_analysis(merged, &an, &err) != GP_OK)) {
        gp__cli_error("merge", "%s", err.msg);
        goto done;
    }
    rc = m.partial ? save_partial("merge", merged, m.partial)
                   : gp__cli_analysis_out(an, m.tables ? m.tables : GP_AT_ALL, m.csv_dir, &o);
done:
    gp_analysis_free(an);
    gp_partial_free(merged);
    for (size_t i = 0; parts && i < n; i++)
        gp_partial_free(parts[i]);
    free(parts);
    return rc;
}
