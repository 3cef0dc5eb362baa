/* The dashboard's table of every operation (gp_summary rows of every kind): a tab per kind, the
 * first one "ops & kernels", name filter and sortable columns, drawn by report.js from a JSON
 * data script (only the visible rows are in the DOM: 100,000 rows sort and filter in well under
 * 100 ms). Formats the summary; computes nothing. */
#include <string.h>

#include "core/json_writer.h"
#include "render/render_internal.h"

/* The kinds of the first tab, "ops & kernels": CPU ops, GPU work and a profile's ranges (not the
 * Python frames, annotations and runtime calls, which a trace holds by the thousand). */
static bool first_tab_kind(gp_event_kind k)
{
    return k == GP_EV_CPU_OP || k == GP_EV_RANGE || gp_event_kind_is_gpu_work(k);
}

/* The data: {"kinds": [names], "first": [kind indexes of the first tab], "of": [what each kind's
 * share is of], "rows": [[kind, name, calls, total once per call stack, self, mean, min, max,
 * p50, p95, share], ...]} (times in ns). */
static void ops_json(gp__jw *w, const gp_summary *s)
{
    gp__jw_obj_begin(w);
    gp__jw_key(w, "kinds");
    gp__jw_arr_begin(w);
    for (int k = 0; k < GP_EV_KIND_COUNT; k++)
        gp__jw_str(w, gp_event_kind_name((gp_event_kind)k));
    gp__jw_arr_end(w);
    gp__jw_key(w, "first");
    gp__jw_arr_begin(w);
    for (int k = 0; k < GP_EV_KIND_COUNT; k++)
        if (first_tab_kind((gp_event_kind)k))
            gp__jw_int(w, k);
    gp__jw_arr_end(w);
    gp__jw_key(w, "of");
    gp__jw_arr_begin(w);
    for (int k = 0; k < GP_EV_KIND_COUNT; k++)
        gp__jw_str(w, gp_event_kind_is_gpu_work((gp_event_kind)k) ? "the GPU work sum"
                                                                  : "the kind's self time");
    gp__jw_arr_end(w);
    gp__jw_key(w, "rows");
    gp__jw_arr_begin(w);
    for (int k = 0; k < GP_EV_KIND_COUNT; k++) {
        const gp_kind_summary *ks = &s->kinds[k];
        for (size_t i = 0; i < ks->n_rows; i++) {
            const gp_name_stats *r = &ks->rows[i];
            gp__jw_arr_begin(w);
            gp__jw_int(w, r->kind);
            gp__jw_str(w, r->name);
            gp__jw_uint(w, r->calls);
            gp__jw_int(w, r->total_once);
            gp__jw_int(w, r->self_total);
            gp__jw_fixed(w, r->mean, 0);
            gp__jw_int(w, r->min);
            gp__jw_int(w, r->max);
            gp__jw_fixed(w, r->p50, 0);
            gp__jw_fixed(w, r->p95, 0);
            gp__jw_fixed(w, r->share, 6);
            gp__jw_arr_end(w);
        }
    }
    gp__jw_arr_end(w);
    gp__jw_obj_end(w);
}

gp_status gp__dash_ops_html(FILE *fp, const gp_summary *s, size_t *rows)
{
    size_t n = 0;
    for (int k = 0; k < GP_EV_KIND_COUNT; k++)
        n += s->kinds[k].n_rows;
    *rows = n;
    fprintf(fp,
            "<div class=\"gp-controls\"><span class=\"gp-tabs\" id=\"gp-ops-tabs\" "
            "role=\"tablist\"></span> <input id=\"gp-filter\" type=\"search\" "
            "placeholder=\"Filter by name or kind (regular expression)\" aria-label=\"Filter\"> "
            "<span id=\"gp-count\"></span></div>\n"
            "<p class=\"gp-note\">total: the calls' durations, a call inside a call of the same "
            "name (recursion) counted once with it; self: the time no nested event runs; share: "
            "the self time as a share of the kind's self time (of the GPU work sum for kernels, "
            "memcpys and memsets).</p>\n"
            "<div class=\"gp-vscroll\" id=\"gp-ops-scroll\">\n"
            "<table class=\"gp-table\" id=\"gp-ops\" data-rows=\"%zu\">\n<thead><tr>"
            "<th data-t=\"s\">kind</th><th data-t=\"s\">name</th><th>calls</th><th "
            "title=\"inclusive time, each call stack once\">total</th><th title=\"exclusive "
            "time\">self</th><th>mean</th><th>min</th><th>max</th><th>p50</th><th>p95</th>"
            "<th id=\"gp-share-head\" title=\"the self time as a share of the kind's self time; "
            "kernels, memcpys and memsets: of the GPU work "
            "sum\">share</th></tr></thead>\n<tbody></tbody></table>\n</div>\n"
            "<script id=\"gp-ops-data\" type=\"application/json\">",
            n);
    gp__jw w;
    gp__jw_init(&w, fp);
    w.html_safe = true;
    ops_json(&w, s);
    gp_status st = gp__jw_finish(&w);
    fputs("</script>\n", fp);
    return st != GP_OK ? st : ferror(fp) ? GP_EIO : GP_OK;
}
