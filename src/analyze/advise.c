/* Stragglers across ranks and bottleneck rules with evidence, estimated gain, suggestion type and
 * priority. Every rule and formula is listed in docs/analyses.md ("Findings").
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/msort.h"
#include "core/stats.h"
#include "analyze/analyze_internal.h"
#include "gpuprof/ops.h"

const char *gp_priority_name(gp_priority p)
{
    static const char *names[] = {"critical", "high", "medium", "low"};
    return (unsigned)p < 4 ? names[p] : "unknown";
}

const char *gp_suggestion_type_name(gp_suggestion_type t)
{
    static const char *names[] = {"routing", "batching",  "memory",
                                  "caching", "algorithm", "parallelization"};
    return (unsigned)t < 6 ? names[t] : "unknown";
}

void gp_ranks_format(const int32_t *ranks, size_t n, const char *dash, char *buf, size_t cap)
{
    if (cap == 0)
        return;
    buf[0] = '\0';
    if (n == 0) {
        snprintf(buf, cap, "job");
        return;
    }
    size_t len = (size_t)snprintf(buf, cap, "%s", n == 1 ? "rank " : "ranks ");
    for (size_t i = 0; i < n && len < cap;) {
        size_t j = i;
        while (j + 1 < n && ranks[j + 1] == ranks[j] + 1)
            j++;
        int w;
        if (j == i)
            w = snprintf(buf + len, cap - len, "%s%d", i ? ", " : "", (int)ranks[i]);
        else
            w = snprintf(buf + len, cap - len, "%s%d%s%d", i ? ", " : "", (int)ranks[i],
                         j == i + 1 ? ", " : dash, (int)ranks[j]);
        if (w < 0)
            break;
        len += (size_t)w;
        i = j + 1;
    }
}

static gp_status add_straggler(gp_analysis *a, size_t *cap, int32_t rank, const char *metric,
                               double value, double med)
{
    gp_straggler *s = GP_PUSH(a->stragglers, a->n_stragglers, *cap);
    if (!s)
        return GP_ENOMEM;
    s->rank = rank;
    s->metric = metric;
    s->value = value;
    s->median = med;
    return GP_OK;
}

static gp_status stragglers(gp_analysis *a)
{
    size_t n = 0, cap = 0;
    double *kt = calloc(a->n_ranks + 1, sizeof(double));
    double *comp = calloc(a->n_ranks + 1, sizeof(double));
    double *idle = calloc(a->n_ranks + 1, sizeof(double));
    gp_status st = GP_OK;
    if (!kt || !comp || !idle) {
        st = GP_ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < a->n_ranks; i++) {
        const gp_temporal *tb = &a->ranks[i].temporal;
        if (!tb->valid)
            continue;
        kt[n] = (double)tb->kernel_time;
        comp[n] = (double)tb->compute;
        idle[n] = tb->idle_pct;
        n++;
    }
    if (n < 2)
        goto done;
    double m_kt = gp__median_d(kt, n), m_comp = gp__median_d(comp, n),
           m_idle = gp__median_d(idle, n);
    for (size_t i = 0; i < a->n_ranks && st == GP_OK; i++) {
        const gp_rank_analysis *r = &a->ranks[i];
        const gp_temporal *tb = &r->temporal;
        if (!tb->valid)
            continue;
        if ((double)tb->compute > 1.15 * m_comp && (double)tb->compute - m_comp >= 100000.0)
            st = add_straggler(a, &cap, r->rank, "compute_time", (double)tb->compute, m_comp);
        else if ((double)tb->kernel_time > 1.15 * m_kt &&
                 (double)tb->kernel_time - m_kt >= 100000.0)
            st = add_straggler(a, &cap, r->rank, "kernel_time", (double)tb->kernel_time, m_kt);
        else if (fabs(tb->idle_pct - m_idle) >= 15.0)
            st = add_straggler(a, &cap, r->rank, "idle_pct", tb->idle_pct, m_idle);
    }
done:
    free(kt);
    free(comp);
    free(idle);
    return st;
}

gp_priority gp__advise_priority(gp_ns gain, gp_ns base)
{
    double share = base > 0 ? (double)gain / (double)base : 0.0;
    if (share >= 0.30)
        return GP_PRIO_CRITICAL;
    if (share >= 0.15)
        return GP_PRIO_HIGH;
    if (share >= 0.05)
        return GP_PRIO_MEDIUM;
    return GP_PRIO_LOW;
}

gp_finding *gp__advise_add(gp_analysis *a, size_t *cap, const char *rule, int32_t rank)
{
    gp_finding *f = GP_PUSH(a->findings, a->n_findings, *cap);
    if (f) {
        memset(f, 0, sizeof *f);
        f->rule = rule;
        f->rank = rank;
    }
    return f;
}

void gp__advise_metric(gp_finding *f, const char *name, double value, gp_finding_unit unit)
{
    if (f->n_evidence >= GP_ARRAY_LEN(f->evidence))
        return;
    gp_evidence *e = &f->evidence[f->n_evidence++];
    e->name = name;
    e->value = value;
    e->unit = unit;
}

gp_finding_object *gp__advise_object(gp_finding *f, gp_object_kind kind, const char *name,
                                     gp_ns time, uint64_t count)
{
    if (f->n_objects >= GP_ARRAY_LEN(f->objects))
        return NULL;
    gp_finding_object *o = &f->objects[f->n_objects++];
    memset(o, 0, sizeof *o);
    o->kind = kind;
    snprintf(o->name, sizeof o->name, "%s", name ? name : "");
    o->time = time;
    o->count = count;
    o->roof = -1;
    return o;
}

const char *gp_finding_unit_name(gp_finding_unit u)
{
    static const char *names[] = {"ns", "bytes", "bytes/s", "flop/s", "ratio", "count"};
    return (unsigned)u < GP_ARRAY_LEN(names) ? names[u] : "unknown";
}

const char *gp_object_kind_name(gp_object_kind k)
{
    static const char *names[] = {"op",     "kernel", "frame", "shapes",    "dtype",
                                  "module", "line",   "call",  "collective"};
    return (unsigned)k < GP_ARRAY_LEN(names) ? names[k] : "unknown";
}

bool gp_finding_metric(const gp_finding *f, const char *name, double *out)
{
    for (size_t i = 0; i < f->n_evidence; i++)
        if (f->evidence[i].name && strcmp(f->evidence[i].name, name) == 0) {
            *out = f->evidence[i].value;
            return true;
        }
    return false;
}

const char *gp_finding_object_of(const gp_finding *f, gp_object_kind k)
{
    for (size_t i = 0; i < f->n_objects; i++)
        if (f->objects[i].kind == k)
            return f->objects[i].name;
    return NULL;
}

/* True when the launch-bound finding has evidence: the rank's critical path is not computed
 * (none valid) and its device-wide idle causes (stream -1) name launching as the largest
 * cause. With a critical path, launch overhead on the path is the cause finding
 * critical_path_gpu_kernel_launch_overhead (findings_cause.c) instead. *launch: that cause's
 * time. */
