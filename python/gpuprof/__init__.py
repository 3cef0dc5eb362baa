"""gpuprof: the gpuprof C library for Python.

The profiler, the trace reader and every analysis are the C library (libgpuprof) behind the
extension module ``gpuprof._core``; this package gives them the names Python users expect::

    import gpuprof

    prof = gpuprof.get_profiler()
    with prof.profile("forward", device="gpu", batch=32):
        model(x)
    prof.print_summary()
    prof.export_json("profile.json")          # readable by every gpuprof command

    trace = gpuprof.read("trace.json.gz")     # a Kineto / PyTorch-profiler trace or a rank folder
    trace.analyze()["findings"]

See docs/python.md for the whole API.
"""
from __future__ import annotations

import functools
import sys
import threading
import warnings
from typing import Any, Callable, Dict, List, Optional

from . import _core
from ._core import (EmptyError, Error, FileError, InvalidArgumentError, LimitError,
                    MissingFileError, NoDriverError, NotFoundError, NotSupportedError, ParseError, StateError,
                    cuda_status)
from .results import Result

__version__ = _core.version()

__all__ = [
    "Profiler", "get_profiler", "read", "views", "Trace", "Result", "KernelTimer", "MemoryTracker",
    "CudaProfiler", "compare_profiling_runs", "Comparison", "ProfilerOptimizer",
    "OptimizationSuggestion", "cuda_status", "Error", "ParseError", "InvalidArgumentError",
    "NotFoundError", "FileError", "NoDriverError", "EmptyError", "NotSupportedError",
    "LimitError", "StateError", "MissingFileError", "Summary", "step", "__version__",
]


class Summary(dict):
    """:meth:`Profiler.get_summary`'s result: {operation: record}, plus ``dropped`` (ranges lost),
    ``sampled_out`` and ``complete`` (True when no range was dropped)."""

    dropped: int = 0
    sampled_out: int = 0

    @property
    def complete(self) -> bool:
        return self.dropped == 0


class Profiler(_core.Profiler):
    """The in-process profiler: named, nested ranges recorded at the cost of two clock reads.

    ``Profiler(enabled=True, sampling=1.0, ring_records=65536, memory_budget=256 MiB,
    cpu_time=False)`` creates an independent profiler; :func:`get_profiler` returns the process-wide
    one (the same one C code reaches with ``gp_profiler_global()``).
    """

    def profile_function(self, fn: Optional[Callable] = None, *, operation: Optional[str] = None,
                         device: str = "cpu", **tags: Any) -> Callable:
        """Decorator: every call of the function is a range named ``operation`` (default: the
        function's qualified name). Usable bare (``@prof.profile_function``) or with arguments."""

        def decorate(f: Callable) -> Callable:
            name = operation or getattr(f, "__qualname__", None) or repr(f)
            profile = self.profile

            @functools.wraps(f)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                with profile(name, device=device, **tags):
                    return f(*args, **kwargs)

            return wrapper

        return decorate(fn) if fn is not None else decorate

    def get_summary(self) -> "Summary":
        """Per-operation records, keyed by name, in the order of the summary (self time, largest
        first): calls, total/mean/min/max/std/p50/p95/p99 and self time in ms, GPU, CPU,
        transfer and profiler-overhead time in ms (None where not measured), bytes and GB/s,
        avg_memory_mib (mean peak memory of the calls, MiB; memory tracking) and
        avg_gpu_utilization_pct (CUDA-event time / wall time of the calls that measured it, %),
        None where not measured; the figures of ``gpuprof summary --json``.

        The result is a dict with two more attributes: ``dropped`` (ranges lost: a thread's ring
        holds ``ring_records`` ranges, 65,536 by default, between flushes; the memory budget; more
        than 255 nesting levels) and ``complete`` (no range dropped). When ranges were dropped it
        also warns (RuntimeWarning), as the text summary prints "dropped ranges". Call
        :meth:`flush` from time to time in long loops to drain the rings."""
        records = self._records()
        stats = self.stats()
        out = Summary((r["operation"], r) for r in records)
        out.dropped = int(stats["dropped"])
        out.sampled_out = int(stats["sampled_out"])
        if out.dropped:
            warnings.warn("gpuprof: %d ranges were dropped (a thread recorded more than its ring "
                          "holds between flushes, or the memory budget was reached): the summary "
                          "is incomplete; call Profiler.flush() more often or raise ring_records"
                          % out.dropped, RuntimeWarning, stacklevel=2)
        return out

    def get_bottlenecks(self, top_n: int = 5) -> List[Dict[str, Any]]:
        """The top_n operations by self time (largest first; the summary's order, the ranking of
        :meth:`print_bottlenecks`), as get_summary's records."""
        rows = sorted(self._records(), key=lambda r: (-r["self_ms"], r["operation"]))
        return rows[:top_n]

    def print_summary(self, file=None) -> None:
        """Prints the fixed-width summary (the same text as gp_profiler_print_summary)."""
        (file or sys.stdout).write(self.summary_text())

    def print_bottlenecks(self, top_n: int = 10, file=None) -> None:
        """Prints the top_n names by self time (the ranking of :meth:`get_bottlenecks`) in the
        summary's layout."""
        (file or sys.stdout).write(self.bottlenecks_text(top_n))

    def print_breakdown(self, file=None) -> None:
        """Prints the RANGE TIME BREAKDOWN table: GPU / CPU / transfer / overhead per name."""
        (file or sys.stdout).write(self.breakdown_text())

    def to_trace(self) -> "Trace":
        """The recorded ranges as a Trace (the model every gpuprof analysis reads)."""
        return Trace(_core._from_profiler(self._handle()))

    def timer(self) -> "KernelTimer":
        """This profiler's CUDA-event kernel timer."""
        from .cuda import KernelTimer
        return KernelTimer(profiler=self)

    def memory_tracker(self) -> "MemoryTracker":
        """This profiler's memory tracker."""
        from .cuda import MemoryTracker
        return MemoryTracker(profiler=self)


