/* Shared between the readers of src/io. */
#ifndef GP_TRACE_READER_INTERNAL_H
#define GP_TRACE_READER_INTERNAL_H

#include "core/input.h"
#include "gpuprof/trace.h"

/* Reads a Kineto/Chrome JSON trace from an opened input, which it takes over (and closes). */
gp_status gp__trace_read_input(gp__input *in, const gp_read_opts *opts, gp_trace **out,
                               gp_error *err) GP_WARN_UNUSED;

/* The Kineto / Chrome JSON reader (and the legacy autograd format's) as the reader registry calls
 * it (io/formats.h): path is the file's (NULL for memory), in the opened input it takes over. */
gp_status gp__kineto_read(const char *path, gp__input *in, const gp_read_opts *opts, gp_trace **out,
                          gp_error *err) GP_WARN_UNUSED;

/* As gp_trace_read_buffer, but the reader receives the bytes at most `piece` at a time (0 = all at
 * once), which exercises every "element continues in the next chunk" path. For tests and fuzzing.
 */
gp_status gp__trace_read_buffer_pieces(const char *data, size_t len, const char *name,
                                       const gp_read_opts *opts, size_t piece, gp_trace **out,
                                       gp_error *err) GP_WARN_UNUSED;

/* Parallel reads: a thread steals part of another's piece only when at least twice this many bytes
 * remain in it (1 MB; at 8 MB the first piece went on alone for 5-18 ms after the second ended,
 * issue 37: the H100 trace x10's `analyze` took 0.90x the time at 1 MB, 0.94x at 0.5 MB).
 * Tests lower it to force many pieces on small files. */
extern uint64_t gp__read_steal_min;
/* Pieces a parallel read starts with, cut evenly (2). Tests raise it to get long chains of pieces
 * whatever the threads' timing. */
extern size_t gp__read_initial_pieces;
/* The merge of a parallel read sorts a destination track of at least this many events in two
 * halves side by side (131,072). Tests lower it to split the tracks of small files. */
extern size_t gp__merge_split_min;

#endif
