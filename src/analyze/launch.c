/* Launch statistics (CPU launch duration, launch delay, outliers, CUDA graphs), queue length per
 * stream and memcpy bandwidth over time. Each GPU event arrives joined to its launch (the view's
 * sort-merge join on the correlation id, view.c); queue lengths need one sort of the launch/start
 * boundaries. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze_internal.h"
#include "core/msort.h"
#include "core/stats.h"

gp_status gp__series_alloc(gp_series_point **out, size_t n, gp_ns t0, gp_ns t1)
{
    *out = NULL;
    if (n == 0)
        return GP_OK;
    gp_series_point *p = calloc(n, sizeof(*p));
    if (!p)
        return GP_ENOMEM;
    gp_ns w = t1 > t0 ? gp__ceil_div(t1 - t0, (gp_ns)n) : 1;
    for (size_t i = 0; i < n; i++)
        p[i].t = t0 + (gp_ns)i * w;
    *out = p;
    return GP_OK;
}

static bool is_launch_api(const char *name)
{
    static const char *prefixes[] = {"cudaLaunch",      "cuLaunch",        "hipLaunch",
                                     "hipExtLaunch",    "hipModuleLaunch", "hipExtModuleLaunch",
                                     "cudaGraphLaunch", "cuGraphLaunch",   "hipGraphLaunch"};
    static const char *exact[] = {"cudaMemcpyAsync", "cudaMemsetAsync", "hipMemcpyAsync",
                                  "hipMemsetAsync",  "cuMemcpyAsync",   "cuMemsetD8Async"};
    for (size_t i = 0; i < GP_ARRAY_LEN(prefixes); i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    for (size_t i = 0; i < GP_ARRAY_LEN(exact); i++)
        if (strcmp(name, exact[i]) == 0)
            return true;
    return false;
}

typedef struct api_acc {
    gp_strid name;
    bool driver, graph;
    int64_t *cpu, *delay;
    size_t n_cpu, cap_cpu, n_delay, cap_delay;
    uint64_t cpu_out, delay_out, neg;
} api_acc;

static void add_outlier(gp_launch_stats *ls, size_t max, const gp_launch_outlier *o, double score,
                        double *scores)
{
    size_t n = ls->n_outliers;
    if (n == max && score <= scores[n - 1])
        return;
    size_t i = n < max ? n : max - 1;
    while (i > 0 && scores[i - 1] < score) {
        ls->outliers[i] = ls->outliers[i - 1];
        scores[i] = scores[i - 1];
        i--;
    }
    ls->outliers[i] = *o;
    scores[i] = score;
    if (n < max)
        ls->n_outliers++;
}

/* Looks ev's name up the first time it is seen: api_of[ev->name] becomes the index of its
 * accumulator in *apis (added), or -1 when it is not a launch API (api_of: -2 for names not looked
 * at yet). GP_ENOMEM when it could not be added. */
static gp_status api_add(const gp_trace *t, int32_t *api_of, const gp_event *ev, api_acc **apis,
                         size_t *n_apis, size_t *cap_apis)
{
    int32_t a = -1;
    if (is_launch_api(gp_trace_str(t, ev->name))) {
        api_acc *p = GP_PUSH(*apis, *n_apis, *cap_apis);
        if (!p)
            return GP_ENOMEM;
        p->name = ev->name;
        p->driver = ev->kind == GP_EV_DRIVER;
        p->graph = gp__is_graph_launch(gp_trace_str(t, ev->name));
        a = (int32_t)(*n_apis - 1);
    }
    api_of[ev->name] = a;
    return GP_OK;
}

static int cmp_api_calls(const gp_launch_api *x, const gp_launch_api *y)
{
    return GP_CMP(y->calls, x->calls);
}
GP__DEFINE_MERGE_SORT(sort_apis, gp_launch_api, cmp_api_calls)

/* What a launch API reports of its samples (CPU durations or delays): gp__stats_compute's figures
 * of the same names, less the standard deviation and p99. */
typedef struct api_figures {
    int64_t total, min, max;
    double mean, p50, p95;
} api_figures;

