/* gpuprof._core.Profiler and its range scope: the in-process profiler (include/gpuprof/profiler.h)
 * with a context manager whose begin/end are the C library's gp_range_begin / gp_range_end.
 *
 * Speed: `with prof.profile("x"):` is a method call, the scope's __enter__ and __exit__. Names are
 * interned once per distinct str (a dict lookup on the str's cached hash afterwards), and each
 * profiler keeps one spare scope that is handed out again whenever nobody else holds it, so the
 * common unnested case allocates nothing. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprof/profiler.h"
#include "gpuprof/summary.h"
#include "gpy.h"

typedef struct gpy_scope gpy_scope;

typedef struct gpy_profiler {
    PyObject_HEAD gp_profiler *p;
    bool owned;       /* created here (destroyed with the object); false for the global one */
    PyObject *names;  /* dict: str -> int (address of the profiler's interned copy) */
    gpy_scope *spare; /* a scope to reuse when its reference count says it is free */
} gpy_profiler;

struct gpy_scope {
    PyObject_HEAD gpy_profiler *prof; /* strong reference */
    const char *name;                 /* interned in prof */
    PyObject *tags;                   /* list of (key, value) or NULL */
    gp_range_opts opts;
    bool ex; /* opts differ from the defaults: gp_range_begin gets &opts, else NULL */
};

static PyTypeObject gpy_profiler_type;
static PyTypeObject gpy_scope_type;
static PyObject *str_device, *str_backend, *str_bytes, *str_cpu_time;

/* ---- names ------------------------------------------------------------------------------------
 */

/* The profiler-owned copy of a str (valid until the profiler is destroyed), or NULL with an
 * exception set. */
static const char *intern(gpy_profiler *self, PyObject *s)
{
    PyObject *hit = PyDict_GetItemWithError(self->names, s);
    if (hit)
        return PyLong_AsVoidPtr(hit);
    if (PyErr_Occurred())
        return NULL;
    if (!PyUnicode_Check(s)) {
        PyErr_Format(PyExc_TypeError, "a range name must be a str, not %.80s", Py_TYPE(s)->tp_name);
        return NULL;
    }
    const char *utf8 = PyUnicode_AsUTF8(s);
    if (!utf8)
        return NULL;
    const char *copy = gp_profiler_intern(self->p, utf8);
    if (!copy)
        return (const char *)PyErr_NoMemory();
    PyObject *addr = PyLong_FromVoidPtr((void *)copy);
    if (!addr || PyDict_SetItem(self->names, s, addr) < 0) {
        Py_XDECREF(addr);
        return NULL;
    }
    Py_DECREF(addr);
    return copy;
}

/* ---- the scope --------------------------------------------------------------------------------
 */

static int scope_traverse(gpy_scope *s, visitproc visit, void *arg)
{
    Py_VISIT(s->prof);
    Py_VISIT(s->tags);
    return 0;
}

static int scope_clear(gpy_scope *s)
{
    Py_CLEAR(s->prof);
    Py_CLEAR(s->tags);
    return 0;
}

static void scope_dealloc(gpy_scope *s)
{
    PyObject_GC_UnTrack(s);
    scope_clear(s);
    PyObject_GC_Del(s);
}

static void apply_tags(gpy_scope *s)
{
    gp_profiler *p = s->prof->p;
    Py_ssize_t n = PyList_GET_SIZE(s->tags);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *kv = PyList_GET_ITEM(s->tags, i);
        const char *key = PyLong_AsVoidPtr(PyTuple_GET_ITEM(kv, 0));
        PyObject *v = PyTuple_GET_ITEM(kv, 1);
        if (PyTuple_GET_SIZE(kv) == 3) /* (key, interned str address, True): a string tag */
            gp_range_tag_str(p, key, PyLong_AsVoidPtr(v));
        else if (PyLong_Check(v))
            gp_range_tag_int(p, key, (int64_t)PyLong_AsLongLong(v));
        else if (PyFloat_Check(v))
            gp_range_tag_double(p, key, PyFloat_AS_DOUBLE(v));
    }
    PyErr_Clear(); /* an int tag beyond int64 was clamped to -1 by the conversion: not an error */
}

