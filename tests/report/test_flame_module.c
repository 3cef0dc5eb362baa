/* Unit tests of the module flame graph (gp_flame_build with GP_FLAME_BY_MODULE, src/analyze/flame.c
 * over the attribution walk of src/analyze/ops.c): the frames are the nn.Module stacks of the op
 * that launched each GPU event (GPU weight) or ran (CPU weight: the op's self CPU time), a frame
 * "Block_0" per python_function frame "nn.Module: Block_0", the rest under "(no module)"; totals
 * agree with gp_ops_compute --by module. Hand-built traces, every figure derived in the comment
 * above its trace; goldens in tests/report/golden/flame_module_*. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "report_fixture.h"

#include "analyze/ops_internal.h"
#include "gpuprof/ops.h"
#include "gpuprof/report.h"

/* Thread 1 (ns):
 *   nn.Module: Model_0 [0, 1000) (python) holds
 *     nn.Module: Block_0 [0, 400) holds
 *       model.py(7): forward [0, 400) (a source line: not a module, no frame)
 *         aten::linear (ext 1) [0, 300) holds cudaLaunchKernel corr 1 [10, 20) and
 *           nn.Module: Inner_0 [50, 100) (opened inside the op) holding cudaLaunchKernel corr 2
 *           [60, 70): the kernel is the op's, so it counts in Model_0;Block_0, not in Inner_0
 *     nn.Module: Block_1 [400, 800) holds aten::mm (ext 2) [400, 500) with corr 3 [410, 420)
 *     aten::add (ext 3) [850, 900) with corr 4 [860, 870) (in Model_0 itself)
 *   aten::copy_ (ext 4) [1000, 1100) with corr 5 [1010, 1020) (no module)
 *   cudaLaunchKernel corr 6 [1200, 1210) (outside any op)
 * stream 7: k1 corr 1: 100; k2 corr 2: 200; k3 corr 3: 300; k4 corr 4: 400; memcpy corr 5: 500;
 *   k6 corr 6: 600; k7 corr 99 (no launch call): 700.
 * GPU weight, the ops and their GPU work as leaves: Model_0 1000 > Block_0 300 > aten::linear 300
 *   > k1 100, k2 200; Block_1 300 > aten::mm > k3 300; aten::add 400 > k4. (no module) 1800 >
 *   aten::copy_ 500 > Memcpy HtoD; [unattributed GPU] 1300 > k6 600, k7 700 (no op). Root 2800 =
 *   all GPU work. No module frame has self weight: it is all in the leaves.
 * CPU weight (self CPU of ops, their nested events excluded), the ops as leaves: linear 300 - 10 -
 *   50 = 240, mm 100 - 10 = 90, add 50 - 10 = 40, copy_ 100 - 10 = 90. Model_0 370 > Block_0 240
 *   > aten::linear, Block_1 90 > aten::mm, aten::add 40; (no module) 90 > aten::copy_. Root 460. */
