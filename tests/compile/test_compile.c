/* Tests of `gpuprof compile`'s library: the TORCH_TRACE reader on synthetic and malformed logs
 * (corrupt JSON lines, lines without a prefix, unknown kinds, incomplete payloads, not a log,
 * corrupt gzip, an empty directory), streaming in small pieces, payloads read back, the analysis
 * (graph breaks from artifacts and resume frames, recompile causes, the recompile limit, fusion,
 * chromium phases), the facts ../shared/compile-logs/INDEX.md states, and the compiled regions of
 * the shared torch.compile trace (figures computed independently from its JSON, see below). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <nettle/md5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "common/shared_traces.h"
#include "core/input.h"
#include "gpuprof/compile.h"
#include "gpuprof/diff.h"
#include "io/compile_log_internal.h"

/* ---- building synthetic logs ---- */

static const char prefix[] = "V1206 15:18:20.253000 1500233 torch/_dynamo/x.py:1] ";

typedef struct text {
    char *s;
    size_t len, cap;
} text;

static void put(text *t, const char *s)
{
    size_t n = strlen(s);
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->s = realloc(t->s, t->cap);
        assert_non_null(t->s);
    }
    memcpy(t->s + t->len, s, n + 1);
    t->len += n;
}

/* A record line: the prefix, then json (with "%P" replaced by the md5 of payload when given),
 * then the payload's lines each after a tab. */
static void rec(text *t, const char *json, const char *payload)
{
    put(t, prefix);
    const char *p = strstr(json, "%P");
    if (payload && p) {
        struct md5_ctx c;
        uint8_t d[MD5_DIGEST_SIZE];
        md5_init(&c);
        md5_update(&c, strlen(payload), (const uint8_t *)payload);
        md5_digest(&c, sizeof d, d);
        char hex[33], head[4096];
        for (int i = 0; i < 16; i++)
            snprintf(hex + 2 * i, 3, "%02x", d[i]);
        snprintf(head, sizeof head, "%.*s%s", (int)(p - json), json, hex);
        put(t, head);
        put(t, p + 2);
    } else {
        put(t, json);
    }
    put(t, "\n");
    for (const char *l = payload; l && *l;) {
        const char *nl = strchr(l, '\n');
        size_t n = nl ? (size_t)(nl - l) : strlen(l);
        char line[4096];
        snprintf(line, sizeof line, "\t%.*s\n", (int)n, l);
        put(t, line);
        l += n + (nl ? 1 : 0);
    }
}

static gp_compile_log *read_text(const text *t)
{
    gp_compile_log *log = NULL;
    gp_error err = {0};
    gp_status st = gp_compile_log_read_buffer(t->s, t->len, "t.log", &log, &err);
    if (st != GP_OK)
        fprintf(stderr, "read failed: %s\n", err.msg);
    assert_int_equal(st, GP_OK);
    return log;
}

static bool has_warning(const gp_compile_log *log, const char *needle)
{
    for (size_t i = 0; i < log->n_warnings; i++)
        if (strstr(log->warnings[i], needle))
            return true;
    return false;
}

#define ID "\"frame_id\": %d, \"frame_compile_id\": %d, \"attempt\": 0"
/* Compile id 0/0 as literal text. */
#define ID0 "\"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0"

static void metrics(text *t, int f, int c, const char *co_name, const char *extra)
{
    char j[2048];
    snprintf(j, sizeof j,
             "{\"compilation_metrics\": {\"co_name\": \"%s\", \"co_filename\": \"/x/model.py\", "
             "\"co_firstlineno\": 10, \"graph_op_count\": 3, \"guard_count\": 5, "
             "\"entire_frame_compile_time_s\": 0.5%s}, " ID "}",
             co_name, extra ? extra : "", f, c);
    rec(t, j, NULL);
}

/* ---- bad input ---- */

