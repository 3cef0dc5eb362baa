/* The work-stealing parallel read of large plain files (contracts in io/kineto_reader.h).
 *
 * A large plain file is cut into pieces parsed side by side, each into its own trace, which are
 * then merged in file order. The first piece starts at the beginning; every other piece starts at a
 * likely element start (find_split) and is trusted only when the piece before it arrives exactly
 * there: that proves the offset is an element of traceEvents, parsed in the same state a
 * sequential read would be in. Work is balanced by stealing: a thread with nothing left moves the
 * stop of the piece with the most input remaining back to a split point in the middle of what
 * remains, and parses from there itself. Results never depend on the cuts: anything in doubt (a
 * cut that is not an element boundary, a piece that failed, a document that ends unlike it began)
 * falls back to the sequential result, or to a sequential read that reports the error exactly as
 * it would have been reported.
 *
 * Locking: a piece's `stop` and `pos` are atomics (the piece's thread reads them at every element;
 * thieves move `stop` by compare-and-swap). What thieves and workers must change together (the
 * list of pieces, which are started, the stacks of replaced stops) is guarded by par_read.mu. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/input.h"
#include "core/lock.h"
#include "core/par.h"
#include "core/util.h"
#include "gpuprof/trace.h"
#include "model/model_internal.h"
#include "io/kineto_reader.h"
#include "io/reader_internal.h"

#define PIECE_DONE UINT64_MAX

uint64_t gp__read_steal_min = 1u << 20; /* reader_internal.h */
size_t gp__read_initial_pieces = 2;

typedef struct par_read par_read;

/* One piece: the reader parses from `start` up to the element that begins at offset `stop` (0: to
 * the end of the input). A thief may move `stop` earlier; the piece's piece_sched keeps the stops
 * it replaced, to go back to when the new stop turns out not to be an element boundary. */
typedef struct piece {
    par_read *pr;
    gp__reader *r;
    uint64_t start;
    _Atomic uint64_t stop; /* PIECE_DONE once the piece has stopped or left traceEvents */
    _Atomic uint64_t pos;  /* offset of the element being parsed, for thieves */
    uint64_t stopped_at;   /* set by the piece's thread: where it stopped, 0 = it read to the end */
    gp_status st;
    gp_error err;
} piece;

/* The scheduling state of pieces[k] (par_read.sched[k]), guarded by par_read.mu. */
typedef struct piece_sched {
    bool started;   /* taken by a thread */
    size_t n_stack; /* stops replaced by thieves, the latest last */
    uint64_t stack[GP__READ_MAX_PIECES];
} piece_sched;

struct par_read {
    const char *path;
    uint64_t size;
    int fd; /* for find_split */
    const gp_read_opts *opts;
    gp_read_opts opts_caller; /* progress through par_progress: the caller's thread only */
    gp_read_opts opts_helper; /* no progress */
    pthread_t caller;
    gp__input first_in; /* the caller's input: the first piece's */
    _Atomic uint64_t bytes_read;
    _Atomic uint32_t threads_used;
    gp__mutex mu;
    /* Guarded by mu. (GP_GUARDED_BY(mu) cannot name a sibling member in C before clang's late
     * parsing of attributes; every function that touches these says GP_REQUIRES(pr->mu), which
     * clang checks at each call.) */
    size_t n_pieces;
    piece_sched sched[GP__READ_MAX_PIECES];
    piece
        pieces[GP__READ_MAX_PIECES]; /* [0, n_pieces) are in use; a piece's fields as said there */
};

/* The stop pieces[k] had before its current one (0: the end of the input), taken off its stack. */
static uint64_t pop_stop(par_read *pr, size_t k) GP_REQUIRES(pr->mu)
{
    return pr->sched[k].n_stack ? pr->sched[k].stack[--pr->sched[k].n_stack] : 0;
}

bool gp__piece_stops_at(piece *pc, uint64_t at)
{
    atomic_store_explicit(&pc->pos, at, memory_order_relaxed);
    for (;;) {
        uint64_t s = atomic_load_explicit(&pc->stop, memory_order_acquire);
        if (s == 0 || s == PIECE_DONE || at < s)
            return false;
        if (at == s) {
            if (atomic_compare_exchange_strong(&pc->stop, &s, PIECE_DONE)) {
                pc->stopped_at = at;
                return true;
            }
            continue; /* a thief moved the stop meanwhile: look again */
        }
        /* at > s: s was not an element boundary: go back to the stop it replaced (thieves change
         * the stop only under the lock, so it cannot move while we hold it). */
        par_read *pr = pc->pr;
        gp__mutex_lock(&pr->mu);
        if (atomic_load(&pc->stop) == s)
            atomic_store(&pc->stop, pop_stop(pr, (size_t)(pc - pr->pieces)));
        gp__mutex_unlock(&pr->mu);
    }
}

