/* Tests for the model and io layers (src/model, src/io): the Kineto reader, the Chrome writer,
 * jobs, model equality. Real traces come from $GP_SHARED_DIR/traces (tests that need them skip when
 * it is absent). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/shared_traces.h"

#include <dirent.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "gpuprof/summary.h"
#include "gpuprof/trace.h"
#include "model/model_internal.h"
#include "io/formats.h"
#include "io/gpu_records.h"
#include "io/reader_internal.h"

static gp_read_opts quiet_opts(void)
{
    gp_read_opts o;
    gp_read_opts_init(&o);
    o.quiet = true;
    return o;
}

static gp_trace *read_text(const char *json)
{
    gp_read_opts o = quiet_opts();
    gp_trace *t = NULL;
    gp_error err = {0};
    gp_status s = gp_trace_read_buffer(json, strlen(json), "test.json", &o, &t, &err);
    if (s != GP_OK)
        fail_msg("unexpected read failure: %s", err.msg);
    return t;
}

static const gp_event *only_event(const gp_trace *t, gp_event_kind kind)
{
    const gp_event *found = NULL;
    for (size_t i = 0; i < t->n_tracks; i++)
        for (size_t j = 0; j < t->tracks[i].n_events; j++)
            if (t->tracks[i].events[j].kind == kind) {
                assert_null(found);
                found = &t->tracks[i].events[j];
            }
    assert_non_null(found);
    return found;
}

/* The read's error message; the read must fail with GP_EPARSE. */
static void expect_parse_error(const char *json, const char *want)
{
    gp_read_opts o = quiet_opts();
    gp_trace *t = NULL;
    gp_error err = {0};
    gp_status s = gp_trace_read_buffer(json, strlen(json), "span.json", &o, &t, &err);
    if (s != GP_EPARSE)
        fail_msg("%s: read gave %d, not GP_EPARSE", json, s);
    assert_null(t);
    if (!strstr(err.msg, want) || !strstr(err.msg, "span.json"))
        fail_msg("error \"%s\" lacks \"%s\"", err.msg, want);
}

/* ---- exact parsing --------------------------------------------------------------------- */

/* Absolute times lie in [-2^61, 2^62] ns, so that analyses can subtract any two times of a trace
 * (an end minus a start) in int64: base + ts that overflowed, or two events 2^62 apart on both
 * sides of 0, once reached undefined behaviour in two dozen span computations. */
static void absolute_times_keep_spans_in_int64(void **state)
{
    (void)state;
    /* the edges themselves are kept: -2^61 ns and 2^62 ns, no base */
    gp_trace *t =
        read_text("{\"traceEvents\": ["
                  "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1,"
                  " \"ts\": -2305843009213693.952, \"dur\": 1},"
                  "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\", \"pid\": 1, \"tid\": 1,"
                  " \"ts\": 4611686018427387.904, \"dur\": 1}]}");
    assert_int_equal(t->tracks[0].n_events, 2);
    assert_int_equal(t->tracks[0].events[0].ts, -(INT64_C(1) << 61));
    assert_int_equal(t->tracks[0].events[1].ts, INT64_C(1) << 62);
    gp_summary *sum;
    assert_int_equal(gp_summary_compute(gp_traces_const(&t), 1, NULL, &sum, NULL), GP_OK);
    assert_int_equal(sum->span_sum, (INT64_C(1) << 62) + (INT64_C(1) << 61) + 1000);
    gp_summary_free(sum);
    gp_trace_free(t);
    /* one nanosecond beyond either edge, without a base */
    expect_parse_error("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\","
                       " \"pid\": 1, \"tid\": 1, \"ts\": -2305843009213693.953, \"dur\": 1}]}",
                       "an event's time is out of range");
    expect_parse_error("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\","
                       " \"pid\": 1, \"tid\": 1, \"ts\": 4611686018427387.905, \"dur\": 1}]}",
                       "out of range");
    /* base + ts beyond int64 itself (2^62 + 2^62), for an event, a counter and a flow point */
    expect_parse_error("{\"baseTimeNanoseconds\": 4611686018427387904, \"traceEvents\": ["
                       "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1,"
                       " \"tid\": 1, \"ts\": 4611686018427387.904, \"dur\": 1}]}",
                       "baseTimeNanoseconds 4611686018427387904 + ts 4611686018427387904 ns");
    expect_parse_error("{\"baseTimeNanoseconds\": 4611686018427387904, \"traceEvents\": ["
                       "{\"ph\": \"C\", \"name\": \"c\", \"pid\": 1, \"tid\": 1,"
                       " \"ts\": 4611686018427387.904, \"args\": {\"v\": 1}}]}",
                       "a counter's time is out of range");
    expect_parse_error("{\"baseTimeNanoseconds\": 4611686018427387904, \"traceEvents\": ["
                       "{\"ph\": \"s\", \"id\": 1, \"pid\": 1, \"tid\": 1, \"cat\": \"fwdbwd\","
                       " \"name\": \"fwdbwd\", \"ts\": 4611686018427387.904},"
                       "{\"ph\": \"f\", \"id\": 1, \"pid\": 1, \"tid\": 1, \"cat\": \"fwdbwd\","
                       " \"name\": \"fwdbwd\", \"ts\": 4611686018427387.904, \"bp\": \"e\"}]}",
                       "a flow point's time is out of range");
}

static void times_are_exact_nanoseconds(void **state)
{
    gp_trace *t =
        read_text("{\"baseTimeNanoseconds\": 1700000000000000000, \"traceEvents\": ["
                  "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1,"
                  " \"ts\": 4458676522690.655, \"dur\": 156.7775},"
                  "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\", \"pid\": 1, \"tid\": 2,"
                  " \"ts\": \"12.5\", \"dur\": 0.0004}]}");
    const gp_track *tr = &t->tracks[0];
    assert_int_equal(tr->n_events, 1);
    /* 4458676522690.655 us = 4458676522690655 ns, exactly, plus the base. */
    assert_int_equal(tr->events[0].ts, 1700000000000000000LL + 4458676522690655LL);
    assert_int_equal(tr->events[0].dur, 156778); /* 156.7775 us -> 156777.5 ns -> rounds up */
    assert_int_equal(t->tracks[1].events[0].ts, 1700000000000000000LL + 12500);
    assert_int_equal(t->tracks[1].events[0].dur, 0);
    gp_trace_free(t);
    /* A quoted "dur" reads as a quoted "ts" does; a non-number in quotes is an error. */
    t = read_text("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\","
                  " \"pid\": 1, \"tid\": 1, \"ts\": 5, \"dur\": \"2.5\"}]}");
    assert_int_equal(t->tracks[0].events[0].dur, 2500);
    gp_trace_free(t);
    const char *bad = "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 5, \"dur\": \"soon\"}]}";
    gp_read_opts o = quiet_opts();
    gp_error err = {0};
    assert_int_equal(gp_trace_read_buffer(bad, strlen(bad), "q.json", &o, &t, &err), GP_EPARSE);
    assert_string_equal(err.msg, "q.json: byte 45: field \"dur\": expected a number");
}

/* gp_event_arg_int: a member's integer value, not a string that happens to equal the key. */
static void event_arg_int_finds_members(void **state)
{
    gp_trace *t = read_text(
        "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"range\", \"name\": \"r\", \"pid\": 1,"
        " \"tid\": 1, \"ts\": 1, \"dur\": 2, \"args\": {\"label\": \"mem_peak_bytes\","
        " \"mem_peak_bytes\" :  4096, \"ratio\": 1.5, \"neg\": -3}}]}");
    const gp_event *ev = only_event(t, GP_EV_RANGE);
    int64_t v = 0;
    assert_true(gp_event_arg_int(t, ev, "mem_peak_bytes", &v));
    assert_int_equal(v, 4096);
    assert_true(gp_event_arg_int(t, ev, "neg", &v));
    assert_int_equal(v, -3);
    assert_false(gp_event_arg_int(t, ev, "ratio", &v)); /* not an integer */
    assert_false(gp_event_arg_int(t, ev, "absent", &v));
    assert_false(gp_event_arg_int(t, ev, "label", &v)); /* a string */
    gp_trace_free(t);
}

/* A counter event with several numeric members is one series per member (as Chrome draws it);
 * non-numeric members are not series; the usual {"value": v} form is named by the event. */
static void counter_members_are_series(void **state)
{
    gp_trace *t = read_text(
        "{\"traceEvents\": [{\"ph\": \"C\", \"name\": \"mem\", \"pid\": 1, \"ts\": 10,"
        " \"args\": {\"allocated\": 100, \"label\": \"x\", \"reserved\": 250.5,"
        " \"nested\": {\"a\": 1}}},"
        "{\"ph\": \"C\", \"name\": \"util\", \"pid\": 1, \"ts\": 20, \"args\": {\"value\": 7}}]}");
    assert_int_equal(t->n_counters, 3);
    assert_int_equal(t->stats.by_kind[GP_EV_COUNTER], 3);
    const char *want[] = {"mem.allocated", "mem.reserved", "util"};
    const double vals[] = {100, 250.5, 7};
    for (size_t i = 0; i < 3; i++) {
        assert_string_equal(gp_trace_str(t, t->counters[i].series), want[i]);
        assert_true(t->counters[i].value == vals[i]);
    }
    assert_int_equal(t->counters[0].ts, t->counters[1].ts);
    gp_trace_free(t);
}

/* Written back and read again, the model is equal. */
static void assert_round_trips(const gp_trace *t)
{
    char *text = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);
    assert_non_null(fp);
    gp_error err = {0};
    assert_int_equal(gp_trace_write_chrome_stream(t, fp, &err), GP_OK);
    fclose(fp);
    gp_read_opts o = quiet_opts();
    gp_trace *back = NULL;
    assert_int_equal(gp_trace_read_buffer(text, len, "back", &o, &back, &err), GP_OK);
    gp_error why = {0};
    if (!gp_trace_equal(t, back, &why))
        fail_msg("round trip: %s", why.msg);
    free(text);
    gp_trace_free(back);
}

/* The samples of one time keep file order, whatever order their series names were first seen in:
 * at ts 4 "mem.b" (interned before "mem.a" by the later event at ts 0) stays after "mem.a" as the
 * file has it; written back and read again, the model is equal (fuzz_trace_reader found the order
 * following string ids, which the re-read interns in another order). */
static void counter_samples_of_one_time_keep_file_order(void **state)
{
    (void)state;
    gp_trace *t = read_text("{\"traceEvents\": ["
                            "{\"ph\": \"C\", \"name\": \"mem\", \"pid\": 1, \"ts\": 4,"
                            " \"args\": {\"x\": 1, \"b\": 2, \"a\": 3}},"
                            "{\"ph\": \"C\", \"name\": \"mem\", \"pid\": 1, \"ts\": 0,"
                            " \"args\": {\"x\": 4, \"a\": 5, \"b\": 6}}]}");
    assert_int_equal(t->n_counters, 6);
    static const char *const want[] = {"mem.x", "mem.a", "mem.b", "mem.x", "mem.b", "mem.a"};
    for (size_t i = 0; i < 6; i++)
        assert_string_equal(gp_trace_str(t, t->counters[i].series), want[i]);
    assert_round_trips(t);
    gp_trace_free(t);
}

/* Values the model keeps in 32 bits saturate rather than wrap. */
static void int32_fields_saturate(void **state)
{
    gp_trace *t = read_text(
        "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0,"
        " \"tid\": 7, \"ts\": 1, \"dur\": 2, \"args\": {\"device\": 0, \"stream\": 7,"
        " \"grid\": [5000000000, -5000000000, 4294967295], \"registers per thread\": "
        "4294967296}}]}");
    const gp_gpu_info *gi = gp_event_gpu_info(t, &t->tracks[0].events[0]);
    assert_non_null(gi);
    assert_int_equal(gi->grid[0], INT32_MAX);
    assert_int_equal(gi->grid[1], INT32_MIN);
    assert_int_equal(gi->grid[2], INT32_MAX); /* would wrap to -1, "absent" */
    assert_int_equal(gi->registers_per_thread, INT32_MAX);
    gp_trace_free(t);
}

