#!/bin/sh
# Command-line behaviour of gpuprof flame / timeline / report: --help exits 0, usage and input
# errors exit 2 with a message naming the problem, outputs are written atomically (no partial or
# temporary file left after a failure), folded output of the hand-written fixture matches its
# golden file. No browser needed.
# usage: cli_test.sh GPUPROF SOURCE_DIR OUT_DIR
set -u
GP=$1 SRC=$2 OUT=$3
rm -rf "$OUT" && mkdir -p "$OUT"
X="$SRC/tests/report/data/xss_trace.json"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect() { # expect RC DESCRIPTION CMD...
  want=$1 what=$2; shift 2
  "$@" >"$OUT/stdout" 2>"$OUT/stderr"; rc=$?
  [ $rc -eq "$want" ] && echo "ok: $what (exit $rc)" || { fail "$what: exit $rc, want $want"; cat "$OUT/stderr"; }
}
for c in flame timeline report; do
  expect 0 "$c --help" "$GP" $c --help
  grep -q "usage: gpuprof $c" "$OUT/stdout" || fail "$c --help prints no usage"
  expect 2 "$c without -o" "$GP" $c "$X"
  expect 2 "$c without input" "$GP" $c -o "$OUT/x.html"
  expect 2 "$c on a missing file" "$GP" $c "$OUT/missing.json" -o "$OUT/x.html"
  grep -q "missing.json" "$OUT/stderr" || fail "$c: the message does not name the file"
  printf '{"traceEvents": [{"ph": "X", "name": 5' > "$OUT/bad.json"
  expect 2 "$c on malformed JSON" "$GP" $c "$OUT/bad.json" -o "$OUT/x.html"
  grep -q "bad.json" "$OUT/stderr" || fail "$c: the parse error does not name the file"
  expect 2 "$c with an unknown option" "$GP" $c --bogus "$X" -o "$OUT/x.html"
done
[ -e "$OUT/x.html" ] && fail "a failed run left x.html behind"
ls "$OUT" | grep -q '\.tmp\.' && fail "a temporary file was left behind"
expect 2 "flame: unknown suffix" "$GP" flame "$X" -o "$OUT/x.png"
expect 2 "flame: bad --weight" "$GP" flame "$X" --weight fast -o "$OUT/x.folded"
expect 2 "flame: bad --by" "$GP" flame "$X" --by thread -o "$OUT/x.folded"
expect 2 "flame: bad --min-duration" "$GP" flame "$X" --min-duration 5parsecs -o "$OUT/x.folded"
expect 2 "flame: --diff with one input" "$GP" flame --diff "$X" -o "$OUT/x.folded"
expect 2 "flame: --diff to speedscope" "$GP" flame --diff "$X" "$X" -o "$OUT/x.speedscope.json"
expect 0 "flame folded" "$GP" flame "$X" -o "$OUT/xss.folded"
cmp -s "$OUT/xss.folded" "$SRC/tests/report/golden/xss_trace.folded" && echo "ok: folded golden" \
  || { fail "xss.folded differs from golden"; diff "$OUT/xss.folded" "$SRC/tests/report/golden/xss_trace.folded"; }
expect 0 "flame --diff of a trace with itself" "$GP" flame --diff "$X" "$X" -o "$OUT/self.folded"
# identical inputs: every line carries the same count twice
awk '{ if ($(NF-1) != $NF) bad = 1 } END { exit bad }' "$OUT/self.folded" && echo "ok: self diff is even" \
  || fail "self diff has unequal counts"
