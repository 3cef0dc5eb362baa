/* Reader hardening (issue #21): gzip input (memory bounded whatever the decompressed size, errors
 * with compressed offsets, several members, trailing bytes), the element size cap, the leniencies
 * of docs/trace.md ("What the reader accepts": a BOM, quoted times; leading zeros refused), and the
 * track index at many tracks (correctness here; speed in bench/trace/bench_tracks), and paths that
 * are not regular files (FIFOs, devices) refused without blocking. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "core/input.h"
#include "gpuprof/trace.h"

static const char ev_a[] =
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}";
static const char ev_b[] =
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":1}";

static gp_read_opts quiet_opts(void)
{
    gp_read_opts o;
    gp_read_opts_init(&o);
    o.quiet = true;
    return o;
}

/* A gzip file (one member) of head, `blanks` bytes of blank, then tail. */
static void write_gz_blanks(const char *path, const char *head, size_t blanks, const char *tail)
{
    gzFile gz = gzopen(path, "wb9");
    assert_non_null(gz);
    gzputs(gz, head);
    static char block[1 << 16];
    memset(block, ' ', sizeof block);
    for (size_t done = 0; done < blanks;) {
        size_t n = blanks - done < sizeof block ? blanks - done : sizeof block;
        assert_int_equal(gzwrite(gz, block, (unsigned)n), (int)n);
        done += n;
    }
    gzputs(gz, tail);
    assert_int_equal(gzclose(gz), Z_OK);
}

static gp_status read_path(const char *path, gp_trace **t, gp_error *err)
{
    gp_read_opts o = quiet_opts();
    *t = NULL;
    return gp_trace_read(path, &o, t, err);
}

static void tmp_path(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "/tmp/gp-test-limits.%d.%s", (int)getpid(), name);
}

/* 100 MiB of blanks between two events (more than the 64 MiB element cap): read, because blanks
 * between elements are dropped, not kept in the buffer. The same blanks inside one event: refused
 * with the cap's message, not held. */
static void gzip_bomb_of_blanks(void **state)
{
    (void)state;
    char path[128], head[256], tail[256];
    tmp_path(path, sizeof path, "bomb.json.gz");
    snprintf(head, sizeof head, "{\"traceEvents\":[%s,", ev_a);
    snprintf(tail, sizeof tail, "%s]}", ev_b);
    write_gz_blanks(path, head, (size_t)100 << 20, tail);
    gp_trace *t;
    gp_error err = {0};
    assert_int_equal(read_path(path, &t, &err), GP_OK);
    assert_int_equal(gp_trace_event_count(t), 2);
    gp_trace_free(t);

    write_gz_blanks(path, "{\"traceEvents\":[{\"ph\":\"X\",", (size_t)100 << 20,
                    "\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}]}");
    assert_int_equal(read_path(path, &t, &err), GP_ELIMIT);
    assert_null(t);
    assert_non_null(strstr(err.msg, "longer than 64 MiB"));
    assert_non_null(strstr(err.msg, ": byte "));
    unlink(path);
}

