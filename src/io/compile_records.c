/* One TORCH_TRACE record into the compile model: the envelope (rank, compile id, payload hash),
 * the record kind, and what each known kind says (dynamo_start, compilation_metrics,
 * chromium_event, artifact, the graphs and output code, torch.export records). The record's JSON
 * is one line, parsed with jansson; payload lines are handed over one at a time and never held,
 * except the few small payloads that are interpreted whole (GP__CAP_*). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "io/compile_log_internal.h"

enum {
    K_UNKNOWN = 0,
    K_IGNORED, /* known, nothing to take from it */
    K_STR,
    K_DYNAMO_START,
    K_METRICS,
    K_CHROMIUM,
    K_ARTIFACT,
    K_DYNAMO_GRAPH,
    K_AOT_GRAPH,
    K_PRE_GRAD,
    K_POST_GRAD,
    K_OUTPUT_CODE,
    K_GUARDS,
    K_EXPORTED_PROGRAM,
    K_GUARD_ADDED,
    K_CREATE_SYMBOL,
    K_UNBACKED_SYMBOL,
    K_DATA_DEPENDENT,
    K_MISSING_FAKE,
    K_MISMATCHED_FAKE,
};

static const gp__named kinds[] = {
    {"str", K_STR},
    {"dynamo_start", K_DYNAMO_START},
    {"compilation_metrics", K_METRICS},
    {"chromium_event", K_CHROMIUM},
    {"artifact", K_ARTIFACT},
    {"dynamo_output_graph", K_DYNAMO_GRAPH},
    {"aot_forward_graph", K_AOT_GRAPH},
    {"aot_backward_graph", K_AOT_GRAPH},
    {"aot_inference_graph", K_AOT_GRAPH},
    {"aot_joint_graph", K_AOT_GRAPH},
    {"inductor_pre_grad_graph", K_PRE_GRAD},
    {"inductor_post_grad_graph", K_POST_GRAD},
    {"inductor_output_code", K_OUTPUT_CODE},
    {"dynamo_guards", K_GUARDS},
    {"dynamo_cpp_guards_str", K_GUARDS},
    {"exported_program", K_EXPORTED_PROGRAM},
    {"guard_added", K_GUARD_ADDED},
    {"create_symbol", K_CREATE_SYMBOL},
    {"create_unbacked_symbol", K_UNBACKED_SYMBOL},
    {"propagate_real_tensors_provenance", K_DATA_DEPENDENT},
    {"missing_fake_kernel", K_MISSING_FAKE},
    {"mismatched_fake_kernel", K_MISMATCHED_FAKE},
    {"describe_tensor", K_IGNORED},
    {"describe_storage", K_IGNORED},
    {"describe_source", K_IGNORED},
    {"bwd_compilation_metrics", K_IGNORED},
    {"aot_autograd_backward_compilation_metrics", K_IGNORED},
    {"expression_created", K_IGNORED},
    {"guard_added_fast", K_IGNORED},
    {"symbolic_shape_specialization", K_IGNORED},
    {"link", K_IGNORED},
    {"dump_file", K_IGNORED},
    {"graph_dump", K_IGNORED},
    {"optimize_ddp_split_graph", K_IGNORED},
    {"optimize_ddp_split_child", K_IGNORED},
    {"compiled_autograd_graph", K_IGNORED},
    {"stack", K_IGNORED},
};

/* Members of the envelope, not record kinds. */
static const char *const envelope_keys[] = {
    "rank",  "frame_id",  "frame_compile_id", "attempt", "has_payload", "compiled_autograd_id",
    "stack", "timestamp", "pathname",         "lineno",  "thread"};

static gp_compile_log *L(gp__clog_reader *r)
{
    return r->log;
}

static gp__clog_priv *P(gp__clog_reader *r)
{
    return r->log->priv;
}

/* ---- small JSON helpers ---- */

static bool jnum(json_t *o, const char *key, double *out)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_number(v))
        return false;
    *out = json_number_value(v);
    return isfinite(*out);
}

static int64_t jint(json_t *o, const char *key, int64_t dflt)
{
    double d;
    if (!jnum(o, key, &d) || d > 9e18 || d < -9e18)
        return dflt;
    return (int64_t)d;
}