static PyObject *scope_enter(gpy_scope *s, PyObject *noargs)
{
    if (s->ex)
        gp_range_begin(s->prof->p, s->name, &s->opts);
    else
        gp_range_begin(s->prof->p, s->name, NULL);
    if (s->tags)
        apply_tags(s);
    Py_INCREF(s);
    return (PyObject *)s;
}

static PyObject *scope_exit(gpy_scope *s, PyObject *const *args, Py_ssize_t nargs)
{
    gp_range_end(s->prof->p);
    Py_RETURN_FALSE;
}

static PyMethodDef scope_methods[] = {
    {"__enter__", (PyCFunction)scope_enter, METH_NOARGS, "Opens the range."},
    {"__exit__", (PyCFunction)(void (*)(void))scope_exit, METH_FASTCALL,
     "Closes the range (exceptions propagate)."},
    {NULL, NULL, 0, NULL},
};

static PyObject *scope_get_name(gpy_scope *s, void *closure)
{
    return PyUnicode_FromString(s->name ? s->name : "");
}

static PyGetSetDef scope_getset[] = {
    {"name", (getter)scope_get_name, NULL, "The range's name.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject gpy_scope_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gpuprof._core.Scope",
    .tp_basicsize = sizeof(gpy_scope),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A profiler range as a context manager (returned by Profiler.profile).",
    .tp_dealloc = (destructor)scope_dealloc,
    .tp_traverse = (traverseproc)scope_traverse,
    .tp_clear = (inquiry)scope_clear,
    .tp_methods = scope_methods,
    .tp_getset = scope_getset,
};

/* A scope for self: the spare one when nothing else holds it, else a new one. */
static gpy_scope *scope_get(gpy_profiler *self)
{
    gpy_scope *s = self->spare;
    if (s && Py_REFCNT(s) == 1) {
        Py_INCREF(s);
        Py_CLEAR(s->tags);
        return s;
    }
    s = PyObject_GC_New(gpy_scope, &gpy_scope_type);
    if (!s)
        return NULL;
    Py_INCREF(self);
    s->prof = self;
    s->tags = NULL;
    s->name = NULL;
    PyObject_GC_Track(s);
    if (!self->spare) {
        Py_INCREF(s);
        self->spare = s;
    }
    return s;
}

/* Parses one keyword of profile(); tags go to s->tags. 0 or -1 with an exception. */
static int scope_keyword(gpy_profiler *self, gpy_scope *s, PyObject *key, PyObject *v)
{
    if (key == str_device || PyUnicode_Compare(key, str_device) == 0) {
        const char *d = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
        if (d && (!strcmp(d, "gpu") || !strcmp(d, "cuda"))) {
            s->opts.device = GP_DEVICE_GPU;
            s->ex = true;
        } else if (!d || strcmp(d, "cpu") != 0) {
            PyErr_SetString(PyExc_ValueError, "device must be \"cpu\" or \"gpu\"");
            return -1;
        }
        return 0;
    }
    if (key == str_backend || PyUnicode_Compare(key, str_backend) == 0) {
        if (v == Py_None)
            return 0;
        s->opts.backend = intern(self, v);
        s->ex = true;
        return s->opts.backend ? 0 : -1;
    }
    if (key == str_bytes || PyUnicode_Compare(key, str_bytes) == 0) {
        long long b = PyLong_AsLongLong(v);
        if (b == -1 && PyErr_Occurred())
            return -1;
        s->opts.bytes = (int64_t)b;
        s->ex = true;
        return 0;
    }
    if (key == str_cpu_time || PyUnicode_Compare(key, str_cpu_time) == 0) {
        int on = PyObject_IsTrue(v);
        if (on < 0)
            return -1;
        s->opts.cpu_time = on;
        s->ex = true;
        return 0;
    }
    /* A tag: ints and floats keep their type (bool as int); anything else as its str(). */
    const char *k = intern(self, key);
    if (!k)
        return -1;
    PyObject *value;
    bool is_str = false;
    if (PyLong_Check(v) || PyFloat_Check(v)) {
        value = v;
        Py_INCREF(value);
    } else {
        PyObject *text = PyObject_Str(v);
        const char *t = text ? intern(self, text) : NULL;
        Py_XDECREF(text);
        if (!t)
            return -1;
        value = PyLong_FromVoidPtr((void *)t);
        if (!value)
            return -1;
        is_str = true;
    }
    /* A string's address is an int too: the third item marks it, so apply_tags does not record
     * the address as an integer tag. */
    PyObject *kaddr = PyLong_FromVoidPtr((void *)k);
    PyObject *kv = !kaddr   ? NULL
                   : is_str ? PyTuple_Pack(3, kaddr, value, Py_True)
                            : PyTuple_Pack(2, kaddr, value);
    Py_XDECREF(kaddr);
    Py_DECREF(value);
    if (!kv)
        return -1;
    if (!s->tags && !(s->tags = PyList_New(0))) {
        Py_DECREF(kv);
        return -1;
    }
    int rc = PyList_Append(s->tags, kv);
    Py_DECREF(kv);
    return rc;
}

static PyObject *prof_profile(gpy_profiler *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    if (nargs != 1) {
        PyErr_SetString(PyExc_TypeError, "profile(name, device=\"cpu\", backend=None, bytes=0, "
                                         "cpu_time=False, **tags) takes one positional argument");
        return NULL;
    }
    const char *name = intern(self, args[0]);
    if (!name)
        return NULL;
    gpy_scope *s = scope_get(self);
    if (!s)
        return NULL;
    s->name = name;
    s->ex = false;
    memset(&s->opts, 0, sizeof s->opts);
    Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nk; i++)
        if (scope_keyword(self, s, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) < 0) {
            Py_DECREF(s);
            return NULL;
        }
    return (PyObject *)s;
}

