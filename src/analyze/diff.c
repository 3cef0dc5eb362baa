/* gpuprof diff: grouping by (kind, normalised name), per-side statistics, verdicts and overall
 * metrics. See include/gpuprof/diff.h for the contract and docs/internals/diff.md for the design.
 */
#include "gpuprof/diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/msort.h"
#include "core/group_table.h"
#include "core/ivls.h"
#include "core/stats.h"
#include "gpuprof/analyze.h"
#include "gpuprof/report.h"
#include "core/util.h"
#include "analyze/analyze_internal.h"
#include "analyze/diff_stats.h"
#include "analyze/diff_compile.h"
#include "analyze/diff_context.h"

#define DEFAULT_KINDS                                                                              \
    ((1u << GP_EV_KERNEL) | (1u << GP_EV_MEMCPY) | (1u << GP_EV_MEMSET) | (1u << GP_EV_CPU_OP) |   \
     (1u << GP_EV_USER_ANNOTATION) | (1u << GP_EV_RANGE))

void gp_diff_opts_init(gp_diff_opts *opts)
{
    memset(opts, 0, sizeof *opts);
    opts->threshold = 0.05;
    opts->alpha = 0.05;
    opts->correction = GP_DIFF_HOLM;
    opts->seed = 1;
    opts->bootstrap = 2000;
    opts->analyze = true;
}

const char *gp_diff_finding_change_name(gp_diff_finding_change c)
{
    static const char *const names[] = {[GP_DIFF_FINDING_NEW] = "NEW",
                                        [GP_DIFF_FINDING_RESOLVED] = "RESOLVED",
                                        [GP_DIFF_FINDING_PERSISTS] = "PERSISTS"};
    return GP_NAME_OF(names, c, "PERSISTS");
}

const char *gp_diff_type_name(gp_diff_type type)
{
    static const char *const names[] = {"NO_CHANGE", "IMPROVEMENT", "REGRESSION", "NEW", "REMOVED"};
    return (unsigned)type < GP_ARRAY_LEN(names) ? names[type] : "UNKNOWN";
}

const char *gp_diff_dir_name(gp_diff_dir d, bool for_calls)
{
    static const char *const calls[] = {"same", "more", "fewer", "untested"};
    static const char *const per_call[] = {"same", "slower", "faster", "untested"};
    return for_calls ? GP_NAME_OF(calls, d, "same") : GP_NAME_OF(per_call, d, "same");
}

const char *gp_diff_method_name(gp_diff_method m)
{
    static const char *const names[] = {[GP_DIFF_TEST_NONE] = "none",
                                        [GP_DIFF_TEST_CALLS] = "per-call",
                                        [GP_DIFF_TEST_RUNS] = "per-run"};
    return GP_NAME_OF(names, m, "none");
}

/* ---- grouping ----------------------------------------------------------------------------- */

typedef struct side_acc {
    int64_t *durs;
    size_t n, cap;
    double *run_tot; /* per run of the side (calloc'd on first use) */
    int64_t mem_peak;
} side_acc;

typedef struct dgroup {
    gp__group_key key; /* the name is the table's copy */
    side_acc side[2];
    char *row_name;  /* owned: the row's name when not key.name (several names matched) */
    char *base_name; /* owned: the matched base name of a renamed row */
    uint32_t n_names[2];
    bool merged; /* moved into another group by name matching: no row of its own */
} dgroup;

static void groups_free(gp__group_table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        dgroup *g = gp__group_at(t, i);
        for (int s = 0; s < 2; s++) {
            free(g->side[s].durs);
            free(g->side[s].run_tot);
        }
        free(g->row_name);
        free(g->base_name);
    }
    gp__group_table_free(t);
}

/* ---- matching one-sided names by normalised form ------------------------------------------ */

typedef struct unmatched {
    char *key; /* normalised name */
    uint32_t group;
    int32_t kind;
    int side; /* the side the group has samples on */
} unmatched;

static int cmp_unmatched(const void *a, const void *b)
{
    const unmatched *x = a, *y = b;
    GP_CMP_KEY(x->kind, y->kind);
    int c = strcmp(x->key, y->key);
    if (c)
        return c;
    return GP_CMP(x->group, y->group);
}

/* Moves the samples of side s of group src into dst (same side, same number of runs). */
static gp_status side_move(side_acc *dst, side_acc *src, size_t n_runs)
{
    if (src->n) {
        if (dst->n + src->n > dst->cap) {
            int64_t *d = realloc(dst->durs, (dst->n + src->n) * sizeof *d);
            if (!d)
                return GP_ENOMEM;
            dst->durs = d;
            dst->cap = dst->n + src->n;
        }
        memcpy(dst->durs + dst->n, src->durs, src->n * sizeof *src->durs);
        dst->n += src->n;
    }
    if (src->run_tot) {
        if (!dst->run_tot && !(dst->run_tot = calloc(n_runs, sizeof(double))))
            return GP_ENOMEM;
        for (size_t r = 0; r < n_runs; r++)
            dst->run_tot[r] += src->run_tot[r];
    }
    dst->mem_peak = GP_MAX(dst->mem_peak, src->mem_peak);
    free(src->durs);
    free(src->run_tot);
    *src = (side_acc){.mem_peak = -1};
    return GP_OK;
}

