/* The Kineto / Chrome trace JSON reader's state, shared by the files of the reader (src/io/
 * json_scan.c, kineto_args.c, kineto_events.c, kineto_reader.c, kineto_parallel.c,
 * kineto_merge.c). Not for use outside src/io: the entry points are gpuprof/trace.h and
 * io/reader_internal.h.
 *
 * A reader owns one input, one read buffer and the trace it fills. Errors inside a parse never
 * return: they longjmp to r->jb (JMP_ERROR with r->err set, or JMP_NEED_MORE when the buffer ends
 * in the middle of an element), so every function here that takes a reader may longjmp. */
#ifndef GP_IO_KINETO_READER_H
#define GP_IO_KINETO_READER_H

#include <float.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/input.h"
#include "gpuprof/trace.h"

/* One read of the input: 1 MiB, so that the bytes the kernel copies in are still in the core's
 * cache (a 1 MiB L2 on the reference machine) when the parse reaches them; with 4 MiB the copy
 * cost 0.01 s more per 335 MB read (system time), with 512 KiB or 2 MiB no better than 1 MiB. */
#define GP__READ_CHUNK (1u << 20)
#define GP__READ_PAD 32 /* zero bytes after the data: the sentinel plus room for 16-byte loads */
/* Longest single element (one event, one top-level member) we accept: 64 MiB, 10,000 times the
 * longest in the shared traces (5.4 KB). It bounds the read buffer, so a decompression bomb (a
 * gigabyte of blanks or of one string) fails with a clear error instead of holding it all
 * (#21 item 7); blanks between elements are never kept. */
#define GP__READ_MAX_ELEMENT ((size_t)64 << 20)
#define GP__READ_MAX_DEPTH 256 /* nesting depth limit */
#define GP__READ_MAX_PIECES 64 /* pieces of a parallel read, at most */
/* Times and durations are limited to 2^62 ns (146 years) in magnitude as they are read, so that
 * ts + dur cannot overflow int64; base + ts is checked as it is added. Absolute times (after the
 * base) lie in [GP__MIN_TIME_NS, GP__MAX_TIME_NS], -73 to +146 years around 1970, and durations
 * are at most 7 days: so the end of any event minus the start of any other fits int64, and
 * analyses may subtract any two times of a trace. */
#define GP__MAX_TIME_NS (INT64_C(1) << 62)
#define GP__MIN_TIME_NS (-(INT64_C(1) << 61))
#define GP__MAX_TIME_US (GP__MAX_TIME_NS / 1000)

enum { JMP_NEED_MORE = 1, JMP_ERROR = 2 };

/* int64 → int32 for counts and ids the model keeps in 32 bits (grid sizes, device properties,
 * ranks): out-of-range values saturate instead of wrapping (a wrapped value could turn into -1,
 * "absent", or change sign). */
static inline int32_t gp__i32_sat(int64_t v)
{
    return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
}

/* A double arg into a float field, saturating at +-FLT_MAX (a cast of an out-of-range value
 * would give an infinity, which the writer cannot write back: issue 38 defect 5). The sign of a
 * zero is kept (a present 0 is -0.0, see read_known_arg). */
static inline float gp__f32_sat(double v)
{
    return v > FLT_MAX ? FLT_MAX : v < -FLT_MAX ? -FLT_MAX : (float)v;
}

/* A time committed by the reader, with the input offset of its element and its kind ("an
 * event's"), for the range check when the read is finished. */
typedef struct gp__reader_time_mark {
    gp_ns ts;
    uint64_t off;
    const char *what;
} gp__reader_time_mark;

/* Track-name metadata, applied to tracks when reading ends. */
typedef struct gp__reader_pending_meta {
    int kind; /* 0 process_name, 1 thread_name, 2 thread_sort_index, 3 process_sort_index */
    int64_t pid, tid;
    gp_strid value;
    int64_t num;
} gp__reader_pending_meta;

typedef enum gp__reader_state {
    GP__TOP_START,       /* before the first byte */
    GP__TOP_OBJ_KEY,     /* inside the top object, expecting a key or '}' */
    GP__TOP_OBJ_NEXT,    /* after a member: ',' or '}' */
    GP__TOP_EVENTS,      /* inside traceEvents: expecting an element or ']' */
    GP__TOP_EVENTS_NEXT, /* after an element: ',' or ']' */
    GP__TOP_EVENTS_ELEM, /* after a ',' in traceEvents: an element */
    GP__TOP_OBJ_MEMBER,  /* after a ',' in the top object: a member */
    GP__TOP_DONE         /* after the closing brace/bracket */
} gp__reader_state;

