/* Timeline renderer, the critical-path overlay (gpuprof timeline --critical-path): the legend line
 * per rank and the overlay's JSON (docs/internals/report.md, "Timeline encoding"), formatted from
 * the flags and edges timeline_cp.c (analyze) laid out. Nothing here when the path was not
 * computed: the page is then byte for byte the one without the option. */
#include <stdlib.h>

#include "core/units.h"
#include "render/render_internal.h"
#include "render/timeline_out.h"

/* Per event of row r's track: its number among the row's emitted events (the page's index, the
 * JS level's idx), UINT32_MAX when not emitted. NULL when out of memory. */
static uint32_t *ordinals(const gp_timeline *tl, const gp_tl_row *row)
{
    size_t n = tl->traces[row->trace]->tracks[row->track].n_events;
    uint32_t *ord = malloc((n ? n : 1) * sizeof *ord), k = 0;
    for (size_t i = 0; ord && i < n; i++)
        ord[i] = gp__tl_emitted(row, i) ? k++ : UINT32_MAX;
    return ord;
}

/* One end of an edge as "row,ordinal,end"; false when its event is not emitted. */
static bool link_end(uint32_t *const *ords, uint32_t row, uint32_t ev, bool end, char *buf,
                     size_t cap)
{
    if (!ords[row] || ords[row][ev] == UINT32_MAX)
        return false;
    snprintf(buf, cap, "%u,%u,%d", row, ords[row][ev], end ? 1 : 0);
    return true;
}

/* {"paths":[{rank,n,length,classes{name:ns}}],"rows":[[row,[ordinal...]]],
 *  "links":[[srow,sord,send,drow,dord,dend,type]]} */
gp_status gp__tl_cp_json(const gp_timeline *tl, gp__out *o)
{
    gp__out_str(o, "{\"paths\":[");
    for (size_t i = 0; i < tl->n_cp_ranks; i++) {
        const gp_tl_cp_rank *p = &tl->cp_ranks[i];
        gp__out_str(o, i ? ",{\"rank\":" : "{\"rank\":");
        gp__out_int(o, p->rank);
        gp__out_str(o, ",\"n\":");
        gp__out_int(o, (int64_t)p->n_paths);
        gp__out_str(o, ",\"length\":");
        gp__out_int(o, p->length);
        gp__out_str(o, ",\"classes\":{");
        for (int c = 0; c < GP_CP_COUNT; c++) {
            if (c)
                gp__out_str(o, ",");
            gp__out_jstr(o, gp_cp_class_name((gp_cp_class)c));
            gp__out_str(o, ":");
            gp__out_int(o, p->by_class[c]);
        }
        gp__out_str(o, "}}");
    }
    gp__out_str(o, "],\"rows\":[");
    uint32_t **ords = calloc(tl->n_rows ? tl->n_rows : 1, sizeof *ords);
    if (!ords)
        return GP_ENOMEM;
    gp_status s = GP_OK;
    bool first = true;
    for (size_t r = 0; r < tl->n_rows && s == GP_OK; r++) {
        const gp_tl_row *row = &tl->rows[r];
        if (!row->depth)
            continue;
        if (!(ords[r] = ordinals(tl, row))) {
            s = GP_ENOMEM;
            break;
        }
        if (!row->on_path)
            continue;
        gp__out_str(o, first ? "[" : ",[");
        first = false;
        gp__out_int(o, (int64_t)r);
        gp__out_str(o, ",[");
        size_t n = tl->traces[row->trace]->tracks[row->track].n_events, k = 0;
        for (size_t i = 0; i < n; i++) {
            if (!row->on_path[i] || ords[r][i] == UINT32_MAX)
                continue;
            if (k++)
                gp__out_raw(o, ",", 1);
            gp__out_int(o, ords[r][i]);
        }
        gp__out_str(o, "]]");
    }
    gp__out_str(o, "],\"links\":[");
    first = true;
    for (size_t i = 0; i < tl->n_cp_links && s == GP_OK; i++) {
        const gp_tl_link *l = &tl->cp_links[i];
        char a[64], b[64];
        if (!link_end(ords, l->src_row, l->src_ev, l->src_end, a, sizeof a) ||
            !link_end(ords, l->dst_row, l->dst_ev, l->dst_end, b, sizeof b))
            continue;
        gp__out_str(o, first ? "[" : ",[");
        first = false;
        gp__out_str(o, a);
        gp__out_str(o, ",");
        gp__out_str(o, b);
        gp__out_str(o, ",");
        gp__out_jstr(o, l->type ? l->type : "");
        gp__out_str(o, "]");
    }
    gp__out_str(o, "]}");
    for (size_t r = 0; r < tl->n_rows; r++)
        free(ords[r]);
    free(ords);
    return s != GP_OK ? s : o->err;
}

void gp__tl_cp_legend(const gp_timeline *tl, FILE *fp)
{
    fputs("<p id=\"gp-tl-cp-legend\" class=\"gp-figs gp-tl-cp-legend\">", fp);
    for (size_t i = 0; i < tl->n_cp_ranks; i++) {
        const gp_tl_cp_rank *p = &tl->cp_ranks[i];
        char len[32];
        gp__fmt_dur(len, sizeof len, p->length);
        fprintf(fp, "<span class=\"gp-tl-cp-rank\" data-length-ns=\"%lld\">critical path",
                (long long)p->length);
        if (tl->n_cp_ranks > 1)
            fprintf(fp, " rank %d", (int)p->rank);
        if (p->n_paths == 0) {
            fputs(": none (no valid path)</span> ", fp);
            continue;
        }
        fprintf(fp, " <b>%s</b> (%zu %s)", len, p->n_paths, p->n_paths == 1 ? "region" : "regions");
        gp_ns sum = 0;
        for (int c = 0; c < GP_CP_COUNT; c++)
            sum = gp__sat_add(sum, p->by_class[c]);
        const char *sep = ": ";
        for (int c = 0; c < GP_CP_COUNT && sum > 0; c++) {
            if (p->by_class[c] <= 0)
                continue;
            fprintf(fp, "%s%s %.1f%%", sep, gp_cp_class_name((gp_cp_class)c),
                    100.0 * (double)p->by_class[c] / (double)sum);
            sep = " &middot; ";
        }
        fputs("</span> ", fp);
    }
    fputs("</p>\n", fp);
}
