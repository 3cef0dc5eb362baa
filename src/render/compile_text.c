/* Text of `gpuprof compile` (gp_compile_render_text): the compile summary, compile ids, graph
 * breaks, recompilations, failures, phases, fusion, ranks and the compiled regions of traces.
 * Formats the structs of gpuprof/compile.h; computes nothing but shares and short names. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gpuprof/compile.h"
#include "core/units.h"
#include "core/util.h"
#include "render/compile_render.h"
#include "render/render_internal.h"

#define W 100

static void dur(char *buf, size_t cap, gp_ns ns)
{
    if (ns < 0)
        snprintf(buf, cap, "-");
    else
        gp__fmt_dur(buf, cap, ns);
}

/* A reason on one line: newlines become " / ". */
static void one_line(FILE *fp, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '\n') {
            if (s[1])
                fputs(" / ", fp);
        } else if (*s != '\r') {
            fputc(*s, fp);
        }
    }
}

/* Rows shown of n: all when top is 0. */
static size_t shown(const gp_compile_report *r, size_t n)
{
    return r->top_n && r->top_n < n ? r->top_n : n;
}

static void more(FILE *fp, size_t total, size_t n)
{
    if (total > n)
        fprintf(fp, "  ... %zu more (--top 0 shows every row)\n", total - n);
}

static void summary_block(const gp_compile_report *r, FILE *fp)
{
    const gp_compile_log *log = r->log;
    const gp_compile_summary *s = &r->analysis->summary;
    char t[5][32];
    fprintf(fp, "TORCH.COMPILE LOG: %s%s (%zu file%s, %u rank%s)\n",
            log->n_files ? log->files[0].path : "", log->n_files > 1 ? " ..." : "", log->n_files,
            log->n_files == 1 ? "" : "s", s->ranks, s->ranks == 1 ? "" : "s");
    gp__rule(fp, '=', W);
    if (log->is_export) {
        const gp_compile_export *x = &log->export_info;
        fprintf(fp, "torch.export log (not torch.compile)\n");
        fprintf(fp,
                "  exported programs %" PRIu64 ", guards added %" PRIu64 ", symbols %" PRIu64
                " (unbacked %" PRIu64 ")\n",
                x->exported_programs, x->guards_added, x->symbols_created, x->unbacked_symbols);
        fprintf(fp,
                "  data-dependent expressions %" PRIu64 ", missing fake kernels %" PRIu64
                ", mismatched fake kernels %" PRIu64 "\n",
                x->data_dependent, x->missing_fake_kernel, x->mismatched_fake_kernel);
    }
    fprintf(fp,
            "frames %u, compiles %u, recompilations %u, graph breaks %u, failures %u, "
            "restarts %u\n",
            s->frames, s->compiles, s->recompiles, s->breaks, s->failures, s->restarts);
    dur(t[0], sizeof t[0], s->compile_time);
    dur(t[1], sizeof t[1], s->backend);
    dur(t[2], sizeof t[2], s->aot);
    dur(t[3], sizeof t[3], s->inductor);
    dur(t[4], sizeof t[4], s->code_gen);
    fprintf(fp, "compile time %s (backend %s, AOT autograd %s, Inductor %s, code gen %s)\n", t[0],
            t[1], t[2], t[3], t[4]);
    if (s->cache_hit_rate >= 0)
        fprintf(fp, "cache %" PRIu64 " hits, %" PRIu64 " misses (%.1f %% hit rate)\n",
                s->cache_hits, s->cache_misses, 100.0 * s->cache_hit_rate);
    else
        fprintf(fp, "cache no hits or misses logged\n");
    if (s->kernels)
        fprintf(fp,
                "fusion %u graphs; %" PRIu64 " aten ops in %" PRIu64
                " generated kernels (%.2f ops per kernel)\n",
                s->graphs, s->aten_ops, s->kernels, s->fusion_ratio);
    else
        fprintf(fp, "fusion %u graphs; no post-grad graph with generated kernels\n", s->graphs);
}

static void status_of(const gp_compile_unit *u, char *buf, size_t cap)
{
    if (u->fail_type)
        snprintf(buf, cap, "FAILED %s", u->fail_type);
    else if (u->n_restart_reasons)
        snprintf(buf, cap, "restarted");
    else if (!u->has_metrics)
        snprintf(buf, cap, "no metrics");
    else
        snprintf(buf, cap, "ok");
}

