/* Text and JSON of the memory timeline (`gpuprof memory`, `--json`). Formatting only. */
#include <stdio.h>

#include "core/json_writer.h"
#include "core/units.h"
#include "core/util.h"
#include "render/memory_render.h"
#include "render/render_internal.h"

const char *gp__mem_device_label(const gp__mem_device *d, char *buf, size_t cap)
{
    char tb[32];
    const char *type = gp__mem_device_type_name(d->device_type, tb, sizeof tb);
    if (d->device_id >= 0)
        snprintf(buf, cap, "%s:%d", type, (int)d->device_id);
    else
        snprintf(buf, cap, "%s", type);
    return buf;
}

static void bytes_text(char *buf, size_t cap, int64_t b)
{
    gp__fmt_bytes(buf, cap, (double)b);
}

static void live_table(const gp__mem_device *d, size_t top, FILE *fp)
{
    char b[32], l[32];
    if (!d->has_addresses) {
        fputs("  live at the peak: unknown (the events carry no addresses to match frees with)\n",
              fp);
        return;
    }
    bytes_text(b, sizeof b, d->live_traced);
    fprintf(fp, "  live at the peak: %s in %llu block%s allocated in the trace", b,
            (unsigned long long)d->live_blocks, d->live_blocks == 1 ? "" : "s");
    bytes_text(b, sizeof b, d->live_untraced);
    fprintf(fp, ", %s allocated before it began\n", b);
    if (!d->n_live)
        return;
    fprintf(fp, "    %12s %7s %12s  %-40s %s\n", "bytes", "blocks", "largest", "allocated in op",
            "Python line");
    for (size_t i = 0; i < d->n_live && (!top || i < top); i++) {
        const gp__mem_live *g = &d->live[i];
        bytes_text(b, sizeof b, g->bytes);
        bytes_text(l, sizeof l, g->largest);
        fprintf(fp, "    %12s %7llu %12s  %-40s %s\n", b, (unsigned long long)g->blocks, l,
                g->op[0] ? g->op : "-", g->py[0] ? g->py : "-");
    }
    if (top && d->n_live > top)
        fprintf(fp, "    ... %zu more groups (--top 0 lists every one)\n", d->n_live - top);
}

static void device_text(const gp__mem_device *d, size_t top, FILE *fp)
{
    char lab[48], b[32], r[32], t[32];
    fprintf(fp, "rank %d, %s: %llu events (levels from %s)\n", (int)d->rank,
            gp__mem_device_label(d, lab, sizeof lab), (unsigned long long)d->events,
            d->from_totals ? "the trace's Total Allocated" : "a running sum of Bytes");
    bytes_text(b, sizeof b, d->peak_allocated);
    gp__fmt_dur(t, sizeof t, d->peak_ts - d->first_ts);
    fprintf(fp, "  peak allocated   %s, %s after the first event", b, t);
    if (d->peak_op[0])
        fprintf(fp, ", in %s", d->peak_op);
    if (d->peak_py[0])
        fprintf(fp, " at %s", d->peak_py);
    fputc('\n', fp);
    if (d->peak_reserved >= 0) {
        bytes_text(r, sizeof r, d->peak_reserved);
        fprintf(fp, "  peak reserved    %s\n", r);
    }
    bytes_text(b, sizeof b, d->start_allocated);
    bytes_text(r, sizeof r, d->final_allocated);
    gp__fmt_dur(t, sizeof t, d->last_ts - d->first_ts);
    fprintf(fp, "  allocated        %s at the first event, %s after the last (%s later)\n", b, r,
            t);
    bytes_text(b, sizeof b, d->bytes_allocated);
    fprintf(fp, "  allocations      %llu (%s), %.1f/s, %.3f GB/s\n", (unsigned long long)d->allocs,
            b, d->allocs_per_s, d->alloc_bytes_per_s / GP_GB_PER_S);
    bytes_text(b, sizeof b, d->bytes_freed);
    fprintf(fp, "  frees            %llu (%s), %.1f/s, %.3f GB/s\n", (unsigned long long)d->frees,
            b, d->frees_per_s, d->free_bytes_per_s / GP_GB_PER_S);
    live_table(d, top, fp);
}

gp_status gp__mem_render_text(const gp__mem_timeline *m, size_t top, FILE *fp)
{
    fprintf(fp, "MEMORY TIMELINE (%zu allocator%s)\n\n", m->n_devices,
            m->n_devices == 1 ? "" : "s");
    if (!m->n_devices)
        fputs("no \"[memory]\" events in the input: record with profile_memory=True "
              "(gpuprof profile --memory)\n",
              fp);
    for (size_t i = 0; i < m->n_devices; i++) {
        if (i)
            fputc('\n', fp);
        device_text(&m->devices[i], top, fp);
    }
    if (m->n_devices && !m->has_stacks)
        fputs("\nno Python stacks in the input: record with with_stack=True for the Python line "
              "of each allocation\n",
              fp);
    return ferror(fp) ? GP_EIO : GP_OK;
}

