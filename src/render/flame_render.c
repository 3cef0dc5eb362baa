/* Flame graph renderers: format a finished gp_flame_tree (layout done in flame.c) as folded
 * stacks, speedscope JSON, a standalone SVG or an HTML page. No computation of weights here. */
#include <stdlib.h>
#include <string.h>

#include "core/imap.h"
#include "core/json_writer.h"
#include "core/util.h"
#include "render/flame_speedscope.h"
#include "render/render_internal.h"

#define ROW_PX 16
#define TOP_PX 34
#define BOTTOM_PX 28

void gp_flame_render_opts_init(gp_flame_render_opts *o)
{
    memset(o, 0, sizeof *o);
    o->title = NULL;
    o->width = 1200;
    o->min_width_px = 0.1;
    o->max_bytes = GP_FLAME_MAX_BYTES;
}

gp_status gp_flame_format_from_path(const char *path, gp_flame_format *out)
{
    static const struct {
        const char *suffix;
        gp_flame_format fmt;
    } map[] = {{".speedscope.json", GP_FLAME_SPEEDSCOPE},
               {".folded", GP_FLAME_FOLDED},
               {".txt", GP_FLAME_FOLDED},
               {".json", GP_FLAME_SPEEDSCOPE},
               {".svg", GP_FLAME_SVG},
               {".html", GP_FLAME_HTML},
               {".htm", GP_FLAME_HTML}};
    size_t n = strlen(path);
    for (size_t i = 0; i < GP_ARRAY_LEN(map); i++) {
        size_t k = strlen(map[i].suffix);
        if (n >= k && strcmp(path + n - k, map[i].suffix) == 0) {
            *out = map[i].fmt;
            return GP_OK;
        }
    }
    return GP_EINVAL;
}

/* A frame name as a folded-stack element: ';' would split the frame and a newline the line. */
static void folded_name(FILE *fp, const char *s)
{
    for (; *s; s++) {
        char c = *s;
        fputc(c == ';' ? ':' : (c == '\n' || c == '\r') ? ' ' : c, fp);
    }
}

static void folded_path(FILE *fp, const gp_flame_tree *t, uint32_t i)
{
    if (i == 0)
        return;
    if (t->nodes[i].parent != 0) {
        folded_path(fp, t, t->nodes[i].parent);
        fputc(';', fp);
    }
    folded_name(fp, t->nodes[i].name);
}

