#!/usr/bin/env bash
# `gpuprof serve --dir`: the profile server on loopback, checked with curl: the listing (JSON and
# HTML), each view of a trace, a profile and a job directory, figures equal to the CLI's own
# (summary and analysis JSON byte for byte), a file added while it runs, and the refusals (a
# malformed profile: 422 with the reader's message; names outside the listing, traversal: 404;
# POST: 405). The JSON endpoints equal the CLI's output (kernels, memory, hta, flame, timeline,
# diff), job folders one level down ("pair/base") are listed and served, every page links back
# to the index, and errors under /api/ are JSON. TORCH_TRACE compile logs (a log file, a folder
# of rank logs) are listed as compile_log and served as gpuprof compile serves them (JSON byte for
# byte, the HTML page), their other views are 422 naming the views they have, and a FIFO or a link
# out of the folder named like a log is never read; with ../shared, every shared log's JSON equals
# the CLI's. Exit 77 (skip) without curl or python3.
# Env: GPUPROF, GP_SOURCE_DIR, GP_SHARED_DIR.
set -uo pipefail
for tool in curl python3; do
  command -v "$tool" >/dev/null || { echo "$tool not installed: skipping" >&2; exit 77; }
done
gp=$GPUPROF; src=$GP_SOURCE_DIR
work=$(mktemp -d /tmp/gp_serve_XXXXXX)
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails+1)); }
dir="$work/profiles"
mkdir -p "$dir/job" "$dir/pair/base" "$dir/pair/current"
cp "$src/examples/traces/example_step.json" "$dir/"
cp "$src/tests/report/data/profile_ranges.json" "$dir/profile.json"
cp "$src/examples/traces/example_step.json" "$dir/run #2 & <x>.json" # needs escaping everywhere
"$gp" convert "$src/examples/traces/example_step.json" -o "$dir/job/rank0.json" >/dev/null
"$gp" convert "$src/examples/traces/example_step.json" -o "$dir/job/rank1.json.gz" >/dev/null
cp "$src/examples/traces/example_step.json" "$dir/pair/base/r0.json"
cp "$src/tests/report/data/profile_ranges.json" "$dir/pair/current/r0.json"
cat > "$dir/shapes.json" <<'JSON'
{"traceEvents": [
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 20,
  "args": {"External id": 7, "Input Dims": [[64, 128], [128, 32]], "Input type": ["float", "float"]}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 12, "dur": 5,
  "args": {"External id": 7, "correlation": 40}},
 {"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": 20, "dur": 8,
  "args": {"External id": 7, "correlation": 40, "device": 0, "stream": 7}}
]}
JSON
printf '{"traceEvents": [' > "$dir/broken.json"
# TORCH_TRACE logs (from the repository's own test data): a folder of two rank logs (one gzipped),
# a single log file, a folder whose second log is a FIFO, one whose second log links out of DIR,
# a FIFO and a link out named like logs.
clog=$src/tests/compile/data/breaks.log; clog2=$src/python/tests/data/torch_trace_example.log
mkdir -p "$dir/torch_trace" "$dir/tt_fifo" "$dir/tt_link"
cp "$clog" "$dir/torch_trace/dedicated_log_torch_trace_rank_0_123.log"
gzip -c "$clog2" > "$dir/torch_trace/dedicated_log_torch_trace_rank_1_123.log.gz"
cp "$clog2" "$dir/dedicated_log_torch_trace_rank_0.log"
cp "$clog" "$dir/tt_fifo/dedicated_log_torch_trace_rank_0.log"
mkfifo "$dir/tt_fifo/dedicated_log_torch_trace_rank_1.log" "$dir/fifo.log"
cp "$clog" "$dir/tt_link/dedicated_log_torch_trace_rank_0.log"
cp "$clog" "$work/outside.log"
ln -s "$work/outside.log" "$dir/tt_link/dedicated_log_torch_trace_rank_1.log"
ln -s "$work/outside.log" "$dir/out.log"
printf 'not a profile\n' > "$dir/notes.txt"
touch "$dir/.hidden.json"

"$gp" serve --dir "$dir" --listen 127.0.0.1:0 --port-file "$work/port" 2>"$work/stderr" &
pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || { cat "$work/stderr"; fail "no port file"; exit 1; }
base="http://127.0.0.1:$(cat "$work/port")"
get() { curl -s -o "$work/body" -w '%{http_code}' "$@"; }

