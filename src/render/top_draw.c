/* gpuprof top: the layout of one frame (render/top.h): header, GPU panels (full with graphs, or a
 * line each when rows are short), the process table, the events pane, the footer, the help. */
#include <math.h>
#include <string.h>

#include "core/units.h"
#include "render/top.h"

/* A metric as text, "n/a" when the sample does not have it. */
static const char *fig(char *buf, size_t cap, const gp_gpu_sample *s, gp_metric m, double scale,
                       const char *unit)
{
    if (!gp_sample_has(s, m))
        snprintf(buf, cap, "n/a");
    else
        snprintf(buf, cap, "%.0f%s", s->v[m] * scale, unit);
    return buf;
}

static const char *throttle_words(const gp_gpu_sample *s)
{
    if (!gp_sample_has(s, GP_M_THROTTLE))
        return "n/a";
    uint64_t b = (uint64_t)s->v[GP_M_THROTTLE];
    if (b & GP_THROTTLE_HW_THERMAL)
        return "HW-THERMAL";
    if (b & GP_THROTTLE_SW_THERMAL)
        return "SW-THERMAL";
    if (b & GP_THROTTLE_POWER_BRAKE)
        return "POWER-BRAKE";
    if (b & GP_THROTTLE_SW_POWER_CAP)
        return "POWER-CAP";
    if (b & GP_THROTTLE_HW_SLOWDOWN)
        return "HW-SLOWDOWN";
    if (b & GP_THROTTLE_IDLE)
        return "idle";
    return b ? "other" : "none";
}

static bool throttled(const gp_gpu_sample *s)
{
    return gp_sample_has(s, GP_M_THROTTLE) && ((uint64_t)s->v[GP_M_THROTTLE] & ~1ull & 0xFF);
}

static double mem_pct(const gp_gpu_sample *s)
{
    if (!gp_sample_has(s, GP_M_MEM_USED) || !gp_sample_has(s, GP_M_MEM_TOTAL) ||
        s->v[GP_M_MEM_TOTAL] <= 0)
        return NAN;
    return 100.0 * s->v[GP_M_MEM_USED] / s->v[GP_M_MEM_TOTAL];
}

static uint8_t pct_cls(double p)
{
    return isnan(p)  ? GP_TOP_C_DIM
           : p >= 85 ? GP_TOP_C_CRIT
           : p >= 60 ? GP_TOP_C_WARN
                     : GP_TOP_C_OK;
}

static void draw_header(gp_top_screen *scr, const gp_top_frame *f, const gp_top_view *v)
{
    gp_top_printf(scr, 0, 0, -1, GP_TOP_C_TITLE, "%*s", scr->w, "");
    int x = gp_top_printf(scr, 0, 0, -1, GP_TOP_C_TITLE,
                          "gpuprof top  %zu GPU%s  driver %s  every %.1fs  health %s", f->n_gpus,
                          f->n_gpus == 1 ? "" : "s",
                          f->health.driver_version[0] ? f->health.driver_version : "n/a",
                          f->interval_ms / 1000.0, gp_health_status_name(f->health.status));
    if (v->filter[0])
        x += gp_top_printf(scr, x, 0, -1, GP_TOP_C_TITLE, "  filter \"%s\"", v->filter);
    if (v->gpu >= 0)
        x += gp_top_printf(scr, x, 0, -1, GP_TOP_C_TITLE, "  GPU %d only", v->gpu);
    if (v->paused)
        gp_top_put(scr, x, 0, -1, GP_TOP_C_WARN, "  PAUSED");
}

/* The detectors' words for a GPU: bottleneck class, leak trend, XIDs. */
static void verdicts(char *buf, size_t cap, const gp_top_gpu *g)
{
    int n = snprintf(buf, cap, "%s", gp_bottleneck_name(g->bn.kind));
    if (g->leak.ready && g->leak.leak && n >= 0 && (size_t)n < cap)
        n += snprintf(buf + n, cap - (size_t)n, "  LEAK %+.0f MiB/h", g->leak.slope_mb_per_h);
    if (g->xid_total && n >= 0 && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n, "  XID x%llu", (unsigned long long)g->xid_total);
}

/* The name without the vendor's word, for narrow columns. */
static const char *short_name(const char *name)
{
    return strncmp(name, "NVIDIA ", 7) == 0 ? name + 7 : name;
}

