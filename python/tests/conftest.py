"""Fixtures of the Python package's tests: the CLI built beside the package (GPUPROF_CLI), the
shared traces (GP_SHARED_DIR; tests that need them skip when absent), the fake libcuda."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(os.environ.get("GP_SOURCE_DIR", Path(__file__).resolve().parents[2]))
SHARED = Path(os.environ.get("GP_SHARED_DIR", ROOT.parent / "shared"))


@pytest.fixture(scope="session")
def cli():
    """Runs the gpuprof CLI; returns (returncode, stdout, stderr)."""
    exe = os.environ.get("GPUPROF_CLI") or str(ROOT / "build" / "gpuprof")
    if not os.path.exists(exe):
        pytest.skip("the gpuprof CLI is not built (GPUPROF_CLI)")

    def run(*args, check=True):
        p = subprocess.run([exe, *map(str, args)], capture_output=True, text=True)
        if check and p.returncode != 0:
            raise AssertionError("gpuprof %s -> %d: %s" % (" ".join(map(str, args)),
                                                         p.returncode, p.stderr))
        return p

    return run


@pytest.fixture(scope="session")
def cli_json(cli):
    def run(*args):
        return json.loads(cli(*args).stdout)
    return run


@pytest.fixture(scope="session")
def example_trace():
    return ROOT / "examples" / "traces" / "example_step.json"


@pytest.fixture(scope="session")
def example_profiles():
    return ROOT / "examples" / "profiles" / "base.json", ROOT / "examples" / "profiles" / "current.json"


def shared_trace(name):
    """A trace of ../shared/traces, or skip."""
    p = SHARED / "traces" / name
    if not p.exists():
        pytest.skip("%s is absent (../shared/traces)" % name)
    return p


@pytest.fixture(scope="session")
def fake_cuda():
    lib = os.environ.get("GPUPROF_FAKE_CUDA")
    if not lib or not os.path.exists(lib):
        pytest.skip("the fake libcuda (tests/fakes/cuda) is not built (GPUPROF_FAKE_CUDA)")
    return lib


def run_python(code, env_extra=None, timeout=120):
    """Runs code in a fresh interpreter with this package importable; returns CompletedProcess."""
    env = dict(os.environ)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=timeout)
