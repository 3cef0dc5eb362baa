/* Launch statistics (CPU launch duration, launch delay, outliers, CUDA graphs), queue length per
 * stream and memcpy bandwidth over time. Launches are joined to GPU work with one hash map on the
 * correlation id; queue lengths need one sort of the launch/start boundaries. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze_internal.h"
#include "core/stats.h"

gp_status gp__series_alloc(gp_series_point **out, size_t n, gp_ns t0, gp_ns t1)
{
    *out = NULL;
    if (n == 0)
        return GP_OK;
    gp_series_point *p = calloc(n, sizeof(*p));
    if (!p)
        return GP_ENOMEM;
    gp_ns w = t1 > t0 ? (t1 - t0 + (gp_ns)n - 1) / (gp_ns)n : 1;
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
    bool driver;
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

static gp_status launch_stats(const gp__view *v, gp_rank_analysis *r, const gp__imap *gpu_of)
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
    for (size_t k = 0; k < t->n_tracks && st == GP_OK; k++) {
        const gp_track *tr = &t->tracks[k];
        if (tr->kind == GP_TRACK_GPU_STREAM || tr->kind == GP_TRACK_COUNTER)
            continue;
        for (size_t i = 0; i < tr->n_events; i++) {
            const gp_event *ev = &tr->events[i];
            if ((ev->kind != GP_EV_RUNTIME && ev->kind != GP_EV_DRIVER) ||
                !gp__view_cpu_kept(v, ev->ts) || ev->name >= n_str)
                continue;
            int32_t a = api_of[ev->name];
            if (a == -2) {
                const char *name = gp_trace_str(t, ev->name);
                a = -1;
                if (is_launch_api(name)) {
                    api_acc *p = GP_PUSH(apis, n_apis, cap_apis);
                    if (!p) {
                        st = GP_ENOMEM;
                        break;
                    }
                    p->name = ev->name;
                    p->driver = ev->kind == GP_EV_DRIVER;
                    a = (int32_t)(n_apis - 1);
                }
                api_of[ev->name] = a;
            }
            if (a < 0)
                continue;
            api_acc *p = &apis[a];
            int64_t *slot = GP_PUSH(p->cpu, p->n_cpu, p->cap_cpu);
            if (!slot) {
                st = GP_ENOMEM;
                break;
            }
            *slot = ev->dur;
            ls->launches++;
            if (strstr(gp_trace_str(t, ev->name), "GraphLaunch"))
                ls->graph_launches++;
            bool cpu_out = ev->dur > o->launch_outlier_ns;
            p->cpu_out += cpu_out;
            uint64_t gi;
            if (ev->correlation == 0 || !gp__imap_get(gpu_of, ev->correlation, &gi)) {
                if (cpu_out) {
                    gp_launch_outlier ol = {.api = gp_trace_str(t, ev->name),
                                            .kernel = "",
                                            .ts = ev->ts,
                                            .cpu_dur = ev->dur};
                    add_outlier(ls, o->max_outliers, &ol,
                                (double)ev->dur / (double)o->launch_outlier_ns, scores);
                }
                continue;
            }
            const gp_event *gev = v->g[gi].ev;
            int64_t delay = gev->ts - (ev->ts + ev->dur);
            int64_t *ds = GP_PUSH(p->delay, p->n_delay, p->cap_delay);
            if (!ds) {
                st = GP_ENOMEM;
                break;
            }
            *ds = delay;
            ls->matched++;
            p->neg += delay < 0;
            bool delay_out = delay > o->delay_outlier_ns;
            p->delay_out += delay_out;
            if ((cpu_out || delay_out) && o->max_outliers) {
                double sc_cpu = (double)ev->dur / (double)o->launch_outlier_ns;
                double sc_delay = (double)delay / (double)o->delay_outlier_ns;
                gp_launch_outlier ol = {.api = gp_trace_str(t, ev->name),
                                        .kernel = gp_trace_str(t, gev->name),
                                        .ts = ev->ts,
                                        .cpu_dur = ev->dur,
                                        .delay = delay,
                                        .by_delay = sc_delay >= sc_cpu};
                add_outlier(ls, o->max_outliers, &ol, GP_MAX(sc_cpu, sc_delay), scores);
            }
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
        gp__stats sc, sd;
        gp__stats_compute(p->cpu, p->n_cpu, &sc);
        gp__stats_compute(p->delay, p->n_delay, &sd);
        out->cpu_total = sc.total;
        out->cpu_mean = sc.mean;
        out->cpu_p50 = (gp_ns)sc.p50;
        out->cpu_p95 = (gp_ns)sc.p95;
        out->cpu_max = sc.max;
        out->delay_mean = sd.mean;
        out->delay_p50 = (gp_ns)sd.p50;
        out->delay_p95 = (gp_ns)sd.p95;
        out->delay_max = sd.max;
        out->delay_min = sd.min;
        out->cpu_outliers = p->cpu_out;
        out->delay_outliers = p->delay_out;
        out->negative_delay = p->neg;
    }
    /* Most-called API first. */
    for (size_t i = 1; i < ls->n_apis; i++) {
        gp_launch_api x = ls->apis[i];
        size_t j = i;
        while (j > 0 && ls->apis[j - 1].calls < x.calls) {
            ls->apis[j] = ls->apis[j - 1];
            j--;
        }
        ls->apis[j] = x;
    }
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

typedef struct qpoint {
    gp_ns t;
    uint32_t q;    /* queue index */
    int32_t delta; /* +1 launch, -1 GPU start */
} qpoint;

