/* Analysis of a compile log (gpuprof/compile.h): the summary, graph breaks with their causes,
 * recompilations, failures, frames, per-graph fusion and where ranks compiled differently. Reads
 * the compile model only (the reader counted what is needed in the payloads); prints nothing.
 * docs/compile.md says how each figure is counted. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gpuprof/compile.h"
#include "core/imap.h"
#include "core/msort.h"
#include "core/util.h"

static const char *const cause_names[GP_CC_COUNT] = {
    [GP_CC_EXPLICIT] = "explicit",
    [GP_CC_DATA_DEPENDENT] = "data_dependent",
    [GP_CC_SCALAR] = "scalar",
    [GP_CC_DYNAMIC_OUTPUT] = "dynamic_output",
    [GP_CC_UNSUPPORTED] = "unsupported",
    [GP_CC_PRINT] = "print",
    [GP_CC_SHAPE] = "shape",
    [GP_CC_TYPE] = "type",
    [GP_CC_IDENTITY] = "identity",
    [GP_CC_VALUE] = "value",
    [GP_CC_CACHE_LIMIT] = "cache_limit",
    [GP_CC_OTHER] = "other",
};

static const char *const suggestions[GP_CC_COUNT] = {
    [GP_CC_EXPLICIT] = "an explicit torch._dynamo.graph_break() (or a function Dynamo is told to "
                       "skip) splits the graph: remove it from the hot path if it is not needed",
    [GP_CC_DATA_DEPENDENT] = "Python control flow on a tensor's value: express the branch with "
                             "torch.where or torch.cond, or decide it outside the compiled "
                             "function",
    [GP_CC_SCALAR] = ".item() / .tolist() bring a tensor value into Python: keep it a tensor, or "
                     "set torch._dynamo.config.capture_scalar_outputs = True",
    [GP_CC_DYNAMIC_OUTPUT] = "an operator whose output shape depends on the data (nonzero, unique, "
                             "masked_select): set torch._dynamo.config."
                             "capture_dynamic_output_shape_ops = True or keep it out of the "
                             "compiled region",
    [GP_CC_UNSUPPORTED] = "a builtin, C extension or Python feature Dynamo cannot trace: move it "
                          "out of the compiled function, wrap it in torch.compiler.disable, or "
                          "make it a custom op",
    [GP_CC_PRINT] = "print / logging inside the compiled function: remove it, or list the "
                    "function in torch._dynamo.config.reorderable_logging_functions",
    [GP_CC_SHAPE] = "a size or stride changed between calls: mark the varying dimension dynamic "
                    "(torch._dynamo.mark_dynamic(x, dim)) or compile with dynamic=True",
    [GP_CC_TYPE] = "the dtype, device or requires_grad of an input changed: keep inputs "
                   "consistent, or expect one compile per variant",
    [GP_CC_IDENTITY] = "a guarded object changed identity (a new module, function or closure per "
                       "call): create it once and reuse it",
    [GP_CC_VALUE] = "a Python value the graph specialised on changed: pass it as a tensor, or let "
                    "it be dynamic (torch._dynamo.config.specialize_int = False)",
    [GP_CC_CACHE_LIMIT] = "the frame reached its recompile limit and runs eagerly from then on: "
                          "fix the cause of the recompiles, compile with dynamic=True, or raise "
                          "torch._dynamo.config.cache_size_limit",
    [GP_CC_OTHER] = "run torch._dynamo.explain(fn)(*args), or set "
                    "TORCH_LOGS=graph_breaks,recompiles, for the full reason",
};

const char *gp_compile_cause_name(gp_compile_cause c)
{
    return GP_NAME_OF(cause_names, c, "other");
}

const char *gp_compile_cause_suggestion(gp_compile_cause c)
{
    return GP_NAME_OF(suggestions, c, suggestions[GP_CC_OTHER]);
}

static const char *const payload_kind_names[GP_CPL_KIND_COUNT] = {
    [GP_CPL_DYNAMO_GRAPH] = "dynamo_graph",
    [GP_CPL_AOT_GRAPH] = "aot_graph",
    [GP_CPL_PRE_GRAD_GRAPH] = "pre_grad_graph",
    [GP_CPL_POST_GRAD_GRAPH] = "post_grad_graph",
    [GP_CPL_OUTPUT_CODE] = "output_code",
    [GP_CPL_GUARDS] = "guards",
    [GP_CPL_GRAPH_BREAK] = "graph_break",
    [GP_CPL_EXPORTED_PROGRAM] = "exported_program",
    [GP_CPL_ARTIFACT] = "artifact",
    [GP_CPL_OTHER] = "other",
};

const char *gp_compile_payload_kind_name(gp_compile_payload_kind k)
{
    return GP_NAME_OF(payload_kind_names, k, "other");
}

/* Substrings of a reason (lower case) and the cause they tell, first match wins. */
typedef struct cause_rule {
    const char *needle;
    gp_compile_cause cause;
} cause_rule;

