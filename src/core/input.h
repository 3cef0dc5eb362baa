/* Sequential byte input from a file that may be gzip-compressed (detected by its magic bytes, not
 * its name), or from memory. Reads into caller buffers; never holds the whole file. */
#ifndef GP_CORE_INPUT_H
#define GP_CORE_INPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "gpuprof/core.h"

typedef struct gp__input {
    int fd;
    void *gz;        /* gzFile when compressed */
    const char *mem; /* memory source */
    size_t mem_len, mem_pos;
    bool compressed;
    uint64_t file_size; /* on-disk size (compressed size for .gz); 0 if unknown */
    uint64_t consumed;  /* bytes handed out so far (uncompressed) */
    size_t max_read;    /* if non-zero, no read returns more than this (tests) */
    char path[4096];
} gp__input;

/* Opens path. GP_EIO with err naming the file and errno on failure. */
gp_status gp__input_open(gp__input *in, const char *path, gp_error *err) GP_WARN_UNUSED;
void gp__input_open_mem(gp__input *in, const char *data, size_t len, const char *name);
/* Reads up to cap bytes into buf; *got = 0 at end of input. GP_EIO / GP_EPARSE (corrupt or
 * truncated gzip, err says so with the uncompressed offset reached). */
gp_status gp__input_read(gp__input *in, char *buf, size_t cap, size_t *got,
                         gp_error *err) GP_WARN_UNUSED;
/* Bytes of the on-disk file consumed so far (for progress); equals consumed for plain files. */
uint64_t gp__input_raw_pos(const gp__input *in);
void gp__input_close(gp__input *in);

#endif
