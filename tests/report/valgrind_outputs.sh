#!/bin/sh
# Memcheck over the commands that write pages and data (timeline, report, flame, ops, summary,
# analyze, diff) on the bundled example and on a trace with many distinct kernel arguments: any
# read of uninitialised memory or invalid access fails the test. ASan does not see uninitialised
# reads; this caught the timeline side block ordering its objects by garbage use counts, which
# made pages differ from run to run. Exit 77 (skip) without valgrind.
# Usage: valgrind_outputs.sh GPUPROF SOURCE_DIR WORK_DIR
set -u
gp=$1; src=$2; work=$3
command -v valgrind >/dev/null 2>&1 || { echo "valgrind not installed: skipping"; exit 77; }
rm -rf "$work" && mkdir -p "$work" || exit 1
ex="$src/examples/traces/example_step.json"
# 40 kernels with distinct grids: more distinct argument objects than any first allocation holds.
python3 - "$work/kernels.json" <<'PY' || exit 1
import json, sys
ev = []
for i in range(40):
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
               "ts": 10 * i, "dur": 3, "args": {"correlation": 100 + i}})
    ev.append({"ph": "X", "cat": "kernel", "name": "k%d" % (i % 7), "pid": 0, "tid": 7,
               "ts": 10 * i + 4, "dur": 5 + i % 3,
               "args": {"correlation": 100 + i, "device": 0, "stream": 7, "grid": [i + 1, 1, 1],
                        "block": [128, 1, 1], "registers per thread": 32 + i % 5}})
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
PY
fails=0
run() { # name args...
  name=$1; shift
  if valgrind -q --error-exitcode=3 --leak-check=no "$gp" "$@" >"$work/$name.out" 2>"$work/$name.err"; then
    :
  else
    echo "FAIL: $name (exit $?)"; head -30 "$work/$name.err"; fails=$((fails+1))
  fi
}
for t in "$ex" "$work/kernels.json"; do
  b=$(basename "$t" .json)
  run "timeline_$b" timeline -q "$t" -o "$work/$b.timeline.html"
  run "report_$b" report -q "$t" -o "$work/$b.report.html"
  run "flame_$b" flame -q "$t" -o "$work/$b.flame.html"
  run "ops_$b" ops --json "$t"
  run "summary_$b" summary --json "$t"
  run "analyze_$b" analyze --json -q "$t"
done
run diff diff "$ex" "$work/kernels.json" --json
# The same input gives the same page, byte for byte.
"$gp" timeline -q "$work/kernels.json" -o "$work/again.html" >/dev/null 2>&1
cmp -s "$work/kernels.timeline.html" "$work/again.html" || { echo "FAIL: timeline differs between runs"; fails=$((fails+1)); }
[ "$fails" = 0 ] && echo "valgrind: no error in any output command"
[ "$fails" = 0 ]
