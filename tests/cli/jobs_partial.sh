#!/usr/bin/env bash
# Issue 33.2: `gpuprof analyze --partial` + `gpuprof merge` give the bytes of `gpuprof analyze
# JOB_DIR` on the 8-rank job (text, JSON, --hta, CSV), whatever the order of the partials and
# however they are grouped (merging is associative); bad partials exit 2 naming the file.
# Usage: jobs_partial.sh GPUPROF SOURCE_DIR SHARED_DIR     (exit 77: shared traces absent)
set -u
gp="$1"; src="$2"; shared="$3"
job="$shared/traces/multirank8_dlrm_v100"
[ -d "$job" ] || { echo "SKIP: $job absent"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL $*"; }
same() { # name file-a file-b
  if cmp -s "$2" "$3"; then ok; else bad "$1: $2 and $3 differ"; diff "$2" "$3" | head -5; fi
}
expect_rc() { # name want-rc needle command...
  local name="$1" want="$2" needle="$3"; shift 3
  local out rc
  out=$("$@" 2>&1); rc=$?
  [ "$rc" = "$want" ] && ok || bad "$name: exit $rc, wanted $want"
  if printf '%s' "$out" | grep -F -- "$needle" >/dev/null; then ok; else bad "$name: no '$needle' in: $out"; fi
}

"$gp" analyze "$job" > "$tmp/job.txt" || bad "analyze job"
"$gp" analyze --json "$job" > "$tmp/job.json" || bad "analyze --json job"
"$gp" analyze --hta "$job" > "$tmp/job_hta.txt" || bad "analyze --hta job"
"$gp" analyze --csv "$tmp/csv_job" "$job" || bad "analyze --csv job"
parts=()
for f in "$job"/*.json*; do
  r=$(basename "$f"); r=${r%%_*}
  "$gp" analyze --partial "$tmp/$r.gpp" "$f" || bad "partial $f"
  "$gp" analyze --hta --partial "$tmp/$r.hta.gpp" "$f" || bad "hta partial $f"
  parts+=("$tmp/$r.gpp")
  # the partial is at most 1 % of the trace's JSON text
  tb=$(gzip -dc "$f" 2>/dev/null | wc -c); pb=$(wc -c < "$tmp/$r.gpp")
  [ $((pb * 100)) -le "$tb" ] && ok || bad "$r: partial $pb bytes > 1 % of $tb"
done
[ ${#parts[@]} = 8 ] && ok || bad "8 partials, got ${#parts[@]}"

"$gp" merge "${parts[@]}" > "$tmp/m.txt"; same "merge in order" "$tmp/job.txt" "$tmp/m.txt"
"$gp" merge --json "${parts[@]}" > "$tmp/m.json"; same "merge --json" "$tmp/job.json" "$tmp/m.json"
"$gp" merge "$tmp"/*.hta.gpp > "$tmp/mh.txt"; same "merge --hta" "$tmp/job_hta.txt" "$tmp/mh.txt"
"$gp" merge --csv "$tmp/csv_m" "${parts[@]}" || bad "merge --csv"
for c in "$tmp"/csv_job/*.csv; do same "csv $(basename "$c")" "$c" "$tmp/csv_m/$(basename "$c")"; done
# every order: reversed, and permutations from a fixed seed
rev=(); for ((i=${#parts[@]}-1; i>=0; i--)); do rev+=("${parts[$i]}"); done
"$gp" merge "${rev[@]}" > "$tmp/m.txt"; same "merge reversed" "$tmp/job.txt" "$tmp/m.txt"
for seed in 1 2 3 4 5; do
  mapfile -t perm < <(printf '%s\n' "${parts[@]}" | shuf --random-source=<(yes "$seed"))
  "$gp" merge "${perm[@]}" > "$tmp/m.txt"; same "merge order seed $seed" "$tmp/job.txt" "$tmp/m.txt"
done
# in groups: (0 1) (2 3 4) (5 6 7), then ((0 1) (5 6 7)) with (2 3 4): associative
"$gp" merge --partial "$tmp/g1.gpp" "${parts[0]}" "${parts[1]}" || bad "group 1"
"$gp" merge --partial "$tmp/g2.gpp" "${parts[4]}" "${parts[2]}" "${parts[3]}" || bad "group 2"
"$gp" merge --partial "$tmp/g3.gpp" "${parts[7]}" "${parts[5]}" "${parts[6]}" || bad "group 3"
"$gp" merge --partial "$tmp/g13.gpp" "$tmp/g3.gpp" "$tmp/g1.gpp" || bad "group 1+3"
"$gp" merge "$tmp/g2.gpp" "$tmp/g13.gpp" > "$tmp/m.txt"; same "merge of groups" "$tmp/job.txt" "$tmp/m.txt"
"$gp" merge "$tmp/g1.gpp" "$tmp/g2.gpp" "$tmp/g3.gpp" > "$tmp/m.txt"; same "merge of 3 groups" "$tmp/job.txt" "$tmp/m.txt"
"$gp" merge --partial "$tmp/g31.gpp" "$tmp/g1.gpp" "$tmp/g3.gpp" || bad "group 3+1"
same "merged partial bytes whatever the order" "$tmp/g13.gpp" "$tmp/g31.gpp"

# a folder of ranks in one partial (a node's share)
"$gp" analyze --partial "$tmp/all.gpp" "$job" || bad "partial of the job folder"
"$gp" merge "$tmp/all.gpp" > "$tmp/m.txt"; same "partial of the folder" "$tmp/job.txt" "$tmp/m.txt"
"$gp" merge --partial "$tmp/all8.gpp" "${parts[@]}" || bad "merge --partial of 8"
same "folder partial = merged rank partials" "$tmp/all.gpp" "$tmp/all8.gpp"

# bad input: exit 2 naming the file at fault
expect_rc "same rank twice" 2 "holds rank 1, which" "$gp" merge "${parts[1]}" "$tmp/g1.gpp"
expect_rc "other options" 2 "analysed with other options" "$gp" merge "${parts[0]}" "$tmp/worker1.hta.gpp"
cp "${parts[2]}" "$tmp/v1.gpp"; printf '\x01' | dd of="$tmp/v1.gpp" bs=1 seek=16 conv=notrunc 2>/dev/null
expect_rc "older version" 2 "$tmp/v1.gpp: partial result of format version 1; this gpuprof reads version 2 (write it again" "$gp" merge "${parts[0]}" "$tmp/v1.gpp"
cp "${parts[2]}" "$tmp/w.gpp"; printf '\x10' | dd of="$tmp/w.gpp" bs=1 seek=28 conv=notrunc 2>/dev/null
expect_rc "other job" 2 "$tmp/w.gpp: of another job (world size 16" "$gp" merge "${parts[0]}" "$tmp/w.gpp"
# two jobs of equal world size (2): an A100 rank 0 (NCCL 2.17.1, one process group) and a V100
# rank 1 (neither said): distributedInfo tells them apart
"$gp" analyze --partial "$tmp/a100.gpp" "$shared/traces/medium_a100_nccl.json.gz" || bad "partial a100"
"$gp" analyze --partial "$tmp/v100.gpp" "$shared/traces/large_v100_nccl.json.gz" || bad "partial v100"
expect_rc "other job, same world size" 2 "$tmp/v100.gpp: of another job than $tmp/a100.gpp" "$gp" merge "$tmp/a100.gpp" "$tmp/v100.gpp"
# one configuration run twice: rank 5 of a run 30 hours later is not of this job
mkdir "$tmp/later"; gzip -dc "$job"/worker5* > "$tmp/later/w5.json"
python3 - "$tmp/later/w5.json" <<'PY'
import re, sys
s = open(sys.argv[1], "rb").read()
s = re.sub(rb'("ts": ?)(\d+(?:\.\d+)?)', lambda m: m.group(1) + b"%.3f" % (float(m.group(2)) + 30 * 3600e6), s)
open(sys.argv[1], "wb").write(s)
PY
"$gp" analyze --partial "$tmp/later/w5.gpp" "$tmp/later/w5.json" || bad "partial of the later rank 5"
rest=(); for p in "${parts[@]}"; do case "$p" in *worker5*) ;; *) rest+=("$p");; esac; done
expect_rc "a later run's rank" 2 "$tmp/later/w5.gpp: rank 5 (trace $tmp/later/w5.json) starts 30.0 h after rank 1 of $tmp/worker1.gpp" "$gp" merge "${rest[@]}" "$tmp/later/w5.gpp"
head -c 3000 "${parts[3]}" > "$tmp/cut.gpp"
expect_rc "truncated" 2 "$tmp/cut.gpp: truncated" "$gp" merge "${parts[0]}" "$tmp/cut.gpp"
expect_rc "not a partial" 2 "not a gpuprof partial result" "$gp" merge "$src/examples/traces/example_step.json"
expect_rc "no rank in trace" 2 "no distributedInfo.rank" "$gp" analyze --partial "$tmp/x.gpp" "$src/tests/cli/data/nested_ops.json"
[ ! -e "$tmp/x.gpp" ] && ok || bad "a failed --partial left $tmp/x.gpp"
expect_rc "no input" 2 "no input" "$gp" merge

# bad input inside the job travels with the partials: rank 3's clock 3 hours ahead is aligned and
# said in the merged output as in the one-process output
mkdir "$tmp/shift"
for f in "$job"/*.json*; do gzip -dc "$f" > "$tmp/shift/$(basename "${f%.gz}")"; done
python3 - "$tmp"/shift/worker3* <<'PY'
import re, sys
s = open(sys.argv[1], "rb").read()
s = re.sub(rb'("ts": ?)(\d+(?:\.\d+)?)', lambda m: m.group(1) + b"%.3f" % (float(m.group(2)) + 3 * 3600e6), s)
open(sys.argv[1], "wb").write(s)
PY
"$gp" analyze "$tmp/shift" > "$tmp/shift.txt" || bad "analyze shifted job"
grep -F "Clocks aligned on the ends of implicit-sync collectives" "$tmp/shift.txt" >/dev/null && ok || bad "no clock note"
for f in "$tmp"/shift/*.json; do "$gp" analyze --partial "$f.gpp" "$f" || bad "partial $f"; done
"$gp" merge "$tmp"/shift/*.gpp > "$tmp/mshift.txt"; same "merge of the shifted job" "$tmp/shift.txt" "$tmp/mshift.txt"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
