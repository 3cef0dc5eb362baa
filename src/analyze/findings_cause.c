/* The dominant-cause findings (docs/analyses.md, "Findings: the cause"): which class of the
 * critical path holds the step, summed over the rank's steps, with the events that hold it.
 *
 * Classes are the critical path's (gp_cp_class) but for one, "sync": the path time of
 * synchronisation calls (cudaStreamSynchronize, .item(), blocking copies) among the path's top
 * events, and the time the host blocked in such calls inside the steps beyond one per step
 * (findings_syncs.c; on a path the wait itself is a 0-weight edge, and its cost is the host work
 * after it that could have overlapped the GPU) move out of the CPU and launch classes into it, so
 * that a step that waits on syncs is not reported as CPU bound. The dependency class (0-weight
 * edges) never is a cause.
 *
 * The CPU cause names first the path's heaviest frame (heaviest_frame): the Python function
 * holding the most of the path's CPU time, built-ins folded into their caller, so that the title
 * names what holds the path, not the step's top self time (which may be off the path).
 *
 * Two findings at most: the largest class that is not GPU compute (rule critical_path_<class>,
 * when it holds >= 5 % of the path; ranked first when >= 15 %), and critical_path_gpu_compute_bound
 * when GPU compute is the largest class of all (ranked right after). A GPU-bound path is the goal
 * state: the finding that says what else holds the step comes first. None on a rank whose path
 * regions hold no GPU work (an in-process profile, a CPU-only trace): such a path is all CPU by
 * construction and says nothing the step's own time does not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze_internal.h"
#include "gpuprof/ops.h"

enum { C_SYNC = GP_CP_COUNT, C_N }; /* the classes above plus "sync" */

#define MIN_SHARE 0.05   /* of the path: below this no cause finding */
#define CAUSE_SHARE 0.15 /* of the path: a non-GPU cause ranked above every other finding */
#define MAX_EVENTS 64    /* distinct (class, name, frame) entries kept over the steps */
#define MAX_OBJECTS 4

static const char *const rules[C_N] = {
    "critical_path_cpu_bound",
    "critical_path_data_loading",
    "critical_path_gpu_compute_bound",
    "critical_path_gpu_communication_bound",
    "critical_path_gpu_kernel_kernel_overhead",
    "critical_path_gpu_kernel_launch_overhead",
    NULL, /* dependency: never a cause */
    "critical_path_sync",
};

#define PROMOTE_SHARE 0.10 /* of the GPU-compute path time: a pattern's gain that explains it */

int gp__cause_rank(const gp_finding *f)
{
    if (strcmp(f->rule, rules[GP_CP_GPU_COMPUTE]) == 0)
        return 2;
    return strncmp(f->rule, "critical_path_", 14) == 0 ? 0 : 1;
}

void gp__cause_promote(gp_analysis *a, size_t first)
{
    static const char *const gpu_rules[] = {"unfused_attention", "fp32_gemm", "op_below_roofline"};
    gp_finding *gpu = NULL, *best = NULL;
    for (size_t i = first; i < a->n_findings; i++)
        if (strcmp(a->findings[i].rule, rules[GP_CP_GPU_COMPUTE]) == 0)
            gpu = &a->findings[i];
    double class_time = 0;
    if (!gpu || !gp_finding_metric(gpu, "class_time", &class_time))
        return;
    for (size_t i = first; i < a->n_findings; i++)
        for (size_t k = 0; k < GP_ARRAY_LEN(gpu_rules); k++)
            if (strcmp(a->findings[i].rule, gpu_rules[k]) == 0 &&
                (!best || a->findings[i].gain_ns > best->gain_ns))
                best = &a->findings[i];
    if (best && (double)best->gain_ns >= PROMOTE_SHARE * class_time)
        best->cause = true;
}