static bool idle_says_launch(const gp_rank_analysis *r, gp_ns *launch)
{
    for (size_t i = 0; i < r->n_critical_paths; i++)
        if (r->critical_paths[i].valid)
            return false;
    for (size_t i = 0; i < r->n_idle_causes; i++) {
        const gp_idle_causes *ic = &r->idle_causes[i];
        if (ic->stream != -1 || ic->idle <= 0)
            continue;
        for (int c = 0; c < GP_IC_COUNT; c++)
            if (c != GP_IC_LAUNCH && ic->by_cause[c] > ic->by_cause[GP_IC_LAUNCH])
                return false;
        *launch = ic->by_cause[GP_IC_LAUNCH];
        return *launch > 0;
    }
    return false;
}

/* Over 150 lines on purpose (one of the three in src/, docs/internals/layers.md): the rules are
 * a flat list, one short block each, read top to bottom like the table in docs/analyses.md;
 * a function per rule would only move each block away from its neighbours. */
static gp_status rank_findings(gp_analysis *a, size_t *cap, const gp_rank_analysis *r)
{
    const gp_temporal *tb = &r->temporal;
    gp_ns base = tb->valid ? tb->kernel_time : r->activity.span;
    gp_ns host_wait = 0, idle_sum = 0, kw_idle = 0;
    uint64_t gaps = 0, kw_gaps = 0;
    for (size_t i = 0; i < r->n_idle; i++) {
        const gp_idle_stream *s = &r->idle[i];
        host_wait = gp__sat_add(host_wait, s->idle[GP_IDLE_HOST_WAIT]);
        idle_sum = gp__sat_add(idle_sum, s->total);
        kw_idle = gp__sat_add(kw_idle, s->idle[GP_IDLE_KERNEL_WAIT]);
        kw_gaps += s->gaps[GP_IDLE_KERNEL_WAIT];
        for (int c = 0; c < GP_IDLE_COUNT; c++)
            gaps += s->gaps[c];
    }
    /* most of the rank's kernels are launched by graph replays */
    bool graphed = r->kernels_total > 0 && r->launch.graph_kernels * 2 >= r->kernels_total;
    gp_finding *f;
    /* launch-bound: only where the idle causes say launching (see idle_says_launch) */
    gp_ns launch_idle = 0;
    if (tb->valid && tb->idle_pct >= 30.0 && idle_says_launch(r, &launch_idle)) {
        if (!(f = gp__advise_add(a, cap, "launch_bound", r->rank)))
            return GP_ENOMEM;
        gp__advise_metric(f, "idle_share", tb->idle_pct / 100.0, GP_FU_RATIO);
        gp__advise_metric(f, "idle_time", (double)tb->idle, GP_FU_NS);
        gp__advise_metric(f, "launch_idle", (double)launch_idle, GP_FU_NS);
        gp__advise_metric(f, "kernels", (double)r->kernels_total, GP_FU_COUNT);
        if (r->kernels_total)
            gp__advise_metric(f, "small_kernels_share",
                              (double)r->small_kernels / (double)r->kernels_total, GP_FU_RATIO);
        if (r->launch.n_apis)
            gp__advise_metric(f, "launch_cpu_p50", (double)r->launch.apis[0].cpu_p50, GP_FU_NS);
        if (r->launch.graph_kernels)
            gp__advise_metric(f, "kernels_in_graphs", (double)r->launch.graph_kernels, GP_FU_COUNT);
        f->gain_ns = GP_MIN(tb->idle, launch_idle);
        f->type = graphed ? GP_SUG_PARALLELIZATION : GP_SUG_CACHING;
        /* Advice to capture graphs is no help to a step that already replays one (vLLM, SGLang
         * decode): there the wait is host work between replays (variant 1). */
        f->variant = graphed ? 1 : 0;
        f->priority = gp__advise_priority(f->gain_ns, base);
    }
    /* small kernels dominating */
    if (r->kernels_total >= 100 && r->small_kernels * 2 >= r->kernels_total) {
        if (!(f = gp__advise_add(a, cap, "small_kernels", r->rank)))
            return GP_ENOMEM;
        gp__advise_metric(f, "small_kernels", (double)r->small_kernels, GP_FU_COUNT);
        gp__advise_metric(f, "kernels", (double)r->kernels_total, GP_FU_COUNT);
        gp__advise_metric(f, "small_kernels_share",
                          (double)r->small_kernels / (double)r->kernels_total, GP_FU_RATIO);
        gp__advise_metric(f, "small_kernel_limit", a->opts.small_kernel_ns, GP_FU_NS);
        gp__advise_metric(f, "small_kernels_time", (double)r->small_kernels_time, GP_FU_NS);
        /* In graph replays launches cost nothing per kernel: fusing saves only the gaps between
         * kernels already queued (kernel_wait), not the host's gaps between replays. */
        gp_ns mean_gap = graphed ? (kw_gaps ? kw_idle / (gp_ns)kw_gaps : 0)
                                 : (gaps ? idle_sum / (gp_ns)gaps : 0);
        gp__advise_metric(f, graphed ? "mean_kernel_wait_gap" : "mean_gap", (double)mean_gap,
                          GP_FU_NS);
        f->gain_ns = GP_MAX(
            0, GP_MIN(tb->valid ? tb->idle : 0, gp__sat_mul((gp_ns)r->small_kernels, mean_gap)));
        f->type = GP_SUG_BATCHING;
        f->priority = gp__advise_priority(f->gain_ns, base);
    }
    /* low communication/computation overlap */
    const gp_overlap *ov = &r->overlap;
    if (tb->valid && ov->comm > 0 && (double)ov->comm >= 0.05 * (double)tb->kernel_time &&
        ov->pct < 30.0) {
        if (!(f = gp__advise_add(a, cap, "low_overlap", r->rank)))
            return GP_ENOMEM;
        gp__advise_metric(f, "overlap_share", ov->pct / 100.0, GP_FU_RATIO);
        gp__advise_metric(f, "communication_time", (double)ov->comm, GP_FU_NS);
        gp__advise_metric(f, "computation_time", (double)ov->comp, GP_FU_NS);
        f->gain_ns = GP_MAX(0, GP_MIN(ov->comm - ov->overlap, ov->comp - ov->overlap));
        f->type = GP_SUG_PARALLELIZATION;
        f->priority = gp__advise_priority(f->gain_ns, base);
    }
    /* copy-heavy or pageable copies */
    const gp_bandwidth *bw = &r->bandwidth;
    if (tb->valid && bw->busy > 0 &&
        ((double)bw->busy >= 0.10 * (double)tb->kernel_time ||
         (bw->pageable > 0 && (double)bw->busy >= 0.01 * (double)tb->kernel_time))) {
        if (!(f = gp__advise_add(a, cap, "copy_heavy", r->rank)))
            return GP_ENOMEM;
        gp__advise_metric(f, "memcpy_time", (double)bw->busy, GP_FU_NS);
        gp__advise_metric(f, "memcpy_share", (double)bw->busy / (double)tb->kernel_time,
                          GP_FU_RATIO);
        gp__advise_metric(f, "pageable_copies", (double)bw->pageable, GP_FU_COUNT);
        gp__advise_metric(f, "mean_bandwidth", bw->mean_gbps * 1e9, GP_FU_BYTES_PER_S);
        f->gain_ns = bw->pageable ? bw->busy / 2 : bw->busy / 4;
        f->type = GP_SUG_MEMORY;
        f->priority = gp__advise_priority(f->gain_ns, base);
    }
    /* frequent synchronisation */
    const gp_activity *act = &r->activity;
    if (act->syncs >= 10 && act->span > 0 && (double)act->sync >= 0.10 * (double)act->span) {
        if (!(f = gp__advise_add(a, cap, "frequent_sync", r->rank)))
            return GP_ENOMEM;
        gp__advise_metric(f, "syncs", (double)act->syncs, GP_FU_COUNT);
        gp__advise_metric(f, "sync_time", (double)act->sync, GP_FU_NS);
        gp__advise_metric(f, "sync_share_of_span", (double)act->sync / (double)act->span,
                          GP_FU_RATIO);
        f->gain_ns = act->sync / 2;
        f->type = GP_SUG_ALGORITHM;
        f->priority = gp__advise_priority(f->gain_ns, base);
    }
    /* low-occupancy hot kernel */
    if (r->low_occ_kernel && r->kernels_time > 0 &&
        (double)r->low_occ_time >= 0.05 * (double)r->kernels_time) {
        if (!(f = gp__advise_add(a, cap, "low_occupancy", r->rank)))
            return GP_ENOMEM;
        gp__advise_object(f, GP_OBJ_KERNEL, r->low_occ_kernel, r->low_occ_time, 0);
        gp__advise_metric(f, "occupancy", r->low_occ_pct / 100.0, GP_FU_RATIO);
        gp__advise_metric(f, "kernel_time", (double)r->low_occ_time, GP_FU_NS);
        gp__advise_metric(f, "share_of_kernel_time",
                          (double)r->low_occ_time / (double)r->kernels_time, GP_FU_RATIO);
        f->gain_ns = r->low_occ_time / 4;
        f->type = GP_SUG_ALGORITHM;
        f->priority = gp__advise_priority(f->gain_ns, base);
    }
    /* memory peak near capacity */
    for (size_t i = 0; i < r->n_memory; i++) {
        const gp_memory_device *md = &r->memory[i];
        if (md->capacity <= 0 || md->peak_allocated < 0)
            continue;
        double frac = (double)md->peak_allocated / (double)md->capacity;
        if (frac < 0.90)
            continue;
        if (!(f = gp__advise_add(a, cap, "memory_peak", r->rank)))
            return GP_ENOMEM;
        gp__advise_metric(f, "device", (double)md->device_id, GP_FU_COUNT);
        gp__advise_metric(f, "peak_allocated", (double)md->peak_allocated, GP_FU_BYTES);
        gp__advise_metric(f, "capacity", (double)md->capacity, GP_FU_BYTES);
        gp__advise_metric(f, "peak_share", frac, GP_FU_RATIO);
        f->gain_ns = 0;
        f->type = GP_SUG_MEMORY;
        f->priority = frac >= 0.95 ? GP_PRIO_CRITICAL : GP_PRIO_HIGH;
    }
    return GP_OK;
}