static void corrupt_json_line_is_a_warning_and_the_rest_is_read(void **state)
{
    (void)state;
    text t = {0};
    metrics(&t, 0, 0, "f", NULL);
    put(&t, prefix);
    put(&t, "{\"compilation_metrics\": {\"co_name\": \"broken\n");
    metrics(&t, 1, 0, "g", NULL);
    gp_compile_log *log = read_text(&t);
    assert_int_equal(log->stats.bad_json, 1);
    assert_true(has_warning(log, "t.log: line 2: invalid JSON"));
    assert_int_equal(log->n_units, 2);
    assert_string_equal(log->units[1].co_name, "g");
    gp_compile_log_free(log);
    free(t.s);
}

static void line_without_prefix_is_skipped(void **state)
{
    (void)state;
    text t = {0};
    put(&t, "some other logging line\n");
    metrics(&t, 0, 0, "f", NULL);
    gp_compile_log *log = read_text(&t);
    assert_int_equal(log->stats.bad_prefix, 1);
    assert_true(has_warning(log, "t.log: line 1: no glog prefix"));
    assert_int_equal(log->n_units, 1);
    gp_compile_log_free(log);
    free(t.s);
}

static void unknown_kinds_are_counted(void **state)
{
    (void)state;
    text t = {0};
    rec(&t, "{\"a_future_kind\": {\"x\": 1}}", NULL);
    rec(&t, "{\"a_future_kind\": {}, \"has_payload\": \"%P\"}", "some payload");
    metrics(&t, 0, 0, "f", NULL);
    gp_compile_log *log = read_text(&t);
    assert_int_equal(log->stats.unknown_records, 2);
    bool found = false;
    for (size_t i = 0; i < log->n_kinds; i++)
        if (strcmp(log->kinds[i].kind, "a_future_kind") == 0) {
            assert_int_equal(log->kinds[i].count, 2);
            assert_false(log->kinds[i].known);
            found = true;
        }
    assert_true(found);
    assert_int_equal(log->stats.truncated_payloads, 0); /* its payload was still read and hashed */
    gp_compile_log_free(log);
    free(t.s);
}

static void truncated_payload_is_reported(void **state)
{
    (void)state;
    /* The announced payload's hash is of three lines; the input ends after two. */
    text t = {0};
    metrics(&t, 0, 0, "f", NULL);
    rec(&t, "{\"inductor_output_code\": {}, " ID0 ", \"has_payload\": \"%P\"}",
        "a = 1\nb = 2\nc = 3");
    char *tail = strstr(t.s, "\tc = 3");
    assert_non_null(tail);
    *tail = '\0';
    t.len = (size_t)(tail - t.s);
    gp_compile_log *log = read_text(&t);
    assert_int_equal(log->stats.truncated_payloads, 1);
    assert_int_equal(log->n_payloads, 1);
    assert_true(log->payloads[0].truncated);
    assert_int_equal(log->payloads[0].n_lines, 2);
    assert_true(has_warning(log, "t.log: line 2: the payload of inductor_output_code"));
    gp_compile_log_free(log);
    free(t.s);
}

static void stray_payload_lines_are_counted(void **state)
{
    (void)state;
    text t = {0};
    metrics(&t, 0, 0, "f", NULL);
    put(&t, "\tan orphan line\n\tanother\n");
    gp_compile_log *log = read_text(&t);
    assert_int_equal(log->stats.stray_payload, 2);
    assert_int_equal(log->warnings_total, 1); /* the first is warned, the others counted */
    gp_compile_log_free(log);
    free(t.s);
}

static void not_a_log_fails(void **state)
{
    (void)state;
    const char junk[] = "{\"traceEvents\": []}\nhello\n";
    gp_compile_log *log = NULL;
    gp_error err = {0};
    assert_int_equal(gp_compile_log_read_buffer(junk, sizeof junk - 1, "x.json", &log, &err),
                     GP_EPARSE);
    assert_non_null(strstr(err.msg, "x.json: not a TORCH_TRACE log"));
    assert_null(log);
}

