/* Helpers shared by the ops unit tests (test_ops.c, test_ops_rules.c): interning a name, adding
 * an event and an op's shapes to a trace under construction. Included once per test program,
 * after cmocka.h. */
#ifndef GP_TESTS_OPS_FIXTURE_H
#define GP_TESTS_OPS_FIXTURE_H

#include <string.h>

#include "gpuprof/trace.h"

/* The id of s interned in t (fails the test on error). */
static inline gp_strid str(gp_trace *t, const char *s)
{
    gp_strid id;
    assert_int_equal(gp_trace_intern(t, s, strlen(s), &id), GP_OK);
    return id;
}

/* Adds an event of kind named name on track [ts, ts + dur), with correlation corr and external
 * id ext (fails the test on error). */
static inline void add(gp_trace *t, uint32_t track, gp_event_kind kind, const char *name, gp_ns ts,
                       gp_ns dur, int64_t corr, int64_t ext)
{
    gp_event ev = {.ts = ts,
                   .dur = dur,
                   .correlation = corr,
                   .external_id = ext,
                   .name = str(t, name),
                   .track = track,
                   .kind = (uint8_t)kind};
    assert_int_equal(gp_trace_add_event(t, &ev), GP_OK);
}

/* Records the shapes of the op with external id ext (dims, types, concrete inputs: each NULL for
 * none) (fails the test on error). */
static inline void shapes(gp_trace *t, int64_t ext, const char *dims, const char *types,
                          const char *concrete)
{
    gp_op_shapes s = {ext, dims ? str(t, dims) : 0, types ? str(t, types) : 0, 0,
                      concrete ? str(t, concrete) : 0};
    assert_int_equal(gp_trace_add_op_shapes(t, &s), GP_OK);
}

#endif
