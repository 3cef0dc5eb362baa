/* Stragglers across ranks and bottleneck rules with evidence, estimated gain, suggestion type and
 * priority. Every rule and formula is listed in docs/analyses.md ("Bottlenecks and suggestions").
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"
#include "analyze/analyze_internal.h"
#include "gpuprof/summary.h"

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

void gp__advise_evidence(gp_finding *f, const char *name, double value, const char *unit)
{
    if (f->n_evidence >= GP_ARRAY_LEN(f->evidence))
        return;
    gp_evidence *e = &f->evidence[f->n_evidence++];
    snprintf(e->name, sizeof(e->name), "%s", name);
    e->value = value;
    snprintf(e->unit, sizeof(e->unit), "%s", unit);
}

#define US(ns) ((double)(ns) / 1000.0)

/* The short name of the rank's low-occupancy kernel, unique among the rank's top kernels. */
static gp_status low_occ_name(const gp_rank_analysis *r, char *out, size_t cap)
{
    enum { CAP = 64 };
    const char **names = malloc((r->n_kernels + 1) * sizeof(*names));
    char *shortn = malloc((r->n_kernels + 1) * CAP);
    gp_status st = names && shortn ? GP_OK : GP_ENOMEM;
    if (st == GP_OK) {
        names[0] = r->low_occ_kernel;
        for (size_t k = 0; k < r->n_kernels; k++)
            names[k + 1] = r->kernels[k].name;
        st = gp_shorten_names_unique(names, r->n_kernels + 1, 48, shortn, CAP);
    }
    if (st == GP_OK)
        snprintf(out, cap, "%s", shortn);
    free(names);
    free(shortn);
    return st;
}

/* Over 150 lines on purpose (one of the three in src/, docs/internals/layers.md): the rules are
 * a flat list, one short block each, read top to bottom like the table in docs/analyses.md;
 * a function per rule would only move each block away from its neighbours. */