/* One run of equal (kind, key) among the one-sided groups u[a..b): when both sides are there,
 * every group of the run moves into the first current-side group, whose row shows both names (one
 * on each side) or the normalised key (several). */
static gp_status merge_run(gp__group_table *tab, unmatched *u, size_t a, size_t b,
                           const size_t *counts)
{
    uint32_t n_side[2] = {0, 0};
    size_t into = b;
    for (size_t k = a; k < b; k++) {
        n_side[u[k].side]++;
        if (u[k].side == 1 && into == b)
            into = k;
    }
    if (!n_side[0] || !n_side[1])
        return GP_OK;
    dgroup *dst = gp__group_at(tab, u[into].group);
    for (size_t k = a; k < b; k++) {
        if (k == into)
            continue;
        dgroup *src = gp__group_at(tab, u[k].group);
        int s = u[k].side;
        gp_status st = side_move(&dst->side[s], &src->side[s], counts[s]);
        if (st != GP_OK)
            return st;
        src->merged = true;
        if (n_side[0] == 1 && n_side[1] == 1) {
            dst->base_name = (char *)src->key.name; /* the table's copy, now the row's */
            src->key.name = NULL;
        }
    }
    dst->n_names[0] = n_side[0];
    dst->n_names[1] = n_side[1];
    if ((n_side[0] > 1 || n_side[1] > 1) && !(dst->row_name = strdup(u[a].key)))
        return GP_ENOMEM;
    return GP_OK;
}

/* Names seen on one side only are matched by their normalised form (templates, numbers and the
 * argument list): a
 * kernel whose template arguments changed becomes one row, not NEW plus REMOVED. */
static gp_status match_names(gp__group_table *tab, const size_t *counts)
{
    size_t n = 0;
    for (size_t i = 0; i < tab->n; i++) {
        const dgroup *g = gp__group_at(tab, i);
        n += (g->side[0].n == 0) != (g->side[1].n == 0);
    }
    if (n < 2)
        return GP_OK;
    unmatched *u = calloc(n, sizeof *u);
    if (!u)
        return GP_ENOMEM;
    gp_status st = GP_OK;
    size_t m = 0;
    for (size_t i = 0; i < tab->n && st == GP_OK; i++) {
        const dgroup *g = gp__group_at(tab, i);
        if ((g->side[0].n == 0) == (g->side[1].n == 0))
            continue;
        size_t cap = 3 * g->key.len + 1; /* "<>" -> "<...>": at most 2.5 times longer */
        if (!(u[m].key = malloc(cap))) {
            st = GP_ENOMEM;
            break;
        }
        gp_diff_normalize_name(g->key.name,
                               GP_DIFF_NORM_TEMPLATES | GP_DIFF_NORM_NUMBERS | GP_DIFF_NORM_ARGS,
                               u[m].key, cap);
        u[m].group = (uint32_t)i;
        u[m].kind = g->key.kind;
        u[m].side = g->side[0].n == 0 ? 1 : 0;
        m++;
    }
    if (st == GP_OK)
        gp__msort(u, m, sizeof *u, cmp_unmatched);
    for (size_t a = 0, b; a < m && st == GP_OK; a = b) {
        for (b = a + 1; b < m && u[b].kind == u[a].kind && strcmp(u[b].key, u[a].key) == 0; b++)
            ;
        if (b - a > 1)
            st = merge_run(tab, u, a, b, counts);
    }
    for (size_t k = 0; k < m; k++)
        free(u[k].key);
    free(u);
    return st;
}

/* ---- per-run overall values --------------------------------------------------------------- */

typedef struct ival {
    int32_t dev;
    gp_ns a, b;
} ival;

static int cmp_ival(const void *x, const void *y)
{
    const ival *p = x, *q = y;
    GP_CMP_KEY(p->dev, q->dev);
    GP_CMP_KEY(p->a, q->a);
    return GP_CMP(p->b, q->b);
}

