#!/usr/bin/env python3
"""Regression tests of issue #21 items 2-4 and the concurrency of issue #15 for `gpuprof serve`
and `gpuprof exporter`, on loopback, bounded in time (each check has its own deadline):

  slow      300 slow clients (one byte every second, from one address and then from 300) hold
            the server; /healthz still answers within 1 s, from a fresh address and from the
            slow clients' own; each slow client is cut off with 408 once the whole-head deadline
            passes, however the bytes trickle in (both servers)
  garbage   a garbage request line, a TLS handshake, %00 in a name: 400 at once (both servers)
  fifo      a FIFO in the served folder and in a job: listed never / refused with the name, no
            request hangs, SIGTERM stops the server at once (serve)
  symlinks  a link out of the folder is not listed or served (a job's rank file: 403), a link
            inside is; --follow-symlinks serves both (serve)
  busy      a long report holds one request; /healthz and the index answer within 1 s meanwhile;
            SIGTERM during it exits within 5 s (serve)
  one_address  16 clients from one address that never read large answers: /healthz, / and the
            listing still answer; 16 clients at exactly the per-address cap asking again at once:
            no 503 (serve; issue 38)

usage: serve_hardening.py serve|exporter|one_address   Env: GPUPROF, GP_SOURCE_DIR (exporter: GP_FAKE_NVML).
"""
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

GP = os.environ["GPUPROF"]
SRC = os.environ["GP_SOURCE_DIR"]
FAILS = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        FAILS.append(what)


def start(args, work, env=None):
    port_file = os.path.join(work, "port")
    if os.path.exists(port_file):
        os.unlink(port_file)
    proc = subprocess.Popen([GP] + args + ["--listen", "127.0.0.1:0", "--port-file", port_file],
                            stderr=open(os.path.join(work, "stderr"), "w"), env=env)
    for _ in range(100):
        if os.path.exists(port_file) and os.path.getsize(port_file):
            return proc, int(open(port_file).read())
        time.sleep(0.1)
    proc.kill()
    raise SystemExit("server did not start: " + open(os.path.join(work, "stderr")).read())


def stop(proc, limit=5.0):
    """SIGTERM; the seconds it took to exit (limit + 1 when it did not)."""
    t = time.time()
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(limit)
        return time.time() - t
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return limit + 1


def request(port, raw, source="127.0.0.1", timeout=5.0):
    """Sends raw bytes; (status code or None, body bytes, seconds)."""
    t = time.time()
    s = socket.socket()
    s.settimeout(timeout)
    data = b""
    try:
        s.bind((source, 0))
        s.connect(("127.0.0.1", port))
        s.sendall(raw)
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    finally:
        s.close()
    status = None
    if data.startswith(b"HTTP/1."):
        try:
            status = int(data.split(b" ", 2)[1])
        except (IndexError, ValueError):
            pass
    return status, data.partition(b"\r\n\r\n")[2], time.time() - t


def get(port, path, source="127.0.0.1", timeout=5.0):
    return request(port, b"GET " + path.encode() + b" HTTP/1.1\r\nHost: x\r\n\r\n", source,
                   timeout)


def slow_clients(port, sources, seconds):
    """Connects one slow client per source address; each sends one byte a second. Returns the
    sockets and a list filled with (status line, seconds alive) as each is cut off."""
    socks = []
    for src in sources:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((src, 0))
        s.settimeout(5)
        s.connect(("127.0.0.1", port))
        socks.append((s, time.time()))
    cut = []
    head = b"GET /healthz HTTP/1.1\r\nHost: slow\r\nX-Slow: " + b"a" * 100

    def reply(s):
        """What the server sent before it cut s off: None while it is still open, b"" when it
        closed with nothing."""
        s.setblocking(False)
        try:
            return s.recv(200)
        except BlockingIOError:
            return None
        except OSError:
            return b""
        finally:
            s.setblocking(True)

    def trickle():
        alive = list(socks)
        for i in range(seconds):
            still = []
            for s, t0 in alive:
                # Read before writing: once the server has answered and closed, the byte sent
                # next draws a reset and sendall fails (EPIPE), though the answer is still there
                # to read.
                got = reply(s)
                if got is None:
                    try:
                        s.sendall(head[i:i + 1])
                    except OSError:
                        pass
                    got = reply(s)
                if got is not None:
                    cut.append((got.split(b"\r\n")[0], time.time() - t0))
                    continue
                still.append((s, t0))
            alive = still
            time.sleep(1)
        for s, _ in alive:
            s.close()

    th = threading.Thread(target=trickle, daemon=True)
    th.start()
    return th, cut


