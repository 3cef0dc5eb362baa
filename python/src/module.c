/* gpuprof._core: module definition, exceptions, buffers and paths shared by the other files. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpy.h"

PyObject *gpy_Error;

/* Exception classes by status; filled in module init. */
static struct {
    gp_status status;
    const char *name;  /* attribute of the module */
    const char *base2; /* builtin second base, or NULL */
    PyObject *type;
} errors[] = {
    {GP_EPARSE, "ParseError", "ValueError", NULL},
    {GP_EINVAL, "InvalidArgumentError", "ValueError", NULL},
    {GP_ENOENT, "NotFoundError", "LookupError", NULL},
    {GP_EIO, "FileError", "OSError", NULL}, /* keep right after NotFoundError (MissingFileError) */
    {GP_ENODRIVER, "NoDriverError", NULL, NULL},
    {GP_EEMPTY, "EmptyError", NULL, NULL},
    {GP_ENOTSUP, "NotSupportedError", NULL, NULL},
    {GP_ELIMIT, "LimitError", NULL, NULL},
    {GP_ESTATE, "StateError", NULL, NULL},
};

/* gpuprof.MissingFileError(FileError, FileNotFoundError): a file that is not there. */
static PyObject *missing_file_error;

PyObject *gpy_raise(gp_status st, const gp_error *err, const char *what)
{
    if (st == GP_ENOMEM)
        return PyErr_NoMemory();
    PyObject *type = gpy_Error;
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].status == st && errors[i].type)
            type = errors[i].type;
    /* The C library says why a file failed with strerror's text: "No such file or directory" makes
     * it a FileNotFoundError too, so `except FileNotFoundError` catches a missing trace. */
    if ((st == GP_EIO || st == GP_ENOENT) && err && missing_file_error &&
        strstr(err->msg, strerror(ENOENT)))
        type = missing_file_error;
    PyObject *msg;
    if (err && err->msg[0])
        msg = PyUnicode_DecodeUTF8(err->msg, (Py_ssize_t)strlen(err->msg), "replace");
    else
        msg = PyUnicode_FromFormat("%s: %s", what ? what : "gpuprof", gp_strerror(st));
    if (!msg)
        return NULL;
    PyObject *exc = PyObject_CallOneArg(type, msg);
    Py_DECREF(msg);
    if (!exc)
        return NULL;
    PyObject *code = PyLong_FromLong((long)st);
    PyObject *name = PyUnicode_FromString(gp_strerror(st));
    if (code && name && PyObject_SetAttrString(exc, "status", code) == 0 &&
        PyObject_SetAttrString(exc, "reason", name) == 0)
        PyErr_SetObject(type, exc);
    Py_XDECREF(code);
    Py_XDECREF(name);
    Py_DECREF(exc);
    return NULL;
}

