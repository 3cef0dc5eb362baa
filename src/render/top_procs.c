/* gpuprof top: the process table (render/top.h): which rows the view shows, in its order, and how
 * they are drawn. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/msort.h"
#include "core/units.h"
#include "core/util.h"
#include "render/monitor_text.h"
#include "render/top.h"

static const char *const col_names[GP_TOP_COL_COUNT] = {"PID", "USER", "GPU", "TYPE",   "GPU MEM",
                                                        "SM%", "CPU%", "RSS", "COMMAND"};

const char *gp_top_col_name(gp_top_col c)
{
    return (unsigned)c < GP_TOP_COL_COUNT ? col_names[c] : "?";
}

void gp_top_view_init(gp_top_view *v)
{
    *v = (gp_top_view){.sort = GP_TOP_COL_MEM, .gpu = -1};
}

static bool matches(const gp_process_row *r, const char *filter)
{
    if (!filter[0])
        return true;
    char pid[16];
    snprintf(pid, sizeof pid, "%u", r->p.pid);
    return strcasestr(r->host.command, filter) || strcasestr(r->host.user, filter) ||
           strstr(pid, filter) || strcasestr(gp_monitor_process_type_text(r->p.types), filter);
}

typedef struct sort_item {
    const gp_process_row *r;
    size_t idx;
    gp_top_col col;
    bool asc;
} sort_item;

/* Unknown figures sort below every known one, whatever the direction. */
static int cmp_num(double a, double b, bool asc)
{
    if (isnan(a) || isnan(b))
        return isnan(a) ? (isnan(b) ? 0 : 1) : -1;
    if (a == b)
        return 0;
    return (a < b) == asc ? -1 : 1;
}

static double num_of(const gp_process_row *r, gp_top_col c)
{
    switch (c) {
    case GP_TOP_COL_PID:
        return r->p.pid;
    case GP_TOP_COL_GPU:
        return r->gpu;
    case GP_TOP_COL_MEM:
        return r->p.mem_bytes >= 0 ? (double)r->p.mem_bytes : NAN;
    case GP_TOP_COL_SM:
        return r->p.sm_util >= 0 ? r->p.sm_util : NAN;
    case GP_TOP_COL_CPU:
        return r->host.cpu_percent;
    default: /* GP_TOP_COL_RSS */
        return r->host.rss_bytes >= 0 ? (double)r->host.rss_bytes : NAN;
    }
}

static int cmp_item(const void *pa, const void *pb)
{
    const sort_item *a = pa, *b = pb;
    int c;
    if (a->col == GP_TOP_COL_USER || a->col == GP_TOP_COL_CMD || a->col == GP_TOP_COL_TYPE) {
        const char *x = a->col == GP_TOP_COL_USER  ? a->r->host.user
                        : a->col == GP_TOP_COL_CMD ? a->r->host.command
                                                   : gp_monitor_process_type_text(a->r->p.types);
        const char *y = a->col == GP_TOP_COL_USER  ? b->r->host.user
                        : a->col == GP_TOP_COL_CMD ? b->r->host.command
                                                   : gp_monitor_process_type_text(b->r->p.types);
        c = strcmp(x, y);
        c = a->asc ? c : -c;
    } else {
        c = cmp_num(num_of(a->r, a->col), num_of(b->r, a->col), a->asc);
    }
    if (c == 0)
        c = a->r->p.pid < b->r->p.pid ? -1 : a->r->p.pid > b->r->p.pid ? 1 : 0;
    if (c == 0)
        c = a->r->gpu < b->r->gpu ? -1 : a->r->gpu > b->r->gpu ? 1 : 0;
    return c;
}