/* A GPU event's device (its pid, or args "device") beyond 32 bits saturates on its track too, so
 * the "device" the writer puts in args reads back onto the same track (fuzz_trace_reader found
 * pid 4294967295 on track 4294967295 with device 2147483647, re-read on track 2147483647). */
static void gpu_device_beyond_int32_keeps_its_track(void **state)
{
    (void)state;
    gp_trace *t = read_text(
        "[{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Event Sync\", \"pid\": 4294967295,"
        " \"ts\": 12, \"dur\": 1, \"args\": {}},"
        " {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 1,"
        " \"dur\": 2, \"args\": {\"device\": -5000000000, \"stream\": 7}}]");
    assert_int_equal(t->n_tracks, 2);
    for (size_t i = 0; i < t->n_tracks; i++) {
        const gp_track *tr = &t->tracks[i];
        const gp_gpu_info *gi = gp_event_gpu_info(t, &tr->events[0]);
        assert_non_null(gi);
        assert_true(gi->device == INT32_MAX || gi->device == INT32_MIN);
        assert_int_equal(tr->pid, gi->device);
    }
    assert_round_trips(t);
    gp_trace_free(t);
}

/* The integers of args: the non-negative ones of 1 to 15 digits are read and skipped inline
 * (json_scan.h, gp__json_uint_fast / gp__json_uint_end), every other form by the general path.
 * Each form here is read as the general path reads it, at the fast path's edges (7, 8, 9, 15
 * and 16 digits, a zero, a fraction, an exponent, a sign, a blank, a string), and the forms JSON
 * refuses are refused in a skipped member too. */
static void args_integers_read_alike_on_both_paths(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int64_t want;
    } forms[] = {
        {"0", 0},
        {"7", 7},
        {"1234567", 1234567},
        {"12345678", 12345678},
        {"9876543210", 9876543210LL},
        {"-5", -5},
        {"5.9", 5},
        {"1e3", 1000},
        {"100000000", 100000000},
        {"123456789012345", 123456789012345LL},
        {"1234567890123456", 1234567890123456LL},
        {" 42", 42},
        {"\"0x1f\"", 31},
        {"\"77\"", 77},
        {"3 ", 3},
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        char json[1024];
        snprintf(json, sizeof json,
                 "{\"traceEvents\": ["
                 "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7,"
                 " \"ts\": 100, \"dur\": 2, \"args\": {\"device\": 0, \"stream\": 7,"
                 " \"correlation\":%s, \"External id\":%s, \"Ev Idx\":%s}},"
                 "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", \"pid\": 1,"
                 " \"tid\": 1, \"ts\": 50, \"dur\": 9, \"args\": {\"Record function id\":%s,"
                 " \"Input Dims\": [[%s, %s], []], \"Sequence number\": %s}}]}",
                 forms[i].text, forms[i].text, forms[i].text, forms[i].text, forms[i].text,
                 forms[i].text, forms[i].text);
        gp_trace *t = read_text(json);
        const gp_event *k = only_event(t, GP_EV_KERNEL);
        if (k->correlation != forms[i].want || k->external_id != forms[i].want)
            fail_msg("%s: read as %lld / %lld, not %lld", forms[i].text, (long long)k->correlation,
                     (long long)k->external_id, (long long)forms[i].want);
        assert_non_null(only_event(t, GP_EV_CPU_OP));
        gp_trace_free(t);
    }
    /* Python frames: the parent id (null or an integer) and the id */
    gp_trace *t =
        read_text("{\"traceEvents\": ["
                  "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"a.py(1): f\","
                  " \"pid\": 1, \"tid\": 1, \"ts\": 10, \"dur\": 90, \"args\":"
                  " {\"Python parent id\": null, \"Python id\": 1234567, \"Ev Idx\": 0}},"
                  "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"a.py(2): g\","
                  " \"pid\": 1, \"tid\": 1, \"ts\": 20, \"dur\": 9, \"args\":"
                  " {\"Python parent id\": 1234567, \"Python id\": 12345678}}]}");
    const gp_track *tr = &t->tracks[0];
    assert_int_equal(tr->n_events, 2);
    const gp_py_info *f = gp_event_py_info(t, &tr->events[0]);
    const gp_py_info *g = gp_event_py_info(t, &tr->events[1]);
    assert_non_null(f);
    assert_non_null(g);
    assert_int_equal(f->id, 1234567);
    assert_int_equal(f->parent_id, -1);
    assert_int_equal(g->id, 12345678);
    assert_int_equal(g->parent_id, 1234567);
    gp_trace_free(t);
    /* what JSON refuses is refused where the member is skipped too */
    expect_parse_error(
        "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\","
        " \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1, \"args\": {\"Ev Idx\": 012}}]}",
        "leading zero");
    expect_parse_error("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\","
                       " \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1, \"args\": {\"Input Dims\":"
                       " [[1, 07]]}}]}",
                       "leading zero");
    expect_parse_error("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\","
                       " \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1, \"args\": {\"Ev Idx\":"
                       " 0123456789}}]}",
                       "leading zero");
    expect_parse_error(
        "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\","
        " \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1, \"args\": {\"Ev Idx\": 12x}}]}",
        "expected ',' or '}'");
}

static void legacy_schema_is_read(void **state)
{
    gp_trace *t = read_text(
        "{\"schemaVersion\": 1, \"traceEvents\": ["
        "{\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": \"stream 7\","
        " \"ts\": 1623142623531625, \"dur\": 2, \"args\": {\"device\": 0, \"stream\": 7,"
        " \"correlation\": 34441, \"external id\": 544, \"grid\": [50, 1, 1]}},"
        "{\"ph\": \"X\", \"cat\": \"Runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 25738,"
        " \"tid\": \"25738\", \"ts\": 1623142623531600, \"dur\": 20,"
        " \"args\": {\"cbid\": 211, \"correlation\": 34441, \"external id\": 544}},"
        "{\"ph\": \"f\", \"id\": 34441, \"pid\": 0, \"tid\": \"stream 7\", \"ts\": "
        "1623142623531625,"
        " \"cat\": \"async\", \"name\": \"launch\", \"bp\": \"e\"}]}");
    const gp_event *k = only_event(t, GP_EV_KERNEL);
    assert_int_equal(k->ts, 1623142623531625LL * 1000);
    assert_int_equal(k->external_id, 544);
    assert_int_equal(k->correlation, 34441);
    const gp_track *kt = &t->tracks[k->track];
    assert_int_equal(kt->kind, GP_TRACK_GPU_STREAM);
    assert_int_equal(kt->stream, 7);
    assert_int_equal(gp_event_gpu_info(t, k)->grid[0], 50);
    const gp_event *rt = only_event(t, GP_EV_RUNTIME);
    assert_int_equal(gp_event_cbid(rt), 211);
    assert_int_equal(t->tracks[rt->track].tid, 25738);
    assert_int_equal(t->n_flows, 0); /* launch flows are implied by correlation */
    gp_trace_free(t);
}

/* The legacy autograd-profiler format (PyTorch without Kineto, export_chrome_trace): a bare array,
 * pid "CPU functions" (operators, tid the thread) or "CUDA functions" (kernels, tid the device),
 * no cat, cpu_to_cuda flows. Operators are cpu_op on CPU thread (0, tid), kernels on GPU stream
 * (tid, 0), the flows are launch arrows (not kept); nothing is an unknown category. The same model
 * read in pieces and after write + re-read. */
static void legacy_autograd_profiler_format_is_read(void **state)
{
    static const char doc[] =
        "[{\"name\": \"aten::linear\", \"ph\": \"X\", \"ts\": 167, \"dur\": 258, \"tid\": 1, "
        "\"pid\": \"CPU functions\", \"args\": {}}, "
        "{\"name\": \"aten::addmm\", \"ph\": \"X\", \"ts\": 299, \"dur\": 125, \"tid\": 1, "
        "\"pid\": \"CPU functions\", \"args\": {}}, "
        "{\"name\": \"aten::addmm\", \"ph\": \"s\", \"ts\": 299, \"tid\": 1, "
        "\"pid\": \"CPU functions\", \"id\": 0, \"cat\": \"cpu_to_cuda\", \"args\": {}}, "
        "{\"name\": \"gemm_kernel\", \"ph\": \"f\", \"ts\": 310, \"tid\": 1, "
        "\"pid\": \"CUDA functions\", \"id\": 0, \"cat\": \"cpu_to_cuda\", \"args\": {}}, "
        "{\"name\": \"gemm_kernel\", \"ph\": \"X\", \"ts\": 310, \"dur\": 40, \"tid\": 1, "
        "\"pid\": \"CUDA functions\", \"args\": {}}, "
        "{\"name\": \"aten::relu\", \"ph\": \"X\", \"ts\": 459, \"dur\": 66, \"tid\": 2, "
        "\"pid\": \"CPU functions\", \"args\": {}}, "
        "{\"name\": \"rpc_op\", \"ph\": \"X\", \"ts\": 500, \"dur\": 3, "
        "\"tid\": \" node_id:1, thread_id:4 \", \"pid\": \"CPU functions\", \"args\": {}}, "
        "{\"name\": \"tagged\", \"ph\": \"X\", \"cat\": \"mine\", \"ts\": 600, \"dur\": 1, "
        "\"tid\": 1, \"pid\": \"CPU functions\"}]";
    gp_trace *t = read_text(doc);
    assert_int_equal(t->stats.by_kind[GP_EV_CPU_OP], 4);
    assert_int_equal(t->stats.by_kind[GP_EV_KERNEL], 1);
    assert_int_equal(t->stats.by_kind[GP_EV_OTHER], 1); /* a cat of its own: as before */
    assert_int_equal(t->stats.unknown_cat, 1);          /* only "mine" */
    assert_int_equal(t->stats.flow_points, 2);
    assert_int_equal(t->n_flows, 0); /* launch arrows: no correlation ids to keep them by */
    const gp_event *k = only_event(t, GP_EV_KERNEL);
    const gp_track *kt = &t->tracks[k->track];
    assert_int_equal(kt->kind, GP_TRACK_GPU_STREAM);
    assert_int_equal(kt->device, 1);
    assert_int_equal(kt->stream, 0);
    assert_int_equal(k->ts, 310000);
    assert_int_equal(k->dur, 40000);
    assert_int_equal(gp_event_gpu_info(t, k)->device, 1);
    assert_true(k->flags & GP_EVF_STREAM_FROM_TID); /* no args.stream in the source */
    int threads = 0;
    for (size_t i = 0; i < t->n_tracks; i++) {
        const gp_track *tr = &t->tracks[i];
        for (size_t j = 0; j < tr->n_events; j++) {
            const gp_event *e = &tr->events[j];
            if (e->kind != GP_EV_CPU_OP)
                continue;
            const char *name = gp_trace_str(t, e->name);
            if (strcmp(name, "rpc_op") == 0) { /* a string tid keeps its string */
                assert_int_equal(tr->kind, GP_TRACK_OTHER);
                assert_false(tr->pid_is_str);
                assert_int_equal(tr->pid, 0);
                assert_string_equal(gp_trace_str(t, tr->tid_str), " node_id:1, thread_id:4 ");
                continue;
            }
            assert_int_equal(tr->kind, GP_TRACK_CPU_THREAD);
            assert_int_equal(tr->pid, 0);
            assert_int_equal(tr->tid, strcmp(name, "aten::relu") == 0 ? 2 : 1);
            threads++;
        }
    }
    assert_int_equal(threads, 3);

    gp_read_opts o = quiet_opts();
    gp_error err = {0};
    gp_error why = {0};
    for (size_t piece = 1; piece <= 61; piece += 60) {
        gp_trace *cut = NULL;
        assert_int_equal(
            gp__trace_read_buffer_pieces(doc, sizeof doc - 1, "test.json", &o, piece, &cut, &err),
            GP_OK);
        if (!gp_trace_equal(t, cut, &why))
            fail_msg("%zu-byte pieces differ: %s", piece, why.msg);
        gp_trace_free(cut);
    }
    assert_round_trips(t);
    gp_trace_free(t);
}

