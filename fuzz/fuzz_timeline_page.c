/* libFuzzer target for the timeline renderers (#21 item 5): trace in, page out. Input: one option
 * byte, then a trace (Kineto/Chrome JSON), or two traces (two ranks) separated by the first NUL
 * byte. When the traces read, the timeline is built (nesting depth, CPU and counter rows from the
 * option byte) and rendered as the HTML page (`gpuprof timeline`) and as the JSON document
 * (`/api/profiler/timeline/NAME`); the page must hold no markup or script from the input and its
 * embedded data must parse back with jansson, and the JSON document must parse back whole
 * (page_check.h). ASan and UBSan (no recovery) catch the rest. */
#include <stdint.h>
#include <stdlib.h>

#include "gpuprof/report.h"
#include "page_check.h"
#include "render/render_internal.h"

static void fuzz_one(gp_fuzz_input *in)
{
    gp_trace **t = in->t;
    size_t n = in->n;
    uint8_t flags = in->flags;
    static const int depths[4] = {-1, 0, 1, 3};
    gp_timeline_opts to;
    gp_timeline_opts_init(&to);
    to.max_depth = depths[flags & 3];
    to.cpu_rows = !(flags & 4);
    to.counter_rows = !(flags & 8);
    gp_timeline *tl = NULL;
    gp_status st = gp_timeline_build(gp_traces_const(t), n, &to, &tl, NULL);
    gp_fuzz_check(st == GP_OK || st == GP_ENOMEM, "gp_timeline_build: GP_OK or GP_ENOMEM");
    if (st == GP_OK) {
        gp_fuzz_check(tl->start <= tl->end || tl->n_events == 0, "timeline span ordered");
        gp_fuzz_mem m;
        gp_fuzz_mem_open(&m);
        st = gp_timeline_render_html(tl, (flags & 16) ? "</title><script>x</script>" : NULL, m.fp);
        gp_fuzz_mem_close(&m);
        gp_fuzz_check(st == GP_OK, "gp_timeline_render_html");
        gp_fuzz_check_page(m.text, m.len, "timeline HTML");
        gp_fuzz_mem_free(&m);
        gp_fuzz_mem_open(&m);
        st = gp__timeline_data_json(tl, m.fp);
        gp_fuzz_mem_close(&m);
        gp_fuzz_check(st == GP_OK, "gp__timeline_data_json");
        gp_fuzz_check_json(m.text, m.len, "timeline JSON");
        gp_fuzz_mem_free(&m);
    }
    gp_timeline_free(tl);
}

GP_FUZZ_TRACES_TARGET(fuzz_one)
