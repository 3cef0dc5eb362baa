/* Collectives across ranks: which kernels are collectives, their classes, and the matching of the
 * same collective on every rank by process group and position (docs/analyses.md, "Collectives").
 * The figures are computed by collectives_figures.c. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze_internal.h"
#include "analyze/collectives_internal.h"
#include "core/msort.h"
#include "core/util.h"

static const char *const type_names[GP_COLL_TYPE_COUNT] = {
    "unknown",   "allreduce", "reducescatter", "allgather", "alltoall", "alltoallv",
    "broadcast", "reduce",    "sendrecv",      "barrier",   "other"};

const char *gp_coll_type_name(gp_coll_type t)
{
    return (unsigned)t < GP_COLL_TYPE_COUNT ? type_names[t] : "unknown";
}

bool gp_coll_type_implicit_sync(gp_coll_type t)
{
    return t == GP_COLL_ALLREDUCE || t == GP_COLL_REDUCESCATTER || t == GP_COLL_ALLGATHER ||
           t == GP_COLL_ALLTOALL;
}

double gp_coll_bus_factor(gp_coll_type t, int32_t n)
{
    if (n < 1)
        return NAN;
    switch (t) {
    case GP_COLL_ALLREDUCE:
        return 2.0 * (n - 1) / n;
    case GP_COLL_REDUCESCATTER:
    case GP_COLL_ALLGATHER:
    case GP_COLL_ALLTOALL:
    case GP_COLL_ALLTOALLV:
        return (double)(n - 1) / n;
    case GP_COLL_BROADCAST:
    case GP_COLL_REDUCE:
    case GP_COLL_SENDRECV:
        return 1.0;
    default:
        return NAN;
    }
}

int32_t gp_coll_dtype_bytes(const char *dtype)
{
    static const gp__named t[] = {
        {"Float", 4},          {"Int", 4},          {"Long", 8},
        {"BFloat16", 2},       {"Bool", 1},         {"Byte", 1},
        {"Double", 8},         {"Half", 2},         {"Short", 2},
        {"Char", 1},           {"ComplexFloat", 8}, {"ComplexDouble", 16},
        {"Float8_e4m3fn", 1},  {"Float8_e5m2", 1},  {"Float8_e4m3fnuz", 1},
        {"Float8_e5m2fnuz", 1}};
    return GP_VALUE_OF(t, dtype, -1);
}

/* The class of a "Collective name" (TraceLens's spellings, collectives.md §5, plus the names of
 * the other classes), GP_COLL_OTHER for any other name. */
static gp_coll_type type_of_name(const char *s)
{
    static const gp__named t[] = {{"allreduce", GP_COLL_ALLREDUCE},
                                  {"allreduce_coalesced", GP_COLL_ALLREDUCE},
                                  {"reducescatter", GP_COLL_REDUCESCATTER},
                                  {"_reduce_scatter_base", GP_COLL_REDUCESCATTER},
                                  {"reduce_scatter_tensor_coalesced", GP_COLL_REDUCESCATTER},
                                  {"allgather", GP_COLL_ALLGATHER},
                                  {"all_gather", GP_COLL_ALLGATHER},
                                  {"_allgather_base", GP_COLL_ALLGATHER},
                                  {"all_gather_into_tensor_coalesced", GP_COLL_ALLGATHER},
                                  {"allgather_into_tensor_coalesced", GP_COLL_ALLGATHER},
                                  {"all_to_all", GP_COLL_ALLTOALL},
                                  {"all_to_allv", GP_COLL_ALLTOALLV},
                                  {"broadcast", GP_COLL_BROADCAST},
                                  {"reduce", GP_COLL_REDUCE},
                                  {"send", GP_COLL_SENDRECV},
                                  {"recv", GP_COLL_SENDRECV},
                                  {"barrier", GP_COLL_BARRIER}};
    return (gp_coll_type)GP_VALUE_OF(t, s, GP_COLL_OTHER);
}

/* True when needle occurs in s, ignoring ASCII case. */
static bool has_nocase(const char *s, const char *needle)
{
    size_t n = strlen(needle);
    for (; *s; s++) {
        size_t i = 0;
        while (i < n && s[i] && tolower((unsigned char)s[i]) == needle[i])
            i++;
        if (i == n)
            return true;
    }
    return false;
}

/* The class of a collective kernel without a "Collective name": from its NCCL/RCCL kernel name
 * (ncclKernel_AllReduce_RING_LL_Sum_float, ncclDevKernel_SendRecv, ...). */
