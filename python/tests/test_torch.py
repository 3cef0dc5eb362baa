"""gpuprof.torch with Debian's python3-torch (CPU; 1.13 without Kineto writes the legacy
autograd-profiler trace): sessions recorded inside the test and analysed end to end; the calls
per operator agree with torch's own key_averages()."""
import os

import pytest

torch = pytest.importorskip("torch")
import gpuprof  # noqa: E402
import gpuprof.torch as gtorch  # noqa: E402


def model_and_input(batch=16):
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
    return m, torch.randn(batch, 32)


def test_session_is_analysed(tmp_path):
    m, x = model_and_input()
    with gtorch.profile("train", output_dir=tmp_path) as s:
        for _ in range(3):
            m(x).sum().backward()
    assert s.trace_path == tmp_path / "train.json" and s.trace_path.exists()
    assert s.backend in ("kineto", "autograd (legacy)")
    assert s.total_time_ms > 0 and 0 < s.cpu_time_ms <= s.total_time_ms * 1.05
    assert s.gpu_work_sum_ms == 0 and s.kernels == []  # CPU-only torch: no GPU work
    assert s.summary["gpu_work_sum_ns"] == 0 and "gpu_time_ns" not in s.summary  # renamed
    assert s.cuda_time_ms == s.gpu_work_sum_ms  # the old name, kept one release
    names = {r["name"] for r in s.summary.rows()}
    assert "aten::addmm" in names
    assert isinstance(s.bottlenecks, list) and isinstance(s.recommendations, list)


def test_operator_calls_match_key_averages(tmp_path):
    m, x = model_and_input()
    path = tmp_path / "t.json"
    with torch.autograd.profiler.profile() as prof:
        for _ in range(4):
            m(x)
    prof.export_chrome_trace(str(path))
    want = {e.key: e.count for e in prof.key_averages()}
    got = {r["name"]: r["calls"] for r in gpuprof.read(path).summary(kinds=["cpu_op"]).rows()}
    assert got == want


def test_profile_function_and_compare_sessions(tmp_path):
    m, x = model_and_input(8)
    a = gtorch.profile_function(m, x, warmup=2, iterations=5, output_dir=tmp_path / "a")
    b = gtorch.profile_function(m, torch.randn(512, 32), warmup=2, iterations=5,
                                output_dir=tmp_path / "b", name="Sequential")
    assert a.iterations == 5 and a.time_per_iteration_ms > 0
    rows = {r["name"]: r for r in a.summary.rows()}
    assert rows["Sequential"]["calls"] == 5  # one record_function range per iteration
    c = gtorch.compare_sessions(a, b)
    assert c["speedup"] == pytest.approx(a.time_per_iteration_ms / b.time_per_iteration_ms)
    assert any(v["name"] == "aten::addmm" for v in c["verdicts"])
    assert c["summary"]["names"] >= 1
    assert c["gpu_work_sum_ms"] == {"baseline": a.gpu_work_sum_ms, "current": b.gpu_work_sum_ms}
    assert c["cuda_time_ms"] == c["gpu_work_sum_ms"]
