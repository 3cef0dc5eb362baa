#!/usr/bin/env python3
"""Recomputes the idle causes and the step breakdown of docs/analyses.md ("Idle causes", "Step
breakdown") from the raw Kineto JSON of real traces, independently of the C code (no stack: at each
elementary interval of a thread, the class of every open event is looked at; each step instant
looks up every part's union), and compares every row of `gpuprof analyze --json`: idle, the time
of each cause, each cause's top name and time, and every part of every step.

Usage: check_idle_causes.py GPUPROF SHARED_DIR
Exit: 0 equal; 1 a difference; 77 no shared traces.
"""
import bisect
import decimal
import gzip
import json
import os
import re
import subprocess
import sys

TRACES = ["modern_h100_timesformer.json.gz", "small_alexnet_cudasync.json.gz",
          "tiny_cuda_event_sync.json.gz", "multirank8_dlrm_v100"]
GPU_WORK = {"kernel", "gpu_memcpy", "gpu_memset"}
GPU_SIDE = GPU_WORK | {"cuda_sync", "gpu_user_annotation"}
CAUSES = ["data_loading", "cpu", "sync", "launch", "comm_wait", "unrecorded"]
# classes by precedence: name -> (rank, cause)
P_ANNOT, P_CPU, P_DL, P_LAUNCH, P_COMM, P_SYNC = 1, 2, 3, 4, 5, 6
CAUSE_OF = {P_ANNOT: "unrecorded", P_CPU: "cpu", P_DL: "data_loading", P_LAUNCH: "launch",
            P_COMM: "comm_wait", P_SYNC: "sync"}


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as fp:
        d = json.load(fp, parse_float=decimal.Decimal)
    return d["traceEvents"] if isinstance(d, dict) else d


def ns(x):
    return int(decimal.Decimal(x) * 1000)


def is_num(x):
    return isinstance(x, int) or (isinstance(x, str) and x.lstrip("-").isdigit())


def klass(e, blocking):
    name, cat = e["name"], e.get("cat", "")
    if cat in ("cuda_runtime", "cuda_driver"):
        copy = name.startswith(("cudaMemcpy", "hipMemcpy", "cuMemcpy"))
        mem = name.startswith(("cudaMem", "hipMem", "cuMem"))
        corr = e.get("args", {}).get("correlation")
        if "Synchronize" in name or (copy and "Async" not in name) or corr in blocking:
            return P_SYNC
        if "Launch" in name or (mem and "Async" in name):
            return P_LAUNCH
        return P_CPU
    if cat in ("cpu_op", "python_function", "user_annotation"):
        if (name == "record_param_comms" or name.startswith("nccl:")
                or ("c10d" in name and "wait" in name)
                or (name.startswith("ProcessGroup") and ("wait" in name or "Wait" in name))):
            return P_COMM
        if "DataLoader" in name or "dataloader" in name:
            return P_DL
        return P_ANNOT if cat == "user_annotation" else P_CPU
    return 0


def thread_segments(evs, blocking):
    """[(s, e, cause, name)] of one thread: at each elementary interval, the highest class among
    the open events, named by the innermost (latest in track order) open event of that class."""
    evs = sorted((e for e in evs if e["dur"] > 0 and e["cls"]), key=lambda e: (e["s"], -e["dur"]))
    for i, e in enumerate(evs):
        e["order"] = i
    bounds = sorted({e["s"] for e in evs} | {e["s"] + e["dur"] for e in evs})
    segs, open_, j = [], [], 0
    for a, b in zip(bounds, bounds[1:]):
        while j < len(evs) and evs[j]["s"] <= a:
            open_.append(evs[j])
            j += 1
        open_ = [e for e in open_ if e["s"] + e["dur"] > a]
        if not open_:
            continue
        top = max(e["cls"] for e in open_)
        name = max((e for e in open_ if e["cls"] == top), key=lambda e: e["order"])["name"]
        segs.append((a, b, CAUSE_OF[top], name))
    return segs