/* A call that blocks the host until the GPU catches up. */
static bool is_sync(const gp_cp_event *e)
{
    const char *n = e->name ? e->name : "";
    if (e->kind == GP_EV_SYNC || strstr(n, "Synchronize") || strstr(n, "synchronize"))
        return true;
    if (strcmp(n, "aten::item") == 0 || strcmp(n, "aten::_local_scalar_dense") == 0)
        return true;
    return (strncmp(n, "cudaMemcpy", 10) == 0 || strncmp(n, "hipMemcpy", 9) == 0) &&
           !strstr(n, "Async");
}

/* A kernel or graph launch call (cudaLaunchKernel, cuLaunchKernel, hipLaunchKernel,
 * hipExtModuleLaunchKernel, cudaGraphLaunch, ...): in the default mode its path time is launch
 * overhead, not CPU work (docs/decisions/launch-call-time.md). */
static bool is_launch_call(const gp_cp_event *e)
{
    const char *n = e->name ? e->name : "";
    if (e->kind != GP_EV_RUNTIME && e->kind != GP_EV_DRIVER)
        return false;
    return strstr(n, "Launch") && (strstr(n, "Kernel") || strstr(n, "GraphLaunch"));
}

typedef struct acc_event {
    int cls; /* 0..C_N-1 */
    const char *name, *python;
    uint8_t kind;
    gp_ns time;
    uint64_t count;
} acc_event;

typedef struct cause_acc {
    gp_ns by[C_N];
    gp_ns total;  /* sum over every class, dependency included */
    gp_ns length; /* sum of the path lengths */
    uint64_t steps;
    acc_event ev[MAX_EVENTS];
    size_t n_ev;
} cause_acc;

/* The name a finding gives path event e: the step annotation's own time (ProfilerStep#3: the
 * step's time outside every event traced in it) and the path's head offset read as what they
 * are, in words short enough for a title (gp_shorten_name reads a longer "(...)" as C++). */
static const char *event_label(const gp_cp_event *e)
{
    if (e->kind == GP_EV_USER_ANNOTATION && strncmp(e->name, "ProfilerStep#", 13) == 0)
        return "(in the step, outside traced events)";
    if (strncmp(e->name, "(before the first event", 23) == 0)
        return "(before the path thread's first event)";
    return e->name;
}

static void add_event(cause_acc *c, int cls, const gp_cp_event *e)
{
    const char *py = e->python ? e->python : "";
    const char *name = event_label(e);
    for (size_t i = 0; i < c->n_ev; i++) {
        acc_event *x = &c->ev[i];
        if (x->cls == cls && strcmp(x->name, name) == 0 && strcmp(x->python, py) == 0) {
            x->time = gp__sat_add(x->time, e->time);
            x->count += e->count;
            return;
        }
    }
    if (c->n_ev < MAX_EVENTS)
        c->ev[c->n_ev++] = (acc_event){cls, name, py, e->kind, e->time, e->count};
}

/* c: r's paths summed. Default mode (!hta): the path time of launch calls moves out of the CPU
 * class into the launch class; HTA's critical path (--critical-path hta) keeps HTA's classes. */
static void accumulate(cause_acc *c, const gp_rank_analysis *r, bool hta)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < r->n_critical_paths; i++) {
        const gp_critical_path *p = &r->critical_paths[i];
        if (!p->valid)
            continue;
        c->steps++;
        c->length = gp__sat_add(c->length, p->length);
        for (int k = 0; k < GP_CP_COUNT; k++) {
            c->by[k] = gp__sat_add(c->by[k], p->by_class[k]);
            c->total = gp__sat_add(c->total, p->by_class[k]);
        }
        for (size_t k = 0; k < p->n_top; k++) {
            const gp_cp_event *e = &p->top[k];
            if (!e->name || (unsigned)e->cls >= GP_CP_COUNT)
                continue;
            int cls = (int)e->cls;
            bool host = cls != GP_CP_GPU_COMPUTE && cls != GP_CP_GPU_COMM;
            if (!hta && cls == GP_CP_CPU && is_launch_call(e)) {
                gp_ns moved = GP_MIN(e->time, c->by[cls]);
                c->by[cls] -= moved;
                c->by[GP_CP_LAUNCH] = gp__sat_add(c->by[GP_CP_LAUNCH], moved);
                cls = GP_CP_LAUNCH;
            } else if (host && cls != GP_CP_DEPENDENCY && is_sync(e)) {
                gp_ns moved = GP_MIN(e->time, c->by[cls]);
                c->by[cls] -= moved;
                c->by[C_SYNC] = gp__sat_add(c->by[C_SYNC], moved);
                cls = C_SYNC;
            }
            add_event(c, cls, e);
        }
    }
}