static const cause_rule break_rules[] = {
    {"graph_break", GP_CC_EXPLICIT},
    {"graph break()", GP_CC_EXPLICIT},
    {".item()", GP_CC_SCALAR},
    {"item()", GP_CC_SCALAR},
    {"tolist", GP_CC_SCALAR},
    {"_local_scalar_dense", GP_CC_SCALAR},
    {"capture_scalar_outputs", GP_CC_SCALAR},
    {"dynamic shape operator", GP_CC_DYNAMIC_OUTPUT},
    {"dynamic_output_shape", GP_CC_DYNAMIC_OUTPUT},
    {"nonzero", GP_CC_DYNAMIC_OUTPUT},
    {"data-dependent", GP_CC_DATA_DEPENDENT},
    {"data dependent", GP_CC_DATA_DEPENDENT},
    {"generic_jump", GP_CC_DATA_DEPENDENT},
    {"jump", GP_CC_DATA_DEPENDENT},
    {"branch", GP_CC_DATA_DEPENDENT},
    {"print", GP_CC_PRINT},
    {"logging", GP_CC_PRINT},
    {"logger", GP_CC_PRINT},
    {"builtin", GP_CC_UNSUPPORTED},
    {"c extension", GP_CC_UNSUPPORTED},
    {"skip function", GP_CC_UNSUPPORTED},
    {"unsupported", GP_CC_UNSUPPORTED},
    {"not supported", GP_CC_UNSUPPORTED},
    {"call_function", GP_CC_UNSUPPORTED},
    {"cannot trace", GP_CC_UNSUPPORTED},
};

static const cause_rule recompile_rules[] = {
    {"cache_size_limit", GP_CC_CACHE_LIMIT},
    {"recompile_limit", GP_CC_CACHE_LIMIT},
    {"size mismatch", GP_CC_SHAPE},
    {"stride mismatch", GP_CC_SHAPE},
    {"shape", GP_CC_SHAPE},
    {".size()", GP_CC_SHAPE},
    {"dtype", GP_CC_TYPE},
    {"device", GP_CC_TYPE},
    {"requires_grad", GP_CC_TYPE},
    {"dispatch key", GP_CC_TYPE},
    {"id_match", GP_CC_IDENTITY},
    {"obj_id", GP_CC_IDENTITY},
    {"type_id", GP_CC_IDENTITY},
    {"id(", GP_CC_IDENTITY},
    {"==", GP_CC_VALUE},
    {"!=", GP_CC_VALUE},
    {"equals_match", GP_CC_VALUE},
};

static bool contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *p = hay; *p; p++)
        if (strncasecmp(p, needle, n) == 0)
            return true;
    return false;
}

static gp_compile_cause classify(const char *reason, const cause_rule *rules, size_t n)
{
    if (!reason || !*reason)
        return GP_CC_OTHER;
    for (size_t i = 0; i < n; i++)
        if (contains_nocase(reason, rules[i].needle))
            return rules[i].cause;
    return GP_CC_OTHER;
}

/* ---- result building ---- */

