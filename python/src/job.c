/* Jobs past one process from Python (docs/jobs.md): _core.partial(trace, ...) -> bytes, the
 * partial result of `gpuprof analyze --partial`; _core.merge(parts, ...) -> the job's analysis
 * from partial results (bytes), the bytes `gpuprof merge` writes. The gpuprof package wraps them
 * as Trace.partial() and gpuprof.merge(). */
#include <stdlib.h>
#include <string.h>

#include "gpuprof/analyze.h"
#include "gpuprof/partial.h"
#include "gpy.h"

/* partial(trace, *, hta=False, steps=None) -> bytes */
static PyObject *py_partial(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"trace", "hta", "steps", NULL};
    PyObject *obj;
    int hta = 0;
    const char *steps = NULL;
    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$pz", kwlist, &obj, &hta, &steps))
        return NULL;
    gp_job *job = gpy_trace_job(obj);
    if (!job)
        return PyErr_Format(PyExc_TypeError, "partial() takes a gpuprof Trace");
    gp_analyze_opts o;
    gp_analyze_opts_init(&o);
    o.hta = hta;
    if (hta && !steps)
        steps = "hta"; /* as the CLI's --hta */
    if (steps && gp_analyze_parse_steps(steps, &o) != GP_OK)
        return PyErr_Format(PyExc_ValueError, "steps must be \"all\", \"hta\" or \"N-M\", not %s",
                            steps);
    gp_partial *p = NULL;
    unsigned char *buf = NULL;
    size_t len = 0;
    gp_error err = {0};
    gp_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = gp_partial_of_job(job, &o, 0, &p, &err);
    if (st == GP_OK)
        st = gp_partial_serialize(p, &buf, &len, &err);
    gp_partial_free(p);
    Py_END_ALLOW_THREADS;
    if (st != GP_OK)
        return gpy_raise(st, &err, "partial");
    PyObject *out = PyBytes_FromStringAndSize((const char *)buf, (Py_ssize_t)len);
    free(buf);
    return out;
}

/* Parses every element of seq (bytes-like) into parts[]; -1 with an exception. */
static int parse_parts(PyObject *seq, gp_partial **parts, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        Py_buffer view;
        if (PyObject_GetBuffer(item, &view, PyBUF_SIMPLE) < 0)
            return -1;
        char name[48];
        snprintf(name, sizeof name, "partial %zd", i);
        gp_error err = {0};
        gp_status st;
        Py_BEGIN_ALLOW_THREADS;
        st = gp_partial_parse(view.buf, (size_t)view.len, name, &parts[i], &err);
        Py_END_ALLOW_THREADS;
        PyBuffer_Release(&view);
        if (st != GP_OK) {
            gpy_raise(st, &err, "merge");
            return -1;
        }
    }
    return 0;
}

/* The bits of a list of table names (None: 0, all); -1 with an exception. */
static int table_bits(PyObject *obj, unsigned *bits)
{
    *bits = 0;
    if (!obj || obj == Py_None)
        return 0;
    PyObject *seq = PySequence_Fast(obj, "tables must be a list of table names");
    if (!seq)
        return -1;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        const char *s = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i));
        unsigned bit;
        if (!s || gp_analysis_table_parse(s, &bit) != GP_OK) {
            if (s)
                PyErr_Format(PyExc_ValueError, "unknown table (see gpuprof analyze --help): %s", s);
            Py_DECREF(seq);
            return -1;
        }
        *bits |= bit;
    }
    Py_DECREF(seq);
    return 0;
}

/* merge(parts, *, format="json", tables=None) -> str (text or JSON) or bytes ("partial") */
static PyObject *py_merge(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"parts", "format", "tables", NULL};
    PyObject *obj;
    const char *fmt = "json";
    PyObject *tables_obj = NULL;
    unsigned tables = 0;
    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$sO", kwlist, &obj, &fmt, &tables_obj) ||
        table_bits(tables_obj, &tables) < 0)
        return NULL;
    bool text = strcmp(fmt, "text") == 0, partial = strcmp(fmt, "partial") == 0;
    if (!text && !partial && strcmp(fmt, "json") != 0)
        return PyErr_Format(PyExc_ValueError, "format must be \"json\", \"text\" or \"partial\"");
    PyObject *seq = PySequence_Fast(obj, "merge() takes a sequence of partial results (bytes)");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    gp_partial **parts = calloc(n ? (size_t)n : 1, sizeof *parts);
    PyObject *out = NULL;
    if (!parts) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    if (parse_parts(seq, parts, n) == 0) {
        gp_partial *m = NULL;
        gp_analysis *a = NULL;
        gp_error err = {0};
        gp_status st;
        gpy_buf b = {0};
        unsigned char *bytes = NULL;
        size_t len = 0;
        if (!partial && gpy_buf_open(&b) < 0)
            goto done;
        Py_BEGIN_ALLOW_THREADS;
        st = gp_partial_merge((const gp_partial *const *)parts, (size_t)n, &m, &err);
        if (st == GP_OK && partial)
            st = gp_partial_serialize(m, &bytes, &len, &err);
        else if (st == GP_OK)
            st = gp_partial_analysis(m, &a, &err);
        if (st == GP_OK && !partial)
            st = text ? gp_analysis_render_text(a, tables ? tables : GP_AT_ALL, b.fp)
                      : gp_analysis_render_json(a, tables ? tables : GP_AT_ALL, b.fp);
        gp_analysis_free(a);
        gp_partial_free(m);
        Py_END_ALLOW_THREADS;
        if (st != GP_OK) {
            if (!partial)
                gpy_buf_discard(&b);
            gpy_raise(st, &err, "merge");
        } else if (partial) {
            out = PyBytes_FromStringAndSize((const char *)bytes, (Py_ssize_t)len);
        } else {
            out = gpy_buf_str(&b);
        }
        free(bytes);
    }
done:
    for (Py_ssize_t i = 0; i < n; i++)
        gp_partial_free(parts[i]);
    free(parts);
    Py_DECREF(seq);
    return out;
}

static PyMethodDef job_functions[] = {
    {"partial", (PyCFunction)(void (*)(void))py_partial, METH_VARARGS | METH_KEYWORDS,
     "partial(trace, *, hta=False, steps=None) -> bytes: the partial result of the trace's ranks "
     "(gpuprof analyze --partial; each trace must name its rank in distributedInfo)."},
    {"merge", (PyCFunction)(void (*)(void))py_merge, METH_VARARGS | METH_KEYWORDS,
     "merge(parts, *, format=\"json\", tables=None) -> str or bytes: the job's analysis from "
     "partial "
     "results, as gpuprof merge writes it (\"json\", \"text\"), or the merged partial "
     "(\"partial\")."},
    {NULL, NULL, 0, NULL},
};

int gpy_job_init(PyObject *module)
{
    return PyModule_AddFunctions(module, job_functions);
}
