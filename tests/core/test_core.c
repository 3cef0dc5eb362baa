/* Unit tests for src/core: string interning, JSON escaping, the int map, atomic files, gzip input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/parse.h"
#include "core/atomic_file.h"
#include "core/demangle.h"
#include "core/group_table.h"
#include "core/imap.h"
#include "core/par.h"
#include "core/input.h"
#include "core/json_writer.h"
#include "core/strtab.h"
#include "core/util.h"

static void strtab_interns_once(void **state)
{
    gp__strtab t;
    assert_int_equal(gp__strtab_init(&t), GP_OK);
    uint32_t a, b, c, e;
    assert_int_equal(gp__strtab_intern(&t, "kernel_a", 8, &a), GP_OK);
    assert_int_equal(gp__strtab_intern(&t, "kernel_b", 8, &b), GP_OK);
    assert_int_equal(gp__strtab_intern(&t, "kernel_a", 8, &c), GP_OK);
    assert_int_equal(gp__strtab_intern(&t, "", 0, &e), GP_OK);
    assert_int_equal(a, c);
    assert_int_not_equal(a, b);
    assert_int_equal(e, 0);
    assert_string_equal(gp__strtab_get(&t, a), "kernel_a");
    assert_int_equal(gp__strtab_find(&t, "kernel_b", 8), b);
    assert_int_equal(gp__strtab_find(&t, "nope", 4), 0);
    /* Force several rehashes and check every id still resolves. */
    char buf[32];
    uint32_t ids[5000];
    for (int i = 0; i < 5000; i++) {
        int n = snprintf(buf, sizeof buf, "name-%d", i);
        assert_int_equal(gp__strtab_intern(&t, buf, (size_t)n, &ids[i]), GP_OK);
    }
    for (int i = 0; i < 5000; i++) {
        int n = snprintf(buf, sizeof buf, "name-%d", i);
        assert_int_equal(gp__strtab_find(&t, buf, (size_t)n), ids[i]);
        assert_string_equal(gp__strtab_get(&t, ids[i]), buf);
    }
    gp__strtab_free(&t);
}

/* Names built to defeat a hash of a sample of the bytes (head, middle, tail and length, which
 * this table used until issue #32): 240 bytes each, equal everywhere but bytes 16..40. Such a file
 * cost 20 s for 64 K names; the seeded hash of every byte keeps each lookup at a slot or two. The
 * probe count is deterministic where a time bound would not be: under the sampled hash these
 * 20,000 names cost about n^2/2 = 2e8 probes, here they must average under 4. */
static void strtab_resists_crafted_names(void **state)
{
    enum { N = 20000, LEN = 240 };
    gp__strtab t;
    assert_int_equal(gp__strtab_init(&t), GP_OK);
    char name[LEN];
    memset(name, 'x', sizeof name);
    memcpy(name, "void gemm_kernel<", 16);
    uint32_t first = 0, id;
    for (int i = 0; i < N; i++) {
        snprintf(name + 16, 25, "%024d", i); /* bytes 16..39; its NUL is overwritten next */
        name[40] = 'x';
        assert_int_equal(gp__strtab_intern(&t, name, LEN, &id), GP_OK);
        if (i == 0)
            first = id;
        assert_int_equal(id, first + (uint32_t)i); /* each one is new */
    }
    size_t probes = 0;
    for (int i = 0; i < N; i++) {
        snprintf(name + 16, 25, "%024d", i);
        name[40] = 'x';
        probes += gp__strtab_probes(&t, name, LEN);
        assert_int_equal(gp__strtab_find(&t, name, LEN), first + (uint32_t)i);
    }
    print_message("crafted names: %zu probes for %d lookups\n", probes, N);
    assert_true(probes < (size_t)4 * N);
    gp__strtab_free(&t);
}

