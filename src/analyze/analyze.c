/* gp_analyze_job: builds each rank's view, runs every analysis on it, aggregates the job-level
 * kernel-type table, then the stragglers and findings. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprof/collectives.h"
#include "gpuprof/ops.h"

#include "analyze/analyze_internal.h"
#include "core/msort.h"
#include "core/invariant.h"
#include "core/par.h"

void gp_analyze_opts_init(gp_analyze_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->steps = GP_STEPS_ALL;
    o->kernel_wait_ns = 30000;
    o->top_kernels = 5;
    o->duration_ratio = 0.8;
    o->launch_outlier_ns = 50000;
    o->delay_outlier_ns = 100000;
    o->series_points = 100;
    o->max_outliers = 10;
    o->small_kernel_ns = 10000.0;
    o->critical_path = true;
    o->critical_path_overlay = true;
    o->cp_instance = -1;
}

gp_status gp_analyze_parse_steps(const char *s, gp_analyze_opts *o)
{
    if (!s)
        return GP_EINVAL;
    if (strcmp(s, "all") == 0) {
        o->steps = GP_STEPS_ALL;
        return GP_OK;
    }
    if (strcmp(s, "hta") == 0) {
        o->steps = GP_STEPS_HTA;
        return GP_OK;
    }
    char *end;
    long long a = strtoll(s, &end, 10);
    if (end == s || a < 0)
        return GP_EINVAL;
    long long b = a;
    if (*end == '-') {
        const char *p = end + 1;
        b = strtoll(p, &end, 10);
        if (end == p || b < a)
            return GP_EINVAL;
    }
    if (*end != '\0')
        return GP_EINVAL;
    o->steps = GP_STEPS_RANGE;
    o->step_first = a;
    o->step_last = b;
    return GP_OK;
}

static void free_rank(gp_rank_analysis *r)
{
    free(r->idle);
    free(r->types);
    free(r->kernels);
    free(r->launch.apis);
    free(r->launch.outliers);
    for (size_t i = 0; i < r->n_queues; i++)
        free(r->queues[i].series);
    free(r->queues);
    free(r->bandwidth.series);
    for (size_t i = 0; i < r->n_memory; i++) {
        free(r->memory[i].allocated);
        free(r->memory[i].reserved);
    }
    free(r->memory);
    for (size_t i = 0; i < r->n_critical_paths; i++) {
        free(r->critical_paths[i].top);
        free(r->critical_paths[i].events);
        free(r->critical_paths[i].links);
    }
    free(r->critical_paths);
    free(r->idle_causes);
    free(r->step_parts);
}

void gp_analysis_free(gp_analysis *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n_ranks; i++)
        free_rank(&a->ranks[i]);
    free(a->ranks);
    free(a->types);
    free(a->stragglers);
    gp_collectives_free(a->collectives);
    for (size_t i = 0; i < a->n_findings; i++)
        free(a->findings[i].ranks);
    free(a->findings);
    free(a);
}

static void rank_notes(const gp_trace *t, const gp__view *v, bool many, gp_rank_analysis *r)
{
    r->note = v->note;
    r->stream_overlaps = v->n_stream_overlaps;
    r->max_stream_overlap = v->max_stream_overlap;
    r->rounded_negative = v->n_rounded_negative;
    if (v->n_stream_overlaps)
        gp_error_note(&r->note,
                      "%zu GPU events start before the previous one on their stream ends (by up to "
                      "%.3f us): the overlap is counted once, idle gaps run from the latest end.",
                      v->n_stream_overlaps, (double)v->max_stream_overlap / 1000.0);
    if (v->before_gpu_step)
        gp_error_note(
            &r->note,
            "%zu GPU events run before the first GPU-side ProfilerStep (work queued before "
            "the profiled steps): they are counted here; --steps N selects the GPU work of "
            "step N by its GPU-side span, as TraceLens does.",
            v->before_gpu_step);
    if (!gp_trace_has_gpu(t))
        gp_error_note(&r->note,
                      "CPU-only trace (no kernel, memcpy or memset): GPU analyses are empty; CPU "
                      "activity and launches are still reported.");
    else if (v->n_g == 0)
        gp_error_note(&r->note, "No GPU event in the selected steps.");
    if (t->stats.negative_dur)
        gp_error_note(&r->note, "%llu events had negative durations (clamped to 0).",
                      (unsigned long long)t->stats.negative_dur);
    if (t->stats.absurd_dur)
        gp_error_note(&r->note, "%llu events with durations over 7 days were dropped as corrupt.",
                      (unsigned long long)t->stats.absurd_dur);
    if (!t->dist.present && many) /* of a single trace, the rank says nothing */
        gp_error_note(&r->note, "No distributedInfo: rank %d from file order.", (int)t->rank);
}

