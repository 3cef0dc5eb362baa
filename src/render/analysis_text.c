/* Fixed-width text tables of gp_analysis (the default output of `gpuprof analyze`). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"
#include "analyze/analyze_internal.h"
#include "render/render_internal.h"
#include "render/collectives_render.h"
#include "gpuprof/summary.h"
#include "render/analysis_tables.h"

#define WANT(bit) (tables & (bit))
#define MS(ns) ((double)(ns) / 1e6)

static void pct(FILE *fp, double v, int width)
{
    if (isnan(v))
        fprintf(fp, "%*s", width, "n/a");
    else
        fprintf(fp, "%*.2f", width, v);
}

static void heading(FILE *fp, const char *title)
{
    fprintf(fp, "\n%s\n", title);
    size_t n = strlen(title);
    for (size_t i = 0; i < n; i++)
        fputc('=', fp);
    fputc('\n', fp);
}

static void temporal(FILE *fp, const gp_analysis *a)
{
    heading(fp, "TEMPORAL BREAKDOWN (per rank, % of the GPU span: first to last GPU work, HTA's "
                "kernel_time)");
    fprintf(fp, "%5s %14s %14s %14s %14s %8s %8s %8s\n", "rank", "gpu_span_ms", "idle_ms",
            "compute_ms", "non_comp_ms", "idle%", "comp%", "noncomp%");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        const gp_temporal *t = &r->temporal;
        fprintf(fp, "%5d %14.3f %14.3f %14.3f %14.3f ", r->rank, MS(t->kernel_time), MS(t->idle),
                MS(t->compute), MS(t->non_compute));
        pct(fp, t->idle_pct, 8);
        fputc(' ', fp);
        pct(fp, t->compute_pct, 8);
        fputc(' ', fp);
        pct(fp, t->non_compute_pct, 8);
        fputc('\n', fp);
    }
}

static void idle(FILE *fp, const gp_analysis *a)
{
    char thr[32];
    snprintf(thr, sizeof(thr), "%.0f", (double)a->opts.kernel_wait_ns / 1000.0);
    fprintf(fp,
            "\nIDLE TIME BREAKDOWN (per stream; kernel_wait below %s us; ratio: of the stream's "
            "idle time)\n",
            thr);
    fprintf(fp, "%s\n",
            "======================================================================================"
            "======");
    fprintf(fp, "%5s %6s %8s %14s %8s %14s %8s %14s %8s\n", "rank", "device", "stream",
            "host_wait_ms", "ratio", "kernel_wait_ms", "ratio", "other_ms", "ratio");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        for (size_t k = 0; k < r->n_idle; k++) {
            const gp_idle_stream *s = &r->idle[k];
            fprintf(fp, "%5d %6d %8lld", r->rank, s->device, (long long)s->stream);
            for (int c = 0; c < GP_IDLE_COUNT; c++) {
                fprintf(fp, " %14.3f ", MS(s->idle[c]));
                if (isnan(s->ratio[c]))
                    fprintf(fp, "%8s", "n/a");
                else
                    fprintf(fp, "%8.2f", s->ratio[c]);
            }
            fputc('\n', fp);
        }
    }
}

static void types(FILE *fp, const gp_analysis *a)
{
    heading(fp, "KERNEL TYPE BREAKDOWN (all ranks, with overlap states; % of their GPU busy time)");
    fprintf(fp, "%-48s %14s %8s\n", "kernel_type", "time_ms", "%");
    for (size_t i = 0; i < a->n_types; i++)
        fprintf(fp, "%-48s %14.3f %8.1f\n", a->types[i].label, MS(a->types[i].time),
                a->types[i].pct);
}

enum { KNAME_CAP = 48 };

static gp_status kernels(FILE *fp, const gp_analysis *a)
{
    heading(fp, "TOP KERNELS (per rank and type; the rest folded into \"others\")");
    fprintf(fp, "%5s %-13s %-44s %8s %12s %10s %10s %10s\n", "rank", "type", "name", "count",
            "sum_ms", "mean_us", "min_us", "max_us");
    /* one set of short names for the whole table: different kernels never look the same */
    size_t n = 0;
    for (size_t i = 0; i < a->n_ranks; i++)
        n += a->ranks[i].n_kernels;
    const char **names = malloc((n + 1) * sizeof *names);
    char *shortn = malloc((n + 1) * KNAME_CAP);
    gp_status st = names && shortn ? GP_OK : GP_ENOMEM;
    size_t j = 0;
    for (size_t i = 0; st == GP_OK && i < a->n_ranks; i++)
        for (size_t k = 0; k < a->ranks[i].n_kernels; k++)
            names[j++] = a->ranks[i].kernels[k].name;
    if (st == GP_OK)
        st = gp_shorten_names_unique(names, n, 44, shortn, KNAME_CAP);
    j = 0;
    for (size_t i = 0; st == GP_OK && i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        for (size_t k = 0; k < r->n_kernels; k++) {
            const gp_kernel_row *row = &r->kernels[k];
            fprintf(fp, "%5d %-13s %-44s %8llu %12.3f %10.1f %10.1f %10.1f\n", row->rank,
                    gp_kernel_type_name(row->type), shortn + KNAME_CAP * j++,
                    (unsigned long long)row->count, MS(row->sum), row->mean / 1000.0,
                    (double)row->min / 1000.0, (double)row->max / 1000.0);
        }
    }
    free(names);
    free(shortn);
    return st;
}

