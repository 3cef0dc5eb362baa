#!/usr/bin/env python3
"""Records a real legacy autograd-profiler trace with the installed PyTorch and reads it with gpuprof.

PyTorch built without Kineto (Debian's python3-torch 1.13) writes, from
torch.autograd.profiler.profile(...).export_chrome_trace(path), a bare JSON array of "X" events
with "pid": "CPU functions", the profiler's thread number as tid and no "cat". gpuprof must read
them as cpu_op events (not unknown categories) with the call counts this script knows it caused.
Exits 77 (ctest SKIP) when torch cannot be imported or writes another format (a Kineto build).
Usage: legacy_torch_trace.py GPUPROF WORKDIR
"""
import inspect
import json
import os
import subprocess
import sys

ITERS = 5  # forward passes recorded


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def record(path):
    try:
        import torch
    except ImportError as e:
        print("SKIP: torch is not importable: %s" % e)
        sys.exit(77)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    x = torch.randn(8, 16)
    kwargs = {"record_shapes": True}
    # The legacy (non-Kineto) profiler, also in a build that has Kineto where it still exists.
    if "use_kineto" in inspect.signature(torch.autograd.profiler.profile).parameters:
        kwargs["use_kineto"] = False
    with torch.no_grad(), torch.autograd.profiler.profile(**kwargs) as prof:
        for _ in range(ITERS):
            model(x)
    prof.export_chrome_trace(path)
    return torch.__version__


def gpuprof_json(gpuprof, *args):
    r = subprocess.run([gpuprof, *args], capture_output=True, text=True)
    if r.returncode != 0:
        fail("gpuprof %s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr.strip()))
    return json.loads(r.stdout)


def main():
    gpuprof, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    trace = os.path.join(work, "legacy_autograd.json")
    version = record(trace)
    with open(trace) as f:
        doc = json.load(f)
    if not isinstance(doc, list) or not any(e.get("pid") == "CPU functions" for e in doc):
        print("SKIP: torch %s did not write the legacy format (a Kineto build?)" % version)
        sys.exit(77)
    ops = [e for e in doc if e.get("ph") == "X"]
    if any("cat" in e for e in ops):
        fail("the legacy file has a cat field: the format changed")
    names = {}
    for e in ops:
        names[e["name"]] = names.get(e["name"], 0) + 1
    # Two Linear layers and one ReLU per forward pass, bias and 2-D input: linear -> addmm.
    expected = {"aten::linear": 2 * ITERS, "aten::addmm": 2 * ITERS, "aten::relu": ITERS}
    for name, calls in expected.items():
        if names.get(name) != calls:
            fail("torch %s recorded %s %s times, expected %d" % (version, name, names.get(name), calls))

    s = gpuprof_json(gpuprof, "summary", "--json", "-q", "-n", "0", "--kind", "cpu_op", trace)
    inp = s["input"]
    if inp["unknown_categories"] != 0:
        fail("unknown_categories = %d, expected 0" % inp["unknown_categories"])
    if inp["by_kind"] != {"cpu_op": len(ops)}:
        fail("by_kind = %s, expected {'cpu_op': %d}" % (inp["by_kind"], len(ops)))
    rows = {row["name"]: row for k in s["kinds"] if k["kind"] == "cpu_op" for row in k["rows"]}
    if {n: r["calls"] for n, r in rows.items()} != names:
        fail("cpu_op calls %s != the file's %s" % ({n: r["calls"] for n, r in rows.items()}, names))
    for name, calls in expected.items():
        print("%-14s calls %d (expected %d)" % (name, rows[name]["calls"], calls))
    # Durations are whole microseconds in this format: totals are exact.
    for name, row in rows.items():
        total = sum(int(round(e["dur"] * 1000)) for e in ops if e["name"] == name)
        if row["total_ns"] != total:
            fail("%s total %d ns, the file says %d ns" % (name, row["total_ns"], total))

    # The Kineto JSON gpuprof writes from it reads back to the same statistics.
    out = os.path.join(work, "legacy_autograd.kineto.json")
    r = subprocess.run([gpuprof, "convert", "-q", trace, "-o", out], capture_output=True, text=True)
    if r.returncode != 0:
        fail("gpuprof convert: exit %d: %s" % (r.returncode, r.stderr.strip()))
    back = gpuprof_json(gpuprof, "summary", "--json", "-q", "-n", "0", "--kind", "cpu_op", out)
    if back["kinds"] != s["kinds"]:
        fail("the converted trace summarises differently")
    print("OK: torch %s, %d legacy events read as cpu_op, unknown_categories 0" % (version, len(ops)))


if __name__ == "__main__":
    main()
