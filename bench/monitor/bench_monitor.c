/* Benchmark of the monitor and the exporter on the fake NVML driver (8 GPUs, every metric).
 *
 *   1. CPU time per sampling round (8 GPUs, comprehensive level, processes, detectors): the whole
 *      round, the fake driver's own cost (the same NVML calls made directly: the baseline), and
 *      the difference = gpuprof's own cost. Target: own <= 50 us per round.
 *   2. Resident memory of `gpuprof monitor` with full rings (8 GPUs x max_samples 1000, set on
 * the command line: the default became 10,000 with the seed's configuration). Target <= 8 MB.
 *   3. Exporter scrape latency (connect + GET /metrics + read) while the sampler runs every
 *      100 ms and two other clients scrape 200 times a second each; baseline: the static "/" page
 *      under the same load. Target p99 <= 2 ms.
 *
 * Usage: bench_monitor [--quick]. Prints medians and ratios; exit 0. The fake proves nothing about
 * a real GPU: NVML's own cost on hardware is not measured here. */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/stats.h"
#include "gpuprof/monitor.h"
#include "gpuprof/serve.h"
#include "produce/monitor/nvml.h"

#define N_GPUS 8

static double pct(double *v, size_t n, double p)
{
    qsort(v, n, sizeof *v, gp__cmp_double);
    size_t i = (size_t)ceil(p / 100 * (double)n);
    return v[i == 0 ? 0 : i - 1];
}

/* ---- 1. CPU per sampling round --------------------------------------------------------- */

typedef struct fake_api {
    int (*util)(void *, gp__nvmlUtilization_t *);
    int (*mem2)(void *, gp__nvmlMemory_v2_t *);
    int (*tempv)(void *, gp__nvmlTemperature_v1_t *);
    int (*thr)(void *, int, unsigned *);
    int (*power)(void *, unsigned *);
    int (*limit)(void *, unsigned *);
    int (*energy)(void *, unsigned long long *);
    int (*clock)(void *, int, unsigned *);
    int (*maxclock)(void *, int, unsigned *);
    int (*fan2)(void *, unsigned, unsigned *);
    int (*pcie)(void *, int, unsigned *);
    int (*reasons)(void *, unsigned long long *);
    int (*ecc)(void *, int, int, unsigned long long *);
    int (*mig)(void *, unsigned *, unsigned *);
    int (*procs[3])(void *, unsigned *, void *);
    int (*putil)(void *, gp__nvmlProcessUtilizationSample_t *, unsigned *, unsigned long long);
    int (*wait)(void *, gp__nvmlEventData_t *, unsigned);
    int (*handle)(unsigned, void **);
} fake_api;

#define SYM(field, name) *(void **)&api->field = dlsym(lib, name)

static void load_api(void *lib, fake_api *api)
{
    SYM(util, "nvmlDeviceGetUtilizationRates");
    SYM(mem2, "nvmlDeviceGetMemoryInfo_v2");
    SYM(tempv, "nvmlDeviceGetTemperatureV");
    SYM(thr, "nvmlDeviceGetTemperatureThreshold");
    SYM(power, "nvmlDeviceGetPowerUsage");
    SYM(limit, "nvmlDeviceGetEnforcedPowerLimit");
    SYM(energy, "nvmlDeviceGetTotalEnergyConsumption");
    SYM(clock, "nvmlDeviceGetClockInfo");
    SYM(maxclock, "nvmlDeviceGetMaxClockInfo");
    SYM(fan2, "nvmlDeviceGetFanSpeed_v2");
    SYM(pcie, "nvmlDeviceGetPcieThroughput");
    SYM(reasons, "nvmlDeviceGetCurrentClocksEventReasons");
    SYM(ecc, "nvmlDeviceGetTotalEccErrors");
    SYM(mig, "nvmlDeviceGetMigMode");
    SYM(procs[0], "nvmlDeviceGetComputeRunningProcesses_v3");
    SYM(procs[1], "nvmlDeviceGetGraphicsRunningProcesses_v3");
    SYM(procs[2], "nvmlDeviceGetMPSComputeRunningProcesses_v3");
    SYM(putil, "nvmlDeviceGetProcessUtilization");
    SYM(wait, "nvmlEventSetWait_v2");
    SYM(handle, "nvmlDeviceGetHandleByIndex_v2");
}