static void overlap(FILE *fp, const gp_analysis *a)
{
    heading(fp, "COMMUNICATION / COMPUTATION OVERLAP (overlap% of the communication time)");
    fprintf(fp, "%5s %14s %14s %14s %10s\n", "rank", "comm_ms", "comp_ms", "overlap_ms",
            "overlap%");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_overlap *o = &a->ranks[i].overlap;
        fprintf(fp, "%5d %14.3f %14.3f %14.3f ", a->ranks[i].rank, MS(o->comm), MS(o->comp),
                MS(o->overlap));
        pct(fp, o->pct, 10);
        fputc('\n', fp);
    }
}

static void launch(FILE *fp, const gp_analysis *a)
{
    heading(fp, "LAUNCH STATISTICS (CPU duration of the call; delay = GPU start - call end)");
    fprintf(fp, "%5s %-26s %9s %9s %10s %10s %10s %10s %10s %8s %8s\n", "rank", "api", "calls",
            "matched", "cpu_p50us", "cpu_p95us", "cpu_maxus", "dly_p50us", "dly_p95us", "cpu_out",
            "dly_out");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        const gp_launch_stats *ls = &r->launch;
        for (size_t k = 0; k < ls->n_apis; k++) {
            const gp_launch_api *p = &ls->apis[k];
            fprintf(fp, "%5d %-26.26s %9llu %9llu %10.1f %10.1f %10.1f %10.1f %10.1f %8llu %8llu\n",
                    r->rank, p->name, (unsigned long long)p->calls, (unsigned long long)p->matched,
                    p->cpu_p50 / 1000.0, p->cpu_p95 / 1000.0, p->cpu_max / 1000.0,
                    p->delay_p50 / 1000.0, p->delay_p95 / 1000.0,
                    (unsigned long long)p->cpu_outliers, (unsigned long long)p->delay_outliers);
        }
        fprintf(fp,
                "%5d graph launches: %llu, kernels in graphs: %llu, GPU events without a "
                "launch: %llu\n",
                r->rank, (unsigned long long)ls->graph_launches,
                (unsigned long long)ls->graph_kernels, (unsigned long long)ls->gpu_unmatched);
        for (size_t k = 0; k < ls->n_outliers; k++) {
            const gp_launch_outlier *o = &ls->outliers[k];
            char name[48];
            gp_shorten_name(o->kernel, 40, name, sizeof(name));
            fprintf(fp, "      outlier (%s): %s cpu %.1f us, delay %.1f us -> %s\n",
                    o->by_delay ? "delay" : "cpu", o->api, o->cpu_dur / 1000.0, o->delay / 1000.0,
                    name[0] ? name : "(no GPU work)");
        }
    }
}

static void queue(FILE *fp, const gp_analysis *a)
{
    heading(fp, "QUEUE LENGTH PER STREAM AND MEMCPY BANDWIDTH");
    fprintf(fp, "%5s %6s %8s %10s %10s %10s\n", "rank", "device", "stream", "launches", "max_len",
            "mean_len");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        for (size_t k = 0; k < r->n_queues; k++) {
            const gp_queue_stream *q = &r->queues[k];
            fprintf(fp, "%5d %6d %8lld %10llu %10lld %10.2f\n", r->rank, q->device,
                    (long long)q->stream, (unsigned long long)q->launches, (long long)q->max_len,
                    q->mean_len);
        }
    }
    fprintf(fp, "%5s %8s %9s %14s %12s %10s\n", "rank", "copies", "pageable", "bytes",
            "copy_sum_ms", "mean_GB/s");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_bandwidth *b = &a->ranks[i].bandwidth;
        fprintf(fp, "%5d %8llu %9llu %14lld %12.3f %10.2f\n", a->ranks[i].rank,
                (unsigned long long)b->copies, (unsigned long long)b->pageable, (long long)b->bytes,
                MS(b->busy), b->mean_gbps);
    }
}

