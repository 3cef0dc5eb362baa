#!/usr/bin/env bash
# bench/speed_vs_commit.sh: `gpuprof analyze --json` and `gpuprof summary` of this build against the
# build of another commit (issue 37: "no slower than 14676f3"), on the two replicated traces of the
# issue, alternating the two binaries run by run; prints each side's median wall time and the ratio
# (this build / base, < 1 is faster) of the wall time and of the CPU time (user + system, which
# the neighbours of a shared machine disturb less). Ratios, not absolute times.
#
#   bench/speed_vs_commit.sh [BASE_REV] [CUR_BUILD_DIR] [RUNS]
#
# BASE_REV (default 14676f3) is built RelWithDebInfo in a git worktree under /tmp; CUR_BUILD_DIR
# (default build) must hold a built gpuprof. The traces are made in a temporary folder with
# ../shared/tools/replicate_trace.py (never committed): modern_h100_timesformer (Python stacks) x10
# and large_v100_nccl x7. GP_BENCH_KEEP=DIR keeps (and reuses) the traces and the base build in DIR;
# GP_BASE_CLI / GP_CUR_CLI name the two binaries directly (e.g. a copy of the build before a change).
# RUNS (default 7) runs of each binary per command, alternating, after one untimed warm-up each.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
base_rev=${1:-14676f3}
cur_build=$(cd "${2:-$src/build}" && pwd)
runs=${3:-7}
shared=${GP_SHARED:-$src/../shared}
cur_cli=${GP_CUR_CLI:-$cur_build/gpuprof}
[[ -x $cur_cli ]] || { echo "speed_vs_commit: no $cur_cli (build it first)" >&2; exit 2; }

if [[ -n ${GP_BENCH_KEEP:-} ]]; then
  work=$GP_BENCH_KEEP
  mkdir -p "$work"
  cleanup() { git -C "$src" worktree prune >/dev/null 2>&1 || true; }
else
  work=$(mktemp -d /tmp/gp_speed_XXXXXX)
  cleanup() {
    git -C "$src" worktree remove --force "$work/base-src" >/dev/null 2>&1 || true
    rm -rf "$work"
  }
fi
trap cleanup EXIT

# find_cli BUILD: the gpuprof binary of a build folder (it moved from src/cli/ to the top).
find_cli() {
  local p
  for p in "$1/gpuprof" "$1/src/cli/gpuprof"; do
    [[ -x $p ]] && { echo "$p"; return; }
  done
  return 0 # none: the caller builds it (a failing status would stop the script under set -e)
}
base_cli=${GP_BASE_CLI:-$(find_cli "$work/base-build")}
if [[ -z $base_cli ]]; then
  echo "speed_vs_commit: building $base_rev in $work/base-build" >&2
  rm -rf "$work/base-src"
  git -C "$src" worktree prune
  git -C "$src" worktree add --detach "$work/base-src" "$base_rev" >/dev/null 2>&1
  cmake -S "$work/base-src" -B "$work/base-build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGP_BUILD_TESTS=OFF -DGP_BUILD_BENCH=OFF -DGP_BUILD_CUDA_EXAMPLES=OFF >/dev/null
  nice cmake --build "$work/base-build" -j2 --target gpuprof_cli >/dev/null 2>&1 ||
    nice cmake --build "$work/base-build" -j2 >/dev/null
  base_cli=$(find_cli "$work/base-build")
fi

h100=$work/h100_x10.json
v100=$work/v100_x7.json
[[ -s $h100 ]] || python3 "$shared/tools/replicate_trace.py" \
  "$shared/traces/modern_h100_timesformer.json.gz" 10 "$h100"
[[ -s $v100 ]] || python3 "$shared/tools/replicate_trace.py" \
  "$shared/traces/large_v100_nccl.json.gz" 7 "$v100"

# one_run CLI ARGS...: "WALL CPU USER SYS" seconds of one run (CPU = user + system; output
# discarded), to the microsecond: GNU time's 10 ms steps were a tenth of the differences measured.
# User and system apart tell computing from page faults and unmapping (on timesformer x10 the
# gap to 14676f3 was all user time: docs/performance.md, "eighth pass").
one_run() {
  python3 -c '
import resource, subprocess, sys, time
t0 = time.perf_counter()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
w = time.perf_counter() - t0
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.4f %.4f %.4f %.4f" % (w, r.ru_utime + r.ru_stime, r.ru_utime, r.ru_stime))' "$@"
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# compare LABEL ARGS...: alternates base and current on `gpuprof ARGS`; medians of wall and CPU.
compare() {
  local label=$1
  shift
  local bt=() ct=() i
  "$base_cli" "$@" >/dev/null
  "$cur_cli" "$@" >/dev/null
  for ((i = 0; i < runs; i++)); do
    if ((i % 2)); then
      ct+=("$(one_run "$cur_cli" "$@")")
      bt+=("$(one_run "$base_cli" "$@")")
    else
      bt+=("$(one_run "$base_cli" "$@")")
      ct+=("$(one_run "$cur_cli" "$@")")
    fi
  done
  local bw cw bc cc bu cu bs cs
  bw=$(printf '%s\n' "${bt[@]}" | cut -d' ' -f1 | median)
  cw=$(printf '%s\n' "${ct[@]}" | cut -d' ' -f1 | median)
  bc=$(printf '%s\n' "${bt[@]}" | cut -d' ' -f2 | median)
  cc=$(printf '%s\n' "${ct[@]}" | cut -d' ' -f2 | median)
  bu=$(printf '%s\n' "${bt[@]}" | cut -d' ' -f3 | median)
  cu=$(printf '%s\n' "${ct[@]}" | cut -d' ' -f3 | median)
  bs=$(printf '%s\n' "${bt[@]}" | cut -d' ' -f4 | median)
  cs=$(printf '%s\n' "${ct[@]}" | cut -d' ' -f4 | median)
  printf '%-26s wall base %.3f s cur %.3f s ratio %.3f | CPU base %.3f s cur %.3f s ratio %.3f\n' \
    "$label" "$bw" "$cw" "$(echo "$cw / $bw" | bc -l)" "$bc" "$cc" "$(echo "$cc / $bc" | bc -l)"
  printf '%-26s   user base %.3f s cur %.3f s | system base %.3f s cur %.3f s\n' "" "$bu" "$cu" \
    "$bs" "$cs"
}

echo "base $base_rev ($base_cli), current $cur_cli, $runs alternating runs each, load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "h100 x10: $(stat -c %s "$h100") bytes; v100 x7: $(stat -c %s "$v100") bytes"
compare "analyze --json  h100 x10" analyze --json "$h100"
compare "summary         h100 x10" summary "$h100"
compare "analyze --json  v100 x7" analyze --json "$v100"
compare "summary         v100 x7" summary "$v100"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
