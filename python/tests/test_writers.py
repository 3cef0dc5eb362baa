"""Every file the Python package writes goes through the C library's writer (gp_write_file), with
the CLI's rules (issue 38, defect 1): a regular file is replaced whole or not at all (a failed
write keeps the old file and leaves no temporary file), a symbolic link is written through and
stays a link, a FIFO or device is written into and never replaced, a directory is refused."""
import json
import os
import stat
import subprocess
import sys
import threading

import pytest

import gpuprof
from conftest import ROOT

LOG = ROOT / "python" / "tests" / "data" / "torch_trace_example.log"
PROFILES = ROOT / "examples" / "profiles"
TRACE = ROOT / "examples" / "traces" / "example_step.json"

# Each writer as the code that builds it and writes to `path` (run here and in a subprocess).
WRITERS = {
    "compile_log_html": "gpuprof.compile_log(%r, html=path)" % str(LOG),
    "trace_compile_html": "gpuprof.read(%r).compile(log=%r, html=path)" % (str(TRACE), str(LOG)),
    "comparison_export_json": "gpuprof.compare_profiling_runs(%r, %r).export_json(path)"
                              % (str(PROFILES / "base.json"), str(PROFILES / "current.json")),
    "optimizer_export_suggestions": "gpuprof.ProfilerOptimizer(%r).export_suggestions(path)"
                                    % str(TRACE),
}


def write(name, path):
    exec(WRITERS[name], {"gpuprof": gpuprof, "path": path})


def leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if ".tmp" in p.name)


@pytest.fixture(params=sorted(WRITERS))
def writer(request):
    return request.param


def test_regular_file_is_replaced_whole(writer, tmp_path):
    out = tmp_path / "out"
    out.write_text("old")
    os.chmod(out, 0o640)
    write(writer, out)
    text = out.read_text()
    assert text != "old" and len(text) > 512
    if writer.endswith("html"):
        assert text.lstrip().lower().startswith("<!doctype html")
    else:
        json.loads(text)
    assert stat.S_IMODE(out.stat().st_mode) == 0o640  # a replaced file keeps its mode
    assert leftovers(tmp_path) == []


def test_symlink_is_written_through(writer, tmp_path):
    real, link = tmp_path / "real", tmp_path / "link"
    real.write_text("old")
    link.symlink_to(real.name)
    write(writer, link)
    assert link.is_symlink() and os.readlink(link) == real.name
    assert real.read_text() != "old" and len(real.read_text()) > 512
    assert leftovers(tmp_path) == []


def test_device_behind_a_link_is_written_into_not_replaced(writer, tmp_path):
    # The /dev/null of the report, reached through a link in a temporary folder: the device is
    # written into (nothing to see) and the link still names it.
    link = tmp_path / "null"
    link.symlink_to("/dev/null")
    write(writer, link)
    assert link.is_symlink() and os.readlink(link) == "/dev/null"
    assert stat.S_ISCHR(os.stat(link).st_mode)
    assert leftovers(tmp_path) == []


def test_fifo_is_written_into_not_replaced(writer, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []

    def drain():
        with open(fifo, "rb") as f:  # blocks until the writer opens the FIFO
            got.append(f.read())

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        write(writer, fifo)
    finally:
        if stat.S_ISFIFO(os.lstat(fifo).st_mode):
            reader.join(timeout=30)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced by a regular file"
    assert not reader.is_alive() and len(got) == 1 and len(got[0]) > 512
    assert leftovers(tmp_path) == []


def test_directory_is_refused_and_nothing_is_left(writer, tmp_path):
    # Writing over a directory is the rename that cannot succeed: a gpuprof error naming the
    # path, and no PATH.tmp* beside it.
    d = tmp_path / "adir"
    d.mkdir()
    with pytest.raises(gpuprof.Error, match="adir"):
        write(writer, d)
    assert d.is_dir() and list(d.iterdir()) == []
    assert leftovers(tmp_path) == []


# A full disk, injected: RLIMIT_FSIZE makes every write past 256 bytes fail (EFBIG; SIGXFSZ is
# ignored), in a subprocess so the limit stays there.
FULL_DISK = r"""
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
import gpuprof
resource.setrlimit(resource.RLIMIT_FSIZE, (256, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
path = sys.argv[1]
try:
    %s
except gpuprof.FileError as e:
    print("FileError:", e)
    sys.exit(3)
"""


def test_full_disk_keeps_the_old_file(writer, tmp_path):
    out = tmp_path / "out"
    old = "the old, complete file\n" * 4
    out.write_text(old)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), PYTHONDONTWRITEBYTECODE="1")
    p = subprocess.run([sys.executable, "-c", FULL_DISK % WRITERS[writer], str(out)],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 3, p.stdout + p.stderr
    assert str(out) in p.stdout  # the message names the file
    assert out.read_text() == old
    assert leftovers(tmp_path) == []


def test_write_file_rejects_bad_arguments(tmp_path):
    with pytest.raises(TypeError):
        gpuprof._core.write_file(tmp_path / "x", 12)
    with pytest.raises(TypeError):
        gpuprof._core.write_file(None, b"x")
    gpuprof._core.write_file(tmp_path / "b", b"\x00\x01")
    gpuprof._core.write_file(str(tmp_path / "s"), "\u00e9")
    assert (tmp_path / "b").read_bytes() == b"\x00\x01"
    assert (tmp_path / "s").read_bytes() == "\u00e9".encode()