/* ---- the profiler -----------------------------------------------------------------------------
 */

static int prof_traverse(gpy_profiler *self, visitproc visit, void *arg)
{
    Py_VISIT(self->names);
    Py_VISIT(self->spare);
    return 0;
}

static int prof_clear(gpy_profiler *self)
{
    Py_CLEAR(self->spare);
    Py_CLEAR(self->names);
    return 0;
}

/* The profilers whose handle _handle gave out, while they live (the GIL guards the list): the
 * private functions taking a handle check it here, so a bogus one raises instead of crashing
 * (issue 38). */
static const void **live_handles;
static size_t n_live, cap_live;

int gpy_profiler_handle_ok(const void *p)
{
    for (size_t i = 0; p && i < n_live; i++)
        if (live_handles[i] == p)
            return 1;
    return 0;
}

static int live_add(const void *p)
{
    if (gpy_profiler_handle_ok(p))
        return 0;
    if (n_live == cap_live) {
        size_t cap = cap_live ? cap_live * 2 : 8;
        const void **v = realloc(live_handles, cap * sizeof *v);
        if (!v)
            return -1;
        live_handles = v;
        cap_live = cap;
    }
    live_handles[n_live++] = p;
    return 0;
}

static void live_remove(const void *p)
{
    for (size_t i = 0; i < n_live; i++)
        if (live_handles[i] == p)
            live_handles[i] = live_handles[--n_live];
}

