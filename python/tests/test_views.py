"""The registry of views (include/gpuprof/views.h) drives three front ends: every entry, on every
shared trace and job (and the bundled example), gives the same bytes through its CLI command,
through `gpuprof serve` (a page: with the server's bar of links, which is all that differs) and
through Python's Trace.view(); and docs/reports.md's API table is `gpuprof serve --routes`."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

import gpuprof
from conftest import ROOT, SHARED

NAV = re.compile(rb'\n<nav id="gp-serve-nav"[^\n]*</nav>\n')
TL_DATA = re.compile(rb'<script id="gp-tl-data" type="application/json">(.*?)</script>\n', re.S)


def exe():
    e = os.environ.get("GPUPROF_CLI") or str(ROOT / "build" / "gpuprof")
    if not os.path.exists(e):
        pytest.skip("the gpuprof CLI is not built (GPUPROF_CLI)")
    return e


@pytest.fixture(scope="module")
def served():
    """A directory of the inputs (links to the shared traces and jobs and to the example trace),
    served by gpuprof serve: (directory, base URL, the listed names)."""
    work = Path(tempfile.mkdtemp(prefix="gp-views-"))
    d = work / "profiles"
    d.mkdir()
    os.symlink(ROOT / "examples" / "traces" / "example_step.json", d / "example_step.json")
    traces = SHARED / "traces"
    if traces.is_dir():
        for p in sorted(traces.iterdir()):
            if p.name in ("hta-reference", "tracelens-reference") or p.name.startswith("."):
                continue
            if p.is_dir() or p.name.endswith((".json", ".json.gz")):
                os.symlink(p, d / p.name)
    port_file = work / "port"
    srv = subprocess.Popen([exe(), "serve", "--dir", str(d), "--listen", "127.0.0.1:0",
                            "--port-file", str(port_file), "--follow-symlinks"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for _ in range(200):
        if port_file.exists() and port_file.read_text().strip():
            break
        time.sleep(0.05)
    else:
        srv.kill()
        pytest.fail("gpuprof serve did not start: %s" % srv.stderr.read().decode())
    base = "http://127.0.0.1:%s" % port_file.read_text().strip()
    listing = json.loads(urllib.request.urlopen(base + "/api/profiler/profiles").read())
    names = [(p["name"], p["type"] == "job") for p in listing["profiles"]
             if p["type"] in ("file", "job")]
    yield d, base, names
    srv.terminate()
    srv.wait(timeout=10)
    shutil.rmtree(work, ignore_errors=True)


def get(url):
    """(status, body) of a GET."""
    try:
        with urllib.request.urlopen(url, timeout=600) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def run_cli(v, d, name, out_dir):
    """(exit code, the bytes of the view) of the entry's command run in d on name."""
    args = v["cli"].split()[1:]
    out = None
    for i, a in enumerate(args):
        if a == "DIR/NAME":
            args[i] = "%s/%s" % (d, name)
        elif a == "NAME":
            args[i] = name
        elif a.startswith("OUT."):
            out = out_dir / ("view" + a[3:])
            args[i] = str(out)
    p = subprocess.run([exe(), *args], cwd=d, capture_output=True)
    if p.returncode != 0:
        return p.returncode, p.stderr
    return 0, out.read_bytes() if out else p.stdout


def test_registry_lists_every_route_once():
    views = gpuprof.views()
    assert len({v["name"] for v in views}) == len(views)
    assert len({v["route"] for v in views}) == len(views)
    assert {"report", "timeline", "flame", "summary", "analysis", "ops", "kernels", "memory",
            "hta", "flame_json", "timeline_json", "compile"} <= {v["name"] for v in views}
    for v in views:
        assert v["route"].startswith("/") and v["route"].endswith("/")
        assert v["html"] == (not v["route"].startswith("/api/"))


def test_docs_table_is_the_registry():
    p = subprocess.run([exe(), "serve", "--routes"], capture_output=True, text=True, check=True)
    doc = (ROOT / "docs" / "reports.md").read_text()
    m = re.search(r"<!-- BEGIN gpuprof serve --routes -->\n\| URL \| answer \|\n\|---\|---\|\n"
                  r"(.*?)<!-- END gpuprof serve --routes -->", doc, re.S)
    assert m, "docs/reports.md has no generated table"
    assert m.group(1) == p.stdout, "docs/reports.md: regenerate with gpuprof serve --routes"
    assert len(p.stdout.splitlines()) == len(gpuprof.views())


