#!/usr/bin/env python3
"""How long this machine's disk takes to flush, at the pace of the hub's WAL (issue 23's p99).

    tests/load/flush-probe.py [DIR] [SECONDS] [FLUSHES_PER_S] [BYTES]

Writes BYTES (default 110,000: one group commit's WAL at 64 connections) and flushes them with fdatasync,
FLUSHES_PER_S times a second (default 300) for SECONDS (default 60), in a 64 MiB file under DIR (default /tmp)
that it removes; prints the flush times' percentiles and every flush of 30 ms or more with when it happened.
Every commit waits for such a flush, so a p99 over a run of 15 s at 64 connections can be no better than the
stalls this shows: wrk corrects its latencies for coordinated omission, and one stall of a few hundred
milliseconds adds enough samples to set the p99 (docs/performance.md). Nothing else is touched; bounded in time.
"""
import os
import sys
import tempfile
import time

directory = sys.argv[1] if len(sys.argv) > 1 else "/tmp"
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 60.0
rate = float(sys.argv[3]) if len(sys.argv) > 3 else 300.0
size = int(sys.argv[4]) if len(sys.argv) > 4 else 110_000
span = 64 << 20

fd, path = tempfile.mkstemp(prefix="flush-probe.", dir=directory)
try:
    os.ftruncate(fd, span)
    os.fsync(fd)
    data = os.urandom(size)
    times = []
    start = time.perf_counter()
    next_at = start
    offset = 0
    while time.perf_counter() - start < seconds:
        next_at += 1.0 / rate
        wait = next_at - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        t0 = time.perf_counter()
        os.pwrite(fd, data, offset)
        os.fdatasync(fd)
        times.append((t0 - start, time.perf_counter() - t0))
        offset = 0 if offset + 2 * size > span else offset + size
finally:
    os.close(fd)
    os.unlink(path)

ordered = sorted(t for _, t in times)


def pct(p):
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))] * 1e3


slow = [(at, t) for at, t in times if t >= 0.030]
print(f"{len(times)} flushes of {size} B in {seconds:.0f} s under {directory}: p50 {pct(0.5):.2f} ms, "
      f"p99 {pct(0.99):.2f} ms, p99.9 {pct(0.999):.2f} ms, max {ordered[-1] * 1e3:.1f} ms; "
      f"{len(slow)} of 30 ms or more, {sum(1 for _, t in slow if t >= 0.1)} of 100 ms or more")
if slow:
    print("at (s): ms  " + ", ".join(f"{at:.1f}: {t * 1e3:.0f}" for at, t in slow))
