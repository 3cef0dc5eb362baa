/* gpuprof._core.Monitor: the live GPU monitor (include/gpuprof/monitor.h) for Python.
 *
 * The monitor's events arrive on its own threads (sampler, XID) or on the thread that samples;
 * the listener never calls Python: it copies each event into a ring under a mutex, and Python
 * drains the ring (drain_events) from its own dispatcher thread. So no C thread ever waits for
 * the GIL while a Python thread waits for it (stop() joins the sampler with the GIL released). */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprof/monitor.h"
#include "gpy.h"

#define EVENT_RING 1024

typedef struct gpy_monitor {
    PyObject_HEAD gp_monitor *mon;
    pthread_mutex_t mu; /* guards the ring */
    gp_monitor_event ring[EVENT_RING];
    size_t head, count;
    unsigned long long events_dropped; /* events that found the ring full */
    PyObject *warnings;                /* list of str: configuration warnings */
    gp_monitor_config cfg;
} gpy_monitor;

static PyTypeObject gpy_monitor_type;

/* The listener: copies ev into the ring (never touches Python). */
static void on_event(const gp_monitor_event *ev, void *ctx)
{
    gpy_monitor *self = ctx;
    pthread_mutex_lock(&self->mu);
    if (self->count == EVENT_RING) {
        self->events_dropped++;
    } else {
        self->ring[(self->head + self->count) % EVENT_RING] = *ev;
        self->count++;
    }
    pthread_mutex_unlock(&self->mu);
}

/* A configuration warning: appended to self->warnings (called with the GIL held: the config is
 * read in __init__, before the monitor runs). */
static void on_warning(const char *msg, void *ctx)
{
    gpy_monitor *self = ctx;
    PyObject *s = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "replace");
    if (s) {
        PyList_Append(self->warnings, s);
        Py_DECREF(s);
    }
    PyErr_Clear();
}

static PyObject *mon_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    gpy_monitor *self = (gpy_monitor *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    pthread_mutex_init(&self->mu, NULL);
    self->warnings = PyList_New(0);
    if (!self->warnings) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static void mon_dealloc(gpy_monitor *self)
{
    if (self->mon) {
        gp_monitor *m = self->mon;
        self->mon = NULL;
        Py_BEGIN_ALLOW_THREADS;
        gp_monitor_close(m);
        Py_END_ALLOW_THREADS;
    }
    pthread_mutex_destroy(&self->mu);
    Py_XDECREF(self->warnings);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Applies settings (a dict of str -> str) on top of self->cfg. 0 or -1 with an exception. */
static int apply_settings(gpy_monitor *self, PyObject *settings)
{
    if (!settings || settings == Py_None)
        return 0;
    if (!PyDict_Check(settings)) {
        PyErr_SetString(PyExc_TypeError, "Monitor: settings must be a dict of str to str");
        return -1;
    }
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(settings, &pos, &k, &v)) {
        const char *key = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
        const char *val = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
        if (!key || !val) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "Monitor: settings must be a dict of str to str");
            return -1;
        }
        gp_error err = {0};
        gp_status st = gp_monitor_config_set(
            &self->cfg, key, val, &(gp_config_opts){.warn = on_warning, .warn_ctx = self}, &err);
        if (st != GP_OK) {
            gpy_raise(st, &err, "Monitor");
            return -1;
        }
    }
    return 0;
}

/* Monitor(config=None, settings=None, *, open=True): config is a YAML file (path) read first,
 * settings then set key by key. open=False only validates the configuration. */
static int mon_init(gpy_monitor *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"config", "settings", "open", NULL};
    PyObject *config = Py_None, *settings = Py_None;
    int do_open = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO$p", kwlist, &config, &settings, &do_open))
        return -1;
    if (self->mon) {
        PyErr_SetString(PyExc_RuntimeError, "Monitor.__init__ called twice");
        return -1;
    }
    gp_monitor_config_init(&self->cfg);
    if (config != Py_None) {
        PyObject *path = gpy_fspath(config);
        if (!path)
            return -1;
        gp_error err = {0};
        gp_status st =
            gp_monitor_config_load(&self->cfg, PyBytes_AS_STRING(path),
                                   &(gp_config_opts){.warn = on_warning, .warn_ctx = self}, &err);
        Py_DECREF(path);
        if (st != GP_OK) {
            gpy_raise(st, &err, "Monitor");
            return -1;
        }
    }
    if (apply_settings(self, settings) < 0)
        return -1;
    if (!do_open)
        return 0;
    gp_monitor *m = NULL;
    gp_error err = {0};
    gp_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = gp_monitor_open(&self->cfg, &m, &err);
    if (st == GP_OK && (st = gp_monitor_add_listener(m, on_event, self)) != GP_OK) {
        gp_monitor_close(m);
        m = NULL;
    }
    Py_END_ALLOW_THREADS;
    if (st != GP_OK) {
        gpy_raise(st, &err, "Monitor");
        return -1;
    }
    self->mon = m;
    return 0;
}

