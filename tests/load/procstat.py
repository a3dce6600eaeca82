#!/usr/bin/env python3
"""Process measurements for the load benchmarks (Linux /proc, standard library only).

  procstat.py cpu PID                 CPU seconds used so far by PID and its descendants, the reaped ones
                                      included (utime+stime+cutime+cstime of /proc/PID/stat)
  procstat.py mem PID                 peak RSS of PID alone (VmHWM of /proc/PID/status), in MiB
  procstat.py sample OUT PID...       until SIGTERM, every 0.25 s: the largest sum of VmRSS and of Pss over each
                                      PID's process tree; then writes "rss_mib pss_mib" to OUT
  procstat.py series OUT SECONDS PID  until SIGTERM, every SECONDS: a line "elapsed_s rss_kib fds threads cpu_s" of
                                      PID alone appended to OUT (tests/load/memory-bench.sh)
  procstat.py run OUT -- CMD...       runs CMD, writes its CPU seconds (user+system, children included) to OUT,
                                      exits with its status
"""
import os
import signal
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def tree(pid):
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children(p))
    return out


def stat_ticks(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    # After the comm field: state is fields[0]; utime, stime, cutime, cstime are stat fields 14..17.
    return sum(int(x) for x in fields[11:15])


def status_kib(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def pss_kib(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "cpu":
        print(f"{sum(stat_ticks(p) for p in tree(int(sys.argv[2]))) / TICK:.2f}")
    elif cmd == "mem":
        print(f"{status_kib(int(sys.argv[2]), 'VmHWM') / 1024:.1f}")
    elif cmd == "sample":
        out, roots = sys.argv[2], [int(p) for p in sys.argv[3:]]
        stop = []
        signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
        best_rss = best_pss = 0
        while True:
            pids = [p for r in roots for p in tree(r)]
            best_rss = max(best_rss, sum(status_kib(p, "VmRSS") for p in pids))
            best_pss = max(best_pss, sum(pss_kib(p) for p in pids))
            # Written every time: the result is there whenever the sampler is stopped.
            with open(out + ".tmp", "w") as f:
                f.write(f"{best_rss / 1024:.1f} {best_pss / 1024:.1f}\n")
            os.replace(out + ".tmp", out)
            if stop:
                break
            time.sleep(0.25)
    elif cmd == "series":
        out, every, pid = sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
        stop = []
        signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
        start = time.monotonic()
        while not stop:
            try:
                fds = len(os.listdir(f"/proc/{pid}/fd"))
                threads = len(os.listdir(f"/proc/{pid}/task"))
            except OSError:
                break
            with open(out, "a") as f:
                f.write(f"{time.monotonic() - start:.1f} {status_kib(pid, 'VmRSS')} {fds} {threads} "
                        f"{stat_ticks(pid) / TICK:.2f}\n")
            # Sleeps in small steps so that SIGTERM ends it promptly.
            until = time.monotonic() + every
            while not stop and time.monotonic() < until:
                time.sleep(min(0.25, every))
    elif cmd == "run":
        out, rest = sys.argv[2], sys.argv[3:]
        if rest and rest[0] == "--":
            rest = rest[1:]
        proc = subprocess.Popen(rest)
        _, status, usage = os.wait4(proc.pid, 0)
        with open(out, "w") as f:
            f.write(f"{usage.ru_utime + usage.ru_stime:.2f}\n")
        sys.exit(os.waitstatus_to_exitcode(status))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