/* Characters of %lld of v. */
static uint64_t num_len(int64_t v)
{
    uint64_t n = v < 0 ? 2 : 1, u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    for (; u >= 10; u /= 10)
        n++;
    return n;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* gp_flame_stack_bytes into *out; GP_ENOMEM when it cannot tell. */
static gp_status stack_bytes(const gp_flame_tree *t, gp_flame_format fmt, uint64_t *out)
{
    *out = 0;
    if ((fmt != GP_FLAME_FOLDED && fmt != GP_FLAME_SPEEDSCOPE) || t->n_nodes == 0)
        return GP_OK;
    /* per[i]: node i's stack, root excluded: its folded bytes, or its depth for speedscope
     * (parents precede children, so one pass) */
    uint64_t *per = malloc(t->n_nodes * sizeof *per), total = 0;
    if (!per)
        return GP_ENOMEM;
    int digits = 1; /* of a speedscope frame index, with its comma */
    for (size_t n = t->n_nodes; n >= 10; n /= 10)
        digits++;
    per[0] = 0;
    for (size_t i = 1; i < t->n_nodes; i++) {
        const gp_flame_node *nd = &t->nodes[i];
        uint32_t p = nd->parent < i ? nd->parent : 0;
        per[i] = fmt == GP_FLAME_FOLDED ? sat_add(per[p], strlen(nd->name) + (p != 0))
                                        : sat_add(per[p], 1);
        bool emit = nd->self > 0 || (fmt == GP_FLAME_FOLDED && t->is_diff && nd->base_self > 0);
        if (!emit)
            continue;
        uint64_t line = fmt == GP_FLAME_FOLDED
                            ? sat_add(per[i], 2 + num_len(nd->self) +
                                                  (t->is_diff ? 1 + num_len(nd->base_self) : 0))
                            : (per[i] > UINT64_MAX / (uint64_t)(digits + 1)
                                   ? UINT64_MAX
                                   : per[i] * (uint64_t)(digits + 1) + 3);
        total = sat_add(total, line);
    }
    free(per);
    *out = total;
    return GP_OK;
}

uint64_t gp_flame_stack_bytes(const gp_flame_tree *t, gp_flame_format fmt)
{
    uint64_t bytes;
    return stack_bytes(t, fmt, &bytes) == GP_OK ? bytes : UINT64_MAX;
}

static gp_status render_folded(const gp_flame_tree *t, FILE *fp)
{
    /* Depth-first so that lines come out in tree order (children sorted by name). */
    uint32_t *stack = malloc((t->n_nodes + 1) * sizeof *stack);
    if (!stack)
        return GP_ENOMEM;
    size_t ns = 0;
    stack[ns++] = 0;
    while (ns) {
        uint32_t i = stack[--ns];
        const gp_flame_node *nd = &t->nodes[i];
        bool emit = i != 0 && (nd->self > 0 || (t->is_diff && nd->base_self > 0));
        if (emit) {
            folded_path(fp, t, i);
            if (t->is_diff)
                fprintf(fp, " %lld %lld\n", (long long)nd->base_self, (long long)nd->self);
            else
                fprintf(fp, " %lld\n", (long long)nd->self);
        }
        for (uint32_t k = nd->n_children; k-- > 0;)
            stack[ns++] = nd->first_child + k;
    }
    free(stack);
    return GP_OK;
}

static gp_status render_speedscope(const gp_flame_tree *t, const gp_flame_render_opts *o, FILE *fp)
{
    if (t->is_diff)
        return GP_EINVAL;
    /* Frames: one per distinct name, numbered in order of first appearance (BFS). */
    gp_status s = GP_OK;
    uint32_t *frame_of = malloc((t->n_nodes ? t->n_nodes : 1) * sizeof *frame_of);
    const char **names = malloc((t->n_nodes ? t->n_nodes : 1) * sizeof *names);
    uint32_t *path = malloc((t->n_nodes + 1) * sizeof *path);
    gp__imap seen = {0};
    if (!frame_of || !names || !path || gp__imap_init(&seen, t->n_nodes) != GP_OK) {
        s = GP_ENOMEM;
        goto done;
    }
    size_t n_names = 0;
    for (size_t i = 1; i < t->n_nodes; i++) {
        const char *nm = t->nodes[i].name;
        int64_t key = (int64_t)(gp__hash_bytes(nm, strlen(nm)) & INT64_MAX);
        uint64_t v;
        bool found = false;
        /* Linear probing on hash collisions of different names. */
        while (gp__imap_get(&seen, key, &v)) {
            if (strcmp(names[v], nm) == 0) {
                found = true;
                break;
            }
            key = (key + 1) & INT64_MAX;
        }
        if (!found) {
            v = n_names;
            names[n_names++] = nm;
            if ((s = gp__imap_put(&seen, key, v)) != GP_OK)
                goto done;
        }
        frame_of[i] = (uint32_t)v;
    }
    gp__jw w;
    gp__jw_init(&w, fp);
    gp__jw_obj_begin(&w);
    gp__jw_kv_str(&w, "$schema", "https://www.speedscope.app/file-format-schema.json");
    gp__jw_key(&w, "shared");
    gp__jw_obj_begin(&w);
    gp__jw_key(&w, "frames");
    gp__jw_arr_begin(&w);
    for (size_t i = 0; i < n_names; i++) {
        gp__jw_obj_begin(&w);
        gp__jw_kv_str(&w, "name", names[i]);
        gp__jw_obj_end(&w);
    }
    gp__speedscope_frames(&w, o->evented);
    gp__jw_arr_end(&w);
    gp__jw_obj_end(&w);
    gp__jw_key(&w, "profiles");
    gp__jw_arr_begin(&w);
    gp__jw_obj_begin(&w);
    gp__jw_kv_str(&w, "type", "sampled");
    gp__jw_kv_str(
        &w, "name",
        t->by == GP_FLAME_BY_MODULE
            ? (t->weight == GP_FLAME_GPU ? "GPU work sum by nn.Module" : "CPU time by nn.Module")
        : t->weight == GP_FLAME_GPU ? "GPU work sum"
                                    : "CPU time");
    gp__jw_kv_str(&w, "unit", "nanoseconds");
    gp__jw_kv_int(&w, "startValue", 0);
    gp__jw_kv_int(&w, "endValue", t->n_nodes ? t->nodes[0].total : 0);
    gp__jw_key(&w, "samples");
    gp__jw_arr_begin(&w);
    for (size_t i = 1; i < t->n_nodes; i++) {
        if (t->nodes[i].self <= 0)
            continue;
        size_t np = 0;
        for (uint32_t j = (uint32_t)i; j != 0; j = t->nodes[j].parent)
            path[np++] = j;
        gp__jw_arr_begin(&w);
        while (np)
            gp__jw_uint(&w, frame_of[path[--np]]);
        gp__jw_arr_end(&w);
    }
    gp__jw_arr_end(&w);
    gp__jw_key(&w, "weights");
    gp__jw_arr_begin(&w);
    for (size_t i = 1; i < t->n_nodes; i++)
        if (t->nodes[i].self > 0)
            gp__jw_int(&w, t->nodes[i].self);
    gp__jw_arr_end(&w);
    gp__jw_obj_end(&w);
    gp__speedscope_profiles(&w, o->evented, n_names);
    gp__jw_arr_end(&w);
    gp__jw_kv_str(&w, "name", o->title ? o->title : "gpuprof flame");
    gp__jw_kv_int(&w, "activeProfileIndex", 0);
    gp__jw_kv_str(&w, "exporter", "gpuprof " GP_VERSION_STRING);
    gp__jw_obj_end(&w);
    s = gp__jw_finish(&w);
    if (s == GP_OK)
        fputc('\n', fp);
done:
    free(frame_of);
    free(names);
    free(path);
    gp__imap_free(&seen);
    return s;
}

static double pct(gp_ns part, gp_ns whole)
{
    return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

/* Tooltip text of a frame (escaped by the caller's gp__html_text). */
static void frame_tip(char *buf, size_t cap, const gp_flame_tree *t, const gp_flame_node *nd)
{
    char a[32], b[32];
    gp__fmt_dur(a, sizeof a, nd->total);
    if (t->is_diff) {
        gp__fmt_dur(b, sizeof b, nd->base_total);
        double ch = nd->base_total > 0 ? pct(nd->total - nd->base_total, nd->base_total) : 0;
        if (nd->base_total > 0)
            snprintf(buf, cap, " (%s -> %s, %+.1f%%)", b, a, ch);
        else
            snprintf(buf, cap, " (new: %s)", a);
    } else {
        snprintf(buf, cap, " (%s, %.2f%%)", a, pct(nd->total, t->nodes[0].total));
    }
}

/* Opens the pages' data object (html-safe JSON) with its title, weight and diff flag. */
static void json_head(gp__jw *w, const gp_flame_tree *t, const gp_flame_render_opts *o, FILE *fp)
{
    gp__jw_init(w, fp);
    w->html_safe = true;
    gp__jw_obj_begin(w);
    gp__jw_kv_str(w, "title", o->title ? o->title : "gpuprof flame");
    gp__jw_kv_str(w, "weight", t->weight == GP_FLAME_GPU ? "gpu" : "cpu");
    gp__jw_kv_bool(w, "diff", t->is_diff);
    if (t->by == GP_FLAME_BY_MODULE)
        gp__jw_kv_str(w, "by", "module");
}

/* The data the JS needs: per drawn frame [parent, depth, x, total, self, base_total, kind]. */
static void frame_json(FILE *fp, const gp_flame_tree *t, const gp_flame_render_opts *o,
                       const gp__flame_px *px, size_t n, int rows, int height)
{
    gp__jw w;
    json_head(&w, t, o, fp);
    gp__jw_kv_int(&w, "width", o->width);
    gp__jw_kv_int(&w, "height", height);
    gp__jw_kv_int(&w, "rows", rows);
    gp__jw_kv_int(&w, "rowPx", ROW_PX);
    gp__jw_kv_int(&w, "topPx", TOP_PX);
    gp__jw_key(&w, "frames");
    gp__jw_arr_begin(&w);
    for (size_t i = 0; i < n; i++) {
        const gp_flame_node *nd = &t->nodes[px[i].node];
        gp__jw_arr_begin(&w);
        gp__jw_uint(&w, px[i].parent);
        gp__jw_uint(&w, nd->depth);
        gp__jw_int(&w, nd->x);
        gp__jw_int(&w, nd->total);
        gp__jw_int(&w, nd->self);
        gp__jw_int(&w, nd->base_total);
        gp__jw_arr_end(&w);
    }
    gp__jw_arr_end(&w);
    gp__jw_key(&w, "names");
    gp__jw_arr_begin(&w);
    for (size_t i = 0; i < n; i++)
        gp__jw_str(&w, t->nodes[px[i].node].name);
    gp__jw_arr_end(&w);
    gp__jw_obj_end(&w);
    (void)gp__jw_finish(&w); /* stream errors surface through ferror() */
}

/* The <svg> element with every drawn frame. standalone adds the XML prolog, the controls and the
 * script; otherwise the page around it provides them. */
static gp_status render_svg(const gp_flame_tree *t, const gp_flame_render_opts *o, FILE *fp,
                            bool standalone)
{
    gp__flame_px *px = NULL;
    size_t n = 0;
    int rows = 0;
    gp_status s = gp__flame_layout_px(t, o->width, o->min_width_px, &px, &n, &rows);
    if (s != GP_OK)
        return s;
    int height = TOP_PX + rows * ROW_PX + BOTTOM_PX;
    const char *title = o->title ? o->title : "gpuprof flame";
    if (standalone)
        fputs("<?xml version=\"1.0\" standalone=\"no\"?>\n", fp);
    fprintf(fp,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" id=\"gp-flame\" "
            "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" data-ready=\"0\" "
            "data-frames=\"%zu\">\n",
            o->width, height, o->width, height, n);
    if (standalone) {
        fprintf(fp, "<style>\n%s</style>\n", gp__asset_flame_css);
        fprintf(fp, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
                o->width, height);
        fprintf(fp, "<text id=\"gp-title\" x=\"%d\" y=\"20\" text-anchor=\"middle\">",
                o->width / 2);
        gp__html_str(fp, title);
        /* what the widths weigh, as the page's subtitle says it (docs/analyses.md, "Terms") */
        fprintf(fp, " (%s%s weight)</text>\n", t->is_diff ? "differential, " : "",
                t->weight == GP_FLAME_GPU ? "GPU work sum" : "CPU time");
        fputs("<text id=\"gp-reset\" class=\"gp-btn\" x=\"10\" y=\"20\">Reset Zoom</text>\n", fp);
        fprintf(fp,
                "<text id=\"gp-search\" class=\"gp-btn\" x=\"%d\" y=\"20\" "
                "text-anchor=\"end\">Search</text>\n",
                o->width - 10);
        fprintf(fp,
                "<text id=\"gp-matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\" "
                "data-pct=\"\"></text>\n",
                o->width - 10, height - 10);
        fprintf(fp, "<text id=\"gp-details\" x=\"10\" y=\"%d\"> </text>\n", height - 10);
    }
    fputs("<g id=\"gp-frames\">\n", fp);
    char tip[96];
    for (size_t i = 0; i < n; i++) {
        const gp_flame_node *nd = &t->nodes[px[i].node];
        double y = TOP_PX + (double)px[i].row * ROW_PX;
        fprintf(fp, "<g class=\"f\" data-i=\"%zu\"><title>", i);
        gp__html_str(fp, nd->name);
        frame_tip(tip, sizeof tip, t, nd);
        gp__html_str(fp, tip);
        fprintf(fp,
                "</title><rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%d\" "
                "fill=\"#%06x\" rx=\"2\" ry=\"2\"/><text x=\"%.1f\" y=\"%.0f\">",
                px[i].x, y, px[i].w, ROW_PX - 1, (unsigned)nd->color, px[i].x + 3, y + 11.5);
        gp__html_text(fp, nd->name, px[i].label_len);
        if (px[i].ellipsis)
            fputs("..", fp);
        fputs("</text></g>\n", fp);
    }
    fputs("</g>\n", fp);
    if (standalone) {
        fputs("<script type=\"text/ecmascript\"><![CDATA[\nvar GP_FLAME = ", fp);
        frame_json(fp, t, o, px, n, rows, height);
        fprintf(fp, ";\n%s]]></script>\n", gp__asset_flame_js);
    } else {
        fputs("</svg>\n<script id=\"gp-data\" type=\"application/json\">", fp);
        frame_json(fp, t, o, px, n, rows, height);
        fputs("</script>\n", fp);
    }
    if (standalone)
        fputs("</svg>\n", fp);
    free(px);
    return GP_OK;
}

/* The HTML page's data: every node of the tree (so the page shows the count the CLI prints), in
 * tree order: [parent, total, self, base_total, name index, colour], names deduplicated, and for
 * a tree of call stacks "py": the indices of its Python frames (in order). The page
 * (assets/flame_page.js) lays the frames out on a canvas at the window's width and derives its
 * views (left heavy, sandwich, self-time table, merged instances) from this tree. */
static gp_status tree_json(gp__jw *w, const gp_flame_tree *t)
{
    gp__imap seen;
    gp_status s = gp__imap_init(&seen, t->n_nodes);
    uint32_t *name_of = malloc((t->n_nodes ? t->n_nodes : 1) * sizeof *name_of);
    const char **names = malloc((t->n_nodes ? t->n_nodes : 1) * sizeof *names);
    if (s != GP_OK || !name_of || !names) {
        s = GP_ENOMEM;
        goto done;
    }
    size_t n_names = 0;
    for (size_t i = 0; i < t->n_nodes && s == GP_OK; i++) {
        const char *nm = t->nodes[i].name;
        uint64_t v;
        /* names are interned in the tree's table: equal names are equal pointers */
        if (!gp__imap_get(&seen, (int64_t)(uintptr_t)nm, &v)) {
            v = n_names;
            names[n_names++] = nm;
            s = gp__imap_put(&seen, (int64_t)(uintptr_t)nm, v);
        }
        name_of[i] = (uint32_t)v;
    }
    if (s != GP_OK)
        goto done;
    gp__jw_key(w, "frames");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < t->n_nodes; i++) {
        const gp_flame_node *nd = &t->nodes[i];
        gp__jw_uint(w, nd->parent);
        gp__jw_int(w, nd->total);
        gp__jw_int(w, nd->self);
        gp__jw_int(w, nd->base_total);
        gp__jw_uint(w, name_of[i]);
        gp__jw_uint(w, nd->color);
    }
    gp__jw_arr_end(w);
    gp__jw_key(w, "names");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < n_names; i++)
        gp__jw_str(w, names[i]);
    gp__jw_arr_end(w);
    if (t->by == GP_FLAME_BY_STACK) { /* the Python frames, which the page may fold */
        gp__jw_key(w, "py");
        gp__jw_arr_begin(w);
        for (size_t i = 0; i < t->n_nodes; i++)
            if (t->nodes[i].kind == GP_EV_PYTHON)
                gp__jw_uint(w, i);
        gp__jw_arr_end(w);
    }
done:
    free(name_of);
    free(names);
    gp__imap_free(&seen);
    return s;
}

