/* Collectives' figures: clock alignment on implicit-sync ends, per-collective latency, skew,
 * waits and bandwidth, the summary by (name, size, dtype) and the straggler table
 * (docs/analyses.md, "Collectives"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/collectives_internal.h"
#include "core/msort.h"
#include "core/util.h"

/* An offset of a rank's collective ends from the reference rank's is applied when its median is at
 * least this large (one host's ranks end within a few microseconds of each other)... */
#define ALIGN_MIN_NS 50000
/* ...and every end differs from that median by at most a quarter of it (or this, if larger). */
#define ALIGN_SLACK_NS 10000

static int cmp_ns(const void *a, const void *b)
{
    gp_ns x = *(const gp_ns *)a, y = *(const gp_ns *)b;
    return x < y ? -1 : x > y;
}

/* Whether a member, or a straggler-table row, is of a rank below rank. */
#define RANK_BELOW(x, r) ((x)->rank < (r))
GP__DEFINE_LOWER_BOUND(members_lower_bound, gp_coll_member, int32_t, RANK_BELOW)
GP__DEFINE_LOWER_BOUND(rows_lower_bound, gp_coll_rank, int32_t, RANK_BELOW)

/* The member of c for rank, or NULL: a binary search (members are by rank). */
static const gp_coll_member *member_of(const gp_collective *c, int32_t rank)
{
    size_t i = members_lower_bound(c->members, c->n_members, rank);
    return i < c->n_members && c->members[i].rank == rank ? &c->members[i] : NULL;
}

/* The straggler-table row of rank, or NULL: a binary search (rows are by rank, as the job). */
static gp_coll_rank *row_of(const gp_collectives *c, int32_t rank)
{
    size_t i = rows_lower_bound(c->ranks, c->n_ranks, rank);
    return i < c->n_ranks && c->ranks[i].rank == rank ? &c->ranks[i] : NULL;
}

static bool trusted_sync(const gp_collective *c)
{
    return c->doubt == GP_COLL_OK && c->implicit_sync && c->n_members > 1;
}

/* The clock offset of rank (vs ref) from the ends of the trusted implicit-sync collectives both
 * took part in; 0 when there are fewer than two, the median is small, or the ends disagree (then
 * *inconsistent is set to the largest deviation). d is scratch for n_colls values. */
static gp_ns offset_of(const gp_collectives *c, int32_t ref, int32_t rank, gp_ns *d,
                       gp_ns *inconsistent)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n_colls; i++) {
        const gp_collective *col = &c->colls[i];
        const gp_coll_member *a = member_of(col, rank), *b = member_of(col, ref);
        if (trusted_sync(col) && a && b)
            d[n++] = (a->start + a->dur) - (b->start + b->dur);
    }
    if (n < 2)
        return 0;
    gp__msort(d, n, sizeof *d, cmp_ns);
    gp_ns med = d[n / 2];
    if (llabs(med) < ALIGN_MIN_NS)
        return 0;
    gp_ns dev = 0, slack = llabs(med) / 4 > ALIGN_SLACK_NS ? llabs(med) / 4 : ALIGN_SLACK_NS;
    for (size_t i = 0; i < n; i++)
        dev = llabs(d[i] - med) > dev ? llabs(d[i] - med) : dev;
    if (dev > slack) {
        *inconsistent = dev;
        return 0;
    }
    return med;
}

/* Aligns every rank on the first rank's clock where the offsets are consistent (see offset_of),
 * and says so (or why not) in the note. */
static gp_status align(gp_collectives *c)
{
    if (c->n_ranks < 2 || c->n_colls == 0)
        return GP_OK;
    gp_ns *d = malloc(c->n_colls * sizeof *d);
    if (!d)
        return GP_ENOMEM;
    char list[512] = "";
    size_t used = 0;
    for (size_t r = 1; r < c->n_ranks; r++) {
        gp_ns bad = 0;
        gp_ns off = offset_of(c, c->ranks[0].rank, c->ranks[r].rank, d, &bad);
        if (bad)
            gp_error_note(&c->note,
                          "Rank %d's collective ends differ from rank %d's by up to %.1f us more "
                          "than their median, with no consistent clock offset: its waits may "
                          "include clock error.",
                          (int)c->ranks[r].rank, (int)c->ranks[0].rank, (double)bad / 1e3);
        if (!off)
            continue;
        c->ranks[r].clock_offset = off;
        c->aligned = true;
        if (used < sizeof list)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s rank %d %+.1f us",
                                     used ? "," : "", (int)c->ranks[r].rank, (double)off / 1e3);
    }
    free(d);
    if (!c->aligned)
        return GP_OK;
    for (size_t i = 0; i < c->n_colls; i++)
        for (size_t k = 0; k < c->colls[i].n_members; k++) {
            gp_coll_member *m = &c->colls[i].members[k];
            m->start -= row_of(c, m->rank)->clock_offset;
        }
    gp_error_note(&c->note,
                  "Clocks aligned on the ends of implicit-sync collectives (offsets from rank %d, "
                  "subtracted):%s.",
                  (int)c->ranks[0].rank, list);
    return GP_OK;
}

