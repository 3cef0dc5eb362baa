#!/usr/bin/env bash
# `gpuprof top` driven in tmux (send-keys, capture-pane) on the FAKE NVML driver (tests/fakes/nvml:
# tests our code, not a GPU) with scenario top8.txt played 20x fast and short leak windows: the
# panels show the fake's values, the leak trend appears, s sorts, / filters, g picks a GPU, a
# resize redraws, q, SIGTERM and Ctrl-C quit and restore the terminal. Skips (77) without tmux.
# Env: GPUPROF, GP_FAKE_NVML, GP_SOURCE_DIR.
# no pipefail: `screen | grep -q` must take grep's status (with pipefail, grep -q closing the pipe
# early could fail a check through the writer's SIGPIPE)
set -u
command -v tmux >/dev/null || { echo "skip: no tmux"; exit 77; }
work=$(mktemp -d /tmp/gp_tmux_XXXXXX)
sock="$work/tmux.sock"
T() { tmux -S "$sock" "$@"; }
trap 'T kill-server 2>/dev/null; rm -rf "$work"' EXIT
fail=0
expect() { if [ "$2" = 0 ]; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }
screen() { T capture-pane -p -t top; }
# waits up to 10 s for a regular expression on the screen
wait_for() {
  for _ in $(seq 100); do screen | grep -Eq -- "$1" && return 0; sleep 0.1; done
  screen >&2; return 1
}

cat >"$work/run.sh" <<SH
export GP_NVML_LIBRARY="$GP_FAKE_NVML" GP_FAKE_NVML_SPEED=20 TERM=xterm-256color
export GP_FAKE_NVML_SCENARIO="$GP_SOURCE_DIR/tests/monitor/scenarios/top8.txt"
export GP_PROC_ROOT="$GP_SOURCE_DIR/tests/monitor/top/proc"
stty -a | grep -o -- '-\?echo ' | head -1 > "$work/stty.before"
"$GPUPROF" top --interval 200ms --set leak_warmup_minutes=0 --set leak_min_duration_minutes=0.05 \
  --set leak_window_minutes=0.2 --set leak_min_r2=0.5 --set leak_spike_mb=100000
echo "EXIT=\$?"
stty -a | grep -o -- '-\?echo ' | head -1 > "$work/stty.after"
sleep 30
SH
T new-session -d -s top -x 100 -y 30 "bash $work/run.sh"

expect "the header comes up" $(wait_for '^gpuprof top  8 GPUs'; echo $?)
expect "GPU 0's figures" $(wait_for '^  0 H100 80G  97% .* 80% +64G +71C 650/700W'; echo $?)
expect "GPU 7 lost" $(wait_for '^  7 .*GPU LOST'; echo $?)
expect "process 4242 with its /proc figures" $(wait_for '4242 root +0 compute +40960MiB +93'; echo $?)

T send-keys -t top s   # GPU MEM -> SM%
expect "s sorts by SM%" $(wait_for 'SM%▼'; echo $?)
expect "  SM% order: 93, 85, 61 first" \
  $(screen | grep -E '^ +[0-9]+ ' | grep -E 'compute|graphics' | head -3 | awk '{print $6}' | tr '\n' ' ' | grep -q '^93 85 61 $'; echo $?)
T send-keys -t top / x o r g Enter
expect "/ filters: only Xorg is left" \
  $(wait_for 'filter "xorg"' && [ "$(screen | grep -cE ' (compute|graphics) ')" = 1 ] && screen | grep -q 'Xorg :0'; echo $?)
T send-keys -t top / Escape
expect "Esc clears the filter" $(sleep 0.5; [ "$(screen | grep -cE ' (compute|graphics) ')" -ge 7 ]; echo $?)
T send-keys -t top g
expect "g shows GPU 0 alone, as a panel" $(wait_for 'GPU 0 only' && screen | grep -q '^GPU 0  NVIDIA H100'; echo $?)
T send-keys -t top g g g g g
expect "g again: GPU 5, its leak trend with the rate" $(wait_for '^GPU 5 .*LEAK \+[0-9]+ MiB/h'; echo $?)
T send-keys -t top h
expect "h shows the help" $(wait_for 'gpuprof top: keys'; echo $?)
T send-keys -t top x
T set-option -t top window-size manual && T resize-window -t top -x 160 -y 50
expect "a resize redraws at the new size" \
  $(sleep 1; wait_for '^ util {75}mem' && [ "$(screen | wc -l)" = 50 ]; echo $?)
T send-keys -t top q
expect "q quits with 0" $(wait_for '^EXIT=0'; echo $?)
# run.sh writes stty.after just after it prints EXIT=: wait for the file (a loaded CI host read it
# before it was written)
for _ in $(seq 100); do [ -s "$work/stty.after" ] && break; sleep 0.1; done
expect "the terminal is restored (the frame is gone, echo back on)" \
  $(! screen | grep -q 'gpuprof top  8 GPUs' && [ "$(cat "$work/stty.before")" = "$(cat "$work/stty.after")" ]; echo $?)

# SIGTERM: the terminal is restored and top exits 0
cat >"$work/run2.sh" <<SH
export GP_NVML_LIBRARY="$GP_FAKE_NVML" TERM=xterm-256color
export GP_FAKE_NVML_SCENARIO="$GP_SOURCE_DIR/tests/monitor/scenarios/top8.txt"
bash -c 'echo \$\$ > "$work/pid"; exec "$GPUPROF" top'
echo "EXIT=\$?"
sleep 30
SH
T new-session -d -s top2 -x 100 -y 30 "bash $work/run2.sh"
for _ in $(seq 100); do T capture-pane -p -t top2 | grep -q '^gpuprof top' && break; sleep 0.1; done
kill -TERM "$(cat "$work/pid")"
for _ in $(seq 50); do T capture-pane -p -t top2 | grep -q '^EXIT=' && break; sleep 0.1; done
expect "SIGTERM: exit 0, the frame gone" \
  $(T capture-pane -p -t top2 | grep -q '^EXIT=0' && ! T capture-pane -p -t top2 | grep -q '^gpuprof top'; echo $?)

# Ctrl-C (SIGINT from the terminal): the same
T new-session -d -s top3 -x 100 -y 30 "bash $work/run2.sh"
for _ in $(seq 100); do T capture-pane -p -t top3 | grep -q '^gpuprof top' && break; sleep 0.1; done
T send-keys -t top3 C-c
for _ in $(seq 50); do T capture-pane -p -t top3 | grep -q '^EXIT=' && break; sleep 0.1; done
expect "Ctrl-C: exit 0, the frame gone" \
  $(T capture-pane -p -t top3 | grep -q '^EXIT=0' && ! T capture-pane -p -t top3 | grep -q '^gpuprof top'; echo $?)
exit $fail
