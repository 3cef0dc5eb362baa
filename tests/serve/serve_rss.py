#!/usr/bin/env python3
"""`gpuprof serve`'s resident memory under sustained load (issue 38: RSS climbed from 5.5 to 333 MB
before levelling off). Starts the server on a folder of traces (a generated large one, the
example, the shared folder's largest when ../shared is there), then keeps CLIENTS client threads
asking for ROUNDS x the whole mix each, reading every answer:

  normal   the index, the JSON listing, every view of every trace (report, timeline, flame, ops,
           the JSON endpoints), a diff of two
  hostile  unknown names, traversal, %00, bad parameters, a HEAD, a garbage request line, a
           request cut off half way, a client that closes without reading a large answer

and samples the server's VmRSS (/proc/PID/status) four times a second. Prints the RSS before,
the peak, and after each round; exit 1 when, with the default 30,000-event trace, the peak passes
PEAK_MIB or the RSS once the load is over passes AFTER_MIB (docs/internals/serve.md, "Memory
under load": the documented bounds; measured 54 and 9 MiB, 120 and 90 before the bound), or when
a normal request fails.

--no-check: the memory bounds unchecked (sanitizer builds); failed requests still fail.
usage: serve_rss.py [--rounds N] [--clients N] [--big EVENTS] [--large] [--arena-max N|default]
                    [--no-check]
Env: GPUPROF (the binary), GP_SOURCE_DIR, GP_SHARED_DIR (optional).
"""
import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

PEAK_MIB = 128   # --analyses 2: two profiles' models and renderings at once, plus the listing
AFTER_MIB = 40   # what the server keeps once the requests are over
GP = os.environ["GPUPROF"]
SRC = os.environ["GP_SOURCE_DIR"]
SHARED = os.environ.get("GP_SHARED_DIR", os.path.join(SRC, "..", "shared"))


def big_trace(path, n):
    """A synthetic trace of n CPU ops and n kernels (about 190 bytes per pair)."""
    with open(path, "w") as f:
        f.write('{"traceEvents":[')
        for i in range(n):
            ts = i * 10
            f.write('{"ph":"X","cat":"cpu_op","name":"op%d","pid":1,"tid":1,"ts":%d,"dur":8,'
                    '"args":{"External id":%d}},' % (i % 500, ts, i))
            f.write('{"ph":"X","cat":"kernel","name":"k%d","pid":0,"tid":7,"ts":%d,"dur":5,'
                    '"args":{"External id":%d,"correlation":%d}},' % (i % 300, ts + 3, i, i))
        f.write('{"ph":"M","name":"process_name","pid":1,"args":{"name":"p"}}]}')


def make_dir(work, big, with_large):
    d = os.path.join(work, "profiles")
    os.makedirs(d)
    shutil.copy(os.path.join(SRC, "examples", "traces", "example_step.json"),
                os.path.join(d, "step.json"))
    big_trace(os.path.join(d, "big.json"), big)
    names = ["step.json", "big.json"]
    large = os.path.join(SHARED, "traces", "large_v100_nccl.json.gz")
    if with_large and os.path.exists(large):
        shutil.copy(large, os.path.join(d, "large.json.gz"))
        names.append("large.json.gz")
    return d, names