static void bare_array_string_ids_and_stream_minus_one(void **state)
{
    gp_trace *t = read_text(
        "[{\"ph\": \"X\", \"cat\": \"Trace\", \"name\": \"span\", \"pid\": \"Spans\","
        " \"tid\": \"PyTorch Profiler\", \"ts\": 1, \"dur\": 5},"
        "{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Event Sync\", \"pid\": 0,"
        " \"tid\": 4294967295, \"ts\": 2, \"dur\": 1, \"args\": {\"cuda_sync_kind\": \"Event "
        "Sync\", \"wait_on_cuda_event_record_corr_id\": 41, \"wait_on_stream\": 7,"
        " \"stream\": 4294967295, \"device\": 0}},"
        "{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 5, \"tid\": 5, \"ts\": 3,"
        " \"args\": {\"Bytes\": -512, \"Total Allocated\": 1024, \"Addr\": 77, \"Device Id\": "
        "0}}]");
    const gp_event *o = only_event(t, GP_EV_OTHER);
    const gp_track *ot = &t->tracks[o->track];
    assert_int_equal(ot->kind, GP_TRACK_OTHER);
    assert_string_equal(gp_trace_str(t, ot->pid_str), "Spans");
    assert_string_equal(gp_trace_str(t, gp_event_category(o)), "Trace");
    const gp_event *s = only_event(t, GP_EV_SYNC);
    assert_int_equal(t->tracks[s->track].stream, -1);
    assert_string_equal(gp_trace_str(t, gp_event_gpu_ext(t, s)->sync_kind), "Event Sync");
    assert_int_equal(gp_event_gpu_ext(t, s)->wait_on_event_corr, 41);
    assert_int_equal(gp_event_gpu_ext(t, s)->wait_on_stream, 7);
    assert_int_equal(t->n_gpu_ext, 1); /* only the sync has fields of a gp_gpu_ext */
    const gp_event *m = only_event(t, GP_EV_MEMORY);
    const gp_mem_info *mi = gp_event_mem_info(t, m);
    assert_int_equal(mi->bytes, -512);
    assert_int_equal(mi->total_allocated, 1024);
    assert_int_equal(mi->total_reserved, -1);
    assert_int_equal(t->stats.unknown_cat, 0); /* "Trace" is a known category */
    assert_round_trips(t); /* the sync's args (wait_on_cuda_event_record_corr_id) included */
    gp_trace_free(t);
}

static void suspect_values_are_counted_not_fatal(void **state)
{
    gp_trace *t = read_text(
        "{\"traceEvents\": ["
        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"neg\", \"pid\": 0, \"tid\": 7, \"ts\": "
        "10,"
        " \"dur\": -3, \"args\": {\"stream\": 7}},"
        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"years\", \"pid\": 0, \"tid\": 7, \"ts\": "
        "11,"
        " \"dur\": 7450000000000000, \"args\": {\"stream\": 7}},"
        "{\"ph\": \"X\", \"cat\": \"mystery\", \"name\": \"m\", \"pid\": 1, \"tid\": 1, \"ts\": 12,"
        " \"dur\": 1},"
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"nodur\", \"pid\": 1, \"tid\": 1, \"ts\": "
        "13}]}");
    assert_int_equal(t->stats.negative_dur, 1);
    assert_int_equal(t->stats.absurd_dur, 1);
    assert_int_equal(t->stats.unknown_cat, 1);
    assert_int_equal(t->stats.no_dur, 1);
    const gp_event *k = only_event(t, GP_EV_KERNEL); /* the 236-year kernel was dropped */
    assert_int_equal(k->dur, 0);
    assert_true(k->flags & GP_EVF_DUR_CLAMPED);
    assert_string_equal(gp_trace_str(t, gp_event_category(only_event(t, GP_EV_OTHER))), "mystery");
    gp_trace_free(t);
}

static void escapes_and_unicode(void **state)
{
    gp_trace *t = read_text("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\","
                            " \"name\": \"a\\\"b\\\\c\\u00e9\\ud83d\\ude00\\n\", \"pid\": 1,"
                            " \"tid\": 1, \"ts\": 1, \"dur\": 1}]}");
    const gp_event *e = only_event(t, GP_EV_CPU_OP);
    assert_string_equal(gp_trace_str(t, e->name), "a\"b\\c\xc3\xa9\xf0\x9f\x98\x80\n");
    gp_trace_free(t);
    /* \u0000 would cut a C string: it becomes U+FFFD, and the length says so. */
    t = read_text("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\\u0000b\","
                  " \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}]}");
    e = only_event(t, GP_EV_CPU_OP);
    assert_string_equal(gp_trace_str(t, e->name), "a\xef\xbf\xbd"
                                                  "b");
    assert_int_equal(gp_trace_strlen(t, e->name), 5);
    gp_trace_free(t);
}