static gp_coll_type type_of_kernel(const char *k)
{
    static const struct {
        const char *part;
        gp_coll_type type;
    } t[] = {{"allreduce", GP_COLL_ALLREDUCE},
             {"cross_device_reduce", GP_COLL_ALLREDUCE},
             {"reducescatter", GP_COLL_REDUCESCATTER},
             {"allgather", GP_COLL_ALLGATHER},
             {"alltoall", GP_COLL_ALLTOALL},
             {"sendrecv", GP_COLL_SENDRECV},
             {"broadcast", GP_COLL_BROADCAST},
             {"_reduce_", GP_COLL_REDUCE},
             {"_send", GP_COLL_SENDRECV},
             {"_recv", GP_COLL_SENDRECV}};
    for (size_t i = 0; i < GP_ARRAY_LEN(t); i++)
        if (has_nocase(k, t[i].part))
            return t[i].type;
    return GP_COLL_UNKNOWN;
}

/* One collective kernel of a rank while matching: its record and its group. */
typedef struct ckern {
    const gp__coll_kern *c;
    uint32_t group; /* index into the group names */
} ckern;

/* Sorts one rank's kernels by group, then GPU start, then track and position (file order). */
static int cmp_ckern(const void *pa, const void *pb)
{
    const ckern *a = pa, *b = pb;
    if (a->group != b->group)
        return a->group < b->group ? -1 : 1;
    if (a->c->ts != b->c->ts)
        return a->c->ts < b->c->ts ? -1 : 1;
    if (a->c->track != b->c->track)
        return a->c->track < b->c->track ? -1 : 1;
    return a->c->pos < b->c->pos ? -1 : a->c->pos > b->c->pos;
}

/* True for a collective kernel (see collectives.h). */
static bool is_collective(const gp_trace *t, const gp_event *ev, const char **kernel)
{
    if (ev->kind != GP_EV_KERNEL || (!ev->correlation && !ev->external_id))
        return false;
    *kernel = gp_trace_str(t, ev->name);
    return gp_event_gpu_ext(t, ev)->collective || has_nocase(*kernel, "nccl") ||
           has_nocase(*kernel, "rccl") || strstr(*kernel, "cross_device_reduce") != NULL;
}

/* The matching state: included ranks, their kernels, the group names. */
typedef struct matcher {
    gp__coll_rank_in *in;
    size_t n_in;
    ckern **k; /* per included rank */
    size_t *n_k;
    struct mgroup {
        const char *name;
        bool p2p; /* the group's point-to-point kernels, matched apart from its collectives */
    } * groups;
    size_t n_groups, cap_groups;
    bool any_pg;
} matcher;

/* The index of group (s, p2p) (added when new), or SIZE_MAX when out of memory. */
static size_t group_index(matcher *m, const char *s, bool p2p)
{
    for (size_t i = 0; i < m->n_groups; i++)
        if (m->groups[i].p2p == p2p && strcmp(m->groups[i].name, s) == 0)
            return i;
    struct mgroup *g = GP_PUSH(m->groups, m->n_groups, m->cap_groups);
    if (!g)
        return SIZE_MAX;
    *g = (struct mgroup){s, p2p};
    return m->n_groups - 1;
}

/* Says when a rank matched by kernel order runs its collectives on several streams. */
static void note_streams(const matcher *m, gp_collectives *c)
{
    for (size_t i = 0; i < m->n_in && !m->any_pg; i++)
        for (size_t j = 1; j < m->n_k[i]; j++)
            if (m->k[i][j].c->track != m->k[i][0].c->track) {
                gp_error_note(&c->note,
                              "Rank %d runs collectives on several streams: their order by GPU "
                              "start may differ between ranks, and so the match.",
                              (int)m->in[i].rank);
                break;
            }
}

