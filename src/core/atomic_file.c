#include "core/atomic_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* ---- temporary files to remove on a signal ---------------------------------------------------
 * A fixed table (a signal handler can neither allocate nor lock): state 0 free, 1 being filled,
 * 2 live (the handler unlinks its name). More than REG_SLOTS files at once go unregistered. */
#define REG_SLOTS 16
static char reg_names[REG_SLOTS][4096 + 32];
static atomic_int reg_state[REG_SLOTS];

static int reg_add(const char *tmp)
{
    for (int i = 0; i < REG_SLOTS; i++) {
        int expected = 0;
        if (atomic_compare_exchange_strong(&reg_state[i], &expected, 1)) {
            snprintf(reg_names[i], sizeof reg_names[i], "%s", tmp);
            atomic_store(&reg_state[i], 2);
            return i;
        }
    }
    return -1;
}

static void reg_del(gp__afile *f)
{
    if (f->slot >= 0)
        atomic_store(&reg_state[f->slot], 0);
    f->slot = -1;
}

/* Only async-signal-safe calls: unlink, sigaction (SA_RESETHAND did it), raise. */
static void on_fatal_signal(int sig)
{
    int saved = errno;
    for (int i = 0; i < REG_SLOTS; i++)
        if (atomic_load(&reg_state[i]) == 2)
            (void)unlink(reg_names[i]);
    errno = saved;
    raise(sig); /* the default action now: pending until this handler returns */
}

void gp__afile_cleanup_on_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sa.sa_flags = (int)SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        /* A signal the shell made us ignore (nohup) stays ignored. */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
    }
}

/* Creates "<path>.tmp.<random>" exclusively with mode 0666 so that the kernel applies the umask,
 * as for any new file (mkstemp would create it 0600). */
static int create_tmp(gp__afile *f)
{
    static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    for (int attempt = 0; attempt < 100; attempt++) {
        uint64_t r = 0;
        if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            r = (uint64_t)ts.tv_nsec * 6364136223846793005ULL ^ (uint64_t)getpid() << 20 ^
                (uint64_t)attempt;
        }
        char suffix[9];
        for (int i = 0; i < 8; i++, r /= 36)
            suffix[i] = digits[r % 36];
        suffix[8] = '\0';
        snprintf(f->tmp, sizeof f->tmp, "%s.tmp.%s", f->target, suffix);
        /* Registered before it exists: a signal between open and registration would leave the
         * file behind (the handler unlinking a name not yet created is harmless). */
        reg_del(f);
        f->slot = reg_add(f->tmp);
        int fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0)
            return fd;
        int saved = errno;
        reg_del(f); /* not ours: another file of that name exists, or none was created */
        errno = saved;
        if (saved != EEXIST)
            return -1;
    }
    return -1;
}

/* fsync of the directory holding path, so that the rename itself survives a crash. Best effort: a
 * directory that cannot be opened (no read permission) or synced (some file systems) is skipped,
 * the data itself having been synced already. */
static void sync_dir_of(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    (void)fsync(fd);
    close(fd);
}

/* Follows symbolic links from path (at most 40) into out: the file that writing through path would
 * write. 0, or an errno value (ELOOP, ENAMETOOLONG, readlink's). */
static int follow_links(const char *path, char *out, size_t cap)
{
    if (strlen(path) >= cap)
        return ENAMETOOLONG;
    snprintf(out, cap, "%s", path);
    for (int hops = 0; hops < 40; hops++) {
        struct stat st;
        if (lstat(out, &st) != 0 || !S_ISLNK(st.st_mode))
            return 0;
        char link[4096], next[8192];
        ssize_t n = readlink(out, link, sizeof link - 1);
        if (n < 0)
            return errno;
        link[n] = '\0';
        const char *slash = strrchr(out, '/');
        if (link[0] == '/' || !slash)
            snprintf(next, sizeof next, "%s", link);
        else
            snprintf(next, sizeof next, "%.*s/%s", (int)(slash - out), out, link);
        if (strlen(next) >= cap)
            return ENAMETOOLONG;
        snprintf(out, cap, "%s", next);
    }
    return ELOOP;
}

/* Removes "<target>.tmp.XXXXXXXX" files that no writer holds locked: what a killed writer left. */
static void remove_stale_tmp(const char *target)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", target);
    char *slash = strrchr(dir, '/');
    const char *base = slash ? target + (slash - dir) + 1 : target;
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    size_t blen = strlen(base);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        if (strncmp(n, base, blen) != 0 || strncmp(n + blen, ".tmp.", 5) != 0 ||
            strlen(n + blen + 5) != 8 ||
            strspn(n + blen + 5, "abcdefghijklmnopqrstuvwxyz0123456789") != 8)
            continue;
        int fd = openat(dirfd(d), n, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
            continue;
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0)
            (void)unlinkat(dirfd(d), n, 0);
        close(fd); /* releases the lock */
    }
    closedir(d);
}