def check_slow(port, what, n=300):
    for label, sources in (("from one address", ["127.0.0.2"] * n),
                           ("from %d addresses" % n,
                            ["127.0.%d.%d" % (1 + i // 250, 1 + i % 250) for i in range(n)])):
        th, cut = slow_clients(port, sources, 14)
        time.sleep(1.5)
        worst = 0.0
        ok = 0
        for k in range(7):
            src = "127.0.0.1" if k % 2 == 0 else sources[0]
            st, _, secs = get(port, "/healthz", source=src, timeout=3)
            worst = max(worst, secs)
            ok += st in (200, 503) and secs < 1.0  # the exporter's health may say 503 (no GPU)
            time.sleep(0.3)
        check(ok == 7, "%s: /healthz answered 7 of 7 within 1 s with %d slow clients %s "
              "(%d; slowest %.2f s)" % (what, n, label, ok, worst))
        th.join(20)
        timed_out = [c for c in cut if c[0].startswith(b"HTTP/1.1 408")]
        if label.startswith("from one"):  # 32 pending per address: the older ones were dropped
            check(len(cut) == n, "%s: every slow client %s was cut off (%d of %d)" %
                  (what, label, len(cut), n))
        else:
            other = sorted(set(c[0] for c in cut) - {c[0] for c in timed_out})
            check(len(timed_out) == n and max(c[1] for c in timed_out) < 12.5,
                  "%s: every slow client %s got 408 within the 10 s head deadline "
                  "(%d of %d; slowest %.1f s; %d cut off otherwise %r; %d never)" %
                  (what, label, len(timed_out), n, max([c[1] for c in timed_out] or [0]),
                   len(cut) - len(timed_out), other[:3], n - len(cut)))


def check_garbage(port, what):
    for raw, label in ((b"garbage\r\n\r\n", "a request line without a target"),
                       (b"\x16\x03\x01\x02\x00\x01\x00", "a TLS handshake"),
                       (b"GET /healthz%00.json HTTP/1.1\r\nHost: x\r\n\r\n", "%00 in the target"),
                       (b"GET /a b c\r\n\r\n", "a malformed request line")):
        st, _, secs = request(port, raw, timeout=3)
        check(st == 400 and secs < 1.0, "%s: %s gets 400 at once (%s, %.2f s)" %
              (what, label, st, secs))
    st, body, _ = request(port, b"GET /api/profiler/summary/a%00.json HTTP/1.1\r\n\r\n")
    try:
        doc = json.loads(body)
    except ValueError:
        doc = {}
    check(st == 400 and doc.get("status") == 400 and "%00" in doc.get("message", ""),
          "%s: %%00 under /api/ is a JSON 400 (%s %r)" % (what, st, body[:100]))


def make_dir(work):
    d = os.path.join(work, "profiles")
    os.makedirs(os.path.join(d, "job"))
    os.makedirs(os.path.join(d, "pair", "base"))
    os.makedirs(os.path.join(d, "pair", "current"))
    step = os.path.join(SRC, "examples", "traces", "example_step.json")
    for dst in ("a.json", "job/rank0.json", "job/rank1.json", "pair/base/r0.json",
                "pair/current/r0.json"):
        shutil.copy(step, os.path.join(d, dst))
    return d


def check_fifo(work):
    d = make_dir(work)
    os.mkfifo(os.path.join(d, "pipe.json"))
    os.mkfifo(os.path.join(d, "job", "rank2.json"))
    proc, port = start(["serve", "--dir", d], work)
    st, body, secs = get(port, "/api/profiler/profiles", timeout=3)
    names = [p["name"] for p in json.loads(body)["profiles"]] if st == 200 else []
    check(st == 200 and secs < 1 and "pipe.json" not in names and "job" in names,
          "fifo: the listing answers at once and leaves the FIFO out (%s)" % names)
    st, _, secs = get(port, "/report/pipe.json", timeout=3)
    check(st == 404 and secs < 1, "fifo: a FIFO's name is 404 at once (%s)" % st)
    st, body, secs = get(port, "/api/profiler/summary/job", timeout=3)
    check(st == 422 and secs < 1 and b"job/rank2.json: not a regular file" in body
          and json.loads(body)["status"] == 422,
          "fifo: a job holding a FIFO is a JSON 422 naming it (%s %r)" % (st, body[:120]))
    check(stop(proc) < 2, "fifo: SIGTERM stops the server at once")


def check_symlinks(work):
    d = make_dir(work)
    outside = os.path.join(work, "outside")
    os.makedirs(outside)
    shutil.copy(os.path.join(d, "a.json"), os.path.join(outside, "secret.json"))
    os.symlink(os.path.join(outside, "secret.json"), os.path.join(d, "out.json"))
    os.symlink(os.path.join(d, "a.json"), os.path.join(d, "in.json"))
    os.symlink(outside, os.path.join(d, "outdir"))
    os.symlink(os.path.join(outside, "secret.json"), os.path.join(d, "job", "rank9.json"))
    for follow in (False, True):
        proc, port = start(["serve", "--dir", d] + (["--follow-symlinks"] if follow else []),
                           work)
        _, body, _ = get(port, "/api/profiler/profiles")
        names = [p["name"] for p in json.loads(body)["profiles"]]
        st_out = get(port, "/api/profiler/summary/out.json")[0]
        st_in = get(port, "/api/profiler/summary/in.json")[0]
        st_job, body_job, _ = get(port, "/api/profiler/summary/job")
        if not follow:
            check("out.json" not in names and "outdir" not in names and "in.json" in names,
                  "symlinks: links out of the folder are not listed (%s)" % names)
            check(st_out == 404 and st_in == 200,
                  "symlinks: a link out is 404, a link inside is served (%s, %s)" %
                  (st_out, st_in))
            check(st_job == 403 and b"job/rank9.json: a symbolic link out" in body_job,
                  "symlinks: a job with a rank file linked out is 403 naming it (%s)" % st_job)
        else:
            check("out.json" in names and "outdir" in names and st_out == 200 and
                  st_job == 200, "symlinks: --follow-symlinks serves them (%s %s %s)" %
                  (names, st_out, st_job))
        stop(proc)


def big_trace(path, n):
    """A synthetic trace of n nested CPU ops and n kernels (long to analyse and render)."""
    with open(path, "w") as f:
        f.write('{"traceEvents":[')
        for i in range(n):
            ts = i * 10
            f.write('{"ph":"X","cat":"cpu_op","name":"op%d","pid":1,"tid":1,"ts":%d,"dur":8,'
                    '"args":{"External id":%d}},' % (i % 500, ts, i))
            f.write('{"ph":"X","cat":"kernel","name":"k%d","pid":0,"tid":7,"ts":%d,"dur":5,'
                    '"args":{"External id":%d,"correlation":%d}},' % (i % 300, ts + 3, i, i))
        f.write('{"ph":"M","name":"process_name","pid":1,"args":{"name":"p"}}]}')


def check_busy(work):
    d = make_dir(work)
    big_trace(os.path.join(d, "big.json"), 300000)
    proc, port = start(["serve", "--dir", d], work)
    results = []

    def long_request():
        results.append(get(port, "/report/big.json", timeout=120)[0])

    threads = [threading.Thread(target=long_request, daemon=True) for _ in range(6)]
    for th in threads:
        th.start()
    time.sleep(0.3)
    worst = 0.0
    ok = 0
    for _ in range(5):
        st, _, secs = get(port, "/healthz", timeout=3)
        st2, _, secs2 = get(port, "/", timeout=3)
        worst = max(worst, secs, secs2)
        ok += st == 200 and st2 == 200 and max(secs, secs2) < 1.0
    running = sum(th.is_alive() for th in threads)
    check(ok == 5 and running > 0, "busy: /healthz and / answered 5 of 5 within 1 s while 6 "
          "reports of a 600 K-event trace were built (%d; slowest %.2f s; reports still "
          "running: %d)" % (ok, worst, running))
    for th in threads:
        th.join(120)
    check(results == [200] * 6, "busy: the 6 reports answered 200 (%s)" % results)
    for _ in range(6):
        threading.Thread(target=long_request, daemon=True).start()
    time.sleep(0.3)
    secs = stop(proc)
    check(secs < 5, "busy: SIGTERM during 6 reports exits within 5 s (%.2f s)" % secs)
    proc, port = start(["serve", "--dir", d, "--max-input-mib", "1"], work)
    st, body, _ = get(port, "/api/profiler/summary/big.json")
    check(st == 413 and b"over this server's limit of 1.00 MiB" in body,
          "busy: a profile over --max-input-mib is a 413 (%s %r)" % (st, body[:120]))
    stop(proc)


def one_answer(port, path, source="127.0.0.1", timeout=5.0):
    """GET path and read only the head and Content-Length bytes (the server may not have closed
    yet: a quick client asks again at once); the status or None."""
    s = socket.socket()
    s.settimeout(timeout)
    data = b""
    try:
        s.bind((source, 0))
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        while b"\r\n\r\n" not in data:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        want = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                want = int(line.split(b":")[1])
        while len(body) < want:
            chunk = s.recv(65536)
            if not chunk:
                break
            body += chunk
        return int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.") else None
    except (OSError, ValueError, IndexError):
        return None
    finally:
        s.close()


def check_one_address(work):
    """Issue 38: 16 clients from one address that never read large answers do not make the
    server refuse that address (/healthz, the index) nor others; 16 well-behaved clients from one
    address, exactly the per-address cap, each asking again as soon as it has read its answer,
    never get 503."""
    d = make_dir(work)
    big_trace(os.path.join(d, "big.json"), 150000)
    proc, port = start(["serve", "--dir", d], work)
    st, body, _ = get(port, "/api/profiler/timeline/big.json", timeout=60)
    check(st == 200 and len(body) > (5 << 20), "one address: the timeline JSON is large (%s, %d "
          "bytes)" % (st, len(body)))
    idle = []
    for _ in range(16):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /api/profiler/timeline/big.json HTTP/1.1\r\nHost: x\r\n\r\n")
        idle.append(s)
    # the 16 answers are computed (2 at a time; the address is at its cap of 16 meanwhile),
    # then never read: wait until each idle client has the start of its answer waiting
    deadline = time.time() + 120
    waiting = set(idle)
    while waiting and time.time() < deadline:
        r, _, _ = select.select(list(waiting), [], [], 1.0)
        waiting -= set(r)
    check(not waiting, "one address: the 16 unread answers were computed")
    time.sleep(1)
    got = [get(port, p, timeout=2) for p in ("/healthz", "/", "/api/profiler/profiles")] * 2
    check(all(g[0] == 200 and g[2] < 2 for g in got),
          "one address: with 16 answers never read, /healthz, / and the listing answer 200 "
          "within 2 s (%s)" % [g[0] for g in got])
    for s in idle:
        s.close()
    time.sleep(1)
    results = []
    lock = threading.Lock()

    def client():
        mine = [one_answer(port, "/healthz") for _ in range(25)]
        with lock:
            results.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(results.count(200) == len(results) == 400,
          "one address: 16 clients at the per-address cap, 25 requests each: 400 answered 200 "
          "(503: %d, other: %d)" % (results.count(503), len(results) - results.count(200) -
                                    results.count(503)))
    check(stop(proc) < 5, "one address: SIGTERM stops the server")


def main():
    mode = sys.argv[1]
    work = tempfile.mkdtemp(prefix="gp_harden_")
    try:
        if mode == "one_address":  # that check alone
            os.makedirs(os.path.join(work, "one"))
            check_one_address(os.path.join(work, "one"))
        elif mode == "serve":
            d = make_dir(os.path.join(work, "slow"))
            proc, port = start(["serve", "--dir", d], work)
            check_garbage(port, "serve")
            check_slow(port, "serve")
            check(stop(proc) < 2, "serve: SIGTERM stops it after the slow clients")
            for name, fn in (("fifo", check_fifo), ("symlinks", check_symlinks),
                             ("busy", check_busy), ("one_address", check_one_address)):
                sub = os.path.join(work, name)
                os.makedirs(sub)
                fn(sub)
        else:
            env = dict(os.environ, GP_NVML_LIBRARY=os.environ["GP_FAKE_NVML"],
                       GP_FAKE_NVML_SCENARIO=os.path.join(SRC, "bench", "monitor",
                                                          "eight_gpus.txt"))
            proc, port = start(["exporter", "--interval", "200ms"], work, env)
            check_garbage(port, "exporter")
            check_slow(port, "exporter")
            check(stop(proc) < 2, "exporter: SIGTERM stops it after the slow clients")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d failure(s)" % len(FAILS) if FAILS else "all checks passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
