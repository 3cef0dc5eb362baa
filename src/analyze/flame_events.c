/* The evented profiles of a trace for speedscope's time-order view: per CPU thread and GPU
 * stream of each rank, its slices as balanced open/close events (gpuprof/report.h,
 * gp_flame_evented). No formatting here: render/flame_speedscope.c writes them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/demangle.h"
#include "core/imap.h"
#include "core/strtab.h"
#include "core/util.h"
#include "gpuprof/report.h"

typedef struct ev_priv {
    gp__strtab st;  /* names, files and the frame keys */
    gp__imap frame; /* frame key id -> frame index */
    size_t cap_frames, cap_profiles;
} ev_priv;

/* A python_function name "path/file.py(123): func" split into func, file, line; false when the
 * name is not of that form. */
static bool py_source(const char *nm, size_t *file_len, int32_t *line, const char **func)
{
    const char *c = strstr(nm, "): ");
    if (!c || c == nm)
        return false;
    const char *p = c;
    while (p > nm && p[-1] >= '0' && p[-1] <= '9')
        p--;
    if (p == c || p == nm || p[-1] != '(' || c - p > 9)
        return false;
    *file_len = (size_t)(p - 1 - nm);
    *line = (int32_t)strtol(p, NULL, 10);
    *func = c + 3;
    return *file_len > 0;
}

/* The frame index of an event's name (a kernel name demangled; a Python frame split into its
 * function, file and line), made on first use. */
static gp_status frame_of(gp_flame_evented *e, const char *nm, bool python, uint32_t *out)
{
    ev_priv *pv = e->priv;
    size_t flen = 0;
    int32_t line = -1;
    const char *func = nm;
    char *dem = NULL;
    if (python && !py_source(nm, &flen, &line, &func)) {
        flen = 0;
        line = -1;
        func = nm;
    }
    if (!python && gp__is_mangled(nm) && (dem = gp__demangle(nm)) != NULL)
        func = dem;
    if (!*func)
        func = "[unnamed]";
    /* the key: function, a 0x01 byte, file, 0x01, line */
    size_t klen = strlen(func) + flen + 16;
    char *key = malloc(klen + 1);
    gp_status s = key ? GP_OK : GP_ENOMEM;
    uint32_t kid = 0, nid = 0, fid = 0;
    uint64_t v;
    if (s == GP_OK) {
        int k = snprintf(key, klen + 1, "%s\x01%.*s\x01%d", func, (int)flen, nm, (int)line);
        s = gp__strtab_intern(&pv->st, key, (size_t)k, &kid);
    }
    if (s == GP_OK && gp__imap_get(&pv->frame, kid, &v)) {
        *out = (uint32_t)v;
    } else if (s == GP_OK && (s = gp__strtab_intern(&pv->st, func, strlen(func), &nid)) == GP_OK &&
               (!flen || (s = gp__strtab_intern(&pv->st, nm, flen, &fid)) == GP_OK)) {
        gp_ss_frame *f = GP_PUSH(e->frames, e->n_frames, pv->cap_frames);
        if (!f) {
            s = GP_ENOMEM;
        } else {
            /* strtab strings never move: the frame keeps the pointers */
            *f = (gp_ss_frame){gp__strtab_get(&pv->st, nid),
                               flen ? gp__strtab_get(&pv->st, fid) : NULL, flen ? line : -1};
            *out = (uint32_t)(e->n_frames - 1);
            s = gp__imap_put(&pv->frame, kid, *out);
        }
    }
    free(key);
    free(dem);
    return s;
}

typedef struct open_slice {
    gp_ns end;
    uint32_t frame;
} open_slice;

/* Closes the open slices that end at or before t (all of them when t is INT64_MAX). */
static gp_status close_until(gp_ss_profile *p, size_t *cap, open_slice *st, size_t *ns, gp_ns t)
{
    while (*ns > 0 && st[*ns - 1].end <= t) {
        gp_ss_event *ev = GP_PUSH(p->events, p->n_events, *cap);
        if (!ev)
            return GP_ENOMEM;
        *ev = (gp_ss_event){st[*ns - 1].end, st[*ns - 1].frame, false};
        p->end = st[*ns - 1].end;
        (*ns)--;
    }
    return GP_OK;
}

/* The profile of one track: its slices (sorted by ts, longer first) nested by an end-time stack,
 * a slice cut at its parent's end; times from t0. An empty profile when it has no slice. */
