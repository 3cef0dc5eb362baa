#!/usr/bin/env bash
# CLI behaviour: --help for every subcommand exits 0 and prints a usage line; bad input exits 2 with
# a message naming the file and byte offset; unknown commands and options exit 2.
# Usage: cli_behaviour.sh GPUPROF SOURCE_DIR
set -u
gp="$1"; src="$2"
pass=0; fail=0
check() { # name expected-rc command...
  local name="$1" want="$2"; shift 2
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" = "$want" ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL $name: exit $rc, wanted $want"; echo "$out" | head -5; fi
  LAST="$out"
}
contains() { # name needle
  if printf '%s' "$LAST" | grep -qF -- "$2"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL $1: output lacks '$2'"; fi
}
for cmd in summary analyze flame timeline report diff trace monitor exporter serve convert hta memory profile; do
  check "$cmd --help" 0 "$gp" "$cmd" --help
  contains "$cmd --help" "usage: gpuprof $cmd"
done
check "top-level --help" 0 "$gp" --help
contains "top-level --help" "commands:"
check "no command" 2 "$gp"
check "unknown command" 2 "$gp" frobnicate
contains "unknown command" "unknown command 'frobnicate'"
# Issue 35: the nearest command, or what users of the tools gpuprof replaces type (seeds), exit 2.
check "misspelt command" 2 "$gp" anaylze
contains "misspelt command" "did you mean \`gpuprof analyze\`?"
check "HTA's word" 2 "$gp" holistic
contains "HTA's word" "did you mean \`gpuprof analyze --hta\`?"
check "a dashboard" 2 "$gp" dashbord
contains "a dashboard" "did you mean \`gpuprof report\`?"
check "a prefix" 2 "$gp" prof
contains "a prefix" "did you mean \`gpuprof profile\`?"
if printf '%s' "$("$gp" frobnicate 2>&1)" | grep -c "did you mean" >/dev/null; then fail=$((fail+1)); echo "FAIL frobnicate got a suggestion"; else pass=$((pass+1)); fi
check "unknown option" 2 "$gp" summary --no-such-option "$src/examples/traces/example_step.json"
check "missing input" 2 "$gp" summary /nonexistent/trace.json
contains "missing input" "/nonexistent/trace.json"
check "malformed input" 2 "$gp" summary "$src/tests/data/malformed/missing_comma.json"
contains "malformed input" "missing_comma.json: byte 61: expected ',' or ']' between events"
check "truncated gzip" 2 "$gp" summary "$src/tests/data/malformed/truncated_gzip.json.gz"
contains "truncated gzip" "truncated gzip stream"
check "bad kind" 2 "$gp" summary --kind bogus "$src/examples/traces/example_step.json"
contains "bad kind" "unknown kind 'bogus'"
# Machine output holds every row unless --top is given (the fixture has 13 op names).
nested="$src/tests/cli/data/nested_ops.json"
rows=$("$gp" summary --csv "$nested" | grep -c '^cpu_op,')
if [ "$rows" = 13 ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL summary --csv: $rows cpu_op rows, wanted 13"; fi
rows=$("$gp" summary --json "$nested" | grep -oE '"kind":"cpu_op","calls":[0-9]+,"total_ns":[0-9]+,"mean_ns"' | wc -l)
if [ "$rows" = 13 ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL summary --json: $rows cpu_op rows, wanted 13"; fi
rows=$("$gp" summary --csv --top 3 "$nested" | grep -c '^cpu_op,')
if [ "$rows" = 3 ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL summary --csv --top 3: $rows cpu_op rows, wanted 3"; fi
check "summary --kind cpu_op with kernels" 0 "$gp" summary --kind cpu_op "$nested"
if printf '%s' "$LAST" | grep -q "no GPU events"; then fail=$((fail+1)); echo "FAIL --kind cpu_op claims no GPU events"; else pass=$((pass+1)); fi
contains "summary --kind cpu_op with kernels" "GPU work (2 kernels, 0 copies, 0 memsets; GPU work sum 0.100 ms) is not shown"
check "summary --kind memcpy, none there" 0 "$gp" summary --kind memcpy "$nested"
contains "summary --kind memcpy, none there" "no timed events of the selected kinds (gpu_memcpy) in the input"
tmp=$(mktemp -d)
check "convert" 0 "$gp" convert "$src/examples/traces/example_step.json" -o "$tmp/out.json.gz"
check "convert output reads back" 0 "$gp" summary -q "$tmp/out.json.gz"
check "convert into missing dir" 2 "$gp" convert "$src/examples/traces/example_step.json" -o /nonexistent-dir/x.json
contains "convert into missing dir" "/nonexistent-dir/x.json"
# A failed run leaves an existing output untouched and no temporary file beside it.
printf 'previous content\n' > "$tmp/keep.json"
check "convert of a malformed file" 2 "$gp" convert "$src/tests/data/malformed/truncated.json" -o "$tmp/keep.json"
if [ "$(cat "$tmp/keep.json")" = "previous content" ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL existing output was changed"; fi
if ls "$tmp" | grep -q '\.tmp\.'; then fail=$((fail+1)); echo "FAIL temporary file left behind"; else pass=$((pass+1)); fi
# Output that cannot be written is an error, not a silent success.
if [ -w /dev/full ]; then
  LAST=$("$gp" summary "$src/examples/traces/example_step.json" 2>&1 >/dev/full); rc=$?
  if [ $rc = 2 ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL summary >/dev/full: exit $rc"; fi
  contains "summary to a full device" "writing the output failed"
  "$gp" convert "$src/examples/traces/example_step.json" -o - >/dev/full 2>/dev/null; rc=$?
  if [ $rc = 2 ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL convert -o - >/dev/full: exit $rc"; fi
  # Every command that writes to stdout: a failed write exits 2 with a message.
  ex="$src/examples/traces/example_step.json"; full=$(mktemp -d)
  while IFS= read -r args; do
    eval "set -- $args"
    LAST=$("$gp" "$@" 2>&1 >/dev/full); rc=$?
    if [ $rc = 2 ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL $args >/dev/full: exit $rc"; fi
    case "$1" in convert) ;; diff) contains "$args >/dev/full" "writing to stdout failed" ;;
      *) contains "$args >/dev/full" "gpuprof $1: writing the output failed" ;; esac
  done <<EOT
summary "$ex"
summary --json "$ex"
summary --csv "$ex"
analyze "$ex"
analyze --json "$ex"
flame "$ex" -o "$full/f.html"
timeline "$ex" -o "$full/t.html"
timeline "$ex" -o "$full/t.html" --json
report "$ex" -o "$full/r.html"
report "$ex" -o "$full/r.html" --json
diff "$ex" "$ex"
diff --json "$ex" "$ex"
convert "$ex" -o -
memory "$ex"
memory --json "$ex"
hta --json "$ex"
EOT
  rm -rf "$full"
fi
# Monitor configuration options (shared by monitor and exporter) fail at parse time, before NVML.
check "monitor --set without =" 2 "$gp" monitor --set nokey
contains "monitor --set without =" "--set 'nokey': expected KEY=VALUE"
check "exporter --level without a value" 2 "$gp" exporter --level
contains "exporter --level without a value" "--level needs a value"
check "exporter has no --mode" 2 "$gp" exporter --mode profiling
contains "exporter has no --mode" "unknown or incomplete option '--mode'"
check "monitor --config missing file" 2 "$gp" monitor --config /nonexistent/mon.yaml
contains "monitor --config missing file" "/nonexistent/mon.yaml"
# --threads: bounded, and the output does not depend on it (the example is read in pieces with 4).
check "analyze --threads 17" 2 "$gp" analyze --threads 17 "$src/examples/traces/example_step.json"
contains "analyze --threads 17" "--threads needs a whole number in 0..16"
"$gp" analyze --json --threads 1 "$src/examples/traces/example_step.json" >"$tmp/t1.json" 2>/dev/null
"$gp" analyze --json --threads 4 "$src/examples/traces/example_step.json" >"$tmp/t4.json" 2>/dev/null
if [ -s "$tmp/t1.json" ] && cmp -s "$tmp/t1.json" "$tmp/t4.json"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL analyze --threads 1 and 4 differ"; fi
# The critical path's options: bad values are usage errors; the table, the CSV file and the overlay.
ex1="$src/examples/traces/example_step.json"
check "analyze --critical-path bogus" 2 "$gp" analyze --critical-path bogus "$ex1"
contains "analyze --critical-path bogus" "--critical-path takes default, hta or off, not 'bogus'"
check "analyze --cp-instance -1" 2 "$gp" analyze --cp-instance -1 "$ex1"
contains "analyze --cp-instance -1" "--cp-instance needs a whole number >= 0"
check "analyze --data-load ''" 2 "$gp" analyze --data-load "" "$ex1"
contains "analyze --data-load ''" "--data-load needs a non-empty pattern"
check "analyze --table critical_path" 0 "$gp" analyze --table critical_path "$ex1"
contains "analyze --table critical_path" "CRITICAL PATH"
check "analyze --critical-path off" 0 "$gp" analyze --json --critical-path off "$ex1"
contains "analyze --critical-path off" '"critical_path":[]'
check "analyze --csv critical_path" 0 "$gp" analyze --csv "$tmp/csv" --table critical_path "$ex1"
if head -1 "$tmp/csv/critical_path.csv" 2>/dev/null | grep -q '^rank,step,region,row_type'; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL critical_path.csv header"; fi
check "convert --critical-path" 0 "$gp" convert --critical-path "$ex1" -o "$tmp/overlay.json"
if grep -q '"critical":1' "$tmp/overlay.json" && grep -q '"cat":"critical_path"' "$tmp/overlay.json"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL convert --critical-path marks nothing"; fi
check "convert --cp-mode bogus" 2 "$gp" convert --critical-path --cp-mode bogus "$ex1" -o "$tmp/o2.json"
contains "convert --cp-mode bogus" "--cp-mode takes default or hta"
rm -rf "$tmp"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
