/* From the profiler's store to the trace model (gp_profiler_to_trace and the "gpuprof_profile"
 * metadata), and what is computed on the store itself: the range breakdown and the range open at
 * a time. Printing and the exports that run an analysis live in src/app/profiler_output.c. */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/msort.h"
#include "core/util.h"
#include "core/imap.h"
#include "core/json_writer.h"
#include "gpuprof/summary.h"
#include "produce/profiler/profile_meta.h"
#include "produce/profiler/profiler_internal.h"

/* ---- names --------------------------------------------------------------------------------- */

/* The text name of a stored range (lock held): function addresses are named with dladdr. */
static const char *rec_name(gp_profiler *p, const gp__prof_srec *r) GP_REQUIRES(p->lock)
{
    if (!(r->flags & GP__REC_FNADDR))
        return r->name ? r->name : "";
    void *fn = (void *)r->name;
    Dl_info info;
    char buf[64];
    const char *text = NULL;
    if (dladdr(fn, &info) && info.dli_sname && info.dli_saddr == fn)
        text = info.dli_sname;
    if (!text) {
        snprintf(buf, sizeof buf, "0x%" PRIxPTR, (uintptr_t)fn);
        text = buf;
    }
    uint32_t id;
    if (gp__strtab_intern(&p->names, text, strlen(text), &id) != GP_OK)
        return "?";
    return gp__strtab_get(&p->names, id);
}

/* ---- nesting ------------------------------------------------------------------------------- */

/* Sort key of a stored range: by thread, start, depth (parents before their children). */
typedef struct nest_key {
    int64_t tid, t0;
    uint32_t depth, idx;
} nest_key;

static int cmp_nest(const void *a, const void *b)
{
    const nest_key *x = a, *y = b;
    GP_CMP_KEY(x->tid, y->tid);
    GP_CMP_KEY(x->t0, y->t0);
    return GP_CMP(x->depth, y->depth);
}

/* Number of ranges nested in each stored range (lock held): the profiler's own cost inside it is
 * that many begin/end pairs. On success *out (p->n_recs entries) is owned by the caller. */
