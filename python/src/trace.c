/* gpuprof._core.Trace: a job (one trace or a directory of rank traces) read by the C library, with
 * the analyses of the CLI as methods. Each method composes the same public functions as the
 * matching `gpuprof` command and returns its JSON document as Python objects (format="dict"), or
 * the command's text / JSON / CSV as a str. The GIL is released while C works; a read runs on a
 * worker thread so that Ctrl-C interrupts the caller at once. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpuprof/advise.h"
#include "gpuprof/analyze.h"
#include "gpuprof/diff.h"
#include "gpuprof/ops.h"
#include "gpuprof/profiler.h"
#include "gpuprof/report.h"
#include "gpuprof/summary.h"
#include "gpuprof/trace.h"
#include "gpy.h"

typedef struct gpy_trace {
    PyObject_HEAD gp_job *job;
    PyObject *path; /* str */
} gpy_trace;

static PyTypeObject gpy_trace_type;

static void trace_dealloc(gpy_trace *self)
{
    gp_job_free(self->job);
    Py_XDECREF(self->path);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static gpy_trace *trace_wrap(gp_job *job, PyObject *path)
{
    gpy_trace *t = PyObject_New(gpy_trace, &gpy_trace_type);
    if (!t) {
        gp_job_free(job);
        return NULL;
    }
    t->job = job;
    t->path = path;
    Py_INCREF(path);
    return t;
}

gp_job *gpy_trace_job(PyObject *obj)
{
    return PyObject_TypeCheck(obj, &gpy_trace_type) ? ((gpy_trace *)obj)->job : NULL;
}

/* ---- reading, on a worker thread ------------------------------------------------------------ */

typedef struct read_work {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done, abandoned; /* guarded by mu */
    char *path;
    gp_read_opts opts;
    gp_job *job;
    gp_error err;
    gp_status st;
} read_work;

static void work_free(read_work *w)
{
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    gp_job_free(w->job);
    free(w->path);
    free(w);
}

static void *read_main(void *arg)
{
    read_work *w = arg;
    w->st = gp_job_read(w->path, &w->opts, &w->job, &w->err);
    pthread_mutex_lock(&w->mu);
    w->done = true;
    bool abandoned = w->abandoned;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    if (abandoned) /* the caller was interrupted and left: the result is ours to free */
        work_free(w);
    return NULL;
}

/* Waits for w, checking for signals every 20 ms (PyErr_CheckSignals does nothing off the main
 * thread, where Python runs no signal handler). Returns 0 when
 * the read finished, -1 with the signal handler's exception set (w is then abandoned to the
 * worker, which frees it when gp_job_read returns), -2 with the exception set when the read
 * finished as the signal came (w is the caller's to free: the exception is never dropped). */
static int wait_read(read_work *w)
{
    PyThreadState *ts = PyEval_SaveThread();
    pthread_mutex_lock(&w->mu);
    while (!w->done) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 20 * 1000 * 1000;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&w->cv, &w->mu, &until);
        if (w->done)
            continue;
        pthread_mutex_unlock(&w->mu);
        PyEval_RestoreThread(ts);
        int sig = PyErr_CheckSignals();
        ts = PyEval_SaveThread();
        pthread_mutex_lock(&w->mu);
        if (sig < 0) { /* the read may have finished meanwhile: the interrupt still wins */
            int rc = w->done ? -2 : -1;
            w->abandoned = !w->done;
            pthread_mutex_unlock(&w->mu);
            PyEval_RestoreThread(ts);
            return rc;
        }
    }
    pthread_mutex_unlock(&w->mu);
    PyEval_RestoreThread(ts);
    return 0;
}

static PyObject *py_read(PyObject *mod, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"path",           "threads", "keep_python", "keep_memory",
                             "keep_op_shapes", "mmap",    NULL};
    PyObject *pathobj;
    int threads = 0, keep_python = 1, keep_memory = 1, keep_op_shapes = 1, mmap = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$ipppp", kwlist, &pathobj, &threads, &keep_python,
                                     &keep_memory, &keep_op_shapes, &mmap))
        return NULL;
    PyObject *bpath = gpy_fspath(pathobj);
    if (!bpath)
        return NULL;
    PyObject *spath = PyUnicode_DecodeFSDefault(PyBytes_AS_STRING(bpath));
    read_work *w = calloc(1, sizeof *w);
    if (!spath || !w || !(w->path = strdup(PyBytes_AS_STRING(bpath)))) {
        Py_DECREF(bpath);
        Py_XDECREF(spath);
        free(w);
        return spath ? PyErr_NoMemory() : NULL;
    }
    Py_DECREF(bpath);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    gp_read_opts_init(&w->opts);
    w->opts.threads = threads;
    w->opts.keep_python = keep_python;
    w->opts.keep_memory = keep_memory;
    w->opts.keep_op_shapes = keep_op_shapes;
    w->opts.map = mmap;
    w->opts.quiet = true;
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&th, &attr, read_main, w);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        work_free(w);
        Py_DECREF(spath);
        return PyErr_Format(PyExc_RuntimeError, "gpuprof.read: cannot start a thread");
    }
    int waited = wait_read(w);
    if (waited < 0) {
        if (waited == -2)
            work_free(w);
        Py_DECREF(spath);
        return NULL;
    }
    PyObject *out = NULL;
    if (w->st != GP_OK)
        gpy_raise(w->st, &w->err, "read");
    else {
        out = (PyObject *)trace_wrap(w->job, spath);
        w->job = NULL;
    }
    Py_DECREF(spath);
    work_free(w);
    return out;
}

