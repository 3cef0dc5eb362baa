/* The self-contained HTML report of `gpuprof compile --html`: summary cards, the phase-time
 * chart, graph breaks, recompilations, failures, ranks, one row per compile id (as tlparse's
 * index) with its payloads (graphs, generated code, guards, artifacts) read back from the log and
 * shown in place, and the compiled regions of traces. Styles: timeline.css, report.css and
 * compile.css (the shared page look). Formats only. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gpuprof/compile.h"
#include "core/units.h"
#include "core/util.h"
#include "render/compile_render.h"
#include "render/render_internal.h"

/* Each payload is shown up to this many bytes; the report embeds at most BUDGET in all. */
#define PAYLOAD_MAX ((size_t)256 << 10)
#define BUDGET ((uint64_t)32 << 20)

static void card(FILE *fp, const char *label, const char *value)
{
    fputs("<div class=\"gp-card\"><div class=\"gp-card-v\">", fp);
    gp__html_str(fp, value);
    fputs("</div><div class=\"gp-card-l\">", fp);
    gp__html_str(fp, label);
    fputs("</div></div>\n", fp);
}

static void td_loc(FILE *fp, const char *file, int32_t line)
{
    char b[1200];
    snprintf(b, sizeof b, "%s:%d", gp__compile_base(file), line);
    fputs("<td title=\"", fp);
    gp__html_str(fp, file);
    fputs("\">", fp);
    gp__html_str(fp, b);
    fputs("</td>", fp);
}

static void cards(const gp_compile_report *r, FILE *fp)
{
    const gp_compile_summary *s = &r->analysis->summary;
    char v[64];
    fputs("<section class=\"gp-cards\">\n", fp);
    snprintf(v, sizeof v, "%u", s->compiles);
    card(fp, "compiles", v);
    snprintf(v, sizeof v, "%u", s->recompiles);
    card(fp, "recompilations", v);
    snprintf(v, sizeof v, "%u", s->breaks);
    card(fp, "graph breaks", v);
    snprintf(v, sizeof v, "%u", s->failures);
    card(fp, "failures", v);
    if (s->compile_time >= 0)
        gp__fmt_dur_html(v, sizeof v, s->compile_time);
    else
        snprintf(v, sizeof v, "n/a");
    card(fp, "compile time", v);
    if (s->cache_hit_rate >= 0)
        snprintf(v, sizeof v, "%.1f %%", 100 * s->cache_hit_rate);
    else
        snprintf(v, sizeof v, "n/a");
    card(fp, "cache hit rate", v);
    if (s->kernels)
        snprintf(v, sizeof v, "%.2f", s->fusion_ratio);
    else
        snprintf(v, sizeof v, "n/a");
    card(fp, "aten ops per kernel", v);
    fputs("</section>\n", fp);
    if (r->log->is_export) {
        const gp_compile_export *x = &r->log->export_info;
        fprintf(fp,
                "<p class=\"gp-warn\">A torch.export log, not torch.compile: %" PRIu64
                " exported program(s), %" PRIu64 " guards added, %" PRIu64
                " data-dependent expressions, %" PRIu64 " missing and %" PRIu64
                " mismatched fake kernels.</p>\n",
                x->exported_programs, x->guards_added, x->data_dependent, x->missing_fake_kernel,
                x->mismatched_fake_kernel);
    }
}

/* The phase-time chart: the metrics' phases, then the chromium phases, as bars. */
static void phase_chart(const gp_compile_report *r, FILE *fp)
{
    const gp_compile_analysis *a = r->analysis;
    const gp_compile_summary *s = &a->summary;
    const char *names[] = {"whole frames", "backend", "AOT autograd", "Inductor", "code gen"};
    gp_ns vals[] = {s->compile_time, s->backend, s->aot, s->inductor, s->code_gen};
    gp_ns max = 1;
    for (size_t i = 0; i < GP_ARRAY_LEN(vals); i++)
        max = GP_MAX(max, vals[i]);
    for (size_t i = 0; i < a->n_phases; i++)
        max = GP_MAX(max, a->phases[i].total);
    fputs("<section class=\"gp-half\"><h2>Compile time by phase</h2>\n<table "
          "class=\"gp-bars\">\n",
          fp);
    size_t shown = a->n_phases < 16 ? a->n_phases : 16;
    for (size_t i = 0; i < GP_ARRAY_LEN(vals) + shown; i++) {
        bool metric = i < GP_ARRAY_LEN(vals);
        gp_ns v = metric ? vals[i] : a->phases[i - GP_ARRAY_LEN(vals)].total;
        const char *n = metric ? names[i] : a->phases[i - GP_ARRAY_LEN(vals)].name;
        if (v <= 0)
            continue;
        char t[32];
        gp__fmt_dur_html(t, sizeof t, v);
        fputs("<tr><td class=\"gp-name\">", fp);
        gp__html_str(fp, n);
        fprintf(fp,
                "%s</td><td><span class=\"gp-track\"><div class=\"gp-bar %s\" "
                "style=\"width:%.1f%%\"></div></span>%s</td></tr>\n",
                metric ? " <span class=\"gp-kind\">metrics</span>" : "",
                metric ? "gp-bar2" : "gp-phase", 100.0 * (double)v / (double)max, t);
    }
    fputs("</table>\n<p class=\"gp-note\">\"metrics\": compilation_metrics, summed over compile "
          "ids; the rest: chromium_event B/E phases (dynamo_timed).</p></section>\n",
          fp);
}

