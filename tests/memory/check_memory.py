#!/usr/bin/env python3
"""`gpuprof memory --json` against figures computed here, independently, from the trace's own
"[memory]" events (json + gzip, no gpuprof code): per (Device Type, Device Id) the event and
allocation/free counts and bytes, the peak of Total Allocated (or of the running sum of Bytes when
a device's events lack it) and its time after the device's first event, the peak of Total Reserved, and the bytes still live at
the peak among the blocks allocated in the trace (replayed by address), the rest being what was
allocated before the trace began; and the groups add up to the live bytes.

usage: check_memory.py GPUPROF TRACE...   (a missing trace is skipped)"""
import gzip
import json
import subprocess
import sys


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def expected(events):
    devs = {}
    mem = [e for e in events if e.get("name") == "[memory]" and e.get("ph") in ("i", "I")]
    mem.sort(key=lambda e: float(e["ts"]))  # stable: file order at equal times
    for e in mem:
        a = e["args"]
        devs.setdefault((a["Device Type"], a["Device Id"]), []).append(e)
    out = {}
    for key, evs in devs.items():
        totals = all("Total Allocated" in e["args"] for e in evs)
        level, run, peak_i, levels = None, 0, 0, []
        for i, e in enumerate(evs):
            run += e["args"]["Bytes"]
            levels.append(e["args"]["Total Allocated"] if totals else run)
            if levels[i] > levels[peak_i]:
                peak_i = i
        live = {}
        addresses = any(e["args"].get("Addr") for e in evs)
        for e in evs[:peak_i + 1] if addresses else []:
            b, addr = e["args"]["Bytes"], e["args"].get("Addr", 0)
            if not addr:
                continue
            if b > 0:
                live[addr] = b
            elif b < 0:
                live.pop(addr, None)
        reserved = [e["args"]["Total Reserved"] for e in evs if "Total Reserved" in e["args"]]
        out[key] = {
            "events": len(evs),
            "allocations": sum(1 for e in evs if e["args"]["Bytes"] > 0),
            "frees": sum(1 for e in evs if e["args"]["Bytes"] < 0),
            "bytes_allocated": sum(e["args"]["Bytes"] for e in evs if e["args"]["Bytes"] > 0),
            "bytes_freed": -sum(e["args"]["Bytes"] for e in evs if e["args"]["Bytes"] < 0),
            "peak_allocated_bytes": levels[peak_i],
            "peak_after_first_us": float(evs[peak_i]["ts"]) - float(evs[0]["ts"]),
            "peak_reserved_bytes": max(reserved) if reserved else None,
            "final_allocated_bytes": levels[-1],
            "traced_bytes": sum(live.values()) if addresses else None,
            "blocks": len(live) if addresses else None,
        }
    return out


def main():
    gp, paths = sys.argv[1], sys.argv[2:]
    checked = 0
    for path in paths:
        try:
            events = load(path)
        except FileNotFoundError:
            print("skip (absent): " + path)
            continue
        want = expected(events)
        run = subprocess.run([gp, "memory", "--json", "-q", path], check=True,
                             stdout=subprocess.PIPE)
        got = {(d["device_type"], d["device_id"]): d for d in json.loads(run.stdout)["devices"]}
        if set(got) != set(want):
            sys.exit("%s: devices %s, expected %s" % (path, sorted(got), sorted(want)))
        for key, w in want.items():
            g = got[key]
            live = g["live_at_peak"]
            have = dict((k, g[k]) for k in w if k in g)
            have["traced_bytes"] = live["traced_bytes"] if live else None
            have["blocks"] = live["blocks"] if live else None
            have["peak_after_first_us"] = (g["peak_ts_ns"] - g["first_ts_ns"]) / 1000.0
            for k, v in w.items():
                ok = abs(have[k] - v) <= 0.002 if k == "peak_after_first_us" else have[k] == v
                if not ok:
                    sys.exit("%s %s: %s is %r, expected %r" % (path, key, k, have[k], v))
            if live is None:
                pass
            elif live["before_trace_bytes"] != max(0, w["peak_allocated_bytes"] - w["traced_bytes"]):
                sys.exit("%s %s: before_trace_bytes %r" % (path, key, live["before_trace_bytes"]))
            if live and sum(x["bytes"] for x in live["groups"]) != w["traced_bytes"]:
                sys.exit("%s %s: the groups do not add up to the live bytes" % (path, key))
            if max(p[1] for p in g["curve"]) != w["peak_allocated_bytes"]:
                sys.exit("%s %s: the curve misses the peak" % (path, key))
            checked += 1
        print("%s: %d allocators agree" % (path, len(want)))
    print("%d allocators checked" % checked)


if __name__ == "__main__":
    main()
