/* Flame output size (issue 38 item 3): folded and speedscope lines repeat their whole stack, so a
 * trace nesting D ranges deep gives about D^2 / 2 frames of output (a 3.7 MB trace gave a 5.2 GB
 * .folded). gp_flame_stack_bytes says the size before anything is written; over
 * gp_flame_render_opts.max_bytes the render fails with GP_ELIMIT and writes nothing. */
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

#include "gpuprof/report.h"
#include "gpuprof/trace.h"

/* depth CPU ops nested on one thread, op d [d, 2 * depth - d) ns, each named "op_<d>". */
static gp_trace *nested_trace(size_t depth)
{
    gp_trace *t;
    assert_int_equal(gp_trace_create("deep", &t), GP_OK);
    uint32_t cpu;
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &cpu), GP_OK);
    for (size_t d = 0; d < depth; d++) {
        char name[32];
        snprintf(name, sizeof name, "op_%zu", d);
        gp_strid id;
        assert_int_equal(gp_trace_intern(t, name, strlen(name), &id), GP_OK);
        gp_event ev = {.ts = (gp_ns)d,
                       .dur = (gp_ns)(2 * (depth - d)),
                       .name = id,
                       .track = cpu,
                       .kind = (uint8_t)GP_EV_CPU_OP};
        assert_int_equal(gp_trace_add_event(t, &ev), GP_OK);
    }
    assert_int_equal(gp_trace_finish(t), GP_OK);
    return t;
}

static gp_flame_tree *tree_of(gp_trace *t)
{
    gp_flame_opts fo;
    gp_flame_opts_init(&fo);
    fo.weight = GP_FLAME_CPU;
    gp_flame_tree *tree = NULL;
    assert_int_equal(gp_flame_build(gp_traces_const(&t), 1, &fo, &tree, NULL), GP_OK);
    return tree;
}

/* The bytes of fmt's output, rendered without a limit. */
static size_t rendered_bytes(const gp_flame_tree *tree, gp_flame_format fmt)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    assert_non_null(fp);
    gp_flame_render_opts ro;
    gp_flame_render_opts_init(&ro);
    ro.max_bytes = 0;
    assert_int_equal(gp_flame_render(tree, fmt, &ro, fp, NULL), GP_OK);
    assert_int_equal(fclose(fp), 0);
    free(buf);
    return len;
}

/* The folded size is exact: it equals what rendering writes. The speedscope figure bounds the
 * samples, which grow the same way: the whole file stays under it plus the frames and header. */
static void stack_bytes_are_what_is_written(void **state)
{
    (void)state;
    gp_trace *t = nested_trace(300);
    gp_flame_tree *tree = tree_of(t);
    uint64_t folded = gp_flame_stack_bytes(tree, GP_FLAME_FOLDED);
    assert_int_equal(folded, rendered_bytes(tree, GP_FLAME_FOLDED));
    /* quadratic in depth: 300 nested ops give > 300 * 299 / 2 names of >= 4 bytes */
    assert_true(folded > 300u * 299 / 2 * 4);
    uint64_t samples = gp_flame_stack_bytes(tree, GP_FLAME_SPEEDSCOPE);
    size_t whole = rendered_bytes(tree, GP_FLAME_SPEEDSCOPE);
    assert_true(samples > 300u * 299 / 2);
    assert_true(whole <= samples + 300 * 64 + 4096);
    assert_int_equal(gp_flame_stack_bytes(tree, GP_FLAME_HTML), 0);
    gp_flame_tree_free(tree);
    gp_trace_free(t);
}

/* Over the limit: GP_ELIMIT, nothing written to the stream, and gp_flame_write says the size and
 * the limit, leaving no file. HTML has no such limit. */
