/* The JSON scanner's instruction sets (io/json_scan.c: scalar SWAR, SSE2, AVX2 chosen at run time,
 * issue 37) read alike: every shared trace gives an equal model at each level; generated events
 * whose strings, keys and numbers sit at every offset around the 8-, 16- and 32-byte loads
 * (escapes, escaped keys, long names, chunk boundaries) too; malformed ones fail with the same
 * message. The number fast paths are checked against strtoull / the definition of the microsecond
 * conversion, not against the reader's own output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/shared_traces.h"
#include "gpuprof/trace.h"
#include "io/json_scan.h"
#include "io/reader_internal.h"

static const int levels[] = {GP__JSON_SIMD_SCALAR, GP__JSON_SIMD_SSE2, GP__JSON_SIMD_AVX2};
#define N_LEVELS 3

/* Reads text (or the file path when text is NULL) at `level`, the bytes given `piece` at a time. */
static gp_status read_at(int level, const char *path, const char *text, size_t piece, gp_trace **t,
                         gp_error *err)
{
    gp__json_simd_set(level);
    gp_read_opts o;
    gp_read_opts_init(&o);
    o.quiet = true;
    o.keep_op_shapes = true;
    o.threads = 1;
    *t = NULL;
    gp_status st = text ? gp__trace_read_buffer_pieces(text, strlen(text), "gen", &o, piece, t, err)
                        : gp_trace_read(path, &o, t, err);
    gp__json_simd_set(-1);
    return st;
}

/* At every level: the status of the scalar read; equal models, or the same message. */
static void assert_same_at_all_levels(const char *path, const char *text, size_t piece)
{
    gp_trace *ref = NULL;
    gp_error eref = {0};
    gp_status sref = read_at(GP__JSON_SIMD_SCALAR, path, text, piece, &ref, &eref);
    for (int i = 1; i < N_LEVELS; i++) {
        gp_trace *t = NULL;
        gp_error e = {0};
        gp_status s = read_at(levels[i], path, text, piece, &t, &e);
        if (s != sref)
            fail_msg("%s: level %d status %d, scalar %d (%s / %s)", path ? path : text, levels[i],
                     s, sref, e.msg, eref.msg);
        if (s == GP_OK) {
            gp_error why = {0};
            if (!gp_trace_equal(ref, t, &why))
                fail_msg("%s: level %d model differs from scalar: %s", path ? path : "generated",
                         levels[i], why.msg);
        } else {
            assert_string_equal(e.msg, eref.msg);
        }
        gp_trace_free(t);
    }
    gp_trace_free(ref);
}

static void levels_are_set(void **state)
{
    (void)state;
    assert_int_equal(gp__json_simd_set(GP__JSON_SIMD_SCALAR), GP__JSON_SIMD_SCALAR);
    assert_int_equal(gp__json_simd_level(), GP__JSON_SIMD_SCALAR);
    int best = gp__json_simd_set(-1);
#if defined(__x86_64__)
    assert_true(best >= GP__JSON_SIMD_SSE2); /* the x86-64 baseline */
    assert_int_equal(gp__json_simd_set(GP__JSON_SIMD_SSE2), GP__JSON_SIMD_SSE2);
    print_message("best level on this CPU: %d\n", best);
#endif
    assert_true(gp__json_simd_set(GP__JSON_SIMD_AVX2) <= best);
    gp__json_simd_set(-1);
}

static void shared_traces_alike(void **state)
{
    (void)state;
    if (!gp_test_have_shared_traces())
        skip();
    const char *shared = getenv("GP_SHARED_DIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/traces", shared ? shared : "../shared");
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 8 || strcmp(e->d_name + l - 8, ".json.gz") != 0)
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        assert_same_at_all_levels(path, NULL, 0);
        n++;
    }
    closedir(d);
    assert_true(n >= 5);
}