static void prof_dealloc(gpy_profiler *self)
{
    PyObject_GC_UnTrack(self);
    prof_clear(self);
    if (self->owned) {
        live_remove(self->p);
        gp_profiler_destroy(self->p);
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *prof_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    gpy_profiler *self = (gpy_profiler *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    self->names = PyDict_New();
    if (!self->names) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static int prof_init(gpy_profiler *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"enabled", "sampling", "ring_records", "memory_budget", "cpu_time",
                             "_global", NULL};
    gp_profiler_opts o;
    gp_profiler_opts_init(&o);
    int cpu_time = o.cpu_time, global = 0;
    PyObject *enabled_obj = NULL;
    double sampling = o.sampling;
    Py_ssize_t ring = (Py_ssize_t)o.ring_records, budget = (Py_ssize_t)o.memory_budget;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|Odnnp$p", kwlist, &enabled_obj, &sampling, &ring,
                                     &budget, &cpu_time, &global))
        return -1;
    /* enabled not given (or None): on, unless GPUPROF_DISABLE=1 (as gp_profiler_global). */
    const char *disable = getenv("GPUPROF_DISABLE");
    int enabled = !(disable && strcmp(disable, "1") == 0);
    if (enabled_obj && enabled_obj != Py_None && (enabled = PyObject_IsTrue(enabled_obj)) < 0)
        return -1;
    if (self->p) {
        PyErr_SetString(PyExc_RuntimeError, "Profiler.__init__ called twice");
        return -1;
    }
    if (global) {
        self->p = gp_profiler_global();
        if (!self->p) {
            PyErr_NoMemory();
            return -1;
        }
        gp_profiler_enable(self->p, enabled);
        return 0;
    }
    if (ring < 0 || budget < 0) {
        PyErr_SetString(PyExc_ValueError, "ring_records and memory_budget must be >= 0");
        return -1;
    }
    o.enabled = enabled;
    o.sampling = sampling;
    o.ring_records = (size_t)ring;
    o.memory_budget = (size_t)budget;
    o.cpu_time = cpu_time;
    gp_status st = gp_profiler_create(&o, &self->p);
    if (st != GP_OK) {
        gpy_raise(st, NULL, "Profiler");
        return -1;
    }
    self->owned = true;
    return 0;
}

static PyObject *prof_enable(gpy_profiler *self, PyObject *noargs)
{
    gp_profiler_enable(self->p, true);
    Py_RETURN_NONE;
}

static PyObject *prof_disable(gpy_profiler *self, PyObject *noargs)
{
    gp_profiler_enable(self->p, false);
    Py_RETURN_NONE;
}

static PyObject *prof_set_sampling(gpy_profiler *self, PyObject *arg)
{
    double f = PyFloat_AsDouble(arg);
    if (f == -1.0 && PyErr_Occurred())
        return NULL;
    gp_status st = gp_profiler_set_sampling(self->p, f);
    if (st != GP_OK)
        return gpy_raise(st, NULL, "set_sampling: the fraction must be in (0, 1]");
    Py_RETURN_NONE;
}

static PyObject *prof_reset(gpy_profiler *self, PyObject *noargs)
{
    gp_profiler_reset(self->p);
    Py_RETURN_NONE;
}

static PyObject *prof_flush(gpy_profiler *self, PyObject *noargs)
{
    gp_profiler_flush(self->p);
    Py_RETURN_NONE;
}

static PyObject *prof_stats(gpy_profiler *self, PyObject *noargs)
{
    gp_profiler_stats s;
    gp_profiler_get_stats(self->p, &s);
    return Py_BuildValue("{s:K,s:K,s:K,s:K,s:d,s:s,s:d,s:O}", "ranges",
                         (unsigned long long)s.ranges, "dropped", (unsigned long long)s.dropped,
                         "sampled_out", (unsigned long long)s.sampled_out, "threads",
                         (unsigned long long)s.threads, "overhead_ns", s.overhead_ns, "clock",
                         s.clock ? s.clock : "", "tsc_ghz", s.tsc_ghz, "tsc_invariant",
                         s.tsc_invariant ? Py_True : Py_False);
}

static PyObject *ms_or_none(gp_ns ns)
{
    if (ns < 0)
        Py_RETURN_NONE;
    return PyFloat_FromDouble((double)ns / 1e6);
}

/* Sets key to value in dict d and drops the reference to value; -1 on failure (value NULL too). */
static int put(PyObject *d, const char *key, PyObject *value)
{
    if (!value)
        return -1;
    int rc = PyDict_SetItemString(d, key, value);
    Py_DECREF(value);
    return rc;
}