static void empty_directory_and_corrupt_gzip_fail(void **state)
{
    (void)state;
    char dir[] = "/tmp/gpuprof-compile-XXXXXX";
    assert_non_null(mkdtemp(dir));
    gp_compile_log *log = NULL;
    gp_error err = {0};
    assert_int_equal(gp_compile_log_read(dir, NULL, &log, &err), GP_EIO);
    assert_non_null(strstr(err.msg, "no TORCH_TRACE logs"));
    /* A gzip stream cut in the middle. */
    char path[256];
    snprintf(path, sizeof path, "%s/rank_0.log.gz", dir);
    text t = {0};
    for (int i = 0; i < 200; i++)
        metrics(&t, i, 0, "f", NULL);
    gzFile gz = gzopen(path, "wb");
    assert_non_null(gz);
    gzwrite(gz, t.s, (unsigned)t.len);
    gzclose(gz);
    FILE *fp = fopen(path, "r+b");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    assert_int_equal(ftruncate(fileno(fp), ftell(fp) / 2), 0);
    fclose(fp);
    assert_int_equal(gp_compile_log_read(dir, NULL, &log, &err), GP_EPARSE);
    assert_non_null(strstr(err.msg, "rank_0.log.gz"));
    unlink(path);
    rmdir(dir);
    free(t.s);
}

/* ---- reading ---- */

static void payload_text_reads_back(void **state)
{
    (void)state;
    text t = {0};
    metrics(&t, 0, 0, "f", NULL);
    rec(&t, "{\"dynamo_output_graph\": {}, " ID0 ", \"has_payload\": \"%P\"}",
        "class GraphModule:\n    def forward(self, x):\n        return x");
    /* A blank line inside the payload (tlparse drops them; so does the hash). */
    char *p = strstr(t.s, "\t    def");
    assert_non_null(p);
    size_t off = (size_t)(p - t.s);
    text u = {0};
    char *head = strndup(t.s, off);
    put(&u, head);
    put(&u, "\n");
    put(&u, t.s + off);
    free(head);
    gp_compile_log *log = read_text(&u);
    assert_int_equal(log->stats.truncated_payloads, 0);
    assert_int_equal(log->stats.blank_lines, 1);
    gp_compile_payload_reader *r;
    assert_int_equal(gp_compile_payload_open(log, &r), GP_OK);
    const char *s;
    size_t len;
    assert_int_equal(gp_compile_payload_text(r, &log->payloads[0], 1 << 20, &s, &len, NULL), GP_OK);
    assert_string_equal(s, "class GraphModule:\n    def forward(self, x):\n        return x");
    assert_int_equal(len, log->payloads[0].bytes);
    assert_int_equal(gp_compile_payload_text(r, &log->payloads[0], 5, &s, &len, NULL), GP_OK);
    assert_string_equal(s, "class");
    gp_compile_payload_close(r);
    gp_compile_log_free(log);
    free(t.s);
    free(u.s);
}

/* CRLF line ends: the '\r' is not part of a line (as tlparse reads lines); a '\r' inside a line
 * is. Text read back agrees with the hash and the indexed size (found by the fuzz target). */
static void crlf_lines_read_back(void **state)
{
    (void)state;
    text t = {0};
    rec(&t, "{\"dynamo_output_graph\": {}, " ID0 ", \"has_payload\": \"%P\"}", "x = 1\ny =\r2");
    text u = {0};
    for (const char *p = t.s; *p; p++) {
        char c[3] = {*p, 0, 0};
        if (*p == '\n') {
            c[0] = '\r';
            c[1] = '\n';
        }
        put(&u, c);
    }
    put(&u, "\r\n");
    gp_compile_log *log = read_text(&u);
    assert_int_equal(log->stats.truncated_payloads, 0);
    gp_compile_payload_reader *r;
    assert_int_equal(gp_compile_payload_open(log, &r), GP_OK);
    const char *s;
    size_t len;
    assert_int_equal(gp_compile_payload_text(r, &log->payloads[0], 1 << 20, &s, &len, NULL), GP_OK);
    assert_string_equal(s, "x = 1\ny =\r2");
    assert_int_equal(len, log->payloads[0].bytes);
    gp_compile_payload_close(r);
    gp_compile_log_free(log);
    free(t.s);
    free(u.s);
}

