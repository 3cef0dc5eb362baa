/* Conformance of the critical path's HTA mode with Holistic Trace Analysis: for every reference in
 * $GP_SHARED_DIR/traces/hta-reference/critical_path (HTA's critical_path_analysis +
 * get_critical_path_breakdown on the shared traces, with the annotation and instance it used),
 * `--critical-path hta` must give each bound_by class within 2 percentage points (the issue's
 * tolerance; a class HTA does not list must be below it too). One line per trace reports the
 * lengths and the largest difference. simple_add.overlaid.json.gz is HTA's own overlay: the events
 * it marks critical must be the events on gpuprof's path. Skips (77) without the shared traces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "gpuprof/analyze.h"
#include "gpuprof/trace.h"

static char shared[4096];

/* The trace a reference was computed on. */
static bool input_of(const char *name, char *out, size_t cap)
{
    struct stat st;
    snprintf(out, cap, "%s/traces/%s.json.gz", shared, name);
    if (stat(out, &st) == 0)
        return true;
    snprintf(out, cap, "%s/traces/critical_path_hta/%s.json.gz", shared, name);
    if (stat(out, &st) == 0)
        return true;
    /* multirank8_dlrm_v100_rank0: worker0 of the job folder */
    if (strncmp(name, "multirank8_dlrm_v100_rank", 25) != 0)
        return false;
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/traces/multirank8_dlrm_v100", shared);
    DIR *d = opendir(dir);
    if (!d)
        return false;
    struct dirent *de;
    bool found = false;
    char want[32];
    snprintf(want, sizeof want, "worker%s_", name + 25);
    while (!found && (de = readdir(d)) != NULL)
        if (strncmp(de->d_name, want, strlen(want)) == 0) {
            snprintf(out, cap, "%s/%s", dir, de->d_name);
            found = true;
        }
    closedir(d);
    return found;
}

static gp_trace *read_trace(const char *path)
{
    gp_read_opts rd;
    gp_read_opts_init(&rd);
    rd.quiet = true;
    gp_trace *t = NULL;
    gp_error err = {0};
    assert_int_equal(gp_trace_read(path, &rd, &t, &err), GP_OK);
    return t;
}

/* HTA-mode analysis of t for the reference's annotation and instance. */
static gp_analysis *analyze_as(const gp_trace *t, json_object *ref)
{
    json_object *ann, *inst;
    assert_true(json_object_object_get_ex(ref, "annotation", &ann));
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    o.cp_hta = true;
    o.cp_annotation = json_object_get_string(ann);
    if (json_object_object_get_ex(ref, "instance", &inst) && inst &&
        json_object_get_type(inst) == json_type_int)
        o.cp_instance = json_object_get_int64(inst);
    gp_analysis *a = NULL;
    gp_error err = {0};
    assert_int_equal(gp_analyze_trace(t, &o, &a, &err), GP_OK);
    return a;
}

static double ref_pct(json_object *ref, const char *cls)
{
    json_object *pct, *v;
    assert_true(json_object_object_get_ex(ref, "bound_by_pct", &pct));
    return json_object_object_get_ex(pct, cls, &v) ? json_object_get_double(v) : 0.0;
}

/* One reference: 0 when every class is within 2 points. */
static int check_one(const char *name, json_object *ref)
{
    char input[4600];
    if (!input_of(name, input, sizeof input)) {
        fprintf(stderr, "%-30s no input trace\n", name);
        return 1;
    }
    gp_trace *t = read_trace(input);
    gp_analysis *a = analyze_as(t, ref);
    assert_int_equal(a->n_ranks, 1);
    const gp_rank_analysis *r = &a->ranks[0];
    json_object *len;
    assert_true(json_object_object_get_ex(ref, "critical_path_us", &len));
    int bad = 0;
    double worst = 0;
    bool gpu_edges = false;
    if (r->n_critical_paths != 1 || !r->critical_paths[0].valid) {
        fprintf(stderr, "%-30s no path: %s\n", name,
                r->n_critical_paths ? r->critical_paths[0].note : "none");
        bad = 1;
    } else {
        const gp_critical_path *cp = &r->critical_paths[0];
        for (int c = 0; c < GP_CP_COUNT; c++) {
            if (c == GP_CP_DEPENDENCY)
                continue;
            double want = ref_pct(ref, gp_cp_class_name((gp_cp_class)c));
            double got = isnan(cp->pct[c]) ? 0.0 : cp->pct[c];
            gpu_edges |= c != GP_CP_CPU && c != GP_CP_DATA_LOADING && want > 0;
            worst = fmax(worst, fabs(want - got));
            if (fabs(want - got) > 2.0) {
                fprintf(stderr, "  MISMATCH %s %s: HTA %.3f %%, gpuprof %.3f %%\n", name,
                        gp_cp_class_name((gp_cp_class)c), want, got);
                bad = 1;
            }
        }
        fprintf(stderr,
                "%-30s HTA %9.0f us, gpuprof %11.3f us, largest class difference %.3f %s%s\n", name,
                json_object_get_double(len), (double)cp->length / 1000.0, worst,
                gpu_edges ? "(GPU edges)" : "(CPU only)", bad ? " DIFFERS" : "");
    }
    gp_analysis_free(a);
    gp_trace_free(t);
    return bad;
}

