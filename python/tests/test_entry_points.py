"""The entry points people type first (issue 35): `python -m gpuprof ...` is the CLI (same output,
same exit codes), and `gpuprof profile -- python train.py` runs an unmodified training script under
torch.profiler (Debian's python3-torch 1.13 here: no Kineto, the legacy autograd profiler), one
gzip trace per rank, then the summary, the findings and report.html."""
import gzip
import json
import os
import subprocess
import sys
import textwrap

import pytest

import gpuprof
from gpuprof import __main__ as gp_main

from conftest import ROOT

# A real (tiny) training loop: an MLP fitted with SGD; the optimizer's steps are the profiler's.
TRAIN = textwrap.dedent("""
    import sys
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(256, 32), torch.randn(256, 1)
    first = None
    for step in range(int(sys.argv[1])):
        loss = torch.nn.functional.mse_loss(model(x), y)
        first = first if first is not None else loss.item()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("loss %.4f -> %.4f" % (first, loss.item()))
""")

# No optimizer: the program marks its steps with gpuprof.step().
EXPLICIT = textwrap.dedent("""
    import torch
    import gpuprof

    w = torch.randn(16, 16)
    for i in range(6):
        w = torch.tanh(w @ w.t())
        gpuprof.step()
    print("explicit, the package:", hasattr(gpuprof, "read"))
""")


def python_m(*args, env=None):
    """`python -m gpuprof ARGS` with this package importable."""
    e = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, "-m", "gpuprof", *map(str, args)], capture_output=True,
                          text=True, env=e, timeout=600)


def test_python_m_is_the_cli(cli, example_trace):
    for args in (["--version"], ["summary", "--json", str(example_trace)],
                 ["memory", "--json", str(example_trace)]):
        p, c = python_m(*args), cli(*args)
        assert (p.returncode, p.stdout) == (0, c.stdout)
    for args, code in ((["frobnicate"], 2), (["summary", "/nonexistent/t.json"], 2),
                       (["anaylze"], 2)):
        p, c = python_m(*args), cli(*args, check=False)
        assert p.returncode == c.returncode == code
        assert p.stderr == c.stderr
    assert "did you mean `gpuprof analyze`?" in python_m("anaylze").stderr


def test_python_m_finds_the_program_without_gpuprof_cli(cli):
    env = {k: v for k, v in os.environ.items() if k != "GPUPROF_CLI"}
    env["PATH"] = "/usr/bin:/bin"
    p = subprocess.run([sys.executable, "-c", "from gpuprof import __main__ as m; "
                        "print(m.find_cli())"], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    found = p.stdout.strip()
    assert found and found != "None" and gp_main._is_program(found)


def test_console_script_is_not_a_program(tmp_path):
    """A `gpuprof` script on PATH (the console script) is skipped: no exec loop."""
    script = tmp_path / "gpuprof"
    script.write_text("#!/bin/sh\nexit 99\n")
    script.chmod(0o755)
    assert not gp_main._is_program(str(script))


@pytest.fixture(scope="module")
def torch_python():
    """This interpreter, when it can import torch (Debian's python3-torch)."""
    p = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True)
    if p.returncode != 0:
        pytest.skip("no torch for " + sys.executable)
    return sys.executable


def read_trace(path):
    with gzip.open(path, "rt") as f:  # gzip, as the command promises
        doc = json.load(f)
    return doc if isinstance(doc, list) else doc["traceEvents"]


def steps_of(events):
    return sorted(e["name"] for e in events if e.get("name", "").startswith("ProfilerStep#"))


