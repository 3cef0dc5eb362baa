#!/usr/bin/env python3
"""Builds a synthetic N-rank job (issue 33.2's scale benchmark): the 8-rank job of
../shared/traces/multirank8_dlrm_v100 replicated N/8 times, replica k's ranks offset by 8k
(distributedInfo.rank, world_size N) and its ids (correlation, External id, Record function id,
flow ids) offset by k * 10^7, so that every file is a distinct rank of one job. Writes
OUT/rank<R>.json (uncompressed). Works on the JSON text (a regular expression per id field), so
that 1,024 ranks take seconds, not the minutes of a JSON round trip.
Usage: make_job.py N OUT [SHARED_DIR]"""
import gzip
import os
import re
import sys

IDS = re.compile(rb'("(?:correlation|External id|Record function id|id)": ?)(\d+)')
DIST_RANK = re.compile(rb'("distributedInfo": ?\{[^}]*?"rank": ?)(\d+)')
DIST_WORLD = re.compile(rb'("distributedInfo": ?\{[^}]*?"world_size": ?)(\d+)')


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    shared = sys.argv[3] if len(sys.argv) > 3 else os.path.join(os.path.dirname(__file__),
                                                                  "..", "..", "..", "shared")
    src = os.path.join(shared, "traces", "multirank8_dlrm_v100")
    files = sorted(f for f in os.listdir(src) if f.endswith(".json.gz"))
    if n % len(files):
        sys.exit("N must be a multiple of %d" % len(files))
    os.makedirs(out, exist_ok=True)
    for f in files:
        with gzip.open(os.path.join(src, f), "rb") as fp:
            text = fp.read()
        base = int(DIST_RANK.search(text).group(2))
        text = DIST_WORLD.sub(lambda m: m.group(1) + b"%d" % n, text, count=1)
        # split once at the ids, so that each replica only joins offset numbers
        parts = IDS.split(text)  # [text, prefix, number, text, prefix, number, ...]
        for k in range(n // len(files)):
            off = k * 10_000_000
            pieces = parts[:]
            for i in range(2, len(pieces), 3):
                pieces[i] = b"%d" % (int(pieces[i]) + off)
            body = b"".join(pieces)
            body = DIST_RANK.sub(lambda m: m.group(1) + b"%d" % (base + 8 * k), body, count=1)
            with open(os.path.join(out, "rank%05d.json" % (base + 8 * k)), "wb") as fp:
                fp.write(body)


if __name__ == "__main__":
    main()
