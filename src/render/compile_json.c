/* JSON of `gpuprof compile --json` (schema gpuprof.compile/1, docs/compile.md): every figure of
 * the compile model, its analysis and the compiled regions of traces. Durations are ns. A figure
 * the model holds as unknown (-1, or 0 for a ratio) is null, never -1 or 0.0. */
#include <stdio.h>
#include <string.h>

#include "gpuprof/compile.h"
#include "core/json_writer.h"
#include "core/util.h"
#include "render/compile_render.h"

static void kv_opt_str(gp__jw *w, const char *k, const char *v)
{
    gp__jw_key(w, k);
    if (v)
        gp__jw_str(w, v);
    else
        gp__jw_null(w);
}

static void kv_opt_int(gp__jw *w, const char *k, int64_t v)
{
    gp__jw_key(w, k);
    if (v >= 0)
        gp__jw_int(w, v);
    else
        gp__jw_null(w);
}

/* A ratio with 3 decimals, null when 0 (the model's "unknown": a ratio of two positive counts). */
static void kv_opt_fixed(gp__jw *w, const char *k, double v)
{
    gp__jw_key(w, k);
    if (v > 0)
        gp__jw_fixed(w, v, 3);
    else
        gp__jw_null(w);
}

static void unit_ref(gp__jw *w, const gp_compile_log *log, const char *k, uint32_t u)
{
    kv_opt_str(w, k, u == UINT32_MAX ? NULL : log->units[u].id);
}

static void read_stats(gp__jw *w, const gp_compile_read_stats *s)
{
    gp__jw_kv_int(w, "bytes", (int64_t)s->bytes);
    gp__jw_kv_int(w, "lines", (int64_t)s->lines);
    gp__jw_kv_int(w, "records", (int64_t)s->records);
    gp__jw_kv_int(w, "payload_lines", (int64_t)s->payload_lines);
    gp__jw_kv_int(w, "blank_lines", (int64_t)s->blank_lines);
    gp__jw_kv_int(w, "bad_prefix", (int64_t)s->bad_prefix);
    gp__jw_kv_int(w, "bad_json", (int64_t)s->bad_json);
    gp__jw_kv_int(w, "stray_payload_lines", (int64_t)s->stray_payload);
    gp__jw_kv_int(w, "truncated_payloads", (int64_t)s->truncated_payloads);
    gp__jw_kv_int(w, "unknown_records", (int64_t)s->unknown_records);
}

static void log_json(gp__jw *w, const gp_compile_log *log)
{
    gp__jw_key(w, "log");
    gp__jw_obj_begin(w);
    gp__jw_kv_bool(w, "is_export", log->is_export);
    gp__jw_key(w, "files");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < log->n_files; i++) {
        const gp_compile_file *f = &log->files[i];
        gp__jw_obj_begin(w);
        gp__jw_kv_str(w, "path", f->path);
        gp__jw_kv_int(w, "rank", f->rank);
        gp__jw_kv_bool(w, "rank_from_name", f->rank_from_name);
        gp__jw_kv_bool(w, "compressed", f->compressed);
        read_stats(w, &f->stats);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
    gp__jw_key(w, "totals");
    gp__jw_obj_begin(w);
    read_stats(w, &log->stats);
    gp__jw_kv_int(w, "payloads", (int64_t)log->n_payloads);
    gp__jw_obj_end(w);
    gp__jw_key(w, "record_kinds");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < log->n_kinds; i++) {
        gp__jw_obj_begin(w);
        gp__jw_kv_str(w, "kind", log->kinds[i].kind);
        gp__jw_kv_int(w, "count", (int64_t)log->kinds[i].count);
        gp__jw_kv_bool(w, "known", log->kinds[i].known);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
    const gp_compile_export *x = &log->export_info;
    gp__jw_key(w, "export");
    gp__jw_obj_begin(w);
    gp__jw_kv_int(w, "exported_programs", (int64_t)x->exported_programs);
    gp__jw_kv_int(w, "guards_added", (int64_t)x->guards_added);
    gp__jw_kv_int(w, "symbols_created", (int64_t)x->symbols_created);
    gp__jw_kv_int(w, "unbacked_symbols", (int64_t)x->unbacked_symbols);
    gp__jw_kv_int(w, "data_dependent", (int64_t)x->data_dependent);
    gp__jw_kv_int(w, "missing_fake_kernel", (int64_t)x->missing_fake_kernel);
    gp__jw_kv_int(w, "mismatched_fake_kernel", (int64_t)x->mismatched_fake_kernel);
    gp__jw_obj_end(w);
    gp__jw_kv_int(w, "warnings_total", (int64_t)log->warnings_total);
    gp__jw_key(w, "warnings");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < log->n_warnings; i++)
        gp__jw_str(w, log->warnings[i]);
    gp__jw_arr_end(w);
    gp__jw_obj_end(w);
}

