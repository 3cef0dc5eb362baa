#!/usr/bin/env python3
"""The module flame graph against `gpuprof ops --by module` on every shared trace.

`gpuprof flame --by module` and `gpuprof ops --by module` share one attribution walk, so on every
input (single traces and the 8-rank job), for GPU and CPU weight:
- the flame's total weight is the trace's whole GPU work sum (ops' gpu_work_sum_ns) with GPU weight,
  and the ops' total self CPU time with CPU weight: nothing dropped, nothing counted twice;
- per module (numbered instances merged, "nn.Module: Linear_3" -> "Linear", as ops does), the
  weight of the op leaves below its frames (op;kernel with GPU weight, op with CPU weight) equals
  the ops row's self GPU (self CPU) time;
- "(no module)" (with its "[unattributed GPU]" child) equals the ops "(no module)" row plus the
  unattributed rows ("(no launch event)", "... (outside any op)").
The traces recorded with with_stack=True (WITH_MODULES) must have module frames, so the check is
not vacuous. Exact equality: both sides are integer nanoseconds.

Usage: check_flame_modules.py GPUPROF SHARED_DIR WORKDIR   Exit: 0 agree, 1 differ, 77 no traces.
"""
import collections
import json
import os
import re
import subprocess
import sys

WITH_MODULES = ("modern_h100_vit.json.gz", "modern_h100_timesformer.json.gz")


def merged(frame):
    """ops' module key: the prefix dropped, a trailing _N instance number merged."""
    name = frame[len("nn.Module: "):] if frame.startswith("nn.Module: ") else frame
    return re.sub(r"(?<=.)_[0-9]+$", "", name)


def folded(gp, path, weight, out):
    r = subprocess.run([gp, "flame", "-q", "--by", "module", "--weight", weight, path, "-o", out],
                       capture_output=True, text=True)
    if r.returncode == 2 and "no event carries" in r.stderr:
        return None
    if r.returncode != 0:
        raise SystemExit(f"flame {path}: exit {r.returncode}: {r.stderr}")
    per = collections.Counter()
    with open(out) as fp:
        for line in fp:
            stack, w = line.rstrip("\n").rsplit(" ", 1)
            frames = stack.split(";")
            if re.fullmatch(r"rank -?[0-9]+", frames[0]):
                frames = frames[1:]
            if frames[0] == "(no module)":
                per["(no module)"] += int(w)
            else:  # the leaves are the op and, with GPU weight, its kernel: the module before
                per[merged(frames[-3 if weight == "gpu" else -2])] += int(w)
    return per


def check(gp, path, work):
    r = subprocess.run([gp, "ops", "-q", "--by", "module", "--top", "0", "--json", path],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"ops {path}: exit {r.returncode}: {r.stderr}")
    ops = json.loads(r.stdout)
    bad = 0
    for weight, field, total in (("gpu", "self_gpu_ns", ops["gpu_work_sum_ns"]),
                                 ("cpu", "self_cpu_ns", ops["total"]["self_cpu_ns"])):
        want = collections.Counter()
        for row in ops["rows"]:
            key = "(no module)" if row["unattributed"] else row["key"]
            want[key] += row[field]
        want = +want  # rows of no weight have no frame
        got = folded(gp, path, weight, os.path.join(work, "m.folded"))
        if got is None:
            if total:
                print(f"FAIL {path} {weight}: flame found no weight, ops {total} ns")
                bad += 1
            continue
        if sum(got.values()) != total:
            print(f"FAIL {path} {weight}: flame total {sum(got.values())} != ops {total}")
            bad += 1
        for key in sorted(set(got) | set(want)):
            if got[key] != want[key]:
                print(f"FAIL {path} {weight}: module {key}: flame {got[key]} != ops {want[key]}")
                bad += 1
        modules = len(set(got) - {"(no module)"})
        if os.path.basename(path) in WITH_MODULES and modules < 5:
            print(f"FAIL {path} {weight}: only {modules} modules")
            bad += 1
        print(f"{'ok  ' if not bad else 'bad '} {os.path.basename(path)} {weight}: "
              f"{total} ns in {modules} modules + (no module) {got['(no module)']} ns")
    return bad


def main():
    gp, shared, work = sys.argv[1], sys.argv[2], sys.argv[3]
    traces = os.path.join(shared, "traces")
    if not os.path.isdir(traces):
        print("no shared traces: skipped")
        return 77
    os.makedirs(work, exist_ok=True)
    inputs = sorted(os.path.join(traces, f) for f in os.listdir(traces)
                    if f.endswith(".json.gz") or f.startswith("multirank"))
    bad = sum(check(gp, p, work) for p in inputs)
    print(f"{len(inputs)} inputs, {bad} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
