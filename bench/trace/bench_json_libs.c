/* JSON parsing approaches for Kineto traces, measured on the same bytes in memory (so that I/O and
 * gzip are out of the picture), each in a child process so its peak RSS is its own:
 *   yajl     streaming tokenizer with no-op callbacks (an upper bound for a yajl-based reader:
 *            building the model would only add work)
 *   json-c   DOM (json_tokener_parse_ex), then walk traceEvents
 *   jansson  DOM (json_loadb), then walk traceEvents
 *   gpuprof  the dedicated scanner building the full trace model
 * Usage: bench_json_libs TRACE [repetitions (default 3)] */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#include "gpuprof/trace.h"

#include "../bench_common.h"

static char *data;
static size_t len;

static int y_null(void *c)
{
    (*(long *)c)++;
    return 1;
}
static int y_bool(void *c, int b)
{
    (void)b;
    (*(long *)c)++;
    return 1;
}
static int y_num(void *c, const char *s, size_t l)
{
    (void)s;
    (void)l;
    (*(long *)c)++;
    return 1;
}
static int y_str(void *c, const unsigned char *s, size_t l)
{
    (void)s;
    (void)l;
    (*(long *)c)++;
    return 1;
}
static int y_map(void *c)
{
    (*(long *)c)++;
    return 1;
}
static int y_key(void *c, const unsigned char *s, size_t l)
{
    (void)s;
    (void)l;
    return 1;
}
static int y_end(void *c)
{
    (void)c;
    return 1;
}

static long run_yajl(void)
{
    long values = 0;
    yajl_callbacks cb = {y_null, y_bool, NULL,  NULL,  y_num, y_str,
                         y_map,  y_key,  y_end, y_map, y_end};
    yajl_handle h = yajl_alloc(&cb, NULL, &values);
    for (size_t off = 0; off < len; off += 4 << 20) {
        size_t n = len - off < (4u << 20) ? len - off : (4u << 20);
        if (yajl_parse(h, (const unsigned char *)data + off, n) != yajl_status_ok)
            return -1;
    }
    if (yajl_complete_parse(h) != yajl_status_ok)
        return -1;
    yajl_free(h);
    return values;
}

static long run_jsonc(void)
{
    json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
    json_object *root = json_tokener_parse_ex(tok, data, (int)len);
    json_tokener_free(tok);
    if (!root)
        return -1;
    json_object *ev;
    long n = json_object_object_get_ex(root, "traceEvents", &ev)
                 ? (long)json_object_array_length(ev)
                 : 0;
    json_object_put(root);
    return n;
}

/* In bench_json_jansson.c: jansson and json-c declare clashing names. */
long run_jansson(const char *data, size_t len);
static long run_jansson_here(void)
{
    return run_jansson(data, len);
}

static long run_gpuprof(void)
{
    gp_read_opts o;
    gp_read_opts_init(&o);
    o.quiet = true;
    gp_trace *t = NULL;
    if (gp_trace_read_buffer(data, len, "bench", &o, &t, NULL) != GP_OK)
        return -1;
    long n = (long)gp_trace_event_count(t);
    gp_trace_free(t);
    return n;
}

static void measure(const char *name, long (*fn)(void), int reps)
{
    double best[16];
    int pipefd[2];
    if (pipe(pipefd) != 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        close(pipefd[0]);
        for (int r = 0; r < reps; r++) {
            double t0 = gp_bench_now();
            long n = fn();
            best[r] = gp_bench_now() - t0;
            if (n < 0)
                best[r] = -1;
        }
        if (write(pipefd[1], best, sizeof(double) * (size_t)reps) < 0)
            _exit(1);
        _exit(0);
    }
    close(pipefd[1]);
    if (read(pipefd[0], best, sizeof(double) * (size_t)reps) !=
        (ssize_t)(sizeof(double) * (size_t)reps))
        best[0] = -1;
    close(pipefd[0]);
    int status;
    struct rusage ru;
    wait4(pid, &status, 0, &ru);
    /* median */
    for (int i = 0; i < reps; i++)
        for (int j = i + 1; j < reps; j++)
            if (best[j] < best[i]) {
                double x = best[i];
                best[i] = best[j];
                best[j] = x;
            }
    double med = best[reps / 2];
    if (med < 0) {
        printf("%-8s  failed\n", name);
        return;
    }
    printf("%-8s  %7.3f s  %7.0f MB/s  peak RSS %7.1f MB (input buffer %.1f MB included)\n", name,
           med, (double)len / 1e6 / med, (double)ru.ru_maxrss / 1024.0, (double)len / 1048576.0);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_json_libs TRACE [repetitions]\n");
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    if (reps < 1 || reps > 16)
        reps = 3;
    gzFile gz = gzopen(argv[1], "rb");
    if (!gz)
        return 2;
    size_t cap = 1 << 24;
    data = malloc(cap);
    int got;
    while ((got = gzread(gz, data + len, (unsigned)(cap - len))) > 0) {
        len += (size_t)got;
        if (len == cap)
            data = realloc(data, cap *= 2);
    }
    gzclose(gz);
    printf("%s: %.1f MB of JSON, %d repetitions, medians\n", argv[1], (double)len / 1e6, reps);
    measure("yajl", run_yajl, reps);
    measure("json-c", run_jsonc, reps);
    measure("jansson", run_jansson_here, reps);
    measure("gpuprof", run_gpuprof, reps);
    return 0;
}