# issue 38: 20,000 ranges nested on one thread (1.9 MB of JSON) would give 1.5 GB of folded
# stacks: refused with exit 2 before anything is written; --max-output raises the bound and the
# HTML page (one element per frame) has none.
python3 -c '
import json, sys
n = 20000
ev = [{"ph": "X", "cat": "cpu_op", "name": "op_%d" % d, "pid": 1, "tid": 1, "ts": d,
       "dur": 2 * (n - d)} for d in range(n)]
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))' "$OUT/deep.json"
expect 2 "flame: deep nesting over the folded limit" "$GP" flame "$OUT/deep.json" -o "$OUT/deep.folded"
grep -q "over the 268 MB limit" "$OUT/stderr" || fail "deep nesting: the message does not say the limit"
[ -e "$OUT/deep.folded" ] && fail "deep nesting: a refused folded file was written"
expect 2 "flame: deep nesting over the speedscope limit" "$GP" flame "$OUT/deep.json" --max-output 10 -o "$OUT/deep.speedscope.json"
expect 2 "flame: bad --max-output" "$GP" flame "$OUT/deep.json" --max-output lots -o "$OUT/deep.folded"
expect 0 "flame: deep nesting as HTML" "$GP" flame "$OUT/deep.json" -o "$OUT/deep.html"
expect 0 "flame: deep nesting, shallower" "$GP" flame "$OUT/deep.json" --max-depth 50 -o "$OUT/deep.folded"
[ "$(wc -l < "$OUT/deep.folded")" -eq 49 ] || fail "--max-depth 50: want 49 folded lines (the thread frame is depth 1)"
rm -f "$OUT/deep.json" "$OUT/deep.html" "$OUT/deep.folded"
expect 0 "flame --format svg overrides the suffix" "$GP" flame "$X" --format svg -o "$OUT/flame.out"
head -c 5 "$OUT/flame.out" | grep -q '<?xml' || fail "--format svg did not write SVG"
expect 0 "timeline --json" "$GP" timeline "$X" -o "$OUT/t.html" --json
grep -q '"gpu_busy_ns":38000' "$OUT/stdout" || fail "timeline --json: GPU busy should be 30+8 us"
expect 0 "report --json" "$GP" report "$X" -o "$OUT/r.html" --json
grep -q '"operations":7' "$OUT/stdout" || fail "report --json: 7 operations in the fixture"
grep -q '"peak_memory_bytes":null' "$OUT/stdout" || fail "report --json: no memory means null"
# a gpuprof in-process profile: "range" events nest (train_step > forward, backward), a memory
# counter series gives the peak
P="$SRC/tests/report/data/profile_ranges.json"
expect 0 "flame of a profile" "$GP" flame "$P" -o "$OUT/prof.folded"
printf 'thread 1;train_step 100000\nthread 1;train_step;backward 500000\nthread 1;train_step;forward 400000\n' > "$OUT/prof.want"
cmp -s "$OUT/prof.folded" "$OUT/prof.want" && echo "ok: profile stacks" || { fail "profile stacks"; cat "$OUT/prof.folded"; }
expect 0 "report of a profile" "$GP" report "$P" -o "$OUT/prof.html" --json
grep -q '"peak_memory_bytes":3000' "$OUT/stdout" || fail "profile: peak memory from the counter series"
# issue 21 item 12: GPU events that all have zero duration: auto weight falls back to CPU, and
# --weight gpu suggests the weight that works; nothing to weigh at all suggests nothing
cat > "$OUT/zero_gpu.json" <<'EOF'
{"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":10,"args":{"External id":1}},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":6,"dur":0,"args":{"External id":1,"device":0,"stream":7}}
]}
EOF
sed 's/"dur":10/"dur":0/' "$OUT/zero_gpu.json" > "$OUT/all_zero.json"
expect 0 "flame: zero-duration GPU work, auto weight" "$GP" flame "$OUT/zero_gpu.json" -o "$OUT/z.folded"
grep -q 'CPU weight' "$OUT/stdout" || fail "auto weight should fall back to CPU"
expect 2 "flame --weight gpu on zero-duration GPU work" "$GP" flame "$OUT/zero_gpu.json" --weight gpu -o "$OUT/z.folded"
grep -q 'try --weight cpu' "$OUT/stderr" || fail "--weight gpu should suggest --weight cpu"
expect 2 "flame with nothing to weigh" "$GP" flame "$OUT/all_zero.json" -o "$OUT/z.folded"
grep -q 'try --weight' "$OUT/stderr" && fail "nothing to weigh: no weight to suggest"
grep -q 'zero duration' "$OUT/stderr" || fail "nothing to weigh: say why"
# -n caps what --help says: the top-operations list and chart
expect 0 "report -n 2" "$GP" report "$X" -n 2 -o "$OUT/n2.html"
n_list=$(grep -c '<li><span class="gp-name' "$OUT/n2.html")
n_bars=$(sed -n '/id="gp-op-bars"/,/<\/table>/p' "$OUT/n2.html" | grep -c '<tr><td')
[ "$n_list" -eq 2 ] && [ "$n_bars" -eq 2 ] && echo "ok: -n 2 lists 2 operations" \
  || fail "-n 2: $n_list listed, $n_bars bars"
"$GP" report --help | grep -q -- '-n, --top N *operations in the top-operations list' \
  || fail "report --help does not say what -n caps"
[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all CLI checks passed"