static int cmp_qpoint(const void *pa, const void *pb)
{
    const qpoint *a = pa, *b = pb;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return b->delta - a->delta; /* launches first */
}

static void series_range(const gp__view *v, gp_ns *t0, gp_ns *t1)
{
    *t0 = INT64_MAX;
    *t1 = INT64_MIN;
    for (size_t i = 0; i < v->n_g; i++) {
        const gp_event *ev = v->g[i].ev;
        *t0 = GP_MIN(*t0, ev->ts);
        *t1 = GP_MAX(*t1, ev->ts + ev->dur);
        if (v->g[i].launch)
            *t0 = GP_MIN(*t0, v->g[i].launch->ts);
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

static gp_status queues(const gp__view *v, gp_rank_analysis *r)
{
    size_t n_pts = 0, cap_q = 0;
    qpoint *pts = NULL;
    gp_status st = GP_OK;
    for (size_t i = 0; i < v->n_g; i++) {
        const gp__gev *g = &v->g[i];
        if (!g->launch || g->kind == GP_EV_SYNC || g->kind == GP_EV_GPU_USER_ANNOTATION)
            continue;
        size_t q;
        for (q = 0; q < r->n_queues; q++)
            if (r->queues[q].stream == g->stream && r->queues[q].device == g->device)
                break;
        if (q == r->n_queues) {
            gp_queue_stream *qs = GP_PUSH(r->queues, r->n_queues, cap_q);
            if (!qs)
                return GP_ENOMEM;
            qs->stream = g->stream;
            qs->device = g->device;
        }
        r->queues[q].launches++;
        n_pts += 2;
    }
    if (n_pts == 0)
        return GP_OK;
    pts = malloc(n_pts * sizeof(*pts));
    int64_t *len = calloc(r->n_queues, sizeof(*len));
    gp_ns *last_t = calloc(r->n_queues, sizeof(*last_t));
    double *area = calloc(r->n_queues, sizeof(*area));
    if (!pts || !len || !last_t || !area) {
        st = GP_ENOMEM;
        goto done;
    }
    size_t n = 0;
    for (size_t i = 0; i < v->n_g; i++) {
        const gp__gev *g = &v->g[i];
        if (!g->launch || g->kind == GP_EV_SYNC || g->kind == GP_EV_GPU_USER_ANNOTATION)
            continue;
        uint32_t q;
        for (q = 0; q < r->n_queues; q++)
            if (r->queues[q].stream == g->stream && r->queues[q].device == g->device)
                break;
        pts[n++] = (qpoint){g->launch->ts, q, +1};
        pts[n++] = (qpoint){g->ev->ts, q, -1};
    }
    qsort(pts, n, sizeof(*pts), cmp_qpoint);
    gp_ns t0, t1;
    series_range(v, &t0, &t1);
    size_t nb = v->o->series_points;
    gp_ns w = t1 > t0 && nb ? (t1 - t0 + (gp_ns)nb - 1) / (gp_ns)nb : 1;
    for (size_t q = 0; q < r->n_queues && st == GP_OK; q++) {
        st = gp__series_alloc(&r->queues[q].series, nb, t0, t1);
        r->queues[q].n_series = nb;
        last_t[q] = t0;
    }
    for (size_t i = 0; i < n && st == GP_OK; i++) {
        qpoint *p = &pts[i];
        gp_queue_stream *qs = &r->queues[p->q];
        area[p->q] += (double)len[p->q] * (double)(p->t - last_t[p->q]);
        last_t[p->q] = p->t;
        len[p->q] += p->delta;
        qs->max_len = GP_MAX(qs->max_len, len[p->q]);
        if (nb) {
            size_t b = bucket_of(p->t, t0, w, nb);
            if ((double)len[p->q] > qs->series[b].v)
                qs->series[b].v = (double)len[p->q];
        }
    }
    for (size_t q = 0; q < r->n_queues && st == GP_OK; q++)
        r->queues[q].mean_len = t1 > t0 ? area[q] / (double)(t1 - t0) : 0.0;
done:
    free(pts);
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
    gp_ns w = t1 > t0 && nb ? (t1 - t0 + (gp_ns)nb - 1) / (gp_ns)nb : 1;
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
        bw->bytes += gi->bytes;
        bw->busy += ev->dur;
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

gp_status gp__analyze_launch(const gp__view *v, gp_rank_analysis *r)
{
    gp__imap gpu_of;
    gp_status st = gp__imap_init(&gpu_of, v->n_g);
    for (size_t i = 0; i < v->n_g && st == GP_OK; i++) {
        const gp__gev *g = &v->g[i];
        uint64_t old;
        if (g->ev->correlation != 0 && g->kind != GP_EV_SYNC &&
            !gp__imap_get(&gpu_of, g->ev->correlation, &old))
            st = gp__imap_put(&gpu_of, g->ev->correlation, i);
        if (g->kind == GP_EV_KERNEL) {
            const gp_gpu_info *gi = gp_event_gpu_info(v->t, g->ev);
            if (gi && gi->graph_id >= 0)
                r->launch.graph_kernels++;
        }
        if (!g->launch && g->kind != GP_EV_SYNC && g->kind != GP_EV_GPU_USER_ANNOTATION)
            r->launch.gpu_unmatched++;
    }
    if (st == GP_OK)
        st = launch_stats(v, r, &gpu_of);
    gp__imap_free(&gpu_of);
    if (st == GP_OK)
        st = queues(v, r);
    if (st == GP_OK)
        st = bandwidth(v, r);
    return st;
}
