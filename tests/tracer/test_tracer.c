/* Tests of the tracer (src/produce/tracer). Nothing here runs on a GPU:
 *   tracer_convert_*  CUPTI activity records (real structs of the installed CUDA headers) into the
 *                     trace model, in memory.
 *   fake_cupti_*      the injection library loaded with dlopen against the FAKE libcupti.so
 *                     (tests/fakes/cupti), in forked children, as the CUDA driver would load it;
 *                     traces read back with gp_trace_read. They test our code, not CUDA or CUPTI.
 *   fake_cupti_cli_*  `gpuprof trace` end to end with tests/tracer/fake_cuda_app, the fake CUPTI.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.h"
#include "gpuprof/trace.h"
#include "io/gpu_records.h"
#include "produce/tracer/convert.h"
#include "produce/tracer/tracer_internal.h"

/* ---- helpers ---------------------------------------------------------------------------- */

static size_t count_kind(const gp_trace *t, gp_event_kind kind)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n_tracks; i++)
        for (size_t j = 0; j < t->tracks[i].n_events; j++)
            n += t->tracks[i].events[j].kind == kind;
    return n;
}

/* The nth event of a kind (in track order), or NULL. */
static const gp_event *find_kind(const gp_trace *t, gp_event_kind kind, size_t nth)
{
    for (size_t i = 0; i < t->n_tracks; i++)
        for (size_t j = 0; j < t->tracks[i].n_events; j++)
            if (t->tracks[i].events[j].kind == kind && nth-- == 0)
                return &t->tracks[i].events[j];
    return NULL;
}

static const gp_event *find_named(const gp_trace *t, const char *name)
{
    for (size_t i = 0; i < t->n_tracks; i++)
        for (size_t j = 0; j < t->tracks[i].n_events; j++)
            if (strcmp(gp_trace_str(t, t->tracks[i].events[j].name), name) == 0)
                return &t->tracks[i].events[j];
    return NULL;
}

typedef struct conv_fixture {
    gp_trace *t;
    gp__tconv c;
} conv_fixture;

static void conv_open(conv_fixture *f)
{
    assert_int_equal(gp_trace_create("test", &f->t), GP_OK);
    assert_int_equal(gp__tconv_init(&f->c, f->t, NULL), GP_OK);
}

static void conv_close(conv_fixture *f)
{
    gp__tconv_free(&f->c);
    gp_trace_free(f->t);
}

static void feed(conv_fixture *f, const void *rec)
{
    assert_int_equal(gp__tconv_record(&f->c, (const CUpti_Activity *)rec), GP_OK);
}

/* ---- conversion, in memory --------------------------------------------------------------- */

static void tracer_convert_kernel_fields(void **state)
{
    conv_fixture f;
    conv_open(&f);
    CUpti_ActivityDevice5 d = {.kind = CUPTI_ACTIVITY_KIND_DEVICE, .id = 1, .name = "Fake H100"};
    d.numMultiprocessors = 100;
    d.numThreadsPerWarp = 32;
    d.maxWarpsPerMultiprocessor = 64;
    feed(&f, &d);
    CUpti_ActivityKernel10 k = {.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL};
    k.start = 1000;
    k.end = 1750;
    k.deviceId = 1;
    k.contextId = 3;
    k.streamId = 13;
    k.gridX = 200, k.gridY = 2, k.gridZ = 1;
    k.blockX = 96, k.blockY = 1, k.blockZ = 1;
    k.registersPerThread = 40;
    k.staticSharedMemory = 256;
    k.dynamicSharedMemory = 1024;
    k.correlationId = 77;
    k.graphId = 5;
    k.graphNodeId = 9;
    k.name = "vector_add";
    feed(&f, &k);
    assert_int_equal(f.c.stats.kernels, 1);
    assert_int_equal(f.t->n_devices, 1);
    assert_string_equal(gp_trace_str(f.t, f.t->devices[0].name), "Fake H100");
    assert_int_equal(f.t->devices[0].max_threads_per_sm, 2048);
    const gp_event *e = find_kind(f.t, GP_EV_KERNEL, 0);
    assert_non_null(e);
    assert_string_equal(gp_trace_str(f.t, e->name), "vector_add");
    assert_int_equal(e->ts, 1000);
    assert_int_equal(e->dur, 750);
    assert_int_equal(e->correlation, 77);
    const gp_track *tr = &f.t->tracks[e->track];
    assert_int_equal(tr->kind, GP_TRACK_GPU_STREAM);
    assert_int_equal(tr->pid, 1);
    assert_int_equal(tr->tid, 13);
    assert_string_equal(gp_trace_str(f.t, tr->name), "stream 13");
    assert_string_equal(gp_trace_str(f.t, tr->process_name), "GPU 1");
    const gp_gpu_info *gi = gp_event_gpu_info(f.t, e);
    assert_non_null(gi);
    assert_int_equal(gi->device, 1);
    assert_int_equal(gi->context, 3);
    assert_int_equal(gi->stream, 13);
    assert_int_equal(gi->grid[0], 200);
    assert_int_equal(gi->grid[1], 2);
    assert_int_equal(gi->block[0], 96);
    assert_int_equal(gi->registers_per_thread, 40);
    assert_int_equal(gi->shared_memory, 1280);
    assert_int_equal(gi->graph_id, 5);
    assert_int_equal(gi->graph_node_id, 9);
    /* 400 blocks on 100 SMs; 96 threads = 3 warps per block. */
    assert_true(gi->blocks_per_sm > 3.99f && gi->blocks_per_sm < 4.01f);
    assert_true(gi->warps_per_sm > 11.99f && gi->warps_per_sm < 12.01f);
    /* The same name pointer again reuses the interned id. */
    k.correlationId = 78;
    feed(&f, &k);
    assert_int_equal(find_kind(f.t, GP_EV_KERNEL, 1)->name, e->name);
    conv_close(&f);
}

static void tracer_convert_demangles_kernel_names(void **state)
{
    /* libiberty's demangler (core/demangle.h), linked in: no libstdc++ needed in the process. */
    conv_fixture f;
    conv_open(&f);
    CUpti_ActivityKernel10 k = {
        .kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, .start = 5, .end = 9};
    k.name = "_Z6vecAddPKfS0_Pfi";
    feed(&f, &k);
    assert_string_equal(gp_trace_str(f.t, find_kind(f.t, GP_EV_KERNEL, 0)->name),
                        "vecAdd(float const*, float const*, float*, int)");
    /* Not a mangled name: kept as is. */
    k.name = "_Zbroken";
    feed(&f, &k);
    assert_string_equal(gp_trace_str(f.t, find_kind(f.t, GP_EV_KERNEL, 1)->name), "_Zbroken");
    conv_close(&f);
}

