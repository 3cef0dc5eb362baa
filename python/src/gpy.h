/* gpuprof._core: the CPython extension behind the `gpuprof` package. It is the C library: every
 * figure comes from the same functions as the CLI (public API only: the headers in
 * include/gpuprof); this layer converts arguments and results and maps gp_status to Python
 * exceptions.
 *
 * Threading: functions that read or analyse traces release the GIL while C works; the profiler's
 * fast paths (a range begin/end) keep it, because they cost less than releasing it would. */
#ifndef GPUPROF_PY_H
#define GPUPROF_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdio.h>

#include "gpuprof/core.h"

/* gpuprof.Error and its subclasses (set up by the module's init). */
extern PyObject *gpy_Error;

/* Raises the exception class that matches st (gpuprof.ParseError for GP_EPARSE, ...) with err's
 * message when it has one, else `what: <strerror>`. Returns NULL, for `return gpy_raise(...)`. */
PyObject *gpy_raise(gp_status st, const gp_error *err, const char *what);

/* A growable in-memory FILE (open_memstream) for renderers that write to a stream. */
typedef struct gpy_buf {
    FILE *fp;
    char *data;
    size_t len;
} gpy_buf;

/* Opens b; 0 on success, -1 with MemoryError set. */
int gpy_buf_open(gpy_buf *b);
/* Closes the stream and returns its text as a str (NULL with an exception set); frees b. */
PyObject *gpy_buf_str(gpy_buf *b);
/* Closes the stream and returns json.loads(text) (NULL with an exception set); frees b. */
PyObject *gpy_buf_json(gpy_buf *b);
/* Closes and frees without a result (after a failed render). */
void gpy_buf_discard(gpy_buf *b);

/* os.fspath(obj) as a new bytes object (NULL with an exception set): accepts str and path-like. */
PyObject *gpy_fspath(PyObject *obj);

/* The job of a gpuprof._core.Trace object (borrowed: valid while obj lives), or NULL when obj is
 * not one (no exception set). */
struct gp_job;
struct gp_job *gpy_trace_job(PyObject *obj);

/* Type and function registration, one per source file. Each returns 0 or -1 with an exception. */
int gpy_profiler_init(PyObject *module);
/* Whether p is a live profiler whose handle _handle gave out (1) or not (0). */
int gpy_profiler_handle_ok(const void *p);
int gpy_trace_init(PyObject *module);
int gpy_cuda_init(PyObject *module);
int gpy_compile_init(PyObject *module);
int gpy_views_init(PyObject *module);
int gpy_monitor_init(PyObject *module);
int gpy_job_init(PyObject *module); /* job.c: partial(), merge() */

/* Trace.view(name, *, title=None, weight=None, by=None) -> str (views.c). */
PyObject *gpy_trace_view(PyObject *self, PyObject *args, PyObject *kw);

#endif