/* A string of n bytes of filler, with (when esc >= 0) an escape at offset esc. */
static void filler(char *out, int n, int esc, int kind)
{
    static const char *escapes[] = {"\\\"", "\\\\", "\\n", "\\u00e9", "\\ud83d\\ude00", "\\/"};
    int o = 0;
    for (int i = 0; i < n; i++) {
        if (i == esc)
            o += sprintf(out + o, "%s", escapes[kind % 6]);
        else
            out[o++] = (char)('a' + (i * 7 + kind) % 26);
    }
    out[o] = '\0';
}

static char *gen_buf;
static size_t gen_len, gen_cap;

static void gen(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[4096];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    assert_true(n > 0 && (size_t)n < sizeof tmp);
    if (gen_len + (size_t)n + 1 > gen_cap) {
        gen_cap = (gen_len + (size_t)n + 1) * 2;
        gen_buf = realloc(gen_buf, gen_cap);
        assert_non_null(gen_buf);
    }
    memcpy(gen_buf + gen_len, tmp, (size_t)n + 1);
    gen_len += (size_t)n;
}

/* Names of 0..80 bytes with an escape at each offset, keys escaped and not, args keys of every
 * known length, numbers of 1..19 digits: one model at every level, whole and in 7-byte chunks. */
static void generated_events_alike(void **state)
{
    (void)state;
    gen_len = 0;
    gen("{\"traceEvents\": [\n");
    char name[512], key[256];
    int k = 0;
    for (int n = 0; n <= 80; n++) {
        for (int esc = -1; esc < n; esc += (n > 20 ? 5 : 1)) {
            filler(name, n, esc, k);
            /* every other event spells its keys with escapes: the dispatch must not care */
            const char *ph = k % 2 ? "\\u0070h" : "ph", *ts = k % 3 ? "ts" : "t\\u0073";
            gen("{%s\"%s\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d, "
                "\"%s\": %d.%03d, \"dur\": %d, \"args\": {\"External id\": %d, \"Sequence "
                "number\": %d, \"correlation\": %d, \"%s\": 1}},\n",
                k % 4 == 1 ? "\"extra\": [1, {\"a\": \"\\u00e9\"}], " : "", ph,
                k % 2 ? "cpu_op" : "user_annotation", name, 1 + k % 3, 10 + k % 5, ts, 1000 + k,
                k % 1000, 1 + k % 97, k + 1, k, k * 3, k % 2 ? "Ev Idx" : "Sequence number");
            k++;
        }
    }
    for (int n = 1; n <= 40; n++) { /* keys of every length around the two-word fast path */
        filler(key, n, n % 3 == 0 ? n / 2 : -1, n);
        gen("{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%d\", \"pid\": 0, \"tid\": 7, "
            "\"ts\": %d, \"dur\": 5, \"args\": {\"%s\": \"%s\", \"stream\": 7, \"device\": 0, "
            "\"correlation\": %d, \"grid\": [%d, 1, 1], \"Total Allocated\": %d}},\n",
            n, 5000 + n, key, key, 100000 + n, n, n * 1000);
    }
    unsigned long long v = 1; /* integers of every length (the step after the last wraps) */
    for (int d = 1; d <= 19; d++, v = v * 10 + (unsigned)(d % 10))
        gen("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"n%d\", \"pid\": 9, \"tid\": 9, "
            "\"ts\": %d, \"dur\": %llu.%d, \"args\": {\"External id\": %llu}},\n",
            d, 9000 + d, v % 100000000000ULL, d % 10, v);
    gen("{\"ph\": \"i\", \"s\": \"t\", \"name\": \"end\", \"pid\": 1, \"tid\": 1, \"ts\": "
        "1}\n]}\n");
    assert_same_at_all_levels(NULL, gen_buf, 0);
    assert_same_at_all_levels(NULL, gen_buf, 7);
    assert_same_at_all_levels(NULL, gen_buf, 4093);
}

/* text with a run of blanks after every ',', ':', '{' and '[' outside strings: run k has k % 23
 * bytes, spaces with a tab, newline or carriage return among them every few runs (indented JSON,
 * and runs across the 8-byte words of gp__skip_ws_run). A new string. */