int gpy_buf_open(gpy_buf *b)
{
    b->data = NULL;
    b->len = 0;
    b->fp = open_memstream(&b->data, &b->len);
    if (!b->fp) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

void gpy_buf_discard(gpy_buf *b)
{
    if (b->fp)
        fclose(b->fp);
    free(b->data);
    b->fp = NULL;
    b->data = NULL;
}

PyObject *gpy_buf_str(gpy_buf *b)
{
    int bad = fclose(b->fp) != 0;
    b->fp = NULL;
    PyObject *s = bad ? PyErr_NoMemory()
                      : PyUnicode_DecodeUTF8(b->data ? b->data : "", (Py_ssize_t)b->len, "replace");
    free(b->data);
    b->data = NULL;
    return s;
}

PyObject *gpy_buf_json(gpy_buf *b)
{
    PyObject *text = gpy_buf_str(b);
    if (!text)
        return NULL;
    PyObject *json = PyImport_ImportModule("json");
    PyObject *doc = json ? PyObject_CallMethod(json, "loads", "O", text) : NULL;
    Py_XDECREF(json);
    Py_DECREF(text);
    return doc;
}

PyObject *gpy_fspath(PyObject *obj)
{
    PyObject *out = NULL;
    if (!PyUnicode_FSConverter(obj, &out))
        return NULL;
    return out;
}

static PyObject *py_version(PyObject *self, PyObject *noargs)
{
    return PyUnicode_FromString(GP_VERSION_STRING);
}

/* write_file(path, data): data (str, written as UTF-8, or a bytes-like object) into path through
 * gp_write_file, the CLI's writer (atomic for regular files; devices, FIFOs and sockets written
 * into; links written through). The GIL is released while it writes (a FIFO waits for its reader).
 * None, or NULL with gpuprof.FileError (or the subclass of the status) naming path. */
static PyObject *py_write_file(PyObject *self, PyObject *args)
{
    PyObject *pathobj, *data;
    if (!PyArg_ParseTuple(args, "OO:write_file", &pathobj, &data))
        return NULL;
    PyObject *path = gpy_fspath(pathobj);
    if (!path)
        return NULL;
    Py_buffer view = {0};
    const char *bytes;
    Py_ssize_t len;
    if (PyUnicode_Check(data)) {
        bytes = PyUnicode_AsUTF8AndSize(data, &len);
    } else if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) == 0) {
        bytes = view.buf;
        len = view.len;
    } else {
        bytes = NULL;
    }
    if (!bytes) {
        Py_DECREF(path);
        return NULL;
    }
    gp_error err = {0};
    gp_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = gp_write_file(PyBytes_AS_STRING(path), bytes, (size_t)len, &err);
    Py_END_ALLOW_THREADS;
    if (view.obj)
        PyBuffer_Release(&view);
    Py_DECREF(path);
    if (st != GP_OK)
        return gpy_raise(st, &err, "write_file");
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"version", py_version, METH_NOARGS, "version() -> str: the C library's version."},
    {"write_file", py_write_file, METH_VARARGS,
     "write_file(path, data): writes str (UTF-8) or bytes to path as the CLI writes its outputs: "
     "atomically for a regular file, into a device, FIFO or socket, through a symbolic link."},
    {NULL, NULL, 0, NULL},
};

static int add_errors(PyObject *m)
{
    gpy_Error = PyErr_NewExceptionWithDoc(
        "gpuprof.Error",
        "Base of every gpuprof error. `status` is the C library's gp_status (a negative int), "
        "`reason` its name; the message names the file, byte offset or field at fault.",
        PyExc_Exception, NULL);
    if (!gpy_Error || PyModule_AddObjectRef(m, "Error", gpy_Error) < 0)
        return -1;
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++) {
        PyObject *bases;
        if (errors[i].base2) {
            PyObject *builtins = PyImport_ImportModule("builtins");
            PyObject *b2 = builtins ? PyObject_GetAttrString(builtins, errors[i].base2) : NULL;
            Py_XDECREF(builtins);
            if (!b2)
                return -1;
            bases = PyTuple_Pack(2, gpy_Error, b2);
            Py_DECREF(b2);
        } else {
            bases = PyTuple_Pack(1, gpy_Error);
        }
        if (!bases)
            return -1;
        char qual[64];
        snprintf(qual, sizeof qual, "gpuprof.%s", errors[i].name);
        errors[i].type = PyErr_NewException(qual, bases, NULL);
        Py_DECREF(bases);
        if (!errors[i].type || PyModule_AddObjectRef(m, errors[i].name, errors[i].type) < 0)
            return -1;
        if (errors[i].status == GP_EIO) { /* after FileError and NotFoundError */
            PyObject *b =
                PyTuple_Pack(3, errors[i].type, errors[i - 1].type, PyExc_FileNotFoundError);
            missing_file_error =
                b ? PyErr_NewExceptionWithDoc("gpuprof.MissingFileError",
                                              "A file that is not there: a gpuprof.FileError, "
                                              "a gpuprof.NotFoundError and a FileNotFoundError.",
                                              b, NULL)
                  : NULL;
            Py_XDECREF(b);
            if (!missing_file_error ||
                PyModule_AddObjectRef(m, "MissingFileError", missing_file_error) < 0)
                return -1;
        }
    }
    return 0;
}

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "gpuprof._core",
    .m_doc = "The gpuprof C library (libgpuprof) for Python; use the `gpuprof` package.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__core(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    if (add_errors(m) < 0 || gpy_profiler_init(m) < 0 || gpy_trace_init(m) < 0 ||
        gpy_cuda_init(m) < 0 || gpy_views_init(m) < 0 || gpy_monitor_init(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    if (gpy_compile_init(m) < 0 || gpy_job_init(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