/* What kind of object an event on the path of class cls is. */
static gp_object_kind object_kind(int cls, uint8_t kind)
{
    if (kind == GP_EV_KERNEL || kind == GP_EV_MEMCPY || kind == GP_EV_MEMSET)
        return GP_OBJ_KERNEL;
    if (cls == C_SYNC || kind == GP_EV_RUNTIME || kind == GP_EV_DRIVER || kind == GP_EV_SYNC)
        return GP_OBJ_CALL;
    if (kind == GP_EV_CPU_OP)
        return GP_OBJ_OP;
    return GP_OBJ_FRAME;
}

/* The class's top events, by path time, as the finding's objects. */
static void name_events(gp_finding *f, const cause_acc *c, int cls, size_t max)
{
    bool used[MAX_EVENTS] = {false};
    for (size_t k = 0; k < max; k++) {
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < c->n_ev; i++)
            if (!used[i] && c->ev[i].cls == cls &&
                (best == SIZE_MAX || c->ev[i].time > c->ev[best].time))
                best = i;
        if (best == SIZE_MAX || c->ev[best].time <= 0)
            return;
        used[best] = true;
        const acc_event *e = &c->ev[best];
        bool named = false; /* already named (the top Python function) */
        for (size_t j = 0; j < f->n_objects; j++)
            named |= strcmp(f->objects[j].name, e->name) == 0;
        if (named) {
            max++;
            continue;
        }
        gp_finding_object *o =
            gp__advise_object(f, object_kind(cls, e->kind), e->name, e->time, e->count);
        if (o)
            snprintf(o->frame, sizeof o->frame, "%s", e->python);
    }
}

/* The GPU ops with the most modeled time and their roofline (ops by shape; NULL: none). The
 * gain: the time above the roof of those ops. */
static gp_ns name_ops(gp_finding *f, const gp_ops *ops, size_t max)
{
    gp_ns gain = 0;
    if (!ops)
        return 0;
    for (size_t k = 0; k < max && f->n_objects < GP_ARRAY_LEN(f->objects); k++) {
        const gp_ops_row *best = NULL;
        for (size_t i = 0; i < ops->n_rows; i++) {
            const gp_ops_row *r = &ops->rows[i];
            if (!r->modeled || r->roof_pct < 0 || r->model_time <= 0)
                continue;
            bool seen = false;
            for (size_t j = 0; j < f->n_objects; j++)
                seen |= f->objects[j].kind == GP_OBJ_OP && f->objects[j].time == r->model_time &&
                        strcmp(f->objects[j].name, r->key) == 0;
            if (!seen && (!best || r->model_time > best->model_time))
                best = r;
        }
        if (!best)
            break;
        gp_finding_object *o =
            gp__advise_object(f, GP_OBJ_OP, best->key, best->model_time, best->calls);
        if (o) {
            o->roof = best->roof_pct / 100.0;
            if (best->line)
                snprintf(o->frame, sizeof o->frame, "%s", best->line);
        }
        gain += (gp_ns)((double)best->model_time * (1 - best->roof_pct / 100.0));
    }
    return gain;
}

/* A data-loading event: its name holds one of opts.data_load (default PyTorch's "DataLoader",
 * "dataloader"). */
static bool is_data_load(const gp_analyze_opts *o, const char *name)
{
    static const char *const dflt[] = {"DataLoader", "dataloader"};
    const char *const *p = o->data_load ? o->data_load : dflt;
    size_t n = o->data_load ? o->n_data_load : GP_ARRAY_LEN(dflt);
    for (size_t i = 0; i < n; i++)
        if (p[i] && *p[i] && strstr(name, p[i]))
            return true;
    return false;
}