/* Moves the k-th smallest of v[0, n) to v[k], with none greater before it and none smaller after it
 * (quickselect, median-of-three pivots, Hoare partitions; a range that does not shrink fast enough
 * is sorted instead, so that no input costs more than a sort). */
static void select_kth(int64_t *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n; /* k is in [lo, hi) */
    int budget = 4;
    for (size_t m = n; m > 1; m >>= 1)
        budget += 2;
    while (hi - lo > 16) {
        if (budget-- == 0)
            break;
        size_t mid = lo + (hi - lo) / 2;
        int64_t x;
        /* v[lo] <= v[mid] <= v[hi - 1]: the pivot's neighbours stop the scans below */
        if (v[mid] < v[lo])
            x = v[mid], v[mid] = v[lo], v[lo] = x;
        if (v[hi - 1] < v[mid]) {
            x = v[hi - 1], v[hi - 1] = v[mid], v[mid] = x;
            if (v[mid] < v[lo])
                x = v[mid], v[mid] = v[lo], v[lo] = x;
        }
        int64_t pivot = v[mid];
        size_t i = lo, j = hi - 1;
        for (;;) {
            while (v[++i] < pivot)
                ;
            while (v[--j] > pivot)
                ;
            if (i >= j)
                break;
            x = v[i], v[i] = v[j], v[j] = x;
        }
        /* none of v[lo, j] exceeds the pivot, none of v[j + 1, hi) is below it; both parts are
         * shorter than the range */
        if (k <= j)
            hi = j + 1;
        else
            lo = j + 1;
    }
    gp__sort_i64(v + lo, hi - lo);
}

/* Swaps the smallest of v[i, n) into v[i]. */
static void min_to(int64_t *v, size_t i, size_t n)
{
    size_t m = i;
    for (size_t j = i + 1; j < n; j++)
        m = v[j] < v[m] ? j : m;
    int64_t x = v[i];
    v[i] = v[m];
    v[m] = x;
}

/* The figures of v[0, n) (reordered), exactly as gp__stats_compute gives them. gp__quantile_sorted
 * reads the two values around each quantile's rank, and the last value: those are put where a sort
 * would put them, by selection, in O(n) rather than a sort's O(n log n) (the sorts were two thirds
 * of the launch statistics on large_v100_nccl). The sum is taken in long double, as there: exact,
 * so in any order, while the magnitudes sum below 2^64; beyond that the samples are sorted, as
 * there, so that it rounds the same. */
static void figures_of(int64_t *v, size_t n, api_figures *f)
{
    memset(f, 0, sizeof *f);
    if (n == 0)
        return;
    uint64_t mag = 0;
    bool exact = true;
    f->min = f->max = v[0];
    for (size_t i = 0; i < n; i++) {
        f->min = GP_MIN(f->min, v[i]);
        f->max = GP_MAX(f->max, v[i]);
        uint64_t m = v[i] < 0 ? (uint64_t)0 - (uint64_t)v[i] : (uint64_t)v[i];
        exact &= !__builtin_add_overflow(mag, m, &mag);
    }
    if (n < 32 || !exact) {
        gp__sort_i64(v, n);
    } else {
        /* the ranks gp__quantile_sorted interpolates between: k and k + 1 (n >= 2, q < 1) */
        size_t k50 = (size_t)(0.50 * (double)(n - 1)), k95 = (size_t)(0.95 * (double)(n - 1));
        select_kth(v, n, k50);
        min_to(v, k50 + 1, n);
        if (k95 > k50 + 1)
            select_kth(v + k50 + 2, n - k50 - 2, k95 - k50 - 2);
        if (k95 > k50)
            min_to(v, k95 + 1, n);
        for (size_t i = k95 + 2; i < n; i++) /* the largest last */
            if (v[i] > v[n - 1]) {
                int64_t x = v[i];
                v[i] = v[n - 1];
                v[n - 1] = x;
            }
    }
    long double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    f->total = gp__sum_sat(sum); /* as gp__stats_compute */
    f->mean = (double)(sum / n);
    f->p50 = gp__quantile_sorted(v, n, 0.50);
    f->p95 = gp__quantile_sorted(v, n, 0.95);
}

