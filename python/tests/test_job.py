"""Issue 33.2: Trace.partial() and gpuprof.merge() give what `gpuprof analyze JOB_DIR` gives on the
8-rank job, whatever the order and grouping of the partials; the bytes equal the CLI's
`analyze --partial`; bad partials raise naming the one at fault."""
import random

import pytest

import gpuprof
from conftest import SHARED

JOB = SHARED / "traces" / "multirank8_dlrm_v100"


@pytest.fixture(scope="module")
def parts():
    if not JOB.is_dir():
        pytest.skip("shared traces absent")
    files = sorted(JOB.glob("*.json*"))
    return [gpuprof.read(f).partial() for f in files], files


def test_merge_equals_analyze_job(parts, cli, cli_json):
    ps, _ = parts
    job = cli_json("analyze", JOB, "--json")
    assert dict(gpuprof.merge(ps)) == job
    text = cli("analyze", JOB).stdout
    rnd = random.Random(33)
    for _ in range(3):
        shuffled = ps[:]
        rnd.shuffle(shuffled)
        assert gpuprof.merge(shuffled, format="text") == text
    # groups: merged partials merge again (associative)
    g1 = gpuprof.merge(ps[:3], format="partial")
    g2 = gpuprof.merge(ps[5:] + ps[3:5], format="partial")
    assert gpuprof.merge([g2, g1], format="text") == text
    assert gpuprof.merge([g2, g1], format="partial") == gpuprof.merge(ps, format="partial")


def test_partial_bytes_equal_cli(parts, cli, tmp_path):
    ps, files = parts
    out = tmp_path / "r0.gpp"
    cli("analyze", "--partial", out, files[0])
    assert out.read_bytes() == ps[0]
    # paths are read too
    assert gpuprof.merge([out] + ps[1:], format="text") == cli("analyze", JOB).stdout


def test_bad_partials_raise(parts):
    ps, _ = parts
    with pytest.raises(gpuprof.InvalidArgumentError, match="holds rank"):
        gpuprof.merge([ps[1], ps[1]])
    with pytest.raises(gpuprof.InvalidArgumentError, match="partial 1: not a gpuprof partial"):
        gpuprof.merge([ps[0], b"{}"])
    with pytest.raises(gpuprof.InvalidArgumentError, match="partial 0: truncated"):
        gpuprof.merge([ps[0][:100]])
    with pytest.raises(ValueError):
        gpuprof.merge(ps, format="html")