/* A Python built-in (`<built-in method astype of numpy.ndarray object at 0x...>`): not a level a
 * user acts on; its time belongs to the Python function that called it. */
static bool is_builtin(const char *name)
{
    return strncmp(name, "<built-in", 9) == 0;
}

/* The frame a user acts on for path event e: a Python frame that is not a built-in is itself;
 * a built-in, a CPU op or a runtime call folds into the Python function enclosing it (e->python)
 * when that is not a built-in either. NULL: none (no Python stacks in the trace). */
static const char *acted_frame(const acc_event *e)
{
    const char *f = NULL;
    if (e->kind == GP_EV_PYTHON && !is_builtin(e->name))
        f = e->name;
    else if (*e->python && !is_builtin(e->python))
        f = e->python;
    /* the profiler's own frames (torch/profiler/profiler.py(811): step) are no user's work */
    return f && !strstr(f, "torch/profiler/") ? f : NULL;
}

/* The path's heaviest frame for class cls: the frame (acted_frame) that holds the most of the
 * class's path time among the path's top events, summed over the steps; *caller its own caller
 * when the frame is itself a path event ("" otherwise). NULL when no event of cls has a frame. */
static const char *heaviest_frame(const cause_acc *c, int cls, gp_ns *time, const char **caller)
{
    const char *best = NULL;
    *time = 0;
    *caller = "";
    for (size_t i = 0; i < c->n_ev; i++) {
        const char *fi = c->ev[i].cls == cls ? acted_frame(&c->ev[i]) : NULL;
        if (!fi)
            continue;
        gp_ns sum = 0;
        for (size_t j = 0; j < c->n_ev; j++) {
            const char *fj = c->ev[j].cls == cls ? acted_frame(&c->ev[j]) : NULL;
            if (fj && strcmp(fi, fj) == 0)
                sum = gp__sat_add(sum, c->ev[j].time);
        }
        if (sum > *time || (sum == *time && best && strcmp(fi, best) < 0)) {
            best = fi;
            *time = sum;
        }
    }
    for (size_t i = 0; best && i < c->n_ev; i++)
        if (c->ev[i].cls == cls && c->ev[i].kind == GP_EV_PYTHON &&
            strcmp(c->ev[i].name, best) == 0 && strcmp(c->ev[i].python, best) != 0)
            *caller = c->ev[i].python;
    return best;
}

/* The Python function holding the most self time (its duration minus the Python frames nested
 * in it) among the frames that start inside the data-loading events of t's CPU threads (loading:
 * the preprocessing a DataLoader runs in the step, "scipy/ndimage/_interpolation.py(400): zoom"),
 * or inside the ProfilerSteps but outside data loading (!loading: the host work of the step).
 * *name NULL when none. */
static void top_python(const gp_trace *t, const gp_analyze_opts *o, bool loading, const char **name,
                       gp_ns *self)
{
    enum { DEPTH = 256 };
    size_t n_str = gp_trace_str_count(t);
    gp_ns *acc = calloc(n_str ? n_str : 1, sizeof *acc); /* self time by name id */
    *name = NULL;
    *self = 0;
    if (!acc)
        return;
    for (size_t k = 0; k < t->n_tracks; k++) {
        const gp_track *tr = &t->tracks[k];
        if (tr->kind != GP_TRACK_CPU_THREAD)
            continue;
        gp_ns load_end = INT64_MIN, step_end = INT64_MIN;
        const gp_event *stack[DEPTH];
        gp_ns child[DEPTH];
        size_t depth = 0;
        for (size_t i = 0; i <= tr->n_events; i++) {
            const gp_event *e = i < tr->n_events ? &tr->events[i] : NULL;
            gp_ns at = e ? e->ts : INT64_MAX;
            while (depth > 0 && stack[depth - 1]->ts + stack[depth - 1]->dur <= at) {
                const gp_event *f = stack[--depth];
                gp_ns me = f->dur - child[depth];
                if (depth > 0)
                    child[depth - 1] += f->dur;
                if (f->name < n_str)
                    acc[f->name] = gp__sat_add(acc[f->name], me);
            }
            if (!e)
                break;
            const char *en = gp_trace_str(t, e->name);
            if (e->kind == GP_EV_USER_ANNOTATION && strncmp(en, "ProfilerStep#", 13) == 0)
                step_end = GP_MAX(step_end, e->ts + e->dur);
            bool inside = loading ? e->ts < load_end : e->ts < step_end && e->ts >= load_end;
            if (e->kind != GP_EV_PYTHON && is_data_load(o, en))
                load_end = GP_MAX(load_end, e->ts + e->dur);
            else if (e->kind == GP_EV_PYTHON && inside && depth < DEPTH) {
                stack[depth] = e;
                child[depth++] = 0;
            }
        }
    }
    for (size_t j = 0; j < n_str; j++)
        if (acc[j] > *self) {
            *self = acc[j];
            *name = gp_trace_str(t, (gp_strid)j);
        }
    free(acc);
}