/* The NVML calls one gpuprof round makes at the comprehensive level, made directly. */
static void baseline_round(const fake_api *a, void **dev, void *evset)
{
    static gp__nvmlProcessInfo_v2_t pbuf[64];
    static gp__nvmlProcessUtilizationSample_t ubuf[64];
    for (int i = 0; i < N_GPUS; i++) {
        void *h = dev[i];
        gp__nvmlUtilization_t u;
        a->util(h, &u);
        gp__nvmlMemory_v2_t m = {.version = GP__NVML_MEMORY_V2};
        a->mem2(h, &m);
        gp__nvmlTemperature_v1_t t = {.version = GP__NVML_TEMPERATURE_V1};
        a->tempv(h, &t);
        unsigned v;
        unsigned long long ull;
        a->thr(h, 1, &v);
        a->thr(h, 0, &v);
        a->power(h, &v);
        a->limit(h, &v);
        a->energy(h, &ull);
        for (int c = 0; c < 3; c++)
            a->clock(h, c, &v);
        for (int c = 0; c < 3; c++)
            a->maxclock(h, c, &v);
        a->fan2(h, 0, &v);
        a->pcie(h, 0, &v);
        a->pcie(h, 1, &v);
        a->reasons(h, &ull);
        a->ecc(h, 0, 0, &ull);
        a->ecc(h, 1, 0, &ull);
        unsigned cur, pend;
        a->mig(h, &cur, &pend);
        for (int s = 0; s < 3; s++) {
            unsigned n = 64;
            a->procs[s](h, &n, pbuf);
        }
        unsigned n = 0;
        a->putil(h, NULL, &n, 0);
        n = 64;
        a->putil(h, ubuf, &n, 0);
    }
    gp__nvmlEventData_t d;
    a->wait(evset, &d, 0);
}

static void bench_cpu(const char *fake_path, const char *scenario, int rounds, int reps)
{
    setenv("GP_NVML_LIBRARY", fake_path, 1);
    setenv("GP_FAKE_NVML_SCENARIO", scenario, 1);
    void *lib = dlopen(fake_path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "cannot load %s\n", fake_path);
        exit(1);
    }
    void (*set_time)(double);
    *(void **)&set_time = dlsym(lib, "fake_nvml_set_time");
    fake_api api;
    load_api(lib, &api);
    gp_monitor_config cfg;
    gp_monitor_config_init(&cfg);
    cfg.level = GP_LEVEL_COMPREHENSIVE;
    gp_monitor *m = NULL;
    gp_error err = {0};
    if (gp_monitor_open(&cfg, &m, &err) != GP_OK) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
    void *dev[N_GPUS];
    for (unsigned i = 0; i < N_GPUS; i++)
        api.handle(i, &dev[i]);
    int (*create)(void **);
    *(void **)&create = dlsym(lib, "nvmlEventSetCreate");
    void *evset = NULL;
    create(&evset);

    double *total = calloc((size_t)reps, sizeof *total);
    double *base = calloc((size_t)reps, sizeof *base);
    double t_s = 0;
    for (int r = 0; r < reps; r++) {
        int64_t c0 = gp__thread_cpu_ns();
        for (int i = 0; i < rounds; i++) {
            t_s += 0.1;
            set_time(t_s);
            if (gp_monitor_sample_now(m, (gp_ns)(t_s * 1e9)) != GP_OK)
                exit(1);
        }
        int64_t c1 = gp__thread_cpu_ns();
        for (int i = 0; i < rounds; i++) {
            t_s += 0.1;
            set_time(t_s);
            baseline_round(&api, dev, evset);
        }
        int64_t c2 = gp__thread_cpu_ns();
        total[r] = (double)(c1 - c0) / rounds / 1e3;
        base[r] = (double)(c2 - c1) / rounds / 1e3;
    }
    double own[64];
    for (int r = 0; r < reps; r++)
        own[r] = total[r] - base[r];
    double mt = pct(total, (size_t)reps, 50), mb = pct(base, (size_t)reps, 50);
    double mo = pct(own, (size_t)reps, 50);
    gp_gpu_sample s;
    int valid = 0;
    if (gp_monitor_latest(m, 0, &s) == GP_OK)
        for (int k = 0; k < GP_M_COUNT; k++)
            valid += gp_sample_has(&s, (gp_metric)k);
    printf("1. sampling round, %d fake GPUs, %d metrics each, %d rounds x %d reps (CPU time)\n",
           N_GPUS, valid, rounds, reps);
    printf("   gpuprof round (incl. fake calls)  median %8.2f us\n", mt);
    printf("   baseline: same NVML calls direct  median %8.2f us\n", mb);
    printf("   gpuprof's own cost                median %8.2f us  (target <= 50 us; %.2f us "
           "per GPU; ratio round/baseline %.2f)\n",
           mo, mo / N_GPUS, mt / mb);
    int (*fr)(void *);
    *(void **)&fr = dlsym(lib, "nvmlEventSetFree");
    fr(evset);
    gp_monitor_close(m);
    dlclose(lib);
    free(total);
    free(base);
}

