#!/usr/bin/env bash
# Issue 33.2: `mpirun -n K gpuprof analyze JOB_DIR` (K = 1, 2, 4 on one host, --oversubscribe)
# writes the bytes of the one-process `gpuprof analyze JOB_DIR` (text and JSON) on the 8-rank
# job; a rank file without distributedInfo.rank under mpirun exits 2 naming it; MPI is loaded
# from the plugin only (the program does not link libmpi; without the plugin: exit 2, named).
# Usage: mpi_job.sh GPUPROF SOURCE_DIR SHARED_DIR HAVE_MPI   (exit 77: no mpirun, gpuprof built
# without MPI, or the shared traces absent)
set -u
gp="$1"; src="$2"; shared="$3"; have_mpi="$4"
job="$shared/traces/multirank8_dlrm_v100"
[ -d "$job" ] || { echo "SKIP: $job absent"; exit 77; }
command -v mpirun >/dev/null || { echo "SKIP: no mpirun"; exit 77; }
case "$have_mpi" in 1|ON|TRUE|true) ;; *) echo "SKIP: gpuprof built without MPI"; exit 77;; esac
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mpi=(mpirun --oversubscribe --allow-run-as-root)
export OMPI_MCA_btl=self,vader OMPI_MCA_plm_rsh_agent=false
pass=0; fail=0
"$gp" analyze "$job" > "$tmp/one.txt" || { echo "FAIL one-process analyze"; exit 1; }
"$gp" analyze --json "$job" > "$tmp/one.json" || { echo "FAIL one-process analyze --json"; exit 1; }
for k in 1 2 4; do
  for fmt in txt json; do
    flag=(); [ "$fmt" = json ] && flag=(--json)
    timeout 300 "${mpi[@]}" -n "$k" "$gp" analyze "${flag[@]}" "$job" > "$tmp/mpi$k.$fmt" 2> "$tmp/err"
    rc=$?
    if [ "$rc" = 0 ]; then
      if cmp -s "$tmp/one.$fmt" "$tmp/mpi$k.$fmt"; then pass=$((pass+1))
      else fail=$((fail+1)); echo "FAIL -n $k $fmt: output differs"; diff "$tmp/one.$fmt" "$tmp/mpi$k.$fmt" | head -5; fi
    else
      fail=$((fail+1)); echo "FAIL -n $k $fmt: exit $rc"; head -5 "$tmp/err"
    fi
  done
done
# -o FILE: written once, by process 0
timeout 300 "${mpi[@]}" -n 2 "$gp" analyze -o "$tmp/o.txt" "$job" && cmp -s "$tmp/one.txt" "$tmp/o.txt" \
  && pass=$((pass+1)) || { fail=$((fail+1)); echo "FAIL -n 2 -o"; }
# a job with a rank file lacking distributedInfo.rank: exit 2 from every process, the file named
mkdir "$tmp/nodist"; cp "$job"/worker0* "$tmp/nodist/"; cp "$src/tests/cli/data/nested_ops.json" "$tmp/nodist/"
out=$(timeout 300 "${mpi[@]}" -n 2 "$gp" analyze "$tmp/nodist" 2>&1); rc=$?
if [ "$rc" = 2 ] && printf '%s' "$out" | grep -F "nested_ops.json: no distributedInfo.rank" >/dev/null; then pass=$((pass+1))
else fail=$((fail+1)); echo "FAIL no distributedInfo: exit $rc: $out" | head -5; fi
# two files claiming one rank: exit 2 naming both
mkdir "$tmp/dup"; cp "$job"/worker0* "$tmp/dup/a.json.gz"; cp "$job"/worker0* "$tmp/dup/b.json.gz"
out=$(timeout 300 "${mpi[@]}" -n 2 "$gp" analyze "$tmp/dup" 2>&1); rc=$?
line=$(printf '%s' "$out" | grep -F "holds rank 0, which")
if [ "$rc" = 2 ] && [[ "$line" == *"$tmp/dup/a.json.gz"* && "$line" == *"$tmp/dup/b.json.gz"* ]]; then pass=$((pass+1))
else fail=$((fail+1)); echo "FAIL two files, one rank: exit $rc: $out" | head -5; fi
# Open MPI's messaging layer: ob1 alone unless the user names one (opening cm probes libfabric:
# 0.2 s of MPI_Init), and the user's OMPI_MCA_pml wins
out=$(OMPI_MCA_pml_base_verbose=10 timeout 300 "${mpi[@]}" -n 1 "$gp" analyze "$job" 2>&1 >/dev/null)
if printf '%s' "$out" | grep -F "component ob1 selected" >/dev/null \
  && ! printf '%s' "$out" | grep -F "components_open: found loaded component cm" >/dev/null; then pass=$((pass+1))
else fail=$((fail+1)); echo "FAIL pml: not ob1 alone"; printf '%s\n' "$out" | grep -F "pml" | head -5; fi
out=$(OMPI_MCA_pml=ob1,cm OMPI_MCA_pml_base_verbose=10 timeout 300 "${mpi[@]}" -n 1 "$gp" analyze "$job" 2>&1 >/dev/null)
if printf '%s' "$out" | grep -F "components_open: found loaded component cm" >/dev/null; then pass=$((pass+1))
else fail=$((fail+1)); echo "FAIL pml: the user's OMPI_MCA_pml=ob1,cm was not used"; fi
# MPI is a plugin (gpuprof-mpi.so, docs/decisions/mpi-plugin.md): the program itself does not
# load libmpi (every command would start Open MPI's libraries), and under mpirun without the
# plugin every process exits 2 saying what it could not load
if readelf -d "$gp" | grep -E 'NEEDED.*libmpi' >/dev/null; then
  fail=$((fail+1)); echo "FAIL the program links libmpi itself"
else pass=$((pass+1)); fi
out=$(GPUPROF_MPI_PLUGIN="$tmp/none/gpuprof-mpi.so" timeout 300 "${mpi[@]}" -x GPUPROF_MPI_PLUGIN -n 2 \
  "$gp" analyze "$job" 2>&1 >/dev/null); rc=$?
if [ "$rc" = 2 ] && printf '%s' "$out" | grep -F "cannot load MPI (gpuprof-mpi.so): $tmp/none/gpuprof-mpi.so" >/dev/null; then
  pass=$((pass+1))
else fail=$((fail+1)); echo "FAIL no plugin: exit $rc: $out" | head -5; fi
# a file that loads but is not gpuprof's plugin (another version's): named, with what it lacks
if printf 'int gp_other_v0;\n' | cc -shared -fPIC -x c - -o "$tmp/other.so" 2>/dev/null; then
  out=$(GPUPROF_MPI_PLUGIN="$tmp/other.so" timeout 300 "${mpi[@]}" -x GPUPROF_MPI_PLUGIN -n 1 \
    "$gp" analyze "$job" 2>&1 >/dev/null); rc=$?
  if [ "$rc" = 2 ] && printf '%s' "$out" | grep -F "$tmp/other.so: no gp_mpi_plugin_v1" >/dev/null; then
    pass=$((pass+1))
  else fail=$((fail+1)); echo "FAIL a plugin without its symbol: exit $rc: $out" | head -5; fi
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
