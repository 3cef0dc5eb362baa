/* Internals of partial results (analyze/partial.c, analyze/partial_codec.c): the visitor that
 * writes a struct to bytes or reads it back (docs/internals/jobs.md). */
#ifndef GP_ANALYZE_PARTIAL_INTERNAL_H
#define GP_ANALYZE_PARTIAL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/collectives_internal.h"
#include "gpuprof/analyze.h"

/* Writing (rd false): each gp__ser_* appends its value to buf. Reading (rd true): each reads its
 * value from p[at..end) into the struct; a value the input does not hold sets bad (and the
 * later calls do nothing). nomem: an allocation failed (bad is set too). */
typedef struct gp__ser {
    bool rd, bad, nomem;
    unsigned char *buf; /* writing: malloc'ed, the caller's */
    size_t len, cap;
    const unsigned char *p; /* reading: borrowed; decoded strings point into it */
    size_t at, end;
} gp__ser;

void gp__ser_raw(gp__ser *c, void *v, size_t n);
void gp__ser_i64(gp__ser *c, int64_t *v);
void gp__ser_u64(gp__ser *c, uint64_t *v);
void gp__ser_i32(gp__ser *c, int32_t *v);
void gp__ser_u32(gp__ser *c, uint32_t *v);
void gp__ser_f64(gp__ser *c, double *v);
void gp__ser_bool(gp__ser *c, bool *v);
void gp__ser_size(gp__ser *c, size_t *v);
/* A string (nullable: NULL travels as NULL; otherwise NULL is bad input). */
void gp__ser_str(gp__ser *c, const char **s, bool nullable);
/* One rank's figures. Reading allocates its arrays (freed as an analysis's rank is); critical
 * paths come back with their number of events but no event or link pointers. */
void gp__ser_rank(gp__ser *c, gp_rank_analysis *r);
/* One finding of a rank (no ranks array: the merge makes it). */
void gp__ser_finding(gp__ser *c, gp_finding *f);
/* One rank's collective record (reading allocates r->k). */
void gp__ser_coll_record(gp__ser *c, gp__coll_record *r);

#endif