/* A string member interned; NULL when absent or not a string (GP_ENOMEM in *st). */
static const char *jstr(gp__clog_reader *r, json_t *o, const char *key, gp_status *st)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_string(v))
        return NULL;
    const char *s = gp__clog_intern(L(r), json_string_value(v), json_string_length(v));
    if (!s)
        *st = GP_ENOMEM;
    return s;
}

/* Seconds (a number) into ns, or -1. */
static gp_ns jsec(json_t *o, const char *key)
{
    double d;
    return jnum(o, key, &d) && d >= 0 && d < 9e9 ? (gp_ns)llround(d * 1e9) : -1;
}

static gp_ns jus(json_t *o, const char *key)
{
    double d;
    return jnum(o, key, &d) && d >= 0 && d < 9e15 ? (gp_ns)llround(d * 1e3) : -1;
}

/* ---- compile units ---- */

static int64_t unit_key(uint32_t file, int32_t f, int32_t c, int32_t a, int32_t ca)
{
    uint64_t h = gp__hash_u64(((uint64_t)file << 32) ^ (uint32_t)f);
    h = gp__hash_u64(h ^ ((uint64_t)(uint32_t)c << 20) ^ (uint32_t)a);
    h = gp__hash_u64(h ^ (uint32_t)ca);
    return (int64_t)(h >> 1);
}

static bool unit_is(const gp_compile_unit *u, uint32_t file, int32_t f, int32_t c, int32_t a,
                    int32_t ca)
{
    return u->file == file && u->frame_id == f && u->frame_compile_id == c && u->attempt == a &&
           u->compiled_autograd_id == ca;
}

static void unit_init(gp_compile_unit *u, uint32_t file, int32_t f, int32_t c, int32_t a,
                      int32_t ca, uint64_t line)
{
    memset(u, 0, sizeof *u);
    u->rank = -1;
    u->file = file;
    u->frame_id = f;
    u->frame_compile_id = c;
    u->attempt = a;
    u->compiled_autograd_id = ca;
    u->first_line = line;
    u->co_name = "";
    u->co_filename = "";
    u->co_firstlineno = -1;
    u->graph_op_count = u->graph_node_count = u->graph_input_count = -1;
    u->guard_count = u->shape_env_guard_count = u->cache_size_limit = -1;
    u->times = (gp_compile_times){-1, -1, -1, -1, -1, -1};
    u->fail_user_line = -1;
    u->break_line = -1;
    size_t n = 0;
    if (ca >= 0)
        n += (size_t)snprintf(u->id, sizeof u->id, "!%d/", ca);
    n += (size_t)snprintf(u->id + n, sizeof u->id - n, "%d/%d", f, c);
    if (a > 0 && n < sizeof u->id)
        snprintf(u->id + n, sizeof u->id - n, "_%d", a);
}

/* A new unit for the compile id at log->units[n_units]; UINT32_MAX (and *st) when out of memory.
 * prev: the unit of an earlier occurrence of the id, or NULL. */
static uint32_t new_unit(gp__clog_reader *r, int64_t key, const int32_t id[4],
                         const gp_compile_unit *prev, gp_status *st)
{
    gp_compile_log *log = L(r);
    int32_t occurrence = prev ? prev->occurrence + 1 : 1;
    if (prev && prev->session == r->session)
        r->session++; /* the id was started in this session already: dynamo was reset */
    if (log->n_units >= UINT32_MAX - 1 ||
        gp__grow((void **)&log->units, &P(r)->cap_units, sizeof *log->units, log->n_units + 1) !=
            GP_OK ||
        gp__imap_put(&r->unit_index, key, log->n_units) != GP_OK) {
        *st = GP_ENOMEM;
        return UINT32_MAX;
    }
    gp_compile_unit *u = &log->units[log->n_units];
    unit_init(u, r->file, id[0], id[1], id[2], id[3], r->lineno);
    u->occurrence = occurrence;
    u->session = r->session;
    size_t n = strlen(u->id);
    if (occurrence > 1 && n < sizeof u->id)
        snprintf(u->id + n, sizeof u->id - n, " #%d", (int)occurrence);
    return (uint32_t)log->n_units++;
}

/* The unit of the record's compile id; UINT32_MAX when it has none. A compile id is unique only
 * within one dynamo session (torch._dynamo.reset() restarts at 0/0): a dynamo_start (start) for an
 * id whose latest unit has started already opens a new unit, its next occurrence ("0/0 #2"), and
 * the id's later records go to it. Records after compilation_metrics (backward compiles) stay. */
