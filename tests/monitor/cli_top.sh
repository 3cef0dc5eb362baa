#!/usr/bin/env bash
# `gpuprof top --once` and the monitor's process rows end to end on the FAKE NVML driver
# (tests/fakes/nvml: tests our code, not a GPU) with the fake /proc of tests/monitor/top/proc:
# frames at 80x24 and 160x50 against golden files (GP_UPDATE_GOLDEN=1 rewrites them), the fake's
# figures on screen, --gpus, --mono, bad options, no driver; monitor --json / --csv --processes.
# Env: GPUPROF, GP_FAKE_NVML, GP_SOURCE_DIR.
set -uo pipefail
work=$(mktemp -d /tmp/gp_top_XXXXXX)
trap 'rm -rf "$work"' EXIT
fail=0
expect() { # description, condition result
  if [ "$2" = 0 ]; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi
}
golden="$GP_SOURCE_DIR/tests/monitor/top/golden"

# no driver: one line, exit 2
GP_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 "$GPUPROF" top --once >"$work/out" 2>"$work/err"
expect "no driver exits 2" $([ $? = 2 ]; echo $?)
expect "no driver prints one line" $([ "$(wc -l < "$work/err")" = 1 ] && [ ! -s "$work/out" ]; echo $?)
"$GPUPROF" top --help >"$work/out"
expect "--help exits 0 and names the keys" $(grep -q "/ filter by text" "$work/out"; echo $?)
"$GPUPROF" top --once --size 80 2>"$work/err"
expect "bad --size exits 2" $([ $? = 2 ] && grep -q -- "--size '80'" "$work/err"; echo $?)
"$GPUPROF" top --once --gpus 0,x 2>"$work/err"
expect "bad --gpus exits 2" $([ $? = 2 ]; echo $?)

export GP_NVML_LIBRARY="$GP_FAKE_NVML"
export GP_FAKE_NVML_SCENARIO="$GP_SOURCE_DIR/tests/monitor/scenarios/top8.txt"
export GP_PROC_ROOT="$GP_SOURCE_DIR/tests/monitor/top/proc"

"$GPUPROF" top </dev/null >"$work/out" 2>"$work/err"
expect "top without a terminal exits 2 and points at --once" \
  $([ $? = 2 ] && grep -q -- "--once" "$work/err"; echo $?)

for size in 80x24 160x50; do
  "$GPUPROF" top --once --size $size >"$work/$size.txt" 2>"$work/err"
  expect "--once $size exits 0" $?
  [ "${GP_UPDATE_GOLDEN:-}" = 1 ] && cp "$work/$size.txt" "$golden/once_$size.txt"
  expect "--once $size matches its golden" $(diff -u "$golden/once_$size.txt" "$work/$size.txt" >&2; echo $?)
  w=${size%x*}; h=${size#*x}
  expect "--once $size has $h lines of at most $w columns" \
    $(python3 -c "import sys; l=open(sys.argv[1],encoding='utf-8').read().split('\n')[:-1]; sys.exit(not (len(l)==$h and max(map(len,l))<=$w))" "$work/$size.txt"; echo $?)
done
s="$work/80x24.txt"
# the scenario's figures (tests/monitor/scenarios/top8.txt), read off the screen
expect "GPU 0: 97 %, 64 GiB used of 80 (80 %), 71 C, 650/700 W, 1980 MHz" \
  $(grep -Eq '^  0 H100 80G  97% .* 80% +64G +71C 650/700W 1980MHz  30% none$' "$s"; echo $?)
expect "GPU 2's fan NVML does not report: n/a, not 0" $(grep -Eq '^  2 .* n/a none$' "$s"; echo $?)
expect "GPU 3 thermal throttling" $(grep -Eq '^  3 .* 89C .*HW-THERM$' "$s"; echo $?)
expect "GPU 7 lost" $(grep -Eq '^  7 .*GPU LOST' "$s"; echo $?)
expect "process 4242 with its /proc figures" \
  $(grep -Eq '^ +4242 root +0 compute +40960MiB +93 +15\.0 +10MiB python train\.py' "$s"; echo $?)
expect "a process absent from /proc: n/a" $(grep -Eq '^ +1003 n/a +2 compute +4096MiB +n/a +n/a +n/a n/a$' "$s"; echo $?)
expect "events: XID 79, the lost GPU, throttling" \
  $(grep -q "XID 79" "$s" && grep -q "device_lost" "$s" && grep -q "throttle" "$s"; echo $?)
"$GPUPROF" top --once --size 100x40 --gpus 0,3 >"$work/g.txt"
expect "--gpus 0,3 shows those two and their processes only" \
  $(grep -q "^GPU 0 " "$work/g.txt" && grep -q "^GPU 3 " "$work/g.txt" && ! grep -q "^GPU 1 " "$work/g.txt" \
    && grep -q " 1004 " "$work/g.txt" && ! grep -q " 1002 " "$work/g.txt"; echo $?)
"$GPUPROF" top --once --mono --size 80x24 >"$work/mono.txt"
expect "--mono --once is the same text" $(cmp -s "$work/mono.txt" "$s"; echo $?)
"$GPUPROF" top --once --size 30x5 >"$work/small.txt"
expect "a screen too small says so" $(grep -q "^terminal 30x5: top needs 40x10$" "$work/small.txt"; echo $?)

# the monitor's process rows
"$GPUPROF" monitor --count 1 --json --level detailed >"$work/json" 2>"$work/err"
expect "monitor --json exits 0" $?
python3 - "$work/json" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
p = {r["pid"]: r for r in rows if r.get("type") == "process"}
assert len(p) == 8, p
a = p[4242]
assert (a["gpu"], a["process_type"], a["gpu_mem_bytes"], a["sm_util"], a["user"]) == \
    (0, "compute", 42949672960, 93, "root"), a
assert a["command"] == "python train.py --epochs 10" and abs(a["cpu_percent"] - 15.0) < 1e-9, a
assert p[1003]["sm_util"] is None and p[1003]["cpu_percent"] is None and p[1003]["rss_bytes"] is None
assert p[4343]["process_type"] == "graphics"
PY
expect "monitor --json carries the process rows" $?
"$GPUPROF" monitor --count 1 --csv --processes --level detailed >"$work/csv" 2>"$work/err"
expect "monitor --csv --processes exits 0" $?
python3 - "$work/csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 8, rows
r = [x for x in rows if x["pid"] == "4343"][0]
assert (r["gpu"], r["type"], r["gpu_mem_bytes"], r["sm_util"], r["user"], r["command"]) == \
    ("6", "graphics", "268435456", "", "4000000", "/usr/lib/xorg/Xorg :0"), r
PY
expect "monitor --csv --processes: one row per process" $?
"$GPUPROF" monitor --count 1 --processes 2>"$work/err"
expect "--processes without --csv exits 2" $([ $? = 2 ]; echo $?)
"$GPUPROF" monitor --count 1 --interval 100ms >"$work/table" 2>"$work/err"
expect "monitor table lists the processes" \
  $(grep -Eq '^  p +0 +4242 root +compute +40960 .* python train\.py --epochs 10$' "$work/table"; echo $?)
exit $fail
