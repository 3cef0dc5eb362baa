/* Scaling of gp_job_read in rank files (issue 38 item 3): a folder of 10x the files costs at most
 * 15x the time (a ratio measured here, tests/common/scaling.h). Assigning ranks scanned every
 * file per file: 20,000 files took 2.55 s. Half the files claim a rank (every other number), half
 * claim none and take the lowest free ones; every rank ends distinct. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/scaling.h"
#include "gpuprof/trace.h"

typedef struct folder {
    size_t n;
    char dir[64];
} folder;

static void fill(folder *f, size_t n)
{
    f->n = n;
    snprintf(f->dir, sizeof f->dir, "/tmp/gp_jobscale_XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    for (size_t i = 0; i < n; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s/r%06zu.json", f->dir, i);
        FILE *fp = fopen(path, "w");
        assert_non_null(fp);
        if (i % 2 == 0)
            fprintf(fp, "{\"distributedInfo\": {\"rank\": %zu}, ", i);
        else
            fputs("{", fp);
        fputs("\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1,"
              " \"tid\": 1, \"ts\": 1, \"dur\": 1}]}",
              fp);
        assert_int_equal(fclose(fp), 0);
    }
}

static void empty(folder *f)
{
    for (size_t i = 0; i < f->n; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s/r%06zu.json", f->dir, i);
        unlink(path);
    }
    rmdir(f->dir);
    f->n = 0;
}

static double read_cost(void *ctx, size_t n)
{
    folder *f = ctx;
    if (f->n != n) {
        if (f->n)
            empty(f);
        fill(f, n);
    }
    gp_read_opts o;
    gp_read_opts_init(&o);
    gp_job *job = NULL;
    gp_error err = {0};
    double t0 = gp_test_now();
    assert_int_equal(gp_job_read(f->dir, &o, &job, &err), GP_OK);
    double t1 = gp_test_now();
    assert_int_equal(job->n_ranks, n);
    assert_true(job->ranks_from_file_order);
    for (size_t i = 1; i < n; i++)
        assert_true(job->ranks[i]->rank > job->ranks[i - 1]->rank);
    assert_int_equal(job->ranks[0]->rank, 0);
    assert_int_equal(job->ranks[n - 1]->rank, (int)n - 1); /* no gaps: 0..n-1 all taken */
    gp_job_free(job);
    return t1 - t0;
}

static void rank_files_scale_linearly(void **state)
{
    (void)state;
    folder f = {0};
    gp_test_assert_scales("gp_job_read, rank files", read_cost, &f, 2000);
    if (f.n)
        empty(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rank_files_scale_linearly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
