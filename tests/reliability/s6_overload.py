"""Scenario 6: overload. More concurrent connections than the hub's --max-connections, and a burst above the
partner's rate limit: the excess is refused with a clear JSON answer (503 too_many_connections, 429
rate_limited), every accepted request still keeps its promises, and the hub's memory stays bounded."""
import tempfile
import threading
import time

from lib import SHORT, Platform, Setup, finish, free_port, log, reconcile, rss_kib

seconds = 15 if SHORT else 45
setup = Setup(tempfile.mkdtemp(prefix="rel-s6-"))
setup.set_pos(setup.pos_port)
pos = setup.start_pos()
port = free_port()
hub = setup.start_hub(port, "--max-connections", "32", "--rate-limit-per-second", "300", "--rate-limit-burst", "100")
rss_before = rss_kib(hub.pid)
samples = []
done = threading.Event()


def sample():
    while not done.is_set():
        samples.append(rss_kib(hub.pid))
        time.sleep(0.5)


threading.Thread(target=sample, daemon=True).start()
# 160 senders against 32 connections and 300 requests/s: most attempts are refused and retried.
platform = Platform(lambda: port, setup.webhook_path, workers=160)
log(f"overload: 160 concurrent senders for {seconds} s against 32 connections and 300 requests/s")
platform.run(seconds, drain=90)
done.set()
problems = reconcile("s6_overload", setup, platform)
expected = {"503 too_many_connections", "429 rate_limited"}
print(f"refusals: {platform.refusal_codes}")
unclear = {k: v for k, v in platform.refusal_codes.items() if k not in expected}
if unclear:
    problems.append(f"refusals other than 503 too_many_connections / 429 rate_limited: {unclear}")
for k in sorted(expected):
    if not platform.refusal_codes.get(k):
        problems.append(f"the overload never produced {k}: the scenario did not exercise that limit")
peak = max(samples) if samples else 0
print(f"hub RSS: before {rss_before // 1024} MiB, peak under overload {peak // 1024} MiB, "
      f"after {rss_kib(hub.pid) // 1024} MiB")
if peak > 256 * 1024:
    problems.append(f"hub RSS reached {peak // 1024} MiB under overload (bound: 256 MiB)")
if hub.stop() != 0:
    problems.append("the hub did not exit 0 after the overload")
pos.stop()
finish(problems)
