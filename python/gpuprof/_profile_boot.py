"""gpuprof profile's bootstrap: runs an unmodified Python program under torch.profiler.

`gpuprof profile [options] -- python train.py ARGS` runs ``python -c <this file> train.py ARGS``
(the C command embeds this file, so it needs no installed package) with its settings in the
environment:

    GPUPROF_PROFILE_DIR     where the trace goes: DIR/rank<RANK>.pt.trace.json.gz (gzip)
    GPUPROF_PROFILE_STEPS   "WAIT,WARMUP,ACTIVE" steps (torch.profiler.schedule's wait, warmup,
                            active; repeat 1)
    GPUPROF_PROFILE_SHAPES, GPUPROF_PROFILE_STACK, GPUPROF_PROFILE_MEMORY
                            "1": record_shapes, with_stack, profile_memory

A step is each optimizer step (every torch.optim.Optimizer's step(), patched or, on torch >= 2.0,
through register_optimizer_step_post_hook), or each explicit ``gpuprof.step()`` once the program
calls one (then the optimizer steps no longer count).

With Kineto (torch 2.x) this is torch.profiler.profile(schedule=..., on_trace_ready=...) with
prof.step() on each step. Without Kineto (Debian's python3-torch 1.13) the legacy autograd
profiler runs from the start, is restarted after WAIT+WARMUP steps (what came before is dropped)
and stopped after ACTIVE more, each step a "ProfilerStep#N" range. When the program ends first,
what was recorded so far is written (the whole run when it never steps).
"""
import functools
import gzip
import importlib.util
import os
import runpy
import shutil
import sys
import tempfile
import threading
import types


def _say(msg):
    sys.stderr.write("gpuprof profile: %s\n" % msg)


