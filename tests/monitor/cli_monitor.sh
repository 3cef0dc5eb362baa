#!/usr/bin/env bash
# `gpuprof monitor` (and the exporter's command line) end to end: no driver -> one line and exit 2 (the exporter: gpu_up 0); the table, JSON lines and CSV on
# the fake NVML driver (tests/fakes/nvml: tests our code, not a GPU); bad configuration -> exit 2
# naming the line; SIGTERM / SIGINT -> clean exit 0. Env: GPUPROF, GP_FAKE_NVML, GP_SOURCE_DIR.
set -uo pipefail
work=$(mktemp -d /tmp/gp_cli_XXXXXX)
trap 'rm -rf "$work"' EXIT
fail=0
expect() { # description, condition result
  if [ "$2" = 0 ]; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi
}

# no driver: exactly one line on stderr, nothing on stdout, exit 2
GP_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 "$GPUPROF" monitor >"$work/out" 2>"$work/err"
rc=$?
expect "no driver exits 2" $([ $rc = 2 ]; echo $?)
expect "no driver prints one line" $([ "$(wc -l < "$work/err")" = 1 ] && [ ! -s "$work/out" ]; echo $?)
expect "no driver line says so" $(grep -q "^gpuprof monitor: no NVIDIA driver found: " "$work/err"; echo $?)

"$GPUPROF" monitor --help >"$work/out"
expect "--help exits 0" $?

export GP_NVML_LIBRARY="$GP_FAKE_NVML"
export GP_FAKE_NVML_SCENARIO="$GP_SOURCE_DIR/tests/monitor/scenarios/basic.txt"

"$GPUPROF" monitor --count 2 --interval 100ms >"$work/table" 2>"$work/err"
expect "table exits 0" $?
expect "table has a row for GPU 0 with its values" \
  $(grep -Eq '^ +0 +42 +17 +10240 +81920 +61 +252 +400 +1410 +1593 +55 +2 power$' "$work/table"; echo $?)
expect "table shows n/a fan of GPU 1 as -" $(grep -Eq '^ +1 +3 .* - +0 none$' "$work/table"; echo $?)
expect "table has two rounds" $([ "$(grep -c '^ *0 ' "$work/table")" = 2 ]; echo $?)

"$GPUPROF" monitor --count 1 --json --level detailed >"$work/json" 2>"$work/err"
expect "json exits 0" $?
python3 - "$work/json" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
samples = [r for r in rows if r.get("type") == "sample"]
events = [r["event"] for r in rows if "event" in r]
assert len(samples) == 2, samples
g0 = samples[0]
assert g0["gpu"] == 0 and g0["mem_used_bytes"] == 10737418240 and g0["power_watts"] == 251.5, g0
assert "fan_percent" not in samples[1], samples[1]   # not supported: absent, not 0
assert events[0] == "started" and events[-1] == "stopped", events
PY
expect "json lines parse and hold the values" $?

"$GPUPROF" monitor --count 1 --csv >"$work/csv" 2>"$work/err"
expect "csv exits 0" $?
python3 - "$work/csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 2, rows
assert rows[0]["mem_used_bytes"] == "10737418240", rows[0]
assert rows[1]["fan_percent"] == "", rows[1]
PY
expect "csv parses, empty cell for n/a" $?

printf 'level: standard\nsampling_interval_ms: fast\n' > "$work/bad.yaml"
"$GPUPROF" monitor --config "$work/bad.yaml" >"$work/out" 2>"$work/err"
rc=$?
expect "bad config exits 2" $([ $rc = 2 ]; echo $?)
expect "bad config names file and line" \
  $(grep -q "bad.yaml:2: sampling_interval_ms: 'fast' is not a number" "$work/err"; echo $?)

"$GPUPROF" monitor --set nope=1 >"$work/out" 2>"$work/err"
expect "unknown --set key exits 2" $([ $? = 2 ]; echo $?)

# profiling mode: samples as counter tracks in a Chrome/Kineto trace
"$GPUPROF" monitor --count 2 --interval 200ms -o "$work/trace.json" >"$work/out" 2>"$work/err"
expect "-o exits 0" $?
python3 - "$work/trace.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
c = [e for e in t["traceEvents"] if e.get("ph") == "C"]
temp0 = [e for e in c if e["name"] == "gpu0.temp_celsius"]
assert len(temp0) >= 2 and all(e["args"]["value"] == 61 and e["pid"] == 0 for e in temp0), temp0
assert any(e["name"] == "gpu1.util_gpu" and e["pid"] == 1 for e in c)
assert not any(e["name"] == "gpu1.fan_percent" for e in c)  # unsupported: no series
PY
expect "-o writes counter tracks per GPU" $?

