/* The in-process profiler's fixed-width text tables: kernel timers, tracked memory, range time
 * breakdown. Formatting only: the rows come computed from the profiler (src/produce/profiler),
 * src/app/profiler_output.c passes them here. */
#include <inttypes.h>
#include <stdio.h>

#include "gpuprof/profiler.h"
#include "gpuprof/summary.h"
#include "render/render_internal.h"

gp_status gp__timer_table_text(const gp_timer_stats *rows, size_t n, const char *why, FILE *fp)
{
    const int nw = 40, width = 40 + 1 + 8 + 9 * 12;
    gp__rule(fp, '=', width);
    fprintf(fp, "GPU KERNEL TIMING REPORT\n");
    gp__rule(fp, '=', width);
    if (why) {
        fprintf(fp, "status: %s\n", why);
        gp__rule(fp, '=', width);
        return ferror(fp) ? GP_EIO : GP_OK;
    }
    fprintf(fp, "%-*s %-8s %-11s %-11s %-11s %-11s %-11s %-11s %-11s %s\n", nw, "Kernel", "Calls",
            "Total (ms)", "Mean (ms)", "Min (ms)", "Max (ms)", "Std (ms)", "P50 (ms)", "P95 (ms)",
            "P99 (ms)");
    gp__rule(fp, '-', width);
    uint64_t calls = 0, pending = 0;
    double total = 0;
    for (size_t i = 0; i < n; i++) {
        const gp_timer_stats *r = &rows[i];
        char name[256];
        gp_shorten_name(r->name, (size_t)nw, name, sizeof name);
        fprintf(fp,
                "%-*s %-8" PRIu64 " %-11.3f %-11.3f %-11.3f %-11.3f %-11.3f %-11.3f %-11.3f "
                "%.3f\n",
                nw, name, r->calls, r->total_ms, r->mean_ms, r->min_ms, r->max_ms, r->stddev_ms,
                r->p50_ms, r->p95_ms, r->p99_ms);
        calls += r->calls;
        pending += r->pending;
        total += r->total_ms;
    }
    if (n == 0)
        fprintf(fp, "(no timers recorded)\n");
    gp__rule(fp, '-', width);
    fprintf(fp, "%-*s %-8" PRIu64 " %.3f\n", nw, "TOTAL", calls, total);
    if (pending)
        fprintf(fp, "pending: %" PRIu64 " timer(s) not complete on the GPU after 2 s\n", pending);
    gp__rule(fp, '=', width);
    return ferror(fp) ? GP_EIO : GP_OK;
}

gp_status gp_timer_stats_render_text(const gp_timer_stats *rows, size_t n, const char *why,
                                     FILE *fp)
{
    if (!fp || (!rows && n > 0))
        return GP_EINVAL;
    return gp__timer_table_text(rows, n, why, fp);
}

void gp__full_report_title(FILE *fp)
{
    gp__rule(fp, '#', 157);
    fprintf(fp, "GPU PROFILING REPORT: kernel timers, then tracked memory\n");
    gp__rule(fp, '#', 157);
    fprintf(fp, "\n");
}

/* Sizes in MiB, labelled so (core/units.h). */
static double mib(int64_t bytes)
{
    return (double)bytes / GP_MIB;
}

gp_status gp__mem_table_text(const gp_mem_status *s, const gp_mem_buffer *bufs, size_t n,
                             const char *device_why, const gp_mem_peak *peak, FILE *fp)
{
    const int nw = 40, width = 40 + 1 + 20 + 1 + 15 + 1 + 12;
    gp__rule(fp, '=', width);
    fprintf(fp, "GPU MEMORY TRACKING REPORT\n");
    gp__rule(fp, '=', width);
    fprintf(fp, "%-*s %-20s %-15s %12s\n", nw, "Tensor", "Shape", "Dtype", "Size (MiB)");
    gp__rule(fp, '-', width);
    for (size_t i = 0; i < n; i++) {
        const gp_mem_buffer *b = &bufs[i];
        char name[256];
        gp_shorten_name(b->name, (size_t)nw, name, sizeof name);
        fprintf(fp, "%-*s %-20.20s %-15.15s %12.3f\n", nw, name, b->shape, b->dtype, mib(b->bytes));
    }
    if (n == 0)
        fprintf(fp, "(no buffers tracked)\n");
    gp__rule(fp, '-', width);
    fprintf(fp, "%-*s %*.3f\n", nw, "TOTAL TRACKED", width - nw - 1, mib(s->tracked_bytes));
    fprintf(fp, "%-*s %*.3f\n", nw, "PEAK MEMORY", width - nw - 1, mib(s->peak_bytes));
    if (device_why)
        fprintf(fp, "Device memory: %s\n", device_why);
    else if (s->has_device)
        fprintf(fp, "Device memory: used %.3f MiB / total %.3f MiB (free %.3f MiB)\n",
                mib(s->total_bytes - s->free_bytes), mib(s->total_bytes), mib(s->free_bytes));
    else
        fprintf(fp, "Device memory: n/a (cuMemGetInfo failed)\n");
    if (s->has_pool)
        fprintf(fp, "Memory pool: used %.3f MiB / total %.3f MiB\n", mib(s->pool_used),
                mib(s->pool_reserved));
    else
        fprintf(fp, "Memory pool: n/a\n");
    if (peak)
        fprintf(fp,
                "Sampled device peak: %.3f MiB (%" PRIu64 " samples), range open at the peak: %s\n",
                mib(peak->peak_bytes), peak->samples, peak->open_range ? peak->open_range : "-");
    gp__rule(fp, '=', width);
    return ferror(fp) ? GP_EIO : GP_OK;
}

static void ms_or_na(FILE *fp, gp_ns v)
{
    if (v < 0)
        fprintf(fp, " %-13s", "n/a");
    else
        fprintf(fp, " %-13.3f", (double)v / 1e6);
}

gp_status gp_range_breakdown_render_text(const gp_range_breakdown *rows, size_t n, FILE *fp)
{
    const int nw = 40, width = 40 + 1 + 8 + 6 * 14 + 8;
    gp__rule(fp, '=', width);
    fprintf(fp, "RANGE TIME BREAKDOWN\n");
    gp__rule(fp, '=', width);
    fprintf(fp, "%-*s %-8s %-13s %-13s %-13s %-13s %-13s %s\n", nw, "Name", "Calls", "Wall (ms)",
            "GPU (ms)", "CPU (ms)", "Transfer (ms)", "Overhead (us)", "GB/s");
    gp__rule(fp, '-', width);
    for (size_t i = 0; i < n; i++) {
        const gp_range_breakdown *r = &rows[i];
        char name[256];
        gp_shorten_name(r->name, (size_t)nw, name, sizeof name);
        fprintf(fp, "%-*s %-8" PRIu64, nw, name, r->calls);
        ms_or_na(fp, r->wall_ns);
        ms_or_na(fp, r->gpu_ns);
        ms_or_na(fp, r->cpu_ns);
        ms_or_na(fp, r->transfer_ns);
        fprintf(fp, " %-13.3f", (double)r->overhead_ns / 1e3);
        if (r->gbps < 0)
            fprintf(fp, " n/a\n");
        else
            fprintf(fp, " %.3f\n", r->gbps);
    }
    gp__rule(fp, '=', width);
    return ferror(fp) ? GP_EIO : GP_OK;
}