static void hta_critical_path_references(void **state)
{
    (void)state;
    char dirpath[4200];
    snprintf(dirpath, sizeof dirpath, "%s/traces/hta-reference/critical_path", shared);
    DIR *d = opendir(dirpath);
    if (!d)
        skip();
    struct dirent *de;
    int checked = 0, bad = 0;
    while ((de = readdir(d)) != NULL) {
        size_t n = strlen(de->d_name);
        if (n < 6 || strcmp(de->d_name + n - 5, ".json") != 0)
            continue;
        char name[256], refpath[4600];
        snprintf(name, sizeof name, "%.*s", (int)(n - 5), de->d_name);
        snprintf(refpath, sizeof refpath, "%s/%s", dirpath, de->d_name);
        json_object *ref = json_object_from_file(refpath);
        assert_non_null(ref);
        bad += check_one(name, ref);
        checked++;
        json_object_put(ref);
    }
    closedir(d);
    assert_true(checked >= 10);
    assert_int_equal(bad, 0);
}

/* (name, start in ns from the file's time origin) of an event. */
typedef struct ev_key {
    char name[200];
    long long ts;
} ev_key;

static int cmp_key(const void *x, const void *y)
{
    const ev_key *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    return c ? c : (a->ts > b->ts) - (a->ts < b->ts);
}

/* The gzip-compressed JSON file at path, parsed. */
static json_object *read_gz_json(const char *path)
{
    gzFile gz = gzopen(path, "rb");
    assert_non_null(gz);
    size_t n = 0, cap = 1 << 20;
    char *buf = malloc(cap);
    assert_non_null(buf);
    int got;
    while ((got = gzread(gz, buf + n, (unsigned)(cap - n))) > 0) {
        n += (size_t)got;
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
    }
    gzclose(gz);
    json_tokener *tok = json_tokener_new_ex(64);
    json_object *o = json_tokener_parse_ex(tok, buf, (int)n);
    json_tokener_free(tok);
    free(buf);
    assert_non_null(o);
    return o;
}

/* The (name, ts) of the complete events an overlay marks critical (args.critical == 1). */
static ev_key *critical_of_overlay(const char *path, size_t *n)
{
    json_object *doc = read_gz_json(path), *evs;
    assert_true(json_object_object_get_ex(doc, "traceEvents", &evs));
    size_t len = json_object_array_length(evs);
    ev_key *out = calloc(len + 1, sizeof(*out));
    assert_non_null(out);
    *n = 0;
    for (size_t i = 0; i < len; i++) {
        json_object *e = json_object_array_get_idx(evs, i), *ph, *args, *crit, *name, *ts;
        if (!json_object_object_get_ex(e, "ph", &ph) ||
            strcmp(json_object_get_string(ph), "X") != 0 ||
            !json_object_object_get_ex(e, "args", &args) ||
            !json_object_object_get_ex(args, "critical", &crit) ||
            json_object_get_type(crit) != json_type_int || json_object_get_int(crit) != 1 ||
            !json_object_object_get_ex(e, "name", &name) ||
            !json_object_object_get_ex(e, "ts", &ts))
            continue;
        snprintf(out[*n].name, sizeof out[*n].name, "%s", json_object_get_string(name));
        out[*n].ts = json_object_get_type(ts) == json_type_int
                         ? (long long)json_object_get_int64(ts) * 1000
                         : llround(json_object_get_double(ts) * 1000.0);
        (*n)++;
    }
    json_object_put(doc);
    return out;
}

