/* gpuprof top's interactive loop and keys (top_frame.h). */
#include <string.h>

#include "app/cli/cli.h"
#include "app/cli/top_frame.h"

/* g: all GPUs -> the first shown -> the next ... -> all again. */
static void next_gpu(gp_top_view *v, const gp_top_frame *f)
{
    if (f->n_gpus == 0)
        return;
    if (v->gpu < 0) {
        v->gpu = (int)f->gpus[0].id.index;
        return;
    }
    for (size_t i = 0; i + 1 < f->n_gpus; i++)
        if (f->gpus[i].id.index == (uint32_t)v->gpu) {
            v->gpu = (int)f->gpus[i + 1].id.index;
            return;
        }
    v->gpu = -1;
}

static void edit_filter(gp_top_view *v, int key)
{
    size_t n = strlen(v->filter);
    if (key == GP_TOP_KEY_ENTER)
        v->editing = false;
    else if (key == GP_TOP_KEY_ESC) {
        v->editing = false;
        v->filter[0] = 0;
    } else if (key == GP_TOP_KEY_BACKSPACE && n > 0)
        v->filter[n - 1] = 0;
    else if (key >= 0x20 && key < 0x7F && n + 1 < sizeof v->filter) {
        v->filter[n] = (char)key;
        v->filter[n + 1] = 0;
    }
    v->selected = 0;
}

bool gp__top_key(gp_top_view *v, int key, const gp_top_frame *f)
{
    if (key == GP_TOP_KEY_NONE || key == GP_TOP_KEY_RESIZE)
        return true;
    if (v->editing) {
        edit_filter(v, key);
        return true;
    }
    if (v->help) { /* any key closes the help */
        v->help = false;
        return key != 'q';
    }
    v->message[0] = 0;
    switch (key) {
    case 'q':
    case 'Q':
        return false;
    case 'j':
    case GP_TOP_KEY_DOWN:
        v->selected++;
        break;
    case 'k':
    case GP_TOP_KEY_UP:
        v->selected -= v->selected > 0;
        break;
    case GP_TOP_KEY_PGDN:
        v->selected += 10;
        break;
    case GP_TOP_KEY_PGUP:
        v->selected = v->selected > 10 ? v->selected - 10 : 0;
        break;
    case GP_TOP_KEY_HOME:
        v->selected = 0;
        break;
    case GP_TOP_KEY_END:
        v->selected = (size_t)-1 / 2; /* clamped to the last row when drawn */
        break;
    case 's':
    case GP_TOP_KEY_F6:
        v->sort = (gp_top_col)((v->sort + 1) % GP_TOP_COL_COUNT);
        snprintf(v->message, sizeof v->message, "sorted by %s (S reverses)",
                 gp_top_col_name(v->sort));
        break;
    case 'S':
        v->ascending = !v->ascending;
        break;
    case '/':
        v->editing = true;
        break;
    case 'g':
        next_gpu(v, f);
        v->selected = 0;
        break;
    case ' ':
        v->paused = !v->paused;
        break;
    case 'h':
    case '?':
    case GP_TOP_KEY_F1:
        v->help = true;
        break;
    default:
        break;
    }
    return true;
}

/* Draws the frame at the terminal's size (the grid follows resizes). */
static gp_status show(gp_top_screen *scr, const gp_top_frame *f, gp_top_view *v)
{
    int w, h;
    gp_top_term_size(&w, &h);
    if (w != scr->w || h != scr->h) {
        gp_top_screen_free(scr);
        gp_status st = gp_top_screen_init(scr, w > 0 ? w : 1, h > 0 ? h : 1);
        if (st != GP_OK)
            return st;
    }
    gp_top_draw(scr, f, v);
    gp_top_term_show(scr);
    return GP_OK;
}

int gp__top_loop(gp__top_data *d, bool mono)
{
    if (gp_monitor_start(d->mon) != GP_OK) {
        gp__cli_error("top", "cannot start the sampler thread");
        return 1;
    }
    (void)gp_monitor_wait_samples(d->mon, 1, 5000);
    if (gp_top_term_open(mono) != GP_OK) {
        gp__cli_error("top", "cannot set up the terminal (TERM=%s)",
                      getenv("TERM") ? getenv("TERM") : "");
        return 1;
    }
    gp_top_screen scr = {0};
    gp_top_view v;
    gp_top_view_init(&v);
    gp_top_frame f;
    gp__top_gather(d, &f);
    int rc = 0;
    gp_ns next = gp_monitor_now() + (gp_ns)d->interval_ms * 1000000;
    bool dirty = true;
    while (!gp__cli_stopping()) {
        if (dirty && show(&scr, &f, &v) != GP_OK) {
            rc = 1;
            break;
        }
        gp_ns now = gp_monitor_now();
        int wait = now >= next ? 0 : (int)((next - now) / 1000000);
        int key = gp_top_term_key(wait > 200 ? 200 : wait);
        dirty = key != GP_TOP_KEY_NONE;
        if (!gp__top_key(&v, key, &f))
            break;
        if (gp_monitor_now() >= next) {
            next += (gp_ns)d->interval_ms * 1000000;
            if (!v.paused) {
                gp__top_gather(d, &f);
                dirty = true;
            }
        }
    }
    gp_top_term_close();
    gp_top_screen_free(&scr);
    gp_monitor_stop(d->mon);
    return rc;
}