static gp_status rank_findings(gp_analysis *a, size_t *cap, const gp_rank_analysis *r)
{
    const gp_temporal *tb = &r->temporal;
    gp_ns base = tb->valid ? tb->kernel_time : r->activity.span;
    gp_ns host_wait = 0, host_wait_max = 0, idle_sum = 0, kw_idle = 0;
    uint64_t gaps = 0, kw_gaps = 0;
    for (size_t i = 0; i < r->n_idle; i++) {
        const gp_idle_stream *s = &r->idle[i];
        host_wait = gp__sat_add(host_wait, s->idle[GP_IDLE_HOST_WAIT]);
        host_wait_max = GP_MAX(host_wait_max, s->idle[GP_IDLE_HOST_WAIT]);
        idle_sum = gp__sat_add(idle_sum, s->total);
        kw_idle = gp__sat_add(kw_idle, s->idle[GP_IDLE_KERNEL_WAIT]);
        kw_gaps += s->gaps[GP_IDLE_KERNEL_WAIT];
        for (int c = 0; c < GP_IDLE_COUNT; c++)
            gaps += s->gaps[c];
    }
    /* most of the rank's kernels are launched by graph replays */
    bool graphed = r->kernels_total > 0 && r->launch.graph_kernels * 2 >= r->kernels_total;
    gp_finding *f;
    /* launch-bound */
    if (tb->valid && tb->idle_pct >= 30.0 && idle_sum > 0 && host_wait >= idle_sum - host_wait) {
        if (!(f = gp__advise_add(a, cap, "launch_bound", r->rank)))
            return GP_ENOMEM;
        snprintf(f->title, sizeof(f->title),
                 "GPU idle %.1f%% of the time, mostly waiting for the host to launch work",
                 tb->idle_pct);
        gp__advise_evidence(f, "idle_time_pctg", tb->idle_pct, "%");
        gp__advise_evidence(f, "host_wait_share_of_idle",
                            100.0 * (double)host_wait / (double)idle_sum, "%");
        gp__advise_evidence(f, "kernels", (double)r->kernels_total, "count");
        if (r->kernels_total)
            gp__advise_evidence(f, "small_kernels_share",
                                100.0 * (double)r->small_kernels / (double)r->kernels_total, "%");
        if (r->launch.n_apis)
            gp__advise_evidence(f, "launch_cpu_p50", US(r->launch.apis[0].cpu_p50), "us");
        if (r->launch.graph_kernels)
            gp__advise_evidence(f, "kernels_in_graphs", (double)r->launch.graph_kernels, "count");
        f->gain_ns = GP_MIN(tb->idle, host_wait_max);
        f->type = graphed ? GP_SUG_PARALLELIZATION : GP_SUG_CACHING;
        /* Advice to capture graphs is no help to a step that already replays one (vLLM, SGLang
         * decode): there the wait is host work between replays. */
        f->suggestion =
            graphed ? "Most kernels already run in graph replays, so the GPU waits for host work "
                      "between them (scheduling, sampling, blocking copies, .item()). Find it in "
                      "the timeline's CPU rows during the gaps, then overlap it with the next "
                      "replay or move it off the critical path."
                    : "The GPU waits for the CPU to enqueue work. Capture the step in a CUDA "
                      "graph (torch.compile mode=\"reduce-overhead\", torch.cuda.graphs), fuse "
                      "small kernels, and move host work (data loading, .item(), logging) off "
                      "the critical path.";
        f->priority = gp__advise_priority(f->gain_ns, base);
    }
    /* small kernels dominating */
    if (r->kernels_total >= 100 && r->small_kernels * 2 >= r->kernels_total) {
        if (!(f = gp__advise_add(a, cap, "small_kernels", r->rank)))
            return GP_ENOMEM;
        double share = 100.0 * (double)r->small_kernels / (double)r->kernels_total;
        snprintf(f->title, sizeof(f->title), "%.0f%% of %llu kernels run for less than %.0f us",
                 share, (unsigned long long)r->kernels_total, a->opts.small_kernel_ns / 1000.0);
        gp__advise_evidence(f, "small_kernels", (double)r->small_kernels, "count");
        gp__advise_evidence(f, "small_kernels_share", share, "%");
        gp__advise_evidence(f, "small_kernels_time", US(r->small_kernels_time), "us");
        /* In graph replays launches cost nothing per kernel: fusing saves only the gaps between
         * kernels already queued (kernel_wait), not the host's gaps between replays. */
        gp_ns mean_gap = graphed ? (kw_gaps ? kw_idle / (gp_ns)kw_gaps : 0)
                                 : (gaps ? idle_sum / (gp_ns)gaps : 0);
        gp__advise_evidence(f, graphed ? "mean_kernel_wait_gap" : "mean_gap", US(mean_gap), "us");
        f->gain_ns = GP_MAX(
            0, GP_MIN(tb->valid ? tb->idle : 0, gp__sat_mul((gp_ns)r->small_kernels, mean_gap)));
        f->type = GP_SUG_BATCHING;
        f->suggestion = "Most kernels are tiny: fuse element-wise chains (torch.compile, fused or "
                        "foreach optimizers), batch small operations together, or raise the batch "
                        "size so each launch does more work.";
        f->priority = gp__advise_priority(f->gain_ns, base);
    }
    /* low communication/computation overlap */
    const gp_overlap *ov = &r->overlap;
    if (tb->valid && ov->comm > 0 && (double)ov->comm >= 0.05 * (double)tb->kernel_time &&
        ov->pct < 30.0) {
        if (!(f = gp__advise_add(a, cap, "low_overlap", r->rank)))
            return GP_ENOMEM;
        snprintf(f->title, sizeof(f->title), "Only %.1f%% of communication overlaps computation",
                 ov->pct);
        gp__advise_evidence(f, "comp_comm_overlap_pctg", ov->pct, "%");
        gp__advise_evidence(f, "communication_time", US(ov->comm), "us");
        gp__advise_evidence(f, "computation_time", US(ov->comp), "us");
        f->gain_ns = GP_MAX(0, GP_MIN(ov->comm - ov->overlap, ov->comp - ov->overlap));
        f->type = GP_SUG_PARALLELIZATION;
        f->suggestion = "Communication runs mostly alone. Overlap it with computation: DDP/FSDP "
                        "gradient bucketing (bucket_cap_mb), backward/forward prefetch, async "
                        "collectives on their own stream, and fewer, larger collectives.";
        f->priority = gp__advise_priority(f->gain_ns, base);
    }
    /* copy-heavy or pageable copies */
    const gp_bandwidth *bw = &r->bandwidth;
    if (tb->valid && bw->busy > 0 &&
        ((double)bw->busy >= 0.10 * (double)tb->kernel_time ||
         (bw->pageable > 0 && (double)bw->busy >= 0.01 * (double)tb->kernel_time))) {
        if (!(f = gp__advise_add(a, cap, "copy_heavy", r->rank)))
            return GP_ENOMEM;
        snprintf(f->title, sizeof(f->title), "Memory copies take %.1f%% of GPU time%s",
                 100.0 * (double)bw->busy / (double)tb->kernel_time,
                 bw->pageable ? ", some from pageable host memory" : "");
        gp__advise_evidence(f, "memcpy_time", US(bw->busy), "us");
        gp__advise_evidence(f, "memcpy_share", 100.0 * (double)bw->busy / (double)tb->kernel_time,
                            "%");
        gp__advise_evidence(f, "pageable_copies", (double)bw->pageable, "count");
        gp__advise_evidence(f, "mean_bandwidth", bw->mean_gbps, "GB/s");
        f->gain_ns = bw->pageable ? bw->busy / 2 : bw->busy / 4;
        f->type = GP_SUG_MEMORY;
        f->suggestion = "Pin host memory (DataLoader pin_memory=True, tensor.pin_memory()), copy "
                        "with non_blocking=True on a side stream so copies overlap compute, and "
                        "keep tensors resident on the GPU between steps.";
        f->priority = gp__advise_priority(f->gain_ns, base);
    }
    /* frequent synchronisation */
    const gp_activity *act = &r->activity;
    if (act->syncs >= 10 && act->span > 0 && (double)act->sync >= 0.10 * (double)act->span) {
        if (!(f = gp__advise_add(a, cap, "frequent_sync", r->rank)))
            return GP_ENOMEM;
        snprintf(f->title, sizeof(f->title), "%llu synchronisations block for %.1f%% of the trace",
                 (unsigned long long)act->syncs, 100.0 * (double)act->sync / (double)act->span);
        gp__advise_evidence(f, "syncs", (double)act->syncs, "count");
        gp__advise_evidence(f, "sync_time", US(act->sync), "us");
        gp__advise_evidence(f, "sync_share_of_span", 100.0 * (double)act->sync / (double)act->span,
                            "%");
        f->gain_ns = act->sync / 2;
        f->type = GP_SUG_ALGORITHM;
        f->suggestion = "The host blocks on the GPU often (cudaStreamSynchronize, .item(), .cpu(), "
                        "printing tensors). Keep values on the device, batch the reads, and use "
                        "CUDA events or non_blocking copies instead of full synchronisations.";
        f->priority = gp__advise_priority(f->gain_ns, base);
    }
    /* low-occupancy hot kernel */
    if (r->low_occ_kernel && r->kernels_time > 0 &&
        (double)r->low_occ_time >= 0.05 * (double)r->kernels_time) {
        if (!(f = gp__advise_add(a, cap, "low_occupancy", r->rank)))
            return GP_ENOMEM;
        /* shortened among the rank's top kernels, so that it reads as its row there */
        char shortname[64];
        gp_status st = low_occ_name(r, shortname, sizeof(shortname));
        if (st != GP_OK)
            return st;
        snprintf(f->title, sizeof(f->title), "Hot kernel %s runs at %.0f%% occupancy", shortname,
                 r->low_occ_pct);
        gp__advise_evidence(f, "occupancy", r->low_occ_pct, "%");
        gp__advise_evidence(f, "kernel_time", US(r->low_occ_time), "us");
        gp__advise_evidence(f, "share_of_kernel_time",
                            100.0 * (double)r->low_occ_time / (double)r->kernels_time, "%");
        f->gain_ns = r->low_occ_time / 4;
        f->type = GP_SUG_ALGORITHM;
        f->suggestion = "Check the kernel's launch configuration, registers per thread and shared "
                        "memory per block; try another tile size, a library kernel (cuBLAS/cuDNN "
                        "heuristics) or torch.compile max-autotune.";
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
        snprintf(f->title, sizeof(f->title),
                 "Allocated memory on device %d peaks at %.0f%% of its capacity", md->device_id,
                 100.0 * frac);
        gp__advise_evidence(f, "peak_allocated", (double)md->peak_allocated / 1e9, "GB");
        gp__advise_evidence(f, "capacity", (double)md->capacity / 1e9, "GB");
        gp__advise_evidence(f, "peak_share", 100.0 * frac, "%");
        f->gain_ns = 0;
        f->type = GP_SUG_MEMORY;
        f->suggestion = "Memory is close to exhaustion: activation checkpointing, smaller "
                        "micro-batches, mixed precision, or sharding (FSDP/ZeRO); look at the op "
                        "running at the peak.";
        f->priority = frac >= 0.95 ? GP_PRIO_CRITICAL : GP_PRIO_HIGH;
    }
    return GP_OK;
}