typedef struct builder {
    const gp_compile_log *log;
    gp_compile_analysis *a;
    size_t cap_breaks, cap_recompiles, cap_failures, cap_frames, cap_graphs, cap_ranks, cap_phases;
    gp__buf text;      /* sentences, NUL-separated */
    size_t *sentences; /* their offsets */
    size_t n_sentences, cap_sentences;
    bool *used;     /* units whose restart reason was given to a break */
    size_t *fn_off; /* per break: offset of its function name in text, SIZE_MAX: as is */
    size_t cap_fn_off;
    size_t *first; /* first unit of each unit's compile */
} builder;

#define PUSH_OR_FAIL(b, arr, n, cap)                                                               \
    do {                                                                                           \
        if (gp__grow((void **)&(arr), &(cap), sizeof *(arr), (n) + 1) != GP_OK)                    \
            return GP_ENOMEM;                                                                      \
    } while (0)

static gp_status say(builder *b, const char *fmt, ...) GP_PRINTF(2, 3);
static gp_status say(builder *b, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    PUSH_OR_FAIL(b, b->sentences, b->n_sentences, b->cap_sentences);
    b->sentences[b->n_sentences++] = b->text.len;
    return gp__buf_append(&b->text, msg, strlen(msg) + 1);
}

static bool same_compile(const gp_compile_unit *x, const gp_compile_unit *y)
{
    return x->file == y->file && x->frame_id == y->frame_id &&
           x->frame_compile_id == y->frame_compile_id && x->occurrence == y->occurrence &&
           x->compiled_autograd_id == y->compiled_autograd_id;
}

static bool same_frame(const gp_compile_unit *x, const gp_compile_unit *y)
{
    return x->file == y->file && x->frame_id == y->frame_id && x->session == y->session &&
           x->compiled_autograd_id == y->compiled_autograd_id;
}

/* first[i]: the first unit of unit i's compile (its lowest attempt seen first), through a hash
 * of the compile id verified on a hit (a collision falls back to a scan). */
static gp_status find_firsts(builder *b)
{
    const gp_compile_log *log = b->log;
    gp__imap m;
    if (gp__imap_init(&m, log->n_units) != GP_OK)
        return GP_ENOMEM;
    for (size_t i = 0; i < log->n_units; i++) {
        const gp_compile_unit *u = &log->units[i];
        uint64_t h = gp__hash_u64(((uint64_t)u->file << 32) ^ (uint32_t)u->frame_id);
        h = gp__hash_u64(h ^ ((uint64_t)(uint32_t)u->frame_compile_id << 16) ^
                         (uint32_t)u->compiled_autograd_id);
        h = gp__hash_u64(h ^ (uint32_t)u->occurrence); /* ids repeat across dynamo sessions */
        int64_t key = (int64_t)(h >> 1);
        uint64_t v;
        b->first[i] = i;
        if (gp__imap_get(&m, key, &v)) {
            if (same_compile(&log->units[v], u)) {
                b->first[i] = (size_t)v;
                continue;
            }
            for (size_t k = 0; k < i; k++)
                if (same_compile(&log->units[k], u)) {
                    b->first[i] = k;
                    break;
                }
        } else if (gp__imap_put(&m, key, i) != GP_OK) {
            gp__imap_free(&m);
            return GP_ENOMEM;
        }
    }
    gp__imap_free(&m);
    return GP_OK;
}

static const char *resume_prefix = "torch_dynamo_resume_in_";

/* "torch_dynamo_resume_in_<fn>_at_<line>": fn into out, the line, true. */
static bool parse_resume(const char *co_name, char *fn, size_t cap, int32_t *line)
{
    size_t pl = strlen(resume_prefix);
    if (strncmp(co_name, resume_prefix, pl) != 0)
        return false;
    const char *at = NULL;
    for (const char *p = co_name + pl; (p = strstr(p, "_at_")) != NULL; p++)
        at = p;
    if (!at || !isdigit((unsigned char)at[4]))
        return false;
    size_t n = (size_t)(at - co_name - (ptrdiff_t)pl);
    snprintf(fn, cap, "%.*s", (int)n, co_name + pl);
    *line = (int32_t)strtol(at + 4, NULL, 10);
    return true;
}