/* What a tree's frames are and weigh, as the page's subtitle says it: "GPU work sum weight, frames
 * by nn.Module, 12 ms in all, 250 frames". */
static void sub_text(char *buf, size_t cap, const gp_flame_tree *t)
{
    char total[32];
    gp__fmt_dur(total, sizeof total, t->n_nodes ? t->nodes[0].total : 0);
    snprintf(buf, cap, "%s weight%s, %s in all, %zu frames",
             t->weight == GP_FLAME_GPU ? "GPU work sum" : "CPU time",
             t->by == GP_FLAME_BY_MODULE ? ", frames by nn.Module" : "", total, t->n_nodes);
}

/* The page's data: the tree (tree_json), and o->alt as "alt" {by, sub, frames, names}. */
static gp_status page_json(const gp_flame_tree *t, const gp_flame_render_opts *o, FILE *fp)
{
    gp__jw w;
    json_head(&w, t, o, fp);
    gp_status s = tree_json(&w, t);
    if (s == GP_OK && o->alt) {
        char sub[160];
        sub_text(sub, sizeof sub, o->alt);
        gp__jw_key(&w, "alt");
        gp__jw_obj_begin(&w);
        gp__jw_kv_str(&w, "by", o->alt->by == GP_FLAME_BY_MODULE ? "module" : "stack");
        gp__jw_kv_str(&w, "sub", sub);
        s = tree_json(&w, o->alt);
        gp__jw_obj_end(&w);
    }
    gp__jw_obj_end(&w);
    gp_status f = gp__jw_finish(&w);
    return s != GP_OK ? s : f;
}

