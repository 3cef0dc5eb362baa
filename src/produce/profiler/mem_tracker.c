/* GPU memory tracker: named buffers with shape/dtype/bytes, total and peak, the device's
 * free/total (cuMemGetInfo) and default-pool use, an optional sampler thread. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/json_writer.h"
#include "produce/profiler/cuda_driver.h"
#include "produce/profiler/profiler_internal.h"

void gp__mem_init(struct gp_mem_tracker *m, gp_profiler *owner)
{
    memset(m, 0, sizeof(*m));
    gp__mutex_init(&m->lock);
    m->owner = owner;
}

static void free_buf(gp__mem_buf *b)
{
    free(b->name);
    free(b->shape);
    free(b->dtype);
}

void gp__mem_fini(struct gp_mem_tracker *m)
{
    gp_mem_sampler_stop(m);
    gp__mutex_lock(&m->lock);
    for (size_t i = 0; i < m->n_bufs; i++)
        free_buf(&m->bufs[i]);
    GP_FREE_CLEAR(m->bufs);
    GP_FREE_CLEAR(m->hist);
    GP_FREE_CLEAR(m->samples);
    m->n_bufs = m->n_hist = m->n_samples = 0;
    gp__mutex_unlock(&m->lock);
    gp__mutex_destroy(&m->lock);
}

void gp__mem_reset(struct gp_mem_tracker *m)
{
    gp__mutex_lock(&m->lock);
    m->n_hist = 0;
    m->n_samples = 0;
    m->peak = m->total;
    m->hist_base = m->total;
    gp__mutex_unlock(&m->lock);
}

void gp_mem_reset(gp_mem_tracker *m)
{
    if (!m)
        return;
    gp__mutex_lock(&m->lock);
    for (size_t i = 0; i < m->n_bufs; i++)
        free_buf(&m->bufs[i]);
    m->n_bufs = 0;
    m->total = m->peak = m->hist_base = 0;
    m->n_hist = 0;
    m->n_samples = 0;
    gp__mutex_unlock(&m->lock);
}

gp_mem_tracker *gp_profiler_mem_tracker(gp_profiler *p)
{
    p = gp__prof_resolve(p);
    return p ? &p->mem : NULL;
}

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

/* Records the total after a change (lock held). A failed append only loses history. The point is
 * stamped with the profiler's ticks, as ranges are, and converted with them (gp__mem_snapshot):
 * a change made inside a range is inside it in the trace (CLOCK_MONOTONIC here and TSC ticks
 * converted there disagreed by up to microseconds). */
static void note_total(struct gp_mem_tracker *m) GP_REQUIRES(m->lock)
{
    if (m->total > m->peak)
        m->peak = m->total;
    gp__mem_point *pt = GP_PUSH(m->hist, m->n_hist, m->cap_hist);
    if (pt) {
        pt->ns = (int64_t)gp__prof_now(m->owner);
        pt->total = m->total;
    }
}

gp_status gp_mem_track(gp_mem_tracker *m, const char *name, const char *shape, const char *dtype,
                       int64_t bytes)
{
    if (!m || !name || bytes < 0)
        return GP_EINVAL;
    gp__mem_buf nb = {dup_or_empty(name), dup_or_empty(shape), dup_or_empty(dtype), bytes};
    if (!nb.name || !nb.shape || !nb.dtype) {
        free_buf(&nb);
        return GP_ENOMEM;
    }
    gp__mutex_lock(&m->lock);
    gp_status st = GP_OK;
    size_t i = 0;
    while (i < m->n_bufs && strcmp(m->bufs[i].name, name) != 0)
        i++;
    if (i < m->n_bufs) {
        m->total -= m->bufs[i].bytes;
        free_buf(&m->bufs[i]);
        m->bufs[i] = nb;
    } else {
        gp__mem_buf *slot = GP_PUSH(m->bufs, m->n_bufs, m->cap_bufs);
        if (!slot) {
            free_buf(&nb);
            st = GP_ENOMEM;
            goto done;
        }
        *slot = nb;
    }
    m->total += bytes;
    note_total(m);
done:
    gp__mutex_unlock(&m->lock);
    return st;
}

