#!/usr/bin/env bash
# Issue 33.2, srun without MPI: `srun -n K gpuprof analyze JOB_DIR` EMULATED, not Slurm itself
# (Slurm does not run here): K copies of gpuprof are started by hand with the variables srun
# gives each task (SLURM_PROCID, SLURM_STEP_NUM_TASKS, SLURM_NTASKS, SLURM_JOB_ID, SLURM_STEP_ID)
# and no PMI variables, so they meet through partial results in a directory (docs/decisions/
# srun.md). Checks: task 0 prints the one-process bytes (text and JSON, K = 2, 3, 8), the other
# tasks print nothing, the meeting directory is removed; a missing task is a timeout naming it;
# a task's bad rank file is exit 2 naming the file; srun's variables in a batch script (no
# SLURM_STEP_ID) leave gpuprof one process.
# Usage: srun_emulated.sh GPUPROF SHARED_DIR   (exit 77: the shared traces absent)
set -u
gp="$1"; shared="$2"
job="$shared/traces/multirank8_dlrm_v100"
[ -d "$job" ] || { echo "SKIP: $job absent"; exit 77; }
job=$(cd "$job" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
unset PMIX_RANK PMI_RANK PMI_FD PMI_SIZE PMIX_SIZE OMPI_COMM_WORLD_SIZE GPUPROF_NO_MPI
pass=0; fail=0
ok() { pass=$((pass+1)); }
ko() { fail=$((fail+1)); echo "FAIL $*"; }
"$gp" analyze "$job" > "$tmp/one.txt" || { echo "FAIL one-process analyze"; exit 1; }
"$gp" analyze --json "$job" > "$tmp/one.json" || { echo "FAIL one-process analyze --json"; exit 1; }
# emulate K K_STEP DIR_JOB OUT [gpuprof args...]: tasks 1..K-1 in the background, task 0 last
emulate() {
  local k="$1" step="$2" dir="$3" out="$4"; shift 4
  local pids=()
  for ((i = 1; i < k; i++)); do
    SLURM_PROCID=$i SLURM_STEP_NUM_TASKS=$k SLURM_NTASKS=$k SLURM_JOB_ID=4242 SLURM_STEP_ID=$step \
      timeout 300 "$gp" analyze "$@" "$dir" > "$tmp/task$i.out" 2> "$tmp/task$i.err" &
    pids+=($!)
  done
  SLURM_PROCID=0 SLURM_STEP_NUM_TASKS=$k SLURM_NTASKS=$k SLURM_JOB_ID=4242 SLURM_STEP_ID=$step \
    timeout 300 "$gp" analyze "$@" "$dir" > "$out" 2> "$tmp/task0.err"
  local rc=$?
  for p in "${pids[@]}"; do wait "$p"; done
  return $rc
}
export GPUPROF_SRUN_DIR="$tmp/meet"
step=0
for k in 2 3 8; do
  for fmt in txt json; do
    step=$((step+1)); flag=(); [ "$fmt" = json ] && flag=(--json)
    if emulate "$k" "$step" "$job" "$tmp/srun$k.$fmt" "${flag[@]}"; then
      if cmp -s "$tmp/one.$fmt" "$tmp/srun$k.$fmt"; then ok; else ko "K=$k $fmt: output differs"; fi
      quiet=1; for ((i = 1; i < k; i++)); do [ -s "$tmp/task$i.out" ] && quiet=0; done
      [ "$quiet" = 1 ] && ok || ko "K=$k $fmt: a task other than 0 printed"
      [ ! -e "$tmp/meet" ] && ok || ko "K=$k $fmt: the meeting directory was left: $(ls "$tmp/meet")"
    else
      ko "K=$k $fmt: exit $?"; head -3 "$tmp/task0.err"
    fi
  done
done
# the default meeting directory: JOB_DIR/.gpuprof-srun-JOBID.STEPID, removed after
unset GPUPROF_SRUN_DIR
mkdir "$tmp/job"; ln -s "$job"/* "$tmp/job/"
if emulate 2 77 "$tmp/job" "$tmp/def.txt" && cmp -s "$tmp/one.txt" "$tmp/def.txt" \
   && [ -z "$(ls -A "$tmp/job" | grep -F .gpuprof-srun)" ]; then ok; else ko "default meeting directory"; fi
export GPUPROF_SRUN_DIR="$tmp/meet"
# task 1 never starts: task 0 gives up after GPUPROF_SRUN_TIMEOUT naming it
out=$(SLURM_PROCID=0 SLURM_STEP_NUM_TASKS=2 SLURM_NTASKS=2 SLURM_JOB_ID=4242 SLURM_STEP_ID=90 \
      GPUPROF_SRUN_TIMEOUT=0.5 timeout 60 "$gp" analyze "$job" 2>&1); rc=$?
if [ "$rc" = 2 ] && printf '%s' "$out" | grep -F "srun task(s) 1 of 2 wrote no partial result" >/dev/null \
   && [ ! -e "$tmp/meet" ]; then ok; else ko "missing task: exit $rc: $out"; fi
# a rank file without distributedInfo.rank: exit 2 from task 0, the file named
mkdir "$tmp/nodist"; ln -s "$job"/worker0* "$tmp/nodist/"
printf '{"traceEvents": [{"ph": "X", "name": "x", "ts": 1, "dur": 1, "pid": 1, "tid": 1}]}' > "$tmp/nodist/zz.json"
emulate 2 91 "$tmp/nodist" "$tmp/nodist.out"; rc=$?
if [ "$rc" = 2 ] && grep -F "zz.json: no distributedInfo.rank" "$tmp/task0.err" >/dev/null; then ok
else ko "no distributedInfo: exit $rc: $(head -3 "$tmp/task0.err")"; fi
# a batch script's variables (SLURM_PROCID=0, SLURM_NTASKS, no srun step): one process, no waiting
out=$(SLURM_PROCID=0 SLURM_NTASKS=4 SLURM_JOB_ID=4242 timeout 120 "$gp" analyze "$job" 2>&1) \
  && [ "$out" = "$(cat "$tmp/one.txt")" ] && ok || ko "batch script variables: not one process"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
