"""Scenario 7: SIGTERM under load: requests in flight finish, no answer is cut off, exit 0 within 10 s."""
import signal
import tempfile
import time

from lib import SHORT, Platform, Setup, finish, free_port, log, reconcile

setup = Setup(tempfile.mkdtemp(prefix="rel-s7-"))
setup.set_pos(setup.pos_port)
pos = setup.start_pos()
port = free_port()
hub = setup.start_hub(port)
platform = Platform(lambda: port, setup.webhook_path, workers=32)
load = platform.run_in_thread(8 if SHORT else 20)
time.sleep(3)
log("SIGTERM")
started = time.time()
hub.signal(signal.SIGTERM)
code = hub.proc.wait(timeout=30)
took = time.time() - started
problems = []
if code != 0:
    problems.append(f"exit code {code} after SIGTERM")
if took > 10:
    problems.append(f"took {took:.1f} s to stop")
time.sleep(1)
hub = setup.start_hub(port)  # the platform's retries land on the restarted hub
load.join()
problems += reconcile("s7_graceful", setup, platform)
print(f"stopped in {took:.2f} s with exit code {code}")
hub.stop()
pos.stop()
finish(problems)
