/* The registry of views (include/gpuprof/views.h) and the one pipeline behind each: the job is
 * read once by the front end, the view builds what it needs once (a lazily computed bundle:
 * gp__pipe), then renders. The server (serve/profiles.c), Python's Trace.view() and the docs read
 * this list; each entry's `cli` is the command that writes the same bytes. */
#include "app/views.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "gpuprof/analyze.h"
#include "gpuprof/compile.h"
#include "gpuprof/ops.h"
#include "gpuprof/report.h"
#include "gpuprof/summary.h"
#include "render/ops_html.h"
#include "render/render_internal.h"
#include "render/serve_pages.h"

/* Served flame graphs in speedscope JSON (a response held in memory) stop at 64 MiB of stack
 * lines, a quarter of the CLI's default (issue 38: 1.03 GB for a 1.8 MB trace). */
#define GP_VIEW_FLAME_MAX_BYTES ((uint64_t)64 << 20)

/* One request's pipeline: its input, its parameters and what it has built so far. */
typedef struct gp__pipe {
    const gp_job *job;
    const char *title;
    gp_flame_weight weight;
    gp_flame_by flame_by;
    gp_ops_by ops_by;
    bool critical_path;    /* timeline views: the critical-path overlay */
    const char *nav;       /* pages: the server's bar (nav_html), or NULL */
    gp_analysis *analysis; /* built at the first use (pipe_analysis) */
} gp__pipe;

typedef struct view_def view_def;
typedef gp_status (*build_fn)(gp__pipe *p, const view_def *v, FILE *fp, gp_error *err);

/* An entry: what the front ends see, and how it is built. */
struct view_def {
    gp_view_info info;
    build_fn build;
    unsigned tables; /* analysis views: the tables (0: all) */
    bool hta;        /* analysis views: HTA's definitions and step filter (gpuprof analyze --hta) */
    int ops_by;      /* ops views: the grouping; -1: the request's ?by= */
    bool json;       /* views with a page and a document: the document */
};

/* The analysis with the view's options, built once per request. */
static gp_status pipe_analysis(gp__pipe *p, const view_def *v, const gp_analysis **out,
                               gp_error *err)
{
    if (!p->analysis) {
        gp_analyze_opts ao;
        gp_analyze_opts_init(&ao);
        if (v->hta) {
            ao.steps = GP_STEPS_HTA;
            ao.hta = true;
        }
        gp_status st = gp_analyze_job(p->job, &ao, &p->analysis, err);
        if (st != GP_OK)
            return st;
    }
    *out = p->analysis;
    return GP_OK;
}

/* ---- builders ----------------------------------------------------------------------------- */
/* Each builds view v of p->job and renders it to fp (a page with p->nav after <body>); the
 * status of the first step that failed, err saying why where the step does. */

static gp_status build_report(gp__pipe *p, const view_def *v, FILE *fp, gp_error *err)
{
    (void)v;
    (void)err;
    gp_report_bundle *rb = NULL;
    gp_status st = gp_report_bundle_build(p->job, NULL, &rb);
    if (st == GP_OK)
        st = gp__dashboard_render_page(rb->dashboard, p->title, p->nav, fp);
    gp_report_bundle_free(rb);
    return st;
}

static gp_status build_timeline(gp__pipe *p, const view_def *v, FILE *fp, gp_error *err)
{
    gp_timeline *tl = NULL;
    gp_timeline_opts to;
    gp_timeline_opts_init(&to);
    to.critical_path = p->critical_path;
    gp_status st = gp_timeline_build(gp_job_traces(p->job), p->job->n_ranks, &to, &tl, err);
    if (st == GP_OK)
        st = v->json ? gp__timeline_data_json(tl, fp)
                     : gp__timeline_render_page(tl, p->title, p->nav, fp);
    gp_timeline_free(tl);
    return st;
}

