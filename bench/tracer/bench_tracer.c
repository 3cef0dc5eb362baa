/* Cost of the tracer's own work per CUPTI record, on the development machine (no GPU): converting
 * activity records (real CUDA 13 structs) into the trace model, and writing the trace.
 *
 * Workload: L launches, each a cudaLaunchKernel runtime record + its kernel record, and every 8th
 * launch also a memcpy and its runtime call; 64 distinct kernel names (CUPTI hands out one name
 * pointer per function, as here). Baseline in the same run: walking the same buffer and reading
 * each record's kind and start time (the least any consumer of the records must do).
 * Then the same through the injection library with the FAKE libcupti delivering the records
 * (tests/fakes/cupti), against a minimal consumer that only walks them: the library's whole
 * per-record cost (buffer pool, lock, record walk, conversion), measured against a fake.
 * Times are the thread's CPU time (CLOCK_THREAD_CPUTIME_ID): the development machine is shared, and
 * wall time there measures the neighbours. Prints medians of R repetitions. Usage: bench_tracer
 * [launches=200000] [reps=5] */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.h"
#include "gpuprof/trace.h"
#include "produce/tracer/convert.h"

#include "../bench_common.h"

typedef struct rec_buf {
    uint8_t *data;
    size_t len, cap;
    size_t n;
} rec_buf;

static void put(rec_buf *b, const void *rec, size_t size)
{
    size_t need = (size + 7) & ~(size_t)7;
    if (b->len + need > b->cap) {
        b->cap = b->cap ? b->cap * 2 : 1 << 20;
        b->data = realloc(b->data, b->cap);
        if (!b->data) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
    }
    memcpy(b->data + b->len, rec, size);
    b->len += need;
    b->n++;
}

static size_t rec_size(CUpti_ActivityKind k)
{
    switch (k) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return sizeof(CUpti_ActivityMemcpy6);
    default:
        return sizeof(CUpti_ActivityAPI);
    }
}

/* ---- through the injection library, with the fake libcupti delivering the records ---------- */

static size_t min_seen;
static void CUPTIAPI min_request(uint8_t **buf, size_t *size, size_t *max)
{
    *buf = aligned_alloc(8, 4 << 20);
    *size = *buf ? 4 << 20 : 0;
    *max = 0;
}
static CUptiResult (*min_next)(uint8_t *, size_t, CUpti_Activity **);
static void CUPTIAPI min_complete(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
                                  size_t valid)
{
    CUpti_Activity *r = NULL;
    while (min_next(buf, valid, &r) == CUPTI_SUCCESS)
        min_seen++;
    free(buf);
}

/* In a child: either the injection library (tracer = 1) or a minimal consumer that only walks the
 * records (tracer = 0) receives `launches` kernel + runtime records from the fake; returns the CPU
 * ns spent producing and consuming them (the fake delivers full buffers on the calling thread). */
static int64_t pipeline_child(const char *fake, const char *inject, long launches, bool tracer)
{
    setenv("GP_CUPTI_LIBRARY", fake, 1);
    setenv("GP_TRACE_FLUSH_MS", "0", 1);
    setenv("GP_TRACE_BUFFER_MB", "64", 1);
    setenv("GP_TRACE_KINDS", "kernel,runtime", 1);
    void *f = dlopen(fake, RTLD_NOW | RTLD_GLOBAL);
    if (!f)
        return -1;
    int (*run)(const char *) = NULL;
    CUptiResult (*flush)(uint32_t) = NULL, (*enable)(CUpti_ActivityKind) = NULL;
    CUptiResult (*reg)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) = NULL;
    *(void **)&run = dlsym(f, "fake_cupti_run");
    *(void **)&flush = dlsym(f, "cuptiActivityFlushAll");
    *(void **)&enable = dlsym(f, "cuptiActivityEnable");
    *(void **)&reg = dlsym(f, "cuptiActivityRegisterCallbacks");
    *(void **)&min_next = dlsym(f, "cuptiActivityGetNextRecord");
    if (!run || !flush || !enable || !reg || !min_next)
        return -1;
    if (tracer) {
        void *h = dlopen(inject, RTLD_NOW | RTLD_LOCAL);
        int (*init)(void) = NULL;
        if (h)
            *(void **)&init = dlsym(h, "InitializeInjection");
        if (!init || init() != 1)
            return -1;
    } else {
        reg(min_request, min_complete);
        enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        enable(CUPTI_ACTIVITY_KIND_RUNTIME);
    }
    char scenario[512];
    snprintf(scenario, sizeof scenario,
             "repeat n=%ld step=20000 runtime api=cudaLaunchKernel at=0 dur=4000 corr=1\n"
             "repeat n=%ld step=20000 kernel name=k at=6000 dur=10000 corr=1 stream=7\n",
             launches, launches);
    int64_t t0 = gp__thread_cpu_ns();
    if (run(scenario) != 2 * launches)
        return -1;
    flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    return gp__thread_cpu_ns() - t0;
}

