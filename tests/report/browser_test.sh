#!/bin/sh
# Browser tests of the report outputs: opens flame.html, flame.svg, timeline.html and report.html
# in headless Chromium (no network, fresh profile), waits for the page to mark itself drawn
# (data-ready="1" on the root element), asserts on the DOM and saves screenshots under OUT.
# usage: browser_test.sh GPUPROF SOURCE_DIR OUT_DIR SHARED_DIR
# Exit 77 (ctest SKIP) when chromium is absent. The shared-trace part runs when SHARED_DIR has
# the traces; the escaping part always runs on tests/report/data/xss_trace.json.
set -u
GPUPROF=$1 SRC=$2 OUT=$3 SHARED=$4
CHROME=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROME" ] || { echo "SKIP: chromium not found"; exit 77; }
rm -rf "$OUT" && mkdir -p "$OUT/screenshots"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

chrome() { # chrome MODE(dom|shot) URL [OUTPNG] [WINDOW]
  prof=$(mktemp -d)
  if [ "$1" = dom ]; then
    timeout 90 "$CHROME" --headless=new --no-sandbox --disable-gpu --disable-background-networking \
      --disable-component-update --no-first-run --user-data-dir="$prof" \
      --virtual-time-budget=5000 --dump-dom "$2" 2>/dev/null
  else
    timeout 90 "$CHROME" --headless=new --no-sandbox --disable-gpu --disable-background-networking \
      --disable-component-update --no-first-run --user-data-dir="$prof" --hide-scrollbars \
      --virtual-time-budget=5000 --window-size="${4:-1300,900}" --screenshot="$3" "$2" \
      >/dev/null 2>&1
  fi
  rc=$?
  rm -rf "$prof"
  return $rc
}

ready() { grep -q '<html[^>]*data-ready="1"' "$1" || grep -q '<svg[^>]*data-ready="1"' "$1"; }
attr() { # attr FILE ELEMENT-ID ATTR -> value
  grep -o "id=\"$2\"[^>]*" "$1" | head -1 | grep -o "$3=\"[^\"]*\"" | head -1 | sed 's/.*="\(.*\)"/\1/'
}

# ---- escaping: a kernel and an op named <script>alert(1)</script> render as text -----------
X="$SRC/tests/report/data/xss_trace.json"
for kind in flame.html flame.svg timeline.html report.html; do
  case $kind in
    flame.*) "$GPUPROF" flame "$X" -o "$OUT/xss_$kind" >/dev/null ;;
    timeline.html) "$GPUPROF" timeline "$X" -o "$OUT/xss_$kind" >/dev/null ;;
    report.html) "$GPUPROF" report "$X" -o "$OUT/xss_$kind" >/dev/null ;;
  esac || { fail "gpuprof could not write xss_$kind"; continue; }
  view=; [ $kind = flame.html ] && view='#v=table' # names as text: the self-time table
  chrome dom "file://$OUT/xss_$kind$view" > "$OUT/xss_$kind.dom" || fail "chromium on xss_$kind"
  ready "$OUT/xss_$kind.dom" || fail "xss_$kind never marked itself ready (script failed?)"
  if grep -q '<script>alert(1)</script>' "$OUT/xss_$kind.dom"; then
    fail "xss_$kind: the name became a <script> element"
  else ok "xss_$kind: no injected element"; fi
  case $kind in
    timeline.html) ;; # names live in the canvas and the JSON only
    *) grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' "$OUT/xss_$kind.dom" \
         && ok "xss_$kind: name shown as text" || fail "xss_$kind: name not shown as text" ;;
  esac
done
chrome shot "file://$OUT/xss_report.html" "$OUT/screenshots/xss_report.png" 1300,1600

# ---- a shared trace through every output --------------------------------------------------
T="$SHARED/traces/small_alexnet_cudasync.json.gz"
if [ ! -f "$T" ]; then
  echo "shared traces absent: only the escaping part ran (reported as SKIP)"
  [ $fails -eq 0 ] || exit 1
  exit 77
fi
"$GPUPROF" flame "$T" -o "$OUT/flame.html" >/dev/null || fail "flame.html"
"$GPUPROF" flame "$T" -o "$OUT/flame.svg" >/dev/null || fail "flame.svg"
"$GPUPROF" timeline "$T" -o "$OUT/timeline.html" >/dev/null || fail "timeline.html"
"$GPUPROF" report "$T" -o "$OUT/report.html" >/dev/null || fail "report.html"

