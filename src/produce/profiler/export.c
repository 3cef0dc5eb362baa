/* From the profiler's store to the trace model, and everything built on that: the summary and
 * bottleneck tables, the JSON profile / Chrome trace, folded stacks. */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "core/imap.h"
#include "core/json_writer.h"
#include "gpuprof/summary.h"
#include "produce/profiler/profiler_internal.h"

/* ---- names --------------------------------------------------------------------------------- */

/* The text name of a stored range (lock held): function addresses are named with dladdr. */
static const char *rec_name(gp_profiler *p, const gp__prof_srec *r)
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

typedef struct nest_info {
    uint32_t parent; /* index + 1 of the enclosing range, 0 at the top */
    uint32_t descendants;
    int64_t child_ns; /* summed duration of direct children */
} nest_info;

static const gp__prof_srec *g_sort_recs; /* qsort context (lock held by the caller) */

static int cmp_nest(const void *a, const void *b)
{
    const gp__prof_srec *x = &g_sort_recs[*(const uint32_t *)a];
    const gp__prof_srec *y = &g_sort_recs[*(const uint32_t *)b];
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->t0 != y->t0)
        return x->t0 < y->t0 ? -1 : 1;
    if (x->depth != y->depth)
        return x->depth < y->depth ? -1 : 1;
    return 0;
}

static pthread_mutex_t g_sort_lock = PTHREAD_MUTEX_INITIALIZER;