static void tracer_convert_copies_named_like_kineto(void **state)
{
    conv_fixture f;
    conv_open(&f);
    CUpti_ActivityMemcpy6 m = {.kind = CUPTI_ACTIVITY_KIND_MEMCPY};
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.bytes = 2000000;
    m.start = 10000;
    m.end = 12000; /* 2e6 bytes in 2000 ns = 1000 GB/s */
    m.streamId = 7;
    m.correlationId = 4;
    feed(&f, &m);
    CUpti_ActivityMemcpyPtoP4 p = {.kind = CUPTI_ACTIVITY_KIND_MEMCPY2};
    p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    p.srcKind = p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    p.bytes = 64;
    p.start = 20000;
    p.end = 20000;
    p.deviceId = 1;
    p.streamId = 8;
    feed(&f, &p);
    CUpti_ActivityMemset4 s = {.kind = CUPTI_ACTIVITY_KIND_MEMSET, .bytes = 512};
    s.start = 30000;
    s.end = 30100;
    s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    s.streamId = 7;
    feed(&f, &s);
    const gp_event *e = find_named(f.t, "Memcpy HtoD (Pageable -> Device)");
    assert_non_null(e);
    assert_int_equal(e->kind, GP_EV_MEMCPY);
    assert_int_equal(e->correlation, 4);
    const gp_gpu_info *gi = gp_event_gpu_info(f.t, e);
    assert_int_equal(gi->bytes, 2000000);
    assert_true(gi->bandwidth_gbps > 999.9 && gi->bandwidth_gbps < 1000.1);
    e = find_named(f.t, "Memcpy PtoP (Device -> Device)");
    assert_non_null(e);
    assert_int_equal(f.t->tracks[e->track].pid, 1);
    assert_true(gp_event_gpu_info(f.t, e)->bandwidth_gbps == 0.0); /* zero duration */
    e = find_named(f.t, "Memset (Device)");
    assert_non_null(e);
    assert_int_equal(e->kind, GP_EV_MEMSET);
    assert_int_equal(gp_event_gpu_info(f.t, e)->bytes, 512);
    assert_int_equal(f.c.stats.memcpys, 2);
    assert_int_equal(f.c.stats.memsets, 1);
    assert_string_equal(gp__grec_copy_kind(99), "Unknown");
    conv_close(&f);
}

static void tracer_convert_api_calls_and_syncs(void **state)
{
    conv_fixture f;
    conv_open(&f);
    CUpti_ActivityAPI a = {.kind = CUPTI_ACTIVITY_KIND_RUNTIME, .cbid = 211};
    a.start = 100;
    a.end = 140;
    a.processId = 4242;
    a.threadId = 4243;
    a.correlationId = 9;
    feed(&f, &a);
    a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
    a.cbid = 307;
    feed(&f, &a);
    const gp_event *e = find_kind(f.t, GP_EV_RUNTIME, 0);
    assert_non_null(e);
    /* No CUPTI table here: named by domain and id, cbid kept in extra (+1). */
    assert_string_equal(gp_trace_str(f.t, e->name), "runtime cbid 211");
    assert_int_equal(gp_event_cbid(e), 211);
    assert_int_equal(e->dur, 40);
    assert_int_equal(f.t->tracks[e->track].kind, GP_TRACK_CPU_THREAD);
    assert_int_equal(f.t->tracks[e->track].pid, 4242);
    assert_int_equal(f.t->tracks[e->track].tid, 4243);
    e = find_kind(f.t, GP_EV_DRIVER, 0);
    assert_string_equal(gp_trace_str(f.t, e->name), "driver cbid 307");

    CUpti_ActivityContext3 ctx = {
        .kind = CUPTI_ACTIVITY_KIND_CONTEXT, .contextId = 2, .deviceId = 3};
    feed(&f, &ctx);
    CUpti_ActivitySynchronization2 y = {.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION};
    y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
    y.start = 500;
    y.end = 900;
    y.contextId = 2;
    y.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    y.correlationId = 11;
    feed(&f, &y);
    y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    y.streamId = 7;
    feed(&f, &y);
    e = find_named(f.t, "Context Sync");
    assert_non_null(e);
    assert_int_equal(e->kind, GP_EV_SYNC);
    assert_int_equal(f.t->tracks[e->track].pid, 3); /* device from the context record */
    assert_int_equal(gp_event_gpu_info(f.t, e)->stream, -1);
    assert_string_equal(gp_trace_str(f.t, gp_event_gpu_ext(f.t, e)->sync_kind), "Context Sync");
    e = find_named(f.t, "Stream Sync");
    assert_int_equal(gp_event_gpu_info(f.t, e)->stream, 7);
    assert_int_equal(f.t->tracks[e->track].tid, 7);
    conv_close(&f);
}

static CUpti_ActivityMarker2 marker(uint32_t flags, uint32_t id, uint64_t ts, const char *name)
{
    CUpti_ActivityMarker2 m = {.kind = CUPTI_ACTIVITY_KIND_MARKER, .flags = flags, .id = id};
    m.timestamp = ts;
    m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    m.objectId.pt.processId = 10;
    m.objectId.pt.threadId = 11;
    m.name = name;
    return m;
}

static void tracer_convert_nvtx_ranges_pair_by_id(void **state)
{
    conv_fixture f;
    conv_open(&f);
    CUpti_ActivityMarker2 m = marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 1000, "outer");
    feed(&f, &m);
    m = marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 1100, "inner");
    m.domain = "app";
    feed(&f, &m);
    assert_int_equal(gp__tconv_open_ranges(&f.c), 2);
    m = marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 1300, NULL);
    feed(&f, &m);
    m = marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 2000, NULL);
    feed(&f, &m);
    m = marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 99, 2100, NULL); /* no start: ignored */
    feed(&f, &m);
    m = marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 3, 1500, "checkpoint");
    feed(&f, &m);
    /* A third range reuses the freed slot and still pairs correctly. */
    m = marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 4, 3000, "again");
    feed(&f, &m);
    m = marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 4, 3050, NULL);
    feed(&f, &m);
    assert_int_equal(gp__tconv_open_ranges(&f.c), 0);
    assert_int_equal(count_kind(f.t, GP_EV_RANGE), 3);
    const gp_event *e = find_named(f.t, "outer");
    assert_int_equal(e->ts, 1000);
    assert_int_equal(e->dur, 1000);
    e = find_named(f.t, "app: inner");
    assert_non_null(e);
    assert_int_equal(e->dur, 200);
    assert_int_equal(f.t->tracks[e->track].tid, 11);
    e = find_named(f.t, "again");
    assert_int_equal(e->dur, 50);
    e = find_named(f.t, "checkpoint");
    assert_int_equal(e->kind, GP_EV_INSTANT);
    assert_true(e->flags & GP_EVF_INSTANT);
    assert_int_equal(f.c.stats.markers, 4);
    assert_int_equal(f.c.stats.ignored, 1);
    conv_close(&f);
}

