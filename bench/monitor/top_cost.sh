#!/usr/bin/env bash
# gpuprof top's own cost (issue 39: <= 1 % of one core and <= 16 MiB RSS at 1 Hz with 8 GPUs and
# 200 processes), on the FAKE NVML driver: bench/monitor/eight_gpus.txt (32 processes) plus 168
# whose pids are `sleep` processes this script starts (so those rows read a real /proc/PID; the 32
# of the file read a missing one), top running in a
# detached tmux terminal of 200x60 for SECONDS (default 60). Prints CPU % of one core and peak RSS.
# usage: bench/monitor/top_cost.sh BUILD_DIR [SECONDS]
set -euo pipefail
build=${1:?usage: top_cost.sh BUILD_DIR [SECONDS]}
secs=${2:-60}
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/gp_topcost_XXXXXX)
sock="$work/tmux.sock"
sleepers=()
cleanup() {
  tmux -S "$sock" kill-server 2>/dev/null || true
  for p in "${sleepers[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
cp "$src/bench/monitor/eight_gpus.txt" "$work/s.txt"
for i in $(seq 0 167); do
  sleep 3600 &
  sleepers+=($!)
  echo "proc $((i % 8)) $! compute $(( (i + 1) * 16777216 )) $((i % 100))" >>"$work/s.txt"
done
echo "processes: $(grep -c '^proc ' "$work/s.txt")"
cat >"$work/run.sh" <<SH
export GP_NVML_LIBRARY="$build/fakes/nvml/libnvidia-ml.so.1" GP_FAKE_NVML_SCENARIO="$work/s.txt"
export TERM=xterm-256color
echo \$\$ > "$work/pid"
exec "$build/gpuprof" top --interval 1s
SH
tmux -S "$sock" new-session -d -x 200 -y 60 "bash $work/run.sh"
sleep 3 # start-up and the first frames are not the steady state
pid=$(cat "$work/pid")
hz=$(getconf CLK_TCK)
t0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
sleep "$secs"
t1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
tmux -S "$sock" capture-pane -p | grep -c ' compute ' | sed 's/^/process rows on screen: /'
awk -v a="$t0" -v b="$t1" -v hz="$hz" -v s="$secs" -v hwm="$hwm" 'BEGIN {
  printf "cpu: %.2f %% of one core over %d s\npeak rss: %.1f MiB\n", 100 * (b - a) / hz / s, s, hwm / 1024 }'
