#!/bin/sh
# Browser test of `gpuprof diff JOB_A JOB_B --html` (issue 33.3, src/render/diff_jobs_html.c):
# the 8-rank job against a copy with rank 3's computation kernels twice as long (written here by
# a few lines of Python into OUT_DIR; the other ranks are links to the shared files), then
# puppeteer-core drives Debian's chromium (tests/report/browser/diff_jobs.js): the rank selector
# switches the pair shown, each side's device / world size / rank line is there, rank 3's pair
# carries the regressions, #rank=N opens on pair N; with a rank missing from one job, the note
# shows and only the pair's page scrolls. Screenshots under OUT_DIR/screenshots.
# usage: browser_diff_jobs.sh GPUPROF SOURCE_DIR OUT_DIR SHARED_DIR
# Exit 77 (ctest SKIP) without chromium, node + puppeteer-core, python3 or the shared traces.
set -u
GPUPROF=$1 SRC=$2 OUT=$3 SHARED=$4
JOB="$SHARED/traces/multirank8_dlrm_v100"
CHROME=$(command -v chromium || command -v chromium-browser || true)
NODE_DIR=${GP_NODE_DIR:-/usr/local/lib/gpuprof-node}
[ -n "$CHROME" ] || { echo "SKIP: chromium not found"; exit 77; }
command -v node >/dev/null && [ -d "$NODE_DIR/node_modules/puppeteer-core" ] \
  || { echo "SKIP: needs node and puppeteer-core in $NODE_DIR (scripts/install-deps)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 absent"; exit 77; }
[ -d "$JOB" ] || { echo "SKIP: $JOB absent"; exit 77; }
JOB=$(cd "$JOB" && pwd)
rm -rf "$OUT" && mkdir -p "$OUT/screenshots" "$OUT/slow3"
fail() { echo "FAIL: $*"; exit 1; }
for f in "$JOB"/*.json.gz; do
  case "$(basename "$f")" in worker3_*) ;; *) ln -s "$f" "$OUT/slow3/" ;; esac
done
python3 - "$JOB" "$OUT/slow3" <<'EOF' || fail "the slowed job"
import glob, gzip, json, os, sys
src = glob.glob(os.path.join(sys.argv[1], "worker3_*.json.gz"))[0]
with gzip.open(src, "rt") as f:
    d = json.load(f)
n = 0
for e in d["traceEvents"]:
    if e.get("ph") == "X" and e.get("cat") == "kernel" and "nccl" not in e.get("name", "").lower():
        e["dur"] *= 2
        n += 1
assert n > 100, n
with gzip.open(os.path.join(sys.argv[2], os.path.basename(src)), "wt") as f:
    json.dump(d, f)
EOF
"$GPUPROF" diff "$JOB" "$OUT/slow3" --html "$OUT/jobs.html" > "$OUT/jobs.txt" \
  || fail "gpuprof diff JOB_A JOB_B --html"
grep -c "^== RANK" "$OUT/jobs.txt" | grep -qx 8 || fail "the text does not hold 8 rank pairs"
# the slowed job without rank 7: a note under the selector makes the header taller
mkdir "$OUT/no7"
for f in "$OUT/slow3"/*; do
  case "$(basename "$f")" in worker7_*) ;; *) ln -s "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" "$OUT/no7/" ;; esac
done
"$GPUPROF" diff "$JOB" "$OUT/no7" --html "$OUT/jobs_note.html" > /dev/null 2>&1 \
  || fail "gpuprof diff JOB_A JOB_B --html without rank 7"
NODE_PATH="$NODE_DIR/node_modules" timeout 300 node "$SRC/tests/report/browser/diff_jobs.js" \
  "$CHROME" "$OUT"
