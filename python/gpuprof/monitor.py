"""gpuprof.Monitor: the live GPU monitor (NVML sampling, alerts, leak and bottleneck detectors,
suggestions, health, component attribution) of ``gpuprof monitor``, from Python.

    import gpuprof

    mon = gpuprof.Monitor(config="gpu_profiler.yaml", level="detailed")
    mon.on_event(lambda ev: print(ev["type"], ev["message"]))
    mon.start()                         # or: await mon.start_async()
    with mon.component("data_loader"):
        load()
    print(mon.gpu_status()["device_count"], mon.suggestions())
    results = mon.stop()                # or: await mon.stop_async()

Everything is the C monitor (include/gpuprof/monitor.h, docs/monitor.md): the sampler runs on its
own thread in C; events are copied there into a ring and delivered here by a dispatcher thread to
the callbacks and to the iterators of :meth:`Monitor.events`.
"""
from __future__ import annotations

import asyncio
import collections
import contextlib
import threading
import time
from typing import Any, Callable, Deque, Dict, Iterator, List, Optional, Union

from . import _core

__all__ = ["Monitor", "LEVELS", "MODES"]

LEVELS = ("lightweight", "standard", "detailed", "comprehensive")
MODES = ("monitoring", "profiling", "adaptive", "debug")


def _setting(value: Any) -> str:
    """A configuration value as the C parser reads it (the text of a YAML scalar)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    name = getattr(value, "name", None)  # an enum member (the seed's GPUProfilingLevel.DETAILED)
    if name is not None and not isinstance(value, (int, float)):
        return str(name).lower()
    if hasattr(value, "value") and isinstance(getattr(value, "value"), str):
        return value.value.lower()
    return str(value).lower() if isinstance(value, str) else str(value)


def _flatten(config: Dict[str, Any]) -> Dict[str, str]:
    """A dict configuration, flat or inside the seed's top-level ``gpu_profiler:`` block."""
    if "gpu_profiler" in config and isinstance(config["gpu_profiler"], dict):
        config = config["gpu_profiler"]
    out = {}
    for k, v in config.items():
        if isinstance(v, (dict, list, tuple)):
            raise ValueError("Monitor: %s: nested values are not configuration keys" % k)
        out[str(k)] = _setting(v)
    return out


