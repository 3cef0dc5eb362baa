/* profiler_demo: a small instrumented program for gpuprof's in-process profiler.
 *
 * A CPU pipeline (generate -> parse -> transform -> reduce) runs a few batches, instrumented with
 * every form of the API: gp_range_begin/end, GP_SCOPE, GP_PROFILE_CALL, GP_PROFILED_FUNCTION,
 * tags, a range that declares the bytes it moves, gp_profile_call_n. When a CUDA driver and GPU
 * are present it also allocates device buffers (tracked by the memory tracker), copies batches to
 * the device and fills buffers, timed with CUDA-event timers and device=gpu ranges, with the
 * memory sampler running. Without a driver those parts report "no CUDA driver".
 *
 * usage: profiler_demo [-o DIR] [--batches N]
 * writes DIR/profile.json (JSON profile = Chrome trace; `gpuprof summary DIR/profile.json`) and
 * DIR/profile.folded (flame graph input); prints the summary (with its bottleneck table), the GPU
 * KERNEL TIMING REPORT and the GPU MEMORY TRACKING REPORT. */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gpuprof/profiler.h"

#define N_ITEMS 200000

/* ---- optional CUDA driver work (the example's own dlopen; the library has its own) ------------
 */

static struct {
    void *h;
    int (*init)(unsigned);
    int (*device_get)(int *, int);
    int (*ctx_retain)(void **, int);
    int (*ctx_set)(void *);
    int (*mem_alloc)(unsigned long long *, size_t);
    int (*mem_free)(unsigned long long);
    int (*htod_async)(unsigned long long, const void *, size_t, void *);
    int (*memset_async)(unsigned long long, unsigned, size_t, void *);
    int (*dtoh)(void *, unsigned long long, size_t);
    int (*stream_sync)(void *);
    bool ok;
} cu;

static void cuda_open(void)
{
    cu.h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cu.h)
        return;
    *(void **)&cu.init = dlsym(cu.h, "cuInit");
    *(void **)&cu.device_get = dlsym(cu.h, "cuDeviceGet");
    *(void **)&cu.ctx_retain = dlsym(cu.h, "cuDevicePrimaryCtxRetain");
    *(void **)&cu.ctx_set = dlsym(cu.h, "cuCtxSetCurrent");
    *(void **)&cu.mem_alloc = dlsym(cu.h, "cuMemAlloc_v2");
    *(void **)&cu.mem_free = dlsym(cu.h, "cuMemFree_v2");
    *(void **)&cu.htod_async = dlsym(cu.h, "cuMemcpyHtoDAsync_v2");
    *(void **)&cu.memset_async = dlsym(cu.h, "cuMemsetD32Async");
    *(void **)&cu.dtoh = dlsym(cu.h, "cuMemcpyDtoH_v2");
    *(void **)&cu.stream_sync = dlsym(cu.h, "cuStreamSynchronize");
    int dev = 0;
    void *ctx = NULL;
    cu.ok = cu.init && cu.device_get && cu.ctx_retain && cu.ctx_set && cu.mem_alloc &&
            cu.mem_free && cu.htod_async && cu.memset_async && cu.dtoh && cu.stream_sync &&
            cu.init(0) == 0 && cu.device_get(&dev, 0) == 0 && cu.ctx_retain(&ctx, dev) == 0 &&
            cu.ctx_set(ctx) == 0;
}

static void track(gp_mem_tracker *m, const char *name, const char *shape, const char *dtype,
                  int64_t bytes)
{
    gp_status st = gp_mem_track(m, name, shape, dtype, bytes);
    if (st != GP_OK)
        fprintf(stderr, "profiler_demo: tracking %s: %s\n", name, gp_strerror(st));
}

/* ---- the CPU pipeline -------------------------------------------------------------------- */

static unsigned g_seed = 12345;

static unsigned next_rand(void)
{
    g_seed = g_seed * 1103515245u + 12345u;
    return g_seed >> 8;
}