/* An element longer than the reader's 4 MB chunk must be read whole (the buffer grows). */
static void element_longer_than_a_chunk(void **state)
{
    size_t big = 9u << 20;
    char *json = malloc(big + 200);
    assert_non_null(json);
    int n = sprintf(json, "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"");
    memset(json + n, 'x', big);
    sprintf(json + n + big, "\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2}]}");
    gp_trace *t = read_text(json);
    assert_int_equal(gp_trace_strlen(t, only_event(t, GP_EV_CPU_OP)->name), big);
    gp_trace_free(t);
    free(json);
}

/* ---- malformed input --------------------------------------------------------------------- */

static void malformed_corpus_gives_clear_errors(void **state)
{
    const char *src = getenv("GP_SOURCE_DIR");
    assert_non_null(src);
    char dir[2048], path[4096], line[512];
    snprintf(dir, sizeof dir, "%s/tests/data/malformed", src);
    snprintf(path, sizeof path, "%s/expected.txt", dir);
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    int checked = 0;
    gp_read_opts o = quiet_opts();
    while (fgets(line, sizeof line, fp)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        line[strcspn(line, "\n")] = '\0';
        char *bar = strchr(line, '|');
        assert_non_null(bar);
        *bar = '\0';
        snprintf(path, sizeof path, "%s/%s", dir, line);
        gp_trace *t = NULL;
        gp_error err = {0};
        gp_status s = gp_trace_read(path, &o, &t, &err);
        if (s != GP_EPARSE)
            fail_msg("%s: expected GP_EPARSE, got %d (%s)", line, s, err.msg);
        assert_null(t);
        if (!strstr(err.msg, bar + 1) || !strstr(err.msg, line) || !strstr(err.msg, ": byte "))
            fail_msg("%s: message \"%s\" lacks \"%s\", the file name or the byte offset", line,
                     err.msg, bar + 1);
        checked++;
    }
    fclose(fp);
    assert_true(checked >= 15);
}

/* The GPU-record mapping every reader of GPU activity shares (io/gpu_records.h; the tracer's
 * CUPTI converter is one user): Kineto's names and rows, -1 for "no stream", skipped records
 * without a time, occupancy from the device's properties. */
static void gpu_records_map_like_kineto(void **state)
{
    (void)state;
    gp_trace *t;
    assert_int_equal(gp_trace_create("records", &t), GP_OK);
    gp_device_props d = {.id = 0, .num_sms = 80, .warp_size = 32};
    assert_int_equal(gp_trace_add_device(t, &d), GP_OK);
    gp__grec_times times = {0};
    gp__grec_gpu_op copy = {.kind = GP_EV_MEMCPY,
                            .start = 1000,
                            .end = 3000,
                            .correlation = 5,
                            .device = 0,
                            .stream = gp__grec_stream(7),
                            .copy_kind = 1,
                            .src_kind = 1,
                            .dst_kind = 3,
                            .bytes = 4000};
    assert_int_equal(gp__grec_add_gpu_op(t, &times, &copy), GP_OK);
    gp__grec_gpu_op set = {.kind = GP_EV_MEMSET,
                           .start = 4000,
                           .end = 3000,
                           .device = 0,
                           .stream = gp__grec_stream(UINT32_MAX),
                           .dst_kind = 3};
    assert_int_equal(gp__grec_add_gpu_op(t, &times, &set), GP_OK);
    gp__grec_gpu_op kern = {.kind = GP_EV_KERNEL,
                            .start = 5000,
                            .end = 6000,
                            .device = 0,
                            .stream = 7,
                            .grid = {160, 1, 1},
                            .block = {64, 1, 1}};
    assert_int_equal(gp_trace_intern(t, "gemm", 4, &kern.name), GP_OK);
    assert_int_equal(gp__grec_add_gpu_op(t, &times, &kern), GP_OK);
    gp__grec_gpu_op untimed = {.kind = GP_EV_KERNEL, .start = 0, .end = 10, .device = 0};
    assert_int_equal(gp__grec_add_gpu_op(t, &times, &untimed), GP_OK);
    assert_int_equal(times.bad_time, 1);
    assert_int_equal(times.clamped, 1);
    assert_int_equal(t->n_tracks, 2);
    const gp_track *s7 = &t->tracks[0], *none = &t->tracks[1];
    assert_string_equal(gp_trace_str(t, s7->process_name), "GPU 0");
    assert_string_equal(gp_trace_str(t, s7->name), "stream 7");
    assert_int_equal(none->tid, -1);
    assert_int_equal(none->name, 0); /* no "stream -1" row name */
    assert_int_equal(s7->n_events, 2);
    const gp_event *c = &s7->events[0], *k = &s7->events[1];
    assert_string_equal(gp_trace_str(t, c->name), "Memcpy HtoD (Pageable -> Device)");
    assert_int_equal(c->dur, 2000);
    assert_int_equal(c->correlation, 5);
    const gp_gpu_info *ci = gp_event_gpu_info(t, c);
    assert_non_null(ci);
    assert_int_equal(ci->bytes, 4000);
    assert_true(ci->bandwidth_gbps == 2.0); /* 4000 bytes in 2000 ns */
    assert_int_equal(ci->graph_id, -1);
    const gp_event *m = &none->events[0];
    assert_string_equal(gp_trace_str(t, m->name), "Memset (Device)");
    assert_int_equal(m->dur, 0);
    assert_true(m->flags & GP_EVF_DUR_CLAMPED);
    const gp_gpu_info *ki = gp_event_gpu_info(t, k);
    assert_true(ki->blocks_per_sm == 2.0f); /* 160 blocks on 80 SMs */
    assert_true(ki->warps_per_sm == 4.0f);  /* two warps per block */
    assert_string_equal(gp__grec_copy_kind(99), "Unknown");
    assert_string_equal(gp__grec_memory_kind(2), "Pinned");
    gp_trace_free(t);
}

/* The reader registry (io/formats.h): each format sniffs its own bytes, the first entry reads what
 * nobody claims (and says what is wrong with it), and one predicate names trace files. */
static void reader_registry_sniffs_and_names(void **state)
{
    (void)state;
    size_t n;
    const gp__trace_format *f = gp__trace_formats(&n);
    assert_int_equal(n, 3);
    assert_string_equal(f[0].name, "kineto");
    assert_string_equal(f[1].name, "legacy_autograd");
    assert_string_equal(f[2].name, "cupti");
    assert_null(f[2].read); /* records converted in process, through f[2].records */
    assert_string_equal(f[2].records, "io/gpu_records.h");
    struct {
        const char *head, *format;
    } cases[] = {
        {"{\"traceEvents\": []}", "kineto"},
        {"\xef\xbb\xbf  {\"schemaVersion\": 1, \"traceEvents\": []}", "kineto"},
        {"[{\"name\": \"aten::add\", \"ph\": \"X\", \"pid\": 1}]", "kineto"},
        {"[{\"name\": \"aten::add\", \"ph\": \"X\", \"pid\": \"CPU functions\"}]",
         "legacy_autograd"},
        {"not json at all", "kineto"}, /* nobody claims it: the JSON reader says what is wrong */
        {"", "kineto"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_string_equal(gp__trace_format_of(cases[i].head, strlen(cases[i].head))->name,
                            cases[i].format);
    assert_true(gp_trace_file_name("rank0.json"));
    assert_true(gp_trace_file_name("rank0.pt.trace.json.gz"));
    assert_false(gp_trace_file_name(".rank0.json"));
    assert_false(gp_trace_file_name("rank0.json.bak"));
    assert_false(gp_trace_file_name("compile.log"));
    assert_false(gp_trace_file_name(".json"));
    /* A legacy file read through the registry from memory and from a file gives one model. */
    const char *legacy = "[{\"name\": \"aten::add\", \"ph\": \"X\", \"ts\": 1, \"dur\": 2, "
                         "\"tid\": 1, \"pid\": \"CPU functions\", \"args\": {}}]";
    gp_trace *a = NULL, *b = NULL;
    gp_error err = {0};
    assert_int_equal(gp_trace_read_buffer(legacy, strlen(legacy), "l.json", NULL, &a, &err), GP_OK);
    char path[] = "/tmp/gpuprof-legacy-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, legacy, strlen(legacy)), (ssize_t)strlen(legacy));
    close(fd);
    gp__input in;
    assert_int_equal(gp__input_open(&in, path, true, &err), GP_OK);
    assert_string_equal(gp__trace_format_of_input(&in)->name, "legacy_autograd");
    gp__input_close(&in);
    assert_int_equal(gp_trace_read(path, NULL, &b, &err), GP_OK);
    unlink(path);
    assert_int_equal(gp_trace_event_count(a), 1);
    assert_true(gp_trace_equal(a, b, &err));
    gp_trace_free(a);
    gp_trace_free(b);
}

static void missing_file_is_not_found(void **state)
{
    gp_trace *t = NULL;
    gp_error err = {0};
    assert_int_equal(gp_trace_read("/nonexistent/trace.json", NULL, &t, &err), GP_ENOENT);
    assert_non_null(strstr(err.msg, "/nonexistent/trace.json"));
    gp_job *job = NULL;
    assert_int_equal(gp_job_read("/nonexistent/trace.json", NULL, &job, &err), GP_ENOENT);
    assert_non_null(strstr(err.msg, "/nonexistent/trace.json"));
}

/* ---- writer ------------------------------------------------------------------------------ */

static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
    buf[n] = '\0';
    fclose(fp);
    if (len)
        *len = (size_t)n;
    return buf;
}

static void writer_rank_escaping_flows(void **state)
{
    gp_trace *t = read_text(
        "{\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 3, \"world_size\": 8},"
        " \"baseTimeNanoseconds\": 1000000, \"traceEvents\": ["
        "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 9,"
        " \"tid\": 9, \"ts\": 1.000, \"dur\": 2.5, \"args\": {\"correlation\": 42, \"cbid\": 211}},"
        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"<script>alert(\\\"x\\\")</script>\","
        " \"pid\": 0, \"tid\": 7, \"ts\": 4.25, \"dur\": 1, \"args\": {\"stream\": 7,"
        " \"device\": 0, \"correlation\": 42}}]}");
    assert_int_equal(t->rank, 3);
    char path[] = "/tmp/gp_writer_XXXXXX.json";
    int fd = mkstemps(path, 5);
    assert_true(fd >= 0);
    close(fd);
    gp_error err = {0};
    assert_int_equal(gp_trace_write_chrome(t, path, &err), GP_OK);
    char *text = slurp(path, NULL);
    assert_non_null(strstr(text, "\"rank\": 3")); /* HTA's regex needs the space */
    assert_non_null(strstr(text, "\"name\":\"<script>alert(\\\"x\\\")</script>\""));
    assert_non_null(strstr(text, "\"ph\":\"s\",\"id\":42"));
    assert_non_null(strstr(text, "\"ph\":\"f\",\"id\":42"));
    assert_non_null(strstr(text, "\"ts\":4.250")); /* relative to the base, 3 decimals */
    free(text);
    gp_trace *back = NULL;
    gp_read_opts o = quiet_opts();
    assert_int_equal(gp_trace_read(path, &o, &back, &err), GP_OK);
    gp_error why = {0};
    if (!gp_trace_equal(t, back, &why))
        fail_msg("round trip differs: %s", why.msg);
    gp_trace_free(back);
    unlink(path);
    /* A failed write leaves nothing behind and reports the path. */
    assert_int_equal(gp_trace_write_chrome(t, "/nonexistent-dir/out.json", &err), GP_EIO);
    assert_non_null(strstr(err.msg, "/nonexistent-dir/out.json"));
    gp_trace_free(t);
}

/* ---- real traces ------------------------------------------------------------------------- */

static int shared_traces(char names[][8192], int max)
{
    const char *shared = getenv("GP_SHARED_DIR");
    char dir[2048];
    snprintf(dir, sizeof dir, "%s/traces", shared ? shared : "../shared");
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < max) {
        size_t l = strlen(de->d_name);
        if (l > 8 && strcmp(de->d_name + l - 8, ".json.gz") == 0)
            snprintf(names[n++], 8192, "%s/%s", dir, de->d_name);
    }
    closedir(d);
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/multirank8_dlrm_v100", dir);
    if ((d = opendir(sub))) {
        while ((de = readdir(d)) && n < max)
            if (de->d_name[0] != '.')
                snprintf(names[n++], 8192, "%s/%s", sub, de->d_name);
        closedir(d);
    }
    return n;
}

static void round_trip_every_shared_trace(void **state)
{
    static char names[32][8192];
    int n = shared_traces(names, 32);
    if (n < 0)
        skip();
    assert_true(n >= 16);
    gp_read_opts o = quiet_opts();
    for (int i = 0; i < n; i++) {
        for (int gz = 0; gz < 2; gz++) {
            gp_trace *a = NULL, *b = NULL;
            gp_error err = {0};
            if (gp_trace_read(names[i], &o, &a, &err) != GP_OK)
                fail_msg("%s", err.msg);
            char out[64];
            snprintf(out, sizeof out, "/tmp/gp_rt_%d%s", (int)getpid(), gz ? ".json.gz" : ".json");
            assert_int_equal(gp_trace_write_chrome(a, out, &err), GP_OK);
            if (gp_trace_read(out, &o, &b, &err) != GP_OK)
                fail_msg("re-reading %s written from %s: %s", out, names[i], err.msg);
            gp_error why = {0};
            if (!gp_trace_equal(a, b, &why))
                fail_msg("%s: round trip differs: %s", names[i], why.msg);
            assert_int_equal(gp_trace_event_count(a), gp_trace_event_count(b));
            gp_trace_free(a);
            gp_trace_free(b);
            unlink(out);
        }
    }
}

/* An event without a category on a track whose pid is a legacy autograd-profiler name ("CPU
 * functions", "CUDA functions") is written with "cat": "", so that it is read back as it was and
 * not as a legacy operator or kernel (a fuzz_trace_reader finding: the round trip moved it to a
 * CPU thread). */
static void uncategorised_event_on_a_legacy_pid_round_trips(void **state)
{
    (void)state;
    static const char *const docs[] = {
        "[{\"ph\": \"X\", \"cat\": \"\", \"name\": \"a\", \"pid\": \"CPU functions\", "
        "\"tid\": 1, \"ts\": 1, \"dur\": 2}]",
        "[{\"ph\": \"X\", \"cat\": \"\", \"name\": \"k\", \"pid\": \"CUDA functions\", "
        "\"tid\": 0, \"ts\": 1, \"dur\": 2},"
        " {\"ph\": \"X\", \"name\": \"op\", \"pid\": \"CPU functions\", \"tid\": 1, \"ts\": 3, "
        "\"dur\": 1}]",
    };
    gp_read_opts o = quiet_opts();
    for (size_t i = 0; i < sizeof docs / sizeof *docs; i++) {
        gp_trace *a = read_text(docs[i]), *b = NULL;
        char *text = NULL;
        size_t len = 0;
        FILE *fp = open_memstream(&text, &len);
        gp_error err = {0};
        assert_int_equal(gp_trace_write_chrome_stream(a, fp, &err), GP_OK);
        fclose(fp);
        assert_non_null(strstr(text, "\"cat\":\"\""));
        assert_int_equal(gp_trace_read_buffer(text, len, "rt.json", &o, &b, &err), GP_OK);
        gp_error why = {0};
        if (!gp_trace_equal(a, b, &why))
            fail_msg("document %zu: round trip differs: %s", i, why.msg);
        assert_int_equal(only_event(a, GP_EV_OTHER)->kind, GP_EV_OTHER);
        gp_trace_free(a);
        gp_trace_free(b);
        free(text);
    }
}

/* Decompresses a .gz file into memory. */
static char *gunzip_file(const char *path, size_t *len)
{
    gzFile gz = gzopen(path, "rb");
    assert_non_null(gz);
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    int got;
    while ((got = gzread(gz, buf + n, (unsigned)(cap - n))) > 0) {
        n += (size_t)got;
        if (n == cap)
            buf = realloc(buf, cap *= 2);
    }
    gzclose(gz);
    *len = n;
    return buf;
}

/* The decompressed text of ../shared/traces/<name>, or NULL when the shared traces are absent. */
static char *shared_trace_text(const char *name, size_t *len)
{
    const char *shared = getenv("GP_SHARED_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/traces/%s", shared ? shared : "../shared", name);
    return access(path, R_OK) == 0 ? gunzip_file(path, len) : NULL;
}

/* Feeding the reader 1, 7 or 61 bytes at a time must give the same model as one big read: every
 * "value continues in the next chunk" path is taken somewhere in these traces. */
static void reading_in_tiny_pieces_gives_the_same_model(void **state)
{
    static const char *const files[] = {"tiny_cuda_event_sync.json.gz", "tiny_triton.json.gz",
                                        "small_amd_mi250.json.gz", "cpu_only.json.gz",
                                        "small_alexnet_cudasync.json.gz"};
    static const size_t pieces[] = {1, 7, 61};
    gp_read_opts o = quiet_opts();
    int done = 0;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        size_t len;
        char *text = shared_trace_text(files[f], &len);
        if (!text)
            continue;
        gp_trace *whole = NULL;
        gp_error err = {0};
        assert_int_equal(gp_trace_read_buffer(text, len, files[f], &o, &whole, &err), GP_OK);
        for (size_t p = 0; p < sizeof pieces / sizeof pieces[0]; p++) {
            if (pieces[p] == 1 && len > 100000)
                continue; /* byte-by-byte re-parses each element per byte: keep it to small files */
            gp_trace *cut = NULL;
            if (gp__trace_read_buffer_pieces(text, len, files[f], &o, pieces[p], &cut, &err) !=
                GP_OK)
                fail_msg("%s in %zu-byte pieces: %s", files[f], pieces[p], err.msg);
            gp_error why = {0};
            if (!gp_trace_equal(whole, cut, &why))
                fail_msg("%s in %zu-byte pieces differs: %s", files[f], pieces[p], why.msg);
            gp_trace_free(cut);
            done++;
        }
        gp_trace_free(whole);
        free(text);
    }
    if (done == 0)
        skip();
}

/* A two-thread read gives the same model as a one-thread read (and does split the work), on
 * traces that between them put every side table (GPU info, memory, Python, args) and flows on both
 * sides of the split; a split inside a truncated file fails as a sequential read does. */
static void two_thread_read_gives_the_same_model(void **state)
{
    static const char *const names[] = {"medium_a100_nccl.json.gz", "large_v100_nccl.json.gz",
                                        "legacy2021_resnet50_v100.json.gz"};
    int checked = 0;
    for (size_t n = 0; n < sizeof names / sizeof *names; n++) {
        size_t len;
        char *text = shared_trace_text(names[n], &len);
        if (!text)
            continue;
        char plain[] = "/tmp/gp_par_XXXXXX.json";
        int fd = mkstemps(plain, 5);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, len), (ssize_t)len);
        close(fd);
        free(text);
        gp_read_opts one = quiet_opts(), two = quiet_opts();
        one.threads = 1;
        two.threads = 2;
        gp_trace *a = NULL, *b = NULL;
        gp_error err = {0};
        assert_int_equal(gp_trace_read(plain, &one, &a, &err), GP_OK);
        assert_int_equal(gp_trace_read(plain, &two, &b, &err), GP_OK);
        assert_int_equal(a->stats.threads_used, 1);
        assert_int_equal(a->stats.pieces, 1);
        /* Two threads parse the file in pieces (the two initial cuts, maybe more from stealing).
         * How many threads took a piece is up to the scheduler: under load one thread may take
         * every piece before the other starts (kineto_parallel.c par_worker counts a thread
         * only when it parsed a piece), so the split is asserted, not the thread count. */
        assert_true(b->stats.pieces >= 2);
        assert_true(b->stats.threads_used >= 1 && b->stats.threads_used <= 2);
        gp_error why = {0};
        if (!gp_trace_equal(a, b, &why))
            fail_msg("%s: two-thread read differs: %s", names[n], why.msg);
        assert_int_equal(a->stats.events_in, b->stats.events_in);
        assert_memory_equal(a->stats.by_kind, b->stats.by_kind, sizeof a->stats.by_kind);
        assert_int_equal(a->n_gpu_info, b->n_gpu_info);
        assert_int_equal(a->n_gpu_ext, b->n_gpu_ext);
        if (n == 0) /* its NCCL kernels carry collective args: the merge maps their ext records */
            assert_true(a->n_gpu_ext > 0);
        assert_int_equal(a->n_mem_info, b->n_mem_info);
        assert_int_equal(a->n_py_info, b->n_py_info);
        assert_int_equal(a->n_args, b->n_args);
        gp_trace_free(a);
        gp_trace_free(b);
        gp_error e1 = {0}, e2 = {0};
        assert_int_equal(truncate(plain, (off_t)(len * 3 / 4)), 0);
        assert_int_equal(gp_trace_read(plain, &one, &a, &e1), GP_EPARSE);
        assert_int_equal(gp_trace_read(plain, &two, &b, &e2), GP_EPARSE);
        assert_string_equal(e1.msg, e2.msg);
        unlink(plain);
        checked++;
    }
    if (!checked)
        skip();
}

