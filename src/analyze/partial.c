/* Partial results (gpuprof/partial.h): build one from some ranks of a job, write it, parse it,
 * merge several, and run the job-level analyses on the ranks they hold. The rank records' byte
 * format is partial_codec.c's; the file around them (docs/jobs.md, "Partial results"):
 *
 *   magic "GPUPROF-PARTIAL\n" (16 bytes) | u32 version | u64 H | H bytes: the job header
 *   (world size, the job's fingerprint, analysis options) | u64 N | N times: i32 rank, i64 the
 *   trace's start (ns; INT64_MIN: no event), u64 L (the record's length), u64 Z, Z bytes: the
 *   rank record compressed with zlib (RFC 1950)
 *
 * Two partials belong to one job when their job headers are the same bytes and their ranks'
 * traces start within a day of each other (docs/jobs.md, "Which job a partial is of"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "gpuprof/ops.h"
#include "gpuprof/partial.h"

#include "analyze/analyze_internal.h"
#include "analyze/partial_internal.h"
#include "core/msort.h"
#include "core/util.h"

static const char magic[16] = "GPUPROF-PARTIAL\n";

typedef struct prank {
    int32_t rank;
    int64_t start; /* the trace's first event (ns), INT64_MIN when it has none */
    char *name;    /* the partial (file) it came from */
    char *source;  /* the trace it was analysed from */
    unsigned char *rec;
    size_t len;
} prank;

struct gp_partial {
    unsigned char *hdr; /* the job header */
    size_t hdr_len;
    int32_t world_size;
    uint64_t job; /* the job's fingerprint (job_fingerprint) */
    prank *ranks; /* ascending */
    size_t n_ranks;
};

/* The job header: world size, the job's fingerprint and every option that changes a figure.
 * Rules and data-loading patterns travel as their number and a hash (FNV-1a) of their text. */
static void ser_header(gp__ser *c, int32_t *world, uint64_t *job, gp_analyze_opts *o,
                       uint64_t *rules_hash)
{
    gp__ser_i32(c, world);
    gp__ser_u64(c, job);
    uint32_t steps = (uint32_t)o->steps;
    gp__ser_u32(c, &steps);
    if (c->rd && steps > GP_STEPS_RANGE)
        c->bad = true;
    o->steps = (gp_steps_mode)steps;
    gp__ser_i64(c, &o->step_first);
    gp__ser_i64(c, &o->step_last);
    gp__ser_bool(c, &o->hta);
    gp__ser_size(c, &o->n_rules);
    gp__ser_i64(c, &o->kernel_wait_ns);
    gp__ser_size(c, &o->top_kernels);
    gp__ser_f64(c, &o->duration_ratio);
    gp__ser_i64(c, &o->launch_outlier_ns);
    gp__ser_i64(c, &o->delay_outlier_ns);
    gp__ser_size(c, &o->series_points);
    gp__ser_size(c, &o->max_outliers);
    gp__ser_f64(c, &o->small_kernel_ns);
    gp__ser_bool(c, &o->critical_path);
    gp__ser_bool(c, &o->cp_hta);
    gp__ser_str(c, &o->cp_annotation, true);
    gp__ser_i64(c, &o->cp_instance);
    gp__ser_size(c, &o->n_data_load);
    gp__ser_i32(c, &o->gpus_per_node);
    gp__ser_u64(c, rules_hash);
}

static uint64_t fnv(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static uint64_t rules_hash_of(const gp_analyze_opts *o)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < o->n_rules; i++) {
        char t = (char)('0' + (int)o->rules[i].type);
        h = fnv(h, &t, 1);
        h = fnv(h, o->rules[i].regex, strlen(o->rules[i].regex) + 1);
    }
    for (size_t i = 0; i < o->n_data_load; i++)
        h = fnv(h, o->data_load[i], strlen(o->data_load[i]) + 1);
    return h;
}

/* What a trace says of its job, the same on every rank of one job: distributedInfo's backend,
 * NCCL version, process group count and world size (FNV-1a of their text). PyTorch writes no job
 * id; two runs of one configuration share this, and are told apart by time (merge_ranks). */
