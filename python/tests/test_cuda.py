"""KernelTimer, MemoryTracker and CudaProfiler. The *_fake_cuda tests run against the FAKE
libcuda of tests/fakes/cuda (scripted event times): they test the binding, not a GPU."""
import textwrap

import pytest

import gpuprof
from conftest import run_python


class ArrayInterface:
    def __init__(self, shape, typestr):
        self.__array_interface__ = {"shape": shape, "typestr": typestr, "version": 3,
                                    "data": (0, False)}


def test_memory_tracker_tensors_of_every_kind():
    np = pytest.importorskip("numpy")
    m = gpuprof.MemoryTracker()
    m.track_tensor("psi", np.zeros((100, 50, 4, 4), dtype=np.float32))
    m.track_tensor("iface", ArrayInterface((10, 3), "<f8"))
    m.track_tensor("dl", type("DL", (), {"__dlpack__": lambda self: np.ones(7, np.int16).__dlpack__()})())
    info = m.get_tensor_info("psi")
    assert info["shape"] == "(100, 50, 4, 4)" and info["dtype"] == "float32"
    assert info["bytes"] == 100 * 50 * 4 * 4 * 4
    assert m.get_tensor_info("iface")["bytes"] == 240
    assert m.get_tensor_info("iface")["dtype"] == "float64"
    assert m.get_tensor_info("dl")["dtype"] == "int16" and m.get_tensor_info("dl")["bytes"] == 14
    assert m.get_tensor_info("none") is None
    assert m.get_total_memory() == 320000 + 240 + 14
    report = m.get_memory_report()
    assert "GPU MEMORY TRACKING REPORT" in report and "psi" in report
    m.untrack_tensor("psi")
    with pytest.raises(KeyError):
        m.untrack_tensor("psi")
    assert m.get_total_memory() == 254
    assert m.get_peak_memory() >= 320254
    m.reset()
    assert m.tracked() == [] and m.get_peak_memory() == 0
    with pytest.raises(TypeError):
        m.track_tensor("x", object())


def test_torch_tensor_is_tracked():
    torch = pytest.importorskip("torch")
    m = gpuprof.MemoryTracker()
    m.track_tensor("w", torch.zeros(3, 5, dtype=torch.float16))
    assert m.get_tensor_info("w") == {"name": "w", "shape": "(3, 5)", "dtype": "float16",
                                      "bytes": 30, "size_mib": 30 / 2**20}


def test_kernel_timer_without_driver_falls_back_to_cpu_clock():
    code = textwrap.dedent("""
        import gpuprof
        t = gpuprof.KernelTimer()
        assert not t.uses_cuda_events and t.status
        for _ in range(3):
            t.start("k"); t.stop("k")
        with t.time("k"):
            pass
        assert t.get_timing("k")["calls"] == 4, t.get_timing("k")
        r = t.get_report()
        assert "GPU KERNEL TIMING REPORT" in r and "CPU-clock fallback" in r, r
        try:
            t.stop("k")
        except LookupError:
            print("ok")
    """)
    p = run_python(code, {"GPUPROF_CUDA_LIBRARY": "/nonexistent/libcuda.so.1"})
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "ok"


def test_kernel_timer_fake_cuda(fake_cuda):
    code = textwrap.dedent("""
        import gpuprof
        class ArrayInterface:
            def __init__(self, shape, typestr):
                self.__array_interface__ = {"shape": shape, "typestr": typestr, "version": 3}
        t = gpuprof.KernelTimer()
        assert t.uses_cuda_events, t.status
        for _ in range(5):
            t.start("angular_scattering"); t.stop("angular_scattering")
        t.start("energy_loss", stream=0); t.stop("energy_loss")
        s = t.get_timing("angular_scattering")
        assert s["calls"] == 5 and s["total_ms"] > 0, s
        assert [r["name"] for r in t.get_timings()][0] == "angular_scattering"
        assert "angular_scattering" in t.get_report()
        t.enabled = False
        t.start("ignored"); t.stop("ignored")
        assert t.get_timing("ignored") is None
        t.enabled = True
        m = gpuprof.MemoryTracker(profiler=t._prof)
        m.track_tensor("kept", ArrayInterface((4,), "<f4"))
        t.reset()                        # timers only
        assert t.get_timing("angular_scattering") is None and t.get_timings() == []
        assert m.get_tensor_info("kept")["bytes"] == 16
        print("ok")
    """)
    p = run_python(code, {"GPUPROF_CUDA_LIBRARY": fake_cuda})
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "ok"


def test_cuda_profiler_full_report_fake_cuda(fake_cuda):
    code = textwrap.dedent("""
        import numpy as np, gpuprof
        cp = gpuprof.CudaProfiler()
        cp.track_tensor("psi", np.zeros((64, 64), np.float32))
        for _ in range(3):
            with cp.profile_kernel("spatial_streaming"):
                pass
        full = cp.get_full_report()
        assert "GPU PROFILING REPORT" in full
        assert "GPU KERNEL TIMING REPORT" in full and "GPU MEMORY TRACKING REPORT" in full
        assert "spatial_streaming" in full and "psi" in full
        assert cp.profiler.get_summary()["spatial_streaming"]["calls"] == 3
        cp.disable()
        with cp.profile_kernel("off"):
            pass
        assert cp.timer.get_timing("off") is None
        assert "off" not in cp.profiler.get_summary()
        cp.enable()
        cp.reset()
        assert cp.get_tensor_info("psi") is None
        print("ok")
    """)
    p = run_python(code, {"GPUPROF_CUDA_LIBRARY": fake_cuda})
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "ok"


def test_private_functions_check_handles():
    """Issue 38: the private _core functions that take a profiler handle segfaulted on a bogus
    one; each now raises ValueError, and a live handle still works."""
    from gpuprof import _core

    bogus = [1, 12345678, 2**40 + 8, -8]
    for h in bogus:
        for call in (lambda: _core._timer_start(h, "x", 0), lambda: _core._timer_stop(h, "x"),
                     lambda: _core._timer_stats(h, "x"), lambda: _core._timer_all(h),
                     lambda: _core._timer_report(h), lambda: _core._timer_add(h, "x", 5),
                     lambda: _core._from_profiler(h)):
            with pytest.raises((ValueError, OverflowError)):
                call()
    with pytest.raises(ValueError):
        _core._timer_all(0)
    p = gpuprof.Profiler()
    h = p._handle()
    _core._timer_add(h, "x", 5)
    assert _core._timer_all(h)[0]["name"] == "x"
    del p  # the handle dies with its profiler
    import gc

    gc.collect()
    with pytest.raises(ValueError):
        _core._timer_all(h)
