/* Renderers for gp_summary: fixed-width text, JSON, CSV. Formatting only; no statistics here.
 * gp__rule, the rule line of every fixed-width text table, is defined here. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/csv.h"
#include "core/json_writer.h"
#include "core/units.h"
#include "core/util.h"
#include "gpuprof/summary.h"
#include "render/render_internal.h"

#define MS(ns) ((double)(ns) / 1e6)

void gp__rule(FILE *fp, char c, int width)
{
    for (int i = 0; i < width; i++)
        fputc(c, fp);
    fputc('\n', fp);
}

static const char *kind_title(gp_event_kind k)
{
    static const char *const titles[GP_EV_KIND_COUNT] = {
        [GP_EV_KERNEL] = "GPU KERNEL TIMING REPORT",
        [GP_EV_MEMCPY] = "GPU MEMCPY TIMING REPORT",
        [GP_EV_MEMSET] = "GPU MEMSET TIMING REPORT",
        [GP_EV_SYNC] = "CUDA SYNCHRONIZATION REPORT",
        [GP_EV_CPU_OP] = "CPU OP TIMING REPORT",
        [GP_EV_RUNTIME] = "CUDA RUNTIME API REPORT",
        [GP_EV_DRIVER] = "CUDA DRIVER API REPORT",
        [GP_EV_USER_ANNOTATION] = "USER ANNOTATION REPORT",
        [GP_EV_GPU_USER_ANNOTATION] = "GPU ANNOTATION REPORT",
        [GP_EV_PYTHON] = "PYTHON FUNCTION REPORT",
        [GP_EV_RANGE] = "RANGE TIMING REPORT",
        [GP_EV_OVERHEAD] = "PROFILER OVERHEAD REPORT"};
    return GP_NAME_OF(titles, k, "OTHER EVENTS REPORT");
}

static const char *kind_column(gp_event_kind k)
{
    static const char *const columns[GP_EV_KIND_COUNT] = {
        [GP_EV_KERNEL] = "Kernel",    [GP_EV_MEMCPY] = "Copy",     [GP_EV_MEMSET] = "Memset",
        [GP_EV_RUNTIME] = "API call", [GP_EV_DRIVER] = "API call", [GP_EV_CPU_OP] = "Operator",
        [GP_EV_PYTHON] = "Function"};
    return GP_NAME_OF(columns, k, "Name");
}

/* Order of the tables in text output: GPU work first, then CPU-side kinds. */
static const gp_event_kind text_order[] = {
    GP_EV_KERNEL,  GP_EV_MEMCPY, GP_EV_MEMSET,          GP_EV_SYNC,
    GP_EV_RANGE,   GP_EV_CPU_OP, GP_EV_USER_ANNOTATION, GP_EV_GPU_USER_ANNOTATION,
    GP_EV_RUNTIME, GP_EV_DRIVER, GP_EV_PYTHON,          GP_EV_OVERHEAD,
    GP_EV_OTHER,
};

/* CPU-side kinds nest (aten::linear holds aten::addmm): their tables show self and inclusive time.
 * GPU events do not nest (self == duration): their tables keep the plain layout. */
static bool kind_nests(gp_event_kind k)
{
    return !gp_event_kind_is_gpu(k);
}

#define NAME_CAP 512

/* The display names of n rows at width nw, distinct when the names are (gp_shorten_names_unique):
 * n * NAME_CAP bytes, or NULL when out of memory. */
static char *display_names(const gp_name_stats *rows, size_t n, int nw)
{
    const char **names = malloc((n ? n : 1) * sizeof *names);
    char *out = malloc((n ? n : 1) * NAME_CAP);
    if (names && out) {
        for (size_t i = 0; i < n; i++)
            names[i] = rows[i].name;
        if (gp_shorten_names_unique(names, n, (size_t)nw, out, NAME_CAP) != GP_OK) {
            free(out);
            out = NULL;
        }
    } else {
        free(out);
        out = NULL;
    }
    free(names);
    return out;
}