static void tracer_convert_memory_running_total(void **state)
{
    conv_fixture f;
    conv_open(&f);
    CUpti_ActivityMemory4 m = {.kind = CUPTI_ACTIVITY_KIND_MEMORY2, .processId = 5, .deviceId = 2};
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    m.bytes = 100;
    m.address = 0x1000;
    m.timestamp = 10;
    feed(&f, &m);
    m.bytes = 50;
    m.address = 0x2000;
    m.timestamp = 20;
    feed(&f, &m);
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
    m.bytes = 100;
    m.address = 0x1000;
    m.timestamp = 30;
    feed(&f, &m);
    assert_int_equal(count_kind(f.t, GP_EV_MEMORY), 3);
    int64_t totals[3], bytes[3];
    for (size_t i = 0; i < 3; i++) {
        const gp_mem_info *mi = gp_event_mem_info(f.t, find_kind(f.t, GP_EV_MEMORY, i));
        totals[i] = mi->total_allocated;
        bytes[i] = mi->bytes;
        assert_int_equal(mi->device_id, 2);
    }
    assert_int_equal(bytes[0], 100);
    assert_int_equal(bytes[2], -100);
    assert_int_equal(totals[0], 100);
    assert_int_equal(totals[1], 150);
    assert_int_equal(totals[2], 50);
    CUpti_ActivityMemoryPool3 p = {.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL, .deviceId = 2};
    p.timestamp = 40;
    p.utilizedSize = 4096;
    feed(&f, &p);
    assert_int_equal(f.t->n_counters, 1);
    assert_true(f.t->counters[0].value == 4096.0);
    assert_string_equal(gp_trace_str(f.t, f.t->counters[0].series), "gpu2.pool_utilized_bytes");
    conv_close(&f);
}

static void tracer_convert_bad_times_and_unknown_kinds(void **state)
{
    conv_fixture f;
    conv_open(&f);
    CUpti_ActivityKernel10 k = {.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, .name = "k"};
    k.start = 0; /* CUPTI wrote no time: skipped */
    k.end = 10;
    feed(&f, &k);
    k.start = 500;
    k.end = 400; /* reversed: kept, clamped to zero */
    feed(&f, &k);
    CUpti_Activity other = {.kind = CUPTI_ACTIVITY_KIND_PC_SAMPLING};
    feed(&f, &other);
    assert_int_equal(f.c.stats.records, 3);
    assert_int_equal(f.c.stats.bad_time, 1);
    assert_int_equal(f.c.stats.clamped, 1);
    assert_int_equal(f.c.stats.ignored, 1);
    assert_int_equal(count_kind(f.t, GP_EV_KERNEL), 1);
    const gp_event *e = find_kind(f.t, GP_EV_KERNEL, 0);
    assert_int_equal(e->dur, 0);
    assert_true(e->flags & GP_EVF_DUR_CLAMPED);
    conv_close(&f);
}

static void tracer_identity_rank_from_environment(void **state)
{
    unsetenv("RANK");
    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("SLURM_PROCID");
    unsetenv("PMI_RANK");
    unsetenv("WORLD_SIZE");
    assert_int_equal(gp__tracer_env_rank(), -1);
    setenv("SLURM_PROCID", "5", 1);
    assert_int_equal(gp__tracer_env_rank(), 5);
    setenv("RANK", "3", 1); /* RANK comes first */
    setenv("WORLD_SIZE", "8", 1);
    gp_trace *t;
    assert_int_equal(gp_trace_create("x", &t), GP_OK);
    gp__tracer_fill_identity(t, NULL);
    assert_true(t->dist.present);
    assert_int_equal(t->dist.rank, 3);
    assert_int_equal(t->dist.world_size, 8);
    assert_int_equal(t->rank, 3);
    gp_trace_free(t);
    setenv("RANK", "x3", 1); /* malformed: no rank rather than a wrong one */
    assert_int_equal(gp__tracer_env_rank(), -1);
    unsetenv("RANK");
    unsetenv("SLURM_PROCID");
    unsetenv("WORLD_SIZE");
    assert_int_equal(gp_trace_create("x", &t), GP_OK);
    gp__tracer_fill_identity(t, NULL);
    assert_false(t->dist.present);
    gp_trace_free(t);
}

static const char *fake_cupti_path(void);