void gp__piece_events_ended(piece *pc)
{
    atomic_store(&pc->stop, PIECE_DONE);
    pc->stopped_at = 0;
}

void gp__piece_read_bytes(piece *pc, size_t n, gp_trace *t, uint64_t at)
{
    atomic_fetch_add_explicit(&pc->pr->bytes_read, n, memory_order_relaxed);
    /* The stop a thief may move earlier: the prediction follows it at the next call. */
    uint64_t stop = atomic_load_explicit(&pc->stop, memory_order_relaxed);
    uint64_t end = stop == 0 || stop == PIECE_DONE ? pc->pr->size : stop;
    if (at > pc->start && end > at)
        gp__trace_set_progress(t, at - pc->start, end - pc->start);
    else
        gp__trace_set_progress(t, 0, 0);
}

/* Progress of the whole read, reported from the caller's thread only. */
static void par_progress(void *ctx, uint64_t done, uint64_t total)
{
    (void)done;
    par_read *pr = ctx;
    uint64_t all = atomic_load_explicit(&pr->bytes_read, memory_order_relaxed);
    pr->opts->progress(pr->opts->progress_ctx, GP_MIN(all, total), total);
}

/* Finds a likely element start in [from, limit) (scanning at most 1 MB): a '{' that begins a line
 * (after optional blanks) whose previous line ends with ','. A raw newline cannot occur inside a
 * JSON string, so this is outside strings; whether it is an element of traceEvents is proven later
 * by the piece before arriving exactly there. Returns 0 when none is found. */
static uint64_t find_split(int fd, uint64_t from, uint64_t limit)
{
    enum { WINDOW = 1 << 20 };
    if (from >= limit)
        return 0;
    size_t want = (size_t)GP_MIN((uint64_t)WINDOW, limit - from);
    char *w = malloc(want);
    if (!w)
        return 0;
    uint64_t found = 0;
    ssize_t n = pread(fd, w, want, (off_t)from);
    for (ssize_t i = 1; n > 0 && i < n && !found; i++) {
        if (w[i - 1] != '\n')
            continue;
        ssize_t k = i;
        while (k < n && (w[k] == ' ' || w[k] == '\t' || w[k] == '\r'))
            k++;
        if (k >= n || w[k] != '{')
            continue;
        ssize_t b = i - 2; /* last non-blank before the newline */
        while (b >= 0 && (w[b] == ' ' || w[b] == '\t' || w[b] == '\r'))
            b--;
        if (b >= 0 && w[b] == ',')
            found = from + (uint64_t)k;
    }
    free(w);
    return found;
}

/* The started, running piece with the most input left, as an index into pr->pieces (SIZE_MAX
 * when none): *from and *end bound what it has left, *stop is its current stop. */
static size_t find_victim(par_read *pr, uint64_t *from, uint64_t *end, uint64_t *stop)
    GP_REQUIRES(pr->mu)
{
    size_t v = SIZE_MAX;
    uint64_t best = 0;
    for (size_t i = 0; i < pr->n_pieces; i++) {
        piece *c = &pr->pieces[i];
        uint64_t s = atomic_load(&c->stop);
        if (!pr->sched[i].started || s == PIECE_DONE)
            continue;
        uint64_t at = GP_MAX(atomic_load(&c->pos), c->start);
        uint64_t e = s ? s : pr->size;
        if (e > at && e - at > best) {
            best = e - at;
            v = i;
            *from = at;
            *end = e;
            *stop = s;
        }
    }
    return v;
}

/* Splits what remains of the running piece with the most input left, and returns the new piece
 * (not started), or NULL when nothing is worth splitting. */
static piece *steal(par_read *pr) GP_REQUIRES(pr->mu)
{
    for (int attempt = 0; attempt < 4 && pr->n_pieces < GP__READ_MAX_PIECES; attempt++) {
        uint64_t from = 0, end = 0, stop = 0;
        size_t v = find_victim(pr, &from, &end, &stop);
        if (v == SIZE_MAX || end - from < 2 * gp__read_steal_min)
            return NULL;
        uint64_t at = find_split(pr->fd, from + (end - from) / 2, end);
        if (!at)
            return NULL;
        pr->sched[v].stack[pr->sched[v].n_stack++] = stop;
        uint64_t expect = stop;
        if (!atomic_compare_exchange_strong(&pr->pieces[v].stop, &expect, at)) {
            pr->sched[v].n_stack--; /* it stopped or left the events meanwhile: look again */
            continue;
        }
        size_t k = pr->n_pieces++;
        piece *n = &pr->pieces[k];
        n->pr = pr;
        n->start = at;
        atomic_init(&n->stop, stop);
        atomic_init(&n->pos, at);
        /* If `stop` is no boundary, the new piece goes back where the victim would have. */
        pr->sched[k].n_stack = pr->sched[v].n_stack - 1;
        memcpy(pr->sched[k].stack, pr->sched[v].stack,
               pr->sched[k].n_stack * sizeof *pr->sched[k].stack);
        return n;
    }
    return NULL;
}