static int64_t pipeline(const char *fake, const char *inject, long launches, bool tracer)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        int64_t ns = pipeline_child(fake, inject, launches, tracer);
        ssize_t w = write(fds[1], &ns, sizeof ns);
        _exit(w == (ssize_t)sizeof ns ? 0 : 1); /* no atexit: the final trace write is not timed */
    }
    close(fds[1]);
    int64_t ns = -1;
    if (read(fds[0], &ns, sizeof ns) != (ssize_t)sizeof ns)
        ns = -1;
    close(fds[0]);
    int st;
    waitpid(pid, &st, 0);
    return ns;
}

int main(int argc, char **argv)
{
    long launches = argc > 1 ? atol(argv[1]) : 200000;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    if (launches < 1 || reps < 1 || reps > 64)
        return 2;
    static char names[64][96];
    for (int i = 0; i < 64; i++)
        snprintf(names[i], sizeof names[i],
                 "void at::native::elementwise_kernel<128, 4, Functor%d>(int, Functor%d)", i, i);
    rec_buf b = {0};
    uint64_t t = 1000000;
    for (long i = 0; i < launches; i++) {
        CUpti_ActivityAPI a = {.kind = CUPTI_ACTIVITY_KIND_RUNTIME, .cbid = 211};
        a.start = t;
        a.end = t + 4000;
        a.processId = 100;
        a.threadId = 101;
        a.correlationId = (uint32_t)(2 * i + 1);
        put(&b, &a, sizeof a);
        CUpti_ActivityKernel10 k = {.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL};
        k.start = t + 6000;
        k.end = t + 16000;
        k.streamId = (uint32_t)(7 + i % 4);
        k.gridX = 1024, k.gridY = k.gridZ = 1;
        k.blockX = 256, k.blockY = k.blockZ = 1;
        k.registersPerThread = 32;
        k.correlationId = a.correlationId;
        k.name = names[i % 64];
        put(&b, &k, sizeof k);
        if (i % 8 == 0) {
            a.correlationId = (uint32_t)(2 * i + 2);
            a.cbid = 41;
            put(&b, &a, sizeof a);
            CUpti_ActivityMemcpy6 m = {.kind = CUPTI_ACTIVITY_KIND_MEMCPY, .copyKind = 1};
            m.srcKind = 2, m.dstKind = 3;
            m.bytes = 1 << 20;
            m.start = t + 17000;
            m.end = t + 60000;
            m.streamId = 7;
            m.correlationId = a.correlationId;
            put(&b, &m, sizeof m);
        }
        t += 20000;
    }
    FILE *devnull = fopen("/dev/null", "w");
    if (!devnull)
        return 1;
    int64_t base[64], conv[64], write[64], stream[64];
    size_t events = 0;
    volatile uint64_t sink = 0;
    for (int r = 0; r < reps; r++) {
        /* baseline: walk the records, read kind and start */
        int64_t t0 = gp__thread_cpu_ns();
        uint64_t acc = 0;
        for (size_t off = 0; off < b.len;) {
            const CUpti_Activity *rec = (const CUpti_Activity *)(b.data + off);
            acc += (uint64_t)rec->kind + ((const CUpti_ActivityAPI *)rec)->start;
            off += (rec_size(rec->kind) + 7) & ~(size_t)7;
        }
        sink += acc;
        base[r] = gp__thread_cpu_ns() - t0;
        /* conversion into a fresh trace */
        gp_trace *tr;
        gp__tconv c;
        if (gp_trace_create("bench", &tr) != GP_OK || gp__tconv_init(&c, tr, NULL) != GP_OK)
            return 1;
        t0 = gp__thread_cpu_ns();
        for (size_t off = 0; off < b.len;) {
            const CUpti_Activity *rec = (const CUpti_Activity *)(b.data + off);
            if (gp__tconv_record(&c, rec) != GP_OK)
                return 1;
            off += (rec_size(rec->kind) + 7) & ~(size_t)7;
        }
        conv[r] = gp__thread_cpu_ns() - t0;
        events = gp_trace_event_count(tr);
        /* finish + Chrome JSON write (what each periodic and the final write cost): JSON alone
         * (to /dev/null), then the atomic file (temporary file, fsync, rename) */
        gp_error err;
        t0 = gp__thread_cpu_ns();
        if (gp_trace_finish(tr) != GP_OK ||
            gp_trace_write_chrome_stream(tr, devnull, &err) != GP_OK)
            return 1;
        stream[r] = gp__thread_cpu_ns() - t0;
        t0 = gp__thread_cpu_ns();
        if (gp_trace_write_chrome(tr, "/tmp/gp_bench_tracer.json", &err) != GP_OK) {
            fprintf(stderr, "write failed: %s\n", err.msg);
            return 1;
        }
        write[r] = gp__thread_cpu_ns() - t0;
        gp__tconv_free(&c);
        gp_trace_free(tr);
    }
    remove("/tmp/gp_bench_tracer.json");
    fclose(devnull);
    int64_t mb = (int64_t)gp_bench_median_i64(base, reps),
            mc = (int64_t)gp_bench_median_i64(conv, reps),
            mw = (int64_t)gp_bench_median_i64(write, reps);
    int64_t ms = (int64_t)gp_bench_median_i64(stream, reps);
    printf("records: %zu (%ld launches), events: %zu, reps: %d\n", b.n, launches, events, reps);
    printf("baseline walk:   %8.1f ns/record (median %.2f ms)\n", (double)mb / (double)b.n,
           (double)mb / 1e6);
    printf("convert:         %8.1f ns/record (median %.2f ms)  ratio to baseline %.1fx\n",
           (double)mc / (double)b.n, (double)mc / 1e6, (double)mc / (double)(mb ? mb : 1));
    printf("JSON to /dev/null: %6.1f ns/event  (median %.2f ms)\n", (double)ms / (double)events,
           (double)ms / 1e6);
    printf("atomic file write: %6.1f ns/event  (median %.2f ms, /tmp)\n",
           (double)mw / (double)events, (double)mw / 1e6);
    free(b.data);
#if defined(GP_BENCH_FAKE_CUPTI) && defined(GP_BENCH_INJECT)
    long pl = launches / 2;
    int64_t with[64], without[64];
    for (int r = 0; r < reps; r++) {
        without[r] = pipeline(GP_BENCH_FAKE_CUPTI, GP_BENCH_INJECT, pl, false);
        with[r] = pipeline(GP_BENCH_FAKE_CUPTI, GP_BENCH_INJECT, pl, true);
        if (with[r] < 0 || without[r] < 0) {
            fprintf(stderr, "pipeline run failed\n");
            return 1;
        }
    }
    int64_t mw0 = (int64_t)gp_bench_median_i64(without, reps),
            mw1 = (int64_t)gp_bench_median_i64(with, reps);
    double recs = 2.0 * (double)pl;
    printf("through the FAKE libcupti, %ld launches (%.0f records), produce + consume:\n", pl,
           recs);
    printf("  minimal consumer: %6.1f ns/record; libgpuprof_inject.so: %6.1f ns/record "
           "(%.1fx, +%.1f ns/record)\n",
           (double)mw0 / recs, (double)mw1 / recs, (double)mw1 / (double)(mw0 ? mw0 : 1),
           (double)(mw1 - mw0) / recs);
#endif
    return sink == 42 ? 3 : 0;
}