/* vals[GP_DIFF_METRIC_COUNT]: -1 for absent. */
static gp_status run_metrics(const gp_trace *t, double *vals)
{
    gp_ns s, e;
    gp_trace_span(t, &s, &e);
    vals[GP_DIFF_M_TOTAL] = gp_trace_event_count(t) ? (double)(e - s) : -1;
    size_t n_iv = 0;
    for (size_t k = 0; k < t->n_tracks; k++)
        for (size_t i = 0; i < t->tracks[k].n_events; i++)
            n_iv += gp_event_kind_is_gpu_work((gp_event_kind)t->tracks[k].events[i].kind);
    ival *iv = n_iv ? malloc(n_iv * sizeof *iv) : NULL;
    if (n_iv && !iv)
        return GP_ENOMEM;
    size_t m = 0;
    gp_ns gpu = 0;
    for (size_t k = 0; k < t->n_tracks; k++) {
        const gp_track *tr = &t->tracks[k];
        for (size_t i = 0; i < tr->n_events; i++) {
            const gp_event *ev = &tr->events[i];
            if (gp_event_kind_is_gpu_work((gp_event_kind)ev->kind)) {
                gpu = gp__sat_add(gpu, ev->dur);
                iv[m].dev = tr->device >= 0 ? tr->device : (int32_t)tr->pid;
                iv[m].a = ev->ts;
                iv[m].b = ev->ts + ev->dur;
                m++;
            }
        }
    }
    vals[GP_DIFF_M_GPU] = m ? (double)gpu : -1;
    gp_peak_memory peak; /* the one definition (analyze) */
    gp_peak_memory_of(t, INT64_MIN, INT64_MAX, &peak);
    vals[GP_DIFF_M_PEAK_MEM] = peak.source == GP_PEAK_NONE ? -1 : (double)peak.bytes;
    vals[GP_DIFF_M_IDLE] = -1;
    gp__ivl *u = m ? malloc(m * sizeof *u) : NULL;
    if (m && !u) {
        free(iv);
        return GP_ENOMEM;
    }
    if (m) {
        /* Per device: the span of its GPU work minus the union of it (core/ivls.h, the rule the
         * analyses use), summed over devices. */
        gp__msort(iv, m, sizeof *iv, cmp_ival);
        gp_ns idle = 0;
        for (size_t i = 0, j; i < m; i = j) {
            gp_ns end = iv[i].b;
            for (j = i; j < m && iv[j].dev == iv[i].dev; j++) {
                u[j - i] = (gp__ivl){iv[j].a, iv[j].b};
                end = GP_MAX(end, iv[j].b);
            }
            gp__ivls dev = {u, j - i, j - i};
            idle = gp__sat_add(idle, (end - iv[i].a) - gp__ivls_union_sorted(&dev));
        }
        vals[GP_DIFF_M_IDLE] = (double)idle;
    }
    free(u);
    free(iv);
    return GP_OK;
}

/* ---- verdicts ----------------------------------------------------------------------------- */

/* Smallest two-sided p-value an exact U test can reach with sizes (m, n): 2 / C(m+n, m). */
static double min_p_value(size_t m, size_t n)
{
    double lc = lgamma((double)(m + n + 1)) - lgamma((double)(m + 1)) - lgamma((double)(n + 1));
    double p = 2.0 * exp(-lc);
    return p > 1 ? 1 : p;
}

/* Ratio of medians current / base: +inf when only the base median is 0, NaN when both are (or a
 * side is empty). */
static double median_ratio(double mx, double my, size_t nx, size_t ny)
{
    if (!nx || !ny)
        return NAN;
    if (mx > 0)
        return my / mx;
    return my > 0 ? INFINITY : NAN;
}

/* Runs the test on sorted samples x (base) and y (current). Leaves method NONE (untested) when the
 * sizes cannot reach significance at alpha even before any correction; computes the bootstrap CI
 * only with at least GP_DIFF_MIN_CI_N values on each side. */
static gp_status run_test(const double *x, size_t nx, const double *y, size_t ny,
                          gp_diff_method method, const gp_diff_opts *o, uint64_t seed,
                          gp_diff_test *t)
{
    t->method = GP_DIFF_TEST_NONE;
    t->n_base = nx;
    t->n_cur = ny;
    t->p_value = t->p_adjusted = NAN;
    t->ci_lo = t->ci_hi = NAN;
    t->ratio = median_ratio(gp__median_sorted(x, nx), gp__median_sorted(y, ny), nx, ny);
    if (nx == 0 || ny == 0 || min_p_value(nx, ny) >= o->alpha)
        return GP_OK;
    gp__mwu r;
    gp_status st = gp__mwu_test(x, nx, y, ny, &r);
    if (st != GP_OK)
        return st;
    t->method = method;
    t->u = r.u;
    t->exact = r.exact;
    t->p_value = r.p;
    if (nx < GP_DIFF_MIN_CI_N || ny < GP_DIFF_MIN_CI_N)
        return GP_OK;
    return gp__boot_ratio_ci(x, nx, y, ny, o->bootstrap, o->alpha, seed, &t->ci_lo, &t->ci_hi);
}

/* The direction a test points to: UP when significant, past the threshold upwards and U above
 * its null mean; DOWN likewise downwards; SAME otherwise; UNTESTED when not tested. */
static gp_diff_dir tested_dir(const gp_diff_test *t, double threshold)
{
    if (t->method == GP_DIFF_TEST_NONE)
        return GP_DIFF_DIR_UNTESTED;
    double half = (double)t->n_base * (double)t->n_cur / 2.0;
    if (isnan(t->ratio) || !t->significant)
        return GP_DIFF_SAME;
    if (t->ratio >= 1.0 + threshold && t->u > half)
        return GP_DIFF_UP;
    if (t->ratio <= 1.0 - threshold && t->u < half)
        return GP_DIFF_DOWN;
    return GP_DIFF_SAME;
}

/* The decision rule (docs/diff.md, "Decision rule"): tested -> significant and past the threshold
 * in the test's direction; untested -> the threshold alone. */
