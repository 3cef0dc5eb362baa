#!/usr/bin/env python3
"""Writes example_step.json: a small, HAND-WRITTEN Kineto-format trace for the gpuprof demo.

It was NOT recorded on a GPU: it describes three training steps of a toy model (a host-to-device
copy, four kernels, an NCCL all-reduce on a second stream, a stream sync, allocator samples) with
round numbers, so every figure gpuprof prints for it can be checked by hand.
Usage: make_example_step.py [OUT]  (default: example_step.json beside this script)"""
import json
import os
import sys

ev = []
pid, tid = 4242, 4242
ev.append({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
           "args": {"name": "python3 (hand-written example)"}})
ev.append({"name": "process_name", "ph": "M", "pid": 0, "tid": 0,
           "args": {"name": "GPU 0 (hand-written example)"}})
ev.append({"name": "thread_name", "ph": "M", "pid": 0, "tid": 7, "args": {"name": "stream 7 "}})
ev.append({"name": "thread_name", "ph": "M", "pid": 0, "tid": 20, "args": {"name": "stream 20 "}})
t = 10.0
corr = 100
ext = 1
kernels = [("void gemm_kernel<float, 128, 64>(float const*, float const*, float*, int, int, int)", 55.0),
           ("void relu_kernel<float>(float*, int)", 4.0),
           ("void softmax_kernel<float, 256>(float const*, float*, int)", 9.5),
           ("angular_scattering", 15.0)]
for step in range(1, 4):
    step_start = t
    ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % step, "pid": pid,
               "tid": tid, "ts": round(t, 3), "dur": 0, "args": {"External id": ext}})
    step_idx = len(ev) - 1
    ext += 1
    ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::copy_", "pid": pid, "tid": tid,
               "ts": round(t + 1, 3), "dur": 30.0, "args": {"External id": ext}})
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": pid, "tid": tid,
               "ts": round(t + 2, 3), "dur": 8.0,
               "args": {"External id": ext, "cbid": 41, "correlation": corr}})
    ev.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0,
               "tid": 7, "ts": round(t + 12, 3), "dur": 20.0,
               "args": {"External id": ext, "device": 0, "context": 1, "stream": 7,
                        "correlation": corr, "bytes": 4194304, "memory bandwidth (GB/s)": 209.7152}})
    ext += 1
    corr += 1
    t += 40
    for name, dur in kernels:
        for rep in range(2 if "relu" in name else 1):
            op = ("mm" if "gemm" in name else "relu" if "relu" in name
                  else "softmax" if "softmax" in name else "scatter")
            ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::" + op, "pid": pid, "tid": tid,
                       "ts": round(t, 3), "dur": 12.0, "args": {"External id": ext}})
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid,
                       "tid": tid, "ts": round(t + 2, 3), "dur": 6.0,
                       "args": {"External id": ext, "cbid": 211, "correlation": corr}})
            g = t + 10 + step * 0.25
            ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7,
                       "ts": round(g, 3), "dur": dur + step * 0.125,
                       "args": {"External id": ext, "device": 0, "context": 1, "stream": 7,
                                "correlation": corr, "registers per thread": 64,
                                "shared memory": 16384, "grid": [128, 1, 1], "block": [256, 1, 1],
                                "est. achieved occupancy %": 50}})
            ext += 1
            corr += 1
            t = g + dur + 5
    ev.append({"ph": "X", "cat": "user_annotation", "name": "nccl:all_reduce", "pid": pid, "tid": tid,
               "ts": round(t, 3), "dur": 10.0, "args": {"External id": ext}})
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid, "tid": tid,
               "ts": round(t + 1, 3), "dur": 5.0,
               "args": {"External id": ext, "cbid": 211, "correlation": corr}})
    ev.append({"ph": "X", "cat": "kernel",
               "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
               "pid": 0, "tid": 20, "ts": round(t + 8, 3), "dur": 40.0,
               "args": {"External id": ext, "device": 0, "context": 1, "stream": 20,
                        "correlation": corr, "Collective name": "allreduce", "dtype": "Float",
                        "In msg nelems": 1048576, "Out msg nelems": 1048576, "Group size": 2}})
    ext += 1
    corr += 1
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": pid,
               "tid": tid, "ts": round(t + 10, 3), "dur": 45.0,
               "args": {"cbid": 131, "correlation": corr}})
    ev.append({"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 20,
               "ts": round(t + 48, 3), "dur": 1.0,
               "args": {"cuda_sync_kind": "Stream Sync", "stream": 20, "device": 0, "context": 1,
                        "correlation": corr}})
    corr += 1
    t += 60
    ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": pid,
               "tid": tid, "ts": round(t, 3),
               "args": {"Addr": 140000000000 + step * 4096, "Bytes": 4194304,
                        "Total Allocated": 4194304 * step, "Total Reserved": 33554432,
                        "Device Type": 1, "Device Id": 0}})
    ev[step_idx]["dur"] = round(t - step_start + 1, 3)
    t += 20
doc = {"schemaVersion": 1,
       "deviceProperties": [{"id": 0, "name": "Example GPU (hand-written trace, not a real device)",
                             "totalGlobalMem": 85899345920, "computeMajor": 9, "computeMinor": 0,
                             "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
                             "regsPerBlock": 65536, "regsPerMultiprocessor": 65536, "warpSize": 32,
                             "sharedMemPerBlock": 49152, "sharedMemPerMultiprocessor": 233472,
                             "numSms": 132, "sharedMemPerBlockOptin": 232448}],
       "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2},
       "note": "hand-written example trace for the gpuprof demo; not recorded on a GPU",
       "displayTimeUnit": "ms", "baseTimeNanoseconds": 1700000000000000000,
       "traceEvents": ev, "traceName": "examples/traces/example_step.json"}
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "example_step.json")
with open(out, "w") as f:
    f.write(json.dumps(doc, indent=0))
