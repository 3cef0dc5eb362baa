"""gpuprof.torch: profiling sessions around torch.profiler, analysed by gpuprof.

    import gpuprof.torch

    with gpuprof.torch.profile("train_step") as session:
        loss = model(x).sum(); loss.backward()
    print(session.total_time_ms, session.gpu_work_sum_ms, session.bottlenecks)

    s = gpuprof.torch.profile_function(model, x, warmup=5, iterations=20)
    gpuprof.torch.compare_sessions(baseline, optimized)["speedup"]

torch.profiler (Kineto) is used where the torch build has it; builds without Kineto (Debian's
python3-torch) fall back to the legacy autograd profiler, whose Chrome trace gpuprof reads too.
The trace is written to ``output_dir`` (a temporary folder by default) and read back with
:func:`gpuprof.read`: every figure of the session comes from the C library's analyses of it.
"""
from __future__ import annotations

import contextlib
import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional

import torch as _torch

from . import Result, Trace, _core, read

__all__ = ["profile", "profile_function", "compare_sessions", "ProfileSession", "KernelInfo",
           "kineto_available"]


def kineto_available() -> bool:
    """True when this torch build has torch.profiler's Kineto backend."""
    fn = getattr(_torch.autograd, "kineto_available", None)
    return bool(fn and fn())


@dataclass
class KernelInfo:
    """One GPU kernel name of a session (from gpuprof summary's kernel table)."""
    name: str
    calls: int
    cuda_time_us: float
    mean_us: float
    share: float


@dataclass
class ProfileSession:
    """What one profiled block took, from gpuprof's analyses of its trace."""
    name: str
    total_time_ms: float = 0.0      # wall time of the block
    gpu_work_sum_ms: float = 0.0    # GPU work sum: kernel + memcpy + memset durations added up
    cpu_time_ms: float = 0.0        # summed self time of CPU operators
    peak_memory_mb: float = 0.0     # peak allocated (MiB), from the trace's memory events or torch
    allocated_memory_mb: float = 0.0
    reserved_memory_mb: float = 0.0
    kernels: List[KernelInfo] = field(default_factory=list)
    bottlenecks: List[str] = field(default_factory=list)
    recommendations: List[str] = field(default_factory=list)
    trace_path: Optional[Path] = None
    iterations: int = 1
    backend: str = ""               # "kineto" or "autograd (legacy)"
    trace: Optional[Trace] = None
    summary: Optional[Result] = None
    analysis: Optional[Result] = None

    @property
    def cuda_time_ms(self) -> float:
        """The old name of gpu_work_sum_ms (kept one release; docs/analyses.md, "Terms")."""
        return self.gpu_work_sum_ms

    @property
    def time_per_iteration_ms(self) -> float:
        return self.total_time_ms / max(self.iterations, 1)

    def flame(self, path=None, weight: str = "auto", by: str = "stack"):
        """The session's flame graph (see Trace.flame)."""
        return self.trace.flame(path, weight=weight, by=by)

    def _finish(self, path: Path, wall_ns: int) -> None:
        self.trace_path = path
        self.total_time_ms = wall_ns / 1e6
        self.trace = read(path)
        self.summary = self.trace.summary(top=0)
        self.gpu_work_sum_ms = self.summary["gpu_work_sum_ns"] / 1e6
        kinds = {k["kind"]: k for k in self.summary.get("kinds", [])}
        self.cpu_time_ms = kinds.get("cpu_op", {}).get("self_total_ns", 0) / 1e6
        self.kernels = [KernelInfo(r["name"], r["calls"], r["total_ns"] / 1e3, r["mean_ns"] / 1e3,
                                   r["share"]) for r in kinds.get("kernel", {}).get("rows", [])]
        try:
            self.analysis = self.trace.analyze()
        except Exception as e:  # an analysis needs steps or GPU work some sessions lack
            self.analysis = None
            self.bottlenecks = ["no analysis: %s" % e]
            return
        for f in self.analysis.get("findings", []):
            self.bottlenecks.append(f.get("title", ""))
            if f.get("suggestion"):
                self.recommendations.append(f["suggestion"])
        peaks = [p.get("bytes") or 0 for p in self.analysis.get("peak_memory", [])]
        if peaks and max(peaks) > 0:
            self.peak_memory_mb = max(peaks) / 2**20


def _cuda() -> bool:
    return bool(_torch.cuda.is_available())


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name) or "session"