static void breaks_table(const gp_compile_report *r, FILE *fp)
{
    const gp_compile_analysis *a = r->analysis;
    fprintf(fp, "<section><h2>Graph breaks (%zu)</h2>\n", a->n_breaks);
    if (!a->n_breaks) {
        fputs("<p class=\"gp-na\">none</p></section>\n", fp);
        return;
    }
    fputs("<table class=\"gp-table gp-cc\"><thead><tr><th>rank</th><th>function</th><th>user "
          "line</th><th>reason</th><th>cause</th><th>suggestion</th><th>compile "
          "ids</th></tr></thead><tbody>\n",
          fp);
    for (size_t i = 0; i < a->n_breaks; i++) {
        const gp_compile_break *b = &a->breaks[i];
        fprintf(fp, "<tr class=\"gp-brk\"><td data-v=\"%d\">%d</td>", b->rank, b->rank);
        gp__compile_td(fp, "gp-name", b->function);
        td_loc(fp, b->file, b->line);
        gp__compile_td(fp, "gp-reason", b->reason[0] ? b->reason : "(not in the log)");
        gp__compile_td(fp, NULL, gp_compile_cause_name(b->cause));
        gp__compile_td(fp, "gp-reason", gp_compile_cause_suggestion(b->cause));
        fputs("<td class=\"gp-id\">", fp);
        if (b->unit != UINT32_MAX)
            fprintf(fp, "<a href=\"#u%u\">%s</a> ", b->unit, r->log->units[b->unit].id);
        if (b->resume_unit != UINT32_MAX)
            fprintf(fp, "&rarr; <a href=\"#u%u\">%s</a>", b->resume_unit,
                    r->log->units[b->resume_unit].id);
        fputs("</td></tr>\n", fp);
    }
    fputs("</tbody></table></section>\n", fp);
}

static void recompiles_table(const gp_compile_report *r, FILE *fp)
{
    const gp_compile_analysis *a = r->analysis;
    fprintf(fp, "<section><h2>Recompilations (%zu)</h2>\n", a->n_recompiles);
    if (a->n_recompiles) {
        fputs("<table class=\"gp-table gp-cc\"><thead><tr><th>rank</th><th>compile "
              "id</th><th>function</th><th>reason</th><th>cause</th><th>suggestion</th></tr>"
              "</thead><tbody>\n",
              fp);
        for (size_t i = 0; i < a->n_recompiles; i++) {
            const gp_compile_recompile *x = &a->recompiles[i];
            const gp_compile_unit *u = &r->log->units[x->unit];
            fprintf(fp,
                    "<tr><td data-v=\"%d\">%d</td><td class=\"gp-id\"><a href=\"#u%u\">%s</a></td>",
                    x->rank, x->rank, x->unit, u->id);
            gp__compile_td(fp, "gp-name", u->co_name);
            gp__compile_td(fp, "gp-reason", x->reason[0] ? x->reason : "(no reason in the log)");
            gp__compile_td(fp, NULL, gp_compile_cause_name(x->cause));
            gp__compile_td(fp, "gp-reason", gp_compile_cause_suggestion(x->cause));
            fputs("</tr>\n", fp);
        }
        fputs("</tbody></table>\n", fp);
    }
    for (size_t i = 0; i < a->n_frames; i++) {
        const gp_compile_frame_stats *f = &a->frames[i];
        if (!f->over_limit)
            continue;
        fprintf(fp, "<p class=\"gp-warn\">rank %d, frame %d (", f->rank, f->frame_id);
        gp__html_str(fp, r->log->units[f->first_unit].co_name);
        fprintf(fp, ") compiled %u times, over its recompile limit %" PRId64 ": ", f->compiles,
                f->limit);
        gp__html_str(fp, gp_compile_cause_suggestion(GP_CC_CACHE_LIMIT));
        fputs("</p>\n", fp);
    }
    fputs("</section>\n", fp);
}