static void activity(FILE *fp, const gp_analysis *a)
{
    heading(fp, "CPU / GPU ACTIVITY");
    fprintf(fp, "%5s %12s %12s %12s %12s %12s %8s %10s\n", "rank", "span_ms", "cpu_ms",
            "gpu_busy_ms", "both_ms", "sync_ms", "syncs", "kernels");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        const gp_activity *x = &r->activity;
        fprintf(fp, "%5d %12.3f %12.3f %12.3f %12.3f %12.3f %8llu %10llu\n", r->rank, MS(x->span),
                MS(x->cpu_active), MS(x->gpu_active), MS(x->overlap), MS(x->sync),
                (unsigned long long)x->syncs, (unsigned long long)r->kernels_total);
    }
}

static void memory(FILE *fp, const gp_analysis *a)
{
    heading(fp, "MEMORY ([memory] events)");
    fprintf(fp, "%5s %8s %12s %14s %12s %12s  %s\n", "rank", "device", "events", "peak_alloc_MiB",
            "peak_at_ms", "reserved_MiB", "running at the peak (cpu op | kernel)");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        for (size_t k = 0; k < r->n_memory; k++) {
            const gp_memory_device *m = &r->memory[k];
            char dev[16], cpu[48], gpu[48];
            snprintf(dev, sizeof(dev), "%s%d",
                     m->device_type == 1 ? "cuda:" : "cpu:", m->device_id);
            gp_shorten_name(m->running_cpu, 40, cpu, sizeof(cpu));
            gp_shorten_name(m->running_gpu, 40, gpu, sizeof(gpu));
            fprintf(fp, "%5d %8s %12llu %14.1f %12.3f %12.1f  %s | %s\n", r->rank, dev,
                    (unsigned long long)m->events, (double)m->peak_allocated / GP_MIB,
                    m->n_series ? MS(m->peak_ts - m->allocated[0].t) : 0.0,
                    (double)m->peak_reserved / GP_MIB, cpu[0] ? cpu : "-", gpu[0] ? gpu : "-");
        }
    }
}

static void peak_memory(FILE *fp, const gp_analysis *a)
{
    heading(fp, "PEAK MEMORY (allocator, else profiler ranges, else memory counters)");
    fprintf(fp, "%5s %10s %14s  %s\n", "rank", "source", "peak_MiB", "what");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_peak_memory *p = &a->ranks[i].peak_memory;
        if (p->source == GP_PEAK_NONE) {
            fprintf(fp, "%5d %10s %14s  %s\n", a->ranks[i].rank, "none", "-", "-");
            continue;
        }
        fprintf(fp, "%5d %10s %14.1f  %s\n", a->ranks[i].rank, gp_peak_source_name(p->source),
                (double)p->bytes / GP_MIB, p->what && p->what[0] ? p->what : "-");
    }
}

static void ranks(FILE *fp, const gp_analysis *a)
{
    if (a->n_ranks < 2)
        return;
    heading(fp, "ACROSS RANKS (idle% and comp% of each rank's GPU span, overlap% of its "
                "communication)");
    fprintf(fp, "%5s %12s %8s %8s %10s %10s %12s\n", "rank", "gpu_span_ms", "idle%", "comp%",
            "overlap%", "launches", "straggler");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        const char *why = "";
        for (size_t k = 0; k < a->n_stragglers; k++)
            if (a->stragglers[k].rank == r->rank)
                why = a->stragglers[k].metric;
        fprintf(fp, "%5d %12.3f ", r->rank, MS(r->temporal.kernel_time));
        pct(fp, r->temporal.idle_pct, 8);
        fputc(' ', fp);
        pct(fp, r->temporal.compute_pct, 8);
        fputc(' ', fp);
        pct(fp, r->overlap.pct, 10);
        fprintf(fp, " %10llu %12s\n", (unsigned long long)r->launch.launches, why);
    }
}