/* The cause findings first (in the order findings_cause.c gives them: cause_rank), then by
 * gain, priority and rank. */
static int cmp_finding(const void *pa, const void *pb)
{
    const gp_finding *a = pa, *b = pb;
    if (a->cause != b->cause)
        return a->cause ? -1 : 1;
    if (a->cause && gp__cause_rank(a) != gp__cause_rank(b))
        return gp__cause_rank(a) - gp__cause_rank(b);
    if (a->gain_ns != b->gain_ns)
        return a->gain_ns > b->gain_ns ? -1 : 1;
    if (a->priority != b->priority)
        return (int)a->priority - (int)b->priority;
    return GP_CMP(a->rank, b->rank); /* -1 (the job) to INT32_MAX: no subtraction */
}

/* Findings of one kind: the same rule (for stragglers, the same metric; for the rules that name an
 * operation, the same operation). */
static bool same_kind(const gp_finding *a, const gp_finding *b)
{
    if (strcmp(a->rule, b->rule) != 0)
        return false;
    const char *oa = gp_finding_object_of(a, GP_OBJ_OP), *ob = gp_finding_object_of(b, GP_OBJ_OP);
    if (oa || ob)
        return oa && ob && strcmp(oa, ob) == 0;
    return strcmp(a->rule, "straggler") != 0 ||
           strcmp(a->evidence[0].name, b->evidence[0].name) == 0;
}

