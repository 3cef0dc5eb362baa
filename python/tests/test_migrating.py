"""Every example of docs/migrating.md runs: the ```python blocks with the package, the ```sh blocks
with the gpuprof CLI (each line under `bash -eo pipefail`, `gpuprof` being the built CLI), from the
repository root. A block after `<!-- needs: X -->` is skipped while X is missing: `nvml` (no fake
NVML built and no driver), `profile` / `hta` / `memory` (while `gpuprof X --help` fails: commands
being added)."""
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT

DOC = ROOT / "docs" / "migrating.md"
BLOCK = re.compile(r"(?:<!-- needs: (\w+) -->\n)?```(python|sh)\n(.*?)```", re.S)
BLOCKS = [(m.group(1), m.group(2), m.group(3)) for m in BLOCK.finditer(DOC.read_text())] \
    if DOC.exists() else []


def _cli():
    exe = os.environ.get("GPUPROF_CLI") or str(ROOT / "build" / "gpuprof")
    return exe if os.path.exists(exe) else None


def _env(tmp_path):
    env = dict(os.environ)
    nvml = os.environ.get("GPUPROF_FAKE_NVML")
    if nvml and os.path.exists(nvml):  # the fake driver: tests gpuprof's code, not a GPU
        env["GP_NVML_LIBRARY"] = nvml
        env["GP_FAKE_NVML_SCENARIO"] = str(ROOT / "tests" / "monitor" / "scenarios" / "basic.txt")
    cli = _cli()
    if cli:
        bindir = tmp_path / "bin"
        bindir.mkdir(exist_ok=True)
        link = bindir / "gpuprof"
        if not link.exists():
            link.symlink_to(cli)
        env["PATH"] = str(bindir) + os.pathsep + env.get("PATH", "")
    return env


def _skip_unless(need):
    if need == "nvml":
        nvml = os.environ.get("GPUPROF_FAKE_NVML")
        if not (nvml and os.path.exists(nvml)):
            pytest.skip("no fake NVML (GPUPROF_FAKE_NVML)")
    elif need:
        cli = _cli()
        if not cli or subprocess.run([cli, need, "--help"], capture_output=True).returncode != 0:
            pytest.skip("`gpuprof %s` does not exist yet" % need)


def test_the_page_covers_every_tool():
    text = DOC.read_text()
    for heading in ("seed 000", "seed 001", "seed 002", "seed 003", "seed 004", "key_averages",
                    "Holistic Trace Analysis", "TraceLens", "tlparse"):
        assert heading in text, heading
    assert sum(1 for b in BLOCKS if b[1] == "python") >= 8
    assert sum(1 for b in BLOCKS if b[1] == "sh") >= 8


def test_every_cli_command_in_the_tables_has_an_example():
    """A `gpuprof CMD` named in a table row is run by some ```sh block (or, for a command being
    added, by a marked one), so no equivalent is only a claim."""
    text = DOC.read_text()
    rows = [line for line in text.splitlines() if line.startswith("|")]
    named = set(re.findall(r"`gpuprof (\w+)", "\n".join(rows)))
    run = set()
    for _, lang, code in BLOCKS:
        if lang == "sh":
            run |= set(re.findall(r"^gpuprof (\w+)", code, re.M))
    assert named - run == set()


@pytest.mark.parametrize("need,lang,code", BLOCKS,
                         ids=["%s%d" % (b[1], i) for i, b in enumerate(BLOCKS)])
def test_example_runs(need, lang, code, tmp_path):
    _skip_unless(need)
    env = _env(tmp_path)
    if lang == "python":
        if re.search(r"^import torch|^import gpuprof.torch", code, re.M):
            pytest.importorskip("torch")
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                           cwd=ROOT, timeout=300)
    else:
        if not _cli():
            pytest.skip("the gpuprof CLI is not built (GPUPROF_CLI)")
        p = subprocess.run(["bash", "-eo", "pipefail", "-c", code], capture_output=True,
                           text=True, env=env, cwd=ROOT, timeout=300)
    assert p.returncode == 0, (p.stdout[-1500:], p.stderr[-2500:])
    assert p.stdout.strip(), "the example printed nothing"
