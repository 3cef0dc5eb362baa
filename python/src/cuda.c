/* The CUDA-event kernel timer and the memory tracker of a profiler (include/gpuprof/profiler.h),
 * as functions on the profiler's C handle; gpuprof/cuda.py builds KernelTimer, MemoryTracker and
 * CudaProfiler on them. CUDA events go through the C library's driver binding (dlopen of
 * libcuda.so.1, or GPUPROF_CUDA_LIBRARY); without a driver the timer reports why. Elapsed times
 * of the caller's own events (torch.cuda.Event, CuPy) come in through _timer_add. */
#include <stdlib.h>
#include <string.h>

#include "gpuprof/profiler.h"
#include "gpy.h"

/* Parses (handle, ...) and returns the profiler, or NULL with an exception set. */
static gp_profiler *handle_of(PyObject *h)
{
    gp_profiler *p = PyLong_AsVoidPtr(h);
    if (!p && !PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "a null profiler handle");
    else if (p && !gpy_profiler_handle_ok(p)) {
        PyErr_SetString(PyExc_ValueError, "not a live profiler handle");
        p = NULL;
    }
    return p;
}

/* Parses (handle, name): the profiler, or NULL with an exception set. */
static gp_profiler *handle_and_name(PyObject *args, const char **name)
{
    PyObject *h;
    if (!PyArg_ParseTuple(args, "Os", &h, name))
        return NULL;
    return handle_of(h);
}

static PyObject *timer_start(PyObject *mod, PyObject *args)
{
    PyObject *h;
    const char *name;
    unsigned long long stream = 0;
    if (!PyArg_ParseTuple(args, "Os|K", &h, &name, &stream))
        return NULL;
    gp_profiler *p = handle_of(h);
    if (!p)
        return NULL;
    const char *kept = gp_profiler_intern(p, name);
    if (!kept)
        return PyErr_NoMemory();
    gp_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = gp_cuda_timer_start(gp_profiler_cuda_timer(p), kept, (void *)(uintptr_t)stream);
    Py_END_ALLOW_THREADS;
    if (st != GP_OK)
        return gpy_raise(st, NULL, "KernelTimer.start");
    Py_RETURN_NONE;
}

static PyObject *timer_stop(PyObject *mod, PyObject *args)
{
    const char *name;
    gp_profiler *p = handle_and_name(args, &name);
    if (!p)
        return NULL;
    gp_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = gp_cuda_timer_stop(gp_profiler_cuda_timer(p), name);
    Py_END_ALLOW_THREADS;
    if (st == GP_ENOENT)
        return PyErr_Format(PyExc_LookupError, "KernelTimer.stop: no open start of %s", name);
    if (st != GP_OK)
        return gpy_raise(st, NULL, "KernelTimer.stop");
    Py_RETURN_NONE;
}

/* _timer_add(handle, name, ns): one sample measured by the caller's own events (torch / CuPy),
 * into the profiler's timer table (gp_cuda_timer_add). */
static PyObject *timer_add(PyObject *mod, PyObject *args)
{
    PyObject *h;
    const char *name;
    long long ns;
    if (!PyArg_ParseTuple(args, "OsL", &h, &name, &ns))
        return NULL;
    gp_profiler *p = handle_of(h);
    if (!p)
        return NULL;
    if (ns < 0)
        return PyErr_Format(PyExc_ValueError, "KernelTimer: a negative elapsed time for %s", name);
    const char *kept = gp_profiler_intern(p, name);
    if (!kept)
        return PyErr_NoMemory();
    gp_status st = gp_cuda_timer_add(gp_profiler_cuda_timer(p), kept, (gp_ns)ns);
    if (st != GP_OK)
        return gpy_raise(st, NULL, "KernelTimer.add_time");
    Py_RETURN_NONE;
}

static PyObject *stats_dict(const gp_timer_stats *s)
{
    return Py_BuildValue("{s:s,s:K,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:K}", "name", s->name, "calls",
                         (unsigned long long)s->count, "total_ms", s->total_ms, "mean_ms",
                         s->mean_ms, "min_ms", s->min_ms, "max_ms", s->max_ms, "std_ms",
                         s->stddev_ms, "p50_ms", s->p50_ms, "p95_ms", s->p95_ms, "p99_ms",
                         s->p99_ms, "pending", (unsigned long long)s->pending);
}

