"""Scenario 3: PostgreSQL killed with SIGKILL during load (crash recovery on restart): the same promises."""
import tempfile
import time

from lib import SHORT, Platform, Setup, finish, free_port, log, reconcile

seconds = 15 if SHORT else 45
setup = Setup(tempfile.mkdtemp(prefix="rel-s3-"))
setup.set_pos(setup.pos_port)
pos = setup.start_pos()
port = free_port()
hub = setup.start_hub(port)
platform = Platform(lambda: port, setup.webhook_path, workers=16)
load = platform.run_in_thread(seconds)
time.sleep(seconds / 3)
log("SIGKILL the postmaster")
setup.cluster.kill9()
time.sleep(2)
setup.cluster.ctl("start")
load.join()
problems = reconcile("s3_pg_sigkill", setup, platform)
wrong = {k: v for k, v in platform.non200.items() if k not in ("503", "None")}
if wrong:
    problems.append(f"answers other than 503 while the database was away: {wrong}")
if not hub.alive():
    problems.append("the hub died instead of riding out the crash")
hub.stop()
pos.stop()
finish(problems)