/* The unit before `before` (same file) whose restart reasons caused the break in fn. */
static size_t breaking_unit(builder *b, size_t before, const char *fn)
{
    const gp_compile_log *log = b->log;
    size_t pl = strlen(resume_prefix), fl = strlen(fn);
    for (size_t i = before; i > 0; i--) {
        const gp_compile_unit *u = &log->units[i - 1];
        if (u->file != log->units[before].file)
            break;
        if (b->used[i - 1] || u->n_restart_reasons == 0)
            continue;
        bool mine = strcmp(u->co_name, fn) == 0 || (strncmp(u->co_name, resume_prefix, pl) == 0 &&
                                                    strncmp(u->co_name + pl, fn, fl) == 0 &&
                                                    strncmp(u->co_name + pl + fl, "_at_", 4) == 0);
        if (mine)
            return i - 1;
    }
    return SIZE_MAX;
}

/* Adds a break; fn (when not NULL) is its function's name, copied into the text storage. */
static gp_status add_break(builder *b, const gp_compile_break *x, const char *fn)
{
    gp_compile_analysis *a = b->a;
    PUSH_OR_FAIL(b, a->breaks, a->n_breaks, b->cap_breaks);
    PUSH_OR_FAIL(b, b->fn_off, a->n_breaks, b->cap_fn_off);
    b->fn_off[a->n_breaks] = SIZE_MAX;
    if (fn) {
        b->fn_off[a->n_breaks] = b->text.len;
        if (gp__buf_append(&b->text, fn, strlen(fn) + 1) != GP_OK)
            return GP_ENOMEM;
    }
    a->breaks[a->n_breaks++] = *x;
    return GP_OK;
}

/* Breaks named by dynamo_graph_break_reason artifacts, then resume frames not named by one. */
static gp_status find_breaks(builder *b)
{
    const gp_compile_log *log = b->log;
    gp_compile_analysis *a = b->a;
    for (size_t i = 0; i < log->n_units; i++) {
        const gp_compile_unit *u = &log->units[i];
        if (!u->break_reason)
            continue;
        gp_compile_break x = {u->rank,       (uint32_t)i,   UINT32_MAX,      u->co_name,
                              u->break_file, u->break_line, u->break_reason, GP_CC_OTHER};
        x.cause = classify(x.reason, break_rules, GP_ARRAY_LEN(break_rules));
        b->used[i] = true;
        if (add_break(b, &x, NULL) != GP_OK)
            return GP_ENOMEM;
    }
    size_t from_artifacts = a->n_breaks;
    for (size_t i = 0; i < log->n_units; i++) {
        const gp_compile_unit *u = &log->units[i];
        char fn[512];
        int32_t line;
        if (!parse_resume(u->co_name, fn, sizeof fn, &line) || b->first[i] != i ||
            u->frame_compile_id != 0)
            continue;
        bool named = false;
        for (size_t k = 0; k < from_artifacts && !named; k++) {
            gp_compile_break *x = &a->breaks[k];
            if (x->rank == u->rank && x->line == line && x->resume_unit == UINT32_MAX) {
                x->resume_unit = (uint32_t)i;
                named = true;
            }
        }
        if (named)
            continue;
        size_t bu = breaking_unit(b, i, fn);
        const char *reason = "";
        if (bu != SIZE_MAX) {
            b->used[bu] = true;
            reason = log->units[bu].restart_reasons[0];
        }
        /* The function that broke is the one the resume frame names. */
        gp_compile_break x = {u->rank,        bu == SIZE_MAX ? UINT32_MAX : (uint32_t)bu,
                              (uint32_t)i,    "",
                              u->co_filename, line,
                              reason,         GP_CC_OTHER};
        x.cause = classify(reason, break_rules, GP_ARRAY_LEN(break_rules));
        if (add_break(b, &x, fn) != GP_OK)
            return GP_ENOMEM;
    }
    return GP_OK;
}

