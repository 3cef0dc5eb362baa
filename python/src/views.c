/* The registry of views (include/gpuprof/views.h) in Python: gpuprof.views() lists it and
 * Trace.view(name) renders an entry through the same pipeline as the server's route and the
 * entry's CLI command (python/tests/test_views.py checks the bytes are the same). */
#include "gpuprof/views.h"
#include "gpy.h"

/* One entry as a dict of its fields. */
static PyObject *info_dict(const gp_view_info *v)
{
    return Py_BuildValue("{s:s,s:s,s:s,s:O,s:O,s:O,s:O,s:s,s:z,s:z,s:s}", "name", v->name, "route",
                         v->route, "label", v->label, "html", v->html ? Py_True : Py_False,
                         "linked", v->linked ? Py_True : Py_False, "compile_log",
                         v->compile_log ? Py_True : Py_False, "keep_op_shapes",
                         v->keep_op_shapes ? Py_True : Py_False, "params", v->params, "cli", v->cli,
                         "python", v->python, "doc", v->doc);
}

static PyObject *py_views(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    size_t n = gp_view_count();
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *d = info_dict(gp_view_at(i));
        if (!d) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, d);
    }
    return list;
}

PyObject *gpy_trace_view(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"name", "title", "weight", "by", "critical_path", NULL};
    const char *name;
    gp_view_params p = {0};
    int cp = 0; /* timeline views: the critical-path overlay (?critical_path=1) */
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s|$zzzp", kwlist, &name, &p.title, &p.weight, &p.by,
                                     &cp))
        return NULL;
    p.critical_path = cp ? "1" : NULL;
    const gp_view_info *v = gp_view_find(name);
    if (!v)
        return PyErr_Format(PyExc_ValueError, "no view named %s (see gpuprof.views())", name);
    gp_error err = {0};
    if (gp_view_check_params(v, &p, &err) != GP_OK)
        return PyErr_Format(PyExc_ValueError, "%s", err.msg);
    const struct gp_job *job = gpy_trace_job(self);
    gpy_buf b;
    if (gpy_buf_open(&b) < 0)
        return NULL;
    gp_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = gp_view_render(v, job, &p, b.fp, &err);
    Py_END_ALLOW_THREADS;
    if (st != GP_OK) {
        gpy_buf_discard(&b);
        return gpy_raise(st, &err, name);
    }
    return gpy_buf_str(&b);
}

static PyMethodDef view_functions[] = {
    {"views", py_views, METH_NOARGS,
     "views() -> list of dict: the registry of views (name, route, label, html, linked, "
     "compile_log, keep_op_shapes, params, cli, python, doc); Trace.view(name) renders one."},
    {NULL, NULL, 0, NULL},
};

int gpy_views_init(PyObject *m)
{
    return PyModule_AddFunctions(m, view_functions);
}
