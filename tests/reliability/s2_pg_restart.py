"""Scenario 2: PostgreSQL restarted (pg_ctl restart -m fast) during load: 503 with Retry-After while it is down,
never a 200 for an uncommitted order, /readyz reflects it, and the hub recovers without a restart."""
import tempfile
import threading
import time
import urllib.request

from lib import SHORT, Platform, Setup, finish, free_port, log, reconcile

seconds = 15 if SHORT else 45
setup = Setup(tempfile.mkdtemp(prefix="rel-s2-"))
setup.set_pos(setup.pos_port)
pos = setup.start_pos()
port = free_port()
hub = setup.start_hub(port)
platform = Platform(lambda: port, setup.webhook_path, workers=16)
load = platform.run_in_thread(seconds)
ready_codes = set()
watching = True


def watch_ready():
    while watching:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as r:
                ready_codes.add(r.status)
        except urllib.error.HTTPError as e:
            ready_codes.add(e.code)
        except Exception:  # noqa: BLE001
            ready_codes.add("error")
        time.sleep(0.05)


threading.Thread(target=watch_ready, daemon=True).start()
for _ in range(2):
    time.sleep(seconds / 3)
    log("pg_ctl restart -m fast")
    setup.cluster.ctl("restart")
load.join()
watching = False
problems = reconcile("s2_pg_restart", setup, platform)
wrong = {k: v for k, v in platform.non200.items() if k not in ("503", "None")}
if wrong:
    problems.append(f"answers other than 503 while the database was away: {wrong}")
if not hub.alive():
    problems.append("the hub died instead of riding out the restart")
print(f"readyz answers seen: {sorted(map(str, ready_codes))}; hub non-200 answers: {platform.non200}")
hub.stop()
pos.stop()
finish(problems)