def test_index_links_every_linked_view(served):
    d, base, names = served
    status, body = get(base + "/")
    assert status == 200
    q = urllib.parse.quote(names[0][0], safe="")
    for v in gpuprof.views():
        assert (('href="%s%s"' % (v["route"], q)).encode() in body) == v["linked"], v["name"]


def test_bad_parameter_is_400_everywhere(served):
    d, base, names = served
    status, body = get(base + "/api/profiler/ops/example_step.json?by=bogus")
    assert status == 400 and b"by: expected" in body
    t = gpuprof.read(d / "example_step.json")
    with pytest.raises(ValueError, match="by: expected"):
        t.view("ops", by="bogus")
    with pytest.raises(ValueError, match="no view named"):
        t.view("nothing")


@pytest.mark.parametrize("view", [v["name"] for v in gpuprof.views()])
def test_same_bytes_through_cli_server_and_python(served, view, tmp_path):
    """Every entry x every input: CLI == server (less its bar) == Python, or all three fail."""
    d, base, names = served
    v = next(x for x in gpuprof.views() if x["name"] == view)
    checked = 0
    for name, job in names:
        status, body = get(base + v["route"] + urllib.parse.quote(name, safe=""))
        if v["html"]:
            body, n = NAV.subn(b"", body, count=1) if status == 200 else (body, 1)
            assert n == 1, "%s %s: no navigation bar" % (view, name)
        try:
            t = gpuprof.read("%s/%s" % (d, name), keep_op_shapes=v["keep_op_shapes"])
            py = t.view(view, title=name).encode()
        except gpuprof.Error as e:
            py = e
        if v["cli"]:
            rc, cli = run_cli(v, d, name, tmp_path)
        else:  # the timeline's data: the document the CLI's timeline page embeds
            rc, page = run_cli(next(x for x in gpuprof.views() if x["name"] == "timeline"), d,
                               name, tmp_path)
            cli = TL_DATA.search(page).group(1) + b"\n" if rc == 0 else page
        if rc != 0 and job and v["name"].startswith("compile"):
            # gpuprof compile --trace takes trace files: a job's compiled regions (one entry per
            # rank) are the server's and Python's only
            assert status == 200 and body == py, "%s %s: server and Python differ" % (view, name)
            continue
        if rc != 0:
            assert status >= 400, "%s %s: the CLI fails (%s), the server answers %d" % (
                view, name, cli[:200], status)
            assert isinstance(py, Exception), "%s %s: the CLI fails, Python does not" % (view, name)
            continue
        assert status == 200, "%s %s: %d %s" % (view, name, status, body[:300])
        assert body == cli, "%s %s: the server's bytes differ from `%s`" % (view, name, v["cli"])
        assert py == cli, "%s %s: Python's bytes differ from `%s`" % (view, name, v["cli"])
        checked += 1
    assert checked >= 1


def test_python_column_is_the_view(served):
    """Each entry's Python call (run as written, t the trace, NAME its name) gives the bytes of
    Trace.view(); the calls that write a file (OUT) write them."""
    d, base, names = served
    for name, _job in names[:4]:
        t = gpuprof.read("%s/%s" % (d, name))
        for v in gpuprof.views():
            want = t.view(v["name"], title=name)
            with tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "out.html")
                got = eval(v["python"], {"t": t, "NAME": name, "OUT": out})
                if "OUT" in v["python"]:
                    got = Path(out).read_text()
                assert got == want, "%s %s: %s" % (v["name"], name, v["python"])


def test_analyze_tables_are_the_registry_names(example_trace):
    t = gpuprof.read(example_trace)
    doc = t.analyze(tables=["memory", "peak_memory"])
    assert "memory" in doc and "peak_memory" in doc and "temporal_breakdown" not in doc
    assert t.analyze(tables=["stragglers"]).keys() == t.analyze(tables=["ranks"]).keys()
    with pytest.raises(ValueError, match="unknown table"):
        t.analyze(tables=["nope"])
    with pytest.raises(TypeError):
        t.analyze(tables="memory")
