#include "core/input.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/lock.h"
#include "core/util.h"

#define ZIN_CAP (256u * 1024) /* compressed bytes read at a time */
#define GP__INFLATE_BLOCKS 4
#define GP__INFLATE_BLOCK (256u * 1024)

/* Starts the inflater of a gzip file (magic bytes seen). */
static gp_status start_gzip(gp__input *in, gp_error *err)
{
    z_stream *zs = calloc(1, sizeof *zs);
    /* A small regular file is read in one piece: no 256 KiB buffer for a 2 KB trace. */
    in->zin_cap = in->file_size && in->file_size < ZIN_CAP ? (size_t)in->file_size + 1 : ZIN_CAP;
    in->zin = malloc(in->zin_cap);
    if (!zs || !in->zin || inflateInit2(zs, 15 + 16) != Z_OK) {
        free(zs);
        free(in->zin);
        in->zin = NULL;
        close(in->fd);
        in->fd = -1;
        return gp_error_set(err, GP_ENOMEM, "%s: cannot start gzip decoder", in->path);
    }
    in->gz = zs;
    in->compressed = true;
    in->member_done = true; /* the first member starts at byte 0 */
    return GP_OK;
}

/* What a file that is not a regular one is, for the error message. */
static const char *file_type(mode_t mode)
{
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "an unknown type";
}