static uint32_t unit_of(gp__clog_reader *r, json_t *root, bool start, gp_status *st)
{
    json_t *fv = json_object_get(root, "frame_id");
    json_t *cv = json_object_get(root, "frame_compile_id");
    if (!json_is_integer(fv) || !json_is_integer(cv))
        return UINT32_MAX;
    json_int_t f = json_integer_value(fv), c = json_integer_value(cv);
    json_int_t a = jint(root, "attempt", 0), ca = jint(root, "compiled_autograd_id", -1);
    if (f < 0 || f > INT32_MAX || c < 0 || c > INT32_MAX || a < 0 || a > INT32_MAX || ca < -1 ||
        ca > INT32_MAX)
        return UINT32_MAX;
    gp_compile_log *log = L(r);
    int64_t key = unit_key(r->file, (int32_t)f, (int32_t)c, (int32_t)a, (int32_t)ca);
    uint64_t idx;
    bool hit = gp__imap_get(&r->unit_index, key, &idx);
    const int32_t id[4] = {(int32_t)f, (int32_t)c, (int32_t)a, (int32_t)ca};
    if (hit && unit_is(&log->units[idx], r->file, (int32_t)f, (int32_t)c, (int32_t)a, (int32_t)ca))
        return start && log->units[idx].has_start ? new_unit(r, key, id, &log->units[idx], st)
                                                  : (uint32_t)idx;
    /* A miss is a new unit (a unit's key is in the index); only a key that names another unit (a
     * collision of unit_key) looks through the file's units: a scan per new unit was quadratic
     * in the units (issue 38). */
    for (size_t i = hit ? log->n_units : 0; i > 0; i--) {
        if (log->units[i - 1].file != r->file)
            break;
        if (unit_is(&log->units[i - 1], r->file, (int32_t)f, (int32_t)c, (int32_t)a, (int32_t)ca))
            return start && log->units[i - 1].has_start
                       ? new_unit(r, key, id, &log->units[i - 1], st)
                       : (uint32_t)(i - 1);
    }
    return new_unit(r, key, id, NULL, st);
}

/* ---- record kinds ---- */

static gp_status count_kind(gp__clog_reader *r, const char *kind, bool known)
{
    gp_compile_log *log = L(r);
    for (size_t i = 0; i < log->n_kinds; i++)
        if (strcmp(log->kinds[i].kind, kind) == 0) {
            log->kinds[i].count++;
            return GP_OK;
        }
    const char *s = gp__clog_intern(log, kind, strlen(kind));
    if (!s || gp__grow((void **)&log->kinds, &P(r)->cap_kinds, sizeof *log->kinds,
                       log->n_kinds + 1) != GP_OK)
        return GP_ENOMEM;
    log->kinds[log->n_kinds++] = (gp_compile_kind_count){s, 1, known};
    return GP_OK;
}

/* The record's kind: its first member that is not part of the envelope. */
static const char *record_kind(json_t *root, json_t **value)
{
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v)
    {
        bool env = false;
        for (size_t i = 0; i < GP_ARRAY_LEN(envelope_keys) && !env; i++)
            env = strcmp(key, envelope_keys[i]) == 0;
        if (!env) {
            *value = v;
            return key;
        }
    }
    *value = NULL;
    return NULL;
}

static gp_status take_str(gp__clog_reader *r, json_t *v)
{
    json_t *s = json_array_get(v, 0), *id = json_array_get(v, 1);
    if (!json_is_string(s) || !json_is_integer(id) || json_integer_value(id) < 0 ||
        json_integer_value(id) > 10000000)
        return GP_OK;
    size_t i = (size_t)json_integer_value(id);
    if (i >= r->n_strs) {
        size_t cap = r->n_strs;
        if (gp__grow((void **)&r->strs, &cap, sizeof *r->strs, i + 1) != GP_OK)
            return GP_ENOMEM;
        memset(r->strs + r->n_strs, 0, (cap - r->n_strs) * sizeof *r->strs);
        r->n_strs = cap;
    }
    uint32_t sid;
    if (gp__strtab_intern(L(r)->strings, json_string_value(s), json_string_length(s), &sid) !=
        GP_OK)
        return GP_ENOMEM;
    r->strs[i] = sid;
    return GP_OK;
}

