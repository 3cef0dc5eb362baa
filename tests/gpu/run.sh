#!/usr/bin/env bash
# Runs the CUDA examples (examples/cuda) under `gpuprof trace` on a REAL GPU and checks the traces:
# kernel counts per example and plausible kernel durations. Needs a GPU, its driver and a build
# with the tracer and the examples (cmake -S . -B build && cmake --build build).
# Usage: tests/gpu/run.sh [BUILD_DIR]      Exit: 0 pass, 1 fail, 77 no GPU (skipped).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
gpuprof=$build/gpuprof
ex=$build/examples/cuda
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "tests/gpu: no NVIDIA GPU or driver here: skipped" >&2
  exit 77
fi
for f in "$gpuprof" "$ex/vector_add" "$ex/streams" "$ex/nvtx_ranges" "$ex/cuda_graph"; do
  [ -x "$f" ] || { echo "tests/gpu: $f missing: build first" >&2; exit 1; }
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0

# check TRACE NAME_SUBSTRING EXPECTED_KERNELS [RANGES]
check() {
  python3 - "$@" <<'PY' || fail=1
import json, sys
path, name, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
ranges = int(sys.argv[4]) if len(sys.argv) > 4 else None
t = json.load(open(path))
ev = t["traceEvents"]
k = [e for e in ev if e.get("cat") == "kernel" and name in e.get("name", "")]
durs = [float(e["dur"]) for e in k]
ok = len(k) == want and all(0.0 < d < 1e6 for d in durs)  # 0 < dur < 1 s (us)
launches = [e for e in ev if e.get("cat") == "cuda_runtime"]
corr = {e["args"].get("correlation") for e in launches if "args" in e}
linked = sum(1 for e in k if e.get("args", {}).get("correlation") in corr)
msg = f"{path}: {len(k)} '{name}' kernels (want {want}), dur us min {min(durs, default=0):.3f} max {max(durs, default=0):.3f}, {linked} linked to a runtime call"
if ranges is not None:
    r = [e for e in ev if e.get("cat") in ("range", "user_annotation") and e.get("name") in ("step", "forward", "backward", "train")]
    ok = ok and len(r) == ranges
    msg += f", {len(r)} NVTX ranges (want {ranges})"
print(("ok   " if ok else "FAIL ") + msg)
sys.exit(0 if ok else 1)
PY
}

"$gpuprof" trace -o "$out/vector_add.json" -- "$ex/vector_add" 100 && check "$out/vector_add.json" vector_add 100
"$gpuprof" trace -o "$out/streams.json" -- "$ex/streams" 4 10 && check "$out/streams.json" scale 40
"$gpuprof" trace -o "$out/nvtx.json" -- "$ex/nvtx_ranges" 5 && check "$out/nvtx.json" work 15 16
"$gpuprof" trace -o "$out/graph.json" -- "$ex/cuda_graph" 10 && check "$out/graph.json" stage_ 30
# The Python KernelTimer on real torch.cuda.Event objects (skipped without torch built with CUDA).
if [ -d "$build/python/gpuprof" ] && python3 -c 'import pytest' 2>/dev/null; then
  PYTHONPATH=$build/python python3 -m pytest -q -p no:cacheprovider tests/gpu/test_python_torch_events.py || fail=1
fi
# Exit code pass-through: a program killed by SIGTERM reports 128 + 15.
set +e
"$gpuprof" trace -o "$out/term.json" -- bash -c 'kill -TERM $$' ; rc=$?
set -e
[ "$rc" -eq 143 ] || { echo "FAIL exit code $rc, want 143" >&2; fail=1; }
exit $fail