static gp_status build_flame(gp__pipe *p, const view_def *v, FILE *fp, gp_error *err)
{
    gp_flame_opts fo;
    gp_flame_opts_init(&fo);
    fo.weight = p->weight;
    fo.by = p->flame_by;
    const gp_job *job = p->job;
    gp_flame_tree *tree = NULL;
    gp_status st = gp_flame_build(gp_job_traces(job), job->n_ranks, &fo, &tree, err);
    if (st == GP_EEMPTY)
        return gp_error_set(err, st, "%s: no event carries %s weight", p->title,
                            p->weight == GP_FLAME_GPU   ? "GPU"
                            : p->weight == GP_FLAME_CPU ? "CPU"
                                                        : "any");
    gp_flame_render_opts ro;
    gp_flame_render_opts_init(&ro);
    ro.title = p->title;
    ro.nav_html = p->nav;
    ro.max_bytes = GP_VIEW_FLAME_MAX_BYTES;
    gp_flame_tree *alt = NULL; /* the page's "Frames: nn.Module" switch, as gpuprof flame has it */
    if (st == GP_OK && !v->json)
        st = gp_flame_build_alt(gp_job_traces(job), job->n_ranks, &fo, tree, &alt, err);
    ro.alt = alt;
    gp_flame_evented *ev = NULL; /* the speedscope file's evented profiles, as gpuprof flame's */
    if (st == GP_OK && v->json)
        st = gp_flame_evented_build(gp_job_traces(job), job->n_ranks, &ev, err);
    ro.evented = ev;
    if (st == GP_OK)
        st = gp_flame_render(tree, v->json ? GP_FLAME_SPEEDSCOPE : GP_FLAME_HTML, &ro, fp, err);
    gp_flame_evented_free(ev);
    if (st == GP_ELIMIT)
        gp_error_set(err, st,
                     "%s: the flame graph's stacks nest too deep for speedscope JSON (over %d MB; "
                     "the HTML page has no such limit)",
                     p->title, (int)(GP_VIEW_FLAME_MAX_BYTES >> 20));
    gp_flame_tree_free(alt);
    gp_flame_tree_free(tree);
    return st;
}

static gp_status build_summary(gp__pipe *p, const view_def *v, FILE *fp, gp_error *err)
{
    (void)v;
    gp_summary_opts so;
    gp_summary_opts_init(&so);
    gp_summary *sum = NULL;
    gp_status st = gp_summary_compute(gp_job_traces(p->job), p->job->n_ranks, &so, &sum, err);
    if (st == GP_OK)
        st = gp_summary_render_json(sum, NULL, fp);
    gp_summary_free(sum);
    return st;
}

static gp_status build_ops(gp__pipe *p, const view_def *v, FILE *fp, gp_error *err)
{
    gp_ops_opts oo;
    gp_ops_opts_init(&oo);
    oo.by = v->ops_by >= 0 ? (gp_ops_by)v->ops_by : p->ops_by;
    gp_ops *ops = NULL;
    gp_status st = gp_ops_compute(gp_job_traces(p->job), p->job->n_ranks, &oo, &ops, err);
    if (st == GP_OK)
        st = gp_ops_render_json(ops, 0, fp);
    gp_ops_free(ops);
    return st;
}

/* The ops page: every row of the grouping ?by= (default name) and the roofline (gpuprof ops
 * --html). */
static gp_status build_ops_page(gp__pipe *p, const view_def *v, FILE *fp, gp_error *err)
{
    (void)v;
    gp_ops_opts oo;
    gp_ops_opts_init(&oo);
    oo.by = p->ops_by;
    gp_ops *ops = NULL;
    gp_status st = gp_ops_compute(gp_job_traces(p->job), p->job->n_ranks, &oo, &ops, err);
    if (st == GP_OK)
        st = gp__render_ops_page_to(ops, 0, p->title, p->nav, fp);
    gp_ops_free(ops);
    return st;
}

static gp_status build_analysis(gp__pipe *p, const view_def *v, FILE *fp, gp_error *err)
{
    const gp_analysis *an = NULL;
    gp_status st = pipe_analysis(p, v, &an, err);
    if (st == GP_OK)
        st = gp_analysis_render_json(an, v->tables ? v->tables : GP_AT_ALL, fp);
    return st;
}

