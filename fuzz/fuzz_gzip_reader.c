/* libFuzzer target for gzip input (core/input.c, #21 items 7, 9, 13): the trace reader over a
 * file. The first byte picks the mode:
 * - even: the rest is the file as it is on disk (the seeds are .gz files, so mutations corrupt
 *   headers, deflate blocks, trailers, add members and trailing bytes): any outcome but a crash;
 *   an error must name the byte ("byte N") or the field.
 * - odd: the rest is JSON text, gzip-compressed here in one or two members (split where the
 *   second byte says) with trailing bytes when the third says so; the result must be exactly the
 *   one of reading the JSON text from memory (same status; equal traces).
 * Bit 1 of the first byte inflates on the second thread (GP_INFLATE_THREAD=1, core/input.c) or
 * on the reading thread: both paths get every kind of input. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <zlib.h>

#include "gpuprof/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Appends a gzip member of s[0, n) to fd. */
static void put_member(int fd, const uint8_t *s, size_t n)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        abort();
    size_t cap = deflateBound(&zs, (uLong)n) + 32;
    unsigned char *out = malloc(cap);
    zs.next_in = (unsigned char *)s;
    zs.avail_in = (uInt)n;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    if (!out || deflate(&zs, Z_FINISH) != Z_STREAM_END)
        abort();
    if (write(fd, out, cap - zs.avail_out) != (ssize_t)(cap - zs.avail_out))
        abort();
    deflateEnd(&zs);
    free(out);
}

static gp_status read_fd(int fd, gp_trace **t, gp_error *err)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    gp_read_opts o;
    gp_read_opts_init(&o);
    o.quiet = true;
    o.threads = 1;
    *t = NULL;
    return gp_trace_read(path, &o, t, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    int fd = memfd_create("fuzz_gzip", MFD_CLOEXEC);
    if (fd < 0)
        abort();
    setenv("GP_INFLATE_THREAD", data[0] & 2 ? "1" : "0", 1);
    gp_trace *t = NULL;
    gp_error err = {0};
    if (!(data[0] & 1)) {
        if (write(fd, data + 1, size - 1) != (ssize_t)(size - 1))
            abort();
        gp_status s = read_fd(fd, &t, &err);
        if (s != GP_OK && s != GP_ENOMEM && !strstr(err.msg, "byte ") &&
            !strstr(err.msg, "field \"")) {
            fprintf(stderr, "error without an offset: %s\n", err.msg);
            abort();
        }
        gp_trace_free(t);
        close(fd);
        return 0;
    }
    const uint8_t *json = data + 3;
    size_t n = size - 3, split = n ? data[1] % (n + 1) : 0;
    put_member(fd, json, split);
    if (split < n || data[1] & 1)
        put_member(fd, json + split, n - split);
    if (data[2] & 1 && write(fd, "\0\0junk", 6) != 6)
        abort();
    gp_status s = read_fd(fd, &t, &err);
    close(fd);
    gp_read_opts o;
    gp_read_opts_init(&o);
    o.quiet = true;
    gp_trace *m = NULL;
    gp_error merr = {0};
    gp_status ms = gp_trace_read_buffer((const char *)json, n, "fuzz", &o, &m, &merr);
    if (s != ms) {
        fprintf(stderr, "gzip read: %d (%s); memory read: %d (%s)\n", s, err.msg, ms, merr.msg);
        abort();
    }
    if (s == GP_OK) {
        gp_error why = {0};
        if (!gp_trace_equal(t, m, &why)) {
            fprintf(stderr, "gzip and memory reads differ: %s\n", why.msg);
            abort();
        }
        if ((t->stats.gzip_trailing_bytes != 0) != (data[2] & 1)) {
            fprintf(stderr, "trailing bytes: %llu\n",
                    (unsigned long long)t->stats.gzip_trailing_bytes);
            abort();
        }
    }
    gp_trace_free(t);
    gp_trace_free(m);
    return 0;
}