/* read_buffer(data, name): a trace from bytes in memory (a job of one). */
static PyObject *py_read_buffer(PyObject *mod, PyObject *args)
{
    Py_buffer data;
    PyObject *name;
    if (!PyArg_ParseTuple(args, "y*U", &data, &name))
        return NULL;
    gp_job *job = calloc(1, sizeof *job);
    gp_trace **ranks = calloc(1, sizeof *ranks);
    const char *cname = PyUnicode_AsUTF8(name);
    if (!job || !ranks || !cname) {
        free(job);
        free(ranks);
        PyBuffer_Release(&data);
        return cname ? PyErr_NoMemory() : NULL;
    }
    gp_read_opts o;
    gp_read_opts_init(&o);
    o.quiet = true;
    gp_error err = {0};
    gp_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = gp_trace_read_buffer(data.buf, (size_t)data.len, cname, &o, &ranks[0], &err);
    Py_END_ALLOW_THREADS;
    PyBuffer_Release(&data);
    if (st != GP_OK) {
        free(job);
        free(ranks);
        return gpy_raise(st, &err, "read_buffer");
    }
    job->ranks = ranks;
    job->n_ranks = 1;
    return (PyObject *)trace_wrap(job, name);
}

/* Trace of a live profiler: gp_profiler_to_trace on the C handle. */
static PyObject *py_from_profiler(PyObject *mod, PyObject *arg)
{
    gp_profiler *p = PyLong_AsVoidPtr(arg);
    if (!p && PyErr_Occurred())
        return NULL;
    if (!gpy_profiler_handle_ok(p)) { /* a bogus handle raises (issue 38) */
        PyErr_SetString(PyExc_ValueError, "not a live profiler handle");
        return NULL;
    }
    gp_job *job = calloc(1, sizeof *job);
    gp_trace **ranks = calloc(1, sizeof *ranks);
    if (!job || !ranks) {
        free(job);
        free(ranks);
        return PyErr_NoMemory();
    }
    gp_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = gp_profiler_to_trace(p, &ranks[0]);
    Py_END_ALLOW_THREADS;
    if (st != GP_OK) {
        free(job);
        free(ranks);
        return gpy_raise(st, NULL, "to_trace");
    }
    job->ranks = ranks;
    job->n_ranks = 1;
    PyObject *name = PyUnicode_FromString("<profiler>");
    if (!name) {
        gp_job_free(job);
        return NULL;
    }
    PyObject *t = (PyObject *)trace_wrap(job, name);
    Py_DECREF(name);
    return t;
}

/* ---- formats ------------------------------------------------------------------------------- */

typedef enum out_format { OUT_DICT, OUT_JSON, OUT_TEXT, OUT_CSV } out_format;

static int parse_format(const char *s, bool csv_ok, out_format *out)
{
    static const char *const names[] = {"dict", "json", "text", "csv"};
    for (int i = 0; i < 4; i++)
        if (s && strcmp(s, names[i]) == 0 && (i != OUT_CSV || csv_ok)) {
            *out = (out_format)i;
            return 0;
        }
    PyErr_Format(PyExc_ValueError, "format must be one of \"dict\", \"json\", \"text\"%s",
                 csv_ok ? ", \"csv\"" : "");
    return -1;
}

/* The result of a render into b: a str, or json.loads of it for OUT_DICT. */
static PyObject *finish(gpy_buf *b, gp_status st, out_format f, const char *what)
{
    if (st != GP_OK) {
        gpy_buf_discard(b);
        return gpy_raise(st, NULL, what);
    }
    return f == OUT_DICT ? gpy_buf_json(b) : gpy_buf_str(b);
}

/* ---- summary ------------------------------------------------------------------------------- */

/* A sequence of names (None: *mask 0) as the mask of the bits parse gives them (GP_EINVAL:
 * unknown): -1 with TypeError for a string (what: "kinds must be a list of kind names, ...") or
 * ValueError naming the first unknown one (unknown: "unknown event kind"). */
static int names_mask(PyObject *names, gp_status (*parse)(const char *, unsigned *),
                      const char *what, const char *unknown, unsigned *mask)
{
    *mask = 0;
    if (!names || names == Py_None)
        return 0;
    if (PyUnicode_Check(names)) {
        PyErr_SetString(PyExc_TypeError, what);
        return -1;
    }
    PyObject *it = PyObject_GetIter(names);
    if (!it)
        return -1;
    PyObject *k;
    while ((k = PyIter_Next(it))) {
        const char *s = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
        unsigned bit = 0;
        if (s && parse(s, &bit) != GP_OK)
            bit = 0;
        if (!bit && !PyErr_Occurred())
            PyErr_Format(PyExc_ValueError, "%s %R", unknown, k);
        Py_DECREF(k);
        if (!bit) {
            Py_DECREF(it);
            return -1;
        }
        *mask |= bit;
    }
    Py_DECREF(it);
    return PyErr_Occurred() ? -1 : 0;
}