/* One rank's analyses read the view and write disjoint parts of the rank's results, so they run
 * side by side: those the registry of tables names (table_list.h), in its order. The critical
 * path, the registry's last entry, reads the trace, not the view: it runs after them, its regions
 * side by side, once the view is freed (next to the idle causes the two largest working sets
 * added up: peak RSS 200 MB, against 170 MB after them, on large_v100_nccl x7, at the same CPU
 * time; the view's 26 MB are then reused by the path's graphs). */
typedef gp_status (*rank_fn)(const gp__view *v, gp_rank_analysis *r);

static const rank_fn rank_analyses[] = {
#define B(stem) gp__analyze_##stem,
#define X(bit, fn, name, alias, json, csv, build) build
    GP__ANALYSIS_TABLES(X)
#undef X
#undef B
};
#define N_RANK_ANALYSES (sizeof rank_analyses / sizeof *rank_analyses)

typedef struct rank_tasks {
    const gp__view *v;
    gp_rank_analysis *r;
    gp__rank_pre *pre;                 /* NULL, or where the rank's findings' trace tasks write */
    size_t order[N_RANK_ANALYSES + 2]; /* the tasks in the order they start (table_order) */
    gp_status st[N_RANK_ANALYSES + 2];
} rank_tasks;

static void run_rank_task(void *ctx, size_t i)
{
    rank_tasks *rt = ctx;
    rt->st[i] = rank_analyses[i](rt->v, rt->r);
}

/* Three tasks among the tables' read only the trace, for the rank's findings (gp__rank_pre): its
 * ops by shape (gp__findings_ops) in the slot of the critical path, which runs after the tables,
 * its sync sites (gp__sync_sites_of) one past it and its ranges for the profile rules
 * (gp__profile_ops_of, a walk of every event) two past it. After the tables, in advise, the first
 * two added about 50 ms to `analyze` on the H100 trace x10 and 10 % of the analysis on
 * large_v100_nccl, and the walk ran alone on one thread; beside them they cost no wall time on
 * two threads (docs/performance.md, issue 37). */
#define OPS_TASK (N_RANK_ANALYSES - 1)
#define SYNC_TASK N_RANK_ANALYSES
#define PROFILE_TASK (N_RANK_ANALYSES + 1)

/* The longest tasks, longest first (measured on the H100 trace x10 and large_v100_nccl x7): a
 * table's function, or (fn NULL) one of the trace tasks. gp__par_for hands tasks out in order, so
 * the longest start first and the short ones fill in behind them; in registry order the idle
 * causes started last and ran alone at the end. */
typedef struct first_task {
    rank_fn fn;
    size_t task;
} first_task;
static const first_task longest_first[] = {
    {gp__analyze_idle_causes, 0},  {NULL, OPS_TASK},
    {gp__analyze_step_parts, 0},   {gp__analyze_activity, 0},
    {gp__analyze_launch_stats, 0}, {NULL, SYNC_TASK},
    {gp__analyze_queues, 0},       {NULL, PROFILE_TASK},
    {gp__analyze_peak_memory, 0}, /* a walk of every event: alone at the end in registry order */
};

