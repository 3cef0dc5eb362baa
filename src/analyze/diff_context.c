/* What each side of a diff ran on (device, world size, ranks, CUDA / PyTorch / NCCL versions),
 * and the warnings when the sides differ or share few names (docs/diff.md, "What each side ran
 * on"): an A100 rank compared with a V100 rank is said, never silently a list of regressions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprof/analyze.h"

#include "analyze/diff_context.h"
#include "core/msort.h"
#include "core/util.h"

/* The JSON text of metadata key of t without quotes into out ("" when absent). */
static void meta(const gp_trace *t, const char *key, char *out, size_t cap)
{
    out[0] = '\0';
    gp_strid k = gp_trace_find_str(t, key, strlen(key));
    for (size_t i = 0; k && i < t->n_meta; i++)
        if (t->meta[i].key == k) {
            const char *v = gp_trace_str(t, t->meta[i].value_json);
            size_t n = strlen(v);
            if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
                v++;
                n -= 2;
            }
            snprintf(out, cap, "%.*s", (int)n, v);
            return;
        }
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

/* The side's ranks as text ("0-7", "0, 2"), and whether they are distinct ranks of one job. */
static void side_ranks(const gp_trace *const *runs, size_t n, gp_diff_side_info *s)
{
    int32_t r[64];
    size_t k = 0;
    bool distinct = true;
    for (size_t i = 0; i < n && k < GP_ARRAY_LEN(r); i++)
        if (runs[i]->dist.present && runs[i]->dist.rank >= 0)
            r[k++] = runs[i]->dist.rank;
    gp__msort(r, k, sizeof *r, cmp_i32);
    for (size_t i = 1; i < k; i++)
        distinct = distinct && r[i] != r[i - 1];
    s->job = n > 1 && k == n && distinct && s->world_size > 1;
    char text[sizeof s->ranks];
    gp_ranks_format(r, k, "-", text, sizeof text); /* "rank 3", "ranks 0-7" */
    const char *sp = strchr(text, ' ');
    snprintf(s->ranks, sizeof s->ranks, "%s", k && sp ? sp + 1 : "");
}

static void side_info(const gp_trace *const *runs, size_t n, gp_diff_side_info *s)
{
    const gp_trace *t = runs[0];
    snprintf(s->device, sizeof s->device, "%s",
             t->n_devices ? gp_trace_str(t, t->devices[0].name) : "");
    for (size_t i = 1; i < n; i++) {
        const char *d = runs[i]->n_devices ? gp_trace_str(runs[i], runs[i]->devices[0].name) : "";
        if (strcmp(d, s->device) != 0)
            snprintf(s->device, sizeof s->device, "mixed");
    }
    s->world_size = t->dist.present ? t->dist.world_size : -1;
    side_ranks(runs, n, s);
    meta(t, "cuda_runtime_version", s->cuda_runtime, sizeof s->cuda_runtime);
    meta(t, "cuda_driver_version", s->cuda_driver, sizeof s->cuda_driver);
    meta(t, "pytorch_version", s->pytorch, sizeof s->pytorch);
    if (!s->pytorch[0])
        meta(t, "torch_version", s->pytorch, sizeof s->pytorch);
    snprintf(s->nccl, sizeof s->nccl, "%s",
             t->dist.present ? gp_trace_str(t, t->dist.nccl_version) : "");
}

/* Says "what differs: base X, current Y" when both are known and differ. */
static void differs(gp_diff *d, const char *what, const char *b, const char *c)
{
    if (b[0] && c[0] && strcmp(b, c) != 0)
        gp_error_note(&d->context_note, "%s differs: base %s, current %s.", what, b, c);
}

void gp__diff_context(gp_diff *d, const gp_trace *const *base, size_t nb,
                      const gp_trace *const *cur, size_t nc)
{
    gp_diff_side_info *b = &d->side_info[0], *c = &d->side_info[1];
    side_info(base, nb, b);
    side_info(cur, nc, c);
    if (b->device[0] && c->device[0] && strcmp(b->device, c->device) != 0)
        gp_error_note(&d->context_note,
                      "The sides ran on different devices (base %s, current %s): the changes "
                      "measure the hardware as much as the code.",
                      b->device, c->device);
    char wb[16], wc[16];
    snprintf(wb, sizeof wb, "%d", (int)b->world_size);
    snprintf(wc, sizeof wc, "%d", (int)c->world_size);
    if (b->world_size > 0 && c->world_size > 0)
        differs(d, "World size", wb, wc);
    if (!b->job && !c->job && nb == 1 && nc == 1)
        differs(d, "Rank", b->ranks, c->ranks);
    for (int s = 0; s < 2; s++)
        if (d->side_info[s].job)
            gp_error_note(&d->context_note,
                          "The %s side holds ranks %s of one job, not repeated runs: its "
                          "per-run figures average ranks (compare one rank with --rank N).",
                          s ? "current" : "base", d->side_info[s].ranks);
    differs(d, "CUDA runtime", b->cuda_runtime, c->cuda_runtime);
    differs(d, "CUDA driver", b->cuda_driver, c->cuda_driver);
    differs(d, "PyTorch", b->pytorch, c->pytorch);
    differs(d, "NCCL", b->nccl, c->nccl);
    d->n_both_names = 0;
    for (size_t i = 0; i < d->n_rows; i++)
        d->n_both_names += d->rows[i].type != GP_DIFF_NEW && d->rows[i].type != GP_DIFF_REMOVED;
    /* eager against compiled code renames by design (diff_compile.c pairs them) */
    bool renames = d->compile && (d->compile->mode == GP_DIFF_COMPILE_BASE_EAGER ||
                                  d->compile->mode == GP_DIFF_COMPILE_CUR_EAGER);
    if (!renames && d->n_rows >= 4 && 2 * d->n_both_names < d->n_rows)
        gp_error_note(&d->context_note,
                      "Only %zu of %zu names are on both sides: the sides may not run the same "
                      "program.",
                      d->n_both_names, d->n_rows);
}
