"""compare_profiling_runs and ProfilerOptimizer over `gpuprof diff` and gpuprof's findings."""
import io
import json

import pytest

import gpuprof
from conftest import ROOT


def test_compare_profiling_runs_matches_cli(example_profiles, cli):
    base, cur = example_profiles
    c = gpuprof.compare_profiling_runs(str(base), str(cur), significance_threshold=5.0)
    want = json.loads(cli("diff", base, cur, "--json", check=False).stdout)
    s = c.get_summary()
    metric_regs = sum(1 for m in want["metrics"] if m["type"].startswith("REGRESSION"))
    assert s.regressions_count == want["summary"]["regression"] + metric_regs  # as --fail-on-...
    assert s.improvements_count == want["summary"]["improvement"]
    assert s.total_operations == want["summary"]["names"]
    regs = c.get_regressions(top_n=5)
    assert regs and all(r.verdict.startswith("REGRESSION") for r in regs)
    assert regs[0].current_time_ms > regs[0].baseline_time_ms
    assert c.has_regression == (want["summary"]["failing_regressions"] > 0)
    assert c.has_significant_regression == (want["summary"]["significant_regressions"] > 0)
    assert s.untested_regressions == want["summary"]["untested_regressions"]
    buf = io.StringIO()
    c.print_summary(file=buf)
    assert buf.getvalue() == cli("diff", base, cur, check=False).stdout
    c.print_regressions(file=buf)
    assert regs[0].operation in buf.getvalue()


def test_compare_accepts_loaded_data_profilers_and_run_lists(example_profiles, tmp_path):
    base, cur = example_profiles
    data = json.loads(base.read_text())
    c = gpuprof.compare_profiling_runs(data, [str(cur), str(cur)])
    assert c.doc["base_runs"] == 1 and c.doc["current_runs"] == 2
    p = gpuprof.Profiler()
    with p.profile("only_here"):
        pass
    c2 = gpuprof.compare_profiling_runs(p, str(cur))
    assert any(ch.verdict == "REMOVED" and ch.operation == "only_here" for ch in c2.changes)
    out = tmp_path / "cmp.json"
    c.export_json(out)
    assert json.loads(out.read_text())["schema"] == c.doc["schema"]


def test_optimizer_suggestions_are_gpuprofs_advise(example_trace, cli):
    want = json.loads(cli("advise", example_trace, "--json").stdout)["suggestions"]
    opt = gpuprof.ProfilerOptimizer(str(example_trace))
    got = opt.get_suggestions()
    assert len(got) == len(want) > 0
    assert [s.description for s in got] == [f["description"] for f in want]  # advise's order
    assert opt.get_suggestions(top_n=1) == got[:1]
    assert all(s.priority == "critical" for s in opt.get_critical_suggestions())
    assert any(r["rule"] == "algorithm" for r in opt.not_evaluated) or opt.not_evaluated == []
    buf = io.StringIO()
    opt.print_suggestions(top_n=2, file=buf)
    assert got[0].description in buf.getvalue()


def _profile(events):
    return {"schemaVersion": 1, "traceEvents": [
        {"ph": "X", "cat": "range", "name": n, "pid": 1, "tid": 1, "ts": ts, "dur": dur,
         "args": args} for n, ts, dur, args in events]}


def test_optimizer_profile_rules_fire_with_the_seeds_fields():
    # 12 back-to-back calls of one 2 ms op (batching), then one 30 ms CPU op moving 200 MB
    # (routing to the GPU and memory); times in us as the Chrome format has them.
    ev = [("small_op", 1000.0 + 2000.0 * i, 2000.0, {}) for i in range(12)]
    ev.append(("big_cpu_op", 30000.0, 30000.0, {"bytes": 200_000_000}))
    opt = gpuprof.ProfilerOptimizer(_profile(ev))
    by_rule = {s.rule: s for s in opt.get_suggestions()}
    assert {"batching", "routing_to_gpu", "memory_heavy_op"} <= set(by_rule), by_rule.keys()
    b = by_rule["batching"]
    assert b.operation == "small_op" and b.type == "batching"
    assert b.current_time_ms == pytest.approx(24.0)
    assert b.estimated_time_ms == pytest.approx(24.0 * 0.7)
    assert b.potential_speedup == pytest.approx(1 / 0.7, rel=1e-3)
    assert b.implementation_hint and b.expected_improvement
    r = by_rule["routing_to_gpu"]
    assert r.operation == "big_cpu_op" and r.estimated_time_ms == pytest.approx(6.0)
    # a higher threshold turns batching off; priorities filter
    opt2 = gpuprof.ProfilerOptimizer(_profile(ev), batch_min_calls=13)
    assert "batching" not in {s.rule for s in opt2.get_suggestions()}
    with pytest.raises(ValueError):
        gpuprof.read(str(ROOT / "examples" / "traces" / "example_step.json")).advise(priority="x")