/* ---- 2. RSS of `gpuprof monitor` ------------------------------------------------------- */

static long rss_kb(pid_t pid, const char *field)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return -1;
    long v = -1;
    size_t fl = strlen(field);
    while (fgets(line, sizeof line, fp))
        if (strncmp(line, field, fl) == 0)
            v = strtol(line + fl + 1, NULL, 10);
    fclose(fp);
    return v;
}

static void bench_rss(const char *cli, const char *fake_path, const char *scenario, int secs)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("GP_NVML_LIBRARY", fake_path, 1);
        setenv("GP_FAKE_NVML_SCENARIO", scenario, 1);
        if (!freopen("/dev/null", "w", stdout))
            _exit(127);
        char count[16];
        snprintf(count, sizeof count, "%d", secs);
        /* 2 ms sampling fills the 1000-sample rings in 2 s */
        execl(cli, cli, "monitor", "--level", "comprehensive", "--set", "sampling_interval_ms=2",
              "--set", "max_samples=1000", "--interval", "1s", "--count", count, "--json",
              (char *)NULL);
        _exit(127);
    }
    long peak = 0, last = 0;
    for (int i = 0; i < secs * 10 - 5; i++) {
        struct timespec ts = {0, 100000000L};
        nanosleep(&ts, NULL);
        long v = rss_kb(pid, "VmRSS:");
        if (v > 0) {
            last = v;
            if (v > peak)
                peak = v;
        }
    }
    int st;
    waitpid(pid, &st, 0);
    printf("2. `gpuprof monitor --json`, %d fake GPUs, comprehensive, rings full (1000 samples "
           "each)\n",
           N_GPUS);
    printf("   resident memory: last %.2f MB, peak %.2f MB  (target <= 8 MB; exit status %d)\n",
           last / 1024.0, peak / 1024.0, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

/* CPU share of `gpuprof monitor` at its default 100 ms sampling (all threads, whole process). */
static void bench_process_cpu(const char *cli, const char *fake_path, const char *scenario,
                              int secs)
{
    fflush(stdout);
    int64_t t0 = gp__clock_ns();
    pid_t pid = fork();
    if (pid == 0) {
        setenv("GP_NVML_LIBRARY", fake_path, 1);
        setenv("GP_FAKE_NVML_SCENARIO", scenario, 1);
        if (!freopen("/dev/null", "w", stdout))
            _exit(127);
        char count[16];
        snprintf(count, sizeof count, "%d", secs);
        execl(cli, cli, "monitor", "--level", "comprehensive", "--interval", "1s", "--count", count,
              (char *)NULL);
        _exit(127);
    }
    int st;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) < 0)
        return;
    double wall = (double)(gp__clock_ns() - t0) / 1e9;
    double cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
                 (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    printf("   whole process at the default 100 ms sampling, %d s: CPU %.3f s over %.2f s wall = "
           "%.2f %% of one core (incl. start-up and the fake driver)\n",
           secs, cpu, wall, 100 * cpu / wall);
}

/* ---- 3. exporter scrape latency under load ------------------------------------------------ */

static atomic_int load_stop;
static uint16_t ex_port;

/* One HTTP/1.0 GET; returns the latency in us, or -1 on error. */
static double scrape(const char *path)
{
    int64_t t0 = gp__clock_ns();
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(ex_port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        return -1;
    }
    char req[128];
    int len = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\n\r\n", path);
    if (write(fd, req, (size_t)len) != len) {
        close(fd);
        return -1;
    }
    static __thread char buf[1 << 16];
    ssize_t n;
    size_t total = 0;
    bool ok = false;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        if (total == 0 && n > 12 && memcmp(buf + 9, "200", 3) == 0)
            ok = true;
        total += (size_t)n;
    }
    close(fd);
    return ok ? (double)(gp__clock_ns() - t0) / 1e3 : -1;
}

