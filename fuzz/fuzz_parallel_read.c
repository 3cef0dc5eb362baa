/* libFuzzer target for parallel reads: the input is written to a file and read sequentially and in
 * pieces (2-4 threads, 2-9 initial cuts and a steal threshold of a few bytes, so that nearly every
 * input is cut many times, and the merge's tracks of 2 to 5 events and more sorted in two
 * halves). Both reads must agree: the same status, the same error message, an
 * equal model. The first input byte picks the thread count, the cuts and the threshold; the rest
 * is the trace. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuprof/trace.h"
#include "io/reader_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

static void remove_file(void)
{
    unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (!path[0]) {
        /* /dev/shm (tmpfs) when it can be written: on ext4, truncating and rewriting a file
         * forces its write-back at close (auto_da_alloc), a third of each execution's time. */
        snprintf(path, sizeof path, "/dev/shm/gp_fuzz_par_XXXXXX");
        int fd = mkstemp(path);
        if (fd < 0) {
            snprintf(path, sizeof path, "/tmp/gp_fuzz_par_XXXXXX");
            fd = mkstemp(path);
        }
        if (fd < 0)
            abort();
        close(fd);
        atexit(remove_file); /* a crash leaves it, with the input libFuzzer keeps */
    }
    FILE *fp = fopen(path, "wb");
    if (!fp || fwrite(data + 1, 1, size - 1, fp) != size - 1 || fclose(fp) != 0)
        abort();
    gp_read_opts one, par;
    gp_read_opts_init(&one);
    one.quiet = true;
    one.threads = 1;
    par = one;
    par.threads = 2 + data[0] % 3;
    gp__read_steal_min = 1 + data[0] / 3;
    gp__read_initial_pieces = 2 + (data[0] >> 5); /* 2..9 cuts to begin with */
    gp__merge_split_min = 2 + (data[0] & 3);      /* tracks of 2..5 events sorted in halves */
    gp_trace *a = NULL, *b = NULL;
    gp_error e1 = {0}, e2 = {0};
    gp_status s1 = gp_trace_read(path, &one, &a, &e1);
    gp_status s2 = gp_trace_read(path, &par, &b, &e2);
    if (s1 != s2) {
        fprintf(stderr, "sequential: %s (%s); parallel: %s (%s)\n", gp_strerror(s1), e1.msg,
                gp_strerror(s2), e2.msg);
        abort();
    }
    if (s1 != GP_OK && strcmp(e1.msg, e2.msg) != 0) {
        fprintf(stderr, "errors differ:\n  %s\n  %s\n", e1.msg, e2.msg);
        abort();
    }
    gp_error why = {0};
    if (s1 == GP_OK && !gp_trace_equal(a, b, &why)) {
        fprintf(stderr, "parallel read differs (%u pieces): %s\n", b->stats.pieces, why.msg);
        abort();
    }
    gp_trace_free(a);
    gp_trace_free(b);
    return 0;
}