/* A file name given as an interned id or as a string. */
static const char *file_name(gp__clog_reader *r, json_t *v, gp_status *st)
{
    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        return i >= 0 && (size_t)i < r->n_strs ? gp__strtab_get(L(r)->strings, r->strs[i]) : "";
    }
    if (json_is_string(v)) {
        const char *s = gp__clog_intern(L(r), json_string_value(v), json_string_length(v));
        if (!s)
            *st = GP_ENOMEM;
        return s ? s : "";
    }
    return "";
}

static bool is_dynamo_internal(const char *file)
{
    return strstr(file, "torch/_dynamo/") != NULL;
}

static gp_status take_start(gp__clog_reader *r, gp_compile_unit *u, json_t *v)
{
    u->has_start = true;
    json_t *stack = json_object_get(v, "stack");
    size_t n = json_array_size(stack);
    free(u->stack);
    u->stack = NULL;
    u->n_stack = 0;
    if (n == 0)
        return GP_OK;
    u->stack = calloc(n, sizeof *u->stack);
    if (!u->stack)
        return GP_ENOMEM;
    gp_status st = GP_OK;
    for (size_t i = 0; i < n; i++) {
        json_t *f = json_array_get(stack, i);
        gp_compile_frame *fr = &u->stack[u->n_stack];
        fr->file = file_name(r, json_object_get(f, "filename"), &st);
        fr->name = jstr(r, f, "name", &st);
        if (!fr->name)
            fr->name = "";
        fr->line = (int32_t)jint(f, "line", -1);
        u->n_stack++;
    }
    /* Dynamo's own frames at the end (convert_frame's __call__ ...) are not the user's. */
    while (u->n_stack > 0 && is_dynamo_internal(u->stack[u->n_stack - 1].file))
        u->n_stack--;
    return st;
}

static gp_status take_string_list(gp__clog_reader *r, json_t *arr, const char ***out, size_t *n)
{
    size_t k = json_array_size(arr);
    free((void *)*out);
    *out = NULL;
    *n = 0;
    if (k == 0)
        return GP_OK;
    *out = calloc(k, sizeof **out);
    if (!*out)
        return GP_ENOMEM;
    for (size_t i = 0; i < k; i++) {
        json_t *s = json_array_get(arr, i);
        if (!json_is_string(s))
            continue;
        const char *t = json_string_value(s);
        size_t tl = json_string_length(s);
        if (tl >= 2 && t[0] == '\'' && t[tl - 1] == '\'') /* Dynamo quotes restart reasons */
            t++, tl -= 2;
        t = gp__clog_intern(L(r), t, tl);
        if (!t)
            return GP_ENOMEM;
        (*out)[(*n)++] = t;
    }
    return GP_OK;
}

/* cache_size_limit (recompile_limit in newer torch) from the dynamo_config JSON string. Every
 * compile of a run logs the same configuration: the last one parsed is remembered. */
static int64_t cache_limit(gp__clog_reader *r, json_t *m)
{
    json_t *cfg = json_object_get(m, "dynamo_config");
    if (!json_is_string(cfg))
        return -1;
    const char *text = json_string_value(cfg);
    size_t len = json_string_length(cfg);
    if (r->last_config.data && r->last_config.len == len &&
        memcmp(r->last_config.data, text, len) == 0)
        return r->last_limit;
    json_t *c = json_loadb(text, len, 0, NULL);
    int64_t v = jint(c, "cache_size_limit", jint(c, "recompile_limit", -1));
    json_decref(c);
    r->last_config.len = 0;
    if (gp__buf_append(&r->last_config, text, len) == GP_OK)
        r->last_limit = v;
    return v;
}

