#!/usr/bin/env python3
"""Outside reference: the default mode's GPU busy/idle split against AMD TraceLens's gpu_timeline.

For every trace in SHARED/traces/tracelens-reference, runs `gpuprof analyze --json` and compares
busy time (compute + non-compute), total time (the GPU span) and the idle share with TraceLens's
`busy_time`, `total_time` and `idle_time`. TraceLens clips its timeline to the GPU-side
ProfilerStep span; gpuprof does that with `--steps N`, so where the trace has GPU work outside that
span (modern_h100_qwen_chat: 509 kernels queued before the step) the comparison runs with
`--steps N` for the step TraceLens used, and the default run must say so in its note
(docs/analyses.md, "Agreement with TraceLens").

Tolerances: busy and total within 2 us (TraceLens works in float microseconds), idle within 0.01
percentage points.

Usage: check_tracelens.py GPUPROF SHARED_DIR   Exit: 0 agree, 1 differ, 77 no references.
"""
import gzip
import json
import os
import subprocess
import sys


def gpu_steps(path):
    """Numbers of the GPU-side ProfilerSteps of a trace, and whether GPU work starts before them."""
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        d = json.load(f)
    ev = d["traceEvents"] if isinstance(d, dict) else d
    steps = [e for e in ev if e.get("cat") == "gpu_user_annotation"
             and str(e.get("name", "")).startswith("ProfilerStep#")]
    if not steps:
        return [], False
    first = min(e["ts"] for e in steps)
    early = any(e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and e["ts"] < first
                for e in ev)
    return sorted(int(e["name"].split("#")[1]) for e in steps), early


def main():
    gp, shared = sys.argv[1], sys.argv[2]
    refdir = os.path.join(shared, "traces", "tracelens-reference")
    if not os.path.isdir(refdir):
        return 77
    failures = checked = 0
    for n in sorted(os.listdir(refdir)):
        # One trace's per-rank reference is NAME.json; other references in the folder
        # (NAME.collectives.json: TraceLens's multi-rank collective report) are checked
        # by their own tests.
        if not n.endswith(".json") or "." in n[:-5]:
            continue
        name = n[:-5]
        path = os.path.join(shared, "traces", name + ".json.gz")
        if not os.path.exists(path):
            path = path[:-3]
        ref = {r["type"]: r for r in json.load(open(os.path.join(refdir, n)))["gpu_timeline"]}
        steps, early = gpu_steps(path)
        args = [gp, "analyze", "--json", "-q", "--table", "temporal", "--table", "ranks"]
        if early:
            note = json.loads(subprocess.run(args + [path], capture_output=True, text=True,
                                             check=True).stdout)["rank_info"][0]["note"]
            if "before the first GPU-side ProfilerStep" not in note:
                print(f"DIFFERS {name}: GPU work before the GPU-side step is not reported")
                failures += 1
            args += ["--steps", f"{steps[0]}-{steps[-1]}"]
        d = json.loads(subprocess.run(args + [path], capture_output=True, text=True,
                                      check=True).stdout)
        t = d["temporal_breakdown"][0]
        busy = (t["compute_time_ns"] + t["non_compute_time_ns"]) / 1e6
        total = t["kernel_time_ns"] / 1e6
        ok = (abs(busy - ref["busy_time"]["time_ms"]) <= 0.002
              and abs(total - ref["total_time"]["time_ms"]) <= 0.002
              and abs(t["idle_time_pctg"] - ref["idle_time"]["percent"]) <= 0.01)
        print(f"{'agrees ' if ok else 'DIFFERS'} {name:28s} idle {t['idle_time_pctg']:8.4f} % "
              f"(TraceLens {ref['idle_time']['percent']:8.4f}), busy {busy:.4f} ms "
              f"({ref['busy_time']['time_ms']:.4f}), span {total:.4f} ms "
              f"({ref['total_time']['time_ms']:.4f}){' with --steps' if early else ''}")
        checked += 1
        failures += not ok
    print(f"{checked - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
