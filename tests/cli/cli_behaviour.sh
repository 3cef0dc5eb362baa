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
for cmd in summary analyze flame timeline report diff trace monitor exporter serve convert; do
  check "$cmd --help" 0 "$gp" "$cmd" --help
  contains "$cmd --help" "usage: gpuprof $cmd"
done
check "top-level --help" 0 "$gp" --help
contains "top-level --help" "commands:"
check "no command" 2 "$gp"
check "unknown command" 2 "$gp" frobnicate
contains "unknown command" "unknown command 'frobnicate'"
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
rm -rf "$tmp"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