gp_status gp__input_open(gp__input *in, const char *path, bool regular_only, gp_error *err)
{
    memset(in, 0, sizeof *in);
    snprintf(in->path, sizeof in->path, "%s", path);
    /* O_NONBLOCK: opening a FIFO must not wait for a writer (a file swapped for a FIFO after a
     * caller's own check, e.g. serve's listing, would block the request). The type is checked on
     * the descriptor itself, then reads block as usual. */
    in->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (in->fd < 0)
        return gp_error_set(err, gp__status_of_errno(errno), "%s: cannot open: %s", path,
                            strerror(errno));
    struct stat st;
    gp_status s = GP_OK;
    int flags;
    if (fstat(in->fd, &st) != 0)
        s = gp_error_set(err, GP_EIO, "%s: cannot open: %s", path, strerror(errno));
    else if (S_ISDIR(st.st_mode))
        s = gp_error_set(err, GP_EIO, "%s: is a directory", path);
    else if (!S_ISREG(st.st_mode) && regular_only)
        s = gp_error_set(err, GP_EIO, "%s: not a regular file (%s): only regular files are read",
                         path, file_type(st.st_mode));
    else if (!S_ISREG(st.st_mode)) {
        /* A stream the caller asked for: reopened blocking, so a FIFO waits for its writer
         * instead of reading an empty input when the writer has not opened it yet. */
        close(in->fd);
        in->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (in->fd < 0)
            return gp_error_set(err, gp__status_of_errno(errno), "%s: cannot open: %s", path,
                                strerror(errno));
        if (fstat(in->fd, &st) != 0)
            s = gp_error_set(err, GP_EIO, "%s: cannot open: %s", path, strerror(errno));
        else if (S_ISDIR(st.st_mode))
            s = gp_error_set(err, GP_EIO, "%s: is a directory", path);
    } else if ((flags = fcntl(in->fd, F_GETFL)) < 0 ||
               fcntl(in->fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
        s = gp_error_set(err, GP_EIO, "%s: cannot open: %s", path, strerror(errno));
    if (s != GP_OK) {
        close(in->fd);
        in->fd = -1;
        return s;
    }
    in->file_size = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
    in->size_hint = in->file_size;
    unsigned char magic[2] = {0, 0};
    ssize_t n = pread(in->fd, magic, 2, 0);
    if (n == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
        if ((s = start_gzip(in, err)) != GP_OK)
            return s;
        unsigned char isize[4];
        in->size_hint = 0;
        if (in->file_size >= 18 && pread(in->fd, isize, 4, (off_t)in->file_size - 4) == 4)
            in->size_hint = (uint64_t)isize[0] | (uint64_t)isize[1] << 8 |
                            (uint64_t)isize[2] << 16 | (uint64_t)isize[3] << 24;
        /* A text is never under half its compressed size (deflate expands incompressible data
         * by a few bytes at most), so such an ISIZE is wrong: a text of 4 GiB or more, whose
         * ISIZE wrapped, or several members. Unknown then, so that such a file is not read
         * through a small first buffer. */
        if (in->size_hint + 64 < in->file_size / 2)
            in->size_hint = 0;
    }
    const char *env = getenv("GP_INFLATE_THREAD");
    if (env && (env[0] == '0' || env[0] == '1') && env[1] == '\0')
        in->threaded = env[0] == '1' ? 1 : -1;
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
    in->size_hint = len;
    snprintf(in->path, sizeof in->path, "%s", name ? name : "<memory>");
}

/* The file offset of the next compressed byte to inflate. */
static uint64_t zpos(const gp__input *in)
{
    const z_stream *zs = in->gz;
    return in->zin_off + (uint64_t)(zs->next_in - in->zin);
}

/* Moves the unread compressed bytes to the front of zin and reads more after them. */
static gp_status zfill(gp__input *in, gp_error *err)
{
    z_stream *zs = in->gz;
    size_t keep = zs->avail_in;
    if (keep && zs->next_in != in->zin)
        memmove(in->zin, zs->next_in, keep);
    in->zin_off += in->zin_len - keep;
    in->zin_len = keep;
    ssize_t n;
    do
        n = read(in->fd, in->zin + keep, in->zin_cap - keep);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return gp_error_set(err, GP_EIO, "%s: read failed: %s", in->path, strerror(errno));
    in->zin_eof = n == 0;
    in->zin_len += (size_t)n;
    zs->next_in = in->zin;
    zs->avail_in = (uInt)in->zin_len;
    return GP_OK;
}

/* Bytes after the gzip data: counted (to the end of the file) and ignored. */
static void skip_trailing(gp__input *in)
{
    z_stream *zs = in->gz;
    in->trailing_at = zpos(in);
    uint64_t n = zs->avail_in;
    if (in->file_size > in->trailing_at) {
        n = in->file_size - in->trailing_at;
    } else {
        char tmp[65536];
        ssize_t k;
        while ((k = read(in->fd, tmp, sizeof tmp)) > 0 || (k < 0 && errno == EINTR))
            n += k > 0 ? (uint64_t)k : 0;
    }
    in->trailing_bytes = n;
    zs->avail_in = 0;
    in->zin_eof = true;
}

/* What a zlib error means, in words. */
static const char *zlib_reason(const z_stream *zs, int ret)
{
    if (ret == Z_MEM_ERROR)
        return "out of memory";
    if (!zs->msg)
        return "corrupt data";
    if (strcmp(zs->msg, "incorrect data check") == 0)
        return "CRC-32 mismatch: the data does not match the checksum in the gzip trailer";
    if (strcmp(zs->msg, "incorrect length check") == 0)
        return "length mismatch: the data does not match the size in the gzip trailer";
    return zs->msg;
}

static gp_status gz_fail(gp__input *in, int ret, uint64_t produced, gp_error *err)
{
    const z_stream *zs = in->gz;
    uint64_t at = zpos(in);
    bool trailer = zs->msg && (strcmp(zs->msg, "incorrect data check") == 0 ||
                               strcmp(zs->msg, "incorrect length check") == 0);
    if (trailer && at >= 4)
        at -= 4; /* the field that did not match */
    return gp_error_set(
        err, ret == Z_MEM_ERROR ? GP_ENOMEM : GP_EPARSE,
        "%s: byte %llu of the compressed file: corrupt gzip data: %s (member from compressed "
        "byte %llu, %llu bytes decompressed)",
        in->path, (unsigned long long)at, zlib_reason(zs, ret), (unsigned long long)in->member_off,
        (unsigned long long)produced);
}

/* gp__input_read for a gzip file: inflates straight into buf, member after member. */
static gp_status gz_read(gp__input *in, char *buf, size_t cap, size_t *got, gp_error *err)
{
    z_stream *zs = in->gz;
    size_t total = 0;
    while (total < cap) {
        if (zs->avail_in < 2 && !in->zin_eof) {
            gp_status s = zfill(in, err);
            if (s != GP_OK)
                return s;
            continue;
        }
        if (in->member_done) {
            if (zs->avail_in == 0)
                break; /* the end, right after a member */
            if (zs->avail_in < 2 || zs->next_in[0] != 0x1f || zs->next_in[1] != 0x8b) {
                skip_trailing(in);
                break;
            }
            inflateReset(zs);
            in->member_off = zpos(in);
            in->member_done = false;
        }
        size_t room = cap - total;
        zs->next_out = (unsigned char *)buf + total;
        zs->avail_out = room > (1u << 30) ? (1u << 30) : (uInt)room;
        uInt before = zs->avail_out;
        int ret = inflate(zs, Z_NO_FLUSH);
        total += before - zs->avail_out;
        if (ret == Z_STREAM_END)
            in->member_done = true;
        else if (ret == Z_BUF_ERROR && zs->avail_in == 0 && in->zin_eof)
            return gp_error_set(err, GP_EPARSE,
                                "%s: byte %llu of the compressed file: truncated gzip stream: the "
                                "file ends inside a gzip "
                                "member (from compressed byte %llu, %llu bytes decompressed)",
                                in->path, (unsigned long long)zpos(in),
                                (unsigned long long)in->member_off,
                                (unsigned long long)(in->inflated + total));
        else if (ret != Z_OK && ret != Z_BUF_ERROR)
            return gz_fail(in, ret, in->inflated + total, err);
    }
    in->inflated += total;
    *got = total;
    return GP_OK;
}

/* The second thread's state: a ring of blocks the inflater fills and the reader empties. */
typedef struct gp__inflater {
    pthread_t th;
    gp__mutex mu; /* guards every member after blk (C has no GP_GUARDED_BY of a member) */
    pthread_cond_t cv;
    /* Blocks [head, head + n_ready) (mod GP__INFLATE_BLOCKS) are the reader's, the others the
     * inflater's: the bytes need no lock, the counts below do. */
    char *blk[GP__INFLATE_BLOCKS];
    size_t len[GP__INFLATE_BLOCKS];
    unsigned head;    /* the reader's block */
    unsigned n_ready; /* blocks filled and not yet emptied */
    size_t off;       /* bytes of blk[head] handed out */
    bool done;        /* the inflater is at the end (or failed) */
    bool stop;        /* the reader is closing */
    gp_status st;     /* the inflater's failure (GP_OK at the end) */
    gp_error err;     /* its message */
    uint64_t raw_pos; /* compressed bytes inflated so far (progress) */
} gp__inflater;

/* The second thread: fills free blocks with gz_read until the end, an error, or stop. */
static void *inflate_main(void *arg)
{
    gp__input *in = arg;
    gp__inflater *z = in->inflater;
    for (;;) {
        gp__mutex_lock(&z->mu);
        while (z->n_ready == GP__INFLATE_BLOCKS && !z->stop)
            gp__cond_wait(&z->cv, &z->mu);
        bool stop = z->stop;
        unsigned slot = (z->head + z->n_ready) % GP__INFLATE_BLOCKS;
        gp__mutex_unlock(&z->mu);
        if (stop)
            return NULL;
        size_t got = 0;
        gp_error err = {0};
        gp_status st = gz_read(in, z->blk[slot], GP__INFLATE_BLOCK, &got, &err);
        gp__mutex_lock(&z->mu);
        z->raw_pos = zpos(in);
        if (st != GP_OK || got == 0) {
            z->st = st;
            z->err = err;
            z->done = true;
        } else {
            z->len[slot] = got;
            z->n_ready++;
        }
        pthread_cond_broadcast(&z->cv);
        bool done = z->done;
        gp__mutex_unlock(&z->mu);
        if (done)
            return NULL;
    }
}

/* Starts the second thread; false (and nothing started) when it cannot be. */
static bool start_inflater(gp__input *in)
{
    gp__inflater *z = calloc(1, sizeof *z);
    if (!z)
        return false;
    bool ok = true;
    for (unsigned i = 0; i < GP__INFLATE_BLOCKS && ok; i++)
        ok = (z->blk[i] = malloc(GP__INFLATE_BLOCK)) != NULL;
    if (ok)
        gp__mutex_init(&z->mu); /* aborts on failure (core/lock.h) */
    bool cv = ok && pthread_cond_init(&z->cv, NULL) == 0;
    in->inflater = z;
    if (cv && pthread_create(&z->th, NULL, inflate_main, in) == 0)
        return true;
    in->inflater = NULL;
    if (cv)
        pthread_cond_destroy(&z->cv);
    if (ok)
        gp__mutex_destroy(&z->mu);
    for (unsigned i = 0; i < GP__INFLATE_BLOCKS; i++)
        free(z->blk[i]);
    free(z);
    return false;
}

/* gp__input_read with the second thread: the next bytes of the block at the head of the ring. */
static gp_status threaded_read(gp__input *in, char *buf, size_t cap, size_t *got, gp_error *err)
{
    gp__inflater *z = in->inflater;
    gp__mutex_lock(&z->mu);
    while (z->n_ready == 0 && !z->done)
        gp__cond_wait(&z->cv, &z->mu);
    if (z->n_ready == 0) {
        gp_status st = z->st;
        if (st != GP_OK && err)
            *err = z->err;
        gp__mutex_unlock(&z->mu);
        return st;
    }
    size_t n = GP_MIN(cap, z->len[z->head] - z->off);
    memcpy(buf, z->blk[z->head] + z->off, n);
    z->off += n;
    if (z->off == z->len[z->head]) {
        z->off = 0;
        z->head = (z->head + 1) % GP__INFLATE_BLOCKS;
        z->n_ready--;
        pthread_cond_broadcast(&z->cv);
    }
    gp__mutex_unlock(&z->mu);
    in->consumed += n;
    *got = n;
    return GP_OK;
}

/* Stops and frees the second thread (it may be blocked on a full ring). */
static void stop_inflater(gp__input *in)
{
    gp__inflater *z = in->inflater;
    if (!z)
        return;
    gp__mutex_lock(&z->mu);
    z->stop = true;
    pthread_cond_broadcast(&z->cv);
    gp__mutex_unlock(&z->mu);
    pthread_join(z->th, NULL);
    pthread_cond_destroy(&z->cv);
    gp__mutex_destroy(&z->mu);
    for (unsigned i = 0; i < GP__INFLATE_BLOCKS; i++)
        free(z->blk[i]);
    free(z);
    in->inflater = NULL;
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
        if (in->threaded == 0) /* the first read decides */
            in->threaded = in->file_size >= GP__INFLATE_THREAD_MIN && !in->max_read ? 1 : -1;
        if (in->threaded > 0 && !in->inflater && in->inflated == 0 && !start_inflater(in))
            in->threaded = -1;
        if (in->inflater)
            return threaded_read(in, buf, cap, got, err);
        gp_status s = gz_read(in, buf, cap, got, err);
        in->consumed = in->inflated;
        return s;
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

size_t gp__input_peek(const gp__input *in, char *buf, size_t cap)
{
    if (in->mem) {
        size_t n = GP_MIN(cap, in->mem_len - in->mem_pos);
        memcpy(buf, in->mem + in->mem_pos, n);
        return n;
    }
    if (in->compressed || in->fd < 0 || in->file_size == 0 || in->consumed != 0)
        return 0; /* gzip, a stream, or already reading: nothing to look at without consuming */
    ssize_t n = pread(in->fd, buf, cap, 0);
    return n > 0 ? (size_t)n : 0;
}

uint64_t gp__input_raw_pos(const gp__input *in)
{
    if (in->inflater) {
        gp__inflater *z = in->inflater;
        gp__mutex_lock(&z->mu);
        uint64_t pos = z->raw_pos;
        gp__mutex_unlock(&z->mu);
        return pos;
    }
    if (in->gz)
        return zpos(in);
    return in->consumed;
}

void gp__input_close(gp__input *in)
{
    stop_inflater(in);
    if (in->gz) {
        inflateEnd(in->gz);
        free(in->gz);
        free(in->zin);
        in->zin = NULL;
    }
    if (in->fd >= 0)
        close(in->fd);
    in->gz = NULL;
    in->fd = -1;
}

/* ---- mapping a plain file ---------------------------------------------------------------- */

bool gp__input_map_file(const gp__input *in, gp__input_map *m)
{
    memset(m, 0, sizeof *m);
    const char *env = getenv("GP_READ_MMAP");
    if (env && env[0] == '0' && env[1] == '\0')
        return false;
    if (in->mem || in->gz || in->fd < 0 || in->file_size == 0 || in->max_read)
        return false;
    long pg = sysconf(_SC_PAGESIZE);
    if (pg <= 0 || pg > GP__MAP_PAD || in->file_size > SIZE_MAX / 4)
        return false;
    size_t page = (size_t)pg;
    size_t size = (size_t)in->file_size;
    size_t file_span = (size + page - 1) / page * page;
    /* Reserve the file's pages and the zero page after them, then map the file over the first
     * part: past the file's last byte there is always a page of zeros. */
    size_t span = file_span + GP__MAP_PAD;
    void *base = mmap(NULL, span, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
        return false;
    if (mmap(base, file_span, PROT_READ, MAP_PRIVATE | MAP_FIXED, in->fd, 0) == MAP_FAILED) {
        munmap(base, span);
        return false;
    }
    m->base = base;
    m->size = size;
    m->span = span;
    m->page = page;
    return true;
}

bool gp__input_map_forced(void)
{
    const char *env = getenv("GP_READ_MMAP");
    return env && env[0] == '1' && env[1] == '\0';
}

void gp__input_map_drop(gp__input_map *m, size_t upto)
{
    if (!m->base)
        return;
    upto = GP_MIN(upto, m->size) / m->page * m->page;
    if (upto <= m->dropped)
        return;
    size_t from = m->dropped / m->page * m->page;
    (void)madvise(m->base + from, upto - from,
                  MADV_DONTNEED); /* advice: failure costs memory only */
    m->dropped = upto;
}

void gp__input_map_free(gp__input_map *m)
{
    if (m->base)
        munmap(m->base, m->span);
    memset(m, 0, sizeof *m);
}
