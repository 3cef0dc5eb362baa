/* The headline figures of a trace or job (analyze_internal.h, gp__job_headline): what the profile
 * server's index shows of each entry. One pass over the GPU streams and the CPU threads; no
 * analysis is built. */
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze_internal.h"
#include "core/msort.h"
#include "core/util.h"

typedef struct dev_ivl {
    int32_t device;
    gp_ns lo, hi;
} dev_ivl;

static int cmp_dev_ivl(const void *a, const void *b)
{
    const dev_ivl *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    return x->lo < y->lo ? -1 : x->lo > y->lo ? 1 : 0;
}

/* GPU busy of one trace: the union of its kernels, memcpys and memsets per device, summed over
 * the devices. GP_ENOMEM. */
static gp_status trace_busy(const gp_trace *t, gp_ns *busy)
{
    size_t n = 0;
    for (size_t k = 0; k < t->n_tracks; k++)
        if (t->tracks[k].kind == GP_TRACK_GPU_STREAM)
            n += t->tracks[k].n_events;
    *busy = 0;
    if (n == 0)
        return GP_OK;
    dev_ivl *v = malloc(n * sizeof *v);
    if (!v)
        return GP_ENOMEM;
    size_t m = 0, tk = 0, ti = 0;
    const gp_track *tr;
    const gp_event *ev;
    while ((ev = gp__next_gpu_work(t, &tk, &ti, &tr)))
        if (ev->dur > 0)
            v[m++] = (dev_ivl){(int32_t)tr->device, ev->ts, ev->ts + ev->dur};
    gp__msort(v, m, sizeof *v, cmp_dev_ivl);
    for (size_t i = 0; i < m;) { /* one run of overlapping intervals of one device */
        gp_ns lo = v[i].lo, hi = v[i].hi;
        size_t j = i + 1;
        for (; j < m && v[j].device == v[i].device && v[j].lo <= hi; j++)
            hi = GP_MAX(hi, v[j].hi);
        *busy = gp__sat_add(*busy, hi - lo);
        i = j;
    }
    free(v);
    return GP_OK;
}

/* Whether t holds a torch.compile region ("Torch-Compiled Region: 0/0" annotations). */
static bool has_compiled_region(const gp_trace *t)
{
    for (size_t k = 0; k < t->n_tracks; k++) {
        const gp_track *tr = &t->tracks[k];
        if (tr->kind == GP_TRACK_GPU_STREAM)
            continue;
        for (size_t i = 0; i < tr->n_events; i++)
            if (strncmp(gp_trace_str(t, tr->events[i].name), "Torch-Compiled Region", 21) == 0)
                return true;
    }
    return false;
}

gp_status gp__job_headline(const gp_job *job, gp__headline *out)
{
    memset(out, 0, sizeof *out);
    out->ranks = (int32_t)job->n_ranks;
    gp_ns lo = 0, hi = 0;
    bool any = false;
    for (size_t r = 0; r < job->n_ranks; r++) {
        const gp_trace *t = job->ranks[r];
        gp_ns s, e, busy;
        gp_trace_span(t, &s, &e);
        if (e > s) {
            lo = any ? GP_MIN(lo, s) : s;
            hi = any ? GP_MAX(hi, e) : e;
            any = true;
        }
        gp_status st = trace_busy(t, &busy);
        if (st != GP_OK)
            return st;
        out->gpu_busy = gp__sat_add(out->gpu_busy, busy);
        if (!out->device[0] && t->n_devices > 0)
            snprintf(out->device, sizeof out->device, "%s", gp_trace_str(t, t->devices[0].name));
        out->compiled = out->compiled || has_compiled_region(t);
    }
    out->span = hi - lo;
    return GP_OK;
}
