#!/usr/bin/env bash
# `gpuprof monitor` as users of the tool it replaces try it (../shared/seeds/000_*.txt), on the
# FAKE NVML driver (tests/fakes/nvml: tests our code, not a GPU): the seed's YAML file as printed,
# suggestions at the end (table and JSON), --health --json without a driver, and the stopped
# event's count equal to the rows printed. Env: GPUPROF, GP_FAKE_NVML, GP_SOURCE_DIR.
set -uo pipefail
work=$(mktemp -d /tmp/gp_cli_seed_XXXXXX)
trap 'rm -rf "$work"' EXIT
fail=0
expect() { # description, condition result
  if [ "$2" = 0 ]; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi
}
seed="$GP_SOURCE_DIR/tests/monitor/seed/gpu_profiler.yaml"

# --health --json without a driver: the health document, status unavailable with the reason, exit 2
GP_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 "$GPUPROF" monitor --health --json >"$work/out" 2>"$work/err"
rc=$?
expect "--health --json without a driver exits 2" $([ $rc = 2 ]; echo $?)
python3 - "$work/out" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
assert h["status"] == "unavailable", h
assert h["reason"].startswith("no NVIDIA driver found: "), h
assert h["gpus"] == 0 and h["samples_collected"] == 0 and h["running"] is False, h
PY
expect "--health --json without a driver prints the health document" $?
expect "... and nothing on stderr" $([ ! -s "$work/err" ]; echo $?)

export GP_NVML_LIBRARY="$GP_FAKE_NVML"
export GP_FAKE_NVML_SCENARIO="$GP_SOURCE_DIR/tests/monitor/scenarios/basic.txt"

# the seed's configuration file, exactly as printed there
"$GPUPROF" monitor --config "$seed" --count 2 --interval 100ms >"$work/table" 2>"$work/err"
expect "the seed's YAML file runs (exit 0)" $?
expect "three warnings, one per key without effect" $([ "$(grep -c ': warning: ' "$work/err")" = 3 ]; echo $?)
for key in enable_kernel_profiling integrate_with_tracing integrate_with_metrics; do
  expect "warning names $key" $(grep -q "warning: .*gpu_profiler.yaml:[0-9]*: $key: true has no effect in gpuprof: " "$work/err"; echo $?)
done
expect "the table shows the suggestions" \
  $(grep -q '^# warning  suggestion power gpu0: The GPU runs at its power limit\. Raise the limit' "$work/table"; echo $?)
expect "the idle GPU gets its suggestion" $(grep -q '^# info     suggestion idle gpu1: ' "$work/table"; echo $?)
"$GPUPROF" monitor --config "$seed" --set enable_optimization_suggestions=false --count 1 >"$work/table" 2>/dev/null
expect "enable_optimization_suggestions: false prints none" $(! grep -q 'suggestion' "$work/table"; echo $?)

# JSON: one suggestions line with the seed's fields; every row a new sample, and with the print
# interval equal to the sampling interval the stopped event counts exactly the rows printed
"$GPUPROF" monitor --count 5 --interval 300ms --set sampling_interval_ms=300 --json >"$work/json" 2>"$work/err"
expect "json exits 0" $?
python3 - "$work/json" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
samples = [r for r in rows if r.get("type") == "sample" and r["gpu"] == 0]
stopped = [r for r in rows if r.get("event") == "stopped"]
assert len(samples) == 5, len(samples)
assert len({r["ts_ns"] for r in samples}) == 5, "a sample printed twice"
assert len(stopped) == 1 and stopped[0]["value"] == 5, stopped
assert stopped[0]["message"] == "stopped after 5 samples", stopped
sug = [r for r in rows if r.get("type") == "suggestions"]
assert len(sug) == 1 and rows[-1] is sug[0], "suggestions come last"
for s in sug[0]["suggestions"]:
    assert set(s) == {"type", "severity", "gpu", "message", "suggestion", "evidence"}, s
    assert s["type"] and s["message"] and s["suggestion"], s
assert any(s["type"] == "power" and s["severity"] == "warning" for s in sug[0]["suggestions"])
PY
expect "json: rows are distinct samples, stopped counts them, suggestions with the seed's fields" $?

# enable_multi_gpu: false monitors GPU 0 only
"$GPUPROF" monitor --set enable_multi_gpu=false --count 1 --json >"$work/json" 2>/dev/null
expect "enable_multi_gpu=false: one GPU" \
  $([ "$(grep -c '"type":"sample"' "$work/json")" = 1 ] && grep -q '"gpu":0,' "$work/json"; echo $?)

# YAML leniency: repeated keys and hexadecimal refused with the line, "yes" read with a warning
printf 'gpu_profiler:\n  level: standard\n  level: detailed\n' > "$work/dup.yaml"
"$GPUPROF" monitor --config "$work/dup.yaml" --count 1 >/dev/null 2>"$work/err"
expect "a repeated key exits 2 naming both lines" \
  $([ $? = 2 ] && grep -q "dup.yaml:3: key 'level' repeats the one on line 2" "$work/err"; echo $?)
"$GPUPROF" monitor --set max_samples=0x10 --count 1 >/dev/null 2>"$work/err"
expect "a hexadecimal number exits 2" $([ $? = 2 ] && grep -q "'0x10' is not a decimal number" "$work/err"; echo $?)
"$GPUPROF" monitor --set enable_pcie=yes --count 1 >/dev/null 2>"$work/err"
expect "yes is read as true with a warning" $([ $? = 0 ] && grep -q "enable_pcie: 'yes' read as true" "$work/err"; echo $?)
exit $fail
