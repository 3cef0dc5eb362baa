/* gpuprof top: the terminal through ncurses (render/top.h). Built without ncurses, every call says
 * so (gp_top_term_available false, gp_top_term_open GP_ENOTSUP). */
#include "render/top.h"

#ifdef GP_HAVE_NCURSES
#include <curses.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>

static bool open_now;
/* The grid last shown: only cells that differ from it are handed to ncurses. */
static gp_top_cell *shown;
static int shown_w, shown_h;

static bool mono_now;

bool gp_top_term_available(void)
{
    return true;
}

gp_status gp_top_term_open(bool mono)
{
    setlocale(LC_ALL, "");
    if (!initscr())
        return GP_EEXTERNAL;
    open_now = true;
    mono_now = mono || !has_colors();
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    curs_set(0);
    set_escdelay(25);
    if (!mono_now) {
        start_color();
        use_default_colors();
        init_pair(GP_TOP_C_TITLE, COLOR_BLACK, COLOR_CYAN);
        init_pair(GP_TOP_C_OK, COLOR_GREEN, -1);
        init_pair(GP_TOP_C_WARN, COLOR_YELLOW, -1);
        init_pair(GP_TOP_C_CRIT, COLOR_RED, -1);
        init_pair(GP_TOP_C_DIM, COLOR_BLUE, -1);
        init_pair(GP_TOP_C_SELECT, COLOR_BLACK, COLOR_WHITE);
    }
    return GP_OK;
}

void gp_top_term_close(void)
{
    if (!open_now)
        return;
    open_now = false;
    free(shown);
    shown = NULL;
    shown_w = shown_h = 0;
    curs_set(1);
    endwin();
}

void gp_top_term_size(int *w, int *h)
{
    getmaxyx(stdscr, *h, *w);
}

static attr_t attr_of(uint8_t cls)
{
    if (mono_now) {
        if (cls == GP_TOP_C_TITLE || cls == GP_TOP_C_SELECT)
            return A_REVERSE;
        return cls == GP_TOP_C_CRIT || cls == GP_TOP_C_WARN ? A_BOLD : A_NORMAL;
    }
    return cls == GP_TOP_C_NORMAL ? A_NORMAL : (attr_t)COLOR_PAIR(cls);
}

void gp_top_term_show(const gp_top_screen *scr)
{
    int w, h;
    getmaxyx(stdscr, h, w);
    size_t n = (size_t)scr->w * (size_t)scr->h;
    bool same = shown && shown_w == scr->w && shown_h == scr->h;
    if (!same) {
        free(shown);
        shown = calloc(n, sizeof *shown);
        shown_w = shown ? scr->w : 0;
        shown_h = shown ? scr->h : 0;
        clear(); /* a new size: everything is drawn */
    }
    for (int y = 0; y < scr->h && y < h; y++) {
        for (int x = 0; x < scr->w && x < w; x++) {
            size_t i = (size_t)y * (size_t)scr->w + (size_t)x;
            const gp_top_cell *c = &scr->cells[i];
            if (same && memcmp(c, &shown[i], sizeof *c) == 0)
                continue;
            /* the bottom-right cell would scroll the screen: skip it */
            if (y == h - 1 && x == w - 1)
                continue;
            attrset(attr_of(c->cls));
            mvaddstr(y, x, c->ch[0] ? c->ch : " ");
        }
    }
    if (shown)
        memcpy(shown, scr->cells, n * sizeof *shown);
    attrset(A_NORMAL);
    refresh();
}

int gp_top_term_key(int timeout_ms)
{
    timeout(timeout_ms);
    int c = getch();
    switch (c) {
    case ERR:
        return GP_TOP_KEY_NONE;
    case KEY_UP:
        return GP_TOP_KEY_UP;
    case KEY_DOWN:
        return GP_TOP_KEY_DOWN;
    case KEY_PPAGE:
        return GP_TOP_KEY_PGUP;
    case KEY_NPAGE:
        return GP_TOP_KEY_PGDN;
    case KEY_HOME:
        return GP_TOP_KEY_HOME;
    case KEY_END:
        return GP_TOP_KEY_END;
    case KEY_F(1):
        return GP_TOP_KEY_F1;
    case KEY_F(6):
        return GP_TOP_KEY_F6;
    case KEY_RESIZE:
        return GP_TOP_KEY_RESIZE;
    case KEY_BACKSPACE:
    case 127:
    case 8:
        return GP_TOP_KEY_BACKSPACE;
    case KEY_ENTER:
    case '\r':
    case '\n':
        return GP_TOP_KEY_ENTER;
    case 27:
        return GP_TOP_KEY_ESC;
    default:
        return c >= 0 && c < 0x100 ? c : GP_TOP_KEY_NONE;
    }
}

#else /* !GP_HAVE_NCURSES */

bool gp_top_term_available(void)
{
    return false;
}

gp_status gp_top_term_open(bool mono)
{
    (void)mono;
    return GP_ENOTSUP;
}

void gp_top_term_close(void)
{
}

void gp_top_term_size(int *w, int *h)
{
    *w = 80;
    *h = 24;
}

void gp_top_term_show(const gp_top_screen *scr)
{
    (void)scr;
}

int gp_top_term_key(int timeout_ms)
{
    (void)timeout_ms;
    return GP_TOP_KEY_NONE;
}

#endif
