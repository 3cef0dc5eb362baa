/* Command-line options of the gpuprof subcommands: one way to declare them (a table of
 * gp__cli_opt), one function that parses them (gp__cli_parse_options), the options several
 * commands share (GP__CLI_OPT_*), handled in one place into a gp__cli_common, and one number
 * parser (core/parse.h: gp__parse_int / gp__parse_uint / gp__parse_real / gp__parse_duration_ns)
 * with the CLI's wrappers that print a message naming the option. docs/internals/cli.md. */
#ifndef GP_CLI_OPTIONS_H
#define GP_CLI_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/parse.h"
#include "gpuprof/trace.h"

/* Ids of the shared options; a command's own options use their short letter or an id from
 * GP__CLI_ID_OWN up. */
enum {
    GP__CLI_ID_HELP = 1000,
    GP__CLI_ID_QUIET,
    GP__CLI_ID_PROGRESS,
    GP__CLI_ID_JSON,
    GP__CLI_ID_OUTPUT,
    GP__CLI_ID_TITLE,
    GP__CLI_ID_TOP,
    GP__CLI_ID_THREADS,
    GP__CLI_ID_OWN = 256, /* first id of a command's own long-only options (below 1000) */
};

/* The option is a monitor-configuration option: a missing value says "<opt> needs a value". */
#define GP__CLI_SAY_NEEDS_VALUE 1u

/* One option: its long name (without "--"), its short letter or 0, whether it takes a value, the
 * id the handler sees, and GP__CLI_* flags. A table ends with {0}. */
typedef struct gp__cli_opt {
    const char *name;
    int short_name;
    bool has_arg;
    int id;
    unsigned flags;
} gp__cli_opt;

/* Table entries: a long option that takes a value (ARG) or not (FLAG), handed to the handler
 * as id; the _S forms also have a short letter, which is then the id. */
#define GP__CLI_OPTION(name, short_name, has_arg, id, flags)                                       \
    {                                                                                              \
        name, short_name, has_arg, id, flags                                                       \
    }
#define GP__CLI_ARG(name, id) GP__CLI_OPTION(name, 0, true, id, 0)
#define GP__CLI_FLAG(name, id) GP__CLI_OPTION(name, 0, false, id, 0)
#define GP__CLI_ARG_S(name, letter) GP__CLI_OPTION(name, letter, true, letter, 0)
#define GP__CLI_FLAG_S(name, letter) GP__CLI_OPTION(name, letter, false, letter, 0)
#define GP__CLI_END GP__CLI_OPTION(NULL, 0, false, 0, 0)

/* The shared options. A command lists the ones it takes, in the order of its --help. */
#define GP__CLI_OPT_HELP GP__CLI_OPTION("help", 'h', false, GP__CLI_ID_HELP, 0)
#define GP__CLI_OPT_QUIET GP__CLI_OPTION("quiet", 'q', false, GP__CLI_ID_QUIET, 0)
#define GP__CLI_OPT_PROGRESS GP__CLI_FLAG("progress", GP__CLI_ID_PROGRESS)
#define GP__CLI_OPT_JSON GP__CLI_FLAG("json", GP__CLI_ID_JSON)
#define GP__CLI_OPT_OUTPUT GP__CLI_OPTION("output", 'o', true, GP__CLI_ID_OUTPUT, 0)
#define GP__CLI_OPT_TITLE GP__CLI_ARG("title", GP__CLI_ID_TITLE)
#define GP__CLI_OPT_TOP GP__CLI_OPTION("top", 'n', true, GP__CLI_ID_TOP, 0) /* -n, --top N */
#define GP__CLI_OPT_TOP_LONG GP__CLI_ARG("top", GP__CLI_ID_TOP)             /* --top N only */
#define GP__CLI_OPT_THREADS GP__CLI_ARG("threads", GP__CLI_ID_THREADS)

/* What the shared options set. */
typedef struct gp__cli_common {
    bool quiet, progress, json;
    const char *output, *title;
    long top;     /* valid when top_given */
    long threads; /* -1 when not given */
    bool top_given;
} gp__cli_common;

/* How a command parses: its name, usage printer, option table and the handler of its own options
 * (returns 0, or 2 after printing why). getopt mode (the default) is GNU getopt_long: options
 * anywhere, "--opt=value", unique abbreviations, glibc's messages, then the usage on stderr.
 * exact mode takes argv[i] as it is ("-o" or "--output", the value in the next argument) and says
 * "unknown or incomplete option 'X' (see --help)" otherwise; with stop_at_operand it stops at the
 * first argument without a leading '-' or after "--" (`gpuprof trace -- ./app`), without it every
 * argument must be an option. */
typedef struct gp__cli_spec {
    const char *cmd;
    void (*usage)(FILE *fp);
    const gp__cli_opt *opts;
    int (*handle)(void *ctx, int id, char *arg);
    long top_min, top_max; /* range of --top */
    bool exact, stop_at_operand;
} gp__cli_spec;

/* Parses argv[1..argc-1] by spec: shared options into *c, the others through
 * spec->handle(ctx, ...), in the order given. Returns -1 when the command goes on (*first_operand:
 * index of the first argument that is not an option), 0 after printing the usage for --help, 2
 * after printing an error. */
int gp__cli_parse_options(const gp__cli_spec *spec, void *ctx, int argc, char **argv,
                          gp__cli_common *c, int *first_operand);

/* gp__cli_parse_options for a command that takes one trace or job directory: also an error and
 * the usage on stderr (2) when the operands are not exactly one. Returns -1 to go on (the input
 * is argv[*first_operand]), else the exit code. */
int gp__cli_parse_one_input(const gp__cli_spec *spec, int argc, char **argv, gp__cli_common *c,
                            int *first_operand);

/* Read options from the shared ones: gp_read_opts_init, then --quiet. */
void gp__cli_read_opts(const gp__cli_common *c, gp_read_opts *rd);

/* The number parser is core/parse.h; the wrappers below print the CLI's message. */
/* gp__parse_int in [min, max]; on failure prints "gpuprof <cmd>: <opt> needs a whole number in
 * min..max, not 'text'" and returns false. */
bool gp__cli_parse_long(const char *cmd, const char *opt, const char *text, long min, long max,
                        long *out);
/* gp__parse_uint; on failure prints "gpuprof <cmd>: <opt> needs a whole number <= max, not
 * 'text'". */
bool gp__cli_parse_ulong(const char *cmd, const char *opt, const char *text, unsigned long long max,
                         unsigned long long *out);
/* gp__parse_real; on failure prints "gpuprof <cmd>: <opt> needs a number in [lo, hi], not
 * 'text'". A percent option divides the result by 100. */
bool gp__cli_parse_real(const char *cmd, const char *opt, const char *text, double lo, double hi,
                        double *out);

#endif
