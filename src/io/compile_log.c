/* The TORCH_TRACE reader: a file, a buffer or a directory of rank logs into a gp_compile_log
 * (gpuprof/compile.h). Input is streamed line by line through core/input (plain or gzip, detected
 * by its magic bytes); a line is held only while it is handled, so memory follows what the model
 * keeps, plus the longest line. Records go to compile_records.c. Also here: warnings, ranks,
 * reading a payload's text back, freeing the model. docs/internals/compile.md. */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/msort.h"
#include "core/input.h"
#include "core/util.h"
#include "io/compile_log_internal.h"

#define CHUNK ((size_t)1 << 20)
#define PROGRESS_EVERY ((uint64_t)4 << 20)

size_t gp__clog_max_read;

const char *gp__clog_intern(gp_compile_log *log, const char *s, size_t len)
{
    uint32_t id;
    if (gp__strtab_intern(log->strings, s, len, &id) != GP_OK)
        return NULL;
    return gp__strtab_get(log->strings, id);
}

gp_status gp__clog_warn(gp__clog_reader *r, const char *fmt, ...)
{
    gp_compile_log *log = r->log;
    gp__clog_priv *pv = log->priv;
    log->warnings_total++;
    if (log->n_warnings >= GP__CLOG_MAX_WARNINGS)
        return GP_OK;
    char msg[768];
    int n = snprintf(msg, sizeof msg, "%s: line %llu: ", r->name, (unsigned long long)r->lineno);
    if (n < 0 || (size_t)n >= sizeof msg)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);
    const char *s = gp__clog_intern(log, msg, strlen(msg));
    if (!s || gp__grow((void **)&log->warnings, &pv->cap_warnings, sizeof *log->warnings,
                       log->n_warnings + 1) != GP_OK)
        return GP_ENOMEM;
    log->warnings[log->n_warnings++] = s;
    return GP_OK;
}

/* The JSON part of a record line: after a glog prefix "V1206 15:18:15.925000 1500233
 * path/file.py:1288] ". NULL when the line has no such prefix. */
static const char *glog_body(const char *s, size_t len)
{
    if (len < 24 || !strchr("VIWEC", s[0]) || s[5] != ' ' || s[8] != ':' || s[11] != ':')
        return NULL;
    for (int i = 1; i <= 4; i++)
        if (s[i] < '0' || s[i] > '9')
            return NULL;
    const char *p = memmem(s + 20, len - 20, "] ", 2);
    return p ? p + 2 : NULL;
}

typedef struct line_ctx {
    gp__clog_reader *r;
    gp_compile_file *f;
    bool warned_stray;
} line_ctx;

static gp_status handle_line(line_ctx *c, const char *s, size_t len, uint64_t off, uint64_t end)
{
    gp__clog_reader *r = c->r;
    gp_compile_read_stats *fs = &c->f->stats, *ls = &r->log->stats;
    r->lineno++;
    fs->lines++;
    ls->lines++;
    if (len > 0 && s[len - 1] == '\r')
        len--;
    if (len == 0) { /* tlparse drops blank lines too; a payload goes on after them */
        fs->blank_lines++;
        ls->blank_lines++;
        return GP_OK;
    }
    if (s[0] == '\t') {
        fs->payload_lines++;
        ls->payload_lines++;
        if (r->in_payload)
            return gp__clog_payload_line(r, s + 1, len - 1, off, end);
        fs->stray_payload++;
        ls->stray_payload++;
        if (c->warned_stray)
            return GP_OK;
        c->warned_stray = true;
        return gp__clog_warn(r, "payload line without a record announcing it, skipped (further "
                                "ones are only counted)");
    }
    gp_status st = gp__clog_end_payload(r);
    if (st != GP_OK)
        return st;
    const char *body = glog_body(s, len);
    if (!body) {
        fs->bad_prefix++;
        ls->bad_prefix++;
        return gp__clog_warn(r, "no glog prefix (\"V1206 15:18:15.925000 123 file.py:1] \"), "
                                "line skipped");
    }
    return gp__clog_record(r, body, len - (size_t)(body - s), end);
}

