/* gpuprof top: the character grid (render/top.h): cells, clipped UTF-8 text, block graphs. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "render/top.h"

gp_status gp_top_screen_init(gp_top_screen *scr, int w, int h)
{
    *scr = (gp_top_screen){0};
    if (w < 1 || h < 1)
        return GP_EINVAL;
    scr->cells = calloc((size_t)w * (size_t)h, sizeof *scr->cells);
    if (!scr->cells)
        return GP_ENOMEM;
    scr->w = w;
    scr->h = h;
    return GP_OK;
}

void gp_top_screen_free(gp_top_screen *scr)
{
    free(scr->cells);
    *scr = (gp_top_screen){0};
}

void gp_top_screen_clear(gp_top_screen *scr)
{
    memset(scr->cells, 0, (size_t)scr->w * (size_t)scr->h * sizeof *scr->cells);
}

/* Length in bytes of the UTF-8 character starting with byte c (1 for stray bytes). */
static int utf8_len(unsigned char c)
{
    if (c >= 0xF0 && c < 0xF8)
        return 4;
    if (c >= 0xE0)
        return c < 0xF0 ? 3 : 1;
    if (c >= 0xC0)
        return 2;
    return 1;
}

int gp_top_put(gp_top_screen *scr, int x, int y, int max, uint8_t cls, const char *text)
{
    if (y < 0 || y >= scr->h)
        return 0;
    int end = max < 0 ? scr->w : x + max;
    if (end > scr->w)
        end = scr->w;
    int col = x;
    const unsigned char *p = (const unsigned char *)text;
    while (*p && col < end) {
        int n = utf8_len(*p);
        for (int k = 1; k < n; k++)
            if (p[k] == 0)
                n = 1; /* truncated sequence: take the lead byte alone */
        if (col >= 0) {
            gp_top_cell *c = &scr->cells[(size_t)y * (size_t)scr->w + (size_t)col];
            if (n == 1 && (*p < 0x20 || *p == 0x7F || *p >= 0x80))
                memcpy(c->ch, "?", 2); /* control and stray bytes never reach the terminal */
            else {
                memcpy(c->ch, p, (size_t)n);
                c->ch[n] = 0;
            }
            c->cls = cls;
        }
        p += n;
        col++;
    }
    return col - x;
}

int gp_top_printf(gp_top_screen *scr, int x, int y, int max, uint8_t cls, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return gp_top_put(scr, x, y, max, cls, buf);
}

void gp_top_screen_write(const gp_top_screen *scr, FILE *fp)
{
    for (int y = 0; y < scr->h; y++) {
        const gp_top_cell *row = &scr->cells[(size_t)y * (size_t)scr->w];
        int last = scr->w - 1;
        while (last >= 0 && (row[last].ch[0] == 0 || strcmp(row[last].ch, " ") == 0))
            last--;
        for (int x = 0; x <= last; x++)
            fputs(row[x].ch[0] ? row[x].ch : " ", fp);
        fputc('\n', fp);
    }
}

static uint8_t level_cls(double pct)
{
    return pct >= 85 ? GP_TOP_C_CRIT : pct >= 60 ? GP_TOP_C_WARN : GP_TOP_C_OK;
}

/* Eighths of a cell, bottom up: " ", then U+2581..U+2588. */
static const char *const blocks[9] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};

void gp_top_graph(gp_top_screen *scr, int x, int y, int w, int h, const float *v, size_t n)
{
    if (w <= 0 || h <= 0)
        return;
    for (int col = 0; col < w; col++) {
        /* the newest point at the right edge */
        long i = (long)n - (long)(w - col);
        double pct = i >= 0 ? v[i] : NAN;
        if (isnan(pct)) {
            gp_top_put(scr, x + col, y + h - 1, 1, GP_TOP_C_DIM, i >= 0 ? "·" : " ");
            continue;
        }
        if (pct < 0)
            pct = 0;
        if (pct > 100)
            pct = 100;
        long eighths = lround(pct / 100.0 * h * 8);
        if (eighths == 0 && pct > 0)
            eighths = 1; /* anything above zero shows */
        for (int r = 0; r < h; r++) {
            long here = eighths - (long)r * 8;
            int k = here >= 8 ? 8 : here <= 0 ? 0 : (int)here;
            gp_top_put(scr, x + col, y + h - 1 - r, 1, level_cls(pct), blocks[k]);
        }
    }
}
