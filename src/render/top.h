/* gpuprof top: the live terminal view's renderer. The app gathers a gp_top_frame from the monitor
 * (samples, history, processes, events, detectors); gp_top_draw lays it out on a character grid
 * (gp_top_screen) for a view state (sort, filter, selection); the grid is then either written as
 * text (--once, tests) or shown through ncurses (top_curses.c). Formats; computes nothing but the
 * order and the filter of the process rows it shows. */
#ifndef GP_RENDER_TOP_H
#define GP_RENDER_TOP_H

#include <stdbool.h>
#include <stdio.h>

#include "gpuprof/monitor.h"

/* Colour classes of a cell (ncurses pairs; --mono maps them to bold/reverse or nothing). */
enum {
    GP_TOP_C_NORMAL = 0,
    GP_TOP_C_TITLE,  /* header, footer, table heading */
    GP_TOP_C_OK,     /* graphs and bars below 60 % */
    GP_TOP_C_WARN,   /* 60-85 %, warnings */
    GP_TOP_C_CRIT,   /* above 85 %, critical events, a lost GPU */
    GP_TOP_C_DIM,    /* n/a, labels */
    GP_TOP_C_SELECT, /* the selected process row */
    GP_TOP_C_COUNT
};

typedef struct gp_top_cell {
    char ch[5];  /* one UTF-8 character, NUL-terminated ("" is a blank) */
    uint8_t cls; /* GP_TOP_C_* */
} gp_top_cell;

typedef struct gp_top_screen {
    int w, h;
    gp_top_cell *cells; /* w * h, row-major */
} gp_top_screen;

/* The process table's columns (sort keys). */
typedef enum gp_top_col {
    GP_TOP_COL_PID = 0,
    GP_TOP_COL_USER,
    GP_TOP_COL_GPU,
    GP_TOP_COL_TYPE,
    GP_TOP_COL_MEM,
    GP_TOP_COL_SM,
    GP_TOP_COL_CPU,
    GP_TOP_COL_RSS,
    GP_TOP_COL_CMD,
    GP_TOP_COL_COUNT
} gp_top_col;

/* Column heading ("PID", "GPU MEM", ...). */
const char *gp_top_col_name(gp_top_col c);

/* What the user chose: kept by the app between frames. */
typedef struct gp_top_view {
    gp_top_col sort; /* default GP_TOP_COL_MEM */
    bool ascending;  /* default false (largest first) */
    char filter[64]; /* rows whose pid, user, type or command contain it ("" = all) */
    bool editing;    /* the filter is being typed (the footer shows the prompt) */
    size_t selected; /* index into the shown rows */
    int gpu;         /* -1: all GPUs; else only this GPU's panel and processes */
    bool paused;
    bool help;
    char message[96]; /* one line for the footer ("" = the key hints) */
} gp_top_view;

void gp_top_view_init(gp_top_view *v);

#define GP_TOP_HISTORY 512 /* graph points kept per GPU */

/* One GPU: identity, latest sample, history (oldest first) and the detectors' verdicts. */
typedef struct gp_top_gpu {
    gp_gpu_ident id;
    gp_gpu_sample s;
    bool have;                  /* s holds a sample */
    float util[GP_TOP_HISTORY]; /* util_gpu percent, NaN where the sample had none */
    float mem[GP_TOP_HISTORY];  /* memory used percent of total, NaN where unknown */
    size_t n_hist;
    gp_leak_result leak;
    gp_bottleneck bn;
    uint64_t xid_total;
} gp_top_gpu;

typedef struct gp_top_frame {
    const gp_top_gpu *gpus;
    size_t n_gpus;
    const gp_process_row *procs;
    size_t n_procs;
    const gp_monitor_event *events; /* oldest first */
    size_t n_events;
    gp_monitor_health health;
    uint32_t interval_ms;
} gp_top_frame;

/* A w x h grid of blanks; GP_ENOMEM, GP_EINVAL when w or h < 1. */
gp_status gp_top_screen_init(gp_top_screen *scr, int w, int h);
void gp_top_screen_free(gp_top_screen *scr);
/* Fills the grid with blanks. */
void gp_top_screen_clear(gp_top_screen *scr);
/* Writes text at (x, y) clipped to the grid and to at most max columns (-1: the grid's width);
 * UTF-8 characters take one column each. Returns the columns written. */
int gp_top_put(gp_top_screen *scr, int x, int y, int max, uint8_t cls, const char *text);
/* gp_top_put of a printf. */
int gp_top_printf(gp_top_screen *scr, int x, int y, int max, uint8_t cls, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* The grid as text: one line per row, trailing blanks removed. */
void gp_top_screen_write(const gp_top_screen *scr, FILE *fp);

/* Draws the whole frame for the view on scr (cleared first). Small grids (under 40x10) get one
 * line saying so. view->selected is clamped to the rows shown. */
void gp_top_draw(gp_top_screen *scr, const gp_top_frame *f, gp_top_view *view);

/* The indices of the process rows the view shows, in its order: up to max into idx; returns the
 * count (rows of other GPUs and rows not matching the filter are left out). */
size_t gp_top_rows(const gp_top_frame *f, const gp_top_view *v, size_t *idx, size_t max);
/* Draws the process table in rows [y, y + h) (a heading line, then rows). */
void gp_top_draw_procs(gp_top_screen *scr, int y, int h, const gp_top_frame *f, gp_top_view *v);
/* Draws a block graph of values (percent, NaN = gap) in the box (x, y, w, h), newest at the right.
 */
void gp_top_graph(gp_top_screen *scr, int x, int y, int w, int h, const float *v, size_t n);

/* ---- the terminal (ncurses; absent builds say so) -------------------------------------- */

/* Keys the view understands, from ncurses codes. */
enum {
    GP_TOP_KEY_NONE = 0,
    GP_TOP_KEY_UP = 0x101,
    GP_TOP_KEY_DOWN,
    GP_TOP_KEY_PGUP,
    GP_TOP_KEY_PGDN,
    GP_TOP_KEY_HOME,
    GP_TOP_KEY_END,
    GP_TOP_KEY_F1,
    GP_TOP_KEY_F6,
    GP_TOP_KEY_RESIZE,
    GP_TOP_KEY_BACKSPACE,
    GP_TOP_KEY_ENTER,
    GP_TOP_KEY_ESC
};

/* True when this build has the terminal view (ncurses was found at build time). */
bool gp_top_term_available(void);
/* Enters the full-screen mode (ncurses initscr, colours unless mono, no echo, keypad, cursor
 * hidden). GP_ENOTSUP without ncurses, GP_EEXTERNAL when the terminal cannot be set up. */
gp_status gp_top_term_open(bool mono);
/* Leaves it and restores the terminal; safe to call twice. */
void gp_top_term_close(void);
/* The terminal's size now. */
void gp_top_term_size(int *w, int *h);
/* Shows the grid (only the changed cells reach the terminal). */
void gp_top_term_show(const gp_top_screen *scr);
/* Waits up to timeout_ms for a key: a printable byte, a GP_TOP_KEY_*, or GP_TOP_KEY_NONE. */
int gp_top_term_key(int timeout_ms);

#endif