/* The JSON of a log read whole and in pieces of n bytes must be the same. */
static char *json_of(const char *data, size_t len, size_t piece)
{
    gp__clog_max_read = piece;
    gp_compile_log *log = NULL;
    gp_error err = {0};
    gp_status st = gp_compile_log_read_buffer(data, len, "t.log", &log, &err);
    gp__clog_max_read = 0;
    assert_int_equal(st, GP_OK);
    gp_compile_analysis *a;
    assert_int_equal(gp_compile_analyze(log, &a), GP_OK);
    char *buf = NULL;
    size_t n = 0;
    FILE *fp = open_memstream(&buf, &n);
    gp_compile_report rep = {log, a, NULL, 0, NULL, 0, NULL, NULL};
    assert_int_equal(gp_compile_render_json(&rep, fp), GP_OK);
    fclose(fp);
    gp_compile_analysis_free(a);
    gp_compile_log_free(log);
    return buf;
}

/* The whole (uncompressed) content of a file, through core/input. */
static char *slurp(const char *path, size_t *len)
{
    gp__input in;
    if (gp__input_open(&in, path, true, NULL) != GP_OK)
        return NULL;
    size_t cap = 1 << 16, got;
    char *s = malloc(cap);
    *len = 0;
    do {
        if (*len + 4096 > cap)
            s = realloc(s, cap *= 2);
        assert_non_null(s);
        assert_int_equal(gp__input_read(&in, s + *len, cap - *len, &got, NULL), GP_OK);
        *len += got;
    } while (got);
    gp__input_close(&in);
    return s;
}

static const char *shared_log(const char *name, char *buf, size_t cap)
{
    const char *shared = getenv("GP_SHARED_DIR");
    snprintf(buf, cap, "%s/compile-logs/%s", shared ? shared : "../shared", name);
    return access(buf, R_OK) == 0 ? buf : NULL;
}

static void small_pieces_read_like_one(void **state)
{
    (void)state;
    char path[4096];
    if (!shared_log("simple.log", path, sizeof path))
        skip();
    size_t len;
    char *data = slurp(path, &len);
    char *whole = json_of(data, len, 0);
    size_t pieces[] = {1, 7, 61, 4096};
    for (size_t i = 0; i < sizeof pieces / sizeof *pieces; i++) {
        char *p = json_of(data, len, pieces[i]);
        assert_string_equal(whole, p);
        free(p);
    }
    free(whole);
    free(data);
}

/* Every payload of a plain shared log reads back to text that hashes to its record's
 * has_payload (taken from the line the payload names). */
static void shared_payloads_read_back(void **state)
{
    (void)state;
    const char *names[] = {"simple.log", "comp_metrics.log", "chromium_events.log"};
    char path[4096];
    if (!shared_log(names[0], path, sizeof path))
        skip();
    for (size_t k = 0; k < 3; k++) {
        shared_log(names[k], path, sizeof path);
        size_t len;
        char *data = slurp(path, &len);
        gp_compile_log *log;
        assert_int_equal(gp_compile_log_read(path, NULL, &log, NULL), GP_OK);
        gp_compile_payload_reader *r;
        assert_int_equal(gp_compile_payload_open(log, &r), GP_OK);
        assert_true(log->n_payloads > 0);
        for (size_t i = 0; i < log->n_payloads; i++) {
            const gp_compile_payload *p = &log->payloads[i];
            const char *s;
            size_t n;
            assert_int_equal(gp_compile_payload_text(r, p, SIZE_MAX, &s, &n, NULL), GP_OK);
            assert_int_equal(n, p->bytes);
            const char *line = data;
            for (uint64_t l = 1; l < p->line; l++)
                line = strchr(line, '\n') + 1;
            const char *h = strstr(line, "\"has_payload\": \"");
            assert_non_null(h);
            struct md5_ctx c;
            uint8_t d[MD5_DIGEST_SIZE];
            char hex[33];
            md5_init(&c);
            md5_update(&c, n, (const uint8_t *)s);
            md5_digest(&c, sizeof d, d);
            for (int b = 0; b < 16; b++)
                snprintf(hex + 2 * b, 3, "%02x", d[b]);
            assert_memory_equal(h + 16, hex, 32);
        }
        gp_compile_payload_close(r);
        gp_compile_log_free(log);
        free(data);
    }
}

