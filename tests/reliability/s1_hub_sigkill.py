"""Scenario 1: the hub is killed with SIGKILL three times during mixed load (creates, updates, exact retries),
and restarted each time; the platform retries non-200 answers. Nothing acknowledged is lost or doubled."""
import signal
import tempfile
import time

from lib import SHORT, Platform, Setup, finish, free_port, log, reconcile

seconds = 20 if SHORT else 60
setup = Setup(tempfile.mkdtemp(prefix="rel-s1-"))
setup.set_pos(setup.pos_port)
pos = setup.start_pos()
port = free_port()
HUB_ARGS = ("--forward-lease-seconds", "30", "--forward-timeout-ms", "3000")
hub = setup.start_hub(port, *HUB_ARGS)
platform = Platform(lambda: port, setup.webhook_path, workers=16)
load = platform.run_in_thread(seconds)
for k in range(3):
    time.sleep(seconds / 4)
    log(f"SIGKILL hub (pid {hub.pid})")
    hub.kill9()
    time.sleep(1)
    hub = setup.start_hub(port, *HUB_ARGS)
load.join()
problems = reconcile("s1_hub_sigkill", setup, platform)
hub.stop()
pos.stop()
finish(problems)
