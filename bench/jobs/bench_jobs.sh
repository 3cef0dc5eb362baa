#!/usr/bin/env bash
# Issue 33.2's scale benchmark (docs/performance.md, "Jobs: partials, merge and MPI"): a synthetic
# job of up to 1,024 ranks (make_job.py: the 8-rank job replicated, ranks and ids offset) analysed
# in one process at 128..1,024 ranks (time and peak RSS: linear?), under `mpirun -n 2` (time and
# process 0's peak RSS), and the two costs of the partial path: one rank's `analyze --partial` and
# the merge of every rank's partial.
# Usage: bench_jobs.sh GPUPROF [N=1024] [WORK=/tmp/gp-bench-jobs]     (needs /usr/bin/time)
set -eu
gp=$(readlink -f "$1"); n="${2:-1024}"; work="${3:-/tmp/gp-bench-jobs}"
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
[ -f "$work/job$n/rank00000.json" ] || python3 "$here/make_job.py" "$n" "$work/job$n"
measure() { # label command...: prints label, wall seconds, peak RSS MiB
  local label="$1"; shift
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" > /dev/null
  read -r wall rss < "$work/time"
  printf '%-34s %8.2f s %8.0f MiB\n' "$label" "$wall" "$((rss / 1024))"
}
echo "one process (gpuprof analyze DIR):"
for m in 128 256 512 1024; do
  [ "$m" -le "$n" ] || continue
  d="$work/sub$m"; rm -rf "$d"; mkdir "$d"
  for ((r = 0; r < m; r++)); do ln -s "$work/job$n/$(printf 'rank%05d.json' $r)" "$d/"; done
  # a subset of a larger job: world size in the files says n, as it would for part of a job
  measure "  $m ranks" "$gp" analyze "$d"
done
if command -v mpirun >/dev/null; then
  echo "mpirun -n 2 (process 0's RSS):"
  mpirun --oversubscribe --allow-run-as-root -n 2 sh -c \
    "exec /usr/bin/time -f '%e %M' -o $work/mpi.\$OMPI_COMM_WORLD_RANK $gp analyze $work/job$n" > "$work/mpi.out"
  read -r wall rss < "$work/mpi.0"; read -r wall1 rss1 < "$work/mpi.1"
  printf '  %-32s %8.2f s %8.0f MiB (process 1: %.0f MiB)\n' "$n ranks, 2 processes" "$wall" "$((rss / 1024))" "$((rss1 / 1024))"
  "$gp" analyze "$work/job$n" | cmp - "$work/mpi.out" && echo "  byte-identical to one process"
fi
echo "partial path:"
measure "  analyze --partial (1 rank)" "$gp" analyze --partial "$work/r0.gpp" "$work/job$n/rank00000.json"
printf '  partial %d bytes for a %d-byte trace (%.2f %%)\n' "$(wc -c < "$work/r0.gpp")" \
  "$(wc -c < "$work/job$n/rank00000.json")" \
  "$(echo "$(wc -c < "$work/r0.gpp") * 100 / $(wc -c < "$work/job$n/rank00000.json")" | bc -l)"
mkdir -p "$work/parts"
for f in "$work/job$n"/*.json; do "$gp" analyze --partial "$work/parts/$(basename "$f" .json).gpp" "$f"; done
measure "  merge of $n partials" "$gp" merge "$work/parts"/*.gpp
"$gp" merge "$work/parts"/*.gpp | cmp - <("$gp" analyze "$work/job$n") && echo "  byte-identical to one process"
