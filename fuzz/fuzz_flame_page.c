/* libFuzzer target for the flame graph renderers (#21 item 5): trace in, pages out. Input: one
 * option byte, then a trace (Kineto/Chrome JSON), or two traces separated by the first NUL byte
 * (then the second is drawn as a differential flame graph against the first, as `gpuprof flame
 * --diff`). The option byte picks the weight (auto, CPU, GPU), a depth limit, kernel grouping,
 * a minimum duration and the thread frames. Every format is rendered: the HTML page and the
 * standalone SVG (page_check.h: no markup or script from the input, the embedded data parses back
 * with jansson), the speedscope JSON (parsed back whole; refused for a diff), and the folded
 * stacks (one "stack weight" line per stack, no raw newline from a name). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprof/report.h"
#include "page_check.h"

/* Every line of folded output ends in " <digits>" (a diff: two numbers). */
static void check_folded(const char *s, size_t len, bool diff)
{
    const char *end = s + len;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        gp_fuzz_check(nl != NULL, "folded: the last line ends with a newline");
        int numbers = 0;
        const char *p = nl;
        while (numbers < (diff ? 2 : 1)) {
            const char *q = p;
            while (q > s && ((q[-1] >= '0' && q[-1] <= '9') || q[-1] == '-'))
                q--;
            gp_fuzz_check(q < p && q > s && q[-1] == ' ', "folded: a line ends in its weights");
            p = q - 1;
            numbers++;
        }
        s = nl + 1;
    }
}

static void render_all(const gp_flame_tree *tree, uint8_t flags)
{
    gp_flame_render_opts ro;
    gp_flame_render_opts_init(&ro);
    if (flags & 128)
        ro.title = "</title><script>alert(1)</script>]]>";
    static const char *const what[] = {"flame folded", "flame speedscope", "flame SVG",
                                       "flame HTML"};
    for (int f = GP_FLAME_FOLDED; f <= GP_FLAME_HTML; f++) {
        gp_fuzz_mem m;
        gp_fuzz_mem_open(&m);
        gp_status st = gp_flame_render(tree, (gp_flame_format)f, &ro, m.fp, NULL);
        gp_fuzz_mem_close(&m);
        if (f == GP_FLAME_SPEEDSCOPE && tree->is_diff) {
            gp_fuzz_check(st == GP_EINVAL, "speedscope of a diff is refused");
        } else {
            gp_fuzz_check(st == GP_OK, what[f]);
            if (f == GP_FLAME_FOLDED)
                check_folded(m.text, m.len, tree->is_diff);
            else if (f == GP_FLAME_SPEEDSCOPE)
                gp_fuzz_check_json(m.text, m.len, what[f]);
            else
                gp_fuzz_check_page(m.text, m.len, what[f]);
        }
        gp_fuzz_mem_free(&m);
    }
}

static void fuzz_one(gp_fuzz_input *in)
{
    gp_trace **t = in->t;
    size_t n = in->n;
    uint8_t flags = in->flags;
    gp_flame_opts fo;
    gp_flame_opts_init(&fo);
    fo.weight = (gp_flame_weight)(flags % 3);
    fo.max_depth = (flags & 4) ? 3 : 0;
    fo.group_kernels = (flags & 8) ? 1000 : 0;
    fo.min_duration = (flags & 16) ? 500 : 0;
    fo.thread_frames = !(flags & 32);
    gp_flame_tree *tree[2] = {NULL, NULL}, *diff = NULL;
    bool built = true;
    for (size_t i = 0; i < n; i++) {
        gp_status st = gp_flame_build(gp_traces_const(&t[i]), 1, &fo, &tree[i], NULL);
        gp_fuzz_check(st == GP_OK || st == GP_EEMPTY || st == GP_ELIMIT || st == GP_ENOMEM,
                      "gp_flame_build: OK, EEMPTY, ELIMIT or ENOMEM");
        built &= st == GP_OK;
    }
    if (built) {
        for (size_t i = 0; i < n; i++) {
            gp_fuzz_check(tree[i]->n_nodes >= 1 && tree[i]->nodes[0].parent == 0, "a root");
            gp_fuzz_check(tree[i]->nodes[0].total >= 0, "root total >= 0");
        }
        if (n == 2) {
            gp_status st = gp_flame_diff(tree[0], tree[1], &diff, NULL);
            gp_fuzz_check(st == GP_OK || st == GP_EINVAL || st == GP_ENOMEM, "gp_flame_diff");
            if (st == GP_OK)
                render_all(diff, flags);
        } else {
            render_all(tree[0], flags);
        }
    }
    gp_flame_tree_free(diff);
    for (size_t i = 0; i < n; i++)
        gp_flame_tree_free(tree[i]);
}

GP_FUZZ_TRACES_TARGET(fuzz_one)
