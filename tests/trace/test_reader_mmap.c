/* Plain files mapped when asked (gp_read_opts.map, GP_READ_MMAP=1; core/input.c
 * gp__input_map_file, io/kineto_reader.c; issue 37): the mapping ends with zero bytes whatever the
 * file's size is against the page size; the pages passed are handed back; and a mapped read gives
 * the model, or the error and its message, that the read(2) path (the default) gives, on every
 * shared trace and on documents whose last byte, or a number cut short, sits at a page's end
 * (where a 16-byte load runs past the file). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "common/shared_traces.h"
#include "core/input.h"
#include "gpuprof/trace.h"
#include "model/model_internal.h"

static void tmp_path(char *out, size_t cap, const char *what)
{
    snprintf(out, cap, "/tmp/gp-test-mmap.%d.%s", (int)getpid(), what);
}

static void write_file(const char *path, const char *data, size_t len)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(data, 1, len, fp), len);
    assert_int_equal(fclose(fp), 0);
}

/* Reads path with one thread (or `threads`), mapped or through read(2). */
static gp_status read_way(const char *path, bool mapped, int threads, gp_trace **t, gp_error *err)
{
    gp_read_opts o;
    gp_read_opts_init(&o);
    o.map = mapped;
    o.quiet = true;
    o.keep_op_shapes = true;
    o.threads = threads;
    *t = NULL;
    *err = (gp_error){0};
    gp_status st = gp_trace_read(path, &o, t, err);
    if (st == GP_OK && (*t)->stats.mapped != mapped)
        fail_msg("%s: mapped %d, asked %d", path, (*t)->stats.mapped, mapped);
    return st;
}

/* Whether gp__input_map_file maps path. */
static bool maps(const char *path)
{
    gp__input in;
    gp_error err = {0};
    assert_int_equal(gp__input_open(&in, path, true, &err), GP_OK);
    gp__input_map m;
    bool ok = gp__input_map_file(&in, &m);
    gp__input_map_free(&m);
    gp__input_close(&in);
    return ok;
}

/* The mapping holds the file's bytes and then at least GP__MAP_PAD zero bytes, for sizes on both
 * sides of page ends; reading through the input is not disturbed. */
static void mapping_ends_with_zeros(void **state)
{
    (void)state;
    static const size_t sizes[] = {1, 31, 4064, 4065, 4095, 4096, 4097, 8191, 8192, 12293};
    char path[128];
    tmp_path(path, sizeof path, "pad.bin");
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        char *data = malloc(n);
        for (size_t i = 0; i < n; i++)
            data[i] = (char)('a' + i % 26);
        write_file(path, data, n);
        gp__input in;
        gp_error err = {0};
        assert_int_equal(gp__input_open(&in, path, true, &err), GP_OK);
        gp__input_map m;
        assert_true(gp__input_map_file(&in, &m));
        assert_int_equal(m.size, n);
        assert_memory_equal(m.base, data, n);
        for (size_t i = 0; i < GP__MAP_PAD; i++)
            if (m.base[n + i] != 0)
                fail_msg("size %zu: byte %zu past the end is %d", n, i, m.base[n + i]);
        char first[8] = {0};
        size_t got = 0;
        assert_int_equal(gp__input_read(&in, first, sizeof first, &got, &err), GP_OK);
        assert_int_equal(got, n < sizeof first ? n : sizeof first);
        assert_memory_equal(first, data, got);
        gp__input_map_free(&m);
        assert_null(m.base);
        gp__input_close(&in);
        free(data);
    }
    unlink(path);
}

/* Not mapped: gzip, an empty file, memory input, GP_READ_MMAP=0. */
static void what_is_not_mapped(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "not.json.gz");
    gzFile gz = gzopen(path, "wb");
    assert_non_null(gz);
    gzputs(gz, "{\"traceEvents\": []}");
    assert_int_equal(gzclose(gz), Z_OK);
    assert_false(maps(path));
    write_file(path, "", 0);
    assert_false(maps(path));
    write_file(path, "{}", 2);
    assert_true(maps(path));
    setenv("GP_READ_MMAP", "0", 1);
    assert_false(maps(path));
    unsetenv("GP_READ_MMAP");
    gp__input in;
    gp__input_open_mem(&in, "{}", 2, "mem");
    gp__input_map m;
    assert_false(gp__input_map_file(&in, &m));
    assert_null(m.base);
    unlink(path);
}

