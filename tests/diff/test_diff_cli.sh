#!/bin/sh
# Integration test of the `gpuprof diff` command line: input forms, options, outputs, exit codes.
# usage: test_diff_cli.sh GPUPROF SOURCE_DIR
set -u
gp=$1
src=$2
prof=$src/examples/profiles
out=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-diff-cli.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT
fails=0
check() { # check EXPECTED_RC DESCRIPTION -- command...
    want=$1
    what=$2
    shift 3
    "$@" >"$out/stdout" 2>"$out/stderr"
    got=$?
    if [ "$got" -ne "$want" ]; then
        echo "FAIL: $what: exit $got, expected $want" >&2
        sed 's/^/  stderr: /' "$out/stderr" >&2
        fails=$((fails + 1))
    fi
}

check 0 "--help" -- "$gp" diff --help
grep -q "fail-on-regression" "$out/stdout" || { echo "FAIL: --help text" >&2; fails=$((fails + 1)); }
grep -q "require-significance" "$out/stdout" && grep -q -- "--exact" "$out/stdout" ||
    { echo "FAIL: --help lists --require-significance and --exact" >&2; fails=$((fails + 1)); }
check 2 "no inputs" -- "$gp" diff
check 2 "one input" -- "$gp" diff "$prof/base.json"
check 2 "three positionals without --" -- "$gp" diff "$prof/base.json" "$prof/base.json" "$prof/current.json"
check 2 "unknown option" -- "$gp" diff --bogus "$prof/base.json" "$prof/current.json"
check 2 "bad threshold" -- "$gp" diff -t abc "$prof/base.json" "$prof/current.json"
check 2 "bad alpha" -- "$gp" diff --alpha 2 "$prof/base.json" "$prof/current.json"
check 2 "bad correction" -- "$gp" diff --correction bonferroni "$prof/base.json" "$prof/current.json"
check 2 "bad kind" -- "$gp" diff -k nonsense "$prof/base.json" "$prof/current.json"
check 2 "bad normalize" -- "$gp" diff --normalize everything "$prof/base.json" "$prof/current.json"
check 2 "missing file" -- "$gp" diff "$prof/base.json" "$out/nope.json"
grep -q "nope.json" "$out/stderr" || { echo "FAIL: missing-file message names the file" >&2; fails=$((fails + 1)); }
printf '{"traceEvents": [ {"ph":"X", "name": 12' >"$out/broken.json"
check 2 "malformed file" -- "$gp" diff "$prof/base.json" "$out/broken.json"
check 2 "output in a missing directory" -- "$gp" diff -o "$out/no/such/dir/x.txt" "$prof/base.json" "$prof/current.json"

# Without --fail-on-regression a regression still exits 0.
check 0 "regression without gate" -- "$gp" diff "$prof/base.json" "$prof/current.json"
grep -q "^TOP REGRESSIONS (total time per run; largest first): 2" "$out/stdout" || { echo "FAIL: text report" >&2; fails=$((fails + 1)); }
grep -q "^backward .* untested (n=1) .* slower p<1e-4" "$out/stdout" || { echo "FAIL: backward row (untested total, slower per call)" >&2; fails=$((fails + 1)); }
# The three input forms agree.
"$gp" diff --json "$prof/base.json" "$prof/current.json" >"$out/a.json"
"$gp" diff --json "$prof/base.json" -- "$prof/current.json" >"$out/b.json"
"$gp" diff --json --base "$prof/base.json" --current "$prof/current.json" >"$out/c.json"
cmp -s "$out/a.json" "$out/b.json" || { echo "FAIL: -- form differs" >&2; fails=$((fails + 1)); }
cmp -s "$out/a.json" "$out/c.json" || { echo "FAIL: --base/--current form differs" >&2; fails=$((fails + 1)); }
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["summary"]; assert d["schema"]=="gpuprof.diff/2"; assert (s["significant_regressions"], s["untested_regressions"], s["failing_regressions"])==(0,4,4), s' "$out/a.json" ||
    { echo "FAIL: JSON output" >&2; fails=$((fails + 1)); }