/* Parent links, descendant counts and child time of every stored range (lock held). */
static gp_status compute_nesting(gp_profiler *p, nest_info **out)
{
    size_t n = p->n_recs;
    nest_info *ni = calloc(n + 1, sizeof(*ni));
    uint32_t *order = malloc((n + 1) * sizeof(*order));
    uint32_t *stack = malloc((GP__PROF_MAX_DEPTH + 2) * sizeof(*stack));
    if (!ni || !order || !stack) {
        free(ni);
        free(order);
        free(stack);
        return GP_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    pthread_mutex_lock(&g_sort_lock);
    g_sort_recs = p->recs;
    qsort(order, n, sizeof(*order), cmp_nest);
    pthread_mutex_unlock(&g_sort_lock);
    size_t sp = 0;
    int64_t cur_tid = INT64_MIN;
    for (size_t k = 0; k < n; k++) {
        uint32_t i = order[k];
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
        if (sp > 0) {
            ni[i].parent = stack[sp - 1] + 1;
            ni[stack[sp - 1]].child_ns += r->t1 - r->t0;
            for (size_t s = 0; s < sp; s++)
                ni[stack[s]].descendants++;
        }
        if (sp <= GP__PROF_MAX_DEPTH)
            stack[sp++] = i;
    }
    free(order);
    free(stack);
    *out = ni;
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
    nest_info *nest;
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

static gp_status add_range(build_ctx *c, size_t i)
{
    gp_profiler *p = c->p;
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
    uint32_t desc = c->nest[i].descendants;
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

static gp_status add_counters(build_ctx *c)
{
    gp_status st = GP_OK;
    uint32_t track;
    gp_counter_sample s;
    if (c->n_samples) {
        st = gp_trace_track(c->t, GP_TRACK_COUNTER, (int64_t)getpid(), 0, &track);
        gp_strid series = 0;
        if (st == GP_OK)
            st = gp_trace_intern(c->t, "gpu0.memory_used_bytes", 22, &series);
        for (size_t i = 0; i < c->n_samples && st == GP_OK; i++) {
            memset(&s, 0, sizeof(s));
            s.ts = c->samples[i].ns;
            s.value = (double)c->samples[i].used;
            s.series = series;
            s.track = track;
            st = gp_trace_add_counter(c->t, &s);
        }
    }
    if (st == GP_OK && c->n_hist) {
        st = gp_trace_track(c->t, GP_TRACK_COUNTER, (int64_t)getpid(), 1, &track);
        gp_strid series = 0;
        if (st == GP_OK)
            st = gp_trace_intern(c->t, "gpuprof.tracked_bytes", 21, &series);
        for (size_t i = 0; i < c->n_hist && st == GP_OK; i++) {
            memset(&s, 0, sizeof(s));
            s.ts = c->hist[i].ns;
            s.value = (double)c->hist[i].total;
            s.series = series;
            s.track = track;
            st = gp_trace_add_counter(c->t, &s);
        }
    }
    return st;
}

/* The "gpuprof_profile" metadata object. */
static gp_status profile_meta(build_ctx *c, const gp_profiler_stats *ps, gp__buf *out)
{
    gp_summary_opts so;
    gp_summary_opts_init(&so);
    so.kinds = 1u << GP_EV_RANGE;
    gp_summary *sum = NULL;
    gp_trace *tr = c->t;
    gp_status st = gp_summary_compute(&tr, 1, &so, &sum);
    if (st != GP_OK)
        return st;
    gp__jw w;
    gp__jw_init(&w, NULL);
    gp__jw_obj_begin(&w);
    gp__jw_kv_int(&w, "version", 1);
    gp__jw_kv_str(&w, "producer", "gpuprof profiler " GP_VERSION_STRING);
    gp__jw_kv_str(&w, "clock", ps->clock);
    gp__jw_kv_double(&w, "tsc_ghz", ps->tsc_ghz);
    gp__jw_kv_bool(&w, "tsc_invariant", ps->tsc_invariant);
    gp__jw_kv_double(&w, "sampling", c->sampling);
    gp__jw_kv_int(&w, "ranges", (int64_t)ps->ranges);
    gp__jw_kv_int(&w, "dropped", (int64_t)ps->dropped);
    gp__jw_kv_int(&w, "sampled_out", (int64_t)ps->sampled_out);
    gp__jw_kv_int(&w, "threads", (int64_t)ps->threads);
    gp__jw_kv_double(&w, "overhead_ns_per_range", ps->overhead_ns);
    gp__jw_key(&w, "summary");
    gp__jw_arr_begin(&w);
    const gp_kind_summary *ks = &sum->kinds[GP_EV_RANGE];
    for (size_t i = 0; i < ks->n_rows; i++) {
        const gp_name_stats *r = &ks->rows[i];
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
    gp_summary_free(sum);
    gp__jw_key(&w, "cuda_timers");
    gp__buf tb = {0};
    st = gp__timer_json(&c->p->timer, &tb);
    if (st == GP_OK)
        gp__jw_raw(&w, tb.data, tb.len);
    gp__buf_free(&tb);
    gp__jw_key(&w, "memory");
    gp__buf mb = {0};
    if (st == GP_OK)
        st = gp__mem_json(&c->p->mem, &mb);
    if (st == GP_OK)
        gp__jw_raw(&w, mb.data, mb.len);
    gp__buf_free(&mb);
    gp__jw_obj_end(&w);
    size_t len = 0;
    char *text = gp__jw_take(&w, &len);
    if (st == GP_OK)
        st = text ? gp__buf_append(out, text, len) : GP_ENOMEM;
    if (st == GP_OK)
        st = gp__buf_terminate(out);
    free(text);
    return st;
}

gp_status gp_profiler_to_trace(gp_profiler *p, gp_trace **out)
{
    p = gp__prof_resolve(p);
    if (!p)
        return GP_ENOMEM;
    gp_profiler_stats ps;
    gp_profiler_get_stats(p, &ps); /* flushes */
    build_ctx c;
    memset(&c, 0, sizeof(c));
    c.p = p;
    c.pair_cost = ps.overhead_ns;
    gp_status st = gp__mem_snapshot(&p->mem, &c.hist, &c.n_hist, &c.samples, &c.n_samples);
    if (st != GP_OK)
        return st;
    pthread_mutex_lock(&p->mem.lock);
    c.hist_base = p->mem.hist_base;
    pthread_mutex_unlock(&p->mem.lock);
    st = gp_trace_create("gpuprof profiler", &c.t);
    if (st != GP_OK)
        goto fail_unlocked;
    pthread_mutex_lock(&p->lock);
    gp__prof_flush_locked(p);
    gp__prof_resolve_gpu_locked(p, true);
    ps.ranges = p->n_recs;
    c.sampling = p->sampling;
    st = gp__imap_init(&c.track_of, p->n_threads + 1);
    if (st != GP_OK)
        goto fail;
    st = compute_nesting(p, &c.nest);
    if (st != GP_OK)
        goto fail;
    for (size_t i = 0; i < p->n_recs && st == GP_OK; i++)
        st = add_range(&c, i);
    pthread_mutex_unlock(&p->lock);
    if (st == GP_OK)
        st = add_counters(&c);
    if (st == GP_OK)
        st = gp_trace_finish(c.t);
    if (st == GP_OK) {
        gp__buf meta = {0};
        st = profile_meta(&c, &ps, &meta);
        if (st == GP_OK)
            st = gp_trace_set_meta(c.t, "gpuprof_profile", meta.data);
        gp__buf_free(&meta);
    }
    goto done;
fail:
    pthread_mutex_unlock(&p->lock);
fail_unlocked:
done:
    gp__imap_free(&c.track_of);
    free(c.nest);
    free(c.hist);
    free(c.samples);
    if (st != GP_OK) {
        gp_trace_free(c.t);
        return st;
    }
    *out = c.t;
    return GP_OK;
}

/* ---- reports ------------------------------------------------------------------------------- */

static gp_status print_table(gp_profiler *p, FILE *fp, size_t top_rows, size_t top_n)
{
    gp_trace *t = NULL;
    gp_status st = gp_profiler_to_trace(p, &t);
    if (st != GP_OK)
        return st;
    if (gp_trace_event_count(t) == 0) {
        gp_trace_free(t);
        return GP_EEMPTY;
    }
    gp_summary_opts so;
    gp_summary_opts_init(&so);
    so.kinds = 1u << GP_EV_RANGE;
    if (top_n)
        so.top_n = top_n;
    gp_summary *s = NULL;
    st = gp_summary_compute(&t, 1, &so, &s);
    if (st == GP_OK) {
        gp_summary_render_opts ro;
        memset(&ro, 0, sizeof(ro));
        ro.top_n = top_rows;
        st = gp_summary_render_text(s, &ro, fp);
        gp_profiler_stats ps;
        gp_profiler_get_stats(p, &ps);
        if (st == GP_OK && (ps.dropped || ps.sampled_out))
            fprintf(fp, "dropped ranges: %" PRIu64 ", sampled out: %" PRIu64 "\n", ps.dropped,
                    ps.sampled_out);
    }
    gp_summary_free(s);
    gp_trace_free(t);
    return st == GP_OK && ferror(fp) ? GP_EIO : st;
}

gp_status gp_profiler_print_summary(gp_profiler *p, FILE *fp)
{
    return print_table(p, fp, 0, 0);
}

gp_status gp_profiler_print_bottlenecks(gp_profiler *p, FILE *fp, size_t n)
{
    if (n == 0)
        n = 10;
    return print_table(p, fp, n, n);
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
    pthread_mutex_lock(&p->lock);
    gp__prof_flush_locked(p);
    gp__prof_resolve_gpu_locked(p, true);
    nest_info *ni = NULL;
    gp_range_breakdown *rows = NULL;
    size_t n = 0, cap = 0;
    gp__imap by_name; /* interned name pointer -> row */
    gp_status st = gp__imap_init(&by_name, 64);
    if (st == GP_OK)
        st = compute_nesting(p, &ni);
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
        b->overhead_ns += (gp_ns)(pair * ni[i].descendants + 0.5);
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
    pthread_mutex_unlock(&p->lock);
    free(ni);
    gp__imap_free(&by_name);
    if (st != GP_OK) {
        free(rows);
        return st;
    }
    for (size_t i = 0; i < n; i++) {
        gp_ns basis = rows[i].gpu_ns > 0 ? rows[i].gpu_ns : rows[i].wall_ns;
        rows[i].gbps = rows[i].bytes >= 0 && basis > 0 ? (double)rows[i].bytes / (double)basis : -1;
    }
    qsort(rows, n, sizeof(*rows), cmp_breakdown);
    *rows_out = rows;
    *n_out = n;
    return GP_OK;
}

static void ms_or_na(FILE *fp, gp_ns v)
{
    if (v < 0)
        fprintf(fp, " %-13s", "n/a");
    else
        fprintf(fp, " %-13.3f", (double)v / 1e6);
}

gp_status gp_range_breakdown_render_text(const gp_range_breakdown *rows, size_t n, FILE *fp)
{
    const int nw = 40, width = 40 + 1 + 8 + 6 * 14 + 8;
    for (int i = 0; i < width; i++)
        fputc('=', fp);
    fprintf(fp, "\nRANGE TIME BREAKDOWN\n");
    for (int i = 0; i < width; i++)
        fputc('=', fp);
    fprintf(fp, "\n%-*s %-8s %-13s %-13s %-13s %-13s %-13s %s\n", nw, "Name", "Calls", "Wall (ms)",
            "GPU (ms)", "CPU (ms)", "Transfer (ms)", "Overhead (us)", "GB/s");
    for (int i = 0; i < width; i++)
        fputc('-', fp);
    fputc('\n', fp);
    for (size_t i = 0; i < n; i++) {
        const gp_range_breakdown *r = &rows[i];
        char name[256];
        gp_shorten_name(r->name, (size_t)nw, name, sizeof name);
        fprintf(fp, "%-*s %-8" PRIu64, nw, name, r->calls);
        ms_or_na(fp, r->wall_ns);
        ms_or_na(fp, r->gpu_ns);
        ms_or_na(fp, r->cpu_ns);
        ms_or_na(fp, r->transfer_ns);
        fprintf(fp, " %-13.3f", (double)r->overhead_ns / 1e3);
        if (r->gbps < 0)
            fprintf(fp, " n/a\n");
        else
            fprintf(fp, " %.3f\n", r->gbps);
    }
    for (int i = 0; i < width; i++)
        fputc('=', fp);
    fputc('\n', fp);
    return ferror(fp) ? GP_EIO : GP_OK;
}

gp_status gp_profiler_print_breakdown(gp_profiler *p, FILE *fp)
{
    gp_range_breakdown *rows = NULL;
    size_t n = 0;
    gp_status st = gp_profiler_breakdown(p, &rows, &n);
    if (st == GP_OK)
        st = n ? gp_range_breakdown_render_text(rows, n, fp) : GP_EEMPTY;
    free(rows);
    return st;
}

/* ---- exports ------------------------------------------------------------------------------- */

gp_status gp_profiler_export_json(gp_profiler *p, const char *path, gp_error *err)
{
    gp_trace *t = NULL;
    gp_status st = gp_profiler_to_trace(p, &t);
    if (st != GP_OK)
        return gp_error_set(err, st, "%s: cannot build the profile: %s", path, gp_strerror(st));
    st = gp_trace_write_chrome(t, path, err);
    gp_trace_free(t);
    return st;
}

gp_status gp_profiler_export_chrome(gp_profiler *p, const char *path, gp_error *err)
{
    return gp_profiler_export_json(p, path, err);
}

gp_status gp_profiler_export_folded(gp_profiler *p, const char *path, gp_error *err)
{
    p = gp__prof_resolve(p);
    if (!p)
        return gp_error_set(err, GP_ENOMEM, "out of memory");
    gp__strtab paths;
    if (gp__strtab_init(&paths) != GP_OK)
        return gp_error_set(err, GP_ENOMEM, "out of memory");
    int64_t *self_ns = NULL;
    size_t cap_self = 0;
    nest_info *ni = NULL;
    char **path_of = NULL;
    gp__buf line = {0};
    gp_status st;
    pthread_mutex_lock(&p->lock);
    gp__prof_flush_locked(p);
    st = compute_nesting(p, &ni);
    if (st == GP_OK) {
        path_of = calloc(p->n_recs + 1, sizeof(*path_of));
        if (!path_of)
            st = GP_ENOMEM;
    }
    /* Parents start before children: walk in start order so a parent's path exists. */
    uint32_t *order = NULL;
    if (st == GP_OK) {
        order = malloc((p->n_recs + 1) * sizeof(*order));
        if (!order)
            st = GP_ENOMEM;
    }
    if (st == GP_OK) {
        for (size_t i = 0; i < p->n_recs; i++)
            order[i] = (uint32_t)i;
        pthread_mutex_lock(&g_sort_lock);
        g_sort_recs = p->recs;
        qsort(order, p->n_recs, sizeof(*order), cmp_nest);
        pthread_mutex_unlock(&g_sort_lock);
    }
    for (size_t k = 0; k < p->n_recs && st == GP_OK; k++) {
        uint32_t i = order[k];
        const gp__prof_srec *r = &p->recs[i];
        line.len = 0;
        if (ni[i].parent) {
            const char *pp = path_of[ni[i].parent - 1];
            st = gp__buf_append(&line, pp, strlen(pp));
            if (st == GP_OK)
                st = gp__buf_append(&line, ";", 1);
        }
        const char *name = rec_name(p, r);
        for (const char *q = name; *q && st == GP_OK; q++) { /* ';' and spaces would split */
            char ch = (*q == ';' || *q == ' ' || *q == '\n') ? '_' : *q;
            st = gp__buf_append(&line, &ch, 1);
        }
        uint32_t id = 0;
        if (st == GP_OK)
            st = gp__strtab_intern(&paths, line.data, line.len, &id);
        if (st != GP_OK)
            break;
        path_of[i] = (char *)gp__strtab_get(&paths, id);
        if (id >= cap_self) {
            size_t old = cap_self;
            st = gp__grow((void **)&self_ns, &cap_self, sizeof(*self_ns), id + 1);
            if (st != GP_OK)
                break;
            memset(self_ns + old, 0, (cap_self - old) * sizeof(*self_ns));
        }
        int64_t self = (r->t1 - r->t0) - ni[i].child_ns;
        self_ns[id] += self > 0 ? self : 0;
    }
    pthread_mutex_unlock(&p->lock);
    free(order);
    free(path_of);
    free(ni);
    gp__buf_free(&line);
    if (st == GP_OK) {
        gp__afile f;
        st = gp__afile_open(&f, path, err);
        if (st == GP_OK) {
            for (uint32_t id = 1; id < paths.n; id++)
                if (id < cap_self && self_ns[id] > 0)
                    fprintf(f.fp, "%s %" PRId64 "\n", gp__strtab_get(&paths, id), self_ns[id]);
            st = gp__afile_commit(&f, err);
        }
    } else {
        gp_error_set(err, st, "%s: %s", path, gp_strerror(st));
    }
    free(self_ns);
    gp__strtab_free(&paths);
    return st;
}

const char *gp__prof_open_range_at(gp_profiler *p, int64_t ns)
{
    if (!p)
        return NULL;
    pthread_mutex_lock(&p->lock);
    gp__prof_flush_locked(p);
    const gp__prof_srec *best = NULL;
    for (size_t i = 0; i < p->n_recs; i++) {
        const gp__prof_srec *r = &p->recs[i];
        if (r->t0 <= ns && ns <= r->t1 &&
            (!best || r->depth > best->depth || (r->depth == best->depth && r->t0 > best->t0)))
            best = r;
    }
    const char *name = best ? rec_name(p, best) : NULL;
    pthread_mutex_unlock(&p->lock);
    return name;
}