static gp_finding *add_cause(gp_analysis *a, size_t *cap, const gp_rank_analysis *r,
                             const cause_acc *c, int cls)
{
    gp_finding *f = gp__advise_add(a, cap, rules[cls], r->rank);
    if (!f)
        return NULL;
    double share = c->total > 0 ? (double)c->by[cls] / (double)c->total : 0;
    gp__advise_metric(f, "class_time", (double)c->by[cls], GP_FU_NS);
    gp__advise_metric(f, "class_share", share, GP_FU_RATIO);
    gp__advise_metric(f, "path_time", (double)c->length, GP_FU_NS);
    gp__advise_metric(f, "steps", (double)c->steps, GP_FU_COUNT);
    f->priority = gp__advise_priority(c->by[cls], c->total);
    static const gp_suggestion_type types[C_N] = {
        GP_SUG_PARALLELIZATION, GP_SUG_PARALLELIZATION, GP_SUG_ALGORITHM, GP_SUG_PARALLELIZATION,
        GP_SUG_BATCHING,        GP_SUG_CACHING,         GP_SUG_ALGORITHM, GP_SUG_ALGORITHM};
    f->type = types[cls];
    return f;
}

/* The blocked time of the steps' syncs beyond one per step moves into "sync" out of the path's
 * CPU time, then its launch time, up to what is there (the path's own sync events count
 * toward it already). */
static void move_syncs(cause_acc *c, const gp__sync_sites *syncs)
{
    gp_ns want = syncs ? syncs->beyond - c->by[C_SYNC] : 0;
    static const int from[] = {GP_CP_CPU, GP_CP_LAUNCH};
    for (size_t k = 0; k < GP_ARRAY_LEN(from) && want > 0; k++) {
        gp_ns m = GP_MIN(want, c->by[from[k]]);
        c->by[from[k]] -= m;
        c->by[C_SYNC] += m;
        want -= m;
    }
}

/* True when a kernel, copy or memset of t overlaps one of r's valid critical-path regions (or t
 * is NULL: nothing to check, the path decides). A path with no GPU work in its region (an
 * in-process profile, a CPU-only trace) is 100 % cpu_bound by construction: it names no cause. */
static bool gpu_work_in_regions(const gp_trace *t, const gp_rank_analysis *r)
{
    if (!t)
        return true;
    for (size_t k = 0; k < t->n_tracks; k++) {
        const gp_track *tr = &t->tracks[k];
        if (tr->kind != GP_TRACK_GPU_STREAM)
            continue;
        for (size_t i = 0; i < tr->n_events; i++) {
            const gp_event *e = &tr->events[i];
            if (e->kind != GP_EV_KERNEL && e->kind != GP_EV_MEMCPY && e->kind != GP_EV_MEMSET)
                continue;
            for (size_t j = 0; j < r->n_critical_paths; j++) {
                const gp_critical_path *p = &r->critical_paths[j];
                if (p->valid && e->ts < p->end && gp__sat_add(e->ts, GP_MAX(e->dur, 1)) > p->start)
                    return true;
            }
        }
    }
    return false;
}