static gp_diff_type verdict(const gp_diff_test *t, double threshold)
{
    if (isnan(t->ratio))
        return GP_DIFF_NO_CHANGE;
    if (t->method == GP_DIFF_TEST_NONE)
        return t->ratio >= 1.0 + threshold   ? GP_DIFF_REGRESSION
               : t->ratio <= 1.0 - threshold ? GP_DIFF_IMPROVEMENT
                                             : GP_DIFF_NO_CHANGE;
    gp_diff_dir d = tested_dir(t, threshold);
    return d == GP_DIFF_UP     ? GP_DIFF_REGRESSION
           : d == GP_DIFF_DOWN ? GP_DIFF_IMPROVEMENT
                               : GP_DIFF_NO_CHANGE;
}

/* Counts a REGRESSION verdict as significant (tested) or untested. */
static void count_regression(gp_diff *d, gp_diff_type type, const gp_diff_test *t)
{
    if (type != GP_DIFF_REGRESSION)
        return;
    if (t->method == GP_DIFF_TEST_NONE)
        d->n_untested_regressions++;
    else
        d->n_significant_regressions++;
}

static int cmp_rows(const void *a, const void *b)
{
    const gp_diff_row *x = a, *y = b;
    if (x->delta_ns != y->delta_ns)
        return x->delta_ns > y->delta_ns ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return strcmp(x->name, y->name);
}

static void fill_side(gp_diff_side *s, side_acc *a, size_t n_runs)
{
    gp__stats st;
    gp__stats_compute(a->durs, a->n, &st); /* sorts a->durs */
    s->calls = (double)st.n / (double)n_runs;
    s->total = (double)st.total / (double)n_runs;
    s->mean = st.mean;
    s->p50 = st.p50;
    s->p95 = st.p95;
    s->mem_peak = a->mem_peak;
}

static const char *const metric_names[GP_DIFF_METRIC_COUNT] = {
    "total_time", "gpu_work_sum", /* was "gpu_time": a sum over streams, not a share of the span */
    "idle_time", "peak_memory"};
static const char *const metric_units[GP_DIFF_METRIC_COUNT] = {"ns", "ns", "ns", "bytes"};

/* Collects one run's events into the group table. memo caches name id -> group per kind. */
static gp_status collect_run(gp__group_table *tab, const gp_trace *t, int side, size_t run,
                             size_t n_runs, const gp_diff_opts *o, uint32_t mask)
{
    size_t n_str = gp_trace_str_count(t) + 1;
    uint32_t *memo[GP_EV_KIND_COUNT] = {0};
    gp_status st = GP_OK;
    size_t cap = 4096;
    char *norm = malloc(cap);
    if (!norm)
        return GP_ENOMEM;
    for (size_t k = 0; st == GP_OK && k < t->n_tracks; k++) {
        const gp_track *tr = &t->tracks[k];
        for (size_t i = 0; i < tr->n_events; i++) {
            const gp_event *ev = &tr->events[i];
            gp_event_kind kind = (gp_event_kind)ev->kind;
            if (kind >= GP_EV_KIND_COUNT || !gp_event_kind_has_duration(kind) ||
                !(mask & (1u << kind)))
                continue;
            if (!memo[kind] && !(memo[kind] = calloc(n_str, sizeof(uint32_t)))) {
                st = GP_ENOMEM;
                break;
            }
            uint32_t idx = ev->name < n_str ? memo[kind][ev->name] : 0;
            if (!idx) {
                const char *nm = gp_trace_str(t, ev->name);
                size_t len = gp_trace_strlen(t, ev->name);
                if (o->normalize) {
                    /* "<>" becomes "<...>": the output is at most 2.5 times the input. */
                    size_t need = 3 * len + 1;
                    if (need > cap) {
                        char *bigger = realloc(norm, need);
                        if (!bigger) {
                            st = GP_ENOMEM;
                            break;
                        }
                        norm = bigger;
                        cap = need;
                    }
                    gp_diff_normalize_name(nm, o->normalize, norm, cap);
                    nm = norm;
                    len = strlen(norm);
                }
                size_t before = tab->n;
                idx = gp__group_find(tab, kind, nm, len);
                if (!idx) {
                    st = GP_ENOMEM;
                    break;
                }
                if (tab->n > before) { /* a new group: no peak seen yet */
                    dgroup *g = gp__group_at(tab, idx - 1);
                    g->side[0].mem_peak = g->side[1].mem_peak = -1;
                }
                if (ev->name < n_str)
                    memo[kind][ev->name] = idx;
            }
            side_acc *a = &((dgroup *)gp__group_at(tab, idx - 1))->side[side];
            int64_t *d = GP_PUSH(a->durs, a->n, a->cap);
            if (!d || (!a->run_tot && !(a->run_tot = calloc(n_runs, sizeof(double))))) {
                st = GP_ENOMEM;
                break;
            }
            *d = ev->dur;
            a->run_tot[run] += (double)ev->dur;
            int64_t v;
            if (kind == GP_EV_RANGE && gp_event_arg_int(t, ev, "mem_peak_bytes", &v) &&
                v > a->mem_peak)
                a->mem_peak = v;
        }
    }
    for (int m = 0; m < GP_EV_KIND_COUNT; m++)
        free(memo[m]);
    free(norm);
    return st;
}

/* ---- analyze deltas ----------------------------------------------------------------------- */