static void summary_json(gp__jw *w, const gp_compile_summary *s)
{
    gp__jw_key(w, "summary");
    gp__jw_obj_begin(w);
    gp__jw_kv_int(w, "ranks", s->ranks);
    gp__jw_kv_int(w, "frames", s->frames);
    gp__jw_kv_int(w, "compiles", s->compiles);
    gp__jw_kv_int(w, "recompilations", s->recompiles);
    gp__jw_kv_int(w, "graph_breaks", s->breaks);
    gp__jw_kv_int(w, "failures", s->failures);
    gp__jw_kv_int(w, "restarts", s->restarts);
    gp__jw_kv_int(w, "graphs", s->graphs);
    kv_opt_int(w, "compile_time_ns", s->compile_time); /* null: no compile has it */
    kv_opt_int(w, "backend_ns", s->backend);
    kv_opt_int(w, "aot_ns", s->aot);
    kv_opt_int(w, "inductor_ns", s->inductor);
    kv_opt_int(w, "code_gen_ns", s->code_gen);
    gp__jw_kv_int(w, "cache_hits", (int64_t)s->cache_hits);
    gp__jw_kv_int(w, "cache_misses", (int64_t)s->cache_misses);
    gp__jw_key(w, "cache_hit_rate");
    if (s->cache_hit_rate >= 0)
        gp__jw_fixed(w, s->cache_hit_rate, 4);
    else
        gp__jw_null(w);
    gp__jw_kv_int(w, "kernels", (int64_t)s->kernels);
    gp__jw_kv_int(w, "aten_ops", (int64_t)s->aten_ops);
    kv_opt_fixed(w, "fusion_ratio", s->fusion_ratio); /* 0: no graph with both */
    gp__jw_obj_end(w);
}

static void times_json(gp__jw *w, const gp_compile_times *t)
{
    gp__jw_key(w, "times_ns");
    gp__jw_obj_begin(w);
    kv_opt_int(w, "total", t->total);
    kv_opt_int(w, "backend", t->backend);
    kv_opt_int(w, "aot", t->aot);
    kv_opt_int(w, "inductor", t->inductor);
    kv_opt_int(w, "code_gen", t->code_gen);
    kv_opt_int(w, "before_restart", t->before_restart);
    gp__jw_obj_end(w);
}

static void unit_json(gp__jw *w, const gp_compile_log *log, const gp_compile_unit *u)
{
    gp__jw_obj_begin(w);
    gp__jw_kv_int(w, "rank", u->rank);
    gp__jw_kv_str(w, "id", u->id);
    gp__jw_kv_int(w, "frame_id", u->frame_id);
    gp__jw_kv_int(w, "frame_compile_id", u->frame_compile_id);
    gp__jw_kv_int(w, "attempt", u->attempt);
    kv_opt_int(w, "compiled_autograd_id", u->compiled_autograd_id);
    gp__jw_kv_str(w, "function", u->co_name);
    gp__jw_kv_str(w, "file", u->co_filename);
    kv_opt_int(w, "line", u->co_firstlineno);
    gp__jw_key(w, "user_stack");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < u->n_stack; i++) {
        gp__jw_obj_begin(w);
        gp__jw_kv_str(w, "file", u->stack[i].file);
        gp__jw_kv_int(w, "line", u->stack[i].line);
        gp__jw_kv_str(w, "name", u->stack[i].name);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
    kv_opt_int(w, "graph_op_count", u->graph_op_count);
    kv_opt_int(w, "graph_node_count", u->graph_node_count);
    kv_opt_int(w, "graph_input_count", u->graph_input_count);
    kv_opt_int(w, "guard_count", u->guard_count);
    kv_opt_int(w, "shape_env_guard_count", u->shape_env_guard_count);
    times_json(w, &u->times);
    kv_opt_str(w, "fail_type", u->fail_type);
    kv_opt_str(w, "fail_reason", u->fail_reason);
    gp__jw_key(w, "restart_reasons");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < u->n_restart_reasons; i++)
        gp__jw_str(w, u->restart_reasons[i]);
    gp__jw_arr_end(w);
    kv_opt_str(w, "recompile_reason", u->recompile_reason);
    gp__jw_kv_int(w, "cache_hits", u->cache_hits);
    gp__jw_kv_int(w, "cache_misses", u->cache_misses);
    gp__jw_kv_int(w, "cache_bypasses", u->cache_bypasses);
    gp__jw_key(w, "phases");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < u->n_phases; i++) {
        gp__jw_obj_begin(w);
        gp__jw_kv_str(w, "name", u->phases[i].name);
        gp__jw_kv_int(w, "total_ns", u->phases[i].total);
        gp__jw_kv_int(w, "count", u->phases[i].count);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
    gp__jw_key(w, "payloads");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < u->n_payloads; i++) {
        const gp_compile_payload *p = &log->payloads[u->payloads[i]];
        gp__jw_obj_begin(w);
        gp__jw_kv_str(w, "kind", gp_compile_payload_kind_name(p->kind));
        gp__jw_kv_str(w, "name", p->name);
        gp__jw_kv_int(w, "line", (int64_t)p->line);
        gp__jw_kv_int(w, "offset", (int64_t)p->offset);
        gp__jw_kv_int(w, "bytes", (int64_t)p->bytes);
        gp__jw_kv_int(w, "lines", (int64_t)p->n_lines);
        gp__jw_kv_bool(w, "truncated", p->truncated);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
    gp__jw_obj_end(w);
}

