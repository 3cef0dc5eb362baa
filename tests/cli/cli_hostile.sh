#!/usr/bin/env bash
# Hostile input over every command that reads a trace or a compile log (issue 38, "keep it so"):
# inputs generated here, never stored: truncations of a real-shaped trace, a gzip bomb, deep
# nesting (JSON and ranges), crafted names (quotes, markup, control bytes, 64 KB names), 10^5 of
# each thing that repeats (streams, memory devices, counters, top-level members, compile units).
# Every run must end with exit 0 or 2 (2: a message naming the file) within its time limit, never
# a crash, a signal or exit 1; a full disk (/dev/full) is "No space left on device" with exit 2.
# The sanitizer stage of scripts/test runs this script against the ASan+UBSan build.
# Usage: cli_hostile.sh GPUPROF SOURCE_DIR
set -u
gp=$(cd "$(dirname "$1")" && pwd)/$(basename "$1"); src="$2"
pass=0; fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ex="$src/examples/traces/example_step.json"
limit=${GP_HOSTILE_TIMEOUT:-120}

# run NAME CMD...: exit 0 or 2 in time; with 2 the message names an input or output file.
run() {
  local name="$1"; shift
  local rc
  timeout "$limit" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null; rc=$?
  if [ "$rc" = 0 ]; then pass=$((pass+1)); return; fi
  if [ "$rc" = 2 ] && [ -s "$tmp/err" ]; then pass=$((pass+1)); return; fi
  fail=$((fail+1)); echo "FAIL $name: exit $rc"; head -c 600 "$tmp/err"; echo
}

# ---- the inputs ----
python3 - "$tmp" "$ex" <<'EOF'
import gzip, json, sys
tmp, ex = sys.argv[1], sys.argv[2]
def dump(name, doc):
    with open(f"{tmp}/{name}", "w") as f:
        json.dump(doc, f)
raw = open(ex, "rb").read()
for i, frac in enumerate((0.1, 0.37, 0.5, 0.73, 0.99)):           # truncations
    open(f"{tmp}/trunc{i}.json", "wb").write(raw[: int(len(raw) * frac)])
with gzip.open(f"{tmp}/bomb.json.gz", "wb") as f:                  # 512 MB of spaces, ~0.5 MB
    f.write(b'{"traceEvents": [')
    for _ in range(512):
        f.write(b" " * (1 << 20))
    f.write(b"]}")
open(f"{tmp}/deep_json.json", "w").write('{"traceEvents": ' + "[" * 100000 + "]" * 100000 + "}")
n = 20000                                                          # ranges nested 20,000 deep
dump("deep_ranges.json", {"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": f"op_{d}", "pid": 1, "tid": 1, "ts": d, "dur": 2 * (n - d)}
    for d in range(n)]})
names = ['"quoted"', "<script>alert(1)</script>", "a;b\nc\rd\te", "\u202eevil", "x" * 65536,
         "../../etc/passwd", "\x01\x02\x7f", "%s%n%d"]
ev = []
for i, nm in enumerate(names):
    ev.append({"ph": "X", "cat": "cpu_op", "name": nm, "pid": 1, "tid": 1, "ts": 10 * i, "dur": 5})
    ev.append({"ph": "X", "cat": "kernel", "name": nm, "pid": 0, "tid": 7, "ts": 10 * i + 1,
               "dur": 3, "args": {"device": 0, "stream": 7, "correlation": i + 1, nm: nm}})
dump("names.json", {"traceEvents": ev, "deviceProperties": [{"id": 0, "name": names[1]}]})
N = 100000
ev = []                                                            # 10^5 streams
for i in range(N):
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
               "ts": i, "dur": 1, "args": {"correlation": i + 1}})
    ev.append({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": i + 7, "ts": i + 2,
               "dur": 1, "args": {"device": i % 8, "stream": i + 7, "correlation": i + 1}})
dump("streams.json", {"traceEvents": ev})
dump("memdevs.json", {"traceEvents": [                              # 10^5 memory devices
    {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1,
     "ts": i, "args": {"Device Type": 1, "Device Id": i, "Addr": 1, "Bytes": 64,
                       "Total Allocated": i, "Total Reserved": i}} for i in range(N)]})
dump("counters.json", {"traceEvents": [                             # 10^5 counters
    {"ph": "C", "name": f"c{i}", "pid": 1, "tid": 1, "ts": i, "args": {"v": i}} for i in range(N)]})
with open(f"{tmp}/members.json", "w") as f:                        # 10^5 top-level members
    f.write("{" + "".join(f'"m{i}": {i}, ' for i in range(N)) + '"traceEvents": []}')
with open(f"{tmp}/units.log", "w") as f:                           # 10^5 compile units
    for i in range(N):
        f.write('V1126 10:00:00.000000 1 torch/_dynamo/convert_frame.py:1 '
                '{"dynamo_start": {"stack": []}, "frame_id": %d, "frame_compile_id": 0, '
                '"attempt": 0}\n' % i)
EOF

inputs="trunc0.json trunc1.json trunc2.json trunc3.json trunc4.json bomb.json.gz deep_json.json
deep_ranges.json names.json streams.json memdevs.json counters.json members.json"
for f in $inputs; do
  i="$tmp/$f"
  run "summary $f" "$gp" summary -q "$i"
  run "summary --json $f" "$gp" summary -q --json "$i"
  run "analyze $f" "$gp" analyze -q --json "$i"
  run "ops $f" "$gp" ops -q "$i"
  run "advise $f" "$gp" advise -q "$i"
  run "flame html $f" "$gp" flame -q "$i" -o "$tmp/f.html"
  run "flame folded $f" "$gp" flame -q "$i" -o "$tmp/f.folded"
  run "timeline $f" "$gp" timeline -q "$i" -o "$tmp/t.html"
  run "report $f" "$gp" report -q "$i" -o "$tmp/r.html"
  run "convert $f" "$gp" convert -q "$i" -o "$tmp/c.json"
  run "diff $f" "$gp" diff -q "$ex" "$i"
  rm -f "$tmp"/f.* "$tmp"/t.html "$tmp"/r.html "$tmp"/c.json
done
for f in units.log trunc1.json names.json bomb.json.gz; do
  run "compile $f" "$gp" compile "$tmp/$f"
done

# ---- a full disk: "No space left on device", exit 2 ----
full() { # name cmd...
  local name="$1"; shift
  local rc
  "$@" >/dev/full 2>"$tmp/err"; rc=$?
  if [ "$rc" = 2 ] && grep -c "No space left on device" "$tmp/err" >/dev/null; then
    pass=$((pass+1))
  else
    fail=$((fail+1)); echo "FAIL $name on a full disk: exit $rc"; cat "$tmp/err"
  fi
}
if [ -w /dev/full ]; then
  for c in summary analyze ops advise; do
    full "$c" "$gp" "$c" -q "$ex"
  done
  full "summary --json" "$gp" summary -q --json "$ex"
  full "analyze --json" "$gp" analyze -q --json "$ex"
  full "convert -o -" "$gp" convert -q "$ex" -o -
  full "convert -o /dev/full" "$gp" convert -q "$ex" -o /dev/full
  grep -c "/dev/full" "$tmp/err" >/dev/null || { fail=$((fail+1)); echo "FAIL convert: no file name"; }
  full "flame -o /dev/full" "$gp" flame -q "$ex" --format folded -o /dev/full
  grep -c "/dev/full" "$tmp/err" >/dev/null || { fail=$((fail+1)); echo "FAIL flame: no file name"; }
fi

echo "cli_hostile: $pass passed, $fail failed"
[ "$fail" = 0 ]