static void kv_opt_str(gp__jw *w, const char *key, const char *s)
{
    gp__jw_key(w, key);
    if (s[0])
        gp__jw_str(w, s);
    else
        gp__jw_null(w);
}

static void kv_opt_int(gp__jw *w, const char *key, int64_t v)
{
    gp__jw_key(w, key);
    if (v >= 0)
        gp__jw_int(w, v);
    else
        gp__jw_null(w);
}

static void live_json(gp__jw *w, const gp__mem_device *d)
{
    gp__jw_key(w, "live_at_peak");
    if (!d->has_addresses) {
        gp__jw_null(w); /* no addresses: frees cannot be matched with allocations */
        return;
    }
    gp__jw_obj_begin(w);
    gp__jw_kv_int(w, "traced_bytes", d->live_traced);
    gp__jw_kv_int(w, "blocks", (int64_t)d->live_blocks);
    gp__jw_kv_int(w, "before_trace_bytes", d->live_untraced);
    gp__jw_key(w, "groups");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < d->n_live; i++) {
        const gp__mem_live *g = &d->live[i];
        gp__jw_obj_begin(w);
        kv_opt_str(w, "op", g->op);
        kv_opt_str(w, "python_line", g->py);
        gp__jw_kv_int(w, "blocks", (int64_t)g->blocks);
        gp__jw_kv_int(w, "bytes", g->bytes);
        gp__jw_kv_int(w, "largest_bytes", g->largest);
        gp__jw_kv_int(w, "first_alloc_ts_ns", g->first_ts);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
    gp__jw_obj_end(w);
}

static void device_json(gp__jw *w, const gp__mem_device *d)
{
    char lab[48];
    gp__jw_obj_begin(w);
    gp__jw_kv_int(w, "rank", d->rank);
    gp__jw_kv_str(w, "device", gp__mem_device_label(d, lab, sizeof lab));
    gp__jw_kv_int(w, "device_type", d->device_type);
    gp__jw_kv_int(w, "device_id", d->device_id);
    gp__jw_kv_int(w, "events", (int64_t)d->events);
    gp__jw_kv_str(w, "levels_from", d->from_totals ? "total_allocated" : "running_sum");
    gp__jw_kv_int(w, "first_ts_ns", d->first_ts);
    gp__jw_kv_int(w, "last_ts_ns", d->last_ts);
    gp__jw_kv_int(w, "start_allocated_bytes", d->start_allocated);
    gp__jw_kv_int(w, "peak_allocated_bytes", d->peak_allocated);
    gp__jw_kv_int(w, "peak_ts_ns", d->peak_ts);
    kv_opt_int(w, "peak_reserved_bytes", d->peak_reserved);
    gp__jw_kv_int(w, "final_allocated_bytes", d->final_allocated);
    kv_opt_str(w, "peak_op", d->peak_op);
    kv_opt_str(w, "peak_python_line", d->peak_py);
    gp__jw_kv_int(w, "allocations", (int64_t)d->allocs);
    gp__jw_kv_int(w, "frees", (int64_t)d->frees);
    gp__jw_kv_int(w, "bytes_allocated", d->bytes_allocated);
    gp__jw_kv_int(w, "bytes_freed", d->bytes_freed);
    gp__jw_kv_double(w, "allocations_per_s", d->allocs_per_s);
    gp__jw_kv_double(w, "frees_per_s", d->frees_per_s);
    gp__jw_kv_double(w, "allocated_bytes_per_s", d->alloc_bytes_per_s);
    gp__jw_kv_double(w, "freed_bytes_per_s", d->free_bytes_per_s);
    live_json(w, d);
    gp__jw_key(w, "curve"); /* [ts_ns, allocated, reserved or null] */
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < d->n_curve; i++) {
        gp__jw_arr_begin(w);
        gp__jw_int(w, d->curve[i].ts);
        gp__jw_int(w, d->curve[i].allocated);
        if (d->curve[i].reserved >= 0)
            gp__jw_int(w, d->curve[i].reserved);
        else
            gp__jw_null(w);
        gp__jw_arr_end(w);
    }
    gp__jw_arr_end(w);
    gp__jw_obj_end(w);
}

gp_status gp__mem_render_json(const gp__mem_timeline *m, FILE *fp)
{
    gp__jw w;
    gp__jw_init(&w, fp);
    gp__jw_obj_begin(&w);
    gp__jw_kv_bool(&w, "has_stacks", m->has_stacks);
    gp__jw_key(&w, "devices");
    gp__jw_arr_begin(&w);
    for (size_t i = 0; i < m->n_devices; i++)
        device_json(&w, &m->devices[i]);
    gp__jw_arr_end(&w);
    gp__jw_obj_end(&w);
    gp_status st = gp__jw_finish(&w);
    if (st == GP_OK && (fputc('\n', fp) == EOF || ferror(fp)))
        st = GP_EIO;
    return st;
}