static PyObject *record_of(const gp_name_stats *r, const gp_range_breakdown *b)
{
    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
    if (put(d, "operation", PyUnicode_FromString(r->name)) < 0 ||
        put(d, "calls", PyLong_FromUnsignedLongLong(r->calls)) < 0 ||
        put(d, "total_ms", PyFloat_FromDouble((double)r->total / 1e6)) < 0 ||
        put(d, "mean_ms", PyFloat_FromDouble(r->mean / 1e6)) < 0 ||
        put(d, "min_ms", PyFloat_FromDouble((double)r->min / 1e6)) < 0 ||
        put(d, "max_ms", PyFloat_FromDouble((double)r->max / 1e6)) < 0 ||
        put(d, "std_ms", PyFloat_FromDouble(r->stddev / 1e6)) < 0 ||
        put(d, "p50_ms", PyFloat_FromDouble(r->p50 / 1e6)) < 0 ||
        put(d, "p95_ms", PyFloat_FromDouble(r->p95 / 1e6)) < 0 ||
        put(d, "p99_ms", PyFloat_FromDouble(r->p99 / 1e6)) < 0 ||
        put(d, "self_ms", PyFloat_FromDouble((double)r->self_total / 1e6)) < 0 ||
        put(d, "gpu_ms", ms_or_none(b ? b->gpu_ns : -1)) < 0 ||
        put(d, "cpu_ms", ms_or_none(b ? b->cpu_ns : -1)) < 0 ||
        put(d, "transfer_ms", ms_or_none(b ? b->transfer_ns : -1)) < 0 ||
        put(d, "overhead_ms", ms_or_none(b ? b->overhead_ns : -1)) < 0 ||
        put(d, "bytes",
            b && b->bytes >= 0 ? PyLong_FromLongLong(b->bytes) : (Py_INCREF(Py_None), Py_None)) <
            0 ||
        put(d, "gbps",
            b && b->gbps >= 0 ? PyFloat_FromDouble(b->gbps) : (Py_INCREF(Py_None), Py_None)) < 0 ||
        put(d, "avg_memory_mib",
            r->mem_avg >= 0 ? PyFloat_FromDouble(r->mem_avg / (1024.0 * 1024.0))
                            : (Py_INCREF(Py_None), Py_None)) < 0 ||
        put(d, "avg_gpu_utilization_pct",
            r->gpu_util >= 0 ? PyFloat_FromDouble(r->gpu_util * 100.0)
                             : (Py_INCREF(Py_None), Py_None)) < 0) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

/* The per-name records of the profiler's ranges, in the summary's order (self time, descending):
 * gp_profiler_to_trace + gp_summary_compute (the same rows as `gpuprof summary` on the exported
 * profile) joined with gp_profiler_breakdown (GPU / CPU / transfer / overhead). */
static PyObject *prof_records(gpy_profiler *self, PyObject *noargs)
{
    gp_trace *t = NULL;
    gp_summary *s = NULL;
    gp_range_breakdown *b = NULL;
    size_t nb = 0;
    gp_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = gp_profiler_to_trace(self->p, &t);
    if (st == GP_OK) {
        gp_summary_opts o;
        gp_summary_opts_init(&o);
        o.kinds = 1u << GP_EV_RANGE;
        st = gp_summary_compute(gp_traces_const(&t), 1, &o, &s, NULL);
    }
    if (st == GP_OK) {
        st = gp_profiler_breakdown(self->p, &b, &nb);
        if (st == GP_EEMPTY)
            st = GP_OK;
    }
    Py_END_ALLOW_THREADS;
    PyObject *out = NULL;
    if (st != GP_OK) {
        gpy_raise(st, NULL, "get_summary");
        goto done;
    }
    out = PyList_New(0);
    const gp_kind_summary *k = &s->kinds[GP_EV_RANGE];
    for (size_t i = 0; out && i < k->n_rows; i++) {
        const gp_range_breakdown *match = NULL;
        for (size_t j = 0; j < nb && !match; j++)
            if (b[j].name && strcmp(b[j].name, k->rows[i].name) == 0)
                match = &b[j];
        PyObject *rec = record_of(&k->rows[i], match);
        if (!rec || PyList_Append(out, rec) < 0)
            Py_CLEAR(out);
        Py_XDECREF(rec);
    }
done:
    free(b);
    gp_summary_free(s);
    gp_trace_free(t);
    return out;
}

typedef gp_status (*print_fn)(gpy_profiler *self, FILE *fp, Py_ssize_t n);

static gp_status print_summary(gpy_profiler *self, FILE *fp, Py_ssize_t n)
{
    return gp_profiler_print_summary(self->p, fp);
}

static gp_status print_bottlenecks(gpy_profiler *self, FILE *fp, Py_ssize_t n)
{
    return gp_profiler_print_bottlenecks(self->p, fp, (size_t)n);
}

static gp_status print_breakdown(gpy_profiler *self, FILE *fp, Py_ssize_t n)
{
    return gp_profiler_print_breakdown(self->p, fp);
}

static PyObject *report_text(gpy_profiler *self, print_fn fn, Py_ssize_t n, const char *what)
{
    gpy_buf b;
    if (gpy_buf_open(&b) < 0)
        return NULL;
    gp_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = fn(self, b.fp, n);
    Py_END_ALLOW_THREADS;
    if (st != GP_OK && st != GP_EEMPTY) {
        gpy_buf_discard(&b);
        return gpy_raise(st, NULL, what);
    }
    return gpy_buf_str(&b);
}

static PyObject *prof_summary_text(gpy_profiler *self, PyObject *noargs)
{
    return report_text(self, print_summary, 0, "summary_text");
}

static PyObject *prof_bottlenecks_text(gpy_profiler *self, PyObject *arg)
{
    Py_ssize_t n = PyLong_AsSsize_t(arg);
    if (n < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "top_n must be >= 0");
        return NULL;
    }
    return report_text(self, print_bottlenecks, n, "bottlenecks_text");
}