static void cause_json(gp__jw *w, gp_compile_cause c)
{
    gp__jw_kv_str(w, "cause", gp_compile_cause_name(c));
    gp__jw_kv_str(w, "suggestion", gp_compile_cause_suggestion(c));
}

static void breaks_json(gp__jw *w, const gp_compile_log *log, const gp_compile_analysis *a)
{
    gp__jw_key(w, "graph_breaks");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_breaks; i++) {
        const gp_compile_break *b = &a->breaks[i];
        gp__jw_obj_begin(w);
        gp__jw_kv_int(w, "rank", b->rank);
        gp__jw_kv_str(w, "function", b->function);
        gp__jw_kv_str(w, "file", b->file);
        kv_opt_int(w, "line", b->line);
        gp__jw_kv_str(w, "reason", b->reason);
        cause_json(w, b->cause);
        unit_ref(w, log, "compile_id", b->unit);
        unit_ref(w, log, "resume_compile_id", b->resume_unit);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
    gp__jw_key(w, "recompilations");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_recompiles; i++) {
        const gp_compile_recompile *x = &a->recompiles[i];
        gp__jw_obj_begin(w);
        gp__jw_kv_int(w, "rank", x->rank);
        unit_ref(w, log, "compile_id", x->unit);
        gp__jw_kv_str(w, "function", log->units[x->unit].co_name);
        gp__jw_kv_str(w, "reason", x->reason);
        cause_json(w, x->cause);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
    gp__jw_key(w, "failures");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_failures; i++) {
        const gp_compile_unit *u = &log->units[a->failures[i]];
        gp__jw_obj_begin(w);
        gp__jw_kv_int(w, "rank", u->rank);
        gp__jw_kv_str(w, "compile_id", u->id);
        gp__jw_kv_str(w, "function", u->co_name);
        gp__jw_kv_str(w, "fail_type", u->fail_type);
        kv_opt_str(w, "fail_reason", u->fail_reason);
        kv_opt_str(w, "user_file", u->fail_user_file);
        kv_opt_int(w, "user_line", u->fail_user_line);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
}