def reference(path):
    evs = [e for e in load(path) if e.get("ph") == "X" and "ts" in e]
    blocking = set()
    for e in evs:
        corr = e.get("args", {}).get("correlation")
        if corr is None:
            continue
        if (e.get("cat") == "gpu_memcpy" and "-> Pageable" in e["name"]) or (
                e.get("cat") == "cuda_sync" and "Wait" not in e["name"]):
            blocking.add(corr)
    threads, launch_of, calls = {}, {}, {}
    lo = hi = None
    work = []
    for e in evs:
        e["s"], e["dur"] = ns(e["ts"]), max(0, ns(e.get("dur", 0)))
        cat = e.get("cat", "")
        if cat in GPU_WORK:
            work.append(e)
        elif cat not in GPU_SIDE and is_num(e.get("pid")) and is_num(e.get("tid")):
            tid = (e["pid"], e["tid"])
            e["cls"] = klass(e, blocking)
            threads.setdefault(tid, []).append(e)
            lo = e["s"] if lo is None else min(lo, e["s"])
            hi = e["s"] + e["dur"] if hi is None else max(hi, e["s"] + e["dur"])
            if cat in ("cuda_runtime", "cuda_driver"):
                calls[tid] = calls.get(tid, 0) + 1
                corr = e.get("args", {}).get("correlation")
                if corr is not None and corr not in launch_of:
                    launch_of[corr] = tid
    for w in work:
        lo, hi = min(lo, w["s"]), max(hi, w["s"] + w["dur"])
    main = max(calls, key=lambda t: calls[t]) if calls else None
    segs = {t: thread_segments(v, blocking) for t, v in threads.items()}
    starts = {t: [s[0] for s in v] for t, v in segs.items()}
    lanes = {}
    for w in work:
        a = w.get("args", {})
        w["thread"] = launch_of.get(a.get("correlation"))
        lanes.setdefault((a.get("device"), a.get("stream")), []).append(w)
        lanes.setdefault((a.get("device"), -1), []).append(w)
    rows = {}
    for key, ws in lanes.items():
        ws.sort(key=lambda w: w["s"])
        by, names, idle = {c: 0 for c in CAUSES}, {}, 0

        def attribute(a, b, thread):
            nonlocal idle
            idle += b - a
            t = a
            for (s, e, cause, name) in (segs[thread][max(0, bisect.bisect_right(
                    starts[thread], a) - 1):] if thread in segs else []):
                if e <= t:
                    continue
                if s >= b:
                    break
                if s > t:
                    by["unrecorded"] += s - t
                    names[("unrecorded", "")] = names.get(("unrecorded", ""), 0) + s - t
                    t = s
                d = min(e, b) - t
                by[cause] += d
                names[(cause, name)] = names.get((cause, name), 0) + d
                t = min(e, b)
            if t < b:
                by["unrecorded"] += b - t
                names[("unrecorded", "")] = names.get(("unrecorded", ""), 0) + b - t

        cover, prev = lo, None
        for w in ws:
            if cover >= hi:
                break
            if w["s"] > cover:
                attribute(cover, min(w["s"], hi), w["thread"] or prev or main)
            cover = max(cover, w["s"] + w["dur"])
            prev = w["thread"] or prev
        if cover < hi:
            attribute(cover, hi, prev or main)
        top = {}
        for (cause, name), t in names.items():
            if cause not in top or t > top[cause][1] or (t == top[cause][1] and name < top[cause][0]):
                top[cause] = (name, t)
        rows[key] = (idle, by, top)
    return rows


# gpuprof's default communication names (src/analyze/classify.c, DEF_COMM), matched ignoring case.
COMM = re.compile(r"^nccl|^rccl|^hccl|^msccl|nccl(dev)?kernel|multimem_|all_?reduce_kernel|"
                  r"one_shot_all_reduce|two_shot_all_reduce|reduce_scatter_kernel|"
                  r"all_gather_kernel|all_to_all_kernel|cross_device_reduce", re.I)
