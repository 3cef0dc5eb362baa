/* What each side of a diff ran on, and the context warnings (gp_diff.side_info, context_note), in
 * the diff's text, JSON and HTML (docs/diff.md, "What each side ran on"). Formats; computes
 * nothing. */
#include <stdio.h>

#include "render/diff_render.h"
#include "render/render_internal.h"

/* The text of one side: "device Tesla V100-SXM2-32GB, world size 8, rank 0, CUDA runtime 12040". */
static void side_text(const gp_diff_side_info *s, char *buf, size_t cap)
{
    size_t n = 0;
#define ADD(...)                                                                                   \
    do {                                                                                           \
        if (n < cap)                                                                               \
            n += (size_t)snprintf(buf + n, cap - n, __VA_ARGS__);                                  \
    } while (0)
    buf[0] = '\0';
    ADD("device %s", s->device[0] ? s->device : "unknown");
    if (s->world_size > 0)
        ADD(", world size %d", (int)s->world_size);
    if (s->ranks[0])
        ADD(", %s %s", s->job ? "ranks" : "rank", s->ranks);
    if (s->pytorch[0])
        ADD(", PyTorch %s", s->pytorch);
    if (s->cuda_runtime[0])
        ADD(", CUDA runtime %s", s->cuda_runtime);
    if (s->cuda_driver[0])
        ADD(", driver %s", s->cuda_driver);
    if (s->nccl[0])
        ADD(", NCCL %s", s->nccl);
#undef ADD
}

void gp__diff_context_text(const gp_diff *d, FILE *fp)
{
    char b[320], c[320];
    side_text(&d->side_info[0], b, sizeof b);
    side_text(&d->side_info[1], c, sizeof c);
    fprintf(fp, "Base ran on: %s\nCurrent ran on: %s\n", b, c);
    if (d->context_note.msg[0])
        fprintf(fp, "WARNING: %s\n", d->context_note.msg);
}

static void side_json(gp__jw *w, const char *key, const gp_diff_side_info *s)
{
    gp__jw_key(w, key);
    gp__jw_obj_begin(w);
    gp__jw_kv_str(w, "device", s->device);
    gp__jw_kv_int(w, "world_size", s->world_size);
    gp__jw_kv_str(w, "ranks", s->ranks);
    gp__jw_kv_bool(w, "job", s->job);
    gp__jw_kv_str(w, "pytorch", s->pytorch);
    gp__jw_kv_str(w, "cuda_runtime", s->cuda_runtime);
    gp__jw_kv_str(w, "cuda_driver", s->cuda_driver);
    gp__jw_kv_str(w, "nccl", s->nccl);
    gp__jw_obj_end(w);
}

void gp__diff_context_json(gp__jw *w, const gp_diff *d)
{
    gp__jw_key(w, "context");
    gp__jw_obj_begin(w);
    side_json(w, "base", &d->side_info[0]);
    side_json(w, "current", &d->side_info[1]);
    gp__jw_kv_int(w, "names_on_both_sides", (int64_t)d->n_both_names);
    gp__jw_kv_str(w, "warning", d->context_note.msg);
    gp__jw_obj_end(w);
}

void gp__diff_context_html(const gp_diff *d, FILE *fp)
{
    char b[320], c[320];
    side_text(&d->side_info[0], b, sizeof b);
    side_text(&d->side_info[1], c, sizeof c);
    fputs("<p class=\"gp-sub\" id=\"gp-diff-context\">Base ran on: ", fp);
    gp__html_str(fp, b);
    fputs("<br>Current ran on: ", fp);
    gp__html_str(fp, c);
    fputs("</p>\n", fp);
    if (d->context_note.msg[0]) {
        fputs("<p class=\"gp-na\" id=\"gp-diff-warning\"><b>Warning:</b> ", fp);
        gp__html_str(fp, d->context_note.msg);
        fputs("</p>\n", fp);
    }
}
