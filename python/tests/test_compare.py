"""compare_profiling_runs and ProfilerOptimizer over `gpuprof diff` and gpuprof's findings."""
import io
import json

import pytest

import gpuprof


def test_compare_profiling_runs_matches_cli(example_profiles, cli):
    base, cur = example_profiles
    c = gpuprof.compare_profiling_runs(str(base), str(cur), significance_threshold=5.0)
    want = json.loads(cli("diff", base, cur, "--json", check=False).stdout)
    s = c.get_summary()
    assert s.regressions_count == want["summary"]["regression"]
    assert s.improvements_count == want["summary"]["improvement"]
    assert s.total_operations == want["summary"]["names"]
    regs = c.get_regressions(top_n=5)
    assert regs and all(r.verdict.startswith("REGRESSION") for r in regs)
    assert regs[0].current_time_ms > regs[0].baseline_time_ms
    assert c.has_regression == (want["summary"]["significant_regressions"] > 0)
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


def test_optimizer_suggestions_come_from_the_findings(example_trace, cli):
    want = json.loads(cli("analyze", example_trace, "--json").stdout)["findings"]
    opt = gpuprof.ProfilerOptimizer(str(example_trace))
    got = opt.get_suggestions()
    assert len(got) == len(want) > 0
    assert {s.description for s in got} == {f["title"] for f in want}
    order = [s.priority for s in got]
    rank = {"critical": 0, "high": 1, "medium": 2, "low": 3}
    assert order == sorted(order, key=lambda p: rank.get(p, 9))
    assert opt.get_suggestions(top_n=1) == got[:1]
    assert all(s.priority == "critical" for s in opt.get_critical_suggestions())
    buf = io.StringIO()
    opt.print_suggestions(top_n=2, file=buf)
    assert got[0].description in buf.getvalue()