/* The open monitor, or NULL with gpuprof.StateError. */
static gp_monitor *need(gpy_monitor *self)
{
    if (!self->mon)
        gpy_raise(GP_ESTATE, NULL, "Monitor: closed (or opened with open=False)");
    return self->mon;
}

/* The GPU index in arg and the open monitor, or NULL with a Python error set (a bad index first,
 * then a closed monitor, as each method checked them before). */
static gp_monitor *need_idx(gpy_monitor *self, PyObject *arg, Py_ssize_t *idx)
{
    *idx = PyLong_AsSsize_t(arg);
    if (*idx < 0 && PyErr_Occurred())
        return NULL;
    return need(self);
}

/* Appends d (a new reference, or NULL after a failed build) to *list and releases it; on any
 * failure *list is cleared to NULL, so callers loop while *list is set and return it. */
static void list_take(PyObject **list, PyObject *d)
{
    if (!d || PyList_Append(*list, d) < 0)
        Py_CLEAR(*list);
    Py_XDECREF(d);
}

/* A list of the dicts one(item) makes of the n items of size sz at items; NULL with the Python
 * error set when a build fails. */
static PyObject *list_of(const void *items, size_t n, size_t sz, PyObject *(*one)(const void *))
{
    PyObject *list = PyList_New(0);
    for (size_t i = 0; list && i < n; i++)
        list_take(&list, one((const char *)items + i * sz));
    return list;
}

static PyObject *mon_start(gpy_monitor *self, PyObject *noargs)
{
    gp_monitor *m = need(self);
    if (!m)
        return NULL;
    gp_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = gp_monitor_start(m);
    Py_END_ALLOW_THREADS;
    if (st != GP_OK)
        return gpy_raise(st, NULL, "Monitor.start: already running");
    Py_RETURN_NONE;
}

static PyObject *mon_stop(gpy_monitor *self, PyObject *noargs)
{
    gp_monitor *m = need(self);
    if (!m)
        return NULL;
    Py_BEGIN_ALLOW_THREADS;
    gp_monitor_stop(m);
    Py_END_ALLOW_THREADS;
    Py_RETURN_NONE;
}

static PyObject *mon_close(gpy_monitor *self, PyObject *noargs)
{
    gp_monitor *m = self->mon;
    self->mon = NULL;
    Py_BEGIN_ALLOW_THREADS;
    gp_monitor_close(m);
    Py_END_ALLOW_THREADS;
    Py_RETURN_NONE;
}

/* sample_now(ts_ns=None): one sample of every GPU now (or stamped ts_ns, CLOCK_MONOTONIC). */
static PyObject *mon_sample_now(gpy_monitor *self, PyObject *args)
{
    long long ts = -1;
    if (!PyArg_ParseTuple(args, "|L:sample_now", &ts))
        return NULL;
    gp_monitor *m = need(self);
    if (!m)
        return NULL;
    gp_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = gp_monitor_sample_now(m, ts >= 0 ? (gp_ns)ts : gp_monitor_now());
    Py_END_ALLOW_THREADS;
    if (st != GP_OK)
        return gpy_raise(st, NULL, "Monitor.sample_now: the sampler thread is running");
    Py_RETURN_NONE;
}

static PyObject *mon_wait_samples(gpy_monitor *self, PyObject *args)
{
    unsigned long long count;
    unsigned int timeout_ms;
    if (!PyArg_ParseTuple(args, "KI:wait_samples", &count, &timeout_ms))
        return NULL;
    gp_monitor *m = need(self);
    if (!m)
        return NULL;
    bool ok;
    Py_BEGIN_ALLOW_THREADS;
    ok = gp_monitor_wait_samples(m, count, timeout_ms);
    Py_END_ALLOW_THREADS;
    return PyBool_FromLong(ok);
}