static void fake_cupti_loader_reuses_loaded_cupti(void **state)
{
    /* A program that already loaded a libcupti (PyTorch does) gets that copy used, not a second
     * one from the hint: checked in a child with the FAKE libcupti preloaded. */
    const char *fake = fake_cupti_path();
    if (!fake || access(fake, R_OK) != 0)
        skip();
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        void *h = dlopen(fake, RTLD_NOW | RTLD_GLOBAL);
        unsetenv("GP_CUPTI_LIBRARY");
        gp__cupti api;
        gp_error err;
        if (!h || gp__cupti_load(&api, "/nonexistent/libcupti.so", &err) != GP_OK)
            _exit(1);
        void *sub = dlsym(h, "cuptiSubscribe");
        if (memcmp(&api.Subscribe, &sub, sizeof sub) != 0)
            _exit(2);
        _exit(strstr(api.path, "fakes/cupti") ? 0 : 3);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static void tracer_real_cupti_library_loads(void **state)
{
    /* The REAL libcupti of the toolkit (no GPU, no driver here): every symbol the table needs
     * resolves, and its version is the one of the headers we read records with. */
    const char *real = getenv("GP_TEST_REAL_CUPTI");
    if (!real || !*real || access(real, R_OK) != 0)
        skip();
    char *saved = getenv("GP_CUPTI_LIBRARY") ? strdup(getenv("GP_CUPTI_LIBRARY")) : NULL;
    unsetenv("GP_CUPTI_LIBRARY");
    gp__cupti api;
    gp_error err = {0};
    gp_status s = gp__cupti_load(&api, real, &err);
    if (saved) {
        setenv("GP_CUPTI_LIBRARY", saved, 1);
        free(saved);
    }
    if (s != GP_OK)
        fail_msg("%s", err.msg);
    assert_non_null(api.ActivityEnableCudaEventDeviceTimestamps);
    assert_non_null(api.SetThreadIdType);
    assert_non_null(api.GetCallbackName);
    uint32_t v = 0;
    assert_int_equal(api.GetVersion(&v), CUPTI_SUCCESS);
    assert_int_equal(v, CUPTI_API_VERSION);
    /* An explicit GP_CUPTI_LIBRARY that does not load is an error naming it: no silent fallback
     * to another CUPTI. */
    setenv("GP_CUPTI_LIBRARY", "/nonexistent/libcupti.so", 1);
    gp__cupti bad;
    s = gp__cupti_load(&bad, real, &err);
    assert_int_equal(s, GP_ENODRIVER);
    assert_non_null(strstr(err.msg, "/nonexistent/libcupti.so"));
    unsetenv("GP_CUPTI_LIBRARY");
}

/* ---- the injection library against the fake CUPTI ---------------------------------------- */

static const char *fake_cupti_path(void)
{
    return getenv("GP_TEST_FAKE_CUPTI");
}

static const char *inject_path(void)
{
    const char *p = getenv("GP_TEST_INJECT");
    return p && *p && access(p, R_OK) == 0 ? p : NULL;
}

/* A scenario touching every converted kind: two launches with their GPU work, copies, a memset,
 * syncs, an NVTX range around it all, a mark, an allocation, CUPTI overhead and a CUDA event. */
static const char *full_scenario =
    "device id=0 name=FakeGPU sms=132\n"
    "context id=1 device=0\n"
    "range_start id=1 name=step at=0\n"
    "runtime api=cudaMalloc at=100 dur=300 corr=1\n"
    "alloc addr=4096 bytes=1048576 at=200 corr=1\n"
    "runtime api=cudaMemcpy at=500 dur=900 corr=2\n"
    "memcpy kind=HtoD src=Pageable dst=Device bytes=1048576 at=600 dur=700 corr=2 stream=7\n"
    "runtime api=cudaLaunchKernel at=1500 dur=40 corr=3\n"
    "kernel name=vector_add at=1600 dur=5000 corr=3 stream=7 grid=4096,1,1 block=256,1,1\n"
    "runtime api=cudaLaunchKernel at=1600 dur=40 corr=4\n"
    "kernel name=vector_add at=6700 dur=5100 corr=4 stream=7 grid=4096,1,1 block=256,1,1\n"
    "runtime api=cudaMemsetAsync at=1700 dur=20 corr=5\n"
    "memset bytes=4096 at=12000 dur=100 corr=5 stream=7\n"
    "driver api=cuLaunchKernel at=1800 dur=30 corr=6\n"
    "kernel name=reduce at=12200 dur=800 corr=6 stream=8\n"
    "runtime api=cudaEventRecord at=1900 dur=10 corr=7\n"
    "event corr=7 at=13000 stream=8\n"
    "runtime api=cudaStreamSynchronize at=2000 dur=11000 corr=8\n"
    "sync type=stream at=2000 dur=11000 corr=8 stream=7\n"
    "mark name=checkpoint at=13100\n"
    "overhead kind=buffer_request at=50 dur=20\n"
    "runtime api=cudaMemcpy at=13200 dur=900 corr=9\n"
    "memcpy kind=DtoH src=Device dst=Pageable bytes=1048576 at=13300 dur=700 corr=9 stream=7\n"
    "free addr=4096 bytes=1048576 at=14200\n"
    "range_end id=1 at=14500\n";

typedef enum child_end {
    END_EXIT,          /* exit(0): atexit flush */
    END_SIGTERM,       /* SIGTERM with the default disposition: our handler */
    END_ABORT,         /* abort(): the fatal-signal path */
    END_SIGKILL,       /* nothing runs: only a periodic write can have saved the trace */
    END_PROFILER_STOP, /* cuProfilerStop, then _exit without atexit */
} child_end;

typedef struct child_cfg {
    const char *scenario;
    child_end end;
    const char *env[6]; /* "K=V" */
    int threads;        /* >1: run the scenario on this many threads at once */
    unsigned sleep_ms;  /* pause before ending */
} child_cfg;

static int (*fake_run)(const char *);

static void *thread_run(void *arg)
{
    return (void *)(intptr_t)fake_run((const char *)arg);
}

/* Child side: what the CUDA driver does, then the program's activity, then the chosen ending. */
static void child_main(const child_cfg *cfg, const char *out_tmpl)
{
    for (int i = 0; i < 6 && cfg->env[i]; i++)
        putenv((char *)cfg->env[i]);
    setenv("GP_CUPTI_LIBRARY", fake_cupti_path(), 1);
    setenv("GP_TRACE_OUTPUT", out_tmpl, 1);
    if (!getenv("GP_TRACE_FLUSH_MS"))
        setenv("GP_TRACE_FLUSH_MS", "0", 1);
    int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0 && !getenv("GP_TEST_KEEP_STDERR"))
        dup2(fd, 2);
    void *inj = dlopen(inject_path(), RTLD_NOW | RTLD_LOCAL);
    int (*init)(void) = NULL;
    if (inj)
        *(void **)&init = dlsym(inj, "InitializeInjection");
    if (!init || init() != 1)
        _exit(60);
    void *fake = dlopen(fake_cupti_path(), RTLD_NOW);
    void (*stop)(void) = NULL;
    if (!fake)
        _exit(61);
    *(void **)&fake_run = dlsym(fake, "fake_cupti_run");
    *(void **)&stop = dlsym(fake, "fake_cupti_profiler_stop");
    if (!fake_run || !stop)
        _exit(62);
    if (cfg->threads > 1) {
        pthread_t th[16];
        int n = cfg->threads > 16 ? 16 : cfg->threads;
        for (int i = 0; i < n; i++)
            if (pthread_create(&th[i], NULL, thread_run, (void *)cfg->scenario) != 0)
                _exit(63);
        for (int i = 0; i < n; i++) {
            void *r;
            pthread_join(th[i], &r);
            if ((intptr_t)r < 0)
                _exit(64);
        }
    } else if (fake_run(cfg->scenario) < 0) {
        _exit(64);
    }
    if (cfg->sleep_ms)
        usleep(cfg->sleep_ms * 1000);
    switch (cfg->end) {
    case END_EXIT:
        exit(0);
    case END_SIGTERM:
        raise(SIGTERM);
        for (int i = 0; i < 1000; i++)
            usleep(10000);
        _exit(65);
    case END_ABORT:
        abort();
    case END_SIGKILL:
        raise(SIGKILL);
        _exit(66);
    case END_PROFILER_STOP: {
        stop();
        char path[512];
        snprintf(path, sizeof path, "%.*s%d.json", (int)(strlen(out_tmpl) - 7), out_tmpl,
                 (int)getpid());
        _exit(access(path, R_OK) == 0 ? 0 : 67);
    }
    }
    _exit(68);
}

typedef struct run_result {
    int status;      /* waitpid status */
    pid_t pid;       /* the child's pid */
    char dir[256];   /* where traces went */
    char path[512];  /* the child's trace path */
    gp_trace *trace; /* read back, or NULL when no file */
    char *json;      /* the file's text */
} run_result;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        buf[n] = '\0';
    fclose(f);
    return buf;
}

static void run_child(const child_cfg *cfg, run_result *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->dir, sizeof r->dir, "/tmp/gp_tracer_test.XXXXXX");
    assert_non_null(mkdtemp(r->dir));
    char tmpl[300];
    snprintf(tmpl, sizeof tmpl, "%s/t.%%p.json", r->dir);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        child_main(cfg, tmpl);
    r->pid = pid;
    assert_int_equal(waitpid(pid, &r->status, 0), pid);
    snprintf(r->path, sizeof r->path, "%s/t.%d.json", r->dir, (int)pid);
    if (access(r->path, R_OK) == 0) {
        gp_error err = {0};
        gp_read_opts ro;
        gp_read_opts_init(&ro);
        ro.quiet = true;
        if (gp_trace_read(r->path, &ro, &r->trace, &err) != GP_OK)
            fail_msg("%s does not read back: %s", r->path, err.msg);
        r->json = slurp(r->path);
    }
}

