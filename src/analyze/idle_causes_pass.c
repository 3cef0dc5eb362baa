/* Idle causes in one pass per launching thread (docs/internals/analyze.md, "Idle causes"), and
 * the time per (cause, name) that both ways of filling the rows accumulate.
 *
 * When every row is named (its walk fits the budget whatever it is), a thread's segments need not
 * be stored: they are made once, in time order, and each is attributed as it comes to the rows
 * whose current idle interval on that thread it overlaps (rows not yet in an interval wait in a
 * heap by start; at most one interval per row is open, as a row's intervals are disjoint). The
 * stored timelines (16 bytes a segment: 19 MB on large_v100_nccl x7) were the analyses' largest
 * working set. A row whose intervals change thread is resumed at each run of intervals on the
 * thread being passed (a copy of its cursor per run, found in a first sweep): every interval is
 * made at most twice more. Sums of integer times, so the figures are exactly the stored
 * timelines' (tests/analyze/check_idle_causes_pass.sh compares the two on every trace). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/idle_causes_internal.h"
#include "core/msort.h"

static gp_status acc_grow(gp__ic_acc *m)
{
    size_t cap = m->cap ? m->cap * 2 : 16;
    uint64_t *key = calloc(cap, sizeof *key);
    gp_ns *time = calloc(cap, sizeof *time);
    if (!key || !time) {
        free(key);
        free(time);
        return GP_ENOMEM;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->key[i])
            continue;
        size_t j = gp__hash_u64(m->key[i]) & (cap - 1);
        while (key[j])
            j = (j + 1) & (cap - 1);
        key[j] = m->key[i];
        time[j] = m->time[i];
    }
    free(m->key);
    free(m->time);
    m->key = key;
    m->time = time;
    m->cap = cap;
    return GP_OK;
}

gp_ns *gp__ic_acc_slot(gp__ic_acc *m, int cause, gp_strid name, bool *added)
{
    if ((m->n + 1) * 2 > m->cap && acc_grow(m) != GP_OK)
        return NULL;
    uint64_t k = ((uint64_t)cause << 32 | name) + 1;
    size_t j = gp__hash_u64(k) & (m->cap - 1);
    while (m->key[j] && m->key[j] != k)
        j = (j + 1) & (m->cap - 1);
    *added = !m->key[j];
    if (*added) {
        m->key[j] = k;
        m->n++;
    }
    return &m->time[j];
}

gp_status gp__ic_acc_add(gp__ic_acc *m, int cause, gp_strid name, gp_ns d)
{
    bool added;
    gp_ns *t = gp__ic_acc_slot(m, cause, name, &added);
    if (!t)
        return GP_ENOMEM;
    *t += d;
    return GP_OK;
}

void gp__ic_acc_free(gp__ic_acc *m)
{
    free(m->key);
    free(m->time);
    memset(m, 0, sizeof *m);
}

void gp__ic_top_names(const gp_trace *t, gp_idle_causes *r, const gp__ic_acc *names)
{
    gp_strid best[GP_IC_COUNT] = {0};
    for (size_t i = 0; i < names->cap; i++) {
        if (!names->key[i])
            continue;
        uint64_t key = names->key[i] - 1;
        int cause = (int)(key >> 32);
        gp_strid name = (gp_strid)(key & 0xffffffff);
        gp_ns time = names->time[i];
        if (time > r->top_time[cause] ||
            (time == r->top_time[cause] &&
             strcmp(gp_trace_str(t, name), gp_trace_str(t, best[cause])) < 0)) {
            r->top_time[cause] = time;
            best[cause] = name;
        }
    }
    for (int k = 0; k < GP_IC_COUNT; k++)
        r->top_what[k] = gp_trace_str(t, best[k]);
}

void gp__ic_shares(gp_idle_causes *row)
{
    for (int k = 0; k < GP_IC_COUNT; k++) {
        row->share[k] = row->idle > 0 ? (double)row->by_cause[k] / (double)row->idle : NAN;
        row->top_what[k] = "";
    }
}

/* The most runs of intervals on one thread, all rows together, for the one-pass fill (each a
 * cursor, 56 bytes): past it the stored timelines fill the rows. */
#define RUNS_MAX ((size_t)1 << 16)
/* Dense times per pair, all rows together, before a row adds to its names by hash instead. */
#define DENSE_MAX ((size_t)1 << 19)

/* A run of a row's intervals on one thread: the row's cursor before its first. */
typedef struct run {
    uint32_t thread;
    uint32_t row;
    gp__ic_cursor k;
} run;

