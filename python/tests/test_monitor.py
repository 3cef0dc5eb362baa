"""gpuprof.Monitor (the C monitor from Python) on the FAKE NVML driver (tests/fakes/nvml): tests of
our code, not of a GPU. The expected figures are the scenario files' values
(tests/monitor/scenarios) and the seed's configuration file (tests/monitor/seed)."""
import asyncio
import ctypes
import json
import os

import pytest

import gpuprof
from conftest import ROOT

SCEN = ROOT / "tests" / "monitor" / "scenarios"


@pytest.fixture
def fake_nvml(monkeypatch):
    """Points the monitor at the fake driver; returns a function that selects a scenario (and
    resets the fake's clock), and the library for its test hooks."""
    lib_path = os.environ.get("GPUPROF_FAKE_NVML")
    if not lib_path or not os.path.exists(lib_path):
        pytest.skip("the fake NVML (tests/fakes/nvml) is not built (GPUPROF_FAKE_NVML)")
    lib = ctypes.CDLL(lib_path)  # held: the fake's state survives the monitor's dlclose
    lib.fake_nvml_set_time.argtypes = [ctypes.c_double]
    monkeypatch.setenv("GP_NVML_LIBRARY", lib_path)

    def use(scenario):
        monkeypatch.setenv("GP_FAKE_NVML_SCENARIO", str(SCEN / scenario))
        lib.fake_nvml_reload()
        return lib

    return use


def test_fake_nvml_gpu_status_samples_and_health(fake_nvml):
    fake_nvml("basic.txt")
    mon = gpuprof.Monitor(level="detailed")
    mon.sample_now()
    mon.sample_now()
    st = mon.gpu_status()
    assert st["device_count"] == 2 and st["samples_collected"] == 2
    d0, d1 = st["devices"]
    assert d0["name"] == "NVIDIA A100-SXM4-80GB" and d1["name"] == "NVIDIA H100 80GB HBM3"
    assert d0["latest"]["util_gpu"] == 42 and d0["latest"]["temp_celsius"] == 61
    assert d0["latest"]["power_watts"] == 251.5 and d0["latest"]["fan_percent"] == 55
    assert "fan_percent" not in d1["latest"]  # unsupported: absent, never 0
    assert sorted(p["pid"] for p in d0["processes"]) == [4242, 4343]
    assert len(mon.samples(0)) == 2 and len(mon.samples(0, last=1)) == 1
    h = mon.health()
    assert h["status"] == "ok" and h["gpus"] == 2 and h["level"] == "detailed"
    assert h["samples_collected"] == 2 and h["running"] is False
    types = {s["type"]: s for s in mon.suggestions()}
    assert "power" in types and types["idle"]["device"] == 1  # gpu1 runs at 3 %
    mon.close()
    with pytest.raises(gpuprof.StateError):
        mon.gpu_status()


def test_fake_nvml_configuration_from_yaml_dict_and_keywords(fake_nvml):
    fake_nvml("basic.txt")
    seed = ROOT / "tests" / "monitor" / "seed" / "gpu_profiler.yaml"
    mon = gpuprof.Monitor(config=seed)
    assert len(mon.warnings) == 3  # the three keys without effect, each said
    assert any("enable_kernel_profiling" in w for w in mon.warnings)
    mon.close()
    mon = gpuprof.Monitor(config={"gpu_profiler": {"sampling_interval_ms": 250,
                                                   "enable_alerts": False}},
                          level="comprehensive", mode="adaptive")
    c = mon.config()
    assert (c["sampling_interval_ms"], c["level"], c["mode"]) == (250, "comprehensive", "adaptive")
    mon.close()
    with pytest.raises(gpuprof.Error, match="no_such_key"):
        gpuprof.Monitor(no_such_key=1)
    with pytest.raises(gpuprof.Error, match="level"):
        gpuprof.Monitor(level="extreme")


