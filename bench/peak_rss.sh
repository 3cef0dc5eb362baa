#!/usr/bin/env bash
# bench/peak_rss.sh: the peak resident memory of `gpuprof analyze` (reading + every analysis) on
# the replicated large_v100_nccl trace, against issue 37's limit of 128 MiB (131,072 KiB), with
# automatic threads and with --threads 1, and with glibc's own malloc arenas (GP_ARENA_MAX=0)
# beside the one arena the CLI asks for (src/app/cli/main.c): the same binary in the same minutes.
# Prints each case's median and largest peak (GNU time's %M, KiB), its ratio to the limit, and
# the median wall and CPU time.
#
#   bench/peak_rss.sh [BUILD_DIR] [RUNS] [TRACE]
#
# TRACE (default: made in a temporary folder, never committed) is large_v100_nccl x7 (335 MB),
# from ../shared/tools/replicate_trace.py; GP_BENCH_KEEP=DIR keeps and reuses it as DIR/v100_x7.json.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
runs=${2:-5}
cli=$build/gpuprof
shared=${GP_SHARED:-$src/../shared}
[[ -x $cli ]] || { echo "peak_rss: no $cli (build it first)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "peak_rss: needs GNU time (/usr/bin/time)" >&2; exit 2; }

trace=${3:-}
if [[ -z $trace ]]; then
  work=${GP_BENCH_KEEP:-$(mktemp -d)}
  [[ -n ${GP_BENCH_KEEP:-} ]] || trap 'rm -rf "$work"' EXIT
  mkdir -p "$work"
  trace=$work/v100_x7.json
  if [[ ! -s $trace ]]; then
    echo "making $trace (large_v100_nccl x7)..." >&2
    python3 "$shared/tools/replicate_trace.py" "$shared/traces/large_v100_nccl.json.gz" 7 "$trace" >&2
  fi
fi

raw=$(mktemp)
trap 'rm -f "$raw"; [[ -n ${GP_BENCH_KEEP:-} || -z ${work:-} ]] || rm -rf "$work"' EXIT
cases=("auto|" "auto|GP_ARENA_MAX=0" "threads1|" "threads1|GP_ARENA_MAX=0")
for ((i = 0; i < runs; i++)); do # alternating, so that every case sees the same minutes
  for c in "${cases[@]}"; do
    name=${c%%|*} envs=${c#*|}
    args=(analyze -q)
    [[ $name == threads1 ]] && args+=(--threads 1)
    env $envs /usr/bin/time -f "$name|$envs|%M|%e|%U|%S" "$cli" "${args[@]}" "$trace" \
      >/dev/null 2>>"$raw"
  done
done
python3 - "$raw" <<'PY'
import statistics, sys
LIMIT = 131072  # 128 MiB in KiB
rows = {}
for line in open(sys.argv[1]):
    p = line.strip().split("|")
    if len(p) == 6:
        rows.setdefault((p[0], p[1]), []).append((int(p[2]), float(p[3]), float(p[4]) + float(p[5])))
print(f"{'case':32} {'peak median':>12} {'max':>8} {'/ limit':>8} {'wall':>7} {'cpu':>7}")
for (name, envs), r in rows.items():
    peaks = [x[0] for x in r]
    med = statistics.median(peaks)
    label = name + (" " + envs if envs else " (one arena)")
    print(f"{label:32} {med:>9.0f} KiB {max(peaks):>8} {med / LIMIT:>8.3f} "
          f"{statistics.median(x[1] for x in r):>6.2f}s {statistics.median(x[2] for x in r):>6.2f}s")
PY