static gp_status launch_stats(const gp__view *v, gp_rank_analysis *r)
{
    const gp_trace *t = v->t;
    const gp_analyze_opts *o = v->o;
    gp_launch_stats *ls = &r->launch;
    api_acc *apis = NULL;
    size_t n_apis = 0, cap_apis = 0;
    double *scores = NULL;
    gp_status st = GP_OK;
    size_t n_str = gp_trace_str_count(t) + 1;
    int32_t *api_of = malloc(n_str * sizeof(*api_of)); /* -2 unknown, -1 not a launch API */
    if (!api_of)
        return GP_ENOMEM;
    for (size_t i = 0; i < n_str; i++)
        api_of[i] = -2;
    if (o->max_outliers) {
        ls->outliers = calloc(o->max_outliers, sizeof(*ls->outliers));
        scores = calloc(o->max_outliers, sizeof(*scores));
        if (!ls->outliers || !scores) {
            st = GP_ENOMEM;
            goto done;
        }
    }
    /* CPU side: every launch call of the selected steps. */
    for (size_t i = 0; i < v->n_rt; i++) {
        const gp_event *ev = v->rt[i];
        if (!gp__view_cpu_kept(v, ev->ts) || ev->name >= n_str)
            continue;
        if (api_of[ev->name] == -2 &&
            (st = api_add(t, api_of, ev, &apis, &n_apis, &cap_apis)) != GP_OK)
            break;
        if (api_of[ev->name] < 0)
            continue;
        api_acc *p = &apis[api_of[ev->name]];
        int64_t *slot = GP_PUSH(p->cpu, p->n_cpu, p->cap_cpu);
        if (!slot) {
            st = GP_ENOMEM;
            break;
        }
        *slot = ev->dur;
        ls->launches++;
        ls->graph_launches += p->graph;
        p->cpu_out += ev->dur > o->launch_outlier_ns;
    }
    /* GPU side: the earliest GPU event of each launch gives the launch delay. */
    for (size_t i = 0; i < v->n_g && st == GP_OK; i++) {
        const gp__gev *g = &v->g[i];
        const gp_event *ev = g->launch;
        if (!ev || !g->first_of_launch || g->kind == GP_EV_SYNC || g->lname >= n_str)
            continue;
        if (api_of[g->lname] == -2 &&
            (st = api_add(t, api_of, ev, &apis, &n_apis, &cap_apis)) != GP_OK)
            break;
        if (api_of[g->lname] < 0) /* ev->name is g->lname */
            continue;
        api_acc *p = &apis[api_of[g->lname]];
        const gp_event *gev = g->ev;
        int64_t delay = g->ts - (g->lts + g->ldur);
        int64_t *ds = GP_PUSH(p->delay, p->n_delay, p->cap_delay);
        if (!ds) {
            st = GP_ENOMEM;
            break;
        }
        *ds = delay;
        ls->matched++;
        p->neg += delay < 0;
        bool delay_out = delay > o->delay_outlier_ns, cpu_out = g->ldur > o->launch_outlier_ns;
        p->delay_out += delay_out;
        if ((cpu_out || delay_out) && o->max_outliers) {
            double sc_cpu = (double)g->ldur / (double)o->launch_outlier_ns;
            double sc_delay = (double)delay / (double)o->delay_outlier_ns;
            gp_launch_outlier ol = {.api = gp_trace_str(t, ev->name),
                                    .kernel = gp_trace_str(t, gev->name),
                                    .ts = g->lts,
                                    .cpu_dur = g->ldur,
                                    .delay = delay,
                                    .by_delay = sc_delay >= sc_cpu};
            add_outlier(ls, o->max_outliers, &ol, GP_MAX(sc_cpu, sc_delay), scores);
        }
    }
    if (st == GP_OK && n_apis) {
        ls->apis = calloc(n_apis, sizeof(*ls->apis));
        if (!ls->apis)
            st = GP_ENOMEM;
    }
    for (size_t a = 0; a < n_apis && st == GP_OK; a++) {
        api_acc *p = &apis[a];
        gp_launch_api *out = &ls->apis[ls->n_apis++];
        out->name = gp_trace_str(t, p->name);
        out->driver = p->driver;
        out->calls = p->n_cpu;
        out->matched = p->n_delay;
        api_figures sc, sd;
        figures_of(p->cpu, p->n_cpu, &sc);
        figures_of(p->delay, p->n_delay, &sd);
        out->cpu_total = sc.total;
        out->cpu_mean = sc.mean;
        out->cpu_p50 = gp__ns_of_double(sc.p50);
        out->cpu_p95 = gp__ns_of_double(sc.p95);
        out->cpu_max = sc.max;
        out->delay_mean = sd.mean;
        out->delay_p50 = gp__ns_of_double(sd.p50);
        out->delay_p95 = gp__ns_of_double(sd.p95);
        out->delay_max = sd.max;
        out->delay_min = sd.min;
        out->cpu_outliers = p->cpu_out;
        out->delay_outliers = p->delay_out;
        out->negative_delay = p->neg;
    }
    /* Most-called API first; ties keep the order of first appearance. */
    if (st == GP_OK && !sort_apis(ls->apis, ls->n_apis))
        st = GP_ENOMEM;
done:
    for (size_t a = 0; a < n_apis; a++) {
        free(apis[a].cpu);
        free(apis[a].delay);
    }
    free(apis);
    free(api_of);
    free(scores);
    return st;
}

