/* The byte format of a partial result's rank record (docs/jobs.md, "Partial results"): one
 * visitor per struct that writes a value or reads it back, so that the two directions cannot
 * disagree. Little-endian, no padding; strings are a u32 length, the bytes and a NUL, and a
 * decoded string points into the buffer (which must outlive the decoded structs). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/partial_internal.h"
#include "core/util.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "partials are little-endian");

#define NULL_STR UINT32_MAX

void gp__ser_raw(gp__ser *c, void *v, size_t n)
{
    if (c->bad)
        return;
    if (!c->rd) {
        if (gp__grow((void **)&c->buf, &c->cap, 1, c->len + n) != GP_OK) {
            c->bad = c->nomem = true;
            return;
        }
        memcpy(c->buf + c->len, v, n);
        c->len += n;
        return;
    }
    if (c->end - c->at < n) {
        c->bad = true;
        return;
    }
    memcpy(v, c->p + c->at, n);
    c->at += n;
}

void gp__ser_i64(gp__ser *c, int64_t *v)
{
    gp__ser_raw(c, v, sizeof *v);
}

void gp__ser_u64(gp__ser *c, uint64_t *v)
{
    gp__ser_raw(c, v, sizeof *v);
}

void gp__ser_i32(gp__ser *c, int32_t *v)
{
    gp__ser_raw(c, v, sizeof *v);
}

void gp__ser_u32(gp__ser *c, uint32_t *v)
{
    gp__ser_raw(c, v, sizeof *v);
}

void gp__ser_f64(gp__ser *c, double *v)
{
    gp__ser_raw(c, v, sizeof *v); /* the bits: NaN and -0 come back as they were */
}

void gp__ser_bool(gp__ser *c, bool *v)
{
    uint8_t b = *v ? 1 : 0;
    gp__ser_raw(c, &b, 1);
    if (c->rd && !c->bad) {
        if (b > 1)
            c->bad = true;
        else
            *v = b;
    }
}

/* An enum or small number below max as one byte. */
static unsigned ser_small(gp__ser *c, unsigned v, unsigned max)
{
    uint8_t b = (uint8_t)v;
    gp__ser_raw(c, &b, 1);
    if (c->rd && !c->bad && b >= max)
        c->bad = true;
    return c->bad ? 0 : b;
}
#define SER_ENUM(c, x, max) ((x) = ser_small((c), (unsigned)(x), (max)))

void gp__ser_size(gp__ser *c, size_t *v)
{
    uint64_t n = *v;
    gp__ser_u64(c, &n);
    if (c->rd && !c->bad) {
        if (n > SIZE_MAX)
            c->bad = true;
        else
            *v = (size_t)n;
    }
}

void gp__ser_str(gp__ser *c, const char **s, bool nullable)
{
    if (!c->rd) {
        uint32_t n = *s ? (uint32_t)strlen(*s) : NULL_STR;
        gp__ser_u32(c, &n);
        if (*s)
            gp__ser_raw(c, (void *)*s, (size_t)n + 1);
        return;
    }
    uint32_t n = 0;
    gp__ser_u32(c, &n);
    if (c->bad)
        return;
    if (n == NULL_STR) {
        *s = NULL;
        c->bad = !nullable;
        return;
    }
    if (c->end - c->at <= n || c->p[c->at + n] != '\0' || memchr(c->p + c->at, 0, n)) {
        c->bad = true;
        return;
    }
    *s = (const char *)c->p + c->at;
    c->at += (size_t)n + 1;
}

/* A NUL-terminated char array of capacity cap. */
static void ser_chars(gp__ser *c, char *buf, size_t cap)
{
    const char *s = buf;
    gp__ser_str(c, &s, false);
    if (c->rd && !c->bad) {
        size_t n = strlen(s);
        if (n >= cap)
            c->bad = true;
        else
            memcpy(buf, s, n + 1);
    }
}

/* An array's count, and (reading) the array: calloc'ed, each element at least min bytes of the
 * input, so that a count no input could hold is refused before allocating. */
