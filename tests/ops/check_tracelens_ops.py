#!/usr/bin/env python3
"""Outside reference: `gpuprof ops` against AMD TraceLens's ops_by_name and op_perf.

For every trace in SHARED/traces/tracelens-reference:
- ops_by_name: per CPU op name, TraceLens counts the instances that launched GPU work themselves
  and sums their direct and subtree kernel time. gpuprof's by-name row counts every instance
  (as torch's key_averages does), so the same figures are rebuilt from `gpuprof ops --by instance`
  (instances with kernels > 0). A launch call outside every op is its own "op" in TraceLens
  ("hipGraphLaunch"); gpuprof lists it as the row "hipGraphLaunch (outside any op)".
  Count exact; direct and subtree time within 1 %.
- op_perf: per op instance with a perf model, matched by External id: GFLOPs and data moved
  (MiB) within 1 %. A convolution's figures sit on the nested op that holds its GPU time
  (aten::cudnn_convolution), which names the convolution in model_external_id. Ops modelled by
  name (vllm::...) have their TFLOP/s compared too (rates over the subtree's busy time, as
  TraceLens's). Entries TraceLens lists without shapes (input_dims null: the trace was
  recorded without record_shapes) are skipped, as are the operators gpuprof does not model
  (UNMODELED, docs/ops.md "Agreement with TraceLens"); each skip is counted and printed.

Usage: check_tracelens_ops.py GPUPROF SHARED_DIR   Exit: 0 agree, 1 differ, 77 no references.
"""
import collections
import json
import os
import subprocess
import sys

TOL = 0.01
# TraceLens models these; gpuprof does not (docs/ops.md): Inductor's fused Triton kernels (no
# formula from the op's inputs alone), vLLM's custom GEMM, nearest upsampling.
# vllm::rocm_unquantized_gemm is modelled by name (docs/ops.md, "Custom ops"): its rate is over
# its subtree's busy time, as TraceLens's, so its TFLOP/s is compared too.
UNMODELED = ("triton_", "aten::upsample_nearest")


def run(gp, *args):
    r = subprocess.run([gp, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"gpuprof {' '.join(args)}: exit {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)


def rel(ours, ref):
    return abs(ours - ref) / abs(ref) if ref else abs(ours)


def check_by_name(name, ref, rows):
    agg = collections.defaultdict(lambda: [0, 0, 0])
    for r in rows:
        if r["kernels"] == 0:
            continue
        if r["unattributed"]:
            if not r["launch_call"]:
                continue  # "(no launch event)": TraceLens has no row for these
            key = r["launch_call"] + " (outside any op)"
        else:
            key = r["key"]
        a = agg[key]
        a[0] += 0 if r["unattributed"] else 1
        a[1] += r["self_gpu_ns"]
        a[2] += r["gpu_ns"]
    bad, worst = 0, 0.0
    for o in ref["ops_by_name"]:
        key = o["name"]
        if key not in agg and key + " (outside any op)" in agg:
            key += " (outside any op)"
        a = agg.get(key)
        if a is None:
            print(f"DIFFERS {name}: no row for {o['name']}")
            bad += 1
            continue
        e = max(rel(a[1] / 1e6, o["direct_kernel_time_ms"]),
                rel(a[2] / 1e6, o["subtree_kernel_time_ms"]))
        worst = max(worst, e)
        count_ok = a[0] == o["count"] or key.endswith("(outside any op)")
        if e > TOL or not count_ok:
            print(f"DIFFERS {name} {o['name']}: count {a[0]} vs {o['count']}, direct "
                  f"{a[1] / 1e6:.6f} vs {o['direct_kernel_time_ms']:.6f} ms, subtree "
                  f"{a[2] / 1e6:.6f} vs {o['subtree_kernel_time_ms']:.6f} ms")
            bad += 1
    return bad, len(ref["ops_by_name"]), worst


def check_op_perf(name, ref, rows, skips):
    by_ext = {r["external_id"]: r for r in rows if not r["unattributed"]}
    # A convolution's model sits on the op that holds its GPU time (aten::cudnn_convolution):
    # that row names the convolution's External id in model_external_id (docs/ops.md).
    for r in rows:
        if r.get("modeled") and r["model_external_id"] not in (0, r["external_id"]):
            by_ext[r["model_external_id"]] = dict(r, key=None, held_for=r["key"])
    bad = checked = 0
    worst = 0.0
    for o in ref["op_perf"]:
        if o["input_dims"] is None:
            skips["no shapes in the trace"] += 1
            continue
        if o["name"].startswith(UNMODELED):
            skips["not modeled: " + o["name"].split("_fused")[0]] += 1
            continue
        r = by_ext.get(o["external_id"])
        if r is not None and r["key"] is None:
            r = dict(r, key=o["name"])  # held by a nested op (held_for), checked as the conv
        if r is None or r["key"] != o["name"] or not r["modeled"]:
            print(f"DIFFERS {name}: External id {o['external_id']} ({o['name']}) has no model "
                  f"in gpuprof: {r and (r['key'], r['modeled'])}")
            bad += 1
            continue
        checked += 1
        fields = [("gflops", r["flops"] / 1e9), ("data_moved_mb", r["bytes"] / 2**20)]
        if not o["name"].startswith("aten::"):
            fields.append(("tflops_per_s", r["tflops_per_s"]))
        for field, ours in fields:
            if o[field] is None:
                continue
            e = rel(ours, o[field])
            worst = max(worst, e)
            if e > TOL:
                print(f"DIFFERS {name} {o['name']} #{o['external_id']} {field}: {ours:.9g} vs "
                      f"{o[field]:.9g} ({o['input_dims']} {o['input_type']})")
                bad += 1
    return bad, checked, worst


def main():
    gp, shared = sys.argv[1], sys.argv[2]
    refdir = os.path.join(shared, "traces", "tracelens-reference")
    if not os.path.isdir(refdir):
        print("SKIP: no TraceLens references")
        return 77
    failures = 0
    skips = collections.Counter()
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
        ref = json.load(open(os.path.join(refdir, n)))
        rows = run(gp, "ops", "--json", "-q", "--by", "instance", path)["rows"]
        b1, n1, w1 = check_by_name(name, ref, rows)
        b2, n2, w2 = check_op_perf(name, ref, rows, skips)
        failures += b1 + b2
        print(f"{'ok     ' if b1 + b2 == 0 else 'DIFFERS'} {name}: ops_by_name {n1 - b1}/{n1} "
              f"(worst {w1 * 100:.4f} %), op_perf {n2} instances (worst {w2 * 100:.4f} %)")
    for why, k in sorted(skips.items()):
        print(f"skipped op_perf entries, {why}: {k}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