static void run_free(run_result *r)
{
    gp_trace_free(r->trace);
    free(r->json);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", r->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", r->dir);
}

static const char *meta_value(const gp_trace *t, const char *key)
{
    for (size_t i = 0; i < t->n_meta; i++)
        if (strcmp(gp_trace_str(t, t->meta[i].key), key) == 0)
            return gp_trace_str(t, t->meta[i].value_json);
    return NULL;
}

#define NEED_INJECT()                                                                              \
    do {                                                                                           \
        if (!inject_path() || !fake_cupti_path())                                                  \
            skip();                                                                                \
    } while (0)

/* Checks the trace of full_scenario: every kind, links, clock. */
static void check_full_trace(const run_result *r, gp_ns t0, gp_ns t1)
{
    const gp_trace *t = r->trace;
    assert_non_null(t);
    assert_int_equal(count_kind(t, GP_EV_KERNEL), 3);
    assert_int_equal(count_kind(t, GP_EV_MEMCPY), 2);
    assert_int_equal(count_kind(t, GP_EV_MEMSET), 1);
    assert_int_equal(count_kind(t, GP_EV_RUNTIME), 8);
    assert_int_equal(count_kind(t, GP_EV_DRIVER), 1);
    assert_int_equal(count_kind(t, GP_EV_SYNC), 1);
    assert_int_equal(count_kind(t, GP_EV_MEMORY), 2);
    assert_int_equal(count_kind(t, GP_EV_OVERHEAD), 1);
    assert_int_equal(count_kind(t, GP_EV_RANGE), 1);
    const gp_event *launch = NULL, *k = NULL;
    for (size_t i = 0; (launch = find_kind(t, GP_EV_RUNTIME, i)) != NULL; i++)
        if (launch->correlation == 3)
            break;
    for (size_t i = 0; (k = find_kind(t, GP_EV_KERNEL, i)) != NULL; i++)
        if (k->correlation == 3)
            break;
    assert_non_null(launch);
    assert_non_null(k);
    assert_string_equal(gp_trace_str(t, launch->name), "cudaLaunchKernel");
    assert_string_equal(gp_trace_str(t, k->name), "vector_add");
    assert_int_equal(k->dur, 5000);
    assert_int_equal(k->ts - launch->ts, 100); /* offsets in the scenario, exactly */
    /* The timestamps come from our CLOCK_MONOTONIC callback, inside the child's lifetime. */
    gp_ns start, end;
    gp_trace_span(t, &start, &end);
    assert_true(start >= t0 && end <= t1 + 20000);
    /* Launch -> kernel flows are written as ac2g arrows. */
    assert_non_null(r->json);
    assert_non_null(strstr(r->json, "\"ac2g\""));
    const gp_event *rng = find_kind(t, GP_EV_RANGE, 0);
    assert_string_equal(gp_trace_str(t, rng->name), "step");
    assert_int_equal(rng->dur, 14500);
    assert_non_null(find_named(t, "Memcpy DtoH (Device -> Pageable)"));
    assert_non_null(find_named(t, "Stream Sync"));
    assert_int_equal(t->n_devices, 1);
    assert_non_null(meta_value(t, "cupti_version"));
    const char *dropped = meta_value(t, "dropped_records");
    assert_non_null(dropped);
    assert_string_equal(dropped, "0");
}

static void fake_cupti_inject_exit_writes_full_trace(void **state)
{
    NEED_INJECT();
    child_cfg cfg = {.scenario = full_scenario, .end = END_EXIT};
    run_result r;
    gp_ns t0 = gp__clock_ns();
    run_child(&cfg, &r);
    gp_ns t1 = gp__clock_ns();
    assert_true(WIFEXITED(r.status));
    assert_int_equal(WEXITSTATUS(r.status), 0);
    check_full_trace(&r, t0, t1);
    run_free(&r);
}

/* In a child: initialise the injection library against the fake, then ask the fake what the
 * library did. Returns a bit per failed check (0 = all as expected). */
static int setup_checks(const char *kinds)
{
    setenv("GP_CUPTI_LIBRARY", fake_cupti_path(), 1);
    setenv("GP_TRACE_OUTPUT", "/tmp/gp_tracer_setup_%p.json", 1);
    if (kinds)
        setenv("GP_TRACE_KINDS", kinds, 1);
    void *inj = dlopen(inject_path(), RTLD_NOW | RTLD_LOCAL);
    int (*init)(void) = NULL;
    if (inj)
        *(void **)&init = dlsym(inj, "InitializeInjection");
    if (!init || init() != 1)
        return 1 << 0;
    void *fake = dlopen(fake_cupti_path(), RTLD_NOW);
    uint64_t (*q)(const char *) = NULL;
    if (fake)
        *(void **)&q = dlsym(fake, "fake_cupti_query");
    if (!q)
        return 1 << 1;
    char key[32];
    int bad = 0;
    if (kinds && strcmp(kinds, "bogus") == 0) {
        /* Setup failed (no kind to enable): CUPTI is left as found, the program still runs. */
        snprintf(key, sizeof key, "enabled:%d", CUPTI_ACTIVITY_KIND_DEVICE);
        bad |= (q(key) != 0) << 2;
        bad |= (q("subscribed") != 0) << 3;
        return bad;
    }
    bad |= (q("subscribed") != 1) << 2;
    bad |= (q("ts_callback") != 1) << 3;
    bad |= (q("per_thread") != 1) << 4;
    bad |= (q("thread_id_system") != 1) << 5;
    bad |= (q("buffer_callbacks") != 1) << 6;
    bad |= (q("callback:profiler_stop") != 1 || q("callback:device_reset") != 1 ||
            q("callback:context_destroy") != 1)
           << 7;
    snprintf(key, sizeof key, "enabled:%d", CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    bad |= (q(key) != 1) << 8;
    snprintf(key, sizeof key, "enabled:%d", CUPTI_ACTIVITY_KIND_RUNTIME);
    bad |= (q(key) != (kinds ? 0u : 1u)) << 9;
    snprintf(key, sizeof key, "enabled:%d", CUPTI_ACTIVITY_KIND_MARKER);
    bad |= (q(key) != (kinds ? 0u : 1u)) << 10;
    snprintf(key, sizeof key, "enabled:%d", CUPTI_ACTIVITY_KIND_DEVICE);
    bad |= (q(key) != 1) << 11;
    /* The pool was allocated up front: no buffer was requested before any activity. */
    bad |= (q("requests") != 0) << 12;
    return bad;
}

static void fake_cupti_inject_setup_calls(void **state)
{
    NEED_INJECT();
    static const char *const kinds[] = {NULL, "kernel", "bogus"};
    for (int pass = 0; pass < 3; pass++) {
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            int fd = open("/dev/null", O_WRONLY);
            if (fd >= 0)
                dup2(fd, 2);
            int bad = setup_checks(kinds[pass]);
            _exit(bad ? 100 + __builtin_ctz((unsigned)bad) : 0);
        }
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0); /* 100 + n: check n failed */
    }
}