/* ---- analysis ---- */

static gp_compile_analysis *analyze(const gp_compile_log *log)
{
    gp_compile_analysis *a = NULL;
    assert_int_equal(gp_compile_analyze(log, &a), GP_OK);
    return a;
}

static void graph_break_artifact_names_the_break_once(void **state)
{
    (void)state;
    text t = {0};
    rec(&t,
        "{\"artifact\": {\"name\": \"dynamo_graph_break_reason\", \"encoding\": \"string\"}, " ID0
        ", \"has_payload\": \"%P\"}",
        "Graph break in user code at /x/model.py:42\n"
        "Graph Break Reason: Unsupported Tensor.item() call with capture_scalar_outputs=False\n"
        "  Explanation: Dynamo does not support tracing Tensor.item()\n"
        "User code traceback:\n"
        "  File \"/x/model.py\", line 42, in forward");
    metrics(&t, 0, 0, "forward", NULL);
    metrics(&t, 1, 0, "torch_dynamo_resume_in_forward_at_42", NULL);
    gp_compile_log *log = read_text(&t);
    gp_compile_analysis *a = analyze(log);
    assert_int_equal(a->n_breaks, 1); /* the artifact and the resume frame are one break */
    const gp_compile_break *b = &a->breaks[0];
    assert_string_equal(b->file, "/x/model.py");
    assert_int_equal(b->line, 42);
    assert_string_equal(b->function, "forward");
    assert_int_equal(b->cause, GP_CC_SCALAR);
    assert_non_null(strstr(b->reason, "Unsupported Tensor.item()"));
    assert_non_null(strstr(b->reason, "Explanation"));
    assert_null(strstr(b->reason, "traceback"));
    assert_int_equal(b->resume_unit, 1);
    gp_compile_analysis_free(a);
    gp_compile_log_free(log);
    free(t.s);
}

static void recompile_causes_and_limit(void **state)
{
    (void)state;
    text t = {0};
    const char *cfg = ", \"dynamo_config\": \"{\\\"cache_size_limit\\\": 2}\"";
    metrics(&t, 0, 0, "step", cfg);
    metrics(&t, 0, 1, "step",
            ", \"recompile_reason\": \"0/0: tensor 'x' size mismatch at index 0. expected 2, "
            "actual 3\"");
    rec(&t,
        "{\"artifact\": {\"name\": \"recompile_reasons\", \"encoding\": \"json\"}, "
        "\"frame_id\": 0, \"frame_compile_id\": 2, \"attempt\": 0, \"has_payload\": \"%P\"}",
        "[\"___check_obj_id(L['self'].fn, 140211)\"]");
    metrics(&t, 0, 2, "step", cfg);
    gp_compile_log *log = read_text(&t);
    gp_compile_analysis *a = analyze(log);
    assert_int_equal(a->n_recompiles, 2);
    assert_int_equal(a->recompiles[0].cause, GP_CC_SHAPE);
    assert_int_equal(a->recompiles[1].cause, GP_CC_IDENTITY);
    assert_int_equal(a->n_frames, 1);
    assert_int_equal(a->frames[0].compiles, 3);
    assert_int_equal(a->frames[0].limit, 2);
    assert_true(a->frames[0].over_limit);
    assert_int_equal(a->summary.compiles, 3);
    assert_int_equal(a->summary.compile_time, 1500000000);
    gp_compile_analysis_free(a);
    gp_compile_log_free(log);
    free(t.s);
}