# a GPU lost mid-run (fake clock x10: lost at 0.5 s) shows as lost, the other goes on
GP_FAKE_NVML_SPEED=10 GP_FAKE_NVML_SCENARIO="$GP_SOURCE_DIR/tests/monitor/scenarios/lost.txt" \
  "$GPUPROF" monitor --count 3 --interval 400ms >"$work/lost" 2>&1
expect "lost run exits 0" $?
expect "lost GPU row" $(grep -Eq '^ +1 +lost \(GPU_IS_LOST\)$' "$work/lost"; echo $?)
expect "device_lost event" $(grep -q "device_lost: gpu1" "$work/lost"; echo $?)
expect "GPU 0 still sampled" $([ "$(grep -Ec '^ +0 +30 ' "$work/lost")" = 3 ]; echo $?)

for sig in TERM INT; do
  "$GPUPROF" monitor --interval 100ms >"$work/sig" 2>&1 &
  pid=$!
  for _ in $(seq 1 200); do grep -q '^ *0 ' "$work/sig" && break; sleep 0.1; done
  kill -$sig $pid
  rc=124
  for _ in $(seq 1 200); do kill -0 $pid 2>/dev/null || { wait $pid; rc=$?; break; }; sleep 0.1; done
  [ $rc = 124 ] && kill -9 $pid
  expect "SIG$sig exits cleanly with 0" $([ $rc = 0 ]; echo $?)
  expect "SIG$sig prints the stopped event" $(grep -q "stopped: stopped after" "$work/sig"; echo $?)
done
# the exporter's command line: no driver, bad address, clean exit on SIGTERM
# without a driver it serves anyway: gpuprof_gpu_up 0 and /healthz 503 "unavailable" (issue 35)
GP_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 "$GPUPROF" exporter --listen 127.0.0.1:0 \
  --port-file "$work/nd_port" --hostname nodriver >"$work/out" 2>"$work/err" &
pid=$!
for _ in $(seq 1 200); do [ -s "$work/nd_port" ] && break; sleep 0.1; done
expect "exporter without a driver serves (writes its port)" $([ -s "$work/nd_port" ]; echo $?)
python3 - "$(cat "$work/nd_port" 2>/dev/null)" <<'PY'
import json, sys, urllib.error, urllib.request
base = "http://127.0.0.1:%s" % sys.argv[1]
text = urllib.request.urlopen(base + "/metrics", timeout=10).read().decode()
assert 'gpuprof_gpu_up{hostname="nodriver"} 0\n' in text, text
assert "gpuprof_gpu_utilization_ratio" not in text, text
try:
    urllib.request.urlopen(base + "/healthz", timeout=10)
    raise SystemExit("healthz answered 200 without a driver")
except urllib.error.HTTPError as e:
    assert e.code == 503, e.code
    h = json.loads(e.read())
    assert h["status"] == "unavailable" and "no NVIDIA driver found" in h["reason"], h
PY
expect "... /metrics says gpuprof_gpu_up 0 and /healthz is 503 unavailable" $?
expect "... and says why on stderr" $(grep -q "no NVIDIA driver found.*serving gpuprof_gpu_up 0" "$work/err"; echo $?)
kill -TERM $pid
rc=124
for _ in $(seq 1 200); do kill -0 $pid 2>/dev/null || { wait $pid; rc=$?; break; }; sleep 0.1; done
[ $rc = 124 ] && kill -9 $pid
expect "exporter without a driver exits 0 on SIGTERM" $([ $rc = 0 ]; echo $?)
"$GPUPROF" exporter --listen nope >"$work/out" 2>"$work/err"
expect "exporter with a bad --listen exits 2" $([ $? = 2 ] && grep -q "expected HOST:PORT" "$work/err"; echo $?)
"$GPUPROF" exporter --listen 127.0.0.1:0 --port-file "$work/port" 2>"$work/err" &
pid=$!
for _ in $(seq 1 200); do [ -s "$work/port" ] && break; sleep 0.1; done
expect "exporter writes its port" $([ -s "$work/port" ]; echo $?)
kill -TERM $pid
rc=124
for _ in $(seq 1 200); do kill -0 $pid 2>/dev/null || { wait $pid; rc=$?; break; }; sleep 0.1; done
[ $rc = 124 ] && kill -9 $pid
expect "exporter exits 0 on SIGTERM" $([ $rc = 0 ]; echo $?)
exit $fail