static void generate(char *text, size_t cap)
{
    GP_SCOPE(NULL, "generate");
    size_t pos = 0;
    for (int i = 0; i < N_ITEMS && pos + 16 < cap; i++)
        pos += (size_t)snprintf(text + pos, cap - pos, "%u,", next_rand() % 100000);
    text[pos] = 0;
}

static size_t parse(const char *text, float *out, size_t cap)
{
    gp_range_begin(NULL, "parse", NULL);
    size_t n = 0;
    const char *p = text;
    while (*p && n < cap) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p)
            break;
        out[n++] = (float)v;
        p = *end ? end + 1 : end;
    }
    gp_range_tag_int(NULL, "items", (int64_t)n);
    gp_range_end(NULL);
    return n;
}

/* The whole function is a range, its body untouched. */
GP_PROFILED_FUNCTION(NULL, double, transform, (float *v, size_t n), (v, n))
{
    double acc = 0;
    for (size_t i = 0; i < n; i++) {
        v[i] = sqrtf(v[i]) * 1.5f + 1.0f;
        acc += v[i];
    }
    return acc;
}

static double reduce(const float *v, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (double)v[i] * v[i];
    return s;
}

static volatile double g_checksum;

static void checksum_block(void *arg)
{
    const float *v = arg;
    double s = 0;
    for (int i = 0; i < 20000; i++)
        s += v[i];
    g_checksum = s;
}

/* ---- GPU part --------------------------------------------------------------------------- */

static void gpu_batch(float *host, size_t n, unsigned long long dbuf, unsigned long long dtmp)
{
    gp_cuda_timer *t = gp_profiler_cuda_timer(NULL);
    size_t bytes = n * sizeof(float);
    gp_range_begin(
        NULL, "upload",
        &(gp_range_opts){.device = GP_DEVICE_GPU, .backend = "cuda", .bytes = (int64_t)bytes});
    (void)gp_cuda_timer_start(t, "memcpy_htod", NULL);
    cu.htod_async(dbuf, host, bytes, NULL);
    (void)gp_cuda_timer_stop(t, "memcpy_htod");
    gp_range_end(NULL);
    gp_range_begin(NULL, "fill", &(gp_range_opts){.device = GP_DEVICE_GPU, .backend = "cuda"});
    (void)gp_cuda_timer_start(t, "memset_d32", NULL);
    cu.memset_async(dtmp, 0x3f800000u, n, NULL);
    (void)gp_cuda_timer_stop(t, "memset_d32");
    gp_range_end(NULL);
    GP_SCOPE(NULL, "download");
    cu.stream_sync(NULL);
    cu.dtoh(host, dtmp, 64 * sizeof(float));
}