/* Fills order with the tables' tasks and, with pre, the trace tasks (the ops only when wanted),
 * longest first, then the other tables in registry order; returns their count. */
static size_t table_order(const gp__rank_pre *pre, size_t order[N_RANK_ANALYSES + 2])
{
    bool taken[N_RANK_ANALYSES] = {false};
    size_t n = 0;
    for (size_t k = 0; k < sizeof longest_first / sizeof *longest_first; k++) {
        const first_task *f = &longest_first[k];
        if (!f->fn && pre && (f->task != OPS_TASK || pre->want_ops))
            order[n++] = f->task;
        for (size_t i = 0; f->fn && i < OPS_TASK; i++)
            if (rank_analyses[i] == f->fn && !taken[i]) {
                taken[i] = true;
                order[n++] = i;
            }
    }
    for (size_t i = 0; i < OPS_TASK; i++)
        if (!taken[i])
            order[n++] = i;
    assert(n == OPS_TASK + (pre ? 2u + pre->want_ops : 0u)); /* each task once */
    return n;
}

static void run_table_task(void *ctx, size_t i)
{
    rank_tasks *rt = ctx;
    size_t k = rt->order[i];
    if (k == OPS_TASK)
        rt->st[k] = gp__findings_ops(rt->v->t, &rt->pre->ops);
    else if (k == SYNC_TASK)
        rt->st[k] = gp__sync_sites_of(rt->v->t, &rt->pre->syncs);
    else if (k == PROFILE_TASK)
        rt->st[k] = gp__profile_ops_of(rt->v->t, &rt->pre->profile);
    else
        run_rank_task(rt, k);
}

int gp__rank_threads(const gp_trace *t, const gp_analyze_opts *o, int max)
{
    if (o->threads == 0 && gp_trace_event_count(t) < 50000)
        return 1;
    return gp__par_threads(o->threads, max);
}

/* True when a figure that HTA mode computes from rounded times came out negative. */
static bool negative_figure(const gp_rank_analysis *r)
{
    const gp_temporal *tb = &r->temporal;
    if (tb->idle < 0 || tb->compute < 0 || tb->non_compute < 0 || r->overlap.overlap < 0)
        return true;
    for (size_t i = 0; i < r->n_kernels; i++)
        if (r->kernels[i].sum < 0)
            return true;
    for (size_t i = 0; i < r->n_idle; i++)
        for (int c = 0; c < GP_IDLE_COUNT; c++)
            if (r->idle[i].idle[c] < 0)
                return true;
    for (size_t i = 0; i < r->n_types; i++)
        if (r->types[i].time < 0)
            return true;
    return false;
}

/* HTA mode keeps HTA's negative lengths of sub-microsecond events (HTA #317) so that its figures
 * are HTA's. Where that makes a figure negative (HTA itself then fails its non_compute >= 0
 * assertion), the rounded-time analyses run again with those events as empty, and the note says
 * so. */
static gp_status hta_negative_fallback(gp__view *v, gp_rank_analysis *r)
{
    if (v->n_rounded_negative == 0 || !negative_figure(r))
        return GP_OK;
    GP_FREE_CLEAR(r->idle);
    GP_FREE_CLEAR(r->types);
    GP_FREE_CLEAR(r->kernels);
    r->n_idle = r->n_types = r->n_kernels = 0;
    memset(&r->temporal, 0, sizeof r->temporal);
    memset(&r->overlap, 0, sizeof r->overlap);
    for (size_t i = 0; i < v->n_g; i++)
        if (v->g[i].rounded_negative)
            v->g[i].e = v->g[i].s;
    r->rounded_negative_empty = true;
    gp_error_note(&r->note,
                  "%zu events shorter than 1 us round inward to a negative length, which made a "
                  "figure negative (HTA fails here): they are counted as empty.",
                  v->n_rounded_negative);
    gp_status st = gp__analyze_temporal(v, r);
    if (st == GP_OK)
        st = gp__analyze_top_kernels(v, r);
    if (st == GP_OK)
        st = gp__analyze_idle(v, r);
    if (st == GP_OK)
        st = gp__analyze_types(v, r);
    return st;
}