/* The compiled regions of each rank trace (gpuprof compile --trace NAME --json or --html). */
static gp_status build_compile(gp__pipe *p, const view_def *v, FILE *fp, gp_error *err)
{
    const gp_job *job = p->job;
    gp_compile_trace **ct = calloc(job->n_ranks ? job->n_ranks : 1, sizeof *ct);
    if (!ct)
        return GP_ENOMEM;
    gp_status st = GP_OK;
    for (size_t i = 0; i < job->n_ranks && st == GP_OK; i++)
        st = gp_compile_trace_analyze(job->ranks[i], &ct[i]);
    if (st == GP_OK) {
        gp_compile_report r = {.traces = (const gp_compile_trace *const *)ct,
                               .n_traces = job->n_ranks,
                               .top_n = 20,
                               .title = p->title,
                               .nav_html = p->nav};
        st = v->json ? gp_compile_render_json(&r, fp) : gp_compile_render_html(&r, fp, err);
    }
    for (size_t i = 0; i < job->n_ranks; i++)
        gp_compile_trace_free(ct[i]);
    free(ct);
    return st;
}

/* ---- the registry ------------------------------------------------------------------------- */

#define HTA_TABLES                                                                                 \
    (GP_AT_TEMPORAL | GP_AT_IDLE | GP_AT_TYPES | GP_AT_KERNELS | GP_AT_OVERLAP | GP_AT_QUEUE)

