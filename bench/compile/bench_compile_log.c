/* TORCH_TRACE reader benchmark: reading each rank log of a directory (or one log) into the compile
 * model, against the floor of just reading its bytes (read(2), or zlib inflate for .gz) measured
 * in the same run; then the analysis of the whole job. Prints per file the medians of wall time,
 * MB/s of log text, the ratio to the floor, and the peak RSS of the process.
 * Usage: bench_compile_log LOG|DIR [repetitions (default 7)] */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "core/input.h"
#include "gpuprof/compile.h"

#include "../bench_common.h"

static unsigned long long read_floor(const char *path)
{
    gp__input in;
    gp_error err;
    if (gp__input_open(&in, path, true, &err) != GP_OK) {
        fprintf(stderr, "%s\n", err.msg);
        exit(2);
    }
    static char buf[1 << 20];
    size_t got;
    unsigned long long total = 0;
    do {
        if (gp__input_read(&in, buf, sizeof buf, &got, &err) != GP_OK) {
            fprintf(stderr, "%s\n", err.msg);
            exit(2);
        }
        total += got;
    } while (got);
    gp__input_close(&in);
    return total;
}

static void bench_file(const char *path, int reps)
{
    double floor_s[100], read_s[100], cpu_s[100];
    unsigned long long bytes = 0;
    for (int i = 0; i < reps; i++) {
        double t0 = gp_bench_now();
        bytes = read_floor(path);
        double t1 = gp_bench_now(), c1 = gp_bench_seconds(CLOCK_PROCESS_CPUTIME_ID);
        gp_compile_log *log;
        gp_error err;
        if (gp_compile_log_read(path, NULL, &log, &err) != GP_OK) {
            fprintf(stderr, "%s\n", err.msg);
            exit(2);
        }
        double t2 = gp_bench_now(), c2 = gp_bench_seconds(CLOCK_PROCESS_CPUTIME_ID);
        gp_compile_log_free(log);
        floor_s[i] = t1 - t0;
        read_s[i] = t2 - t1;
        cpu_s[i] = c2 - c1;
    }
    double f = gp_bench_median(floor_s, reps), r = gp_bench_median(read_s, reps);
    double c = gp_bench_median(cpu_s, reps);
    const char *base = strrchr(path, '/');
    printf("%-40s %6.2f MB  wall %8.2f ms  cpu %8.2f ms  %6.1f MB/s  floor %7.2f ms  x%.1f\n",
           base ? base + 1 : path, (double)bytes / 1e6, r * 1e3, c * 1e3, (double)bytes / 1e6 / r,
           f * 1e3, r / f);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_compile_log LOG|DIR [repetitions]\n");
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 7;
    if (reps < 1 || reps > 100)
        return 2;
    struct stat sb;
    if (stat(argv[1], &sb) != 0)
        return 2;
    if (S_ISDIR(sb.st_mode)) {
        struct dirent **names;
        int n = scandir(argv[1], &names, NULL, alphasort);
        for (int i = 0; i < n; i++) {
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", argv[1], names[i]->d_name);
            if (names[i]->d_name[0] != '.' && strstr(names[i]->d_name, ".log"))
                bench_file(p, reps);
            free(names[i]);
        }
        free(names);
    } else {
        bench_file(argv[1], reps);
    }
    double an[100];
    for (int i = 0; i < reps; i++) {
        gp_compile_log *log;
        if (gp_compile_log_read(argv[1], NULL, &log, NULL) != GP_OK)
            return 2;
        double t0 = gp_bench_now();
        gp_compile_analysis *a;
        if (gp_compile_analyze(log, &a) != GP_OK)
            return 2;
        an[i] = gp_bench_now() - t0;
        gp_compile_analysis_free(a);
        gp_compile_log_free(log);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("analysis of the whole input: %.3f ms; peak RSS %.1f MiB\n",
           gp_bench_median(an, reps) * 1e3, (double)ru.ru_maxrss / 1024.0);
    return 0;
}