/* The columns of a gpuprof profile's per-operation figures (gp_name_stats.mem_avg, gpu_util),
 * after Share, each only when some row of the summary carries it. */
enum { MEM_W = 13, UTIL_W = 12 };

static int extra_width(const gp_summary *s)
{
    return (s->has_mem_avg ? 1 + MEM_W : 0) + (s->has_gpu_util ? 1 + UTIL_W : 0);
}

static void extra_header(FILE *fp, const gp_summary *s)
{
    if (s->has_mem_avg)
        fprintf(fp, " %*s", MEM_W, "Avg mem (MiB)");
    if (s->has_gpu_util)
        fprintf(fp, " %*s", UTIL_W, "Avg GPU util");
}

/* A row's figures in MiB and %, "-" where its calls carry none. */
static void extra_cells(FILE *fp, const gp_summary *s, const gp_name_stats *r)
{
    if (s->has_mem_avg && r->mem_avg >= 0)
        fprintf(fp, " %*.2f", MEM_W, r->mem_avg / GP_MIB);
    else if (s->has_mem_avg)
        fprintf(fp, " %*s", MEM_W, "-");
    if (s->has_gpu_util && r->gpu_util >= 0)
        fprintf(fp, " %*.1f%%", UTIL_W - 1, r->gpu_util * 100.0);
    else if (s->has_gpu_util)
        fprintf(fp, " %*s", UTIL_W, "-");
}

static void row(FILE *fp, const gp_summary *s, int nw, const gp_name_stats *r, const char *name,
                bool nested, bool with_kind)
{
    if (nested)
        fprintf(fp, "%-*s %-8" PRIu64 " %-12.3f %-12.3f %-12.3f %-12.3f %-12.3f %5.1f%%", nw, name,
                r->calls, MS(r->self_total), MS(r->total), r->self_mean / 1e6, r->mean / 1e6,
                r->p95 / 1e6, r->share * 100.0);
    else
        fprintf(fp, "%-*s %-8" PRIu64 " %-12.3f %-12.3f %-12.3f %-12.3f %-12.3f %5.1f%%", nw, name,
                r->calls, MS(r->total), r->mean / 1e6, MS(r->min), MS(r->max), r->p95 / 1e6,
                r->share * 100.0);
    extra_cells(fp, s, r);
    if (with_kind)
        fprintf(fp, "  %s", gp_event_kind_name(r->kind));
    fputc('\n', fp);
}

static void header(FILE *fp, const gp_summary *s, int nw, const char *first, bool nested, int width)
{
    if (nested)
        fprintf(fp, "%-*s %-8s %-12s %-12s %-12s %-12s %-12s %6s", nw, first, "Calls", "Self (ms)",
                "Incl. (ms)", "Mean self", "Mean incl.", "P95 incl.", "Share");
    else
        fprintf(fp, "%-*s %-8s %-12s %-12s %-12s %-12s %-12s %6s", nw, first, "Calls", "Total (ms)",
                "Mean (ms)", "Min (ms)", "Max (ms)", "P95 (ms)", "Share");
    extra_header(fp, s);
    fputc('\n', fp);
    gp__rule(fp, '-', width);
}

/* What the columns of a nested table mean, under it. */
static void nested_note(FILE *fp)
{
    fputs("Self: time in the event itself, events nested in it on the same thread excluded; Incl.: "
          "its whole\nduration (nested spans overlap, so inclusive times do not add up). Times in "
          "ms. Share: of the\nTOTAL self time.\n",
          fp);
}

/* What the Share column of a GPU work table is of, under it (docs/analyses.md, "Terms"). */
static void gpu_note(FILE *fp, const gp_summary *s)
{
    fprintf(fp,
            "Share: of the GPU work sum, %.3f ms (the durations of all kernels, copies and memsets "
            "of the input\nadded up; overlapping work counts in full, so it can exceed the "
            "GPU busy time).\n",
            MS(s->gpu_time));
}

