/* CUDA-event kernel timers: start/stop record events (asynchronous), elapsed times are read later
 * with cuEventQuery + cuEventElapsedTime, never by synchronising the device. gp_cuda_timer_add
 * puts samples measured by the caller's own events (torch / CuPy) into the same table. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/msort.h"
#include "core/clock.h"
#include "core/json_writer.h"
#include "core/stats.h"
#include "produce/profiler/cuda_driver.h"
#include "produce/profiler/profiler_internal.h"

#define MAX_OPEN_PER_NAME 64

void gp__timer_init(struct gp_cuda_timer *t, gp_profiler *owner)
{
    memset(t, 0, sizeof(*t));
    gp__mutex_init(&t->lock);
    t->owner = owner;
}

static void release_pairs(struct gp_cuda_timer *t) GP_REQUIRES(t->lock)
{
    const gp__cuda *c = NULL;
    for (size_t i = 0; i < t->n_pairs; i++) {
        gp__timer_pair *pr = &t->pairs[i];
        if (pr->ev0 || pr->ev1) {
            if (!c)
                c = gp__cuda_get();
            gp__cuda_event_put(c, pr->ev0);
            gp__cuda_event_put(c, pr->ev1);
        }
    }
    t->n_pairs = 0;
}

void gp__timer_fini(struct gp_cuda_timer *t)
{
    gp__mutex_lock(&t->lock);
    release_pairs(t);
    free(t->pairs);
    t->pairs = NULL;
    gp__mutex_unlock(&t->lock);
    gp__mutex_destroy(&t->lock);
}

void gp__timer_reset(struct gp_cuda_timer *t)
{
    gp__mutex_lock(&t->lock);
    release_pairs(t);
    gp__mutex_unlock(&t->lock);
}

void gp_cuda_timer_reset(gp_cuda_timer *t)
{
    if (t)
        gp__timer_reset(t);
}

void gp__timer_drop_open(struct gp_cuda_timer *t)
{
    gp__mutex_lock(&t->lock);
    const gp__cuda *c = NULL;
    size_t kept = 0;
    for (size_t i = 0; i < t->n_pairs; i++) {
        gp__timer_pair *pr = &t->pairs[i];
        if (pr->ev0 && !pr->ev1) {
            if (!c)
                c = gp__cuda_get();
            gp__cuda_event_put(c, pr->ev0);
        } else {
            t->pairs[kept++] = *pr;
        }
    }
    t->n_pairs = kept;
    gp__mutex_unlock(&t->lock);
}

gp__kernel_scope gp__kernel_scope_begin(gp_profiler *p, const char *name, void *stream)
{
    gp__kernel_scope s = {NULL, name};
    gp_cuda_timer *t = gp_profiler_cuda_timer(p);
    if (t && gp_profiler_enabled(t->owner) && gp_cuda_timer_start(t, name, stream) == GP_OK)
        s.timer = t;
    return s;
}

void gp__kernel_scope_end(gp__kernel_scope *s)
{
    if (s->timer)
        (void)gp_cuda_timer_stop(s->timer, s->name);
}

gp_cuda_timer *gp_profiler_cuda_timer(gp_profiler *p)
{
    p = gp__prof_resolve(p);
    return p ? &p->timer : NULL;
}

/* Records an event for name: start opens a new pair on stream (at most MAX_OPEN_PER_NAME open per
 * name: GP_ELIMIT), stop closes the oldest open pair of name on its own stream (none: GP_ENOENT).
 * t->last says whether a CUDA context was there. */
static gp_status mark(gp_cuda_timer *t, const char *name, bool start, void *stream)
{
    if (!t || !name)
        return GP_EINVAL;
    if (t->owner && !gp_profiler_enabled(t->owner))
        return GP_OK; /* a disabled profiler records nothing */
    const gp__cuda *c = gp__cuda_get();
    gp_status st = gp__cuda_ensure_context(c);
    gp__mutex_lock(&t->lock);
    t->last = st;
    if (st != GP_OK)
        goto done;
    gp__timer_pair *oldest = NULL;
    size_t open = 0;
    for (size_t i = 0; i < t->n_pairs; i++)
        if (t->pairs[i].ev0 && !t->pairs[i].ev1 && strcmp(t->pairs[i].name, name) == 0 &&
            open++ == 0)
            oldest = &t->pairs[i];
    if (start ? open >= MAX_OPEN_PER_NAME : !oldest) {
        st = start ? GP_ELIMIT : GP_ENOENT;
        goto done;
    }
    void *ev = NULL;
    st = gp__cuda_event_get(c, &ev);
    if (st != GP_OK)
        goto done;
    if (c->cuEventRecord(ev, start ? stream : oldest->stream) != GP__CUDA_SUCCESS) {
        gp__cuda_event_put(c, ev);
        st = GP_EEXTERNAL;
        goto done;
    }
    if (!start) {
        oldest->ev1 = ev;
        goto done;
    }
    gp__timer_pair *pr = GP_PUSH(t->pairs, t->n_pairs, t->cap_pairs);
    if (!pr) {
        gp__cuda_event_put(c, ev);
        st = GP_ENOMEM;
        goto done;
    }
    pr->name = name;
    pr->stream = stream;
    pr->ev0 = ev;
    pr->ns = -1;
done:
    gp__mutex_unlock(&t->lock);
    return st;
}