static void units_block(const gp_compile_report *r, FILE *fp)
{
    const gp_compile_log *log = r->log;
    size_t n = shown(r, log->n_units);
    fprintf(fp, "\nCOMPILE IDS (%zu)\n", log->n_units);
    fprintf(fp, "%4s  %-9s %-50s %6s %6s %7s %10s  %s\n", "rank", "id", "function (file:line)",
            "ops", "nodes", "guards", "time", "status");
    for (size_t i = 0; i < n; i++) {
        const gp_compile_unit *u = &log->units[i];
        char where[256], t[32], st[96], ops[24], nodes[24], guards[24];
        snprintf(where, sizeof where, "%s (%s:%d)", u->co_name[0] ? u->co_name : "?",
                 gp__compile_base(u->co_filename), u->co_firstlineno);
        dur(t, sizeof t, u->times.total);
        status_of(u, st, sizeof st);
        gp__compile_count(ops, sizeof ops, u->graph_op_count);
        gp__compile_count(nodes, sizeof nodes, u->graph_node_count);
        gp__compile_count(guards, sizeof guards, u->guard_count);
        fprintf(fp, "%4d  %-9s %-50.50s %6s %6s %7s %10s  %s\n", u->rank, u->id, where, ops, nodes,
                guards, t, st);
    }
    more(fp, log->n_units, n);
}

/* A listing: "TITLE (total)", row(r, fp, i) for the rows --top shows, then the "more" line. */
static void listing(const gp_compile_report *r, FILE *fp, const char *title, size_t total,
                    void (*row)(const gp_compile_report *r, FILE *fp, size_t i))
{
    fprintf(fp, "\n%s (%zu)\n", title, total);
    size_t n = shown(r, total);
    for (size_t i = 0; i < n; i++)
        row(r, fp, i);
    more(fp, total, n);
}

static void break_row(const gp_compile_report *r, FILE *fp, size_t i)
{
    const gp_compile_log *log = r->log;
    const gp_compile_break *b = &r->analysis->breaks[i];
    fprintf(fp, "  [rank %d] %s at %s:%d", b->rank, b->function[0] ? b->function : "?",
            gp__compile_base(b->file), b->line);
    if (b->unit != UINT32_MAX)
        fprintf(fp, " (compile %s", log->units[b->unit].id);
    if (b->resume_unit != UINT32_MAX)
        fprintf(fp, "%sresumes in %s", b->unit != UINT32_MAX ? ", " : " (",
                log->units[b->resume_unit].id);
    if (b->unit != UINT32_MAX || b->resume_unit != UINT32_MAX)
        fputc(')', fp);
    fprintf(fp, "\n    reason: ");
    one_line(fp, b->reason[0] ? b->reason : "(not in the log)");
    fprintf(fp, "\n    cause: %s; %s\n", gp_compile_cause_name(b->cause),
            gp_compile_cause_suggestion(b->cause));
}

static void recompile_row(const gp_compile_report *r, FILE *fp, size_t i)
{
    const gp_compile_recompile *x = &r->analysis->recompiles[i];
    const gp_compile_unit *u = &r->log->units[x->unit];
    fprintf(fp, "  [rank %d] %-7s %s: ", x->rank, u->id, u->co_name);
    one_line(fp, x->reason[0] ? x->reason : "(no reason in the log)");
    fprintf(fp, " [%s]\n", gp_compile_cause_name(x->cause));
}

static void failure_row(const gp_compile_report *r, FILE *fp, size_t i)
{
    const gp_compile_unit *u = &r->log->units[r->analysis->failures[i]];
    fprintf(fp, "  [rank %d] %s %s (%s:%d): %s: ", u->rank, u->id, u->co_name,
            gp__compile_base(u->co_filename), u->co_firstlineno, u->fail_type);
    one_line(fp, u->fail_reason ? u->fail_reason : "");
    if (u->fail_user_file)
        fprintf(fp, " [user frame %s:%d]", u->fail_user_file, u->fail_user_line);
    fputc('\n', fp);
}