static bool side_has_gpu(const gp_trace *const *runs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (gp_trace_has_gpu(runs[i]))
            return true;
    return false;
}

static gp_diff_share *find_share(gp_diff_share *v, size_t n, const char *label)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].label, label) == 0)
            return &v[i];
    return NULL;
}

static int cmp_share(const void *a, const void *b)
{
    const gp_diff_share *x = a, *y = b;
    if (x->cur_ns != y->cur_ns)
        return x->cur_ns > y->cur_ns ? -1 : 1;
    if (x->base_ns != y->base_ns)
        return x->base_ns > y->base_ns ? -1 : 1;
    return strcmp(x->label, y->label);
}

static int cmp_finding(const void *a, const void *b)
{
    const gp_diff_finding *x = a, *y = b;
    if (x->change != y->change)
        return x->change < y->change ? -1 : 1;
    double gx = GP_MAX(x->cur_gain_ns, x->base_gain_ns),
           gy = GP_MAX(y->cur_gain_ns, y->base_gain_ns);
    if (gx != gy)
        return gx > gy ? -1 : 1;
    return strcmp(x->rule, y->rule);
}

/* Runs gp_analyze_job on both sides (each side's runs as the ranks of one job) and fills the
 * breakdown and finding deltas of d. */
static gp_status analyze_sides(gp_diff *d, const gp_trace *const *base, size_t n_base,
                               const gp_trace *const *cur, size_t n_cur, gp_error *err)
{
    if (!side_has_gpu(base, n_base) || !side_has_gpu(cur, n_cur)) {
        bool b = side_has_gpu(base, n_base), c = side_has_gpu(cur, n_cur);
        gp_error_note(
            &d->analyze_note, "no GPU work %s: kernel-type and temporal breakdowns not compared",
            !b && !c ? "on either side" : (b ? "on the current side" : "on the base side"));
        return GP_OK;
    }
    gp_analysis *an[2] = {NULL, NULL};
    const gp_trace *const *runs[2] = {base, cur};
    size_t counts[2] = {n_base, n_cur};
    gp_status st = GP_OK;
    for (int s = 0; s < 2 && st == GP_OK; s++) {
        gp__ranks side = {runs[s], counts[s], false};
        st = gp__analyze_with_ops(&side, NULL, NULL, &an[s], err);
    }
    if (st != GP_OK)
        goto done;
    /* Temporal: time-weighted over the runs with GPU work. */
    static const char *const tl[3] = {"idle", "compute", "non_compute"};
    for (int s = 0; s < 2; s++) {
        double sum[3] = {0, 0, 0}, kt = 0;
        size_t valid = 0;
        for (size_t r = 0; r < an[s]->n_ranks; r++) {
            const gp_temporal *t = &an[s]->ranks[r].temporal;
            if (!t->valid)
                continue;
            valid++;
            sum[0] += (double)t->idle;
            sum[1] += (double)t->compute;
            sum[2] += (double)t->non_compute;
            kt += (double)t->kernel_time;
        }
        for (int k = 0; k < 3; k++) {
            gp_diff_share *sh = &d->temporal[k];
            snprintf(sh->label, sizeof sh->label, "%s", tl[k]);
            double per_run = valid ? sum[k] / (double)valid : 0;
            double pct = kt > 0 ? 100.0 * sum[k] / kt : NAN;
            if (s == 0) {
                sh->base_ns = per_run;
                sh->base_pct = pct;
            } else {
                sh->cur_ns = per_run;
                sh->cur_pct = pct;
            }
        }
    }
    /* Kernel-type overlap states, matched by label. */
    size_t cap = an[0]->n_types + an[1]->n_types;
    if (cap && !(d->types = calloc(cap, sizeof *d->types))) {
        st = GP_ENOMEM;
        goto done;
    }
    for (int s = 0; s < 2; s++) {
        for (size_t i = 0; i < an[s]->n_types; i++) {
            const gp_type_state *ts = &an[s]->types[i];
            gp_diff_share *sh = find_share(d->types, d->n_types, ts->label);
            if (!sh) {
                sh = &d->types[d->n_types++];
                snprintf(sh->label, sizeof sh->label, "%s", ts->label);
            }
            if (s == 0) {
                sh->base_ns = (double)ts->time / (double)counts[0];
                sh->base_pct = ts->pct;
            } else {
                sh->cur_ns = (double)ts->time / (double)counts[1];
                sh->cur_pct = ts->pct;
            }
        }
    }
    if (d->n_types > 1)
        gp__msort(d->types, d->n_types, sizeof *d->types, cmp_share);
    /* Findings by rule id (ranks merged; gains summed, per run). */
    cap = an[0]->n_findings + an[1]->n_findings;
    if (cap && !(d->findings = calloc(cap, sizeof *d->findings))) {
        st = GP_ENOMEM;
        goto done;
    }
    for (int s = 0; s < 2; s++) {
        for (size_t i = 0; i < an[s]->n_findings; i++) {
            const gp_finding *f = &an[s]->findings[i];
            gp_diff_finding *df = NULL;
            for (size_t k = 0; k < d->n_findings; k++)
                if (strcmp(d->findings[k].rule, f->rule) == 0)
                    df = &d->findings[k];
            if (!df) {
                df = &d->findings[d->n_findings++];
                snprintf(df->rule, sizeof df->rule, "%s", f->rule);
                df->change = s == 0 ? GP_DIFF_FINDING_RESOLVED : GP_DIFF_FINDING_NEW;
                df->finding = *f;
                df->finding.ranks = NULL;
                df->finding.n_ranks = 0;
            } else if (s == 1) {
                if (df->change == GP_DIFF_FINDING_RESOLVED) {
                    df->change = GP_DIFF_FINDING_PERSISTS;
                    df->finding = *f;
                    df->finding.ranks = NULL;
                    df->finding.n_ranks = 0;
                }
            }
            if (s == 0)
                df->base_gain_ns += (double)f->gain_ns / (double)counts[0];
            else
                df->cur_gain_ns += (double)f->gain_ns / (double)counts[1];
        }
    }
    if (d->n_findings > 1)
        gp__msort(d->findings, d->n_findings, sizeof *d->findings, cmp_finding);
    d->analyzed = true;
done:
    gp_analysis_free(an[0]);
    gp_analysis_free(an[1]);
    return st;
}