/* "cpu_op, python_function" for the kinds selected, into b. */
static const char *selected_kinds(uint32_t mask, char *b, size_t cap)
{
    size_t len = 0;
    b[0] = '\0';
    for (int k = 0; k < GP_EV_KIND_COUNT && len < cap; k++)
        if (mask & (1u << k)) {
            int w = snprintf(b + len, cap - len, "%s%s", len ? ", " : "",
                             gp_event_kind_name((gp_event_kind)k));
            if (w < 0)
                break;
            len += (size_t)w;
        }
    return b;
}

gp_status gp_summary_render_text(const gp_summary *s, const gp_summary_render_opts *o, FILE *fp)
{
    int nw = o && o->name_width > 0 ? o->name_width : 40;
    size_t top = o ? o->top_n : 0;
    int width = nw + 1 + 9 + 5 * 13 + 6 + extra_width(s);
    bool any = false;
    for (size_t i = 0; i < sizeof text_order / sizeof text_order[0]; i++) {
        const gp_kind_summary *ks = &s->kinds[text_order[i]];
        if (ks->n_rows == 0)
            continue;
        any = true;
        gp__rule(fp, '=', width);
        fprintf(fp, "%s\n", kind_title(ks->kind));
        gp__rule(fp, '=', width);
        bool nested = kind_nests(ks->kind);
        header(fp, s, nw, kind_column(ks->kind), nested, width);
        size_t n = top && top < ks->n_rows ? top : ks->n_rows;
        char *names = display_names(ks->rows, n, nw);
        if (!names)
            return GP_ENOMEM;
        for (size_t r = 0; r < n; r++)
            row(fp, s, nw, &ks->rows[r], names + r * NAME_CAP, nested, false);
        free(names);
        if (n < ks->n_rows)
            fprintf(fp, "(%zu more not shown; --top 0 shows all)\n", ks->n_rows - n);
        gp__rule(fp, '-', width);
        if (nested) {
            /* The self times partition the kind's time; inclusive times overlap: no sum. */
            fprintf(fp, "%-*s %-8" PRIu64 " %-12.3f -\n", nw, "TOTAL (self)", ks->calls,
                    MS(ks->self_total));
            gp__rule(fp, '-', width);
            nested_note(fp);
        } else {
            fprintf(fp, "%-*s %-8" PRIu64 " %.3f\n", nw, "TOTAL", ks->calls, MS(ks->total));
            if (gp_event_kind_is_gpu_work(ks->kind))
                gpu_note(fp, s);
        }
        gp__rule(fp, '=', width);
        fputc('\n', fp);
    }
    char sel[256];
    if (!any)
        fprintf(fp, "no timed events of the selected kinds%s%s%s in the input\n\n",
                s->kinds_selected ? " (" : "",
                s->kinds_selected ? selected_kinds(s->kinds_selected, sel, sizeof sel) : "",
                s->kinds_selected ? ")" : "");
    const gp_read_stats *in = &s->input;
    if (!s->has_gpu)
        fprintf(fp, "note: no GPU events (no kernels, copies or memsets) in the input%s\n\n",
                any ? "; the tables above cover CPU-side events only" : "");
    else if (!s->top_is_gpu)
        fprintf(fp,
                "note: the input's GPU work (%" PRIu64 " kernels, %" PRIu64 " copies, %" PRIu64
                " memsets; GPU work sum %.3f ms) is not shown: --kind selects %s\n\n",
                in->by_kind[GP_EV_KERNEL], in->by_kind[GP_EV_MEMCPY], in->by_kind[GP_EV_MEMSET],
                MS(s->gpu_time), selected_kinds(s->kinds_selected, sel, sizeof sel));
    if (s->n_top) {
        bool nested = !s->top_is_gpu;
        gp__rule(fp, '=', width);
        fprintf(fp, "TOP %zu BOTTLENECKS BY %s\n", s->n_top,
                nested ? "SELF CPU TIME" : "GPU WORK SUM");
        gp__rule(fp, '=', width);
        header(fp, s, nw, "Name", nested, width);
        char *names = display_names(s->top, s->n_top, nw);
        if (!names)
            return GP_ENOMEM;
        for (size_t r = 0; r < s->n_top; r++)
            row(fp, s, nw, &s->top[r], names + r * NAME_CAP, nested, true);
        free(names);
        gp__rule(fp, '=', width);
    }
    return fflush(fp) != 0 || ferror(fp) ? GP_EIO : GP_OK;
}