static gp_status take_metrics(gp__clog_reader *r, gp_compile_unit *u, json_t *m)
{
    gp_status st = GP_OK;
    u->has_metrics = true;
    const char *s;
    if ((s = jstr(r, m, "co_name", &st)))
        u->co_name = s;
    if ((s = jstr(r, m, "co_filename", &st)))
        u->co_filename = s;
    u->co_firstlineno = (int32_t)jint(m, "co_firstlineno", u->co_firstlineno);
    u->graph_op_count = jint(m, "graph_op_count", -1);
    u->graph_node_count = jint(m, "graph_node_count", -1);
    u->graph_input_count = jint(m, "graph_input_count", -1);
    u->guard_count = jint(m, "guard_count", -1);
    u->shape_env_guard_count = jint(m, "shape_env_guard_count", -1);
    u->cache_size_limit = cache_limit(r, m);
    gp_compile_times *t = &u->times;
    t->total = jsec(m, "entire_frame_compile_time_s");
    if (t->total < 0)
        t->total = jus(m, "dynamo_cumulative_compile_time_us");
    t->backend = jsec(m, "backend_compile_time_s");
    t->aot = jus(m, "aot_autograd_cumulative_compile_time_us");
    t->inductor = jsec(m, "inductor_compile_time_s");
    if (t->inductor < 0)
        t->inductor = jus(m, "inductor_cumulative_compile_time_us");
    t->code_gen = jsec(m, "code_gen_time_s");
    if (t->code_gen < 0)
        t->code_gen = jus(m, "inductor_code_gen_cumulative_compile_time_us");
    t->before_restart = jsec(m, "dynamo_time_before_restart_s");
    u->fail_type = jstr(r, m, "fail_type", &st);
    u->fail_reason = jstr(r, m, "fail_reason", &st);
    u->fail_user_file = jstr(r, m, "fail_user_frame_filename", &st);
    u->fail_user_line = (int32_t)jint(m, "fail_user_frame_lineno", -1);
    if ((s = jstr(r, m, "recompile_reason", &st)))
        u->recompile_reason = s;
    if (st != GP_OK)
        return st;
    return take_string_list(r, json_object_get(m, "restart_reasons"), &u->restart_reasons,
                            &u->n_restart_reasons);
}

/* Adds dur to the unit's phase name. */
static gp_status add_phase(gp__clog_reader *r, uint32_t unit, uint32_t name, gp_ns dur)
{
    gp_compile_unit *u = &L(r)->units[unit];
    const char *s = gp__strtab_get(L(r)->strings, name);
    for (size_t i = 0; i < u->n_phases; i++)
        if (u->phases[i].name == s) {
            u->phases[i].total += dur;
            u->phases[i].count++;
            return GP_OK;
        }
    gp_compile_phase *p = realloc(u->phases, (u->n_phases + 1) * sizeof *p);
    if (!p)
        return GP_ENOMEM;
    u->phases = p;
    u->phases[u->n_phases++] = (gp_compile_phase){s, dur, 1};
    return GP_OK;
}

/* A chromium_event payload: {"name", "ts" (us), "ph": B/E/X, "dur"}. */
static gp_status take_chromium(gp__clog_reader *r, const char *text, size_t len)
{
    json_t *e = json_loadb(text, len, 0, NULL);
    json_t *name = json_object_get(e, "name"), *ph = json_object_get(e, "ph");
    double ts;
    gp_status st = GP_OK;
    /* |ts| up to 4e15 µs (127 years): the difference of two phase times fits int64 */
    if (r->payload_unit == UINT32_MAX || !json_is_string(name) || !json_is_string(ph) ||
        !jnum(e, "ts", &ts) || !(fabs(ts) <= 4e15))
        goto done;
    uint32_t nid;
    if (gp__strtab_intern(L(r)->strings, json_string_value(name), json_string_length(name), &nid) !=
        GP_OK) {
        st = GP_ENOMEM;
        goto done;
    }
    int64_t ts_ns = (int64_t)llround(ts * 1e3);
    char p = json_string_value(ph)[0];
    if (p == 'B') {
        if (gp__grow((void **)&r->open, &r->cap_open, sizeof *r->open, r->n_open + 1) != GP_OK) {
            st = GP_ENOMEM;
            goto done;
        }
        r->open[r->n_open++] = (gp__clog_open_phase){nid, r->payload_unit, ts_ns};
    } else if (p == 'E') {
        for (size_t i = r->n_open; i > 0; i--) {
            gp__clog_open_phase *o = &r->open[i - 1];
            if (o->name != nid || o->unit != r->payload_unit)
                continue;
            gp_ns d = ts_ns > o->ts_ns ? ts_ns - o->ts_ns : 0;
            memmove(o, o + 1, (r->n_open - i) * sizeof *o);
            r->n_open--;
            st = add_phase(r, r->payload_unit, nid, d);
            break;
        }
    } else if (p == 'X') {
        double dur;
        if (jnum(e, "dur", &dur) && dur >= 0 && dur < 9e15)
            st = add_phase(r, r->payload_unit, nid, (gp_ns)llround(dur * 1e3));
    }
done:
    json_decref(e);
    return st;
}

