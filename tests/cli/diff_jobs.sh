#!/usr/bin/env bash
# Issue 33.3: `gpuprof diff JOB_A JOB_B` pairs rank i with rank i (never "runs"): one diff per
# pair, each showing its sides' device, world size and rank; ranks on one side only are named;
# the world sizes' difference is warned about; --rank N still gives one pair; --html of two jobs
# is one page with a rank selector whose section for rank N holds the page `--rank N --html`
# writes (labels aside: file names instead of directories), --junit one test suite per pair
# (each the suite of `--rank N --junit`), --flame one file per pair (FILE.rankN.EXT, the bytes of
# `--rank N --flame`).
# Usage: diff_jobs.sh GPUPROF SHARED_DIR GEN_SCRIPT     (exit 77: shared traces absent)
set -u
gp="$1"; shared="$2"; gen="$3"
job="$shared/traces/multirank8_dlrm_v100"
[ -d "$job" ] || { echo "SKIP: $job absent"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
t() { if "$@"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $*"; fi; }
python3 "$gen" 16 "$tmp/job16" "$shared"

"$gp" diff --no-analyze "$job" "$job" > "$tmp/same.txt"; t [ $? = 0 ]
t [ "$(grep -c '^== RANK ' "$tmp/same.txt")" = 8 ]
for r in 0 3 7; do
  t grep -F "== RANK $r: base rank $r with current rank $r ==" "$tmp/same.txt" >/dev/null
done
t grep -F "Base ran on: device Tesla V100-SXM2-32GB, world size 8, rank 3" "$tmp/same.txt" >/dev/null
t [ "$(grep -c 'runs average ranks\|not repeated runs' "$tmp/same.txt")" = 0 ]

"$gp" diff --json --no-analyze "$job" "$tmp/job16" > "$tmp/j.json" 2> "$tmp/j.err"; t [ $? = 0 ]
python3 - "$tmp/j.json" <<'PY' || { fail=$((fail+1)); echo "FAIL: JSON of two jobs"; }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "gpuprof.diff-jobs/1" and d["pairing"] == "rank", d.keys()
assert [p["rank"] for p in d["pairs"]] == list(range(8))
for p in d["pairs"]:
    c = p["diff"]["context"]
    assert c["base"]["ranks"] == c["current"]["ranks"] == str(p["rank"]), c
    assert c["base"]["world_size"] == 8 and c["current"]["world_size"] == 16, c
    assert "World size differs: base 8, current 16." in c["warning"], c["warning"]
assert d["only_in_base"] == [] and d["only_in_current"] == list(range(8, 16))
PY
t grep -F "rank 12 is only in the current job: not compared" "$tmp/j.err" >/dev/null

"$gp" diff --no-analyze --rank 2 "$job" "$tmp/job16" > "$tmp/r2.txt"; t [ $? = 0 ]
t [ "$(grep -c '^== RANK ' "$tmp/r2.txt")" = 0 ]
t grep -F "Current ran on: device Tesla V100-SXM2-32GB, world size 16, rank 2" "$tmp/r2.txt" >/dev/null
"$gp" diff --no-analyze --html "$tmp/p.html" --junit "$tmp/j.xml" --flame "$tmp/f.html" \
  "$job" "$tmp/job16" > /dev/null 2>&1; t [ $? = 0 ]
for r in 0 3 7; do
  "$gp" diff --no-analyze --rank $r --html "$tmp/r$r.html" --junit "$tmp/r$r.xml" \
    --flame "$tmp/rf$r.html" "$job" "$tmp/job16" > /dev/null 2>&1
  t cmp -s "$tmp/f.rank$r.html" "$tmp/rf$r.html"
done
t [ "$(ls "$tmp"/f.rank*.html | wc -l)" = 8 ]
python3 - "$tmp" "$job" <<'PY' || { fail=$((fail+1)); echo "FAIL: HTML / JUnit of two jobs"; }
import glob, html.parser, os, sys, xml.etree.ElementTree as ET
tmp, job = sys.argv[1], sys.argv[2]
class P(html.parser.HTMLParser):
    def __init__(s):
        super().__init__(); s.options, s.sections, s.frames, s.notes = [], [], [], 0
    def handle_starttag(s, t, a):
        a = dict(a)
        if t == "option": s.options.append(a["value"])
        if t == "section": s.sections.append(a["data-rank"])
        if t == "iframe": s.frames.append(a["srcdoc"])
        if t == "p" and a.get("class") == "gp-note": s.notes += 1
p = P(); p.feed(open(os.path.join(tmp, "p.html")).read())
ranks = [str(r) for r in range(8)]
assert p.options == ranks and p.sections == ranks and len(p.frames) == 8, (p.options, p.sections)
assert p.notes == 8, p.notes  # ranks 8..15 only in the current job
for r in (0, 3, 7):
    fb = glob.glob(os.path.join(job, "worker%d_*" % r))[0]
    fc = os.path.join(tmp, "job16", "rank%05d.json" % r)
    frame = p.frames[r].replace(fb, job).replace(fc, os.path.join(tmp, "job16"))
    assert frame == open(os.path.join(tmp, "r%d.html" % r)).read(), "rank %d page differs" % r
suites = ET.parse(os.path.join(tmp, "j.xml")).getroot()
assert [s.get("name") for s in suites] == ["gpuprof.diff.rank%d" % r for r in range(8)]
assert int(suites.get("tests")) == sum(int(s.get("tests")) for s in suites)
for r in (0, 3, 7):
    one = ET.parse(os.path.join(tmp, "r%d.xml" % r)).getroot()[0]
    one.set("name", "gpuprof.diff.rank%d" % r)
    one.tail = suites[r].tail = None
    assert ET.tostring(one) == ET.tostring(suites[r]), "rank %d suite differs" % r
PY
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
