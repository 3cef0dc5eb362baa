/* Tests of the Prometheus writer (src/render/prometheus.c) and the servers (src/app/serve): what
 * the servers read of a client (the gate's request-head check, the target decoder); the
 * Prometheus rendering (golden file) and the HTTP exporter, on a monitor running against the fake
 * NVML driver (tests/fakes/nvml): they test our code, not a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "app/serve/http.h"
#include "app/serve/serve.h"
#include "common/scaling.h"
#include "gpuprof/compile.h"
#include "gpuprof/monitor.h"
#include "gpuprof/serve.h"

static gp__head_verdict head(const char *text, size_t cap)
{
    const char *why = NULL;
    gp__head_verdict v = gp__http_head_check(text, strlen(text), cap, &why);
    assert_non_null(why);
    if (v == GP__HEAD_BAD || v == GP__HEAD_TOO_LARGE)
        assert_true(why[0] != 0);
    return v;
}

/* Garbage, a TLS handshake and %00 are refused as soon as the bytes decide it; a head is whole at
 * its empty line (CRLF or LF); a head without an end is too large at the cap. */
static void http_head_check_verdicts(void **state)
{
    (void)state;
    assert_int_equal(head("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 16384), GP__HEAD_COMPLETE);
    assert_int_equal(head("GET / HTTP/1.0\n\n", 16384), GP__HEAD_COMPLETE);
    assert_int_equal(head("\r\nGET / HTTP/1.0\r\n\r\n", 16384), GP__HEAD_COMPLETE);
    assert_int_equal(head("GET /healthz HTTP/1.1\r\nHost: x\r\n", 16384), GP__HEAD_MORE);
    assert_int_equal(head("GE", 16384), GP__HEAD_MORE);
    assert_int_equal(head("GET /report/a%0", 16384), GP__HEAD_MORE);
    assert_int_equal(head("garbage\r\n\r\n", 16384), GP__HEAD_BAD);
    assert_int_equal(head("\x16\x03\x01", 16384), GP__HEAD_BAD);
    assert_int_equal(head("GET /report/a%00.json", 16384), GP__HEAD_BAD);
    assert_int_equal(head("GET /\r\n\r\n", 16384), GP__HEAD_BAD);
    assert_int_equal(head("GET / HTTP/1.1x\r\n", 16384), GP__HEAD_BAD);
    assert_int_equal(head("GET  / HTTP/1.1\r\n", 16384), GP__HEAD_BAD);
    assert_int_equal(head("GET / HTTP/1.1\r\nX-Slow: aaaa", 24), GP__HEAD_TOO_LARGE);
    const char nul[] = "GET / HTTP/1.1\r\nA: \0\r\n\r\n";
    const char *why;
    assert_int_equal(gp__http_head_check(nul, sizeof nul - 1, 16384, &why), GP__HEAD_BAD);
}

/* Content-Length (issue 38): libmicrohttpd answered a negative, non-numeric or overflowing one
 * with two response heads; the gate refuses it (one 400) before libmicrohttpd reads it. */
static void http_head_content_length(void **state)
{
    (void)state;
    assert_int_equal(head("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n", 16384),
                     GP__HEAD_COMPLETE);
    assert_int_equal(head("POST / HTTP/1.1\r\ncontent-length:0\r\n\r\n", 16384), GP__HEAD_COMPLETE);
    assert_int_equal(head("POST / HTTP/1.1\r\nContent-Length: 999999999999999999\r\n\r\n", 16384),
                     GP__HEAD_COMPLETE);
    assert_int_equal(head("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 16384), GP__HEAD_BAD);
    assert_int_equal(head("POST / HTTP/1.1\r\nContent-Length: +1\r\n\r\n", 16384), GP__HEAD_BAD);
    assert_int_equal(head("POST / HTTP/1.1\r\nContent-Length: abc\r\n\r\n", 16384), GP__HEAD_BAD);
    assert_int_equal(head("POST / HTTP/1.1\r\nContent-Length: \r\n\r\n", 16384), GP__HEAD_BAD);
    assert_int_equal(head("POST / HTTP/1.1\r\nContent-Length: 18446744073709551616\r\n\r\n", 16384),
                     GP__HEAD_BAD);
    assert_int_equal(head("POST / HTTP/1.1\r\nContent-Length: 1000000000000000000\r\n\r\n", 16384),
                     GP__HEAD_BAD);
    assert_int_equal(
        head("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 16384),
        GP__HEAD_BAD);
    assert_int_equal(
        head("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n", 16384),
        GP__HEAD_COMPLETE);
    assert_int_equal(head("GET / HTTP/1.1\r\nX-Content-Length: -1\r\n\r\n", 16384),
                     GP__HEAD_COMPLETE);
}

/* The target decoder: %XX undone in the path (%2F too: a name's '/' is looked up, never walked),
 * '+' a space in the query, a fragment ignored; NUL, control bytes and bad escapes refused. */
static void http_target_decoding(void **state)
{
    (void)state;
    gp__http_target t;
    const char *why;
    const char *raw = "/diff?base=pair%2Fbase&current=a+b%26c.json&flag#frag";
    assert_int_equal(gp__http_parse_target(raw, strlen(raw), &t, &why), GP_OK);
    assert_string_equal(t.path, "/diff");
    assert_int_equal(t.n_params, 3);
    assert_string_equal(gp__http_param_get(&t, "base"), "pair/base");
    assert_string_equal(gp__http_param_get(&t, "current"), "a b&c.json");
    assert_string_equal(gp__http_param_get(&t, "flag"), "");
    assert_null(gp__http_param_get(&t, "frag"));
    raw = "/report/run%20%232%20%26%20%3Cx%3E.json";
    assert_int_equal(gp__http_parse_target(raw, strlen(raw), &t, &why), GP_OK);
    assert_string_equal(t.path, "/report/run #2 & <x>.json");
    static const char *const bad[] = {"/a%00b", "/a%0",     "/a%zz",
                                      "/a%1fb", "report/a", "/a?k=%00",
                                      "/a#%00", "/a b",     "/?a&b&c&d&e&f&g&h&i"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why = NULL;
        assert_int_equal(gp__http_parse_target(bad[i], strlen(bad[i]), &t, &why), GP_EINVAL);
        assert_true(why && why[0]);
    }
}

static void *fake;

static gp_monitor *open_fake(void)
{
    const char *lib = getenv("GP_FAKE_NVML");
    setenv("GP_NVML_LIBRARY", lib, 1);
    char path[2048];
    snprintf(path, sizeof path, "%s/tests/serve/scenarios/exporter.txt", getenv("GP_SOURCE_DIR"));
    setenv("GP_FAKE_NVML_SCENARIO", path, 1);
    if (!fake)
        fake = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(fake);
    void (*reload)(void);
    void (*set_time)(double);
    *(void **)&reload = dlsym(fake, "fake_nvml_reload");
    *(void **)&set_time = dlsym(fake, "fake_nvml_set_time");
    reload();
    gp_monitor_config cfg;
    gp_monitor_config_init(&cfg);
    cfg.level = GP_LEVEL_DETAILED;
    gp_monitor *m = NULL;
    gp_error err = {0};
    if (gp_monitor_open(&cfg, &m, &err) != GP_OK)
        fail_msg("%s", err.msg);
    set_time(1.0);
    assert_int_equal(gp_monitor_sample_now(m, 1000000000LL), GP_OK);
    return m;
}

static char *read_file(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    char *buf = malloc(1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, fp);
    buf[n] = 0;
    fclose(fp);
    return buf;
}

static void fake_nvml_prometheus_text_matches_golden(void **state)
{
    gp_monitor *m = open_fake();
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(gp_prometheus_render(m, "testhost", &text, &len), GP_OK);
    assert_int_equal(strlen(text), len);
    char gpath[2048];
    snprintf(gpath, sizeof gpath, "%s/tests/serve/golden/metrics.txt", getenv("GP_SOURCE_DIR"));
    if (getenv("GP_UPDATE_GOLDEN")) {
        FILE *g = fopen(gpath, "w");
        assert_non_null(g);
        fputs(text, g);
        fclose(g);
    }
    char *want = read_file(gpath);
    assert_non_null(want);
    assert_string_equal(text, want);
    /* spot checks that do not depend on the golden file being right */
    assert_non_null(strstr(text, "gpuprof_gpu_memory_used_bytes{gpu=\"0\",uuid=\"GPU-aaaaaaaa-"
                                 "0000-0000-0000-000000000000\",name=\"NVIDIA A100-SXM4-80GB\","
                                 "pci_bus_id=\"00000000:07:00.0\",hostname=\"testhost\"} "
                                 "42949672960\n"));
    assert_non_null(strstr(text, "name=\"Fake \\\"quoted\\\" \\\\ GPU\""));
    assert_non_null(strstr(text, "xid=\"79\"} 2\n"));
    assert_non_null(strstr(text, "xid=\"13\"} 1\n"));
    assert_non_null(strstr(text, "gpuprof_gpu_utilization_ratio{gpu=\"0\""));
    assert_non_null(strstr(text, "hostname=\"testhost\"} 0.87\n"));
    assert_non_null(strstr(text, "hostname=\"testhost\"} 312.25\n"));
    assert_non_null(strstr(text, "gpuprof_gpu_up{gpu=\"2\""));
    /* GPU 1 has no fan: no fan series for it at all (never a 0) */
    assert_null(strstr(text, "gpuprof_gpu_fan_speed_ratio{gpu=\"1\""));
    assert_non_null(strstr(text, "gpuprof_gpu_fan_speed_ratio{gpu=\"0\""));
    /* the lost GPU has no sample series */
    assert_null(strstr(text, "gpuprof_gpu_temperature_celsius{gpu=\"2\""));
    free(want);
    free(text);
    /* the longest hostname label, every character needing an escape: still well formed */
    char host[256];
    memset(host, '"', 255);
    host[255] = 0;
    assert_int_equal(gp_prometheus_render(m, host, &text, &len), GP_OK);
    char expect[600] = "hostname=\"";
    for (int i = 0; i < 255; i++)
        memcpy(expect + 10 + 2 * i, "\\\"", 2);
    memcpy(expect + 10 + 510, "\"}", 3);
    assert_non_null(strstr(text, expect));
    free(text);
    gp_monitor_close(m);
}

/* A minimal HTTP/1.0 client: returns the whole response (caller frees). */
static char *http(uint16_t port, const char *request)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(write(fd, request, strlen(request)), (ssize_t)strlen(request));
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    ssize_t n;
    while ((n = read(fd, buf + len, cap - 1 - len)) > 0)
        len += (size_t)n;
    buf[len] = 0;
    close(fd);
    return buf;
}

static void fake_nvml_exporter_http(void **state)
{
    gp_monitor *m = open_fake();
    gp_exporter *ex = NULL;
    gp_error err = {0};
    gp_exporter_opts opts = {.listen = "127.0.0.1:0", .hostname = "testhost"};
    assert_int_equal(gp_exporter_start(m, &opts, &ex, &err), GP_OK);
    uint16_t port = gp_exporter_port(ex);
    assert_true(port > 0);

    char *r = http(port, "GET /metrics HTTP/1.0\r\n\r\n"), *r2;
    assert_true(strncmp(r, "HTTP/1.0 200", 12) == 0 || strncmp(r, "HTTP/1.1 200", 12) == 0);
    assert_non_null(strstr(r, "Content-Type: text/plain; version=0.0.4; charset=utf-8"));
    char *text = NULL;
    size_t len;
    assert_int_equal(gp_prometheus_render(m, "testhost", &text, &len), GP_OK);
    char *body = strstr(r, "\r\n\r\n");
    assert_non_null(body);
    assert_string_equal(body + 4, text);
    free(text);
    assert_int_equal(gp_exporter_scrapes(ex), 1);
    /* a new sampling round is visible at the next scrape (the text is cached per round) */
    assert_non_null(strstr(body + 4, "gpuprof_monitor_samples_total{hostname=\"testhost\"} 1\n"));
    void (*set_time)(double);
    *(void **)&set_time = dlsym(fake, "fake_nvml_set_time");
    set_time(2.0);
    assert_int_equal(gp_monitor_sample_now(m, 2000000000LL), GP_OK);
    free(r);
    r = http(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert_non_null(strstr(r, "gpuprof_monitor_samples_total{hostname=\"testhost\"} 2\n"));
    assert_int_equal(gp_exporter_scrapes(ex), 2);

    r2 = http(port, "GET /healthz HTTP/1.0\r\n\r\n");
    free(r);
    r = r2;
    assert_non_null(strstr(r, " 200 "));
    assert_non_null(strstr(r, "application/json"));
    assert_non_null(strstr(r, "\"status\":\"degraded\"")); /* GPU 2 is lost */
    assert_non_null(strstr(r, "\"gpus\":3"));
    free(r);
    r = http(port, "GET /nope HTTP/1.0\r\n\r\n");
    assert_non_null(strstr(r, " 404 "));
    free(r);
    r = http(port, "POST /metrics HTTP/1.0\r\nContent-Length: 0\r\n\r\n");
    assert_non_null(strstr(r, " 405 "));
    free(r);
    assert_int_equal(gp_exporter_scrapes(ex), 2);
    gp_exporter_stop(ex);
    gp_monitor_close(m);
}

static void fake_nvml_exporter_rejects_bad_addresses(void **state)
{
    gp_monitor *m = open_fake();
    gp_exporter *ex = NULL;
    gp_error err = {0};
    static const char *const bad[] = {
        "9400", "127.0.0.1:", "example.com:9400", "127.0.0.1:70000", ":9400", "127.0.0.1:94x0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gp_exporter_opts opts = {.listen = bad[i]};
        assert_int_equal(gp_exporter_start(m, &opts, &ex, &err), GP_EINVAL);
        assert_non_null(strstr(err.msg, bad[i]));
    }
    /* a port already in use */
    gp_exporter *a = NULL;
    gp_exporter_opts opts = {.listen = "127.0.0.1:0"};
    assert_int_equal(gp_exporter_start(m, &opts, &a, &err), GP_OK);
    char addr[32];
    snprintf(addr, sizeof addr, "127.0.0.1:%u", gp_exporter_port(a));
    opts.listen = addr;
    assert_int_equal(gp_exporter_start(m, &opts, &ex, &err), GP_EIO);
    assert_non_null(strstr(err.msg, "cannot listen on"));
    gp_exporter_stop(a);
    gp_monitor_close(m);
}

/* The compile-log reader as gpuprof serve calls it (gp_compile_read_opts.regular_files_only): a
 * FIFO named like a log is refused at once, as the log and when a payload is read back from a
 * file swapped for one after the read, instead of waiting for a writer (which would hang this
 * test). Without the option a regular file reads as before. */
/* The listing is cached (issue 38: every request listed the folder again, 0.65 s per request at
 * 100,000 files): after the first lookup in a folder of 20,000 traces, 200 more cost less than
 * the first one's listing (listing again each time, they cost 200 listings); a file added is
 * found at once (the folder's modification time changed); a file removed is gone at once. */
static void listing_is_cached(void **state)
{
    (void)state;
    char dir[] = "/tmp/gp_serve_list_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    enum { N = 20000 };
    for (int i = 0; i < N; i++) {
        snprintf(path, sizeof path, "%s/t%05d.json", dir, i);
        FILE *fp = fopen(path, "w");
        assert_non_null(fp);
        fputs("{\"traceEvents\": []}", fp);
        fclose(fp);
    }
    gp__serve_dir d;
    gp_error err = {0};
    assert_int_equal(gp__serve_dir_init(&d, dir, false, &err), GP_OK);
    gp__serve_entry e;
    char where[512], why[256];
    double t0 = gp_test_now();
    assert_int_equal(gp__serve_find(&d, "t00007.json", &e, where, sizeof where, why, sizeof why),
                     GP_OK);
    double first = gp_test_now() - t0;
    t0 = gp_test_now();
    for (int i = 0; i < 200; i++) {
        char name[32];
        snprintf(name, sizeof name, "t%05d.json", (i * 97) % N);
        assert_int_equal(gp__serve_find(&d, name, &e, where, sizeof where, why, sizeof why), GP_OK);
        assert_string_equal(e.name, name);
    }
    double rest = gp_test_now() - t0;
    print_message("listing of %d files: first lookup %.4f s, 200 more %.4f s\n", N, first, rest);
    assert_true(rest < first); /* unless the 2 s refresh fell in between: then twice at most */
    snprintf(path, sizeof path, "%s/new.json", dir);
    FILE *fp = fopen(path, "w");
    fputs("{\"traceEvents\": []}", fp);
    fclose(fp);
    assert_int_equal(gp__serve_find(&d, "new.json", &e, where, sizeof where, why, sizeof why),
                     GP_OK);
    size_t n = 0;
    gp__serve_entry *v = gp__serve_list(&d, &n);
    assert_int_equal(n, N + 1);
    free(v);
    unlink(path);
    assert_int_equal(gp__serve_find(&d, "new.json", &e, where, sizeof where, why, sizeof why),
                     GP_ENOENT);
    for (int i = 0; i < N; i++) {
        snprintf(path, sizeof path, "%s/t%05d.json", dir, i);
        unlink(path);
    }
    rmdir(dir);
}

static void compile_log_regular_files_only(void **state)
{
    (void)state;
    char dir[] = "/tmp/gp_serve_clog_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char log[64], fifo[64];
    snprintf(log, sizeof log, "%s/dedicated_log_torch_trace_rank_0.log", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo.log", dir);
    FILE *fp = fopen(log, "w");
    assert_non_null(fp);
    fputs("V1206 15:18:20.253000 1500233 torch/_dynamo/x.py:1] {\"artifact\": {\"name\": "
          "\"dynamo_graph_break_reason\", \"encoding\": \"string\"}, \"frame_id\": 0, "
          "\"frame_compile_id\": 0, \"attempt\": 0, \"has_payload\": "
          "\"bb41bcd7a7fded0d216ed9e0a71eeb1a\"}\n"
          "\tGraph break in user code at /x/model.py:12\n"
          "\tGraph Break Reason: Unsupported Tensor.item() call with capture_scalar_outputs=False\n"
          "\tUser code traceback:\n"
          "\t  File \"/x/model.py\", line 12, in fn\n",
          fp);
    assert_int_equal(fclose(fp), 0);
    assert_int_equal(mkfifo(fifo, 0600), 0);

    gp_compile_read_opts ro = {.regular_files_only = true};
    gp_compile_log *cl = NULL;
    gp_error err = {0};
    assert_int_equal(gp_compile_log_read(fifo, &ro, &cl, &err), GP_EIO);
    assert_non_null(strstr(err.msg, "not a regular file (a FIFO)"));
    assert_null(cl);

    assert_int_equal(gp_compile_log_read(log, &ro, &cl, &err), GP_OK);
    assert_int_equal(cl->n_payloads, 1);
    assert_int_equal(cl->stats.truncated_payloads, 0);
    gp_compile_payload_reader *pr = NULL;
    assert_int_equal(gp_compile_payload_open(cl, &pr), GP_OK);
    const char *text = NULL;
    size_t len = 0;
    assert_int_equal(gp_compile_payload_text(pr, &cl->payloads[0], 4096, &text, &len, &err), GP_OK);
    assert_non_null(strstr(text, "Graph Break Reason: Unsupported Tensor.item()"));
    gp_compile_payload_close(pr);
    /* the file becomes a FIFO after the read: reading the payload back is refused too */
    assert_int_equal(unlink(log), 0);
    assert_int_equal(mkfifo(log, 0600), 0);
    assert_int_equal(gp_compile_payload_open(cl, &pr), GP_OK);
    err = (gp_error){0};
    assert_int_equal(gp_compile_payload_text(pr, &cl->payloads[0], 4096, &text, &len, &err),
                     GP_EIO);
    assert_non_null(strstr(err.msg, "not a regular file (a FIFO)"));
    gp_compile_payload_close(pr);
    gp_compile_log_free(cl);
    /* in a directory, the reader skips a FIFO named like a log (its own stat check) */
    assert_int_equal(unlink(log), 0);
    assert_int_equal(gp_compile_log_read(dir, &ro, &cl, &err), GP_EIO);
    assert_non_null(strstr(err.msg, "no TORCH_TRACE logs"));
    unlink(fifo);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest parsing[] = {
        cmocka_unit_test(http_head_check_verdicts),
        cmocka_unit_test(http_head_content_length),
        cmocka_unit_test(http_target_decoding),
        cmocka_unit_test(compile_log_regular_files_only),
        cmocka_unit_test(listing_is_cached),
    };
    int prc = cmocka_run_group_tests(parsing, NULL, NULL);
    if (!getenv("GP_FAKE_NVML") || !getenv("GP_SOURCE_DIR"))
        return prc ? prc : 77;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fake_nvml_prometheus_text_matches_golden),
        cmocka_unit_test(fake_nvml_exporter_http),
        cmocka_unit_test(fake_nvml_exporter_rejects_bad_addresses),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (fake)
        dlclose(fake);
    return rc ? rc : prc;
}
