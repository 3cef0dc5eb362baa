#!/usr/bin/env bash
# Runs tests/cli/run_golden.sh (gpuprof ARGS against a golden file) inside DATA_DIR, the synthetic
# inputs, so the paths in the output are relative.
# Usage: run_golden_data.sh GOLDEN GPUPROF DATA_DIR ARGS...   (GP_UPDATE_GOLDEN=1 rewrites it)
set -u
golden="$1"; gp="$2"; data="$3"; shift 3
here=$(cd "$(dirname "$0")" && pwd)
cd "$data" && exec "$here/../cli/run_golden.sh" "$golden" "$gp" "$@"