static gp_status kind_bit(const char *s, unsigned *bit)
{
    gp_event_kind kind;
    gp_status st = gp_event_kind_parse(s, &kind);
    if (st == GP_OK)
        *bit = 1u << kind;
    return st;
}

static int parse_kinds(PyObject *kinds, uint32_t *mask)
{
    unsigned m;
    int rc = names_mask(kinds, kind_bit, "kinds must be a list of kind names, e.g. [\"kernel\"]",
                        "unknown event kind", &m);
    *mask = m;
    return rc;
}

static PyObject *trace_summary(gpy_trace *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"kinds", "top", "format", NULL};
    PyObject *kinds = NULL;
    Py_ssize_t top = 10;
    const char *fmt = "dict";
    out_format f;
    gp_summary_opts o;
    gp_summary_opts_init(&o);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|$Ons", kwlist, &kinds, &top, &fmt) ||
        parse_format(fmt, true, &f) < 0 || parse_kinds(kinds, &o.kinds) < 0)
        return NULL;
    if (top < 0)
        return PyErr_Format(PyExc_ValueError, "top must be >= 0");
    o.top_n = top ? (size_t)top : o.top_n;
    gpy_buf b;
    if (gpy_buf_open(&b) < 0)
        return NULL;
    gp_summary *s = NULL;
    gp_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = gp_summary_compute(gp_job_traces(self->job), self->job->n_ranks, &o, &s, NULL);
    if (st == GP_OK) {
        gp_summary_render_opts ro = {.top_n = f == OUT_TEXT ? (size_t)top : 0, .name_width = 40};
        st = f == OUT_TEXT  ? gp_summary_render_text(s, &ro, b.fp)
             : f == OUT_CSV ? gp_summary_render_csv(s, &ro, b.fp)
                            : gp_summary_render_json(s, &ro, b.fp);
    }
    gp_summary_free(s);
    Py_END_ALLOW_THREADS;
    return finish(&b, st, f, "summary");
}

/* ---- analyze ------------------------------------------------------------------------------- */

/* tables=: a sequence of table names (gp_analysis_table_parse: `gpuprof analyze --table`), as a
 * mask in *mask (0: None, every table). */
static int parse_tables(PyObject *tables, unsigned *mask)
{
    return names_mask(tables, gp_analysis_table_parse,
                      "tables must be a list of table names, e.g. [\"memory\"]",
                      "unknown table (see gpuprof analyze --help):", mask);
}

static PyObject *trace_analyze(gpy_trace *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"hta", "steps", "format", "tables", NULL};
    int hta = 0;
    const char *steps = NULL, *fmt = "dict";
    PyObject *tables_obj = NULL;
    out_format f;
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    unsigned tables = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|$pzsO", kwlist, &hta, &steps, &fmt, &tables_obj) ||
        parse_format(fmt, false, &f) < 0 || parse_tables(tables_obj, &tables) < 0)
        return NULL;
    o.hta = hta;
    if (hta && !steps)
        steps = "hta"; /* as the CLI's --hta: HTA's classification and HTA's step filter */
    if (steps && gp_analyze_parse_steps(steps, &o) != GP_OK)
        return PyErr_Format(PyExc_ValueError, "steps must be \"all\", \"hta\" or \"N-M\", not %s",
                            steps);
    gpy_buf b;
    if (gpy_buf_open(&b) < 0)
        return NULL;
    gp_analysis *a = NULL;
    gp_error err = {0};
    gp_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = gp_analyze_job(self->job, &o, &a, &err);
    if (st == GP_OK)
        st = f == OUT_TEXT ? gp_analysis_render_text(a, tables ? tables : GP_AT_ALL, b.fp)
                           : gp_analysis_render_json(a, tables ? tables : GP_AT_ALL, b.fp);
    gp_analysis_free(a);
    Py_END_ALLOW_THREADS;
    if (st != GP_OK && err.msg[0]) {
        gpy_buf_discard(&b);
        return gpy_raise(st, &err, "analyze");
    }
    return finish(&b, st, f, "analyze");
}

/* ---- ops ---------------------------------------------------------------------------------- */

static PyObject *trace_ops(gpy_trace *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"by",          "sort",      "top",    "no_merge",
                             "peak_tflops", "peak_tbps", "format", NULL};
    gp_ops_opts o;
    gp_ops_opts_init(&o);
    const char *by = gp_ops_by_name(o.by), *sort = gp_ops_sort_name(o.sort), *fmt = "dict";
    Py_ssize_t top = 0;
    int no_merge = 0;
    out_format f;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|$ssnpdds", kwlist, &by, &sort, &top, &no_merge,
                                     &o.peak_tflops, &o.peak_tbps, &fmt) ||
        parse_format(fmt, true, &f) < 0)
        return NULL;
    o.no_merge = no_merge;
    if (gp_ops_by_parse(by, &o.by) != GP_OK)
        return PyErr_Format(PyExc_ValueError,
                            "by must be name, shape, module, line, annotation, "
                            "kernel or instance, not %s",
                            by);
    if (gp_ops_sort_parse(sort, &o.sort) != GP_OK)
        return PyErr_Format(PyExc_ValueError, "unknown sort key %s", sort);
    if (top < 0 || o.peak_tflops < 0 || o.peak_tbps < 0)
        return PyErr_Format(PyExc_ValueError, "top and the peaks must be >= 0");
    gpy_buf b;
    if (gpy_buf_open(&b) < 0)
        return NULL;
    gp_ops *ops = NULL;
    gp_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = gp_ops_compute(gp_job_traces(self->job), self->job->n_ranks, &o, &ops, NULL);
    if (st == GP_OK)
        st = f == OUT_TEXT  ? gp_ops_render_text(ops, (size_t)top, b.fp)
             : f == OUT_CSV ? gp_ops_render_csv(ops, (size_t)top, b.fp)
                            : gp_ops_render_json(ops, (size_t)top, b.fp);
    gp_ops_free(ops);
    Py_END_ALLOW_THREADS;
    return finish(&b, st, f, "ops");
}