static bool ser_arr(gp__ser *c, void **arr, size_t *n, size_t elem, size_t min)
{
    gp__ser_size(c, n);
    if (c->bad)
        return false;
    if (!c->rd)
        return true;
    *arr = NULL;
    if (*n == 0)
        return true;
    if (*n > (c->end - c->at) / min) {
        c->bad = true;
        return false;
    }
    if (!(*arr = calloc(*n, elem))) {
        c->bad = c->nomem = true;
        return false;
    }
    return true;
}
#define SER_ARR(c, a, n, min) ser_arr((c), (void **)&(a), &(n), sizeof *(a), (min))

static void ser_series(gp__ser *c, gp_series_point **s, size_t *n)
{
    if (SER_ARR(c, *s, *n, 16))
        for (size_t i = 0; i < *n && !c->bad; i++) {
            gp__ser_i64(c, &(*s)[i].t);
            gp__ser_f64(c, &(*s)[i].v);
        }
}

static void ser_error(gp__ser *c, gp_error *e)
{
    int32_t st = (int32_t)e->status;
    gp__ser_i32(c, &st);
    e->status = (gp_status)st;
    ser_chars(c, e->msg, sizeof e->msg);
}

static void ser_temporal(gp__ser *c, gp_temporal *t)
{
    gp__ser_bool(c, &t->valid);
    gp__ser_i64(c, &t->kernel_time);
    gp__ser_i64(c, &t->idle);
    gp__ser_i64(c, &t->compute);
    gp__ser_i64(c, &t->non_compute);
    gp__ser_f64(c, &t->idle_pct);
    gp__ser_f64(c, &t->compute_pct);
    gp__ser_f64(c, &t->non_compute_pct);
}

static void ser_idle(gp__ser *c, gp_rank_analysis *r)
{
    if (!SER_ARR(c, r->idle, r->n_idle, 12))
        return;
    for (size_t i = 0; i < r->n_idle && !c->bad; i++) {
        gp_idle_stream *s = &r->idle[i];
        gp__ser_i32(c, &s->device);
        gp__ser_i64(c, &s->stream);
        for (int k = 0; k < GP_IDLE_COUNT; k++) {
            gp__ser_i64(c, &s->idle[k]);
            gp__ser_u64(c, &s->gaps[k]);
            gp__ser_bool(c, &s->present[k]);
            gp__ser_f64(c, &s->ratio[k]);
        }
        gp__ser_i64(c, &s->total);
    }
}

static void ser_types(gp__ser *c, gp_rank_analysis *r)
{
    if (!SER_ARR(c, r->types, r->n_types, 4))
        return;
    for (size_t i = 0; i < r->n_types && !c->bad; i++) {
        gp_type_state *t = &r->types[i];
        gp__ser_u32(c, &t->mask);
        ser_chars(c, t->label, sizeof t->label);
        gp__ser_i64(c, &t->time);
        gp__ser_f64(c, &t->pct);
    }
}

static void ser_kernels(gp__ser *c, gp_rank_analysis *r)
{
    if (!SER_ARR(c, r->kernels, r->n_kernels, 8))
        return;
    for (size_t i = 0; i < r->n_kernels && !c->bad; i++) {
        gp_kernel_row *k = &r->kernels[i];
        gp__ser_str(c, &k->name, false);
        gp__ser_bool(c, &k->others);
        SER_ENUM(c, k->type, GP_KT_COUNT);
        gp__ser_i32(c, &k->rank);
        gp__ser_u64(c, &k->count);
        gp__ser_i64(c, &k->sum);
        gp__ser_i64(c, &k->max);
        gp__ser_i64(c, &k->min);
        gp__ser_f64(c, &k->mean);
        gp__ser_f64(c, &k->stddev);
    }
}

