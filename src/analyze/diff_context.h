/* gpuprof diff's context (diff_context.c): what each side ran on, and the warnings when the
 * sides differ (docs/diff.md, "What each side ran on"). */
#ifndef GP_ANALYZE_DIFF_CONTEXT_H
#define GP_ANALYZE_DIFF_CONTEXT_H

#include "gpuprof/diff.h"

/* Fills d->side_info, d->n_both_names and d->context_note from the runs of both sides; call once
 * d's rows are built. Never fails (the note is truncated when long). */
void gp__diff_context(gp_diff *d, const gp_trace *const *base, size_t nb,
                      const gp_trace *const *cur, size_t nc);

#endif
