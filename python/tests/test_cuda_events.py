"""KernelTimer on the user's own CUDA events (torch.cuda.Event, CuPy events). Every test here runs
on FAKE event objects, duck-typed like torch's and CuPy's (record / query or done / synchronize /
elapsed_time or cupy.cuda.get_elapsed_time) with scripted times: they test our code (when the
times are read, that they land in the C library's timer table), not the GPU. The real
torch.cuda.Event test is tests/gpu/test_python_torch_events.py (skipped without a GPU)."""
import json
import sys
import types

import pytest

import gpuprof
from gpuprof import cuda as gcuda


class FakeClock:
    """Scripted event times (ms) handed out in record order."""

    def __init__(self, times, not_ready=0):
        self.times = list(times)
        self.not_ready = not_ready  # queries each event answers "not ready" before completing
        self.syncs = 0
        self.records = []  # (event, stream)


class FakeEvent:
    """What fake torch and CuPy events share: record(stream=None) takes the next scripted time;
    the event completes after clock.not_ready "not ready" answers, or at synchronize()."""

    def __init__(self, clock):
        self.clock = clock
        self.t = None
        self.left = clock.not_ready

    def record(self, stream=None):
        self.t = self.clock.times.pop(0)
        self.clock.records.append((self, stream))

    def _complete(self):
        if self.left > 0:
            self.left -= 1
            return False
        return True

    def synchronize(self):
        self.clock.syncs += 1
        self.left = 0


class FakeTorchEvent(FakeEvent):
    """A fake torch.cuda.Event: query() and start.elapsed_time(end)."""

    def __init__(self, clock, enable_timing=True):
        super().__init__(clock)
        self.enable_timing = enable_timing

    def query(self):
        return self._complete()

    def elapsed_time(self, end):
        assert self.t is not None and end.t is not None and self.enable_timing
        assert end.query(), "elapsed_time read before the end event completed"
        return end.t - self.t


class FakeCupyEvent(FakeEvent):
    """A fake cupy.cuda.Event: the done property; the time comes from the module function
    cupy.cuda.get_elapsed_time(start, end)."""

    clock = None

    def __init__(self, block=False, disable_timing=False, interprocess=False):
        super().__init__(type(self).clock)

    @property
    def done(self):
        return self._complete()


@pytest.fixture
def fake_cupy(monkeypatch):
    """A fake `cupy` module (only cuda.Event and cuda.get_elapsed_time) in sys.modules."""
    clock = FakeClock([])
    FakeCupyEvent.clock = clock
    mod = types.ModuleType("cupy")
    mod.cuda = types.SimpleNamespace(
        Event=FakeCupyEvent, get_elapsed_time=lambda s, e: (e.t - s.t) if e.done else -1.0)
    monkeypatch.setitem(sys.modules, "cupy", mod)
    return clock


def reference_rows(samples_ms):
    """The rows the C library gives for the same samples added directly (one KernelTimer on a
    fresh profiler, fed with add_time)."""
    t = gpuprof.KernelTimer(profiler=gpuprof.Profiler(), events=lambda: None)
    for name, ms in samples_ms:
        t.add_time(name, ms)
    return t.get_timings(), t.get_report()


def test_fake_torch_events_start_stop_are_read_lazily_into_the_c_table():
    clock = FakeClock([0.0, 1.0, 10.0, 12.0, 20.0, 23.0, 30.0, 30.5], not_ready=50)
    t = gpuprof.KernelTimer(profiler=gpuprof.Profiler(), events=lambda: FakeTorchEvent(clock))
    assert t.uses_cuda_events and t.uses_user_events and t.status is None
    for _ in range(3):
        t.start("gemm", stream="s1")
        t.stop("gemm")
    with t.time("copy"):
        pass
    assert [s for _, s in clock.records] == ["s1"] * 6 + [None, None]  # stop on start's stream
    assert clock.syncs == 0  # start/stop never wait
    assert t.resolve(wait=False) >= 1  # some end events are not complete yet
    g = t.get_timing("gemm")  # waits: synchronises the rest
    assert clock.syncs >= 1 and t.resolve(wait=False) == 0
    assert g["calls"] == 3 and g["pending"] == 0
    assert g["total_ms"] == pytest.approx(6.0) and g["min_ms"] == pytest.approx(1.0)
    assert g["max_ms"] == pytest.approx(3.0) and g["mean_ms"] == pytest.approx(2.0)
    rows, report = reference_rows([("gemm", 1.0), ("gemm", 2.0), ("gemm", 3.0), ("copy", 0.5)])
    assert t.get_timings() == rows  # the library's own rows for the same samples
    assert t.get_report() == report
    assert report.startswith("=" * 157 + "\nGPU KERNEL TIMING REPORT\n")
    assert "\ngemm " in report and "\nTOTAL                                    4        6.500\n" in report
    with pytest.raises(LookupError):
        t.stop("gemm")


