#!/usr/bin/env python3
"""Property test: every analysis on every trace keeps the invariants of docs/analyses.md.

Runs `gpuprof analyze --json` (default mode and --hta) and `gpuprof summary --json` on every trace
in SHARED/traces (files and job folders), on examples/traces and on the fuzz corpora of the trace
readers, and checks the figures from the JSON (not from the C structs, so the renderers are checked
too). Inputs the reader rejects (exit 2, as malformed corpus files should be) are skipped; any other
failure, a crash or a broken invariant fails the test.

Usage: check_invariants.py GPUPROF SOURCE_DIR [SHARED_DIR]
Exit: 0 all hold; 1 a violation; 77 nothing to check.
"""
import json
import math
import os
import subprocess
import sys

EPS_PCT = 0.01
violations = []


def bad(where, what):
    violations.append(f"{where}: {what}")


def nonneg(where, name, v):
    if v is not None and not (isinstance(v, float) and math.isnan(v)) and v < 0:
        bad(where, f"{name} = {v} < 0")


def check_analysis(where, d, hta):
    ranks = {r["rank"]: r for r in d.get("rank_info", [])}
    for t in d.get("temporal_breakdown", []):
        w = f"{where} rank {t['rank']}"
        if not t.get("valid", True):
            continue
        parts = [t["idle_time_ns"], t["compute_time_ns"], t["non_compute_time_ns"]]
        for name, v in zip(("idle", "compute", "non_compute"), parts):
            nonneg(w, name, v)
        if sum(parts) != t["kernel_time_ns"]:
            bad(w, f"idle + compute + non-compute = {sum(parts)} != kernel time {t['kernel_time_ns']}")
        pct = [t["idle_time_pctg"], t["compute_time_pctg"], t["non_compute_time_pctg"]]
        if abs(sum(pct) - 100.0) > EPS_PCT:
            bad(w, f"temporal percentages sum to {sum(pct)}")
        for p in pct:
            if not (-1e-9 <= p <= 100 + 1e-9):
                bad(w, f"percentage {p} outside [0, 100]")
    per_stream = {}
    for row in d.get("idle_time_breakdown", []):
        w = f"{where} rank {row['rank']} stream {row['stream']}"
        r = row["idle_time_ratio"]
        if r is not None and not (0 <= r <= 1):
            bad(w, f"idle ratio {r} outside [0, 1]")
        nonneg(w, "idle time", row["idle_time_ns"])
        key = (row["rank"], row.get("device"), row["stream"])
        per_stream[key] = per_stream.get(key, 0) + (r or 0)
    for key, s in per_stream.items():
        if s != 0 and abs(s - 1) > 0.01:
            bad(f"{where} {key}", f"idle ratios sum to {s}")
    types = d.get("kernel_type_breakdown", [])
    if types:
        s = sum(r["percentage"] for r in types)
        if abs(s - 100) > EPS_PCT:
            bad(where, f"kernel type percentages sum to {s}")
        for r in types:
            nonneg(where, f"type {r['kernel_type']}", r["sum_ns"])
    for k in d.get("top_kernels", []):
        nonneg(f"{where} rank {k['rank']}", f"kernel {k['name'][:40]} sum", k["sum_ns"])
        if k["count"] <= 0:
            bad(where, f"kernel row {k['name'][:40]} with count {k['count']}")
    for o in d.get("comm_comp_overlap", []):
        p = o["comp_comm_overlap_pctg"]
        if p is not None and not (0 <= p <= 100 + 1e-9):
            bad(f"{where} rank {o['rank']}", f"overlap {p}% outside [0, 100]")
        if o["overlap_time_ns"] > min(o["communication_time_ns"], o["computation_time_ns"]):
            bad(f"{where} rank {o['rank']}", "overlap exceeds communication or computation")
    for a in d.get("activity", []):
        w = f"{where} rank {a['rank']}"
        for k in ("cpu_active_ns", "gpu_active_ns", "cpu_gpu_overlap_ns", "sync_ns"):
            nonneg(w, k, a[k])
        for k in ("cpu_active_ns", "gpu_active_ns"):
            if a[k] > a["span_ns"]:
                bad(w, f"{k} {a[k]} exceeds its span {a['span_ns']}")
        if a["cpu_gpu_overlap_ns"] > min(a["cpu_active_ns"], a["gpu_active_ns"]):
            bad(w, "CPU/GPU overlap exceeds one of its unions")
        if a["small_kernels"] > a["kernels"]:
            bad(w, "more small kernels than kernels")
    # The GPU union never exceeds the GPU span, and busy <= the GPU events counted once.
    for t in d.get("temporal_breakdown", []):
        if not t.get("valid", True):
            continue
        busy = t["compute_time_ns"] + t["non_compute_time_ns"]
        if busy > t["kernel_time_ns"]:
            bad(f"{where} rank {t['rank']}", "busy time exceeds the kernel span")
        if not hta:
            tsum = sum(r["sum_ns"] for r in d.get("kernel_type_breakdown_per_rank", [])
                       if r["rank"] == t["rank"])
            if tsum != busy:
                bad(f"{where} rank {t['rank']}",
                    f"type states {tsum} != busy {busy}: a GPU event counted twice or not at all")
    for l in d.get("launch_stats", []):
        if l["matched"] > l["launches"]:
            bad(f"{where} rank {l['rank']}", "more matched launches than launches")
    check_idle_causes(where, d)
    check_step_breakdown(where, d)


