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

static void text_detail(FILE *fp, const gp_collectives *c, size_t limit)
{
    size_t n = limit && limit < c->n_colls ? limit : c->n_colls;
    fprintf(fp, "\nEach collective (%zu of %zu; us):\n", n, c->n_colls);
    fprintf(fp, "%-8s %6s %-14s %12s %5s %10s %11s %10s %11s %5s %5s %10s %8s %-5s %s\n", "group",
            "index", "collective", "bytes", "ranks", "latency", "skew_start", "skew_end",
            "avg_wait", "first", "last", "busbw_GB/s", "peak", "node", "doubt");
    for (size_t i = 0; i < n; i++) {
        const gp_collective *k = &c->colls[i];
        fprintf(fp, "%-8s %6llu %-14s %12lld %5zu %10.3f %11.3f %10.3f %11.3f %5d %5d ", k->group,
                (unsigned long long)k->index, k->name, (long long)k->bytes, k->n_members,
                US(k->latency), US(k->start_skew), US(k->end_skew), k->avg_wait / 1e3,
                k->first_rank, k->last_rank);
        num(fp, k->bus_gbps, 10, 2);
        num(fp, k->peak_gbps, 9, 0);
        fprintf(fp, " %-5s %s\n",
                k->inter_node < 0 ? "-"
                : k->inter_node   ? "inter"
                                  : "intra",
                doubt_name(k->doubt));
    }
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
    gp__jw_kv_str(w, "group", k->group);
    gp__jw_kv_int(w, "index", (int64_t)k->index);
    gp__jw_kv_str(w, "collective", k->name);
    gp__jw_kv_str(w, "type", gp_coll_type_name(k->type));
    gp__jw_kv_bool(w, "implicit_sync", k->implicit_sync);
    gp__jw_kv_bool(w, "sync_from_ends", k->sync_from_ends);
    gp__jw_kv_str(w, "kernel", k->kernel);
    gp__jw_kv_str(w, "dtype", k->dtype);
    gp__jw_kv_int(w, "in_nelems", k->in_nelems);
    gp__jw_kv_int(w, "out_nelems", k->out_nelems);
    gp__jw_kv_int(w, "group_size", k->group_size);
    gp__jw_kv_int(w, "bytes", k->bytes);
    gp__jw_kv_int(w, "latency_ns", k->latency);
    gp__jw_kv_int(w, "start_skew_ns", k->start_skew);
    gp__jw_kv_int(w, "end_skew_ns", k->end_skew);
    gp__jw_kv_double(w, "avg_wait_ns", k->avg_wait);
    gp__jw_kv_int(w, "first_rank", k->first_rank);
    gp__jw_kv_int(w, "last_rank", k->last_rank);
    gp__jw_kv_double(w, "algo_gbps", k->algo_gbps);
    gp__jw_kv_double(w, "bus_gbps", k->bus_gbps);
    gp__jw_kv_double(w, "peak_gbps", k->peak_gbps);
    gp__jw_kv_str(w, "node_span",
                  k->inter_node < 0 ? "unknown"
                  : k->inter_node   ? "inter"
                                    : "intra");
    gp__jw_kv_str(w, "doubt", doubt_name(k->doubt));
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

/* A number cell, empty for NaN, and the separator after it. */
static void csv_num(FILE *fp, double v, char sep)
{
    if (!isnan(v))
        fprintf(fp, "%.6g", v);
    fputc(sep, fp);
}

void gp__coll_render_csv(FILE *fp, const gp_collectives *c)
{
    fprintf(fp, "group,index,collective,type,implicit_sync,dtype,in_nelems,out_nelems,group_size,"
                "bytes,ranks,latency(us),start_skew(us),end_skew(us),avg_wait(us),first_rank,"
                "last_rank,algo_bw(GB/s),bus_bw(GB/s),peak(GB/s),node_span,doubt\n");
    for (size_t i = 0; c && i < c->n_colls; i++) {
        const gp_collective *k = &c->colls[i];
        gp__csv_field(fp, k->group);
        fprintf(fp, ",%llu,", (unsigned long long)k->index);
        gp__csv_field(fp, k->name);
        fprintf(fp, ",%s,%d,", gp_coll_type_name(k->type), k->implicit_sync ? 1 : 0);
        gp__csv_field(fp, k->dtype);
        fprintf(fp, ",%lld,%lld,%d,%lld,%zu,%.3f,%.3f,%.3f,%.3f,%d,%d,", (long long)k->in_nelems,
                (long long)k->out_nelems, k->group_size, (long long)k->bytes, k->n_members,
                US(k->latency), US(k->start_skew), US(k->end_skew), k->avg_wait / 1e3,
                k->first_rank, k->last_rank);
        csv_num(fp, k->algo_gbps, ',');
        csv_num(fp, k->bus_gbps, ',');
        csv_num(fp, k->peak_gbps, ',');
        fprintf(fp, "%s,%s\n",
                k->inter_node < 0 ? "unknown"
                : k->inter_node   ? "inter"
                                  : "intra",
                doubt_name(k->doubt));
    }
}
