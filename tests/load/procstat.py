#!/usr/bin/env python3
"""Process measurements for the load benchmarks (Linux /proc, standard library only).

  procstat.py cpu PID                 CPU seconds used so far by PID and its descendants, the reaped ones
                                      included (utime+stime+cutime+cstime of /proc/PID/stat)
  procstat.py times PID               "user system": CPU seconds used so far by PID alone (all its threads), apart
  procstat.py mem PID                 peak RSS of PID alone (VmHWM of /proc/PID/status), in MiB
  procstat.py sample OUT PID...       until SIGTERM, every 0.25 s: the largest sum of VmRSS and of Pss over each
                                      PID's process tree; then writes "rss_mib pss_mib" to OUT
  procstat.py series OUT SECONDS PID  until SIGTERM, every SECONDS: a line "elapsed_s rss_kib fds threads cpu_s" of
                                      PID alone appended to OUT (tests/load/memory-bench.sh)
  procstat.py run OUT -- CMD...       runs CMD, writes its CPU seconds (user+system, children included) to OUT,
                                      exits with its status
  procstat.py procs PID OUT           a snapshot of PID's tree to OUT (JSON): each process's title, its own user
                                      and system CPU ticks, and those of its children that ended
  procstat.py procsdiff A B           user and system CPU seconds between two snapshots by process title (a
                                      PostgreSQL backend's: "postgres: USER DATABASE"), largest first; processes
                                      that ended between them (autovacuum workers) counted in their parent's line
"""
import json
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


def cpu_ticks(pid):
    """(user, system) ticks of PID itself and (user, system) ticks of its reaped children; zeros when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return (0, 0), (0, 0)
    # After the comm field: state is fields[0]; utime, stime, cutime, cstime are stat fields 14..17.
    return (int(fields[11]), int(fields[12])), (int(fields[13]), int(fields[14]))


def stat_ticks(pid):
    own, reaped = cpu_ticks(pid)
    return sum(own) + sum(reaped)


def status_kib(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def title(pid):
    """The first three words of PID's command line: a PostgreSQL backend's "postgres: USER DATABASE", without the
    client's address and the backend's state that follow."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            words = f.read().replace(b"\0", b" ").decode(errors="replace").split()
    except OSError:
        return "?"
    return " ".join(words[:3])


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
    elif cmd == "times":
        (user, system), _ = cpu_ticks(int(sys.argv[2]))
        print(f"{user / TICK:.2f} {system / TICK:.2f}")
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
    elif cmd == "procs":
        snapshot, todo = {}, [(int(sys.argv[2]), "")]
        while todo:
            p, parent = todo.pop()
            own, reaped = cpu_ticks(p)
            snapshot[str(p)] = {"title": title(p), "own": own, "reaped": reaped, "parent": parent}
            todo.extend((c, snapshot[str(p)]["title"]) for c in children(p))
        with open(sys.argv[3], "w") as f:
            json.dump(snapshot, f)
    elif cmd == "procsdiff":
        with open(sys.argv[2]) as f:
            a = json.load(f)
        with open(sys.argv[3]) as f:
            b = json.load(f)
        by_title = {}  # title: [user, system] ticks

        def add(key, ticks, sign=1):
            row = by_title.setdefault(key, [0, 0])
            row[0] += sign * ticks[0]
            row[1] += sign * ticks[1]

        for p, now in b.items():
            was = a.get(p, {"own": (0, 0), "reaped": (0, 0)})
            add(now["title"], now["own"])
            add(now["title"], was["own"], -1)
            add(f"ended children of {now['title']}", now["reaped"])
            add(f"ended children of {now['title']}", was["reaped"], -1)
        for p, was in a.items():
            if p not in b:  # its whole life is in its parent's reaped time: only the part in the window counts
                add(f"ended children of {was['parent']}", was["own"], -1)
        print("   total     user   system")
        for t, (user, system) in sorted(by_title.items(), key=lambda kv: -sum(kv[1])):
            if user or system:
                print(f"{(user + system) / TICK:8.2f} {user / TICK:8.2f} {system / TICK:8.2f} s  {t}")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
