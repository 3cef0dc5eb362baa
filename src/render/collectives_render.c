/* The collectives table as text, JSON and CSV (collectives_render.h). Formats; computes nothing. */
#include <math.h>
#include <string.h>

#include "render/collectives_render.h"
#include "core/csv.h"

#define US(ns) ((double)(ns) / 1e3)
#define MS(ns) ((double)(ns) / 1e6)

static const char *doubt_name(gp_coll_doubt d)
{
    return d == GP_COLL_INCOMPLETE ? "incomplete" : d == GP_COLL_MISMATCH ? "mismatch" : "";
}

/* A number in width w with prec decimals, "-" for NaN. */
static void num(FILE *fp, double v, int w, int prec)
{
    if (isnan(v))
        fprintf(fp, "%*s", w, "-");
    else
        fprintf(fp, "%*.*f", w, prec, v);
}

static void heading(FILE *fp, const char *title)
{
    fprintf(fp, "\n%s\n", title);
    for (size_t i = strlen(title); i > 0; i--)
        fputc('=', fp);
    fputc('\n', fp);
}

static void text_summary(FILE *fp, const gp_collectives *c)
{
    fprintf(fp, "By (collective, size, dtype), trusted collectives, by total latency (us):\n");
    fprintf(fp, "%-16s %-9s %12s %6s %12s %10s %10s %10s %12s %10s %12s %10s\n", "collective",
            "dtype", "bytes", "count", "latency_tot", "lat_mean", "lat_min", "lat_max",
            "skew_start", "skew_end", "avg_wait", "busbw_GB/s");
    for (size_t i = 0; i < c->n_summary; i++) {
        const gp_coll_summary *s = &c->summary[i];
        fprintf(fp, "%-16s %-9s %12lld %6llu %12.3f %10.3f %10.3f %10.3f %12.3f %10.3f %12.3f ",
                s->name, s->dtype[0] ? s->dtype : "-", (long long)s->bytes,
                (unsigned long long)s->count, US(s->latency_total), US(s->latency_mean),
                US(s->latency_min), US(s->latency_max), US(s->start_skew_mean),
                US(s->end_skew_mean), US(s->avg_wait_mean));
        num(fp, s->bus_gbps_mean, 10, 2);
        fputc('\n', fp);
    }
}

static void text_ranks(FILE *fp, const gp_collectives *c)
{
    fprintf(fp, "\nWho waits for whom (trusted implicit-sync collectives: %llu):\n",
            (unsigned long long)c->implicit_sync);
    fprintf(fp, "%5s %6s %6s %6s %12s %12s %14s %12s %12s\n", "rank", "colls", "last", "first",
            "waited_ms", "caused_ms", "caused/step_ms", "comm_ms", "clock_off_us");
    for (size_t i = 0; i < c->n_ranks; i++) {
        const gp_coll_rank *r = &c->ranks[i];
        fprintf(fp, "%5d %6llu %6llu %6llu %12.3f %12.3f ", r->rank,
                (unsigned long long)r->collectives, (unsigned long long)r->arrived_last,
                (unsigned long long)r->arrived_first, MS(r->wait_total), MS(r->caused_total));
        num(fp, r->caused_per_step / 1e6, 14, 3);
        fprintf(fp, " %12.3f %12.1f\n", MS(r->comm_time), US(r->clock_offset));
    }
    if (c->straggler >= 0)
        for (size_t i = 0; i < c->n_ranks; i++)
            if (c->ranks[i].rank == c->straggler)
                fprintf(fp,
                        "Straggler: rank %d arrived last at %llu of %llu collectives; the others "
                        "waited %.3f ms for it.\n",
                        c->straggler, (unsigned long long)c->ranks[i].arrived_last,
                        (unsigned long long)c->implicit_sync, MS(c->ranks[i].caused_total));
}

/* The fields of a collective, in the order every format lists them: a JSON row's members, the
 * columns of collectives.csv, the columns of the text table, each a subsequence of this list. */
typedef enum {
    CF_TEXT, /* a name: JSON string, CSV quoted cell, text %*s */
    CF_WORD, /* a fixed word: JSON string, CSV plain cell, text %*s */
    CF_INT,  /* an integer: JSON integer, CSV and text %lld */
    CF_BOOL, /* JSON true/false, CSV 1/0 */
    CF_NS,   /* integer nanoseconds: JSON integer ns, CSV and text microseconds %.3f */
    CF_NS_D, /* fractional nanoseconds: JSON number ns, CSV and text microseconds %.3f */
    CF_RATE, /* GB/s: JSON number (null for NaN), CSV %.6g (empty), text %*.*f ("-") */
} coll_kind;

typedef struct coll_value {
    const char *s;
    int64_t i;
    double d;
} coll_value;