static gp_trace *module_trace(const char *name)
{
    gp_trace *t;
    assert_int_equal(gp_trace_create(name, &t), GP_OK);
    uint32_t c, g;
    assert_int_equal(gp_trace_track(t, GP_TRACK_CPU_THREAD, 1, 1, &c), GP_OK);
    assert_int_equal(gp_trace_track(t, GP_TRACK_GPU_STREAM, 0, 7, &g), GP_OK);
    add(t, c, GP_EV_PYTHON, "nn.Module: Model_0", 0, 1000, 0, 0);
    add(t, c, GP_EV_PYTHON, "nn.Module: Block_0", 0, 400, 0, 0);
    add(t, c, GP_EV_PYTHON, "model.py(7): forward", 0, 400, 0, 0);
    add(t, c, GP_EV_CPU_OP, "aten::linear", 0, 300, 0, 1);
    add(t, c, GP_EV_RUNTIME, "cudaLaunchKernel", 10, 10, 1, 1);
    add(t, c, GP_EV_PYTHON, "nn.Module: Inner_0", 50, 50, 0, 0);
    add(t, c, GP_EV_RUNTIME, "cudaLaunchKernel", 60, 10, 2, 1);
    add(t, c, GP_EV_PYTHON, "nn.Module: Block_1", 400, 400, 0, 0);
    add(t, c, GP_EV_CPU_OP, "aten::mm", 400, 100, 0, 2);
    add(t, c, GP_EV_RUNTIME, "cudaLaunchKernel", 410, 10, 3, 2);
    add(t, c, GP_EV_CPU_OP, "aten::add", 850, 50, 0, 3);
    add(t, c, GP_EV_RUNTIME, "cudaLaunchKernel", 860, 10, 4, 3);
    add(t, c, GP_EV_CPU_OP, "aten::copy_", 1000, 100, 0, 4);
    add(t, c, GP_EV_RUNTIME, "cudaMemcpyAsync", 1010, 10, 5, 4);
    add(t, c, GP_EV_RUNTIME, "cudaLaunchKernel", 1200, 10, 6, 0);
    add(t, g, GP_EV_KERNEL, "k1", 2000, 100, 1, 1);
    add(t, g, GP_EV_KERNEL, "k2", 2100, 200, 2, 1);
    add(t, g, GP_EV_KERNEL, "k3", 2300, 300, 3, 2);
    add(t, g, GP_EV_KERNEL, "k4", 2600, 400, 4, 3);
    add(t, g, GP_EV_MEMCPY, "Memcpy HtoD", 3000, 500, 5, 4);
    add(t, g, GP_EV_KERNEL, "k6", 3500, 600, 6, 0);
    add(t, g, GP_EV_KERNEL, "k7", 4100, 700, 99, 0);
    assert_int_equal(gp_trace_finish(t), GP_OK);
    return t;
}

static gp_flame_tree *build_modules(gp_trace **t, size_t n, gp_flame_weight w)
{
    gp_flame_opts o;
    gp_flame_opts_init(&o);
    o.weight = w;
    o.by = GP_FLAME_BY_MODULE;
    gp_flame_tree *tree = NULL;
    assert_int_equal(gp_flame_build(gp_traces_const(t), n, &o, &tree, NULL), GP_OK);
    assert_int_equal(tree->by, GP_FLAME_BY_MODULE);
    return tree;
}

/* The node reached from the root by the names path[0, n); fails when there is none. */
static const gp_flame_node *at(const gp_flame_tree *t, const char *const *path, size_t n)
{
    uint32_t i = 0;
    for (size_t k = 0; k < n; k++) {
        const gp_flame_node *p = &t->nodes[i];
        uint32_t found = UINT32_MAX;
        for (uint32_t c = 0; c < p->n_children; c++)
            if (strcmp(t->nodes[p->first_child + c].name, path[k]) == 0)
                found = p->first_child + c;
        if (found == UINT32_MAX)
            fail_msg("no frame %s under %s", path[k], p->name);
        i = found;
    }
    return &t->nodes[i];
}

