/* The CLI side of `gpuprof trace`: finds the injection library, runs the program with the CUDA
 * and NVTX injection variables set, and collects the per-process traces it leaves behind.
 * Needs no CUDA headers: built into the gpuprof library in every configuration. Internal. */
#ifndef GP_TRACER_LAUNCH_H
#define GP_TRACER_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>

#include "gpuprof/core.h"

typedef struct gp__trace_launch_opts {
    /* final trace path; several processes -> <stem>.<pid>.json. "-": standard output (the
     * program's own standard output then goes to stderr); a FIFO, device or symbolic link is
     * written through (gp__afile), never replaced */
    const char *output;
    const char *kinds;  /* GP_TRACE_KINDS list, NULL = every kind */
    unsigned buffer_mb; /* activity buffer pool per process, 0 = library default (32) */
    int flush_ms;       /* periodic write period, -1 = library default (2000), 0 = off */
    char *const *argv;  /* program and arguments, NULL-terminated */
} gp__trace_launch_opts;

typedef struct gp__trace_launch_result {
    int exit_code;   /* the program's exit status, or 128 + signal */
    int term_signal; /* the signal that ended it, 0 when it exited */
    char **traces;   /* paths of the traces written, sorted (owned), to read them back */
    size_t n_traces;
    /* A temporary folder holding traces[] (owned): the copy of a trace written through to
     * standard output or a FIFO/device/link, removed by gp__trace_launch_result_free; or, when
     * kept, the traces of several processes that output "-" could not take, left there. */
    char *scratch;
    bool kept;
} gp__trace_launch_result;

/* Writes the absolute path of libgpuprof_inject.so into out. Looks at GP_INJECT_LIBRARY, then next
 * to the running gpuprof binary (and ../lib, ../lib64 from it), the build tree, the install
 * prefix. GP_ENOTSUP when this build has no tracer, GP_ENOENT (err lists the places) otherwise. */
gp_status gp__trace_find_inject(char *out, size_t cap, gp_error *err) GP_WARN_UNUSED;

/* Runs opts->argv under tracing and waits for it; SIGINT/SIGQUIT are ignored meanwhile (the
 * program gets them from the terminal) and SIGTERM/SIGHUP are forwarded to it. Should gpuprof
 * itself die (kill -9), the program gets SIGTERM (PR_SET_PDEATHSIG), on which the injection
 * library writes what it has: the traces stay in the hidden folder beside the output, which the
 * run holds locked, and gp__trace_find_earlier finds them on the next run. On GP_OK *res holds
 * the exit code and the traces (free with gp__trace_launch_result_free). Fails with GP_EINVAL or
 * GP_EIO (output folder not writable), GP_ENOTSUP / GP_ENOENT (no injection library). A program
 * that cannot be executed is not an error: exit code 127, as a shell reports it. */
gp_status gp__trace_launch(const gp__trace_launch_opts *opts, gp__trace_launch_result *res,
                           gp_error *err) GP_WARN_UNUSED;

void gp__trace_launch_result_free(gp__trace_launch_result *res);

/* The traces of earlier runs that were stopped before they could move them to their output: the
 * <pid>.json[.gz] files in the unlocked ".gpuprof-trace.*" folders beside output (NULL: the
 * default). *paths (free with gp__trace_paths_free) and *n; GP_ENOMEM, else GP_OK (a folder that
 * cannot be read holds nothing). */
gp_status gp__trace_find_earlier(const char *output, char ***paths, size_t *n) GP_WARN_UNUSED;
void gp__trace_paths_free(char **paths, size_t n);

#endif