typedef struct coll_field {
    const char *json; /* its member in a JSON row; NULL: not in JSON */
    const char *csv;  /* its column of collectives.csv; NULL: not in CSV */
    const char *text; /* its column head in the text table; NULL: not in text */
    int width;        /* the text column's width (negative: left-aligned) */
    int prec;         /* CF_RATE: the text column's decimals */
    bool glued;       /* the text column follows the previous one without a space */
    coll_kind kind;
    coll_value (*get)(const gp_collective *k);
} coll_field;

static const char *node_span(const gp_collective *k, const char *unknown)
{
    return k->inter_node < 0 ? unknown : k->inter_node ? "inter" : "intra";
}

#define GETTER(nm, member)                                                                         \
    static coll_value get_##nm(const gp_collective *k)                                             \
    {                                                                                              \
        return (coll_value)member;                                                                 \
    }
GETTER(group, {.s = k->group})
GETTER(index, {.i = (int64_t)k->index})
GETTER(name, {.s = k->name})
GETTER(type, {.s = gp_coll_type_name(k->type)})
GETTER(implicit_sync, {.i = k->implicit_sync})
GETTER(sync_from_ends, {.i = k->sync_from_ends})
GETTER(kernel, {.s = k->kernel})
GETTER(dtype, {.s = k->dtype})
GETTER(in_nelems, {.i = k->in_nelems})
GETTER(out_nelems, {.i = k->out_nelems})
GETTER(group_size, {.i = k->group_size})
GETTER(bytes, {.i = k->bytes})
GETTER(members, {.i = (int64_t)k->n_members})
GETTER(latency, {.i = k->latency})
GETTER(start_skew, {.i = k->start_skew})
GETTER(end_skew, {.i = k->end_skew})
GETTER(avg_wait, {.d = k->avg_wait})
GETTER(first_rank, {.i = k->first_rank})
GETTER(last_rank, {.i = k->last_rank})
GETTER(algo_gbps, {.d = k->algo_gbps})
GETTER(bus_gbps, {.d = k->bus_gbps})
GETTER(peak_gbps, {.d = k->peak_gbps})
GETTER(node_span, {.s = node_span(k, "unknown")})
GETTER(node, {.s = node_span(k, "-")})
GETTER(doubt, {.s = doubt_name(k->doubt)})
#undef GETTER

/* clang-format off */
static const coll_field coll_fields[] = {
    /* json              csv               text          width prec glued kind */
    {"group",            "group",          "group",         -8, 0, false, CF_TEXT, get_group},
    {"index",            "index",          "index",          6, 0, false, CF_INT,  get_index},
    {"collective",       "collective",     "collective",   -14, 0, false, CF_TEXT, get_name},
    {"type",             "type",           NULL,             0, 0, false, CF_WORD, get_type},
    {"implicit_sync",    "implicit_sync",  NULL,             0, 0, false, CF_BOOL, get_implicit_sync},
    {"sync_from_ends",   NULL,             NULL,             0, 0, false, CF_BOOL, get_sync_from_ends},
    {"kernel",           NULL,             NULL,             0, 0, false, CF_TEXT, get_kernel},
    {"dtype",            "dtype",          NULL,             0, 0, false, CF_TEXT, get_dtype},
    {"in_nelems",        "in_nelems",      NULL,             0, 0, false, CF_INT,  get_in_nelems},
    {"out_nelems",       "out_nelems",     NULL,             0, 0, false, CF_INT,  get_out_nelems},
    {"group_size",       "group_size",     NULL,             0, 0, false, CF_INT,  get_group_size},
    {"bytes",            "bytes",          "bytes",         12, 0, false, CF_INT,  get_bytes},
    {NULL,               "ranks",          "ranks",          5, 0, false, CF_INT,  get_members},
    {"latency_ns",       "latency(us)",    "latency",       10, 0, false, CF_NS,   get_latency},
    {"start_skew_ns",    "start_skew(us)", "skew_start",    11, 0, false, CF_NS,   get_start_skew},
    {"end_skew_ns",      "end_skew(us)",   "skew_end",      10, 0, false, CF_NS,   get_end_skew},
    {"avg_wait_ns",      "avg_wait(us)",   "avg_wait",      11, 0, false, CF_NS_D, get_avg_wait},
    {"first_rank",       "first_rank",     "first",          5, 0, false, CF_INT,  get_first_rank},
    {"last_rank",        "last_rank",      "last",           5, 0, false, CF_INT,  get_last_rank},
    {"algo_gbps",        "algo_bw(GB/s)",  NULL,             0, 0, false, CF_RATE, get_algo_gbps},
    {"bus_gbps",         "bus_bw(GB/s)",   "busbw_GB/s",    10, 2, false, CF_RATE, get_bus_gbps},
    {"peak_gbps",        "peak(GB/s)",     "peak",           9, 0, true,  CF_RATE, get_peak_gbps},
    {"node_span",        "node_span",      NULL,             0, 0, false, CF_WORD, get_node_span},
    {NULL,               NULL,             "node",          -5, 0, false, CF_WORD, get_node},
    {"doubt",            "doubt",          "doubt",          0, 0, false, CF_WORD, get_doubt},
};
/* clang-format on */

