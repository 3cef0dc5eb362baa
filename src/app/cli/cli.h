/* The gpuprof command-line tool: one file per subcommand (cmd_<name>.c), each exporting
 * `int gp__cmd_<name>(int argc, char **argv)` that returns the process exit code:
 * 0 success, 1 a verdict failed (regression, alert), 2 usage or input error. */
#ifndef GP_CLI_H
#define GP_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "app/cli/options.h"
#include "core/util.h"
#include "gpuprof/analyze.h"
#include "gpuprof/core.h"
#include "gpuprof/diff.h"
#include "gpuprof/monitor.h"
#include "gpuprof/partial.h"
#include "gpuprof/trace.h"

int gp__cmd_summary(int argc, char **argv);
int gp__cmd_analyze(int argc, char **argv);
int gp__cmd_flame(int argc, char **argv);
int gp__cmd_timeline(int argc, char **argv);
int gp__cmd_report(int argc, char **argv);
int gp__cmd_diff(int argc, char **argv);
int gp__cmd_advise(int argc, char **argv);
int gp__cmd_trace(int argc, char **argv);
int gp__cmd_monitor(int argc, char **argv);
int gp__cmd_top(int argc, char **argv);
int gp__cmd_exporter(int argc, char **argv);
int gp__cmd_convert(int argc, char **argv);
int gp__cmd_serve(int argc, char **argv);
int gp__cmd_ops(int argc, char **argv);
int gp__cmd_compile(int argc, char **argv);
int gp__cmd_hta(int argc, char **argv);
int gp__cmd_memory(int argc, char **argv);
int gp__cmd_profile(int argc, char **argv);

/* The nearest of names[0..n) and of the words users of other tools type ("dashboard", "compare",
 * "holistic") to an unknown command word, as the gpuprof command line to suggest ("analyze
 * --hta"); NULL when nothing is close (suggest.c). */
const char *gp__cli_suggest(const char *word, const char *const *names, size_t n);
int gp__cmd_merge(int argc, char **argv);

/* Prints "gpuprof <cmd>: <message>" to stderr (printf-style). */
void gp__cli_error(const char *cmd, const char *fmt, ...) GP_PRINTF(2, 3);
/* True when stderr is a terminal (progress output is shown only then, or with --progress). */
bool gp__cli_stderr_is_tty(void);
/* Ends a command's output on stdout: st is the status of its writes so far; a failure there or
 * in flushing stdout prints "gpuprof <cmd>: writing the output failed: <why>". Returns the exit
 * code (0, or 2 for a failed write). */
int gp__cli_finish_stdout(const char *cmd, gp_status st);
struct gp__jw;
/* Ends the JSON object open in w (on stdout) and the line, then gp__cli_finish_stdout with the
 * writer's status. */
int gp__cli_end_json_line(const char *cmd, struct gp__jw *w);
/* After writing an output file: when s failed, prints "gpuprof <cmd>: <err->msg>", sets *rc to
 * the exit code of err->status (GP_EIO when unset) and returns false; else true. */
bool gp__cli_file_written(const char *cmd, gp_status s, const gp_error *err, int *rc);
/* What a command's page writer renders: its data (the command's own type) and the page title. */
typedef struct gp__cli_page {
    const void *data;
    const char *title;
} gp__cli_page;
/* Writes path atomically through render(ctx, fp) (gp__render_to_file); then "wrote <path><note>"
 * on stdout and gp__cli_finish_stdout, or the error as gp__cli_file_written prints it. Returns
 * the exit code. */
int gp__cli_write_file(const char *cmd, const char *path,
                       gp_status (*render)(const void *ctx, FILE *fp), const void *ctx,
                       const char *note);
/* Reads a trace or job directory for a command: sets the progress callback when progress is true,
 * prints "gpuprof <cmd>: <error>" on failure, then the reader's warnings (gp__cli_warn_read).
 * Returns the read's status; *out is the caller's on GP_OK. */
gp_status gp__cli_read_job(const char *cmd, const char *path, gp_read_opts *rd, bool progress,
                           bool ranks_note, gp_job **out);
/* The start of a command of one trace or job directory: parses argv by spec into *o
 * (gp__cli_parse_one_input), then reads the input (gp__cli_read_job; the op shapes kept when
 * keep_op_shapes) into *job. Returns -1 to go on (*input: the input's path), else the exit code:
 * 0 after --help, 2 after a usage or read error (printed). */
int gp__cli_read_one_job(const gp__cli_spec *spec, int argc, char **argv, bool keep_op_shapes,
                         gp__cli_common *o, const char **input, gp_job **job);
/* Several inputs read as one set of traces (summary, ops): each path a trace or a job directory,
 * every rank of every job in traces[], in argument order. */