def check_idle_causes(where, d):
    """By-cause times sum to the row's idle, shares are of that idle, a cause's top name holds at
    most the cause's time, and a device idles no longer than any of its streams."""
    device_idle, stream_idle = {}, {}
    for row in d.get("idle_causes", []):
        w = f"{where} rank {row['rank']} device {row['device']} stream {row['stream']}"
        idle = row["idle_ns"]
        nonneg(w, "idle", idle)
        total = 0
        for cause, c in row["causes"].items():
            nonneg(w, cause, c["time_ns"])
            total += c["time_ns"]
            if c["top_ns"] > c["time_ns"] or (c["time_ns"] > 0 and c["top_ns"] <= 0):
                bad(w, f"{cause}: top {c['top_ns']} against the cause's {c['time_ns']}")
            share = c["share"]
            if idle == 0:
                if share is not None:
                    bad(w, f"{cause}: share {share} of no idle time")
            elif abs(share - c["time_ns"] / idle) > 1e-9:
                bad(w, f"{cause}: share {share} != {c['time_ns']} / {idle}")
        if total != idle:
            bad(w, f"causes sum to {total} != idle {idle}")
        key = (row["rank"], row["device"])
        if row["scope"] == "device":
            device_idle[key] = idle
        else:
            stream_idle.setdefault(key, []).append(idle)
    for key, idles in stream_idle.items():
        if key not in device_idle:
            bad(f"{where} {key}", "streams without a whole-device row")
        elif device_idle[key] > min(idles):
            bad(f"{where} {key}", f"device idle {device_idle[key]} > a stream's {min(idles)}")


def check_step_breakdown(where, d):
    """Each step's parts are >= 0 and sum to the step's duration exactly."""
    for s in d.get("step_breakdown", []):
        w = f"{where} rank {s['rank']} step {s['step']}"
        if s["duration_ns"] != s["end_ns"] - s["start_ns"]:
            bad(w, "duration != end - start")
        for k, v in s["parts_ns"].items():
            nonneg(w, k, v)
        if sum(s["parts_ns"].values()) != s["duration_ns"]:
            bad(w, f"parts sum to {sum(s['parts_ns'].values())} != {s['duration_ns']}")


def check_summary(where, d):
    for kind in d.get("kinds", []):
        rows = kind.get("rows", [])
        w = f"{where} {kind.get('kind')}"
        share_key = "self_share" if rows and "self_share" in rows[0] else "share"
        s = 0.0
        for r in rows:
            for k, v in r.items():
                if k.endswith("_ns") and isinstance(v, (int, float)):
                    nonneg(w, f"{r.get('name', '?')[:40]}.{k}", v)
            if "self_total_ns" in r and "total_ns" in r and r["self_total_ns"] > r["total_ns"]:
                bad(w, f"{r['name'][:40]}: self {r['self_total_ns']} > inclusive {r['total_ns']}")
            s += r.get(share_key, 0) or 0
        if rows and s > 1 + 1e-6:
            bad(w, f"{share_key} sums to {s} > 1")


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def inputs(source, shared):
    found = []
    if shared:
        tdir = os.path.join(shared, "traces")
        for n in sorted(os.listdir(tdir)):
            p = os.path.join(tdir, n)
            if n.endswith(".json.gz") or n.endswith(".json") or (
                    os.path.isdir(p) and not n.endswith("reference")):
                found.append(p)
    ex = os.path.join(source, "examples", "traces")
    if os.path.isdir(ex):
        found += [os.path.join(ex, n) for n in sorted(os.listdir(ex))]
    for c in ("trace_reader", "parallel_read"):
        cd = os.path.join(source, "fuzz", "corpus", c)
        if os.path.isdir(cd):
            found += [os.path.join(cd, n) for n in sorted(os.listdir(cd))]
    return found


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    gp, source = sys.argv[1], sys.argv[2]
    shared = sys.argv[3] if len(sys.argv) > 3 and os.path.isdir(
        os.path.join(sys.argv[3], "traces")) else None
    files = inputs(source, shared)
    if not files:
        return 77
    checked = rejected = failed_outputs = 0
    for f in files:
        name = os.path.relpath(f, shared) if shared and f.startswith(shared) else os.path.relpath(f, source)
        for mode in ([], ["--hta"]):
            p = run([gp, "analyze", "--json", "-q"] + mode + [f])
            if p.returncode == 2:
                rejected += 1
                break
            if p.returncode != 0:
                bad(f"{name} analyze {' '.join(mode)}", f"exit {p.returncode}: {p.stderr.strip()[-300:]}")
                continue
            before = len(violations)
            check_analysis(f"{name} analyze{' --hta' if mode else ''}", json.loads(p.stdout), bool(mode))
            checked += 1
            failed_outputs += len(violations) > before
        else:
            p = run([gp, "summary", "--json", f])
            if p.returncode not in (0, 2):
                bad(f"{name} summary", f"exit {p.returncode}: {p.stderr.strip()[-300:]}")
            elif p.returncode == 0:
                before = len(violations)
                check_summary(f"{name} summary", json.loads(p.stdout))
                checked += 1
                failed_outputs += len(violations) > before
    for v in violations:
        print("VIOLATION:", v)
    print(f"check_invariants: {checked} outputs checked on {len(files)} inputs "
          f"({rejected} rejected as malformed), {len(violations)} violations")
    print(f"{checked - failed_outputs} passed, {failed_outputs} failed")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