static void fusion_counts_kernels_and_aten_ops(void **state)
{
    (void)state;
    text t = {0};
    rec(&t, "{\"inductor_post_grad_graph\": {}, " ID0 ", \"has_payload\": \"%P\"}",
        "class <lambda>(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        # File: m.py:3, code: torch.ops.aten.mul.Tensor in a comment\n"
        "        a = torch.ops.aten.mul.Tensor(x, 2)\n"
        "        b = torch.ops.aten.add.Tensor(a, 1)\n"
        "        c = torch.ops.aten.relu.default(b)\n"
        "        d = torch.ops.aten.mm.default(c, c)\n"
        "        e = torch.ops.aten.sum.default(d)\n"
        "        f = torch.ops.mylib.op.default(e)\n"
        "        return (f,)");
    rec(&t,
        "{\"inductor_output_code\": {\"filename\": \"/tmp/x.py\"}, " ID0
        ", \"has_payload\": \"%P\"}",
        "async_compile = AsyncCompile()\n"
        "triton_poi_fused_add_mul_relu_0 = async_compile.triton('triton_poi_fused_add_mul_relu_0', "
        "'''\n"
        "def call(args):  # inside the kernel's source: not the wrapper\n"
        "''', device_str='cuda')\n"
        "triton_per_fused_sum_1 = async_compile.triton('triton_per_fused_sum_1', '''\n"
        "''')\n"
        "async_compile.wait(globals())\n"
        "def call(args):\n"
        "    buf0 = empty_strided_cuda((4, 4), (4, 1), torch.float32)\n"
        "    triton_poi_fused_add_mul_relu_0.run(arg0_1, buf0)\n"
        "    extern_kernels.mm(buf0, buf0, out=buf1)\n"
        "    # torch.ops.aten.nothing in a comment\n"
        "    buf2 = torch.ops.mylib.op.default(buf1)\n"
        "    return (buf2, )\n"
        "def benchmark_compiled_module():\n"
        "    torch.ops.aten.zeros([1])\n");
    metrics(&t, 0, 0, "f", NULL);
    gp_compile_log *log = read_text(&t);
    gp_compile_analysis *a = analyze(log);
    assert_int_equal(a->n_graphs, 1);
    const gp_compile_graph *g = &a->graphs[0];
    assert_int_equal(g->ops, 6);
    assert_int_equal(g->aten_ops, 5);
    assert_int_equal(g->kernels, 2);
    assert_int_equal(g->extern_calls, 1);
    assert_int_equal(g->fallback_ops, 1);
    assert_true(g->fusion_ratio > 2.49 && g->fusion_ratio < 2.51);
    const gp_compile_payload *code = &log->payloads[g->code_payload];
    assert_string_equal(log->kernel_names[code->first_kernel], "triton_poi_fused_add_mul_relu_0");
    assert_string_equal(log->kernel_names[code->first_kernel + 1], "triton_per_fused_sum_1");
    gp_compile_analysis_free(a);
    gp_compile_log_free(log);
    free(t.s);
}

static void chromium_phases_pair_begin_and_end(void **state)
{
    (void)state;
    text t = {0};
    const char *ev = "{\"chromium_event\": {}, " ID0 ", \"has_payload\": \"%P\"}";
    rec(&t, ev, "{\"name\": \"inductor_compile\", \"ts\": 1000.0, \"ph\": \"B\"}");
    rec(&t, ev, "{\"name\": \"code_gen\", \"ts\": 1500.0, \"ph\": \"B\"}");
    rec(&t, ev, "{\"name\": \"code_gen\", \"ts\": 1750.5, \"ph\": \"E\"}");
    rec(&t, ev, "{\"name\": \"inductor_compile\", \"ts\": 3000.0, \"ph\": \"E\"}");
    rec(&t, ev, "{\"name\": \"inductor_compile\", \"ts\": 4000.0, \"ph\": \"X\", \"dur\": 10}");
    gp_compile_log *log = read_text(&t);
    assert_int_equal(log->n_units, 1);
    const gp_compile_unit *u = &log->units[0];
    assert_int_equal(u->n_phases, 2);
    assert_string_equal(u->phases[0].name, "code_gen");
    assert_int_equal(u->phases[0].total, 250500);
    assert_string_equal(u->phases[1].name, "inductor_compile");
    assert_int_equal(u->phases[1].total, 2010000);
    assert_int_equal(u->phases[1].count, 2);
    gp_compile_log_free(log);
    free(t.s);
}

/* Phase times beyond ±4e15 µs and durations beyond 9e15 µs are skipped: the end minus the begin
 * of two such times once overflowed int64 (UBSan). The edges still pair. */