static gp_status find_recompiles_and_failures(builder *b)
{
    const gp_compile_log *log = b->log;
    gp_compile_analysis *a = b->a;
    for (size_t i = 0; i < log->n_units; i++) {
        const gp_compile_unit *u = &log->units[i];
        if (u->fail_type) {
            PUSH_OR_FAIL(b, a->failures, a->n_failures, b->cap_failures);
            a->failures[a->n_failures++] = (uint32_t)i;
        }
        if (u->frame_compile_id < 1 || b->first[i] != i)
            continue;
        const char *reason = NULL;
        for (size_t j = i; j < log->n_units && !reason; j++)
            if (same_compile(&log->units[j], u))
                reason = log->units[j].recompile_reason;
        PUSH_OR_FAIL(b, a->recompiles, a->n_recompiles, b->cap_recompiles);
        a->recompiles[a->n_recompiles++] = (gp_compile_recompile){
            u->rank, (uint32_t)i, reason ? reason : "",
            classify(reason, recompile_rules, GP_ARRAY_LEN(recompile_rules))};
    }
    return GP_OK;
}

static gp_status find_frames(builder *b)
{
    const gp_compile_log *log = b->log;
    gp_compile_analysis *a = b->a;
    for (size_t i = 0; i < log->n_units; i++) {
        const gp_compile_unit *u = &log->units[i];
        gp_compile_frame_stats *f = NULL;
        for (size_t k = a->n_frames; k > 0 && !f; k--)
            if (same_frame(&log->units[a->frames[k - 1].first_unit], u))
                f = &a->frames[k - 1];
        if (!f) {
            PUSH_OR_FAIL(b, a->frames, a->n_frames, b->cap_frames);
            f = &a->frames[a->n_frames++];
            *f = (gp_compile_frame_stats){
                u->rank,     u->frame_id,
                (uint32_t)i, 0,
                0,           -1,
                false,       strncmp(u->co_name, resume_prefix, strlen(resume_prefix)) == 0};
        }
        if (b->first[i] == i)
            f->compiles++;
        if (u->cache_size_limit > f->limit)
            f->limit = u->cache_size_limit;
    }
    for (size_t k = 0; k < a->n_frames; k++) {
        gp_compile_frame_stats *f = &a->frames[k];
        f->recompiles = f->compiles > 0 ? f->compiles - 1 : 0;
        f->over_limit = f->limit > 0 && (int64_t)f->compiles > f->limit;
    }
    return GP_OK;
}

static gp_status find_graphs(builder *b)
{
    const gp_compile_log *log = b->log;
    gp_compile_analysis *a = b->a;
    for (size_t i = 0; i < log->n_units; i++) {
        const gp_compile_unit *u = &log->units[i];
        uint32_t code = UINT32_MAX, graph = UINT32_MAX;
        for (size_t k = 0; k < u->n_payloads; k++) {
            const gp_compile_payload *p = &log->payloads[u->payloads[k]];
            if (p->kind == GP_CPL_OUTPUT_CODE)
                code = u->payloads[k];
            else if (p->kind == GP_CPL_POST_GRAD_GRAPH)
                graph = u->payloads[k];
        }
        if (code == UINT32_MAX && graph == UINT32_MAX)
            continue;
        PUSH_OR_FAIL(b, a->graphs, a->n_graphs, b->cap_graphs);
        gp_compile_graph *g = &a->graphs[a->n_graphs++];
        memset(g, 0, sizeof *g);
        g->unit = (uint32_t)i;
        g->code_payload = code;
        g->graph_payload = graph;
        if (graph != UINT32_MAX) {
            g->ops = log->payloads[graph].n_ops;
            g->aten_ops = log->payloads[graph].n_aten_ops;
        }
        if (code != UINT32_MAX) {
            g->kernels = log->payloads[code].n_kernels;
            g->extern_calls = log->payloads[code].n_extern;
            g->fallback_ops = log->payloads[code].n_fallback;
        }
        g->fusion_ratio = g->kernels && g->aten_ops ? (double)g->aten_ops / g->kernels : 0;
        gp_compile_summary *s = &a->summary;
        if (g->kernels && g->aten_ops) {
            s->kernels += g->kernels;
            s->aten_ops += g->aten_ops;
        }
    }
    a->summary.graphs = (uint32_t)a->n_graphs;
    a->summary.fusion_ratio =
        a->summary.kernels ? (double)a->summary.aten_ops / (double)a->summary.kernels : 0;
    return GP_OK;
}