static int cmp_run(const run *p, const run *q)
{
    return GP_CMP(p->thread, q->thread);
}
GP__DEFINE_MERGE_SORT(sort_runs, run, cmp_run) /* stable: a row's runs stay in time order */

/* A row during the pass over one thread: its cursor, its current interval [s, e) on the thread,
 * its runs left on it [next, end), and its time per pair of the thread (pt, dense, the pairs it
 * made nonzero in hot). */
typedef struct srow {
    gp__ic_row *row;
    gp_ns *by_cause; /* row->out->by_cause */
    gp__ic_cursor k;
    bool live; /* k is inside a run on the thread */
    size_t next, end;
    gp_ns s, e;
    gp_ns *pt;
    size_t cap_pt;
    uint32_t *hot;
    size_t n_hot, cap_hot;
} srow;

typedef struct pass {
    gp__ic_ctx *c;
    const gp__ic_sweep *sw;
    uint32_t thread;
    const run *runs;
    gp__ic_pairs pairs; /* the thread's */
    srow *r;
    uint32_t *heap; /* rows whose next interval has not started, by its start */
    size_t n_heap;
    uint32_t *active; /* rows inside an interval */
    size_t n_active;
    uint32_t *rows; /* the rows with runs on the thread */
    gp_ns last;     /* the end of the last segment attributed: the time after it is unrecorded */
    gp_ns opens;    /* the start of the first interval in the heap (INT64_MAX: none) */
    gp_ns closes;   /* the first end of an active row's interval (INT64_MAX: none) */
    size_t dense;   /* entries of pt, all rows */
} pass;

/* The row's next interval on the pass' thread, from its runs on it. */
static bool next_on(pass *p, srow *r)
{
    for (;;) {
        gp_ns s, e;
        uint32_t thread;
        if (r->live && gp__ic_next(p->sw, &r->k, &s, &e, &thread) && thread == p->thread) {
            r->s = s;
            r->e = e;
            return true;
        }
        if (r->next == r->end) /* an interval on another thread ends a run */
            return false;
        r->k = p->runs[r->next++].k;
        r->live = true;
    }
}