/* The recompilations, then each cause's suggestion once and the frames over their limit. */
static void recompiles_block(const gp_compile_report *r, FILE *fp)
{
    const gp_compile_analysis *a = r->analysis;
    listing(r, fp, "RECOMPILATIONS", a->n_recompiles, recompile_row);
    bool seen[GP_CC_COUNT] = {false};
    for (size_t i = 0; i < a->n_recompiles; i++) {
        gp_compile_cause c = a->recompiles[i].cause;
        if (seen[c])
            continue;
        seen[c] = true;
        fprintf(fp, "  %s: %s\n", gp_compile_cause_name(c), gp_compile_cause_suggestion(c));
    }
    for (size_t i = 0; i < a->n_frames; i++) {
        const gp_compile_frame_stats *f = &a->frames[i];
        if (f->over_limit)
            fprintf(fp,
                    "  [rank %d] frame %d (%s) compiled %u times, over its recompile limit "
                    "%" PRId64 ": %s\n",
                    f->rank, f->frame_id, r->log->units[f->first_unit].co_name, f->compiles,
                    f->limit, gp_compile_cause_suggestion(GP_CC_CACHE_LIMIT));
    }
}

static void phases_block(const gp_compile_report *r, FILE *fp)
{
    const gp_compile_analysis *a = r->analysis;
    if (!a->n_phases)
        return;
    fprintf(fp, "\nCOMPILE PHASES (chromium_event, summed over compile ids)\n");
    fprintf(fp, "  %-44s %12s %7s\n", "phase", "time", "count");
    for (size_t i = 0; i < shown(r, a->n_phases); i++) {
        char t[32];
        dur(t, sizeof t, a->phases[i].total);
        fprintf(fp, "  %-44.44s %12s %7u\n", a->phases[i].name, t, a->phases[i].count);
    }
    more(fp, a->n_phases, shown(r, a->n_phases));
}

static void graphs_block(const gp_compile_report *r, FILE *fp)
{
    const gp_compile_analysis *a = r->analysis;
    if (!a->n_graphs)
        return;
    fprintf(fp, "\nCOMPILED GRAPHS (%zu): post-grad graph against generated code\n", a->n_graphs);
    fprintf(fp, "  %4s  %-9s %9s %9s %8s %7s %9s %11s\n", "rank", "id", "ops", "aten ops",
            "kernels", "extern", "fallback", "ops/kernel");
    size_t n = shown(r, a->n_graphs);
    for (size_t i = 0; i < n; i++) {
        const gp_compile_graph *g = &a->graphs[i];
        const gp_compile_unit *u = &r->log->units[g->unit];
        char ratio[24];
        if (g->fusion_ratio > 0)
            snprintf(ratio, sizeof ratio, "%.2f", g->fusion_ratio);
        else
            snprintf(ratio, sizeof ratio, "-");
        if (g->graph_payload == UINT32_MAX)
            fprintf(fp, "  %4d  %-9s %9s %9s", u->rank, u->id, "-", "-");
        else
            fprintf(fp, "  %4d  %-9s %9u %9u", u->rank, u->id, g->ops, g->aten_ops);
        fprintf(fp, " %8u %7u %9u %11s\n", g->kernels, g->extern_calls, g->fallback_ops, ratio);
    }
    more(fp, a->n_graphs, n);
}

static void ranks_block(const gp_compile_report *r, FILE *fp)
{
    const gp_compile_analysis *a = r->analysis;
    if (a->n_ranks < 2)
        return;
    fprintf(fp, "\nRANKS (%zu)\n", a->n_ranks);
    fprintf(fp, "  %4s %7s %9s %7s %11s %9s %7s %12s\n", "rank", "frames", "compiles", "breaks",
            "recompiles", "failures", "graphs", "time");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_compile_rank *k = &a->ranks[i];
        char t[32];
        dur(t, sizeof t, k->compile_time);
        fprintf(fp, "  %4d %7u %9u %7u %11u %9u %7u %12s\n", k->rank, k->frames, k->compiles,
                k->breaks, k->recompiles, k->failures, k->graphs, t);
    }
    if (a->n_divergences == 0)
        fprintf(fp, "  every rank compiled the same way\n");
    for (size_t i = 0; i < a->n_divergences; i++)
        fprintf(fp, "  DIVERGENCE: %s\n", a->divergences[i]);
    if (a->n_divergences)
        fprintf(fp, "  (ranks that compile different graphs can hang or slow collective "
                    "communication: make them see the same shapes and code paths)\n");
}