/* A background scraper: one /metrics scrape every 5 ms (200 per second; Prometheus scrapes a
 * target every 15-60 s). Unpaced clients would only measure how the 2-core machine shares its
 * CPU between them and the server. */
static void *loader(void *arg)
{
    (void)arg;
    while (!atomic_load(&load_stop)) {
        (void)scrape("/metrics");
        struct timespec ts = {0, 5000000L};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void bench_scrape(const char *fake_path, const char *scenario, int n)
{
    setenv("GP_NVML_LIBRARY", fake_path, 1);
    setenv("GP_FAKE_NVML_SCENARIO", scenario, 1);
    gp_monitor_config cfg;
    gp_monitor_config_init(&cfg);
    cfg.level = GP_LEVEL_COMPREHENSIVE;
    gp_monitor *m = NULL;
    gp_error err = {0};
    if (gp_monitor_open(&cfg, &m, &err) != GP_OK || gp_monitor_start(m) != GP_OK) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
    gp_monitor_wait_samples(m, 2, 5000);
    gp_exporter *ex = NULL;
    gp_exporter_opts opts = {.listen = "127.0.0.1:0", .hostname = "bench"};
    if (gp_exporter_start(m, &opts, &ex, &err) != GP_OK) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
    ex_port = gp_exporter_port(ex);
    char *text = NULL;
    size_t len = 0;
    double *render = calloc((size_t)n, sizeof *render);
    for (int i = 0; i < n; i++) {
        int64_t t0 = gp__thread_cpu_ns();
        if (gp_prometheus_render(m, "bench", &text, &len) != GP_OK)
            exit(1);
        render[i] = (double)(gp__thread_cpu_ns() - t0) / 1e3;
        free(text);
    }
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, loader, NULL);
    double *lat = calloc((size_t)n, sizeof *lat), *base = calloc((size_t)n, sizeof *base);
    int errors = 0;
    for (int i = 0; i < n; i++) {
        base[i] = scrape("/");
        lat[i] = scrape("/metrics");
        if (lat[i] < 0 || base[i] < 0)
            errors++;
    }
    atomic_store(&load_stop, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    uint64_t scrapes = gp_exporter_scrapes(ex);
    gp_exporter_stop(ex);
    gp_monitor_close(m);
    double r50 = pct(render, (size_t)n, 50);
    double p50 = pct(lat, (size_t)n, 50), p99 = pct(lat, (size_t)n, 99);
    double b50 = pct(base, (size_t)n, 50), b99 = pct(base, (size_t)n, 99);
    printf("3. exporter, %d fake GPUs sampled every 100 ms, 2 background clients scraping 200/s "
           "each, %d timed scrapes (%zu bytes each)\n",
           N_GPUS, n, len);
    printf("   render /metrics (CPU)             median %8.1f us\n", r50);
    printf("   GET /metrics latency              median %8.1f us  p99 %8.1f us  (target p99 <= "
           "2000 us)\n",
           p50, p99);
    printf("   baseline: GET / (static) latency  median %8.1f us  p99 %8.1f us  (ratio p99 "
           "%.2f)\n",
           b50, b99, p99 / b99);
    printf("   errors %d, scrapes served %llu\n", errors, (unsigned long long)scrapes);
    free(render);
    free(lat);
    free(base);
}

int main(int argc, char **argv)
{
    bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    signal(SIGPIPE, SIG_IGN);
    const char *fake = getenv("GP_FAKE_NVML") ? getenv("GP_FAKE_NVML") : GP_BENCH_FAKE_NVML;
    const char *cli = getenv("GPUPROF") ? getenv("GPUPROF") : GP_BENCH_CLI;
    char scenario[4096];
    snprintf(scenario, sizeof scenario, "%s/bench/monitor/eight_gpus.txt", GP_BENCH_SOURCE_DIR);
    printf("bench_monitor: fake NVML %s (tests our code, not a GPU)\n", fake);
    bench_cpu(fake, scenario, quick ? 200 : 1000, quick ? 3 : 9);
    bench_rss(cli, fake, scenario, quick ? 5 : 6);
    bench_process_cpu(cli, fake, scenario, quick ? 3 : 5);
    bench_scrape(fake, scenario, quick ? 300 : 2000);
    return 0;
}