static void over_the_limit_is_refused(void **state)
{
    (void)state;
    gp_trace *t = nested_trace(2000);
    gp_flame_tree *tree = tree_of(t);
    uint64_t folded = gp_flame_stack_bytes(tree, GP_FLAME_FOLDED);
    assert_true(folded > (uint64_t)2000 * 1999 / 2 * 5);
    gp_flame_render_opts ro;
    gp_flame_render_opts_init(&ro);
    assert_int_equal(ro.max_bytes, GP_FLAME_MAX_BYTES);
    uint64_t samples = gp_flame_stack_bytes(tree, GP_FLAME_SPEEDSCOPE);
    ro.max_bytes = (folded < samples ? folded : samples) - 1;
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    assert_int_equal(gp_flame_render(tree, GP_FLAME_FOLDED, &ro, fp, NULL), GP_ELIMIT);
    assert_int_equal(gp_flame_render(tree, GP_FLAME_SPEEDSCOPE, &ro, fp, NULL), GP_ELIMIT);
    assert_int_equal(fclose(fp), 0);
    assert_int_equal(len, 0);
    free(buf);
    char path[] = "/tmp/gp_flame_limit_XXXXXX";
    assert_non_null(mkdtemp(path));
    char out[64];
    snprintf(out, sizeof out, "%s/deep.folded", path);
    gp_error err = {0};
    assert_int_equal(gp_flame_write(tree, GP_FLAME_FOLDED, &ro, out, &err), GP_ELIMIT);
    assert_non_null(strstr(err.msg, "limit"));
    assert_non_null(strstr(err.msg, "deep.folded"));
    struct stat sb;
    assert_int_not_equal(stat(out, &sb), 0);
    ro.max_bytes = folded; /* exactly the size: allowed */
    assert_int_equal(gp_flame_write(tree, GP_FLAME_FOLDED, &ro, out, &err), GP_OK);
    assert_int_equal(stat(out, &sb), 0);
    assert_int_equal((uint64_t)sb.st_size, folded);
    unlink(out);
    ro.max_bytes = 1;
    snprintf(out, sizeof out, "%s/deep.html", path);
    assert_int_equal(gp_flame_write(tree, GP_FLAME_HTML, &ro, out, &err), GP_OK);
    unlink(out);
    rmdir(path);
    gp_flame_tree_free(tree);
    gp_trace_free(t);
}

/* The builds and the render fill a gp_error (issue 32): the render over its limit gives the size
 * and the limit in MB, a build with no weight and a diff of unlike trees say why. */
static void errors_say_what_failed(void **state)
{
    (void)state;
    gp_trace *t = nested_trace(2000);
    gp_flame_tree *tree = tree_of(t);
    uint64_t folded = gp_flame_stack_bytes(tree, GP_FLAME_FOLDED);
    gp_flame_render_opts ro;
    gp_flame_render_opts_init(&ro);
    ro.max_bytes = 1000000;
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    gp_error err = {0};
    assert_int_equal(gp_flame_render(tree, GP_FLAME_FOLDED, &ro, fp, &err), GP_ELIMIT);
    assert_int_equal(err.status, GP_ELIMIT);
    char size[64];
    snprintf(size, sizeof size, "%.0f MB, over the 1 MB limit", (double)folded / 1e6);
    assert_non_null(strstr(err.msg, size));
    assert_int_equal(fclose(fp), 0);
    free(buf);

    gp_flame_opts fo;
    gp_flame_opts_init(&fo);
    fo.weight = GP_FLAME_GPU; /* a trace of CPU ops only */
    gp_flame_tree *none = NULL;
    err = (gp_error){0};
    assert_int_equal(gp_flame_build(gp_traces_const(&t), 1, &fo, &none, &err), GP_EEMPTY);
    assert_null(none);
    assert_int_equal(err.status, GP_EEMPTY);
    assert_non_null(strstr(err.msg, "carries weight"));

    gp_flame_tree gpu = *tree;
    gpu.weight = GP_FLAME_GPU;
    gp_flame_tree *diff = NULL;
    err = (gp_error){0};
    assert_int_equal(gp_flame_diff(tree, &gpu, &diff, &err), GP_EINVAL);
    assert_int_equal(err.status, GP_EINVAL);
    assert_non_null(strstr(err.msg, "differ in weight"));
    gp_flame_tree_free(tree);
    gp_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(errors_say_what_failed),
        cmocka_unit_test(stack_bytes_are_what_is_written),
        cmocka_unit_test(over_the_limit_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