/* What the reader says it did (stats.mapped): a plain file is mapped when asked (map, or
 * GP_READ_MMAP=1), with one thread and with two; not by default, not with no_map (serve's choice)
 * even when asked, not with GP_READ_MMAP=0, and not for gzip; the models are equal. */
static void reads_say_whether_they_mapped(void **state)
{
    (void)state;
    char path[128], gzpath[128];
    tmp_path(path, sizeof path, "say.json");
    tmp_path(gzpath, sizeof gzpath, "say.json.gz");
    FILE *fp = fopen(path, "wb");
    gzFile gz = gzopen(gzpath, "wb");
    assert_non_null(fp);
    assert_non_null(gz);
    fputs("{\"traceEvents\": [\n", fp);
    gzputs(gz, "{\"traceEvents\": [\n");
    for (int i = 0; i < 3000; i++) {
        char ev[200];
        snprintf(ev, sizeof ev,
                 "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op%d\", \"pid\": 1, "
                 "\"tid\": 1, \"ts\": %d, \"dur\": 1}",
                 i ? ",\n" : "", i % 5, 2 * i);
        fputs(ev, fp);
        gzputs(gz, ev);
    }
    fputs("\n]}\n", fp);
    gzputs(gz, "\n]}\n");
    assert_int_equal(fclose(fp), 0);
    assert_int_equal(gzclose(gz), Z_OK);
    static const struct {
        bool gzip, map, no_map;
        const char *env;
        int threads;
        bool mapped;
    } cases[] = {
        {false, true, false, NULL, 1, true},   {false, true, false, NULL, 2, true},
        {false, false, false, NULL, 1, false}, {false, false, false, NULL, 2, false},
        {false, true, true, NULL, 1, false},   {false, true, true, NULL, 2, false},
        {false, true, false, "0", 1, false},   {false, false, false, "1", 1, true},
        {false, false, false, "1", 2, true},   {false, false, true, "1", 1, false},
        {true, true, false, NULL, 1, false},
    };
    gp_trace *ref = NULL;
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        if (cases[k].env)
            setenv("GP_READ_MMAP", cases[k].env, 1);
        gp_read_opts o;
        gp_read_opts_init(&o);
        o.quiet = true;
        o.threads = cases[k].threads;
        o.map = cases[k].map;
        o.no_map = cases[k].no_map;
        gp_trace *t = NULL;
        gp_error err = {0};
        if (gp_trace_read(cases[k].gzip ? gzpath : path, &o, &t, &err) != GP_OK)
            fail_msg("case %zu: %s", k, err.msg);
        unsetenv("GP_READ_MMAP");
        if (t->stats.mapped != cases[k].mapped)
            fail_msg("case %zu: mapped %d, expected %d", k, t->stats.mapped, cases[k].mapped);
        if (cases[k].threads == 2)
            assert_true(t->stats.pieces >= 2);
        assert_int_equal(gp_trace_event_count(t), 3000);
        if (!ref) {
            ref = t;
            continue;
        }
        gp_error why = {0};
        if (!gp_trace_equal(ref, t, &why))
            fail_msg("case %zu: %s", k, why.msg);
        gp_trace_free(t);
    }
    gp_trace_free(ref);
    unlink(path);
    unlink(gzpath);
}

/* The process's resident set in bytes (/proc/self/statm), 0 when unknown. */
static size_t resident_bytes(void)
{
    FILE *fp = fopen("/proc/self/statm", "r");
    unsigned long size = 0, res = 0;
    if (!fp)
        return 0;
    if (fscanf(fp, "%lu %lu", &size, &res) != 2)
        res = 0;
    fclose(fp);
    return (size_t)res * (size_t)sysconf(_SC_PAGESIZE);
}