static PyObject *prof_breakdown_text(gpy_profiler *self, PyObject *noargs)
{
    return report_text(self, print_breakdown, 0, "breakdown_text");
}

typedef gp_status (*export_fn)(gp_profiler *p, const char *path, gp_error *err);

static PyObject *export_with(gpy_profiler *self, PyObject *arg, export_fn fn)
{
    PyObject *path = gpy_fspath(arg);
    if (!path)
        return NULL;
    gp_error err = {0};
    gp_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = fn(self->p, PyBytes_AS_STRING(path), &err);
    Py_END_ALLOW_THREADS;
    Py_DECREF(path);
    if (st != GP_OK)
        return gpy_raise(st, &err, "export");
    Py_RETURN_NONE;
}

static PyObject *prof_export_json(gpy_profiler *self, PyObject *arg)
{
    return export_with(self, arg, gp_profiler_export_json);
}

static PyObject *prof_export_chrome(gpy_profiler *self, PyObject *arg)
{
    return export_with(self, arg, gp_profiler_export_chrome);
}

static PyObject *prof_export_folded(gpy_profiler *self, PyObject *arg)
{
    return export_with(self, arg, gp_profiler_export_folded);
}

static PyObject *prof_add_transfer(gpy_profiler *self, PyObject *arg)
{
    long long ns = PyLong_AsLongLong(arg);
    if (ns == -1 && PyErr_Occurred())
        return NULL;
    gp_range_add_transfer_ns(self->p, (int64_t)ns);
    Py_RETURN_NONE;
}

/* Exposes the raw handle to the other files of the extension (cuda.c, trace.c). */
static PyObject *prof_handle(gpy_profiler *self, PyObject *noargs)
{
    if (live_add(self->p) != 0)
        return PyErr_NoMemory();
    return PyLong_FromVoidPtr(self->p);
}

static PyObject *prof_get_enabled(gpy_profiler *self, void *closure)
{
    return PyBool_FromLong(gp_profiler_enabled(self->p));
}

static int prof_set_enabled(gpy_profiler *self, PyObject *v, void *closure)
{
    int on = v ? PyObject_IsTrue(v) : -1;
    if (on < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_AttributeError, "cannot delete enabled");
        return -1;
    }
    gp_profiler_enable(self->p, on);
    return 0;
}

