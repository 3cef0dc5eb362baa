#!/usr/bin/env bash
# The idle causes filled in one pass per launching thread (the default) against the stored
# timelines (GP_IDLE_CAUSES=stored), on every shared trace and the 8-rank job: `analyze --json`
# must be byte-identical (src/analyze/idle_causes_pass.c; docs/internals/analyze.md).
#   check_idle_causes_pass.sh GPUPROF SHARED_DIR      exit 77 (skip) when the traces are absent
set -euo pipefail
cli=$1
traces=$2/traces
[[ -d $traces ]] || { echo "no traces at $traces: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 rows=0
for f in "$traces"/*.json.gz "$traces"/multirank8_dlrm_v100; do
  [[ -e $f ]] || continue
  "$cli" analyze --json -q "$f" >"$tmp/pass.json"
  GP_IDLE_CAUSES=stored "$cli" analyze --json -q "$f" >"$tmp/stored.json"
  if ! cmp -s "$tmp/pass.json" "$tmp/stored.json"; then
    echo "FAIL $(basename "$f"): the two ways differ"
    diff <(grep -n . "$tmp/stored.json") <(grep -n . "$tmp/pass.json") | head -20
    exit 1
  fi
  r=$( (grep -o '"scope": *"[a-z]*"' "$tmp/pass.json" || true) | wc -l)
  rows=$((rows + r))
  n=$((n + 1))
done
# the comparison says something only if rows were compared
if ((n == 0 || rows == 0)); then
  echo "FAIL: $n traces, $rows idle-cause rows compared"
  exit 1
fi
echo "ok: $n traces, $rows idle-cause rows, byte-identical both ways"
