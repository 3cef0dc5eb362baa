"""Hostile input over the Python API (issue 38, "keep it so"): the inputs of
tests/cli/cli_hostile.sh, generated here and never stored (truncations of a real-shaped trace, a
gzip bomb, deep nesting of JSON and of ranges, crafted names, 10^5 of each thing that repeats:
streams, memory devices, counters, top-level members, compile units), through gpuprof.read and
every Trace method and writer: summary, analyze, partial, ops, advise, diff, flame (HTML, folded,
speedscope), report, timeline, every view of gpuprof.views(), write_chrome, compile, and
compile_log, merge, compare_profiling_runs / Comparison.export_json and
ProfilerOptimizer.export_suggestions (also onto /dev/full). Each input runs in its own interpreter
so that a crash is a failed test naming the input, not a dead suite. Every call must return or
raise a gpuprof.Error whose message names the file (a ParseError also its byte offset); any other
exception, a signal or a timeout fails.

Under ASan: the sanitizer build (-DGP_SANITIZE=ON) runs this suite through ctest python_pytest
with LD_PRELOAD of the compiler's libasan and ASAN_OPTIONS=detect_leaks=0 (python/CMakeLists.txt),
so the extension's every call here is checked; by hand:
  LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 \\
  PYTHONPATH=build-asan/python python3 -m pytest -q python/tests/test_hostile.py
"""
import gzip
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT

N = 100000
TIMEOUT = int(os.environ.get("GP_HOSTILE_TIMEOUT", "600"))


def generate(tmp, ex):
    """The inputs of tests/cli/cli_hostile.sh, under tmp; returns {name: path}."""
    out = {}

    def dump(name, doc):
        with open(os.path.join(tmp, name), "w") as f:
            json.dump(doc, f)
        out[name] = os.path.join(tmp, name)

    def write(name, data):
        with open(os.path.join(tmp, name), "wb") as f:
            f.write(data)
        out[name] = os.path.join(tmp, name)

    raw = open(ex, "rb").read()
    for i, frac in enumerate((0.1, 0.37, 0.5, 0.73, 0.99)):
        write("trunc%d.json" % i, raw[: int(len(raw) * frac)])
    with gzip.open(os.path.join(tmp, "bomb.json.gz"), "wb") as f:
        f.write(b'{"traceEvents": [')
        for _ in range(512):
            f.write(b" " * (1 << 20))
        f.write(b"]}")
    out["bomb.json.gz"] = os.path.join(tmp, "bomb.json.gz")
    write("deep_json.json", ('{"traceEvents": ' + "[" * N + "]" * N + "}").encode())
    n = 20000
    dump("deep_ranges.json", {"traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": "op_%d" % d, "pid": 1, "tid": 1, "ts": d,
         "dur": 2 * (n - d)} for d in range(n)]})
    names = ['"quoted"', "<script>alert(1)</script>", "a;b\nc\rd\te", "\u202eevil", "x" * 65536,
             "../../etc/passwd", "\x01\x02\x7f", "%s%n%d"]
    ev = []
    for i, nm in enumerate(names):
        ev.append({"ph": "X", "cat": "cpu_op", "name": nm, "pid": 1, "tid": 1, "ts": 10 * i,
                   "dur": 5})
        ev.append({"ph": "X", "cat": "kernel", "name": nm, "pid": 0, "tid": 7, "ts": 10 * i + 1,
                   "dur": 3, "args": {"device": 0, "stream": 7, "correlation": i + 1, nm: nm}})
    dump("names.json", {"traceEvents": ev, "deviceProperties": [{"id": 0, "name": names[1]}]})
    ev = []
    for i in range(N):
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                   "tid": 1, "ts": i, "dur": 1, "args": {"correlation": i + 1}})
        ev.append({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": i + 7, "ts": i + 2,
                   "dur": 1, "args": {"device": i % 8, "stream": i + 7, "correlation": i + 1}})
    dump("streams.json", {"traceEvents": ev})
    dump("memdevs.json", {"traceEvents": [
        {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1,
         "ts": i, "args": {"Device Type": 1, "Device Id": i, "Addr": 1, "Bytes": 64,
                           "Total Allocated": i, "Total Reserved": i}} for i in range(N)]})
    dump("counters.json", {"traceEvents": [
        {"ph": "C", "name": "c%d" % i, "pid": 1, "tid": 1, "ts": i, "args": {"v": i}}
        for i in range(N)]})
    write("members.json",
          ("{" + "".join('"m%d": %d, ' % (i, i) for i in range(N)) + '"traceEvents": []}').encode())
    write("units.log", "".join(
        'V1126 10:00:00.000000 1 torch/_dynamo/convert_frame.py:1 '
        '{"dynamo_start": {"stack": []}, "frame_id": %d, "frame_compile_id": 0, '
        '"attempt": 0}\n' % i for i in range(N)).encode())
    return out