/* Reads path with one thread and with two: both must fail with GP_EPARSE and the same message,
 * left in *err. */
static void read_fails_alike(const char *path, gp_error *err)
{
    gp_read_opts one = quiet_opts(), two = quiet_opts();
    one.threads = 1;
    two.threads = 2;
    gp_trace *t = NULL;
    gp_error e2 = {0};
    *err = (gp_error){0};
    assert_int_equal(gp_trace_read(path, &one, &t, err), GP_EPARSE);
    assert_int_equal(gp_trace_read(path, &two, &t, &e2), GP_EPARSE);
    assert_string_equal(err->msg, e2.msg);
}

/* Malformed documents whose fault lies after the split point: the two-thread read must fail
 * exactly as the one-thread read does (an object missing its '}', members after a bare array). */
static void two_thread_read_rejects_what_one_thread_rejects(void **state)
{
    static const char *const tails[][2] = {{"{\"traceEvents\": [\n", "\n]"},
                                           {"[\n", "\n], \"x\": 1}"},
                                           {"{\"traceEvents\": [\n", "\n], \"x\": 1"}};
    for (size_t v = 0; v < sizeof tails / sizeof tails[0]; v++) {
        char path[] = "/tmp/gp_bad2_XXXXXX.json";
        int fd = mkstemps(path, 5);
        assert_true(fd >= 0);
        FILE *fp = fdopen(fd, "w");
        fputs(tails[v][0], fp);
        for (int i = 0; i < 2000; i++)
            fprintf(fp,
                    "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op%d\", \"pid\": 1, "
                    "\"tid\": 1, \"ts\": %d, \"dur\": 1}",
                    i ? ",\n" : "", i % 7, i);
        fputs(tails[v][1], fp);
        fclose(fp);
        gp_error err;
        read_fails_alike(path, &err);
        unlink(path);
    }
}

/* A time out of range is reported at its element's byte offset: the same in one piece, in tiny
 * input chunks (the buffer refilled mid-element) and in a two-thread read (where it lies in the
 * second piece). */
static void time_out_of_range_names_its_offset(void **state)
{
    (void)state;
    for (int late = 0; late < 2; late++) {
        char path[] = "/tmp/gp_range_XXXXXX.json";
        int fd = mkstemps(path, 5);
        assert_true(fd >= 0);
        FILE *fp = fdopen(fd, "w");
        fputs("{\"traceEvents\": [\n", fp);
        long at = -1;
        int bad = late ? 1900 : 3;
        for (int i = 0; i < 2000; i++) {
            if (i)
                fputs(",\n", fp);
            if (i == bad) {
                at = ftell(fp);
                fputs("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"far\", \"pid\": 1, "
                      "\"tid\": 1, \"ts\": 4611686018427387.905, \"dur\": 1}",
                      fp);
                continue;
            }
            fprintf(fp,
                    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op%d\", \"pid\": 1, "
                    "\"tid\": 1, \"ts\": %d, \"dur\": 1}",
                    i % 7, i);
        }
        fputs("\n]}", fp);
        fclose(fp);
        char want[200];
        snprintf(want, sizeof want,
                 "%s: byte %ld: an event's time is out of range: ts 4611686018427387905 ns", path,
                 at);
        gp_error e1;
        read_fails_alike(path, &e1);
        if (strncmp(e1.msg, want, strlen(want)) != 0)
            fail_msg("\"%s\" does not start \"%s\"", e1.msg, want);
        gp_read_opts one = quiet_opts();
        gp_trace *t = NULL;
        size_t len;
        char *text = slurp(path, &len);
        for (size_t piece = 7; piece <= 4096; piece *= 24) {
            gp_error e3 = {0};
            assert_int_equal(gp__trace_read_buffer_pieces(text, len, path, &one, piece, &t, &e3),
                             GP_EPARSE);
            assert_string_equal(e1.msg, e3.msg);
        }
        free(text);
        unlink(path);
    }
}

/* Writes a trace with one event per line; with `nested`, events hold nested objects on lines of
 * their own after lines ending with ',', as pretty-printers write them: most cut candidates are
 * then not elements of traceEvents, so pieces must be proven (or discarded) by the piece before.
 * With `ties`, 37 start times and 3 lengths: events that sort equal, told apart by their names,
 * whose order only a stable sort keeps. */
static void write_cut_trace(char *path, int events, bool nested, bool bare, const char *tail,
                            bool ties)
{
    int fd = mkstemps(path, 5);
    assert_true(fd >= 0);
    FILE *fp = fdopen(fd, "w");
    assert_non_null(fp);
    fputs(bare ? "[\n" : "{\"schemaVersion\": 1,\n\"traceEvents\": [\n", fp);
    /* a track of one event, in the first piece: no other piece copies into it */
    fputs("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"lone\", \"pid\": 9, \"tid\": 9, "
          "\"ts\": 5, \"dur\": 1}",
          fp);
    for (int i = 0; i < events; i++) {
        fprintf(fp,
                ",\n{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"op%d\", \"pid\": %d, "
                "\"tid\": %d, \"ts\": %d.%03d, \"dur\": %d, \"args\": {\"list\": [",
                i % 3 ? "cpu_op" : "user_annotation", i % 11, 1 + i % 2, i % 3,
                ties ? i % 37 : (i * 7919) % 100000, ties ? 0 : i % 1000,
                ties ? 1 + i % 3 : 1 + i % 50);
        for (int k = 0; k < 6; k++)
            fprintf(fp, "%s{\"k\": %d}", k ? (nested ? ",\n" : ", ") : (nested ? "\n" : ""), k);
        fputs(nested ? "\n]}}" : "]}}", fp);
        if (i % 10 != 9)
            continue;
        /* GPU rows with gp_gpu_ext fields (a collective kernel, a sync), their strings new to
         * each piece: the merge maps them and offsets the records' indexes */
        fprintf(fp,
                ",\n{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"gpu%d\", \"pid\": 0, "
                "\"tid\": 7, \"ts\": %d, \"dur\": 1, \"args\": {\"device\": 0, \"stream\": 7, "
                "\"correlation\": %d, ",
                i % 20 == 9 ? "kernel" : "cuda_sync", i % 3, ties ? i % 37 : (i * 7919) % 100000,
                i);
        if (i % 20 == 9)
            fprintf(fp,
                    "\"Collective name\": \"allreduce%d\", \"In msg nelems\": %d, "
                    "\"Group size\": 8, \"dtype\": \"Float\", \"Process Group Name\": \"pg%d\"}}",
                    i, i, i % 5);
        else
            fprintf(fp,
                    "\"cuda_sync_kind\": \"Event Sync%d\", \"wait_on_stream\": %d, "
                    "\"wait_on_cuda_event_record_corr_id\": %d}}",
                    i % 4, i % 9, i);
    }
    fputs(tail ? tail : (bare ? "\n]\n" : "\n]}\n"), fp);
    fclose(fp);
}

/* Chains of many pieces (6 initial cuts, or 2 and a steal threshold of a few bytes; 2-4 threads)
 * on flat documents and on documents full of false cuts give the sequential model, and malformed
 * endings give the sequential error. Variants 6 and 7 have a base time, which the merge's tasks
 * add to the events (the lone event's track included: no copy goes there), and one that puts a
 * time out of range (the sequential error, nothing shifted). Then the same with the merge's tracks
 * split for sorting in two halves (a threshold of 16 events instead of 131,072): on events in file
 * order and out of it, and on ties (variant 5), the model is still the sequential one. A merge of
 * the halves that put the second half first among equals fails it. */
static void stolen_pieces_read_like_one_thread(void **state)
{
    uint64_t saved_min = gp__read_steal_min;
    size_t saved_initial = gp__read_initial_pieces, saved_split = gp__merge_split_min;
    gp__read_steal_min = 2048;
    for (int variant = 0; variant < 18; variant++) {
        char path[] = "/tmp/gp_steal_XXXXXX.json";
        gp__merge_split_min = variant >= 9 ? 16 : saved_split;
        int v = variant % 9;
        bool nested = v != 4 && v != 5 && v != 7, bare = v == 1;
        const char *tail = v == 2   ? "\n]"
                           : v == 3 ? "\n], \"x\": 1"
                           : v == 6 ? "\n], \"baseTimeNanoseconds\": 1700000000000000000}\n"
                           : v == 7 ? "\n], \"baseTimeNanoseconds\": 1700000000000000001}\n"
                           : v == 8 ? "\n], \"baseTimeNanoseconds\": 4611686018427387904}\n"
                                    : NULL;
        write_cut_trace(path, 6000, nested, bare, tail, v == 5 || v == 7);
        gp_read_opts one = quiet_opts();
        one.threads = 1;
        gp_trace *a = NULL;
        gp_error e1 = {0};
        gp_status s1 = gp_trace_read(path, &one, &a, &e1);
        assert_int_equal(s1, v == 2 || v == 3 || v == 8 ? GP_EPARSE : GP_OK);
        if (v == 6 || v == 7) /* relative times made absolute */
            assert_true(a->tracks[0].events[0].ts >= 1700000000000000000);
        for (size_t initial = 2; initial <= 6; initial += 4) {
            gp__read_initial_pieces = initial;
            for (int threads = 2; threads <= 4; threads++) {
                gp_read_opts par = quiet_opts();
                par.threads = threads;
                gp_trace *b = NULL;
                gp_error e2 = {0};
                assert_int_equal(gp_trace_read(path, &par, &b, &e2), s1);
                if (s1 != GP_OK) {
                    assert_string_equal(e1.msg, e2.msg);
                    continue;
                }
                gp_error why = {0};
                if (!gp_trace_equal(a, b, &why))
                    fail_msg("variant %d, %zu cuts, %d threads: differs: %s", variant, initial,
                             threads, why.msg);
                assert_int_equal(a->stats.events_in, b->stats.events_in);
                assert_int_equal(a->stats.bytes, b->stats.bytes);
                assert_int_equal(a->n_gpu_ext, 600); /* one per GPU row */
                assert_int_equal(b->n_gpu_ext, a->n_gpu_ext);
                if (v == 4 || v == 5 || v == 7) /* every cut is an element: all used */
                    assert_true(b->stats.pieces >= initial);
                gp_trace_free(b);
            }
        }
        gp_trace_free(a);
        unlink(path);
    }
    gp__read_steal_min = saved_min;
    gp__read_initial_pieces = saved_initial;
    gp__merge_split_min = saved_split;
}

/* A legacy autograd-profiler file (bare array, pid "CPU functions" / "CUDA functions", no cat) read
 * in many pieces on 2-4 threads gives the one-thread model: the format is decided per event from
 * its pid, so no piece depends on what another saw. */