static void json_row(gp__jw *w, const gp_name_stats *r)
{
    gp__jw_obj_begin(w);
    gp__jw_kv_str(w, "name", r->name);
    gp__jw_kv_str(w, "kind", gp_event_kind_name(r->kind));
    gp__jw_kv_int(w, "calls", (int64_t)r->calls);
    gp__jw_kv_int(w, "total_ns", r->total);
    gp__jw_kv_double(w, "mean_ns", r->mean);
    gp__jw_kv_int(w, "min_ns", r->min);
    gp__jw_kv_int(w, "max_ns", r->max);
    gp__jw_kv_double(w, "stddev_ns", r->stddev);
    gp__jw_kv_double(w, "p50_ns", r->p50);
    gp__jw_kv_double(w, "p95_ns", r->p95);
    gp__jw_kv_double(w, "p99_ns", r->p99);
    gp__jw_kv_double(w, "share", r->share);
    gp__jw_kv_int(w, "self_total_ns", r->self_total);
    gp__jw_kv_double(w, "self_mean_ns", r->self_mean);
    if (r->mem_avg >= 0) /* a gpuprof profile's figures: only on rows whose calls carry them */
        gp__jw_kv_double(w, "avg_memory_bytes", r->mem_avg);
    if (r->gpu_util >= 0)
        gp__jw_kv_double(w, "avg_gpu_utilization_pct", r->gpu_util * 100.0);
    gp__jw_obj_end(w);
}

