#!/bin/sh
# The `gpuprof compile` command line: help, input errors and exit codes, warnings on stderr, the
# HTML report (written atomically; one row per compile id, payloads embedded).
# usage: test_compile_cli.sh GPUPROF SHARED_DIR   (exit 77 when the shared compile logs are absent)
set -u
gp=$1
logs=$2/compile-logs
[ -d "$logs" ] || { echo "no shared compile logs: skipped"; exit 77; }
out=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-compile-cli.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT
fails=0
. "$(dirname "$0")/../common/cli_check.sh"

check 0 "--help" -- "$gp" compile --help
has "$out/stdout" "usage: gpuprof compile" "--help text"
check 2 "no input" -- "$gp" compile
check 2 "two logs" -- "$gp" compile "$logs/simple.log" "$logs/export.log"
check 2 "three traces" -- "$gp" compile --trace a --trace b --trace c
check 2 "missing log" -- "$gp" compile "$out/nope.log"
has "$out/stderr" "nope.log" "missing-file message names the file"
printf 'hello\nworld\n' >"$out/junk.log"
check 2 "not a log" -- "$gp" compile "$out/junk.log"
has "$out/stderr" "junk.log: not a TORCH_TRACE log" "not-a-log message"
check 2 "unknown option" -- "$gp" compile --bogus "$logs/simple.log"
# A corrupt line is a warning with file and line; the rest is read and the exit code is 0.
head -20 "$logs/simple.log" >"$out/bad.log"
printf 'V1206 15:18:21.916000 1 x.py:1] {"compilation_metrics": {"co_name": \n' >>"$out/bad.log"
tail -n +21 "$logs/simple.log" >>"$out/bad.log"
check 0 "corrupt line" -- "$gp" compile "$out/bad.log"
has "$out/stderr" "bad.log: line 21: invalid JSON" "corrupt line warning"
has "$out/stdout" "compiles 1" "the rest of a log with a corrupt line"
check 0 "corrupt line, quiet" -- "$gp" compile -q "$out/bad.log"
[ -s "$out/stderr" ] && { echo "FAIL: -q still warns" >&2; fails=$((fails + 1)); }
# A gzip bomb (one 80 MiB line in ~80 KB, issue 38): an input-limit error, exit 2, file and line.
{ printf 'V1206 15:18:20.253000 1 x.py:1] {"str": ["'
  head -c 83886080 /dev/zero | tr '\0' a
  printf '", 0]}\n'; } | gzip -1 >"$out/bomb.log.gz"
check 2 "one-line gzip bomb" -- "$gp" compile "$out/bomb.log.gz"
has "$out/stderr" "bomb.log.gz: line 1 (byte 0): longer than 64 MiB" "bomb message: file and line"
# The HTML report.
check 0 "html" -- "$gp" compile --html "$out/r.html" --title "T<1>" "$logs/multi_rank_logs"
has "$out/r.html" "<title>T&lt;1&gt;</title>" "escaped title"
rows=$(grep -c '<tr id="u' "$out/r.html")
[ "$rows" = 24 ] || { echo "FAIL: html has $rows compile id rows, wanted 24" >&2; fails=$((fails + 1)); }
has "$out/r.html" "cpp_fused_sum_0 = async_compile.cpp_pybinding" "generated code embedded"
has "$out/r.html" "Divergence: compiles differ across ranks" "rank divergence"
check 2 "html into a missing directory" -- "$gp" compile --html "$out/no/dir/r.html" "$logs/simple.log"
printf 'old\n' >"$out/keep.html"
check 2 "failed run keeps an old report" -- "$gp" compile --html "$out/keep.html" "$out/junk.log"
[ "$(cat "$out/keep.html")" = old ] || { echo "FAIL: old report changed" >&2; fails=$((fails + 1)); }
if [ -w /dev/full ]; then
    "$gp" compile "$logs/simple.log" >/dev/full 2>"$out/stderr"
    [ $? -eq 2 ] || { echo "FAIL: a full disk is not an error" >&2; fails=$((fails + 1)); }
fi
[ $fails -eq 0 ] && echo "all passed"
exit $fails