static void legacy_format_pieces_read_like_one_thread(void **state)
{
    uint64_t saved_min = gp__read_steal_min;
    size_t saved_initial = gp__read_initial_pieces;
    gp__read_steal_min = 2048;
    char path[] = "/tmp/gp_legacy_XXXXXX.json";
    int fd = mkstemps(path, 5);
    assert_true(fd >= 0);
    FILE *fp = fdopen(fd, "w");
    assert_non_null(fp);
    fputs("[", fp);
    for (int i = 0; i < 6000; i++) {
        bool gpu = i % 5 == 4;
        fprintf(fp,
                "%s{\"name\": \"%s%d\", \"ph\": \"X\", \"ts\": %d, \"dur\": %d, \"tid\": %d, "
                "\"pid\": \"%s functions\", \"args\": {}}",
                i ? ",\n" : "\n", gpu ? "kernel_" : "aten::op", i % 13, i * 3, 1 + i % 7,
                gpu ? i % 2 : 1 + i % 3, gpu ? "CUDA" : "CPU");
        if (i % 5 == 3) /* the operator's arrow to the kernel that follows */
            fprintf(fp,
                    ",\n{\"name\": \"aten::op\", \"ph\": \"s\", \"ts\": %d, \"tid\": 1, "
                    "\"pid\": \"CPU functions\", \"id\": %d, \"cat\": \"cpu_to_cuda\", "
                    "\"args\": {}},\n{\"name\": \"kernel\", \"ph\": \"f\", \"ts\": %d, "
                    "\"tid\": 0, \"pid\": \"CUDA functions\", \"id\": %d, "
                    "\"cat\": \"cpu_to_cuda\", \"args\": {}}",
                    i * 3, i, i * 3 + 3, i);
    }
    fputs("\n]\n", fp);
    fclose(fp);
    gp_read_opts one = quiet_opts();
    one.threads = 1;
    gp_trace *a = NULL;
    gp_error e1 = {0};
    assert_int_equal(gp_trace_read(path, &one, &a, &e1), GP_OK);
    assert_int_equal(a->stats.by_kind[GP_EV_CPU_OP], 4800);
    assert_int_equal(a->stats.by_kind[GP_EV_KERNEL], 1200);
    assert_int_equal(a->stats.unknown_cat, 0);
    assert_int_equal(a->n_flows, 0);
    for (size_t initial = 2; initial <= 6; initial += 4) {
        gp__read_initial_pieces = initial;
        for (int threads = 2; threads <= 4; threads++) {
            gp_read_opts par = quiet_opts();
            par.threads = threads;
            gp_trace *b = NULL;
            gp_error e2 = {0};
            assert_int_equal(gp_trace_read(path, &par, &b, &e2), GP_OK);
            gp_error why = {0};
            if (!gp_trace_equal(a, b, &why))
                fail_msg("%zu cuts, %d threads: differs: %s", initial, threads, why.msg);
            assert_memory_equal(a->stats.by_kind, b->stats.by_kind, sizeof a->stats.by_kind);
            assert_int_equal(a->stats.unknown_cat, b->stats.unknown_cat);
            assert_int_equal(a->stats.flow_points, b->stats.flow_points);
            assert_true(b->stats.pieces >= 2);
            gp_trace_free(b);
        }
    }
    gp_trace_free(a);
    unlink(path);
    gp__read_steal_min = saved_min;
    gp__read_initial_pieces = saved_initial;
}

/* gp_trace_has_gpu looks at the GPU streams first, then at every other track: GPU work on a CPU
 * thread's track (the model allows any kind on any track) still counts, on a stream it is found,
 * and a trace of CPU work and an empty stream has none. */
static void gpu_work_found_on_any_track(void **state)
{
    (void)state;
    for (int where = 0; where < 3; where++) {
        gp_trace *t = NULL;
        uint32_t cpu, stream;
        assert_int_equal(gp_trace_create("has_gpu", &t), GP_OK);
        assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
        assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &stream), GP_OK);
        gp_event op = {.ts = 0, .dur = 10, .track = cpu, .kind = GP_EV_CPU_OP};
        assert_int_equal(gp_trace_add_event(t, &op), GP_OK);
        if (where < 2) {
            gp_event k = {.ts = 5, .dur = 3, .track = where ? stream : cpu, .kind = GP_EV_MEMSET};
            assert_int_equal(gp_trace_add_event(t, &k), GP_OK);
        }
        assert_int_equal(gp_trace_finish(t), GP_OK);
        assert_int_equal(gp_trace_has_gpu(t), where < 2);
        gp_trace_free(t);
    }
}

static void cpu_only_trace_has_no_gpu(void **state)
{
    const char *shared = getenv("GP_SHARED_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/traces/cpu_only.json.gz", shared ? shared : "../shared");
    if (access(path, R_OK) != 0)
        skip();
    gp_read_opts o = quiet_opts();
    gp_trace *t = NULL;
    assert_int_equal(gp_trace_read(path, &o, &t, NULL), GP_OK);
    assert_false(gp_trace_has_gpu(t));
    assert_int_equal(t->dist.rank, 34);
    gp_summary *s = NULL;
    assert_int_equal(gp_summary_compute(gp_traces_const(&t), 1, NULL, &s, NULL), GP_OK);
    assert_false(s->has_gpu);
    assert_int_equal(s->kinds[GP_EV_CPU_OP].calls, 4);
    assert_true(s->n_top > 0); /* CPU bottlenecks instead */
    gp_summary_free(s);
    gp_trace_free(t);
}

static void job_directory_ranks(void **state)
{
    const char *shared = getenv("GP_SHARED_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/traces/multirank8_dlrm_v100", shared ? shared : "../shared");
    if (access(path, R_OK) != 0)
        skip();
    gp_read_opts o = quiet_opts();
    gp_job *job = NULL;
    gp_error err = {0};
    assert_int_equal(gp_job_read(path, &o, &job, &err), GP_OK);
    assert_int_equal(job->n_ranks, 8);
    assert_false(job->ranks_from_file_order);
    for (size_t i = 0; i < 8; i++)
        assert_int_equal(job->ranks[i]->rank, (int)i);
    gp_job_free(job);

    /* Files without distributedInfo get their file-order index and the job says so. */
    char dir[] = "/tmp/gp_job_XXXXXX";
    assert_non_null(mkdtemp(dir));
    const char *doc = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\","
                      " \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}]}";
    for (int i = 0; i < 3; i++) {
        char f[4200];
        snprintf(f, sizeof f, "%s/r%d.json", dir, i);
        FILE *fp = fopen(f, "w");
        fputs(doc, fp);
        fclose(fp);
    }
    assert_int_equal(gp_job_read(dir, &o, &job, &err), GP_OK);
    assert_int_equal(job->n_ranks, 3);
    assert_true(job->ranks_from_file_order);
    assert_int_equal(job->ranks[2]->rank, 2);
    assert_true(job->ranks[2]->rank_from_file_order);
    gp_job_free(job);
    for (int i = 0; i < 3; i++) {
        char f[4200];
        snprintf(f, sizeof f, "%s/r%d.json", dir, i);
        unlink(f);
    }
    assert_int_equal(gp_job_read(dir, &o, &job, &err), GP_ENOENT);

    /* a.json says rank 1, b.json has no rank: b must get 0, not also 1. */
    char fa[4200], fb[4200];
    snprintf(fa, sizeof fa, "%s/a.json", dir);
    snprintf(fb, sizeof fb, "%s/b.json", dir);
    FILE *fp = fopen(fa, "w");
    fprintf(fp, "{\"distributedInfo\": {\"rank\": 1}, %s", doc + 1);
    fclose(fp);
    fp = fopen(fb, "w");
    fputs(doc, fp);
    fclose(fp);
    assert_int_equal(gp_job_read(dir, &o, &job, &err), GP_OK);
    assert_int_equal(job->n_ranks, 2);
    assert_int_equal(job->ranks[0]->rank, 0);
    assert_true(job->ranks[0]->rank_from_file_order); /* b.json */
    assert_int_equal(job->ranks[1]->rank, 1);
    assert_false(job->ranks[1]->rank_from_file_order); /* a.json keeps its own rank */
    gp_job_free(job);
    unlink(fa);
    unlink(fb);
    rmdir(dir);
}

/* ---- builder and summary ------------------------------------------------------------------ */

static void builder_sorts_and_summary_stats(void **state)
{
    gp_trace *t = NULL;
    assert_int_equal(gp_trace_create("unit", &t), GP_OK);
    uint32_t tr;
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &tr), GP_OK);
    gp_strid a, b;
    assert_int_equal(gp_trace_intern(t, "void ns::gemm<float, 4>(float*, int)", 36, &a), GP_OK);
    assert_int_equal(gp_trace_intern(t, "copy", 4, &b), GP_OK);
    /* durations 10..50 for gemm (added out of order), 100 for copy */
    int64_t durs[] = {30, 10, 50, 20, 40};
    for (int i = 0; i < 5; i++) {
        gp_event ev = {
            .ts = 1000 - i * 100, .dur = durs[i], .name = a, .track = tr, .kind = GP_EV_KERNEL};
        assert_int_equal(gp_trace_add_event(t, &ev), GP_OK);
    }
    gp_event cp = {.ts = 5000, .dur = 100, .name = b, .track = tr, .kind = GP_EV_KERNEL};
    assert_int_equal(gp_trace_add_event(t, &cp), GP_OK);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    for (size_t i = 1; i < t->tracks[tr].n_events; i++)
        assert_true(t->tracks[tr].events[i - 1].ts <= t->tracks[tr].events[i].ts);

    gp_summary *s = NULL;
    assert_int_equal(gp_summary_compute(gp_traces_const(&t), 1, NULL, &s, NULL), GP_OK);
    const gp_kind_summary *k = &s->kinds[GP_EV_KERNEL];
    assert_int_equal(k->n_rows, 2);
    const gp_name_stats *g = &k->rows[0]; /* gemm: total 150 > copy's 100 */
    assert_string_equal(g->name, "void ns::gemm<float, 4>(float*, int)");
    assert_int_equal(g->calls, 5);
    assert_int_equal(g->total, 150);
    assert_int_equal(g->min, 10);
    assert_int_equal(g->max, 50);
    assert_float_equal(g->mean, 30.0, 1e-9);
    assert_float_equal(g->stddev, 14.142135623730951, 1e-9); /* population sd of 10..50 */
    assert_float_equal(g->p50, 30.0, 1e-9);
    assert_float_equal(g->p95, 48.0, 1e-9); /* 40 + 0.8 * 10, linear interpolation */
    assert_float_equal(g->share, 0.6, 1e-9);
    assert_int_equal(s->gpu_time, 250);
    char shortname[64];
    gp_shorten_name(g->name, 20, shortname, sizeof shortname);
    assert_string_equal(shortname, "ns::gemm<...>");
    gp_shorten_name("Memcpy HtoD (Pageable -> Device)", 20, shortname, sizeof shortname);
    assert_string_equal(shortname, "Memcpy Ht... Device)");
    gp_shorten_name("void at::native::(anonymous namespace)::spin_kernel(long)", 30, shortname,
                    sizeof shortname);
    assert_string_equal(shortname, "{anon}::spin_kernel");
    gp_summary_free(s);
    gp_trace_free(t);
}

/* Writes data[0, len) to /tmp/gp-test-<tag>.<pid>.json, its path in path[0, size). */
static void write_temp(char *path, size_t size, const char *tag, const char *data, size_t len)
{
    snprintf(path, size, "/tmp/gp-test-%s.%d.json", tag, (int)getpid());
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(data, 1, len, fp), len);
    assert_int_equal(fclose(fp), 0);
}

/* The reader remembers pid and tid values by their 8 bytes (kineto_events.c, parse_idval): values
 * that share a prefix ("1" and "12"), that differ only after the number, that are too long to be
 * remembered (8 digits), negative, strings, followed by ',' or '}' or a newline, and more distinct
 * tids than it remembers (so entries are replaced) all land on their own track, read from memory
 * and from a 2.6 MB file through 1 MiB reads (GP_READ_MMAP=0), where values straddle the reads. */