/* Idle causes: each row's causes sum to its idle time, a device idles no longer than any of its
 * streams (its busy time is their union); step parts sum to the step. */
static void check_idle_causes(const gp_rank_analysis *r)
{
    const gp_idle_causes *dev = NULL;
    for (size_t i = 0; i < r->n_idle_causes; i++) {
        const gp_idle_causes *c = &r->idle_causes[i];
        gp_ns sum = 0;
        for (int k = 0; k < GP_IC_COUNT; k++)
            sum += c->by_cause[k];
        GP_INVARIANT(sum == c->idle && c->idle >= 0,
                     "rank %d stream %lld: causes sum to %lld != %lld", (int)r->rank,
                     (long long)c->stream, (long long)sum, (long long)c->idle);
        if (c->stream == -1)
            dev = c;
        else
            GP_INVARIANT(dev && dev->device == c->device && dev->idle <= c->idle,
                         "rank %d stream %lld: the device idles longer than the stream",
                         (int)r->rank, (long long)c->stream);
    }
    for (size_t i = 0; i < r->n_step_parts; i++) {
        const gp_step_breakdown *b = &r->step_parts[i];
        gp_ns sum = 0;
        for (int k = 0; k < GP_SP_COUNT; k++)
            sum += b->part[k];
        GP_INVARIANT(sum == b->end - b->start, "rank %d step %lld: parts sum to %lld != %lld",
                     (int)r->rank, (long long)b->step, (long long)sum,
                     (long long)(b->end - b->start));
    }
}

/* The invariants of docs/analyses.md ("Invariants"), checked in debug and sanitizer builds. */
static void check_rank(const gp__view *v, const gp_rank_analysis *r)
{
    const gp_temporal *tb = &r->temporal;
    if (tb->valid) {
        GP_INVARIANT(tb->idle >= 0 && tb->compute >= 0 && tb->non_compute >= 0,
                     "rank %d: idle %lld, compute %lld, non-compute %lld", (int)r->rank,
                     (long long)tb->idle, (long long)tb->compute, (long long)tb->non_compute);
        GP_INVARIANT(tb->idle + tb->compute + tb->non_compute == tb->kernel_time,
                     "rank %d: parts do not sum to the kernel time", (int)r->rank);
        GP_INVARIANT(fabs(tb->idle_pct + tb->compute_pct + tb->non_compute_pct - 100.0) <= 0.01,
                     "rank %d: temporal percentages sum to %.4f", (int)r->rank,
                     tb->idle_pct + tb->compute_pct + tb->non_compute_pct);
    }
    gp_ns types = 0;
    for (size_t i = 0; i < r->n_types; i++) {
        GP_INVARIANT(r->types[i].time >= 0, "rank %d: negative type time", (int)r->rank);
        types += r->types[i].time;
    }
    /* Each GPU event is counted once: the overlap states partition the busy time. (Not in HTA
     * mode, whose kernel-type union keeps HTA's negative lengths: docs/analyses.md.) */
    GP_INVARIANT(v->o->hta || !tb->valid || types == tb->kernel_time - tb->idle,
                 "rank %d: type states %lld differ from the busy time %lld", (int)r->rank,
                 (long long)types, (long long)(tb->kernel_time - tb->idle));
    for (size_t i = 0; i < r->n_idle; i++)
        for (int c = 0; c < GP_IDLE_COUNT; c++)
            GP_INVARIANT(r->idle[i].idle[c] >= 0 &&
                             (isnan(r->idle[i].ratio[c]) ||
                              (r->idle[i].ratio[c] >= 0 && r->idle[i].ratio[c] <= 1)),
                         "rank %d stream %lld: idle category %d out of range", (int)r->rank,
                         (long long)r->idle[i].stream, c);
    for (size_t i = 0; i < r->n_kernels; i++)
        GP_INVARIANT(r->kernels[i].sum >= 0, "rank %d: kernel row %s sums to %lld", (int)r->rank,
                     r->kernels[i].name, (long long)r->kernels[i].sum);
    const gp_overlap *ov = &r->overlap;
    GP_INVARIANT(ov->overlap >= 0 && ov->overlap <= GP_MIN(ov->comm, ov->comp),
                 "rank %d: comm/comp overlap out of range", (int)r->rank);
    const gp_activity *a = &r->activity;
    GP_INVARIANT(a->cpu_active >= 0 && a->cpu_active <= a->span && a->gpu_active >= 0 &&
                     a->gpu_active <= a->span && a->overlap <= GP_MIN(a->cpu_active, a->gpu_active),
                 "rank %d: activity unions exceed their span", (int)r->rank);
    check_idle_causes(r);
    (void)v;
}