/* Parses one piece on this thread. *spare is a read buffer to reuse (taken, and given back). */
static void run_piece(par_read *pr, piece *pc, char **spare, size_t *spare_cap)
{
    const gp_read_opts *opts =
        pthread_equal(pthread_self(), pr->caller) ? &pr->opts_caller : &pr->opts_helper;
    gp__input in;
    if (pc->start == 0) {
        in = pr->first_in;
        pr->first_in.fd = -1;
    } else if (gp__input_open(&in, pr->path, true, &pc->err) != GP_OK) {
        pc->st = pc->err.status;
        atomic_store(&pc->stop, PIECE_DONE);
        return;
    } else if (in.compressed || lseek(in.fd, (off_t)pc->start, SEEK_SET) != (off_t)pc->start) {
        gp__input_close(&in);
        pc->st = gp_error_set(&pc->err, GP_EIO, "%s: cannot read from byte %llu", pr->path,
                              (unsigned long long)pc->start);
        atomic_store(&pc->stop, PIECE_DONE);
        return;
    }
    gp__reader *r = gp__reader_new_buf(&in, opts, &pc->err, *spare, *spare_cap);
    *spare = NULL;
    if (!r) {
        gp__input_close(&in);
        pc->st = gp_error_set(&pc->err, GP_ENOMEM, "%s: out of memory", pr->path);
        atomic_store(&pc->stop, PIECE_DONE);
        return;
    }
    r->piece = pc;
    r->piece_stop = &pc->stop;
    r->piece_pos = &pc->pos;
    if (pc->start)
        gp__reader_start_at(r, pc->start);
    pc->r = r;
    pc->st = gp__reader_run(r);
    atomic_store(&pc->stop, PIECE_DONE);
    /* Keep the trace for the merge; hand the buffer to this thread's next piece. */
    gp__input_close(&r->in);
    gp__reader_release_buf(r, spare, spare_cap);
}

/* A piece for this thread, marked started: one not started yet, else a stolen one; NULL when
 * there is nothing left worth taking. */
static piece *take_piece(par_read *pr) GP_REQUIRES(pr->mu)
{
    piece *pc = NULL;
    for (size_t k = 0; k < pr->n_pieces && !pc; k++)
        if (!pr->sched[k].started)
            pc = &pr->pieces[k];
    if (!pc)
        pc = steal(pr);
    if (pc)
        pr->sched[pc - pr->pieces].started = true;
    return pc;
}

static void par_worker(void *ctx, size_t i)
{
    (void)i;
    par_read *pr = ctx;
    char *spare = NULL;
    size_t spare_cap = 0;
    bool worked = false;
    for (;;) {
        gp__mutex_lock(&pr->mu);
        piece *pc = take_piece(pr);
        gp__mutex_unlock(&pr->mu);
        if (!pc)
            break;
        run_piece(pr, pc, &spare, &spare_cap);
        worked = true;
    }
    free(spare);
    if (worked)
        atomic_fetch_add(&pr->threads_used, 1);
}

/* The number of pieces (read under the lock, as every access is). */
static size_t pieces_used(par_read *pr)
{
    gp__mutex_lock(&pr->mu);
    size_t n = pr->n_pieces;
    gp__mutex_unlock(&pr->mu);
    return n;
}

static void par_read_free(par_read *pr)
{
    size_t n = pieces_used(pr);
    for (size_t i = 0; i < n; i++)
        gp__reader_free(pr->pieces[i].r);
    gp__input_close(&pr->first_in);
    close(pr->fd);
    gp__mutex_destroy(&pr->mu);
    free(pr);
}

/* The sequential read that replaces a parallel one in doubt: the same result or error. */
static gp_status read_sequential(const char *path, const gp_read_opts *opts, gp_trace **out,
                                 gp_error *err)
{
    gp__input in;
    gp_status s = gp__input_open(&in, path, opts->regular_files_only, err);
    if (s != GP_OK)
        return s;
    return gp__trace_read_input(&in, opts, out, err);
}

/* A parallel read's state over the opened input, cut at cuts[0..n_cuts) (cuts[0] = 0), the
 * caller's options adapted for the threads. NULL when out of memory or file descriptors. */
