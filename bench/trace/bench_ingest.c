/* Ingest benchmark: reading a trace into the model, against the floor of just reading its bytes
 * (read(2), or zlib inflate for .gz) measured in the same run. Prints medians of wall and CPU time,
 * MB/s of JSON text and the ratio to the floor, and the peak RSS.
 * The model is read single-threaded (the "one core" figure) and then with automatic threading.
 * For .gz input the floor is zlib's inflate on the reading thread (the inflater thread off), and,
 * when built with libdeflate (bench only), libdeflate's whole-buffer inflate too: the fastest
 * inflate measured is the target's reference (issue 37); the one-thread read is also measured
 * with the inflater thread off (GP_INFLATE_THREAD=0), the previous way.
 * Peak RSS is the whole process's (the largest of all repetitions).
 * Usage: bench_ingest TRACE [repetitions (default 5)] [one|auto]
 * With "one", only the one-thread read runs (for perf record: no floor, no threaded read); with
 * "auto", only the read with automatic threads (with "one", for fresh-process comparisons).
 *
 * Every repetition reads as a fresh gpuprof process does: glibc's mmap threshold is pinned at its
 * initial 128 KiB. Left dynamic, glibc raises it (up to 32 MiB) as soon as a mapped block is
 * freed, so repetitions 2..n grew the model's arrays in the heap, copying them at each doubling,
 * and the parallel read's merge copied the first piece's arrays (0.035-0.045 s instead of
 * 0.015 s): a state no CLI run reaches. GP_BENCH_MALLOC_DYNAMIC=1 keeps glibc's dynamic threshold
 * (docs/decisions/ingest-bench-allocator.md). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#ifdef GP_BENCH_LIBDEFLATE
#include <libdeflate.h>
#endif

#include "core/input.h"
#include "gpuprof/trace.h"

#include "../bench_common.h"

/* The floor: every byte read (decompressed) into a 4 MB buffer, as the reader does. */
static unsigned long long read_floor(const char *path)
{
    gp__input in;
    gp_error err;
    if (gp__input_open(&in, path, true, &err) != GP_OK) {
        fprintf(stderr, "%s\n", err.msg);
        exit(2);
    }
    in.threaded = -1; /* the floor is the inflate itself, on this thread */
    static char buf[4 << 20];
    size_t got;
    unsigned long long total = 0, sum = 0;
    do {
        if (gp__input_read(&in, buf, sizeof buf, &got, &err) != GP_OK) {
            fprintf(stderr, "%s\n", err.msg);
            exit(2);
        }
        total += got;
        for (size_t i = 0; i < got; i += 4096)
            sum += (unsigned char)buf[i];
    } while (got);
    gp__input_close(&in);
    return total + (sum & 0);
}

#ifdef GP_BENCH_LIBDEFLATE
/* libdeflate's floor: the whole file read, then inflated in one call into a buffer of its ISIZE
 * (one gzip member assumed); 0 when it cannot. */
static unsigned long long deflate_floor(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *z = n > 18 ? malloc((size_t)n) : NULL;
    size_t got = z ? fread(z, 1, (size_t)n, f) : 0;
    fclose(f);
    if (!z || got != (size_t)n || z[0] != 0x1f || z[1] != 0x8b) {
        free(z);
        return 0;
    }
    size_t isize =
        (size_t)z[n - 4] | (size_t)z[n - 3] << 8 | (size_t)z[n - 2] << 16 | (size_t)z[n - 1] << 24;
    char *out = malloc(isize ? isize : 1);
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    size_t done = 0;
    enum libdeflate_result r = out && d
                                   ? libdeflate_gzip_decompress(d, z, (size_t)n, out, isize, &done)
                                   : LIBDEFLATE_BAD_DATA;
    libdeflate_free_decompressor(d);
    free(out);
    free(z);
    return r == LIBDEFLATE_SUCCESS ? done : 0;
}
#endif

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_ingest TRACE [repetitions] [one|auto]\n");
        return 2;
    }
#ifdef __GLIBC__
    const char *dyn = getenv("GP_BENCH_MALLOC_DYNAMIC");
    bool pinned = !(dyn && *dyn && strcmp(dyn, "0") != 0);
    if (pinned)
        mallopt(M_MMAP_THRESHOLD, 128 * 1024); /* glibc's initial value, now fixed */
#else
    bool pinned = false;
