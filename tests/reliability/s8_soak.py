"""Scenario 8: a 10-minute soak at a steady moderate rate (about 100 requests/s): no error answers, every order
delivered, and the hub's RSS and open file descriptors flat (first and last values printed; the first is taken
after a warm-up, when pools, caches and the allocator have settled)."""
import tempfile
import threading
import time

from lib import SHORT, Platform, Setup, finish, free_port, log, open_fds, reconcile, rss_kib

seconds = 60 if SHORT else 600
warmup = 10 if SHORT else 60
setup = Setup(tempfile.mkdtemp(prefix="rel-s8-"))
setup.set_pos(setup.pos_port)
pos = setup.start_pos()
port = free_port()
hub = setup.start_hub(port)
samples = []  # (seconds since start, hub RSS KiB, hub fds, POS RSS KiB, POS fds)
done = threading.Event()
started = time.time()


def sample():
    while not done.wait(5):
        samples.append((time.time() - started, rss_kib(hub.pid), open_fds(hub.pid), rss_kib(pos.pid),
                        open_fds(pos.pid)))


threading.Thread(target=sample, daemon=True).start()
platform = Platform(lambda: port, setup.webhook_path, workers=8, pace=0.07)
log(f"soak: 8 paced senders for {seconds} s")
platform.run(seconds, drain=30)
done.set()
problems = reconcile("s8_soak", setup, platform)
settled = [s for s in samples if s[0] >= warmup]
if len(settled) < 2:
    problems.append("too few samples after the warm-up")
else:
    first, last = settled[0], settled[-1]
    print(f"hub: RSS {first[1] // 1024} -> {last[1] // 1024} MiB, fds {first[2]} -> {last[2]}; "
          f"POS: RSS {first[3] // 1024} -> {last[3] // 1024} MiB, fds {first[4]} -> {last[4]} "
          f"(from {first[0]:.0f} s to {last[0]:.0f} s)")
    for who, rss_i, fd_i in (("hub", 1, 2), ("POS", 3, 4)):
        if last[rss_i] > first[rss_i] * 1.25 + 8 * 1024:
            problems.append(f"{who} RSS grew from {first[rss_i] // 1024} to {last[rss_i] // 1024} MiB")
        if last[fd_i] > first[fd_i] + 16:
            problems.append(f"{who} open descriptors grew from {first[fd_i]} to {last[fd_i]}")
if platform.non200:
    problems.append(f"error answers during the soak: {platform.non200}")
hub.stop()
pos.stop()
finish(problems)