[ "$(get "$base/api/profiler/profiles")" = 200 ] || fail "listing"
python3 - "$work/body" <<'PY' || fail "listing content"
import json, sys
d = json.load(open(sys.argv[1]))
names = [p["name"] for p in d["profiles"]]
assert names == ["broken.json", "dedicated_log_torch_trace_rank_0.log", "example_step.json",
                 "job", "pair/base", "pair/current", "profile.json", "run #2 & <x>.json",
                 "shapes.json", "torch_trace", "tt_fifo", "tt_link"], names
by = {p["name"]: p for p in d["profiles"]}
assert by["job"]["type"] == "job" and by["example_step.json"]["type"] == "file"
# compile logs: a folder counts its log files (a FIFO and a link out are left out), a file none
assert by["torch_trace"]["type"] == "compile_log" and by["torch_trace"]["files"] == 2, by
assert by["tt_fifo"]["files"] == 1 and by["tt_link"]["files"] == 1, by
f = by["dedicated_log_torch_trace_rank_0.log"]
assert f["type"] == "compile_log" and "files" not in f and "ranks" not in f, f
assert all(p["bytes"] is None or p["bytes"] > 0 for p in d["profiles"])
PY
[ "$(get "$base/")" = 200 ] && grep -q 'href="/report/example_step.json"' "$work/body" \
  && grep -q 'href="/api/profiler/analysis/job"' "$work/body" || fail "index page"
[ "$(get "$base/healthz")" = 200 ] && grep -q '"status":"ok"' "$work/body" || fail "healthz"

# A name with a space, '#', '&' and '<': escaped in the page, percent-encoded in its links.
get "$base/" >/dev/null
grep -q 'run #2 &amp; &lt;x&gt;.json' "$work/body" \
  && grep -q 'href="/report/run%20%232%20%26%20%3Cx%3E.json"' "$work/body" || fail "escaped name"
[ "$(get "$base/report/run%20%232%20%26%20%3Cx%3E.json")" = 200 ] || fail "percent-encoded name"

# The JSON views are the CLI's output, byte for byte.
[ "$(get "$base/api/profiler/summary/example_step.json")" = 200 ] || fail "summary"
"$gp" summary --json "$dir/example_step.json" > "$work/cli_summary.json"
cmp -s "$work/body" "$work/cli_summary.json" || fail "summary differs from gpuprof summary --json"
[ "$(get "$base/api/profiler/analysis/job")" = 200 ] || fail "analysis of a job"
"$gp" analyze --json -q "$dir/job" > "$work/cli_analysis.json"
cmp -s "$work/body" "$work/cli_analysis.json" || fail "analysis differs from gpuprof analyze --json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["ranks"]) == 2' \
  "$work/body" || fail "the job has two ranks"

# The HTML views are self-contained pages.
for v in report timeline; do
  [ "$(get "$base/$v/profile.json")" = 200 ] || fail "$v of a profile"
  grep -q '</html>' "$work/body" || fail "$v is not a whole page"
  grep -qE '<script[^>]+src=|<link[^>]+href="http' "$work/body" && fail "$v loads external files"
done
[ "$(get "$base/report/example_step.json")" = 200 ] && grep -q 'id="gp-peak-mem"' "$work/body" \
  || fail "dashboard of a trace"
# The served timeline's detail panel has the ops' input shapes, as the CLI's page does.
[ "$(get "$base/timeline/shapes.json")" = 200 ] || fail "timeline of a trace with shapes"
"$gp" timeline "$dir/shapes.json" -o "$work/cli_shapes.html" >/dev/null
python3 - "$work/body" "$work/cli_shapes.html" <<'PY' || fail "served timeline lacks the shapes"
import re, sys
def args(path):
    page = open(path).read()
    m = re.search(r'<script id="gp-tl-data-args" type="application/json">(.*?)</script>', page, re.S)
    return m.group(1)
served, cli = args(sys.argv[1]), args(sys.argv[2])
assert "Input Dims" in cli and "[[64,128],[128,32]]" in cli, cli[:400]
assert served == cli
PY