static char *with_blanks(const char *text)
{
    size_t n = strlen(text);
    char *out = malloc(n * 24 + 1);
    assert_non_null(out);
    size_t o = 0;
    int k = 0;
    bool in_str = false;
    for (const char *p = text; *p; p++) {
        out[o++] = *p;
        if (in_str) {
            if (*p == '\\')
                out[o++] = *++p;
            else if (*p == '"')
                in_str = false;
            continue;
        }
        if (*p == '"') {
            in_str = true;
            continue;
        }
        if (*p != ',' && *p != ':' && *p != '{' && *p != '[')
            continue;
        int len = k % 23;
        for (int i = 0; i < len; i++)
            out[o++] = k % 4 == 1 && i == len / 2 ? "\t\n\r"[k % 3] : ' ';
        k++;
    }
    out[o] = '\0';
    return out;
}

/* The generated events read alike with blanks between their tokens: runs of 0 to 22 blanks,
 * whole and in 7-byte and 4093-byte chunks (a run cut by the end of the buffered data), at every
 * level; and the same model as without them. */
static void blanks_alike(void **state)
{
    generated_events_alike(state); /* fills gen_buf */
    char *spaced = with_blanks(gen_buf);
    assert_true(strlen(spaced) > gen_len + gen_len / 4);
    assert_same_at_all_levels(NULL, spaced, 0);
    assert_same_at_all_levels(NULL, spaced, 7);
    assert_same_at_all_levels(NULL, spaced, 4093);
    gp_trace *a = NULL, *b = NULL;
    gp_error ea = {0}, eb = {0}, why = {0};
    if (read_at(GP__JSON_SIMD_AVX2, NULL, gen_buf, 0, &a, &ea) != GP_OK ||
        read_at(GP__JSON_SIMD_AVX2, NULL, spaced, 0, &b, &eb) != GP_OK)
        fail_msg("read failed: %s / %s", ea.msg, eb.msg);
    if (!gp_trace_equal(a, b, &why))
        fail_msg("blanks change the model: %s", why.msg);
    gp_trace_free(a);
    gp_trace_free(b);
    free(spaced);
}

/* gp__json_int_end_ok's table is the rule it replaced, for every byte. */
static void int_end_table_is_the_rule(void **state)
{
    (void)state;
    for (int b = 0; b < 256; b++) {
        char c = (char)b;
        bool rule = (unsigned)(c - '0') > 9 && c != '.' && (c | 0x20) != 'e' && c != '\0';
        if (gp__json_int_end_ok(c) != rule)
            fail_msg("byte 0x%02x: table %d, rule %d", b, gp__json_int_end_ok(c), rule);
    }
}

/* Malformed inputs fail alike at every level, message included. */
static void malformed_alike(void **state)
{
    (void)state;
    static const char *bad[] = {
        "[{\"ph\": \"X\", \"name\": \"abc",                              /* truncated string */
        "[{\"ph\": \"X\", \"name\": \"a\tb\", \"ts\": 1}]",              /* control character */
        "[{\"ph\": \"X\", \"name\": \"a\\qb\", \"ts\": 1}]",             /* bad escape */
        "[{\"ph\": \"X\", \"name\": \"a\\u12\", \"ts\": 1}]",            /* short \u */
        "[{\"ph\": \"X\", \"nam",                                        /* truncated key */
        "[{\"ph\": \"X\", \"ts\": 0123}]",                               /* leading zero */
        "[{\"ph\": \"X\", \"ts\": 12345678901234567890123}]",            /* out of range */
        "[{\"ph\": \"X\", \"ts\": 1, \"args\": {\"correlation\": 01}}]", /* leading zero in args */
        "[{\"ph\": \"X\", \"ts\": 1, \"args\": {\"k\" 1}}]",             /* no ':' */
        "[{\"ph\": \"X\", \"ts\": 1.}]",                                 /* "1." */
        "[{\"p\\h\": \"X\"}]",                                           /* bad escape in a key */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        gp_trace *t = NULL;
        gp_error e = {0};
        assert_int_not_equal(read_at(GP__JSON_SIMD_SCALAR, NULL, bad[i], 0, &t, &e), GP_OK);
        assert_same_at_all_levels(NULL, bad[i], 0);
        assert_same_at_all_levels(NULL, bad[i], 3);
    }
}