static void fmt_power(char *buf, size_t cap, const gp_gpu_sample *s)
{
    char p[16] = "n/a", l[16] = "n/a";
    if (gp_sample_has(s, GP_M_POWER))
        snprintf(p, sizeof p, "%.0f", s->v[GP_M_POWER]);
    if (gp_sample_has(s, GP_M_POWER_LIMIT))
        snprintf(l, sizeof l, "%.0f", s->v[GP_M_POWER_LIMIT]);
    snprintf(buf, cap, "%s/%sW", p, l);
}

#define LINE_FIXED 65 /* the columns of a GPU line besides its graph */

static void draw_gpu_heading(gp_top_screen *scr, int y)
{
    int gw = scr->w - LINE_FIXED;
    gp_top_printf(scr, 0, y, -1, GP_TOP_C_DIM,
                  "GPU NAME     UTIL %-*.*s %4s %5s %4s %8s %7s %4s %s", gw > 0 ? gw : 0,
                  gw > 0 ? gw : 0, "HISTORY", "MEM", "USED", "TEMP", "POWER", "SM CLK", "FAN",
                  "THROTTLE");
}

/* One line per GPU (short screens). */
static void draw_gpu_line(gp_top_screen *scr, int y, const gp_top_gpu *g)
{
    const gp_gpu_sample *s = &g->s;
    int x = gp_top_printf(scr, 0, y, -1, GP_TOP_C_TITLE, "%3u", g->id.index);
    x += gp_top_printf(scr, x, y, -1, GP_TOP_C_NORMAL, " %-8.8s ", short_name(g->id.name));
    if (g->id.lost || !g->have) {
        gp_top_put(scr, x, y, -1, g->id.lost ? GP_TOP_C_CRIT : GP_TOP_C_DIM,
                   g->id.lost ? "GPU LOST: no longer sampled" : "no sample yet");
        return;
    }
    char a[24], m[24], t[24], p[24], c[24], fan[24], mps[16] = "n/a";
    double up = gp_sample_has(s, GP_M_UTIL_GPU) ? s->v[GP_M_UTIL_GPU] : NAN;
    x += gp_top_printf(scr, x, y, -1, pct_cls(up), "%4s ",
                       fig(a, sizeof a, s, GP_M_UTIL_GPU, 1, "%"));
    int gw = scr->w - LINE_FIXED;
    if (gw > 0) {
        gp_top_graph(scr, x, y, gw, 1, g->util, g->n_hist);
        x += gw;
    }
    double mp = mem_pct(s);
    if (!isnan(mp))
        snprintf(mps, sizeof mps, "%.0f%%", mp);
    x += gp_top_printf(scr, x, y, -1, pct_cls(mp), " %4s %5s", mps,
                       fig(m, sizeof m, s, GP_M_MEM_USED, 1.0 / GP_GIB, "G"));
    fmt_power(p, sizeof p, s);
    x += gp_top_printf(scr, x, y, -1, GP_TOP_C_NORMAL, " %4s %8s %7s %4s ",
                       fig(t, sizeof t, s, GP_M_TEMP, 1, "C"), p,
                       fig(c, sizeof c, s, GP_M_CLOCK_SM, 1e-6, "MHz"),
                       fig(fan, sizeof fan, s, GP_M_FAN, 1, "%"));
    gp_top_printf(scr, x, y, -1, throttled(s) ? GP_TOP_C_WARN : GP_TOP_C_NORMAL, "%.8s",
                  throttle_words(s));
}

/* PCIe figure in MB/s, "n/a" when absent. */
static const char *pcie(char *buf, size_t cap, const gp_gpu_sample *s, gp_metric m)
{
    if (!gp_sample_has(s, m))
        return snprintf(buf, cap, "n/a"), buf;
    if (s->v[m] >= 1e9)
        snprintf(buf, cap, "%.1fGB/s", s->v[m] / 1e9);
    else
        snprintf(buf, cap, "%.0fMB/s", s->v[m] / 1e6);
    return buf;
}

