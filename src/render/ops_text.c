/* Text table of gp_ops (`gpuprof ops`): key_averages-style columns with units in the headers, a
 * TOTAL row of the partitions, the device's roof and the result's note. Formatting only. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "gpuprof/ops.h"
#include "gpuprof/summary.h"
#include "render/render_internal.h"

#define MS(ns) ((double)(ns) / 1e6)
#define NAME_W 40
#define SHAPE_W 34
#define NAME_CAP 512

static const char *title_of(gp_ops_by by)
{
    static const char *const titles[] = {
        [GP_OPS_BY_NAME] = "GPU AND CPU TIME BY OPERATOR",
        [GP_OPS_BY_SHAPE] = "GPU AND CPU TIME BY OPERATOR AND INPUT SHAPE",
        [GP_OPS_BY_MODULE] = "GPU AND CPU TIME BY NN.MODULE",
        [GP_OPS_BY_LINE] = "GPU AND CPU TIME BY PYTHON SOURCE LINE",
        [GP_OPS_BY_ANNOTATION] = "GPU AND CPU TIME BY USER ANNOTATION",
        [GP_OPS_BY_KERNEL] = "GPU WORK SUM BY KERNEL AND LAUNCHING OPERATOR",
        [GP_OPS_BY_INSTANCE] = "OPERATOR INSTANCES",
    };
    return GP_NAME_OF(titles, by, "OPERATORS");
}

static const char *key_column(gp_ops_by by)
{
    static const char *const cols[] = {
        [GP_OPS_BY_NAME] = "Operator",         [GP_OPS_BY_SHAPE] = "Operator",
        [GP_OPS_BY_MODULE] = "Module",         [GP_OPS_BY_LINE] = "Source line",
        [GP_OPS_BY_ANNOTATION] = "Annotation", [GP_OPS_BY_KERNEL] = "Kernel",
        [GP_OPS_BY_INSTANCE] = "Operator",
    };
    return GP_NAME_OF(cols, by, "Name");
}

/* s cut to w characters ("..." at the end when cut) into b. */
static const char *fit(const char *s, size_t w, char *b, size_t cap)
{
    if (!s)
        s = "";
    size_t n = strlen(s);
    if (n <= w || w < 4) {
        snprintf(b, cap, "%s", s);
    } else {
        snprintf(b, cap, "%.*s...", (int)(w - 3), s);
    }
    return b;
}

/* The perf columns of a row: "TFLOP/s TB/s FLOP/B %roof bound" or blanks. */
static void perf_cols(FILE *fp, const gp_ops_row *r)
{
    if (!r->modeled) {
        fprintf(fp, " %9s %7s %8s %6s %-7s", "-", "-", "-", "-", "");
        return;
    }
    fprintf(fp, " %9.2f %7.3f %8.1f", r->tflops_per_s, r->tb_per_s, r->intensity);
    if (r->roof_pct >= 0)
        fprintf(fp, " %5.1f%% %-7s", r->roof_pct, gp_op_bound_name(r->bound));
    else
        fprintf(fp, " %6s %-7s", "-", "");
}

static void header(FILE *fp, const gp_ops *ops, int width)
{
    bool shapes = ops->by == GP_OPS_BY_SHAPE || ops->by == GP_OPS_BY_INSTANCE;
    fprintf(fp, "%-*s", NAME_W, key_column(ops->by));
    if (shapes)
        fprintf(fp, " %-*s %-5s", SHAPE_W, "Input Dims", "dtype");
    if (ops->by == GP_OPS_BY_INSTANCE)
        fprintf(fp, " %-9s", "Ext. id");
    if (ops->by == GP_OPS_BY_KERNEL)
        fprintf(fp, " %8s %13s %8s  %s\n", "Count", "GPU sum (ms)", "Replayed", "Launched by");
    else
        fprintf(fp, " %8s %13s %13s %13s %13s %13s %13s %8s %9s %7s %8s %6s %-7s\n", "Calls",
                "Self CPU (ms)", "CPU total(ms)", "Self GPU (ms)", "Self busy(ms)", "GPU total(ms)",
                "GPU busy (ms)", "Kernels", "TFLOP/s", "TB/s", "FLOP/B", "Roof", "Bound");
    gp__rule(fp, '-', width);
}

static void row(FILE *fp, const gp_ops *ops, const gp_ops_row *r, const char *name)
{
    char b[NAME_CAP];
    fprintf(fp, "%-*s", NAME_W, name);
    if (ops->by == GP_OPS_BY_SHAPE || ops->by == GP_OPS_BY_INSTANCE)
        fprintf(fp, " %-*s %-5s", SHAPE_W, fit(r->shapes ? r->shapes : "-", SHAPE_W, b, sizeof b),
                r->modeled ? gp_op_dtype_name(r->dtype) : "");
    if (ops->by == GP_OPS_BY_INSTANCE) {
        if (r->unattributed)
            fprintf(fp, " %-9s", "-");
        else
            fprintf(fp, " %-9" PRId64, r->external_id);
    }
    if (ops->by == GP_OPS_BY_KERNEL) {
        fprintf(fp, " %8" PRIu64 " %13.3f %8" PRIu64 "  %s\n", r->calls, MS(r->gpu), r->replayed,
                r->module ? r->module : "");
        return;
    }
    if (r->unattributed)
        fprintf(fp, " %8s %13s %13s %13.3f %13.3f %13.3f %13.3f %8" PRIu64, "-", "-", "-",
                MS(r->self_gpu), MS(r->self_gpu_busy), MS(r->gpu), MS(r->gpu_busy), r->kernels);
    else
        fprintf(fp, " %8" PRIu64 " %13.3f %13.3f %13.3f %13.3f %13.3f %13.3f %8" PRIu64, r->calls,
                MS(r->self_cpu), MS(r->cpu), MS(r->self_gpu), MS(r->self_gpu_busy), MS(r->gpu),
                MS(r->gpu_busy), r->kernels);
    perf_cols(fp, r);
    fputc('\n', fp);
}