static void chromium_phases_out_of_range_are_skipped(void **state)
{
    (void)state;
    text t = {0};
    const char *ev = "{\"chromium_event\": {}, " ID0 ", \"has_payload\": \"%P\"}";
    rec(&t, ev, "{\"name\": \"dynamo\", \"ts\": -9e15, \"ph\": \"B\"}");
    rec(&t, ev, "{\"name\": \"dynamo\", \"ts\": 9e15, \"ph\": \"E\"}");
    rec(&t, ev, "{\"name\": \"aot\", \"ts\": 1, \"ph\": \"X\", \"dur\": 1e300}");
    rec(&t, ev, "{\"name\": \"code_gen\", \"ts\": -4e15, \"ph\": \"B\"}");
    rec(&t, ev, "{\"name\": \"code_gen\", \"ts\": 4e15, \"ph\": \"E\"}");
    gp_compile_log *log = read_text(&t);
    assert_int_equal(log->n_units, 1);
    const gp_compile_unit *u = &log->units[0];
    assert_int_equal(u->n_phases, 1);
    assert_string_equal(u->phases[0].name, "code_gen");
    assert_int_equal(u->phases[0].total, INT64_C(8000000000000000000));
    gp_compile_log_free(log);
    free(t.s);
}

/* ---- the shared logs: what INDEX.md says about them ---- */

static gp_compile_log *read_shared(const char *name)
{
    char path[4096];
    if (!shared_log(name, path, sizeof path))
        return NULL;
    gp_compile_log *log = NULL;
    gp_error err = {0};
    assert_int_equal(gp_compile_log_read(path, NULL, &log, &err), GP_OK);
    return log;
}

static void index_facts(void **state)
{
    (void)state;
    gp_compile_log *log = read_shared("simple.log");
    if (!log)
        skip();
    /* "one small compile with every record kind, chromium events for each phase" */
    gp_compile_analysis *a = analyze(log);
    assert_int_equal(a->summary.compiles, 1);
    assert_true(log->n_kinds >= 12);
    assert_true(a->n_phases >= 5);
    assert_int_equal(a->n_graphs, 1);
    assert_int_equal(a->graphs[0].kernels, 2);
    gp_compile_analysis_free(a);
    gp_compile_log_free(log);
    /* "three frames, one of them a resume after a graph break, compilation_metrics for each"
     * (the log holds two resume frames: 1/0 resumes at line 9551, 2/0 at 9553). */
    log = read_shared("comp_metrics.log");
    a = analyze(log);
    assert_int_equal(a->summary.frames, 3);
    assert_true(a->n_breaks >= 1);
    assert_int_equal(a->n_breaks, 2);
    assert_int_equal(a->breaks[0].line, 9551);
    assert_int_equal(a->breaks[0].cause, GP_CC_EXPLICIT);
    gp_compile_analysis_free(a);
    gp_compile_log_free(log);
    /* "torch.export traces (export, not torch.compile)" */
    log = read_shared("export.log");
    assert_true(log->is_export);
    assert_int_equal(log->export_info.exported_programs, 1);
    gp_compile_log_free(log);
    /* "four ranks of one job (rank 1 and 3 gzipped): many frames and recompilations" */
    log = read_shared("multi_rank_logs");
    a = analyze(log);
    assert_int_equal(log->n_files, 4);
    for (int r = 0; r < 4; r++) {
        assert_int_equal(log->files[r].rank, r);
        assert_int_equal(log->files[r].compressed, r == 1 || r == 3);
    }
    assert_int_equal(a->n_ranks, 4);
    assert_true(a->summary.recompiles >= 10);
    assert_true(a->n_divergences >= 1);
    assert_non_null(strstr(a->divergences[0], "compiles differ across ranks"));
    gp_compile_analysis_free(a);
    gp_compile_log_free(log);
}

/* ---- compiled regions of the shared trace ---- */

