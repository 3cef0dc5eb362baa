/* The in-process profiler's printing and the exports that run an analysis, assembled as convert ->
 * analyze -> render: the profiler (src/produce/profiler) records and converts its store
 * (gp_profiler_to_trace, timer / memory / breakdown rows), analyze computes (gp_summary_compute,
 * gp_flame_build), render formats (summary text, the profiler tables of profiler_tables.c, the
 * folded writer of flame_render.c). Nothing here computes or formats by itself. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/atomic_file.h"
#include "gpuprof/profiler.h"
#include "gpuprof/report.h"
#include "gpuprof/summary.h"
#include "produce/profiler/profile_meta.h"
#include "render/render_internal.h"

/* ---- summary and bottlenecks --------------------------------------------------------------- */

/* The range summary of a profiler trace (only GP_EV_RANGE rows; top_n = 0: every name). */
static gp_status range_summary(const gp_trace *t, size_t top_n, gp_summary **out)
{
    gp_summary_opts so;
    gp_summary_opts_init(&so);
    so.kinds = 1u << GP_EV_RANGE;
    if (top_n)
        so.top_n = top_n;
    return gp_summary_compute(&t, 1, &so, out, NULL);
}

static gp_status print_table(gp_profiler *p, FILE *fp, size_t top_rows, size_t top_n)
{
    gp_trace *t = NULL;
    gp_status st = gp_profiler_to_trace(p, &t);
    if (st != GP_OK)
        return st;
    if (gp_trace_event_count(t) == 0) {
        gp_trace_free(t);
        return GP_EEMPTY;
    }
    gp_summary *s = NULL;
    st = range_summary(t, top_n, &s);
    if (st == GP_OK) {
        gp_summary_render_opts ro;
        memset(&ro, 0, sizeof(ro));
        ro.top_n = top_rows;
        st = gp_summary_render_text(s, &ro, fp);
        gp_profiler_stats ps;
        gp_profiler_get_stats(p, &ps);
        if (st == GP_OK && (ps.dropped || ps.sampled_out))
            fprintf(fp, "dropped ranges: %" PRIu64 ", sampled out: %" PRIu64 "\n", ps.dropped,
                    ps.sampled_out);
    }
    gp_summary_free(s);
    gp_trace_free(t);
    return st == GP_OK && ferror(fp) ? GP_EIO : st;
}

gp_status gp_profiler_print_summary(gp_profiler *p, FILE *fp)
{
    return print_table(p, fp, 0, 0);
}

gp_status gp_profiler_print_bottlenecks(gp_profiler *p, FILE *fp, size_t n)
{
    if (n == 0)
        n = 10;
    return print_table(p, fp, n, n);
}

/* ---- breakdown, timers, memory ------------------------------------------------------------- */

gp_status gp_profiler_print_breakdown(gp_profiler *p, FILE *fp)
{
    gp_range_breakdown *rows = NULL;
    size_t n = 0;
    gp_status st = gp_profiler_breakdown(p, &rows, &n);
    if (st == GP_OK)
        st = n ? gp_range_breakdown_render_text(rows, n, fp) : GP_EEMPTY;
    free(rows);
    return st;
}

gp_status gp_cuda_timer_print(gp_cuda_timer *t, FILE *fp)
{
    if (!t)
        return GP_EINVAL;
    gp_timer_stats *rows = NULL;
    size_t n = 0;
    gp_status st = gp_cuda_timer_all_stats(t, &rows, &n);
    if (st == GP_ENODRIVER) { /* no driver and no added sample: say why */
        const char *why = gp_profiler_cuda_status();
        return gp__timer_table_text(NULL, 0, why ? why : gp_strerror(st), fp);
    }
    if (st == GP_OK)
        st = gp__timer_table_text(rows, n, NULL, fp);
    free(rows);
    return st;
}

gp_status gp_mem_print(gp_mem_tracker *m, FILE *fp)
{
    if (!m)
        return GP_EINVAL;
    gp_mem_status s;
    gp_mem_status_get(m, &s);
    gp_mem_buffer *bufs = NULL;
    size_t n = 0;
    gp_status st = gp_mem_buffers(m, &bufs, &n);
    if (st != GP_OK)
        return st;
    const char *device_why = NULL;
    if (s.driver != GP_OK) {
        device_why = gp_profiler_cuda_status();
        if (!device_why)
            device_why = gp_strerror(s.driver);
    }
    gp_mem_peak pk;
    bool has_peak = gp_mem_sampler_peak(m, &pk) == GP_OK;
    st = gp__mem_table_text(&s, bufs, n, device_why, has_peak ? &pk : NULL, fp);
    free(bufs);
    return st;
}

gp_status gp_profiler_print_full_report(gp_profiler *p, FILE *fp)
{
    p = p ? p : gp_profiler_global();
    if (!p)
        return GP_ENOMEM;
    gp__full_report_title(fp);
    gp_status st = gp_cuda_timer_print(gp_profiler_cuda_timer(p), fp);
    if (st == GP_OK)
        fprintf(fp, "\n");
    if (st == GP_OK)
        st = gp_mem_print(gp_profiler_mem_tracker(p), fp);
    return st == GP_OK && ferror(fp) ? GP_EIO : st;
}

/* ---- exports ------------------------------------------------------------------------------- */

gp_status gp_profiler_export_json(gp_profiler *p, const char *path, gp_error *err)
{
    gp__prof_snapshot snap;
    gp_trace *t = NULL;
    gp_summary *sum = NULL;
    gp_status st = gp__prof_build_trace(p, &snap, &t);
    if (st == GP_OK)
        st = range_summary(t, 0, &sum);
    if (st == GP_OK) {
        const gp_kind_summary *ks = &sum->kinds[GP_EV_RANGE];
        st =
            gp__prof_set_profile_meta(p ? p : gp_profiler_global(), &snap, ks->rows, ks->n_rows, t);
    }
    gp_summary_free(sum);
    if (st != GP_OK) {
        gp_trace_free(t);
        return gp_error_set(err, st, "%s: cannot build the profile: %s", path, gp_strerror(st));
    }
    st = gp_trace_write_chrome(t, path, err);
    gp_trace_free(t);
    return st;
}

gp_status gp_profiler_export_chrome(gp_profiler *p, const char *path, gp_error *err)
{
    return gp_profiler_export_json(p, path, err);
}

gp_status gp_profiler_export_folded(gp_profiler *p, const char *path, gp_error *err)
{
    gp_trace *t = NULL;
    gp_status st = gp_profiler_to_trace(p, &t);
    if (st != GP_OK)
        return gp_error_set(err, st, "%s: %s", path, gp_strerror(st));
    gp_flame_opts fo;
    gp_flame_opts_init(&fo);
    fo.weight = GP_FLAME_CPU;
    fo.thread_frames = false; /* stacks merged over threads */
    gp_flame_tree *tree = NULL;
    const gp_trace *one = t;
    st = gp_flame_build(&one, 1, &fo, &tree, NULL);
    gp_trace_free(t);
    if (st == GP_OK) {
        st = gp_flame_write(tree, GP_FLAME_FOLDED, NULL, path, err);
    } else if (st == GP_EEMPTY) { /* nothing recorded: an empty file, as before */
        gp__afile f;
        st = gp__afile_open(&f, path, err);
        if (st == GP_OK)
            st = gp__afile_commit(&f, err);
    } else {
        gp_error_set(err, st, "%s: %s", path, gp_strerror(st));
    }
    gp_flame_tree_free(tree);
    return st;
}