static void remembered_pid_and_tid_values_land_on_their_tracks(void **state)
{
    (void)state;
    static const char *const pid[] = {"1", "12", "123", "1234567", "-5", "7", "1", "\"42\"", "1"};
    static const char *const tid[] = {"1",  "123", "1234567",      "12345678", "0",
                                      "70", "12",  "\"stream 7\"", "1\n"};
    static const int64_t want_pid[] = {1, 12, 123, 1234567, -5, 7, 1, 42, 1};
    static const int64_t want_tid[] = {1, 123, 1234567, 12345678, 0, 70, 12, 7, 1};
    enum { N_KINDS = sizeof pid / sizeof *pid, N_EVENTS = 30000 };
    size_t cap = 100u * N_EVENTS + 64, len = 0;
    char *doc = malloc(cap);
    assert_non_null(doc);
    len += (size_t)snprintf(doc, cap, "{\"traceEvents\": [");
    uint64_t seed = 12345;
    for (int i = 0; i < N_EVENTS; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        int k = (int)((seed >> 33) % N_KINDS);
        const char *sep = i ? (k % 2 ? "," : ",\n") : "";
        if (k == 5) /* tid last, before '}' */
            len += (size_t)snprintf(doc + len, cap - len,
                                    "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"p%d\", "
                                    "\"ts\": %d, \"dur\": 1, \"pid\": %s, \"tid\": %s}",
                                    sep, k, i, pid[k], tid[k]);
        else
            len += (size_t)snprintf(doc + len, cap - len,
                                    "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"p%d\", "
                                    "\"pid\": %s%s\"tid\": %s, \"ts\": %d, \"dur\": 1}",
                                    sep, k, pid[k], k % 3 ? ", " : ",", tid[k], i);
    }
    len += (size_t)snprintf(doc + len, cap - len, "]}");
    assert_true(len > (2u << 20));
    char path[128];
    write_temp(path, sizeof path, "idmemo", doc, len);
    for (int way = 0; way < 2; way++) {
        gp_read_opts o = quiet_opts();
        gp_trace *t = NULL;
        gp_error err = {0};
        if (way == 0) {
            assert_int_equal(gp_trace_read_buffer(doc, len, "ids.json", &o, &t, &err), GP_OK);
        } else {
            setenv("GP_READ_MMAP", "0", 1);
            gp_status st = gp_trace_read(path, &o, &t, &err);
            unsetenv("GP_READ_MMAP");
            assert_int_equal(st, GP_OK);
        }
        size_t seen = 0;
        for (size_t i = 0; i < t->n_tracks; i++)
            for (size_t j = 0; j < t->tracks[i].n_events; j++) {
                const char *name = gp_trace_str(t, t->tracks[i].events[j].name);
                assert_true(name[0] == 'p');
                int k = atoi(name + 1);
                assert_true(k >= 0 && k < N_KINDS);
                if (t->tracks[i].pid != want_pid[k] || t->tracks[i].tid != want_tid[k])
                    fail_msg("way %d: p%d on pid %lld tid %lld", way, k,
                             (long long)t->tracks[i].pid, (long long)t->tracks[i].tid);
                seen++;
            }
        assert_int_equal(seen, N_EVENTS);
        gp_trace_free(t);
    }
    unlink(path);
    free(doc);
}

/* The builder's arrays grow past every first capacity (the track index's 64 slots, GP_PUSH's 16
 * elements, a track's first 4 events, the meta index from 16 members), with tracks added while
 * earlier tracks already hold events; every element stays where it was put, and the private half
 * (model_internal.h) keeps each capacity at least its count. */
static void builder_grows_every_array_past_its_capacity(void **state)
{
    (void)state;
    enum { TRACKS = 300, ROUNDS = 9 };
    gp_trace *t = NULL;
    assert_int_equal(gp_trace_create("grow", &t), GP_OK);
    uint32_t idx[TRACKS];
    for (int r = 0; r < ROUNDS; r++)
        for (int k = 0; k < TRACKS; k++) {
            /* round 0 creates the track; later rounds find it again */
            uint32_t got;
            assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1000 + k, &got), GP_OK);
            if (r == 0)
                idx[k] = got;
            assert_int_equal(got, idx[k]);
            if (k % (r + 1))
                continue; /* tracks of uneven lengths */
            gp_gpu_info g;
            gp_gpu_info_init(&g);
            g.bytes = k * 100 + r;
            gp_gpu_ext x; /* every other track's copies have a wait too */
            gp_gpu_ext_init(&x);
            x.wait_on_stream = k % 2 ? -1 : k * 100 + r;
            assert_int_equal(gp_trace_add_gpu_ext(t, &x, &g.ext), GP_OK);
            gp_event ev = {.ts = 10 * r, .dur = 1, .track = got, .kind = GP_EV_MEMCPY};
            assert_int_equal(gp_trace_add_gpu_info(t, &g, &ev.extra), GP_OK);
            assert_int_equal(gp_trace_add_event(t, &ev), GP_OK);
        }
    char key[32], val[32];
    for (int m = 0; m < 40; m++) {
        snprintf(key, sizeof key, "k%d", m % 30); /* 10 replacements, after the index exists */
        snprintf(val, sizeof val, "%d", m);
        assert_int_equal(gp_trace_set_meta(t, key, val), GP_OK);
    }
    assert_int_equal(gp_trace_finish(t), GP_OK);
    assert_int_equal(t->n_tracks, TRACKS);
    assert_int_equal(t->n_meta, 30);
    assert_string_equal(gp_trace_str(t, t->meta[5].value_json), "35");
    assert_string_equal(gp_trace_str(t, t->meta[29].value_json), "29");
    const gp__trace_impl *m = gp__trace_impl_const(t);
    assert_true(m->cap_tracks >= t->n_tracks && m->cap_events_room >= t->n_tracks);
    assert_true(m->cap_gpu_info >= t->n_gpu_info && m->cap_meta >= t->n_meta);
    assert_true(m->cap_gpu_ext >= t->n_gpu_ext && t->n_gpu_ext > 0 && t->n_gpu_ext < t->n_gpu_info);
    size_t events = 0;
    for (int k = 0; k < TRACKS; k++) {
        const gp_track *tr = &t->tracks[idx[k]];
        size_t want = 0;
        for (int r = 0; r < ROUNDS; r++)
            want += k % (r + 1) == 0;
        assert_int_equal(tr->n_events, want);
        assert_true(m->cap_events[idx[k]] >= tr->n_events);
        for (size_t j = 0, r = 0; j < tr->n_events; j++, r++) {
            while (k % (int)(r + 1))
                r++;
            assert_int_equal(tr->events[j].ts, 10 * (gp_ns)r);
            assert_int_equal(gp_event_gpu_info(t, &tr->events[j])->bytes, k * 100 + (int64_t)r);
            assert_int_equal(gp_event_gpu_ext(t, &tr->events[j])->wait_on_stream,
                             k % 2 ? -1 : k * 100 + (int64_t)r);
        }
        events += tr->n_events;
    }
    assert_int_equal(gp_trace_event_count(t), events);
    assert_int_equal(t->n_gpu_info, events);
    assert_string_equal(gp_trace_str(t, t->source), "grow");
    assert_string_equal(gp_trace_str(t, (gp_strid)gp_trace_str_count(t) + 1), "");
    gp_trace_free(t);
}

/* The sync and collective fields live in a gp_gpu_ext record only when one of them is set: a
 * blank record takes no room (ext 0), and every reader of them sees the blank record for GPU work
 * without one, for events without GPU info, and for an index out of range. */
static void gpu_ext_records_only_what_is_set(void **state)
{
    (void)state;
    gp_trace *t = NULL;
    assert_int_equal(gp_trace_create("ext", &t), GP_OK);
    uint32_t track;
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &track), GP_OK);
    gp_gpu_ext x;
    gp_gpu_ext_init(&x);
    assert_true(gp_gpu_ext_is_blank(&x));
    gp_gpu_info plain, coll;
    gp_gpu_info_init(&plain);
    gp_gpu_info_init(&coll);
    plain.ext = 99; /* overwritten: a blank record stores nothing */
    assert_int_equal(gp_trace_add_gpu_ext(t, &x, &plain.ext), GP_OK);
    assert_int_equal(plain.ext, 0);
    assert_int_equal(t->n_gpu_ext, 0);
    x.group_size = 8; /* any one field makes a record */
    assert_false(gp_gpu_ext_is_blank(&x));
    assert_int_equal(gp_trace_intern(t, "allreduce", 9, &x.collective), GP_OK);
    assert_int_equal(gp_trace_add_gpu_ext(t, &x, &coll.ext), GP_OK);
    assert_int_equal(coll.ext, 1);
    assert_int_equal(t->n_gpu_ext, 1);
    gp_event a = {.ts = 1, .dur = 1, .track = track, .kind = GP_EV_KERNEL};
    gp_event b = a, cpu = {.ts = 1, .dur = 1, .kind = GP_EV_CPU_OP, .extra = 1};
    assert_int_equal(gp_trace_add_gpu_info(t, &plain, &a.extra), GP_OK);
    assert_int_equal(gp_trace_add_gpu_info(t, &coll, &b.extra), GP_OK);
    const gp_gpu_ext *xa = gp_event_gpu_ext(t, &a), *xb = gp_event_gpu_ext(t, &b);
    assert_true(gp_gpu_ext_is_blank(xa));
    assert_int_equal(xa->in_msg_nelems, -1);
    assert_int_equal(xb->group_size, 8);
    assert_string_equal(gp_trace_str(t, xb->collective), "allreduce");
    assert_int_equal(xb->wait_on_stream, -1); /* the fields not set stay absent */
    assert_true(gp_gpu_ext_is_blank(gp_event_gpu_ext(t, &cpu)));
    assert_true(gp_gpu_ext_is_blank(gp_gpu_info_ext(t, NULL)));
    gp_gpu_info stray = coll;
    stray.ext = 2; /* past n_gpu_ext */
    assert_true(gp_gpu_ext_is_blank(gp_gpu_info_ext(t, &stray)));
    /* each field alone makes a record, read back as set */
    for (int f = 0; f < 11; f++) {
        gp_gpu_ext one;
        gp_gpu_ext_init(&one);
        int64_t *ints[] = {&one.wait_on_stream, &one.wait_on_event_corr, &one.in_msg_nelems,
                           &one.out_msg_nelems};
        gp_strid *ids[] = {&one.sync_kind, &one.collective, &one.dtype,
                           &one.pg_name,   &one.pg_desc,    &one.pg_ranks};
        if (f < 4)
            *ints[f] = 1000 + f;
        else if (f == 4)
            one.group_size = 1000 + f;
        else
            *ids[f - 5] = xb->collective;
        assert_false(gp_gpu_ext_is_blank(&one));
        uint32_t at = 0;
        assert_int_equal(gp_trace_add_gpu_ext(t, &one, &at), GP_OK);
        assert_int_equal(at, t->n_gpu_ext);
        assert_memory_equal(gp_gpu_info_ext(t, &(gp_gpu_info){.ext = at}), &one, sizeof one);
    }
    assert_int_equal(t->n_gpu_ext, 12);
    gp_trace_free(t);
}

/* With a reader's progress set (gp__trace_set_progress), an array past GP__GROW_BY_PROGRESS bytes
 * grows at once to twice the size the progress predicts (at most 32 times its count) instead of
 * doubling; without it, or below the threshold, it doubles; gp_trace_finish gives back what is left
 * over, and every element stays where it was put. */