#endif
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    bool only_one = argc > 3 && strcmp(argv[3], "one") == 0;
    bool only_auto = argc > 3 && strcmp(argv[3], "auto") == 0;
    if (reps < 1 || reps > 100)
        reps = 5;
    double fw[100], fc[100], iw[100], ic[100], pw[100], pc[100], dw[100], dc[100], sw[100], sc[100];
    size_t plen = strlen(argv[1]);
    bool gz = plen > 3 && strcmp(argv[1] + plen - 3, ".gz") == 0;
    bool have_deflate = false;
    uint32_t threads_used = 0, pieces = 0;
    unsigned long long bytes = 0;
    size_t events = 0;
    gp_read_opts o;
    gp_read_opts_init(&o);
    o.quiet = true;
    for (int r = 0; r < reps; r++) {
        double w0 = gp_bench_seconds(CLOCK_MONOTONIC),
               c0 = gp_bench_seconds(CLOCK_PROCESS_CPUTIME_ID);
        bytes = only_one || only_auto ? 0 : read_floor(argv[1]);
        fw[r] = gp_bench_seconds(CLOCK_MONOTONIC) - w0;
        fc[r] = gp_bench_seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
#ifdef GP_BENCH_LIBDEFLATE
        if (gz) {
            w0 = gp_bench_seconds(CLOCK_MONOTONIC);
            c0 = gp_bench_seconds(CLOCK_PROCESS_CPUTIME_ID);
            have_deflate = deflate_floor(argv[1]) == bytes;
            dw[r] = gp_bench_seconds(CLOCK_MONOTONIC) - w0;
            dc[r] = gp_bench_seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
        }
#endif
        /* one thread, the inflater thread off: the previous way */
        if (gz && !only_one && !only_auto) {
            gp_trace *t = NULL;
            gp_error err;
            o.threads = 1;
            setenv("GP_INFLATE_THREAD", "0", 1);
            w0 = gp_bench_seconds(CLOCK_MONOTONIC);
            c0 = gp_bench_seconds(CLOCK_PROCESS_CPUTIME_ID);
            gp_status st = gp_trace_read(argv[1], &o, &t, &err);
            sw[r] = gp_bench_seconds(CLOCK_MONOTONIC) - w0;
            sc[r] = gp_bench_seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
            unsetenv("GP_INFLATE_THREAD");
            if (st != GP_OK) {
                fprintf(stderr, "%s\n", err.msg);
                return 2;
            }
            gp_trace_free(t);
        }
        for (int threads = only_auto ? 2 : 1; threads <= (only_one ? 1 : 2); threads++) {
            gp_trace *t = NULL;
            gp_error err;
            o.threads = threads == 1 ? 1 : 0; /* 0: automatic, as the CLI reads */
            w0 = gp_bench_seconds(CLOCK_MONOTONIC);
            c0 = gp_bench_seconds(CLOCK_PROCESS_CPUTIME_ID);
            if (gp_trace_read(argv[1], &o, &t, &err) != GP_OK) {
                fprintf(stderr, "%s\n", err.msg);
                return 2;
            }
            double w = gp_bench_seconds(CLOCK_MONOTONIC) - w0,
                   c = gp_bench_seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
            if (threads == 1) {
                iw[r] = w;
                ic[r] = c;
            } else {
                pw[r] = w;
                pc[r] = c;
                threads_used = t->stats.threads_used;
                pieces = t->stats.pieces;
            }
            events = gp_trace_event_count(t);
            if (only_one || only_auto)
                bytes = t->stats.bytes;
            gp_trace_free(t);
        }
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double mb = (double)bytes / 1e6;
    double mfw = gp_bench_median(fw, reps), mfc = gp_bench_median(fc, reps),
           miw = gp_bench_median(iw, reps), mic = gp_bench_median(ic, reps),
           mpw = gp_bench_median(pw, reps), mpc = gp_bench_median(pc, reps);
    printf("input            %s\n", argv[1]);
    printf("json text        %.1f MB, %zu events kept, %d repetitions (medians)\n", mb, events,
           reps);
    printf("allocator        %s\n", pinned ? "mmap threshold pinned at 128 KiB (a fresh process's)"
                                           : "glibc's dynamic mmap threshold");
    printf("floor (read)     wall %.3f s  cpu %.3f s  %8.0f MB/s (cpu)\n", mfw, mfc, mb / mfc);
    printf("ingest, 1 thread wall %.3f s  cpu %.3f s  %8.0f MB/s (cpu)  %8.0f MB/s (wall)\n", miw,
           mic, mb / mic, mb / miw);
    printf("ratio ingest/floor  cpu %.2fx  wall %.2fx\n", mic / mfc, miw / mfw);
    if (gz) {
        double msw = gp_bench_median(sw, reps), msc = gp_bench_median(sc, reps);
        printf("ingest, 1 thread, inflater thread off  wall %.3f s  cpu %.3f s  (with it: %.2fx "
               "the wall time)\n",
               msw, msc, miw / msw);
    }
    if (have_deflate) {
        double mdw = gp_bench_median(dw, reps), mdc = gp_bench_median(dc, reps);
        printf("floor (libdeflate, whole buffer)  wall %.3f s  cpu %.3f s  %8.0f MB/s (cpu)\n", mdw,
               mdc, mb / mdc);
        double best = mdw < mfw ? mdw : mfw;
        printf("ratio ingest (1 thread, wall) / fastest inflate (wall)  %.2fx\n", miw / best);
    }
    printf("ingest, automatic threads (%u used, %u pieces)  wall %.3f s  cpu %.3f s  %8.0f MB/s "
           "(wall), speed-up %.2fx over one thread\n",
           threads_used, pieces, mpw, mpc, mb / mpw, miw / mpw);
    printf("peak RSS         %.1f MB\n", (double)ru.ru_maxrss / 1024.0);
    return 0;
}
