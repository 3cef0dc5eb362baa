"""CUDA-event kernel timer and tensor memory tracker (the C library's gp_cuda_timer and
gp_mem_tracker), and CudaProfiler, which combines them with profiler ranges.

CUDA events go through the C library's own driver binding (libcuda.so.1 loaded with dlopen; no
torch or CuPy needed). Without a CUDA driver the timer falls back to the CPU clock: each
start/stop pair is a profiler range, and the report says so in its first line."""
from __future__ import annotations

import contextlib
import functools
import sys
from math import prod
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from . import _core

# numpy typestr kinds (__array_interface__) to dtype names.
_TYPESTR_KIND = {"f": "float", "i": "int", "u": "uint", "b": "bool", "c": "complex"}


def tensor_info(tensor: Any) -> Tuple[str, str, int]:
    """(shape text, dtype name, size in bytes) of a torch tensor, a CuPy or NumPy array, or
    anything with __cuda_array_interface__, __array_interface__ or __dlpack__."""
    shape = getattr(tensor, "shape", None)
    if shape is not None and hasattr(tensor, "element_size") and hasattr(tensor, "nelement"):
        dtype = str(tensor.dtype).replace("torch.", "")  # torch.Tensor
        return _shape_text(shape), dtype, int(tensor.element_size() * tensor.nelement())
    if shape is not None and hasattr(tensor, "nbytes") and hasattr(tensor, "dtype"):
        return _shape_text(shape), str(getattr(tensor.dtype, "name", tensor.dtype)), int(
            tensor.nbytes)  # numpy / cupy
    for attr in ("__cuda_array_interface__", "__array_interface__"):
        iface = getattr(tensor, attr, None)
        if isinstance(iface, dict) and "shape" in iface and "typestr" in iface:
            ts = iface["typestr"]
            itemsize = int(ts[2:])
            name = _TYPESTR_KIND.get(ts[1], ts[1]) + (str(itemsize * 8) if ts[1] != "b" else "")
            return _shape_text(iface["shape"]), name, prod(iface["shape"]) * itemsize
    if hasattr(tensor, "__dlpack__"):
        shape, dtype, nbytes = _core._dlpack_info(tensor.__dlpack__())
        return _shape_text(shape), dtype, nbytes
    raise TypeError("track_tensor: %s has no shape/dtype/nbytes, array interface or __dlpack__"
                    % type(tensor).__name__)


def _shape_text(shape) -> str:
    dims = tuple(int(d) for d in shape)
    return "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"


def _stream_handle(stream: Any) -> int:
    """A CUstream as an int from None, an int, a torch.cuda.Stream or a CuPy stream."""
    if stream is None:
        return 0
    if isinstance(stream, int):
        return stream
    for attr in ("cuda_stream", "ptr"):
        h = getattr(stream, attr, None)
        if isinstance(h, int):
            return h
    raise TypeError("stream must be an int CUstream, a torch.cuda.Stream or a CuPy stream")


def _require_torch_cuda(torch: Any) -> None:
    """Raises gpuprof.NotSupportedError when torch has no CUDA (a CPU-only build, or no GPU):
    torch.cuda.Event is then a stub whose constructor fails with an unrelated TypeError."""
    from ._core import NotSupportedError
    built = getattr(torch.version, "cuda", None) is not None
    if not built or not torch.cuda.is_available():
        why = ("this torch %s is built without CUDA" % torch.__version__ if not built
               else "torch.cuda.is_available() is False (no GPU or driver)")
        raise NotSupportedError(
            'KernelTimer(events="torch") needs CUDA events, but %s. Use KernelTimer() (the C '
            "library's CUDA events, or the CPU clock without a driver) instead." % why)


def _event_factory(events: Any) -> Optional[Callable[[], Any]]:
    """A callable that makes one timing-enabled event, from KernelTimer's ``events`` argument."""
    if events is None:
        return None
    if events == "torch":
        import torch
        _require_torch_cuda(torch)
        return functools.partial(torch.cuda.Event, enable_timing=True)
    if events == "cupy":
        import cupy
        return cupy.cuda.Event  # timing is on unless disable_timing=True
    if isinstance(events, str):
        raise ValueError('events must be "torch", "cupy", an event class or a factory, not %r'
                         % events)
    if isinstance(events, type) and events.__module__.startswith("torch"):
        torch = sys.modules.get("torch")
        if torch is not None and events is getattr(getattr(torch, "cuda", None), "Event", None):
            _require_torch_cuda(torch)
        return functools.partial(events, enable_timing=True)  # torch.cuda.Event() does not time
    if not callable(events):
        raise TypeError("events must be \"torch\", \"cupy\", an event class or a factory")
    return events