static uint64_t job_fingerprint(const gp_trace *t)
{
    char buf[96];
    uint64_t h = 14695981039346656037ull;
    const char *backend = t->dist.backend ? gp_trace_str(t, t->dist.backend) : "";
    const char *nccl = t->dist.nccl_version ? gp_trace_str(t, t->dist.nccl_version) : "";
    h = fnv(h, backend, strlen(backend) + 1);
    h = fnv(h, nccl, strlen(nccl) + 1);
    int n = snprintf(buf, sizeof buf, "%d/%d", (int)t->dist.pg_count, (int)t->dist.world_size);
    return fnv(h, buf, (size_t)n);
}

/* The fingerprint of the job's traces into *out: GP_EINVAL naming two that differ. */
static gp_status job_of(const gp_job *job, uint64_t *out, gp_error *err)
{
    *out = job->n_ranks ? job_fingerprint(job->ranks[0]) : 0;
    for (size_t i = 1; i < job->n_ranks; i++)
        if (job_fingerprint(job->ranks[i]) != *out)
            return gp_error_set(err, GP_EINVAL,
                                "%s: of another job than %s (distributedInfo's backend, NCCL "
                                "version or process group count differ)",
                                gp_trace_str(job->ranks[i], job->ranks[i]->source),
                                gp_trace_str(job->ranks[0], job->ranks[0]->source));
    return GP_OK;
}

void gp_partial_free(gp_partial *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_ranks; i++) {
        free(p->ranks[i].name);
        free(p->ranks[i].source);
        free(p->ranks[i].rec);
    }
    free(p->ranks);
    free(p->hdr);
    free(p);
}

size_t gp_partial_n_ranks(const gp_partial *p)
{
    return p->n_ranks;
}

int32_t gp_partial_rank(const gp_partial *p, size_t i)
{
    return i < p->n_ranks ? p->ranks[i].rank : -1;
}

int32_t gp_partial_world_size(const gp_partial *p)
{
    return p->world_size;
}

/* The rank record of a->ranks[i] (its findings a->findings[first..]) and trace t, in *pr. */
static gp_status encode_rank(gp_analysis *a, size_t i, size_t first, const gp_trace *t, prank *pr)
{
    gp__ser c = {.rd = false};
    gp__coll_record rec;
    gp_status st = gp__coll_record_of(t, &rec);
    if (st != GP_OK)
        return st;
    gp__ser_rank(&c, &a->ranks[i]);
    size_t n = a->n_findings - first;
    gp__ser_size(&c, &n);
    for (size_t k = first; k < a->n_findings; k++)
        gp__ser_finding(&c, &a->findings[k]);
    gp__ser_coll_record(&c, &rec);
    gp__coll_record_free(&rec);
    pr->rank = a->ranks[i].rank;
    gp_ns start = 0, end = 0;
    gp_trace_span(t, &start, &end);
    pr->start = start == 0 && end == 0 ? INT64_MIN : start;
    pr->rec = c.buf;
    pr->len = c.len;
    pr->name = strdup(gp_trace_str(t, t->source));
    pr->source = strdup(gp_trace_str(t, t->source));
    return c.bad || !pr->name || !pr->source ? GP_ENOMEM : GP_OK;
}

/* The job's world size: the caller's, else the traces' (which must agree), else their count. */
static gp_status world_of(const gp_job *job, int32_t given, int32_t *out, gp_error *err)
{
    *out = given > 0 ? given : (int32_t)job->n_ranks;
    for (size_t i = 0; i < job->n_ranks; i++) {
        const gp_trace *t = job->ranks[i];
        if (!t->dist.present || t->dist.rank < 0 || t->rank_from_file_order)
            return gp_error_set(err, GP_EINVAL,
                                "%s: no distributedInfo.rank (or another file claims it): a "
                                "partial result needs the rank its trace holds",
                                gp_trace_str(t, t->source));
        int32_t w = t->dist.world_size;
        if (given <= 0 && w > 0 && i == 0)
            *out = w;
        else if (given <= 0 && w > 0 && w != *out)
            return gp_error_set(err, GP_EINVAL, "%s: world size %d, another trace says %d",
                                gp_trace_str(t, t->source), (int)w, (int)*out);
    }
    return GP_OK;
}

