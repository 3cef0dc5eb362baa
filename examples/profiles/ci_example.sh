#!/bin/sh
# The worked CI example of docs/ci.md: gate on `gpuprof diff --fail-on-regression`.
#
#   examples/profiles/ci_example.sh [GPUPROF]
#
# GPUPROF is the gpuprof binary (default: $GPUPROF, else build/gpuprof under the repository
# root). Compares the two bundled profiles (base.json, current.json: the current run has a +15 %
# "backward" range) and checks every exit code a CI job relies on:
#   current vs base  -> 1 (a significant regression), JUnit names the failing case
#   base vs base     -> 0 (nothing changed)
#   a missing input  -> 2 (bad input is not a regression)
# Prints "ci_example: OK" and exits 0 when all hold; otherwise says which did not and exits 1.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
gpuprof=${1:-${GPUPROF:-$root/build/gpuprof}}
if [ ! -x "$gpuprof" ]; then
    echo "ci_example: no gpuprof binary at $gpuprof (build first, or pass its path)" >&2
    exit 1
fi
out=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-ci-example.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT
failed=0

# 1. The gate: the regression must fail the job with exit code 1.
"$gpuprof" diff --fail-on-regression --junit "$out/diff.junit.xml" --html "$out/diff.html" \
    "$here/base.json" "$here/current.json" >"$out/diff.txt"
rc=$?
if [ "$rc" -ne 1 ]; then
    echo "ci_example: current vs base exited $rc, expected 1 (regression)" >&2
    failed=1
fi
if ! grep -q '<testcase classname="gpuprof.diff.range" name="backward">' "$out/diff.junit.xml" ||
    ! grep -q '<failure type="REGRESSION"' "$out/diff.junit.xml"; then
    echo "ci_example: the JUnit report does not fail the 'backward' case" >&2
    failed=1
fi
if ! grep -q '^backward ' "$out/diff.txt"; then
    echo "ci_example: the text report does not list 'backward' as a regression" >&2
    failed=1
fi
[ -s "$out/diff.html" ] || { echo "ci_example: no HTML page written" >&2; failed=1; }

# 2. No change: comparing a profile with itself passes.
"$gpuprof" diff --fail-on-regression "$here/base.json" "$here/base.json" >/dev/null
rc=$?
if [ "$rc" -ne 0 ]; then
    echo "ci_example: base vs base exited $rc, expected 0" >&2
    failed=1
fi

# 3. Bad input is exit code 2, distinct from a regression.
"$gpuprof" diff --fail-on-regression "$here/base.json" "$out/missing.json" >/dev/null 2>&1
rc=$?
if [ "$rc" -ne 2 ]; then
    echo "ci_example: a missing input exited $rc, expected 2" >&2
    failed=1
fi

if [ "$failed" -ne 0 ]; then
    exit 1
fi
echo "ci_example: OK (regression -> 1, no change -> 0, bad input -> 2)"