_global: Optional[Profiler] = None
_global_lock = threading.Lock()


def get_profiler(enabled: Optional[bool] = None) -> Profiler:
    """The process-wide profiler (created enabled on first use, unless GPUPROF_DISABLE=1). With
    ``enabled`` given, turns it on or off."""
    global _global
    with _global_lock:
        if _global is None:
            _global = Profiler(_global=True)
    if enabled is not None:
        _global.enabled = enabled
    return _global


class Trace:
    """A trace, a gpuprof profile, or a job of rank traces, read by :func:`read`.

    Every method is the matching ``gpuprof`` command, computed by the C library. Results are
    :class:`Result` objects (dicts with the command's JSON schema and ``to_pandas()``), or str with
    ``format="text"`` / ``"json"`` / ``"csv"``.
    """

    __slots__ = ("_t",)

    def __init__(self, core_trace: "_core.Trace") -> None:
        self._t = core_trace

    path = property(lambda self: self._t.path, doc="The file or directory read.")
    ranks = property(lambda self: self._t.ranks, doc="Number of rank traces.")
    events = property(lambda self: self._t.events, doc="Number of events over all ranks.")
    has_gpu = property(lambda self: self._t.has_gpu, doc="Any kernel, memcpy or memset.")
    span_ns = property(lambda self: self._t.span_ns, doc="(first start, last end) in ns.")

    def __repr__(self) -> str:
        return "<gpuprof.Trace %r: %d rank(s), %d events>" % (self.path, self.ranks, self.events)

    def summary(self, kinds: Optional[List[str]] = None, top: int = 10,
                format: str = "dict") -> Any:
        """``gpuprof summary``: per-name statistics per event kind (docs/summary.md)."""
        out = self._t.summary(kinds=kinds, top=top, format=format)
        return Result(out, "summary") if format == "dict" else out

    def analyze(self, hta: bool = False, steps: Optional[str] = None,
                format: str = "dict", tables: Optional[List[str]] = None) -> Any:
        """``gpuprof analyze``: HTA's breakdowns, launch statistics, memory, findings
        (schema gpuprof.analyze/1, docs/analyses.md). ``hta=True`` uses HTA's definitions;
        ``tables`` the tables of ``--table`` (default all)."""
        out = self._t.analyze(hta=hta, steps=steps, format=format, tables=tables)
        return Result(out, "analyze") if format == "dict" else out

    def partial(self, hta: bool = False, steps: Optional[str] = None) -> bytes:
        """``gpuprof analyze --partial``: the compact, versioned partial result of this trace's
        ranks (bytes), for :func:`merge` elsewhere (docs/jobs.md). Each rank trace must name its
        rank (distributedInfo.rank)."""
        return _core.partial(self._t, hta=hta, steps=steps)

    def ops(self, by: str = "name", sort: str = "self_gpu", top: int = 0,
            no_merge: bool = False, peak_tflops: float = 0.0, peak_tbps: float = 0.0,
            format: str = "dict") -> Any:
        """``gpuprof ops``: GPU work per launching operator (by name, shape, module, line,
        annotation, kernel or instance), self/total CPU, FLOPs, bytes and the roofline
        (docs/ops.md). Needs the trace read with keep_op_shapes=True (the default) for shapes."""
        out = self._t.ops(by=by, sort=sort, top=top, no_merge=no_merge, peak_tflops=peak_tflops,
                          peak_tbps=peak_tbps, format=format)
        return Result(out, "ops") if format == "dict" else out

    def advise(self, priority: str = "low", format: str = "dict", **thresholds: Any) -> Any:
        """``gpuprof advise``: optimisation suggestions (the seed's profile rules on profiler
        ranges and analyze's rules on traces; schema gpuprof.advise/1, docs/advise.md).
        Thresholds: gpu_op_max_ms, cpu_op_min_ms, batch_min_calls, cache_min_calls,
        cache_max_ms, memory_min_mb, util_max_pct."""
        out = self._t.advise(priority=priority, format=format, **thresholds)
        return Result(out, "advise") if format == "dict" else out

    def diff(self, current: "Trace", threshold: float = 5.0, alpha: float = 0.05,
             format: str = "dict") -> Any:
        """``gpuprof diff`` with this trace as the base: verdicts per name (docs/diff.md)."""
        out = _core.diff([self._t], [current._t], threshold=threshold, alpha=alpha,
                         format=format, base_label=self.path, current_label=current.path)
        return Result(out, "diff") if format == "dict" else out

    def flame(self, path=None, weight: str = "auto", title: Optional[str] = None,
              by: str = "stack", min_duration_ms: float = 0.0, max_depth: int = 0,
              group_kernels_ms: float = 0.0) -> Any:
        """``gpuprof flame``: writes the flame graph to path (.html, .svg, .folded,
        .speedscope.json); without a path returns the folded stacks {"a;b;c": self_ns}.
        ``by="module"`` makes the frames the nn.Module hierarchy (``--by module``);
        ``min_duration_ms`` folds frames shorter than that into their parent (``--min-duration``),
        ``max_depth`` folds frames deeper than it (root = 0, thread = 1; ``--max-depth``),
        ``group_kernels_ms`` merges GPU leaves shorter than that into "[N small kernels]"
        (``--group-kernels``); 0 turns each off."""
        return self._t.flame(path, weight=weight, title=title, by=by,
                             min_duration_ms=min_duration_ms, max_depth=max_depth,
                             group_kernels_ms=group_kernels_ms)

    def report(self, path, title: Optional[str] = None) -> None:
        """``gpuprof report``: writes the self-contained dashboard page to path."""
        self._t.report(path, title=title)

    def timeline(self, path, title: Optional[str] = None,
                 critical_path: bool = False) -> Dict[str, Any]:
        """``gpuprof timeline [--critical-path]``: writes the timeline page to path and returns its
        figures, those of ``gpuprof timeline --json``: output, rows, events (drawn), span_ns,
        cpu_active_ns, gpu_busy_ns, overlap_ns. critical_path: each step's critical path drawn
        over the timeline, as ``--critical-path``."""
        return self._t.timeline(path, title=title, critical_path=critical_path)

    def view(self, name: str, title: Optional[str] = None, weight: Optional[str] = None,
             by: Optional[str] = None, critical_path: bool = False) -> str:
        """The view ``name`` of :func:`views` (a page's HTML or a document's JSON): the bytes of
        the server's route for it and of its CLI command (docs/reports.md). critical_path:
        timeline views only, the route's ``?critical_path=1``."""
        return self._t.view(name, title=title, weight=weight, by=by,
                            critical_path=critical_path)

    def write_chrome(self, path) -> None:
        """``gpuprof convert``: writes a one-rank trace as Kineto-compatible Chrome JSON."""
        self._t.write_chrome(path)

    def compile(self, current: Optional["Trace"] = None, log=None, top: int = 20,
                format: str = "dict", html=None, title: Optional[str] = None) -> Any:
        """``gpuprof compile --trace THIS [--trace CURRENT] [LOG]``: the compiled regions
        ("Torch-Compiled Region") of this trace, their CPU time, GPU work sum, kernels and launch
        overhead against the eager ops; with ``current`` (another Trace or a path) the speedup
        overall and per region; with ``log`` (a TORCH_TRACE log or directory) the log's analysis
        too. See :func:`compile_log`."""
        traces = [self] if current is None else [self, current]
        return compile_log(log, traces=traces, top=top, format=format, html=html, title=title)