/* Pages first, then the JSON documents, each in the order the index links them. */
static const view_def views[] = {
    {.info = {.name = "report",
              .route = "/report/",
              .label = "report",
              .html = true,
              .linked = true,
              .keep_op_shapes = true,
              .params = "",
              .cli = "gpuprof report --title NAME -o OUT.html DIR/NAME",
              .python = "t.report(OUT, title=NAME)",
              .doc = "the dashboard"},
     .build = build_report},
    {.info = {.name = "timeline",
              .route = "/timeline/",
              .label = "timeline",
              .html = true,
              .linked = true,
              .keep_op_shapes = true,
              .params = "critical_path",
              .cli = "gpuprof timeline --title NAME -o OUT.html DIR/NAME",
              .python = "t.timeline(OUT, title=NAME)",
              .doc = "the timeline"},
     .build = build_timeline},
    {.info = {.name = "flame",
              .route = "/flame/",
              .label = "flame",
              .html = true,
              .linked = true,
              .params = "weight,by",
              .cli = "gpuprof flame --title NAME -o OUT.html DIR/NAME",
              .python = "t.view(\"flame\", title=NAME)",
              .doc = "the flame graph (`?weight=`: auto, cpu or gpu, as `--weight`; `?by=module`: "
                     "frames by `nn.Module`, as `--by module`)"},
     .build = build_flame},
    {.info = {.name = "ops_page",
              .route = "/ops/",
              .label = "ops",
              .html = true,
              .linked = true,
              .keep_op_shapes = true,
              .params = "by",
              .cli = "gpuprof ops --title NAME --html OUT.html DIR/NAME",
              .python = "t.view(\"ops_page\", title=NAME)",
              .doc = "the ops page: the roofline of the leaf ops and every row of the op table, "
                     "sortable and filterable (`?by=` as the ops document)"},
     .build = build_ops_page,
     .ops_by = -1},
    {.info =
         {.name = "compile_page",
          .route = "/compile/",
          .label = "compile",
          .html = true,
          .compile_log = true,
          .params = "",
          .cli = "gpuprof compile --trace DIR/NAME --title NAME --html OUT.html",
          .python = "t.view(\"compile_page\", title=NAME)",
          .doc =
              "a compile log: the page of `gpuprof compile NAME --html` (title: NAME; graphs and "
              "generated code read back from the log); a trace or job: its compiled regions (the "
              "command: a "
              "trace file)"},
     .build = build_compile},
    {.info = {.name = "summary",
              .route = "/api/profiler/summary/",
              .label = "summary",
              .linked = true,
              .params = "",
              .cli = "gpuprof summary --json DIR/NAME",
              .python = "t.view(\"summary\")",
              .doc = "per-name statistics (docs/summary.md)"},
     .build = build_summary},
    {.info = {.name = "analysis",
              .route = "/api/profiler/analysis/",
              .label = "analysis",
              .linked = true,
              .keep_op_shapes = true,
              .params = "",
              .cli = "gpuprof analyze --json DIR/NAME",
              .python = "t.analyze(format=\"json\")",
              .doc = "every analysis table and the findings (docs/analyses.md)"},
     .build = build_analysis},
    {.info =
         {.name = "kernels",
          .route = "/api/profiler/kernels/",
          .label = "kernels",
          .linked = true,
          .keep_op_shapes = true,
          .params = "",
          .cli = "gpuprof ops --json --by kernel DIR/NAME",
          .python = "t.ops(by=\"kernel\", format=\"json\")",
          .doc =
              "each kernel with the ops that launched it, its GPU work sum, counts (docs/ops.md)"},
     .build = build_ops,
     .ops_by = GP_OPS_BY_KERNEL},
    {.info = {.name = "ops",
              .route = "/api/profiler/ops/",
              .label = "ops",
              .linked = true,
              .keep_op_shapes = true,
              .params = "by",
              .cli = "gpuprof ops --json DIR/NAME",
              .python = "t.ops(format=\"json\")",
              .doc = "the op table with FLOPs, bytes and the roofline (`?by=`: name, shape, "
                     "module, line, annotation, kernel or instance, as `--by`; docs/ops.md)"},
     .build = build_ops,
     .ops_by = -1},
    {.info = {.name = "memory",
              .route = "/api/profiler/memory/",
              .label = "memory",
              .linked = true,
              .keep_op_shapes = true,
              .params = "",
              .cli = "gpuprof analyze --json --table memory --table peak_memory DIR/NAME",
              .python = "t.analyze(tables=[\"memory\", \"peak_memory\"], format=\"json\")",
              .doc = "the memory timeline per device and the peak"},
     .build = build_analysis,
     .tables = GP_AT_MEMORY | GP_AT_PEAK_MEMORY},
    {.info = {.name = "hta",
              .route = "/api/profiler/hta/",
              .label = "hta",
              .linked = true,
              .keep_op_shapes = true,
              .params = "",
              .cli = "gpuprof hta --json DIR/NAME",
              .python = "t.analyze(hta=True, tables=[\"temporal\", \"idle\", \"kernel_types\", "
                        "\"top_kernels\", \"overlap\", \"queue\"], format=\"json\")",
              .doc =
                  "HTA's tables with HTA's definitions and step filter (`gpuprof analyze --hta`)"},
     .build = build_analysis,
     .tables = HTA_TABLES,
     .hta = true},
    {.info =
         {.name = "flame_json",
          .route = "/api/profiler/flame/",
          .label = "flame",
          .linked = true,
          .params = "weight,by",
          .cli = "gpuprof flame --title NAME -o OUT.speedscope.json DIR/NAME",
          .python = "t.view(\"flame_json\", title=NAME)",
          .doc =
              "the flame graph in the speedscope file format (`?weight=`, `?by=` as the page's)"},
     .build = build_flame,
     .json = true},
    {.info = {.name = "timeline_json",
              .route = "/api/profiler/timeline/",
              .label = "timeline",
              .linked = true,
              .params = "",
              .cli = NULL,
              .python = "t.view(\"timeline_json\")",
              .doc = "the timeline's rows and events, the document the timeline page embeds "
                     "(docs/internals/report.md, \"Timeline encoding\")"},
     .build = build_timeline,
     .json = true},
    {.info = {.name = "compile",
              .route = "/api/profiler/compile/",
              .label = "compile",
              .compile_log = true,
              .params = "",
              .cli = "gpuprof compile --trace DIR/NAME --json",
              .python = "t.view(\"compile\")",
              .doc = "a compile log: `gpuprof compile NAME --json` (compile ids, graph breaks, "
                     "recompilations, failures, phase times, fusion, ranks and their divergences; "
                     "docs/compile.md); a trace or job: one entry per rank, the compiled regions, "
                     "their GPU work sum, kernels and launch overhead, eager vs compiled time (the "
                     "command: a trace file)"},
     .build = build_compile,
     .json = true},
};

size_t gp_view_count(void)
{
    return GP_ARRAY_LEN(views);
}

const gp_view_info *gp_view_at(size_t i)
{
    return i < GP_ARRAY_LEN(views) ? &views[i].info : NULL;
}

