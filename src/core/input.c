#include "core/input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* zlib's gzerror() text starts with the descriptor name ("<fd:4>: "); keep only the reason. */
static const char *gz_reason(const char *msg)
{
    const char *colon = msg && msg[0] == '<' ? strstr(msg, ">: ") : NULL;
    return colon ? colon + 3 : (msg ? msg : "unknown error");
}

gp_status gp__input_open(gp__input *in, const char *path, gp_error *err)
{
    memset(in, 0, sizeof *in);
    snprintf(in->path, sizeof in->path, "%s", path);
    in->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (in->fd < 0)
        return gp_error_set(err, GP_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(in->fd, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            close(in->fd);
            in->fd = -1;
            return gp_error_set(err, GP_EIO, "%s: is a directory", path);
        }
        in->file_size = (uint64_t)st.st_size;
    }
    unsigned char magic[2] = {0, 0};
    ssize_t n = pread(in->fd, magic, 2, 0);
    if (n == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
        int fd2 = dup(in->fd);
        gzFile gz = fd2 >= 0 ? gzdopen(fd2, "rb") : NULL;
        if (!gz) {
            if (fd2 >= 0)
                close(fd2);
            close(in->fd);
            return gp_error_set(err, GP_ENOMEM, "%s: cannot start gzip decoder", path);
        }
        gzbuffer(gz, 256 * 1024);
        in->gz = gz;
        in->compressed = true;
    }
    posix_fadvise(in->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    return GP_OK;
}

void gp__input_open_mem(gp__input *in, const char *data, size_t len, const char *name)
{
    memset(in, 0, sizeof *in);
    in->fd = -1;
    in->mem = data;
    in->mem_len = len;
    in->file_size = len;
    snprintf(in->path, sizeof in->path, "%s", name ? name : "<memory>");
}

gp_status gp__input_read(gp__input *in, char *buf, size_t cap, size_t *got, gp_error *err)
{
    *got = 0;
    if (in->max_read && cap > in->max_read)
        cap = in->max_read;
    if (in->mem) {
        size_t n = in->mem_len - in->mem_pos;
        if (n > cap)
            n = cap;
        memcpy(buf, in->mem + in->mem_pos, n);
        in->mem_pos += n;
        in->consumed += n;
        *got = n;
        return GP_OK;
    }
    if (in->gz) {
        size_t total = 0;
        while (total < cap) {
            unsigned want = cap - total > (1u << 30) ? (1u << 30) : (unsigned)(cap - total);
            int n = gzread((gzFile)in->gz, buf + total, want);
            if (n < 0) {
                int zerr = 0;
                const char *msg = gz_reason(gzerror((gzFile)in->gz, &zerr));
                return gp_error_set(err, GP_EPARSE,
                                    "%s: byte %llu (uncompressed): corrupt gzip data: %s", in->path,
                                    (unsigned long long)(in->consumed + total), msg);
            }
            if (n == 0) {
                int zerr = 0;
                const char *msg = gz_reason(gzerror((gzFile)in->gz, &zerr));
                if (zerr == Z_BUF_ERROR || (zerr != Z_OK && zerr != Z_STREAM_END))
                    return gp_error_set(err, GP_EPARSE,
                                        "%s: byte %llu (uncompressed): truncated gzip stream: %s",
                                        in->path, (unsigned long long)(in->consumed + total), msg);
                break;
            }
            total += (size_t)n;
        }
        in->consumed += total;
        *got = total;
        return GP_OK;
    }
    for (;;) {
        ssize_t n = read(in->fd, buf, cap);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return gp_error_set(err, GP_EIO, "%s: read failed: %s", in->path, strerror(errno));
        in->consumed += (uint64_t)n;
        *got = (size_t)n;
        return GP_OK;
    }
}

uint64_t gp__input_raw_pos(const gp__input *in)
{
    if (in->gz)
        return (uint64_t)gzoffset((gzFile)in->gz);
    return in->consumed;
}

void gp__input_close(gp__input *in)
{
    if (in->gz)
        gzclose((gzFile)in->gz);
    if (in->fd >= 0)
        close(in->fd);
    in->gz = NULL;
    in->fd = -1;
}