/* Pages handed back leave the resident set and read the same when touched again. */
static void dropped_pages_leave_the_resident_set(void **state)
{
    (void)state;
    if (resident_bytes() == 0)
        skip();
    enum { MB = 1 << 20, SIZE = 32 * MB };
    char path[128];
    tmp_path(path, sizeof path, "drop.bin");
    char *data = malloc(SIZE);
    for (size_t i = 0; i < SIZE; i++)
        data[i] = (char)(1 + (i * 131) % 251);
    write_file(path, data, SIZE);
    gp__input in;
    gp_error err = {0};
    assert_int_equal(gp__input_open(&in, path, true, &err), GP_OK);
    gp__input_map m;
    assert_true(gp__input_map_file(&in, &m));
    unsigned long sum = 0, again = 0;
    for (size_t i = 0; i < SIZE; i += 64)
        sum += (unsigned char)m.base[i];
    size_t before = resident_bytes();
    gp__input_map_drop(&m, SIZE - 5); /* rounded down: the last page stays */
    size_t after = resident_bytes();
    if (!(after + 24 * MB <= before))
        fail_msg("resident set %zu KiB before the drop, %zu KiB after", before >> 10, after >> 10);
    gp__input_map_drop(&m, 10); /* behind what was dropped: nothing */
    for (size_t i = 0; i < SIZE; i += 64)
        again += (unsigned char)m.base[i];
    assert_int_equal(sum, again);
    assert_memory_equal(m.base, data, SIZE);
    gp__input_map_free(&m);
    gp__input_close(&in);
    free(data);
    unlink(path);
}

/* Both ways must read alike: equal models, or the same status and message. */
static void assert_read_alike(const char *path, int threads, const char *what)
{
    gp_trace *a, *b;
    gp_error ea, eb;
    gp_status sa = read_way(path, true, threads, &a, &ea);
    gp_status sb = read_way(path, false, threads, &b, &eb);
    if (sa != sb)
        fail_msg("%s: mapped %d (%s), read %d (%s)", what, sa, ea.msg, sb, eb.msg);
    if (sa != GP_OK) {
        if (strcmp(ea.msg, eb.msg) != 0)
            fail_msg("%s: mapped \"%s\", read \"%s\"", what, ea.msg, eb.msg);
        return;
    }
    gp_error why = {0};
    if (!gp_trace_equal(a, b, &why))
        fail_msg("%s: models differ: %s", what, why.msg);
    assert_int_equal(gp_trace_event_count(a), gp_trace_event_count(b));
    assert_int_equal(a->stats.bytes, b->stats.bytes);
    gp_trace_free(a);
    gp_trace_free(b);
}

/* A document of `size` bytes: one event, blanks, then `tail` as its last bytes. */
static char *document_of(size_t size, const char *tail)
{
    static const char head[] = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", "
                               "\"name\": \"a\", \"pid\": 1, \"tid\": 1, \"dur\": 2,";
    size_t h = strlen(head), t = strlen(tail);
    assert_true(size >= h + t);
    char *doc = malloc(size + 1);
    memcpy(doc, head, h);
    memset(doc + h, ' ', size - h - t);
    memcpy(doc + size - t, tail, t);
    doc[size] = '\0';
    return doc;
}

/* Documents whose last byte is the last of a page, or one byte before or after it; and the same
 * documents cut inside a number, a string or a literal that then reaches the page's end: the
 * fast number paths load 16 bytes there, past the file. */
