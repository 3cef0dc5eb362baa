#!/usr/bin/env python3
"""Outside reference: `gpuprof ops` per-op CPU times against torch's own key_averages().

Records a small model with Debian's python3-torch (1.13, CPU only, the legacy autograd profiler:
no Kineto), exports the chrome trace, and compares, per operator name, the calls, Self CPU total
and CPU total of `gpuprof ops --json` on that file with the same run's
prof.key_averages(). The legacy file holds whole microseconds (start and duration each rounded),
so each instance may differ by up to 1 us in its total and 1 us per direct child in its self time:
the tolerance is that sum, per row. Calls and totals must agree on every row. Self times may
differ beyond it for one reason: rounding start and duration apart can make a child end a
microsecond after its parent. torch (whose in-memory times are the same whole microseconds) then
does not make it a child: it hangs it under the next ancestor that holds it whole, and can show a
negative Self CPU for that one (e.g. "autograd::engine::evaluate_function: GeluBackward0  -9 us").
gpuprof nests it under the parent it starts in. The script takes torch's own parent of every event
(function_events' cpu_parent, in the order export_chrome_trace writes them) and lists the events
whose parent differs from the file's nesting. A self time outside the tolerance passes only when
such events explain it: the row is the event, its torch parent or an event between the two, and
the difference is at most the durations of those events. Self times must still sum to torch's
(self time is a partition in both).
Exits 77 (ctest SKIP) when torch cannot be imported or
writes another format (a Kineto build).
Usage: torch_key_averages.py GPUPROF WORKDIR
"""
import inspect
import json
import os
import subprocess
import sys


def import_torch():
    """torch, from this Python or else from $GP_TORCH_PYTHON or Debian's /usr/bin/python3 (where
    python3-torch installs, which a pyenv or venv python3 earlier on PATH does not see): the
    script runs again under the first that has it."""
    try:
        import torch
        return torch
    except ImportError as e:
        why = e
    for py in (os.environ.get("GP_TORCH_PYTHON"), "/usr/bin/python3"):
        if py and os.path.realpath(py) != os.path.realpath(sys.executable) and os.access(py, os.X_OK):
            if subprocess.run([py, "-c", "import torch"], capture_output=True).returncode == 0:
                os.execv(py, [py, os.path.abspath(__file__)] + sys.argv[1:])
    print("SKIP: torch is not importable: %s" % why)
    sys.exit(77)


def record(path):
    torch = import_torch()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.LayerNorm(128),
                                torch.nn.Linear(128, 10), torch.nn.Softmax(dim=-1))
    x = torch.randn(32, 64)
    kwargs = {"record_shapes": True}
    if "use_kineto" in inspect.signature(torch.autograd.profiler.profile).parameters:
        kwargs["use_kineto"] = False
    with torch.autograd.profiler.profile(**kwargs) as prof:
        for _ in range(4):
            with torch.autograd.profiler.record_function("step"):
                model(x).sum().backward()
    prof.export_chrome_trace(path)
    ka = {e.key: (e.count, e.self_cpu_time_total, e.cpu_time_total) for e in prof.key_averages()}
    # torch's parent of each written event, as an index into the file's events (the file holds
    # function_events in order, less those without a trace_name); -1 for none, -2 for one the
    # file lacks
    written = [e for e in prof.function_events if e.trace_name is not None]
    index = {id(e): i for i, e in enumerate(written)}
    parents = [-1 if e.cpu_parent is None else index.get(id(e.cpu_parent), -2) for e in written]
    return torch.__version__, ka, parents