gp_status gp__coll_record_of(const gp_trace *t, gp__coll_record *r)
{
    size_t cap = 0;
    memset(r, 0, sizeof *r);
    r->rank = t->rank;
    r->dist_claims = t->dist.present && t->dist.rank >= 0;
    r->dist_rank = t->dist.present ? t->dist.rank : -1;
    r->source = gp_trace_str(t, t->source);
    r->device = t->n_devices ? gp_trace_str(t, t->devices[0].name) : "";
    r->n_devices = (int32_t)t->n_devices;
    for (size_t tr = 0; tr < t->n_tracks; tr++) {
        const gp_track *track = &t->tracks[tr];
        for (size_t e = 0; e < track->n_events; e++) {
            const gp_event *ev = &track->events[e];
            const char *kernel;
            if (ev->kind == GP_EV_USER_ANNOTATION &&
                strncmp(gp_trace_str(t, ev->name), "ProfilerStep#", 13) == 0)
                r->steps++;
            if (!is_collective(t, ev, &kernel))
                continue;
            gp__coll_kern *k = GP_PUSH(r->k, r->n_k, cap);
            if (!k) {
                gp__coll_record_free(r);
                return GP_ENOMEM;
            }
            const gp_gpu_info *gi = gp_event_gpu_info(t, ev);
            const gp_gpu_ext *x = gp_gpu_info_ext(t, gi); /* blank when gi is NULL */
            *k =
                (gp__coll_kern){.ts = ev->ts,
                                .dur = ev->dur,
                                .kernel = kernel,
                                .collective = x->collective ? gp_trace_str(t, x->collective) : NULL,
                                .pg_name = x->pg_name ? gp_trace_str(t, x->pg_name) : NULL,
                                .dtype = x->dtype ? gp_trace_str(t, x->dtype) : "",
                                .in_nelems = x->in_msg_nelems,
                                .out_nelems = x->out_msg_nelems,
                                .group_size = x->group_size,
                                .has_info = gi != NULL,
                                .track = (uint32_t)tr,
                                .pos = e};
        }
    }
    return GP_OK;
}

void gp__coll_record_free(gp__coll_record *r)
{
    free(r->k);
    r->k = NULL;
    r->n_k = 0;
}

/* Collects rank i's collective kernels (sorted), its communication time, steps and device. */
static gp_status collect_rank(matcher *m, size_t i)
{
    gp__coll_rank_in *r = &m->in[i];
    const gp__coll_record *rec = r->rec;
    r->device = rec->device;
    r->steps = rec->steps;
    if (rec->n_k && !(m->k[i] = calloc(rec->n_k, sizeof *m->k[i])))
        return GP_ENOMEM;
    for (size_t j = 0; j < rec->n_k; j++) {
        m->k[i][m->n_k[i]++] = (ckern){&rec->k[j], 0};
        if (rec->k[j].pg_name)
            m->any_pg = true;
        r->comm_time += rec->k[j].dur;
    }
    return GP_OK;
}

static gp_coll_type kernel_type(const gp__coll_kern *k, const char **name);

/* Assigns every kernel its group (its PG name; "all" for every kernel when no kernel of the job
 * has one; "unknown" for kernels without one in a job where others have one) and sorts. With
 * process groups, a group's send/recv kernels are matched apart from its collectives (p2p), so
 * that ranks running different numbers of them do not shift the collectives' positions. */
static gp_status group_kernels(matcher *m)
{
    for (size_t i = 0; i < m->n_in; i++) {
        for (size_t j = 0; j < m->n_k[i]; j++) {
            ckern *k = &m->k[i][j];
            const char *g = !m->any_pg ? "all" : k->c->pg_name ? k->c->pg_name : "unknown";
            const char *unused;
            bool p2p = m->any_pg && kernel_type(k->c, &unused) == GP_COLL_SENDRECV;
            size_t gi = group_index(m, g, p2p);
            if (gi == SIZE_MAX)
                return GP_ENOMEM;
            k->group = (uint32_t)gi;
        }
        if (m->n_k[i])
            gp__msort(m->k[i], m->n_k[i], sizeof *m->k[i], cmp_ckern);
    }
    return GP_OK;
}

/* The class and name of a kernel: from its Collective name, else from the kernel name. */
static gp_coll_type kernel_type(const gp__coll_kern *k, const char **name)
{
    if (k->collective) {
        *name = k->collective;
        return type_of_name(*name);
    }
    gp_coll_type ty = type_of_kernel(k->kernel);
    *name = gp_coll_type_name(ty);
    return ty;
}

/* True when two members of one collective disagree on what the operation is. */
static bool disagree(const gp__coll_kern *a, const gp__coll_kern *b)
{
    const char *na, *nb;
    if (kernel_type(a, &na) != kernel_type(b, &nb) || strcmp(na, nb) != 0)
        return true;
    if (!a->has_info || !b->has_info)
        return a->has_info != b->has_info;
    return a->in_nelems != b->in_nelems || a->out_nelems != b->out_nelems ||
           a->group_size != b->group_size || strcmp(a->dtype, b->dtype) != 0;
}