# The JSON endpoints are the CLI's output, byte for byte.
f="$dir/example_step.json"
jcheck() { # URL-PATH CLI-ARGS...: 200 and the same bytes as the CLI's stdout
  local path=$1; shift
  [ "$(get "$base$path")" = 200 ] || { fail "$path: status"; return; }
  "$gp" "$@" > "$work/cli.json" || { fail "$path: the CLI failed"; return; }
  cmp -s "$work/body" "$work/cli.json" || fail "$path differs from gpuprof $*"
}
jcheck /api/profiler/kernels/example_step.json ops --json --by kernel "$f"
jcheck /api/profiler/ops/example_step.json ops --json "$f"
jcheck "/api/profiler/ops/example_step.json?by=shape" ops --json --by shape "$f"
jcheck /api/profiler/ops/job ops --json "$dir/job"
jcheck /api/profiler/compile/example_step.json compile --trace "$f" --json
[ "$(get "$base/api/profiler/ops/example_step.json?by=bogus")" = 400 ] || fail "ops ?by=bogus"
jcheck /api/profiler/memory/example_step.json analyze --json -q --table memory \
  --table peak_memory "$f"
jcheck /api/profiler/hta/job analyze --json -q --hta --table temporal --table idle \
  --table kernel_types --table top_kernels --table overlap --table queue "$dir/job"
[ "$(get "$base/api/profiler/flame/example_step.json")" = 200 ] || fail "flame JSON"
"$gp" flame "$f" --title example_step.json -o "$work/cli.speedscope.json" >/dev/null
cmp -s "$work/body" "$work/cli.speedscope.json" || fail "flame JSON differs from gpuprof flame"
[ "$(get "$base/api/profiler/flame/example_step.json?weight=cpu")" = 200 ] || fail "flame cpu"
# /timeline/NAME?critical_path=1: gpuprof timeline --critical-path's page (less the server's
# bar); a bad value is a 400
[ "$(get "$base/timeline/example_step.json?critical_path=1")" = 200 ] ||
  fail "timeline ?critical_path=1"
"$gp" timeline --critical-path --title example_step.json "$f" -o "$work/cli_cp.html" >/dev/null
python3 - "$work/body" "$work/cli_cp.html" <<'PY' || fail "?critical_path=1 is not the --critical-path page"
import re, sys
served = open(sys.argv[1]).read()
page = open(sys.argv[2]).read()
assert "gp-tl-cp" in page
served = re.sub(r'\n<nav id="gp-serve-nav".*?</nav>\n', "", served, count=1, flags=re.S)
assert served == page, "the served page differs from the CLI's"
PY
[ "$(get "$base/timeline/example_step.json?critical_path=yes")" = 400 ] ||
  fail "timeline ?critical_path=yes"
[ "$(get "$base/api/profiler/timeline/profile.json")" = 200 ] || fail "timeline JSON"
"$gp" timeline "$dir/profile.json" -o "$work/cli_tl.html" >/dev/null
python3 - "$work/body" "$work/cli_tl.html" <<'PY' || fail "timeline JSON is not the page's data"
import json, re, sys
api = open(sys.argv[1]).read()
page = open(sys.argv[2]).read()
embedded = re.search(r'<script id="gp-tl-data" type="application/json">(.*?)</script>', page, re.S)
assert api == embedded.group(1) + "\n"
assert json.loads(api)
PY
[ "$(get "$base/api/profiler/diff?base=pair%2Fbase&current=pair%2Fcurrent")" = 200 ] \
  || fail "diff JSON"
"$gp" diff --json "$dir/pair/base" "$dir/pair/current" > "$work/cli_diff.json"
python3 - "$work/body" "$work/cli_diff.json" <<'PY' || fail "diff JSON differs from gpuprof diff"
import json, sys
api, cli = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert (api["base"], api["current"]) == ("pair/base", "pair/current"), api["base"]
for d in (api, cli):
    del d["base"], d["current"]
assert api == cli
PY