static PyObject *timer_stats(PyObject *mod, PyObject *args)
{
    const char *name;
    gp_profiler *p = handle_and_name(args, &name);
    if (!p)
        return NULL;
    gp_timer_stats s;
    gp_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = gp_cuda_timer_stats(gp_profiler_cuda_timer(p), name, &s);
    Py_END_ALLOW_THREADS;
    if (st == GP_ENOENT)
        Py_RETURN_NONE;
    if (st != GP_OK)
        return gpy_raise(st, NULL, "KernelTimer.get_timing");
    return stats_dict(&s);
}

static PyObject *timer_all(PyObject *mod, PyObject *h)
{
    gp_profiler *p = handle_of(h);
    if (!p)
        return NULL;
    gp_timer_stats *rows = NULL;
    size_t n = 0;
    gp_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = gp_cuda_timer_all_stats(gp_profiler_cuda_timer(p), &rows, &n);
    Py_END_ALLOW_THREADS;
    if (st == GP_ENODRIVER)
        return PyList_New(0);
    if (st != GP_OK)
        return gpy_raise(st, NULL, "KernelTimer.get_timings");
    PyObject *out = PyList_New(0);
    for (size_t i = 0; out && i < n; i++) {
        PyObject *d = stats_dict(&rows[i]);
        if (!d || PyList_Append(out, d) < 0)
            Py_CLEAR(out);
        Py_XDECREF(d);
    }
    free(rows);
    return out;
}

typedef gp_status (*print_fn)(gp_profiler *p, FILE *fp);

static gp_status print_timer(gp_profiler *p, FILE *fp)
{
    return gp_cuda_timer_print(gp_profiler_cuda_timer(p), fp);
}

static gp_status print_memory(gp_profiler *p, FILE *fp)
{
    return gp_mem_print(gp_profiler_mem_tracker(p), fp);
}

static PyObject *report_of(PyObject *h, print_fn fn, const char *what)
{
    gp_profiler *p = handle_of(h);
    if (!p)
        return NULL;
    gpy_buf b;
    if (gpy_buf_open(&b) < 0)
        return NULL;
    gp_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = fn(p, b.fp);
    Py_END_ALLOW_THREADS;
    if (st != GP_OK) {
        gpy_buf_discard(&b);
        return gpy_raise(st, NULL, what);
    }
    return gpy_buf_str(&b);
}

static PyObject *timer_report(PyObject *mod, PyObject *h)
{
    return report_of(h, print_timer, "KernelTimer.get_report");
}

/* The timer rows in the report's layout, never the no-driver status line (the rows of a timer fed
 * only by the caller's events: there may be none yet, and the driver is not what measures). */
static gp_status print_timer_rows(gp_profiler *p, FILE *fp)
{
    gp_timer_stats *rows = NULL;
    size_t n = 0;
    gp_status st = gp_cuda_timer_all_stats(gp_profiler_cuda_timer(p), &rows, &n);
    if (st == GP_ENODRIVER)
        st = GP_OK; /* no driver and no sample: an empty table */
    if (st == GP_OK)
        st = gp_timer_stats_render_text(rows, n, NULL, fp);
    free(rows);
    return st;
}

static PyObject *timer_rows_report(PyObject *mod, PyObject *h)
{
    return report_of(h, print_timer_rows, "KernelTimer.get_report");
}

static PyObject *mem_report(PyObject *mod, PyObject *h)
{
    return report_of(h, print_memory, "MemoryTracker.get_memory_report");
}

static PyObject *cuda_status(PyObject *mod, PyObject *noargs)
{
    const char *why = gp_profiler_cuda_status();
    if (!why)
        Py_RETURN_NONE;
    return PyUnicode_FromString(why);
}

static PyObject *mem_track(PyObject *mod, PyObject *args)
{
    PyObject *h;
    const char *name, *shape, *dtype;
    long long bytes;
    if (!PyArg_ParseTuple(args, "OsssL", &h, &name, &shape, &dtype, &bytes))
        return NULL;
    gp_profiler *p = handle_of(h);
    if (!p)
        return NULL;
    gp_status st = gp_mem_track(gp_profiler_mem_tracker(p), name, shape, dtype, (int64_t)bytes);
    if (st != GP_OK)
        return gpy_raise(st, NULL, "MemoryTracker.track_tensor");
    Py_RETURN_NONE;
}

