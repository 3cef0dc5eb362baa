/* Shared between the readers of src/trace. */
#ifndef GP_TRACE_READER_INTERNAL_H
#define GP_TRACE_READER_INTERNAL_H

#include "core/input.h"
#include "gpuprof/trace.h"

/* Reads a Kineto/Chrome JSON trace from an opened input, which it takes over (and closes). */
gp_status gp__trace_read_input(gp__input *in, const gp_read_opts *opts, gp_trace **out,
                               gp_error *err) GP_WARN_UNUSED;

#endif