static int cmp_rank(const void *pa, const void *pb)
{
    int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
    return (a > b) - (a < b);
}

/* One finding per kind: the findings of several ranks merge into the worst one (cmp_finding
 * order), which lists every rank. Every finding of a rank gets its ranks array. */
static gp_status merge_ranks(gp_analysis *a)
{
    size_t kept = 0;
    for (size_t i = 0; i < a->n_findings; i++) {
        gp_finding *f = &a->findings[i];
        gp_finding *into = NULL;
        for (size_t k = 0; k < kept && !into; k++)
            if (same_kind(&a->findings[k], f))
                into = &a->findings[k];
        if (!into) {
            gp_finding *dst = &a->findings[kept++];
            if (dst != f)
                *dst = *f;
            dst->ranks = NULL;
            dst->n_ranks = 0;
            if (dst->rank >= 0) {
                dst->ranks = malloc(a->n_ranks * sizeof *dst->ranks + sizeof *dst->ranks);
                if (!dst->ranks) {
                    a->n_findings = kept;
                    return GP_ENOMEM;
                }
                dst->ranks[dst->n_ranks++] = dst->rank;
            }
            continue;
        }
        int32_t *ranks = into->ranks;
        size_t n = into->n_ranks;
        bool known = false;
        for (size_t k = 0; k < n; k++)
            known |= ranks[k] == f->rank;
        if (!known && ranks && n < a->n_ranks + 1)
            ranks[n++] = f->rank;
        if (cmp_finding(f, into) < 0)
            *into = *f; /* the worse rank's title, evidence, gain and priority */
        into->ranks = ranks;
        into->n_ranks = n;
    }
    a->n_findings = kept;
    for (size_t k = 0; k < kept; k++)
        if (a->findings[k].n_ranks > 1)
            gp__msort(a->findings[k].ranks, a->findings[k].n_ranks, sizeof(int32_t), cmp_rank);
    return GP_OK;
}