static void frames_graphs_json(gp__jw *w, const gp_compile_log *log, const gp_compile_analysis *a)
{
    gp__jw_key(w, "frames");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_frames; i++) {
        const gp_compile_frame_stats *f = &a->frames[i];
        gp__jw_obj_begin(w);
        gp__jw_kv_int(w, "rank", f->rank);
        gp__jw_kv_int(w, "frame_id", f->frame_id);
        gp__jw_kv_str(w, "function", log->units[f->first_unit].co_name);
        gp__jw_kv_int(w, "compiles", f->compiles);
        gp__jw_kv_int(w, "recompilations", f->recompiles);
        kv_opt_int(w, "recompile_limit", f->limit);
        gp__jw_kv_bool(w, "over_limit", f->over_limit);
        gp__jw_kv_bool(w, "resume", f->is_resume);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
    gp__jw_key(w, "graphs");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_graphs; i++) {
        const gp_compile_graph *g = &a->graphs[i];
        gp__jw_obj_begin(w);
        gp__jw_kv_int(w, "rank", log->units[g->unit].rank);
        gp__jw_kv_str(w, "compile_id", log->units[g->unit].id);
        gp__jw_kv_bool(w, "has_post_grad_graph", g->graph_payload != UINT32_MAX);
        gp__jw_kv_int(w, "ops", g->ops);
        gp__jw_kv_int(w, "aten_ops", g->aten_ops);
        gp__jw_kv_int(w, "kernels", g->kernels);
        gp__jw_kv_int(w, "extern_calls", g->extern_calls);
        gp__jw_kv_int(w, "fallback_ops", g->fallback_ops);
        kv_opt_fixed(w, "fusion_ratio", g->fusion_ratio); /* 0: no kernel or no aten op */
        gp__jw_key(w, "kernel_names");
        gp__jw_arr_begin(w);
        if (g->code_payload != UINT32_MAX) {
            const gp_compile_payload *p = &log->payloads[g->code_payload];
            for (uint32_t k = 0; k < p->n_kernels; k++)
                gp__jw_str(w, log->kernel_names[p->first_kernel + k]);
        }
        gp__jw_arr_end(w);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
}

static void ranks_json(gp__jw *w, const gp_compile_analysis *a)
{
    gp__jw_key(w, "phases");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_phases; i++) {
        gp__jw_obj_begin(w);
        gp__jw_kv_str(w, "name", a->phases[i].name);
        gp__jw_kv_int(w, "total_ns", a->phases[i].total);
        gp__jw_kv_int(w, "count", a->phases[i].count);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
    gp__jw_key(w, "ranks");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_compile_rank *k = &a->ranks[i];
        gp__jw_obj_begin(w);
        gp__jw_kv_int(w, "rank", k->rank);
        gp__jw_kv_int(w, "frames", k->frames);
        gp__jw_kv_int(w, "compiles", k->compiles);
        gp__jw_kv_int(w, "graph_breaks", k->breaks);
        gp__jw_kv_int(w, "recompilations", k->recompiles);
        gp__jw_kv_int(w, "failures", k->failures);
        gp__jw_kv_int(w, "graphs", k->graphs);
        kv_opt_int(w, "compile_time_ns", k->compile_time);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
    gp__jw_key(w, "divergences");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < a->n_divergences; i++)
        gp__jw_str(w, a->divergences[i]);
    gp__jw_arr_end(w);
}

/* The gaps between compiled regions (what each graph break costs at run time). */
static void gaps_json(gp__jw *w, const gp_compile_trace *t)
{
    gp__jw_kv_bool(w, "gaps_linked", t->linked);
    gp__jw_key(w, "gaps");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < t->n_gaps; i++) {
        const gp_compile_gap *g = &t->gaps[i];
        gp__jw_obj_begin(w);
        gp__jw_kv_str(w, "from", g->from);
        gp__jw_kv_str(w, "to", g->to);
        gp__jw_kv_str(w, "kind", gp_compile_gap_kind_name(g->kind));
        gp__jw_key(w, "break");
        if (g->kind == GP_CGAP_BREAK)
            gp__jw_int(w, g->brk);
        else
            gp__jw_null(w);
        gp__jw_kv_int(w, "count", (int64_t)g->count);
        gp__jw_kv_int(w, "between_ns", g->wall);
        gp__jw_kv_int(w, "eager_ops_ns", g->cpu_ops);
        gp__jw_kv_int(w, "guard_ns", g->guard);
        gp__jw_kv_int(w, "gpu_ns", g->gpu);
        gp__jw_kv_int(w, "kernels", (int64_t)g->kernels);
        gp__jw_kv_int(w, "launches", (int64_t)g->launches);
        gp__jw_kv_int(w, "launch_ns", g->launch_time);
        gp__jw_key(w, "ops");
        gp__jw_arr_begin(w);
        for (size_t k = 0; k < GP_COMPILE_GAP_OPS && g->ops[k]; k++) {
            gp__jw_obj_begin(w);
            gp__jw_kv_str(w, "name", g->ops[k]);
            gp__jw_kv_int(w, "ns", g->op_time[k]);
            gp__jw_obj_end(w);
        }
        gp__jw_arr_end(w);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
}