static void ser_launch(gp__ser *c, gp_launch_stats *l)
{
    if (SER_ARR(c, l->apis, l->n_apis, 8))
        for (size_t i = 0; i < l->n_apis && !c->bad; i++) {
            gp_launch_api *a = &l->apis[i];
            gp__ser_str(c, &a->name, false);
            gp__ser_bool(c, &a->driver);
            gp__ser_u64(c, &a->calls);
            gp__ser_u64(c, &a->matched);
            gp__ser_i64(c, &a->cpu_total);
            gp__ser_f64(c, &a->cpu_mean);
            gp__ser_i64(c, &a->cpu_p50);
            gp__ser_i64(c, &a->cpu_p95);
            gp__ser_i64(c, &a->cpu_max);
            gp__ser_f64(c, &a->delay_mean);
            gp__ser_i64(c, &a->delay_p50);
            gp__ser_i64(c, &a->delay_p95);
            gp__ser_i64(c, &a->delay_max);
            gp__ser_i64(c, &a->delay_min);
            gp__ser_u64(c, &a->cpu_outliers);
            gp__ser_u64(c, &a->delay_outliers);
            gp__ser_u64(c, &a->negative_delay);
        }
    gp__ser_u64(c, &l->launches);
    gp__ser_u64(c, &l->matched);
    gp__ser_u64(c, &l->gpu_unmatched);
    gp__ser_u64(c, &l->graph_launches);
    gp__ser_u64(c, &l->graph_kernels);
    if (SER_ARR(c, l->outliers, l->n_outliers, 8))
        for (size_t i = 0; i < l->n_outliers && !c->bad; i++) {
            gp_launch_outlier *o = &l->outliers[i];
            gp__ser_str(c, &o->api, false);
            gp__ser_str(c, &o->kernel, false);
            gp__ser_i64(c, &o->ts);
            gp__ser_i64(c, &o->cpu_dur);
            gp__ser_i64(c, &o->delay);
            gp__ser_bool(c, &o->by_delay);
        }
}

static void ser_queues(gp__ser *c, gp_rank_analysis *r)
{
    if (!SER_ARR(c, r->queues, r->n_queues, 12))
        return;
    for (size_t i = 0; i < r->n_queues && !c->bad; i++) {
        gp_queue_stream *q = &r->queues[i];
        gp__ser_i32(c, &q->device);
        gp__ser_i64(c, &q->stream);
        gp__ser_u64(c, &q->launches);
        gp__ser_i64(c, &q->max_len);
        gp__ser_f64(c, &q->mean_len);
        ser_series(c, &q->series, &q->n_series);
    }
}

static void ser_bandwidth_activity(gp__ser *c, gp_rank_analysis *r)
{
    gp_bandwidth *b = &r->bandwidth;
    gp__ser_u64(c, &b->copies);
    gp__ser_i64(c, &b->bytes);
    gp__ser_i64(c, &b->busy);
    gp__ser_f64(c, &b->mean_gbps);
    ser_series(c, &b->series, &b->n_series);
    gp__ser_u64(c, &b->pageable);
    gp_activity *a = &r->activity;
    gp__ser_i64(c, &a->span);
    gp__ser_i64(c, &a->cpu_active);
    gp__ser_i64(c, &a->gpu_active);
    gp__ser_i64(c, &a->overlap);
    gp__ser_i64(c, &a->sync);
    gp__ser_u64(c, &a->syncs);
}

static void ser_memory(gp__ser *c, gp_rank_analysis *r)
{
    if (!SER_ARR(c, r->memory, r->n_memory, 16))
        return;
    for (size_t i = 0; i < r->n_memory && !c->bad; i++) {
        gp_memory_device *m = &r->memory[i];
        gp__ser_i32(c, &m->device_type);
        gp__ser_i32(c, &m->device_id);
        gp__ser_u64(c, &m->events);
        gp__ser_i64(c, &m->peak_allocated);
        gp__ser_i64(c, &m->peak_ts);
        gp__ser_i64(c, &m->peak_reserved);
        gp__ser_i64(c, &m->final_allocated);
        gp__ser_str(c, &m->running_cpu, true);
        gp__ser_str(c, &m->running_gpu, true);
        gp__ser_i64(c, &m->capacity);
        size_t n = m->n_series;
        ser_series(c, &m->allocated, &m->n_series);
        ser_series(c, &m->reserved, &n);
        if (n != m->n_series)
            c->bad = true;
    }
}