/* Runs the rank's analyses on v and frees v (before the critical path, which reads only its
 * trace and options); pre NULL, or where the rank's findings' trace tasks write (done set). */
static gp_status analyze_rank(gp__view *v, gp_rank_analysis *r, int threads, gp__rank_pre *pre)
{
    rank_tasks rt = {.v = v, .r = r, .pre = pre};
    assert(rank_analyses[N_RANK_ANALYSES - 1] == gp__analyze_critical_path); /* table_list.h */
    gp__par_for(table_order(pre, rt.order), threads, run_table_task, &rt);
    for (size_t i = 0; i <= PROFILE_TASK; i++)
        if (rt.st[i] != GP_OK)
            return rt.st[i];
    if (pre)
        pre->done = true;
    if (r->idle_causes_dropped)
        gp_error_note(&r->note,
                      "Idle causes: %zu of %zu rows have no top names (finding them is a walk "
                      "of the host's activity per row, within a budget linear in the trace: the "
                      "devices, then the streams with the most GPU work, have them).",
                      r->idle_causes_dropped, r->n_idle_causes);
    gp_status st = hta_negative_fallback(v, r);
    if (st != GP_OK)
        return st;
    check_rank(v, r);
    gp__view trace_only = {.t = v->t, .o = v->o};
    gp__view_free(v);
    rt.v = &trace_only;
    run_rank_task(&rt, N_RANK_ANALYSES - 1); /* the critical path: threads of its own */
    return rt.st[N_RANK_ANALYSES - 1];
}

static int cmp_type_time(const gp_type_state *x, const gp_type_state *y)
{
    return GP_CMP(y->time, x->time);
}
GP__DEFINE_MERGE_SORT(sort_types, gp_type_state, cmp_type_time)

gp_status gp__analyze_job_types(gp_analysis *a)
{
    gp_ns time[8] = {0};
    for (size_t i = 0; i < a->n_ranks; i++)
        for (size_t k = 0; k < a->ranks[i].n_types; k++)
            time[a->ranks[i].types[k].mask & 7] =
                gp__sat_add(time[a->ranks[i].types[k].mask & 7], a->ranks[i].types[k].time);
    gp_ns sum = 0;
    size_t n = 0;
    for (int m = 1; m < 8; m++) {
        sum = gp__sat_add(sum, time[m]);
        n += time[m] != 0;
    }
    if (n == 0)
        return GP_OK;
    a->types = calloc(n, sizeof(*a->types));
    if (!a->types)
        return GP_ENOMEM;
    for (int m = 1; m < 8; m++) {
        if (time[m] == 0)
            continue;
        gp_type_state *ts = &a->types[a->n_types++];
        ts->mask = (uint32_t)m;
        gp__type_label((uint32_t)m, ts->label, sizeof(ts->label));
        ts->time = time[m];
        ts->pct = sum > 0 ? 100.0 * (double)time[m] / (double)sum : NAN;
    }
    /* By time, descending (HTA's order); ties keep the type order. */
    return sort_types(a->types, a->n_types) ? GP_OK : GP_ENOMEM;
}

