/* gpuprof diff: grouping by (kind, normalised name), per-side statistics, verdicts and overall
 * metrics. See include/gpuprof/diff.h for the contract and docs/internals/diff.md for the design.
 */
#include "gpuprof/diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/group_table.h"
#include "core/ivls.h"
#include "core/stats.h"
#include "gpuprof/analyze.h"
#include "gpuprof/report.h"
#include "core/util.h"
#include "analyze/diff_stats.h"

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

const char *gp_diff_method_name(gp_diff_method m)
{
    static const char *const names[] = {[GP_DIFF_TEST_NONE] = "none",
                                        [GP_DIFF_TEST_CALLS] = "per-call",
                                        [GP_DIFF_TEST_RUNS] = "per-run"};
    return GP_NAME_OF(names, m, "none");
}

/* ---- name normalisation ------------------------------------------------------------------- */

void gp_diff_normalize_name(const char *name, uint32_t flags, char *out, size_t cap)
{
    if (cap == 0)
        return;
    size_t o = 0, n = strlen(name);
    for (size_t i = 0; i < n && o + 1 < cap;) {
        if ((flags & GP_DIFF_NORM_TEMPLATES) && name[i] == '<') {
            /* Find the matching '>'; an unbalanced '<' (operator<) is copied as is. */
            size_t depth = 0, j = i;
            for (; j < n; j++) {
                if (name[j] == '<')
                    depth++;
                else if (name[j] == '>' && --depth == 0)
                    break;
            }
            if (j < n) {
                const char *rep = "<...>";
                for (size_t k = 0; rep[k] && o + 1 < cap; k++)
                    out[o++] = rep[k];
                i = j + 1;
                continue;
            }
        }
        out[o++] = name[i++];
    }
    out[o] = '\0';
    if (flags & GP_DIFF_NORM_NUMBERS) {
        size_t e = o;
        while (e > 0 && out[e - 1] >= '0' && out[e - 1] <= '9')
            e--;
        if (e < o && e > 0 && (out[e - 1] == '_' || out[e - 1] == '#')) {
            out[e] = 'N';
            out[e + 1] = '\0';
        }
    }
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
} dgroup;