# JSON errors under /api/, with the reason.
jerr() { # URL-PATH STATUS TEXT
  [ "$(get "$base$1")" = "$2" ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == int(sys.argv[2]) and sys.argv[3] in d["message"], d' \
    "$work/body" "$2" "$3" || fail "$1: JSON error $2 saying '$3'"
}
jerr /api/profiler/compile/missing.json 404 "no such profile"
jerr /api/profiler/summary/missing.json 404 "no such profile"
jerr /api/profiler/summary/broken.json 422 "broken.json: byte 17:"
# issue 38: no error names the served folder (as given or resolved), the page errors neither
for u in /api/profiler/summary/broken.json /report/broken.json /flame/broken.json \
         /api/profiler/analysis/broken.json /timeline/broken.json; do
  get "$base$u" >/dev/null
  if grep -c -e "$dir" -e "$(cd "$dir" && pwd -P)" -e "$work" "$work/body" >/dev/null; then
    fail "$u: the error shows the served folder's path"; head -c 300 "$work/body"; echo
  fi
  grep -c "broken.json" "$work/body" >/dev/null || fail "$u: the error does not name broken.json"
done
jerr /api/profiler/nothing 404 "not found"
jerr "/api/profiler/flame/example_step.json?weight=heavy" 400 "weight"
jerr /api/profiler/diff 400 "base="
jerr "/api/profiler/diff?base=job&current=missing.json" 404 "missing.json"

# TORCH_TRACE compile logs: gpuprof compile NAME --json byte for byte, the --html page with the
# bar back to the index, and the other views a 422 saying which views a compile log has.
jcheck /api/profiler/compile/torch_trace compile -q --json "$dir/torch_trace"
jcheck /api/profiler/compile/dedicated_log_torch_trace_rank_0.log compile -q --json \
  "$dir/dedicated_log_torch_trace_rank_0.log"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["log"]["files"]) == 1' \
  "$work/body" || fail "a single compile log file"
[ "$(get "$base/compile/torch_trace")" = 200 ] || fail "compile page"
"$gp" compile -q "$dir/torch_trace" --html "$work/cli_compile.html" --title torch_trace >/dev/null
python3 - "$work/body" "$work/cli_compile.html" <<'PY' || fail "compile page differs from the CLI's"
import re, sys
served, cli = open(sys.argv[1]).read(), open(sys.argv[2]).read()
nav = re.search(r'\n<nav id="gp-serve-nav"[^>]*><a href="/">.*?</nav>\n', served, re.S)
assert nav and "/report/" not in nav.group(0), served[:300]
assert served[:nav.start()] + served[nav.end():] == cli
assert "Graph Break Reason: Unsupported Tensor.item()" in cli  # a payload read back
PY
[ "$(get "$base/compile/example_step.json")" = 200 ] && grep -q 'gp-serve-nav' "$work/body" \
  && grep -q '</html>' "$work/body" || fail "compile page of a trace"
for v in summary analysis kernels flame timeline; do
  jerr "/api/profiler/$v/torch_trace" 422 "torch_trace: a torch.compile log (TORCH_TRACE), not a trace"
done
jerr /api/profiler/summary/dedicated_log_torch_trace_rank_0.log 422 \
  "its views are /compile/dedicated_log_torch_trace_rank_0.log (HTML)"
for v in report timeline flame; do
  [ "$(get "$base/$v/torch_trace")" = 422 ] \
    && grep -q 'its views are /compile/torch_trace (HTML) and /api/profiler/compile/torch_trace' \
      "$work/body" || fail "$v of a compile log: 422 naming its views"
done
jerr "/api/profiler/diff?base=example_step.json&current=torch_trace" 422 "a torch.compile log"
get "$base/" >/dev/null
grep -q 'torch_trace (torch.compile log, 2 files)' "$work/body" \
  && grep -q 'href="/compile/torch_trace"' "$work/body" \
  && grep -q 'href="/api/profiler/compile/dedicated_log_torch_trace_rank_0.log"' "$work/body" \
  || fail "index: compile logs and their links"
grep -q 'href="/report/torch_trace"' "$work/body" && fail "index: a compile log has no report"
grep -q '<option value="torch_trace"' "$work/body" && fail "index: a compile log is not compared"
# never read: a FIFO named like a log (in a folder: 422 naming it; alone: not listed), a link out
jerr /api/profiler/compile/tt_fifo 422 "tt_fifo/dedicated_log_torch_trace_rank_1.log: not a regular file"
jerr /api/profiler/compile/fifo.log 404 "no such profile"
jerr /api/profiler/compile/tt_link 403 "tt_link/dedicated_log_torch_trace_rank_1.log: a symbolic link out"
jerr /api/profiler/compile/out.log 404 "no such profile"

# Job folders one level down, the flame and diff pages, links back to the index.
for v in report timeline flame; do
  [ "$(get "$base/$v/pair%2Fbase")" = 200 ] || fail "$v of a job one level down"
  grep -q '<nav id="gp-serve-nav"[^>]*><a href="/">' "$work/body" || fail "$v: no link back"
  grep -q "href=\"/$v/pair%2Fbase\"" "$work/body" || fail "$v: no links to the other views"
done
[ "$(get "$base/diff?base=example_step.json&current=profile.json")" = 200 ] \
  && grep -q 'gp-serve-nav' "$work/body" && grep -q '</html>' "$work/body" || fail "diff page"