static void findings(FILE *fp, const gp_analysis *a)
{
    heading(fp, a->n_findings && a->findings[0].cause
                    ? "BOTTLENECKS AND SUGGESTIONS (the causes first, then by estimated gain)"
                    : "BOTTLENECKS AND SUGGESTIONS (by estimated gain)");
    if (a->n_findings == 0)
        fprintf(fp, "No bottleneck rule fired.\n");
    for (size_t i = 0; i < a->n_findings; i++) {
        const gp_finding *f = &a->findings[i];
        char who[256];
        gp_ranks_format(f->ranks, f->n_ranks, "-", who, sizeof(who));
        char title[512];
        gp__finding_title(f, title, sizeof title);
        fprintf(fp, "%zu. [%s/%s] %s: %s\n", i + 1, gp_priority_name(f->priority),
                gp_suggestion_type_name(f->type), who, title);
        if (f->n_ranks > 1)
            fprintf(fp, "   (evidence and gain of rank %d, the worst)\n", f->rank);
        fprintf(fp, "   rule %s; estimated gain: %.3f ms; evidence:", f->rule, MS(f->gain_ns));
        gp__finding_evidence_text(f, fp);
        for (size_t k = 0; k < f->n_objects; k++) {
            char o[600];
            gp__finding_object_text(&f->objects[k], o, sizeof o);
            fprintf(fp, "\n   - %s", o);
        }
        fprintf(fp, "\n   -> %s\n", gp__finding_advice(f));
    }
}

/* The region of a critical path as a short label. */
static void cp_label(const gp_critical_path *cp, char *buf, size_t cap)
{
    if (cp->step >= 0)
        snprintf(buf, cap, "step %lld", (long long)cp->step);
    else if (cp->region[0])
        snprintf(buf, cap, "%.40s", cp->region);
    else
        snprintf(buf, cap, "whole trace");
}

static void critical_path(FILE *fp, const gp_analysis *a)
{
    heading(fp, a->opts.cp_hta ? "CRITICAL PATH (HTA's graph, % of path length)"
                               : "CRITICAL PATH (per step, % of path length)");
    fprintf(fp, "%5s %-16s %12s %7s %7s %7s %7s %7s %7s\n", "rank", "region", "length_ms", "cpu%",
            "data%", "gpu%", "comm%", "k-k%", "launch%");
    static const gp_cp_class cols[] = {GP_CP_CPU,      GP_CP_DATA_LOADING,  GP_CP_GPU_COMPUTE,
                                       GP_CP_GPU_COMM, GP_CP_KERNEL_KERNEL, GP_CP_LAUNCH};
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        for (size_t k = 0; k < r->n_critical_paths; k++) {
            const gp_critical_path *cp = &r->critical_paths[k];
            char label[48];
            cp_label(cp, label, sizeof label);
            if (!cp->valid) {
                fprintf(fp, "%5d %-16s %12s  %s\n", r->rank, label, "-", cp->note);
                continue;
            }
            fprintf(fp, "%5d %-16s %12.3f", r->rank, label, MS(cp->length));
            for (size_t c = 0; c < GP_ARRAY_LEN(cols); c++) {
                fputc(' ', fp);
                pct(fp, isnan(cp->pct[cols[c]]) ? NAN : cp->pct[cols[c]], 7);
            }
            fputc('\n', fp);
            for (size_t t = 0; t < cp->n_top && t < 3; t++) {
                const gp_cp_event *e = &cp->top[t];
                fprintf(fp, "%22s %10.3f ms  %-26s %.70s%s%.60s\n", "", MS(e->time),
                        gp_cp_class_name(e->cls), e->name, e->python[0] ? "  <- " : "", e->python);
            }
            if (cp->note[0])
                fprintf(fp, "%22s note: %s\n", "", cp->note);
        }
    }
}

/* COLLECTIVES ACROSS RANKS (nothing for a single trace), the 20 slowest listed. */
static void collectives(FILE *fp, const gp_analysis *a)
{
    gp__coll_render_text(fp, a->collectives, 20);
}

/* The cause holding the most idle time of a row (-1 when the row has none). */
static int largest_cause(const gp_idle_causes *c)
{
    int best = -1;
    for (int k = 0; k < GP_IC_COUNT; k++)
        if (c->by_cause[k] > 0 && (best < 0 || c->by_cause[k] > c->by_cause[best]))
            best = k;
    return best;
}

/* IDLE CAUSES: one line per device and stream, the share of each cause, the largest cause's top
 * frame/op/call (docs/analyses.md, "Idle causes"). */