/* ---- advise ------------------------------------------------------------------------------- */

static int parse_priority(const char *s, gp_priority *out)
{
    for (int p = 0; p <= (int)GP_PRIO_LOW; p++)
        if (strcmp(s, gp_priority_name((gp_priority)p)) == 0) {
            *out = (gp_priority)p;
            return 0;
        }
    PyErr_Format(PyExc_ValueError, "priority must be critical, high, medium or low, not %s", s);
    return -1;
}

/* The trace's path as UTF-8 bytes for titles and labels: a path that is not valid UTF-8 (a bytes
 * path decoded with surrogateescape) gets \xNN escapes instead of failing. NULL with an
 * exception set. */
static PyObject *path_label(gpy_trace *self)
{
    PyObject *raw = PyUnicode_EncodeFSDefault(self->path); /* the bytes of the file name */
    if (!raw)
        return NULL;
    PyObject *text =
        PyUnicode_DecodeUTF8(PyBytes_AS_STRING(raw), PyBytes_GET_SIZE(raw), "backslashreplace");
    Py_DECREF(raw);
    PyObject *out = text ? PyUnicode_AsUTF8String(text) : NULL;
    Py_XDECREF(text);
    return out;
}

static PyObject *trace_advise(gpy_trace *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {
        "priority",        "format",       "gpu_op_max_ms", "cpu_op_min_ms", "batch_min_calls",
        "cache_min_calls", "cache_max_ms", "memory_min_mb", "util_max_pct",  NULL};
    gp_advise_opts thr;
    gp_advise_opts_init(&thr);
    const char *prio = "low", *fmt = "dict";
    unsigned int batch = thr.batch_min_calls, cache = thr.cache_min_calls;
    out_format f;
    gp_priority min_priority;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|$ssddIIddd", kwlist, &prio, &fmt,
                                     &thr.gpu_op_max_ms, &thr.cpu_op_min_ms, &batch, &cache,
                                     &thr.cache_max_ms, &thr.memory_min_mb, &thr.util_max_pct) ||
        parse_format(fmt, false, &f) < 0 || parse_priority(prio, &min_priority) < 0)
        return NULL;
    if (batch < 2 || cache < 2)
        return PyErr_Format(PyExc_ValueError, "batch_min_calls and cache_min_calls need >= 2");
    thr.batch_min_calls = batch;
    thr.cache_min_calls = cache;
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    o.advise = &thr;
    PyObject *label = path_label(self);
    if (!label)
        return NULL;
    gp_advise_render_opts ro = {.min_priority = min_priority, .source = PyBytes_AS_STRING(label)};
    gpy_buf b;
    if (gpy_buf_open(&b) < 0) {
        Py_DECREF(label);
        return NULL;
    }
    gp_analysis *a = NULL;
    gp_error err = {0};
    gp_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = gp_analyze_job(self->job, &o, &a, &err);
    if (st == GP_OK)
        st = f == OUT_TEXT ? gp_advise_render_text(a, &ro, b.fp)
                           : gp_advise_render_json(a, &ro, b.fp);
    gp_analysis_free(a);
    Py_END_ALLOW_THREADS;
    Py_DECREF(label);
    if (st != GP_OK) {
        gpy_buf_discard(&b);
        return gpy_raise(st, &err, "advise");
    }
    return finish(&b, st, f, "advise");
}

/* ---- diff ---------------------------------------------------------------------------------- */

/* The ranks of a sequence of Traces, as one array (each rank trace is one run of the side).
 * Returns a malloc'd array (n in *n) or NULL with an exception set. *hold receives a tuple of the
 * Trace objects: the caller keeps it until the GIL-free work on the array is over, because the
 * caller's sequence may be emptied by another thread meanwhile (a list cleared while the diff runs
 * would otherwise free the traces under it). */