size_t gp_top_rows(const gp_top_frame *f, const gp_top_view *v, size_t *idx, size_t max)
{
    sort_item items[1024];
    size_t n = 0;
    for (size_t i = 0; i < f->n_procs && n < GP_ARRAY_LEN(items); i++) {
        const gp_process_row *r = &f->procs[i];
        if ((v->gpu >= 0 && r->gpu != (uint32_t)v->gpu) || !matches(r, v->filter))
            continue;
        items[n++] = (sort_item){.r = r, .idx = i, .col = v->sort, .asc = v->ascending};
    }
    gp__msort_in_place(items, n, sizeof *items, cmp_item);
    size_t k = GP_MIN(n, max);
    for (size_t i = 0; i < k; i++)
        idx[i] = items[i].idx;
    return k;
}

static void fmt_mib(char *buf, size_t cap, double bytes)
{
    if (isnan(bytes) || bytes < 0)
        snprintf(buf, cap, "n/a");
    else
        snprintf(buf, cap, "%.0fMiB", bytes / GP_MIB);
}

static void draw_row(gp_top_screen *scr, int y, const gp_process_row *r, bool sel)
{
    char mem[24], rss[24], sm[12] = "n/a", cpu[12] = "n/a";
    fmt_mib(mem, sizeof mem, r->p.mem_bytes >= 0 ? (double)r->p.mem_bytes : NAN);
    fmt_mib(rss, sizeof rss, r->host.rss_bytes >= 0 ? (double)r->host.rss_bytes : NAN);
    if (r->p.sm_util >= 0)
        snprintf(sm, sizeof sm, "%d", r->p.sm_util);
    if (!isnan(r->host.cpu_percent))
        snprintf(cpu, sizeof cpu, "%.1f", r->host.cpu_percent);
    uint8_t cls = sel ? GP_TOP_C_SELECT : GP_TOP_C_NORMAL;
    if (sel)
        gp_top_printf(scr, 0, y, -1, cls, "%*s", scr->w, "");
    gp_top_printf(scr, 0, y, -1, cls, "%7u %-9.9s %3u %-8.8s %9s %4s %5s %8s %s", r->p.pid,
                  r->host.user[0] ? r->host.user : "n/a", r->gpu,
                  gp_monitor_process_type_text(r->p.types), mem, sm, cpu, rss,
                  r->host.command[0] ? r->host.command : "n/a");
}

void gp_top_draw_procs(gp_top_screen *scr, int y, int h, const gp_top_frame *f, gp_top_view *v)
{
    if (h < 1)
        return;
    static const int col_x[GP_TOP_COL_COUNT] = {0, 8, 18, 22, 31, 41, 46, 52, 61};
    static const int col_w[GP_TOP_COL_COUNT] = {7, 9, 3, 8, 9, 4, 5, 8, 7};
    gp_top_printf(scr, 0, y, -1, GP_TOP_C_TITLE, "%*s", scr->w, "");
    gp_top_printf(scr, 0, y, -1, GP_TOP_C_TITLE, "%7s %-9s %3s %-8s %9s %4s %5s %8s %s", "PID",
                  "USER", "GPU", "TYPE", "GPU MEM", "SM%", "CPU%", "RSS", "COMMAND");
    /* the sort column's heading carries the direction */
    int sx = col_x[v->sort] + col_w[v->sort];
    gp_top_put(scr, sx < scr->w ? sx : scr->w - 1, y, 1, GP_TOP_C_TITLE, v->ascending ? "▲" : "▼");
    size_t idx[1024];
    size_t n = gp_top_rows(f, v, idx, GP_ARRAY_LEN(idx));
    if (n == 0) {
        gp_top_put(scr, 1, y + 1, -1, GP_TOP_C_DIM,
                   f->n_procs ? "no process matches the filter" : "no process on the GPUs");
        v->selected = 0;
        return;
    }
    if (v->selected >= n)
        v->selected = n - 1;
    size_t rows = (size_t)(h - 1);
    size_t first = v->selected >= rows ? v->selected - rows + 1 : 0;
    for (size_t k = 0; k < rows && first + k < n; k++)
        draw_row(scr, y + 1 + (int)k, &f->procs[idx[first + k]], first + k == v->selected);
    if (n > first + rows)
        gp_top_printf(scr, scr->w - 12, y + h - 1, 12, GP_TOP_C_DIM, " +%zu more ",
                      n - first - rows);
}
