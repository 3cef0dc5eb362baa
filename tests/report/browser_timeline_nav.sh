#!/bin/sh
# Browser test of the timeline's navigation (search, level of detail, framing, #sel= links, the
# tooltip on scroll, folded Python frames, the ruler's origin, the selection table, a job's first
# view) on modern_h100_timesformer and the 8-rank job: puppeteer-core drives Debian's chromium
# (tests/report/browser/timeline_nav.js).
# usage: browser_timeline_nav.sh GPUPROF SOURCE_DIR OUT_DIR SHARED_DIR
# Exit 77 (ctest SKIP) without chromium, node + puppeteer-core, or the shared traces.
set -u
GPUPROF=$1 SRC=$2 OUT=$3 SHARED=$4
T="$SHARED/traces/modern_h100_timesformer.json.gz" J="$SHARED/traces/multirank8_dlrm_v100"
CHROME=$(command -v chromium || command -v chromium-browser || true)
NODE_DIR=${GP_NODE_DIR:-/usr/local/lib/gpuprof-node}
[ -n "$CHROME" ] || { echo "SKIP: chromium not found"; exit 77; }
command -v node >/dev/null && [ -d "$NODE_DIR/node_modules/puppeteer-core" ] \
  || { echo "SKIP: needs node and puppeteer-core in $NODE_DIR (scripts/install-deps)"; exit 77; }
[ -f "$T" ] && [ -d "$J" ] || { echo "SKIP: $T or $J absent"; exit 77; }
rm -rf "$OUT" && mkdir -p "$OUT/screenshots"
"$GPUPROF" timeline "$T" -o "$OUT/tf_timeline.html" -q >/dev/null \
  && "$GPUPROF" timeline "$J" -o "$OUT/dlrm_timeline.html" -q >/dev/null \
  || { echo "FAIL: gpuprof could not write the pages"; exit 1; }
NODE_PATH="$NODE_DIR/node_modules" timeout 300 node "$SRC/tests/report/browser/timeline_nav.js" \
  "$CHROME" "$OUT"
