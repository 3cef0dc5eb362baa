/* Sequential byte input from a file that may be gzip-compressed (detected by its magic bytes, not
 * its name), or from memory. Reads into caller buffers; never holds the whole file: a gzip file is
 * inflated straight into the caller's buffer through a fixed 256 KiB window of compressed bytes,
 * so memory does not grow with the decompressed size (#21 item 7).
 *
 * A large gzip file is inflated on a second thread into a ring of small blocks (GP__INFLATE_BLOCKS
 * of GP__INFLATE_BLOCK bytes: 1 MiB in all) while the caller parses the previous ones: the read
 * then takes about the time of the slower of the two instead of their sum. The bytes, the errors
 * and their messages are the same either way; an error is reported when the caller reaches the
 * block it happened in, so data before a corrupt or truncated point may be handed out first.
 *
 * Gzip files may hold several members (concatenated .gz files), read one after the other. Bytes
 * after the last member that do not start another one (padding, a partial download appended to) are
 * ignored, as gunzip does, and counted in trailing_bytes / trailing_at for a warning. */
#ifndef GP_CORE_INPUT_H
#define GP_CORE_INPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "gpuprof/core.h"

typedef struct gp__input {
    int fd;
    void *gz;           /* z_stream (inflating) when compressed */
    unsigned char *zin; /* compressed bytes read, not yet inflated: zin[0, zin_len) */
    size_t zin_len, zin_cap;
    uint64_t zin_off;    /* file offset of zin[0] */
    uint64_t member_off; /* file offset where the current gzip member started */
    bool zin_eof;        /* the file has no more bytes */
    bool member_done;    /* between members (or before the first): no member open */
    uint64_t trailing_bytes, trailing_at; /* ignored bytes after the gzip data, where they start */
    const char *mem;                      /* memory source */
    size_t mem_len, mem_pos;
    bool compressed;
    uint64_t file_size; /* on-disk size (compressed size for .gz); 0 if unknown */
    /* The uncompressed size to expect, for sizing buffers only: file_size for plain input, the
     * last gzip trailer's ISIZE (size mod 2^32) for a regular gzip file; 0 if unknown. A wrong
     * hint (a crafted trailer, several members) only makes the readers' buffers grow. */
    uint64_t size_hint;
    uint64_t consumed; /* bytes handed out so far (uncompressed) */
    uint64_t inflated; /* gzip: bytes inflated so far (ahead of consumed with a second thread) */
    /* gzip: inflate on a second thread, overlapped with the caller's parsing (gp__input_read
     * hands out blocks it inflated): 1 yes, -1 no, 0 decide at the first read (yes for a regular
     * file of GP__INFLATE_THREAD_MIN compressed bytes or more without max_read). The environment
     * variable GP_INFLATE_THREAD=0/1 overrides it at open (tests compare both ways). */
    int threaded;
    /* The second thread's state while it runs. That thread holds this struct's address: a
     * gp__input may be copied (the readers do) only before its first read. */
    struct gp__inflater *inflater;
    size_t max_read; /* if non-zero, no read returns more than this (tests) */
    char path[4096];
} gp__input;

#define GP__INFLATE_THREAD_MIN (1u << 20)

/* Opens path with O_NONBLOCK and checks it with fstat on the descriptor, then reads blocking as
 * usual. A directory is refused. Anything else that is not a regular file (FIFO, device) is
 * refused at once when regular_only (so a FIFO swapped in after a caller's own check never
 * blocks); otherwise it is reopened blocking and read as a stream (a pipe from `<(zcat ...)`
 * waits for its writer). GP_EIO with err naming the file and errno on failure, or saying what the
 * file is instead ("not a regular file (a FIFO): ...", "is a directory"). */
gp_status gp__input_open(gp__input *in, const char *path, bool regular_only,
                         gp_error *err) GP_WARN_UNUSED;
void gp__input_open_mem(gp__input *in, const char *data, size_t len, const char *name);
/* Reads up to cap bytes into buf; *got = 0 at end of input. GP_EIO / GP_EPARSE: corrupt or
 * truncated gzip; err says what failed ("CRC-32 mismatch", "truncated gzip stream", zlib's reason)
 * at which compressed byte, the uncompressed offset reached, and where the member started. */
gp_status gp__input_read(gp__input *in, char *buf, size_t cap, size_t *got,
                         gp_error *err) GP_WARN_UNUSED;
/* Copies up to cap of the first bytes of a plain regular file or a memory input into buf without
 * consuming them (before the first read); returns how many. 0 for gzip input and streams (they
 * cannot be looked at without reading them) and on error: a caller then decides without them. */
size_t gp__input_peek(const gp__input *in, char *buf, size_t cap);
/* Bytes of the on-disk file consumed so far (for progress); equals consumed for plain files. */
uint64_t gp__input_raw_pos(const gp__input *in);
void gp__input_close(gp__input *in);

/* A plain regular file mapped whole for reading (gp__input_map): base[0, size) are the file's
 * bytes, and at least GP__MAP_PAD zero bytes follow them (the rest of the last page, then a page
 * of zeros), so a parser may use base[size] == '\0' as its end sentinel and load 16 or 32 bytes at
 * a time past it. The kernel copies nothing: the parser reads the page cache in place (see
 * docs/decisions/mmap-read.md for the measurements). */
typedef struct gp__input_map {
    char *base;     /* NULL when nothing is mapped */
    size_t size;    /* the file's size when it was mapped */
    size_t span;    /* the whole reservation: the file's pages and the zero page */
    size_t page;    /* the page size */
    size_t dropped; /* base[0, dropped) has been handed back (gp__input_map_drop) */
} gp__input_map;

#define GP__MAP_PAD 4096

/* Maps in's file whole (it is not consumed: in's reads and offsets are unchanged). False, with
 * nothing mapped, for what is not a plain regular file (gzip, memory, a stream), an empty file, a
 * test's max_read, when the environment sets GP_READ_MMAP=0, or when mmap fails: the caller then
 * reads with gp__input_read. A file truncated by another process while mapped makes the pages
 * past its new end unreadable (SIGBUS), as for every program that maps files; GP_READ_MMAP=0
 * avoids it. Readers map only when asked (gp_read_opts.map, or gp__input_map_forced). */
bool gp__input_map_file(const gp__input *in, gp__input_map *m);
/* Whether the environment sets GP_READ_MMAP=1: map every plain file a caller lets be mapped. */
bool gp__input_map_forced(void);
/* Hands back the pages of base[m->dropped, upto) that a sequential parser has passed (rounded
 * down to whole pages): they leave the process's resident set, the page cache keeps them, and a
 * later access maps them again. */
void gp__input_map_drop(gp__input_map *m, size_t upto);
/* Unmaps; no-op when nothing is mapped. */
void gp__input_map_free(gp__input_map *m);

#endif