#define GP__ID_MEMO 4 /* pid or tid values remembered (gp__reader.id_memo) */

typedef struct gp__reader {
    gp__input in;
    char *buf;
    size_t len, cap;  /* bytes in buf, allocated (without GP__READ_PAD) */
    size_t mark;      /* start of the element being parsed */
    uint64_t buf_off; /* input offset of buf[0] */
    bool eof;
    /* A plain file is mapped whole instead (gp__input_map_file): buf is map.base, len the file's
     * size, eof is set, and no refill ever happens. At every GP__READ_CHUNK parsed (next_drop)
     * the pages behind mark are handed back and the progress is reported; `counted` is how far
     * the bytes were counted for a piece's progress. */
    gp__input_map map;
    size_t next_drop, counted;
    jmp_buf jb;
    int depth;
    gp_trace *t;
    gp_error *err;
    const gp_read_opts *opts;
    const char *name; /* for messages */
    char *scratch;    /* unescaped strings of the current element */
    size_t scratch_len, scratch_cap;
    char **retired; /* outgrown scratch blocks, kept until the element ends (pointers into them
                       may still be held by the element being parsed) */
    size_t n_retired, cap_retired;
    gp__reader_pending_meta *meta;
    size_t n_meta, cap_meta;
    uint32_t last_track;
    gp_track_kind last_kind;
    int64_t last_pid, last_tid;
    bool have_last;
    /* The last pids and tids read as plain numbers (kineto_events.c, parse_idval), GP__ID_MEMO
     * of each: the 8 bytes at the value, its length (1..7, 0: none) and value, replaced in turn.
     * A value whose 8 bytes are those of one of them is the same number with the same delimiter,
     * read without parsing (a track's events repeat both; a few tracks interleave). */
    struct gp__reader_id_memo {
        uint64_t w[GP__ID_MEMO];
        uint8_t len[GP__ID_MEMO];
        int64_t num[GP__ID_MEMO];
        unsigned next;
    } id_memo[2];
    uint64_t next_progress;
    bool saw_events;
    /* The earliest and the latest time committed (events, counters, flow points), for the range
     * check when the read is finished (gp__reader_widen_times). */
    bool have_times;
    gp__reader_time_mark time_lo, time_hi;
    gp__reader_state state; /* where gp__reader_run is; kept here so a parse can be resumed */
    bool bare_array;        /* the trace is a bare array of events */
    /* Parallel reads (kineto_parallel.c): the piece of the input this reader parses (NULL in a
     * sequential read). Every piece but the first starts at an element of traceEvents. */
    struct piece *piece;
    /* The piece's stop and position (its fields, set with piece): the check at each element reads
     * them inline and calls gp__piece_stops_at only when the element is at or past the stop. */
    _Atomic uint64_t *piece_stop, *piece_pos;
    bool split_part;
    /* How a second part ended, checked against the first part's view of the document: */
    bool part_bare_end;      /* end of input right after the events' ']' */
    bool part_object_closed; /* the top-level object's '}' */
    bool part_members;       /* top-level members after the events array */
    /* Every track's events are sorted already (gp__merge_readers sorted them): finishing skips
     * gp_trace_finish's check of their order. */
    bool tracks_sorted;
    /* The merge's tasks shifted every event's time by the base time (gp__reader_finish shifts
     * the rest: counters and flow points). */
    bool events_shifted;
    /* Event names interned lately (kineto_events.c, intern_name): by the name's length and its
     * first and last 8 bytes; a hit is checked against the interned bytes. */
    struct gp__reader_name {
        uint64_t head, tail;
        size_t len;
        uint32_t id;
    } names[64];
} gp__reader;

/* Widens r's earliest and latest times to take in lo and hi; on a tie r keeps its own (its
 * element came first in the input). */
static inline void gp__reader_widen_times(gp__reader *r, const gp__reader_time_mark *lo,
                                          const gp__reader_time_mark *hi)
{
    if (!r->have_times || lo->ts < r->time_lo.ts)
        r->time_lo = *lo;
    if (!r->have_times || hi->ts > r->time_hi.ts)
        r->time_hi = *hi;
    r->have_times = true;
}

/* ---- kineto_reader.c: the reader's life and the top level of the document ---- */

/* Creates a reader over an opened input (which it takes over), reading into buf (cap + GP__READ_PAD
 * bytes, taken over) or, when buf is NULL, a new buffer of GP__READ_CHUNK bytes. A plain regular
 * file is mapped whole instead (gp__input_map_file; buf is then freed). NULL when out of memory
 * (buf is then freed; the input is not closed). */
