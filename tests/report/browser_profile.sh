#!/bin/sh
# Browser test of the dashboard of an in-process profile: runs examples/profiler (profiler_demo,
# CPU work; no GPU needed), writes `gpuprof report` of its profile.json, opens it in headless
# Chromium and asserts that the profile's sections are there with non-empty charts; saves a
# screenshot under OUT/screenshots.
# usage: browser_profile.sh GPUPROF PROFILER_DEMO OUT_DIR
# Exit 77 (ctest SKIP) when chromium is absent.
set -u
GPUPROF=$1 DEMO=$2 OUT=$3
CHROME=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROME" ] || { echo "SKIP: chromium not found"; exit 77; }
rm -rf "$OUT" && mkdir -p "$OUT/screenshots"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

"$DEMO" -o "$OUT/demo" --batches 3 >/dev/null 2>&1 || { echo "FAIL: profiler_demo"; exit 1; }
"$GPUPROF" report "$OUT/demo/profile.json" -o "$OUT/profile_report.html" >/dev/null \
  || { echo "FAIL: gpuprof report"; exit 1; }

prof=$(mktemp -d)
timeout 90 "$CHROME" --headless=new --no-sandbox --disable-gpu --disable-background-networking \
  --disable-component-update --no-first-run --user-data-dir="$prof" --virtual-time-budget=5000 \
  --dump-dom "file://$OUT/profile_report.html" > "$OUT/profile_report.dom" 2>/dev/null
rm -rf "$prof"
D="$OUT/profile_report.dom"
grep -q '<html[^>]*data-ready="1"' "$D" && ok "report ready" || fail "report never marked itself ready"

# section ID: the lines from the element with id=ID to the end of its table or list
part() { sed -n "/id=\"$1\"/,/<\/\(table\|ol\)>/p" "$D"; }
count() { part "$1" | grep -o "$2" | wc -l; }
# the distribution bar: a segment per operation (at least 3 ops in the demo), each with width
n=$(part gp-prof-dist | grep -o '<rect[^>]*width="[0-9.]*[1-9][0-9.]*"' | wc -l)
[ "$n" -ge 3 ] && ok "time distribution: $n operation segments" || fail "time distribution: $n segments"
n=$(count gp-prof-mean '<tr')
[ "$n" -ge 4 ] && ok "mean time and calls: $((n - 1)) operations" || fail "mean/calls: $n rows"
n=$(part gp-prof-split | grep -o '<rect[^>]*width="[0-9.]*[1-9][0-9.]*"' | wc -l)
[ "$n" -ge 3 ] && ok "GPU/CPU/transfer/overhead split: $n segments" || fail "split: $n segments"
n=$(count gp-prof-top '<li')
[ "$n" -eq 5 ] && ok "top 5 bottlenecks" || fail "top bottlenecks: $n items"
n=$(count gp-prof-stats '<tr')
[ "$n" -ge 4 ] && ok "statistics table: $((n - 1)) operations" || fail "statistics: $n rows"
grep -q 'id="gp-mem-na"' "$D" && fail "memory chart: no memory samples" || true
grep -q '<svg class="gp-mem" id="gp-mem"' "$D" && grep -q 'mem_peak_bytes' "$D" \
  && ok "memory over time from the ranges" || fail "memory chart missing"
grep -q '<canvas' "$D" && ok "operation timeline drawn" || fail "timeline: no canvas"

prof=$(mktemp -d)
timeout 90 "$CHROME" --headless=new --no-sandbox --disable-gpu --disable-background-networking \
  --disable-component-update --no-first-run --user-data-dir="$prof" --hide-scrollbars \
  --virtual-time-budget=5000 --window-size=1300,1500 \
  --screenshot="$OUT/screenshots/profile_report.png" "file://$OUT/profile_report.html" \
  >/dev/null 2>&1
rm -rf "$prof"
[ -s "$OUT/screenshots/profile_report.png" ] && ok "screenshot" || fail "no screenshot"
[ $fails -eq 0 ] || exit 1
