/* JSON and CSV of gp_ops (`gpuprof ops --json|--csv`): every field of every row, durations in ns,
 * FLOPs and bytes as counts, rates in TFLOP/s and TB/s (schema in docs/ops.md). Formatting only. */
#include <inttypes.h>
#include <stdio.h>

#include "core/csv.h"
#include "core/json_writer.h"
#include "core/util.h"
#include "gpuprof/ops.h"

static void kv_opt_str(gp__jw *w, const char *key, const char *s)
{
    gp__jw_key(w, key);
    if (s)
        gp__jw_str(w, s);
    else
        gp__jw_null(w);
}

static void json_row(gp__jw *w, const gp_ops *ops, const gp_ops_row *r)
{
    gp__jw_obj_begin(w);
    gp__jw_kv_str(w, "key", r->key);
    if (ops->by == GP_OPS_BY_SHAPE || ops->by == GP_OPS_BY_INSTANCE) {
        kv_opt_str(w, "input_dims", r->shapes);
        kv_opt_str(w, "input_type", r->types);
    }
    if (ops->by == GP_OPS_BY_INSTANCE) {
        kv_opt_str(w, "module", r->module);
        kv_opt_str(w, "source_line", r->line);
        gp__jw_kv_int(w, "external_id", r->external_id);
        gp__jw_kv_int(w, "model_external_id", r->model_external_id);
        gp__jw_kv_int(w, "rank", r->rank);
        gp__jw_kv_int(w, "ts_ns", r->ts);
    }
    if (ops->by == GP_OPS_BY_KERNEL)
        kv_opt_str(w, "launched_by", r->module);
    gp__jw_kv_bool(w, "unattributed", r->unattributed);
    kv_opt_str(w, "launch_call", r->launch_call);
    gp__jw_kv_uint(w, "calls", r->calls);
    gp__jw_kv_int(w, "self_cpu_ns", r->self_cpu);
    gp__jw_kv_int(w, "cpu_ns", r->cpu);
    gp__jw_kv_int(w, "self_gpu_ns", r->self_gpu);
    gp__jw_kv_int(w, "self_gpu_busy_ns", r->self_gpu_busy);
    gp__jw_kv_int(w, "gpu_ns", r->gpu);
    gp__jw_kv_int(w, "gpu_busy_ns", r->gpu_busy);
    gp__jw_kv_uint(w, "kernels", r->kernels);
    gp__jw_kv_uint(w, "kernels_subtree", r->kernels_subtree);
    gp__jw_kv_uint(w, "replayed", r->replayed);
    gp__jw_kv_uint(w, "modeled", r->modeled);
    if (r->modeled) {
        gp__jw_kv_str(w, "category", gp_op_category_name(r->category));
        kv_opt_str(w, "dtype", r->dtype ? gp_op_dtype_name(r->dtype) : NULL);
        gp__jw_kv_double(w, "flops", r->flops);
        gp__jw_kv_double(w, "bytes", r->bytes);
        gp__jw_kv_int(w, "model_time_ns", r->model_time);
        gp__jw_kv_double(w, "tflops_per_s", r->tflops_per_s);
        gp__jw_kv_double(w, "tb_per_s", r->tb_per_s);
        gp__jw_kv_double(w, "intensity_flop_per_byte", r->intensity);
        gp__jw_key(w, "roof_pct");
        if (r->roof_pct >= 0)
            gp__jw_double(w, r->roof_pct);
        else
            gp__jw_null(w);
        kv_opt_str(w, "bound", r->bound ? gp_op_bound_name(r->bound) : NULL);
    }
    gp__jw_obj_end(w);
}

static void json_device(gp__jw *w, const gp_device_peak *p)
{
    gp__jw_key(w, "device");
    gp__jw_obj_begin(w);
    kv_opt_str(w, "name", p->device);
    gp__jw_kv_int(w, "num_sms", p->num_sms);
    kv_opt_str(w, "peak_table_entry", p->entry);
    gp__jw_kv_bool(w, "overridden", p->overridden);
    gp__jw_key(w, "peak_tflops");
    gp__jw_obj_begin(w);
    for (int d = GP_DT_FP64; d < GP_DT_OTHER; d++)
        if (p->tflops[d] > 0)
            gp__jw_kv_double(w, gp_op_dtype_name((gp_op_dtype)d), p->tflops[d]);
    gp__jw_obj_end(w);
    gp__jw_key(w, "peak_tbps");
    if (p->tbps > 0)
        gp__jw_double(w, p->tbps);
    else
        gp__jw_null(w);
    gp__jw_obj_end(w);
}