static void ser_critical_paths(gp__ser *c, gp_rank_analysis *r)
{
    if (!SER_ARR(c, r->critical_paths, r->n_critical_paths, 16))
        return;
    for (size_t i = 0; i < r->n_critical_paths && !c->bad; i++) {
        gp_critical_path *p = &r->critical_paths[i];
        gp__ser_i64(c, &p->step);
        gp__ser_str(c, &p->region, true);
        gp__ser_i64(c, &p->start);
        gp__ser_i64(c, &p->end);
        gp__ser_bool(c, &p->valid);
        ser_chars(c, p->note, sizeof p->note);
        gp__ser_i64(c, &p->length);
        for (int k = 0; k < GP_CP_COUNT; k++) {
            gp__ser_i64(c, &p->by_class[k]);
            gp__ser_f64(c, &p->pct[k]);
        }
        if (SER_ARR(c, p->top, p->n_top, 8))
            for (size_t k = 0; k < p->n_top && !c->bad; k++) {
                gp_cp_event *e = &p->top[k];
                gp__ser_str(c, &e->name, false);
                SER_ENUM(c, e->kind, GP_EV_KIND_COUNT);
                SER_ENUM(c, e->cls, GP_CP_COUNT);
                gp__ser_i64(c, &e->time);
                gp__ser_u64(c, &e->count);
                gp__ser_str(c, &e->python, true);
            }
        /* The events and links point into the trace: only their number travels (the analysis
         * tables show it; overlays are drawn from a trace, never from a partial). */
        gp__ser_size(c, &p->n_events);
        if (c->rd) {
            p->events = NULL;
            p->links = NULL;
            p->n_links = 0;
        }
    }
}

static void ser_idle_causes(gp__ser *c, gp_rank_analysis *r)
{
    if (!SER_ARR(c, r->idle_causes, r->n_idle_causes, 16))
        return;
    for (size_t i = 0; i < r->n_idle_causes && !c->bad; i++) {
        gp_idle_causes *ic = &r->idle_causes[i];
        gp__ser_i32(c, &ic->device);
        gp__ser_i64(c, &ic->stream);
        gp__ser_i64(c, &ic->idle);
        for (int k = 0; k < GP_IC_COUNT; k++) {
            gp__ser_i64(c, &ic->by_cause[k]);
            gp__ser_f64(c, &ic->share[k]);
            gp__ser_str(c, &ic->top_what[k], true);
            gp__ser_i64(c, &ic->top_time[k]);
        }
    }
}

static void ser_step_parts(gp__ser *c, gp_rank_analysis *r)
{
    if (!SER_ARR(c, r->step_parts, r->n_step_parts, 24))
        return;
    for (size_t i = 0; i < r->n_step_parts && !c->bad; i++) {
        gp_step_breakdown *b = &r->step_parts[i];
        gp__ser_i64(c, &b->step);
        gp__ser_i64(c, &b->start);
        gp__ser_i64(c, &b->end);
        for (int k = 0; k < GP_SP_COUNT; k++)
            gp__ser_i64(c, &b->part[k]);
    }
}