static par_read *par_read_new(const char *path, gp__input *in, const gp_read_opts *opts,
                              const uint64_t *cuts, size_t n_cuts)
{
    par_read *pr = calloc(1, sizeof *pr);
    if (!pr)
        return NULL;
    pr->path = path;
    pr->size = in->file_size;
    pr->fd = dup(in->fd); /* the first piece closes in->fd when it ends */
    if (pr->fd < 0) {
        free(pr);
        return NULL;
    }
    pr->opts = opts;
    pr->opts_caller = *opts;
    if (opts->progress) {
        pr->opts_caller.progress = par_progress;
        pr->opts_caller.progress_ctx = pr;
    }
    pr->opts_helper = *opts;
    pr->opts_helper.progress = NULL;
    pr->caller = pthread_self();
    pr->first_in = *in;
    gp__mutex_init(&pr->mu);
    gp__mutex_lock(&pr->mu);
    pr->n_pieces = n_cuts;
    gp__mutex_unlock(&pr->mu);
    for (size_t i = 0; i < n_cuts; i++) {
        pr->pieces[i].pr = pr;
        pr->pieces[i].start = cuts[i];
        atomic_init(&pr->pieces[i].stop, i + 1 < n_cuts ? cuts[i + 1] : 0);
        atomic_init(&pr->pieces[i].pos, cuts[i]);
    }
    return pr;
}

/* The chain of pieces that covers the input: from the first piece, each stop is the start of the
 * next piece. Its readers go to chain[]; returns its length. *whole: every piece of it succeeded
 * and reached the next one. */
static size_t piece_chain(par_read *pr, gp__reader **chain, piece **pieces, bool *whole)
{
    size_t n_pieces = pieces_used(pr), n = 0;
    *whole = true;
    for (piece *c = &pr->pieces[0]; c;) {
        pieces[n] = c;
        chain[n++] = c->r;
        if (c->st != GP_OK) {
            *whole = false;
            break;
        }
        piece *next = NULL;
        for (size_t k = 1; c->stopped_at && k < n_pieces && !next; k++)
            if (pr->pieces[k].start == c->stopped_at && pr->pieces[k].st == GP_OK)
                next = &pr->pieces[k];
        if (c->stopped_at && !next) {
            *whole = false; /* the pieces that start there failed */
            break;
        }
        c = next;
    }
    return n;
}

gp_status gp__read_parallel(const char *path, gp__input *in, const gp_read_opts *opts, int threads,
                            gp_trace **out, gp_error *err)
{
    /* Two pieces to begin with, cut in the middle; stealing splits them further. (Tests ask for
     * more initial cuts, evenly spaced, to get long chains whatever the scheduling.) No cut: one
     * sequential read. */
    uint64_t cuts[GP__READ_MAX_PIECES + 1];
    size_t n_cuts = 1;
    cuts[0] = 0;
    size_t want = GP_MAX(2, GP_MIN(gp__read_initial_pieces, GP__READ_MAX_PIECES));
    for (size_t k = 1; k < want; k++) {
        uint64_t c = find_split(in->fd, in->file_size * k / want, in->file_size);
        if (c > cuts[n_cuts - 1])
            cuts[n_cuts++] = c;
    }
    par_read *pr = n_cuts > 1 ? par_read_new(path, in, opts, cuts, n_cuts) : NULL;
    if (!pr)
        return gp__trace_read_input(in, opts, out, err);
    gp__par_for((size_t)threads, threads, par_worker, pr);

    gp__reader *chain[GP__READ_MAX_PIECES];
    piece *pieces[GP__READ_MAX_PIECES];
    bool whole;
    size_t n = piece_chain(pr, chain, pieces, &whole);
    /* The last piece must end the way the document began: an object closes with '}', a bare
     * array ends right after its ']'. */
    gp__reader *first = pr->pieces[0].r, *last = chain[n - 1];
    if (whole && n > 1)
        whole = first->bare_array ? last->part_bare_end : last->part_object_closed;
    gp_status st = GP_OK;
    if (whole && n > 1)
        st = gp__merge_readers(chain, n, threads);
    if (whole && st == GP_OK) {
        first->t->stats.threads_used = atomic_load(&pr->threads_used);
        first->t->stats.pieces = (uint32_t)n;
        first->err = err;
        err->status = GP_OK;
        err->msg[0] = '\0';
        pr->pieces[0].r = NULL;
        bool progress = opts->progress != NULL;
        par_read_free(pr);
        if (progress)
            opts->progress(opts->progress_ctx, in->file_size, in->file_size);
        return gp__reader_complete(first, GP_OK, out);
    }
    bool nomem = st == GP_ENOMEM;
    for (size_t i = 0; i < n && !nomem; i++)
        nomem = pieces[i]->st == GP_ENOMEM;
    par_read_free(pr);
    if (nomem)
        return gp_error_set(err, GP_ENOMEM, "%s: out of memory", path);
    /* In doubt: read again sequentially, which reports any error exactly. */
    return read_sequential(path, opts, out, err);
}