static void growth_follows_the_reads_progress(void **state)
{
    (void)state;
    gp_trace *t = NULL;
    assert_int_equal(gp_trace_create("progress", &t), GP_OK);
    const gp__trace_impl *m = gp__trace_impl_const(t);
    uint32_t a, b;
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &a), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 8, &b), GP_OK);
    gp__trace_set_progress(t, 1, 10); /* a tenth read: ten times as many to come */
    /* Each growth of the events and of the side table: below the threshold the room doubles; the
     * first past it goes to the prediction, 10 x 2 x the count, and the next is far away. */
    size_t ev_grown = 0, gi_grown = 0, n = 0;
    while (!ev_grown || !gi_grown) {
        size_t ev_cap = m->cap_events[a], gi_cap = m->cap_gpu_info;
        gp_gpu_info g;
        gp_gpu_info_init(&g);
        g.bytes = (int64_t)n;
        gp_gpu_ext x; /* the second-level side table grows and is given back the same way */
        gp_gpu_ext_init(&x);
        x.wait_on_stream = (int64_t)n;
        assert_int_equal(gp_trace_add_gpu_ext(t, &x, &g.ext), GP_OK);
        gp_event ev = {.ts = (gp_ns)n, .dur = 1, .track = a, .kind = GP_EV_MEMCPY};
        assert_int_equal(gp_trace_add_gpu_info(t, &g, &ev.extra), GP_OK);
        assert_int_equal(gp_trace_add_event(t, &ev), GP_OK);
        n++;
        if (m->cap_events[a] != ev_cap) {
            if (n * sizeof(gp_event) < GP__GROW_BY_PROGRESS) {
                assert_int_equal(m->cap_events[a], ev_cap * 2);
            } else {
                assert_int_equal(ev_grown, 0); /* once */
                assert_int_equal(m->cap_events[a], n * 20);
                ev_grown = n;
            }
        }
        if (m->cap_gpu_info != gi_cap) {
            if (n * sizeof(gp_gpu_info) < GP__GROW_BY_PROGRESS) {
                assert_int_equal(m->cap_gpu_info, gi_cap ? gi_cap * 2 : 16);
            } else {
                assert_int_equal(gi_grown, 0);
                assert_int_equal(m->cap_gpu_info, n * 20);
                gi_grown = n;
            }
        }
    }
    /* unknown progress: doubling again, whatever the size */
    gp__trace_set_progress(t, 0, 0);
    size_t big = 40000; /* room 65,536 after doubling: 1.2 MB spare */
    for (size_t i = 0; i < big; i++) {
        gp_event ev = {.ts = (gp_ns)i, .dur = 2, .track = b, .kind = GP_EV_KERNEL};
        assert_int_equal(gp_trace_add_event(t, &ev), GP_OK);
    }
    assert_true(m->cap_events[b] < 2 * big);
    size_t cap_b = m->cap_events[b];
    assert_true(cap_b - big >= GP__GROW_BY_PROGRESS / sizeof(gp_event)); /* over 1 MiB spare */
    assert_int_equal(gp_trace_finish(t), GP_OK);
    assert_true(m->grow_hint == 0);
    /* given back: the room past the count was over GP__GROW_BY_PROGRESS bytes and more than
     * doubling leaves; what doubling left (track b) stays, for a trace that grows after finish */
    assert_int_equal(m->cap_events[a], t->tracks[a].n_events);
    assert_int_equal(m->cap_gpu_info, t->n_gpu_info);
    assert_int_equal(t->n_gpu_ext, t->n_gpu_info);
    assert_true(t->n_gpu_ext * sizeof(gp_gpu_ext) >
                GP__GROW_BY_PROGRESS); /* it took a prediction */
    assert_int_equal(m->cap_gpu_ext, t->n_gpu_ext);
    assert_int_equal(m->cap_events[b], cap_b);
    for (size_t i = 0; i < t->tracks[a].n_events; i++) {
        assert_int_equal(t->tracks[a].events[i].ts, (gp_ns)i);
        assert_int_equal(gp_event_gpu_info(t, &t->tracks[a].events[i])->bytes, (int64_t)i);
        assert_int_equal(gp_event_gpu_ext(t, &t->tracks[a].events[i])->wait_on_stream, (int64_t)i);
    }
    gp_trace_free(t);

    /* the cap: a hundredth read predicts 200 x the count; room for 32 x is what it gets */
    assert_int_equal(gp_trace_create("progress cap", &t), GP_OK);
    m = gp__trace_impl_const(t);
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &a), GP_OK);
    gp__trace_set_progress(t, 1, 100);
    size_t grew_at = 0;
    for (n = 0; !grew_at; n++) {
        size_t before = m->cap_events[a];
        gp_event ev = {.ts = (gp_ns)n, .dur = 1, .track = a, .kind = GP_EV_CPU_OP};
        assert_int_equal(gp_trace_add_event(t, &ev), GP_OK);
        if (m->cap_events[a] != before && (n + 1) * sizeof(gp_event) >= GP__GROW_BY_PROGRESS)
            grew_at = n + 1;
    }
    assert_int_equal(m->cap_events[a], 32 * grew_at);
    gp_trace_free(t);
}

/* The readers tell the model their progress: an 8 MB file of one track read with one thread through
 * read(2), mapped, and on two threads in pieces (each piece its progress into the piece) grows
 * the track by the prediction at least once, and reads the same events every way. */
static void reads_tell_the_model_their_progress(void **state)
{
    (void)state;
    enum { N_EVENTS = 100000 }; /* 4.8 MB of events on one track, 2.4 MB in each of two pieces */
    size_t cap = 96u * N_EVENTS + 64, len = 0;
    char *doc = malloc(cap);
    assert_non_null(doc);
    len += (size_t)snprintf(doc, cap, "{\"traceEvents\": [");
    for (int i = 0; i < N_EVENTS; i++)
        len += (size_t)snprintf(doc + len, cap - len,
                                "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op%d\", "
                                "\"pid\": 1, \"tid\": 1, \"ts\": %d, \"dur\": 1}",
                                i ? ",\n" : "", i % 7, i);
    len += (size_t)snprintf(doc + len, cap - len, "]}");
    char path[128];
    write_temp(path, sizeof path, "progress", doc, len);
    static const char *const way_name[] = {"read(2)", "mapped", "two threads"};
    for (int way = 0; way < 3; way++) {
        gp_read_opts o = quiet_opts();
        o.threads = way == 2 ? 2 : 1;
        o.map = way == 1;
        o.no_map = way != 1;
        unsigned long before = atomic_load(&gp__trace_progress_growths);
        gp_trace *t = NULL;
        gp_error err = {0};
        assert_int_equal(gp_trace_read(path, &o, &t, &err), GP_OK);
        if (atomic_load(&gp__trace_progress_growths) == before)
            fail_msg("%s: no growth took the prediction", way_name[way]);
        assert_int_equal(t->stats.mapped, way == 1);
        if (way == 2)
            assert_int_equal(t->stats.threads_used, 2);
        assert_int_equal(t->n_tracks, 1);
        assert_int_equal(t->tracks[0].n_events, N_EVENTS);
        for (size_t j = 0; j < N_EVENTS; j++)
            assert_int_equal(t->tracks[0].events[j].ts, (gp_ns)j * 1000);
        gp_trace_free(t);
    }
    unlink(path);
    free(doc);
}

/* gp__sort_events against a reference: qsort on (ts, -dur, original index), i.e. the stable order.
 * The `extra` field carries the original index. Shapes: sorted, reversed, random with many ties,
 * k sorted runs concatenated (replicated traces), runs that overlap in time (Kineto blocks), a few
 * displaced elements, lengths around the run-extension size. */
static int cmp_stable_ref(const void *a, const void *b)
{
    const gp_event *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->dur != y->dur)
        return x->dur > y->dur ? -1 : 1;
    return (x->extra > y->extra) - (x->extra < y->extra);
}

static void check_sort_shape(gp_event *ev, size_t n, const char *shape)
{
    gp_event *ref = malloc((n ? n : 1) * sizeof *ref);
    assert_non_null(ref);
    for (size_t i = 0; i < n; i++)
        ev[i].extra = (uint32_t)i;
    memcpy(ref, ev, n * sizeof *ref);
    qsort(ref, n, sizeof *ref, cmp_stable_ref);
    gp__sort_events(ev, n);
    for (size_t i = 0; i < n; i++)
        if (ev[i].ts != ref[i].ts || ev[i].dur != ref[i].dur || ev[i].extra != ref[i].extra)
            fail_msg("%s, n=%zu: position %zu differs (ts %lld/%lld, index %u/%u)", shape, n, i,
                     (long long)ev[i].ts, (long long)ref[i].ts, ev[i].extra, ref[i].extra);
    free(ref);
}

static void event_sort_is_stable_and_adaptive(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 2, 31, 32, 33, 64, 100, 1000, 20000};
    uint64_t seed = 88172645463325252ULL;
#define NEXT_RAND() (seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17, seed)
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        size_t n = sizes[z];
        gp_event *ev = calloc(n ? n : 1, sizeof *ev);
        assert_non_null(ev);
        for (int shape = 0; shape < 6; shape++) {
            size_t runs = 7;
            for (size_t i = 0; i < n; i++) {
                gp_event *e = &ev[i];
                e->dur = (gp_ns)(NEXT_RAND() % 4);
                switch (shape) {
                case 0: /* sorted, with ties */
                    e->ts = (gp_ns)(i / 3);
                    break;
                case 1: /* reversed */
                    e->ts = (gp_ns)(n - i);
                    break;
                case 2: /* random, many ties */
                    e->ts = (gp_ns)(NEXT_RAND() % (n / 4 + 1));
                    break;
                case 3: /* `runs` sorted copies, each later than the last */
                    e->ts = (gp_ns)(i % (n / runs + 1) + 1000000 * (i / (n / runs + 1)));
                    break;
                case 4: /* sorted runs that overlap in time */
                    e->ts = (gp_ns)((i % (n / runs + 1)) * 10 + i / (n / runs + 1));
                    break;
                default: /* sorted, then every 97th element displaced */
                    e->ts = (gp_ns)(i % 97 == 5 ? NEXT_RAND() % (n + 1) : i);
                    break;
                }
            }
            static const char *names[] = {"sorted", "reversed",         "random",
                                          "copies", "overlapping runs", "displaced"};
            check_sort_shape(ev, n, names[shape]);
        }
        free(ev);
    }
#undef NEXT_RAND
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(times_are_exact_nanoseconds),
        cmocka_unit_test(absolute_times_keep_spans_in_int64),
        cmocka_unit_test(int32_fields_saturate),
        cmocka_unit_test(gpu_device_beyond_int32_keeps_its_track),
        cmocka_unit_test(counter_members_are_series),
        cmocka_unit_test(counter_samples_of_one_time_keep_file_order),
        cmocka_unit_test(event_arg_int_finds_members),
        cmocka_unit_test(args_integers_read_alike_on_both_paths),
        cmocka_unit_test(legacy_schema_is_read),
        cmocka_unit_test(legacy_autograd_profiler_format_is_read),
        cmocka_unit_test(bare_array_string_ids_and_stream_minus_one),
        cmocka_unit_test(suspect_values_are_counted_not_fatal),
        cmocka_unit_test(escapes_and_unicode),
        cmocka_unit_test(element_longer_than_a_chunk),
        cmocka_unit_test(malformed_corpus_gives_clear_errors),
        cmocka_unit_test(missing_file_is_not_found),
        cmocka_unit_test(gpu_records_map_like_kineto),
        cmocka_unit_test(reader_registry_sniffs_and_names),
        cmocka_unit_test(writer_rank_escaping_flows),
        cmocka_unit_test(round_trip_every_shared_trace),
        cmocka_unit_test(uncategorised_event_on_a_legacy_pid_round_trips),
        cmocka_unit_test(reading_in_tiny_pieces_gives_the_same_model),
        cmocka_unit_test(two_thread_read_gives_the_same_model),
        cmocka_unit_test(two_thread_read_rejects_what_one_thread_rejects),
        cmocka_unit_test(time_out_of_range_names_its_offset),
        cmocka_unit_test(stolen_pieces_read_like_one_thread),
        cmocka_unit_test(legacy_format_pieces_read_like_one_thread),
        cmocka_unit_test(gpu_work_found_on_any_track),
        cmocka_unit_test(cpu_only_trace_has_no_gpu),
        cmocka_unit_test(job_directory_ranks),
        cmocka_unit_test(builder_sorts_and_summary_stats),
        cmocka_unit_test(builder_grows_every_array_past_its_capacity),
        cmocka_unit_test(growth_follows_the_reads_progress),
        cmocka_unit_test(gpu_ext_records_only_what_is_set),
        cmocka_unit_test(reads_tell_the_model_their_progress),
        cmocka_unit_test(remembered_pid_and_tid_values_land_on_their_tracks),
        cmocka_unit_test(event_sort_is_stable_and_adaptive),
    };
    /* GP_TEST_FILTER (a cmocka pattern) runs a subset: the ThreadSanitizer stage runs the parallel
     * reads only (tests/trace/CMakeLists.txt). */
    if (getenv("GP_TEST_FILTER"))
        cmocka_set_test_filter(getenv("GP_TEST_FILTER"));
    return gp_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
