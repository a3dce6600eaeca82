"""Scenario 4: the POS is down for 30 s, then slow (answers after 5 s, beyond the forwarder's time-out), then
healthy: ingestion is unaffected (forwarding is decoupled) and every order is delivered exactly once after."""
import tempfile
import time

from faultproxy import FaultProxy
from lib import SHORT, Platform, Setup, finish, free_port, log, psql, reconcile

down, slow = (8, 6) if SHORT else (30, 15)
setup = Setup(tempfile.mkdtemp(prefix="rel-s4-"))
proxy_port = free_port()
setup.set_pos(proxy_port)
pos = setup.start_pos()
proxy = FaultProxy(proxy_port, setup.pos_port, delay=5.0)
port = free_port()
# The POS's breaker opens during the outage; probes at most 2 s apart meet the slow phase too.
hub = setup.start_hub(port, "--forward-timeout-ms", "2000", "--forward-breaker-probe-ms", "1000",
                      "--forward-breaker-probe-max-ms", "2000")
before = Platform(lambda: port, setup.webhook_path, workers=8, prefix="B")
before.run(3, drain=10)
proxy.set_mode("down")
log("POS down")
during = Platform(lambda: port, setup.webhook_path, workers=8, prefix="D")
load = during.run_in_thread(down + slow)
time.sleep(down)
proxy.set_mode("slow")
log("POS slow")
time.sleep(slow)
load.join()
proxy.set_mode("up")
log("POS healthy")
print(f"ingestion p99: before {before.p99_ms():.1f} ms, during the outage {during.p99_ms():.1f} ms")
merged = Platform(lambda: port, setup.webhook_path)
merged.acked = {**before.acked, **during.acked}
merged.acked_updates = before.acked_updates | during.acked_updates
merged.sent = before.sent + during.sent
merged.non200 = during.non200
merged.latencies = during.latencies
merged.bad_answers = before.bad_answers + during.bad_answers
problems = reconcile("s4_pos_outage", setup, merged, delivery_timeout=180)
failed = psql(setup.cluster.url, "SELECT count(*) FILTER (WHERE http_status IS NULL AND error LIKE '%connect%') || '|' || "
                                 "count(*) FILTER (WHERE error LIKE '%timeout%' OR error LIKE '%timed out%') "
                                 "FROM hub.pos_delivery_attempts WHERE outcome = 'retry'")
print(f"attempts that met the outage: refused {failed.split('|')[0]}, timed out {failed.split('|')[1]}")
if "0" in failed.split("|"):
    problems.append(f"the forwarder did not meet both faults (refused|timed out: {failed}): the scenario did not run")
if during.non200:
    problems.append(f"ingestion answered non-200 during the POS outage: {during.non200}")
hub.stop()
pos.stop()
finish(problems)
