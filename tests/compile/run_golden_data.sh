#!/usr/bin/env bash
# Runs `gpuprof ARGS` inside tests/compile/data (the synthetic inputs, so paths in the output are
# relative) and compares stdout with a golden file.
# Usage: run_golden_data.sh GOLDEN GPUPROF DATA_DIR ARGS...   (GP_UPDATE_GOLDEN=1 rewrites it)
set -u
golden="$1"; gp="$2"; data="$3"; shift 3
out=$(mktemp)
(cd "$data" && "$gp" "$@") > "$out"
rc=$?
if [ $rc -ne 0 ]; then echo "command failed with exit code $rc: $*"; rm -f "$out"; exit 1; fi
if [ "${GP_UPDATE_GOLDEN:-0}" = 1 ]; then cp "$out" "$golden"; rm -f "$out"; echo "updated $golden"; exit 0; fi
if ! diff -u "$golden" "$out"; then echo "output differs from $golden"; rm -f "$out"; exit 1; fi
rm -f "$out"
echo "1 passed, 0 failed"
