"""No leaks: reference counts and traced memory stay flat over 10^5 profiled blocks and over
repeated reads and analyses."""
import sys
import tracemalloc

import gpuprof


def test_profile_blocks_do_not_leak():
    p = gpuprof.Profiler(ring_records=1 << 10)  # small ring: the store drops, memory stays bounded
    name = "hot_loop_range"
    step = 10**12 + 7  # a tag value object of our own (small ints are shared by the interpreter)
    for _ in range(1000):  # warm: interning, the spare scope
        with p.profile(name, step=step):
            pass
    before = (sys.getrefcount(name), sys.getrefcount(p), sys.getrefcount(step))
    tracemalloc.start()
    snap0 = tracemalloc.take_snapshot()
    for i in range(100_000):
        with p.profile(name, step=step):
            pass
    snap1 = tracemalloc.take_snapshot()
    tracemalloc.stop()
    after = (sys.getrefcount(name), sys.getrefcount(p), sys.getrefcount(step))
    assert after == before
    grown = sum(s.size_diff for s in snap1.compare_to(snap0, "filename"))
    assert grown < 64 * 1024, grown


def test_reads_and_analyses_do_not_leak(example_trace):
    t = gpuprof.read(example_trace)
    for _ in range(5):
        t.summary(); t.analyze()
    path = str(example_trace)
    before = sys.getrefcount(path)
    tracemalloc.start()
    snap0 = tracemalloc.take_snapshot()
    for _ in range(200):
        t2 = gpuprof.read(path)
        t2.summary()
        t2.analyze()
        del t2
    snap1 = tracemalloc.take_snapshot()
    tracemalloc.stop()
    assert sys.getrefcount(path) == before
    grown = sum(s.size_diff for s in snap1.compare_to(snap0, "filename"))
    assert grown < 256 * 1024, grown