gp_status gp_cuda_timer_start(gp_cuda_timer *t, const char *name, void *stream)
{
    return mark(t, name, true, stream);
}

gp_status gp_cuda_timer_stop(gp_cuda_timer *t, const char *name)
{
    return mark(t, name, false, NULL);
}

gp_status gp_cuda_timer_add(gp_cuda_timer *t, const char *name, gp_ns ns)
{
    if (!t || !name || ns < 0)
        return GP_EINVAL;
    /* No enabled check: the caller measured it, maybe before a disable (Python reads events
     * after they complete); it decides whether to add. */
    gp_status st = GP_OK;
    gp__mutex_lock(&t->lock);
    gp__timer_pair *pr = GP_PUSH(t->pairs, t->n_pairs, t->cap_pairs);
    if (pr) /* a completed pair without events: nothing to resolve or release */
        *pr = (gp__timer_pair){.name = name, .ns = ns};
    else
        st = GP_ENOMEM;
    gp__mutex_unlock(&t->lock);
    return st;
}

static size_t resolve_locked(struct gp_cuda_timer *t, bool wait) GP_REQUIRES(t->lock)
{
    const gp__cuda *c = gp__cuda_get();
    if (c->status != GP_OK)
        return 0;
    int64_t deadline = gp__clock_ns() + 2000000000LL;
    size_t pending = 0;
    for (size_t i = 0; i < t->n_pairs; i++) {
        gp__timer_pair *pr = &t->pairs[i];
        if (!pr->ev1 || pr->ns >= 0)
            continue;
        for (;;) {
            gp__CUresult r = c->cuEventQuery(pr->ev1);
            if (r == GP__CUDA_SUCCESS) {
                float ms = 0;
                if (c->cuEventElapsedTime(&ms, pr->ev0, pr->ev1) == GP__CUDA_SUCCESS && ms >= 0)
                    pr->ns = (int64_t)((double)ms * 1e6 + 0.5);
                else
                    pr->ns = -2; /* failed: dropped from the statistics */
                gp__cuda_event_put(c, pr->ev0);
                gp__cuda_event_put(c, pr->ev1);
                pr->ev0 = pr->ev1 = (void *)0;
                break;
            }
            if (r != GP__CUDA_ERROR_NOT_READY || !wait || gp__clock_ns() > deadline) {
                pending++;
                break;
            }
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
    }
    return pending;
}

size_t gp_cuda_timer_resolve(gp_cuda_timer *t, bool wait)
{
    if (!t)
        return 0;
    gp__mutex_lock(&t->lock);
    size_t n = resolve_locked(t, wait);
    gp__mutex_unlock(&t->lock);
    return n;
}

/* Statistics of one name (lock held). Returns false when the name has no pairs. */
static bool stats_of(struct gp_cuda_timer *t, const char *name, gp_timer_stats *out, int64_t *buf)
    GP_REQUIRES(t->lock)
{
    size_t n = 0, pending = 0, any = 0;
    for (size_t i = 0; i < t->n_pairs; i++) {
        const gp__timer_pair *pr = &t->pairs[i];
        if (strcmp(pr->name, name) != 0)
            continue;
        any++;
        if (pr->ns >= 0)
            buf[n++] = pr->ns;
        else if (pr->ev1)
            pending++;
    }
    if (!any)
        return false;
    gp__stats s;
    gp__stats_compute(buf, n, &s);
    memset(out, 0, sizeof(*out));
    out->name = name;
    out->calls = n;
    out->pending = pending;
    out->total_ms = (double)s.total / 1e6;
    out->mean_ms = s.mean / 1e6;
    out->min_ms = (double)s.min / 1e6;
    out->max_ms = (double)s.max / 1e6;
    out->stddev_ms = s.stddev / 1e6;
    out->p50_ms = s.p50 / 1e6;
    out->p95_ms = s.p95 / 1e6;
    out->p99_ms = s.p99 / 1e6;
    return true;
}

gp_status gp_cuda_timer_stats(gp_cuda_timer *t, const char *name, gp_timer_stats *out)
{
    if (!t || !name)
        return GP_EINVAL;
    gp__mutex_lock(&t->lock);
    resolve_locked(t, true);
    gp_status st = GP_ENOENT;
    int64_t *buf = malloc(sizeof(int64_t) * (t->n_pairs + 1));
    if (!buf)
        st = GP_ENOMEM;
    else if (stats_of(t, name, out, buf))
        st = GP_OK;
    free(buf);
    gp__mutex_unlock(&t->lock);
    return st;
}

static int cmp_total_desc(const void *a, const void *b)
{
    const gp_timer_stats *x = a, *y = b;
    if (x->total_ms != y->total_ms)
        return x->total_ms > y->total_ms ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Every name's statistics, sorted by total time (lock held). Caller frees *out. */
static gp_status collect_locked(struct gp_cuda_timer *t, gp_timer_stats **out, size_t *n_out)
    GP_REQUIRES(t->lock)
{
    *out = NULL;
    *n_out = 0;
    gp_timer_stats *rows = calloc(t->n_pairs + 1, sizeof(*rows));
    int64_t *buf = malloc(sizeof(int64_t) * (t->n_pairs + 1));
    if (!rows || !buf) {
        free(rows);
        free(buf);
        return GP_ENOMEM;
    }
    size_t n = 0;
    for (size_t i = 0; i < t->n_pairs; i++) {
        const char *name = t->pairs[i].name;
        bool seen = false;
        for (size_t j = 0; j < n && !seen; j++)
            seen = strcmp(rows[j].name, name) == 0;
        if (!seen && stats_of(t, name, &rows[n], buf))
            n++;
    }
    free(buf);
    gp__msort(rows, n, sizeof(*rows), cmp_total_desc);
    *out = rows;
    *n_out = n;
    return GP_OK;
}

gp_status gp_cuda_timer_all_stats(gp_cuda_timer *t, gp_timer_stats **rows, size_t *n)
{
    if (!t || !rows || !n)
        return GP_EINVAL;
    *rows = NULL;
    *n = 0;
    bool driver = gp__cuda_get()->status == GP_OK;
    gp__mutex_lock(&t->lock);
    gp_status st = GP_ENODRIVER; /* without a driver only added samples can be there */
    if (driver || t->n_pairs) {
        resolve_locked(t, true);
        st = collect_locked(t, rows, n);
    }
    gp__mutex_unlock(&t->lock);
    return st;
}

gp_status gp__timer_json(gp_cuda_timer *t, gp__buf *b)
{
    const gp__cuda *c = gp__cuda_get();
    gp__jw w;
    gp__jw_init(&w, NULL);
    gp__jw_obj_begin(&w);
    gp__jw_kv_str(&w, "status", c->status == GP_OK ? "ok" : c->why);
    gp__jw_key(&w, "timers");
    gp__jw_arr_begin(&w);
    gp_timer_stats *rows = NULL;
    size_t n = 0;
    gp_status st = gp_cuda_timer_all_stats(t, &rows, &n); /* added samples without a driver */
    if (st == GP_ENODRIVER)
        st = GP_OK;
    for (size_t i = 0; i < n; i++) {
        const gp_timer_stats *r = &rows[i];
        gp__jw_obj_begin(&w);
        gp__jw_kv_str(&w, "name", r->name);
        gp__jw_kv_int(&w, "calls", (int64_t)r->calls);
        gp__jw_kv_double(&w, "total_ms", r->total_ms);
        gp__jw_kv_double(&w, "mean_ms", r->mean_ms);
        gp__jw_kv_double(&w, "min_ms", r->min_ms);
        gp__jw_kv_double(&w, "max_ms", r->max_ms);
        gp__jw_kv_double(&w, "stddev_ms", r->stddev_ms);
        gp__jw_kv_double(&w, "p50_ms", r->p50_ms);
        gp__jw_kv_double(&w, "p95_ms", r->p95_ms);
        gp__jw_kv_double(&w, "p99_ms", r->p99_ms);
        gp__jw_kv_int(&w, "pending", (int64_t)r->pending);
        gp__jw_obj_end(&w);
    }
    free(rows);
    gp__jw_arr_end(&w);
    gp__jw_obj_end(&w);
    size_t len = 0;
    char *text = gp__jw_take(&w, &len);
    if (st == GP_OK)
        st = text ? gp__buf_append(b, text, len) : GP_ENOMEM;
    free(text);
    return st;
}