gp_status gp_summary_render_json(const gp_summary *s, const gp_summary_render_opts *o, FILE *fp)
{
    size_t top = o ? o->top_n : 0;
    gp__jw w;
    gp__jw_init(&w, fp);
    gp__jw_obj_begin(&w);
    gp__jw_kv_int(&w, "schema_version", 1);
    gp__jw_kv_int(&w, "traces", (int64_t)s->n_traces);
    gp__jw_kv_bool(&w, "has_gpu", s->has_gpu);
    gp__jw_kv_int(&w, "gpu_work_sum_ns", s->gpu_time); /* was gpu_time_ns */
    gp__jw_kv_int(&w, "span_ns", s->span_sum);
    if (!s->has_gpu)
        gp__jw_kv_str(&w, "note", "no GPU events");
    const gp_read_stats *in = &s->input;
    gp__jw_key(&w, "input");
    gp__jw_obj_begin(&w);
    gp__jw_kv_int(&w, "bytes", (int64_t)in->bytes);
    gp__jw_kv_int(&w, "trace_events", (int64_t)in->events_in);
    gp__jw_kv_int(&w, "metadata_events", (int64_t)in->metadata_events);
    gp__jw_kv_int(&w, "flow_points", (int64_t)in->flow_points);
    gp__jw_kv_int(&w, "negative_durations", (int64_t)in->negative_dur);
    gp__jw_kv_int(&w, "absurd_durations_dropped", (int64_t)in->absurd_dur);
    gp__jw_kv_int(&w, "missing_durations", (int64_t)in->no_dur);
    gp__jw_kv_int(&w, "unknown_categories", (int64_t)in->unknown_cat);
    gp__jw_kv_int(&w, "skipped", (int64_t)in->skipped);
    gp__jw_key(&w, "by_kind");
    gp__jw_obj_begin(&w);
    for (int k = 0; k < GP_EV_KIND_COUNT; k++)
        if (in->by_kind[k])
            gp__jw_kv_int(&w, gp_event_kind_name((gp_event_kind)k), (int64_t)in->by_kind[k]);
    gp__jw_obj_end(&w);
    gp__jw_obj_end(&w);
    gp__jw_key(&w, "kinds");
    gp__jw_arr_begin(&w);
    for (int k = 0; k < GP_EV_KIND_COUNT; k++) {
        const gp_kind_summary *ks = &s->kinds[k];
        if (ks->n_rows == 0)
            continue;
        gp__jw_obj_begin(&w);
        gp__jw_kv_str(&w, "kind", gp_event_kind_name(ks->kind));
        gp__jw_kv_int(&w, "calls", (int64_t)ks->calls);
        gp__jw_kv_int(&w, "total_ns", ks->total);
        gp__jw_kv_int(&w, "self_total_ns", ks->self_total);
        gp__jw_kv_int(&w, "denominator_ns", ks->denominator);
        gp__jw_kv_int(&w, "names", (int64_t)ks->n_rows);
        gp__jw_key(&w, "rows");
        gp__jw_arr_begin(&w);
        size_t n = top && top < ks->n_rows ? top : ks->n_rows;
        for (size_t r = 0; r < n; r++)
            json_row(&w, &ks->rows[r]);
        gp__jw_arr_end(&w);
        gp__jw_obj_end(&w);
    }
    gp__jw_arr_end(&w);
    gp__jw_key(&w, "top");
    gp__jw_arr_begin(&w);
    for (size_t r = 0; r < s->n_top; r++)
        json_row(&w, &s->top[r]);
    gp__jw_arr_end(&w);
    gp__jw_obj_end(&w);
    gp__jw_text(&w, "\n", 1);
    gp_status st = gp__jw_finish(&w);
    return st == GP_OK && (fflush(fp) != 0 || ferror(fp)) ? GP_EIO : st;
}

gp_status gp_summary_render_csv(const gp_summary *s, const gp_summary_render_opts *o, FILE *fp)
{
    size_t top = o ? o->top_n : 0;
    fprintf(fp,
            "kind,name,calls,total_ns,mean_ns,min_ns,max_ns,stddev_ns,p50_ns,p95_ns,p99_ns,"
            "share,self_total_ns,self_mean_ns%s%s\n",
            s->has_mem_avg ? ",avg_memory_bytes" : "",
            s->has_gpu_util ? ",avg_gpu_utilization_pct" : "");
    for (int k = 0; k < GP_EV_KIND_COUNT; k++) {
        const gp_kind_summary *ks = &s->kinds[k];
        size_t n = top && top < ks->n_rows ? top : ks->n_rows;
        for (size_t i = 0; i < n; i++) {
            const gp_name_stats *r = &ks->rows[i];
            fprintf(fp, "%s,", gp_event_kind_name(r->kind));
            gp__csv_field(fp, r->name);
            fprintf(fp,
                    ",%" PRIu64 ",%" PRId64 ",%.1f,%" PRId64 ",%" PRId64
                    ",%.1f,%.1f,%.1f,%.1f,%.6f,%" PRId64 ",%.1f",
                    r->calls, r->total, r->mean, r->min, r->max, r->stddev, r->p50, r->p95, r->p99,
                    r->share, r->self_total, r->self_mean);
            /* a gpuprof profile's columns, empty on rows whose calls carry none */
            if (s->has_mem_avg && r->mem_avg >= 0)
                fprintf(fp, ",%.1f", r->mem_avg);
            else if (s->has_mem_avg)
                fputc(',', fp);
            if (s->has_gpu_util && r->gpu_util >= 0)
                fprintf(fp, ",%.4f", r->gpu_util * 100.0);
            else if (s->has_gpu_util)
                fputc(',', fp);
            fputc('\n', fp);
        }
    }
    return fflush(fp) != 0 || ferror(fp) ? GP_EIO : GP_OK;
}