def _record(event: Any, stream: Any) -> None:
    if stream is None:
        event.record()
    else:
        event.record(stream)


def _event_done(event: Any) -> bool:
    """Whether an event completed, without waiting: torch's query(), CuPy's done."""
    query = getattr(event, "query", None)
    if callable(query):
        return bool(query())
    return bool(event.done)


def _elapsed_ms(start: Any, end: Any) -> float:
    """Milliseconds between two completed events: torch's start.elapsed_time(end), else
    cupy.cuda.get_elapsed_time(start, end)."""
    elapsed = getattr(start, "elapsed_time", None)
    if callable(elapsed):
        return float(elapsed(end))
    import cupy
    return float(cupy.cuda.get_elapsed_time(start, end))


class KernelTimer:
    """Times named GPU work with CUDA events: ``start(name)`` ... ``stop(name)``; statistics per
    name with :meth:`get_timing`, the fixed-width report with :meth:`get_report`.

    ``events=None`` uses the C library's own CUDA events (its driver binding; the CPU clock when no
    driver loads). ``events="torch"`` / ``"cupy"``, an event class (``torch.cuda.Event``,
    ``cupy.cuda.Event``) or any factory of events makes start/stop record the user's kind of
    event; events the user recorded are handed over with :meth:`add_events`. Their elapsed times
    are read when the events complete (polled on every call; :meth:`resolve`, the statistics and
    the reports wait for them, with ``end.synchronize()``; ``sync_on_stop=True`` waits in
    :meth:`stop`, as the seed's timer did) and go into the C library's timer table, so the rows,
    reports and exports are those of the library's own events."""

    def __init__(self, profiler=None, events: Any = None, sync_on_stop: bool = False) -> None:
        from . import Profiler
        self._prof = profiler if profiler is not None else Profiler()
        self._h = self._prof._handle()
        self.enabled = True
        self._factory = _event_factory(events)
        self.sync_on_stop = sync_on_stop
        # None: the library's CUDA events (or events passed by the user); else why not (CPU clock)
        self.status = None if self._factory is not None else _core.cuda_status()
        self._cpu_open: Dict[str, List[Any]] = {}
        self._ev_open: Dict[str, List[Tuple[Any, Any]]] = {}  # name -> [(start event, stream)]
        self._pending: List[Tuple[str, Any, Any]] = []  # (name, start, end) not yet read

    @property
    def uses_cuda_events(self) -> bool:
        """True when times are GPU event times (the library's or the user's), False for the CPU
        clock fallback."""
        return self.status is None

    @property
    def uses_user_events(self) -> bool:
        """True when start/stop record events from ``events`` (torch, CuPy or a factory)."""
        return self._factory is not None

    def _on(self) -> bool:
        """Recording: this timer and its profiler are enabled."""
        return self.enabled and self._prof.enabled

    def start(self, name: str, stream: Any = None) -> None:
        """Records a start event for name on stream (default stream when None)."""
        if not self._on():
            return
        if self._factory is not None:
            self._poll(False)
            ev = self._factory()
            _record(ev, stream)
            self._ev_open.setdefault(name, []).append((ev, stream))
        elif self.uses_cuda_events:
            _core._timer_start(self._h, name, _stream_handle(stream))
        else:
            scope = self._prof.profile(name)
            scope.__enter__()
            self._cpu_open.setdefault(name, []).append(scope)

    def stop(self, name: str) -> None:
        """Records the stop event of the oldest open start of name (on its stream). LookupError if
        none is open."""
        if not self._on():
            return
        if self._factory is not None:
            opened = self._ev_open.get(name)
            if not opened:
                raise LookupError("KernelTimer.stop: no open start of %s" % name)
            start, stream = opened.pop(0)
            end = self._factory()
            _record(end, stream)
            self._pending.append((name, start, end))
            self._poll(False)
            if self.sync_on_stop:
                end.synchronize()
                self._poll(False)
            return
        if self.uses_cuda_events:
            _core._timer_stop(self._h, name)
            return
        open_scopes = self._cpu_open.get(name)
        if not open_scopes:
            raise LookupError("KernelTimer.stop: no open start of %s" % name)
        open_scopes.pop().__exit__(None, None, None)

    def add_events(self, name: str, start: Any, end: Any) -> None:
        """Times name by two events the caller recorded around its work (``torch.cuda.Event
        (enable_timing=True)`` or ``cupy.cuda.Event()``): the elapsed time is read when end
        completes and counts as one call of name. Works with any ``events`` setting. Pairs handed
        over while enabled are read even if the timer is disabled before they complete."""
        if not self._on():
            return
        self._pending.append((name, start, end))
        self._poll(False)

    def add_time(self, name: str, ms: float) -> None:
        """Adds one call of name that took ms milliseconds (measured by the caller)."""
        if self._on():
            _core._timer_add(self._h, name, int(round(ms * 1e6)))

    def resolve(self, wait: bool = True) -> int:
        """Reads the elapsed times of the completed event pairs handed over or stopped (with
        wait, synchronises on the rest first). Returns how many are still pending."""
        self._poll(wait)
        return len(self._pending)

    def _poll(self, wait: bool) -> None:
        """Moves every completed pending pair (all of them with wait) into the C timer table."""
        if not self._pending:
            return
        keep = []
        pending, self._pending = self._pending, keep
        for i, (name, start, end) in enumerate(pending):
            try:
                if not _event_done(end):
                    if not wait:
                        keep.append((name, start, end))
                        continue
                    end.synchronize()
                ms = _elapsed_ms(start, end)
                _core._timer_add(self._h, name, max(0, int(round(ms * 1e6))))
            except BaseException:
                keep.extend(pending[i + 1:])  # this pair is dropped; the rest stay pending
                raise

    @contextlib.contextmanager
    def time(self, name: str, stream: Any = None) -> Iterator[None]:
        """``with timer.time("kernel"):`` the scoped form of start/stop."""
        self.start(name, stream)
        try:
            yield
        finally:
            self.stop(name)

    def get_timing(self, name: str) -> Optional[Dict[str, Any]]:
        """Statistics of one name (calls, total/mean/min/max/std/p50/p95/p99 in ms), or None."""
        self._poll(True)
        row = _core._timer_stats(self._h, name)  # CUDA events, the user's events included
        if row is not None or self.uses_cuda_events:
            return row
        return self._cpu_timings().get(name)

    def get_timings(self) -> List[Dict[str, Any]]:
        """Statistics of every name, by total time (largest first)."""
        self._poll(True)
        rows = _core._timer_all(self._h)
        if self.uses_cuda_events:
            return rows
        seen = {r["name"] for r in rows}  # the user's events beside the CPU-clock fallback
        rows += [r for n, r in self._cpu_timings().items() if n not in seen]
        return sorted(rows, key=lambda r: (-r["total_ms"], r["name"]))

    def _cpu_timings(self) -> Dict[str, Dict[str, Any]]:
        out = {}
        for name, r in self._prof.get_summary().items():
            out[name] = {"name": name, "calls": r["calls"], "total_ms": r["total_ms"],
                         "mean_ms": r["mean_ms"], "min_ms": r["min_ms"], "max_ms": r["max_ms"],
                         "std_ms": r["std_ms"], "p50_ms": r["p50_ms"], "p95_ms": r["p95_ms"],
                         "p99_ms": r["p99_ms"], "pending": 0}
        return out

    def get_report(self) -> str:
        """The fixed-width GPU KERNEL TIMING REPORT. Without a CUDA driver: the driver's status
        line, then the CPU-clock timings as the profiler's summary, saying so."""
        self._poll(True)
        if self._factory is not None:
            return _core._timer_rows_report(self._h)
        text = _core._timer_report(self._h)
        if self.uses_cuda_events:
            return text
        return (text + "CPU-clock fallback (no CUDA events; times include launch and any "
                "synchronisation, not GPU execution alone):\n" + self._prof.summary_text())

    def reset(self) -> None:
        """Clears every timing and nothing else (tracked tensors stay). With the CPU-clock
        fallback the timings are the profiler's ranges, so those are cleared."""
        _core._timer_reset(self._h)
        self._pending.clear()
        self._ev_open.clear()
        if not self.uses_cuda_events:
            self._prof.reset()
            self._cpu_open.clear()