/* The first event named `name`, or NULL. */
static const gp_event *find_event(const gp_trace *t, const char *name)
{
    for (size_t i = 0; i < t->n_tracks; i++)
        for (size_t j = 0; j < t->tracks[i].n_events; j++) {
            const gp_event *e = &t->tracks[i].events[j];
            const char *s = gp_trace_str(t, e->name);
            if (s && strcmp(s, name) == 0)
                return e;
        }
    return NULL;
}

/* Integers of 1..18 digits (correlation ids) and durations with 0..5 or 21 decimals (4th digit
 * below and at or above 5, and .9995 which carries into the integer), read at every level,
 * against strtoull and the definition (µs * 1000, rounded half away from zero on the 4th
 * decimal). */
static void numbers_against_reference(void **state)
{
    (void)state;
    uint64_t seed = 0x9E3779B97F4A7C15ULL;
    gen_len = 0;
    gen("[");
    static const char *const fracs[] = {"57214", "57298", "00050", "99951",
                                        "123456789012345678901"};
    char digits[32][24], durs[32][48];
    for (int i = 0; i < 32; i++) {
        int nd = 1 + i % 18;
        for (int d = 0; d < nd; d++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            digits[i][d] = (char)('0' + (d == 0 ? 1 + (seed >> 33) % 9 : (seed >> 33) % 10));
        }
        digits[i][nd] = '\0';
        const char *fr = fracs[(i / 6) % 5];
        int fd = i % 6 == 5 && (i / 6) % 5 == 4 ? 21 : i % 6;
        snprintf(durs[i], sizeof durs[i], "%.*s%s%.*s", 1 + i % 9, digits[i], fd ? "." : "", fd,
                 fr);
        gen("%s{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"e%d\", \"pid\": 1, \"tid\": "
            "1, \"ts\": %d, \"dur\": %s, \"args\": {\"correlation\": %s}}",
            i ? ", " : "", i, 100 + i, durs[i], digits[i]);
    }
    gen("]");
    for (int l = 0; l < N_LEVELS; l++) {
        gp_trace *t = NULL;
        gp_error e = {0};
        assert_int_equal(read_at(levels[l], NULL, gen_buf, 0, &t, &e), GP_OK);
        for (int i = 0; i < 32; i++) {
            char nm[16];
            snprintf(nm, sizeof nm, "e%d", i);
            const gp_event *ev = find_event(t, nm);
            assert_non_null(ev);
            assert_int_equal(ev->correlation, (int64_t)strtoull(digits[i], NULL, 10));
            /* dur: integer part * 1000 + 3 decimals, +1 when the 4th is >= 5 */
            const char *dot = strchr(durs[i], '.');
            int64_t want = (int64_t)strtoull(durs[i], NULL, 10) * 1000;
            if (dot) {
                size_t nf = strlen(dot + 1);
                int64_t f = 0;
                for (size_t q = 0; q < 3; q++)
                    f = f * 10 + (q < nf ? dot[1 + q] - '0' : 0);
                want += f + (nf >= 4 && dot[4] >= '5');
            }
            assert_int_equal(ev->dur, want);
        }
        gp_trace_free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(levels_are_set),
        cmocka_unit_test(generated_events_alike),
        cmocka_unit_test(malformed_alike),
        cmocka_unit_test(numbers_against_reference),
        cmocka_unit_test(shared_traces_alike),
        cmocka_unit_test(blanks_alike),
        cmocka_unit_test(int_end_table_is_the_rule),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(gen_buf);
    return gp_test_exit(rc);
}
