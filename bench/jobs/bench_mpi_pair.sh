#!/usr/bin/env bash
# Issue 33.2's `mpirun -n 2` ≤ 0.6x target on a shared host (docs/performance.md, "Jobs"): RUNS
# alternating pairs of `gpuprof analyze JOB` and `mpirun -n 2 gpuprof analyze JOB`, each line
# giving wall and CPU (user + sys) of the one process and of each MPI process, the ratios of the
# busier MPI process to the one process, and whether the two outputs are byte-identical.
# Usage: bench_mpi_pair.sh GPUPROF JOB_DIR [RUNS=3] [WORK=/tmp/gp-bench-pair]  (JOB_DIR: e.g. the
# job1024 that bench_jobs.sh builds; needs /usr/bin/time, bc, mpirun)
set -eu
gp=$(readlink -f "$1"); job="$2"; runs="${3:-3}"; W="${4:-/tmp/gp-bench-pair}"
mkdir -p "$W"
cpu() { echo "$2 + $3" | bc; }
for _ in $(seq "$runs"); do
  /usr/bin/time -f "%e %U %S" -o "$W/one.t" "$gp" analyze "$job" > "$W/one.out"
  mpirun --oversubscribe --allow-run-as-root -n 2 sh -c \
    "exec /usr/bin/time -f '%e %U %S' -o $W/mpi.\$OMPI_COMM_WORLD_RANK $gp analyze $job" > "$W/mpi.out"
  cmp -s "$W/one.out" "$W/mpi.out" && same=byte-identical || same=DIFFERENT
  read -r w u s < "$W/one.t"; read -r w0 u0 s0 < "$W/mpi.0"; read -r w1 u1 s1 < "$W/mpi.1"
  c=$(cpu "$w" "$u" "$s"); c0=$(cpu "$w0" "$u0" "$s0"); c1=$(cpu "$w1" "$u1" "$s1")
  busy=$(echo "if ($c0 > $c1) $c0 else $c1" | bc)
  printf 'one: wall %s cpu %s | -n 2: p0 wall %s cpu %s, p1 cpu %s | busier cpu / one %.2f, wall / one %.2f | %s | load %s\n' \
    "$w" "$c" "$w0" "$c0" "$c1" "$(echo "$busy / $c" | bc -l)" "$(echo "$w0 / $w" | bc -l)" "$same" \
    "$(cut -d' ' -f1 /proc/loadavg)"
done
