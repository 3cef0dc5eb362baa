#!/usr/bin/env python3
"""Writes the synthetic inputs of the compile tests (committed; rerun to regenerate):

  breaks.log            a TORCH_TRACE log: fn (frame 0, compile 0/0) breaks at model.py:12 on
                        Tensor.item() and resumes in torch_dynamo_resume_in_fn_at_12 (frame 1)
  compiled.json         a Kineto trace of 2 iterations of fn compiled: per iteration a guard
                        check, region 0/0 (a fused RMSNorm triton kernel + aten::mm), the eager
                        aten::item at the break (a DtoH memcpy), a guard check, region 1/0 (a fused
                        relu + add kernel), then an eager aten::copy_ between iterations
  eager.json            the same 2 iterations run eagerly: aten::pow, mean, add, rsqrt, mul, mm,
                        item, relu, add, copy_, one kernel each

Every figure is an exact integer of microseconds so the expectations in the tests and goldens can
be checked by hand (docs/compile.md, "Checked against")."""
import hashlib
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
PID, TID, DEV, STREAM = 100, 100, 0, 7


class Trace:
    def __init__(self, name):
        self.name, self.events, self.corr = name, [], 0

    def op(self, name, ts, dur, cat="cpu_op"):
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": PID, "tid": TID,
                            "ts": ts, "dur": dur, "args": {}})

    def launch(self, ts, gpu_name, gpu_ts, gpu_dur, api="cudaLaunchKernel", cat="kernel"):
        self.corr += 1
        self.events.append({"ph": "X", "cat": "cuda_runtime", "name": api, "pid": PID,
                            "tid": TID, "ts": ts, "dur": 4, "args": {"correlation": self.corr}})
        self.events.append({"ph": "X", "cat": cat, "name": gpu_name, "pid": DEV, "tid": STREAM,
                            "ts": gpu_ts, "dur": gpu_dur,
                            "args": {"correlation": self.corr, "device": DEV,
                                     "stream": STREAM}})

    def write(self):
        doc = {"schemaVersion": 1, "traceEvents": self.events,
               "deviceProperties": [{"id": 0, "name": "synthetic GPU"}]}
        with open(os.path.join(HERE, self.name), "w") as f:
            json.dump(doc, f, indent=0)
            f.write("\n")


RMS = "triton_red_fused_add_mean_mul_pow_rsqrt_0"
RELU = "triton_poi_fused_add_relu_1"


def compiled():
    t = Trace("compiled.json")
    for it in range(2):
        b = 1000 + it * 1000  # iteration start, us
        t.op("TorchDynamo Cache Lookup", b, 5)
        t.op("Torch-Compiled Region: 0/0", b + 10, 100)
        t.op("## Call CompiledFxGraph fsynth0 ##", b + 15, 90, cat="user_annotation")
        t.op(RMS, b + 20, 20)
        t.launch(b + 25, RMS, b + 40, 20)
        t.op("aten::mm", b + 50, 30)
        t.launch(b + 55, "gemm_kernel", b + 70, 30)
        # the break: .item() runs eagerly (a DtoH copy), 110..180
        t.op("aten::item", b + 120, 40)
        t.op("aten::_local_scalar_dense", b + 125, 30)
        t.launch(b + 130, "Memcpy DtoH (Device -> Pageable)", b + 140, 2,
                 api="cudaMemcpyAsync", cat="gpu_memcpy")
        t.op("TorchDynamo Cache Lookup", b + 170, 5)
        t.op("Torch-Compiled Region: 1/0", b + 180, 60)
        t.op("## Call CompiledFxGraph fsynth1 ##", b + 185, 50, cat="user_annotation")
        t.op(RELU, b + 190, 20)
        t.launch(b + 195, RELU, b + 200, 10)
        # between iterations: an eager copy_
        t.op("aten::copy_", b + 400, 50)
        t.launch(b + 410, "copy_kernel", b + 420, 25)
    t.write()


def eager():
    t = Trace("eager.json")
    ops = [("aten::pow", "pow_kernel", 8), ("aten::mean", "reduce_kernel", 8),
           ("aten::add", "add_kernel", 5), ("aten::rsqrt", "rsqrt_kernel", 5),
           ("aten::mul", "mul_kernel", 6), ("aten::mm", "gemm_kernel", 30),
           ("aten::item", None, 2), ("aten::relu", "relu_kernel", 6),
           ("aten::add", "add_kernel", 5), ("aten::copy_", "copy_kernel", 25)]
    for it in range(2):
        b = 1000 + it * 1000
        for k, (op, kernel, gdur) in enumerate(ops):
            ts = b + 60 * k
            t.op(op, ts, 50)
            if kernel:
                t.launch(ts + 5, kernel, ts + 20, gdur)
            else:
                t.op("aten::_local_scalar_dense", ts + 5, 30)
                t.launch(ts + 10, "Memcpy DtoH (Device -> Pageable)", ts + 20, gdur,
                         api="cudaMemcpyAsync", cat="gpu_memcpy")
    t.write()


PREFIX = "V1206 15:18:20.253000 1500233 torch/_dynamo/x.py:1] "


def record(out, obj, payload=None):
    if payload is not None:
        obj["has_payload"] = hashlib.md5(payload.encode()).hexdigest()
    out.append(PREFIX + json.dumps(obj))
    if payload is not None:
        out.extend("\t" + line for line in payload.split("\n"))


def log():
    out = []
    ident = lambda f: {"frame_id": f, "frame_compile_id": 0, "attempt": 0}
    record(out, {"dynamo_start": {"stack": [{"line": 30, "name": "<module>",
                                             "filename": "/x/train.py"}]}, **ident(0)})
    record(out, {"artifact": {"name": "dynamo_graph_break_reason", "encoding": "string"},
                 **ident(0)},
           "Graph break in user code at /x/model.py:12\n"
           "Graph Break Reason: Unsupported Tensor.item() call with capture_scalar_outputs=False\n"
           "User code traceback:\n"
           "  File \"/x/model.py\", line 12, in fn")
    for f, name, line in ((0, "fn", 8), (1, "torch_dynamo_resume_in_fn_at_12", 12)):
        record(out, {"compilation_metrics": {
            "co_name": name, "co_filename": "/x/model.py", "co_firstlineno": line,
            "graph_op_count": 5 if f == 0 else 2, "guard_count": 4,
            "entire_frame_compile_time_s": 0.25}, **ident(f)})
    with open(os.path.join(HERE, "breaks.log"), "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    compiled()
    eager()
    log()