# flame: the page holds the frames the CLI printed, search and zoom via URL state
printed=$("$GPUPROF" flame "$T" -o "$OUT/flame.html" | sed -n 's/.*(\([0-9]*\) frames.*/\1/p')
chrome dom "file://$OUT/flame.html" > "$OUT/flame.dom"
ready "$OUT/flame.dom" || fail "flame.html not ready"
want=$(attr "$OUT/flame.dom" gp-flame data-frames)
got=$(attr "$OUT/flame.dom" gp-flame data-tree-frames)
drawn=$(attr "$OUT/flame.dom" gp-flame data-drawn)
[ -n "$want" ] && [ "$want" = "$printed" ] && [ "$got" = "$want" ] && [ "$drawn" -gt 10 ] \
  && ok "flame.html: $got frames, as the CLI printed ($drawn wide enough to draw)" \
  || fail "flame.html: CLI printed $printed frames, page has $want, laid out $got"
chrome dom "file://$OUT/flame.html#s=gemm" > "$OUT/flame_search.dom"
pct=$(attr "$OUT/flame_search.dom" gp-matched data-pct)
cnt=$(attr "$OUT/flame_search.dom" gp-matched data-count)
case $pct in ''|0.0) fail "flame.html#s=gemm: match percentage '$pct'" ;;
  *) ok "flame.html#s=gemm: matched $pct% in $cnt frames" ;; esac
chrome dom "file://$OUT/flame.html#f=4" > "$OUT/flame_zoom.dom"
zd=$(attr "$OUT/flame_zoom.dom" gp-flame data-drawn)
[ "$(attr "$OUT/flame_zoom.dom" gp-flame data-zoom)" = 4 ] && [ "$zd" -lt "$drawn" ] \
  && ok "flame.html#f=4: zoomed, $zd frames drawn of $drawn" || fail "flame.html#f=4: zoom drew $zd of $drawn"
chrome dom "file://$OUT/flame.svg#s=gemm" > "$OUT/flame_svg.dom"
ready "$OUT/flame_svg.dom" && ok "flame.svg ready" || fail "flame.svg not ready"
spct=$(attr "$OUT/flame_svg.dom" gp-matched data-pct)
[ "$spct" = "$pct" ] && ok "flame.svg search agrees ($spct%)" || fail "flame.svg search '$spct' vs '$pct'"
chrome shot "file://$OUT/flame.html#s=gemm" "$OUT/screenshots/flame.png" 1300,560
# flame: a with_stack trace's page also holds its module tree, behind the "Frames" switch (#b=)
V="$SHARED/traces/modern_h100_vit.json.gz"
mods=$("$GPUPROF" flame "$V" --by module -o "$OUT/vit_modules.folded" | sed -n 's/.*(\([0-9]*\) frames.*/\1/p')
"$GPUPROF" flame "$V" -o "$OUT/vit_frames.html" >/dev/null || fail "vit_frames.html"
chrome dom "file://$OUT/vit_frames.html#b=module" > "$OUT/vit_modules.dom"
mby=$(attr "$OUT/vit_modules.dom" gp-flame data-by) mgot=$(attr "$OUT/vit_modules.dom" gp-flame data-tree-frames)
[ "$mby" = module ] && [ "$mgot" = "$mods" ] && grep -q 'frames by nn.Module' "$OUT/vit_modules.dom" \
  && ok "flame.html#b=module: the module tree, $mgot frames as flame --by module printed" \
  || fail "flame.html#b=module: by '$mby', $mgot frames, flame --by module printed $mods"
chrome shot "file://$OUT/vit_frames.html#b=module&v=left" "$OUT/screenshots/flame_modules.png" 1300,560

# timeline: drawn, first paint time recorded
chrome dom "file://$OUT/timeline.html" > "$OUT/timeline.dom"
ready "$OUT/timeline.dom" && ok "timeline.html ready (first paint $(grep -o 'data-first-paint-ms="[0-9]*"' "$OUT/timeline.dom" | head -1))" \
  || fail "timeline.html not ready"