def rss_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def raw(port, data, read=True, timeout=60.0):
    """Sends data; returns the status code (0: none) after reading the whole answer, or closes
    at once when read is False."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(data)
        if not read:
            return 0
        got = b""
        while True:
            b = s.recv(1 << 16)
            if not b:
                break
            if len(got) < 64:
                got += b
        parts = got.split(b" ", 2)
        return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    except OSError:
        return 0
    finally:
        s.close()


def get(port, path, method="GET"):
    return raw(port, ("%s %s HTTP/1.1\r\nHost: x\r\n\r\n" % (method, path)).encode())


def mixes(names):
    views = ["/report/", "/timeline/", "/flame/", "/ops/", "/api/profiler/summary/",
             "/api/profiler/analysis/", "/api/profiler/kernels/", "/api/profiler/ops/",
             "/api/profiler/memory/", "/api/profiler/hta/", "/api/profiler/flame/",
             "/api/profiler/timeline/"]
    normal = ["/", "/api/profiler/profiles", "/healthz"]
    normal += [v + n for n in names for v in views]
    normal.append("/diff?base=%s&current=%s" % (names[0], names[1]))
    hostile = ["/report/nosuch.json", "/report/..%2F..%2Fetc%2Fpasswd", "/flame/a%00b.json",
               "/api/profiler/flame/%s?weight=bogus" % names[0], "/" + "a" * 3000,
               "/api/profiler/analysis/" + "%2F" * 200]
    return normal, hostile


def client(port, normal, hostile, rounds, fails, seq):
    for r in range(rounds):
        for path in normal:
            code = get(port, path)
            if code not in (200, 503):  # 503: every analysis slot taken for 30 s
                fails.append("%s: %d" % (path, code))
        for path in hostile:
            get(port, path)
        get(port, "/api/profiler/profiles", "HEAD")
        raw(port, b"\x16\x03\x01 garbage\r\n\r\n")
        raw(port, b"GET /report/big.json HTTP/1.1\r\nHo", read=False)  # cut off half way
        raw(port, b"GET /timeline/big.json HTTP/1.1\r\nHost: x\r\n\r\n", read=False)
        seq.append(r)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--arena-max", default="")
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--big", type=int, default=30000, help="events of the generated trace")
    ap.add_argument("--large", action="store_true", help="add the shared large_v100_nccl")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="gp_serve_rss_")
    env = dict(os.environ)
    if a.arena_max:
        env["GP_SERVE_ARENA_MAX"] = "0" if a.arena_max == "default" else a.arena_max
    try:
        d, names = make_dir(work, a.big, a.large)
        port_file = os.path.join(work, "port")
        proc = subprocess.Popen([GP, "serve", "--dir", d, "--listen", "127.0.0.1:0",
                                 "--port-file", port_file],
                                stderr=open(os.path.join(work, "stderr"), "w"), env=env)
        for _ in range(100):
            if os.path.exists(port_file) and os.path.getsize(port_file):
                break
            time.sleep(0.1)
        port = int(open(port_file).read())
        normal, hostile = mixes(names)
        start = rss_kib(proc.pid)
        peak = [start]
        done = threading.Event()

        def sample():
            while not done.is_set():
                peak[0] = max(peak[0], rss_kib(proc.pid))
                time.sleep(0.25)

        th_s = threading.Thread(target=sample, daemon=True)
        th_s.start()
        fails, seq = [], []
        t0 = time.time()
        ths = [threading.Thread(target=client, args=(port, normal, hostile, a.rounds, fails, seq))
               for _ in range(a.clients)]
        for t in ths:
            t.start()
        last = 0
        while any(t.is_alive() for t in ths):
            time.sleep(1)
            if len(seq) // a.clients > last:
                last = len(seq) // a.clients
                print("round %d: %.0f s, RSS %.1f MiB (peak %.1f)" %
                      (last, time.time() - t0, rss_kib(proc.pid) / 1024, peak[0] / 1024),
                      flush=True)
        for t in ths:
            t.join()
        time.sleep(1)
        done.set()
        end = rss_kib(proc.pid)
        n = a.clients * a.rounds * (len(normal) + len(hostile) + 4)
        print("serve RSS: start %.1f MiB, peak %.1f MiB, end %.1f MiB over %d requests in %.0f s "
              "(%d clients, arena max %s); %d normal requests failed" %
              (start / 1024, peak[0] / 1024, end / 1024, n, time.time() - t0, a.clients,
               a.arena_max or "built-in", len(fails)), flush=True)
        for f in fails[:10]:
            print("  " + f)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
        if a.no_check:  # the memory figures unchecked (sanitizers), the answers still
            return 1 if fails else 0
        ok = not fails and peak[0] <= PEAK_MIB * 1024 and end <= AFTER_MIB * 1024
        print(("ok" if ok else "FAIL") + ": peak %.1f MiB (bound %d), after %.1f MiB (bound %d)" %
              (peak[0] / 1024, PEAK_MIB, end / 1024, AFTER_MIB))
        return 0 if ok else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
