"""Comparison of runs and optimisation suggestions, on top of `gpuprof diff` and the findings of
`gpuprof analyze` / `gpuprof advise` (the C library computes both; this module gives them the
names of the tools gpuprof replaces: compare_profiling_runs and ProfilerOptimizer)."""
from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict, dataclass
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from . import _core

Source = Union[str, "os.PathLike[str]", Dict[str, Any], Any]


def _trace_of(src: Source):
    """A _core.Trace from a path, a Trace, a Profiler, or a profile already loaded as a dict."""
    from . import Profiler, Trace
    if isinstance(src, Trace):
        return src._t
    if isinstance(src, _core.Trace):
        return src
    if isinstance(src, Profiler):
        return _core._from_profiler(src._handle())
    if isinstance(src, (dict, list)):
        return _core.read_buffer(json.dumps(src).encode(), "<profile data>")
    return _core.read(src)


def _runs(side: Union[Source, Sequence[Source]]) -> List[Any]:
    """The runs of one side: a list/tuple of sources is several runs, anything else one. (A bare
    JSON event array loaded with json.load is a list of dicts: that is one run.)"""
    if isinstance(side, (list, tuple)) and not any(isinstance(s, dict) for s in side):
        return [_trace_of(s) for s in side]
    return [_trace_of(side)]


@dataclass
class OperationChange:
    """One name compared between the runs (a row of `gpuprof diff`)."""
    operation: str
    kind: str
    verdict: str             # REGRESSION, IMPROVEMENT, NO_CHANGE, NEW, REMOVED
    baseline_time_ms: float  # total per run
    current_time_ms: float
    change_percent: Optional[float]
    baseline_calls: Optional[float]
    current_calls: Optional[float]
    tested: bool             # the verdict was tested across runs (else the threshold decided)
    significant: bool
    p_value: Optional[float]
    calls_direction: str     # "more", "fewer", "same"
    per_call_direction: str  # "slower", "faster", "same", "untested"
    row: Dict[str, Any]      # the whole JSON row

    @classmethod
    def from_row(cls, row: Dict[str, Any]) -> "OperationChange":
        base, cur = row.get("base") or {}, row.get("current") or {}
        test = row.get("test") or {}
        return cls(operation=row.get("name", ""), kind=row.get("kind", ""),
                   verdict=row.get("type", ""),
                   baseline_time_ms=(base.get("total_ns_per_run") or 0) / 1e6,
                   current_time_ms=(cur.get("total_ns_per_run") or 0) / 1e6,
                   change_percent=row.get("delta_pct"),
                   baseline_calls=base.get("calls_per_run"),
                   current_calls=cur.get("calls_per_run"),
                   tested=bool(test.get("tested")),
                   significant=bool(test.get("significant")), p_value=test.get("p_value"),
                   calls_direction=row.get("calls_direction", ""),
                   per_call_direction=row.get("per_call_direction", ""), row=row)


@dataclass
class ComparisonSummary:
    """Counts of a comparison (gpuprof diff's "summary" member)."""
    total_operations: int
    regressions_count: int  # names and overall metrics (peak memory...) that regressed
    improvements_count: int
    unchanged_count: int
    new_count: int
    removed_count: int
    significant_regressions: int
    untested_regressions: int
    failing_regressions: int  # what --fail-on-regression fails on (untested ones included)
    speedup: Optional[float]
    total_time_change_percent: Optional[float]


class Comparison:
    """The result of :func:`compare_profiling_runs`: `gpuprof diff`'s document with the seed's
    accessors. ``doc`` is the JSON document (schema gpuprof.diff/1, docs/diff.md)."""

    def __init__(self, doc: Dict[str, Any], text: str) -> None:
        self.doc = doc
        self._text = text
        self.changes = [OperationChange.from_row(r) for r in doc.get("rows", [])]

    def get_summary(self) -> ComparisonSummary:
        s = self.doc.get("summary", {})
        total = next((m for m in self._metrics() if m.get("name") == "total_time"), {})
        return ComparisonSummary(
            total_operations=s.get("names", len(self.changes)),
            regressions_count=s.get("regression", 0) + self._metric_count("REGRESSION"),
            improvements_count=s.get("improvement", 0),
            unchanged_count=s.get("no_change", 0), new_count=s.get("new", 0),
            removed_count=s.get("removed", 0),
            significant_regressions=s.get("significant_regressions", 0),
            untested_regressions=s.get("untested_regressions", 0),
            failing_regressions=s.get("failing_regressions", 0),
            speedup=s.get("speedup"), total_time_change_percent=total.get("delta_pct"))

    def _metric_count(self, verdict: str) -> int:
        """Overall metrics (total_time, gpu_work_sum, idle_time, peak_memory) with that verdict:
        gpuprof diff --fail-on-regression counts them with the names."""
        return sum(1 for m in self._metrics() if str(m.get("type", "")).startswith(verdict))

    def _metrics(self) -> List[Dict[str, Any]]:
        m = self.doc.get("metrics", [])
        return m if isinstance(m, list) else [m]

    def _of(self, verdict: str, top_n: Optional[int]) -> List[OperationChange]:
        rows = [c for c in self.changes if c.verdict.startswith(verdict)]
        rows.sort(key=lambda c: -abs(c.current_time_ms - c.baseline_time_ms))
        return rows if top_n is None else rows[:top_n]

    def get_regressions(self, top_n: Optional[int] = None) -> List[OperationChange]:
        """Names that got slower, largest change in time first."""
        return self._of("REGRESSION", top_n)

    def get_improvements(self, top_n: Optional[int] = None) -> List[OperationChange]:
        """Names that got faster, largest change in time first."""
        return self._of("IMPROVEMENT", top_n)

    @property
    def has_regression(self) -> bool:
        """True when `gpuprof diff --fail-on-regression` would fail: a regression above the
        threshold, tested or not (docs/diff.md, the decision rule)."""
        return self.get_summary().failing_regressions > 0

    @property
    def has_significant_regression(self) -> bool:
        """True when `--fail-on-regression --require-significance` would fail."""
        return self.get_summary().significant_regressions > 0

    def print_summary(self, file=None) -> None:
        """Prints `gpuprof diff`'s text report."""
        (file or sys.stdout).write(self._text)

    def _print_rows(self, rows: Iterable[OperationChange], title: str, file) -> None:
        out = file or sys.stdout
        out.write("%s\n" % title)
        for c in rows:
            pct = "n/a" if c.change_percent is None else "%+.1f %%" % c.change_percent
            out.write("  %-48s %10.3f ms -> %10.3f ms  (%s)\n"
                      % (c.operation[:48], c.baseline_time_ms, c.current_time_ms, pct))

    def print_regressions(self, top_n: Optional[int] = None, file=None) -> None:
        self._print_rows(self.get_regressions(top_n), "Regressions (total time per run):", file)

    def print_improvements(self, top_n: Optional[int] = None, file=None) -> None:
        self._print_rows(self.get_improvements(top_n), "Improvements (total time per run):", file)

    def to_dict(self) -> Dict[str, Any]:
        return self.doc

    def export_json(self, path) -> None:
        """Writes the document (``gpuprof diff --json``'s) to path as the CLI writes its outputs
        (whole or not at all; a device, FIFO or link is written into or through)."""
        _core.write_file(path, json.dumps(self.doc, indent=2))


