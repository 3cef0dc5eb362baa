#!/usr/bin/env bash
# Issue 33.3: `gpuprof diff JOB_A JOB_B` pairs rank i with rank i (never "runs"): one diff per
# pair, each showing its sides' device, world size and rank; ranks on one side only are named;
# the world sizes' difference is warned about; --rank N still gives one pair; --html with two
# jobs asks for --rank.
# Usage: diff_jobs.sh GPUPROF SHARED_DIR GEN_SCRIPT     (exit 77: shared traces absent)
set -u
gp="$1"; shared="$2"; gen="$3"
job="$shared/traces/multirank8_dlrm_v100"
[ -d "$job" ] || { echo "SKIP: $job absent"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
t() { if "$@"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $*"; fi; }
python3 "$gen" 16 "$tmp/job16" "$shared"

"$gp" diff --no-analyze "$job" "$job" > "$tmp/same.txt"; t [ $? = 0 ]
t [ "$(grep -c '^== RANK ' "$tmp/same.txt")" = 8 ]
for r in 0 3 7; do
  t grep -F "== RANK $r: base rank $r with current rank $r ==" "$tmp/same.txt" >/dev/null
done
t grep -F "Base ran on: device Tesla V100-SXM2-32GB, world size 8, rank 3" "$tmp/same.txt" >/dev/null
t [ "$(grep -c 'runs average ranks\|not repeated runs' "$tmp/same.txt")" = 0 ]

"$gp" diff --json --no-analyze "$job" "$tmp/job16" > "$tmp/j.json" 2> "$tmp/j.err"; t [ $? = 0 ]
python3 - "$tmp/j.json" <<'PY' || { fail=$((fail+1)); echo "FAIL: JSON of two jobs"; }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "gpuprof.diff-jobs/1" and d["pairing"] == "rank", d.keys()
assert [p["rank"] for p in d["pairs"]] == list(range(8))
for p in d["pairs"]:
    c = p["diff"]["context"]
    assert c["base"]["ranks"] == c["current"]["ranks"] == str(p["rank"]), c
    assert c["base"]["world_size"] == 8 and c["current"]["world_size"] == 16, c
    assert "World size differs: base 8, current 16." in c["warning"], c["warning"]
assert d["only_in_base"] == [] and d["only_in_current"] == list(range(8, 16))
PY
t grep -F "rank 12 is only in the current job: not compared" "$tmp/j.err" >/dev/null

"$gp" diff --no-analyze --rank 2 "$job" "$tmp/job16" > "$tmp/r2.txt"; t [ $? = 0 ]
t [ "$(grep -c '^== RANK ' "$tmp/r2.txt")" = 0 ]
t grep -F "Current ran on: device Tesla V100-SXM2-32GB, world size 16, rank 2" "$tmp/r2.txt" >/dev/null
out=$("$gp" diff --html "$tmp/x.html" "$job" "$job" 2>&1); rc=$?
t [ "$rc" = 2 ]
t grep -F -- "give --rank N" <<<"$out" >/dev/null
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
