#include "core/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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
        snprintf(f->tmp, sizeof f->tmp, "%s.tmp.%s", f->path, suffix);
        int fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
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

gp_status gp__afile_open(gp__afile *f, const char *path, gp_error *err)
{
    memset(f, 0, sizeof *f);
    if (strlen(path) >= sizeof f->path)
        return gp_error_set(err, GP_EINVAL, "%s: path too long", path);
    snprintf(f->path, sizeof f->path, "%s", path);
    int fd = create_tmp(f);
    if (fd < 0) {
        int saved = errno;
        f->tmp[0] = '\0';
        return gp_error_set(err, GP_EIO, "%s: cannot create temporary file: %s", path,
                            strerror(saved));
    }
    /* Replacing a file keeps its permissions; a new file gets 0666 minus the umask. */
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
        (void)fchmod(fd, st.st_mode & 07777);
    f->fp = fdopen(fd, "wb");
    if (!f->fp) {
        close(fd);
        unlink(f->tmp);
        return gp_error_set(err, GP_EIO, "%s: %s", path, strerror(errno));
    }
    return GP_OK;
}

gp_status gp__afile_commit(gp__afile *f, gp_error *err)
{
    if (!f->fp)
        return gp_error_set(err, GP_ESTATE, "%s: not open", f->path);
    int failed = ferror(f->fp) || fflush(f->fp) != 0 || fsync(fileno(f->fp)) != 0;
    int saved = errno;
    if (fclose(f->fp) != 0 && !failed) {
        failed = 1;
        saved = errno;
    }
    f->fp = NULL;
    if (failed) {
        unlink(f->tmp);
        return gp_error_set(err, GP_EIO, "%s: write failed: %s", f->path, strerror(saved));
    }
    if (rename(f->tmp, f->path) != 0) {
        saved = errno;
        unlink(f->tmp);
        return gp_error_set(err, GP_EIO, "%s: cannot rename into place: %s", f->path,
                            strerror(saved));
    }
    f->tmp[0] = '\0';
    sync_dir_of(f->path);
    return GP_OK;
}

void gp__afile_abort(gp__afile *f)
{
    if (f->fp) {
        fclose(f->fp);
        f->fp = NULL;
    }
    if (f->tmp[0]) {
        unlink(f->tmp);
        f->tmp[0] = '\0';
    }
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