/* The overall metrics: per-run values in mvals (n_base + n_cur runs, -1 absent), their medians,
 * and the test across runs where the sizes allow it. xs / ys: scratch of n_base + n_cur. */
static gp_status compute_metrics(gp_diff *d, const double *mvals, double *xs, double *ys)
{
    const gp_diff_opts *o = &d->opts;
    size_t n_base = d->n_base_runs, n_all = d->n_base_runs + d->n_cur_runs;
    for (int m = 0; m < GP_DIFF_METRIC_COUNT; m++) {
        gp_diff_metric *mt = &d->metrics[m];
        mt->name = metric_names[m];
        mt->unit = metric_units[m];
        size_t nx = 0, ny = 0;
        for (size_t r = 0; r < n_all; r++) {
            double v = mvals[r * GP_DIFF_METRIC_COUNT + m];
            if (v < 0)
                continue;
            if (r < n_base)
                xs[nx++] = v;
            else
                ys[ny++] = v;
        }
        mt->present = nx == n_base && ny == d->n_cur_runs;
        mt->test.p_value = mt->test.p_adjusted = mt->test.ratio = NAN;
        mt->test.ci_lo = mt->test.ci_hi = NAN;
        mt->delta_pct = NAN;
        if (!mt->present)
            continue;
        gp__msort(xs, nx, sizeof *xs, gp__cmp_double);
        gp__msort(ys, ny, sizeof *ys, gp__cmp_double);
        mt->base = gp__median_sorted(xs, nx);
        mt->cur = gp__median_sorted(ys, ny);
        mt->delta = mt->cur - mt->base;
        mt->delta_pct = mt->base > 0 ? 100.0 * mt->delta / mt->base : NAN;
        uint64_t seed = o->seed ^ gp__hash_bytes(mt->name, strlen(mt->name));
        gp_status st = run_test(xs, nx, ys, ny, GP_DIFF_TEST_RUNS, o, seed, &mt->test);
        if (st != GP_OK)
            return st;
    }
    const gp_diff_metric *tt = &d->metrics[GP_DIFF_M_TOTAL];
    d->speedup = (tt->present && tt->cur > 0) ? tt->base / tt->cur : NAN;
    return GP_OK;
}

/* One row from group g: side statistics, the test of the per-run totals (the verdict's), the
 * call-count change and the per-call test. xs / ys: scratch of the largest sample. */
static gp_status build_row(gp_diff *d, dgroup *g, double *xs, double *ys)
{
    const gp_diff_opts *o = &d->opts;
    size_t counts[2] = {d->n_base_runs, d->n_cur_runs};
    gp_diff_row *row = &d->rows[d->n_rows++];
    row->name = g->row_name ? g->row_name : (char *)g->key.name;
    if (g->row_name) {
        g->row_name = NULL; /* owned by the row now; the key's copy stays the table's */
    } else {
        g->key.name = NULL;
    }
    row->base_name = g->base_name;
    g->base_name = NULL;
    for (int s = 0; s < 2; s++)
        if (!g->n_names[s])
            g->n_names[s] = g->side[s].n > 0;
    row->n_base_names = g->n_names[0];
    row->n_cur_names = g->n_names[1];
    row->kind = (gp_event_kind)g->key.kind;
    fill_side(&row->base, &g->side[0], counts[0]);
    fill_side(&row->cur, &g->side[1], counts[1]);
    row->delta_ns = row->cur.total - row->base.total;
    row->delta_pct = row->base.total > 0 ? 100.0 * row->delta_ns / row->base.total : NAN;
    row->calls_pct = row->base.calls > 0 ? 100.0 * (row->cur.calls / row->base.calls - 1) : NAN;
    row->calls_dir = isnan(row->calls_pct)                     ? GP_DIFF_SAME
                     : row->calls_pct >= 100.0 * o->threshold  ? GP_DIFF_UP
                     : row->calls_pct <= -100.0 * o->threshold ? GP_DIFF_DOWN
                                                               : GP_DIFF_SAME;
    double *samples[2] = {xs, ys};
    for (int s = 0; s < 2; s++) {
        for (size_t r = 0; r < counts[s]; r++)
            samples[s][r] = g->side[s].run_tot ? g->side[s].run_tot[r] : 0;
        gp__msort(samples[s], counts[s], sizeof(double), gp__cmp_double);
    }
    uint64_t seed = o->seed ^ gp__group_hash(row->kind, row->name, strlen(row->name));
    gp_status st = GP_OK;
    if (g->side[0].n == 0 || g->side[1].n == 0) {
        row->type = g->side[0].n == 0 ? GP_DIFF_NEW : GP_DIFF_REMOVED;
        row->test = (gp_diff_test){.n_base = counts[0], .n_cur = counts[1]};
        row->test.p_value = row->test.p_adjusted = row->test.ratio = NAN;
        row->test.ci_lo = row->test.ci_hi = NAN;
    } else {
        st = run_test(xs, counts[0], ys, counts[1], GP_DIFF_TEST_RUNS, o, seed, &row->test);
    }
    if (st != GP_OK)
        return st;
    for (int s = 0; s < 2; s++)
        for (size_t k = 0; k < g->side[s].n; k++) /* already sorted by fill_side */
            samples[s][k] = (double)g->side[s].durs[k];
    /* A distinct seed: the two bootstraps of a row draw different streams. */
    return run_test(xs, g->side[0].n, ys, g->side[1].n, GP_DIFF_TEST_CALLS, o,
                    seed ^ 0x9e3779b97f4a7c15ull, &row->per_call);
}

