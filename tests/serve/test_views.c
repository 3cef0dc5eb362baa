/* The registry of views (include/gpuprof/views.h, src/app/views.c) in C, where the sanitizer and
 * ThreadSanitizer builds run it: every view renders the example trace (a page as HTML, a document
 * as JSON), the server's bar lands right after <body> and is the only difference, parameters are
 * checked, and a description that is not the registry's is refused. The bytes against the CLI and
 * Python on every shared trace: python/tests/test_views.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/shared_traces.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/views.h"
#include "gpuprof/trace.h"
#include "render/serve_pages.h"

/* The example trace as a job of one (read with op shapes: every view's option). */
static gp_job *example_job(void)
{
    const char *src = getenv("GP_SOURCE_DIR");
    if (!src)
        skip();
    char path[4096];
    snprintf(path, sizeof path, "%s/examples/traces/example_step.json", src);
    gp_read_opts rd;
    gp_read_opts_init(&rd);
    rd.quiet = true;
    rd.keep_op_shapes = true;
    gp_job *job = NULL;
    assert_int_equal(gp_job_read(path, &rd, &job, NULL), GP_OK);
    return job;
}

/* View v of job rendered (nav: the server's bar for "x.json", NULL: none) as a string. */
static char *render(const gp_view_info *v, const gp_job *job, const gp_view_params *p,
                    const char *nav)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    assert_non_null(fp);
    gp_error err = {0};
    gp_status st = gp__view_render(v, job, p, nav, fp, &err);
    assert_int_equal(fclose(fp), 0);
    if (st != GP_OK)
        fail_msg("%s: %s (%s)", v->name, gp_strerror(st), err.msg);
    return buf;
}

static void registry_is_consistent(void **state)
{
    (void)state;
    size_t n = gp_view_count();
    assert_true(n >= 13);
    assert_null(gp_view_at(n));
    for (size_t i = 0; i < n; i++) {
        const gp_view_info *v = gp_view_at(i);
        assert_ptr_equal(gp_view_find(v->name), v);
        assert_int_equal(v->html, strncmp(v->route, "/api/", 5) != 0);
        assert_int_equal(v->route[strlen(v->route) - 1], '/');
        for (size_t k = 0; k < i; k++) /* names and routes once */
            assert_true(strcmp(gp_view_at(k)->name, v->name) != 0 &&
                        strcmp(gp_view_at(k)->route, v->route) != 0);
        assert_non_null(v->python);
        assert_non_null(v->doc);
    }
    assert_null(gp_view_find("nothing"));
    assert_null(gp_view_find(NULL));
}

static void every_view_renders(void **state)
{
    (void)state;
    gp_job *job = example_job();
    gp_view_params p = {.title = "x.json"};
    for (size_t i = 0; i < gp_view_count(); i++) {
        const gp_view_info *v = gp_view_at(i);
        char *plain = render(v, job, &p, NULL);
        char *served = render(v, job, &p, "x.json");
        if (v->html) {
            assert_memory_equal(plain, "<!DOCTYPE html>", 15);
            /* the bar right after the first <body...> tag, and nothing else differs */
            char *bar = gp__serve_nav_html("x.json", NULL, 0);
            assert_non_null(bar);
            const char *body = strchr(strstr(plain, "<body"), '>') + 1;
            size_t head = (size_t)(body - plain), blen = strlen(bar);
            assert_memory_equal(served, plain, head);
            assert_memory_equal(served + head, "\n<nav id=\"gp-serve-nav\"", 23);
            const char *end = strstr(served + head, "</nav>\n");
            assert_non_null(end);
            assert_string_equal(end + 7, body);
            assert_true((size_t)(end + 7 - (served + head)) >= blen - 8); /* links added */
            free(bar);
        } else {
            assert_true(plain[0] == '{' || plain[0] == '[');
            assert_string_equal(served, plain); /* a document never carries the bar */
        }
        free(plain);
        free(served);
    }
    gp_job_free(job);
}

static void parameters_are_checked(void **state)
{
    (void)state;
    gp_error err = {0};
    const gp_view_info *ops = gp_view_find("ops"), *flame = gp_view_find("flame");
    assert_int_equal(gp_view_check_params(ops, &(gp_view_params){.by = "shape"}, &err), GP_OK);
    assert_int_equal(gp_view_check_params(ops, &(gp_view_params){.by = "bogus"}, &err), GP_EINVAL);
    assert_non_null(strstr(err.msg, "by: expected"));
    assert_int_equal(gp_view_check_params(flame, &(gp_view_params){.by = "module"}, &err), GP_OK);
    assert_int_equal(gp_view_check_params(flame, &(gp_view_params){.by = "shape"}, &err),
                     GP_EINVAL);
    assert_int_equal(gp_view_check_params(flame, &(gp_view_params){.weight = "gpu"}, &err), GP_OK);
    assert_int_equal(gp_view_check_params(flame, &(gp_view_params){.weight = "x"}, &err),
                     GP_EINVAL);
    assert_int_equal(gp_view_check_params(flame, NULL, &err), GP_OK);
    const gp_view_info *tl = gp_view_find("timeline");
    assert_int_equal(gp_view_check_params(tl, &(gp_view_params){.critical_path = "1"}, &err),
                     GP_OK);
    assert_int_equal(gp_view_check_params(tl, &(gp_view_params){.critical_path = "0"}, &err),
                     GP_OK);
    assert_int_equal(gp_view_check_params(tl, &(gp_view_params){.critical_path = "yes"}, &err),
                     GP_EINVAL);
    assert_non_null(strstr(err.msg, "critical_path: expected 1 or 0"));
    /* a copy of an entry is not an entry */
    gp_view_info copy = *ops;
    assert_int_equal(gp_view_check_params(&copy, NULL, &err), GP_EINVAL);
    gp_job *job = example_job();
    assert_int_equal(gp_view_render(&copy, job, NULL, stdout, &err), GP_EINVAL);
    assert_int_equal(gp_view_render(ops, NULL, NULL, stdout, &err), GP_EINVAL);
    gp_job_free(job);
}

/* ?by= changes the ops document, as gpuprof ops --by does, and ?by=module the flame graph's. */
static void parameters_reach_the_builder(void **state)
{
    (void)state;
    gp_job *job = example_job();
    const gp_view_info *ops = gp_view_find("ops");
    char *by_name = render(ops, job, NULL, NULL);
    char *by_kernel = render(ops, job, &(gp_view_params){.by = "kernel"}, NULL);
    char *kernels = render(gp_view_find("kernels"), job, NULL, NULL);
    assert_string_not_equal(by_name, by_kernel);
    assert_string_equal(by_kernel, kernels);
    free(by_name);
    free(by_kernel);
    free(kernels);
    /* ?critical_path=1 on the timeline page: the overlay's data and legend (gp-tl-cp), as gpuprof
     * timeline --critical-path draws them; =0 is the default page */
    const gp_view_info *tl = gp_view_find("timeline");
    char *plain = render(tl, job, NULL, NULL);
    char *off = render(tl, job, &(gp_view_params){.critical_path = "0"}, NULL);
    char *cp = render(tl, job, &(gp_view_params){.critical_path = "1"}, NULL);
    assert_string_equal(plain, off);
    assert_null(strstr(plain, "gp-tl-cp"));
    assert_non_null(strstr(cp, "gp-tl-cp"));
    free(plain);
    free(off);
    free(cp);
    gp_job_free(job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(registry_is_consistent),
        cmocka_unit_test(every_view_renders),
        cmocka_unit_test(parameters_are_checked),
        cmocka_unit_test(parameters_reach_the_builder),
    };
    return gp_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