int main(int argc, char **argv)
{
    const char *dir = "profiler_demo_out";
    int batches = 5;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            dir = argv[++i];
        } else if (strcmp(argv[i], "--batches") == 0 && i + 1 < argc) {
            batches = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: profiler_demo [-o DIR] [--batches N]\n");
            return 0;
        } else {
            fprintf(stderr, "profiler_demo: unknown argument '%s' (try --help)\n", argv[i]);
            return 2;
        }
    }
    if (batches < 1 || batches > 1000) {
        fprintf(stderr, "profiler_demo: --batches must be 1..1000\n");
        return 2;
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "profiler_demo: cannot create %s: %s\n", dir, strerror(errno));
        return 1;
    }
    gp_profiler *p = gp_profiler_global();
    gp_mem_tracker *mem = gp_profiler_mem_tracker(p);
    cuda_open();
    printf("CUDA driver work: %s\n", cu.ok ? "yes" : "no (no CUDA driver or GPU: CPU part only)");

    size_t text_cap = (size_t)N_ITEMS * 8;
    char *text = malloc(text_cap);
    float *values = malloc(sizeof(float) * N_ITEMS);
    if (!text || !values)
        return 1;
    unsigned long long dbuf = 0, dtmp = 0;
    if (cu.ok) {
        if (cu.mem_alloc(&dbuf, sizeof(float) * N_ITEMS) == 0 &&
            cu.mem_alloc(&dtmp, sizeof(float) * N_ITEMS) == 0) {
            track(mem, "values_dev", "200000", "float32", sizeof(float) * N_ITEMS);
            track(mem, "scratch_dev", "200000", "float32", sizeof(float) * N_ITEMS);
            if (gp_mem_sampler_start(mem, 5) != GP_OK)
                fprintf(stderr, "profiler_demo: memory sampler not started\n");
        } else {
            cu.ok = false;
        }
    }
    track(mem, "text_host", "1600000", "char", (int64_t)text_cap);

    double total = 0;
    for (int b = 0; b < batches; b++) {
        GP_SCOPE(NULL, "batch");
        gp_range_tag_int(NULL, "batch", b);
        generate(text, text_cap);
        size_t n = parse(text, values, N_ITEMS);
        gp_range_begin(NULL, "copy_values",
                       &(gp_range_opts){.backend = "memcpy",
                                        .bytes = (int64_t)(n * sizeof(float)),
                                        .cpu_time = true});
        float *copy = malloc(n * sizeof(float));
        if (copy) {
            track(mem, "copy_host", "200000", "float32", (int64_t)(n * sizeof(float)));
            memcpy(copy, values, n * sizeof(float));
        }
        gp_range_end(NULL);
        total += transform(values, n);
        total += GP_PROFILE_CALL(NULL, "reduce", reduce(values, n));
        if (cu.ok)
            gpu_batch(values, n, dbuf, dtmp);
        if (copy) {
            (void)gp_mem_untrack(mem, "copy_host");
            free(copy);
        }
    }
    gp_call_stats cs;
    if (gp_profile_call_n(NULL, "checksum_block", checksum_block, values, 5, 50, &cs) == GP_OK)
        printf("checksum_block: %llu runs, mean %.3f us, p50 %.3f us, p99 %.3f us%s\n",
               (unsigned long long)cs.iterations, cs.mean / 1e3, cs.p50 / 1e3, cs.p99 / 1e3,
               cs.has_gpu ? " (GPU time measured)" : "");
    if (cu.ok) {
        gp_mem_sampler_stop(mem);
        (void)gp_mem_untrack(mem, "scratch_dev");
        cu.mem_free(dtmp);
    }
    printf("pipeline result: %.1f\n\n", total);

    gp_status st = gp_profiler_print_summary(p, stdout);
    if (st == GP_OK)
        st = gp_profiler_print_breakdown(p, stdout);
    if (st == GP_OK)
        st = gp_cuda_timer_print(gp_profiler_cuda_timer(p), stdout);
    if (st == GP_OK)
        st = gp_mem_print(mem, stdout);
    char json[4096], folded[4096];
    snprintf(json, sizeof json, "%s/profile.json", dir);
    snprintf(folded, sizeof folded, "%s/profile.folded", dir);
    gp_error err;
    if (st == GP_OK && (st = gp_profiler_export_json(p, json, &err)) != GP_OK)
        fprintf(stderr, "profiler_demo: %s\n", err.msg);
    if (st == GP_OK && (st = gp_profiler_export_folded(p, folded, &err)) != GP_OK)
        fprintf(stderr, "profiler_demo: %s\n", err.msg);
    gp_profiler_stats ps;
    gp_profiler_get_stats(p, &ps);
    if (st == GP_OK) {
        printf("\nprofile (JSON profile and Chrome trace, one file): %s\n", json);
        printf("folded stacks: %s\n", folded);
        printf("ranges %llu, dropped %llu, clock %s, overhead %.1f ns per range\n",
               (unsigned long long)ps.ranges, (unsigned long long)ps.dropped, ps.clock,
               ps.overhead_ns);
        printf("next: gpuprof summary %s\n", json);
    }
    if (cu.ok) {
        (void)gp_mem_untrack(mem, "values_dev");
        cu.mem_free(dbuf);
    }
    free(text);
    free(values);
    return st == GP_OK ? 0 : 1;
}