static void input_block(const gp_compile_report *r, FILE *fp)
{
    const gp_compile_log *log = r->log;
    const gp_compile_read_stats *s = &log->stats;
    fprintf(fp, "\nINPUT: %" PRIu64 " lines, %" PRIu64 " records, %zu payloads indexed", s->lines,
            s->records, log->n_payloads);
    if (s->bad_json || s->bad_prefix || s->truncated_payloads || s->stray_payload)
        fprintf(fp,
                "; skipped: %" PRIu64 " invalid JSON, %" PRIu64 " without prefix, %" PRIu64
                " stray payload lines; %" PRIu64 " incomplete payloads",
                s->bad_json, s->bad_prefix, s->stray_payload, s->truncated_payloads);
    fputc('\n', fp);
    bool any = false;
    for (size_t i = 0; i < log->n_kinds; i++)
        if (!log->kinds[i].known) {
            fprintf(fp, "%s%s (%" PRIu64 ")",
                    any ? ", " : "  unknown record kinds (counted): ", log->kinds[i].kind,
                    log->kinds[i].count);
            any = true;
        }
    if (any)
        fputc('\n', fp);
}

static void trace_block(const gp_compile_trace *t, FILE *fp)
{
    char a[32], b[32], c[32], d[32];
    fprintf(fp, "\nCOMPILED REGIONS: %s\n", t->source);
    gp__rule(fp, '=', W);
    gp__fmt_dur(a, sizeof a, t->span);
    gp__fmt_dur(b, sizeof b, t->cpu_compiled);
    gp__fmt_dur(c, sizeof c, t->cpu_eager);
    gp__fmt_dur(d, sizeof d, t->cpu_guard);
    fprintf(fp, "span %s; CPU ops: compiled regions %s, eager %s, guard checks %s\n", a, b, c, d);
    gp__fmt_dur(a, sizeof a, t->gpu_compiled);
    gp__fmt_dur(b, sizeof b, t->gpu_eager);
    gp__fmt_dur(c, sizeof c, t->gpu_unlinked);
    fprintf(fp,
            "GPU work sum: from compiled regions %s (%" PRIu64 " kernels), eager %s (%" PRIu64
            " kernels), without a launch %s\n",
            a, t->kernels_compiled, b, t->kernels_eager, c);
    gp__fmt_dur(a, sizeof a, t->launch_compiled);
    gp__fmt_dur(b, sizeof b, t->launch_eager);
    fprintf(fp, "launch calls: compiled %" PRIu64 " (%s), eager %" PRIu64 " (%s)\n",
            t->launches_compiled, a, t->launches_eager, b);
    if (!t->n_regions) {
        fprintf(fp, "no \"Torch-Compiled Region\" in this trace\n");
        return;
    }
    fprintf(fp, "  %-10s %6s %12s %12s %8s %7s %9s %12s  %s\n", "region", "calls", "CPU", "GPU sum",
            "kernels", "triton", "launches", "launch time", "graph");
    for (size_t i = 0; i < t->n_regions; i++) {
        const gp_compile_region *g = &t->regions[i];
        gp__fmt_dur(a, sizeof a, g->cpu_time);
        gp__fmt_dur(b, sizeof b, g->gpu_time);
        gp__fmt_dur(c, sizeof c, g->launch_time);
        fprintf(fp,
                "  %-10s %6" PRIu64 " %12s %12s %8" PRIu64 " %7" PRIu64 " %9" PRIu64
                " %12s  %.20s\n",
                g->name, g->calls, a, b, g->kernels, g->triton_kernels, g->launches, c, g->graph);
    }
}