/* Adjusts one family of p-values in place: the rows' verdict tests, or their per-call tests. pv:
 * scratch of n_rows. */
static gp_status adjust_rows(gp_diff *d, double *pv, bool per_call, size_t *n_tested)
{
    for (size_t i = 0; i < d->n_rows; i++) {
        pv[i] = per_call ? d->rows[i].per_call.p_value : d->rows[i].test.p_value;
        *n_tested += !isnan(pv[i]);
    }
    gp_status st = gp__p_adjust(pv, d->n_rows, (int)d->opts.correction);
    for (size_t i = 0; st == GP_OK && i < d->n_rows; i++) {
        gp_diff_test *t = per_call ? &d->rows[i].per_call : &d->rows[i].test;
        t->p_adjusted = pv[i];
        t->significant = !isnan(pv[i]) && pv[i] < d->opts.alpha;
    }
    return st;
}

/* Multiple comparisons (rows' verdicts, rows' per-call tests and the overall metrics: three
 * families), then every verdict, direction and count. */
static gp_status decide(gp_diff *d, double *pv)
{
    const gp_diff_opts *o = &d->opts;
    gp_status st = adjust_rows(d, pv, false, &d->n_tested);
    if (st == GP_OK)
        st = adjust_rows(d, pv, true, &d->n_tested_per_call);
    if (st != GP_OK)
        return st;
    for (size_t i = 0; i < d->n_rows; i++) {
        gp_diff_row *row = &d->rows[i];
        if (row->type != GP_DIFF_NEW && row->type != GP_DIFF_REMOVED)
            row->type = verdict(&row->test, o->threshold);
        row->per_call_dir = tested_dir(&row->per_call, o->threshold);
        d->n_by_type[row->type]++;
        d->n_matched += row->base_name || row->n_base_names > 1 || row->n_cur_names > 1;
        count_regression(d, row->type, &row->test);
    }
    double mp[GP_DIFF_METRIC_COUNT];
    for (int m = 0; m < GP_DIFF_METRIC_COUNT; m++)
        mp[m] = d->metrics[m].test.p_value;
    if ((st = gp__p_adjust(mp, GP_DIFF_METRIC_COUNT, (int)o->correction)) != GP_OK)
        return st;
    for (int m = 0; m < GP_DIFF_METRIC_COUNT; m++) {
        gp_diff_metric *mt = &d->metrics[m];
        if (!mt->present)
            continue;
        mt->test.p_adjusted = mp[m];
        mt->test.significant = !isnan(mp[m]) && mp[m] < o->alpha;
        mt->type = verdict(&mt->test, o->threshold);
        count_regression(d, mt->type, &mt->test);
    }
    for (d->runs_needed = 1; d->runs_needed < 1000; d->runs_needed++)
        if (min_p_value(d->runs_needed, d->runs_needed) < o->alpha)
            break;
    d->n_failing_regressions =
        d->n_significant_regressions + (o->require_significance ? 0 : d->n_untested_regressions);
    return GP_OK;
}

