#!/usr/bin/env bash
# Runs `gpuprof compile ARGS` inside the shared compile-logs directory (so the paths in the output
# are relative and the same on every machine) and compares stdout with a golden file.
# Usage: run_golden.sh GOLDEN GPUPROF SHARED_DIR ARGS...   (GP_UPDATE_GOLDEN=1 rewrites the golden)
# Exit 77 (skip) when SHARED_DIR/compile-logs is absent.
set -u
golden="$1"; gp="$2"; shared="$3"; shift 3
[ -d "$shared/compile-logs" ] || { echo "no shared compile logs: skipped"; exit 77; }
out=$(mktemp)
(cd "$shared" && "$gp" compile -q "$@") > "$out"
rc=$?
if [ $rc -ne 0 ]; then echo "command failed with exit code $rc: $*"; rm -f "$out"; exit 1; fi
if [ "${GP_UPDATE_GOLDEN:-0}" = 1 ]; then cp "$out" "$golden"; rm -f "$out"; echo "updated $golden"; exit 0; fi
if ! diff -u "$golden" "$out"; then echo "output differs from $golden"; rm -f "$out"; exit 1; fi
rm -f "$out"
echo "1 passed, 0 failed"