/* The gaps between compiled regions: what each graph break costs at run time. */
static void gaps_block(const gp_compile_report *r, const gp_compile_trace *t, FILE *fp)
{
    if (!t->n_gaps)
        return;
    fprintf(fp, "\nGRAPH BREAKS AT RUN TIME: time between compiled regions on a thread (%s)\n",
            t->linked ? "breaks from the log" : "no log: probable breaks by frame order");
    fprintf(fp, "  %-17s %-14s %6s %12s %12s %12s %10s %12s %7s\n", "from -> to", "kind", "count",
            "per call", "between", "eager ops", "guards", "GPU", "kernels");
    size_t n = shown(r, t->n_gaps);
    for (size_t i = 0; i < n; i++) {
        const gp_compile_gap *g = &t->gaps[i];
        char pair[64], a[32], b[32], c[32], d[32], e[32];
        snprintf(pair, sizeof pair, "%s -> %s", g->from, g->to);
        gp__fmt_dur(a, sizeof a, g->count ? g->wall / (gp_ns)g->count : 0);
        gp__fmt_dur(b, sizeof b, g->wall);
        gp__fmt_dur(c, sizeof c, g->cpu_ops);
        gp__fmt_dur(d, sizeof d, g->guard);
        gp__fmt_dur(e, sizeof e, g->gpu);
        fprintf(fp, "  %-17s %-14s %6" PRIu64 " %12s %12s %12s %10s %12s %7" PRIu64 "\n", pair,
                gp_compile_gap_kind_name(g->kind), g->count, a, b, c, d, e, g->kernels);
        for (size_t k = 0; k < GP_COMPILE_GAP_OPS && g->ops[k]; k++) {
            gp__fmt_dur(a, sizeof a, g->op_time[k]);
            fprintf(fp, "%s%s %s", k ? ", " : "      eager ops: ", g->ops[k], a);
        }
        if (g->ops[0])
            fputc('\n', fp);
        if (g->kind == GP_CGAP_BREAK && r->analysis && g->brk < r->analysis->n_breaks) {
            const gp_compile_break *k = &r->analysis->breaks[g->brk];
            fprintf(fp, "      break: %s at %s:%d (%s): ", k->function, gp__compile_base(k->file),
                    k->line, gp_compile_cause_name(k->cause));
            one_line(fp, k->reason[0] ? k->reason : "(no reason in the log)");
            fputc('\n', fp);
        }
    }
    if (n < t->n_gaps)
        fprintf(fp, "  ... %zu more (-n 0 for all)\n", t->n_gaps - n);
}

static void speedup_block(const gp_compile_report *r, FILE *fp)
{
    const gp_compile_speedup *s = r->speedup;
    fprintf(fp, "\nSPEEDUP %s -> %s (base / current; > 1 is faster)\n", r->traces[0]->source,
            r->traces[1]->source);
    fprintf(fp, "  span %.2fx, GPU work %.2fx, CPU ops %.2fx\n", s->span_speedup, s->gpu_speedup,
            s->cpu_speedup);
    for (size_t i = 0; i < s->n_pairs; i++) {
        const gp_compile_region_pair *p = &s->pairs[i];
        if (p->base && p->cur)
            fprintf(fp, "  region %-10s GPU %.2fx, CPU %.2fx\n", p->name, p->gpu_speedup,
                    p->cpu_speedup);
        else
            fprintf(fp, "  region %-10s only in the %s trace\n", p->name,
                    p->base ? "base" : "current");
    }
}

gp_status gp_compile_render_text(const gp_compile_report *r, FILE *fp)
{
    if (r->log && r->analysis) {
        summary_block(r, fp);
        if (!r->log->is_export || r->log->n_units) { /* an export log has no compile to list */
            units_block(r, fp);
            listing(r, fp, "GRAPH BREAKS", r->analysis->n_breaks, break_row);
            recompiles_block(r, fp);
            listing(r, fp, "FAILURES", r->analysis->n_failures, failure_row);
        }
        phases_block(r, fp);
        graphs_block(r, fp);
        ranks_block(r, fp);
        input_block(r, fp);
    }
    for (size_t i = 0; i < r->n_traces; i++) {
        trace_block(r->traces[i], fp);
        gaps_block(r, r->traces[i], fp);
    }
    if (r->speedup && r->n_traces == 2)
        speedup_block(r, fp);
    return ferror(fp) ? GP_EIO : GP_OK;
}

void gp__compile_count(char *buf, size_t cap, int64_t v)
{
    if (v < 0)
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%" PRId64, v);
}
