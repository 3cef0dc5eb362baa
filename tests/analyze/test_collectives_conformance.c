/* Conformance with TraceLens's NcclAnalyser on the 8-rank job (../shared/traces/
 * multirank8_dlrm_v100, reference ../shared/traces/tracelens-reference/
 * multirank8_dlrm_v100.collectives.json): for every collective TraceLens matched, ours at the same
 * position has the same latency, skew in start and end, earliest arrival rank and average wait,
 * to 1 us; the reference's summary count, mean/min/max latency and skews agree too. The
 * straggler finding of the job names rank 7 and the wait it caused: the sum, over the collectives
 * it arrived last at, of TraceLens's average wait x 8 ranks. Skips (77) without the shared
 * traces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gpuprof/analyze.h"
#include "gpuprof/collectives.h"
#include "gpuprof/trace.h"
#include "render/render_internal.h"

static char shared[4096];

static double num(json_object *o, const char *key)
{
    json_object *v;
    assert_true(json_object_object_get_ex(o, key, &v));
    assert_true(v != NULL && json_object_get_type(v) != json_type_null);
    return json_object_get_double(v);
}

#define NEAR_US(ours_ns, ref_us, what, id)                                                         \
    do {                                                                                           \
        if (fabs((double)(ours_ns) / 1e3 - (ref_us)) > 1.0)                                        \
            fail_msg("collective %s %s: ours %.3f us, TraceLens %.3f us", id, what,                \
                     (double)(ours_ns) / 1e3, (double)(ref_us));                                   \
    } while (0)

static void multirank8_matches_tracelens(void **state)
{
    (void)state;
    char ref_path[4300], job_path[4300];
    snprintf(ref_path, sizeof ref_path,
             "%s/traces/tracelens-reference/multirank8_dlrm_v100.collectives.json", shared);
    snprintf(job_path, sizeof job_path, "%s/traces/multirank8_dlrm_v100", shared);
    json_object *ref = json_object_from_file(ref_path);
    assert_non_null(ref);
    gp_read_opts rd;
    gp_read_opts_init(&rd);
    rd.quiet = true;
    gp_job *job = NULL;
    gp_error err = {0};
    assert_int_equal(gp_job_read(job_path, &rd, &job, &err), GP_OK);
    assert_int_equal(job->n_ranks, 8);
    gp_collectives *c = NULL;
    assert_int_equal(gp_collectives_analyze(job, NULL, &c, &err), GP_OK);
    /* 2023 traces: no process-group metadata, so TraceLens's simplified mode and our kernel order
     */
    assert_true(c->by_order);
    assert_false(c->aligned); /* one host: no offset to align */
    json_object *detail;
    assert_true(json_object_object_get_ex(ref, "detail", &detail));
    size_t n = json_object_array_length(detail);
    assert_int_equal(c->n_colls, n);
    for (size_t i = 0; i < n; i++) {
        json_object *row = json_object_array_get_idx(detail, i);
        json_object *idv;
        assert_true(json_object_object_get_ex(row, "collective_id", &idv));
        const char *id = json_object_get_string(idv);
        const gp_collective *k = &c->colls[strtoul(id, NULL, 10)];
        assert_int_equal(k->n_members, 8);
        assert_int_equal(k->doubt, GP_COLL_OK);
        NEAR_US(k->latency, num(row, "comm_latency"), "comm_latency", id);
        NEAR_US(k->start_skew, num(row, "skew in start time"), "skew in start time", id);
        NEAR_US(k->end_skew, num(row, "skew in end time"), "skew in end time", id);
        NEAR_US(k->avg_wait, num(row, "avg_wait_time"), "avg_wait_time", id);
        assert_int_equal(k->first_rank, (int)num(row, "earliest arrival rank"));
    }
    /* TraceLens's one summary row (every collective, unnamed): our latencies and skews over all
     * collectives give the same mean, min and max */
    json_object *summary;
    assert_true(json_object_object_get_ex(ref, "summary", &summary));
    assert_int_equal(json_object_array_length(summary), 1);
    json_object *s = json_object_array_get_idx(summary, 0);
    assert_int_equal((size_t)num(s, "count"), c->n_colls);
    double lat = 0, skew = 0, end = 0, lat_min = INFINITY, lat_max = 0;
    for (size_t i = 0; i < c->n_colls; i++) {
        lat += (double)c->colls[i].latency;
        skew += (double)c->colls[i].start_skew;
        end += (double)c->colls[i].end_skew;
        lat_min = fmin(lat_min, (double)c->colls[i].latency);
        lat_max = fmax(lat_max, (double)c->colls[i].latency);
    }
    NEAR_US(lat / (double)n, num(s, "comm_latency_mean"), "summary latency mean", "all");
    NEAR_US(lat_min, num(s, "comm_latency_min"), "summary latency min", "all");
    NEAR_US(lat_max, num(s, "comm_latency_max"), "summary latency max", "all");
    NEAR_US(skew / (double)n, num(s, "skew in start time_mean"), "summary start skew", "all");
    NEAR_US(end / (double)n, num(s, "skew in end time_mean"), "summary end skew", "all");
    NEAR_US(lat, num(s, "Total comm latency (ms)") * 1e3, "total latency", "all");
    gp_collectives_free(c);
    gp_job_free(job);
    json_object_put(ref);
}