static void fake_cupti_inject_kinds_filter(void **state)
{
    NEED_INJECT();
    child_cfg cfg = {
        .scenario = full_scenario, .end = END_EXIT, .env = {"GP_TRACE_KINDS=kernels,nvtx"}};
    run_result r;
    run_child(&cfg, &r);
    assert_non_null(r.trace);
    assert_int_equal(count_kind(r.trace, GP_EV_KERNEL), 3);
    assert_int_equal(count_kind(r.trace, GP_EV_RANGE), 1);
    assert_int_equal(count_kind(r.trace, GP_EV_RUNTIME), 0);
    assert_int_equal(count_kind(r.trace, GP_EV_MEMCPY), 0);
    run_free(&r);
}

static void fake_cupti_inject_drops_reported(void **state)
{
    NEED_INJECT();
    child_cfg cfg = {.scenario = "drop n=7\nkernel name=k at=10 dur=5 corr=1\n", .end = END_EXIT};
    run_result r;
    run_child(&cfg, &r);
    assert_non_null(r.trace);
    assert_string_equal(meta_value(r.trace, "dropped_records"), "7");
    run_free(&r);
    /* A pool of 1 MB (2 x 512 KB, up to 2 more allocated) while CUPTI holds every completed
     * buffer: the pool runs dry and CUPTI drops records; kept + dropped = emitted. */
    child_cfg big = {.scenario = "defer on\nrepeat n=15000 step=1000 kernel name=k at=0 dur=500\n",
                     .end = END_EXIT,
                     .env = {"GP_TRACE_BUFFER_MB=1"}};
    run_child(&big, &r);
    assert_non_null(r.trace);
    size_t kept = count_kind(r.trace, GP_EV_KERNEL);
    long dropped = strtol(meta_value(r.trace, "dropped_records"), NULL, 10);
    assert_true(dropped > 0);
    assert_true(kept > 1000);
    assert_int_equal(kept + (size_t)dropped, 15000);
    run_free(&r);
}

static void fake_cupti_inject_profiler_stop_writes(void **state)
{
    NEED_INJECT();
    child_cfg cfg = {.scenario = full_scenario, .end = END_PROFILER_STOP};
    run_result r;
    gp_ns t0 = gp__clock_ns();
    run_child(&cfg, &r);
    gp_ns t1 = gp__clock_ns();
    /* The child checked that the file existed right after cuProfilerStop, before any exit path. */
    assert_true(WIFEXITED(r.status));
    assert_int_equal(WEXITSTATUS(r.status), 0);
    check_full_trace(&r, t0, t1);
    run_free(&r);
}

static void fake_cupti_inject_sigterm_writes(void **state)
{
    NEED_INJECT();
    child_cfg cfg = {.scenario = full_scenario, .end = END_SIGTERM};
    run_result r;
    gp_ns t0 = gp__clock_ns();
    run_child(&cfg, &r);
    gp_ns t1 = gp__clock_ns();
    assert_true(WIFSIGNALED(r.status));
    assert_int_equal(WTERMSIG(r.status), SIGTERM);
    check_full_trace(&r, t0, t1);
    run_free(&r);
}

static void fake_cupti_inject_abort_writes(void **state)
{
    NEED_INJECT();
    child_cfg cfg = {.scenario = full_scenario, .end = END_ABORT};
    run_result r;
    gp_ns t0 = gp__clock_ns();
    run_child(&cfg, &r);
    gp_ns t1 = gp__clock_ns();
    assert_true(WIFSIGNALED(r.status));
    assert_int_equal(WTERMSIG(r.status), SIGABRT);
    check_full_trace(&r, t0, t1);
    run_free(&r);
}

static void fake_cupti_inject_sigkill_keeps_periodic_trace(void **state)
{
    NEED_INJECT();
    /* SIGKILL runs nothing of ours: what survives is the last periodic write. The first one comes
     * 300 ms after start, long after the scenario ran; the kill comes at 1.5 s. */
    child_cfg cfg = {.scenario = full_scenario,
                     .end = END_SIGKILL,
                     .sleep_ms = 1500,
                     .env = {"GP_TRACE_FLUSH_MS=300"}};
    run_result r;
    gp_ns t0 = gp__clock_ns();
    run_child(&cfg, &r);
    gp_ns t1 = gp__clock_ns();
    assert_true(WIFSIGNALED(r.status));
    assert_int_equal(WTERMSIG(r.status), SIGKILL);
    check_full_trace(&r, t0, t1);
    run_free(&r);
    /* Without periodic writes, the same death leaves no file (and no partial one). */
    child_cfg off = {.scenario = full_scenario, .end = END_SIGKILL, .sleep_ms = 100};
    run_child(&off, &r);
    assert_null(r.trace);
    run_free(&r);
}

static void fake_cupti_inject_other_subscriber(void **state)
{
    NEED_INJECT();
    char errpath[] = "/tmp/gp_tracer_err.XXXXXX";
    int fd = mkstemp(errpath);
    assert_true(fd >= 0);
    char keep[] = "GP_TEST_KEEP_STDERR=1";
    child_cfg cfg = {
        .scenario = full_scenario, .end = END_EXIT, .env = {"FAKE_CUPTI_OTHER_SUBSCRIBER=1", keep}};
    int saved = dup(2);
    dup2(fd, 2);
    run_result r;
    run_child(&cfg, &r);
    dup2(saved, 2);
    close(saved);
    close(fd);
    /* The program still ran to its end (exit 0), nothing was traced, and the user was told. */
    assert_true(WIFEXITED(r.status));
    assert_int_equal(WEXITSTATUS(r.status), 0);
    assert_null(r.trace);
    char *text = slurp(errpath);
    assert_non_null(text);
    assert_non_null(strstr(text, "another CUPTI tool"));
    free(text);
    unlink(errpath);
    run_free(&r);
}

static void fake_cupti_inject_no_activity_no_file(void **state)
{
    NEED_INJECT();
    child_cfg cfg = {.scenario = "# nothing\n", .end = END_EXIT};
    run_result r;
    run_child(&cfg, &r);
    assert_true(WIFEXITED(r.status));
    assert_int_equal(WEXITSTATUS(r.status), 0);
    assert_int_equal(access(r.path, F_OK), -1);
    run_free(&r);
}

static void fake_cupti_inject_threads_and_ranks(void **state)
{
    NEED_INJECT();
    /* Four threads record at once into per-thread buffers (pool of 4 MB: 2 x 2 MB shared). */
    child_cfg cfg = {.scenario = "repeat n=3000 step=100 kernel name=k at=0 dur=50 corr=1\n"
                                 "repeat n=3000 step=100 runtime api=cudaLaunchKernel at=0 dur=5 "
                                 "corr=1\n",
                     .end = END_EXIT,
                     .threads = 4,
                     .env = {"GP_TRACE_BUFFER_MB=4", "RANK=2", "WORLD_SIZE=4"}};
    run_result r;
    run_child(&cfg, &r);
    assert_non_null(r.trace);
    assert_int_equal(count_kind(r.trace, GP_EV_KERNEL), 12000);
    assert_int_equal(count_kind(r.trace, GP_EV_RUNTIME), 12000);
    assert_true(r.trace->dist.present);
    assert_int_equal(r.trace->dist.rank, 2);
    assert_int_equal(r.trace->dist.world_size, 4);
    run_free(&r);
}