/* {metric name: value} of the valid metrics of s, plus ts_ns and component. */
static PyObject *sample_dict(const gp_gpu_sample *s)
{
    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
    PyObject *ts = PyLong_FromLongLong((long long)s->ts);
    const char *cname = s->component >= 0 ? gp_component_name(s->component) : NULL;
    PyObject *comp = cname ? PyUnicode_FromString(cname) : Py_NewRef(Py_None);
    int bad = !ts || !comp || PyDict_SetItemString(d, "ts_ns", ts) < 0 ||
              PyDict_SetItemString(d, "component", comp) < 0;
    Py_XDECREF(ts);
    Py_XDECREF(comp);
    for (int mi = 0; !bad && mi < GP_M_COUNT; mi++) {
        if (!gp_sample_has(s, (gp_metric)mi))
            continue;
        PyObject *v = PyFloat_FromDouble(s->v[mi]);
        bad = !v || PyDict_SetItemString(d, gp_metric_name((gp_metric)mi), v) < 0;
        Py_XDECREF(v);
    }
    if (bad) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

static PyObject *mon_devices(gpy_monitor *self, PyObject *noargs)
{
    gp_monitor *m = need(self);
    if (!m)
        return NULL;
    size_t n = gp_monitor_device_count(m);
    PyObject *list = PyList_New(0);
    for (size_t i = 0; list && i < n; i++) {
        gp_gpu_ident id;
        if (gp_monitor_device(m, i, &id) != GP_OK)
            continue;
        PyObject *d =
            Py_BuildValue("{s:I,s:s,s:s,s:s,s:O,s:I}", "index", id.index, "name", id.name, "uuid",
                          id.uuid, "pci_bus_id", id.pci_bus_id, "lost",
                          id.lost ? Py_True : Py_False, "mig_instances", id.mig_instances);
        list_take(&list, d);
    }
    return list;
}

static PyObject *sample_item(const void *s)
{
    return sample_dict(s);
}

/* latest(idx) -> dict or None before the first sample. */
static PyObject *mon_latest(gpy_monitor *self, PyObject *arg)
{
    Py_ssize_t idx;
    gp_monitor *m = need_idx(self, arg, &idx);
    if (!m)
        return NULL;
    gp_gpu_sample s;
    gp_status st = gp_monitor_latest(m, (size_t)idx, &s);
    if (st == GP_EEMPTY)
        Py_RETURN_NONE;
    if (st != GP_OK)
        return gpy_raise(st, NULL, "Monitor.latest: no such GPU");
    return sample_dict(&s);
}

/* history(idx, max) -> list of sample dicts, oldest first. */
static PyObject *mon_history(gpy_monitor *self, PyObject *args)
{
    Py_ssize_t idx, max;
    if (!PyArg_ParseTuple(args, "nn:history", &idx, &max))
        return NULL;
    gp_monitor *m = need(self);
    if (!m)
        return NULL;
    if (idx < 0 || (size_t)idx >= gp_monitor_device_count(m))
        return gpy_raise(GP_ENOENT, NULL, "Monitor.samples: no such GPU");
    if (max <= 0 || max > (1 << 24))
        max = (Py_ssize_t)self->cfg.max_samples;
    gp_gpu_sample *buf = malloc((size_t)max * sizeof *buf);
    if (!buf)
        return PyErr_NoMemory();
    size_t n;
    Py_BEGIN_ALLOW_THREADS;
    n = gp_monitor_history(m, (size_t)idx, buf, (size_t)max);
    Py_END_ALLOW_THREADS;
    PyObject *list = list_of(buf, n, sizeof *buf, sample_item);
    free(buf);
    return list;
}

static PyObject *process_item(const void *item)
{
    const gp_gpu_process *p = item;
    return Py_BuildValue("{s:I,s:I,s:L,s:i,s:i}", "pid", p->pid, "types", p->types, "mem_bytes",
                         (long long)p->mem_bytes, "sm_util", p->sm_util, "mem_util", p->mem_util);
}

static PyObject *mon_processes(gpy_monitor *self, PyObject *arg)
{
    Py_ssize_t idx;
    gp_monitor *m = need_idx(self, arg, &idx);
    if (!m)
        return NULL;
    gp_gpu_process p[256];
    size_t n = 0;
    gp_status st = gp_monitor_processes(m, (size_t)idx, p, 256, &n);
    if (st != GP_OK)
        return gpy_raise(st, NULL, "Monitor.processes");
    return list_of(p, n, sizeof *p, process_item);
}

static PyObject *num_or_none(double v)
{
    return v == v ? PyFloat_FromDouble(v) : Py_NewRef(Py_None);
}

static PyObject *mon_bottleneck(gpy_monitor *self, PyObject *arg)
{
    Py_ssize_t idx;
    gp_monitor *m = need_idx(self, arg, &idx);
    if (!m)
        return NULL;
    gp_bottleneck b;
    gp_status st = gp_monitor_bottleneck(m, (size_t)idx, &b);
    if (st != GP_OK)
        return gpy_raise(st, NULL, "Monitor.bottleneck");
    return Py_BuildValue("{s:s,s:d,s:I,s:N,s:N,s:N,s:N,s:N,s:d,s:d}", "kind",
                         gp_bottleneck_name(b.kind), "confidence", b.confidence, "samples",
                         b.samples, "util_gpu_mean", num_or_none(b.util_gpu_mean), "util_mem_mean",
                         num_or_none(b.util_mem_mean), "mem_used_ratio",
                         num_or_none(b.mem_used_ratio), "temp_max", num_or_none(b.temp_max),
                         "power_ratio", num_or_none(b.power_ratio), "thermal_throttle_share",
                         b.thermal_throttle_share, "power_throttle_share", b.power_throttle_share);
}

static PyObject *mon_leak(gpy_monitor *self, PyObject *arg)
{
    Py_ssize_t idx;
    gp_monitor *m = need_idx(self, arg, &idx);
    if (!m)
        return NULL;
    gp_leak_result r;
    gp_status st = gp_monitor_leak(m, (size_t)idx, &r);
    if (st != GP_OK)
        return gpy_raise(st, NULL, "Monitor.leak");
    return Py_BuildValue(
        "{s:O,s:O,s:d,s:d,s:d,s:d,s:d,s:N,s:I}", "ready", r.ready ? Py_True : Py_False, "leak",
        r.leak ? Py_True : Py_False, "slope_mb_per_h", r.slope_mb_per_h, "recent_slope_mb_per_h",
        r.recent_slope_mb_per_h, "r2", r.r2, "window_s", r.window_s, "last_mb", r.last_mb,
        "time_to_full_s",
        r.time_to_full_s >= 0 ? PyFloat_FromDouble(r.time_to_full_s) : Py_NewRef(Py_None), "spikes",
        r.spikes);
}

static PyObject *suggestion_item(const void *item)
{
    const gp_suggestion *s = item;
    return Py_BuildValue("{s:s,s:s,s:i,s:s,s:s,s:s}", "type", s->type, "severity",
                         gp_severity_name(s->severity), "device", s->device, "message", s->message,
                         "evidence", s->evidence, "suggestion", s->suggestion);
}

static PyObject *mon_suggestions(gpy_monitor *self, PyObject *noargs)
{
    gp_monitor *m = need(self);
    if (!m)
        return NULL;
    gp_suggestion s[64];
    size_t n = 0;
    gp_status st = gp_monitor_suggestions(m, s, 64, &n);
    if (st != GP_OK)
        return gpy_raise(st, NULL, "Monitor.suggestions");
    return list_of(s, n, sizeof *s, suggestion_item);
}

static PyObject *component_item(const void *item)
{
    const gp_component_stats *c = item;
    return Py_BuildValue("{s:i,s:s,s:K,s:d,s:d,s:d}", "id", c->id, "name", c->name, "samples",
                         (unsigned long long)c->samples, "wall_s", c->wall_s, "gpu_busy_s",
                         c->gpu_busy_s, "mem_growth_bytes", c->mem_growth_bytes);
}

static PyObject *mon_components(gpy_monitor *self, PyObject *noargs)
{
    gp_monitor *m = need(self);
    if (!m)
        return NULL;
    gp_component_stats c[256];
    size_t n = 0;
    gp_status st = gp_monitor_components(m, c, 256, &n);
    if (st != GP_OK)
        return gpy_raise(st, NULL, "Monitor.components");
    return list_of(c, n, sizeof *c, component_item);
}

/* health() -> dict (gp_monitor_health_json's document). */
static PyObject *mon_health(gpy_monitor *self, PyObject *noargs)
{
    gp_monitor *m = need(self);
    if (!m)
        return NULL;
    char *text = NULL;
    size_t len = 0;
    gp_status st = gp_monitor_health_json(m, &text, &len);
    if (st != GP_OK)
        return gpy_raise(st, NULL, "Monitor.health");
    gpy_buf b;
    if (gpy_buf_open(&b) < 0) {
        free(text);
        return NULL;
    }
    fwrite(text, 1, len, b.fp);
    free(text);
    return gpy_buf_json(&b);
}

static PyObject *mon_counters(gpy_monitor *self, PyObject *noargs)
{
    gp_monitor *m = need(self);
    if (!m)
        return NULL;
    return Py_BuildValue(
        "{s:K,s:K,s:I,s:n,s:K}", "samples_total", (unsigned long long)gp_monitor_samples_total(m),
        "alerts_total", (unsigned long long)gp_monitor_alerts_total(m, NULL), "interval_ms",
        gp_monitor_current_interval_ms(m), "devices", (Py_ssize_t)gp_monitor_device_count(m),
        "events_dropped", self->events_dropped);
}

static PyObject *event_item(const void *item)
{
    const gp_monitor_event *e = item;
    return Py_BuildValue("{s:s,s:s,s:L,s:i,s:I,s:s,s:d,s:N,s:s}", "type",
                         gp_monitor_event_type_name(e->type), "severity",
                         gp_severity_name(e->severity), "ts_ns", (long long)e->ts, "device",
                         e->device, "pid", e->pid, "what", e->what, "value", e->value, "threshold",
                         num_or_none(e->threshold), "message", e->message);
}

/* drain_events() -> list of event dicts, in the order they happened; empties the ring. */
static PyObject *mon_drain_events(gpy_monitor *self, PyObject *noargs)
{
    gp_monitor_event *evs = malloc(EVENT_RING * sizeof *evs);
    if (!evs)
        return PyErr_NoMemory();
    size_t n;
    pthread_mutex_lock(&self->mu);
    n = self->count;
    for (size_t i = 0; i < n; i++)
        evs[i] = self->ring[(self->head + i) % EVENT_RING];
    self->head = (self->head + n) % EVENT_RING;
    self->count = 0;
    pthread_mutex_unlock(&self->mu);
    PyObject *list = list_of(evs, n, sizeof *evs, event_item);
    free(evs);
    return list;
}

static PyObject *mon_config(gpy_monitor *self, PyObject *noargs)
{
    const gp_monitor_config *c = &self->cfg;
    return Py_BuildValue(
        "{s:s,s:s,s:I,s:I,s:d,s:d,s:d,s:d,s:d,s:d}", "level", gp_monitor_level_name(c->level),
        "mode", gp_monitor_mode_name(c->mode), "sampling_interval_ms", c->sampling_interval_ms,
        "max_samples", c->max_samples, "utilization_threshold", c->utilization_threshold,
        "memory_threshold", c->memory_threshold, "temperature_threshold", c->temperature_threshold,
        "power_threshold", c->power_threshold, "retention_hours", c->retention_hours,
        "leak_window_minutes", c->leak_window_minutes);
}

static PyObject *mon_get_warnings(gpy_monitor *self, void *c)
{
    return Py_NewRef(self->warnings);
}

static PyMethodDef mon_methods[] = {
    {"start", (PyCFunction)mon_start, METH_NOARGS, "Starts the sampler thread."},
    {"stop", (PyCFunction)mon_stop, METH_NOARGS, "Stops the sampler thread (idempotent)."},
    {"close", (PyCFunction)mon_close, METH_NOARGS, "Stops, shuts NVML down, frees the monitor."},
    {"sample_now", (PyCFunction)mon_sample_now, METH_VARARGS,
     "sample_now(ts_ns=None): one sample of every GPU now, on this thread."},
    {"wait_samples", (PyCFunction)mon_wait_samples, METH_VARARGS,
     "wait_samples(count, timeout_ms) -> bool: waits for the sampler's count-th sample."},
    {"devices", (PyCFunction)mon_devices, METH_NOARGS, "The GPUs' identities."},
    {"latest", (PyCFunction)mon_latest, METH_O, "latest(idx): the newest sample or None."},
    {"history", (PyCFunction)mon_history, METH_VARARGS,
     "history(idx, max): up to max retained samples, oldest first (max <= 0: all)."},
    {"processes", (PyCFunction)mon_processes, METH_O, "processes(idx): the GPU's processes."},
    {"bottleneck", (PyCFunction)mon_bottleneck, METH_O, "bottleneck(idx): the last 10 s' class."},
    {"leak", (PyCFunction)mon_leak, METH_O, "leak(idx): the device memory leak verdict."},
    {"suggestions", (PyCFunction)mon_suggestions, METH_NOARGS, "The suggestions now."},
    {"components", (PyCFunction)mon_components, METH_NOARGS, "Per-component attribution."},
    {"health", (PyCFunction)mon_health, METH_NOARGS, "The health document."},
    {"counters", (PyCFunction)mon_counters, METH_NOARGS, "Samples, alerts, interval, devices."},
    {"drain_events", (PyCFunction)mon_drain_events, METH_NOARGS,
     "The events since the last drain, oldest first."},
    {"config", (PyCFunction)mon_config, METH_NOARGS, "The configuration in use (main keys)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef mon_getset[] = {
    {"warnings", (getter)mon_get_warnings, NULL, "Configuration warnings (list of str).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject gpy_monitor_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gpuprof._core.Monitor",
    .tp_basicsize = sizeof(gpy_monitor),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Monitor(config=None, settings=None, *, open=True): the C monitor over NVML.",
    .tp_new = mon_new,
    .tp_init = (initproc)mon_init,
    .tp_dealloc = (destructor)mon_dealloc,
    .tp_methods = mon_methods,
    .tp_getset = mon_getset,
};

/* component_begin(name) / component_end(name): gp_component_* (process-wide attribution). */
static PyObject *py_component(PyObject *arg, bool begin)
{
    const char *name = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
    if (!name) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "component name must be a str");
        return NULL;
    }
    gp_status st = begin ? gp_component_begin(name) : gp_component_end(name);
    if (st != GP_OK)
        return gpy_raise(st, NULL,
                         begin ? "component: bad name or more than 256 components"
                               : "component: not the innermost running component");
    Py_RETURN_NONE;
}

static PyObject *py_component_begin(PyObject *mod, PyObject *arg)
{
    return py_component(arg, true);
}

static PyObject *py_component_end(PyObject *mod, PyObject *arg)
{
    return py_component(arg, false);
}

/* health_unavailable(reason) -> the health document of a monitor that could not be opened. */
static PyObject *py_health_unavailable(PyObject *mod, PyObject *arg)
{
    const char *reason = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
    if (!reason)
        return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_TypeError, "reason must be a str");
    gp_error why = {0};
    gp_error_set(&why, GP_ENODRIVER, "%s", reason);
    gp_monitor_health h;
    gp_monitor_health_unavailable(NULL, &why, &h);
    char *text = NULL;
    size_t len = 0;
    gp_status st = gp_monitor_health_render_json(&h, &text, &len);
    if (st != GP_OK)
        return gpy_raise(st, NULL, "health");
    gpy_buf b;
    if (gpy_buf_open(&b) < 0) {
        free(text);
        return NULL;
    }
    fwrite(text, 1, len, b.fp);
    free(text);
    return gpy_buf_json(&b);
}

static PyMethodDef monitor_functions[] = {
    {"component_begin", py_component_begin, METH_O, "Marks component name as running."},
    {"component_end", py_component_end, METH_O, "Ends the innermost activation of name."},
    {"health_unavailable", py_health_unavailable, METH_O,
     "The health document of a monitor that could not be opened (status unavailable)."},
    {NULL, NULL, 0, NULL},
};

int gpy_monitor_init(PyObject *m)
{
    if (PyType_Ready(&gpy_monitor_type) < 0 ||
        PyModule_AddObjectRef(m, "Monitor", (PyObject *)&gpy_monitor_type) < 0)
        return -1;
    return PyModule_AddFunctions(m, monitor_functions);
}