static gp_status track_profile(gp_flame_evented *e, const gp_trace *t, const gp_track *tr, gp_ns t0,
                               gp_ss_profile *p)
{
    size_t cap = 0, ns = 0, cap_st = 0;
    open_slice *st = NULL;
    gp_status s = GP_OK;
    for (size_t i = 0; i < tr->n_events && s == GP_OK; i++) {
        const gp_event *ev = &tr->events[i];
        if (ev->dur <= 0 || (ev->flags & GP_EVF_INSTANT) || ev->kind == GP_EV_MEMORY ||
            ev->kind == GP_EV_COUNTER || ev->kind == GP_EV_INSTANT)
            continue;
        gp_ns at = ev->ts - t0, end = at + ev->dur;
        if ((s = close_until(p, &cap, st, &ns, at)) != GP_OK)
            break;
        if (ns > 0 && end > st[ns - 1].end)
            end = st[ns - 1].end; /* overlaps its parent's end: cut there */
        if (end <= at)
            continue;
        uint32_t f;
        open_slice *o;
        gp_ss_event *oe;
        if ((s = frame_of(e, gp_trace_str(t, ev->name), ev->kind == GP_EV_PYTHON, &f)) != GP_OK)
            break;
        if (!(o = GP_PUSH(st, ns, cap_st)) || !(oe = GP_PUSH(p->events, p->n_events, cap))) {
            s = GP_ENOMEM;
            break;
        }
        *o = (open_slice){end, f};
        *oe = (gp_ss_event){at, f, true};
        if (p->n_events == 1)
            p->start = at;
    }
    if (s == GP_OK)
        s = close_until(p, &cap, st, &ns, INT64_MAX);
    free(st);
    return s;
}

/* A profile's name: the rank (several traces), then the stream or the thread as the timeline
 * labels it. */
static void profile_name(const gp_trace *t, const gp_track *tr, bool multi, char *out, size_t cap)
{
    char rank[32] = "";
    if (multi)
        snprintf(rank, sizeof rank, "rank %d \xc2\xb7 ", (int)t->rank);
    const char *nm = gp_trace_str(t, tr->name), *proc = gp_trace_str(t, tr->process_name);
    if (tr->kind == GP_TRACK_GPU_STREAM)
        snprintf(out, cap, "%sGPU %d stream %lld", rank, (int)tr->device, (long long)tr->stream);
    else if (*nm)
        snprintf(out, cap, "%s%.150s", rank, nm);
    else if (*proc)
        snprintf(out, cap, "%sthread %lld (%.80s)", rank, (long long)tr->tid, proc);
    else
        snprintf(out, cap, "%sthread %lld", rank, (long long)tr->tid);
}

static gp_status evented_build(const gp_trace *const *traces, size_t n, gp_flame_evented **out)
{
    *out = NULL;
    gp_flame_evented *e = calloc(1, sizeof *e);
    ev_priv *pv = calloc(1, sizeof *pv);
    if (!e || !pv) {
        free(e);
        free(pv);
        return GP_ENOMEM;
    }
    e->priv = pv;
    gp_status s = gp__strtab_init(&pv->st);
    if (s == GP_OK && (s = gp__imap_init(&pv->frame, 256)) != GP_OK)
        gp__strtab_free(&pv->st);
    if (s != GP_OK) {
        free(pv);
        free(e);
        return s;
    }
    gp_ns t0 = INT64_MAX;
    for (size_t r = 0; r < n; r++) {
        gp_ns a, b;
        gp_trace_span(traces[r], &a, &b);
        if (b > a && a < t0)
            t0 = a;
    }
    if (t0 == INT64_MAX)
        t0 = 0;
    for (size_t r = 0; r < n && s == GP_OK; r++) {
        const gp_trace *t = traces[r];
        for (int pass = 0; pass < 2 && s == GP_OK; pass++) /* GPU streams, then CPU threads */
            for (size_t k = 0; k < t->n_tracks && s == GP_OK; k++) {
                const gp_track *tr = &t->tracks[k];
                if (tr->kind != (pass ? GP_TRACK_CPU_THREAD : GP_TRACK_GPU_STREAM))
                    continue;
                gp_ss_profile p = {.rank = t->rank, .gpu = pass == 0};
                profile_name(t, tr, n > 1, p.name, sizeof p.name);
                if ((s = track_profile(e, t, tr, t0, &p)) != GP_OK || p.n_events == 0) {
                    free(p.events);
                    continue;
                }
                gp_ss_profile *q = GP_PUSH(e->profiles, e->n_profiles, pv->cap_profiles);
                if (!q) {
                    free(p.events);
                    s = GP_ENOMEM;
                } else {
                    *q = p;
                }
            }
    }
    if (s != GP_OK) {
        gp_flame_evented_free(e);
        return s;
    }
    *out = e;
    return GP_OK;
}

void gp_flame_evented_free(gp_flame_evented *e)
{
    if (!e)
        return;
    ev_priv *pv = e->priv;
    for (size_t i = 0; i < e->n_profiles; i++)
        free(e->profiles[i].events);
    free(e->profiles);
    free(e->frames);
    if (pv) {
        gp__strtab_free(&pv->st);
        gp__imap_free(&pv->frame);
        free(pv);
    }
    free(e);
}

gp_status gp_flame_evented_build(const gp_trace *const *traces, size_t n, gp_flame_evented **out,
                                 gp_error *err)
{
    gp_status s = evented_build(traces, n, out);
    if (s != GP_OK)
        gp_error_set(err, s, "%s building the evented profiles of %zu trace%s", gp_strerror(s), n,
                     n == 1 ? "" : "s");
    return s;
}