static void trace_json(gp__jw *w, const gp_compile_trace *t)
{
    gp__jw_obj_begin(w);
    gp__jw_kv_str(w, "source", t->source);
    kv_opt_int(w, "rank", t->rank); /* null: the trace has no distributedInfo */
    gp__jw_kv_int(w, "span_ns", t->span);
    gp__jw_kv_int(w, "cpu_compiled_ns", t->cpu_compiled);
    gp__jw_kv_int(w, "cpu_eager_ns", t->cpu_eager);
    gp__jw_kv_int(w, "cpu_guard_ns", t->cpu_guard);
    gp__jw_kv_int(w, "gpu_compiled_ns", t->gpu_compiled);
    gp__jw_kv_int(w, "gpu_eager_ns", t->gpu_eager);
    gp__jw_kv_int(w, "gpu_unlinked_ns", t->gpu_unlinked);
    gp__jw_kv_int(w, "kernels_compiled", (int64_t)t->kernels_compiled);
    gp__jw_kv_int(w, "kernels_eager", (int64_t)t->kernels_eager);
    gp__jw_kv_int(w, "launches_compiled", (int64_t)t->launches_compiled);
    gp__jw_kv_int(w, "launch_compiled_ns", t->launch_compiled);
    gp__jw_kv_int(w, "launches_eager", (int64_t)t->launches_eager);
    gp__jw_kv_int(w, "launch_eager_ns", t->launch_eager);
    gp__jw_key(w, "regions");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < t->n_regions; i++) {
        const gp_compile_region *g = &t->regions[i];
        gp__jw_obj_begin(w);
        gp__jw_kv_str(w, "name", g->name);
        gp__jw_kv_str(w, "graph", g->graph);
        gp__jw_kv_int(w, "calls", (int64_t)g->calls);
        gp__jw_kv_int(w, "cpu_ns", g->cpu_time);
        gp__jw_kv_int(w, "gpu_ns", g->gpu_time);
        gp__jw_kv_int(w, "kernels", (int64_t)g->kernels);
        gp__jw_kv_int(w, "triton_kernels", (int64_t)g->triton_kernels);
        gp__jw_kv_int(w, "launches", (int64_t)g->launches);
        gp__jw_kv_int(w, "launch_ns", g->launch_time);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
    gaps_json(w, t);
    gp__jw_obj_end(w);
}

static void speedup_json(gp__jw *w, const gp_compile_speedup *s)
{
    gp__jw_key(w, "speedup");
    gp__jw_obj_begin(w);
    gp__jw_key(w, "span");
    gp__jw_fixed(w, s->span_speedup, 4);
    gp__jw_key(w, "gpu");
    gp__jw_fixed(w, s->gpu_speedup, 4);
    gp__jw_key(w, "cpu");
    gp__jw_fixed(w, s->cpu_speedup, 4);
    gp__jw_key(w, "regions");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < s->n_pairs; i++) {
        const gp_compile_region_pair *p = &s->pairs[i];
        gp__jw_obj_begin(w);
        gp__jw_kv_str(w, "name", p->name);
        gp__jw_kv_bool(w, "in_base", p->base != NULL);
        gp__jw_kv_bool(w, "in_current", p->cur != NULL);
        gp__jw_key(w, "gpu");
        gp__jw_fixed(w, p->gpu_speedup, 4);
        gp__jw_key(w, "cpu");
        gp__jw_fixed(w, p->cpu_speedup, 4);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
    gp__jw_obj_end(w);
}

gp_status gp_compile_render_json(const gp_compile_report *r, FILE *fp)
{
    gp__jw w;
    gp__jw_init(&w, fp);
    gp__jw_obj_begin(&w);
    gp__jw_kv_str(&w, "schema", "gpuprof.compile/1");
    if (r->log && r->analysis) {
        log_json(&w, r->log);
        summary_json(&w, &r->analysis->summary);
        gp__jw_key(&w, "compile_ids");
        gp__jw_arr_begin(&w);
        for (size_t i = 0; i < r->log->n_units; i++)
            unit_json(&w, r->log, &r->log->units[i]);
        gp__jw_arr_end(&w);
        breaks_json(&w, r->log, r->analysis);
        frames_graphs_json(&w, r->log, r->analysis);
        ranks_json(&w, r->analysis);
    }
    gp__jw_key(&w, "traces");
    gp__jw_arr_begin(&w);
    for (size_t i = 0; i < r->n_traces; i++)
        trace_json(&w, r->traces[i]);
    gp__jw_arr_end(&w);
    if (r->speedup)
        speedup_json(&w, r->speedup);
    gp__jw_obj_end(&w);
    gp_status st = gp__jw_finish(&w);
    if (st == GP_OK && (fputc('\n', fp) == EOF || ferror(fp)))
        st = GP_EIO;
    return st;
}