/* Fills collective c's identity from kernel k (its first member). */
static void identity(gp_collective *c, const gp__coll_kern *k, const char *group, uint64_t index)
{
    c->group = group;
    c->index = index;
    c->kernel = k->kernel;
    c->type = kernel_type(k, &c->name);
    c->implicit_sync = gp_coll_type_implicit_sync(c->type);
    c->dtype = k->dtype;
    c->in_nelems = k->has_info ? k->in_nelems : -1;
    c->out_nelems = k->has_info ? k->out_nelems : -1;
    c->group_size = k->has_info && k->group_size > 0 ? k->group_size : -1;
}

/* Says which ranks of group g have fewer collectives than the most any rank has. */
static void note_counts(gp_collectives *c, const char *group, const size_t *cnt, size_t n_in,
                        const gp__coll_rank_in *in, size_t most, bool every_rank)
{
    for (size_t i = 0; i < n_in; i++)
        if ((cnt[i] || every_rank) && cnt[i] < most)
            gp_error_note(&c->note,
                          "Group %s: rank %d has %zu collectives, another rank %zu (a crashed or "
                          "cut trace?): positions %zu-%zu lack it and are not trusted.",
                          group, (int)in[i].rank, cnt[i], most, cnt[i], most - 1);
}

/* Matches group g: position k of every rank's kernels in the group is one collective. */
static gp_status match_group(matcher *m, gp_collectives *c, size_t g, gp_collective **colls,
                             size_t *cap)
{
    size_t *lo = calloc(m->n_in, sizeof *lo), *cnt = calloc(m->n_in, sizeof *cnt);
    gp_status st = lo && cnt ? GP_OK : GP_ENOMEM;
    size_t most = 0, present = 0;
    for (size_t i = 0; i < m->n_in && st == GP_OK; i++) {
        while (lo[i] < m->n_k[i] && m->k[i][lo[i]].group < g)
            lo[i]++;
        while (lo[i] + cnt[i] < m->n_k[i] && m->k[i][lo[i] + cnt[i]].group == g)
            cnt[i]++;
        most = cnt[i] > most ? cnt[i] : most;
        present += cnt[i] > 0;
    }
    if (st == GP_OK && !m->groups[g].p2p)
        note_counts(c, m->groups[g].name, cnt, m->n_in, m->in, most, !m->any_pg);
    if (!m->any_pg) /* matched by kernel order: every rank runs every collective */
        present = m->n_in;
    bool mismatch = false;
    for (size_t pos = 0; pos < most && st == GP_OK; pos++) {
        gp_collective *col = GP_PUSH(*colls, c->n_colls, *cap);
        const gp__coll_kern *first = NULL;
        size_t n = 0;
        for (size_t i = 0; i < m->n_in; i++)
            n += pos < cnt[i];
        if (!col || !(col->members = calloc(n, sizeof *col->members))) {
            st = GP_ENOMEM;
            break;
        }
        for (size_t i = 0; i < m->n_in; i++) {
            if (pos >= cnt[i])
                continue;
            const gp__coll_kern *k = m->k[i][lo[i] + pos].c;
            if (!first)
                first = k;
            else if (!mismatch && !m->groups[g].p2p && disagree(first, k)) {
                mismatch = true;
                gp_error_note(&c->note,
                              "Group %s, collective %zu: rank %d ran %s, rank %d %s (different "
                              "name, size or dtype): this and later collectives of the group are "
                              "not trusted.",
                              m->groups[g].name, pos, (int)m->in[i].rank, k->kernel,
                              (int)col->members[0].rank, first->kernel);
            }
            col->members[col->n_members++] = (gp_coll_member){m->in[i].rank, k->ts, k->dur, 0, 0};
        }
        identity(col, first, m->groups[g].name, pos);
        /* point to point involves the ranks it involves */
        size_t expect = m->groups[g].p2p      ? n
                        : col->group_size > 0 ? (size_t)col->group_size
                                              : present;
        col->doubt = mismatch                    ? GP_COLL_MISMATCH
                     : n < expect || n < present ? GP_COLL_INCOMPLETE
                                                 : GP_COLL_OK;
    }
    free(lo);
    free(cnt);
    return st;
}

/* True when record i claims (distributedInfo, or its rank in the job) a rank another record also
 * claims. */
static bool rank_disputed(const gp__coll_record *recs, size_t n, size_t i, gp_collectives *c)
{
    const gp__coll_record *t = &recs[i];
    for (size_t j = 0; j < n; j++) {
        const gp__coll_record *u = &recs[j];
        if (j != i && (u->rank == t->rank ||
                       (t->dist_claims && u->dist_claims && u->dist_rank == t->dist_rank))) {
            if (j > i) /* said once, by the first of the pair */
                gp_error_note(&c->note,
                              "%s and %s both claim rank %d: neither is matched with the other "
                              "ranks' collectives.",
                              t->source, u->source, (int)(t->dist_claims ? t->dist_rank : t->rank));
            return true;
        }
    }
    return false;
}