gp_status gp__advise_rank(gp_analysis *a, size_t *cap, size_t i, const gp_trace *t,
                          const struct gp_ops *shape_ops, size_t job_ranks, const gp__rank_pre *pre)
{
    struct gp_ops *ops = NULL;
    size_t first = a->n_findings;
    gp_status st = rank_findings(a, cap, &a->ranks[i]);
    gp__sync_sites own;
    memset(&own, 0, sizeof own);
    const gp__sync_sites *syncs = &own;
    bool given = pre && pre->done;
    /* The rank's ops by shape: the caller's table when it has one for this one-rank job (ops
     * computed once per report), else the rank's own when computed beside its tables, else
     * computed here; NULL without record_shapes either way. */
    const struct gp_ops *rank_ops = NULL;
    if (st == GP_OK && t && shape_ops && job_ranks == 1)
        rank_ops = t->n_op_shapes ? shape_ops : NULL;
    else if (st == GP_OK && t && given && pre->want_ops)
        rank_ops = pre->ops;
    else if (st == GP_OK && t)
        st = gp__findings_ops(t, &ops);
    if (ops)
        rank_ops = ops;
    if (st == GP_OK && t && given)
        syncs = &pre->syncs;
    else if (st == GP_OK && t)
        st = gp__sync_sites_of(t, &own);
    if (st == GP_OK) /* findings_cause.c */
        st = gp__finding_cause(a, cap, &a->ranks[i], t, rank_ops, syncs);
    if (st == GP_OK && t)
        st = gp__advise_profile(a, cap, t, a->ranks[i].rank, given ? pre->profile : NULL);
    if (st == GP_OK && t) /* findings_patterns.c */
        st = gp__findings_patterns(a, cap, &a->ranks[i], t, rank_ops, syncs);
    if (st == GP_OK)
        gp__cause_promote(a, first);
    gp_ops_free(ops);
    return st;
}