/* Atomic mode: the temporary file, locked while it is written, registered for signal cleanup. */
static gp_status open_atomic(gp__afile *f, gp_error *err)
{
    remove_stale_tmp(f->target);
    int fd = -1;
    for (int attempt = 0; attempt < 10; attempt++) {
        fd = create_tmp(f);
        if (fd < 0)
            break;
        /* A cleaner that locked the file before us may have unlinked it: start again. */
        struct stat st;
        if (flock(fd, LOCK_EX) != 0 || (fstat(fd, &st) == 0 && st.st_nlink > 0))
            break;
        close(fd);
        fd = -1;
        errno = EAGAIN;
    }
    if (fd < 0) {
        int saved = errno;
        reg_del(f);
        f->tmp[0] = '\0';
        return gp_error_set(err, GP_EIO, "%s: cannot create temporary file: %s", f->path,
                            strerror(saved));
    }
    /* Replacing a file keeps its permissions; a new file gets 0666 minus the umask. */
    struct stat st;
    if (stat(f->target, &st) == 0 && S_ISREG(st.st_mode))
        (void)fchmod(fd, st.st_mode & 07777);
    f->fp = fdopen(fd, "wb");
    if (!f->fp) {
        int saved = errno;
        close(fd);
        gp__afile_abort(f);
        return gp_error_set(err, GP_EIO, "%s: %s", f->path, strerror(saved));
    }
    return GP_OK;
}

/* Direct mode: a device or FIFO opened for writing (a FIFO waits for its reader, as a shell
 * redirection does), a Unix socket connected to. */
static int open_direct(const char *target, const struct stat *st)
{
    if (!S_ISSOCK(st->st_mode))
        return open(target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    if (strlen(target) >= sizeof a.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(a.sun_path, target, strlen(target));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (const struct sockaddr *)&a, sizeof a) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

gp_status gp__afile_open(gp__afile *f, const char *path, gp_error *err)
{
    memset(f, 0, sizeof *f);
    f->slot = -1;
    if (strlen(path) >= sizeof f->path)
        return gp_error_set(err, GP_EINVAL, "%s: path too long", path);
    snprintf(f->path, sizeof f->path, "%s", path);
    if (strcmp(path, "-") == 0) {
        f->mode = GP__AFILE_STDOUT;
        f->fp = stdout;
        return GP_OK;
    }
    int e = follow_links(path, f->target, sizeof f->target);
    if (e)
        return gp_error_set(err, GP_EINVAL, "%s: cannot follow the link: %s", path, strerror(e));
    struct stat st;
    if (stat(f->target, &st) != 0 || S_ISREG(st.st_mode))
        return open_atomic(f, err);
    if (S_ISDIR(st.st_mode))
        return gp_error_set(err, GP_EINVAL, "%s: is a directory", path);
    f->mode = GP__AFILE_DIRECT;
    int fd = open_direct(f->target, &st);
    f->fp = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f->fp) {
        int saved = errno;
        if (fd >= 0)
            close(fd);
        return gp_error_set(err, GP_EIO, "%s: cannot open for writing: %s", path, strerror(saved));
    }
    return GP_OK;
}

/* Commit of the direct and stdout modes: flush (and close a direct file). */
static gp_status commit_in_place(gp__afile *f, gp_error *err)
{
    int failed = ferror(f->fp) || fflush(f->fp) != 0;
    int saved = errno;
    if (f->mode == GP__AFILE_DIRECT && fclose(f->fp) != 0 && !failed) {
        failed = 1;
        saved = errno;
    }
    f->fp = NULL;
    return failed ? gp_error_set(err, GP_EIO, "%s: write failed: %s", f->path, strerror(saved))
                  : GP_OK;
}

gp_status gp__afile_commit(gp__afile *f, gp_error *err)
{
    if (!f->fp)
        return gp_error_set(err, GP_ESTATE, "%s: not open", f->path);
    if (f->mode != GP__AFILE_ATOMIC)
        return commit_in_place(f, err);
    int failed = ferror(f->fp) || fflush(f->fp) != 0 || fsync(fileno(f->fp)) != 0;
    int saved = errno;
    if (fclose(f->fp) != 0 && !failed) {
        failed = 1;
        saved = errno;
    }
    f->fp = NULL;
    if (failed) {
        gp__afile_abort(f);
        return gp_error_set(err, GP_EIO, "%s: write failed: %s", f->path, strerror(saved));
    }
    if (rename(f->tmp, f->target) != 0) {
        saved = errno;
        gp__afile_abort(f);
        return gp_error_set(err, GP_EIO, "%s: cannot rename into place: %s", f->path,
                            strerror(saved));
    }
    f->tmp[0] = '\0';
    reg_del(f);
    sync_dir_of(f->target);
    return GP_OK;
}

void gp__afile_abort(gp__afile *f)
{
    if (f->fp) {
        if (f->mode == GP__AFILE_STDOUT)
            fflush(f->fp);
        else
            fclose(f->fp);
        f->fp = NULL;
    }
    if (f->tmp[0]) {
        unlink(f->tmp);
        f->tmp[0] = '\0';
    }
    reg_del(f);
}

gp_status gp__write_file_atomic(const char *path, const void *data, size_t len, gp_error *err)
{
    gp__afile f;
    gp_status s = gp__afile_open(&f, path, err);
    if (s != GP_OK)
        return s;
    if (len && fwrite(data, 1, len, f.fp) != len) {
        gp__afile_abort(&f);
        return gp_error_set(err, GP_EIO, "%s: write failed: %s", path, strerror(errno));
    }
    return gp__afile_commit(&f, err);
}

gp_status gp_write_file(const char *path, const void *data, size_t len, gp_error *err)
{
    if (!path || (len && !data))
        return gp_error_set(err, GP_EINVAL, "gp_write_file: no path or no data");
    return gp__write_file_atomic(path, data, len, err);
}