/* The full panel: 3 lines of figures, then util and memory graphs of gh rows. */
static void draw_gpu_panel(gp_top_screen *scr, int x0, int pw, int y, int gh, const gp_top_gpu *g)
{
    const gp_gpu_sample *s = &g->s;
    char vb[160];
    verdicts(vb, sizeof vb, g);
    int x = gp_top_printf(scr, x0, y, pw, GP_TOP_C_TITLE, "GPU %u  %s  %s", g->id.index, g->id.name,
                          g->id.pci_bus_id);
    if (g->id.lost || !g->have) {
        gp_top_printf(scr, x0 + x, y, pw - x, g->id.lost ? GP_TOP_C_CRIT : GP_TOP_C_DIM, "  %s",
                      g->id.lost ? "GPU LOST: no longer sampled (GPU_IS_LOST)" : "no sample yet");
        return;
    }
    gp_top_printf(scr, x0 + x, y, pw - x,
                  g->leak.leak || g->xid_total ? GP_TOP_C_CRIT : GP_TOP_C_DIM, "  [%s]", vb);
    char a[24], mu[24], mt[24], t[24], p[24], pl[24], fan[24], sc[24], mc[24], rx[24], tx[24];
    double up = gp_sample_has(s, GP_M_UTIL_GPU) ? s->v[GP_M_UTIL_GPU] : NAN;
    double mp = mem_pct(s);
    x = gp_top_printf(scr, x0 + 1, y + 1, pw - 1, pct_cls(up), "util %4s",
                      fig(a, sizeof a, s, GP_M_UTIL_GPU, 1, "%"));
    x += gp_top_printf(scr, x0 + 1 + x, y + 1, pw - 1 - x, pct_cls(mp), "  mem %s/%s",
                       fig(mu, sizeof mu, s, GP_M_MEM_USED, 1.0 / GP_MIB, ""),
                       fig(mt, sizeof mt, s, GP_M_MEM_TOTAL, 1.0 / GP_MIB, " MiB"));
    gp_top_printf(
        scr, x0 + 1 + x, y + 1, pw - 1 - x, GP_TOP_C_NORMAL, "  temp %s  power %s/%s  fan %s",
        fig(t, sizeof t, s, GP_M_TEMP, 1, "C"), fig(p, sizeof p, s, GP_M_POWER, 1, "W"),
        fig(pl, sizeof pl, s, GP_M_POWER_LIMIT, 1, "W"), fig(fan, sizeof fan, s, GP_M_FAN, 1, "%"));
    x = gp_top_printf(scr, x0 + 1, y + 2, pw - 1, GP_TOP_C_NORMAL,
                      "clocks sm %s mem %s  pcie rx %s tx %s  ",
                      fig(sc, sizeof sc, s, GP_M_CLOCK_SM, 1e-6, "MHz"),
                      fig(mc, sizeof mc, s, GP_M_CLOCK_MEM, 1e-6, "MHz"),
                      pcie(rx, sizeof rx, s, GP_M_PCIE_RX), pcie(tx, sizeof tx, s, GP_M_PCIE_TX));
    gp_top_printf(scr, x0 + 1 + x, y + 2, pw - 1 - x,
                  throttled(s) ? GP_TOP_C_WARN : GP_TOP_C_NORMAL, "throttle %s", throttle_words(s));
    if (gh < 1)
        return;
    int half = (pw - 3) / 2;
    gp_top_put(scr, x0 + 1, y + 3, 5, GP_TOP_C_DIM, "util");
    gp_top_graph(scr, x0 + 6, y + 3, half - 6, gh, g->util, g->n_hist);
    gp_top_put(scr, x0 + half + 2, y + 3, 4, GP_TOP_C_DIM, "mem");
    gp_top_graph(scr, x0 + half + 6, y + 3, pw - half - 7, gh, g->mem, g->n_hist);
}

static void draw_events(gp_top_screen *scr, int y, int h, const gp_top_frame *f)
{
    gp_top_printf(scr, 0, y, -1, GP_TOP_C_TITLE, "%*s", scr->w, "");
    gp_top_printf(scr, 0, y, -1, GP_TOP_C_TITLE, "EVENTS (%zu)", f->n_events);
    size_t rows = (size_t)(h - 1);
    size_t first = f->n_events > rows ? f->n_events - rows : 0;
    for (size_t i = first; i < f->n_events; i++) {
        const gp_monitor_event *e = &f->events[i];
        uint8_t cls = e->severity == GP_SEV_CRITICAL  ? GP_TOP_C_CRIT
                      : e->severity == GP_SEV_WARNING ? GP_TOP_C_WARN
                                                      : GP_TOP_C_DIM;
        char who[16] = "   ";
        if (e->device >= 0)
            snprintf(who, sizeof who, "gpu%d", e->device);
        gp_top_printf(scr, 0, y + 1 + (int)(i - first), -1, cls, "%-5s %-8s %-10s %s", who,
                      gp_severity_name(e->severity), gp_monitor_event_type_name(e->type),
                      e->message);
    }
}