/* ---- queue length ---------------------------------------------------------------------------- */

static void series_range(const gp__view *v, gp_ns *t0, gp_ns *t1)
{
    *t0 = INT64_MAX;
    *t1 = INT64_MIN;
    for (size_t i = 0; i < v->n_g; i++) {
        const gp__gev *g = &v->g[i];
        *t0 = GP_MIN(*t0, g->ts);
        *t1 = GP_MAX(*t1, g->ts + g->dur);
        if (g->launch)
            *t0 = GP_MIN(*t0, g->lts);
    }
    if (*t0 > *t1)
        *t0 = *t1 = 0;
}

static size_t bucket_of(gp_ns t, gp_ns t0, gp_ns w, size_t n)
{
    if (t <= t0)
        return 0;
    size_t b = (size_t)((t - t0) / w);
    return b < n ? b : n - 1;
}

/* The queue of g's stream: its index in r->queues, r->n_queues when it is new (the caller adds it
 * there), SIZE_MAX when out of memory. index: (device, stream) -> queue, found by hash (a scan of
 * the queues was quadratic in streams, issue 38). */
static size_t queue_of(gp_rank_analysis *r, gp__group_table *index, const gp__gev *g, size_t *last)
{
    if (*last < r->n_queues && r->queues[*last].stream == g->stream &&
        r->queues[*last].device == g->device)
        return *last;
    int64_t q = gp__lane_of(index, g->device, g->stream);
    if (q < 0)
        return SIZE_MAX;
    if ((size_t)q < r->n_queues)
        *last = (size_t)q;
    return (size_t)q;
}

static bool queued(const gp__gev *g)
{
    return g->launch && g->kind != GP_EV_SYNC && g->kind != GP_EV_GPU_USER_ANNOTATION;
}

/* The boundaries of one kind (launches, or GPU starts) of the queued events: times as offsets from
 * the earliest boundary, and the queue of each. */
typedef struct q_bounds {
    uint64_t *t, *q;
} q_bounds;

/* Rebases b's n times to tmin and sorts them (stably) unless they already are: GPU starts come in
 * the view's order, by start; launches nearly so. GP_ENOMEM. */
static gp_status bounds_sort(q_bounds *b, size_t n, gp_ns tmin)
{
    bool sorted = true;
    for (size_t i = 0; i < n; i++) {
        b->t[i] = (uint64_t)((gp_ns)b->t[i] - tmin);
        sorted &= i == 0 || b->t[i] >= b->t[i - 1];
    }
    return sorted ? GP_OK : gp__radix_sort_kv(b->t, b->q, n);
}