static const gp_trace **runs_of(PyObject *seq, const char *side, size_t *n, PyObject **hold)
{
    *hold = NULL;
    PyObject *items = PySequence_Check(seq) ? PySequence_Tuple(seq) : NULL;
    if (!items) {
        if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_SetString(PyExc_TypeError, "diff: each side is a sequence of Trace objects");
        }
        return NULL;
    }
    size_t total = 0;
    Py_ssize_t m = PyTuple_GET_SIZE(items);
    for (Py_ssize_t i = 0; i < m; i++) {
        PyObject *o = PyTuple_GET_ITEM(items, i);
        if (!PyObject_TypeCheck(o, &gpy_trace_type)) {
            Py_DECREF(items);
            PyErr_Format(PyExc_TypeError, "diff: the %s side holds a %.80s, not a Trace", side,
                         Py_TYPE(o)->tp_name);
            return NULL;
        }
        total += ((gpy_trace *)o)->job->n_ranks;
    }
    const gp_trace **runs = total ? malloc(total * sizeof *runs) : NULL;
    if (!total || !runs) {
        Py_DECREF(items);
        if (total) {
            PyErr_NoMemory();
            return NULL;
        }
        PyErr_Format(PyExc_ValueError, "diff: the %s side is empty", side);
        return NULL;
    }
    size_t k = 0;
    for (Py_ssize_t i = 0; i < m; i++) {
        const gp_job *job = ((gpy_trace *)PyTuple_GET_ITEM(items, i))->job;
        for (size_t r = 0; r < job->n_ranks; r++)
            runs[k++] = job->ranks[r];
    }
    *n = total;
    *hold = items;
    return runs;
}

/* diff(base, current, *, threshold=5.0, alpha=0.05, format="dict", base_label=None,
 * current_label=None): base and current are sequences of Traces (runs). */
static PyObject *py_diff(PyObject *mod, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"base",   "current",    "threshold",     "alpha",
                             "format", "base_label", "current_label", NULL};
    PyObject *base_seq, *cur_seq;
    double threshold_pct = 5.0, alpha = 0.05;
    const char *fmt = "dict", *base_label = NULL, *cur_label = NULL;
    out_format f;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|$ddszz", kwlist, &base_seq, &cur_seq,
                                     &threshold_pct, &alpha, &fmt, &base_label, &cur_label) ||
        parse_format(fmt, false, &f) < 0)
        return NULL;
    if (!(threshold_pct >= 0) || !(alpha > 0 && alpha < 1))
        return PyErr_Format(PyExc_ValueError, "threshold must be >= 0 (%%) and alpha in (0, 1)");
    size_t nb = 0, nc = 0;
    PyObject *hold_b = NULL, *hold_c = NULL;
    const gp_trace **base = runs_of(base_seq, "base", &nb, &hold_b);
    const gp_trace **cur = base ? runs_of(cur_seq, "current", &nc, &hold_c) : NULL;
    gpy_buf b;
    if (!cur || gpy_buf_open(&b) < 0) {
        free(base);
        free(cur);
        Py_XDECREF(hold_b);
        Py_XDECREF(hold_c);
        return NULL;
    }
    gp_diff_opts o;
    gp_diff_opts_init(&o);
    o.threshold = threshold_pct / 100.0;
    o.alpha = alpha;
    gp_diff *d = NULL;
    gp_error err = {0};
    gp_status st;
    /* hold_b and hold_c keep the Trace objects alive for the whole call. */
    Py_BEGIN_ALLOW_THREADS;
    st = gp_diff_compute(base, nb, cur, nc, &o, &d, &err);
    if (st == GP_OK) {
        gp_diff_render_opts ro;
        gp_diff_render_opts_init(&ro);
        ro.base_label = base_label;
        ro.cur_label = cur_label;
        st = f == OUT_TEXT ? gp_diff_render_text(d, &ro, b.fp) : gp_diff_render_json(d, &ro, b.fp);
    }
    gp_diff_free(d);
    Py_END_ALLOW_THREADS;
    free(base);
    free(cur);
    Py_DECREF(hold_b);
    Py_DECREF(hold_c);
    if (st != GP_OK) {
        gpy_buf_discard(&b);
        return gpy_raise(st, &err, "diff");
    }
    return finish(&b, st, f, "diff");
}

/* ---- pictures ------------------------------------------------------------------------------ */

static int parse_weight(const char *s, gp_flame_weight *w)
{
    static const char *const names[] = {"auto", "cpu", "gpu"};
    static const gp_flame_weight values[] = {GP_FLAME_AUTO, GP_FLAME_CPU, GP_FLAME_GPU};
    for (int i = 0; i < 3; i++)
        if (strcmp(s, names[i]) == 0) {
            *w = values[i];
            return 0;
        }
    PyErr_SetString(PyExc_ValueError, "weight must be \"auto\", \"cpu\" or \"gpu\"");
    return -1;
}

