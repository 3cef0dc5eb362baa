"""CUDA-event kernel timer and tensor memory tracker (the C library's gp_cuda_timer and
gp_mem_tracker), and CudaProfiler, which combines them with profiler ranges.

CUDA events go through the C library's own driver binding (libcuda.so.1 loaded with dlopen; no
torch or CuPy needed). Without a CUDA driver the timer falls back to the CPU clock: each
start/stop pair is a profiler range, and the report says so in its first line."""
from __future__ import annotations

import contextlib
from math import prod
from typing import Any, Dict, Iterator, List, Optional, Tuple

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


class KernelTimer:
    """Times named GPU work with CUDA events: ``start(name)`` ... ``stop(name)``; statistics per
    name with :meth:`get_timing`, the fixed-width report with :meth:`get_report`."""

    def __init__(self, profiler=None) -> None:
        from . import Profiler
        self._prof = profiler if profiler is not None else Profiler()
        self._h = self._prof._handle()
        self.enabled = True
        self.status = _core.cuda_status()  # None: CUDA events; else why not (CPU clock)
        self._cpu_open: Dict[str, List[Any]] = {}

    @property
    def uses_cuda_events(self) -> bool:
        return self.status is None

    def start(self, name: str, stream: Any = None) -> None:
        """Records a start event for name on stream (default stream when None)."""
        if not self.enabled:
            return
        if self.uses_cuda_events:
            _core._timer_start(self._h, name, _stream_handle(stream))
        else:
            scope = self._prof.profile(name)
            scope.__enter__()
            self._cpu_open.setdefault(name, []).append(scope)

    def stop(self, name: str) -> None:
        """Records the stop event of the oldest open start of name. LookupError if none."""
        if not self.enabled:
            return
        if self.uses_cuda_events:
            _core._timer_stop(self._h, name)
            return
        open_scopes = self._cpu_open.get(name)
        if not open_scopes:
            raise LookupError("KernelTimer.stop: no open start of %s" % name)
        open_scopes.pop().__exit__(None, None, None)

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
        if self.uses_cuda_events:
            return _core._timer_stats(self._h, name)
        return self._cpu_timings().get(name)

    def get_timings(self) -> List[Dict[str, Any]]:
        """Statistics of every name, by total time (largest first)."""
        if self.uses_cuda_events:
            return _core._timer_all(self._h)
        return list(self._cpu_timings().values())

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
        text = _core._timer_report(self._h)
        if self.uses_cuda_events:
            return text
        return (text + "CPU-clock fallback (no CUDA events; times include launch and any "
                "synchronisation, not GPU execution alone):\n" + self._prof.summary_text())

    def reset(self) -> None:
        """Clears every timing and nothing else (tracked tensors stay). With the CPU-clock
        fallback the timings are the profiler's ranges, so those are cleared."""
        _core._timer_reset(self._h)
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
    ``with cp.profile_kernel("name"):`` times the block with CUDA events and records a range."""

    def __init__(self, profiler=None) -> None:
        from . import Profiler
        self.profiler = profiler if profiler is not None else Profiler()
        self.timer = KernelTimer(self.profiler)
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
