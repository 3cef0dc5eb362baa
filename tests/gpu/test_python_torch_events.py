"""gpuprof.KernelTimer on REAL torch.cuda.Event objects, on a real GPU (tests/gpu/run.sh runs it with
the build's Python package: PYTHONPATH=BUILD/python). Skipped without torch built with CUDA or
without a GPU. The fake-event tests of the same code are python/tests/test_cuda_events.py."""
import json

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("torch has no CUDA device here", allow_module_level=True)

import gpuprof  # noqa: E402


def work(n=1024):
    a = torch.randn(n, n, device="cuda")
    return a @ a


def test_timer_records_torch_events_itself():
    t = gpuprof.KernelTimer(profiler=gpuprof.Profiler(), events="torch")
    assert t.uses_user_events and t.uses_cuda_events
    for _ in range(5):
        t.start("matmul")
        work()
        t.stop("matmul")
    with t.time("matmul_on_stream", stream=torch.cuda.current_stream()):
        work()
    s = t.get_timing("matmul")
    assert s["calls"] == 5 and s["pending"] == 0
    assert 0.0 < s["min_ms"] <= s["max_ms"] < 1000.0  # plausible: more than 0, under a second
    assert t.get_timing("matmul_on_stream")["calls"] == 1
    report = t.get_report()
    assert "GPU KERNEL TIMING REPORT" in report and "\nmatmul " in report


def test_user_recorded_events_give_torch_elapsed_time():
    t = gpuprof.KernelTimer(profiler=gpuprof.Profiler())
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    work(2048)
    end.record()
    t.add_events("user", start, end)  # read when end completes
    torch.cuda.synchronize()
    want = start.elapsed_time(end)
    got = t.get_timing("user")
    assert got["calls"] == 1
    assert got["total_ms"] == pytest.approx(want, abs=1e-5)  # the same reading, in ns


def test_cuda_profiler_with_torch_event_class_and_export(tmp_path):
    cp = gpuprof.CudaProfiler(profiler=gpuprof.Profiler(), events=torch.cuda.Event,
                              sync_on_stop=True)
    for _ in range(3):
        with cp.profile_kernel("step"):
            work()
    assert cp.timer.resolve(wait=False) == 0  # sync_on_stop read every pair in stop()
    assert "step" in cp.get_full_report()
    path = tmp_path / "p.json"
    cp.profiler.export_json(path)
    timers = json.loads(path.read_text())["gpuprof_profile"]["cuda_timers"]["timers"]
    assert [(r["name"], r["calls"]) for r in timers] == [("step", 3)]
