#!/bin/sh
# Browser test of the flame page's views (the first view's name, folded Python frames, merged
# ProfilerStep#N, the status line) on modern_h100_timesformer and medium_a100_nccl: puppeteer-core
# drives Debian's chromium (tests/report/browser/flame_views.js).
# usage: browser_flame_views.sh GPUPROF SOURCE_DIR OUT_DIR SHARED_DIR
# Exit 77 (ctest SKIP) without chromium, node + puppeteer-core, or the shared traces.
set -u
GPUPROF=$1 SRC=$2 OUT=$3 SHARED=$4
T="$SHARED/traces/modern_h100_timesformer.json.gz" N="$SHARED/traces/medium_a100_nccl.json.gz"
CHROME=$(command -v chromium || command -v chromium-browser || true)
NODE_DIR=${GP_NODE_DIR:-/usr/local/lib/gpuprof-node}
[ -n "$CHROME" ] || { echo "SKIP: chromium not found"; exit 77; }
command -v node >/dev/null && [ -d "$NODE_DIR/node_modules/puppeteer-core" ] \
  || { echo "SKIP: needs node and puppeteer-core in $NODE_DIR (scripts/install-deps)"; exit 77; }
[ -f "$T" ] && [ -f "$N" ] || { echo "SKIP: $T or $N absent"; exit 77; }
rm -rf "$OUT" && mkdir -p "$OUT/screenshots"
"$GPUPROF" flame "$T" -o "$OUT/tf_flame.html" >/dev/null \
  && "$GPUPROF" flame "$N" -o "$OUT/nccl_flame.html" >/dev/null \
  || { echo "FAIL: gpuprof could not write the pages"; exit 1; }
NODE_PATH="$NODE_DIR/node_modules" timeout 300 node "$SRC/tests/report/browser/flame_views.js" \
  "$CHROME" "$OUT"
