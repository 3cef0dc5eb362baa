/* gpuprof diff's torch.compile pairing (diff_compile.c): compiled regions of one side against the
 * eager ops they replace on the other, or against the same compile id on the other. */
#ifndef GP_ANALYZE_DIFF_COMPILE_H
#define GP_ANALYZE_DIFF_COMPILE_H

#include "gpuprof/diff.h"

/* Pairs the compiled regions of base[0..nb) and cur[0..nc) (gp_diff_compile, gpuprof/diff.h);
 * mode NONE when neither side has any. *out is the caller's (gp__diff_compile_free). GP_ENOMEM. */
gp_status gp__diff_compile(const gp_trace *const *base, size_t nb, const gp_trace *const *cur,
                           size_t nc, gp_diff_compile **out) GP_WARN_UNUSED;
void gp__diff_compile_free(gp_diff_compile *c);

#endif