/* Ranks whose collective kernels all end within this of each other waited for one another. */
#define ENDS_TOGETHER_NS 10000

/* Matched by kernel order: a SendRecv or unnamed collective on every rank whose ends lie within
 * ENDS_TOGETHER_NS while its starts spread wider synchronised its ranks (see collectives.h). */
static void infer_sync(gp_collectives *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n_colls && c->by_order; i++) {
        gp_collective *k = &c->colls[i];
        if (k->implicit_sync || (k->type != GP_COLL_SENDRECV && k->type != GP_COLL_UNKNOWN) ||
            k->n_members != c->n_ranks || k->n_members < 2 || k->end_skew > ENDS_TOGETHER_NS ||
            k->start_skew <= k->end_skew)
            continue;
        k->implicit_sync = k->sync_from_ends = true;
        n++;
    }
    if (n)
        gp_error_note(&c->note,
                      "%zu SendRecv or unnamed collectives ran on every rank and ended within "
                      "%.0f us of each other: taken as synchronising (all_to_all runs as grouped "
                      "send/recv).",
                      n, ENDS_TOGETHER_NS / 1e3);
}

/* The per-direction peak (GB/s) of the intra-node link of a device, by name; NaN when unknown. */
static double link_peak(const char *device)
{
    static const struct {
        const char *part;
        double gbps;
    } t[] = {{"H100 PCIe", 64}, {"A100-PCIE", 32}, {"V100-PCIE", 16}, {"H200", 450},
             {"H100", 450},     {"A100", 300},     {"V100-SXM2", 150}};
    for (size_t i = 0; i < GP_ARRAY_LEN(t); i++)
        if (strstr(device, t[i].part))
            return t[i].gbps;
    return NAN;
}

/* Latency, skews, waits, arrival order, size, bandwidth and node span of one collective. */
static void figures(gp_collective *c, int32_t gpn, const char *device)
{
    gp_ns s0 = INT64_MAX, s1 = INT64_MIN, e0 = INT64_MAX, e1 = INT64_MIN;
    c->latency = INT64_MAX;
    for (size_t i = 0; i < c->n_members; i++) {
        const gp_coll_member *m = &c->members[i];
        s0 = m->start < s0 ? m->start : s0;
        s1 = m->start > s1 ? m->start : s1;
        e0 = m->start + m->dur < e0 ? m->start + m->dur : e0;
        e1 = m->start + m->dur > e1 ? m->start + m->dur : e1;
        c->latency = m->dur < c->latency ? m->dur : c->latency;
    }
    c->start_skew = s1 - s0;
    c->end_skew = e1 - e0;
    double sum = 0;
    c->first_rank = c->last_rank = -1;
    for (size_t i = 0; i < c->n_members; i++) {
        gp_coll_member *m = &c->members[i];
        m->wait = s1 - m->start;
        sum += (double)m->wait;
        for (size_t k = 0; k < c->n_members; k++) {
            const gp_coll_member *o = &c->members[k];
            m->arrival += o->start < m->start || (o->start == m->start && o->rank < m->rank);
        }
        if (m->start == s0) /* TraceLens: on equal waits the higher rank arrived first */
            c->first_rank = m->rank;
        if (m->start == s1 && c->last_rank < 0)
            c->last_rank = m->rank;
    }
    c->avg_wait = c->n_members ? sum / (double)c->n_members : NAN;
    int32_t eb = gp_coll_dtype_bytes(c->dtype);
    int64_t ne = c->type == GP_COLL_ALLGATHER ? c->out_nelems : c->in_nelems;
    c->bytes = eb > 0 && ne >= 0 ? ne * eb : -1;
    int32_t n = c->group_size > 0 ? c->group_size : (int32_t)c->n_members;
    c->algo_gbps = c->bytes >= 0 && c->latency > 0 ? (double)c->bytes / (double)c->latency : NAN;
    c->bus_gbps = c->algo_gbps * gp_coll_bus_factor(c->type, n);
    c->inter_node = -1;
    if (gpn > 0 && c->n_members) {
        c->inter_node = 0;
        for (size_t i = 1; i < c->n_members; i++)
            if (c->members[i].rank / gpn != c->members[0].rank / gpn)
                c->inter_node = 1;
    }
    c->peak_gbps = c->inter_node == 0 ? link_peak(device) : NAN;
}