class _Session:
    """The profiler around the program, advanced by its steps."""

    def __init__(self, torch, out, steps, shapes, stack, memory):
        self.torch = torch
        self.out = out
        self.wait, self.warmup, self.active = steps
        self.opts = dict(record_shapes=shapes, with_stack=stack, profile_memory=memory)
        fn = getattr(torch.autograd, "kineto_available", None)
        self.kineto = bool(fn and fn())
        self.cuda = bool(torch.cuda.is_available())
        self.steps = 0
        self.explicit = False
        self.done = False
        self.prof = None
        self.step_range = None
        self.lock = threading.RLock()

    # -- Kineto: torch.profiler with a schedule (torch 2.x; untested on this project's machines)
    def _start_kineto(self):
        P = self.torch.profiler
        acts = [P.ProfilerActivity.CPU] + ([P.ProfilerActivity.CUDA] if self.cuda else [])
        sched = P.schedule(wait=self.wait, warmup=self.warmup, active=self.active, repeat=1)
        self.prof = P.profile(activities=acts, schedule=sched, on_trace_ready=self._ready,
                              **self.opts)
        self.prof.start()

    def _ready(self, prof):
        self._export(prof)
        self.done = True

    # -- legacy: the autograd profiler, restarted and stopped by hand
    def _begin_legacy(self):
        self.prof = self.torch.autograd.profiler.profile(use_cuda=self.cuda, **self.opts)
        self.prof.__enter__()

    def _range_begin(self):
        rf = self.torch.autograd.profiler.record_function("ProfilerStep#%d" % self.steps)
        rf.__enter__()
        self.step_range = rf

    def _range_end(self):
        if self.step_range is not None:
            self.step_range.__exit__(None, None, None)
            self.step_range = None

    def start(self):
        if self.kineto:
            self._start_kineto()
        else:
            self._begin_legacy()
            self._range_begin()

    def step(self, explicit):
        with self.lock:
            if explicit:
                self.explicit = True
            elif self.explicit:
                return
            if self.done:
                return
            self.steps += 1
            if self.kineto:
                self.prof.step()
                return
            self._range_end()
            if self.steps == self.wait + self.warmup:
                self.prof.__exit__(None, None, None)  # drop the wait and warm-up steps
                self._begin_legacy()
            elif self.steps == self.wait + self.warmup + self.active:
                self._finish_legacy()
                return
            self._range_begin()

    def _finish_legacy(self):
        self._range_end()
        self.prof.__exit__(None, None, None)
        self._export(self.prof)
        self.done = True

    def finish(self):
        """At the program's end: writes what was recorded when the schedule did not end."""
        with self.lock:
            if self.kineto:
                self.prof.stop()  # a window in progress ends here (on_trace_ready)
                if not self.done:
                    _say("the program made %d step(s), fewer than wait+warmup (%d): nothing was "
                         "recorded; try --steps 0,0,%d" % (self.steps, self.wait + self.warmup,
                                                           max(1, self.steps)))
                return
            if self.done:
                return
            if self.steps < self.wait + self.warmup + self.active:
                _say("the program ended after %d step(s) (--steps asked for %d,%d,%d): writing "
                     "what was recorded%s" % (self.steps, self.wait, self.warmup, self.active,
                                              " (the whole run)" if self.steps < self.wait +
                                              self.warmup else ""))
            self._finish_legacy()

    def _export(self, prof):
        tmp = tempfile.mkdtemp(prefix="gpuprof-profile-")
        try:
            raw = os.path.join(tmp, "trace.json")
            prof.export_chrome_trace(raw)
            part = self.out + ".part"
            with open(raw, "rb") as src, gzip.open(part, "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.replace(part, self.out)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def _hook_optimizers(torch, session):
    """Calls session.step(False) after each optimizer step."""
    opt_mod = getattr(torch.optim, "optimizer", None)
    register = getattr(opt_mod, "register_optimizer_step_post_hook", None)
    if register is not None:
        register(lambda opt, args, kwargs: session.step(False))
        return
    depth = threading.local()

    def wrap(cls):
        fn = getattr(cls, "step", None)
        if fn is None or getattr(fn, "_gpuprof_step", False):
            return

        @functools.wraps(fn)
        def step(self, *args, **kwargs):
            d = getattr(depth, "n", 0)
            depth.n = d + 1
            try:
                return fn(self, *args, **kwargs)
            finally:
                depth.n = d
                if d == 0:  # a subclass calling super().step() counts once
                    session.step(False)

        step._gpuprof_step = True
        cls.step = step

    base = torch.optim.Optimizer
    orig_init = base.__init__

    @functools.wraps(orig_init)
    def init(self, *args, **kwargs):
        wrap(type(self))
        orig_init(self, *args, **kwargs)

    base.__init__ = init


def _explicit_step_module(session):
    """gpuprof.step() calls _gpuprof_profile.step(); without the gpuprof package installed a
    stand-in module `gpuprof` with step() alone lets the program call it anyway."""
    hook = types.ModuleType("_gpuprof_profile")
    hook.step = lambda: session.step(True)
    sys.modules["_gpuprof_profile"] = hook
    if importlib.util.find_spec("gpuprof") is None:
        stub = types.ModuleType("gpuprof")
        stub.step = hook.step
        sys.modules["gpuprof"] = stub


def _settings():
    out_dir = os.environ.get("GPUPROF_PROFILE_DIR", "gpuprof_profile")
    steps = tuple(int(x) for x in os.environ.get("GPUPROF_PROFILE_STEPS", "1,1,3").split(","))
    flag = lambda name: os.environ.get(name) == "1"
    rank = os.environ.get("RANK") or os.environ.get("LOCAL_RANK") or "0"
    out = os.path.join(out_dir, "rank%d.pt.trace.json.gz" % int(rank))
    return out, steps, flag("GPUPROF_PROFILE_SHAPES"), flag("GPUPROF_PROFILE_STACK"), \
        flag("GPUPROF_PROFILE_MEMORY")


def main(argv):
    if not argv:
        _say("no program: gpuprof profile -- python SCRIPT [ARGS]")
        return 2
    try:
        import torch
    except ImportError as e:
        _say("%s cannot import torch (%s): run the program with a Python that has it"
             % (sys.executable, e))
        return 2
    # sys.path as `python SCRIPT` / `python -m MODULE` has it: `-c` put the working directory
    # ('') first, where a script's own directory belongs (a module keeps the working directory).
    if argv[0] != "-m":
        first = os.path.dirname(os.path.abspath(argv[0]))
        if sys.path and sys.path[0] == "":
            sys.path[0] = first
        else:
            sys.path.insert(0, first)
    out, steps, shapes, stack, memory = _settings()
    session = _Session(torch, out, steps, shapes, stack, memory)
    _hook_optimizers(torch, session)
    _explicit_step_module(session)
    session.start()
    try:
        if argv[0] == "-m":
            sys.argv = argv[1:]
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(argv)
            runpy.run_path(argv[0], run_name="__main__")
    finally:
        session.finish()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
