#!/bin/sh
# Runs legacy_torch_trace.py with the first Python that can import torch: $GP_TORCH_PYTHON, then
# python3 on PATH, then Debian's /usr/bin/python3 (python3-torch installs there, which a pyenv or
# venv python3 earlier on PATH does not see). Exits 77 (ctest SKIP) when none can.
# Usage: legacy_torch_trace.sh GPUPROF WORKDIR
here=$(cd "$(dirname "$0")" && pwd)
for py in "${GP_TORCH_PYTHON:-}" python3 /usr/bin/python3; do
    [ -n "$py" ] || continue
    if "$py" -c "import torch" >/dev/null 2>&1; then
        exec "$py" "$here/legacy_torch_trace.py" "$@"
    fi
done
echo "SKIP: no Python with torch (Debian: apt-get install python3-torch)"
exit 77