static void heap_push(pass *p, uint32_t x)
{
    size_t i = p->n_heap++;
    while (i > 0 && p->r[p->heap[(i - 1) / 2]].s > p->r[x].s) {
        p->heap[i] = p->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    p->heap[i] = x;
}

static uint32_t heap_pop(pass *p)
{
    uint32_t top = p->heap[0], x = p->heap[--p->n_heap];
    size_t i = 0, n = p->n_heap;
    for (;;) {
        size_t k = 2 * i + 1;
        if (k >= n)
            break;
        if (k + 1 < n && p->r[p->heap[k + 1]].s < p->r[p->heap[k]].s)
            k++;
        if (p->r[p->heap[k]].s >= p->r[x].s)
            break;
        p->heap[i] = p->heap[k];
        i = k;
    }
    if (n > 0)
        p->heap[i] = x;
    return top;
}

/* Adds d of pair to the row's time per name, the pair not yet in its dense times (row_add): in
 * them while they fit DENSE_MAX (all rows), else by hash. */
static gp_status row_add_new(pass *p, srow *r, uint32_t pair, gp_ns d)
{
    if (pair >= r->cap_pt) {
        size_t cap = GP_MAX(GP_MAX((size_t)pair + 1, 2 * r->cap_pt), (size_t)64);
        gp_ns *pt =
            p->dense + (cap - r->cap_pt) <= DENSE_MAX ? realloc(r->pt, cap * sizeof *pt) : NULL;
        if (!pt) {
            uint64_t key = p->pairs.key[pair];
            return gp__ic_acc_add(&r->row->names, (int)(key >> 32), (gp_strid)(key & 0xffffffff),
                                  d);
        }
        memset(pt + r->cap_pt, 0, (cap - r->cap_pt) * sizeof *pt);
        p->dense += cap - r->cap_pt;
        r->pt = pt;
        r->cap_pt = cap;
    }
    if (r->pt[pair] == 0) {
        uint32_t *h = GP_PUSH(r->hot, r->n_hot, r->cap_hot);
        if (!h)
            return GP_ENOMEM;
        *h = pair;
    }
    r->pt[pair] += d;
    return GP_OK;
}

/* Adds d > 0 of pair to the row's time per name. */
static inline gp_status row_add(pass *p, srow *r, uint32_t pair, gp_ns d)
{
    if (pair < r->cap_pt && r->pt[pair] != 0) {
        r->pt[pair] += d;
        return GP_OK;
    }
    return row_add_new(p, r, pair, d);
}

/* The heap's first start and the active rows' first end (attribute's fast path). */
static void bounds(pass *p)
{
    p->opens = p->n_heap > 0 ? p->r[p->heap[0]].s : INT64_MAX;
    p->closes = INT64_MAX;
    for (size_t i = 0; i < p->n_active; i++)
        p->closes = GP_MIN(p->closes, p->r[p->active[i]].e);
}

/* Attributes [a, b) of pair (of cause) to the rows whose interval overlaps it, and moves each row
 * past the intervals that end in it (attribute, when an interval starts or ends in it). */
static gp_status attribute_edges(pass *p, gp_ns a, gp_ns b, uint32_t pair, int cause)
{
    while (p->n_heap > 0 && p->r[p->heap[0]].s < b)
        p->active[p->n_active++] = heap_pop(p);
    for (size_t i = 0; i < p->n_active;) {
        uint32_t x = p->active[i];
        srow *r = &p->r[x];
        bool stays = true;
        for (;;) {
            gp_ns d = GP_MIN(b, r->e) - GP_MAX(a, r->s); /* > 0: r->s < b, r->e > a */
            r->by_cause[cause] += d;
            gp_status st = row_add(p, r, pair, d);
            if (st != GP_OK)
                return st;
            if (r->e > b)
                break; /* the interval goes on into the next segment */
            if (!next_on(p, r)) {
                stays = false;
                break;
            }
            if (r->s >= b) {
                heap_push(p, x);
                stays = false;
                break;
            }
        }
        if (stays)
            i++;
        else
            p->active[i] = p->active[--p->n_active];
    }
    bounds(p);
    return GP_OK;
}

/* Attributes [a, b) of pair (of cause) to the rows whose interval overlaps it. The segments tile
 * the time in order (a is the previous b), so an active row's interval started by a: unless an
 * interval starts or ends in [a, b), every active row gets all of it, and nothing else moves. */
static inline gp_status attribute(pass *p, gp_ns a, gp_ns b, uint32_t pair, int cause)
{
    if (b > p->opens || b >= p->closes)
        return attribute_edges(p, a, b, pair, cause);
    for (size_t i = 0; i < p->n_active; i++) {
        srow *r = &p->r[p->active[i]];
        r->by_cause[cause] += b - a;
        gp_status st = row_add(p, r, pair, b - a);
        if (st != GP_OK)
            return st;
    }
    return GP_OK;
}

/* Segments of the thread (gp__ic_sink), each after the unrecorded time before it. */
static gp_status on_segments(void *arg, const gp__ic_seg *v, size_t n)
{
    pass *p = arg;
    gp_status st = GP_OK;
    for (size_t i = 0; i < n && st == GP_OK; i++) {
        if (v[i].s > p->last)
            st = attribute(p, p->last, v[i].s, 0, GP_IC_UNRECORDED);
        p->last = v[i].e;
        if (st == GP_OK)
            st = attribute(p, v[i].s, v[i].e, v[i].pair, v[i].cause);
    }
    return st;
}

/* Folds each row's times per pair of the thread into its names, and clears them. */
static gp_status fold(pass *p, const uint32_t *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        srow *r = &p->r[rows[i]];
        for (size_t h = 0; h < r->n_hot; h++) {
            uint64_t key = p->pairs.key[r->hot[h]];
            gp_status st = gp__ic_acc_add(&r->row->names, (int)(key >> 32),
                                          (gp_strid)(key & 0xffffffff), r->pt[r->hot[h]]);
            if (st != GP_OK)
                return st;
            r->pt[r->hot[h]] = 0;
        }
        r->n_hot = 0;
    }
    return GP_OK;
}

/* The pass over one thread: runs[0, n) are its runs, by row. */
static gp_status pass_thread(pass *p, const run *runs, size_t n)
{
    p->thread = runs[0].thread;
    p->last = INT64_MIN;
    p->n_heap = p->n_active = 0;
    size_t n_rows = 0, first = (size_t)(runs - p->runs);
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && runs[i].row == runs[i - 1].row)
            continue;
        srow *r = &p->r[runs[i].row];
        r->next = r->end = first + i;
        while (r->end < first + n && p->runs[r->end].row == runs[i].row)
            r->end++;
        r->live = false;
        p->rows[n_rows++] = runs[i].row;
        if (next_on(p, r))
            heap_push(p, runs[i].row);
    }
    bounds(p);
    memset(&p->pairs, 0, sizeof p->pairs);
    gp_status st = gp__ic_segments(p->c, p->thread, &p->pairs, on_segments, p);
    if (st == GP_OK) /* the unrecorded time after the last segment */
        st = attribute(p, p->last, INT64_MAX, 0, GP_IC_UNRECORDED);
    if (st == GP_OK)
        st = fold(p, p->rows, n_rows);
    gp__ic_acc_free(&p->pairs.index);
    free(p->pairs.key);
    return st;
}