static PyObject *mem_untrack(PyObject *mod, PyObject *args)
{
    const char *name;
    gp_profiler *p = handle_and_name(args, &name);
    if (!p)
        return NULL;
    gp_status st = gp_mem_untrack(gp_profiler_mem_tracker(p), name);
    if (st == GP_ENOENT)
        return PyErr_Format(PyExc_KeyError, "%s is not tracked", name);
    if (st != GP_OK)
        return gpy_raise(st, NULL, "MemoryTracker.untrack_tensor");
    Py_RETURN_NONE;
}

static PyObject *mem_status(PyObject *mod, PyObject *h)
{
    gp_profiler *p = handle_of(h);
    if (!p)
        return NULL;
    gp_mem_status s;
    Py_BEGIN_ALLOW_THREADS;
    gp_mem_status_get(gp_profiler_mem_tracker(p), &s);
    Py_END_ALLOW_THREADS;
    return Py_BuildValue(
        "{s:L,s:L,s:n,s:O,s:L,s:L,s:O,s:L,s:L,s:s}", "tracked_bytes", (long long)s.tracked_bytes,
        "peak_bytes", (long long)s.peak_bytes, "buffers", (Py_ssize_t)s.buffers, "has_device",
        s.has_device ? Py_True : Py_False, "free_bytes", (long long)s.free_bytes, "total_bytes",
        (long long)s.total_bytes, "has_pool", s.has_pool ? Py_True : Py_False, "pool_used",
        (long long)s.pool_used, "pool_reserved", (long long)s.pool_reserved, "driver",
        s.driver == GP_OK ? "ok" : gp_strerror(s.driver));
}

static PyObject *mem_buffers(PyObject *mod, PyObject *h)
{
    gp_profiler *p = handle_of(h);
    if (!p)
        return NULL;
    gp_mem_buffer *rows = NULL;
    size_t n = 0;
    gp_status st = gp_mem_buffers(gp_profiler_mem_tracker(p), &rows, &n);
    if (st != GP_OK)
        return gpy_raise(st, NULL, "MemoryTracker");
    PyObject *out = PyList_New(0);
    for (size_t i = 0; out && i < n; i++) {
        PyObject *d =
            Py_BuildValue("{s:s,s:s,s:s,s:L}", "name", rows[i].name, "shape", rows[i].shape,
                          "dtype", rows[i].dtype, "bytes", (long long)rows[i].bytes);
        if (!d || PyList_Append(out, d) < 0)
            Py_CLEAR(out);
        Py_XDECREF(d);
    }
    free(rows);
    return out;
}

static PyObject *mem_info(PyObject *mod, PyObject *args)
{
    const char *name;
    gp_profiler *p = handle_and_name(args, &name);
    if (!p)
        return NULL;
    gp_mem_buffer *b = NULL;
    gp_status st = gp_mem_buffer_info(gp_profiler_mem_tracker(p), name, &b);
    if (st == GP_ENOENT)
        Py_RETURN_NONE;
    if (st != GP_OK)
        return gpy_raise(st, NULL, "MemoryTracker.get_tensor_info");
    PyObject *d = Py_BuildValue("{s:s,s:s,s:s,s:L}", "name", b->name, "shape", b->shape, "dtype",
                                b->dtype, "bytes", (long long)b->bytes);
    free(b);
    return d;
}

static PyObject *mem_reset(PyObject *mod, PyObject *h)
{
    gp_profiler *p = handle_of(h);
    if (!p)
        return NULL;
    gp_mem_reset(gp_profiler_mem_tracker(p));
    Py_RETURN_NONE;
}

static PyObject *timer_reset(PyObject *mod, PyObject *h)
{
    gp_profiler *p = handle_of(h);
    if (!p)
        return NULL;
    gp_cuda_timer_reset(gp_profiler_cuda_timer(p));
    Py_RETURN_NONE;
}

static gp_status print_full(gp_profiler *p, FILE *fp)
{
    return gp_profiler_print_full_report(p, fp);
}