/* The device line: which roof the percentages use. */
static void device_line(FILE *fp, const gp_ops *ops)
{
    const gp_device_peak *p = &ops->peak;
    fprintf(fp, "Device: %s", p->device ? p->device : "unknown");
    if (p->num_sms > 0)
        fprintf(fp, " (%d SMs)", (int)p->num_sms);
    if (p->tbps > 0) {
        fprintf(fp, "; roof: %s%s", p->entry ? p->entry : "", p->overridden ? " (overridden)" : "");
        for (int d = GP_DT_FP64; d < GP_DT_OTHER; d++)
            if (p->tflops[d] > 0)
                fprintf(fp, " %s %.1f", gp_op_dtype_name((gp_op_dtype)d), p->tflops[d]);
        fprintf(fp, " TFLOP/s, %.2f TB/s", p->tbps);
    } else {
        fputs("; not in the peak table: no % of roofline", fp);
    }
    fputc('\n', fp);
}

static void legend(FILE *fp, const gp_ops *ops)
{
    if (ops->by == GP_OPS_BY_KERNEL) {
        fputs("Count: GPU events of that name; GPU sum: their summed durations; Replayed: of them, "
              "from "
              "a graph replay.\nLaunched by: the innermost CPU ops around their launch calls.\n",
              fp);
        return;
    }
    fputs("Self CPU: time in the op itself, nested events excluded; CPU total: its whole "
          "duration (nested ops\noverlap). Self GPU: summed durations of the GPU work the op "
          "launched itself (a partition:\nTOTAL is the GPU work sum); Self busy: per instance, the "
          "union of that work (overlapping\nkernels of one op count once: TraceLens's direct "
          "kernel time), summed. GPU total: summed durations\nof the work launched by the op and "
          "every op nested in it; GPU busy: the union of that work.\n"
          "TFLOP/s, TB/s: the perf model's FLOPs and bytes over GPU total (ops modelled by name, "
          "vllm::...:\nover GPU busy); FLOP/B: arithmetic intensity; Roof: roofline time (max of "
          "FLOPs / peak, bytes /\nbandwidth) over the same time, none for host<->device copies; "
          "Bound: the larger term.\n",
          fp);
}

gp_status gp_ops_render_text(const gp_ops *ops, size_t top_n, FILE *fp)
{
    size_t n = top_n && top_n < ops->n_rows ? top_n : ops->n_rows;
    int width = NAME_W + 154 +
                (ops->by == GP_OPS_BY_SHAPE || ops->by == GP_OPS_BY_INSTANCE ? SHAPE_W + 7 : 0) +
                (ops->by == GP_OPS_BY_INSTANCE ? 10 : 0);
    if (ops->by == GP_OPS_BY_KERNEL)
        width = NAME_W + 80;
    const char **names = malloc((n ? n : 1) * sizeof *names);
    char *shown = malloc((n ? n : 1) * NAME_CAP);
    if (!names || !shown) {
        free(names);
        free(shown);
        return GP_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        names[i] = ops->rows[i].key;
    gp_status st = gp_shorten_names_unique(names, n, NAME_W, shown, NAME_CAP);
    if (st == GP_OK) {
        gp__rule(fp, '=', width);
        fprintf(fp, "%s (sorted by %s)\n", title_of(ops->by), gp_ops_sort_name(ops->sort));
        device_line(fp, ops);
        gp__rule(fp, '=', width);
        header(fp, ops, width);
        for (size_t i = 0; i < n; i++)
            row(fp, ops, &ops->rows[i], shown + i * NAME_CAP);
        if (n < ops->n_rows)
            fprintf(fp, "(%zu more not shown; --top 0 shows all)\n", ops->n_rows - n);
        gp__rule(fp, '-', width);
        const gp_ops_row *t = &ops->total;
        if (ops->by == GP_OPS_BY_KERNEL)
            fprintf(fp, "%-*s %8" PRIu64 " %13.3f %8" PRIu64 "\n", NAME_W, "TOTAL", t->calls,
                    MS(t->gpu), t->replayed);
        else
            fprintf(fp, "%-*s %8" PRIu64 " %13.3f %13s %13.3f %13s %13s %13s %8" PRIu64 "\n",
                    NAME_W +
                        (ops->by == GP_OPS_BY_SHAPE || ops->by == GP_OPS_BY_INSTANCE ? SHAPE_W + 7
                                                                                     : 0) +
                        (ops->by == GP_OPS_BY_INSTANCE ? 10 : 0),
                    "TOTAL", t->calls, MS(t->self_cpu), "-", MS(t->self_gpu), "-", "-", "-",
                    t->kernels);
        gp__rule(fp, '-', width);
        legend(fp, ops);
        fprintf(fp,
                "Op instances: %" PRIu64 "; with a perf model: %" PRIu64 "; GPU events: %" PRIu64
                " (GPU work sum %.3f ms), from graph replays: %" PRIu64 "\n",
                ops->instances, ops->modeled, ops->gpu_events, MS(ops->gpu_time), ops->replayed);
        gp__rule(fp, '=', width);
        if (ops->note.msg[0])
            fprintf(fp, "note: %s\n", ops->note.msg);
    }
    free(names);
    free(shown);
    if (st != GP_OK)
        return st;
    return fflush(fp) != 0 || ferror(fp) ? GP_EIO : GP_OK;
}
