"""gpuprof.read and the Trace methods: each returns exactly what the matching CLI command prints
with --json (the same C functions), errors carry the file and byte offset, Ctrl-C interrupts a
large read."""
import gzip
import json
import signal
import time

import pytest

import gpuprof
from conftest import shared_trace


def test_summary_equals_cli(example_trace, cli_json):
    t = gpuprof.read(example_trace)
    assert t.ranks == 1 and t.events > 0 and t.has_gpu
    assert dict(t.summary()) == cli_json("summary", example_trace, "--json")
    assert dict(t.summary(kinds=["kernel"])) == cli_json("summary", example_trace, "--json",
                                                         "--kind", "kernel")


def test_analyze_equals_cli(example_trace, cli_json):
    t = gpuprof.read(example_trace)
    assert dict(t.analyze()) == cli_json("analyze", example_trace, "--json")
    assert dict(t.analyze(hta=True)) == cli_json("analyze", example_trace, "--json", "--hta")


def test_text_formats_equal_cli(example_trace, cli):
    t = gpuprof.read(example_trace)
    assert t.summary(format="text", top=10) == cli("summary", example_trace).stdout
    assert t.analyze(format="text") == cli("analyze", example_trace).stdout


def test_diff_equals_cli(example_profiles, cli):
    base, cur = example_profiles
    b, c = gpuprof.read(base), gpuprof.read(cur)
    got = b.diff(c)
    want = json.loads(cli("diff", base, cur, "--json", check=False).stdout)
    assert dict(got) == want
    assert got["summary"]["regression"] >= 1


def test_flame_folded_equals_cli(example_trace, cli, tmp_path):
    t = gpuprof.read(example_trace)
    out = tmp_path / "cli.folded"
    cli("flame", example_trace, "-o", out)
    want = {}
    for line in out.read_text().splitlines():
        stack, w = line.rsplit(" ", 1)
        want[stack] = int(w)
    assert t.flame() == want
    t.flame(tmp_path / "f.html")
    assert (tmp_path / "f.html").stat().st_size > 1000
    with pytest.raises(ValueError):
        t.flame(tmp_path / "f.png")


def _folded(path):
    stacks = {}
    for line in path.read_text().splitlines():
        stack, w = line.rsplit(" ", 1)
        stacks[stack] = int(w)
    return stacks


def test_flame_by_module_equals_cli(cli, tmp_path):
    path = shared_trace("modern_h100_timesformer.json.gz")
    t = gpuprof.read(path)
    out = tmp_path / "cli.folded"
    cli("flame", path, "--by", "module", "-o", out)
    got = t.flame(by="module")
    assert got == _folded(out)
    assert any(s.startswith("(no module)") for s in got) and len(got) > 5
    # The stack page carries the module tree too (the "Frames" switch), as the CLI's does.
    t.flame(tmp_path / "py.html", title="tf")
    cli("flame", path, "--title", "tf", "-o", tmp_path / "cli.html")
    assert (tmp_path / "py.html").read_bytes() == (tmp_path / "cli.html").read_bytes()
    with pytest.raises(ValueError):
        t.flame(by="thread")


def test_pages_are_written(example_trace, tmp_path):
    t = gpuprof.read(example_trace)
    t.report(tmp_path / "report.html", title="example")
    t.timeline(tmp_path / "timeline.html")
    t.write_chrome(tmp_path / "converted.json")
    for name in ("report.html", "timeline.html"):
        assert (tmp_path / name).read_text().lstrip().lower().startswith("<!doctype html>")
    again = gpuprof.read(tmp_path / "converted.json")
    assert again.events == t.events


def test_parse_error_names_file_and_offset(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"traceEvents": [{"ph": "X", "name": "k", "ts": 1, "dur": }]}')
    with pytest.raises(gpuprof.ParseError) as e:
        gpuprof.read(bad)
    msg = str(e.value)
    assert "bad.json" in msg and "byte" in msg
    assert isinstance(e.value, ValueError) and isinstance(e.value, gpuprof.Error)
    assert e.value.reason