gp_status gp__finding_cause(gp_analysis *a, size_t *cap, const gp_rank_analysis *r,
                            const gp_trace *t, const struct gp_ops *ops,
                            const gp__sync_sites *syncs)
{
    cause_acc *c = malloc(sizeof *c);
    if (!c)
        return GP_ENOMEM;
    accumulate(c, r, a->opts.cp_hta);
    move_syncs(c, syncs);
    gp_status st = GP_OK;
    if (c->steps == 0 || c->total <= 0 || !gpu_work_in_regions(t, r))
        goto done;
    int host = -1; /* the largest class that is not GPU compute */
    for (int k = 0; k < C_N; k++)
        if (k != GP_CP_GPU_COMPUTE && k != GP_CP_DEPENDENCY && c->by[k] > 0 &&
            (host < 0 || c->by[k] > c->by[host]))
            host = k;
    if (host >= 0 && (double)c->by[host] >= MIN_SHARE * (double)c->total) {
        gp_finding *f = add_cause(a, cap, r, c, host);
        if (!f) {
            st = GP_ENOMEM;
            goto done;
        }
        const char *py = NULL, *caller = "";
        gp_ns py_time = 0;
        uint64_t py_calls = 0;
        if (host == GP_CP_CPU) /* the path's heaviest frame: what holds the step */
            py = heaviest_frame(c, host, &py_time, &caller);
        for (size_t i = 0; py && i < c->n_ev; i++) /* unless one event alone holds more */
            if (c->ev[i].cls == host && c->ev[i].time > py_time)
                py = NULL;
        for (size_t i = 0; py && i < c->n_ev; i++)
            if (c->ev[i].cls == host && strcmp(c->ev[i].name, py) == 0)
                py_calls += c->ev[i].count;
        if (host == GP_CP_DATA_LOADING && t)
            top_python(t, &a->opts, true, &py, &py_time);
        gp_finding_object *po =
            py ? gp__advise_object(f, GP_OBJ_FRAME, py, py_time, py_calls) : NULL;
        if (po)
            snprintf(po->frame, sizeof po->frame, "%s", caller);
        if (host == C_SYNC && syncs && syncs->n)
            gp__advise_sync_sites(f, syncs, MAX_OBJECTS); /* each call site, its Python line */
        else
            name_events(f, c, host, MAX_OBJECTS - (py != NULL));
        f->gain_ns = c->by[host];
        /* variant 1: launch overhead on a rank whose kernels mostly replay graphs */
        if (host == GP_CP_LAUNCH && r->kernels_total > 0 &&
            r->launch.graph_kernels * 2 >= r->kernels_total)
            f->variant = 1;
        f->cause = (double)c->by[host] >= CAUSE_SHARE * (double)c->total;
    }
    if (c->by[GP_CP_GPU_COMPUTE] > 0 && (host < 0 || c->by[GP_CP_GPU_COMPUTE] >= c->by[host])) {
        gp_finding *f = add_cause(a, cap, r, c, GP_CP_GPU_COMPUTE);
        if (!f) {
            st = GP_ENOMEM;
            goto done;
        }
        name_events(f, c, GP_CP_GPU_COMPUTE, 2);
        f->gain_ns = GP_MIN(name_ops(f, ops, 3), c->by[GP_CP_GPU_COMPUTE]);
        f->cause = true;
    }
done:
    free(c);
    return st;
}

const char *gp__cause_dominant(const gp_rank_analysis *r, bool hta, gp_finding *f, size_t max,
                               double *share)
{
    cause_acc *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    accumulate(c, r, hta);
    int best = -1; /* the largest class of all, dependency aside */
    for (int k = 0; k < C_N; k++)
        if (k != GP_CP_DEPENDENCY && c->by[k] > 0 && (best < 0 || c->by[k] > c->by[best]))
            best = k;
    const char *rule = NULL;
    if (c->steps > 0 && c->total > 0 && best >= 0) {
        rule = rules[best];
        *share = (double)c->by[best] / (double)c->total;
        name_events(f, c, best, max);
    }
    free(c);
    return rule;
}