PARTS = ["kernel", "memcpy", "memset", "communication", "runtime", "dataloader", "cpu_exec"]


def step_reference(path):
    """{step: {part: ns}}: each instant of a ProfilerStep to the first part covering it."""
    evs = [e for e in load(path) if e.get("ph") == "X" and "ts" in e]
    ivs = {p: [] for p in PARTS}
    steps = []
    for e in evs:
        s, d, cat, name = ns(e["ts"]), max(0, ns(e.get("dur", 0))), e.get("cat", ""), e["name"]
        part = None
        if cat == "kernel":
            part = "communication" if COMM.search(name) else "kernel"
        elif cat == "gpu_memcpy":
            part = "memcpy"
        elif cat == "gpu_memset":
            part = "memset"
        elif cat in ("cuda_runtime", "cuda_driver"):
            part = "runtime"
        elif cat in ("cpu_op", "user_annotation"):
            if name.startswith("ProfilerStep#") and is_num(e.get("tid")):
                steps.append((int(name[13:]), s, s + d))
            if "DataLoader" in name or "dataloader" in name:
                part = "dataloader"
            elif cat == "cpu_op":
                part = "cpu_exec"
        if part and d > 0:
            ivs[part].append((s, s + d))
    out = {}
    for num, a, b in steps:
        inside = {p: [(max(x, a), min(y, b)) for x, y in v if x < b and y > a] for p, v in ivs.items()}
        bounds = sorted({a, b} | {t for v in inside.values() for iv in v for t in iv})
        parts = {p: 0 for p in PARTS + ["other"]}
        for x, y in zip(bounds, bounds[1:]):
            first = next((p for p in PARTS if any(s <= x and e >= y for s, e in inside[p])), "other")
            parts[first] += y - x
        out[num] = parts
    return out


def main():
    gpuprof, shared = sys.argv[1], sys.argv[2]
    tdir = os.path.join(shared, "traces")
    paths = []
    for n in TRACES:
        p = os.path.join(tdir, n)
        if os.path.isdir(p):
            paths += [os.path.join(p, f) for f in sorted(os.listdir(p)) if ".json" in f]
        elif os.path.exists(p):
            paths.append(p)
    if not paths:
        print("check_idle_causes: no shared traces, skipped")
        return 77
    diffs, rows_checked, steps_checked = [], 0, 0
    for p in paths:
        out = subprocess.run([gpuprof, "analyze", "--json", "-q", "--table", "idle_causes",
                              "--table", "step_breakdown", p],
                             capture_output=True, text=True, check=True)
        doc = json.loads(out.stdout)
        got_steps = {r["step"]: r["parts_ns"] for r in doc["step_breakdown"]}
        want_steps = step_reference(p)
        if want_steps and got_steps != want_steps:
            diffs.append(f"{p}: steps {got_steps} != {want_steps}")
        steps_checked += len(want_steps)
        got = {(r["device"], r["stream"]): r for r in doc["idle_causes"]}
        want = reference(p)
        if set(got) != set(want):
            diffs.append(f"{p}: rows {sorted(got)} != {sorted(want)}")
            continue
        for key, (idle, by, top) in want.items():
            r, where = got[key], f"{os.path.basename(p)} {key}"
            rows_checked += 1
            if r["idle_ns"] != idle:
                diffs.append(f"{where}: idle {r['idle_ns']} != {idle}")
            for c in CAUSES:
                rc = r["causes"][c]
                if rc["time_ns"] != by[c]:
                    diffs.append(f"{where} {c}: {rc['time_ns']} != {by[c]}")
                name, t = top.get(c, ("", 0))
                if by[c] and (rc["top"], rc["top_ns"]) != (name, t):
                    diffs.append(f"{where} {c}: top {rc['top']!r} {rc['top_ns']} != {name!r} {t}")
    for d in diffs[:40]:
        print(d)
    print(f"check_idle_causes: {rows_checked} idle rows and {steps_checked} steps of {len(paths)} "
          f"traces, {len(diffs)} differences")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
