#!/usr/bin/env bash
# Bounded load test on loopback: wrk hammers `gpuprof exporter` (on the fake NVML driver, 8 GPUs)
# for a few seconds, twice; no errors, and the exporter's resident memory stays flat between the
# two runs. Exit 77 (skip) when wrk is not installed. Env: GPUPROF, GP_FAKE_NVML, GP_SOURCE_DIR.
set -euo pipefail
command -v wrk >/dev/null || { echo "wrk not installed: skipping" >&2; exit 77; }
work=$(mktemp -d /tmp/gp_load_XXXXXX)
exp_pid=""
cleanup() {
  [ -n "$exp_pid" ] && kill "$exp_pid" 2>/dev/null && wait "$exp_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
# Under AddressSanitizer freed blocks sit in a quarantine that grows the RSS by design: turn it
# off so "flat memory" means the same in every build (no effect on a normal build).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
GP_NVML_LIBRARY="$GP_FAKE_NVML" \
GP_FAKE_NVML_SCENARIO="$GP_SOURCE_DIR/bench/monitor/eight_gpus.txt" \
  "$GPUPROF" exporter --listen 127.0.0.1:0 --port-file "$work/port" --interval 100ms \
  2>"$work/exporter.log" &
exp_pid=$!
for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || { echo "exporter did not start"; cat "$work/exporter.log"; exit 1; }
port=$(tr -d '\n' < "$work/port")
rss() { awk '/^VmRSS/ {print $2}' "/proc/$exp_pid/status"; }
url="http://127.0.0.1:$port/metrics"
secs=${GP_LOAD_SECONDS:-3}
wrk -t2 -c8 -d"${secs}s" --latency "$url" > "$work/run1.txt"
rss1=$(rss)
wrk -t2 -c8 -d"${secs}s" --latency "$url" > "$work/run2.txt"
rss2=$(rss)
cat "$work/run2.txt"
fail=0
for f in run1 run2; do
  if grep -q "Non-2xx\|Socket errors" "$work/$f.txt"; then
    echo "FAIL: $f had errors"; grep "Non-2xx\|Socket errors" "$work/$f.txt"; fail=1
  fi
  reqs=$(awk '/requests in/ {print $1}' "$work/$f.txt")
  [ "${reqs:-0}" -gt 100 ] || { echo "FAIL: $f served only ${reqs:-0} requests"; fail=1; }
done
growth=$((rss2 - rss1))
echo "exporter RSS after run 1: ${rss1} kB, after run 2: ${rss2} kB (growth ${growth} kB)"
# flat: the second run may not grow the resident set by more than 1 MiB
[ "$growth" -le 1024 ] || { echo "FAIL: RSS grew by ${growth} kB"; fail=1; }
exit $fail
