/* bench_ops: `gpuprof ops TRACE` against its baseline `gpuprof summary TRACE`, measured in the same
 * run: each command runs RUNS times as a fresh process (alternating, so both see the same machine
 * load), stdout to /dev/null; the wall time of each run and its peak RSS (wait4's ru_maxrss) are
 * recorded. Prints the medians, the largest peaks and the ratios against the targets of issue #17:
 * ops at most 1.3x summary's time and 1.2x its memory.
 *
 * usage: bench_ops GPUPROF TRACE [runs] [ops options...] */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../bench_common.h"

/* Runs argv with stdout on /dev/null; its wall seconds into *sec, its CPU seconds (user + system,
 * every thread) into *cpu and peak RSS (KiB) into *kb. False when it could not run or failed. */
static bool run(char **argv, double *sec, double *cpu, long *kb)
{
    double t0 = gp_bench_now();
    pid_t child = fork();
    if (child < 0)
        return false;
    if (child == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0)
            dup2(fd, 1);
        execv(argv[0], argv);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(child, &status, 0, &ru) != child)
        return false;
    *sec = gp_bench_now() - t0;
    *kb = ru.ru_maxrss;
    *cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_ops GPUPROF TRACE [runs] [ops options...]\n");
        return 2;
    }
    int runs = argc > 3 ? atoi(argv[3]) : 7;
    if (runs < 1 || runs > 100)
        runs = 7;
    char *sum_argv[] = {argv[1], "summary", "-q", argv[2], NULL};
    char *ops_argv[32] = {argv[1], "ops", "-q"};
    int k = 3;
    for (int i = 4; i < argc && k < 30; i++)
        ops_argv[k++] = argv[i];
    ops_argv[k++] = argv[2];
    ops_argv[k] = NULL;
    double t_sum[100], t_ops[100], c_sum[100], c_ops[100];
    long kb_sum = 0, kb_ops = 0;
    for (int i = 0; i < runs; i++) {
        long kb;
        if (!run(sum_argv, &t_sum[i], &c_sum[i], &kb)) {
            fprintf(stderr, "bench_ops: gpuprof summary failed\n");
            return 1;
        }
        kb_sum = kb > kb_sum ? kb : kb_sum;
        if (!run(ops_argv, &t_ops[i], &c_ops[i], &kb)) {
            fprintf(stderr, "bench_ops: gpuprof ops failed\n");
            return 1;
        }
        kb_ops = kb > kb_ops ? kb : kb_ops;
    }
    double ms = gp_bench_median(t_sum, runs), mo = gp_bench_median(t_ops, runs);
    double cs = gp_bench_median(c_sum, runs), co = gp_bench_median(c_ops, runs);
    double rt = mo / ms, rc = co / cs, rm = (double)kb_ops / (double)kb_sum;
    printf("input: %s, %d runs each, alternating\n", argv[2], runs);
    printf("gpuprof summary: median %.3f s wall, %.3f s CPU, peak RSS %.1f MiB\n", ms, cs,
           (double)kb_sum / 1024);
    printf("gpuprof ops:     median %.3f s wall, %.3f s CPU, peak RSS %.1f MiB\n", mo, co,
           (double)kb_ops / 1024);
    printf("time ratio %.2f wall, %.2f CPU (target <= 1.3: %s), memory ratio %.2f (target <= 1.2: "
           "%s)\n",
           rt, rc, rt <= 1.3 && rc <= 1.3 ? "met" : "NOT met", rm, rm <= 1.2 ? "met" : "NOT met");
    return 0;
}