get "$base/" >/dev/null
grep -q '<form id="gp-diff" action="/diff"' "$work/body" \
  && grep -q 'href="/flame/pair%2Fbase"' "$work/body" || fail "index: diff form, group links"
[ "$(get "$base/report/pair")" = 404 ] || fail "a folder of jobs is not a job"

# A file added while serving shows at once.
cp "$src/examples/traces/example_step.json" "$dir/later.json"
[ "$(get "$base/api/profiler/summary/later.json")" = 200 ] || fail "a file added while serving"

# Refusals.
[ "$(get "$base/api/profiler/summary/broken.json")" = 422 ] \
  && grep -q 'broken.json: byte 17:' "$work/body" || fail "malformed profile: 422 with the message"
[ "$(get "$base/report/notes.txt")" = 404 ] || fail "a file that is not a profile"
[ "$(get "$base/report/.hidden.json")" = 404 ] || fail "a hidden file"
[ "$(get "$base/report/..%2Fport")" = 404 ] || fail "traversal"
[ "$(get "$base/report/job%2Frank0.json")" = 404 ] || fail "a path inside a job"
[ "$(get -X POST "$base/")" = 405 ] || fail "POST"

kill "$pid"; wait "$pid"; rc=$?; pid=""
[ "$rc" = 0 ] || fail "exit status $rc after SIGTERM"

# A compile log's folder is capped by its files' bytes summed, as a job is: two logs of 0.6 MiB
# each (every line a record) over --max-input-mib 1, each under it.
mkdir -p "$work/big/tt"
python3 - "$work/big/tt" <<'PY'
import sys
line = ('V1206 15:18:20.253000 1500233 torch/_dynamo/x.py:1] {"dynamo_start": {"stack": []}, '
        '"frame_id": %d, "frame_compile_id": 0, "attempt": 0}\n')
for r in range(2):
    with open("%s/dedicated_log_torch_trace_rank_%d.log" % (sys.argv[1], r), "w") as f:
        n = 0
        while n < 600 * 1024:
            n += f.write(line % n)
PY
"$gp" serve --dir "$work/big" --listen 127.0.0.1:0 --port-file "$work/port2" --max-input-mib 1 \
  2>"$work/stderr2" &
pid=$!
for _ in $(seq 100); do [ -s "$work/port2" ] && break; sleep 0.1; done
base="http://127.0.0.1:$(cat "$work/port2")"
jerr /api/profiler/compile/tt 413 "of log files, over this server's limit of 1.00 MiB"
kill "$pid"; wait "$pid"; pid=""

# Every shared TORCH_TRACE log (../shared/compile-logs, when present): listed, and its JSON the
# CLI's byte for byte (multi_rank_logs: 4 rank logs, two gzipped).
shared=${GP_SHARED_DIR:-$src/../shared}/compile-logs
if [ -d "$shared" ]; then
  "$gp" serve --dir "$shared" --listen 127.0.0.1:0 --port-file "$work/port3" 2>"$work/stderr3" &
  pid=$!
  for _ in $(seq 100); do [ -s "$work/port3" ] && break; sleep 0.1; done
  base="http://127.0.0.1:$(cat "$work/port3")"
  [ "$(get "$base/api/profiler/profiles")" = 200 ] || fail "shared logs: listing"
  python3 - "$work/body" <<'PY' || fail "shared logs: listing content"
import json, sys
d = {p["name"]: p for p in json.load(open(sys.argv[1]))["profiles"]}
assert sorted(d) == ["chromium_events.log", "comp_metrics.log", "export.log", "multi_rank_logs",
                     "simple.log"], sorted(d)
assert all(p["type"] == "compile_log" for p in d.values()) and d["multi_rank_logs"]["files"] == 4
PY
  for n in chromium_events.log comp_metrics.log export.log multi_rank_logs simple.log; do
    jcheck "/api/profiler/compile/$n" compile -q --json "$shared/$n"
  done
  kill "$pid"; wait "$pid"; pid=""
else
  echo "shared compile logs absent: their checks skipped"
fi
"$gp" serve --dir "$work/missing" >/dev/null 2>"$work/err"; [ $? = 2 ] \
  && grep -q "$work/missing" "$work/err" || fail "missing directory: exit 2 naming it"
"$gp" serve >/dev/null 2>&1; [ $? = 2 ] || fail "no --dir: exit 2"
[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all serve --dir checks passed"