static void idle_causes(FILE *fp, const gp_analysis *a)
{
    static const char title[] = "IDLE CAUSES (what the launching thread did while the GPU idled; "
                                "% of the row's idle time in the analysed window)";
    fprintf(fp, "\n%s\n", title);
    gp__rule(fp, '=', (int)strlen(title));
    fprintf(fp, "%5s %6s %8s %12s", "rank", "device", "stream", "idle_ms");
    for (int k = 0; k < GP_IC_COUNT; k++)
        fprintf(fp, " %12s", gp_idle_cause_name((gp_idle_cause)k));
    fprintf(fp, "  largest: what (ms)\n");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        for (size_t j = 0; j < r->n_idle_causes; j++) {
            const gp_idle_causes *c = &r->idle_causes[j];
            char stream[24];
            if (c->stream == -1)
                snprintf(stream, sizeof stream, "all");
            else
                snprintf(stream, sizeof stream, "%lld", (long long)c->stream);
            fprintf(fp, "%5d %6d %8s %12.3f", r->rank, c->device, stream, MS(c->idle));
            for (int k = 0; k < GP_IC_COUNT; k++) {
                if (isnan(c->share[k]))
                    fprintf(fp, " %12s", "n/a");
                else
                    fprintf(fp, " %11.2f%%", 100.0 * c->share[k]);
            }
            int big = largest_cause(c);
            if (big >= 0)
                fprintf(fp, "  %s: %.60s (%.3f)", gp_idle_cause_name((gp_idle_cause)big),
                        *c->top_what[big] ? c->top_what[big] : "-", MS(c->top_time[big]));
            fputc('\n', fp);
        }
    }
}

/* STEP BREAKDOWN: ms per part, the step's critical path length beside it, "-" without one
 * (docs/analyses.md, "Step breakdown"). */
static void step_parts(FILE *fp, const gp_analysis *a)
{
    static const char title[] = "STEP BREAKDOWN (TensorBoard's step time, ms: each instant once, "
                                "by precedence from kernel to other)";
    fprintf(fp, "\n%s\n", title);
    gp__rule(fp, '=', (int)strlen(title));
    fprintf(fp, "%5s %6s %11s", "rank", "step", "step_ms");
    for (int k = 0; k < GP_SP_COUNT; k++)
        fprintf(fp, " %11s",
                k == GP_SP_COMMUNICATION ? "comm" : gp_step_part_name((gp_step_part)k));
    fprintf(fp, " %11s\n", "crit_path");
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        for (size_t j = 0; j < r->n_step_parts; j++) {
            const gp_step_breakdown *b = &r->step_parts[j];
            char step[24];
            if (b->step < 0)
                snprintf(step, sizeof step, "all");
            else
                snprintf(step, sizeof step, "%lld", (long long)b->step);
            fprintf(fp, "%5d %6s %11.3f", r->rank, step, MS(b->end - b->start));
            for (int k = 0; k < GP_SP_COUNT; k++)
                fprintf(fp, " %11.3f", MS(b->part[k]));
            const gp_critical_path *cp = b->step >= 0 ? gp__step_critical_path(r, b->step) : NULL;
            if (cp)
                fprintf(fp, " %11.3f\n", MS(cp->length));
            else
                fprintf(fp, " %11s\n", "-");
        }
    }
}

/* A table's text writer returns void, or gp_status when it can fail; RUN(fn) calls either and
 * gives its status (the registry, render/analysis_tables.h, names them all the same way). */
typedef void (*text_void_fn)(FILE *, const gp_analysis *);
typedef gp_status (*text_status_fn)(FILE *, const gp_analysis *);

static gp_status run_void(text_void_fn f, FILE *fp, const gp_analysis *a)
{
    f(fp, a);
    return GP_OK;
}

static gp_status run_status(text_status_fn f, FILE *fp, const gp_analysis *a)
{
    return f(fp, a);
}

#define RUN(fn) _Generic((fn), text_void_fn : run_void, default : run_status)(fn, fp, a)

gp_status gp_analysis_render_text(const gp_analysis *a, unsigned tables, FILE *fp)
{
    if (tables == 0)
        tables = GP_AT_ALL;
    fprintf(fp, "gpuprof analyze: %zu rank%s, steps %s, %s definitions\n", a->n_ranks,
            a->n_ranks == 1 ? "" : "s",
            a->opts.steps == GP_STEPS_ALL   ? "all"
            : a->opts.steps == GP_STEPS_HTA ? "hta (last ProfilerStep dropped)"
                                            : "range",
            a->opts.hta ? "HTA" : "gpuprof");
    if (a->note.msg[0])
        fprintf(fp, "note: %s\n", a->note.msg);
    for (size_t i = 0; i < a->n_ranks; i++)
        if (a->ranks[i].note.msg[0])
            fprintf(fp, "note (rank %d): %s\n", a->ranks[i].rank, a->ranks[i].note.msg);
    gp_status st = GP_OK;
#define X(bit, fn, name, alias, json, csv)                                                         \
    if (st == GP_OK && WANT(bit))                                                                  \
        st = RUN(fn);
    GP__ANALYSIS_TABLES(X)
#undef X
    if (st != GP_OK)
        return st;
    return ferror(fp) ? GP_EIO : GP_OK;
}