/* One text cell of field f for k (or its column head when k is NULL), after its separator. */
static void text_cell(FILE *fp, const coll_field *f, const gp_collective *k, bool first)
{
    if (!first && !f->glued)
        fputc(' ', fp);
    if (!k) {
        fprintf(fp, "%*s", f->width, f->text);
        return;
    }
    coll_value v = f->get(k);
    switch (f->kind) {
    case CF_TEXT:
    case CF_WORD:
        fprintf(fp, "%*s", f->width, v.s);
        break;
    case CF_INT:
    case CF_BOOL:
        fprintf(fp, "%*lld", f->width, (long long)v.i);
        break;
    case CF_NS:
        fprintf(fp, "%*.3f", f->width, US(v.i));
        break;
    case CF_NS_D:
        fprintf(fp, "%*.3f", f->width, v.d / 1e3);
        break;
    case CF_RATE:
        num(fp, v.d, f->width, f->prec);
        break;
    }
}

/* The text table's head (k NULL) or the row of k. */
static void text_row(FILE *fp, const gp_collective *k)
{
    bool first = true;
    for (size_t i = 0; i < sizeof coll_fields / sizeof *coll_fields; i++)
        if (coll_fields[i].text) {
            text_cell(fp, &coll_fields[i], k, first);
            first = false;
        }
    fputc('\n', fp);
}

static void text_detail(FILE *fp, const gp_collectives *c, size_t limit)
{
    size_t n = limit && limit < c->n_colls ? limit : c->n_colls;
    fprintf(fp, "\nEach collective (%zu of %zu; us):\n", n, c->n_colls);
    text_row(fp, NULL);
    for (size_t i = 0; i < n; i++)
        text_row(fp, &c->colls[i]);
}

void gp__coll_render_text(FILE *fp, const gp_collectives *c, size_t limit)
{
    if (!c)
        return;
    heading(fp, c->by_order ? "COLLECTIVES ACROSS RANKS (matched by kernel order: the traces have "
                              "no process-group metadata)"
                            : "COLLECTIVES ACROSS RANKS (matched by process group and position)");
    if (c->note.msg[0])
        fprintf(fp, "note: %s\n", c->note.msg);
    if (c->n_colls == 0) {
        fprintf(fp, "No collective kernel.\n");
        return;
    }
    text_summary(fp, c);
    text_ranks(fp, c);
    text_detail(fp, c, limit);
}

static void json_summary(gp__jw *w, const gp_collectives *c)
{
    gp__jw_key(w, "summary");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < c->n_summary; i++) {
        const gp_coll_summary *s = &c->summary[i];
        gp__jw_obj_begin(w);
        gp__jw_kv_str(w, "collective", s->name);
        gp__jw_kv_str(w, "dtype", s->dtype);
        gp__jw_kv_int(w, "bytes", s->bytes);
        gp__jw_kv_int(w, "group_size", s->group_size);
        gp__jw_kv_int(w, "count", (int64_t)s->count);
        gp__jw_kv_int(w, "latency_total_ns", s->latency_total);
        gp__jw_kv_double(w, "latency_mean_ns", s->latency_mean);
        gp__jw_kv_int(w, "latency_min_ns", s->latency_min);
        gp__jw_kv_int(w, "latency_max_ns", s->latency_max);
        gp__jw_kv_double(w, "start_skew_mean_ns", s->start_skew_mean);
        gp__jw_kv_int(w, "start_skew_max_ns", s->start_skew_max);
        gp__jw_kv_double(w, "end_skew_mean_ns", s->end_skew_mean);
        gp__jw_kv_double(w, "avg_wait_mean_ns", s->avg_wait_mean);
        gp__jw_kv_double(w, "algo_gbps_mean", s->algo_gbps_mean);
        gp__jw_kv_double(w, "bus_gbps_mean", s->bus_gbps_mean);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
}

