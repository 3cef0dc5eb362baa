/* libFuzzer target for gp_diff_compute and its renderers. Input: one option byte, then two traces
 * (Kineto/Chrome JSON) separated by the first NUL byte. Both must read; the diff must succeed and
 * keep its invariants (type counts add up, p-values in [0, 1], adjusted >= raw, CI ordered), and
 * every renderer must succeed on it: the JSON document parses back with jansson and the HTML page
 * holds no markup or script from the input (page_check.h, #21 item 5). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprof/diff.h"
#include "gpuprof/report.h"
#include "gpuprof/trace.h"
#include "page_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "diff invariant broken: %s\n", what);
        abort();
    }
}

static void check_test(const gp_diff_test *t)
{
    if (t->method == GP_DIFF_TEST_NONE)
        return;
    check(t->p_value >= 0 && t->p_value <= 1, "p in [0,1]");
    check(t->p_adjusted >= t->p_value - 1e-12 && t->p_adjusted <= 1, "adjusted >= raw");
    check(isnan(t->ci_lo) || t->ci_lo <= t->ci_hi, "CI ordered");
    check(t->u >= 0 && t->u <= (double)t->n_base * (double)t->n_cur, "U range");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    uint8_t flags = data[0];
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    const char *sep = memchr(text, '\0', len);
    if (!sep)
        return 0;
    gp_read_opts ro;
    gp_read_opts_init(&ro);
    ro.quiet = true;
    gp_trace *a = NULL, *b = NULL;
    gp_error err;
    if (gp_trace_read_buffer(text, (size_t)(sep - text), "base", &ro, &a, &err) != GP_OK)
        return 0;
    if (gp_trace_read_buffer(sep + 1, len - (size_t)(sep - text) - 1, "cur", &ro, &b, &err) !=
        GP_OK) {
        gp_trace_free(a);
        return 0;
    }
    gp_diff_opts o;
    gp_diff_opts_init(&o);
    o.bootstrap = 50;
    o.normalize = flags & 3;
    o.correction = (gp_diff_correction)((flags >> 2) % 3);
    o.kinds = (flags & 16) ? (1u << GP_EV_KIND_COUNT) - 1 : 0;
    o.analyze = (flags & 32) != 0;
    /* Several runs per side: the same trace twice. */
    gp_trace *base[2] = {a, a}, *cur[2] = {b, b};
    size_t n = (flags & 64) ? 2 : 1;
    gp_diff *d = NULL;
    check(gp_diff_compute(gp_traces_const(base), n, gp_traces_const(cur), n, &o, &d, &err) == GP_OK,
          "compute succeeds");
    size_t sum = 0;
    for (int t = 0; t < GP_DIFF_TYPE_COUNT; t++)
        sum += d->n_by_type[t];
    check(sum == d->n_rows, "type counts add up");
    size_t regressions = 0;
    for (int m = 0; m < GP_DIFF_METRIC_COUNT; m++)
        regressions += d->metrics[m].present && d->metrics[m].type == GP_DIFF_REGRESSION;
    check(d->n_significant_regressions + d->n_untested_regressions ==
              d->n_by_type[GP_DIFF_REGRESSION] + regressions,
          "regressions are tested or untested");
    check(d->n_failing_regressions == d->n_significant_regressions + d->n_untested_regressions,
          "every regression fails by default");
    for (size_t i = 0; i < d->n_rows; i++) {
        check_test(&d->rows[i].test);
        check_test(&d->rows[i].per_call);
        if (i)
            check(d->rows[i - 1].delta_ns >= d->rows[i].delta_ns, "rows sorted");
    }
    for (int m = 0; m < GP_DIFF_METRIC_COUNT; m++)
        check_test(&d->metrics[m].test);
    gp_diff_render_opts rop;
    gp_diff_render_opts_init(&rop);
    struct gp_flame_tree *fl = NULL;
    if ((flags & 128) &&
        gp_diff_flame(gp_traces_const(base), n, gp_traces_const(cur), n, &fl, &err) == GP_OK)
        rop.flame = fl;
    /* The JSON document parses back whole and the page keeps the input out of its markup and
     * scripts (page_check.h); text and JUnit only have to succeed. */
    gp_fuzz_mem m;
    gp_fuzz_mem_open(&m);
    check(gp_diff_render_text(d, &rop, m.fp) == GP_OK, "text");
    check(gp_diff_render_junit(d, &rop, m.fp) == GP_OK, "junit");
    gp_fuzz_mem_close(&m);
    gp_fuzz_mem_free(&m);
    gp_fuzz_mem_open(&m);
    check(gp_diff_render_json(d, &rop, m.fp) == GP_OK, "json");
    gp_fuzz_mem_close(&m);
    gp_fuzz_check_json(m.text, m.len, "diff JSON");
    gp_fuzz_mem_free(&m);
    gp_fuzz_mem_open(&m);
    check(gp_diff_render_html(d, &rop, m.fp) == GP_OK, "html");
    gp_fuzz_mem_close(&m);
    gp_fuzz_check_page(m.text, m.len, "diff HTML");
    gp_fuzz_mem_free(&m);
    gp_flame_tree_free(fl);
    gp_diff_free(d);
    gp_trace_free(a);
    gp_trace_free(b);
    return 0;
}