const gp_view_info *gp_view_find(const char *name)
{
    for (size_t i = 0; name && i < GP_ARRAY_LEN(views); i++)
        if (strcmp(views[i].info.name, name) == 0)
            return &views[i].info;
    return NULL;
}

size_t gp__view_list(const gp_view_info **out, size_t cap)
{
    size_t n = GP_MIN(cap, GP_ARRAY_LEN(views));
    for (size_t i = 0; i < n; i++)
        out[i] = &views[i].info;
    return n;
}

/* The entry whose description is info, NULL when info is not one of the registry's. */
static const view_def *def_of(const gp_view_info *info)
{
    for (size_t i = 0; i < GP_ARRAY_LEN(views); i++)
        if (&views[i].info == info)
            return &views[i];
    return NULL;
}

/* The request's parameters p (NULL: defaults) into pipe as view v takes them; GP_EINVAL (err
 * says what was expected) for a value it does not take. */
static gp_status params(const view_def *v, const gp_view_params *p, gp__pipe *pipe, gp_error *err)
{
    bool flame = v->build == build_flame;
    pipe->weight = GP_FLAME_AUTO;
    pipe->flame_by = GP_FLAME_BY_STACK;
    pipe->ops_by = GP_OPS_BY_NAME;
    pipe->title = p && p->title ? p->title : NULL;
    if (!p)
        return GP_OK;
    if (p->weight && flame) {
        static const char *const names[] = {"auto", "cpu", "gpu"};
        int k = gp__index_of(names, 3, p->weight, false);
        if (k < 0)
            return gp_error_set(err, GP_EINVAL, "weight: expected auto, cpu or gpu");
        pipe->weight = (gp_flame_weight)k;
    }
    if (p->by && flame) {
        if (strcmp(p->by, "stack") != 0 && strcmp(p->by, "module") != 0)
            return gp_error_set(err, GP_EINVAL, "by: expected stack or module");
        pipe->flame_by = p->by[0] == 'm' ? GP_FLAME_BY_MODULE : GP_FLAME_BY_STACK;
    } else if (p->by && v->ops_by < 0 && gp_ops_by_parse(p->by, &pipe->ops_by) != GP_OK)
        return gp_error_set(
            err, GP_EINVAL,
            "by: expected name, shape, module, line, annotation, kernel or instance");
    if (p->critical_path && v->build == build_timeline && !v->json) { /* the page's overlay */
        if (strcmp(p->critical_path, "0") != 0 && strcmp(p->critical_path, "1") != 0)
            return gp_error_set(err, GP_EINVAL, "critical_path: expected 1 or 0");
        pipe->critical_path = p->critical_path[0] == '1';
    }
    return GP_OK;
}

gp_status gp_view_check_params(const gp_view_info *v, const gp_view_params *p, gp_error *err)
{
    const view_def *d = def_of(v);
    if (!d)
        return gp_error_set(err, GP_EINVAL, "not a view of the registry (gp_view_at)");
    gp__pipe pipe;
    return params(d, p, &pipe, err);
}

gp_status gp_view_render(const gp_view_info *info, const gp_job *job, const gp_view_params *p,
                         FILE *fp, gp_error *err)
{
    return gp__view_render(info, job, p, NULL, fp, err);
}

gp_status gp__view_render(const gp_view_info *info, const gp_job *job, const gp_view_params *p,
                          const char *nav, FILE *fp, gp_error *err)
{
    const view_def *v = def_of(info);
    if (!v || !job)
        return gp_error_set(err, GP_EINVAL,
                            v ? "no job" : "not a view of the registry (gp_view_at)");
    gp__pipe pipe = {.job = job};
    gp_status st = params(v, p, &pipe, err);
    if (st != GP_OK)
        return st;
    char *bar = NULL;
    if (nav && info->html) {
        const gp_view_info *list[GP_ARRAY_LEN(views)];
        size_t n = gp__view_list(list, GP_ARRAY_LEN(list));
        if (!(pipe.nav = bar = gp__serve_nav_html(*nav ? nav : NULL, list, n)))
            return GP_ENOMEM;
    }
    st = v->build(&pipe, v, fp, err);
    free(bar);
    gp_analysis_free(pipe.analysis);
    return st;
}
