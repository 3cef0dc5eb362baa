/* The live monitor's sample lines: table, CSV, JSON lines (render/monitor_text.h). */
#include "render/monitor_text.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/json_writer.h"
#include "core/units.h"

static void cell(char *buf, size_t cap, const gp_gpu_sample *s, gp_metric m, double scale,
                 int width)
{
    if (gp_sample_has(s, m))
        snprintf(buf, cap, "%*.0f", width, s->v[m] * scale);
    else
        snprintf(buf, cap, "%*s", width, "-");
}

static const char *throttle_text(const gp_gpu_sample *s)
{
    if (!gp_sample_has(s, GP_M_THROTTLE))
        return "-";
    uint64_t b = (uint64_t)s->v[GP_M_THROTTLE];
    if (b & (GP_THROTTLE_HW_THERMAL | GP_THROTTLE_SW_THERMAL))
        return "thermal";
    if (b & (GP_THROTTLE_SW_POWER_CAP | GP_THROTTLE_POWER_BRAKE))
        return "power";
    if (b & GP_THROTTLE_HW_SLOWDOWN)
        return "hw_slow";
    if (b & GP_THROTTLE_IDLE)
        return "idle";
    return b ? "other" : "none";
}

void gp_monitor_table_header(FILE *fp)
{
    fprintf(fp, "# gpu    sm   mem  fb_used fb_total  temp   pwr plimit  sclk  mclk  fan procs "
                "throttle\n"
                "# idx     %%     %%      MiB      MiB     C     W      W   MHz   MHz    %%     # "
                "\n");
}

void gp_monitor_table_row(FILE *fp, const gp_gpu_ident *id, const gp_gpu_sample *s, bool have)

{
    char c[13][24];
    if (!have || id->lost) {
        fprintf(fp, "  %3u  %s\n", id->index, id->lost ? "lost (GPU_IS_LOST)" : "no sample yet");
        return;
    }
    cell(c[0], sizeof c[0], s, GP_M_UTIL_GPU, 1, 5);
    cell(c[1], sizeof c[1], s, GP_M_UTIL_MEM, 1, 5);
    cell(c[2], sizeof c[2], s, GP_M_MEM_USED, 1.0 / GP_MIB, 8);
    cell(c[3], sizeof c[3], s, GP_M_MEM_TOTAL, 1.0 / GP_MIB, 8);
    cell(c[4], sizeof c[4], s, GP_M_TEMP, 1, 5);
    cell(c[5], sizeof c[5], s, GP_M_POWER, 1, 5);
    cell(c[6], sizeof c[6], s, GP_M_POWER_LIMIT, 1, 6);
    cell(c[7], sizeof c[7], s, GP_M_CLOCK_SM, 1e-6, 5);
    cell(c[8], sizeof c[8], s, GP_M_CLOCK_MEM, 1e-6, 5);
    cell(c[9], sizeof c[9], s, GP_M_FAN, 1, 4);
    cell(c[10], sizeof c[10], s, GP_M_PROCESSES, 1, 5);
    fprintf(fp, "  %3u %s %s %s %s %s %s %s %s %s %s %s %s\n", id->index, c[0], c[1], c[2], c[3],
            c[4], c[5], c[6], c[7], c[8], c[9], c[10], throttle_text(s));
}

void gp_monitor_csv_header(FILE *fp)
{
    fprintf(fp, "ts_ns,gpu,uuid");
    for (int k = 0; k < GP_M_COUNT; k++)
        fprintf(fp, ",%s", gp_metric_name((gp_metric)k));
    fprintf(fp, "\n");
}

void gp_monitor_csv_row(FILE *fp, const gp_gpu_ident *id, const gp_gpu_sample *s, bool have)