/* The runs of each row's intervals on one thread (a row's runs in time order), and each row's
 * idle time and its time on no thread. *n_runs past RUNS_MAX: too many (runs NULL). */
static gp_status find_runs(const gp__ic_sweep *sw, gp__ic_row *rows, size_t n_rows, run **out,
                           size_t *n_runs)
{
    run *runs = NULL;
    size_t n = 0, cap = 0;
    gp_status st = GP_OK;
    for (size_t i = 0; i < n_rows && st == GP_OK && n <= RUNS_MAX; i++) {
        gp__ic_cursor k;
        gp__ic_cursor_init(sw, &k, rows[i].w, rows[i].n);
        gp_idle_causes *o = rows[i].out;
        uint32_t last = GP__IC_NO_THREAD;
        for (gp__ic_cursor before = k; st == GP_OK && n <= RUNS_MAX; before = k) {
            gp_ns s, e;
            uint32_t thread;
            if (!gp__ic_next(sw, &k, &s, &e, &thread))
                break;
            o->idle += e - s;
            if (thread == GP__IC_NO_THREAD) {
                o->by_cause[GP_IC_UNRECORDED] += e - s;
                st = gp__ic_acc_add(&rows[i].names, GP_IC_UNRECORDED, 0, e - s);
            } else if (thread != last) {
                run *x = GP_PUSH(runs, n, cap);
                if (x)
                    *x = (run){thread, (uint32_t)i, before};
                else
                    st = GP_ENOMEM;
            }
            last = thread;
        }
    }
    if (n > RUNS_MAX || st != GP_OK) {
        free(runs);
        runs = NULL;
    }
    *out = runs;
    *n_runs = n;
    return st;
}

gp_status gp__ic_pass(gp__ic_ctx *c, const gp__ic_sweep *sw, const gp_trace *t, gp__ic_row *rows,
                      size_t n_rows, bool *done)
{
    *done = false;
    if (n_rows > UINT32_MAX)
        return GP_OK;
    run *runs;
    size_t n_runs;
    gp_status st = find_runs(sw, rows, n_rows, &runs, &n_runs);
    if (st != GP_OK || n_runs > RUNS_MAX) {
        for (size_t i = 0; i < n_rows; i++) { /* untouched, for the stored timelines */
            rows[i].out->idle = 0;
            rows[i].out->by_cause[GP_IC_UNRECORDED] = 0;
            gp__ic_acc_free(&rows[i].names);
        }
        return st;
    }
    pass p = {.c = c, .sw = sw, .runs = runs};
    size_t m = n_rows ? n_rows : 1;
    p.r = calloc(m, sizeof *p.r);
    p.heap = malloc(m * sizeof *p.heap);
    p.active = malloc(m * sizeof *p.active);
    p.rows = malloc(m * sizeof *p.rows);
    if (!p.r || !p.heap || !p.active || !p.rows || !sort_runs(runs, n_runs))
        st = GP_ENOMEM;
    for (size_t i = 0; i < n_rows && st == GP_OK; i++)
        p.r[i] = (srow){.row = &rows[i], .by_cause = rows[i].out->by_cause};
    for (size_t i = 0, j; i < n_runs && st == GP_OK; i = j) {
        for (j = i + 1; j < n_runs && runs[j].thread == runs[i].thread;)
            j++;
        st = pass_thread(&p, &runs[i], j - i);
    }
    for (size_t i = 0; i < n_rows && st == GP_OK; i++) {
        gp__ic_shares(rows[i].out);
        gp__ic_top_names(t, rows[i].out, &rows[i].names);
    }
    *done = st == GP_OK;
    for (size_t i = 0; p.r && i < n_rows; i++) {
        free(p.r[i].pt);
        free(p.r[i].hot);
    }
    free(p.r);
    free(p.heap);
    free(p.active);
    free(p.rows);
    free(runs);
    return st;
}