static void draw_footer(gp_top_screen *scr, const gp_top_view *v)
{
    int y = scr->h - 1;
    gp_top_printf(scr, 0, y, -1, GP_TOP_C_TITLE, "%*s", scr->w, "");
    if (v->editing)
        gp_top_printf(scr, 0, y, -1, GP_TOP_C_TITLE, "filter: %s_  (Enter keeps, Esc clears)",
                      v->filter);
    else if (v->message[0])
        gp_top_put(scr, 0, y, -1, GP_TOP_C_TITLE, v->message);
    else
        gp_top_put(scr, 0, y, -1, GP_TOP_C_TITLE,
                   "q quit  j/k select  s sort  S reverse  / filter  g GPU  space pause  h help");
}

static const char *const help_lines[] = {
    "gpuprof top: keys",
    "",
    "  up/down, j/k   select a process      PgUp/PgDn, Home/End",
    "  s, F6          sort by the next column (S: reverse the order)",
    "  /              filter processes by text (pid, user, type, command)",
    "  g              show one GPU, then the next; all GPUs after the last",
    "  space          pause (the monitor keeps sampling and detecting)",
    "  h, F1, ?       this help (any key closes it)",
    "  q, Ctrl-C      quit and restore the terminal",
    "",
    "  n/a: the driver does not report that figure on this GPU (never 0)",
};

static void draw_help(gp_top_screen *scr)
{
    int n = (int)(sizeof help_lines / sizeof help_lines[0]);
    int w = 72 < scr->w - 2 ? 72 : scr->w - 2;
    int y0 = (scr->h - n - 2) / 2 > 1 ? (scr->h - n - 2) / 2 : 1;
    int x0 = (scr->w - w) / 2;
    for (int i = -1; i <= n && y0 + i + 1 < scr->h - 1; i++) {
        gp_top_printf(scr, x0, y0 + i + 1, w, GP_TOP_C_SELECT, "%*s", w, "");
        if (i >= 0 && i < n)
            gp_top_put(scr, x0 + 1, y0 + i + 1, w - 2, GP_TOP_C_SELECT, help_lines[i]);
    }
}

/* The GPUs the view shows (all, or the picked one). */
static size_t shown_gpus(const gp_top_frame *f, const gp_top_view *v, const gp_top_gpu **out,
                         size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < f->n_gpus && n < max; i++)
        if (v->gpu < 0 || f->gpus[i].id.index == (uint32_t)v->gpu)
            out[n++] = &f->gpus[i];
    return n;
}

void gp_top_draw(gp_top_screen *scr, const gp_top_frame *f, gp_top_view *v)
{
    gp_top_screen_clear(scr);
    if (scr->w < 40 || scr->h < 10) {
        gp_top_printf(scr, 0, 0, -1, GP_TOP_C_WARN, "terminal %dx%d: top needs 40x10", scr->w,
                      scr->h);
        return;
    }
    draw_header(scr, f, v);
    const gp_top_gpu *g[64];
    size_t ng = shown_gpus(f, v, g, 64);
    int rows = scr->h - 2;
    int ev_h = scr->h >= 40 ? 8 : scr->h >= 30 ? 6 : 4;
    /* the process table keeps a heading and 4 rows, or up to a third of the screen */
    int proc_min = (int)f->n_procs + 1 < rows / 3 ? (int)f->n_procs + 1 : rows / 3;
    int budget = rows - ev_h - (proc_min > 5 ? proc_min : 5);
    /* panels side by side when the screen is wide enough for two of 80 columns */
    int cols = scr->w >= 160 && ng > 1 ? 2 : 1;
    int prow = ng ? ((int)ng + cols - 1) / cols : 0;
    int per = prow ? budget / prow : 0;
    int y = 1, gh = per - 4 > 8 ? 8 : per - 4;
    if (gh >= 2 && scr->w >= 60) {
        int pw = scr->w / cols;
        for (size_t i = 0; i < ng; i++)
            draw_gpu_panel(scr, (int)(i % (size_t)cols) * pw, pw - (cols > 1),
                           y + (int)(i / (size_t)cols) * (gh + 4), gh, g[i]);
        y += prow * (gh + 4);
    } else {
        size_t fit = budget > (int)ng ? ng : (size_t)(budget > 2 ? budget - 2 : 0);
        draw_gpu_heading(scr, y++);
        for (size_t i = 0; i < fit; i++)
            draw_gpu_line(scr, y++, g[i]);
        if (fit < ng)
            gp_top_printf(scr, 0, y++, -1, GP_TOP_C_DIM, "   +%zu more GPUs: g shows one at a time",
                          ng - fit);
    }
    int proc_h = scr->h - 1 - ev_h - y;
    gp_top_draw_procs(scr, y, proc_h, f, v);
    draw_events(scr, y + proc_h, ev_h, f);
    draw_footer(scr, v);
    if (v->help)
        draw_help(scr);
}