@contextlib.contextmanager
def profile(name: str = "session", output_dir=None, record_shapes: bool = True,
            profile_memory: bool = True, with_stack: bool = False,
            iterations: int = 1) -> Iterator[ProfileSession]:
    """Profiles the block with torch.profiler (or the legacy autograd profiler), writes the trace
    to ``output_dir/<name>.json`` and fills the yielded session when the block ends."""
    session = ProfileSession(name=name, iterations=iterations)
    out_dir = Path(output_dir) if output_dir else Path(tempfile.mkdtemp(prefix="gpuprof-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / (_safe(name) + ".json")
    if kineto_available():
        acts = [_torch.profiler.ProfilerActivity.CPU]
        if _cuda():
            acts.append(_torch.profiler.ProfilerActivity.CUDA)
        prof = _torch.profiler.profile(activities=acts, record_shapes=record_shapes,
                                       profile_memory=profile_memory, with_stack=with_stack)
        session.backend = "kineto"
    else:
        prof = _torch.autograd.profiler.profile(record_shapes=record_shapes,
                                                profile_memory=profile_memory,
                                                use_cuda=_cuda(), with_stack=with_stack)
        session.backend = "autograd (legacy)"
    if _cuda():
        _torch.cuda.synchronize()
        _torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter_ns()
    with prof:
        yield session
        if _cuda():
            _torch.cuda.synchronize()
    wall = time.perf_counter_ns() - t0
    _export_atomically(prof, path)
    session._finish(path, wall)
    if _cuda():
        session.peak_memory_mb = max(session.peak_memory_mb,
                                     _torch.cuda.max_memory_allocated() / 2**20)
        session.allocated_memory_mb = _torch.cuda.memory_allocated() / 2**20
        session.reserved_memory_mb = _torch.cuda.memory_reserved() / 2**20


def _export_atomically(prof: Any, path: Path) -> None:
    """torch's export_chrome_trace into a private temporary folder, then into path through the C
    library's writer (whole or not at all; a device, FIFO or link is written into or through),
    so that an interrupted or failed export never leaves a partial trace at path."""
    with tempfile.TemporaryDirectory(prefix="gpuprof-export-") as tmp:
        staged = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(staged)
        with open(staged, "rb") as f:
            _core.write_file(path, f.read())


def profile_function(fn: Callable, *args: Any, warmup: int = 5, iterations: int = 20,
                     name: Optional[str] = None, output_dir=None, **kwargs: Any) -> ProfileSession:
    """Runs fn(*args, **kwargs) ``warmup`` times unprofiled, then ``iterations`` times in one
    session, each iteration inside ``record_function(name)`` so the trace shows them."""
    label = name or getattr(fn, "__qualname__", None) or type(fn).__name__
    with _torch.no_grad() if not _torch.is_grad_enabled() else contextlib.nullcontext():
        for _ in range(warmup):
            fn(*args, **kwargs)
    with profile(label, output_dir=output_dir, iterations=iterations) as session:
        for _ in range(iterations):
            with _torch.autograd.profiler.record_function(label):
                fn(*args, **kwargs)
    return session


def compare_sessions(baseline: ProfileSession, current: ProfileSession,
                     threshold: float = 5.0) -> Dict[str, Any]:
    """Speedup, memory difference and per-operator verdicts (gpuprof diff) of two sessions.

    ``speedup`` is the one speedup of the result: baseline / current time per iteration.
    ``memory_diff["peak_mb"]`` is the memory saved: baseline peak - current peak (MiB), positive
    when the current session needs less (the seed's sign)."""
    per_it_b, per_it_c = baseline.time_per_iteration_ms, current.time_per_iteration_ms
    diff = baseline.trace.diff(current.trace, threshold=threshold)
    # One speedup: per iteration (the seed's). gpuprof diff's own summary speedup (trace span
    # over trace span, profiler start-up included) stays only inside "diff", the raw document.
    summary = {k: v for k, v in diff.get("summary", {}).items() if k != "speedup"}
    return {
        "speedup": per_it_b / per_it_c if per_it_c > 0 else float("inf"),
        "time_ms": {"baseline": per_it_b, "current": per_it_c, "diff": per_it_c - per_it_b},
        "gpu_work_sum_ms": {"baseline": baseline.gpu_work_sum_ms,
                            "current": current.gpu_work_sum_ms},
        "cuda_time_ms": {"baseline": baseline.gpu_work_sum_ms,  # the old name, kept one release
                         "current": current.gpu_work_sum_ms},
        # the seed's "Memory saved": positive when the current session peaks lower
        "memory_diff": {"peak_mb": baseline.peak_memory_mb - current.peak_memory_mb},
        "verdicts": [{"name": r["name"], "kind": r["kind"], "verdict": r["type"],
                      "delta_pct": r.get("delta_pct")} for r in diff.get("rows", [])],
        "summary": summary,
        "diff": diff,
    }