/* Corruptions of a gzip file: each error names the compressed offset and what failed. */
static void gzip_errors_name_compressed_offset(void **state)
{
    (void)state;
    char path[128], text[4096];
    tmp_path(path, sizeof path, "corrupt.json.gz");
    snprintf(text, sizeof text, "{\"traceEvents\":[%s,%s]}", ev_a, ev_b);
    uLongf cap = compressBound((uLong)strlen(text)) + 64;
    unsigned char *gz = malloc(cap);
    assert_non_null(gz);
    /* A gzip member with zlib's gz* API through a memory file would need fmemopen: write one. */
    gzFile f = gzopen(path, "wb");
    gzputs(f, text);
    gzclose(f);
    FILE *fp = fopen(path, "rb");
    size_t n = fread(gz, 1, cap, fp);
    fclose(fp);
    static const struct {
        long at; /* byte to flip (from the end when negative), or 0: truncate by 3 */
        const char *what;
        long reported; /* the offset the message must give (from the end when negative) */
    } cases[] = {
        {-8, "CRC-32 mismatch", -8},
        {-3, "length mismatch", -4},
        {0, "truncated gzip stream", -3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char *copy = malloc(n);
        memcpy(copy, gz, n);
        size_t len = n;
        if (cases[i].at)
            copy[(long)n + cases[i].at] ^= 0x5a;
        else
            len -= 3;
        fp = fopen(path, "wb");
        fwrite(copy, 1, len, fp);
        fclose(fp);
        free(copy);
        gp_trace *t;
        gp_error err = {0};
        assert_int_equal(read_path(path, &t, &err), GP_EPARSE);
        char want[64];
        snprintf(want, sizeof want, ": byte %ld of the compressed file",
                 (long)n + cases[i].reported);
        if (!strstr(err.msg, cases[i].what) || !strstr(err.msg, want))
            fail_msg("case %zu: \"%s\" lacks \"%s\" or \"%s\"", i, err.msg, cases[i].what, want);
    }
    /* Trailing bytes after the data: read, counted with their offset. Two members: both read. */
    fp = fopen(path, "wb");
    fwrite(gz, 1, n, fp);
    fputs("garbage", fp);
    fclose(fp);
    gp_trace *t;
    gp_error err = {0};
    assert_int_equal(read_path(path, &t, &err), GP_OK);
    assert_int_equal(t->stats.gzip_trailing_bytes, 7);
    assert_int_equal(t->stats.gzip_trailing_at, n);
    gp_trace_free(t);
    f = gzopen(path, "wb");
    gzputs(f, "{\"traceEvents\":[");
    gzclose(f);
    f = gzopen(path, "ab");
    gzputs(f, ev_a);
    gzputs(f, "]}");
    gzclose(f);
    assert_int_equal(read_path(path, &t, &err), GP_OK);
    assert_int_equal(gp_trace_event_count(t), 1);
    assert_int_equal(t->stats.gzip_trailing_bytes, 0);
    gp_trace_free(t);
    free(gz);
    unlink(path);
}

/* The first buffer of a gzip read is sized by the last trailer's ISIZE (core/input.c size_hint).
 * With two members the last one's ISIZE (its 2,000-letter event and "]}") understates the text
 * by far: the first member's 100 events and 200 KB name must still be read whole, the buffer
 * growing past its 64 KiB start. A hint under half the compressed size is no hint (an ISIZE that
 * wrapped past 4 GiB): unknown, the full first buffer. */
static void gzip_size_hint_that_understates(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "hint.json.gz");
    gzFile f = gzopen(path, "wb9");
    assert_non_null(f);
    gzputs(f, "{\"traceEvents\":[");
    for (int i = 0; i < 100; i++)
        gzprintf(f,
                 "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op%d\",\"pid\":1,\"tid\":1,"
                 "\"ts\":%d,\"dur\":1},",
                 i, 10 * i);
    gzputs(f, "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"");
    static char longname[200000];
    memset(longname, 'n', sizeof longname);
    assert_int_equal(gzwrite(f, longname, sizeof longname), (int)sizeof longname);
    gzputs(f, "\",\"pid\":1,\"tid\":1,\"ts\":4000,\"dur\":1},");
    assert_int_equal(gzclose(f), Z_OK);
    char last[2200]; /* letters that deflate cannot shrink much */
    int n = snprintf(last, sizeof last, "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"");
    uint32_t x = 12345;
    for (int i = 0; i < 2000; i++) {
        x = x * 1103515245u + 12345u;
        last[n++] = (char)('a' + (x >> 16) % 26);
    }
    n += snprintf(last + n, sizeof last - (size_t)n,
                  "\",\"pid\":1,\"tid\":1,\"ts\":5000,\"dur\":1}]}");
    f = gzopen(path, "ab9");
    assert_int_equal(gzwrite(f, last, (unsigned)n), n);
    assert_int_equal(gzclose(f), Z_OK);

    gp__input in;
    gp_error err = {0};
    assert_int_equal(gp__input_open(&in, path, false, &err), GP_OK);
    assert_true(in.compressed);
    assert_int_equal(in.size_hint, (uint64_t)n); /* the last member's text only */
    gp__input_close(&in);

    gp_trace *t;
    assert_int_equal(read_path(path, &t, &err), GP_OK);
    assert_int_equal(gp_trace_event_count(t), 102);
    size_t longest = 0;
    for (size_t k = 0; k < t->n_tracks; k++)
        for (size_t i = 0; i < t->tracks[k].n_events; i++) {
            size_t len = gp_trace_strlen(t, t->tracks[k].events[i].name);
            longest = len > longest ? len : longest;
        }
    assert_int_equal(longest, sizeof longname);
    gp_trace_free(t);

    /* A trailer stating 2 bytes behind a long member: no hint. */
    f = gzopen(path, "wb9");
    gzputs(f, "{\"traceEvents\":[");
    gzwrite(f, last, (unsigned)n - 2);
    gzputs(f, ",");
    gzclose(f);
    f = gzopen(path, "ab9");
    gzputs(f, "]}");
    gzclose(f);
    assert_int_equal(gp__input_open(&in, path, false, &err), GP_OK);
    assert_int_equal(in.size_hint, 0);
    gp__input_close(&in);
    unlink(path);
}

static gp_status read_text(const char *text, gp_trace **t, gp_error *err)
{
    gp_read_opts o = quiet_opts();
    *t = NULL;
    return gp_trace_read_buffer(text, strlen(text), "t.json", &o, t, err);
}

/* A BOM at byte 0 is skipped (and noted); elsewhere it is an error. Quoted times are read and
 * counted. A leading zero is refused with its offset, in times, ids and skipped args alike; a
 * quoted id with a leading zero is decimal. */
static void leniencies(void **state)
{
    (void)state;
    gp_trace *t;
    gp_error err = {0};
    char text[512];
    snprintf(text, sizeof text, "\xef\xbb\xbf{\"traceEvents\":[%s]}", ev_a);
    assert_int_equal(read_text(text, &t, &err), GP_OK);
    assert_true(t->stats.bom);
    gp_trace_free(t);
    snprintf(text, sizeof text, " \xef\xbb\xbf{\"traceEvents\":[%s]}", ev_a);
    assert_int_equal(read_text(text, &t, &err), GP_EPARSE);
    assert_non_null(strstr(err.msg, "byte 1:"));

    assert_int_equal(read_text("{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\","
                               "\"pid\":1,\"tid\":1,\"ts\":\"123.5\",\"dur\":\"2\"}]}",
                               &t, &err),
                     GP_OK);
    assert_int_equal(t->stats.quoted_times, 1); /* one event */
    assert_false(t->stats.bom);
    const gp_track *tr = &t->tracks[0];
    assert_int_equal(tr->events[0].ts, 123500);
    assert_int_equal(tr->events[0].dur, 2000);
    gp_trace_free(t);

    static const char *const zeros[] = {
        "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,\"tid\":1,"
        "\"ts\":0123,\"dur\":1}]}",
        "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":01,\"tid\":1,"
        "\"ts\":1,\"dur\":1}]}",
        "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,\"tid\":1,"
        "\"ts\":1,\"dur\":1,\"args\":{\"x\":-00.5}}]}",
    };
    for (size_t i = 0; i < sizeof zeros / sizeof zeros[0]; i++) {
        assert_int_equal(read_text(zeros[i], &t, &err), GP_EPARSE);
        assert_non_null(strstr(err.msg, "leading zero"));
        assert_non_null(strstr(err.msg, ": byte "));
    }
    assert_int_equal(read_text("{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\","
                               "\"pid\":0,\"tid\":7,\"ts\":0.5,\"dur\":1,\"args\":{\"device\":0,"
                               "\"stream\":\"010\",\"correlation\":\"0x10\"}}]}",
                               &t, &err),
                     GP_OK);
    assert_int_equal(t->n_tracks, 1);
    assert_int_equal(t->tracks[0].stream, 10); /* not octal 8 */
    assert_int_equal(t->tracks[0].events[0].correlation, 16);
    gp_trace_free(t);
}

/* 200,000 threads and as many streams: every event lands on its own (pid, tid) track. */
static void many_tracks(void **state)
{
    (void)state;
    const size_t n = 200000;
    size_t cap = n * 260 + 64, o = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    o += (size_t)snprintf(s + o, cap - o, "{\"traceEvents\":[");
    for (size_t i = 0; i < n; i++)
        o += (size_t)snprintf(s + o, cap - o,
                              "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op\",\"pid\":1,"
                              "\"tid\":%zu,\"ts\":%zu,\"dur\":1},{\"ph\":\"X\",\"cat\":\"kernel\","
                              "\"name\":\"k\",\"pid\":0,\"tid\":%zu,\"ts\":%zu,\"dur\":1,\"args\":"
                              "{\"device\":0,\"stream\":%zu}}",
                              i ? "," : "", i, i, i, i, i);
    o += (size_t)snprintf(s + o, cap - o, "]}");
    gp_read_opts opts = quiet_opts();
    opts.threads = 1;
    gp_trace *t = NULL;
    gp_error err = {0};
    assert_int_equal(gp_trace_read_buffer(s, o, "many.json", &opts, &t, &err), GP_OK);
    assert_int_equal(t->n_tracks, 2 * n);
    for (size_t k = 0; k < t->n_tracks; k++) {
        const gp_track *tr = &t->tracks[k];
        assert_int_equal(tr->n_events, 1);
        assert_int_equal(tr->events[0].ts / 1000, tr->tid); /* the event of that thread/stream */
    }
    uint32_t idx = 0;
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 12345, &idx), GP_OK);
    assert_int_equal(t->tracks[idx].tid, 12345);
    assert_int_equal(t->n_tracks, 2 * n); /* found, not added */
    gp_trace_free(t);
    free(s);
}