/* Sums start at -1 ("absent in every compile") and count from the first time present. */
static void add_time(gp_ns *sum, gp_ns v)
{
    if (v >= 0)
        *sum = gp__sat_add(*sum < 0 ? 0 : *sum, v);
}

static gp_status add_phase(builder *b, const gp_compile_phase *p)
{
    gp_compile_analysis *a = b->a;
    for (size_t i = 0; i < a->n_phases; i++)
        if (strcmp(a->phases[i].name, p->name) == 0) {
            a->phases[i].total = gp__sat_add(a->phases[i].total, p->total);
            a->phases[i].count += p->count;
            return GP_OK;
        }
    PUSH_OR_FAIL(b, a->phases, a->n_phases, b->cap_phases);
    a->phases[a->n_phases++] = *p;
    return GP_OK;
}

static int cmp_phase(const gp_compile_phase *x, const gp_compile_phase *y)
{
    int c = GP_CMP(y->total, x->total);
    return c ? c : strcmp(x->name, y->name);
}
GP__DEFINE_MERGE_SORT(sort_phases, gp_compile_phase, cmp_phase)

/* The rank's entry, created on first use. */
static gp_compile_rank *rank_of(builder *b, int32_t rank)
{
    gp_compile_analysis *a = b->a;
    for (size_t i = 0; i < a->n_ranks; i++)
        if (a->ranks[i].rank == rank)
            return &a->ranks[i];
    if (gp__grow((void **)&a->ranks, &b->cap_ranks, sizeof *a->ranks, a->n_ranks + 1) != GP_OK)
        return NULL;
    gp_compile_rank *r = &a->ranks[a->n_ranks++];
    memset(r, 0, sizeof *r);
    r->rank = rank;
    r->compile_time = -1;
    return r;
}

static int cmp_rank(const gp_compile_rank *x, const gp_compile_rank *y)
{
    return GP_CMP(x->rank, y->rank);
}
GP__DEFINE_MERGE_SORT(sort_ranks, gp_compile_rank, cmp_rank)

static gp_status summarize(builder *b)
{
    const gp_compile_log *log = b->log;
    gp_compile_analysis *a = b->a;
    gp_compile_summary *s = &a->summary;
    s->compile_time = s->backend = s->aot = s->inductor = s->code_gen = -1;
    for (size_t i = 0; i < log->n_files; i++)
        if (!rank_of(b, log->files[i].rank))
            return GP_ENOMEM;
    for (size_t i = 0; i < log->n_units; i++) {
        const gp_compile_unit *u = &log->units[i];
        gp_compile_rank *r = rank_of(b, u->rank);
        if (!r)
            return GP_ENOMEM;
        if (b->first[i] == i)
            s->compiles++, r->compiles++;
        s->restarts += (uint32_t)u->n_restart_reasons;
        add_time(&s->compile_time, u->times.total);
        add_time(&r->compile_time, u->times.total);
        add_time(&s->backend, u->times.backend);
        add_time(&s->aot, u->times.aot);
        add_time(&s->inductor, u->times.inductor);
        add_time(&s->code_gen, u->times.code_gen);
        s->cache_hits += u->cache_hits;
        s->cache_misses += u->cache_misses;
        for (size_t k = 0; k < u->n_phases; k++)
            if (add_phase(b, &u->phases[k]) != GP_OK)
                return GP_ENOMEM;
    }
    s->cache_hit_rate = s->cache_hits + s->cache_misses
                            ? (double)s->cache_hits / (double)(s->cache_hits + s->cache_misses)
                            : -1;
    s->frames = (uint32_t)a->n_frames;
    s->recompiles = (uint32_t)a->n_recompiles;
    s->breaks = (uint32_t)a->n_breaks;
    s->failures = (uint32_t)a->n_failures;
    for (size_t i = 0; i < a->n_frames; i++)
        rank_of(b, a->frames[i].rank)->frames++;
    for (size_t i = 0; i < a->n_recompiles; i++)
        rank_of(b, a->recompiles[i].rank)->recompiles++;
    for (size_t i = 0; i < a->n_breaks; i++)
        rank_of(b, a->breaks[i].rank)->breaks++;
    for (size_t i = 0; i < a->n_failures; i++)
        rank_of(b, log->units[a->failures[i]].rank)->failures++;
    for (size_t i = 0; i < a->n_graphs; i++)
        rank_of(b, log->units[a->graphs[i].unit].rank)->graphs++;
    s->ranks = (uint32_t)a->n_ranks;
    if (!sort_phases(a->phases, a->n_phases) || !sort_ranks(a->ranks, a->n_ranks))
        return GP_ENOMEM;
    return GP_OK;
}

