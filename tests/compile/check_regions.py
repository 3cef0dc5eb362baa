#!/usr/bin/env python3
"""Checks the run-time figures of `gpuprof compile --json --trace` against references computed
here, independently of gpuprof:

1. modern_mi300_torch_compile (shared, skipped when absent) against TraceLens' reference
   (traces/tracelens-reference, ops_by_name): every op that launched kernels in that trace lies
   inside the one "Torch-Compiled Region: 0/0" call (checked here from the trace's JSON), so the
   region's GPU time must equal the sum of TraceLens' direct_kernel_time_ms over those ops (in ms
   with float rounding: to within 1 ns per op).
2. The gaps between compiled regions of the synthetic data/compiled.json, recomputed from its
   JSON: per pair of consecutive outermost region calls on a thread, the count, the time between,
   the outermost cpu_op time in between (guard checks apart) and the GPU work launched in between.

Usage: check_regions.py GPUPROF SHARED_DIR DATA_DIR"""
import gzip
import json
import subprocess
import sys
from collections import defaultdict

PREFIX = "Torch-Compiled Region: "
GUARD = "TorchDynamo Cache Lookup"


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)["traceEvents"]


def ns(x):  # "ts"/"dur" in us (float) -> integer ns, as gpuprof rounds them
    return round(float(x) * 1000)


def gpuprof_trace(gp, path):
    out = subprocess.run([gp, "compile", "-q", "--json", "--trace", path], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)["traces"][0]


def check_tracelens(gp, shared):
    import os
    trace = os.path.join(shared, "traces", "modern_mi300_torch_compile.json.gz")
    ref = os.path.join(shared, "traces", "tracelens-reference", "modern_mi300_torch_compile.json")
    if not os.path.exists(trace) or not os.path.exists(ref):
        print("shared trace or TraceLens reference absent: part 1 skipped")
        return 0
    ev = load(trace)
    regions = [e for e in ev if e.get("cat") == "cpu_op" and e["name"].startswith(PREFIX)]
    assert len(regions) == 1, regions
    r0, r1 = float(regions[0]["ts"]), float(regions[0]["ts"]) + float(regions[0]["dur"])
    tl = json.load(open(ref))["ops_by_name"]
    names = {o["name"] for o in tl}
    for e in ev:  # every op TraceLens lists lies inside the region
        if e.get("cat") == "cpu_op" and e["name"] in names:
            assert r0 <= float(e["ts"]) < r1, e["name"]
    want_ms = sum(o["direct_kernel_time_ms"] for o in tl)
    got = gpuprof_trace(gp, trace)["regions"][0]
    diff = abs(got["gpu_ns"] - want_ms * 1e6)
    print(f"region 0/0 GPU {got['gpu_ns']} ns, TraceLens ops_by_name {want_ms * 1e6:.1f} ns")
    return 0 if diff <= len(tl) else 1


def check_gaps(gp, data):
    import os
    path = os.path.join(data, "compiled.json")
    ev = [e for e in load(path) if e.get("ph") == "X"]
    gpu = {e["args"]["correlation"]: e for e in ev
           if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")}
    cpu = sorted((e for e in ev if e.get("cat") in ("cpu_op", "cuda_runtime")),
                 key=lambda e: (e["tid"], ns(e["ts"]), -ns(e["dur"])))
    want = defaultdict(lambda: defaultdict(int))
    by_tid = defaultdict(list)
    for e in cpu:
        by_tid[e["tid"]].append(e)
    for evs in by_tid.values():
        calls = [e for e in evs if e["cat"] == "cpu_op" and e["name"].startswith(PREFIX)]
        for a, b in zip(calls, calls[1:]):
            lo, hi = ns(a["ts"]) + ns(a["dur"]), ns(b["ts"])
            g = want[(a["name"][len(PREFIX):], b["name"][len(PREFIX):])]
            g["count"] += 1
            g["between_ns"] += hi - lo
            outer_end = -1
            for e in evs:
                t = ns(e["ts"])
                if not lo <= t < hi:
                    continue
                if e["cat"] == "cpu_op" and t >= outer_end:
                    outer_end = t + ns(e["dur"])
                    g["guard_ns" if e["name"] == GUARD else "eager_ops_ns"] += ns(e["dur"])
                if e["cat"] == "cuda_runtime" and e["args"]["correlation"] in gpu:
                    w = gpu[e["args"]["correlation"]]
                    g["gpu_ns"] += ns(w["dur"])
                    g["kernels"] += w["cat"] == "kernel"
                    g["launches"] += 1
    got = {(g["from"], g["to"]): g for g in gpuprof_trace(gp, path)["gaps"]}
    bad = 0
    for key, w in want.items():
        for field, v in w.items():
            if got.get(key, {}).get(field) != v:
                print(f"gap {key}: {field} {got.get(key, {}).get(field)}, expected {v}")
                bad = 1
    if set(got) != set(want):
        print(f"gaps {sorted(got)}, expected {sorted(want)}")
        bad = 1
    print(f"{len(want)} gaps checked")
    return bad


def main():
    gp, shared, data = sys.argv[1:4]
    bad = check_tracelens(gp, shared) | check_gaps(gp, data)
    print("FAILED" if bad else "passed")
    return bad


if __name__ == "__main__":
    sys.exit(main())