/* With regular_files_only (what `serve` sets), a path that is not a regular file is refused at
 * once with what it is (#21 item 2): a FIFO with no writer (opening it blocking would wait for one
 * forever), a FIFO swapped in for a regular file after the caller's own check (what `serve` does
 * before reading), a FIFO inside a job folder, a character device. The alarm turns a hang into a
 * failure instead of a stuck test. */
static void non_regular_files_are_refused_without_blocking(void **state)
{
    (void)state;
    char fifo[256], file[256], dir[256], rank[300];
    tmp_path(fifo, sizeof fifo, "fifo.json");
    tmp_path(file, sizeof file, "swapped.json");
    tmp_path(dir, sizeof dir, "job");
    snprintf(rank, sizeof rank, "%s/rank1.json", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    alarm(20);
    gp_read_opts o = quiet_opts();
    o.regular_files_only = true;
    gp_trace *t = NULL;
    gp_error err = {0};
    assert_int_equal(gp_trace_read(fifo, &o, &t, &err), GP_EIO);
    assert_null(t);
    assert_non_null(strstr(err.msg, fifo));
    assert_non_null(strstr(err.msg, "not a regular file (a FIFO)"));
    assert_int_equal(gp_status_exit_code(err.status), 2);

    /* Checked as a regular file, then swapped for a FIFO before the read. */
    FILE *fp = fopen(file, "w");
    assert_non_null(fp);
    fprintf(fp, "{\"traceEvents\":[%s]}", ev_a);
    fclose(fp);
    struct stat st;
    assert_int_equal(stat(file, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(unlink(file), 0);
    assert_int_equal(mkfifo(file, 0600), 0);
    assert_int_equal(gp_trace_read(file, &o, &t, &err), GP_EIO);
    assert_non_null(strstr(err.msg, "not a regular file (a FIFO)"));

    /* A FIFO among a job's rank files: the job read fails naming it. */
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(mkfifo(rank, 0600), 0);
    gp_job *job = NULL;
    assert_int_equal(gp_job_read(dir, &o, &job, &err), GP_EIO);
    assert_null(job);
    assert_non_null(strstr(err.msg, "rank1.json: not a regular file (a FIFO)"));

    /* A character device. */
    assert_int_equal(gp_trace_read("/dev/null", &o, &t, &err), GP_EIO);
    assert_non_null(strstr(err.msg, "/dev/null: not a regular file (a character device)"));
    alarm(0);

    /* A regular file still reads (O_NONBLOCK is cleared after the check). */
    assert_int_equal(unlink(file), 0);
    fp = fopen(file, "w");
    assert_non_null(fp);
    fprintf(fp, "{\"traceEvents\":[%s,%s]}", ev_a, ev_b);
    fclose(fp);
    assert_int_equal(gp_trace_read(file, &o, &t, &err), GP_OK);
    assert_int_equal(gp_trace_event_count(t), 2);
    gp_trace_free(t);
    unlink(file);
    unlink(fifo);
    unlink(rank);
    rmdir(dir);
}

/* The writer end of a FIFO: opens it (blocking until the reader has) and writes a trace. */
static void *fifo_writer(void *arg)
{
    FILE *fp = fopen((const char *)arg, "w");
    if (fp) {
        fprintf(fp, "{\"traceEvents\":[%s,%s]}", ev_a, ev_b);
        fclose(fp);
    }
    return NULL;
}

/* Without regular_files_only (the CLI's default) a FIFO is read as a stream: `gpuprof summary
 * <(zcat t.json.gz)` waits for its writer, even one that opens the FIFO after the reader did. */
static void fifo_with_a_writer_is_read_by_default(void **state)
{
    (void)state;
    char fifo[256];
    tmp_path(fifo, sizeof fifo, "stream.json");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    alarm(20);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, fifo_writer, fifo), 0);
    gp_read_opts o = quiet_opts();
    gp_trace *t = NULL;
    gp_error err = {0};
    assert_int_equal(gp_trace_read(fifo, &o, &t, &err), GP_OK);
    assert_int_equal(gp_trace_event_count(t), 2);
    gp_trace_free(t);
    pthread_join(th, NULL);
    alarm(0);
    unlink(fifo);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gzip_bomb_of_blanks),
        cmocka_unit_test(gzip_errors_name_compressed_offset),
        cmocka_unit_test(gzip_size_hint_that_understates),
        cmocka_unit_test(leniencies),
        cmocka_unit_test(many_tracks),
        cmocka_unit_test(non_regular_files_are_refused_without_blocking),
        cmocka_unit_test(fifo_with_a_writer_is_read_by_default),
    };
    /* GP_TEST_FILTER (a cmocka pattern) runs a subset: the gzip cases again with the inflater
     * thread forced on (test_reader_limits_inflate_thread). */
    if (getenv("GP_TEST_FILTER"))
        cmocka_set_test_filter(getenv("GP_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