static void json_writer_escapes(void **state)
{
    gp__jw w;
    gp__jw_init(&w, NULL);
    w.html_safe = true;
    gp__jw_obj_begin(&w);
    gp__jw_kv_str(&w, "name", "<script>alert(\"x\")</script>\n\x01&");
    gp__jw_key(&w, "ts");
    gp__jw_ns_as_us(&w, 1234567);
    gp__jw_key(&w, "neg");
    gp__jw_ns_as_us(&w, -5);
    gp__jw_kv_double(&w, "nan", 0.0 / 0.0);
    gp__jw_key(&w, "a");
    gp__jw_arr_begin(&w);
    gp__jw_int(&w, 1);
    gp__jw_int(&w, -2);
    gp__jw_arr_end(&w);
    gp__jw_obj_end(&w);
    size_t len;
    char *s = gp__jw_take(&w, &len);
    assert_non_null(s);
    assert_string_equal(s,
                        "{\"name\":\"\\u003cscript\\u003ealert(\\\"x\\\")\\u003c/script\\u003e\\n"
                        "\\u0001\\u0026\",\"ts\":1234.567,\"neg\":-0.005,\"nan\":null,"
                        "\"a\":[1,-2]}");
    free(s);
}

static void imap_put_get(void **state)
{
    gp__imap m;
    assert_int_equal(gp__imap_init(&m, 0), GP_OK);
    for (int64_t k = -1000; k < 100000; k += 7)
        assert_int_equal(gp__imap_put(&m, k, (uint64_t)(k * 3)), GP_OK);
    uint64_t v;
    for (int64_t k = -1000; k < 100000; k += 7) {
        assert_true(gp__imap_get(&m, k, &v));
        assert_int_equal(v, (uint64_t)(k * 3));
    }
    assert_false(gp__imap_get(&m, 2, &v)); /* -1000 + 7k never equals 2 */
    /* INT64_MIN (a uint64 id of 2^63, wrapped) is a key like any other (#21 item 12). */
    assert_false(gp__imap_get(&m, INT64_MIN, &v));
    assert_int_equal(gp__imap_put(&m, INT64_MIN, 1), GP_OK);
    assert_int_equal(gp__imap_put(&m, INT64_MAX, 2), GP_OK);
    assert_int_equal(gp__imap_put(&m, INT64_MIN, 5), GP_OK);
    assert_true(gp__imap_get(&m, INT64_MIN, &v));
    assert_int_equal(v, 5);
    assert_true(gp__imap_get(&m, INT64_MAX, &v));
    assert_int_equal(v, 2);
    gp__imap_free(&m);
}

