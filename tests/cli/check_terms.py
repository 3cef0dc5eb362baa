#!/usr/bin/env python3
"""Issue 31 part 4: every table and page says which GPU figure it shows.

"GPU time" once meant two figures (docs/analyses.md, "Terms"): GPU busy (the union of the GPU work
of each device over the window) on the dashboard, timeline and analyze, and the sum of the GPU
events' durations in summary, flame, ops and diff. Each now has its own name, and so has HTA's
kernel_time (the GPU span). This check fails when an output uses a bare word for them again:
- "GPU time" / "gpu_time" / "gpu-time" (any case, also inside a key such as "gpu_time_ns"),
  "gpu_ms" / "GPU ms", and the old text labels "kernel_ms" (the GPU span) and "GPU active";
over every golden file (tests/*/golden) and over the outputs rendered afresh here: summary,
ops, analyze, advise, flame, timeline, report, diff and compile in every format (and every
command's --help), on the bundled
example, a hand-written profile and, when ../shared/traces is there, a few small real traces.
It also checks what the outputs must say instead: the dashboard shows GPU busy and the GPU work
sum under their names, GPU busy never exceeds the span per rank nor the work sum, and every idle
or busy share names its denominator (the GPU span, the span, the wall time, the stream's or the row's idle).

Outputs of the findings rules (src/analyze/advise*.c), worked on separately, are allowed their
current words (PENDING below, each with its reason) until they change; the check says how often
they still occur.

Usage: check_terms.py GPUPROF SOURCE_DIR WORKDIR [SHARED_DIR]   Exit: 0 clean, 1 a bare term.
"""
import glob
import json
import os
import re
import subprocess
import sys

BARE = re.compile(r"(?<![a-z])gpu[ _-]?time(?!line)|(?<![a-z])gpu[ _]ms(?![a-z])|(?<![a-z])kernel_ms"
                  r"|gpu active", re.I)
# Words of the findings rules (advise.c, advise_ops.c: not this change's files), until they change.
PENDING = []  # every former exception is fixed; add (regex, reason) pairs here only with a reason
SMALL_SHARED = ("tiny_cuda_event_sync.json.gz", "small_alexnet_cudasync.json.gz",
                "modern_mi300_torch_compile.json.gz", "modern_mi300_sglang_decode.json.gz")

failures = []
pending_hits = {}
idle_headings = []  # the idle headings checked: the check must not pass by finding none


def run(gp, args, stdout_path=None):
    r = subprocess.run([gp] + args, capture_output=True, text=True)
    if r.returncode not in (0, 1):  # 1: diff's regression verdict, still an output
        failures.append(f"gpuprof {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()[:300]}")
    if stdout_path:
        with open(stdout_path, "w") as f:
            f.write(r.stdout)
    return r.stdout


def render(gp, trace, tag, out, profile=False):
    """Every output of every command on one input, as files under out/tag.*"""
    p = os.path.join(out, tag)
    run(gp, ["summary", trace], p + ".summary.txt")
    run(gp, ["summary", "--json", trace], p + ".summary.json")
    run(gp, ["summary", "--csv", trace], p + ".summary.csv")
    run(gp, ["report", "-q", trace, "-o", p + ".report.html", "--json"], p + ".report.json")
    run(gp, ["timeline", "-q", trace, "-o", p + ".timeline.html", "--json"], p + ".timeline.json")
    run(gp, ["diff", trace, trace, "--html", p + ".diff.html", "--junit", p + ".diff.xml"],
        p + ".diff.txt")
    run(gp, ["diff", "--json", trace, trace], p + ".diff.json")
    run(gp, ["advise", trace], p + ".advise.txt")
    if profile:
        return
    run(gp, ["analyze", trace], p + ".analyze.txt")
    run(gp, ["analyze", "--json", trace], p + ".analyze.json")
    os.makedirs(p + ".analyze_csv", exist_ok=True)
    run(gp, ["analyze", "-q", "--csv", p + ".analyze_csv", trace])
    for by in ("name", "kernel", "shape"):
        run(gp, ["ops", "--by", by, trace], p + f".ops_{by}.txt")
    run(gp, ["ops", "--json", trace], p + ".ops.json")
    run(gp, ["ops", "--csv", trace], p + ".ops.csv")
    run(gp, ["ops", "-q", "--html", p + ".ops.html", trace])
    for ext in ("html", "svg", "folded", "speedscope.json"):
        run(gp, ["flame", "-q", trace, "-o", p + ".flame." + ext])
    run(gp, ["compile", "--trace", trace], p + ".compile.txt")


def scan(path):
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except (IsADirectoryError, FileNotFoundError):
        return
    lines = text.splitlines()
    for no, line in enumerate(lines, 1):
        # a term wrapped over two lines ("CPU and GPU\ntime"): only matches across the break
        if no < len(lines):
            head = line.rstrip()
            joined = head + " " + lines[no].lstrip()
            for m in BARE.finditer(joined):
                if m.start() < len(head) < m.end() and not any(rx.search(joined) for rx, _ in PENDING):
                    failures.append(f"{path}:{no}: bare '{m.group(0)}' over two lines")
        if not BARE.search(line):
            continue
        rest = line
        for rx, why in PENDING:
            rest, n = rx.subn("", rest)
            if n:
                pending_hits[why] = pending_hits.get(why, 0) + n
        m = BARE.search(rest)
        if m:
            start = max(0, m.start() - 60)
            failures.append(f"{path}:{no}: bare '{m.group(0)}': ...{line[start:m.end() + 60]}...")