void gp__ser_rank(gp__ser *c, gp_rank_analysis *r)
{
    gp__ser_i32(c, &r->rank);
    gp__ser_str(c, &r->source, false);
    ser_error(c, &r->note);
    gp__ser_u64(c, &r->gpu_events);
    gp__ser_u64(c, &r->cpu_events);
    gp__ser_i64(c, &r->steps_total);
    gp__ser_i64(c, &r->steps_kept);
    gp__ser_u64(c, &r->stream_overlaps);
    gp__ser_i64(c, &r->max_stream_overlap);
    gp__ser_u64(c, &r->rounded_negative);
    gp__ser_bool(c, &r->rounded_negative_empty);
    ser_temporal(c, &r->temporal);
    ser_idle(c, r);
    ser_types(c, r);
    ser_kernels(c, r);
    gp__ser_i64(c, &r->overlap.comm);
    gp__ser_i64(c, &r->overlap.comp);
    gp__ser_i64(c, &r->overlap.overlap);
    gp__ser_f64(c, &r->overlap.pct);
    ser_launch(c, &r->launch);
    ser_queues(c, r);
    ser_bandwidth_activity(c, r);
    ser_memory(c, r);
    gp_peak_memory *pm = &r->peak_memory;
    SER_ENUM(c, pm->source, GP_PEAK_COUNTER + 1);
    gp__ser_i64(c, &pm->bytes);
    gp__ser_i64(c, &pm->ts);
    gp__ser_str(c, &pm->what, true);
    gp__ser_u64(c, &r->small_kernels);
    gp__ser_i64(c, &r->small_kernels_time);
    gp__ser_u64(c, &r->kernels_total);
    gp__ser_i64(c, &r->kernels_time);
    gp__ser_str(c, &r->low_occ_kernel, true);
    gp__ser_f64(c, &r->low_occ_pct);
    gp__ser_i64(c, &r->low_occ_time);
    ser_critical_paths(c, r);
    ser_idle_causes(c, r);
    ser_step_parts(c, r);
}

void gp__ser_finding(gp__ser *c, gp_finding *f)
{
    gp__ser_str(c, &f->rule, false);
    gp__ser_i32(c, &f->rank);
    size_t n = f->n_evidence;
    gp__ser_size(c, &n);
    if (c->bad || n > GP_ARRAY_LEN(f->evidence)) {
        c->bad = true;
        return;
    }
    f->n_evidence = n;
    for (size_t i = 0; i < n; i++) {
        gp__ser_str(c, &f->evidence[i].name, false);
        gp__ser_f64(c, &f->evidence[i].value);
        SER_ENUM(c, f->evidence[i].unit, GP_FU_COUNT + 1);
    }
    n = f->n_objects;
    gp__ser_size(c, &n);
    if (c->bad || n > GP_ARRAY_LEN(f->objects)) {
        c->bad = true;
        return;
    }
    f->n_objects = n;
    for (size_t i = 0; i < n; i++) {
        gp_finding_object *o = &f->objects[i];
        SER_ENUM(c, o->kind, GP_OBJ_KIND_COUNT);
        ser_chars(c, o->name, sizeof o->name);
        ser_chars(c, o->frame, sizeof o->frame);
        gp__ser_i64(c, &o->time);
        gp__ser_u64(c, &o->count);
        gp__ser_f64(c, &o->roof);
    }
    gp__ser_i64(c, &f->gain_ns);
    SER_ENUM(c, f->type, GP_SUG_PARALLELIZATION + 1);
    SER_ENUM(c, f->priority, GP_PRIO_LOW + 1);
    f->variant = (uint8_t)ser_small(c, f->variant, 256);
    gp__ser_bool(c, &f->cause);
    gp__ser_i64(c, &f->current_ns);
    gp__ser_i64(c, &f->estimated_ns);
}

void gp__ser_coll_record(gp__ser *c, gp__coll_record *r)
{
    gp__ser_i32(c, &r->rank);
    gp__ser_bool(c, &r->dist_claims);
    gp__ser_i32(c, &r->dist_rank);
    gp__ser_str(c, &r->source, false);
    gp__ser_str(c, &r->device, false);
    gp__ser_i32(c, &r->n_devices);
    gp__ser_i64(c, &r->steps);
    if (!SER_ARR(c, r->k, r->n_k, 40))
        return;
    for (size_t i = 0; i < r->n_k && !c->bad; i++) {
        gp__coll_kern *k = &r->k[i];
        gp__ser_i64(c, &k->ts);
        gp__ser_i64(c, &k->dur);
        gp__ser_str(c, &k->kernel, false);
        gp__ser_str(c, &k->collective, true);
        gp__ser_str(c, &k->pg_name, true);
        gp__ser_str(c, &k->dtype, false);
        gp__ser_i64(c, &k->in_nelems);
        gp__ser_i64(c, &k->out_nelems);
        gp__ser_i32(c, &k->group_size);
        gp__ser_bool(c, &k->has_info);
        gp__ser_u32(c, &k->track);
        gp__ser_u64(c, &k->pos);
    }
}