typedef struct gp__cli_inputs {
    gp_job **jobs;
    size_t n_jobs;
    gp_trace **traces;
    size_t n_traces;
} gp__cli_inputs;
/* Reads paths[0..n) with gp__cli_read_job (messages printed there). Returns GP_OK, the read's
 * status, or GP_ENOMEM; free *in with gp__cli_inputs_free either way. */
gp_status gp__cli_read_inputs(const char *cmd, char *const *paths, int n, gp_read_opts *rd,
                              bool progress, gp__cli_inputs *in);
void gp__cli_inputs_free(gp__cli_inputs *in);
/* For commands that turn one input into one output file (report, timeline): true when exactly one
 * input is left in argv and -o was given; otherwise prints why (and the usage for a wrong input
 * count) and returns false. example names the output, as in "-o report.html". */
bool gp__cli_one_input_to_file(const char *cmd, int n_inputs, const char *out, const char *example,
                               void (*print_usage)(FILE *));
/* Prints to stderr what the reader counted but the library does not print: suspect values
 * (negative or absurd durations, missing dur, unknown categories) of each trace, and, when
 * ranks_note, that ranks were assigned in file order. Nothing when quiet. */
void gp__cli_warn_read(const gp_job *job, bool ranks_note, bool quiet);
/* A gp_read_opts progress callback that draws "reading trace.json: 42% (120 MB)" on stderr. */
void gp__cli_progress(void *ctx, uint64_t done, uint64_t total);

/* Long-running commands (monitor, exporter, serve) stop cleanly on SIGINT or SIGTERM: this
 * installs handlers that only set a flag, which gp__cli_stopping() reads. */
void gp__cli_catch_stop_signals(void);
bool gp__cli_stopping(void);
/* Sets the flag as a signal would (a command giving up after its setup). */
void gp__cli_request_stop(void);
/* Sleeps in 50 ms slices until a stop is requested. */
void gp__cli_wait_for_stop(void);
/* Writes "PORT\n" to path atomically (for scripts that start a server on port 0); false with the
 * error printed. */
bool gp__cli_write_port_file(const char *cmd, const char *path, unsigned port);

/* For a server that is listening: writes the port file when port_file is set, then waits for a
 * stop signal. Returns 0, or 1 when the port file could not be written (the error printed; no
 * wait then). */
int gp__cli_serve_until_stopped(const char *cmd, const char *port_file, unsigned port);

/* Monitor configuration from the command line (monitor_opts.c), shared by `monitor` and
 * `exporter`: --config FILE, --set KEY=VALUE, --level L and (where allowed) --mode M, collected
 * while parsing and applied in one place: the file first, then each setting in order. */
typedef struct gp__cli_monitor_cfg {
    const char *path;
    const char *sets[64][2];
    size_t n_sets;
} gp__cli_monitor_cfg;
enum { GP__CLI_ID_CONFIG = 900, GP__CLI_ID_SET, GP__CLI_ID_LEVEL, GP__CLI_ID_MODE };
#define GP__CLI_OPT_CONFIG                                                                         \
    GP__CLI_OPTION("config", 0, true, GP__CLI_ID_CONFIG, GP__CLI_SAY_NEEDS_VALUE)
#define GP__CLI_OPT_SET GP__CLI_OPTION("set", 0, true, GP__CLI_ID_SET, GP__CLI_SAY_NEEDS_VALUE)
#define GP__CLI_OPT_LEVEL                                                                          \
    GP__CLI_OPTION("level", 0, true, GP__CLI_ID_LEVEL, GP__CLI_SAY_NEEDS_VALUE)
#define GP__CLI_OPT_MODE GP__CLI_OPTION("mode", 0, true, GP__CLI_ID_MODE, GP__CLI_SAY_NEEDS_VALUE)
/* Takes one of those options (by its id) and its value: 0. Not one: -1. A malformed value or too
 * many settings: 2, with the error printed. */
int gp__cli_monitor_option(const char *cmd, gp__cli_monitor_cfg *mc, int id, char *value);
/* Loads the file and applies the settings to cfg; false with the error printed. */
bool gp__cli_monitor_apply(const char *cmd, const gp__cli_monitor_cfg *mc, gp_monitor_config *cfg);

/* Jobs past one process (cmd_merge.c, mpi_job.c; docs/jobs.md). */
/* Writes the analysis an to stdout or -o FILE (text, --json) or, csv_dir set, one CSV file per
 * table there (cmd_analyze.c). Returns the exit code, the error printed. */
int gp__cli_analysis_out(const gp_analysis *an, unsigned tables, const char *csv_dir,
                         const gp__cli_common *o);
/* Analyses job into a partial result written atomically to path. Returns the exit code (2 with
 * the error printed: a trace without distributedInfo.rank, an unwritable path). */
