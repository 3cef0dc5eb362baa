/* `gpuprof trace` launcher: environment, fork/exec, wait, trace collection (see launch.h). */
#include "produce/tracer/launch.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "core/msort.h"
#include "core/atomic_file.h"
#include "core/util.h"
#include "produce/tracer/tracer_paths.h"

/* snprintf that reports truncation (paths that do not fit are skipped or refused). */
static bool fmt(char *out, size_t cap, const char *f, ...) GP_PRINTF(3, 4);
static bool fmt(char *out, size_t cap, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(out, cap, f, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < cap;
}

static bool usable(const char *path)
{
    return path && *path && access(path, R_OK) == 0;
}

gp_status gp__trace_find_inject(char *out, size_t cap, gp_error *err)
{
    char cand[5][PATH_MAX];
    size_t n = 0;
    const char *env = getenv("GP_INJECT_LIBRARY");
    if (env && *env) {
        if (!usable(env))
            return gp_error_set(err, GP_ENOENT, "GP_INJECT_LIBRARY=%s: not readable", env);
        fmt(cand[n++], PATH_MAX, "%s", env);
    } else {
        char exe[PATH_MAX];
        ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (len > 0) {
            exe[len] = '\0';
            char *slash = strrchr(exe, '/');
            if (slash)
                *slash = '\0';
            fmt(cand[n++], PATH_MAX, "%s/libgpuprof_inject.so", exe);
            fmt(cand[n++], PATH_MAX, "%s/../lib/libgpuprof_inject.so", exe);
            fmt(cand[n++], PATH_MAX, "%s/../lib64/libgpuprof_inject.so", exe);
        }
        fmt(cand[n++], PATH_MAX, "%s", GP_INJECT_BUILD_PATH);
        fmt(cand[n++], PATH_MAX, "%s", GP_INJECT_INSTALL_PATH);
    }
    for (size_t i = 0; i < n; i++) {
        if (usable(cand[i])) {
            char *abs = realpath(cand[i], NULL);
            if (!abs)
                continue;
            if (strlen(abs) >= cap) {
                free(abs);
                return gp_error_set(err, GP_ELIMIT, "path too long: %s", cand[i]);
            }
            memcpy(out, abs, strlen(abs) + 1);
            free(abs);
            return GP_OK;
        }
    }
    if (!GP_TRACER_BUILT)
        return gp_error_set(err, GP_ENOTSUP,
                            "this gpuprof was built without the CUDA tracer (no CUPTI headers at "
                            "build time); rebuild with a CUDA toolkit or set GP_INJECT_LIBRARY");
    return gp_error_set(err, GP_ENOENT,
                        "libgpuprof_inject.so not found next to gpuprof, in the build tree (%s) "
                        "or in %s; set GP_INJECT_LIBRARY",
                        GP_INJECT_BUILD_PATH, GP_INJECT_INSTALL_PATH);
}

static volatile sig_atomic_t child_pid;

static void forward_signal(int sig)
{
    if (child_pid > 0)
        kill((pid_t)child_pid, sig);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && strcmp(s + n - m, suffix) == 0;
}

/* ".json.gz" when the output is to be gzip-compressed (the writer compresses by name), else
 * ".json".
 */
static const char *trace_suffix(const char *output)
{
    return ends_with(output, ".gz") ? ".json.gz" : ".json";
}

/* Splits "dir/name.json[.gz]" into the folder (for the temporary folder) and the stem "dir/name".
 * Standard output ("-") has its temporary folder in $TMPDIR (else /tmp).
 */
static void split_output(const char *out, char *dir, size_t dcap, char *stem, size_t scap)
{
    if (strcmp(out, "-") == 0) {
        const char *t = getenv("TMPDIR");
        fmt(dir, dcap, "%s", t && *t ? t : "/tmp");
        fmt(stem, scap, "%s/gpuprof_trace", dir);
        return;
    }
    const char *slash = strrchr(out, '/');
    if (slash)
        fmt(dir, dcap, "%.*s", (int)(slash - out == 0 ? 1 : slash - out), out);
    else
        fmt(dir, dcap, ".");
    size_t len = strlen(out);
    if (ends_with(out, ".json.gz"))
        len -= 8;
    else if (ends_with(out, ".gz"))
        len -= 3;
    else if (ends_with(out, ".json"))
        len -= 5;
    fmt(stem, scap, "%.*s", (int)len, out);
}

/* A trace file name in the hidden folder: "<pid>.json" or "<pid>.json.gz". */
static bool is_pid_trace_name(const char *nm, const char *suffix)
{
    size_t len = strlen(nm), slen = strlen(suffix);
    return len > slen && strcmp(nm + len - slen, suffix) == 0 &&
           strspn(nm, "0123456789") == len - slen;
}

#define LOCK_NAME ".lock" /* held (flock) by the run that owns the folder */

/* Adds the trace files of the folder `folder` to *paths. */
static gp_status add_traces_of(const char *folder, char ***paths, size_t *n, size_t *cap)
{
    DIR *d = opendir(folder);
    if (!d)
        return GP_OK;
    gp_status s = GP_OK;
    struct dirent *e;
    while (s == GP_OK && (e = readdir(d)) != NULL) {
        if (!is_pid_trace_name(e->d_name, ".json") && !is_pid_trace_name(e->d_name, ".json.gz"))
            continue;
        char path[PATH_MAX];
        char **slot = NULL;
        if (fmt(path, sizeof path, "%s/%s", folder, e->d_name) &&
            (!(slot = GP_PUSH(*paths, *n, *cap)) || !(*slot = strdup(path)))) {
            if (slot)
                (*n)--;
            s = GP_ENOMEM;
        }
    }
    closedir(d);
    return s;
}

gp_status gp__trace_find_earlier(const char *output, char ***paths, size_t *n)
{
    *paths = NULL;
    *n = 0;
    size_t cap = 0;
    char dir[PATH_MAX], stem[PATH_MAX];
    split_output(output ? output : "gpuprof_trace.json", dir, sizeof dir, stem, sizeof stem);
    DIR *d = opendir(dir);
    if (!d)
        return GP_OK;
    gp_status s = GP_OK;
    struct dirent *e;
    while (s == GP_OK && (e = readdir(d)) != NULL) {
        char folder[PATH_MAX], lock[PATH_MAX + 8];
        if (strncmp(e->d_name, ".gpuprof-trace.", 15) != 0 ||
            !fmt(folder, sizeof folder, "%s/%s", dir, e->d_name))
            continue;
        fmt(lock, sizeof lock, "%s/" LOCK_NAME, folder);
        int fd = open(lock, O_RDONLY | O_CLOEXEC);
        bool live = fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) != 0; /* a run in progress */
        if (fd >= 0)
            close(fd);
        if (!live)
            s = add_traces_of(folder, paths, n, &cap);
    }
    closedir(d);
    if (s == GP_OK && *n > 1)
        gp__msort(*paths, *n, sizeof **paths, cmp_str);
    if (s != GP_OK) {
        gp__trace_paths_free(*paths, *n);
        *paths = NULL;
        *n = 0;
    }
    return s;
}