gp__rank_pre *gp__rank_pre_new(size_t n, bool want_ops)
{
    gp__rank_pre *p = calloc(n ? n : 1, sizeof *p);
    for (size_t i = 0; p && i < n; i++)
        p[i].want_ops = want_ops;
    return p;
}

void gp__rank_pre_free(gp__rank_pre *p, size_t n)
{
    for (size_t i = 0; p && i < n; i++) {
        gp_ops_free(p[i].ops);
        gp__profile_ops_free(p[i].profile);
    }
    free(p);
}

gp_status gp__advise_job(gp_analysis *a, size_t *cap)
{
    bool from_collectives = false; /* findings_straggler.c: the collectives' evidence */
    gp_status st = stragglers(a);
    if (st == GP_OK)
        st = gp__straggler_finding(a, cap, &from_collectives);
    /* The fallback without trusted collectives: medians of per-rank totals (variant 1 says so) */
    for (size_t i = 0; i < a->n_stragglers && st == GP_OK && !from_collectives; i++) {
        const gp_straggler *s = &a->stragglers[i];
        gp_finding *f = gp__advise_add(a, cap, "straggler", s->rank);
        if (!f)
            return GP_ENOMEM;
        const gp_rank_analysis *r = NULL;
        for (size_t k = 0; k < a->n_ranks; k++)
            if (a->ranks[k].rank == s->rank)
                r = &a->ranks[k];
        bool pct = strcmp(s->metric, "idle_pct") == 0;
        /* idle_pct is a percentage: the metric is its share, "idle_share" */
        gp__advise_metric(f, pct ? "idle_share" : s->metric, pct ? s->value / 100.0 : s->value,
                          pct ? GP_FU_RATIO : GP_FU_NS);
        gp__advise_metric(f, "median", pct ? s->median / 100.0 : s->median,
                          pct ? GP_FU_RATIO : GP_FU_NS);
        gp_ns kt = r && r->temporal.valid ? r->temporal.kernel_time : 0;
        f->gain_ns = pct ? (gp_ns)(fabs(s->value - s->median) / 100.0 * (double)kt)
                         : (gp_ns)(s->value - s->median);
        f->type = GP_SUG_PARALLELIZATION;
        f->priority = gp__advise_priority(f->gain_ns, kt);
        f->variant = 1;
    }
    if (st == GP_OK && a->n_findings > 1)
        gp__msort(a->findings, a->n_findings, sizeof(*a->findings), cmp_finding);
    if (st == GP_OK)
        st = merge_ranks(a);
    return st;
}

gp_status gp__analyze_advise(gp_analysis *a, const gp_trace *const *traces, size_t n,
                             const struct gp_ops *shape_ops, const gp__rank_pre *pre)
{
    size_t cap = 0;
    gp_status st = GP_OK;
    for (size_t i = 0; i < a->n_ranks && st == GP_OK; i++)
        st = gp__advise_rank(a, &cap, i, traces && i < n ? traces[i] : NULL, shape_ops, n,
                             pre && i < n ? &pre[i] : NULL);
    return st == GP_OK ? gp__advise_job(a, &cap) : st;
}