def main():
    gpuprof, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    trace = os.path.join(work, "key_averages.json")
    version, ka, torch_parent = record(trace)
    doc = json.load(open(trace))
    if not isinstance(doc, list) or not any(e.get("pid") == "CPU functions" for e in doc):
        print("SKIP: torch %s did not write the legacy format (a Kineto build?)" % version)
        return 77
    r = subprocess.run([gpuprof, "ops", "--json", "-q", trace], capture_output=True, text=True)
    if r.returncode != 0:
        print("FAIL: gpuprof ops: exit %d: %s" % (r.returncode, r.stderr))
        return 1
    rows = {row["key"]: row for row in json.loads(r.stdout)["rows"]}
    # the file's nesting: each event's parent and direct children per name (for the self-time
    # tolerance), nested by time on a thread as gpuprof nests them
    ev = [e for e in doc if e.get("ph") == "X"]
    if len(ev) != len(torch_parent):
        print("FAIL: the file holds %d events, torch wrote %d" % (len(ev), len(torch_parent)))
        return 1
    order = sorted(range(len(ev)), key=lambda i: (ev[i]["tid"], ev[i]["ts"], -ev[i]["dur"]))
    file_parent = [-1] * len(ev)
    kids = {}
    stack = []
    for i in order:
        e = ev[i]
        while stack and (ev[stack[-1]]["tid"] != e["tid"] or
                         e["ts"] >= ev[stack[-1]]["ts"] + ev[stack[-1]]["dur"]):
            stack.pop()
        if stack:
            file_parent[i] = stack[-1]
            kids[ev[stack[-1]]["name"]] = kids.get(ev[stack[-1]]["name"], 0) + 1
        stack.append(i)
    # events torch hangs elsewhere: the names each touches, with its duration as their budget
    explained = {}
    for i, tp in enumerate(torch_parent):
        if tp == file_parent[i]:
            continue
        names, a = {ev[i]["name"]}, file_parent[i]
        while a >= 0 and a != tp:
            names.add(ev[a]["name"])
            a = file_parent[a]
        if tp >= 0:
            names.add(ev[tp]["name"])
        print("torch does not nest %s (%s us + %s) in %s; its parent there: %s" %
              (ev[i]["name"], ev[i]["ts"], ev[i]["dur"],
               ev[file_parent[i]]["name"] if file_parent[i] >= 0 else "none",
               ev[tp]["name"] if tp >= 0 else "none" if tp == -1 else "one not written"))
        for n in names:
            explained[n] = explained.get(n, 0.0) + ev[i]["dur"]
    failures = 0
    moved, moved_tol, sum_ours, sum_torch = [], 0.0, 0.0, 0.0
    for name, (count, self_us, total_us) in sorted(ka.items()):
        row = rows.get(name)
        if row is None:
            print("FAIL: no gpuprof row for %s" % name)
            failures += 1
            continue
        tol_total = count * 1.0 + 0.5
        tol_self = tol_total + kids.get(name, 0) * 1.0
        got_self, got_total = row["self_cpu_ns"] / 1e3, row["cpu_ns"] / 1e3
        sum_ours += got_self
        sum_torch += self_us
        ok = row["calls"] == count and abs(got_total - total_us) <= tol_total
        self_ok = abs(got_self - self_us) <= tol_self
        if ok and not self_ok:
            moved.append(name)
            if abs(got_self - self_us) > tol_self + explained.get(name, 0.0):
                print("FAIL: self time of %s differs by %.1f us, more than the tolerance %.1f us "
                      "plus %.1f us of events torch does not nest" %
                      (name, got_self - self_us, tol_self, explained.get(name, 0.0)))
                failures += 1
            moved_tol += tol_self
        print("%-4s %-34s calls %3d/%3d  self %9.1f/%9.1f us  total %9.1f/%9.1f us" %
              ("ok" if ok and self_ok else "FAIL" if not ok else "tree", name, row["calls"], count,
               got_self, self_us, got_total, total_us))
        failures += not ok
    if moved:
        agree = abs(sum_ours - sum_torch) <= moved_tol
        print("%s: self time of %s differs from torch's tree (a child torch does not nest); "
              "self over all rows: %.1f us, torch %.1f us" %
              ("ok" if agree else "FAIL", moved, sum_ours, sum_torch))
        failures += not agree
    extra = set(rows) - set(ka)
    if extra:
        print("FAIL: gpuprof rows torch does not have: %s" % sorted(extra))
        failures += 1
    print("%s: torch %s, %d operators compared" % ("FAIL" if failures else "OK", version, len(ka)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