void gp_coll_opts_init(gp_coll_opts *o)
{
    o->gpus_per_node = 0;
    o->align_clocks = true;
}

static int cmp_rank_in(const void *pa, const void *pb)
{
    const gp__coll_rank_in *a = pa, *b = pb;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* Builds the included ranks (those whose rank no other record disputes) of m. */
static gp_status include_ranks(matcher *m, const gp__coll_record *recs, size_t n, gp_collectives *c)
{
    m->in = calloc(n ? n : 1, sizeof *m->in);
    m->k = calloc(n ? n : 1, sizeof *m->k);
    m->n_k = calloc(n ? n : 1, sizeof *m->n_k);
    if (!m->in || !m->k || !m->n_k)
        return GP_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (!rank_disputed(recs, n, i, c))
            m->in[m->n_in++] = (gp__coll_rank_in){&recs[i], recs[i].rank, 0, 0, ""};
    gp__msort(m->in, m->n_in, sizeof *m->in, cmp_rank_in); /* a job is by rank; be sure of it */
    for (size_t i = 0; i < m->n_in; i++)
        if (collect_rank(m, i) != GP_OK)
            return GP_ENOMEM;
    return group_kernels(m);
}

/* Matches every group and makes the straggler table's rows. */
static gp_status match_all(matcher *m, gp_collectives *c)
{
    size_t cap = 0;
    note_streams(m, c);
    for (size_t g = 0; g < m->n_groups; g++)
        if (match_group(m, c, g, &c->colls, &cap) != GP_OK)
            return GP_ENOMEM;
    if (!(c->ranks = calloc(m->n_in ? m->n_in : 1, sizeof *c->ranks)))
        return GP_ENOMEM;
    for (size_t i = 0; i < m->n_in; i++)
        c->ranks[c->n_ranks++] = (gp_coll_rank){.rank = m->in[i].rank,
                                                .comm_time = m->in[i].comm_time,
                                                .steps = m->in[i].steps,
                                                .caused_per_step = NAN};
    return GP_OK;
}

gp_status gp_collectives_analyze(const gp_job *job, const gp_coll_opts *opts, gp_collectives **out,
                                 gp_error *err)
{
    gp__ranks in = gp__ranks_of_job(job);
    return gp__collectives_of_ranks(&in, opts, out, err);
}

gp_status gp__collectives_of_ranks(const gp__ranks *in, const gp_coll_opts *opts,
                                   gp_collectives **out, gp_error *err)
{
    gp__coll_record *recs = calloc(in->n ? in->n : 1, sizeof *recs);
    gp_status st = recs ? GP_OK : GP_ENOMEM;
    for (size_t i = 0; i < in->n && st == GP_OK; i++)
        st = gp__coll_record_of(in->t[i], &recs[i]);
    if (st == GP_OK)
        st = gp__collectives_of_records(recs, in->n, opts, out, err);
    else
        gp_error_set(err, st, "out of memory while matching collectives");
    for (size_t i = 0; recs && i < in->n; i++)
        gp__coll_record_free(&recs[i]);
    free(recs);
    return st;
}

gp_status gp__collectives_of_records(const gp__coll_record *recs, size_t n,
                                     const gp_coll_opts *opts, gp_collectives **out, gp_error *err)
{
    gp_coll_opts o;
    if (opts)
        o = *opts;
    else
        gp_coll_opts_init(&o);
    gp_collectives *c = calloc(1, sizeof *c);
    matcher m = {0};
    gp_status st = c ? include_ranks(&m, recs, n, c) : GP_ENOMEM;
    if (st == GP_OK) {
        c->straggler = -1;
        c->by_order = !m.any_pg;
        st = match_all(&m, c);
    }
    if (st == GP_OK)
        st = gp__coll_figures(c, m.in, &o);
    for (size_t i = 0; i < m.n_in; i++)
        free(m.k[i]);
    free(m.k);
    free(m.n_k);
    free(m.in);
    free(m.groups);
    if (st != GP_OK) {
        gp_collectives_free(c);
        return gp_error_set(err, st, "out of memory while matching collectives");
    }
    *out = c;
    return GP_OK;
}

void gp_collectives_free(gp_collectives *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_colls; i++)
        free(c->colls[i].members);
    free(c->colls);
    free(c->summary);
    free(c->ranks);
    free(c);
}