gp_status gp_mem_untrack(gp_mem_tracker *m, const char *name)
{
    if (!m || !name)
        return GP_EINVAL;
    gp__mutex_lock(&m->lock);
    size_t i = 0;
    while (i < m->n_bufs && strcmp(m->bufs[i].name, name) != 0)
        i++;
    gp_status st = GP_ENOENT;
    if (i < m->n_bufs) {
        m->total -= m->bufs[i].bytes;
        free_buf(&m->bufs[i]);
        memmove(&m->bufs[i], &m->bufs[i + 1], (m->n_bufs - i - 1) * sizeof(*m->bufs));
        m->n_bufs--;
        note_total(m);
        st = GP_OK;
    }
    gp__mutex_unlock(&m->lock);
    return st;
}

/* Device part of the status (no lock needed). */
static void device_status(gp_mem_status *out)
{
    const gp__cuda *c = gp__cuda_get();
    out->driver = gp__cuda_ensure_context(c);
    if (out->driver != GP_OK)
        return;
    size_t fr = 0, tot = 0;
    if (c->cuMemGetInfo(&fr, &tot) == GP__CUDA_SUCCESS) {
        out->has_device = true;
        out->free_bytes = (int64_t)fr;
        out->total_bytes = (int64_t)tot;
    }
    int dev = 0;
    void *pool = NULL;
    uint64_t used = 0, reserved = 0;
    if (c->cuDeviceGetDefaultMemPool && c->cuMemPoolGetAttribute &&
        c->cuDeviceGet(&dev, 0) == GP__CUDA_SUCCESS &&
        c->cuDeviceGetDefaultMemPool(&pool, dev) == GP__CUDA_SUCCESS &&
        c->cuMemPoolGetAttribute(pool, GP__CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used) ==
            GP__CUDA_SUCCESS &&
        c->cuMemPoolGetAttribute(pool, GP__CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved) ==
            GP__CUDA_SUCCESS) {
        out->has_pool = true;
        out->pool_used = (int64_t)used;
        out->pool_reserved = (int64_t)reserved;
    }
}

void gp_mem_status_get(gp_mem_tracker *m, gp_mem_status *out)
{
    memset(out, 0, sizeof(*out));
    if (!m)
        return;
    gp__mutex_lock(&m->lock);
    out->tracked_bytes = m->total;
    out->peak_bytes = m->peak;
    out->buffers = m->n_bufs;
    gp__mutex_unlock(&m->lock);
    device_status(out);
}

/* Copies n buffers into one allocation: the rows, then their strings. NULL when out of memory. */
static gp_mem_buffer *copy_rows(const gp__mem_buf *src, size_t n)
{
    size_t text = 0;
    for (size_t i = 0; i < n; i++)
        text += strlen(src[i].name) + strlen(src[i].shape) + strlen(src[i].dtype) + 3;
    gp_mem_buffer *out = malloc(n * sizeof(*out) + text + 1);
    if (!out)
        return NULL;
    char *q = (char *)(out + n);
    for (size_t i = 0; i < n; i++) {
        const gp__mem_buf *b = &src[i];
        const char *from[3] = {b->name, b->shape, b->dtype};
        const char **dst[3] = {&out[i].name, &out[i].shape, &out[i].dtype};
        for (int k = 0; k < 3; k++) {
            size_t len = strlen(from[k]) + 1;
            memcpy(q, from[k], len);
            *dst[k] = q;
            q += len;
        }
        out[i].bytes = b->bytes;
    }
    return out;
}

gp_status gp_mem_buffers(gp_mem_tracker *m, gp_mem_buffer **rows, size_t *n)
{
    if (!m || !rows || !n)
        return GP_EINVAL;
    *rows = NULL;
    *n = 0;
    gp__mutex_lock(&m->lock);
    gp_mem_buffer *out = copy_rows(m->bufs, m->n_bufs);
    if (out) {
        *rows = out;
        *n = m->n_bufs;
    }
    gp__mutex_unlock(&m->lock);
    return out ? GP_OK : GP_ENOMEM;
}

gp_status gp_mem_buffer_info(gp_mem_tracker *m, const char *name, gp_mem_buffer **out)
{
    if (!m || !name || !out)
        return GP_EINVAL;
    *out = NULL;
    gp__mutex_lock(&m->lock);
    gp_status st = GP_ENOENT;
    for (size_t i = 0; i < m->n_bufs && st == GP_ENOENT; i++)
        if (strcmp(m->bufs[i].name, name) == 0) {
            *out = copy_rows(&m->bufs[i], 1);
            st = *out ? GP_OK : GP_ENOMEM;
        }
    gp__mutex_unlock(&m->lock);
    return st;
}