static int cmp_prank(const void *pa, const void *pb)
{
    const prank *a = pa, *b = pb;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

gp_status gp_partial_of_job(const gp_job *job, const gp_analyze_opts *opts, int32_t world_size,
                            gp_partial **out, gp_error *err)
{
    gp_analysis *a = calloc(1, sizeof *a);
    gp_partial *p = calloc(1, sizeof *p);
    if (!a || !p || !(p->ranks = calloc(job->n_ranks ? job->n_ranks : 1, sizeof *p->ranks))) {
        free(a);
        gp_partial_free(p);
        return gp_error_set(err, GP_ENOMEM, "out of memory");
    }
    if (opts)
        a->opts = *opts;
    else
        gp_analyze_opts_init(&a->opts);
    gp_status st = world_of(job, world_size, &p->world_size, err);
    gp__ranks in = gp__ranks_of_job(job);
    gp__rank_pre *pre = gp__rank_pre_new(job->n_ranks, true);
    if (st == GP_OK && !pre)
        st = GP_ENOMEM;
    if (st == GP_OK)
        st = job_of(job, &p->job, err);
    if (st == GP_OK) /* the findings' ops and sync sites beside the tables (analyze.c) */
        st = gp__analyze_ranks(&in, p->world_size > 1, a, pre, err);
    size_t cap = 0;
    for (size_t i = 0; i < a->n_ranks && st == GP_OK; i++) {
        size_t first = a->n_findings;
        st = gp__advise_rank(a, &cap, i, job->ranks[i], NULL, job->n_ranks, &pre[i]);
        if (st == GP_OK)
            st = encode_rank(a, i, first, job->ranks[i], &p->ranks[p->n_ranks++]);
    }
    gp__rank_pre_free(pre, job->n_ranks);
    if (st == GP_OK) {
        gp__ser c = {.rd = false};
        uint64_t h = rules_hash_of(&a->opts);
        ser_header(&c, &p->world_size, &p->job, &a->opts, &h);
        p->hdr = c.buf;
        p->hdr_len = c.len;
        st = c.bad ? GP_ENOMEM : GP_OK;
    }
    gp_analysis_free(a);
    if (st == GP_OK)
        gp__msort(p->ranks, p->n_ranks, sizeof *p->ranks, cmp_prank);
    if (st != GP_OK) {
        gp_partial_free(p);
        if (st == GP_ENOMEM)
            gp_error_set(err, st, "out of memory while analysing");
        return st;
    }
    *out = p;
    return GP_OK;
}

gp_status gp_partial_serialize(const gp_partial *p, unsigned char **buf, size_t *len, gp_error *err)
{
    gp__ser c = {.rd = false};
    uint32_t version = GP_PARTIAL_VERSION;
    gp__ser_raw(&c, (void *)magic, sizeof magic);
    gp__ser_u32(&c, &version);
    size_t n = p->hdr_len;
    gp__ser_size(&c, &n);
    gp__ser_raw(&c, p->hdr, p->hdr_len);
    n = p->n_ranks;
    gp__ser_size(&c, &n);
    unsigned char *z = NULL;
    for (size_t i = 0; i < p->n_ranks && !c.bad; i++) {
        prank *r = &p->ranks[i];
        uLongf zlen = compressBound((uLong)r->len);
        if (!(z = malloc(zlen)) || compress2(z, &zlen, r->rec, (uLong)r->len, 1) != Z_OK) {
            c.bad = true;
            break;
        }
        size_t zn = zlen;
        gp__ser_i32(&c, &r->rank);
        gp__ser_i64(&c, &r->start);
        gp__ser_size(&c, &r->len);
        gp__ser_size(&c, &zn);
        gp__ser_raw(&c, z, zn);
        free(z);
        z = NULL;
    }
    free(z);
    if (c.bad) {
        free(c.buf);
        return gp_error_set(err, GP_ENOMEM, "out of memory");
    }
    *buf = c.buf;
    *len = c.len;
    return GP_OK;
}

/* Decodes rank record pr into a->ranks[a->n_ranks] (and its findings into a->findings, capacity
 * *cap) and *rec. GP_EINVAL (corrupt), GP_ENOMEM. */
static gp_status decode_rank(const prank *pr, gp_analysis *a, size_t *cap, gp__coll_record *rec)
{
    gp__ser c = {.rd = true, .p = pr->rec, .end = pr->len};
    gp_rank_analysis *r = &a->ranks[a->n_ranks++];
    gp__ser_rank(&c, r);
    size_t n = 0;
    gp__ser_size(&c, &n);
    if (!c.bad && n > pr->len / 16)
        c.bad = true;
    for (size_t k = 0; k < n && !c.bad; k++) {
        gp_finding *f = GP_PUSH(a->findings, a->n_findings, *cap);
        if (!f)
            return GP_ENOMEM;
        gp__ser_finding(&c, f);
    }
    gp__ser_coll_record(&c, rec);
    if (c.nomem)
        return GP_ENOMEM;
    if (c.bad || c.at != c.end || r->rank != pr->rank || rec->rank != pr->rank)
        return GP_EINVAL;
    return GP_OK;
}

/* The job header's options into *o (strings point into p). */
static bool header_opts(const gp_partial *p, gp_analyze_opts *o)
{
    gp__ser c = {.rd = true, .p = p->hdr, .end = p->hdr_len};
    int32_t world = 0;
    uint64_t h = 0, job = 0;
    gp_analyze_opts_init(o);
    ser_header(&c, &world, &job, o, &h);
    o->rules = NULL; /* only their number is rendered */
    o->data_load = NULL;
    o->n_data_load = 0;
    return !c.bad && c.at == c.end && world == p->world_size && job == p->job;
}

/* The job-level analyses on a whose ranks (and their findings) are decoded. */
static gp_status finish(gp_analysis *a, const gp__coll_record *recs, size_t *cap, gp_error *err)
{
    gp_status st = gp__analyze_job_types(a);
    if (st == GP_OK && a->n_ranks > 1) {
        gp_coll_opts co;
        gp_coll_opts_init(&co);
        co.gpus_per_node = a->opts.gpus_per_node;
        st = gp__collectives_of_records(recs, a->n_ranks, &co, &a->collectives, err);
    }
    if (st == GP_OK)
        st = gp__advise_job(a, cap);
    return st;
}

/* The analysis of p's ranks: every record decoded (checked in full), then, job_level, the
 * job-level analyses. */
static gp_status analysis_of(const gp_partial *p, const char *name, bool job_level,
                             gp_analysis **out, gp_error *err)
{
    gp_analysis *a = calloc(1, sizeof *a);
    gp__coll_record *recs = calloc(p->n_ranks ? p->n_ranks : 1, sizeof *recs);
    gp_status st = a && recs ? GP_OK : GP_ENOMEM;
    if (st == GP_OK && !(a->ranks = calloc(p->n_ranks ? p->n_ranks : 1, sizeof *a->ranks)))
        st = GP_ENOMEM;
    if (st == GP_OK && !header_opts(p, &a->opts))
        st = gp_error_set(err, GP_EINVAL, "%s: the job header is corrupt", name);
    size_t cap = 0;
    for (size_t i = 0; i < p->n_ranks && st == GP_OK; i++) {
        st = decode_rank(&p->ranks[i], a, &cap, &recs[i]);
        if (st == GP_EINVAL)
            gp_error_set(err, st, "%s: the record of rank %d is corrupt", p->ranks[i].name,
                         (int)p->ranks[i].rank);
    }
    if (st == GP_OK && job_level)
        st = finish(a, recs, &cap, err);
    for (size_t i = 0; recs && i < p->n_ranks; i++)
        gp__coll_record_free(&recs[i]);
    free(recs);
    if (st != GP_OK) {
        gp_analysis_free(a);
        if (st == GP_ENOMEM)
            gp_error_set(err, st, "out of memory while merging");
        return st;
    }
    *out = a;
    return GP_OK;
}

gp_status gp_partial_analysis(const gp_partial *p, gp_analysis **out, gp_error *err)
{
    return analysis_of(p, p->n_ranks ? p->ranks[0].name : "partial", true, out, err);
}

static const unsigned char *p_at(const gp__ser *c)
{
    return c->p + c->at;
}

/* Reads the file layout of buf into p (records inflated). */
static gp_status parse_layout(const unsigned char *buf, size_t len, const char *name, gp_partial *p,
                              gp_error *err)
{
    gp__ser c = {.rd = true, .p = buf, .end = len};
    char m[sizeof magic];
    uint32_t version = 0;
    gp__ser_raw(&c, m, sizeof m);
    if (c.bad || memcmp(m, magic, sizeof magic) != 0)
        return gp_error_set(err, GP_EINVAL, "%s: not a gpuprof partial result (no magic)", name);
    gp__ser_u32(&c, &version);
    if (!c.bad && version != GP_PARTIAL_VERSION)
        return gp_error_set(err, GP_EINVAL,
                            "%s: partial result of format version %u; this gpuprof reads "
                            "version %d (write it again with this gpuprof's analyze --partial)",
                            name, (unsigned)version, GP_PARTIAL_VERSION);
    gp__ser_size(&c, &p->hdr_len);
    if (c.bad || p->hdr_len > len - c.at || !(p->hdr = malloc(p->hdr_len ? p->hdr_len : 1)))
        return gp_error_set(err, GP_EINVAL, "%s: truncated partial result", name);
    gp__ser_raw(&c, p->hdr, p->hdr_len);
    gp__ser hc = {.rd = true, .p = p->hdr, .end = p->hdr_len};
    gp__ser_i32(&hc, &p->world_size);
    gp__ser_u64(&hc, &p->job);
    if (c.bad || hc.bad)
        return gp_error_set(err, GP_EINVAL, "%s: truncated partial result", name);
    size_t n = 0;
    gp__ser_size(&c, &n);
    if (c.bad || n == 0 || n > (len - c.at) / 28)
        return gp_error_set(err, GP_EINVAL, "%s: %s", name,
                            c.bad ? "truncated partial result" : "holds no rank");
    if (!(p->ranks = calloc(n, sizeof *p->ranks)))
        return gp_error_set(err, GP_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        prank *r = &p->ranks[p->n_ranks];
        size_t zn = 0;
        gp__ser_i32(&c, &r->rank);
        gp__ser_i64(&c, &r->start);
        gp__ser_size(&c, &r->len);
        gp__ser_size(&c, &zn);
        /* zlib inflates at most about 1032:1; a larger claim is not a record */
        if (c.bad || zn > len - c.at || r->len / 1100 > zn || r->len > ((size_t)1 << 32))
            return gp_error_set(err, GP_EINVAL, "%s: truncated partial result", name);
        if (!(r->rec = malloc(r->len ? r->len : 1)) || !(r->name = strdup(name))) {
            free(r->rec);
            return gp_error_set(err, GP_ENOMEM, "out of memory");
        }
        p->n_ranks++;
        uLongf got = (uLongf)r->len;
        gp__ser rc = {.rd = true, .p = r->rec, .end = r->len};
        int32_t rank = 0;
        const char *source = NULL;
        if (uncompress(r->rec, &got, p_at(&c), (uLong)zn) == Z_OK && got == r->len) {
            gp__ser_i32(&rc, &rank); /* a record starts with the rank and its trace */
            gp__ser_str(&rc, &source, false);
        }
        if (!source || rc.bad)
            return gp_error_set(err, GP_EINVAL, "%s: the record of rank %d is corrupt", name,
                                (int)r->rank);
        if (!(r->source = strdup(source)))
            return gp_error_set(err, GP_ENOMEM, "out of memory");
        c.at += zn;
        if (i > 0 && r->rank <= p->ranks[i - 1].rank)
            return gp_error_set(err, GP_EINVAL, "%s: ranks out of order or repeated (rank %d)",
                                name, (int)r->rank);
    }
    if (c.at != c.end)
        return gp_error_set(err, GP_EINVAL, "%s: bytes after the last rank record", name);
    return GP_OK;
}

gp_status gp_partial_parse(const void *buf, size_t len, const char *name, gp_partial **out,
                           gp_error *err)
{
    gp_partial *p = calloc(1, sizeof *p);
    if (!p)
        return gp_error_set(err, GP_ENOMEM, "out of memory");
    gp_status st = parse_layout(buf, len, name, p, err);
    gp_analysis *a = NULL;
    if (st == GP_OK) /* every record decoded: checked in full */
        st = analysis_of(p, name, false, &a, err);
    gp_analysis_free(a);
    if (st != GP_OK) {
        gp_partial_free(p);
        return st;
    }
    *out = p;
    return GP_OK;
}

/* Copies rank record r into *d. */
static bool copy_rank(const prank *r, prank *d)
{
    d->rank = r->rank;
    d->start = r->start;
    d->len = r->len;
    d->name = strdup(r->name);
    d->source = strdup(r->source);
    d->rec = malloc(r->len ? r->len : 1);
    if (d->rec)
        memcpy(d->rec, r->rec, r->len);
    return d->name && d->source && d->rec;
}

/* Why parts[i] is not of parts[0]'s job (GP_EINVAL), or GP_OK. */
static gp_status same_job(const gp_partial *a, const gp_partial *b, gp_error *err)
{
    const char *na = a->n_ranks ? a->ranks[0].name : "partial";
    const char *nb = b->n_ranks ? b->ranks[0].name : "partial";
    if (a->world_size != b->world_size)
        return gp_error_set(err, GP_EINVAL, "%s: of another job (world size %d; %s: %d)", nb,
                            (int)b->world_size, na, (int)a->world_size);
    if (a->job != b->job)
        return gp_error_set(err, GP_EINVAL,
                            "%s: of another job than %s (distributedInfo's backend, NCCL version "
                            "or process group count differ)",
                            nb, na);
    if (a->hdr_len != b->hdr_len || memcmp(a->hdr, b->hdr, a->hdr_len) != 0)
        return gp_error_set(err, GP_EINVAL,
                            "%s: analysed with other options than %s (steps, classification, "
                            "rules, critical path or gpus per node): not parts of one analysis",
                            nb, na);
    return GP_OK;
}

/* The ranks of one job start profiling together (within seconds; clocks of different hosts may
 * disagree by minutes): two runs of one configuration, same fingerprint, are told apart by a
 * start more than this apart. */
#define JOB_START_WINDOW_NS ((int64_t)24 * 3600 * 1000000000)

/* GP_EINVAL naming the earliest and the latest rank of p when their traces start more than
 * JOB_START_WINDOW_NS apart. */
static gp_status same_time(const gp_partial *p, gp_error *err)
{
    const prank *lo = NULL, *hi = NULL;
    for (size_t i = 0; i < p->n_ranks; i++) {
        const prank *r = &p->ranks[i];
        if (r->start == INT64_MIN)
            continue;
        if (!lo || r->start < lo->start)
            lo = r;
        if (!hi || r->start > hi->start)
            hi = r;
    }
    if (!lo || (double)hi->start - (double)lo->start <= (double)JOB_START_WINDOW_NS)
        return GP_OK;
    return gp_error_set(err, GP_EINVAL,
                        "%s: rank %d (trace %s) starts %.1f h after rank %d of %s (trace %s): "
                        "not one job (the ranks of a job start within a day of each other)",
                        hi->name, (int)hi->rank, hi->source,
                        ((double)hi->start - (double)lo->start) / 3.6e12, (int)lo->rank, lo->name,
                        lo->source);
}

gp_status gp_partial_merge(const gp_partial *const *parts, size_t n, gp_partial **out,
                           gp_error *err)
{
    if (n == 0)
        return gp_error_set(err, GP_EINVAL, "no partial result to merge");
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        gp_status st = same_job(parts[0], parts[i], err);
        if (st != GP_OK)
            return st;
        total += parts[i]->n_ranks;
    }
    gp_partial *p = calloc(1, sizeof *p);
    if (!p || !(p->ranks = calloc(total ? total : 1, sizeof *p->ranks)) ||
        !(p->hdr = malloc(parts[0]->hdr_len ? parts[0]->hdr_len : 1))) {
        gp_partial_free(p);
        return gp_error_set(err, GP_ENOMEM, "out of memory");
    }
    memcpy(p->hdr, parts[0]->hdr, parts[0]->hdr_len);
    p->hdr_len = parts[0]->hdr_len;
    p->world_size = parts[0]->world_size;
    p->job = parts[0]->job;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < parts[i]->n_ranks; k++)
            if (!copy_rank(&parts[i]->ranks[k], &p->ranks[p->n_ranks++])) {
                gp_partial_free(p);
                return gp_error_set(err, GP_ENOMEM, "out of memory");
            }
    gp__msort(p->ranks, p->n_ranks, sizeof *p->ranks, cmp_prank);
    for (size_t i = 1; i < p->n_ranks; i++)
        if (p->ranks[i].rank == p->ranks[i - 1].rank) {
            gp_error_set(err, GP_EINVAL, "%s: holds rank %d, which %s holds too (traces %s, %s)",
                         p->ranks[i].name, (int)p->ranks[i].rank, p->ranks[i - 1].name,
                         p->ranks[i].source, p->ranks[i - 1].source);
            gp_partial_free(p);
            return GP_EINVAL;
        }
    gp_status st = same_time(p, err);
    if (st != GP_OK) {
        gp_partial_free(p);
        return st;
    }
    *out = p;
    return GP_OK;
}