def _naming_the_file(fn: Callable) -> Callable:
    """A Trace method whose gpuprof.Error names the trace's path (issue 38: "flame: nothing to
    report", "flame: size limit reached" said which limit, not which file)."""
    @functools.wraps(fn)
    def call(self: "Trace", *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        except Error as e:
            msg = str(e)
            if self.path and self.path not in msg:
                raise type(e)("%s: %s" % (self.path, msg)) from e
            raise
    return call


for _name, _fn in list(vars(Trace).items()):
    if not _name.startswith("_") and callable(_fn):
        setattr(Trace, _name, _naming_the_file(_fn))
del _name, _fn


def views() -> List[Dict[str, Any]]:
    """The registry of views (include/gpuprof/views.h): each page and JSON document with its
    server route, its CLI command and its Python call; :meth:`Trace.view` renders one."""
    return _core.views()


def read(path, *, threads: int = 0, keep_python: bool = True, keep_memory: bool = True,
         keep_op_shapes: bool = True, mmap: bool = False) -> Trace:
    """Reads a Kineto / PyTorch-profiler trace (.json, .json.gz), a gpuprof profile, or a directory
    of rank traces. Errors raise :class:`gpuprof.Error` subclasses whose message names the file and
    byte offset. The GIL is released while it reads; Ctrl-C interrupts it. A plain file is read
    through read(2); ``mmap=True`` maps it and parses it in place instead (slower on the virtual
    machines measured in docs/decisions/mmap-read.md, and not for a file that another process may
    truncate or rewrite while it is read: a mapped one would then stop the process with
    SIGBUS)."""
    return Trace(_core.read(path, threads=threads, keep_python=keep_python,
                            keep_memory=keep_memory, keep_op_shapes=keep_op_shapes, mmap=mmap))


def merge(parts, format: str = "dict", tables: Optional[List[str]] = None) -> Any:
    """``gpuprof merge``: the job's analysis from partial results (bytes from
    :meth:`Trace.partial`, or paths of files ``gpuprof analyze --partial`` wrote), in any order;
    the same as ``read(job_dir).analyze()`` on those ranks. ``format``: "dict" (a Result), "json",
    "text", or "partial" (the merged partial, bytes). Partials of another version or job, or two
    holding one rank, raise :class:`InvalidArgumentError` naming the one at fault."""
    data = []
    for p in parts:
        if isinstance(p, (bytes, bytearray, memoryview)):
            data.append(p)
        else:
            with open(p, "rb") as f:
                data.append(f.read())
    out = _core.merge(data, format="json" if format == "dict" else format, tables=tables)
    if format == "dict":
        import json
        return Result(json.loads(out), "analyze")
    return out


__all__.append("merge")


def compile_log(log=None, *, traces=(), top: int = 20, format: str = "dict", html=None,
                title: Optional[str] = None) -> Any:
    """``gpuprof compile``: torch.compile analysis of a TORCH_TRACE log (a file, plain or .gz, or
    a directory of rank logs): compile ids, graph breaks with reason, user line and suggestion,
    recompilations and why, failures, compile time per phase, cache hits, fusion per graph
    (docs/compile.md). ``traces`` (up to two paths or one-rank Traces: base, then current) adds
    the compiled regions of traces of compiled code and the speedup. Returns a Result with the
    schema of ``gpuprof compile --json`` (gpuprof.compile/1), or str with ``format="text"`` /
    ``"json"``; ``html=PATH`` also writes the HTML report (``--html``)."""
    core = [t._t if isinstance(t, Trace) else t for t in traces]
    if format not in ("dict", "json", "text"):
        raise ValueError('format must be one of "dict", "json", "text"')
    if html is not None:
        page = _core.compile(log, core, top=top, format="html", title=title)
        _core.write_file(html, page)  # the CLI's writer: whole or not at all, devices written into
    out = _core.compile(log, core, top=top, format=format, title=title)
    return Result(out, "compile") if format == "dict" else out


__all__.append("compile_log")


from .compare import (Comparison, OptimizationSuggestion, ProfilerOptimizer,  # noqa: E402
                      compare_profiling_runs)
from .cuda import CudaProfiler, KernelTimer, MemoryTracker  # noqa: E402
from .monitor import Monitor  # noqa: E402

__all__.append("Monitor")


def step() -> None:
    """Ends a training step for `gpuprof profile` (its profiler's schedule advances; from the
    first call on, the program's optimizer steps no longer count). Does nothing when the program
    does not run under `gpuprof profile`."""
    hook = sys.modules.get("_gpuprof_profile")
    if hook is not None:
        hook.step()