{
    if (!have || id->lost)
        return;
    fprintf(fp, "%lld,%u,%s", (long long)s->ts, id->index, id->uuid);
    for (int k = 0; k < GP_M_COUNT; k++) {
        if (gp_sample_has(s, (gp_metric)k) && s->v[k] == floor(s->v[k]) && fabs(s->v[k]) < 9e15)
            fprintf(fp, ",%.0f", s->v[k]);
        else if (gp_sample_has(s, (gp_metric)k))
            fprintf(fp, ",%.10g", s->v[k]);
        else
            fprintf(fp, ",");
    }
    fprintf(fp, "\n");
}

void gp_monitor_sample_write_json(FILE *fp, const gp_gpu_ident *id, const gp_gpu_sample *s,
                                  bool have)

{
    gp__jw w;
    gp__jw_init(&w, NULL);
    gp__jw_obj_begin(&w);
    gp__jw_kv_str(&w, "type", "sample");
    gp__jw_kv_int(&w, "gpu", id->index);
    gp__jw_kv_str(&w, "uuid", id->uuid);
    gp__jw_kv_str(&w, "name", id->name);
    gp__jw_kv_str(&w, "pci_bus_id", id->pci_bus_id);
    gp__jw_kv_bool(&w, "lost", id->lost);
    if (have && !id->lost) {
        gp__jw_kv_int(&w, "ts_ns", s->ts);
        for (int k = 0; k < GP_M_COUNT; k++)
            if (gp_sample_has(s, (gp_metric)k))
                gp__jw_kv_double(&w, gp_metric_name((gp_metric)k), s->v[k]);
    }
    gp__jw_obj_end(&w);
    (void)gp__jw_take_line(&w, fp); /* the caller checks the stream */
}

void gp_monitor_suggestions_text(FILE *fp, const gp_suggestion *s, size_t n)
{
    if (n == 0)
        fprintf(fp, "# suggestions: none\n");
    for (size_t i = 0; i < n; i++) {
        char where[32] = "";
        if (s[i].device >= 0)
            snprintf(where, sizeof where, " gpu%d", s[i].device);
        fprintf(fp, "# %-8s suggestion %s%s: %s %s (%s)\n", gp_severity_name(s[i].severity),
                s[i].type, where, s[i].message, s[i].suggestion, s[i].evidence);
    }
}

void gp_monitor_suggestions_write_json(FILE *fp, const gp_suggestion *s, size_t n)
{
    gp__jw w;
    gp__jw_init(&w, NULL);
    gp__jw_obj_begin(&w);
    gp__jw_kv_str(&w, "type", "suggestions");
    gp__jw_key(&w, "suggestions");
    gp__jw_arr_begin(&w);
    for (size_t i = 0; i < n; i++) {
        gp__jw_obj_begin(&w);
        gp__jw_kv_str(&w, "type", s[i].type);
        gp__jw_kv_str(&w, "severity", gp_severity_name(s[i].severity));
        gp__jw_kv_int(&w, "gpu", s[i].device);
        gp__jw_kv_str(&w, "message", s[i].message);
        gp__jw_kv_str(&w, "suggestion", s[i].suggestion);
        gp__jw_kv_str(&w, "evidence", s[i].evidence);
        gp__jw_obj_end(&w);
    }
    gp__jw_arr_end(&w);
    gp__jw_obj_end(&w);
    (void)gp__jw_take_line(&w, fp); /* the caller checks the stream */
}

const char *gp_monitor_process_type_text(uint32_t types)
{
    static const char *const names[8] = {"-",   "compute",     "graphics",     "compute+graphics",
                                         "mps", "compute+mps", "graphics+mps", "all"};
    return names[types & 7u];
}