/* The "Frames" switch's style (only pages with an alternative tree have one): the view buttons'. */
#define BYS_CSS                                                                                    \
    ".gp-bys { font-size: 12px; margin-left: 8px; }\n"                                             \
    ".gp-bys button { font-size: 12px; border: 1px solid #aaa; background: #f4f4f4; "              \
    "padding: 2px 8px; margin-right: -1px; cursor: pointer; }\n"                                   \
    ".gp-bys button.gp-on { background: #2b5797; color: #fff; border-color: #2b5797; }\n"

/* With an alternative tree: the "Frames" switch between the two groupings. */
static void by_switch(FILE *fp, const gp_flame_tree *t, const gp_flame_render_opts *o)
{
    if (!o->alt)
        return;
    bool mod = t->by == GP_FLAME_BY_MODULE;
    fprintf(fp,
            "<span class=\"gp-bys\" role=\"tablist\" title=\"what the frames are\">Frames: "
            "<button type=\"button\" data-by=\"stack\"%s>call stacks</button>"
            "<button type=\"button\" data-by=\"module\"%s>nn.Module</button></span> ",
            mod ? "" : " class=\"gp-on\"", mod ? " class=\"gp-on\"" : "");
}

/* A tree of call stacks with Python frames gets the "fold" box (the page folds those with one
 * child, so the ops and kernels come up to the first screen). */