gp__reader *gp__reader_new_buf(const gp__input *in, const gp_read_opts *opts, gp_error *err,
                               char *buf, size_t cap);

/* Takes the read buffer out of a reader that has run, for the thread's next reader (*spare and
 * *spare_cap; left alone when the file was mapped, which is unmapped). */
void gp__reader_release_buf(gp__reader *r, char **spare, size_t *spare_cap);

/* Starts the parse at input offset `start`, an element of traceEvents (a piece of a parallel read
 * that does not begin the file). */
void gp__reader_start_at(gp__reader *r, uint64_t start);

/* Frees the reader and closes its input; the trace is freed too unless it was taken. NULL is a
 * no-op. */
void gp__reader_free(gp__reader *r);

/* Parses the document from where r->state says, until its end (GP_OK), until a piece's stop
 * (GP_OK, r->mark at the element the next piece starts at), or an error (its status, in r->err).
 * Never longjmps to the caller. */
gp_status gp__reader_run(gp__reader *r);

/* After a parse that returned st: checks that there were events, finishes the model and hands it
 * over in *out (the caller owns it). Frees the reader in every case. On failure r->err holds the
 * message. */
gp_status gp__reader_complete(gp__reader *r, gp_status st, gp_trace **out);

/* ---- kineto_events.c: one event object into the model ---- */

/* Parses one event object at p (which points at '{'), commits it to r->t, and returns the
 * position after its '}'. Only a complete element changes the model (a retry after
 * JMP_NEED_MORE is harmless). */
const char *gp__kineto_parse_event(gp__reader *r, const char *p);
/* Prepares the args key lookup (once per process; thread-safe). gp__reader_run calls it before
 * parsing, so gp__kineto_parse_args never does. */
void gp__kineto_args_init(void);
/* Prepares the event members' fast dispatch (once per process; thread-safe), as
 * gp__kineto_args_init. */
void gp__kineto_events_init(void);

/* The track (kind, pid, tid), created when new; the last one is cached. Longjmps when out of
 * memory. */
uint32_t gp__kineto_get_track(gp__reader *r, gp_track_kind kind, int64_t pid, int64_t tid);

/* The track for a pid/tid pair where either may be a string ("Spans", ""): a CPU thread when both
 * are numeric, else an OTHER track keyed by the interned strings (mapped to negative keys so they
 * cannot collide with numeric ids). Longjmps when out of memory. */
uint32_t gp__kineto_track_for_ids(gp__reader *r, bool pstr, gp_strid ps, int64_t pnum, bool tstr,
                                  gp_strid ts, int64_t tnum);

/* ---- kineto_merge.c: finishing a read, merging the pieces of a parallel one ---- */

/* Makes times absolute, pairs flow points into flows, applies track names from metadata events,
 * sets the rank and finishes the model (gp_trace_finish). GP_OK, GP_ENOMEM, or GP_EPARSE (base +
 * ts out of range, message in r->err). */
gp_status gp__reader_finish(gp__reader *r);

/* Merges the traces of the readers chain[1..n) into chain[0]'s, in order (each parsed the input
 * after the one before it), copying on `threads` threads. The sources' big arrays are freed as
 * they are copied. n <= GP__READ_MAX_PIECES. GP_OK, or GP_ENOMEM / GP_ELIMIT with the message in
 * chain[0]->err. */
gp_status gp__merge_readers(gp__reader **chain, size_t n, int threads);

/* ---- kineto_parallel.c: the work-stealing parallel read ---- */

/* Called by a piece's reader at each element start `at` (input offset): true when the piece
 * stops there. */
bool gp__piece_stops_at(struct piece *pc, uint64_t at);

/* Called at the end of traceEvents: the piece reads on to the end of the input; no stop applies. */
void gp__piece_events_ended(struct piece *pc);

/* Counts n more bytes read by a piece, for the progress of the whole read, and tells the piece's
 * trace how far into the piece its reader is, `at` being the input offset read up to
 * (gp__trace_set_progress). */
void gp__piece_read_bytes(struct piece *pc, size_t n, gp_trace *t, uint64_t at);

/* Reads the plain file `path` (opened as *in, which it takes over) with `threads` threads. The
 * result, or the error, is exactly a sequential read's (gp__trace_read_input): anything in doubt
 * falls back to one. */
gp_status gp__read_parallel(const char *path, gp__input *in, const gp_read_opts *opts, int threads,
                            gp_trace **out, gp_error *err) GP_WARN_UNUSED;

#endif