static int cmp_finding(const void *pa, const void *pb)
{
    const gp_finding *a = pa, *b = pb;
    if (a->gain_ns != b->gain_ns)
        return a->gain_ns > b->gain_ns ? -1 : 1;
    if (a->priority != b->priority)
        return (int)a->priority - (int)b->priority;
    return GP_CMP(a->rank, b->rank); /* -1 (the job) to INT32_MAX: no subtraction */
}

/* Findings of one kind: the same rule (for stragglers, the same metric; for the profile rules,
 * the same operation). */
static bool same_kind(const gp_finding *a, const gp_finding *b)
{
    if (strcmp(a->rule, b->rule) != 0)
        return false;
    if (a->op || b->op)
        return a->op && b->op && strcmp(a->op, b->op) == 0;
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
            qsort(a->findings[k].ranks, a->findings[k].n_ranks, sizeof(int32_t), cmp_rank);
    return GP_OK;
}

gp_status gp__analyze_advise(gp_analysis *a, const gp_job *job, const struct gp_ops *shape_ops)
{
    gp_status st = stragglers(a);
    size_t cap = 0;
    for (size_t i = 0; i < a->n_ranks && st == GP_OK; i++)
        st = rank_findings(a, &cap, &a->ranks[i]);
    for (size_t i = 0; i < a->n_ranks && i < job->n_ranks && st == GP_OK; i++)
        st = gp__advise_profile(a, &cap, job->ranks[i], a->ranks[i].rank);
    for (size_t i = 0; job && i < job->n_ranks && st == GP_OK; i++)
        st = gp__advise_ops(a, &cap, job->ranks[i], job->n_ranks == 1 ? shape_ops : NULL);
    for (size_t i = 0; i < a->n_stragglers && st == GP_OK; i++) {
        const gp_straggler *s = &a->stragglers[i];
        gp_finding *f = gp__advise_add(a, &cap, "straggler", s->rank);
        if (!f)
            return GP_ENOMEM;
        const gp_rank_analysis *r = NULL;
        for (size_t k = 0; k < a->n_ranks; k++)
            if (a->ranks[k].rank == s->rank)
                r = &a->ranks[k];
        bool pct = strcmp(s->metric, "idle_pct") == 0;
        snprintf(f->title, sizeof(f->title),
                 "Out of step with the other ranks: %s %.1f%s against a median of %.1f%s",
                 s->metric, pct ? s->value : s->value / 1000.0, pct ? "%" : " us",
                 pct ? s->median : s->median / 1000.0, pct ? "%" : " us");
        gp__advise_evidence(f, s->metric, pct ? s->value : s->value / 1000.0, pct ? "%" : "us");
        gp__advise_evidence(f, "median", pct ? s->median : s->median / 1000.0, pct ? "%" : "us");
        gp_ns kt = r && r->temporal.valid ? r->temporal.kernel_time : 0;
        f->gain_ns = pct ? (gp_ns)(fabs(s->value - s->median) / 100.0 * (double)kt)
                         : (gp_ns)(s->value - s->median);
        f->type = GP_SUG_PARALLELIZATION;
        f->suggestion = "One rank is out of step with the others, and collectives make every rank "
                        "wait for it: compare its input shard sizes, data loading, clocks and "
                        "placement, and rebalance the work.";
        f->priority = gp__advise_priority(f->gain_ns, kt);
    }
    if (st == GP_OK && a->n_findings > 1)
        qsort(a->findings, a->n_findings, sizeof(*a->findings), cmp_finding);
    if (st == GP_OK)
        st = merge_ranks(a);
    return st;
}
