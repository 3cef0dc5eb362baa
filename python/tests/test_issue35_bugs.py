"""Regression tests of the bugs of issue 35 (the Python side): each failed on the code before its
fix. The outside references are the CLI (`gpuprof diff`, `flame`, `timeline --json`) and Python's
own exception classes."""
import json
import os
import shutil
import subprocess
import sys
import warnings

import pytest

import gpuprof
from conftest import ROOT, run_python


def _values_of(doc, key):
    """Every value of `key` anywhere in a JSON document."""
    out = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k == key:
                out.append(v)
            out.extend(_values_of(v, key))
    elif isinstance(doc, list):
        for v in doc:
            out.extend(_values_of(v, key))
    return out


def test_string_tags_are_exported_as_strings_not_addresses(tmp_path):
    p = gpuprof.Profiler()
    with p.profile("op", dtype="float16", batch=32, scale=0.5):
        pass
    out = tmp_path / "p.json"
    p.export_json(out)
    doc = json.loads(out.read_text())
    assert _values_of(doc, "dtype") == ["float16"]  # was an int: the interned string's address
    assert _values_of(doc, "batch") == [32]
    assert _values_of(doc, "scale") == [0.5]


def test_gpuprof_disable_turns_the_python_profilers_off():
    code = ("import gpuprof\n"
            "g = gpuprof.get_profiler()\n"
            "with g.profile('x'):\n    pass\n"
            "p = gpuprof.Profiler()\n"
            "print(g.enabled, g.stats()['ranges'], p.enabled, gpuprof.Profiler(enabled=True).enabled)")
    r = run_python(code, {"GPUPROF_DISABLE": "1"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "0", "False", "True"]
    r = run_python(code, {"GPUPROF_DISABLE": "0"})
    assert r.stdout.split() == ["True", "1", "True", "True"]


def test_diff_keeps_its_traces_alive_while_another_thread_clears_the_lists(example_trace):
    # Before: _core.diff held no reference of its own, so clearing the caller's list during the
    # GIL-free diff freed the traces under it (a segfault, most runs).
    code = (
        "import threading, gpuprof\n"
        "from gpuprof import _core\n"
        "for i in range(30):\n"
        "    base = [_core.read(%r) for _ in range(3)]\n"
        "    cur = [_core.read(%r) for _ in range(3)]\n"
        "    stop = False\n"
        "    def clear():\n"
        "        import time\n"
        "        time.sleep(0.0005 * (i %% 5))\n"
        "        base.clear(); cur.clear()\n"
        "    t = threading.Thread(target=clear)\n"
        "    t.start()\n"
        "    try:\n"
        "        _core.diff(base, cur)\n"
        "    except ValueError:\n"
        "        pass  # cleared before the call read the lists: 'the base side is empty'\n"
        "    t.join()\n"
        "print('ok')\n" % (str(example_trace), str(example_trace)))
    r = run_python(code)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stderr[-2000:])


def test_bytes_path_with_invalid_utf8_reports_instead_of_systemerror(example_trace, tmp_path):
    src = os.fsencode(str(tmp_path)) + b"/trace-\xff\xfe.json"
    shutil.copyfile(example_trace, src)
    t = gpuprof.read(src)
    out = tmp_path / "r.html"
    t.report(out)  # was SystemError: the title came from a failed UTF-8 conversion
    assert out.stat().st_size > 0
    assert "trace-\\xff\\xfe.json" in out.read_text(errors="replace")
    t.timeline(tmp_path / "t.html")
    assert t.advise(format="text")


def test_file_error_is_an_oserror_and_a_missing_trace_a_filenotfounderror(tmp_path):
    assert issubclass(gpuprof.FileError, OSError)
    with pytest.raises(FileNotFoundError) as e:
        gpuprof.read(tmp_path / "missing.json")
    assert isinstance(e.value, gpuprof.Error) and "missing.json" in str(e.value)
    assert isinstance(e.value, gpuprof.NotFoundError)  # what it was before: still caught


def test_an_unreadable_trace_is_an_oserror_but_not_a_filenotfounderror(tmp_path):
    d = tmp_path / "dir"
    d.mkdir()
    (d / "x.json").write_text("{}")
    os.chmod(d / "x.json", 0)
    if os.access(d / "x.json", os.R_OK):
        pytest.skip("running as root: an unreadable file is readable")
    with pytest.raises(OSError) as e:
        gpuprof.read(d / "x.json")
    assert not isinstance(e.value, FileNotFoundError)