/* The straggler finding: rank 7, the collectives it arrived last at, and the wait it caused,
 * against TraceLens's average waits (which name no latest rank: the arrival order is ours). */
static void multirank8_straggler_finding(void **state)
{
    (void)state;
    char ref_path[4300], job_path[4300];
    snprintf(ref_path, sizeof ref_path,
             "%s/traces/tracelens-reference/multirank8_dlrm_v100.collectives.json", shared);
    snprintf(job_path, sizeof job_path, "%s/traces/multirank8_dlrm_v100", shared);
    json_object *ref = json_object_from_file(ref_path), *detail;
    assert_non_null(ref);
    assert_true(json_object_object_get_ex(ref, "detail", &detail));
    gp_read_opts rd;
    gp_read_opts_init(&rd);
    rd.quiet = true;
    gp_job *job = NULL;
    gp_error err = {0};
    assert_int_equal(gp_job_read(job_path, &rd, &job, &err), GP_OK);
    gp_analysis *a = NULL;
    assert_int_equal(gp_analyze_job(job, NULL, &a, &err), GP_OK);
    const gp_collectives *c = a->collectives;
    assert_non_null(c);
    const gp_finding *f = NULL;
    for (size_t i = 0; i < a->n_findings; i++)
        if (strcmp(a->findings[i].rule, "straggler") == 0) {
            assert_null(f); /* one: the medians-of-totals fallback is not used */
            f = &a->findings[i];
        }
    assert_non_null(f);
    assert_int_equal(f->rank, 7);
    assert_int_equal(c->straggler, 7);
    double tl = 0, caused = 0, last = 0;
    uint64_t arrived = 0;
    for (size_t i = 0; i < json_object_array_length(detail); i++) {
        json_object *row = json_object_array_get_idx(detail, i), *idv;
        assert_true(json_object_object_get_ex(row, "collective_id", &idv));
        const gp_collective *k = &c->colls[strtoul(json_object_get_string(idv), NULL, 10)];
        if (k->last_rank == 7) {
            tl += num(row, "avg_wait_time") * 8.0; /* us */
            arrived++;
        }
    }
    assert_true(gp_finding_metric(f, "caused_wait", &caused));
    assert_true(gp_finding_metric(f, "arrived_last", &last));
    assert_float_equal(last, (double)arrived, 0);
    assert_float_equal(last, 5, 0);
    NEAR_US(caused, tl, "caused wait", "rank 7");
    NEAR_US(caused, 35552.0, "caused wait", "rank 7");
    assert_int_equal(f->gain_ns, (gp_ns)caused);
    assert_int_equal(f->objects[0].kind, GP_OBJ_COLLECTIVE);
    assert_string_equal(f->objects[0].name, "sendrecv #0");
    NEAR_US(f->objects[0].time, num(json_object_array_get_idx(detail, 0), "avg_wait_time") * 8.0,
            "wait at", "0");
    char title[512];
    gp__finding_title(f, title, sizeof title);
    assert_non_null(strstr(title, "Arrived last at 5 of 8 collectives (sendrecv #0, "));
    assert_non_null(strstr(title, "the others waited 35.552 ms for it"));
    gp_analysis_free(a);
    gp_job_free(job);
    json_object_put(ref);
}

int main(void)
{
    const char *dir = getenv("GP_SHARED_DIR");
    struct stat st;
    if (!dir)
        return 77;
    snprintf(shared, sizeof(shared), "%s", dir);
    char probe[4300];
    snprintf(probe, sizeof(probe),
             "%s/traces/tracelens-reference/multirank8_dlrm_v100.collectives.json", shared);
    if (stat(probe, &st) != 0)
        return 77;
    const struct CMUnitTest tests[] = {cmocka_unit_test(multirank8_matches_tracelens),
                                       cmocka_unit_test(multirank8_straggler_finding)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