def test_read_mapped_or_not(tmp_path):
    """mmap=True (the file mapped) and the default (read(2)) read alike: the same figures, and a
    truncated file fails with the same message at the same byte."""
    text = '{"traceEvents": [' + ",".join(
        '{"ph": "X", "cat": "cpu_op", "name": "op%d", "pid": 1, "tid": 1, "ts": %d, "dur": 2}'
        % (i % 3, 3 * i) for i in range(500)) + "]}"
    path = tmp_path / "t.json"
    path.write_text(text)
    mapped, read = gpuprof.read(path, mmap=True), gpuprof.read(path)
    assert mapped.events == read.events == 500
    assert mapped.summary() == read.summary()
    path.write_text(text[: len(text) * 2 // 3])
    messages = []
    for m in (True, False):
        with pytest.raises(gpuprof.ParseError) as e:
            gpuprof.read(path, mmap=m)
        messages.append(str(e.value))
    assert messages[0] == messages[1] and "t.json" in messages[0] and "byte" in messages[0]


def test_missing_file_raises_gpuprof_error(tmp_path):
    with pytest.raises(gpuprof.NotFoundError) as e:  # GP_ENOENT, not an I/O error
        gpuprof.read(tmp_path / "nope.json")
    assert "nope.json" in str(e.value)
    assert isinstance(e.value, gpuprof.Error) and isinstance(e.value, LookupError)


def test_bad_arguments(example_trace):
    t = gpuprof.read(example_trace)
    with pytest.raises(ValueError):
        t.summary(format="xml")
    with pytest.raises(ValueError):
        t.summary(kinds=["not_a_kind"])
    with pytest.raises(ValueError):
        t.analyze(steps="bogus")
    with pytest.raises(TypeError):
        gpuprof.read(42)


def test_result_tables_and_pandas(example_trace):
    t = gpuprof.read(example_trace)
    s = t.summary()
    rows = s.rows()
    assert rows and all("kind" in r for r in rows)
    a = t.analyze()
    assert "temporal_breakdown" in a.tables()
    with pytest.raises(KeyError):
        a.rows("nope")
    pandas = pytest.importorskip("pandas")
    df = a.to_pandas("temporal_breakdown")
    assert isinstance(df, pandas.DataFrame) and len(df) == len(a["temporal_breakdown"])


def test_modern_trace_and_rank_job(cli_json):
    path = shared_trace("modern_h100_timesformer.json.gz")
    t = gpuprof.read(path)
    assert dict(t.summary()) == cli_json("summary", path, "--json")
    job = shared_trace("multirank8_dlrm_v100")
    j = gpuprof.read(job)
    assert j.ranks == 8
    a = j.analyze()
    assert len(a["temporal_breakdown"]) == 8


def _big_trace(path, events):
    with gzip.open(path, "wt", compresslevel=1) as f:
        f.write('{"traceEvents": [')
        for i in range(events):
            f.write('%s{"ph":"X","cat":"kernel","name":"k%d","pid":0,"tid":7,"ts":%d,"dur":1,'
                    '"args":{"stream":7,"correlation":%d}}' % ("," if i else "", i % 50, i * 2, i))
        f.write("]}")


def test_ctrl_c_interrupts_a_large_read(tmp_path):
    path = tmp_path / "big.json.gz"
    _big_trace(path, 400_000)

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.001)
        with pytest.raises(KeyboardInterrupt):
            gpuprof.read(path)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    # the abandoned read finishes on its own thread and frees its result; reading works again
    t = gpuprof.read(path)
    assert t.events == 400_000


def test_ops_equals_cli(example_trace, cli_json, cli):
    t = gpuprof.read(example_trace)
    assert dict(t.ops()) == cli_json("ops", example_trace, "--json")
    assert dict(t.ops(by="kernel", top=3)) == cli_json("ops", example_trace, "--json", "--by",
                                                       "kernel", "--top", "3")
    assert t.ops(format="text") == cli("ops", example_trace).stdout
    rows = t.ops().rows()
    assert rows and rows[0]["key"]
    with pytest.raises(ValueError):
        t.ops(by="bogus")


def test_ops_on_a_modern_trace_has_a_roofline(cli_json):
    path = shared_trace("modern_h100_vit.json.gz")
    got = gpuprof.read(path).ops(by="shape", top=10)
    assert dict(got) == cli_json("ops", path, "--json", "--by", "shape", "--top", "10")
    assert got["modeled"] > 0