def test_profile_a_training_script(cli, torch_python, tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    out = tmp_path / "prof"
    p = cli("profile", "--steps", "1,1,3", "--record-shapes", "-o", out, "--", torch_python,
            tmp_path / "train.py", "8")
    assert "loss " in p.stdout  # the program ran, with its arguments
    trace = out / "rank0.pt.trace.json.gz"
    events = read_trace(trace)
    # wait 1 + warm-up 1 dropped, then 3 active optimizer steps, each a ProfilerStep range
    assert steps_of(events) == ["ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"]
    names = {e["name"] for e in events}
    assert "aten::addmm" in names and any("SGD.step" in n for n in names)
    assert "CPU OP TIMING REPORT" in p.stdout  # the summary
    assert "BOTTLENECKS AND SUGGESTIONS" in p.stdout  # the findings
    assert (out / "report.html").stat().st_size > 1000
    # the trace is one gpuprof reads: three steps' optimizer calls
    summary = gpuprof.read(str(trace)).summary()
    rows = {r["name"]: r for k in summary["kinds"] for r in k["rows"]}
    assert rows["Optimizer.step#SGD.step"]["calls"] == 3


def test_python_m_profile_with_explicit_steps(torch_python, tmp_path):
    """gpuprof.step() of the installed package drives the schedule (no optimizer)."""
    (tmp_path / "explicit.py").write_text(EXPLICIT)
    out = tmp_path / "prof"
    p = python_m("profile", "-q", "--steps", "0,2,2", "-o", out, "--", torch_python,
                 tmp_path / "explicit.py")
    assert p.returncode == 0, p.stderr
    assert "explicit, the package: True" in p.stdout
    assert steps_of(read_trace(out / "rank0.pt.trace.json.gz")) == ["ProfilerStep#2",
                                                                     "ProfilerStep#3"]


def test_profile_without_the_package_and_without_steps(cli, torch_python, tmp_path):
    """Without gpuprof importable, gpuprof.step() still works (a stand-in module); a program that
    never steps is recorded whole, and says so."""
    (tmp_path / "explicit.py").write_text(EXPLICIT)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    exe = os.environ.get("GPUPROF_CLI") or str(ROOT / "build" / "gpuprof")
    p = subprocess.run([exe, "profile", "-q", "--steps", "1,0,1", "-o", tmp_path / "a", "--",
                        torch_python, tmp_path / "explicit.py"], capture_output=True, text=True,
                       env=env, cwd=str(ROOT / "python"))  # a gpuprof/ in the working directory
    # is not importable by a script (as with `python explicit.py`)
    assert p.returncode == 0, p.stderr
    assert "explicit, the package: False" in p.stdout  # the stand-in
    assert steps_of(read_trace(tmp_path / "a" / "rank0.pt.trace.json.gz")) == ["ProfilerStep#1"]
    (tmp_path / "once.py").write_text("import torch\nprint(torch.ones(3).sum().item())\n")
    p = cli("profile", "-q", "-o", tmp_path / "b", "--", torch_python, tmp_path / "once.py")
    assert "writing what was recorded (the whole run)" in p.stderr
    names = {e["name"] for e in read_trace(tmp_path / "b" / "rank0.pt.trace.json.gz")}
    assert "aten::sum" in names


def test_profile_exit_codes(cli, torch_python, tmp_path):
    (tmp_path / "fail.py").write_text("import torch\ntorch.ones(2).sum()\nraise SystemExit(3)\n")
    p = cli("profile", "-q", "-o", tmp_path / "f", "--", torch_python, tmp_path / "fail.py",
            check=False)
    assert p.returncode == 3  # the program's
    assert "the program exited with status 3" in p.stderr
    assert (tmp_path / "f" / "report.html").exists()  # what was recorded is still reported
    for args in (["--", "./a.out"], ["--steps", "1,2", "--", torch_python, "x.py"], []):
        p = cli("profile", *args, check=False)
        assert p.returncode == 2, args


def test_step_outside_profile_does_nothing():
    assert gpuprof.step() is None


# A stand-in `torch` with Kineto (torch 2.x's API surface that the bootstrap uses), recording how it
# is driven: this machine's torch has no Kineto, so the Kineto path is checked against this.
FAKE_KINETO_TORCH = textwrap.dedent("""
    import json
    import types

    calls = []
    hooks = []

    def schedule(wait, warmup, active, repeat):
        return {"wait": wait, "warmup": warmup, "active": active, "repeat": repeat}

    class profile:
        def __init__(self, activities, schedule, on_trace_ready, **opts):
            self.schedule, self.ready, self.steps = schedule, on_trace_ready, 0
            calls.append({"activities": activities, "schedule": schedule, "opts": opts})

        def start(self):
            calls.append("start")

        def step(self):
            self.steps += 1
            s = self.schedule
            if self.steps == s["wait"] + s["warmup"] + s["active"]:
                calls.append("ready at step %d" % self.steps)
                self.ready(self)

        def stop(self):
            calls.append("stop")

        def export_chrome_trace(self, path):
            ev = {"ph": "X", "cat": "cpu_op", "name": "fake::kineto_op", "pid": 1, "tid": 1,
                  "ts": 0, "dur": 5, "args": {"calls": json.dumps(calls)}}
            with open(path, "w") as f:
                json.dump({"traceEvents": [ev]}, f)

    profiler = types.SimpleNamespace(profile=profile, schedule=schedule,
                                     ProfilerActivity=types.SimpleNamespace(CPU="CPU", CUDA="CUDA"))
    autograd = types.SimpleNamespace(kineto_available=lambda: True)
    cuda = types.SimpleNamespace(is_available=lambda: False)

    class Optimizer:
        def step(self):
            for h in hooks:
                h(self, (), {})

    optim = types.SimpleNamespace(Optimizer=Optimizer, optimizer=types.SimpleNamespace(
        register_optimizer_step_post_hook=hooks.append))
""")


def test_profile_kineto_path_with_a_stand_in_torch(cli, tmp_path):
    fake = tmp_path / "fake"
    (fake / "torch").mkdir(parents=True)
    (fake / "torch" / "__init__.py").write_text(FAKE_KINETO_TORCH)
    (tmp_path / "loop.py").write_text("import torch\nopt = torch.optim.Optimizer()\n"
                                      "for i in range(10):\n    opt.step()\nprint('looped')\n")
    exe = os.environ.get("GPUPROF_CLI") or str(ROOT / "build" / "gpuprof")
    env = dict(os.environ, PYTHONPATH=str(fake))
    p = subprocess.run([exe, "profile", "-q", "--steps", "1,2,3", "--record-shapes", "--memory",
                        "-o", tmp_path / "k", "--", sys.executable, tmp_path / "loop.py"],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert "looped" in p.stdout
    events = read_trace(tmp_path / "k" / "rank0.pt.trace.json.gz")
    calls = json.loads(events[0]["args"]["calls"])
    assert calls[0] == {"activities": ["CPU"],
                        "schedule": {"wait": 1, "warmup": 2, "active": 3, "repeat": 1},
                        "opts": {"record_shapes": True, "with_stack": False,
                                 "profile_memory": True}}
    assert calls[1:] == ["start", "ready at step 6"]  # on_trace_ready after wait+warmup+active