static PyMethodDef prof_methods[] = {
    {"profile", (PyCFunction)(void (*)(void))prof_profile, METH_FASTCALL | METH_KEYWORDS,
     "profile(name, device=\"cpu\", backend=None, bytes=0, cpu_time=False, **tags)\n"
     "A context manager that records one range named `name` (nested in the innermost open one)."},
    {"enable", (PyCFunction)prof_enable, METH_NOARGS, "Turns recording on."},
    {"disable", (PyCFunction)prof_disable, METH_NOARGS,
     "Turns recording off (ranges, CUDA timers and tracker history)."},
    {"set_sampling", (PyCFunction)prof_set_sampling, METH_O,
     "Records only this fraction (0, 1] of top-level ranges."},
    {"reset", (PyCFunction)prof_reset, METH_NOARGS,
     "Discards every recorded range, timer sample and tracker history."},
    {"flush", (PyCFunction)prof_flush, METH_NOARGS, "Drains every thread's ring into the store."},
    {"stats", (PyCFunction)prof_stats, METH_NOARGS,
     "Counters of the profiler: ranges, dropped, sampled_out, threads, overhead_ns, clock."},
    {"_records", (PyCFunction)prof_records, METH_NOARGS,
     "Per-name records (list of dicts) in the summary's order."},
    {"summary_text", (PyCFunction)prof_summary_text, METH_NOARGS,
     "The fixed-width summary report (the same text as gp_profiler_print_summary)."},
    {"bottlenecks_text", (PyCFunction)prof_bottlenecks_text, METH_O,
     "The top-N names by total time as the fixed-width report."},
    {"breakdown_text", (PyCFunction)prof_breakdown_text, METH_NOARGS,
     "The RANGE TIME BREAKDOWN table (GPU / CPU / transfer / overhead per name)."},
    {"export_json", (PyCFunction)prof_export_json, METH_O,
     "Writes the JSON profile (readable by every gpuprof command) atomically to path."},
    {"export_chrome", (PyCFunction)prof_export_chrome, METH_O,
     "Writes the Chrome trace (Perfetto, chrome://tracing) to path."},
    {"export_folded", (PyCFunction)prof_export_folded, METH_O,
     "Writes folded stacks for flame graph tools to path."},
    {"add_transfer_ns", (PyCFunction)prof_add_transfer, METH_O,
     "Adds time spent in data transfers to the innermost open range of this thread."},
    {"_handle", (PyCFunction)prof_handle, METH_NOARGS, "The C gp_profiler* (internal)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef prof_getset[] = {
    {"enabled", (getter)prof_get_enabled, (setter)prof_set_enabled, "Whether it records.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject gpy_profiler_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gpuprof._core.Profiler",
    .tp_basicsize = sizeof(gpy_profiler),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Profiler(enabled=True, sampling=1.0, ring_records=65536, memory_budget=256 MiB, "
              "cpu_time=False): the C in-process profiler.",
    .tp_new = prof_new,
    .tp_init = (initproc)prof_init,
    .tp_dealloc = (destructor)prof_dealloc,
    .tp_traverse = (traverseproc)prof_traverse,
    .tp_clear = (inquiry)prof_clear,
    .tp_methods = prof_methods,
    .tp_getset = prof_getset,
};

int gpy_profiler_init(PyObject *m)
{
    if (!(str_device = PyUnicode_InternFromString("device")) ||
        !(str_backend = PyUnicode_InternFromString("backend")) ||
        !(str_bytes = PyUnicode_InternFromString("bytes")) ||
        !(str_cpu_time = PyUnicode_InternFromString("cpu_time")))
        return -1;
    if (PyType_Ready(&gpy_scope_type) < 0 || PyType_Ready(&gpy_profiler_type) < 0)
        return -1;
    if (PyModule_AddObjectRef(m, "Profiler", (PyObject *)&gpy_profiler_type) < 0 ||
        PyModule_AddObjectRef(m, "Scope", (PyObject *)&gpy_scope_type) < 0)
        return -1;
    return 0;
}