/* Parses folded stacks ("a;b;c 123" per line) into a dict {stack: weight_ns}. */
static PyObject *folded_to_dict(gpy_buf *b)
{
    PyObject *text = gpy_buf_str(b);
    if (!text)
        return NULL;
    PyObject *d = PyDict_New();
    PyObject *lines = d ? PyUnicode_Splitlines(text, 0) : NULL;
    Py_DECREF(text);
    if (!lines) {
        Py_XDECREF(d);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(lines); i++) {
        PyObject *line = PyList_GET_ITEM(lines, i);
        PyObject *sep = PyUnicode_FromString(" ");
        PyObject *parts = sep ? PyUnicode_RSplit(line, sep, 1) : NULL;
        Py_XDECREF(sep);
        PyObject *w = parts && PyList_GET_SIZE(parts) == 2
                          ? PyLong_FromUnicodeObject(PyList_GET_ITEM(parts, 1), 10)
                          : NULL;
        if (!w || PyDict_SetItem(d, PyList_GET_ITEM(parts, 0), w) < 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(gpy_Error, "flame: unexpected folded line");
            Py_XDECREF(w);
            Py_XDECREF(parts);
            Py_DECREF(lines);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(w);
        Py_DECREF(parts);
    }
    Py_DECREF(lines);
    return d;
}

static int parse_by(const char *s, gp_flame_by *by)
{
    if (strcmp(s, "stack") == 0 || strcmp(s, "module") == 0) {
        *by = s[0] == 'm' ? GP_FLAME_BY_MODULE : GP_FLAME_BY_STACK;
        return 0;
    }
    PyErr_SetString(PyExc_ValueError, "by must be \"stack\" or \"module\"");
    return -1;
}

static PyObject *trace_flame(gpy_trace *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"path",      "weight",           "title", "by", "min_duration_ms",
                             "max_depth", "group_kernels_ms", NULL};
    PyObject *pathobj = Py_None;
    const char *weight = "auto", *title = NULL, *by = "stack";
    double min_ms = 0, group_ms = 0;
    int max_depth = 0;
    gp_flame_opts o;
    gp_flame_opts_init(&o);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O$szsdid", kwlist, &pathobj, &weight, &title, &by,
                                     &min_ms, &max_depth, &group_ms) ||
        parse_weight(weight, &o.weight) < 0 || parse_by(by, &o.by) < 0)
        return NULL;
    /* the CLI's --min-duration, --max-depth, --group-kernels (0: off) */
    if (!(min_ms >= 0 && min_ms < 9e12) || !(group_ms >= 0 && group_ms < 9e12) || max_depth < 0)
        return PyErr_Format(PyExc_ValueError, "flame: min_duration_ms, group_kernels_ms and "
                                              "max_depth must be >= 0");
    o.min_duration = (gp_ns)(min_ms * 1e6);
    o.group_kernels = (gp_ns)(group_ms * 1e6);
    o.max_depth = max_depth;
    PyObject *bpath = pathobj == Py_None ? NULL : gpy_fspath(pathobj);
    if (pathobj != Py_None && !bpath)
        return NULL;
    gp_flame_format ff = GP_FLAME_FOLDED;
    if (bpath && gp_flame_format_from_path(PyBytes_AS_STRING(bpath), &ff) != GP_OK) {
        Py_DECREF(bpath);
        return PyErr_Format(PyExc_ValueError, "flame: the path must end in .html, .svg, "
                                              ".folded or .speedscope.json");
    }
    gpy_buf b = {0};
    if (!bpath && gpy_buf_open(&b) < 0)
        return NULL;
    gp_flame_tree *tree = NULL, *alt = NULL;
    gp_error err = {0};
    gp_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = gp_flame_build(gp_job_traces(self->job), self->job->n_ranks, &o, &tree, NULL);
    if (st == GP_OK) {
        gp_flame_render_opts ro;
        gp_flame_render_opts_init(&ro);
        ro.title = title;
        if (bpath && ff == GP_FLAME_HTML) /* like `gpuprof flame`: the page's "Frames" switch */
            st = gp_flame_build_alt(gp_job_traces(self->job), self->job->n_ranks, &o, tree, &alt,
                                    NULL);
        ro.alt = alt;
        if (st == GP_OK)
            st = bpath ? gp_flame_write(tree, ff, &ro, PyBytes_AS_STRING(bpath), &err)
                       : gp_flame_render(tree, GP_FLAME_FOLDED, &ro, b.fp, NULL);
    }
    gp_flame_tree_free(alt);
    gp_flame_tree_free(tree);
    Py_END_ALLOW_THREADS;
    if (bpath) {
        Py_DECREF(bpath);
        if (st != GP_OK)
            return gpy_raise(st, &err, "flame");
        Py_RETURN_NONE;
    }
    if (st != GP_OK) {
        gpy_buf_discard(&b);
        return gpy_raise(st, NULL, "flame");
    }
    return folded_to_dict(&b);
}

typedef enum page { PAGE_REPORT, PAGE_TIMELINE } page;

typedef struct tl_figures {
    long long rows, events, span, cpu, gpu, overlap;
} tl_figures;