# Several runs per side: two copies of each profile -> per-run tests (2 vs 2 cannot reach 0.05).
mkdir "$out/b" "$out/c"
cp "$prof/base.json" "$out/b/r1.json"; cp "$prof/base.json" "$out/b/r2.json"
cp "$prof/current.json" "$out/c/r1.json"; cp "$prof/current.json" "$out/c/r2.json"
# 2 vs 2 runs: untested; the threshold decides and --fail-on-regression fails on it ...
check 1 "directories, too few runs to test" -- "$gp" diff --fail-on-regression --json "$out/b" "$out/c"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["base_runs"]==2 and d["current_runs"]==2; r=[x for x in d["rows"] if x["name"]=="backward"][0]; assert r["test"]["method"]=="none" and r["test"]["n_base"]==2 and r["type"]=="REGRESSION", r; assert r["per_call"]["method"]=="per-call" and r["per_call_direction"]=="slower", r' "$out/stdout" ||
    { echo "FAIL: directory runs" >&2; fails=$((fails + 1)); }
grep -q "untested: too few runs to test" "$out/stderr" || { echo "FAIL: the gate says why it failed" >&2; fails=$((fails + 1)); }
# ... unless --require-significance.
check 0 "untested regressions with --require-significance" -- "$gp" diff --fail-on-regression --require-significance "$out/b" "$out/c"
check 0 "--exact" -- "$gp" diff --exact --json "$prof/base.json" "$prof/current.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["options"]["exact"] is True' "$out/stdout" ||
    { echo "FAIL: --exact in the JSON options" >&2; fails=$((fails + 1)); }
# -o, --html, --junit write files; --threshold 50 hides the +16 % regression.
check 0 "files" -- "$gp" diff -o "$out/r.txt" --html "$out/r.html" --junit "$out/r.xml" "$prof/base.json" "$prof/current.json"
[ -s "$out/r.txt" ] && [ -s "$out/r.html" ] && [ -s "$out/r.xml" ] || { echo "FAIL: output files" >&2; fails=$((fails + 1)); }
[ ! -s "$out/stdout" ] || { echo "FAIL: -o still wrote stdout" >&2; fails=$((fails + 1)); }
grep -q '<iframe title="differential flame graph"' "$out/r.html" || { echo "FAIL: no flame graph in the HTML page" >&2; fails=$((fails + 1)); }
check 0 "flame svg" -- "$gp" diff --flame "$out/f.svg" --no-analyze "$prof/base.json" "$prof/current.json"
grep -q '<svg' "$out/f.svg" || { echo "FAIL: --flame svg" >&2; fails=$((fails + 1)); }
check 2 "flame bad suffix" -- "$gp" diff --flame "$out/f.png" "$prof/base.json" "$prof/current.json"
check 0 "high threshold" -- "$gp" diff --fail-on-regression -t 50 "$prof/base.json" "$prof/current.json"
check 1 "gate" -- "$gp" diff --fail-on-regression --correction bh --normalize all -k range "$prof/base.json" "$prof/current.json"

# --rank: rank N of each side (a single profile is rank 0 of its job); what each side ran on.
check 0 "--rank 0" -- "$gp" diff --rank 0 "$prof/base.json" "$prof/current.json"
grep -q "^Base ran on: " "$out/stdout" || { echo "FAIL: no 'Base ran on' line" >&2; fails=$((fails + 1)); }
check 2 "--rank absent" -- "$gp" diff --rank 5 "$prof/base.json" "$prof/current.json"
grep -q "no base trace has that rank" "$out/stderr" || { echo "FAIL: --rank 5 message" >&2; fails=$((fails + 1)); }
check 2 "--rank negative" -- "$gp" diff --rank -1 "$prof/base.json" "$prof/current.json"

# gpuprof advise: options, JSON, errors.
check 0 "advise --help" -- "$gp" advise --help
grep -q -- "--priority" "$out/stdout" || { echo "FAIL: advise --help" >&2; fails=$((fails + 1)); }
check 2 "advise without input" -- "$gp" advise
check 2 "advise bad priority" -- "$gp" advise --priority urgent "$prof/base.json"
check 2 "advise bad threshold" -- "$gp" advise --batch-min-calls 1 "$prof/base.json"
check 2 "advise missing file" -- "$gp" advise "$out/nope.json"
check 0 "advise --json" -- "$gp" advise --json --priority high "$prof/current.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["schema"]=="gpuprof.advise/1" and d["min_priority"]=="high"; assert d["not_evaluated"][0]["rule"]=="algorithm"' "$out/stdout" ||
    { echo "FAIL: advise JSON" >&2; fails=$((fails + 1)); }
check 0 "advise -o" -- "$gp" advise -o "$out/advice.txt" "$prof/current.json"
grep -q "^gpuprof advise: " "$out/advice.txt" || { echo "FAIL: advise -o" >&2; fails=$((fails + 1)); }

if [ "$fails" -ne 0 ]; then
    echo "$fails check(s) failed" >&2
    exit 1
fi
echo "test_diff_cli: OK"
