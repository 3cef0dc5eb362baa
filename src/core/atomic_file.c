#include "core/atomic_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

gp_status gp__afile_open(gp__afile *f, const char *path, gp_error *err)
{
    memset(f, 0, sizeof *f);
    if (strlen(path) >= sizeof f->path)
        return gp_error_set(err, GP_EINVAL, "%s: path too long", path);
    snprintf(f->path, sizeof f->path, "%s", path);
    snprintf(f->tmp, sizeof f->tmp, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(f->tmp);
    if (fd < 0)
        return gp_error_set(err, GP_EIO, "%s: cannot create temporary file: %s", path,
                            strerror(errno));
    fchmod(fd, 0644);
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
