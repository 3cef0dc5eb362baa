/* Track-lookup benchmark (#21 item 6): reading a trace whose events are spread over N threads and N
 * GPU streams (one CPU and one GPU event per track), against the baseline of a trace with the same
 * number of events on one thread and one stream, read in the same run. The ratio stays flat when
 * the lookup of (kind, pid, tid) → track is O(1); it grew with N when each new track scanned every
 * existing one. Prints, per N: median wall time of both reads, ns per event, and the ratio.
 * Usage: bench_tracks [max_tracks (default 1000000, i.e. 500,000 threads)] [repetitions (default
 * 3)] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpuprof/trace.h"

#include "../bench_common.h"

/* A trace of n CPU events and n kernels, on n threads and n streams (spread) or on one of each. */
static char *make_trace(size_t n, int spread, size_t *len)
{
    size_t cap = 256 + n * 320;
    char *s = malloc(cap);
    if (!s)
        exit(3);
    size_t o = (size_t)snprintf(s, cap, "{\"traceEvents\":[\n");
    for (size_t i = 0; i < n; i++) {
        size_t id = spread ? i + 1 : 1;
        o += (size_t)snprintf(s + o, cap - o,
                              "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op\",\"pid\":1,"
                              "\"tid\":%zu,\"ts\":%zu,\"dur\":1},\n"
                              "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,"
                              "\"tid\":%zu,\"ts\":%zu,\"dur\":1,\"args\":{\"device\":0,"
                              "\"stream\":%zu,\"correlation\":%zu}}",
                              i ? "," : "", id, i * 2, id, i * 2 + 1, id, i + 1);
    }
    o += (size_t)snprintf(s + o, cap - o, "]}\n");
    *len = o;
    return s;
}

/* Median wall seconds of reps reads of data (one thread). */
static double time_read(const char *data, size_t len, int reps, size_t *tracks)
{
    double w[16];
    gp_read_opts o;
    gp_read_opts_init(&o);
    o.quiet = true;
    o.threads = 1;
    for (int r = 0; r < reps; r++) {
        gp_trace *t = NULL;
        gp_error err;
        double t0 = gp_bench_now();
        if (gp_trace_read_buffer(data, len, "bench", &o, &t, &err) != GP_OK) {
            fprintf(stderr, "%s\n", err.msg);
            exit(2);
        }
        w[r] = gp_bench_now() - t0;
        *tracks = t->n_tracks;
        gp_trace_free(t);
    }
    return gp_bench_median(w, reps);
}

int main(int argc, char **argv)
{
    size_t max = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000; /* tracks: 2 per thread */
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    if (reps < 1 || reps > 16)
        reps = 3;
    printf("%10s %10s %12s %12s %12s %12s %8s\n", "threads", "tracks", "one track s", "spread s",
           "one ns/ev", "spread ns/ev", "ratio");
    static const size_t sizes[] = {12500, 25000, 50000, 100000, 250000, 500000, 1000000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0] && 2 * sizes[k] <= max; k++) {
        size_t n = sizes[k];
        size_t la, lb, ta = 0, tb = 0;
        char *a = make_trace(n, 0, &la), *b = make_trace(n, 1, &lb);
        double wa = time_read(a, la, reps, &ta), wb = time_read(b, lb, reps, &tb);
        printf("%10zu %10zu %12.3f %12.3f %12.1f %12.1f %8.2f\n", n, tb, wa, wb,
               wa * 1e9 / (double)(2 * n), wb * 1e9 / (double)(2 * n), wb / wa);
        fflush(stdout);
        free(a);
        free(b);
    }
    return 0;
}