# Runs in a fresh interpreter: argv = input, example trace, output folder. One line per call,
# tab-separated: "ok NAME", "error NAME TYPE MESSAGE" (a gpuprof.Error; MESSAGE as JSON) or
# "bad NAME TYPE TRACEBACK".
WORKER = r'''
import json, os, sys, traceback
import gpuprof
from gpuprof import compare
path, ex, out = sys.argv[1:4]

def call(name, fn):
    try:
        fn()
        print("ok\t" + name, flush=True)
    except gpuprof.Error as e:
        print("error\t%s\t%s\t%s" % (name, type(e).__name__, json.dumps(str(e))), flush=True)
    except Exception as e:
        print("bad\t%s\t%s\t%s" % (name, type(e).__name__, json.dumps(traceback.format_exc())),
              flush=True)

if path.endswith(".log"):
    call("compile_log", lambda: gpuprof.compile_log(path))
    call("compile_log html", lambda: gpuprof.compile_log(path, html=os.path.join(out, "c.html")))
    call("compile_log text", lambda: gpuprof.compile_log(path, format="text"))
    sys.exit(0)
t = None
def read():
    global t
    t = gpuprof.read(path)
call("read", read)
if t is None:
    sys.exit(0)
o = lambda n: os.path.join(out, n)
call("summary", lambda: t.summary())
call("summary json", lambda: t.summary(format="json"))
call("analyze", lambda: t.analyze())
call("analyze text", lambda: t.analyze(format="text"))
call("partial", lambda: gpuprof.merge([t.partial()]))
call("ops", lambda: t.ops())
call("advise", lambda: t.advise())
call("diff", lambda: t.diff(gpuprof.read(ex)))
call("flame html", lambda: t.flame(o("f.html")))
call("flame folded", lambda: t.flame(o("f.folded")))
call("flame dict", lambda: t.flame())
call("report", lambda: t.report(o("r.html")))
call("timeline", lambda: t.timeline(o("t.html")))
for v in gpuprof.views():
    call("view " + v["name"], lambda: t.view(v["name"]))
call("write_chrome", lambda: t.write_chrome(o("c.json")))
call("compile", lambda: t.compile())
call("compile html", lambda: t.compile(html=o("cc.html")))
call("compare", lambda: compare.compare_profiling_runs(ex, path).export_json(o("cmp.json")))
call("optimizer", lambda: compare.ProfilerOptimizer(path).export_suggestions(o("s.json")))
if os.access("/dev/full", os.W_OK):
    call("compare /dev/full",
         lambda: compare.compare_profiling_runs(ex, path).export_json("/dev/full"))
    call("write_chrome /dev/full", lambda: t.write_chrome("/dev/full"))
'''

INPUTS = ["trunc0.json", "trunc1.json", "trunc2.json", "trunc3.json", "trunc4.json",
          "bomb.json.gz", "deep_json.json", "deep_ranges.json", "names.json", "streams.json",
          "memdevs.json", "counters.json", "members.json", "units.log"]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile")
    return generate(str(tmp), str(ROOT / "examples" / "traces" / "example_step.json"))


@pytest.mark.parametrize("name", INPUTS)
def test_hostile_input(hostile, name, tmp_path):
    ex = str(ROOT / "examples" / "traces" / "example_step.json")
    p = subprocess.run([sys.executable, "-c", WORKER, hostile[name], ex, str(tmp_path)],
                       capture_output=True, text=True, timeout=TIMEOUT)
    lines = [ln.split("\t", 3) for ln in p.stdout.splitlines() if ln]
    assert p.returncode == 0, "%s: exit %d (signal?) after %s\n%s" % (
        name, p.returncode, lines[-1:] if lines else "nothing", p.stderr[-3000:])
    assert lines, name + ": no call ran"
    bad = [ln for ln in lines if ln[0] == "bad"]
    assert not bad, "%s: not a gpuprof.Error: %s" % (name, bad[:3])
    for ln in lines:
        if ln[0] != "error":
            continue
        call, kind, msg = ln[1], ln[2], json.loads(ln[3])
        # the file the error is about: the input, an output, or the example diffed against
        assert any(s in msg for s in (name, "/dev/full", str(tmp_path), "example_step")), \
            "%s, %s: %s names no file: %s" % (name, call, kind, msg)
        if kind == "ParseError" and name.startswith(("trunc", "deep_json")):
            assert "byte " in msg, "%s, %s: no offset: %s" % (name, call, msg)