void gp__trace_paths_free(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

/* Whether a single trace goes to output through gp__afile instead of a rename: standard output,
 * and what must not be replaced by a file (a FIFO, a device, a socket, a symbolic link). */
static bool written_through(const char *output)
{
    struct stat st;
    return strcmp(output, "-") == 0 ||
           (lstat(output, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode));
}

/* Copies the file from to output through gp__afile (atomically at a link's target, straight into
 * a FIFO or device, flushed to standard output). */
static gp_status copy_to(const char *from, const char *output, gp_error *err)
{
    FILE *in = fopen(from, "rb");
    if (!in)
        return gp_error_set(err, GP_EIO, "%s: %s", from, strerror(errno));
    gp__afile af;
    gp_status s = gp__afile_open(&af, output, err);
    if (s == GP_OK) {
        char buf[1 << 16];
        size_t got;
        while ((got = fread(buf, 1, sizeof buf, in)) > 0)
            if (fwrite(buf, 1, got, af.fp) != got)
                break;
        if (ferror(in) || ferror(af.fp)) {
            gp__afile_abort(&af);
            s = gp_error_set(err, GP_EIO, "%s: cannot write the trace: %s", af.path,
                             strerror(errno));
        } else {
            s = gp__afile_commit(&af, err);
        }
    }
    fclose(in);
    return s;
}

/* Moves the finished traces from tmp to their final names, or (written_through) copies the one
 * trace to output and keeps it in tmp to be read back (res->scratch); with output "-" and several
 * traces, leaves them all in tmp (res->kept). Removes leftovers, and tmp when nothing stays. */
static gp_status collect(const char *tmp, const char *output, gp__trace_launch_result *res,
                         gp_error *err)
{
    DIR *d = opendir(tmp);
    if (!d)
        return gp_error_set(err, GP_EIO, "%s: %s", tmp, strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    gp_status s = GP_OK;
    struct dirent *e;
    const char *suffix = trace_suffix(output);
    while ((e = readdir(d)) != NULL) {
        const char *nm = e->d_name;
        char path[PATH_MAX];
        fmt(path, sizeof path, "%s/%s", tmp, nm);
        if (nm[0] == '.')
            continue;
        if (is_pid_trace_name(nm, suffix)) {
            char **slot = GP_PUSH(names, n, cap);
            if (!slot || !(*slot = strdup(nm))) {
                s = GP_ENOMEM;
                break;
            }
        } else {
            unlink(path); /* a temporary file of a writer that was killed mid-write */
        }
    }
    closedir(d);
    if (s == GP_OK && n > 0) {
        gp__msort(names, n, sizeof *names, cmp_str);
        res->traces = calloc(n, sizeof *res->traces);
        if (!res->traces)
            s = GP_ENOMEM;
    }
    bool stay = n > 1 && strcmp(output, "-") == 0; /* one stream cannot take several traces */
    bool through = n == 1 && written_through(output), keep_files = false;
    char dir[PATH_MAX], stem[PATH_MAX];
    split_output(output, dir, sizeof dir, stem, sizeof stem);
    for (size_t i = 0; s == GP_OK && i < n; i++) {
        char from[PATH_MAX], to[PATH_MAX];
        fmt(from, sizeof from, "%s/%s", tmp, names[i]);
        if (stay || through)
            fmt(to, sizeof to, "%s", from);
        else if (n == 1)
            fmt(to, sizeof to, "%s", output);
        else
            fmt(to, sizeof to, "%s.%s", stem, names[i]);
        if (through && (s = copy_to(from, output, err)) != GP_OK) {
            gp_error_note(err, "the trace is kept at %s", from);
            keep_files = true;
            break;
        }
        if (!stay && !through && rename(from, to) != 0) {
            s = gp_error_set(err, GP_EIO, "cannot move %s to %s: %s", from, to, strerror(errno));
            break;
        }
        if (!(res->traces[res->n_traces++] = strdup(to)))
            s = GP_ENOMEM;
    }
    if (s == GP_OK && (stay || through) && !(res->scratch = strdup(tmp)))
        s = GP_ENOMEM;
    res->kept = s == GP_OK && stay;
    keep_files |= res->scratch != NULL;
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX];
        fmt(path, sizeof path, "%s/%s", tmp, names[i]);
        if (!keep_files)
            unlink(path); /* only left when a move failed */
        free(names[i]);
    }
    free(names);
    char lock[PATH_MAX + 8];
    fmt(lock, sizeof lock, "%s/" LOCK_NAME, tmp);
    unlink(lock);
    if (!keep_files)
        rmdir(tmp);
    return s;
}