static PyObject *full_report(PyObject *mod, PyObject *h)
{
    return report_of(h, print_full, "CudaProfiler.get_full_report");
}

/* The DLPack ABI (dlpack.h, stable since v0.2): only what describing a tensor needs. */
typedef struct gpy_dl_tensor {
    void *data;
    struct {
        int32_t device_type, device_id;
    } device;
    int32_t ndim;
    struct {
        uint8_t code, bits;
        uint16_t lanes;
    } dtype;
    int64_t *shape;
    int64_t *strides;
    uint64_t byte_offset;
} gpy_dl_tensor;

/* _dlpack_info(capsule) -> (shape tuple, dtype name, bytes): reads a "dltensor" capsule from
 * obj.__dlpack__() without consuming it (its destructor still frees the tensor). */
static PyObject *dlpack_info(PyObject *mod, PyObject *capsule)
{
    const gpy_dl_tensor *t = PyCapsule_GetPointer(capsule, "dltensor");
    if (!t)
        return NULL;
    static const char *const kinds[] = {"int",    "uint",    "float", "handle",
                                        "bfloat", "complex", "bool"};
    if (t->ndim < 0 || t->ndim > 64 || t->dtype.code >= 7 || (t->ndim > 0 && !t->shape))
        return PyErr_Format(PyExc_ValueError, "a malformed DLPack tensor");
    PyObject *shape = PyTuple_New(t->ndim);
    if (!shape)
        return NULL;
    int64_t elems = 1;
    for (int32_t i = 0; i < t->ndim; i++) {
        elems *= t->shape[i];
        PyTuple_SET_ITEM(shape, i, PyLong_FromLongLong(t->shape[i]));
    }
    char dtype[32];
    if (t->dtype.code == 6)
        snprintf(dtype, sizeof dtype, "bool");
    else
        snprintf(dtype, sizeof dtype, "%s%u", kinds[t->dtype.code], (unsigned)t->dtype.bits);
    int64_t bytes =
        elems * (int64_t)((t->dtype.bits * (t->dtype.lanes ? t->dtype.lanes : 1) + 7) / 8);
    return Py_BuildValue("(NsL)", shape, dtype, (long long)bytes);
}

static PyMethodDef functions[] = {
    {"_timer_start", timer_start, METH_VARARGS, "(handle, name, stream=0)"},
    {"_timer_stop", timer_stop, METH_VARARGS, "(handle, name)"},
    {"_timer_stats", timer_stats, METH_VARARGS, "(handle, name) -> dict or None"},
    {"_timer_all", timer_all, METH_O, "(handle) -> list of dicts"},
    {"_timer_report", timer_report, METH_O, "(handle) -> GPU KERNEL TIMING REPORT"},
    {"_timer_add", timer_add, METH_VARARGS, "(handle, name, ns): a sample of the caller's events"},
    {"_timer_rows_report", timer_rows_report, METH_O,
     "(handle) -> GPU KERNEL TIMING REPORT of the rows, without the driver's status line"},
    {"cuda_status", cuda_status, METH_NOARGS,
     "cuda_status() -> None when the CUDA driver is loaded, else why it is not."},
    {"_mem_track", mem_track, METH_VARARGS, "(handle, name, shape, dtype, bytes)"},
    {"_mem_untrack", mem_untrack, METH_VARARGS, "(handle, name)"},
    {"_mem_status", mem_status, METH_O, "(handle) -> dict"},
    {"_mem_buffers", mem_buffers, METH_O, "(handle) -> list of dicts"},
    {"_mem_info", mem_info, METH_VARARGS, "(handle, name) -> dict or None"},
    {"_mem_reset", mem_reset, METH_O, "(handle): untracks everything, clears the peak"},
    {"_timer_reset", timer_reset, METH_O, "(handle): clears every kernel timer"},
    {"_full_report", full_report, METH_O, "(handle) -> GPU PROFILING REPORT (timers + memory)"},
    {"_dlpack_info", dlpack_info, METH_O, "(dltensor capsule) -> (shape, dtype, bytes)"},
    {"_mem_report", mem_report, METH_O, "(handle) -> GPU MEMORY TRACKING REPORT"},
    {NULL, NULL, 0, NULL},
};

int gpy_cuda_init(PyObject *m)
{
    return PyModule_AddFunctions(m, functions);
}