/* modern_mi300_torch_compile.json.gz, counted from its JSON in Python (exact ns from the "ts" /
 * "dur" text): one "Torch-Compiled Region: 0/0" of 856.311 us; the 12 kernels of the trace are all
 * launched inside it (by correlation id: hipModuleLaunchKernel / hipExtModuleLaunchKernel), 4 of
 * them triton_*, 12549021 ns of GPU time, 78780 ns of launch calls; "TorchDynamo Cache Lookup"
 * 22534 ns. */
static void compile_trace_regions(void **state)
{
    (void)state;
    if (!gp_test_have_shared_traces())
        skip();
    char path[4096];
    const char *shared = getenv("GP_SHARED_DIR");
    snprintf(path, sizeof path, "%s/traces/modern_mi300_torch_compile.json.gz",
             shared ? shared : "../shared");
    gp_trace *t;
    assert_int_equal(gp_trace_read(path, NULL, &t, NULL), GP_OK);
    gp_compile_trace *ct;
    assert_int_equal(gp_compile_trace_analyze(t, &ct), GP_OK);
    assert_int_equal(ct->n_regions, 1);
    const gp_compile_region *r = &ct->regions[0];
    assert_string_equal(r->name, "0/0");
    assert_int_equal(r->calls, 1);
    assert_int_equal(r->cpu_time, 856311);
    assert_int_equal(r->kernels, 12);
    assert_int_equal(r->triton_kernels, 4);
    assert_int_equal(r->gpu_time, 12549021);
    assert_int_equal(r->launches, 12);
    assert_int_equal(r->launch_time, 78780);
    assert_int_equal(ct->kernels_eager, 0);
    assert_int_equal(ct->cpu_guard, 22534);
    assert_string_equal(r->graph, "fal4xpiah2v6blbfmwwonu52dvevbsmlh743q5tkclrt4gcqpzea");
    /* Against itself every speedup is 1. */
    gp_compile_speedup *s;
    assert_int_equal(gp_compile_speedup_compute(ct, ct, &s), GP_OK);
    assert_true(s->gpu_speedup == 1.0 && s->span_speedup == 1.0);
    assert_int_equal(s->n_pairs, 1);
    assert_true(s->pairs[0].gpu_speedup == 1.0);
    gp_compile_speedup_free(s);
    assert_true(gp_compile_trace_has_regions(t));
    assert_int_equal(ct->n_gaps, 0); /* one region call: nothing between regions */
    gp_compile_trace_free(ct);
    /* gpuprof diff against itself: both compiled, the region paired by compile id. */
    gp_diff_opts o;
    gp_diff_opts_init(&o);
    o.analyze = false;
    gp_diff *d;
    assert_int_equal(gp_diff_compute(gp_traces_const(&t), 1, gp_traces_const(&t), 1, &o, &d, NULL),
                     GP_OK);
    assert_int_equal(d->compile->mode, GP_DIFF_COMPILE_BOTH);
    assert_int_equal(d->compile->n_regions, 1);
    assert_true(d->compile->regions[0].gpu[1] == 12549021 && d->compile->speedup == 1.0);
    gp_diff_free(d);
    gp_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(corrupt_json_line_is_a_warning_and_the_rest_is_read),
        cmocka_unit_test(line_without_prefix_is_skipped),
        cmocka_unit_test(unknown_kinds_are_counted),
        cmocka_unit_test(truncated_payload_is_reported),
        cmocka_unit_test(stray_payload_lines_are_counted),
        cmocka_unit_test(not_a_log_fails),
        cmocka_unit_test(empty_directory_and_corrupt_gzip_fail),
        cmocka_unit_test(payload_text_reads_back),
        cmocka_unit_test(crlf_lines_read_back),
        cmocka_unit_test(small_pieces_read_like_one),
        cmocka_unit_test(shared_payloads_read_back),
        cmocka_unit_test(graph_break_artifact_names_the_break_once),
        cmocka_unit_test(recompile_causes_and_limit),
        cmocka_unit_test(fusion_counts_kernels_and_aten_ops),
        cmocka_unit_test(chromium_phases_pair_begin_and_end),
        cmocka_unit_test(chromium_phases_out_of_range_are_skipped),
        cmocka_unit_test(index_facts),
        cmocka_unit_test(compile_trace_regions),
    };
    return gp_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