/* ---- gpuprof trace end to end (fake CUPTI, fake_cuda_app) -------------------------------- */

/* Runs `gpuprof trace ARGS...` with stderr captured into *err_text; returns the wait status. */
/* Runs `gpuprof trace ARGS` with the fake CUPTI; its stderr into *err_text, its stdout into
 * *out_text (out_text NULL: discarded). */
static int run_cli_out(char **err_text, char **out_text, const char *const *args)
{
    char errpath[] = "/tmp/gp_tracer_cli.XXXXXX", outpath[] = "/tmp/gp_tracer_out.XXXXXX";
    int fd = mkstemp(errpath), ofd = mkstemp(outpath);
    assert_true(fd >= 0 && ofd >= 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fd, 2);
        int devnull = out_text ? ofd : open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 1);
        setenv("GP_INJECT_LIBRARY", inject_path(), 1);
        setenv("GP_CUPTI_LIBRARY", fake_cupti_path(), 1);
        char *argv[24];
        int n = 0;
        argv[n++] = (char *)getenv("GP_TEST_GPUPROF");
        argv[n++] = "trace";
        for (int i = 0; args[i] && n < 23; i++)
            argv[n++] = (char *)args[i];
        argv[n] = NULL;
        execv(argv[0], argv);
        _exit(126);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    close(fd);
    close(ofd);
    *err_text = slurp(errpath);
    unlink(errpath);
    if (out_text)
        *out_text = slurp(outpath);
    unlink(outpath);
    return status;
}

static int run_cli(char **err_text, const char *const *args)
{
    return run_cli_out(err_text, NULL, args);
}

#define NEED_CLI()                                                                                 \
    do {                                                                                           \
        NEED_INJECT();                                                                             \
        if (!getenv("GP_TEST_GPUPROF") || !getenv("GP_TEST_FAKE_APP"))                             \
            skip();                                                                                \
    } while (0)

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Makes the folder dir (a mkdtemp template) holding scenario.txt, the full scenario, at scen. */
static void make_scenario(char *dir, char *scen, size_t cap)
{
    assert_non_null(mkdtemp(dir));
    snprintf(scen, cap, "%s/scenario.txt", dir);
    write_file(scen, full_scenario);
}

static void fake_cupti_cli_exit_code_summary_and_file(void **state)
{
    NEED_CLI();
    char dir[] = "/tmp/gp_tracer_cli_dir.XXXXXX";
    char scen[300], out[300];
    make_scenario(dir, scen, sizeof scen);
    snprintf(out, sizeof out, "%s/run.json", dir);
    char *err = NULL;
    const char *args[] = {"-o", out, "--", getenv("GP_TEST_FAKE_APP"), scen, "exit:3", NULL};
    int st = run_cli(&err, args);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 3); /* the program's own exit code */
    assert_non_null(err);
    assert_non_null(strstr(err, "vector_add")); /* the per-kernel summary */
    assert_non_null(strstr(err, "run.json"));
    gp_trace *t = NULL;
    assert_int_equal(gp_trace_read(out, NULL, &t, NULL), GP_OK);
    assert_int_equal(count_kind(t, GP_EV_KERNEL), 3);
    gp_trace_free(t);
    free(err);
    /* The temporary folder is gone: only the trace and the scenario are left. */
    char cmd[400];
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 2", dir);
    assert_int_equal(system(cmd), 0);

    /* --json: the same summary as JSON on stderr (kernels counted from the trace read back). */
    const char *json[] = {"--json", "-o",     out, "--", getenv("GP_TEST_FAKE_APP"),
                          scen,     "exit:0", NULL};
    st = run_cli(&err, json);
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_non_null(strstr(err, "\"kind\":\"kernel\",\"calls\":3,"));
    free(err);

    /* SIGTERM ends the program: 128 + 15, and the trace is complete. */
    unlink(out);
    const char *term[] = {"-o", out, "--", getenv("GP_TEST_FAKE_APP"), scen, "term", NULL};
    st = run_cli(&err, term);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 128 + SIGTERM);
    assert_int_equal(gp_trace_read(out, NULL, &t, NULL), GP_OK);
    assert_int_equal(count_kind(t, GP_EV_KERNEL), 3);
    gp_trace_free(t);
    free(err);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void fake_cupti_cli_no_cuda_no_file(void **state)
{
    NEED_CLI();
    char dir[] = "/tmp/gp_tracer_cli_dir.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char out[300];
    snprintf(out, sizeof out, "%s/none.json", dir);
    char *err = NULL;
    const char *args[] = {"-o", out, "--", getenv("GP_TEST_FAKE_APP"), "-", "nocuda", NULL};
    int st = run_cli(&err, args);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_non_null(strstr(err, "no CUDA activity recorded"));
    assert_int_equal(access(out, F_OK), -1);
    free(err);
    assert_int_equal(rmdir(dir), 0); /* empty: no temporary folder left behind */
}