#define AT(t, ...)                                                                                 \
    at(t, (const char *const[]){__VA_ARGS__},                                                      \
       sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

static void gpu_weight_follows_the_launching_ops_modules(void **state)
{
    (void)state;
    gp_trace *t = module_trace("modules");
    gp_flame_tree *tree = build_modules(&t, 1, GP_FLAME_GPU);
    assert_int_equal(tree->weight, GP_FLAME_GPU);
    assert_int_equal(tree->nodes[0].total, 2800);
    assert_int_equal(tree->nodes[0].n_children, 2); /* no thread frame: modules at the top */
    const gp_flame_node *m = AT(tree, "Model_0");
    assert_int_equal(m->total, 1000);
    assert_int_equal(m->self, 0);
    assert_int_equal(m->n_children, 3); /* Block_0, Block_1, aten::add; Inner_0 ran no op */
    assert_int_equal(AT(tree, "Model_0", "Block_0")->total, 300);
    assert_int_equal(AT(tree, "Model_0", "Block_0")->self, 0);
    assert_int_equal(AT(tree, "Model_0", "Block_0", "aten::linear")->total, 300);
    assert_int_equal(AT(tree, "Model_0", "Block_0", "aten::linear", "k1")->self, 100);
    assert_int_equal(AT(tree, "Model_0", "Block_0", "aten::linear", "k2")->self, 200);
    assert_int_equal(AT(tree, "Model_0", "Block_0", "aten::linear", "k2")->kind, GP_EV_KERNEL);
    assert_int_equal(AT(tree, "Model_0", "Block_1", "aten::mm", "k3")->total, 300);
    assert_int_equal(AT(tree, "Model_0", "aten::add", "k4")->total, 400);
    assert_int_equal(AT(tree, "(no module)")->total, 1800);
    assert_int_equal(AT(tree, "(no module)")->self, 0);
    assert_int_equal(AT(tree, "(no module)", "aten::copy_", "Memcpy HtoD")->total, 500);
    assert_int_equal(AT(tree, "(no module)", "aten::copy_", "Memcpy HtoD")->kind, GP_EV_MEMCPY);
    assert_int_equal(AT(tree, "(no module)", "[unattributed GPU]")->total, 1300);
    assert_int_equal(AT(tree, "(no module)", "[unattributed GPU]", "k7")->total, 700);
    assert_int_equal(tree->gpu_unattributed, 2);
    assert_int_equal(tree->events_used, 7);
    gp_flame_tree_free(tree);
    gp_trace_free(t);
}

static void cpu_weight_is_the_ops_self_time(void **state)
{
    (void)state;
    gp_trace *t = module_trace("modules");
    gp_flame_tree *tree = build_modules(&t, 1, GP_FLAME_CPU);
    assert_int_equal(tree->weight, GP_FLAME_CPU);
    assert_int_equal(tree->nodes[0].total, 460);
    assert_int_equal(AT(tree, "Model_0")->total, 370);
    assert_int_equal(AT(tree, "Model_0")->self, 0);
    assert_int_equal(AT(tree, "Model_0", "aten::add")->self, 40);
    assert_int_equal(AT(tree, "Model_0", "Block_0")->total, 240);
    assert_int_equal(AT(tree, "Model_0", "Block_0", "aten::linear")->self, 240);
    assert_int_equal(AT(tree, "Model_0", "Block_1")->total, 90);
    assert_int_equal(AT(tree, "(no module)")->total, 90);
    assert_int_equal(AT(tree, "(no module)", "aten::copy_")->kind, GP_EV_CPU_OP);
    assert_int_equal(tree->events_used, 4); /* the four ops */
    gp_flame_tree_free(tree);
    gp_trace_free(t);
}

/* The partition the flame draws is the one ops reports: per module (numbers merged) the weight
 * of the op leaves under its frames is the row's self GPU / self CPU, "(no module)" is the
 * "(no module)" row plus the unattributed rows, and the root is all GPU work. */
static void totals_agree_with_ops_by_module(void **state)
{
    (void)state;
    gp_trace *t = module_trace("modules");
    gp_ops_opts oo;
    gp_ops_opts_init(&oo);
    oo.by = GP_OPS_BY_MODULE;
    gp_ops *ops = NULL;
    assert_int_equal(gp_ops_compute(gp_traces_const(&t), 1, &oo, &ops, NULL), GP_OK);
    for (int w = 0; w < 2; w++) {
        gp_flame_tree *tree = build_modules(&t, 1, w ? GP_FLAME_CPU : GP_FLAME_GPU);
        assert_int_equal(tree->nodes[0].total, w ? ops->total.self_cpu : ops->gpu_time);
        gp_ns none = 0;
        for (size_t i = 0; i < ops->n_rows; i++) {
            const gp_ops_row *r = &ops->rows[i];
            gp_ns want = w ? r->self_cpu : r->self_gpu;
            if (r->unattributed || strcmp(r->key, "(no module)") == 0) {
                none += want;
                continue;
            }
            /* rows "Model", "Block": the module frames named "<key>_N" */
            gp_ns got = 0;
            for (size_t k = 1; k < tree->n_nodes; k++) {
                const char *nm = tree->nodes[k].name;
                size_t l = strlen(r->key);
                if (tree->nodes[k].kind != GP_EV_PYTHON || strncmp(nm, r->key, l) != 0 ||
                    nm[l] != '_')
                    continue;
                for (uint32_t c = 0; c < tree->nodes[k].n_children; c++) {
                    const gp_flame_node *op = &tree->nodes[tree->nodes[k].first_child + c];
                    got += op->kind == GP_EV_CPU_OP ? op->total : 0;
                }
                assert_int_equal(tree->nodes[k].self, 0);
            }
            assert_int_equal(got, want);
        }
        assert_int_equal(AT(tree, "(no module)")->total, none);
        gp_flame_tree_free(tree);
    }
    gp_ops_free(ops);
    gp_trace_free(t);
}

/* Two ranks: a "rank N" frame each, the module stacks under it. A diff needs the same `by`. */
static void ranks_and_diff(void **state)
{
    (void)state;
    gp_trace *t[2] = {module_trace("r0"), module_trace("r1")};
    t[0]->rank = 0;
    t[1]->rank = 1;
    gp_flame_tree *tree = build_modules(t, 2, GP_FLAME_GPU);
    assert_int_equal(tree->nodes[0].total, 5600);
    assert_int_equal(AT(tree, "rank 1", "Model_0", "Block_1")->total, 300);
    assert_int_equal(AT(tree, "rank 0", "(no module)", "[unattributed GPU]")->total, 1300);
    gp_flame_opts so;
    gp_flame_opts_init(&so);
    so.weight = GP_FLAME_GPU;
    gp_flame_tree *stacks = NULL, *d = NULL;
    assert_int_equal(gp_flame_build(gp_traces_const(t), 2, &so, &stacks, NULL), GP_OK);
    assert_int_equal(stacks->by, GP_FLAME_BY_STACK);
    assert_int_equal(gp_flame_diff(stacks, tree, &d, NULL), GP_EINVAL);
    assert_int_equal(gp_flame_diff(tree, tree, &d, NULL), GP_OK);
    assert_int_equal(d->by, GP_FLAME_BY_MODULE);
    gp_flame_tree_free(d);
    gp_flame_tree_free(stacks);
    gp_flame_tree_free(tree);
    gp_trace_free(t[0]);
    gp_trace_free(t[1]);
}

/* Folded goldens of both weights; the page and the speedscope profile say what the frames are. */
static void goldens_and_labels(void **state)
{
    (void)state;
    gp_trace *t = module_trace("modules");
    for (int w = 0; w < 2; w++) {
        gp_flame_tree *tree = build_modules(&t, 1, w ? GP_FLAME_CPU : GP_FLAME_GPU);
        char *txt = render(tree, GP_FLAME_FOLDED);
        check_golden(w ? "flame_module_cpu.folded" : "flame_module_gpu.folded", txt);
        free(txt);
        txt = render(tree, GP_FLAME_HTML);
        assert_non_null(strstr(txt, "weight, frames by nn.Module, "));
        assert_non_null(strstr(txt, "\"by\":\"module\""));
        free(txt);
        txt = render(tree, GP_FLAME_SPEEDSCOPE);
        assert_non_null(
            strstr(txt, w ? "\"CPU time by nn.Module\"" : "\"GPU work sum by nn.Module\""));
        free(txt);
        gp_flame_tree_free(tree);
    }
    gp_trace_free(t);
}

/* The naming rule flame shares with ops (analyze/ops_internal.h): prefix dropped, instance
 * number merged on request, names that are not "X_N" left whole. */
/* gp_flame_build_alt, the module tree beside a stack tree (the HTML page's "Frames" switch of
 * gpuprof flame, serve and Trace.flame): the stack tree's resolved weight, the same figures as
 * a module build; none for a trace without nn.Module frames, a module tree or a diff. */
static void alt_is_the_module_tree_beside_a_stack_tree(void **state)
{
    (void)state;
    gp_trace *t = module_trace("modules");
    gp_flame_opts o;
    gp_flame_opts_init(&o); /* auto weight: GPU here */
    gp_flame_tree *stack = NULL, *alt = NULL;
    assert_int_equal(gp_flame_build(gp_traces_const(&t), 1, &o, &stack, NULL), GP_OK);
    assert_int_equal(gp_flame_build_alt(gp_traces_const(&t), 1, &o, stack, &alt, NULL), GP_OK);
    assert_non_null(alt);
    assert_int_equal(alt->by, GP_FLAME_BY_MODULE);
    assert_int_equal(alt->weight, stack->weight);
    assert_int_equal(alt->nodes[0].total, 2800);
    assert_int_equal(AT(alt, "Model_0")->total, 1000);
    assert_int_equal(alt->n_modules, 3);

    gp_flame_tree *none = stack; /* a module tree is offered nothing beside it */
    assert_int_equal(gp_flame_build_alt(gp_traces_const(&t), 1, &o, alt, &none, NULL), GP_OK);
    assert_null(none);
    gp_flame_tree *diff = NULL;
    assert_int_equal(gp_flame_diff(stack, stack, &diff, NULL), GP_OK);
    none = stack;
    assert_int_equal(gp_flame_build_alt(gp_traces_const(&t), 1, &o, diff, &none, NULL), GP_OK);
    assert_null(none);
    gp_flame_tree_free(diff);
    gp_flame_tree_free(alt);
    gp_flame_tree_free(stack);
    gp_trace_free(t);

    gp_trace *plain; /* no nn.Module frame: nothing to offer */
    assert_int_equal(gp_trace_create("plain", &plain), GP_OK);
    uint32_t c, g;
    assert_int_equal(gp_trace_track(plain, GP_TRACK_CPU_THREAD, 1, 1, &c), GP_OK);
    assert_int_equal(gp_trace_track(plain, GP_TRACK_GPU_STREAM, 0, 7, &g), GP_OK);
    add(plain, c, GP_EV_CPU_OP, "aten::mm", 0, 100, 0, 1);
    add(plain, c, GP_EV_RUNTIME, "cudaLaunchKernel", 10, 10, 1, 1);
    add(plain, g, GP_EV_KERNEL, "k", 200, 50, 1, 1);
    assert_int_equal(gp_trace_finish(plain), GP_OK);
    assert_int_equal(gp_flame_build(gp_traces_const(&plain), 1, &o, &stack, NULL), GP_OK);
    alt = stack;
    assert_int_equal(gp_flame_build_alt(gp_traces_const(&plain), 1, &o, stack, &alt, NULL), GP_OK);
    assert_null(alt);
    gp_flame_tree_free(stack);
    gp_trace_free(plain);
}

static void module_names(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        bool merge;
        const char *out;
    } cases[] = {{"nn.Module: Linear_3", false, "Linear_3"},
                 {"nn.Module: Linear_3", true, "Linear"},
                 {"nn.Module: Foo_1_2", true, "Foo_1"},
                 {"nn.Module: Net", true, "Net"},
                 {"nn.Module: _7", true, "_7"},
                 {"Conv2d_0", true, "Conv2d"},
                 {"nn.Module: ", true, "nn.Module: "}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len;
        const char *s = gp__module_name(cases[i].in, strlen(cases[i].in), cases[i].merge, &len);
        assert_int_equal(len, strlen(cases[i].out));
        assert_memory_equal(s, cases[i].out, len);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpu_weight_follows_the_launching_ops_modules),
        cmocka_unit_test(cpu_weight_is_the_ops_self_time),
        cmocka_unit_test(totals_agree_with_ops_by_module),
        cmocka_unit_test(ranks_and_diff),
        cmocka_unit_test(goldens_and_labels),
        cmocka_unit_test(alt_is_the_module_tree_beside_a_stack_tree),
        cmocka_unit_test(module_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
