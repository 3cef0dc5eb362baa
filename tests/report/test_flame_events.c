/* Unit tests of the evented profiles of the speedscope export (gp_flame_evented_build,
 * src/analyze/flame_events.c) and their writing (src/render/flame_speedscope.c). Hand-built
 * traces, every figure derived in the comment above its trace. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "report_fixture.h"

/* Thread 1 (ns, the trace starts at 1000):
 *   "m.py(12): step" [1000, 1500) holds aten::mm [1100, 1300) and aten::add [1250, 1600): add
 *   overlaps step's end, so it is cut at 1500 (its start 1250 is inside mm, which ends at 1300:
 *   add nests in mm and is cut at 1300); an instant at 1400 is left out.
 *   "<built-in method x>" [1700, 1800) (Python, no source).
 * stream 7: k1 [1200, 1400), a zero-length kernel at 1450 (left out), k1 again [1500, 1600).
 * Profiles: the GPU stream first: O k1 200, C k1 400, O k1 500, C k1 600.
 * Thread: O step 0, O mm 100, O add 250, C add 300, C mm 300, C step 500, O built-in 700,
 * C built-in 800. Frames: k1; step (file m.py, line 12), mm, add, built-in (no file). */
static gp_trace *events_trace(void)
{
    gp_trace *t;
    assert_int_equal(gp_trace_create("events", &t), GP_OK);
    uint32_t c, g;
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &c), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &g), GP_OK);
    add(t, c, GP_EV_PYTHON, "m.py(12): step", 1000, 500, 0, 0);
    add(t, c, GP_EV_CPU_OP, "aten::mm", 1100, 200, 0, 0);
    add(t, c, GP_EV_CPU_OP, "aten::add", 1250, 350, 0, 0);
    add(t, c, GP_EV_INSTANT, "mark", 1400, 0, 0, 0);
    add(t, c, GP_EV_PYTHON, "<built-in method x>", 1700, 100, 0, 0);
    add(t, g, GP_EV_KERNEL, "k1", 1200, 200, 0, 0);
    add(t, g, GP_EV_KERNEL, "k0", 1450, 0, 0, 0);
    add(t, g, GP_EV_KERNEL, "k1", 1500, 100, 0, 0);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    return t;
}

static void expect(const gp_flame_evented *e, const gp_ss_profile *p, size_t k, bool open, gp_ns at,
                   const char *name)
{
    assert_true(k < p->n_events);
    assert_int_equal(p->events[k].open, open);
    assert_int_equal(p->events[k].at, at);
    assert_string_equal(e->frames[p->events[k].frame].name, name);
}

static void profiles_are_balanced_and_cut_at_the_parent(void **state)
{
    (void)state;
    gp_trace *t = events_trace();
    gp_flame_evented *e = NULL;
    assert_int_equal(gp_flame_evented_build(gp_traces_const(&t), 1, &e, NULL), GP_OK);
    assert_int_equal(e->n_profiles, 2);
    const gp_ss_profile *g = &e->profiles[0], *c = &e->profiles[1];
    assert_true(g->gpu);
    assert_string_equal(g->name, "GPU 0 stream 7");
    assert_int_equal(g->n_events, 4);
    expect(e, g, 0, true, 200, "k1");
    expect(e, g, 1, false, 400, "k1");
    expect(e, g, 3, false, 600, "k1");
    assert_int_equal(g->events[0].frame, g->events[2].frame); /* one frame per name */
    assert_false(c->gpu);
    assert_string_equal(c->name, "thread 1");
    assert_int_equal(c->n_events, 8);
    expect(e, c, 0, true, 0, "step");
    expect(e, c, 1, true, 100, "aten::mm");
    expect(e, c, 2, true, 250, "aten::add");
    expect(e, c, 3, false, 300, "aten::add");
    expect(e, c, 4, false, 300, "aten::mm");
    expect(e, c, 5, false, 500, "step");
    expect(e, c, 6, true, 700, "<built-in method x>");
    expect(e, c, 7, false, 800, "<built-in method x>");
    assert_int_equal(c->start, 0);
    assert_int_equal(c->end, 800);
    const gp_ss_frame *step = &e->frames[c->events[0].frame];
    assert_string_equal(step->file, "m.py");
    assert_int_equal(step->line, 12);
    assert_null(e->frames[c->events[6].frame].file);
    assert_int_equal(e->frames[c->events[6].frame].line, -1);
    gp_flame_evented_free(e);
    gp_trace_free(t);
}

/* The file: the tree's sampled profile first, then the evented ones with frame numbers after the
 * tree's frames; file and line on the Python frame. */
static void the_file_holds_both(void **state)
{
    (void)state;
    gp_trace *t = events_trace();
    gp_flame_evented *e = NULL;
    gp_flame_tree *tree = NULL;
    assert_int_equal(gp_flame_evented_build(gp_traces_const(&t), 1, &e, NULL), GP_OK);
    assert_int_equal(gp_flame_build(gp_traces_const(&t), 1, NULL, &tree, NULL), GP_OK);
    gp_flame_render_opts o;
    gp_flame_render_opts_init(&o);
    o.evented = e;
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    assert_non_null(fp);
    assert_int_equal(gp_flame_render(tree, GP_FLAME_SPEEDSCOPE, &o, fp, NULL), GP_OK);
    fclose(fp);
    assert_non_null(strstr(buf, "{\"name\":\"step\",\"file\":\"m.py\",\"line\":12}"));
    const char *sampled = strstr(buf, "\"type\":\"sampled\"");
    const char *evented = strstr(buf, "{\"type\":\"evented\",\"name\":\"thread 1\"");
    assert_non_null(sampled);
    assert_non_null(evented);
    assert_true(sampled < evented);
    assert_non_null(strstr(evented, "\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":800,"
                                    "\"events\":[{\"type\":\"O\",\"at\":0,\"frame\":"));
    free(buf);
    gp_flame_tree_free(tree);
    gp_flame_evented_free(e);
    gp_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(profiles_are_balanced_and_cut_at_the_parent),
        cmocka_unit_test(the_file_holds_both),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