#define FOLD_BOX                                                                                   \
    "<label title=\"hide the Python frames that have one child\"><input id=\"gp-fold\" "           \
    "type=\"checkbox\" checked> fold single-child Python frames</label> "

static bool has_python(const gp_flame_tree *t)
{
    for (size_t i = 0; t->by == GP_FLAME_BY_STACK && i < t->n_nodes; i++)
        if (t->nodes[i].kind == GP_EV_PYTHON)
            return true;
    return false;
}

static gp_status render_html(const gp_flame_tree *t, const gp_flame_render_opts *o, FILE *fp)
{
    const char *title = o->title ? o->title : "gpuprof flame";
    fputs("<!DOCTYPE html>\n<html lang=\"en\" data-ready=\"0\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
          fp);
    gp__html_str(fp, title);
    fprintf(fp, "</title>\n<style>\n%s%s</style>\n</head>\n<body>%s\n<header>\n<h1>",
            gp__asset_flame_css, o->alt ? BYS_CSS : "", o->nav_html ? o->nav_html : "");
    gp__html_str(fp, title);
    char total[32];
    gp__fmt_dur(total, sizeof total, t->n_nodes ? t->nodes[0].total : 0);
    fprintf(fp,
            "</h1>\n<p class=\"gp-sub\">%s%s weight%s, %s in all, <span id=\"gp-nframes\">%zu"
            "</span> frames%s</p>\n"
            "<div class=\"gp-controls\"><span class=\"gp-views\" role=\"tablist\">"
            "<button type=\"button\" data-view=\"flame\" class=\"gp-on\">Flame (by name)"
            "</button><button type=\"button\" data-view=\"left\">Left heavy</button>"
            "<button type=\"button\" data-view=\"sandwich\">Sandwich</button>"
            "<button type=\"button\" data-view=\"table\">Self time</button></span> ",
            t->is_diff ? "Differential, " : "",
            t->weight == GP_FLAME_GPU ? "GPU work sum" : "CPU time",
            t->by == GP_FLAME_BY_MODULE ? ", frames by nn.Module" : "", total, t->n_nodes,
            t->is_diff ? " (red: grew, blue: shrank)" : "");
    by_switch(fp, t, o);
    fprintf(fp,
            "<label><input id=\"gp-merge\" type=\"checkbox\"> merge numbered instances "
            "(Linear_3, ProfilerStep#5)</label> %s"
            "<input id=\"gp-search-input\" type=\"search\" "
            "placeholder=\"Search (regular expression)\" aria-label=\"Search\"> "
            "<button id=\"gp-reset\" type=\"button\">Reset zoom</button> "
            "<span id=\"gp-matched\" data-pct=\"\"></span></div>\n"
            "</header>\n<div id=\"gp-details\" aria-live=\"polite\">&nbsp;</div>\n<main>\n"
            "<div id=\"gp-flame\" class=\"gp-flame\" data-ready=\"0\" data-frames=\"%zu\"></div>\n"
            "<div id=\"gp-table\" class=\"gp-table-wrap\"></div>\n"
            "<script id=\"gp-data\" type=\"application/json\">",
            has_python(t) ? FOLD_BOX : "", t->n_nodes);
    gp_status s = page_json(t, o, fp);
    if (s != GP_OK)
        return s;
    fprintf(fp, "</script>\n</main>\n<script>\n%s</script>\n</body>\n</html>\n",
            gp__asset_flame_page_js);
    return GP_OK;
}