gp_status gp_ops_render_json(const gp_ops *ops, size_t top_n, FILE *fp)
{
    size_t n = top_n && top_n < ops->n_rows ? top_n : ops->n_rows;
    gp__jw w;
    gp__jw_init(&w, fp);
    gp__jw_obj_begin(&w);
    gp__jw_kv_int(&w, "schema_version", 1);
    gp__jw_kv_str(&w, "by", gp_ops_by_name(ops->by));
    gp__jw_kv_str(&w, "sort", gp_ops_sort_name(ops->sort));
    gp__jw_kv_int(&w, "traces", (int64_t)ops->n_traces);
    json_device(&w, &ops->peak);
    const struct {
        const char *k;
        uint64_t v;
    } counts[] = {{"instances", ops->instances},   {"modeled", ops->modeled},
                  {"no_shapes", ops->no_shapes},   {"bad_shapes", ops->bad_shapes},
                  {"gpu_events", ops->gpu_events}, {"no_launch", ops->no_launch},
                  {"outside_op", ops->outside_op}, {"replayed", ops->replayed}};
    for (size_t i = 0; i < GP_ARRAY_LEN(counts); i++)
        gp__jw_kv_uint(&w, counts[i].k, counts[i].v);
    gp__jw_kv_int(&w, "gpu_work_sum_ns", ops->gpu_time); /* was gpu_time_ns */
    gp__jw_key(&w, "total");
    json_row(&w, ops, &ops->total);
    gp__jw_key(&w, "rows");
    gp__jw_arr_begin(&w);
    for (size_t i = 0; i < n; i++)
        json_row(&w, ops, &ops->rows[i]);
    gp__jw_arr_end(&w);
    gp__jw_kv_uint(&w, "rows_left_out", ops->n_rows - n);
    gp__jw_kv_str(&w, "note", ops->note.msg);
    gp__jw_obj_end(&w);
    gp__jw_text(&w, "\n", 1);
    gp_status st = gp__jw_finish(&w);
    return st == GP_OK && (fflush(fp) != 0 || ferror(fp)) ? GP_EIO : st;
}

gp_status gp_ops_render_csv(const gp_ops *ops, size_t top_n, FILE *fp)
{
    size_t n = top_n && top_n < ops->n_rows ? top_n : ops->n_rows;
    fputs("key,input_dims,input_type,module,source_line,external_id,rank,unattributed,"
          "launch_call,calls,self_cpu_ns,cpu_ns,self_gpu_ns,self_gpu_busy_ns,gpu_ns,gpu_busy_ns,"
          "kernels,kernels_subtree,replayed,"
          "modeled,category,dtype,flops,bytes,model_time_ns,tflops_per_s,tb_per_s,intensity,"
          "roof_pct,bound\n",
          fp);
    for (size_t i = 0; i < n; i++) {
        const gp_ops_row *r = &ops->rows[i];
        const char *const text[] = {r->key, r->shapes, r->types, r->module, r->line};
        for (size_t k = 0; k < GP_ARRAY_LEN(text); k++) {
            if (k)
                fputc(',', fp);
            gp__csv_field(fp, text[k]);
        }
        fprintf(fp, ",%" PRId64 ",%d,%d,", r->external_id, (int)r->rank, r->unattributed ? 1 : 0);
        gp__csv_field(fp, r->launch_call);
        fprintf(fp,
                ",%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
                ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s,%s,%.17g,%.17g,%" PRId64
                ",%.6g,%.6g,%.6g,",
                r->calls, r->self_cpu, r->cpu, r->self_gpu, r->self_gpu_busy, r->gpu, r->gpu_busy,
                r->kernels, r->kernels_subtree, r->replayed, r->modeled,
                gp_op_category_name(r->category), gp_op_dtype_name(r->dtype), r->flops, r->bytes,
                r->model_time, r->tflops_per_s, r->tb_per_s, r->intensity);
        if (r->roof_pct >= 0)
            fprintf(fp, "%.4f", r->roof_pct);
        fprintf(fp, ",%s\n", gp_op_bound_name(r->bound));
    }
    return fflush(fp) != 0 || ferror(fp) ? GP_EIO : GP_OK;
}
