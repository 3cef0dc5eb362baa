/* gpuprof._core.compile: `gpuprof compile` (torch.compile analysis, include/gpuprof/compile.h) for
 * Python. It composes the same public functions as the command (src/app/cli/cmd_compile.c): read
 * the TORCH_TRACE log and analyse it, analyse the compiled regions of up to two traces and their
 * speedup, render one gp_compile_report, so format="dict" is, key for key, what
 * `gpuprof compile ... --json` prints. The GIL is released while C reads, analyses and renders. */
#include <stdlib.h>
#include <string.h>

#include "gpuprof/compile.h"
#include "gpuprof/trace.h"
#include "gpy.h"

typedef enum compile_format { CF_DICT, CF_JSON, CF_TEXT, CF_HTML } compile_format;

/* What one call reads and computes; traces[i] is owned[i] (read here from a path) or a rank of a
 * Trace object the caller holds. */
typedef struct compile_run {
    gp_compile_log *log;
    gp_compile_analysis *an;
    gp_trace *owned[2];
    const gp_trace *traces[2];
    const char *paths[2]; /* traces to read (NULL: traces[i] is given) */
    gp_compile_trace *ct[2];
    gp_compile_speedup *sp;
    size_t n_traces;
} compile_run;

static void run_free(compile_run *r)
{
    gp_compile_speedup_free(r->sp);
    for (int i = 0; i < 2; i++) {
        gp_compile_trace_free(r->ct[i]);
        gp_trace_free(r->owned[i]);
    }
    gp_compile_analysis_free(r->an);
    gp_compile_log_free(r->log);
}

/* Reads and analyses (no GIL): the log, the traces to read, the regions, the speedup. On failure
 * returns the status with err set where the reader said why. */
static gp_status run_load(compile_run *r, const char *log_path, gp_error *err)
{
    gp_status st = GP_OK;
    if (log_path) {
        st = gp_compile_log_read(log_path, NULL, &r->log, err);
        if (st == GP_OK)
            st = gp_compile_analyze(r->log, &r->an);
    }
    gp_read_opts rd;
    gp_read_opts_init(&rd);
    rd.quiet = true;
    for (size_t i = 0; st == GP_OK && i < r->n_traces; i++) {
        if (r->paths[i]) {
            st = gp_trace_read(r->paths[i], &rd, &r->owned[i], err);
            r->traces[i] = r->owned[i];
        }
        if (st == GP_OK)
            st = gp_compile_trace_analyze(r->traces[i], &r->ct[i]);
        if (st == GP_OK && r->log) /* the gaps that are graph breaks the log names, as the CLI */
            gp_compile_trace_link(r->ct[i], r->log, r->an);
    }
    if (st == GP_OK && r->n_traces == 2)
        st = gp_compile_speedup_compute(r->ct[0], r->ct[1], &r->sp);
    return st;
}

static gp_status run_render(compile_run *r, compile_format f, size_t top, const char *title,
                            FILE *fp, gp_error *err)
{
    const gp_compile_trace *ct[2] = {r->ct[0], r->ct[1]};
    gp_compile_report rep = {r->log, r->an, ct, r->n_traces, r->sp, top, title, NULL};
    switch (f) {
    case CF_TEXT:
        return gp_compile_render_text(&rep, fp);
    case CF_HTML:
        return gp_compile_render_html(&rep, fp, err);
    default:
        return gp_compile_render_json(&rep, fp);
    }
}

static int parse_compile_format(const char *s, compile_format *out)
{
    static const char *const names[] = {"dict", "json", "text", "html"};
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (compile_format)i;
            return 0;
        }
    PyErr_SetString(PyExc_ValueError,
                    "format must be one of \"dict\", \"json\", \"text\", \"html\"");
    return -1;
}

/* Fills r->traces / r->paths from a sequence of _core.Trace objects (one rank each) or paths;
 * the path bytes go into keep (a list the caller releases after the run). 0, or -1 with an
 * exception set. */
static int parse_traces(PyObject *seq, compile_run *r, PyObject *keep)
{
    if (!seq || seq == Py_None)
        return 0;
    PyObject *fast = PySequence_Fast(seq, "traces must be a list of paths or Trace objects");
    if (!fast)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > 2) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "compile takes at most two traces (base, current)");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(fast, i);
        gp_job *job = gpy_trace_job(item);
        if (job) {
            if (job->n_ranks != 1) {
                PyErr_Format(PyExc_ValueError, "compile reads one trace; this job has %zu ranks",
                             job->n_ranks);
                break;
            }
            if (PyList_Append(keep, item) < 0) /* the Trace stays alive during the run */
                break;
            r->traces[i] = job->ranks[0];
        } else {
            PyObject *bytes = gpy_fspath(item);
            if (!bytes || PyList_Append(keep, bytes) < 0) {
                Py_XDECREF(bytes);
                break;
            }
            r->paths[i] = PyBytes_AS_STRING(bytes);
            Py_DECREF(bytes); /* keep holds it */
        }
        r->n_traces++;
    }
    Py_DECREF(fast);
    return PyErr_Occurred() ? -1 : 0;
}

/* compile(log=None, traces=None, *, top=20, format="dict", title=None) */
static PyObject *py_compile(PyObject *mod, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"log", "traces", "top", "format", "title", NULL};
    PyObject *logobj = Py_None, *traces = Py_None;
    Py_ssize_t top = 20;
    const char *fmt = "dict", *title = NULL;
    compile_format f;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO$nsz", kwlist, &logobj, &traces, &top, &fmt,
                                     &title) ||
        parse_compile_format(fmt, &f) < 0)
        return NULL;
    if (top < 0)
        return PyErr_Format(PyExc_ValueError, "top must be >= 0");
    compile_run r;
    memset(&r, 0, sizeof r);
    PyObject *keep = PyList_New(0);
    PyObject *logbytes = logobj == Py_None ? NULL : gpy_fspath(logobj);
    if (!keep || (logobj != Py_None && !logbytes) || parse_traces(traces, &r, keep) < 0) {
        Py_XDECREF(keep);
        Py_XDECREF(logbytes);
        return NULL;
    }
    if (!logbytes && r.n_traces == 0) {
        Py_DECREF(keep);
        return PyErr_Format(PyExc_ValueError,
                            "compile: no input (give a TORCH_TRACE log or directory, or traces)");
    }
    gpy_buf b;
    if (gpy_buf_open(&b) < 0) {
        Py_DECREF(keep);
        Py_XDECREF(logbytes);
        return NULL;
    }
    gp_error err = {0};
    gp_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = run_load(&r, logbytes ? PyBytes_AS_STRING(logbytes) : NULL, &err);
    if (st == GP_OK)
        st = run_render(&r, f, (size_t)top, title, b.fp, &err);
    run_free(&r);
    Py_END_ALLOW_THREADS;
    Py_DECREF(keep);
    Py_XDECREF(logbytes);
    if (st != GP_OK) {
        gpy_buf_discard(&b);
        return gpy_raise(st, err.msg[0] ? &err : NULL, "compile");
    }
    return f == CF_DICT ? gpy_buf_json(&b) : gpy_buf_str(&b);
}

static PyMethodDef functions[] = {
    {"compile", (PyCFunction)(void (*)(void))py_compile, METH_VARARGS | METH_KEYWORDS,
     "compile(log=None, traces=None, *, top=20, format='dict', title=None): gpuprof compile."},
    {NULL, NULL, 0, NULL},
};

int gpy_compile_init(PyObject *m)
{
    return PyModule_AddFunctions(m, functions);
}