static void failures_and_ranks(const gp_compile_report *r, FILE *fp)
{
    const gp_compile_analysis *a = r->analysis;
    fprintf(fp, "<section><h2>Failures (%zu)</h2>\n", a->n_failures);
    for (size_t i = 0; i < a->n_failures; i++) {
        const gp_compile_unit *u = &r->log->units[a->failures[i]];
        fprintf(fp, "<p class=\"gp-warn\"><a href=\"#u%u\">%s</a> (rank %d) ", a->failures[i],
                u->id, u->rank);
        gp__html_str(fp, u->co_name);
        fputs(": <b>", fp);
        gp__html_str(fp, u->fail_type);
        fputs("</b> ", fp);
        gp__html_str(fp, u->fail_reason);
        fputs("</p>\n", fp);
    }
    fputs("</section>\n", fp);
    if (a->n_ranks < 2)
        return;
    fputs("<section><h2>Ranks</h2>\n<table class=\"gp-table\"><thead><tr><th>rank</th><th>"
          "frames</th><th>compiles</th><th>breaks</th><th>recompiles</th><th>failures</th><th>"
          "graphs</th><th>time</th></tr></thead><tbody>\n",
          fp);
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_compile_rank *k = &a->ranks[i];
        fprintf(fp, "<tr><td data-v=\"%d\">%d</td>", k->rank, k->rank);
        gp__compile_td_num(fp, k->frames);
        gp__compile_td_num(fp, k->compiles);
        gp__compile_td_num(fp, k->breaks);
        gp__compile_td_num(fp, k->recompiles);
        gp__compile_td_num(fp, k->failures);
        gp__compile_td_num(fp, k->graphs);
        gp__compile_td_dur(fp, k->compile_time);
        fputs("</tr>\n", fp);
    }
    fputs("</tbody></table>\n", fp);
    for (size_t i = 0; i < a->n_divergences; i++) {
        fputs("<p class=\"gp-warn\">Divergence: ", fp);
        gp__html_str(fp, a->divergences[i]);
        fputs("</p>\n", fp);
    }
    fputs("</section>\n", fp);
}

typedef struct unit_ctx {
    gp_compile_payload_reader *reader;
    uint64_t budget;
    gp_error *err;
    gp_status st;
    const char *tag; /* per unit: the tags of its row */
} unit_ctx;

static void payload_details(const gp_compile_report *r, unit_ctx *c, uint32_t pi, FILE *fp)
{
    const gp_compile_payload *p = &r->log->payloads[pi];
    char size[32];
    gp__fmt_bytes(size, sizeof size, (double)p->bytes);
    fputs("<details><summary>", fp);
    gp__html_str(fp, p->name);
    fprintf(fp, " (%" PRIu64 " lines, %s%s)</summary>", p->n_lines, size,
            p->truncated ? ", INCOMPLETE" : "");
    if (c->budget < p->bytes || c->st != GP_OK) {
        fputs("<p class=\"gp-na\">not embedded (the report's size budget is spent)</p>", fp);
    } else {
        const char *text;
        size_t len;
        c->st = gp_compile_payload_text(c->reader, p, PAYLOAD_MAX, &text, &len, c->err);
        if (c->st == GP_OK) {
            c->budget -= len;
            fputs("<pre class=\"gp-code\">", fp);
            gp__html_text(fp, text, len);
            if (p->bytes > len)
                fprintf(fp, "\n... %" PRIu64 " more bytes", p->bytes - len);
            fputs("</pre>", fp);
        }
    }
    fputs("</details>\n", fp);
}