gp_status gp__analyze_ranks(const gp__ranks *in, bool many, gp_analysis *a, gp__rank_pre *pre,
                            gp_error *err)
{
    gp__classifier *c = NULL;
    gp_status st = gp__classifier_new(&a->opts, &c, err);
    if (st != GP_OK)
        return st;
    a->ranks = calloc(in->n ? in->n : 1, sizeof(*a->ranks));
    if (!a->ranks)
        st = GP_ENOMEM;
    if (in->from_file_order && in->n > 1)
        gp_error_note(&a->note,
                      "Some traces lack distributedInfo.rank: their ranks follow file-name order.");
    for (size_t i = 0; i < in->n && st == GP_OK; i++) {
        const gp_trace *t = in->t[i];
        gp_rank_analysis *r = &a->ranks[a->n_ranks++];
        r->rank = t->rank;
        r->source = gp_trace_str(t, t->source);
        gp__view v;
        st = gp__view_build(&v, t, &a->opts, c);
        if (st != GP_OK)
            break;
        r->gpu_events = v.n_g;
        r->steps_total = v.steps_total;
        r->steps_kept = v.steps_kept;
        rank_notes(t, &v, many, r);
        st = analyze_rank(&v, r, gp__rank_threads(t, &a->opts, 4), pre ? &pre[i] : NULL);
        gp__view_free(&v);
    }
    gp__classifier_free(c);
    return st;
}

gp_status gp_analyze_job(const gp_job *job, const gp_analyze_opts *opts, gp_analysis **out,
                         gp_error *err)
{
    gp__ranks in = gp__ranks_of_job(job);
    return gp__analyze_with_ops(&in, opts, NULL, out, err);
}

gp_status gp__analyze_with_ops(const gp__ranks *in, const gp_analyze_opts *opts,
                               const struct gp_ops *shape_ops, gp_analysis **out, gp_error *err)
{
    gp_analysis *a = calloc(1, sizeof(*a));
    if (!a)
        return GP_ENOMEM;
    if (opts)
        a->opts = *opts;
    else
        gp_analyze_opts_init(&a->opts);
    /* What the ranks' findings read of their traces, computed beside their tables: the ops by
     * shape unless the caller gave the table of a one-rank job, and the sync sites. */
    gp__rank_pre *pre = gp__rank_pre_new(in->n, !(shape_ops && in->n == 1));
    gp_status st = pre ? GP_OK : GP_ENOMEM;
    if (st == GP_OK)
        st = gp__analyze_ranks(in, in->n > 1, a, pre, err);
    if (st == GP_OK)
        st = gp__analyze_job_types(a);
    if (st == GP_OK && in->n > 1) {
        gp_coll_opts co;
        gp_coll_opts_init(&co);
        co.gpus_per_node = a->opts.gpus_per_node;
        st = gp__collectives_of_ranks(in, &co, &a->collectives, err);
    }
    if (st == GP_OK)
        st = gp__analyze_advise(a, in->t, in->n, shape_ops, pre);
    gp__rank_pre_free(pre, in->n);
    if (st != GP_OK) {
        gp_analysis_free(a);
        if (st == GP_ENOMEM)
            gp_error_set(err, st, "out of memory while analysing");
        return st;
    }
    *out = a;
    return GP_OK;
}

gp_status gp_analyze_trace(const gp_trace *t, const gp_analyze_opts *opts, gp_analysis **out,
                           gp_error *err)
{
    gp__ranks in = {.t = &t, .n = 1, .from_file_order = false};
    return gp__analyze_with_ops(&in, opts, NULL, out, err);
}