static void groups_free(gp__group_table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        dgroup *g = gp__group_at(t, i);
        for (int s = 0; s < 2; s++) {
            free(g->side[s].durs);
            free(g->side[s].run_tot);
        }
    }
    gp__group_table_free(t);
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
                gpu += ev->dur;
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
        qsort(iv, m, sizeof *iv, cmp_ival);
        gp_ns idle = 0;
        for (size_t i = 0, j; i < m; i = j) {
            gp_ns end = iv[i].b;
            for (j = i; j < m && iv[j].dev == iv[i].dev; j++) {
                u[j - i] = (gp__ivl){iv[j].a, iv[j].b};
                end = GP_MAX(end, iv[j].b);
            }
            gp__ivls dev = {u, j - i, j - i};
            idle += (end - iv[i].a) - gp__ivls_union_sorted(&dev);
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

/* Runs the test on sorted samples x (base) and y (current). Leaves method NONE when the sizes
 * cannot reach significance at alpha even before any correction. */
static gp_status run_test(const double *x, size_t nx, const double *y, size_t ny,
                          gp_diff_method method, const gp_diff_opts *o, uint64_t seed,
                          gp_diff_test *t)
{
    t->method = GP_DIFF_TEST_NONE;
    t->n_base = nx;
    t->n_cur = ny;
    t->p_value = t->p_adjusted = NAN;
    t->ci_lo = t->ci_hi = NAN;
    double mx = gp__median_sorted(x, nx), my = gp__median_sorted(y, ny);
    t->ratio = (nx && ny && mx > 0) ? my / mx : NAN;
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
    return gp__boot_ratio_ci(x, nx, y, ny, o->bootstrap, o->alpha, seed, &t->ci_lo, &t->ci_hi);
}

static gp_diff_type verdict(const gp_diff_test *t, double threshold, bool require_sig)
{
    if (isnan(t->ratio))
        return GP_DIFF_NO_CHANGE;
    double half = (double)t->n_base * (double)t->n_cur / 2.0;
    if (require_sig) {
        if (t->method == GP_DIFF_TEST_NONE || !t->significant)
            return GP_DIFF_NO_CHANGE;
        if (t->ratio >= 1.0 + threshold && t->u > half)
            return GP_DIFF_REGRESSION;
        if (t->ratio <= 1.0 - threshold && t->u < half)
            return GP_DIFF_IMPROVEMENT;
        return GP_DIFF_NO_CHANGE;
    }
    if (t->ratio >= 1.0 + threshold)
        return GP_DIFF_REGRESSION;
    if (t->ratio <= 1.0 - threshold)
        return GP_DIFF_IMPROVEMENT;
    return GP_DIFF_NO_CHANGE;
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

static const char *const metric_names[GP_DIFF_METRIC_COUNT] = {"total_time", "gpu_time",
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

static bool side_has_gpu(gp_trace *const *runs, size_t n)
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
static gp_status analyze_sides(gp_diff *d, gp_trace *const *base, size_t n_base,
                               gp_trace *const *cur, size_t n_cur, gp_error *err)
{
    if (!side_has_gpu(base, n_base) || !side_has_gpu(cur, n_cur)) {
        bool b = side_has_gpu(base, n_base), c = side_has_gpu(cur, n_cur);
        gp_error_note(
            &d->analyze_note, "no GPU work %s: kernel-type and temporal breakdowns not compared",
            !b && !c ? "on either side" : (b ? "on the current side" : "on the base side"));
        return GP_OK;
    }
    gp_analysis *an[2] = {NULL, NULL};
    gp_trace *const *runs[2] = {base, cur};
    size_t counts[2] = {n_base, n_cur};
    gp_status st = GP_OK;
    for (int s = 0; s < 2 && st == GP_OK; s++) {
        gp_job job = {(gp_trace **)runs[s], counts[s], false};
        st = gp_analyze_job(&job, NULL, &an[s], err);
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
        qsort(d->types, d->n_types, sizeof *d->types, cmp_share);
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
                snprintf(df->title, sizeof df->title, "%s", f->title);
                df->suggestion = f->suggestion;
            } else if (s == 1) {
                if (df->change == GP_DIFF_FINDING_RESOLVED) {
                    df->change = GP_DIFF_FINDING_PERSISTS;
                    snprintf(df->title, sizeof df->title, "%s", f->title);
                    df->suggestion = f->suggestion;
                }
            }
            if (s == 0)
                df->base_gain_ns += (double)f->gain_ns / (double)counts[0];
            else
                df->cur_gain_ns += (double)f->gain_ns / (double)counts[1];
        }
    }
    if (d->n_findings > 1)
        qsort(d->findings, d->n_findings, sizeof *d->findings, cmp_finding);
    d->analyzed = true;
done:
    gp_analysis_free(an[0]);
    gp_analysis_free(an[1]);
    return st;
}

/* Over 150 lines on purpose (one of the three in src/, docs/internals/layers.md): the steps (group
 * both sides, test every row, correct the p-values as one family, rank, analyse) share one
 * cleanup path and the family of p-values; split, each piece would take most of the state. */
gp_status gp_diff_compute(gp_trace *const *base, size_t n_base, gp_trace *const *cur, size_t n_cur,
                          const gp_diff_opts *opts, gp_diff **out, gp_error *err)
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
    double *mvals = NULL, *xs = NULL, *ys = NULL, *pv = NULL;
    gp_diff *d = calloc(1, sizeof *d);
    if (!d)
        goto done;
    d->opts = *opts;
    d->n_base_runs = n_base;
    d->n_cur_runs = n_cur;
    bool per_run = n_base >= 2 && n_cur >= 2;

    gp_trace *const *sides[2] = {base, cur};
    size_t counts[2] = {n_base, n_cur};
    for (int s = 0; s < 2; s++)
        for (size_t r = 0; r < counts[s]; r++)
            if ((st = collect_run(&tab, sides[s][r], s, r, counts[s], opts, mask)) != GP_OK)
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
    size_t max_samples = n_all;
    for (size_t i = 0; i < tab.n; i++)
        for (int s = 0; s < 2; s++)
            if (((dgroup *)gp__group_at(&tab, i))->side[s].n > max_samples)
                max_samples = ((dgroup *)gp__group_at(&tab, i))->side[s].n;
    if (!(xs = malloc(max_samples * sizeof *xs)) || !(ys = malloc(max_samples * sizeof *ys)))
        goto done;

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
        mt->present = nx == n_base && ny == n_cur;
        mt->test.p_value = mt->test.p_adjusted = mt->test.ratio = NAN;
        mt->test.ci_lo = mt->test.ci_hi = NAN;
        mt->delta_pct = NAN;
        if (!mt->present)
            continue;
        qsort(xs, nx, sizeof *xs, gp__cmp_double);
        qsort(ys, ny, sizeof *ys, gp__cmp_double);
        mt->base = gp__median_sorted(xs, nx);
        mt->cur = gp__median_sorted(ys, ny);
        mt->delta = mt->cur - mt->base;
        mt->delta_pct = mt->base > 0 ? 100.0 * mt->delta / mt->base : NAN;
        if (per_run) {
            uint64_t seed = opts->seed ^ gp__hash_bytes(mt->name, strlen(mt->name));
            if ((st = run_test(xs, nx, ys, ny, GP_DIFF_TEST_RUNS, opts, seed, &mt->test)) != GP_OK)
                goto done;
            st = GP_ENOMEM;
        } else {
            mt->test.n_base = nx;
            mt->test.n_cur = ny;
            mt->test.ratio = mt->base > 0 ? mt->cur / mt->base : NAN;
        }
    }
    {
        const gp_diff_metric *tt = &d->metrics[GP_DIFF_M_TOTAL];
        d->speedup = (tt->present && tt->cur > 0) ? tt->base / tt->cur : NAN;
    }

    /* Rows. */
    if (tab.n && !(d->rows = calloc(tab.n, sizeof *d->rows)))
        goto done;
    for (size_t i = 0; i < tab.n; i++) {
        dgroup *g = gp__group_at(&tab, i);
        gp_diff_row *row = &d->rows[d->n_rows++];
        row->name = (char *)g->key.name;
        g->key.name = NULL; /* owned by the row now */
        row->kind = (gp_event_kind)g->key.kind;
        fill_side(&row->base, &g->side[0], n_base);
        fill_side(&row->cur, &g->side[1], n_cur);
        row->delta_ns = row->cur.total - row->base.total;
        row->delta_pct = row->base.total > 0 ? 100.0 * row->delta_ns / row->base.total : NAN;
        size_t nx, ny;
        gp_diff_method method;
        if (per_run) {
            nx = n_base;
            ny = n_cur;
            for (size_t r = 0; r < nx; r++)
                xs[r] = g->side[0].run_tot ? g->side[0].run_tot[r] : 0;
            for (size_t r = 0; r < ny; r++)
                ys[r] = g->side[1].run_tot ? g->side[1].run_tot[r] : 0;
            qsort(xs, nx, sizeof *xs, gp__cmp_double);
            qsort(ys, ny, sizeof *ys, gp__cmp_double);
            method = GP_DIFF_TEST_RUNS;
        } else {
            nx = g->side[0].n;
            ny = g->side[1].n;
            for (size_t k = 0; k < nx; k++) /* already sorted by fill_side */
                xs[k] = (double)g->side[0].durs[k];
            for (size_t k = 0; k < ny; k++)
                ys[k] = (double)g->side[1].durs[k];
            method = GP_DIFF_TEST_CALLS;
        }
        if (g->side[0].n == 0 || g->side[1].n == 0) {
            row->type = g->side[0].n == 0 ? GP_DIFF_NEW : GP_DIFF_REMOVED;
            row->test.method = GP_DIFF_TEST_NONE;
            row->test.n_base = nx;
            row->test.n_cur = ny;
            row->test.p_value = row->test.p_adjusted = row->test.ratio = NAN;
            row->test.ci_lo = row->test.ci_hi = NAN;
            continue;
        }
        uint64_t seed = opts->seed ^ gp__group_hash(row->kind, row->name, strlen(row->name));
        if ((st = run_test(xs, nx, ys, ny, method, opts, seed, &row->test)) != GP_OK)
            goto done;
        st = GP_ENOMEM;
    }

    /* Multiple comparisons: rows form one family, the tested overall metrics another. */
    if (d->n_rows && !(pv = malloc(d->n_rows * sizeof *pv)))
        goto done;
    for (size_t i = 0; i < d->n_rows; i++) {
        pv[i] = d->rows[i].test.p_value;
        if (!isnan(pv[i]))
            d->n_tested++;
    }
    if ((st = gp__p_adjust(pv, d->n_rows, (int)opts->correction)) != GP_OK)
        goto done;
    for (size_t i = 0; i < d->n_rows; i++) {
        gp_diff_row *row = &d->rows[i];
        row->test.p_adjusted = pv[i];
        row->test.significant = !isnan(pv[i]) && pv[i] < opts->alpha;
        if (row->type != GP_DIFF_NEW && row->type != GP_DIFF_REMOVED)
            row->type = verdict(&row->test, opts->threshold, true);
        d->n_by_type[row->type]++;
        if (row->type == GP_DIFF_REGRESSION)
            d->n_significant_regressions++;
    }
    double mp[GP_DIFF_METRIC_COUNT];
    for (int m = 0; m < GP_DIFF_METRIC_COUNT; m++)
        mp[m] = d->metrics[m].test.p_value;
    if ((st = gp__p_adjust(mp, GP_DIFF_METRIC_COUNT, (int)opts->correction)) != GP_OK)
        goto done;
    for (int m = 0; m < GP_DIFF_METRIC_COUNT; m++) {
        gp_diff_metric *mt = &d->metrics[m];
        if (!mt->present)
            continue;
        mt->test.p_adjusted = mp[m];
        mt->test.significant = !isnan(mp[m]) && mp[m] < opts->alpha;
        bool tested = mt->test.method != GP_DIFF_TEST_NONE;
        mt->type = verdict(&mt->test, opts->threshold, tested || per_run);
        if (tested && mt->type == GP_DIFF_REGRESSION)
            d->n_significant_regressions++;
    }
    if (d->n_rows > 1)
        qsort(d->rows, d->n_rows, sizeof *d->rows, cmp_rows);
    if (opts->analyze) {
        if ((st = analyze_sides(d, base, n_base, cur, n_cur, err)) != GP_OK) {
            err_filled = true;
            goto done;
        }
    } else {
        gp_error_note(&d->analyze_note, "analyses not requested");
    }
    st = GP_OK;
    *out = d;
    d = NULL;
