/* gpuprof partial results: the analyses of some ranks of a job, compact and versioned, merged
 * into the job's analysis elsewhere (docs/jobs.md).
 *
 * A partial holds, per rank, what `gpuprof analyze JOB_DIR` computes from that rank's trace: its
 * figures (every per-rank table), its findings, and its collective kernels as compact records
 * (the input of the matching across ranks). The job-level analyses (kernel types over the job,
 * stragglers, collectives, the merge of findings) run on the merged partial, so the job's output
 * is byte-identical to the one-process analysis of the same ranks. Merging is concatenation by
 * rank: associative and independent of order.
 *
 * Ownership: a gp_partial owns its bytes; an analysis made from it (gp_partial_analysis) points
 * into them: the partial must outlive it. Thread-safety: a finished partial may be read from
 * several threads. */
#ifndef GPUPROF_PARTIAL_H
#define GPUPROF_PARTIAL_H

#include <stddef.h>

#include "gpuprof/analyze.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The format's version (docs/jobs.md, "Partial results"): written in every partial; partials of
 * another version are refused. */
#define GP_PARTIAL_VERSION 2

typedef struct gp_partial gp_partial;

/* Analyses every rank of job with opts (NULL: defaults) into *out (gp_partial_free). Every trace
 * must name its rank (distributedInfo.rank): GP_EINVAL naming the file otherwise (a rank from
 * file order means nothing outside its directory). world_size: the job's rank count when known
 * (0: the traces' distributedInfo.world_size, else job->n_ranks); it identifies the job.
 * GP_EINVAL (also a user regex that does not compile), GP_ENOMEM. */
GP_EXTERN gp_status gp_partial_of_job(const gp_job *job, const gp_analyze_opts *opts,
                                      int32_t world_size, gp_partial **out,
                                      gp_error *err) GP_WARN_UNUSED;

/* The bytes of p (the file `analyze --partial` writes) in *buf (malloc'ed, the caller's), *len.
 * GP_ENOMEM. */
GP_EXTERN gp_status gp_partial_serialize(const gp_partial *p, unsigned char **buf, size_t *len,
                                         gp_error *err) GP_WARN_UNUSED;

/* Parses len bytes (copied) named name (for messages: a file name) into *out. Every rank record
 * is checked in full. GP_EINVAL naming name: not a partial (magic), another version, truncated
 * or inconsistent; GP_ENOMEM. */
GP_EXTERN gp_status gp_partial_parse(const void *buf, size_t len, const char *name,
                                     gp_partial **out, gp_error *err) GP_WARN_UNUSED;

/* Merges n >= 1 partials into *out (the inputs are untouched). GP_EINVAL naming the partial at
 * fault: of another version, of another job (world size or options differ), or claiming a rank
 * another partial holds. GP_ENOMEM. */
GP_EXTERN gp_status gp_partial_merge(const gp_partial *const *parts, size_t n, gp_partial **out,
                                     gp_error *err) GP_WARN_UNUSED;

/* The job's analysis from the ranks p holds: what gp_analyze_job gives on the same traces, but
 * for the critical paths' event and link pointers (their count is kept). p must outlive *out.
 * GP_EINVAL (corrupt record), GP_ENOMEM. */
GP_EXTERN gp_status gp_partial_analysis(const gp_partial *p, gp_analysis **out,
                                        gp_error *err) GP_WARN_UNUSED;

/* The number of ranks p holds, and the i-th (ascending). */
GP_EXTERN size_t gp_partial_n_ranks(const gp_partial *p);
GP_EXTERN int32_t gp_partial_rank(const gp_partial *p, size_t i);
/* The job's world size recorded in p. */
GP_EXTERN int32_t gp_partial_world_size(const gp_partial *p);

GP_EXTERN void gp_partial_free(gp_partial *p);

#ifdef __cplusplus
}
#endif
#endif
