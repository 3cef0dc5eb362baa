#!/usr/bin/env bash
# Issue 33.2 under a REAL Slurm (scripts/slurm-local starts a one-node cluster; docs/decisions/
# srun.md): `srun -n K gpuprof analyze JOB_DIR` on the 8-rank job writes the bytes of the
# one-process run (text and JSON), K = 1, 2, 4 (--overcommit: more tasks than the node's CPUs),
# with every MPI plugin this srun lists (none and pmi2: the tasks meet through files, except with
# an MPI that speaks PMI-2; pmix: MPI). Also: only task 0 writes (srun --output per task), the
# meeting directory is removed, the path taken is the expected one (a meeting directory that
# cannot be made fails the files path and not MPI's), srun inside an sbatch script, gpuprof run
# directly in a batch script stays one process, and mpirun inside an salloc allocation.
# Usage: srun_real.sh GPUPROF SHARED_DIR WORK_DIR HAVE_MPI
#   WORK_DIR: a directory every node sees (the build tree); exit 77 when srun, a cluster that
#   answers sinfo with an idle or mixed node, or the shared traces are absent.
set -u
gp="$1"; shared="$2"; work="$3"; have_mpi="$4"
job="$shared/traces/multirank8_dlrm_v100"
[ -d "$job" ] || { echo "SKIP: $job absent"; exit 77; }
command -v srun >/dev/null && command -v sinfo >/dev/null || { echo "SKIP: no srun"; exit 77; }
sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix)' \
  || { echo "SKIP: no Slurm cluster answers with a free node (scripts/slurm-local start)"; exit 77; }
job=$(cd "$job" && pwd); gp=$(cd "$(dirname "$gp")" && pwd)/$(basename "$gp")
mkdir -p "$work"; tmp=$(mktemp -d "$(cd "$work" && pwd)/srun_real.XXXXXX")
chmod 755 "$tmp"; trap 'rm -rf "$tmp"' EXIT
unset PMIX_RANK PMI_RANK PMI_FD PMI_SIZE PMIX_SIZE OMPI_COMM_WORLD_SIZE GPUPROF_NO_MPI
pass=0; fail=0
ok() { pass=$((pass+1)); }
ko() { fail=$((fail+1)); echo "FAIL $*"; }
"$gp" analyze "$job" > "$tmp/one.txt" || { echo "FAIL one-process analyze"; exit 1; }
"$gp" analyze --json "$job" > "$tmp/one.json" || { echo "FAIL one-process analyze --json"; exit 1; }
run=(timeout 300 srun --immediate=120 --overcommit)
plugins=$(srun --mpi=list 2>&1 | sed -n 's/^[[:space:]]*\(none\|pmi2\|pmix\)$/\1/p' | sort -u)
echo "srun MPI plugins: $(echo $plugins)"
export GPUPROF_SRUN_DIR="$tmp/meet"
for mpi in $plugins; do
  for k in 1 2 4; do
    for fmt in txt json; do
      flag=(); [ "$fmt" = json ] && flag=(--json)
      o="$tmp/$mpi$k$fmt"
      "${run[@]}" --mpi="$mpi" -n "$k" --output="$o.%t" --error="$o.err.%t" \
        "$gp" analyze "${flag[@]}" "$job"
      rc=$?
      if [ "$rc" != 0 ]; then ko "--mpi=$mpi -n $k $fmt: exit $rc"; cat "$o".err.* | head -5; continue; fi
      cmp -s "$tmp/one.$fmt" "$o.0" && ok || ko "--mpi=$mpi -n $k $fmt: task 0's output differs"
      quiet=1; for ((i = 1; i < k; i++)); do [ -s "$o.$i" ] && quiet=0; done
      [ "$quiet" = 1 ] && ok || ko "--mpi=$mpi -n $k $fmt: a task other than 0 printed"
      [ ! -e "$tmp/meet" ] && ok || ko "--mpi=$mpi -n $k $fmt: the meeting directory was left"
    done
  done
done
# which path: a meeting directory that cannot be made fails srun's files (exit 2 naming
# GPUPROF_SRUN_DIR) and not MPI's gather
: > "$tmp/afile"
out=$(GPUPROF_SRUN_DIR="$tmp/afile/meet" "${run[@]}" --mpi=none -n 2 "$gp" analyze "$job" 2>&1); rc=$?
[ "$rc" != 0 ] && printf '%s' "$out" | grep -F "set GPUPROF_SRUN_DIR" >/dev/null && ok \
  || ko "--mpi=none did not meet through files: exit $rc: $(printf '%s' "$out" | head -3)"
case "$have_mpi" in
  1|ON|TRUE|true)
    if printf '%s\n' $plugins | grep -qx pmix; then
      GPUPROF_SRUN_DIR="$tmp/afile/meet" "${run[@]}" --mpi=pmix -n 2 "$gp" analyze "$job" \
        > "$tmp/pmixpath.txt" 2> "$tmp/pmixpath.err" && cmp -s "$tmp/one.txt" "$tmp/pmixpath.txt" \
        && ok || ko "--mpi=pmix did not run on MPI: $(head -3 "$tmp/pmixpath.err")"
    fi ;;
esac
# srun inside a batch script (the usual way), and gpuprof run directly in one (one process)
timeout 300 sbatch -W -n 4 --overcommit -o "$tmp/batch_srun.out" -e "$tmp/batch_srun.err" \
  --wrap "srun $gp analyze --json $job" >/dev/null
cmp -s "$tmp/one.json" "$tmp/batch_srun.out" && ok \
  || ko "srun in sbatch: $(head -3 "$tmp/batch_srun.err" 2>/dev/null)"
timeout 300 sbatch -W -n 4 --overcommit -o "$tmp/batch_one.out" -e "$tmp/batch_one.err" \
  --wrap "$gp analyze $job" >/dev/null
cmp -s "$tmp/one.txt" "$tmp/batch_one.out" && ok \
  || ko "gpuprof in a batch script: $(head -3 "$tmp/batch_one.err" 2>/dev/null)"
# mpirun inside an allocation: its processes carry the srun step of mpirun's daemons too
case "$have_mpi" in
  1|ON|TRUE|true)
    if command -v mpirun >/dev/null; then
      OMPI_MCA_btl=self,vader timeout 300 salloc --immediate=120 -n 2 --overcommit \
        mpirun --allow-run-as-root --oversubscribe -n 2 "$gp" analyze "$job" \
        > "$tmp/salloc.txt" 2> "$tmp/salloc.err"
      cmp -s "$tmp/one.txt" "$tmp/salloc.txt" && ok \
        || ko "mpirun in salloc: $(grep -v '^salloc:' "$tmp/salloc.err" | head -3)"
    fi ;;
esac
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