/* The message of gp_flame_write and gp_flame_render for stacks over the limit. */
static gp_status over_limit(gp_error *err, const char *what, uint64_t bytes, uint64_t max)
{
    return gp_error_set(err, GP_ELIMIT,
                        "%s: the stacks would take %.0f MB, over the %.0f MB limit: each "
                        "line repeats its whole stack and this one nests deep (lower "
                        "--max-depth, raise --max-output or use .html / .svg)",
                        what, (double)bytes / 1e6, (double)max / 1e6);
}

gp_status gp_flame_render(const gp_flame_tree *tree, gp_flame_format fmt,
                          const gp_flame_render_opts *o, FILE *fp, gp_error *err)
{
    gp_flame_render_opts defaults;
    if (!o) {
        gp_flame_render_opts_init(&defaults);
        o = &defaults;
    }
    uint64_t bytes;
    gp_status s = o->max_bytes ? stack_bytes(tree, fmt, &bytes) : GP_OK;
    if (s != GP_OK)
        return gp_error_set(err, s, "flame graph: out of memory");
    if (o->max_bytes && bytes > o->max_bytes)
        return over_limit(err, "flame graph", bytes, o->max_bytes);
    switch (fmt) {
    case GP_FLAME_FOLDED:
        s = render_folded(tree, fp);
        break;
    case GP_FLAME_SPEEDSCOPE:
        s = render_speedscope(tree, o, fp);
        break;
    case GP_FLAME_SVG:
        s = render_svg(tree, o, fp, true);
        break;
    case GP_FLAME_HTML:
        s = render_html(tree, o, fp);
        break;
    default:
        return gp_error_set(err, GP_EINVAL, "flame graph: unknown format %d", (int)fmt);
    }
    if (s == GP_OK && ferror(fp))
        s = GP_EIO;
    if (s != GP_OK)
        gp_error_set(err, s, "flame graph: %s",
                     s == GP_EINVAL ? "a diff has no speedscope form" : gp_strerror(s));
    return s;
}

typedef struct flame_ctx {
    const gp_flame_tree *tree;
    gp_flame_format fmt;
    const gp_flame_render_opts *o;
} flame_ctx;

static gp_status flame_render_cb(const void *ctx, FILE *fp)
{
    const flame_ctx *c = ctx;
    return gp_flame_render(c->tree, c->fmt, c->o, fp, NULL);
}

gp_status gp_flame_write(const gp_flame_tree *tree, gp_flame_format fmt,
                         const gp_flame_render_opts *o, const char *path, gp_error *err)
{
    uint64_t bytes = 0, max = o ? o->max_bytes : GP_FLAME_MAX_BYTES;
    if (max && stack_bytes(tree, fmt, &bytes) != GP_OK)
        return gp_error_set(err, GP_ENOMEM, "%s: out of memory", path);
    if (max && bytes > max)
        return over_limit(err, path, bytes, max);
    flame_ctx c = {tree, fmt, o};
    return gp__render_to_file(path, flame_render_cb, &c, err);
}
