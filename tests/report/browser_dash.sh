#!/bin/sh
# Browser interaction tests of the dashboard, the ops page, the compile pages and the profile
# server's pages (issue 36): writes the pages from the shared traces and a generated 100,000-row
# fixture (browser/make_dash_fixture.py), then puppeteer-core drives Debian's chromium
# (tests/report/browser/dash.js). Screenshots land under OUT_DIR/screenshots.
# usage: browser_dash.sh GPUPROF SOURCE_DIR OUT_DIR SHARED_DIR
# Exit 77 (ctest SKIP) without chromium, node + puppeteer-core, python3 or the shared traces.
set -u
GPUPROF=$1 SRC=$2 OUT=$3 SHARED=$4
TR="$SHARED/traces"
CHROME=$(command -v chromium || command -v chromium-browser || true)
NODE_DIR=${GP_NODE_DIR:-/usr/local/lib/gpuprof-node}
[ -n "$CHROME" ] || { echo "SKIP: chromium not found"; exit 77; }
command -v node >/dev/null && [ -d "$NODE_DIR/node_modules/puppeteer-core" ] \
  || { echo "SKIP: needs node and puppeteer-core in $NODE_DIR (scripts/install-deps)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 absent"; exit 77; }
[ -f "$TR/modern_h100_vit.json.gz" ] || { echo "SKIP: $TR/modern_h100_vit.json.gz absent"; exit 77; }
rm -rf "$OUT" && mkdir -p "$OUT/screenshots"
fail() { echo "FAIL: $*"; exit 1; }
python3 "$SRC/tests/report/browser/make_dash_fixture.py" "$OUT/big.json" || fail "fixture"
"$GPUPROF" report "$OUT/big.json" -o "$OUT/big_report.html" >/dev/null || fail "report of the fixture"
"$GPUPROF" report "$TR/modern_h100_vit.json.gz" -o "$OUT/vit_report.html" >/dev/null || fail "vit report"
if [ -f "$TR/modern_h100_timesformer.json.gz" ]; then
  "$GPUPROF" report "$TR/modern_h100_timesformer.json.gz" -o "$OUT/tf_report.html" >/dev/null \
    || fail "timesformer report"
fi
if [ -d "$TR/multirank8_dlrm_v100" ]; then
  "$GPUPROF" report "$TR/multirank8_dlrm_v100" -o "$OUT/dlrm_report.html" >/dev/null || fail "dlrm report"
fi
if [ -f "$TR/modern_h100_timesformer.json.gz" ]; then
  "$GPUPROF" ops "$TR/modern_h100_timesformer.json.gz" --html "$OUT/tf_ops.html" -q >/dev/null \
    && "$GPUPROF" ops "$TR/modern_h100_timesformer.json.gz" --csv -q | tail -n +2 | grep -vc '^TOTAL' \
      > "$OUT/tf_ops.rows" || fail "timesformer ops page"
fi
if [ -d "$TR/multirank8_dlrm_v100" ]; then
  "$GPUPROF" ops "$TR/multirank8_dlrm_v100" --html "$OUT/dlrm_ops.html" -q >/dev/null || fail "dlrm ops page"
fi
CL="$SHARED/compile-logs"
if [ -d "$CL/multi_rank_logs" ] && [ -f "$CL/comp_metrics.log" ]; then
  "$GPUPROF" compile "$CL/multi_rank_logs" --html "$OUT/cc_multi.html" -q >/dev/null \
    && "$GPUPROF" compile "$CL/comp_metrics.log" --html "$OUT/cc_metrics.html" -q >/dev/null \
    || fail "compile pages"
fi
fails=0
"$GPUPROF" ops --help | grep -c -- '--html FILE' >/dev/null && echo "ok: ops --help lists --html" \
  || { echo "FAIL: ops --help does not list --html"; fails=1; }
# gpuprof serve on a folder of links to the shared traces (nothing copied)
SERVE_URL=
if [ -f "$TR/modern_mi300_torch_compile.json.gz" ]; then
  mkdir -p "$OUT/served"
  TRA=$(cd "$TR" && pwd) # the links' targets, absolute
  ln -s "$TRA/modern_h100_vit.json.gz" "$OUT/served/vit.json.gz"
  ln -s "$TRA/modern_mi300_torch_compile.json.gz" "$OUT/served/compiled.json.gz"
  "$GPUPROF" serve --dir "$OUT/served" --listen 127.0.0.1:0 --port-file "$OUT/port" \
    --follow-symlinks 2>"$OUT/serve.stderr" &
  SERVE_PID=$!
  trap 'kill $SERVE_PID 2>/dev/null' EXIT
  for _ in $(seq 100); do [ -s "$OUT/port" ] && break; sleep 0.1; done
  [ -s "$OUT/port" ] && SERVE_URL="http://127.0.0.1:$(cat "$OUT/port")" || echo "FAIL: serve did not start"
  "$GPUPROF" report "$TR/modern_mi300_torch_compile.json.gz" -o "$OUT/compiled_report.html" >/dev/null \
    || fail "report of the compiled trace"
fi
NODE_PATH="$NODE_DIR/node_modules" timeout 400 node "$SRC/tests/report/browser/dash.js" "$CHROME" "$OUT" \
  $SERVE_URL || fails=1
exit $fails