grep -q '<canvas' "$OUT/timeline.dom" && ok "timeline.html has its canvas" || fail "timeline.html: no canvas"
chrome shot "file://$OUT/timeline.html" "$OUT/screenshots/timeline.png" 1300,700
# selecting a kernel through the URL shows its details and finds its launch (same correlation)
chrome dom "file://$OUT/timeline.html#sel=sgemm" > "$OUT/timeline_sel.dom"
sel=$(attr "$OUT/timeline_sel.dom" gp-tl-details data-selected)
case $sel in *sgemm*) ok "timeline.html#sel=sgemm selected $sel" ;; *) fail "timeline #sel=sgemm selected '$sel'" ;; esac
grep -q 'launched by cudaLaunchKernel' "$OUT/timeline_sel.dom" && ok "timeline.html: kernel -> launch flow found" \
  || fail "timeline.html: no launch found for the selected kernel"
chrome shot "file://$OUT/timeline.html#sel=sgemm" "$OUT/screenshots/timeline_flow.png" 1300,700

# report: one table row per summary row; filter via URL state
chrome dom "file://$OUT/report.html" > "$OUT/report.dom"
ready "$OUT/report.dom" || fail "report.html not ready"
"$GPUPROF" summary --csv -n 0 "$T" > "$OUT/summary.csv"
want=$(($(wc -l < "$OUT/summary.csv") - 1))
got=$(attr "$OUT/report.dom" gp-ops data-rows) # the table draws only the rows in view
[ "$got" = "$want" ] && ok "report.html: $got operation rows" || fail "report.html: $got rows, summary has $want"
chrome dom "file://$OUT/report.html#filter=aten::conv" > "$OUT/report_filter.dom"
shown=$(attr "$OUT/report_filter.dom" gp-count data-shown)
wantf=$(tail -n +2 "$OUT/summary.csv" | grep -ci 'aten::conv')
[ "$shown" = "$wantf" ] && ok "report.html#filter=aten::conv: $shown rows" || fail "filter shows '$shown', want $wantf"
grep -q 'id="gp-total-time"' "$OUT/report.dom" && grep -q 'id="gp-peak-mem"' "$OUT/report.dom" \
  && ok "report.html: summary cards" || fail "report.html: cards missing"
if grep -q 'id="gp-findings"' "$OUT/report.dom"; then
  ok "report.html: $(sed -n '/id="gp-findings"/,/<\/ol>/p' "$OUT/report.dom" | grep -c '<li') findings with suggestions"
elif grep -q 'id="gp-findings-none"' "$OUT/report.dom"; then ok "report.html: analysis ran, no rule fired"
else fail "report.html: no bottleneck/suggestion panel from the analysis"; fi
chrome shot "file://$OUT/report.html" "$OUT/screenshots/report.png" 1300,2000

# ---- scripted interaction (puppeteer-core driving this chromium) ----------------------------
# On modern traces: the first screen, search, hover, range selection, rank collapse, the
# dashboard's partitions (tests/report/browser_interact.js).
NODE_DIR=${GP_NODE_DIR:-/usr/local/lib/gpuprof-node}
interact=skipped
if ! command -v node >/dev/null || [ ! -d "$NODE_DIR/node_modules/puppeteer-core" ]; then
  echo "SKIP: interaction tests need node and puppeteer-core in $NODE_DIR (scripts/install-deps)"
elif [ ! -f "$SHARED/traces/modern_h100_vit.json.gz" ] || [ ! -d "$SHARED/traces/multirank8_dlrm_v100" ]; then
  echo "SKIP: interaction tests need modern_h100_vit and multirank8_dlrm_v100"
else
  "$GPUPROF" timeline "$SHARED/traces/modern_h100_vit.json.gz" -o "$OUT/vit_timeline.html" >/dev/null \
    && "$GPUPROF" report "$SHARED/traces/modern_h100_vit.json.gz" -o "$OUT/vit_report.html" >/dev/null \
    && "$GPUPROF" timeline "$SHARED/traces/multirank8_dlrm_v100" -o "$OUT/dlrm_timeline.html" >/dev/null \
    && "$GPUPROF" flame "$SHARED/traces/modern_h100_vit.json.gz" -o "$OUT/vit_flame.html" > "$OUT/vit_flame.out" \
    || fail "gpuprof could not write the interaction pages"
  if NODE_PATH="$NODE_DIR/node_modules" timeout 300 node "$SRC/tests/report/browser_interact.js" "$CHROME" "$OUT"; then
    interact=passed
  else
    fail "browser interaction checks"
  fi
fi

ls "$OUT/screenshots"
[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
[ $interact = passed ] || { echo "DOM checks passed; interaction checks skipped"; exit 77; }
echo "all browser checks passed"