/* One sentence per figure that is not the same on every rank. */
static gp_status find_divergences(builder *b)
{
    gp_compile_analysis *a = b->a;
    if (a->n_ranks < 2)
        return GP_OK;
    static const char *const what[] = {"compiles", "graph breaks", "recompilations", "failures",
                                       "compiled graphs"};
    for (size_t w = 0; w < GP_ARRAY_LEN(what); w++) {
        uint32_t v[2] = {0, 0};
        bool differ = false;
        char list[768];
        size_t n = 0;
        for (size_t i = 0; i < a->n_ranks; i++) {
            const gp_compile_rank *r = &a->ranks[i];
            uint32_t x = w == 0   ? r->compiles
                         : w == 1 ? r->breaks
                         : w == 2 ? r->recompiles
                         : w == 3 ? r->failures
                                  : r->graphs;
            if (i == 0)
                v[0] = x;
            else if (x != v[0])
                differ = true;
            if (n < sizeof list)
                n += (size_t)snprintf(list + n, sizeof list - n, "%srank %d: %u", i ? ", " : "",
                                      r->rank, x);
        }
        (void)v[1];
        if (differ && say(b, "%s differ across ranks (%s)", what[w], list) != GP_OK)
            return GP_ENOMEM;
    }
    return GP_OK;
}

void gp_compile_analysis_free(gp_compile_analysis *a)
{
    if (!a)
        return;
    free(a->phases);
    free(a->breaks);
    free(a->recompiles);
    free(a->failures);
    free(a->frames);
    free(a->graphs);
    free(a->ranks);
    free((void *)a->divergences);
    free(a->text);
    free(a);
}

gp_status gp_compile_analyze(const gp_compile_log *log, gp_compile_analysis **out)
{
    builder b = {.log = log};
    b.a = calloc(1, sizeof *b.a);
    b.used = calloc(log->n_units + 1, sizeof *b.used);
    b.first = calloc(log->n_units + 1, sizeof *b.first);
    gp_status st = b.a && b.used && b.first ? GP_OK : GP_ENOMEM;
    if (st == GP_OK)
        st = find_firsts(&b);
    if (st == GP_OK)
        st = find_breaks(&b);
    if (st == GP_OK)
        st = find_recompiles_and_failures(&b);
    if (st == GP_OK)
        st = find_frames(&b);
    if (st == GP_OK)
        st = find_graphs(&b);
    if (st == GP_OK)
        st = summarize(&b);
    if (st == GP_OK)
        st = find_divergences(&b);
    if (st == GP_OK && !b.text.data && gp__buf_terminate(&b.text) != GP_OK)
        st = GP_ENOMEM;
    if (st == GP_OK && b.n_sentences) {
        b.a->divergences = calloc(b.n_sentences, sizeof *b.a->divergences);
        if (!b.a->divergences)
            st = GP_ENOMEM;
    }
    if (st == GP_OK) {
        b.a->text = b.text.data;
        b.text.data = NULL;
        for (size_t i = 0; i < b.n_sentences; i++)
            b.a->divergences[i] = b.a->text + b.sentences[i];
        for (size_t i = 0; i < b.a->n_breaks; i++)
            if (b.fn_off[i] != SIZE_MAX)
                b.a->breaks[i].function = b.a->text + b.fn_off[i];
        b.a->n_divergences = b.n_sentences;
    }
    gp__buf_free(&b.text);
    free(b.sentences);
    free(b.fn_off);
    free(b.used);
    free(b.first);
    if (st != GP_OK) {
        gp_compile_analysis_free(b.a);
        return GP_ENOMEM;
    }
    *out = b.a;
    return GP_OK;
}
