#!/usr/bin/env bash
# Runs a gpuprof command and compares its standard output with a golden file.
# Usage: run_golden.sh GOLDEN GPUPROF ARGS...   (GP_UPDATE_GOLDEN=1 rewrites the golden file)
set -u
golden="$1"; shift
out=$(mktemp)
"$@" > "$out"
rc=$?
if [ $rc -ne 0 ]; then echo "command failed with exit code $rc: $*"; rm -f "$out"; exit 1; fi
if [ "${GP_UPDATE_GOLDEN:-0}" = 1 ]; then cp "$out" "$golden"; rm -f "$out"; echo "updated $golden"; exit 0; fi
if ! diff -u "$golden" "$out"; then echo "output differs from $golden"; rm -f "$out"; exit 1; fi
rm -f "$out"
echo "1 passed, 0 failed"
