/* The registry of analysis tables (src/render/analysis_tables.h) agrees with what the renderers
 * write: each table rendered alone is, in JSON, the document's fixed members plus the member the
 * registry names (first) and nothing of another table; its CSV renders; its names parse to its
 * bit; every GP_AT_ALL bit has exactly one entry; the rendered text of all tables is the text of
 * each table in the registry's order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/shared_traces.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprof/analyze.h"
#include "gpuprof/trace.h"
#include "render/analysis_tables.h"

static char *render(gp_status (*fn)(const gp_analysis *, unsigned, FILE *), const gp_analysis *a,
                    unsigned tables)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    assert_non_null(fp);
    assert_int_equal(fn(a, tables, fp), GP_OK);
    assert_int_equal(fclose(fp), 0);
    return buf;
}

static gp_analysis *example_analysis(gp_trace **t)
{
    const char *src = getenv("GP_SOURCE_DIR");
    if (!src)
        skip();
    char path[4096];
    snprintf(path, sizeof path, "%s/examples/traces/example_step.json", src);
    gp_read_opts rd;
    gp_read_opts_init(&rd);
    rd.quiet = true;
    assert_int_equal(gp_trace_read(path, &rd, t, NULL), GP_OK);
    gp_analysis *a = NULL;
    assert_int_equal(gp_analyze_trace(*t, NULL, &a, NULL), GP_OK);
    return a;
}

static void names_and_bits(void **state)
{
    (void)state;
    size_t n;
    const gp__analysis_table *t = gp__analysis_tables(&n);
    unsigned seen = 0;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(__builtin_popcount(t[i].bit), 1);
        assert_false(seen & t[i].bit); /* each bit once */
        seen |= t[i].bit;
        unsigned bit = 0;
        assert_int_equal(gp_analysis_table_parse(t[i].name, &bit), GP_OK);
        assert_int_equal(bit, t[i].bit);
        bit = 0;
        assert_int_equal(gp_analysis_table_parse(t[i].alias, &bit), GP_OK);
        assert_int_equal(bit, t[i].bit);
        assert_non_null(strstr(t[i].csv, ".csv"));
    }
    /* every rendered table has an entry, and no other; the critical path's bit has none until
     * branch cp adds its line (then compare with GP_AT_ALL itself) */
    assert_int_equal(seen, GP_AT_ALL);
    unsigned all = 0, untouched = 7;
    assert_int_equal(gp_analysis_table_parse("all", &all), GP_OK);
    assert_int_equal(all, GP_AT_ALL);
    assert_int_equal(gp_analysis_table_parse("nothing", &untouched), GP_EINVAL);
    assert_int_equal(gp_analysis_table_parse(NULL, &untouched), GP_EINVAL);
    assert_int_equal(untouched, 7);
}

static void json_member_per_table(void **state)
{
    (void)state;
    gp_trace *tr = NULL;
    gp_analysis *a = example_analysis(&tr);
    size_t n;
    const gp__analysis_table *t = gp__analysis_tables(&n);
    /* the document's own members, present whatever the tables */
    char *base = render(gp_analysis_render_json, a, GP_AT_ALL);
    for (size_t i = 0; i < n; i++) {
        if (t[i].bit == GP_AT_COLLECTIVES) /* no member for one trace (test_collectives: jobs) */
            continue;
        char *doc = render(gp_analysis_render_json, a, t[i].bit);
        char key[128];
        /* a top-level member (two spaces in): "critical_path" is also an option's name */
        snprintf(key, sizeof key, "\n  \"%s\":", t[i].json);
        char *at = strstr(doc, key);
        assert_non_null(at); /* the member the registry names */
        assert_non_null(strstr(base, key));
        /* it is the first member after the fixed ones ("note" of the job comes last of those) */
        char *note = strstr(doc, "\n  \"note\":");
        assert_non_null(note);
        assert_true(note < at);
        for (size_t k = 0; k < n; k++) { /* and no other table's member */
            if (k == i || strcmp(t[k].json, t[i].json) == 0)
                continue;
            snprintf(key, sizeof key, "\n  \"%s\":", t[k].json);
            assert_null(strstr(doc, key));
        }
        free(doc);
        char *csv = NULL;
        size_t len = 0;
        FILE *fp = open_memstream(&csv, &len);
        assert_int_equal(gp_analysis_render_csv(a, t[i].bit, fp), GP_OK);
        fclose(fp);
        assert_true(len > 0 && strchr(csv, '\n')); /* at least the header row */
        free(csv);
    }
    free(base);
    gp_analysis_free(a);
    gp_trace_free(tr);
}

/* The text of every table is the header and notes, then each table's own text in the registry's
 * order (a mask of no table's bit renders the header alone). */
static void text_in_registry_order(void **state)
{
    (void)state;
    gp_trace *tr = NULL;
    gp_analysis *a = example_analysis(&tr);
    size_t n;
    const gp__analysis_table *t = gp__analysis_tables(&n);
    char *all = render(gp_analysis_render_text, a, GP_AT_ALL);
    char *head = render(gp_analysis_render_text, a, 1u << 31); /* no table: the header alone */
    size_t h = strlen(head);
    assert_memory_equal(all, head, h);
    char *p = all + h;
    for (size_t i = 0; i < n; i++) {
        char *one = render(gp_analysis_render_text, a, t[i].bit);
        assert_memory_equal(one, head, h);
        assert_memory_equal(p, one + h, strlen(one + h));
        p += strlen(one + h);
        free(one);
    }
    assert_int_equal(*p, '\0');
    free(head);
    free(all);
    gp_analysis_free(a);
    gp_trace_free(tr);
}

/* docs/analyses.md lists the registry: the --table row names every table in order, and the CSV
 * paragraph every file. */
static void docs_list_the_registry(void **state)
{
    (void)state;
    const char *src = getenv("GP_SOURCE_DIR");
    if (!src)
        skip();
    char path[4096];
    snprintf(path, sizeof path, "%s/docs/analyses.md", src);
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    static char doc[1 << 20];
    size_t len = fread(doc, 1, sizeof doc - 1, fp);
    fclose(fp);
    doc[len] = '\0';
    size_t n;
    const gp__analysis_table *t = gp__analysis_tables(&n);
    char want[1024] = "| `--table NAME` | only these tables (repeatable): ";
    for (size_t i = 0; i < n; i++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", t[i].name,
                 i + 1 < n ? ", " : " |\n");
    assert_non_null(strstr(doc, want));
    for (size_t i = 0; i < n; i++) {
        char file[128];
        snprintf(file, sizeof file, "`%s`", t[i].csv);
        assert_non_null(strstr(doc, file));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_and_bits),
        cmocka_unit_test(json_member_per_table),
        cmocka_unit_test(text_in_registry_order),
        cmocka_unit_test(docs_list_the_registry),
    };
    return gp_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