/* The boundaries of each stream's queue (launch +1, GPU start -1), collected in one pass with the
 * queues, sorted per kind (if needed), then swept in time order: the two lists merged, launches
 * first at equal times. A radix sort of both kinds together was a third of the task. */
static gp_status queues(const gp__view *v, gp_rank_analysis *r)
{
    size_t n = 0, cap_q = 0, last = 0, nb = v->o->series_points;
    gp_status st = GP_OK;
    gp_ns tmin = INT64_MAX;
    gp__group_table index;
    gp__lanes_init(&index);
    q_bounds lb = {malloc((v->n_g ? v->n_g : 1) * sizeof(uint64_t)),
                   malloc((v->n_g ? v->n_g : 1) * sizeof(uint64_t))};
    q_bounds sb = {malloc((v->n_g ? v->n_g : 1) * sizeof(uint64_t)),
                   malloc((v->n_g ? v->n_g : 1) * sizeof(uint64_t))};
    int64_t *len = NULL;
    gp_ns *last_t = NULL;
    double *area = NULL;
    if (!lb.t || !lb.q || !sb.t || !sb.q) {
        st = GP_ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < v->n_g; i++) {
        const gp__gev *g = &v->g[i];
        if (!queued(g))
            continue;
        size_t q = queue_of(r, &index, g, &last);
        if (q >= r->n_queues) {
            gp_queue_stream *qs = q == SIZE_MAX ? NULL : GP_PUSH(r->queues, r->n_queues, cap_q);
            if (!qs) {
                st = GP_ENOMEM;
                goto done;
            }
            qs->stream = g->stream;
            qs->device = g->device;
        }
        r->queues[q].launches++;
        lb.t[n] = (uint64_t)g->lts;
        sb.t[n] = (uint64_t)g->ts;
        lb.q[n] = sb.q[n] = q;
        n++;
        tmin = GP_MIN(tmin, GP_MIN(g->lts, g->ts));
    }
    if (n == 0)
        goto done;
    len = calloc(r->n_queues, sizeof(*len));
    last_t = calloc(r->n_queues, sizeof(*last_t));
    area = calloc(r->n_queues, sizeof(*area));
    if (!len || !last_t || !area) {
        st = GP_ENOMEM;
        goto done;
    }
    if ((st = bounds_sort(&lb, n, tmin)) != GP_OK || (st = bounds_sort(&sb, n, tmin)) != GP_OK)
        goto done;
    gp_ns t0, t1;
    series_range(v, &t0, &t1);
    gp_ns w = t1 > t0 && nb ? gp__ceil_div(t1 - t0, (gp_ns)nb) : 1;
    for (size_t q = 0; q < r->n_queues && st == GP_OK; q++) {
        st = gp__series_alloc(&r->queues[q].series, nb, t0, t1);
        r->queues[q].n_series = nb;
        last_t[q] = t0;
    }
    for (size_t i = 0, j = 0; (i < n || j < n) && st == GP_OK;) {
        bool launch = j == n || (i < n && lb.t[i] <= sb.t[j]);
        size_t q = launch ? lb.q[i] : sb.q[j];
        gp_ns t = tmin + (gp_ns)(launch ? lb.t[i++] : sb.t[j++]);
        gp_queue_stream *qs = &r->queues[q];
        area[q] += (double)len[q] * (double)(t - last_t[q]);
        last_t[q] = t;
        len[q] += launch ? +1 : -1;
        qs->max_len = GP_MAX(qs->max_len, len[q]);
        if (nb) {
            size_t b = bucket_of(t, t0, w, nb);
            if ((double)len[q] > qs->series[b].v)
                qs->series[b].v = (double)len[q];
        }
    }
    for (size_t q = 0; q < r->n_queues && st == GP_OK; q++)
        r->queues[q].mean_len = t1 > t0 ? area[q] / (double)(t1 - t0) : 0.0;
done:
    gp__group_table_free(&index);
    free(lb.t);
    free(lb.q);
    free(sb.t);
    free(sb.q);
    free(len);
    free(last_t);
    free(area);
    return st;
}