void gp_monitor_process_table(FILE *fp, const gp_process_row *r, size_t n)
{
    if (n == 0)
        return;
    fprintf(fp, "# gpu     pid user         type      fb_MiB  sm%%  cpu%% rss_MiB command\n");
    for (size_t i = 0; i < n; i++) {
        char mem[24] = "-", sm[16] = "-", cpu[16] = "-", rss[24] = "-";
        if (r[i].p.mem_bytes >= 0)
            snprintf(mem, sizeof mem, "%.0f", r[i].p.mem_bytes / GP_MIB);
        if (r[i].p.sm_util >= 0)
            snprintf(sm, sizeof sm, "%d", r[i].p.sm_util);
        if (!isnan(r[i].host.cpu_percent))
            snprintf(cpu, sizeof cpu, "%.1f", r[i].host.cpu_percent);
        if (r[i].host.rss_bytes >= 0)
            snprintf(rss, sizeof rss, "%.0f", r[i].host.rss_bytes / GP_MIB);
        fprintf(fp, "  p %3u %7u %-12.12s %-8.8s %7s %4s %5s %7s %s\n", r[i].gpu, r[i].p.pid,
                r[i].host.user[0] ? r[i].host.user : "-",
                gp_monitor_process_type_text(r[i].p.types), mem, sm, cpu, rss,
                r[i].host.command[0] ? r[i].host.command : "-");
    }
}

void gp_monitor_process_csv_header(FILE *fp)
{
    fprintf(fp, "ts_ns,gpu,pid,user,type,gpu_mem_bytes,sm_util,mem_util,cpu_percent,rss_bytes,"
                "command\n");
}

static void csv_quoted(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', fp);
        fputc(*s, fp);
    }
    fputc('"', fp);
}

void gp_monitor_process_csv_rows(FILE *fp, gp_ns ts, const gp_process_row *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fprintf(fp, "%lld,%u,%u,", (long long)ts, r[i].gpu, r[i].p.pid);
        csv_quoted(fp, r[i].host.user);
        fprintf(fp, ",%s,", gp_monitor_process_type_text(r[i].p.types));
        if (r[i].p.mem_bytes >= 0)
            fprintf(fp, "%lld", (long long)r[i].p.mem_bytes);
        fputc(',', fp);
        if (r[i].p.sm_util >= 0)
            fprintf(fp, "%d", r[i].p.sm_util);
        fputc(',', fp);
        if (r[i].p.mem_util >= 0)
            fprintf(fp, "%d", r[i].p.mem_util);
        fputc(',', fp);
        if (!isnan(r[i].host.cpu_percent))
            fprintf(fp, "%.2f", r[i].host.cpu_percent);
        fputc(',', fp);
        if (r[i].host.rss_bytes >= 0)
            fprintf(fp, "%lld", (long long)r[i].host.rss_bytes);
        fputc(',', fp);
        csv_quoted(fp, r[i].host.command);
        fputc('\n', fp);
    }
}

static void kv_int_or_null(gp__jw *w, const char *k, int64_t v)
{
    if (v >= 0)
        gp__jw_kv_int(w, k, v);
    else {
        gp__jw_key(w, k);
        gp__jw_null(w);
    }
}

void gp_monitor_process_write_json(FILE *fp, gp_ns ts, const gp_process_row *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        gp__jw w;
        gp__jw_init(&w, NULL);
        gp__jw_obj_begin(&w);
        gp__jw_kv_str(&w, "type", "process");
        gp__jw_kv_int(&w, "ts_ns", ts);
        gp__jw_kv_int(&w, "gpu", r[i].gpu);
        gp__jw_kv_int(&w, "pid", r[i].p.pid);
        gp__jw_kv_str(&w, "user", r[i].host.user);
        gp__jw_kv_str(&w, "process_type", gp_monitor_process_type_text(r[i].p.types));
        kv_int_or_null(&w, "gpu_mem_bytes", r[i].p.mem_bytes);
        kv_int_or_null(&w, "sm_util", r[i].p.sm_util);
        kv_int_or_null(&w, "mem_util", r[i].p.mem_util);
        if (!isnan(r[i].host.cpu_percent))
            gp__jw_kv_double(&w, "cpu_percent", r[i].host.cpu_percent);
        else {
            gp__jw_key(&w, "cpu_percent");
            gp__jw_null(&w);
        }
        kv_int_or_null(&w, "rss_bytes", r[i].host.rss_bytes);
        gp__jw_kv_str(&w, "command", r[i].host.command);
        gp__jw_obj_end(&w);
        (void)gp__jw_take_line(&w, fp); /* the caller checks the stream */
    }
}