static gp_status take_recompile_reasons(gp__clog_reader *r, const char *text, size_t len)
{
    json_t *arr = json_loadb(text, len, 0, NULL);
    json_t *first = json_array_get(arr, 0);
    gp_status st = GP_OK;
    if (r->payload_unit != UINT32_MAX && json_is_string(first)) {
        gp_compile_unit *u = &L(r)->units[r->payload_unit];
        if (!u->recompile_reason) {
            u->recompile_reason =
                gp__clog_intern(L(r), json_string_value(first), json_string_length(first));
            if (!u->recompile_reason)
                st = GP_ENOMEM;
        }
    }
    json_decref(arr);
    return st;
}

static gp_status take_break(gp__clog_reader *r, const char *text, size_t len)
{
    if (r->payload_unit == UINT32_MAX)
        return GP_OK;
    char reason[1024], file[1024];
    int32_t line;
    gp__clog_parse_break(text, len, reason, sizeof reason, file, sizeof file, &line);
    gp_compile_unit *u = &L(r)->units[r->payload_unit];
    u->break_reason = gp__clog_intern(L(r), reason, strlen(reason));
    u->break_file = gp__clog_intern(L(r), file, strlen(file));
    u->break_line = line;
    return u->break_reason && u->break_file ? GP_OK : GP_ENOMEM;
}

/* ---- payloads ---- */

