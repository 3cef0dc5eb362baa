#!/usr/bin/env bash
# The recording rules that give users of the old metric names their dashboards back
# (examples/prometheus/seed-metric-names.rules.yml): Debian's promtool checks the file and runs
# its unit test (tests/monitor/seed_rules_test.yml: gpuprof series in, old names out). No GPU, no
# driver involved. Skips (77) without promtool (Debian package prometheus). Env: GP_SOURCE_DIR.
set -uo pipefail
command -v promtool >/dev/null || { echo "promtool not found: skipped"; exit 77; }
cd "$GP_SOURCE_DIR/tests/monitor" || exit 1
promtool check rules ../../examples/prometheus/seed-metric-names.rules.yml || exit 1
promtool test rules seed_rules_test.yml || exit 1
