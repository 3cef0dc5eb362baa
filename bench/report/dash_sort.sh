#!/bin/sh
# The dashboard's sort and filter of 100,000 operations in headless Chromium (issue 36's target:
# 100 ms per action), with a baseline measured in the same pages (dash_sort.js). Writes the
# browser test's 100,000-row fixture and its report into WORK. Not a test: run it by hand
# (docs/performance.md, "Dashboard: sort and filter of 100,000 rows").
# usage: dash_sort.sh GPUPROF [RUNS=5] [WORK=/tmp/gp-bench-dash]
set -eu
gp=$1 runs=${2:-5} work=${3:-/tmp/gp-bench-dash}
here=$(cd "$(dirname "$0")" && pwd)
chrome=$(command -v chromium || command -v chromium-browser)
node_dir=${GP_NODE_DIR:-/usr/local/lib/gpuprof-node}
mkdir -p "$work"
python3 "$here/../../tests/report/browser/make_dash_fixture.py" "$work/big.json"
"$gp" report "$work/big.json" -o "$work/big_report.html" > /dev/null
NODE_PATH="$node_dir/node_modules" node "$here/dash_sort.js" "$chrome" "$work/big_report.html" "$runs"