gp_status gp__trace_launch(const gp__trace_launch_opts *opts, gp__trace_launch_result *res,
                           gp_error *err)
{
    memset(res, 0, sizeof *res);
    if (!opts->argv || !opts->argv[0])
        return gp_error_set(err, GP_EINVAL, "no program to run (usage: gpuprof trace -- ./app)");
    char inject[PATH_MAX];
    gp_status s = gp__trace_find_inject(inject, sizeof inject, err);
    if (s != GP_OK)
        return s;
    const char *output = opts->output ? opts->output : "gpuprof_trace.json";
    if (!*output || strlen(output) > PATH_MAX - 64)
        return gp_error_set(err, GP_EINVAL, "output path is empty or too long");
    char dir[PATH_MAX], stem[PATH_MAX], tmp[PATH_MAX + 32];
    split_output(output, dir, sizeof dir, stem, sizeof stem);
    fmt(tmp, sizeof tmp, "%s/.gpuprof-trace.XXXXXX", dir);
    if (!mkdtemp(tmp))
        return gp_error_set(err, GP_EIO, "cannot create a folder in %s for the trace: %s", dir,
                            strerror(errno));
    /* The folder is this run's while the lock is held: a later run that finds it unlocked knows
     * the run was killed, and reports the traces left in it (gp__trace_find_earlier). */
    char lock[PATH_MAX + 48];
    fmt(lock, sizeof lock, "%s/" LOCK_NAME, tmp);
    int lock_fd = open(lock, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (lock_fd >= 0)
        (void)flock(lock_fd, LOCK_EX);
    char tmpl[PATH_MAX + 64];
    char *abs_tmp = realpath(tmp, NULL);
    fmt(tmpl, sizeof tmpl, "%s/%%p%s", abs_tmp ? abs_tmp : tmp, trace_suffix(output));
    free(abs_tmp);

    /* Ignore the terminal's SIGINT/SIGQUIT (the program gets them too), forward SIGTERM/SIGHUP. */
    struct sigaction ign = {.sa_handler = SIG_IGN}, fwd = {.sa_handler = forward_signal};
    struct sigaction old_int, old_quit, old_term, old_hup;
    sigemptyset(&ign.sa_mask);
    sigemptyset(&fwd.sa_mask);
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    sigaction(SIGTERM, &fwd, &old_term);
    sigaction(SIGHUP, &fwd, &old_hup);

    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        s = gp_error_set(err, GP_EIO, "fork: %s", strerror(errno));
        unlink(lock);
        rmdir(tmp);
        goto done;
    }
    if (pid == 0) {
#ifdef __linux__
        /* Dies with gpuprof: SIGTERM, on which the injection library writes its trace. */
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) == 0 && getppid() != parent)
            _exit(128 + SIGTERM); /* gpuprof died before the prctl */