done:
    if (st != GP_OK && err && !err_filled)
        gp_error_set(err, st, "diff: %s", gp_strerror(st));
    groups_free(&tab);
    free(mvals);
    free(xs);
    free(ys);
    free(pv);
    gp_diff_free(d);
    return st;
}

void gp_diff_free(gp_diff *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n_rows; i++)
        free(d->rows[i].name);
    free(d->rows);
    free(d->types);
    free(d->findings);
    free(d);
}

gp_status gp_diff_flame(gp_trace *const *base, size_t n_base, gp_trace *const *cur, size_t n_cur,
                        struct gp_flame_tree **out, gp_error *err)
{
    gp_flame_opts fo;
    gp_flame_opts_init(&fo);
    fo.thread_frames = false;
    fo.weight =
        side_has_gpu(base, n_base) && side_has_gpu(cur, n_cur) ? GP_FLAME_GPU : GP_FLAME_CPU;
    gp_flame_tree *tb = NULL, *tc = NULL;
    gp_status st = gp_flame_build(base, n_base, &fo, &tb);
    if (st == GP_OK)
        st = gp_flame_build(cur, n_cur, &fo, &tc);
    if (st == GP_OK)
        st = gp_flame_diff(tb, tc, out);
    if (st != GP_OK)
        gp_error_set(err, st, "differential flame graph: %s",
                     st == GP_EEMPTY ? "a side has no event with a duration to draw"
                                     : gp_strerror(st));
    gp_flame_tree_free(tb);
    gp_flame_tree_free(tc);
    return st;
}