class Monitor:
    """``Monitor(config=None, level=None, mode=None, **settings)``: opens the NVML monitor.

    ``config`` is a YAML file (a path, the format of ``gpuprof monitor --config``) or a dict of
    the same keys (flat, or the seed's ``{"gpu_profiler": {...}}``); ``level`` (lightweight,
    standard, detailed, comprehensive) and ``mode`` (monitoring, profiling, adaptive, debug) and
    any other key as a keyword override it. Raises :class:`gpuprof.NoDriverError` when no NVIDIA
    driver can be loaded (:func:`Monitor.unavailable_health` then says why, as the health of
    ``gpuprof monitor --health --json`` does), :class:`gpuprof.InvalidArgumentError` /
    :class:`gpuprof.ParseError` for a bad configuration (the message names the key)."""

    def __init__(self, config: Union[None, str, "os.PathLike", Dict[str, Any]] = None,
                 level: Any = None, mode: Any = None, **settings: Any) -> None:
        path = None
        values: Dict[str, str] = {}
        if isinstance(config, dict):
            values.update(_flatten(config))
        elif config is not None:
            path = config
        if level is not None:
            values["level"] = _setting(level)
        if mode is not None:
            values["mode"] = _setting(mode)
        values.update({k: _setting(v) for k, v in settings.items()})
        self._m = _core.Monitor(path, values)
        self._callbacks: List[Any] = []
        self._queues: List[Deque[Dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._cv = threading.Condition(self._lock)
        self._pump_lock = threading.RLock()
        self._pump_thread: Optional[threading.Thread] = None
        self._running = False
        self._started_at: Optional[float] = None

    # ---- lifecycle -------------------------------------------------------------------------

    @property
    def warnings(self) -> List[str]:
        """Configuration warnings: keys read but without effect in gpuprof, lenient values."""
        return list(self._m.warnings)

    @property
    def running(self) -> bool:
        return self._running

    def start(self) -> None:
        """Starts sampling on the monitor's thread (a "started" event follows)."""
        self._m.start()
        self._running = True
        self._started_at = time.monotonic()
        self._pump_thread = threading.Thread(target=self._pump_loop, name="gpuprof-monitor-events",
                                             daemon=True)
        self._pump_thread.start()

    def stop(self) -> Dict[str, Any]:
        """Stops sampling (a "stopped" event follows) and returns the results: duration_s,
        samples_collected, alerts_total, devices, the suggestions and the health document."""
        self._m.stop()
        self._running = False
        if self._pump_thread is not None:
            self._pump_thread.join()
            self._pump_thread = None
        self.pump()
        c = self._m.counters()
        return {"duration_s": time.monotonic() - self._started_at if self._started_at else 0.0,
                "samples_collected": c["samples_total"], "alerts_total": c["alerts_total"],
                "devices": c["devices"], "suggestions": self.suggestions(),
                "health": self.health()}

    async def start_async(self) -> None:
        """:meth:`start` for ``await`` (the seed's ``await start_profiling()``)."""
        await asyncio.get_running_loop().run_in_executor(None, self.start)

    async def stop_async(self) -> Dict[str, Any]:
        """:meth:`stop` for ``await`` (joins the sampler off the event loop's thread)."""
        return await asyncio.get_running_loop().run_in_executor(None, self.stop)

    def sample_now(self, ts_ns: Optional[int] = None) -> None:
        """Takes one sample of every GPU on this thread (not while started), then delivers the
        events it caused. ``ts_ns`` stamps it (CLOCK_MONOTONIC ns; tests replaying a scenario)."""
        if ts_ns is None:
            self._m.sample_now()
        else:
            self._m.sample_now(int(ts_ns))
        self.pump()

    def wait_samples(self, count: int, timeout: float = 10.0) -> bool:
        """Waits until the sampler has taken ``count`` samples in all; False on timeout."""
        return self._m.wait_samples(int(count), int(timeout * 1000))

    def close(self) -> None:
        """Stops and releases NVML. The monitor cannot be used afterwards."""
        if self._running:
            self.stop()
        self._m.close()

    def __enter__(self) -> "Monitor":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- events ----------------------------------------------------------------------------

    def on_event(self, callback: Callable[[Dict[str, Any]], Any],
                 types: Optional[List[str]] = None) -> None:
        """Calls ``callback(event)`` for every event (or those whose type is in ``types``:
        started, stopped, alert, alert_cleared, xid, throttle, leak, spike, bottleneck,
        device_lost, debug, kernel_started, kernel_completed). Callbacks run on the
        dispatcher thread, one at a time, in the order the events happened; an exception in one
        is printed and does not stop the others."""
        wanted = set(types) if types else None
        with self._lock:
            self._callbacks.append((callback, wanted))

    def events(self, timeout: Optional[float] = None) -> Iterator[Dict[str, Any]]:
        """Iterates over the events from this call on, waiting for the next one. Ends when the
        monitor is not running and no event is left, or when no event came within ``timeout``
        seconds."""
        q: Deque[Dict[str, Any]] = collections.deque()
        with self._lock:
            self._queues.append(q)

        def gen() -> Iterator[Dict[str, Any]]:
            try:
                while True:
                    if not q and not self._running:
                        self.pump()  # what stop() or sample_now() left in the C monitor
                    with self._cv:
                        if not q:
                            if not self._running:
                                return
                            self._cv.wait_for(lambda: q or not self._running, timeout)
                            if not q:
                                if timeout is not None:
                                    return
                                continue
                        ev = q.popleft()
                    yield ev
            finally:
                with self._lock:
                    self._queues.remove(q)

        return gen()

    def pump(self) -> int:
        """Delivers the events waiting in the C monitor now; returns how many."""
        with self._pump_lock:  # one deliverer at a time keeps the events in order
            evs = self._m.drain_events()
            for ev in evs:
                self._deliver(ev)
        return len(evs)

    def _deliver(self, ev: Dict[str, Any]) -> None:
        with self._cv:
            callbacks = list(self._callbacks)
            for q in self._queues:
                q.append(ev)
            self._cv.notify_all()
        for cb, wanted in callbacks:
            if wanted is None or ev["type"] in wanted:
                try:
                    cb(ev)
                except Exception:  # a user's callback must not stop the dispatcher
                    import traceback
                    traceback.print_exc()

    def _pump_loop(self) -> None:
        while self._running:
            if not self.pump():
                time.sleep(0.02)
        with self._cv:
            self._cv.notify_all()

    # ---- queries -----------------------------------------------------------------------------

    def gpu_status(self) -> Dict[str, Any]:
        """The seed's get_gpu_status(): device_count and per device its identity and latest sample
        (metric names of docs/monitor.md, base units; a metric the device does not report is
        absent, never 0), its processes and bottleneck."""
        devices = []
        for d in self._m.devices():
            i = d["index"]
            dev = dict(d)
            dev["latest"] = self._m.latest(i)
            dev["processes"] = self._m.processes(i) if dev["latest"] else []
            dev["bottleneck"] = self._m.bottleneck(i)["kind"] if dev["latest"] else "unknown"
            devices.append(dev)
        c = self._m.counters()
        return {"device_count": len(devices), "devices": devices, "running": self._running,
                "samples_collected": c["samples_total"], "interval_ms": c["interval_ms"]}

    def samples(self, device: int = 0, last: int = 0) -> List[Dict[str, Any]]:
        """The retained samples of a GPU, oldest first (``last`` > 0: only the newest that many)."""
        return self._m.history(int(device), int(last))

    def suggestions(self) -> List[Dict[str, Any]]:
        """Suggestions from the bottlenecks, leaks and alerts now: type, severity, device,
        message, evidence, suggestion (the seed's get_optimization_suggestions())."""
        return self._m.suggestions()

    async def gpu_status_async(self) -> Dict[str, Any]:
        return self.gpu_status()

    async def suggestions_async(self) -> List[Dict[str, Any]]:
        return self.suggestions()

    def leak(self, device: int = 0) -> Dict[str, Any]:
        """The device-memory leak verdict of a GPU (slope MiB/h, r2, time to full...)."""
        return self._m.leak(int(device))

    def bottleneck(self, device: int = 0) -> Dict[str, Any]:
        """The bottleneck class of a GPU over its last 10 s of samples."""
        return self._m.bottleneck(int(device))

    def health(self) -> Dict[str, Any]:
        """The health document (status ok / degraded / error, gpus, samples_collected, running,
        level, mode, interval_ms, driver_version, last_error): ``gpuprof monitor --health --json``."""
        return self._m.health()

    async def health_async(self) -> Dict[str, Any]:
        return self.health()

    @staticmethod
    def unavailable_health(reason: str) -> Dict[str, Any]:
        """The health document of a monitor that could not be opened (status unavailable)."""
        return _core.health_unavailable(str(reason))

    def config(self) -> Dict[str, Any]:
        """The main keys of the configuration in use (level, mode, interval, thresholds)."""
        return self._m.config()

    # ---- components and kernels ------------------------------------------------------------

    @contextlib.contextmanager
    def component(self, name: str) -> Iterator[None]:
        """Attributes the samples taken inside the block to component ``name`` (components nest;
        the innermost one is attributed). Process-wide: every monitor sees it."""
        _core.component_begin(name)
        try:
            yield
        finally:
            _core.component_end(name)

    def component_usage(self, name: str) -> Optional[Dict[str, Any]]:
        """What the monitor attributed to component ``name``: samples, wall_s, gpu_busy_s,
        mem_growth_bytes (None when it never ran while this monitor sampled)."""
        for c in self._m.components():
            if c["name"] == name:
                return c
        return None

    def component_usages(self) -> List[Dict[str, Any]]:
        return self._m.components()

    @contextlib.contextmanager
    def profile_kernel(self, name: str, device_id: int = 0,
                       component: Optional[str] = None) -> Iterator[Dict[str, Any]]:
        """Times a block of GPU work named ``name`` (the seed's profile_kernel): yields a dict
        filled on exit with duration_ms (the C library's CUDA events, or the CPU clock without a
        driver: ``timing`` says which), the device's memory used before and after (bytes, from
        the monitor's samples; None when it has none) and the component. Emits kernel_started and
        kernel_completed events. With ``component``, the block is also that component."""
        from .cuda import KernelTimer
        timer = KernelTimer()
        info: Dict[str, Any] = {"name": name, "device_id": device_id, "component": component,
                                "timing": "cuda events" if timer.uses_cuda_events else "cpu clock"}
        info["memory_before_bytes"] = self._mem_used(device_id)
        with self._pump_lock:
            self._deliver(self._kernel_event("kernel_started", name, device_id, 0.0))
        ctx = self.component(component) if component else contextlib.nullcontext()
        with ctx:
            timer.start(name)
            try:
                yield info
            finally:
                timer.stop(name)
                stats = timer.get_timing(name)  # this block's one call
                info["duration_ms"] = stats["mean_ms"] if stats else None
                info["memory_after_bytes"] = self._mem_used(device_id)
                with self._pump_lock:
                    self._deliver(self._kernel_event("kernel_completed", name, device_id,
                                                     info["duration_ms"] or 0.0))

    def _mem_used(self, device: int) -> Optional[float]:
        if not self._running:
            with contextlib.suppress(_core.Error):
                self._m.sample_now()
                self.pump()
        s = self._m.latest(device) if device < self._m.counters()["devices"] else None
        return s.get("mem_used_bytes") if s else None

    @staticmethod
    def _kernel_event(kind: str, name: str, device: int, ms: float) -> Dict[str, Any]:
        return {"type": kind, "severity": "info", "ts_ns": time.monotonic_ns(), "device": device,
                "pid": 0, "what": name, "value": ms, "threshold": None,
                "message": "%s %s on gpu%d%s" % (name, kind.split("_")[1], device,
                                                 " after %.3f ms" % ms if ms else "")}
