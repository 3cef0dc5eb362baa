/* Helpers shared by the report unit tests (test_report.c, test_timeline.c, test_flame_module.c):
 * interning a name and adding an event to a trace under construction, rendering a flame tree into
 * memory, comparing with a golden. Included once per test program. */
#ifndef GP_TESTS_REPORT_FIXTURE_H
#define GP_TESTS_REPORT_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprof/report.h"
#include "gpuprof/trace.h"

static gp_strid S(gp_trace *t, const char *s)
{
    gp_strid id;
    assert_int_equal(gp_trace_intern(t, s, strlen(s), &id), GP_OK);
    return id;
}

/* An event of kind on track; an instant (GP_EV_INSTANT with dur 0) gets GP_EVF_INSTANT. */
static void add(gp_trace *t, uint32_t track, gp_event_kind kind, const char *name, gp_ns ts,
                gp_ns dur, int64_t corr, int64_t ext)
{
    gp_event ev = {0};
    ev.ts = ts;
    ev.dur = dur;
    ev.correlation = corr;
    ev.external_id = ext;
    ev.name = S(t, name);
    ev.track = track;
    ev.kind = (uint8_t)kind;
    if (dur == 0 && kind == GP_EV_INSTANT)
        ev.flags = GP_EVF_INSTANT;
    assert_int_equal(gp_trace_add_event(t, &ev), GP_OK);
}

/* A flame tree rendered in format fmt into memory; the caller frees. */
__attribute__((noinline, unused)) static char *render(const gp_flame_tree *tree,
                                                      gp_flame_format fmt)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    assert_non_null(fp);
    assert_int_equal(gp_flame_render(tree, fmt, NULL, fp, NULL), GP_OK);
    fclose(fp);
    return buf;
}

/* Compares text with tests/report/golden/<name>; GP_UPDATE_GOLDEN=1 rewrites the file. */
static inline void check_golden(const char *name, const char *text)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/report/golden/%s", getenv("GP_SOURCE_DIR"), name);
    if (getenv("GP_UPDATE_GOLDEN")) {
        FILE *fp = fopen(path, "w");
        assert_non_null(fp);
        fputs(text, fp);
        fclose(fp);
    }
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    char *want = calloc(1, 1 << 20);
    size_t n = fread(want, 1, (1 << 20) - 1, fp);
    fclose(fp);
    want[n] = 0;
    assert_string_equal(text, want);
    free(want);
}

#endif