static PyObject *write_page(gpy_trace *self, PyObject *args, PyObject *kw, page which)
{
    static char *kwlist[] = {"path", "title", NULL};
    static char *tl_kwlist[] = {"path", "title", "critical_path", NULL};
    PyObject *pathobj;
    const char *title = NULL;
    int critical_path = 0; /* timeline: the critical-path overlay (--critical-path) */
    if (which == PAGE_TIMELINE
            ? !PyArg_ParseTupleAndKeywords(args, kw, "O|$zp", tl_kwlist, &pathobj, &title,
                                           &critical_path)
            : !PyArg_ParseTupleAndKeywords(args, kw, "O|$z", kwlist, &pathobj, &title))
        return NULL;
    PyObject *label = title ? NULL : path_label(self);
    if (!title && !label)
        return NULL;
    if (!title)
        title = PyBytes_AS_STRING(label);
    PyObject *bpath = gpy_fspath(pathobj);
    if (!bpath) {
        Py_XDECREF(label);
        return NULL;
    }
    gp_error err = {0};
    gp_status st;
    tl_figures tl_stats = {0};
    Py_BEGIN_ALLOW_THREADS;
    if (which == PAGE_REPORT) {
        gp_report_bundle *bundle = NULL;
        st = gp_report_bundle_build(self->job, NULL, &bundle);
        if (st == GP_OK)
            st = gp_dashboard_write_html(bundle->dashboard, title, PyBytes_AS_STRING(bpath), &err);
        gp_report_bundle_free(bundle);
    } else {
        gp_timeline *tl = NULL;
        gp_timeline_opts to;
        gp_timeline_opts_init(&to);
        to.critical_path = critical_path != 0;
        st = gp_timeline_build(gp_job_traces(self->job), self->job->n_ranks, &to, &tl, NULL);
        if (st == GP_OK)
            st = gp_timeline_write_html(tl, title, PyBytes_AS_STRING(bpath), &err);
        if (st == GP_OK) /* the figures of `gpuprof timeline --json` */
            tl_stats = (tl_figures){(long long)tl->n_rows,
                                    (long long)tl->n_events,
                                    (long long)(tl->end - tl->start),
                                    (long long)tl->cpu_active,
                                    (long long)tl->gpu_active,
                                    (long long)tl->overlap};
        gp_timeline_free(tl);
    }
    Py_END_ALLOW_THREADS;
    PyObject *out = NULL;
    if (st != GP_OK)
        gpy_raise(st, &err, which == PAGE_REPORT ? "report" : "timeline");
    else if (which == PAGE_REPORT)
        out = Py_NewRef(Py_None);
    else
        out = Py_BuildValue("{s:N,s:L,s:L,s:L,s:L,s:L,s:L}", "output",
                            PyUnicode_DecodeFSDefault(PyBytes_AS_STRING(bpath)), "rows",
                            tl_stats.rows, "events", tl_stats.events, "span_ns", tl_stats.span,
                            "cpu_active_ns", tl_stats.cpu, "gpu_busy_ns", tl_stats.gpu,
                            "overlap_ns", tl_stats.overlap);
    Py_DECREF(bpath);
    Py_XDECREF(label);
    return out;
}

static PyObject *trace_report(gpy_trace *self, PyObject *args, PyObject *kw)
{
    return write_page(self, args, kw, PAGE_REPORT);
}

static PyObject *trace_timeline(gpy_trace *self, PyObject *args, PyObject *kw)
{
    return write_page(self, args, kw, PAGE_TIMELINE);
}

static PyObject *trace_write_chrome(gpy_trace *self, PyObject *arg)
{
    if (self->job->n_ranks != 1)
        return PyErr_Format(PyExc_ValueError,
                            "write_chrome writes one trace; this job has %zu ranks",
                            self->job->n_ranks);
    PyObject *bpath = gpy_fspath(arg);
    if (!bpath)
        return NULL;
    gp_error err = {0};
    gp_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = gp_trace_write_chrome(self->job->ranks[0], PyBytes_AS_STRING(bpath), &err);
    Py_END_ALLOW_THREADS;
    Py_DECREF(bpath);
    if (st != GP_OK)
        return gpy_raise(st, &err, "write_chrome");
    Py_RETURN_NONE;
}

/* ---- properties ---------------------------------------------------------------------------- */

static PyObject *trace_get_path(gpy_trace *self, void *c)
{
    Py_INCREF(self->path);
    return self->path;
}

static PyObject *trace_get_ranks(gpy_trace *self, void *c)
{
    return PyLong_FromSize_t(self->job->n_ranks);
}

static PyObject *trace_get_events(gpy_trace *self, void *c)
{
    size_t n = 0;
    for (size_t i = 0; i < self->job->n_ranks; i++)
        n += gp_trace_event_count(self->job->ranks[i]);
    return PyLong_FromSize_t(n);
}

static PyObject *trace_get_has_gpu(gpy_trace *self, void *c)
{
    bool any = false;
    for (size_t i = 0; i < self->job->n_ranks && !any; i++)
        any = gp_trace_has_gpu(self->job->ranks[i]);
    return PyBool_FromLong(any);
}

static PyObject *trace_get_span(gpy_trace *self, void *c)
{
    gp_ns lo = 0, hi = 0;
    for (size_t i = 0; i < self->job->n_ranks; i++) {
        gp_ns s, e;
        gp_trace_span(self->job->ranks[i], &s, &e);
        if (i == 0 || s < lo)
            lo = s;
        if (i == 0 || e > hi)
            hi = e;
    }
    return Py_BuildValue("(LL)", (long long)lo, (long long)hi);
}

static PyObject *trace_repr(gpy_trace *self)
{
    return PyUnicode_FromFormat("<gpuprof.Trace %R: %zu rank(s)>", self->path, self->job->n_ranks);
}

