#!/usr/bin/env python3
"""The speedscope export of `gpuprof flame` against speedscope's file format and the raw traces.

speedscope's format (jlfwong/speedscope src/lib/file-format-spec.ts, summarised in
../shared/reference/visual-formats.md): {"$schema", "shared": {"frames": [{name, file?, line?}]},
"profiles": [...]}, a profile "sampled" {name, unit, startValue, endValue, samples, weights} or
"evented" {name, unit, startValue, endValue, events: [{type "O"|"C", at, frame}]} with balanced
events and non-decreasing `at`. Checked on modern_h100_timesformer (Python stacks) and the 8-rank
job:
- the file follows that format: every frame index valid, every evented profile balanced (each "C"
  closes the innermost open frame), `at` non-decreasing and inside [startValue, endValue];
- one evented profile per GPU stream and CPU thread of each rank ("rank N · ..." in a job);
- per rank, the slices opened in its GPU-stream profiles are the GPU events of positive duration
  in the raw trace file (kernels, memcpys, memsets, GPU-side annotations), counted here from the
  JSON, not by gpuprof;
- the Python frames carry file and line: every python_function name "FILE(LINE): FUNC" of the raw
  trace is a frame {name FUNC, file FILE, line LINE}.

Usage: check_speedscope.py GPUPROF SHARED_DIR WORKDIR   Exit: 0 ok, 1 a check failed, 77 no traces.
"""
import collections
import gzip
import json
import os
import re
import subprocess
import sys

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "Kernel", "Memcpy", "Memset"}
PY = re.compile(r"^(.+)\((\d+)\): (.*)$")
fails = 0


def check(cond, what):
    global fails
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        fails += 1


def raw(path):
    """(GPU slices of positive duration, python_function names) of one raw trace file."""
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as fp:
        d = json.load(fp)
    evs = d["traceEvents"] if isinstance(d, dict) else d
    gpu, py = 0, set()
    for e in evs:
        if e.get("ph") != "X":
            continue
        if e.get("cat") in GPU_CATS and float(e.get("dur", 0)) > 0:
            gpu += 1
        if e.get("cat") == "python_function":
            py.add(e.get("name", ""))
    return gpu, py


def valid(doc, label):
    frames = doc["shared"]["frames"]
    check(doc.get("$schema") == "https://www.speedscope.app/file-format-schema.json"
          and all(isinstance(f.get("name"), str) and (("file" in f) == ("line" in f))
                  and isinstance(f.get("line", 0), int) for f in frames),
          f"{label}: $schema and {len(frames)} frames of the format")
    bad = []
    for p in doc["profiles"]:
        if p["type"] == "sampled":
            ok = len(p["samples"]) == len(p["weights"]) and all(
                0 <= i < len(frames) for s in p["samples"] for i in s)
        elif p["type"] == "evented":
            stack, last, ok = [], p["startValue"], p["unit"] == "nanoseconds"
            for e in p["events"]:
                if not (0 <= e["frame"] < len(frames)) or e["at"] < last or e["at"] > p["endValue"]:
                    ok = False
                    break
                last = e["at"]
                if e["type"] == "O":
                    stack.append(e["frame"])
                elif e["type"] != "C" or not stack or stack.pop() != e["frame"]:
                    ok = False
                    break
            ok = ok and not stack and len(p["events"]) > 0
        else:
            ok = False
        if not ok:
            bad.append(p["name"])
    check(not bad, f"{label}: {len(doc['profiles'])} profiles valid and balanced" +
          (f" (bad: {bad[:3]})" if bad else ""))


def export(gp, path, out):
    r = subprocess.run([gp, "flame", path, "-o", out], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"flame {path}: exit {r.returncode}: {r.stderr}")
    with open(out) as fp:
        return json.load(fp)


def main():
    gp, shared, work = sys.argv[1:4]
    tf = os.path.join(shared, "traces", "modern_h100_timesformer.json.gz")
    job = os.path.join(shared, "traces", "multirank8_dlrm_v100")
    if not (os.path.isfile(tf) and os.path.isdir(job)):
        print("no shared traces: skipped")
        return 77
    os.makedirs(work, exist_ok=True)

    doc = export(gp, tf, os.path.join(work, "tf.speedscope.json"))
    valid(doc, "timesformer")
    ev = [p for p in doc["profiles"] if p["type"] == "evented"]
    gpu_n, py = raw(tf)
    opened = sum(1 for p in ev if p["name"].startswith("GPU ") for e in p["events"] if e["type"] == "O")
    check(opened == gpu_n, f"timesformer: {opened} GPU slices in the stream profiles, raw trace {gpu_n}")
    frames = {(f["name"], f.get("file"), f.get("line")) for f in doc["shared"]["frames"]}
    want = {(m.group(3), m.group(1), int(m.group(2))) for m in map(PY.match, py) if m}
    missing = want - frames
    check(len(want) > 100 and not missing,
          f"timesformer: {len(want)} Python frames with file and line, {len(missing)} missing"
          + (f" (e.g. {sorted(missing)[:2]})" if missing else ""))
    check(any(p["name"].startswith("thread ") for p in ev), "timesformer: a CPU-thread profile: " +
          ", ".join(p["name"] for p in ev))

    doc = export(gp, job, os.path.join(work, "job.speedscope.json"))
    valid(doc, "8-rank job")
    per = collections.defaultdict(lambda: [0, 0, 0])  # rank -> stream profiles, threads, GPU slices
    for p in doc["profiles"]:
        m = re.match(r"rank (\d+) \u00b7 (GPU .*|.*)$", p["name"])
        if p["type"] != "evented" or not m:
            continue
        r = per[int(m.group(1))]
        if m.group(2).startswith("GPU "):
            r[0] += 1
            r[2] += sum(1 for e in p["events"] if e["type"] == "O")
        else:
            r[1] += 1
    files = sorted(os.listdir(job))
    for rank, f in enumerate(files):
        g, _ = raw(os.path.join(job, f))
        s, t, n = per.get(rank, [0, 0, 0])
        check(s >= 1 and t >= 1 and n == g,
              f"8-rank job rank {rank}: {s} stream and {t} thread profiles, {n} GPU slices (raw {g})")
    print(f"{fails} check(s) failed" if fails else "all speedscope checks passed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