/* The critical_path flow points of an overlay as "ph type ts_us" strings, sorted. */
static char **flows_of_overlay(const char *path, size_t *n)
{
    json_object *doc = read_gz_json(path), *evs;
    assert_true(json_object_object_get_ex(doc, "traceEvents", &evs));
    size_t len = json_object_array_length(evs);
    char **out = calloc(len + 1, sizeof(*out));
    assert_non_null(out);
    *n = 0;
    for (size_t i = 0; i < len; i++) {
        json_object *e = json_object_array_get_idx(evs, i), *cat, *ph, *ts, *args, *type;
        if (!json_object_object_get_ex(e, "cat", &cat) ||
            strcmp(json_object_get_string(cat), "critical_path") != 0 ||
            !json_object_object_get_ex(e, "ph", &ph) || !json_object_object_get_ex(e, "ts", &ts) ||
            !json_object_object_get_ex(e, "args", &args) ||
            !json_object_object_get_ex(args, "type", &type))
            continue;
        char buf[160];
        snprintf(buf, sizeof buf, "%s %s %lld", json_object_get_string(ph),
                 json_object_get_string(type), (long long)floor(json_object_get_double(ts)));
        out[(*n)++] = strdup(buf);
    }
    json_object_put(doc);
    return out;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* HTA's overlay of simple_add marks critical events with args.critical = 1: the same set as the
 * events on gpuprof's path (annotation and instance of the reference). */
static void simple_add_overlay(void **state)
{
    (void)state;
    char ov[4600], refpath[4600], input[4600];
    snprintf(ov, sizeof ov, "%s/traces/hta-reference/critical_path/simple_add.overlaid.json.gz",
             shared);
    snprintf(refpath, sizeof refpath, "%s/traces/hta-reference/critical_path/simple_add.json",
             shared);
    struct stat st;
    if (stat(ov, &st) != 0 || !input_of("simple_add", input, sizeof input))
        skip();
    size_t n_want = 0;
    ev_key *want = critical_of_overlay(ov, &n_want);
    assert_true(n_want > 0);
    /* The overlay's critical events span the whole trace: it is the path of annotation "" */
    json_object *ref = json_object_new_object();
    json_object_object_add(ref, "annotation", json_object_new_string(""));
    gp_trace *t = read_trace(input);
    gp_analysis *a = analyze_as(t, ref);
    const gp_critical_path *cp = &a->ranks[0].critical_paths[0];
    ev_key *got = calloc(cp->n_events + 1, sizeof(*got));
    assert_non_null(got);
    for (size_t i = 0; i < cp->n_events; i++) {
        snprintf(got[i].name, sizeof got[i].name, "%s", gp_trace_str(t, cp->events[i]->name));
        got[i].ts = (long long)(cp->events[i]->ts - t->base_time_ns);
    }
    qsort(want, n_want, sizeof *want, cmp_key);
    qsort(got, cp->n_events, sizeof *got, cmp_key);
    size_t i = 0, j = 0, missing = 0, extra = 0;
    while (i < n_want || j < cp->n_events) {
        int c = i == n_want ? 1 : j == cp->n_events ? -1 : cmp_key(&want[i], &got[j]);
        if (c == 0) {
            i++;
            j++;
        } else if (c < 0) {
            if (missing++ < 5)
                fprintf(stderr, "  HTA only: %s at %lld\n", want[i].name, want[i].ts);
            i++;
        } else {
            if (extra++ < 5)
                fprintf(stderr, "  gpuprof only: %s at %lld\n", got[j].name, got[j].ts);
            j++;
        }
    }
    fprintf(stderr,
            "simple_add overlay: HTA marks %zu events, gpuprof %zu, %zu missing, %zu extra\n",
            n_want, cp->n_events, missing, extra);
    assert_int_equal(missing, 0);
    assert_int_equal(extra, 0);
    /* gpuprof's overlay (convert --critical-path) draws HTA's flow pairs: same types and times. */
    char out[4200];
    snprintf(out, sizeof out, "%s/critpath_overlay_%d.json",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    gp_chrome_marks marks = {cp->events, cp->n_events, cp->links, cp->n_links};
    gp_error err = {0};
    assert_int_equal(gp_trace_write_chrome_marked(t, out, &marks, &err), GP_OK);
    size_t n_ours = 0, n_hta = 0;
    ev_key *ours_crit = critical_of_overlay(out, &n_ours);
    assert_int_equal(n_ours, n_want);
    char **ours = flows_of_overlay(out, &n_ours), **theirs = flows_of_overlay(ov, &n_hta);
    unlink(out);
    qsort(ours, n_ours, sizeof *ours, cmp_str);
    qsort(theirs, n_hta, sizeof *theirs, cmp_str);
    fprintf(stderr, "simple_add overlay flows: HTA %zu points, gpuprof %zu\n", n_hta, n_ours);
    assert_int_equal(n_ours, n_hta);
    for (size_t k = 0; k < n_ours; k++) {
        if (strcmp(ours[k], theirs[k]) != 0)
            fail_msg("flow point %zu: HTA '%s', gpuprof '%s'", k, theirs[k], ours[k]);
        free(ours[k]);
        free(theirs[k]);
    }
    free(ours);
    free(theirs);
    free(ours_crit);
    free(want);
    free(got);
    gp_analysis_free(a);
    gp_trace_free(t);
    json_object_put(ref);
}

int main(void)
{
    const char *dir = getenv("GP_SHARED_DIR");
    struct stat st;
    if (!dir)
        return 77;
    snprintf(shared, sizeof shared, "%s", dir);
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/traces/hta-reference/critical_path", shared);
    if (stat(probe, &st) != 0)
        return 77;
    const struct CMUnitTest tests[] = {cmocka_unit_test(hta_critical_path_references),
                                       cmocka_unit_test(simple_add_overlay)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