static void fake_cupti_cli_one_trace_per_process(void **state)
{
    NEED_CLI();
    char dir[] = "/tmp/gp_tracer_cli_dir.XXXXXX";
    char scen[300], out[300];
    make_scenario(dir, scen, sizeof scen);
    snprintf(out, sizeof out, "%s/job.json.gz", dir); /* compressed, by name */
    char *err = NULL;
    const char *args[] = {"-o", out, "--", getenv("GP_TEST_FAKE_APP"), scen, "fork:3", NULL};
    int st = run_cli(&err, args);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    free(err);
    /* job.<pid>.json.gz per process, gzip data; ranks 0..2 from RANK. */
    char cmd[400];
    snprintf(cmd, sizeof cmd, "ls '%s'/job.*.json.gz > '%s/list'", dir, dir);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/list", dir);
    char *list = slurp(cmd);
    assert_non_null(list);
    int seen = 0, n = 0;
    for (char *save = NULL, *p = strtok_r(list, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
        char *bytes = slurp(p);
        assert_non_null(bytes);
        assert_true((unsigned char)bytes[0] == 0x1f && (unsigned char)bytes[1] == 0x8b);
        free(bytes);
        gp_trace *t = NULL;
        assert_int_equal(gp_trace_read(p, NULL, &t, NULL), GP_OK);
        assert_true(t->dist.present);
        assert_true(t->dist.rank >= 0 && t->dist.rank < 3);
        seen |= 1 << t->dist.rank;
        assert_int_equal(count_kind(t, GP_EV_KERNEL), 3);
        gp_trace_free(t);
        n++;
    }
    assert_int_equal(n, 3);
    assert_int_equal(seen, 7);
    free(list);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* -o -: the trace on standard output, nothing else there (the program's own output and every
 * message on stderr), no temporary file left in $TMPDIR; a FIFO at -o is written into, not
 * replaced; several processes with -o -: nothing on stdout, exit 2, the traces kept and named.
 * Against the fake CUPTI (tests/fakes/cupti): this tests gpuprof's handling, not a GPU. */
static void fake_cupti_cli_output_to_stdout(void **state)
{
    NEED_CLI();
    char dir[] = "/tmp/gp_tracer_cli_dir.XXXXXX";
    char scen[300], cmd[700];
    make_scenario(dir, scen, sizeof scen);
    setenv("TMPDIR", dir, 1); /* the temporary folder of -o - goes there */
    char *err = NULL, *out = NULL;
    const char *args[] = {"-o", "-", "--", getenv("GP_TEST_FAKE_APP"), scen, "exit:0", NULL};
    int st = run_cli_out(&err, &out, args);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_non_null(out);
    assert_null(strstr(out, "program output")); /* stdout holds the trace only */
    assert_non_null(strstr(err, "fake_cuda_app: program output"));
    assert_non_null(strstr(err, "wrote the trace to standard output"));
    assert_non_null(strstr(err, "vector_add")); /* the summary, on stderr */
    gp_trace *t = NULL;
    gp_error e = {0};
    assert_int_equal(gp_trace_read_buffer(out, strlen(out), "stdout", NULL, &t, &e), GP_OK);
    assert_int_equal(count_kind(t, GP_EV_KERNEL), 3);
    gp_trace_free(t);
    free(err);
    free(out);
    /* nothing left behind: the scenario only */
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 1", dir);
    assert_int_equal(system(cmd), 0);

    /* A FIFO at -o: written into (a reader drains it), still a FIFO afterwards. */
    char fifo[300], got[300];
    snprintf(fifo, sizeof fifo, "%s/out.fifo", dir);
    snprintf(got, sizeof got, "%s/from_fifo.json", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    snprintf(cmd, sizeof cmd, "cat '%s' > '%s' &", fifo, got);
    assert_int_equal(system(cmd), 0);
    const char *to_fifo[] = {"-o", fifo, "--", getenv("GP_TEST_FAKE_APP"), scen, "exit:0", NULL};
    st = run_cli(&err, to_fifo);
    assert_int_equal(WEXITSTATUS(st), 0);
    free(err);
    struct stat sb;
    assert_int_equal(lstat(fifo, &sb), 0);
    assert_true(S_ISFIFO(sb.st_mode));
    snprintf(cmd, sizeof cmd, "for i in $(seq 50); do [ -s '%s' ] && break; sleep 0.1; done", got);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(gp_trace_read(got, NULL, &t, NULL), GP_OK);
    assert_int_equal(count_kind(t, GP_EV_KERNEL), 3);
    gp_trace_free(t);

    /* Several processes: stdout takes one trace; exit 2 and the traces are named on stderr. */
    const char *forked[] = {"-o", "-", "--", getenv("GP_TEST_FAKE_APP"), scen, "fork:2", NULL};
    st = run_cli_out(&err, &out, forked);
    assert_int_equal(WEXITSTATUS(st), 2);
    assert_non_null(out);
    assert_int_equal(strlen(out), 0);
    assert_non_null(strstr(err, "2 processes used CUDA"));
    char *kept = strstr(err, dir);
    assert_non_null(kept);
    free(err);
    free(out);
    unsetenv("TMPDIR");
    snprintf(cmd, sizeof cmd, "ls -d '%s'/.gpuprof-trace.* >/dev/null && rm -rf '%s'", dir, dir);
    assert_int_equal(system(cmd), 0);
}

static void fake_cupti_cli_usage_errors(void **state)
{
    NEED_CLI();
    char *err = NULL;
    const char *bad_kind[] = {"--kinds", "kernels,bogus", "--", "/bin/true", NULL};
    int st = run_cli(&err, bad_kind);
    assert_int_equal(WEXITSTATUS(st), 2);
    assert_non_null(strstr(err, "bogus"));
    free(err);
    const char *no_prog[] = {"-o", "/tmp/x.json", NULL};
    st = run_cli(&err, no_prog);
    assert_int_equal(WEXITSTATUS(st), 2);
    free(err);
    const char *bad_mb[] = {"--buffer-mb", "0", "--", "/bin/true", NULL};
    st = run_cli(&err, bad_mb);
    assert_int_equal(WEXITSTATUS(st), 2);
    free(err);
    const char *no_dir[] = {"-o", "/nonexistent/dir/t.json", "--", "/bin/true", NULL};
    st = run_cli(&err, no_dir);
    assert_int_equal(WEXITSTATUS(st), 2); /* refused before the program runs */
    assert_non_null(strstr(err, "/nonexistent/dir"));
    free(err);
    const char *missing[] = {"--", "/nonexistent/program", NULL};
    st = run_cli(&err, missing);
    assert_int_equal(WEXITSTATUS(st), 127);
    assert_non_null(strstr(err, "cannot run"));
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tracer_convert_kernel_fields),
        cmocka_unit_test(tracer_convert_demangles_kernel_names),
        cmocka_unit_test(tracer_convert_copies_named_like_kineto),
        cmocka_unit_test(tracer_convert_api_calls_and_syncs),
        cmocka_unit_test(tracer_convert_nvtx_ranges_pair_by_id),
        cmocka_unit_test(tracer_convert_memory_running_total),
        cmocka_unit_test(tracer_convert_bad_times_and_unknown_kinds),
        cmocka_unit_test(tracer_identity_rank_from_environment),
        cmocka_unit_test(fake_cupti_loader_reuses_loaded_cupti),
        cmocka_unit_test(tracer_real_cupti_library_loads),
        cmocka_unit_test(fake_cupti_inject_setup_calls),
        cmocka_unit_test(fake_cupti_inject_exit_writes_full_trace),
        cmocka_unit_test(fake_cupti_inject_kinds_filter),
        cmocka_unit_test(fake_cupti_inject_drops_reported),
        cmocka_unit_test(fake_cupti_inject_profiler_stop_writes),
        cmocka_unit_test(fake_cupti_inject_sigterm_writes),
        cmocka_unit_test(fake_cupti_inject_abort_writes),
        cmocka_unit_test(fake_cupti_inject_sigkill_keeps_periodic_trace),
        cmocka_unit_test(fake_cupti_inject_other_subscriber),
        cmocka_unit_test(fake_cupti_inject_no_activity_no_file),
        cmocka_unit_test(fake_cupti_inject_threads_and_ranks),
        cmocka_unit_test(fake_cupti_cli_exit_code_summary_and_file),
        cmocka_unit_test(fake_cupti_cli_no_cuda_no_file),
        cmocka_unit_test(fake_cupti_cli_one_trace_per_process),
        cmocka_unit_test(fake_cupti_cli_output_to_stdout),
        cmocka_unit_test(fake_cupti_cli_usage_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