/* ---- memcpy bandwidth ------------------------------------------------------------------------ */

static gp_status bandwidth(const gp__view *v, gp_rank_analysis *r)
{
    const gp_trace *t = v->t;
    gp_bandwidth *bw = &r->bandwidth;
    gp_ns t0, t1;
    series_range(v, &t0, &t1);
    size_t nb = v->o->series_points;
    gp_ns w = t1 > t0 && nb ? gp__ceil_div(t1 - t0, (gp_ns)nb) : 1;
    gp_status st = gp__series_alloc(&bw->series, nb, t0, t1);
    if (st != GP_OK)
        return st;
    bw->n_series = nb;
    for (size_t i = 0; i < v->n_g; i++) {
        const gp_event *ev = v->g[i].ev;
        if (ev->kind != GP_EV_MEMCPY)
            continue;
        const gp_gpu_info *gi = gp_event_gpu_info(t, ev);
        bw->copies++;
        if (strstr(gp_trace_str(t, ev->name), "Pageable"))
            bw->pageable++;
        if (!gi || gi->bytes <= 0 || ev->dur <= 0)
            continue;
        /* saturating: byte counts come from the file (fuzz_timeline_page overflowed the sum) */
        bw->bytes = gp__sat_add(bw->bytes, gi->bytes);
        bw->busy = gp__sat_add(bw->busy, ev->dur);
        if (!nb)
            continue;
        double rate = (double)gi->bytes / (double)ev->dur; /* bytes/ns = GB/s */
        gp_ns s = ev->ts, e = ev->ts + ev->dur;
        for (size_t b = bucket_of(s, t0, w, nb); b < nb; b++) {
            gp_ns bs = t0 + (gp_ns)b * w, be = bs + w;
            gp_ns os = GP_MAX(s, bs), oe = GP_MIN(e, be);
            if (oe > os)
                bw->series[b].v += rate * (double)(oe - os) / (double)w;
            if (be >= e)
                break;
        }
    }
    bw->mean_gbps = bw->busy > 0 ? (double)bw->bytes / (double)bw->busy : 0.0;
    return GP_OK;
}

gp_status gp__analyze_launch_stats(const gp__view *v, gp_rank_analysis *r)
{
    /* A kernel is in a graph when it carries a graph id (CUPTI, Kineto on CUDA) or its launch is
     * a graph launch: ROCm traces give graph-replayed kernels the hipGraphLaunch's correlation id
     * and no graph id. Whether a launch name is a graph launch is decided once per name. */
    size_t n_str = gp_trace_str_count(v->t) + 1;
    int8_t *graph_name = calloc(n_str, 1); /* 0 unknown, 1 graph launch, -1 not */
    if (!graph_name)
        return GP_ENOMEM;
    for (size_t i = 0; i < v->n_g; i++) {
        const gp__gev *g = &v->g[i];
        bool in_graph = g->in_graph;
        if (!in_graph && g->kind == GP_EV_KERNEL && g->launch && g->lname < n_str) {
            int8_t *m = &graph_name[g->lname];
            if (*m == 0)
                *m = gp__is_graph_launch(gp_trace_str(v->t, g->lname)) ? 1 : -1;
            in_graph = *m == 1;
        }
        r->launch.graph_kernels += in_graph;
        if (!g->launch && g->kind != GP_EV_SYNC && g->kind != GP_EV_GPU_USER_ANNOTATION &&
            g->kind != GP_EV_CPU_OP)
            r->launch.gpu_unmatched++;
    }
    free(graph_name);
    return launch_stats(v, r);
}

gp_status gp__analyze_queues(const gp__view *v, gp_rank_analysis *r)
{
    return queues(v, r);
}

gp_status gp__analyze_bandwidth(const gp__view *v, gp_rank_analysis *r)
{
    return bandwidth(v, r);
}
