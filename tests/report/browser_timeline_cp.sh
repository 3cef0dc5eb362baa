#!/bin/sh
# Browser test of the timeline's critical-path overlay (gpuprof timeline --critical-path) on
# modern_h100_timesformer: puppeteer-core drives Debian's chromium (tests/report/browser/
# timeline_cp.js). The expected length is `gpuprof analyze --json --table critical_path`'s.
# usage: browser_timeline_cp.sh GPUPROF SOURCE_DIR OUT_DIR SHARED_DIR
# Exit 77 (ctest SKIP) without chromium, node + puppeteer-core, or the shared trace.
set -u
GPUPROF=$1 SRC=$2 OUT=$3 SHARED=$4
T="$SHARED/traces/modern_h100_timesformer.json.gz"
CHROME=$(command -v chromium || command -v chromium-browser || true)
NODE_DIR=${GP_NODE_DIR:-/usr/local/lib/gpuprof-node}
[ -n "$CHROME" ] || { echo "SKIP: chromium not found"; exit 77; }
command -v node >/dev/null && [ -d "$NODE_DIR/node_modules/puppeteer-core" ] \
  || { echo "SKIP: needs node and puppeteer-core in $NODE_DIR (scripts/install-deps)"; exit 77; }
[ -f "$T" ] || { echo "SKIP: $T absent"; exit 77; }
rm -rf "$OUT" && mkdir -p "$OUT/screenshots"
"$GPUPROF" timeline --critical-path "$T" -o "$OUT/tf_cp.html" -q >/dev/null \
  && "$GPUPROF" analyze --json --table critical_path "$T" > "$OUT/tf_cp_analysis.json" \
  || { echo "FAIL: gpuprof could not write the page or the analysis"; exit 1; }
NODE_PATH="$NODE_DIR/node_modules" timeout 300 node "$SRC/tests/report/browser/timeline_cp.js" \
  "$CHROME" "$OUT"
