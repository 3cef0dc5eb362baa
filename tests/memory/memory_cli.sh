#!/usr/bin/env bash
# gpuprof memory and gpuprof hta as commands: the page (-o) holds one chart per allocator with the
# peak the JSON gives, --json -o writes the JSON into the file, a trace without memory events is
# not an error and says what to record, bad input exits 2.
# Usage: memory_cli.sh GPUPROF SOURCE_DIR
set -u
gp="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; src="$2"
small="$src/tests/memory/data/memory_small.json"
ex="$src/examples/traces/example_step.json"
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL $*"; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

"$gp" memory "$small" -o "$tmp/m.html" >/dev/null || bad "memory -o"
charts=$(grep -o '<svg id="gp-mem-chart-[0-9]*"' "$tmp/m.html" | wc -l)
[ "$charts" = 3 ] && ok || bad "memory page: $charts charts, wanted 3 (CUDA:0, CUDA:1, CPU)"
# CUDA:0's peak: 13824 bytes (tests/memory/README.md)
grep -c 'data-peak="13824"' "$tmp/m.html" >/dev/null && ok || bad "memory page lacks CUDA:0's peak"
grep -c '<script' "$tmp/m.html" >/dev/null && bad "memory page has a script" || ok
"$gp" memory --json -o "$tmp/m.json" "$small" >/dev/null || bad "memory --json -o"
"$gp" memory --json "$small" | cmp -s - "$tmp/m.json" && ok || bad "memory --json -o differs from stdout"
out=$("$gp" memory "$src/tests/cli/data/nested_ops.json" 2>&1); rc=$?
[ $rc = 0 ] && ok || bad "memory without memory events: exit $rc"
case "$out" in *"record with profile_memory=True"*) ok ;; *) bad "memory without events: $out" ;; esac
"$gp" memory /nonexistent.json >/dev/null 2>&1; [ $? = 2 ] && ok || bad "memory of a missing file"
"$gp" memory >/dev/null 2>&1; [ $? = 2 ] && ok || bad "memory without input"

# gpuprof hta: --json is the "hta" view (analyze --json --hta with HTA's tables), the page its
# breakdowns
"$gp" hta --json "$ex" >"$tmp/h.json" || bad "hta --json"
"$gp" analyze --json --hta --table temporal --table idle --table kernel_types --table top_kernels \
  --table overlap --table queue "$ex" | cmp -s - "$tmp/h.json" && ok || bad "hta --json != analyze --json --hta"
(cd "$tmp" && "$gp" hta "$ex" >/dev/null) || bad "hta (default output)"
[ -s "$tmp/hta_report.html" ] && ok || bad "hta wrote no hta_report.html"
grep -c 'id="gp-hta-kernels"' "$tmp/hta_report.html" >/dev/null && ok || bad "hta page lacks the top kernels"
grep -c 'gp-hta' "$tmp/hta_report.html" >/dev/null && ok || bad "hta page lacks the breakdowns"
"$gp" hta /nonexistent.json >/dev/null 2>&1; [ $? = 2 ] && ok || bad "hta of a missing file"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