def test_fake_nvml_start_stop_events_to_callbacks_and_iterator(fake_nvml):
    fake_nvml("basic.txt")
    mon = gpuprof.Monitor(sampling_interval_ms=20, alert_min_duration_ms=0)
    seen = []
    alerts = []
    mon.on_event(seen.append)
    mon.on_event(alerts.append, types=["alert"])
    it = mon.events()
    mon.start()
    assert mon.wait_samples(3, timeout=10)
    res = mon.stop()
    assert res["samples_collected"] >= 3 and res["devices"] == 2
    got = list(it)
    kinds = [e["type"] for e in seen]
    assert kinds[0] == "started" and kinds[-1] == "stopped"
    assert [e["type"] for e in got] == kinds  # the iterator saw what the callbacks saw
    # gpu1 stays at 3 % utilization: the low-utilization alert of the seed
    assert alerts and all(a["type"] == "alert" for a in alerts)
    assert any(a["what"] == "utilization_low" and a["device"] == 1 for a in alerts)
    assert seen[-1]["value"] == res["samples_collected"]  # "stopped after N samples"
    mon.close()


def test_fake_nvml_async_twins(fake_nvml):
    fake_nvml("basic.txt")
    mon = gpuprof.Monitor(sampling_interval_ms=20)

    async def run():
        await mon.start_async()
        assert mon.running
        await asyncio.sleep(0.1)
        status = await mon.gpu_status_async()
        return status, await mon.stop_async()

    status, res = asyncio.run(run())
    assert status["device_count"] == 2 and status["running"] is True
    assert res["samples_collected"] >= 1 and not mon.running
    mon.close()


def test_fake_nvml_component_attribution_and_profile_kernel(fake_nvml):
    fake_nvml("basic.txt")
    mon = gpuprof.Monitor()
    mon.sample_now()  # a sample attributes the interval since the GPU's previous one
    with mon.component("workflow_engine"):
        for _ in range(3):
            mon.sample_now()
        assert mon.gpu_status()["devices"][0]["latest"]["component"] == "workflow_engine"
    mon.sample_now()  # outside: attributed to no component
    usage = mon.component_usage("workflow_engine")
    assert usage["samples"] == 3 * 2  # three intervals on each of the two GPUs
    assert mon.component_usage("never_ran") is None
    events = []
    mon.on_event(events.append, types=["kernel_started", "kernel_completed"])
    with mon.profile_kernel("my_kernel", device_id=0, component="ml_model") as info:
        sum(range(1000))
    assert info["duration_ms"] is not None and info["duration_ms"] >= 0
    assert info["memory_before_bytes"] == 10737418240 == info["memory_after_bytes"]
    assert [e["type"] for e in events] == ["kernel_started", "kernel_completed"]
    assert mon.component_usage("ml_model")["samples"] >= 1
    with pytest.raises(gpuprof.StateError):  # not the innermost component
        with mon.component("a"):
            gpuprof._core.component_end("b")
    mon.close()


def test_fake_nvml_leak_detected_and_delivered(fake_nvml):
    lib = fake_nvml("leak.txt")
    mon = gpuprof.Monitor(leak_window_minutes=30, leak_warmup_minutes=1,
                          leak_min_duration_minutes=10)
    leaks = []
    mon.on_event(leaks.append, types=["leak"])
    t0 = 10**12
    for s in range(0, 3600, 15):  # an hour of the scenario, sampled every 15 s
        lib.fake_nvml_set_time(float(s))
        mon.sample_now(ts_ns=t0 + s * 10**9)
    v = mon.leak(0)
    assert v["ready"] and v["leak"]
    assert 450 < v["slope_mb_per_h"] < 700  # the scenario's 600 MB/h (MiB/h: 572)
    assert leaks and leaks[0]["device"] == 0
    assert any(s["type"] == "memory_leak" for s in mon.suggestions())
    mon.close()


def test_no_driver_is_a_no_driver_error_with_an_unavailable_health(monkeypatch):
    monkeypatch.setenv("GP_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1")
    with pytest.raises(gpuprof.NoDriverError) as e:
        gpuprof.Monitor()
    h = gpuprof.Monitor.unavailable_health(str(e.value))
    assert h["status"] == "unavailable" and h["gpus"] == 0
    assert "no NVIDIA driver found" in h["reason"]


def test_fake_nvml_health_matches_the_cli(fake_nvml, cli):
    fake_nvml("basic.txt")
    mon = gpuprof.Monitor()
    h = mon.health()
    want = json.loads(cli("monitor", "--health", "--json").stdout)
    for k in ("status", "gpus", "level", "mode", "interval_ms", "driver_version"):
        assert h[k] == want[k], k
    mon.close()