gp_status gp_diff_compute(const gp_trace *const *base, size_t n_base, const gp_trace *const *cur,
                          size_t n_cur, const gp_diff_opts *opts, gp_diff **out, gp_error *err)
{
    gp_diff_opts defaults;
    if (!opts) {
        gp_diff_opts_init(&defaults);
        opts = &defaults;
    }
    if (n_base == 0 || n_cur == 0)
        return gp_error_set(err, GP_EINVAL, "diff: no %s runs given",
                            n_base == 0 ? "base" : "current");
    if (!(opts->threshold >= 0 && opts->threshold < 10))
        return gp_error_set(err, GP_EINVAL, "diff: threshold %g out of range [0, 10)",
                            opts->threshold);
    if (!(opts->alpha > 0 && opts->alpha < 1))
        return gp_error_set(err, GP_EINVAL, "diff: alpha %g out of range (0, 1)", opts->alpha);
    uint32_t mask = opts->kinds ? opts->kinds : DEFAULT_KINDS;

    gp_status st = GP_ENOMEM;
    bool err_filled = false;
    gp__group_table tab;
    gp__group_table_init(&tab, sizeof(dgroup), true);
    double *mvals = NULL, *xs = NULL, *ys = NULL;
    gp_diff *d = calloc(1, sizeof *d);
    if (!d)
        goto done;
    d->opts = *opts;
    d->n_base_runs = n_base;
    d->n_cur_runs = n_cur;

    const gp_trace *const *sides[2] = {base, cur};
    size_t counts[2] = {n_base, n_cur};
    for (int s = 0; s < 2; s++)
        for (size_t r = 0; r < counts[s]; r++)
            if ((st = collect_run(&tab, sides[s][r], s, r, counts[s], opts, mask)) != GP_OK)
                goto done;
    if (!opts->exact && (st = match_names(&tab, counts)) != GP_OK)
        goto done;
    st = GP_ENOMEM;

    /* Overall metrics per run. */
    size_t n_all = n_base + n_cur;
    if (!(mvals = malloc(n_all * GP_DIFF_METRIC_COUNT * sizeof *mvals)))
        goto done;
    for (size_t r = 0; r < n_all; r++) {
        const gp_trace *t = r < n_base ? base[r] : cur[r - n_base];
        if ((st = run_metrics(t, mvals + r * GP_DIFF_METRIC_COUNT)) != GP_OK)
            goto done;
    }
    st = GP_ENOMEM;
    size_t max_samples = GP_MAX(n_all, tab.n);
    for (size_t i = 0; i < tab.n; i++)
        for (int s = 0; s < 2; s++)
            max_samples = GP_MAX(max_samples, ((dgroup *)gp__group_at(&tab, i))->side[s].n);
    if (!(xs = malloc(max_samples * sizeof *xs)) || !(ys = malloc(max_samples * sizeof *ys)))
        goto done;
    if ((st = compute_metrics(d, mvals, xs, ys)) != GP_OK)
        goto done;
    st = GP_ENOMEM;
    if (tab.n && !(d->rows = calloc(tab.n, sizeof *d->rows)))
        goto done;
    for (size_t i = 0; i < tab.n; i++) {
        dgroup *g = gp__group_at(&tab, i);
        if (!g->merged && (st = build_row(d, g, xs, ys)) != GP_OK)
            goto done;
    }
    if ((st = decide(d, xs)) != GP_OK) /* xs holds at least tab.n >= n_rows values */
        goto done;
    if (d->n_rows > 1)
        gp__msort(d->rows, d->n_rows, sizeof *d->rows, cmp_rows);
    if (opts->analyze) {
        if ((st = analyze_sides(d, base, n_base, cur, n_cur, err)) != GP_OK) {
            err_filled = true;
            goto done;
        }
    } else {
        gp_error_note(&d->analyze_note, "analyses not requested");
    }
    if ((st = gp__diff_compile(base, n_base, cur, n_cur, &d->compile)) != GP_OK)
        goto done;
    gp__diff_context(d, base, n_base, cur, n_cur); /* diff_context.c */
    *out = d;
    d = NULL;
done:
    if (st != GP_OK && err && !err_filled)
        gp_error_set(err, st, "diff: %s", gp_strerror(st));
    groups_free(&tab);
    free(mvals);
    free(xs);
    free(ys);
    gp_diff_free(d);
    return st;
}

void gp_diff_free(gp_diff *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n_rows; i++) {
        free(d->rows[i].name);
        free(d->rows[i].base_name);
    }
    free(d->rows);
    free(d->types);
    free(d->findings);
    gp__diff_compile_free(d->compile);
    free(d);
}

gp_status gp_diff_flame(const gp_trace *const *base, size_t n_base, const gp_trace *const *cur,
                        size_t n_cur, struct gp_flame_tree **out, gp_error *err)
{
    gp_flame_opts fo;
    gp_flame_opts_init(&fo);
    fo.thread_frames = false;
    fo.weight =
        side_has_gpu(base, n_base) && side_has_gpu(cur, n_cur) ? GP_FLAME_GPU : GP_FLAME_CPU;
    gp_flame_tree *tb = NULL, *tc = NULL;
    gp_status st = gp_flame_build(base, n_base, &fo, &tb, NULL);
    if (st == GP_OK)
        st = gp_flame_build(cur, n_cur, &fo, &tc, NULL);
    if (st == GP_OK)
        st = gp_flame_diff(tb, tc, out, NULL);
    if (st != GP_OK)
        gp_error_set(err, st, "differential flame graph: %s",
                     st == GP_EEMPTY ? "a side has no event with a duration to draw"
                                     : gp_strerror(st));
    gp_flame_tree_free(tb);
    gp_flame_tree_free(tc);
    return st;
}