static void json_ranks(gp__jw *w, const gp_collectives *c)
{
    gp__jw_key(w, "ranks");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < c->n_ranks; i++) {
        const gp_coll_rank *r = &c->ranks[i];
        gp__jw_obj_begin(w);
        gp__jw_kv_int(w, "rank", r->rank);
        gp__jw_kv_int(w, "collectives", (int64_t)r->collectives);
        gp__jw_kv_int(w, "arrived_last", (int64_t)r->arrived_last);
        gp__jw_kv_int(w, "arrived_first", (int64_t)r->arrived_first);
        gp__jw_kv_int(w, "wait_total_ns", r->wait_total);
        gp__jw_kv_int(w, "caused_total_ns", r->caused_total);
        gp__jw_kv_int(w, "steps", r->steps);
        gp__jw_kv_double(w, "caused_per_step_ns", r->caused_per_step);
        gp__jw_kv_int(w, "comm_time_ns", r->comm_time);
        gp__jw_kv_int(w, "clock_offset_ns", r->clock_offset);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
}

static void json_one(gp__jw *w, const gp_collective *k)
{
    gp__jw_obj_begin(w);
    for (size_t i = 0; i < sizeof coll_fields / sizeof *coll_fields; i++) {
        const coll_field *f = &coll_fields[i];
        if (!f->json)
            continue;
        coll_value v = f->get(k);
        switch (f->kind) {
        case CF_TEXT:
        case CF_WORD:
            gp__jw_kv_str(w, f->json, v.s);
            break;
        case CF_INT:
        case CF_NS:
            gp__jw_kv_int(w, f->json, v.i);
            break;
        case CF_BOOL:
            gp__jw_kv_bool(w, f->json, v.i != 0);
            break;
        case CF_NS_D:
        case CF_RATE:
            gp__jw_kv_double(w, f->json, v.d);
            break;
        }
    }
    gp__jw_key(w, "members");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < k->n_members; i++) {
        const gp_coll_member *m = &k->members[i];
        gp__jw_obj_begin(w);
        gp__jw_kv_int(w, "rank", m->rank);
        gp__jw_kv_int(w, "start_ns", m->start);
        gp__jw_kv_int(w, "dur_ns", m->dur);
        gp__jw_kv_int(w, "wait_ns", m->wait);
        gp__jw_kv_int(w, "arrival", m->arrival);
        gp__jw_obj_end(w);
    }
    gp__jw_arr_end(w);
    gp__jw_obj_end(w);
}

void gp__coll_render_json(gp__jw *w, const gp_collectives *c)
{
    if (!c)
        return;
    gp__jw_key(w, "collectives");
    gp__jw_obj_begin(w);
    gp__jw_kv_str(w, "matched_by", c->by_order ? "kernel_order" : "process_group");
    gp__jw_kv_bool(w, "clocks_aligned", c->aligned);
    gp__jw_kv_int(w, "gpus_per_node", c->gpus_per_node);
    gp__jw_kv_int(w, "straggler", c->straggler);
    gp__jw_kv_int(w, "implicit_sync", (int64_t)c->implicit_sync);
    gp__jw_kv_str(w, "note", c->note.msg);
    json_summary(w, c);
    json_ranks(w, c);
    gp__jw_key(w, "detail");
    gp__jw_arr_begin(w);
    for (size_t i = 0; i < c->n_colls; i++)
        json_one(w, &c->colls[i]);
    gp__jw_arr_end(w);
    gp__jw_obj_end(w);
}

/* One CSV cell of field f for k (its column name when k is NULL). */
static void csv_cell(FILE *fp, const coll_field *f, const gp_collective *k)
{
    if (!k) {
        fputs(f->csv, fp);
        return;
    }
    coll_value v = f->get(k);
    switch (f->kind) {
    case CF_TEXT:
        gp__csv_field(fp, v.s);
        break;
    case CF_WORD:
        fputs(v.s, fp);
        break;
    case CF_INT:
    case CF_BOOL:
        fprintf(fp, "%lld", (long long)v.i);
        break;
    case CF_NS:
        fprintf(fp, "%.3f", US(v.i));
        break;
    case CF_NS_D:
        fprintf(fp, "%.3f", v.d / 1e3);
        break;
    case CF_RATE:
        if (!isnan(v.d))
            fprintf(fp, "%.6g", v.d);
        break;
    }
}

/* The CSV header (k NULL) or the row of k. */
static void csv_row(FILE *fp, const gp_collective *k)
{
    const char *sep = "";
    for (size_t i = 0; i < sizeof coll_fields / sizeof *coll_fields; i++)
        if (coll_fields[i].csv) {
            fputs(sep, fp);
            csv_cell(fp, &coll_fields[i], k);
            sep = ",";
        }
    fputc('\n', fp);
}

void gp__coll_render_csv(FILE *fp, const gp_collectives *c)
{
    csv_row(fp, NULL);
    for (size_t i = 0; c && i < c->n_colls; i++)
        csv_row(fp, &c->colls[i]);
}