class MemoryTracker:
    """Tracks named tensors (size, shape, dtype) and the peak of their sum."""

    def __init__(self, profiler=None) -> None:
        from . import Profiler
        self._prof = profiler if profiler is not None else Profiler()
        self._h = self._prof._handle()
        self.enabled = True

    def track_tensor(self, name: str, tensor: Any) -> None:
        """Tracks tensor under name (replacing an earlier one of that name)."""
        if not self.enabled:
            return
        shape, dtype, nbytes = tensor_info(tensor)
        _core._mem_track(self._h, name, shape, dtype, nbytes)

    def untrack_tensor(self, name: str) -> None:
        """Stops tracking name. KeyError when it is not tracked."""
        _core._mem_untrack(self._h, name)

    def get_tensor_info(self, name: str) -> Optional[Dict[str, Any]]:
        """{"name", "shape", "dtype", "bytes", "size_mib"} of a tracked tensor, or None."""
        b = _core._mem_info(self._h, name)
        if b is not None:
            b["size_mib"] = b["bytes"] / 2**20
        return b

    def tracked(self) -> List[Dict[str, Any]]:
        """Every tracked tensor, in tracking order."""
        return _core._mem_buffers(self._h)

    def get_total_memory(self) -> int:
        """Bytes of all tracked tensors."""
        return _core._mem_status(self._h)["tracked_bytes"]

    def get_peak_memory(self) -> int:
        """Peak of the tracked bytes since the last reset."""
        return _core._mem_status(self._h)["peak_bytes"]

    def get_status(self) -> Dict[str, Any]:
        """Tracked and peak bytes, and the device's free/total and pool figures when a driver
        answers."""
        return _core._mem_status(self._h)

    def get_memory_report(self) -> str:
        """The fixed-width GPU MEMORY TRACKING REPORT (sizes in MiB)."""
        return _core._mem_report(self._h)

    def reset(self) -> None:
        """Stops tracking every tensor and clears the peak (timers and ranges stay)."""
        _core._mem_reset(self._h)