def compare_profiling_runs(baseline, current, significance_threshold: float = 5.0,
                           alpha: float = 0.05) -> Comparison:
    """Compares two runs (or two lists of repeated runs) with `gpuprof diff`: each side is a
    path, a Trace, a Profiler, profile data loaded with json.load, or a list of those (runs).
    ``significance_threshold`` is the practical threshold in percent."""
    base, cur = _runs(baseline), _runs(current)
    kw = dict(threshold=significance_threshold, alpha=alpha,
              base_label=str(baseline) if not isinstance(baseline, (dict, list)) else "baseline",
              current_label=str(current) if not isinstance(current, (dict, list)) else "current")
    doc = _core.diff(base, cur, format="dict", **kw)
    text = _core.diff(base, cur, format="text", **kw)
    return Comparison(doc, text)


@dataclass
class OptimizationSuggestion:
    """One suggestion of `gpuprof advise`, in the seed tool's fields (times in ms)."""
    rule: str
    operation: Optional[str]  # None for trace-level rules
    type: str
    priority: str             # critical, high, medium, low
    description: str
    expected_improvement: str
    implementation_hint: str
    current_time_ms: Optional[float]
    estimated_time_ms: Optional[float]
    potential_speedup: Optional[float]
    evidence: List[Dict[str, Any]]

    @classmethod
    def from_json(cls, f: Dict[str, Any]) -> "OptimizationSuggestion":
        def ms(key):
            v = f.get(key)
            return v / 1e6 if isinstance(v, (int, float)) else None
        return cls(rule=f.get("rule", ""), operation=f.get("operation"), type=f.get("type", ""),
                   priority=f.get("priority", ""), description=f.get("description", ""),
                   expected_improvement=f.get("expected_improvement", ""),
                   implementation_hint=f.get("implementation_hint", ""),
                   current_time_ms=ms("current_ns"), estimated_time_ms=ms("estimated_ns"),
                   potential_speedup=f.get("potential_speedup"),
                   evidence=f.get("evidence", []))




class ProfilerOptimizer:
    """Suggestions for a profile or trace from `gpuprof advise` (the seed's rules on profiler
    ranges, analyze's rules on traces), in advise's order (priority, then expected gain).
    ``data``: a path, a Trace, a Profiler, or profile data loaded with json.load; ``thresholds``
    as Trace.advise."""

    def __init__(self, data: Source, **thresholds: Any) -> None:
        self.doc = _trace_of(data).advise(format="dict", **thresholds)
        self.suggestions = [OptimizationSuggestion.from_json(f)
                            for f in self.doc.get("suggestions", [])]
        self.not_evaluated = self.doc.get("not_evaluated", [])

    def get_suggestions(self, top_n: Optional[int] = None) -> List[OptimizationSuggestion]:
        return self.suggestions if top_n is None else self.suggestions[:top_n]

    def get_critical_suggestions(self) -> List[OptimizationSuggestion]:
        return [s for s in self.suggestions if s.priority == "critical"]

    def print_suggestions(self, top_n: Optional[int] = None, file=None) -> None:
        out = file or sys.stdout
        rows = self.get_suggestions(top_n)
        if not rows:
            out.write("No suggestion: no rule fired.\n")
        for i, s in enumerate(rows, 1):
            what = s.operation + ": " if s.operation else ""
            out.write("%d. [%s] %s: %s%s\n" % (i, s.priority.upper(), s.type, what,
                                                s.description))
            if s.implementation_hint:
                out.write("   hint: %s\n" % s.implementation_hint)
            if s.expected_improvement:
                out.write("   expected: %s\n" % s.expected_improvement)

    def print_critical_suggestions(self, file=None) -> None:
        out = file or sys.stdout
        rows = self.get_critical_suggestions()
        if not rows:
            out.write("No critical suggestion.\n")
        for s in rows:
            out.write("[CRITICAL] %s: %s\n" % (s.type, s.description))

    def export_suggestions(self, path) -> None:
        """Writes the suggestions as a JSON list to path, as export_json writes."""
        _core.write_file(path, json.dumps([asdict(s) for s in self.suggestions], indent=2))