/* Reads every line of in. */
static gp_status read_lines(line_ctx *c, gp__input *in, const gp_compile_read_opts *o,
                            uint64_t *progress_base, uint64_t total, gp_error *err)
{
    /* A small input is read in one buffer of its size (the fuzz targets read thousands). */
    size_t cap = in->size_hint && in->size_hint < CHUNK ? (size_t)in->size_hint + 1 : CHUNK;
    size_t have = 0;
    char *buf = malloc(cap);
    if (!buf)
        return gp_error_set(err, GP_ENOMEM, "out of memory");
    uint64_t base = 0, next_progress = PROGRESS_EVERY;
    gp_status st = GP_OK;
    for (;;) {
        if (have == cap) {
            /* Doubling up to the limit exactly (a small input starts at its own size). */
            size_t ncap = cap >= GP__CLOG_MAX_LINE ? cap + 1 : GP_MIN(cap * 2, GP__CLOG_MAX_LINE);
            char *nb = ncap <= GP__CLOG_MAX_LINE ? realloc(buf, ncap) : NULL;
            if (!nb) {
                st = ncap > GP__CLOG_MAX_LINE
                         ? gp_error_set(err, GP_ELIMIT,
                                        "%s: line %llu (byte %llu): longer than %zu MiB, the "
                                        "reader's limit",
                                        c->r->name, (unsigned long long)c->r->lineno + 1,
                                        (unsigned long long)base, GP__CLOG_MAX_LINE >> 20)
                         : gp_error_set(err, GP_ENOMEM, "out of memory");
                break;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got;
        if ((st = gp__input_read(in, buf + have, cap - have, &got, err)) != GP_OK)
            break;
        size_t scan = have, start = 0;
        have += got;
        if (o && o->progress && gp__input_raw_pos(in) + *progress_base >= next_progress) {
            o->progress(o->progress_ctx, *progress_base + gp__input_raw_pos(in), total);
            next_progress = gp__input_raw_pos(in) + PROGRESS_EVERY;
        }
        if (got == 0) { /* the end: a last line without a newline */
            if (have > 0)
                st = handle_line(c, buf, have, base, base + have);
            break;
        }
        for (char *nl; st == GP_OK && (nl = memchr(buf + scan, '\n', have - scan)) != NULL;) {
            size_t e = (size_t)(nl - buf);
            st = handle_line(c, buf + start, e - start, base + start, base + e + 1);
            start = scan = e + 1;
        }
        if (st != GP_OK)
            break;
        memmove(buf, buf + start, have - start);
        have -= start;
        base += start;
    }
    free(buf);
    *progress_base += gp__input_raw_pos(in);
    c->f->stats.bytes = in->consumed;
    c->r->log->stats.bytes += in->consumed;
    if (st == GP_ENOMEM)
        gp_error_set(err, GP_ENOMEM, "out of memory");
    return st;
}

static gp_status new_log(gp_compile_log **out)
{
    gp_compile_log *log = calloc(1, sizeof *log);
    gp__clog_priv *pv = calloc(1, sizeof *pv);
    gp__strtab *t = calloc(1, sizeof *t);
    if (!log || !pv || !t || gp__strtab_init(t) != GP_OK) {
        free(log);
        free(pv);
        free(t);
        return GP_ENOMEM;
    }
    log->priv = pv;
    log->strings = t;
    *out = log;
    return GP_OK;
}

/* _rank_N in a file name, or -1. */
static int32_t rank_in_name(const char *path)
{
    const char *b = strrchr(path, '/');
    const char *p = strstr(b ? b + 1 : path, "rank_");
    if (!p || p[5] < '0' || p[5] > '9')
        return -1;
    long v = strtol(p + 5, NULL, 10);
    return v >= 0 && v < INT32_MAX ? (int32_t)v : -1;
}

/* Reads one file (or the buffer when in is already open) as file index log->n_files. */
static gp_status read_one(gp_compile_log *log, const char *path, gp__input *in,
                          const gp_compile_read_opts *o, uint64_t *progress_base, uint64_t total,
                          gp_error *err)
{
    gp__clog_priv *pv = log->priv;
    const char *name = gp__clog_intern(log, path, strlen(path));
    if (!name || gp__grow((void **)&log->files, &pv->cap_files, sizeof *log->files,
                          log->n_files + 1) != GP_OK)
        return gp_error_set(err, GP_ENOMEM, "out of memory");
    gp_compile_file *f = &log->files[log->n_files];
    memset(f, 0, sizeof *f);
    in->max_read = gp__clog_max_read;
    f->path = name;
    f->compressed = in->compressed;
    size_t first_unit = log->n_units;
    gp__clog_reader r = {.log = log, .file = (uint32_t)log->n_files, .name = name, .rank = -1};
    log->n_files++;
    gp_status st = gp__imap_init(&r.unit_index, 64);
    line_ctx c = {.r = &r, .f = f};
    if (st == GP_OK)
        st = read_lines(&c, in, o, progress_base, total, err);
    if (st == GP_OK)
        st = gp__clog_end_payload(&r);
    if (st == GP_ENOMEM)
        gp_error_set(err, GP_ENOMEM, "out of memory");
    if (st == GP_OK && f->stats.records == 0 && f->stats.lines > f->stats.blank_lines)
        st = gp_error_set(err, GP_EPARSE,
                          "%s: not a TORCH_TRACE log: none of its %llu lines is a record (a glog "
                          "prefix followed by a JSON object)",
                          name, (unsigned long long)f->stats.lines);
    f->rank = r.rank;
    if (f->rank < 0) {
        f->rank = rank_in_name(path);
        f->rank_from_name = true;
    }
    for (size_t i = first_unit; i < log->n_units; i++)
        log->units[i].rank = f->rank;
    gp__clog_reader_free(&r);
    return st;
}

bool gp_compile_log_name(const char *n)
{
    size_t l = strlen(n);
    return n[0] != '.' && ((l > 4 && strcmp(n + l - 4, ".log") == 0) ||
                           (l > 7 && strcmp(n + l - 7, ".log.gz") == 0) ||
                           strncmp(n, "dedicated_log_torch_trace", 25) == 0);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The log files of a directory, sorted by name. */
static gp_status list_dir(const char *path, char ***names, size_t *n, uint64_t *total,
                          gp_error *err)
{
    DIR *d = opendir(path);
    if (!d)
        return gp_error_set(err, gp__status_of_errno(errno), "%s: %s", path, strerror(errno));
    size_t cap = 0;
    gp_status st = GP_OK;
    for (struct dirent *de; st == GP_OK && (de = readdir(d)) != NULL;) {
        if (!gp_compile_log_name(de->d_name))
            continue;
        size_t l = strlen(path) + strlen(de->d_name) + 2;
        char *full = malloc(l);
        struct stat sb;
        if (!full || gp__grow((void **)names, &cap, sizeof **names, *n + 1) != GP_OK) {
            free(full);
            st = gp_error_set(err, GP_ENOMEM, "out of memory");
            break;
        }
        snprintf(full, l, "%s/%s", path, de->d_name);
        if (stat(full, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            free(full);
            continue;
        }
        *total += (uint64_t)sb.st_size;
        (*names)[(*n)++] = full;
    }
    closedir(d);
    if (st == GP_OK && *n == 0)
        st = gp_error_set(err, GP_EIO,
                          "%s: no TORCH_TRACE logs in this directory (*.log, *.log.gz)", path);
    if (st == GP_OK)
        gp__msort(*names, *n, sizeof **names, cmp_str);
    return st;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Files without a rank get the lowest numbers no other file has, in file order: the ranks taken,
 * sorted, are walked once (a scan of every file per candidate was quadratic in the files). */
static gp_status assign_ranks(gp_compile_log *log)
{
    int32_t *taken = malloc((log->n_files ? log->n_files : 1) * sizeof *taken);
    if (!taken)
        return GP_ENOMEM;
    size_t n_taken = 0, p = 0;
    bool any_missing = false;
    for (size_t i = 0; i < log->n_files; i++) {
        if (log->files[i].rank >= 0)
            taken[n_taken++] = log->files[i].rank;
        else
            any_missing = true;
    }
    gp__msort(taken, n_taken, sizeof *taken, cmp_i32);
    int32_t next = 0;
    for (size_t i = 0; i < log->n_files && any_missing; i++) {
        gp_compile_file *f = &log->files[i];
        if (f->rank >= 0)
            continue;
        for (;;) { /* the lowest rank >= next that is not taken */
            while (p < n_taken && taken[p] < next)
                p++;
            if (p == n_taken || taken[p] != next)
                break;
            next++;
        }
        f->rank = next++;
    }
    free(taken);
    if (any_missing)
        for (size_t u = 0; u < log->n_units; u++)
            log->units[u].rank = log->files[log->units[u].file].rank;
    return GP_OK;
}

/* The units cmp_compile sorts indices of (gp__msort takes no context; reads may run on several
 * threads). */
static _Thread_local const gp_compile_unit *share_units;

/* Same compile: file, frame, frame compile and compiled autograd id (attempts differ). */
static bool same_compile(const gp_compile_unit *x, const gp_compile_unit *y)
{
    return x->file == y->file && x->frame_id == y->frame_id &&
           x->frame_compile_id == y->frame_compile_id &&
           x->compiled_autograd_id == y->compiled_autograd_id;
}

/* Order of unit indices by compile, then index. */
static int cmp_compile(const void *a, const void *b)
{
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    const gp_compile_unit *x = &share_units[i], *y = &share_units[j];
    if (x->file != y->file)
        return x->file < y->file ? -1 : 1;
    if (x->frame_id != y->frame_id)
        return x->frame_id < y->frame_id ? -1 : 1;
    if (x->frame_compile_id != y->frame_compile_id)
        return x->frame_compile_id < y->frame_compile_id ? -1 : 1;
    if (x->compiled_autograd_id != y->compiled_autograd_id)
        return x->compiled_autograd_id < y->compiled_autograd_id ? -1 : 1;
    return (i > j) - (i < j);
}

/* Attempts of one compile share its function: records of attempt 0 (dynamo_start, graphs) come
 * before a restart, compilation_metrics often only for the last attempt. A unit without a name
 * takes that of the first unit (in log order) of its compile that has one. The units are sorted
 * by compile once (a scan of every unit per unnamed unit was quadratic in the units). */
static gp_status share_names(gp_compile_log *log)
{
    size_t n = log->n_units;
    uint32_t *ix = malloc((n ? n : 1) * sizeof *ix);
    if (!ix)
        return GP_ENOMEM;
    for (size_t i = 0; i < n; i++)
        ix[i] = (uint32_t)i;
    share_units = log->units;
    gp__msort(ix, n, sizeof *ix, cmp_compile);
    share_units = NULL;
    for (size_t g = 0, e; g < n; g = e) {
        const gp_compile_unit *named = NULL;
        for (e = g; e < n && same_compile(&log->units[ix[g]], &log->units[ix[e]]); e++)
            if (!named && log->units[ix[e]].co_name[0])
                named = &log->units[ix[e]];
        for (size_t k = g; named && k < e; k++) {
            gp_compile_unit *u = &log->units[ix[k]];
            if (!u->co_name[0]) {
                u->co_name = named->co_name;
                u->co_filename = named->co_filename;
                u->co_firstlineno = named->co_firstlineno;
            }
        }
    }
    free(ix);
    return GP_OK;
}

static gp_status finish_log(gp_compile_log *log)
{
    if (assign_ranks(log) != GP_OK || share_names(log) != GP_OK)
        return GP_ENOMEM;
    bool compiled = false;
    for (size_t i = 0; i < log->n_units && !compiled; i++)
        compiled = log->units[i].has_start || log->units[i].has_metrics;
    const gp_compile_export *x = &log->export_info;
    log->is_export = x->exported_programs > 0 ||
                     (!compiled && (x->guards_added || x->unbacked_symbols || x->data_dependent ||
                                    x->missing_fake_kernel || x->mismatched_fake_kernel));
    return GP_OK;
}

/* Ends a read whose records gave status st: on success finishes log (ranks, shared names, export
 * flag) and hands it to *out; on any failure (st, or out of memory finishing) frees log and
 * returns the status, *out untouched. */
static gp_status hand_over(gp_compile_log *log, gp_status st, gp_compile_log **out, gp_error *err)
{
    if (st != GP_OK) {
        gp_compile_log_free(log);
        return st;
    }
    if (finish_log(log) != GP_OK) {
        gp_compile_log_free(log);
        return gp_error_set(err, GP_ENOMEM, "out of memory");
    }
    *out = log;
    return GP_OK;
}

gp_status gp_compile_log_read(const char *path, const gp_compile_read_opts *opts,
                              gp_compile_log **out, gp_error *err)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return gp_error_set(err, gp__status_of_errno(errno), "%s: %s", path, strerror(errno));
    gp_compile_log *log;
    if (new_log(&log) != GP_OK)
        return gp_error_set(err, GP_ENOMEM, "out of memory");
    char **names = NULL;
    size_t n = 0;
    uint64_t total = 0, done = 0;
    gp_status st = GP_OK;
    bool regular_only = opts && opts->regular_files_only;
    ((gp__clog_priv *)log->priv)->regular_only = regular_only;
    if (S_ISDIR(sb.st_mode)) {
        st = list_dir(path, &names, &n, &total, err);
    } else {
        names = malloc(sizeof *names);
        if (!names || !(names[0] = strdup(path)))
            st = gp_error_set(err, GP_ENOMEM, "out of memory");
        else
            n = 1;
        total = (uint64_t)sb.st_size;
    }
    for (size_t i = 0; st == GP_OK && i < n; i++) {
        gp__input in;
        if ((st = gp__input_open(&in, names[i], regular_only, err)) != GP_OK)
            break;
        st = read_one(log, names[i], &in, opts, &done, total, err);
        gp__input_close(&in);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return hand_over(log, st, out, err);
}

gp_status gp_compile_log_read_buffer(const char *data, size_t len, const char *name,
                                     gp_compile_log **out, gp_error *err)
{
    gp_compile_log *log;
    if (new_log(&log) != GP_OK)
        return gp_error_set(err, GP_ENOMEM, "out of memory");
    gp__clog_priv *pv = log->priv;
    pv->mem = data;
    pv->mem_len = len;
    gp__input in;
    gp__input_open_mem(&in, data, len, name);
    uint64_t done = 0;
    gp_status st = read_one(log, name, &in, NULL, &done, len, err);
    gp__input_close(&in);
    return hand_over(log, st, out, err);
}

void gp_compile_log_free(gp_compile_log *log)
{
    if (!log)
        return;
    for (size_t i = 0; i < log->n_units; i++) {
        gp_compile_unit *u = &log->units[i];
        free(u->stack);
        free((void *)u->restart_reasons);
        free(u->phases);
        free(u->payloads);
    }
    free(log->units);
    free(log->files);
    free(log->payloads);
    free((void *)log->kernel_names);
    free(log->kinds);
    free((void *)log->warnings);
    if (log->strings) {
        gp__strtab_free(log->strings);
        free(log->strings);
    }
    free(log->priv);
    free(log);
}

/* ---- payload text ---- */

struct gp_compile_payload_reader {
    const gp_compile_log *log;
    gp__input in;
    bool open;
    uint32_t file;
    uint64_t pos;
    char *chunk;
    size_t chunk_cap;
    gp__buf out;
};

gp_status gp_compile_payload_open(const gp_compile_log *log, gp_compile_payload_reader **out)
{
    gp_compile_payload_reader *r = calloc(1, sizeof *r);
    /* One chunk, or the largest file's size when every file is smaller. */
    uint64_t largest = 0;
    for (size_t i = 0; i < log->n_files; i++)
        largest = GP_MAX(largest, log->files[i].stats.bytes);
    size_t cap = largest < CHUNK ? (size_t)largest + 1 : CHUNK;
    if (!r || !(r->chunk = malloc(cap))) {
        free(r);
        return GP_ENOMEM;
    }
    r->log = log;
    r->chunk_cap = cap;
    *out = r;
    return GP_OK;
}

static gp_status reopen(gp_compile_payload_reader *r, uint32_t file, gp_error *err)
{
    if (r->open)
        gp__input_close(&r->in);
    r->open = false;
    const gp__clog_priv *pv = r->log->priv;
    const char *path = r->log->files[file].path;
    if (pv->mem)
        gp__input_open_mem(&r->in, pv->mem, pv->mem_len, path);
    else if (gp__input_open(&r->in, path, pv->regular_only, err) != GP_OK)
        return err ? err->status : GP_EIO;
    r->open = true;
    r->file = file;
    r->pos = 0;
    return GP_OK;
}

/* Text-building state of one payload: at the start of a line; a '\r' held back (dropped when
 * a newline follows, as the reader drops it). */
typedef struct text_state {
    bool line_start;
    bool cr;
} text_state;

static gp_status put_char(gp__buf *out, text_state *t, char c)
{
    if (t->cr && c != '\n' && gp__buf_append(out, "\r", 1) != GP_OK)
        return GP_ENOMEM;
    t->cr = false;
    if (t->line_start && c == '\n')
        return GP_OK; /* a blank line: not part of the payload */
    if (c == '\r') {
        t->cr = true;
        return GP_OK;
    }
    if (t->line_start && c == '\t') {
        t->line_start = false;
        return GP_OK;
    }
    t->line_start = c == '\n';
    return gp__buf_append(out, &c, 1);
}

/* Reads n bytes at the reader's position in chunk-sized pieces, handing each to the text builder
 * when build is set (up to max bytes of text). */
static gp_status advance(gp_compile_payload_reader *r, uint64_t n, bool build, size_t max,
                         text_state *t, gp_error *err)
{
    while (n > 0) {
        size_t want = n < r->chunk_cap ? (size_t)n : r->chunk_cap, got;
        gp_status st = gp__input_read(&r->in, r->chunk, want, &got, err);
        if (st != GP_OK)
            return st;
        if (got == 0)
            return gp_error_set(err, GP_EIO,
                                "%s: ends before a payload it had (changed since it "
                                "was read?)",
                                r->log->files[r->file].path);
        r->pos += got;
        n -= got;
        for (size_t i = 0; build && i < got && r->out.len < max; i++)
            if (put_char(&r->out, t, r->chunk[i]) != GP_OK)
                return gp_error_set(err, GP_ENOMEM, "out of memory");
    }
    return GP_OK;
}

gp_status gp_compile_payload_text(gp_compile_payload_reader *r, const gp_compile_payload *p,
                                  size_t max, const char **text, size_t *len, gp_error *err)
{
    gp_status st = GP_OK;
    if (!r->open || r->file != p->file || r->pos > p->offset)
        st = reopen(r, p->file, err);
    r->out.len = 0;
    text_state ts = {true, false};
    if (st == GP_OK)
        st = advance(r, p->offset - r->pos, false, 0, &ts, err);
    if (st == GP_OK)
        st = advance(r, p->raw_bytes, true, max, &ts, err);
    if (r->out.len > max)
        r->out.len = max;
    if (st == GP_OK && r->out.len > 0 && r->out.data[r->out.len - 1] == '\n' &&
        r->out.len > p->bytes)
        r->out.len--;
    if (st == GP_OK && gp__buf_terminate(&r->out) != GP_OK)
        st = gp_error_set(err, GP_ENOMEM, "out of memory");
    if (st != GP_OK) {
        if (r->open)
            gp__input_close(&r->in);
        r->open = false;
        return st;
    }
    *text = r->out.data ? r->out.data : "";
    *len = r->out.len;
    return GP_OK;
}

void gp_compile_payload_close(gp_compile_payload_reader *r)
{
    if (!r)
        return;
    if (r->open)
        gp__input_close(&r->in);
    free(r->chunk);
    gp__buf_free(&r->out);
    free(r);
}