static gp_status register_payload(gp__clog_reader *r, gp_compile_payload_kind kind,
                                  const char *name, uint32_t unit)
{
    gp_compile_log *log = L(r);
    if (gp__grow((void **)&log->payloads, &P(r)->cap_payloads, sizeof *log->payloads,
                 log->n_payloads + 1) != GP_OK)
        return GP_ENOMEM;
    const char *n = gp__clog_intern(log, name, strlen(name));
    if (!n)
        return GP_ENOMEM;
    if (unit != UINT32_MAX) {
        gp_compile_unit *u = &log->units[unit];
        uint32_t *p = realloc(u->payloads, (u->n_payloads + 1) * sizeof *p);
        if (!p)
            return GP_ENOMEM;
        u->payloads = p;
        p[u->n_payloads++] = (uint32_t)log->n_payloads;
    }
    gp_compile_payload *p = &log->payloads[log->n_payloads];
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->name = n;
    p->file = r->file;
    p->unit = unit;
    p->line = r->lineno;
    p->first_kernel = (uint32_t)log->n_kernel_names;
    r->payload_index = (uint32_t)log->n_payloads++;
    return GP_OK;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The artifact record: its payload's meaning and the cache counters. */
static gp_status take_artifact(gp__clog_reader *r, uint32_t unit, json_t *v, bool payload)
{
    json_t *nv = json_object_get(v, "name");
    const char *name = json_is_string(nv) ? json_string_value(nv) : "artifact";
    if (unit != UINT32_MAX) {
        gp_compile_unit *u = &L(r)->units[unit];
        u->cache_hits += ends_with(name, "_cache_hit");
        u->cache_misses += ends_with(name, "_cache_miss");
        u->cache_bypasses += ends_with(name, "_cache_bypass");
    }
    bool brk = strcmp(name, "dynamo_graph_break_reason") == 0;
    if (brk)
        r->capture = GP__CAP_BREAK;
    else if (strcmp(name, "recompile_reasons") == 0)
        r->capture = GP__CAP_RECOMPILE;
    return payload ? register_payload(r, brk ? GP_CPL_GRAPH_BREAK : GP_CPL_ARTIFACT, name, unit)
                   : GP_OK;
}

static gp_compile_payload_kind payload_kind(int k)
{
    switch (k) {
    case K_DYNAMO_GRAPH:
        return GP_CPL_DYNAMO_GRAPH;
    case K_AOT_GRAPH:
        return GP_CPL_AOT_GRAPH;
    case K_PRE_GRAD:
        return GP_CPL_PRE_GRAD_GRAPH;
    case K_POST_GRAD:
        return GP_CPL_POST_GRAD_GRAPH;
    case K_OUTPUT_CODE:
        return GP_CPL_OUTPUT_CODE;
    case K_GUARDS:
        return GP_CPL_GUARDS;
    case K_EXPORTED_PROGRAM:
        return GP_CPL_EXPORTED_PROGRAM;
    default:
        return GP_CPL_OTHER;
    }
}

/* What the kind says beyond its payload. */
static gp_status take_kind(gp__clog_reader *r, int k, json_t *v, uint32_t unit, bool payload,
                           const char *kind)
{
    gp_compile_export *x = &L(r)->export_info;
    gp_compile_unit *u = unit != UINT32_MAX ? &L(r)->units[unit] : NULL;
    switch (k) {
    case K_STR:
        return take_str(r, v);
    case K_DYNAMO_START:
        return u ? take_start(r, u, v) : GP_OK;
    case K_METRICS:
        return u ? take_metrics(r, u, v) : GP_OK;
    case K_CHROMIUM:
        r->capture = GP__CAP_CHROMIUM;
        return GP_OK;
    case K_ARTIFACT:
        return take_artifact(r, unit, v, payload);
    case K_EXPORTED_PROGRAM:
        x->exported_programs++;
        break;
    case K_GUARD_ADDED:
        x->guards_added++;
        break;
    case K_CREATE_SYMBOL:
        x->symbols_created++;
        break;
    case K_UNBACKED_SYMBOL:
        x->unbacked_symbols++;
        break;
    case K_DATA_DEPENDENT:
        x->data_dependent++;
        break;
    case K_MISSING_FAKE:
        x->missing_fake_kernel++;
        break;
    case K_MISMATCHED_FAKE:
        x->mismatched_fake_kernel++;
        break;
    default:
        break;
    }
    if (payload && k != K_IGNORED && k != K_UNKNOWN)
        return register_payload(r, payload_kind(k), kind, unit);
    if (payload)
        return register_payload(r, GP_CPL_OTHER, kind, unit);
    return GP_OK;
}

static void start_payload(gp__clog_reader *r, const char *md5, uint32_t unit)
{
    r->in_payload = true;
    snprintf(r->expect_md5, sizeof r->expect_md5, "%s", md5);
    md5_init(&r->md5);
    r->payload_lines = r->payload_bytes = 0;
    r->payload_start = r->payload_end = 0;
    r->record_line = r->lineno;
    r->payload_unit = unit;
    r->captured.len = 0;
    r->capture_overflow = false;
    r->code_in_call = false;
}

gp_status gp__clog_record(gp__clog_reader *r, const char *json, size_t len, uint64_t next_offset)
{
    (void)next_offset;
    json_error_t jerr;
    json_t *root = json_loadb(json, len, 0, &jerr);
    if (!json_is_object(root)) {
        L(r)->stats.bad_json++;
        L(r)->files[r->file].stats.bad_json++;
        gp_status st = root ? gp__clog_warn(r, "not a JSON object, line skipped")
                            : gp__clog_warn(r, "invalid JSON at column %d (%s), line skipped",
                                            jerr.column, jerr.text);
        json_decref(root);
        return st;
    }
    L(r)->stats.records++;
    L(r)->files[r->file].stats.records++;
    json_t *rank = json_object_get(root, "rank");
    if (r->rank < 0 && json_is_integer(rank) && json_integer_value(rank) >= 0 &&
        json_integer_value(rank) < INT32_MAX)
        r->rank = (int32_t)json_integer_value(rank);
    gp_status st = GP_OK;
    json_t *value;
    const char *kind = record_kind(root, &value);
    int k = kind ? GP_VALUE_OF(kinds, kind, K_UNKNOWN) : K_UNKNOWN;
    uint32_t unit = unit_of(r, root, k == K_DYNAMO_START, &st);
    json_t *hp = json_object_get(root, "has_payload");
    bool payload = json_is_string(hp);
    r->payload_index = UINT32_MAX;
    r->capture = GP__CAP_NONE;
    if (st == GP_OK && kind)
        st = count_kind(r, kind, k != K_UNKNOWN);
    if (k == K_UNKNOWN) {
        L(r)->stats.unknown_records++;
        L(r)->files[r->file].stats.unknown_records++;
    }
    if (st == GP_OK)
        st = take_kind(r, k, value, unit, payload, kind ? kind : "(none)");
    if (st == GP_OK && payload)
        start_payload(r, json_string_value(hp), unit);
    json_decref(root);
    return st;
}

gp_status gp__clog_payload_line(gp__clog_reader *r, const char *s, size_t len, uint64_t offset,
                                uint64_t end)
{
    if (r->payload_lines == 0)
        r->payload_start = offset;
    else {
        md5_update(&r->md5, 1, (const uint8_t *)"\n");
        r->payload_bytes++;
    }
    md5_update(&r->md5, len, (const uint8_t *)s);
    r->payload_bytes += len;
    r->payload_lines++;
    r->payload_end = end;
    gp_compile_log *log = L(r);
    if (r->payload_index != UINT32_MAX) {
        gp_compile_payload *p = &log->payloads[r->payload_index];
        if (p->kind == GP_CPL_OUTPUT_CODE) {
            const char *name;
            size_t n =
                gp__clog_code_line(s, len, &r->code_in_call, &p->n_extern, &p->n_fallback, &name);
            if (n > 0) {
                const char *k = gp__clog_intern(log, name, n);
                if (!k || gp__grow((void **)&log->kernel_names, &P(r)->cap_kernel_names,
                                   sizeof *log->kernel_names, log->n_kernel_names + 1) != GP_OK)
                    return GP_ENOMEM;
                log->kernel_names[log->n_kernel_names++] = k;
                p->n_kernels++;
            }
        } else if (p->kind != GP_CPL_ARTIFACT && p->kind != GP_CPL_GUARDS) {
            gp__clog_count_graph_line(s, len, &p->n_ops, &p->n_aten_ops);
        }
    }
    if (r->capture != GP__CAP_NONE && !r->capture_overflow) {
        if (r->captured.len + len + 1 > GP__CLOG_CAPTURE_MAX) {
            r->capture_overflow = true;
            return GP_OK;
        }
        if ((r->payload_lines > 1 && gp__buf_append(&r->captured, "\n", 1) != GP_OK) ||
            gp__buf_append(&r->captured, s, len) != GP_OK)
            return GP_ENOMEM;
    }
    return GP_OK;
}

static void hex16(const uint8_t *d, char *out)
{
    static const char hx[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        out[2 * i] = hx[d[i] >> 4];
        out[2 * i + 1] = hx[d[i] & 15];
    }
    out[32] = '\0';
}

gp_status gp__clog_end_payload(gp__clog_reader *r)
{
    if (!r->in_payload)
        return GP_OK;
    r->in_payload = false;
    uint8_t digest[MD5_DIGEST_SIZE];
    char hex[33];
    md5_digest(&r->md5, sizeof digest, digest);
    hex16(digest, hex);
    bool bad = strcasecmp(hex, r->expect_md5) != 0;
    gp_compile_log *log = L(r);
    const char *what = "record";
    if (r->payload_index != UINT32_MAX) {
        gp_compile_payload *p = &log->payloads[r->payload_index];
        p->offset = r->payload_start;
        p->raw_bytes = r->payload_end > r->payload_start ? r->payload_end - r->payload_start : 0;
        p->bytes = r->payload_bytes;
        p->n_lines = r->payload_lines;
        p->truncated = bad;
        what = p->name;
    }
    gp_status st = GP_OK;
    if (bad) {
        log->stats.truncated_payloads++;
        log->files[r->file].stats.truncated_payloads++;
        uint64_t cur = r->lineno;
        r->lineno = r->record_line;
        st = gp__clog_warn(r,
                           "the payload of %s (%llu lines) does not match its hash: incomplete "
                           "or altered",
                           what, (unsigned long long)r->payload_lines);
        r->lineno = cur;
    }
    if (st == GP_OK && !bad && !r->capture_overflow && gp__buf_terminate(&r->captured) == GP_OK) {
        const char *text = r->captured.data ? r->captured.data : "";
        if (r->capture == GP__CAP_CHROMIUM)
            st = take_chromium(r, text, r->captured.len);
        else if (r->capture == GP__CAP_RECOMPILE)
            st = take_recompile_reasons(r, text, r->captured.len);
        else if (r->capture == GP__CAP_BREAK)
            st = take_break(r, text, r->captured.len);
    }
    r->capture = GP__CAP_NONE;
    return st;
}

void gp__clog_reader_free(gp__clog_reader *r)
{
    free(r->strs);
    gp__imap_free(&r->unit_index);
    gp__buf_free(&r->captured);
    gp__buf_free(&r->last_config);
    free(r->open);
    memset(r, 0, sizeof *r);
}
