#!/usr/bin/env python3
"""Writes the dashboard's scale fixture (a Kineto-style trace) for browser_dash.sh:
100,000 CPU ops of distinct names side by side on one thread, `aten::hot` called 1,500 times,
all inside ProfilerStep#550, one kernel, and a thread holding only the profiler's own
`Buffer Flush` overhead events (cat "overhead", as Kineto writes CUPTI's overhead records).
usage: make_dash_fixture.py OUT.json"""
import json
import sys

N = 100_000
HOT = 1_500
ev = []
ts = 1000.0
ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#550", "pid": 10, "tid": 10,
           "ts": ts, "dur": 2.0 * (N + HOT) + 10})
for i in range(N):
    ev.append({"ph": "X", "cat": "cpu_op", "name": "op_%06d" % i, "pid": 10, "tid": 10,
               "ts": ts + 1 + 2.0 * i, "dur": 1.0 + (i % 97) / 100.0})
base = ts + 1 + 2.0 * N
for i in range(HOT):
    ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::hot", "pid": 10, "tid": 10,
               "ts": base + 2.0 * i, "dur": 1.5})
ev.append({"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": ts + 5,
           "dur": 50.0, "args": {"device": 0, "stream": 7}})
for i in range(3):
    ev.append({"ph": "X", "cat": "overhead", "name": "Buffer Flush", "pid": 10, "tid": 99,
               "ts": ts + 100.0 * i, "dur": 20.0})
ev.append({"ph": "M", "name": "thread_name", "pid": 10, "tid": 10, "args": {"name": "main"}})
with open(sys.argv[1], "w") as fp:
    json.dump({"schemaVersion": 1, "traceEvents": ev}, fp)