def test_fake_torch_events_recorded_by_the_user_and_exported(tmp_path):
    clock = FakeClock([5.0, 7.5, 8.0, 8.25], not_ready=3)
    prof = gpuprof.Profiler()
    t = gpuprof.KernelTimer(profiler=prof)  # no factory: events handed over by the user
    for _ in range(2):
        start, end = FakeTorchEvent(clock), FakeTorchEvent(clock)
        start.record()
        end.record()
        t.add_events("user_kernel", start, end)
    # Every call queries each pending end event once (3 "not ready" answers each): no waiting.
    assert [t.resolve(wait=False) for _ in range(3)] == [2, 1, 0] and clock.syncs == 0
    s = t.get_timing("user_kernel")
    assert s["calls"] == 2 and s["total_ms"] == pytest.approx(2.75)
    path = tmp_path / "p.json"
    prof.export_json(path)  # the profile export has the rows as cuda_timers
    timers = json.loads(path.read_text())["gpuprof_profile"]["cuda_timers"]["timers"]
    assert [(r["name"], r["calls"]) for r in timers] == [("user_kernel", 2)]
    assert timers[0]["total_ms"] == pytest.approx(2.75)
    t.reset()
    assert t.get_timing("user_kernel") is None


def test_fake_cupy_events_with_sync_on_stop(fake_cupy):
    fake_cupy.times[:] = [0.0, 4.0, 4.0, 4.5]
    fake_cupy.not_ready = 5
    t = gpuprof.KernelTimer(profiler=gpuprof.Profiler(), events="cupy", sync_on_stop=True)
    t.start("angular_scattering")
    assert fake_cupy.syncs == 0
    t.stop("angular_scattering")  # the seed's stop(): waits on the end event, reads the time
    assert fake_cupy.syncs == 1 and t.resolve(wait=False) == 0
    t.start("energy_loss", stream=7)
    t.stop("energy_loss")
    assert fake_cupy.records[-1][1] == 7
    timings = {r["name"]: r for r in t.get_timings()}
    assert timings["angular_scattering"]["total_ms"] == pytest.approx(4.0)
    assert timings["energy_loss"]["total_ms"] == pytest.approx(0.5)


def test_fake_cuda_profiler_profile_kernel_on_user_events():
    clock = FakeClock([0.0, 2.0, 3.0, 5.0])
    cp = gpuprof.CudaProfiler(profiler=gpuprof.Profiler(),
                              events=lambda: FakeTorchEvent(clock))
    for _ in range(2):
        with cp.profile_kernel("spatial_streaming"):
            pass
    assert cp.profiler.get_summary()["spatial_streaming"]["calls"] == 2  # ranges too
    full = cp.get_full_report()
    assert "GPU PROFILING REPORT" in full and "GPU MEMORY TRACKING REPORT" in full
    line = next(x for x in full.splitlines() if x.startswith("spatial_streaming"))
    assert line.split()[1:3] == ["2", "4.000"]
    cp.disable()
    with cp.profile_kernel("off"):
        pass
    assert cp.timer.get_timing("off") is None and clock.times == []


def test_fake_events_factory_forms_and_errors():
    made = []

    class Event:  # stands for torch.cuda.Event, whose default is enable_timing=False
        def __init__(self, enable_timing=False):
            made.append(enable_timing)

    Event.__module__ = "torch.cuda.streams"
    gcuda._event_factory(Event)()
    assert made == [True]
    with pytest.raises(ValueError):
        gpuprof.KernelTimer(events="opencl")
    with pytest.raises(TypeError):
        gpuprof.KernelTimer(events=3)

    class Broken(FakeTorchEvent):
        def elapsed_time(self, end):
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")

    clock = FakeClock([0.0, 1.0, 2.0, 3.0])
    t = gpuprof.KernelTimer(profiler=gpuprof.Profiler(), events=lambda: None)
    bad = (Broken(clock), FakeTorchEvent(clock))
    good = (FakeTorchEvent(clock), FakeTorchEvent(clock))
    for e in bad + good:
        e.record()
    bad[1].left = good[1].left = 2  # neither completes on the first queries
    t.add_events("bad", *bad)
    t.add_events("good", *good)
    with pytest.raises(RuntimeError, match="must be recorded"):
        t.resolve()
    assert t.resolve() == 0  # the bad pair was dropped, the good one kept and read
    assert t.get_timing("good")["calls"] == 1 and t.get_timing("bad") is None
    with pytest.raises(ValueError):
        t.add_time("negative", -1.0)


def test_fake_events_stopped_before_a_disable_still_count():
    clock = FakeClock([0.0, 2.0], not_ready=10)
    prof = gpuprof.Profiler()
    t = gpuprof.KernelTimer(profiler=prof, events=lambda: FakeTorchEvent(clock))
    t.start("k")
    t.stop("k")  # not complete yet
    prof.disable()
    t.start("ignored")  # records no event (the clock has no time left: it would fail)
    t.stop("ignored")
    assert t.get_timing("k")["calls"] == 1  # measured while enabled, read after the disable
    assert t.get_timing("ignored") is None