static void unit_row(const gp_compile_report *r, unit_ctx *c, uint32_t i, const bool *brk, FILE *fp)
{
    const gp_compile_unit *u = &r->log->units[i];
    const char *cls = u->fail_type ? " class=\"gp-fail\"" : brk[i] ? " class=\"gp-brk\"" : "";
    fprintf(fp, "<tr id=\"u%u\"%s><td data-v=\"%d\">%d</td><td class=\"gp-id\">%s", i, cls, u->rank,
            u->rank, u->id);
    if (u->fail_type)
        fputs("<span class=\"gp-tag gp-tag-fail\">failed</span>", fp);
    if (brk[i])
        fputs("<span class=\"gp-tag gp-tag-brk\">break</span>", fp);
    if (u->frame_compile_id > 0)
        fputs("<span class=\"gp-tag gp-tag-re\">recompile</span>", fp);
    fputs("</td>", fp);
    gp__compile_td(fp, "gp-name", u->co_name);
    td_loc(fp, u->co_filename, u->co_firstlineno);
    gp__compile_td_num(fp, u->graph_op_count);
    gp__compile_td_num(fp, u->guard_count);
    gp__compile_td_dur(fp, u->times.total);
    fprintf(fp, "<td>%u / %u</td><td>", u->cache_hits, u->cache_misses);
    if (u->n_stack) {
        fputs("<details><summary>user stack</summary><pre class=\"gp-code\">", fp);
        for (size_t k = 0; k < u->n_stack; k++) {
            char line[64];
            snprintf(line, sizeof line, ":%d in ", u->stack[k].line);
            gp__html_str(fp, u->stack[k].file);
            gp__html_str(fp, line);
            gp__html_str(fp, u->stack[k].name);
            fputc('\n', fp);
        }
        fputs("</pre></details>\n", fp);
    }
    for (size_t k = 0; k < u->n_payloads; k++)
        payload_details(r, c, u->payloads[k], fp);
    fputs("</td></tr>\n", fp);
}

static gp_status units_table(const gp_compile_report *r, FILE *fp, gp_error *err)
{
    const gp_compile_log *log = r->log;
    unit_ctx c = {.budget = BUDGET, .err = err};
    bool *brk = calloc(log->n_units + 1, sizeof *brk);
    if (!brk || gp_compile_payload_open(log, &c.reader) != GP_OK) {
        free(brk);
        return gp_error_set(err, GP_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < r->analysis->n_breaks; i++) {
        const gp_compile_break *b = &r->analysis->breaks[i];
        if (b->unit != UINT32_MAX)
            brk[b->unit] = true;
    }
    fprintf(fp,
            "<section><h2>Compile ids (%zu)</h2>\n<table class=\"gp-table gp-cc gp-units\"><thead>"
            "<tr><th>rank</th><th>id</th><th>function</th><th>file:line</th><th>ops</th>"
            "<th>guards</th><th>time</th><th>cache hit/miss</th><th>graphs, code and "
            "artifacts</th></tr></thead><tbody>\n",
            log->n_units);
    for (uint32_t i = 0; i < log->n_units && c.st == GP_OK; i++)
        unit_row(r, &c, i, brk, fp);
    fputs("</tbody></table></section>\n", fp);
    gp_compile_payload_close(c.reader);
    free(brk);
    return c.st;
}

gp_status gp_compile_render_html(const gp_compile_report *r, FILE *fp, gp_error *err)
{
    const char *title = r->title ? r->title : "gpuprof compile report";
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta "
          "name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
          fp);
    gp__html_str(fp, title);
    fprintf(fp, "</title>\n<style>\n%s%s%s</style>\n</head>\n<body>%s\n<header>\n<h1>",
            gp__asset_timeline_css, gp__asset_report_css, gp__asset_compile_css,
            r->nav_html ? r->nav_html : "");
    gp__html_str(fp, title);
    fprintf(
        fp,
        "</h1>\n<p class=\"gp-sub\">%zu log file%s, %zu trace%s &middot; gpuprof " GP_VERSION_STRING
        "</p>\n</header>\n<main>\n",
        r->log ? r->log->n_files : 0, r->log && r->log->n_files == 1 ? "" : "s", r->n_traces,
        r->n_traces == 1 ? "" : "s");
    gp_status st = GP_OK;
    if (r->log && r->analysis) {
        cards(r, fp);
        phase_chart(r, fp);
        failures_and_ranks(r, fp);
        breaks_table(r, fp);
        recompiles_table(r, fp);
        st = units_table(r, fp, err);
    }
    if (st == GP_OK && r->n_traces)
        fputs("<section><h2>Traces: compiled regions and graph breaks at run time</h2></section>\n",
              fp);
    for (size_t i = 0; st == GP_OK && i < r->n_traces; i++) {
        fputs("<section>", fp);
        gp__compile_trace_html(fp, r->traces[i], r->analysis, r->traces[i]->source);
        fputs("</section>\n", fp);
    }
    fputs("</main>\n<footer class=\"gp-note\">Generated by gpuprof compile; every payload is "
          "embedded up to 256 KiB.</footer>\n</body>\n</html>\n",
          fp);
    if (st != GP_OK)
        return st;
    return ferror(fp) ? gp_error_set(err, GP_EIO, "writing the report failed") : GP_OK;
}