/* The summary row of c's (name, bytes, dtype), added when new; NULL when out of memory. */
static gp_coll_summary *summary_row(gp_collectives *s, const gp_collective *c, size_t *cap)
{
    for (size_t i = 0; i < s->n_summary; i++) {
        gp_coll_summary *r = &s->summary[i];
        if (strcmp(r->name, c->name) == 0 && strcmp(r->dtype, c->dtype) == 0 &&
            r->bytes == c->bytes)
            return r;
    }
    gp_coll_summary *r = GP_PUSH(s->summary, s->n_summary, *cap);
    if (r)
        *r = (gp_coll_summary){.name = c->name,
                               .dtype = c->dtype,
                               .bytes = c->bytes,
                               .group_size = c->group_size,
                               .latency_min = INT64_MAX};
    return r;
}

static int cmp_summary(const void *pa, const void *pb)
{
    const gp_coll_summary *a = pa, *b = pb;
    if (a->latency_total != b->latency_total)
        return a->latency_total > b->latency_total ? -1 : 1;
    int c = strcmp(a->name, b->name);
    return c ? c : (a->bytes < b->bytes ? -1 : a->bytes > b->bytes);
}

/* The summary: trusted collectives grouped by (name, bytes, dtype), by total latency. */
static gp_status summarise(gp_collectives *s)
{
    size_t cap = 0;
    for (size_t i = 0; i < s->n_colls; i++) {
        const gp_collective *c = &s->colls[i];
        if (c->doubt != GP_COLL_OK || c->n_members < 2)
            continue;
        gp_coll_summary *r = summary_row(s, c, &cap);
        if (!r)
            return GP_ENOMEM;
        r->count++;
        r->latency_total += c->latency;
        r->latency_min = c->latency < r->latency_min ? c->latency : r->latency_min;
        r->latency_max = c->latency > r->latency_max ? c->latency : r->latency_max;
        r->start_skew_max = c->start_skew > r->start_skew_max ? c->start_skew : r->start_skew_max;
        r->start_skew_mean += (double)c->start_skew;
        r->end_skew_mean += (double)c->end_skew;
        r->avg_wait_mean += c->avg_wait;
        r->algo_gbps_mean += c->algo_gbps;
        r->bus_gbps_mean += c->bus_gbps;
    }
    for (size_t i = 0; i < s->n_summary; i++) {
        gp_coll_summary *r = &s->summary[i];
        double n = (double)r->count;
        r->latency_mean = (double)r->latency_total / n;
        r->start_skew_mean /= n;
        r->end_skew_mean /= n;
        r->avg_wait_mean /= n;
        r->algo_gbps_mean /= n;
        r->bus_gbps_mean /= n;
    }
    if (s->n_summary > 1)
        gp__msort(s->summary, s->n_summary, sizeof *s->summary, cmp_summary);
    return GP_OK;
}

/* The straggler table over trusted implicit-sync collectives, and the straggler. */
static void stragglers(gp_collectives *s)
{
    for (size_t i = 0; i < s->n_colls; i++) {
        const gp_collective *c = &s->colls[i];
        if (!trusted_sync(c))
            continue;
        s->implicit_sync++;
        gp_ns caused = 0;
        for (size_t k = 0; k < c->n_members; k++)
            caused += c->members[k].wait;
        for (size_t k = 0; k < c->n_members; k++) {
            const gp_coll_member *m = &c->members[k];
            gp_coll_rank *row = row_of(s, m->rank);
            row->collectives++;
            row->wait_total += m->wait;
            row->arrived_first += c->first_rank == row->rank;
            if (c->last_rank == row->rank) {
                row->arrived_last++;
                row->caused_total += caused;
            }
        }
    }
    gp_ns worst = 0;
    for (size_t r = 0; r < s->n_ranks; r++) {
        gp_coll_rank *row = &s->ranks[r];
        row->caused_per_step =
            row->steps > 0 ? (double)row->caused_total / (double)row->steps : NAN;
        if (row->caused_total > worst) {
            worst = row->caused_total;
            s->straggler = row->rank;
        }
    }
}

gp_status gp__coll_figures(gp_collectives *c, const gp__coll_rank_in *in, const gp_coll_opts *o)
{
    c->gpus_per_node = o->gpus_per_node;
    if (c->gpus_per_node <= 0 && c->n_ranks > 0)
        c->gpus_per_node = in[0].rec->n_devices;
    if (o->align_clocks && align(c) != GP_OK)
        return GP_ENOMEM;
    for (size_t i = 0; i < c->n_colls; i++) {
        const char *device = "";
        if (c->colls[i].n_members) /* in[] and c->ranks are in the same order */
            device = in[row_of(c, c->colls[i].members[0].rank) - c->ranks].device;
        figures(&c->colls[i], c->gpus_per_node, device);
    }
    infer_sync(c);
    if (summarise(c) != GP_OK)
        return GP_ENOMEM;
    stragglers(c);
    return GP_OK;
}