class CudaProfiler:
    """Kernel timing, tensor tracking and profiler ranges together (the seed's Profiler):
    ``with cp.profile_kernel("name"):`` times the block with CUDA events and records a range.
    ``events`` and ``sync_on_stop`` are :class:`KernelTimer`'s (``events="torch"`` times with
    torch.cuda.Event)."""

    def __init__(self, profiler=None, events: Any = None, sync_on_stop: bool = False) -> None:
        from . import Profiler
        self.profiler = profiler if profiler is not None else Profiler()
        self.timer = KernelTimer(self.profiler, events=events, sync_on_stop=sync_on_stop)
        self.memory = MemoryTracker(self.profiler)
        self._enabled = True

    @contextlib.contextmanager
    def profile_kernel(self, name: str, stream: Any = None) -> Iterator[None]:
        if not self._enabled:
            yield
            return
        if self.timer.uses_cuda_events:
            with self.profiler.profile(name):
                self.timer.start(name, stream)
                try:
                    yield
                finally:
                    self.timer.stop(name)
        else:
            with self.timer.time(name):
                yield

    def track_tensor(self, name: str, tensor: Any) -> None:
        self.memory.track_tensor(name, tensor)

    def untrack_tensor(self, name: str) -> None:
        self.memory.untrack_tensor(name)

    def get_tensor_info(self, name: str) -> Optional[Dict[str, Any]]:
        return self.memory.get_tensor_info(name)

    def get_timing_report(self) -> str:
        return self.timer.get_report()

    def get_memory_report(self) -> str:
        return self.memory.get_memory_report()

    def get_full_report(self) -> str:
        """One report: the kernel timing report, then the memory tracking report (the C
        library's gp_profiler_print_full_report; with the CPU-clock fallback, the timing part is
        the fallback's)."""
        if self.timer.uses_cuda_events:
            self.timer.resolve()
            return _core._full_report(self.profiler._handle())
        return self.get_timing_report() + "\n" + self.get_memory_report()

    def reset(self) -> None:
        """Clears timings, ranges and tracked tensors."""
        self.timer.reset()
        self.memory.reset()
        self.profiler.reset()

    def enable(self) -> None:
        self._enabled = self.timer.enabled = self.memory.enabled = True
        self.profiler.enable()

    def disable(self) -> None:
        """Stops recording: no CUDA timers, ranges or tracking until enable()."""
        self._enabled = self.timer.enabled = self.memory.enabled = False
        self.profiler.disable()
