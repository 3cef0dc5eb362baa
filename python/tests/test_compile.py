"""gpuprof.compile_log and Trace.compile: `gpuprof compile` for Python. Each result is, key for key,
what the CLI prints with --json (text: the same text), on the small log of python/tests/data and
on the shared TORCH_TRACE logs and torch.compile trace (skipped when ../shared is absent)."""
import json

import pytest

import gpuprof
from conftest import ROOT, SHARED, shared_trace

LOG = ROOT / "python" / "tests" / "data" / "torch_trace_example.log"
COMPILED = "modern_mi300_torch_compile.json.gz"


def shared_log(name):
    p = SHARED / "compile-logs" / name
    if not p.exists():
        pytest.skip("%s is absent (../shared/compile-logs)" % name)
    return p


def cli_compile(cli, *args):
    return json.loads(cli("compile", *args, "--json").stdout)


def test_compile_log_equals_cli(cli):
    got = gpuprof.compile_log(LOG)
    assert isinstance(got, gpuprof.Result) and got.kind == "compile"
    assert dict(got) == cli_compile(cli, LOG)
    s = got["summary"]
    assert (s["frames"], s["compiles"], s["recompilations"], s["graph_breaks"]) == (2, 3, 1, 1)
    assert [r["id"] for r in got.rows()] == ["0/0", "1/0", "0/1"]  # compile_ids by default
    assert gpuprof.compile_log(LOG, format="text") == cli("compile", LOG).stdout
    assert gpuprof.compile_log(LOG, format="text", top=1) == cli("compile", LOG, "-n", "1").stdout
    assert json.loads(gpuprof.compile_log(str(LOG), format="json")) == dict(got)


@pytest.mark.parametrize("name", ["simple.log", "comp_metrics.log", "export.log",
                                  "multi_rank_logs"])
def test_shared_logs_equal_cli(cli, name):
    path = shared_log(name)
    assert dict(gpuprof.compile_log(path)) == cli_compile(cli, path)


def test_trace_compile_regions_and_speedup_equal_cli(cli, example_trace):
    compiled = shared_trace(COMPILED)
    t = gpuprof.read(compiled)
    got = t.compile()
    assert dict(got) == cli_compile(cli, "--trace", compiled)
    assert got["traces"][0]["regions"], "the compiled trace has compiled regions"
    assert dict(gpuprof.compile_log(traces=[compiled])) == dict(got)
    # Two traces (base, current): the speedup; a Trace and a path mix.
    both = t.compile(example_trace)
    assert dict(both) == cli_compile(cli, "--trace", compiled, "--trace", example_trace)
    assert "speedup" in both
    # A log and a trace together.
    assert dict(t.compile(log=LOG)) == cli_compile(cli, LOG, "--trace", compiled)


def test_compile_html_is_the_cli_page(cli, tmp_path):
    mine, theirs = tmp_path / "mine.html", tmp_path / "cli.html"
    got = gpuprof.compile_log(LOG, html=mine, title="t")
    cli("compile", LOG, "--html", theirs, "--title", "t")
    assert mine.read_text() == theirs.read_text()
    assert "train_step" in mine.read_text() and got["summary"]["compiles"] == 3


def test_compile_errors(tmp_path, example_trace):
    with pytest.raises(ValueError, match="no input"):
        gpuprof.compile_log()
    with pytest.raises(gpuprof.NotFoundError, match="nope.log"):  # GP_ENOENT
        gpuprof.compile_log(tmp_path / "nope.log")
    bad = tmp_path / "not_a_log.log"
    bad.write_text("hello\nworld\n")
    with pytest.raises(gpuprof.ParseError, match="not_a_log.log"):
        gpuprof.compile_log(bad)
    with pytest.raises(ValueError):
        gpuprof.compile_log(LOG, format="csv")
    with pytest.raises(ValueError, match="at most two"):
        gpuprof.compile_log(traces=[example_trace] * 3)
    with pytest.raises(TypeError):
        gpuprof.compile_log(traces=[42])