static void documents_ending_at_page_ends_read_alike(void **state)
{
    (void)state;
    static const size_t sizes[] = {4095, 4096, 4097, 8190, 8192, 8193};
    static const char *const tails[] = {
        "\"ts\": 1234567}]}",                 /* whole */
        "\"ts\": 1234567.125}]}\n",           /* whole, a newline last */
        "\"ts\": 1234567",                    /* cut inside a time */
        "\"ts\": 12345678901234.5",           /* cut inside a long time */
        "\"ts\": 1, \"args\": {\"n\": 99",    /* cut inside an integer arg */
        "\"ts\": 1, \"args\": {\"s\": \"abc", /* cut inside a string */
        "\"ts\": 1, \"args\": {\"b\": tru",   /* cut inside a literal */
        "\"ts\": 1}]} x",                     /* data after the end */
    };
    char path[128];
    tmp_path(path, sizeof path, "ends.json");
    int failures = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (size_t k = 0; k < sizeof tails / sizeof *tails; k++) {
            char *doc = document_of(sizes[s], tails[k]);
            write_file(path, doc, sizes[s]);
            assert_true(maps(path));
            char what[160];
            snprintf(what, sizeof what, "size %zu, tail \"%s\"", sizes[s], tails[k]);
            assert_read_alike(path, 1, what);
            /* The expected outcome, not only agreement: whole documents read, cut ones fail. */
            gp_trace *t;
            gp_error err;
            gp_status st = read_way(path, true, 1, &t, &err);
            bool whole = k < 2;
            if (whole != (st == GP_OK)) {
                print_error("%s: status %d (%s)\n", what, st, err.msg);
                failures++;
            }
            if (st == GP_OK) {
                assert_int_equal(gp_trace_event_count(t), 1);
                gp_trace_free(t);
            } else if (k >= 2 && k < 7 && !strstr(err.msg, "unexpected end of input")) {
                print_error("%s: \"%s\"\n", what, err.msg);
                failures++;
            }
            free(doc);
        }
    assert_int_equal(failures, 0);
    /* A NUL byte inside the data: refused at its offset both ways. */
    char *doc = document_of(4096, "\"ts\": 1}]}");
    doc[100] = '\0';
    write_file(path, doc, 4096);
    assert_read_alike(path, 1, "a NUL at byte 100");
    gp_trace *t;
    gp_error err;
    assert_int_equal(read_way(path, true, 1, &t, &err), GP_EPARSE);
    assert_non_null(strstr(err.msg, "byte 100: unexpected NUL byte"));
    free(doc);
    unlink(path);
}

/* Every shared trace, decompressed to a plain file: mapped and read alike, with one thread and
 * with two (pieces of a mapped file start inside it). */
static void every_shared_trace_reads_alike(void **state)
{
    (void)state;
    const char *shared = getenv("GP_SHARED_DIR");
    char dir[2048];
    snprintf(dir, sizeof dir, "%s/traces", shared ? shared : "../shared");
    DIR *d = opendir(dir);
    if (!d)
        skip();
    char path[128];
    tmp_path(path, sizeof path, "shared.json");
    int checked = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (l <= 8 || strcmp(de->d_name + l - 8, ".json.gz") != 0)
            continue;
        char src[4096];
        snprintf(src, sizeof src, "%s/%s", dir, de->d_name);
        gzFile gz = gzopen(src, "rb");
        assert_non_null(gz);
        FILE *out = fopen(path, "wb");
        assert_non_null(out);
        static char block[1 << 16];
        int got;
        while ((got = gzread(gz, block, sizeof block)) > 0)
            assert_int_equal(fwrite(block, 1, (size_t)got, out), (size_t)got);
        gzclose(gz);
        assert_int_equal(fclose(out), 0);
        assert_true(maps(path));
        assert_read_alike(path, 1, de->d_name);
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        if (st.st_size > (8 << 20))
            assert_read_alike(path, 2, de->d_name);
        checked++;
    }
    closedir(d);
    unlink(path);
    assert_true(checked >= 15); /* the 15 traces of ../shared/traces (INDEX.md) */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mapping_ends_with_zeros),
        cmocka_unit_test(what_is_not_mapped),
        cmocka_unit_test(reads_say_whether_they_mapped),
        cmocka_unit_test(dropped_pages_leave_the_resident_set),
        cmocka_unit_test(documents_ending_at_page_ends_read_alike),
        cmocka_unit_test(every_shared_trace_reads_alike),
    };
    return gp_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