def must(cond, what):
    if not cond:
        failures.append(what)


def check_meanings(out, tag, ranks=1):
    """What the outputs must say instead, and the order the two figures must keep."""
    p = os.path.join(out, tag)
    rep = json.loads(open(p + ".report.json").read())
    must("gpu_time_ns" not in rep, f"{tag}: report --json still writes gpu_time_ns")
    busy, work, span = rep["gpu_busy_ns"], rep["gpu_work_sum_ns"], rep["total_time_ns"]
    page = open(p + ".report.html").read()
    must('id="gp-gpu-work-sum"' in page and "GPU work sum" in page,
         f"{tag}: the dashboard does not show the GPU work sum under its name")
    if busy is not None:
        must(0 < busy <= work, f"{tag}: GPU busy {busy} not in (0, GPU work sum {work}]")
        must(busy <= span * ranks, f"{tag}: GPU busy {busy} exceeds the span x ranks")
        must('id="gp-gpu-busy"' in page and "GPU busy (union per device" in page,
             f"{tag}: the dashboard does not show GPU busy under its name")
        must("Temporal breakdown per rank: % of the GPU span" in page,
             f"{tag}: the dashboard's temporal breakdown does not name its denominator")
        summ = json.loads(open(p + ".summary.json").read())
        must(summ["gpu_work_sum_ns"] == work, f"{tag}: summary and report GPU work sums differ")
        tl = open(p + ".timeline.html").read()
        must(re.search(r"GPU busy <b>[^<]+</b> \([0-9.]+% of span", tl) is not None,
             f"{tag}: the timeline's GPU busy share does not name its denominator")
        txt = open(p + ".analyze.txt").read()
        must("TEMPORAL BREAKDOWN (per rank, % of the GPU span" in txt,
             f"{tag}: analyze's temporal breakdown does not name its denominator")
        for ext in ("svg", "html"):
            must("GPU work sum weight" in open(f"{p}.flame.{ext}").read(),
                 f"{tag}: the flame graph ({ext}) does not say it weighs the GPU work sum")
        diff = open(p + ".diff.txt").read()
        must(re.search(r"^gpu_work_sum ", diff, re.M) and "can exceed total_time" in diff,
             f"{tag}: diff's overall table does not say its GPU figure is a sum")
    for name in ("report.html", "timeline.html", "analyze.txt", "diff.txt", "diff.html"):
        path = f"{p}.{name}"
        if not os.path.exists(path):
            continue
        for line in open(path).read().splitlines():
            # a share of idle or busy time in a heading or label: its denominator on that line
            if re.search(r"<h[23]>[^<]*\bidle\b[^<]*</h[23]>|^[A-Z /-]*IDLE[A-Z /-]*\(", line):
                idle_headings.append(path)
                must(re.search(r"of (the|its) (GPU span|span|wall time|stream's idle|row's idle)", line),
                     f"{path}: an idle heading without its denominator: {line[:160]}")


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    gp, src, out = sys.argv[1:4]
    shared = sys.argv[4] if len(sys.argv) > 4 else ""
    os.makedirs(out, exist_ok=True)
    for cmd in ("summary", "ops", "analyze", "advise", "flame", "timeline", "report", "diff",
                "compile", "serve", "convert"):
        run(gp, [cmd, "--help"], os.path.join(out, f"help.{cmd}.txt"))
    run(gp, ["--help"], os.path.join(out, "help.txt"))
    render(gp, os.path.join(src, "examples/traces/example_step.json"), "example", out)
    check_meanings(out, "example")
    render(gp, os.path.join(src, "tests/report/data/profile_ranges.json"), "profile", out,
           profile=True)
    traces = os.path.join(shared, "traces") if shared else ""
    n_shared = 0
    for name in SMALL_SHARED:
        path = os.path.join(traces, name)
        if traces and os.path.exists(path):
            tag = name.split(".")[0]
            render(gp, path, tag, out)
            check_meanings(out, tag)
            n_shared += 1
    goldens = sorted(glob.glob(os.path.join(src, "tests", "*", "golden", "**", "*"), recursive=True))
    rendered = sorted(glob.glob(os.path.join(out, "**", "*"), recursive=True))
    for path in goldens + rendered:
        if os.path.isfile(path):
            scan(path)
    must(len(rendered) > 40, f"only {len(rendered)} outputs rendered")
    must(len(idle_headings) >= 4, f"only {len(idle_headings)} idle headings found to check")
    for why, n in sorted(pending_hits.items()):
        print(f"pending (not this check's to fix): {n} x {why}")
    for f in failures:
        print("FAIL", f)
    print(f"{len(goldens)} golden files, {len(rendered)} rendered outputs ({n_shared} shared "
          f"traces), {len(idle_headings)} idle headings, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