/* ---- sampler ------------------------------------------------------------------------------ */

static void *sampler_main(void *arg)
{
    struct gp_mem_tracker *m = arg;
    const gp__cuda *c = gp__cuda_get();
    if (gp__cuda_ensure_context(c) != GP_OK)
        return NULL;
    while (!atomic_load(&m->sampler_stop)) {
        size_t fr = 0, tot = 0;
        if (c->cuMemGetInfo(&fr, &tot) == GP__CUDA_SUCCESS) {
            gp__mutex_lock(&m->lock);
            gp__mem_sample *s = GP_PUSH(m->samples, m->n_samples, m->cap_samples);
            if (s) {
                s->ns = (int64_t)gp__prof_now(m->owner); /* ticks, as the history */
                s->used = (int64_t)tot - (int64_t)fr;
            }
            gp__mutex_unlock(&m->lock);
        }
        /* Sleep in short steps so that stop is prompt. */
        int64_t until = gp__clock_ns() + (int64_t)m->interval_ms * 1000000;
        while (!atomic_load(&m->sampler_stop)) {
            int64_t left = until - gp__clock_ns();
            if (left <= 0)
                break;
            struct timespec ts = {0, left > 5000000 ? 5000000 : left};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

gp_status gp_mem_sampler_start(gp_mem_tracker *m, unsigned interval_ms)
{
    if (!m || interval_ms == 0)
        return GP_EINVAL;
    const gp__cuda *c = gp__cuda_get();
    if (c->status != GP_OK)
        return GP_ENODRIVER;
    gp__mutex_lock(&m->lock);
    gp_status st = GP_OK;
    if (m->sampler_running) {
        st = GP_ESTATE;
    } else {
        m->interval_ms = interval_ms;
        atomic_store(&m->sampler_stop, false);
        if (pthread_create(&m->sampler, NULL, sampler_main, m) != 0)
            st = GP_ENOMEM;
        else
            m->sampler_running = true;
    }
    gp__mutex_unlock(&m->lock);
    return st;
}

void gp_mem_sampler_stop(gp_mem_tracker *m)
{
    if (!m)
        return;
    gp__mutex_lock(&m->lock);
    bool running = m->sampler_running;
    m->sampler_running = false;
    gp__mutex_unlock(&m->lock);
    if (!running)
        return;
    atomic_store(&m->sampler_stop, true);
    pthread_join(m->sampler, NULL);
}

gp_status gp_mem_sampler_peak(gp_mem_tracker *m, gp_mem_peak *out)
{
    if (!m)
        return GP_EINVAL;
    memset(out, 0, sizeof(*out));
    gp__mutex_lock(&m->lock);
    out->samples = m->n_samples;
    for (size_t i = 0; i < m->n_samples; i++) {
        if (i == 0 || m->samples[i].used > out->peak_bytes) {
            out->peak_bytes = m->samples[i].used;
            out->peak_ts = m->samples[i].ns;
        }
    }
    gp__mutex_unlock(&m->lock);
    if (out->samples == 0)
        return GP_EEMPTY;
    gp__tick_conv conv;
    gp__tick_conv_get(&conv);
    out->peak_ts = gp__tick_conv_ns(&conv, (uint64_t)out->peak_ts);
    out->open_range = gp__prof_open_range_at(m->owner, out->peak_ts);
    return GP_OK;
}

gp_status gp__mem_snapshot(gp_mem_tracker *m, gp__mem_point **hist, size_t *n_hist,
                           gp__mem_sample **samples, size_t *n_samples)
{
    *hist = NULL;
    *samples = NULL;
    *n_hist = *n_samples = 0;
    gp__mutex_lock(&m->lock);
    gp_status st = GP_OK;
    if (m->n_hist) {
        *hist = malloc(m->n_hist * sizeof(**hist));
        if (*hist) {
            memcpy(*hist, m->hist, m->n_hist * sizeof(**hist));
            *n_hist = m->n_hist;
        } else {
            st = GP_ENOMEM;
        }
    }
    if (st == GP_OK && m->n_samples) {
        *samples = malloc(m->n_samples * sizeof(**samples));
        if (*samples) {
            memcpy(*samples, m->samples, m->n_samples * sizeof(**samples));
            *n_samples = m->n_samples;
        } else {
            st = GP_ENOMEM;
        }
    }
    gp__mutex_unlock(&m->lock);
    if (st == GP_OK) { /* ticks -> ns, with the ranges' conversion */
        gp__tick_conv conv;
        gp__tick_conv_get(&conv);
        for (size_t i = 0; i < *n_hist; i++)
            (*hist)[i].ns = gp__tick_conv_ns(&conv, (uint64_t)(*hist)[i].ns);
        for (size_t i = 0; i < *n_samples; i++)
            (*samples)[i].ns = gp__tick_conv_ns(&conv, (uint64_t)(*samples)[i].ns);
    }
    if (st != GP_OK) {
        free(*hist);
        free(*samples);
        *hist = NULL;
        *samples = NULL;
        *n_hist = *n_samples = 0;
    }
    return st;
}

/* "key": {"k1": v1, "k2": v2}, or "key": null when !has. */
static void kv_two_or_null(gp__jw *w, const char *key, bool has, const char *k1, int64_t v1,
                           const char *k2, int64_t v2)
{
    gp__jw_key(w, key);
    if (!has) {
        gp__jw_null(w);
        return;
    }
    gp__jw_obj_begin(w);
    gp__jw_kv_int(w, k1, v1);
    gp__jw_kv_int(w, k2, v2);
    gp__jw_obj_end(w);
}

gp_status gp__mem_json(gp_mem_tracker *m, gp__buf *b)
{
    gp_mem_status s;
    gp_mem_status_get(m, &s);
    gp_mem_peak pk;
    bool has_peak = gp_mem_sampler_peak(m, &pk) == GP_OK;
    const gp__cuda *c = gp__cuda_get();
    gp__jw w;
    gp__jw_init(&w, NULL);
    gp__jw_obj_begin(&w);
    gp__jw_kv_str(&w, "status",
                  s.driver == GP_OK    ? "ok"
                  : c->status != GP_OK ? c->why
                                       : gp_strerror(s.driver));
    gp__jw_kv_int(&w, "tracked_bytes", s.tracked_bytes);
    gp__jw_kv_int(&w, "peak_bytes", s.peak_bytes);
    gp__jw_key(&w, "buffers");
    gp__jw_arr_begin(&w);
    gp__mutex_lock(&m->lock);
    for (size_t i = 0; i < m->n_bufs; i++) {
        gp__jw_obj_begin(&w);
        gp__jw_kv_str(&w, "name", m->bufs[i].name);
        gp__jw_kv_str(&w, "shape", m->bufs[i].shape);
        gp__jw_kv_str(&w, "dtype", m->bufs[i].dtype);
        gp__jw_kv_int(&w, "bytes", m->bufs[i].bytes);
        gp__jw_obj_end(&w);
    }
    gp__mutex_unlock(&m->lock);
    gp__jw_arr_end(&w);
    kv_two_or_null(&w, "device", s.has_device, "free_bytes", s.free_bytes, "total_bytes",
                   s.total_bytes);
    kv_two_or_null(&w, "pool", s.has_pool, "used_bytes", s.pool_used, "reserved_bytes",
                   s.pool_reserved);
    gp__jw_key(&w, "sampler");
    if (has_peak) {
        gp__jw_obj_begin(&w);
        gp__jw_kv_int(&w, "samples", (int64_t)pk.samples);
        gp__jw_kv_int(&w, "peak_bytes", pk.peak_bytes);
        gp__jw_kv_int(&w, "peak_ts_ns", pk.peak_ts);
        gp__jw_key(&w, "open_range");
        if (pk.open_range)
            gp__jw_str(&w, pk.open_range);
        else
            gp__jw_null(&w);
        gp__jw_obj_end(&w);
    } else {
        gp__jw_null(&w);
    }
    gp__jw_obj_end(&w);
    size_t len = 0;
    char *text = gp__jw_take(&w, &len);
    gp_status st = text ? gp__buf_append(b, text, len) : GP_ENOMEM;
    free(text);
    return st;
}
