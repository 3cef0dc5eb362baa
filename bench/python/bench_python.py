#!/usr/bin/env python3
"""Benchmarks of the Python package (docs/performance.md, "Python package").

1. The cost of one profiled block, `with prof.profile("x"): pass`, against a bare
   `time.perf_counter_ns()` pair and against `torch.autograd.profiler.record_function("x")`
   (with no torch profiler active, and inside an active one), all measured in the same run:
   ns per block, median of --repeats timings of --n blocks each, and the ratios.
2. With --trace PATH: `gpuprof.read(PATH).analyze()` against the CLI `gpuprof analyze PATH --json`
   (one fresh process each, alternating, medians of --runs), the ratio Python / CLI.

Usage: PYTHONPATH=build/python python3 bench/python/bench_python.py [--cli build/gpuprof]
       [--trace big.json] [--n 200000] [--repeats 9] [--runs 5]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import gpuprof


def per_block(fn, n, repeats):
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        fn(n)
        samples.append((time.perf_counter_ns() - t0) / n)
    return statistics.median(samples)


def bare_pair(n):
    pc = time.perf_counter_ns
    for _ in range(n):
        a = pc()
        b = pc()


def empty_loop(n):
    for _ in range(n):
        pass


def gpuprof_block(prof):
    profile = prof.profile

    def run(n):
        for _ in range(n):
            with profile("x"):
                pass
    return run


def torch_block(torch):
    rf = torch.autograd.profiler.record_function

    def run(n):
        for _ in range(n):
            with rf("x"):
                pass
    return run


def timed_process(cmd, env=None):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--trace")
    ap.add_argument("--cli", default="build/gpuprof")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()

    prof = gpuprof.Profiler(ring_records=1 << 16)
    loop = per_block(empty_loop, a.n, a.repeats)
    rows = [("bare perf_counter_ns() pair", per_block(bare_pair, a.n, a.repeats))]
    rows.append(("with gpuprof profile(\"x\")", per_block(gpuprof_block(prof), a.n, a.repeats)))
    try:
        import torch
        rows.append(("with record_function(\"x\"), no profiler",
                     per_block(torch_block(torch), a.n, a.repeats)))
        with torch.autograd.profiler.profile():
            rows.append(("with record_function(\"x\"), profiler on",
                         per_block(torch_block(torch), min(a.n, 50_000), a.repeats)))
    except ImportError:
        print("torch not importable: record_function rows skipped")
    print("Python %s, gpuprof %s; loop overhead %.1f ns subtracted; medians of %d x %d blocks"
          % (sys.version.split()[0], gpuprof.__version__, loop, a.repeats, a.n))
    base = rows[0][1] - loop
    for name, ns in rows:
        print("  %-42s %8.1f ns  ratio to bare pair %.2f" % (name, ns - loop, (ns - loop) / base))
    g = rows[1][1] - loop
    for name, ns in rows[2:]:
        print("  gpuprof / %-32s %.2f" % (name, g / (ns - loop)))

    if a.trace:
        env = dict(os.environ)
        # In the Python process the clock runs around read + analyze only (interpreter start-up
        # and imports are not gpuprof's cost); the CLI is timed as a whole process (its start-up
        # is a millisecond), so the comparison slightly favours the CLI.
        py = [sys.executable, "-c",
              "import time, gpuprof, sys; t0 = time.perf_counter(); "
              "gpuprof.read(sys.argv[1]).analyze(format='json'); "
              "print(time.perf_counter() - t0)", a.trace]
        cli = [a.cli, "analyze", a.trace, "--json"]
        tp, tc = [], []
        for _ in range(a.runs):
            tc.append(timed_process(cli, env))
            out = subprocess.run(py, check=True, capture_output=True, text=True, env=env).stdout
            tp.append(float(out.strip().splitlines()[-1]))
        mp, mc = statistics.median(tp), statistics.median(tc)
        print("read+analyze %s: Python %.3f s (in process), CLI %.3f s (whole process); medians "
              "of %d, alternating; ratio %.3f" % (os.path.basename(a.trace), mp, mc, a.runs,
                                                   mp / mc))


if __name__ == "__main__":
    main()