static void atomic_file_replaces_or_keeps(void **state)
{
    char dir[] = "/tmp/gp_test_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    gp_error err;
    assert_int_equal(gp__write_file_atomic(path, "first", 5, &err), GP_OK);
    gp__afile f;
    assert_int_equal(gp__afile_open(&f, path, &err), GP_OK);
    fputs("partial", f.fp);
    gp__afile_abort(&f); /* an aborted write leaves the old content */
    FILE *fp = fopen(path, "r");
    char buf[16] = {0};
    assert_non_null(fp);
    assert_int_equal(fread(buf, 1, sizeof buf - 1, fp), 5);
    fclose(fp);
    assert_string_equal(buf, "first");
    assert_int_equal(gp__afile_open(&f, "/nonexistent-dir/x", &err), GP_EIO);
    assert_non_null(strstr(err.msg, "/nonexistent-dir/x"));
    /* A new file gets 0666 minus the umask; a replaced file keeps its mode. */
    char fresh[300];
    snprintf(fresh, sizeof fresh, "%s/fresh.txt", dir);
    mode_t old = umask(027);
    assert_int_equal(gp__write_file_atomic(fresh, "x", 1, &err), GP_OK);
    umask(old);
    struct stat st;
    assert_int_equal(stat(fresh, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    assert_int_equal(chmod(path, 0600), 0);
    assert_int_equal(gp__write_file_atomic(path, "second", 6, &err), GP_OK);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    unlink(fresh);
    unlink(path);
    assert_int_equal(rmdir(dir), 0); /* no temporary file left behind */
}

static void input_reads_gzip_and_reports_truncation(void **state)
{
    char path[] = "/tmp/gp_gz_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    gzFile gz = gzopen(path, "wb");
    char text[20000];
    for (size_t i = 0; i < sizeof text; i++)
        text[i] = (char)('a' + (i * 7) % 26);
    gzwrite(gz, text, sizeof text);
    gzclose(gz);

    gp__input in;
    gp_error err;
    char buf[4096];
    size_t got, total = 0;
    assert_int_equal(gp__input_open(&in, path, true, &err), GP_OK);
    assert_true(in.compressed);
    do {
        assert_int_equal(gp__input_read(&in, buf, sizeof buf, &got, &err), GP_OK);
        assert_memory_equal(buf, text + total, got);
        total += got;
    } while (got);
    assert_int_equal(total, sizeof text);
    gp__input_close(&in);

    /* Truncate the compressed file: the reader must fail with a parse error, not return EOF. */
    FILE *fp = fopen(path, "r+");
    fseek(fp, 0, SEEK_END);
    long size = ftell(fp);
    fclose(fp);
    assert_int_equal(truncate(path, size / 2), 0);
    assert_int_equal(gp__input_open(&in, path, true, &err), GP_OK);
    gp_status s;
    do {
        s = gp__input_read(&in, buf, sizeof buf, &got, &err);
    } while (s == GP_OK && got);
    assert_int_equal(s, GP_EPARSE);
    assert_non_null(strstr(err.msg, "truncated"));
    gp__input_close(&in);
    unlink(path);
}

/* gp__par_for: every index runs exactly once whatever the thread count; with one thread they run
 * in order on the caller's thread. */
typedef struct par_ctx {
    _Atomic int hits[64];
    int order[64];
    _Atomic int n_order;
} par_ctx;

static void par_task(void *ctx, size_t i)
{
    par_ctx *c = ctx;
    atomic_fetch_add(&c->hits[i], 1);
    c->order[atomic_fetch_add(&c->n_order, 1)] = (int)i;
}

static void par_for_runs_each_task_once(void **state)
{
    (void)state;
    static const int threads[] = {0, 1, 2, 3, 8, 100};
    for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
        for (size_t n = 0; n <= 64; n += 21) {
            par_ctx c;
            memset(&c, 0, sizeof c);
            gp__par_for(n, threads[t], par_task, &c);
            assert_int_equal(atomic_load(&c.n_order), (int)n);
            for (size_t i = 0; i < n; i++)
                assert_int_equal(atomic_load(&c.hits[i]), 1);
            if (threads[t] <= 1)
                for (size_t i = 0; i < n; i++)
                    assert_int_equal(c.order[i], (int)i);
        }
    }
    assert_int_equal(gp__par_threads(3, 2), 2);
    assert_int_equal(gp__par_threads(1, 4), 1);
    int automatic = gp__par_threads(0, 4);
    assert_true(automatic >= 1 && automatic <= 4);
}

/* gp__group_table: one record per (kind, name), insertion order, zeroed payload, copied names. */
typedef struct grec {
    gp__group_key key;
    int64_t count;
} grec;

static void group_table_groups_by_kind_and_name(void **state)
{
    (void)state;
    for (int copy = 0; copy < 2; copy++) {
        gp__group_table t;
        gp__group_table_init(&t, sizeof(grec), copy);
        static char stable[1000][16]; /* without copies, names must outlive the table */
        char name[32];
        for (int round = 0; round < 3; round++)
            for (int i = 0; i < 1000; i++) { /* 1000 names x 2 kinds, three times each */
                int n = snprintf(name, sizeof name, "kernel_%d", i);
                if (!copy) {
                    memcpy(stable[i], name, (size_t)n + 1);
                    memcpy(name, "overwritten", 12); /* the table must not look at this buffer */
                }
                for (int kind = 0; kind < 2; kind++) {
                    const char *key = copy ? name : stable[i];
                    uint32_t idx = gp__group_find(&t, kind, key, (size_t)n);
                    assert_true(idx >= 1);
                    grec *r = gp__group_at(&t, idx - 1);
                    if (round == 0)
                        assert_int_equal(r->count, 0); /* a new record is zeroed */
                    r->count++;
                    assert_int_equal(r->key.kind, kind);
                    assert_int_equal(r->key.len, (size_t)n);
                    assert_memory_equal(r->key.name, key, (size_t)n);
                }
            }
        assert_int_equal(t.n, 2000);
        for (size_t i = 0; i < t.n; i++) {
            grec *r = gp__group_at(&t, i);
            assert_int_equal(r->count, 3);
            snprintf(name, sizeof name, "kernel_%zu", i / 2); /* insertion order */
            assert_int_equal(r->key.kind, (int32_t)(i % 2));
            assert_string_equal(r->key.name, name); /* copies are NUL-terminated */
        }
        assert_true(gp__group_hash(0, "a", 1) != gp__group_hash(1, "a", 1));
        gp__group_table_free(&t);
    }
}

static void number_parser_reads_whole_text_and_checks_ranges(void **state)
{
    (void)state;
    long long i;
    assert_true(gp__parse_int("42", 0, 100, &i));
    assert_int_equal(i, 42);
    assert_false(gp__parse_int("42x", 0, 100, &i));
    assert_false(gp__parse_int("101", 0, 100, &i));
    assert_false(gp__parse_int("", 0, 100, &i));
    unsigned long long u;
    assert_false(gp__parse_uint("-1", 10, &u));
    assert_true(gp__parse_uint("10", 10, &u));
    double r;
    assert_true(gp__parse_real("2.5", 0, 5, &r));
    assert_false(gp__parse_real("nan", 0, 5, &r));
    int64_t ns;
    assert_true(gp__parse_duration_ns("50us", 1, &ns));
    assert_int_equal(ns, 50000);
    assert_true(gp__parse_duration_ns("7", 1, &ns));
    assert_int_equal(ns, 7);
    assert_true(gp__parse_duration_ns("1.5s", 1, &ns));
    assert_int_equal(ns, 1500000000);
    assert_false(gp__parse_duration_ns("5 parsecs", 1, &ns));
    assert_false(gp__parse_duration_ns("-1ms", 1, &ns));
    assert_false(gp__parse_duration_ns("inf", 1, &ns));
    uint32_t ms;
    assert_int_equal(gp__parse_duration_ms("250", &ms), GP_OK);
    assert_int_equal(ms, 250);
    assert_int_equal(gp__parse_duration_ms("0.5s", &ms), GP_OK);
    assert_int_equal(ms, 500);
    assert_int_equal(gp__parse_duration_ms("2m", &ms), GP_OK);
    assert_int_equal(ms, 120000);
    assert_int_equal(gp__parse_duration_ms("0", &ms), GP_EINVAL);
    assert_int_equal(gp__parse_duration_ms("0.4", &ms), GP_EINVAL);
    assert_int_equal(gp__parse_duration_ms("61m", &ms), GP_EINVAL);
}

/* gp__demangle: libiberty's demangler, std::bfloat16_t ("DF16b") and names over 1,024 bytes
 * included; NULL for names that are not mangled, are cut short, are longer than
 * GP__DEMANGLE_MAX_IN or whose text would pass GP__DEMANGLE_MAX_OUT (a hostile trace's names: no
 * stack overflow, no gigabytes, no long run). */
/* gp__reserve gives exactly the room asked for (gp__grow a power-of-two multiple of 16), keeps
 * what is there, never shrinks, and refuses a size that overflows; growing past it doubles. */
static void reserve_gives_exact_room(void **state)
{
    (void)state;
    int *a = NULL;
    size_t cap = 0;
    assert_int_equal(gp__reserve((void **)&a, &cap, sizeof *a, 1000), GP_OK);
    assert_int_equal(cap, 1000);
    for (int i = 0; i < 1000; i++)
        a[i] = i;
    assert_int_equal(gp__reserve((void **)&a, &cap, sizeof *a, 10), GP_OK);
    assert_int_equal(cap, 1000); /* never shrinks */
    assert_int_equal(gp__reserve((void **)&a, &cap, sizeof *a, 1500), GP_OK);
    assert_int_equal(cap, 1500);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(a[i], i);
    assert_int_equal(gp__reserve((void **)&a, &cap, sizeof *a, SIZE_MAX / 2), GP_ENOMEM);
    assert_int_equal(cap, 1500); /* unchanged on failure */
    assert_int_equal(gp__grow((void **)&a, &cap, sizeof *a, 1501), GP_OK);
    assert_int_equal(cap, 3000);
    int *b = NULL;
    size_t cap_b = 0;
    assert_int_equal(gp__grow((void **)&b, &cap_b, sizeof *b, 1000), GP_OK);
    assert_int_equal(cap_b, 1024);
    free(a);
    free(b);
}

static void demangle_with_libiberty(void **state)
{
    (void)state;
    char *d = gp__demangle("_Z6vecAddPKfS0_Pfi");
    assert_non_null(d);
    assert_string_equal(d, "vecAdd(float const*, float const*, float*, int)");
    free(d);
    d = gp__demangle(
        "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi64ELi8ELb0ELb0ELb1ELi1EEEvPT0_"
        "PT_PfS4_S4_S4_diiiiiiib");
    assert_non_null(d);
    assert_non_null(strstr(d, "aiter::add_rmsnorm_quant_kernel<std::bfloat16_t, std::bfloat16_t, "
                              "64, 8, false, false, true, 1>("));
    free(d);
    assert_null(gp__demangle("aten::mm"));
    assert_null(gp__demangle("_Z"));
    assert_null(gp__demangle("_ZN19cutlass_cudnn_train6KernelINS_4conv6kernel23ImplicitGemm"));
    assert_null(gp__demangle(NULL));
    /* 1,283 bytes: over libiberty's default limit (names over 1,024 bytes), as real CUTLASS
     * kernel names are; demangled here. */
    char longname[1400] = "_ZN";
    for (int i = 0; i < 40; i++)
        strcat(longname, "30abcdefghijklmnopqrstuvwxyz0123");
    strcat(longname, "Ev");
    assert_int_equal(strlen(longname), 3 + 40 * 32 + 2);
    d = gp__demangle(longname);
    assert_non_null(d);
    assert_int_equal(strlen(d), 40 * 30 + 39 * 2 + 2);
    free(d);
    /* back-references double the text per level: 26 levels would be gigabytes; refused at
     * GP__DEMANGLE_MAX_OUT, fast */
    char bomb[400] = "_Z1f1AIiE";
    static const char digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    for (int lvl = 1; lvl <= 26; lvl++) {
        char ref[8];
        if (lvl == 1)
            snprintf(ref, sizeof ref, "S0_");
        else
            snprintf(ref, sizeof ref, "S%c_", digits[lvl - 1]);
        strcat(bomb, "S_I");
        strcat(bomb, ref);
        strcat(bomb, ref);
        strcat(bomb, "E");
    }
    assert_null(gp__demangle(bomb));
    bomb[9 + 10 * 10] = '\0'; /* 10 levels: 2 K of text, under the bound */
    d = gp__demangle(bomb);
    assert_non_null(d);
    assert_true(strlen(d) > 1000 && strlen(d) < GP__DEMANGLE_MAX_OUT);
    free(d);
    enum { DEEP = 200000 };
    char *deep = malloc(DEEP + 8);
    assert_non_null(deep);
    memcpy(deep, "_Z1f", 4);
    memset(deep + 4, 'P', DEEP);
    memcpy(deep + 4 + DEEP, "i", 2);
    assert_null(gp__demangle(deep));
    free(deep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(strtab_interns_once),
        cmocka_unit_test(strtab_resists_crafted_names),
        cmocka_unit_test(json_writer_escapes),
        cmocka_unit_test(imap_put_get),
        cmocka_unit_test(atomic_file_replaces_or_keeps),
        cmocka_unit_test(input_reads_gzip_and_reports_truncation),
        cmocka_unit_test(par_for_runs_each_task_once),
        cmocka_unit_test(group_table_groups_by_kind_and_name),
        cmocka_unit_test(number_parser_reads_whole_text_and_checks_ranges),
        cmocka_unit_test(reserve_gives_exact_room),
        cmocka_unit_test(demangle_with_libiberty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