static PyMethodDef trace_methods[] = {
    {"summary", (PyCFunction)(void (*)(void))trace_summary, METH_VARARGS | METH_KEYWORDS,
     "summary(*, kinds=None, top=10, format=\"dict\"): per-name statistics per event kind "
     "(`gpuprof summary`; schema in docs/summary.md)."},
    {"analyze", (PyCFunction)(void (*)(void))trace_analyze, METH_VARARGS | METH_KEYWORDS,
     "analyze(*, hta=False, steps=None, format=\"dict\", tables=None): hta=True is the CLI's "
     "--hta, tables its --table names; HTA's "
     "breakdowns, launch statistics, "
     "findings... (`gpuprof analyze`; schema gpuprof.analyze/1 in docs/analyses.md)."},
    {"ops", (PyCFunction)(void (*)(void))trace_ops, METH_VARARGS | METH_KEYWORDS,
     "ops(*, by=\"name\", sort=\"self_gpu\", top=0, no_merge=False, peak_tflops=0, "
     "peak_tbps=0, format=\"dict\"): `gpuprof ops` (docs/ops.md)."},
    {"advise", (PyCFunction)(void (*)(void))trace_advise, METH_VARARGS | METH_KEYWORDS,
     "advise(*, priority=\"low\", format=\"dict\", gpu_op_max_ms=1, cpu_op_min_ms=10, "
     "batch_min_calls=10, cache_min_calls=100, cache_max_ms=1, memory_min_mb=100, "
     "util_max_pct=50): `gpuprof advise` (schema gpuprof.advise/1, docs/advise.md)."},
    {"flame", (PyCFunction)(void (*)(void))trace_flame, METH_VARARGS | METH_KEYWORDS,
     "flame(path=None, *, weight=\"auto\", title=None, by=\"stack\"): writes the flame graph to "
     "path (.html, .svg, .folded, .speedscope.json), or returns {\"a;b;c\": self_ns} without "
     "one; by=\"module\" makes the frames the nn.Module hierarchy (`gpuprof flame --by module`)."},
    {"report", (PyCFunction)(void (*)(void))trace_report, METH_VARARGS | METH_KEYWORDS,
     "report(path, *, title=None): writes the one-page dashboard (`gpuprof report`)."},
    {"timeline", (PyCFunction)(void (*)(void))trace_timeline, METH_VARARGS | METH_KEYWORDS,
     "timeline(path, *, title=None, critical_path=False): writes the timeline page (`gpuprof "
     "timeline [--critical-path]`)."},
    {"view", (PyCFunction)(void (*)(void))gpy_trace_view, METH_VARARGS | METH_KEYWORDS,
     "view(name, *, title=None, weight=None, by=None) -> str: the view name of gpuprof.views() "
     "(a page's HTML or a document's JSON), the bytes of its server route and CLI command."},
    {"write_chrome", (PyCFunction)trace_write_chrome, METH_O,
     "write_chrome(path): re-writes a one-rank trace as Kineto-compatible JSON (`convert`)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef trace_getset[] = {
    {"path", (getter)trace_get_path, NULL, "The file or directory read.", NULL},
    {"ranks", (getter)trace_get_ranks, NULL, "Number of rank traces.", NULL},
    {"events", (getter)trace_get_events, NULL, "Number of events over all ranks.", NULL},
    {"has_gpu", (getter)trace_get_has_gpu, NULL, "Any kernel, memcpy or memset.", NULL},
    {"span_ns", (getter)trace_get_span, NULL, "(first start, last end) in ns.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject gpy_trace_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gpuprof._core.Trace",
    .tp_basicsize = sizeof(gpy_trace),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A trace or a job of rank traces read by gpuprof.read().",
    .tp_dealloc = (destructor)trace_dealloc,
    .tp_repr = (reprfunc)trace_repr,
    .tp_methods = trace_methods,
    .tp_getset = trace_getset,
};

static PyMethodDef module_functions[] = {
    {"read", (PyCFunction)(void (*)(void))py_read, METH_VARARGS | METH_KEYWORDS,
     "read(path, *, threads=0, keep_python=True, keep_memory=True, keep_op_shapes=True, "
     "mmap=False) -> Trace: a Kineto / PyTorch-profiler trace (.json, .json.gz), a gpuprof "
     "profile, or a directory of rank traces. mmap=True parses a plain file in place, mapped, "
     "instead of reading it through read(2) (not for a file another process may rewrite "
     "meanwhile). Ctrl-C interrupts it."},
    {"diff", (PyCFunction)(void (*)(void))py_diff, METH_VARARGS | METH_KEYWORDS,
     "diff(base, current, *, threshold=5.0, alpha=0.05, format=\"dict\", base_label=None, "
     "current_label=None): `gpuprof diff` of two sequences of Traces (each rank trace a run)."},
    {"read_buffer", py_read_buffer, METH_VARARGS,
     "read_buffer(data: bytes, name: str) -> Trace: a trace held in memory."},
    {"_from_profiler", (PyCFunction)py_from_profiler, METH_O,
     "The Trace of a live profiler (internal)."},
    {NULL, NULL, 0, NULL},
};

int gpy_trace_init(PyObject *m)
{
    if (PyType_Ready(&gpy_trace_type) < 0 ||
        PyModule_AddObjectRef(m, "Trace", (PyObject *)&gpy_trace_type) < 0)
        return -1;
    return PyModule_AddFunctions(m, module_functions);
}
