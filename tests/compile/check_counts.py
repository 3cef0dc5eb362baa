#!/usr/bin/env python3
"""Counts what `gpuprof compile --json` reports, independently, straight from the JSON lines of
every log in ../shared/compile-logs, and compares. How each figure is counted is written beside
it. usage: check_counts.py GPUPROF COMPILE_LOGS_DIR   (exit 77 when the directory is absent)"""
import collections
import gzip
import hashlib
import json
import os
import re
import subprocess
import sys

gp, logs = sys.argv[1], sys.argv[2]
if not os.path.isdir(logs):
    print("no shared compile logs: skipped")
    sys.exit(77)

KERNEL_DEF = re.compile(r"^\w+ = async_compile\.\w+\(")


def records(path):
    """(record, payload text) per record line: a line that is not tab-indented and not blank, with
    a JSON object after the first '] '; the payload is the tab-indented lines after it (blank
    lines dropped, as tlparse does)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line or line[0] == "\t" or "] " not in line:
            continue
        try:
            rec = json.loads(line[line.index("] ") + 2:])
        except ValueError:
            continue
        payload = []
        while i < len(lines) and (lines[i].startswith("\t") or lines[i] == ""):
            if lines[i]:
                payload.append(lines[i][1:])
            i += 1
        out.append((rec, "\n".join(payload)))
    return out


def count(paths):
    c = collections.Counter()
    ids, compiles, kinds = set(), set(), collections.Counter()
    for fi, path in enumerate(paths):
        for rec, payload in records(path):
            kind = next((k for k in rec if k not in ENVELOPE), None)
            kinds[kind] += 1
            if "has_payload" in rec and hashlib.md5(payload.encode()).hexdigest() != rec["has_payload"]:
                c["truncated_payloads"] += 1  # payload text does not hash to has_payload
            f, fc = rec.get("frame_id"), rec.get("frame_compile_id")
            if isinstance(f, int) and isinstance(fc, int):
                ca = rec.get("compiled_autograd_id")
                ids.add((fi, f, fc, rec.get("attempt") or 0, ca))  # compile ids incl. attempts
                compiles.add((fi, f, fc, ca))  # compiles: attempts are restarts of one compile
            m = rec.get("compilation_metrics")
            if m is not None:
                if m.get("fail_type"):
                    c["failures"] += 1  # a compilation_metrics with a fail_type
                if (m.get("co_name") or "").startswith("torch_dynamo_resume_in_") and fc == 0:
                    c["graph_breaks"] += 1  # a resume frame's first compile = one graph break
            if kind == "artifact" and rec["artifact"].get("name") == "dynamo_graph_break_reason":
                c["graph_breaks"] += 1
            if kind == "inductor_output_code":  # generated kernels: NAME = async_compile.X(
                c["kernels_generated"] += sum(1 for l in payload.split("\n") if KERNEL_DEF.match(l))
            if kind == "exported_program":
                c["exported_programs"] += 1
    c["compile_ids"] = len(ids)
    c["compiles"] = len(compiles)
    c["recompilations"] = sum(1 for k in compiles if k[2] >= 1)  # frame_compile_id >= 1
    c["records"] = sum(kinds.values())
    return c, kinds


ENVELOPE = {"rank", "frame_id", "frame_compile_id", "attempt", "has_payload",
            "compiled_autograd_id", "stack", "timestamp", "pathname", "lineno", "thread"}

fails = 0
for name in ["simple.log", "comp_metrics.log", "chromium_events.log", "export.log", "multi_rank_logs"]:
    path = os.path.join(logs, name)
    paths = sorted(os.path.join(path, n) for n in os.listdir(path)) if os.path.isdir(path) else [path]
    want, kinds = count(paths)
    got = json.loads(subprocess.run([gp, "compile", "--json", "-q", path], check=True,
                                    capture_output=True, text=True).stdout)
    s = got["summary"]
    have = {
        "compile_ids": len(got["compile_ids"]),
        "compiles": s["compiles"],
        "recompilations": s["recompilations"],
        "graph_breaks": s["graph_breaks"],
        "failures": s["failures"],
        "records": got["log"]["totals"]["records"],
        "truncated_payloads": got["log"]["totals"]["truncated_payloads"],
        "kernels_generated": sum(len(g["kernel_names"]) for g in got["graphs"]),
        "exported_programs": got["log"]["export"]["exported_programs"],
    }
    for k, v in have.items():
        if v != want[k]:
            print(f"FAIL {name}: {k} = {v}, counted {want[k]}")
            fails += 1
    gk = {k["kind"]: k["count"] for k in got["log"]["record_kinds"]}
    if gk != dict(kinds):
        print(f"FAIL {name}: record kinds {gk} != counted {dict(kinds)}")
        fails += 1
    print(f"{name}: " + ", ".join(f"{k} {v}" for k, v in have.items()))
sys.exit(1 if fails else 0)