def test_get_and_print_bottlenecks_rank_alike_by_self_time():
    import time
    p = gpuprof.Profiler()
    with p.profile("parent"):            # large total, small self time
        with p.profile("child"):
            time.sleep(0.3)     # far apart: a loaded machine oversleeps
    with p.profile("middle"):            # the second largest self time
        time.sleep(0.05)
    got = [r["operation"] for r in p.get_bottlenecks(top_n=3)]
    assert got[:2] == ["child", "middle"], got
    text = p.bottlenecks_text(2)
    assert text.index("child") < text.index("middle") and "parent" not in text
    summary_order = list(p.get_summary())
    assert got == summary_order[:3]


def test_more_ranges_than_the_ring_holds_are_flagged_in_get_summary():
    p = gpuprof.Profiler(ring_records=64)
    for _ in range(500):
        with p.profile("x"):
            pass
    with pytest.warns(RuntimeWarning, match="dropped"):
        s = p.get_summary()
    assert s.dropped > 0 and not s.complete
    assert s["x"]["calls"] + s.dropped == 500
    p.reset()
    for _ in range(500):
        with p.profile("y"):
            pass
        p.flush()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = p.get_summary()
    assert s.complete and s["y"]["calls"] == 500


def _memory_trace(path, peak_bytes):
    ev = [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0,
           "dur": 1000, "args": {}}]
    for i, total in enumerate((peak_bytes // 2, peak_bytes, peak_bytes // 4)):
        ev.append({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1,
                   "tid": 1, "ts": 100 + 100 * i,
                   "args": {"Addr": 4096, "Bytes": 1, "Total Allocated": total,
                            "Total Reserved": peak_bytes * 2, "Device Type": 1, "Device Id": 0}})
    path.write_text(json.dumps({"traceEvents": ev}))
    return path


def test_regressions_count_counts_doubled_peak_memory_like_gpuprof_diff(tmp_path, cli):
    base = _memory_trace(tmp_path / "base.json", 1 << 30)
    cur = _memory_trace(tmp_path / "cur.json", 2 << 30)
    r = cli("diff", base, cur, "--fail-on-regression", "--json", check=False)
    assert r.returncode == 1, r.stderr  # the CLI fails the pair on peak memory
    doc = json.loads(r.stdout)
    assert doc["summary"]["regression"] == 0  # no name regressed: it is the metric
    c = gpuprof.compare_profiling_runs(str(base), str(cur))
    assert c.get_summary().regressions_count >= 1  # was 0
    assert c.has_regression


def test_kernel_timer_torch_events_on_cpu_only_torch_is_a_gpuprof_error():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this torch has CUDA")
    with pytest.raises(gpuprof.NotSupportedError, match="without CUDA|is_available"):
        gpuprof.KernelTimer(events="torch")  # was torch's TypeError from its stub Event
    with pytest.raises(gpuprof.NotSupportedError):
        gpuprof.KernelTimer(events=torch.cuda.Event)


def _folded(path):
    out = {}
    for line in path.read_text().splitlines():
        stack, _, w = line.rpartition(" ")
        out[stack] = out.get(stack, 0) + int(w)
    return out


@pytest.mark.parametrize("opts,flags", [
    ({"max_depth": 3}, ["--max-depth", "3"]),
    ({"min_duration_ms": 0.05}, ["--min-duration", "50us"]),
    ({"group_kernels_ms": 1.0}, ["--group-kernels", "1ms"]),
])
def test_flame_takes_the_clis_folding_options(example_trace, tmp_path, cli, opts, flags):
    out = tmp_path / "f.folded"
    cli("flame", example_trace, *flags, "-o", out)
    t = gpuprof.read(example_trace)
    got = t.flame(**opts)
    assert got == _folded(out)
    if "group_kernels_ms" not in opts:  # no two small kernels share a parent in this trace
        assert got != t.flame()  # the option changed something on this trace
    with pytest.raises(ValueError):
        t.flame(max_depth=-1)


def test_timeline_returns_the_figures_of_timeline_json(example_trace, tmp_path, cli_json):
    want = cli_json("timeline", example_trace, "--json", "-o", tmp_path / "cli.html")
    got = gpuprof.read(example_trace).timeline(tmp_path / "py.html")
    for k in ("rows", "events", "span_ns", "cpu_active_ns", "gpu_busy_ns", "overlap_ns"):
        assert got[k] == want[k], k
    assert got["output"] == str(tmp_path / "py.html")
    assert got["rows"] > 0 and got["gpu_busy_ns"] > 0


def test_compare_sessions_has_one_speedup_and_the_seeds_memory_saved_sign(example_trace):
    pytest.importorskip("torch")
    import gpuprof.torch as gtorch
    t = gpuprof.read(example_trace)
    base = gtorch.ProfileSession("base", total_time_ms=40.0, peak_memory_mb=300.0, iterations=4,
                                 trace=t)
    cur = gtorch.ProfileSession("cur", total_time_ms=20.0, peak_memory_mb=100.0, iterations=4,
                                trace=t)
    r = gtorch.compare_sessions(base, cur)
    assert r["speedup"] == pytest.approx(2.0)
    assert "speedup" not in r["summary"]  # was gpuprof diff's span speedup (1.0 here)
    assert r["memory_diff"]["peak_mb"] == pytest.approx(200.0)  # saved: positive, was -200


def test_keyboard_interrupt_during_read_is_raised_never_lost(tmp_path):
    # The SIGINT handler here outlasts the read: when it raises, the read is already done. The
    # wait used to see "done" and return the Trace with the KeyboardInterrupt still set (a
    # SystemError); now the interrupt is raised and the finished read freed.
    big = tmp_path / "big.json"
    ev = ",".join('{"ph":"X","cat":"cpu_op","name":"op%d","pid":1,"tid":1,"ts":%d,"dur":1}'
                  % (i % 50, i * 2) for i in range(400000))
    big.write_text('{"traceEvents":[' + ev + "]}")
    code = (
        "import signal, threading, time, gpuprof\n"
        "def slow_handler(*a):\n"
        "    time.sleep(1.5)  # the read finishes meanwhile\n"
        "    raise KeyboardInterrupt\n"
        "signal.signal(signal.SIGINT, slow_handler)\n"
        "def kick():\n"
        "    time.sleep(0.05)\n"
        "    signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)\n"
        "threading.Thread(target=kick).start()\n"
        "t0 = time.monotonic()\n"
        "try:\n"
        "    gpuprof.read(%r)\n"
        "    print('returned', time.monotonic() - t0)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted')\n" % str(big))
    r = run_python(code)
    assert "SystemError" not in r.stderr, r.stderr[-2000:]
    if r.stdout.startswith("returned"):
        pytest.skip("the read ended before the signal came (%s s)" % r.stdout.split()[1])
    assert r.returncode == 0 and r.stdout.strip() == "interrupted", r.stderr[-2000:]


def _numbers(doc, path=""):
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _numbers(v, path + "." + k)
    elif isinstance(doc, list):
        for v in doc:
            yield from _numbers(v, path + "[]")
    elif isinstance(doc, (int, float)) and not isinstance(doc, bool):
        yield path, doc


@pytest.mark.parametrize("log", ["python/tests/data/torch_trace_example.log",
                                 "tests/compile/data/breaks.log"])
def test_compile_json_writes_null_where_unknown_not_minus_one(log):
    doc = gpuprof.compile_log(ROOT / log)
    bad = [(p, v) for p, v in _numbers(dict(doc)) if v == -1]
    assert bad == []  # were -1: compile_time_ns, backend_ns, aot_ns, ..., a trace's rank
    ratios = [v for p, v in _numbers(dict(doc)) if p.endswith("fusion_ratio")]
    assert all(v > 0 for v in ratios)  # 0.0 meant "no graph with kernels": now null
    t = gpuprof.compile_log(traces=[str(ROOT / "tests/compile/data/compiled.json")])
    assert t["traces"][0]["rank"] is None  # no distributedInfo: was -1


def test_timeline_critical_path_is_the_clis_critical_path_page(example_trace, tmp_path, cli_json):
    """Trace.timeline(critical_path=True) writes the bytes of `gpuprof timeline --critical-path`
    (the same title), Trace.view("timeline", critical_path=True) returns them, and the overlay
    changes the page."""
    want = cli_json("timeline", example_trace, "--json", "--critical-path", "--title", "T", "-o",
                    tmp_path / "cli.html")
    assert want["critical_path_ns"] > 0  # this trace has a path to draw
    t = gpuprof.read(example_trace)
    got = t.timeline(tmp_path / "py.html", title="T", critical_path=True)
    assert got["events"] == want["events"]
    cli_page = (tmp_path / "cli.html").read_bytes()
    assert (tmp_path / "py.html").read_bytes() == cli_page
    assert t.view("timeline", title="T", critical_path=True).encode() == cli_page
    t.timeline(tmp_path / "plain.html", title="T")
    assert (tmp_path / "plain.html").read_bytes() != cli_page