int gp__cli_write_partial(const gp_job *job, const gp_analyze_opts *opts, const char *path);
/* The size of the MPI job this process was started in: OMPI_COMM_WORLD_SIZE; in an srun step,
 * the step's size (gp__srun_tasks) when PMIX_RANK says srun started it with PMIx, or PMI_RANK /
 * PMI_FD with PMI-2 and this MPI speaks PMI-2 (Debian's Open MPI does not: 0, srun's files);
 * else PMI_SIZE or PMIX_SIZE. 0 when not under mpirun, with GPUPROF_NO_MPI set, or when gpuprof
 * was built without MPI. */
int gp__mpi_world(void);
/* gpuprof analyze DIR as one of gp__mpi_world() processes: each reads and analyses its share of
 * the rank files (dealt by size, largest first, to the least loaded process; process 0 is charged
 * for the merge), one trace at a time, and sends its partial
 * result to process 0 (MPI_Gatherv), which merges them and writes the output as
 * gp__cli_analysis_out. Returns the exit code, the same on every process (2 with the error
 * printed by process 0 when any process failed). */
int gp__mpi_analyze(const char *path, const gp_read_opts *rd, const gp_analyze_opts *opts,
                    unsigned tables, const char *csv_dir, const gp__cli_common *o);

/* A job split among k processes (job_split.c): the rank files of path (a directory's trace files
 * by name, or path itself) into *out (gp__job_files_free frees them). GP_ENOENT when there are
 * none. */
gp_status gp__job_files(const char *path, char ***out, size_t *n, gp_error *err);
void gp__job_files_free(char **files, size_t n);
/* Process me's share of files (every process deals them alike: largest first, each to the process
 * with the fewest bytes so far, process 0 charged for the merge), read and analysed one at a
 * time into one merged partial result *out (NULL when the share is empty). */
gp_status gp__job_share(char **files, size_t n, int me, int k, const gp_read_opts *rd,
                        const gp_analyze_opts *opts, gp_partial **out, gp_error *err);
/* The message a process sends process 0 (a byte 0 + p's bytes, 1 + the error text of st and err,
 * or 2: p NULL, no rank file here), *mlen its length; NULL when out of memory. */
unsigned char *gp__job_message(gp_status st, const gp_partial *p, gp_error *err, size_t *mlen);
/* Process 0: parses the k messages at all + offs[i] (lens[i] bytes; unit names their senders in
 * errors: "process", "srun task"), merges, analyses and writes them as gp__cli_analysis_out. The
 * exit code (2 with the error printed when a message carries one). */
int gp__job_root_output(const unsigned char *all, const int *lens, const int *offs, int k,
                        const char *unit, unsigned tables, const char *csv_dir,
                        const gp__cli_common *o);
/* srun without MPI (srun_job.c): the number of tasks of the srun step this process is one of
 * (SLURM_NTASKS, or SLURM_STEP_NUM_TASKS; SLURM_PROCID its task number, into *me), 0 when not
 * under srun (or with GPUPROF_NO_MPI set). */
int gp__srun_tasks(int *me);
/* gpuprof analyze DIR as task me of k srun tasks coordinated through files (docs/decisions/
 * srun.md): each task writes its message (gp__job_message) atomically to
 * GPUPROF_SRUN_DIR (default DIR/.gpuprof-srun-JOBID.STEPID); task 0 waits for all (at most
 * GPUPROF_SRUN_TIMEOUT seconds, default 600), merges and writes the output, and removes them.
 * Returns the exit code (tasks other than 0: 0 once their message is written). */
int gp__srun_analyze(const char *path, int me, int k, const gp_read_opts *rd,
                     const gp_analyze_opts *opts, unsigned tables, const char *csv_dir,
                     const gp__cli_common *o);

/* gpuprof diff of two jobs (diff_jobs.c): whether a side's runs (from n_paths inputs) are one
 * job's distinct ranks (one input, 2+ traces, each naming a distinct rank of a world of 2+); the
 * comparison rank by rank to stdout or o->output (text or o->json). Returns the exit code: 1
 * when fail_on_regression and a pair regressed, 2 with the error printed. */
bool gp__diff_is_job(const gp_trace *const *runs, size_t n, size_t n_paths);
typedef struct gp__diff_job_outputs {
    const char *html;  /* one page, a rank selector over the pairs' diff pages (or NULL) */
    const char *junit; /* one JUnit file, a test suite per pair (or NULL) */
    const char *flame; /* one differential flame graph per pair, FILE.rankN.EXT (or NULL) */
    int flame_fmt;     /* gp_flame_format */
} gp__diff_job_outputs;
int gp__diff_jobs(const gp_trace *const *base, size_t nb, const gp_trace *const *cur, size_t nc,
                  const gp_diff_opts *dopts, const gp_diff_render_opts *ro, const gp__cli_common *o,
                  const gp__diff_job_outputs *outs, bool fail_on_regression);

#endif