#else
        (void)parent;
#endif
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGQUIT, &old_quit, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        sigaction(SIGHUP, &old_hup, NULL);
        /* The trace goes to standard output: the program's own output goes to stderr. */
        if (strcmp(output, "-") == 0 && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
            _exit(127);
        setenv("CUDA_INJECTION64_PATH", inject, 1);
        setenv("GP_TRACE_OUTPUT", tmpl, 1);
        setenv("GP_TRACE_QUIET", "1", 1);
        if (opts->kinds)
            setenv("GP_TRACE_KINDS", opts->kinds, 1);
        else
            unsetenv("GP_TRACE_KINDS");
        char num[32];
        if (opts->buffer_mb) {
            fmt(num, sizeof num, "%u", opts->buffer_mb);
            setenv("GP_TRACE_BUFFER_MB", num, 1);
        }
        if (opts->flush_ms >= 0) {
            fmt(num, sizeof num, "%d", opts->flush_ms);
            setenv("GP_TRACE_FLUSH_MS", num, 1);
        }
        /* NVTX ranges: CUPTI's own NVTX injection turns them into MARKER records. */
        const char *cupti = getenv("GP_CUPTI_LIBRARY");
        if (!cupti || !*cupti)
            cupti = GP_CUPTI_LIBRARY_PATH;
        const char *nv = getenv("NVTX_INJECTION64_PATH");
        bool want_nvtx = !opts->kinds || strstr(opts->kinds, "nvtx") || strstr(opts->kinds, "all");
        if (want_nvtx && (!nv || !*nv) && cupti && *cupti)
            setenv("NVTX_INJECTION64_PATH", cupti, 1);
        execvp(opts->argv[0], opts->argv);
        fprintf(stderr, "gpuprof trace: cannot run %s: %s\n", opts->argv[0], strerror(errno));
        _exit(127);
    }
    child_pid = pid;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            s = gp_error_set(err, GP_EIO, "waitpid: %s", strerror(errno));
            goto done;
        }
    }
    child_pid = 0;
    if (WIFSIGNALED(status)) {
        res->term_signal = WTERMSIG(status);
        res->exit_code = 128 + res->term_signal;
    } else {
        res->exit_code = WEXITSTATUS(status);
    }
    s = collect(tmp, output, res, err);
done:
    if (lock_fd >= 0)
        close(lock_fd);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    if (s != GP_OK)
        gp__trace_launch_result_free(res);
    return s;
}

void gp__trace_launch_result_free(gp__trace_launch_result *res)
{
    for (size_t i = 0; i < res->n_traces; i++) {
        if (res->scratch && !res->kept)
            unlink(res->traces[i]); /* the copy read back of a trace written through */
        free(res->traces[i]);
    }
    if (res->scratch && !res->kept)
        rmdir(res->scratch);
    free(res->scratch);
    res->scratch = NULL;
    res->kept = false;
    free(res->traces);
    res->traces = NULL;
    res->n_traces = 0;
}