static gp_status count_descendants(gp_profiler *p, uint32_t **out) GP_REQUIRES(p->lock)
{
    size_t n = p->n_recs;
    uint32_t *desc = calloc(n + 1, sizeof(*desc));
    nest_key *keys = malloc((n + 1) * sizeof(*keys));
    uint32_t *stack = malloc((GP__PROF_MAX_DEPTH + 2) * sizeof(*stack));
    if (!desc || !keys || !stack) {
        free(desc);
        free(keys);
        free(stack);
        return GP_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        keys[i] = (nest_key){p->recs[i].tid, p->recs[i].t0, p->recs[i].depth, (uint32_t)i};
    gp__msort(keys, n, sizeof(*keys), cmp_nest);
    size_t sp = 0;
    int64_t cur_tid = INT64_MIN;
    for (size_t k = 0; k < n; k++) {
        uint32_t i = keys[k].idx;
        const gp__prof_srec *r = &p->recs[i];
        if (r->tid != cur_tid) {
            sp = 0;
            cur_tid = r->tid;
        }
        while (sp > 0) {
            const gp__prof_srec *top = &p->recs[stack[sp - 1]];
            if (top->depth < r->depth && top->t1 >= r->t1)
                break;
            sp--;
        }
        for (size_t s = 0; s < sp; s++)
            desc[stack[s]]++;
        if (sp <= GP__PROF_MAX_DEPTH)
            stack[sp++] = i;
    }
    free(keys);
    free(stack);
    *out = desc;
    return GP_OK;
}

/* ---- memory history ------------------------------------------------------------------------ */

/* Tracked total at time ns: the last point at or before ns (base before the first). */
static int64_t total_at(const gp__mem_point *h, size_t n, int64_t base, int64_t ns, size_t *idx)
{
    size_t lo = 0, hi = n; /* first point with h.ns > ns */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h[mid].ns <= ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    *idx = lo;
    return lo == 0 ? base : h[lo - 1].total;
}

/* ---- the trace ----------------------------------------------------------------------------- */

typedef struct build_ctx {
    gp_profiler *p;
    gp_trace *t;
    uint32_t *desc;    /* descendants of each stored range */
    gp__imap track_of; /* tid -> track index */
    gp__mem_point *hist;
    size_t n_hist;
    int64_t hist_base;
    gp__mem_sample *samples;
    size_t n_samples;
    double pair_cost;
    double sampling;
} build_ctx;

static void ext_args(gp__jw *w, const gp__prof_ext *e, int64_t dur)
{
    gp__jw_kv_str(w, "device", e->device == GP_DEVICE_GPU ? "gpu" : "cpu");
    if (e->backend)
        gp__jw_kv_str(w, "backend", e->backend);
    for (unsigned k = 0; k < e->n_tags && k < GP__PROF_MAX_TAGS; k++) {
        const gp__prof_tag *tg = &e->tags[k];
        switch (tg->type) {
        case GP__TAG_INT:
            gp__jw_kv_int(w, tg->key, tg->v.i);
            break;
        case GP__TAG_DOUBLE:
            gp__jw_kv_double(w, tg->key, tg->v.d);
            break;
        default:
            gp__jw_kv_str(w, tg->key, tg->str);
        }
    }
    if (e->gpu_ns >= 0)
        gp__jw_kv_int(w, "gpu_ns", e->gpu_ns);
    else if (e->ev1)
        gp__jw_kv_bool(w, "gpu_pending", true);
    if (e->has_cpu)
        gp__jw_kv_int(w, "cpu_ns", e->cpu1 - e->cpu0);
    if (e->transfer_ns > 0)
        gp__jw_kv_int(w, "transfer_ns", e->transfer_ns);
    if (e->bytes > 0) {
        gp__jw_kv_int(w, "bytes", e->bytes);
        int64_t basis = e->gpu_ns > 0 ? e->gpu_ns : dur;
        if (basis > 0)
            gp__jw_kv_double(w, "gbps", (double)e->bytes / (double)basis);
    }
}

static gp_status add_range(gp_profiler *p, build_ctx *c, size_t i) GP_REQUIRES(p->lock)
{
    const gp__prof_srec *r = &p->recs[i];
    gp_status st;
    uint64_t tr;
    if (!gp__imap_get(&c->track_of, r->tid, &tr)) {
        uint32_t idx;
        st = gp_trace_track(c->t, GP_TRACK_CPU_THREAD, (int64_t)getpid(), r->tid, &idx);
        if (st == GP_OK)
            st = gp__imap_put(&c->track_of, r->tid, idx);
        if (st != GP_OK)
            return st;
        tr = idx;
    }
    gp_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.track = (uint32_t)tr;
    ev.kind = GP_EV_RANGE;
    ev.ts = r->t0;
    gp_ns end = r->t1;
    ev.dur = end > ev.ts ? end - ev.ts : 0;
    const char *name = rec_name(p, r);
    st = gp_trace_intern(c->t, name, strlen(name), &ev.name);
    if (st != GP_OK)
        return st;
    const gp__prof_ext *e = r->ext ? &p->exts[r->ext - 1] : NULL;
    uint32_t desc = c->desc[i];
    if (e || desc || c->n_hist) {
        gp__jw w;
        gp__jw_init(&w, NULL);
        gp__jw_obj_begin(&w);
        if (e)
            ext_args(&w, e, ev.dur);
        if (desc)
            gp__jw_kv_int(&w, "overhead_ns", (int64_t)(c->pair_cost * desc + 0.5));
        if (c->n_hist) {
            size_t a, b;
            int64_t m0 = total_at(c->hist, c->n_hist, c->hist_base, ev.ts, &a);
            int64_t m1 = total_at(c->hist, c->n_hist, c->hist_base, end, &b);
            int64_t peak = m0;
            for (size_t k = a; k < b; k++)
                if (c->hist[k].total > peak)
                    peak = c->hist[k].total;
            gp__jw_kv_int(&w, "mem_delta_bytes", m1 - m0);
            gp__jw_kv_int(&w, "mem_peak_bytes", peak);
        }
        gp__jw_obj_end(&w);
        size_t len = 0;
        char *text = gp__jw_take(&w, &len);
        if (!text)
            return GP_ENOMEM;
        st = gp_trace_add_args(c->t, text, len, &ev.extra);
        free(text);
        if (st != GP_OK)
            return st;
    }
    return gp_trace_add_event(c->t, &ev);
}

/* A counter series of this process: its track (tid) and interned name. */
typedef struct series {
    uint32_t track;
    gp_strid name;
} series;

static gp_status series_open(build_ctx *c, int64_t tid, const char *name, series *out)
{
    out->name = 0;
    gp_status st = gp_trace_track(c->t, GP_TRACK_COUNTER, (int64_t)getpid(), tid, &out->track);
    if (st == GP_OK)
        st = gp_trace_intern(c->t, name, strlen(name), &out->name);
    return st;
}

static gp_status series_add(build_ctx *c, const series *sr, int64_t ts, double value)
{
    gp_counter_sample s;
    memset(&s, 0, sizeof(s));
    s.ts = ts;
    s.value = value;
    s.series = sr->name;
    s.track = sr->track;
    return gp_trace_add_counter(c->t, &s);
}

static gp_status add_counters(build_ctx *c)
{
    gp_status st = GP_OK;
    series sr;
    if (c->n_samples) {
        st = series_open(c, 0, "gpu0.memory_used_bytes", &sr);
        for (size_t i = 0; i < c->n_samples && st == GP_OK; i++)
            st = series_add(c, &sr, c->samples[i].ns, (double)c->samples[i].used);
    }
    if (st == GP_OK && c->n_hist) {
        st = series_open(c, 1, "gpuprof.tracked_bytes", &sr);
        for (size_t i = 0; i < c->n_hist && st == GP_OK; i++)
            st = series_add(c, &sr, c->hist[i].ns, (double)c->hist[i].total);
    }
    return st;
}

gp_status gp__prof_set_profile_meta(gp_profiler *p, const gp__prof_snapshot *snap,
                                    const gp_name_stats *rows, size_t n_rows, gp_trace *t)
{
    const gp_profiler_stats *ps = &snap->stats;
    gp__jw w;
    gp__jw_init(&w, NULL);
    gp__jw_obj_begin(&w);
    gp__jw_kv_int(&w, "version", 1);
    gp__jw_kv_str(&w, "producer", "gpuprof profiler " GP_VERSION_STRING);
    gp__jw_kv_str(&w, "clock", ps->clock);
    gp__jw_kv_double(&w, "tsc_ghz", ps->tsc_ghz);
    gp__jw_kv_bool(&w, "tsc_invariant", ps->tsc_invariant);
    gp__jw_kv_double(&w, "sampling", snap->sampling);
    gp__jw_kv_int(&w, "ranges", (int64_t)ps->ranges);
    gp__jw_kv_int(&w, "dropped", (int64_t)ps->dropped);
    gp__jw_kv_int(&w, "sampled_out", (int64_t)ps->sampled_out);
    gp__jw_kv_int(&w, "threads", (int64_t)ps->threads);
    gp__jw_kv_double(&w, "overhead_ns_per_range", ps->overhead_ns);
    if (rows) {
        gp__jw_key(&w, "summary");
        gp__jw_arr_begin(&w);
        for (size_t i = 0; i < n_rows; i++) {
            const gp_name_stats *r = &rows[i];
            gp__jw_obj_begin(&w);
            gp__jw_kv_str(&w, "name", r->name);
            gp__jw_kv_int(&w, "calls", (int64_t)r->calls);
            gp__jw_kv_int(&w, "total_ns", r->total);
            gp__jw_kv_double(&w, "mean_ns", r->mean);
            gp__jw_kv_int(&w, "min_ns", r->min);
            gp__jw_kv_int(&w, "max_ns", r->max);
            gp__jw_kv_double(&w, "stddev_ns", r->stddev);
            gp__jw_kv_double(&w, "p50_ns", r->p50);
            gp__jw_kv_double(&w, "p95_ns", r->p95);
            gp__jw_kv_double(&w, "p99_ns", r->p99);
            gp__jw_obj_end(&w);
        }
        gp__jw_arr_end(&w);
    }
    gp__jw_key(&w, "cuda_timers");
    gp__buf tb = {0};
    gp_status st = gp__timer_json(&p->timer, &tb);
    if (st == GP_OK)
        gp__jw_raw(&w, tb.data, tb.len);
    gp__buf_free(&tb);
    gp__jw_key(&w, "memory");
    gp__buf mb = {0};
    if (st == GP_OK)
        st = gp__mem_json(&p->mem, &mb);
    if (st == GP_OK)
        gp__jw_raw(&w, mb.data, mb.len);
    gp__buf_free(&mb);
    gp__jw_obj_end(&w);
    size_t len = 0;
    char *text = gp__jw_take(&w, &len);
    if (st == GP_OK)
        st = text ? gp_trace_set_meta(t, "gpuprof_profile", text) : GP_ENOMEM;
    free(text);
    return st;
}

gp_status gp__prof_build_trace(gp_profiler *p, gp__prof_snapshot *snap, gp_trace **out)
{
    p = gp__prof_resolve(p);
    if (!p)
        return GP_ENOMEM;
    memset(snap, 0, sizeof(*snap));
    gp_profiler_stats *ps = &snap->stats;
    gp_profiler_get_stats(p, ps); /* flushes */
    build_ctx c;
    memset(&c, 0, sizeof(c));
    c.p = p;
    c.pair_cost = ps->overhead_ns;
    gp_status st = gp__mem_snapshot(&p->mem, &c.hist, &c.n_hist, &c.samples, &c.n_samples);
    if (st != GP_OK)
        return st;
    gp__mutex_lock(&p->mem.lock);
    c.hist_base = p->mem.hist_base;
    gp__mutex_unlock(&p->mem.lock);
    st = gp_trace_create("gpuprof profiler", &c.t);
    if (st != GP_OK)
        goto done;
    gp__mutex_lock(&p->lock);
    gp__prof_flush_locked(p);
    gp__prof_resolve_gpu_locked(p, true);
    ps->ranges = p->n_recs;
    snap->sampling = p->sampling;
    st = gp__imap_init(&c.track_of, p->n_threads + 1);
    if (st == GP_OK)
        st = count_descendants(p, &c.desc);
    for (size_t i = 0; i < p->n_recs && st == GP_OK; i++)
        st = add_range(p, &c, i);
    gp__mutex_unlock(&p->lock);
    if (st == GP_OK)
        st = add_counters(&c);
    if (st == GP_OK)
        st = gp_trace_finish(c.t);
done:
    gp__imap_free(&c.track_of);
    free(c.desc);
    free(c.hist);
    free(c.samples);
    if (st != GP_OK) {
        gp_trace_free(c.t);
        return st;
    }
    *out = c.t;
    return GP_OK;
}

gp_status gp_profiler_to_trace(gp_profiler *p, gp_trace **out)
{
    gp__prof_snapshot snap;
    gp_trace *t = NULL;
    gp_status st = gp__prof_build_trace(p, &snap, &t);
    if (st == GP_OK)
        st = gp__prof_set_profile_meta(gp__prof_resolve(p), &snap, NULL, 0, t);
    if (st != GP_OK) {
        gp_trace_free(t);
        return st;
    }
    *out = t;
    return GP_OK;
}

/* ---- breakdown ----------------------------------------------------------------------------- */

static int cmp_breakdown(const void *a, const void *b)
{
    const gp_range_breakdown *x = a, *y = b;
    if (x->wall_ns != y->wall_ns)
        return x->wall_ns > y->wall_ns ? -1 : 1;
    return strcmp(x->name, y->name);
}

static void add_opt(gp_ns *sum, gp_ns v)
{
    *sum = *sum < 0 ? v : *sum + v;
}

gp_status gp_profiler_breakdown(gp_profiler *p, gp_range_breakdown **rows_out, size_t *n_out)
{
    p = gp__prof_resolve(p);
    if (!p)
        return GP_ENOMEM;
    double pair = gp__prof_pair_cost_ns();
    gp__mutex_lock(&p->lock);
    gp__prof_flush_locked(p);
    gp__prof_resolve_gpu_locked(p, true);
    uint32_t *desc = NULL;
    gp_range_breakdown *rows = NULL;
    size_t n = 0, cap = 0;
    gp__imap by_name; /* interned name pointer -> row */
    gp_status st = gp__imap_init(&by_name, 64);
    if (st == GP_OK)
        st = count_descendants(p, &desc);
    for (size_t i = 0; i < p->n_recs && st == GP_OK; i++) {
        const gp__prof_srec *r = &p->recs[i];
        const char *name = rec_name(p, r);
        uint32_t id;
        st = gp__strtab_intern(&p->names, name, strlen(name), &id); /* one pointer per text */
        if (st != GP_OK)
            break;
        uint64_t row;
        if (!gp__imap_get(&by_name, (int64_t)id, &row)) {
            gp_range_breakdown *b = GP_PUSH(rows, n, cap);
            if (!b || (st = gp__imap_put(&by_name, (int64_t)id, n - 1)) != GP_OK) {
                st = GP_ENOMEM;
                break;
            }
            b->name = gp__strtab_get(&p->names, id);
            b->gpu_ns = b->cpu_ns = b->transfer_ns = b->bytes = -1;
            row = n - 1;
        }
        gp_range_breakdown *b = &rows[row];
        b->calls++;
        b->wall_ns += r->t1 - r->t0;
        b->overhead_ns += (gp_ns)(pair * desc[i] + 0.5);
        const gp__prof_ext *e = r->ext ? &p->exts[r->ext - 1] : NULL;
        if (e) {
            if (e->gpu_ns >= 0)
                add_opt(&b->gpu_ns, e->gpu_ns);
            if (e->has_cpu)
                add_opt(&b->cpu_ns, e->cpu1 - e->cpu0);
            if (e->transfer_ns > 0)
                add_opt(&b->transfer_ns, e->transfer_ns);
            if (e->bytes > 0)
                add_opt(&b->bytes, e->bytes);
        }
    }
    gp__mutex_unlock(&p->lock);
    free(desc);
    gp__imap_free(&by_name);
    if (st != GP_OK) {
        free(rows);
        return st;
    }
    for (size_t i = 0; i < n; i++) {
        gp_ns basis = rows[i].gpu_ns > 0 ? rows[i].gpu_ns : rows[i].wall_ns;
        rows[i].gbps = rows[i].bytes >= 0 && basis > 0 ? (double)rows[i].bytes / (double)basis : -1;
    }
    if (n) /* an empty profiler has rows == NULL: qsort's pointer must not be null */
        gp__msort(rows, n, sizeof(*rows), cmp_breakdown);
    *rows_out = rows;
    *n_out = n;
    return GP_OK;
}

const char *gp__prof_open_range_at(gp_profiler *p, int64_t ns)
{
    if (!p)
        return NULL;
    gp__mutex_lock(&p->lock);
    gp__prof_flush_locked(p);
    const gp__prof_srec *best = NULL;
    for (size_t i = 0; i < p->n_recs; i++) {
        const gp__prof_srec *r = &p->recs[i];
        if (r->t0 <= ns && ns <= r->t1 &&
            (!best || r->depth > best->depth || (r->depth == best->depth && r->t0 > best->t0)))
            best = r;
    }
    const char *name = best ? rec_name(p, best) : NULL;
    gp__mutex_unlock(&p->lock);
    return name;
}
